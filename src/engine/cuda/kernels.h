/*
 * The CUDA kernels of the native engine's CUDA device, behind plain C launchers (one .cu file
 * per op family: k_eltwise.cu, k_layout.cu, k_reduce.cu, k_quant.cu, k_pre.cu, k_qconv.cu,
 * k_gather.cu). Every launcher enqueues
 * on `s` and returns the launch's cudaError_t (cudaSuccess = 0); none allocates or
 * synchronises. Float tensors are in the engine's precision (`dt`): float or half; arithmetic
 * is in float. Element counts and every index fit in 31 bits (the engine refuses larger
 * tensors on the GPU). Each kernel's specification is the CPU reference kernel of the same
 * op (src/engine/cpu/ref), which tests/cuda checks it against.
 */
#ifndef EB_ENGINE_CUDA_KERNELS_H
#define EB_ENGINE_CUDA_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Precision of float tensors on the device. */
enum eb_cuk_dt { EB_CUK_F32 = 0, EB_CUK_F16 = 1 };

#define EB_CUK_MAX_RANK 8
/** The largest element count (and index) a kernel takes. */
#define EB_CUK_MAX_ELEMS 0x7FFFFFFF

/** Element size of `dt` in bytes. */
static inline int eb_cuk_dt_size(enum eb_cuk_dt dt)
{
    return dt == EB_CUK_F16 ? 2 : 4;
}

/**
 * The fused epilogue of a convolution, in place on y [batch][channels][plane]:
 * y = fq(act(y + bias[c]) + residual), with eb_epilogue's meaning of act (enum eb_act), alpha,
 * beta and the fake quantisation (fq_on: scale, zero point, qmin, qmax). bias (float; NULL = 0)
 * and residual (dt; NULL = none).
 */
struct eb_cuk_epilogue {
    int act;
    float alpha, beta;
    int fq_on;
    float fq_scale;
    int32_t fq_zp, fq_qmin, fq_qmax;
};
cudaError_t eb_cuk_epilogue(cudaStream_t s, enum eb_cuk_dt dt, int64_t batch, int64_t channels,
                            int64_t plane, const float *bias, const void *residual,
                            const struct eb_cuk_epilogue *e, void *y);

/** Unary ops: enum eb_unop codes, plus EB_CUK_UNARY_SIGMOID. y may equal x. */
#define EB_CUK_UNARY_SIGMOID 100
cudaError_t eb_cuk_unary(cudaStream_t s, enum eb_cuk_dt dt, int op, int64_t n, float a, float b,
                         const void *x, void *y);

/**
 * y = a op b (enum eb_binop) with broadcasting: `rank` output dims y_shape; a_stride/b_stride
 * give each operand's element stride per output dim (0 where it broadcasts).
 */
struct eb_cuk_nd {
    int rank;
    int32_t shape[EB_CUK_MAX_RANK];
    int32_t sa[EB_CUK_MAX_RANK], sb[EB_CUK_MAX_RANK];
};
cudaError_t eb_cuk_binary(cudaStream_t s, enum eb_cuk_dt dt, int op, const struct eb_cuk_nd *nd,
                          const void *a, const void *b, void *y);
/**
 * eb_cuk_binary on integers (int64 when `int64`, else int32): Add, Sub, Mul, and Div truncated
 * toward zero with 0 for a zero divisor (the CPU reference's); Pow refused.
 */
cudaError_t eb_cuk_binary_int(cudaStream_t s, int int64, int op, const struct eb_cuk_nd *nd,
                              const void *a, const void *b, void *y);

/** Float ↔ half conversion (and copies when from == to). */
cudaError_t eb_cuk_cast(cudaStream_t s, enum eb_cuk_dt from, enum eb_cuk_dt to, int64_t n,
                        const void *x, void *y);

/**
 * Strided copy of `rank` dims `shape` of elements of `es` bytes (1, 2, 4 or 8):
 * y[y_off + Σ i_d ys[d]] = x[x_off + Σ i_d xs[d]] (offsets and strides in elements; an x stride
 * may be 0, a y stride not). Concat, Split, Slice, Transpose, layout changes, channels-last
 * upsampling and copies are all this.
 */
