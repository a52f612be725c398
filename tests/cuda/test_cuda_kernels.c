/*
 * Every CUDA kernel (src/engine/cuda/kernels.h) against the CPU reference kernel of its op, in
 * float and in half, on random shapes and edge cases (one element, broadcast corners, negative
 * slice steps, padded and dilated pools, long and short softmax rows, rounding ties, NaN), and
 * the int8 conv against the CPU's integer reference bit for bit.
 * Float must match to a few ulps (the references run the same float formulas; exp/tanh differ
 * by ulps between libm and CUDA); half within its 11-bit mantissa. Skips (77) without a GPU.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/engine.h"
#include "eb_test.h"
#include "engine/cpu/epilogue.h"
#include "engine/cpu/ref/ref.h"
#include "engine/cuda/cuda_internal.h"
#include "engine/cuda/kernels.h"
#include "engine/ops/qconv.h"
#include "yolo/yolo.h"

static void need_gpu(void)
{
    char why[256];
    if (!eb_engine_cuda_available(why, sizeof(why)))
        EB_SKIP("%s", why);
}

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t ce_ = (call);                                                                  \
        if (ce_ != cudaSuccess)                                                                    \
            EB_FAIL("%s: %s", #call, cudaGetErrorString(ce_));                                     \
    } while (0)

static uint32_t rng = 1u;
static float frand(float lo, float hi)
{
    rng = rng * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)(rng >> 8) / 16777216.0f;
}
static float *rand_buf(size_t n, float lo, float hi)
{
    float *p = malloc((n > 0 ? n : 1) * sizeof(float));
    ASSERT_TRUE(p != NULL);
    for (size_t i = 0; i < n; i++)
        p[i] = frand(lo, hi);
    return p;
}

/* Device copy of n floats in precision dt. */
static void *up(enum eb_cuk_dt dt, const float *h, size_t n)
{
    void *f32 = NULL, *d = NULL;
    CK(cudaMalloc(&f32, (n > 0 ? n : 1) * 4));
    CK(cudaMemcpy(f32, h, n * 4, cudaMemcpyHostToDevice));
    if (dt == EB_CUK_F32)
        return f32;
    CK(cudaMalloc(&d, (n > 0 ? n : 1) * 2));
    CK(eb_cuk_cast(0, EB_CUK_F32, EB_CUK_F16, (int64_t)n, f32, d));
    CK(cudaFree(f32));
    return d;
}
static void *dalloc(size_t bytes)
{
    void *d = NULL;
    CK(cudaMalloc(&d, bytes > 0 ? bytes : 1));
    CK(cudaMemset(d, 0, bytes > 0 ? bytes : 1));
    return d;
}
/* n floats back from a device buffer in precision dt (frees it). */
static float *down(enum eb_cuk_dt dt, void *d, size_t n)
{
    float *h = malloc((n > 0 ? n : 1) * 4);
    void *f32 = d;
    if (dt == EB_CUK_F16) {
        f32 = dalloc(n * 4);
        CK(eb_cuk_cast(0, EB_CUK_F16, EB_CUK_F32, (int64_t)n, d, f32));
    }
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h, f32, n * 4, cudaMemcpyDeviceToHost));
    if (f32 != d)
        CK(cudaFree(f32));
    CK(cudaFree(d));
    return h;
}

/* float: a few ulps (abs 1e-6 near 0); half: 11 bits through a few ops. */
static void expect_close(const char *what, enum eb_cuk_dt dt, const float *got, const float *want,
                         size_t n)
{
    const double rel = dt == EB_CUK_F32 ? 2e-6 : 8e-3, abs_tol = dt == EB_CUK_F32 ? 1e-6 : 4e-3;
    for (size_t i = 0; i < n; i++) {
        const double a = got[i], b = want[i];
        if (a != a && b != b)
            continue;
        if (isinf(b) && a == b)
            continue;
        if (!(fabs(a - b) <= abs_tol + rel * fabs(b)))
            EB_FAIL("%s (%s) at %zu: %.9g vs reference %.9g", what,
                    dt == EB_CUK_F32 ? "f32" : "f16", i, a, b);
    }
}

static const enum eb_cuk_dt DTS[2] = {EB_CUK_F32, EB_CUK_F16};

EB_TEST(epilogue_every_activation)
{
    need_gpu();
    const int64_t shapes[3][3] = {{2, 7, 33}, {1, 1, 1}, {1, 64, 400}};
    for (int sh = 0; sh < 3; sh++)
        for (int act = EB_ACT_NONE; act <= EB_ACT_TANH; act++)
            for (int var = 0; var < 3; var++) /* 0 plain, 1 bias+residual, 2 + fake quant */
                for (int t = 0; t < 2; t++) {
                    const int64_t b = shapes[sh][0], c = shapes[sh][1], p = shapes[sh][2];
                    const size_t n = (size_t)(b * c * p);
                    float *y = rand_buf(n, -6, 6), *r = rand_buf(n, -2, 2);
                    float *bias = rand_buf((size_t)c, -1, 1);
                    struct eb_epilogue e = {.act = act, .alpha = 0.1f, .beta = 0.6f};
                    if (act == EB_ACT_CLIP)
                        e.alpha = -1.5f, e.beta = 2.5f;
                    e.residual = var >= 1;
                    if (var == 2) {
                        e.fake_quant = 1;
                        e.fq_scale = 0.05f, e.fq_zp = 3, e.fq_qmin = 0, e.fq_qmax = 255;
                    }
                    float *want = malloc(n * 4);
                    for (size_t i = 0; i < n; i++)
                        want[i] = y[i] + (var >= 1 ? bias[(i / (size_t)p) % (size_t)c] : 0.0f);
                    eb_cpu_epilogue_f32__ref(&e, n, r, want);
                    void *dy = up(DTS[t], y, n), *dr = up(DTS[t], r, n);
                    float *dbias = up(EB_CUK_F32, bias, (size_t)c);
                    const struct eb_cuk_epilogue ke = {act,        e.alpha, e.beta,    e.fake_quant,
                                                       e.fq_scale, e.fq_zp, e.fq_qmin, e.fq_qmax};
                    CK(eb_cuk_epilogue(0, DTS[t], b, c, p, var >= 1 ? dbias : NULL,
                                       var >= 1 ? dr : NULL, &ke, dy));
                    float *got = down(DTS[t], dy, n);
                    if (var == 2 && DTS[t] == EB_CUK_F16) {
                        /* half inputs move values across quantisation ties: a step at most */
                        for (size_t i = 0; i < n; i++)
                            ASSERT_TRUE(fabs(got[i] - want[i]) <= 0.05 + 1e-2 * fabs(want[i]));
                    } else {
                        expect_close("epilogue", DTS[t], got, want, n);
                    }
                    CK(cudaFree(dr));
                    CK(cudaFree(dbias));
                    free(y), free(r), free(bias), free(want), free(got);
                }
}

EB_TEST(unary_and_sigmoid)
{
    need_gpu();
    const int ops[9] = {EB_UNOP_RELU,         EB_UNOP_LEAKY_RELU, EB_UNOP_CLIP,
                        EB_UNOP_HARD_SIGMOID, EB_UNOP_HARD_SWISH, EB_UNOP_EXP,
                        EB_UNOP_SQRT,         EB_UNOP_TANH,       EB_CUK_UNARY_SIGMOID};
    const size_t ns[3] = {1, 1000, 70001};
    for (int o = 0; o < 9; o++)
        for (int k = 0; k < 3; k++)
            for (int t = 0; t < 2; t++) {
                const size_t n = ns[k];
                float *x = rand_buf(n, ops[o] == EB_UNOP_SQRT ? 0.0f : -8.0f, 8.0f);
                float *want = malloc(n * 4);
                if (ops[o] == EB_CUK_UNARY_SIGMOID)
                    eb_cpu_sigmoid_f32__ref((int64_t)n, x, want);
                else
                    eb_cpu_unary_f32__ref((enum eb_unop)ops[o], (int64_t)n, x, 0.2f, 0.5f, want);
                void *dx = up(DTS[t], x, n);
                void *dy = dalloc(n * 4);
                CK(eb_cuk_unary(0, DTS[t], ops[o], (int64_t)n, 0.2f, 0.5f, dx, dy));
                float *got = down(DTS[t], dy, n);
                expect_close("unary", DTS[t], got, want, n);
                CK(cudaFree(dx));
                free(x), free(want), free(got);
            }
}

/* Decode attention (qwen2 0.5b's heads: 14 query heads on 2 kv heads of 64 dims) against a
 * double reference: one key, short and long caches, a masked run of keys, causal rows. */
EB_TEST(attn_rows_matches_reference)
{
    need_gpu();
    const int64_t heads = 14, group = 7, kvh = 2, d = 64;
    const int64_t lens[4] = {1, 37, 300, 1000}, rows_of[2] = {1, 3};
    for (int li = 0; li < 4; li++)
        for (int ri = 0; ri < 2; ri++)
            for (int t = 0; t < 2; t++) {
                const int64_t len = lens[li], rows = rows_of[ri];
                const size_t nq = (size_t)(rows * heads * d), nk = (size_t)(kvh * len * d);
                const size_t nm = (size_t)(rows * len);
                float *q = rand_buf(nq, -1.0f, 1.0f), *k = rand_buf(nk, -1.0f, 1.0f);
                float *v = rand_buf(nk, -1.0f, 1.0f), *m = malloc(nm * 4), *want = malloc(nq * 4);
                const float scale = 0.125f;
                for (int64_t r = 0; r < rows; r++)
                    for (int64_t j = 0; j < len; j++) {
                        const int hidden = (len >= 300 && j >= 64 && j < 160) ||
                                           (len >= rows && j > len - rows + r);
                        m[r * len + j] = hidden ? -INFINITY : 0.0f;
                    }
                double *sc = malloc((size_t)len * sizeof(double));
                for (int64_t r = 0; r < rows; r++)
                    for (int64_t h = 0; h < heads; h++) {
                        const float *qr = q + (r * heads + h) * d;
                        const int64_t kh = h / group;
                        double mx = -INFINITY, sum = 0.0;
                        for (int64_t j = 0; j < len; j++) {
                            double a = 0.0;
                            for (int64_t i = 0; i < d; i++)
                                a += (double)qr[i] * k[(kh * len + j) * d + i];
                            sc[j] = a * scale + m[r * len + j];
                            mx = sc[j] > mx ? sc[j] : mx;
                        }
                        for (int64_t j = 0; j < len; j++)
                            sum += sc[j] = exp(sc[j] - mx);
                        for (int64_t i = 0; i < d; i++) {
                            double a = 0.0;
                            for (int64_t j = 0; j < len; j++)
                                a += sc[j] * v[(kh * len + j) * d + i];
                            want[(r * heads + h) * d + i] = (float)(a / sum);
                        }
                    }
                void *dq = up(DTS[t], q, nq), *dk = up(DTS[t], k, nk), *dv = up(DTS[t], v, nk);
                void *dm = up(DTS[t], m, nm);
                void *dy = dalloc(nq * 4);
                CK(eb_cuk_attn_rows(0, DTS[t], rows, heads, group, d, len, scale, dq, dk, dv, dm,
                                    dy));
                float *got = down(DTS[t], dy, nq);
                expect_close("attention", DTS[t], got, want, nq);
                CK(cudaFree(dq));
                CK(cudaFree(dk));
                CK(cudaFree(dv));
                CK(cudaFree(dm));
                free(got), free(q), free(k), free(v), free(m), free(want), free(sc);
            }
}

/* SwiGLU, bit for bit the three kernels it replaces (Sigmoid, Mul, Mul), in both precisions */
EB_TEST(swiglu_matches_its_three_nodes)
{
    need_gpu();
    const size_t ns[3] = {1, 4864, 70001};
    for (int k = 0; k < 3; k++)
        for (int t = 0; t < 2; t++) {
            const size_t n = ns[k];
            float *g = rand_buf(n, -12.0f, 12.0f), *u = rand_buf(n, -4.0f, 4.0f);
            void *dg = up(DTS[t], g, n), *du = up(DTS[t], u, n);
            void *ds = dalloc(n * 4), *dt = dalloc(n * 4), *dy = dalloc(n * 4);
            void *dz = dalloc(n * 4);
            const struct eb_cuk_nd nd = {.rank = 1, .shape = {(int32_t)n}, .sa = {1}, .sb = {1}};
            CK(eb_cuk_unary(0, DTS[t], EB_CUK_UNARY_SIGMOID, (int64_t)n, 0.0f, 0.0f, dg, ds));
            CK(eb_cuk_binary(0, DTS[t], EB_BINOP_MUL, &nd, dg, ds, dt));
            CK(eb_cuk_binary(0, DTS[t], EB_BINOP_MUL, &nd, dt, du, dy));
            CK(eb_cuk_swiglu(0, DTS[t], (int64_t)n, dg, du, dz));
            float *want = down(DTS[t], dy, n), *got = down(DTS[t], dz, n);
            for (size_t i = 0; i < n; i++)
                if (memcmp(&got[i], &want[i], sizeof(float)) != 0)
                    EB_FAIL("swiglu %s n %zu at %zu: %.9g, the three nodes %.9g",
                            t ? "fp16" : "fp32", n, i, (double)got[i], (double)want[i]);
            CK(cudaFree(dg));
            CK(cudaFree(du));
            CK(cudaFree(ds));
            CK(cudaFree(dt));
            free(g), free(u), free(want), free(got);
        }
}

