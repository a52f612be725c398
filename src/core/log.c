#include <stdarg.h>
#include <stdio.h>

#include "eb/log.h"

void eb_log_msg(const struct eb_log *log, enum eb_log_level level, const char *fmt, ...)
{
    if (log == NULL || log->fn == NULL || level < log->level)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    log->fn(log->ctx, level, msg);
}

const char *eb_log_level_name(enum eb_log_level level)
{
    switch (level) {
    case EB_LOG_DEBUG: return "DEBUG";
    case EB_LOG_INFO: return "INFO";
    case EB_LOG_WARN: return "WARN";
    case EB_LOG_ERROR: return "ERROR";
    }
    return "?";
}
