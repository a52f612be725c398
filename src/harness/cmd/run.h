/*
 * `edgebench run`: sets up the two slots, runs them (in parallel in dual mode), monitors
 * memory per frame, runs the sampler, and writes the reports. Returns the process exit code.
 */
#ifndef EB_RUN_H
#define EB_RUN_H

#include <stdatomic.h>
#include <stdio.h>

#include "harness/cmd/config.h"

#define EB_EXIT_OK          0
#define EB_EXIT_NOTHING_RAN 1
#define EB_EXIT_USAGE       2
#define EB_EXIT_SLOT_FAILED 3
/* the slots ran, but the monitored memory exceeded the limit. Precedence where several apply:
 * WRITE_FAILED > INTERRUPTED > NOTHING_RAN > SLOT_FAILED > MEM_VIOLATIONS. */
#define EB_EXIT_MEM_VIOLATIONS 5
/* a file of the output folder (a report, run.log, metrics.jsonl, a CSV...) could not be written,
 * or the folder not made: one error line names it and why; what could be written is kept. First
 * in precedence: a lost report is the outcome a user most needs to hear of. */
#define EB_EXIT_WRITE_FAILED 6
#define EB_EXIT_INTERRUPTED  130

/* Bytes kept free below PATH_MAX (4096) after an output folder's path, for the run folder's
 * name ("/<YYYYmmdd-HHMMSS>.<mmm>-thermal") and the longest file name in it
 * ("/.report.html.tmp.<pid>", "/detections_thermal.json"): a longer --output is refused before
 * anything is made or measured. */
#define EB_RUN_NAME_ROOM 128

/* --data without --conf: the slot detects at this threshold, customary for mAP (as val's
 * EB_VAL_CONF_DEFAULT). */
#define EB_RUN_DATA_CONF 0.001

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

/**
 * Creates folder `parent` and its missing parents, then a new folder
 * <parent>/<YYYYmmdd-HHMMSS>.<mmm>-<suffix> (local time, milliseconds) whose path goes to
 * `dir_out` (`size` bytes). The milliseconds are raised past those of every folder of the same
 * second already in `parent`, whatever its suffix, so that run folders sort (byte order, `ls`)
 * in the order they were made. `flag` names the option in messages ("--output"). EB_ERR_IO or
 * EB_ERR_INVALID_ARG with one line naming the folder.
 */
EB_NODISCARD enum eb_status eb_run_make_dir(const char *parent, const char *suffix,
                                            const char *flag, char *dir_out, size_t size,
                                            struct eb_diag *diag);

/** Creates folder `path` and its missing parents (mkdir -p); `flag` as for eb_run_make_dir. */
EB_NODISCARD enum eb_status eb_run_mkdir_p(const char *path, const char *flag,
                                           struct eb_diag *diag);

struct eb_slot_setup;

/**
 * Fills the model-running part of a slot setup from the configuration, as `run` does for each
 * slot: backend choice and configuration (device, threads, passes, qdq, precision, kernels,
 * memory limit, ONNX Runtime library), preprocess/decode placement, drift frames, imgsz, conf
 * and iou. Leaves the model, source, frames and warm-up fields alone. `log` is stored
 * (borrowed) as the backend's logger. Used by `edgebench val` to run a model exactly as `run`.
 */
void eb_run_model_setup(const struct eb_config *cfg, const struct eb_log *log,
                        struct eb_slot_setup *su);

/**
 * Fills the measuring part of slot `slot`'s setup from the configuration (harness/pipeline/pipeline.h):
 * --frames, --duration, the validity minimums that make the default length, looping, the
 * slot's frame rate and --queue, the warm-up. Used by every command that measures.
 */
void eb_run_length_setup(const struct eb_config *cfg, int slot, struct eb_slot_setup *su);

#endif
