/*
 * Fast integer kernels of the native engine: ConvInteger (uint8 activations × int8/uint8
 * weights → exact int32) and DynamicQuantizeLinear (float32 → uint8, scale, zero point).
 *
 * ConvInteger runs as an integer GEMM per group: weights (w - w_zp) are widened to int16 and
 * packed in pairs of the reduction axis at load time; activations are gathered block by block
 * (implicit im2col: a block of output pixels at a time, never the whole im2col matrix) into
 * per-worker scratch as raw uint8 widened to int16, padded taps holding x_zp. The x86 micro-kernel
 * multiplies pairs with vpmaddwd (int16×int16, int32 pair sums: exact, no saturation) and
 * subtracts x_zp·Σ(w - w_zp) per output channel, which cancels the padded taps and the zero
 * point: the result equals eb_cpu_conv2d_u8_i32__ref bit for bit (int32, wrap-around arithmetic
 * both ways).
 *
 * The AVX-512 ISA computes 8×32 tiles (two weight panels × two activation panels) and gathers
 * the activations straight into the packed format (no separate im2col pass for stride-1 "same"
 * convolutions and 1x1). Without AVX512_VNNI it keeps the int16 pairs (vpmaddwd + vpaddd);
 * with VNNI it packs four uint8 activations and four int8 weights per int32 lane and uses
 * vpdpbusd (see igemm_u8s8__avx512.c for the exact arithmetic), or, when asked, the int16
 * pairs with vpdpwssd. With AVX512_VBMI the requantisation's lookup table is a vpermi2b pass
 * per block instead of gathers. eb_cpu_conv2d_u8_kernel_name says which kernel a plan uses;
 * every variant equals the reference bit for bit.
 *
 * On aarch64 (NEON) the GEMM runs the AVX2 scheme with a NEON 4×16 micro-kernel (vld2q_s16
 * splits the pairs, vmlal_laneq_s16 multiplies them: exact, base ARMv8-A, no dot product);
 * depthwise and tiny groups stay on the reference per group ("groupref").
 */
#ifndef EB_ENGINE_CPU_CONV_U8_H
#define EB_ENGINE_CPU_CONV_U8_H

#include <stddef.h>
#include <stdint.h>

#include "engine/cpu/cpu.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ir/graph.h"

/**
 * The outputs o in [*lo, *hi) of a segment of `seg` outputs along one output row whose input
 * column iw0 + o * stride_w lies inside the row (0 <= column < iw); the rest are padded taps.
 */
static inline void eb_cpu__im2col_span(const struct eb_conv2d_desc *d, int64_t iw0, int64_t seg,
                                       int64_t *lo, int64_t *hi)
{
    int64_t l, h;
    if (d->stride_w == 1) {
        l = -iw0 > 0 ? -iw0 : 0;
        h = d->iw - iw0;
    } else {
        l = iw0 < 0 ? (-iw0 + d->stride_w - 1) / d->stride_w : 0;
        h = d->iw - 1 - iw0 < 0 ? 0 : (d->iw - 1 - iw0) / d->stride_w + 1;
    }
    l = l < seg ? l : seg;
    *lo = l;
    *hi = h < l ? l : (h > seg ? seg : h);
}

/**
 * The end of an ISA's min/max scan: folds its two pairs of `lanes`-wide accumulators (stored as
 * lo[2 * lanes], hi[2 * lanes]) and the `n` tail elements at x into *mn, *mx with the
 * reference's strict comparisons (NaN never taken, -0 never replaces +0).
 */
static inline void eb_cpu__minmax_finish(int lanes, const float *lo, const float *hi,
                                         const float *x, int64_t n, float *mn, float *mx)
{
    float l = *mn, h = *mx;
    for (int j = 0; j < lanes; j++) {
        l = lo[j] < l ? lo[j] : l;
        l = lo[lanes + j] < l ? lo[lanes + j] : l;
        h = hi[j] > h ? hi[j] : h;
        h = hi[lanes + j] > h ? hi[lanes + j] : h;
    }
    for (int64_t i = 0; i < n; i++) {
        l = x[i] < l ? x[i] : l;
        h = x[i] > h ? x[i] : h;
    }
    *mn = l;
    *mx = h;
}

