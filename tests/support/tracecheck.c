/*
 * eb_tracecheck TRACE [--kernels] SLOT=FRAMES_CSV...: checks a `profile --trace` trace.json
 * against the run's frames_<slot>.csv, for shell tests. TRACE must parse as JSON (the repo's
 * parser) with a traceEvents array; for each SLOT: one thread_name event names a thread SLOT,
 * that thread has exactly the four stage "X" events (read, preprocess, inference, postprocess)
 * of every frame of the CSV, in that order, none overlapping the one before (1 ns of rounding
 * allowed), each frame's durations summing to its end_to_end_ms within 0.001 ms; no other
 * thread of the process holds those events. With --kernels: at least one "kernel" X event of
 * the GPU process (process_name "GPU"), every one on a thread named "stream <tid>" and inside
 * the span of the stage events. Prints one "ok" line per slot (and the kernels); exit 1 with
 * the reason otherwise.
 *
 * eb_tracecheck TRACE [--kernels] llm=REPORT_JSON: checks an `llm --trace` trace.json against
 * its report.json: one thread named "llm" holds, per measured repetition in order, a "prefill"
 * and then a "decode" event of cat "phase" (args.rep, not overlapping) and, inside that decode,
 * its "decode step" events of cat "step" (args.rep, step in order, kv = prompt + step), as many
 * as report.json's trace.steps. With --kernels: kernels as above, each inside one of the phase
 * events.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/json.h"

static int fail(const char *what, const char *detail)
{
    fprintf(stderr, "eb_tracecheck: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    return 1;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b != NULL && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b != NULL) {
        b[n] = '\0';
        *len = (size_t)n;
    }
    return b;
}

static const char *str(const struct eb_json_value *e, const char *key)
{
    const struct eb_json_value *v = eb_json_get(e, key);
    return v != NULL && v->type == EB_JSON_STRING ? v->str : "";
}

static double num(const struct eb_json_value *e, const char *key)
{
    const struct eb_json_value *v = eb_json_get(e, key);
    return v != NULL && v->type == EB_JSON_NUMBER ? v->num : NAN;
}

static const char *const stage_names[4] = {"read", "preprocess", "inference", "postprocess"};

/* The thread named `name` (a thread_name event) of any process: its pid and tid; 0 if none or
 * more than one. */
static int find_thread(const struct eb_json_value *ev, const char *name, double *pid, double *tid)
{
    int found = 0;
    for (size_t i = 0; i < ev->n; i++) {
        const struct eb_json_value *e = &ev->items[i];
        const struct eb_json_value *args = eb_json_get(e, "args");
        if (strcmp(str(e, "ph"), "M") == 0 && strcmp(str(e, "name"), "thread_name") == 0 &&
            args != NULL && strcmp(str(args, "name"), name) == 0) {
            *pid = num(e, "pid");
            *tid = num(e, "tid");
            found++;
        }
    }
    return found == 1;
}

