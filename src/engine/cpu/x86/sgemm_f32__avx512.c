/*
 * AVX-512 SGEMM micro-kernel (8x32: 16 zmm accumulators) and tile epilogue: the AVX2 kernel
 * widened to 16 lanes; column tails of the
 * epilogue go through a small stack buffer.
 */
#include <immintrin.h>

#include "engine/cpu/gemm.h"

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

/*
 * The tile in assembly: zmm0..15 accumulate rows 0..7 (two 16-column halves each); per k step
 * two B loads (zmm30, zmm31), then per row one vbroadcastss of its A value from memory (a load,
 * no shuffle; zmm28/29 in turn) and two register FMAs. The FMAs used to take A as an embedded
 * broadcast ({1to16}, 18 fused uops a step instead of 26), but on a Zen 5 core the broadcast
 * loads of their own run at the FMA ports' peak (about 210 GFLOP/s a core in L1, against 175 to
 * 190 with {1to16}; bench_kernels' micro-kernel line). On Intel's AVX-512 cores (not measured
 * here) a broadcast load is one load-port uop, and 26 uops fit the 8 cycles the 16 FMAs take.
 * Then the rows are stored to C (row stride ldc), added to what C holds when accumulating.
 * B row p is at b + 32p (packed) or b + boff[p] (direct); A is k-major, 8 floats per step;
 * k >= 1.
 */
#define ZERO_ACC                                                                                   \
    "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"                                                            \
    "vxorps %%xmm1, %%xmm1, %%xmm1\n\t"                                                            \
    "vxorps %%xmm2, %%xmm2, %%xmm2\n\t"                                                            \
    "vxorps %%xmm3, %%xmm3, %%xmm3\n\t"                                                            \
    "vxorps %%xmm4, %%xmm4, %%xmm4\n\t"                                                            \
    "vxorps %%xmm5, %%xmm5, %%xmm5\n\t"                                                            \
    "vxorps %%xmm6, %%xmm6, %%xmm6\n\t"                                                            \
    "vxorps %%xmm7, %%xmm7, %%xmm7\n\t"                                                            \
    "vxorps %%xmm8, %%xmm8, %%xmm8\n\t"                                                            \
    "vxorps %%xmm9, %%xmm9, %%xmm9\n\t"                                                            \
    "vxorps %%xmm10, %%xmm10, %%xmm10\n\t"                                                         \
    "vxorps %%xmm11, %%xmm11, %%xmm11\n\t"                                                         \
    "vxorps %%xmm12, %%xmm12, %%xmm12\n\t"                                                         \
    "vxorps %%xmm13, %%xmm13, %%xmm13\n\t"                                                         \
    "vxorps %%xmm14, %%xmm14, %%xmm14\n\t"                                                         \
    "vxorps %%xmm15, %%xmm15, %%xmm15\n\t"
#define FMA_ROWS                                                                                   \
    "vbroadcastss 0(%[a]), %%zmm28\n\t"                                                            \
    "vfmadd231ps %%zmm28, %%zmm30, %%zmm0\n\t"                                                     \
    "vfmadd231ps %%zmm28, %%zmm31, %%zmm1\n\t"                                                     \
    "vbroadcastss 4(%[a]), %%zmm29\n\t"                                                            \
    "vfmadd231ps %%zmm29, %%zmm30, %%zmm2\n\t"                                                     \
    "vfmadd231ps %%zmm29, %%zmm31, %%zmm3\n\t"                                                     \
    "vbroadcastss 8(%[a]), %%zmm28\n\t"                                                            \
    "vfmadd231ps %%zmm28, %%zmm30, %%zmm4\n\t"                                                     \
    "vfmadd231ps %%zmm28, %%zmm31, %%zmm5\n\t"                                                     \
    "vbroadcastss 12(%[a]), %%zmm29\n\t"                                                           \
    "vfmadd231ps %%zmm29, %%zmm30, %%zmm6\n\t"                                                     \
    "vfmadd231ps %%zmm29, %%zmm31, %%zmm7\n\t"                                                     \
    "vbroadcastss 16(%[a]), %%zmm28\n\t"                                                           \
    "vfmadd231ps %%zmm28, %%zmm30, %%zmm8\n\t"                                                     \
    "vfmadd231ps %%zmm28, %%zmm31, %%zmm9\n\t"                                                     \
    "vbroadcastss 20(%[a]), %%zmm29\n\t"                                                           \
    "vfmadd231ps %%zmm29, %%zmm30, %%zmm10\n\t"                                                    \
    "vfmadd231ps %%zmm29, %%zmm31, %%zmm11\n\t"                                                    \
    "vbroadcastss 24(%[a]), %%zmm28\n\t"                                                           \
    "vfmadd231ps %%zmm28, %%zmm30, %%zmm12\n\t"                                                    \
    "vfmadd231ps %%zmm28, %%zmm31, %%zmm13\n\t"                                                    \
    "vbroadcastss 28(%[a]), %%zmm29\n\t"                                                           \
    "vfmadd231ps %%zmm29, %%zmm30, %%zmm14\n\t"                                                    \
    "vfmadd231ps %%zmm29, %%zmm31, %%zmm15\n\t"
