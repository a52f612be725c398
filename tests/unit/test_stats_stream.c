/* Soak runs: the streaming statistics, the bucketed series and the change-point detector
 * (harness/metrics/stats.h). */
#include "eb_test.h"
#include "harness/metrics/stats.h"

/* A deterministic spread of latencies (ms): a Weyl sequence over [lo, lo + span). */
static double weyl(uint64_t i, double lo, double span)
{
    double x = (double)i * 0.6180339887498949;
    return lo + span * (x - floor(x));
}

EB_TEST(stream_matches_exact_figures_within_the_stated_error)
{
    enum { N = 50000 };
    static double v[N];
    static struct eb_stat_stream st;
    static double scratch[EB_STAT_RESERVOIR];
    eb_stat_stream_init(&st, 7);
    for (uint64_t i = 0; i < N; i++) {
        v[i] = weyl(i, 2.0, 30.0) + (i % 97 == 0 ? 80.0 : 0.0); /* a tail of slow frames */
        eb_stat_stream_add(&st, v[i]);
    }
    struct eb_stat_summary ex, sm;
    eb_stat_summarize_ms(v, N, &ex); /* sorts v */
    eb_stat_stream_summarize(&st, scratch, &sm);
    /* Exact figures stay exact (to rounding). */
    ASSERT_EQ_INT(sm.count, N);
    ASSERT_NEAR(sm.mean, ex.mean, 1e-9 * ex.mean);
    ASSERT_NEAR(sm.std, ex.std, 1e-9 * ex.std);
    ASSERT_NEAR(sm.min, ex.min, 0);
    ASSERT_NEAR(sm.max, ex.max, 0);
    /* Percentiles within the documented relative error. */
    ASSERT_NEAR(sm.p50, ex.p50, EB_STAT_HIST_REL_ERR * ex.p50);
    ASSERT_NEAR(sm.p90, ex.p90, EB_STAT_HIST_REL_ERR * ex.p90);
    ASSERT_NEAR(sm.p99, ex.p99, EB_STAT_HIST_REL_ERR * ex.p99);
    /* The reservoir's intervals exist and hold the exact percentile. */
    ASSERT_TRUE(sm.p50_ci.available && sm.p99_ci.available);
    ASSERT_TRUE(sm.p50_ci.lo <= ex.p50 && ex.p50 <= sm.p50_ci.hi);
    ASSERT_TRUE(sm.p99_ci.lo <= ex.p99 && ex.p99 <= sm.p99_ci.hi);
}

EB_TEST(stream_is_seeded_and_fixed_size)
{
    static struct eb_stat_stream a, b;
    eb_stat_stream_init(&a, 42);
    eb_stat_stream_init(&b, 42);
    for (uint64_t i = 0; i < 3 * EB_STAT_RESERVOIR; i++) {
        eb_stat_stream_add(&a, weyl(i, 1, 5));
        eb_stat_stream_add(&b, weyl(i, 1, 5));
    }
    ASSERT_EQ_INT(a.n_res, EB_STAT_RESERVOIR);
    ASSERT_TRUE(memcmp(a.res, b.res, sizeof(a.res)) == 0);
    /* About a third of the reservoir comes from each third of the stream (uniform). */
    uint64_t first = 0;
    for (uint32_t i = 0; i < a.n_res; i++)
        first += a.res_index[i] < EB_STAT_RESERVOIR;
    ASSERT_TRUE(first > EB_STAT_RESERVOIR / 4 && first < EB_STAT_RESERVOIR * 5 / 12);
}

