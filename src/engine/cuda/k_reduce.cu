/* Reductions: softmax, the DFL decode, the mean (ReduceMean), RMSNorm. */
#include <math.h>

#include "engine/cuda/k_common.cuh"

namespace
{

using eb_cuk::ld;
using eb_cuk::st;

/* One thread per (outer, inner) row: rows are short in detection heads (DFL: 16) and in
 * attention the row count is large. */
template <typename T> __global__ void k_softmax(int rows, int len, int inner, const T *x, T *y)
{
    eb_cuk::pdl_begin();
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x) {
        const int o = r / inner, in = r % inner;
        const int64_t base = (int64_t)o * len * inner + in;
        float m = -INFINITY, s = 0.0f;
        for (int a = 0; a < len; a++) {
            const float v = ld(x, (int)(base + (int64_t)a * inner));
            m = v > m ? v : m;
        }
        for (int a = 0; a < len; a++)
            s += expf(ld(x, (int)(base + (int64_t)a * inner)) - m);
        const float inv = 1.0f / s;
        for (int a = 0; a < len; a++) {
            const int i = (int)(base + (int64_t)a * inner);
            st(y, i, expf(ld(x, i) - m) * inv);
        }
    }
}

/* A warp per row when rows are long and contiguous (inner == 1). */
template <typename T> __global__ void k_softmax_warp(int rows, int len, const T *x, T *y)
{
    eb_cuk::pdl_begin();
    const int lane = threadIdx.x & 31;
    const int warps = (gridDim.x * blockDim.x) >> 5;
    for (int r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows; r += warps) {
        const T *xr = x + (int64_t)r * len;
        T *yr = y + (int64_t)r * len;
        float m = -INFINITY, s = 0.0f;
        for (int a = lane; a < len; a += 32)
            m = fmaxf(m, ld(xr, a));
        for (int o = 16; o > 0; o >>= 1)
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        for (int a = lane; a < len; a += 32)
            s += expf(ld(xr, a) - m);
        for (int o = 16; o > 0; o >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, o);
        const float inv = 1.0f / s;
        for (int a = lane; a < len; a += 32)
            st(yr, a, expf(ld(xr, a) - m) * inv);
    }
}

template <typename T>
cudaError_t softmax(cudaStream_t s, int64_t outer, int64_t len, int64_t inner, const void *x,
                    void *y)
{
    const int64_t rows = outer * inner;
    if (inner == 1 && len >= 64)
        eb_cuk::launch(k_softmax_warp<T>, eb_cuk::blocks_for(rows * 32), eb_cuk::kThreads, s,
                       (int)rows, (int)len, (const T *)x, (T *)y);
    else
        eb_cuk::launch(k_softmax<T>, eb_cuk::blocks_for(rows), eb_cuk::kThreads, s, (int)rows,
                       (int)len, (int)inner, (const T *)x, (T *)y);
    return cudaGetLastError();
}

/* edgebench.DFL (ops/dfl.c): one thread per (row, anchor); the bins of neighbouring anchors are
 * neighbours in memory, so each bin's load is coalesced across the warp. */
template <typename T>
__global__ void k_dfl(int n, int len, int inner, const T *x, const float *w, T *y)
{
    eb_cuk::pdl_begin();
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < n; r += gridDim.x * blockDim.x) {
        const int o = r / inner, a = r % inner;
        const T *xr = x + (int64_t)o * len * inner + a;
        float m = -INFINITY, s = 0.0f, dot = 0.0f;
        for (int i = 0; i < len; i++)
            m = fmaxf(m, ld(xr, i * inner));
        for (int i = 0; i < len; i++) {
            const float e = expf(ld(xr, i * inner) - m);
            s += e;
            dot += e * w[i];
        }
        st(y, r, dot / s);
    }
}

template <typename T>
cudaError_t dfl(cudaStream_t s, int64_t outer, int64_t len, int64_t inner, const void *x,
                const float *w, void *y)
{
    const int64_t n = outer * inner;
    eb_cuk::launch(k_dfl<T>, eb_cuk::blocks_for(n), eb_cuk::kThreads, s, (int)n, (int)len,
                   (int)inner, (const T *)x, w, (T *)y);
    return cudaGetLastError();
}

/* The mean over `len` elements of stride `inner` (float accumulation): a thread per row, or a
 * warp per row when rows are long and contiguous (RMSNorm's hidden dim). */
