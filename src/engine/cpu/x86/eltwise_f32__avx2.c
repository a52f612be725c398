/*
 * AVX2+FMA kernels behind cpu/eltwise.c (see eltwise.h for the contracts and for exactness).
 * Every function carries its own target attribute, so the file builds for any x86-64 CPU and
 * eltwise.c only calls it when cpuid reported AVX2 and FMA.
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "engine/cpu/eltwise.h"

#define EB_AVX2 __attribute__((target("avx2,fma")))

/*
 * exp(x) for x in [-87, 87] (inputs outside are clamped; NaN propagates): Cephes' expf
 * polynomial, about 1 ulp. Results below e^-87 come out as e^-87 (about 1.6e-38), which is why
 * eltwise.h documents an absolute tolerance for Sigmoid and Softmax.
 */
EB_AVX2 static inline __m256 exp_ps(__m256 x)
{
    x = _mm256_min_ps(_mm256_set1_ps(87.0f), x); /* NaN in x: the second operand is returned */
    x = _mm256_max_ps(_mm256_set1_ps(-87.0f), x);
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
    __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(e, 23)));
}

/* Mask of the first `rem` (0..8) lanes. */
EB_AVX2 static inline __m256i tail_mask(int64_t rem)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)rem), idx);
}

#define BINARY_LOOP(OPFN)                                                                          \
    do {                                                                                           \
        int64_t i = 0;                                                                             \
        if (a_inc && b_inc) {                                                                      \
            for (; i + 8 <= n; i += 8)                                                             \
                _mm256_storeu_ps(y + i, OPFN(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));     \
        } else if (a_inc) {                                                                        \
            const __m256 vb = _mm256_set1_ps(b[0]);                                                \
            for (; i + 8 <= n; i += 8)                                                             \
                _mm256_storeu_ps(y + i, OPFN(_mm256_loadu_ps(a + i), vb));                         \
        } else if (b_inc) {                                                                        \
            const __m256 va = _mm256_set1_ps(a[0]);                                                \
            for (; i + 8 <= n; i += 8)                                                             \
                _mm256_storeu_ps(y + i, OPFN(va, _mm256_loadu_ps(b + i)));                         \
        }                                                                                          \
        if (i < n) {                                                                               \
            const __m256i m = tail_mask(n - i);                                                    \
            const __m256 va = a_inc ? _mm256_maskload_ps(a + i, m) : _mm256_set1_ps(a[0]);         \
            const __m256 vb = b_inc ? _mm256_maskload_ps(b + i, m) : _mm256_set1_ps(b[0]);         \
            _mm256_maskstore_ps(y + i, m, OPFN(va, vb));                                           \
        }                                                                                          \
    } while (0)

EB_AVX2 void eb_cpu_binary_f32__avx2(enum eb_binop op, int64_t n, const float *a, int a_inc,
                                     const float *b, int b_inc, float *y)
{
    switch (op) {
    case EB_BINOP_ADD: BINARY_LOOP(_mm256_add_ps); break;
    case EB_BINOP_SUB: BINARY_LOOP(_mm256_sub_ps); break;
    case EB_BINOP_MUL: BINARY_LOOP(_mm256_mul_ps); break;
    case EB_BINOP_DIV: BINARY_LOOP(_mm256_div_ps); break;
    default: break;
    }
}

EB_AVX2 static inline __m256 sigmoid_ps(__m256 x)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), x));
    return _mm256_div_ps(one, _mm256_add_ps(one, e));
}

EB_AVX2 void eb_cpu_sigmoid_f32__avx2(int64_t n, const float *x, float *y)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = sigmoid_ps(_mm256_loadu_ps(x + i));
        const __m256 b = sigmoid_ps(_mm256_loadu_ps(x + i + 8));
        _mm256_storeu_ps(y + i, a);
        _mm256_storeu_ps(y + i + 8, b);
    }
    for (; i < n; i += 8) {
        const __m256i m = tail_mask(n - i);
        _mm256_maskstore_ps(y + i, m, sigmoid_ps(_mm256_maskload_ps(x + i, m)));
    }
}

