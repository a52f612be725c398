/* Files named by the user: opened without ever blocking, the folder a file is in, folders made
 * with their parents. */
#ifndef EB_PATH_H
#define EB_PATH_H

#include <stddef.h>
#include <sys/stat.h>

/** eb_file_open_regular's failures (its fd otherwise). */
#define EB_FILE_OPEN_FAILED (-1) /**< open() failed: errno says why */
#define EB_FILE_NOT_REGULAR (-2) /**< a folder, device, FIFO or socket: `*why_out` says which */

/**
 * Opens `path` read-only (close-on-exec) without waiting — a FIFO is refused, not waited on for
 * a writer — and keeps it only when it is a regular file. Returns the descriptor (the caller
 * closes it) with `*sb_out` filled, or EB_FILE_OPEN_FAILED (errno set) or EB_FILE_NOT_REGULAR
 * with `*why_out` = "it is a folder" or "not a regular file (a device, FIFO or socket)".
 */
int eb_file_open_regular(const char *path, struct stat *sb_out, const char **why_out);

/** The folder `path` names a file in: "." without a slash, "/" for a file at the root. */
void eb_path_dir(const char *path, char *buf, size_t size);

/** The last component of `path` (a pointer into it): the part after the last slash, or the
 * whole path when it has no slash or ends in one. */
const char *eb_path_base(const char *path);

/**
 * Creates folder `path` with its missing parents (mkdir -p, mode 0755); an existing folder is
 * fine. Returns 0, or the errno of the step that failed (ENOTDIR where `path` or a parent is a
 * file, ENAMETOOLONG from PATH_MAX bytes on, EINVAL for "") with the folder it was making in
 * `failed` (a prefix of `path`; NULL = not wanted).
 */
int eb_path_mkdir_p(const char *path, char *failed, size_t failed_size);

#endif
