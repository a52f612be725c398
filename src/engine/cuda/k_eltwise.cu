/* Elementwise kernels: the conv epilogue, unary activations, broadcast binary ops, casts. */
#include <math.h>

#include "engine/cuda/k_common.cuh"

namespace
{

using eb_cuk::act;
using eb_cuk::ld;
using eb_cuk::sigmoidf;
using eb_cuk::st;

/* enum eb_unop (engine/cpu/ref/ref.h) */
enum { U_RELU, U_LEAKY, U_CLIP, U_HSIG, U_HSWISH, U_EXP, U_SQRT, U_TANH };
/* enum eb_binop */
enum { B_ADD, B_SUB, B_MUL, B_DIV, B_POW };

template <typename T>
__global__ void k_epilogue(int n, int channels, int plane, const float *bias, const T *res,
                           struct eb_cuk_epilogue e, T *y)
{
    eb_cuk::pdl_begin();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float v = ld(y, i);
        if (bias != nullptr)
            v += bias[(i / plane) % channels];
        v = act(e.act, e.alpha, e.beta, v);
        if (res != nullptr)
            v += ld(res, i);
        if (e.fq_on) {
            float q = rintf(v / e.fq_scale) + (float)e.fq_zp;
            q = q < (float)e.fq_qmin   ? (float)e.fq_qmin
                : q > (float)e.fq_qmax ? (float)e.fq_qmax
                                       : q;
            v = (q - (float)e.fq_zp) * e.fq_scale;
        }
        st(y, i, v);
    }
}

template <typename T>
cudaError_t epilogue(cudaStream_t s, int64_t n, int64_t channels, int64_t plane, const float *bias,
                     const void *res, const struct eb_cuk_epilogue *e, void *y)
{
    eb_cuk::launch(k_epilogue<T>, eb_cuk::blocks_for(n), eb_cuk::kThreads, s, (int)n, (int)channels,
                   (int)plane, bias, (const T *)res, *e, (T *)y);
    return cudaGetLastError();
}

__device__ __forceinline__ float unop(int op, float a, float b, float v)
{
    switch (op) {
    case U_RELU: return v > 0.0f ? v : 0.0f;
    case U_LEAKY: return v < 0.0f ? a * v : v;
    case U_CLIP: return fminf(fmaxf(v, a), b);
    case U_HSIG: return fmaxf(0.0f, fminf(1.0f, a * v + b));
    case U_HSWISH: return v * fmaxf(0.0f, fminf(1.0f, v / 6.0f + 0.5f));
    case U_EXP: return expf(v);
    case U_SQRT: return sqrtf(v);
    case U_TANH: return tanhf(v);
    case EB_CUK_UNARY_SIGMOID: return sigmoidf(v);
    default: return v;
    }
}

template <typename T> __global__ void k_unary(int n, int op, float a, float b, const T *x, T *y)
{
    eb_cuk::pdl_begin();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        st(y, i, unop(op, a, b, ld(x, i)));
}

template <typename T>
cudaError_t unary(cudaStream_t s, int op, int64_t n, float a, float b, const void *x, void *y)
{
    eb_cuk::launch(k_unary<T>, eb_cuk::blocks_for(n), eb_cuk::kThreads, s, (int)n, op, a, b,
                   (const T *)x, (T *)y);
    return cudaGetLastError();
}

__device__ __forceinline__ float binop(int op, float a, float b)
{
    switch (op) {
    case B_ADD: return a + b;
    case B_SUB: return a - b;
    case B_MUL: return a * b;
    case B_DIV: return a / b;
    default: return powf(a, b);
    }
}

/* Where element i of y (row-major over nd.shape) reads a (ia) and b (ib): the broadcast strides */
__device__ __forceinline__ void nd_at(const eb_cuk_nd &nd, int i, int &ia, int &ib)
{
    int rem = i;
    ia = 0, ib = 0;
    for (int d = nd.rank - 1; d >= 0; d--) {
        const int idx = rem % nd.shape[d];
        rem /= nd.shape[d];
        ia += idx * nd.sa[d];
        ib += idx * nd.sb[d];
    }
}

