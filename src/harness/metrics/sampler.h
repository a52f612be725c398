/*
 * System metrics: procfs readers (CPU per core, RAM, swap, process RSS, thermal zones),
 * Jetson detection, the tegrastats child process, and the sampler thread that streams one JSON
 * object per interval to metrics.jsonl (nothing accumulates in memory but running aggregates).
 */
#ifndef EB_SAMPLER_H
#define EB_SAMPLER_H

#include <stdint.h>
#include <sys/types.h>

#include "eb/diag.h"
#include "eb/json.h"
#include "eb/log.h"
#include "harness/metrics/energy_meter.h"
#include "harness/metrics/tegrastats.h"

/** System memory from /proc/meminfo, in bytes. */
struct eb_sysmem {
    uint64_t total, available, used; /* used = total - available */
    uint64_t swap_total, swap_used;
};

/**
 * Reads /proc/meminfo (MemTotal, MemAvailable, SwapTotal, SwapFree). EB_ERR_IO when unreadable,
 * EB_ERR_FORMAT when MemTotal or MemAvailable is missing; `*out` is written only on EB_OK.
 * Cheap enough to call once per frame. Thread-safe.
 */
EB_NODISCARD enum eb_status eb_procfs_sysmem(struct eb_sysmem *out, struct eb_diag *diag);
/** As eb_procfs_sysmem, reading `<root>/proc/meminfo` (root "" or NULL = "/"; for tests). */
EB_NODISCARD enum eb_status eb_procfs_sysmem_at(const char *root, struct eb_sysmem *out,
                                                struct eb_diag *diag);
/** Resident set size of this process in bytes (/proc/self/statm); 0 when unreadable. */
uint64_t eb_procfs_rss_bytes(void);

/** Cumulative CPU time of one core (or of all cores) from /proc/stat, in clock ticks. */
struct eb_cpu_times {
    int present;    /* 0 when the core has no line (offline) */
    uint64_t busy;  /* user + nice + system + irq + softirq + steal */
    uint64_t total; /* busy + idle + iowait */
};

/**
 * Reads `<root>/proc/stat` (root "" or NULL = "/"): the "cpu" line into `*all_out` and each
 * "cpuN" line into `cores[N]` for N < max_cores (entries for cores without a line get present =
 * 0). `*n_cores_out` = 1 + the highest N seen (capped at max_cores). `cores` is caller-owned
 * (max_cores entries). EB_ERR_IO when unreadable, EB_ERR_FORMAT without a "cpu" line.
 */
EB_NODISCARD enum eb_status eb_procfs_cpu_times(const char *root, struct eb_cpu_times *cores,
                                                int max_cores, int *n_cores_out,
                                                struct eb_cpu_times *all_out, struct eb_diag *diag);
/** Load in percent between two readings of the same core (NaN when no time passed/absent). */
double eb_procfs_cpu_load_pct(const struct eb_cpu_times *prev, const struct eb_cpu_times *cur);

/*
 * Whether the machine was quiet: the CPU time every process used (the "cpu" line of
 * <root>/proc/stat, in clock ticks) beside this process's own (getrusage, every thread), read
 * at the start and the end of a measured pass. What others used is the difference, as a share
 * of all CPUs' time over the pass.
 */
struct eb_cpu_use {
    int ok;                  /* 0 when /proc/stat could not be read */
    struct eb_cpu_times all; /* every CPU, every process */
    double self_s;           /* this process's user + system CPU time, s */
};

/** Reads the machine's and this process's CPU time into `out` (out->ok 0 on failure). */
void eb_procfs_cpu_use(const char *root, struct eb_cpu_use *out);

/**
 * The share (%) of all CPUs' time between `a` and `b` that other processes used (busy ticks
 * of every CPU less this process's CPU time, over every CPU's ticks; `ticks_per_s` =
 * sysconf(_SC_CLK_TCK)); at least 0. NaN when a reading failed or less than
 * EB_CPU_USE_MIN_TICKS ticks of all CPUs passed (too short to tell at tick resolution). Pure.
 */