#define STORE_ROWS                                                                                 \
    "vmovups %%zmm0, (%[c])\n\t"                                                                   \
    "vmovups %%zmm1, 64(%[c])\n\t"                                                                 \
    "add %[ldc], %[c]\n\t"                                                                         \
    "vmovups %%zmm2, (%[c])\n\t"                                                                   \
    "vmovups %%zmm3, 64(%[c])\n\t"                                                                 \
    "add %[ldc], %[c]\n\t"                                                                         \
    "vmovups %%zmm4, (%[c])\n\t"                                                                   \
    "vmovups %%zmm5, 64(%[c])\n\t"                                                                 \
    "add %[ldc], %[c]\n\t"                                                                         \
    "vmovups %%zmm6, (%[c])\n\t"                                                                   \
    "vmovups %%zmm7, 64(%[c])\n\t"                                                                 \
    "add %[ldc], %[c]\n\t"                                                                         \
    "vmovups %%zmm8, (%[c])\n\t"                                                                   \
    "vmovups %%zmm9, 64(%[c])\n\t"                                                                 \
    "add %[ldc], %[c]\n\t"                                                                         \
    "vmovups %%zmm10, (%[c])\n\t"                                                                  \
    "vmovups %%zmm11, 64(%[c])\n\t"                                                                \
    "add %[ldc], %[c]\n\t"                                                                         \
    "vmovups %%zmm12, (%[c])\n\t"                                                                  \
    "vmovups %%zmm13, 64(%[c])\n\t"                                                                \
    "add %[ldc], %[c]\n\t"                                                                         \
    "vmovups %%zmm14, (%[c])\n\t"                                                                  \
    "vmovups %%zmm15, 64(%[c])\n\t"
#define ACC_STORE_ROWS                                                                             \
    "vaddps (%[c]), %%zmm0, %%zmm0\n\t"                                                            \
    "vaddps 64(%[c]), %%zmm1, %%zmm1\n\t"                                                          \
    "vmovups %%zmm0, (%[c])\n\t"                                                                   \
    "vmovups %%zmm1, 64(%[c])\n\t"                                                                 \
    "add %[ldc], %[c]\n\t"                                                                         \
    "vaddps (%[c]), %%zmm2, %%zmm2\n\t"                                                            \
    "vaddps 64(%[c]), %%zmm3, %%zmm3\n\t"                                                          \
    "vmovups %%zmm2, (%[c])\n\t"                                                                   \
    "vmovups %%zmm3, 64(%[c])\n\t"                                                                 \
    "add %[ldc], %[c]\n\t"                                                                         \
    "vaddps (%[c]), %%zmm4, %%zmm4\n\t"                                                            \
    "vaddps 64(%[c]), %%zmm5, %%zmm5\n\t"                                                          \
    "vmovups %%zmm4, (%[c])\n\t"                                                                   \
    "vmovups %%zmm5, 64(%[c])\n\t"                                                                 \
    "add %[ldc], %[c]\n\t"                                                                         \
    "vaddps (%[c]), %%zmm6, %%zmm6\n\t"                                                            \
    "vaddps 64(%[c]), %%zmm7, %%zmm7\n\t"                                                          \
    "vmovups %%zmm6, (%[c])\n\t"                                                                   \
    "vmovups %%zmm7, 64(%[c])\n\t"                                                                 \
    "add %[ldc], %[c]\n\t"                                                                         \
    "vaddps (%[c]), %%zmm8, %%zmm8\n\t"                                                            \
    "vaddps 64(%[c]), %%zmm9, %%zmm9\n\t"                                                          \
    "vmovups %%zmm8, (%[c])\n\t"                                                                   \
    "vmovups %%zmm9, 64(%[c])\n\t"                                                                 \
    "add %[ldc], %[c]\n\t"                                                                         \
    "vaddps (%[c]), %%zmm10, %%zmm10\n\t"                                                          \
    "vaddps 64(%[c]), %%zmm11, %%zmm11\n\t"                                                        \
    "vmovups %%zmm10, (%[c])\n\t"                                                                  \
    "vmovups %%zmm11, 64(%[c])\n\t"                                                                \
    "add %[ldc], %[c]\n\t"                                                                         \
    "vaddps (%[c]), %%zmm12, %%zmm12\n\t"                                                          \
    "vaddps 64(%[c]), %%zmm13, %%zmm13\n\t"                                                        \
    "vmovups %%zmm12, (%[c])\n\t"                                                                  \
    "vmovups %%zmm13, 64(%[c])\n\t"                                                                \
    "add %[ldc], %[c]\n\t"                                                                         \
    "vaddps (%[c]), %%zmm14, %%zmm14\n\t"                                                          \
    "vaddps 64(%[c]), %%zmm15, %%zmm15\n\t"                                                        \
    "vmovups %%zmm14, (%[c])\n\t"                                                                  \
    "vmovups %%zmm15, 64(%[c])\n\t"

