/*
 * `profile --trace`: trace.json in the run folder, in the Chrome trace event format (Perfetto
 * and chrome://tracing open it), from the slots' frame records and CUPTI's kernels.
 *
 * Each slot is one thread (tid = slot index + 1, thread_name "rgb"/"thermal") of the process
 * (pid = this process's id, process_name "edgebench"); each of its first EB_TRACE_MAX_FRAMES
 * measured frames gives four "X" events, one per stage (read, preprocess, inference,
 * postprocess; args.frame = the frame's index), back to back, ts/dur in microseconds from the
 * measured pass's start on CLOCK_MONOTONIC. Kernels go to process "GPU" (pid
 * EB_TRACE_GPU_PID), one thread per CUDA stream (tid = CUPTI's stream id, thread_name
 * "stream <id>"), inside the traced frames' span only.
 */
#ifndef EB_TRACE_H
#define EB_TRACE_H

#include "harness/metrics/cupti.h"
#include "harness/pipeline/slot.h"
#include "harness/results/llm_result.h"
#include "harness/results/result.h"

/* Measured frames per slot in the trace: the first ones (about 0.5 kB of JSON a frame). */
#define EB_TRACE_MAX_FRAMES 20000
/* The GPU's pid in trace.json (a number: every trace viewer takes one). */
#define EB_TRACE_GPU_PID 1000000000

/**
 * Writes <dir>/trace.json from the slots whose `ran[i]` is set (their records of the last
 * measured pass) and from `gpu`'s kernels (NULL = none), and fills `t` (frames, kernels, GPU
 * time, top kernels; `t->gpu` and `t->gpu_note` are the caller's). EB_ERR_IO naming the file.
 */
EB_NODISCARD enum eb_status eb_trace_write(const char *dir, const struct eb_slot *slots,
                                           const int *ran, const struct eb_cupti *gpu,
                                           struct eb_trace_result *t, struct eb_diag *diag);

/**
 * `llm --trace`: writes <dir>/trace.json from r's measured repetitions (their start times and
 * durations) and `gpu`'s kernels (NULL = none), and fills `t` as eb_trace_write does, with
 * t->frames[0] the decode steps in the trace. Thread "llm" (tid 1) of the process holds, per
 * repetition, a "prefill" and a "decode" event of cat "phase" (args.rep) and, inside the decode,
 * one "decode step" event of cat "step" per step (args rep, step, kv: the cache length it read),
 * the first EB_TRACE_MAX_FRAMES steps. Kernels: those from the first prefill's start to the
 * last step's end. EB_ERR_IO naming the file.
 */
EB_NODISCARD enum eb_status eb_trace_write_llm(const char *dir, const struct eb_llm_result *r,
                                               const struct eb_cupti *gpu,
                                               struct eb_trace_result *t, struct eb_diag *diag);

/** The top kernels as a console table (name, calls, total ms, share) under `title`. */
void eb_trace_print_kernels(FILE *fp, const char *title, const struct eb_kernel_stat *k, size_t n);

#endif
