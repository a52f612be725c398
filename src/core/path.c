/* eb_file_open_regular, eb_path_dir, eb_path_base, eb_path_mkdir_p (eb/path.h). */
#include "eb/path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

const char *eb_path_base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL && slash[1] != '\0' ? slash + 1 : path;
}

int eb_path_mkdir_p(const char *path, char *failed, size_t failed_size)
{
    char buf[PATH_MAX];
    const size_t n = strlen(path);
    int err = 0;
    if (n == 0 || n >= sizeof(buf)) {
        err = n == 0 ? EINVAL : ENAMETOOLONG;
        snprintf(buf, sizeof(buf), "%s", path);
        goto done;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        const char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            err = errno;
            goto done;
        }
        buf[i] = c;
    }
    /* EEXIST on the last step is also a file of that name. */
    struct stat sb;
    if (stat(buf, &sb) != 0)
        err = errno;
    else if (!S_ISDIR(sb.st_mode))
        err = ENOTDIR;
done:
    if (err != 0 && failed != NULL && failed_size > 0)
        snprintf(failed, failed_size, "%s", buf);
    return err;
}
