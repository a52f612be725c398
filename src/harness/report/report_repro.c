/*
 * The reproducibility files of a run folder, next to env.json (docs/report-schema.md):
 *   inputs.json     what went in: the effective configuration (the same echo as report.json's
 *                   "config"), each slot's model file (path, size, SHA-256, as report.json has
 *                   them) and an image_dir source's file list hash;
 *   assumptions.md  what the numbers rest on: the statistics' methods, the validity rules and
 *                   this run's thresholds, the FLOP and byte conventions, the peak table behind
 *                   MFU with its clocks, and what this run did not measure.
 * Both render from the finished struct eb_run_result and the code's own tables and constants
 * (validity.h criteria table, peaks.h, stats.h, engine.h): no figure is written here by hand.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eb/engine.h"
#include "harness/metrics/peaks.h"
#include "harness/metrics/stats.h"
#include "harness/report/report.h"

#define EB_INPUTS_SCHEMA_VERSION 1

/* The largest sample count searched for the smallest one an interval needs. */
#define CI_MIN_N_SEARCH 100000u

/* ---------------------------------------------------------------- inputs.json */

static void write_model(struct eb_json_writer *w, const struct eb_slot_result *s)
{
    eb_json_key(w, "model");
    if (s->model_path[0] == '\0' && s->model_sha256[0] == '\0') {
        eb_json_null(w);
        return;
    }
    eb_json_obj_begin(w);
    eb_json_kstr(w, "path", s->model_path[0] != '\0' ? s->model_path : NULL);
    eb_json_key(w, "size_bytes");
    if (s->model_size > 0)
        eb_json_uint(w, s->model_size);
    else
        eb_json_null(w);
    eb_json_kstr(w, "sha256", s->model_sha256[0] != '\0' ? s->model_sha256 : NULL);
    eb_json_obj_end(w);
}

static int inputs_body(FILE *fp, const void *ctx)
{
    const struct eb_run_result *r = ctx;
    struct eb_json_writer w;
    eb_json_writer_init_file(&w, fp, 1);
    eb_json_obj_begin(&w);
    eb_json_kint(&w, "schema_version", EB_INPUTS_SCHEMA_VERSION);
    eb_json_kstr(&w, "edgebench_version", r->version);
    eb_json_kstr(&w, "started_at", r->started_at[0] != '\0' ? r->started_at : NULL);
    eb_json_kstr(&w, "command_line", r->command_line[0] != '\0' ? r->command_line : NULL);
    eb_json_key(&w, "config");
    if (r->config != NULL && r->write_config != NULL)
        r->write_config(r->config, &w);
    else
        eb_json_null(&w);
    eb_json_key(&w, "slots");
    eb_json_arr_begin(&w);
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *s = &r->slots[i];
        eb_json_obj_begin(&w);
        eb_json_kstr(&w, "name", s->name);
        eb_json_kstr(&w, "status", eb_slot_status_name(s->status));
        write_model(&w, s);
        eb_json_kstr(&w, "source", s->source[0] != '\0' ? s->source : NULL);
        eb_report__write_source_files(&w, "dataset", s);
        eb_json_obj_end(&w);
    }
    eb_json_arr_end(&w);
    eb_json_obj_end(&w);
    if (eb_json_writer_error(&w))
        return -1;
    return fputc('\n', fp) == EOF ? -1 : 0;
}

/* ---------------------------------------------------------------- assumptions.md */

/*
 * What a run may leave unmeasured, as data: each rule says why its figure is absent from this
 * run (into buf) and returns buf, or returns NULL when it was measured. Run-level rules get
 * s == NULL; per-slot rules are asked for each slot that ran.
 */
typedef const char *(*unmeasured_fn)(const struct eb_run_result *r, const struct eb_slot_result *s,
                                     char *buf, size_t n);

struct unmeasured_rule {
    const char *what;
    int per_slot;
    unmeasured_fn why;
};

static const char *no_energy(const struct eb_run_result *r, const struct eb_slot_result *s,
                             char *buf, size_t n)
{
    (void)s;
    if (isfinite(r->energy_per_frame_mj))
        return NULL;
    if (!r->sys.nvml_used && !r->sys.tegrastats_used)
        snprintf(buf, n, "no power sensor: neither NVML nor tegrastats was used");
    else
        snprintf(buf, n, "the power sensors gave no energy over the measured frames");
    return buf;
}

static const char *no_throttle_watch(const struct eb_run_result *r, const struct eb_slot_result *s,
                                     char *buf, size_t n)
{
    (void)s;
    if (r->sys.nvml_used)
        return NULL;
    snprintf(buf, n, "NVML was not used: the validity rule on GPU throttling was not judged");
    return buf;
}