struct eb_cuk_copy {
    int rank;
    int32_t shape[EB_CUK_MAX_RANK];
    int32_t xs[EB_CUK_MAX_RANK], ys[EB_CUK_MAX_RANK];
    int64_t x_off, y_off;
};
cudaError_t eb_cuk_copy_nd(cudaStream_t s, int es, const struct eb_cuk_copy *c, const void *x,
                           void *y);

/** At most this many copies go into one eb_cuk_copy_parts launch. */
#define EB_CUK_MAX_PARTS 8
/**
 * n_parts copies of eb_cuk_copy_nd's kind (c[j] from x[j] to y[j]) in one launch: a Concat's or
 * a Split's parts. Elements are widened only as far as every part allows.
 */
cudaError_t eb_cuk_copy_parts(cudaStream_t s, int es, int n_parts, const struct eb_cuk_copy *c,
                              const void *const *x, void *const *y);

/** Max pooling with eb_pool2d_desc's geometry (padding never wins); NCHW, or NHWC (x and y)
 * when nhwc. */
struct eb_cuk_pool {
    int32_t n, c, ih, iw, oh, ow, kh, kw, sh, sw, pt, pl, dh, dw;
    int32_t nhwc;
};
cudaError_t eb_cuk_maxpool(cudaStream_t s, enum eb_cuk_dt dt, const struct eb_cuk_pool *p,
                           const void *x, void *y);

/** Nearest upsampling of planes [nc][h][w] by integer factors fh, fw. */
cudaError_t eb_cuk_upsample(cudaStream_t s, enum eb_cuk_dt dt, int64_t nc, int64_t h, int64_t w,
                            int64_t fh, int64_t fw, const void *x, void *y);

/**
 * The letterbox of an 8-bit packed RGB frame (src: src_h rows of src_stride bytes, 3 bytes a
 * pixel) into a dst_w x dst_h model input: bilinear (OpenCV INTER_LINEAR, half-pixel centres)
 * into the new_w x new_h rectangle at (pad_left, pad_top), 114 around it, scaled to [0,1];
 * `channels` 3 (RGB) or 1 (the first byte of each pixel); y planar NCHW, or NHWC when nhwc.
 * The specification is eb_letterbox_rgb_to_nchw_f32__ref (src/yolo/letterbox.c).
 */
struct eb_cuk_letterbox {
    int32_t src_w, src_h, src_stride, channels;
    int32_t dst_w, dst_h, new_w, new_h, pad_left, pad_top;
    int32_t nhwc;
};
cudaError_t eb_cuk_letterbox(cudaStream_t s, enum eb_cuk_dt dt, const struct eb_cuk_letterbox *p,
                             const uint8_t *src, void *y);

/**
 * The reduction of a [1, 4+nc, n] detection head x (float): for each anchor a, the first class
 * with the largest score (strict >, as eb_yolo_decode) and, when that score > conf, one row
 * {a, cls, score, x[0..3][a]} appended at rows[atomicAdd(count, 1)] (struct eb_anchor_row;
 * order not fixed). *count must be 0 before (the launcher's caller memsets it).
 */
cudaError_t eb_cuk_head_rows(cudaStream_t s, int32_t nc, int32_t n, float conf, const float *x,
                             int32_t *count, void *rows);

/** Softmax over `len` elements of stride `inner`, for outer x inner independent rows. */
cudaError_t eb_cuk_softmax(cudaStream_t s, enum eb_cuk_dt dt, int64_t outer, int64_t len,
                           int64_t inner, const void *x, void *y);
/** 1 when eb_cuk_attn_rows takes head dim d in dt: 16-byte rows' parts, a power of two of them
 *  up to a warp (fp16: d = 8, 16, .., 256; fp32: 4 .. 128). */
int eb_cuk_attn_takes(enum eb_cuk_dt dt, int64_t d);
/** Dynamic shared memory eb_cuk_attn_rows takes for head dim d and len keys. */
size_t eb_cuk_attn_smem_bytes(enum eb_cuk_dt dt, int64_t d, int64_t len);
/**
 * Attention of `rows` query rows against a KV cache of `len` positions (decode): per row and
 * query head h (heads of them, `group` per kv head), softmax(q . K^T * scale + mask) V with the
 * kv head h / group. q and y [rows, heads, d]; k and v [heads / group, len, d]; mask NULL or
 * [rows, len] (added to the scaled scores); eb_cuk_attn_takes(dt, d); rows 16-byte aligned;
 * float accumulation.
 */
