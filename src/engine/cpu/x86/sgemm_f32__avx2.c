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
 * exponent bits. Input clamped to [-87.3, 88.3] so 2^n stays a normal float; rel. err ~2e-7.
 * n is rounded by adding 1.5 * 2^23, which leaves it in the low mantissa bits: the exponent
 * field is those bits shifted up, plus 127 (no round or convert instruction). */
AVX2 static inline __attribute__((always_inline)) __m256 exp256(__m256 x)
{
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.3f));
    const __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), magic);
    const __m256 n = _mm256_sub_ps(t, magic);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i e = _mm256_add_epi32(_mm256_slli_epi32(_mm256_castps_si256(t), 23),
                                       _mm256_set1_epi32(127 << 23));
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

/* 1/d for d >= 1: the 12-bit estimate and one Newton step (rel. err ~1e-7), cheaper than a
 * division on every x86 core we target. */
AVX2 static inline __attribute__((always_inline)) __m256 recip256(__m256 d)
{
    const __m256 r = _mm256_rcp_ps(d);
    return _mm256_mul_ps(r, _mm256_fnmadd_ps(d, r, _mm256_set1_ps(2.0f)));
}

/* act(v); every caller passes a constant `act`, so the switch is folded away. */
AVX2 static inline __attribute__((always_inline)) __m256
act256(enum eb_act act, const struct eb_epilogue *e, __m256 v)
{
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
    switch (act) {
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

/* The epilogue with fake quantisation (QDQ models run as float): one vector at a time, the
 * activation chosen per vector. */
AVX2 static void epilogue_fq256(const struct eb_epilogue *e, const float *bias, int64_t m,
                                int64_t n, const float *s, int64_t lds, float *c, int64_t ldc,
                                const float *r, int64_t ldr)
{
    const __m256 scale = _mm256_set1_ps(e->fq_scale), zp = _mm256_set1_ps((float)e->fq_zp);
    const __m256 qmin = _mm256_set1_ps((float)e->fq_qmin), qmax = _mm256_set1_ps((float)e->fq_qmax);
    float tail[8];
    for (int64_t i = 0; i < m; i++) {
        float *ci = c + i * ldc;
        const float *si = s + i * lds;
        const float *ri = e->residual ? r + i * ldr : NULL;
        const __m256 bv = _mm256_set1_ps(bias != NULL ? bias[i] : 0.0f);
        for (int64_t j = 0; j < n; j += 8) {
            const int64_t w = n - j < 8 ? n - j : 8;
            for (int64_t t = 0; t < 8; t++)
                tail[t] = t < w ? si[j + t] : 0.0f;
            __m256 v = act256(e->act, e, _mm256_add_ps(_mm256_loadu_ps(tail), bv));
            if (ri != NULL) {
                for (int64_t t = 0; t < 8; t++)
                    tail[t] = t < w ? ri[j + t] : 0.0f;
                v = _mm256_add_ps(v, _mm256_loadu_ps(tail));
            }
            __m256 q = _mm256_round_ps(_mm256_div_ps(v, scale),
                                       _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            q = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, zp), qmin), qmax);
            _mm256_storeu_ps(tail, _mm256_mul_ps(_mm256_sub_ps(q, zp), scale));
            for (int64_t t = 0; t < w; t++)
                ci[j + t] = tail[t];
        }
    }
}

/* Rows of c = act(s + bias[row]) (+ r) with `act` and `res` constants at each call site (the
 * dispatch below), two vectors per step; a row's last n % 8 columns through masked loads. */
