/*
 * AVX2 integer kernels: the ConvInteger micro-kernel (4×16 int32 tile, vpmaddwd on int16
 * pairs: exact), the pair packing of uint8 activations, and DynamicQuantizeLinear's min/max
 * and quantisation (bit-exact with the reference). Per-function target attributes: the file
 * compiles for any x86-64 and runs only when the CPU has AVX2+FMA.
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "engine/cpu/conv_u8.h"

#define AVX2 __attribute__((target("avx2,fma")))

AVX2 void eb_cpu_igemm_pack_u8__avx2(int64_t k, int64_t nb, const uint8_t *col, int64_t ldcol,
                                     int16_t *out)
{
    const int64_t kp = (k + 1) / 2;
    for (int64_t t = 0; t < nb; t += EB_IGEMM_NR) {
        int16_t *o = out + (t / EB_IGEMM_NR) * kp * 2 * EB_IGEMM_NR;
        for (int64_t i = 0; i < kp; i++) {
            const __m128i r0 = _mm_loadu_si128((const __m128i *)(col + 2 * i * ldcol + t));
            const __m128i r1 =
                2 * i + 1 < k ? _mm_loadu_si128((const __m128i *)(col + (2 * i + 1) * ldcol + t))
                              : _mm_setzero_si128();
            const __m256i lo = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(r0, r1));
            const __m256i hi = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(r0, r1));
            _mm256_storeu_si256((__m256i *)(o + i * 32), lo);
            _mm256_storeu_si256((__m256i *)(o + i * 32 + 16), hi);
        }
    }
}

/* Accumulates one 4×16 tile: c[2m + h] holds row m, columns 8h..8h+7. */
AVX2 static inline __attribute__((always_inline)) void acc_4x16(int64_t kp, const int32_t *w,
                                                                const int16_t *b, __m256i c[8])
{
    __m256i c00 = _mm256_setzero_si256(), c01 = _mm256_setzero_si256();
    __m256i c10 = _mm256_setzero_si256(), c11 = _mm256_setzero_si256();
    __m256i c20 = _mm256_setzero_si256(), c21 = _mm256_setzero_si256();
    __m256i c30 = _mm256_setzero_si256(), c31 = _mm256_setzero_si256();
    for (int64_t i = 0; i < kp; i++) {
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)(b + i * 32));
        const __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + i * 32 + 16));
        __m256i a = _mm256_set1_epi32(w[i * 4 + 0]);
        c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(a, b0));
        c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(a, b1));
        a = _mm256_set1_epi32(w[i * 4 + 1]);
        c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(a, b0));
        c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(a, b1));
        a = _mm256_set1_epi32(w[i * 4 + 2]);
        c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(a, b0));
        c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(a, b1));
        a = _mm256_set1_epi32(w[i * 4 + 3]);
        c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(a, b0));
        c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(a, b1));
    }
    c[0] = c00, c[1] = c01, c[2] = c10, c[3] = c11;
    c[4] = c20, c[5] = c21, c[6] = c30, c[7] = c31;
}

AVX2 void eb_cpu_igemm_u8s8_4x16__avx2(int64_t kp, const int32_t *w, const int16_t *b,
                                       const int32_t *corr, int32_t *y, int64_t ldy, int mr, int nr)
{
    __m256i c[8];
    acc_4x16(kp, w, b, c);
    for (int m = 0; m < mr; m++) {
        const __m256i cv = _mm256_set1_epi32(corr[m]);
        const __m256i v0 = _mm256_sub_epi32(c[2 * m], cv), v1 = _mm256_sub_epi32(c[2 * m + 1], cv);
        int32_t *ym = y + m * ldy;
        if (nr == EB_IGEMM_NR) {
            _mm256_storeu_si256((__m256i *)ym, v0);
            _mm256_storeu_si256((__m256i *)(ym + 8), v1);
        } else {
            int32_t tmp[EB_IGEMM_NR];
            _mm256_storeu_si256((__m256i *)tmp, v0);
            _mm256_storeu_si256((__m256i *)(tmp + 8), v1);
            memcpy(ym, tmp, (size_t)nr * sizeof(int32_t));
        }
    }
}

