/*
 * Report writers. All render from one struct eb_run_result:
 *   report.json (schema in docs/report-schema.md), report.md, env.json.
 */
#ifndef EB_REPORT_H
#define EB_REPORT_H

#include <stdio.h>

#include "eb/json.h"
#include "harness/results/result.h"

/*
 * Memory figures in the reports are in GB of 10^9 bytes, the unit the run's monitor compares
 * with --gpu_mem_limit_gb (limit bytes = limit_gb * 1e9, run.c) and prints in violation lines,
 * so a reported peak above the limit is exactly a counted violation.
 * "% of limit" is peak bytes / (limit_gb * EB_REPORT_BYTES_PER_GB).
 */
#define EB_REPORT_BYTES_PER_GB 1e9

/** Writes the whole report.json document. */
void eb_report_write_json(const struct eb_run_result *r, struct eb_json_writer *w);
/** Writes report.md: Memory Safety Summary, one section per slot, system metrics. */
void eb_report_write_md(const struct eb_run_result *r, FILE *fp);
/**
 * Writes summary.md: one page in plain words for a non-specialist (report_summary.c): what ran
 * where, whether it keeps up with its target rate, memory against the limit, the bottleneck,
 * the verdict and what it rests on. Every figure is one report.json holds, printed as
 * report.md prints it.
 */
void eb_report_write_summary(const struct eb_run_result *r, FILE *fp);

/** The report files, in the order eb_report_write_files writes them: report.json last, so
 * that it can record the others' failures. */
enum eb_report_file {
    EB_REPORT_FILE_MD,
    EB_REPORT_FILE_HTML,
    EB_REPORT_FILE_INPUTS,      /* inputs.json (report_repro.c) */
    EB_REPORT_FILE_ASSUMPTIONS, /* assumptions.md (report_repro.c) */
    EB_REPORT_FILE_SUMMARY,     /* summary.md (report_summary.c) */
    EB_REPORT_FILE_JSON,
    EB_REPORT_FILE_COUNT
};
/** "report.md", "report.html", "inputs.json", "assumptions.md", "summary.md", "report.json". */
const char *eb_report_file_name(enum eb_report_file f);
/** Writes one report file into `dir` (eb_report__write_atomic). EB_ERR_IO naming it. */
EB_NODISCARD enum eb_status eb_report_write_file(const struct eb_run_result *r, const char *dir,
                                                 enum eb_report_file f, struct eb_diag *diag);
/** Writes every file of enum eb_report_file into `dir`, each whatever
 * happened to the others. EB_ERR_IO naming the first file that failed. */
EB_NODISCARD enum eb_status eb_report_write_files(const struct eb_run_result *r, const char *dir,
                                                  struct eb_diag *diag);

/**
 * Derives what the reports and the history read from a finished run's result: the validity
 * verdict of every slot and of the run (harness/results/validity.h) against r->criteria, with the GPU's
 * throttling and an interruption, and the energy per measured frame. Call once, after the slots
 * are summarised and the sampler stopped, before writing the reports.
 */
void eb_report_finish(struct eb_run_result *r);

/** The environment fingerprint of the run history: facts read as env.json reads them. */
struct eb_env_facts {
    char hostname[256];
    char os[256];        /* PRETTY_NAME of /etc/os-release */
    char kernel[256];    /* "Linux 6.1.0-18-amd64 x86_64" */
    char cpu_model[256]; /* /proc/cpuinfo model name (or Hardware/Processor) */
    int n_cpus;          /* online CPUs; 0 unknown */
    char gpu_name[256];  /* first NVIDIA GPU of /proc/driver/nvidia/gpus; "" none */
    char gpu_driver[64]; /* NVIDIA kernel module version; "" none */
    char l4t_release[256];
    char power_mode[128]; /* Jetson nvpmodel mode */
};
/** Collects the facts; what cannot be read is "" (or 0). Reads files only; never fails. */
void eb_report_env_facts(struct eb_env_facts *out);

