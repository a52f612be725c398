/*
 * Fast kernels for the non-convolution ops of YOLO graphs: broadcast arithmetic, Sigmoid,
 * Softmax, MaxPool, Resize (nearest, linear), Quantize/DequantizeLinear and the data-movement ops
 * (Concat, Split, Slice, Transpose).
 *
 * Every entry point takes the run's CPU context and picks a kernel for `cpu->isa` (AVX2+FMA;
 * AVX-512 CPUs run the AVX2 kernels; NEON on aarch64); with EB_CPU_ISA_REF it runs the scalar
 * reference kernel of cpu/ref unchanged, which constant folding relies on. Large tensors are
 * split over `cpu->pool` (tasks of at least ~64K elements). No entry point allocates; every
 * buffer is borrowed for the call, and MaxPool's row buffers live on each task's stack (32 KiB).
 *
 * Exactness against the reference: arithmetic (Add, Sub, Mul, Div), MaxPool, Resize, the copies
 * and Quantize/DequantizeLinear are bit-exact (same IEEE operations; NaN propagation and the
 * sign of zero ties included; MaxPool folds each window in the reference's row-major order,
 * see eltwise.c). Sigmoid and Softmax use a polynomial exp, and Softmax scales by the
 * reciprocal of the sum: within 1e-6 relative (plus an absolute 1e-30 for results that the
 * reference flushes to 0 or to a denormal). The x86 Softmax kernels return 0 for every
 * probability below FLT_MIN (never a denormal: a masked attention score would otherwise feed
 * denormals to the next matrix product, tens of times slower on many x86 cores).
 */
#ifndef EB_ENGINE_CPU_ELTWISE_H
#define EB_ENGINE_CPU_ELTWISE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/cpu/cpu.h"
#include "engine/cpu/ref/ref.h"

/** eb_cpu_binary__ref with fast paths for float32 (same shape, scalar, per-channel, rows). */
void eb_cpu_binary(const struct eb_cpu_exec *cpu, enum eb_binop op, enum eb_dtype dt, int rank,
                   const int64_t *a_shape, const void *a, const int64_t *b_shape, const void *b,
                   const int64_t *y_shape, void *y);
/** y = 1 / (1 + exp(-x)). */
void eb_cpu_sigmoid_f32(const struct eb_cpu_exec *cpu, int64_t n, const float *x, float *y);
/**
 * ReduceMean over the trailing `len` elements of each of `rows` rows (x [rows, len], y [rows]):
 * y[r] = Σ x[r*len + i] / len, summed in 16 interleaved partial sums (so within float rounding of
 * eb_cpu_reduce_mean_f32__ref, not bit-equal); rows spread over the workers when long enough.
 */
void eb_cpu_reduce_mean_rows_f32(const struct eb_cpu_exec *cpu, int64_t rows, int64_t len,
                                 const float *x, float *y);
/** eb_cpu_softmax_f32__ref. */
void eb_cpu_softmax_f32(const struct eb_cpu_exec *cpu, int64_t outer, int64_t axis, int64_t inner,
                        const float *x, float *y);
/** eb_cpu_maxpool2d_f32__ref. */
void eb_cpu_maxpool2d_f32(const struct eb_cpu_exec *cpu, const struct eb_pool2d_desc *d,
                          const float *x, float *y);
/** eb_cpu_resize_nearest_f32__ref. */
void eb_cpu_resize_nearest_f32(const struct eb_cpu_exec *cpu, int rank, const int64_t *x_shape,
                               const float *x, const int64_t *y_shape, const float *scales,
                               enum eb_resize_coord coord, enum eb_resize_round rnd, float *y);
/** eb_cpu_resize_linear_f32__ref, planes split over the workers (bit-identical). */
void eb_cpu_resize_linear_f32(const struct eb_cpu_exec *cpu, int64_t planes, int64_t ih, int64_t iw,
                              int64_t oh, int64_t ow, float sh, float sw,
                              enum eb_resize_coord coord, const float *x, float *y);
/**
 * MaxPool on a channel-blocked input (NCHWc, `cb` channels per block; d->c a multiple of cb):
 * what eb_cpu_maxpool2d_f32 computes, in that layout. Stride 1 and dilation 1 only (the layout
 * pass keeps other pools NCHW); any kernel size and pads. Only called when the ISA is not REF.
 */
void eb_cpu_maxpool2d_f32_cl(const struct eb_cpu_exec *cpu, const struct eb_pool2d_desc *d, int cb,
                             const float *x, float *y);
/**
 * Nearest upsampling of a channel-blocked tensor by integer factors: `planes` planes of ih x iw
 * pixels of cb floats each; output pixel (i, j) of a plane is input pixel (i / fh, j / fw).
 */
void eb_cpu_upsample_f32_cl(const struct eb_cpu_exec *cpu, int64_t planes, int64_t ih, int64_t iw,
                            int64_t fh, int64_t fw, int cb, const float *x, float *y);
/** eb_cpu_quantize_f32__ref. */
void eb_cpu_quantize_f32(const struct eb_cpu_exec *cpu, int64_t n, int64_t channels, int64_t inner,
                         const float *x, const float *scale, const void *zp, int out_signed,
                         void *y);
