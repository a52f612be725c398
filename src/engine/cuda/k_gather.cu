/* Indexing: Gather (rows picked by integer indices), integer to float casts. */
#include "engine/cuda/k_common.cuh"

namespace
{

/* y[o][j][i] = x[o][idx[j]][i] for n = outer x n_idx x inner elements of type E (the element's
 * bytes); an index below zero counts from the end (the engine range-checks them on the host). */
template <typename E, typename I>
__global__ void k_gather(int n, int n_idx, int len, int inner, const I *idx, const E *x, E *y)
{
    eb_cuk::pdl_begin();
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < n; r += gridDim.x * blockDim.x) {
        const int i = r % inner, j = (r / inner) % n_idx, o = r / (inner * n_idx);
        int64_t v = (int64_t)idx[j];
        v = v < 0 ? v + len : v;
        y[r] = v >= 0 && v < len ? x[((int64_t)o * len + v) * inner + i] : E{};
    }
}

template <typename E>
cudaError_t gather_es(cudaStream_t s, int idx64, int64_t n, int64_t n_idx, int64_t len,
                      int64_t inner, const void *idx, const void *x, void *y)
{
    const unsigned g = eb_cuk::blocks_for(n);
    if (idx64)
        eb_cuk::launch(k_gather<E, int64_t>, g, eb_cuk::kThreads, s, (int)n, (int)n_idx, (int)len,
                       (int)inner, (const int64_t *)idx, (const E *)x, (E *)y);
    else
        eb_cuk::launch(k_gather<E, int32_t>, g, eb_cuk::kThreads, s, (int)n, (int)n_idx, (int)len,
                       (int)inner, (const int32_t *)idx, (const E *)x, (E *)y);
    return cudaGetLastError();
}

template <typename I, typename T> __global__ void k_int_to_float(int n, const I *x, T *y)
{
    eb_cuk::pdl_begin();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        eb_cuk::st(y, i, (float)x[i]);
}

template <typename T>
cudaError_t int_to_float(cudaStream_t s, int int64, int64_t n, const void *x, void *y)
{
    const unsigned g = eb_cuk::blocks_for(n);
    if (int64)
        eb_cuk::launch(k_int_to_float<int64_t, T>, g, eb_cuk::kThreads, s, (int)n,
                       (const int64_t *)x, (T *)y);
    else
        eb_cuk::launch(k_int_to_float<int32_t, T>, g, eb_cuk::kThreads, s, (int)n,
                       (const int32_t *)x, (T *)y);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t eb_cuk_gather(cudaStream_t s, int es, int idx64, int64_t outer,
                                     int64_t len, int64_t inner, int64_t n_idx, const void *idx,
                                     const void *x, void *y)
{
    const int64_t n = outer * n_idx * inner;
    if (n <= 0)
        return cudaSuccess;
    switch (es) {
    case 1: return gather_es<uint8_t>(s, idx64, n, n_idx, len, inner, idx, x, y);
    case 2: return gather_es<uint16_t>(s, idx64, n, n_idx, len, inner, idx, x, y);
    case 4: return gather_es<uint32_t>(s, idx64, n, n_idx, len, inner, idx, x, y);
    case 8: return gather_es<uint64_t>(s, idx64, n, n_idx, len, inner, idx, x, y);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t eb_cuk_int_to_float(cudaStream_t s, enum eb_cuk_dt dt, int int64,
                                           int64_t n, const void *x, void *y)
{
    if (n <= 0)
        return cudaSuccess;
    return EB_CUK_DISPATCH(dt, int_to_float, s, int64, n, x, y);
}