/** A ConvInteger prepared for one ISA: packed weights and blocking (opaque, graph arena). */
struct eb_conv2d_u8_plan;

/**
 * Prepares ConvInteger `d` for `isa` with `n_workers` workers: packs w [OC, IC/g, KH, KW]
 * (int8 when `w_signed`, else uint8) minus its zero point(s) `w_zp` (`n_w_zp` = 1 or OC entries)
 * into memory from `arena` (graph lifetime). *plan_out is set to NULL when no fast kernel exists
 * for `isa` (the caller runs the reference). Sets *scratch_bytes_out (all workers together) and
 * *packed_bytes_out. EB_ERR_NOMEM only.
 */
EB_NODISCARD enum eb_status
eb_cpu_conv2d_u8_prepare(const struct eb_conv2d_desc *d, const void *w, int w_signed,
                         const int32_t *w_zp, size_t n_w_zp, enum eb_cpu_isa isa, int n_workers,
                         struct eb_ir_arena *arena, struct eb_conv2d_u8_plan **plan_out,
                         size_t *scratch_bytes_out, size_t *packed_bytes_out);

/** Options of eb_cpu_conv2d_u8_prepare_opt; all zero = what eb_cpu_conv2d_u8_prepare does. */
struct eb_conv2d_u8_options {
    int no_vnni;      /* 1: the AVX-512 kernels use vpmaddwd + vpaddd even with AVX512_VNNI */
    int no_u8x4;      /* 1: with VNNI, int16 pairs and vpdpwssd instead of vpdpbusd */
    int no_vbmi;      /* 1: the requantisation's lookup table by gathers even with VBMI */
    int block_pixels; /* > 0: output pixels per block (AVX-512: rounded up to 32); 0 = auto */
};

/**
 * eb_cpu_conv2d_u8_prepare with `opt` (NULL = defaults): the kernel tests force each AVX-512
 * variant through it, and benchmarks try block sizes.
 */
EB_NODISCARD enum eb_status
eb_cpu_conv2d_u8_prepare_opt(const struct eb_conv2d_desc *d, const void *w, int w_signed,
                             const int32_t *w_zp, size_t n_w_zp, enum eb_cpu_isa isa, int n_workers,
                             const struct eb_conv2d_u8_options *opt, struct eb_ir_arena *arena,
                             struct eb_conv2d_u8_plan **plan_out, size_t *scratch_bytes_out,
                             size_t *packed_bytes_out);

/**
 * The kernel `plan` runs: "avx2", "avx512" (int16 pairs, vpmaddwd), "avx512vnni" (int16
 * pairs, vpdpwssd), "avx512vnni_u8" (uint8 × int8 quads, vpdpbusd), "neon" (int16 pairs,
 * vmlal_laneq_s16), "dw_avx2" (depthwise, stride 1), "groupref" (the reference per group).
 * Static string.
 */
const char *eb_cpu_conv2d_u8_kernel_name(const struct eb_conv2d_u8_plan *plan);

/**
 * y [N, OC, OH, OW] = ConvInteger(x [N, IC, IH, IW], w) with activation zero point `x_zp`,
 * threaded over `ex->pool`; uses ex->scratch (at least what prepare asked for). Equal to
 * eb_cpu_conv2d_u8_i32__ref. Does not allocate.
 */
void eb_cpu_conv2d_u8_run(const struct eb_conv2d_u8_plan *plan, const struct eb_cpu_exec *ex,
                          const uint8_t *x, int32_t x_zp, int32_t *y);

/** Float requantisation of the int32 result, per output channel (edgebench.QLinearConv). */
struct eb_conv2d_u8_requant {
    const float *mult, *bias; /* [OC]: q = sat(round_half_even(fma(acc, mult, bias)) + y_zp) */
    float y_zp;
    int y_signed;       /* int8 range (else uint8) */
    const uint8_t *lut; /* output byte = lut[q byte]; NULL = q; 256 + 3 readable bytes */
};

