/*
 * report.html (report_html.h): the page for people, with charts. Rendered from the same struct
 * eb_run_result as report.json and report.md (and with the same unit conversions: memory in GB
 * of 10^9 bytes, latency in ms), plus the sampler's series read back from metrics.jsonl.
 *
 * The page carries a Content-Security-Policy that forbids every fetch and every script, so the
 * browser itself guarantees that it is self-contained. All text goes through
 * eb_svg_put_escaped (model paths and class names may hold < & " or invalid UTF-8).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eb/clock.h"
#include "eb/json.h"
#include "harness/metrics/sampler.h"
#include "harness/report/report.h"
#include "harness/report/report_facts.h"
#include "harness/report/report_html.h"
#include "harness/report/svg_chart.h"

#define MAX_TIME_PTS 1500 /* points per series of a chart over time; more are averaged */
#define HIST_BINS    50
#define MIB          (1024.0 * 1024.0) /* the sampler's "MB" */

/* ------------------------------------------------------------------------------- metrics */

void eb_report_metrics_init(struct eb_report_metrics *m)
{
    memset(m, 0, sizeof(*m));
}

void eb_report_metrics_fini(struct eb_report_metrics *m)
{
    if (m == NULL)
        return;
    free(m->t_s);
    for (size_t k = 0; k < m->n_ts; k++)
        free(m->ts[k].v);
    eb_report_metrics_init(m);
}

enum eb_status eb_report_metrics_append(struct eb_report_metrics *m, double t_s)
{
    if (m->n >= EB_REPORT_METRICS_MAX_LEN)
        return EB_ERR_LIMIT;
    if (m->n == m->cap) {
        size_t cap = m->cap > 0 ? 2 * m->cap : 256;
        /* Every array grows to `cap` before m->cap says so: a failure part-way leaves some
         * arrays larger than m->cap, which is harmless. */
        double *t = realloc(m->t_s, cap * sizeof(*t));
        if (t == NULL)
            return EB_ERR_NOMEM;
        m->t_s = t;
        for (size_t k = 0; k < m->n_ts; k++) {
            double *v = realloc(m->ts[k].v, cap * sizeof(*v));
            if (v == NULL)
                return EB_ERR_NOMEM;
            m->ts[k].v = v;
        }
        m->cap = cap;
    }
    m->t_s[m->n] = t_s;
    for (size_t k = 0; k < m->n_ts; k++)
        m->ts[k].v[m->n] = NAN;
    m->n++;
    return EB_OK;
}

