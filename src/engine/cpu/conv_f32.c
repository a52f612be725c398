/*
 * Fast float convolution (fast.h) on the SGEMM micro-kernels (gemm.c):
 *
 *   per image and group: C[M = OC/g, N] = A[M, K = IC/g*KH*KW] · B[K, N]
 *
 * A (weights) is packed into MR-row panels at prepare. B is never materialised or packed: every
 * row of B is a shifted view of the input, and the direct micro-kernels read row p at
 * b + boff[p] (offsets computed at prepare):
 *
 *  - 1x1, stride 1, no padding ("pointwise"): B row (c) is input plane c itself, N = OH*OW, and
 *    the output tiles are written straight into y (a partial last tile is packed).
 *  - anything else: each image's input is first copied, channel by channel in parallel, into a
 *    padded buffer split into stride phases: plane (c, py, px)[i][j] = xpad[c][i*sh + py]
 *    [j*sw + px], Hph x Wph with Wph = OW + (KW-1)*dw/sw. Tap (ky, kx) of channel c then reads
 *    plane (c, ky*dh % sh, kx*dw % sw) shifted by (ky*dh/sh) rows and (kx*dw/sw) columns, so
 *    over an "extended" output grid of OH x Wph columns every B row is contiguous. The
 *    (Wph - OW) extra columns per output row are computed and dropped: the task accumulates its
 *    MC x NC block in a per-worker buffer and the epilogue copies the valid columns into y.
 *
 * The padded buffer is filled band by band (output rows whose phase rows take ~256 KiB), each
 * band's GEMM right after its padding, so B is read from L2 rather than from memory.
 *
 * Blocking: KC <= 320 (K split evenly), MC <= 288 rows (the A block stays in L2), NC columns
 * and then MC shrunk until there are enough tasks (group x M block x N block) for every worker
 * to get several.
 *
 * Channel-blocked ("channels in the vector lanes", as ONNX Runtime's NCHWc convolutions; where
 * the ISA has the tile, gemm.h eb_conv_cl_fn): ungrouped convs with a kernel larger than 1x1 and
 * at least one full block of input channels. The input is copied once per image into a padded
 * [IC/CB][rows][columns][CB] buffer (8x8 transposes); a tile is R output pixels of one row x OB
 * output channels, its accumulators hold the output channels in the lanes, and each step loads
 * OB weights and broadcasts one input value per pixel, so the tile's input is a few cache lines
 * per tap row whatever the stride (the implicit GEMM's B rows for stride 2 are spread over four
 * phase planes and no longer fit L1). A task computes a few output rows of one OB block into
 * per-worker [pixel][channel] rows, transposes them into y's planes and runs the epilogue there.
 * Stride-2 3x3 convs run 1.1-1.4x faster this way, stride-1 3x3 ~1.1x (bench_kernels). An
 * input of fewer than CB channels is laid out planar (cb = 1: one padded plane per block); the
 * 3-channel first layer runs as fast that way as on the GEMM, and AUTO keeps the GEMM. Two
 * relatives:
 *  - depthwise on small planes (<= 40x40): per channel block, each tap one weight vector times
 *    one input vector per pixel (uk.dw_cl), through the same packed input and transposes;
 *  - pointwise on small planes (<= 16x16, where the GEMM's column tiles are mostly tail): the
 *    channel-blocked tile reading the NCHW input in place, pixels in the tile rows (uk.pw_cl),
 *    no packing; larger 1x1 convs stay on the GEMM.
 *
 * Depthwise convs (groups == IC == OC; the GEMM would be 1 x 9 x N) use the same padded phase
 * planes: one task per channel sums the KH*KW shifted views of its planes, weighted, over the
 * extended grid (uk.dw_rows), and the epilogue copies the valid columns into y.
 */
#include <string.h>

#include "engine/cpu/fast.h"
#include "engine/cpu/gemm.h"

#define CONV_KC_MAX     320
#define CONV_MC_MAX     288
#define CONV_NC_MAX     256
#define CONV_CBUF_MAX   (48 * 1024)  /* floats of a task's C block (extended grid) */
#define CONV_BAND_BYTES (256 * 1024) /* phase rows padded per band: B stays in L2 for its GEMM */
#define CONV_CL_BUF     (8 * 1024)   /* floats of a blocked task's [pixel][channel] rows */
/* Output planes up to which the channel-blocked forms beat the others (bench_kernels, AVX2 and
 * AVX-512): pointwise @10 0.7x the GEMM's time, @20 1.1x; depthwise @20 0.4-0.6x, @40 0.95x,
 * @80 1.0-1.2x. */
#define CONV_PW_CL_MAX_N (16 * 16)
#define CONV_DW_CL_MAX_N (40 * 40)

enum conv_kind {
    CONV_POINTWISE,
    CONV_PADDED,
    CONV_DEPTHWISE,
    CONV_BLOCKED,
    CONV_DW_BLOCKED,
    CONV_PW_BLOCKED
};