cudaError_t eb_cuk_attn_rows(cudaStream_t s, enum eb_cuk_dt dt, int64_t rows, int64_t heads,
                             int64_t group, int64_t d, int64_t len, float scale, const void *q,
                             const void *k, const void *v, const void *mask, void *y);
/**
 * Rotary position embedding, the halves rotated: x and y [rows, heads, d], c and sn [rows, d]
 * (the sine with its sign: -sin on the first half); y[i] = x[i] c[i] + x[(i + d/2) % d] sn[i]
 * (as Concat(second half, first half) * sn + x * c). d even; y may be x.
 */
cudaError_t eb_cuk_rope(cudaStream_t s, enum eb_cuk_dt dt, int64_t rows, int64_t heads, int64_t d,
                        const void *x, const void *c, const void *sn, void *y);
/** SwiGLU over n contiguous elements: y = (g sigmoid(g)) u, each product and the sigmoid rounded
 * to dt as Sigmoid, Mul, Mul would store them. */
cudaError_t eb_cuk_swiglu(cudaStream_t s, enum eb_cuk_dt dt, int64_t n, const void *g,
                          const void *u, void *y);
#define EB_CUK_GEMV_MAX_PARTS 4    /* weights one eb_cuk_gemv launch multiplies the row by */
#define EB_CUK_GEMV_MAX_K     8192 /* the row's length, at most (its normalised copy: 32 KiB) */
/* The workspace of an eb_cuk_gemv launch that splits its rows over blocks: the blocks' sums
 * (floats), then a counter per column tile (unsigned, zero before the first launch; each
 * launch leaves them zero) */
#define EB_CUK_GEMV_WS_FLOATS (1 << 16)
#define EB_CUK_GEMV_WS_COUNTS 4096
#define EB_CUK_GEMV_WS_BYTES  ((size_t)(EB_CUK_GEMV_WS_FLOATS + EB_CUK_GEMV_WS_COUNTS) * 4)
/** 1 when eb_cuk_gemv takes a k x n weight w in dt: n a whole number of 16-byte vectors, w
 * 16-byte aligned (NULL: its address left out), k at most EB_CUK_GEMV_MAX_K. */
int eb_cuk_gemv_takes(enum eb_cuk_dt dt, int64_t k, int64_t n, const void *w);
/** One weight of an eb_cuk_gemv launch: y[j] = sum_i a[i] w[i][j] (+ c[j] when c is not NULL),
 * w row-major k x n. */
struct eb_cuk_gemv_part {
    const void *w, *c;
    void *y;
    int64_t n;
};
/** Where a one-row product's row comes from */
enum eb_cuk_gemv_from {
    EB_CUK_ROW,         /* the row as it is */
    EB_CUK_ROW_RMSNORM, /* x / sqrt(mean(x * x) + eps) * w: eb_cuk_rms_norm's bits */
    EB_CUK_ROW_SWIGLU   /* x * sigmoid(x) * w: eb_cuk_swiglu's bits */
};
/** The row an eb_cuk_gemv launch makes itself from x and w (its `from`), rounded to the
 * precision as the kernel it replaces stores it. */
struct eb_cuk_gemv_row {
    enum eb_cuk_gemv_from from;
    const void *x, *w;
    float eps;
};
/**
 * One row by constant weights (a decode step's projections): each part's product, float
 * accumulation rounded once, all parts in one launch; the row is `a`, or with row (not NULL and
 * not EB_CUK_ROW) what row makes (a unused); sms: the device's multiprocessors (how wide to
 * spread the work). With ws (EB_CUK_GEMV_WS_BYTES on the device, used by one stream's launches
 * only) few columns have their rows split over several blocks; the result does not depend on
 * timing either way. The weights' first rows are read before the kernel waits for the one
 * before it (programmatic dependent launch): they must not be written by the kernels before it.
 */
cudaError_t eb_cuk_gemv(cudaStream_t s, enum eb_cuk_dt dt, int64_t k, int sms,
                        const struct eb_cuk_gemv_row *row, const void *a, int n_parts,
                        const struct eb_cuk_gemv_part *part, void *ws);
/** eb_cuk_gemv with the launch's shape given (bench/bench_gemv.c compares them): tx threads
 * share a row (2, 4, 8, 16 or 32), the rows split over `splits` blocks (more than 1 needs ws);
 * cudaErrorInvalidValue for a shape these parts cannot take. */
