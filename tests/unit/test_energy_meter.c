/*
 * The energy meter (harness/metrics/energy_meter.h) on crafted readings: hand-computed integrals
 * of piecewise-linear power over the whole span (held at both ends) and between two marks set
 * before, among, between and after the readings, on time and late (from its ring), and a mark
 * given later than the ring reaches (lost, not guessed).
 */
#include <math.h>
#include <stdint.h>

#include "eb_test.h"
#include "harness/metrics/energy_meter.h"

#define MS 1000000ull /* ns */

/* Power rising linearly from 1000 mW at t = 1 s by 1000 mW per second, read every 100 ms up to
 * 3 s: E from 1 s to t is 1000 (t - 1) + 500 (t - 1)^2 mJ (t in s). */
static double ramp_e(double t)
{
    return 1000.0 * (t - 1.0) + 500.0 * (t - 1.0) * (t - 1.0);
}

static void add_ramp(struct eb_energy_meter *m)
{
    for (int i = 0; i <= 20; i++)
        eb_energy_add(m, (1000 + 100 * (uint64_t)i) * MS, 1000.0 + 100.0 * i);
}

EB_TEST(span_and_marks_of_a_ramp)
{
    struct eb_energy_meter m;
    eb_energy_init(&m);
    ASSERT_TRUE(isnan(eb_energy_span_mj(&m, 0, 5000 * MS)));
    ASSERT_TRUE(isnan(eb_energy_between_marks_mj(&m)));
    /* Marks set before the readings come, resolved as they come (1.25 s and 2.5 s). */
    eb_energy_mark(&m, EB_ENERGY_MARK_BEGIN, 1250 * MS);
    eb_energy_mark(&m, EB_ENERGY_MARK_END, 2500 * MS);
    add_ramp(&m);
    ASSERT_NEAR(eb_energy_between_marks_mj(&m), ramp_e(2.5) - ramp_e(1.25), 1e-9);
    /* The span from 0.5 s to 4 s: the first reading's 1000 mW held for 0.5 s before it, the
     * latest's 3000 mW for 1 s after it. */
    ASSERT_NEAR(eb_energy_span_mj(&m, 500 * MS, 4000 * MS), 500.0 + ramp_e(3.0) + 3000.0, 1e-9);
    /* Late marks, from the ring: both between readings. */
    eb_energy_mark(&m, EB_ENERGY_MARK_BEGIN, 1730 * MS);
    eb_energy_mark(&m, EB_ENERGY_MARK_END, 2970 * MS);
    ASSERT_NEAR(eb_energy_between_marks_mj(&m), ramp_e(2.97) - ramp_e(1.73), 1e-9);
    /* Before the first reading and after the latest: held. */
    eb_energy_mark(&m, EB_ENERGY_MARK_BEGIN, 800 * MS);
    eb_energy_mark(&m, EB_ENERGY_MARK_END, 3500 * MS);
    ASSERT_NEAR(eb_energy_between_marks_mj(&m), 200.0 + ramp_e(3.0) + 1500.0, 1e-9);
    /* The end pending after the latest reading, then a reading past it resolves it on the line
     * to that reading: from 3000 mW at 3 s to 5000 mW at 4 s, the end at 3.5 s. */
    eb_energy_mark(&m, EB_ENERGY_MARK_BEGIN, 3000 * MS);
    eb_energy_add(&m, 4000 * MS, 5000.0);
    ASSERT_NEAR(eb_energy_between_marks_mj(&m), 0.5 * (3000.0 + 4000.0) * 0.5, 1e-9);
    /* An end before the begin: no figure. */
    eb_energy_mark(&m, EB_ENERGY_MARK_END, 2000 * MS);
    ASSERT_TRUE(isnan(eb_energy_between_marks_mj(&m)));
}

EB_TEST(a_mark_older_than_the_ring_is_lost)
{
    struct eb_energy_meter m;
    eb_energy_init(&m);
    for (uint64_t i = 0; i < 3 * EB_ENERGY_RING; i++)
        eb_energy_add(&m, (1000 + 10 * i) * MS, 2000.0);
    /* The ring holds the last RING readings: 10 ms apart. */
    const uint64_t latest = (1000 + 10 * (3 * EB_ENERGY_RING - 1)) * MS;
    eb_energy_mark(&m, EB_ENERGY_MARK_END, latest);
    eb_energy_mark(&m, EB_ENERGY_MARK_BEGIN, latest - 10 * MS * (EB_ENERGY_RING - 1) + 5 * MS);
    ASSERT_NEAR(eb_energy_between_marks_mj(&m), 2000.0 * (10.0 * (EB_ENERGY_RING - 1) - 5) / 1e3,
                1e-9);
    eb_energy_mark(&m, EB_ENERGY_MARK_BEGIN, latest - 10 * MS * EB_ENERGY_RING - 5 * MS);
    ASSERT_TRUE(isnan(eb_energy_between_marks_mj(&m)));
    /* A constant power's span is the power times the span, whatever the readings' times. */
    ASSERT_NEAR(eb_energy_span_mj(&m, 0, latest + 1000 * MS),
                2000.0 * (double)(latest / MS + 1000) / 1e3, 1e-6);
}

EB_TEST(one_reading_and_readings_that_do_not_count)
{
    struct eb_energy_meter m;
    eb_energy_init(&m);
    eb_energy_add(&m, 1000 * MS, NAN);
    eb_energy_add(&m, 1000 * MS, -5.0);
    ASSERT_TRUE(isnan(eb_energy_span_mj(&m, 0, 2000 * MS)));
    eb_energy_mark(&m, EB_ENERGY_MARK_BEGIN, 500 * MS);
    eb_energy_add(&m, 1000 * MS, 4000.0);
    eb_energy_add(&m, 900 * MS, 9000.0); /* before the latest: ignored */
    eb_energy_mark(&m, EB_ENERGY_MARK_END, 1500 * MS);
    /* One reading held over everything: 4000 mW x 1 s. */
    ASSERT_NEAR(eb_energy_between_marks_mj(&m), 4000.0, 1e-9);
    ASSERT_NEAR(eb_energy_span_mj(&m, 0, 2000 * MS), 8000.0, 1e-9);
}
