/*
 * The native engine on decoder models (`model synth --arch llama|qwen2 --size tiny`): shapes
 * that change from run to run (sequence_length, past_sequence_length), planned on their bounds
 * at load. Against ONNX Runtime: a prefill of 12 tokens, then 16 greedy decode steps, the native
 * KV cache chained without copies (each run's present.* passed back as past_key_values.*);
 * logits within 1e-4 of each row's largest |logit| and the same greedy tokens. The ORT cases
 * skip when the library cannot be loaded. Without ORT: decode steps on the chained cache give
 * the logits of one prefill of every token; the plan does not change and nothing is allocated
 * between runs; inputs past their bounds are refused naming input and bound.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/native/native_backend.h"
#include "backends/ort/ort_backend.h"
#include "eb/backend.h"
#include "eb/engine.h"
#include "eb_test.h"
#include "engine/ir/graph.h"
#include "model/llm.h"
#include "model/model.h"
#include "onnx_build.h"

#define CTX        64 /* the files' context: the engine's bound on sequence + past */
#define PROMPT     12
#define STEPS      16
#define MAX_LAYERS 2
#define N_IO       (2 + 2 * MAX_LAYERS)
#define TOL        1e-4 /* max |native - ort| over a row / max |ort| over the row */

static struct eb_model_llm_config tiny_config(enum eb_model_llm_arch arch)
{
    struct eb_model_llm_config c;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_model_llm_config(arch, "tiny", CTX, &c, &diag));
    ASSERT_TRUE(c.layers <= MAX_LAYERS);
    return c;
}

static void synth(enum eb_model_llm_arch arch, const char *name, char *path, size_t cap)
{
    struct eb_model_llm_options o = {.cfg = tiny_config(arch), .seed = 3};
    struct eb_diag diag = {0};
    int wrote_external = -1;
    snprintf(path, cap, "%s/%s", eb_test_tmpdir(), name);
    ASSERT_OK(eb_model_llm_synth_file(&o, path, &wrote_external, &diag));
}

/* A CPU backend of `ops` with `threads` threads and sequence bound `max_seq` (0 = the model's);
 * `skip`: skip the test when ONNX Runtime cannot be loaded. */
static struct eb_backend *open_backend(const struct eb_backend_ops *ops, int skip, int threads,
                                       int64_t max_seq)
{
    struct eb_backend_config cfg = {.device = EB_DEVICE_CPU,
                                    .threads = threads,
                                    .mem_limit_bytes = 8000000000ull,
                                    .max_seq = max_seq,
                                    .trt_cache = "off"};
    struct eb_backend_probe pr;
    struct eb_backend *be = NULL;
    struct eb_diag d = {0};
    if (skip && ops->probe(&cfg, &pr, &d) != EB_OK)
        EB_SKIP("ONNX Runtime cannot be loaded (%s)", d.msg);
    ASSERT_OK(eb_backend_create(ops, &cfg, &be, &d));
    return be;
}

/* The inputs of one step: `n` ids at positions past..past+n-1; kv[t] the cache tensors (their
 * shapes say past). */
static void make_inputs(const struct eb_model_llm_config *c, const int64_t *ids, int64_t *pos,
                        int64_t n, int64_t past, const struct eb_tensor *kv, struct eb_tensor *in)
{
    for (int64_t i = 0; i < n; i++)
        pos[i] = past + i;
    in[0] =
        (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, n}, .data = (void *)ids};
    in[1] = (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, n}, .data = pos};
    for (int t = 0; t < 2 * c->layers; t++)
        in[2 + t] = kv[t];
}

static int argmax(const float *row, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (row[i] > row[best])
            best = i;
    return best;
}

static double row_error(const float *a, const float *b, int n)
{
    double err = 0.0, scale = 0.0;
    for (int i = 0; i < n; i++) {
        err = fmax(err, fabs((double)a[i] - b[i]));
        scale = fmax(scale, fabs((double)b[i]));
    }
    ASSERT_TRUE(scale > 0.0 && isfinite(scale));
    return err / scale;
}

