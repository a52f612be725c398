/*
 * Fast float convolution (fast.h) on the packed SGEMM (gemm.c):
 *
 *   per image and group: C[M = OC/g, N = OH*OW] = A[M, K = IC/g*KH*KW] · B[K, N]
 *
 * A (weights) is packed into MR-row panels at prepare. B is never materialised: each task packs
 * the KC x NC block it needs straight from the NCHW input (implicit im2col, zeros for padding;
 * a 1x1 stride-1 unpadded conv copies input rows) into its worker's scratch, then the
 * macro-kernel writes NCHW output rows with the epilogue applied per tile.
 *
 * Blocking: KC <= 320 (a 6x16 kernel's B micro-panel, KC x NR, stays in L1), MC <= 288 rows
 * (the A block stays in L2), NC <= 256 columns, shrunk until there are enough tasks
 * (image x group x M block x N block) for every worker to get several.
 *
 * Depthwise convs (groups == IC == OC) run a direct per-channel kernel instead (the GEMM would
 * be 1 x 9 x N), one task per channel, with the tile epilogue on the finished plane.
 */
#include <string.h>

#include "engine/cpu/fast.h"
#include "engine/cpu/gemm.h"

#define CONV_KC_MAX 320
#define CONV_MC_MAX 288
#define CONV_NC_MAX 256

enum conv_kind { CONV_GEMM, CONV_DEPTHWISE };

struct eb_conv2d_f32_plan {
    struct eb_conv2d_desc d;
    struct eb_sgemm_ukernel uk;
    enum conv_kind kind;
    int pointwise;        /* 1x1, stride 1, no padding: B rows are input rows */
    int64_t m, k, n;      /* per group: OC/g, IC/g*KH*KW, OH*OW */
    int64_t kc, mc, nc;   /* block sizes (kc: K split evenly; mc multiple of MR) */
    int64_t kb, mb, nb;   /* blocks per dimension */
    int64_t m_panels;     /* MR panels per group */
    float *a;             /* [groups][m_panels][K][MR] (GEMM) or [OC][KH*KW] (depthwise) */
    float *bias;          /* [OC] */
    int n_workers;        /* scratch was sized for this many */
    size_t worker_floats; /* per-worker scratch slice */
};

static void *arena_alloc64(struct eb_ir_arena *arena, size_t bytes)
{
    unsigned char *p = eb_ir_arena_alloc(arena, bytes + 64);
    if (p == NULL)
        return NULL;
    return p + ((64u - ((uintptr_t)p & 63u)) & 63u);
}

