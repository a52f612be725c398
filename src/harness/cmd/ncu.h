/*
 * Nsight Compute for `edgebench profile --ncu`: which NVTX ranges to profile (the top nodes of
 * the run's per-operator profile), the parser of ncu's CSV raw page, the per-kernel summary,
 * and ncu.json / ncu.md.
 *
 *     struct eb_ncu_table raw = {0}, ranges = {0};
 *     eb_ncu_csv_parse(raw_text, raw_len, &raw, &diag);      (ncu --import R --csv --page raw)
 *     eb_ncu_csv_parse(ren_text, ren_len, &ranges, &diag);   (the same, --print-nvtx-rename kernel)
 *     eb_ncu_summarize(&raw, &ranges, targets, n_targets, &sum, &diag);
 *     eb_ncu_write_reports(dir, &sum, &info, &diag);
 *     eb_ncu_summary_fini(&sum); eb_ncu_table_fini(&raw); eb_ncu_table_fini(&ranges);
 */
#ifndef EB_NCU_H
#define EB_NCU_H

#include <stddef.h>

#include "eb/diag.h"
#include "eb/nvtx.h"

/* The metrics asked of ncu (--metrics), in this order. */
#define EB_NCU_METRIC_DURATION  "gpu__time_duration.sum"
#define EB_NCU_METRIC_SM        "sm__throughput.avg.pct_of_peak_sustained_elapsed"
#define EB_NCU_METRIC_DRAM      "dram__throughput.avg.pct_of_peak_sustained_elapsed"
#define EB_NCU_METRIC_OCCUPANCY "sm__warps_active.avg.pct_of_peak_sustained_active"
#define EB_NCU_METRICS                                                                             \
    EB_NCU_METRIC_DURATION "," EB_NCU_METRIC_SM "," EB_NCU_METRIC_DRAM "," EB_NCU_METRIC_OCCUPANCY

/** Most targets (the per-op profile of report.json keeps this many nodes per slot). */
#define EB_NCU_MAX_TARGETS 15

/** One kernel launch: a data row of ncu's raw page. */
struct eb_ncu_launch {
    long long id;         /* "ID" column; -1 when not an integer */
    char *kernel;         /* "Kernel Name" (malloc'd, owned by the table) */
    double duration_us;   /* gpu__time_duration.sum, converted from its unit; NAN when absent */
    double sm_pct;        /* sm__throughput...elapsed; NAN when absent */
    double dram_pct;      /* dram__throughput...elapsed; NAN when absent */
    double occupancy_pct; /* sm__warps_active...active (achieved occupancy); NAN when absent */
};

/** The rows of one CSV raw page. Zero-initialise; free with eb_ncu_table_fini. */
struct eb_ncu_table {
    struct eb_ncu_launch *rows;
    size_t n;
};

/**
 * Parses ncu's `--csv --page raw` output: lines before the header (==PROF== messages, the
 * application's own output) are skipped; the header is the first record whose first field is
 * "ID" (quoted fields, "" escapes, commas inside quotes); the record after it, whose ID field is
 * empty, holds the units (gpu__time_duration.sum in nsecond, usecond, msecond or second; other
 * or absent units are taken as nanoseconds, the --csv default); every later record with the
 * header's field count and an integer ID is a launch (thousands separators in numbers are
 * dropped; "n/a" and the like give NAN). Output with no header at all (ncu profiled nothing)
 * gives zero rows. EB_ERR_FORMAT when the header lacks "ID" or "Kernel Name"; EB_ERR_NOMEM.
 * `out` is written only on EB_OK; the caller owns it (eb_ncu_table_fini).
 */
EB_NODISCARD enum eb_status eb_ncu_csv_parse(const char *text, size_t len, struct eb_ncu_table *out,
                                             struct eb_diag *diag);

/** Frees the rows; accepts a zeroed or finished table. */
void eb_ncu_table_fini(struct eb_ncu_table *t);

/** One node of the per-operator profile whose kernels ncu profiles. */
struct eb_ncu_target {
    char range[EB_NVTX_NAME_MAX]; /* its NVTX range, eb_nvtx_range_name(op, node) */
    char node[128];
    char op[32];
    char slot[16];       /* "rgb" or "thermal" ("" for a kernel target) */
    double ms_per_frame; /* from the per-op profile (a kernel target: its trace's total time
                            over the most frames a slot traced) */
    char kernel[256];    /* a kernel target (profile --trace): the kernel's mangled name, range
                            and node "" and op "kernel"; "" for a node target */
};

