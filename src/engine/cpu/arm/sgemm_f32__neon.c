/*
 * NEON SGEMM micro-kernel (8x8: 16 q accumulators, A column of 8 in two q registers, lane
 * FMAs) and the tile epilogue. aarch64 only; the activation and fake quantisation use the
 * portable scalar epilogue (exact reference semantics), bias is added with NEON.
 */
#include <arm_neon.h>

#include "engine/cpu/gemm.h"

/* The 8x8 tile over k rows of B: packed (direct 0: row p at b + 8p) or direct (1: row p at
 * b + boff[p]); each caller below passes a constant, so the choice is folded away. */
static inline __attribute__((always_inline)) void tile_8x8(int64_t k, const float *a,
                                                           const float *b, const int32_t *boff,
                                                           float *c, int64_t ldc, int accumulate,
                                                           int direct)
{
    float32x4_t acc[8][2];
    for (int i = 0; i < 8; i++)
        acc[i][0] = acc[i][1] = vdupq_n_f32(0.0f);
    for (int64_t p = 0; p < k; p++) {
        const float *bp = direct ? b + boff[p] : b + p * 8;
        const float32x4_t b0 = vld1q_f32(bp), b1 = vld1q_f32(bp + 4);
        const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
        acc[0][0] = vfmaq_laneq_f32(acc[0][0], b0, a0, 0);
        acc[0][1] = vfmaq_laneq_f32(acc[0][1], b1, a0, 0);
        acc[1][0] = vfmaq_laneq_f32(acc[1][0], b0, a0, 1);
        acc[1][1] = vfmaq_laneq_f32(acc[1][1], b1, a0, 1);
        acc[2][0] = vfmaq_laneq_f32(acc[2][0], b0, a0, 2);
        acc[2][1] = vfmaq_laneq_f32(acc[2][1], b1, a0, 2);
        acc[3][0] = vfmaq_laneq_f32(acc[3][0], b0, a0, 3);
        acc[3][1] = vfmaq_laneq_f32(acc[3][1], b1, a0, 3);
        acc[4][0] = vfmaq_laneq_f32(acc[4][0], b0, a1, 0);
        acc[4][1] = vfmaq_laneq_f32(acc[4][1], b1, a1, 0);
        acc[5][0] = vfmaq_laneq_f32(acc[5][0], b0, a1, 1);
        acc[5][1] = vfmaq_laneq_f32(acc[5][1], b1, a1, 1);
        acc[6][0] = vfmaq_laneq_f32(acc[6][0], b0, a1, 2);
        acc[6][1] = vfmaq_laneq_f32(acc[6][1], b1, a1, 2);
        acc[7][0] = vfmaq_laneq_f32(acc[7][0], b0, a1, 3);
        acc[7][1] = vfmaq_laneq_f32(acc[7][1], b1, a1, 3);
        a += 8;
    }
    for (int i = 0; i < 8; i++) {
        float *ci = c + i * ldc;
        if (accumulate) {
            acc[i][0] = vaddq_f32(acc[i][0], vld1q_f32(ci));
            acc[i][1] = vaddq_f32(acc[i][1], vld1q_f32(ci + 4));
        }
        vst1q_f32(ci, acc[i][0]);
        vst1q_f32(ci + 4, acc[i][1]);
    }
}

void eb_cpu_sgemm_f32_8x8__neon(int64_t k, const float *a, const float *b, float *c, int64_t ldc,
                                int accumulate)
{
    tile_8x8(k, a, b, NULL, c, ldc, accumulate, 0);
}

void eb_cpu_sgemm_f32_8x8_direct__neon(int64_t k, const float *a, const float *b,
                                       const int32_t *boff, float *c, int64_t ldc, int accumulate)
{
    tile_8x8(k, a, b, boff, c, ldc, accumulate, 1);
}

void eb_cpu_gather2_f32__neon(int64_t n, const float *src, float *dst)
{
    int64_t j = 0;
    /* vld2q splits 8 floats into evens and odds; the read ends at src[2j + 7] <= src[2n - 2]. */
    for (; j + 4 < n; j += 4)
        vst1q_f32(dst + j, vld2q_f32(src + 2 * j).val[0]);
    for (; j < n; j++)
        dst[j] = src[2 * j];
}

void eb_cpu_dw_rows_f32__neon(int64_t n, int taps, const float *w, float bias, const float *src,
                              const int32_t *off, float *y)
{
    /* 8 outputs per step in two accumulators; every tap is two loads and two lane FMAs. */
    for (int64_t q = 0; q < n; q += 8) {
        float32x4_t a0 = vdupq_n_f32(bias), a1 = a0;
        for (int t = 0; t < taps; t++) {
            const float *s = src + q + off[t];
            a0 = vfmaq_n_f32(a0, vld1q_f32(s), w[t]);
            a1 = vfmaq_n_f32(a1, vld1q_f32(s + 4), w[t]);
        }
        vst1q_f32(y + q, a0);
        vst1q_f32(y + q + 4, a1);
    }
}

void eb_cpu_epilogue_tile_f32__neon(const struct eb_epilogue *e, const float *bias, int64_t m,
                                    int64_t n, const float *s, int64_t lds, float *c, int64_t ldc,
                                    const float *r, int64_t ldr)
{
    for (int64_t i = 0; i < m; i++) {
        const float *si = s + i * lds;
        float *ci = c + i * ldc;
        const float32x4_t bv = vdupq_n_f32(bias != NULL ? bias[i] : 0.0f);
        int64_t j = 0;
        for (; j + 4 <= n; j += 4)
            vst1q_f32(ci + j, vaddq_f32(vld1q_f32(si + j), bv));
        for (; j < n; j++)
            ci[j] = si[j] + (bias != NULL ? bias[i] : 0.0f);
    }
    eb_cpu__epilogue_tile_f32(e, NULL, m, n, c, ldc, c, ldc, r, ldr);
}
