/*
 * The packed SGEMM shared by convolution (conv_f32.c) and MatMul/Gemm: micro-kernel selection,
 * packing, the blocked macro-kernel (tiles + fused epilogue) and the matrix-product driver.
 *
 * eb_cpu_matmul_f32 splits every product into tasks of MC rows x NC columns; a task packs its A
 * block (MC x KC) and B block (KC x NC) into its worker's scratch slice and runs the
 * macro-kernel (B micro-panel stays in L1 while the A block streams from L2).
 */
#include <string.h>

#include "engine/cpu/fast.h"
#include "engine/cpu/gemm.h"

/* Matrix-product blocking (multiples of every ISA's MR and NR: 6, 8 and 16, 32). */
#define MM_MC     96
#define MM_KC     256
#define MM_NC     256
#define MM_NR_MAX 32
/* Row block of a product on B packed at load (a multiple of every MR; its A k block, 384 x
 * MM_KC floats, stays in L2). */
#define MM_MC_PB 384
/* Products of fewer multiply-adds run on the caller alone. */
#define MM_SERIAL_MACS (1 << 20)

int eb_cpu__sgemm_select(enum eb_cpu_isa isa, struct eb_sgemm_ukernel *uk_out)
{
    memset(uk_out, 0, sizeof(*uk_out));
    switch (isa) {
#if defined(__x86_64__) || defined(_M_X64)
    case EB_CPU_ISA_AVX2:
        *uk_out = (struct eb_sgemm_ukernel){6,
                                            16,
                                            eb_cpu_sgemm_f32_6x16__avx2,
                                            eb_cpu_epilogue_tile_f32__avx2,
                                            eb_cpu_sgemm_f32_6x16_direct__avx2,
                                            eb_cpu_gather2_f32__avx2,
                                            eb_cpu_dw_rows_f32__avx2,
                                            6,
                                            16,
                                            8,
                                            eb_cpu_conv_cl_f32_6x16__avx2,
                                            eb_cpu_cl_pack_f32__avx2,
                                            eb_cpu_cl_unpack_f32__avx2,
                                            eb_cpu_dw_cl_f32__avx2,
                                            eb_cpu_pw_cl_f32_6x16__avx2,
                                            eb_cpu_cl_epilogue_f32__avx2,
                                            eb_cpu_sgemv_f32__avx2,
                                            eb_cpu_sgemv_packed_f32__avx2};
        return 1;
    case EB_CPU_ISA_AVX512:
        *uk_out = (struct eb_sgemm_ukernel){8,
                                            32,
                                            eb_cpu_sgemm_f32_8x32__avx512,
                                            eb_cpu_epilogue_tile_f32__avx512,
                                            eb_cpu_sgemm_f32_8x32_direct__avx512,
                                            eb_cpu_gather2_f32__avx2,
                                            eb_cpu_dw_rows_f32__avx2,
                                            12,
                                            32,
                                            16,
                                            eb_cpu_conv_cl_f32_12x32__avx512,
                                            eb_cpu_cl_pack_f32__avx2,
                                            eb_cpu_cl_unpack_f32__avx2,
                                            eb_cpu_dw_cl_f32__avx512,
                                            eb_cpu_pw_cl_f32_12x32__avx512,
                                            eb_cpu_cl_epilogue_f32__avx512,
                                            eb_cpu_sgemv_f32__avx512,
                                            eb_cpu_sgemv_packed_f32__avx512};
        return 1;
#endif
#if defined(__aarch64__)
    case EB_CPU_ISA_NEON:
        *uk_out = (struct eb_sgemm_ukernel){8,
                                            8,
                                            eb_cpu_sgemm_f32_8x8__neon,
                                            eb_cpu_epilogue_tile_f32__neon,
                                            eb_cpu_sgemm_f32_8x8_direct__neon,
                                            eb_cpu_gather2_f32__neon,
                                            eb_cpu_dw_rows_f32__neon,
                                            0,
                                            0,
                                            0,
                                            NULL,
                                            NULL,
                                            NULL,
                                            NULL,
                                            NULL,
                                            NULL,
                                            NULL /* gemv: the packed path */,
                                            NULL};
        return 1;
#endif
    default: return 0;
    }
}

