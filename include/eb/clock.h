/* Monotonic and wall clocks. */
#ifndef EB_CLOCK_H
#define EB_CLOCK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "eb/status.h"

/** Longest one sleep of eb_clock_sleep_until_ns before it looks at the stop flag again (ns). */
#define EB_CLOCK_SLEEP_SLICE_NS 20000000ull

/** CLOCK_MONOTONIC in nanoseconds. */
uint64_t eb_clock_ns(void);
/** CLOCK_REALTIME in nanoseconds since the epoch. */
uint64_t eb_clock_wall_ns(void);
/** Writes the UTC wall time as ISO 8601 ("2026-11-21T11:02:00.123Z"). */
void eb_clock_iso8601(uint64_t wall_ns, char *buf, size_t buf_size);
/** Sleeps `ns` nanoseconds (restarts on EINTR until the time has passed). */
void eb_clock_sleep_ns(uint64_t ns);
/**
 * Sleeps until the monotonic clock reaches `due_ns`, in slices of at most
 * EB_CLOCK_SLEEP_SLICE_NS, and returns early once `*stop` is non-zero, so that no wait outlasts
 * a signal by more than one slice. `stop` is borrowed and may be NULL (never stopped).
 * Returns EB_OK at the due time (at once when it has passed), EB_ERR_CANCELLED when stopped
 * first (also when `*stop` was already set). Thread-safe.
 */
EB_NODISCARD enum eb_status eb_clock_sleep_until_ns(uint64_t due_ns, atomic_int *stop);

#endif
