/*
 * Caller-owned error detail: one line saying what failed, which one, why, and what to do.
 *
 *     struct eb_diag diag = {0};
 *     if (eb_x_create(..., &x, &diag) != EB_OK) puts(diag.msg);
 *
 * Callees write with `return eb_diag_fail(diag, EB_ERR_IO, "failed to open %s: %s; check the path", p, strerror(errno));`.
 * The first failure wins; later eb_diag_fail calls keep the first message but still return
 * their status. `diag` may be NULL everywhere.
 */
#ifndef EB_DIAG_H
#define EB_DIAG_H

#include <stddef.h>

#include "eb/status.h"

#define EB_DIAG_MSG_MAX 512

struct eb_diag {
    enum eb_status status; /* EB_OK until the first failure */
    char msg[EB_DIAG_MSG_MAX];
};

/** Records a failure (if none is recorded yet) and returns `st`. `diag` may be NULL. */
enum eb_status eb_diag_fail(struct eb_diag *diag, enum eb_status st, const char *fmt, ...)
    EB_PRINTF(3, 4);
/** Prefixes the recorded message with context, e.g. "slot thermal: ". No-op when empty. */
void eb_diag_prefix(struct eb_diag *diag, const char *fmt, ...) EB_PRINTF(2, 3);
/** Resets to EB_OK with an empty message. */
void eb_diag_clear(struct eb_diag *diag);

#endif
