/*
 * The integer convolution (kernels.h, eb_cuk_qconv): dense convs as an implicit GEMM on the
 * tensor cores (mma.sync m16n8k32, uint8 activations x int8 weights → int32) but the image's
 * 3-channel 3 x 3 conv (a thread a pixel, dp4a on the CUDA cores: eb_cuk_qconv_small),
 * depthwise ones four channels a thread (eb_cuk_qconv_dw), every other one (groups, uint8
 * weights, weight zero points) by a direct kernel. All end in the same
 * epilogue arithmetic, ops/qconv.c's reference kernel's. These convs are small and
 * latency-bound: per warp, the set-up and the epilogue outweigh the products, and most of the
 * epilogue's stalls were instruction fetches (its code runs once per block, cold on each SM), so
 * the epilogue works on runs of channels and the paths a model rarely takes are out of line.
 *
 * The GEMM: rows are output pixels (n, oh, ow), columns output channels, k runs over the taps
 * and, inside a tap, the input channels padded to cp (the packed filter's layout). A tap outside
 * the image reads x_zp (and a padded channel any byte: its weight is zero), so the product sums
 * Σ x w over every tap and acc = that - x_zp Σ w equals the reference's sum over the taps inside
 * the image exactly.
 */
#include <math.h>
#include <string.h>

#include "engine/cuda/k_common.cuh"

namespace
{

using eb_cuk::act;

/* Block tile: 64 pixels x BN_ channels (16, 32 or 64: eb_cuk_qconv_plan picks the one that
 * wastes least of oc), eight warps: these convs are small and latency-bound, so more warps in
 * flight count for more than fewer, wider ones. The plan counts k in steps of BK = 64 bytes. */
constexpr int BM = 64, BK = 64, kConvThreads = 256;
/* each A row is loaded by four threads, and its output row's place noted by the first */
static_assert(kConvThreads / 4 == BM, "four threads an A row");

#ifndef EB_QCONV_KB_NARROW
#define EB_QCONV_KB_NARROW 128
#endif
template <int BN_> struct tiling {
    /* k bytes a step: 128 for the narrow tiles (a step's barrier and address arithmetic cost
     * the same whatever the step's products, and a narrow tile has few of them), 64 for the
     * widest (its stages would not fit 48 KB); a k step is 2 or 4 mma k-steps */
    static constexpr int KB = BN_ <= 32 ? EB_QCONV_KB_NARROW : 64;
    /* A shared-memory row holds a row's KB bytes of k, padded by 16: the fragment reads of 8
     * rows by 4 threads then fall in 32 different banks */
    static constexpr int ROW = KB + 16, CH = KB / 16;
    /* k steps in flight: the loads of the next STAGES - 1 steps fly during a step's products
     * (3 or 4 measured the same for the narrow tiles; 4 of 128 bytes leave no room for the tap
     * table) */
    static constexpr int STAGES = KB == 128 ? 3 : 4;
    /* warps: 4 x 2 of 16 x BN_ / 2 */
    static constexpr int WN = 2, WM = 4;
    static constexpr int TM = BM / WM, TN = BN_ / WN, MI = TM / 16, NI = TN / 8;
    /* the output tile's row in shared memory (int32), padded by 8 values */
    static constexpr int TS = BN_ + 8;
    static constexpr int SMEM = STAGES * (BM + BN_) * ROW;
    static_assert(BM * TS * 4 <= SMEM, "the output tile fits the stages' buffers");
};

/* n / d (0 <= n < 2^31) from f = eb_cuk_fdiv_of(d): a multiply instead of a division, which
 * costs some twenty instructions on the set-up path every block runs */
__device__ __forceinline__ int fdiv(const struct eb_cuk_fdiv &f, int n)
{
    return (int)((__umulhi((unsigned)n, f.mul) + (unsigned)n) >> f.shr);
}

/* Output pixel m's image im and place pm in it (plane = oh ow), and its window's top-left input
 * pixel (ih0, iw0) */
struct out_pix {
    int im, pm, ih0, iw0;
};
__device__ __forceinline__ out_pix out_pixel(const struct eb_cuk_qconv &p, int m, int plane)
{
    const int im = fdiv(p.f_plane, m), pm = m - im * plane, oy = fdiv(p.f_ow, pm),
              ox = pm - oy * p.ow;
    return {im, pm, oy * p.sh - p.pt, ox * p.sw - p.pl};
}

__device__ __forceinline__ float sat_q(float v, int y_signed)
{
    const float lo = y_signed ? -128.0f : 0.0f, hi = y_signed ? 127.0f : 255.0f;
    return v < lo ? lo : (v > hi ? hi : v);
}

/* The activations other than SiLU, none and ReLU, out of line: the epilogue's code is fetched
 * cold on each SM (these kernels' stalls were mostly instruction fetches), so what a model
 * rarely runs stays out of its path. */
static __device__ __noinline__ float act_cold(int a, float alpha, float v)
{
    return act(a, alpha, 0.0f, v);
}

/* The float value (act(acc mult + bias)) of an output whose y is not requantised. SiLU with the
 * hardware's exp and reciprocal (a few ulp of float: far below the half or the byte it is
 * written as; the epilogue's arithmetic is what these small convs spend their time on). */
__device__ __forceinline__ float out_float(const struct eb_cuk_qconv &p, int32_t acc, float mult,
                                           float bias)
{
    const float v = __fadd_rn(__fmul_rn((float)acc, mult), bias);
    return p.act == eb_cuk::ACT_SILU   ? __fdividef(v, 1.0f + __expf(-v))
           : p.act == eb_cuk::ACT_NONE ? v
           : p.act == eb_cuk::ACT_RELU ? (v > 0.0f ? v : 0.0f)
                                       : act_cold(p.act, p.alpha, v);
}

/* The byte of an output written as bytes: requantised (quant, exactly the reference's) or the
 * fused QuantizeLinear's (times fq_inv = 1 / fq_scale: a byte may move by one step where the
 * quotient sits within an ulp of a rounding tie). */
__device__ __forceinline__ uint8_t out_byte(const struct eb_cuk_qconv &p, int32_t acc, float mult,
                                            float bias, float fq_inv)
{
    if (p.quant) {
        const int32_t q =
            (int32_t)sat_q(rintf(fmaf((float)acc, mult, bias)) + (float)p.y_zp, p.y_signed);
        return p.lut != nullptr ? p.lut[(uint8_t)q] : (uint8_t)q;
    }
    const float v = out_float(p, acc, mult, bias);
    return (uint8_t)(int32_t)sat_q(rintf(v * fq_inv) + (float)p.fq_zp, p.y_signed);
}

/* The fused QuantizeLinear's inverse scale (0 without one) */
__device__ __forceinline__ float fq_inv_of(const struct eb_cuk_qconv &p)
{
    return p.fq_on ? 1.0f / p.fq_scale : 0.0f;
}

/* Output element `off` from the exact accumulator and its channel's multiplier and bias. */
__device__ __forceinline__ void put(const struct eb_cuk_qconv &p, void *y, int64_t off, int32_t acc,
                                    float mult, float bias, float fq_inv)
{
    if (p.quant || p.fq_on)
        ((uint8_t *)y)[off] = out_byte(p, acc, mult, bias, fq_inv);
    else if (p.y_kind == EB_CUK_QY_F16)
        ((__half *)y)[off] = __float2half_rn(out_float(p, acc, mult, bias));
    else
        ((float *)y)[off] = out_float(p, acc, mult, bias);
}

/* Four floats as halves (es 2) or floats (es 4) at y + off, one store (aligned). */
__device__ __forceinline__ void store4(int es, void *y, int64_t off, const float (&v)[4])
{
    if (es == 2) {
        const __half2 lo = __floats2half2_rn(v[0], v[1]), hi = __floats2half2_rn(v[2], v[3]);
        uint2 u;
        u.x = *(const uint32_t *)&lo;
        u.y = *(const uint32_t *)&hi;
        *(uint2 *)((__half *)y + off) = u;
    } else {
        *(float4 *)((float *)y + off) = make_float4(v[0], v[1], v[2], v[3]);
    }
}

/* The four outputs at y + off (channels-last, aligned to four of them) from their exact sums a,
 * multipliers m and biases b: as bytes (bytes 1) in one word, else in one store4. */
__device__ __forceinline__ void put4_aligned(const struct eb_cuk_qconv &p, void *y, int64_t off,
                                             int bytes, const int32_t (&a)[4], const float *m,
                                             const float *b, float fq_inv)
{
    if (bytes == 1) {
        uint32_t v = 0;
#pragma unroll
        for (int j = 0; j < 4; j++)
            v |= (uint32_t)out_byte(p, a[j], m[j], b[j], fq_inv) << (8 * j);
        *(uint32_t *)((uint8_t *)y + off) = v;
        return;
    }
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; j++)
        v[j] = out_float(p, a[j], m[j], b[j]);
    store4(bytes, y, off, v);
}

