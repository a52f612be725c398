/*
 * eb_cpu_matmul_f32 (the packed SGEMM behind MatMul/Gemm) against the reference matrix product:
 * tails in M, N and K, K split into several KC blocks, batches with broadcast (stride 0)
 * operands; every ISA this CPU has, 1 and 3 workers; canaries around output and scratch.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb_test.h"
#include "engine/cpu/fast.h"
#include "guarded.h"

static void run_case(enum eb_cpu_isa isa, int workers, int64_t batch, int64_t m, int64_t k,
                     int64_t n, int bcast_a, int bcast_b, uint64_t seed)
{
    const struct eb_allocator sys = eb_allocator_system();
    const int64_t sa = bcast_a ? 0 : m * k, sb = bcast_b ? 0 : k * n;
    const size_t na = (size_t)((bcast_a ? 1 : batch) * m * k);
    const size_t nb = (size_t)((bcast_b ? 1 : batch) * k * n), ny = (size_t)(batch * m * n);
    float *a = guarded(na), *b = guarded(nb), *yr = guarded(ny), *yf = guarded(ny);
    uint64_t s = seed;
    for (size_t i = 0; i < na; i++)
        a[i] = frand(&s);
    for (size_t i = 0; i < nb; i++)
        b[i] = frand(&s);
    for (size_t i = 0; i < ny; i++)
        yf[i] = 999.0f;
    for (int64_t i = 0; i < batch; i++)
        eb_cpu_matmul_f32__ref(m, k, n, a + i * sa, b + i * sb, yr + i * m * n);
    const size_t bytes = eb_cpu_matmul_f32_scratch(m, k, n, workers);
    const size_t sf = bytes / sizeof(float) > 0 ? bytes / sizeof(float) : 1;
    float *scratch = guarded(sf);
    struct eb_threadpool *pool = NULL;
    ASSERT_EQ_INT(eb_threadpool_create(workers, &sys, &pool, NULL), EB_OK);
    struct eb_cpu_exec ex = {.isa = isa,
                             .pool = pool,
                             .n_workers = eb_threadpool_size(pool),
                             .scratch = scratch,
                             .scratch_bytes = bytes};
    eb_cpu_matmul_f32(&ex, batch, m, k, n, a, sa, b, sb, yf);
    /* Same bound as test_conv.c: fp32 rounding of K-term sums grows like sqrt(K) * eps. */
    for (size_t i = 0; i < ny; i++) {
        const double tol = 1e-4 * (1.0 + fabs((double)yr[i])) * sqrt((double)k) / 4.0;
        if (!(fabs((double)yf[i] - (double)yr[i]) <= tol))
            EB_FAIL("%s x%d %lldx%lldx%lld: y[%zu] = %.7g, ref %.7g", eb_cpu_isa_name(isa), workers,
                    (long long)m, (long long)k, (long long)n, i, (double)yf[i], (double)yr[i]);
    }
    check_guards(yf, ny, "y");
    check_guards(scratch, sf, "scratch");
    check_guards(a, na, "a");
    check_guards(b, nb, "b");
    eb_threadpool_destroy(pool);
    release(scratch), release(a), release(b), release(yr), release(yf);
}

static void run_all(int64_t batch, int64_t m, int64_t k, int64_t n, int bcast_a, int bcast_b)
{
    struct eb_cpu_features f;
    eb_cpu_features_detect(&f);
    const enum eb_cpu_isa isas[] = {EB_CPU_ISA_NEON, EB_CPU_ISA_AVX2, EB_CPU_ISA_AVX512};
    const int have[] = {f.neon, f.avx2, f.avx512};
    int ran = 0;
    for (size_t i = 0; i < EB_ARRAY_LEN(isas); i++) {
        if (!have[i])
            continue;
        run_case(isas[i], 1, batch, m, k, n, bcast_a, bcast_b, (uint64_t)(m * 131 + k * 7 + n));
        run_case(isas[i], 3, batch, m, k, n, bcast_a, bcast_b, (uint64_t)(m * 17 + k + n * 3));
        ran = 1;
    }
    if (!ran)
        EB_SKIP("no fast ISA on this CPU");
}

EB_TEST(matmul_small_tails)
{
    run_all(1, 1, 1, 1, 0, 0);
    run_all(1, 7, 13, 5, 0, 0);
    run_all(1, 6, 16, 16, 0, 0);
    run_all(1, 5, 3, 33, 0, 0);
}

EB_TEST(matmul_blocked)
{
    run_all(1, 100, 300, 270, 0, 0); /* M > MC, K > KC, N > NC */
    run_all(1, 200, 520, 64, 0, 0);
    /* A packed once and shared by the workers (enough column blocks for 3 workers). */
    run_all(1, 130, 300, 1600, 0, 0);
    run_all(1, 7, 900, 1800, 0, 0);
}

EB_TEST(matmul_batched_broadcast)
{
    run_all(3, 17, 32, 40, 0, 0);
    run_all(4, 20, 33, 21, 1, 0);
    run_all(2, 9, 64, 100, 0, 1);
}

/* One and two rows: the GEMV path (B read in place, column chunks over the workers), with
 * column tails of every width, long K and batches with a broadcast B (a decoder's step). */
EB_TEST(matmul_gemv_rows)
{
    run_all(1, 1, 1, 1, 0, 0);
    run_all(1, 1, 7, 15, 0, 0);
    run_all(1, 2, 33, 17, 0, 0);
    run_all(1, 1, 64, 63, 0, 0);
    run_all(1, 1, 100, 64, 0, 0);
    run_all(1, 2, 300, 65, 0, 0);
    run_all(1, 1, 896, 1000, 0, 0);
    run_all(1, 2, 1500, 300, 0, 0);
    run_all(5, 1, 64, 160, 0, 0);
    run_all(3, 2, 20, 40, 0, 1);
    run_all(4, 1, 31, 9, 1, 0);
}

