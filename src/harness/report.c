/*
 * Writing report files into the output folder. Each file is written under a temporary name in
 * the same folder, flushed to disk, then renamed over the final name: rename() within one
 * filesystem is atomic, so a crash leaves either the old file, the new file, or a stray
 * temporary — never a half-written report.json that a consumer would choke on.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness/report.h"

enum eb_status eb_report__write_atomic(const char *dir, const char *name, eb_report_body_fn body,
                                       const void *ctx, struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_IO;
    char path[4352], tmp[4400];
    FILE *fp = NULL;
    int tmp_made = 0;

    if (dir == NULL || dir[0] == '\0')
        dir = ".";
    int n = snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof(path)) {
        st = eb_diag_fail(diag, EB_ERR_IO,
                          "cannot write %s: output folder path too long (%zu bytes)", name,
                          strlen(dir));
        goto fail;
    }
    n = snprintf(tmp, sizeof(tmp), "%s/.%s.tmp.%ld", dir, name, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        st = eb_diag_fail(diag, EB_ERR_IO,
                          "cannot write %s: output folder path too long (%zu bytes)", name,
                          strlen(dir));
        goto fail;
    }

    fp = fopen(tmp, "w");
    if (fp == NULL) {
        st = eb_diag_fail(diag, EB_ERR_IO,
                          "cannot write %s: %s; check that the folder %s exists and is writable",
                          path, strerror(errno), dir);
        goto fail;
    }
    tmp_made = 1;
    errno = 0;
    if (body(fp, ctx) != 0 || fflush(fp) != 0 || ferror(fp)) {
        st = eb_diag_fail(diag, EB_ERR_IO, "cannot write %s: %s; check free space in %s", path,
                          errno != 0 ? strerror(errno) : "write failed", dir);
        goto fail;
    }
    /* The data must be on disk before the rename makes it visible under the final name. */
    if (fsync(fileno(fp)) != 0 && errno != EINVAL && errno != EROFS) {
        st = eb_diag_fail(diag, EB_ERR_IO, "cannot write %s: fsync: %s", path, strerror(errno));
        goto fail;
    }
    int rc = fclose(fp);
    fp = NULL;
    if (rc != 0) {
        st = eb_diag_fail(diag, EB_ERR_IO, "cannot write %s: %s; check free space in %s", path,
                          strerror(errno), dir);
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        st = eb_diag_fail(diag, EB_ERR_IO, "cannot write %s: rename from temporary file: %s", path,
                          strerror(errno));
        goto fail;
    }
    tmp_made = 0;
    st = EB_OK;

fail:
    if (fp != NULL)
        fclose(fp);
    if (tmp_made)
        unlink(tmp);
    return st;
}

static int json_body(FILE *fp, const void *ctx)
{
    struct eb_json_writer w;
    eb_json_writer_init_file(&w, fp, 1);
    eb_report_write_json(ctx, &w);
    if (eb_json_writer_error(&w))
        return -1;
    return fputc('\n', fp) == EOF ? -1 : 0;
}

static int md_body(FILE *fp, const void *ctx)
{
    eb_report_write_md(ctx, fp);
    return ferror(fp) ? -1 : 0;
}

enum eb_status eb_report_write_files(const struct eb_run_result *r, const char *dir,
                                     struct eb_diag *diag)
{
    enum eb_status st = eb_report__write_atomic(dir, "report.json", json_body, r, diag);
    if (st != EB_OK)
        goto fail;
    st = eb_report__write_atomic(dir, "report.md", md_body, r, diag);
    if (st != EB_OK)
        goto fail;
    return EB_OK;

fail:
    return st;
}