enum eb_status eb_report_metrics_set(struct eb_report_metrics *m, enum eb_report_ts_kind kind,
                                     const char *name, double value)
{
    if (m->n == 0 || name == NULL)
        return EB_OK;
    size_t k = 0;
    while (k < m->n_ts &&
           (m->ts[k].kind != kind || strncmp(m->ts[k].name, name, sizeof(m->ts[k].name) - 1) != 0))
        k++;
    if (k == m->n_ts) {
        if (m->n_ts == EB_REPORT_TS_MAX)
            return EB_OK;
        double *v = malloc(m->cap * sizeof(*v));
        if (v == NULL)
            return EB_ERR_NOMEM;
        for (size_t i = 0; i < m->n; i++)
            v[i] = NAN;
        struct eb_report_ts *ts = &m->ts[m->n_ts++];
        ts->kind = kind;
        snprintf(ts->name, sizeof(ts->name), "%s", name);
        ts->v = v;
    }
    m->ts[k].v[m->n - 1] = value;
    return EB_OK;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t mo, int64_t d)
{
    y -= mo <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* "2026-11-21T11:02:00.123Z" (eb_clock_iso8601) as ns since the epoch; 0 when malformed. */
static int64_t parse_iso8601_ns(const char *s)
{
    int y, mo, d, h, mi, sec, n = 0;
    if (s == NULL || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6)
        return 0;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return 0;
    int64_t frac_ns = 0;
    const char *p = s + n;
    if (*p == '.') {
        int64_t scale = 100000000;
        for (p++; *p >= '0' && *p <= '9'; p++) {
            frac_ns += (*p - '0') * scale;
            scale /= 10;
        }
    }
    int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
    return secs * 1000000000 + frac_ns;
}

static double num_of(const struct eb_json_value *v)
{
    return v != NULL && v->type == EB_JSON_NUMBER ? v->num : NAN;
}

/* The largest number among an object's members (NaN when none). */
static double max_member(const struct eb_json_value *obj)
{
    double best = NAN;
    for (size_t i = 0; obj != NULL && obj->type == EB_JSON_OBJECT && i < obj->n; i++) {
        double v = num_of(&obj->items[i]);
        if (isfinite(v) && !(v <= best))
            best = v;
    }
    return best;
}

/* Adds one parsed line's series to the sample just appended. */
static enum eb_status load_sample(struct eb_report_metrics *m, const struct eb_json_value *o)
{
    enum eb_status st = EB_OK;
    char name[64];
    double zones = max_member(eb_json_get(o, "temps_c"));
    if (isfinite(zones))
        st = eb_report_metrics_set(m, EB_REPORT_TS_TEMP_C, "thermal zones (hottest)", zones);
    const struct eb_json_value *g = eb_json_get(o, "gpus");
    for (size_t i = 0; st == EB_OK && g != NULL && g->type == EB_JSON_ARRAY && i < g->n; i++) {
        const struct eb_json_value *gi = &g->items[i];
        double idx = num_of(eb_json_get(gi, "index"));
        int id = isfinite(idx) && idx >= 0 && idx < 1000 ? (int)idx : (int)i;
        double v = num_of(eb_json_get(gi, "temp_c"));
        snprintf(name, sizeof(name), "GPU %d (NVML)", id);
        if (isfinite(v))
            st = eb_report_metrics_set(m, EB_REPORT_TS_TEMP_C, name, v);
        v = num_of(eb_json_get(gi, "power_mw"));
        if (st == EB_OK && isfinite(v))
            st = eb_report_metrics_set(m, EB_REPORT_TS_POWER_W, name, v / 1000.0);
        v = num_of(eb_json_get(gi, "sm_clock_mhz"));
        snprintf(name, sizeof(name), "GPU %d SM clock (NVML)", id);
        if (st == EB_OK && isfinite(v))
            st = eb_report_metrics_set(m, EB_REPORT_TS_CLOCK_MHZ, name, v);
        v = num_of(eb_json_get(gi, "mem_used_mb"));
        snprintf(name, sizeof(name), "GPU %d memory used (NVML)", id);
        if (st == EB_OK && isfinite(v))
            st = eb_report_metrics_set(m, EB_REPORT_TS_MEM_GB, name, v * MIB / 1e9);
    }
    const struct eb_json_value *t = eb_json_get(o, "tegrastats");
    if (st == EB_OK && t != NULL && t->type == EB_JSON_OBJECT) {
        double v = num_of(eb_json_get(t, "gpu_freq_mhz"));
        if (isfinite(v))
            st = eb_report_metrics_set(m, EB_REPORT_TS_CLOCK_MHZ, "GPU GR3D (tegrastats)", v);
        v = num_of(eb_json_get(t, "power_total_mw"));
        if (st == EB_OK && isfinite(v))
            st = eb_report_metrics_set(m, EB_REPORT_TS_POWER_W, "board input (tegrastats)",
                                       v / 1000.0);
        /* On a Jetson the thermal zones are the same sensors: tegrastats' only without them. */
        v = max_member(eb_json_get(t, "temps_c"));
        if (st == EB_OK && isfinite(v) && !isfinite(zones))
            st = eb_report_metrics_set(m, EB_REPORT_TS_TEMP_C, "tegrastats sensors (hottest)", v);
    }
    return st;
}

enum eb_status eb_report_metrics_load(const char *path, int64_t wall_minus_mono_ns,
                                      struct eb_report_metrics *m, struct eb_diag *diag)
{
    enum eb_status st = EB_OK;
    char *line = NULL;
    size_t line_cap = 0;
    double anchor_s = NAN; /* CLOCK_MONOTONIC seconds at the sampler's t_s = 0 */
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    ssize_t len;
    while ((len = getline(&line, &line_cap, fp)) > 0) {
        if (strspn(line, " \t\r\n") == (size_t)len)
            continue; /* a blank line is no sample */
        struct eb_json_value *o = NULL;
        if (eb_json_parse(line, (size_t)len, &o, NULL) != EB_OK || o->type != EB_JSON_OBJECT) {
            eb_json_free(o);
            m->bad_lines++;
            continue;
        }
        double t = num_of(eb_json_get(o, "t_s"));
        if (!isfinite(anchor_s) && isfinite(t)) {
            const struct eb_json_value *wall = eb_json_get(o, "wall");
            int64_t wall_ns = parse_iso8601_ns(wall != NULL ? wall->str : NULL);
            if (wall_ns > 0)
                anchor_s = (double)(wall_ns - wall_minus_mono_ns) / 1e9 - t;
        }
        if (!isfinite(t) || !isfinite(anchor_s)) {
            eb_json_free(o);
            m->bad_lines++;
            continue;
        }
        st = eb_report_metrics_append(m, anchor_s + t);
        if (st == EB_OK)
            st = load_sample(m, o);
        eb_json_free(o);
        if (st == EB_ERR_LIMIT) {
            m->truncated = 1;
            st = EB_OK;
            break;
        }
        if (st != EB_OK) {
            st = eb_diag_fail(diag, st, "cannot read %s: out of memory", path);
            break;
        }
    }
    free(line);
    fclose(fp);
    return st;
}

/* ---------------------------------------------------------------------------------- text */

static void put(FILE *fp, const char *s)
{
    eb_svg_put_escaped(fp, s);
}

/* Escaped text, or an em dash when empty. */
static void put_or_dash(FILE *fp, const char *s)
{
    if (s == NULL || s[0] == '\0')
        fputs("—", fp);
    else
        put(fp, s);
}

static double bytes_gb(uint64_t b)
{
    return (double)b / EB_REPORT_BYTES_PER_GB;
}

/* A table row "label | value" with the value escaped. */
/* A fact's value: code in <code>, a status coloured, an empty value as an em dash. */
static void put_value(FILE *fp, const struct eb_fact *f)
{
    const char *cls = (f->flags & EB_FACT_FLAG_BAD)    ? "violations"
                      : (f->flags & EB_FACT_FLAG_GOOD) ? "safe"
                                                       : NULL;
    if (cls != NULL)
        fprintf(fp, "<span class=\"%s\">", cls);
    fputs((f->flags & EB_FACT_FLAG_CODE) ? "<code>" : "", fp);
    put_or_dash(fp, f->value);
    fputs((f->flags & EB_FACT_FLAG_CODE) ? "</code>" : "", fp);
    fputs(cls != NULL ? "</span>" : "", fp);
}

static void html_alert(FILE *fp, const struct eb_fact *f)
{
    fputs("<p class=\"warn\"><b>", fp);
    put(fp, f->label);
    fputs(":</b> ", fp);
    put(fp, f->value);
    fputs("</p>\n", fp);
}

static void html_table_begin(FILE *fp, const struct eb_fact *f)
{
    if (f->group != NULL) {
        fputs("<h3>", fp);
        put(fp, f->group);
        fputs("</h3>\n", fp);
    }
    fputs("<table><tbody>\n", fp);
}

static void html_row(FILE *fp, const struct eb_fact *f)
{
    fputs("<tr><th>", fp);
    put(fp, f->label);
    fputs("</th><td>", fp);
    put_value(fp, f);
    fputs("</td></tr>\n", fp);
}

static void html_table_end(FILE *fp)
{
    fputs("</tbody></table>\n", fp);
}

/* A section's facts as report.md shows them: alerts as warning paragraphs, then tables. */
static void write_facts(const struct eb_fact_list *l, enum eb_fact_section sec, int slot, FILE *fp)
{
    static const struct eb_fact_printer html = {.alert = html_alert,
                                                .table_begin = html_table_begin,
                                                .row = html_row,
                                                .table_end = html_table_end};
    eb_report_facts_print(l, sec, slot, &html, fp);
}

static void status_badge(FILE *fp, enum eb_slot_status st)
{
    fprintf(fp, "<span class=\"st st-%s\">%s</span>", eb_slot_status_name(st),
            eb_slot_status_name(st));
}

/* The reason a slot did not run, as report.md words it. */
static const char *slot_reason(const struct eb_slot_result *s)
{
    return s->message[0] != '\0'          ? s->message
           : s->status == EB_SLOT_SKIPPED ? "no model given for this slot"
                                          : "unknown";
}

const char eb_report__css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
    "margin:0 auto;padding:16px 24px;max-width:1360px;color:#222;background:#fafafa}"
    "h1{font-size:1.5em;margin:.4em 0}h2{font-size:1.25em;margin:1.6em 0 .5em;"
    "border-bottom:1px solid #ccc;padding-bottom:.2em}h3{font-size:1.05em;margin:1.2em 0 .4em}"
    "table{border-collapse:collapse;margin:.5em 0 1em;background:#fff;font-size:.9em}"
    "th,td{border:1px solid #d4d4d4;padding:3px 8px;text-align:left;vertical-align:top}"
    "thead th{background:#eee}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "tbody th{font-weight:normal;background:#f6f6f6}"
    ".charts{display:flex;flex-wrap:wrap;gap:12px;margin:.5em 0 1em}"
    "figure{margin:0;border:1px solid #ddd;background:#fff;max-width:100%}"
    "svg.eb-chart{display:block;max-width:100%;height:auto}"
    ".st{font-weight:bold;padding:1px 6px;border-radius:3px;color:#fff}"
    ".st-ok{background:#1a7f37}.st-failed{background:#b00020}.st-skipped{background:#777}"
    ".safe{color:#1a7f37;font-weight:bold}.violations{color:#b00020;font-weight:bold}"
    ".verdict{margin:.5em 0;padding:6px 10px;border-left:4px solid}.verdict ul{margin:.3em 0}"
    ".verdict.valid{border-color:#1a7f37;background:#eef8f0}"
    ".verdict.invalid{border-color:#b00020;background:#fdeef0}"
    ".note{color:#555}.warn{background:#fff4e5;border-left:4px solid #e69f00;padding:6px 10px}"
    "code{font-size:.9em;word-break:break-all}";

/* ------------------------------------------------------------------------ page sections */

static void write_head(const struct eb_run_result *r, FILE *fp)
{
    eb_svg_page_begin(fp); /* the browser enforces it: nothing is fetched, nothing runs */
    fputs("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n", fp);
    fputs("<meta name=\"generator\" content=\"edgebench ", fp);
    put(fp, r->version);
    fputs("\">\n<title>edgebench report: ", fp);
    put(fp, r->mode[0] != '\0' ? r->mode : "unknown");
    fputs(" mode, ", fp);
    put(fp, r->started_at[0] != '\0' ? r->started_at : "unknown date");
    fprintf(fp, "</title>\n<style>%s</style>\n</head>\n<body>\n", eb_report__css);
}

/* A verdict (VALID / INVALID) and its reasons; nothing when it was not judged. */
static void write_verdict(const struct eb_validity *v, const char *criteria, FILE *fp)
{
    const char *verdict = eb_validity_verdict(v);
    if (!v->evaluated || verdict == NULL)
        return;
    fprintf(fp, "<div class=\"verdict %s\">Verdict: <b>%s</b>", v->valid ? "valid" : "invalid",
            verdict);
    if (criteria != NULL)
        fprintf(fp, " <span class=\"note\">(%s)</span>", criteria);
    if (v->n_reasons > 0) {
        fputs("<ul>", fp);
        for (int i = 0; i < v->n_reasons && i < EB_VALIDITY_MAX_REASONS; i++) {
            fputs("<li>", fp);
            put(fp, v->reasons[i]);
            fputs("</li>", fp);
        }
        fputs("</ul>", fp);
    }
    fputs("</div>\n", fp);
}

static void write_title(const struct eb_run_result *r, const struct eb_fact_list *l, FILE *fp)
{
    fputs("<h1>edgebench report: ", fp);
    put(fp, r->mode[0] != '\0' ? r->mode : "unknown");
    fputs(" mode, ", fp);
    put(fp, r->started_at[0] != '\0' ? r->started_at : "unknown date");
    fputs("</h1>\n", fp);
    if (r->interrupted) {
        const char *sig = eb_report__signal_name(r->interrupt_signal);
        fprintf(fp, "<p class=\"warn\"><b>Interrupted</b>%s%s%s: results cover what ran.</p>\n",
                sig != NULL ? " (" : "", sig != NULL ? sig : "", sig != NULL ? ")" : "");
    }
    fputs("<p class=\"note\">", fp);
    const char *sep = "";
    for (size_t i = eb_report_facts_next(l, 0, EB_FACT_SECTION_RUN, -1); i < l->n;
         i = eb_report_facts_next(l, i + 1, EB_FACT_SECTION_RUN, -1), sep = " · ") {
        const struct eb_fact *f = &l->items[i];
        fputs(sep, fp);
        put(fp, f->label);
        fputs(" ", fp);
        put_value(fp, f);
    }
    fputs("</p>\n", fp);
    char what[256], criteria[280];
    snprintf(criteria, sizeof(criteria), "criteria: %s",
             eb_report__criteria(r, what, sizeof(what)));
    write_verdict(&r->validity, criteria, fp);
}

static void write_memory(const struct eb_run_result *r, const struct eb_fact_list *l, FILE *fp)
{
    const struct eb_mem_summary *m = &r->mem;
    char b1[32];
    const char *overall = eb_mem_overall(m);
    int safe = m->violations == 0;
    fputs("<h2 id=\"memory-safety\">Memory Safety Summary</h2>\n", fp);
    fprintf(fp, "<p><span class=\"%s\">%s</span>: %llu violation%s of the %s GB limit.</p>\n",
            safe ? "safe" : "violations", overall, (unsigned long long)m->violations,
            m->violations == 1 ? "" : "s", eb_report__fmtd(b1, sizeof(b1), m->limit_gb, 2));
    write_facts(l, EB_FACT_SECTION_MEMORY, -1, fp);
}

static void write_summary(const struct eb_run_result *r, FILE *fp)
{
    char b[6][32];
    int order[EB_NUM_SLOTS];
    eb_report__slots_by_closeness(r, order);
    fputs("<h2 id=\"summary\">Slots</h2>\n<table>\n<thead><tr><th>Slot</th><th>Status</th>"
          "<th>Backend</th><th>Device</th><th>Model</th><th>Frames</th>"
          "<th>End-to-end p50 ms</th><th>p99 ms</th><th>FPS</th><th>Peak GB</th>"
          "<th>% of limit</th><th>Violations</th></tr></thead>\n<tbody>\n",
          fp);
    /* In the order of closeness to the memory limit, as report.md ranks them. */
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *s = &r->slots[order[i]];
        int ran = s->status == EB_SLOT_OK;
        const struct eb_stat_summary *e = &s->stages[EB_STAGE_E2E];
        double p = bytes_gb(s->mem_peak_bytes);
        fprintf(fp, "<tr><td><a href=\"#slot-%d\">%d: %s</a></td><td>", s->index, s->index,
                s->name);
        status_badge(fp, s->status);
        if (!ran) {
            fputs(" ", fp);
            put(fp, slot_reason(s));
        }
        fputs("</td><td>", fp);
        put_or_dash(fp, s->backend);
        fputs("</td><td>", fp);
        put_or_dash(fp, s->device);
        fputs("</td><td><code>", fp);
        put_or_dash(fp, s->model_path);
        fprintf(fp,
                "</code></td><td class=\"n\">%llu</td><td class=\"n\">%s</td><td "
                "class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td "
                "class=\"n\">%s</td><td class=\"n\">%llu</td></tr>\n",
                (unsigned long long)s->frames_measured,
                eb_report__fmtd(b[0], sizeof(b[0]), ran && e->count > 0 ? e->p50 : NAN, 3),
                eb_report__fmtd(b[1], sizeof(b[1]), ran && e->count > 0 ? e->p99 : NAN, 3),
                eb_report__fmtd(b[2], sizeof(b[2]), ran ? s->throughput_fps : NAN, 1),
                eb_report__fmtd(b[3], sizeof(b[3]), p, 2),
                eb_report__fmtd(b[4], sizeof(b[4]),
                                r->mem.limit_gb > 0 ? 100.0 * p / r->mem.limit_gb : NAN, 1),
                (unsigned long long)s->violations);
    }
    fputs("</tbody></table>\n", fp);
}

/* One row of a latency table: the same columns as report.md's. */
static void latency_row(FILE *fp, const char *label, const struct eb_stat_summary *s)
{
    char b[12][48];
    fprintf(fp,
            "<tr><th>%s</th><td class=\"n\">%llu</td><td class=\"n\">%s ± %s</td><td "
            "class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td "
            "class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td "
            "class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td "
            "class=\"n\">%s</td></tr>\n",
            label, (unsigned long long)s->count, eb_report__fmtd(b[0], sizeof(b[0]), s->mean, 3),
            eb_report__fmtd(b[1], sizeof(b[1]), s->std, 3),
            eb_report__fmtd(b[2], sizeof(b[2]), 100.0 * s->cov, 2),
            eb_report__fmtd(b[3], sizeof(b[3]), s->min, 3),
            eb_report__fmtd(b[4], sizeof(b[4]), s->p50, 3),
            eb_report__fmt_ci(b[5], sizeof(b[5]), &s->p50_ci),
            eb_report__fmtd(b[6], sizeof(b[6]), s->p90, 3),
            eb_report__fmtd(b[7], sizeof(b[7]), s->p95, 3),
            eb_report__fmtd(b[8], sizeof(b[8]), s->p99, 3),
            eb_report__fmt_ci(b[9], sizeof(b[9]), &s->p99_ci),
            eb_report__fmtd(b[10], sizeof(b[10]), s->max, 3),
            eb_report__fmtd(b[11], sizeof(b[11]), s->fps, 1));
}

static void latency_header(FILE *fp, const char *first)
{
    fprintf(fp,
            "<table>\n<thead><tr><th>%s</th><th>n</th><th>Mean ± std</th><th>CoV %%</th>"
            "<th>Min</th><th>p50</th><th>p50 95%% CI</th><th>p90</th><th>p95</th><th>p99</th>"
            "<th>p99 95%% CI</th><th>Max</th><th>FPS</th></tr></thead>\n<tbody>\n",
            first);
}

/* Closes a latency table and says how its intervals are made. */
static void latency_end(FILE *fp)
{
    fputs("</tbody></table>\n<p class=\"note\">Latency in ms. 95% CIs: " EB_STAT_CI_METHOD
          " (exact binomial ranks of the order statistics, distribution-free); n/a where the "
          "sample is too small for one (p50 needs n ≥ 6, p99 n ≥ 368).</p>\n",
          fp);
}

/* Writes a chart's <figure> wrapper around whatever `draw` renders. */
static void figure_begin(FILE *fp)
{
    fputs("<figure>\n", fp);
}

static void figure_end(FILE *fp)
{
    fputs("</figure>\n", fp);
}

/* A status from a chart function: the document goes on; a failed chart leaves a note. */
static void chart_done(FILE *fp, enum eb_status st)
{
    if (st == EB_ERR_NOMEM)
        fputs("<p class=\"note\">Part of this chart is missing: out of memory.</p>\n", fp);
}

/* ------------------------------------------------------------------- per-run chart data */

/* Points of a chart over time: at most MAX_TIME_PTS, each the mean (or max) of `group`. */
struct tseries {
    size_t n;
    double *x, *y; /* x: seconds since the first measured frame */
};

/* The charts over time of one run, all arrays in one block. */
struct run_data {
    double t0_s;        /* CLOCK_MONOTONIC of the first measured frame, s */
    double x_end;       /* end of the last measured frame, s since t0 */
    int any_frames;     /* a slot ran and measured frames */
    size_t frame_group; /* frames averaged per point (1 = every frame) */
    struct tseries lat[EB_NUM_SLOTS], mem[EB_NUM_SLOTS];
    size_t m_group; /* samples per point */
    struct tseries ts[EB_REPORT_TS_MAX];
    int oom;
    double *block;
};

static int slot_has_frames(const struct eb_slot_result *s)
{
    return s->status == EB_SLOT_OK && s->records != NULL && s->n_records > 0;
}

/* A soak run's latency (bucket mean) and memory (bucket max) over the whole pass from its
 * fixed-size series, into the points the records would have filled (EB_STAT_SERIES_BUCKETS
 * fit: at least that many frames were kept). Returns the points written. */
static size_t series_points(const struct eb_slot_result *s, uint64_t t0, struct tseries *lat,
                            struct tseries *mem)
{
    const struct eb_stat_series *se = &s->e2e_series, *sm = &s->mem_series;
    const double off = ((double)s->series_t0_ns - (double)t0) / 1e9;
    size_t k = 0;
    for (size_t b = 0; b < se->n_used; b++) {
        if (se->b[b].count == 0)
            continue;
        lat->x[k] = off + ((double)b + 0.5) * se->width_s;
        lat->y[k] = se->b[b].sum / (double)se->b[b].count;
        mem->y[k] = b < sm->n_used && sm->b[b].count > 0 ? bytes_gb((uint64_t)sm->b[b].max) : NAN;
        k++;
    }
    return k;
}

/*
 * Reduces n points to ceil(n / group) by averaging x and averaging (use_max 0) or taking the
 * max (use_max 1) of the finite ys of each run of `group` consecutive points.
 */
static size_t reduce(const double *x, const double *y, size_t n, size_t group, int use_max,
                     double *xo, double *yo)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i += group, k++) {
        size_t end = i + group < n ? i + group : n;
        double sx = 0.0, sy = 0.0, my = NAN;
        size_t fy = 0;
        for (size_t j = i; j < end; j++) {
            sx += x[j];
            if (isfinite(y[j])) {
                sy += y[j];
                my = fy == 0 || y[j] > my ? y[j] : my;
                fy++;
            }
        }
        xo[k] = sx / (double)(end - i);
        yo[k] = fy == 0 ? NAN : use_max ? my : sy / (double)fy;
    }
    return k;
}

