/*
 * Dispatch and threading for the elementwise, pooling, quantization and data-movement kernels
 * (eltwise.h). Shapes are first collapsed into "rows": runs that one ISA kernel (or one memcpy)
 * handles; rows, or parts of long rows, are then spread over the thread pool with tasks of at
 * least ~64K elements. Nothing here allocates: each parallel loop's context lives on the stack,
 * and so do MaxPool's per-task row buffers.
 */
#include <math.h>
#include <string.h>

#include "engine/cpu/eltwise.h"

/* Elements (or bytes / 4 for copies) below which a task is not worth handing to a worker. */
#define TASK_ELEMS ((int64_t)65536)

/* ---- helpers ------------------------------------------------------------------------------ */

/* Units of `unit_cost` elements each, grouped into tasks of about TASK_ELEMS elements. */
static size_t task_count(const struct eb_cpu_exec *cpu, int64_t units, int64_t unit_cost)
{
    if (cpu->pool == NULL || cpu->n_workers <= 1 || units <= 1)
        return 1;
    unit_cost = unit_cost < 1 ? 1 : unit_cost;
    int64_t t = units * unit_cost / TASK_ELEMS;
    t = t > units ? units : t;
    t = t > (int64_t)cpu->n_workers * 8 ? (int64_t)cpu->n_workers * 8 : t;
    return t < 1 ? 1 : (size_t)t;
}

/* Units [*b, *e) of task `task` out of `n_tasks`. */
static void task_range(size_t task, size_t n_tasks, int64_t units, int64_t *b, int64_t *e)
{
    *b = units * (int64_t)task / (int64_t)n_tasks;
    *e = units * (int64_t)(task + 1) / (int64_t)n_tasks;
}

/* Elements [*b, *e) of `n` for task `task`, split on multiples of 16 (full vectors). */
static void piece_range(size_t task, size_t n_tasks, int64_t n, int64_t *b, int64_t *e)
{
    task_range(task, n_tasks, n / 16, b, e);
    *b *= 16;
    *e = task + 1 == n_tasks ? n : *e * 16;
}

static int simd(const struct eb_cpu_exec *cpu)
{
#if defined(__x86_64__)
    return cpu->isa == EB_CPU_ISA_AVX2 || cpu->isa == EB_CPU_ISA_AVX512;
#elif defined(__aarch64__)
    return cpu->isa == EB_CPU_ISA_NEON;
#else
    (void)cpu;
    return 0;
#endif
}

#if defined(__x86_64__)
#define K(name) eb_cpu_##name##__avx2
#elif defined(__aarch64__)
#define K(name) eb_cpu_##name##__neon
#endif

/* ---- binary arithmetic --------------------------------------------------------------------- */

struct binary_ctx {
    enum eb_binop op;
    int nd; /* collapsed outer dims */
    int64_t shape[EB_MAX_RANK], as[EB_MAX_RANK], bs[EB_MAX_RANK];
    int64_t len, part, parts; /* row length, part length, parts per row */
    int a_inc, b_inc;
    const float *a, *b;
    float *y;
    size_t n_tasks;
    int64_t units;
};

static void binary_task(void *vctx, size_t task, int worker)
{
    const struct binary_ctx *c = vctx;
    int64_t u0, u1;
    (void)worker;
    task_range(task, c->n_tasks, c->units, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t row = u / c->parts, p = u % c->parts;
        int64_t ao = 0, bo = 0, rem = row;
        for (int d = c->nd - 1; d >= 0; d--) {
            const int64_t i = rem % c->shape[d];
            rem /= c->shape[d];
            ao += i * c->as[d];
            bo += i * c->bs[d];
        }
        const int64_t j0 = p * c->part;
        const int64_t n = c->len - j0 < c->part ? c->len - j0 : c->part;
#if defined(__x86_64__) || defined(__aarch64__)
        K(binary_f32)
        (c->op, n, c->a + ao + j0 * c->a_inc, c->a_inc, c->b + bo + j0 * c->b_inc, c->b_inc,
         c->y + row * c->len + j0);
#endif
    }
}

void eb_cpu_binary(const struct eb_cpu_exec *cpu, enum eb_binop op, enum eb_dtype dt, int rank,
                   const int64_t *a_shape, const void *a, const int64_t *b_shape, const void *b,
                   const int64_t *y_shape, void *y)
{
    int64_t numel = 1;
    for (int d = 0; d < rank; d++)
        numel *= y_shape[d];
    if (!simd(cpu) || dt != EB_DTYPE_F32 || op == EB_BINOP_POW || rank == 0 || numel <= 1) {
        eb_cpu_binary__ref(op, dt, rank, a_shape, a, b_shape, b, y_shape, y);
        return;
    }
    /* Collapse: drop size-1 output dims, merge neighbours with the same broadcast pattern. */
    struct binary_ctx c = {.op = op, .a = a, .b = b, .y = y};
    int64_t shp[EB_MAX_RANK] = {0}, sa = 1, sb = 1;
    int ab[EB_MAX_RANK] = {0}, bb[EB_MAX_RANK] = {0}, k = 0;
    int64_t ast[EB_MAX_RANK], bst[EB_MAX_RANK];
    for (int d = rank - 1; d >= 0; d--) {
        const int64_t as = a_shape[d] == 1 ? 0 : sa, bs = b_shape[d] == 1 ? 0 : sb;
        sa *= a_shape[d];
        sb *= b_shape[d];
        if (y_shape[d] == 1)
            continue;
        const int fa = as == 0, fb = bs == 0;
        if (k > 0 && ab[k - 1] == fa && bb[k - 1] == fb && (fa || ast[k - 1] * shp[k - 1] == as) &&
            (fb || bst[k - 1] * shp[k - 1] == bs)) {
            shp[k - 1] *= y_shape[d];
            continue;
        }
        shp[k] = y_shape[d];
        ast[k] = as;
        bst[k] = bs;
        ab[k] = fa;
        bb[k] = fb;
        k++;
    }
    /* shp[0] is the innermost collapsed dim; the rest become outer dims, outermost first. */
    c.len = shp[0];
    c.a_inc = !ab[0];
    c.b_inc = !bb[0];
    c.nd = k - 1;
    for (int i = 1; i < k; i++) {
        c.shape[k - 1 - i] = shp[i];
        c.as[k - 1 - i] = ast[i];
        c.bs[k - 1 - i] = bst[i];
    }
    const int64_t rows = numel / c.len;
    c.part = c.len > TASK_ELEMS && cpu->n_workers > 1 ? TASK_ELEMS : c.len;
    c.parts = (c.len + c.part - 1) / c.part;
    c.units = rows * c.parts;
    c.n_tasks = task_count(cpu, c.units, c.part);
    eb_threadpool_run(cpu->pool, c.n_tasks, binary_task, &c);
}