/* The fused outputs (n_dst > 0; kernels.h, struct eb_cuk_qdst). */
__device__ __forceinline__ float to_kind(int kind, float v)
{
    return kind == EB_CUK_QY_F16 ? __half2float(__float2half_rn(v)) : v;
}

__device__ __forceinline__ void store_kind(int kind, void *y, int64_t off, float v)
{
    if (kind == EB_CUK_QY_F16)
        ((__half *)y)[off] = __float2half_rn(v);
    else
        ((float *)y)[off] = v;
}

/* v of output (image im, pixel pm, channel k): act's value, plus the residual, as stored */
__device__ __forceinline__ float ext_value(const struct eb_cuk_qconv &p, int im, int pm, int k,
                                           int32_t acc, float mult, float bias)
{
    float v = to_kind(p.y_kind, out_float(p, acc, mult, bias));
    if (p.res != nullptr) {
        const int64_t off = (int64_t)im * p.r_n + (int64_t)k * p.r_c + (int64_t)pm * p.r_p;
        const float r = p.y_kind == EB_CUK_QY_F16 ? __half2float(((const __half *)p.res)[off])
                                                  : ((const float *)p.res)[off];
        v = to_kind(p.y_kind, v + r);
    }
    return v;
}

/* QuantizeLinear's byte of v (k_quant.cu's arithmetic, times the inverse scale) */
__device__ __forceinline__ int32_t quant(float v, float inv, int32_t zp, int is_signed)
{
    const float lo = is_signed ? -128.0f : 0.0f, hi = is_signed ? 127.0f : 255.0f;
    return (int32_t)fminf(fmaxf(rintf(v * inv) + (float)zp, lo), hi);
}
__device__ __forceinline__ int32_t ext_q(const struct eb_cuk_qdst &d, float v)
{
    return quant(v, d.q_inv, d.q_zp, d.q_signed);
}
/* DQ's float of v's byte, as the tensor stores it */
__device__ __forceinline__ float ext_dq(int yk, const struct eb_cuk_qdst &d, float v)
{
    return to_kind(yk, (float)(ext_q(d, v) - d.dq_zp) * d.dq_scale);
}
/* the byte a BYTE or REQ dst holds for v */
__device__ __forceinline__ uint8_t ext_byte(int yk, const struct eb_cuk_qdst &d, float v)
{
    if (d.mode == EB_CUK_QD_REQ)
        return (uint8_t)quant(ext_dq(yk, d, v), d.o_inv, d.o_zp, d.o_signed);
    return (uint8_t)ext_q(d, v);
}

/* What dst d holds for v */
__device__ __forceinline__ void ext_store(int yk, const struct eb_cuk_qdst &d, int64_t off, float v)
{
    if (d.mode == EB_CUK_QD_FLOAT)
        store_kind(yk, d.y, off, v);
    else if (d.mode == EB_CUK_QD_DQ)
        store_kind(yk, d.y, off, ext_dq(yk, d, v));
    else
        ((uint8_t *)d.y)[off] = ext_byte(yk, d, v);
}

/* Channels k .. k + n - 1 (n <= 4) of pixel (im, pm), values v0..v3 (y_kind yk), into dst d
 * where it holds them: one store where it holds all four channels-last and aligned. Out of line:
 * the runs that take it (a part's edge inside a run, unaligned rows) are rare. */
static __device__ __noinline__ void dst_put4(int yk, const struct eb_cuk_qdst d, int im, int pm,
                                             int k, int n, float v0, float v1, float v2, float v3)
{
    const float v[4] = {v0, v1, v2, v3};
    if (k + n <= d.c0 || k >= d.c1)
        return;
    const int64_t off = (int64_t)im * d.y_n + (int64_t)(k - d.c0) * d.y_c + (int64_t)pm * d.y_p;
    const int es = d.mode == EB_CUK_QD_BYTE || d.mode == EB_CUK_QD_REQ ? 1
                   : yk == EB_CUK_QY_F16                               ? 2
                                                                       : 4;
    if (n == 4 && k >= d.c0 && k + 4 <= d.c1 && d.y_c == 1 &&
        (((uintptr_t)d.y + (uintptr_t)(off * es)) & (uintptr_t)(4 * es - 1)) == 0) {
        if (es == 1) {
            uint32_t w = 0;
#pragma unroll
            for (int j = 0; j < 4; j++)
                w |= (uint32_t)ext_byte(yk, d, v[j]) << (8 * j);
            *(uint32_t *)((uint8_t *)d.y + off) = w;
            return;
        }
        float o[4];
#pragma unroll
        for (int j = 0; j < 4; j++)
            o[j] = d.mode == EB_CUK_QD_FLOAT ? v[j] : ext_dq(yk, d, v[j]);
        store4(es, d.y, off, o);
        return;
    }
#pragma unroll
    for (int j = 0; j < 4; j++)
        if (j < n && k + j >= d.c0 && k + j < d.c1)
            ext_store(yk, d, off + (int64_t)j * d.y_c, v[j]);
}

/* Channels k .. k + n - 1 (n <= R, R a multiple of 4) of pixel (im, pm), values v, into every
 * dst holding them. A dst that holds the whole run channels-last and aligned takes its offset and
 * checks once and a store per four channels; any other, four channels at a time as dst_put4. */
