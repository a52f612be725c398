#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eb/clock.h"
#include "eb/thread.h"
#include "harness/metrics/sampler.h"
#include "harness/pipeline/pipeline.h"
#include "harness/pipeline/slot.h"

/* How often the caller's thread calls the tick hook while a pass runs, and how finely it looks
 * whether the pass is over. */
#define TICK_NS 200000000ull
#define POLL_NS 20000000ull

/* What the slot threads of one run share: the start gate, the barrier, and the counts of slots
 * that have met their warm-up and their length. Everything else is the slot's own. */
struct pipe {
    atomic_int *stop;
    struct eb_mutex mu;
    struct eb_cond cv;
    size_t n;         /* threads that run (fixed before the gate opens) */
    int go;           /* the gate: n is final */
    size_t arrived;   /* at the barrier */
    uint64_t barrier; /* when the last thread arrived */
    struct eb_cpu_use cpu_at_barrier;
    atomic_size_t warm_met;
    atomic_size_t len_met;
    /* The latest end of a slot's last frame when it met its length (or ended): a slot that met
     * before runs on at least to it (see measure) */
    atomic_uint_fast64_t met_end;
    atomic_size_t running;
    const struct eb_pipeline_hooks *hooks; /* may be NULL */
};

struct worker {
    struct pipe *p;
    struct eb_slot *s;
    struct eb_thread th;
    int started; /* th runs (joined at the end) */
};

/* A paced slot's arrivals: frame k arrives at t0 + k * period. */
struct pacer {
    double period_ns;
    uint64_t t0;
    uint64_t next; /* the first arrival not yet taken, queued or dropped */
    uint64_t q[EB_PIPELINE_MAX_QUEUE];
    size_t q_head, q_len, q_cap;
};

static int stopped(const struct pipe *p)
{
    return atomic_load_explicit(p->stop, memory_order_relaxed) != 0;
}

int eb_pipeline_length_met(int64_t frames_goal, double duration_goal_s, uint64_t frames,
                           uint64_t elapsed_ns)
{
    if (frames_goal <= 0 && duration_goal_s <= 0)
        return frames >= 1;
    return (frames_goal <= 0 || frames >= (uint64_t)frames_goal) &&
           (duration_goal_s <= 0 || (double)elapsed_ns >= duration_goal_s * 1e9);
}

static uint64_t arrival_of(const struct pacer *pc, uint64_t k)
{
    return pc->t0 + (uint64_t)llround((double)k * pc->period_ns);
}

/*
 * The arrival time of the next frame the slot takes, which became free at `t_free`: the frames
 * that arrived while it was busy (before t_free) wait in the queue while it has room, the rest
 * are dropped; the oldest waiting frame is taken, else the slot sleeps until the next arrival
 * (in slices, so that a stop is seen). 0 when stopped while waiting.
 */
static int pace(struct pipe *p, struct eb_slot *s, struct pacer *pc, uint64_t t_free,
                uint64_t *arrival_out)
{
    const uint64_t busy =
        t_free > pc->t0 ? (uint64_t)ceil((double)(t_free - pc->t0) / pc->period_ns) : 0;
    for (; pc->next < busy; pc->next++) {
        if (pc->q_len < pc->q_cap)
            pc->q[(pc->q_head + pc->q_len++) % EB_PIPELINE_MAX_QUEUE] = pc->next;
        else
            s->dropped++;
    }
    uint64_t k;
    if (pc->q_len > 0) {
        k = pc->q[pc->q_head];
        pc->q_head = (pc->q_head + 1) % EB_PIPELINE_MAX_QUEUE;
        pc->q_len--;
    } else {
        k = pc->next++;
        if (eb_clock_sleep_until_ns(arrival_of(pc, k), p->stop) != EB_OK)
            return 0;
    }
    *arrival_out = arrival_of(pc, k);
    return 1;
}

/* Warm-up frames until this slot's warm-up is over and every other slot's too; the frames are
 * not recorded. A slot that fails counts as done. */
static void warm_up(struct pipe *p, struct eb_slot *s)
{
    struct eb_warmup_auto wa;
    eb_warmup_auto_init(&wa);
    const uint64_t start = eb_clock_ns();
    int met = 0;
    s->warmup_done = 0;
    while (s->status == EB_SLOT_OK && !stopped(p)) {
        if (!met && eb_slot_warmup_over(s, &wa, s->warmup_done, eb_clock_ns() - start)) {
            met = 1;
            s->warmup_stable = wa.stable;
            atomic_fetch_add(&p->warm_met, 1);
        }
        if (met && atomic_load(&p->warm_met) >= p->n)
            break;
        const uint64_t t0 = eb_clock_ns();
        struct eb_frame fr;
        const enum eb_status st = eb_slot_read_any(s, &fr);
        if (st == EB_ERR_CANCELLED) { /* stopped while the source waited */
            eb_diag_clear(&s->diag);
            break;
        }
        if (st != EB_OK) {
            s->status = EB_SLOT_FAILED;
            break;
        }
        uint64_t t_pre, t_inf;
        if (eb_slot_process(s, &fr, &t_pre, &t_inf) != EB_OK)
            break;
        s->warmup_done++;
        /* The frame's end-to-end time, as the measured pass takes it (read to postprocess). */
        eb_warmup_auto_add(&wa, (double)(eb_clock_ns() - t0) / 1e6);
    }
    s->warmup_ns = eb_clock_ns() - start;
    if (!met)
        atomic_fetch_add(&p->warm_met, 1);
}

