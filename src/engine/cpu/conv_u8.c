/*
 * ConvInteger and DynamicQuantizeLinear behind run-time ISA dispatch (see conv_u8.h). The
 * blocking and the implicit im2col are portable C here; the inner loops are cpu/x86 (AVX2).
 * ISAs without an integer kernel (NEON for now) get a NULL plan and stay on the reference.
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
static void eb_cpu_im2col_u8__avx2(const struct eb_conv2d_desc *d, int64_t icg, const uint8_t *xg,
                                   uint8_t zp, int64_t p0, int64_t cnt, int64_t nbp, uint8_t *col)
{
    (void)d, (void)icg, (void)xg, (void)zp, (void)p0, (void)cnt, (void)nbp, (void)col;
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
#endif

/* Output pixels gathered per block (multiple of EB_IGEMM_NR). */
#define BLOCK_PIXELS 64

enum u8_algo {
    U8_ALGO_GEMM = 0, /* packed integer GEMM per group */
    U8_ALGO_GROUPREF, /* the reference per group, threaded (tiny groups, strided depthwise) */
    U8_ALGO_DW,       /* depthwise, stride 1: direct kernel per channel */
};

struct eb_conv2d_u8_plan {
    struct eb_conv2d_desc d;
    enum eb_cpu_isa isa;
    enum u8_algo algo;
    int64_t icg, ocg, k, kp, n_ob; /* per group: channels in/out, reduction, pairs, OC blocks */
    int64_t plane;                 /* oh * ow */
    int64_t n_blocks;              /* pixel blocks per image */
    size_t worker_bytes;           /* scratch per worker */
    int32_t *w;                    /* [groups][n_ob][kp][MR] int16 pairs (GEMM) */
    int32_t *wsum;                 /* [oc] Σ_k (w - w_zp) */
    const void *raw;               /* the constant weights (GROUPREF) */
    int w_signed;
    int32_t *wzp; /* [oc] */
    int32_t *wdw; /* [oc][kh*kw] w - w_zp (DW) */
};

