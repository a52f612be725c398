#include <errno.h>
#include <string.h>

#include "eb/clock.h"
#include "eb/file.h"
#include "harness/cmd/runlog.h"

void eb_runlog_init(struct eb_runlog *rl, FILE *console, enum eb_log_level console_level)
{
    memset(rl, 0, sizeof(*rl));
    eb_mutex_init(&rl->mu);
    rl->console = console;
    rl->console_level = console_level;
}

enum eb_status eb_runlog_open_file(struct eb_runlog *rl, const char *path, struct eb_diag *diag)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s", path, strerror(errno));
    eb_mutex_lock(&rl->mu);
    rl->file = f;
    rl->file_errno = 0;
    snprintf(rl->path, sizeof(rl->path), "%s", path);
    eb_mutex_unlock(&rl->mu);
    return EB_OK;
}

enum eb_status eb_runlog_close_file(struct eb_runlog *rl, struct eb_diag *diag)
{
    eb_mutex_lock(&rl->mu);
    FILE *f = rl->file;
    const int err = rl->file_errno;
    rl->file = NULL;
    eb_mutex_unlock(&rl->mu);
    return eb_file_close_after(f, err, rl->path, diag);
}

void eb_runlog_fini(struct eb_runlog *rl)
{
    if (rl->file != NULL)
        fclose(rl->file);
    rl->file = NULL;
    eb_mutex_fini(&rl->mu);
}

static void clear_progress(struct eb_runlog *rl)
{
    if (rl->progress_shown && rl->console != NULL) {
        fputs("\r\033[K", rl->console);
        rl->progress_shown = 0;
    }
}

static void runlog_write(void *ctx, enum eb_log_level level, const char *msg)
{
    struct eb_runlog *rl = ctx;
    char ts[40];
    eb_clock_iso8601(eb_clock_wall_ns(), ts, sizeof(ts));
    eb_mutex_lock(&rl->mu);
    if (rl->file != NULL) {
        errno = 0;
        if ((fprintf(rl->file, "%s %s %s\n", ts, eb_log_level_name(level), msg) < 0 ||
             fflush(rl->file) != 0) &&
            rl->file_errno == 0)
            rl->file_errno = errno != 0 ? errno : EIO;
    }
    if (rl->console != NULL && level >= rl->console_level) {
        int had = rl->progress_shown;
        clear_progress(rl);
        if (level >= EB_LOG_WARN)
            fprintf(rl->console, "edgebench: %s: %s\n", level == EB_LOG_WARN ? "warning" : "error",
                    msg);
        else
            fprintf(rl->console, "%s\n", msg);
        if (had && rl->progress[0]) {
            fputs(rl->progress, rl->console);
            rl->progress_shown = 1;
        }
        fflush(rl->console);
    }
    eb_mutex_unlock(&rl->mu);
}

struct eb_log eb_runlog_iface(struct eb_runlog *rl)
{
    /* Everything reaches runlog_write; it filters the console, the file keeps every level. */
    struct eb_log log = {.fn = runlog_write, .ctx = rl, .level = EB_LOG_DEBUG};
    return log;
}

void eb_runlog_progress(struct eb_runlog *rl, const char *line)
{
    eb_mutex_lock(&rl->mu);
    clear_progress(rl);
    snprintf(rl->progress, sizeof(rl->progress), "%s", line);
    if (line[0] != '\0' && rl->console != NULL) {
        fputs(rl->progress, rl->console);
        rl->progress_shown = 1;
    }
    if (rl->console != NULL)
        fflush(rl->console);
    eb_mutex_unlock(&rl->mu);
}