static const char *no_accuracy(const struct eb_run_result *r, const struct eb_slot_result *s,
                               char *buf, size_t n)
{
    (void)r;
    if (s->accuracy != NULL)
        return NULL;
    snprintf(buf, n, "no --data dataset");
    return buf;
}

static const char *no_profile(const struct eb_run_result *r, const struct eb_slot_result *s,
                              char *buf, size_t n)
{
    (void)r;
    if (s->profile.available)
        return NULL;
    snprintf(buf, n, "%s",
             s->profile_note[0] != '\0' ? s->profile_note
             : s->profile_requested     ? "the backend gave no profile"
                                        : "no --profile");
    return buf;
}

static const char *no_mfu(const struct eb_run_result *r, const struct eb_slot_result *s, char *buf,
                          size_t n)
{
    (void)r;
    if (!s->profile.available) {
        snprintf(buf, n, "no operator profile (MFU needs --profile)");
        return buf;
    }
    if (isfinite(s->profile.mfu_pct))
        return NULL;
    snprintf(buf, n, "%s", s->profile.peak_note[0] != '\0' ? s->profile.peak_note : "no peak");
    return buf;
}

static const char *ci_missing(const struct eb_slot_result *s, const struct eb_stat_ci *ci, double q,
                              char *buf, size_t n)
{
    if (ci->available)
        return NULL;
    uint64_t need = eb_stat_ci_min_n(q, EB_STAT_CI_LEVEL, CI_MIN_N_SEARCH);
    snprintf(buf, n, "%llu measured frames, fewer than the %llu a %g%% interval needs",
             (unsigned long long)s->stages[EB_STAGE_E2E].count, (unsigned long long)need,
             100.0 * EB_STAT_CI_LEVEL);
    return buf;
}

static const char *no_p50_ci(const struct eb_run_result *r, const struct eb_slot_result *s,
                             char *buf, size_t n)
{
    (void)r;
    return ci_missing(s, &s->stages[EB_STAGE_E2E].p50_ci, 0.50, buf, n);
}

static const char *no_p99_ci(const struct eb_run_result *r, const struct eb_slot_result *s,
                             char *buf, size_t n)
{
    (void)r;
    return ci_missing(s, &s->stages[EB_STAGE_E2E].p99_ci, 0.99, buf, n);
}

static const char *no_drift(const struct eb_run_result *r, const struct eb_slot_result *s,
                            char *buf, size_t n)
{
    (void)r;
    if (s->steady.blocks > 0)
        return NULL;
    snprintf(buf, n, "%llu measured frames, fewer than the %d it needs",
             (unsigned long long)s->frames_measured, EB_STAT_DRIFT_MIN_FRAMES);
    return buf;
}

static const char *no_others_cpu(const struct eb_run_result *r, const struct eb_slot_result *s,
                                 char *buf, size_t n)
{
    (void)r;
    if (isfinite(s->others_cpu_pct))
        return NULL;
    snprintf(buf, n, "the CPU time of other processes could not be read: not judged");
    return buf;
}

static const char *no_fp16_drift(const struct eb_run_result *r, const struct eb_slot_result *s,
                                 char *buf, size_t n)
{
    (void)r;
    if (s->drift_measured || strcmp(s->compute_precision, "fp16") != 0)
        return NULL;
    snprintf(buf, n, "%s", s->drift_note[0] != '\0' ? s->drift_note : "not measured");
    return buf;
}

static const char *no_solo(const struct eb_run_result *r, const struct eb_slot_result *s, char *buf,
                           size_t n)
{
    if (s->has_solo || strcmp(r->mode, "dual") != 0)
        return NULL;
    snprintf(buf, n, "no --solo_baseline");
    return buf;
}

static const struct unmeasured_rule unmeasured_rules[] = {
    {.what = "Energy per frame (power)", .per_slot = 0, .why = no_energy},
    {.what = "GPU throttling", .per_slot = 0, .why = no_throttle_watch},
    {.what = "Accuracy (mAP)", .per_slot = 1, .why = no_accuracy},
    {.what = "Per-operator profile", .per_slot = 1, .why = no_profile},
    {.what = "MFU", .per_slot = 1, .why = no_mfu},
    {.what = "End-to-end p50 confidence interval", .per_slot = 1, .why = no_p50_ci},
    {.what = "End-to-end p99 confidence interval", .per_slot = 1, .why = no_p99_ci},
    {.what = "Steady-state drift", .per_slot = 1, .why = no_drift},
    {.what = "Other processes' CPU use", .per_slot = 1, .why = no_others_cpu},
    {.what = "fp16 drift against fp32", .per_slot = 1, .why = no_fp16_drift},
    {.what = "Interference against a solo run", .per_slot = 1, .why = no_solo},
};

