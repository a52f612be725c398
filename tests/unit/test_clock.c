/* eb_clock_sleep_until_ns: the sliced, stoppable wait every paced wait goes through. */
#include <stdatomic.h>
#include <stdint.h>

#include "eb/clock.h"
#include "eb/thread.h"
#include "eb_test.h"

/* Far beyond any bound below: a wait that ran to it would fail the elapsed-time checks. */
#define FAR_NS 60000000000ull
/* Generous: a stopped wait ends within one 20 ms slice; this only tells "early" from "at due". */
#define EARLY_NS 30000000000ull

struct stopper {
    atomic_int *stop;
    uint64_t after_ns;
};

static void *stop_later(void *arg)
{
    const struct stopper *s = arg;
    eb_clock_sleep_ns(s->after_ns);
    atomic_store(s->stop, 15); /* a signal number, as main.c stores it */
    return NULL;
}

EB_TEST(sleep_until_a_passed_time_returns_at_once)
{
    atomic_int stop;
    atomic_init(&stop, 0);
    ASSERT_OK(eb_clock_sleep_until_ns(0, &stop));
    ASSERT_OK(eb_clock_sleep_until_ns(eb_clock_ns(), NULL)); /* NULL: never stopped */
}

EB_TEST(sleep_until_waits_for_the_due_time)
{
    atomic_int stop;
    atomic_init(&stop, 0);
    const uint64_t due = eb_clock_ns() + 30000000ull; /* 30 ms: more than one slice */
    ASSERT_OK(eb_clock_sleep_until_ns(due, &stop));
    ASSERT_TRUE(eb_clock_ns() >= due);
}

EB_TEST(sleep_until_a_set_stop_is_cancelled_at_once)
{
    atomic_int stop;
    atomic_init(&stop, 2);
    const uint64_t t0 = eb_clock_ns();
    ASSERT_EQ_INT(eb_clock_sleep_until_ns(t0 + FAR_NS, &stop), EB_ERR_CANCELLED);
    ASSERT_TRUE(eb_clock_ns() - t0 < EARLY_NS);
    /* Also when the time has passed: a stop that came first wins. */
    ASSERT_EQ_INT(eb_clock_sleep_until_ns(0, &stop), EB_ERR_CANCELLED);
}

EB_TEST(sleep_until_ends_early_when_another_thread_stops_it)
{
    atomic_int stop;
    atomic_init(&stop, 0);
    struct stopper st = {.stop = &stop, .after_ns = 50000000ull};
    struct eb_thread th;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_thread_create(&th, stop_later, &st, &diag));
    const uint64_t t0 = eb_clock_ns();
    const enum eb_status s = eb_clock_sleep_until_ns(t0 + FAR_NS, &stop);
    const uint64_t waited = eb_clock_ns() - t0;
    eb_thread_join(&th);
    ASSERT_EQ_INT(s, EB_ERR_CANCELLED);
    ASSERT_TRUE(waited < EARLY_NS);
}
