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
    /* One message is one line: a newline in a path, or a terminal escape code in a model's
     * metadata, cannot split a log line or drive the terminal. */
    for (char *p = msg; *p != '\0'; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7F)
            *p = '?';
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
