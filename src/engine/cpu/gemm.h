/*
 * Internal to the fast CPU kernels (gemm.c, conv_f32.c, cpu/x86, cpu/arm): the SGEMM
 * micro-kernel interface and the blocked macro-kernel the convolution and matrix-product
 * drivers share.
 *
 * Packed layouts (BLIS/XNNPACK style):
 *   A: MR-row panels, panel-major, k-major inside a panel: a[panel][k][MR] (rows past M zero).
 *   B: NR-column panels: b[panel][k][NR] (columns past N zero).
 * A micro-kernel computes one MR x NR tile of C = A·B over `k` and stores it to C (row stride
 * ldc), adding to what C holds when `accumulate` (K split into several KC blocks).
 */
#ifndef EB_ENGINE_CPU_GEMM_H
#define EB_ENGINE_CPU_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "engine/cpu/cpu.h"
#include "engine/cpu/epilogue.h"

/** C[MR x NR] (+)= A panel · B panel. */
typedef void (*eb_sgemm_ukernel_fn)(int64_t k, const float *a, const float *b, float *c,
                                    int64_t ldc, int accumulate);
/**
 * C[MR x NR] (+)= A panel · B where B is not packed: row p of B is the NR floats at
 * b + boff[p] (any alignment). A convolution's B rows are shifted views of its (padded) input.
 */
typedef void (*eb_sgemm_direct_fn)(int64_t k, const float *a, const float *b, const int32_t *boff,
                                   float *c, int64_t ldc, int accumulate);
/**
 * Epilogue on an m x n tile: c = fq(act(s + bias[row]) + r), s (row stride lds) and c (row
 * stride ldc) the same memory or disjoint; r (row stride ldr) read only when e->residual; bias
 * NULL = none.
 */
typedef void (*eb_epilogue_tile_fn)(const struct eb_epilogue *e, const float *bias, int64_t m,
                                    int64_t n, const float *s, int64_t lds, float *c, int64_t ldc,
                                    const float *r, int64_t ldr);

/** GEMV: y[j] = Σ_{p < k} a[p] · b[p*ldb + j] for j < n (y written; b read in place). */
typedef void (*eb_sgemv_fn)(int64_t k, int64_t n, const float *a, const float *b, int64_t ldb,
                            float *y);

/**
 * GEMV on a packed B: y[j] = Σ_{p < k} a[p] · b[(j / NR) * k * NR + p * NR + j % NR] for j < n
 * (b: the NR-column panels of eb_cpu__pack_b over all k rows; y written, the sum in order of p,
 * as eb_sgemv_fn sums it).
 */
typedef void (*eb_sgemv_packed_fn)(int64_t k, int64_t n, const float *a, const float *b, float *y);

/** dst[j] = src[2j] for j < n; reads src[0 .. 2n-2] only. */
typedef void (*eb_gather2_fn)(int64_t n, const float *src, float *dst);

/**
 * Depthwise rows: y[q] = bias + Σ_t w[t] · src[q + off[t]] for q < n rounded up to the vector
 * width (at most 16): the caller makes those reads and writes valid.
 */
typedef void (*eb_dw_rows_fn)(int64_t n, int taps, const float *w, float bias, const float *src,
                              const int32_t *off, float *y);

/**
 * Channel-blocked direct convolution ("channels in the vector lanes", conv_f32.c): for output
 * pixels q < n_px rounded up to R, and the OB output channels of one block,
 *
 *   out[q][o] = Σ_{b < n_icb} Σ_{t < taps} Σ_{c < cn(b)} x[b*xbs + toff[t] + q*xps + c] · w[b][t][c][o]
 *
 * with cn(b) = cb except cn(n_icb - 1) = cn_last; w is [n_icb][taps][CB][OB] (rows c >= cn
 * unread). x is an input laid out [block][row][column][cb channels], cb = CB or 1 (an input
 * of fewer channels, one plane per block): pixel q's window starts at x + q*xps (xps = stride
 * * cb), tap t at toff[t]. out is [q][OB], written (not summed); only channels o < olen need
 * be (the kernel may skip the vectors past them). Pixels are computed in whole tiles of up to
 * R: the caller makes reads and writes up to n_px rounded up to R valid.
 */
