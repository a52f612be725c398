/*
 * eb_model_llm_synth_file: decoder-only transformers of the Llama 3.2 and Qwen2.5 families as
 * ONNX (opset 17), laid out as Hugging Face `transformers` computes them:
 *
 *   h = Gather(embed_tokens, input_ids)
 *   per layer:  h += o_proj(attention(rope(q_proj(n)), rope(k_proj(n)), v_proj(n)))   n = rms(h)
 *               h += down_proj(silu(gate_proj(n)) * up_proj(n))                        n = rms(h)
 *   logits = rms(h) @ embed_tokens^T   (tied lm_head: Transpose of the one embedding matrix)
 *
 * - RMSNorm as x / Sqrt(ReduceMean(x * x) + eps) * weight.
 * - Rotary embedding in the rotate-half form: x * cos + rotate_half(x) * sin, with cos/sin tables
 *   of ctx rows (initializers "rotary.cos", "rotary.sin" [ctx, head_dim]) gathered by
 *   position_ids. rotate_half(x) = Concat(-x2, x1); the sign is folded into the sin table
 *   (its first half negated: HF's table repeats the frequencies, so both halves are equal) so
 *   the graph needs Split + Concat and no Neg.
 * - Grouped-query attention without repeating K/V: q is laid out [batch, kv_heads, group,
 *   seq, head_dim] and MatMul broadcasts K^T [batch, kv_heads, 1, head_dim, total] over the
 *   group (head h uses kv head h / group, as HF's repeat_kv).
 * - The KV cache: present.N.key/value = Concat(past, new, axis 2); K is stored after rotation.
 * - Causal mask from position_ids: key j of query i is masked when j > position_ids[i], with
 *   j = 0..total-1 sliced from an int64 table of ctx positions (total from Shape of
 *   present.0.key): Clip(Cast(j - pos), 0, 1) * lowest, added to the scores.
 * - qwen2: biases on q/k/v; Llama 3.2: "llama3" frequency scaling of the rotary table.
 *
 * Weights are seeded N(0, 0.02) (xorshift64* + Box-Muller, HF's initializer_range), norm weights
 * 1, biases N(0, 0.02) so that the bias path shows in the outputs. MatMul weights are [in, out]
 * (as torch exports them). fp16 stores every float tensor, the activations, the KV cache and
 * the logits in float16 (the graph computes in float16 throughout; no Cast but the mask's).
 *
 * The file is written as it is built: the weights, inline in the initializers or streamed to
 * "<path>.data" when they exceed EB_MODEL_LLM_EXTERNAL_BYTES, then the ModelProto around them.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/file.h"
#include "eb/path.h"
#include "engine/onnx/onnx_wire.h"
#include "model/llm.h"
#include "model/synth_internal.h"

#define NAME_MAX_ EB_SYNTH__NAME_MAX
#define ONNX_F32  1
#define ONNX_I64  7
#define ONNX_F16  10
#define ALIGN     64

/* ---- configurations ------------------------------------------------------------------------ */

const char *eb_model_llm_arch_name(enum eb_model_llm_arch a)
{
    return a == EB_MODEL_LLM_QWEN2 ? "qwen2" : "llama";
}

enum eb_status eb_model_llm_config(enum eb_model_llm_arch arch, const char *size, int ctx,
                                   struct eb_model_llm_config *out, struct eb_diag *diag)
{
    struct eb_model_llm_config c;
    memset(&c, 0, sizeof(c));
    c.arch = arch;
    c.tied = 1; /* Qwen2.5-0.5B and Llama-3.2-1B both tie lm_head to the embedding */
    if (arch == EB_MODEL_LLM_QWEN2) {
        c.attn_bias = 1;
        c.rope_theta = 1e6;
        c.rms_eps = 1e-6;
    } else {
        c.rope_theta = 500000.0;
        c.rms_eps = 1e-5;
        c.rope_llama3 = 1;
        c.rope_factor = 32.0;
        c.rope_low_freq = 1.0;
        c.rope_high_freq = 4.0;
        c.rope_orig_ctx = 8192;
    }
    if (size != NULL && strcmp(size, "tiny") == 0) {
        c.hidden = 64, c.layers = 2, c.heads = 4, c.kv_heads = 2, c.head_dim = 16;
        c.intermediate = 172, c.vocab = 1024;
    } else if (size != NULL && strcmp(size, "0.5b") == 0 && arch == EB_MODEL_LLM_QWEN2) {
        c.hidden = 896, c.layers = 24, c.heads = 14, c.kv_heads = 2, c.head_dim = 64;
        c.intermediate = 4864, c.vocab = 151936;
    } else if (size != NULL && strcmp(size, "1b") == 0 && arch == EB_MODEL_LLM_LLAMA) {
        c.hidden = 2048, c.layers = 16, c.heads = 32, c.kv_heads = 8, c.head_dim = 64;
        c.intermediate = 8192, c.vocab = 128256;
    } else if (size != NULL && (strcmp(size, "0.5b") == 0 || strcmp(size, "1b") == 0)) {
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to configure %s %s: size %s is %s's configuration; use "
                            "--arch %s, or --size tiny",
                            eb_model_llm_arch_name(arch), size, size,
                            size[0] == '0' ? "Qwen2.5-0.5B" : "Llama-3.2-1B",
                            size[0] == '0' ? "qwen2" : "llama");
    } else {
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to configure %s: unknown size '%s'; use tiny, 0.5b (qwen2) "
                            "or 1b (llama)",
                            eb_model_llm_arch_name(arch), size ? size : "");
    }
    if (ctx < EB_MODEL_LLM_CTX_MIN || ctx > EB_MODEL_LLM_CTX_MAX)
        return eb_diag_fail(
            diag, EB_ERR_INVALID_ARG, "failed to configure %s %s: context %d is outside %d..%d",
            eb_model_llm_arch_name(arch), size, ctx, EB_MODEL_LLM_CTX_MIN, EB_MODEL_LLM_CTX_MAX);
    snprintf(c.size, sizeof(c.size), "%s", size);
    c.ctx = ctx;
    *out = c;
    return EB_OK;
}

