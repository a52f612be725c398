/*
 * NEON (aarch64 Advanced SIMD) kernels behind cpu/eltwise.c; the same contracts and exactness
 * as the AVX2 versions (eltwise.h). Compiled only when targeting aarch64.
 */
#include <arm_neon.h>
#include <math.h>

#include "engine/cpu/eltwise.h"

/* exp(x) for x clamped to [-87, 87] (NaN propagates): Cephes' expf polynomial. */
static inline float32x4_t exp_f4(float32x4_t x)
{
    const uint32x4_t nan = vmvnq_u32(vceqq_f32(x, x));
    x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-87.0f)), vdupq_n_f32(87.0f));
    const float32x4_t n = vrndnq_f32(vmulq_n_f32(x, 1.44269504088896341f));
    float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375f));
    r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
    float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
    p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
    p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
    p = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), p, vmulq_f32(r, r));
    const int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
    return vbslq_f32(nan, x, vmulq_f32(p, vreinterpretq_f32_s32(e)));
}

static inline float32x4_t binop(enum eb_binop op, float32x4_t a, float32x4_t b)
{
    switch (op) {
    case EB_BINOP_SUB: return vsubq_f32(a, b);
    case EB_BINOP_MUL: return vmulq_f32(a, b);
    case EB_BINOP_DIV: return vdivq_f32(a, b);
    default: return vaddq_f32(a, b);
    }
}

static inline float binop1(enum eb_binop op, float a, float b)
{
    switch (op) {
    case EB_BINOP_SUB: return a - b;
    case EB_BINOP_MUL: return a * b;
    case EB_BINOP_DIV: return a / b;
    default: return a + b;
    }
}

void eb_cpu_binary_f32__neon(enum eb_binop op, int64_t n, const float *a, int a_inc, const float *b,
                             int b_inc, float *y)
{
    const float32x4_t va0 = vdupq_n_f32(a[0]), vb0 = vdupq_n_f32(b[0]);
    int64_t i = 0;
    /* The switch inside binop is hoisted by the compiler (op is loop-invariant). */
    for (; i + 4 <= n; i += 4)
        vst1q_f32(y + i, binop(op, a_inc ? vld1q_f32(a + i) : va0, b_inc ? vld1q_f32(b + i) : vb0));
    for (; i < n; i++)
        y[i] = binop1(op, a[i * a_inc], b[i * b_inc]);
}

void eb_cpu_sigmoid_f32__neon(int64_t n, const float *x, float *y)
{
    const float32x4_t one = vdupq_n_f32(1.0f);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t e = exp_f4(vnegq_f32(vld1q_f32(x + i)));
        vst1q_f32(y + i, vdivq_f32(one, vaddq_f32(one, e)));
    }
    for (; i < n; i++)
        y[i] = 1.0f / (1.0f + expf(-x[i]));
}

void eb_cpu_softmax_f32__neon(int64_t axis, int64_t inner, int64_t cnt, const float *x, float *y)
{
    int64_t c = 0;
    if (inner > 1) {
        for (; c + 4 <= cnt; c += 4) {
            const float *xp = x + c;
            float *yp = y + c;
            float32x4_t m = vdupq_n_f32(-INFINITY), s = vdupq_n_f32(0.0f);
            for (int64_t a = 0; a < axis; a++) {
                const float32x4_t v = vld1q_f32(xp + a * inner);
                m = vbslq_f32(vcgtq_f32(v, m), v, m); /* x > m ? x : m, as the reference */
            }
            for (int64_t a = 0; a < axis; a++) {
                const float32x4_t e = exp_f4(vsubq_f32(vld1q_f32(xp + a * inner), m));
                vst1q_f32(yp + a * inner, e);
                s = vaddq_f32(s, e);
            }
            const float32x4_t r = vdivq_f32(vdupq_n_f32(1.0f), s); /* eltwise.h tolerance */
            for (int64_t a = 0; a < axis; a++)
                vst1q_f32(yp + a * inner, vmulq_f32(vld1q_f32(yp + a * inner), r));
        }
    }
    /* Remaining columns (and contiguous rows): the reference's scalar formula. */
    for (; c < cnt; c++) {
        const float *xp = x + c;
        float *yp = y + c;
        float m = -INFINITY, s = 0.0f;
        for (int64_t a = 0; a < axis; a++)
            m = xp[a * inner] > m ? xp[a * inner] : m;
        for (int64_t a = 0; a < axis; a++) {
            yp[a * inner] = expf(xp[a * inner] - m);
            s += yp[a * inner];
        }
        for (int64_t a = 0; a < axis; a++)
            yp[a * inner] /= s;
    }
}