typedef void (*eb_conv_cl_fn)(int64_t n_px, const float *x, int64_t xps, int64_t n_icb, int64_t xbs,
                              int cb, int cn_last, const int32_t *toff, int taps, const float *w,
                              int olen, float *out);

/**
 * Channel-blocked depthwise convolution: out[q][c] = Σ_{t < taps} x[toff[t] + q*xps + c] · w[t][c]
 * for q < n_px (exactly), c < CB; x laid out as for eb_conv_cl_fn (one channel block).
 */
typedef void (*eb_dw_cl_fn)(int64_t n_px, const float *x, int64_t xps, const int32_t *toff,
                            int taps, const float *w, float *out);
/**
 * Pointwise convolution, pixels in the tile rows, input read in place (NCHW):
 * out[q][o] = Σ_{c < k} x[c*cs + q] · w[c][o] for q < n_px, o < olen (w is [k][OB], out
 * [q][OB]); reads nothing past pixel n_px of a channel.
 */
typedef void (*eb_pw_cl_fn)(int64_t n_px, const float *x, int64_t cs, int64_t k, const float *w,
                            int olen, float *out);
/** dst[j*cb + c] = src[c*src_stride + j] for j < n, c < cn; 0 for cn <= c < cb (cb % 8 == 0). */
typedef void (*eb_cl_pack_fn)(int64_t n, int cn, int cb, const float *src, int64_t src_stride,
                              float *dst);
/** y[o*y_stride + j] = buf[j*ob + o] for j < n, o < olen (ob % 8 == 0). */
typedef void (*eb_cl_unpack_fn)(int64_t n, int olen, int ob, const float *buf, float *y,
                                int64_t y_stride);

/**
 * Epilogue into a channel-blocked output (NCHWc, CB channels per block): for pixels q < n and
 * channel vectors v < nv, y[v*y_bs + q*CB + l] = act(buf[q*ob + v*CB + l] + bias[v*CB + l])
 * (+ r[v*y_bs + q*CB + l] when e->residual), l < CB. No fake quantisation (the layout pass
 * keeps such convs' outputs NCHW).
 */
typedef void (*eb_cl_epilogue_fn)(const struct eb_epilogue *e, const float *bias, int64_t n, int nv,
                                  const float *buf, int ob, float *y, int64_t y_bs, const float *r);

/*
 * The ISA epilogues' dispatch: CALL(act, res) for e's activation and residual flag, each case
 * with both as constants, so that an always-inline row function CALL expands to is compiled
 * once per activation (its activation switch folded away) and residual or not.
 */
#define EB_EPI_CASE_(A, CALL)                                                                      \
    case A:                                                                                        \
        if (res_)                                                                                  \
            CALL(A, 1);                                                                            \
        else                                                                                       \
            CALL(A, 0);                                                                            \
        break;
#define EB_EPILOGUE_SPECIALISE(e, CALL)                                                            \
    do {                                                                                           \
        const int res_ = (e)->residual;                                                            \
        switch ((e)->act) {                                                                        \
            EB_EPI_CASE_(EB_ACT_NONE, CALL)                                                        \
            EB_EPI_CASE_(EB_ACT_RELU, CALL)                                                        \
            EB_EPI_CASE_(EB_ACT_LEAKY_RELU, CALL)                                                  \
            EB_EPI_CASE_(EB_ACT_CLIP, CALL)                                                        \
            EB_EPI_CASE_(EB_ACT_SIGMOID, CALL)                                                     \
            EB_EPI_CASE_(EB_ACT_SILU, CALL)                                                        \
            EB_EPI_CASE_(EB_ACT_HARD_SIGMOID, CALL)                                                \
            EB_EPI_CASE_(EB_ACT_HARD_SWISH, CALL)                                                  \
            EB_EPI_CASE_(EB_ACT_TANH, CALL)                                                        \
        }                                                                                          \
    } while (0)

/** One ISA's SGEMM: tile sizes, micro-kernels, tile epilogue, the stride-2 gather, depthwise;
 * and the channel-blocked convolution (conv_cl NULL where the ISA has none): R pixels x OB
 * output channels per tile, input channels in blocks of CB. */
