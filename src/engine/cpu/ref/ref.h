/*
 * Scalar reference kernels: the specification every faster kernel is tested against. Plain C,
 * no allocation, no threads; every buffer is borrowed for the call. Shapes are validated by the
 * op's check/infer_shape before a kernel is reached, so kernels do not fail.
 */
#ifndef EB_ENGINE_CPU_REF_H
#define EB_ENGINE_CPU_REF_H

#include <stddef.h>
#include <stdint.h>

#include "eb/tensor.h"

/** 2-D convolution geometry, NCHW, weights [OC, IC/groups, KH, KW]. */
struct eb_conv2d_desc {
    int64_t n, ic, ih, iw, oc, oh, ow, kh, kw;
    int64_t groups;
    int64_t stride_h, stride_w, pad_t, pad_l, dil_h, dil_w;
};

/** y = conv(x, w) + b (b may be NULL). */
void eb_cpu_conv2d_f32__ref(const struct eb_conv2d_desc *d, const float *x, const float *w,
                            const float *b, float *y);
/**
 * ConvInteger: y = Σ (x - x_zp)(w - w_zp[oc]) in int32; padding contributes 0. `w_zp` has
 * `n_w_zp` entries (1 = per tensor, OC = per output channel). `w_signed` selects int8/uint8.
 */
void eb_cpu_conv2d_u8_i32__ref(const struct eb_conv2d_desc *d, const uint8_t *x, int32_t x_zp,
                               const void *w, int w_signed, const int32_t *w_zp, size_t n_w_zp,
                               int32_t *y);

struct eb_pool2d_desc {
    int64_t n, c, ih, iw, oh, ow, kh, kw;
    int64_t stride_h, stride_w, pad_t, pad_l, dil_h, dil_w;
    int64_t pad_b, pad_r; /* used by average pooling's count_include_pad */
};
void eb_cpu_maxpool2d_f32__ref(const struct eb_pool2d_desc *d, const float *x, float *y);

/**
 * Batched matrix product with broadcast batch dims: a [.., M, K], b [.., K, N], y [.., M, N].
 * `batch` output matrices; a_off/b_off give each output matrix's operand matrix index.
 */
void eb_cpu_matmul_f32__ref(int64_t m, int64_t k, int64_t n, const float *a, const float *b,
                            float *y);

/** Softmax over `axis` elements with stride `inner`, repeated `outer` times. */
void eb_cpu_softmax_f32__ref(int64_t outer, int64_t axis, int64_t inner, const float *x, float *y);

void eb_cpu_sigmoid_f32__ref(int64_t n, const float *x, float *y);

enum eb_binop { EB_BINOP_ADD, EB_BINOP_SUB, EB_BINOP_MUL, EB_BINOP_DIV, EB_BINOP_POW };

/**
 * y = a op b with numpy broadcasting: all three shapes have `rank` dims (missing leading dims
 * padded with 1). dtype F32, I64 or I32. Integer division by zero yields 0. POW is F32 only.
 */
void eb_cpu_binary__ref(enum eb_binop op, enum eb_dtype dt, int rank, const int64_t *a_shape,
                        const void *a, const int64_t *b_shape, const void *b,
                        const int64_t *y_shape, void *y);

/**
 * Strided gather of `rank` dims: y[i0..] = x[start[d] + i_d * step[d]] (element size `es`),
 * output shape `y_shape`, input shape `x_shape`. Used by Slice.
 */
void eb_cpu_slice__ref(size_t es, int rank, const int64_t *x_shape, const void *x,
                       const int64_t *start, const int64_t *step, const int64_t *y_shape, void *y);

/** y = transpose(x, perm) (element size `es`). */
void eb_cpu_transpose__ref(size_t es, int rank, const int64_t *x_shape, const int64_t *perm,
                           const void *x, void *y);

/** Resize: ONNX's coordinate_transformation_mode (tf_crop_and_resize is not implemented). */
enum eb_resize_coord {
    EB_RESIZE_ASYMMETRIC,
    EB_RESIZE_HALF_PIXEL,
    EB_RESIZE_PYTORCH_HALF_PIXEL,
    EB_RESIZE_ALIGN_CORNERS,
    EB_RESIZE_TF_HALF_PIXEL_FOR_NN,
    EB_RESIZE_HALF_PIXEL_SYMMETRIC,
};
enum eb_resize_round {
    EB_RESIZE_ROUND_PREFER_FLOOR,
    EB_RESIZE_ROUND_PREFER_CEIL,
    EB_RESIZE_FLOOR,
    EB_RESIZE_CEIL,
};
/**
 * Input coordinate of output index `o` of one dimension (in → out, with `scale`), in float
 * arithmetic as ONNX Runtime computes it (GetOriginalCoordinateFromResizedCoordinate), unclamped.
 */
