/*
 * NEON integer kernels (base ARMv8-A Advanced SIMD, no dot product extension): the ConvInteger
 * micro-kernel (4×16 int32 tile), the pair packing of uint8 activations, the im2col of a pixel
 * block, the fused requantisation, and DynamicQuantizeLinear's min/max and quantisation.
 *
 * The packed activations have the AVX2 layout (per tile of 16 columns, [kp][16][2] int16: row
 * 2i and row 2i+1 of each column side by side), so conv_u8.c packs the weights once for every
 * ISA. The kernel splits each pair back into its even and odd rows with one vld2q_s16 and
 * multiplies them by the matching int16 weight with vmlal_laneq_s16: int16×int16 products are
 * exact in int32 and the accumulation wraps like the reference's, so the result equals
 * eb_cpu_conv2d_u8_i32__ref bit for bit. aarch64 only.
 */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "engine/cpu/conv_u8.h"

void eb_cpu_igemm_pack_u8__neon(int64_t k, int64_t nb, const uint8_t *col, int64_t ldcol,
                                int16_t *out)
{
    const int64_t kp = (k + 1) / 2;
    for (int64_t t = 0; t < nb; t += EB_IGEMM_NR) {
        int16_t *o = out + (t / EB_IGEMM_NR) * kp * 2 * EB_IGEMM_NR;
        for (int64_t i = 0; i < kp; i++) {
            const uint8x16_t r0 = vld1q_u8(col + 2 * i * ldcol + t);
            const uint8x16_t r1 =
                2 * i + 1 < k ? vld1q_u8(col + (2 * i + 1) * ldcol + t) : vdupq_n_u8(0);
            /* zip: r0[j], r1[j] side by side, columns 0..7 then 8..15; widen to int16. */
            const uint8x16_t z0 = vzip1q_u8(r0, r1), z1 = vzip2q_u8(r0, r1);
            int16_t *oi = o + i * 32;
            vst1q_s16(oi, vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(z0))));
            vst1q_s16(oi + 8, vreinterpretq_s16_u16(vmovl_high_u8(z0)));
            vst1q_s16(oi + 16, vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(z1))));
            vst1q_s16(oi + 24, vreinterpretq_s16_u16(vmovl_high_u8(z1)));
        }
    }
}

/*
 * Row m of the tile: weight lanes 2m (even row) and 2m+1 (odd row) of `a` times the even and
 * odd rows of columns 0..7 (e0, o0) and 8..15 (e1, o1). A macro: lanes must be immediates.
 */
#define ROW(c0, c1, c2, c3, m)                                                                     \
    do {                                                                                           \
        c0 = vmlal_laneq_s16(c0, vget_low_s16(e0), a, 2 * (m));                                    \
        c1 = vmlal_high_laneq_s16(c1, e0, a, 2 * (m));                                             \
        c2 = vmlal_laneq_s16(c2, vget_low_s16(e1), a, 2 * (m));                                    \
        c3 = vmlal_high_laneq_s16(c3, e1, a, 2 * (m));                                             \
        c0 = vmlal_laneq_s16(c0, vget_low_s16(o0), a, 2 * (m) + 1);                                \
        c1 = vmlal_high_laneq_s16(c1, o0, a, 2 * (m) + 1);                                         \
        c2 = vmlal_laneq_s16(c2, vget_low_s16(o1), a, 2 * (m) + 1);                                \
        c3 = vmlal_high_laneq_s16(c3, o1, a, 2 * (m) + 1);                                         \
    } while (0)

/* Accumulates one 4×16 tile: c[4m + q] holds row m, columns 4q..4q+3. */
static inline __attribute__((always_inline)) void acc_4x16(int64_t kp, const int32_t *w,
                                                           const int16_t *b, int32x4_t c[16])
{
    int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c02 = c00, c03 = c00;
    int32x4_t c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    int32x4_t c20 = c00, c21 = c00, c22 = c00, c23 = c00;
    int32x4_t c30 = c00, c31 = c00, c32 = c00, c33 = c00;
    for (int64_t i = 0; i < kp; i++) {
        const int16x8x2_t b0 = vld2q_s16(b + i * 32), b1 = vld2q_s16(b + i * 32 + 16);
        const int16x8_t e0 = b0.val[0], o0 = b0.val[1], e1 = b1.val[0], o1 = b1.val[1];
        /* Four int32 weight pairs: lane 2m is row m's even weight, lane 2m+1 its odd one. */
        const int16x8_t a = vreinterpretq_s16_s32(vld1q_s32(w + i * 4));
        ROW(c00, c01, c02, c03, 0);
        ROW(c10, c11, c12, c13, 1);
        ROW(c20, c21, c22, c23, 2);
        ROW(c30, c31, c32, c33, 3);
    }
    c[0] = c00, c[1] = c01, c[2] = c02, c[3] = c03;
    c[4] = c10, c[5] = c11, c[6] = c12, c[7] = c13;
    c[8] = c20, c[9] = c21, c[10] = c22, c[11] = c23;
    c[12] = c30, c[13] = c31, c[14] = c32, c[15] = c33;
}