void eb_report__md_statistics(FILE *fp)
{
    fprintf(fp, "## Statistics\n\n");
    fprintf(fp, "- Percentiles: %s.\n", EB_STAT_PERCENTILE_METHOD);
    fprintf(fp, "- Spread: %s.\n", EB_STAT_SPREAD_METHOD);
    fprintf(fp, "- Confidence intervals (report.json `ci_method`: \"%s\"): %s.\n",
            EB_STAT_CI_METHOD, EB_STAT_CI_METHOD_DETAIL);
    fprintf(fp,
            "- Soak runs (report.json `slots[i].statistics`: `mode` `exact` or `streamed`): %s.\n",
            EB_STAT_STREAM_METHOD);
    fprintf(fp,
            "- Throttling onset (`slots[i].throttle_onset`): %s, on the latency's time buckets "
            "and on the sampler's GPU clock and hottest temperature; they coincide within "
            "%g s or two latency buckets.\n",
            EB_STAT_CP_METHOD, EB_THROTTLE_WINDOW_S);
    fprintf(fp,
            "- Level %g%%: a p50 interval needs at least %llu samples, a p99 interval at "
            "least %llu.\n\n",
            100.0 * EB_STAT_CI_LEVEL,
            (unsigned long long)eb_stat_ci_min_n(0.50, EB_STAT_CI_LEVEL, CI_MIN_N_SEARCH),
            (unsigned long long)eb_stat_ci_min_n(0.99, EB_STAT_CI_LEVEL, CI_MIN_N_SEARCH));
}

static void md_validity(FILE *fp, const struct eb_run_result *r)
{
    char b[32];
    size_t nk = 0;
    const struct eb_validity_criterion *k = eb_validity_criteria_table(&nk);
    fprintf(fp, "## Validity rules\n\n");
    fprintf(fp, "A slot that ran is VALID when it meets every rule below (report.json "
                "`validity.criteria` holds the same thresholds); a run is VALID when every slot "
                "that ran is, it was not interrupted, and the GPU did not throttle.\n\n");
    fprintf(fp, "| Threshold | This run | Rule | Off when |\n| --- | --- | --- | --- |\n");
    for (size_t i = 0; i < nk; i++) {
        double v = eb_validity_criterion_value(&k[i], &r->criteria);
        if (k[i].type == EB_VALIDITY_CRITERION_UINT)
            snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
        else
            snprintf(b, sizeof(b), "%g", v);
        const int off = k[i].off_when != NULL && strcmp(b, k[i].off_when) == 0;
        fprintf(fp, "| `%s` (`%s`) | %s%s | %s | %s |\n", k[i].option, k[i].key, b,
                off ? " (off)" : "", k[i].rule, k[i].off_when != NULL ? k[i].off_when : "never");
    }
    fprintf(fp,
            "\nFixed rules: the steady state is judged over %d consecutive blocks of the "
            "measured frames from %d frames on; `--warmup auto` stops at the first %d-frame "
            "window whose median is within %g%% of the previous window's, or at %d frames or "
            "%g s.\n\n",
            EB_STAT_DRIFT_BLOCKS, EB_STAT_DRIFT_MIN_FRAMES, EB_WARMUP_AUTO_WINDOW,
            100.0 * EB_WARMUP_AUTO_TOL, EB_WARMUP_AUTO_MAX_FRAMES, EB_WARMUP_AUTO_MAX_S);
}

static void md_counting(FILE *fp, const struct eb_run_result *r)
{
    fprintf(fp, "## FLOPs and bytes\n\n");
    fprintf(fp,
            "- FLOPs (per-operator profile; with ort from the shapes in its profile, the same "
            "way): %s.\n",
            EB_ENGINE_FLOPS_CONVENTION);
    fprintf(fp, "- Memory: GB are %.0f bytes; the figure compared with the limit is %s.\n",
            EB_REPORT_BYTES_PER_GB, r->mem.monitored[0] != '\0' ? r->mem.monitored : "not known");
    fprintf(fp, "- Model sizes and file list sizes are bytes of the files.\n\n");
}

static void table_cell(char *buf, size_t n, double v)
{
    if (v > 0)
        snprintf(buf, n, "%g", v);
    else
        snprintf(buf, n, "—");
}