enum eb_status eb_cpu_conv2d_f32_prepare(const struct eb_conv2d_desc *d, const float *w,
                                         const float *bias, enum eb_cpu_isa isa, int n_workers,
                                         struct eb_ir_arena *arena,
                                         struct eb_conv2d_f32_plan **plan_out,
                                         size_t *scratch_bytes_out, size_t *packed_bytes_out)
{
    struct eb_sgemm_ukernel uk;
    *plan_out = NULL;
    *scratch_bytes_out = 0;
    *packed_bytes_out = 0;
    if (!eb_cpu__sgemm_select(isa, &uk) || d->n < 1 || d->oh < 1 || d->ow < 1)
        return EB_OK;
    struct eb_conv2d_f32_plan *p = eb_ir_arena_alloc(arena, sizeof(*p));
    if (p == NULL)
        return EB_ERR_NOMEM;
    const int workers = n_workers < 1 ? 1 : n_workers;
    p->d = *d;
    p->uk = uk;
    p->n_workers = workers;
    p->m = d->oc / d->groups;
    p->k = d->ic / d->groups * d->kh * d->kw;
    p->n = d->oh * d->ow;
    p->bias = arena_alloc64(arena, (size_t)d->oc * sizeof(float));
    if (p->bias == NULL)
        return EB_ERR_NOMEM;
    if (bias != NULL)
        memcpy(p->bias, bias, (size_t)d->oc * sizeof(float));
    size_t packed = (size_t)d->oc * sizeof(float);
    if (d->groups > 1 && d->groups == d->ic && d->groups == d->oc) {
        p->kind = CONV_DEPTHWISE;
        const size_t wb = (size_t)(d->oc * d->kh * d->kw) * sizeof(float);
        if ((p->a = arena_alloc64(arena, wb)) == NULL)
            return EB_ERR_NOMEM;
        memcpy(p->a, w, wb);
        *plan_out = p;
        *packed_bytes_out = packed + wb;
        return EB_OK;
    }
    p->kind = CONV_GEMM;
    p->pointwise = d->kh == 1 && d->kw == 1 && d->stride_h == 1 && d->stride_w == 1 &&
                   d->pad_t == 0 && d->pad_l == 0 && d->oh == d->ih && d->ow == d->iw;
    p->kb = (p->k + CONV_KC_MAX - 1) / CONV_KC_MAX;
    p->kc = (p->k + p->kb - 1) / p->kb;
    p->m_panels = (p->m + uk.mr - 1) / uk.mr;
    p->mb = (p->m + CONV_MC_MAX - 1) / CONV_MC_MAX;
    p->mc = eb_cpu_round_up((p->m + p->mb - 1) / p->mb, uk.mr);
    p->mb = (p->m + p->mc - 1) / p->mc;
    p->nc = eb_cpu_round_up(p->n, uk.nr) < CONV_NC_MAX ? eb_cpu_round_up(p->n, uk.nr) : CONV_NC_MAX;
    /* Enough tasks for dynamic balancing: ~4 per worker, NC no smaller than 2 NR. */
    for (;;) {
        p->nb = (p->n + p->nc - 1) / p->nc;
        if (d->n * d->groups * p->mb * p->nb >= 4 * workers || p->nc <= 2 * uk.nr)
            break;
        p->nc = eb_cpu_round_up(p->nc / 2, uk.nr);
    }
    /* Packed weights: per group, panels of MR rows (zero rows past M), k-major. */
    const size_t ab = (size_t)(d->groups * p->m_panels * p->k * uk.mr) * sizeof(float);
    if ((p->a = arena_alloc64(arena, ab)) == NULL)
        return EB_ERR_NOMEM;
    for (int64_t g = 0; g < d->groups; g++)
        eb_cpu__pack_a(uk.mr, p->m, p->k, w + g * p->m * p->k, p->k,
                       p->a + g * p->m_panels * p->k * uk.mr);
    /* Scratch per worker: the B block (KC x NC, NR-padded). */
    const int64_t ncp = eb_cpu_round_up(p->nc, uk.nr);
    p->worker_floats = eb_cpu_align64((size_t)(p->kc * ncp) * sizeof(float)) / sizeof(float);
    *plan_out = p;
    *scratch_bytes_out = (size_t)workers * p->worker_floats * sizeof(float);
    *packed_bytes_out = packed + ab;
    return EB_OK;
}

/* ---- run -------------------------------------------------------------------------------- */

struct conv_ctx {
    const struct eb_conv2d_f32_plan *p;
    const struct eb_epilogue *epi;
    const float *in, *res;
    float *y, *scratch;
};

/*
 * Writes `n` consecutive B columns starting at column j of row kk (values from `src`, or zeros
 * when src is NULL) into the NR panels, splitting the run at panel boundaries.
 */
static inline void put_run(int nr, int64_t kc, float *dst_k, int64_t j, const float *src, int64_t n)
{
    while (n > 0) {
        const int64_t off = j % nr, m = nr - off < n ? nr - off : n;
        float *dst = dst_k + (j / nr) * kc * nr + off;
        /* Plain loops: runs are short (<= NR floats), a libc call costs more than the copy. */
        if (src != NULL) {
            if (m == 16) {
                memcpy(dst, src, 16 * sizeof(float)); /* constant size: inlined */
            } else if (m == 8) {
                memcpy(dst, src, 8 * sizeof(float));
            } else {
                for (int64_t t = 0; t < m; t++)
                    dst[t] = src[t];
            }
            src += m;
        } else {
            for (int64_t t = 0; t < m; t++)
                dst[t] = 0.0f;
        }
        j += m;
        n -= m;
    }
}

