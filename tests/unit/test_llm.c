/*
 * Decoder models (`edgebench model synth --arch llama|qwen2`, model/llm.h): the published
 * parameter counts, the size/arch errors, deterministic files, the parameter count read back
 * from a file, and ONNX Runtime running the tiny models: a decode step fed the prefill's
 * present.* as past must give the logits of a prefill of all the tokens (KV cache, rotary
 * positions and causal mask right). The ORT cases skip when the library cannot be loaded. The
 * CLI cases (bad --size/--arch, synth then info) are in test_model.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ort/ort_backend.h"
#include "eb/backend.h"
#include "eb_test.h"
#include "model/llm.h"
#include "model/model.h"

static struct eb_model_llm_config config(enum eb_model_llm_arch arch, const char *size, int ctx)
{
    struct eb_model_llm_config c;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_model_llm_config(arch, size, ctx, &c, &diag));
    return c;
}

/* Writes the tiny model of `arch` into the test folder; returns its path (static buffer per
 * call site is not needed: the caller passes `path`). */
static void synth_tiny_ex(enum eb_model_llm_arch arch, int fp16, uint32_t seed, int external,
                          const char *name, char *path, size_t cap)
{
    struct eb_model_llm_options o = {.cfg = config(arch, "tiny", 64),
                                     .fp16 = fp16,
                                     .seed = seed,
                                     .external_bytes = external ? 1024 : 0};
    struct eb_diag diag = {0};
    int wrote_external = -1;
    snprintf(path, cap, "%s/%s", eb_test_tmpdir(), name);
    ASSERT_OK(eb_model_llm_synth_file(&o, path, &wrote_external, &diag));
    ASSERT_EQ_INT(wrote_external, external);
}

static void synth_tiny(enum eb_model_llm_arch arch, int fp16, uint32_t seed, const char *name,
                       char *path, size_t cap)
{
    synth_tiny_ex(arch, fp16, seed, 0, name, path, cap);
}

EB_TEST(param_counts_match_published_models)
{
    struct eb_model_llm_config q = config(EB_MODEL_LLM_QWEN2, "0.5b", 2048);
    struct eb_model_llm_config l = config(EB_MODEL_LLM_LLAMA, "1b", 2048);
    /* Qwen2.5-0.5B and Llama-3.2-1B as their model cards and num_parameters() give them. */
    ASSERT_EQ_INT(eb_model_llm_params(&q), 494032768);
    ASSERT_EQ_INT(eb_model_llm_params(&l), 1235814400);
    /* KV cache per token: 2 x layers x kv_heads x head_dim x bytes. */
    ASSERT_EQ_INT(eb_model_llm_kv_bytes_per_token(&q, 2), 2 * 24 * 2 * 64 * 2);
    ASSERT_EQ_INT(eb_model_llm_kv_bytes_per_token(&l, 2), 2 * 16 * 8 * 64 * 2);
    /* Decode FLOPs grow with the KV length by the attention's 4 x layers x heads x head_dim. */
    ASSERT_NEAR(eb_model_llm_decode_flops(&l, 101) - eb_model_llm_decode_flops(&l, 100),
                4.0 * 16 * 32 * 64, 1e-3);
    /* A prefill of one token is one decode step at KV length 1. */
    ASSERT_NEAR(eb_model_llm_prefill_flops(&q, 1), eb_model_llm_decode_flops(&q, 1), 1.0);
}

EB_TEST(config_refuses_other_family_sizes)
{
    struct eb_model_llm_config c;
    struct eb_diag diag = {0};
    ASSERT_EQ_INT(eb_model_llm_config(EB_MODEL_LLM_QWEN2, "1b", 2048, &c, &diag),
                  EB_ERR_INVALID_ARG);
    printf("%s\n", diag.msg);
    ASSERT_CONTAINS(diag.msg, "Llama-3.2-1B");
    ASSERT_CONTAINS(diag.msg, "--arch llama");
    eb_diag_clear(&diag);
    ASSERT_EQ_INT(eb_model_llm_config(EB_MODEL_LLM_LLAMA, "0.5b", 2048, &c, &diag),
                  EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "--arch qwen2");
    eb_diag_clear(&diag);
    ASSERT_EQ_INT(eb_model_llm_config(EB_MODEL_LLM_LLAMA, "7b", 2048, &c, &diag),
                  EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "'7b'");
    eb_diag_clear(&diag);
    ASSERT_EQ_INT(eb_model_llm_config(EB_MODEL_LLM_LLAMA, "tiny", 8, &c, &diag),
                  EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "context 8");
}

static int same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *x = eb_test_read_file(a, &na), *y = eb_test_read_file(b, &nb);
    ASSERT_TRUE(x != NULL && y != NULL);
    const int same = na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

static void check_deterministic(enum eb_model_llm_arch arch)
{
    char a[512], b[512], c[512];
    synth_tiny(arch, 0, 7, "a.onnx", a, sizeof(a));
    synth_tiny(arch, 0, 7, "b.onnx", b, sizeof(b));
    synth_tiny(arch, 0, 8, "c.onnx", c, sizeof(c));
    ASSERT_TRUE(same_file(a, b));
    ASSERT_TRUE(!same_file(a, c));
}