template <int R>
__device__ __forceinline__ void ext_put(const struct eb_cuk_qconv &p, int im, int pm, int k, int n,
                                        const float (&v)[R])
{
    /* a loop, not unrolled: six copies of the arithmetic in each kernel variant doubled the
     * build's slowest file (the dst's fields then come by indexed constant loads) */
#pragma unroll 1
    for (int i = 0; i < p.n_dst; i++) {
        const struct eb_cuk_qdst &d = p.dst[i];
        if (k + n <= d.c0 || k >= d.c1)
            continue;
        const int es = d.mode == EB_CUK_QD_BYTE || d.mode == EB_CUK_QD_REQ ? 1
                       : p.y_kind == EB_CUK_QY_F16                         ? 2
                                                                           : 4;
        const int64_t off = (int64_t)im * d.y_n + (int64_t)(k - d.c0) * d.y_c + (int64_t)pm * d.y_p;
        if (n == R && k >= d.c0 && k + R <= d.c1 && d.y_c == 1 &&
            (((uintptr_t)d.y + (uintptr_t)(off * es)) & (uintptr_t)(4 * es - 1)) == 0) {
#pragma unroll
            for (int g = 0; g < R; g += 4) {
                if (es == 1) {
                    uint32_t w = 0;
#pragma unroll
                    for (int j = 0; j < 4; j++)
                        w |= (uint32_t)ext_byte(p.y_kind, d, v[g + j]) << (8 * j);
                    *(uint32_t *)((uint8_t *)d.y + off + g) = w;
                } else {
                    float o[4];
#pragma unroll
                    for (int j = 0; j < 4; j++)
                        o[j] = d.mode == EB_CUK_QD_FLOAT ? v[g + j] : ext_dq(p.y_kind, d, v[g + j]);
                    store4(es, d.y, off + g, o);
                }
            }
            continue;
        }
#pragma unroll
        for (int g = 0; g < R; g += 4)
            if (g < n)
                dst_put4(p.y_kind, d, im, pm, k + g, n - g < 4 ? n - g : 4, v[g], v[g + 1],
                         v[g + 2], v[g + 3]);
    }
}

/* The residual's values of channels k .. k + n - 1 (n <= R) of pixel (im, pm) as y_kind stores
 * them: four at a time where the run is channels-last and aligned. */
template <int R>
__device__ __forceinline__ void res_run(const struct eb_cuk_qconv &p, int im, int pm, int k, int n,
                                        float (&r)[R])
{
    const int64_t off = (int64_t)im * p.r_n + (int64_t)k * p.r_c + (int64_t)pm * p.r_p;
    const bool half = p.y_kind == EB_CUK_QY_F16;
    const int es = half ? 2 : 4;
    if (n == R && p.r_c == 1 &&
        (((uintptr_t)p.res + (uintptr_t)(off * es)) & (uintptr_t)(4 * es - 1)) == 0) {
#pragma unroll
        for (int g = 0; g < R; g += 4) {
            if (half) {
                const uint2 u = *(const uint2 *)((const __half *)p.res + off + g);
                const float2 a = __half22float2(*(const __half2 *)&u.x),
                             b = __half22float2(*(const __half2 *)&u.y);
                r[g] = a.x, r[g + 1] = a.y, r[g + 2] = b.x, r[g + 3] = b.y;
            } else {
                const float4 f = *(const float4 *)((const float *)p.res + off + g);
                r[g] = f.x, r[g + 1] = f.y, r[g + 2] = f.z, r[g + 3] = f.w;
            }
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < R; j++)
        r[j] = j >= n ? 0.0f
               : half ? __half2float(((const __half *)p.res)[off + (int64_t)j * p.r_c])
                      : ((const float *)p.res)[off + (int64_t)j * p.r_c];
}

/* A thread's run of the block's output tile in the epilogue: R channels (4, 8 or 16) of one row,
 * four threads a row */
template <int BN_> struct epi {
    static constexpr int R = BM * BN_ / kConvThreads, TPR = BN_ / R;
    static_assert(R % 4 == 0 && TPR * R == BN_, "a row in runs of four channels");
};

/* The fused epilogue of a block's output tile (int32 sums tile_s, TS a row; BN_ channels from
 * n0; rows' image and pixel s_im, s_pm, -1 past the last pixel): a run of R channels a thread,
 * its sums, multipliers and biases read four at a time. */
template <int BN_, int TS>
__device__ __forceinline__ void
fused_tile(const struct eb_cuk_qconv &p, const int32_t *tile_s, int n0, const int32_t *s_im,
           const int32_t *s_pm, const int32_t *s_corr, const float *s_mult, const float *s_bias)
{
    constexpr int R = epi<BN_>::R, TPR = epi<BN_>::TPR;
    const int r = threadIdx.x / TPR, c = (threadIdx.x - r * TPR) * R, im = s_im[r];
    if (im < 0 || n0 + c >= p.oc)
        return;
    const int n = p.oc - (n0 + c) < R ? p.oc - (n0 + c) : R, pm = s_pm[r];
    float v[R];
#pragma unroll
    for (int g = 0; g < R; g += 4) {
        const int4 a = *(const int4 *)&tile_s[r * TS + c + g];
        const int4 z = *(const int4 *)&s_corr[c + g];
        const float4 m = *(const float4 *)&s_mult[c + g], b = *(const float4 *)&s_bias[c + g];
        v[g] = to_kind(p.y_kind, out_float(p, a.x - z.x, m.x, b.x));
        v[g + 1] = to_kind(p.y_kind, out_float(p, a.y - z.y, m.y, b.y));
        v[g + 2] = to_kind(p.y_kind, out_float(p, a.z - z.z, m.z, b.z));
        v[g + 3] = to_kind(p.y_kind, out_float(p, a.w - z.w, m.w, b.w));
    }
    if (p.res != nullptr) {
        float rv[R];
        res_run(p, im, pm, n0 + c, n, rv);
#pragma unroll
        for (int j = 0; j < R; j++)
            v[j] = to_kind(p.y_kind, v[j] + rv[j]);
    }
    ext_put(p, im, pm, n0 + c, n, v);
}

/* The fused outputs of one channel k of pixel (im, pm) from its exact sum. */
__device__ __forceinline__ void fused_one(const struct eb_cuk_qconv &p, int im, int pm, int k,
                                          int32_t acc)
{
    const float v[4] = {ext_value(p, im, pm, k, acc, p.mult[k], p.bias[k])};
    ext_put(p, im, pm, k, 1, v);
}

__device__ __forceinline__ void mma_u8s8(int32_t (&c)[4], const uint32_t (&a)[4],
                                         const uint32_t (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* 16 bytes global → shared without registers (both 16-byte aligned), and its group fences */
__device__ __forceinline__ void cp16(void *dst, const void *src)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src));
}
__device__ __forceinline__ void cp_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}
template <int N> __device__ __forceinline__ void cp_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* The output pixel a thread loads A rows for: its image, its window's top-left input pixel
 * (ih0, iw0) and that pixel's byte offset in the image (base; may be negative, in the padding) */
struct pix {
    const uint8_t *img;
    int ih0, iw0, ok, base;
};