/*
 * B packed once (eb_cpu_matmul_f32_pack, what MatMul does at load for a constant B) then
 * eb_cpu_matmul_f32_packed: the same bits as eb_cpu_matmul_f32 on B as it is (same kernels,
 * same order of the sums), within the reference's bound of the scalar product; and without
 * scratch (the scalar loop over the panels), within that bound too. 1, 2 and 3 workers.
 */
static void run_packed(enum eb_cpu_isa isa, int workers, int64_t m, int64_t k, int64_t n)
{
    const struct eb_allocator sys = eb_allocator_system();
    const size_t na = (size_t)(m * k), nb = (size_t)(k * n), ny = (size_t)(m * n);
    const size_t pbytes = eb_cpu_matmul_f32_pack_bytes(isa, k, n);
    ASSERT_TRUE(pbytes >= nb * sizeof(float));
    float *a = guarded(na), *b = guarded(nb), *pb = guarded(pbytes / sizeof(float));
    float *yr = guarded(ny), *yu = guarded(ny), *yp = guarded(ny), *ys = guarded(ny);
    uint64_t s = (uint64_t)(m * 31 + k * 5 + n);
    for (size_t i = 0; i < na; i++)
        a[i] = frand(&s);
    for (size_t i = 0; i < nb; i++)
        b[i] = frand(&s);
    for (size_t i = 0; i < ny; i++)
        yu[i] = yp[i] = ys[i] = 999.0f;
    eb_cpu_matmul_f32__ref(m, k, n, a, b, yr);
    const int nr = eb_cpu_matmul_f32_pack(isa, k, n, b, pb);
    ASSERT_TRUE(nr > 0);
    const size_t bytes = eb_cpu_matmul_f32_scratch(m, k, n, workers);
    const size_t sf = bytes / sizeof(float) > 0 ? bytes / sizeof(float) : 1;
    float *scratch = guarded(sf);
    struct eb_threadpool *pool = NULL;
    ASSERT_EQ_INT(eb_threadpool_create(workers, &sys, &pool, NULL), EB_OK);
    struct eb_cpu_exec ex = {.isa = isa,
                             .pool = pool,
                             .n_workers = eb_threadpool_size(pool),
                             .scratch = scratch,
                             .scratch_bytes = bytes};
    eb_cpu_matmul_f32(&ex, 1, m, k, n, a, 0, b, 0, yu);
    eb_cpu_matmul_f32_packed(&ex, m, k, n, a, pb, nr, yp);
    ex.scratch = NULL;
    ex.scratch_bytes = 0;
    eb_cpu_matmul_f32_packed(&ex, m, k, n, a, pb, nr, ys);
    for (size_t i = 0; i < ny; i++) {
        const double tol = 1e-4 * (1.0 + fabs((double)yr[i])) * sqrt((double)k) / 4.0;
        if (memcmp(&yp[i], &yu[i], sizeof(float)) != 0)
            EB_FAIL("%s x%d %lldx%lldx%lld packed: y[%zu] = %.9g, unpacked %.9g",
                    eb_cpu_isa_name(isa), workers, (long long)m, (long long)k, (long long)n, i,
                    (double)yp[i], (double)yu[i]);
        if (!(fabs((double)ys[i] - (double)yr[i]) <= tol))
            EB_FAIL("%s x%d %lldx%lldx%lld packed, no scratch: y[%zu] = %.7g, ref %.7g",
                    eb_cpu_isa_name(isa), workers, (long long)m, (long long)k, (long long)n, i,
                    (double)ys[i], (double)yr[i]);
    }
    check_guards(yp, ny, "y packed");
    check_guards(ys, ny, "y packed, no scratch");
    check_guards(pb, pbytes / sizeof(float), "packed b");
    check_guards(scratch, sf, "scratch");
    eb_threadpool_destroy(pool);
    release(scratch), release(a), release(b), release(pb);
    release(yr), release(yu), release(yp), release(ys);
}

EB_TEST(matmul_packed_b_matches_unpacked)
{
    struct eb_cpu_features f;
    eb_cpu_features_detect(&f);
    const enum eb_cpu_isa isas[] = {EB_CPU_ISA_NEON, EB_CPU_ISA_AVX2, EB_CPU_ISA_AVX512};
    const int have[] = {f.neon, f.avx2, f.avx512};
    /* m, k, n: GEMV rows (1, 2) with N tails of every panel width; M, N and K tails of the
     * tiles; K over several KC blocks; N over several column blocks (shared A); a decoder's
     * projection shape. */
    static const int64_t shapes[][3] = {
        {1, 1, 1},        {1, 7, 15},   {2, 33, 17},    {1, 64, 63},   {2, 300, 65},
        {1, 896, 1000},   {3, 5, 7},    {7, 13, 33},    {17, 40, 31},  {100, 300, 270},
        {130, 300, 1600}, {9, 520, 47}, {128, 96, 160}, {64, 16, 128}, {256, 128, 16}};
    int ran = 0;
    for (size_t i = 0; i < EB_ARRAY_LEN(isas); i++) {
        if (!have[i])
            continue;
        for (size_t c = 0; c < EB_ARRAY_LEN(shapes); c++)
            for (int w = 1; w <= 3; w++)
                run_packed(isas[i], w, shapes[c][0], shapes[c][1], shapes[c][2]);
        ran = 1;
    }
    if (!ran)
        EB_SKIP("no fast ISA on this CPU");
}
