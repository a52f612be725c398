/*
 * AVX-512 kernels behind cpu/eltwise.c (eltwise.h: contracts and exactness). Each function
 * carries its own target attribute; eltwise.c calls them only when the engine runs the AVX-512
 * kernel family (cpuid reported AVX-512 F/BW/DQ/VL).
 */
#include <immintrin.h>
#include <math.h>

#include "engine/cpu/eltwise.h"

#define EB_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

/*
 * exp(x) as eltwise_f32__avx2.c's exp_ps (the same clamp to [-87, 87], Cephes' polynomial and
 * the same bits for every x), on 16 lanes; 2^n is applied by scalef (exact: n >= -126).
 */
EB_AVX512 static inline __m512 exp512(__m512 x)
{
    x = _mm512_min_ps(_mm512_set1_ps(87.0f), x); /* NaN in x: the second operand is returned */
    x = _mm512_max_ps(_mm512_set1_ps(-87.0f), x);
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

/* exp512(d) for d = x - max, 0 where d < ln(FLT_MIN): eltwise_f32__avx2.c's exp_sm. */
EB_AVX512 static inline __m512 exp_sm(__m512 d)
{
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(d, _mm512_set1_ps(-87.33654f), _CMP_NLT_UQ),
                               exp512(d));
}

/* v >= 0 with lanes below FLT_MIN flushed to 0 (no denormal probabilities). */
EB_AVX512 static inline __m512 flush_small(__m512 v)
{
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, _mm512_set1_ps(1.17549435e-38f), _CMP_NLT_UQ),
                               v);
}

/*
 * Softmax of `rows` contiguous rows of `len` (eltwise.h's tolerance): max, exp and sum, scale,
 * 16 lanes at a time with a masked tail. Two accumulators for the sum.
 */
EB_AVX512 void eb_cpu_softmax_rows_f32__avx512(int64_t rows, int64_t len, const float *x, float *y)
{
    const int64_t full = len & ~(int64_t)15, rem = len - full;
    const __mmask16 k = (__mmask16)((1u << rem) - 1u);
    for (int64_t row = 0; row < rows; row++, x += len, y += len) {
        __m512 vm = _mm512_set1_ps(-INFINITY);
        int64_t i = 0;
        for (; i < full; i += 16)
            vm = _mm512_max_ps(_mm512_loadu_ps(x + i), vm); /* x > m ? x : m, as the reference */
        if (rem > 0)
            vm = _mm512_mask_max_ps(vm, k, _mm512_maskz_loadu_ps(k, x + i), vm);
        const __m512 bm = _mm512_set1_ps(_mm512_reduce_max_ps(vm));
        __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
        for (i = 0; i + 32 <= full; i += 32) {
            const __m512 e0 = exp_sm(_mm512_sub_ps(_mm512_loadu_ps(x + i), bm));
            const __m512 e1 = exp_sm(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), bm));
            _mm512_storeu_ps(y + i, e0);
            _mm512_storeu_ps(y + i + 16, e1);
            s0 = _mm512_add_ps(s0, e0);
            s1 = _mm512_add_ps(s1, e1);
        }
        for (; i < full; i += 16) {
            const __m512 e = exp_sm(_mm512_sub_ps(_mm512_loadu_ps(x + i), bm));
            _mm512_storeu_ps(y + i, e);
            s0 = _mm512_add_ps(s0, e);
        }
        if (rem > 0) {
            const __m512 e =
                _mm512_maskz_mov_ps(k, exp_sm(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), bm)));
            _mm512_mask_storeu_ps(y + i, k, e);
            s0 = _mm512_add_ps(s0, e);
        }
        const __m512 r = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)));
        for (i = 0; i < full; i += 16)
            _mm512_storeu_ps(y + i, flush_small(_mm512_mul_ps(_mm512_loadu_ps(y + i), r)));
        if (rem > 0)
            _mm512_mask_storeu_ps(y + i, k,
                                  flush_small(_mm512_mul_ps(_mm512_maskz_loadu_ps(k, y + i), r)));
    }
}
