/*
 * ConvInteger and DynamicQuantizeLinear behind run-time ISA dispatch (see conv_u8.h). The
 * blocking is portable C here; the inner loops are cpu/x86 (AVX2; AVX-512 with or without
 * VNNI for the packed GEMM) and cpu/arm (NEON: the AVX2 scheme, 4x16 tiles, with depthwise and
 * tiny groups on the reference per group). Other ISAs get a NULL plan and stay on the
 * reference.
 */
#include <math.h>
#include <string.h>

#include "engine/cpu/conv_u8.h"

#if defined(__x86_64__) || defined(_M_X64)
#define HAVE_X86 1
#else
#define HAVE_X86 0
/* Off x86 prepare makes no plan and DynamicQuantizeLinear runs the reference: never called. */
static void eb_cpu_igemm_pack_u8__avx2(int64_t k, int64_t nb, const uint8_t *col, int64_t ldcol,
                                       int16_t *out)
{
    (void)k, (void)nb, (void)col, (void)ldcol, (void)out;
}
static void eb_cpu_igemm_u8s8_4x16__avx2(int64_t kp, const int32_t *w, const int16_t *b,
                                         const int32_t *corr, int32_t *y, int64_t ldy, int mr,
                                         int nr)
{
    (void)kp, (void)w, (void)b, (void)corr, (void)y, (void)ldy, (void)mr, (void)nr;
}
static void eb_cpu_dwconv_u8_i32__avx2(const struct eb_conv2d_desc *d, const uint8_t *x,
                                       int32_t x_zp, const int32_t *w, int16_t *pad, int32_t *y)
{
    (void)d, (void)x, (void)x_zp, (void)w, (void)pad, (void)y;
}
static void eb_cpu_gather2_u8__avx2(int64_t m, const uint8_t *src, uint8_t *dst)
{
    (void)m, (void)src, (void)dst;
}
static void eb_cpu_igemm_u8s8_4x16_q__avx2(int64_t kp, const int32_t *w, const int16_t *b,
                                           const int32_t *corr, const float *mult,
                                           const float *bias, const struct eb_conv2d_u8_requant *rq,
                                           uint8_t *y, int64_t ldy, int mr, int nr)
{
    (void)kp, (void)w, (void)b, (void)corr, (void)mult, (void)bias, (void)rq, (void)y, (void)ldy,
        (void)mr, (void)nr;
}
static void eb_cpu_minmax_f32__avx2(int64_t n, const float *x, float *mn, float *mx)
{
    (void)n, (void)x, (void)mn, (void)mx;
}
static void eb_cpu_quantize_u8__avx2(int64_t n, const float *x, float scale, float zp, uint8_t *y)
{
    (void)n, (void)x, (void)scale, (void)zp, (void)y;
}
static void eb_cpu_igemm_gather_u8__avx512(const struct eb_conv2d_desc *d, int64_t icg,
                                           const uint8_t *xg, uint8_t zp, int64_t p0, int64_t cnt,
                                           int64_t nbp, uint8_t *tmp, size_t tmp_bytes,
                                           int16_t *out)
{
    (void)d, (void)icg, (void)xg, (void)zp, (void)p0, (void)cnt, (void)nbp, (void)tmp,
        (void)tmp_bytes, (void)out;
}
static void eb_cpu_igemm_u8s8_8x32__avx512(int64_t kp, const int32_t *w, const int16_t *b,
                                           const int32_t *corr, int32_t *y, int64_t ldy, int mr,
                                           int nr)
{
    (void)kp, (void)w, (void)b, (void)corr, (void)y, (void)ldy, (void)mr, (void)nr;
}
static void eb_cpu_igemm_u8s8_8x32_q__avx512(int64_t kp, const int32_t *w, const int16_t *b,
                                             const int32_t *corr, const float *mult,
                                             const float *bias,
                                             const struct eb_conv2d_u8_requant *rq, uint8_t *y,
                                             int64_t ldy, int mr, int nr)
{
    (void)kp, (void)w, (void)b, (void)corr, (void)mult, (void)bias, (void)rq, (void)y, (void)ldy,
        (void)mr, (void)nr;
}
static void eb_cpu_igemm_gather_u8x4__avx512vnni(const struct eb_conv2d_desc *d, int64_t icg,
                                                 const uint8_t *xg, uint8_t zp, int64_t p0,
                                                 int64_t cnt, int64_t nbp, uint8_t *tmp,
                                                 size_t tmp_bytes, uint8_t *out, int32_t *colsum)
{
    (void)d, (void)icg, (void)xg, (void)zp, (void)p0, (void)cnt, (void)nbp, (void)tmp,
        (void)tmp_bytes, (void)out, (void)colsum;
}
static void eb_cpu_igemm_u8s8x4_8x32__avx512vnni(int64_t kq, const int32_t *w, const uint8_t *b,
                                                 const int32_t *colsum, const int32_t *wc,
                                                 const int32_t *corr, int32_t *y, int64_t ldy,
                                                 int mr, int nr)
{
    (void)kq, (void)w, (void)b, (void)colsum, (void)wc, (void)corr, (void)y, (void)ldy, (void)mr,
        (void)nr;
}
static void eb_cpu_igemm_u8s8x4_8x32_q__avx512vnni(int64_t kq, const int32_t *w, const uint8_t *b,
                                                   const int32_t *colsum, const int32_t *wc,
                                                   const int32_t *corr, const float *mult,
                                                   const float *bias,
                                                   const struct eb_conv2d_u8_requant *rq,
                                                   uint8_t *y, int64_t ldy, int mr, int nr)
{
    (void)kq, (void)w, (void)b, (void)colsum, (void)wc, (void)corr, (void)mult, (void)bias,
        (void)rq, (void)y, (void)ldy, (void)mr, (void)nr;
}
static void eb_cpu_lut_u8__avx512vbmi(int64_t rows, int64_t n, uint8_t *y, int64_t ldy,
                                      const uint8_t *lut)
{
    (void)rows, (void)n, (void)y, (void)ldy, (void)lut;
}
static void eb_cpu_igemm_u8s8_8x32__avx512vnni(int64_t kp, const int32_t *w, const int16_t *b,
                                               const int32_t *corr, int32_t *y, int64_t ldy, int mr,
                                               int nr)
{
    eb_cpu_igemm_u8s8_8x32__avx512(kp, w, b, corr, y, ldy, mr, nr);
}
static void eb_cpu_igemm_u8s8_8x32_q__avx512vnni(int64_t kp, const int32_t *w, const int16_t *b,
                                                 const int32_t *corr, const float *mult,
                                                 const float *bias,
                                                 const struct eb_conv2d_u8_requant *rq, uint8_t *y,
                                                 int64_t ldy, int mr, int nr)
{
    eb_cpu_igemm_u8s8_8x32_q__avx512(kp, w, b, corr, mult, bias, rq, y, ldy, mr, nr);
}
#endif

