/* trace.json of `profile --trace` (trace.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eb/json.h"
#include "harness/cmd/trace.h"

/* The stages of a frame, in the order they ran (their durations add up to end_to_end). */
static const enum eb_stage stages[] = {EB_STAGE_READ, EB_STAGE_PRE, EB_STAGE_INFER, EB_STAGE_POST};

static size_t traced_frames(const struct eb_slot *s)
{
    size_t n = atomic_load_explicit(&s->n_done, memory_order_relaxed);
    return n < EB_TRACE_MAX_FRAMES ? n : EB_TRACE_MAX_FRAMES;
}

static void meta(struct eb_json_writer *w, const char *what, int64_t pid, int64_t tid,
                 const char *name)
{
    eb_json_obj_begin(w);
    eb_json_kstr(w, "ph", "M");
    eb_json_kstr(w, "name", what);
    eb_json_kint(w, "pid", pid);
    if (tid >= 0)
        eb_json_kint(w, "tid", tid);
    eb_json_key(w, "args");
    eb_json_obj_begin(w);
    eb_json_kstr(w, "name", name);
    eb_json_obj_end(w);
    eb_json_obj_end(w);
}

/* An event's integer arguments ("args"): names and values, `n` of them. */
struct ev_args {
    const char *const *keys;
    const int64_t *vals;
    int n;
};

/* One "X" event; t0 the trace's zero (ns); `args` NULL: none. */
static void complete(struct eb_json_writer *w, const char *name, const char *cat, int64_t pid,
                     int64_t tid, uint64_t start, uint64_t dur, uint64_t t0,
                     const struct ev_args *args)
{
    eb_json_obj_begin(w);
    eb_json_kstr(w, "ph", "X");
    eb_json_kstr(w, "name", name);
    eb_json_kstr(w, "cat", cat);
    eb_json_kint(w, "pid", pid);
    eb_json_kint(w, "tid", tid);
    eb_json_knum(w, "ts", (double)(int64_t)(start - t0) / 1e3);
    eb_json_knum(w, "dur", (double)dur / 1e3);
    if (args != NULL) {
        eb_json_key(w, "args");
        eb_json_obj_begin(w);
        for (int i = 0; i < args->n; i++)
            eb_json_kint(w, args->keys[i], args->vals[i]);
        eb_json_obj_end(w);
    }
    eb_json_obj_end(w);
}