/** 1 when eb_cpu_conv2d_u8_run_requant needs no int32 buffer for `plan` (the GEMM path). */
int eb_cpu_conv2d_u8_fuses_requant(const struct eb_conv2d_u8_plan *plan);
/**
 * y [N, OC, OH, OW] bytes = requant(ConvInteger(x)) with the requantisation applied to each
 * output tile while it is in registers/cache. Only when eb_cpu_conv2d_u8_fuses_requant(plan).
 */
void eb_cpu_conv2d_u8_run_requant(const struct eb_conv2d_u8_plan *plan,
                                  const struct eb_cpu_exec *ex, const uint8_t *x, int32_t x_zp,
                                  const struct eb_conv2d_u8_requant *rq, uint8_t *y);

/**
 * DynamicQuantizeLinear of x[0..n): bit-exact with eb_cpu_dynamic_quantize_f32__ref (same
 * min/max rule, true division by the scale, round half to even, NaN → zero point), vectorised
 * for ex->isa and threaded over ex->pool. No scratch, does not allocate.
 */
void eb_cpu_dynamic_quantize_f32(const struct eb_cpu_exec *ex, int64_t n, const float *x,
                                 uint8_t *y, float *scale_out, uint8_t *zp_out);

/* ---- ISA kernels (cpu/x86, cpu/arm); internal to conv_u8.c and the kernel tests -------- */

/** Rows of the integer micro-kernel (output channels) and columns (output pixels). */
#define EB_IGEMM_MR 4
#define EB_IGEMM_NR 16

/** Scratch elements (int16) eb_cpu_dwconv_u8_i32__avx2 needs for `d`. */
static inline size_t eb_cpu_dwconv_u8_pad_elems(const struct eb_conv2d_desc *d)
{
    return (size_t)((d->oh + (d->kh - 1) * d->dil_h) *
                    ((d->ow + 7) / 8 * 8 + (d->kw - 1) * d->dil_w));
}

#if defined(__x86_64__) || defined(_M_X64)
/* AVX2 (cpu/x86/igemm_u8s8__avx2.c); only declared where that file is compiled. */
/**
 * Packs `k` rows of `nb` (multiple of EB_IGEMM_NR) uint8 columns (row r at col + r*ldcol)
 * into int16 pairs: for each tile of NR columns, [ceil(k/2)][NR][2] (row 2i, row 2i+1; a
 * missing last odd row is 0), tiles one after another.
 */
void eb_cpu_igemm_pack_u8__avx2(int64_t k, int64_t nb, const uint8_t *col, int64_t ldcol,
                                int16_t *out);
/**
 * One MR×NR tile: acc[m][j] = Σ_i w[i][m]·b[i][j] over `kp` pairs (w: int16 pairs as int32,
 * [kp][MR]; b: one packed tile), y[m*ldy + j] = acc - corr[m] for m < mr, j < nr.
 */
void eb_cpu_igemm_u8s8_4x16__avx2(int64_t kp, const int32_t *w, const int16_t *b,
                                  const int32_t *corr, int32_t *y, int64_t ldy, int mr, int nr);
/**
 * One depthwise channel with stride 1 (any kernel, pads, dilation): y [OH, OW] = Σ w[t]·(x - x_zp)
 * over taps t (w = weight - w_zp, [KH*KW]). `pad` holds eb_cpu_dwconv_u8_pad_elems(d) int16.
 */
void eb_cpu_dwconv_u8_i32__avx2(const struct eb_conv2d_desc *d, const uint8_t *x, int32_t x_zp,
                                const int32_t *w, int16_t *pad, int32_t *y);
/** dst[o] = src[2o] for o < m (the stride-2 runs of the im2col in conv_u8.c); reads
 * src[0 .. 2m-2] only. */
void eb_cpu_gather2_u8__avx2(int64_t m, const uint8_t *src, uint8_t *dst);
/**
 * Requantisation: y = sat(rne(fma((float)acc, mult, bias)) + y_zp) as u8/s8 bytes, then
 * y = lut[y] when lut is not NULL.
 */
