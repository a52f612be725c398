/*
 * AVX-512 SGEMM micro-kernel (8x32: 16 zmm accumulators) and tile epilogue: the AVX2 kernel
 * widened to 16 lanes; column tails of the
 * epilogue go through a small stack buffer.
 */
#include <immintrin.h>

#include "engine/cpu/gemm.h"

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

/* One k step of row r: both 16-column halves of B times the broadcast A element. */
#define ROW_FMA(r)                                                                                 \
    do {                                                                                           \
        const __m512 av = _mm512_set1_ps(a[r]);                                                    \
        c##r##0 = _mm512_fmadd_ps(av, b0, c##r##0);                                                \
        c##r##1 = _mm512_fmadd_ps(av, b1, c##r##1);                                                \
    } while (0)

/* Stores row r of the tile, adding what C holds when accumulating. */
#define ROW_STORE(r)                                                                               \
    do {                                                                                           \
        float *cr = c + (r)*ldc;                                                                   \
        if (accumulate) {                                                                          \
            c##r##0 = _mm512_add_ps(c##r##0, _mm512_loadu_ps(cr));                                 \
            c##r##1 = _mm512_add_ps(c##r##1, _mm512_loadu_ps(cr + 16));                            \
        }                                                                                          \
        _mm512_storeu_ps(cr, c##r##0);                                                             \
        _mm512_storeu_ps(cr + 16, c##r##1);                                                        \
    } while (0)

/* The 8x32 tile (16 zmm accumulators; 8 rows fit YOLO's channel counts, all multiples of 8)
 * over k rows of B: packed (direct 0: row p at b + 32p) or direct (1: row p at b + boff[p]);
 * each caller below passes a constant, so the choice is folded away. */
AVX512 static inline __attribute__((always_inline)) void
tile_8x32(int64_t k, const float *a, const float *b, const int32_t *boff, float *c, int64_t ldc,
          int accumulate, int direct)
{
    __m512 c00 = _mm512_setzero_ps(), c01 = _mm512_setzero_ps();
    __m512 c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps();
    __m512 c20 = _mm512_setzero_ps(), c21 = _mm512_setzero_ps();
    __m512 c30 = _mm512_setzero_ps(), c31 = _mm512_setzero_ps();
    __m512 c40 = _mm512_setzero_ps(), c41 = _mm512_setzero_ps();
    __m512 c50 = _mm512_setzero_ps(), c51 = _mm512_setzero_ps();
    __m512 c60 = _mm512_setzero_ps(), c61 = _mm512_setzero_ps();
    __m512 c70 = _mm512_setzero_ps(), c71 = _mm512_setzero_ps();
    for (int64_t p = 0; p < k; p++) {
        const float *bp = direct ? b + boff[p] : b + p * 32;
        const __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
        ROW_FMA(0);
        ROW_FMA(1);
        ROW_FMA(2);
        ROW_FMA(3);
        ROW_FMA(4);
        ROW_FMA(5);
        ROW_FMA(6);
        ROW_FMA(7);
        a += 8;
    }
    ROW_STORE(0);
    ROW_STORE(1);
    ROW_STORE(2);
    ROW_STORE(3);
    ROW_STORE(4);
    ROW_STORE(5);
    ROW_STORE(6);
    ROW_STORE(7);
}

AVX512 void eb_cpu_sgemm_f32_8x32__avx512(int64_t k, const float *a, const float *b, float *c,
                                          int64_t ldc, int accumulate)
{
    tile_8x32(k, a, b, NULL, c, ldc, accumulate, 0);
}

AVX512 void eb_cpu_sgemm_f32_8x32_direct__avx512(int64_t k, const float *a, const float *b,
                                                 const int32_t *boff, float *c, int64_t ldc,
                                                 int accumulate)
{
    tile_8x32(k, a, b, boff, c, ldc, accumulate, 1);
}

/* exp(x): x = n ln2 + r, |r| <= ln2/2, exp(r) by a degree-6 polynomial, 2^n through the
 * exponent bits. Input clamped to [-87.3, 88.3] so 2^n stays a normal float; rel. err ~2e-7. */
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
    const __m512i e =
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}

/* 1/d for d >= 1: the 14-bit estimate and one Newton step (rel. err ~1e-8). */
AVX512 static inline __attribute__((always_inline)) __m512 recip512(__m512 d)
{
    const __m512 r = _mm512_rcp14_ps(d);
    return _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0f)));
}

AVX512 static inline __attribute__((always_inline)) __m512 act512(const struct eb_epilogue *e,
                                                                  __m512 v)
{
    const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
    switch (e->act) {
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

AVX512 void eb_cpu_epilogue_tile_f32__avx512(const struct eb_epilogue *e, const float *bias,
                                             int64_t m, int64_t n, const float *s, int64_t lds,
                                             float *c, int64_t ldc, const float *r, int64_t ldr)
{
    const __m512 scale = _mm512_set1_ps(e->fq_scale), zp = _mm512_set1_ps((float)e->fq_zp);
    const __m512 qmin = _mm512_set1_ps((float)e->fq_qmin), qmax = _mm512_set1_ps((float)e->fq_qmax);
    const int plain = e->act == EB_ACT_NONE && !e->residual && !e->fake_quant;
    float tail[16];
    for (int64_t i = 0; i < m; i++) {
        float *ci = c + i * ldc;
        const float *si = s + i * lds;
        const float *ri = e->residual ? r + i * ldr : NULL;
        const __m512 bv = _mm512_set1_ps(bias != NULL ? bias[i] : 0.0f);
        for (int64_t j = 0; j < n; j += 16) {
            const int64_t w = n - j < 16 ? n - j : 16;
            __m512 v;
            if (w == 16) {
                v = _mm512_loadu_ps(si + j);
            } else {
                for (int64_t t = 0; t < 16; t++)
                    tail[t] = t < w ? si[j + t] : 0.0f;
                v = _mm512_loadu_ps(tail);
            }
            v = _mm512_add_ps(v, bv);
            if (!plain) {
                v = act512(e, v);
                if (ri != NULL) {
                    if (w == 16) {
                        v = _mm512_add_ps(v, _mm512_loadu_ps(ri + j));
                    } else {
                        for (int64_t t = 0; t < 16; t++)
                            tail[t] = t < w ? ri[j + t] : 0.0f;
                        v = _mm512_add_ps(v, _mm512_loadu_ps(tail));
                    }
                }
                if (e->fake_quant) {
                    __m512 q = _mm512_roundscale_ps(_mm512_div_ps(v, scale),
                                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                    q = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(q, zp), qmin), qmax);
                    v = _mm512_mul_ps(_mm512_sub_ps(q, zp), scale);
                }
            }
            if (w == 16) {
                _mm512_storeu_ps(ci + j, v);
            } else {
                _mm512_storeu_ps(tail, v);
                for (int64_t t = 0; t < w; t++)
                    ci[j + t] = tail[t];
            }
        }
    }
}