/* The end of the k loop (A advanced by one step), then the rows stored, or added to C. */
#define TILE_END                                                                                   \
    "dec %[k]\n\t"                                                                                 \
    "jnz 1b\n\t"                                                                                   \
    "test %[acc], %[acc]\n\t"                                                                      \
    "jnz 2f\n\t" STORE_ROWS "jmp 3f\n\t"                                                           \
    "2:\n\t" ACC_STORE_ROWS "3:\n\t"                                                               \
    "vzeroupper\n\t"

#define TILE_CLOBBERS                                                                              \
    "zmm0", "zmm1", "zmm2", "zmm3", "zmm4", "zmm5", "zmm6", "zmm7", "zmm8", "zmm9", "zmm10",       \
        "zmm11", "zmm12", "zmm13", "zmm14", "zmm15", "zmm28", "zmm29", "zmm30", "zmm31", "cc",     \
        "memory"

AVX512 static void tile_8x32_packed(int64_t k, const float *a, const float *b, float *c,
                                    int64_t ldc, int accumulate)
{
    const int64_t ldc_bytes = ldc * (int64_t)sizeof(float);
    __asm__ volatile(ZERO_ACC "1:\n\t"
                              "vmovups (%[b]), %%zmm30\n\t"
                              "vmovups 64(%[b]), %%zmm31\n\t" FMA_ROWS "add $128, %[b]\n\t"
                              "add $32, %[a]\n\t" TILE_END
                     : [a] "+r"(a), [b] "+r"(b), [k] "+r"(k), [c] "+r"(c)
                     : [ldc] "r"(ldc_bytes), [acc] "r"(accumulate)
                     : TILE_CLOBBERS);
}

AVX512 static void tile_8x32_direct(int64_t k, const float *a, const float *b, const int32_t *boff,
                                    float *c, int64_t ldc, int accumulate)
{
    const int64_t ldc_bytes = ldc * (int64_t)sizeof(float);
    __asm__ volatile(ZERO_ACC "1:\n\t"
                              "movslq (%[off]), %%rax\n\t"
                              "vmovups (%[b],%%rax,4), %%zmm30\n\t"
                              "vmovups 64(%[b],%%rax,4), %%zmm31\n\t" FMA_ROWS "add $4, %[off]\n\t"
                              "add $32, %[a]\n\t" TILE_END
                     : [a] "+r"(a), [off] "+r"(boff), [k] "+r"(k), [c] "+r"(c)
                     : [b] "r"(b), [ldc] "r"(ldc_bytes), [acc] "r"(accumulate)
                     : "rax", TILE_CLOBBERS);
}

/* k = 0: C = 0, or C unchanged when accumulating (the assembly loop needs k >= 1). */
static void empty_tile(float *c, int64_t ldc, int accumulate)
{
    for (int r = 0; r < 8 && !accumulate; r++)
        for (int j = 0; j < 32; j++)
            c[r * ldc + j] = 0.0f;
}

AVX512 void eb_cpu_sgemm_f32_8x32__avx512(int64_t k, const float *a, const float *b, float *c,
                                          int64_t ldc, int accumulate)
{
    if (k < 1) {
        empty_tile(c, ldc, accumulate);
        return;
    }
    tile_8x32_packed(k, a, b, c, ldc, accumulate);
}

AVX512 void eb_cpu_sgemm_f32_8x32_direct__avx512(int64_t k, const float *a, const float *b,
                                                 const int32_t *boff, float *c, int64_t ldc,
                                                 int accumulate)
{
    if (k < 1) {
        empty_tile(c, ldc, accumulate);
        return;
    }
    tile_8x32_direct(k, a, b, boff, c, ldc, accumulate);
}

/* exp(x): x = n ln2 + r, |r| <= ln2/2, exp(r) by a degree-6 polynomial, times 2^n by vscalefps
 * (no exponent-field arithmetic). Input clamped to [-87.3, 88.3] as in the AVX2 version, so the
 * two agree; rel. err ~2e-7. */