template <typename T>
__global__ void k_binary(int n, int op, eb_cuk_nd nd, const T *a, const T *b, T *y)
{
    eb_cuk::pdl_begin();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int ia, ib;
        nd_at(nd, i, ia, ib);
        st(y, i, binop(op, ld(a, ia), ld(b, ib)));
    }
}

/* Both operands contiguous with y's shape, or b one value. */
template <typename T>
__global__ void k_binary_flat(int n, int op, int b_scalar, const T *a, const T *b, T *y)
{
    eb_cuk::pdl_begin();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        st(y, i, binop(op, ld(a, i), ld(b, b_scalar ? 0 : i)));
}

template <typename T>
cudaError_t binary(cudaStream_t s, int op, const eb_cuk_nd *nd, const void *a, const void *b,
                   void *y)
{
    int64_t n = 1;
    int flat_a = 1, flat_b = 1, b_scalar = 1;
    int64_t stride = 1;
    for (int d = nd->rank - 1; d >= 0; d--) {
        n *= nd->shape[d];
        if (nd->shape[d] != 1) {
            flat_a &= nd->sa[d] == stride;
            flat_b &= nd->sb[d] == stride;
            b_scalar &= nd->sb[d] == 0;
        }
        stride *= nd->shape[d];
    }
    if (flat_a && (flat_b || b_scalar))
        eb_cuk::launch(k_binary_flat<T>, eb_cuk::blocks_for(n), eb_cuk::kThreads, s, (int)n, op,
                       !flat_b, (const T *)a, (const T *)b, (T *)y);
    else
        eb_cuk::launch(k_binary<T>, eb_cuk::blocks_for(n), eb_cuk::kThreads, s, (int)n, op, *nd,
                       (const T *)a, (const T *)b, (T *)y);
    return cudaGetLastError();
}

/* Integer a op b: two's complement arithmetic as the CPU reference's (division truncates, a zero
 * divisor gives 0) */
template <typename T> struct wide_uint; /* the unsigned type that wraps without overflow */
template <> struct wide_uint<int32_t> {
    using type = uint32_t;
};
template <> struct wide_uint<int64_t> {
    using type = uint64_t;
};

template <typename T> __device__ __forceinline__ T binop_int(int op, T a, T b)
{
    using U = typename wide_uint<T>::type;
    switch (op) {
    case B_ADD: return (T)((U)a + (U)b);
    case B_SUB: return (T)((U)a - (U)b);
    case B_MUL: return (T)((U)a * (U)b);
    default: return b == 0 ? 0 : b == -1 ? (T)((U)0 - (U)a) : a / b; /* MIN / -1 wraps */
    }
}

template <typename T>
__global__ void k_binary_int(int n, int op, eb_cuk_nd nd, const T *a, const T *b, T *y)
{
    eb_cuk::pdl_begin();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int ia, ib;
        nd_at(nd, i, ia, ib);
        y[i] = binop_int(op, a[ia], b[ib]);
    }
}

/* SwiGLU: y = (g sigmoid(g)) u, each step rounded to T as the Sigmoid and the two Muls store
 * it (the same numbers as the three nodes) */
template <typename T> __global__ void k_swiglu(int n, const T *g, const T *u, T *y)
{
    eb_cuk::pdl_begin();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        st(y, i, eb_cuk::swiglu_at(g, u, i));
}

template <typename T>
cudaError_t swiglu(cudaStream_t s, int64_t n, const void *g, const void *u, void *y)
{
    eb_cuk::launch(k_swiglu<T>, eb_cuk::blocks_for(n), eb_cuk::kThreads, s, (int)n, (const T *)g,
                   (const T *)u, (T *)y);
    return cudaGetLastError();
}

