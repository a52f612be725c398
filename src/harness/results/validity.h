/*
 * Whether a run's numbers can be trusted: the validity verdict (VALID or INVALID with reasons)
 * and the `--warmup auto` stopping rule. Pure functions over results; report_validity.c applies
 * them to a finished run (eb_report_finish).
 *
 * A slot that ran is INVALID when
 *   - it measured fewer frames than --min_frames,
 *   - its measured phase was shorter than --min_duration_s (0 switches the check off),
 *   - the coefficient of variation of its end-to-end latency over the measured frames (the steady
 *     state: every frame after the warm-up) is above --max_cov_pct,
 *   - `--warmup auto` reached its cap without the latency settling,
 *   - it was paced (a frame rate) and dropped more than --max_drop_pct of its frames,
 *   - the GPU throttled during the run (NVML slowdown reasons);
 * a failed slot is INVALID with its failure. A run is INVALID when any of its slots is, when it
 * was interrupted, or when no slot ran.
 *
 * `--warmup auto`: the warm-up frames' end-to-end times are cut into consecutive windows of
 * EB_WARMUP_AUTO_WINDOW frames; warm-up stops at the end of the first window whose median is
 * within EB_WARMUP_AUTO_TOL (relative) of the previous window's median (so after 40 frames at
 * the earliest), or at the cap: EB_WARMUP_AUTO_MAX_FRAMES frames or EB_WARMUP_AUTO_MAX_S
 * seconds, whichever comes first (never before --warmup_s).
 */
#ifndef EB_VALIDITY_H
#define EB_VALIDITY_H

#include <stddef.h>
#include <stdint.h>

#define EB_WARMUP_AUTO            (-1) /* struct eb_config.warmup for `--warmup auto` */
#define EB_WARMUP_AUTO_WINDOW     20
#define EB_WARMUP_AUTO_TOL        0.02
#define EB_WARMUP_AUTO_MAX_FRAMES 1000
#define EB_WARMUP_AUTO_MAX_S      60.0

#define EB_VALIDITY_MAX_REASONS 12
#define EB_VALIDITY_REASON_MAX  224

/** The thresholds a verdict is judged against (from --min_frames, --min_duration_s, ...). */
struct eb_validity_criteria {
    uint64_t min_frames;   /* --min_frames */
    double min_duration_s; /* --min_duration_s; 0 = no minimum */
    double max_cov_pct;    /* --max_cov_pct: end-to-end CoV in % */
    double max_drop_pct;   /* --max_drop_pct: a paced slot's dropped frames in % */
};

/** A verdict. `evaluated` 0 means not judged (a skipped slot): null in report.json. */
struct eb_validity {
    int evaluated;
    int valid; /* 1 VALID, 0 INVALID (then n_reasons > 0) */
    int n_reasons;
    char reasons[EB_VALIDITY_MAX_REASONS][EB_VALIDITY_REASON_MAX];
};

/** "VALID", "INVALID", or NULL when not evaluated. */
const char *eb_validity_verdict(const struct eb_validity *v);

/** Appends a reason (dropped when the list is full) and marks the verdict INVALID. */
void eb_validity_add(struct eb_validity *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

struct eb_slot_result; /* harness/results/result.h */

/**
 * Judges one slot's result against `c`. `throttle_text` names the GPU slowdown reasons seen
 * during the run (NULL when none: not throttled). A skipped slot is not evaluated. Pure.
 */
void eb_validity_judge_slot(const struct eb_slot_result *s, const struct eb_validity_criteria *c,
                            const char *throttle_text, struct eb_validity *out);

/** State of the `--warmup auto` rule; zero it (or eb_warmup_auto_init) before the first frame. */
struct eb_warmup_auto {
    double window[EB_WARMUP_AUTO_WINDOW];
    size_t fill;     /* frames in the current window */
    double prev_p50; /* median of the previous full window */
    int have_prev;
    int stable; /* set once a window's median is within the tolerance of the previous one */
};

/** Resets the rule's state for a new warm-up. */
void eb_warmup_auto_init(struct eb_warmup_auto *w);

/**
 * Adds one warm-up frame's end-to-end time (ms). Returns 1 once the rule says the latency is
 * stable (and keeps returning 1), else 0.
 */
int eb_warmup_auto_add(struct eb_warmup_auto *w, double ms);

#endif