static int check_slot(const struct eb_json_value *ev, const char *slot, const char *csv_path,
                      double *span0, double *span1)
{
    char msg[512];
    double pid, tid;
    if (!find_thread(ev, slot, &pid, &tid))
        return fail("no single thread_name event names slot", slot);
    size_t len = 0;
    char *csv = slurp(csv_path, &len);
    if (csv == NULL)
        return fail("cannot read", csv_path);
    /* The stage events of the slot's thread, in file order. */
    size_t n_ev = 0, cap = 0;
    const struct eb_json_value **st = NULL;
    for (size_t i = 0; i < ev->n; i++) {
        const struct eb_json_value *e = &ev->items[i];
        if (strcmp(str(e, "ph"), "X") != 0 || strcmp(str(e, "cat"), "stage") != 0)
            continue;
        if (num(e, "tid") != tid || num(e, "pid") != pid)
            continue;
        if (n_ev == cap) {
            cap = cap ? cap * 2 : 256;
            st = realloc(st, cap * sizeof(*st));
        }
        st[n_ev++] = e;
    }
    int rc = 0;
    size_t frames = 0, k = 0;
    double prev_end = -INFINITY;
    char *save = NULL;
    strtok_r(csv, "\n", &save); /* the header */
    for (char *line = strtok_r(NULL, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save), frames++) {
        /* frame,start_ms,arrival_ms,read_ms,preprocess_ms,inference_ms,postprocess_ms,e2e_ms,... */
        char *f[10] = {0};
        size_t nf = 0;
        for (char *p = line; nf < 10; p++) {
            f[nf++] = p;
            p = strchr(p, ',');
            if (p == NULL)
                break;
            *p = '\0';
        }
        if (nf < 8) {
            rc = fail("short line in", csv_path);
            break;
        }
        const long long frame = strtoll(f[0], NULL, 10);
        const double e2e_ms = strtod(f[7], NULL);
        double sum_us = 0;
        for (int s = 0; s < 4; s++, k++) {
            if (k >= n_ev) {
                snprintf(msg, sizeof(msg), "%s frame %lld has %d of 4 stage events", slot, frame,
                         s);
                rc = fail(msg, NULL);
                goto out;
            }
            const struct eb_json_value *e = st[k];
            const struct eb_json_value *args = eb_json_get(e, "args");
            const double ts = num(e, "ts"), dur = num(e, "dur");
            if (strcmp(str(e, "name"), stage_names[s]) != 0 || args == NULL ||
                num(args, "frame") != (double)frame || !(dur >= 0)) {
                snprintf(msg, sizeof(msg),
                         "%s frame %lld: event %zu is \"%s\" of frame %g, "
                         "expected %s with a duration",
                         slot, frame, k, str(e, "name"), args ? num(args, "frame") : NAN,
                         stage_names[s]);
                rc = fail(msg, NULL);
                goto out;
            }
            if (ts < prev_end - 0.001) {
                snprintf(msg, sizeof(msg),
                         "%s frame %lld %s starts at %.3f us, before the end "
                         "of the event before it (%.3f us)",
                         slot, frame, stage_names[s], ts, prev_end);
                rc = fail(msg, NULL);
                goto out;
            }
            if (ts < *span0)
                *span0 = ts;
            if (ts + dur > *span1)
                *span1 = ts + dur;
            prev_end = ts + dur;
            sum_us += dur;
        }
        if (fabs(sum_us / 1e3 - e2e_ms) > 0.001) {
            snprintf(msg, sizeof(msg), "%s frame %lld: stages sum to %.4f ms, end_to_end %.4f ms",
                     slot, frame, sum_us / 1e3, e2e_ms);
            rc = fail(msg, NULL);
            goto out;
        }
    }
    if (rc == 0 && k != n_ev) {
        snprintf(msg, sizeof(msg), "%s: %zu stage events for %zu frames", slot, n_ev, frames);
        rc = fail(msg, NULL);
    }
    if (rc == 0 && frames == 0)
        rc = fail("no frames in", csv_path);
    if (rc == 0)
        printf("ok %s: %zu frames, %zu stage events on tid %g\n", slot, frames, n_ev, tid);
out:
    free(st);
    free(csv);
    return rc;
}

/* The phase events of an llm trace: [ts, ts + dur] each, in microseconds. */
struct ranges {
    double lo[2 * 10000], hi[2 * 10000];
    size_t n;
};

static double jnum(const struct eb_json_value *root, const char *a, const char *b)
{
    const struct eb_json_value *o = eb_json_get(root, a);
    return o != NULL ? num(o, b) : NAN;
}