static void md_peaks(FILE *fp, const struct eb_run_result *r)
{
    fprintf(fp, "## Peaks and clocks (MFU)\n\n");
    fprintf(fp, "MFU is the achieved FLOP/s of the profiled frames over the device's dense "
                "peak for the precision the model ran in, at the clock of the peak table's "
                "entry.\n\n");
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *s = &r->slots[i];
        const struct eb_profile_result *p = &s->profile;
        if (s->status != EB_SLOT_OK)
            continue;
        if (!p->available)
            fprintf(fp, "- Slot %s: no MFU (no operator profile).\n", s->name);
        else if (!isfinite(p->peak_tflops))
            fprintf(fp, "- Slot %s: no peak: %s.\n", s->name, p->peak_note);
        else
            fprintf(fp, "- Slot %s: %s, %s, %g TFLOPS at %g MHz (%s).\n", s->name, p->peak_device,
                    p->peak_precision, p->peak_tflops, p->peak_clock_mhz, p->peak_note);
    }
    fprintf(fp, "\n");
    eb_report__md_peak_table(fp);
}

void eb_report__md_peak_table(FILE *fp)
{
    size_t n = 0;
    const struct eb_peak_entry *e = eb_peak_table(&n);
    fprintf(fp, "The peak table (dense, 10^12 FLOP/s; int8 10^12 OP/s; DRAM bandwidth 10^9 "
                "bytes/s):\n\n");
    fprintf(fp, "| Device | Clock MHz | fp32 | fp16 | int8 | Source | DRAM GB/s | Source |\n"
                "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (size_t i = 0; i < n; i++) {
        char c[EB_PEAK_PRECISION_COUNT][32];
        for (int k = 0; k < EB_PEAK_PRECISION_COUNT; k++)
            table_cell(c[k], sizeof(c[k]), e[i].tflops[k]);
        char bw[32];
        table_cell(bw, sizeof(bw), e[i].mem_gbs);
        fprintf(fp, "| %s | %g | %s | %s | %s | %s | %s | %s |\n", e[i].name, e[i].clock_mhz,
                c[EB_PEAK_FP32], c[EB_PEAK_FP16], c[EB_PEAK_INT8], e[i].source, bw,
                e[i].mem_source != NULL ? e[i].mem_source : "not known");
    }
    fprintf(fp, "\n");
}

static void md_unmeasured(FILE *fp, const struct eb_run_result *r)
{
    char why[512];
    int any = 0;
    fprintf(fp, "## Not measured in this run\n\n");
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *s = &r->slots[i];
        if (s->status != EB_SLOT_OK) {
            fprintf(fp, "- Slot %s: did not run (%s%s%s).\n", s->name,
                    eb_slot_status_name(s->status), s->message[0] != '\0' ? ": " : "", s->message);
            any = 1;
        }
    }
    const size_t nr = sizeof(unmeasured_rules) / sizeof(unmeasured_rules[0]);
    for (size_t k = 0; k < nr; k++) {
        const struct unmeasured_rule *u = &unmeasured_rules[k];
        for (int i = 0; i < (u->per_slot ? EB_NUM_SLOTS : 1); i++) {
            const struct eb_slot_result *s = u->per_slot ? &r->slots[i] : NULL;
            if (s != NULL && s->status != EB_SLOT_OK)
                continue;
            const char *reason = u->why(r, s, why, sizeof(why));
            if (reason == NULL)
                continue;
            if (s != NULL)
                fprintf(fp, "- %s, slot %s: %s.\n", u->what, s->name, reason);
            else
                fprintf(fp, "- %s: %s.\n", u->what, reason);
            any = 1;
        }
    }
    if (!any)
        fprintf(fp, "Everything this run can measure was measured.\n");
}

static int assumptions_body(FILE *fp, const void *ctx)
{
    const struct eb_run_result *r = ctx;
    fprintf(fp, "# What the numbers of this run rest on\n\n");
    fprintf(fp,
            "edgebench %s, run started %s. The figures are in report.json; the inputs in "
            "inputs.json; the machine in env.json.\n\n",
            r->version != NULL ? r->version : "unknown",
            r->started_at[0] != '\0' ? r->started_at : "at an unknown time");
    eb_report__md_statistics(fp);
    md_validity(fp, r);
    md_counting(fp, r);
    md_peaks(fp, r);
    md_unmeasured(fp, r);
    return ferror(fp) ? -1 : 0;
}

enum eb_status eb_report__write_inputs(const struct eb_run_result *r, const char *dir,
                                       struct eb_diag *diag)
{
    return eb_report__write_atomic(dir, "inputs.json", inputs_body, r, diag);
}

enum eb_status eb_report__write_assumptions(const struct eb_run_result *r, const char *dir,
                                            struct eb_diag *diag)
{
    return eb_report__write_atomic(dir, "assumptions.md", assumptions_body, r, diag);
}
