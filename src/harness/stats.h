/*
 * Latency statistics over a sample set: count, mean, std (sample, n-1), CoV, min, percentiles
 * (linear interpolation between closest ranks, as numpy.percentile's default), max, FPS.
 */
#ifndef EB_STATS_H
#define EB_STATS_H

#include <stddef.h>
#include <stdint.h>

struct eb_stat_summary {
    uint64_t count;
    double mean, std, cov; /* cov = std / mean (0 when mean is 0) */
    double min, p50, p90, p95, p99, max;
    double fps; /* 1000 / mean when values are milliseconds; 0 when mean is 0 */
};

/** Percentile q in [0,100] of sorted values (linear interpolation); 0 when n is 0. */
double eb_stat_percentile_sorted(const double *sorted, size_t n, double q);

/**
 * Summarises `n` values (milliseconds). Sorts `values` in place. An empty set gives all zeros.
 */
void eb_stat_summarize_ms(double *values, size_t n, struct eb_stat_summary *out);

#endif