#undef ROW

void eb_cpu_igemm_u8s8_4x16__neon(int64_t kp, const int32_t *w, const int16_t *b,
                                  const int32_t *corr, int32_t *y, int64_t ldy, int mr, int nr)
{
    int32x4_t c[16];
    acc_4x16(kp, w, b, c);
    for (int m = 0; m < mr; m++) {
        const int32x4_t cv = vdupq_n_s32(corr[m]);
        int32_t *ym = y + m * ldy;
        int32_t tmp[EB_IGEMM_NR];
        int32_t *dst = nr == EB_IGEMM_NR ? ym : tmp;
        for (int q = 0; q < 4; q++)
            vst1q_s32(dst + 4 * q, vsubq_s32(c[4 * m + q], cv));
        if (dst == tmp)
            memcpy(ym, tmp, (size_t)nr * sizeof(int32_t));
    }
}

/*
 * sat(rne(fma((float)v, mult, bias)) + zp) as int32 in [lo, hi], as the AVX2 kernel computes
 * it: maxnm/minnm take the bound for NaN (like max_ps/min_ps with the value first), and the
 * conversion rounds to nearest even (cvtps_epi32) in case zp is not an integer.
 */
static inline __attribute__((always_inline)) int32x4_t requant4(int32x4_t v, float32x4_t mult,
                                                                float32x4_t bias, float32x4_t zp,
                                                                float32x4_t lo, float32x4_t hi)
{
    const float32x4_t f = vfmaq_f32(bias, vcvtq_f32_s32(v), mult);
    float32x4_t q = vaddq_f32(vrndnq_f32(f), zp);
    q = vminnmq_f32(vmaxnmq_f32(q, lo), hi);
    return vcvtnq_s32_f32(q);
}

/* out[j] = lut[idx[j]]: four 64-byte TBL/TBX lookups cover the 256 entries. */
static inline __attribute__((always_inline)) uint8x16_t lut16(const uint8x16x4_t t[4],
                                                              uint8x16_t idx)
{
    const uint8x16_t k64 = vdupq_n_u8(64);
    uint8x16_t r = vqtbl4q_u8(t[0], idx);
    idx = vsubq_u8(idx, k64); /* indices below the table's 64 wrap past 191: left as they are */
    r = vqtbx4q_u8(r, t[1], idx);
    idx = vsubq_u8(idx, k64);
    r = vqtbx4q_u8(r, t[2], idx);
    idx = vsubq_u8(idx, k64);
    return vqtbx4q_u8(r, t[3], idx);
}

void eb_cpu_igemm_u8s8_4x16_q__neon(int64_t kp, const int32_t *w, const int16_t *b,
                                    const int32_t *corr, const float *mult, const float *bias,
                                    const struct eb_conv2d_u8_requant *rq, uint8_t *y, int64_t ldy,
                                    int mr, int nr)
{
    int32x4_t c[16];
    acc_4x16(kp, w, b, c);
    const float32x4_t zp = vdupq_n_f32(rq->y_zp);
    const float32x4_t lo = vdupq_n_f32(rq->y_signed ? -128.0f : 0.0f);
    const float32x4_t hi = vdupq_n_f32(rq->y_signed ? 127.0f : 255.0f);
    uint8x16x4_t t[4];
    if (rq->lut != NULL)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                t[i].val[j] = vld1q_u8(rq->lut + 64 * i + 16 * j);
    for (int m = 0; m < mr; m++) {
        const int32x4_t cv = vdupq_n_s32(corr[m]);
        const float32x4_t vm = vdupq_n_f32(mult[m]), vb = vdupq_n_f32(bias[m]);
        int32x4_t q[4];
        for (int i = 0; i < 4; i++)
            q[i] = requant4(vsubq_s32(c[4 * m + i], cv), vm, vb, zp, lo, hi);
        /* Narrowing keeps the low byte: the output byte (two's complement for int8). */
        const int16x8_t h0 = vcombine_s16(vmovn_s32(q[0]), vmovn_s32(q[1]));
        const int16x8_t h1 = vcombine_s16(vmovn_s32(q[2]), vmovn_s32(q[3]));
        uint8x16_t b8 = vreinterpretq_u8_s8(vcombine_s8(vmovn_s16(h0), vmovn_s16(h1)));
        if (rq->lut != NULL)
            b8 = lut16(t, b8);
        uint8_t *ym = y + m * ldy;
        if (nr == EB_IGEMM_NR) {
            vst1q_u8(ym, b8);
        } else {
            uint8_t tmp[EB_IGEMM_NR];
            vst1q_u8(tmp, b8);
            memcpy(ym, tmp, (size_t)nr);
        }
    }
}

