/* QuantizeLinear and DequantizeLinear (per tensor or per channel). */
#include <math.h>

#include "engine/cuda/k_common.cuh"

namespace
{

using eb_cuk::ld;
using eb_cuk::st;

template <typename T, typename Q>
__global__ void k_quantize(int n, int channels, int inner, const T *x, const float *scale,
                           const Q *zp, float lo, float hi, Q *y)
{
    eb_cuk::pdl_begin();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const int c = channels == 1 ? 0 : (i / inner) % channels;
        const float z = zp != nullptr ? (float)zp[c] : 0.0f;
        /* rintf rounds half to even (the default rounding mode), as ONNX specifies. */
        float q = fminf(fmaxf(rintf(ld(x, i) / scale[c]) + z, lo), hi);
        if (q != q)
            q = z;
        y[i] = (Q)q;
    }
}

template <typename T>
cudaError_t quantize(cudaStream_t s, int64_t n, int64_t channels, int64_t inner, const void *x,
                     const float *scale, const void *zp, int y_signed, void *y)
{
    const unsigned g = eb_cuk::blocks_for(n);
    if (y_signed)
        eb_cuk::launch(k_quantize<T, int8_t>, g, eb_cuk::kThreads, s, (int)n, (int)channels,
                       (int)inner, (const T *)x, scale, (const int8_t *)zp, -128.0f, 127.0f,
                       (int8_t *)y);
    else
        eb_cuk::launch(k_quantize<T, uint8_t>, g, eb_cuk::kThreads, s, (int)n, (int)channels,
                       (int)inner, (const T *)x, scale, (const uint8_t *)zp, 0.0f, 255.0f,
                       (uint8_t *)y);
    return cudaGetLastError();
}

template <typename T, typename Q>
__global__ void k_dequantize(int n, int channels, int inner, const Q *x, const float *scale,
                             const Q *zp, T *y)
{
    eb_cuk::pdl_begin();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const int c = channels == 1 ? 0 : (i / inner) % channels;
        const int64_t z = zp != nullptr ? (int64_t)zp[c] : 0;
        st(y, i, (float)((int64_t)x[i] - z) * scale[c]);
    }
}

template <typename T>
cudaError_t dequantize(cudaStream_t s, int64_t n, int64_t channels, int64_t inner, int x_kind,
                       const void *x, const float *scale, const void *zp, void *y)
{
    const unsigned g = eb_cuk::blocks_for(n);
    const int nn = (int)n, c = (int)channels, in = (int)inner;
    if (x_kind == 1)
        eb_cuk::launch(k_dequantize<T, int8_t>, g, eb_cuk::kThreads, s, nn, c, in,
                       (const int8_t *)x, scale, (const int8_t *)zp, (T *)y);
    else if (x_kind == 2)
        eb_cuk::launch(k_dequantize<T, int32_t>, g, eb_cuk::kThreads, s, nn, c, in,
                       (const int32_t *)x, scale, (const int32_t *)zp, (T *)y);
    else
        eb_cuk::launch(k_dequantize<T, uint8_t>, g, eb_cuk::kThreads, s, nn, c, in,
                       (const uint8_t *)x, scale, (const uint8_t *)zp, (T *)y);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t eb_cuk_quantize(cudaStream_t s, enum eb_cuk_dt dt, int64_t n,
                                       int64_t channels, int64_t inner, const void *x,
                                       const float *scale, const void *zp, int y_signed, void *y)
{
    if (n <= 0)
        return cudaSuccess;
    return EB_CUK_DISPATCH(dt, quantize, s, n, channels, inner, x, scale, zp, y_signed, y);
}

extern "C" cudaError_t eb_cuk_dequantize(cudaStream_t s, enum eb_cuk_dt dt, int64_t n,
                                         int64_t channels, int64_t inner, int x_kind, const void *x,
                                         const float *scale, const void *zp, void *y)
{
    if (n <= 0)
        return cudaSuccess;
    return EB_CUK_DISPATCH(dt, dequantize, s, n, channels, inner, x_kind, x, scale, zp, y);
}