void eb_cpu_requant_i32__avx2(int64_t n, const int32_t *acc, float mult, float bias, float y_zp,
                              int y_signed, const uint8_t *lut, uint8_t *y);
/**
 * The same tile requantised (struct eb_conv2d_u8_requant, mult/bias of the tile's rows) into
 * bytes y[m*ldy + j]; rq->lut, when set, must have 3 readable bytes past entry 255.
 */
void eb_cpu_igemm_u8s8_4x16_q__avx2(int64_t kp, const int32_t *w, const int16_t *b,
                                    const int32_t *corr, const float *mult, const float *bias,
                                    const struct eb_conv2d_u8_requant *rq, uint8_t *y, int64_t ldy,
                                    int mr, int nr);
/** Min and max of x[0..n) folded into *mn, *mx with the reference's comparisons. */
void eb_cpu_minmax_f32__avx2(int64_t n, const float *x, float *mn, float *mx);
/** y = sat(round_half_even(x / scale) + zp, 0, 255), NaN → zp. */
void eb_cpu_quantize_u8__avx2(int64_t n, const float *x, float scale, float zp, uint8_t *y);

/* AVX-512 (cpu/x86/igemm_u8s8__avx512.c): the __avx512vnni kernels need AVX512_VNNI too. */
/**
 * One tile of up to 8×32: acc[m][j] = Σ_i w[i][m]·b[i][j] over `kp` pairs, y[m*ldy + j] =
 * acc - corr[m] for m < mr (1..8), j < nr (1..32). w: the packed panel of rows 0..3 ([kp][MR]
 * int16 pairs as int32), rows 4..7 in the next panel (w + kp*MR, read only when mr > 4);
 * b: one packed activation tile, columns 16..31 in the next one (b + kp*2*NR, read only when
 * nr > 16). Stores are masked: nothing outside the mr×nr tile is written.
 */
void eb_cpu_igemm_u8s8_8x32__avx512(int64_t kp, const int32_t *w, const int16_t *b,
                                    const int32_t *corr, int32_t *y, int64_t ldy, int mr, int nr);
void eb_cpu_igemm_u8s8_8x32__avx512vnni(int64_t kp, const int32_t *w, const int16_t *b,
                                        const int32_t *corr, int32_t *y, int64_t ldy, int mr,
                                        int nr);
/** The same tile requantised as eb_cpu_igemm_u8s8_4x16_q__avx2 does. */
void eb_cpu_igemm_u8s8_8x32_q__avx512(int64_t kp, const int32_t *w, const int16_t *b,
                                      const int32_t *corr, const float *mult, const float *bias,
                                      const struct eb_conv2d_u8_requant *rq, uint8_t *y,
                                      int64_t ldy, int mr, int nr);
void eb_cpu_igemm_u8s8_8x32_q__avx512vnni(int64_t kp, const int32_t *w, const int16_t *b,
                                          const int32_t *corr, const float *mult, const float *bias,
                                          const struct eb_conv2d_u8_requant *rq, uint8_t *y,
                                          int64_t ldy, int mr, int nr);
/**
 * Implicit im2col of one pixel block straight into the packed pairs: the same `out` as
 * eb_cpu_igemm_pack_u8__avx2(k, nbp, col) of the im2col's col (conv_u8.c) (padded taps and
 * columns j >= cnt hold `zp`). `tmp` (64-byte aligned) holds eb_cpu_igemm_gather_tmp_bytes
 * for a block of at least nbp pixels; `tmp_bytes` is its size.
 */
void eb_cpu_igemm_gather_u8__avx512(const struct eb_conv2d_desc *d, int64_t icg, const uint8_t *xg,
                                    uint8_t zp, int64_t p0, int64_t cnt, int64_t nbp, uint8_t *tmp,
                                    size_t tmp_bytes, int16_t *out);
/**
 * The same into quads: per tile of NR columns [ceil(k/4)][NR][4] uint8 (rows past k are 0),
 * and, when colsum is not NULL, colsum[j] = Σ_k col[k][j] for j < nbp (int32).
 */
