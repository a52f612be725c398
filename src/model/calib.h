/*
 * Calibration statistics of one activation tensor for `edgebench quantize`, and the three ways
 * of turning them into a quantisation range:
 *
 *   minmax      the smallest and largest value seen over the calibration images;
 *   percentile  |x| clipped at the given percentile of its histogram;
 *   entropy     |x| clipped where the 128-level quantised histogram loses the least
 *               information (KL divergence; TensorRT's entropy calibration).
 *
 * Two passes over the images: eb_calib_add_minmax on every tensor, then (percentile, entropy)
 * eb_calib_hist_begin fixes the histogram's range at the largest |x| of the first pass and
 * eb_calib_add_hist fills EB_CALIB_BINS bins over [0, that]. The range of percentile and entropy
 * is the observed [min, max] clipped to [-t, t]. Plain data: one stat per tensor, one thread.
 *     struct eb_calib_stat s;
 *     eb_calib_stat_init(&s);
 *     eb_calib_add_minmax(&s, x, n);  ...
 *     eb_calib_hist_begin(&s);  eb_calib_add_hist(&s, x, n);  ...
 *     eb_calib_range(&s, EB_CALIB_ENTROPY, 0, &lo, &hi);
 *     eb_calib_stat_fini(&s);
 */
#ifndef EB_MODEL_CALIB_H
#define EB_MODEL_CALIB_H

#include <stddef.h>
#include <stdint.h>

#define EB_CALIB_BINS 2048
/* Levels the entropy method quantises the |x| histogram to (int8's positive half). */
#define EB_CALIB_LEVELS 128
/* Counts the entropy method gives every empty bin before comparing distributions. */
#define EB_CALIB_SMOOTH 1e-4

enum eb_calib_method { EB_CALIB_MINMAX = 0, EB_CALIB_PERCENTILE, EB_CALIB_ENTROPY };

struct eb_calib_stat {
    double min, max; /* over every value seen; min > max before the first */
    uint64_t n;      /* values seen in the first pass */
    double *hist;    /* EB_CALIB_BINS counts of |x| (owned), NULL before eb_calib_hist_begin */
    double width;    /* of one bin */
    double sx2, se2; /* third pass: sum of x^2 and of the quantisation error^2 */
    double *ch;      /* third pass, per channel: sx2 and se2 pairs (owned), NULL before */
    int64_t n_ch;
};

void eb_calib_stat_init(struct eb_calib_stat *s);
void eb_calib_stat_fini(struct eb_calib_stat *s);
/** First pass: min and max of `n` values (non-finite values are ignored). */
void eb_calib_add_minmax(struct eb_calib_stat *s, const float *x, size_t n);
/** Starts the histogram over [0, max(|min|, |max|)]; -1 when out of memory. */
int eb_calib_hist_begin(struct eb_calib_stat *s);
/** Second pass: counts |x| (values beyond the range go to the last bin). */
void eb_calib_add_hist(struct eb_calib_stat *s, const float *x, size_t n);

/**
 * The threshold t on |x| below which `percentile` percent (0 < p <= 100) of the histogram's
 * mass lies: the upper edge of the first bin where the cumulative count reaches it.
 */
double eb_calib_percentile_threshold(const double *hist, int bins, double width, double percentile);
/**
 * TensorRT's entropy threshold, with bin 0 counted as bin 1 (the exact zeros of a ReLU would
 * otherwise favour every fine clip; NVIDIA's pytorch-quantization does the same): for every
 * candidate i in [EB_CALIB_LEVELS, bins], the reference
 * distribution P is hist[0..i) with the mass beyond folded into bin i-1, Q is hist[0..i) merged
 * into EB_CALIB_LEVELS levels and spread back evenly over each level's non-empty bins (non-empty
 * in P); both get EB_CALIB_SMOOTH counts on each empty bin (as ONNX Runtime smooths them) and
 * are normalised; the i of the smallest KL(P||Q) gives t = i * width (the first such i on ties).
 */
double eb_calib_entropy_threshold(const double *hist, int bins, double width);

/**
 * The range [lo, hi] of the tensor for `method` (percentile: its value). Always contains 0.
 * Returns -1 when nothing was seen.
 */
int eb_calib_range(const struct eb_calib_stat *s, enum eb_calib_method method, double percentile,
                   double *lo, double *hi);

/**
 * Third pass: adds x^2 and (x - dequantize(quantize(x)))^2 at uint8 `scale`/`zero_point` (ONNX
 * QuantizeLinear: round half to even, saturate), for eb_calib_sqnr_db; also per channel when
 * `channels` > 1 (x is [channels][n / channels], one image). -1 when out of memory or when the
 * channel count changed.
 */
int eb_calib_add_error(struct eb_calib_stat *s, const float *x, size_t n, float scale,
                       uint8_t zero_point, int64_t channels);
/** Signal-to-quantisation-noise ratio of the third pass in dB (INFINITY without error). */
double eb_calib_sqnr_db(const struct eb_calib_stat *s);
/* A channel whose power is below this share of the tensor's mean channel power (-60 dB) is
 * dead (a ReLU channel that never fires): losing it to quantisation loses nothing. */
#define EB_CALIB_DEAD_CHANNEL 1e-6

/**
 * The lowest per-channel SQNR in dB among the live channels (see EB_CALIB_DEAD_CHANNEL;
 * INFINITY when none has error, or without per-channel sums): the figure that matters for a
 * depthwise convolution, which never mixes a coarsely quantised channel with the others.
 */
double eb_calib_min_channel_sqnr_db(const struct eb_calib_stat *s);

/** uint8 asymmetric parameters of [lo, hi] (lo <= 0 <= hi): scale (hi-lo)/255, zero point. */
void eb_calib_u8_params(double lo, double hi, float *scale, uint8_t *zero_point);

/** "minmax", "percentile", "entropy". */
const char *eb_calib_method_name(enum eb_calib_method m);

#endif