cudaError_t eb_cuk_gemv_shaped(cudaStream_t s, enum eb_cuk_dt dt, int64_t k, int tx, int splits,
                               const struct eb_cuk_gemv_row *row, const void *a, int n_parts,
                               const struct eb_cuk_gemv_part *part, void *ws);
/** The shape eb_cuk_gemv picks for these parts on `sms` multiprocessors (ws: with a
 * workspace). */
void eb_cuk_gemv_shape(enum eb_cuk_dt dt, int64_t k, int sms, int n_parts,
                       const struct eb_cuk_gemv_part *part, int ws, int *tx, int *splits);
/** RMSNorm over rows of `len` contiguous elements: y = x / sqrt(mean(x * x) + eps) * w (w: len
 * elements; float accumulation; y may be x). */
cudaError_t eb_cuk_rms_norm(cudaStream_t s, enum eb_cuk_dt dt, int64_t rows, int64_t len, float eps,
                            const void *x, const void *w, void *y);
/** The mean over `len` elements of stride `inner`, for outer x inner rows (ReduceMean). */
cudaError_t eb_cuk_reduce_mean(cudaStream_t s, enum eb_cuk_dt dt, int64_t outer, int64_t len,
                               int64_t inner, const void *x, void *y);
/**
 * Gather: y[o][j][i] = x[o][idx[j]][i] over outer x n_idx x inner elements of `es` bytes (1, 2,
 * 4 or 8), x having `len` rows along the gathered axis; idx int64 (idx64) or int32, below zero
 * from the end; an index out of range gives zero bytes (the engine checks them first).
 */
cudaError_t eb_cuk_gather(cudaStream_t s, int es, int idx64, int64_t outer, int64_t len,
                          int64_t inner, int64_t n_idx, const void *idx, const void *x, void *y);
/** Integers (int64 when int64, else int32) to floats in `dt` (Cast). */
cudaError_t eb_cuk_int_to_float(cudaStream_t s, enum eb_cuk_dt dt, int int64, int64_t n,
                                const void *x, void *y);
/**
 * edgebench.DFL (ops/dfl.c): y[o][a] = Σ_i w[i] softmax_i(x[o][i][a]) over `len` bins of stride
 * `inner`, for outer x inner rows; w (float) has len values.
 */
cudaError_t eb_cuk_dfl(cudaStream_t s, enum eb_cuk_dt dt, int64_t outer, int64_t len, int64_t inner,
                       const void *x, const float *w, void *y);

/**
 * QuantizeLinear: y = saturate(round_half_even(x / scale[c]) + zp[c]) as int8 (y_signed) or
 * uint8, c = (i / inner) % channels; zp (of y's type) may be NULL.
 */
cudaError_t eb_cuk_quantize(cudaStream_t s, enum eb_cuk_dt dt, int64_t n, int64_t channels,
                            int64_t inner, const void *x, const float *scale, const void *zp,
                            int y_signed, void *y);
/** DequantizeLinear: y = (x - zp[c]) * scale[c]; x is uint8 (0), int8 (1) or int32 (2). */
cudaError_t eb_cuk_dequantize(cudaStream_t s, enum eb_cuk_dt dt, int64_t n, int64_t channels,
                              int64_t inner, int x_kind, const void *x, const float *scale,
                              const void *zp, void *y);