AVX512 static inline __attribute__((always_inline)) __m512 exp512(__m512 x)
{
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.3f)), _mm512_set1_ps(88.3f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(p, n);
}

/* 1/d for d >= 1: the 14-bit estimate and one Newton step (rel. err ~1e-8). */
AVX512 static inline __attribute__((always_inline)) __m512 recip512(__m512 d)
{
    const __m512 r = _mm512_rcp14_ps(d);
    return _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0f)));
}

/* act(v); every caller passes a constant `act`, so the switch is folded away. */
AVX512 static inline __attribute__((always_inline)) __m512
act512(enum eb_act act, const struct eb_epilogue *e, __m512 v)
{
    const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
    switch (act) {
    case EB_ACT_NONE: return v;
    case EB_ACT_RELU: return _mm512_max_ps(v, zero);
    case EB_ACT_LEAKY_RELU:
        return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v,
                                    _mm512_mul_ps(v, _mm512_set1_ps(e->alpha)));
    case EB_ACT_CLIP:
        return _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(e->alpha)), _mm512_set1_ps(e->beta));
    case EB_ACT_SIGMOID: return recip512(_mm512_add_ps(one, exp512(_mm512_sub_ps(zero, v))));
    case EB_ACT_SILU:
        return _mm512_mul_ps(v, recip512(_mm512_add_ps(one, exp512(_mm512_sub_ps(zero, v)))));
    case EB_ACT_HARD_SIGMOID: {
        __m512 t = _mm512_fmadd_ps(v, _mm512_set1_ps(e->alpha), _mm512_set1_ps(e->beta));
        return _mm512_min_ps(_mm512_max_ps(t, zero), one);
    }
    case EB_ACT_HARD_SWISH: {
        __m512 t = _mm512_add_ps(_mm512_div_ps(v, _mm512_set1_ps(6.0f)), _mm512_set1_ps(0.5f));
        return _mm512_mul_ps(v, _mm512_min_ps(_mm512_max_ps(t, zero), one));
    }
    case EB_ACT_TANH: {
        /* tanh(v) = 1 - 2 / (exp(2v) + 1) */
        __m512 t = exp512(_mm512_add_ps(v, v));
        return _mm512_sub_ps(one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(t, one)));
    }
    }
    return v;
}

/* The epilogue with fake quantisation (QDQ models run as float): one vector at a time, the
 * activation chosen per vector. */
AVX512 static void epilogue_fq512(const struct eb_epilogue *e, const float *bias, int64_t m,
                                  int64_t n, const float *s, int64_t lds, float *c, int64_t ldc,
                                  const float *r, int64_t ldr)
{
    const __m512 scale = _mm512_set1_ps(e->fq_scale), zp = _mm512_set1_ps((float)e->fq_zp);
    const __m512 qmin = _mm512_set1_ps((float)e->fq_qmin), qmax = _mm512_set1_ps((float)e->fq_qmax);
    for (int64_t i = 0; i < m; i++) {
        float *ci = c + i * ldc;
        const float *si = s + i * lds;
        const float *ri = e->residual ? r + i * ldr : NULL;
        const __m512 bv = _mm512_set1_ps(bias != NULL ? bias[i] : 0.0f);
        for (int64_t j = 0; j < n; j += 16) {
            const __mmask16 k = (__mmask16)(n - j < 16 ? (1u << (n - j)) - 1u : 0xFFFFu);
            __m512 v = act512(e->act, e, _mm512_add_ps(_mm512_maskz_loadu_ps(k, si + j), bv));
            if (ri != NULL)
                v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, ri + j));
            __m512 q = _mm512_roundscale_ps(_mm512_div_ps(v, scale),
                                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            q = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(q, zp), qmin), qmax);
            _mm512_mask_storeu_ps(ci + j, k, _mm512_mul_ps(_mm512_sub_ps(q, zp), scale));
        }
    }
}

/* Rows of c = act(s + bias[row]) (+ r) with `act` and `res` constants at each call site (the
 * dispatch below), two vectors per step; a row's last n % 16 columns through masked loads. */
