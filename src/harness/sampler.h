/*
 * System metrics: procfs readers (CPU per core, RAM, swap, process RSS, thermal zones),
 * Jetson detection, the tegrastats child process, and the sampler thread that streams one JSON
 * object per interval to metrics.jsonl (nothing accumulates in memory but running aggregates).
 */
#ifndef EB_SAMPLER_H
#define EB_SAMPLER_H

#include <stdint.h>

#include "eb/diag.h"
#include "eb/log.h"

/** System memory from /proc/meminfo, in bytes. */
struct eb_sysmem {
    uint64_t total, available, used; /* used = total - available */
    uint64_t swap_total, swap_used;
};

/** Reads /proc/meminfo. EB_ERR_IO when unreadable. Cheap enough to call once per frame. */
EB_NODISCARD enum eb_status eb_procfs_sysmem(struct eb_sysmem *out, struct eb_diag *diag);
/** Resident set size of this process in bytes (/proc/self/statm); 0 when unreadable. */
uint64_t eb_procfs_rss_bytes(void);

/** Platform facts used by memory accounting and env.json. */
struct eb_platform {
    int is_jetson;         /* /etc/nv_tegra_release, or device-tree model with jetson/tegra */
    char model[128];       /* device-tree model or CPU model name */
    char l4t_release[128]; /* first line of /etc/nv_tegra_release, or "" */
    int n_cpus;
};

/** Detects the platform (reads files under `root`, "" or NULL for "/", so tests can fake it). */
void eb_platform_detect(const char *root, struct eb_platform *out);

#define EB_SAMPLER_MAX_ZONES 16

/** Running aggregates kept by the sampler (and what the report shows under system metrics). */
struct eb_system_summary {
    uint64_t n_samples;
    double duration_s;
    double cpu_avg_pct, cpu_max_pct;        /* all cores, from /proc/stat deltas */
    double ram_used_max_mb, ram_used_avg_mb, ram_total_mb;
    double swap_used_max_mb;
    double rss_max_mb;
    int n_zones;
    struct { char name[32]; double max_c, avg_c; } zones[EB_SAMPLER_MAX_ZONES];
    /* tegrastats (Jetson) */
    int tegrastats_used;                    /* 1 when tegrastats ran and lines were parsed */
    uint64_t tegrastats_lines, tegrastats_bad_lines;
    double gpu_load_avg_pct, gpu_load_max_pct;
    double power_avg_mw, power_max_mw;      /* NaN when no power rail was seen */
    double energy_mj;                       /* integrated power over the run; NaN when none */
    char warning[256];                      /* e.g. "tegrastats not found: ..."; "" when none */
};

struct eb_sampler_config {
    uint64_t interval_ns;
    const char *metrics_path;   /* metrics.jsonl; borrowed */
    const char *tegrastats_cmd; /* "tegrastats" normally; tests point it elsewhere; NULL = off */
    int is_jetson;              /* run tegrastats only on a Jetson */
    const struct eb_log *log;   /* may be NULL; borrowed */
};

struct eb_sampler;

/** Starts the sampler thread (and tegrastats on a Jetson). Caller owns `*s_out`. */
EB_NODISCARD enum eb_status eb_sampler_start(const struct eb_sampler_config *cfg,
                                             struct eb_sampler **s_out, struct eb_diag *diag);
/** Stops and joins the thread (and tegrastats), fills the summary, frees the sampler. NULL ok. */
void eb_sampler_stop(struct eb_sampler *s, struct eb_system_summary *summary_out);

#endif