/* Projection weights of one layer: q, k, v, o, gate, up, down. */
static uint64_t layer_matmul_params(const struct eb_model_llm_config *c)
{
    const uint64_t h = (uint64_t)c->hidden, q = (uint64_t)c->heads * (uint64_t)c->head_dim;
    const uint64_t kv = (uint64_t)c->kv_heads * (uint64_t)c->head_dim;
    return h * q + 2 * h * kv + q * h + 3 * h * (uint64_t)c->intermediate;
}

uint64_t eb_model_llm_matmul_params(const struct eb_model_llm_config *c)
{
    return (uint64_t)c->layers * layer_matmul_params(c) + (uint64_t)c->hidden * (uint64_t)c->vocab;
}

uint64_t eb_model_llm_params(const struct eb_model_llm_config *c)
{
    const uint64_t h = (uint64_t)c->hidden, embed = h * (uint64_t)c->vocab;
    uint64_t layer = layer_matmul_params(c) + 2 * h; /* two RMSNorm weights */
    if (c->attn_bias)
        layer += (uint64_t)(c->heads + 2 * c->kv_heads) * (uint64_t)c->head_dim;
    return (uint64_t)c->layers * layer + embed * (c->tied ? 1 : 2) + h;
}

double eb_model_llm_prefill_flops(const struct eb_model_llm_config *c, int64_t n)
{
    const double attn = 4.0 * c->layers * c->heads * c->head_dim;
    return 2.0 * (double)eb_model_llm_matmul_params(c) * (double)n +
           attn * (double)n * (double)(n + 1) / 2.0;
}

double eb_model_llm_decode_flops(const struct eb_model_llm_config *c, int64_t kv)
{
    return 2.0 * (double)eb_model_llm_matmul_params(c) +
           4.0 * c->layers * c->heads * c->head_dim * (double)kv;
}

uint64_t eb_model_llm_kv_bytes_per_token(const struct eb_model_llm_config *c, int elem_bytes)
{
    return 2 * (uint64_t)c->layers * (uint64_t)c->kv_heads * (uint64_t)c->head_dim *
           (uint64_t)elem_bytes;
}

/* ---- writer state -------------------------------------------------------------------------- */

struct llm {
    const struct eb_model_llm_options *o;
    const struct eb_model_llm_config *c;
    int dt;                        /* ONNX dtype of every float tensor */
    struct eb_pb_buf nodes, inits; /* GraphProto fields 1 and 5 */
    uint64_t rng;
    float *f; /* a weight's values */
    uint8_t *raw;
    size_t cap;
    FILE *data; /* external data file, NULL when the weights stay inline */
    const char *data_path, *data_base;
    uint64_t data_off;
    int oom, io_errno;
};

static uint64_t rng_next(struct llm *L)
{
    return eb_synth__rng_next(&L->rng);
}

/* Uniform in (0, 1]. */
static double rng_open(struct llm *L)
{
    return ((double)(rng_next(L) >> 11) + 1.0) / 9007199254740992.0;
}

/* Nearest float16 (ties to even), as IEEE 754 binary16 bits. */
static uint16_t f32_to_f16(float v)
{
    uint32_t x;
    memcpy(&x, &v, 4);
    const uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7fffffu;
    const int32_t e8 = (int32_t)((x >> 23) & 0xffu), e = e8 - 127 + 15;
    if (e8 == 0xff)
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0u));
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) { /* subnormal half: m x 2^-24 */
        if (e < -10)
            return (uint16_t)sign;
        const uint32_t m = mant | 0x800000u, shift = (uint32_t)(14 - e);
        uint32_t h = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (h & 1u)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (mant >> 13);
    const uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++; /* a carry into the exponent is the right rounding, up to infinity */
    return (uint16_t)(sign | h);
}

static int grow(struct llm *L, size_t n)
{
    if (n <= L->cap)
        return 0;
    float *f = realloc(L->f, n * sizeof(float));
    if (f != NULL)
        L->f = f;
    uint8_t *r = realloc(L->raw, n * sizeof(float));
    if (r != NULL)
        L->raw = r;
    if (f == NULL || r == NULL) {
        L->oom = 1;
        return -1;
    }
    L->cap = n;
    return 0;
}

static size_t numel(const int64_t *dims, int rank)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    return n;
}

/* Writes the bytes of one tensor to the external data file at the next aligned offset and
 * appends its TensorProto with the location, offset and length. */