/* n values of the form i / 64 in [-2, 2]: exact in half, so both precisions see the same inputs */
static float *grid_buf(size_t n)
{
    float *p = malloc((n > 0 ? n : 1) * sizeof(float));
    ASSERT_TRUE(p != NULL);
    for (size_t i = 0; i < n; i++)
        p[i] = (float)((int)frand(-128.0f, 128.0f)) / 64.0f;
    return p;
}

/* One row by a weight (a decode step's projections), with and without the added vector, on the
 * shapes of a 0.5b decoder's layers and on edge shapes (one row of w, fewer columns than a warp
 * reads, rows not a multiple of the unrolled stride), against a double-precision sum: within the
 * float accumulation's error (and half's rounding of the result); the launch shape eb_cuk_gemv
 * picks, and every width with several splits (eb_cuk_gemv_shaped, what bench_gemv sweeps). */
EB_TEST(gemv_matches_reference)
{
    need_gpu();
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int64_t shapes[8][2] = {{896, 896}, {896, 128}, {4864, 896}, {896, 4864},
                                  {1, 16},    {37, 8},    {1029, 40},  {896, 65544}};
    void *ws = dalloc(EB_CUK_GEMV_WS_BYTES);
    for (int sh = 0; sh < 8; sh++)
        for (int t = 0; t < 2; t++)
            for (int v = 0; v < 4 * 6; v++) {
                /* with_c bit 1: rows split over blocks; how 0: the picked shape, else tx =
                 * 2 << (how - 1) and some splits (the most the shape and workspace allow) */
                const int with_c = v % 4, how = v / 4;
                const int64_t k = shapes[sh][0], n = shapes[sh][1];
                if (how > 0 && n > 8192) /* the sweep on the smaller shapes */
                    continue;
                int64_t splits = with_c & 2 ? 1 + (how * 5) % 16 : 1;
                splits = splits < k ? splits : k;
                splits = splits * n <= EB_CUK_GEMV_WS_FLOATS ? splits : EB_CUK_GEMV_WS_FLOATS / n;
                ASSERT_TRUE(eb_cuk_gemv_takes(DTS[t], k, n, (const void *)(uintptr_t)256));
                float *a = grid_buf((size_t)k), *w = grid_buf((size_t)(k * n));
                float *c = grid_buf((size_t)n);
                void *da = up(DTS[t], a, (size_t)k), *dw = up(DTS[t], w, (size_t)(k * n));
                void *dc = up(DTS[t], c, (size_t)n), *dy = dalloc((size_t)n * 4);
                const struct eb_cuk_gemv_part part = {dw, with_c & 1 ? dc : NULL, dy, n};
                if (how == 0)
                    CK(eb_cuk_gemv(0, DTS[t], k, sms, NULL, da, 1, &part, with_c & 2 ? ws : NULL));
                else
                    CK(eb_cuk_gemv_shaped(0, DTS[t], k, 2 << (how - 1), (int)splits, NULL, da, 1,
                                          &part, with_c & 2 ? ws : NULL));
                float *got = down(DTS[t], dy, (size_t)n);
                for (int64_t j = 0; j < n; j++) {
                    double want = with_c & 1 ? c[j] : 0.0, mag = fabs(want);
                    for (int64_t i = 0; i < k; i++) {
                        want += (double)a[i] * w[i * n + j];
                        mag += fabs((double)a[i] * w[i * n + j]);
                    }
                    const double tol = 1e-5 * mag + (t ? 1e-3 * fabs(want) : 0.0) + 1e-6;
                    if (!(fabs(got[j] - want) <= tol))
                        EB_FAIL("gemv %s %lld x %lld%s%s (shape %d) at column %lld: %.9g, "
                                "reference %.9g",
                                t ? "fp16" : "fp32", (long long)k, (long long)n,
                                with_c & 1 ? " + c" : "", with_c & 2 ? " (split)" : "", how,
                                (long long)j, (double)got[j], want);
                }
                CK(cudaFree(da));
                CK(cudaFree(dw));
                CK(cudaFree(dc));
                free(a), free(w), free(c), free(got);
            }
    /* the split launches left their tiles' counters at zero for the next */
    unsigned *count = malloc(EB_CUK_GEMV_WS_COUNTS * sizeof(unsigned));
    CK(cudaMemcpy(count, (float *)ws + EB_CUK_GEMV_WS_FLOATS,
                  EB_CUK_GEMV_WS_COUNTS * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int i = 0; i < EB_CUK_GEMV_WS_COUNTS; i++)
        if (count[i] != 0)
            EB_FAIL("gemv workspace counter %d left at %u", i, count[i]);
    free(count);
    CK(cudaFree(ws));
    /* what it refuses: columns not whole 16-byte vectors, a misaligned weight */
    ASSERT_TRUE(!eb_cuk_gemv_takes(EB_CUK_F16, 896, 12, (const void *)(uintptr_t)256));
    ASSERT_TRUE(!eb_cuk_gemv_takes(EB_CUK_F32, 896, 6, (const void *)(uintptr_t)256));
    ASSERT_TRUE(!eb_cuk_gemv_takes(EB_CUK_F16, 896, 896, (const void *)(uintptr_t)258));
    /* shapes eb_cuk_gemv_shaped refuses: a width not a power of two, splits without the
     * workspace, more splits than rows */
    const struct eb_cuk_gemv_part p1 = {NULL, NULL, NULL, 896};
    ASSERT_TRUE(eb_cuk_gemv_shaped(0, EB_CUK_F16, 896, 3, 1, NULL, NULL, 1, &p1, NULL) ==
                cudaErrorInvalidValue);
    ASSERT_TRUE(eb_cuk_gemv_shaped(0, EB_CUK_F16, 896, 8, 2, NULL, NULL, 1, &p1, NULL) ==
                cudaErrorInvalidValue);
    ASSERT_TRUE(eb_cuk_gemv_shaped(0, EB_CUK_F16, 4, 8, 5, NULL, NULL, 1, &p1, (void *)&sms) ==
                cudaErrorInvalidValue);
}

/* n device values back as raw bytes (2 or 4 each), to compare bit for bit */
static unsigned char *raw_down(enum eb_cuk_dt dt, const void *d, size_t n)
{
    const size_t bytes = n * (size_t)eb_cuk_dt_size(dt);
    unsigned char *h = malloc(bytes > 0 ? bytes : 1);
    ASSERT_TRUE(h != NULL);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
    return h;
}

/* A decode step's q, k and v (with biases) and gate and up as one launch, against one launch per
 * weight (within the float sum's order: the split of the rows over a block follows the launch's
 * width), and the launch making its row by RMSNorm or SwiGLU itself against the same launch
 * after the RMSNorm or SwiGLU kernel: the same bits. */
EB_TEST(gemv_group_and_row_match_separate_launches)
{
    need_gpu();
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int64_t k = 896, groups[2][4] = {{896, 128, 128, 0}, {4864, 4864, 0, 0}};
    void *ws = dalloc(EB_CUK_GEMV_WS_BYTES);
    static const char *const FROM[3] = {"as it is", "made by RMSNorm", "made by SwiGLU"};
    for (int gi = 0; gi < 2; gi++)
        for (int t = 0; t < 2; t++)
            for (int from = EB_CUK_ROW; from <= EB_CUK_ROW_SWIGLU; from++) {
                const enum eb_cuk_dt dt = DTS[t];
                const size_t es = (size_t)eb_cuk_dt_size(dt);
                float *x = rand_buf((size_t)k, -3.0f, 3.0f), *xw = rand_buf((size_t)k, 0.5f, 1.5f);
                void *dx = up(dt, x, (size_t)k), *dxw = up(dt, xw, (size_t)k);
                void *drow = dalloc((size_t)k * 4);
                if (from == EB_CUK_ROW_RMSNORM)
                    CK(eb_cuk_rms_norm(0, dt, 1, k, 1e-6f, dx, dxw, drow));
                else if (from == EB_CUK_ROW_SWIGLU)
                    CK(eb_cuk_swiglu(0, dt, k, dx, dxw, drow));
                else
                    CK(cudaMemcpy(drow, dx, (size_t)k * es, cudaMemcpyDeviceToDevice));
                struct eb_cuk_gemv_part one[4], all[4], made[4];
                int parts = 0;
                for (; parts < 4 && groups[gi][parts] > 0; parts++) {
                    const int64_t n = groups[gi][parts];
                    float *w = rand_buf((size_t)(k * n), -0.1f, 0.1f);
                    float *c = rand_buf((size_t)n, -1, 1);
                    one[parts] = (struct eb_cuk_gemv_part){up(dt, w, (size_t)(k * n)),
                                                           gi == 0 ? up(dt, c, (size_t)n) : NULL,
                                                           dalloc((size_t)n * 4), n};
                    all[parts] = made[parts] = one[parts];
                    all[parts].y = dalloc((size_t)n * 4);
                    made[parts].y = dalloc((size_t)n * 4);
                    CK(eb_cuk_gemv(0, dt, k, sms, NULL, drow, 1, &one[parts], ws));
                    free(w), free(c);
                }
                const struct eb_cuk_gemv_row row = {(enum eb_cuk_gemv_from)from, dx, dxw, 1e-6f};
                CK(eb_cuk_gemv(0, dt, k, sms, NULL, drow, parts, all, ws));
                CK(eb_cuk_gemv(0, dt, k, sms, &row, drow, parts, made, ws));
                for (int p = 0; p < parts; p++) {
                    const size_t n = (size_t)one[p].n;
                    unsigned char *want = raw_down(dt, all[p].y, n);
                    unsigned char *got = raw_down(dt, made[p].y, n);
                    if (memcmp(want, got, n * es) != 0)
                        EB_FAIL("gemv %s, %d weights: weight %d with the row %s differs from the "
                                "launch after that kernel",
                                t ? "fp16" : "fp32", parts, p, FROM[from]);
                    free(want), free(got);
                    float *alone = down(dt, one[p].y, n), *grouped = down(dt, all[p].y, n);
                    double top = 0.0;
                    for (size_t j = 0; j < n; j++)
                        top = fmax(top, fabs(alone[j]));
                    for (size_t j = 0; j < n; j++)
                        if (!(fabs(grouped[j] - alone[j]) <=
                              1e-5 * top + (t ? 1e-3 * fabs(alone[j]) : 0.0)))
                            EB_FAIL("gemv %s, %d weights: weight %d column %zu %.9g, alone %.9g",
                                    t ? "fp16" : "fp32", parts, p, j, (double)grouped[j],
                                    (double)alone[j]);
                    free(alone), free(grouped);
                    CK(cudaFree((void *)one[p].w));
                    if (one[p].c != NULL)
                        CK(cudaFree((void *)one[p].c));
                    CK(cudaFree(made[p].y));
                }
                CK(cudaFree(dx));
                CK(cudaFree(dxw));
                CK(cudaFree(drow));
                free(x), free(xw);
            }
    CK(cudaFree(ws));
}

static int64_t numel(int rank, const int64_t *s)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= s[d];
    return n;
}

/* The broadcast strides of 4-D a and b (shapes padded to y's rank) over y. */
static struct eb_cuk_nd nd4(const int64_t *a, const int64_t *b, const int64_t *y)
{
    struct eb_cuk_nd nd = {.rank = 4};
    int64_t sa = 1, sb = 1;
    for (int d = 3; d >= 0; d--) {
        nd.shape[d] = (int32_t)y[d];
        nd.sa[d] = a[d] == 1 ? 0 : (int32_t)sa;
        nd.sb[d] = b[d] == 1 ? 0 : (int32_t)sb;
        sa *= a[d];
        sb *= b[d];
    }
    return nd;
}

