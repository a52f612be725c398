/* eb_file_open_regular, eb_path_dir (eb/path.h). */
#include "eb/path.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int eb_file_open_regular(const char *path, struct stat *sb_out, const char **why_out)
{
    /* O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer. */
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return EB_FILE_OPEN_FAILED;
    if (fstat(fd, sb_out) != 0) {
        close(fd);
        return EB_FILE_OPEN_FAILED;
    }
    if (!S_ISREG(sb_out->st_mode)) {
        *why_out = S_ISDIR(sb_out->st_mode) ? "it is a folder"
                                            : "not a regular file (a device, FIFO or socket)";
        close(fd);
        return EB_FILE_NOT_REGULAR;
    }
    return fd;
}

void eb_path_dir(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(buf, size, ".");
    else
        snprintf(buf, size, "%.*s", (int)(slash - path + (slash == path)), path);
}