/* The kernels inside [t0, t1] per name into t->top (their count and time into t). */
static enum eb_status rank_kernels(const struct eb_cupti *gpu, uint64_t t0, uint64_t t1,
                                   struct eb_trace_result *t, struct eb_diag *diag)
{
    struct eb_kernel_stat *all = calloc(gpu->n_names ? gpu->n_names : 1, sizeof(*all));
    if (all == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory for the top kernels");
    for (size_t i = 0; i < gpu->n_kernels; i++) {
        const struct eb_cupti_kernel *k = &gpu->kernels[i];
        if (k->start_ns < t0 || k->end_ns > t1)
            continue;
        all[k->name].calls++;
        all[k->name].total_ms += (double)(k->end_ns - k->start_ns) / 1e6;
        t->kernels++;
        t->gpu_ms += (double)(k->end_ns - k->start_ns) / 1e6;
    }
    size_t n = 0;
    for (size_t i = 0; i < gpu->n_names; i++)
        if (all[i].calls > 0) {
            all[n] = all[i];
            snprintf(all[n].name, sizeof(all[n].name), "%s", gpu->names[i]);
            n++;
        }
    eb_kernel_stats_rank(all, n, t->top, EB_TRACE_TOP_KERNELS, &t->n_top);
    free(all);
    return EB_OK;
}

/* trace.json being written: the file, its path and the writer inside its event array. */
struct trace_file {
    char path[4200];
    FILE *fp;
    struct eb_json_writer w;
};

/* Opens <dir>/trace.json, begins its event array and names this process "edgebench". */
static enum eb_status trace_open(const char *dir, struct trace_file *tf, struct eb_diag *diag)
{
    snprintf(tf->path, sizeof(tf->path), "%s/trace.json", dir);
    tf->fp = fopen(tf->path, "wb");
    if (tf->fp == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s", tf->path, strerror(errno));
    eb_json_writer_init_file(&tf->w, tf->fp, 0);
    eb_json_obj_begin(&tf->w);
    eb_json_kstr(&tf->w, "displayTimeUnit", "ms");
    eb_json_key(&tf->w, "traceEvents");
    eb_json_arr_begin(&tf->w);
    meta(&tf->w, "process_name", (int64_t)getpid(), -1, "edgebench");
    return EB_OK;
}

/* Ends the event array and closes the file; t->written on success. */
static enum eb_status trace_close(struct trace_file *tf, struct eb_trace_result *t,
                                  struct eb_diag *diag)
{
    eb_json_arr_end(&tf->w);
    eb_json_obj_end(&tf->w);
    const int werr = eb_json_writer_error(&tf->w);
    eb_json_writer_fini(&tf->w);
    const int ferr = ferror(tf->fp);
    if (fclose(tf->fp) != 0 || werr || ferr)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s", tf->path,
                            errno ? strerror(errno) : "write error");
    t->written = 1;
    return EB_OK;
}

/* The GPU process: each kernel inside [f0, t1] on its stream's thread. */
static void kernel_events(struct eb_json_writer *w, const struct eb_cupti *gpu, uint64_t f0,
                          uint64_t t1, uint64_t t0)
{
    meta(w, "process_name", EB_TRACE_GPU_PID, -1, "GPU");
    /* Each stream's name once, as its first kernel comes. */
    uint32_t named[64];
    size_t n_named = 0;
    for (size_t i = 0; i < gpu->n_kernels; i++) {
        const struct eb_cupti_kernel *k = &gpu->kernels[i];
        if (k->start_ns < f0 || k->end_ns > t1)
            continue;
        size_t j = 0;
        while (j < n_named && named[j] != k->stream)
            j++;
        if (j == n_named && n_named < sizeof(named) / sizeof(named[0])) {
            char name[32];
            snprintf(name, sizeof(name), "stream %u", k->stream);
            meta(w, "thread_name", EB_TRACE_GPU_PID, k->stream, name);
            named[n_named++] = k->stream;
        }
        complete(w, gpu->names[k->name], "kernel", EB_TRACE_GPU_PID, k->stream, k->start_ns,
                 k->end_ns - k->start_ns, t0, NULL);
    }
}

enum eb_status eb_trace_write(const char *dir, const struct eb_slot *slots, const int *ran,
                              const struct eb_cupti *gpu, struct eb_trace_result *t,
                              struct eb_diag *diag)
{
    /* The trace's zero t0: the measured pass's start. The kernels kept: those from the first
     * traced frame's start (f0) to the end of the last (t1); a kernel before f0 is the warm-up's
     * tail, still running as the pass began. */
    uint64_t t0 = UINT64_MAX, t1 = 0, f0 = UINT64_MAX;
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        if (!ran[i])
            continue;
        const struct eb_slot *s = &slots[i];
        const size_t n = traced_frames(s);
        t->frames[i] = n;
        if (s->phase_start_ns < t0)
            t0 = s->phase_start_ns;
        if (n > 0) {
            if (s->records[0].t_start_ns < f0)
                f0 = s->records[0].t_start_ns;
            const struct eb_frame_record *r = &s->records[n - 1];
            if (r->t_start_ns + r->stage_ns[EB_STAGE_E2E] > t1)
                t1 = r->t_start_ns + r->stage_ns[EB_STAGE_E2E];
        }
    }
    if (t0 == UINT64_MAX)
        t0 = t1;
    if (f0 == UINT64_MAX)
        f0 = t1;
    if (gpu != NULL && rank_kernels(gpu, f0, t1, t, diag) != EB_OK)
        return diag != NULL ? diag->status : EB_ERR_NOMEM;

