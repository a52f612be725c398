/*
 * The integer convolution (kernels.h, eb_cuk_qconv): dense convs as an implicit GEMM on the
 * tensor cores (mma.sync m16n8k32, uint8 activations x int8 weights → int32), every other one
 * (groups, uint8 weights, weight zero points) by a direct kernel. Both end in the same
 * epilogue, whose arithmetic is ops/qconv.c's reference kernel's.
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

/* Block tile: 64 pixels x 64 channels, k in steps of 64 (two mma k-steps); four warps of
 * 32 x 32. */
constexpr int BM = 64, BN = 64, BK = 64, kConvThreads = 128;
/* A shared-memory row holds a row's 64 bytes of k, padded to 80: the fragment reads of 8 rows
 * by 4 threads then fall in 32 different banks. */
constexpr int ROW = 80;
/* The output tile's row in shared memory: 64 values and 8 of padding (the fragment stores of 8
 * rows then hit 2 banks each at most). */
constexpr int TS = BN + 8;
static_assert(BM * TS * 4 <= 2 * (BM + BN) * ROW, "the output tile fits the A/B buffers");

__device__ __forceinline__ float sat_q(float v, int y_signed)
{
    const float lo = y_signed ? -128.0f : 0.0f, hi = y_signed ? 127.0f : 255.0f;
    return v < lo ? lo : (v > hi ? hi : v);
}

/* Output element `off` from the exact accumulator and its channel's multiplier and bias. */
__device__ __forceinline__ void put(const struct eb_cuk_qconv &p, void *y, int64_t off, int32_t acc,
                                    float mult, float bias)
{
    if (p.quant) {
        const int32_t q =
            (int32_t)sat_q(rintf(fmaf((float)acc, mult, bias)) + (float)p.y_zp, p.y_signed);
        ((uint8_t *)y)[off] = p.lut != nullptr ? p.lut[(uint8_t)q] : (uint8_t)q;
        return;
    }
    float v = __fadd_rn(__fmul_rn((float)acc, mult), bias);
    /* SiLU as the reference writes it (cpu/ref/epilogue.c) */
    v = p.act == eb_cuk::ACT_SILU ? v / (1.0f + expf(-v)) : act(p.act, p.alpha, 0.0f, v);
    if (p.fq_on)
        ((uint8_t *)y)[off] =
            (uint8_t)(int32_t)sat_q(rintf(v / p.fq_scale) + (float)p.fq_zp, p.y_signed);
    else if (p.y_kind == EB_CUK_QY_F16)
        ((__half *)y)[off] = __float2half_rn(v);
    else
        ((float *)y)[off] = v;
}