EB_TEST(stream_drift_sees_a_slower_last_block)
{
    static struct eb_stat_stream st;
    static double scratch[EB_STAT_RESERVOIR];
    eb_stat_stream_init(&st, 1);
    const uint64_t n = 100000;
    for (uint64_t i = 0; i < n; i++)
        eb_stat_stream_add(&st, weyl(i, 10, 1) * (i >= n * 4 / 5 ? 1.5 : 1.0));
    struct eb_stat_drift d;
    eb_stat_stream_drift(&st, scratch, &d);
    ASSERT_EQ_INT(d.blocks, EB_STAT_DRIFT_BLOCKS);
    ASSERT_EQ_INT(d.worst_block, EB_STAT_DRIFT_BLOCKS - 1);
    ASSERT_TRUE(d.drift_pct > 40 && d.drift_pct < 60);
}

EB_TEST(series_stays_bounded_and_keeps_min_mean_max)
{
    static struct eb_stat_series s;
    eb_stat_series_init(&s);
    /* Ten hours at 100 values a second. */
    double total = 0, mx = 0;
    for (uint64_t i = 0; i < 3600000; i++) {
        double t = (double)i / 100.0, v = 5.0 + (double)(i % 10);
        eb_stat_series_add(&s, t, v);
        total += v;
        mx = v > mx ? v : mx;
    }
    ASSERT_TRUE(s.n_used > EB_STAT_SERIES_BUCKETS / 2 && s.n_used <= EB_STAT_SERIES_BUCKETS);
    uint64_t count = 0;
    double sum = 0, bmax = 0;
    for (size_t i = 0; i < s.n_used; i++) {
        count += s.b[i].count;
        sum += s.b[i].sum;
        bmax = s.b[i].max > bmax ? s.b[i].max : bmax;
        ASSERT_NEAR(s.b[i].min, 5.0, 0);
    }
    ASSERT_EQ_INT(count, 3600000);
    ASSERT_NEAR(sum, total, 1e-9 * total);
    ASSERT_NEAR(bmax, mx, 0);
    ASSERT_TRUE(s.width_s * EB_STAT_SERIES_BUCKETS > 36000.0);
}

EB_TEST(change_point_finds_a_step)
{
    double v[60];
    for (int i = 0; i < 60; i++)
        v[i] = i < 40 ? 10.0 : 14.0;
    struct eb_stat_change c;
    eb_stat_change_point(v, 60, &c);
    ASSERT_TRUE(c.found);
    ASSERT_EQ_INT(c.split, 40);
    ASSERT_NEAR(c.before, 10.0, 1e-12);
    ASSERT_NEAR(c.after, 14.0, 1e-12);
}

EB_TEST(change_point_none_on_flat_or_noise)
{
    double v[80];
    struct eb_stat_change c;
    for (int i = 0; i < 80; i++)
        v[i] = 10.0;
    eb_stat_change_point(v, 80, &c);
    ASSERT_TRUE(!c.found);
    /* Noise of +-10% around one level: no split explains half of it. */
    for (int i = 0; i < 80; i++)
        v[i] = 10.0 + 2.0 * (weyl((uint64_t)i, 0, 1) - 0.5);
    eb_stat_change_point(v, 80, &c);
    ASSERT_TRUE(!c.found);
    /* Too short a series. */
    eb_stat_change_point(v, 2 * EB_STAT_CP_MIN_SIDE - 1, &c);
    ASSERT_TRUE(!c.found);
}

EB_TEST(change_point_finds_a_step_in_noise_and_ignores_a_tiny_one)
{
    double v[100];
    struct eb_stat_change c;
    for (int i = 0; i < 100; i++)
        v[i] = (i < 70 ? 20.0 : 26.0) + 2.0 * (weyl((uint64_t)i, 0, 1) - 0.5);
    eb_stat_change_point(v, 100, &c);
    ASSERT_TRUE(c.found);
    ASSERT_TRUE(c.split >= 68 && c.split <= 72);
    ASSERT_NEAR(c.after / c.before, 1.3, 0.03);
    /* A clean step of 2%: explained, but under the minimum shift. */
    for (int i = 0; i < 100; i++)
        v[i] = i < 50 ? 20.0 : 20.4;
    eb_stat_change_point(v, 100, &c);
    ASSERT_TRUE(!c.found);
}