static size_t group_for(size_t n)
{
    return n <= MAX_TIME_PTS ? 1 : (n + MAX_TIME_PTS - 1) / MAX_TIME_PTS;
}

static void run_data_build(const struct eb_run_result *r, const struct eb_report_metrics *m,
                           struct run_data *d)
{
    memset(d, 0, sizeof(*d));
    uint64_t t0 = UINT64_MAX;
    size_t max_frames = 0;
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *s = &r->slots[i];
        if (!slot_has_frames(s))
            continue;
        d->any_frames = 1;
        for (size_t j = 0; j < s->n_records; j++)
            t0 = s->records[j].t_start_ns < t0 ? s->records[j].t_start_ns : t0;
        max_frames = s->n_records > max_frames ? s->n_records : max_frames;
    }
    if (!d->any_frames)
        return;
    d->t0_s = (double)t0 / 1e9;
    d->frame_group = group_for(max_frames);

    /* The sampler's window: the samples of the measured phase and the one on either side of
     * it, whose values are interpolated at the phase's start and end (below). */
    size_t i0 = 0, i1 = 0;
    size_t n_frames_pts = (max_frames + d->frame_group - 1) / d->frame_group;
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *s = &r->slots[i];
        for (size_t j = 0; slot_has_frames(s) && j < s->n_records; j++) {
            const struct eb_frame_record *rec = &s->records[j];
            double end = (double)(rec->t_start_ns - t0 + rec->stage_ns[EB_STAGE_E2E]) / 1e9;
            d->x_end = end > d->x_end ? end : d->x_end;
        }
        /* A soak run keeps its first frames only: its series covers the whole pass. */
        if (slot_has_frames(s) && s->stats_streamed) {
            double end = ((double)s->series_t0_ns - (double)t0) / 1e9 +
                         (double)s->e2e_series.n_used * s->e2e_series.width_s;
            d->x_end = end > d->x_end ? end : d->x_end;
        }
    }
    if (m != NULL && m->n > 0) {
        while (i0 + 1 < m->n && m->t_s[i0 + 1] - d->t0_s <= 0.0)
            i0++;
        i1 = i0;
        while (i1 < m->n && (i1 == i0 || m->t_s[i1 - 1] - d->t0_s < d->x_end))
            i1++;
    }
    size_t nw = i1 - i0;
    d->m_group = group_for(nw > 0 ? nw : 1);
    size_t m_pts = (nw + d->m_group - 1) / d->m_group;
    size_t n_ts = m != NULL && nw > 0 ? m->n_ts : 0;

    /* One block: per slot x, latency, memory (frame points) and the raw x of its frames;
     * the window's raw x, and per series its raw y and its x and y (sample points). */
    size_t need = EB_NUM_SLOTS * (3 * n_frames_pts + max_frames) + nw + n_ts * (nw + 2 * m_pts);
    d->block = malloc((need > 0 ? need : 1) * sizeof(double));
    if (d->block == NULL) {
        d->oom = 1;
        d->any_frames = 0;
        return;
    }
    double *p = d->block;
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *s = &r->slots[i];
        if (!slot_has_frames(s))
            continue;
        double *raw_x = p;
        p += max_frames;
        d->lat[i].x = p;
        d->mem[i].x = p; /* the same groups of frames: the same x */
        p += n_frames_pts;
        d->lat[i].y = p;
        p += n_frames_pts;
        d->mem[i].y = p;
        p += n_frames_pts;
        for (size_t j = 0; j < s->n_records; j++)
            raw_x[j] = (double)(s->records[j].t_start_ns - t0) / 1e9;
        size_t g = d->frame_group, k = 0;
        for (size_t j = 0; j < s->n_records; j += g, k++) {
            size_t end = j + g < s->n_records ? j + g : s->n_records;
            double sx = 0.0, sl = 0.0, mm = 0.0;
            for (size_t q = j; q < end; q++) {
                sx += raw_x[q];
                sl += (double)s->records[q].stage_ns[EB_STAGE_E2E] / 1e6;
                double mg = bytes_gb(s->records[q].mem_bytes);
                mm = mg > mm ? mg : mm;
            }
            d->lat[i].x[k] = sx / (double)(end - j);
            d->lat[i].y[k] = sl / (double)(end - j);
            d->mem[i].y[k] = mm;
        }
        d->lat[i].n = d->mem[i].n = k;
        if (s->stats_streamed)
            d->lat[i].n = d->mem[i].n = series_points(s, t0, &d->lat[i], &d->mem[i]);
    }
    if (n_ts > 0) {
        double *wx = p;
        p += nw;
        for (size_t j = 0; j < nw; j++)
            wx[j] = m->t_s[i0 + j] - d->t0_s;
        /* A sample outside the phase stands for the value at the phase's edge. */
        int cut_lo = nw >= 2 && wx[0] < 0.0, cut_hi = nw >= 2 && wx[nw - 1] > d->x_end;
        double f_lo = cut_lo ? (0.0 - wx[0]) / (wx[1] - wx[0]) : 0.0;
        double f_hi = cut_hi ? (d->x_end - wx[nw - 2]) / (wx[nw - 1] - wx[nw - 2]) : 0.0;
        double *raws[EB_REPORT_TS_MAX];
        for (size_t k = 0; k < n_ts; k++) {
            const double *v = m->ts[k].v + i0;
            double *raw = raws[k] = p;
            p += nw;
            memcpy(raw, v, nw * sizeof(*raw));
            if (nw == 1 && (wx[0] < 0.0 || wx[0] > d->x_end))
                raw[0] = NAN; /* the only sample is outside: nothing during the phase */
            if (cut_lo)       /* NaN when either neighbour is */
                raw[0] = v[0] + f_lo * (v[1] - v[0]);
            if (cut_hi)
                raw[nw - 1] = v[nw - 2] + f_hi * (v[nw - 1] - v[nw - 2]);
            d->ts[k].x = p;
            p += m_pts;
            d->ts[k].y = p;
            p += m_pts;
        }
        if (cut_lo)
            wx[0] = 0.0;
        if (cut_hi)
            wx[nw - 1] = d->x_end;
        for (size_t k = 0; k < n_ts; k++)
            /* Memory keeps each group's peak (the limit is about peaks); the rest the mean. */
            d->ts[k].n = reduce(wx, raws[k], nw, d->m_group, m->ts[k].kind == EB_REPORT_TS_MEM_GB,
                                d->ts[k].x, d->ts[k].y);
    }
}