void eb_cpu__epilogue_tile_f32(const struct eb_epilogue *e, const float *bias, int64_t m, int64_t n,
                               const float *s, int64_t lds, float *c, int64_t ldc, const float *r,
                               int64_t ldr)
{
    for (int64_t i = 0; i < m; i++) {
        const float *si = s + i * lds;
        float *ci = c + i * ldc;
        for (int64_t j = 0; j < n; j++)
            ci[j] = si[j] + (bias != NULL ? bias[i] : 0.0f);
        eb_cpu_epilogue_f32__ref(e, (size_t)n, e->residual ? r + i * ldr : NULL, ci);
    }
}

void eb_cpu__sgemm_block(const struct eb_sgemm_ukernel *uk, int64_t m, int64_t n, int64_t k,
                         const float *a, int64_t a_ps, const float *b, float *c, int64_t ldc,
                         int accumulate, const struct eb_epilogue *epi, const float *bias,
                         const float *r)
{
    const int mr = uk->mr, nr = uk->nr;
    float tile[8 * 32] __attribute__((aligned(64))); /* MR x NR at most */
    for (int64_t j = 0; j < n; j += nr) {
        const int64_t nj = n - j < nr ? n - j : nr;
        const float *bp = b + (j / nr) * k * nr;
        for (int64_t i = 0; i < m; i += mr) {
            const int64_t mi = m - i < mr ? m - i : mr;
            const float *ap = a + (i / mr) * a_ps;
            float *ct = c + i * ldc + j;
            if (mi == mr && nj == nr) {
                uk->gemm(k, ap, bp, ct, ldc, accumulate);
            } else {
                if (accumulate)
                    for (int64_t t = 0; t < mi; t++)
                        memcpy(tile + t * nr, ct + t * ldc, (size_t)nj * sizeof(float));
                uk->gemm(k, ap, bp, tile, nr, accumulate);
                for (int64_t t = 0; t < mi; t++)
                    memcpy(ct + t * ldc, tile + t * nr, (size_t)nj * sizeof(float));
            }
            if (epi != NULL)
                uk->epilogue(epi, bias != NULL ? bias + i : NULL, mi, nj, ct, ldc, ct, ldc,
                             epi->residual ? r + i * ldc + j : NULL, ldc);
        }
    }
}

void eb_cpu__sgemm_block_direct(const struct eb_sgemm_ukernel *uk, int64_t m, int64_t n, int64_t k,
                                const float *a, int64_t a_ps, const float *b, const int32_t *boff,
                                const float *tail, float *c, int64_t ldc, int accumulate,
                                const struct eb_epilogue *epi, const float *bias, const float *r)
{
    const int mr = uk->mr, nr = uk->nr;
    float tile[8 * 32] __attribute__((aligned(64))); /* MR x NR at most */
    for (int64_t j = 0; j < n; j += nr) {
        const int64_t nj = n - j < nr ? n - j : nr;
        const int packed = nj < nr && tail != NULL;
        for (int64_t i = 0; i < m; i += mr) {
            const int64_t mi = m - i < mr ? m - i : mr;
            const float *ap = a + (i / mr) * a_ps;
            float *ct = c + i * ldc + j;
            float *dst = ct;
            int64_t ldd = ldc;
            if (mi < mr || nj < nr) {
                if (accumulate)
                    for (int64_t t = 0; t < mi; t++)
                        memcpy(tile + t * nr, ct + t * ldc, (size_t)nj * sizeof(float));
                dst = tile;
                ldd = nr;
            }
            if (packed)
                uk->gemm(k, ap, tail, dst, ldd, accumulate);
            else
                uk->direct(k, ap, b + j, boff, dst, ldd, accumulate);
            if (dst == tile)
                for (int64_t t = 0; t < mi; t++)
                    memcpy(ct + t * ldc, tile + t * nr, (size_t)nj * sizeof(float));
            if (epi != NULL)
                uk->epilogue(epi, bias != NULL ? bias + i : NULL, mi, nj, ct, ldc, ct, ldc,
                             epi->residual ? r + i * ldc + j : NULL, ldc);
        }
    }
}

