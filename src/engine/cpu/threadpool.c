/*
 * The engine's thread pool: n-1 persistent workers plus the caller. A run publishes the job
 * (function, context, task count) and bumps a generation counter; workers spin briefly on the
 * counter (a node follows the previous one within microseconds) and otherwise sleep on a
 * condition variable, so an idle engine costs no CPU. Tasks are handed out by an atomic counter.
 * A worker takes part in a run only by entering it (`entry`: the run's generation, a closed
 * flag and the count of workers in) before the caller closes it; the caller closes the run once
 * every task is claimed and waits only for the workers that entered. A worker that the OS has
 * not scheduled yet (a busy machine) does not hold the caller up: the caller runs its tasks and
 * moves on, and the late worker finds the run closed. Nothing is allocated after creation.
 */
#include <stdatomic.h>
#include <string.h>

#include "eb/thread.h"
#include "engine/cpu/cpu.h"

#define SPIN_ITERS   2000
#define ENTRY_CLOSED ((uint64_t)1 << 31)
#define ENTRY_COUNT  (ENTRY_CLOSED - 1)

struct eb_threadpool_worker {
    struct eb_threadpool *pool;
    struct eb_thread thread;
    int index;
    int started;
};

struct eb_threadpool {
    struct eb_allocator alloc;
    int n_threads;
    struct eb_threadpool_worker *workers; /* n_threads - 1 */
    struct eb_mutex m;
    struct eb_cond wake, done;
    atomic_uint gen; /* bumped (under m) for every run and for stop */
    atomic_int stop;
    /* gen << 32 | ENTRY_CLOSED | workers entered: workers enter a run by CAS while it is
     * open and its generation matches what they woke for. */
    _Atomic uint64_t entry;
    atomic_int exited;  /* workers of the current run done with it */
    atomic_size_t next; /* next task index */
    /* The job: written before `gen` is bumped, read after it is seen. */
    eb_parallel_fn fn;
    void *ctx;
    size_t n_tasks;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static void run_tasks(struct eb_threadpool *p, int worker)
{
    for (;;) {
        size_t t = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (t >= p->n_tasks)
            break;
        p->fn(p->ctx, t, worker);
    }
}

static void *worker_main(void *arg)
{
    struct eb_threadpool_worker *w = arg;
    struct eb_threadpool *p = w->pool;
    unsigned seen = 0;
    for (;;) {
        unsigned g = atomic_load_explicit(&p->gen, memory_order_acquire);
        for (int i = 0; g == seen && i < SPIN_ITERS; i++) {
            cpu_relax();
            g = atomic_load_explicit(&p->gen, memory_order_acquire);
        }
        if (g == seen) {
            eb_mutex_lock(&p->m);
            while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen)
                eb_cond_wait(&p->wake, &p->m);
            eb_mutex_unlock(&p->m);
        }
        seen = g;
        if (atomic_load_explicit(&p->stop, memory_order_acquire))
            break;
        uint64_t e = atomic_load_explicit(&p->entry, memory_order_acquire);
        int in = 0;
        while (!in && (unsigned)(e >> 32) == g && !(e & ENTRY_CLOSED))
            in = atomic_compare_exchange_weak_explicit(&p->entry, &e, e + 1, memory_order_acq_rel,
                                                       memory_order_acquire);
        if (!in) /* that run is over (or a newer one is up: the next loop sees its gen) */
            continue;
        run_tasks(p, w->index);
        eb_mutex_lock(&p->m);
        atomic_fetch_add_explicit(&p->exited, 1, memory_order_acq_rel);
        eb_cond_signal(&p->done);
        eb_mutex_unlock(&p->m);
    }
    return NULL;
}

