#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/metrics/stats.h"
#include "harness/results/result.h"
#include "harness/results/validity.h"

const char *eb_validity_verdict(const struct eb_validity *v)
{
    if (!v->evaluated)
        return NULL;
    return v->valid ? "VALID" : "INVALID";
}

void eb_validity_add(struct eb_validity *v, const char *fmt, ...)
{
    v->evaluated = 1;
    v->valid = 0;
    if (v->n_reasons >= EB_VALIDITY_MAX_REASONS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->reasons[v->n_reasons], sizeof(v->reasons[0]), fmt, ap);
    va_end(ap);
    v->n_reasons++;
}

#define CRITERION(k, t, r, off)                                                                    \
    {                                                                                              \
        .key = #k, .option = "--" #k, .type = EB_VALIDITY_CRITERION_##t,                           \
        .offset = offsetof(struct eb_validity_criteria, k), .rule = (r), .off_when = (off)         \
    }

static const struct eb_validity_criterion criteria_table[] = {
    CRITERION(min_frames, UINT, "at least this many measured frames", NULL),
    CRITERION(min_duration_s, DOUBLE, "a measured phase at least this many seconds long", "0"),
    CRITERION(max_drift_pct, DOUBLE,
              "no fifth of the measured frames with a median end-to-end latency more than this "
              "many % from the median of all",
              NULL),
    CRITERION(max_others_cpu_pct, DOUBLE,
              "other processes using at most this % of all CPUs' time during the measured pass",
              "100"),
    CRITERION(max_cov_pct, DOUBLE, "an end-to-end latency CoV of at most this many %", "0"),
    CRITERION(max_drop_pct, DOUBLE, "a paced slot dropping at most this % of its frames", NULL),
};

const struct eb_validity_criterion *eb_validity_criteria_table(size_t *n_out)
{
    *n_out = sizeof(criteria_table) / sizeof(criteria_table[0]);
    return criteria_table;
}

double eb_validity_criterion_value(const struct eb_validity_criterion *k,
                                   const struct eb_validity_criteria *c)
{
    const char *base = (const char *)c + k->offset;
    if (k->type == EB_VALIDITY_CRITERION_UINT) {
        uint64_t v;
        memcpy(&v, base, sizeof(v));
        return (double)v;
    }
    double v;
    memcpy(&v, base, sizeof(v));
    return v;
}

void eb_validity_judge_slot(const struct eb_slot_result *s, const struct eb_validity_criteria *c,
                            const char *throttle_text, struct eb_validity *out)
{
    memset(out, 0, sizeof(*out));
    if (s->status == EB_SLOT_SKIPPED)
        return;
    out->evaluated = 1;
    out->valid = 1;
    if (s->status == EB_SLOT_FAILED) {
        eb_validity_add(out, "failed: %.200s", s->message[0] != '\0' ? s->message : "unknown");
        return;
    }
    if (s->frames_measured < c->min_frames)
        eb_validity_add(out, "%llu measured frames, fewer than --min_frames %llu",
                        (unsigned long long)s->frames_measured, (unsigned long long)c->min_frames);
    if (c->min_duration_s > 0 && !(s->wall_s >= c->min_duration_s))
        eb_validity_add(out, "measured for %.2f s, shorter than --min_duration_s %g", s->wall_s,
                        c->min_duration_s);
    const struct eb_stat_drift *d = &s->steady;
    if (d->blocks > 0 && d->drift_pct > c->max_drift_pct) {
        uint64_t first = 0, last = 0;
        eb_stat_drift_block_frames(s->frames_measured, d->worst_block, &first, &last);
        eb_validity_add(out,
                        "end-to-end latency drifted: the median of measured frames %llu-%llu was "
                        "%.3f ms against %.3f ms over the window (%.1f%%, more than "
                        "--max_drift_pct %g): not a steady state",
                        (unsigned long long)first, (unsigned long long)last,
                        d->block_p50[d->worst_block], d->p50, d->drift_pct, c->max_drift_pct);
    }
    const struct eb_stat_summary *e2e = &s->stages[EB_STAGE_E2E];
    if (c->max_cov_pct > 0 && e2e->count > 1 && 100.0 * e2e->cov > c->max_cov_pct)
        eb_validity_add(out,
                        "end-to-end latency CoV %.2f%% over the measured frames is above "
                        "--max_cov_pct %g (too noisy)",
                        100.0 * e2e->cov, c->max_cov_pct);
    if (s->warmup_auto && !s->warmup_stable)
        eb_validity_add(out,
                        "--warmup auto: the median of %d-frame windows did not settle within "
                        "%g%% in %llu warm-up frames (%.1f s)",
                        EB_WARMUP_AUTO_WINDOW, 100.0 * EB_WARMUP_AUTO_TOL,
                        (unsigned long long)s->frames_warmup, s->warmup_s);
    if (c->max_others_cpu_pct < 100 && s->others_cpu_pct > c->max_others_cpu_pct)
        eb_validity_add(out,
                        "other processes used %.1f%% of the CPUs' time during the measured pass, "
                        "more than --max_others_cpu_pct %g: the machine was not quiet",
                        s->others_cpu_pct, c->max_others_cpu_pct);
    if (s->fps_target > 0 && s->drop_pct > c->max_drop_pct)
        eb_validity_add(out,
                        "paced at %g FPS, dropped %llu frames (%.2f%%), more than --max_drop_pct "
                        "%g: the slot did not keep up",
                        s->fps_target, (unsigned long long)s->frames_dropped, s->drop_pct,
                        c->max_drop_pct);
    if (throttle_text != NULL)
        eb_validity_add(out, "the GPU throttled during the run (%.180s)", throttle_text);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void eb_warmup_auto_init(struct eb_warmup_auto *w)
{
    memset(w, 0, sizeof(*w));
}

int eb_warmup_auto_add(struct eb_warmup_auto *w, double ms)
{
    if (w->stable)
        return 1;
    w->window[w->fill++] = ms;
    if (w->fill < EB_WARMUP_AUTO_WINDOW)
        return 0;
    double sorted[EB_WARMUP_AUTO_WINDOW];
    memcpy(sorted, w->window, sizeof(sorted));
    qsort(sorted, EB_WARMUP_AUTO_WINDOW, sizeof(double), cmp_double);
    double p50 = eb_stat_percentile_sorted(sorted, EB_WARMUP_AUTO_WINDOW, 50);
    w->fill = 0;
    if (w->have_prev) {
        double diff = p50 > w->prev_p50 ? p50 - w->prev_p50 : w->prev_p50 - p50;
        if (diff <= EB_WARMUP_AUTO_TOL * w->prev_p50)
            w->stable = 1;
    }
    w->prev_p50 = p50;
    w->have_prev = 1;
    return w->stable;
}
