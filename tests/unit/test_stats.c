#include "eb_test.h"
#include "harness/metrics/stats.h"

EB_TEST(percentiles_match_numpy_linear)
{
    /* numpy.percentile([1..10], q) with the default linear method. */
    double v[10] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    struct eb_stat_summary s;
    eb_stat_summarize_ms(v, 10, &s);
    ASSERT_EQ_INT(s.count, 10);
    ASSERT_NEAR(s.p50, 5.5, 1e-12);
    ASSERT_NEAR(s.p90, 9.1, 1e-12);
    ASSERT_NEAR(s.p95, 9.55, 1e-12);
    ASSERT_NEAR(s.p99, 9.91, 1e-12);
    ASSERT_NEAR(s.min, 1, 0);
    ASSERT_NEAR(s.max, 10, 0);
    ASSERT_NEAR(s.mean, 5.5, 1e-12);
    ASSERT_NEAR(s.std, 3.0276503540974917, 1e-12); /* sample std (n-1) */
    ASSERT_NEAR(s.cov, 3.0276503540974917 / 5.5, 1e-12);
    ASSERT_NEAR(s.fps, 1000.0 / 5.5, 1e-9);
}

EB_TEST(single_and_empty_sets)
{
    double one[1] = {4.0};
    struct eb_stat_summary s;
    eb_stat_summarize_ms(one, 1, &s);
    ASSERT_NEAR(s.p50, 4.0, 0);
    ASSERT_NEAR(s.p99, 4.0, 0);
    ASSERT_NEAR(s.std, 0.0, 0);
    eb_stat_summarize_ms(NULL, 0, &s);
    ASSERT_EQ_INT(s.count, 0);
    ASSERT_NEAR(s.fps, 0.0, 0);
}

EB_TEST(percentile_is_monotonic_in_q)
{
    double v[7] = {0.5, 3, 3, 8, 1, 20, 2};
    struct eb_stat_summary s;
    eb_stat_summarize_ms(v, 7, &s);
    ASSERT_TRUE(s.min <= s.p50 && s.p50 <= s.p90 && s.p90 <= s.p95 && s.p95 <= s.p99 &&
                s.p99 <= s.max);
}

/* Ranks checked against the binomial CDF summed exactly (Python fractions, math.comb): l is
 * the largest rank with F(l-1) <= 0.025, u the smallest with F(u-1) >= 0.975, B ~ Bin(n, q). */
EB_TEST(ci_ranks_match_hand_computed_binomial)
{
    struct {
        uint64_t n;
        double q;
        uint64_t lo, hi;
        double coverage;
    } cases[] = {
        {6, 0.5, 1, 6, 62.0 / 64.0},      /* F(0) = 1/64, F(5) = 63/64 */
        {10, 0.5, 2, 9, 1002.0 / 1024.0}, /* F(1) = 11/1024, F(8) = 1013/1024 */
        {20, 0.5, 6, 15, 0.9586105346679688},
        {100, 0.5, 40, 61, 0.9647997997822951},
        {1000, 0.5, 469, 532, 0.9537088026395019},
        {368, 0.99, 360, 368, 0.9624158204108587},
        {1000, 0.99, 983, 997, 0.9760947634979771},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t lo = 0, hi = 0;
        double cov = 0;
        ASSERT_TRUE(eb_stat_ci_ranks(cases[i].n, cases[i].q, 0.95, &lo, &hi, &cov));
        ASSERT_EQ_INT(lo, cases[i].lo);
        ASSERT_EQ_INT(hi, cases[i].hi);
        ASSERT_NEAR(cov, cases[i].coverage, 1e-9);
        ASSERT_TRUE(cov >= 0.95);
    }
}

EB_TEST(ci_small_samples_have_none)
{
    uint64_t lo = 0, hi = 0;
    /* p50: F(0) = 1/32 > 0.025 for n = 5; p99: 0.99^367 > 0.025 leaves no upper rank */
    ASSERT_TRUE(!eb_stat_ci_ranks(5, 0.5, 0.95, &lo, &hi, NULL));
    ASSERT_TRUE(!eb_stat_ci_ranks(367, 0.99, 0.95, &lo, &hi, NULL));
    ASSERT_TRUE(!eb_stat_ci_ranks(0, 0.5, 0.95, &lo, &hi, NULL));
    ASSERT_TRUE(!eb_stat_ci_ranks(100, 0.0, 0.95, &lo, &hi, NULL));
    ASSERT_TRUE(!eb_stat_ci_ranks(100, 0.5, 1.0, &lo, &hi, NULL));
    double v[5] = {5, 4, 3, 2, 1};
    struct eb_stat_summary s;
    eb_stat_summarize_ms(v, 5, &s);
    ASSERT_EQ_INT(s.p50_ci.available, 0);
    ASSERT_EQ_INT(s.p99_ci.available, 0);
}