/* ---- Sigmoid ------------------------------------------------------------------------------- */

struct unary_ctx {
    int64_t n;
    const float *x;
    float *y;
    size_t n_tasks;
};

static void sigmoid_task(void *vctx, size_t task, int worker)
{
    const struct unary_ctx *c = vctx;
    int64_t b, e;
    (void)worker;
    piece_range(task, c->n_tasks, c->n, &b, &e);
#if defined(__x86_64__) || defined(__aarch64__)
    K(sigmoid_f32)(e - b, c->x + b, c->y + b);
#else
    eb_cpu_sigmoid_f32__ref(e - b, c->x + b, c->y + b);
#endif
}

void eb_cpu_sigmoid_f32(const struct eb_cpu_exec *cpu, int64_t n, const float *x, float *y)
{
    if (!simd(cpu)) {
        eb_cpu_sigmoid_f32__ref(n, x, y);
        return;
    }
    /* Task boundaries on multiples of 16 elements keep every task's vectors full. */
    struct unary_ctx c = {.n = n, .x = x, .y = y, .n_tasks = task_count(cpu, n / 16, 16)};
    if (c.n_tasks == 1) {
        sigmoid_task(&c, 0, 0);
        return;
    }
    eb_threadpool_run(cpu->pool, c.n_tasks, sigmoid_task, &c);
}

/* ---- ReduceMean over trailing axes -------------------------------------------------------- */

struct rmean_ctx {
    int64_t rows, len;
    const float *x;
    float *y;
    size_t n_tasks;
};

static void rmean_task(void *vctx, size_t task, int worker)
{
    const struct rmean_ctx *c = vctx;
    int64_t r0, r1;
    (void)worker;
    task_range(task, c->n_tasks, c->rows, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float *x = c->x + r * c->len;
        float acc[16] = {0};
        int64_t i = 0;
        for (; i + 16 <= c->len; i += 16)
            for (int l = 0; l < 16; l++)
                acc[l] += x[i + l];
        for (int l = 0; i < c->len; i++, l++)
            acc[l] += x[i];
        for (int w = 8; w >= 1; w /= 2)
            for (int l = 0; l < w; l++)
                acc[l] += acc[l + w];
        c->y[r] = acc[0] / (float)c->len;
    }
}

void eb_cpu_reduce_mean_rows_f32(const struct eb_cpu_exec *cpu, int64_t rows, int64_t len,
                                 const float *x, float *y)
{
    if (rows <= 0)
        return;
    if (len <= 0) {
        for (int64_t r = 0; r < rows; r++)
            y[r] = NAN;
        return;
    }
    struct rmean_ctx c = {.rows = rows, .len = len, .x = x, .y = y};
    c.n_tasks = task_count(cpu, rows, len);
    eb_threadpool_run(cpu->pool, c.n_tasks, rmean_task, &c);
}

/* ---- Softmax ------------------------------------------------------------------------------- */

struct softmax_ctx {
    int64_t axis, inner, cols, blocks; /* column block width, blocks per outer index */
    int avx512;                        /* inner == 1 rows on the AVX-512 kernel */
    const float *x;
    float *y;
    size_t n_tasks;
    int64_t units;
};

static void softmax_task(void *vctx, size_t task, int worker)
{
    const struct softmax_ctx *c = vctx;
    int64_t u0, u1;
    (void)worker;
    task_range(task, c->n_tasks, c->units, &u0, &u1);
#if defined(__x86_64__)
    if (c->avx512) { /* inner == 1: unit u is row u */
        eb_cpu_softmax_rows_f32__avx512(u1 - u0, c->axis, c->x + u0 * c->axis, c->y + u0 * c->axis);
        return;
    }
#endif
    for (int64_t u = u0; u < u1; u++) {
        const int64_t o = u / c->blocks, col = u % c->blocks * c->cols;
        const int64_t cnt = c->inner - col < c->cols ? c->inner - col : c->cols;
        const int64_t off = o * c->axis * c->inner + col;
#if defined(__x86_64__) || defined(__aarch64__)
        K(softmax_f32)(c->axis, c->inner, cnt, c->x + off, c->y + off);
#endif
    }
}

void eb_cpu_softmax_f32(const struct eb_cpu_exec *cpu, int64_t outer, int64_t axis, int64_t inner,
                        const float *x, float *y)
{
    if (!simd(cpu) || outer * axis * inner == 0) {
        eb_cpu_softmax_f32__ref(outer, axis, inner, x, y);
        return;
    }
    struct softmax_ctx c = {.axis = axis,
                            .inner = inner,
                            .avx512 = cpu->isa == EB_CPU_ISA_AVX512 && inner == 1,
                            .x = x,
                            .y = y};
    /*
     * Blocks of columns (multiples of 8) of about TASK_ELEMS / 4 elements each, at least 8
     * columns: an axis longer than TASK_ELEMS / 4 would otherwise round the width to 0.
     */
    c.cols = inner == 1 ? 1 : ((TASK_ELEMS / 4 / axis + 7) & ~(int64_t)7);
    c.cols = c.cols < 8 && inner > 1 ? 8 : c.cols;
    c.cols = c.cols > inner ? inner : c.cols;
    c.blocks = (inner + c.cols - 1) / c.cols;
    c.units = outer * c.blocks;
    c.n_tasks = task_count(cpu, c.units, c.cols * axis);
    eb_threadpool_run(cpu->pool, c.n_tasks, softmax_task, &c);
}

/* ---- MaxPool ------------------------------------------------------------------------------- */

/*
 * Separable MaxPool. The reference folds each window in row-major order with
 * m = (v > m || isnan(v)) ? v : m from -inf, which yields the window's last NaN if it has one,
 * else its first element equal to the maximum (that is how -0 and +0 tie). Folding a sequence
 * in consecutive pieces and then folding the pieces' results gives the same bits, and a -inf
 * operand never changes m. So a window is folded along each of its input rows first (the
 * horizontal pass: kw taps of a row copy whose padding is -inf, into the row buffer H), then
 * down its kh rows of H (the vertical pass; rows outside the input are skipped). Each H row
 * serves every output row whose window covers it. Folding down the columns first would be
 * column-major and could pick a different zero or NaN than the reference.
 *
 * With stride_w > 1 the padded input row is split into stride_w phases (phase t holds columns
 * t, t + stride_w, ...), so that every tap reads a contiguous run of one phase.
 *
 * Buffers live on the task's stack (POOL_BUF floats); wide rows are cut into column chunks and
 * tall planes into row chunks that fit. A window too large for any chunk (huge kernels or
 * dilations) runs the reference, which needs no buffer.
 */