static int check_llm(const struct eb_json_value *ev, const char *report_path, struct ranges *ph,
                     double *span0, double *span1)
{
    char msg[512];
    size_t len = 0;
    char *text = slurp(report_path, &len);
    struct eb_json_value *rep = NULL;
    struct eb_diag d = {0};
    if (text == NULL || eb_json_parse(text, len, &rep, &d) != EB_OK) {
        free(text);
        return fail("cannot read the llm report", report_path);
    }
    free(text);
    const double reps = jnum(rep, "workload", "reps_measured"), gen = jnum(rep, "workload", "gen"),
                 prompt = jnum(rep, "workload", "prompt"), steps = jnum(rep, "trace", "steps");
    eb_json_free(rep);
    if (!(reps >= 1 && gen >= 1 && steps >= 0) || reps > 10000)
        return fail("the llm report has no measured repetitions or trace", report_path);
    double pid, tid;
    if (!find_thread(ev, "llm", &pid, &tid))
        return fail("no single thread_name event names the llm thread", NULL);
    size_t n_phase = 0, n_step = 0;
    double prev_end = -INFINITY, dec_lo = NAN, dec_hi = NAN, cur_rep = -1;
    ph->n = 0;
    for (size_t i = 0; i < ev->n; i++) {
        const struct eb_json_value *e = &ev->items[i];
        if (strcmp(str(e, "ph"), "X") != 0 || num(e, "pid") != pid || num(e, "tid") != tid)
            continue;
        const struct eb_json_value *args = eb_json_get(e, "args");
        const double ts = num(e, "ts"), dur = num(e, "dur"), r = args ? num(args, "rep") : NAN;
        if (!(dur >= 0))
            return fail("an llm event has no duration", str(e, "name"));
        if (strcmp(str(e, "cat"), "phase") == 0) {
            const char *want = n_phase % 2 == 0 ? "prefill" : "decode";
            if (strcmp(str(e, "name"), want) != 0 || r != (double)(n_phase / 2) ||
                ts < prev_end - 0.001) {
                snprintf(msg, sizeof(msg),
                         "phase event %zu is %s of rep %g at %.3f us, expected %s of rep %zu "
                         "after %.3f us",
                         n_phase, str(e, "name"), r, ts, want, n_phase / 2, prev_end);
                return fail(msg, NULL);
            }
            prev_end = ts + dur;
            ph->lo[ph->n] = ts;
            ph->hi[ph->n++] = ts + dur;
            if (n_phase % 2 == 1) {
                dec_lo = ts;
                dec_hi = ts + dur;
                cur_rep = r;
            }
            n_phase++;
            if (ts < *span0)
                *span0 = ts;
            if (ts + dur > *span1)
                *span1 = ts + dur;
        } else if (strcmp(str(e, "cat"), "step") == 0) {
            const double j = args ? num(args, "step") : NAN;
            const double want_j = n_step - gen * (double)(size_t)(n_step / (size_t)gen);
            if (strcmp(str(e, "name"), "decode step") != 0 || r != cur_rep || j != want_j ||
                num(args, "kv") != prompt + j || ts < dec_lo - 0.001 || ts + dur > dec_hi + 0.001) {
                snprintf(msg, sizeof(msg),
                         "step event %zu (rep %g step %g at %.3f+%.3f us) is not step %g of rep "
                         "%g inside its decode [%.3f, %.3f] us",
                         n_step, r, j, ts, dur, want_j, cur_rep, dec_lo, dec_hi);
                return fail(msg, NULL);
            }
            n_step++;
        }
    }
    if (n_phase != 2 * (size_t)reps || n_step != (size_t)steps) {
        snprintf(msg, sizeof(msg), "%zu phase events for %g repetitions, %zu steps for %g", n_phase,
                 reps, n_step, steps);
        return fail(msg, NULL);
    }
    printf("ok llm: %g repetitions, %zu phase events, %zu step events on tid %g\n", reps, n_phase,
           n_step, tid);
    return 0;
}

/* Kernel events: on the GPU process, on a named stream thread, inside [span0, span1] and, when
 * `ph` is given, inside one of its ranges. */