AVX2 static inline __attribute__((always_inline)) void
epilogue_rows256(enum eb_act act, int res, const struct eb_epilogue *e, const float *bias,
                 int64_t m, int64_t n, const float *s, int64_t lds, float *c, int64_t ldc,
                 const float *r, int64_t ldr)
{
    const int64_t tw = n % 8;
    const __m256i mask =
        _mm256_cmpgt_epi32(_mm256_set1_epi32((int)tw), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (int64_t i = 0; i < m; i++) {
        float *ci = c + i * ldc;
        const float *si = s + i * lds, *ri = res ? r + i * ldr : NULL;
        const __m256 bv = _mm256_set1_ps(bias != NULL ? bias[i] : 0.0f);
        int64_t j = 0;
        for (; j + 16 <= n; j += 16) {
            __m256 v0 = act256(act, e, _mm256_add_ps(_mm256_loadu_ps(si + j), bv));
            __m256 v1 = act256(act, e, _mm256_add_ps(_mm256_loadu_ps(si + j + 8), bv));
            if (res) {
                v0 = _mm256_add_ps(v0, _mm256_loadu_ps(ri + j));
                v1 = _mm256_add_ps(v1, _mm256_loadu_ps(ri + j + 8));
            }
            _mm256_storeu_ps(ci + j, v0);
            _mm256_storeu_ps(ci + j + 8, v1);
        }
        if (j + 8 <= n) {
            __m256 v = act256(act, e, _mm256_add_ps(_mm256_loadu_ps(si + j), bv));
            if (res)
                v = _mm256_add_ps(v, _mm256_loadu_ps(ri + j));
            _mm256_storeu_ps(ci + j, v);
            j += 8;
        }
        if (tw > 0) {
            __m256 v = act256(act, e, _mm256_add_ps(_mm256_maskload_ps(si + j, mask), bv));
            if (res)
                v = _mm256_add_ps(v, _mm256_maskload_ps(ri + j, mask));
            _mm256_maskstore_ps(ci + j, mask, v);
        }
    }
}

AVX2 void eb_cpu_epilogue_tile_f32__avx2(const struct eb_epilogue *e, const float *bias, int64_t m,
                                         int64_t n, const float *s, int64_t lds, float *c,
                                         int64_t ldc, const float *r, int64_t ldr)
{
    if (e->fake_quant) {
        epilogue_fq256(e, bias, m, n, s, lds, c, ldc, r, ldr);
        return;
    }
#define ROWS(A, R) epilogue_rows256(A, R, e, bias, m, n, s, lds, c, ldc, r, ldr)
    EB_EPILOGUE_SPECIALISE(e, ROWS);
#undef ROWS
}

/* Channel-blocked output (gemm.h, eb_cl_epilogue_fn), `act` and `res` constants at each call
 * site (the dispatch below): per channel vector its bias in a register, two pixels per step. */
AVX2 static inline __attribute__((always_inline)) void
cl_epilogue256(enum eb_act act, int res, const struct eb_epilogue *e, const float *bias, int64_t n,
               int nv, const float *buf, int ob, float *y, int64_t y_bs, const float *r)
{
    for (int v = 0; v < nv; v++) {
        const __m256 bv = _mm256_loadu_ps(bias + v * 8);
        const float *s = buf + v * 8;
        float *yv = y + v * y_bs;
        const float *rv = res ? r + v * y_bs : NULL;
        int64_t q = 0;
        for (; q + 2 <= n; q += 2) {
            __m256 a0 = act256(act, e, _mm256_add_ps(_mm256_loadu_ps(s + q * ob), bv));
            __m256 a1 = act256(act, e, _mm256_add_ps(_mm256_loadu_ps(s + (q + 1) * ob), bv));
            if (res) {
                a0 = _mm256_add_ps(a0, _mm256_loadu_ps(rv + q * 8));
                a1 = _mm256_add_ps(a1, _mm256_loadu_ps(rv + q * 8 + 8));
            }
            _mm256_storeu_ps(yv + q * 8, a0);
            _mm256_storeu_ps(yv + q * 8 + 8, a1);
        }
        if (q < n) {
            __m256 a = act256(act, e, _mm256_add_ps(_mm256_loadu_ps(s + q * ob), bv));
            if (res)
                a = _mm256_add_ps(a, _mm256_loadu_ps(rv + q * 8));
            _mm256_storeu_ps(yv + q * 8, a);
        }
    }
}

AVX2 void eb_cpu_cl_epilogue_f32__avx2(const struct eb_epilogue *e, const float *bias, int64_t n,
                                       int nv, const float *buf, int ob, float *y, int64_t y_bs,
                                       const float *r)
{
#define ROWS(A, R) cl_epilogue256(A, R, e, bias, n, nv, buf, ob, y, y_bs, r)
    EB_EPILOGUE_SPECIALISE(e, ROWS);
#undef ROWS
}

/*
 * Channel-blocked convolution (gemm.h, eb_conv_cl_fn): 6 output pixels x 16 output channels in
 * 12 ymm accumulators; per input channel and tap two weight loads (the 16 output channels) and
 * six broadcasts of the pixels' input value. Input channels come in blocks of 8; a full block's
 * 8 steps are unrolled so that every input address is the tap's base plus a constant when the
 * pixel stride xps is a constant (stride 1 and 2 below). The row's last pixels (n_px % 6) go
 * through a 4-pixel tile and then 2-pixel tiles, and a block with at most 8 output channels wanted (olen) through
 * one-vector tiles.
 */
AVX2 static inline __attribute__((always_inline)) void zero_tile256(__m256 acc[6][2], int R)
{
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
        acc[r][0] = acc[r][1] = _mm256_setzero_ps();
}

/* The R x (8 NV) tile to out ([pixel][16]). */
AVX2 static inline __attribute__((always_inline)) void store_tile256(__m256 acc[6][2], int R,
                                                                     int NV, float *out)
{
#pragma GCC unroll 6
    for (int r = 0; r < R; r++) {
        _mm256_storeu_ps(out + r * 16, acc[r][0]);
        if (NV > 1)
            _mm256_storeu_ps(out + r * 16 + 8, acc[r][1]);
    }
}

AVX2 static inline __attribute__((always_inline)) void
cl_step256(__m256 acc[6][2], int R, int NV, const float *xt, int64_t xps, const float *wc)
{
    const __m256 w0 = _mm256_load_ps(wc), w1 = NV > 1 ? _mm256_load_ps(wc + 8) : w0;
#pragma GCC unroll 6
    for (int r = 0; r < R; r++) {
        const __m256 v = _mm256_broadcast_ss(xt + r * xps);
        acc[r][0] = _mm256_fmadd_ps(v, w0, acc[r][0]);
        if (NV > 1)
            acc[r][1] = _mm256_fmadd_ps(v, w1, acc[r][1]);
    }
}

AVX2 static inline __attribute__((always_inline)) void
cl_tile256(int R, int NV, const float *x, int64_t xps, int64_t n_icb, int64_t xbs, int cb,
           int cn_last, const int32_t *toff, int taps, const float *w, float *out)
{
    __m256 acc[6][2];
    zero_tile256(acc, R);
    const float *wp = w;
    for (int64_t b = 0; b < n_icb; b++) {
        const float *xb = x + b * xbs;
        const int cn = b < n_icb - 1 ? cb : cn_last;
        for (int t = 0; t < taps; t++, wp += 8 * 16) {
            const float *xt = xb + toff[t];
            __asm__("" : "+r"(xt)); /* one base register: every address base + constant */
            if (cn == 8) {
#pragma GCC unroll 8
                for (int c = 0; c < 8; c++)
                    cl_step256(acc, R, NV, xt + c, xps, wp + c * 16);
            } else {
                for (int c = 0; c < cn; c++)
                    cl_step256(acc, R, NV, xt + c, xps, wp + c * 16);
            }
        }
    }
    store_tile256(acc, R, NV, out);
}

AVX2 static inline __attribute__((always_inline)) void
cl_row256(int NV, int64_t n_px, const float *x, int64_t xps, int64_t n_icb, int64_t xbs, int cb,
          int cn_last, const int32_t *toff, int taps, const float *w, float *out)
{
    int64_t q = 0;
    for (; q + 6 <= n_px; q += 6)
        cl_tile256(6, NV, x + q * xps, xps, n_icb, xbs, cb, cn_last, toff, taps, w, out + q * 16);
    if (q + 4 <= n_px) {
        cl_tile256(4, NV, x + q * xps, xps, n_icb, xbs, cb, cn_last, toff, taps, w, out + q * 16);
        q += 4;
    }
    for (; q < n_px; q += 2)
        cl_tile256(2, NV, x + q * xps, xps, n_icb, xbs, cb, cn_last, toff, taps, w, out + q * 16);
}

/* The row with the pixel stride a constant where it is the stride-1 (8) or stride-2 (16) one. */
AVX2 static inline __attribute__((always_inline)) void
cl_row_by_stride256(int NV, int64_t n_px, const float *x, int64_t xps, int64_t n_icb, int64_t xbs,
                    int cb, int cn_last, const int32_t *toff, int taps, const float *w, float *out)
{
    if (xps == 8)
        cl_row256(NV, n_px, x, 8, n_icb, xbs, cb, cn_last, toff, taps, w, out);
    else if (xps == 16)
        cl_row256(NV, n_px, x, 16, n_icb, xbs, cb, cn_last, toff, taps, w, out);
    else
        cl_row256(NV, n_px, x, xps, n_icb, xbs, cb, cn_last, toff, taps, w, out);
}

AVX2 void eb_cpu_conv_cl_f32_6x16__avx2(int64_t n_px, const float *x, int64_t xps, int64_t n_icb,
                                        int64_t xbs, int cb, int cn_last, const int32_t *toff,
                                        int taps, const float *w, int olen, float *out)
{
    if (olen > 8)
        cl_row_by_stride256(2, n_px, x, xps, n_icb, xbs, cb, cn_last, toff, taps, w, out);
    else
        cl_row_by_stride256(1, n_px, x, xps, n_icb, xbs, cb, cn_last, toff, taps, w, out);
}

/* r[i] = column i of the 8x8 matrix whose rows are r[0..7]. */
AVX2 static inline void transpose8x8(__m256 r[8])
{
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* dst row i (stride ds) = column i of the 8x8 block whose rows are src + i * ss. */
AVX2 static inline void transpose8x8_block(const float *src, int64_t ss, float *dst, int64_t ds)
{
    __m256 r[8];
    for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_ps(src + i * ss);
    transpose8x8(r);
    for (int i = 0; i < 8; i++)
        _mm256_storeu_ps(dst + i * ds, r[i]);
}

/* Channel-blocked layout in (gemm.h, eb_cl_pack_fn): full groups of 8 channels by 8x8
 * transposes, the column tail and a partial group one float at a time. */
AVX2 void eb_cpu_cl_pack_f32__avx2(int64_t n, int cn, int cb, const float *src, int64_t src_stride,
                                   float *dst)
{
    for (int c0 = 0; c0 < cb; c0 += 8) {
        int64_t j = 0;
        if (c0 + 8 <= cn) {
            for (; j + 8 <= n; j += 8)
                transpose8x8_block(src + c0 * src_stride + j, src_stride, dst + j * cb + c0, cb);
        }
        for (; j < n; j++)
            for (int c = c0; c < c0 + 8; c++)
                dst[j * cb + c] = c < cn ? src[c * src_stride + j] : 0.0f;
    }
}

/* Channel-blocked layout out (gemm.h, eb_cl_unpack_fn): the same transposes the other way. */
AVX2 void eb_cpu_cl_unpack_f32__avx2(int64_t n, int olen, int ob, const float *buf, float *y,
                                     int64_t y_stride)
{
    for (int o0 = 0; o0 < olen; o0 += 8) {
        int64_t j = 0;
        if (o0 + 8 <= olen) {
            for (; j + 8 <= n; j += 8)
                transpose8x8_block(buf + j * ob + o0, ob, y + o0 * y_stride + j, y_stride);
        }
        const int oe = o0 + 8 < olen ? o0 + 8 : olen;
        for (; j < n; j++)
            for (int o = o0; o < oe; o++)
                y[o * y_stride + j] = buf[j * ob + o];
    }
}

/* Channel-blocked depthwise (gemm.h, eb_dw_cl_fn): 8 pixels at a time in 8 accumulators, per
 * tap one weight vector and one input vector per pixel; then single pixels. */
AVX2 void eb_cpu_dw_cl_f32__avx2(int64_t n_px, const float *x, int64_t xps, const int32_t *toff,
                                 int taps, const float *w, float *out)
{
    int64_t q = 0;
    for (; q + 8 <= n_px; q += 8) {
        __m256 acc[8];
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++)
            acc[r] = _mm256_setzero_ps();
        for (int t = 0; t < taps; t++) {
            const __m256 wv = _mm256_load_ps(w + t * 8);
            const float *xt = x + q * xps + toff[t];
#pragma GCC unroll 8
            for (int r = 0; r < 8; r++)
                acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(xt + r * xps), wv, acc[r]);
        }
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++)
            _mm256_storeu_ps(out + (q + r) * 8, acc[r]);
    }
    for (; q < n_px; q++) {
        __m256 acc = _mm256_setzero_ps();
        for (int t = 0; t < taps; t++)
            acc = _mm256_fmadd_ps(_mm256_loadu_ps(x + q * xps + toff[t]), _mm256_load_ps(w + t * 8),
                                  acc);
        _mm256_storeu_ps(out + q * 8, acc);
    }
}