struct eb_sgemm_ukernel {
    int mr, nr;
    eb_sgemm_ukernel_fn gemm;
    eb_epilogue_tile_fn epilogue;
    eb_sgemm_direct_fn direct;
    eb_gather2_fn gather2;
    eb_dw_rows_fn dw_rows;
    int cl_r, cl_ob, cl_cb;
    eb_conv_cl_fn conv_cl;
    eb_cl_pack_fn cl_pack;
    eb_cl_unpack_fn cl_unpack;
    eb_dw_cl_fn dw_cl;
    eb_pw_cl_fn pw_cl;
    eb_cl_epilogue_fn cl_epilogue;
    eb_sgemv_fn gemv;               /* NULL where the ISA has none */
    eb_sgemv_packed_fn gemv_packed; /* NULL where the ISA has none */
};

/** The micro-kernel for `isa`; 0 when there is none (REF, or an ISA absent from this build). */
int eb_cpu__sgemm_select(enum eb_cpu_isa isa, struct eb_sgemm_ukernel *uk_out);

/** The portable tile epilogue (scalar; what ISA versions are tested against). */
void eb_cpu__epilogue_tile_f32(const struct eb_epilogue *e, const float *bias, int64_t m, int64_t n,
                               const float *s, int64_t lds, float *c, int64_t ldc, const float *r,
                               int64_t ldr);

/**
 * Macro-kernel: C[m x n] (+)= A block · B block, A packed as ceil(m/MR) panels of `k` rows
 * that start `a_ps` floats apart, B as ceil(n/NR) consecutive panels of `k` rows. With `epi` non-NULL the epilogue (bias rows from `bias`,
 * residual `r` with row stride ldc) is applied to each finished tile while it is in cache.
 * Edge tiles go through a stack tile, so C is never written outside [m x n].
 */
void eb_cpu__sgemm_block(const struct eb_sgemm_ukernel *uk, int64_t m, int64_t n, int64_t k,
                         const float *a, int64_t a_ps, const float *b, float *c, int64_t ldc,
                         int accumulate, const struct eb_epilogue *epi, const float *bias,
                         const float *r);

/**
 * The same with B not packed (uk->direct): B tile column j starts at b + j, row p at
 * b + j + boff[p]. Every tile reads NR columns, so up to NR - 1 floats past column n of each B
 * row must be readable (their results are discarded), unless `tail` is non-NULL: then a
 * partial last tile reads its columns from `tail`, the packed NR panel of those columns (k rows).
 */
void eb_cpu__sgemm_block_direct(const struct eb_sgemm_ukernel *uk, int64_t m, int64_t n, int64_t k,
                                const float *a, int64_t a_ps, const float *b, const int32_t *boff,
                                const float *tail, float *c, int64_t ldc, int accumulate,
                                const struct eb_epilogue *epi, const float *bias, const float *r);

/** Packs rows [0, m) x cols [0, k) of row-major a (row stride lda) into MR panels. */
void eb_cpu__pack_a(int mr, int64_t m, int64_t k, const float *a, int64_t lda, float *dst);
/** Packs rows [0, k) x cols [0, n) of row-major b (row stride ldb) into NR panels. */
void eb_cpu__pack_b(int nr, int64_t k, int64_t n, const float *b, int64_t ldb, float *dst);

#if defined(__x86_64__) || defined(_M_X64)
void eb_cpu_sgemm_f32_6x16__avx2(int64_t k, const float *a, const float *b, float *c, int64_t ldc,
                                 int accumulate);
void eb_cpu_sgemm_f32_6x16_direct__avx2(int64_t k, const float *a, const float *b,
                                        const int32_t *boff, float *c, int64_t ldc, int accumulate);
void eb_cpu_gather2_f32__avx2(int64_t n, const float *src, float *dst);
void eb_cpu_pack_a8_f32__avx2(int64_t m, int64_t k, const float *a, int64_t lda, float *dst);
void eb_cpu_sgemv_f32__avx2(int64_t k, int64_t n, const float *a, const float *b, int64_t ldb,
                            float *y);
void eb_cpu_sgemv_f32__avx512(int64_t k, int64_t n, const float *a, const float *b, int64_t ldb,
                              float *y);