void eb_cpu__pack_a(int mr, int64_t m, int64_t k, const float *a, int64_t lda, float *dst)
{
#if defined(__x86_64__) || defined(_M_X64)
    if (mr == 8) { /* AVX-512's MR: only selected where the CPU has AVX-512, so AVX2 too */
        eb_cpu_pack_a8_f32__avx2(m, k, a, lda, dst);
        return;
    }
#endif
    for (int64_t i = 0; i < m; i += mr) {
        const int64_t mi = m - i < mr ? m - i : mr;
        for (int64_t p = 0; p < k; p++) {
            for (int64_t t = 0; t < mi; t++)
                dst[t] = a[(i + t) * lda + p];
            for (int64_t t = mi; t < mr; t++)
                dst[t] = 0.0f;
            dst += mr;
        }
    }
}

void eb_cpu__pack_b(int nr, int64_t k, int64_t n, const float *b, int64_t ldb, float *dst)
{
    /*
     * Row by row: each row's n floats are read once, front to back, while the next rows are
     * prefetched (a B that does not fit the caches, such as a decoder's weights, is read as a
     * few long streams instead of one short one per panel and row), and scattered to the panels.
     */
    const int64_t panels = (n + nr - 1) / nr, ps = k * nr;
    for (int64_t p = 0; p < k; p++) {
        const float *row = b + p * ldb;
        if (p + 4 < k)
            for (int64_t j = 0; j < n; j += 16)
                __builtin_prefetch(row + 4 * ldb + j);
        float *d = dst + p * nr;
        for (int64_t q = 0; q < panels; q++, d += ps) {
            const int64_t j = q * nr, nj = n - j < nr ? n - j : nr;
            memcpy(d, row + j, (size_t)nj * sizeof(float));
            for (int64_t t = nj; t < nr; t++)
                d[t] = 0.0f;
        }
    }
}

/* ---- MatMul / Gemm ---------------------------------------------------------------------- */

/* Per-worker floats: the A block (MC x KC, MR-padded) and the B block (KC x NC, NR-padded). */
static size_t mm_worker_floats(int64_t m, int64_t k, int64_t n)
{
    const int64_t mc = eb_cpu_round_up(m < MM_MC ? m : MM_MC, 24); /* lcm of every MR */
    const int64_t kc = k < MM_KC ? k : MM_KC;
    const int64_t nc = eb_cpu_round_up(n < MM_NC ? n : MM_NC, MM_NR_MAX);
    return eb_cpu_align64((size_t)(mc * kc + 16 + kc * nc) * sizeof(float)) / sizeof(float);
}

/*
 * A single product (batch 1) whose A fits MM_SHARED_A_MAX floats is packed once, whole, into
 * scratch shared by the workers; each task then packs its B block once and runs it against
 * every row block (the weights of a prefill's projections are read once, not once per row
 * block, and A is not packed again for every column block).
 */
#define MM_SHARED_A_MAX (1 << 22)

static size_t mm_shared_floats(int64_t m, int64_t k)
{
    const int64_t f = eb_cpu_round_up(m, 24) * k;
    return f <= MM_SHARED_A_MAX ? eb_cpu_align64((size_t)f * sizeof(float)) / sizeof(float) : 0;
}

size_t eb_cpu_matmul_f32_scratch(int64_t m, int64_t k, int64_t n, int n_workers)
{
    if (m <= 0 || k <= 0 || n <= 0)
        return 0;
    return ((size_t)(n_workers < 1 ? 1 : n_workers) * mm_worker_floats(m, k, n) +
            mm_shared_floats(m, k)) *
           sizeof(float);
}

struct mm_ctx {
    struct eb_sgemm_ukernel uk;
    int64_t m, k, n, a_stride, b_stride, mb, nb;
    const float *a, *b;
    float *y, *scratch;
    float *apack;    /* the shared packed A (mm_shared_task), else NULL */
    const float *pb; /* B packed at load (eb_cpu_matmul_f32_pack: panels over all k), else NULL */
    size_t worker_floats;
};