#define EB_CPU_USE_MIN_TICKS 100
double eb_cpu_use_others_pct(const struct eb_cpu_use *a, const struct eb_cpu_use *b,
                             long ticks_per_s);

/** One thermal zone: `<root>/sys/class/thermal/thermal_zoneN`. */
struct eb_thermal_zone {
    int index;     /* N */
    char type[32]; /* contents of `type` (e.g. "cpu-thermal"), or "zoneN" when unreadable */
};

/**
 * Lists the thermal zones under `<root>/sys/class/thermal` (root "" or NULL = "/") into
 * caller-owned `zones` (at most max_zones, sorted by index). Returns the number found (0 when
 * there are none or the folder is unreadable; never fails).
 */
int eb_procfs_thermal_zones(const char *root, struct eb_thermal_zone *zones, int max_zones);
/** Temperature of zone `index` in degC (`temp` holds millidegrees), NaN when unreadable. */
double eb_procfs_thermal_read_c(const char *root, int index);

/** Platform facts used by memory accounting and env.json (caller-owned plain data). */
struct eb_platform {
    int is_jetson;         /* /etc/nv_tegra_release, or device-tree model with jetson/tegra */
    char model[128];       /* device-tree model or CPU model name */
    char l4t_release[128]; /* first line of /etc/nv_tegra_release, or "" */
    int n_cpus;
};

/**
 * Detects the platform (reads files under `root`, "" or NULL for "/", so tests can fake it).
 * Jetson when <root>/etc/nv_tegra_release exists or <root>/proc/device-tree/model contains
 * "jetson" or "tegra" (any case). model: the device-tree model, else "model name" (or "Model",
 * "Hardware") from <root>/proc/cpuinfo, else "unknown". n_cpus: online CPUs (sysconf). Never
 * fails; `*out` is overwritten.
 */
void eb_platform_detect(const char *root, struct eb_platform *out);

#define EB_SAMPLER_MAX_ZONES 16
#define EB_SAMPLER_MAX_GPUS  8 /* NVML devices sampled (the first 8 NVML lists) */

/*
 * NVML's clocks-event ("throttle") reason bits (nvmlClocksEventReason*, the same values as the
 * older nvmlClocksThrottleReason*). The sampler decodes these; other bits are ignored.
 */
#define EB_SAMPLER_THROTTLE_GPU_IDLE       0x1ull
#define EB_SAMPLER_THROTTLE_APP_CLOCKS     0x2ull /* ApplicationsClocksSetting */
#define EB_SAMPLER_THROTTLE_SW_POWER_CAP   0x4ull
#define EB_SAMPLER_THROTTLE_HW_SLOWDOWN    0x8ull
#define EB_SAMPLER_THROTTLE_SYNC_BOOST     0x10ull
#define EB_SAMPLER_THROTTLE_SW_THERMAL     0x20ull
#define EB_SAMPLER_THROTTLE_HW_THERMAL     0x40ull
#define EB_SAMPLER_THROTTLE_HW_POWER_BRAKE 0x80ull
#define EB_SAMPLER_THROTTLE_DISPLAY_CLOCKS 0x100ull
/* Reasons listed in metrics.jsonl and the report: all but GpuIdle and ApplicationsClocksSetting,
 * which are not slowdowns. */
#define EB_SAMPLER_THROTTLE_LISTED                                                                 \
    (EB_SAMPLER_THROTTLE_SW_POWER_CAP | EB_SAMPLER_THROTTLE_HW_SLOWDOWN |                          \
     EB_SAMPLER_THROTTLE_SYNC_BOOST | EB_SAMPLER_THROTTLE_SW_THERMAL |                             \
     EB_SAMPLER_THROTTLE_HW_THERMAL | EB_SAMPLER_THROTTLE_HW_POWER_BRAKE |                         \
     EB_SAMPLER_THROTTLE_DISPLAY_CLOCKS)
/* Reasons that count as "throttling during the run" (SyncBoost and DisplayClockSetting do not). */
#define EB_SAMPLER_THROTTLE_SLOWDOWN                                                               \
    (EB_SAMPLER_THROTTLE_SW_POWER_CAP | EB_SAMPLER_THROTTLE_HW_SLOWDOWN |                          \
     EB_SAMPLER_THROTTLE_SW_THERMAL | EB_SAMPLER_THROTTLE_HW_THERMAL |                             \
     EB_SAMPLER_THROTTLE_HW_POWER_BRAKE)