EB_AVX2 static float hmax(__m256 v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

EB_AVX2 static float hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Softmax of one contiguous row of `len` elements. */
EB_AVX2 static void softmax_row(int64_t len, const float *x, float *y)
{
    __m256 vm = _mm256_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i + 8 <= len; i += 8)
        vm = _mm256_max_ps(_mm256_loadu_ps(x + i), vm); /* x > m ? x : m, as the reference */
    float m = hmax(vm);
    for (; i < len; i++)
        m = x[i] > m ? x[i] : m;
    const __m256 bm = _mm256_set1_ps(m);
    __m256 vs = _mm256_setzero_ps();
    for (i = 0; i < len; i += 8) {
        const __m256i k = tail_mask(len - i);
        const __m256 e = exp_ps(_mm256_sub_ps(_mm256_maskload_ps(x + i, k), bm));
        _mm256_maskstore_ps(y + i, k, e);
        vs = _mm256_add_ps(vs, _mm256_and_ps(e, _mm256_castsi256_ps(k)));
    }
    const __m256 s = _mm256_set1_ps(hsum(vs));
    for (i = 0; i < len; i += 8) {
        const __m256i k = tail_mask(len - i);
        _mm256_maskstore_ps(y + i, k, _mm256_div_ps(_mm256_maskload_ps(y + i, k), s));
    }
}

EB_AVX2 void eb_cpu_softmax_f32__avx2(int64_t axis, int64_t inner, int64_t cnt, const float *x,
                                      float *y)
{
    if (inner == 1) {
        softmax_row(axis, x, y);
        return;
    }
    /* Columns eight at a time; the reduction over `axis` runs in the reference's order. */
    for (int64_t c = 0; c < cnt; c += 8) {
        const __m256i k = tail_mask(cnt - c);
        const float *xp = x + c;
        float *yp = y + c;
        __m256 m = _mm256_set1_ps(-INFINITY), s = _mm256_setzero_ps();
        for (int64_t a = 0; a < axis; a++)
            m = _mm256_max_ps(_mm256_maskload_ps(xp + a * inner, k), m);
        for (int64_t a = 0; a < axis; a++) {
            const __m256 e = exp_ps(_mm256_sub_ps(_mm256_maskload_ps(xp + a * inner, k), m));
            _mm256_maskstore_ps(yp + a * inner, k, e);
            s = _mm256_add_ps(s, e);
        }
        for (int64_t a = 0; a < axis; a++)
            _mm256_maskstore_ps(yp + a * inner, k,
                                _mm256_div_ps(_mm256_maskload_ps(yp + a * inner, k), s));
    }
}