/** eb_cpu_dequantize_f32__ref. */
void eb_cpu_dequantize_f32(const struct eb_cpu_exec *cpu, int64_t n, int64_t channels,
                           int64_t inner, enum eb_dtype dt, const void *x, const float *scale,
                           const void *zp, float *y);
/**
 * Strided 2-D copy: `rows` runs of `row_bytes` bytes, from x (run r at x + r * x_stride) to y
 * (y + r * y_stride). Concat and Split are one call per input/output.
 */
void eb_cpu_copy_rows(const struct eb_cpu_exec *cpu, int64_t rows, size_t row_bytes, const void *x,
                      size_t x_stride, void *y, size_t y_stride);
/** eb_cpu_slice__ref (contiguous runs copied with memcpy). */
void eb_cpu_slice(const struct eb_cpu_exec *cpu, size_t es, int rank, const int64_t *x_shape,
                  const void *x, const int64_t *start, const int64_t *step, const int64_t *y_shape,
                  void *y);
/** eb_cpu_transpose__ref (contiguous runs copied with memcpy). */
void eb_cpu_transpose(const struct eb_cpu_exec *cpu, size_t es, int rank, const int64_t *x_shape,
                      const int64_t *perm, const void *x, void *y);

/* ---- ISA kernels (cpu/x86, cpu/arm), called by eltwise.c only ----------------------------- */

/**
 * y[i] = a[i * a_inc] op b[i * b_inc] for i < n; a_inc, b_inc are 0 (broadcast scalar) or 1.
 * op is ADD, SUB, MUL or DIV.
 */
void eb_cpu_binary_f32__avx2(enum eb_binop op, int64_t n, const float *a, int a_inc, const float *b,
                             int b_inc, float *y);
void eb_cpu_sigmoid_f32__avx2(int64_t n, const float *x, float *y);
/** Softmax of `cnt` adjacent columns (columns col0.. of `inner`) for one outer index. */
void eb_cpu_softmax_f32__avx2(int64_t axis, int64_t inner, int64_t cnt, const float *x, float *y);
/** Softmax of `rows` contiguous rows of `len` (the inner == 1 case), 16 lanes. */
void eb_cpu_softmax_rows_f32__avx512(int64_t rows, int64_t len, const float *x, float *y);
/**
 * MaxPool's fold, the step both passes of the separable kernel are made of: for r < rows and
 * j < n, y[r * y_stride + j] = the reference's running max (m = v > m || isnan(v) ? v : m) over
 * src[0][r * src_stride + j], ..., src[cnt - 1][r * src_stride + j] in that order, starting
 * from y[r * y_stride + j] when `acc` is set and from -inf otherwise. cnt >= 1. `nan` 0 promises
 * that no source holds a NaN (a plain max then gives the same bits). Exactly n elements of each
 * source row and of each y row are read or written.
 */
void eb_cpu_maxpool_fold_f32__avx2(int64_t rows, int64_t n, int cnt, const float *const *src,
                                   int64_t src_stride, int acc, int nan, float *y,
                                   int64_t y_stride);
/** 1 when any of x[0..n) is a NaN, else 0. */
int eb_cpu_any_nan_f32__avx2(int64_t n, const float *x);
/**
 * Nearest upsample of one row by an integer factor, written to `rows` output rows y_stride
 * apart: y[i * y_stride + j * k + r] = x[j] for i < rows, r < k, j < n.
 */
void eb_cpu_upsample_row_f32__avx2(int64_t n, int64_t k, const float *x, int64_t rows, float *y,
                                   int64_t y_stride);
/** Per-tensor quantization of n elements: scale, zero point z (as float), int8 or uint8. */
void eb_cpu_quantize_f32__avx2(int64_t n, const float *x, float scale, float z, int out_signed,
                               void *y);
/** Per-tensor dequantization of n uint8/int8 elements. */
void eb_cpu_dequantize_f32__avx2(int64_t n, const void *x, int x_signed, float scale, int32_t z,
                                 float *y);

void eb_cpu_binary_f32__neon(enum eb_binop op, int64_t n, const float *a, int a_inc, const float *b,
                             int b_inc, float *y);
void eb_cpu_sigmoid_f32__neon(int64_t n, const float *x, float *y);
void eb_cpu_softmax_f32__neon(int64_t axis, int64_t inner, int64_t cnt, const float *x, float *y);
void eb_cpu_maxpool_fold_f32__neon(int64_t rows, int64_t n, int cnt, const float *const *src,
                                   int64_t src_stride, int acc, int nan, float *y,
                                   int64_t y_stride);
int eb_cpu_any_nan_f32__neon(int64_t n, const float *x);
void eb_cpu_upsample_row_f32__neon(int64_t n, int64_t k, const float *x, int64_t rows, float *y,
                                   int64_t y_stride);
void eb_cpu_quantize_f32__neon(int64_t n, const float *x, float scale, float z, int out_signed,
                               void *y);
void eb_cpu_dequantize_f32__neon(int64_t n, const void *x, int x_signed, float scale, int32_t z,
                                 float *y);

#endif