EB_TEST(binary_broadcast)
{
    need_gpu();
    /* (a, b) shapes, already padded to the output rank */
    const int64_t cases[5][2][4] = {
        {{2, 3, 4, 5}, {2, 3, 4, 5}}, {{2, 3, 4, 5}, {1, 1, 1, 1}},    {{2, 3, 1, 5}, {1, 3, 4, 1}},
        {{1, 1, 1, 1}, {2, 1, 4, 5}}, {{1, 2, 8400, 1}, {1, 1, 1, 1}},
    };
    for (int c = 0; c < 5; c++)
        for (int op = EB_BINOP_ADD; op <= EB_BINOP_POW; op++)
            for (int t = 0; t < 2; t++) {
                int64_t ys[4];
                for (int d = 0; d < 4; d++)
                    ys[d] = cases[c][0][d] > cases[c][1][d] ? cases[c][0][d] : cases[c][1][d];
                const size_t na = (size_t)numel(4, cases[c][0]), nb = (size_t)numel(4, cases[c][1]);
                const size_t ny = (size_t)numel(4, ys);
                float *a = rand_buf(na, op == EB_BINOP_POW ? 0.1f : -3.0f, 3.0f);
                float *b = rand_buf(nb, 0.5f, 2.0f); /* no division by ~0 */
                float *want = malloc(ny * 4);
                eb_cpu_binary__ref((enum eb_binop)op, EB_DTYPE_F32, 4, cases[c][0], a, cases[c][1],
                                   b, ys, want);
                const struct eb_cuk_nd nd = nd4(cases[c][0], cases[c][1], ys);
                void *da = up(DTS[t], a, na), *db = up(DTS[t], b, nb), *dy = dalloc(ny * 4);
                CK(eb_cuk_binary(0, DTS[t], op, &nd, da, db, dy));
                float *got = down(DTS[t], dy, ny);
                expect_close("binary", DTS[t], got, want, ny);
                CK(cudaFree(da));
                CK(cudaFree(db));
                free(a), free(b), free(want), free(got);
            }
}

/*
 * Integer Add, Sub, Mul and Div (int64 and int32) with broadcasting against the CPU reference,
 * bit for bit: negative operands, division by zero (0), truncation toward zero, the wrap of
 * overflowing sums and products; Pow refused.
 */
EB_TEST(binary_int_matches_reference)
{
    need_gpu();
    const int64_t cases[3][2][4] = {
        {{2, 3, 4, 5}, {2, 3, 4, 5}}, {{1, 1, 1, 7}, {1, 1, 5, 1}}, {{2, 3, 1, 5}, {1, 1, 1, 1}}};
    const int64_t edge[8] = {0, -1, 1, -7, 7, -40, 40, 3}; /* no result overflows */
    for (int c = 0; c < 3; c++)
        for (int op = EB_BINOP_ADD; op <= EB_BINOP_DIV; op++)
            for (int w = 0; w < 2; w++) { /* int64, int32 */
                const enum eb_dtype dt = w == 0 ? EB_DTYPE_I64 : EB_DTYPE_I32;
                const size_t es = w == 0 ? 8 : 4;
                int64_t ys[4];
                for (int d = 0; d < 4; d++)
                    ys[d] = cases[c][0][d] > cases[c][1][d] ? cases[c][0][d] : cases[c][1][d];
                const size_t na = (size_t)numel(4, cases[c][0]), nb = (size_t)numel(4, cases[c][1]);
                const size_t ny = (size_t)numel(4, ys);
                unsigned char *a = malloc(na * es), *b = malloc(nb * es), *want = malloc(ny * es);
                ASSERT_TRUE(a != NULL && b != NULL && want != NULL);
                for (size_t i = 0; i < na + nb; i++) { /* edge values, then small ones */
                    const int64_t v =
                        i % 3 == 0 ? edge[(i / 3) % 8] : (int64_t)(i * 7919 % 41) - 20;
                    const int32_t v32 = (int32_t)v;
                    unsigned char *at = i < na ? a + i * es : b + (i - na) * es;
                    memcpy(at, w == 0 ? (const void *)&v : (const void *)&v32, es);
                }
                /* the CPU reference (in C, where overflow is undefined: the wrap is checked on
                 * its own below) */
                eb_cpu_binary__ref((enum eb_binop)op, dt, 4, cases[c][0], a, cases[c][1], b, ys,
                                   want);
                const struct eb_cuk_nd nd = nd4(cases[c][0], cases[c][1], ys);
                void *da = dalloc(na * es), *db = dalloc(nb * es), *dy = dalloc(ny * es);
                CK(cudaMemcpy(da, a, na * es, cudaMemcpyHostToDevice));
                CK(cudaMemcpy(db, b, nb * es, cudaMemcpyHostToDevice));
                CK(eb_cuk_binary_int(0, w == 0, op, &nd, da, db, dy));
                unsigned char *got = malloc(ny * es);
                ASSERT_TRUE(got != NULL);
                CK(cudaMemcpy(got, dy, ny * es, cudaMemcpyDeviceToHost));
                ASSERT_TRUE(memcmp(got, want, ny * es) == 0);
                CK(cudaFree(da));
                CK(cudaFree(db));
                CK(cudaFree(dy));
                free(a), free(b), free(want), free(got);
            }
    /* wrapping: INT64_MAX + 1, INT64_MIN - 1, INT64_MAX * 2, INT64_MIN / -1 */
    const int64_t wa[4] = {INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN}, wb[4] = {1, 1, 2, -1};
    const int wop[4] = {EB_BINOP_ADD, EB_BINOP_SUB, EB_BINOP_MUL, EB_BINOP_DIV};
    const int64_t wwant[4] = {INT64_MIN, INT64_MAX, -2, INT64_MIN};
    for (int i = 0; i < 4; i++) {
        struct eb_cuk_nd nd = {.rank = 1, .shape = {1}, .sa = {1}, .sb = {1}};
        void *da = dalloc(8), *db = dalloc(8), *dy = dalloc(8);
        CK(cudaMemcpy(da, &wa[i], 8, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(db, &wb[i], 8, cudaMemcpyHostToDevice));
        CK(eb_cuk_binary_int(0, 1, wop[i], &nd, da, db, dy));
        int64_t got = 0;
        CK(cudaMemcpy(&got, dy, 8, cudaMemcpyDeviceToHost));
        ASSERT_TRUE(got == wwant[i]);
        CK(cudaFree(da));
        CK(cudaFree(db));
        CK(cudaFree(dy));
    }
    struct eb_cuk_nd one = {.rank = 1, .shape = {1}, .sa = {1}, .sb = {1}};
    ASSERT_TRUE(eb_cuk_binary_int(0, 1, EB_BINOP_POW, &one, NULL, NULL, NULL) ==
                cudaErrorInvalidValue);
}

/* Slice (negative steps too) and Transpose as strided copies, element sizes 1, 2, 4, 8. */
EB_TEST(copy_nd_slice_transpose)
{
    need_gpu();
    const size_t sizes[4] = {1, 2, 4, 8};
    const int64_t xs[4] = {2, 5, 7, 3};
    const size_t nx = (size_t)numel(4, xs);
    for (int z = 0; z < 4; z++) {
        const size_t es = sizes[z];
        uint8_t *x = malloc(nx * es);
        for (size_t i = 0; i < nx * es; i++)
            x[i] = (uint8_t)(i * 37u + 11u);
        void *dx = dalloc(nx * es);
        CK(cudaMemcpy(dx, x, nx * es, cudaMemcpyHostToDevice));
        int64_t st[4] = {35 * 3, 21, 3, 1};
        /* slice: start/step per dim, some negative */
        const int64_t start[4] = {1, 4, 0, 2}, step[4] = {1, -2, 3, -1}, ys[4] = {1, 3, 3, 3};
        const size_t ny = (size_t)numel(4, ys);
        uint8_t *want = malloc(ny * es), *got = malloc(ny * es);
        eb_cpu_slice__ref(es, 4, xs, x, start, step, ys, want);
        struct eb_cuk_copy c = {.rank = 4};
        int64_t acc = 1;
        for (int d = 3; d >= 0; d--) {
            c.shape[d] = (int32_t)ys[d];
            c.xs[d] = (int32_t)(st[d] * step[d]);
            c.ys[d] = (int32_t)acc;
            c.x_off += start[d] * st[d];
            acc *= ys[d];
        }
        void *dy = dalloc(ny * es);
        CK(eb_cuk_copy_nd(0, (int)es, &c, dx, dy));
        CK(cudaMemcpy(got, dy, ny * es, cudaMemcpyDeviceToHost));
        ASSERT_TRUE(memcmp(got, want, ny * es) == 0);
        CK(cudaFree(dy));
        /* transpose */
        const int64_t perm[4] = {2, 0, 3, 1};
        int64_t ts[4];
        for (int d = 0; d < 4; d++)
            ts[d] = xs[perm[d]];
        uint8_t *tw = malloc(nx * es), *tg = malloc(nx * es);
        eb_cpu_transpose__ref(es, 4, xs, perm, x, tw);
        struct eb_cuk_copy tc = {.rank = 4};
        acc = 1;
        for (int d = 3; d >= 0; d--) {
            tc.shape[d] = (int32_t)ts[d];
            tc.xs[d] = (int32_t)st[perm[d]];
            tc.ys[d] = (int32_t)acc;
            acc *= ts[d];
        }
        dy = dalloc(nx * es);
        CK(eb_cuk_copy_nd(0, (int)es, &tc, dx, dy));
        CK(cudaMemcpy(tg, dy, nx * es, cudaMemcpyDeviceToHost));
        ASSERT_TRUE(memcmp(tg, tw, nx * es) == 0);
        /* one contiguous run (a plain copy) into an offset */
        struct eb_cuk_copy pc = {.rank = 1, .x_off = 3, .y_off = 5};
        pc.shape[0] = 17, pc.xs[0] = 1, pc.ys[0] = 1;
        CK(cudaMemset(dy, 0, nx * es));
        CK(eb_cuk_copy_nd(0, (int)es, &pc, dx, dy));
        CK(cudaMemcpy(tg, dy, nx * es, cudaMemcpyDeviceToHost));
        ASSERT_TRUE(memcmp(tg + 5 * es, x + 3 * es, 17 * es) == 0);
        CK(cudaFree(dy));
        CK(cudaFree(dx));
        free(x), free(want), free(got), free(tw), free(tg);
    }
}

/* Channels-last to NCHW (the head's reshapes) and back through the tiled transpose: planes of
 * whole tiles and ragged ones, 2- and 4-byte elements, offsets on both sides. */
EB_TEST(copy_nd_tiled_transpose)
{
    need_gpu();
    const int cases[4][2] = {{144, 6400}, {37, 45}, {64, 33}, {33, 1025}}; /* C, H*W */
    for (int t = 0; t < 4; t++)
        for (int es = 2; es <= 4; es += 2) {
            const int ch = cases[t][0], plane = cases[t][1], x_off = 3 * t, y_off = 5;
            const size_t n = (size_t)ch * (size_t)plane, bytes = (n + 16) * (size_t)es;
            uint8_t *x = malloc(bytes), *want = calloc(1, bytes), *got = malloc(bytes);
            for (size_t i = 0; i < bytes; i++)
                x[i] = (uint8_t)(i * 2654435761u >> 11);
            for (int c = 0; c < ch; c++) /* want[y_off + c*plane + p] = x[x_off + p*ch + c] */
                for (int p = 0; p < plane; p++)
                    memcpy(want + ((size_t)y_off + (size_t)c * plane + p) * es,
                           x + ((size_t)x_off + (size_t)p * ch + c) * es, (size_t)es);
            void *dx = dalloc(bytes), *dy = dalloc(bytes);
            CK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
            CK(cudaMemset(dy, 0, bytes));
            struct eb_cuk_copy c = {.rank = 2, .x_off = x_off, .y_off = y_off};
            c.shape[0] = ch, c.shape[1] = plane;
            c.xs[0] = 1, c.xs[1] = ch, c.ys[0] = plane, c.ys[1] = 1;
            CK(eb_cuk_copy_nd(0, es, &c, dx, dy));
            CK(cudaMemcpy(got, dy, bytes, cudaMemcpyDeviceToHost));
            ASSERT_TRUE(memcmp(got, want, bytes) == 0);
            /* back: NCHW to channels-last */
            struct eb_cuk_copy b = {.rank = 2, .x_off = y_off, .y_off = x_off};
            b.shape[0] = plane, b.shape[1] = ch;
            b.xs[0] = 1, b.xs[1] = plane, b.ys[0] = ch, b.ys[1] = 1;
            CK(cudaMemset(dx, 0, bytes));
            CK(eb_cuk_copy_nd(0, es, &b, dy, dx));
            CK(cudaMemcpy(got, dx, bytes, cudaMemcpyDeviceToHost));
            ASSERT_TRUE(memcmp(got + (size_t)x_off * es, x + (size_t)x_off * es, n * es) == 0);
            CK(cudaFree(dx));
            CK(cudaFree(dy));
            free(x), free(want), free(got);
        }
}

/* y[y_off + Σ i_d ys[d]] = x[x_off + Σ i_d xs[d]] on the host, elements of es bytes. */
static void copy_ref(const struct eb_cuk_copy *c, int es, const uint8_t *x, uint8_t *y)
{
    size_t n = 1;
    for (int d = 0; d < c->rank; d++)
        n *= (size_t)c->shape[d];
    for (size_t i = 0; i < n; i++) {
        size_t rem = i;
        int64_t xi = c->x_off, yi = c->y_off;
        for (int d = c->rank - 1; d >= 0; d--) {
            const int64_t idx = (int64_t)(rem % (size_t)c->shape[d]);
            rem /= (size_t)c->shape[d];
            xi += idx * c->xs[d];
            yi += idx * c->ys[d];
        }
        memcpy(y + (size_t)yi * (size_t)es, x + (size_t)xi * (size_t)es, (size_t)es);
    }
}

/* Transposes with a batch and with short rows, as the tiled kernels take them: attention's
 * [2][400][400] last two dims swapped, the DFL's 16 x 8400·4 to channels-last, a 3-channel image
 * to channels-last, a batch of 7-channel rows, a 4-D permutation, and a batch too large for one
 * grid (the generic copy); every byte against the host. */
EB_TEST(copy_nd_batched_transpose)
{
    need_gpu();
    struct tc {
        int rank;
        int32_t shape[4], xs[4], ys[4];
        int64_t x_off, y_off;
    };
    const struct tc cases[] = {
        {3, {2, 400, 400}, {160000, 400, 1}, {160000, 1, 400}, 0, 0},
        {3, {16, 4, 8400}, {33600, 8400, 1}, {1, 134400, 16}, 0, 0},
        {3, {3, 37, 41}, {1517, 41, 1}, {1, 123, 3}, 5, 3},
        {3, {5, 7, 100}, {700, 100, 1}, {700, 1, 7}, 0, 8},
        {4, {2, 3, 17, 50}, {2550, 850, 50, 1}, {2550, 1, 150, 3}, 1, 0},
        {4, {2, 40, 17, 50}, {34000, 850, 50, 1}, {34000, 1, 2000, 40}, 0, 2},
        {3, {70000, 2, 3}, {6, 3, 1}, {6, 1, 2}, 0, 0},
    };
    for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++)
        for (int es = 2; es <= 4; es += 2) {
            const struct tc *k = &cases[t];
            struct eb_cuk_copy c = {.rank = k->rank, .x_off = k->x_off, .y_off = k->y_off};
            size_t n = 1;
            for (int d = 0; d < k->rank; d++) {
                c.shape[d] = k->shape[d], c.xs[d] = k->xs[d], c.ys[d] = k->ys[d];
                n *= (size_t)k->shape[d];
            }
            const size_t bytes = (n + 16) * (size_t)es;
            uint8_t *x = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
            for (size_t i = 0; i < bytes; i++)
                x[i] = (uint8_t)(i * 2654435761u >> 13);
            memset(want, 0x5A, bytes);
            copy_ref(&c, es, x, want);
            void *dx = dalloc(bytes), *dy = dalloc(bytes);
            CK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
            CK(cudaMemset(dy, 0x5A, bytes));
            CK(eb_cuk_copy_nd(0, es, &c, dx, dy));
            CK(cudaMemcpy(got, dy, bytes, cudaMemcpyDeviceToHost));
            if (memcmp(got, want, bytes) != 0)
                fprintf(stderr, "case %zu es %d differs\n", t, es);
            ASSERT_TRUE(memcmp(got, want, bytes) == 0);
            CK(cudaFree(dx));
            CK(cudaFree(dy));
            free(x), free(want), free(got);
        }
}

