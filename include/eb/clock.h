/* Monotonic and wall clocks. */
#ifndef EB_CLOCK_H
#define EB_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/** CLOCK_MONOTONIC in nanoseconds. */
uint64_t eb_clock_ns(void);
/** CLOCK_REALTIME in nanoseconds since the epoch. */
uint64_t eb_clock_wall_ns(void);
/** Writes the UTC wall time as ISO 8601 ("2026-11-21T11:02:00.123Z"). */
void eb_clock_iso8601(uint64_t wall_ns, char *buf, size_t buf_size);
/** Sleeps `ns` nanoseconds (restarts on EINTR until the time has passed). */
void eb_clock_sleep_ns(uint64_t ns);

#endif