/* A 16-byte k chunk's place in the window (VEC convs): the tap's row and column offsets (dr, ds;
 * dr kPastTaps for a chunk past the taps) and its bytes' offset from the window's top-left
 * pixel. One table a block, filled once: a chunk's tap then costs a shared load instead of two
 * integer divisions each k step (what the small convs' steps spent their time on). */
struct tap_e {
    int32_t off;
    int16_t dr, ds;
};
constexpr int kTapTab = 512;
constexpr int16_t kPastTaps = -32768;

/* Where the 16 bytes of k chunk kc (bytes 16 kc .. 16 kc + 15 of the row: tap k / cp, channel
 * k % cp) of pixel q's im2col row are, when ic and x_pix are multiples of 16 and x is aligned (a
 * chunk is then inside one tap); NULL where they are all x_zp (the tap outside the image or past
 * the taps). */
__device__ __forceinline__ const uint8_t *chunk_at(const struct eb_cuk_qconv &p, const pix &q,
                                                   int kc)
{
    const int cpc = p.cp >> 4, tap = kc / cpc;
    if (!q.ok || tap >= p.kh * p.kw)
        return nullptr;
    const int c0 = (kc - tap * cpc) << 4, rr = tap / p.kw, ss = tap - rr * p.kw;
    const int h = q.ih0 + rr * p.dh, w = q.iw0 + ss * p.dw;
    if (h < 0 || h >= p.ih || w < 0 || w >= p.iw)
        return nullptr;
    return q.img + ((int64_t)h * p.iw + w) * p.x_pix + c0;
}

/* chunk_at's answer from the tap table (usable: tab_ok) */
__device__ __forceinline__ const uint8_t *chunk_tab(const struct eb_cuk_qconv &p, const pix &q,
                                                    const tap_e &e)
{
    const int h = q.ih0 + e.dr, w = q.iw0 + e.ds;
    if (!q.ok || (unsigned)h >= (unsigned)p.ih || (unsigned)w >= (unsigned)p.iw)
        return nullptr;
    return q.img + (q.base + e.off);
}

/* Whether the tap table describes the conv: its chunks fit, and every offset fits its field
 * (a past-taps dr puts h below zero) */
__device__ __forceinline__ bool tab_ok(const struct eb_cuk_qconv &p, int chunks)
{
    return chunks <= kTapTab && p.ih < 8192 && p.iw < 8192 && p.pt < 8192 &&
           (p.kh - 1) * p.dh < 8192 && (p.kw - 1) * p.dw < 8192;
}

/* The same 16 bytes gathered one by one (any layout and alignment): x_zp where the tap falls
 * outside the image or past the taps, any byte for a channel past ic (its weight is zero). */
__device__ __forceinline__ uint4 gather_a(const struct eb_cuk_qconv &p, const pix &q, int kc)
{
    const uint32_t z = (uint32_t)p.x_zp * 0x01010101u;
    const int taps = p.kh * p.kw;
    /* a chunk past the taps (the padding of kp) multiplies zero weights: any bytes do */
    if (!q.ok || kc * 16 >= taps * p.cp)
        return make_uint4(z, z, z, z);
    /* the tap and channel stepped along (no division per byte) */
    uint32_t word[4] = {z, z, z, z};
    int tap = kc * 16 / p.cp, c = kc * 16 - tap * p.cp;
    int rr = tap / p.kw, ss = tap - rr * p.kw;
#pragma unroll
    for (int j = 0; j < 16; j++) {
        const int h = q.ih0 + rr * p.dh, w = q.iw0 + ss * p.dw;
        if (tap < taps && c < p.ic && h >= 0 && h < p.ih && w >= 0 && w < p.iw) {
            const int sh = (j & 3) * 8;
            const uint32_t b = q.img[((int64_t)h * p.iw + w) * p.x_pix + (int64_t)c * p.x_c];
            word[j >> 2] = (word[j >> 2] & ~(0xFFu << sh)) | (b << sh);
        }
        if (++c == p.cp) {
            c = 0;
            tap++;
            if (++ss == p.kw)
                ss = 0, rr++;
        }
    }
    return make_uint4(word[0], word[1], word[2], word[3]);
}

/*
 * The implicit GEMM. Block (x, y, z): pixels 64 x .. +63, channels BN_ y .. +BN_-1, k steps z of
 * gridDim.z (split-k). k steps go through a ring of STAGES shared-memory buffers filled by
 * cp.async (VEC: 16-byte chunks straight from x; else gathered byte by byte through registers);
 * a chunk of padding is stored as x_zp directly. With split-k, each block adds its partial tile
 * into `ws` (int32, one tile per (x, y), zero between runs) and counts itself in `cnt`; the last
 * block of a tile reads the sum, zeroes both for the next run and runs the epilogue.
 */