static void check_against_ort(enum eb_model_llm_arch arch)
{
    const struct eb_model_llm_config c = tiny_config(arch);
    const size_t kv_dim = (size_t)(c.kv_heads * c.head_dim);
    struct eb_backend *ort = open_backend(&eb_backend_ort_ops, 1, 1, 0);
    struct eb_backend *nat = open_backend(&eb_backend_native_ops, 0, 1, 0);
    char path[512];
    synth(arch, "llm.onnx", path, sizeof(path));
    struct eb_model_spec spec = {.path = path};
    struct eb_model_info info;
    struct eb_diag d = {0};
    ASSERT_OK(eb_backend_load(ort, &spec, &info, &d));
    if (eb_backend_load(nat, &spec, &info, &d) != EB_OK)
        EB_FAIL("native load: %s", d.msg);
    /* The native backend says which dims are dynamic, as ONNX Runtime does. */
    ASSERT_EQ_INT(info.n_inputs, 2 + 2 * c.layers);
    ASSERT_EQ_INT(info.inputs[0].shape[1], -1);
    ASSERT_EQ_INT(info.inputs[2].shape[2], -1);
    ASSERT_EQ_INT(info.inputs[2].shape[1], c.kv_heads);
    ASSERT_EQ_INT(info.outputs[0].shape[1], -1);
    ASSERT_EQ_INT(info.outputs[0].shape[2], c.vocab);

    /* ORT's cache: copied out of every run (its outputs are its own). */
    float *ort_kv = calloc((size_t)(2 * c.layers) * CTX * kv_dim, sizeof(float));
    float *ort_kv_next = calloc((size_t)(2 * c.layers) * CTX * kv_dim, sizeof(float));
    ASSERT_TRUE(ort_kv != NULL && ort_kv_next != NULL);
    const float dummy = 0.0f;
    struct eb_tensor nat_kv[2 * MAX_LAYERS], ort_kv_t[2 * MAX_LAYERS];
    for (int t = 0; t < 2 * c.layers; t++)
        nat_kv[t] = (struct eb_tensor){.dtype = EB_DTYPE_F32,
                                       .rank = 4,
                                       .shape = {1, c.kv_heads, 0, c.head_dim},
                                       .data = (void *)&dummy};

    int64_t ids[PROMPT], pos[PROMPT];
    for (int i = 0; i < PROMPT; i++)
        ids[i] = (i * 389 + 17) % c.vocab;
    int64_t n = PROMPT, past = 0;
    double worst = 0.0;
    int tokens[STEPS];
    for (int step = 0; step <= STEPS; step++) {
        struct eb_tensor in[N_IO], out_n[N_IO], out_o[N_IO];
        for (int t = 0; t < 2 * c.layers; t++)
            ort_kv_t[t] = (struct eb_tensor){
                .dtype = EB_DTYPE_F32,
                .rank = 4,
                .shape = {1, c.kv_heads, past, c.head_dim},
                .data =
                    past ? (void *)(ort_kv + (size_t)t * (size_t)past * kv_dim) : (void *)&dummy};
        make_inputs(&c, ids, pos, n, past, ort_kv_t, in);
        ASSERT_OK(eb_backend_infer(ort, in, 2 + 2 * (size_t)c.layers, out_o,
                                   1 + 2 * (size_t)c.layers, NULL, &d));
        /* The native engine: last run's present.* as this run's past (no copy). */
        make_inputs(&c, ids, pos, n, past, nat_kv, in);
        ASSERT_OK(eb_backend_infer(nat, in, 2 + 2 * (size_t)c.layers, out_n,
                                   1 + 2 * (size_t)c.layers, NULL, &d));
        ASSERT_EQ_INT(out_n[0].rank, 3);
        ASSERT_EQ_INT(out_n[0].shape[1], n);
        ASSERT_EQ_INT(out_n[0].shape[2], c.vocab);
        for (int64_t r = 0; r < n; r++) {
            const size_t off = (size_t)r * (size_t)c.vocab;
            const double e = row_error((const float *)out_n[0].data + off,
                                       (const float *)out_o[0].data + off, c.vocab);
            worst = fmax(worst, e);
            ASSERT_TRUE(e <= TOL);
        }
        const size_t last = (size_t)(n - 1) * (size_t)c.vocab;
        const int tok_n = argmax((const float *)out_n[0].data + last, c.vocab);
        const int tok_o = argmax((const float *)out_o[0].data + last, c.vocab);
        ASSERT_EQ_INT(tok_n, tok_o);
        for (int t = 0; t < 2 * c.layers; t++) {
            ASSERT_EQ_INT(out_n[1 + t].shape[2], past + n);
            ASSERT_EQ_INT(out_o[1 + t].shape[2], past + n);
            const size_t cnt = (size_t)(past + n) * kv_dim;
            memcpy(ort_kv_next + (size_t)t * cnt, out_o[1 + t].data, cnt * sizeof(float));
            nat_kv[t] = out_n[1 + t];
        }
        memcpy(ort_kv, ort_kv_next,
               (size_t)(2 * c.layers) * (size_t)(past + n) * kv_dim * sizeof(float));
        if (step == STEPS)
            break;
        tokens[step] = tok_n;
        past += n;
        n = 1;
        ids[0] = tok_n;
    }
    printf("%s tiny: native vs ort logits over a prefill of %d and %d decode steps: max error "
           "%.3g of the row's largest |logit|; greedy tokens",
           eb_model_llm_arch_name(arch), PROMPT, STEPS, worst);
    for (int i = 0; i < STEPS; i++)
        printf(" %d", tokens[i]);
    printf("\n");
    eb_backend_destroy(nat);
    eb_backend_destroy(ort);
    free(ort_kv);
    free(ort_kv_next);
}