/**
 * The integer convolution of edgebench.QLinearConv (ops/qconv.c), NHWC uint8 activations:
 *     acc = Σ (x - x_zp)(w - w_zp[k])    exact int32 over the taps inside the image
 * then, per output channel k:
 *     quant:   y = sat(round_half_even(fma(acc, mult[k], bias[k])) + y_zp), then lut[y] when
 *              lut is not NULL (bytes, int8 when y_signed)
 *     else:    v = act(acc * mult[k] + bias[k]) (act: enum eb_act, alpha), written as float or
 *              half (y_kind), or, with fq_on, quantised on the spot for the QuantizeLinear that
 *              read it: y = sat(round_half_even(v / fq_scale) + fq_zp) (bytes, y_signed)
 * x element (n, c, h, w) is at x[n x_n + (h iw + w) x_pix + c x_c]: channels-last (x_c 1, x_pix
 * >= ic, x_n = ih iw x_pix) or NCHW (x_c = ih iw, x_pix 1; the tensor cores' 16-byte loads take
 * channels-last rows of ic a multiple of 16, any other form is read byte by byte). y element
 * (n, k, p) (p = h ow + w) is at y[n y_n + k y_c + p y_p] (NHWC or NCHW, a slice of wider rows).
 * Dense convs (groups 1, int8 weights without zero points: `dense`) run on the tensor cores
 * (mma int8, uint8 x int8 → int32) from w packed as [oc][kh][kw][cp] (eb_cuk_qconv_dims: cp is
 * ic rounded up to 16, zeros after ic; each row zero-padded to kp bytes) with wsum[k] = Σ w;
 * depthwise convs (groups = ic = oc: eb_cuk_qconv_dw) from w packed as int16 w - w_zp, tap-major
 * ([kh][kw][oc rounded up to 4], eb_cuk_qconv_pack_dw); any other conv (groups, uint8 weights,
 * weight zero points) takes a direct kernel from w as ONNX lays it out ([oc][ic/groups][kh][kw],
 * w_signed) with w_zp (NULL: zeros).
 */
enum eb_cuk_qy { EB_CUK_QY_F32 = 0, EB_CUK_QY_F16, EB_CUK_QY_BYTE };
/** n / d for 0 <= n < 2^31 without a division: (umulhi(n, mul) + n) >> shr (Granlund and
 * Montgomery's multiplier for a divisor d >= 1; eb_cuk_fdiv_of). */
struct eb_cuk_fdiv {
    uint32_t mul, shr;
};
static inline struct eb_cuk_fdiv eb_cuk_fdiv_of(uint32_t d)
{
    uint32_t l = 0;
    while (l < 32 && ((uint64_t)1 << l) < d)
        l++;
    const uint64_t m = (((uint64_t)1 << 32) * (((uint64_t)1 << l) - d)) / d + 1;
    return (struct eb_cuk_fdiv){.mul = (uint32_t)m, .shr = l};
}
/** What the kernels compute with f = eb_cuk_fdiv_of(d): n / d. */
static inline uint32_t eb_cuk_fdiv_host(struct eb_cuk_fdiv f, uint32_t n)
{
    const uint32_t hi = (uint32_t)(((uint64_t)n * f.mul) >> 32);
    return (hi + n) >> f.shr;
}
/* A fused output of a float-output conv (n_dst > 0, cuda_qconv.c): the conv's channels [c0, c1)
 * (after act and the residual: v, rounded to y_kind as the float tensor stores it), channel k
 * at y[n y_n + (k - c0) y_c + p y_p], written as
 *     FLOAT: v (y_kind)
 *     BYTE:  q = sat(round_half_even(v q_inv) + q_zp), int8 when q_signed, NaN → q_zp (the
 *            QuantizeLinear that read v: times 1 / scale, so a q may move by one step where the
 *            quotient sits within an ulp of a rounding tie)
 *     DQ:    f = (q - dq_zp) dq_scale (y_kind) of that q (the DequantizeLinear that read it)
 *     REQ:   sat(round_half_even(f o_inv) + o_zp) of that f, int8 when o_signed (a
 *            QuantizeLinear after a Concat of f with other parts: its bytes of this part) */