/* Channels-last Concat-like copies: rows of `ch` half channels into rows of `total` at channel
 * `off` (16-byte vectors where the row, stride, offset allow; narrower ones otherwise), and a
 * channels-last nearest upsampling with zero strides; every other byte of y stays untouched. */
EB_TEST(copy_nd_channel_rows)
{
    need_gpu();
    const int cases[5][3] = {{48, 128, 64}, {48, 128, 8}, {16, 40, 20}, {3, 10, 5}, {7, 7, 0}};
    const int rows = 37 * 23;
    for (int t = 0; t < 5; t++) {
        const int ch = cases[t][0], total = cases[t][1], off = cases[t][2];
        const size_t nx = (size_t)rows * (size_t)ch, ny = (size_t)rows * (size_t)total;
        uint16_t *x = malloc(nx * 2), *want = malloc(ny * 2), *got = malloc(ny * 2);
        for (size_t i = 0; i < nx; i++)
            x[i] = (uint16_t)(i * 2654435761u >> 7);
        for (size_t i = 0; i < ny; i++)
            want[i] = 0xABCD;
        for (int r = 0; r < rows; r++)
            memcpy(want + (size_t)r * (size_t)total + (size_t)off, x + (size_t)r * (size_t)ch,
                   (size_t)ch * 2);
        void *dx = dalloc(nx * 2), *dy = dalloc(ny * 2);
        CK(cudaMemcpy(dx, x, nx * 2, cudaMemcpyHostToDevice));
        for (size_t i = 0; i < ny; i++)
            got[i] = 0xABCD;
        CK(cudaMemcpy(dy, got, ny * 2, cudaMemcpyHostToDevice));
        struct eb_cuk_copy c = {.rank = 2, .y_off = off};
        c.shape[0] = rows, c.shape[1] = ch;
        c.xs[0] = ch, c.xs[1] = 1, c.ys[0] = total, c.ys[1] = 1;
        CK(eb_cuk_copy_nd(0, 2, &c, dx, dy));
        CK(cudaMemcpy(got, dy, ny * 2, cudaMemcpyDeviceToHost));
        ASSERT_TRUE(memcmp(got, want, ny * 2) == 0);
        CK(cudaFree(dx));
        CK(cudaFree(dy));
        free(x), free(want), free(got);
    }
    /* upsample x2 of a [5][6][16] channels-last map: dims h, fh, w, fw, c */
    const int h = 5, w = 6, c = 16;
    uint16_t x[5 * 6 * 16], want[10 * 12 * 16], got[10 * 12 * 16];
    for (int i = 0; i < h * w * c; i++)
        x[i] = (uint16_t)(i * 7 + 1);
    for (int j = 0; j < 2 * h; j++)
        for (int i = 0; i < 2 * w; i++)
            for (int k = 0; k < c; k++)
                want[(j * 2 * w + i) * c + k] = x[((j / 2) * w + i / 2) * c + k];
    struct eb_cuk_copy u = {.rank = 5};
    const int32_t sh[5] = {h, 2, w, 2, c}, sx[5] = {w * c, 0, c, 0, 1},
                  sy[5] = {2 * 2 * w * c, 2 * w * c, 2 * c, c, 1};
    for (int d = 0; d < 5; d++)
        u.shape[d] = sh[d], u.xs[d] = sx[d], u.ys[d] = sy[d];
    void *dx = dalloc(sizeof(x)), *dy = dalloc(sizeof(want));
    CK(cudaMemcpy(dx, x, sizeof(x), cudaMemcpyHostToDevice));
    CK(eb_cuk_copy_nd(0, 2, &u, dx, dy));
    CK(cudaMemcpy(got, dy, sizeof(got), cudaMemcpyDeviceToHost));
    ASSERT_TRUE(memcmp(got, want, sizeof(want)) == 0);
    CK(cudaFree(dx));
    CK(cudaFree(dy));
}

/*
 * eb_cuk_copy_parts: a channels-last Concat of parts of 16, 8, 24 and 3 channels (the last
 * forces every part to 2-byte elements) and of 3 aligned parts (16-byte elements), then the
 * Split back; a batch of the most parts; every element against memcpy rows.
 */
EB_TEST(copy_parts_concat_split_channels)
{
    need_gpu();
    const int sets[3][EB_CUK_MAX_PARTS + 1] = {
        {4, 16, 8, 24, 3}, {3, 32, 64, 16}, {8, 8, 8, 8, 8, 8, 8, 8, 8}};
    const int rows = 41 * 29;
    for (int t = 0; t < 3; t++) {
        const int np = sets[t][0];
        int total = 0;
        for (int j = 0; j < np; j++)
            total += sets[t][1 + j];
        const size_t ny = (size_t)rows * (size_t)total;
        uint16_t *want = malloc(ny * 2), *got = malloc(ny * 2), *back = malloc(ny * 2);
        void *dx[EB_CUK_MAX_PARTS], *dy = dalloc(ny * 2), *db[EB_CUK_MAX_PARTS];
        struct eb_cuk_copy c[EB_CUK_MAX_PARTS], sc[EB_CUK_MAX_PARTS];
        for (int j = 0, off = 0; j < np; off += sets[t][1 + j], j++) {
            const int ch = sets[t][1 + j];
            const size_t nx = (size_t)rows * (size_t)ch;
            uint16_t *x = malloc(nx * 2);
            for (size_t i = 0; i < nx; i++)
                x[i] = (uint16_t)((i + 1000u * (unsigned)j) * 2654435761u >> 9);
            for (int r = 0; r < rows; r++)
                memcpy(want + (size_t)r * (size_t)total + (size_t)off, x + (size_t)r * (size_t)ch,
                       (size_t)ch * 2);
            dx[j] = dalloc(nx * 2);
            db[j] = dalloc(nx * 2);
            CK(cudaMemcpy(dx[j], x, nx * 2, cudaMemcpyHostToDevice));
            free(x);
            c[j] = (struct eb_cuk_copy){.rank = 2, .y_off = off};
            c[j].shape[0] = rows, c[j].shape[1] = ch;
            c[j].xs[0] = ch, c[j].xs[1] = 1, c[j].ys[0] = total, c[j].ys[1] = 1;
            sc[j] = (struct eb_cuk_copy){.rank = 2, .x_off = off};
            sc[j].shape[0] = rows, sc[j].shape[1] = ch;
            sc[j].xs[0] = total, sc[j].xs[1] = 1, sc[j].ys[0] = ch, sc[j].ys[1] = 1;
        }
        void *const *ys = (void *const *)&dy; /* every part writes the one whole */
        void *yall[EB_CUK_MAX_PARTS];
        const void *xall[EB_CUK_MAX_PARTS];
        for (int j = 0; j < np; j++)
            yall[j] = ys[0], xall[j] = dy;
        CK(eb_cuk_copy_parts(0, 2, np, c, (const void *const *)dx, yall));
        CK(cudaMemcpy(got, dy, ny * 2, cudaMemcpyDeviceToHost));
        ASSERT_TRUE(memcmp(got, want, ny * 2) == 0);
        /* and back: the Split of the whole into the parts */
        CK(eb_cuk_copy_parts(0, 2, np, sc, xall, db));
        for (int j = 0, off = 0; j < np; off += sets[t][1 + j], j++) {
            const int ch = sets[t][1 + j];
            CK(cudaMemcpy(back, db[j], (size_t)rows * (size_t)ch * 2, cudaMemcpyDeviceToHost));
            for (int r = 0; r < rows; r++)
                ASSERT_TRUE(memcmp(back + (size_t)r * (size_t)ch,
                                   want + (size_t)r * (size_t)total + (size_t)off,
                                   (size_t)ch * 2) == 0);
            CK(cudaFree(dx[j]));
            CK(cudaFree(db[j]));
        }
        CK(cudaFree(dy));
        free(want), free(got), free(back);
    }
    ASSERT_EQ_INT((int)eb_cuk_copy_parts(0, 2, 0, NULL, NULL, NULL), (int)cudaErrorInvalidValue);
}