EB_TEST(synth_tiny_llama_deterministic)
{
    check_deterministic(EB_MODEL_LLM_LLAMA);
}

EB_TEST(synth_tiny_qwen2_deterministic)
{
    check_deterministic(EB_MODEL_LLM_QWEN2);
}

/* The file's weights, counted by `model info`'s rule, are the configuration's parameters; the
 * metadata gives the configuration back. */
static void check_file_params(enum eb_model_llm_arch arch, int fp16)
{
    char path[512];
    struct eb_model_summary *s = malloc(sizeof(*s));
    struct eb_model_llm_facts f;
    struct eb_diag diag = {0};
    const struct eb_model_llm_config c = config(arch, "tiny", 64);
    ASSERT_TRUE(s != NULL);
    synth_tiny(arch, fp16, 0, "p.onnx", path, sizeof(path));
    ASSERT_OK(eb_model_summarize_file(path, s, &diag));
    printf("%s: %llu parameters in the file, %llu configured\n", path,
           (unsigned long long)s->n_params, (unsigned long long)eb_model_llm_params(&c));
    ASSERT_EQ_INT(s->n_params, eb_model_llm_params(&c));
    ASSERT_EQ_INT(s->precision.kind, fp16 ? EB_MODEL_PRECISION_FP16 : EB_MODEL_PRECISION_FP32);
    ASSERT_EQ_INT(eb_model_llm_facts(s, 0, &f, &diag), 1);
    ASSERT_EQ_INT(f.params, eb_model_llm_params(&c));
    ASSERT_EQ_INT(f.n, 64);
    ASSERT_EQ_INT(f.weight_bytes, f.params * (fp16 ? 2 : 4));
    ASSERT_EQ_INT(f.cfg.kv_heads, c.kv_heads);
    ASSERT_EQ_INT(f.cfg.attn_bias, arch == EB_MODEL_LLM_QWEN2);
    /* Inputs and outputs as the common exports name them. */
    ASSERT_EQ_INT(s->n_inputs, 2 + 2 * c.layers);
    ASSERT_STREQ(s->inputs[0].name, "input_ids");
    ASSERT_STREQ(s->inputs[1].name, "position_ids");
    ASSERT_STREQ(s->inputs[2].name, "past_key_values.0.key");
    ASSERT_STREQ(s->outputs[0].name, "logits");
    ASSERT_STREQ(s->outputs[1].name, "present.0.key");
    ASSERT_EQ_INT(s->outputs[0].shape[2], c.vocab);
    free(s);
}

EB_TEST(tiny_file_params_llama)
{
    check_file_params(EB_MODEL_LLM_LLAMA, 0);
}

EB_TEST(tiny_file_params_qwen2_fp16)
{
    check_file_params(EB_MODEL_LLM_QWEN2, 1);
}

/* ---- ONNX Runtime: KV cache ------------------------------------------------------------ */

static struct eb_backend *ort_open(void)
{
    struct eb_backend_config cfg = {.device = EB_DEVICE_CPU,
                                    .threads = 1,
                                    .mem_limit_bytes = 8000000000ull,
                                    .trt_cache = "off"};
    struct eb_backend_probe pr;
    struct eb_backend *be = NULL;
    struct eb_diag d = {0};
    if (eb_backend_ort_ops.probe(&cfg, &pr, &d) != EB_OK)
        EB_SKIP("ONNX Runtime cannot be loaded (%s)", d.msg);
    ASSERT_OK(eb_backend_create(&eb_backend_ort_ops, &cfg, &be, &d));
    return be;
}

#define MAX_LAYERS 2
#define KV_DIM     (2 * 16) /* tiny: kv_heads x head_dim */

/* One step: `n` tokens at positions past..past+n-1 on a cache of `past` positions (`kv`:
 * layer-major K then V, [kv_heads][past][head_dim] each). Copies the logits to `logits` and the
 * present cache to `kv_out` (same layout, past + n positions). */
static void step(struct eb_backend *be, const struct eb_model_llm_config *c, const int64_t *ids,
                 int64_t n, int64_t past, const float *kv, float *logits, float *kv_out)
{
    struct eb_tensor in[2 + 2 * MAX_LAYERS], out[1 + 2 * MAX_LAYERS];
    int64_t pos[16];
    const float dummy = 0.0f; /* an empty past still needs a data pointer */
    struct eb_diag d = {0};
    const size_t per = (size_t)past * KV_DIM, per_out = (size_t)(past + n) * KV_DIM;
    for (int64_t i = 0; i < n; i++)
        pos[i] = past + i;
    in[0] =
        (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, n}, .data = (void *)ids};
    in[1] = (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, n}, .data = pos};
    for (int t = 0; t < 2 * c->layers; t++)
        in[2 + t] =
            (struct eb_tensor){.dtype = EB_DTYPE_F32,
                               .rank = 4,
                               .shape = {1, c->kv_heads, past, c->head_dim},
                               .data = past ? (void *)(kv + (size_t)t * per) : (void *)&dummy};
    ASSERT_OK(eb_backend_infer(be, in, 2 + 2 * (size_t)c->layers, out, 1 + 2 * (size_t)c->layers,
                               NULL, &d));
    ASSERT_EQ_INT(out[0].shape[1], n);
    ASSERT_EQ_INT(out[0].shape[2], c->vocab);
    memcpy(logits, out[0].data, (size_t)(n * c->vocab) * sizeof(float));
    for (int t = 0; t < 2 * c->layers; t++) {
        ASSERT_EQ_INT(out[1 + t].shape[2], past + n);
        memcpy(kv_out + (size_t)t * per_out, out[1 + t].data, per_out * sizeof(float));
    }
}