/*
 * Columns [n0, n1) (n0 a multiple of NR) of rows [0, mc) over k block [k0, k0 + kc), B packed
 * at load: one macro-kernel call per panel (its k rows are NR * k floats apart, not NR * kc).
 */
static void block_pb(const struct mm_ctx *c, int64_t mc, int64_t n0, int64_t n1, int64_t k0,
                     int64_t kc, const float *ap, int64_t a_ps, float *y)
{
    const int nr = c->uk.nr;
    for (int64_t j = n0; j < n1; j += nr) {
        eb_cpu__sgemm_block(&c->uk, mc, n1 - j < nr ? n1 - j : nr, kc, ap, a_ps,
                            c->pb + (j / nr) * c->k * nr + k0 * nr, y + j, c->n, k0 > 0, NULL, NULL,
                            NULL);
    }
}

/* Packs MR panels [task * per, ...) of the shared A. */
struct pack_ctx {
    int mr;
    int64_t m, k, per;
    const float *a;
    float *dst;
};

static void pack_a_task(void *vctx, size_t task, int worker)
{
    const struct pack_ctx *c = vctx;
    (void)worker;
    const int64_t r0 = (int64_t)task * c->per * c->mr;
    const int64_t r1 = r0 + c->per * c->mr < c->m ? r0 + c->per * c->mr : c->m;
    eb_cpu__pack_a(c->mr, r1 - r0, c->k, c->a + r0 * c->k, c->k, c->dst + r0 * c->k);
}

/* Column block `task` against every row block of the shared packed A; B packed once. */
static void mm_shared_task(void *vctx, size_t task, int worker)
{
    const struct mm_ctx *c = vctx;
    /* Task t: NR panels [t * P / T, (t + 1) * P / T) of P, T = c->nb tasks (at most MM_NC
     * columns each: T >= P / (MM_NC / NR)). */
    const int64_t panels = (c->n + c->uk.nr - 1) / c->uk.nr, t = (int64_t)task;
    const int64_t n0 = t * panels / c->nb * c->uk.nr;
    const int64_t n1e = (t + 1) * panels / c->nb * c->uk.nr, n1 = n1e < c->n ? n1e : c->n;
    const int mr = c->uk.mr;
    if (c->pb != NULL) {
        /* Panel by panel, all of its k blocks before the next: the panel's C rows stay in
         * the caches instead of being read and written again for every k block. */
        for (int64_t m0 = 0; m0 < c->m; m0 += MM_MC_PB)
            for (int64_t j = n0; j < n1; j += c->uk.nr)
                for (int64_t k0 = 0; k0 < c->k; k0 += MM_KC)
                    block_pb(c, c->m - m0 < MM_MC_PB ? c->m - m0 : MM_MC_PB, j,
                             n1 - j < c->uk.nr ? n1 : j + c->uk.nr, k0,
                             c->k - k0 < MM_KC ? c->k - k0 : MM_KC, c->apack + m0 * c->k + k0 * mr,
                             c->k * mr, c->y + m0 * c->n);
        return;
    }
    float *bbuf = c->scratch + (size_t)worker * c->worker_floats;
    for (int64_t k0 = 0; k0 < c->k; k0 += MM_KC) {
        const int64_t kc = c->k - k0 < MM_KC ? c->k - k0 : MM_KC;
        eb_cpu__pack_b(c->uk.nr, kc, n1 - n0, c->b + k0 * c->n + n0, c->n, bbuf);
        for (int64_t m0 = 0; m0 < c->m; m0 += MM_MC) {
            const int64_t mc = c->m - m0 < MM_MC ? c->m - m0 : MM_MC;
            eb_cpu__sgemm_block(&c->uk, mc, n1 - n0, kc, c->apack + m0 * c->k + k0 * mr, c->k * mr,
                                bbuf, c->y + m0 * c->n + n0, c->n, k0 > 0, NULL, NULL, NULL);
        }
    }
}

