#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "eb/clock.h"

uint64_t eb_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t eb_clock_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void eb_clock_iso8601(uint64_t wall_ns, char *buf, size_t buf_size)
{
    time_t secs = (time_t)(wall_ns / 1000000000ull);
    unsigned ms = (unsigned)((wall_ns / 1000000ull) % 1000ull);
    struct tm tm;
    gmtime_r(&secs, &tm);
    snprintf(buf, buf_size, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

void eb_clock_sleep_ns(uint64_t ns)
{
    struct timespec req = {.tv_sec = (time_t)(ns / 1000000000ull),
                           .tv_nsec = (long)(ns % 1000000000ull)};
    struct timespec rem;
    while (nanosleep(&req, &rem) != 0 && errno == EINTR)
        req = rem;
}

enum eb_status eb_clock_sleep_until_ns(uint64_t due_ns, atomic_int *stop)
{
    for (;;) {
        /* The flag first: a stop that came before the due time wins, even at the due time. */
        if (stop != NULL && atomic_load_explicit(stop, memory_order_relaxed) != 0)
            return EB_ERR_CANCELLED;
        const uint64_t now = eb_clock_ns();
        if (now >= due_ns)
            return EB_OK;
        const uint64_t left = due_ns - now;
        eb_clock_sleep_ns(left < EB_CLOCK_SLEEP_SLICE_NS ? left : EB_CLOCK_SLEEP_SLICE_NS);
    }
}
