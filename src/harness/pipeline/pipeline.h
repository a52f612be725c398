/*
 * The measurement core. Every command that measures frames (run, compare, val, profile) drives
 * its prepared slots (harness/pipeline/slot.h) through eb_pipeline_run, so run length, source
 * looping, the dual window and camera-rate pacing exist once (`llm`, which measures a decoder's
 * prefill and decode steps rather than frames, has its core beside this one: llm_core.h):
 *
 *   - one thread per slot; the slots warm up together (a slot that has met its warm-up keeps
 *     warming up until every slot has), rewind their sources, and meet at one barrier;
 *   - the measured pass starts at the barrier (every record's times are relative to it) and
 *     lasts until every slot has met its length (eb_pipeline_length_met); a slot that has met
 *     its length keeps running, its source looping, until the others have too;
 *   - the measured window is [barrier, the earliest end of a slot's last frame]: only frames
 *     that ran entirely inside it are counted (a slot's frames after another slot stopped ran
 *     alone); the rest are kept in the records, counted as left out;
 *   - with a frame rate (--fps, --rgb_fps, --thermal_fps, synthetic=...@FPS) frames arrive on
 *     a clock that starts at the barrier: frame k arrives at barrier + k / fps. A frame that
 *     arrives while the slot is busy waits when fewer than --queue frames wait already, else it
 *     is dropped. Latency is measured from a frame's arrival; a frame whose latency exceeds
 *     1 / fps misses its deadline.
 */
#ifndef EB_PIPELINE_H
#define EB_PIPELINE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct eb_slot;
struct eb_frame_record;

/** Largest --queue: frames that may wait for a busy paced slot. */
#define EB_PIPELINE_MAX_QUEUE 64

/** Called on the caller's thread about every 200 ms while a pass runs (the progress line). */
struct eb_pipeline_hooks {
    void (*tick)(void *ctx, uint64_t started_ns); /* NULL = none */
    void *ctx;
    /* Called on a slot's thread after each measured frame is booked, outside its timed stages
     * (the live metrics endpoint); it must not wait on anything slow. NULL = none. */
    void (*frame)(void *ctx, const struct eb_slot *s, const struct eb_frame_record *rec);
    void *frame_ctx;
    /* Called once when the measured pass starts, with the barrier's time (eb_clock_ns), by the
     * last thread to reach it before any slot goes on; quick (the sampler's window mark).
     * NULL = none. */
    void (*begin)(void *ctx, uint64_t t0_ns);
    /* Called once after the pass, on the caller's thread, with the end of the measured window
     * (eb_clock_ns) when some slot ran to its end. NULL = none. Both get begin_ctx. */
    void (*end)(void *ctx, uint64_t window_end_ns);
    void *begin_ctx;
};

/**
 * Runs the `n` prepared slots (status OK; 1 or 2) through warm-up and one measured pass, as
 * the header describes. `stop` (borrowed; non-zero = stop after the current frame) is polled
 * every frame and during every wait. The outcome of each slot is in the slot: its records, its
 * window (t_barrier_ns, window_end_ns, n_counted, n_left_out), its pacing counters, and status
 * FAILED with its diag when it failed (the other slots carry on). `hooks` may be NULL.
 */
void eb_pipeline_run(struct eb_slot *const *slots, size_t n, atomic_int *stop,
                     const struct eb_pipeline_hooks *hooks);

/**
 * Whether a slot that measured `frames` frames in `elapsed_ns` has met its length: --frames N
 * and/or --duration S (with both, whichever comes last); with neither, at least --min_frames
 * and --min_duration_s (and with --data, every image of the dataset once). Pure.
 */
int eb_pipeline_length_met(int64_t frames_goal, double duration_goal_s, uint64_t frames,
                           uint64_t elapsed_ns);

#endif