/* Largest |a - b| over a row, relative to the row's largest |b|. */
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

static void check_kv_cache(enum eb_model_llm_arch arch, int external)
{
    enum { N = 6 };
    const struct eb_model_llm_config c = config(arch, "tiny", 64);
    const int64_t ids[N] = {17, 903, 4, 511, 250, 1000};
    char path[512];
    struct eb_model_spec spec = {.path = path};
    struct eb_model_info info;
    struct eb_diag d = {0};
    float *full = malloc((size_t)N * (size_t)c.vocab * sizeof(float));
    float *part = malloc((size_t)N * (size_t)c.vocab * sizeof(float));
    float *kv_full = malloc((size_t)(2 * MAX_LAYERS * N * KV_DIM) * sizeof(float));
    float *kv_part = malloc((size_t)(2 * MAX_LAYERS * N * KV_DIM) * sizeof(float));
    float *kv_next = malloc((size_t)(2 * MAX_LAYERS * N * KV_DIM) * sizeof(float));
    ASSERT_TRUE(full && part && kv_full && kv_part && kv_next);
    ASSERT_TRUE(c.layers <= MAX_LAYERS && c.kv_heads * c.head_dim == KV_DIM);
    struct eb_backend *be = ort_open();
    synth_tiny_ex(arch, 0, 1, external, "kv.onnx", path, sizeof(path));
    ASSERT_OK(eb_backend_load(be, &spec, &info, &d));

    step(be, &c, ids, N, 0, NULL, full, kv_full);     /* prefill of all N tokens */
    step(be, &c, ids, N - 1, 0, NULL, part, kv_part); /* prefill of N - 1 tokens */
    /* Causal mask: the first N - 1 rows do not see token N. */
    for (int i = 0; i < N - 1; i++)
        ASSERT_TRUE(row_error(part + (size_t)i * (size_t)c.vocab,
                              full + (size_t)i * (size_t)c.vocab, c.vocab) < 1e-4);
    /* One decode step on the cache: token N at position N - 1. */
    step(be, &c, ids + N - 1, 1, N - 1, kv_part, part, kv_next);
    const double err = row_error(part, full + (size_t)(N - 1) * (size_t)c.vocab, c.vocab);
    printf("%s tiny: decode vs prefill logits, max error %.3g of the row's scale\n",
           eb_model_llm_arch_name(arch), err);
    ASSERT_TRUE(err < 1e-4);
    /* The present cache of the decode step is the full prefill's. */
    double kv_err = 0.0;
    for (size_t i = 0; i < (size_t)(2 * c.layers * N * KV_DIM); i++)
        kv_err = fmax(kv_err, fabs((double)kv_next[i] - kv_full[i]));
    ASSERT_TRUE(kv_err < 1e-5);
    eb_backend_destroy(be);
    free(full);
    free(part);
    free(kv_full);
    free(kv_part);
    free(kv_next);
}

EB_TEST(ort_llama_decode_matches_prefill)
{
    check_kv_cache(EB_MODEL_LLM_LLAMA, 0);
}

EB_TEST(ort_qwen2_decode_matches_prefill)
{
    check_kv_cache(EB_MODEL_LLM_QWEN2, 0);
}

/* Weights in "kv.onnx.data": ONNX Runtime reads them back (the same checks pass), and the
 * external file counts the same parameters. */
EB_TEST(ort_external_data_llama)
{
    char path[512];
    struct eb_model_summary *s = malloc(sizeof(*s));
    struct eb_diag diag = {0};
    const struct eb_model_llm_config c = config(EB_MODEL_LLM_LLAMA, "tiny", 64);
    ASSERT_TRUE(s != NULL);
    check_kv_cache(EB_MODEL_LLM_LLAMA, 1);
    snprintf(path, sizeof(path), "%s/kv.onnx", eb_test_tmpdir());
    ASSERT_OK(eb_model_summarize_file(path, s, &diag));
    ASSERT_EQ_INT(s->n_params, eb_model_llm_params(&c));
    snprintf(path, sizeof(path), "%s/kv.onnx.data", eb_test_tmpdir());
    size_t n = 0;
    char *data = eb_test_read_file(path, &n);
    ASSERT_TRUE(data != NULL);
    /* Every weight, 64-byte aligned: at least params x 4 bytes. */
    ASSERT_TRUE(n >= eb_model_llm_params(&c) * 4);
    free(data);
    free(s);
}
