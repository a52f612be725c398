/*
 * `edgebench llm`'s pieces below the command: which of a model's tensors is which
 * (eb_llm_io_bind, on crafted input/output lists: the common names, an attention_mask, what is
 * refused), the figures derived from the records (eb_llm_result_summarize on hand-computed
 * times: tokens/s per repetition, achieved FLOP/s and bytes/s, MFU and bandwidth use against a
 * peak, none without one), the measurement core against ONNX Runtime on the tiny llama
 * (greedy tokens the same as a prefill of the whole sequence chooses; skips without ORT), and
 * the core's --profile on a fake backend that profiles its session as a whole (which runs each
 * phase's table is asked for, after one reset past the warm-up).
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

/* The greedy choice: the first of the largest logits, NaN skipped, -inf and edge lengths; every
 * answer against one plain scan over random rows of every length around the blocks' sizes. */
EB_TEST(argmax_is_the_first_of_the_largest)
{
    const float nan = NAN, inf = INFINITY;
    const float ties[6] = {1.0f, 3.0f, 2.0f, 3.0f, nan, 3.0f};
    ASSERT_EQ_INT((int)eb_llm_argmax_f32(ties, 6), 1);
    const float lead_nan[3] = {nan, -1.0f, 5.0f};
    ASSERT_EQ_INT((int)eb_llm_argmax_f32(lead_nan, 3), 2);
    const float all_nan[2] = {nan, nan};
    ASSERT_EQ_INT((int)eb_llm_argmax_f32(all_nan, 2), 0);
    const float neg_inf[3] = {nan, -inf, -inf};
    ASSERT_EQ_INT((int)eb_llm_argmax_f32(neg_inf, 3), 1);
    const float pos_inf[3] = {-inf, inf, inf};
    ASSERT_EQ_INT((int)eb_llm_argmax_f32(pos_inf, 3), 1);
    ASSERT_EQ_INT((int)eb_llm_argmax_f32(ties, 0), -1);
    enum { N = 151936 };
    float *x = malloc(N * sizeof(float));
    ASSERT_TRUE(x != NULL);
    uint32_t r = 7;
    const int64_t lens[9] = {1, 31, 32, 33, 4095, 4096, 4097, 8200, N};
    for (int li = 0; li < 9; li++)
        for (int rep = 0; rep < 20; rep++) {
            const int64_t n = lens[li];
            for (int64_t i = 0; i < n; i++) {
                r = r * 1664525u + 1013904223u;
                const uint32_t k = r >> 8;
                x[i] = k % 97 == 0 ? nan : k % 89 == 0 ? -inf : (float)(k % 1000);
            }
            int64_t want = -1;
            for (int64_t i = 0; i < n; i++)
                if (x[i] == x[i] && (want < 0 || x[i] > x[want]))
                    want = i;
            ASSERT_EQ_INT((int)eb_llm_argmax_f32(x, n), (int)(want < 0 ? 0 : want));
        }
    free(x);
}

/* The float16 logits' choice (an ONNX Runtime model with fp16 logits): NaN (any payload, either
 * sign) never the largest, where its bits' integer key would put it above +inf; -0 ties +0. */
