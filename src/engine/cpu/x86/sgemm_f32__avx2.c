/*
 * AVX2+FMA SGEMM micro-kernel (6x16: 12 ymm accumulators, 2 B loads and 1 A broadcast per k)
 * and the tile epilogue with a vectorised exp for sigmoid/SiLU/tanh. Per-function target
 * attributes: the file compiles for any x86-64 and runs only when the CPU has AVX2+FMA.
 */
#include <immintrin.h>

#include "engine/cpu/gemm.h"

#define AVX2 __attribute__((target("avx2,fma")))

/* The 6x16 tile over k rows of B: packed (direct 0: row p at b + 16p) or direct (1: row p at
 * b + boff[p]); each caller below passes a constant, so the choice is folded away. */
AVX2 static inline __attribute__((always_inline)) void
tile_6x16(int64_t k, const float *a, const float *b, const int32_t *boff, float *c, int64_t ldc,
          int accumulate, int direct)
{
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    for (int64_t p = 0; p < k; p++) {
        const float *bp = direct ? b + boff[p] : b + p * 16;
        const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
        __m256 av = _mm256_broadcast_ss(a);
        c00 = _mm256_fmadd_ps(av, b0, c00);
        c01 = _mm256_fmadd_ps(av, b1, c01);
        av = _mm256_broadcast_ss(a + 1);
        c10 = _mm256_fmadd_ps(av, b0, c10);
        c11 = _mm256_fmadd_ps(av, b1, c11);
        av = _mm256_broadcast_ss(a + 2);
        c20 = _mm256_fmadd_ps(av, b0, c20);
        c21 = _mm256_fmadd_ps(av, b1, c21);
        av = _mm256_broadcast_ss(a + 3);
        c30 = _mm256_fmadd_ps(av, b0, c30);
        c31 = _mm256_fmadd_ps(av, b1, c31);
        av = _mm256_broadcast_ss(a + 4);
        c40 = _mm256_fmadd_ps(av, b0, c40);
        c41 = _mm256_fmadd_ps(av, b1, c41);
        av = _mm256_broadcast_ss(a + 5);
        c50 = _mm256_fmadd_ps(av, b0, c50);
        c51 = _mm256_fmadd_ps(av, b1, c51);
        a += 6;
    }
    float *r0 = c, *r1 = c + ldc, *r2 = c + 2 * ldc, *r3 = c + 3 * ldc, *r4 = c + 4 * ldc,
          *r5 = c + 5 * ldc;
    if (accumulate) {
        c00 = _mm256_add_ps(c00, _mm256_loadu_ps(r0));
        c01 = _mm256_add_ps(c01, _mm256_loadu_ps(r0 + 8));
        c10 = _mm256_add_ps(c10, _mm256_loadu_ps(r1));
        c11 = _mm256_add_ps(c11, _mm256_loadu_ps(r1 + 8));
        c20 = _mm256_add_ps(c20, _mm256_loadu_ps(r2));
        c21 = _mm256_add_ps(c21, _mm256_loadu_ps(r2 + 8));
        c30 = _mm256_add_ps(c30, _mm256_loadu_ps(r3));
        c31 = _mm256_add_ps(c31, _mm256_loadu_ps(r3 + 8));
        c40 = _mm256_add_ps(c40, _mm256_loadu_ps(r4));
        c41 = _mm256_add_ps(c41, _mm256_loadu_ps(r4 + 8));
        c50 = _mm256_add_ps(c50, _mm256_loadu_ps(r5));
        c51 = _mm256_add_ps(c51, _mm256_loadu_ps(r5 + 8));
    }
    _mm256_storeu_ps(r0, c00);
    _mm256_storeu_ps(r0 + 8, c01);
    _mm256_storeu_ps(r1, c10);
    _mm256_storeu_ps(r1 + 8, c11);
    _mm256_storeu_ps(r2, c20);
    _mm256_storeu_ps(r2 + 8, c21);
    _mm256_storeu_ps(r3, c30);
    _mm256_storeu_ps(r3 + 8, c31);
    _mm256_storeu_ps(r4, c40);
    _mm256_storeu_ps(r4 + 8, c41);
    _mm256_storeu_ps(r5, c50);
    _mm256_storeu_ps(r5 + 8, c51);
}

AVX2 void eb_cpu_sgemm_f32_6x16__avx2(int64_t k, const float *a, const float *b, float *c,
                                      int64_t ldc, int accumulate)
{
    tile_6x16(k, a, b, NULL, c, ldc, accumulate, 0);
}

AVX2 void eb_cpu_sgemm_f32_6x16_direct__avx2(int64_t k, const float *a, const float *b,
                                             const int32_t *boff, float *c, int64_t ldc,
                                             int accumulate)
{
    tile_6x16(k, a, b, boff, c, ldc, accumulate, 1);
}

AVX2 void eb_cpu_gather2_f32__avx2(int64_t n, const float *src, float *dst)
{
    int64_t j = 0;
    /* 8 outputs from 16 inputs; the last vector read ends at src[2j + 15] <= src[2n - 2]. */
    for (; j + 8 < n; j += 8) {
        const __m256 lo = _mm256_loadu_ps(src + 2 * j), hi = _mm256_loadu_ps(src + 2 * j + 8);
        /* evens per 128-bit lane: lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6, then the lanes in order */
        const __m256 ev = _mm256_shuffle_ps(lo, hi, 0x88);
        _mm256_storeu_ps(dst + j,
                         _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xd8)));
    }
    for (; j < n; j++)
        dst[j] = src[2 * j];
}

