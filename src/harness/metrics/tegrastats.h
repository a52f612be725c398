/*
 * Parser for tegrastats lines (every format variant in design.md §2) and the
 * `edgebench tegrastats FILE|-` command.
 */
#ifndef EB_TEGRASTATS_H
#define EB_TEGRASTATS_H

#include <stdatomic.h>
#include <stdio.h>

#include "eb/json.h"

#define EB_TEGRA_MAX_CPUS  32
#define EB_TEGRA_MAX_TEMPS 32
#define EB_TEGRA_MAX_RAILS 32
#define EB_TEGRA_NAME_MAX  32

enum eb_tegra_status {
    EB_TEGRA_OK = 0,    /* RAM and CPU (at least) were found and every known token parsed */
    EB_TEGRA_PARTIAL,   /* some fields found, some known tokens malformed or missing */
    EB_TEGRA_MALFORMED, /* nothing recognisable */
};

struct eb_tegra_cpu {
    int online; /* 0 for an "off" core */
    double load_pct;
    double freq_mhz; /* < 0 when not printed */
};

struct eb_tegra_temp {
    char name[EB_TEGRA_NAME_MAX];
    double c;
};
struct eb_tegra_rail {
    char name[EB_TEGRA_NAME_MAX];
    double cur_mw, avg_mw, peak_mw;
    int has_peak;
};

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

/**
 * Parses one line (no allocation; never fails: the status field says how it went).
 *
 * `line` (borrowed, NUL-terminated, may be NULL = malformed) may end with a newline. `*out` is
 * overwritten entirely. Rules:
 * - keywords (RAM, SWAP, IRAM, CPU, EMC_FREQ, GR3D_FREQ) match in any case; temperature names
 *   are lower-cased ("CV0@42.7C" -> "cv0"); rail names are kept as printed;
 * - a `cur/max` temperature keeps the current value; a rail keeps cur, avg and (when printed) peak;
 * - GR3D_FREQ `l%@[f,f]` keeps the first frequency; GR3D2_FREQ and engines (NVDEC, NVENC, VIC,
 *   APE, NVJPG, OFA, MSENC, NVDLA...) are skipped, as is every unknown word;
 * - status OK: RAM and CPU parsed and no recognised token was malformed; PARTIAL: at least one
 *   recognised token (RAM, SWAP, IRAM, CPU, EMC, GR3D, a temperature, a rail, or a VDD_/POM_/VIN_
 *   name without a value) but something malformed or RAM/CPU missing; MALFORMED: none (engines
 *   and a timestamp alone do not count);
 * - a malformed CPU entry inside well-formed brackets is kept as an online core with NaN load;
 *   an unclosed CPU list (truncated line) leaves n_cpus = 0;
 * - at most EB_TEGRA_MAX_* cpus/temps/rails are kept (extra ones are ignored); a repeated
 *   temperature or rail name overwrites the earlier value.
 * Thread-safe (no shared state).
 */
void eb_tegrastats_parse_line(const char *line, struct eb_tegra_sample *out);

/** "ok", "partial" or "malformed" (static string). */
const char *eb_tegrastats_status_name(enum eb_tegra_status st);

/**
 * Writes the sample as one JSON object to `w` (borrowed; errors are sticky in `w`). Keys, in
 * order: status, time (null when absent), ram_used_mb, ram_total_mb, swap_used_mb,
 * swap_total_mb, cpu (array of {load_pct, freq_mhz} or null for an off core; null when no CPU
 * field), cpu_avg_load_pct, emc_load_pct, emc_freq_mhz, gpu_load_pct, gpu_freq_mhz, temps_c
 * (object name -> degC), rails_mw (object name -> {cur, avg[, peak]}), power_total_mw. NaN and
 * absent fields are written as null.
 */
void eb_tegrastats_write_json(const struct eb_tegra_sample *s, struct eb_json_writer *w);

/**
 * `edgebench tegrastats [--summary] FILE|-`: one compact JSON object per non-blank input line on
 * `out` (JSONL; blank or whitespace-only lines are skipped and not counted), or with --summary
 * one object: {"lines","ok","partial","malformed", then for ram_used_mb, ram_total_mb,
 * swap_used_mb, cpu_avg_load_pct, emc_load_pct, emc_freq_mhz, gpu_load_pct, gpu_freq_mhz,
 * power_total_mw an object {"mean","min","max","n"}, "temps_c": {name: {...}}, "rails_mw":
 * {name: {"cur": {...}}}} (at most 64 temperature and 64 rail names). `argv` holds the
 * arguments after the subcommand (argv[0] is the first option or FILE, as src/app/main.c passes
 * `argv + 2`). Memory does not grow with the input: one line buffer of EB_TEGRASTATS_LINE_MAX
 * bytes (a longer line, or one with a NUL byte, is read through to its end and counts as one
 * `malformed` record) and running aggregates. `stop` (borrowed, may be NULL; non-zero = a
 * signal arrived) is looked at between lines and while an over-long line is skipped: the input
 * read so far is written out (the summary, with --summary) and the exit code is 130. `out` and
 * `err` are borrowed. Returns the process exit code: 0 success, 1 unreadable input or failed
 * output (one line on `err` naming the file), 2 bad usage (usage on `err`), 130 stopped.
 */
/** The longest tegrastats line read (bytes, newline excluded); real lines are under 1 KiB. */
#define EB_TEGRASTATS_LINE_MAX 8192

int eb_tegrastats_main(int argc, char **argv, FILE *out, FILE *err, const atomic_int *stop);

#endif