/* A slot met its length (or ended) with its last frame ending at `end`: into p->met_end. */
static void met_at(struct pipe *p, uint64_t end)
{
    uint_fast64_t cur = atomic_load(&p->met_end);
    while (cur < end && !atomic_compare_exchange_weak(&p->met_end, &cur, end)) {
    }
    atomic_fetch_add(&p->len_met, 1);
}

/*
 * The measured pass from the barrier `t0` until this slot has met its length and every other
 * slot has too (or the source ended without looping, the stop, a failure). A slot that met its
 * length first runs on until its last frame ends after the other slots' last (p->met_end): had
 * it stopped at a frame that ended just before, the window (close_window) would leave out the
 * last frame of the slot that met last, depending on which thread looked first.
 */
static void measure(struct pipe *p, struct eb_slot *s, uint64_t t0)
{
    struct pacer pc = {
        .t0 = t0, .period_ns = s->fps > 0 ? 1e9 / s->fps : 0, .q_cap = (size_t)s->setup.queue};
    if (pc.q_cap > EB_PIPELINE_MAX_QUEUE)
        pc.q_cap = EB_PIPELINE_MAX_QUEUE;
    int met = 0;
    uint64_t t_free = t0, t_last_end = t0;
    while (s->status == EB_SLOT_OK && !stopped(p)) {
        const size_t n = atomic_load_explicit(&s->n_done, memory_order_relaxed);
        /* The duration counts to the end of the last frame (what the window will hold). */
        if (!met &&
            eb_pipeline_length_met(s->frames_goal, s->duration_goal_s, n, t_last_end - t0)) {
            met = 1;
            met_at(p, t_last_end);
        }
        if (met && atomic_load(&p->len_met) >= p->n && t_last_end >= atomic_load(&p->met_end))
            break;
        uint64_t arrival = 0;
        if (s->fps > 0 && !pace(p, s, &pc, t_free, &arrival))
            break;
        struct eb_frame_record rec;
        memset(&rec, 0, sizeof(rec));
        struct eb_frame fr;
        const uint64_t ta = eb_clock_ns();
        enum eb_status st = eb_slot_read(s, s->setup.loop, &fr);
        if (st != EB_OK) /* the end of the source (no loop), or a failure */
            break;
        const uint64_t tb = eb_clock_ns();
        uint64_t tc, td;
        if (eb_slot_process(s, &fr, &tc, &td) != EB_OK)
            break;
        const uint64_t te = eb_clock_ns();
        rec.t_start_ns = ta;
        rec.t_arrival_ns = s->fps > 0 ? arrival : ta;
        rec.stage_ns[EB_STAGE_READ] = tb - ta;
        rec.stage_ns[EB_STAGE_PRE] = tc - tb;
        rec.stage_ns[EB_STAGE_INFER] = td - tc;
        rec.stage_ns[EB_STAGE_POST] = te - td;
        rec.stage_ns[EB_STAGE_E2E] = te - ta;
        if (eb_slot_book(s, &fr, &rec) != EB_OK)
            break;
        if (p->hooks != NULL && p->hooks->frame != NULL)
            p->hooks->frame(p->hooks->frame_ctx, s, &rec);
        t_last_end = te;
        t_free = eb_clock_ns();
    }
    const size_t n = atomic_load_explicit(&s->n_done, memory_order_relaxed);
    const struct eb_frame_record *last = n > 0 ? eb_slot_record(s, n - 1) : NULL;
    s->phase_end_ns = last != NULL ? last->t_start_ns + last->stage_ns[EB_STAGE_E2E] : t0;
    if (!met)
        met_at(p, s->phase_end_ns);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct pipe *p = w->p;
    struct eb_slot *s = w->s;
    eb_mutex_lock(&p->mu);
    while (!p->go)
        eb_cond_wait(&p->cv, &p->mu);
    eb_mutex_unlock(&p->mu);

    warm_up(p, s);
    if (s->status == EB_SLOT_OK && eb_slot_rewind(s) == EB_OK)
        s->loop_delivered = 0;

    /* The barrier: the measured pass starts when every slot is ready. */
    eb_mutex_lock(&p->mu);
    if (++p->arrived == p->n) {
        eb_procfs_cpu_use(NULL, &p->cpu_at_barrier);
        p->barrier = eb_clock_ns();
        if (p->hooks != NULL && p->hooks->begin != NULL)
            p->hooks->begin(p->hooks->begin_ctx, p->barrier);
        eb_cond_broadcast(&p->cv);
    }
    while (p->arrived < p->n)
        eb_cond_wait(&p->cv, &p->mu);
    const uint64_t t0 = p->barrier;
    eb_mutex_unlock(&p->mu);

    s->phase_start_ns = t0;
    eb_slot_begin_pass(s);
    if (s->status == EB_SLOT_OK) {
        /* "<slot>:measure": the range that gates `profile --nsys`'s capture. */
        char range[32];
        snprintf(range, sizeof(range), "%s:measure", s->name);
        eb_nvtx_push(&s->nvtx, range);
        measure(p, s, t0);
        eb_nvtx_pop(&s->nvtx);
    } else
        atomic_fetch_add(&p->len_met, 1);
    if (s->status != EB_SLOT_OK || atomic_load_explicit(&s->n_done, memory_order_relaxed) == 0)
        s->phase_end_ns = t0;
    atomic_fetch_sub(&p->running, 1);
    return NULL;
}