static int ts_has_data(const struct tseries *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (isfinite(t->y[i]))
            return 1;
    return 0;
}

static const char *const kind_what[EB_REPORT_TS_KIND_COUNT] = {"temperature", "GPU clock", "power",
                                                               "memory"};
static const char *const kind_axis[EB_REPORT_TS_KIND_COUNT] = {
    "temperature (°C)", "GPU clock (MHz)", "power (W)", "memory (GB)"};
static const char *const kind_id[EB_REPORT_TS_KIND_COUNT] = {"temperature", "clock", "power",
                                                             "memory"};

/* "each point: the mean of N frames" when frames were grouped. */
static void group_note(char *buf, size_t n, const struct run_data *d, const char *what)
{
    if (d->frame_group > 1)
        snprintf(buf, n, "each point: the %s of %zu consecutive frames", what, d->frame_group);
    else
        snprintf(buf, n, "every measured frame");
}

/* Latency over time, with the series of `kind` on the second axis (kind < 0: none). */
static void chart_latency_time(const struct eb_run_result *r, const struct eb_report_metrics *m,
                               const struct run_data *d, int kind, FILE *fp)
{
    struct eb_svg_series s[2 * EB_NUM_SLOTS + EB_REPORT_TS_MAX];
    char names[EB_NUM_SLOTS][48];
    size_t n = 0;
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        if (d->lat[i].n == 0)
            continue;
        snprintf(names[i], sizeof(names[i]), "%s end-to-end latency", r->slots[i].name);
        s[n++] = (struct eb_svg_series){.name = names[i],
                                        .x = d->lat[i].x,
                                        .y = d->lat[i].y,
                                        .n = d->lat[i].n,
                                        .color = eb_svg_palette((size_t)i)};
    }
    size_t right = 0;
    for (size_t k = 0; kind >= 0 && m != NULL && k < m->n_ts; k++) {
        if ((int)m->ts[k].kind != kind || !ts_has_data(&d->ts[k]))
            continue;
        s[n++] = (struct eb_svg_series){.name = m->ts[k].name,
                                        .x = d->ts[k].x,
                                        .y = d->ts[k].y,
                                        .n = d->ts[k].n,
                                        .right_axis = 1,
                                        .dashed = 1,
                                        .color = eb_svg_palette(2 + right)};
        right++;
    }
    /* The throttling onset (report_throttle.c): a vertical line at its time, from 0 to the
     * slot's highest latency point. */
    char onset_names[EB_NUM_SLOTS][160];
    double onset_x[EB_NUM_SLOTS][2], onset_y[EB_NUM_SLOTS][2];
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_throttle_onset *t = &r->slots[i].throttle;
        if (d->lat[i].n == 0 || !t->found)
            continue;
        double top = 0;
        for (size_t j = 0; j < d->lat[i].n; j++)
            top = d->lat[i].y[j] > top ? d->lat[i].y[j] : top;
        const double x = ((double)r->slots[i].series_t0_ns / 1e9 - d->t0_s) + t->t_s;
        onset_x[i][0] = onset_x[i][1] = x;
        onset_y[i][0] = 0;
        onset_y[i][1] = top;
        snprintf(onset_names[i], sizeof(onset_names[i]),
                 "%s throttling onset at %.0f s: %.2f -> %.2f ms%s", r->slots[i].name, t->t_s,
                 t->latency_before_ms, t->latency_after_ms,
                 t->coincides ? " (with a clock/temperature change)" : "");
        s[n++] = (struct eb_svg_series){.name = onset_names[i],
                                        .x = onset_x[i],
                                        .y = onset_y[i],
                                        .n = 2,
                                        .dashed = 1,
                                        .color = eb_svg_palette(6 + (size_t)i)};
    }
    char id[48], title[96], sub[256], g[96];
    snprintf(id, sizeof(id), "chart-latency-%s", kind >= 0 ? kind_id[kind] : "time");
    snprintf(title, sizeof(title), "Latency over time%s%s", kind >= 0 ? " and " : "",
             kind >= 0 ? kind_what[kind] : "");
    group_note(g, sizeof(g), d, "mean");
    if (right > 0 && d->m_group > 1)
        snprintf(sub, sizeof(sub), "Latency: %s; sampler: the mean of %zu samples per point", g,
                 d->m_group);
    else
        snprintf(sub, sizeof(sub), "Latency: %s%s", g, right > 0 ? "; sampler: every sample" : "");
    struct eb_svg_chart c = {.id = id,
                             .title = title,
                             .subtitle = sub,
                             .x_label = "time since the first measured frame (s)",
                             .y_label = "end-to-end latency (ms)",
                             .y2_label = kind >= 0 ? kind_axis[kind] : NULL,
                             .empty_note = "no measured frames",
                             .y_include_zero = 1};
    figure_begin(fp);
    chart_done(fp, eb_svg_line_chart(fp, &c, s, n));
    figure_end(fp);
}

