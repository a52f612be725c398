/*
 * Latency statistics over a sample set: count, mean, std (sample, n-1), CoV, min, percentiles
 * (linear interpolation between closest ranks, as numpy.percentile's default), max, FPS, and
 * 95% confidence intervals on p50 and p99.
 *
 * The intervals are distribution-free (order-statistic binomial, exact ranks): for a quantile q
 * of n samples sorted x(1) <= ... <= x(n), the number B of samples below the true quantile is
 * Binomial(n, q), so P(x(l) <= quantile < x(u)) = P(l <= B < u) = F(u-1) - F(l-1) with F the
 * binomial CDF. The interval is equal-tailed: l is the largest rank with F(l-1) <= 0.025, u the
 * smallest with F(u-1) >= 0.975; its coverage is then at least 95%. When no such rank exists
 * (F(0) > 0.025 or F(n-1) < 0.975) the sample is too small for a 95% interval and the CI is
 * not available: p50 needs n >= 6, p99 needs n >= 368.
 *
 *     double ms[200] = {...};
 *     struct eb_stat_summary s;
 *     eb_stat_summarize_ms(ms, 200, &s);          // sorts ms
 *     if (s.p50_ci.available) printf("p50 %.3f [%.3f, %.3f]\n", s.p50, s.p50_ci.lo, s.p50_ci.hi);
 */
#ifndef EB_STATS_H
#define EB_STATS_H

#include <stddef.h>
#include <stdint.h>

/** How the confidence intervals are computed, as the reports state it. */
#define EB_STAT_CI_METHOD "order-statistic binomial, 95%"
/** The confidence level of the intervals. */
#define EB_STAT_CI_LEVEL 0.95
/** The interval's construction in one sentence (the top of this file), as assumptions.md says it. */
#define EB_STAT_CI_METHOD_DETAIL                                                                   \
    "distribution-free, from two order statistics: for the quantile q of n sorted samples the "    \
    "bounds are x(l) and x(u), l the largest rank with F(l-1) <= (1 - level) / 2 and u the "       \
    "smallest with F(u-1) >= (1 + level) / 2, F the Binomial(n, q) CDF (equal-tailed, exact "      \
    "ranks, coverage at least the level); no interval where the sample is too small"
/** How percentiles are computed. */
#define EB_STAT_PERCENTILE_METHOD                                                                  \
    "linear interpolation between the closest ranks of the sorted samples (numpy.percentile's "    \
    "default)"
/** How std and CoV are computed. */
#define EB_STAT_SPREAD_METHOD "sample standard deviation (n - 1); CoV = std / mean"

/** A confidence interval of a percentile from two order statistics. */
struct eb_stat_ci {
    int available;             /* 0 when n is too small for the level (the rest is then 0) */
    uint64_t rank_lo, rank_hi; /* 1-based ranks l < u of the bounds in the sorted sample */
    double lo, hi;             /* x(l) and x(u) */
    double coverage;           /* F(u-1) - F(l-1): the exact confidence, >= the level */
};

struct eb_stat_summary {
    uint64_t count;
    double mean, std, cov; /* cov = std / mean (0 when mean is 0) */
    double min, p50, p90, p95, p99, max;
    double fps; /* 1000 / mean when values are milliseconds; 0 when mean is 0 */
    struct eb_stat_ci p50_ci, p99_ci; /* EB_STAT_CI_LEVEL intervals (EB_STAT_CI_METHOD) */
};

/** Percentile q in [0,100] of sorted values (linear interpolation); 0 when n is 0. */
double eb_stat_percentile_sorted(const double *sorted, size_t n, double q);

/**
 * The equal-tailed order-statistic ranks of a `level` confidence interval on the quantile `q`
 * (0 < q < 1) of `n` samples (see the top of this file). Returns 1 and writes the 1-based ranks
 * and the exact coverage; returns 0 (writing nothing) when n is too small or an argument is out
 * of range. `coverage_out` may be NULL. Pure; thread-safe.
 */
int eb_stat_ci_ranks(uint64_t n, double q, double level, uint64_t *rank_lo_out,
                     uint64_t *rank_hi_out, double *coverage_out);

/**
 * The smallest sample count for which eb_stat_ci_ranks finds a `level` interval on the quantile
 * `q` (p50 at 95%: 6; p99: 368), searched up to `max_n`; 0 when there is none up to it. Pure.
 */
uint64_t eb_stat_ci_min_n(double q, double level, uint64_t max_n);