/* NCHW → the layout (nhwc: [n][plane][c]; else a copy), or back when `back`. */
static void to_layout(int nhwc, int64_t n, int64_t c, int64_t plane, const float *x, float *y,
                      int back)
{
    for (int64_t b = 0; b < n; b++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t p = 0; p < plane; p++) {
                const int64_t i = (b * c + ch) * plane + p;
                const int64_t j = nhwc ? (b * plane + p) * c + ch : i;
                if (back)
                    y[i] = x[j];
                else
                    y[j] = x[i];
            }
}

EB_TEST(maxpool_pads_dilation_nan)
{
    need_gpu();
    const struct eb_pool2d_desc ds[3] = {
        {.n = 1,
         .c = 3,
         .ih = 20,
         .iw = 20,
         .oh = 20,
         .ow = 20,
         .kh = 5,
         .kw = 5,
         .stride_h = 1,
         .stride_w = 1,
         .pad_t = 2,
         .pad_l = 2,
         .dil_h = 1,
         .dil_w = 1},
        {.n = 2,
         .c = 4,
         .ih = 9,
         .iw = 11,
         .oh = 5,
         .ow = 6,
         .kh = 3,
         .kw = 3,
         .stride_h = 2,
         .stride_w = 2,
         .pad_t = 1,
         .pad_l = 1,
         .dil_h = 1,
         .dil_w = 1},
        {.n = 1,
         .c = 2,
         .ih = 12,
         .iw = 12,
         .oh = 4,
         .ow = 4,
         .kh = 2,
         .kw = 2,
         .stride_h = 3,
         .stride_w = 3,
         .pad_t = 0,
         .pad_l = 0,
         .dil_h = 2,
         .dil_w = 2},
    };
    for (int c = 0; c < 3; c++)
        for (int t = 0; t < 2; t++)
            for (int nhwc = 0; nhwc < 2; nhwc++) {
                const struct eb_pool2d_desc *d = &ds[c];
                const size_t nx = (size_t)(d->n * d->c * d->ih * d->iw);
                const size_t ny = (size_t)(d->n * d->c * d->oh * d->ow);
                float *x = rand_buf(nx, -5, 5), *want = malloc(ny * 4), *xl = malloc(nx * 4);
                x[7] = NAN;
                eb_cpu_maxpool2d_f32__ref(d, x, want);
                const struct eb_cuk_pool p = {
                    (int32_t)d->n,        (int32_t)d->c,     (int32_t)d->ih,
                    (int32_t)d->iw,       (int32_t)d->oh,    (int32_t)d->ow,
                    (int32_t)d->kh,       (int32_t)d->kw,    (int32_t)d->stride_h,
                    (int32_t)d->stride_w, (int32_t)d->pad_t, (int32_t)d->pad_l,
                    (int32_t)d->dil_h,    (int32_t)d->dil_w, nhwc,
                };
                to_layout(nhwc, d->n, d->c, d->ih * d->iw, x, xl, 0);
                void *dx = up(DTS[t], xl, nx), *dy = dalloc(ny * 4);
                CK(eb_cuk_maxpool(0, DTS[t], &p, dx, dy));
                float *got_l = down(DTS[t], dy, ny), *got = malloc(ny * 4);
                to_layout(nhwc, d->n, d->c, d->oh * d->ow, got_l, got, 1);
                expect_close(nhwc ? "maxpool nhwc" : "maxpool", DTS[t], got, want, ny);
                CK(cudaFree(dx));
                free(x), free(xl), free(want), free(got), free(got_l);
            }
}

EB_TEST(upsample_integer_factors)
{
    need_gpu();
    const int64_t f[3][2] = {{2, 2}, {3, 1}, {1, 4}};
    for (int c = 0; c < 3; c++)
        for (int t = 0; t < 2; t++) {
            const int64_t xs[4] = {1, 5, 7, 9}, ys[4] = {1, 5, 7 * f[c][0], 9 * f[c][1]};
            const float sc[4] = {1, 1, (float)f[c][0], (float)f[c][1]};
            const size_t nx = (size_t)numel(4, xs), ny = (size_t)numel(4, ys);
            float *x = rand_buf(nx, -1, 1), *want = malloc(ny * 4);
            eb_cpu_resize_nearest_f32__ref(4, xs, x, ys, sc, EB_RESIZE_ASYMMETRIC, EB_RESIZE_FLOOR,
                                           want);
            void *dx = up(DTS[t], x, nx), *dy = dalloc(ny * 4);
            CK(eb_cuk_upsample(0, DTS[t], 5, 7, 9, f[c][0], f[c][1], dx, dy));
            float *got = down(DTS[t], dy, ny);
            expect_close("upsample", DTS[t], got, want, ny);
            CK(cudaFree(dx));
            free(x), free(want), free(got);
        }
}

EB_TEST(softmax_short_and_long_rows)
{
    need_gpu();
    const int64_t cases[4][3] = {{1, 16, 8400}, {2, 400, 1}, {3, 7, 5}, {1, 1, 1}};
    for (int c = 0; c < 4; c++)
        for (int t = 0; t < 2; t++) {
            const size_t n = (size_t)(cases[c][0] * cases[c][1] * cases[c][2]);
            float *x = rand_buf(n, -20, 20), *want = malloc(n * 4);
            eb_cpu_softmax_f32__ref(cases[c][0], cases[c][1], cases[c][2], x, want);
            void *dx = up(DTS[t], x, n), *dy = dalloc(n * 4);
            CK(eb_cuk_softmax(0, DTS[t], cases[c][0], cases[c][1], cases[c][2], dx, dy));
            float *got = down(DTS[t], dy, n);
            expect_close("softmax", DTS[t], got, want, n);
            CK(cudaFree(dx));
            free(x), free(want), free(got);
        }
}

/* edgebench.DFL: Σ w_i softmax_i over bins of stride `inner` (the YOLO head's 4 x 16 x 8400 at 640,
 * and ragged ones), against the formula in double on the values as the device holds them. */
EB_TEST(dfl_matches_reference)
{
    need_gpu();
    const int64_t cases[3][3] = {{4, 16, 8400}, {8, 16, 37}, {3, 5, 1}};
    for (int c = 0; c < 3; c++)
        for (int t = 0; t < 2; t++) {
            const int64_t outer = cases[c][0], len = cases[c][1], inner = cases[c][2];
            const size_t n = (size_t)(outer * len * inner), ny = (size_t)(outer * inner);
            float *x = rand_buf(n, -8, 8), *w = rand_buf((size_t)len, 0, 15);
            void *dx = up(DTS[t], x, n), *dy = dalloc(ny * 4);
            float *dw = up(EB_CUK_F32, w, (size_t)len);
            CK(eb_cuk_dfl(0, DTS[t], outer, len, inner, dx, dw, dy));
            float *got = down(DTS[t], dy, ny), *xs = down(DTS[t], dx, n), *want = malloc(ny * 4);
            for (int64_t o = 0; o < outer; o++) /* on the values as the device held them */
                for (int64_t a = 0; a < inner; a++) {
                    double m = -INFINITY, sum = 0.0, dot = 0.0;
                    for (int64_t i = 0; i < len; i++)
                        m = fmax(m, xs[(o * len + i) * inner + a]);
                    for (int64_t i = 0; i < len; i++) {
                        const double e = exp(xs[(o * len + i) * inner + a] - m);
                        sum += e;
                        dot += e * w[i];
                    }
                    want[o * inner + a] = (float)(dot / sum);
                }
            expect_close("dfl", DTS[t], got, want, ny);
            CK(cudaFree(dw));
            free(x), free(w), free(xs), free(want), free(got);
        }
}

EB_TEST(quantize_dequantize_ties_and_channels)
{
    need_gpu();
    const int64_t n = 4 * 6 * 5, channels_cases[2] = {1, 6}, inner = 5;
    for (int cc = 0; cc < 2; cc++)
        for (int sgn = 0; sgn < 2; sgn++) {
            const int64_t ch = channels_cases[cc];
            float *x = rand_buf((size_t)n, -30, 30), *scale = rand_buf((size_t)ch, 0.1f, 0.5f);
            for (int64_t i = 0; i < n; i += 7) /* exact ties: round half to even */
                x[i] = (float)((i % 9) - 4) * 0.5f * scale[ch == 1 ? 0 : (i / inner) % ch];
            x[3] = 1e9f; /* saturates */
            uint8_t zp[6];
            for (int k = 0; k < 6; k++)
                zp[k] = sgn ? (uint8_t)(int8_t)(k - 3) : (uint8_t)(100 + k);
            uint8_t *want = malloc((size_t)n), *got = malloc((size_t)n);
            float *ds = up(EB_CUK_F32, scale, (size_t)ch);
            void *dz = dalloc(6), *dq = dalloc((size_t)n);
            CK(cudaMemcpy(dz, zp, 6, cudaMemcpyHostToDevice));
            /* float and half x; all n elements (per tensor: eight a thread) and n - 3 (one a
             * thread), against the CPU's reference of x as the device holds it */
            for (int t = 0; t < 2; t++)
                for (int64_t nn = n; nn >= n - 3; nn -= 3) {
                    float *xt = down(DTS[t], up(DTS[t], x, (size_t)n), (size_t)n);
                    void *dxt = up(DTS[t], xt, (size_t)n);
                    eb_cpu_quantize_f32__ref(nn, ch, inner, xt, scale, zp, sgn, want);
                    CK(cudaMemset(dq, 0xee, (size_t)n));
                    CK(eb_cuk_quantize(0, DTS[t], nn, ch, inner, dxt, ds, dz, sgn, dq));
                    CK(cudaMemcpy(got, dq, (size_t)n, cudaMemcpyDeviceToHost));
                    ASSERT_TRUE(memcmp(got, want, (size_t)nn) == 0);
                    for (int64_t i = nn; i < n; i++)
                        ASSERT_TRUE(got[i] == 0xee);
                    CK(cudaFree(dxt));
                    free(xt);
                }
            void *dx = up(EB_CUK_F32, x, (size_t)n);
            eb_cpu_quantize_f32__ref(n, ch, inner, x, scale, zp, sgn, want);
            CK(eb_cuk_quantize(0, EB_CUK_F32, n, ch, inner, dx, ds, dz, sgn, dq));
            /* and back */
            float *dw = malloc((size_t)n * 4);
            eb_cpu_dequantize_f32__ref(n, ch, inner, sgn ? EB_DTYPE_I8 : EB_DTYPE_U8, want, scale,
                                       zp, dw);
            for (int t = 0; t < 2; t++) {
                void *dy = dalloc((size_t)n * 4);
                CK(eb_cuk_dequantize(0, DTS[t], n, ch, inner, sgn, dq, ds, dz, dy));
                float *dg = down(DTS[t], dy, (size_t)n);
                expect_close("dequantize", DTS[t], dg, dw, (size_t)n);
                free(dg);
            }
            CK(cudaFree(dx));
            CK(cudaFree(ds));
            CK(cudaFree(dz));
            CK(cudaFree(dq));
            free(x), free(scale), free(want), free(got), free(dw);
        }
    /* int32 input (DequantizeLinear of a bias-like tensor) */
    int32_t xi[5] = {-70000, -1, 0, 3, 123456};
    const int32_t zi = 2;
    const float s1 = 0.25f;
    float want[5];
    eb_cpu_dequantize_f32__ref(5, 1, 1, EB_DTYPE_I32, xi, &s1, &zi, want);
    void *dx = dalloc(20), *dz = dalloc(4);
    float *ds = up(EB_CUK_F32, &s1, 1);
    CK(cudaMemcpy(dx, xi, 20, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dz, &zi, 4, cudaMemcpyHostToDevice));
    void *dy = dalloc(20);
    CK(eb_cuk_dequantize(0, EB_CUK_F32, 5, 1, 1, 2, dx, ds, dz, dy));
    float *got = down(EB_CUK_F32, dy, 5);
    expect_close("dequantize i32", EB_CUK_F32, got, want, 5);
    CK(cudaFree(dx));
    CK(cudaFree(dz));
    CK(cudaFree(ds));
    free(got);
}

EB_TEST(cast_half_round_trip)
{
    need_gpu();
    /* exactly representable in half, the largest half, ties to even, and overflow to inf */
    const float x[8] = {
        0.0f,  -1.5f,    65504.0f,        1.0f + 1.0f / 2048.0f, 1.0f + 3.0f / 2048.0f,
        1e-7f, 70000.0f, -0.333251953125f};
    const float want[8] = {0.0f,           -1.5f,    65504.0f,        1.0f, 1.0f + 4.0f / 2048.0f,
                           1.1920929e-07f, INFINITY, -0.333251953125f};
    void *dx = up(EB_CUK_F16, x, 8); /* up() casts through eb_cuk_cast */
    float *got = down(EB_CUK_F16, dx, 8);
    for (int i = 0; i < 8; i++)
        if (!(got[i] == want[i]))
            EB_FAIL("cast %d: %.9g -> %.9g, expected %.9g", i, (double)x[i], (double)got[i],
                    (double)want[i]);
    free(got);
}