/*
 * The reference's update m = (v > m || isnan(v)) ? v : m, as a keep mask: m stays where v is a
 * number not above it (ties keep m, so -0 and +0 resolve as in the reference).
 */
static inline float32x4_t max_upd(float32x4_t m, float32x4_t v)
{
    const uint32x4_t keep = vbicq_u32(vceqq_f32(v, v), vcgtq_f32(v, m));
    return vbslq_f32(keep, m, v);
}

/* One tap: the reference's update, or a plain max when the caller promised no NaN. */
#define FOLD_UPD(m, v) ((nan) ? max_upd((m), (v)) : vbslq_f32(vcgtq_f32((v), (m)), (v), (m)))

/* The fold for a constant `nan` (inlined twice, so each loop has one update). */
static inline __attribute__((always_inline)) void
fold_rows(int64_t rows, int64_t n, int cnt, const float *const *src, int64_t src_stride, int acc,
          const int nan, float *y, int64_t y_stride)
{
    const int first = acc ? 0 : 1;
    for (int64_t r = 0; r < rows; r++) {
        const int64_t so = r * src_stride;
        float *yr = y + r * y_stride;
        int64_t j = 0;
        /* Two independent chains per iteration hide the compare-select latency. */
        for (; j + 8 <= n; j += 8) {
            float32x4_t m0 = vld1q_f32(acc ? yr + j : src[0] + so + j);
            float32x4_t m1 = vld1q_f32(acc ? yr + j + 4 : src[0] + so + j + 4);
            for (int i = first; i < cnt; i++) {
                const float *s = src[i] + so + j;
                m0 = FOLD_UPD(m0, vld1q_f32(s));
                m1 = FOLD_UPD(m1, vld1q_f32(s + 4));
            }
            vst1q_f32(yr + j, m0);
            vst1q_f32(yr + j + 4, m1);
        }
        for (; j + 4 <= n; j += 4) {
            float32x4_t m = vld1q_f32(acc ? yr + j : src[0] + so + j);
            for (int i = first; i < cnt; i++)
                m = FOLD_UPD(m, vld1q_f32(src[i] + so + j));
            vst1q_f32(yr + j, m);
        }
        for (; j < n; j++) {
            float m = acc ? yr[j] : src[0][so + j];
            for (int i = first; i < cnt; i++) {
                const float v = src[i][so + j];
                if (v > m || isnan(v))
                    m = v;
            }
            yr[j] = m;
        }
    }
}

#undef FOLD_UPD

void eb_cpu_maxpool_fold_f32__neon(int64_t rows, int64_t n, int cnt, const float *const *src,
                                   int64_t src_stride, int acc, int nan, float *y, int64_t y_stride)
{
    if (nan)
        fold_rows(rows, n, cnt, src, src_stride, acc, 1, y, y_stride);
    else
        fold_rows(rows, n, cnt, src, src_stride, acc, 0, y, y_stride);
}

int eb_cpu_any_nan_f32__neon(int64_t n, const float *x)
{
    uint32x4_t ok = vdupq_n_u32(~0u); /* lanes stay all-ones while every value equals itself */
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(x + i);
        ok = vandq_u32(ok, vceqq_f32(v, v));
    }
    int any = vminvq_u32(ok) == 0;
    for (; i < n; i++)
        any |= isnan(x[i]) != 0;
    return any;
}