enum eb_status eb_cpu_conv2d_u8_prepare(const struct eb_conv2d_desc *d, const void *w, int w_signed,
                                        const int32_t *w_zp, size_t n_w_zp, enum eb_cpu_isa isa,
                                        int n_workers, struct eb_ir_arena *arena,
                                        struct eb_conv2d_u8_plan **plan_out,
                                        size_t *scratch_bytes_out, size_t *packed_bytes_out)
{
    *plan_out = NULL;
    *scratch_bytes_out = 0;
    *packed_bytes_out = 0;
    if (!HAVE_X86 || (isa != EB_CPU_ISA_AVX2 && isa != EB_CPU_ISA_AVX512))
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
    p->n_ob = (p->ocg + EB_IGEMM_MR - 1) / EB_IGEMM_MR;
    p->plane = d->oh * d->ow;
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
    if (p->icg == 1 && p->ocg == 1 && d->stride_h == 1 && d->stride_w == 1) {
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
        const size_t wbytes = (size_t)(d->groups * p->n_ob * p->kp * EB_IGEMM_MR) * sizeof(int32_t);
        p->w = eb_ir_arena_alloc(arena, wbytes);
        p->wsum = eb_ir_arena_alloc(arena, (size_t)d->oc * sizeof(int32_t));
        if (p->w == NULL || p->wsum == NULL)
            return EB_ERR_NOMEM;
        packed += wbytes + (size_t)d->oc * sizeof(int32_t);
        for (int64_t o = 0; o < d->oc; o++) {
            const int64_t g = o / p->ocg, m = o % p->ocg;
            int32_t *dst =
                p->w + ((g * p->n_ob + m / EB_IGEMM_MR) * p->kp) * EB_IGEMM_MR + m % EB_IGEMM_MR;
            int32_t sum = 0;
            for (int64_t i = 0; i < p->k; i++) {
                const int64_t wi = o * p->k + i;
                const int32_t v = (w_signed ? (int32_t)((const int8_t *)w)[wi]
                                            : (int32_t)((const uint8_t *)w)[wi]) -
                                  p->wzp[o];
                sum += v;
                /* Pair i/2: low half = even row, high half = odd row (little endian). */
                uint32_t *pair = (uint32_t *)&dst[(i / 2) * EB_IGEMM_MR];
                const uint32_t h = (uint32_t)(uint16_t)(int16_t)v;
                *pair |= (i % 2 == 0) ? h : h << 16;
            }
            p->wsum[o] = sum;
        }
        const size_t col = eb_cpu_align64((size_t)(p->k * BLOCK_PIXELS));
        const size_t pk = eb_cpu_align64((size_t)(p->kp * 2 * BLOCK_PIXELS) * sizeof(int16_t));
        p->worker_bytes = col + pk;
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
    if (is_1x1 && cnt == nbp)
        eb_cpu_igemm_pack_u8__avx2(p->k, nbp, xg + p0, d->ih * d->iw, packed);
    else {
        eb_cpu_im2col_u8__avx2(d, p->icg, xg, (uint8_t)r->x_zp, p0, cnt, nbp, col);
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
            if (r->rq == NULL) {
                eb_cpu_igemm_u8s8_4x16__avx2(p->kp, wp, packed + t * p->kp * 2, corr,
                                             r->y + yoff + t, p->plane, mr, nr);
                continue;
            }
            eb_cpu_igemm_u8s8_4x16_q__avx2(p->kp, wp, packed + t * p->kp * 2, corr,
                                           r->rq->mult + oc0, r->rq->bias + oc0, r->rq,
                                           r->yq + yoff + t, p->plane, mr, nr);
        }
    }
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

void eb_cpu_conv2d_u8_run(const struct eb_conv2d_u8_plan *p, const struct eb_cpu_exec *ex,
                          const uint8_t *x, int32_t x_zp, int32_t *y)
{
    struct u8_run r = {.p = p, .ex = ex, .x = x, .x_zp = x_zp, .y = y};
    if (p->algo == U8_ALGO_DW)
        eb_threadpool_run(ex->pool, (size_t)(p->d.n * p->d.oc), dw_task, &r);
    else if (p->algo == U8_ALGO_GROUPREF)
        eb_threadpool_run(ex->pool, (size_t)(p->d.n * p->d.groups), groupref_task, &r);
    else
        eb_threadpool_run(ex->pool, (size_t)(p->d.n * p->d.groups * p->n_blocks), gemm_task, &r);
}

int eb_cpu_conv2d_u8_fuses_requant(const struct eb_conv2d_u8_plan *p)
{
    return p != NULL && p->algo == U8_ALGO_GEMM;
}

void eb_cpu_conv2d_u8_run_requant(const struct eb_conv2d_u8_plan *p, const struct eb_cpu_exec *ex,
                                  const uint8_t *x, int32_t x_zp,
                                  const struct eb_conv2d_u8_requant *rq, uint8_t *y)
{
    struct u8_run r = {.p = p, .ex = ex, .x = x, .x_zp = x_zp, .rq = rq, .yq = y};
    eb_threadpool_run(ex->pool, (size_t)(p->d.n * p->d.groups * p->n_blocks), gemm_task, &r);
}

/* ---- DynamicQuantizeLinear ------------------------------------------------------------- */

#define DQ_MAX_TASKS 64
#define DQ_CHUNK     (1 << 16)

struct dq_run {
    const float *x;
    uint8_t *y;
    int64_t n, chunk;
    float scale, zp;
    float mn[DQ_MAX_TASKS], mx[DQ_MAX_TASKS];
};

static void dq_minmax_task(void *ctx, size_t task, int worker)
{
    struct dq_run *r = ctx;
    const int64_t i0 = (int64_t)task * r->chunk;
    const int64_t cnt = r->n - i0 < r->chunk ? r->n - i0 : r->chunk;
    float mn = 0.0f, mx = 0.0f;
    (void)worker;
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
    eb_cpu_quantize_u8__avx2(cnt, r->x + i0, r->scale, r->zp, r->y + i0);
}

void eb_cpu_dynamic_quantize_f32(const struct eb_cpu_exec *ex, int64_t n, const float *x,
                                 uint8_t *y, float *scale_out, uint8_t *zp_out)
{
    if (!HAVE_X86 || (ex->isa != EB_CPU_ISA_AVX2 && ex->isa != EB_CPU_ISA_AVX512)) {
        eb_cpu_dynamic_quantize_f32__ref(n, x, y, scale_out, zp_out);
        return;
    }
    struct dq_run r = {.x = x, .y = y, .n = n};
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
