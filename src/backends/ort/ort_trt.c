/* The TensorRT provider's engine cache folder (ort_trt.h). */
#include "backends/ort/ort_trt.h"

#include <stdio.h>
#include <string.h>

#include "eb/path.h"

enum eb_status eb_ort__trt_cache_dir(const char *opt, const char *xdg_cache_home, const char *home,
                                     char *buf, size_t size, struct eb_diag *diag)
{
    int n;
    buf[0] = '\0';
    if (opt != NULL && strcmp(opt, "off") == 0)
        return EB_OK;
    if (opt != NULL && opt[0] == '\0')
        return eb_diag_fail_advise(diag, EB_ERR_INVALID_ARG, EB_ADVICE_TRT_CACHE,
                                   "the TensorRT engine cache folder is an empty name");
    if (opt != NULL)
        n = snprintf(buf, size, "%s", opt);
    else if (xdg_cache_home != NULL && xdg_cache_home[0] == '/')
        n = snprintf(buf, size, "%s/edgebench/trt", xdg_cache_home);
    else if (home != NULL && home[0] != '\0')
        n = snprintf(buf, size, "%s/.cache/edgebench/trt", home);
    else
        return eb_diag_fail_advise(diag, EB_ERR_INVALID_ARG, EB_ADVICE_TRT_CACHE,
                                   "no default TensorRT engine cache folder: $XDG_CACHE_HOME and "
                                   "$HOME are unset");
    if (n < 0 || (size_t)n >= size) {
        buf[0] = '\0';
        return eb_diag_fail_advise(diag, EB_ERR_INVALID_ARG, EB_ADVICE_TRT_CACHE,
                                   "the TensorRT engine cache folder's path is longer than %zu "
                                   "bytes",
                                   size - 1);
    }
    return EB_OK;
}

enum eb_status eb_ort__trt_cache_make(const char *dir, struct eb_diag *diag)
{
    char failed[EB_ORT_TRT_CACHE_MAX];
    const int err = eb_path_mkdir_p(dir, failed, sizeof(failed));
    if (err == 0)
        return EB_OK;
    /* Where the path already stops short (a parent is a file, or unwritable), name that part. */
    char at[EB_ORT_TRT_CACHE_MAX / 4] = "";
    if (strcmp(failed, dir) != 0)
        snprintf(at, sizeof(at), " (at %.150s)", failed);
    return eb_diag_fail_advise(diag, EB_ERR_IO, EB_ADVICE_TRT_CACHE,
                               "failed to create the TensorRT engine cache folder %.150s%s: %s",
                               dir, at, strerror(err));
}