template <typename T> __global__ void k_mean(int rows, int len, int inner, const T *x, T *y)
{
    eb_cuk::pdl_begin();
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x) {
        const int o = r / inner, in = r % inner;
        const int64_t base = (int64_t)o * len * inner + in;
        float sum = 0.0f;
        for (int a = 0; a < len; a++)
            sum += ld(x, (int)(base + (int64_t)a * inner));
        st(y, r, sum / (float)len);
    }
}

template <typename T> __global__ void k_mean_warp(int rows, int len, const T *x, T *y)
{
    eb_cuk::pdl_begin();
    const int lane = threadIdx.x & 31;
    const int warps = (gridDim.x * blockDim.x) >> 5;
    for (int r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows; r += warps) {
        const T *xr = x + (int64_t)r * len;
        float sum = 0.0f;
        for (int a = lane; a < len; a += 32)
            sum += ld(xr, a);
        for (int o = 16; o > 0; o >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
        if (lane == 0)
            st(y, r, sum / (float)len);
    }
}

template <typename T>
cudaError_t mean(cudaStream_t s, int64_t outer, int64_t len, int64_t inner, const void *x, void *y)
{
    const int64_t rows = outer * inner;
    if (inner == 1 && len >= 64)
        eb_cuk::launch(k_mean_warp<T>, eb_cuk::blocks_for(rows * 32), eb_cuk::kThreads, s,
                       (int)rows, (int)len, (const T *)x, (T *)y);
    else
        eb_cuk::launch(k_mean<T>, eb_cuk::blocks_for(rows), eb_cuk::kThreads, s, (int)rows,
                       (int)len, (int)inner, (const T *)x, (T *)y);
    return cudaGetLastError();
}

/* RMSNorm, one block per row of `len` (float accumulation): y = x / sqrt(mean(x * x) + eps) * w.
 * Each thread writes only the elements it read, after the block's sum: y may be x. */
template <typename T>
__global__ void k_rms_norm(int rows, int len, float eps, const T *x, const T *w, T *y)
{
    eb_cuk::pdl_begin();
    __shared__ float part[32];
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *xr = x + (int64_t)r * len;
        T *yr = y + (int64_t)r * len;
        const float sd = eb_cuk::block_rms(xr, len, eps, part);
        for (int a = threadIdx.x; a < len; a += blockDim.x)
            st(yr, a, ld(xr, a) / sd * ld(w, a));
    }
}

template <typename T>
cudaError_t rms_norm(cudaStream_t s, int64_t rows, int64_t len, float eps, const void *x,
                     const void *w, void *y)
{
    eb_cuk::launch(k_rms_norm<T>, (unsigned)(rows < 65535 ? rows : 65535), eb_cuk::kThreads, s,
                   (int)rows, (int)len, eps, (const T *)x, (const T *)w, (T *)y);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t eb_cuk_rms_norm(cudaStream_t s, enum eb_cuk_dt dt, int64_t rows, int64_t len,
                                       float eps, const void *x, const void *w, void *y)
{
    if (rows * len <= 0)
        return cudaSuccess;
    return EB_CUK_DISPATCH(dt, rms_norm, s, rows, len, eps, x, w, y);
}

extern "C" cudaError_t eb_cuk_reduce_mean(cudaStream_t s, enum eb_cuk_dt dt, int64_t outer,
                                          int64_t len, int64_t inner, const void *x, void *y)
{
    if (outer * len * inner <= 0)
        return cudaSuccess;
    return EB_CUK_DISPATCH(dt, mean, s, outer, len, inner, x, y);
}

extern "C" cudaError_t eb_cuk_dfl(cudaStream_t s, enum eb_cuk_dt dt, int64_t outer, int64_t len,
                                  int64_t inner, const void *x, const float *w, void *y)
{
    if (outer * len * inner <= 0)
        return cudaSuccess;
    return EB_CUK_DISPATCH(dt, dfl, s, outer, len, inner, x, w, y);
}

extern "C" cudaError_t eb_cuk_softmax(cudaStream_t s, enum eb_cuk_dt dt, int64_t outer, int64_t len,
                                      int64_t inner, const void *x, void *y)
{
    if (outer * len * inner <= 0)
        return cudaSuccess;
    return EB_CUK_DISPATCH(dt, softmax, s, outer, len, inner, x, y);
}
