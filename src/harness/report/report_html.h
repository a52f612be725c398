/*
 * report.html: one self-contained page for people — inline CSS, SVG charts drawn by
 * svg_chart.c, no script, no font or anything else fetched — rendered from the same struct
 * eb_run_result as report.json and report.md, plus the sampler's time series, which the
 * sampler streams to metrics.jsonl rather than keeping in memory and which are read back from
 * there (eb_report_metrics_load).
 *
 *     struct eb_report_metrics m;
 *     eb_report_metrics_init(&m);
 *     if (eb_report_metrics_load(path, wall_minus_mono_ns, &m, &diag) != EB_OK) ...;
 *     eb_report_write_html(result, &m, fp);
 *     eb_report_metrics_fini(&m);
 *
 * The page: title and run facts, the Memory Safety Summary and a per-slot summary table (as at
 * the head of report.md), charts over the run (stage breakdown per slot, latency over time with
 * temperature / GPU clock / power on a second axis, memory over time with the limit line), then
 * per slot its facts, latency table, latency histogram, CDF and stage bars, then the dual pair,
 * system metrics and warnings. A skipped or failed slot keeps its section with its status and
 * reason; charts without data say so.
 */
#ifndef EB_REPORT_HTML_H
#define EB_REPORT_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "eb/diag.h"
#include "harness/results/result.h"

/** What a sampler time series measures (and its unit). */
enum eb_report_ts_kind {
    EB_REPORT_TS_TEMP_C = 0, /* temperature, degC */
    EB_REPORT_TS_CLOCK_MHZ,  /* GPU clock, MHz */
    EB_REPORT_TS_POWER_W,    /* power, W */
    EB_REPORT_TS_MEM_GB,     /* memory, GB of 10^9 bytes (as the reports' other figures) */
    EB_REPORT_TS_KIND_COUNT
};

#define EB_REPORT_TS_MAX          24     /* series kept; later ones are dropped */
#define EB_REPORT_METRICS_MAX_LEN 200000 /* samples kept; the rest of a longer file is ignored */

/** One series: a value per sample of the owning struct eb_report_metrics. */
struct eb_report_ts {
    enum eb_report_ts_kind kind;
    char name[64]; /* legend entry, e.g. "GPU 0 (NVML)", "thermal zones (hottest)" */
    double *v;     /* n values of the owner; NaN where a sample lacks this series */
};

/** The sampler's samples as time series. Owns its arrays (eb_report_metrics_fini). */
struct eb_report_metrics {
    size_t n;    /* samples */
    size_t cap;  /* allocated entries of t_s and of every series' v */
    double *t_s; /* sample times on the frame records' clock: CLOCK_MONOTONIC, in seconds */
    size_t n_ts;
    struct eb_report_ts ts[EB_REPORT_TS_MAX];
    uint64_t bad_lines; /* lines of metrics.jsonl that did not parse or had no time */
    int truncated;      /* more than EB_REPORT_METRICS_MAX_LEN samples: the rest ignored */
    char note[256];     /* why there are no samples (e.g. the file could not be read), or "" */
};

/** Empties `m` (no allocation). */
void eb_report_metrics_init(struct eb_report_metrics *m);
/** Frees what `m` owns and empties it; NULL is a no-op. */
void eb_report_metrics_fini(struct eb_report_metrics *m);

/**
 * Appends a sample at `t_s` (CLOCK_MONOTONIC seconds) with every series NaN. EB_ERR_NOMEM
 * (nothing appended), EB_ERR_LIMIT when EB_REPORT_METRICS_MAX_LEN samples are held.
 */
EB_NODISCARD enum eb_status eb_report_metrics_append(struct eb_report_metrics *m, double t_s);

/**
 * Sets the last sample's value of the series (`kind`, `name`; created on first use, NaN for
 * earlier samples; `name` is copied, cut at 63 bytes). Without a sample, or with
 * EB_REPORT_TS_MAX series already held, the value is dropped (EB_OK). EB_ERR_NOMEM when a new
 * series cannot be allocated.
 */
EB_NODISCARD enum eb_status eb_report_metrics_set(struct eb_report_metrics *m,
                                                  enum eb_report_ts_kind kind, const char *name,
                                                  double value);

/**
 * Reads metrics.jsonl (sampler.h describes its lines) into `m` (appended to what it holds):
 * the hottest thermal zone, and per NVML GPU its temperature, SM clock, power and memory used,
 * and tegrastats' GR3D clock and board input power (and its hottest sensor where no thermal
 * zone was read). The line's "t_s" is relative to the sampler's start; the first line's "wall"
 * (UTC, ms) anchors it on CLOCK_MONOTONIC: monotonic = wall - `wall_minus_mono_ns` (the two
 * clocks' difference, taken by the caller while the run's process is alive). Lines that do not
 * parse, or lack "t_s", are counted in bad_lines and skipped (blank lines are skipped
 * silently). EB_ERR_IO when the file cannot be
 * opened (diag names it); EB_ERR_NOMEM (what was read so far stays in `m`).
 */
EB_NODISCARD enum eb_status eb_report_metrics_load(const char *path, int64_t wall_minus_mono_ns,
                                                   struct eb_report_metrics *m,
                                                   struct eb_diag *diag);

/**
 * Writes the whole report.html document to `fp`. `m` may be NULL (no sampler series: the
 * charts say "not measured"). Allocation failures leave a note in place of a chart; the
 * document stays complete and valid. Write errors are left in ferror(fp).
 */
/**
 * Loads a run folder's samples in time order: the rotated metrics.jsonl.<k> (soak runs,
 * --metrics_max_mb; k from EB_SAMPLER_METRICS_KEEP down to 1, those that exist), then
 * metrics.jsonl, each through eb_report_metrics_load. `dir` NULL or "" = ".".
 */
EB_NODISCARD enum eb_status eb_report_metrics_load_dir(const char *dir, int64_t wall_minus_mono_ns,
                                                       struct eb_report_metrics *m,
                                                       struct eb_diag *diag);

void eb_report_write_html(const struct eb_run_result *r, const struct eb_report_metrics *m,
                          FILE *fp);

/**
 * Writes `dir`/report.html through eb_report__write_atomic, with the series of
 * `dir`/metrics.jsonl when it can be read (otherwise the page says why they are absent).
 * EB_ERR_IO naming the file when it cannot be written.
 */
EB_NODISCARD enum eb_status eb_report_write_html_file(const struct eb_run_result *r,
                                                      const char *dir, struct eb_diag *diag);

#endif