EB_TEST(native_llama_matches_ort)
{
    check_against_ort(EB_MODEL_LLM_LLAMA);
}

EB_TEST(native_qwen2_matches_ort)
{
    check_against_ort(EB_MODEL_LLM_QWEN2);
}

/*
 * Without ONNX Runtime: a prefill of all PROMPT tokens against a prefill of half of them and
 * decode steps for the rest, each step fed the last step's present.* as they came out (the
 * engine's own memory, no copy): every step's logits are the full prefill's row, the final
 * cache its cache. Two threads: the parallel kernels at the changing shapes.
 */
static void check_chain(enum eb_model_llm_arch arch)
{
    const struct eb_model_llm_config c = tiny_config(arch);
    const size_t kv_dim = (size_t)(c.kv_heads * c.head_dim);
    struct eb_backend *be = open_backend(&eb_backend_native_ops, 0, 2, 0);
    struct eb_diag d = {0};
    char path[512];
    synth(arch, "chain.onnx", path, sizeof(path));
    struct eb_model_spec spec = {.path = path};
    struct eb_model_info info;
    ASSERT_OK(eb_backend_load(be, &spec, &info, &d));
    int64_t ids[PROMPT], pos[PROMPT];
    for (int i = 0; i < PROMPT; i++)
        ids[i] = (i * 577 + 5) % c.vocab;
    const float dummy = 0.0f;
    struct eb_tensor kv[2 * MAX_LAYERS], in[N_IO], out[N_IO];
    for (int t = 0; t < 2 * c.layers; t++)
        kv[t] = (struct eb_tensor){.dtype = EB_DTYPE_F32,
                                   .rank = 4,
                                   .shape = {1, c.kv_heads, 0, c.head_dim},
                                   .data = (void *)&dummy};
    /* The full prefill, kept. */
    float *full = malloc((size_t)PROMPT * (size_t)c.vocab * sizeof(float));
    float *full_kv = malloc((size_t)(2 * c.layers) * PROMPT * kv_dim * sizeof(float));
    ASSERT_TRUE(full != NULL && full_kv != NULL);
    make_inputs(&c, ids, pos, PROMPT, 0, kv, in);
    ASSERT_OK(eb_backend_infer(be, in, 2 + 2 * (size_t)c.layers, out, 1 + 2 * (size_t)c.layers,
                               NULL, &d));
    memcpy(full, out[0].data, (size_t)PROMPT * (size_t)c.vocab * sizeof(float));
    for (int t = 0; t < 2 * c.layers; t++)
        memcpy(full_kv + (size_t)t * PROMPT * kv_dim, out[1 + t].data,
               PROMPT * kv_dim * sizeof(float));
    /* Half, then one token per step on the chained cache. */
    const int64_t half = PROMPT / 2;
    double worst = 0.0;
    make_inputs(&c, ids, pos, half, 0, kv, in);
    ASSERT_OK(eb_backend_infer(be, in, 2 + 2 * (size_t)c.layers, out, 1 + 2 * (size_t)c.layers,
                               NULL, &d));
    for (int64_t p = half; p < PROMPT; p++) {
        for (int t = 0; t < 2 * c.layers; t++)
            kv[t] = out[1 + t];
        make_inputs(&c, ids + p, pos, 1, p, kv, in);
        ASSERT_OK(eb_backend_infer(be, in, 2 + 2 * (size_t)c.layers, out, 1 + 2 * (size_t)c.layers,
                                   NULL, &d));
        const double e = row_error(out[0].data, full + (size_t)p * (size_t)c.vocab, c.vocab);
        worst = fmax(worst, e);
        ASSERT_TRUE(e <= TOL);
    }
    double kv_err = 0.0;
    for (int t = 0; t < 2 * c.layers; t++) {
        ASSERT_EQ_INT(out[1 + t].shape[2], PROMPT);
        for (size_t i = 0; i < PROMPT * kv_dim; i++)
            kv_err = fmax(kv_err, fabs((double)((const float *)out[1 + t].data)[i] -
                                       full_kv[(size_t)t * PROMPT * kv_dim + i]));
    }
    printf("%s tiny, native: decode on the chained cache vs prefill: max error %.3g of the "
           "row's largest |logit|, cache %.3g\n",
           eb_model_llm_arch_name(arch), worst, kv_err);
    ASSERT_TRUE(kv_err < 1e-5);
    eb_backend_destroy(be);
    free(full);
    free(full_kv);
}