static void mm_task(void *vctx, size_t task, int worker)
{
    const struct mm_ctx *c = vctx;
    const int64_t t = (int64_t)task, per = c->mb * c->nb;
    const int64_t bi = t / per, mb = t % per / c->nb, nb = t % c->nb;
    const int64_t m0 = mb * MM_MC, m1 = m0 + MM_MC < c->m ? m0 + MM_MC : c->m;
    const int64_t n0 = nb * MM_NC, n1 = n0 + MM_NC < c->n ? n0 + MM_NC : c->n;
    const float *a = c->a + bi * c->a_stride, *b = c->b + bi * c->b_stride;
    float *y = c->y + bi * c->m * c->n;
    float *abuf = c->scratch + (size_t)worker * c->worker_floats;
    const int64_t mc = m1 - m0;
    for (int64_t k0 = 0; k0 < c->k; k0 += MM_KC) {
        const int64_t kc = c->k - k0 < MM_KC ? c->k - k0 : MM_KC;
        float *bbuf =
            abuf + eb_cpu_round_up(eb_cpu_round_up(mc, c->uk.mr) * kc, 16); /* 64-byte aligned */
        eb_cpu__pack_a(c->uk.mr, mc, kc, a + m0 * c->k + k0, c->k, abuf);
        if (c->pb != NULL) {
            block_pb(c, mc, n0, n1, k0, kc, abuf, kc * c->uk.mr, y + m0 * c->n);
            continue;
        }
        eb_cpu__pack_b(c->uk.nr, kc, n1 - n0, b + k0 * c->n + n0, c->n, bbuf);
        eb_cpu__sgemm_block(&c->uk, mc, n1 - n0, kc, abuf, kc * c->uk.mr, bbuf, y + m0 * c->n + n0,
                            c->n, k0 > 0, NULL, NULL, NULL);
    }
}

/*
 * Products of at most MV_M_MAX rows (a decoder's step: one token) take the GEMV path: B is read
 * once, in place (packing it would cost more than the product), in column chunks spread over
 * the workers.
 */
#define MV_M_MAX       2
#define MV_SERIAL_MACS (1 << 15)

struct mv_ctx {
    eb_sgemv_fn fn;
    int64_t m, k, n, a_stride, b_stride, nc, nb;
    const float *a, *b;
    float *y;
};

static void mv_task(void *vctx, size_t task, int worker)
{
    const struct mv_ctx *c = vctx;
    (void)worker;
    const int64_t bi = (int64_t)task / c->nb, j0 = (int64_t)task % c->nb * c->nc;
    const int64_t nj = c->n - j0 < c->nc ? c->n - j0 : c->nc;
    const float *a = c->a + bi * c->a_stride, *b = c->b + bi * c->b_stride + j0;
    float *y = c->y + bi * c->m * c->n + j0;
    for (int64_t r = 0; r < c->m; r++)
        c->fn(c->k, nj, a + r * c->k, b, c->n, y + r * c->n);
}