#if defined(__aarch64__)
#define HAVE_NEON 1
#else
#define HAVE_NEON 0
/* Off aarch64 prepare makes no NEON plan and DynamicQuantizeLinear never picks NEON. */
static void eb_cpu_igemm_pack_u8__neon(int64_t k, int64_t nb, const uint8_t *col, int64_t ldcol,
                                       int16_t *out)
{
    (void)k, (void)nb, (void)col, (void)ldcol, (void)out;
}
static void eb_cpu_igemm_u8s8_4x16__neon(int64_t kp, const int32_t *w, const int16_t *b,
                                         const int32_t *corr, int32_t *y, int64_t ldy, int mr,
                                         int nr)
{
    (void)kp, (void)w, (void)b, (void)corr, (void)y, (void)ldy, (void)mr, (void)nr;
}
static void eb_cpu_igemm_u8s8_4x16_q__neon(int64_t kp, const int32_t *w, const int16_t *b,
                                           const int32_t *corr, const float *mult,
                                           const float *bias, const struct eb_conv2d_u8_requant *rq,
                                           uint8_t *y, int64_t ldy, int mr, int nr)
{
    (void)kp, (void)w, (void)b, (void)corr, (void)mult, (void)bias, (void)rq, (void)y, (void)ldy,
        (void)mr, (void)nr;
}
static void eb_cpu_gather2_u8__neon(int64_t m, const uint8_t *src, uint8_t *dst)
{
    (void)m, (void)src, (void)dst;
}
static void eb_cpu_minmax_f32__neon(int64_t n, const float *x, float *mn, float *mx)
{
    (void)n, (void)x, (void)mn, (void)mx;
}
static void eb_cpu_quantize_u8__neon(int64_t n, const float *x, float scale, float zp, uint8_t *y)
{
    (void)n, (void)x, (void)scale, (void)zp, (void)y;
}
#endif

/* ISAs with a fast ConvInteger and DynamicQuantizeLinear in this build. */
static int isa_has_u8(enum eb_cpu_isa isa)
{
    return (HAVE_X86 && (isa == EB_CPU_ISA_AVX2 || isa == EB_CPU_ISA_AVX512)) ||
           (HAVE_NEON && isa == EB_CPU_ISA_NEON);
}

/* AVX2 and NEON: output pixels gathered per block (multiple of EB_IGEMM_NR). */
#define BLOCK_PIXELS 64
/* AVX-512: pixel blocks are multiples of the 32-column tile, between these bounds. */
#define BLOCK512_MIN 64
#define BLOCK512_MAX 512
/* AVX-512 tile: rows (two weight panels) and columns (two activation panels). */
#define TILE512_M (2 * EB_IGEMM_MR)
#define TILE512_N (2 * EB_IGEMM_NR)

enum u8_algo {
    U8_ALGO_GEMM = 0, /* packed integer GEMM per group */
    U8_ALGO_GROUPREF, /* the reference per group, threaded (tiny groups, strided depthwise) */
    U8_ALGO_DW,       /* depthwise, stride 1: direct kernel per channel */
};

/* Which GEMM kernels a U8_ALGO_GEMM plan runs. */
enum u8_kern {
    U8_KERN_AVX2 = 0,       /* 4x16 vpmaddwd, separate im2col and pack */
    U8_KERN_AVX512,         /* 8x32 vpmaddwd + vpaddd, direct gather */
    U8_KERN_AVX512_VNNI,    /* 8x32 vpdpwssd, direct gather */
    U8_KERN_AVX512_VNNI_U8, /* 8x32 vpdpbusd on uint8 x int8 quads, direct gather */
    U8_KERN_NEON,           /* 4x16 vmlal_laneq_s16, separate im2col and pack (as AVX2) */
};