AVX512 static inline __attribute__((always_inline)) void
epilogue_rows512(enum eb_act act, int res, const struct eb_epilogue *e, const float *bias,
                 int64_t m, int64_t n, const float *s, int64_t lds, float *c, int64_t ldc,
                 const float *r, int64_t ldr)
{
    const __mmask16 k = (__mmask16)((1u << (n % 16)) - 1u);
    for (int64_t i = 0; i < m; i++) {
        float *ci = c + i * ldc;
        const float *si = s + i * lds, *ri = res ? r + i * ldr : NULL;
        const __m512 bv = _mm512_set1_ps(bias != NULL ? bias[i] : 0.0f);
        int64_t j = 0;
        for (; j + 32 <= n; j += 32) {
            __m512 v0 = act512(act, e, _mm512_add_ps(_mm512_loadu_ps(si + j), bv));
            __m512 v1 = act512(act, e, _mm512_add_ps(_mm512_loadu_ps(si + j + 16), bv));
            if (res) {
                v0 = _mm512_add_ps(v0, _mm512_loadu_ps(ri + j));
                v1 = _mm512_add_ps(v1, _mm512_loadu_ps(ri + j + 16));
            }
            _mm512_storeu_ps(ci + j, v0);
            _mm512_storeu_ps(ci + j + 16, v1);
        }
        if (j + 16 <= n) {
            __m512 v = act512(act, e, _mm512_add_ps(_mm512_loadu_ps(si + j), bv));
            if (res)
                v = _mm512_add_ps(v, _mm512_loadu_ps(ri + j));
            _mm512_storeu_ps(ci + j, v);
            j += 16;
        }
        if (k != 0) {
            __m512 v = act512(act, e, _mm512_add_ps(_mm512_maskz_loadu_ps(k, si + j), bv));
            if (res)
                v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, ri + j));
            _mm512_mask_storeu_ps(ci + j, k, v);
        }
    }
}

AVX512 void eb_cpu_epilogue_tile_f32__avx512(const struct eb_epilogue *e, const float *bias,
                                             int64_t m, int64_t n, const float *s, int64_t lds,
                                             float *c, int64_t ldc, const float *r, int64_t ldr)
{
    if (e->fake_quant) {
        epilogue_fq512(e, bias, m, n, s, lds, c, ldc, r, ldr);
        return;
    }
#define ROWS(A, R) epilogue_rows512(A, R, e, bias, m, n, s, lds, c, ldc, r, ldr)
    EB_EPILOGUE_SPECIALISE(e, ROWS);
#undef ROWS
}

/* Channel-blocked output (gemm.h, eb_cl_epilogue_fn), `act` and `res` constants at each call
 * site (the dispatch below): per channel vector its bias in a register, two pixels per step. */
AVX512 static inline __attribute__((always_inline)) void
cl_epilogue512(enum eb_act act, int res, const struct eb_epilogue *e, const float *bias, int64_t n,
               int nv, const float *buf, int ob, float *y, int64_t y_bs, const float *r)
{
    for (int v = 0; v < nv; v++) {
        const __m512 bv = _mm512_loadu_ps(bias + v * 16);
        const float *s = buf + v * 16;
        float *yv = y + v * y_bs;
        const float *rv = res ? r + v * y_bs : NULL;
        int64_t q = 0;
        for (; q + 2 <= n; q += 2) {
            __m512 a0 = act512(act, e, _mm512_add_ps(_mm512_loadu_ps(s + q * ob), bv));
            __m512 a1 = act512(act, e, _mm512_add_ps(_mm512_loadu_ps(s + (q + 1) * ob), bv));
            if (res) {
                a0 = _mm512_add_ps(a0, _mm512_loadu_ps(rv + q * 16));
                a1 = _mm512_add_ps(a1, _mm512_loadu_ps(rv + q * 16 + 16));
            }
            _mm512_storeu_ps(yv + q * 16, a0);
            _mm512_storeu_ps(yv + q * 16 + 16, a1);
        }
        if (q < n) {
            __m512 a = act512(act, e, _mm512_add_ps(_mm512_loadu_ps(s + q * ob), bv));
            if (res)
                a = _mm512_add_ps(a, _mm512_loadu_ps(rv + q * 16));
            _mm512_storeu_ps(yv + q * 16, a);
        }
    }
}

AVX512 void eb_cpu_cl_epilogue_f32__avx512(const struct eb_epilogue *e, const float *bias,
                                           int64_t n, int nv, const float *buf, int ob, float *y,
                                           int64_t y_bs, const float *r)
{
#define ROWS(A, R) cl_epilogue512(A, R, e, bias, n, nv, buf, ob, y, y_bs, r)
    EB_EPILOGUE_SPECIALISE(e, ROWS);
#undef ROWS
}

/*
 * Channel-blocked convolution (gemm.h, eb_conv_cl_fn): 12 output pixels x 32 output channels
 * in 24 zmm accumulators; per input channel and tap two weight loads, and per pixel one
 * broadcast load of its value and two FMAs (the broadcast of its own, not an embedded {1to16}
 * in each FMA, for the reason given at the SGEMM tile above: 5 to 15% faster layers on a Zen 5
 * core, bench_kernels). Input channels come in blocks of 16; a full block's 16 steps are
 * unrolled so that every input address is the tap's base plus a constant when the pixel stride
 * xps is a constant (stride 1 and 2 below). The row's last pixels (n_px % 12) go through a 10-
 * or 8-pixel tile and then 4-pixel tiles, and a block with at most 16 output channels wanted
 * (olen) through one-vector tiles, so a 40-pixel row of 80 channels computes nothing it throws
 * away.
 */