void eb_cpu_matmul_f32(const struct eb_cpu_exec *x, int64_t batch, int64_t m, int64_t k, int64_t n,
                       const float *a, int64_t a_stride, const float *b, int64_t b_stride, float *y)
{
    struct mm_ctx c = {
        .m = m, .k = k, .n = n, .a_stride = a_stride, .b_stride = b_stride, .a = a, .b = b, .y = y};
    const int workers = x->n_workers < 1 ? 1 : x->n_workers;
    if (batch <= 0 || m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        memset(y, 0, (size_t)(batch * m * n) * sizeof(float));
        return;
    }
    if (!eb_cpu__sgemm_select(x->isa, &c.uk) || x->scratch == NULL ||
        x->scratch_bytes < eb_cpu_matmul_f32_scratch(m, k, n, workers)) {
        for (int64_t i = 0; i < batch; i++)
            eb_cpu_matmul_f32__ref(m, k, n, a + i * a_stride, b + i * b_stride, y + i * m * n);
        return;
    }
    if (m <= MV_M_MAX && c.uk.gemv != NULL) {
        /* About 4 chunks per worker (whole 64-column blocks) when the batch alone is fewer. */
        const int64_t want =
            workers == 1 || batch >= 4 * workers ? 1 : (4 * workers + batch - 1) / batch;
        int64_t nc = eb_cpu_round_up((n + want - 1) / want, 64);
        nc = nc < 64 ? 64 : nc;
        struct mv_ctx v = {.fn = c.uk.gemv,
                           .m = m,
                           .k = k,
                           .n = n,
                           .a_stride = a_stride,
                           .b_stride = b_stride,
                           .nc = nc,
                           .nb = (n + nc - 1) / nc,
                           .a = a,
                           .b = b,
                           .y = y};
        const size_t tasks = (size_t)(batch * v.nb);
        if (batch * m * k * n < MV_SERIAL_MACS) /* waking the workers would cost more */
            for (size_t t = 0; t < tasks; t++)
                mv_task(&v, t, 0);
        else
            eb_threadpool_run(x->pool, tasks, mv_task, &v);
        return;
    }
    c.scratch = x->scratch;
    c.worker_floats = mm_worker_floats(m, k, n);
    c.mb = (m + MM_MC - 1) / MM_MC;
    c.nb = (n + MM_NC - 1) / MM_NC;
    const size_t shared = mm_shared_floats(m, k);
    const int64_t panels = (n + c.uk.nr - 1) / c.uk.nr, per = MM_NC / c.uk.nr;
    if (batch == 1 && shared > 0 && panels >= workers &&
        x->scratch_bytes >= ((size_t)workers * c.worker_floats + shared) * sizeof(float)) {
        /* MM_MC is a multiple of MR: row block m0 starts at panel m0 / MR, m0 * k floats in. */
        c.apack = c.scratch + (size_t)workers * c.worker_floats;
        struct pack_ctx pc = {.mr = c.uk.mr, .m = m, .k = k, .a = a, .dst = c.apack};
        const int64_t a_panels = (m + c.uk.mr - 1) / c.uk.mr;
        pc.per = (a_panels + workers - 1) / workers;
        eb_threadpool_run(x->pool, (size_t)((a_panels + pc.per - 1) / pc.per), pack_a_task, &pc);
        /* Column blocks of at most MM_NC, as many as a multiple of the workers: even shares. */
        c.nb = eb_cpu_round_up((panels + per - 1) / per, workers);
        c.nb = c.nb > panels ? panels : c.nb;
        eb_threadpool_run(x->pool, (size_t)c.nb, mm_shared_task, &c);
        return;
    }
    const size_t tasks = (size_t)(batch * c.mb * c.nb);
    if (batch * m * k * n < MM_SERIAL_MACS) /* a few microseconds: not worth waking workers */
        for (size_t t = 0; t < tasks; t++)
            mm_task(&c, t, 0);
    else
        eb_threadpool_run(x->pool, tasks, mm_task, &c);
}

/* ---- B packed at load ---------------------------------------------------------------------- */

size_t eb_cpu_matmul_f32_pack_bytes(enum eb_cpu_isa isa, int64_t k, int64_t n)
{
    struct eb_sgemm_ukernel uk;
    if (k <= 0 || n <= 0 || !eb_cpu__sgemm_select(isa, &uk))
        return 0;
    return eb_cpu_align64((size_t)(eb_cpu_round_up(n, uk.nr) * k) * sizeof(float));
}

int eb_cpu_matmul_f32_pack(enum eb_cpu_isa isa, int64_t k, int64_t n, const float *b, float *dst)
{
    struct eb_sgemm_ukernel uk;
    if (!eb_cpu__sgemm_select(isa, &uk))
        return 0;
    eb_cpu__pack_b(uk.nr, k, n, b, n, dst);
    return uk.nr;
}

/* The scalar product on packed B: each y element summed in order of p, as the reference. */
static void matmul_packed_ref(int64_t m, int64_t k, int64_t n, const float *a, const float *pb,
                              int nr, float *y)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            const float *bp = pb + (j / nr) * k * nr + j % nr;
            float s = 0.0f;
            for (int64_t p = 0; p < k; p++)
                s += a[i * k + p] * bp[p * nr];
            y[i * n + j] = s;
        }
}

/* GEMV task: columns [j0, j0 + nc) of every row, nc a multiple of 64 (so of NR). */
struct mvp_ctx {
    eb_sgemv_packed_fn fn;
    int64_t m, k, n, nc;
    int nr;
    const float *a, *pb;
    float *y;
};

