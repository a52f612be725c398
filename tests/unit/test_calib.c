/*
 * Calibration ranges (model/calib.h) on crafted values and histograms whose thresholds are
 * worked out by hand in each case.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "eb_test.h"
#include "model/calib.h"

EB_TEST(minmax_range_contains_zero)
{
    struct eb_calib_stat s;
    double lo, hi;
    const float a[] = {-1.0f, 0.5f, 3.0f, NAN}, b[] = {1.0f, 2.0f};
    eb_calib_stat_init(&s);
    ASSERT_EQ_INT(eb_calib_range(&s, EB_CALIB_MINMAX, 0, &lo, &hi), -1); /* nothing seen */
    eb_calib_add_minmax(&s, a, 4);                                       /* NaN ignored */
    ASSERT_EQ_INT(eb_calib_range(&s, EB_CALIB_MINMAX, 0, &lo, &hi), 0);
    ASSERT_NEAR(lo, -1.0, 0);
    ASSERT_NEAR(hi, 3.0, 0);
    eb_calib_stat_fini(&s);
    eb_calib_stat_init(&s);
    eb_calib_add_minmax(&s, b, 2); /* all positive: the range still holds the real zero */
    ASSERT_EQ_INT(eb_calib_range(&s, EB_CALIB_MINMAX, 0, &lo, &hi), 0);
    ASSERT_NEAR(lo, 0.0, 0);
    ASSERT_NEAR(hi, 2.0, 0);
    eb_calib_stat_fini(&s);
}

EB_TEST(u8_params)
{
    float scale;
    uint8_t zp;
    eb_calib_u8_params(-1.0, 3.0, &scale, &zp); /* 4/255; -lo/scale = 63.75 -> 64 */
    ASSERT_NEAR(scale, 4.0 / 255.0, 1e-9);
    ASSERT_EQ_INT(zp, 64);
    eb_calib_u8_params(0.0, 1.0, &scale, &zp); /* an image /255: every k/255 exact */
    ASSERT_NEAR(scale, 1.0 / 255.0, 1e-9);
    ASSERT_EQ_INT(zp, 0);
    eb_calib_u8_params(0.0, 0.0, &scale, &zp); /* a constant-zero tensor */
    ASSERT_NEAR(scale, 1.0, 0);
    ASSERT_EQ_INT(zp, 0);
}

EB_TEST(percentile_threshold_by_hand)
{
    double *h = calloc(EB_CALIB_BINS, sizeof(double));
    ASSERT_TRUE(h != NULL);
    h[10] = 9999; /* 99.99% of the mass in bin 10, one outlier in bin 2000 */
    h[2000] = 1;
    /* cumulative 9999 >= 0.9999 * 10000 at bin 10: t = its upper edge, 11 widths */
    ASSERT_NEAR(eb_calib_percentile_threshold(h, EB_CALIB_BINS, 0.5, 99.99), 11 * 0.5, 1e-12);
    /* 100%: the outlier's bin */
    ASSERT_NEAR(eb_calib_percentile_threshold(h, EB_CALIB_BINS, 0.5, 100.0), 2001 * 0.5, 1e-12);
    free(h);
}

EB_TEST(entropy_threshold_by_hand)
{
    double *h = calloc(EB_CALIB_BINS, sizeof(double));
    ASSERT_TRUE(h != NULL);
    /* A ramp inside the first 128 bins: at i = 128, P = Q exactly (one bin per level), KL 0;
     * no later candidate does better, and ties keep the first: t = 128 widths. */
    for (int b = 0; b < 128; b++)
        h[b] = 128 - b;
    ASSERT_NEAR(eb_calib_entropy_threshold(h, EB_CALIB_BINS, 1.0), 128.0, 0);
    /* Uniform over all 2048 bins: any i < 2048 folds the rest into bin i-1, which its level
     * cannot represent (KL > 0); at 2048 every 16-bin level is uniform, Q = P: the whole range. */
    for (int b = 0; b < EB_CALIB_BINS; b++)
        h[b] = 3;
    ASSERT_NEAR(eb_calib_entropy_threshold(h, EB_CALIB_BINS, 1.0), 2048.0, 0);
    /* The ramp plus a second mode as heavy as it at bin 1500: a candidate below 1501 folds that
     * mode into its last bin, where Q has (almost) nothing: kept, t > 1500 widths. */
    for (int b = 0; b < EB_CALIB_BINS; b++)
        h[b] = b < 128 ? 128 - b : 0;
    h[1500] = 8256;
    ASSERT_TRUE(eb_calib_entropy_threshold(h, EB_CALIB_BINS, 1.0) >= 1501.0);
    free(h);
}

