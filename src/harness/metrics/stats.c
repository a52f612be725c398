#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/metrics/stats.h"

/* The binomial probabilities are summed over the mode +- this many standard deviations (plus
 * a margin): the mass outside is far below double precision, and the work is O(sqrt(n)). */
#define CI_WINDOW_SD     40.0
#define CI_WINDOW_MARGIN 50.0
/* Tolerance of the comparisons with the tail probabilities (rounding of the summed terms). */
#define CI_EPS 1e-12

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

/* log P(B = k) for B ~ Binomial(n, p), 0 < p < 1. */
static double log_binom_pmf(double n, double k, double p)
{
    return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) + k * log(p) +
           (n - k) * log1p(-p);
}

int eb_stat_ci_ranks(uint64_t n, double q, double level, uint64_t *rank_lo_out,
                     uint64_t *rank_hi_out, double *coverage_out)
{
    if (n == 0 || !(q > 0.0 && q < 1.0) || !(level > 0.0 && level < 1.0))
        return 0;
    const double tail = (1.0 - level) / 2.0;
    const double nd = (double)n;
    double mode = floor((nd + 1.0) * q);
    if (mode > nd)
        mode = nd;
    const double half = CI_WINDOW_SD * sqrt(nd * q * (1.0 - q)) + CI_WINDOW_MARGIN;
    const double k_lo = mode - half > 0.0 ? floor(mode - half) : 0.0;
    const double k_end = mode + half < nd - 1.0 ? ceil(mode + half) : nd - 1.0;
    /* F(k) summed from k_lo; below it F is 0 to double precision. The ranks are searched among
     * k = l-1 and k = u-1 in 0..n-1 (u <= n). */
    double cdf = 0.0, cdf_at_lo = 0.0;
    uint64_t lo = 0, hi = 0;
    for (double k = k_lo; k <= k_end; k += 1.0) {
        cdf += exp(log_binom_pmf(nd, k, q));
        if (cdf <= tail + CI_EPS) {
            lo = (uint64_t)k + 1;
            cdf_at_lo = cdf;
        }
        if (cdf >= 1.0 - tail - CI_EPS) {
            hi = (uint64_t)k + 1;
            break;
        }
    }
    if (lo == 0 || hi == 0 || lo >= hi)
        return 0;
    *rank_lo_out = lo;
    *rank_hi_out = hi;
    if (coverage_out != NULL)
        *coverage_out = cdf - cdf_at_lo;
    return 1;
}

uint64_t eb_stat_ci_min_n(double q, double level, uint64_t max_n)
{
    uint64_t lo, hi;
    for (uint64_t n = 1; n <= max_n; n++)
        if (eb_stat_ci_ranks(n, q, level, &lo, &hi, NULL))
            return n;
    return 0;
}

void eb_stat_ci_sorted(const double *sorted, size_t n, double q, struct eb_stat_ci *out)
{
    memset(out, 0, sizeof(*out));
    uint64_t lo, hi;
    double coverage;
    if (!eb_stat_ci_ranks(n, q, EB_STAT_CI_LEVEL, &lo, &hi, &coverage))
        return;
    out->available = 1;
    out->rank_lo = lo;
    out->rank_hi = hi;
    out->lo = sorted[lo - 1];
    out->hi = sorted[hi - 1];
    out->coverage = coverage;
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
    eb_stat_ci_sorted(values, n, 0.50, &out->p50_ci);
    eb_stat_ci_sorted(values, n, 0.99, &out->p99_ci);
}

void eb_stat_drift_block_frames(uint64_t n, int block, uint64_t *first, uint64_t *last)
{
    const uint64_t base = n / EB_STAT_DRIFT_BLOCKS, extra = n % EB_STAT_DRIFT_BLOCKS;
    const uint64_t b = (uint64_t)block;
    *first = b * base + (b < extra ? b : extra);
    *last = *first + base + (b < extra) - 1;
}

static double median_of(const double *values, size_t n, double *scratch)
{
    memcpy(scratch, values, n * sizeof(double));
    qsort(scratch, n, sizeof(double), cmp_double);
    return eb_stat_percentile_sorted(scratch, n, 50);
}

void eb_stat_drift(const double *values, size_t n, double *scratch, struct eb_stat_drift *out)
{
    memset(out, 0, sizeof(*out));
    if (n < EB_STAT_DRIFT_MIN_FRAMES)
        return;
    out->blocks = EB_STAT_DRIFT_BLOCKS;
    out->p50 = median_of(values, n, scratch);
    for (int b = 0; b < EB_STAT_DRIFT_BLOCKS; b++) {
        uint64_t first = 0, last = 0;
        eb_stat_drift_block_frames(n, b, &first, &last);
        out->block_p50[b] = median_of(values + first, (size_t)(last - first + 1), scratch);
        const double d = out->p50 > 0 ? 100.0 * fabs(out->block_p50[b] - out->p50) / out->p50 : 0;
        if (d > out->drift_pct) {
            out->drift_pct = d;
            out->worst_block = b;
        }
    }
}
