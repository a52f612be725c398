/* A decoder's fused kernels: attention of a few query rows against a whole KV cache (decode
 * steps), rotary position embedding. */
#include <math.h>

#include "engine/cuda/k_common.cuh"

namespace
{

using eb_cuk::ld;
using eb_cuk::st;

constexpr int kAttnThreads = 512; /* a block of k_attn_rows */
constexpr int kKeysAhead = 4;     /* key rows a lane loads before it uses them */

/* 16 bytes of T as floats: 8 halves or 4 floats */
template <typename T> struct vec16;
template <> struct vec16<__half> {
    static constexpr int n = 8;
    static __device__ __forceinline__ void load(const __half *p, float *f)
    {
        const uint4 u = *reinterpret_cast<const uint4 *>(p);
        const __half2 *h = reinterpret_cast<const __half2 *>(&u);
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const float2 t = __half22float2(h[i]);
            f[2 * i] = t.x;
            f[2 * i + 1] = t.y;
        }
    }
};
template <> struct vec16<float> {
    static constexpr int n = 4;
    static __device__ __forceinline__ void load(const float *p, float *f)
    {
        const float4 u = *reinterpret_cast<const float4 *>(p);
        f[0] = u.x;
        f[1] = u.y;
        f[2] = u.z;
        f[3] = u.w;
    }
};

/*
 * One block per (query row, query head). Rows of K and V are read 16 bytes a lane, `lpk` lanes a
 * row (lpk = d / (16 bytes of T)), so that a warp reads 32 / lpk whole rows per load: the scores
 * (each row's dot product summed over its lanes), the softmax over them in shared memory, then
 * the weighted sum of the value rows, each lane accumulating its 16 bytes' dims over its slice
 * of the keys, the slices summed at the end. q and y: [rows, heads, d]; k and v:
 * [kv_heads, len, d]; mask (may be NULL): [rows, len], added to the scaled scores. Float
 * accumulation throughout; y rounded once.
 */
template <typename T>
__global__ void __launch_bounds__(kAttnThreads)
    k_attn_rows(int heads, int group, int d, int len, float scale, const T *q, const T *k,
                const T *v, const T *mask, T *y)
{
    constexpr int V = vec16<T>::n;
    extern __shared__ float sm[];
    eb_cuk::pdl_begin();
    const int h = blockIdx.x % heads, r = blockIdx.x / heads, kh = h / group;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const int lpk = d / V, sub = lane % lpk, rpw = 32 / lpk; /* lanes a row, rows a warp */
    const int slices = warps * rpw, slice = warp * rpw + lane / lpk;
    float *sc = sm;         /* [len] scores, then their exponentials */
    float *qs = sc + len;   /* [d] the query row */
    float *red = qs + d;    /* [64] the warps' maxima, then their sums */
    float *part = red + 64; /* [slices][d] the output's partial sums */
    const T *qr = q + ((int64_t)r * heads + h) * d;
    const T *kb = k + (int64_t)kh * len * d, *vb = v + (int64_t)kh * len * d;
    for (int t = threadIdx.x; t < d; t += blockDim.x)
        qs[t] = ld(qr, t);
    __syncthreads();
    float qv[V];
#pragma unroll
    for (int i = 0; i < V; i++)
        qv[i] = qs[sub * V + i];
    float mx = -INFINITY;
    /* kKeysAhead keys a lane at once: their loads in flight together, not one round trip each */
    for (int j0 = warp * rpw; j0 < len; j0 += kKeysAhead * slices) { /* the same in a warp */
        float kv[kKeysAhead][V];
#pragma unroll
        for (int u = 0; u < kKeysAhead; u++) {
            const int j = j0 + u * slices + lane / lpk;
            if (j < len)
                vec16<T>::load(kb + (int64_t)j * d + sub * V, kv[u]);
        }
#pragma unroll
        for (int u = 0; u < kKeysAhead; u++) {
            const int j = j0 + u * slices + lane / lpk;
            float acc = 0.0f;
            if (j < len) {
#pragma unroll
                for (int i = 0; i < V; i++)
                    acc += qv[i] * kv[u][i];
            }
            for (int o = lpk >> 1; o > 0; o >>= 1)
                acc += __shfl_xor_sync(0xffffffffu, acc, o);
            if (j < len) {
                const float s = acc * scale + (mask != NULL ? ld(mask, r * len + j) : 0.0f);
                if (sub == 0)
                    sc[j] = s;
                mx = fmaxf(mx, s);
            }
        }
    }
    for (int o = 16; o > 0; o >>= 1)
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    if (lane == 0)
        red[warp] = mx;
    __syncthreads();
    mx = -INFINITY;
    for (int w = 0; w < warps; w++)
        mx = fmaxf(mx, red[w]);
    float sum = 0.0f;
    for (int j = threadIdx.x; j < len; j += blockDim.x) {
        const float e = expf(sc[j] - mx);
        sc[j] = e;
        sum += e;
    }
    for (int o = 16; o > 0; o >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (lane == 0)
        red[32 + warp] = sum;
    __syncthreads();
    sum = 0.0f;
    for (int w = 0; w < warps; w++)
        sum += red[32 + w];
    float o[V];
#pragma unroll
    for (int i = 0; i < V; i++)
        o[i] = 0.0f;
#pragma unroll 4
    for (int j = slice; j < len; j += slices) {
        float vv[V];
        vec16<T>::load(vb + (int64_t)j * d + sub * V, vv);
        const float p = sc[j];
#pragma unroll
        for (int i = 0; i < V; i++)
            o[i] += p * vv[i];
    }
#pragma unroll
    for (int i = 0; i < V; i++)
        part[slice * d + sub * V + i] = o[i];
    __syncthreads();
    const float inv = 1.0f / sum;
    T *yr = y + ((int64_t)r * heads + h) * d;
    for (int t = threadIdx.x; t < d; t += blockDim.x) {
        float a = 0.0f;
        for (int c = 0; c < slices; c++)
            a += part[c * d + t];
        st(yr, t, a * inv);
    }
}

template <typename T>
cudaError_t attn_rows(cudaStream_t s, int64_t rows, int64_t heads, int64_t group, int64_t d,
                      int64_t len, float scale, const void *q, const void *k, const void *v,
                      const void *mask, void *y)
{
    const size_t smem = eb_cuk_attn_smem_bytes(sizeof(T) == 2 ? EB_CUK_F16 : EB_CUK_F32, d, len);
    return eb_cuk::launch_smem(k_attn_rows<T>, dim3((unsigned)(rows * heads)), dim3(kAttnThreads),
                               smem, s, (int)heads, (int)group, (int)d, (int)len, scale,
                               (const T *)q, (const T *)k, (const T *)v, (const T *)mask, (T *)y);
}

/* Rotary embedding with the halves rotated: a thread per (row, head, i < d/2) pair, which reads
 * both of its elements before it writes them (y may be x). */
template <typename T>
__global__ void k_rope(int64_t pairs, int heads, int d, const T *x, const T *c, const T *sn, T *y)
{
    eb_cuk::pdl_begin();
    const int half = d / 2;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < pairs;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int i = (int)(t % half);
        const int64_t rh = t / half, row = rh / heads;
        const int64_t a = rh * d + i, b = a + half, ca = row * d + i, cb = ca + half;
        const float xa = ld(x, (int)a), xb = ld(x, (int)b);
        const float ya = xa * ld(c, (int)ca) + xb * ld(sn, (int)ca);
        const float yb = xb * ld(c, (int)cb) + xa * ld(sn, (int)cb);
        st(y, (int)a, ya);
        st(y, (int)b, yb);
    }
}

