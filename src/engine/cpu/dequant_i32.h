/*
 * The dequantising epilogue of an integer convolution's int32 output (edgebench.DequantizeI32,
 * made by the fusion pass from Cast(int32 → float) → Mul(scale) → Add(bias) → activation):
 *
 *   y[n][c][i] = epi(float(x[n][c][i]) * scale + bias[c])      (or scale[c], per channel)
 *
 * with the float conversion and the product rounded as the separate Cast and Mul nodes round
 * them, and epi the Conv epilogue (activation, residual, fake quantisation; epilogue.h).
 */
#ifndef EB_ENGINE_CPU_DEQUANT_I32_H
#define EB_ENGINE_CPU_DEQUANT_I32_H

#include <stdint.h>

#include "engine/cpu/cpu.h"
#include "engine/cpu/epilogue.h"

/** What the kernel reads: one scale, `bias` with `channels` entries or NULL. */
struct eb_dequant_i32_args {
    int64_t n, channels, inner; /* x and y are [n][channels][inner] */
    const int32_t *x;
    float scale;
    const float *scales;   /* per channel (`channels` entries), NULL = `scale` for all */
    const float *bias;     /* NULL = none */
    const float *residual; /* y's shape; read when epi->residual */
    const struct eb_epilogue *epi;
    float *y;
};

/** Threaded over cpu->pool; the scalar reference path when cpu->isa is EB_CPU_ISA_REF. */
void eb_cpu_dequantize_i32(const struct eb_cpu_exec *cpu, const struct eb_dequant_i32_args *a);

#endif