static void chart_memory_time(const struct eb_run_result *r, const struct eb_report_metrics *m,
                              const struct run_data *d, FILE *fp)
{
    struct eb_svg_series s[EB_NUM_SLOTS + EB_REPORT_TS_MAX];
    char names[EB_NUM_SLOTS][48];
    size_t n = 0;
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        if (d->mem[i].n == 0)
            continue;
        snprintf(names[i], sizeof(names[i]), "%s: monitored figure", r->slots[i].name);
        s[n++] = (struct eb_svg_series){.name = names[i],
                                        .x = d->mem[i].x,
                                        .y = d->mem[i].y,
                                        .n = d->mem[i].n,
                                        .mark = EB_SVG_MARK_STEP,
                                        .color = eb_svg_palette((size_t)i)};
    }
    for (size_t k = 0; m != NULL && k < m->n_ts; k++)
        if (m->ts[k].kind == EB_REPORT_TS_MEM_GB && ts_has_data(&d->ts[k]))
            s[n++] = (struct eb_svg_series){.name = m->ts[k].name,
                                            .x = d->ts[k].x,
                                            .y = d->ts[k].y,
                                            .n = d->ts[k].n,
                                            .dashed = 1,
                                            .color = eb_svg_palette(2 + k)};
    char label[48], sub[256], g[96];
    snprintf(label, sizeof(label), "limit %.2f GB (%s)", r->mem.limit_gb,
             eb_limit_type_name(r->mem.limit_type));
    struct eb_svg_ref limit = {.value = r->mem.limit_gb > 0 ? r->mem.limit_gb : NAN,
                               .label = label};
    group_note(g, sizeof(g), d, "peak");
    snprintf(sub, sizeof(sub), "Monitored figure: %.96s; %s",
             r->mem.monitored[0] != '\0' ? r->mem.monitored : "not known", g);
    struct eb_svg_chart c = {.id = "chart-memory",
                             .title = "Memory over time",
                             .subtitle = sub,
                             .x_label = "time since the first measured frame (s)",
                             .y_label = "memory (GB)",
                             .empty_note = "no measured frames",
                             .y_include_zero = 1,
                             .refs = &limit,
                             .n_refs = 1};
    figure_begin(fp);
    chart_done(fp, eb_svg_line_chart(fp, &c, s, n));
    figure_end(fp);
}

