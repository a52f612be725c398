#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/common/model_path.h"
#include "eb/path.h"

#define EXPORT_HINT "export ONNX with `yolo export model=best.pt format=onnx`"

static int ends_with_ci(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

enum eb_status eb_backend__check_model_path(const char *path, unsigned engine_advice,
                                            struct eb_diag *diag)
{
    if (ends_with_ci(path, ".engine") || ends_with_ci(path, ".plan") || ends_with_ci(path, ".trt"))
        return eb_diag_fail_advise(diag, EB_ERR_UNSUPPORTED, engine_advice,
                                   "failed to load model %s: TensorRT engines are tied to the GPU "
                                   "and TensorRT version that built them; " EXPORT_HINT,
                                   path);
    if (ends_with_ci(path, ".pt") || ends_with_ci(path, ".pth"))
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "failed to load model %s: PyTorch checkpoints cannot be run "
                            "directly; " EXPORT_HINT,
                            path);
    struct stat sb;
    const char *why = NULL;
    const int fd = eb_file_open_regular(path, &sb, &why);
    if (fd == EB_FILE_OPEN_FAILED)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to open model %s: %s; check the path", path,
                            strerror(errno));
    if (fd < 0)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to open model %s: %s; pass an .onnx file",
                            path, why);
    close(fd);
    return EB_OK;
}
