/*
 * `edgebench profile`: the options of `run` plus --ncu, --ncu_top N, --ncu_path PATH. Runs the
 * workload once in this process with --profile on (the run folder and its reports as `run`
 * writes them), then, with --ncu, Nsight Compute over a short re-run of the same command line
 * for the kernels of the slowest nodes of the per-operator profile (ncu.md, ncu.json).
 *
 *     struct eb_config cfg;
 *     struct eb_profile_options po;
 *     int help, code = eb_profile_parse(argc, argv, &cfg, &po, &help, stderr);
 *     if (code == EB_EXIT_OK && !help)
 *         code = eb_profile_run(&cfg, &po, &env, argv0);
 *     eb_profile_options_fini(&po);
 */
#ifndef EB_PROFILE_H
#define EB_PROFILE_H

#include <stdatomic.h>
#include <stdio.h>

#include "harness/cmd/config.h"
#include "harness/cmd/run.h"

#define EB_PROFILE_NCU_TOP_DEFAULT 5
/* --ncu_timeout_s: the most one ncu command (the profiled re-run, an import) may take. Nsight
 * Compute replays every profiled kernel many times: minutes are usual, an hour is not. */
#define EB_PROFILE_NCU_TIMEOUT_DEFAULT 1800
#define EB_PROFILE_NCU_TIMEOUT_MAX     86400
/* The short re-run under ncu: measured and warm-up frames. */
#define EB_PROFILE_NCU_FRAMES "3"
#define EB_PROFILE_NCU_WARMUP "1"

struct eb_profile_options {
    int ncu;              /* --ncu */
    int ncu_top;          /* --ncu_top N: 1..EB_NCU_MAX_TARGETS */
    const char *ncu_path; /* --ncu_path PATH (borrowed from argv); NULL: "ncu" on PATH */
    int ncu_timeout_s;    /* --ncu_timeout_s S: 1..EB_PROFILE_NCU_TIMEOUT_MAX */
    int trace;            /* --trace: trace.json and the top kernels (cfg->trace) */
    int nsys;             /* --nsys: the workload again under Nsight Systems */
    char **run_argv;      /* run's options, in order (malloc'd array of borrowed strings) */
    int run_argc;
};

/**
 * Parses `profile`'s arguments (argv[0] is the first option): its own options into `po`, the
 * rest through eb_config_parse into `cfg` with cfg->profile set. `--help` anywhere sets
 * *help_out and returns EB_EXIT_OK. A bad option prints one line "edgebench: error: ..." to
 * `err` and returns EB_EXIT_USAGE. `po` needs eb_profile_options_fini whatever the result.
 */
int eb_profile_parse(int argc, char **argv, struct eb_config *cfg, struct eb_profile_options *po,
                     int *help_out, FILE *err);

/** Frees what eb_profile_parse allocated; accepts a zeroed struct. */
void eb_profile_options_fini(struct eb_profile_options *po);

/** Prints `edgebench profile --help`. */
void eb_profile_print_help(FILE *fp);

/** A workload to run again under Nsight Systems (--nsys of `profile` and `llm`). */
struct eb_nsys_job {
    const char *subcmd;  /* "run", "llm" */
    const char *capture; /* the NVTX range gating the capture, "<name>@<domain>" */
    char *const *args;   /* the subcommand's options for the re-run (borrowed); n_args of them */
    int n_args;
    const char *dir;   /* the run folder: nsys.nsys-rep, nsys.log, nsys_kernels.csv, nsys-run/ */
    const char *argv0; /* this program, when /proc/self/exe cannot say */
    int quiet;
    const atomic_int *stop; /* Ctrl-C: forwarded to the child's process group */
    FILE *console;          /* errors and the progress line */
    FILE *out;              /* the top-kernels table */
};

/**
 * Runs `nsys profile --trace=cuda,nvtx --capture-range=nvtx --nvtx-capture <capture>
 * --capture-range-end=stop ... <self> <subcmd> <args> --db none --output <dir>/nsys-run`, then
 * `nsys stats --report cuda_gpu_kern_sum` into nsys_kernels.csv, and prints its top kernels.
 * Returns `run_code` when both ran, else EB_EXIT_USAGE (nsys missing or failed, one line said
 * why) or EB_EXIT_INTERRUPTED.
 */
int eb_profile_nsys(const struct eb_nsys_job *job, int run_code);

/**
 * Runs the profile (eb_run_main with `env`), then with po->ncu Nsight Compute as child
 * processes (no shell): the re-run `<self> run <run options> --profile --frames 3 --warmup 1
 * --output <run folder>/ncu-run` under `ncu --nvtx --nvtx-include edgebench@<range>/ ...
 * --metrics ... --export <run folder>/ncu`, then two imports of that report as CSV (plain and
 * with --print-nvtx-rename kernel) to learn each kernel's range; writes ncu.json and ncu.md.
 * `argv0` finds this executable where /proc/self/exe cannot. Each ncu command runs in its own
 * process group, bounded by po->ncu_timeout_s: past it, or when env->stop is set (the stop is
 * forwarded), the group is sent SIGTERM, then SIGKILL 5 s later, and the child is reaped.
 * Returns the run's EB_EXIT_* code; EB_EXIT_USAGE (2) when ncu is not found, fails, times out
 * or has no node to target, EB_EXIT_INTERRUPTED when stopped (one line on env->console; the
 * run's reports and ncu.json/ncu.md are written all the same), EB_EXIT_WRITE_FAILED when a
 * report file could not be written.
 */
int eb_profile_run(const struct eb_config *cfg, const struct eb_profile_options *po,
                   const struct eb_run_env *env, const char *argv0);

#endif