/* dst[o] = src[2o] for o < m; src[0 .. 2m-1) is readable. */
void eb_cpu_gather2_u8__neon(int64_t m, const uint8_t *src, uint8_t *dst)
{
    int64_t o = 0;
    /* 16 outputs read src[2o .. 2o+31]; the last is one past what they need, so a vector
     * runs only while that byte is still one of the 2m-1 readable ones. */
    for (; o + 16 < m; o += 16)
        vst1q_u8(dst + o, vld2q_u8(src + 2 * o).val[0]);
    for (; o < m; o++)
        dst[o] = src[2 * o];
}

void eb_cpu_minmax_f32__neon(int64_t n, const float *x, float *mn, float *mx)
{
    /* Compare and select with the reference's strict comparisons (vminq/vmaxq would take NaN
     * and order -0 below +0): NaN is never taken and -0 never replaces +0. */
    float32x4_t vmn = vdupq_n_f32(*mn), vmx = vdupq_n_f32(*mx);
    float32x4_t vmn1 = vmn, vmx1 = vmx;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float32x4_t a = vld1q_f32(x + i), b = vld1q_f32(x + i + 4);
        vmn = vbslq_f32(vcltq_f32(a, vmn), a, vmn);
        vmx = vbslq_f32(vcgtq_f32(a, vmx), a, vmx);
        vmn1 = vbslq_f32(vcltq_f32(b, vmn1), b, vmn1);
        vmx1 = vbslq_f32(vcgtq_f32(b, vmx1), b, vmx1);
    }
    float lo[8], hi[8];
    vst1q_f32(lo, vmn);
    vst1q_f32(lo + 4, vmn1);
    vst1q_f32(hi, vmx);
    vst1q_f32(hi + 4, vmx1);
    eb_cpu__minmax_finish(4, lo, hi, x + i, n - i, mn, mx);
}

/* Four values: sat(rne(x / scale) + zp, 0, 255), NaN → zp, as uint32. */
static inline __attribute__((always_inline)) uint32x4_t quant4(const float *x, float32x4_t vs,
                                                               float32x4_t vz)
{
    const float32x4_t v = vaddq_f32(vrndnq_f32(vdivq_f32(vld1q_f32(x), vs)), vz);
    const float32x4_t q = vminq_f32(vmaxq_f32(v, vdupq_n_f32(0.0f)), vdupq_n_f32(255.0f));
    return vcvtq_u32_f32(vbslq_f32(vceqq_f32(v, v), q, vz));
}

void eb_cpu_quantize_u8__neon(int64_t n, const float *x, float scale, float zp, uint8_t *y)
{
    const float32x4_t vs = vdupq_n_f32(scale), vz = vdupq_n_f32(zp);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const uint16x8_t lo =
            vcombine_u16(vmovn_u32(quant4(x + i, vs, vz)), vmovn_u32(quant4(x + i + 4, vs, vz)));
        const uint16x8_t hi = vcombine_u16(vmovn_u32(quant4(x + i + 8, vs, vz)),
                                           vmovn_u32(quant4(x + i + 12, vs, vz)));
        vst1q_u8(y + i, vcombine_u8(vmovn_u16(lo), vmovn_u16(hi)));
    }
    for (; i < n; i++) {
        float v = nearbyintf(x[i] / scale) + zp;
        v = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
        y[i] = (uint8_t)(v == v ? v : zp);
    }
}
