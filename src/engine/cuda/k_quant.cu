/* QuantizeLinear and DequantizeLinear (per tensor or per channel). */
#include <math.h>

#include "engine/cuda/k_common.cuh"

namespace
{

using eb_cuk::ld;
using eb_cuk::st;

/* QuantizeLinear's value of v: rintf rounds half to even (the default rounding mode), as ONNX
 * specifies; NaN gives the zero point */
__device__ __forceinline__ float quant_of(float v, float scale, float z, float lo, float hi)
{
    const float q = fminf(fmaxf(rintf(v / scale) + z, lo), hi);
    return q != q ? z : q;
}

template <typename T, typename Q>
__global__ void k_quantize(int n, int channels, int inner, const T *x, const float *scale,
                           const Q *zp, float lo, float hi, Q *y)
{
    eb_cuk::pdl_begin();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const int c = channels == 1 ? 0 : (i / inner) % channels;
        y[i] = (Q)quant_of(ld(x, i), scale[c], zp != nullptr ? (float)zp[c] : 0.0f, lo, hi);
    }
}

/* Per tensor, eight values a thread: one 16-byte load (halves; two of floats) and one 8-byte
 * store (n a multiple of 8, x 16- and y 8-byte aligned). These tensors are a few MB: the scalar
 * kernel's byte stores and loads left it far from the memory's rate. */
template <typename T, typename Q>
__global__ void k_quantize8(int n8, const T *x, const float *scale, const Q *zp, float lo, float hi,
                            Q *y)
{
    eb_cuk::pdl_begin();
    const float sc = scale[0], z = zp != nullptr ? (float)zp[0] : 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n8; i += gridDim.x * blockDim.x) {
        float v[8];
        if (sizeof(T) == 2) {
            const uint4 u = ((const uint4 *)x)[i];
            const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const float2 f = __half22float2(*(const __half2 *)&w[j]);
                v[2 * j] = f.x, v[2 * j + 1] = f.y;
            }
        } else {
            const float4 a = ((const float4 *)x)[2 * i], b = ((const float4 *)x)[2 * i + 1];
            v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
            v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
        }
        uint32_t lo4 = 0, hi4 = 0;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            lo4 |= (uint32_t)(uint8_t)(Q)quant_of(v[j], sc, z, lo, hi) << (8 * j);
            hi4 |= (uint32_t)(uint8_t)(Q)quant_of(v[j + 4], sc, z, lo, hi) << (8 * j);
        }
        ((uint2 *)y)[i] = make_uint2(lo4, hi4);
    }
}

/* QuantizeLinear into bytes Q saturated to [lo, hi]: per tensor eight values a thread where the
 * tensor allows (k_quantize8), else one */
template <typename T, typename Q>
cudaError_t quantize_to(cudaStream_t s, int64_t n, int64_t channels, int64_t inner, const T *x,
                        const float *scale, const Q *zp, float lo, float hi, Q *y)
{
    if (channels == 1 && n % 8 == 0 && ((uintptr_t)x & 15) == 0 && ((uintptr_t)y & 7) == 0)
        eb_cuk::launch(k_quantize8<T, Q>, eb_cuk::blocks_for(n / 8), eb_cuk::kThreads, s,
                       (int)(n / 8), x, scale, zp, lo, hi, y);
    else
        eb_cuk::launch(k_quantize<T, Q>, eb_cuk::blocks_for(n), eb_cuk::kThreads, s, (int)n,
                       (int)channels, (int)inner, x, scale, zp, lo, hi, y);
    return cudaGetLastError();
}

template <typename T>
cudaError_t quantize(cudaStream_t s, int64_t n, int64_t channels, int64_t inner, const void *x,
                     const float *scale, const void *zp, int y_signed, void *y)
{
    if (y_signed)
        return quantize_to(s, n, channels, inner, (const T *)x, scale, (const int8_t *)zp, -128.0f,
                           127.0f, (int8_t *)y);
    return quantize_to(s, n, channels, inner, (const T *)x, scale, (const uint8_t *)zp, 0.0f,
                       255.0f, (uint8_t *)y);
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
