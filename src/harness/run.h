/*
 * `edgebench run`: sets up the two slots, runs them (in parallel in dual mode), monitors
 * memory per frame, runs the sampler, and writes the reports. Returns the process exit code.
 */
#ifndef EB_RUN_H
#define EB_RUN_H

#include <stdatomic.h>
#include <stdio.h>

#include "harness/config.h"

#define EB_EXIT_OK          0
#define EB_EXIT_NOTHING_RAN 1
#define EB_EXIT_USAGE       2
#define EB_EXIT_SLOT_FAILED 3
#define EB_EXIT_INTERRUPTED 130

struct eb_run_env {
    atomic_int *stop;           /* non-zero (the signal number) to stop early; set by a signal
                                    handler, read by every thread (lock-free); borrowed */
    const char *command_line;   /* borrowed */
    const char *version;        /* borrowed */
    FILE *console;              /* where logs and progress go (stderr) */
    const char *tegrastats_cmd; /* "tegrastats" (tests may point elsewhere) */
    char *dir_out;              /* optional (NULL): receives the run folder once it is made */
    size_t dir_out_size;
};

/** Runs a benchmark as configured; writes the run folder; returns an EB_EXIT_* code. */
int eb_run_main(const struct eb_config *cfg, const struct eb_run_env *env);

#endif