    struct trace_file tf;
    if (trace_open(dir, &tf, diag) != EB_OK)
        return diag != NULL ? diag->status : EB_ERR_IO;
    struct eb_json_writer *w = &tf.w;
    const int64_t pid = (int64_t)getpid();
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        if (!ran[i])
            continue;
        const struct eb_slot *s = &slots[i];
        meta(w, "thread_name", pid, i + 1, s->name);
        for (size_t f = 0; f < t->frames[i]; f++) {
            const struct eb_frame_record *r = &s->records[f];
            uint64_t at = r->t_start_ns;
            static const char *const keys[] = {"frame"};
            const int64_t vals[] = {r->frame_index};
            const struct ev_args args = {keys, vals, 1};
            for (size_t k = 0; k < sizeof(stages) / sizeof(stages[0]); k++) {
                const uint64_t dur = r->stage_ns[stages[k]];
                complete(w, eb_stage_name(stages[k]), "stage", pid, i + 1, at, dur, t0, &args);
                at += dur;
            }
        }
    }
    if (gpu != NULL && t->kernels > 0)
        kernel_events(w, gpu, f0, t1, t0);
    return trace_close(&tf, t, diag);
}

enum eb_status eb_trace_write_llm(const char *dir, const struct eb_llm_result *r,
                                  const struct eb_cupti *gpu, struct eb_trace_result *t,
                                  struct eb_diag *diag)
{
    const int64_t gen = r->w.gen, reps = r->reps_done;
    /* The trace's zero: the first measured prefill; its end: the last measured decode step's. */
    uint64_t t0 = 0, t1 = 0;
    if (reps > 0) {
        const int64_t last = reps * gen - 1;
        t0 = r->prefill_at_ns[0];
        t1 = r->decode_at_ns[last] + r->decode_ns[last];
    }
    if (gpu != NULL && reps > 0 && rank_kernels(gpu, t0, t1, t, diag) != EB_OK)
        return diag != NULL ? diag->status : EB_ERR_NOMEM;
    struct trace_file tf;
    if (trace_open(dir, &tf, diag) != EB_OK)
        return diag != NULL ? diag->status : EB_ERR_IO;
    const int64_t pid = (int64_t)getpid();
    meta(&tf.w, "thread_name", pid, 1, "llm");
    static const char *const rep_key[] = {"rep"};
    static const char *const step_keys[] = {"rep", "step", "kv"};
    uint64_t steps = 0;
    for (int64_t i = 0; i < reps; i++) {
        const struct ev_args a = {rep_key, &i, 1};
        complete(&tf.w, "prefill", "phase", pid, 1, r->prefill_at_ns[i], r->ttft_ns[i], t0, &a);
        const uint64_t d0 = r->decode_at_ns[i * gen];
        const uint64_t d1 = r->decode_at_ns[i * gen + gen - 1] + r->decode_ns[i * gen + gen - 1];
        complete(&tf.w, "decode", "phase", pid, 1, d0, d1 - d0, t0, &a);
        for (int64_t j = 0; j < gen && steps < EB_TRACE_MAX_FRAMES; j++, steps++) {
            const int64_t v[] = {i, j, r->w.prompt + j};
            const struct ev_args sa = {step_keys, v, 3};
            complete(&tf.w, "decode step", "step", pid, 1, r->decode_at_ns[i * gen + j],
                     r->decode_ns[i * gen + j], t0, &sa);
        }
    }
    t->frames[0] = steps;
    if (gpu != NULL && t->kernels > 0)
        kernel_events(&tf.w, gpu, t0, t1, t0);
    return trace_close(&tf, t, diag);
}

void eb_trace_print_kernels(FILE *fp, const char *title, const struct eb_kernel_stat *k, size_t n)
{
    fprintf(fp, "%s\n  %-60s %8s %10s %7s\n", title, "kernel", "calls", "total ms", "share");
    for (size_t i = 0; i < n; i++)
        fprintf(fp, "  %-60.60s %8llu %10.3f %6.1f%%\n", k[i].name, (unsigned long long)k[i].calls,
                k[i].total_ms, k[i].share_pct);
}