/*
 * Pointwise convolution with the pixels in the tile rows (gemm.h, eb_pw_cl_fn): the
 * channel-blocked tile above reading an NCHW input in place, pixel stride 1, channel stride
 * cs. Tiles of 6, then 2, then single pixels, so nothing past pixel n_px is read.
 */
AVX2 static inline __attribute__((always_inline)) void
pw_tile256(int R, int NV, const float *x, int64_t cs, int64_t k, const float *w, float *out)
{
    __m256 acc[6][2];
    zero_tile256(acc, R);
    int64_t c = 0;
    for (; c + 4 <= k; c += 4, x += 4 * cs, w += 4 * 16) {
        const float *x0 = x, *x1 = x + cs, *x2 = x1 + cs, *x3 = x2 + cs;
        __asm__("" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)); /* base + constant addresses */
        cl_step256(acc, R, NV, x0, 1, w);
        cl_step256(acc, R, NV, x1, 1, w + 16);
        cl_step256(acc, R, NV, x2, 1, w + 32);
        cl_step256(acc, R, NV, x3, 1, w + 48);
    }
    for (; c < k; c++, x += cs, w += 16)
        cl_step256(acc, R, NV, x, 1, w);
    store_tile256(acc, R, NV, out);
}

AVX2 static inline __attribute__((always_inline)) void
pw_row256(int NV, int64_t n_px, const float *x, int64_t cs, int64_t k, const float *w, float *out)
{
    int64_t q = 0;
    for (; q + 6 <= n_px; q += 6)
        pw_tile256(6, NV, x + q, cs, k, w, out + q * 16);
    for (; q + 2 <= n_px; q += 2)
        pw_tile256(2, NV, x + q, cs, k, w, out + q * 16);
    for (; q < n_px; q++)
        pw_tile256(1, NV, x + q, cs, k, w, out + q * 16);
}