/**
 * The EB_STAT_CI_LEVEL interval on quantile `q` (0 < q < 1) of `n` sorted values into `out`
 * (out->available 0 when n is too small).
 */
void eb_stat_ci_sorted(const double *sorted, size_t n, double q, struct eb_stat_ci *out);

/**
 * Summarises `n` values (milliseconds). Sorts `values` in place. An empty set gives all zeros.
 */
void eb_stat_summarize_ms(double *values, size_t n, struct eb_stat_summary *out);

/*
 * Drift over a run (whether the measured frames are one steady state): the values, in the order
 * they were measured, are cut into EB_STAT_DRIFT_BLOCKS consecutive blocks of equal count (the
 * first n % blocks blocks one longer); drift_pct is the largest distance of a block's median from
 * the median of all values, in % of the latter. Medians, not means: a few long frames (an
 * interrupt, the other slot's burst) move a mean and the CoV, not a median; a warm-up that had
 * not ended, a clock that fell, a neighbour that started move a whole block. Fewer than
 * EB_STAT_DRIFT_MIN_FRAMES values are too few to tell (blocks 0: not judged).
 */
#define EB_STAT_DRIFT_BLOCKS     5
#define EB_STAT_DRIFT_MIN_BLOCK  10
#define EB_STAT_DRIFT_MIN_FRAMES (EB_STAT_DRIFT_BLOCKS * EB_STAT_DRIFT_MIN_BLOCK)

struct eb_stat_drift {
    int blocks; /* EB_STAT_DRIFT_BLOCKS, or 0 when n < EB_STAT_DRIFT_MIN_FRAMES */
    double block_p50[EB_STAT_DRIFT_BLOCKS];
    double p50;       /* of all values */
    double drift_pct; /* max |block_p50 - p50| / p50 x 100 (0 when p50 is 0) */
    int worst_block;  /* 0-based index of that block */
};

/**
 * The drift of `n` values in measurement order (see above). `scratch` holds n doubles; `values`
 * is left as it was. Pure; thread-safe.
 */
void eb_stat_drift(const double *values, size_t n, double *scratch, struct eb_stat_drift *out);

/** The 0-based first and last value index of `block` when `n` values were cut (as above). */
void eb_stat_drift_block_frames(uint64_t n, int block, uint64_t *first, uint64_t *last);

/*
 * Streaming statistics for runs of any length (soak runs: --duration of hours). A run keeps its
 * first EB_STAT_EXACT_MAX samples per series exactly, and every statistic is then computed from
 * them as above (exact). Past that threshold a slot summarises through one fixed-size
 * struct eb_stat_stream per series, fed every sample:
 *   - count, mean, std (Welford's update, sample n - 1), min and max stay exact;
 *   - the percentiles come from an HDR-style log-linear histogram of the values in nanoseconds:
 *     exact below 2^EB_STAT_HIST_SUB_BITS ns, above it 2^EB_STAT_HIST_SUB_BITS sub-buckets per
 *     power of two, a value read back as its bucket's midpoint: relative error at most
 *     EB_STAT_HIST_REL_ERR (0.4%) on every percentile (clamped to [min, max]);
 *   - the 95% intervals on p50 and p99 (and the drift blocks) come from a uniform reservoir of
 *     EB_STAT_RESERVOIR samples (Vitter's algorithm R, seeded, so a run is reproducible): the
 *     order-statistic interval of the reservoir, i.e. of a simple random sample of the run's
 *     frames - wider than the exact interval of all frames, never narrower.
 * Memory is fixed: sizeof(struct eb_stat_stream), whatever the run length.
 */
#define EB_STAT_EXACT_MAX     131072
#define EB_STAT_RESERVOIR     8192
#define EB_STAT_HIST_SUB_BITS 7
#define EB_STAT_HIST_MAX_LOG2 42 /* values up to 2^42 ns (73 minutes a frame); larger: top bucket */
#define EB_STAT_HIST_BUCKETS                                                                       \
    ((EB_STAT_HIST_MAX_LOG2 - EB_STAT_HIST_SUB_BITS + 1) << EB_STAT_HIST_SUB_BITS)
#define EB_STAT_HIST_REL_ERR 0.004 /* 1 / 2^(EB_STAT_HIST_SUB_BITS + 1), rounded up */
/** How percentiles are computed past EB_STAT_EXACT_MAX samples, as the reports state it. */
#define EB_STAT_STREAM_METHOD                                                                      \
    "past 131072 samples per series: count, mean, std, min and max stay exact; percentiles "       \
    "from a log-linear histogram (128 sub-buckets per power of two of the nanoseconds, bucket "    \
    "midpoint: within 0.4% relative); p50/p99 confidence intervals and drift blocks from a "       \
    "seeded uniform reservoir of 8192 samples"