struct eb_conv2d_u8_plan {
    struct eb_conv2d_desc d;
    enum eb_cpu_isa isa;
    enum u8_algo algo;
    enum u8_kern kern;
    int64_t icg, ocg, k, kp, n_ob; /* per group: channels in/out, reduction, pairs, OC blocks */
    int64_t kq;                    /* quads of the reduction (U8_KERN_AVX512_VNNI_U8) */
    int64_t plane;                 /* oh * ow */
    int64_t blk;                   /* output pixels per block */
    int64_t n_blocks;              /* pixel blocks per image */
    size_t worker_bytes;           /* scratch per worker */
    size_t packed_bytes;           /* AVX-512: the packed block at the start of a worker's part */
    size_t colsum_bytes;           /* AVX-512 u8: column sums after it (when has_wc) */
    size_t tmp_bytes;              /* AVX-512: the gather's tmp after those */
    int vbmi;                      /* AVX-512: lookup tables by vpermi2b after each block */
    int has_wc;                    /* u8: some wc ≠ 0 (the kernel needs the column sums) */
    int32_t *wc;                   /* u8: [oc] (w - w_zp) - s, see pack_quads */
    int32_t *w;      /* GEMM: [groups][n_ob][kp][MR] int16 pairs, or [..][kq][MR] int8 quads */
    int32_t *wsum;   /* [oc] Σ_k (w - w_zp) */
    const void *raw; /* the constant weights (GROUPREF) */
    int w_signed;
    int32_t *wzp; /* [oc] */
    int32_t *wdw; /* [oc][kh*kw] w - w_zp (DW) */
};

/* Weight `i` of the constant weights as an integer. */
static int32_t wval(const void *w, int w_signed, int64_t i)
{
    return w_signed ? (int32_t)((const int8_t *)w)[i] : (int32_t)((const uint8_t *)w)[i];
}

/* Int16 pairs (w - w_zp) in panels of MR rows: [groups][n_ob][kp][MR]. */
static enum eb_status pack_pairs(struct eb_conv2d_u8_plan *p, const void *w, int w_signed,
                                 struct eb_ir_arena *arena, size_t *packed)
{
    const size_t wbytes = (size_t)(p->d.groups * p->n_ob * p->kp * EB_IGEMM_MR) * sizeof(int32_t);
    p->w = eb_ir_arena_alloc(arena, wbytes); /* zeroed: missing rows and odd tails stay 0 */
    if (p->w == NULL)
        return EB_ERR_NOMEM;
    *packed += wbytes;
    for (int64_t o = 0; o < p->d.oc; o++) {
        const int64_t g = o / p->ocg, m = o % p->ocg;
        int32_t *dst =
            p->w + ((g * p->n_ob + m / EB_IGEMM_MR) * p->kp) * EB_IGEMM_MR + m % EB_IGEMM_MR;
        for (int64_t i = 0; i < p->k; i++) {
            const int32_t v = wval(w, w_signed, o * p->k + i) - p->wzp[o];
            /* Pair i/2: low half = even row, high half = odd row (little endian). */
            uint32_t *pair = (uint32_t *)&dst[(i / 2) * EB_IGEMM_MR];
            const uint32_t h = (uint32_t)(uint16_t)(int16_t)v;
            *pair |= (i % 2 == 0) ? h : h << 16;
        }
    }
    return EB_OK;
}

/*
 * Int8 quads for vpdpbusd: s = w (int8 weights) or w - 128 (uint8), so that w - w_zp = s + wc
 * with wc = -w_zp or 128 - w_zp per output channel; [groups][n_ob][kq][MR] int32 of four s.
 */
static enum eb_status pack_quads(struct eb_conv2d_u8_plan *p, const void *w, int w_signed,
                                 struct eb_ir_arena *arena, size_t *packed)
{
    const size_t wbytes = (size_t)(p->d.groups * p->n_ob * p->kq * EB_IGEMM_MR) * sizeof(int32_t);
    p->w = eb_ir_arena_alloc(arena, wbytes);
    p->wc = eb_ir_arena_alloc(arena, (size_t)p->d.oc * sizeof(int32_t));
    if (p->w == NULL || p->wc == NULL)
        return EB_ERR_NOMEM;
    *packed += wbytes + (size_t)p->d.oc * sizeof(int32_t);
    for (int64_t o = 0; o < p->d.oc; o++) {
        const int64_t g = o / p->ocg, m = o % p->ocg;
        int32_t *dst =
            p->w + ((g * p->n_ob + m / EB_IGEMM_MR) * p->kq) * EB_IGEMM_MR + m % EB_IGEMM_MR;
        for (int64_t i = 0; i < p->k; i++) {
            const int32_t s = wval(w, w_signed, o * p->k + i) - (w_signed ? 0 : 128);
            uint32_t *quad = (uint32_t *)&dst[(i / 4) * EB_IGEMM_MR];
            *quad |= (uint32_t)(uint8_t)(int8_t)s << (8 * (i % 4));
        }
        p->wc[o] = (w_signed ? 0 : 128) - p->wzp[o];
        p->has_wc |= p->wc[o] != 0;
    }
    return EB_OK;
}

/*
 * AVX-512 pixel block: the packed activations of a block (`px_bytes` per pixel) in about
 * 256 KiB, so that they stay in L2 next to the weights (the columns of one tile stay in L1
 * while the weights stream), and at least 4 tasks per worker when there are several (small
 * late layers would leave one idle).
 */
static int64_t block512(const struct eb_conv2d_u8_plan *p, int n_workers, int64_t px_bytes,
                        const struct eb_conv2d_u8_options *opt)
{
    const struct eb_conv2d_desc *d = &p->d;
    int64_t blk;
    if (opt != NULL && opt->block_pixels > 0) {
        blk = eb_cpu_round_up(opt->block_pixels, TILE512_N);
    } else {
        blk = 262144 / (px_bytes > 0 ? px_bytes : 1) / TILE512_N * TILE512_N;
        blk = blk < BLOCK512_MIN ? BLOCK512_MIN : (blk > BLOCK512_MAX ? BLOCK512_MAX : blk);
        const int64_t per_block = d->n * d->groups, want = 4 * (int64_t)n_workers;
        if (n_workers > 1 && per_block * ((p->plane + blk - 1) / blk) < want) {
            const int64_t blocks = (want + per_block - 1) / per_block;
            const int64_t b = eb_cpu_round_up((p->plane + blocks - 1) / blocks, TILE512_N);
            blk = b < blk ? b : blk;
        }
    }
    const int64_t whole = eb_cpu_round_up(p->plane, TILE512_N);
    return blk < whole ? blk : whole;
}