void eb_cpu_sgemv_packed_f32__avx2(int64_t k, int64_t n, const float *a, const float *b, float *y);
void eb_cpu_sgemv_packed_f32__avx512(int64_t k, int64_t n, const float *a, const float *b,
                                     float *y);
void eb_cpu_dw_rows_f32__avx2(int64_t n, int taps, const float *w, float bias, const float *src,
                              const int32_t *off, float *y);
void eb_cpu_epilogue_tile_f32__avx2(const struct eb_epilogue *e, const float *bias, int64_t m,
                                    int64_t n, const float *s, int64_t lds, float *c, int64_t ldc,
                                    const float *r, int64_t ldr);
void eb_cpu_conv_cl_f32_6x16__avx2(int64_t n_px, const float *x, int64_t xps, int64_t n_icb,
                                   int64_t xbs, int cb, int cn_last, const int32_t *toff, int taps,
                                   const float *w, int olen, float *out);
void eb_cpu_dw_cl_f32__avx2(int64_t n_px, const float *x, int64_t xps, const int32_t *toff,
                            int taps, const float *w, float *out);
void eb_cpu_dw_cl_f32__avx512(int64_t n_px, const float *x, int64_t xps, const int32_t *toff,
                              int taps, const float *w, float *out);
void eb_cpu_pw_cl_f32_6x16__avx2(int64_t n_px, const float *x, int64_t cs, int64_t k,
                                 const float *w, int olen, float *out);
void eb_cpu_pw_cl_f32_12x32__avx512(int64_t n_px, const float *x, int64_t cs, int64_t k,
                                    const float *w, int olen, float *out);
void eb_cpu_cl_pack_f32__avx2(int64_t n, int cn, int cb, const float *src, int64_t src_stride,
                              float *dst);
void eb_cpu_cl_unpack_f32__avx2(int64_t n, int olen, int ob, const float *buf, float *y,
                                int64_t y_stride);
void eb_cpu_cl_epilogue_f32__avx2(const struct eb_epilogue *e, const float *bias, int64_t n, int nv,
                                  const float *buf, int ob, float *y, int64_t y_bs, const float *r);
void eb_cpu_cl_epilogue_f32__avx512(const struct eb_epilogue *e, const float *bias, int64_t n,
                                    int nv, const float *buf, int ob, float *y, int64_t y_bs,
                                    const float *r);
void eb_cpu_conv_cl_f32_12x32__avx512(int64_t n_px, const float *x, int64_t xps, int64_t n_icb,
                                      int64_t xbs, int cb, int cn_last, const int32_t *toff,
                                      int taps, const float *w, int olen, float *out);
void eb_cpu_sgemm_f32_8x32__avx512(int64_t k, const float *a, const float *b, float *c, int64_t ldc,
                                   int accumulate);
void eb_cpu_sgemm_f32_8x32_direct__avx512(int64_t k, const float *a, const float *b,
                                          const int32_t *boff, float *c, int64_t ldc,
                                          int accumulate);
void eb_cpu_epilogue_tile_f32__avx512(const struct eb_epilogue *e, const float *bias, int64_t m,
                                      int64_t n, const float *s, int64_t lds, float *c, int64_t ldc,
                                      const float *r, int64_t ldr);
#endif
#if defined(__aarch64__)
void eb_cpu_sgemm_f32_8x8__neon(int64_t k, const float *a, const float *b, float *c, int64_t ldc,
                                int accumulate);
void eb_cpu_sgemm_f32_8x8_direct__neon(int64_t k, const float *a, const float *b,
                                       const int32_t *boff, float *c, int64_t ldc, int accumulate);
void eb_cpu_gather2_f32__neon(int64_t n, const float *src, float *dst);
void eb_cpu_dw_rows_f32__neon(int64_t n, int taps, const float *w, float bias, const float *src,
                              const int32_t *off, float *y);
void eb_cpu_epilogue_tile_f32__neon(const struct eb_epilogue *e, const float *bias, int64_t m,
                                    int64_t n, const float *s, int64_t lds, float *c, int64_t ldc,
                                    const float *r, int64_t ldr);
#endif

#endif