/* One stacked bar per slot that ran: the p50 of each stage. */
static void chart_stage_stack(const struct eb_run_result *r, FILE *fp)
{
    const char *cats[EB_NUM_SLOTS];
    double vals[4][EB_NUM_SLOTS];
    size_t nc = 0;
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *s = &r->slots[i];
        if (s->status != EB_SLOT_OK || s->stages[EB_STAGE_E2E].count == 0)
            continue;
        cats[nc] = s->name;
        for (int st = 0; st < 4; st++)
            vals[st][nc] = s->stages[st].p50;
        nc++;
    }
    struct eb_svg_bar_series bs[4];
    for (int st = 0; st < 4; st++)
        bs[st] = (struct eb_svg_bar_series){.name = eb_stage_name((enum eb_stage)st),
                                            .values = vals[st]};
    struct eb_svg_bars bars = {
        .categories = cats, .n_categories = nc, .series = bs, .n_series = 4, .stacked = 1};
    struct eb_svg_chart c = {
        .id = "chart-stages",
        .title = "Stage breakdown per slot (p50)",
        .subtitle = "stacked medians: the source (read) under the pipeline (preprocess, inference, "
                    "postprocess); the end-to-end p50 is in the tables",
        .x_label = "slot",
        .y_label = "p50 latency (ms)",
        .empty_note = "no slot measured frames",
        .width = 420};
    figure_begin(fp);
    chart_done(fp, eb_svg_bar_chart(fp, &c, &bars));
    figure_end(fp);
}

