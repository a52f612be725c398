#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/stats.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double eb_stat_percentile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return 0.0;
    if (q <= 0)
        return sorted[0];
    if (q >= 100)
        return sorted[n - 1];
    double rank = q / 100.0 * (double)(n - 1);
    size_t lo = (size_t)floor(rank);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double frac = rank - (double)lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

void eb_stat_summarize_ms(double *values, size_t n, struct eb_stat_summary *out)
{
    memset(out, 0, sizeof(*out));
    if (n == 0)
        return;
    qsort(values, n, sizeof(double), cmp_double);
    /* Two-pass mean and variance: exact enough for millisecond samples. */
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += values[i];
    double mean = sum / (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (values[i] - mean) * (values[i] - mean);
    out->count = n;
    out->mean = mean;
    out->std = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
    out->cov = mean > 0 ? out->std / mean : 0.0;
    out->min = values[0];
    out->max = values[n - 1];
    out->p50 = eb_stat_percentile_sorted(values, n, 50);
    out->p90 = eb_stat_percentile_sorted(values, n, 90);
    out->p95 = eb_stat_percentile_sorted(values, n, 95);
    out->p99 = eb_stat_percentile_sorted(values, n, 99);
    out->fps = mean > 0 ? 1000.0 / mean : 0.0;
}
