/* Loading ONNX Runtime with dlopen; see ort_load.h for the search order. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/ort/ort_load.h"

#define SETUP_HINT "run scripts/setup.sh (or make demo) to fetch ONNX Runtime or set EB_ORT_LIB"

#define MAX_CANDIDATES 6

struct candidate {
    char path[512];
    char error[256]; /* dlerror() of the attempt */
    int exists;      /* the file is there, so its error says more than "not found" */
};

/* Copies src into dst, cut to fit; always NUL-terminated. */
static void copy_str(char *dst, size_t dst_size, const char *src)
{
    size_t n = src != NULL ? strlen(src) : 0;
    if (n >= dst_size)
        n = dst_size - 1;
    if (n > 0)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

static size_t add_candidate(struct candidate *c, size_t n, const char *path)
{
    if (path == NULL || path[0] == '\0' || n >= MAX_CANDIDATES)
        return n;
    for (size_t i = 0; i < n; i++)
        if (strcmp(c[i].path, path) == 0)
            return n;
    copy_str(c[n].path, sizeof(c[n].path), path);
    return n + 1;
}

/* <dir of the running executable>/../lib/edgebench/libonnxruntime.so.1, or "" when unknown. */
static void exe_relative_path(char *buf, size_t buf_size)
{
    char exe[512];
    buf[0] = '\0';
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0 || (size_t)n >= sizeof(exe) - 1)
        return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL)
        return;
    *slash = '\0';
    int w = snprintf(buf, buf_size, "%s/../lib/edgebench/libonnxruntime.so.1", exe);
    if (w < 0 || (size_t)w >= buf_size)
        buf[0] = '\0';
}

/*
 * RTLD_NODELETE: dlclose only drops the reference, the library stays mapped until the process
 * ends. ONNX Runtime keeps process-wide state (protobuf descriptor pools, the logging manager of
 * the shared OrtEnv, thread-local storage with destructors) that is not built to be unloaded:
 * unmapping it can crash in an at-exit destructor, and loading it again after an unload is not
 * supported. Keeping it mapped costs nothing once it has been used.
 */
static void *try_open(struct candidate *c)
{
    struct stat sb;
    /* A bare name (no '/') goes through the dynamic linker's search path. */
    c->exists = strchr(c->path, '/') == NULL || stat(c->path, &sb) == 0;
    dlerror();
    void *h = dlopen(c->path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (h == NULL) {
        const char *e = dlerror();
        copy_str(c->error, sizeof(c->error), e != NULL ? e : "unknown dlopen error");
    }
    return h;
}

static enum eb_status not_found(const struct candidate *c, size_t n, int explicit_choice,
                                const struct eb_log *log, struct eb_diag *diag)
{
    /* The most relevant attempt: the first whose file exists (its error is a real problem
     * such as a wrong architecture or a missing dependency), else the first one. */
    size_t best = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].exists) {
            best = i;
            break;
        }
    }
    char tried[2048];
    size_t used = 0;
    tried[0] = '\0';
    for (size_t i = 0; i < n && used < sizeof(tried); i++) {
        int w = snprintf(tried + used, sizeof(tried) - used, "%s%s", i ? ", " : "", c[i].path);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    eb_log_msg(log, EB_LOG_WARN, "ONNX Runtime search: tried %s; most relevant error: %s", tried,
               c[best].error);
    /* The diag line is short (EB_DIAG_MSG_MAX): the dlerror text already names its path, so
     * it stands for the whole list when the list does not fit. */
    char line[1024];
    /* Truncation is expected and handled below (the return value is checked for that reason). */
    if (snprintf(line, sizeof(line), "failed to load ONNX Runtime%s: tried %s (%s); " SETUP_HINT,
                 explicit_choice ? " from the library you named" : "", tried, c[best].error) < 0)
        line[0] = '\0';
    if (strlen(line) < EB_DIAG_MSG_MAX)
        return eb_diag_fail_advise(diag, EB_ERR_IO, EB_ADVICE_ORT_LIB, "%s", line);
    size_t room = EB_DIAG_MSG_MAX - 1 - strlen("failed to load ONNX Runtime: ; ") -
                  strlen(SETUP_HINT) - strlen(" (+9 more, see log)");
    const char *e = c[best].error;
    int clip = strlen(e) > room ? (int)room : (int)strlen(e);
    if (n > 1)
        return eb_diag_fail_advise(
            diag, EB_ERR_IO, EB_ADVICE_ORT_LIB,
            "failed to load ONNX Runtime: %.*s (+%zu more, see log); " SETUP_HINT, clip, e, n - 1);
    return eb_diag_fail_advise(diag, EB_ERR_IO, EB_ADVICE_ORT_LIB,
                               "failed to load ONNX Runtime: %.*s; " SETUP_HINT, clip, e);
}