struct eb_conv2d_f32_plan {
    struct eb_conv2d_desc d;
    struct eb_sgemm_ukernel uk;
    enum conv_kind kind;
    int64_t m, k, n;      /* per group: OC/g, IC/g*KH*KW, columns (OH*OW, or OH*Wph: padded) */
    int64_t kc, mc, nc;   /* block sizes (kc: K split evenly; mc multiple of MR, nc of NR) */
    int64_t kb, mb, nb;   /* blocks per dimension */
    int64_t m_panels;     /* MR panels per group */
    int64_t hph, wph;     /* padded: phase plane rows and columns */
    int64_t band_rows;    /* padded: output rows per band (pad, then GEMM, band by band) */
    int64_t chan_stride;  /* floats per input channel in B's source (plane or sh*sw phases) */
    int32_t *boff;        /* [K] offset of B row k from the group's first channel */
    float *a;             /* [groups][m_panels][K][MR] (GEMM) or [OC][KH*KW] (depthwise) */
    float *bias;          /* [OC] */
    int n_workers;        /* scratch was sized for this many */
    size_t shared_floats; /* padded: the phase buffer of one image, slack included */
    size_t worker_floats; /* per-worker scratch slice: tail panel or C block */
    size_t dw_planes;     /* depthwise: floats of a worker's phase planes (+ slack) */
    /* blocked: the input as [icb][hp][wp][cb] (zero padding around it; cb = CB, or 1 for an
     * input of fewer than CB channels: "planar"), weights in a as [ocb][icb][taps][CB][OB]
     * (depthwise: [icb][taps][CB], OB = CB), tap offsets in boff; tasks of rb output rows of
     * one OB block, band by band (the band's task count is computed per band at run time).
     * Pointwise blocked: tasks of rb pixels, nrb of them per OB block. */
    int64_t cb, icb, ocb, ob, hp, wp, owr, rb, nrb;
    int cn_last;
    int in_cl, out_cl; /* blocked kinds: input / output (and residual) NCHWc (fast.h) */
};

static void *arena_alloc64(struct eb_ir_arena *arena, size_t bytes)
{
    unsigned char *p = eb_ir_arena_alloc(arena, bytes + 64);
    if (p == NULL)
        return NULL;
    return p + ((64u - ((uintptr_t)p & 63u)) & 63u);
}

/* Padded geometry and the B row offsets; 0 when an offset does not fit in int32. */
static int plan_offsets(struct eb_conv2d_f32_plan *p, struct eb_ir_arena *arena, int *nomem)
{
    const struct eb_conv2d_desc *d = &p->d;
    const int64_t taps = d->kh * d->kw;
    const int64_t sh = d->stride_h, sw = d->stride_w;
    if (p->kind == CONV_POINTWISE) {
        p->hph = d->ih;
        p->wph = d->iw;
        p->chan_stride = d->ih * d->iw;
    } else {
        p->hph = d->oh + (d->kh - 1) * d->dil_h / sh;
        p->wph = d->ow + (d->kw - 1) * d->dil_w / sw;
        p->chan_stride = sh * sw * p->hph * p->wph;
    }
    const int64_t slack = p->uk.nr + p->wph;
    if (d->ic * p->chan_stride + slack > INT32_MAX)
        return 0;
    if ((p->boff = arena_alloc64(arena, (size_t)p->k * sizeof(int32_t))) == NULL) {
        *nomem = 1;
        return 0;
    }
    const int64_t pp = p->hph * p->wph;
    for (int64_t k = 0; k < p->k; k++) {
        const int64_t c = k / taps, ky = k % taps / d->kw, kx = k % d->kw;
        int64_t off = c * p->chan_stride;
        if (p->kind != CONV_POINTWISE) {
            const int64_t yy = ky * d->dil_h, xx = kx * d->dil_w;
            off += (yy % sh * sw + xx % sw) * pp + yy / sh * p->wph + xx / sw;
        }
        p->boff[k] = (int32_t)off;
    }
    p->shared_floats =
        p->kind != CONV_POINTWISE
            ? eb_cpu_align64((size_t)(d->ic * p->chan_stride + slack) * sizeof(float)) /
                  sizeof(float)
            : 0;
    return 1;
}

/* Floats of a blocked plan's packed weights (icb, ocb and ob set). */
static size_t blocked_weight_floats(const struct eb_conv2d_f32_plan *p)
{
    const int64_t taps = p->d.kh * p->d.kw, cb = p->uk.cl_cb;
    if (p->kind == CONV_PW_BLOCKED)
        return (size_t)(p->ocb * p->d.ic * p->ob);
    return p->kind == CONV_DW_BLOCKED ? (size_t)(p->icb * taps * cb)
                                      : (size_t)(p->ocb * p->icb * taps * cb * p->ob);
}

/* Pointwise with the pixels in the tile rows: weights [ocb][IC][OB]; tasks of rb pixels of one
 * OB block (the input is read in place, nothing is shared). */
static int prepare_pw_blocked(struct eb_conv2d_f32_plan *p, const float *w,
                              struct eb_ir_arena *arena)
{
    const struct eb_conv2d_desc *d = &p->d;
    const int64_t ob = p->uk.cl_ob, r = p->uk.cl_r, n = d->oh * d->ow;
    p->ob = ob;
    p->ocb = (d->oc + ob - 1) / ob;
    const size_t af = blocked_weight_floats(p);
    if ((p->a = arena_alloc64(arena, af * sizeof(float))) == NULL)
        return 0;
    memset(p->a, 0, af * sizeof(float));
    for (int64_t o = 0; o < d->oc; o++)
        for (int64_t i = 0; i < d->ic; i++)
            p->a[(o / ob * d->ic + i) * ob + o % ob] = w[o * d->ic + i];
    int64_t np = CONV_CL_BUF / ob / r * r;
    np = np < r ? r : np;
    np = np < eb_cpu_round_up(n, r) ? np : eb_cpu_round_up(n, r);
    while (np > r && p->ocb * ((n + np - 1) / np) < 4 * p->n_workers)
        np = eb_cpu_round_up(np / 2, r);
    p->rb = np;
    p->nrb = (n + np - 1) / np;
    p->shared_floats = 0;
    p->worker_floats = eb_cpu_align64((size_t)(np * ob) * sizeof(float)) / sizeof(float);
    return 1;
}

/* Channel-blocked plan: geometry, tap offsets, packed weights, task rows; 0 when an index
 * would not fit in int32 (the GEMM path runs then). */