/* sat(rne(fma((float)v, mult, bias)) + zp) as int32, in [lo, hi]. */
AVX2 static inline __attribute__((always_inline)) __m256i
requant8(__m256i v, __m256 mult, __m256 bias, __m256 zp, __m256 lo, __m256 hi)
{
    const __m256 f = _mm256_fmadd_ps(_mm256_cvtepi32_ps(v), mult, bias);
    __m256 q = _mm256_add_ps(_mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
    q = _mm256_min_ps(_mm256_max_ps(q, lo), hi);
    return _mm256_cvtps_epi32(q);
}

AVX2 void eb_cpu_igemm_u8s8_4x16_q__avx2(int64_t kp, const int32_t *w, const int16_t *b,
                                         const int32_t *corr, const float *mult, const float *bias,
                                         const struct eb_conv2d_u8_requant *rq, uint8_t *y,
                                         int64_t ldy, int mr, int nr)
{
    __m256i c[8];
    acc_4x16(kp, w, b, c);
    const __m256 zp = _mm256_set1_ps(rq->y_zp);
    const __m256 lo = _mm256_set1_ps(rq->y_signed ? -128.0f : 0.0f);
    const __m256 hi = _mm256_set1_ps(rq->y_signed ? 127.0f : 255.0f);
    const __m256i bytemask = _mm256_set1_epi32(0xff);
    for (int m = 0; m < mr; m++) {
        const __m256i cv = _mm256_set1_epi32(corr[m]);
        const __m256 vm = _mm256_set1_ps(mult[m]), vb = _mm256_set1_ps(bias[m]);
        __m256i q0 = requant8(_mm256_sub_epi32(c[2 * m], cv), vm, vb, zp, lo, hi);
        __m256i q1 = requant8(_mm256_sub_epi32(c[2 * m + 1], cv), vm, vb, zp, lo, hi);
        q0 = _mm256_and_si256(q0, bytemask); /* the output byte (two's complement for int8) */
        q1 = _mm256_and_si256(q1, bytemask);
        if (rq->lut != NULL) {
            /* 4-byte gathers at lut + byte: the table has 3 bytes of slack past entry 255. */
            q0 = _mm256_and_si256(_mm256_i32gather_epi32((const int *)rq->lut, q0, 1), bytemask);
            q1 = _mm256_and_si256(_mm256_i32gather_epi32((const int *)rq->lut, q1, 1), bytemask);
        }
        /* int32 bytes → 16 bytes in order: packs keep 128-bit lanes, so fix with a permute. */
        const __m256i w16 = _mm256_permute4x64_epi64(_mm256_packus_epi32(q0, q1), 0xd8);
        const __m128i b8 =
            _mm_packus_epi16(_mm256_castsi256_si128(w16), _mm256_extracti128_si256(w16, 1));
        uint8_t *ym = y + m * ldy;
        if (nr == EB_IGEMM_NR) {
            _mm_storeu_si128((__m128i *)ym, b8);
        } else {
            uint8_t tmp[EB_IGEMM_NR];
            _mm_storeu_si128((__m128i *)tmp, b8);
            memcpy(ym, tmp, (size_t)nr);
        }
    }
}

AVX2 void eb_cpu_minmax_f32__avx2(int64_t n, const float *x, float *mn, float *mx)
{
    /* min_ps(v, acc) is (v < acc ? v : acc) and max_ps(v, acc) is (v > acc ? v : acc): the
     * reference's comparisons, so NaN is never taken and -0 never replaces +0. */
    __m256 vmn = _mm256_set1_ps(*mn), vmx = _mm256_set1_ps(*mx);
    __m256 vmn1 = vmn, vmx1 = vmx;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
        vmn = _mm256_min_ps(a, vmn);
        vmx = _mm256_max_ps(a, vmx);
        vmn1 = _mm256_min_ps(b, vmn1);
        vmx1 = _mm256_max_ps(b, vmx1);
    }
    float lo[16], hi[16];
    _mm256_storeu_ps(lo, vmn);
    _mm256_storeu_ps(lo + 8, vmn1);
    _mm256_storeu_ps(hi, vmx);
    _mm256_storeu_ps(hi + 8, vmx1);
    eb_cpu__minmax_finish(8, lo, hi, x + i, n - i, mn, mx);
}

AVX2 static __m256i quant8(const float *x, __m256 vs, __m256 vz)
{
    const __m256 v = _mm256_add_ps(_mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(x), vs),
                                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                                   vz);
    const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    __m256 q = _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), _mm256_set1_ps(255.0f));
    q = _mm256_blendv_ps(q, vz, nan);
    return _mm256_cvtps_epi32(q);
}

AVX2 void eb_cpu_quantize_u8__avx2(int64_t n, const float *x, float scale, float zp, uint8_t *y)
{
    const __m256 vs = _mm256_set1_ps(scale), vz = _mm256_set1_ps(zp);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256i a = quant8(x + i, vs, vz), b = quant8(x + i + 8, vs, vz);
        const __m256i c = quant8(x + i + 16, vs, vz), d = quant8(x + i + 24, vs, vz);
        /* packs interleave 128-bit lanes: ab = a0 b0 a1 b1, abcd = a0 b0 c0 d0 a1 b1 c1 d1. */
        const __m256i ab = _mm256_packus_epi32(a, b), cd = _mm256_packus_epi32(c, d);
        const __m256i abcd = _mm256_packus_epi16(ab, cd);
        const __m256i o =
            _mm256_permutevar8x32_epi32(abcd, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)(y + i), o);
    }
    for (; i < n; i++) {
        float v = nearbyintf(x[i] / scale) + zp;
        v = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
        y[i] = (uint8_t)(v == v ? v : zp);
    }
}