#define POOL_BUF  8192 /* floats (32 KiB) of each task's stack buffer */
#define POOL_TAPS 32   /* source rows per fold call */

struct pool_ctx {
    const struct eb_pool2d_desc *d;
    int64_t rows, blocks; /* output rows per unit, units per plane */
    int64_t cw;           /* output columns per chunk (a multiple of 8); 0: the reference */
    int64_t chunk_rows;   /* output rows per chunk */
    int64_t tap_t, tap_q; /* dil_w % stride_w, dil_w / stride_w */
    int64_t o_a, o_b;     /* output rows [o_a, o_b] have all kh input rows */
    const float *x;
    float *y;
    size_t n_tasks;
    int64_t units;
};

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* floor(a / b) and ceil(a / b) for any a and b > 0. */
static int64_t floor_div(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return -floor_div(-a, b);
}

static int64_t round8(int64_t v)
{
    return (v + 7) & ~(int64_t)7;
}

static void pool_fold(int64_t rows, int64_t n, int cnt, const float *const *src, int64_t src_stride,
                      int acc, int nan, float *y, int64_t y_stride)
{
#if defined(__x86_64__) || defined(__aarch64__)
    K(maxpool_fold_f32)(rows, n, cnt, src, src_stride, acc, nan, y, y_stride);
#else
    (void)rows, (void)n, (void)cnt, (void)src, (void)src_stride, (void)acc, (void)nan, (void)y,
        (void)y_stride;
#endif
}

static int pool_any_nan(int64_t n, const float *x)
{
#if defined(__x86_64__) || defined(__aarch64__)
    return K(any_nan_f32)(n, x);
#else
    (void)n, (void)x;
    return 1;
#endif
}

/* Taps [*k0, *k1) of output row `o` whose input rows exist (empty when *k0 >= *k1). */
static void pool_taps(const struct eb_pool2d_desc *d, int64_t o, int64_t *k0, int64_t *k1)
{
    const int64_t top = o * d->stride_h - d->pad_t;
    if (d->dil_h == 1) { /* the common case, without divisions */
        *k0 = max64(0, -top);
        *k1 = min64(d->kh, d->ih - top);
        return;
    }
    *k0 = top >= 0 ? 0 : ceil_div(-top, d->dil_h);
    *k1 = min64(d->kh, floor_div(d->ih - 1 - top, d->dil_h) + 1);
}

/*
 * dst[i] = src[i] for i < n: blocks of 8 floats (fixed-size memcpy, inlined as vector moves)
 * and an overlapping last block; maxpool rows are short, so a library call would dominate.
 */
static void copy_floats(float *dst, const float *src, int64_t n)
{
    if (n < 8) {
        for (int64_t i = 0; i < n; i++)
            dst[i] = src[i];
        return;
    }
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        memcpy(dst + i, src + i, 8 * sizeof(float));
    if (i < n)
        memcpy(dst + n - 8, src + n - 8, 8 * sizeof(float));
}

/*
 * The phases of `nr` input rows (x: the first), for the output columns from the one whose
 * window starts at column `base`: phase t of row i is ph[(t * nr + i) * len + j] = column
 * base + t + j * stride_w, or -inf outside the input. The -inf parts depend on nr and base
 * only; `pad` 0 leaves them as an earlier call with the same nr and base wrote them.
 */
static void pool_phases(const struct eb_pool2d_desc *d, const float *x, int64_t nr, int64_t base,
                        int64_t len, int pad, float *ph)
{
    const int64_t s = d->stride_w, iw = d->iw;
    for (int64_t t = 0; t < s; t++) {
        const int64_t q0 = base + t;
        const int64_t j0 = max64(0, min64(len, s == 1 ? -q0 : ceil_div(-q0, s)));
        const int64_t j1 = max64(j0, min64(len, s == 1 ? iw - q0 : ceil_div(iw - q0, s)));
        for (int64_t i = 0; i < nr; i++) {
            float *dst = ph + (t * nr + i) * len;
            const float *xr = x + i * iw;
            if (s == 1)
                copy_floats(dst + j0, xr + q0 + j0, j1 - j0);
            else
                for (int64_t j = j0; j < j1; j++)
                    dst[j] = xr[q0 + j * s];
            if (!pad)
                continue;
            for (int64_t j = 0; j < j0; j++)
                dst[j] = -INFINITY;
            for (int64_t j = j1; j < len; j++)
                dst[j] = -INFINITY;
        }
    }
}

/* A task's stack buffer (POOL_BUF floats) and the (nr, base) its phases' padding was set for. */
struct pool_buf {
    float *f;
    int64_t nr, base;
};