EB_TEST(native_llama_chained_decode_matches_prefill)
{
    check_chain(EB_MODEL_LLM_LLAMA);
}

EB_TEST(native_qwen2_chained_decode_matches_prefill)
{
    check_chain(EB_MODEL_LLM_QWEN2);
}

/* ---- the engine alone -------------------------------------------------------------------- */

static struct eb_engine *load_engine(const char *path, int64_t max_seq)
{
    size_t len = 0;
    char *bytes = eb_test_read_file(path, &len);
    ASSERT_TRUE(bytes != NULL);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.threads = 1;
    opt.max_seq = max_seq;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    if (eb_engine_load((const uint8_t *)bytes, len, path, &opt, &e, &d) != EB_OK)
        EB_FAIL("eb_engine_load: %s", d.msg);
    free(bytes);
    return e;
}

/* One run of `n` tokens on a zero cache of `past` positions; the status and message. */
static enum eb_status run_once(struct eb_engine *e, const struct eb_model_llm_config *c, int64_t n,
                               int64_t past, struct eb_tensor *out, struct eb_diag *d)
{
    static int64_t ids[2 * CTX], pos[2 * CTX];
    static float zeros[2 * CTX * 64];
    struct eb_tensor kv[2 * MAX_LAYERS], in[N_IO];
    for (int t = 0; t < 2 * c->layers; t++)
        kv[t] = (struct eb_tensor){.dtype = EB_DTYPE_F32,
                                   .rank = 4,
                                   .shape = {1, c->kv_heads, past, c->head_dim},
                                   .data = zeros};
    for (int64_t i = 0; i < n; i++)
        ids[i] = i % c->vocab;
    make_inputs(c, ids, pos, n, past, kv, in);
    return eb_engine_run(e, in, 2 + 2 * (size_t)c->layers, out, 1 + 2 * (size_t)c->layers, d);
}

