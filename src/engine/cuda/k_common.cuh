/* Helpers shared by the .cu files: float/half loads and stores, grid sizing. */
#ifndef EB_ENGINE_CUDA_K_COMMON_CUH
#define EB_ENGINE_CUDA_K_COMMON_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include "engine/cuda/kernels.h"

namespace eb_cuk
{

__device__ __forceinline__ float ld(const float *p, int i)
{
    return p[i];
}
__device__ __forceinline__ float ld(const __half *p, int i)
{
    return __half2float(p[i]);
}
__device__ __forceinline__ void st(float *p, int i, float v)
{
    p[i] = v;
}
__device__ __forceinline__ void st(__half *p, int i, float v)
{
    p[i] = __float2half_rn(v);
}

/* enum eb_act (engine/cpu/epilogue.h) */
enum {
    ACT_NONE,
    ACT_RELU,
    ACT_LEAKY,
    ACT_CLIP,
    ACT_SIGMOID,
    ACT_SILU,
    ACT_HSIG,
    ACT_HSWISH,
    ACT_TANH
};

__device__ __forceinline__ float sigmoidf(float v)
{
    return 1.0f / (1.0f + expf(-v));
}

__device__ __forceinline__ float act(int a, float al, float be, float v)
{
    switch (a) {
    case ACT_RELU: return v > 0.0f ? v : 0.0f;
    case ACT_LEAKY: return v < 0.0f ? al * v : v;
    case ACT_CLIP: return fminf(fmaxf(v, al), be);
    case ACT_SIGMOID: return sigmoidf(v);
    case ACT_SILU: return v * sigmoidf(v);
    case ACT_HSIG: return fmaxf(0.0f, fminf(1.0f, al * v + be));
    case ACT_HSWISH: return v * fmaxf(0.0f, fminf(1.0f, v / 6.0f + 0.5f));
    case ACT_TANH: return tanhf(v);
    default: return v;
    }
}

/*
 * The root mean square term of RMSNorm over x's `len` elements, sqrt(mean(x * x) + eps), with
 * float accumulation, computed by a whole block (every thread calls it; part: 32 floats of
 * shared memory, free again on return). Shared by the RMSNorm kernel and the one-row product
 * that normalises its row itself (k_gemv.cu), so both get the same bits.
 */
template <typename T>
__device__ __forceinline__ float block_rms(const T *x, int len, float eps, float *part)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    float sum = 0.0f;
    for (int a = threadIdx.x; a < len; a += blockDim.x) {
        const float v = ld(x, a);
        sum += v * v;
    }
    for (int o = 16; o > 0; o >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (lane == 0)
        part[warp] = sum;
    __syncthreads();
    sum = lane < warps ? part[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
    __syncthreads(); /* part is free again */
    return sqrtf(sum / (float)len + eps);
}

/* SwiGLU's element i, g * sigmoid(g) * u, each step rounded to T as the three nodes store it;
 * shared by the SwiGLU kernel and the one-row product that makes its row itself (k_gemv.cu). */
template <typename T> __device__ __forceinline__ float swiglu_at(const T *g, const T *u, int i)
{
    const float gv = ld(g, i);
    T t[1];
    st(t, 0, sigmoidf(gv));
    st(t, 0, gv * ld(t, 0));
    st(t, 0, ld(t, 0) * ld(u, i));
    return ld(t, 0);
}

constexpr int kThreads = 256;

/*
 * Programmatic dependent launch (compute capability 9.0 and later; nothing before). Every kernel
 * of ours is launched as a programmatic dependent (launch below) and waits (pdl_wait) for the
 * kernel before it to finish, its writes visible, before it reads or writes global memory; then
 * it lets the next kernel's blocks start (pdl_launch_dependents: one kernel ahead at most). A
 * kernel's launch then overlaps the one before it instead of following its end. A kernel not
 * launched as a dependent passes pdl_wait at once; one after a library's kernel (cuDNN, cuBLAS)
 * starts when that one ends, as without it.
 */
__device__ __forceinline__ void pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_launch_dependents()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;\n" ::);
#endif
}
/* The first statement of a kernel that has no set-up of its own */
__device__ __forceinline__ void pdl_begin()
{
    pdl_wait();
    pdl_launch_dependents();
}

/* Whether the current device takes programmatic dependent launches */
static inline bool pdl_device()
{
    int dev = 0, major = 0;
    return cudaGetDevice(&dev) == cudaSuccess &&
           cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
           major >= 9;
}

/* kernel<<<grid, block, smem, s>>>(args...), as a programmatic dependent where the device takes
 * it (the kernel must begin with pdl_wait); dynamic shared memory above the default 48 KiB is
 * opted into first */
template <typename... P, typename... A>
static inline cudaError_t launch_smem(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem,
                                      cudaStream_t s, A &&...args)
{
    if (smem > 48 * 1024) {
        const cudaError_t ce =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (ce != cudaSuccess)
            return ce;
    }
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cfg.attrs = &attr;
    cfg.numAttrs = pdl_device() ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, kernel, static_cast<A &&>(args)...);
}

/* launch_smem without dynamic shared memory */
template <typename... P, typename... A>
static inline cudaError_t launch(void (*kernel)(P...), dim3 grid, dim3 block, cudaStream_t s,
                                 A &&...args)
{
    return launch_smem(kernel, grid, block, 0, s, static_cast<A &&>(args)...);
}

/* Blocks for n elements with a grid-stride loop (at most 65535 x 4 blocks: the loop does the
 * rest). */
static inline unsigned blocks_for(int64_t n)
{
    int64_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)(b < 1 ? 1 : b > 262140 ? 262140 : b);
}

} // namespace eb_cuk

/* Runs F<float> or F<__half> for dt. */
#define EB_CUK_DISPATCH(dt, F, ...)                                                                \
    ((dt) == EB_CUK_F16 ? F<__half>(__VA_ARGS__) : F<float>(__VA_ARGS__))

#endif