/* dst[o] = src[2o] for o < m; src[0 .. 2m-1) is readable. */
AVX2 void eb_cpu_gather2_u8__avx2(int64_t m, const uint8_t *src, uint8_t *dst)
{
    const __m256i even = _mm256_set1_epi16(0x00ff);
    int64_t o = 0;
    /* 16 outputs read src[2o .. 2o+31]; the last is one past what they need, so a vector
     * runs only while that byte is still one of the 2m-1 readable ones. */
    for (; o + 16 < m; o += 16) {
        const __m256i v =
            _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(src + 2 * o)), even);
        const __m128i p =
            _mm_packus_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        _mm_storeu_si128((__m128i *)(dst + o), p);
    }
    for (; o < m; o++)
        dst[o] = src[2 * o];
}

AVX2 void eb_cpu_dwconv_u8_i32__avx2(const struct eb_conv2d_desc *d, const uint8_t *x, int32_t x_zp,
                                     const int32_t *w, int16_t *pad, int32_t *y)
{
    /* pad: (x - x_zp) as int16 with zero borders, rows of pw (a multiple of 8 past every
     * vector read), so the taps of 8 outputs are one unaligned load each. */
    const int64_t ph = d->oh + (d->kh - 1) * d->dil_h;
    const int64_t pw = (d->ow + 7) / 8 * 8 + (d->kw - 1) * d->dil_w;
    for (int64_t r = 0; r < ph; r++) {
        const int64_t ih = r - d->pad_t;
        int16_t *pr = pad + r * pw;
        if (ih < 0 || ih >= d->ih) {
            memset(pr, 0, (size_t)pw * sizeof(int16_t));
            continue;
        }
        const uint8_t *xr = x + ih * d->iw;
        for (int64_t c = 0; c < pw; c++) {
            const int64_t iw = c - d->pad_l;
            pr[c] = iw >= 0 && iw < d->iw ? (int16_t)((int32_t)xr[iw] - x_zp) : 0;
        }
    }
    const int64_t taps = d->kh * d->kw;
    __m256i wv[25];
    const int64_t nt = taps <= 25 ? taps : 25;
    for (int64_t t = 0; t < nt; t++)
        wv[t] = _mm256_set1_epi32(w[t]);
    for (int64_t oh = 0; oh < d->oh; oh++) {
        for (int64_t o = 0; o < d->ow; o += 8) {
            __m256i acc = _mm256_setzero_si256();
            for (int64_t kh = 0; kh < d->kh; kh++) {
                const int16_t *pr = pad + (oh + kh * d->dil_h) * pw + o;
                for (int64_t kw = 0; kw < d->kw; kw++) {
                    const __m256i v = _mm256_cvtepi16_epi32(
                        _mm_loadu_si128((const __m128i *)(pr + kw * d->dil_w)));
                    const int64_t t = kh * d->kw + kw;
                    const __m256i wt = t < 25 ? wv[t] : _mm256_set1_epi32(w[t]);
                    acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(v, wt));
                }
            }
            int32_t *yr = y + oh * d->ow + o;
            if (o + 8 <= d->ow) {
                _mm256_storeu_si256((__m256i *)yr, acc);
            } else {
                int32_t tmp[8];
                _mm256_storeu_si256((__m256i *)tmp, acc);
                memcpy(yr, tmp, (size_t)(d->ow - o) * sizeof(int32_t));
            }
        }
    }
}

AVX2 void eb_cpu_requant_i32__avx2(int64_t n, const int32_t *acc, float mult, float bias,
                                   float y_zp, int y_signed, const uint8_t *lut, uint8_t *y)
{
    const float lo = y_signed ? -128.0f : 0.0f, hi = y_signed ? 127.0f : 255.0f;
    const __m256 vm = _mm256_set1_ps(mult), vb = _mm256_set1_ps(bias);
    const __m256 vz = _mm256_set1_ps(y_zp), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i qi =
            requant8(_mm256_loadu_si256((const __m256i *)(acc + i)), vm, vb, vz, vlo, vhi);
        /* int32 in [-128, 255] → bytes (two's complement for int8). */
        const __m128i w =
            _mm_packs_epi32(_mm256_castsi256_si128(qi), _mm256_extracti128_si256(qi, 1));
        const __m128i b = _mm_and_si128(w, _mm_set1_epi16(0xff));
        _mm_storel_epi64((__m128i *)(y + i), _mm_packus_epi16(b, b));
    }
    for (; i < n; i++) {
        float v = nearbyintf(fmaf((float)acc[i], mult, bias)) + y_zp;
        v = v < lo ? lo : (v > hi ? hi : v);
        y[i] = (uint8_t)(int32_t)v;
    }
    if (lut != NULL)
        for (i = 0; i < n; i++)
            y[i] = lut[y[i]];
}