AVX2 void eb_cpu_pw_cl_f32_6x16__avx2(int64_t n_px, const float *x, int64_t cs, int64_t k,
                                      const float *w, int olen, float *out)
{
    if (olen > 8)
        pw_row256(2, n_px, x, cs, k, w, out);
    else
        pw_row256(1, n_px, x, cs, k, w, out);
}

/*
 * GEMV (a matrix product of one row): y[j] = Σ_p a[p] · b[p*ldb + j] for j < n, the sum in
 * order of p. 32 columns (four independent accumulators) per pass over k, then 8-column passes
 * with a masked tail: every row of b is read once, in place (no packing).
 */
AVX2 void eb_cpu_sgemv_f32__avx2(int64_t k, int64_t n, const float *a, const float *b, int64_t ldb,
                                 float *y)
{
    int64_t j = 0;
    for (; j + 32 <= n; j += 32) {
        __m256 c0 = _mm256_setzero_ps(), c1 = _mm256_setzero_ps(), c2 = _mm256_setzero_ps(),
               c3 = _mm256_setzero_ps();
        const float *bp = b + j;
        for (int64_t p = 0; p < k; p++, bp += ldb) {
            const __m256 av = _mm256_broadcast_ss(a + p);
            c0 = _mm256_fmadd_ps(av, _mm256_loadu_ps(bp), c0);
            c1 = _mm256_fmadd_ps(av, _mm256_loadu_ps(bp + 8), c1);
            c2 = _mm256_fmadd_ps(av, _mm256_loadu_ps(bp + 16), c2);
            c3 = _mm256_fmadd_ps(av, _mm256_loadu_ps(bp + 24), c3);
        }
        _mm256_storeu_ps(y + j, c0);
        _mm256_storeu_ps(y + j + 8, c1);
        _mm256_storeu_ps(y + j + 16, c2);
        _mm256_storeu_ps(y + j + 24, c3);
    }
    for (; j < n; j += 8) {
        const int64_t left = n - j;
        const __m256i mk = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(left < 8 ? left : 8)),
                                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256 c0 = _mm256_setzero_ps();
        const float *bp = b + j;
        for (int64_t p = 0; p < k; p++, bp += ldb)
            c0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p), _mm256_maskload_ps(bp, mk), c0);
        _mm256_maskstore_ps(y + j, mk, c0);
    }
}