/**
 * The `max_targets` (1..EB_NCU_MAX_TARGETS) slowest nodes of report.json's per-operator
 * profiles (slots/N/profile/top_nodes of every slot on backend native, the one with NVTX node
 * ranges, by ms_per_frame, one per range name) into `targets` (room for max_targets); their
 * count in *n_out (0 when no native slot has a profile).
 * EB_ERR_FORMAT when `json` is not JSON.
 */
EB_NODISCARD enum eb_status eb_ncu_targets_from_report(const char *json, size_t len,
                                                       int max_targets,
                                                       struct eb_ncu_target *targets, size_t *n_out,
                                                       struct eb_diag *diag);

/**
 * The first `max_targets` (1..EB_NCU_MAX_TARGETS) kernels of report.json's trace.top_kernels
 * (`profile --trace` with CUPTI: already slowest first) as kernel targets; *n_out 0 when the
 * report has no trace or no kernels. EB_ERR_FORMAT when `json` is not JSON.
 */
EB_NODISCARD enum eb_status eb_ncu_kernel_targets_from_report(const char *json, size_t len,
                                                              int max_targets,
                                                              struct eb_ncu_target *targets,
                                                              size_t *n_out, struct eb_diag *diag);

/**
 * ncu's --kernel-name filter for kernel targets (with --kernel-name-base mangled):
 * "regex:^(name1|name2)$" with the names' regex characters escaped (a name cut at the
 * report's 255 bytes is matched as a prefix), into buf. Returns 0 when it does not fit.
 */
int eb_ncu_kernel_regex(const struct eb_ncu_target *targets, size_t n, char *buf, size_t size);

/** One kernel within one range: every launch of it there, averaged. */
struct eb_ncu_kernel {
    const char *kernel; /* borrowed from the raw table */
    const char *range;  /* its NVTX range (a target's or the summary's); NULL when none */
    int target;         /* index into the targets; -1 when the range is not one of them */
    unsigned launches;
    double duration_us, sm_pct, dram_pct, occupancy_pct; /* means over launches; NAN if none */
};

/** The summary; borrows the raw table it was made from. Free with eb_ncu_summary_fini. */
struct eb_ncu_summary {
    struct eb_ncu_kernel *kernels; /* by target order (unknown ranges last), then duration */
    char *names;                   /* storage of the ranges that are no target (owned) */
    size_t n_kernels;
    size_t n_launches;
};

/**
 * Groups the launches of `raw` by (range, kernel). The range of a launch comes from the
 * "Kernel Name" that `ranges` (the same report imported with --print-nvtx-rename kernel) gives
 * the launch with the same ID: "<range>/<kernel>" as Nsight Compute 2025.3 writes it (or a bare
 * "<range>"), a "domain@" prefix dropped, then matched against the targets' range names; a name
 * equal to the kernel's own means no range. `ranges` may be NULL or empty (every range
 * unknown). EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_ncu_summarize(const struct eb_ncu_table *raw,
                                             const struct eb_ncu_table *ranges,
                                             const struct eb_ncu_target *targets, size_t n_targets,
                                             struct eb_ncu_summary *out, struct eb_diag *diag);

/** Frees the kernel list; accepts a zeroed summary. */
void eb_ncu_summary_fini(struct eb_ncu_summary *s);

/** "memory-bound" when DRAM % of peak > SM % of peak, "compute-bound" otherwise; "unknown" if NAN. */
const char *eb_ncu_verdict(double sm_pct, double dram_pct);

/** What ran, for the reports. */
struct eb_ncu_info {
    const char *status;     /* "ok", "failed", "unavailable" (ncu not found), "no_targets",
                               "timeout" (--ncu_timeout_s), "interrupted" (a stop signal) */
    const char *message;    /* one line when not ok, else NULL */
    const char *ncu;        /* the ncu executable, or NULL */
    const char *command;    /* the profiling command line, or NULL */
    const char *report;     /* the .ncu-rep file, or NULL */
    const char *run_folder; /* the re-run's own run folder (under the run folder), or NULL */
    const struct eb_ncu_target *targets; /* the ranges profiled (borrowed) */
    size_t n_targets;
};

/**
 * Writes <dir>/ncu.json and <dir>/ncu.md from `info` and `sum` (`sum` may be NULL: no
 * kernels; its kernels' `target` index info->targets). EB_ERR_IO naming the file that could not
 * be written.
 */
EB_NODISCARD enum eb_status eb_ncu_write_reports(const char *dir, const struct eb_ncu_info *info,
                                                 const struct eb_ncu_summary *sum,
                                                 struct eb_diag *diag);

#endif