enum eb_status eb_ort__lib_open(const char *explicit_path, const struct eb_log *log,
                                struct eb_ort_lib *lib_out, struct eb_diag *diag)
{
    struct candidate c[MAX_CANDIDATES];
    size_t n = 0;
    void *h = NULL;
    size_t found = 0;
    enum eb_status st = EB_ERR_IO;

    memset(c, 0, sizeof(c));
    const char *env = getenv("EB_ORT_LIB");
    int explicit_choice = 1;
    if (explicit_path != NULL && explicit_path[0] != '\0') {
        n = add_candidate(c, n, explicit_path);
    } else if (env != NULL && env[0] != '\0') {
        n = add_candidate(c, n, env);
    } else {
        explicit_choice = 0;
        char rel[512];
#ifdef EB_ORT_FETCHED_LIB
        n = add_candidate(c, n, EB_ORT_FETCHED_LIB);
#endif
#ifdef EB_ORT_INSTALLED_LIB
        n = add_candidate(c, n, EB_ORT_INSTALLED_LIB);
#endif
        exe_relative_path(rel, sizeof(rel));
        n = add_candidate(c, n, rel);
        n = add_candidate(c, n, "libonnxruntime.so.1");
    }

    for (found = 0; found < n; found++) {
        h = try_open(&c[found]);
        if (h != NULL)
            break;
    }
    if (h == NULL) {
        st = not_found(c, n, explicit_choice, log, diag);
        goto fail;
    }

    const char *path = c[found].path;
    typedef const OrtApiBase *(*get_api_base_fn)(void);
    get_api_base_fn get_base;
    /* POSIX guarantees that a data pointer from dlsym converts to a function pointer. */
    *(void **)&get_base = dlsym(h, "OrtGetApiBase");
    if (get_base == NULL) {
        st = eb_diag_fail_advise(diag, EB_ERR_UNSUPPORTED, EB_ADVICE_ORT_LIB,
                                 "failed to use %s: it has no OrtGetApiBase, so it is not ONNX "
                                 "Runtime (its library is libonnxruntime.so.1)",
                                 path);
        goto fail;
    }
    const OrtApiBase *base = get_base();
    const char *version =
        base != NULL && base->GetVersionString != NULL ? base->GetVersionString() : "unknown";
    const OrtApi *api = base != NULL ? base->GetApi(ORT_API_VERSION) : NULL;
    if (api == NULL) {
        st = eb_diag_fail_advise(
            diag, EB_ERR_UNSUPPORTED, EB_ADVICE_ORT_LIB,
            "failed to use ONNX Runtime %s from %s: it is too old, edgebench needs "
            "1.%d or newer (C API %d); run scripts/setup.sh for a newer one",
            version, path, ORT_API_VERSION, ORT_API_VERSION);
        goto fail;
    }

    memset(lib_out, 0, sizeof(*lib_out));
    lib_out->handle = h;
    lib_out->api = api;
    copy_str(lib_out->path, sizeof(lib_out->path), path);
    copy_str(lib_out->version, sizeof(lib_out->version), version);
    eb_log_msg(log, EB_LOG_DEBUG, "loaded ONNX Runtime %s from %s", version, path);
    return EB_OK;

fail:
    if (h != NULL)
        dlclose(h);
    return st;
}

void eb_ort__lib_close(struct eb_ort_lib *lib)
{
    if (lib == NULL)
        return;
    if (lib->handle != NULL)
        dlclose(lib->handle);
    memset(lib, 0, sizeof(*lib));
}