/*
 * Implicit im2col straight into the NR panels: B rows k0 .. k0+kc (channel, tap) for output
 * pixels [p0, p0 + len), walked as runs along output rows. With stride 1 a run reads one input
 * row: zeros for the left padding, one contiguous copy, zeros for the right padding (split at
 * panel boundaries only). Strided runs gather. Columns past len in the last panel are zero.
 */
static void pack_b_conv(const struct eb_conv2d_f32_plan *p, const float *xin, int64_t k0,
                        int64_t kc, int64_t p0, int64_t len, float *bbuf)
{
    const struct eb_conv2d_desc *d = &p->d;
    const int nr = p->uk.nr;
    const int64_t taps = d->kh * d->kw, iplane = d->ih * d->iw, sw = d->stride_w;
    const int64_t padded = (len + nr - 1) / nr * nr;
    float gather[CONV_NC_MAX];
    for (int64_t kk = 0; kk < kc; kk++) {
        const int64_t k = k0 + kk, tap = k % taps, kh = tap / d->kw, kw = tap % d->kw;
        const float *xc = xin + (k / taps) * iplane;
        const int64_t dh = kh * d->dil_h - d->pad_t, dw = kw * d->dil_w - d->pad_l;
        float *dst_k = bbuf + kk * nr;
        int64_t q = p0, oh = p0 / d->ow, ow = p0 % d->ow;
        const int64_t end = p0 + len;
        while (q < end) {
            const int64_t run = d->ow - ow < end - q ? d->ow - ow : end - q;
            const int64_t j = q - p0, ih = oh * d->stride_h + dh;
            if (ih < 0 || ih >= d->ih) {
                put_run(nr, kc, dst_k, j, NULL, run);
            } else {
                const float *xr = xc + ih * d->iw;
                /* output columns ow .. ow+run read input columns iw0 + t*sw */
                const int64_t iw0 = ow * sw + dw;
                int64_t lo = iw0 >= 0 ? 0 : (-iw0 + sw - 1) / sw;
                int64_t hi = iw0 >= d->iw ? 0 : (d->iw - iw0 + sw - 1) / sw;
                lo = lo < run ? lo : run;
                hi = hi < run ? hi : run;
                hi = hi < lo ? lo : hi;
                if (lo > 0)
                    put_run(nr, kc, dst_k, j, NULL, lo);
                if (hi > lo) {
                    if (sw == 1) {
                        put_run(nr, kc, dst_k, j + lo, xr + iw0 + lo, hi - lo);
                    } else {
                        for (int64_t t = lo; t < hi; t++)
                            gather[t - lo] = xr[iw0 + t * sw];
                        put_run(nr, kc, dst_k, j + lo, gather, hi - lo);
                    }
                }
                if (run > hi)
                    put_run(nr, kc, dst_k, j + hi, NULL, run - hi);
            }
            q += run;
            ow = 0;
            oh++;
        }
        if (padded > len)
            put_run(nr, kc, dst_k, len, NULL, padded - len);
    }
}

/* Scatters one B row of `len` columns into the NR panels (row kk of kc), zero-padding the tail. */
static void scatter_row(int nr, int64_t kc, int64_t kk, const float *src, int64_t len, float *bbuf)
{
    float *dst = bbuf + kk * nr;
    int64_t j = 0;
    const size_t step = (size_t)(kc * nr);
    if (nr == 16) {
        for (; j + 16 <= len; j += 16, dst += step)
            memcpy(dst, src + j, 16 * sizeof(float));
    } else if (nr == 32) {
        for (; j + 32 <= len; j += 32, dst += step)
            memcpy(dst, src + j, 32 * sizeof(float));
    } else if (nr == 8) {
        for (; j + 8 <= len; j += 8, dst += step)
            memcpy(dst, src + j, 8 * sizeof(float));
    }
    for (; j < len; j += nr, dst += step) {
        const int64_t w = len - j < nr ? len - j : nr;
        memcpy(dst, src + j, (size_t)w * sizeof(float));
        for (int64_t t = w; t < nr; t++)
            dst[t] = 0.0f;
    }
}

