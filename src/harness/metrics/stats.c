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

/* ---- streaming statistics (soak runs) ---------------------------------------------------- */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void eb_stat_stream_init(struct eb_stat_stream *s, uint64_t seed)
{
    memset(s, 0, sizeof(*s));
    s->rng = seed;
}

#define SUB_COUNT ((uint64_t)1 << EB_STAT_HIST_SUB_BITS)

static size_t hist_index(uint64_t v)
{
    if (v < SUB_COUNT)
        return (size_t)v;
    int m = 63 - __builtin_clzll(v);
    if (m > EB_STAT_HIST_MAX_LOG2)
        return EB_STAT_HIST_BUCKETS - 1;
    const int shift = m - EB_STAT_HIST_SUB_BITS;
    return (size_t)(((uint64_t)(shift + 1) << EB_STAT_HIST_SUB_BITS) + ((v >> shift) - SUB_COUNT));
}

/* The midpoint of bucket `i` in nanoseconds. */
static double hist_mid(size_t i)
{
    if (i < SUB_COUNT)
        return (double)i;
    const uint64_t shift = i / SUB_COUNT - 1;
    const uint64_t top = i % SUB_COUNT + SUB_COUNT;
    const double lo = (double)(top << shift), width = (double)((uint64_t)1 << shift);
    return lo + (width - 1.0) / 2.0;
}

void eb_stat_stream_add(struct eb_stat_stream *s, double ms)
{
    if (!(ms >= 0.0))
        ms = 0.0;
    const uint64_t k = s->count++;
    if (k == 0 || ms < s->min)
        s->min = ms;
    if (k == 0 || ms > s->max)
        s->max = ms;
    const double d = ms - s->mean;
    s->mean += d / (double)s->count;
    s->m2 += d * (ms - s->mean);
    const double ns = ms * 1e6;
    s->hist[hist_index(ns >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)llround(ns))]++;
    /* Algorithm R: sample k (0-based) replaces a random slot with probability R / (k + 1). */
    if (k < EB_STAT_RESERVOIR) {
        s->res[k] = ms;
        s->res_index[k] = k;
        s->n_res = (uint32_t)(k + 1);
    } else {
        const uint64_t j = splitmix64(&s->rng) % (k + 1);
        if (j < EB_STAT_RESERVOIR) {
            s->res[j] = ms;
            s->res_index[j] = k;
        }
    }
}

/* The value of the 0-based rank `r` of the histogram (bucket midpoint, clamped to min/max). */
static double hist_rank_value(const struct eb_stat_stream *s, uint64_t r)
{
    uint64_t cum = 0;
    for (size_t i = 0; i < EB_STAT_HIST_BUCKETS; i++) {
        cum += s->hist[i];
        if (cum > r) {
            double v = hist_mid(i) / 1e6;
            return v < s->min ? s->min : v > s->max ? s->max : v;
        }
    }
    return s->max;
}

double eb_stat_stream_percentile(const struct eb_stat_stream *s, double q)
{
    if (s->count == 0)
        return 0.0;
    if (q <= 0)
        return s->min;
    if (q >= 100)
        return s->max;
    const double rank = q / 100.0 * (double)(s->count - 1);
    const uint64_t lo = (uint64_t)floor(rank);
    const uint64_t hi = lo + 1 < s->count ? lo + 1 : lo;
    const double a = hist_rank_value(s, lo), b = hist_rank_value(s, hi);
    return a + (b - a) * (rank - (double)lo);
}

void eb_stat_stream_summarize(const struct eb_stat_stream *s, double *scratch,
                              struct eb_stat_summary *out)
{
    memset(out, 0, sizeof(*out));
    if (s->count == 0)
        return;
    out->count = s->count;
    out->mean = s->mean;
    out->std = s->count > 1 ? sqrt(s->m2 / (double)(s->count - 1)) : 0.0;
    out->cov = s->mean > 0 ? out->std / s->mean : 0.0;
    out->min = s->min;
    out->max = s->max;
    out->p50 = eb_stat_stream_percentile(s, 50);
    out->p90 = eb_stat_stream_percentile(s, 90);
    out->p95 = eb_stat_stream_percentile(s, 95);
    out->p99 = eb_stat_stream_percentile(s, 99);
    out->fps = s->mean > 0 ? 1000.0 / s->mean : 0.0;
    memcpy(scratch, s->res, s->n_res * sizeof(double));
    qsort(scratch, s->n_res, sizeof(double), cmp_double);
    eb_stat_ci_sorted(scratch, s->n_res, 0.50, &out->p50_ci);
    eb_stat_ci_sorted(scratch, s->n_res, 0.99, &out->p99_ci);
}