/* The pixel's value broadcast by a load of its own (vbroadcastss m32: no shuffle), shared by the
 * row's two FMAs; in intrinsics the compiler would fold it into each FMA as {1to16}. */
AVX512 static inline __attribute__((always_inline)) __m512 bcast512(const float *p)
{
    __m512 v;
    __asm__("vbroadcastss %[m], %[v]" : [v] "=v"(v) : [m] "m"(*p));
    return v;
}

AVX512 static inline __attribute__((always_inline)) void zero_tile512(__m512 acc[12][2], int R)
{
#pragma GCC unroll 12
    for (int r = 0; r < R; r++)
        acc[r][0] = acc[r][1] = _mm512_setzero_ps();
}

/* The R x (16 NV) tile to out ([pixel][32]). */
AVX512 static inline __attribute__((always_inline)) void store_tile512(__m512 acc[12][2], int R,
                                                                       int NV, float *out)
{
#pragma GCC unroll 12
    for (int r = 0; r < R; r++) {
        _mm512_storeu_ps(out + r * 32, acc[r][0]);
        if (NV > 1)
            _mm512_storeu_ps(out + r * 32 + 16, acc[r][1]);
    }
}

/* One input channel step of an R x (16 NV) tile. */
AVX512 static inline __attribute__((always_inline)) void
cl_step512(__m512 acc[12][2], int R, int NV, const float *xt, int64_t xps, const float *wc)
{
    const __m512 w0 = _mm512_load_ps(wc), w1 = NV > 1 ? _mm512_load_ps(wc + 16) : w0;
#pragma GCC unroll 12
    for (int r = 0; r < R; r++) {
        const __m512 xv = bcast512(xt + r * xps);
        acc[r][0] = _mm512_fmadd_ps(xv, w0, acc[r][0]);
        if (NV > 1)
            acc[r][1] = _mm512_fmadd_ps(xv, w1, acc[r][1]);
    }
}

/* The R x (16 NV) tile of pixels [q, q + R). */
AVX512 static inline __attribute__((always_inline)) void
cl_tile512(int R, int NV, const float *x, int64_t xps, int64_t n_icb, int64_t xbs, int cb,
           int cn_last, const int32_t *toff, int taps, const float *w, float *out)
{
    __m512 acc[12][2];
    zero_tile512(acc, R);
    const float *wp = w;
    for (int64_t b = 0; b < n_icb; b++) {
        const float *xb = x + b * xbs;
        const int cn = b < n_icb - 1 ? cb : cn_last;
        for (int t = 0; t < taps; t++, wp += 16 * 32) {
            const float *xt = xb + toff[t];
            __asm__("" : "+r"(xt)); /* one base register: every address base + constant */
            if (cn == 16) {
#pragma GCC unroll 16
                for (int c = 0; c < 16; c++)
                    cl_step512(acc, R, NV, xt + c, xps, wp + c * 32);
            } else {
                for (int c = 0; c < cn; c++)
                    cl_step512(acc, R, NV, xt + c, xps, wp + c * 32);
            }
        }
    }
    store_tile512(acc, R, NV, out);
}

AVX512 static inline __attribute__((always_inline)) void
cl_row512(int NV, int64_t n_px, const float *x, int64_t xps, int64_t n_icb, int64_t xbs, int cb,
          int cn_last, const int32_t *toff, int taps, const float *w, float *out)
{
    int64_t q = 0;
    /* 11 left: one 12-pixel tile (10 + 4 would write past n_px rounded up to R) */
    for (; q + 11 <= n_px; q += 12)
        cl_tile512(12, NV, x + q * xps, xps, n_icb, xbs, cb, cn_last, toff, taps, w, out + q * 32);
    if (q + 10 <= n_px) { /* 10-wide rows (a 320 model's deepest maps) in one tile */
        cl_tile512(10, NV, x + q * xps, xps, n_icb, xbs, cb, cn_last, toff, taps, w, out + q * 32);
        q += 10;
    } else if (q + 8 <= n_px) {
        cl_tile512(8, NV, x + q * xps, xps, n_icb, xbs, cb, cn_last, toff, taps, w, out + q * 32);
        q += 8;
    }
    for (; q < n_px; q += 4)
        cl_tile512(4, NV, x + q * xps, xps, n_icb, xbs, cb, cn_last, toff, taps, w, out + q * 32);
}