static void tensor_external(struct llm *L, const char *name, const int64_t *dims, int rank,
                            const uint8_t *raw, size_t nbytes)
{
    static const uint8_t zeros[ALIGN] = {0};
    struct eb_pb_buf t, e;
    char num[32];
    const uint64_t pad = (ALIGN - L->data_off % ALIGN) % ALIGN;
    if (L->io_errno == 0 && (fwrite(zeros, 1, (size_t)pad, L->data) != pad ||
                             fwrite(raw, 1, nbytes, L->data) != nbytes))
        L->io_errno = errno ? errno : EIO;
    L->data_off += pad;
    eb_pb_buf_init(&t);
    for (int i = 0; i < rank; i++)
        eb_pb_put_varint(&t, 1, dims[i]);
    eb_pb_put_varint(&t, 2, L->dt);
    eb_pb_put_str(&t, 8, name);
    const char *keys[3] = {"location", "offset", "length"};
    for (int k = 0; k < 3; k++) {
        eb_pb_buf_init(&e);
        eb_pb_put_str(&e, 1, keys[k]);
        if (k == 0)
            eb_pb_put_str(&e, 2, L->data_base);
        else {
            eb_synth__fmt(num, sizeof(num), "%llu",
                          (unsigned long long)(k == 1 ? L->data_off : (uint64_t)nbytes));
            eb_pb_put_str(&e, 2, num);
        }
        eb_pb_put_msg(&t, 13, &e);
        eb_pb_buf_fini(&e);
    }
    eb_pb_put_varint(&t, 14, 1); /* data_location EXTERNAL */
    eb_pb_put_msg(&L->inits, 5, &t);
    eb_pb_buf_fini(&t);
    L->data_off += nbytes;
}

/* Stores L->f[0..n) as the model's float dtype; `big` weights go external when L->data. */
static void emit_float(struct llm *L, const char *name, const int64_t *dims, int rank, int big)
{
    const size_t n = numel(dims, rank);
    size_t nbytes;
    if (L->dt == ONNX_F16) {
        for (size_t i = 0; i < n; i++) {
            const uint16_t h = f32_to_f16(L->f[i]);
            L->raw[2 * i] = (uint8_t)h;
            L->raw[2 * i + 1] = (uint8_t)(h >> 8);
        }
        nbytes = 2 * n;
    } else {
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &L->f[i], 4);
            for (int k = 0; k < 4; k++)
                L->raw[4 * i + (size_t)k] = (uint8_t)(u >> (8 * k));
        }
        nbytes = 4 * n;
    }
    if (big && L->data != NULL)
        tensor_external(L, name, dims, rank, L->raw, nbytes);
    else
        eb_synth__init_raw(&L->inits, name, L->dt, dims, rank, L->raw, nbytes);
}

enum fill { FILL_NORMAL, FILL_ONES };

/* A parameter tensor: N(0, 0.02) or ones. */
static void weight(struct llm *L, const char *name, const int64_t *dims, int rank, enum fill f)
{
    const size_t n = numel(dims, rank);
    if (L->oom || grow(L, n) != 0)
        return;
    if (f == FILL_ONES) {
        for (size_t i = 0; i < n; i++)
            L->f[i] = 1.0f;
    } else {
        for (size_t i = 0; i < n; i += 2) { /* Box-Muller: two normals per pair of uniforms */
            const double r = 0.02 * sqrt(-2.0 * log(rng_open(L))),
                         a = 6.283185307179586 * rng_open(L);
            L->f[i] = (float)(r * cos(a));
            if (i + 1 < n)
                L->f[i + 1] = (float)(r * sin(a));
        }
    }
    emit_float(L, name, dims, rank, 1);
}

/* A float scalar constant of the model's dtype (always inline). */
static void scalar(struct llm *L, const char *name, double v)
{
    const int64_t one = 1;
    if (L->oom || grow(L, 1) != 0)
        return;
    L->f[0] = (float)v;
    emit_float(L, name, &one, 0, 0);
}

/* An int64 constant of rank 1 (always inline). */
static void ints(struct llm *L, const char *name, const int64_t *v, int64_t n)
{
    uint8_t raw[8 * 8];
    for (int64_t i = 0; i < n && i < 8; i++)
        for (int k = 0; k < 8; k++)
            raw[8 * i + k] = (uint8_t)((uint64_t)v[i] >> (8 * k));
    eb_synth__init_raw(&L->inits, name, ONNX_I64, &n, 1, raw, (size_t)n * 8);
}

/* The rotary tables (cos, and sin with its first half negated) and the key positions. */
static void rotary_tables(struct llm *L)
{
    const struct eb_model_llm_config *c = L->c;
    const int d = c->head_dim, half = d / 2;
    const int64_t dims[2] = {c->ctx, d}, kdims = c->ctx;
    double inv[512];
    for (int i = 0; i < half; i++) {
        double f = 1.0 / pow(c->rope_theta, (2.0 * i) / d);
        if (c->rope_llama3) { /* transformers' _compute_llama3_parameters */
            const double wavelen = 2.0 * 3.141592653589793 / f;
            const double low_wl = c->rope_orig_ctx / c->rope_low_freq;
            const double high_wl = c->rope_orig_ctx / c->rope_high_freq;
            if (wavelen > low_wl) {
                f /= c->rope_factor;
            } else if (wavelen >= high_wl) {
                const double smooth = (c->rope_orig_ctx / wavelen - c->rope_low_freq) /
                                      (c->rope_high_freq - c->rope_low_freq);
                f = (1.0 - smooth) * f / c->rope_factor + smooth * f;
            }
        }
        inv[i] = f;
    }
    for (int t = 0; t < 2; t++) {
        if (L->oom || grow(L, (size_t)c->ctx * (size_t)d) != 0)
            return;
        for (int p = 0; p < c->ctx; p++)
            for (int i = 0; i < d; i++) {
                const double a = (double)p * inv[i % half];
                L->f[(size_t)p * (size_t)d + (size_t)i] =
                    (float)(t == 0 ? cos(a) : (i < half ? -sin(a) : sin(a)));
            }
        emit_float(L, t == 0 ? "rotary.cos" : "rotary.sin", dims, 2, 0);
    }
    uint8_t *raw = malloc((size_t)c->ctx * 8);
    if (raw == NULL) {
        L->oom = 1;
        return;
    }
    for (int64_t p = 0; p < c->ctx; p++)
        for (int k = 0; k < 8; k++)
            raw[8 * p + k] = (uint8_t)((uint64_t)p >> (8 * k));
    eb_synth__init_raw(&L->inits, "mask.key_positions", ONNX_I64, &kdims, 1, raw,
                       (size_t)c->ctx * 8);
    free(raw);
}