/* Output rows [oh0, oh1) of one plane through the separable passes. */
static void pool_rows(const struct pool_ctx *c, int64_t oh0, int64_t oh1, const float *x, float *y,
                      struct pool_buf *b)
{
    const struct eb_pool2d_desc *d = c->d;
    const int64_t s = d->stride_w, sh = d->stride_h, cw = c->cw, ow = d->ow;
    const int64_t span_h = (d->kh - 1) * d->dil_h;
    const int64_t len = cw + (d->kw - 1) * d->dil_w / s; /* phase row length */
    const int64_t hs = min64(cw, ow);                    /* H row stride */
    const float *p[POOL_TAPS];
    for (int64_t oc0 = oh0; oc0 < oh1; oc0 += c->chunk_rows) {
        const int64_t oc1 = min64(oh1, oc0 + c->chunk_rows);
        /* Input rows [r_lo, r_lo + nr) cover every window of the chunk's rows. */
        const int64_t r_lo = max64(0, oc0 * sh - d->pad_t);
        const int64_t nr = min64(d->ih, (oc1 - 1) * sh - d->pad_t + span_h + 1) - r_lo;
        float *ph = b->f, *hb = b->f + round8(s * nr * len);
        /* Without NaNs in the rows (the usual case) both passes fold with a plain max. */
        const int nan = nr > 0 && pool_any_nan(nr * d->iw, x + r_lo * d->iw);
        for (int64_t c0 = 0; c0 < ow; c0 += cw) {
            const int64_t n = min64(cw, ow - c0), base = c0 * s - d->pad_l;
            if (nr > 0) {
                const int pad = b->nr != nr || b->base != base;
                pool_phases(d, x + r_lo * d->iw, nr, base, len, pad, ph);
                b->nr = nr;
                b->base = base;
                /* Tap k reads phase (k * dil_w) % s from column (k * dil_w) / s. */
                int64_t t = 0, q = 0;
                for (int64_t k0 = 0; k0 < d->kw; k0 += POOL_TAPS) {
                    const int cnt = (int)min64(d->kw - k0, POOL_TAPS);
                    for (int i = 0; i < cnt; i++) {
                        p[i] = ph + t * nr * len + q;
                        t += c->tap_t;
                        q += c->tap_q + (t >= s);
                        t -= t >= s ? s : 0;
                    }
                    pool_fold(nr, n, cnt, p, len, k0 > 0, nan, hb, hs);
                }
            }
            /*
             * Vertical: the rows with all kh taps in one fold call (one flat run when the
             * rows are contiguous in both H and y), the others one by one.
             */
            for (int64_t o = oc0; o < oc1;) {
                int64_t k0 = 0, k1 = d->kh, g = o + 1;
                if (o >= c->o_a && o <= c->o_b)
                    g = min64(oc1, c->o_b + 1);
                else
                    pool_taps(d, o, &k0, &k1);
                float *yo = y + o * ow + c0;
                if (k0 >= k1) /* the window holds padding only */
                    for (int64_t j = 0; j < n; j++)
                        yo[j] = -INFINITY;
                const int64_t top = o * sh - d->pad_t - r_lo;
                const int flat = sh == 1 && n == ow;
                for (int64_t kk = k0; kk < k1; kk += POOL_TAPS) {
                    const int cnt = (int)min64(k1 - kk, POOL_TAPS);
                    for (int i = 0; i < cnt; i++)
                        p[i] = hb + (top + (kk + i) * d->dil_h) * hs;
                    if (flat)
                        pool_fold(1, (g - o) * n, cnt, p, 0, kk > k0, nan, yo, 0);
                    else
                        pool_fold(g - o, n, cnt, p, sh * hs, kk > k0, nan, yo, ow);
                }
                o = g;
            }
        }
    }
}

/* Output rows [oh0, oh1) of one plane by the reference (windows too large for the buffer). */
static void pool_rows_ref(const struct eb_pool2d_desc *d, int64_t oh0, int64_t oh1, const float *x,
                          float *y)
{
    struct eb_pool2d_desc s = *d;
    s.n = s.c = 1;
    s.oh = oh1 - oh0;
    s.pad_t = d->pad_t - oh0 * d->stride_h;
    eb_cpu_maxpool2d_f32__ref(&s, x, y + oh0 * d->ow);
}

/*
 * Chunk geometry: the widest column chunk (a multiple of 8) that leaves room for at least
 * min(oh, 16) output rows, but no narrower than 64 columns while one row fits; cw 0 when not
 * even 8 columns of one output row fit.
 */
static void pool_plan(struct pool_ctx *c)
{
    const struct eb_pool2d_desc *d = c->d;
    const int64_t span_h = (d->kh - 1) * d->dil_h, span_w = (d->kw - 1) * d->dil_w;
    const int64_t want = min64(d->oh, 16);
    int64_t cw = round8(d->ow);
    c->cw = 0;
    for (;;) {
        const int64_t per_row = d->stride_w * (cw + span_w / d->stride_w) + cw;
        const int64_t rows_in = (POOL_BUF - 8) / per_row;
        const int64_t r = rows_in > span_h ? (rows_in - span_h - 1) / d->stride_h + 1 : 0;
        if (r >= want || (r >= 1 && cw <= 64)) {
            c->cw = cw;
            c->chunk_rows = r;
            return;
        }
        if (cw == 8)
            return;
        cw = round8(cw / 2);
    }
}

static void maxpool_task(void *vctx, size_t task, int worker)
{
    const struct pool_ctx *c = vctx;
    const struct eb_pool2d_desc *d = c->d;
    _Alignas(64) float buf[POOL_BUF];
    struct pool_buf b = {.f = buf, .nr = -1};
    int64_t u0, u1;
    (void)worker;
    task_range(task, c->n_tasks, c->units, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t p = u / c->blocks, r0 = u % c->blocks * c->rows;
        const int64_t r1 = min64(r0 + c->rows, d->oh);
        const float *xp = c->x + p * d->ih * d->iw;
        float *yp = c->y + p * d->oh * d->ow;
        if (c->cw == 0)
            pool_rows_ref(d, r0, r1, xp, yp);
        else
            pool_rows(c, r0, r1, xp, yp, &b);
    }
}

void eb_cpu_maxpool2d_f32(const struct eb_cpu_exec *cpu, const struct eb_pool2d_desc *d,
                          const float *x, float *y)
{
    const int64_t planes = d->n * d->c;
    if (!simd(cpu) || planes * d->oh * d->ow == 0) {
        eb_cpu_maxpool2d_f32__ref(d, x, y);
        return;
    }
    struct pool_ctx c = {.d = d, .x = x, .y = y};
    pool_plan(&c);
    c.tap_t = d->dil_w % d->stride_w;
    c.tap_q = d->dil_w / d->stride_w;
    c.o_a = ceil_div(d->pad_t, d->stride_h);
    c.o_b = floor_div(d->ih - 1 - (d->kh - 1) * d->dil_h + d->pad_t, d->stride_h);
    /*
     * Whole planes per unit (their H rows are shared by all output rows); planes are cut into
     * row blocks only when there are too few of them to keep the workers busy.
     */
    const int64_t spread = (int64_t)cpu->n_workers * 4;
    const int64_t blocks = planes >= spread ? 1 : min64(d->oh, (spread + planes - 1) / planes);
    c.rows = (d->oh + blocks - 1) / blocks;
    c.blocks = (d->oh + c.rows - 1) / c.rows;
    c.units = planes * c.blocks;
    c.n_tasks = task_count(cpu, c.units, c.rows * d->ow * (d->kh + d->kw));
    eb_threadpool_run(cpu->pool, c.n_tasks, maxpool_task, &c);
}

/* ---- MaxPool, channel-blocked ---------------------------------------------------------------- */

struct pool_cl_ctx {
    const struct eb_pool2d_desc *d;
    int64_t cb, chunk; /* output rows per buffer fill (0: the direct loop) */
    const float *x;
    float *y;
    size_t n_tasks;
    int64_t planes;
};

