/*
 * `edgebench llm`'s pieces below the command: which of a model's tensors is which
 * (eb_llm_io_bind, on crafted input/output lists: the common names, an attention_mask, what is
 * refused), the figures derived from the records (eb_llm_result_summarize on hand-computed
 * times: tokens/s per repetition, achieved FLOP/s and bytes/s, MFU and bandwidth use against a
 * peak, none without one) and the measurement core against ONNX Runtime on the tiny llama
 * (greedy tokens the same as a prefill of the whole sequence chooses; skips without ORT).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ort/ort_backend.h"
#include "eb/backend.h"
#include "eb_test.h"
#include "harness/pipeline/llm_core.h"
#include "harness/results/llm_result.h"
#include "model/llm.h"

static void io(struct eb_io_desc *d, const char *name, enum eb_dtype dt, int rank, int64_t d1,
               int64_t d3)
{
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "%s", name);
    d->dtype = dt;
    d->rank = rank;
    for (int i = 0; i < rank; i++)
        d->shape[i] = -1;
    if (rank == 4) {
        d->shape[1] = d1;
        d->shape[3] = d3;
    }
    if (rank == 3)
        d->shape[2] = d1;
}

/* A decoder's model info with `layers` layers (outputs in reverse order, inputs interleaved). */
static void decoder_info(struct eb_model_info *info, int layers, int mask)
{
    memset(info, 0, sizeof(*info));
    size_t ni = 0, no = 0;
    io(&info->inputs[ni++], "position_ids", EB_DTYPE_I64, 2, 0, 0);
    for (int l = 0; l < layers; l++) {
        char name[64];
        snprintf(name, sizeof(name), "past_key_values.%d.value", l);
        io(&info->inputs[ni++], name, EB_DTYPE_F32, 4, 2, 16);
        snprintf(name, sizeof(name), "past_key_values.%d.key", l);
        io(&info->inputs[ni++], name, EB_DTYPE_F32, 4, 2, 16);
    }
    io(&info->inputs[ni++], "input_ids", EB_DTYPE_I64, 2, 0, 0);
    if (mask)
        io(&info->inputs[ni++], "attention_mask", EB_DTYPE_I64, 2, 0, 0);
    for (int l = layers - 1; l >= 0; l--) {
        char name[64];
        snprintf(name, sizeof(name), "present.%d.key", l);
        io(&info->outputs[no++], name, EB_DTYPE_F32, 4, 2, 16);
        snprintf(name, sizeof(name), "present.%d.value", l);
        io(&info->outputs[no++], name, EB_DTYPE_F32, 4, 2, 16);
    }
    io(&info->outputs[no++], "logits", EB_DTYPE_F32, 3, 1024, 0);
    info->n_inputs = ni;
    info->n_outputs = no;
}

EB_TEST(io_bind_finds_every_tensor)
{
    struct eb_model_info info;
    struct eb_llm_io b;
    struct eb_diag d = {0};
    decoder_info(&info, 3, 1);
    ASSERT_OK(eb_llm_io_bind(&info, &b, &d));
    ASSERT_EQ_INT(b.layers, 3);
    ASSERT_EQ_INT(b.pos, 0);
    ASSERT_EQ_INT(b.ids, 7);
    ASSERT_EQ_INT(b.mask, 8);
    ASSERT_EQ_INT(b.kv_heads, 2);
    ASSERT_EQ_INT(b.head_dim, 16);
    ASSERT_EQ_INT(b.vocab, 1024);
    ASSERT_EQ_INT(b.logits, 6);
    /* past_key_values.0.key is input 2 (after .0.value), present.0.key output 4. */
    ASSERT_EQ_INT(b.past[0], 2);
    ASSERT_EQ_INT(b.past[1], 1);
    ASSERT_EQ_INT(b.present[0], 4);
    ASSERT_EQ_INT(b.present[5], 1);
    decoder_info(&info, 1, 0);
    ASSERT_OK(eb_llm_io_bind(&info, &b, &d));
    ASSERT_EQ_INT(b.mask, -1);
}