EB_TEST(native_plan_fixed_and_bounds_refused)
{
    const struct eb_model_llm_config c = tiny_config(EB_MODEL_LLM_QWEN2);
    char path[512];
    synth(EB_MODEL_LLM_QWEN2, "bounds.onnx", path, sizeof(path));
    struct eb_engine *e = load_engine(path, 0); /* the file's ctx: 64 */
    struct eb_engine_io io;
    eb_engine_io_info(e, &io);
    ASSERT_EQ_INT(io.inputs[0].shape[1], CTX);
    ASSERT_EQ_INT(io.inputs[0].dynamic_dims, 2u);
    ASSERT_EQ_INT(io.inputs[2].shape[2], CTX - 1);
    ASSERT_EQ_INT(io.inputs[2].dynamic_dims, 4u);
    ASSERT_EQ_INT(io.outputs[0].dynamic_dims, 2u);
    ASSERT_EQ_INT(io.outputs[1].dynamic_dims, 4u);
    struct eb_engine_mem before, after;
    eb_engine_mem_info(e, &before);
    struct eb_tensor out[N_IO];
    struct eb_diag d = {0};
    /* Warm-up, then runs of other shapes: no allocation, the same plan. */
    ASSERT_OK(run_once(e, &c, 5, 0, out, &d));
    const uint64_t allocs = eb_engine__n_allocs(e);
    const int64_t shapes[][2] = {{1, 0}, {CTX, 0}, {1, CTX - 1}, {7, 20}, {3, CTX - 3}};
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        ASSERT_OK(run_once(e, &c, shapes[i][0], shapes[i][1], out, &d));
        ASSERT_EQ_INT(out[0].shape[1], shapes[i][0]);
        ASSERT_EQ_INT(out[1].shape[2], shapes[i][0] + shapes[i][1]);
    }
    ASSERT_EQ_INT(eb_engine__n_allocs(e), allocs);
    eb_engine_mem_info(e, &after);
    ASSERT_EQ_INT(after.total_bytes, before.total_bytes);
    ASSERT_EQ_INT(after.arena_bytes, before.arena_bytes);

    /* Longer than the bound: refused, naming the input, its dim and the bound. */
    ASSERT_TRUE(run_once(e, &c, CTX + 1, 0, out, &d) == EB_ERR_INVALID_ARG);
    printf("refused: %s\n", d.msg);
    ASSERT_CONTAINS(d.msg, "input 'input_ids'");
    ASSERT_CONTAINS(d.msg, "sequence_length");
    ASSERT_CONTAINS(d.msg, "1..64");
    d = (struct eb_diag){0};
    ASSERT_TRUE(run_once(e, &c, 1, CTX, out, &d) == EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d.msg, "past_key_values.0.key");
    ASSERT_CONTAINS(d.msg, "0..63");
    d = (struct eb_diag){0};
    ASSERT_TRUE(run_once(e, &c, 10, CTX - 5, out, &d) == EB_ERR_INVALID_ARG);
    printf("refused: %s\n", d.msg);
    ASSERT_CONTAINS(d.msg, "maximum sequence of 64");
    /* position_ids shorter than input_ids: one size per symbol. */
    {
        int64_t ids[3] = {1, 2, 3}, pos[3];
        struct eb_tensor kv[2 * MAX_LAYERS], in[N_IO];
        const float dummy = 0.0f;
        for (int t = 0; t < 2 * c.layers; t++)
            kv[t] = (struct eb_tensor){.dtype = EB_DTYPE_F32,
                                       .rank = 4,
                                       .shape = {1, c.kv_heads, 0, c.head_dim},
                                       .data = (void *)&dummy};
        make_inputs(&c, ids, pos, 3, 0, kv, in);
        in[1].shape[1] = 2;
        d = (struct eb_diag){0};
        ASSERT_TRUE(eb_engine_run(e, in, 2 + 2 * (size_t)c.layers, out, 1 + 2 * (size_t)c.layers,
                                  &d) == EB_ERR_INVALID_ARG);
        printf("refused: %s\n", d.msg);
        ASSERT_CONTAINS(d.msg, "input 'position_ids' is [1,2]");
    }
    /* A token id outside the vocabulary: Gather checks the indices at every run. */
    {
        int64_t ids[2] = {3, c.vocab + 5}, pos[2];
        struct eb_tensor kv[2 * MAX_LAYERS], in[N_IO];
        const float dummy = 0.0f;
        for (int t = 0; t < 2 * c.layers; t++)
            kv[t] = (struct eb_tensor){.dtype = EB_DTYPE_F32,
                                       .rank = 4,
                                       .shape = {1, c.kv_heads, 0, c.head_dim},
                                       .data = (void *)&dummy};
        make_inputs(&c, ids, pos, 2, 0, kv, in);
        d = (struct eb_diag){0};
        ASSERT_TRUE(eb_engine_run(e, in, 2 + 2 * (size_t)c.layers, out, 1 + 2 * (size_t)c.layers,
                                  &d) != EB_OK);
        printf("refused: %s\n", d.msg);
        ASSERT_CONTAINS(d.msg, "Gather");
        ASSERT_CONTAINS(d.msg, "out of range");
    }
    /* And the engine still runs after a refusal. */
    ASSERT_OK(run_once(e, &c, 2, 3, out, &d));
    eb_engine_destroy(e);
}