enum eb_status eb_cpu_conv2d_u8_prepare(const struct eb_conv2d_desc *d, const void *w, int w_signed,
                                        const int32_t *w_zp, size_t n_w_zp, enum eb_cpu_isa isa,
                                        int n_workers, struct eb_ir_arena *arena,
                                        struct eb_conv2d_u8_plan **plan_out,
                                        size_t *scratch_bytes_out, size_t *packed_bytes_out)
{
    return eb_cpu_conv2d_u8_prepare_opt(d, w, w_signed, w_zp, n_w_zp, isa, n_workers, NULL, arena,
                                        plan_out, scratch_bytes_out, packed_bytes_out);
}

enum eb_status eb_cpu_conv2d_u8_prepare_opt(const struct eb_conv2d_desc *d, const void *w,
                                            int w_signed, const int32_t *w_zp, size_t n_w_zp,
                                            enum eb_cpu_isa isa, int n_workers,
                                            const struct eb_conv2d_u8_options *opt,
                                            struct eb_ir_arena *arena,
                                            struct eb_conv2d_u8_plan **plan_out,
                                            size_t *scratch_bytes_out, size_t *packed_bytes_out)
{
    *plan_out = NULL;
    *scratch_bytes_out = 0;
    *packed_bytes_out = 0;
    if (!isa_has_u8(isa))
        return EB_OK;
    struct eb_conv2d_u8_plan *p = eb_ir_arena_alloc(arena, sizeof(*p));
    if (p == NULL)
        return EB_ERR_NOMEM;
    p->d = *d;
    p->isa = isa;
    p->icg = d->ic / d->groups;
    p->ocg = d->oc / d->groups;
    p->k = p->icg * d->kh * d->kw;
    p->kp = (p->k + 1) / 2;
    p->kq = (p->k + 3) / 4;
    p->n_ob = (p->ocg + EB_IGEMM_MR - 1) / EB_IGEMM_MR;
    p->plane = d->oh * d->ow;
    p->kern = isa == EB_CPU_ISA_NEON ? U8_KERN_NEON : U8_KERN_AVX2;
    p->blk = BLOCK_PIXELS;
    p->n_blocks = (p->plane + BLOCK_PIXELS - 1) / BLOCK_PIXELS;
    p->w_signed = w_signed;
    p->raw = w;
    p->wzp = eb_ir_arena_alloc(arena, (size_t)d->oc * sizeof(int32_t));
    if (p->wzp == NULL)
        return EB_ERR_NOMEM;
    for (int64_t o = 0; o < d->oc; o++)
        p->wzp[o] = w_zp[n_w_zp == 1 ? 0 : o];
    size_t packed = (size_t)d->oc * sizeof(int32_t);
    /* The GEMM wastes most of its tile on one output channel per group (depthwise). */
    p->algo = p->ocg < EB_IGEMM_MR ? U8_ALGO_GROUPREF : U8_ALGO_GEMM;
    /* NEON has no depthwise kernel: those stay on the reference per group (GROUPREF). */
    if (p->icg == 1 && p->ocg == 1 && d->stride_h == 1 && d->stride_w == 1 &&
        isa != EB_CPU_ISA_NEON) {
        p->algo = U8_ALGO_DW;
        const int64_t taps = d->kh * d->kw;
        p->wdw = eb_ir_arena_alloc(arena, (size_t)(d->oc * taps) * sizeof(int32_t));
        if (p->wdw == NULL)
            return EB_ERR_NOMEM;
        packed += (size_t)(d->oc * taps) * sizeof(int32_t);
        for (int64_t i = 0; i < d->oc * taps; i++)
            p->wdw[i] =
                (w_signed ? (int32_t)((const int8_t *)w)[i] : (int32_t)((const uint8_t *)w)[i]) -
                p->wzp[i / taps];
        p->worker_bytes = eb_cpu_align64(eb_cpu_dwconv_u8_pad_elems(d) * sizeof(int16_t) + 64);
    }
    if (p->algo == U8_ALGO_GEMM) {
        p->wsum = eb_ir_arena_alloc(arena, (size_t)d->oc * sizeof(int32_t));
        if (p->wsum == NULL)
            return EB_ERR_NOMEM;
        packed += (size_t)d->oc * sizeof(int32_t);
        for (int64_t o = 0; o < d->oc; o++) {
            int32_t sum = 0;
            for (int64_t i = 0; i < p->k; i++)
                sum += wval(w, w_signed, o * p->k + i) - p->wzp[o];
            p->wsum[o] = sum;
        }
        if (isa == EB_CPU_ISA_AVX512) {
            /* The features are read here (cpuid, cheap) since prepare gets only the ISA. */
            struct eb_cpu_features f;
            eb_cpu_features_detect(&f);
            const int vnni = f.avx512_vnni && !(opt != NULL && opt->no_vnni);
            p->kern = !vnni ? U8_KERN_AVX512
                            : (opt != NULL && opt->no_u8x4 ? U8_KERN_AVX512_VNNI
                                                           : U8_KERN_AVX512_VNNI_U8);
            p->vbmi = f.avx512_vbmi && !(opt != NULL && opt->no_vbmi);
        }
        const enum eb_status st = p->kern == U8_KERN_AVX512_VNNI_U8
                                      ? pack_quads(p, w, w_signed, arena, &packed)
                                      : pack_pairs(p, w, w_signed, arena, &packed);
        if (st != EB_OK)
            return st;
        if (isa == EB_CPU_ISA_AVX512) {
            const int u8 = p->kern == U8_KERN_AVX512_VNNI_U8;
            p->blk = block512(p, n_workers, u8 ? p->kq * 4 : p->kp * 4, opt);
            p->n_blocks = (p->plane + p->blk - 1) / p->blk;
            p->packed_bytes = eb_cpu_align64(
                (size_t)(u8 ? p->kq * 4 * p->blk : p->kp * 2 * p->blk * (int64_t)sizeof(int16_t)));
            p->colsum_bytes = p->has_wc ? eb_cpu_align64((size_t)p->blk * sizeof(int32_t)) : 0;
            p->tmp_bytes = eb_cpu_igemm_gather_tmp_bytes(d, p->blk);
            p->worker_bytes = p->packed_bytes + p->colsum_bytes + p->tmp_bytes;
        } else {
            const size_t col = eb_cpu_align64((size_t)(p->k * BLOCK_PIXELS));
            const size_t pk = eb_cpu_align64((size_t)(p->kp * 2 * BLOCK_PIXELS) * sizeof(int16_t));
            p->worker_bytes = col + pk;
        }
    }
    *scratch_bytes_out = p->worker_bytes * (size_t)(n_workers > 0 ? n_workers : 1);
    *packed_bytes_out = packed;
    *plan_out = p;
    return EB_OK;
}