/** NVML's name of one reason bit ("SwPowerCap", "HwThermalSlowdown", ...); NULL for other bits. */
const char *eb_sampler_throttle_name(uint64_t bit);
/**
 * Writes the names of the known bits of `mask` as a JSON array of strings, lowest bit first
 * (unknown bits are left out).
 */
void eb_sampler_throttle_write_json(uint64_t mask, struct eb_json_writer *w);

/** Running aggregates of one NVIDIA GPU read through NVML (part of struct eb_system_summary). */
struct eb_gpu_summary {
    int index;                         /* NVML device index */
    char name[96];                     /* nvmlDeviceGetName, "" when it failed */
    double util_avg_pct, util_max_pct; /* nvmlUtilization_t.gpu over the samples */
    double mem_used_max_mb;            /* nvmlMemory_t.used (v1: with the driver's reserve), MB */
    double mem_total_mb;               /* nvmlMemory_t.total, MB */
    double power_avg_mw, power_max_mw; /* nvmlDeviceGetPowerUsage */
    double energy_mj;                  /* power integrated over the sample times (trapezoid) */
    double temp_max_c;                 /* NVML_TEMPERATURE_GPU */
    double sm_clock_min_mhz, sm_clock_max_mhz;
    uint64_t throttle_samples; /* samples in which an EB_SAMPLER_THROTTLE_SLOWDOWN bit was set */
    uint64_t throttle_reasons; /* union of the EB_SAMPLER_THROTTLE_LISTED bits seen */
};
/* Every double above is NaN when no reading of it succeeded. */

/** Running aggregates kept by the sampler (and what the report shows under system metrics). */
struct eb_system_summary {
    uint64_t n_samples;
    double duration_s;
    double cpu_avg_pct, cpu_max_pct; /* all cores, from /proc/stat deltas */
    double ram_used_max_mb, ram_used_avg_mb, ram_total_mb;
    double swap_used_max_mb;
    double rss_max_mb;
    int n_zones;
    struct {
        char name[32];
        double max_c, avg_c;
    } zones[EB_SAMPLER_MAX_ZONES];
    /* tegrastats (Jetson) */
    int tegrastats_used; /* 1 when tegrastats ran and lines were parsed */
    uint64_t tegrastats_lines, tegrastats_bad_lines;
    double gpu_load_avg_pct, gpu_load_max_pct;
    double power_avg_mw, power_max_mw; /* NaN when no power rail was seen */
    double energy_mj;                  /* integrated power over the run; NaN when none */
    char warning[256];                 /* e.g. "tegrastats not found: ..."; "" when none */
    /* Appended: samples where MemAvailable < 20% of MemTotal (one WARN log on the first). */
    uint64_t pressure_samples;
    /* Appended: NVIDIA GPUs through NVML (sampler_nvml.c). */
    int nvml_used; /* 1 when NVML was loaded and initialised and listed at least one GPU */
    int n_gpus;    /* entries of gpus (0 unless nvml_used) */
    struct eb_gpu_summary gpus[EB_SAMPLER_MAX_GPUS];
    char nvml_warning[256]; /* "NVML not available: <reason>"; "" when used (or turned off) */
    /* Appended: "failed to write <metrics_path>: <why>" when a sample could not be written
     * (the first failure's reason) or the file not closed; "" when it was written whole. */
    char metrics_error[EB_DIAG_MSG_MAX];
    /* Appended: the energy between the caller's two marks (eb_sampler_mark: a run's measured
     * window), NVML's (every GPU's power summed) when NVML was used, else tegrastats' (the
     * board's input); NaN when not measured (no power reading, a mark unset or lost). */
    double window_energy_mj;
};

struct eb_sampler__gpu_reading; /* below, with the NVML internals */

/**
 * One sample as the sampler thread read it, handed to eb_sampler_config.on_sample: everything
 * (pointers too) is borrowed for the call only. NaN where a reading failed.
 */