enum eb_cuk_qmode { EB_CUK_QD_FLOAT = 0, EB_CUK_QD_BYTE, EB_CUK_QD_DQ, EB_CUK_QD_REQ };
#define EB_CUK_QDST_MAX 6
struct eb_cuk_qdst {
    void *y;
    int32_t y_n, y_c, y_p, c0, c1, mode;
    float q_inv;
    int32_t q_zp, q_signed;
    float dq_scale;
    int32_t dq_zp;
    float o_inv;
    int32_t o_zp, o_signed;
};
struct eb_cuk_qconv {
    int32_t n, ic, ih, iw, oc, oh, ow, kh, kw, sh, sw, pt, pl, dh, dw, groups;
    int32_t x_n, x_c, x_pix, x_zp;
    int32_t dense, cp, kp, w_signed;
    int32_t bn;        /* dense: output channels a block, 16, 32 or 64 (eb_cuk_qconv_plan) */
    int32_t splits;    /* dense: blocks per output tile along k (eb_cuk_qconv_plan) */
    int32_t *ws, *cnt; /* splits > 1: the tiles' partial sums and counters, zero between runs */
    const void *w;
    const int32_t *wsum, *w_zp;
    const float *mult, *bias;
    int32_t y_n, y_c, y_p;
    int32_t y_kind; /* enum eb_cuk_qy */
    int32_t quant, y_zp, y_signed;
    const uint8_t *lut;
    int32_t act;
    float alpha;
    int32_t fq_on, fq_zp;
    float fq_scale;
    /* n_dst > 0: the float output goes to dst[] instead of y (not with quant or fq_on), with
     * res (not NULL) at res[n r_n + k r_c + p r_p] (y_kind) added to act's value first: v =
     * round(round(act(...)) + res), each rounding to y_kind (the Add that read the conv) */
    int32_t n_dst;
    struct eb_cuk_qdst dst[EB_CUK_QDST_MAX];
    const void *res;
    int32_t r_n, r_c, r_p;
    /* set by eb_cuk_qconv itself: divisions by oh ow, ow, cp / 16, kw and the depthwise
     * kernel's groups of four channels */
    struct eb_cuk_fdiv f_plane, f_ow, f_cpc, f_kw, f_cg;
};
cudaError_t eb_cuk_qconv(cudaStream_t s, const struct eb_cuk_qconv *p, const uint8_t *x, void *y);
/** The dense filter's packing: cp = ic rounded up to 16 (ic itself below 16: the taps packed
 * tight), kp = kh kw cp rounded up to 64. */
static inline void eb_cuk_qconv_dims(int32_t ic, int32_t kh, int32_t kw, int32_t *cp, int32_t *kp)
{
    *cp = ic < 16 ? ic : (ic + 15) / 16 * 16;
    *kp = (kh * kw * *cp + 63) / 64 * 64;
}
/** Whether a dense conv runs on the CUDA cores' small kernel instead of the tensor cores: the
 * image's conv (3 channels, a 3 x 3 window, at most 64 output channels), whose 27 bytes of k a
 * thread gathers once and multiplies by four-byte dot products. */
#define EB_CUK_QCONV_SMALL_OC 64
static inline int eb_cuk_qconv_small(int32_t ic, int32_t kh, int32_t kw, int32_t oc)
{
    return ic == 3 && kh == 3 && kw == 3 && oc <= EB_CUK_QCONV_SMALL_OC;
}
/** Whether a conv is depthwise (a channel a group: groups = ic = oc), the form the depthwise
 * kernel runs from eb_cuk_qconv_pack_dw's filter (not dense: dense wants groups 1). */
static inline int eb_cuk_qconv_dw(int32_t groups, int32_t ic, int32_t oc)
{
    return groups > 1 && groups == ic && groups == oc;
}
/** A depthwise filter (host memory; [oc][1][kh][kw] as ONNX lays it out, int8 when w_signed,
 * else uint8, zero points w_zp, NULL: zeros) packed as kh kw rows of oc4 = oc rounded up to 4
 * int16 values w - w_zp (zeros past oc): packed must hold kh kw oc4 values. */
void eb_cuk_qconv_pack_dw(int32_t oc, int32_t kh, int32_t kw, const void *w, int32_t w_signed,
                          const int32_t *w_zp, int16_t *packed);
/** A dense conv's launch on `sm_count` SMs: sets p->bn (the block's channels: the widest of 64,
 * 32, 16 that wastes little of oc, narrower while the tiles are fewer than the SMs) and
 * p->splits (blocks sharing each output tile's k; 1: none). Then give p->ws
 * eb_cuk_qconv_ws_bytes zeroed bytes (the tiles' int32 sums, then their counters from p->ws +
 * *cnt_at, when cnt_at is not NULL: p->cnt) that the kernel leaves zero after each run. */
void eb_cuk_qconv_plan(struct eb_cuk_qconv *p, int32_t sm_count);
size_t eb_cuk_qconv_ws_bytes(const struct eb_cuk_qconv *p, size_t *cnt_at);
/** Packs an int8 filter [oc][ic][kh][kw] (host memory) into packed (oc kp bytes) and wsum (oc). */
void eb_cuk_qconv_pack(int32_t oc, int32_t ic, int32_t kh, int32_t kw, const int8_t *w,
                       int8_t *packed, int32_t *wsum);

#ifdef __cplusplus
}
#endif

#endif