void eb_stat_stream_drift(const struct eb_stat_stream *s, double *scratch,
                          struct eb_stat_drift *out)
{
    memset(out, 0, sizeof(*out));
    if (s->count < EB_STAT_DRIFT_MIN_FRAMES || s->n_res < EB_STAT_DRIFT_MIN_FRAMES)
        return;
    out->blocks = EB_STAT_DRIFT_BLOCKS;
    out->p50 = median_of(s->res, s->n_res, scratch);
    for (int b = 0; b < EB_STAT_DRIFT_BLOCKS; b++) {
        uint64_t first = 0, last = 0;
        eb_stat_drift_block_frames(s->count, b, &first, &last);
        size_t m = 0;
        for (uint32_t i = 0; i < s->n_res; i++)
            if (s->res_index[i] >= first && s->res_index[i] <= last)
                scratch[m++] = s->res[i];
        qsort(scratch, m, sizeof(double), cmp_double);
        out->block_p50[b] = eb_stat_percentile_sorted(scratch, m, 50);
        const double d = out->p50 > 0 ? 100.0 * fabs(out->block_p50[b] - out->p50) / out->p50 : 0;
        if (d > out->drift_pct) {
            out->drift_pct = d;
            out->worst_block = b;
        }
    }
}

/* ---- bucketed series --------------------------------------------------------------------- */

void eb_stat_series_init(struct eb_stat_series *s)
{
    memset(s, 0, sizeof(*s));
    s->width_s = EB_STAT_SERIES_FIRST_S;
}

static void bucket_merge(struct eb_stat_bucket *into, const struct eb_stat_bucket *b)
{
    if (b->count == 0)
        return;
    if (into->count == 0) {
        *into = *b;
        return;
    }
    into->count += b->count;
    into->sum += b->sum;
    into->min = b->min < into->min ? b->min : into->min;
    into->max = b->max > into->max ? b->max : into->max;
}

void eb_stat_series_add(struct eb_stat_series *s, double t_s, double value)
{
    if (!(t_s >= 0.0))
        t_s = 0.0;
    while (t_s >= s->width_s * EB_STAT_SERIES_BUCKETS) {
        for (size_t i = 0; i < EB_STAT_SERIES_BUCKETS / 2; i++) {
            struct eb_stat_bucket m = s->b[2 * i];
            bucket_merge(&m, &s->b[2 * i + 1]);
            s->b[i] = m;
        }
        memset(&s->b[EB_STAT_SERIES_BUCKETS / 2], 0, EB_STAT_SERIES_BUCKETS / 2 * sizeof(s->b[0]));
        s->width_s *= 2.0;
        s->n_used = (s->n_used + 1) / 2;
    }
    const size_t i = (size_t)(t_s / s->width_s);
    const struct eb_stat_bucket one = {.count = 1, .sum = value, .min = value, .max = value};
    bucket_merge(&s->b[i], &one);
    if (i + 1 > s->n_used)
        s->n_used = i + 1;
}

/* ---- change-point ------------------------------------------------------------------------ */

void eb_stat_change_point(const double *values, size_t n, struct eb_stat_change *out)
{
    memset(out, 0, sizeof(*out));
    if (n < 2 * EB_STAT_CP_MIN_SIDE)
        return;
    double total = 0, total_sq = 0;
    for (size_t i = 0; i < n; i++) {
        total += values[i];
        total_sq += values[i] * values[i];
    }
    const double sse_all = total_sq - total * total / (double)n;
    double best = INFINITY, left = 0, left_sq = 0;
    for (size_t k = 1; k < n; k++) {
        left += values[k - 1];
        left_sq += values[k - 1] * values[k - 1];
        if (k < EB_STAT_CP_MIN_SIDE || n - k < EB_STAT_CP_MIN_SIDE)
            continue;
        const double right = total - left, right_sq = total_sq - left_sq;
        const double sse =
            (left_sq - left * left / (double)k) + (right_sq - right * right / (double)(n - k));
        if (sse < best) {
            best = sse;
            out->split = k;
            out->before = left / (double)k;
            out->after = right / (double)(n - k);
        }
    }
    out->explained = sse_all > 0 ? 1.0 - best / sse_all : 0.0;
    if (out->explained < 0)
        out->explained = 0;
    const double base = fabs(out->before) > 0 ? fabs(out->before) : 1.0;
    out->found = sse_all > 0 && out->explained >= EB_STAT_CP_MIN_EXPLAINED &&
                 fabs(out->after - out->before) / base >= EB_STAT_CP_MIN_SHIFT;
}
