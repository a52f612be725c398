/*
 * Calibration ranges (calib.h): min/max, |x| histograms, percentile and entropy thresholds.
 */
#include "model/calib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void eb_calib_stat_init(struct eb_calib_stat *s)
{
    s->min = INFINITY;
    s->max = -INFINITY;
    s->n = 0;
    s->hist = NULL;
    s->width = 0.0;
    s->sx2 = s->se2 = 0.0;
    s->ch = NULL;
    s->n_ch = 0;
}

void eb_calib_stat_fini(struct eb_calib_stat *s)
{
    free(s->hist);
    free(s->ch);
    s->hist = NULL;
    s->ch = NULL;
}

void eb_calib_add_minmax(struct eb_calib_stat *s, const float *x, size_t n)
{
    double lo = s->min, hi = s->max;
    for (size_t i = 0; i < n; i++) {
        const double v = x[i];
        if (!isfinite(v))
            continue;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    s->min = lo;
    s->max = hi;
    s->n += n;
}

int eb_calib_hist_begin(struct eb_calib_stat *s)
{
    const double amax = s->n == 0 ? 0.0 : fmax(fabs(s->min), fabs(s->max));
    free(s->hist);
    s->hist = calloc(EB_CALIB_BINS, sizeof(double));
    if (s->hist == NULL)
        return -1;
    s->width = amax > 0.0 ? amax / EB_CALIB_BINS : 1.0;
    return 0;
}

void eb_calib_add_hist(struct eb_calib_stat *s, const float *x, size_t n)
{
    const double inv = 1.0 / s->width;
    for (size_t i = 0; i < n; i++) {
        const double v = fabs((double)x[i]);
        if (!isfinite(v))
            continue;
        const double b = v * inv;
        s->hist[b >= EB_CALIB_BINS - 1 ? EB_CALIB_BINS - 1 : (int)b] += 1.0;
    }
}

double eb_calib_percentile_threshold(const double *hist, int bins, double width, double percentile)
{
    double total = 0.0, cum = 0.0;
    for (int b = 0; b < bins; b++)
        total += hist[b];
    const double want = total * percentile / 100.0;
    for (int b = 0; b < bins; b++) {
        cum += hist[b];
        if (cum >= want)
            return (b + 1) * width;
    }
    return bins * width;
}

/* Gives every empty bin of the counts d[0..n) EB_CALIB_SMOOTH counts (ONNX Runtime smooths its
 * distributions so): a clip that leaves some mass nothing to stand on costs log(mass/eps) for
 * it, not infinity. */
static void smooth(double *d, int n)
{
    for (int b = 0; b < n; b++)
        if (d[b] == 0.0)
            d[b] = EB_CALIB_SMOOTH;
}

/* KL(P||Q) of candidate i (eb_calib_entropy_threshold), in `p`/`q` scratch of i entries
 * (counts, smoothed, then normalised); INFINITY when P is empty. */
static double candidate_kl(const double *hist, int bins, int i, double *p, double *q)
{
    double outliers = 0.0, psum = 0.0, qsum = 0.0, kl = 0.0;
    for (int b = i; b < bins; b++)
        outliers += hist[b];
    for (int b = 0; b < i; b++)
        p[b] = hist[b];
    p[i - 1] += outliers;
    const int merged = i / EB_CALIB_LEVELS;
    for (int j = 0; j < EB_CALIB_LEVELS; j++) {
        const int start = j * merged, end = j == EB_CALIB_LEVELS - 1 ? i : start + merged;
        double total = 0.0;
        int nonzero = 0;
        for (int b = start; b < end; b++) {
            total += hist[b];
            nonzero += p[b] != 0.0;
        }
        for (int b = start; b < end; b++)
            q[b] = p[b] != 0.0 ? total / nonzero : 0.0;
    }
    for (int b = 0; b < i; b++)
        psum += p[b];
    if (psum <= 0.0)
        return INFINITY;
    smooth(p, i);
    smooth(q, i);
    psum = 0.0;
    for (int b = 0; b < i; b++) {
        psum += p[b];
        qsum += q[b];
    }
    for (int b = 0; b < i; b++) {
        const double pn = p[b] / psum, qn = q[b] / qsum;
        kl += pn * log(pn / qn);
    }
    return kl;
}

double eb_calib_entropy_threshold(const double *hist_in, int bins, double width)
{
    if (bins <= EB_CALIB_LEVELS)
        return bins * width;
    double *p = malloc((size_t)bins * 3 * sizeof(double));
    if (p == NULL)
        return bins * width; /* out of memory: the whole range, as minmax would give */
    /* Bin 0 counted as bin 1: the exact zeros of a ReLU (half of its values) would otherwise
     * make every fine clip look best (NVIDIA's pytorch-quantization does the same). */
    double *hist = p + 2 * (size_t)bins;
    memcpy(hist, hist_in, (size_t)bins * sizeof(double));
    hist[0] = hist[1];
    double best = INFINITY;
    int best_i = bins;
    for (int i = EB_CALIB_LEVELS; i <= bins; i++) {
        const double kl = candidate_kl(hist, bins, i, p, p + bins);
        if (kl < best) {
            best = kl;
            best_i = i;
        }
    }
    free(p);
    return best_i * width;
}

int eb_calib_range(const struct eb_calib_stat *s, enum eb_calib_method method, double percentile,
                   double *lo, double *hi)
{
    if (s->n == 0 || s->min > s->max)
        return -1;
    double a = s->min, b = s->max;
    if (method != EB_CALIB_MINMAX && s->hist != NULL) {
        const double t =
            method == EB_CALIB_PERCENTILE
                ? eb_calib_percentile_threshold(s->hist, EB_CALIB_BINS, s->width, percentile)
                : eb_calib_entropy_threshold(s->hist, EB_CALIB_BINS, s->width);
        a = fmax(a, -t);
        b = fmin(b, t);
    }
    *lo = fmin(a, 0.0);
    *hi = fmax(b, 0.0);
    return 0;
}

int eb_calib_add_error(struct eb_calib_stat *s, const float *x, size_t n, float scale,
                       uint8_t zero_point, int64_t channels)
{
    double sx2 = 0.0, se2 = 0.0;
    const int64_t nc = channels > 1 && n % (size_t)channels == 0 ? channels : 1;
    const size_t inner = n / (size_t)nc;
    if (nc > 1 && s->ch == NULL) {
        s->ch = calloc((size_t)nc * 2, sizeof(double));
        if (s->ch == NULL)
            return -1;
        s->n_ch = nc;
    }
    if (nc > 1 && nc != s->n_ch)
        return -1;
    for (int64_t c = 0; c < nc; c++) {
        double cx2 = 0.0, ce2 = 0.0;
        for (size_t i = (size_t)c * inner; i < (size_t)(c + 1) * inner; i++) {
            const float v = x[i];
            if (!isfinite(v))
                continue;
            float q = nearbyintf(v / scale) + (float)zero_point;
            q = q < 0.0f ? 0.0f : q > 255.0f ? 255.0f : q;
            const double e = (double)v - (double)((q - (float)zero_point) * scale);
            cx2 += (double)v * (double)v;
            ce2 += e * e;
        }
        if (nc > 1) {
            s->ch[2 * c] += cx2;
            s->ch[2 * c + 1] += ce2;
        }
        sx2 += cx2;
        se2 += ce2;
    }
    s->sx2 += sx2;
    s->se2 += se2;
    return 0;
}

double eb_calib_sqnr_db(const struct eb_calib_stat *s)
{
    if (s->se2 <= 0.0)
        return INFINITY;
    return 10.0 * log10(s->sx2 / s->se2);
}

double eb_calib_min_channel_sqnr_db(const struct eb_calib_stat *s)
{
    double worst = INFINITY, mean = 0.0;
    for (int64_t c = 0; s->ch != NULL && c < s->n_ch; c++)
        mean += s->ch[2 * c] / (double)s->n_ch;
    for (int64_t c = 0; s->ch != NULL && c < s->n_ch; c++) {
        const double x2 = s->ch[2 * c], e2 = s->ch[2 * c + 1];
        if (x2 > EB_CALIB_DEAD_CHANNEL * mean && e2 > 0.0)
            worst = fmin(worst, 10.0 * log10(x2 / e2));
    }
    return worst;
}

void eb_calib_u8_params(double lo, double hi, float *scale, uint8_t *zero_point)
{
    lo = fmin(lo, 0.0);
    hi = fmax(hi, 0.0);
    if (hi - lo <= 0.0) {
        *scale = 1.0f;
        *zero_point = 0;
        return;
    }
    const float sc = (float)((hi - lo) / 255.0);
    const double zp = nearbyint(-lo / (double)sc);
    *scale = sc;
    *zero_point = (uint8_t)(zp < 0.0 ? 0.0 : zp > 255.0 ? 255.0 : zp);
}

const char *eb_calib_method_name(enum eb_calib_method m)
{
    switch (m) {
    case EB_CALIB_MINMAX: return "minmax";
    case EB_CALIB_PERCENTILE: return "percentile";
    case EB_CALIB_ENTROPY: return "entropy";
    }
    return "?";
}