EB_TEST(io_bind_refuses_what_it_cannot_feed)
{
    struct eb_model_info info;
    struct eb_llm_io b;
    struct eb_diag d = {0};
    decoder_info(&info, 2, 0);
    io(&info.inputs[info.n_inputs++], "images", EB_DTYPE_F32, 4, 3, 640);
    ASSERT_EQ_INT(eb_llm_io_bind(&info, &b, &d), EB_ERR_UNSUPPORTED);
    ASSERT_TRUE(strstr(d.msg, "it has the input images") != NULL);

    decoder_info(&info, 2, 0);
    info.n_outputs--;                               /* logits, the last, moves into */
    info.outputs[0] = info.outputs[info.n_outputs]; /* present.1.key's place */
    d = (struct eb_diag){0};
    ASSERT_EQ_INT(eb_llm_io_bind(&info, &b, &d), EB_ERR_UNSUPPORTED);
    ASSERT_TRUE(strstr(d.msg, "no output present.1.key") != NULL);

    decoder_info(&info, 2, 0);
    info.inputs[1].dtype = EB_DTYPE_F16; /* one cache input in another dtype */
    d = (struct eb_diag){0};
    ASSERT_EQ_INT(eb_llm_io_bind(&info, &b, &d), EB_ERR_UNSUPPORTED);
    ASSERT_TRUE(strstr(d.msg, "differ in dtype or shape") != NULL);

    decoder_info(&info, 2, 0);
    info.inputs[0].dtype = EB_DTYPE_I32; /* position_ids in int32 */
    d = (struct eb_diag){0};
    ASSERT_EQ_INT(eb_llm_io_bind(&info, &b, &d), EB_ERR_UNSUPPORTED);
    ASSERT_TRUE(strstr(d.msg, "position_ids") != NULL);
}

EB_TEST(summarize_rates_and_utilisation)
{
    struct eb_llm_result r;
    eb_llm_result_init(&r);
    r.w.prompt = 100;
    r.w.gen = 4;
    r.w.reps = 2;
    ASSERT_OK(eb_llm_result_alloc(&r, 2, 4));
    r.reps_done = 2;
    /* Prefills of 10 and 20 ms: 10000 and 5000 tokens/s. */
    r.prefill_ns[0] = 10000000;
    r.prefill_ns[1] = 20000000;
    r.ttft_ns[0] = 11000000;
    r.ttft_ns[1] = 21000000;
    /* Decode: 4 steps of 1 ms (1000 tokens/s), then 4 of 2 ms (500 tokens/s). */
    for (int j = 0; j < 4; j++) {
        r.decode_ns[j] = 1000000;
        r.decode_ns[4 + j] = 2000000;
    }
    r.prefill_flops = 3e9;  /* over a mean prefill of 15 ms: 0.2 TFLOP/s */
    r.decode_bytes = 1.5e6; /* over a mean step of 1.5 ms: 1 GB/s */
    r.peak_tflops = 2.0;
    r.peak_gbs = 4.0;
    ASSERT_OK(eb_llm_result_summarize(&r));
    ASSERT_NEAR(r.prefill_tps, 7500.0, 1e-6);
    ASSERT_NEAR(r.prefill_tps_std, sqrt(2.0) * 2500.0, 1e-6);
    ASSERT_NEAR(r.decode_tps, 750.0, 1e-9);
    ASSERT_EQ_INT(r.decode.count, 8);
    ASSERT_NEAR(r.decode.p50, 1.5, 1e-12);
    ASSERT_NEAR(r.ttft.mean, 16.0, 1e-12);
    ASSERT_NEAR(r.prefill_tflops_s, 0.2, 1e-12);
    ASSERT_NEAR(r.mfu, 0.1, 1e-12);
    ASSERT_NEAR(r.decode_gbs, 1.0, 1e-12);
    ASSERT_NEAR(r.bw_util, 0.25, 1e-12);
    /* The records keep their order (the statistics sort a copy). */
    ASSERT_EQ_INT(r.decode_ns[4], 2000000);
    ASSERT_EQ_INT(r.prefill_ns[0], 10000000);
    /* No peak: no MFU, no bandwidth use. */
    r.peak_tflops = r.peak_gbs = 0.0;
    ASSERT_OK(eb_llm_result_summarize(&r));
    ASSERT_TRUE(isnan(r.mfu) && isnan(r.bw_util));
    ASSERT_NEAR(r.decode_gbs, 1.0, 1e-12);
    eb_llm_result_fini(&r);
}