__device__ __forceinline__ void mma_u8s8(int32_t (&c)[4], const uint32_t (&a)[4],
                                         const uint32_t (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* The output pixel a thread loads A rows for. */
struct pix {
    const uint8_t *img;
    int ih0, iw0, ok;
};

/* 16 bytes of k chunk kc (bytes 16 kc .. 16 kc + 15 of the row: tap k / cp, channel k % cp) of
 * pixel q's im2col row; x_zp where the tap falls outside the image, past the taps or the
 * channel past ic. VEC: one 16-byte load (ic and x_pix multiples of 16, x aligned: a chunk is
 * inside one tap). */
template <int VEC>
__device__ __forceinline__ uint4 load_a(const struct eb_cuk_qconv &p, const pix &q, int kc)
{
    const uint32_t z = (uint32_t)p.x_zp * 0x01010101u;
    uint4 r = make_uint4(z, z, z, z);
    if (!q.ok)
        return r;
    const int taps = p.kh * p.kw;
    if (VEC) {
        const int cpc = p.cp >> 4, tap = kc / cpc;
        if (tap >= taps)
            return r;
        const int c0 = (kc - tap * cpc) << 4, rr = tap / p.kw, ss = tap - rr * p.kw;
        const int h = q.ih0 + rr * p.dh, w = q.iw0 + ss * p.dw;
        if (h < 0 || h >= p.ih || w < 0 || w >= p.iw)
            return r;
        return *(const uint4 *)(q.img + ((int64_t)h * p.iw + w) * p.x_pix + c0);
    }
    /* byte by byte, the tap and channel stepped along (no division per byte) */
    const uint64_t zz = ((uint64_t)z << 32) | z;
    uint64_t half[2] = {zz, zz};
    int tap = kc * 16 / p.cp, c = kc * 16 - tap * p.cp;
    int rr = tap / p.kw, ss = tap - rr * p.kw;
#pragma unroll
    for (int j = 0; j < 16; j++) {
        const int h = q.ih0 + rr * p.dh, w = q.iw0 + ss * p.dw;
        if (tap < taps && c < p.ic && h >= 0 && h < p.ih && w >= 0 && w < p.iw) {
            const int sh = (j & 7) * 8;
            const uint64_t b = q.img[((int64_t)h * p.iw + w) * p.x_pix + c];
            half[j >> 3] = (half[j >> 3] & ~((uint64_t)0xFF << sh)) | (b << sh);
        }
        if (++c == p.cp) {
            c = 0;
            tap++;
            if (++ss == p.kw)
                ss = 0, rr++;
        }
    }
    return make_uint4((uint32_t)half[0], (uint32_t)(half[0] >> 32), (uint32_t)half[1],
                      (uint32_t)(half[1] >> 32));
}

/*
 * The implicit GEMM. Block (x, y, z): pixels 64 x .. +63, channels 64 y .. +63, k steps z of
 * gridDim.z (split-k). With split-k, each block adds its partial tile into `ws` (int32, one tile
 * per (x, y), zero between runs) and counts itself in `cnt`; the last block of a tile reads the
 * sum, zeroes both for the next run and runs the epilogue.
 */
template <int VEC>
__global__ void __launch_bounds__(kConvThreads)
    k_qconv_mma(const struct eb_cuk_qconv p, const uint8_t *__restrict__ x, void *__restrict__ y)
{
    /* the A and B tiles, two buffers each; after the loop, the output tile (int32, TS a row) */
    __shared__ __align__(16) uint8_t smem[2 * (BM + BN) * ROW];
    __shared__ int last;
    /* the epilogue's per-channel multiplier, bias and x_zp Σw, and per-row output offsets (-1:
     * past the last pixel), filled while the first loads fly */
    __shared__ float s_mult[BN], s_bias[BN];
    __shared__ int32_t s_corr[BN];
    __shared__ int64_t s_row[BM];
    auto sa = [&](int b) { return smem + b * BM * ROW; };
    auto sb = [&](int b) { return smem + 2 * BM * ROW + b * BN * ROW; };
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int plane = p.oh * p.ow, M = p.n * plane;
    const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
    if (tid < BN) {
        const int k = n0 + tid < p.oc ? n0 + tid : 0;
        s_mult[tid] = p.mult[k];
        s_bias[tid] = p.bias[k];
        s_corr[tid] = p.x_zp * p.wsum[k];
    } else if (tid - BN < BM) {
        const int m = m0 + tid - BN, im = m / plane, pm = m - im * plane;
        s_row[tid - BN] = m < M ? (int64_t)im * p.y_n + (int64_t)pm * p.y_p : -1;
    }
    /* the loads: row tid / 2 of both tiles, chunks 2 (tid % 2) and the next of its 4 */
    const int lr = tid >> 1, lc = (tid & 1) * 2;
    pix q;
    const int am = m0 + lr;
    q.ok = am < M;
    const int img = q.ok ? am / plane : 0, pp = q.ok ? am - img * plane : 0;
    const int oy = pp / p.ow, ox = pp - oy * p.ow;
    q.ih0 = oy * p.sh - p.pt;
    q.iw0 = ox * p.sw - p.pl;
    q.img = x + (int64_t)img * p.ih * p.iw * p.x_pix;
    const int bn = n0 + lr, b_ok = bn < p.oc;
    const int8_t *wrow = (const int8_t *)p.w + (int64_t)(b_ok ? bn : 0) * p.kp + lc * 16;
    const uint4 zero = make_uint4(0, 0, 0, 0);
    const int nk = p.kp / BK, splits = gridDim.z;
    const int k0 = (int)((int64_t)nk * blockIdx.z / splits);
    const int k1 = (int)((int64_t)nk * (blockIdx.z + 1) / splits);
    uint4 ra[2], rb[2];
#pragma unroll
    for (int j = 0; j < 2; j++) {
        ra[j] = load_a<VEC>(p, q, k0 * 4 + lc + j);
        rb[j] = b_ok ? *(const uint4 *)(wrow + k0 * BK + j * 16) : zero;
        *(uint4 *)&sa(0)[lr * ROW + (lc + j) * 16] = ra[j];
        *(uint4 *)&sb(0)[lr * ROW + (lc + j) * 16] = rb[j];
    }
    __syncthreads();
    int32_t acc[2][4][4] = {};
    const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32, gq = lane >> 2, tq = lane & 3;
    for (int kt = k0; kt < k1; kt++) {
        const int cur = (kt - k0) & 1;
        if (kt + 1 < k1) /* the next step's loads, in flight during this step's products */
#pragma unroll
            for (int j = 0; j < 2; j++) {
                ra[j] = load_a<VEC>(p, q, (kt + 1) * 4 + lc + j);
                rb[j] = b_ok ? *(const uint4 *)(wrow + (kt + 1) * BK + j * 16) : zero;
            }
#pragma unroll
        for (int ks = 0; ks < BK; ks += 32) {
            uint32_t af[2][4], bf[4][2];
#pragma unroll
            for (int mi = 0; mi < 2; mi++) {
                const uint8_t *r0 = &sa(cur)[(wm + mi * 16 + gq) * ROW + ks + tq * 4];
                af[mi][0] = *(const uint32_t *)r0;
                af[mi][1] = *(const uint32_t *)(r0 + 8 * ROW);
                af[mi][2] = *(const uint32_t *)(r0 + 16);
                af[mi][3] = *(const uint32_t *)(r0 + 8 * ROW + 16);
            }
#pragma unroll
            for (int ni = 0; ni < 4; ni++) {
                const uint8_t *r0 = &sb(cur)[(wn + ni * 8 + gq) * ROW + ks + tq * 4];
                bf[ni][0] = *(const uint32_t *)r0;
                bf[ni][1] = *(const uint32_t *)(r0 + 16);
            }
#pragma unroll
            for (int mi = 0; mi < 2; mi++)
#pragma unroll
                for (int ni = 0; ni < 4; ni++)
                    mma_u8s8(acc[mi][ni], af[mi], bf[ni]);
        }
        if (kt + 1 < k1) /* the other buffer: everyone finished reading it a step ago */
#pragma unroll
            for (int j = 0; j < 2; j++) {
                *(uint4 *)&sa(cur ^ 1)[lr * ROW + (lc + j) * 16] = ra[j];
                *(uint4 *)&sb(cur ^ 1)[lr * ROW + (lc + j) * 16] = rb[j];
            }
        __syncthreads();
    }
    /* The tile through shared memory, then one compact loop over it, channel fastest: the
     * epilogue's code is not unrolled 32 times (instruction fetch stalled that form) and
     * consecutive threads write consecutive channels of a channels-last row. */
    int32_t *tile_s = (int32_t *)smem;
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                tile_s[(wm + mi * 16 + gq + (e >> 1) * 8) * TS + wn + ni * 8 + tq * 2 + (e & 1)] =
                    acc[mi][ni][e];
    __syncthreads();
    if (splits > 1) {
        const int tile = blockIdx.y * gridDim.x + blockIdx.x;
        int32_t *ws = p.ws + (int64_t)tile * BM * BN;
#pragma unroll 8
        for (int i = tid; i < BM * BN; i += kConvThreads)
            atomicAdd(&ws[i], tile_s[i / BN * TS + i % BN]);
        __threadfence();
        __syncthreads();
        if (tid == 0)
            last = atomicAdd(&p.cnt[tile], 1) == splits - 1;
        __syncthreads();
        if (!last)
            return;
        __threadfence();
#pragma unroll 8
        for (int i = tid; i < BM * BN; i += kConvThreads) {
            tile_s[i / BN * TS + i % BN] = __ldcg(&ws[i]);
            ws[i] = 0;
        }
        if (tid == 0)
            p.cnt[tile] = 0;
        __syncthreads();
    }
#pragma unroll 2
    for (int i = tid; i < BM * BN; i += kConvThreads) {
        const int r = i / BN, c = i % BN;
        const int64_t row = s_row[r];
        if (row >= 0 && n0 + c < p.oc)
            put(p, y, row + (int64_t)(n0 + c) * p.y_c, tile_s[r * TS + c] - s_corr[c], s_mult[c],
                s_bias[c]);
    }
}

/* One output per thread, channel fastest (coalesced channels-last reads); W: int8_t or uint8_t
 * weights. */
template <typename W>
__global__ void k_qconv_direct(const struct eb_cuk_qconv p, const uint8_t *__restrict__ x,
                               void *__restrict__ y)
{
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
                const uint8_t *px = x + (((int64_t)im * p.ih + h) * p.iw + w) * p.x_pix + c0;
                const int wi0 = ((k * icg) * p.kh + r) * p.kw + s, wstep = p.kh * p.kw;
                for (int c = 0; c < icg; c++) {
                    const int wi = wi0 + c * wstep;
                    const int wv = (int)((const W *)p.w)[wi];
                    acc += (wv - wz) * ((int)px[c] - p.x_zp);
                }
            }
        }
        put(p, y, (int64_t)im * p.y_n + (int64_t)k * p.y_c + (int64_t)pm * p.y_p, acc, p.mult[k],
            p.bias[k]);
    }
}

} // namespace