/* The reference's update: m = (v > m || isnan(v)) ? v : m. */
EB_AVX2 static inline __m256 max_upd(__m256 m, __m256 v)
{
    const __m256 take =
        _mm256_or_ps(_mm256_cmp_ps(v, m, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_blendv_ps(m, v, take);
}

static float maxpool_one(const struct eb_pool2d_desc *d, const float *x, int64_t oh, int64_t ow)
{
    float m = -INFINITY;
    for (int64_t kh = 0; kh < d->kh; kh++) {
        const int64_t ih = oh * d->stride_h - d->pad_t + kh * d->dil_h;
        if (ih < 0 || ih >= d->ih)
            continue;
        for (int64_t kw = 0; kw < d->kw; kw++) {
            const int64_t iw = ow * d->stride_w - d->pad_l + kw * d->dil_w;
            if (iw < 0 || iw >= d->iw)
                continue;
            const float v = x[ih * d->iw + iw];
            if (v > m || isnan(v))
                m = v;
        }
    }
    return m;
}

EB_AVX2 void eb_cpu_maxpool2d_f32__avx2(const struct eb_pool2d_desc *d, int64_t oh0, int64_t oh1,
                                        const float *x, float *y)
{
    /* Output columns whose whole window lies inside the row: [w0, w1). */
    int64_t w0 = d->ow, w1 = d->ow;
    if (d->stride_w == 1) {
        w0 = d->pad_l;
        w1 = d->iw + d->pad_l - (d->kw - 1) * d->dil_w;
        w0 = w0 > d->ow ? d->ow : w0;
        w1 = w1 > d->ow ? d->ow : (w1 < w0 ? w0 : w1);
    }
    for (int64_t oh = oh0; oh < oh1; oh++) {
        float *yr = y + oh * d->ow;
        int64_t ow = 0;
        for (; ow < w0; ow++)
            yr[ow] = maxpool_one(d, x, oh, ow);
        for (; ow + 8 <= w1; ow += 8) {
            __m256 m = _mm256_set1_ps(-INFINITY);
            for (int64_t kh = 0; kh < d->kh; kh++) {
                const int64_t ih = oh * d->stride_h - d->pad_t + kh * d->dil_h;
                if (ih < 0 || ih >= d->ih)
                    continue;
                const float *xr = x + ih * d->iw + ow - d->pad_l;
                for (int64_t kw = 0; kw < d->kw; kw++)
                    m = max_upd(m, _mm256_loadu_ps(xr + kw * d->dil_w));
            }
            _mm256_storeu_ps(yr + ow, m);
        }
        for (; ow < d->ow; ow++)
            yr[ow] = maxpool_one(d, x, oh, ow);
    }
}

EB_AVX2 void eb_cpu_upsample_row_f32__avx2(int64_t n, int64_t k, const float *x, float *y)
{
    int64_t j = 0;
    if (k == 2) {
        for (; j + 8 <= n; j += 8) {
            const __m256 v = _mm256_loadu_ps(x + j);
            const __m256 lo = _mm256_unpacklo_ps(v, v), hi = _mm256_unpackhi_ps(v, v);
            _mm256_storeu_ps(y + 2 * j, _mm256_permute2f128_ps(lo, hi, 0x20));
            _mm256_storeu_ps(y + 2 * j + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
        }
    }
    for (; j < n; j++)
        for (int64_t r = 0; r < k; r++)
            y[j * k + r] = x[j];
}

EB_AVX2 void eb_cpu_quantize_f32__avx2(int64_t n, const float *x, float scale, float z,
                                       int out_signed, void *y)
{
    const __m256 vs = _mm256_set1_ps(scale), vz = _mm256_set1_ps(z);
    const __m256 lo = _mm256_set1_ps(out_signed ? -128.0f : 0.0f);
    const __m256 hi = _mm256_set1_ps(out_signed ? 127.0f : 255.0f);
    uint8_t *py = y;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 q = _mm256_div_ps(_mm256_loadu_ps(x + i), vs);
        q = _mm256_add_ps(_mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vz);
        const __m256 nan = _mm256_cmp_ps(q, q, _CMP_UNORD_Q);
        q = _mm256_min_ps(_mm256_max_ps(q, lo), hi);
        q = _mm256_blendv_ps(q, vz, nan);
        const __m256i v = _mm256_cvtps_epi32(q);
        const __m128i w =
            _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        const __m128i b = out_signed ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
        _mm_storel_epi64((__m128i *)(void *)(py + i), b);
    }
    for (; i < n; i++) {
        float q = nearbyintf(x[i] / scale) + z;
        if (out_signed) {
            q = q < -128.0f ? -128.0f : (q > 127.0f ? 127.0f : q);
            ((int8_t *)y)[i] = (int8_t)(q != q ? z : q);
        } else {
            q = q < 0.0f ? 0.0f : (q > 255.0f ? 255.0f : q);
            py[i] = (uint8_t)(q != q ? z : q);
        }
    }
}

EB_AVX2 void eb_cpu_dequantize_f32__avx2(int64_t n, const void *x, int x_signed, float scale,
                                         int32_t z, float *y)
{
    const uint8_t *px = x;
    const __m256 vs = _mm256_set1_ps(scale);
    const __m256i vz = _mm256_set1_epi32(z);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)(px + i));
        const __m256i v = x_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, vz)), vs));
    }
    for (; i < n; i++) {
        const int32_t v = x_signed ? (int32_t)((const int8_t *)x)[i] : (int32_t)px[i];
        y[i] = (float)(v - z) * scale;
    }
}