/*
 * eb_cpu__pack_a for MR 8: rows [0, m) x cols [0, k) of row-major a (row stride lda) into
 * 8-row panels, k-major, rows past m zero. Whole 8 x 8 blocks go through an in-register
 * transpose (8 loads, 24 shuffles, 8 stores) instead of 64 scalar moves.
 */
AVX2 void eb_cpu_pack_a8_f32__avx2(int64_t m, int64_t k, const float *a, int64_t lda, float *dst)
{
    for (int64_t i = 0; i < m; i += 8, dst += 8 * k) {
        const int64_t mi = m - i < 8 ? m - i : 8;
        const float *ai = a + i * lda;
        int64_t p = 0;
        if (mi == 8) {
            for (; p + 8 <= k; p += 8) {
                const __m256 r0 = _mm256_loadu_ps(ai + p), r1 = _mm256_loadu_ps(ai + lda + p),
                             r2 = _mm256_loadu_ps(ai + 2 * lda + p),
                             r3 = _mm256_loadu_ps(ai + 3 * lda + p),
                             r4 = _mm256_loadu_ps(ai + 4 * lda + p),
                             r5 = _mm256_loadu_ps(ai + 5 * lda + p),
                             r6 = _mm256_loadu_ps(ai + 6 * lda + p),
                             r7 = _mm256_loadu_ps(ai + 7 * lda + p);
                const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
                             t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
                             t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
                             t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
                const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44),
                             s1 = _mm256_shuffle_ps(t0, t2, 0xEE),
                             s2 = _mm256_shuffle_ps(t1, t3, 0x44),
                             s3 = _mm256_shuffle_ps(t1, t3, 0xEE),
                             s4 = _mm256_shuffle_ps(t4, t6, 0x44),
                             s5 = _mm256_shuffle_ps(t4, t6, 0xEE),
                             s6 = _mm256_shuffle_ps(t5, t7, 0x44),
                             s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
                float *d = dst + p * 8;
                _mm256_storeu_ps(d, _mm256_permute2f128_ps(s0, s4, 0x20));
                _mm256_storeu_ps(d + 8, _mm256_permute2f128_ps(s1, s5, 0x20));
                _mm256_storeu_ps(d + 16, _mm256_permute2f128_ps(s2, s6, 0x20));
                _mm256_storeu_ps(d + 24, _mm256_permute2f128_ps(s3, s7, 0x20));
                _mm256_storeu_ps(d + 32, _mm256_permute2f128_ps(s0, s4, 0x31));
                _mm256_storeu_ps(d + 40, _mm256_permute2f128_ps(s1, s5, 0x31));
                _mm256_storeu_ps(d + 48, _mm256_permute2f128_ps(s2, s6, 0x31));
                _mm256_storeu_ps(d + 56, _mm256_permute2f128_ps(s3, s7, 0x31));
            }
        }
        for (; p < k; p++) {
            float *d = dst + p * 8;
            for (int64_t t = 0; t < mi; t++)
                d[t] = ai[t * lda + p];
            for (int64_t t = mi; t < 8; t++)
                d[t] = 0.0f;
        }
    }
}