void eb_cpu_upsample_row_f32__neon(int64_t n, int64_t k, const float *x, int64_t rows, float *y,
                                   int64_t y_stride)
{
    for (int64_t i = 0; i < rows; i++) {
        float *yr = y + i * y_stride;
        int64_t j = 0;
        if (k == 2) {
            for (; j + 4 <= n; j += 4) {
                const float32x4_t v = vld1q_f32(x + j);
                const float32x4x2_t z = vzipq_f32(v, v);
                vst1q_f32(yr + 2 * j, z.val[0]);
                vst1q_f32(yr + 2 * j + 4, z.val[1]);
            }
        } else if (k >= 4) {
            for (; j < n; j++) {
                const float32x4_t v = vdupq_n_f32(x[j]);
                int64_t r = 0;
                for (; r + 4 <= k; r += 4)
                    vst1q_f32(yr + j * k + r, v);
                for (; r < k; r++)
                    yr[j * k + r] = x[j];
            }
        }
        for (; j < n; j++)
            for (int64_t r = 0; r < k; r++)
                yr[j * k + r] = x[j];
    }
}

void eb_cpu_quantize_f32__neon(int64_t n, const float *x, float scale, float z, int out_signed,
                               void *y)
{
    const float lo = out_signed ? -128.0f : 0.0f, hi = out_signed ? 127.0f : 255.0f;
    const float32x4_t vs = vdupq_n_f32(scale), vz = vdupq_n_f32(z);
    const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
    uint8_t *py = y;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        int32x4_t w[2];
        for (int h = 0; h < 2; h++) {
            float32x4_t q = vaddq_f32(vrndnq_f32(vdivq_f32(vld1q_f32(x + i + 4 * h), vs)), vz);
            const uint32x4_t nan = vmvnq_u32(vceqq_f32(q, q));
            q = vbslq_f32(nan, vz, vminq_f32(vmaxq_f32(q, vlo), vhi));
            w[h] = vcvtq_s32_f32(q);
        }
        const int16x8_t s16 = vcombine_s16(vmovn_s32(w[0]), vmovn_s32(w[1]));
        if (out_signed)
            vst1_s8((int8_t *)py + i, vmovn_s16(s16));
        else
            vst1_u8(py + i, vqmovun_s16(s16));
    }
    for (; i < n; i++) {
        float q = nearbyintf(x[i] / scale) + z;
        q = q < lo ? lo : (q > hi ? hi : q);
        q = q != q ? z : q;
        if (out_signed)
            ((int8_t *)y)[i] = (int8_t)q;
        else
            py[i] = (uint8_t)q;
    }
}

void eb_cpu_dequantize_f32__neon(int64_t n, const void *x, int x_signed, float scale, int32_t z,
                                 float *y)
{
    const uint8_t *px = x;
    const int32x4_t vz = vdupq_n_s32(z);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const int16x8_t v = x_signed ? vmovl_s8(vld1_s8((const int8_t *)px + i))
                                     : vreinterpretq_s16_u16(vmovl_u8(vld1_u8(px + i)));
        const int32x4_t a = vsubq_s32(vmovl_s16(vget_low_s16(v)), vz);
        const int32x4_t b = vsubq_s32(vmovl_s16(vget_high_s16(v)), vz);
        vst1q_f32(y + i, vmulq_n_f32(vcvtq_f32_s32(a), scale));
        vst1q_f32(y + i + 4, vmulq_n_f32(vcvtq_f32_s32(b), scale));
    }
    for (; i < n; i++) {
        const int32_t v = x_signed ? (int32_t)((const int8_t *)x)[i] : (int32_t)px[i];
        y[i] = (float)(v - z) * scale;
    }
}