template <int BN_, int VEC>
__global__ void __launch_bounds__(kConvThreads)
    k_qconv_mma(const struct eb_cuk_qconv p, const uint8_t *__restrict__ x, void *__restrict__ y)
{
    using T = tiling<BN_>;
    constexpr int ROW = T::ROW, KB = T::KB, CH = T::CH;
    /* the stages' A and B tiles; after the loop, the output tile (int32, T::TS a row) */
    __shared__ __align__(16) uint8_t smem[T::SMEM];
    __shared__ int last;
    /* the epilogue's per-channel multiplier, bias and x_zp Σw, and per-row output offsets (-1:
     * past the last pixel), filled while the first loads fly */
    __shared__ __align__(16) float s_mult[BN_], s_bias[BN_];
    __shared__ __align__(16) int32_t s_corr[BN_];
    __shared__ int64_t s_row[BM];
    __shared__ int32_t s_im[BM], s_pm[BM]; /* the fused outputs' rows: image and pixel */
    __shared__ tap_e tab[VEC ? kTapTab : 1];
    auto sa = [&](int b) { return smem + b * (BM + BN_) * ROW; };
    auto sb = [&](int b) { return smem + b * (BM + BN_) * ROW + BM * ROW; };
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int plane = p.oh * p.ow, M = p.n * plane;
    const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN_;
    /* A rows: row tid / 4, chunks tid % 4 (+ 4 j) of its CH */
    const int lr = tid >> 2, lc = tid & 3;
    pix q;
    const int am = m0 + lr;
    q.ok = am < M;
    const int img = q.ok ? fdiv(p.f_plane, am) : 0, pp = q.ok ? am - img * plane : 0;
    const int oy = fdiv(p.f_ow, pp), ox = pp - oy * p.ow;
    q.ih0 = oy * p.sh - p.pt;
    q.iw0 = ox * p.sw - p.pl;
    q.img = x + (int64_t)img * p.x_n;
    q.base = (q.ih0 * p.iw + q.iw0) * p.x_pix;
    const uint32_t z = (uint32_t)p.x_zp * 0x01010101u;
    const int8_t *w = (const int8_t *)p.w;
    const int nk = (p.kp + KB - 1) / KB, splits = gridDim.z;
    const int k0 = splits == 1 ? 0 : nk * (int)blockIdx.z / splits;
    const int k1 = splits == 1 ? nk : nk * ((int)blockIdx.z + 1) / splits;
    const bool use_tab = VEC && tab_ok(p, nk * CH);
    if (use_tab) {
        const int cpc = p.cp >> 4, taps = p.kh * p.kw;
        for (int kc = tid; kc < nk * CH; kc += kConvThreads) {
            const int tap = fdiv(p.f_cpc, kc), rr = fdiv(p.f_kw, tap), ss = tap - rr * p.kw;
            tap_e e;
            const bool in = tap < taps;
            e.dr = in ? (int16_t)(rr * p.dh) : kPastTaps;
            e.ds = in ? (int16_t)(ss * p.dw) : 0;
            e.off = in ? (rr * p.dh * p.iw + ss * p.dw) * p.x_pix + ((kc - tap * cpc) << 4) : 0;
            tab[kc] = e;
        }
        __syncthreads();
    }
    /* k step kt's filter rows into buffer b (constants: the first steps' go before pdl_wait) */
    auto fill_b = [&](int b, int kt) {
#pragma unroll
        for (int c = tid; c < BN_ * CH; c += kConvThreads) {
            const int r = c / CH, ch = c % CH;
            uint8_t *dst = &sb(b)[r * ROW + ch * 16];
            /* past kp (a last step of 128 over kp's 64): zero weights */
            if (n0 + r < p.oc && kt * KB + ch * 16 < p.kp)
                cp16(dst, w + (int64_t)(n0 + r) * p.kp + kt * KB + ch * 16);
            else
                *(uint4 *)dst = make_uint4(0, 0, 0, 0);
        }
    };
    constexpr int STAGES = T::STAGES;
    /* the first steps' filter rows and the epilogue's per-channel constants are the load's:
     * fetched while the kernel before this one ends (their cp.async join the first step's
     * group, so each step's wait still covers its own rows) */
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++)
        if (k0 + s < k1)
            fill_b(s, k0 + s);
    if (tid < BN_) {
        const int k = n0 + tid < p.oc ? n0 + tid : 0;
        s_mult[tid] = p.mult[k];
        s_bias[tid] = p.bias[k];
        s_corr[tid] = p.x_zp * p.wsum[k];
    }
    if (lc == 0) { /* row lr's output: the pixel this thread loads A rows for */
        s_row[lr] = q.ok ? (int64_t)img * p.y_n + (int64_t)pp * p.y_p : -1;
        s_im[lr] = q.ok ? img : -1;
        s_pm[lr] = pp;
    }
    /* nothing above touched global memory but the constant parameters and the load's filters;
     * the next kernel may start its own set-up once this one runs (not before: one kernel ahead
     * at most) */
    eb_cuk::pdl_wait();
    eb_cuk::pdl_launch_dependents();
    /* k step kt's pixels into buffer b */
    auto fill_a = [&](int b, int kt) {
#pragma unroll
        for (int j = 0; j < CH / 4; j++) {
            uint8_t *dst = &sa(b)[lr * ROW + (lc + 4 * j) * 16];
            const int kc = kt * CH + lc + 4 * j;
            if (VEC) {
                const uint8_t *src = use_tab ? chunk_tab(p, q, tab[kc]) : chunk_at(p, q, kc);
                if (src != nullptr)
                    cp16(dst, src);
                else
                    *(uint4 *)dst = make_uint4(z, z, z, z);
            } else {
                *(uint4 *)dst = gather_a(p, q, kc);
            }
        }
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (k0 + s < k1)
            fill_a(s, k0 + s);
        cp_commit();
    }
    int32_t acc[T::MI][T::NI][4] = {};
    const int wm = (warp / T::WN) * T::TM, wn = (warp % T::WN) * T::TN, gq = lane >> 2,
              tq = lane & 3;
    for (int kt = k0; kt < k1; kt++) {
        const int i = kt - k0, cur = i % STAGES;
        cp_wait<STAGES - 2>();
        __syncthreads();
        /* the buffer read a step ago: everyone is past it */
        if (kt + STAGES - 1 < k1) {
            fill_a((i + STAGES - 1) % STAGES, kt + STAGES - 1);
            fill_b((i + STAGES - 1) % STAGES, kt + STAGES - 1);
        }
        cp_commit();
#pragma unroll
        for (int ks = 0; ks < KB; ks += 32) {
            uint32_t af[T::MI][4], bf[T::NI][2];
#pragma unroll
            for (int mi = 0; mi < T::MI; mi++) {
                const uint8_t *r0 = &sa(cur)[(wm + mi * 16 + gq) * ROW + ks + tq * 4];
                af[mi][0] = *(const uint32_t *)r0;
                af[mi][1] = *(const uint32_t *)(r0 + 8 * ROW);
                af[mi][2] = *(const uint32_t *)(r0 + 16);
                af[mi][3] = *(const uint32_t *)(r0 + 8 * ROW + 16);
            }
#pragma unroll
            for (int ni = 0; ni < T::NI; ni++) {
                const uint8_t *r0 = &sb(cur)[(wn + ni * 8 + gq) * ROW + ks + tq * 4];
                bf[ni][0] = *(const uint32_t *)r0;
                bf[ni][1] = *(const uint32_t *)(r0 + 16);
            }
#pragma unroll
            for (int mi = 0; mi < T::MI; mi++)
#pragma unroll
                for (int ni = 0; ni < T::NI; ni++)
                    mma_u8s8(acc[mi][ni], af[mi], bf[ni]);
        }
    }
    cp_wait<0>();
    __syncthreads();
    /* The tile through shared memory, then one compact loop over it, channel fastest: the
     * epilogue's code is not unrolled per fragment (instruction fetch stalled that form) and
     * consecutive threads write consecutive channels of a channels-last row. */
    int32_t *tile_s = (int32_t *)smem;
#pragma unroll
    for (int mi = 0; mi < T::MI; mi++)