enum eb_status eb_threadpool_create(int n_threads, const struct eb_allocator *alloc,
                                    struct eb_threadpool **pool_out, struct eb_diag *diag)
{
    if (n_threads < 1 || n_threads > 1024 || alloc == NULL || pool_out == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to create a thread pool of %d threads: invalid argument",
                            n_threads);
    struct eb_threadpool *p = alloc->alloc(alloc->ctx, sizeof(*p), 64);
    if (p == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to create a thread pool: out of memory");
    memset(p, 0, sizeof(*p));
    p->alloc = *alloc;
    p->n_threads = 1;
    eb_mutex_init(&p->m);
    eb_cond_init(&p->wake);
    eb_cond_init(&p->done);
    atomic_init(&p->gen, 0);
    atomic_init(&p->stop, 0);
    atomic_init(&p->entry, 0);
    atomic_init(&p->exited, 0);
    atomic_init(&p->next, 0);
    if (n_threads > 1) {
        size_t bytes = (size_t)(n_threads - 1) * sizeof(*p->workers);
        p->workers = alloc->alloc(alloc->ctx, bytes, 64);
        if (p->workers == NULL) {
            eb_threadpool_destroy(p);
            return eb_diag_fail(diag, EB_ERR_NOMEM,
                                "failed to create a thread pool: out of memory");
        }
        memset(p->workers, 0, bytes);
        for (int i = 0; i < n_threads - 1; i++) {
            struct eb_threadpool_worker *w = &p->workers[i];
            w->pool = p;
            w->index = i + 1;
            enum eb_status st = eb_thread_create(&w->thread, worker_main, w, diag);
            if (st != EB_OK) {
                eb_threadpool_destroy(p);
                return st;
            }
            w->started = 1;
            p->n_threads++;
        }
    }
    *pool_out = p;
    return EB_OK;
}

int eb_threadpool_size(const struct eb_threadpool *pool)
{
    return pool == NULL ? 1 : pool->n_threads;
}

void eb_threadpool_run(struct eb_threadpool *pool, size_t n_tasks, eb_parallel_fn fn, void *ctx)
{
    if (n_tasks == 0)
        return;
    if (pool == NULL || pool->n_threads == 1 || n_tasks == 1) {
        for (size_t t = 0; t < n_tasks; t++)
            fn(ctx, t, 0);
        return;
    }
    struct eb_threadpool *p = pool;
    eb_mutex_lock(&p->m);
    p->fn = fn;
    p->ctx = ctx;
    p->n_tasks = n_tasks;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    atomic_store_explicit(&p->exited, 0, memory_order_relaxed);
    const unsigned g = atomic_load_explicit(&p->gen, memory_order_relaxed) + 1u;
    atomic_store_explicit(&p->entry, (uint64_t)g << 32, memory_order_release);
    atomic_store_explicit(&p->gen, g, memory_order_release);
    eb_cond_broadcast(&p->wake);
    eb_mutex_unlock(&p->m);

    run_tasks(p, 0);

    /* Every task is claimed: close the run; wait for the workers that entered it. */
    const int in = (int)(atomic_fetch_or_explicit(&p->entry, ENTRY_CLOSED, memory_order_acq_rel) &
                         ENTRY_COUNT);
    for (int i = 0; i < SPIN_ITERS; i++) {
        if (atomic_load_explicit(&p->exited, memory_order_acquire) == in)
            return;
        cpu_relax();
    }
    eb_mutex_lock(&p->m);
    while (atomic_load_explicit(&p->exited, memory_order_acquire) != in)
        eb_cond_wait(&p->done, &p->m);
    eb_mutex_unlock(&p->m);
}

void eb_threadpool_destroy(struct eb_threadpool *pool)
{
    if (pool == NULL)
        return;
    struct eb_threadpool *p = pool;
    if (p->workers != NULL) {
        eb_mutex_lock(&p->m);
        atomic_store_explicit(&p->stop, 1, memory_order_release);
        atomic_fetch_add_explicit(&p->gen, 1, memory_order_acq_rel);
        eb_cond_broadcast(&p->wake);
        eb_mutex_unlock(&p->m);
        for (int i = 0; i < p->n_threads - 1; i++)
            if (p->workers[i].started)
                eb_thread_join(&p->workers[i].thread);
        p->alloc.free(p->alloc.ctx, p->workers);
    }
    eb_cond_fini(&p->done);
    eb_cond_fini(&p->wake);
    eb_mutex_fini(&p->m);
    p->alloc.free(p->alloc.ctx, p);
}
