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

#endif