#pragma unroll
        for (int ni = 0; ni < T::NI; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                tile_s[(wm + mi * 16 + gq + (e >> 1) * 8) * T::TS + wn + ni * 8 + tq * 2 +
                       (e & 1)] = acc[mi][ni][e];
    __syncthreads();
    if (splits > 1) {
        const int tile = blockIdx.y * gridDim.x + blockIdx.x;
        int32_t *ws = p.ws + (int64_t)tile * BM * BN_;
#pragma unroll 8
        for (int i = tid; i < BM * BN_; i += kConvThreads)
            atomicAdd(&ws[i], tile_s[i / BN_ * T::TS + i % BN_]);
        __threadfence();
        __syncthreads();
        if (tid == 0)
            last = atomicAdd(&p.cnt[tile], 1) == splits - 1;
        __syncthreads();
        if (!last)
            return;
        __threadfence();
#pragma unroll 8
        for (int i = tid; i < BM * BN_; i += kConvThreads) {
            tile_s[i / BN_ * T::TS + i % BN_] = __ldcg(&ws[i]);
            ws[i] = 0;
        }
        if (tid == 0)
            p.cnt[tile] = 0;
        __syncthreads();
    }
    if (p.n_dst > 0) {
        fused_tile<BN_, T::TS>(p, tile_s, n0, s_im, s_pm, s_corr, s_mult, s_bias);
        return;
    }
    const float fq_inv = fq_inv_of(p);
    if (p.y_c == 1) {
        /* channels-last: a run of R channels a thread (epi), a store per four channels where
         * they are all there and aligned */
        constexpr int R = epi<BN_>::R, TPR = epi<BN_>::TPR;
        const int bytes = p.quant || p.fq_on ? 1 : p.y_kind == EB_CUK_QY_F16 ? 2 : 4;
        const int r = tid / TPR, c = (tid - r * TPR) * R;
        const int64_t row = s_row[r];
        if (row < 0 || n0 + c >= p.oc)
            return;
        const int64_t off = row + n0 + c;
        const bool whole = n0 + c + R <= p.oc && (((uintptr_t)y + (uintptr_t)(off * bytes)) &
                                                  (uintptr_t)(4 * bytes - 1)) == 0;
        if (!whole) {
            for (int j = 0; j < R && n0 + c + j < p.oc; j++)
                put(p, y, off + j, tile_s[r * T::TS + c + j] - s_corr[c + j], s_mult[c + j],
                    s_bias[c + j], fq_inv);
            return;
        }
#pragma unroll
        for (int g = 0; g < R; g += 4) {
            const int4 a4 = *(const int4 *)&tile_s[r * T::TS + c + g];
            const int4 z4 = *(const int4 *)&s_corr[c + g];
            const float4 m4 = *(const float4 *)&s_mult[c + g];
            const float4 b4 = *(const float4 *)&s_bias[c + g];
            const int32_t a[4] = {a4.x - z4.x, a4.y - z4.y, a4.z - z4.z, a4.w - z4.w};
            const float m[4] = {m4.x, m4.y, m4.z, m4.w}, bb[4] = {b4.x, b4.y, b4.z, b4.w};
            put4_aligned(p, y, off + g, bytes, a, m, bb, fq_inv);
        }
        return;
    }
#pragma unroll 2
    for (int i = tid; i < BM * BN_; i += kConvThreads) {
        const int r = i / BN_, c = i % BN_;
        const int64_t row = s_row[r];
        if (row >= 0 && n0 + c < p.oc)
            put(p, y, row + (int64_t)(n0 + c) * p.y_c, tile_s[r * T::TS + c] - s_corr[c], s_mult[c],
                s_bias[c], fq_inv);
    }
}

