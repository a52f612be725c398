/*
 * Parser for tegrastats lines (every format variant in design.md §2) and the
 * `edgebench tegrastats FILE|-` command.
 */
#ifndef EB_TEGRASTATS_H
#define EB_TEGRASTATS_H

#include <stdio.h>

#include "eb/json.h"

#define EB_TEGRA_MAX_CPUS 32
#define EB_TEGRA_MAX_TEMPS 32
#define EB_TEGRA_MAX_RAILS 32
#define EB_TEGRA_NAME_MAX 32

enum eb_tegra_status {
    EB_TEGRA_OK = 0,      /* RAM and CPU (at least) were found and every known token parsed */
    EB_TEGRA_PARTIAL,     /* some fields found, some known tokens malformed or missing */
    EB_TEGRA_MALFORMED,   /* nothing recognisable */
};

struct eb_tegra_cpu {
    int online;       /* 0 for an "off" core */
    double load_pct;
    double freq_mhz;  /* < 0 when not printed */
};

struct eb_tegra_temp { char name[EB_TEGRA_NAME_MAX]; double c; };
struct eb_tegra_rail { char name[EB_TEGRA_NAME_MAX]; double cur_mw, avg_mw, peak_mw; int has_peak; };

/* Numeric fields are NaN when absent (written as null). */
struct eb_tegra_sample {
    enum eb_tegra_status status;
    char time[32]; /* "MM-DD-YYYY HH:MM:SS" as printed, or "" */
    double ram_used_mb, ram_total_mb, swap_used_mb, swap_total_mb;
    int n_cpus;
    struct eb_tegra_cpu cpus[EB_TEGRA_MAX_CPUS];
    double cpu_avg_load_pct;
    double emc_load_pct, emc_freq_mhz;
    double gpu_load_pct, gpu_freq_mhz;
    int n_temps;
    struct eb_tegra_temp temps[EB_TEGRA_MAX_TEMPS];
    int n_rails;
    struct eb_tegra_rail rails[EB_TEGRA_MAX_RAILS];
    double power_total_mw; /* VDD_IN, POM_5V_IN or VIN_SYS_5V0 (current) */
};

/** Parses one line (no allocation; never fails: the status field says how it went). */
void eb_tegrastats_parse_line(const char *line, struct eb_tegra_sample *out);

/** Writes the sample as one JSON object with the keys documented in the README. */
void eb_tegrastats_write_json(const struct eb_tegra_sample *s, struct eb_json_writer *w);

/**
 * `edgebench tegrastats [--summary] FILE|-`: one JSON object per input line on `out`, or with
 * --summary mean/min/max per numeric field. Returns the process exit code (0, 1 I/O, 2 usage).
 */
int eb_tegrastats_main(int argc, char **argv, FILE *out, FILE *err);

#endif