static int check_kernels(const struct eb_json_value *ev, double span0, double span1,
                         const struct ranges *ph)
{
    double gpu_pid = NAN;
    for (size_t i = 0; i < ev->n; i++) {
        const struct eb_json_value *e = &ev->items[i];
        const struct eb_json_value *args = eb_json_get(e, "args");
        if (strcmp(str(e, "name"), "process_name") == 0 && args != NULL &&
            strcmp(str(args, "name"), "GPU") == 0)
            gpu_pid = num(e, "pid");
    }
    if (isnan(gpu_pid))
        return fail("no process_name event names the GPU", NULL);
    size_t n = 0;
    for (size_t i = 0; i < ev->n; i++) {
        const struct eb_json_value *e = &ev->items[i];
        if (strcmp(str(e, "cat"), "kernel") != 0)
            continue;
        char want[48], msg[512];
        snprintf(want, sizeof(want), "stream %.0f", num(e, "tid"));
        double pid, tid;
        if (num(e, "pid") != gpu_pid || !find_thread(ev, want, &pid, &tid) || pid != gpu_pid)
            return fail("a kernel is not on a named stream of the GPU process", str(e, "name"));
        const double ts = num(e, "ts"), dur = num(e, "dur");
        if (!(dur >= 0) || ts < span0 - 0.001 || ts + dur > span1 + 0.001) {
            snprintf(msg, sizeof(msg),
                     "kernel %s at %.3f+%.3f us is outside the frames' span "
                     "[%.3f, %.3f] us",
                     str(e, "name"), ts, dur, span0, span1);
            return fail(msg, NULL);
        }
        size_t k = 0;
        while (ph != NULL && k < ph->n &&
               !(ts >= ph->lo[k] - 0.001 && ts + dur <= ph->hi[k] + 0.001))
            k++;
        if (ph != NULL && k == ph->n) {
            snprintf(msg, sizeof(msg), "kernel %s at %.3f+%.3f us is inside no phase event",
                     str(e, "name"), ts, dur);
            return fail(msg, NULL);
        }
        n++;
    }
    if (n == 0)
        return fail("no kernel events", NULL);
    printf("ok kernels: %zu inside [%.3f, %.3f] us\n", n, span0, span1);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return fail("usage: eb_tracecheck TRACE [--kernels] SLOT=FRAMES_CSV... | llm=REPORT_JSON",
                    NULL);
    size_t len = 0;
    char *text = slurp(argv[1], &len);
    if (text == NULL)
        return fail("cannot read", argv[1]);
    struct eb_json_value *root = NULL;
    struct eb_diag d = {0};
    if (eb_json_parse(text, len, &root, &d) != EB_OK) {
        free(text);
        return fail("trace does not parse", d.msg);
    }
    free(text);
    const struct eb_json_value *ev = eb_json_get(root, "traceEvents");
    int rc = 0, kernels = 0;
    double span0 = INFINITY, span1 = -INFINITY;
    struct ranges *ph = NULL;
    if (ev == NULL || ev->type != EB_JSON_ARRAY)
        rc = fail("no traceEvents array", NULL);
    for (int i = 2; i < argc && rc == 0; i++) {
        if (strcmp(argv[i], "--kernels") == 0) {
            kernels = 1;
            continue;
        }
        char *eq = strchr(argv[i], '=');
        if (eq == NULL) {
            rc = fail("expected SLOT=FRAMES_CSV, got", argv[i]);
            break;
        }
        *eq = '\0';
        if (strcmp(argv[i], "llm") == 0) {
            ph = ph != NULL ? ph : calloc(1, sizeof(*ph));
            rc = ph == NULL ? fail("out of memory", NULL)
                            : check_llm(ev, eq + 1, ph, &span0, &span1);
        } else {
            rc = check_slot(ev, argv[i], eq + 1, &span0, &span1);
        }
    }
    if (rc == 0 && kernels)
        rc = check_kernels(ev, span0, span1, ph);
    eb_json_free(root);
    free(ph);
    return rc;
}