/* d = c + Σ of the four products of unsigned bytes a and signed bytes b */
__device__ __forceinline__ int32_t dp4a_us(uint32_t a, uint32_t b, int32_t c)
{
    int32_t d;
    asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

/* The output channels k .. k + n - 1 (n <= 4) of pixel (im, pm) from their exact sums a (x_zp Σw
 * taken off), with every output form the epilogues write. */
__device__ __forceinline__ void put_four(const struct eb_cuk_qconv &p, void *y, int im, int pm,
                                         int k, int n, const int32_t (&a)[4], const float *mult,
                                         const float *bias, float fq_inv)
{
    if (p.n_dst > 0) {
        float v[4] = {};
#pragma unroll
        for (int j = 0; j < 4; j++)
            if (j < n)
                v[j] = ext_value(p, im, pm, k + j, a[j], mult[j], bias[j]);
        ext_put(p, im, pm, k, n, v);
        return;
    }
    const int64_t off = (int64_t)im * p.y_n + (int64_t)k * p.y_c + (int64_t)pm * p.y_p;
    const int bytes = p.quant || p.fq_on ? 1 : p.y_kind == EB_CUK_QY_F16 ? 2 : 4;
    if (n == 4 && p.y_c == 1 &&
        (((uintptr_t)y + (uintptr_t)(off * bytes)) & (uintptr_t)(4 * bytes - 1)) == 0) {
        put4_aligned(p, y, off, bytes, a, mult, bias, fq_inv);
        return;
    }
#pragma unroll
    for (int j = 0; j < 4; j++)
        if (j < n)
            put(p, y, off + (int64_t)j * p.y_c, a[j], mult[j], bias[j], fq_inv);
}

/*
 * A dense conv of few taps (the image's: IC 3 channels, a KH x KW window, K = 27 bytes of k) on
 * the CUDA cores: a thread an output pixel, its window's K bytes gathered once into registers
 * (any layout of x, NCHW included), then four-byte dot products (dp4a, unsigned x signed) with
 * each output channel's filter row from shared memory. The tensor-core kernel spent its time
 * here gathering a 16-byte chunk byte by byte for a 64 x 16 tile; this one reads each byte once.
 * A tap outside the image reads x_zp, as there.
 */
constexpr int kSmallOc = EB_CUK_QCONV_SMALL_OC;
template <int IC, int KH, int KW>
__global__ void __launch_bounds__(kConvThreads)
    k_qconv_small(const struct eb_cuk_qconv p, const uint8_t *__restrict__ x, void *__restrict__ y)
{
    constexpr int K = IC * KH * KW, KW4 = (K + 3) / 4, KWP = (KW4 + 3) / 4 * 4;
    /* the filter rows' first KWP words (bytes past K are the packing's zeros) */
    __shared__ __align__(16) uint32_t s_w[kSmallOc * KWP];
    __shared__ __align__(16) float s_mult[kSmallOc + 4], s_bias[kSmallOc + 4];
    __shared__ __align__(16) int32_t s_corr[kSmallOc + 4];
    const int tid = threadIdx.x;
    /* the filters, multipliers and biases are the load's constants: read before the wait */
    for (int i = tid; i < p.oc * KWP; i += kConvThreads) {
        const int k = i / KWP, j = i - k * KWP;
        s_w[i] = *(const uint32_t *)((const int8_t *)p.w + (int64_t)k * p.kp + 4 * j);
    }
    for (int i = tid; i < kSmallOc + 4; i += kConvThreads) {
        const int k = i < p.oc ? i : 0;
        s_mult[i] = p.mult[k];
        s_bias[i] = p.bias[k];
        s_corr[i] = p.x_zp * p.wsum[k];
    }
    eb_cuk::pdl_wait();
    eb_cuk::pdl_launch_dependents();
    __syncthreads();
    const int plane = p.oh * p.ow, m = blockIdx.x * kConvThreads + tid;
    if (m >= p.n * plane)
        return;
    const out_pix o = out_pixel(p, m, plane);
    const int im = o.im, pm = o.pm, ih0 = o.ih0, iw0 = o.iw0;
    const uint8_t *img = x + (int64_t)im * p.x_n;
    uint32_t xw[KWP] = {};
#pragma unroll
    for (int r = 0; r < KH; r++)
#pragma unroll
        for (int s = 0; s < KW; s++) {
            const int h = ih0 + r * p.dh, w = iw0 + s * p.dw;
            const bool in = (unsigned)h < (unsigned)p.ih && (unsigned)w < (unsigned)p.iw;
            const uint8_t *px = in ? img + ((int64_t)h * p.iw + w) * p.x_pix : img;
#pragma unroll
            for (int c = 0; c < IC; c++) {
                const int k = (r * KW + s) * IC + c;
                const uint32_t b = in ? px[(int64_t)c * p.x_c] : (uint32_t)p.x_zp;
                xw[k >> 2] |= b << (8 * (k & 3));
            }
        }
    const float fq_inv = fq_inv_of(p);
#pragma unroll 1
    for (int k0 = 0; k0 < p.oc; k0 += 4) {
        const int n = p.oc - k0 < 4 ? p.oc - k0 : 4;
        int32_t a[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const uint4 *wr = (const uint4 *)&s_w[(j < n ? k0 + j : k0) * KWP];
            int32_t acc = 0;
#pragma unroll
            for (int q = 0; q < KWP / 4; q++) {
                const uint4 w4 = wr[q];
                acc = dp4a_us(xw[4 * q], w4.x, acc);
                acc = dp4a_us(xw[4 * q + 1], w4.y, acc);
                acc = dp4a_us(xw[4 * q + 2], w4.z, acc);
                acc = dp4a_us(xw[4 * q + 3], w4.w, acc);
            }
            a[j] = acc - s_corr[k0 + j];
        }
        put_four(p, y, im, pm, k0, n, a, &s_mult[k0], &s_bias[k0], fq_inv);
    }
}

/*
 * Depthwise convs (eb_cuk_qconv_dw): a thread four channels of one output pixel, neighbouring
 * threads neighbouring channels. A tap is one 8-byte load of its four filter values (int16 w -
 * w_zp, tap-major: eb_cuk_qconv_pack_dw) and, with VEC (channels-last x, rows and channels
 * multiples of four, x aligned), one word of the pixel's four bytes. A tap outside the image adds
 * nothing, as in the reference. A 3 x 3 window's (K3) nine filter taps are fetched into
 * registers before the wait for the kernel before it. The outputs go through put_four, as the
 * image conv's.
 */
constexpr int kDwThreads = 128;
template <int VEC, int K3>
__global__ void __launch_bounds__(kDwThreads)
    k_qconv_dw(const struct eb_cuk_qconv p, const uint8_t *__restrict__ x, void *__restrict__ y)
{
    const int cg = (p.oc + 3) >> 2, plane = p.oh * p.ow;
    const int i = blockIdx.x * kDwThreads + threadIdx.x;
    if (i >= p.n * plane * cg)
        return;
    const int m = fdiv(p.f_cg, i), k0 = (i - m * cg) * 4, n = p.oc - k0 < 4 ? p.oc - k0 : 4;
    const uint2 *wt = (const uint2 *)((const int16_t *)p.w + k0);
    /* K3 (a 3 x 3 window): the nine taps' filter values, constants, fetched before the wait */
    uint2 wr[K3 ? 9 : 1];
#pragma unroll
    for (int t = 0; t < (K3 ? 9 : 0); t++)
        wr[t] = wt[(int64_t)t * cg];
    eb_cuk::pdl_wait();
    eb_cuk::pdl_launch_dependents();
    const out_pix o = out_pixel(p, m, plane);
    const int im = o.im, pm = o.pm, ih0 = o.ih0, iw0 = o.iw0;
    const uint8_t *img = x + (int64_t)im * p.x_n + (int64_t)k0 * p.x_c;
    const int kh = K3 ? 3 : p.kh, kw = K3 ? 3 : p.kw;
    int32_t a[4] = {0, 0, 0, 0};
#pragma unroll
    for (int r = 0; r < kh; r++) {
        const int h = ih0 + r * p.dh;
        if ((unsigned)h >= (unsigned)p.ih)
            continue;
#pragma unroll
        for (int s = 0; s < kw; s++) {
            const int w = iw0 + s * p.dw;
            if ((unsigned)w >= (unsigned)p.iw)
                continue;
            const uint8_t *px = img + ((int64_t)h * p.iw + w) * p.x_pix;
            uint32_t xb = 0;
            if (VEC) {
                xb = *(const uint32_t *)px;
            } else {
#pragma unroll
                for (int j = 0; j < 4; j++)
                    if (j < n)
                        xb |= (uint32_t)px[(int64_t)j * p.x_c] << (8 * j);
            }
            const uint2 wv = K3 ? wr[K3 ? r * 3 + s : 0] : wt[(int64_t)(r * kw + s) * cg];
            a[0] += ((int)(xb & 255u) - p.x_zp) * (int)(int16_t)(wv.x & 0xffffu);
            a[1] += ((int)((xb >> 8) & 255u) - p.x_zp) * ((int)wv.x >> 16);
            a[2] += ((int)((xb >> 16) & 255u) - p.x_zp) * (int)(int16_t)(wv.y & 0xffffu);
            a[3] += ((int)(xb >> 24) - p.x_zp) * ((int)wv.y >> 16);
        }
    }
    put_four(p, y, im, pm, k0, n, a, p.mult + k0, p.bias + k0, fq_inv_of(p));
}

/* One output per thread, channel fastest (coalesced channels-last reads); W: int8_t or uint8_t
 * weights. */
template <typename W>
__global__ void k_qconv_direct(const struct eb_cuk_qconv p, const uint8_t *__restrict__ x,
                               void *__restrict__ y)
{
    eb_cuk::pdl_begin();
    const int plane = p.oh * p.ow, total = p.n * plane * p.oc;
    const int icg = p.ic / p.groups, ocg = p.oc / p.groups;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        const int k = i % p.oc, m = i / p.oc;
        const int im = m / plane, pm = m - im * plane, oy = pm / p.ow, ox = pm - oy * p.ow;
        const int c0 = k / ocg * icg, wz = p.w_zp != nullptr ? p.w_zp[k] : 0;
        int32_t acc = 0;
        for (int r = 0; r < p.kh; r++) {
            const int h = oy * p.sh - p.pt + r * p.dh;
            if (h < 0 || h >= p.ih)
                continue;
            for (int s = 0; s < p.kw; s++) {
                const int w = ox * p.sw - p.pl + s * p.dw;
                if (w < 0 || w >= p.iw)
                    continue;
                const uint8_t *px = x + (int64_t)im * p.x_n + ((int64_t)h * p.iw + w) * p.x_pix +
                                    (int64_t)c0 * p.x_c;
                const int wi0 = ((k * icg) * p.kh + r) * p.kw + s, wstep = p.kh * p.kw;
                for (int c = 0; c < icg; c++) {
                    const int wi = wi0 + c * wstep;
                    const int wv = (int)((const W *)p.w)[wi];
                    acc += (wv - wz) * ((int)px[(int64_t)c * p.x_c] - p.x_zp);
                }
            }
        }
        if (p.n_dst > 0) {
            fused_one(p, im, pm, k, acc);
            continue;
        }
        put(p, y, (int64_t)im * p.y_n + (int64_t)k * p.y_c + (int64_t)pm * p.y_p, acc, p.mult[k],
            p.bias[k], fq_inv_of(p));
    }
}

} // namespace

