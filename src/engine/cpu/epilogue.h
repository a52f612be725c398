/*
 * The epilogue fused into a kernel's output (Conv, and later MatMul/Gemm): per output channel
 * bias, then an activation, then a residual add, then a QuantizeLinear→DequantizeLinear pair
 * (fake quantisation), in that order — the order in which the fusion pass absorbs the nodes
 * that followed the Conv in the ONNX graph:
 *
 *     y = fq( act(conv(x) + bias[c]) + residual )
 *
 * eb_cpu_epilogue_f32__ref is the specification; fast kernels apply the same on tiles.
 */
#ifndef EB_ENGINE_CPU_EPILOGUE_H
#define EB_ENGINE_CPU_EPILOGUE_H

#include <stddef.h>
#include <stdint.h>

enum eb_act {
    EB_ACT_NONE = 0,
    EB_ACT_RELU,         /* max(x, 0) */
    EB_ACT_LEAKY_RELU,   /* x < 0 ? alpha*x : x */
    EB_ACT_CLIP,         /* min(max(x, alpha), beta) */
    EB_ACT_SIGMOID,      /* 1/(1+exp(-x)) */
    EB_ACT_SILU,         /* x*sigmoid(x) (Sigmoid + Mul in ONNX) */
    EB_ACT_HARD_SIGMOID, /* max(0, min(1, alpha*x + beta)) */
    EB_ACT_HARD_SWISH,   /* x * max(0, min(1, x/6 + 1/2)) */
    EB_ACT_TANH,
};

struct eb_epilogue {
    enum eb_act act;
    float alpha, beta; /* LeakyRelu alpha; Clip min/max; HardSigmoid alpha/beta */
    int residual;      /* 1: add a residual tensor of the output's shape after the activation */
    int fake_quant; /* 1: y = (clamp(round_half_even(y/fq_scale) + fq_zp, qmin, qmax) - fq_zp) * fq_scale */
    float fq_scale;
    int32_t fq_zp, fq_qmin, fq_qmax;
};

/** Name of an activation ("silu", ...) for profiles and messages. */
const char *eb_act_name(enum eb_act act);

/** y = act(y) for one value (the scalar definition). */
float eb_cpu_act_f32__ref(enum eb_act act, float alpha, float beta, float y);

/**
 * Applies everything but the bias to y [channels, plane] in place: activation, residual
 * r [channels, plane] (when e->residual; else `r` is ignored), fake quantisation.
 */
void eb_cpu_epilogue_f32__ref(const struct eb_epilogue *e, size_t n, const float *r, float *y);

#endif