AVX2 void eb_cpu_dw_rows_f32__avx2(int64_t n, int taps, const float *w, float bias,
                                   const float *src, const int32_t *off, float *y)
{
    /* 16 outputs per step in two accumulators; every tap is one broadcast and two loads. */
    for (int64_t q = 0; q < n; q += 16) {
        __m256 a0 = _mm256_set1_ps(bias), a1 = a0;
        for (int t = 0; t < taps; t++) {
            const __m256 wv = _mm256_broadcast_ss(w + t);
            const float *s = src + q + off[t];
            a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s), a0);
            a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 8), a1);
        }
        _mm256_storeu_ps(y + q, a0);
        _mm256_storeu_ps(y + q + 8, a1);
    }
}

/* exp(x): x = n ln2 + r, |r| <= ln2/2, exp(r) by a degree-6 polynomial, 2^n through the
 * exponent bits. Input clamped to [-87.3, 88.3] so 2^n stays a normal float; rel. err ~2e-7. */
AVX2 static inline __attribute__((always_inline)) __m256 exp256(__m256 x)
{
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.3f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

/* 1/d for d >= 1: the 12-bit estimate and one Newton step (rel. err ~1e-7), cheaper than a
 * division on every x86 core we target. */
AVX2 static inline __attribute__((always_inline)) __m256 recip256(__m256 d)
{
    const __m256 r = _mm256_rcp_ps(d);
    return _mm256_mul_ps(r, _mm256_fnmadd_ps(d, r, _mm256_set1_ps(2.0f)));
}

AVX2 static inline __attribute__((always_inline)) __m256 act256(const struct eb_epilogue *e,
                                                                __m256 v)
{
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
    switch (e->act) {
    case EB_ACT_NONE: return v;
    case EB_ACT_RELU: return _mm256_max_ps(v, zero);
    case EB_ACT_LEAKY_RELU:
        return _mm256_blendv_ps(v, _mm256_mul_ps(v, _mm256_set1_ps(e->alpha)),
                                _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
    case EB_ACT_CLIP:
        return _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(e->alpha)), _mm256_set1_ps(e->beta));
    case EB_ACT_SIGMOID: return recip256(_mm256_add_ps(one, exp256(_mm256_sub_ps(zero, v))));
    case EB_ACT_SILU:
        return _mm256_mul_ps(v, recip256(_mm256_add_ps(one, exp256(_mm256_sub_ps(zero, v)))));
    case EB_ACT_HARD_SIGMOID: {
        __m256 t = _mm256_fmadd_ps(v, _mm256_set1_ps(e->alpha), _mm256_set1_ps(e->beta));
        return _mm256_min_ps(_mm256_max_ps(t, zero), one);
    }
    case EB_ACT_HARD_SWISH: {
        __m256 t = _mm256_add_ps(_mm256_div_ps(v, _mm256_set1_ps(6.0f)), _mm256_set1_ps(0.5f));
        return _mm256_mul_ps(v, _mm256_min_ps(_mm256_max_ps(t, zero), one));
    }
    case EB_ACT_TANH: {
        /* tanh(v) = 1 - 2 / (exp(2v) + 1) */
        __m256 t = exp256(_mm256_add_ps(v, v));
        return _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(t, one)));
    }
    }
    return v;
}

AVX2 void eb_cpu_epilogue_tile_f32__avx2(const struct eb_epilogue *e, const float *bias, int64_t m,
                                         int64_t n, const float *s, int64_t lds, float *c,
                                         int64_t ldc, const float *r, int64_t ldr)
{
    const __m256 scale = _mm256_set1_ps(e->fq_scale), zp = _mm256_set1_ps((float)e->fq_zp);
    const __m256 qmin = _mm256_set1_ps((float)e->fq_qmin), qmax = _mm256_set1_ps((float)e->fq_qmax);
    const int plain = e->act == EB_ACT_NONE && !e->residual && !e->fake_quant;
    float tail[8];
    for (int64_t i = 0; i < m; i++) {
        float *ci = c + i * ldc;
        const float *si = s + i * lds;
        const float *ri = e->residual ? r + i * ldr : NULL;
        const __m256 bv = _mm256_set1_ps(bias != NULL ? bias[i] : 0.0f);
        for (int64_t j = 0; j < n; j += 8) {
            const int64_t w = n - j < 8 ? n - j : 8;
            __m256 v;
            if (w == 8) {
                v = _mm256_loadu_ps(si + j);
            } else {
                for (int64_t t = 0; t < 8; t++)
                    tail[t] = t < w ? si[j + t] : 0.0f;
                v = _mm256_loadu_ps(tail);
            }
            v = _mm256_add_ps(v, bv);
            if (!plain) {
                v = act256(e, v);
                if (ri != NULL) {
                    if (w == 8) {
                        v = _mm256_add_ps(v, _mm256_loadu_ps(ri + j));
                    } else {
                        for (int64_t t = 0; t < 8; t++)
                            tail[t] = t < w ? ri[j + t] : 0.0f;
                        v = _mm256_add_ps(v, _mm256_loadu_ps(tail));
                    }
                }
                if (e->fake_quant) {
                    __m256 q = _mm256_round_ps(_mm256_div_ps(v, scale),
                                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                    q = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, zp), qmin), qmax);
                    v = _mm256_mul_ps(_mm256_sub_ps(q, zp), scale);
                }
            }
            if (w == 8) {
                _mm256_storeu_ps(ci + j, v);
            } else {
                _mm256_storeu_ps(tail, v);
                for (int64_t t = 0; t < w; t++)
                    ci[j + t] = tail[t];
            }
        }
    }
}