/* y pixel (oy, ox) of one block plane by the direct loop over its window (the reference's
 * running max per lane, in tap order): windows too large for the stack buffer. */
static void pool_cl_direct(const struct pool_cl_ctx *c, const float *x, float *y)
{
    const struct eb_pool2d_desc *d = c->d;
    const int64_t cb = c->cb;
    for (int64_t oy = 0; oy < d->oh; oy++)
        for (int64_t ox = 0; ox < d->ow; ox++) {
            float *yp = y + (oy * d->ow + ox) * cb;
            for (int64_t l = 0; l < cb; l++)
                yp[l] = -INFINITY;
            for (int64_t ky = 0; ky < d->kh; ky++) {
                const int64_t iy = oy - d->pad_t + ky;
                for (int64_t kx = 0; iy >= 0 && iy < d->ih && kx < d->kw; kx++) {
                    const int64_t ix = ox - d->pad_l + kx;
                    if (ix < 0 || ix >= d->iw)
                        continue;
                    const float *xp = x + (iy * d->iw + ix) * cb;
                    for (int64_t l = 0; l < cb; l++)
                        yp[l] = xp[l] > yp[l] || isnan(xp[l]) ? xp[l] : yp[l];
                }
            }
        }
}

/* Pixels of a padded input row: every window's columns, and the input after pad_l. */
static int64_t pool_cl_prow(const struct eb_pool2d_desc *d)
{
    return max64(d->ow + d->kw - 1, d->pad_l + d->iw);
}

/*
 * One block plane, separable: per chunk of output rows, each input row they read is padded
 * with -inf columns and folded over the kw taps (pixels shifted by cb floats) into a row of
 * horizontal maxima; each output row is then the fold of its valid rows of those.
 */
static void pool_cl_plane(const struct pool_cl_ctx *c, const float *x, float *y, float *buf)
{
    const struct eb_pool2d_desc *d = c->d;
    const int64_t cb = c->cb, ow = d->ow, prow_len = pool_cl_prow(d) * cb;
    const int nan = pool_any_nan(d->ih * d->iw * cb, x);
    const float *p[POOL_TAPS];
    float *prow = buf, *h = buf + round8(prow_len);
    for (int64_t o0 = 0; o0 < d->oh; o0 += c->chunk) {
        const int64_t o1 = min64(d->oh, o0 + c->chunk);
        const int64_t r0 = max64(0, o0 - d->pad_t), r1 = min64(d->ih, o1 - 1 - d->pad_t + d->kh);
        for (int64_t i = r0; i < r1; i++) {
            for (int64_t j = 0; j < prow_len; j++)
                prow[j] = -INFINITY;
            memcpy(prow + d->pad_l * cb, x + i * d->iw * cb, (size_t)(d->iw * cb) * sizeof(float));
            for (int64_t k0 = 0; k0 < d->kw; k0 += POOL_TAPS) {
                const int cnt = (int)min64(d->kw - k0, POOL_TAPS);
                for (int t = 0; t < cnt; t++)
                    p[t] = prow + (k0 + t) * cb;
                pool_fold(1, ow * cb, cnt, p, 0, k0 > 0, nan, h + (i - r0) * ow * cb, 0);
            }
        }
        for (int64_t oy = o0; oy < o1; oy++) {
            const int64_t k0 = max64(0, d->pad_t - oy), k1 = min64(d->kh, d->ih + d->pad_t - oy);
            float *yr = y + oy * ow * cb;
            if (k0 >= k1) {
                for (int64_t j = 0; j < ow * cb; j++)
                    yr[j] = -INFINITY;
                continue;
            }
            for (int64_t kk = k0; kk < k1; kk += POOL_TAPS) {
                const int cnt = (int)min64(k1 - kk, POOL_TAPS);
                for (int t = 0; t < cnt; t++)
                    p[t] = h + (oy - d->pad_t + kk + t - r0) * ow * cb;
                pool_fold(1, ow * cb, cnt, p, 0, kk > k0, nan, yr, 0);
            }
        }
    }
}

static void maxpool_cl_task(void *vctx, size_t task, int worker)
{
    const struct pool_cl_ctx *c = vctx;
    const struct eb_pool2d_desc *d = c->d;
    _Alignas(64) float buf[POOL_BUF];
    int64_t p0, p1;
    (void)worker;
    task_range(task, c->n_tasks, c->planes, &p0, &p1);
    for (int64_t p = p0; p < p1; p++) {
        const float *x = c->x + p * d->ih * d->iw * c->cb;
        float *y = c->y + p * d->oh * d->ow * c->cb;
        if (c->chunk == 0)
            pool_cl_direct(c, x, y);
        else
            pool_cl_plane(c, x, y, buf);
    }
}

void eb_cpu_maxpool2d_f32_cl(const struct eb_cpu_exec *cpu, const struct eb_pool2d_desc *d, int cb,
                             const float *x, float *y)
{
    struct pool_cl_ctx c = {.d = d, .cb = cb, .x = x, .y = y};
    EB_ASSERT(d->stride_h == 1 && d->stride_w == 1 && d->dil_h == 1 && d->dil_w == 1 &&
              d->c % cb == 0);
    c.planes = d->n * (d->c / cb);
    if (c.planes * d->oh * d->ow == 0)
        return;
    /* Output rows per fill: their input rows' horizontal maxima and one padded row fit. */
    const int64_t row = d->ow * cb, prow = round8(pool_cl_prow(d) * cb);
    const int64_t rows_in = prow < POOL_BUF ? (POOL_BUF - prow) / row : 0;
    c.chunk = simd(cpu) && rows_in >= d->kh ? rows_in - d->kh + 1 : 0;
    c.n_tasks = task_count(cpu, c.planes, d->oh * row * (d->kh + d->kw));
    eb_threadpool_run(cpu->pool, c.n_tasks, maxpool_cl_task, &c);
}

/* ---- nearest upsampling, channel-blocked ---------------------------------------------------- */

struct upsample_cl_ctx {
    int64_t rows, iw, fh, fw, cb;
    const float *x;
    float *y;
    size_t n_tasks;
};