/* max_seq overrides the file's ctx: a smaller bound, a smaller plan. */
EB_TEST(native_max_seq_option)
{
    const struct eb_model_llm_config c = tiny_config(EB_MODEL_LLM_LLAMA);
    char path[512];
    synth(EB_MODEL_LLM_LLAMA, "maxseq.onnx", path, sizeof(path));
    struct eb_engine *big = load_engine(path, 0), *small = load_engine(path, 16);
    struct eb_engine_mem mb, ms;
    eb_engine_mem_info(big, &mb);
    eb_engine_mem_info(small, &ms);
    ASSERT_TRUE(ms.arena_bytes < mb.arena_bytes);
    struct eb_tensor out[N_IO];
    struct eb_diag d = {0};
    ASSERT_OK(run_once(small, &c, 16, 0, out, &d));
    ASSERT_TRUE(run_once(small, &c, 17, 0, out, &d) == EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d.msg, "1..16");
    eb_engine_destroy(big);
    eb_engine_destroy(small);
}

/* ---- hand-built graphs with a sequence dim ----------------------------------------------- */

/* ValueInfoProto float [1, sequence_length, 4]. */
static void put_seq_value(struct eb_pb_buf *g, uint32_t field, const char *name)
{
    static const int64_t dims[3] = {1, 0, 4};
    static const char *const names[3] = {NULL, "sequence_length", NULL};
    eb_test_put_value_info_named(g, field, name, 1 /* float */, 3, dims, names);
}

/* x [1, sequence_length, 4] -> op -> y (opset 17); `ctx` > 0: edgebench.llm.ctx metadata. */
static uint8_t *seq_model(const char *op, int ctx, size_t *len)
{
    struct eb_pb_buf g, node, model, opset, meta;
    eb_pb_buf_init(&g);
    eb_pb_buf_init(&node);
    eb_pb_buf_init(&model);
    eb_pb_buf_init(&opset);
    eb_pb_buf_init(&meta);
    eb_pb_put_str(&node, 1, "x");
    eb_pb_put_str(&node, 2, "y");
    eb_pb_put_str(&node, 3, "the_node");
    eb_pb_put_str(&node, 4, op);
    eb_pb_put_str(&g, 2, "seq");
    put_seq_value(&g, 11, "x");
    eb_pb_put_msg(&g, 1, &node);
    eb_test_put_value_info(&g, 12, "y", 1, -1, NULL);
    eb_pb_put_varint(&model, 1, 8);
    eb_pb_put_msg(&model, 7, &g);
    eb_pb_put_str(&opset, 1, "");
    eb_pb_put_varint(&opset, 2, 17);
    eb_pb_put_msg(&model, 8, &opset);
    if (ctx > 0) {
        char v[16];
        snprintf(v, sizeof(v), "%d", ctx);
        eb_pb_put_str(&meta, 1, "edgebench.llm.ctx");
        eb_pb_put_str(&meta, 2, v);
        eb_pb_put_msg(&model, 14, &meta);
    }
    uint8_t *bytes = eb_pb_buf_take(&model, len);
    eb_pb_buf_fini(&g);
    eb_pb_buf_fini(&node);
    eb_pb_buf_fini(&opset);
    eb_pb_buf_fini(&meta);
    ASSERT_TRUE(bytes != NULL);
    return bytes;
}

static enum eb_status load_seq(const char *op, int ctx, int64_t max_seq, struct eb_engine **e,
                               struct eb_diag *d)
{
    size_t len = 0;
    uint8_t *bytes = seq_model(op, ctx, &len);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.threads = 1;
    opt.max_seq = max_seq;
    enum eb_status st = eb_engine_load(bytes, len, "seq.onnx", &opt, e, d);
    free(bytes);
    return st;
}