static void write_run_charts(const struct eb_run_result *r, const struct eb_report_metrics *m,
                             FILE *fp)
{
    struct run_data d;
    run_data_build(r, m, &d);
    fputs("<h2 id=\"charts\">Charts over the run</h2>\n", fp);
    if (d.oom)
        fputs("<p class=\"note\">The charts over time are empty: out of memory.</p>\n", fp);

    /* What the sampler recorded during the measured phase, per kind. */
    int have[EB_REPORT_TS_KIND_COUNT] = {0};
    for (size_t k = 0; m != NULL && d.any_frames && k < m->n_ts; k++)
        if (ts_has_data(&d.ts[k]))
            have[m->ts[k].kind] = 1;
    fputs("<p class=\"note\">", fp);
    if (m == NULL || m->n == 0) {
        fputs("No sampler series", fp);
        if (m != NULL && m->note[0] != '\0') {
            fputs(": ", fp);
            put(fp, m->note);
        }
        fputs(". ", fp);
    }
    int first = 1;
    for (int k = 0; k < EB_REPORT_TS_MEM_GB; k++) {
        if (have[k])
            continue;
        fprintf(fp, "%s%s", first ? "" : ", ", kind_what[k]);
        first = 0;
    }
    if (!first)
        fputs(": not measured during the measured frames (neither thermal zones, NVML nor "
              "tegrastats reported it).",
              fp);
    if (m != NULL && m->truncated)
        fprintf(fp, " Only the first %d sampler samples are shown.", EB_REPORT_METRICS_MAX_LEN);
    fputs("</p>\n<div class=\"charts\">\n", fp);
    chart_stage_stack(r, fp);
    int drawn = 0;
    for (int k = 0; k < EB_REPORT_TS_MEM_GB; k++) {
        if (!have[k])
            continue;
        chart_latency_time(r, m, &d, k, fp);
        drawn++;
    }
    if (drawn == 0)
        chart_latency_time(r, m, &d, -1, fp);
    chart_memory_time(r, m, &d, fp);
    fputs("</div>\n", fp);
    free(d.block);
}

/* ------------------------------------------------------------------------------ slots */

/* Histogram, CDF and stage bars of one slot that ran. */
static void write_slot_charts(const struct eb_slot_result *s, FILE *fp)
{
    size_t n = s->records != NULL ? s->n_records : 0;
    double *e2e = malloc((n > 0 ? 2 * n : 1) * sizeof(double));
    double *infer = e2e != NULL ? e2e + n : NULL;
    if (e2e == NULL)
        n = 0;
    for (size_t i = 0; i < n; i++) {
        e2e[i] = (double)s->records[i].stage_ns[EB_STAGE_E2E] / 1e6;
        infer[i] = (double)s->records[i].stage_ns[EB_STAGE_INFER] / 1e6;
    }
    const struct eb_stat_summary *st = &s->stages[EB_STAGE_E2E];
    char id[48], title[96], l50[48], l99[48], sub[96];
    fputs("<div class=\"charts\">\n", fp);

    snprintf(l50, sizeof(l50), "p50 %.3f ms", st->p50);
    snprintf(l99, sizeof(l99), "p99 %.3f ms", st->p99);
    struct eb_svg_ref refs[2] = {
        {.vertical = 1, .value = st->count > 0 ? st->p50 : NAN, .label = l50, .color = "#333"},
        {.vertical = 1, .value = st->count > 0 ? st->p99 : NAN, .label = l99},
    };
    snprintf(id, sizeof(id), "chart-%s-hist", s->name);
    snprintf(title, sizeof(title), "%s: end-to-end latency histogram", s->name);
    snprintf(sub, sizeof(sub), "%zu measured frames", n);
    struct eb_svg_chart c = {.id = id,
                             .title = title,
                             .subtitle = sub,
                             .x_label = "end-to-end latency (ms)",
                             .y_label = "frames",
                             .empty_note = e2e == NULL ? "out of memory" : "no measured frames",
                             .refs = refs,
                             .n_refs = 2};
    figure_begin(fp);
    /* Rice's rule, 2 n^(1/3) bins: 6 for 30 frames, 20 for 1000, at most HIST_BINS. */
    int bins = (int)ceil(2.0 * cbrt((double)n));
    bins = bins < 5 ? 5 : bins > HIST_BINS ? HIST_BINS : bins;
    chart_done(fp, eb_svg_histogram(fp, &c, e2e, n, bins, NULL));
    figure_end(fp);

    struct eb_svg_series cdf[2] = {
        {.name = "end-to-end", .y = e2e, .n = n},
        {.name = "inference", .y = infer, .n = n, .dashed = 1},
    };
    snprintf(id, sizeof(id), "chart-%s-cdf", s->name);
    snprintf(title, sizeof(title), "%s: latency CDF", s->name);
    c = (struct eb_svg_chart){.id = id,
                              .title = title,
                              .subtitle = "share of measured frames at or under each latency",
                              .x_label = "latency (ms)",
                              .y_label = "frames (%)",
                              .empty_note = e2e == NULL ? "out of memory" : "no measured frames"};
    figure_begin(fp);
    chart_done(fp, eb_svg_cdf(fp, &c, cdf, 2));
    figure_end(fp);

    const char *cats[4];
    double p50[4], p90[4], p99[4];
    for (int k = 0; k < 4; k++) {
        cats[k] = eb_stage_name((enum eb_stage)k);
        int ran = s->stages[k].count > 0;
        p50[k] = ran ? s->stages[k].p50 : NAN;
        p90[k] = ran ? s->stages[k].p90 : NAN;
        p99[k] = ran ? s->stages[k].p99 : NAN;
    }
    struct eb_svg_bar_series bs[3] = {{.name = "p50", .values = p50},
                                      {.name = "p90", .values = p90},
                                      {.name = "p99", .values = p99}};
    struct eb_svg_bars bars = {.categories = cats, .n_categories = 4, .series = bs, .n_series = 3};
    snprintf(id, sizeof(id), "chart-%s-stages", s->name);
    snprintf(title, sizeof(title), "%s: stage breakdown", s->name);
    c = (struct eb_svg_chart){.id = id,
                              .title = title,
                              .subtitle = "read, preprocess, inference, postprocess",
                              .x_label = "stage",
                              .y_label = "latency (ms)",
                              .empty_note = "no measured frames"};
    figure_begin(fp);
    chart_done(fp, eb_svg_bar_chart(fp, &c, &bars));
    figure_end(fp);
    fputs("</div>\n", fp);
    free(e2e);
}

/* "Accuracy" (--data): the COCO metrics of the measured frames and one row per class. */
static void write_accuracy(const struct eb_fact_list *l, const struct eb_slot_result *s, FILE *fp)
{
    const struct eb_accuracy_result *a = s->accuracy;
    char b[2][32];
    if (a == NULL)
        return;
    fputs("<h3>Accuracy</h3>\n<p>COCO bbox metrics (pycocotools' definitions, as edgebench val) "
          "of the measured frames.</p>\n",
          fp);
    write_facts(l, EB_FACT_SECTION_ACCURACY, s->index, fp);
    fputs("<table>\n<thead><tr><th>Class</th><th>Boxes</th><th>Detections</th><th>AP50-95</th>"
          "<th>AP50</th></tr></thead>\n<tbody>\n",
          fp);
    for (size_t i = 0; i < a->n_per_class; i++) {
        const struct eb_accuracy_class *c = &a->per_class[i];
        if (c->ap < 0)
            continue;
        fputs("<tr><td>", fp);
        put(fp, c->name);
        fprintf(fp, "</td><td>%llu</td><td>%llu</td><td>%s</td><td>%s</td></tr>\n",
                (unsigned long long)c->gt, (unsigned long long)c->dets,
                eb_report__fmt_ap(b[0], 32, c->ap), eb_report__fmt_ap(b[1], 32, c->ap50));
    }
    fputs("</tbody>\n</table>\n", fp);
}