struct u8_run {
    const struct eb_conv2d_u8_plan *p;
    const struct eb_cpu_exec *ex;
    const uint8_t *x;
    int32_t x_zp;
    int32_t *y;
    const struct eb_conv2d_u8_requant *rq; /* set: bytes into yq instead of int32 into y */
    uint8_t *yq;
};

/*
 * Implicit im2col of one pixel block: col[k][j] (row stride nbp) for k = (c, kh, kw) over the
 * group's `icg` channels at xg and output pixels p0 + j, j < cnt; padded taps and j >= cnt hold
 * `zp`. Runs along an output row are copies (stride 1), the ISA's `gather2` (stride 2) or a
 * strided loop.
 */
static void im2col_u8(const struct eb_conv2d_desc *d, int64_t icg, const uint8_t *xg, uint8_t zp,
                      int64_t p0, int64_t cnt, int64_t nbp,
                      void (*gather2)(int64_t, const uint8_t *, uint8_t *), uint8_t *col)
{
    const int64_t iplane = d->ih * d->iw, khw = d->kh * d->kw;
    for (int64_t j = 0; j < cnt;) {
        const int64_t oh = (p0 + j) / d->ow, ow0 = (p0 + j) % d->ow;
        const int64_t seg = d->ow - ow0 < cnt - j ? d->ow - ow0 : cnt - j;
        for (int64_t kh = 0; kh < d->kh; kh++) {
            const int64_t ih = oh * d->stride_h - d->pad_t + kh * d->dil_h;
            for (int64_t kw = 0; kw < d->kw; kw++) {
                const int64_t iw0 = ow0 * d->stride_w - d->pad_l + kw * d->dil_w;
                /* Outputs o in [lo, hi) of the segment read inside the row. */
                int64_t lo, hi;
                eb_cpu__im2col_span(d, iw0, seg, &lo, &hi);
                uint8_t *dst = col + (kh * d->kw + kw) * nbp + j;
                const uint8_t *src = xg + ih * d->iw + iw0;
                for (int64_t c = 0; c < icg; c++, dst += khw * nbp, src += iplane) {
                    if (ih < 0 || ih >= d->ih) {
                        memset(dst, zp, (size_t)seg);
                        continue;
                    }
                    memset(dst, zp, (size_t)lo);
                    if (d->stride_w == 1)
                        memcpy(dst + lo, src + lo, (size_t)(hi - lo));
                    else if (d->stride_w == 2)
                        gather2(hi - lo, src + 2 * lo, dst + lo);
                    else
                        for (int64_t o = lo; o < hi; o++)
                            dst[o] = src[o * d->stride_w];
                    memset(dst + hi, zp, (size_t)(seg - hi));
                }
            }
        }
        j += seg;
    }
    if (cnt < nbp)
        for (int64_t k = 0; k < icg * khw; k++)
            memset(col + k * nbp + cnt, zp, (size_t)(nbp - cnt));
}