struct eb_sampler_live {
    double cpu_avg_pct;
    int n_cores;
    const double *core_pct; /* n_cores entries, NaN for an offline core */
    int have_mem;           /* mem was read */
    struct eb_sysmem mem;
    uint64_t rss_bytes; /* 0 when unreadable */
    int n_zones;
    const char *zone_name[EB_SAMPLER_MAX_ZONES]; /* metrics.jsonl's keys */
    double zone_c[EB_SAMPLER_MAX_ZONES];
    int n_gpus;
    const struct eb_sampler__gpu_reading *gpus; /* n_gpus entries (NVML) */
    const char *gpu_name[EB_SAMPLER_MAX_GPUS];
    int gpu_index[EB_SAMPLER_MAX_GPUS];
    const struct eb_tegra_sample *tegra; /* the latest tegrastats line; NULL = none */
};

struct eb_sampler_config {
    uint64_t interval_ns;
    const char *metrics_path;   /* metrics.jsonl; borrowed */
    const char *tegrastats_cmd; /* "tegrastats" normally; tests point it elsewhere; NULL = off */
    int is_jetson;              /* run tegrastats only on a Jetson */
    const struct eb_log *log;   /* may be NULL; borrowed */
    /* Appended: where procfs/sysfs are read ("" or NULL = "/"; tests point it at a fake tree).
     * The process RSS always comes from the real /proc/self/statm. Borrowed, copied at start. */
    const char *root;
    /* Appended: the NVML library to dlopen. NULL = $EB_NVML_LIB when set and not empty, else
     * "libnvidia-ml.so.1"; "" = do not use NVML (no warning). Borrowed, copied at start. */
    const char *nvml_lib;
    /* Appended: called on the sampler thread after every sample (NULL = none), e.g. the live
     * endpoint's eb_prom_on_sample; it must return promptly. `on_sample_ctx` is borrowed. */
    void (*on_sample)(void *ctx, const struct eb_sampler_live *live);
    void *on_sample_ctx;
    /* Appended: soak runs. metrics_path is rotated when a sample would take it past
     * metrics_max_bytes (0 = never): metrics.jsonl.1 ... .<metrics_keep> hold the older samples,
     * .1 the newest of them; the oldest beyond metrics_keep is removed. A sample is never split
     * across two files. */
    uint64_t metrics_max_bytes;
    int metrics_keep;
};

/** How many rotated metrics files a run keeps by default (--metrics_max_mb). */
#define EB_SAMPLER_METRICS_KEEP 4

struct eb_sampler;

/**
 * Starts the sampler thread (and tegrastats on a Jetson). Caller owns `*s_out` and releases it
 * with eb_sampler_stop. `cfg` is read during the call only, except `cfg->log`, which must
 * outlive the sampler. The thread takes one sample before this returns, one every interval_ns
 * (0 = 1 s) after the start, and one at eb_sampler_stop, so the samples span the caller's
 * work from end to end however short it is. metrics_path (NULL = no file) is opened for
 * appending; each sample appends and flushes one compact JSON object and a newline:
 * {"t_s", "wall", "cpu_pct": [per core, null when offline], "cpu_avg_pct", "ram_used_mb",
 * "ram_total_mb", "ram_available_mb", "swap_used_mb", "rss_mb", "temps_c": {zone type: degC},
 * and, once tegrastats has printed a line, "tegrastats": the latest parsed line (see
 * eb_tegrastats_write_json), and, when NVML is used, "gpus": [{"index", "name", "util_pct",
 * "mem_util_pct", "mem_used_mb", "mem_total_mb", "power_mw", "temp_c", "sm_clock_mhz",
 * "mem_clock_mhz", "throttle": [active EB_SAMPLER_THROTTLE_LISTED reason names]}], a field
 * whose NVML call failed being null}. Duplicate zone types get a "_N" suffix (N = zone index).
 * tegrastats runs as `<tegrastats_cmd> --interval <ms>` when cfg->is_jetson and tegrastats_cmd
 * != NULL; failing to start it is not an error (summary.warning, WARN log). Neither is running
 * on a non-Jetson (warning "not a Jetson: ..."). NVML (cfg->nvml_lib) is loaded, initialised,
 * read and shut down by the sampler thread only; a missing library, a failing nvmlInit or no
 * GPU is not an error either (summary.nvml_warning "NVML not available: <reason>"; logged at
 * INFO when the library is absent, as on every machine without an NVIDIA driver, else WARN).
 * Returns EB_ERR_INVALID_ARG for a NULL cfg, EB_ERR_IO when metrics_path cannot be opened,
 * EB_ERR_NOMEM when a thread cannot start.
 */