/* Ops the engine lacks, and ops that cannot take a changing shape, are refused at load by name;
 * a sequence dim needs a bound. */
EB_TEST(native_dynamic_refusals_at_load)
{
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    ASSERT_TRUE(load_seq("Einsum", 8, 0, &e, &d) == EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "Einsum");
    d = (struct eb_diag){0};
    ASSERT_TRUE(load_seq("GlobalAveragePool", 8, 0, &e, &d) == EB_ERR_UNSUPPORTED);
    printf("refused: %s\n", d.msg);
    ASSERT_CONTAINS(d.msg, "the_node");
    ASSERT_CONTAINS(d.msg, "GlobalAveragePool");
    ASSERT_CONTAINS(d.msg, "changes from run to run");
    d = (struct eb_diag){0};
    ASSERT_TRUE(load_seq("Sigmoid", 0, 0, &e, &d) == EB_ERR_UNSUPPORTED);
    printf("refused: %s\n", d.msg);
    ASSERT_CONTAINS(d.msg, "input 'x'");
    ASSERT_CONTAINS(d.msg, "max_seq");
    ASSERT_TRUE(e == NULL);
}

/* A bound from the option alone; each run computes at its own length. */
EB_TEST(native_dynamic_sigmoid_runs_each_length)
{
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(load_seq("Sigmoid", 0, 8, &e, &d));
    float x[8 * 4];
    for (int i = 0; i < 8 * 4; i++)
        x[i] = (float)(i % 7) - 3.0f;
    for (int64_t n = 1; n <= 8; n++) {
        struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 3, .shape = {1, n, 4}, .data = x},
                         out;
        ASSERT_OK(eb_engine_run(e, &in, 1, &out, 1, &d));
        ASSERT_EQ_INT(out.shape[1], n);
        for (int64_t i = 0; i < n * 4; i++)
            ASSERT_NEAR(((const float *)out.data)[i], 1.0 / (1.0 + exp(-(double)x[i])), 1e-6);
    }
    eb_engine_destroy(e);
}

/*
 * A decoder exported by real tooling (scripts/llm_hf_export.py: transformers' LlamaForCausalLM
 * or Qwen2ForCausalLM through torch.onnx.export with its KV cache; inputs input_ids,
 * attention_mask, position_ids, past_key_values.N.key|value) against ONNX Runtime: a prefill of
 * PROMPT tokens and STEPS greedy decode steps, attention_mask all ones, the native cache
 * chained. Such files come from a machine with torch, so this test runs only on the files named
 * by EB_TEST_HF_MODELS (paths separated by ':') and skips without it.
 */