static int prepare_blocked(struct eb_conv2d_f32_plan *p, const float *w, struct eb_ir_arena *arena,
                           int *nomem)
{
    const struct eb_conv2d_desc *d = &p->d;
    const int dw = p->kind == CONV_DW_BLOCKED;
    const int64_t cbw = p->uk.cl_cb, ob = dw ? cbw : p->uk.cl_ob, taps = d->kh * d->kw;
    const int64_t cb = !dw && d->ic < cbw ? 1 : cbw;
    p->cb = cb;
    p->ob = ob;
    p->icb = (d->ic + cb - 1) / cb;
    p->ocb = (d->oc + ob - 1) / ob;
    p->cn_last = (int)(d->ic - (p->icb - 1) * cb);
    p->owr = eb_cpu_round_up(d->ow, p->uk.cl_r);
    p->hp = (d->oh - 1) * d->stride_h + (d->kh - 1) * d->dil_h + 1;
    p->wp = (p->owr - 1) * d->stride_w + (d->kw - 1) * d->dil_w + 1;
    if (p->icb * p->hp * p->wp * cb > INT32_MAX)
        return 0;
    if ((p->boff = arena_alloc64(arena, (size_t)taps * sizeof(int32_t))) == NULL) {
        *nomem = 1;
        return 0;
    }
    for (int64_t t = 0; t < taps; t++)
        p->boff[t] = (int32_t)(((t / d->kw) * d->dil_h * p->wp + (t % d->kw) * d->dil_w) * cb);
    const size_t af = blocked_weight_floats(p);
    if ((p->a = arena_alloc64(arena, af * sizeof(float))) == NULL) {
        *nomem = 1;
        return 0;
    }
    memset(p->a, 0, af * sizeof(float));
    if (dw)
        for (int64_t i = 0; i < d->ic; i++)
            for (int64_t t = 0; t < taps; t++)
                p->a[(i / cb * taps + t) * cb + i % cb] = w[i * taps + t];
    else
        for (int64_t o = 0; o < d->oc; o++)
            for (int64_t i = 0; i < d->ic; i++)
                for (int64_t t = 0; t < taps; t++)
                    p->a[(((o / ob * p->icb + i / cb) * taps + t) * cbw + i % cb) * ob + o % ob] =
                        w[(o * d->ic + i) * taps + t];
    /* Rows per task: the [pixel][channel] rows fit CONV_CL_BUF, and enough tasks for every
     * worker to get several. */
    const int64_t row_floats = p->owr * ob;
    p->rb = CONV_CL_BUF / row_floats < 1 ? 1 : CONV_CL_BUF / row_floats;
    p->rb = p->rb < d->oh ? p->rb : d->oh;
    while (p->rb > 1 && p->ocb * ((d->oh + p->rb - 1) / p->rb) < 4 * p->n_workers)
        p->rb = (p->rb + 1) / 2;
    /* Bands of output rows whose input rows (all channel blocks) take ~CONV_BAND_BYTES: each
     * band is packed right before its tiles read it, from L2; whole tasks, enough of them. */
    const int64_t row_bytes = p->icb * p->wp * cb * (int64_t)sizeof(float) * d->stride_h;
    int64_t band = CONV_BAND_BYTES / row_bytes;
    const int64_t min_band = p->rb * ((4 * p->n_workers + p->ocb - 1) / p->ocb);
    band = band < min_band ? min_band : band;
    band = eb_cpu_round_up(band < 1 ? 1 : band, p->rb);
    p->band_rows = band < d->oh ? band : d->oh;
    p->shared_floats =
        eb_cpu_align64((size_t)(p->icb * p->hp * p->wp * cb) * sizeof(float)) / sizeof(float);
    p->worker_floats = eb_cpu_align64((size_t)(p->rb * row_floats) * sizeof(float)) / sizeof(float);
    return 1;
}

static int is_depthwise(const struct eb_conv2d_desc *d)
{
    return d->groups > 1 && d->groups == d->ic && d->groups == d->oc;
}

static int is_pointwise(const struct eb_conv2d_desc *d)
{
    return d->kh == 1 && d->kw == 1 && d->stride_h == 1 && d->stride_w == 1 && d->pad_t == 0 &&
           d->pad_l == 0 && d->oh == d->ih && d->ow == d->iw;
}

int eb_cpu_conv2d_f32_cl_block(const struct eb_conv2d_desc *d, enum eb_cpu_isa isa)
{
    struct eb_sgemm_ukernel uk;
    if (!eb_cpu__sgemm_select(isa, &uk) || uk.direct == NULL || uk.conv_cl == NULL ||
        uk.cl_epilogue == NULL || d->n < 1 || d->oh < 1 || d->ow < 1)
        return 0;
    if (d->groups != 1 && !(is_depthwise(d) && uk.dw_cl != NULL))
        return 0;
    /* the blocked geometry's int32 indices (prepare_blocked) */
    const int64_t cb = uk.cl_cb, owr = eb_cpu_round_up(d->ow, uk.cl_r);
    const int64_t hp = (d->oh - 1) * d->stride_h + (d->kh - 1) * d->dil_h + 1;
    const int64_t wp = (owr - 1) * d->stride_w + (d->kw - 1) * d->dil_w + 1;
    if ((d->ic + cb - 1) / cb * hp * wp * cb > INT32_MAX)
        return 0;
    return (int)cb;
}

enum eb_status eb_cpu_conv2d_f32_prepare(const struct eb_conv2d_desc *d, const float *w,
                                         const float *bias, enum eb_cpu_isa isa, int n_workers,
                                         unsigned layout, struct eb_ir_arena *arena,
                                         struct eb_conv2d_f32_plan **plan_out,
                                         size_t *scratch_bytes_out, size_t *packed_bytes_out)
{
    return eb_cpu__conv2d_f32_prepare_as(d, w, bias, isa, n_workers, EB_CONV_F32_AUTO, layout,
                                         arena, plan_out, scratch_bytes_out, packed_bytes_out);
}