/* The core's greedy tokens on the tiny llama are those a prefill of the whole sequence gives:
 * the argmax of each row of its logits, token i + 1 chosen from row prompt + i - 1. */
EB_TEST(core_tokens_match_a_full_prefill)
{
    enum { P = 6, G = 5 };
    struct eb_model_llm_config c;
    struct eb_diag d = {0};
    ASSERT_OK(eb_model_llm_config(EB_MODEL_LLM_LLAMA, "tiny", 64, &c, &d));
    struct eb_model_llm_options o = {.cfg = c, .seed = 3};
    char path[512];
    snprintf(path, sizeof(path), "%s/tiny.onnx", eb_test_tmpdir());
    ASSERT_OK(eb_model_llm_synth_file(&o, path, NULL, &d));
    struct eb_backend_config cfg = {.device = EB_DEVICE_CPU, .threads = 1, .trt_cache = "off"};
    struct eb_backend_probe pr;
    if (eb_backend_ort_ops.probe(&cfg, &pr, &d) != EB_OK)
        EB_SKIP("ONNX Runtime cannot be loaded (%s)", d.msg);
    struct eb_backend *be = NULL;
    struct eb_model_info info;
    struct eb_model_spec spec = {.path = path};
    ASSERT_OK(eb_backend_create(&eb_backend_ort_ops, &cfg, &be, &d));
    ASSERT_OK(eb_backend_load(be, &spec, &info, &d));
    struct eb_llm_io b;
    ASSERT_OK(eb_llm_io_bind(&info, &b, &d));

    const int64_t prompt[P] = {11, 500, 7, 1000, 42, 9};
    atomic_int stop = 0;
    struct eb_llm_result r;
    eb_llm_result_init(&r);
    r.w.gen = G;
    ASSERT_OK(eb_llm_result_alloc(&r, 2, G));
    struct eb_llm_core core = {.be = be,
                               .io = &b,
                               .prompt_ids = prompt,
                               .prompt = P,
                               .gen = G,
                               .reps = 2,
                               .warmup = 1,
                               .stop = &stop};
    ASSERT_OK(eb_llm_core_run(&core, &r, &d));
    ASSERT_EQ_INT(r.reps_done, 2);
    ASSERT_EQ_INT(r.tokens_differ, 0);
    for (int i = 0; i < 2; i++)
        ASSERT_TRUE(r.ttft_ns[i] >= r.prefill_ns[i] && r.prefill_ns[i] > 0);

    /* One prefill of the prompt and the generated tokens. */
    int64_t seq[P + G], pos[P + G];
    for (int i = 0; i < P + G; i++) {
        seq[i] = i < P ? prompt[i] : r.tokens[i - P];
        pos[i] = i;
    }
    struct eb_tensor in[EB_BACKEND_MAX_IO], out[EB_BACKEND_MAX_IO];
    const float dummy = 0.0f;
    in[b.ids] =
        (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, P + G - 1}, .data = seq};
    in[b.pos] =
        (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, P + G - 1}, .data = pos};
    for (int t = 0; t < 2 * b.layers; t++)
        in[b.past[t]] = (struct eb_tensor){.dtype = EB_DTYPE_F32,
                                           .rank = 4,
                                           .shape = {1, b.kv_heads, 0, b.head_dim},
                                           .data = (void *)&dummy};
    ASSERT_OK(eb_backend_infer(be, in, info.n_inputs, out, info.n_outputs, NULL, &d));
    const float *logits = out[b.logits].data;
    for (int i = 0; i < G; i++) {
        const float *row = logits + (size_t)(P - 1 + i) * (size_t)c.vocab;
        int best = 0;
        for (int v = 1; v < c.vocab; v++)
            if (row[v] > row[best])
                best = v;
        ASSERT_EQ_INT(r.tokens[i], best);
    }
    eb_llm_result_fini(&r);
    eb_backend_destroy(be);
}
