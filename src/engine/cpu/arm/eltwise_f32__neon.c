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
            for (int64_t a = 0; a < axis; a++)
                vst1q_f32(yp + a * inner, vdivq_f32(vld1q_f32(yp + a * inner), s));
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

void eb_cpu_maxpool2d_f32__neon(const struct eb_pool2d_desc *d, int64_t oh0, int64_t oh1,
                                const float *x, float *y)
{
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
        for (; ow + 4 <= w1; ow += 4) {
            float32x4_t m = vdupq_n_f32(-INFINITY);
            for (int64_t kh = 0; kh < d->kh; kh++) {
                const int64_t ih = oh * d->stride_h - d->pad_t + kh * d->dil_h;
                if (ih < 0 || ih >= d->ih)
                    continue;
                const float *xr = x + ih * d->iw + ow - d->pad_l;
                for (int64_t kw = 0; kw < d->kw; kw++) {
                    const float32x4_t v = vld1q_f32(xr + kw * d->dil_w);
                    const uint32x4_t take = vorrq_u32(vcgtq_f32(v, m), vmvnq_u32(vceqq_f32(v, v)));
                    m = vbslq_f32(take, v, m);
                }
            }
            vst1q_f32(yr + ow, m);
        }
        for (; ow < d->ow; ow++)
            yr[ow] = maxpool_one(d, x, oh, ow);
    }
}

void eb_cpu_upsample_row_f32__neon(int64_t n, int64_t k, const float *x, float *y)
{
    int64_t j = 0;
    if (k == 2) {
        for (; j + 4 <= n; j += 4) {
            const float32x4_t v = vld1q_f32(x + j);
            const float32x4x2_t z = vzipq_f32(v, v);
            vst1q_f32(y + 2 * j, z.val[0]);
            vst1q_f32(y + 2 * j + 4, z.val[1]);
        }
    }
    for (; j < n; j++)
        for (int64_t r = 0; r < k; r++)
            y[j * k + r] = x[j];
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