enum eb_status eb_cpu__conv2d_f32_prepare_as(const struct eb_conv2d_desc *d, const float *w,
                                             const float *bias, enum eb_cpu_isa isa, int n_workers,
                                             enum eb_conv_f32_algo algo, unsigned layout,
                                             struct eb_ir_arena *arena,
                                             struct eb_conv2d_f32_plan **plan_out,
                                             size_t *scratch_bytes_out, size_t *packed_bytes_out)
{
    struct eb_sgemm_ukernel uk;
    *plan_out = NULL;
    *scratch_bytes_out = 0;
    *packed_bytes_out = 0;
    if (!eb_cpu__sgemm_select(isa, &uk) || uk.direct == NULL || d->n < 1 || d->oh < 1 || d->ow < 1)
        return EB_OK;
    struct eb_conv2d_f32_plan *p = eb_ir_arena_alloc(arena, sizeof(*p));
    if (p == NULL)
        return EB_ERR_NOMEM;
    memset(p, 0, sizeof(*p));
    const int workers = n_workers < 1 ? 1 : n_workers;
    p->d = *d;
    p->uk = uk;
    p->n_workers = workers;
    p->m = d->oc / d->groups;
    p->k = d->ic / d->groups * d->kh * d->kw;
    p->bias = arena_alloc64(arena, (size_t)d->oc * sizeof(float));
    if (p->bias == NULL)
        return EB_ERR_NOMEM;
    if (bias != NULL)
        memcpy(p->bias, bias, (size_t)d->oc * sizeof(float));
    size_t packed = (size_t)d->oc * sizeof(float);
    const int depthwise = is_depthwise(d), pointwise = is_pointwise(d);
    int nomem = 0;
    if (layout != 0) {
        if (eb_cpu_conv2d_f32_cl_block(d, isa) == 0)
            return EB_ERR_INVALID_ARG; /* the layout pass asked eb_cpu_conv2d_f32_cl_block */
        algo = EB_CONV_F32_BLOCKED;
        p->in_cl = (layout & EB_CONV_IN_CL) != 0;
        p->out_cl = (layout & EB_CONV_OUT_CL) != 0;
    }
    if (algo != EB_CONV_F32_GEMM && pointwise && d->groups == 1 && uk.pw_cl != NULL &&
        (algo == EB_CONV_F32_BLOCKED || d->oh * d->ow <= CONV_PW_CL_MAX_N)) {
        p->kind = CONV_PW_BLOCKED;
        if (!prepare_pw_blocked(p, w, arena))
            return EB_ERR_NOMEM;
        *plan_out = p;
        *scratch_bytes_out = (size_t)workers * p->worker_floats * sizeof(float);
        *packed_bytes_out = packed + blocked_weight_floats(p) * sizeof(float);
        return EB_OK;
    }
    if (algo != EB_CONV_F32_GEMM &&
        ((depthwise && uk.dw_cl != NULL &&
          (algo == EB_CONV_F32_BLOCKED || d->oh * d->ow <= CONV_DW_CL_MAX_N)) ||
         (!depthwise && uk.conv_cl != NULL && d->groups == 1 &&
          (algo == EB_CONV_F32_BLOCKED || (d->kh * d->kw > 1 && d->ic >= uk.cl_cb))))) {
        p->kind = depthwise ? CONV_DW_BLOCKED : CONV_BLOCKED;
        if (prepare_blocked(p, w, arena, &nomem)) {
            *plan_out = p;
            *scratch_bytes_out =
                (p->shared_floats + (size_t)workers * p->worker_floats) * sizeof(float);
            *packed_bytes_out = packed + blocked_weight_floats(p) * sizeof(float) +
                                (size_t)(d->kh * d->kw) * sizeof(int32_t);
            return EB_OK;
        }
        if (nomem)
            return EB_ERR_NOMEM;
    }
    if (layout != 0)
        return EB_ERR_INVALID_ARG; /* not reached: eb_cpu_conv2d_f32_cl_block checked the same */
    if (depthwise) {
        p->kind = CONV_DEPTHWISE;
        const size_t wb = (size_t)(d->oc * d->kh * d->kw) * sizeof(float);
        if ((p->a = arena_alloc64(arena, wb)) == NULL)
            return EB_ERR_NOMEM;
        memcpy(p->a, w, wb);
        if (!plan_offsets(p, arena, &nomem))
            return nomem ? EB_ERR_NOMEM : EB_OK;
        p->n = d->oh * p->wph;
        /* Per worker: one channel's phase planes (+ the slack its last vectors read) and its
         * extended output plane, whole vectors; nothing shared. */
        p->shared_floats = 0;
        p->dw_planes =
            eb_cpu_align64((size_t)(p->chan_stride + p->uk.nr + p->wph) * sizeof(float)) /
            sizeof(float);
        p->worker_floats =
            p->dw_planes +
            eb_cpu_align64((size_t)eb_cpu_round_up(p->n, 32) * sizeof(float)) / sizeof(float);
        *plan_out = p;
        *scratch_bytes_out =
            (p->shared_floats + (size_t)workers * p->worker_floats) * sizeof(float);
        *packed_bytes_out = packed + wb + (size_t)p->k * sizeof(int32_t);
        return EB_OK;
    }
    p->kind = pointwise ? CONV_POINTWISE : CONV_PADDED;
    if (!plan_offsets(p, arena, &nomem))
        return nomem ? EB_ERR_NOMEM : EB_OK; /* offsets past int32: the reference runs */
    p->n = pointwise ? d->oh * d->ow : d->oh * p->wph;
    p->kb = (p->k + CONV_KC_MAX - 1) / CONV_KC_MAX;
    p->kc = (p->k + p->kb - 1) / p->kb;
    p->m_panels = (p->m + uk.mr - 1) / uk.mr;
    p->mb = (p->m + CONV_MC_MAX - 1) / CONV_MC_MAX;
    p->mc = eb_cpu_round_up((p->m + p->mb - 1) / p->mb, uk.mr);
    p->mb = (p->m + p->mc - 1) / p->mc;
    int64_t nc_max = CONV_NC_MAX;
    if (!pointwise) {
        const int64_t fit = CONV_CBUF_MAX / p->mc / uk.nr * uk.nr;
        nc_max = fit < uk.nr ? uk.nr : fit < nc_max ? fit : nc_max;
    }
    /* Padded: bands of output rows whose phase rows (all channels) fit CONV_BAND_BYTES, but
     * wide enough for every worker to get several tiles. */
    p->band_rows = d->oh;
    if (!pointwise) {
        const int64_t row_bytes =
            d->ic * d->stride_h * d->stride_w * p->wph * (int64_t)sizeof(float);
        const int64_t min_rows = (8 * workers * uk.nr + p->wph - 1) / p->wph;
        int64_t rows = CONV_BAND_BYTES / row_bytes - (p->hph - d->oh);
        rows = rows < min_rows ? min_rows : rows;
        p->band_rows = rows < d->oh ? rows : d->oh;
    }
    const int64_t band_cols = pointwise ? p->n : p->band_rows * p->wph;
    p->nc = eb_cpu_round_up(band_cols, uk.nr) < nc_max ? eb_cpu_round_up(band_cols, uk.nr) : nc_max;
    /* Enough tasks for dynamic balancing: ~4 per worker, NC no smaller than 2 NR. */
    for (;;) {
        p->nb = (band_cols + p->nc - 1) / p->nc;
        if (d->groups * p->mb * p->nb >= 4 * workers || p->nc <= 2 * uk.nr)
            break;
        p->nc = eb_cpu_round_up(p->nc / 2, uk.nr);
    }
    /* Few columns (deep layers): split M as well; B is read in place, so an M block more costs
     * no packing, only a sweep of its columns. */
    while (d->groups * p->mb * p->nb < 4 * workers && p->mc > 4 * uk.mr) {
        p->mc = eb_cpu_round_up((p->mc + 1) / 2, uk.mr);
        p->mb = (p->m + p->mc - 1) / p->mc;
    }
    /* Packed weights: per group, panels of MR rows (zero rows past M), k-major. */
    const size_t ab = (size_t)(d->groups * p->m_panels * p->k * uk.mr) * sizeof(float);
    if ((p->a = arena_alloc64(arena, ab)) == NULL)
        return EB_ERR_NOMEM;
    for (int64_t g = 0; g < d->groups; g++)
        eb_cpu__pack_a(uk.mr, p->m, p->k, w + g * p->m * p->k, p->k,
                       p->a + g * p->m_panels * p->k * uk.mr);
    /* Per worker: the packed tail panel (pointwise) or the C block (padded). */
    const size_t wf = pointwise ? (size_t)(p->kc * uk.nr) : (size_t)(p->mc * p->nc);
    p->worker_floats = eb_cpu_align64(wf * sizeof(float)) / sizeof(float);
    *plan_out = p;
    *scratch_bytes_out = (p->shared_floats + (size_t)workers * p->worker_floats) * sizeof(float);
    *packed_bytes_out = packed + ab + (size_t)p->k * sizeof(int32_t);
    return EB_OK;
}

