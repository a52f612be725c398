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

/*
 * Softmax's exp(d) for d = x - max <= 0: exp_ps, but 0 where d < ln(FLT_MIN) (NaN kept). Without
 * it a masked score (an additive mask of -FLT_MAX) comes out as e^-87 and its probability as a
 * denormal, which the next product (P·V) then multiplies: microcode assists on many x86 cores
 * (tens of times slower; the true value rounds to 0 or a denormal anyway).
 */
EB_AVX2 static inline __m256 exp_sm(__m256 d)
{
    return _mm256_and_ps(exp_ps(d), _mm256_cmp_ps(d, _mm256_set1_ps(-87.33654f), _CMP_NLT_UQ));
}

/* v, with lanes below FLT_MIN (denormal probabilities, v >= 0) flushed to 0. */
EB_AVX2 static inline __m256 flush_small(__m256 v)
{
    return _mm256_and_ps(v, _mm256_cmp_ps(v, _mm256_set1_ps(1.17549435e-38f), _CMP_NLT_UQ));
}

/* Mask of the first `rem` (0..8) lanes. */
EB_AVX2 static inline __m256i tail_mask(int64_t rem)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)rem), idx);
}

/* Stores the first `cnt` (0..7) lanes of v: SSE pieces, since a masked store is slow on AMD. */
EB_AVX2 static inline void store_head(float *y, __m256 v, int64_t cnt)
{
    __m128 h = _mm256_castps256_ps128(v);
    if (cnt & 4) {
        _mm_storeu_ps(y, h);
        h = _mm256_extractf128_ps(v, 1);
        y += 4;
    }
    if (cnt & 2) {
        _mm_storel_pi((__m64 *)(void *)y, h);
        h = _mm_movehl_ps(h, h);
        y += 2;
    }
    if (cnt & 1)
        _mm_store_ss(y, h);
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

/*
 * Softmax of one contiguous row of `len` elements. Full vectors use plain loads and stores
 * (masked stores are slow on AMD); y is scaled by 1 / sum, within the tolerance of eltwise.h.
 */
EB_AVX2 static void softmax_row(int64_t len, const float *x, float *y)
{
    const int64_t full = len & ~(int64_t)7, rem = len - full;
    const __m256i k = tail_mask(rem);
    __m256 vm = _mm256_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i < full; i += 8)
        vm = _mm256_max_ps(_mm256_loadu_ps(x + i), vm); /* x > m ? x : m, as the reference */
    float m = hmax(vm);
    for (; i < len; i++)
        m = x[i] > m ? x[i] : m;
    const __m256 bm = _mm256_set1_ps(m);
    __m256 vs = _mm256_setzero_ps();
    for (i = 0; i < full; i += 8) {
        const __m256 e = exp_sm(_mm256_sub_ps(_mm256_loadu_ps(x + i), bm));
        _mm256_storeu_ps(y + i, e);
        vs = _mm256_add_ps(vs, e);
    }
    __m256 et = _mm256_setzero_ps();
    if (rem > 0) {
        et = _mm256_and_ps(exp_sm(_mm256_sub_ps(_mm256_maskload_ps(x + i, k), bm)),
                           _mm256_castsi256_ps(k));
        vs = _mm256_add_ps(vs, et);
    }
    const __m256 r = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_set1_ps(hsum(vs)));
    for (i = 0; i < full; i += 8)
        _mm256_storeu_ps(y + i, flush_small(_mm256_mul_ps(_mm256_loadu_ps(y + i), r)));
    if (rem > 0)
        store_head(y + i, flush_small(_mm256_mul_ps(et, r)), rem);
}

/*
 * Softmax of eight columns (fewer when `rem` < 8: masked loads, partial stores) over `axis`
 * elements `inner` apart; the max and the sum run over `axis` in the reference's order.
 */
