#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eb/file.h"
#include "eb/path.h"

enum eb_status eb_file_close_after(FILE *fp, int first_errno, const char *path,
                                   struct eb_diag *diag)
{
    if (fp != NULL && first_errno != 0) {
        fclose(fp);
        return eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s", path, strerror(first_errno));
    }
    return eb_file_close(fp, path, diag);
}

enum eb_status eb_file_close(FILE *fp, const char *path, struct eb_diag *diag)
{
    if (fp == NULL)
        return EB_OK;
    int err = 0;
    errno = 0;
    if (fflush(fp) != 0 || ferror(fp))
        err = errno != 0 ? errno : EIO;
    errno = 0;
    if (fclose(fp) != 0 && err == 0)
        err = errno != 0 ? errno : EIO;
    if (err != 0)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s", path, strerror(err));
    return EB_OK;
}

enum eb_status eb_file_read_text(const char *path, size_t max_bytes, char **text_out,
                                 struct eb_diag *diag)
{
    struct stat sb;
    const char *why = NULL;
    const int fd = eb_file_open_regular(path, &sb, &why);
    if (fd == EB_FILE_OPEN_FAILED)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to read %s: %s; check the path", path,
                            strerror(errno));
    if (fd < 0)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to read %s: %s; give a text file", path, why);
    if ((uint64_t)sb.st_size > (uint64_t)max_bytes) {
        close(fd);
        return eb_diag_fail(diag, EB_ERR_FORMAT, "failed to read %s: %lld bytes, above %zu", path,
                            (long long)sb.st_size, max_bytes);
    }
    char *buf = malloc((size_t)sb.st_size + 1);
    if (buf == NULL) {
        close(fd);
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read %s: out of memory", path);
    }
    size_t len = 0;
    while (len < (size_t)sb.st_size) {
        const ssize_t got = read(fd, buf + len, (size_t)sb.st_size - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            const int err = got < 0 ? errno : 0;
            close(fd);
            free(buf);
            return eb_diag_fail(diag, EB_ERR_IO, "failed to read %s: %s", path,
                                err ? strerror(err) : "the file shrank while it was read");
        }
        len += (size_t)got;
    }
    close(fd);
    buf[len] = '\0';
    if (strlen(buf) != len) {
        free(buf);
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to read %s: it holds a NUL byte; give a "
                            "text file",
                            path);
    }
    *text_out = buf;
    return EB_OK;
}