/* ---- run -------------------------------------------------------------------------------- */

struct conv_ctx {
    const struct eb_conv2d_f32_plan *p;
    const struct eb_epilogue *epi;
    const float *in, *res;  /* this image */
    float *y;               /* this image */
    float *shared;          /* padded: the phase buffer */
    float *workers;         /* per-worker slices */
    int64_t pad_r0, pad_r1; /* padded, blocked: the (phase) rows this band fills */
    int64_t q0, q1, nb;     /* padded: the band's extended columns and their N blocks;
                             * blocked: its output rows and their tasks per OB block */
};

/* Rows [r0, r1) of the sh*sw phase planes of one input channel x into dst (zeros outside x). */
static void pad_channel(const struct eb_conv2d_f32_plan *p, const float *x, float *dst, int64_t r0,
                        int64_t r1)
{
    const struct eb_conv2d_desc *d = &p->d;
    const int64_t sh = d->stride_h, sw = d->stride_w;
    for (int64_t py = 0; py < sh; py++) {
        for (int64_t px = 0; px < sw; px++) {
            /* columns j of this phase read input column j*sw + px - pad_l: [jlo, jhi) inside */
            const int64_t x0 = px - d->pad_l;
            int64_t jlo = x0 >= 0 ? 0 : (-x0 + sw - 1) / sw;
            int64_t jhi = x0 >= d->iw ? 0 : (d->iw - x0 + sw - 1) / sw;
            jlo = jlo < p->wph ? jlo : p->wph;
            jhi = jhi < p->wph ? jhi : p->wph;
            jhi = jhi < jlo ? jlo : jhi;
            float *row = dst + (py * sw + px) * p->hph * p->wph + r0 * p->wph;
            for (int64_t i = r0; i < r1; i++, row += p->wph) {
                const int64_t iy = i * sh + py - d->pad_t;
                if (iy < 0 || iy >= d->ih) {
                    memset(row, 0, (size_t)p->wph * sizeof(float));
                    continue;
                }
                const float *xr = x + iy * d->iw + x0;
                memset(row, 0, (size_t)jlo * sizeof(float));
                if (sw == 1) {
                    memcpy(row + jlo, xr + jlo, (size_t)(jhi - jlo) * sizeof(float));
                } else if (sw == 2) {
                    p->uk.gather2(jhi - jlo, xr + 2 * jlo, row + jlo);
                } else {
                    for (int64_t j = jlo; j < jhi; j++)
                        row[j] = xr[j * sw];
                }
                memset(row + jhi, 0, (size_t)(p->wph - jhi) * sizeof(float));
            }
        }
    }
}

