/* Parameters of edgebench.QLinearConv (ops/qconv.c), filled by the --qdq int8 pass. */
#ifndef EB_ENGINE_OPS_QCONV_H
#define EB_ENGINE_OPS_QCONV_H

#include <stdint.h>

#include "engine/cpu/conv_u8.h"
#include "engine/cpu/epilogue.h"
#include "engine/cpu/ref/ref.h"

struct eb_qconv_params {
    struct eb_conv2d_desc d;
    int w_signed;  /* int8 weights (else uint8) */
    int y_signed;  /* int8 output (else uint8) */
    int32_t x_zp;  /* activation zero point (uint8) */
    int32_t *w_zp; /* [OC] weight zero points (arena) */
    float *mult;   /* [OC] x_scale * w_scale[oc] / y_scale (arena) */
    float *bias;   /* [OC] float bias / y_scale, zeros when the Conv had none (arena) */
    int32_t y_zp;
    const uint8_t *lut; /* absorbed DQ→SiLU→Q: output byte = lut[requantised byte]; NULL = none */
    int y_float;        /* no QuantizeLinear after the Conv: float output acc * mult + bias
                           (mult = x_scale * w_scale[oc], bias = bias_f), then `act` */
    enum eb_act act;    /* y_float: the activation after the Conv, absorbed (relu, leaky
                           relu with alpha, silu); EB_ACT_NONE = none */
    float alpha;
    int out_signed; /* with lut: int8 output (else uint8) */
    /* y_float, on the CUDA device only (engine/cuda/cuda_qconv.c): the QuantizeLinear that was
     * the output's one reader is fused, and the output is its bytes, sat(round_half_even(y /
     * q_after_scale) + q_after_zp) as int8 (q_after_signed) or uint8; the CPU never sees one */
    int q_after, q_after_signed;
    float q_after_scale;
    int32_t q_after_zp;
    /* y_float, on the CUDA device only (eb_cu__qconv_fuse): n_outs > 0 when the nodes after the
     * conv were fused into it (a residual Add, a Split along C, QuantizeLinear and
     * DequantizeLinear): output j of the node is outs[j] (struct eb_cuk_qdst's modes), and
     * input res_in (> 0) is the residual added after the activation */
    int res_in, n_outs;
    struct eb_qconv_out {
        int c0, c1, mode; /* enum eb_cuk_qmode */
        float q_scale, dq_scale, o_scale;
        int32_t q_zp, dq_zp, o_zp;
        int q_signed, o_signed;
    } outs[6];
    struct eb_conv2d_u8_plan *plan; /* fast kernel (prepare); NULL = reference */
    size_t acc_offset;              /* scratch offset of the int32 accumulator */
};

/** y[i] = sat(round_half_even(fma((float)acc[i], mult, bias)) + y_zp) (then lut), i < n. */
void eb_cpu_requant_i32(const struct eb_qconv_params *p, int64_t n, const int32_t *acc, float mult,
                        float bias, uint8_t *y);

#endif
