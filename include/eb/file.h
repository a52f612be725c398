/*
 * Closing a file that was written, with every failure seen: a write that failed earlier (the
 * stream's error flag), the flush of what is still buffered, and the close itself. A full disk
 * often shows only at the flush or the close, so a writer that ignores their results loses
 * the file silently.
 *
 *     FILE *fp = fopen(path, "w");
 *     ... fprintf(fp, ...) ...
 *     if (eb_file_close(fp, path, &diag) != EB_OK) puts(diag.msg);  // "failed to write P: why"
 */
#ifndef EB_FILE_H
#define EB_FILE_H

#include <stdio.h>

#include "eb/diag.h"

/**
 * Flushes and closes `fp` (which it always releases; NULL is EB_OK). EB_ERR_IO with "failed to
 * write <path>: <strerror>" when a write to `fp` failed before, or the flush or the close fails
 * (the reason is the flush's errno: the C library retries the buffered bytes, which fail again
 * with the cause, e.g. "No space left on device" or "File too large"). `path` names the file
 * in the message only.
 */
EB_NODISCARD enum eb_status eb_file_close(FILE *fp, const char *path, struct eb_diag *diag);
/**
 * As eb_file_close, for a writer that flushed as it went and kept the errno of its first failed
 * write (`first_errno`, 0 when none): that reason is the one reported, not the close's.
 */
EB_NODISCARD enum eb_status eb_file_close_after(FILE *fp, int first_errno, const char *path,
                                                struct eb_diag *diag);

/**
 * Reads the whole regular file `path` as text into `*text_out` (malloc'd, NUL-terminated; the
 * caller frees it). A folder, FIFO or device is refused without waiting; a file above
 * `max_bytes` is EB_ERR_FORMAT; an unreadable one EB_ERR_IO; messages name the path.
 */
EB_NODISCARD enum eb_status eb_file_read_text(const char *path, size_t max_bytes, char **text_out,
                                              struct eb_diag *diag);

#endif
