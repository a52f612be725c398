/*
 * Fast CPU kernels behind run-time ISA dispatch: what the ops call when the engine's ISA is not
 * EB_CPU_ISA_REF. Each entry point picks the AVX-512, AVX2+FMA or NEON implementation (cpu/x86,
 * cpu/arm) for `isa`, and falls back to the reference kernel where it has no faster one. Every
 * kernel is tested against cpu/ref on random and edge shapes with guard bytes (tests/kernels).
 *
 * Convolution and matrix products share the SGEMM micro-kernels (cpu/gemm.c): weights are packed
 * at load time (prepare); a convolution reads its activations in place (every im2col row is a
 * shifted view of the input, or of a padded copy split into stride phases: see conv_f32.c), a
 * matrix product packs them panel by panel into per-worker scratch; the epilogue (bias,
 * activation, residual, fake quantisation) is applied to each output tile while it is in cache.
 */
#ifndef EB_ENGINE_CPU_FAST_H
#define EB_ENGINE_CPU_FAST_H

#include <stddef.h>
#include <stdint.h>

#include "engine/cpu/cpu.h"
#include "engine/cpu/epilogue.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ir/graph.h"

/* ---- float convolution ----------------------------------------------------------------- */

/** A convolution prepared for one ISA: packed weights, bias, chosen algorithm (opaque). */
struct eb_conv2d_f32_plan;

/*
 * Activation layouts of a float conv: NCHW, or channel-blocked "NCHWc" — [N][C/CB][H][W][CB],
 * CB channels in the vector lanes (8 with AVX2, 16 with AVX-512), chosen by the engine's layout
 * pass for tensors that flow between convs (and the ops that handle both layouts).
 */
enum {
    EB_CONV_IN_CL = 1u << 0,  /* the input is NCHWc */
    EB_CONV_OUT_CL = 1u << 1, /* the output (and the residual) are NCHWc */
};

/**
 * CB when conv `d` can read and write NCHWc with `isa`'s kernels (groups 1 or depthwise; the
 * channel counts themselves are the caller's to check), 0 when it cannot. A plan prepared with
 * layout flags for such a conv always honours them.
 */
int eb_cpu_conv2d_f32_cl_block(const struct eb_conv2d_desc *d, enum eb_cpu_isa isa);

/**
 * Prepares conv `d` (batch d->n, any groups/strides/pads/dilations) for `isa` with `n_workers`
 * workers: packs w [OC, IC/g, KH, KW] and copies bias (NULL = zeros) into memory from `arena`
 * (graph lifetime). `layout`: EB_CONV_IN_CL / EB_CONV_OUT_CL bits (0: NCHW in and out; bits
 * only where eb_cpu_conv2d_f32_cl_block says so, with IC resp. OC multiples of CB). Sets
 * *scratch_bytes_out to the run-time scratch it needs (all workers together) and
 * *packed_bytes_out to the bytes it packed. EB_ERR_NOMEM only.
 */
EB_NODISCARD enum eb_status
eb_cpu_conv2d_f32_prepare(const struct eb_conv2d_desc *d, const float *w, const float *bias,
                          enum eb_cpu_isa isa, int n_workers, unsigned layout,
                          struct eb_ir_arena *arena, struct eb_conv2d_f32_plan **plan_out,
                          size_t *scratch_bytes_out, size_t *packed_bytes_out);
/** Which algorithm a float conv plan uses: AUTO (what prepare picks), or one forced (tests and
 * benchmarks); a forced algorithm that does not apply (ISA, groups) falls back to AUTO's. */
enum eb_conv_f32_algo { EB_CONV_F32_AUTO, EB_CONV_F32_GEMM, EB_CONV_F32_BLOCKED };
/** eb_cpu_conv2d_f32_prepare with the algorithm chosen by the caller (layout bits force the
 * channel-blocked algorithm). */
EB_NODISCARD enum eb_status eb_cpu__conv2d_f32_prepare_as(
    const struct eb_conv2d_desc *d, const float *w, const float *bias, enum eb_cpu_isa isa,
    int n_workers, enum eb_conv_f32_algo algo, unsigned layout, struct eb_ir_arena *arena,
    struct eb_conv2d_f32_plan **plan_out, size_t *scratch_bytes_out, size_t *packed_bytes_out);
/**
 * y = epilogue(conv(x) + bias) on the prepared plan; `residual` has y's shape and layout (read
 * when epi->residual). Uses x->scratch (at least the prepared scratch size) and x->pool. No
 * allocation. `y` does not alias `x` or `residual`. A 1x1 conv reading NCHWc may read up to
 * EB_CPU_READ_SLACK bytes past the end of `in` (results from them are discarded).
 */
void eb_cpu_conv2d_f32_run(const struct eb_conv2d_f32_plan *plan, const struct eb_epilogue *epi,
                           const struct eb_cpu_exec *x, const float *in, const float *residual,
                           float *y);

/* ---- matrix products ------------------------------------------------------------------- */

/**
 * y[b] = a[b] · b[b] for row-major a [M, K], b [K, N], y [M, N], `batch` times with element
 * strides between consecutive matrices (0 = the same matrix broadcast). Scratch: see
 * eb_cpu_matmul_f32_scratch. Used by MatMul and Gemm.
 */
void eb_cpu_matmul_f32(const struct eb_cpu_exec *x, int64_t batch, int64_t m, int64_t k, int64_t n,
                       const float *a, int64_t a_stride, const float *b, int64_t b_stride,
                       float *y);
/** Scratch bytes eb_cpu_matmul_f32 needs for these sizes with `n_workers` workers. */
size_t eb_cpu_matmul_f32_scratch(int64_t m, int64_t k, int64_t n, int n_workers);

/**
 * A constant B [K, N] packed once at load for `isa`'s micro-kernel: NR-column panels over all K
 * rows (eb_cpu__pack_b), columns past N zero. eb_cpu_matmul_f32_pack_bytes says how many bytes
 * (0: the ISA has no packed kernel, keep B as it is); eb_cpu_matmul_f32_pack fills `dst`
 * (that many bytes, 64-byte aligned) and returns NR.
 */
size_t eb_cpu_matmul_f32_pack_bytes(enum eb_cpu_isa isa, int64_t k, int64_t n);
int eb_cpu_matmul_f32_pack(enum eb_cpu_isa isa, int64_t k, int64_t n, const float *b, float *dst);
/**
 * y = a · B for row-major a [M, K] and y [M, N], B packed by eb_cpu_matmul_f32_pack with
 * panels of `nr` columns. The same results as eb_cpu_matmul_f32 on B unpacked (same kernels,
 * same order of the sums); scratch as eb_cpu_matmul_f32's. Without scratch, or on an ISA whose
 * NR is not `nr`, a scalar loop over the panels (the reference's order of the sums).
 */
void eb_cpu_matmul_f32_packed(const struct eb_cpu_exec *x, int64_t m, int64_t k, int64_t n,
                              const float *a, const float *pb, int nr, float *y);

#endif