/** What env.json records (collected once at start). */
struct eb_env_extra {
    const char *command_line;
    /* The ONNX Runtime a slot of the run loaded; all three NULL when no slot ran on ort (a
     * native-only run): env.json then says null, never another backend's version. */
    const char *ort_version;   /* may be NULL */
    const char *ort_library;   /* may be NULL */
    const char *ort_providers; /* comma-separated (eb_backend_probe.providers); may be NULL */
    const char *version;       /* edgebench version; may be NULL */
};
/**
 * Writes env.json into `dir`: versions, OS/kernel, CPU, GPU/driver, the CUDA stack (runtime,
 * driver, cuDNN, cuBLAS), Jetson facts, ONNX Runtime (when a slot ran on it), command.
 */
EB_NODISCARD enum eb_status eb_report_write_env(const char *dir, const struct eb_env_extra *extra,
                                                struct eb_diag *diag);

/*
 * Internal to report*.c: writes `dir`/`name` through a temporary file in the same folder that
 * is renamed into place, so a crash never leaves a half-written file. `body` writes the
 * content and returns non-zero on failure. EB_ERR_IO naming the file on failure.
 */
typedef int (*eb_report_body_fn)(FILE *fp, const void *ctx);
EB_NODISCARD enum eb_status eb_report__write_atomic(const char *dir, const char *name,
                                                    eb_report_body_fn body, const void *ctx,
                                                    struct eb_diag *diag);
/*
 * Internal to report*.c: inputs.json (the effective configuration, the models with their
 * SHA-256, an image_dir source's file list hash) and assumptions.md (what the numbers rest on)
 * into `dir` (report_repro.c). EB_ERR_IO naming the file.
 */
EB_NODISCARD enum eb_status eb_report__write_inputs(const struct eb_run_result *r, const char *dir,
                                                    struct eb_diag *diag);
EB_NODISCARD enum eb_status eb_report__write_assumptions(const struct eb_run_result *r,
                                                         const char *dir, struct eb_diag *diag);
/* Internal to report*.c: a top-kernel table as a JSON array of {name, calls, total_ms,
 * share_pct} (report.json's trace.top_kernels, ncu's and nsys's tables, llm's trace). */
/** report.json's "history": {db, run_id, uuid} where the run was recorded, null when it was not
 * (run_id 0). */
void eb_report__write_history(struct eb_json_writer *w, const char *db, int64_t run_id,
                              const char *uuid);
void eb_report__write_kernels(struct eb_json_writer *w, const struct eb_kernel_stat *k, size_t n);
/* Internal to report*.c: summary.md's verdict with its reasons, "**INVALID**, because:" and one
 * item a reason (report_summary.c). */
void eb_report__md_because(FILE *fp, const struct eb_validity *v);
/* Internal to report*.c: assumptions.md's sections that every kind shares: the statistics'
 * methods ("## Statistics") and the peak table of harness/metrics/peaks.c (a Markdown table). */
void eb_report__md_statistics(FILE *fp);
void eb_report__md_peak_table(FILE *fp);
/*
 * Internal to report*.c: `key`: an image_dir source's file list ({files, bytes,
 * file_list_sha256}) or null, as report.json and inputs.json both write it.
 */
void eb_report__write_source_files(struct eb_json_writer *w, const char *key,
                                   const struct eb_slot_result *s);
/* Internal to report*.c: slot indices ordered by peak memory, closest to the limit first. */
void eb_report__slots_by_closeness(const struct eb_run_result *r, int order_out[EB_NUM_SLOTS]);
/*
 * Internal to report*.c: a copy of the slot's class counts sorted by count (descending), then
 * class id. Caller frees; NULL when there are none or memory ran out.
 */