template <typename T>
cudaError_t rope(cudaStream_t s, int64_t rows, int64_t heads, int64_t d, const void *x,
                 const void *c, const void *sn, void *y)
{
    const int64_t pairs = rows * heads * (d / 2);
    eb_cuk::launch(k_rope<T>, eb_cuk::blocks_for(pairs), eb_cuk::kThreads, s, pairs, (int)heads,
                   (int)d, (const T *)x, (const T *)c, (const T *)sn, (T *)y);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t eb_cuk_rope(cudaStream_t s, enum eb_cuk_dt dt, int64_t rows, int64_t heads,
                                   int64_t d, const void *x, const void *c, const void *sn, void *y)
{
    if (rows * heads * d <= 0)
        return cudaSuccess;
    return EB_CUK_DISPATCH(dt, rope, s, rows, heads, d, x, c, sn, y);
}

extern "C" int eb_cuk_attn_takes(enum eb_cuk_dt dt, int64_t d)
{
    const int64_t v = dt == EB_CUK_F16 ? 8 : 4, lpk = d / v;
    return d > 0 && d % v == 0 && lpk <= 32 && (lpk & (lpk - 1)) == 0;
}

extern "C" size_t eb_cuk_attn_smem_bytes(enum eb_cuk_dt dt, int64_t d, int64_t len)
{
    const int64_t lpk = d / (dt == EB_CUK_F16 ? 8 : 4);
    const int64_t slices = lpk > 0 ? (kAttnThreads / 32) * (32 / lpk) : 0;
    return (size_t)(len + d + 64 + slices * d) * sizeof(float);
}

extern "C" cudaError_t eb_cuk_attn_rows(cudaStream_t s, enum eb_cuk_dt dt, int64_t rows,
                                        int64_t heads, int64_t group, int64_t d, int64_t len,
                                        float scale, const void *q, const void *k, const void *v,
                                        const void *mask, void *y)
{
    if (rows * heads <= 0 || len <= 0)
        return cudaSuccess;
    if (!eb_cuk_attn_takes(dt, d))
        return cudaErrorInvalidValue;
    return EB_CUK_DISPATCH(dt, attn_rows, s, rows, heads, group, d, len, scale, q, k, v, mask, y);
}