/* Input rows (plane-major) of the task: each pixel's cb floats fw times, the row fh times. */
static void upsample_cl_task(void *vctx, size_t task, int worker)
{
    const struct upsample_cl_ctx *c = vctx;
    const int64_t cb = c->cb, ow = c->iw * c->fw;
    int64_t r0, r1;
    (void)worker;
    task_range(task, c->n_tasks, c->rows, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float *xr = c->x + r * c->iw * cb;
        float *yr = c->y + r * c->fh * ow * cb;
        for (int64_t j = 0; j < c->iw; j++)
            for (int64_t k = 0; k < c->fw; k++) {
                float *dst = yr + (j * c->fw + k) * cb;
                if (cb == 16)
                    memcpy(dst, xr + j * 16, 16 * sizeof(float));
                else if (cb == 8)
                    memcpy(dst, xr + j * 8, 8 * sizeof(float));
                else
                    memcpy(dst, xr + j * cb, (size_t)cb * sizeof(float));
            }
        for (int64_t t = 1; t < c->fh; t++)
            memcpy(yr + t * ow * cb, yr, (size_t)(ow * cb) * sizeof(float));
    }
}

void eb_cpu_upsample_f32_cl(const struct eb_cpu_exec *cpu, int64_t planes, int64_t ih, int64_t iw,
                            int64_t fh, int64_t fw, int cb, const float *x, float *y)
{
    struct upsample_cl_ctx c = {.rows = planes * ih, .iw = iw, .fh = fh, .fw = fw, .cb = cb};
    c.x = x;
    c.y = y;
    if (c.rows * iw == 0)
        return;
    c.n_tasks = task_count(cpu, c.rows, iw * fh * fw * cb);
    eb_threadpool_run(cpu->pool, c.n_tasks, upsample_cl_task, &c);
}

/* ---- nearest Resize ------------------------------------------------------------------------ */

struct resize_ctx {
    int rank;
    const int64_t *x_shape, *y_shape;
    const float *scales;
    enum eb_resize_coord coord;
    enum eb_resize_round rnd;
    int64_t xs[EB_MAX_RANK];
    int64_t factor; /* > 0: the last dim maps j → j / factor */
    int64_t fh;     /* > 0: rows map i → i / fh and the dims before them are copies */
    int fast;       /* the SIMD upsample row kernel may run */
    const float *x;
    float *y;
    size_t n_tasks;
    int64_t rows;
};

/* Writes input row xr upsampled by c->factor into `copies` output rows from yr. */
static void resize_row(const struct resize_ctx *c, const float *xr, int64_t copies, float *yr)
{
    const int64_t iw = c->x_shape[c->rank - 1], ow = c->y_shape[c->rank - 1];
#if defined(__x86_64__) || defined(__aarch64__)
    if (c->fast) {
        K(upsample_row_f32)(iw, c->factor, xr, copies, yr, ow);
        return;
    }
#endif
    for (int64_t j = 0; j < iw; j++)
        for (int64_t k = 0; k < c->factor; k++)
            yr[j * c->factor + k] = xr[j];
    for (int64_t r = 1; r < copies; r++)
        memcpy(yr + r * ow, yr, (size_t)ow * sizeof(float));
}

/* Integer upsample of the last two dims: one task unit per input row, written fh times. */
static void resize_up_task(void *vctx, size_t task, int worker)
{
    const struct resize_ctx *c = vctx;
    const int64_t ih = c->x_shape[c->rank - 2], iw = c->x_shape[c->rank - 1];
    const int64_t ow = c->y_shape[c->rank - 1];
    int64_t q0, q1;
    (void)worker;
    task_range(task, c->n_tasks, c->rows, &q0, &q1);
    for (int64_t q = q0; q < q1; q++) {
        const int64_t plane = q / ih, i = q % ih;
        resize_row(c, c->x + q * iw, c->fh, c->y + (plane * ih + i) * c->fh * ow);
    }
}

static void resize_task(void *vctx, size_t task, int worker)
{
    const struct resize_ctx *c = vctx;
    const int last = c->rank - 1;
    const int64_t ow = c->y_shape[last], iw = c->x_shape[last];
    int64_t r0, r1, prev = -1;
    (void)worker;
    task_range(task, c->n_tasks, c->rows, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t off = 0, rem = r;
        for (int d = last - 1; d >= 0; d--) {
            const int64_t i = rem % c->y_shape[d];
            rem /= c->y_shape[d];
            off += eb_cpu_resize_nearest_index(i, c->x_shape[d], c->y_shape[d], c->scales[d],
                                               c->coord, c->rnd) *
                   c->xs[d];
        }
        float *yr = c->y + r * ow;
        if (off == prev) { /* same source row as the previous output row: copy it */
            memcpy(yr, yr - ow, (size_t)ow * sizeof(float));
            continue;
        }
        prev = off;
        const float *xr = c->x + off;
        if (c->factor > 0) {
            resize_row(c, xr, 1, yr);
        } else {
            for (int64_t j = 0; j < ow; j++)
                yr[j] =
                    xr[eb_cpu_resize_nearest_index(j, iw, ow, c->scales[last], c->coord, c->rnd)];
        }
    }
}

/* f > 0 when output index j of dim d reads input index j / f for every j, else 0. */
static int64_t resize_factor(const struct resize_ctx *c, int d)
{
    const int64_t in = c->x_shape[d], out = c->y_shape[d];
    const int64_t f = in > 0 && out % in == 0 ? out / in : 0;
    for (int64_t j = 0; f > 0 && j < out; j++)
        if (eb_cpu_resize_nearest_index(j, in, out, c->scales[d], c->coord, c->rnd) != j / f)
            return 0;
    return f;
}

void eb_cpu_resize_nearest_f32(const struct eb_cpu_exec *cpu, int rank, const int64_t *x_shape,
                               const float *x, const int64_t *y_shape, const float *scales,
                               enum eb_resize_coord coord, enum eb_resize_round rnd, float *y)
{
    int64_t total = 1, s = 1;
    for (int d = 0; d < rank; d++)
        total *= y_shape[d];
    if (cpu->isa == EB_CPU_ISA_REF || rank < 1 || total == 0) {
        eb_cpu_resize_nearest_f32__ref(rank, x_shape, x, y_shape, scales, coord, rnd, y);
        return;
    }
    struct resize_ctx c = {.rank = rank, .x_shape = x_shape, .y_shape = y_shape, .x = x, .y = y};
    c.scales = scales;
    c.coord = coord;
    c.rnd = rnd;
    c.fast = simd(cpu);
    for (int d = rank - 1; d >= 0; d--) {
        c.xs[d] = s;
        s *= x_shape[d];
    }
    const int last = rank - 1;
    const int64_t ow = y_shape[last];
    c.factor = resize_factor(&c, last);
    /* YOLO's upsample: integer factors on the last two dims, the others copied. */
    if (c.factor > 0 && rank >= 2 && (c.fh = resize_factor(&c, last - 1)) > 0) {
        for (int d = 0; d < last - 1; d++)
            if (resize_factor(&c, d) != 1)
                c.fh = 0;
    }
    if (c.fh > 0) {
        c.rows = s / x_shape[last];
        c.n_tasks = task_count(cpu, c.rows, c.fh * ow);
        eb_threadpool_run(cpu->pool, c.n_tasks, resize_up_task, &c);
        return;
    }
    c.rows = total / ow;
    c.n_tasks = task_count(cpu, c.rows, ow);
    eb_threadpool_run(cpu->pool, c.n_tasks, resize_task, &c);
}