struct eb_class_count *eb_report__sorted_classes(const struct eb_slot_result *s);
/*
 * Internal to report*.c: writes `s` (text from outside: paths, messages) as Markdown shows it
 * literally: active characters escaped (in a code span, `code` != 0, only '|'), line breaks as
 * spaces, control characters and invalid UTF-8 as U+FFFD; NULL or "" as an em dash.
 */
void eb_report__md_text(FILE *fp, const char *s, int code);
/* Internal to report*.c: the style sheet of edgebench's HTML pages (report.html, val.html). */
extern const char eb_report__css[];
/* Internal to report*.c: "SIGINT", "SIGTERM", ... or NULL for 0 and unknown signals. */
const char *eb_report__signal_name(int sig);

/* Internal to report*.c: `key`: a latency summary (count, mean, std, cov, min, percentiles,
 * max, fps, the CIs and their method), as report.json writes every one. */
void eb_report__write_stats(struct eb_json_writer *w, const char *key,
                            const struct eb_stat_summary *s);
/* Internal to report*.c: the sampler's figures as the members of report.json's "system" object
 * (its energy per frame aside, which is run's). */
void eb_report__write_system_fields(struct eb_json_writer *w, const struct eb_system_summary *s);
/** Internal to report*.c: where the energy of the run comes from. */
enum eb_report_energy_source {
    EB_REPORT_ENERGY_SOURCE_NONE = 0,
    EB_REPORT_ENERGY_SOURCE_NVML,       /* sum of the NVML GPUs' energy_mj */
    EB_REPORT_ENERGY_SOURCE_TEGRASTATS, /* tegrastats energy_mj (Jetson) */
};
/**
 * Internal to report*.c: the run's energy per measured frame in mJ: the NVML energy summed over
 * the GPUs when NVML was used (and measured some), else tegrastats' energy_mj when tegrastats
 * was used, divided by frames.measured summed over both slots. NaN (and source NONE) when there
 * is no energy or no measured frame. `source_out` may be NULL.
 */
struct eb_report_metrics;
/**
 * The throttling onset of slot `s` (struct eb_throttle_onset, harness/results/result.h) from its
 * latency series and, when `m` is not NULL, the sampler's clock and temperature series.
 */
void eb_report__throttle_find(const struct eb_slot_result *s, const struct eb_report_metrics *m,
                              struct eb_throttle_onset *out);
/** Every slot's onset, the sampler's series read from r->output_dir (eb_report_finish). */
void eb_report__throttle_find_all(struct eb_run_result *r);

double eb_report__energy_per_frame_mj(const struct eb_run_result *r,
                                      enum eb_report_energy_source *source_out);
/**
 * Internal to report*.c: the EB_SAMPLER_THROTTLE_SLOWDOWN reasons seen on any NVML GPU during
 * the run (0 = not throttled).
 */
uint64_t eb_report__throttle_reasons(const struct eb_system_summary *s);
/**
 * Internal to report*.c: the run's warnings as every report lists them — r->warnings, then each
 * slot's profile note (a requested profile that is absent) — borrowed into out[max]; the count.
 */
int eb_report__warnings(const struct eb_run_result *r, const char **out, int max);
/** Internal to report*.c: `v` with `prec` decimals, or "n/a" when not finite; returns buf. */
const char *eb_report__fmtd(char *buf, size_t n, double v, int prec);
/** The verdict's criteria as one phrase ("at least 200 measured frames, ..."), into buf. */
const char *eb_report__criteria(const struct eb_run_result *r, char *buf, size_t n);
/** Internal to report*.c: "[lo, hi]" of a confidence interval, or "n/a" without one. */
const char *eb_report__fmt_ci(char *buf, size_t n, const struct eb_stat_ci *ci);
/** Internal to report*.c: an AP with 4 decimals, or "n/a" where no box of it was scored (-1). */
const char *eb_report__fmt_ap(char *buf, size_t n, double v);
/* Room for every warning eb_report__warnings can list. */
#define EB_REPORT_MAX_WARNINGS (EB_RUN_MAX_WARNINGS + EB_NUM_SLOTS)

#endif
