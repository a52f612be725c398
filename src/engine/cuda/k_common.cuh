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

/* kernel<<<grid, block, 0, s>>>(args...), as a programmatic dependent where the device takes
 * it (the kernel must begin with pdl_wait) */
template <typename... P, typename... A>
static inline cudaError_t launch(void (*kernel)(P...), dim3 grid, dim3 block, cudaStream_t s,
                                 A &&...args)
{
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.stream = s;
    cfg.attrs = &attr;
    cfg.numAttrs = pdl_device() ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, kernel, static_cast<A &&>(args)...);
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