/* Padded: this band's phase rows of input channel `task` into the shared buffer. */
static void pad_task(void *vctx, size_t task, int worker)
{
    const struct conv_ctx *c = vctx;
    const struct eb_conv2d_f32_plan *p = c->p;
    const struct eb_conv2d_desc *d = &p->d;
    const int64_t ch = (int64_t)task;
    (void)worker;
    pad_channel(p, c->in + ch * d->ih * d->iw, c->shared + ch * p->chan_stride, c->pad_r0,
                c->pad_r1);
    if (ch == d->ic - 1 && c->pad_r1 == p->hph) /* the slack the last tiles read past the planes */
        memset(c->shared + d->ic * p->chan_stride, 0,
               (p->shared_floats - (size_t)(d->ic * p->chan_stride)) * sizeof(float));
}

/* Task index -> group, M block, N block (row/column ranges). */
struct task_range {
    int64_t g, m0, mlen, q0, nlen;
};

static struct task_range task_range(const struct conv_ctx *c, size_t task)
{
    const struct eb_conv2d_f32_plan *p = c->p;
    struct task_range r;
    int64_t t = (int64_t)task;
    const int64_t nb = t % c->nb;
    t /= c->nb;
    const int64_t mb = t % p->mb;
    r.g = t / p->mb;
    r.m0 = mb * p->mc;
    r.mlen = p->m - r.m0 < p->mc ? p->m - r.m0 : p->mc;
    r.q0 = c->q0 + nb * p->nc;
    r.nlen = c->q1 - r.q0 < p->nc ? c->q1 - r.q0 : p->nc;
    return r;
}

static void pointwise_task(void *vctx, size_t task, int worker)
{
    const struct conv_ctx *c = vctx;
    const struct eb_conv2d_f32_plan *p = c->p;
    const struct task_range r = task_range(c, task);
    const int nr = p->uk.nr, mr = p->uk.mr;
    const int64_t icg = p->d.ic / p->d.groups;
    const float *xg = c->in + r.g * icg * p->chan_stride;
    const size_t yoff = (size_t)((r.g * p->m + r.m0) * p->n + r.q0);
    const float *apanels = p->a + (r.g * p->m_panels + r.m0 / mr) * p->k * mr;
    const int64_t full = r.nlen / nr * nr, tw = r.nlen - full;
    float *tail = tw > 0 ? c->workers + (size_t)worker * p->worker_floats : NULL;
    for (int64_t kb = 0; kb < p->kb; kb++) {
        const int64_t k0 = kb * p->kc, kc = p->k - k0 < p->kc ? p->k - k0 : p->kc;
        if (tail != NULL)
            for (int64_t kk = 0; kk < kc; kk++) {
                float *t = tail + kk * nr;
                memcpy(t, xg + (k0 + kk) * p->chan_stride + r.q0 + full,
                       (size_t)tw * sizeof(float));
                memset(t + tw, 0, (size_t)(nr - tw) * sizeof(float));
            }
        const int last = kb == p->kb - 1;
        eb_cpu__sgemm_block_direct(&p->uk, r.mlen, r.nlen, kc, apanels + k0 * mr, p->k * mr,
                                   xg + r.q0, p->boff + k0, tail, c->y + yoff, p->n, kb > 0,
                                   last ? c->epi : NULL, p->bias + r.g * p->m + r.m0,
                                   c->res != NULL ? c->res + yoff : NULL);
    }
}

static void padded_task(void *vctx, size_t task, int worker)
{
    const struct conv_ctx *c = vctx;
    const struct eb_conv2d_f32_plan *p = c->p;
    const struct eb_conv2d_desc *d = &p->d;
    const struct task_range r = task_range(c, task);
    const int mr = p->uk.mr;
    const int64_t icg = d->ic / d->groups, plane = d->oh * d->ow;
    const float *bg = c->shared + r.g * icg * p->chan_stride + r.q0;
    const float *apanels = p->a + (r.g * p->m_panels + r.m0 / mr) * p->k * mr;
    float *cbuf = c->workers + (size_t)worker * p->worker_floats;
    for (int64_t kb = 0; kb < p->kb; kb++) {
        const int64_t k0 = kb * p->kc, kc = p->k - k0 < p->kc ? p->k - k0 : p->kc;
        eb_cpu__sgemm_block_direct(&p->uk, r.mlen, r.nlen, kc, apanels + k0 * mr, p->k * mr, bg,
                                   p->boff + k0, NULL, cbuf, p->nc, kb > 0, NULL, NULL, NULL);
    }
    /* The valid columns of each output row in the block, through the epilogue into y. */
    const size_t ch0 = (size_t)((r.g * p->m + r.m0) * plane);
    const float *bias = p->bias + r.g * p->m + r.m0;
    for (int64_t q = r.q0, end = r.q0 + r.nlen; q < end;) {
        const int64_t oy = q / p->wph, ox = q % p->wph;
        const int64_t run = p->wph - ox < end - q ? p->wph - ox : end - q;
        const int64_t valid = ox < d->ow ? (d->ow - ox < run ? d->ow - ox : run) : 0;
        if (valid > 0) {
            const size_t yo = ch0 + (size_t)(oy * d->ow + ox);
            p->uk.epilogue(c->epi, bias, r.mlen, valid, cbuf + (q - r.q0), p->nc, c->y + yo, plane,
                           c->res != NULL ? c->res + yo : NULL, plane);
        }
        q += run;
    }
}

/* Depthwise: pads one channel into the worker's phase planes, sums their shifted views over
 * the extended grid, then copies the valid columns through the epilogue into y. */