static void gemm_task(void *vctx, size_t task, int worker)
{
    const struct conv_ctx *c = vctx;
    const struct eb_conv2d_f32_plan *p = c->p;
    const struct eb_conv2d_desc *d = &p->d;
    int64_t t = (int64_t)task;
    const int64_t nb = t % p->nb;
    t /= p->nb;
    const int64_t mb = t % p->mb;
    t /= p->mb;
    const int64_t g = t % d->groups, img = t / d->groups;
    const int64_t m0 = mb * p->mc, mlen = p->m - m0 < p->mc ? p->m - m0 : p->mc;
    const int64_t p0 = nb * p->nc, nlen = p->n - p0 < p->nc ? p->n - p0 : p->nc;
    const int64_t icg = d->ic / d->groups, iplane = d->ih * d->iw;
    const int nr = p->uk.nr, mr = p->uk.mr;
    float *bbuf = c->scratch + (size_t)worker * p->worker_floats;
    const float *xin = c->in + (img * d->ic + g * icg) * iplane;
    const size_t yoff = (size_t)((img * d->oc + g * p->m + m0) * p->n + p0);
    const float *apanels = p->a + (g * p->m_panels + m0 / mr) * p->k * mr;
    for (int64_t kb = 0; kb < p->kb; kb++) {
        const int64_t k0 = kb * p->kc, kc = p->k - k0 < p->kc ? p->k - k0 : p->kc;
        if (p->pointwise)
            for (int64_t kk = 0; kk < kc; kk++)
                scatter_row(nr, kc, kk, xin + (k0 + kk) * iplane + p0, nlen, bbuf);
        else
            pack_b_conv(p, xin, k0, kc, p0, nlen, bbuf);
        const int last = kb == p->kb - 1;
        eb_cpu__sgemm_block(&p->uk, mlen, nlen, kc, apanels + k0 * mr, p->k * mr, bbuf, c->y + yoff,
                            p->n, kb > 0, last ? c->epi : NULL, p->bias + g * p->m + m0,
                            c->res != NULL ? c->res + yoff : NULL);
    }
}

static void depthwise_task(void *vctx, size_t task, int worker)
{
    const struct conv_ctx *c = vctx;
    const struct eb_conv2d_f32_plan *p = c->p;
    const int64_t ch = (int64_t)task % p->d.oc, img = (int64_t)task / p->d.oc;
    struct eb_conv2d_desc one = p->d;
    const int64_t plane = p->d.oh * p->d.ow;
    const size_t off = (size_t)((img * p->d.oc + ch) * plane);
    (void)worker;
    one.n = one.ic = one.oc = one.groups = 1;
    /* The reference loop on one plane is already a unit-stride multiply-add per tap over rows
     * in L1; what it lacks is threads and the fused epilogue. */
    eb_cpu_conv2d_f32__ref(&one, c->in + (img * p->d.ic + ch) * p->d.ih * p->d.iw,
                           p->a + ch * p->d.kh * p->d.kw, p->bias + ch, c->y + off);
    p->uk.epilogue(c->epi, NULL, 1, plane, c->y + off, plane, c->res != NULL ? c->res + off : NULL,
                   plane);
}

void eb_cpu_conv2d_f32_run(const struct eb_conv2d_f32_plan *plan, const struct eb_epilogue *epi,
                           const struct eb_cpu_exec *x, const float *in, const float *residual,
                           float *y)
{
    static const struct eb_epilogue none = {.act = EB_ACT_NONE};
    struct conv_ctx c = {.p = plan, .epi = epi != NULL ? epi : &none, .in = in, .y = y};
    c.res = c.epi->residual ? residual : NULL;
    c.scratch = x->scratch;
    if (plan->kind == CONV_DEPTHWISE) {
        eb_threadpool_run(x->pool, (size_t)(plan->d.n * plan->d.oc), depthwise_task, &c);
        return;
    }
    EB_ASSERT(x->n_workers <= plan->n_workers &&
              x->scratch_bytes >= (size_t)plan->n_workers * plan->worker_floats * sizeof(float));
    const int64_t tasks = plan->d.n * plan->d.groups * plan->mb * plan->nb;
    eb_threadpool_run(x->pool, (size_t)tasks, gemm_task, &c);
}