static void gemm_task(void *ctx, size_t task, int worker)
{
    const struct u8_run *r = ctx;
    const struct eb_conv2d_u8_plan *p = r->p;
    const struct eb_conv2d_desc *d = &p->d;
    const int64_t blk = (int64_t)task % p->n_blocks;
    const int64_t g = ((int64_t)task / p->n_blocks) % d->groups;
    const int64_t n = (int64_t)task / p->n_blocks / d->groups;
    const int64_t p0 = blk * BLOCK_PIXELS;
    const int64_t cnt = p->plane - p0 < BLOCK_PIXELS ? p->plane - p0 : BLOCK_PIXELS;
    const int64_t nbp = eb_cpu_round_up(cnt, EB_IGEMM_NR);
    uint8_t *col = (uint8_t *)r->ex->scratch + (size_t)worker * p->worker_bytes;
    int16_t *packed = (int16_t *)(col + eb_cpu_align64((size_t)(p->k * BLOCK_PIXELS)));
    const uint8_t *xg = r->x + (n * d->ic + g * p->icg) * d->ih * d->iw;
    const int is_1x1 = d->kh == 1 && d->kw == 1 && d->stride_h == 1 && d->stride_w == 1 &&
                       d->pad_t == 0 && d->pad_l == 0 && d->oh == d->ih && d->ow == d->iw;
    const int neon = p->kern == U8_KERN_NEON;
    if (is_1x1 && cnt == nbp) {
        if (neon)
            eb_cpu_igemm_pack_u8__neon(p->k, nbp, xg + p0, d->ih * d->iw, packed);
        else
            eb_cpu_igemm_pack_u8__avx2(p->k, nbp, xg + p0, d->ih * d->iw, packed);
    } else if (neon) {
        im2col_u8(d, p->icg, xg, (uint8_t)r->x_zp, p0, cnt, nbp, eb_cpu_gather2_u8__neon, col);
        eb_cpu_igemm_pack_u8__neon(p->k, nbp, col, nbp, packed);
    } else {
        im2col_u8(d, p->icg, xg, (uint8_t)r->x_zp, p0, cnt, nbp, eb_cpu_gather2_u8__avx2, col);
        eb_cpu_igemm_pack_u8__avx2(p->k, nbp, col, nbp, packed);
    }
    int32_t corr[EB_IGEMM_MR];
    for (int64_t ob = 0; ob < p->n_ob; ob++) {
        const int64_t m0 = ob * EB_IGEMM_MR;
        const int mr = (int)(p->ocg - m0 < EB_IGEMM_MR ? p->ocg - m0 : EB_IGEMM_MR);
        const int64_t oc0 = g * p->ocg + m0;
        for (int m = 0; m < mr; m++)
            corr[m] = (int32_t)((uint32_t)r->x_zp * (uint32_t)p->wsum[oc0 + m]);
        const int32_t *wp = p->w + (g * p->n_ob + ob) * p->kp * EB_IGEMM_MR;
        const int64_t yoff = (n * d->oc + oc0) * p->plane + p0;
        for (int64_t t = 0; t < nbp; t += EB_IGEMM_NR) {
            const int nr = (int)(cnt - t < EB_IGEMM_NR ? cnt - t : EB_IGEMM_NR);
            const int16_t *b = packed + t * p->kp * 2;
            if (r->rq == NULL && neon)
                eb_cpu_igemm_u8s8_4x16__neon(p->kp, wp, b, corr, r->y + yoff + t, p->plane, mr, nr);
            else if (r->rq == NULL)
                eb_cpu_igemm_u8s8_4x16__avx2(p->kp, wp, b, corr, r->y + yoff + t, p->plane, mr, nr);
            else if (neon)
                eb_cpu_igemm_u8s8_4x16_q__neon(p->kp, wp, b, corr, r->rq->mult + oc0,
                                               r->rq->bias + oc0, r->rq, r->yq + yoff + t, p->plane,
                                               mr, nr);
            else
                eb_cpu_igemm_u8s8_4x16_q__avx2(p->kp, wp, b, corr, r->rq->mult + oc0,
                                               r->rq->bias + oc0, r->rq, r->yq + yoff + t, p->plane,
                                               mr, nr);
        }
    }
}

/* One 8x32 tile of the AVX-512 kernels: `b` the tile's packed activations (pairs or quads). */
static void tile512(const struct u8_run *r, const struct eb_conv2d_u8_requant *rq, const void *b,
                    const int32_t *colsum, int64_t oc0, const int32_t *wp, const int32_t *corr,
                    int64_t yoff, int mr, int nr)
{
    const struct eb_conv2d_u8_plan *p = r->p;
    const int64_t ld = p->plane;
    switch (p->kern) {
    case U8_KERN_AVX512_VNNI_U8:
        if (rq == NULL)
            eb_cpu_igemm_u8s8x4_8x32__avx512vnni(p->kq, wp, b, colsum, p->wc + oc0, corr,
                                                 r->y + yoff, ld, mr, nr);
        else
            eb_cpu_igemm_u8s8x4_8x32_q__avx512vnni(p->kq, wp, b, colsum, p->wc + oc0, corr,
                                                   rq->mult + oc0, rq->bias + oc0, rq, r->yq + yoff,
                                                   ld, mr, nr);
        break;
    case U8_KERN_AVX512_VNNI:
        if (rq == NULL)
            eb_cpu_igemm_u8s8_8x32__avx512vnni(p->kp, wp, b, corr, r->y + yoff, ld, mr, nr);
        else
            eb_cpu_igemm_u8s8_8x32_q__avx512vnni(p->kp, wp, b, corr, rq->mult + oc0, rq->bias + oc0,
                                                 rq, r->yq + yoff, ld, mr, nr);
        break;
    default:
        if (rq == NULL)
            eb_cpu_igemm_u8s8_8x32__avx512(p->kp, wp, b, corr, r->y + yoff, ld, mr, nr);
        else
            eb_cpu_igemm_u8s8_8x32_q__avx512(p->kp, wp, b, corr, rq->mult + oc0, rq->bias + oc0, rq,
                                             r->yq + yoff, ld, mr, nr);
        break;
    }
}

