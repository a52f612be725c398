/*
 * The run's logger: every message goes to run.log (all levels, ISO time) and, filtered by the
 * console level, to the console. A one-line progress display on a terminal is cleared before a
 * log line is printed and redrawn after. Thread-safe.
 */
#ifndef EB_RUNLOG_H
#define EB_RUNLOG_H

#include <stdio.h>

#include "eb/log.h"
#include "eb/thread.h"

struct eb_runlog {
    struct eb_mutex mu;
    FILE *file; /* run.log, owned; NULL until opened */
    char path[4200];
    int file_errno; /* the first failed write to run.log (errno); 0 none */
    FILE *console;  /* borrowed */
    enum eb_log_level console_level;
    int progress_shown; /* a progress line is on the console */
    char progress[256];
};

void eb_runlog_init(struct eb_runlog *rl, FILE *console, enum eb_log_level console_level);
/** Creates run.log at `path` (truncated); later messages go to it. EB_ERR_IO naming it. */
EB_NODISCARD enum eb_status eb_runlog_open_file(struct eb_runlog *rl, const char *path,
                                                struct eb_diag *diag);
/**
 * Closes run.log; later messages reach the console only. EB_ERR_IO "failed to write <path>:
 * <why>" when any line could not be written (the first failure's reason) or the close failed;
 * EB_OK when no file was open.
 */
EB_NODISCARD enum eb_status eb_runlog_close_file(struct eb_runlog *rl, struct eb_diag *diag);
/** Closes run.log unchecked (eb_runlog_close_file checks) and releases the logger. */
void eb_runlog_fini(struct eb_runlog *rl);
/** The struct eb_log that writes to this logger. */
struct eb_log eb_runlog_iface(struct eb_runlog *rl);
/** Shows (or replaces) the progress line; "" removes it. Only call when the console is a tty. */
void eb_runlog_progress(struct eb_runlog *rl, const char *line);

#endif
