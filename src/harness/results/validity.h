/*
 * Whether a run's numbers can be trusted: the validity verdict (VALID or INVALID with reasons)
 * and the `--warmup auto` stopping rule. Pure functions over results; report_validity.c applies
 * them to a finished run (eb_report_finish).
 *
 * A slot that ran is INVALID when
 *   - it measured fewer frames than --min_frames,
 *   - its measured phase was shorter than --min_duration_s (0 switches the check off),
 *   - its measured frames were not one steady state: the median end-to-end latency of a fifth of
 *     them (consecutive frames) is more than --max_drift_pct away from the median of all
 *     (eb_stat_drift; judged from EB_STAT_DRIFT_MIN_FRAMES frames on),
 *   - the coefficient of variation of its end-to-end latency is above --max_cov_pct (off by
 *     default: two slots sharing cores or a GPU spread each other's latencies for real, a spread
 *     the percentiles and their intervals report; a noisy neighbour shows as drift),
 *   - `--warmup auto` reached its cap without the latency settling,
 *   - it was paced (a frame rate) and dropped more than --max_drop_pct of its frames,
 *   - the machine was not quiet: other processes used more than --max_others_cpu_pct of all
 *     CPUs' time during its measured pass (not judged when that could not be read),
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
    uint64_t min_frames;       /* --min_frames */
    double min_duration_s;     /* --min_duration_s; 0 = no minimum */
    double max_drift_pct;      /* --max_drift_pct: end-to-end drift over the window in % */
    double max_cov_pct;        /* --max_cov_pct: end-to-end CoV in %; 0 = not judged */
    double max_others_cpu_pct; /* --max_others_cpu_pct: CPU share of other processes in % */
    double max_drop_pct;       /* --max_drop_pct: a paced slot's dropped frames in % */
};

/** The type of a criterion's field in struct eb_validity_criteria. */
enum eb_validity_criterion_type {
    EB_VALIDITY_CRITERION_UINT = 0, /* uint64_t */
    EB_VALIDITY_CRITERION_DOUBLE,   /* double */
};

/**
 * One threshold of struct eb_validity_criteria, as data: report.json's validity.criteria and
 * assumptions.md render the thresholds from this one table (validity.c), in its order.
 */
struct eb_validity_criterion {
    const char *key;    /* report.json validity.criteria key, e.g. "min_frames" */
    const char *option; /* the option that sets it, e.g. "--min_frames" */
    enum eb_validity_criterion_type type;
    size_t offset;        /* of the field in struct eb_validity_criteria */
    const char *rule;     /* what a slot must do against it, a phrase */
    const char *off_when; /* the value that switches the check off ("0"), NULL = always on */
};

/** The criteria table, in report order; `*n_out` gets its length. Static storage. */
const struct eb_validity_criterion *eb_validity_criteria_table(size_t *n_out);

/** The value of criterion `k` in `c` (a uint64_t field converted to double). */
double eb_validity_criterion_value(const struct eb_validity_criterion *k,
                                   const struct eb_validity_criteria *c);

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