static void mvp_task(void *vctx, size_t task, int worker)
{
    const struct mvp_ctx *c = vctx;
    (void)worker;
    const int64_t j0 = (int64_t)task * c->nc, nj = c->n - j0 < c->nc ? c->n - j0 : c->nc;
    for (int64_t r = 0; r < c->m; r++)
        c->fn(c->k, nj, c->a + r * c->k, c->pb + j0 / c->nr * c->k * c->nr, c->y + r * c->n + j0);
}

void eb_cpu_matmul_f32_packed(const struct eb_cpu_exec *x, int64_t m, int64_t k, int64_t n,
                              const float *a, const float *pb, int nr, float *y)
{
    struct mm_ctx c = {.m = m, .k = k, .n = n, .a = a, .b = pb, .pb = pb, .y = y};
    const int workers = x->n_workers < 1 ? 1 : x->n_workers;
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        memset(y, 0, (size_t)(m * n) * sizeof(float));
        return;
    }
    if (!eb_cpu__sgemm_select(x->isa, &c.uk) || c.uk.nr != nr || x->scratch == NULL ||
        x->scratch_bytes < eb_cpu_matmul_f32_scratch(m, k, n, workers)) {
        matmul_packed_ref(m, k, n, a, pb, nr, y);
        return;
    }
    if (m <= MV_M_MAX && c.uk.gemv_packed != NULL) {
        /* As eb_cpu_matmul_f32's GEMV: about 4 chunks per worker, whole 64-column blocks. */
        const int64_t want = workers == 1 ? 1 : 4 * (int64_t)workers;
        int64_t nc = eb_cpu_round_up((n + want - 1) / want, 64);
        nc = nc < 64 ? 64 : nc;
        struct mvp_ctx v = {.fn = c.uk.gemv_packed,
                            .m = m,
                            .k = k,
                            .n = n,
                            .nc = nc,
                            .nr = nr,
                            .a = a,
                            .pb = pb,
                            .y = y};
        const size_t tasks = (size_t)((n + nc - 1) / nc);
        if (m * k * n < MV_SERIAL_MACS)
            for (size_t t = 0; t < tasks; t++)
                mvp_task(&v, t, 0);
        else
            eb_threadpool_run(x->pool, tasks, mvp_task, &v);
        return;
    }
    c.scratch = x->scratch;
    c.worker_floats = mm_worker_floats(m, k, n);
    c.mb = (m + MM_MC - 1) / MM_MC;
    c.nb = (n + MM_NC - 1) / MM_NC;
    const size_t shared = mm_shared_floats(m, k);
    const int64_t panels = (n + nr - 1) / nr, per = MM_NC / nr;
    if (shared > 0 && panels >= workers &&
        x->scratch_bytes >= ((size_t)workers * c.worker_floats + shared) * sizeof(float)) {
        c.apack = c.scratch + (size_t)workers * c.worker_floats;
        struct pack_ctx pc = {.mr = c.uk.mr, .m = m, .k = k, .a = a, .dst = c.apack};
        const int64_t a_panels = (m + c.uk.mr - 1) / c.uk.mr;
        pc.per = (a_panels + workers - 1) / workers;
        const size_t a_tasks = (size_t)((a_panels + pc.per - 1) / pc.per);
        c.nb = eb_cpu_round_up((panels + per - 1) / per, workers);
        c.nb = c.nb > panels ? panels : c.nb;
        if (m * k * n < MM_SERIAL_MACS) { /* a few microseconds: not worth waking workers */
            for (size_t t = 0; t < a_tasks; t++)
                pack_a_task(&pc, t, 0);
            for (int64_t t = 0; t < c.nb; t++)
                mm_shared_task(&c, (size_t)t, 0);
            return;
        }
        eb_threadpool_run(x->pool, a_tasks, pack_a_task, &pc);
        eb_threadpool_run(x->pool, (size_t)c.nb, mm_shared_task, &c);
        return;
    }
    const size_t tasks = (size_t)(c.mb * c.nb);
    if (m * k * n < MM_SERIAL_MACS)
        for (size_t t = 0; t < tasks; t++)
            mm_task(&c, t, 0);
    else
        eb_threadpool_run(x->pool, tasks, mm_task, &c);
}