/* The row with the pixel stride a constant where it is the stride-1 (16) or stride-2 (32) one. */
AVX512 static inline __attribute__((always_inline)) void
cl_row_by_stride512(int NV, int64_t n_px, const float *x, int64_t xps, int64_t n_icb, int64_t xbs,
                    int cb, int cn_last, const int32_t *toff, int taps, const float *w, float *out)
{
    if (xps == 16)
        cl_row512(NV, n_px, x, 16, n_icb, xbs, cb, cn_last, toff, taps, w, out);
    else if (xps == 32)
        cl_row512(NV, n_px, x, 32, n_icb, xbs, cb, cn_last, toff, taps, w, out);
    else
        cl_row512(NV, n_px, x, xps, n_icb, xbs, cb, cn_last, toff, taps, w, out);
}

AVX512 void eb_cpu_conv_cl_f32_12x32__avx512(int64_t n_px, const float *x, int64_t xps,
                                             int64_t n_icb, int64_t xbs, int cb, int cn_last,
                                             const int32_t *toff, int taps, const float *w,
                                             int olen, float *out)
{
    if (olen > 16)
        cl_row_by_stride512(2, n_px, x, xps, n_icb, xbs, cb, cn_last, toff, taps, w, out);
    else
        cl_row_by_stride512(1, n_px, x, xps, n_icb, xbs, cb, cn_last, toff, taps, w, out);
}

/* Channel-blocked depthwise (gemm.h, eb_dw_cl_fn): 8 pixels at a time in 8 accumulators, per
 * tap one weight vector and one input vector per pixel; then single pixels. */
AVX512 void eb_cpu_dw_cl_f32__avx512(int64_t n_px, const float *x, int64_t xps, const int32_t *toff,
                                     int taps, const float *w, float *out)
{
    int64_t q = 0;
    for (; q + 8 <= n_px; q += 8) {
        __m512 acc[8];
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++)
            acc[r] = _mm512_setzero_ps();
        for (int t = 0; t < taps; t++) {
            const __m512 wv = _mm512_load_ps(w + t * 16);
            const float *xt = x + q * xps + toff[t];
#pragma GCC unroll 8
            for (int r = 0; r < 8; r++)
                acc[r] = _mm512_fmadd_ps(_mm512_loadu_ps(xt + r * xps), wv, acc[r]);
        }
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++)
            _mm512_storeu_ps(out + (q + r) * 16, acc[r]);
    }
    for (; q < n_px; q++) {
        __m512 acc = _mm512_setzero_ps();
        for (int t = 0; t < taps; t++)
            acc = _mm512_fmadd_ps(_mm512_loadu_ps(x + q * xps + toff[t]),
                                  _mm512_load_ps(w + t * 16), acc);
        _mm512_storeu_ps(out + q * 16, acc);
    }
}

/*
 * Pointwise convolution with the pixels in the tile rows (gemm.h, eb_pw_cl_fn): the
 * channel-blocked tile above reading an NCHW input in place, pixel stride 1 (consecutive
 * floats of a channel plane), channel stride cs. Tiles of 12, then 4, then single pixels, so
 * nothing past pixel n_px is read.
 */
AVX512 static inline __attribute__((always_inline)) void
pw_tile512(int R, int NV, const float *x, int64_t cs, int64_t k, const float *w, float *out)
{
    __m512 acc[12][2];
    zero_tile512(acc, R);
    int64_t c = 0;
    for (; c + 4 <= k; c += 4, x += 4 * cs, w += 4 * 32) {
        const float *x0 = x, *x1 = x + cs, *x2 = x1 + cs, *x3 = x2 + cs;
        __asm__("" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)); /* base + constant addresses */
        cl_step512(acc, R, NV, x0, 1, w);
        cl_step512(acc, R, NV, x1, 1, w + 32);
        cl_step512(acc, R, NV, x2, 1, w + 64);
        cl_step512(acc, R, NV, x3, 1, w + 96);
    }
    for (; c < k; c++, x += cs, w += 32)
        cl_step512(acc, R, NV, x, 1, w);
    store_tile512(acc, R, NV, out);
}

AVX512 static inline __attribute__((always_inline)) void
pw_row512(int NV, int64_t n_px, const float *x, int64_t cs, int64_t k, const float *w, float *out)
{
    int64_t q = 0;
    for (; q + 12 <= n_px; q += 12)
        pw_tile512(12, NV, x + q, cs, k, w, out + q * 32);
    if (q + 8 <= n_px) {
        pw_tile512(8, NV, x + q, cs, k, w, out + q * 32);
        q += 8;
    }
    for (; q + 4 <= n_px; q += 4)
        pw_tile512(4, NV, x + q, cs, k, w, out + q * 32);
    for (; q < n_px; q++)
        pw_tile512(1, NV, x + q, cs, k, w, out + q * 32);
}