static void depthwise_task(void *vctx, size_t task, int worker)
{
    const struct conv_ctx *c = vctx;
    const struct eb_conv2d_f32_plan *p = c->p;
    const struct eb_conv2d_desc *d = &p->d;
    const int64_t ch = (int64_t)task, plane = d->oh * d->ow;
    float *planes = c->workers + (size_t)worker * p->worker_floats;
    float *ext = planes + p->dw_planes;
    pad_channel(p, c->in + ch * d->ih * d->iw, planes, 0, p->hph);
    memset(planes + p->chan_stride, 0, (p->dw_planes - (size_t)p->chan_stride) * sizeof(float));
    p->uk.dw_rows(p->n, (int)p->k, p->a + ch * p->k, p->bias[ch], planes, p->boff, ext);
    const size_t off = (size_t)(ch * plane);
    p->uk.epilogue(c->epi, NULL, d->oh, d->ow, ext, p->wph, c->y + off, d->ow,
                   c->res != NULL ? c->res + off : NULL, d->ow);
}

/* Blocked: input row pad_r0 + `task % rows` of channel block `task / rows` into
 * [icb][hp][wp][CB] (zeros outside the input and past the last channel). */
static void blocked_pack_task(void *vctx, size_t task, int worker)
{
    const struct conv_ctx *c = vctx;
    const struct eb_conv2d_f32_plan *p = c->p;
    const struct eb_conv2d_desc *d = &p->d;
    const int64_t rows = c->pad_r1 - c->pad_r0, cb = p->cb;
    const int64_t b = (int64_t)task / rows, i = c->pad_r0 + (int64_t)task % rows;
    const int64_t iy = i - d->pad_t, cn = b == p->icb - 1 ? p->cn_last : cb;
    float *dst = c->shared + (b * p->hp + i) * p->wp * cb;
    (void)worker;
    int64_t jlo = d->pad_l < p->wp ? d->pad_l : p->wp;
    int64_t jhi = d->pad_l + d->iw < p->wp ? d->pad_l + d->iw : p->wp;
    if (iy < 0 || iy >= d->ih)
        jlo = jhi = p->wp;
    memset(dst, 0, (size_t)(jlo * cb) * sizeof(float));
    memset(dst + jhi * cb, 0, (size_t)((p->wp - jhi) * cb) * sizeof(float));
    if (jhi <= jlo)
        return;
    if (p->in_cl) { /* NCHWc: the block's row is already [column][cb] */
        memcpy(dst + jlo * cb, c->in + ((b * d->ih + iy) * d->iw + jlo - d->pad_l) * cb,
               (size_t)((jhi - jlo) * cb) * sizeof(float));
        return;
    }
    const float *src = c->in + (b * cb * d->ih + iy) * d->iw + jlo - d->pad_l;
    if (cb == 1)
        memcpy(dst + jlo, src, (size_t)(jhi - jlo) * sizeof(float));
    else
        p->uk.cl_pack(jhi - jlo, (int)cn, (int)cb, src, d->ih * d->iw, dst + jlo * cb);
}

/* Blocked: rb rows of the band [q0, q1) of output channel block `task / nb` into the worker's
 * [pixel][channel] rows, then transposed into y's planes through the epilogue. */
static void blocked_task(void *vctx, size_t task, int worker)
{
    const struct conv_ctx *c = vctx;
    const struct eb_conv2d_f32_plan *p = c->p;
    const struct eb_conv2d_desc *d = &p->d;
    const int64_t cb = p->cb, cbw = p->uk.cl_cb, ob = p->ob, taps = d->kh * d->kw;
    const int64_t xbs = p->hp * p->wp * cb;
    const int64_t blk = (int64_t)task / c->nb, o0 = blk * ob;
    const int64_t oy0 = c->q0 + (int64_t)task % c->nb * p->rb;
    const int64_t oy1 = oy0 + p->rb < c->q1 ? oy0 + p->rb : c->q1;
    const int64_t olen = d->oc - o0 < ob ? d->oc - o0 : ob, plane = d->oh * d->ow;
    float *buf = c->workers + (size_t)worker * p->worker_floats;
    for (int64_t oy = oy0; oy < oy1; oy++) {
        const float *xr = c->shared + oy * d->stride_h * p->wp * cb;
        float *out = buf + (oy - oy0) * p->owr * ob;
        if (p->kind == CONV_DW_BLOCKED)
            p->uk.dw_cl(d->ow, xr + blk * xbs, d->stride_w * cb, p->boff, (int)taps,
                        p->a + blk * taps * cbw, out);
        else
            p->uk.conv_cl(d->ow, xr, d->stride_w * cb, p->icb, xbs, (int)cb, p->cn_last, p->boff,
                          (int)taps, p->a + blk * p->icb * taps * cbw * ob, (int)olen, out);
    }
    if (p->out_cl) { /* NCHWc: block o0 / CB, pixel (oy, 0) */
        for (int64_t oy = oy0; oy < oy1; oy++) {
            const size_t yo = (size_t)((o0 / cbw * plane + oy * d->ow) * cbw);
            p->uk.cl_epilogue(c->epi, p->bias + o0, d->ow, (int)(olen / cbw),
                              buf + (oy - oy0) * p->owr * ob, (int)ob, c->y + yo, plane * cbw,
                              c->res != NULL ? c->res + yo : NULL);
        }
        return;
    }
    const size_t yo = (size_t)(o0 * plane + oy0 * d->ow);
    float *y = c->y + yo;
    for (int64_t r = 0; r < oy1 - oy0; r++)
        p->uk.cl_unpack(d->ow, (int)olen, (int)ob, buf + r * p->owr * ob, y + r * d->ow, plane);
    p->uk.epilogue(c->epi, p->bias + o0, olen, (oy1 - oy0) * d->ow, y, plane, y, plane,
                   c->res != NULL ? c->res + yo : NULL, plane);
}