/* ---- nodes --------------------------------------------------------------------------------- */

#define INS(...)                                                                                   \
    (const char *const[]){__VA_ARGS__},                                                            \
        (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* Node "<scope>/<op><tag>" with one output "<scope>/<op><tag>_output_0", copied to `out`
 * (which may alias an input: the node is written first). */
static void op(struct llm *L, char *out, const char *scope, const char *type, const char *tag,
               const char *const *ins, int n_in, const struct eb_pb_buf *attrs)
{
    char name[NAME_MAX_], oname[NAME_MAX_];
    const char *outs[1] = {oname};
    eb_synth__fmt(name, sizeof(name), "%s/%s%s", scope, type, tag);
    eb_synth__fmt(oname, sizeof(oname), "%s_output_0", name);
    eb_synth__node(&L->nodes, type, name, ins, n_in, outs, 1, attrs);
    memcpy(out, oname, NAME_MAX_);
}

/* A node with one int attribute. */
static void op_int(struct llm *L, char *out, const char *scope, const char *type, const char *tag,
                   const char *const *ins, int n_in, const char *attr, int64_t v)
{
    struct eb_pb_buf a;
    eb_pb_buf_init(&a);
    eb_synth__attr_int(&a, attr, v);
    op(L, out, scope, type, tag, ins, n_in, &a);
    eb_pb_buf_fini(&a);
}

static void transpose(struct llm *L, char *out, const char *scope, const char *tag, const char *in,
                      const int64_t *perm, int rank)
{
    struct eb_pb_buf a;
    eb_pb_buf_init(&a);
    eb_synth__attr_ints(&a, "perm", perm, rank);
    op(L, out, scope, "Transpose", tag, INS(in), &a);
    eb_pb_buf_fini(&a);
}

/* x / Sqrt(ReduceMean(x * x, -1) + eps) * weight `w` (a new [hidden] initializer). */
static void rms_norm(struct llm *L, char *out, const char *x, const char *scope, const char *w)
{
    char sq[NAME_MAX_], ms[NAME_MAX_], ve[NAME_MAX_], sd[NAME_MAX_], nx[NAME_MAX_];
    const int64_t dim = L->c->hidden, axes = -1;
    struct eb_pb_buf a;
    weight(L, w, &dim, 1, FILL_ONES);
    op(L, sq, scope, "Mul", "_sq", INS(x, x), NULL);
    eb_pb_buf_init(&a);
    eb_synth__attr_ints(&a, "axes", &axes, 1);
    eb_synth__attr_int(&a, "keepdims", 1);
    op(L, ms, scope, "ReduceMean", "", INS(sq), &a);
    eb_pb_buf_fini(&a);
    op(L, ve, scope, "Add", "_eps", INS(ms, "const.rms_eps"), NULL);
    op(L, sd, scope, "Sqrt", "", INS(ve), NULL);
    op(L, nx, scope, "Div", "", INS(x, sd), NULL);
    op(L, out, scope, "Mul", "_weight", INS(nx, w), NULL);
}

/* x @ W (+ b): a [in, out] weight named "<param>.weight" and, with `bias`, "<param>.bias". */
static void linear(struct llm *L, char *out, const char *x, const char *scope, const char *param,
                   int64_t in, int64_t n_out, int bias)
{
    char w[NAME_MAX_], b[NAME_MAX_];
    const int64_t dims[2] = {in, n_out};
    eb_synth__fmt(w, sizeof(w), "%s.weight", param);
    weight(L, w, dims, 2, FILL_NORMAL);
    op(L, out, scope, "MatMul", "", INS(x, w), NULL);
    if (bias) {
        eb_synth__fmt(b, sizeof(b), "%s.bias", param);
        weight(L, b, &n_out, 1, FILL_NORMAL);
        op(L, out, scope, "Add", "", INS(out, b), NULL);
    }
}

/* x * cos + Concat(x2, x1) * sin' on [batch, seq, heads, head_dim] (sin' carries the sign). */
static void rope(struct llm *L, char *out, const char *x, const char *scope)
{
    char h0[NAME_MAX_], h1[NAME_MAX_], r[NAME_MAX_], xc[NAME_MAX_], rs[NAME_MAX_], sname[NAME_MAX_];
    const char *outs[2] = {h0, h1};
    struct eb_pb_buf a;
    eb_synth__fmt(sname, sizeof(sname), "%s/Split", scope);
    eb_synth__fmt(h0, sizeof(h0), "%s_output_0", sname);
    eb_synth__fmt(h1, sizeof(h1), "%s_output_1", sname);
    eb_pb_buf_init(&a);
    eb_synth__attr_int(&a, "axis", 3);
    eb_synth__node(&L->nodes, "Split", sname, INS(x, "const.rotary_split"), outs, 2, &a);
    eb_pb_buf_fini(&a);
    op_int(L, r, scope, "Concat", "", INS(h1, h0), "axis", 3);
    op(L, xc, scope, "Mul", "_cos", INS(x, "rotary/cos"), NULL);
    op(L, rs, scope, "Mul", "_sin", INS(r, "rotary/sin"), NULL);
    op(L, out, scope, "Add", "", INS(xc, rs), NULL);
}

/* The additive causal mask [batch, 1, 1, seq, total] from position_ids and present.0.key. */
static void causal_mask(struct llm *L)
{
    static const char *const scope = "/model/mask";
    char t[NAME_MAX_], kp[NAME_MAX_], pu[NAME_MAX_], d[NAME_MAX_], df[NAME_MAX_], cl[NAME_MAX_];
    char m[NAME_MAX_];
    struct eb_pb_buf a;
    eb_pb_buf_init(&a);
    eb_synth__attr_int(&a, "start", 2);
    eb_synth__attr_int(&a, "end", 3);
    op(L, t, scope, "Shape", "", INS("present.0.key"), &a);
    eb_pb_buf_fini(&a);
    op(L, kp, scope, "Slice", "", INS("mask.key_positions", "const.zero", t, "const.axes_0"), NULL);
    op(L, pu, scope, "Unsqueeze", "", INS("position_ids", "const.axes_2"), NULL);
    op(L, d, scope, "Sub", "", INS(kp, pu), NULL);
    op_int(L, df, scope, "Cast", "", INS(d), "to", ONNX_F32);
    op(L, cl, scope, "Clip", "", INS(df, "const.mask_lo", "const.mask_hi"), NULL);
    op(L, m, scope, "Mul", "", INS(cl, "const.mask_lowest"), NULL);
    if (L->dt == ONNX_F16)
        op_int(L, m, scope, "Cast", "_f16", INS(m), "to", ONNX_F16);
    const char *outs[1] = {"mask"};
    eb_synth__node(&L->nodes, "Unsqueeze", "/model/mask/Unsqueeze_1", INS(m, "const.axes_12"), outs,
                   1, NULL);
}

/* Concat on axis 2 whose node and output are both named `name` (the present.N.* outputs). */
static void concat_named(struct llm *L, const char *name, const char *const *ins, int n_in)
{
    struct eb_pb_buf a;
    const char *outs[1] = {name};
    eb_pb_buf_init(&a);
    eb_synth__attr_int(&a, "axis", 2);
    eb_synth__node(&L->nodes, "Concat", name, ins, n_in, outs, 1, &a);
    eb_pb_buf_fini(&a);
}

/* Self-attention of layer `l` on the normed input `x`; the output projection in `out`. */
static void attention(struct llm *L, char *out, const char *x, int l)
{
    const struct eb_model_llm_config *c = L->c;
    const int64_t q_dim = (int64_t)c->heads * c->head_dim,
                  kv_dim = (int64_t)c->kv_heads * c->head_dim;
    static const int64_t bhsd[4] = {0, 2, 1, 3}, kt[4] = {0, 1, 3, 2};
    static const int64_t q5[5] = {0, 2, 3, 1, 4}, o5[5] = {0, 3, 1, 2, 4};
    char scope[NAME_MAX_], sub[NAME_MAX_], param[NAME_MAX_];
    char q[NAME_MAX_], k[NAME_MAX_], v[NAME_MAX_], s[NAME_MAX_], pk[NAME_MAX_], pv[NAME_MAX_];
    char present_k[NAME_MAX_], present_v[NAME_MAX_];
    eb_synth__fmt(scope, sizeof(scope), "/model/layers.%d/self_attn", l);
    eb_synth__fmt(present_k, sizeof(present_k), "present.%d.key", l);
    eb_synth__fmt(present_v, sizeof(present_v), "present.%d.value", l);
    eb_synth__fmt(pk, sizeof(pk), "past_key_values.%d.key", l);
    eb_synth__fmt(pv, sizeof(pv), "past_key_values.%d.value", l);

    const char *names[3] = {"q_proj", "k_proj", "v_proj"};
    char *dst[3] = {q, k, v};
    for (int i = 0; i < 3; i++) {
        eb_synth__fmt(sub, sizeof(sub), "%s/%s", scope, names[i]);
        eb_synth__fmt(param, sizeof(param), "model.layers.%d.self_attn.%s", l, names[i]);
        linear(L, dst[i], x, sub, param, c->hidden, i == 0 ? q_dim : kv_dim, c->attn_bias);
        op(L, dst[i], sub, "Reshape", "", INS(dst[i], i == 0 ? "const.shape_q" : "const.shape_kv"),
           NULL);
    }
    eb_synth__fmt(sub, sizeof(sub), "%s/q_rotary", scope);
    rope(L, q, q, sub);
    op(L, q, sub, "Reshape", "", INS(q, "const.shape_q5"), NULL);
    transpose(L, q, sub, "", q, q5, 5); /* [batch, kv_heads, group, seq, head_dim] */
    eb_synth__fmt(sub, sizeof(sub), "%s/k_rotary", scope);
    rope(L, k, k, sub);
    transpose(L, k, sub, "", k, bhsd, 4);
    transpose(L, v, scope, "_v", v, bhsd, 4);
    concat_named(L, present_k, INS(pk, k));
    concat_named(L, present_v, INS(pv, v));
    if (l == 0)
        causal_mask(L);
    /* scores = q @ K^T * scale + mask over [batch, kv_heads, group, seq, total] */
    transpose(L, k, scope, "_kt", present_k, kt, 4);
    op(L, k, scope, "Unsqueeze", "_k", INS(k, "const.axes_2"), NULL);
    op(L, s, scope, "MatMul", "_qk", INS(q, k), NULL);
    op(L, s, scope, "Mul", "_scale", INS(s, "const.attn_scale"), NULL);
    op(L, s, scope, "Add", "_mask", INS(s, "mask"), NULL);
    op_int(L, s, scope, "Softmax", "", INS(s), "axis", -1);
    op(L, v, scope, "Unsqueeze", "_v", INS(present_v, "const.axes_2"), NULL);
    op(L, s, scope, "MatMul", "_av", INS(s, v), NULL);
    transpose(L, s, scope, "_o", s, o5, 5);
    op(L, s, scope, "Reshape", "_o", INS(s, "const.shape_o"), NULL);
    eb_synth__fmt(sub, sizeof(sub), "%s/o_proj", scope);
    eb_synth__fmt(param, sizeof(param), "model.layers.%d.self_attn.o_proj", l);
    linear(L, out, s, sub, param, q_dim, c->hidden, 0);
}

/* silu(gate_proj(x)) * up_proj(x) -> down_proj, for layer `l`. */
static void mlp(struct llm *L, char *out, const char *x, int l)
{
    const struct eb_model_llm_config *c = L->c;
    char scope[NAME_MAX_], sub[NAME_MAX_], param[NAME_MAX_], g[NAME_MAX_], u[NAME_MAX_];
    char sg[NAME_MAX_];
    eb_synth__fmt(scope, sizeof(scope), "/model/layers.%d/mlp", l);
    eb_synth__fmt(sub, sizeof(sub), "%s/gate_proj", scope);
    eb_synth__fmt(param, sizeof(param), "model.layers.%d.mlp.gate_proj", l);
    linear(L, g, x, sub, param, c->hidden, c->intermediate, 0);
    op(L, sg, scope, "Sigmoid", "", INS(g), NULL);
    op(L, g, scope, "Mul", "_silu", INS(g, sg), NULL);
    eb_synth__fmt(sub, sizeof(sub), "%s/up_proj", scope);
    eb_synth__fmt(param, sizeof(param), "model.layers.%d.mlp.up_proj", l);
    linear(L, u, x, sub, param, c->hidden, c->intermediate, 0);
    op(L, g, scope, "Mul", "", INS(g, u), NULL);
    eb_synth__fmt(sub, sizeof(sub), "%s/down_proj", scope);
    eb_synth__fmt(param, sizeof(param), "model.layers.%d.mlp.down_proj", l);
    linear(L, out, g, sub, param, c->intermediate, c->hidden, 0);
}

/* A float32 scalar initializer (the mask arithmetic runs in float32 in every dtype). */
static void scalar_f32(struct llm *L, const char *name, float v)
{
    uint8_t raw[4];
    uint32_t u;
    const int64_t none = 0;
    memcpy(&u, &v, 4);
    for (int k = 0; k < 4; k++)
        raw[k] = (uint8_t)(u >> (8 * k));
    eb_synth__init_raw(&L->inits, name, ONNX_F32, &none, 0, raw, 4);
}

static void constants(struct llm *L)
{
    const struct eb_model_llm_config *c = L->c;
    const int64_t d = c->head_dim, g = c->heads / c->kv_heads;
    const int64_t split[2] = {d / 2, d / 2}, zero = 0, two = 2, axes12[2] = {1, 2};
    const int64_t shape_q[4] = {0, 0, c->heads, d}, shape_kv[4] = {0, 0, c->kv_heads, d};
    const int64_t shape_q5[5] = {0, 0, c->kv_heads, g, d}, shape_o[3] = {0, 0, c->heads * d};
    scalar(L, "const.rms_eps", c->rms_eps);
    scalar(L, "const.attn_scale", 1.0 / sqrt((double)d));
    scalar_f32(L, "const.mask_lo", 0.0f);
    scalar_f32(L, "const.mask_hi", 1.0f);
    /* The lowest finite value of the dtype, as transformers' finfo(dtype).min. */
    scalar_f32(L, "const.mask_lowest", L->dt == ONNX_F16 ? -65504.0f : -3.4028234663852886e38f);
    ints(L, "const.rotary_split", split, 2);
    ints(L, "const.zero", &zero, 1);
    ints(L, "const.axes_0", &zero, 1);
    ints(L, "const.axes_2", &two, 1);
    ints(L, "const.axes_12", axes12, 2);
    ints(L, "const.shape_q", shape_q, 4);
    ints(L, "const.shape_kv", shape_kv, 4);
    ints(L, "const.shape_q5", shape_q5, 5);
    ints(L, "const.shape_o", shape_o, 3);
}

static void build(struct llm *L)
{
    const struct eb_model_llm_config *c = L->c;
    const int64_t embed_dims[2] = {c->vocab, c->hidden}, t01[2] = {1, 0};
    char h[NAME_MAX_], n[NAME_MAX_], a[NAME_MAX_], scope[NAME_MAX_], w[NAME_MAX_];
    char gcos[NAME_MAX_];
    constants(L);
    rotary_tables(L);
    weight(L, "model.embed_tokens.weight", embed_dims, 2, FILL_NORMAL);
    op(L, h, "/model/embed_tokens", "Gather", "", INS("model.embed_tokens.weight", "input_ids"),
       NULL);
    for (int t = 0; t < 2; t++) { /* rotary/cos, rotary/sin: [batch, seq, 1, head_dim] */
        const char *table = t == 0 ? "rotary.cos" : "rotary.sin";
        const char *outs[1] = {t == 0 ? "rotary/cos" : "rotary/sin"};
        op(L, gcos, "/model/rotary", "Gather", t == 0 ? "_cos" : "_sin", INS(table, "position_ids"),
           NULL);
        eb_synth__node(&L->nodes, "Unsqueeze",
                       t == 0 ? "/model/rotary/Unsqueeze_cos" : "/model/rotary/Unsqueeze_sin",
                       INS(gcos, "const.axes_2"), outs, 1, NULL);
    }
    /* Each layer: h += attention(rms(h)), then h += mlp(rms(h)). */
    static const struct {
        const char *norm, *tag;
        void (*block)(struct llm *L, char *out, const char *x, int l);
    } blocks[2] = {{"input_layernorm", "_attn", attention},
                   {"post_attention_layernorm", "_mlp", mlp}};
    for (int l = 0; l < c->layers && !L->oom; l++)
        for (int b = 0; b < 2; b++) {
            eb_synth__fmt(scope, sizeof(scope), "/model/layers.%d/%s", l, blocks[b].norm);
            eb_synth__fmt(w, sizeof(w), "model.layers.%d.%s.weight", l, blocks[b].norm);
            rms_norm(L, n, h, scope, w);
            blocks[b].block(L, a, n, l);
            eb_synth__fmt(scope, sizeof(scope), "/model/layers.%d", l);
            op(L, h, scope, "Add", blocks[b].tag, INS(h, a), NULL);
        }
    rms_norm(L, n, h, "/model/norm", "model.norm.weight");
    /* Tied lm_head: the embedding matrix, transposed to [hidden, vocab]. */
    transpose(L, a, "/lm_head", "", "model.embed_tokens.weight", t01, 2);
    const char *outs[1] = {"logits"};
    eb_synth__node(&L->nodes, "MatMul", "/lm_head/MatMul", INS(n, a), outs, 1, NULL);
}

/* Graph inputs and outputs with the symbolic dimensions the common exports use. */
static void graph_io(const struct llm *L, struct eb_pb_buf *g)
{
    const struct eb_model_llm_config *c = L->c;
    const char *const ids[2] = {"batch", "sequence_length"};
    const char *const past[4] = {"batch", NULL, "past_sequence_length", NULL};
    const char *const present[4] = {"batch", NULL, "total_sequence_length", NULL};
    const char *const logits[3] = {"batch", "sequence_length", NULL};
    const int64_t kv[4] = {0, c->kv_heads, 0, c->head_dim}, lg[3] = {0, 0, c->vocab};
    char name[NAME_MAX_];
    eb_synth__value_info(g, 11, "input_ids", ONNX_I64, NULL, ids, 2);
    eb_synth__value_info(g, 11, "position_ids", ONNX_I64, NULL, ids, 2);
    for (int l = 0; l < c->layers; l++)
        for (int v = 0; v < 2; v++) {
            eb_synth__fmt(name, sizeof(name), "past_key_values.%d.%s", l, v ? "value" : "key");
            eb_synth__value_info(g, 11, name, L->dt, kv, past, 4);
        }
    eb_synth__value_info(g, 12, "logits", L->dt, lg, logits, 3);
    for (int l = 0; l < c->layers; l++)
        for (int v = 0; v < 2; v++) {
            eb_synth__fmt(name, sizeof(name), "present.%d.%s", l, v ? "value" : "key");
            eb_synth__value_info(g, 12, name, L->dt, kv, present, 4);
        }
}

/* opset_import and the edgebench.llm.* metadata (what `model info` reads back). */
static void model_tail(const struct llm *L, struct eb_pb_buf *m)
{
    const struct eb_model_llm_config *c = L->c;
    struct eb_pb_buf opset;
    char v[256], key[64];
    eb_pb_buf_init(&opset);
    eb_pb_put_str(&opset, 1, "");
    eb_pb_put_varint(&opset, 2, 17);
    eb_pb_put_msg(m, 8, &opset);
    eb_pb_buf_fini(&opset);
    eb_synth__fmt(v, sizeof(v), "%s-architecture decoder (%s) with synthetic weights",
                  c->arch == EB_MODEL_LLM_QWEN2 ? "Qwen2.5" : "Llama-3.2", c->size);
    eb_synth__meta(m, "description", v);
    eb_synth__meta(m, "author", "edgebench model synth");
    eb_synth__meta(m, "edgebench_synthetic", "1");
    eb_synth__meta(m, "edgebench.llm.arch", eb_model_llm_arch_name(c->arch));
    eb_synth__meta(m, "edgebench.llm.size", c->size);
    eb_synth__meta(m, "edgebench.llm.dtype", L->dt == ONNX_F16 ? "fp16" : "fp32");
    size_t n_fields;
    const struct eb_model_llm_field *f = eb_model_llm_fields(&n_fields);
    for (size_t i = 0; i < n_fields; i++) {
        eb_synth__fmt(key, sizeof(key), "edgebench.llm.%s", f[i].name);
        eb_synth__fmt(v, sizeof(v), "%d", eb_model_llm_field_get(c, &f[i]));
        eb_synth__meta(m, key, v);
    }
    eb_synth__fmt(v, sizeof(v), "%" PRIu32, L->o->seed);
    eb_synth__meta(m, "edgebench.llm.seed", v);
    eb_synth__fmt(v, sizeof(v), "%g", c->rope_theta);
    eb_synth__meta(m, "edgebench.llm.rope_theta", v);
    eb_synth__fmt(v, sizeof(v), "%g", c->rms_eps);
    eb_synth__meta(m, "edgebench.llm.rms_norm_eps", v);
    if (c->rope_llama3)
        eb_synth__fmt(v, sizeof(v),
                      "llama3 factor=%g low_freq_factor=%g high_freq_factor=%g "
                      "original_max_position_embeddings=%d",
                      c->rope_factor, c->rope_low_freq, c->rope_high_freq, c->rope_orig_ctx);
    else
        eb_synth__fmt(v, sizeof(v), "none");
    eb_synth__meta(m, "edgebench.llm.rope_scaling", v);
    eb_synth__meta(m, "edgebench.llm.external_data", L->data_base ? L->data_base : "");
}

/* Writes the ModelProto: header, the graph (nodes, initializers, io) and the tail. */
static int write_model(FILE *fp, const struct llm *L)
{
    struct eb_pb_buf head, pre, io, tail, tag;
    int ok;
    eb_pb_buf_init(&head);
    eb_pb_buf_init(&pre);
    eb_pb_buf_init(&io);
    eb_pb_buf_init(&tail);
    eb_pb_buf_init(&tag);
    eb_pb_put_varint(&head, 1, 8); /* ir_version 8 goes with opset 17 */
    eb_pb_put_str(&head, 2, "edgebench");
    eb_pb_put_str(&head, 3, "1.0");
    eb_pb_put_raw(&pre, L->nodes.data, L->nodes.len);
    eb_pb_put_str(&pre, 2, "main_graph");
    graph_io(L, &io);
    model_tail(L, &tail);
    eb_pb_put_uvarint(&tag, (7u << 3) | EB_PB_WIRE_LEN);
    eb_pb_put_uvarint(&tag, (uint64_t)(pre.len + L->inits.len + io.len));
    ok = !eb_pb_buf_error(&head) && !eb_pb_buf_error(&pre) && !eb_pb_buf_error(&io) &&
         !eb_pb_buf_error(&tail) && !eb_pb_buf_error(&tag);
    const struct eb_pb_buf *parts[6] = {&head, &tag, &pre, &L->inits, &io, &tail};
    for (int i = 0; i < 6 && ok; i++)
        ok = parts[i]->len == 0 || fwrite(parts[i]->data, 1, parts[i]->len, fp) == parts[i]->len;
    eb_pb_buf_fini(&head);
    eb_pb_buf_fini(&pre);
    eb_pb_buf_fini(&io);
    eb_pb_buf_fini(&tail);
    eb_pb_buf_fini(&tag);
    return ok ? 0 : -1;
}

enum eb_status eb_model_llm_synth_file(const struct eb_model_llm_options *o, const char *path,
                                       int *external_out, struct eb_diag *diag)
{
    struct llm L;
    char *data_path = NULL;
    FILE *fp = NULL;
    int opened = 0; /* `path` is ours to remove on failure once we created it */
    enum eb_status st = EB_ERR_NOMEM;
    memset(&L, 0, sizeof(L));
    L.o = o;
    L.c = &o->cfg;
    L.dt = o->fp16 ? ONNX_F16 : ONNX_F32;
    L.rng = ((uint64_t)o->seed + 1) * UINT64_C(0x9E3779B97F4A7C15) ^ UINT64_C(0x2545F4914F6CDD1D);
    eb_pb_buf_init(&L.nodes);
    eb_pb_buf_init(&L.inits);
    const uint64_t weight_bytes = eb_model_llm_params(L.c) * (o->fp16 ? 2u : 4u);
    if (weight_bytes > (o->external_bytes ? o->external_bytes : EB_MODEL_LLM_EXTERNAL_BYTES)) {
        const size_t n = strlen(path) + 6;
        data_path = malloc(n);
        if (data_path == NULL)
            goto nomem;
        snprintf(data_path, n, "%s.data", path);
        L.data = fopen(data_path, "wb");
        if (L.data == NULL) {
            st = eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s; check the folder",
                              data_path, strerror(errno));
            goto fail;
        }
        L.data_path = data_path;
        L.data_base = eb_path_base(data_path);
    }
    build(&L);
    if (L.oom || eb_pb_buf_error(&L.nodes) || eb_pb_buf_error(&L.inits))
        goto nomem;
    if (L.data != NULL) {
        FILE *d = L.data;
        L.data = NULL;
        if ((st = eb_file_close_after(d, L.io_errno, data_path, diag)) != EB_OK)
            goto fail;
    }
    fp = fopen(path, "wb");
    if (fp == NULL) {
        st = eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s; check the folder", path,
                          strerror(errno));
        goto fail;
    }
    opened = 1;
    const int werr = write_model(fp, &L) != 0 ? (errno ? errno : EIO) : 0;
    st = eb_file_close_after(fp, werr, path, diag);
    fp = NULL;
    if (st != EB_OK)
        goto fail;
    if (external_out != NULL)
        *external_out = data_path != NULL;
    goto done;
nomem:
    st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to synthesize %s: out of memory; free memory",
                      path);
fail:
    if (L.data != NULL)
        fclose(L.data);
    if (fp != NULL)
        fclose(fp);
    if (data_path != NULL)
        remove(data_path);
    if (opened)
        remove(path);
done:
    eb_pb_buf_fini(&L.nodes);
    eb_pb_buf_fini(&L.inits);
    free(L.f);
    free(L.raw);
    free(data_path);
    return st;
}