EB_TEST(histogram_methods_clip_the_range)
{
    struct eb_calib_stat s;
    enum { N = 100000 };
    float *x = malloc(N * sizeof(float));
    ASSERT_TRUE(x != NULL);
    for (int i = 0; i < N; i++) /* values in [-0.25, 1), one outlier at 100 */
        x[i] = (float)(i % 1000) / 800.0f - 0.25f;
    x[123] = 100.0f;
    eb_calib_stat_init(&s);
    eb_calib_add_minmax(&s, x, N);
    ASSERT_EQ_INT(eb_calib_hist_begin(&s), 0); /* bins over [0, 100] */
    eb_calib_add_hist(&s, x, N);
    double lo, hi;
    ASSERT_EQ_INT(eb_calib_range(&s, EB_CALIB_MINMAX, 0, &lo, &hi), 0);
    ASSERT_NEAR(hi, 100.0, 0);
    /* 99.99%: the outlier (0.001%) is cut at the first bins' edge: |x| <= 1 fills bins 0..20
     * (width 100/2048), so t = 21 widths ~ 1.03; lo stays the observed -0.25 */
    ASSERT_EQ_INT(eb_calib_range(&s, EB_CALIB_PERCENTILE, 99.99, &lo, &hi), 0);
    ASSERT_NEAR(hi, 21 * 100.0 / 2048, 1e-9);
    ASSERT_NEAR(lo, -0.25, 1e-6);
    ASSERT_EQ_INT(eb_calib_range(&s, EB_CALIB_ENTROPY, 0, &lo, &hi), 0);
    ASSERT_TRUE(hi < 100.0);
    eb_calib_stat_fini(&s);
    free(x);
}

EB_TEST(sqnr_per_channel_and_dead_channels)
{
    struct eb_calib_stat s;
    /* Three channels of 4 values at scale 0.1, zero point 0: channel 0 exact (multiples of
     * 0.1), channel 1 at 0.04 (rounds to 0: all lost, SQNR 0 dB), channel 2 dead (1e-9). */
    const float x[12] = {0.1f,  0.2f,  0.3f,  0.4f,  0.04f, 0.04f,
                         0.04f, 0.04f, 1e-9f, 1e-9f, 1e-9f, 1e-9f};
    eb_calib_stat_init(&s);
    ASSERT_EQ_INT(eb_calib_add_error(&s, x, 12, 0.1f, 0, 3), 0);
    ASSERT_NEAR(eb_calib_min_channel_sqnr_db(&s), 0.0, 1e-9);
    ASSERT_TRUE(eb_calib_sqnr_db(&s) > 10.0); /* the tensor as a whole looks fine */
    /* the channel count of a tensor cannot change between images */
    ASSERT_EQ_INT(eb_calib_add_error(&s, x, 12, 0.1f, 0, 4), -1);
    eb_calib_stat_fini(&s);
    /* Only the dead channel lost: it does not count. */
    const float y[8] = {0.1f, 0.2f, 0.3f, 0.4f, 1e-9f, 1e-9f, 1e-9f, 1e-9f};
    eb_calib_stat_init(&s);
    ASSERT_EQ_INT(eb_calib_add_error(&s, y, 8, 0.1f, 0, 2), 0);
    ASSERT_TRUE(isinf(eb_calib_min_channel_sqnr_db(&s)));
    eb_calib_stat_fini(&s);
}