EB_NODISCARD enum eb_status eb_sampler_start(const struct eb_sampler_config *cfg,
                                             struct eb_sampler **s_out, struct eb_diag *diag);
/**
 * Stops and joins the thread promptly (condition variable, not a sleep), stops tegrastats
 * (SIGTERM to its process group, SIGKILL after 500 ms) and reaps it, fills `*summary_out` (may
 * be NULL), closes the metrics file and frees the sampler. `s` NULL fills an empty summary
 * (n_samples 0, power/energy/GPU NaN) when summary_out != NULL. Call from one thread.
 * Summary: cpu_avg_pct/cpu_max_pct are the mean/max over samples of the all-core load;
 * gpu/power figures are over tegrastats lines; energy_mj integrates power_total_mw over the
 * sampler's span: trapezoid between the arrival times of the lines, and before the first line
 * and after the last one the nearest line's power held (tegrastats prints on its own clock, its
 * first line an interval after it starts). gpus[i] aggregate the NVML readings of the samples;
 * gpus[i].energy_mj integrates power over the samples' times (t_s in metrics.jsonl).
 */
void eb_sampler_stop(struct eb_sampler *s, struct eb_system_summary *summary_out);

/**
 * Marks the start (EB_ENERGY_MARK_BEGIN) or the end of the caller's window at t_ns (eb_clock_ns;
 * at or before now): summary.window_energy_mj is the energy between the two, the power taken
 * as linear between readings (energy_meter.h). Give each within a few sampling intervals of its
 * time (a mark older than the latest EB_ENERGY_RING readings is lost). Any thread; NULL ok.
 */
void eb_sampler_mark(struct eb_sampler *s, enum eb_energy_mark which, uint64_t t_ns);
/** eb_sampler_mark(sampler, EB_ENERGY_MARK_BEGIN or _END, t_ns) in the shape of the pipeline's
 *  hooks (eb_pipeline_hooks.begin and .end, their ctx the struct eb_sampler *; NULL ok). */
void eb_sampler_mark_begin(void *sampler, uint64_t t_ns);
void eb_sampler_mark_end(void *sampler, uint64_t t_ns);

/** pid of the running tegrastats child, or -1 (for tests: check it is gone after stop). */
pid_t eb_sampler_tegrastats_pid(const struct eb_sampler *s);

/* ---- internal to the sampler module (sampler.c <-> sampler_tegrastats.c) ---- */

/** What the tegrastats reader accumulated; read after eb_sampler__tegra_stop. */
struct eb_sampler__tegra_stats {
    uint64_t lines, bad_lines; /* non-blank lines read; MALFORMED ones */
    uint64_t gpu_n, power_n;
    double gpu_sum, gpu_max;
    double power_sum, power_max;
    struct eb_energy_meter meter; /* the board's input power at the lines' arrival times */
    char warning[256];            /* set when the command died before printing a line */
};

struct eb_sampler__tegra;

/**
 * Spawns `<cmd> --interval <interval_ms>` (posix_spawnp, own process group, stdout to a pipe)
 * and a reader thread that parses each line. Caller owns `*t_out` (eb_sampler__tegra_stop).
 * `log` is borrowed and must outlive it. EB_ERR_UNSUPPORTED with the reason (e.g. "tegrastats:
 * No such file or directory") when the command cannot be started.
 */
EB_NODISCARD enum eb_status eb_sampler__tegra_start(const char *cmd, uint64_t interval_ms,
                                                    const struct eb_log *log,
                                                    struct eb_sampler__tegra **t_out,
                                                    struct eb_diag *diag);
