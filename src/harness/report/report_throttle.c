/*
 * Throttling onset (soak runs): when a slot's end-to-end latency changed level during the pass
 * and whether the sampler's GPU clock or hottest temperature changed at the same time.
 * harness/results/result.h (struct eb_throttle_onset) says what is kept; the detector is
 * eb_stat_change_point (harness/metrics/stats.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eb/clock.h"
#include "harness/report/report.h"
#include "harness/report/report_html.h"

/* The change-point of the sampler's series `kind` (the first such series) over [t0, t1]
 * (CLOCK_MONOTONIC seconds); 0 when there is none. */
static int sampler_change(const struct eb_report_metrics *m, enum eb_report_ts_kind kind, double t0,
                          double t1, double *t_out, double *before, double *after)
{
    const struct eb_report_ts *ts = NULL;
    for (size_t k = 0; k < m->n_ts && ts == NULL; k++)
        if (m->ts[k].kind == kind)
            ts = &m->ts[k];
    if (ts == NULL || m->n == 0)
        return 0;
    double *v = malloc(m->n * sizeof(*v));
    double *t = malloc(m->n * sizeof(*t));
    int found = 0;
    if (v != NULL && t != NULL) {
        size_t n = 0;
        for (size_t i = 0; i < m->n; i++)
            if (m->t_s[i] >= t0 && m->t_s[i] <= t1 && isfinite(ts->v[i])) {
                v[n] = ts->v[i];
                t[n++] = m->t_s[i];
            }
        struct eb_stat_change c;
        eb_stat_change_point(v, n, &c);
        if (c.found) {
            found = 1;
            *t_out = (t[c.split - 1] + t[c.split]) / 2.0 - t0;
            *before = c.before;
            *after = c.after;
        }
    }
    free(v);
    free(t);
    return found;
}

void eb_report__throttle_find(const struct eb_slot_result *s, const struct eb_report_metrics *m,
                              struct eb_throttle_onset *out)
{
    memset(out, 0, sizeof(*out));
    out->t_s = out->clock_t_s = out->temp_t_s = NAN;
    out->latency_before_ms = out->latency_after_ms = NAN;
    out->clock_before_mhz = out->clock_after_mhz = out->temp_before_c = out->temp_after_c = NAN;
    const struct eb_stat_series *se = &s->e2e_series;
    if (s->status != EB_SLOT_OK || se->n_used < 2 * EB_STAT_CP_MIN_SIDE)
        return;
    double mean[EB_STAT_SERIES_BUCKETS], tb[EB_STAT_SERIES_BUCKETS];
    size_t n = 0;
    for (size_t i = 0; i < se->n_used; i++)
        if (se->b[i].count > 0) {
            mean[n] = se->b[i].sum / (double)se->b[i].count;
            tb[n++] = ((double)i + 0.5) * se->width_s;
        }
    if (n < 2 * EB_STAT_CP_MIN_SIDE)
        return;
    out->checked = 1;
    struct eb_stat_change c;
    eb_stat_change_point(mean, n, &c);
    if (!c.found)
        return;
    out->found = 1;
    out->t_s = (tb[c.split - 1] + tb[c.split]) / 2.0;
    out->latency_before_ms = c.before;
    out->latency_after_ms = c.after;
    if (m == NULL)
        return;
    const double t0 = (double)s->series_t0_ns / 1e9;
    const double t1 = t0 + (double)se->n_used * se->width_s;
    const double window =
        2.0 * se->width_s > EB_THROTTLE_WINDOW_S ? 2.0 * se->width_s : EB_THROTTLE_WINDOW_S;
    double t;
    if (sampler_change(m, EB_REPORT_TS_CLOCK_MHZ, t0, t1, &t, &out->clock_before_mhz,
                       &out->clock_after_mhz)) {
        out->clock_t_s = t;
        out->coincides |= fabs(t - out->t_s) <= window;
    }
    if (sampler_change(m, EB_REPORT_TS_TEMP_C, t0, t1, &t, &out->temp_before_c,
                       &out->temp_after_c)) {
        out->temp_t_s = t;
        out->coincides |= fabs(t - out->t_s) <= window;
    }
}

void eb_report__throttle_find_all(struct eb_run_result *r)
{
    struct eb_report_metrics m;
    eb_report_metrics_init(&m);
    const int64_t off = (int64_t)eb_clock_wall_ns() - (int64_t)eb_clock_ns();
    struct eb_diag d = {0};
    /* A checkpoint looks at the latency alone: the sampler's files grow with the run, and a
     * checkpoint must not (the final report reads them). */
    const int have = !r->checkpoint && r->output_dir[0] != '\0' &&
                     eb_report_metrics_load_dir(r->output_dir, off, &m, &d) == EB_OK;
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        eb_report__throttle_find(&r->slots[i], have ? &m : NULL, &r->slots[i].throttle);
    eb_report_metrics_fini(&m);
}