EB_TEST(ci_bounds_are_the_order_statistics)
{
    /* 1..10 shuffled: the n = 10 median interval is [x(2), x(9)] = [2, 9] */
    double v[10] = {7, 3, 10, 1, 9, 2, 8, 4, 6, 5};
    struct eb_stat_summary s;
    eb_stat_summarize_ms(v, 10, &s);
    ASSERT_EQ_INT(s.p50_ci.available, 1);
    ASSERT_NEAR(s.p50_ci.lo, 2, 0);
    ASSERT_NEAR(s.p50_ci.hi, 9, 0);
    ASSERT_EQ_INT(s.p50_ci.rank_lo, 2);
    ASSERT_EQ_INT(s.p50_ci.rank_hi, 9);
    ASSERT_EQ_INT(s.p99_ci.available, 0);
    ASSERT_TRUE(s.p50_ci.lo <= s.p50 && s.p50 <= s.p50_ci.hi);
}

EB_TEST(ci_large_sample_is_fast_and_covers_the_percentile)
{
    /* 2 million values: the window keeps the binomial sums O(sqrt(n)) */
    size_t n = 2000000;
    double *v = malloc(n * sizeof(double));
    ASSERT_TRUE(v != NULL);
    for (size_t i = 0; i < n; i++)
        v[i] = (double)((i * 7919u) % n);
    struct eb_stat_summary s;
    eb_stat_summarize_ms(v, n, &s);
    ASSERT_EQ_INT(s.p50_ci.available, 1);
    ASSERT_EQ_INT(s.p99_ci.available, 1);
    ASSERT_TRUE(s.p50_ci.lo <= s.p50 && s.p50 <= s.p50_ci.hi);
    ASSERT_TRUE(s.p99_ci.lo <= s.p99 && s.p99 <= s.p99_ci.hi);
    /* the median's interval is about +-1.96 sqrt(n)/2 ranks wide */
    ASSERT_TRUE(s.p50_ci.rank_hi - s.p50_ci.rank_lo < 3000);
    ASSERT_TRUE(s.p50_ci.coverage >= 0.95 && s.p50_ci.coverage < 0.96);
    free(v);
}

/* The blocks of eb_stat_drift: equal counts, the first n % 5 one longer, in order. */
EB_TEST(drift_blocks_cover_the_values_in_order)
{
    uint64_t first = 0, last = 0, next = 0;
    for (int b = 0; b < EB_STAT_DRIFT_BLOCKS; b++) {
        eb_stat_drift_block_frames(53, b, &first, &last);
        ASSERT_EQ_INT(first, next);
        ASSERT_EQ_INT(last - first + 1, b < 3 ? 11 : 10);
        next = last + 1;
    }
    ASSERT_EQ_INT(next, 53);
    /* medians per block, drift against the whole's median; the input is left as it was */
    double v[53], scratch[53];
    for (int i = 0; i < 53; i++)
        v[i] = i < 43 ? 10.0 : 15.0; /* the last block (43..52) 50% slower */
    struct eb_stat_drift d;
    eb_stat_drift(v, 53, scratch, &d);
    ASSERT_EQ_INT(d.blocks, EB_STAT_DRIFT_BLOCKS);
    ASSERT_NEAR(d.p50, 10.0, 0);
    ASSERT_NEAR(d.block_p50[4], 15.0, 0);
    ASSERT_NEAR(d.block_p50[0], 10.0, 0);
    ASSERT_NEAR(d.drift_pct, 50.0, 1e-9);
    ASSERT_EQ_INT(d.worst_block, 4);
    ASSERT_NEAR(v[52], 15.0, 0);
    ASSERT_NEAR(v[0], 10.0, 0);
    /* too few values: not judged */
    eb_stat_drift(v, EB_STAT_DRIFT_MIN_FRAMES - 1, scratch, &d);
    ASSERT_EQ_INT(d.blocks, 0);
}

EB_TEST(ci_min_n_is_the_first_n_with_an_interval)
{
    /* The sizes stats.h states: p50 needs 6 samples at 95%, p99 needs 368. */
    ASSERT_EQ_INT((int)eb_stat_ci_min_n(0.50, 0.95, 100000), 6);
    ASSERT_EQ_INT((int)eb_stat_ci_min_n(0.99, 0.95, 100000), 368);
    uint64_t lo, hi;
    ASSERT_TRUE(!eb_stat_ci_ranks(367, 0.99, 0.95, &lo, &hi, NULL));
    /* None within a bound too small. */
    ASSERT_EQ_INT((int)eb_stat_ci_min_n(0.99, 0.95, 100), 0);
}