float eb_cpu_resize_coord(int64_t o, int64_t in, int64_t out, float scale,
                          enum eb_resize_coord coord);
/** Nearest input index for output index `o` of one dimension, clamped to [0, in). */
int64_t eb_cpu_resize_nearest_index(int64_t o, int64_t in, int64_t out, float scale,
                                    enum eb_resize_coord coord, enum eb_resize_round rnd);
/** Nearest-neighbour resize of every dim (index tables computed on the fly). */
void eb_cpu_resize_nearest_f32__ref(int rank, const int64_t *x_shape, const float *x,
                                    const int64_t *y_shape, const float *scales,
                                    enum eb_resize_coord coord, enum eb_resize_round rnd, float *y);
/**
 * Bilinear resize of `planes` planes of ih x iw floats to oh x ow (scales sh, sw): ONNX Runtime's
 * UpsampleBilinear, including its float arithmetic. Source coordinates are clamped to the input
 * (border pixels repeat); y = dx2*dy2*x11 + dx1*dy2*x21 + dx2*dy1*x12 + dx1*dy1*x22, where d?1 is
 * the distance to the lower neighbour and d?2 to the upper one (both 0.5 when they coincide).
 */
void eb_cpu_resize_linear_f32__ref(int64_t planes, int64_t ih, int64_t iw, int64_t oh, int64_t ow,
                                   float sh, float sw, enum eb_resize_coord coord, const float *x,
                                   float *y);

/** y[i] = saturate(round_half_even(x[i] / scale[c]) + zp[c]); c = (i / inner) % channels. */
void eb_cpu_quantize_f32__ref(int64_t n, int64_t channels, int64_t inner, const float *x,
                              const float *scale, const void *zp, int out_signed, void *y);
/** y[i] = (x[i] - zp[c]) * scale[c]; x is uint8, int8 or int32 (`dt`). */
void eb_cpu_dequantize_f32__ref(int64_t n, int64_t channels, int64_t inner, enum eb_dtype dt,
                                const void *x, const float *scale, const void *zp, float *y);
/** DynamicQuantizeLinear: uint8 output, scale and zero point computed from min/max of x. */
void eb_cpu_dynamic_quantize_f32__ref(int64_t n, const float *x, uint8_t *y, float *scale_out,
                                      uint8_t *zp_out);

/** Element conversion for Cast (F32, F64, U8, I8, I32, I64, BOOL). */
void eb_cpu_cast__ref(int64_t n, enum eb_dtype from, const void *x, enum eb_dtype to, void *y);

/** Elementwise float activations; `a`, `b` are the op's parameters (see eb_cpu_unary_f32__ref). */
enum eb_unop {
    EB_UNOP_RELU,
    EB_UNOP_LEAKY_RELU,   /* a = alpha */
    EB_UNOP_CLIP,         /* a = min, b = max */
    EB_UNOP_HARD_SIGMOID, /* max(0, min(1, a * x + b)) */
    EB_UNOP_HARD_SWISH,
    EB_UNOP_EXP,
    EB_UNOP_SQRT,
    EB_UNOP_TANH,
};
void eb_cpu_unary_f32__ref(enum eb_unop op, int64_t n, const float *x, float a, float b, float *y);

/** Average pooling (NCHW, dilation 1); `count_include_pad` divides by the full kernel size. */
void eb_cpu_avgpool2d_f32__ref(const struct eb_pool2d_desc *d, int count_include_pad,
                               const float *x, float *y);
/** y[p] = mean of x[p * inner .. (p + 1) * inner) for p < outer (GlobalAveragePool). */
void eb_cpu_global_avgpool_f32__ref(int64_t outer, int64_t inner, const float *x, float *y);

/** Inference batch norm over [n, c, inner]: y = (x - mean) / sqrt(var + eps) * scale + bias. */
void eb_cpu_batchnorm_f32__ref(int64_t n, int64_t c, int64_t inner, const float *x,
                               const float *scale, const float *bias, const float *mean,
                               const float *var, float eps, float *y);