/* Pointwise, pixels in the tile rows: pixels [q0, q0 + rb) of output block `task / nrb`. */
static void pw_blocked_task(void *vctx, size_t task, int worker)
{
    const struct conv_ctx *c = vctx;
    const struct eb_conv2d_f32_plan *p = c->p;
    const struct eb_conv2d_desc *d = &p->d;
    const int64_t n = d->oh * d->ow, ob = p->ob, blk = (int64_t)task / p->nrb;
    const int64_t q0 = (int64_t)task % p->nrb * p->rb, np = n - q0 < p->rb ? n - q0 : p->rb;
    const int64_t o0 = blk * ob, olen = d->oc - o0 < ob ? d->oc - o0 : ob;
    const int64_t cbw = p->uk.cl_cb;
    float *buf = c->workers + (size_t)worker * p->worker_floats;
    if (p->in_cl) { /* NCHWc read in place: a 1x1 "row" of np pixels, stride CB */
        static const int32_t tap0 = 0;
        p->uk.conv_cl(np, c->in + q0 * cbw, cbw, d->ic / cbw, n * cbw, (int)cbw, (int)cbw, &tap0, 1,
                      p->a + blk * d->ic * ob, (int)olen, buf);
    } else {
        p->uk.pw_cl(np, c->in + q0, n, d->ic, p->a + blk * d->ic * ob, (int)olen, buf);
    }
    if (p->out_cl) {
        const size_t yo = (size_t)((o0 / cbw * n + q0) * cbw);
        p->uk.cl_epilogue(c->epi, p->bias + o0, np, (int)(olen / cbw), buf, (int)ob, c->y + yo,
                          n * cbw, c->res != NULL ? c->res + yo : NULL);
        return;
    }
    const size_t yo = (size_t)(o0 * n + q0);
    p->uk.cl_unpack(np, (int)olen, (int)ob, buf, c->y + yo, n);
    p->uk.epilogue(c->epi, p->bias + o0, olen, np, c->y + yo, n, c->y + yo, n,
                   c->res != NULL ? c->res + yo : NULL, n);
}

void eb_cpu_conv2d_f32_run(const struct eb_conv2d_f32_plan *plan, const struct eb_epilogue *epi,
                           const struct eb_cpu_exec *x, const float *in, const float *residual,
                           float *y)
{
    static const struct eb_epilogue none = {.act = EB_ACT_NONE};
    const struct eb_conv2d_desc *d = &plan->d;
    struct conv_ctx c = {.p = plan, .epi = epi != NULL ? epi : &none};
    const float *res = c.epi->residual ? residual : NULL;
    EB_ASSERT(!plan->out_cl || !c.epi->fake_quant);
    const size_t in_img = (size_t)(d->ic * d->ih * d->iw),
                 out_img = (size_t)(d->oc * d->oh * d->ow);
    EB_ASSERT(x->n_workers <= plan->n_workers &&
              x->scratch_bytes >=
                  (plan->shared_floats + (size_t)plan->n_workers * plan->worker_floats) *
                      sizeof(float));
    c.shared = x->scratch;
    c.workers = (float *)x->scratch + plan->shared_floats;
    const int64_t amax = plan->hph - d->oh;
    for (int64_t img = 0; img < d->n; img++) {
        c.in = in + (size_t)img * in_img;
        c.y = y + (size_t)img * out_img;
        c.res = res != NULL ? res + (size_t)img * out_img : NULL;
        if (plan->kind == CONV_POINTWISE) {
            c.q0 = 0;
            c.q1 = plan->n;
            c.nb = plan->nb;
            eb_threadpool_run(x->pool, (size_t)(d->groups * plan->mb * c.nb), pointwise_task, &c);
        } else if (plan->kind == CONV_DEPTHWISE) {
            eb_threadpool_run(x->pool, (size_t)d->oc, depthwise_task, &c);
        } else if (plan->kind == CONV_PW_BLOCKED) {
            eb_threadpool_run(x->pool, (size_t)(plan->ocb * plan->nrb), pw_blocked_task, &c);
        } else if (plan->kind == CONV_BLOCKED || plan->kind == CONV_DW_BLOCKED) {
            c.pad_r1 = 0;
            for (int64_t oy0 = 0; oy0 < d->oh; oy0 += plan->band_rows) {
                const int64_t oy1 = oy0 + plan->band_rows < d->oh ? oy0 + plan->band_rows : d->oh;
                /* input rows up to the band's last tap row; earlier ones: the previous band */
                c.pad_r0 = c.pad_r1;
                c.pad_r1 =
                    oy1 == d->oh ? plan->hp : (oy1 - 1) * d->stride_h + (d->kh - 1) * d->dil_h + 1;
                eb_threadpool_run(x->pool, (size_t)(plan->icb * (c.pad_r1 - c.pad_r0)),
                                  blocked_pack_task, &c);
                c.q0 = oy0;
                c.q1 = oy1;
                c.nb = (oy1 - oy0 + plan->rb - 1) / plan->rb;
                eb_threadpool_run(x->pool, (size_t)(plan->ocb * c.nb), blocked_task, &c);
            }
        } else {
            for (int64_t oy0 = 0; oy0 < d->oh; oy0 += plan->band_rows) {
                const int64_t oy1 = oy0 + plan->band_rows < d->oh ? oy0 + plan->band_rows : d->oh;
                c.pad_r0 = oy0 == 0 ? 0 : oy0 + amax; /* earlier rows: the previous band */
                c.pad_r1 = oy1 + amax;
                eb_threadpool_run(x->pool, (size_t)d->ic, pad_task, &c);
                c.q0 = oy0 * plan->wph;
                c.q1 = oy1 * plan->wph;
                c.nb = (c.q1 - c.q0 + plan->nc - 1) / plan->nc;
                eb_threadpool_run(x->pool, (size_t)(d->groups * plan->mb * c.nb), padded_task, &c);
            }
        }
    }
}
