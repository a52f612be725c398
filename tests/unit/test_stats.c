#include "eb_test.h"
#include "harness/stats.h"

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