/* AVX-512: one pixel block of one group and image, gathered once, times every OC block. */
static void gemm512_task(void *ctx, size_t task, int worker)
{
    const struct u8_run *r = ctx;
    const struct eb_conv2d_u8_plan *p = r->p;
    const struct eb_conv2d_desc *d = &p->d;
    const int64_t blk = (int64_t)task % p->n_blocks;
    const int64_t g = ((int64_t)task / p->n_blocks) % d->groups;
    const int64_t n = (int64_t)task / p->n_blocks / d->groups;
    const int64_t p0 = blk * p->blk;
    const int64_t cnt = p->plane - p0 < p->blk ? p->plane - p0 : p->blk;
    const int64_t nbp = eb_cpu_round_up(cnt, EB_IGEMM_NR);
    uint8_t *ws = (uint8_t *)r->ex->scratch + (size_t)worker * p->worker_bytes;
    int32_t *colsum = p->has_wc ? (int32_t *)(void *)(ws + p->packed_bytes) : NULL;
    uint8_t *tmp = ws + p->packed_bytes + p->colsum_bytes;
    const uint8_t *xg = r->x + (n * d->ic + g * p->icg) * d->ih * d->iw;
    const int u8 = p->kern == U8_KERN_AVX512_VNNI_U8;
    if (u8)
        eb_cpu_igemm_gather_u8x4__avx512vnni(d, p->icg, xg, (uint8_t)r->x_zp, p0, cnt, nbp, tmp,
                                             p->tmp_bytes, ws, colsum);
    else
        eb_cpu_igemm_gather_u8__avx512(d, p->icg, xg, (uint8_t)r->x_zp, p0, cnt, nbp, tmp,
                                       p->tmp_bytes, (int16_t *)(void *)ws);
    /* With VBMI the lookup table runs over the finished block instead of gathers per tile. */
    struct eb_conv2d_u8_requant rq_nolut;
    const struct eb_conv2d_u8_requant *rq = r->rq;
    if (rq != NULL && rq->lut != NULL && p->vbmi) {
        rq_nolut = *rq;
        rq_nolut.lut = NULL;
        rq = &rq_nolut;
    }
    const int64_t kstep = u8 ? p->kq : p->kp;                    /* quads or pairs per tile row */
    const size_t tile_bytes = (size_t)(kstep * 4 * EB_IGEMM_NR); /* both are 4 bytes wide */
    int32_t corr[TILE512_M];
    /* Columns outer: the block's two activation panels stay in L1 while the weights stream. */
    for (int64_t t = 0; t < nbp; t += TILE512_N) {
        const int nr = (int)(cnt - t < TILE512_N ? cnt - t : TILE512_N);
        const uint8_t *b = ws + (size_t)(t / EB_IGEMM_NR) * tile_bytes;
        for (int64_t ob = 0; ob < p->n_ob; ob += 2) {
            const int64_t m0 = ob * EB_IGEMM_MR;
            const int mr = (int)(p->ocg - m0 < TILE512_M ? p->ocg - m0 : TILE512_M);
            const int64_t oc0 = g * p->ocg + m0;
            for (int m = 0; m < mr; m++)
                corr[m] = (int32_t)((uint32_t)r->x_zp * (uint32_t)p->wsum[oc0 + m]);
            const int32_t *wp = p->w + (g * p->n_ob + ob) * kstep * EB_IGEMM_MR;
            tile512(r, rq, b, colsum != NULL ? colsum + t : NULL, oc0, wp, corr,
                    (n * d->oc + oc0) * p->plane + p0 + t, mr, nr);
        }
    }
    if (rq == &rq_nolut)
        eb_cpu_lut_u8__avx512vbmi(p->ocg, cnt, r->yq + (n * d->oc + g * p->ocg) * p->plane + p0,
                                  p->plane, r->rq->lut);
}

static void groupref_task(void *ctx, size_t task, int worker)
{
    const struct u8_run *r = ctx;
    const struct eb_conv2d_u8_plan *p = r->p;
    const struct eb_conv2d_desc *d = &p->d;
    const int64_t g = (int64_t)task % d->groups, n = (int64_t)task / d->groups;
    struct eb_conv2d_desc s = *d;
    (void)worker;
    s.n = 1;
    s.groups = 1;
    s.ic = p->icg;
    s.oc = p->ocg;
    const int64_t ocg0 = g * p->ocg;
    const size_t wel = (size_t)(ocg0 * p->k);
    const void *w = p->w_signed ? (const void *)((const int8_t *)p->raw + wel)
                                : (const void *)((const uint8_t *)p->raw + wel);
    /* The reference takes one zero point per call or one per output channel of the call. */
    eb_cpu_conv2d_u8_i32__ref(&s, r->x + (n * d->ic + g * p->icg) * d->ih * d->iw, r->x_zp, w,
                              p->w_signed, p->wzp + ocg0, (size_t)p->ocg,
                              r->y + (n * d->oc + ocg0) * p->plane);
}

static void dw_task(void *ctx, size_t task, int worker)
{
    const struct u8_run *r = ctx;
    const struct eb_conv2d_u8_plan *p = r->p;
    const struct eb_conv2d_desc *d = &p->d;
    const int64_t c = (int64_t)task % d->oc, n = (int64_t)task / d->oc;
    int16_t *pad = (int16_t *)((uint8_t *)r->ex->scratch + (size_t)worker * p->worker_bytes);
    eb_cpu_dwconv_u8_i32__avx2(d, r->x + (n * d->ic + c) * d->ih * d->iw, r->x_zp,
                               p->wdw + c * d->kh * d->kw, pad, r->y + (n * d->oc + c) * p->plane);
}

/* The task of a U8_ALGO_GEMM plan: 4x16 tiles (AVX2, NEON) or the AVX-512 8x32 ones. */
static eb_parallel_fn gemm_task_of(const struct eb_conv2d_u8_plan *p)
{
    return p->kern == U8_KERN_AVX2 || p->kern == U8_KERN_NEON ? gemm_task : gemm512_task;
}