static void write_slot(const struct eb_fact_list *l, const struct eb_slot_result *s, FILE *fp)
{
    fprintf(fp, "<section id=\"slot-%d\">\n<h2>Slot %d: %s</h2>\n<p>Status: ", s->index, s->index,
            s->name);
    status_badge(fp, s->status);
    if (s->status != EB_SLOT_OK) {
        fputs(" — reason: ", fp);
        put(fp, slot_reason(s));
        if (s->status == EB_SLOT_FAILED && s->error != EB_OK)
            fprintf(fp, " (error: %s)", eb_status_name(s->error));
    }
    fputs("</p>\n", fp);
    write_verdict(&s->validity, NULL, fp);
    write_facts(l, EB_FACT_SECTION_SLOT, s->index, fp);
    if (s->status != EB_SLOT_OK) {
        fputs("<p class=\"note\">No latency charts: the slot did not run.</p>\n</section>\n", fp);
        return;
    }
    fputs("<h3>Latency (ms)</h3>\n", fp);
    latency_header(fp, "Stage");
    for (int st = 0; st < EB_STAGE_COUNT; st++)
        latency_row(fp, eb_stage_name((enum eb_stage)st), &s->stages[st]);
    if (s->has_solo) {
        latency_row(fp, "solo end_to_end", &s->solo_e2e);
        latency_row(fp, "solo inference", &s->solo_infer);
    }
    latency_end(fp);
    write_accuracy(l, s, fp);
    if (eb_report_facts_next(l, 0, EB_FACT_SECTION_PROFILE, s->index) < l->n) {
        fputs("<h3>Per-operator profile</h3>\n", fp);
        write_facts(l, EB_FACT_SECTION_PROFILE, s->index, fp);
    }
    write_slot_charts(s, fp);
    fputs("</section>\n", fp);
}

/* ------------------------------------------------------------------------- run-level */

static void write_pair(const struct eb_fact_list *l, const struct eb_pair_result *p, FILE *fp)
{
    if (!p->valid)
        return;
    fputs("<h2 id=\"pair\">Dual-stream pair</h2>\n", fp);
    write_facts(l, EB_FACT_SECTION_PAIR, -1, fp);
    latency_header(fp, "Pair");
    latency_row(fp, "latency", &p->latency);
    latency_end(fp);
}

static void write_system(const struct eb_fact_list *l, FILE *fp)
{
    fputs("<h2 id=\"system\">System metrics</h2>\n", fp);
    write_facts(l, EB_FACT_SECTION_SYSTEM, -1, fp);
}

static void write_warnings(const struct eb_fact_list *l, FILE *fp)
{
    size_t i = eb_report_facts_next(l, 0, EB_FACT_SECTION_WARNINGS, -1);
    if (i == l->n)
        return;
    fputs("<h2 id=\"warnings\">Warnings</h2>\n<ul>\n", fp);
    for (; i < l->n; i = eb_report_facts_next(l, i + 1, EB_FACT_SECTION_WARNINGS, -1)) {
        fputs("<li>", fp);
        put(fp, l->items[i].value);
        fputs("</li>\n", fp);
    }
    fputs("</ul>\n", fp);
}

void eb_report_write_html(const struct eb_run_result *r, const struct eb_report_metrics *m,
                          FILE *fp)
{
    struct eb_fact_list facts;
    eb_report_facts_build(r, &facts);
    write_head(r, fp);
    write_title(r, &facts, fp);
    if (facts.oom)
        fputs("<p class=\"warn\"><b>Out of memory:</b> some facts are missing from this "
              "report.</p>\n",
              fp);
    write_memory(r, &facts, fp);
    write_summary(r, fp);
    write_run_charts(r, m, fp);
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        write_slot(&facts, &r->slots[i], fp);
    write_pair(&facts, &r->pair, fp);
    write_system(&facts, fp);
    write_warnings(&facts, fp);
    eb_report_facts_fini(&facts);
    fputs("<p class=\"note\">Every figure here comes from the same result as report.json and "
          "report.md (per-operator tables, detections per class and the configuration are "
          "there); the sampler's series from metrics.jsonl.",
          fp);
    if (r->output_dir[0] != '\0') {
        fputs(" Output folder: <code>", fp);
        put(fp, r->output_dir);
        fputs("</code>.", fp);
    }
    if (r->history_run_id > 0) {
        fprintf(fp, " History: run %lld in <code>", (long long)r->history_run_id);
        put(fp, r->history_db);
        fputs("</code>.", fp);
    }
    fputs("</p>\n</body>\n</html>\n", fp);
}

/* -------------------------------------------------------------------------------- file */

struct html_ctx {
    const struct eb_run_result *r;
    const struct eb_report_metrics *m;
};

enum eb_status eb_report_metrics_load_dir(const char *dir, int64_t wall_minus_mono_ns,
                                          struct eb_report_metrics *m, struct eb_diag *diag)
{
    char path[4352];
    const char *d = dir != NULL && dir[0] ? dir : ".";
    /* The rotated files first, oldest (highest number) to newest, then the current one. */
    for (int k = EB_SAMPLER_METRICS_KEEP; k >= 1; k--) {
        int n = snprintf(path, sizeof(path), "%s/metrics.jsonl.%d", d, k);
        if (n <= 0 || (size_t)n >= sizeof(path) || access(path, F_OK) != 0)
            continue;
        enum eb_status st = eb_report_metrics_load(path, wall_minus_mono_ns, m, diag);
        if (st != EB_OK)
            return st;
    }
    int n = snprintf(path, sizeof(path), "%s/metrics.jsonl", d);
    if (n <= 0 || (size_t)n >= sizeof(path))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "cannot read %s/metrics.jsonl: path too long",
                            d);
    return eb_report_metrics_load(path, wall_minus_mono_ns, m, diag);
}

static int html_body(FILE *fp, const void *ctx)
{
    const struct html_ctx *h = ctx;
    eb_report_write_html(h->r, h->m, fp);
    return ferror(fp) ? -1 : 0;
}

enum eb_status eb_report_write_html_file(const struct eb_run_result *r, const char *dir,
                                         struct eb_diag *diag)
{
    struct eb_report_metrics m;
    eb_report_metrics_init(&m);
    /* The clocks' difference now stands for the run's: both tick at the same rate. */
    int64_t off = (int64_t)eb_clock_wall_ns() - (int64_t)eb_clock_ns();
    struct eb_diag md = {0};
    if (eb_report_metrics_load_dir(dir, off, &m, &md) != EB_OK)
        snprintf(m.note, sizeof(m.note), "%.250s", md.msg);
    struct html_ctx ctx = {.r = r, .m = &m};
    enum eb_status st = eb_report__write_atomic(dir, "report.html", html_body, &ctx, diag);
    eb_report_metrics_fini(&m);
    return st;
}