EB_AVX2 static inline void softmax_cols(int64_t axis, int64_t inner, const float *x, float *y,
                                        int64_t rem)
{
    const __m256i k = tail_mask(rem);
    __m256 m = _mm256_set1_ps(-INFINITY), s = _mm256_setzero_ps();
    for (int64_t a = 0; a < axis; a++) {
        const float *xa = x + a * inner;
        m = _mm256_max_ps(rem == 8 ? _mm256_loadu_ps(xa) : _mm256_maskload_ps(xa, k), m);
    }
    for (int64_t a = 0; a < axis; a++) {
        const float *xa = x + a * inner;
        const __m256 v = rem == 8 ? _mm256_loadu_ps(xa) : _mm256_maskload_ps(xa, k);
        const __m256 e = exp_sm(_mm256_sub_ps(v, m));
        if (rem == 8)
            _mm256_storeu_ps(y + a * inner, e);
        else
            store_head(y + a * inner, e, rem);
        s = _mm256_add_ps(s, e);
    }
    const __m256 r = _mm256_div_ps(_mm256_set1_ps(1.0f), s);
    for (int64_t a = 0; a < axis; a++) {
        float *ya = y + a * inner;
        if (rem == 8)
            _mm256_storeu_ps(ya, flush_small(_mm256_mul_ps(_mm256_loadu_ps(ya), r)));
        else
            store_head(ya, flush_small(_mm256_mul_ps(_mm256_maskload_ps(ya, k), r)), rem);
    }
}

EB_AVX2 void eb_cpu_softmax_f32__avx2(int64_t axis, int64_t inner, int64_t cnt, const float *x,
                                      float *y)
{
    if (inner == 1) {
        softmax_row(axis, x, y);
        return;
    }
    int64_t c = 0;
    for (; c + 8 <= cnt; c += 8)
        softmax_cols(axis, inner, x + c, y + c, 8);
    if (c < cnt)
        softmax_cols(axis, inner, x + c, y + c, cnt - c);
}

/*
 * The reference's update m = (v > m || isnan(v)) ? v : m. max_ps(v, m) is v > m ? v : m, which
 * keeps m on ties (so -0 and +0 resolve as in the reference) and when m is NaN; only a NaN v
 * needs the blend.
 */