/**
 * Gemm: y[m, n] = alpha * op(a) op(b) + beta * c, op = transpose when trans_*; a is [M, K] or
 * [K, M], b is [K, N] or [N, K]; c (NULL = none) broadcast with strides c_sm, c_sn (0 or 1/N).
 */
void eb_cpu_gemm_f32__ref(int64_t m, int64_t k, int64_t n, int trans_a, int trans_b, float alpha,
                          const float *a, const float *b, float beta, const float *c, int64_t c_sm,
                          int64_t c_sn, float *y);

/** Mean of x over the dims d with reduce[d] != 0; y has x's shape with those dims set to 1. */
void eb_cpu_reduce_mean_f32__ref(int rank, const int64_t *x_shape, const int *reduce,
                                 const float *x, float *y);

enum eb_pad_mode { EB_PAD_CONSTANT, EB_PAD_EDGE, EB_PAD_REFLECT };
/**
 * Pad (element size `es`): y has `rank` dims y_shape; x lands at offset `pre[d]` (negative:
 * cropping). Outside x: `value` (es bytes) for CONSTANT, the nearest edge element for EDGE, the
 * mirror image (edge not repeated; pads < dim) for REFLECT.
 */
void eb_cpu_pad__ref(size_t es, int rank, const int64_t *x_shape, const void *x, const int64_t *pre,
                     const int64_t *y_shape, enum eb_pad_mode mode, const void *value, void *y);

/** numpy-broadcast copy of x (rank dims, padded with leading 1s) to y_shape (element size es). */
void eb_cpu_expand__ref(size_t es, int rank, const int64_t *x_shape, const void *x,
                        const int64_t *y_shape, void *y);

/** MatMulInteger geometry: A [m, k] and B [k, n] of uint8 or int8, zero points of their type. */
struct eb_matmul_x8_desc {
    int64_t m, k, n;
    int a_signed, b_signed; /* int8 (1) or uint8 (0) */
    const void *a_zp;       /* NULL = 0; one value, or m values when a_zp_per_row */
    int a_zp_per_row;
    const void *b_zp; /* NULL = 0; one value, or n values when b_zp_per_col */
    int b_zp_per_col;
};
/** y[m, n] = sum_k (a[m, k] - a_zp) * (b[k, n] - b_zp), exact, wrapped to int32. */
void eb_cpu_matmul_x8_i32__ref(const struct eb_matmul_x8_desc *d, const uint8_t *a,
                               const uint8_t *b, int32_t *y);

/* Comparison, logic, selection and the few math ops of decoder graphs (ref/logic.c). Every
 * broadcast kernel takes `rank` dims for every shape (missing leading dims padded with 1s) and
 * the output shape; bool tensors are one byte per element, 0 or 1. */
enum eb_cmpop { EB_CMPOP_EQUAL, EB_CMPOP_LESS_EQUAL, EB_CMPOP_AND };
/** y[i] = a[i] op b[i] (bool) on float32, int64, int32 or bool inputs of type `dt`. */
void eb_cpu_compare__ref(enum eb_cmpop op, enum eb_dtype dt, int rank, const int64_t *a_shape,
                         const void *a, const int64_t *b_shape, const void *b,
                         const int64_t *y_shape, uint8_t *y);
/** y = cond ? x : z (elements of size es), broadcast over all four shapes. */
void eb_cpu_where__ref(size_t es, int rank, const int64_t *c_shape, const uint8_t *cond,
                       const int64_t *x_shape, const void *x, const int64_t *z_shape, const void *z,
                       const int64_t *y_shape, void *y);
enum eb_mathop { EB_MATHOP_NEG, EB_MATHOP_COS, EB_MATHOP_SIN, EB_MATHOP_ISNAN };
/**
 * Unary math of n elements: NEG on float32/int64/int32 (integers wrap), COS and SIN on float32,
 * ISNAN float32 -> bool.
 */
void eb_cpu_math__ref(enum eb_mathop op, enum eb_dtype dt, int64_t n, const void *x, void *y);
/** y[i] = start + i * delta for i < n, on float32, int64 or int32 (`start`, `delta` of that type). */
void eb_cpu_range__ref(enum eb_dtype dt, int64_t n, const void *start, const void *delta, void *y);
/** Every one of n elements of size es is a copy of `value`. */
void eb_cpu_fill__ref(size_t es, int64_t n, const void *value, void *y);

#endif