struct eb_stat_stream {
    uint64_t count;
    double mean, m2, min, max; /* Welford */
    uint64_t rng;              /* splitmix64 state of the reservoir's draws */
    uint32_t n_res;            /* samples in the reservoir (<= EB_STAT_RESERVOIR) */
    double res[EB_STAT_RESERVOIR];
    uint64_t res_index[EB_STAT_RESERVOIR]; /* 0-based sample number of each reservoir sample */
    uint64_t hist[EB_STAT_HIST_BUCKETS];
};

/** Empties `s`; `seed` fixes the reservoir's draws. */
void eb_stat_stream_init(struct eb_stat_stream *s, uint64_t seed);

/** Adds one value (milliseconds, >= 0) to `s`. O(1), no allocation. */
void eb_stat_stream_add(struct eb_stat_stream *s, double ms);

/** Percentile q in [0,100] of the values added (the histogram; see above); 0 when empty. */
double eb_stat_stream_percentile(const struct eb_stat_stream *s, double q);

/**
 * Summarises `s` into `out` as eb_stat_summarize_ms does (percentiles and intervals as described
 * above). `scratch` holds EB_STAT_RESERVOIR doubles. Pure.
 */
void eb_stat_stream_summarize(const struct eb_stat_stream *s, double *scratch,
                              struct eb_stat_summary *out);

/**
 * The drift of the stream (as eb_stat_drift) from its reservoir: the reservoir's samples cut
 * into EB_STAT_DRIFT_BLOCKS blocks by their sample number over `s->count` samples. `scratch`
 * holds EB_STAT_RESERVOIR doubles. Pure.
 */
void eb_stat_stream_drift(const struct eb_stat_stream *s, double *scratch,
                          struct eb_stat_drift *out);

/*
 * A series over time in a fixed number of buckets (the latency-over-time chart of a run of any
 * length): each bucket holds count, mean, min and max of the values whose time falls in it. The
 * buckets start EB_STAT_SERIES_FIRST_S wide; when a value falls past the last bucket, pairs of
 * buckets merge (the width doubles) until it fits, so a run of any length ends with between
 * EB_STAT_SERIES_BUCKETS / 2 and EB_STAT_SERIES_BUCKETS buckets in use.
 */
#define EB_STAT_SERIES_BUCKETS 256
#define EB_STAT_SERIES_FIRST_S 0.125

struct eb_stat_bucket {
    uint64_t count;
    double sum, min, max;
};

struct eb_stat_series {
    double width_s; /* every bucket's width */
    size_t n_used;  /* buckets up to the last one that holds a value */
    struct eb_stat_bucket b[EB_STAT_SERIES_BUCKETS];
};

/** Empties `s`. */
void eb_stat_series_init(struct eb_stat_series *s);

/** Adds `value` at `t_s` seconds (>= 0) from the series' start. O(1) amortised. */
void eb_stat_series_add(struct eb_stat_series *s, double t_s, double value);

/*
 * Change-point (throttling onset): the two-segment least-squares split of a series of bucket
 * means: the split k (each side at least EB_STAT_CP_MIN_SIDE buckets) that minimises the sum of
 * squared deviations from each side's mean. It is a change when the split explains at least
 * EB_STAT_CP_MIN_EXPLAINED of the series' variance and the two means differ by at least
 * EB_STAT_CP_MIN_SHIFT (relative to the first side's). Pure; no allocation.
 */
#define EB_STAT_CP_MIN_SIDE      3
#define EB_STAT_CP_MIN_EXPLAINED 0.5
#define EB_STAT_CP_MIN_SHIFT     0.05
#define EB_STAT_CP_METHOD                                                                          \
    "two-segment least-squares split of the binned series (each side >= 3 bins); a change when "   \
    "it explains >= 50% of the variance and the means differ by >= 5%"

struct eb_stat_change {
    int found;            /* 0: no change (the rest is then the best split's figures or 0) */
    size_t split;         /* index of the first value after the change */
    double before, after; /* the two sides' means */
    double explained;     /* 1 - SSE(split) / SSE(one mean) */
};

/** The change-point of `n` values (see above) into `out`. */
void eb_stat_change_point(const double *values, size_t n, struct eb_stat_change *out);

#endif
