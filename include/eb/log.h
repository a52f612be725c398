/*
 * Logging through a callback carried in a context (never global).
 *
 *     eb_log_msg(log, EB_LOG_WARN, "gpu_mem_limit_gb %.1f clamped to 8.0", v);
 *
 * `log` may be NULL (nothing is logged). The callback must be thread-safe when the same
 * log is used from several threads (the harness's logger locks a mutex).
 */
#ifndef EB_LOG_H
#define EB_LOG_H

#include "eb/status.h"

enum eb_log_level {
    EB_LOG_DEBUG = 0,
    EB_LOG_INFO = 1,
    EB_LOG_WARN = 2,
    EB_LOG_ERROR = 3,
};

struct eb_log {
    void (*fn)(void *ctx, enum eb_log_level level, const char *msg);
    void *ctx;
    enum eb_log_level level; /* messages below this level are dropped before formatting */
};

/** Formats and emits one message as one line (no trailing newline needed; control characters,
 * a newline or a terminal escape code from a path or a model, become ?). `log` may be NULL. */
void eb_log_msg(const struct eb_log *log, enum eb_log_level level, const char *fmt, ...)
    EB_PRINTF(3, 4);
/** "DEBUG", "INFO", "WARN", "ERROR". */
const char *eb_log_level_name(enum eb_log_level level);

#endif