/* The host conversion the fp16 weights go through, bit for bit against the device's. */
EB_TEST(host_half_conversion_matches_device)
{
    need_gpu();
    const size_t n = 200000;
    float *x = malloc(n * 4);
    uint16_t *host = malloc(n * 2), *dev = malloc(n * 2);
    for (size_t i = 0; i < n; i++) {
        rng = rng * 1664525u + 1013904223u;
        uint32_t bits = rng;
        if (i % 4 == 0) /* around half's range: exponents 100..150 */
            bits = (bits & 0x807FFFFFu) | ((100u + (bits >> 8) % 51u) << 23);
        memcpy(&x[i], &bits, 4);
    }
    x[0] = NAN, x[1] = INFINITY, x[2] = -INFINITY, x[3] = -0.0f, x[4] = 65520.0f;
    for (size_t i = 0; i < n; i++)
        host[i] = eb_cu__f32_to_f16(x[i]);
    void *dx = up(EB_CUK_F32, x, n), *dh = dalloc(n * 2);
    CK(eb_cuk_cast(0, EB_CUK_F32, EB_CUK_F16, (int64_t)n, dx, dh));
    CK(cudaMemcpy(dev, dh, n * 2, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++) {
        const int nan_h = (host[i] & 0x7C00u) == 0x7C00u && (host[i] & 0x3FFu) != 0;
        const int nan_d = (dev[i] & 0x7C00u) == 0x7C00u && (dev[i] & 0x3FFu) != 0;
        if (nan_h && nan_d)
            continue;
        if (host[i] != dev[i])
            EB_FAIL("%.9g: host 0x%04x, device 0x%04x", (double)x[i], host[i], dev[i]);
    }
    CK(cudaFree(dx));
    CK(cudaFree(dh));
    free(x), free(host), free(dev);
}

/* The device letterbox against the CPU reference: frames wider and taller than the input,
 * odd sizes (1001 at half scale rounds to even), a tall narrow frame into a non-square input,
 * identity scale, a one-pixel frame, padded rows; RGB and first-channel, NCHW and NHWC. */
EB_TEST(letterbox_matches_cpu_reference)
{
    need_gpu();
    static const struct {
        int sw, sh, pad_row, dw, dh, ch;
    } cases[] = {
        {1920, 1080, 0, 640, 640, 3}, {1001, 37, 5, 320, 320, 3}, {17, 3001, 0, 64, 96, 3},
        {640, 640, 0, 640, 640, 3},   {1, 1, 3, 32, 32, 3},       {1280, 720, 7, 320, 256, 1},
    };
    for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
        const int sw = cases[t].sw, sh = cases[t].sh, ch = cases[t].ch;
        const size_t stride = (size_t)sw * 3 + (size_t)cases[t].pad_row;
        uint8_t *frame = malloc(stride * (size_t)sh);
        ASSERT_TRUE(frame != NULL);
        for (size_t i = 0; i < stride * (size_t)sh; i++)
            frame[i] = (uint8_t)(frand(0.0f, 256.0f));
        struct eb_letterbox lb;
        eb_letterbox_compute(sw, sh, cases[t].dw, cases[t].dh, &lb);
        const size_t n = (size_t)ch * (size_t)lb.dst_w * (size_t)lb.dst_h;
        float *want = malloc(n * sizeof(float)), *want_l = malloc(n * sizeof(float));
        ASSERT_TRUE(want != NULL && want_l != NULL);
        eb_letterbox_rgb_to_nchw_f32__ref(frame, sw, sh, stride, &lb, ch, want);
        void *d_frame = dalloc(stride * (size_t)sh);
        CK(cudaMemcpy(d_frame, frame, stride * (size_t)sh, cudaMemcpyHostToDevice));
        for (int nhwc = 0; nhwc < 2; nhwc++) {
            to_layout(nhwc, 1, ch, (int64_t)lb.dst_w * lb.dst_h, want, want_l, 0);
            for (int di = 0; di < 2; di++) {
                const struct eb_cuk_letterbox p = {
                    .src_w = sw,
                    .src_h = sh,
                    .src_stride = (int32_t)stride,
                    .channels = ch,
                    .dst_w = lb.dst_w,
                    .dst_h = lb.dst_h,
                    .new_w = lb.new_w,
                    .new_h = lb.new_h,
                    .pad_left = lb.pad_left,
                    .pad_top = lb.pad_top,
                    .nhwc = nhwc,
                };
                void *y = dalloc(n * 4);
                CK(eb_cuk_letterbox(0, DTS[di], &p, d_frame, y));
                float *got = down(DTS[di], y, n);
                char what[96];
                snprintf(what, sizeof(what), "letterbox %dx%d -> %dx%d c%d %s", sw, sh, lb.dst_w,
                         lb.dst_h, ch, nhwc ? "nhwc" : "nchw");
                expect_close(what, DTS[di], got, want_l, n);
                free(got);
            }
        }
        CK(cudaFree(d_frame));
        free(want);
        free(want_l);
        free(frame);
    }
}

/* The device head reduction gives eb_yolo_decode's candidates exactly: random heads with
 * scores around the threshold, argmax ties (first class wins) and a head where no anchor
 * passes. */
EB_TEST(head_rows_match_host_decode)
{
    need_gpu();
    static const struct {
        int nc, n;
        float conf;
    } cases[] = {{80, 8400, 0.25f}, {3, 2100, 0.5f}, {1, 33, 0.1f}, {80, 500, 2.0f}};
    for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
        const int nc = cases[t].nc, n = cases[t].n;
        const size_t numel = (size_t)(4 + nc) * (size_t)n;
        float *x = rand_buf(numel, 0.0f, 0.3f);
        for (int a = 0; a < n; a++) {
            for (int k = 0; k < 4; k++)
                x[(size_t)k * (size_t)n + (size_t)a] = frand(0.0f, 640.0f);
            if (nc >= 3 && a % 7 == 0) /* a tie between classes 1 and 2 */
                x[(size_t)(4 + 1) * n + a] = x[(size_t)(4 + 2) * n + a] = 0.9f;
        }
        const struct eb_yolo_layout_info li = {
            .layout = EB_YOLO_LAYOUT_CHANNELS, .num_classes = nc, .num_boxes = n};
        struct eb_yolo_scratch sc;
        struct eb_diag d = {0};
        ASSERT_OK(eb_yolo_scratch_init(&sc, &li, &d));
        const struct eb_yolo_params p = {.conf = cases[t].conf, .iou = 0.7f, .max_det = 300};
        const size_t want_n = eb_yolo_decode(&li, x, &p, &sc);
        struct eb_detection *want = malloc((want_n + 1) * sizeof(*want));
        ASSERT_TRUE(want != NULL);
        memcpy(want, sc.cand, want_n * sizeof(*want));
        void *dx = up(EB_CUK_F32, x, numel);
        void *drows = dalloc(16 + (size_t)n * sizeof(struct eb_anchor_row));
        CK(eb_cuk_head_rows(0, nc, n, cases[t].conf, dx, drows, (char *)drows + 16));
        CK(cudaDeviceSynchronize());
        int32_t count = -1;
        CK(cudaMemcpy(&count, drows, sizeof(count), cudaMemcpyDeviceToHost));
        ASSERT_EQ_INT(count, (int64_t)want_n);
        struct eb_anchor_row *rows = malloc(((size_t)count + 1) * sizeof(*rows));
        ASSERT_TRUE(rows != NULL);
        CK(cudaMemcpy(rows, (char *)drows + 16, (size_t)count * sizeof(*rows),
                      cudaMemcpyDeviceToHost));
        ASSERT_EQ_INT(eb_yolo_decode_rows(rows, (size_t)count, &sc), (int64_t)want_n);
        for (size_t i = 0; i < want_n; i++)
            if (memcmp(&sc.cand[i], &want[i], sizeof(want[i])) != 0)
                EB_FAIL("nc %d n %d: candidate %zu differs: (%g %g %g %g %g c%d) vs host (%g %g "
                        "%g %g %g c%d)",
                        nc, n, i, sc.cand[i].x1, sc.cand[i].y1, sc.cand[i].x2, sc.cand[i].y2,
                        sc.cand[i].score, sc.cand[i].cls, want[i].x1, want[i].y1, want[i].x2,
                        want[i].y2, want[i].score, want[i].cls);
        printf("nc %d n %d conf %.2f: %zu rows, as the host decode\n", nc, n, cases[t].conf,
               want_n);
        CK(cudaFree(dx));
        CK(cudaFree(drows));
        free(rows);
        free(want);
        free(x);
        eb_yolo_scratch_fini(&sc);
    }
}

/* The int8 conv (eb_cuk_qconv) against the CPU's integer reference: eb_cpu_conv2d_u8_i32__ref's
 * exact accumulator and the CPU requantisation (eb_cpu_requant_i32, its scalar path). */
struct qcase {
    int n, ic, ih, iw, oc, kh, kw, sh, sw, ph, pw, dh, dw, groups;
    int w_signed, w_zp, x_pix_extra, y_nchw, x_nchw;
};

/* a's split-k sums and counters (zeroed), when a.splits > 1 (the caller frees a.ws). */
static void split_k_workspace(struct eb_cuk_qconv *a)
{
    size_t cnt_at = 0;
    const size_t ws_bytes = eb_cuk_qconv_ws_bytes(a, &cnt_at);
    a->ws = a->splits > 1 ? dalloc(ws_bytes) : NULL;
    a->cnt = a->ws != NULL ? a->ws + cnt_at : NULL;
}

/* A half's bits as a float (the host side of the fused outputs' check). */
static float half_bits_to_f32(uint16_t h)
{
    const int e = (h >> 10) & 31, m = h & 1023;
    const float v = e == 0    ? ldexpf((float)m, -24)
                    : e == 31 ? (m ? NAN : INFINITY)
                              : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000u) ? -v : v;
}
static float round_half(float f)
{
    return half_bits_to_f32(eb_cu__f32_to_f16(f));
}
/* QuantizeLinear of f (uint8) as the fused outputs compute it: times the inverse scale */
static int quant_ref(float f, float scale, int32_t zp)
{
    const float q = nearbyintf(f * (1.0f / scale)) + (float)zp;
    return q < 0.0f ? 0 : q > 255.0f ? 255 : (int)q;
}

/*
 * 4. The fused outputs (kernels.h, struct eb_cuk_qdst: what cuda_qconv.c's fusion of a residual
 * Add, a Split along C, a QuantizeLinear and a DequantizeLinear makes of a conv): SiLU in half,
 * plus a half residual (channels-last), split at cs: channels [0, cs) as half into rows wider
 * than the part, [cs, oc) as bytes (channels-last) and as their DequantizeLinear (half, NCHW).
 * The halves within half's tolerance of the reference activation; a byte at most one step from
 * the reference's (on at most 0.1% of them: exp and the inverse scale at ties); each dequantised
 * half exactly (byte - zp) * scale of the byte written beside it. Both parts also into one byte
 * tensor for a Concat's QuantizeLinear (BYTE from part 0's halves, REQ from part 1's dequantised
 * halves), each byte exactly the quantisation of the half written beside it.
 */
