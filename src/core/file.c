#include <errno.h>
#include <string.h>

#include "eb/file.h"

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