/* ---- linear Resize ------------------------------------------------------------------------- */

struct resize_linear_ctx {
    int64_t planes, ih, iw, oh, ow;
    float sh, sw;
    enum eb_resize_coord coord;
    const float *x;
    float *y;
    size_t n_tasks;
};

static void resize_linear_task(void *vctx, size_t task, int worker)
{
    const struct resize_linear_ctx *c = vctx;
    int64_t p0, p1;
    (void)worker;
    task_range(task, c->n_tasks, c->planes, &p0, &p1);
    eb_cpu_resize_linear_f32__ref(p1 - p0, c->ih, c->iw, c->oh, c->ow, c->sh, c->sw, c->coord,
                                  c->x + p0 * c->ih * c->iw, c->y + p0 * c->oh * c->ow);
}

void eb_cpu_resize_linear_f32(const struct eb_cpu_exec *cpu, int64_t planes, int64_t ih, int64_t iw,
                              int64_t oh, int64_t ow, float sh, float sw,
                              enum eb_resize_coord coord, const float *x, float *y)
{
    struct resize_linear_ctx c = {.planes = planes, .ih = ih, .iw = iw, .oh = oh, .ow = ow};
    c.sh = sh;
    c.sw = sw;
    c.coord = coord;
    c.x = x;
    c.y = y;
    c.n_tasks = task_count(cpu, planes, 4 * oh * ow); /* four taps per output */
    eb_threadpool_run(cpu->pool, c.n_tasks, resize_linear_task, &c);
}

/* ---- Quantize / Dequantize ----------------------------------------------------------------- */

struct quant_ctx {
    int64_t rows, len, channels; /* rows of `len` elements; row r has channel r % channels */
    int dequant, sgn;
    enum eb_dtype dt;
    const void *x, *zp;
    const float *scale;
    void *y;
    size_t n_tasks;
};

/* Elements [off, off + n) of channel `ch`. */
static void quant_piece(const struct quant_ctx *c, int64_t off, int64_t n, int64_t ch)
{
    const int32_t z = c->zp == NULL ? 0
                      : c->sgn      ? ((const int8_t *)c->zp)[ch]
                                    : ((const uint8_t *)c->zp)[ch];
    const uint8_t *xq = (const uint8_t *)c->x + off;
    const float *xf = (const float *)c->x + off;
    float *yf = (float *)c->y + off;
    uint8_t *yq = (uint8_t *)c->y + off;
#if defined(__x86_64__)
    if (c->dequant)
        eb_cpu_dequantize_f32__avx2(n, xq, c->sgn, c->scale[ch], z, yf);
    else
        eb_cpu_quantize_f32__avx2(n, xf, c->scale[ch], (float)z, c->sgn, yq);
#elif defined(__aarch64__)
    if (c->dequant)
        eb_cpu_dequantize_f32__neon(n, xq, c->sgn, c->scale[ch], z, yf);
    else
        eb_cpu_quantize_f32__neon(n, xf, c->scale[ch], (float)z, c->sgn, yq);
#else
    (void)n, (void)z, (void)xq, (void)xf, (void)yf, (void)yq;
#endif
}

static void quant_task(void *vctx, size_t task, int worker)
{
    const struct quant_ctx *c = vctx;
    int64_t b, e;
    (void)worker;
    if (c->rows == 1) { /* one per-tensor run, split into pieces (multiples of 16) */
        piece_range(task, c->n_tasks, c->len, &b, &e);
        quant_piece(c, b, e - b, 0);
        return;
    }
    task_range(task, c->n_tasks, c->rows, &b, &e);
    for (int64_t r = b; r < e; r++)
        quant_piece(c, r * c->len, c->len, r % c->channels);
}

void eb_cpu_quantize_f32(const struct eb_cpu_exec *cpu, int64_t n, int64_t channels, int64_t inner,
                         const float *x, const float *scale, const void *zp, int out_signed,
                         void *y)
{
    if (!simd(cpu) || n == 0 || (channels > 1 && inner < 16)) {
        eb_cpu_quantize_f32__ref(n, channels, inner, x, scale, zp, out_signed, y);
        return;
    }
    struct quant_ctx c = {.x = x, .zp = zp, .scale = scale, .y = y, .sgn = out_signed};
    c.channels = channels;
    c.len = channels == 1 ? n : inner;
    c.rows = n / c.len;
    c.n_tasks = c.rows == 1 ? task_count(cpu, n / 16, 16) : task_count(cpu, c.rows, c.len);
    eb_threadpool_run(cpu->pool, c.n_tasks, quant_task, &c);
}

void eb_cpu_dequantize_f32(const struct eb_cpu_exec *cpu, int64_t n, int64_t channels,
                           int64_t inner, enum eb_dtype dt, const void *x, const float *scale,
                           const void *zp, float *y)
{
    if (!simd(cpu) || n == 0 || dt == EB_DTYPE_I32 || (channels > 1 && inner < 16)) {
        eb_cpu_dequantize_f32__ref(n, channels, inner, dt, x, scale, zp, y);
        return;
    }
    struct quant_ctx c = {.x = x, .zp = zp, .scale = scale, .y = y, .dequant = 1};
    c.sgn = dt == EB_DTYPE_I8;
    c.dt = dt;
    c.channels = channels;
    c.len = channels == 1 ? n : inner;
    c.rows = n / c.len;
    c.n_tasks = c.rows == 1 ? task_count(cpu, n / 16, 16) : task_count(cpu, c.rows, c.len);
    eb_threadpool_run(cpu->pool, c.n_tasks, quant_task, &c);
}

/* ---- copies -------------------------------------------------------------------------------- */

struct copy_ctx {
    int64_t rows, parts;
    size_t row_bytes, part_bytes, x_stride, y_stride;
    const char *x;
    char *y;
    size_t n_tasks;
};