/* The window every slot ran in: from the barrier to the earliest end of a slot that ran to its
 * end (a failed slot does not cut the others' window); each slot counts its frames inside.
 * Returns that end, 0 when no slot ran to its end. */
static uint64_t close_window(struct eb_slot *const *slots, size_t n)
{
    uint64_t end = UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        if (slots[i]->status == EB_SLOT_OK && slots[i]->phase_end_ns < end)
            end = slots[i]->phase_end_ns;
    for (size_t i = 0; i < n; i++) {
        struct eb_slot *s = slots[i];
        const size_t done = atomic_load_explicit(&s->n_done, memory_order_acquire);
        s->window_end_ns = s->phase_end_ns < end ? s->phase_end_ns : end;
        /* Frames end in order: the counted ones are a prefix, found from the end. A soak run
         * keeps only its last EB_SLOT_TAIL_RECORDS records: older ones stay counted. */
        size_t k = done;
        const struct eb_frame_record *r;
        while (k > 0 && (r = eb_slot_record(s, k - 1)) != NULL &&
               r->t_start_ns + r->stage_ns[EB_STAGE_E2E] > s->window_end_ns)
            k--;
        s->n_counted = k;
        s->n_left_out = done - k;
    }
    return end == UINT64_MAX ? 0 : end;
}

void eb_pipeline_run(struct eb_slot *const *slots, size_t n, atomic_int *stop,
                     const struct eb_pipeline_hooks *hooks)
{
    struct pipe p;
    memset(&p, 0, sizeof(p));
    p.stop = stop;
    p.hooks = hooks;
    eb_mutex_init(&p.mu);
    eb_cond_init(&p.cv);
    atomic_init(&p.warm_met, 0);
    atomic_init(&p.len_met, 0);
    atomic_init(&p.met_end, 0);
    atomic_init(&p.running, 0);
    struct worker *w = calloc(n ? n : 1, sizeof(*w));
    if (w == NULL) {
        for (size_t i = 0; i < n; i++) {
            slots[i]->status = EB_SLOT_FAILED;
            (void)eb_diag_fail(&slots[i]->diag, EB_ERR_NOMEM, "out of memory for its thread");
        }
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        w[i].p = &p;
        w[i].s = slots[i];
        struct eb_diag d = {0};
        atomic_fetch_add(&p.running, 1);
        if (eb_thread_create(&w[i].th, worker_main, &w[i], &d) == EB_OK) {
            w[i].started = 1;
            p.n++;
        } else {
            atomic_fetch_sub(&p.running, 1);
            slots[i]->status = EB_SLOT_FAILED;
            slots[i]->diag = d;
        }
    }
    eb_mutex_lock(&p.mu);
    p.go = 1;
    eb_cond_broadcast(&p.cv);
    eb_mutex_unlock(&p.mu);

    const uint64_t t_start = eb_clock_ns();
    uint64_t next_tick = t_start;
    while (atomic_load(&p.running) > 0) {
        const uint64_t now = eb_clock_ns();
        if (hooks != NULL && hooks->tick != NULL && now >= next_tick && !stopped(&p)) {
            hooks->tick(hooks->ctx, t_start);
            next_tick = now + TICK_NS;
        }
        eb_clock_sleep_ns(POLL_NS);
    }
    for (size_t i = 0; i < n; i++)
        if (w[i].started)
            eb_thread_join(&w[i].th);
    const uint64_t window_end = close_window(slots, n);
    if (window_end > 0 && hooks != NULL && hooks->end != NULL)
        hooks->end(hooks->begin_ctx, window_end);
    /* Whether the machine was quiet while the pass ran (the validity's --max_others_cpu_pct). */
    struct eb_cpu_use cpu_at_end;
    eb_procfs_cpu_use(NULL, &cpu_at_end);
    const double others =
        eb_cpu_use_others_pct(&p.cpu_at_barrier, &cpu_at_end, sysconf(_SC_CLK_TCK));
    for (size_t i = 0; i < n; i++)
        slots[i]->others_cpu_pct = others;
done:
    free(w);
    eb_cond_fini(&p.cv);
    eb_mutex_fini(&p.mu);
}