AVX512 void eb_cpu_pw_cl_f32_12x32__avx512(int64_t n_px, const float *x, int64_t cs, int64_t k,
                                           const float *w, int olen, float *out)
{
    if (olen > 16)
        pw_row512(2, n_px, x, cs, k, w, out);
    else
        pw_row512(1, n_px, x, cs, k, w, out);
}

/*
 * GEMV (a matrix product of one row): y[j] = Σ_p a[p] · b[p*ldb + j] for j < n, the sum in
 * order of p. 64 columns (four independent accumulators) per pass over k, then 16-column
 * passes with a masked tail: every row of b is read once, in place (no packing).
 */
AVX512 void eb_cpu_sgemv_f32__avx512(int64_t k, int64_t n, const float *a, const float *b,
                                     int64_t ldb, float *y)
{
    int64_t j = 0;
    for (; j + 64 <= n; j += 64) {
        __m512 c0 = _mm512_setzero_ps(), c1 = _mm512_setzero_ps(), c2 = _mm512_setzero_ps(),
               c3 = _mm512_setzero_ps();
        const float *bp = b + j;
        for (int64_t p = 0; p < k; p++, bp += ldb) {
            const __m512 av = _mm512_set1_ps(a[p]);
            c0 = _mm512_fmadd_ps(av, _mm512_loadu_ps(bp), c0);
            c1 = _mm512_fmadd_ps(av, _mm512_loadu_ps(bp + 16), c1);
            c2 = _mm512_fmadd_ps(av, _mm512_loadu_ps(bp + 32), c2);
            c3 = _mm512_fmadd_ps(av, _mm512_loadu_ps(bp + 48), c3);
        }
        _mm512_storeu_ps(y + j, c0);
        _mm512_storeu_ps(y + j + 16, c1);
        _mm512_storeu_ps(y + j + 32, c2);
        _mm512_storeu_ps(y + j + 48, c3);
    }
    for (; j < n; j += 16) {
        const __mmask16 mk = n - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - j)) - 1u);
        __m512 c0 = _mm512_setzero_ps();
        const float *bp = b + j;
        for (int64_t p = 0; p < k; p++, bp += ldb)
            c0 = _mm512_fmadd_ps(_mm512_set1_ps(a[p]), _mm512_maskz_loadu_ps(mk, bp), c0);
        _mm512_mask_storeu_ps(y + j, mk, c0);
    }
}

/*
 * GEMV on B packed in 32-column panels (eb_sgemv_packed_fn): two panels (64 columns, four
 * accumulators) per pass over k, then a last panel with a masked store. The sum runs in order
 * of p, as eb_cpu_sgemv_f32__avx512's: the same bits as the GEMV on B in place.
 */
AVX512 void eb_cpu_sgemv_packed_f32__avx512(int64_t k, int64_t n, const float *a, const float *b,
                                            float *y)
{
    const int64_t ps = k * 32;
    int64_t j = 0;
    for (; j + 64 <= n; j += 64, b += 2 * ps) {
        __m512 c0 = _mm512_setzero_ps(), c1 = _mm512_setzero_ps(), c2 = _mm512_setzero_ps(),
               c3 = _mm512_setzero_ps();
        const float *b0 = b, *b1 = b + ps;
        for (int64_t p = 0; p < k; p++, b0 += 32, b1 += 32) {
            const __m512 av = _mm512_set1_ps(a[p]);
            c0 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b0), c0);
            c1 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b0 + 16), c1);
            c2 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b1), c2);
            c3 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b1 + 16), c3);
        }
        _mm512_storeu_ps(y + j, c0);
        _mm512_storeu_ps(y + j + 16, c1);
        _mm512_storeu_ps(y + j + 32, c2);
        _mm512_storeu_ps(y + j + 48, c3);
    }
    for (; j < n; j += 32, b += ps) {
        __m512 c0 = _mm512_setzero_ps(), c1 = _mm512_setzero_ps();
        const float *b0 = b;
        for (int64_t p = 0; p < k; p++, b0 += 32) {
            const __m512 av = _mm512_set1_ps(a[p]);
            c0 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b0), c0);
            c1 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b0 + 16), c1);
        }
        const int64_t l0 = n - j < 16 ? n - j : 16, l1 = n - j - 16 < 16 ? n - j - 16 : 16;
        _mm512_mask_storeu_ps(y + j, (__mmask16)((1u << l0) - 1u), c0);
        if (l1 > 0)
            _mm512_mask_storeu_ps(y + j + 16, (__mmask16)((1u << l1) - 1u), c1);
    }
}