static void check_hf_file(const char *path)
{
    struct eb_backend *ort = open_backend(&eb_backend_ort_ops, 1, 1, CTX);
    struct eb_backend *nat = open_backend(&eb_backend_native_ops, 0, 1, CTX);
    struct eb_diag d = {0};
    struct eb_model_spec spec = {.path = path};
    struct eb_model_info info;
    ASSERT_OK(eb_backend_load(ort, &spec, &info, &d));
    if (eb_backend_load(nat, &spec, &info, &d) != EB_OK)
        EB_FAIL("native load of %s: %s", path, d.msg);
    ASSERT_TRUE(info.n_inputs >= 5 && (info.n_inputs - 3) % 2 == 0);
    ASSERT_STREQ(info.inputs[0].name, "input_ids");
    ASSERT_STREQ(info.inputs[1].name, "attention_mask");
    ASSERT_STREQ(info.inputs[2].name, "position_ids");
    const int n_kv = (int)info.n_inputs - 3;
    const int64_t heads = info.inputs[3].shape[1], hd = info.inputs[3].shape[3];
    const int vocab = (int)info.outputs[0].shape[2];
    ASSERT_TRUE(n_kv <= 2 * 8 && heads > 0 && hd > 0 && vocab > 0);
    const size_t kv_dim = (size_t)(heads * hd);
    float *ort_kv = calloc((size_t)n_kv * CTX * kv_dim, sizeof(float));
    float *ort_next = calloc((size_t)n_kv * CTX * kv_dim, sizeof(float));
    ASSERT_TRUE(ort_kv != NULL && ort_next != NULL);
    const float dummy = 0.0f;
    struct eb_tensor nat_kv[16], in[3 + 16], out_n[1 + 16], out_o[1 + 16];
    for (int t = 0; t < n_kv; t++)
        nat_kv[t] = (struct eb_tensor){
            .dtype = EB_DTYPE_F32, .rank = 4, .shape = {1, heads, 0, hd}, .data = (void *)&dummy};
    int64_t ids[PROMPT], pos[PROMPT], mask[CTX];
    for (int i = 0; i < PROMPT; i++)
        ids[i] = (i * 389 + 17) % vocab;
    for (int i = 0; i < CTX; i++)
        mask[i] = 1;
    int64_t n = PROMPT, past = 0;
    double worst = 0.0;
    int tokens[STEPS];
    for (int step = 0; step <= STEPS; step++) {
        for (int64_t i = 0; i < n; i++)
            pos[i] = past + i;
        in[0] = (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, n}, .data = ids};
        in[1] = (struct eb_tensor){
            .dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, past + n}, .data = mask};
        in[2] = (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, n}, .data = pos};
        for (int t = 0; t < n_kv; t++)
            in[3 + t] = (struct eb_tensor){
                .dtype = EB_DTYPE_F32,
                .rank = 4,
                .shape = {1, heads, past, hd},
                .data =
                    past ? (void *)(ort_kv + (size_t)t * (size_t)past * kv_dim) : (void *)&dummy};
        ASSERT_OK(eb_backend_infer(ort, in, 3 + (size_t)n_kv, out_o, 1 + (size_t)n_kv, NULL, &d));
        for (int t = 0; t < n_kv; t++)
            in[3 + t] = nat_kv[t];
        if (eb_backend_infer(nat, in, 3 + (size_t)n_kv, out_n, 1 + (size_t)n_kv, NULL, &d) != EB_OK)
            EB_FAIL("native step %d: %s", step, d.msg);
        ASSERT_EQ_INT(out_n[0].shape[1], n);
        ASSERT_EQ_INT(out_n[0].shape[2], vocab);
        for (int64_t r = 0; r < n; r++) {
            const size_t off = (size_t)r * (size_t)vocab;
            const double e = row_error((const float *)out_n[0].data + off,
                                       (const float *)out_o[0].data + off, vocab);
            worst = fmax(worst, e);
            ASSERT_TRUE(e <= TOL);
        }
        const size_t last = (size_t)(n - 1) * (size_t)vocab;
        const int tok_n = argmax((const float *)out_n[0].data + last, vocab);
        ASSERT_EQ_INT(tok_n, argmax((const float *)out_o[0].data + last, vocab));
        for (int t = 0; t < n_kv; t++) {
            ASSERT_EQ_INT(out_n[1 + t].shape[2], past + n);
            const size_t cnt = (size_t)(past + n) * kv_dim;
            memcpy(ort_next + (size_t)t * cnt, out_o[1 + t].data, cnt * sizeof(float));
            nat_kv[t] = out_n[1 + t];
        }
        memcpy(ort_kv, ort_next, (size_t)n_kv * (size_t)(past + n) * kv_dim * sizeof(float));
        if (step == STEPS)
            break;
        tokens[step] = tok_n;
        past += n;
        n = 1;
        ids[0] = tok_n;
    }
    printf("%s: native vs ort logits over a prefill of %d and %d decode steps: max error %.3g of "
           "the row's largest |logit|; greedy tokens",
           path, PROMPT, STEPS, worst);
    for (int i = 0; i < STEPS; i++)
        printf(" %d", tokens[i]);
    printf("\n");
    eb_backend_destroy(nat);
    eb_backend_destroy(ort);
    free(ort_kv);
    free(ort_next);
}

EB_TEST(native_hf_export_matches_ort)
{
    const char *env = getenv("EB_TEST_HF_MODELS");
    if (env == NULL || env[0] == '\0')
        EB_SKIP("EB_TEST_HF_MODELS names no file (decoders exported by "
                "scripts/llm_hf_export.py, ':'-separated)");
    char list[2048];
    snprintf(list, sizeof(list), "%s", env);
    for (char *save = NULL, *p = strtok_r(list, ":", &save); p != NULL;
         p = strtok_r(NULL, ":", &save))
        check_hf_file(p);
}