void eb_cpu_conv2d_u8_run(const struct eb_conv2d_u8_plan *p, const struct eb_cpu_exec *ex,
                          const uint8_t *x, int32_t x_zp, int32_t *y)
{
    struct u8_run r = {.p = p, .ex = ex, .x = x, .x_zp = x_zp, .y = y};
    if (p->algo == U8_ALGO_DW)
        eb_threadpool_run(ex->pool, (size_t)(p->d.n * p->d.oc), dw_task, &r);
    else if (p->algo == U8_ALGO_GROUPREF)
        eb_threadpool_run(ex->pool, (size_t)(p->d.n * p->d.groups), groupref_task, &r);
    else
        eb_threadpool_run(ex->pool, (size_t)(p->d.n * p->d.groups * p->n_blocks), gemm_task_of(p),
                          &r);
}

int eb_cpu_conv2d_u8_fuses_requant(const struct eb_conv2d_u8_plan *p)
{
    return p != NULL && p->algo == U8_ALGO_GEMM;
}

const char *eb_cpu_conv2d_u8_kernel_name(const struct eb_conv2d_u8_plan *p)
{
    if (p->algo == U8_ALGO_DW)
        return "dw_avx2";
    if (p->algo == U8_ALGO_GROUPREF)
        return "groupref";
    switch (p->kern) {
    case U8_KERN_AVX2: return "avx2";
    case U8_KERN_AVX512: return "avx512";
    case U8_KERN_AVX512_VNNI: return "avx512vnni";
    case U8_KERN_AVX512_VNNI_U8: return "avx512vnni_u8";
    case U8_KERN_NEON: return "neon";
    }
    return "?";
}

void eb_cpu_conv2d_u8_run_requant(const struct eb_conv2d_u8_plan *p, const struct eb_cpu_exec *ex,
                                  const uint8_t *x, int32_t x_zp,
                                  const struct eb_conv2d_u8_requant *rq, uint8_t *y)
{
    struct u8_run r = {.p = p, .ex = ex, .x = x, .x_zp = x_zp, .rq = rq, .yq = y};
    eb_threadpool_run(ex->pool, (size_t)(p->d.n * p->d.groups * p->n_blocks), gemm_task_of(p), &r);
}

/* ---- DynamicQuantizeLinear ------------------------------------------------------------- */

#define DQ_MAX_TASKS 64
#define DQ_CHUNK     (1 << 16)

struct dq_run {
    const float *x;
    uint8_t *y;
    int64_t n, chunk;
    float scale, zp;
    int neon; /* NEON kernels, else AVX2 */
    float mn[DQ_MAX_TASKS], mx[DQ_MAX_TASKS];
};

static void dq_minmax_task(void *ctx, size_t task, int worker)
{
    struct dq_run *r = ctx;
    const int64_t i0 = (int64_t)task * r->chunk;
    const int64_t cnt = r->n - i0 < r->chunk ? r->n - i0 : r->chunk;
    float mn = 0.0f, mx = 0.0f;
    (void)worker;
    if (r->neon)
        eb_cpu_minmax_f32__neon(cnt, r->x + i0, &mn, &mx);
    else
        eb_cpu_minmax_f32__avx2(cnt, r->x + i0, &mn, &mx);
    r->mn[task] = mn;
    r->mx[task] = mx;
}

static void dq_quant_task(void *ctx, size_t task, int worker)
{
    struct dq_run *r = ctx;
    const int64_t i0 = (int64_t)task * r->chunk;
    const int64_t cnt = r->n - i0 < r->chunk ? r->n - i0 : r->chunk;
    (void)worker;
    if (r->neon)
        eb_cpu_quantize_u8__neon(cnt, r->x + i0, r->scale, r->zp, r->y + i0);
    else
        eb_cpu_quantize_u8__avx2(cnt, r->x + i0, r->scale, r->zp, r->y + i0);
}

void eb_cpu_dynamic_quantize_f32(const struct eb_cpu_exec *ex, int64_t n, const float *x,
                                 uint8_t *y, float *scale_out, uint8_t *zp_out)
{
    if (!isa_has_u8(ex->isa)) {
        eb_cpu_dynamic_quantize_f32__ref(n, x, y, scale_out, zp_out);
        return;
    }
    struct dq_run r = {.x = x, .y = y, .n = n, .neon = ex->isa == EB_CPU_ISA_NEON};
    int64_t tasks = (n + DQ_CHUNK - 1) / DQ_CHUNK;
    tasks = tasks < 1 ? 1 : (tasks > DQ_MAX_TASKS ? DQ_MAX_TASKS : tasks);
    r.chunk = (n + tasks - 1) / tasks;
    r.chunk = r.chunk < 1 ? 1 : r.chunk;
    tasks = (n + r.chunk - 1) / r.chunk;
    float mn = 0.0f, mx = 0.0f;
    if (tasks > 0) {
        eb_threadpool_run(ex->pool, (size_t)tasks, dq_minmax_task, &r);
        /* Minimum and maximum under the reference's strict comparisons do not depend on the
         * order the values are seen in (a lane starting at +0 never takes -0 or NaN). */
        for (int64_t t = 0; t < tasks; t++) {
            mn = r.mn[t] < mn ? r.mn[t] : mn;
            mx = r.mx[t] > mx ? r.mx[t] : mx;
        }
    }
    /* The scale and zero point exactly as the reference computes them. */
    const float scale = mx == mn ? 1.0f : (mx - mn) / 255.0f;
    float z = 0.0f - mn / scale;
    z = z < 0.0f ? 0.0f : (z > 255.0f ? 255.0f : z);
    r.zp = nearbyintf(z);
    r.scale = scale;
    if (tasks > 0)
        eb_threadpool_run(ex->pool, (size_t)tasks, dq_quant_task, &r);
    *scale_out = scale;
    *zp_out = (uint8_t)r.zp;
}