extern "C" cudaError_t eb_cuk_qconv(cudaStream_t s, const struct eb_cuk_qconv *p, const uint8_t *x,
                                    void *y)
{
    const int64_t m = (int64_t)p->n * p->oh * p->ow;
    if (m <= 0 || p->oc <= 0)
        return cudaSuccess;
    if (!p->dense) {
        const unsigned g = eb_cuk::blocks_for(m * p->oc);
        if (p->w_signed)
            k_qconv_direct<int8_t><<<g, eb_cuk::kThreads, 0, s>>>(*p, x, y);
        else
            k_qconv_direct<uint8_t><<<g, eb_cuk::kThreads, 0, s>>>(*p, x, y);
        return cudaGetLastError();
    }
    const dim3 grid((unsigned)((m + BM - 1) / BM), (unsigned)((p->oc + BN - 1) / BN),
                    (unsigned)(p->splits > 1 ? p->splits : 1));
    if (p->ic % 16 == 0 && p->x_pix % 16 == 0 && ((uintptr_t)x & 15) == 0)
        k_qconv_mma<1><<<grid, kConvThreads, 0, s>>>(*p, x, y);
    else
        k_qconv_mma<0><<<grid, kConvThreads, 0, s>>>(*p, x, y);
    return cudaGetLastError();
}

extern "C" int32_t eb_cuk_qconv_splits(const struct eb_cuk_qconv *p, int32_t sm_count)
{
    const int64_t tiles = ((int64_t)p->n * p->oh * p->ow + BM - 1) / BM * ((p->oc + BN - 1) / BN);
    /* only where the tiles leave half the SMs idle and k is long: the split's atomics, fence and
     * read-back cost about what a few k steps do */
    const int64_t nk = p->kp / BK;
    if (!p->dense || 2 * tiles > sm_count || nk < 8)
        return 1;
    int64_t s = sm_count / tiles;
    if (s > nk / 4)
        s = nk / 4;
    return (int32_t)(s > 16 ? 16 : s);
}

extern "C" size_t eb_cuk_qconv_ws_bytes(const struct eb_cuk_qconv *p, size_t *cnt_at)
{
    const size_t tiles =
        (size_t)(((int64_t)p->n * p->oh * p->ow + BM - 1) / BM * ((p->oc + BN - 1) / BN));
    if (cnt_at != NULL)
        *cnt_at = tiles * BM * BN;
    return p->splits > 1 ? tiles * (BM * BN + 1) * 4 : 0;
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