EB_AVX2 static inline __m256 max_upd(__m256 m, __m256 v)
{
    return _mm256_blendv_ps(_mm256_max_ps(v, m), v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

/* One tap: the reference's update, or a plain max when the caller promised no NaN. */
#define FOLD_UPD(m, v) ((nan) ? max_upd((m), (v)) : _mm256_max_ps((v), (m)))

/* The fold for a constant `nan` (inlined twice, so each loop has one update). */
EB_AVX2 static inline __attribute__((always_inline)) void
fold_rows(int64_t rows, int64_t n, int cnt, const float *const *src, int64_t src_stride, int acc,
          const int nan, float *y, int64_t y_stride)
{
    const int first = acc ? 0 : 1;
    const __m256i tail = tail_mask(n & 7);
    for (int64_t r = 0; r < rows; r++) {
        const int64_t so = r * src_stride;
        float *yr = y + r * y_stride;
        int64_t j = 0;
        /* Two independent chains: each tap depends on m. */
        for (; j + 16 <= n; j += 16) {
            __m256 m0 = acc ? _mm256_loadu_ps(yr + j) : _mm256_loadu_ps(src[0] + so + j);
            __m256 m1 = acc ? _mm256_loadu_ps(yr + j + 8) : _mm256_loadu_ps(src[0] + so + j + 8);
            for (int i = first; i < cnt; i++) {
                const float *s = src[i] + so + j;
                m0 = FOLD_UPD(m0, _mm256_loadu_ps(s));
                m1 = FOLD_UPD(m1, _mm256_loadu_ps(s + 8));
            }
            _mm256_storeu_ps(yr + j, m0);
            _mm256_storeu_ps(yr + j + 8, m1);
        }
        for (; j + 8 <= n; j += 8) {
            __m256 m = acc ? _mm256_loadu_ps(yr + j) : _mm256_loadu_ps(src[0] + so + j);
            for (int i = first; i < cnt; i++)
                m = FOLD_UPD(m, _mm256_loadu_ps(src[i] + so + j));
            _mm256_storeu_ps(yr + j, m);
        }
        if (j < n) {
            __m256 m =
                acc ? _mm256_maskload_ps(yr + j, tail) : _mm256_maskload_ps(src[0] + so + j, tail);
            for (int i = first; i < cnt; i++)
                m = FOLD_UPD(m, _mm256_maskload_ps(src[i] + so + j, tail));
            store_head(yr + j, m, n - j);
        }
    }
}

#undef FOLD_UPD

EB_AVX2 void eb_cpu_maxpool_fold_f32__avx2(int64_t rows, int64_t n, int cnt,
                                           const float *const *src, int64_t src_stride, int acc,
                                           int nan, float *y, int64_t y_stride)
{
    if (nan)
        fold_rows(rows, n, cnt, src, src_stride, acc, 1, y, y_stride);
    else
        fold_rows(rows, n, cnt, src, src_stride, acc, 0, y, y_stride);
}

EB_AVX2 int eb_cpu_any_nan_f32__avx2(int64_t n, const float *x)
{
    __m256 u = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) /* unordered: either operand is a NaN */
        u = _mm256_or_ps(
            u, _mm256_cmp_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(x + i + 8), _CMP_UNORD_Q));
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        u = _mm256_or_ps(u, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    int any = !_mm256_testz_ps(u, u);
    for (; i < n; i++)
        any |= isnan(x[i]) != 0;
    return any;
}

EB_AVX2 void eb_cpu_upsample_row_f32__avx2(int64_t n, int64_t k, const float *x, int64_t rows,
                                           float *y, int64_t y_stride)
{
    int64_t j = 0;
    if (k == 2) {
        for (; j + 8 <= n; j += 8) {
            const __m256 v = _mm256_loadu_ps(x + j);
            const __m256 lo = _mm256_unpacklo_ps(v, v), hi = _mm256_unpackhi_ps(v, v);
            const __m256 a = _mm256_permute2f128_ps(lo, hi, 0x20);
            const __m256 b = _mm256_permute2f128_ps(lo, hi, 0x31);
            for (int64_t i = 0; i < rows; i++) {
                _mm256_storeu_ps(y + i * y_stride + 2 * j, a);
                _mm256_storeu_ps(y + i * y_stride + 2 * j + 8, b);
            }
        }
        if (j < n) { /* the last n - j (< 8) inputs: 2 * (n - j) outputs */
            const int64_t rem = n - j;
            const __m256 v = _mm256_maskload_ps(x + j, tail_mask(rem));
            const __m256 lo = _mm256_unpacklo_ps(v, v), hi = _mm256_unpackhi_ps(v, v);
            const __m256 a = _mm256_permute2f128_ps(lo, hi, 0x20);
            const __m256 b = _mm256_permute2f128_ps(lo, hi, 0x31);
            for (int64_t i = 0; i < rows; i++) {
                float *yr = y + i * y_stride + 2 * j;
                if (rem >= 4) {
                    _mm256_storeu_ps(yr, a);
                    store_head(yr + 8, b, 2 * rem - 8);
                } else {
                    store_head(yr, a, 2 * rem);
                }
            }
        }
        return;
    }
    for (int64_t i = 0; i < rows; i++) {
        float *yr = y + i * y_stride;
        if (k >= 8) { /* each input fills k outputs with whole vectors and one partial store */
            for (j = 0; j < n; j++) {
                const __m256 v = _mm256_set1_ps(x[j]);
                int64_t r = 0;
                for (; r + 8 <= k; r += 8)
                    _mm256_storeu_ps(yr + j * k + r, v);
                store_head(yr + j * k + r, v, k - r);
            }
            continue;
        }
        for (j = 0; j < n; j++)
            for (int64_t r = 0; r < k; r++)
                yr[j * k + r] = x[j];
    }
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
