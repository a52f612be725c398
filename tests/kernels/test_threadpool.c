/*
 * The engine's thread pool: every task runs exactly once on a valid worker, across many
 * back-to-back runs (the pattern of one run per graph node), for several pool sizes. Runs under
 * TSan too (the ctest names contain "thread").
 */
#include <stdatomic.h>

#include "eb_test.h"
#include "engine/cpu/cpu.h"

struct count_ctx {
    atomic_int *hits;
    int n_workers;
    atomic_int bad_worker;
};

static void count_task(void *ctx, size_t task, int worker)
{
    struct count_ctx *c = ctx;
    atomic_fetch_add(&c->hits[task], 1);
    if (worker < 0 || worker >= c->n_workers)
        atomic_store(&c->bad_worker, 1);
}

static void check_pool(int n_threads, int rounds)
{
    struct eb_allocator sys = eb_allocator_system();
    struct eb_threadpool *pool = NULL;
    struct eb_diag diag = {0};
    enum eb_status st = eb_threadpool_create(n_threads, &sys, &pool, &diag);
    ASSERT_TRUE(st == EB_OK);
    ASSERT_EQ_INT(eb_threadpool_size(pool), n_threads);
    static const size_t sizes[] = {0, 1, 2, 3, 7, 64, 1000};
    atomic_int hits[1000];
    for (int r = 0; r < rounds; r++) {
        size_t n = sizes[r % (sizeof(sizes) / sizeof(sizes[0]))];
        for (size_t i = 0; i < n; i++)
            atomic_init(&hits[i], 0);
        struct count_ctx c = {.hits = hits, .n_workers = n_threads};
        atomic_init(&c.bad_worker, 0);
        eb_threadpool_run(pool, n, count_task, &c);
        for (size_t i = 0; i < n; i++)
            if (atomic_load(&hits[i]) != 1)
                EB_FAIL("pool of %d, round %d: task %zu of %zu ran %d times", n_threads, r, i, n,
                        atomic_load(&hits[i]));
        ASSERT_EQ_INT(atomic_load(&c.bad_worker), 0);
    }
    eb_threadpool_destroy(pool);
}

EB_TEST(threadpool_every_task_once_1_thread)
{
    check_pool(1, 50);
}

EB_TEST(threadpool_every_task_once_2_threads)
{
    check_pool(2, 3000);
}

EB_TEST(threadpool_every_task_once_4_threads)
{
    check_pool(4, 1000);
}

EB_TEST(threadpool_null_runs_serially_on_the_caller)
{
    atomic_int hits[5];
    for (int i = 0; i < 5; i++)
        atomic_init(&hits[i], 0);
    struct count_ctx c = {.hits = hits, .n_workers = 1};
    atomic_init(&c.bad_worker, 0);
    ASSERT_EQ_INT(eb_threadpool_size(NULL), 1);
    eb_threadpool_run(NULL, 5, count_task, &c);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ_INT(atomic_load(&hits[i]), 1);
    ASSERT_EQ_INT(atomic_load(&c.bad_worker), 0);
}

EB_TEST(threadpool_create_destroy_idle_and_bad_sizes)
{
    struct eb_allocator sys = eb_allocator_system();
    struct eb_diag diag = {0};
    for (int i = 0; i < 20; i++) {
        struct eb_threadpool *pool = NULL;
        ASSERT_TRUE(eb_threadpool_create(3, &sys, &pool, &diag) == EB_OK);
        eb_threadpool_destroy(pool);
    }
    struct eb_threadpool *pool = NULL;
    ASSERT_TRUE(eb_threadpool_create(0, &sys, &pool, &diag) == EB_ERR_INVALID_ARG);
    ASSERT_TRUE(pool == NULL);
    ASSERT_TRUE(strstr(diag.msg, "thread pool") != NULL);
    eb_threadpool_destroy(NULL);
}

EB_TEST(threadpool_allocation_failure_is_clean)
{
    /* Every allocation of a 3-thread pool fails in turn: a clean NOMEM, nothing leaked. */
    for (uint64_t n = 1; n <= 2; n++) {
        struct eb_counting_alloc ca;
        eb_counting_alloc_init(&ca, eb_allocator_system(), 0);
        ca.fail_at = n;
        struct eb_allocator a = eb_counting_alloc_iface(&ca);
        struct eb_threadpool *pool = NULL;
        struct eb_diag diag = {0};
        ASSERT_TRUE(eb_threadpool_create(3, &a, &pool, &diag) == EB_ERR_NOMEM);
        ASSERT_TRUE(pool == NULL);
        ASSERT_EQ_INT(ca.live_bytes, 0);
    }
}