/*
 * GEMV on B packed in 16-column panels (eb_sgemv_packed_fn): two panels (32 columns, four
 * accumulators) per pass over k, then a last panel with masked stores. The sum runs in order
 * of p, as eb_cpu_sgemv_f32__avx2's: the same bits as the GEMV on B in place.
 */
AVX2 void eb_cpu_sgemv_packed_f32__avx2(int64_t k, int64_t n, const float *a, const float *b,
                                        float *y)
{
    const int64_t ps = k * 16;
    int64_t j = 0;
    for (; j + 32 <= n; j += 32, b += 2 * ps) {
        __m256 c0 = _mm256_setzero_ps(), c1 = _mm256_setzero_ps(), c2 = _mm256_setzero_ps(),
               c3 = _mm256_setzero_ps();
        const float *b0 = b, *b1 = b + ps;
        for (int64_t p = 0; p < k; p++, b0 += 16, b1 += 16) {
            const __m256 av = _mm256_broadcast_ss(a + p);
            c0 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b0), c0);
            c1 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b0 + 8), c1);
            c2 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b1), c2);
            c3 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b1 + 8), c3);
        }
        _mm256_storeu_ps(y + j, c0);
        _mm256_storeu_ps(y + j + 8, c1);
        _mm256_storeu_ps(y + j + 16, c2);
        _mm256_storeu_ps(y + j + 24, c3);
    }
    for (; j < n; j += 16, b += ps) {
        __m256 c0 = _mm256_setzero_ps(), c1 = _mm256_setzero_ps();
        const float *b0 = b;
        for (int64_t p = 0; p < k; p++, b0 += 16) {
            const __m256 av = _mm256_broadcast_ss(a + p);
            c0 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b0), c0);
            c1 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b0 + 8), c1);
        }
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const int64_t left = n - j;
        const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(left < 8 ? left : 8)), lane);
        const __m256i m1 =
            _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(left < 16 ? left - 8 : 8)), lane);
        _mm256_maskstore_ps(y + j, m0, c0);
        _mm256_maskstore_ps(y + j + 8, m1, c1);
    }
}
