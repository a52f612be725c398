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