static void qconv_fused_outputs(const struct eb_cuk_qconv *q0, const struct eb_conv2d_desc *d,
                                const int32_t *acc, const float *mult, const float *bias,
                                const float *dmult, const float *dbias, const uint8_t *dx,
                                int first_width, int max_split)
{
    static const int32_t widths[] = {16, 32, 64};
    const int64_t plane = d->oh * d->ow, oc = d->oc;
    const int64_t cs = oc >= 8 ? oc / 2 / 4 * 4 : oc / 2, c1 = oc - cs, pitch0 = cs + 4;
    const size_t ny = (size_t)(d->n * oc * plane);
    const float scale = 0.37f;
    const int32_t zp = 7;
    float *res = malloc(ny * 4), *res_nhwc = malloc(ny * 4), *want = malloc(ny * 4);
    ASSERT_TRUE(res && res_nhwc && want);
    for (size_t i = 0; i < ny; i++) { /* NCHW order (b, k, p) */
        const int64_t b = (int64_t)i / (oc * plane), k = (int64_t)i / plane % oc,
                      pp = (int64_t)i % plane;
        res[i] = round_half(frand(-6.0f, 6.0f));
        res_nhwc[(b * plane + pp) * oc + k] = res[i];
        want[i] = round_half(
            round_half(eb_cpu_act_f32__ref(EB_ACT_SILU, 0, 0, (float)acc[i] * mult[k] + bias[k])) +
            res[i]);
    }
    void *dres = up(EB_CUK_F16, res_nhwc, ny);
    for (int wi = first_width; wi < 3; wi++)
        for (int split = 1; split <= (max_split < 2 ? max_split : 2); split++) {
            struct eb_cuk_qconv a = *q0;
            a.bn = widths[wi];
            a.splits = split;
            split_k_workspace(&a);
            a.mult = dmult, a.bias = dbias, a.act = EB_ACT_SILU, a.y_kind = EB_CUK_QY_F16;
            a.res = dres;
            a.r_n = (int32_t)(plane * oc), a.r_c = 1, a.r_p = (int32_t)oc;
            const size_t n0 = (size_t)(d->n * plane * pitch0), n1 = (size_t)(d->n * plane * c1);
            void *y0 = dalloc(n0 * 2), *y1 = dalloc(n1), *y2 = dalloc(n1 * 2);
            a.n_dst = 3;
            a.dst[0] = (struct eb_cuk_qdst){.y = y0,
                                            .y_n = (int32_t)(plane * pitch0),
                                            .y_c = 1,
                                            .y_p = (int32_t)pitch0,
                                            .c0 = 0,
                                            .c1 = (int32_t)cs,
                                            .mode = EB_CUK_QD_FLOAT};
            a.dst[1] = (struct eb_cuk_qdst){.y = y1,
                                            .y_n = (int32_t)(plane * c1),
                                            .y_c = 1,
                                            .y_p = (int32_t)c1,
                                            .c0 = (int32_t)cs,
                                            .c1 = (int32_t)oc,
                                            .mode = EB_CUK_QD_BYTE,
                                            .q_inv = 1.0f / scale,
                                            .q_zp = zp};
            a.dst[2] = a.dst[1];
            a.dst[2].y = y2, a.dst[2].mode = EB_CUK_QD_DQ, a.dst[2].dq_scale = scale;
            a.dst[2].dq_zp = zp, a.dst[2].y_n = (int32_t)(c1 * plane);
            a.dst[2].y_c = (int32_t)plane, a.dst[2].y_p = 1;
            /* a Concat's QuantizeLinear (scale 0.5, zp 3) of both parts, into one channels-last
             * byte tensor: part 0's floats requantised (BYTE), part 1's dequantised bytes (REQ) */
            const float cat_scale = 0.5f;
            const int32_t cat_zp = 3;
            uint8_t *y3 = dalloc(ny);
            a.n_dst = 5;
            a.dst[3] = a.dst[1];
            a.dst[3].y = y3 + cs, a.dst[3].y_n = (int32_t)(plane * oc), a.dst[3].y_p = (int32_t)oc;
            a.dst[3].mode = EB_CUK_QD_REQ, a.dst[3].dq_scale = scale, a.dst[3].dq_zp = zp;
            a.dst[3].o_inv = 1.0f / cat_scale, a.dst[3].o_zp = cat_zp;
            a.dst[4] = a.dst[3];
            a.dst[4].y = y3, a.dst[4].c0 = 0, a.dst[4].c1 = (int32_t)cs;
            a.dst[4].mode = EB_CUK_QD_BYTE, a.dst[4].q_inv = 1.0f / cat_scale;
            a.dst[4].q_zp = cat_zp;
            for (int rep = 0; rep < (split > 1 ? 2 : 1); rep++) {
                CK(eb_cuk_qconv(0, &a, dx, NULL));
                CK(cudaDeviceSynchronize());
                uint16_t *h0 = malloc(n0 * 2), *h2 = malloc(n1 * 2);
                uint8_t *h1 = malloc(n1), *h3 = malloc(ny);
                ASSERT_TRUE(h0 && h1 && h2 && h3);
                CK(cudaMemcpy(h3, y3, ny, cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(h0, y0, n0 * 2, cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(h1, y1, n1, cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(h2, y2, n1 * 2, cudaMemcpyDeviceToHost));
                size_t off_by_one = 0, n_bytes = 0;
                for (size_t i = 0; i < ny; i++) {
                    const int64_t b = (int64_t)i / (oc * plane), k = (int64_t)i / plane % oc,
                                  pp = (int64_t)i % plane;
                    const int cat = h3[(b * plane + pp) * oc + k];
                    if (k < cs) {
                        const float got = half_bits_to_f32(h0[(b * plane + pp) * pitch0 + k]);
                        expect_close("qconv fused half part", EB_CUK_F16, &got, &want[i], 1);
                        if (cat != quant_ref(got, cat_scale, cat_zp))
                            EB_FAIL("width %d split %d: concat byte %zu of part 0 is %d, its half "
                                    "%.9g gives %d",
                                    a.bn, split, i, cat, (double)got,
                                    quant_ref(got, cat_scale, cat_zp));
                        continue;
                    }
                    float r = nearbyintf(want[i] / scale) + (float)zp;
                    r = r < 0 ? 0 : r > 255 ? 255 : r;
                    const int byte = h1[(b * plane + pp) * c1 + (k - cs)];
                    const int diff = abs(byte - (int)r);
                    if (diff > 1)
                        EB_FAIL("width %d split %d: fused byte %zu is %d, the reference %d", a.bn,
                                split, i, byte, (int)r);
                    off_by_one += diff == 1;
                    n_bytes++;
                    const float dq = half_bits_to_f32(h2[(b * c1 + (k - cs)) * plane + pp]);
                    if (dq != round_half((float)(byte - zp) * scale))
                        EB_FAIL("width %d split %d: dequantised %zu is %.9g, its byte %d gives "
                                "%.9g",
                                a.bn, split, i, (double)dq, byte,
                                (double)round_half((float)(byte - zp) * scale));
                    if (cat != quant_ref(dq, cat_scale, cat_zp))
                        EB_FAIL("width %d split %d: concat byte %zu of part 1 is %d, its "
                                "dequantised %.9g gives %d",
                                a.bn, split, i, cat, (double)dq, quant_ref(dq, cat_scale, cat_zp));
                }
                ASSERT_TRUE(off_by_one * 1000 <= n_bytes);
                free(h0), free(h1), free(h2), free(h3);
            }
            CK(cudaFree(y3));
            CK(cudaFree(y0));
            CK(cudaFree(y1));
            CK(cudaFree(y2));
            if (a.ws != NULL)
                CK(cudaFree(a.ws));
        }
    CK(cudaFree(dres));
    free(res), free(res_nhwc), free(want);
}

static void qconv_case(const struct qcase *c)
{
    const struct eb_conv2d_desc d = {
        .n = c->n,
        .ic = c->ic,
        .ih = c->ih,
        .iw = c->iw,
        .oc = c->oc,
        .oh = (c->ih + 2 * c->ph - c->dh * (c->kh - 1) - 1) / c->sh + 1,
        .ow = (c->iw + 2 * c->pw - c->dw * (c->kw - 1) - 1) / c->sw + 1,
        .kh = c->kh,
        .kw = c->kw,
        .groups = c->groups,
        .stride_h = c->sh,
        .stride_w = c->sw,
        .pad_t = c->ph,
        .pad_l = c->pw,
        .dil_h = c->dh,
        .dil_w = c->dw};
    const int64_t plane_in = d.ih * d.iw, plane = d.oh * d.ow, icg = d.ic / d.groups;
    const size_t nx = (size_t)(d.n * d.ic * plane_in), nw = (size_t)(d.oc * icg * d.kh * d.kw);
    const size_t ny = (size_t)(d.n * d.oc * plane);
    uint8_t *x = malloc(nx), *w = malloc(nw);
    int32_t *wz = calloc((size_t)d.oc, 4), *acc = malloc(ny * 4);
    float *mult = malloc((size_t)d.oc * 4), *bias = malloc((size_t)d.oc * 4);
    ASSERT_TRUE(x && w && wz && acc && mult && bias);
    const int32_t x_zp = 131;
    for (size_t i = 0; i < nx; i++) /* extremes in the mix */
        x[i] = i % 17 == 0 ? 255 : i % 19 == 0 ? 0 : (uint8_t)frand(0, 255.99f);
    for (size_t i = 0; i < nw; i++)
        w[i] = c->w_signed ? (uint8_t)(int8_t)(i % 23 == 0 ? -128 : (int)frand(-127, 127.99f))
                           : (uint8_t)frand(0, 255.99f);
    for (int64_t k = 0; k < d.oc; k++) {
        wz[k] = c->w_zp ? (int32_t)(k % 5) * 7 : 0;
        mult[k] = frand(0.5f, 2.0f) / (float)(40 * icg * d.kh * d.kw);
        bias[k] = frand(-30, 30);
    }
    eb_cpu_conv2d_u8_i32__ref(&d, x, x_zp, w, c->w_signed, wz, (size_t)d.oc, acc);
    /* x channels-last with x_pix_extra bytes after each pixel's channels */
    const int64_t x_pix = d.ic + c->x_pix_extra;
    uint8_t *xh = calloc((size_t)(d.n * plane_in * x_pix) + 16, 1);
    ASSERT_TRUE(xh != NULL);
    for (int64_t b = 0; b < d.n; b++)
        for (int64_t ch = 0; ch < d.ic; ch++)
            for (int64_t p = 0; p < plane_in; p++)
                xh[(b * plane_in + p) * x_pix + ch] = x[(b * d.ic + ch) * plane_in + p];
    struct eb_cuk_qconv q = {.n = (int32_t)d.n,
                             .ic = c->ic,
                             .ih = c->ih,
                             .iw = c->iw,
                             .oc = c->oc,
                             .oh = (int32_t)d.oh,
                             .ow = (int32_t)d.ow,
                             .kh = c->kh,
                             .kw = c->kw,
                             .sh = c->sh,
                             .sw = c->sw,
                             .pt = c->ph,
                             .pl = c->pw,
                             .dh = c->dh,
                             .dw = c->dw,
                             .groups = c->groups,
                             .x_n = (int32_t)(plane_in * x_pix),
                             .x_c = 1,
                             .x_pix = (int32_t)x_pix,
                             .x_zp = x_zp,
                             .w_signed = c->w_signed};
    q.dense = c->groups == 1 && c->w_signed && !c->w_zp;
    eb_cuk_qconv_dims(q.ic, q.kh, q.kw, &q.cp, &q.kp);
    void *dwt = NULL, *dsum = NULL;
    if (q.dense) {
        int8_t *packed = malloc((size_t)(q.oc * q.kp));
        int32_t *sum = malloc((size_t)q.oc * 4);
        ASSERT_TRUE(packed && sum);
        eb_cuk_qconv_pack(q.oc, q.ic, q.kh, q.kw, (const int8_t *)w, packed, sum);
        dwt = dalloc((size_t)(q.oc * q.kp));
        dsum = dalloc((size_t)q.oc * 4);
        CK(cudaMemcpy(dwt, packed, (size_t)(q.oc * q.kp), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dsum, sum, (size_t)q.oc * 4, cudaMemcpyHostToDevice));
        free(packed), free(sum);
    } else if (eb_cuk_qconv_dw(q.groups, q.ic, q.oc)) { /* w - w_zp as int16, tap-major */
        const size_t np = (size_t)((q.oc + 3) / 4 * 4 * q.kh * q.kw);
        int16_t *packed = malloc(np * 2);
        ASSERT_TRUE(packed != NULL);
        eb_cuk_qconv_pack_dw(q.oc, q.kh, q.kw, w, q.w_signed, wz, packed);
        dwt = dalloc(np * 2);
        dsum = dalloc((size_t)q.oc * 4);
        CK(cudaMemcpy(dwt, packed, np * 2, cudaMemcpyHostToDevice));
        free(packed);
    } else {
        dwt = dalloc(nw);
        dsum = dalloc((size_t)q.oc * 4);
        CK(cudaMemcpy(dwt, w, nw, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dsum, wz, (size_t)q.oc * 4, cudaMemcpyHostToDevice));
    }
    q.w = dwt;
    q.wsum = q.dense ? dsum : NULL;
    q.w_zp = q.dense ? NULL : dsum;
    float *dmult = up(EB_CUK_F32, mult, (size_t)d.oc), *dbias = up(EB_CUK_F32, bias, (size_t)d.oc);
    uint8_t lut[256];
    for (int i = 0; i < 256; i++)
        lut[i] = (uint8_t)(255 - i / 2);
    uint8_t *dlut = dalloc(256);
    CK(cudaMemcpy(dlut, lut, 256, cudaMemcpyHostToDevice));
    uint8_t *dx = dalloc((size_t)(d.n * plane_in * x_pix) + 16);
    CK(cudaMemcpy(dx, xh, (size_t)(d.n * plane_in * x_pix), cudaMemcpyHostToDevice));
    if (c->x_nchw) { /* x as ONNX lays it out, read where it is */
        CK(cudaMemcpy(dx, x, (size_t)(d.n * d.ic * plane_in), cudaMemcpyHostToDevice));
        q.x_n = (int32_t)(d.ic * plane_in), q.x_c = (int32_t)plane_in, q.x_pix = 1;
    }
    if (c->y_nchw) {
        q.y_n = (int32_t)(d.oc * plane), q.y_c = (int32_t)plane, q.y_p = 1;
    } else {
        q.y_n = (int32_t)(plane * d.oc), q.y_c = 1, q.y_p = (int32_t)d.oc;
    }
    /* where NCHW element i = (b, k, p) lands in y */
#define YAT(i)                                                                                     \
    ((int64_t)((i) / (d.oc * plane)) * q.y_n + ((i) / plane % d.oc) * q.y_c + (i) % plane * q.y_p)
    /* 1. the exact accumulator: float output, mult 1, bias 0; dense convs also with their k
     * split over 2 or 3 blocks (run twice: the kernel leaves its sums and counters zero) */
    const int nk = q.kp / 64, max_split = q.dense ? (nk >= 3 ? 3 : nk) : 1;
    /* dense convs with each tile width: 16, 32 and 64 output channels a block */
    static const int32_t widths[] = {16, 32, 64};
    const int first_width = q.dense ? 0 : 2;
    for (int wi = first_width; wi < 3; wi++)
        for (int split = 1; split <= max_split; split++) {
            float *ones = malloc((size_t)d.oc * 4), *zeros = calloc((size_t)d.oc, 4);
            for (int64_t k = 0; k < d.oc; k++)
                ones[k] = 1.0f;
            struct eb_cuk_qconv a = q;
            a.mult = up(EB_CUK_F32, ones, (size_t)d.oc);
            a.bias = up(EB_CUK_F32, zeros, (size_t)d.oc);
            a.y_kind = EB_CUK_QY_F32;
            a.bn = widths[wi];
            a.splits = split;
            split_k_workspace(&a);
            for (int rep = 0; rep < (split > 1 ? 2 : 1); rep++) {
                void *dy = dalloc(ny * 4);
                CK(eb_cuk_qconv(0, &a, dx, dy));
                float *got = down(EB_CUK_F32, dy, ny);
                for (size_t i = 0; i < ny; i++)
                    if (got[YAT((int64_t)i)] != (float)acc[i])
                        EB_FAIL(
                            "ic %d oc %d %dx%d g%d width %d split %d run %d: accumulator %zu is "
                            "%.0f, the reference %d",
                            c->ic, c->oc, c->kh, c->kw, c->groups, a.bn, split, rep, i,
                            got[YAT((int64_t)i)], acc[i]);
                free(got);
            }
            if (a.ws != NULL)
                CK(cudaFree(a.ws));
            CK(cudaFree((void *)a.mult));
            CK(cudaFree((void *)a.bias));
            free(ones), free(zeros);
        }
    /* 2. requantised bytes (uint8, int8, through a table): the CPU's requantisation, bit for bit */
    for (int wi = first_width; wi < 3; wi++)
        for (int mode = 0; mode < 3; mode++) {
            struct eb_cuk_qconv a = q;
            a.bn = widths[wi];
            a.mult = dmult, a.bias = dbias, a.quant = 1, a.y_kind = EB_CUK_QY_BYTE;
            a.y_signed = mode == 1, a.y_zp = mode == 1 ? -3 : 121, a.lut = mode == 2 ? dlut : NULL;
            struct eb_qconv_params p = {
                .y_signed = a.y_signed, .y_zp = a.y_zp, .lut = mode == 2 ? lut : NULL};
            uint8_t *want = malloc(ny), *got = malloc(ny);
            for (size_t i = 0; i < ny; i++) {
                const int64_t k = (int64_t)i / plane % d.oc;
                eb_cpu_requant_i32(&p, 1, &acc[i], mult[k], bias[k], &want[i]);
            }
            uint8_t *dy = dalloc(ny);
            CK(eb_cuk_qconv(0, &a, dx, dy));
            CK(cudaDeviceSynchronize());
            uint8_t *raw = malloc(ny);
            CK(cudaMemcpy(raw, dy, ny, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < ny; i++)
                got[i] = raw[YAT((int64_t)i)];
            for (size_t i = 0; i < ny; i++)
                if (got[i] != want[i])
                    EB_FAIL("ic %d oc %d g%d width %d mode %d: byte %zu is %d, the CPU's %d", c->ic,
                            c->oc, c->groups, a.bn, mode, i, got[i], want[i]);
            CK(cudaFree(dy));
            free(want), free(got), free(raw);
        }
    /* 3. float output with SiLU in half, and fused into a QuantizeLinear (float): the reference
     * activation (exp may differ by an ulp: a byte may move by one step at a rounding tie) */
    for (int wi = first_width; wi < 3; wi++) {
        struct eb_cuk_qconv a = q;
        a.bn = widths[wi];
        a.mult = dmult, a.bias = dbias, a.act = EB_ACT_SILU, a.y_kind = EB_CUK_QY_F16;
        float *want = malloc(ny * 4);
        for (size_t i = 0; i < ny; i++) {
            const int64_t k = (int64_t)i / plane % d.oc;
            want[i] = eb_cpu_act_f32__ref(EB_ACT_SILU, 0, 0, (float)acc[i] * mult[k] + bias[k]);
        }
        void *dy = dalloc(ny * 2);
        CK(eb_cuk_qconv(0, &a, dx, dy));
        float *got = down(EB_CUK_F16, dy, ny), *ordered = malloc(ny * 4);
        for (size_t i = 0; i < ny; i++)
            ordered[i] = got[YAT((int64_t)i)];
        expect_close("qconv silu f16", EB_CUK_F16, ordered, want, ny);
        a.y_kind = EB_CUK_QY_BYTE, a.fq_on = 1, a.fq_scale = 0.37f, a.fq_zp = 7, a.y_signed = 0;
        uint8_t *dq = dalloc(ny), *raw = malloc(ny);
        CK(eb_cuk_qconv(0, &a, dx, dq));
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(raw, dq, ny, cudaMemcpyDeviceToHost));
        size_t off_by_one = 0;
        for (size_t i = 0; i < ny; i++) {
            float r = nearbyintf(want[i] / 0.37f) + 7.0f;
            r = r < 0 ? 0 : r > 255 ? 255 : r;
            const int diff = abs((int)raw[YAT((int64_t)i)] - (int)r);
            if (diff > 1)
                EB_FAIL("fused quantize: byte %zu is %d, the reference %d", i, raw[YAT((int64_t)i)],
                        (int)r);
            off_by_one += diff == 1;
        }
        ASSERT_TRUE(off_by_one * 1000 <= ny);
        CK(cudaFree(dq));
        free(got), free(ordered), free(want), free(raw);
    }
#undef YAT
    qconv_fused_outputs(&q, &d, acc, mult, bias, dmult, dbias, dx, first_width, max_split);
    printf("qconv n%d ic%d %dx%d s%d d%d g%d oc%d%s%s%s: exact\n", c->n, c->ic, c->kh, c->kw, c->sh,
           c->dh, c->groups, c->oc,
           eb_cuk_qconv_dw(q.groups, q.ic, q.oc) ? " (depthwise)"
           : !q.dense                            ? " (direct)"
           : eb_cuk_qconv_small(q.ic, q.kh, q.kw, q.oc)
               ? " (the image's dp4a kernel)"
               : " (tensor cores, widths 16/32/64, split-k 1..3)",
           c->x_pix_extra ? " x rows wider"
           : c->x_nchw    ? " x nchw"
                          : "",
           c->y_nchw ? " y nchw" : "");
    CK(cudaFree(dx));
    CK(cudaFree(dwt));
    CK(cudaFree(dsum));
    CK(cudaFree(dmult));
    CK(cudaFree(dbias));
    CK(cudaFree(dlut));
    free(x), free(w), free(wz), free(acc), free(mult), free(bias), free(xh);
}

/* The int8 conv's division-free n / d (kernels.h, eb_cuk_fdiv; its set-up divides pixels by the
 * plane and the row, chunks by the channel groups and taps by kw): exact for every divisor a
 * conv can have and every n it divides, edges and random values. Runs without a GPU. */
EB_TEST(fdiv_matches_division)
{
    static const uint32_t big[] = {409600u,  102400u,         1048583u,
                                   1u << 30, (1u << 31) - 1u, 3u * 640u};
    for (uint32_t i = 0; i < 4096 + sizeof(big) / sizeof(big[0]); i++) {
        const uint32_t d = i < 4096 ? i + 1 : big[i - 4096];
        const struct eb_cuk_fdiv f = eb_cuk_fdiv_of(d);
        uint32_t ns[16] = {0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, 0x7fffffffu, 0x7ffffffeu};
        for (int j = 9; j < 16; j++) {
            rng = rng * 1664525u + 1013904223u;
            ns[j] = rng >> 1;
        }
        for (int j = 0; j < 16; j++) {
            const uint32_t n = ns[j] & 0x7fffffffu;
            if (eb_cuk_fdiv_host(f, n) != n / d)
                EB_FAIL("%u / %u: %u, not %u (mul %u, shr %u)", n, d, eb_cuk_fdiv_host(f, n), n / d,
                        f.mul, f.shr);
        }
    }
}

EB_TEST(qconv_matches_cpu_integer_reference)
{
    need_gpu();
    static const struct qcase cases[] = {
        /* n  ic  ih  iw  oc kh kw sh sw ph pw dh dw  g  ws wz xpad y_nchw x_nchw */
        {2, 16, 7, 9, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},    /* vector loads */
        {1, 3, 13, 11, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},   /* the image's conv */
        {2, 3, 13, 11, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1},   /* ... reading NCHW x */
        {1, 3, 9, 10, 22, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1},    /* ... oc 22, NCHW out */
        {1, 3, 7, 6, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},     /* ... oc past 64 */
        {2, 16, 6, 5, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1},    /* NCHW x, 16 channels */
        {1, 40, 5, 6, 70, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 0},    /* ragged, NCHW out */
        {1, 64, 12, 10, 130, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0}, /* stride + dilation */
        {1, 32, 9, 9, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 32, 0, 0},   /* a slice of wider rows */
        {1, 256, 4, 4, 72, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},   /* long k */
        {1, 13, 9, 8, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},    /* taps packed tight */
        {1, 24, 8, 8, 24, 3, 3, 2, 2, 1, 1, 1, 1, 24, 1, 0, 0, 0, 0},   /* depthwise */
        {2, 24, 8, 8, 24, 3, 3, 2, 2, 1, 1, 1, 1, 24, 1, 0, 0, 0, 1},   /* depthwise, NCHW x */
        {2, 64, 9, 11, 64, 3, 3, 1, 1, 1, 1, 1, 1, 64, 1, 0, 0, 0, 0},  /* depthwise, word loads */
        {1, 22, 7, 6, 22, 3, 3, 1, 1, 1, 1, 1, 1, 22, 1, 0, 0, 1, 0},   /* ... oc 22, NCHW out */
        {1, 20, 9, 9, 20, 5, 5, 2, 2, 4, 4, 2, 2, 20, 0, 1, 3, 0, 0},   /* ... 5x5, u8 w, zp */
        {1, 16, 8, 7, 16, 5, 5, 1, 1, 2, 2, 1, 1, 16, 1, 0, 0, 0, 0},   /* ... 5x5, word loads */
        {1, 32, 6, 5, 32, 3, 3, 1, 1, 1, 1, 1, 1, 32, 1, 1, 32, 0, 0},  /* ... rows wider, zp */
        {1, 8, 6, 7, 12, 3, 3, 1, 1, 1, 1, 1, 1, 4, 0, 1, 0, 1, 0},     /* groups, uint8 w, zp */
        {1, 16, 1, 1, 5, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0},     /* one pixel */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        qconv_case(&cases[i]);
}