/**
 * Copies the latest parsed line into `*out` when there is one; returns 1 then, else 0.
 * Thread-safe against the reader thread.
 */
int eb_sampler__tegra_latest(struct eb_sampler__tegra *t, struct eb_tegra_sample *out);
/** pid of the child, or -1. */
pid_t eb_sampler__tegra_pid(const struct eb_sampler__tegra *t);
/** From now on the reader drops what it reads (the sampler's span has ended). NULL ok. */
void eb_sampler__tegra_halt(struct eb_sampler__tegra *t);
/** Sets an energy mark of the lines' power (eb_energy_mark), thread-safe. NULL ok. */
void eb_sampler__tegra_mark(struct eb_sampler__tegra *t, enum eb_energy_mark which, uint64_t t_ns);
/** Kills and reaps the child, joins the reader, fills `*stats_out` (may be NULL), frees. NULL ok. */
void eb_sampler__tegra_stop(struct eb_sampler__tegra *t, struct eb_sampler__tegra_stats *stats_out);

/* ---- internal to the sampler module (sampler.c <-> sampler_nvml.c) ---- */

/** One GPU's NVML readings of one sample; NaN (have_reasons 0) where the call failed. */
struct eb_sampler__gpu_reading {
    double util_pct, mem_util_pct;
    double mem_used_mb, mem_total_mb;
    double power_mw, temp_c;
    double sm_clock_mhz, mem_clock_mhz;
    int have_reasons;
    uint64_t reasons; /* every bit NVML reported (EB_SAMPLER_THROTTLE_*) */
};

struct eb_sampler__nvml;

/**
 * dlopen()s `lib`, resolves the NVML functions, calls nvmlInit_v2 and lists the first
 * EB_SAMPLER_MAX_GPUS devices with their names. Caller owns `*nv_out` and releases it with
 * eb_sampler__nvml_close. Call it, and every other eb_sampler__nvml_* function, from one
 * thread (the sampler thread). `log` is borrowed. When NVML cannot be used nothing stays
 * loaded and `diag` has the reason: EB_ERR_IO with the dlerror text when the library cannot be
 * loaded (the normal case on a machine without an NVIDIA driver), EB_ERR_UNSUPPORTED when it
 * loads but cannot be used ("nvmlInit_v2 failed: Driver Not Loaded", "NVML lists no usable
 * GPU", a library without nvmlInit_v2).
 */
EB_NODISCARD enum eb_status eb_sampler__nvml_open(const char *lib, const struct eb_log *log,
                                                  struct eb_sampler__nvml **nv_out,
                                                  struct eb_diag *diag);
/** Number of GPUs sampled (1..EB_SAMPLER_MAX_GPUS). */
int eb_sampler__nvml_count(const struct eb_sampler__nvml *nv);
/**
 * Reads every GPU into `out` (eb_sampler__nvml_count entries, caller-owned) and updates the
 * running aggregates; `now_ns` is the sample's time, used for the energy integral. A GPU that
 * newly shows a slowdown reason is logged once per reason (WARN).
 */
void eb_sampler__nvml_sample(struct eb_sampler__nvml *nv, uint64_t now_ns,
                             struct eb_sampler__gpu_reading *out);
/** NVML's name of GPU `i` (< eb_sampler__nvml_count; "" when unknown) and its NVML index. */
const char *eb_sampler__nvml_name(const struct eb_sampler__nvml *nv, int i, int *index_out);
/** Writes the "gpus" key and array of one sample (`r` as filled by eb_sampler__nvml_sample). */
void eb_sampler__nvml_write_json(const struct eb_sampler__nvml *nv,
                                 const struct eb_sampler__gpu_reading *r, struct eb_json_writer *w);
/**
 * Fills `gpus_out` (EB_SAMPLER_MAX_GPUS entries, caller-owned) and `*n_out` with the
 * aggregates, then calls nvmlShutdown, unloads the library and frees `nv`. NULL `nv` is a
 * no-op (`*n_out` = 0).
 */
void eb_sampler__nvml_close(struct eb_sampler__nvml *nv, struct eb_gpu_summary *gpus_out,
                            int *n_out);

#endif