EB_TEST(argmax_f16_skips_nan)
{
    const uint16_t one = 0x3c00, two = 0x4000, neg = 0xc000, pinf = 0x7c00, ninf = 0xfc00;
    const uint16_t nan = 0x7e00, nan_payload = 0x7c01, neg_nan = 0xfe00, pz = 0x0000, nz = 0x8000;
    const uint16_t a[5] = {one, nan, two, nan_payload, two};
    ASSERT_EQ_INT((int)eb_llm_argmax_f16(a, 5), 2);
    const uint16_t b[4] = {neg_nan, pinf, nan, pinf};
    ASSERT_EQ_INT((int)eb_llm_argmax_f16(b, 4), 1);
    const uint16_t c[3] = {nan, ninf, neg};
    ASSERT_EQ_INT((int)eb_llm_argmax_f16(c, 3), 2);
    const uint16_t d[3] = {nz, pz, ninf};
    ASSERT_EQ_INT((int)eb_llm_argmax_f16(d, 3), 0);
    const uint16_t e[2] = {nan, neg_nan};
    ASSERT_EQ_INT((int)eb_llm_argmax_f16(e, 2), 0);
    ASSERT_EQ_INT((int)eb_llm_argmax_f16(a, 0), -1);
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

/*
 * A backend that profiles the session as a whole (profile_runs), faked: a one-layer decoder
 * (decoder_info's tensors) whose logits are zeros (token 0 every step) and whose cache is as long
 * as asked. It counts its infers and profile_resets; profile_runs fails unless there was one
 * reset, after cfg.threads infers (the warm-up's), and answers with one node whose time encodes
 * which runs were asked: run k (counted from the reset) adds k + 1 ms. The runs from cfg.max_seq
 * on are missing, as from a runtime whose file is capped; run_total_ms is 1000 ms a run held.
 */
enum { FAKE_SEQ = 64, FAKE_VOCAB = 1024, FAKE_KV = 2 * FAKE_SEQ * 16 };
struct fake_priv {
    float kv[2][FAKE_KV];
    float logits[FAKE_SEQ * FAKE_VOCAB];
    uint64_t infers, infers_at_reset, resets, warmup_infers, hold;
    struct eb_backend_prof_node node;
};

static enum eb_status fake_probe(const struct eb_backend_config *cfg, struct eb_backend_probe *p,
                                 struct eb_diag *diag)
{
    (void)cfg;
    (void)diag;
    memset(p, 0, sizeof(*p));
    p->available = 1;
    return EB_OK;
}

static enum eb_status fake_open(void *priv, const struct eb_backend_config *cfg,
                                struct eb_diag *diag)
{
    struct fake_priv *p = priv;
    (void)diag;
    p->warmup_infers = (uint64_t)cfg->threads;
    p->hold = (uint64_t)cfg->max_seq;
    return EB_OK;
}

static void fake_close(void *priv)
{
    (void)priv;
}

static enum eb_status fake_load(void *priv, const struct eb_model_spec *spec,
                                struct eb_model_info *info_out, struct eb_diag *diag)
{
    (void)priv;
    (void)spec;
    (void)diag;
    decoder_info(info_out, 1, 0);
    return EB_OK;
}

/* Inputs: position_ids, past.0.value, past.0.key, input_ids; outputs: present.0.key,
 * present.0.value, logits (decoder_info's order). */
static enum eb_status fake_infer(void *priv, const struct eb_tensor *in, size_t n_in,
                                 struct eb_tensor *out, size_t n_out,
                                 struct eb_infer_timing *timing_out, struct eb_diag *diag)
{
    struct fake_priv *p = priv;
    (void)timing_out;
    const int64_t n = in[3].shape[1], len = in[1].shape[2] + n;
    if (n_in != 4 || n_out != 3 || len > FAKE_SEQ)
        return eb_diag_fail(diag, EB_ERR_BACKEND, "fake: unexpected call");
    p->infers++;
    for (int t = 0; t < 2; t++)
        out[t] = (struct eb_tensor){
            .dtype = EB_DTYPE_F32, .rank = 4, .shape = {1, 2, len, 16}, .data = p->kv[t]};
    out[2] = (struct eb_tensor){
        .dtype = EB_DTYPE_F32, .rank = 3, .shape = {1, n, FAKE_VOCAB}, .data = p->logits};
    return EB_OK;
}

static enum eb_status fake_profile(void *priv, struct eb_backend_profile *out, struct eb_diag *d)
{
    (void)priv;
    memset(out, 0, sizeof(*out));
    return eb_diag_fail(d, EB_ERR_BACKEND, "fake: profile read as it goes");
}

static void fake_reset(void *priv)
{
    struct fake_priv *p = priv;
    p->infers_at_reset = p->infers;
    p->resets++;
}

static enum eb_status fake_profile_runs(void *priv, const struct eb_run_range *ranges, size_t n,
                                        struct eb_backend_profile *out, struct eb_diag *diag)
{
    struct fake_priv *p = priv;
    if (p->resets != 1 || p->infers_at_reset != p->warmup_infers)
        return eb_diag_fail(diag, EB_ERR_BACKEND, "fake: %llu resets, the last after %llu infers",
                            (unsigned long long)p->resets, (unsigned long long)p->infers_at_reset);
    uint64_t runs = 0, code = 0;
    for (size_t i = 0; i < n; i++)
        for (uint64_t r = ranges[i].first; r < ranges[i].first + ranges[i].count; r++)
            if (r < p->hold) {
                runs++;
                code += r + 1;
            }
    p->node = (struct eb_backend_prof_node){
        .name = "/n", .op = "MatMul", .fused = "", .total_ms = (double)code};
    *out = (struct eb_backend_profile){
        .n_nodes = 1, .nodes = &p->node, .runs = runs, .run_total_ms = 1000.0 * (double)runs};
    return EB_OK;
}

static const struct eb_backend_ops fake_whole_session_ops = {
    .abi = EB_BACKEND_ABI,
    .name = "fake",
    .description = "a backend that profiles its session as a whole",
    .caps = EB_BACKEND_CAP_OP_PROFILE,
    .priv_size = sizeof(struct fake_priv),
    .probe = fake_probe,
    .open = fake_open,
    .close = fake_close,
    .load = fake_load,
    .infer = fake_infer,
    .profile = fake_profile,
    .profile_reset = fake_reset,
    .profile_runs = fake_profile_runs,
};

/* The core with --profile on the fake: `reps` repetitions of prompt 5 and gen 4 after `warmup`,
 * the runs from `hold` on missing from the fake's profile. */
static void run_fake(struct eb_llm_result *r, int64_t reps, int64_t warmup, int64_t hold)
{
    enum { GEN = 4 };
    struct eb_diag d = {0};
    struct eb_backend_config cfg = {
        .profile = 1, .threads = (int)(warmup * (1 + GEN)), .max_seq = hold};
    struct eb_backend *be = NULL;
    struct eb_model_info info;
    struct eb_model_spec spec = {.path = "fake.onnx"};
    ASSERT_OK(eb_backend_create(&fake_whole_session_ops, &cfg, &be, &d));
    ASSERT_OK(eb_backend_load(be, &spec, &info, &d));
    struct eb_llm_io b;
    ASSERT_OK(eb_llm_io_bind(&info, &b, &d));
    const int64_t prompt[5] = {1, 2, 3, 4, 5};
    atomic_int stop = 0;
    eb_llm_result_init(r);
    r->w.gen = GEN;
    ASSERT_OK(eb_llm_result_alloc(r, reps, GEN));
    struct eb_llm_core core = {.be = be,
                               .io = &b,
                               .prompt_ids = prompt,
                               .prompt = 5,
                               .gen = GEN,
                               .reps = reps,
                               .warmup = warmup,
                               .profile = 1,
                               .stop = &stop};
    ASSERT_OK(eb_llm_core_run(&core, r, &d));
    ASSERT_EQ_INT(r->reps_done, reps);
    /* The names stay the backend's while it is loaded: checked here, before it goes. */
    ASSERT_EQ_INT(r->profiled, 1);
    for (int p = 0; p < EB_LLM_PHASES; p++) {
        ASSERT_EQ_INT(r->prof[p].n, 1);
        ASSERT_STREQ(r->prof[p].nodes[0].name, "/n");
        ASSERT_STREQ(r->prof[p].nodes[0].op, "MatMul");
    }
    eb_backend_destroy(be);
}

/* A backend that profiles its session as a whole is reset after the warm-up and read once at
 * the end: the prefill's runs are each repetition's first (0, 5, 10 with gen 4), the decode's
 * the 4 after each; the phase's forward time is the runtime's time of its runs. */
EB_TEST(core_profile_by_runs_splits_the_phases)
{
    struct eb_llm_result r;
    run_fake(&r, 3, 2, 1000);
    const struct eb_llm_phase_prof *pf = &r.prof[EB_LLM_PREFILL], *dc = &r.prof[EB_LLM_DECODE];
    ASSERT_EQ_INT(pf->runs, 3);
    ASSERT_NEAR(pf->nodes[0].ms, 1 + 6 + 11, 1e-9);
    ASSERT_NEAR(pf->run_ms, 3000, 1e-9);
    ASSERT_NEAR(pf->forward_ms, 3000, 1e-9);
    ASSERT_EQ_INT(dc->runs, 12);
    ASSERT_NEAR(dc->nodes[0].ms, (2 + 3 + 4 + 5) + (7 + 8 + 9 + 10) + (12 + 13 + 14 + 15), 1e-9);
    ASSERT_NEAR(dc->forward_ms, 12000, 1e-9);
    ASSERT_EQ_INT(r.n_warnings, 0);
    eb_llm_result_fini(&r);

    /* No warm-up: the reset comes before the first run all the same. */
    run_fake(&r, 3, 0, 1000);
    ASSERT_EQ_INT(r.prof[EB_LLM_PREFILL].runs, 3);
    ASSERT_NEAR(r.prof[EB_LLM_PREFILL].nodes[0].ms, 18, 1e-9);
    eb_llm_result_fini(&r);

    /* The runtime kept the first 7 runs only (its event limit): each table covers what it
     * holds, and the result says so. */
    run_fake(&r, 3, 1, 7);
    ASSERT_EQ_INT(r.prof[EB_LLM_PREFILL].runs, 2);
    ASSERT_EQ_INT(r.prof[EB_LLM_DECODE].runs, 5);
    ASSERT_NEAR(r.prof[EB_LLM_DECODE].forward_ms, 5000, 1e-9);
    ASSERT_EQ_INT(r.n_warnings, 2);
    ASSERT_CONTAINS(r.warnings[0], "holds 2 of the 3 prefill forwards");
    ASSERT_CONTAINS(r.warnings[1], "holds 5 of the 12 decode forwards");
    eb_llm_result_fini(&r);
}