extern "C" cudaError_t eb_cuk_qconv(cudaStream_t s, const struct eb_cuk_qconv *pp, const uint8_t *x,
                                    void *y)
{
    const int64_t m = (int64_t)pp->n * pp->oh * pp->ow;
    if (m <= 0 || pp->oc <= 0)
        return cudaSuccess;
    struct eb_cuk_qconv q = *pp, *p = &q;
    q.f_plane = eb_cuk_fdiv_of((uint32_t)(q.oh * q.ow));
    q.f_ow = eb_cuk_fdiv_of((uint32_t)q.ow);
    q.f_cpc = eb_cuk_fdiv_of(q.cp >= 16 ? (uint32_t)(q.cp >> 4) : 1u);
    q.f_kw = eb_cuk_fdiv_of(q.kw > 0 ? (uint32_t)q.kw : 1u);
    q.f_cg = eb_cuk_fdiv_of((uint32_t)(q.oc + 3) / 4);
    if (!p->dense && eb_cuk_qconv_dw(p->groups, p->ic, p->oc)) {
        const int64_t threads = m * ((p->oc + 3) / 4);
        const unsigned g = (unsigned)((threads + kDwThreads - 1) / kDwThreads);
        const bool vec = p->x_c == 1 && p->oc % 4 == 0 && p->x_pix % 4 == 0 && p->x_n % 4 == 0 &&
                         ((uintptr_t)x & 3) == 0;
        const bool k3 = p->kh == 3 && p->kw == 3;
        const cudaError_t err =
            vec ? (k3 ? eb_cuk::launch(k_qconv_dw<1, 1>, g, kDwThreads, s, *p, x, y)
                      : eb_cuk::launch(k_qconv_dw<1, 0>, g, kDwThreads, s, *p, x, y))
                : (k3 ? eb_cuk::launch(k_qconv_dw<0, 1>, g, kDwThreads, s, *p, x, y)
                      : eb_cuk::launch(k_qconv_dw<0, 0>, g, kDwThreads, s, *p, x, y));
        return err != cudaSuccess ? err : cudaGetLastError();
    }
    if (!p->dense) {
        const unsigned g = eb_cuk::blocks_for(m * p->oc);
        if (p->w_signed)
            eb_cuk::launch(k_qconv_direct<int8_t>, g, eb_cuk::kThreads, s, *p, x, y);
        else
            eb_cuk::launch(k_qconv_direct<uint8_t>, g, eb_cuk::kThreads, s, *p, x, y);
        return cudaGetLastError();
    }
    if (eb_cuk_qconv_small(p->ic, p->kh, p->kw, p->oc)) { /* the image's conv */
        const unsigned g = (unsigned)((m + kConvThreads - 1) / kConvThreads);
        const cudaError_t err =
            eb_cuk::launch(k_qconv_small<3, 3, 3>, g, kConvThreads, s, *p, x, y);
        return err != cudaSuccess ? err : cudaGetLastError();
    }
    const int bn = p->bn == 16 || p->bn == 32 ? p->bn : 64;
    const dim3 grid((unsigned)((m + BM - 1) / BM), (unsigned)((p->oc + bn - 1) / bn),
                    (unsigned)(p->splits > 1 ? p->splits : 1));
    const bool vec =
        p->x_c == 1 && p->ic % 16 == 0 && p->x_pix % 16 == 0 && ((uintptr_t)x & 15) == 0;
#define EB_QCONV_LAUNCH(BN_)                                                                       \
    (vec ? eb_cuk::launch(k_qconv_mma<BN_, 1>, grid, kConvThreads, s, *p, x, y)                    \
         : eb_cuk::launch(k_qconv_mma<BN_, 0>, grid, kConvThreads, s, *p, x, y))
    const cudaError_t err = bn == 16   ? EB_QCONV_LAUNCH(16)
                            : bn == 32 ? EB_QCONV_LAUNCH(32)
                                       : EB_QCONV_LAUNCH(64);
#undef EB_QCONV_LAUNCH
    return err != cudaSuccess ? err : cudaGetLastError();
}

/* Output tiles of a dense conv with bn channels a block. */
static int64_t qconv_tiles(const struct eb_cuk_qconv *p, int32_t bn)
{
    return ((int64_t)p->n * p->oh * p->ow + BM - 1) / BM * ((p->oc + bn - 1) / bn);
}

extern "C" void eb_cuk_qconv_plan(struct eb_cuk_qconv *p, int32_t sm_count)
{
    p->bn = 64;
    p->splits = 1;
    if (!p->dense)
        return;
    /* the widest tile that wastes at most an eighth of oc on padding channels; narrower still
     * while the tiles are fewer than the SMs (measured: yolov8n-640 int8 0.74 → 0.70 ms on an
     * H200 against narrowing only below half the SMs; splitting k more eagerly gained nothing) */
    static const int32_t widths[] = {64, 32, 16};
    int32_t bn = 16;
    for (int32_t bw : widths)
        if (((p->oc + bw - 1) / bw * bw - p->oc) * 8 <= p->oc) {
            bn = bw;
            break;
        }
    while (bn > 16 && qconv_tiles(p, bn) < sm_count)
        bn /= 2;
    p->bn = bn;
    /* split-k only where the tiles leave half the SMs idle and k is long: the split's atomics,
     * fence and read-back cost about what a few k steps do (measured, yolov8n-640 int8 on an
     * H200: splitting up to 2, 3, 4 blocks an SM instead made it 0.637, 0.639, 0.651 ms against
     * this rule's 0.610) */
    const int64_t tiles = qconv_tiles(p, bn), nk = p->kp / BK;
    if (2 * tiles > sm_count || nk < 8)
        return;
    int64_t s = sm_count / tiles;
    if (s > nk / 4)
        s = nk / 4;
    p->splits = (int32_t)(s > 16 ? 16 : s);
}

extern "C" size_t eb_cuk_qconv_ws_bytes(const struct eb_cuk_qconv *p, size_t *cnt_at)
{
    const int32_t bn = p->bn == 16 || p->bn == 32 ? p->bn : 64;
    const size_t tiles = (size_t)qconv_tiles(p, bn);
    if (cnt_at != NULL)
        *cnt_at = tiles * BM * (size_t)bn;
    return p->splits > 1 ? tiles * (BM * (size_t)bn + 1) * 4 : 0;
}

extern "C" void eb_cuk_qconv_pack(int32_t oc, int32_t ic, int32_t kh, int32_t kw, const int8_t *w,
                                  int8_t *packed, int32_t *wsum)
{
    int32_t cp, kp;
    eb_cuk_qconv_dims(ic, kh, kw, &cp, &kp);
    memset(packed, 0, (size_t)oc * (size_t)kp);
    for (int32_t k = 0; k < oc; k++) {
        int32_t sum = 0;
        for (int32_t c = 0; c < ic; c++)
            for (int32_t t = 0; t < kh * kw; t++) {
                const int8_t v = w[((int64_t)k * ic + c) * kh * kw + t];
                packed[(int64_t)k * kp + (int64_t)t * cp + c] = v;
                sum += v;
            }
        wsum[k] = sum;
    }
}

extern "C" void eb_cuk_qconv_pack_dw(int32_t oc, int32_t kh, int32_t kw, const void *w,
                                     int32_t w_signed, const int32_t *w_zp, int16_t *packed)
{
    const int32_t oc4 = (oc + 3) / 4 * 4, taps = kh * kw;
    for (int32_t t = 0; t < taps; t++)
        for (int32_t k = 0; k < oc4; k++) {
            const int64_t at = (int64_t)k * taps + t;
            const int32_t v = k >= oc    ? 0
                              : w_signed ? ((const int8_t *)w)[at]
                                         : ((const uint8_t *)w)[at];
            packed[(int64_t)t * oc4 + k] = (int16_t)(k < oc && w_zp != NULL ? v - w_zp[k] : v);
        }
}