template <typename X, typename Y> __global__ void k_cast(int n, const X *x, Y *y)
{
    eb_cuk::pdl_begin();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        st(y, i, ld(x, i));
}

} // namespace

extern "C" cudaError_t eb_cuk_epilogue(cudaStream_t s, enum eb_cuk_dt dt, int64_t batch,
                                       int64_t channels, int64_t plane, const float *bias,
                                       const void *residual, const struct eb_cuk_epilogue *e,
                                       void *y)
{
    const int64_t n = batch * channels * plane;
    if (n <= 0)
        return cudaSuccess;
    return EB_CUK_DISPATCH(dt, epilogue, s, n, channels, plane, bias, residual, e, y);
}

extern "C" cudaError_t eb_cuk_unary(cudaStream_t s, enum eb_cuk_dt dt, int op, int64_t n, float a,
                                    float b, const void *x, void *y)
{
    if (n <= 0)
        return cudaSuccess;
    return EB_CUK_DISPATCH(dt, unary, s, op, n, a, b, x, y);
}

extern "C" cudaError_t eb_cuk_binary(cudaStream_t s, enum eb_cuk_dt dt, int op,
                                     const struct eb_cuk_nd *nd, const void *a, const void *b,
                                     void *y)
{
    for (int d = 0; d < nd->rank; d++)
        if (nd->shape[d] == 0)
            return cudaSuccess;
    return EB_CUK_DISPATCH(dt, binary, s, op, nd, a, b, y);
}

extern "C" cudaError_t eb_cuk_binary_int(cudaStream_t s, int int64, int op,
                                         const struct eb_cuk_nd *nd, const void *a, const void *b,
                                         void *y)
{
    if (op != B_ADD && op != B_SUB && op != B_MUL && op != B_DIV)
        return cudaErrorInvalidValue;
    int64_t n = 1;
    for (int d = 0; d < nd->rank; d++)
        n *= nd->shape[d];
    if (n <= 0)
        return cudaSuccess;
    if (int64)
        eb_cuk::launch(k_binary_int<int64_t>, eb_cuk::blocks_for(n), eb_cuk::kThreads, s, (int)n,
                       op, *nd, (const int64_t *)a, (const int64_t *)b, (int64_t *)y);
    else
        eb_cuk::launch(k_binary_int<int32_t>, eb_cuk::blocks_for(n), eb_cuk::kThreads, s, (int)n,
                       op, *nd, (const int32_t *)a, (const int32_t *)b, (int32_t *)y);
    return cudaGetLastError();
}

extern "C" cudaError_t eb_cuk_swiglu(cudaStream_t s, enum eb_cuk_dt dt, int64_t n, const void *g,
                                     const void *u, void *y)
{
    if (n <= 0)
        return cudaSuccess;
    return EB_CUK_DISPATCH(dt, swiglu, s, n, g, u, y);
}

extern "C" cudaError_t eb_cuk_cast(cudaStream_t s, enum eb_cuk_dt from, enum eb_cuk_dt to,
                                   int64_t n, const void *x, void *y)
{
    if (n <= 0)
        return cudaSuccess;
    const unsigned g = eb_cuk::blocks_for(n);
    if (from == EB_CUK_F32 && to == EB_CUK_F16)
        eb_cuk::launch(k_cast<float, __half>, g, eb_cuk::kThreads, s, (int)n, (const float *)x,
                       (__half *)y);
    else if (from == EB_CUK_F16 && to == EB_CUK_F32)
        eb_cuk::launch(k_cast<__half, float>, g, eb_cuk::kThreads, s, (int)n, (const __half *)x,
                       (float *)y);
    else
        return cudaMemcpyAsync(y, x, (size_t)n * (size_t)eb_cuk_dt_size(from),
                               cudaMemcpyDeviceToDevice, s);
    return cudaGetLastError();
}