static void copy_task(void *vctx, size_t task, int worker)
{
    const struct copy_ctx *c = vctx;
    int64_t u0, u1;
    (void)worker;
    task_range(task, c->n_tasks, c->rows * c->parts, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t r = u / c->parts;
        const size_t b = (size_t)(u % c->parts) * c->part_bytes;
        const size_t n = c->row_bytes - b < c->part_bytes ? c->row_bytes - b : c->part_bytes;
        memcpy(c->y + (size_t)r * c->y_stride + b, c->x + (size_t)r * c->x_stride + b, n);
    }
}

void eb_cpu_copy_rows(const struct eb_cpu_exec *cpu, int64_t rows, size_t row_bytes, const void *x,
                      size_t x_stride, void *y, size_t y_stride)
{
    if (rows <= 0 || row_bytes == 0)
        return;
    struct copy_ctx c = {.rows = rows, .row_bytes = row_bytes, .x = x, .y = y};
    c.x_stride = x_stride;
    c.y_stride = y_stride;
    const size_t part = (size_t)TASK_ELEMS * 4;
    c.part_bytes = row_bytes > part && cpu->n_workers > 1 ? part : row_bytes;
    c.parts = (int64_t)((row_bytes + c.part_bytes - 1) / c.part_bytes);
    c.n_tasks = task_count(cpu, rows * c.parts, (int64_t)(c.part_bytes / 4));
    eb_threadpool_run(cpu->pool, c.n_tasks, copy_task, &c);
}

/*
 * Gather of rows: row r (of `nd` outer dims `shape`) starts in x at base + Σ i_d * st[d] elements
 * and holds `len` elements `inc` apart (inc 1: one memcpy); y is dense.
 */
struct gather_ctx {
    int nd;
    int64_t shape[EB_MAX_RANK], st[EB_MAX_RANK];
    int64_t base, len, inc, rows;
    size_t es;
    const char *x;
    char *y;
    size_t n_tasks;
};

static void gather_task(void *vctx, size_t task, int worker)
{
    const struct gather_ctx *c = vctx;
    const size_t es = c->es;
    int64_t r0, r1;
    (void)worker;
    task_range(task, c->n_tasks, c->rows, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t off = c->base, rem = r;
        for (int d = c->nd - 1; d >= 0; d--) {
            off += rem % c->shape[d] * c->st[d];
            rem /= c->shape[d];
        }
        const char *xr = c->x + off * (int64_t)es;
        char *yr = c->y + r * c->len * (int64_t)es;
        if (c->inc == 1) {
            memcpy(yr, xr, (size_t)c->len * es);
        } else if (es == 4) {
            const int64_t step = c->inc * 4;
            for (int64_t j = 0; j < c->len; j++)
                memcpy(yr + j * 4, xr + j * step, 4);
        } else if (es == 8) {
            const int64_t step = c->inc * 8;
            for (int64_t j = 0; j < c->len; j++)
                memcpy(yr + j * 8, xr + j * step, 8);
        } else {
            for (int64_t j = 0; j < c->len; j++)
                memcpy(yr + j * (int64_t)es, xr + j * c->inc * (int64_t)es, es);
        }
    }
}

static void gather_run(const struct eb_cpu_exec *cpu, struct gather_ctx *c)
{
    c->rows = 1;
    for (int d = 0; d < c->nd; d++)
        c->rows *= c->shape[d];
    if (c->rows == 0 || c->len == 0)
        return;
    c->n_tasks = task_count(cpu, c->rows, c->len * (int64_t)c->es / 4);
    eb_threadpool_run(cpu->pool, c->n_tasks, gather_task, c);
}

void eb_cpu_slice(const struct eb_cpu_exec *cpu, size_t es, int rank, const int64_t *x_shape,
                  const void *x, const int64_t *start, const int64_t *step, const int64_t *y_shape,
                  void *y)
{
    if (cpu->isa == EB_CPU_ISA_REF || rank < 1) {
        eb_cpu_slice__ref(es, rank, x_shape, x, start, step, y_shape, y);
        return;
    }
    struct gather_ctx c = {.es = es, .x = x, .y = y};
    int64_t xs[EB_MAX_RANK], s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        xs[d] = s;
        s *= x_shape[d];
        c.base += start[d] * xs[d];
    }
    int d = rank - 1;
    c.len = 1;
    c.inc = 1;
    if (step[d] == 1) {
        /* Dims taken whole merge into the run; then one partial dim with step 1. */
        while (d >= 0 && step[d] == 1 && y_shape[d] == x_shape[d])
            c.len *= y_shape[d--];
        if (d >= 0 && step[d] == 1)
            c.len *= y_shape[d--];
    } else {
        c.len = y_shape[d];
        c.inc = step[d];
        d--;
    }
    c.nd = d + 1;
    for (int k = 0; k <= d; k++) {
        c.shape[k] = y_shape[k];
        c.st[k] = step[k] * xs[k];
    }
    gather_run(cpu, &c);
}

void eb_cpu_transpose(const struct eb_cpu_exec *cpu, size_t es, int rank, const int64_t *x_shape,
                      const int64_t *perm, const void *x, void *y)
{
    if (cpu->isa == EB_CPU_ISA_REF || rank < 1) {
        eb_cpu_transpose__ref(es, rank, x_shape, perm, x, y);
        return;
    }
    int64_t xs[EB_MAX_RANK], s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        xs[d] = s;
        s *= x_shape[d];
    }
    /* Output dims (size > 1) with their input strides; merge runs contiguous in both. */
    int64_t shp[EB_MAX_RANK], st[EB_MAX_RANK];
    int k = 0;
    for (int d = 0; d < rank; d++) {
        const int64_t n = x_shape[perm[d]], str = xs[perm[d]];
        if (n == 1)
            continue;
        if (k > 0 && st[k - 1] == str * n) {
            shp[k - 1] *= n;
            st[k - 1] = str;
            continue;
        }
        shp[k] = n;
        st[k] = str;
        k++;
    }
    struct gather_ctx c = {.es = es, .x = x, .y = y, .len = 1, .inc = 1};
    if (k > 0) {
        c.len = shp[k - 1];
        c.inc = st[k - 1];
        k--;
    }
    c.nd = k;
    for (int d = 0; d < k; d++) {
        c.shape[d] = shp[d];
        c.st[d] = st[d];
    }
    if (s == 0)
        return;
    gather_run(cpu, &c);
}