void eb_cpu_igemm_gather_u8x4__avx512vnni(const struct eb_conv2d_desc *d, int64_t icg,
                                          const uint8_t *xg, uint8_t zp, int64_t p0, int64_t cnt,
                                          int64_t nbp, uint8_t *tmp, size_t tmp_bytes, uint8_t *out,
                                          int32_t *colsum);
/**
 * One tile as eb_cpu_igemm_u8s8_8x32__avx512vnni over `kq` quads: w [kq][MR] int32 of four
 * int8 weights s (rows 4..7 in the next panel), b one quad tile (columns 16..31 in the next,
 * b + kq*4*NR); y = Σ s·x - corr[m] + wc[m]·colsum[j] (the last term only when colsum is not
 * NULL; colsum points at the tile's first column).
 */
void eb_cpu_igemm_u8s8x4_8x32__avx512vnni(int64_t kq, const int32_t *w, const uint8_t *b,
                                          const int32_t *colsum, const int32_t *wc,
                                          const int32_t *corr, int32_t *y, int64_t ldy, int mr,
                                          int nr);
/** The same tile requantised as eb_cpu_igemm_u8s8_4x16_q__avx2 does. */
void eb_cpu_igemm_u8s8x4_8x32_q__avx512vnni(int64_t kq, const int32_t *w, const uint8_t *b,
                                            const int32_t *colsum, const int32_t *wc,
                                            const int32_t *corr, const float *mult,
                                            const float *bias,
                                            const struct eb_conv2d_u8_requant *rq, uint8_t *y,
                                            int64_t ldy, int mr, int nr);
/** y[r*ldy + j] = lut[y[r*ldy + j]] for r < rows, j < n (AVX512_VBMI). */
void eb_cpu_lut_u8__avx512vbmi(int64_t rows, int64_t n, uint8_t *y, int64_t ldy,
                               const uint8_t *lut);
#endif

#if defined(__aarch64__)
/*
 * NEON (cpu/arm/igemm_u8s8__neon.c, base ARMv8-A without the dot product extension): the
 * contracts of the AVX2 kernels of the same name, same packed layouts and same results.
 */
void eb_cpu_igemm_pack_u8__neon(int64_t k, int64_t nb, const uint8_t *col, int64_t ldcol,
                                int16_t *out);
void eb_cpu_igemm_u8s8_4x16__neon(int64_t kp, const int32_t *w, const int16_t *b,
                                  const int32_t *corr, int32_t *y, int64_t ldy, int mr, int nr);
void eb_cpu_igemm_u8s8_4x16_q__neon(int64_t kp, const int32_t *w, const int16_t *b,
                                    const int32_t *corr, const float *mult, const float *bias,
                                    const struct eb_conv2d_u8_requant *rq, uint8_t *y, int64_t ldy,
                                    int mr, int nr);
void eb_cpu_gather2_u8__neon(int64_t m, const uint8_t *src, uint8_t *dst);
void eb_cpu_minmax_f32__neon(int64_t n, const float *x, float *mn, float *mx);
void eb_cpu_quantize_u8__neon(int64_t n, const float *x, float scale, float zp, uint8_t *y);
#endif

/**
 * Bytes of `tmp` eb_cpu_igemm_gather_u8__avx512 needs for blocks of up to `blk` (multiple of
 * EB_IGEMM_NR) pixels: the larger of the stride-1 path's pixel coordinates and tap masks and
  * four channels of im2col rows (the other shapes), at least 16 KiB (more channels per chunk).
 */
static inline size_t eb_cpu_igemm_gather_tmp_bytes(const struct eb_conv2d_desc *d, int64_t blk)
{
    const size_t khw = (size_t)(d->kh * d->kw), n = (size_t)blk;
    const size_t direct = 8 * n + 2 * khw * (n / EB_IGEMM_NR) + 64 + 8 * khw + 64;
    const size_t chunk = 4 * khw * n;
    const size_t b = direct > chunk ? direct : chunk;
    return eb_cpu_align64(b > 16384 ? b : 16384);
}

#endif
