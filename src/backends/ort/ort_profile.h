/*
 * ONNX Runtime's own profile (OrtApi::EnableProfiling, SessionEndProfiling) read into the
 * per-operator table of include/eb/backend.h. Internal to the ort backend; it needs no ONNX
 * Runtime, only the file, so the rules can be tested on crafted files.
 *
 * The file is what onnxruntime/core/common/profiler.cc (Profiler::EndProfiling) writes: a JSON
 * array in Chrome's trace format, one event object per line, sorted by start time. Each
 * InferenceSession::Run adds one event {"cat":"Session","name":"model_run","ts":..,"dur":..}
 * spanning the run, and each node that ran one {"cat":"Node","name":"<node>_kernel_time",
 * "ts":..,"dur":..,"args":{"op_name":"Conv","node_index":"3",...}} inside it; "ts" and "dur" are
 * microseconds from the start of profiling.
 *
 *     struct eb_ort_profile prof = {0};
 *     st = eb_ort__profile_read(path, runs_before_reset, &prof, &diag);
 *     ... prof.nodes[0 .. prof.n_nodes), prof.runs, prof.run_total_ms ...   (every kept run)
 *     st = eb_ort__profile_select(&prof, ranges, n, &table, &diag);           (chosen runs)
 *     eb_ort__profile_fini(&prof);
 */
#ifndef EB_ORT_PROFILE_H
#define EB_ORT_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "eb/backend.h"
#include "eb/diag.h"

/** One "_kernel_time" event of a kept run, kept for eb_ort__profile_select. */
struct eb_ort_prof_event {
    uint64_t run;   /* the kept run it lies in: 0 = the first past `skip_runs` */
    size_t node;    /* index into eb_ort_profile.nodes */
    double ms;      /* its duration */
    uint64_t flops; /* of this run of the node (0 unknown) */
};

/** A profile read from one file; every string and array is owned (eb_ort__profile_fini). */
struct eb_ort_profile {
    struct eb_backend_prof_node *nodes; /* every kept run: execution order of the first */
    size_t n_nodes;
    uint64_t runs;         /* model_run events kept (those past `skip_runs`) */
    uint64_t runs_in_file; /* every model_run event in the file */
    double run_total_ms;   /* their durations summed */
    char **strings;        /* owned names and op types the nodes point at */
    size_t n_strings;
    /* Per run, for eb_ort__profile_select: */
    double *run_ms;                   /* [runs] each kept run's model_run duration, in run order */
    struct eb_ort_prof_event *events; /* the kept runs' node events, in the file's order */
    size_t n_events;
    struct eb_backend_prof_node *sel; /* the last selection's table */
    size_t *sel_of;                   /* [n_nodes] scratch: a node's place in `sel` */
};

/**
 * Reads ONNX Runtime profile `path` (borrowed) into `*out` (zeroed first; caller frees it with
 * eb_ort__profile_fini, also after a failure). The first `skip_runs` model_run events in the
 * file (the runs before the harness's profile_reset: probe, warm-up) are dropped, and so is every
 * node event that lies outside a kept run; a node's time is the sum of its "_kernel_time" events
 * in the kept runs (a node that ran several kernels in one run, or several times, adds them all).
 * A run missing from the file (ONNX Runtime stops recording at its event limit) is simply not
 * counted: `runs` says how many are in the table. EB_ERR_IO naming the file when it cannot be
 * read; EB_ERR_FORMAT naming the file and line when a line is not an event of this format;
 * EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_ort__profile_read(const char *path, uint64_t skip_runs,
                                                 struct eb_ort_profile *out, struct eb_diag *diag);

/**
 * The per-operator table of the kept runs in `ranges` (n_ranges of them, runs counted from 0 =
 * the first kept run; a run in several ranges counts once) into `*out`: the nodes that ran in
 * them, in the order they first ran there, each with the sum of its events in those runs and
 * the FLOPs of its first one; `out->runs` those of the runs that the file holds (a run past
 * its end, cut off by ONNX Runtime's event limit, is not counted), `out->run_total_ms` their
 * model_run durations. The table lives in `p` until the next call or eb_ort__profile_fini.
 * EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_ort__profile_select(struct eb_ort_profile *p,
                                                   const struct eb_run_range *ranges,
                                                   size_t n_ranges, struct eb_backend_profile *out,
                                                   struct eb_diag *diag);

/**
 * Makes a new private folder for ONNX Runtime's profile file: `<tmpdir>/edgebench-ortprof-XXXXXX`
 * (mode 0700), `tmpdir` being $TMPDIR when `tmpdir_env` (its value, borrowed; NULL = unset) is an
 * absolute path, else /tmp. The path goes into `buf` of `size` bytes. EB_ERR_IO naming the
 * folder and why when it cannot be made.
 */
EB_NODISCARD enum eb_status eb_ort__profile_dir_make(const char *tmpdir_env, char *buf, size_t size,
                                                     struct eb_diag *diag);

/**
 * Removes folder `dir` made by eb_ort__profile_dir_make with the files in it (ONNX Runtime
 * names its file after the time, so every regular file there is ours). "" does nothing. A
 * failure is only reported: 0 on success, else -1 with errno.
 */
int eb_ort__profile_dir_remove(const char *dir);

/** Frees what eb_ort__profile_read made and zeroes `p`; accepts NULL and a zeroed struct. */
void eb_ort__profile_fini(struct eb_ort_profile *p);

#endif
