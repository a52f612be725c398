/*
 * The ONNX Runtime backend: the eb_backend_ops vtable over ORT's C API, with the library loaded
 * at run time (ort_load.c). One instance per slot; everything an instance uses (library handle,
 * OrtEnv reference, session, cached OrtValues, class names) hangs off its private state, so two
 * instances can run in two threads at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <onnxruntime_c_api.h>

#include "backends/common/model_path.h"
#include "backends/common/names.h"
#include "backends/ort/ort_backend.h"
#include "backends/ort/ort_load.h"
#include "backends/ort/ort_profile.h"
#include "backends/ort/ort_trt.h"
#include "eb/clock.h"
#include "eb/engine.h"

#define DEFAULT_IMGSZ 640
#define WHAT_MAX      512 /* "<verb> <what>" part of a message, before it is fitted to the diag */

/* The caller's input memory wrapped in an OrtValue, re-created only when the memory changes. */
struct ort_input {
    OrtValue *value; /* owned; wraps `data` without copying */
    const void *data;
    enum eb_dtype dtype;
    int rank;
    int64_t shape[EB_MAX_RANK];
};

struct ort_priv {
    struct eb_ort_lib lib; /* owned */
    const OrtApi *api;     /* = lib.api */
    const struct eb_log *log;
    enum eb_device device;
    OrtEnv *env;             /* owned reference (ORT shares one env per process) */
    OrtSessionOptions *opts; /* owned */
    OrtSession *session;     /* owned; NULL until load */
    OrtMemoryInfo *cpu_info; /* owned */
    char provider[64];
    enum eb_limit_type limit_type;
    char limit_methods[256];
    char engine_cache[EB_ORT_TRT_CACHE_MAX]; /* tensorrt: the engine cache folder; "" = none */
    char precision[8]; /* tensorrt --precision fp16/int8: "fp16", "int8"; else "" */
    char model[256];   /* the model's name for messages */

    size_t n_in, n_out;
    char *in_names[EB_BACKEND_MAX_IO];  /* owned, full length (eb_io_desc names may be cut) */
    char *out_names[EB_BACKEND_MAX_IO]; /* owned */
    struct ort_input in[EB_BACKEND_MAX_IO];
    /* Outputs of the last Run (owned), handed back to Run as preallocated outputs so that the
     * steady state allocates nothing; `out_view` describes them. */
    OrtValue *out[EB_BACKEND_MAX_IO];
    struct eb_tensor out_view[EB_BACKEND_MAX_IO];

    char **class_names; /* owned, n_class_names strings, each owned */
    size_t n_class_names;

    /*
     * --profile: ONNX Runtime's profiler writes its file into prof_dir (made at open, removed
     * with the file at close). It profiles the whole session, so profile_reset only notes how
     * many Run calls came before it (runs_at_reset), and reading the file leaves those runs out.
     * profile_runs counts infers from the reset; an infer is one Run unless a Run was retried
     * (retries), which would shift the file's runs against them.
     */
    int profile;
    char prof_dir[1024];        /* "" = none */
    uint64_t runs;              /* Run calls since load */
    uint64_t runs_at_reset;     /* of which before the last profile_reset */
    uint64_t retries;           /* infers that called Run twice, since load */
    uint64_t retries_at_reset;  /* of which before the last profile_reset */
    int prof_ended;             /* SessionEndProfiling was called: prof/prof_diag are final */
    struct eb_diag prof_diag;   /* why the profile could not be read (status EB_OK: it was) */
    struct eb_ort_profile prof; /* owned */
};

/* ---- messages ------------------------------------------------------------------------------ */

/*
 * ORT messages often start with the source location and C++ signature that raised them, then
 * "[ONNXRuntimeError] : 1 : FAIL : " and the text that matters. Only that text fits a diag line.
 */
static const char *strip_ort_prefix(const char *msg)
{
    const char *mark = strstr(msg, "[ONNXRuntimeError]");
    if (mark == NULL)
        return msg;
    const char *rest = mark + strlen("[ONNXRuntimeError]");
    for (int colons = 0; colons < 3; colons++) {
        const char *c = strstr(rest, " : ");
        if (c == NULL)
            return msg;
        rest = c + 3;
    }
    return rest;
}

/*
 * Records "<head><piece><tail>" in diag with `advice` (enum eb_advice bits), shortening `piece`
 * (an ORT message or a path, the part that can be long) so that the whole line fits
 * EB_DIAG_MSG_MAX and what `tail` says to do is never cut off. Line breaks in `piece` become
 * spaces: a diag is one line.
 */
static enum eb_status fail_fit(struct eb_diag *diag, enum eb_status st, unsigned advice,
                               const char *head, const char *piece, const char *tail, int keep_end)
{
    char clean[EB_DIAG_MSG_MAX];
    piece = strip_ort_prefix(piece != NULL ? piece : "");
    snprintf(clean, sizeof(clean), "%s", piece);
    for (char *c = clean; *c != '\0'; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    size_t len = strlen(clean);
    while (len > 0 && clean[len - 1] == ' ')
        clean[--len] = '\0';
    size_t fixed = strlen(head) + strlen(tail);
    size_t room = fixed < EB_DIAG_MSG_MAX - 1 ? EB_DIAG_MSG_MAX - 1 - fixed : 0;
    if (len > room && keep_end && room >= 3) {
        /* A path: its end (the file name) says more than its start. */
        memmove(clean + 3, clean + len - (room - 3), room - 3 + 1);
        memcpy(clean, "...", 3);
    } else if (len > room) {
        if (room >= 3) {
            clean[room - 3] = '\0';
            memcpy(clean + room - 3, "...", 4);
        } else {
            clean[room] = '\0';
        }
    }
    return eb_diag_fail_advise(diag, st, advice, "%s%s%s", head, clean, tail);
}

/*
 * Every ORT call goes through here: NULL status = success. Otherwise the ORT message goes into
 * diag as "failed to <what>: <ORT message>; <todo>" with `advice` (enum eb_advice bits, the
 * remedies that are settings) and the status is always released.
 */
static enum eb_status ort_check(const struct ort_priv *p, OrtStatus *s, enum eb_status st,
                                const char *what, const char *todo, unsigned advice,
                                struct eb_diag *diag)
{
    if (s == NULL)
        return EB_OK;
    char head[EB_DIAG_MSG_MAX], tail[EB_DIAG_MSG_MAX];
    snprintf(head, sizeof(head), "failed to %s: ", what);
    snprintf(tail, sizeof(tail), "%s%s", todo[0] != '\0' ? "; " : "", todo);
    st = fail_fit(diag, st, advice, head, p->api->GetErrorMessage(s), tail, 0);
    p->api->ReleaseStatus(s);
    return st;
}

/* ---- small helpers ------------------------------------------------------------------------- */

static enum eb_dtype dtype_from_ort(ONNXTensorElementDataType t)
{
    switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return EB_DTYPE_F32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return EB_DTYPE_F16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return EB_DTYPE_F64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: return EB_DTYPE_U8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8: return EB_DTYPE_I8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return EB_DTYPE_I32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return EB_DTYPE_I64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return EB_DTYPE_BOOL;
    default: return EB_DTYPE_UNKNOWN;
    }
}

static ONNXTensorElementDataType dtype_to_ort(enum eb_dtype t)
{
    switch (t) {
    case EB_DTYPE_F32: return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    case EB_DTYPE_F16: return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    case EB_DTYPE_F64: return ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
    case EB_DTYPE_U8: return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
    case EB_DTYPE_I8: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8;
    case EB_DTYPE_I32: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
    case EB_DTYPE_I64: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
    case EB_DTYPE_BOOL: return ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL;
    case EB_DTYPE_UNKNOWN: break;
    }
    return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* ---- class names from the "names" metadata --------------------------------------------------- */

/* Reads the class names of the loaded model; a missing or unreadable entry is only a warning. */
static void load_class_names(struct ort_priv *p)
{
    const OrtApi *api = p->api;
    OrtAllocator *alloc = NULL;
    OrtModelMetadata *md = NULL;
    char *value = NULL;
    struct eb_diag d = {0};

    if (ort_check(p, api->GetAllocatorWithDefaultOptions(&alloc), EB_ERR_BACKEND,
                  "get the default allocator", "", 0, &d) != EB_OK ||
        ort_check(p, api->SessionGetModelMetadata(p->session, &md), EB_ERR_BACKEND,
                  "read the model metadata", "", 0, &d) != EB_OK ||
        ort_check(p, api->ModelMetadataLookupCustomMetadataMap(md, alloc, "names", &value),
                  EB_ERR_BACKEND, "read the class names", "", 0, &d) != EB_OK) {
        eb_log_msg(p->log, EB_LOG_WARN, "model %s: %s; detections are labelled by class id",
                   p->model, d.msg);
        goto done;
    }
    if (value == NULL) /* no "names": not an Ultralytics export; ids only */
        goto done;
    if (eb_backend__parse_names(value, &p->class_names, &p->n_class_names, NULL) != EB_OK) {
        eb_log_msg(p->log, EB_LOG_WARN,
                   "model %s: cannot parse the class names in its metadata (\"%.60s...\"); "
                   "detections are labelled by class id",
                   p->model, value);
        goto done;
    }
done:
    if (value != NULL && alloc != NULL)
        (void)ort_check(p, api->AllocatorFree(alloc, value), EB_OK, "", "", 0, NULL);
    if (md != NULL)
        api->ReleaseModelMetadata(md);
}

/* ---- probe / open / close -------------------------------------------------------------------- */

/*
 * The execution providers `api` offers, comma-separated into `out` (cut at a provider boundary
 * when they do not fit); "" when ONNX Runtime cannot list them.
 */
static void list_providers(const OrtApi *api, char *out, size_t size)
{
    char **list = NULL;
    int n = 0;
    out[0] = '\0';
    OrtStatus *s = api->GetAvailableProviders(&list, &n);
    if (s != NULL) {
        api->ReleaseStatus(s);
        return;
    }
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(list[i]) + (i > 0 ? 1 : 0);
        if (used + len >= size)
            break;
        used += (size_t)snprintf(out + used, size - used, "%s%s", i > 0 ? "," : "", list[i]);
    }
    s = api->ReleaseAvailableProviders(list, n);
    if (s != NULL)
        api->ReleaseStatus(s);
}

static enum eb_status ort_probe(const struct eb_backend_config *cfg,
                                struct eb_backend_probe *probe_out, struct eb_diag *diag)
{
    struct eb_ort_lib lib = {0};
    enum eb_status st = eb_ort__lib_open(cfg != NULL ? cfg->ort_lib : NULL,
                                         cfg != NULL ? cfg->log : NULL, &lib, diag);
    if (st != EB_OK)
        return st;
    memset(probe_out, 0, sizeof(*probe_out));
    probe_out->available = 1;
    snprintf(probe_out->version, sizeof(probe_out->version), "%s", lib.version);
    snprintf(probe_out->library, sizeof(probe_out->library), "%s", lib.path);
    list_providers(lib.api, probe_out->providers, sizeof(probe_out->providers));
    eb_ort__lib_close(&lib);
    return EB_OK;
}

/*
 * ONNX Runtime's own log lines (CreateEnvWithCustomLogger): into the run's log at DEBUG, so
 * they reach run.log always and the console only with --verbose; without a log they are
 * dropped. ORT keeps one environment per process and the first CreateEnv sets its logger, so
 * `param` is the struct eb_log of the first instance opened while none was alive; every
 * instance of a run shares the run's log (eb_backend_config.log outlives the instance).
 */
static void ORT_API_CALL ort_log_line(void *param, OrtLoggingLevel severity, const char *category,
                                      const char *logid, const char *code_location,
                                      const char *message)
{
    static const char *const names[] = {"verbose", "info", "warning", "error", "fatal"};
    const struct eb_log *log = param;
    (void)logid;
    if (log == NULL || message == NULL)
        return;
    const char *sev = severity >= ORT_LOGGING_LEVEL_VERBOSE && severity <= ORT_LOGGING_LEVEL_FATAL
                          ? names[severity]
                          : "?";
    eb_log_msg(log, EB_LOG_DEBUG, "onnxruntime %s [%s] %s: %s", sev,
               category != NULL ? category : "", code_location != NULL ? code_location : "",
               message);
}

/* Whether this ONNX Runtime build has execution provider `name` (e.g. "CUDAExecutionProvider"). */
static enum eb_status has_provider(struct ort_priv *p, const char *name, int *yes,
                                   struct eb_diag *diag)
{
    char **list = NULL;
    int n = 0;
    enum eb_status st =
        ort_check(p, p->api->GetAvailableProviders(&list, &n), EB_ERR_BACKEND,
                  "list the execution providers of ONNX Runtime",
                  "the ONNX Runtime library may be broken", EB_ADVICE_ORT_LIB, diag);
    if (st != EB_OK)
        return st;
    *yes = 0;
    for (int i = 0; i < n; i++)
        if (strcmp(list[i], name) == 0)
            *yes = 1;
    (void)ort_check(p, p->api->ReleaseAvailableProviders(list, n), EB_OK, "", "", 0, NULL);
    return EB_OK;
}

static enum eb_status no_provider(const struct ort_priv *p, const char *what, const char *ep,
                                  struct eb_diag *diag)
{
    char head[EB_DIAG_MSG_MAX], tail[EB_DIAG_MSG_MAX];
    snprintf(head, sizeof(head), "failed to enable the %s execution provider: this ONNX Runtime (",
             what);
    snprintf(tail, sizeof(tail),
             ", %s) has no %s; a build with CUDA/TensorRT has it (on a Jetson, the JetPack "
             "onnxruntime-gpu)",
             p->lib.version, ep);
    return fail_fit(diag, EB_ERR_UNSUPPORTED, EB_ADVICE_ORT_LIB | EB_ADVICE_CPU, head, p->lib.path,
                    tail, 1);
}

/*
 * Whether an ORT message says that a provider library of ONNX Runtime itself
 * (libonnxruntime_providers_shared.so, ..._cuda.so, ..._tensorrt.so) is absent. Builds such as
 * the npm one list CUDA and TensorRT among their providers but do not ship those libraries.
 * A library the provider needs (libcudnn, libcublas, libnvinfer) missing is another matter: the
 * provider is there, the machine's CUDA installation is not.
 */
static int provider_lib_missing(const char *msg)
{
    const char *e = strstr(msg, ": cannot open shared object file");
    if (e == NULL)
        return 0;
    const char *start = e;
    while (start > msg && start[-1] != '/' && start[-1] != ' ')
        start--;
    return strncmp(start, "libonnxruntime_providers_", strlen("libonnxruntime_providers_")) == 0;
}

/* ort_check for the calls that enable execution provider `ep` (`what`: "CUDA", "TensorRT"). */
static enum eb_status ep_check(struct ort_priv *p, OrtStatus *s, const char *what, const char *ep,
                               const char *todo, unsigned advice, struct eb_diag *diag)
{
    if (s == NULL)
        return EB_OK;
    if (provider_lib_missing(p->api->GetErrorMessage(s))) {
        eb_log_msg(p->log, EB_LOG_DEBUG, "ONNX Runtime: %s", p->api->GetErrorMessage(s));
        p->api->ReleaseStatus(s);
        return no_provider(p, what, ep, diag);
    }
    char w[WHAT_MAX];
    snprintf(w, sizeof(w), "enable the %s execution provider", what);
    return ort_check(p, s, EB_ERR_DEVICE, w, todo, advice, diag);
}

static enum eb_status append_cuda(struct ort_priv *p, uint64_t limit_bytes, struct eb_diag *diag)
{
    const OrtApi *api = p->api;
    OrtCUDAProviderOptionsV2 *o = NULL;
    char limit[32];
    snprintf(limit, sizeof(limit), "%llu", (unsigned long long)limit_bytes);
    /* kSameAsRequested: the arena grows by what is asked, so it does not overshoot the cap by
     * doubling near the limit. */
    const char *keys[] = {"device_id", "gpu_mem_limit", "arena_extend_strategy"};
    const char *vals[] = {"0", limit, "kSameAsRequested"};
    const char *todo = "check the CUDA/cuDNN installation (LD_LIBRARY_PATH)";
    const unsigned advice = EB_ADVICE_CPU;
    const char *ep = "CUDAExecutionProvider";
    enum eb_status st =
        ep_check(p, api->CreateCUDAProviderOptions(&o), "CUDA", ep, todo, advice, diag);
    if (st == EB_OK)
        st = ep_check(p, api->UpdateCUDAProviderOptions(o, keys, vals, EB_ARRAY_LEN(keys)), "CUDA",
                      ep, todo, advice, diag);
    if (st == EB_OK)
        st = ep_check(p, api->SessionOptionsAppendExecutionProvider_CUDA_V2(p->opts, o), "CUDA", ep,
                      todo, advice, diag);
    if (o != NULL)
        api->ReleaseCUDAProviderOptions(o);
    return st;
}

/*
 * The TensorRT provider: workspace `workspace_bytes`; --precision fp16 (trt_fp16_enable) or int8
 * (trt_int8_enable from the model's Q/DQ scales, no calibration table, with fp16 for the layers
 * that stay in float, as trtexec --int8 --fp16); the engine and timing caches in
 * p->engine_cache unless it is "".
 */
static enum eb_status append_tensorrt(struct ort_priv *p, uint64_t workspace_bytes,
                                      const struct eb_backend_config *cfg, struct eb_diag *diag)
{
    const OrtApi *api = p->api;
    OrtTensorRTProviderOptionsV2 *o = NULL;
    char ws[32];
    snprintf(ws, sizeof(ws), "%llu", (unsigned long long)workspace_bytes);
    const char *keys[10], *vals[10];
    size_t n = 0;
    keys[n] = "device_id", vals[n++] = "0";
    keys[n] = "trt_max_workspace_size", vals[n++] = ws;
    if (cfg->int8 || cfg->precision == EB_ENGINE_PRECISION_FP16)
        keys[n] = "trt_fp16_enable", vals[n++] = "1";
    if (cfg->int8)
        keys[n] = "trt_int8_enable", vals[n++] = "1";
    if (p->engine_cache[0] != '\0') {
        keys[n] = "trt_engine_cache_enable", vals[n++] = "1";
        keys[n] = "trt_engine_cache_path", vals[n++] = p->engine_cache;
        keys[n] = "trt_timing_cache_enable", vals[n++] = "1";
        keys[n] = "trt_timing_cache_path", vals[n++] = p->engine_cache;
    }
    const char *todo = "check the TensorRT/CUDA installation (LD_LIBRARY_PATH)";
    const unsigned advice = EB_ADVICE_CUDA | EB_ADVICE_CPU;
    const char *ep = "TensorrtExecutionProvider";
    enum eb_status st =
        ep_check(p, api->CreateTensorRTProviderOptions(&o), "TensorRT", ep, todo, advice, diag);
    if (st == EB_OK)
        st = ep_check(p, api->UpdateTensorRTProviderOptions(o, keys, vals, n), "TensorRT", ep, todo,
                      advice, diag);
    if (st == EB_OK)
        st = ep_check(p, api->SessionOptionsAppendExecutionProvider_TensorRT_V2(p->opts, o),
                      "TensorRT", ep, todo, advice, diag);
    if (o != NULL)
        api->ReleaseTensorRTProviderOptions(o);
    return st;
}

/* The engine cache folder of --trt_cache (cfg->trt_cache) in p->engine_cache, made. */
static enum eb_status setup_trt_cache(struct ort_priv *p, const struct eb_backend_config *cfg,
                                      struct eb_diag *diag)
{
    enum eb_status st =
        eb_ort__trt_cache_dir(cfg->trt_cache, getenv("XDG_CACHE_HOME"), getenv("HOME"),
                              p->engine_cache, sizeof(p->engine_cache), diag);
    if (st == EB_OK && p->engine_cache[0] != '\0')
        st = eb_ort__trt_cache_make(p->engine_cache, diag);
    if (st != EB_OK)
        p->engine_cache[0] = '\0';
    return st;
}

static enum eb_status ort_open(void *priv, const struct eb_backend_config *cfg,
                               struct eb_diag *diag)
{
    struct ort_priv *p = priv;
    enum eb_status st = EB_ERR_INVALID_ARG;
    /* On failure everything made so far stays in `p`; ort_close releases it (the caller
     * always closes a partially opened instance). */
    if (cfg == NULL) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG, "failed to open ONNX Runtime: no config");
        goto fail;
    }
    if (cfg->precision != EB_ENGINE_PRECISION_FP32 && cfg->device != EB_DEVICE_TENSORRT) {
        st = eb_diag_fail_advise(diag, EB_ERR_UNSUPPORTED, EB_ADVICE_TENSORRT | EB_ADVICE_FP32,
                                 "failed to open ONNX Runtime: fp16 precision is its TensorRT "
                                 "provider's and the native engine's (on the cuda device); "
                                 "ONNX Runtime's %s provider runs a model in the precision it "
                                 "was exported in, so pass an fp16 ONNX model instead",
                                 eb_device_name(cfg->device));
        goto fail;
    }
    p->log = cfg->log;
    p->device = cfg->device;
    st = eb_ort__lib_open(cfg->ort_lib, cfg->log, &p->lib, diag);
    if (st != EB_OK)
        goto fail;
    p->api = p->lib.api;
    const OrtApi *api = p->api;
    const char *todo = "the ONNX Runtime library may be broken";
    const unsigned advice = EB_ADVICE_ORT_LIB;

    if ((st = ort_check(
             p,
             api->CreateEnvWithCustomLogger(ort_log_line, (void *)cfg->log,
                                            ORT_LOGGING_LEVEL_WARNING, "edgebench", &p->env),
             EB_ERR_BACKEND, "create the ONNX Runtime environment", todo, advice, diag)) != EB_OK ||
        (st = ort_check(p, api->CreateSessionOptions(&p->opts), EB_ERR_BACKEND,
                        "create ONNX Runtime session options", todo, advice, diag)) != EB_OK ||
        (st = ort_check(p, api->SetIntraOpNumThreads(p->opts, cfg->threads > 0 ? cfg->threads : 0),
                        EB_ERR_INVALID_ARG, "set the ONNX Runtime thread count", "",
                        EB_ADVICE_FEWER_THREADS, diag)) != EB_OK ||
        (st = ort_check(p, api->SetInterOpNumThreads(p->opts, 1), EB_ERR_BACKEND,
                        "set the ONNX Runtime inter-op threads", todo, advice, diag)) != EB_OK ||
        (st = ort_check(p, api->SetSessionGraphOptimizationLevel(p->opts, ORT_ENABLE_ALL),
                        EB_ERR_BACKEND, "set the ONNX Runtime optimisation level", todo, advice,
                        diag)) != EB_OK)
        goto fail;
    /*
     * No spinning: ORT's pool threads normally busy-wait between ops to shave latency. In dual
     * mode two slots share the CPU, and a spinning pool would burn the other slot's cores; the
     * interference ratio (dual vs solo) would then measure our spinning, not the models.
     */
    if ((st = ort_check(
             p, api->AddSessionConfigEntry(p->opts, "session.intra_op.allow_spinning", "0"),
             EB_ERR_BACKEND, "disable ONNX Runtime spinning", todo, advice, diag)) != EB_OK ||
        (st = ort_check(
             p, api->AddSessionConfigEntry(p->opts, "session.inter_op.allow_spinning", "0"),
             EB_ERR_BACKEND, "disable ONNX Runtime spinning", todo, advice, diag)) != EB_OK ||
        (st = ort_check(
             p, api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &p->cpu_info),
             EB_ERR_BACKEND, "describe host memory to ONNX Runtime", todo, advice, diag)) != EB_OK)
        goto fail;

    if (cfg->profile) {
        /* Into a folder of our own: ONNX Runtime makes the file when the session is created,
         * under the prefix given (by default in the working directory). */
        char prefix[sizeof(p->prof_dir) + 8];
        if ((st = eb_ort__profile_dir_make(getenv("TMPDIR"), p->prof_dir, sizeof(p->prof_dir),
                                           diag)) != EB_OK)
            goto fail;
        snprintf(prefix, sizeof(prefix), "%s/ort", p->prof_dir);
        if ((st = ort_check(p, api->EnableProfiling(p->opts, prefix), EB_ERR_BACKEND,
                            "enable ONNX Runtime's profiler", todo, advice, diag)) != EB_OK)
            goto fail;
        p->profile = 1;
    }

    /* The limit in bytes (GB = 10^9 bytes throughout edgebench); gb only for the methods text. */
    const uint64_t limit = cfg->mem_limit_bytes;
    const double gb = (double)limit / 1e9;
    int yes = 0;
    switch (cfg->device) {
    case EB_DEVICE_CPU:
        snprintf(p->provider, sizeof(p->provider), "CPUExecutionProvider");
        /* ONNX Runtime's CPU arena takes no cap: only the per-frame monitoring watches it. */
        p->limit_type = EB_LIMIT_SOFT;
        snprintf(p->limit_methods, sizeof(p->limit_methods),
                 "ort cpu: no allocator cap, monitored only");
        break;
    case EB_DEVICE_CUDA:
        if ((st = has_provider(p, "CUDAExecutionProvider", &yes, diag)) != EB_OK)
            goto fail;
        if (!yes) {
            st = no_provider(p, "CUDA", "CUDAExecutionProvider", diag);
            goto fail;
        }
        if ((st = append_cuda(p, limit, diag)) != EB_OK)
            goto fail;
        snprintf(p->provider, sizeof(p->provider), "CUDAExecutionProvider");
        p->limit_type = EB_LIMIT_HARD;
        snprintf(p->limit_methods, sizeof(p->limit_methods), "ort cuda gpu_mem_limit=%.2fGB", gb);
        break;
    case EB_DEVICE_TENSORRT:
        if ((st = has_provider(p, "TensorrtExecutionProvider", &yes, diag)) != EB_OK)
            goto fail;
        if (!yes) {
            st = no_provider(p, "TensorRT", "TensorrtExecutionProvider", diag);
            goto fail;
        }
        if ((st = has_provider(p, "CUDAExecutionProvider", &yes, diag)) != EB_OK)
            goto fail;
        if (!yes) {
            st = no_provider(p, "CUDA", "CUDAExecutionProvider", diag);
            goto fail;
        }
        /* TensorRT gets half the budget for its workspace (design.md §2); nodes it cannot take
         * fall back to the CUDA provider, whose arena is capped at the whole limit. */
        if ((st = setup_trt_cache(p, cfg, diag)) != EB_OK ||
            (st = append_tensorrt(p, limit / 2, cfg, diag)) != EB_OK ||
            (st = append_cuda(p, limit, diag)) != EB_OK)
            goto fail;
        snprintf(p->precision, sizeof(p->precision), "%s",
                 cfg->int8                                    ? "int8"
                 : cfg->precision == EB_ENGINE_PRECISION_FP16 ? "fp16"
                                                              : "");
        snprintf(p->provider, sizeof(p->provider), "TensorrtExecutionProvider");
        p->limit_type = EB_LIMIT_HARD;
        snprintf(p->limit_methods, sizeof(p->limit_methods),
                 "ort tensorrt trt_max_workspace_size=%.2fGB, ort cuda gpu_mem_limit=%.2fGB "
                 "(fallback)",
                 gb / 2, gb);
        break;
    default:
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                          "failed to open ONNX Runtime: unknown device %d; use cpu, cuda or "
                          "tensorrt",
                          (int)cfg->device);
        goto fail;
    }
    return EB_OK;

fail:
    return st;
}

static void ort_close(void *priv)
{
    struct ort_priv *p = priv;
    if (p == NULL)
        return;
    const OrtApi *api = p->api;
    if (api != NULL) {
        for (size_t i = 0; i < EB_BACKEND_MAX_IO; i++) {
            if (p->out[i] != NULL)
                api->ReleaseValue(p->out[i]);
            if (p->in[i].value != NULL)
                api->ReleaseValue(p->in[i].value);
        }
        if (p->session != NULL)
            api->ReleaseSession(p->session);
        if (p->cpu_info != NULL)
            api->ReleaseMemoryInfo(p->cpu_info);
        if (p->opts != NULL)
            api->ReleaseSessionOptions(p->opts);
        if (p->env != NULL)
            api->ReleaseEnv(p->env);
    }
    for (size_t i = 0; i < EB_BACKEND_MAX_IO; i++) {
        free(p->in_names[i]);
        free(p->out_names[i]);
    }
    eb_backend__names_free(p->class_names, p->n_class_names);
    eb_ort__profile_fini(&p->prof);
    /* After the session: ORT writes (or at least holds open) the file until then. */
    if (eb_ort__profile_dir_remove(p->prof_dir) != 0)
        eb_log_msg(p->log, EB_LOG_WARN, "cannot remove ONNX Runtime's profile folder %s: %s",
                   p->prof_dir, strerror(errno));
    eb_ort__lib_close(&p->lib);
    memset(p, 0, sizeof(*p));
}

/* ---- load ---------------------------------------------------------------------------------- */

/* Maps ORT's session-creation failure to a status and advice. */
static enum eb_status session_failed(struct ort_priv *p, OrtStatus *s, struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_FORMAT;
    const char *todo = "is it a valid ONNX file?";
    unsigned advice = 0;
    switch (p->api->GetErrorCode(s)) {
    case ORT_NO_SUCHFILE:
        st = EB_ERR_IO;
        todo = "check the path";
        break;
    case ORT_NOT_IMPLEMENTED:
        st = EB_ERR_UNSUPPORTED;
        todo = "this ONNX Runtime lacks an operator the model uses; re-export with a lower opset "
               "or use a newer ONNX Runtime";
        advice = EB_ADVICE_ORT_LIB;
        break;
    case ORT_EP_FAIL:
    case ORT_ENGINE_ERROR:
        st = EB_ERR_DEVICE;
        todo = "the execution provider failed";
        advice = EB_ADVICE_CPU;
        break;
    default: break;
    }
    char what[WHAT_MAX];
    snprintf(what, sizeof(what), "load model %s", p->model);
    return ort_check(p, s, st, what, todo, advice, diag);
}

/* Reads name, dtype and shape of input (is_input) or output `i`; the name is kept in p. */
static enum eb_status read_io(struct ort_priv *p, int is_input, size_t i, OrtAllocator *alloc,
                              struct eb_io_desc *d, struct eb_diag *diag)
{
    const OrtApi *api = p->api;
    char *name = NULL;
    OrtTypeInfo *ti = NULL;
    const OrtTensorTypeAndShapeInfo *tsi = NULL;
    ONNXTensorElementDataType et = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    size_t rank = 0;
    int64_t dims[EB_MAX_RANK];
    char what[WHAT_MAX];
    const char *todo = "is it a valid ONNX file?";
    enum eb_status st;

    snprintf(what, sizeof(what), "read the %s of model %s", is_input ? "inputs" : "outputs",
             p->model);
    st = ort_check(p,
                   is_input ? api->SessionGetInputName(p->session, i, alloc, &name)
                            : api->SessionGetOutputName(p->session, i, alloc, &name),
                   EB_ERR_FORMAT, what, todo, 0, diag);
    if (st != EB_OK)
        goto fail;
    st = ort_check(p,
                   is_input ? api->SessionGetInputTypeInfo(p->session, i, &ti)
                            : api->SessionGetOutputTypeInfo(p->session, i, &ti),
                   EB_ERR_FORMAT, what, todo, 0, diag);
    if (st == EB_OK)
        st = ort_check(p, api->CastTypeInfoToTensorInfo(ti, &tsi), EB_ERR_FORMAT, what, todo, 0,
                       diag);
    if (st != EB_OK)
        goto fail;
    if (tsi == NULL) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                          "failed to load model %s: %s '%s' is not a tensor; edgebench runs "
                          "detectors with tensor inputs and outputs",
                          p->model, is_input ? "input" : "output", name);
        goto fail;
    }
    if ((st = ort_check(p, api->GetTensorElementType(tsi, &et), EB_ERR_FORMAT, what, todo, 0,
                        diag)) != EB_OK ||
        (st = ort_check(p, api->GetDimensionsCount(tsi, &rank), EB_ERR_FORMAT, what, todo, 0,
                        diag)) != EB_OK)
        goto fail;
    if (rank > EB_MAX_RANK) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                          "failed to load model %s: %s '%s' has rank %zu, at most %d is "
                          "supported; re-export the model",
                          p->model, is_input ? "input" : "output", name, rank, EB_MAX_RANK);
        goto fail;
    }
    if ((st = ort_check(p, api->GetDimensions(tsi, dims, rank), EB_ERR_FORMAT, what, todo, 0,
                        diag)) != EB_OK)
        goto fail;

    char **store = is_input ? &p->in_names[i] : &p->out_names[i];
    if ((*store = dup_str(name)) == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", p->model);
        goto fail;
    }
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "%s", name);
    d->dtype = dtype_from_ort(et);
    d->rank = (int)rank;
    for (size_t k = 0; k < rank; k++)
        d->shape[k] = dims[k] > 0 ? dims[k] : -1; /* symbolic dims come back as -1 (or 0) */
    st = EB_OK;

fail:
    if (name != NULL)
        (void)ort_check(p, api->AllocatorFree(alloc, name), EB_OK, "", "", 0, NULL);
    if (ti != NULL)
        api->ReleaseTypeInfo(ti);
    return st;
}

/* Batch 1 and the image size for an input; see the rules in the load contract. */
static enum eb_status resolve_input(const struct ort_priv *p, struct eb_io_desc *d, int imgsz,
                                    struct eb_diag *diag)
{
    if (d->rank >= 1) {
        if (d->shape[0] < 0)
            d->shape[0] = 1;
        else if (d->shape[0] != 1)
            return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                                "failed to load model %s: input '%s' has a fixed batch of %lld, "
                                "edgebench runs batch 1; re-export with batch=1",
                                p->model, d->name, (long long)d->shape[0]);
    }
    if (d->rank != 4)
        return EB_OK;
    int64_t *h = &d->shape[2], *w = &d->shape[3];
    if (imgsz != 0 && ((*h > 0 && *h != imgsz) || (*w > 0 && *w != imgsz)))
        return eb_diag_fail_advise(
            diag, EB_ERR_INVALID_ARG, EB_ADVICE_DEFAULT_IMGSZ,
            "model %s has a fixed input of %lldx%lld, so it cannot run at an "
            "input size of %d; re-export it",
            p->model, (long long)*h, (long long)*w, imgsz);
    int64_t want = imgsz != 0 ? imgsz : DEFAULT_IMGSZ;
    if (*h < 0)
        *h = want;
    if (*w < 0)
        *w = want;
    return EB_OK;
}

static enum eb_status ort_load(void *priv, const struct eb_model_spec *spec,
                               struct eb_model_info *info_out, struct eb_diag *diag)
{
    struct ort_priv *p = priv;
    const OrtApi *api = p->api;
    OrtAllocator *alloc = NULL;
    OrtStatus *s = NULL;
    size_t n_in = 0, n_out = 0;
    struct eb_model_info info;
    enum eb_status st = EB_ERR_INVALID_ARG;

    memset(&info, 0, sizeof(info));
    if (api == NULL || p->session != NULL || spec == NULL || spec->imgsz < 0) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG, "failed to load model %s: %s",
                          spec && spec->path ? spec->path : "",
                          api == NULL          ? "the backend is not open; create it first"
                          : p->session != NULL ? "a model is already loaded; use one instance "
                                                 "per model"
                          : spec == NULL       ? "no model given"
                                               : "negative image size; pass a positive size");
        goto fail;
    }
    snprintf(p->model, sizeof(p->model), "%s",
             spec->path != NULL ? spec->path : "(in-memory model)");
    if (spec->bytes != NULL) {
        s = api->CreateSessionFromArray(p->env, spec->bytes, spec->n_bytes, p->opts, &p->session);
    } else {
        if (spec->path == NULL || spec->path[0] == '\0') {
            st = eb_diag_fail(diag, EB_ERR_INVALID_ARG, "failed to load a model: no path given");
            goto fail;
        }
        if ((st = eb_backend__check_model_path(spec->path, EB_ADVICE_TENSORRT, diag)) != EB_OK)
            goto fail;
        s = api->CreateSession(p->env, spec->path, p->opts, &p->session);
    }
    if (s != NULL) {
        p->session = NULL;
        st = session_failed(p, s, diag);
        goto fail;
    }

    if ((st = ort_check(p, api->GetAllocatorWithDefaultOptions(&alloc), EB_ERR_BACKEND,
                        "get the ONNX Runtime allocator", "the library may be broken", 0, diag)) !=
            EB_OK ||
        (st = ort_check(p, api->SessionGetInputCount(p->session, &n_in), EB_ERR_FORMAT,
                        "count the model inputs", "is it a valid ONNX file?", 0, diag)) != EB_OK ||
        (st = ort_check(p, api->SessionGetOutputCount(p->session, &n_out), EB_ERR_FORMAT,
                        "count the model outputs", "is it a valid ONNX file?", 0, diag)) != EB_OK)
        goto fail;
    if (n_in == 0 || n_out == 0 || n_in > EB_BACKEND_MAX_IO || n_out > EB_BACKEND_MAX_IO) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                          "failed to load model %s: it has %zu inputs and %zu outputs, edgebench "
                          "supports 1 to %d of each; export a detector with one image input",
                          p->model, n_in, n_out, EB_BACKEND_MAX_IO);
        goto fail;
    }
    for (size_t i = 0; i < n_in; i++) {
        if ((st = read_io(p, 1, i, alloc, &info.inputs[i], diag)) != EB_OK ||
            (st = resolve_input(p, &info.inputs[i], spec->imgsz, diag)) != EB_OK)
            goto fail;
    }
    for (size_t i = 0; i < n_out; i++)
        if ((st = read_io(p, 0, i, alloc, &info.outputs[i], diag)) != EB_OK)
            goto fail;
    p->n_in = n_in;
    p->n_out = n_out;
    info.n_inputs = n_in;
    info.n_outputs = n_out;

    load_class_names(p);
    info.class_names = (const char *const *)p->class_names;
    info.n_class_names = p->n_class_names;
    info.limit_type = p->limit_type;
    snprintf(info.limit_methods, sizeof(info.limit_methods), "%s", p->limit_methods);
    snprintf(info.provider, sizeof(info.provider), "%s", p->provider);
    snprintf(info.engine_cache, sizeof(info.engine_cache), "%s", p->engine_cache);
    /* TensorRT builds the engine in the precision asked for, whatever the model's (device
     * facts other than the precision are not reported: `reported` stays 0). */
    snprintf(info.device.precision, sizeof(info.device.precision), "%s", p->precision);
    *info_out = info;
    return EB_OK;

fail:
    /* Leave the instance as before the call, so the error is the only effect. */
    for (size_t i = 0; i < EB_BACKEND_MAX_IO; i++) {
        free(p->in_names[i]);
        free(p->out_names[i]);
        p->in_names[i] = p->out_names[i] = NULL;
    }
    p->n_in = p->n_out = 0;
    if (p->session != NULL) {
        api->ReleaseSession(p->session);
        p->session = NULL;
    }
    return st;
}

/* ---- infer --------------------------------------------------------------------------------- */

/* Wraps the caller's input i in an OrtValue, unless the one from the last call still fits. */
/* Binds input i to `t`; `*reshaped` becomes 1 when its shape or dtype differs from the last
 * run's (the kept outputs may then not fit). */
static enum eb_status bind_input(struct ort_priv *p, size_t i, const struct eb_tensor *t,
                                 int *reshaped, struct eb_diag *diag)
{
    struct ort_input *c = &p->in[i];
    const int same_shape = c->value != NULL && c->dtype == t->dtype && c->rank == t->rank &&
                           memcmp(c->shape, t->shape, (size_t)t->rank * sizeof(t->shape[0])) == 0;
    if (same_shape && c->data == t->data)
        return EB_OK;
    if (!same_shape)
        *reshaped = 1;

    ONNXTensorElementDataType et = dtype_to_ort(t->dtype);
    int64_t numel = eb_tensor_numel(t);
    /* A dimension of 0 is allowed: a decoder's first step has an empty KV cache. */
    int negative = t->rank < 0 || t->rank > EB_MAX_RANK;
    for (int d = 0; !negative && d < t->rank; d++)
        negative = t->shape[d] < 0;
    if (t->data == NULL || negative || et == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to run model %s: input %zu (%s) has no data, an unknown "
                            "dtype or a negative dimension; pass a filled tensor",
                            p->model, i, p->in_names[i]);
    if (c->value != NULL) {
        p->api->ReleaseValue(c->value);
        c->value = NULL;
    }
    char what[WHAT_MAX];
    snprintf(what, sizeof(what), "bind input %s of model %s", p->in_names[i], p->model);
    enum eb_status st = ort_check(p,
                                  p->api->CreateTensorWithDataAsOrtValue(
                                      p->cpu_info, t->data, (size_t)numel * eb_dtype_size(t->dtype),
                                      t->shape, (size_t)t->rank, et, &c->value),
                                  EB_ERR_INVALID_ARG, what, "check the input tensor", 0, diag);
    if (st != EB_OK) {
        c->value = NULL;
        return st;
    }
    c->data = t->data;
    c->dtype = t->dtype;
    c->rank = t->rank;
    memset(c->shape, 0, sizeof(c->shape));
    memcpy(c->shape, t->shape, (size_t)t->rank * sizeof(t->shape[0]));
    return EB_OK;
}

static void drop_outputs(struct ort_priv *p)
{
    for (size_t i = 0; i < p->n_out; i++) {
        if (p->out[i] != NULL)
            p->api->ReleaseValue(p->out[i]);
        p->out[i] = NULL;
    }
}

/* Describes the outputs ORT has just allocated (only after a Run without preallocated ones). */
static enum eb_status describe_outputs(struct ort_priv *p, struct eb_diag *diag)
{
    const OrtApi *api = p->api;
    char what[WHAT_MAX];
    snprintf(what, sizeof(what), "read the outputs of model %s", p->model);
    for (size_t i = 0; i < p->n_out; i++) {
        OrtTensorTypeAndShapeInfo *tsi = NULL;
        struct eb_tensor *v = &p->out_view[i];
        ONNXTensorElementDataType et = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
        size_t rank = 0;
        int is_tensor = 0;
        enum eb_status st =
            ort_check(p, api->IsTensor(p->out[i], &is_tensor), EB_ERR_BACKEND, what, "", 0, diag);
        if (st != EB_OK)
            return st;
        if (!is_tensor)
            return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                                "failed to run model %s: output %s is not a tensor; export a "
                                "detector with tensor outputs",
                                p->model, p->out_names[i]);
        st = ort_check(p, api->GetTensorTypeAndShape(p->out[i], &tsi), EB_ERR_BACKEND, what,
                       "report this", 0, diag);
        if (st == EB_OK)
            st = ort_check(p, api->GetTensorElementType(tsi, &et), EB_ERR_BACKEND, what,
                           "report this", 0, diag);
        if (st == EB_OK)
            st = ort_check(p, api->GetDimensionsCount(tsi, &rank), EB_ERR_BACKEND, what,
                           "report this", 0, diag);
        if (st == EB_OK && rank > EB_MAX_RANK)
            st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                              "failed to run model %s: output %s has rank %zu, at most %d is "
                              "supported",
                              p->model, p->out_names[i], rank, EB_MAX_RANK);
        memset(v, 0, sizeof(*v));
        if (st == EB_OK)
            st = ort_check(p, api->GetDimensions(tsi, v->shape, rank), EB_ERR_BACKEND, what,
                           "report this", 0, diag);
        if (st == EB_OK)
            st = ort_check(p, api->GetTensorMutableData(p->out[i], &v->data), EB_ERR_BACKEND, what,
                           "report this", 0, diag);
        if (tsi != NULL)
            api->ReleaseTensorTypeAndShapeInfo(tsi);
        if (st != EB_OK)
            return st;
        v->dtype = dtype_from_ort(et);
        v->rank = (int)rank;
    }
    return EB_OK;
}

static enum eb_status ort_infer(void *priv, const struct eb_tensor *in, size_t n_in,
                                struct eb_tensor *out, size_t n_out,
                                struct eb_infer_timing *timing_out, struct eb_diag *diag)
{
    struct ort_priv *p = priv;
    const OrtApi *api = p->api;
    const OrtValue *in_vals[EB_BACKEND_MAX_IO];
    enum eb_status st = EB_ERR_INVALID_ARG;

    if (p->session == NULL || n_in != p->n_in || n_out > p->n_out || in == NULL ||
        (n_out > 0 && out == NULL)) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG, "failed to run model %s: %s", p->model,
                          p->session == NULL ? "no model is loaded; load one first"
                                             : "wrong number of inputs or outputs; pass "
                                               "info.n_inputs inputs and at most "
                                               "info.n_outputs outputs");
        goto fail;
    }
    int reshaped = 0, aliased = 0;
    for (size_t i = 0; i < n_in; i++) {
        if ((st = bind_input(p, i, &in[i], &reshaped, diag)) != EB_OK)
            goto fail;
        in_vals[i] = p->in[i].value;
        for (size_t o = 0; o < p->n_out && p->out[0] != NULL; o++)
            aliased |= in[i].data == p->out_view[o].data;
    }

    /* The last run's outputs are handed back to Run (the steady state allocates nothing) unless
     * an input changed shape (a decoder's next step: its outputs grow) or an input is one of
     * them (a decoder's KV cache passed on): then ORT allocates fresh outputs, and the old
     * ones, which those inputs may read, are released after the run. */
    int reuse = p->out[0] != NULL && !reshaped && !aliased;
    OrtValue *fresh[EB_BACKEND_MAX_IO] = {0};
    OrtValue **outs = reuse || p->out[0] == NULL ? p->out : fresh;
    const char *const *in_names = (const char *const *)p->in_names;
    const char *const *out_names = (const char *const *)p->out_names;
    uint64_t t0 = eb_clock_ns();
    OrtStatus *s =
        api->Run(p->session, NULL, in_names, in_vals, p->n_in, out_names, p->n_out, outs);
    uint64_t t1 = eb_clock_ns();
    p->runs++; /* every Run past ORT's input checks records one model_run event */
    if (outs == fresh) {
        drop_outputs(p);
        memcpy(p->out, fresh, sizeof(fresh));
        if (s != NULL)
            drop_outputs(p);
    }
    if (s != NULL && reuse) {
        /* A dynamic output may have changed shape: let ORT allocate fresh outputs once. */
        eb_log_msg(p->log, EB_LOG_DEBUG, "model %s: run with kept outputs failed (%s); retrying",
                   p->model, api->GetErrorMessage(s));
        api->ReleaseStatus(s);
        drop_outputs(p);
        reuse = 0;
        t0 = eb_clock_ns();
        s = api->Run(p->session, NULL, in_names, in_vals, p->n_in, out_names, p->n_out, p->out);
        t1 = eb_clock_ns();
        p->runs++;
        p->retries++;
    }
    if (s != NULL) {
        char what[WHAT_MAX];
        snprintf(what, sizeof(what), "run model %s", p->model);
        drop_outputs(p);
        st = ort_check(p, s, EB_ERR_BACKEND, what,
                       "check that the input shape and dtype match the model", 0, diag);
        goto fail;
    }
    if (!reuse && (st = describe_outputs(p, diag)) != EB_OK) {
        drop_outputs(p);
        goto fail;
    }
    for (size_t i = 0; i < n_out; i++)
        out[i] = p->out_view[i];
    if (timing_out != NULL) {
        timing_out->h2d_ns = 0;
        timing_out->compute_ns = t1 - t0;
        timing_out->d2h_ns = 0;
        timing_out->pre_ns = 0;
    }
    return EB_OK;

fail:
    return st;
}

/* ---- per-operator profile ------------------------------------------------------------------ */

/* Ends ONNX Runtime's profiler and reads its file into p->prof, or the reason into p->prof_diag. */
static void end_profiling(struct ort_priv *p)
{
    const OrtApi *api = p->api;
    OrtAllocator *alloc = NULL;
    char *path = NULL;
    p->prof_ended = 1;
    if (ort_check(p, api->GetAllocatorWithDefaultOptions(&alloc), EB_ERR_BACKEND,
                  "get the ONNX Runtime allocator", "", 0, &p->prof_diag) != EB_OK ||
        ort_check(p, api->SessionEndProfiling(p->session, alloc, &path), EB_ERR_BACKEND,
                  "end ONNX Runtime's profiler", "", 0, &p->prof_diag) != EB_OK)
        return;
    if (path == NULL || path[0] == '\0') {
        (void)eb_diag_fail(&p->prof_diag, EB_ERR_BACKEND,
                           "failed to end ONNX Runtime's profiler: it wrote no file");
    } else if (eb_ort__profile_read(path, p->runs_at_reset, &p->prof, &p->prof_diag) != EB_OK) {
        eb_ort__profile_fini(&p->prof);
    } else {
        uint64_t asked = p->runs - p->runs_at_reset;
        eb_log_msg(p->log, EB_LOG_DEBUG,
                   "model %s: ONNX Runtime's profile %s: %llu runs (%llu Run calls, %llu before "
                   "the reset), %zu nodes",
                   p->model, path, (unsigned long long)p->prof.runs_in_file,
                   (unsigned long long)p->runs, (unsigned long long)p->runs_at_reset,
                   p->prof.n_nodes);
        /* ONNX Runtime records at most a million events, then drops the rest. */
        if (p->prof.runs < asked)
            eb_log_msg(p->log, EB_LOG_WARN,
                       "model %s: ONNX Runtime's profile holds %llu of the %llu profiled runs "
                       "(it stops recording at its event limit); the per-operator table covers "
                       "those",
                       p->model, (unsigned long long)p->prof.runs, (unsigned long long)asked);
    }
    if (path != NULL)
        (void)ort_check(p, api->AllocatorFree(alloc, path), EB_OK, "", "", 0, NULL);
}

static enum eb_status ort_profile(void *priv, struct eb_backend_profile *profile_out,
                                  struct eb_diag *diag)
{
    struct ort_priv *p = priv;
    memset(profile_out, 0, sizeof(*profile_out));
    if (!p->profile || p->session == NULL)
        return EB_ERR_UNSUPPORTED;
    if (!p->prof_ended)
        end_profiling(p);
    if (p->prof_diag.status != EB_OK)
        return eb_diag_fail_advise(diag, p->prof_diag.status, p->prof_diag.advice, "%s",
                                   p->prof_diag.msg);
    profile_out->n_nodes = p->prof.n_nodes;
    profile_out->nodes = p->prof.nodes;
    profile_out->runs = p->prof.runs;
    profile_out->run_total_ms = p->prof.run_total_ms;
    return EB_OK;
}

static enum eb_status ort_profile_runs(void *priv, const struct eb_run_range *ranges,
                                       size_t n_ranges, struct eb_backend_profile *profile_out,
                                       struct eb_diag *diag)
{
    struct ort_priv *p = priv;
    memset(profile_out, 0, sizeof(*profile_out));
    if (!p->profile || p->session == NULL)
        return EB_ERR_UNSUPPORTED;
    if (p->retries != p->retries_at_reset)
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "model %s: ONNX Runtime's profile cannot be split by run: %llu of the "
                            "infers since the reset ran the model twice (a retry with fresh "
                            "outputs), so its runs do not match the infers",
                            p->model, (unsigned long long)(p->retries - p->retries_at_reset));
    if (!p->prof_ended)
        end_profiling(p);
    if (p->prof_diag.status != EB_OK)
        return eb_diag_fail_advise(diag, p->prof_diag.status, p->prof_diag.advice, "%s",
                                   p->prof_diag.msg);
    return eb_ort__profile_select(&p->prof, ranges, n_ranges, profile_out, diag);
}

static void ort_profile_reset(void *priv)
{
    struct ort_priv *p = priv;
    if (p->prof_ended) /* ONNX Runtime cannot profile the session again */
        eb_log_msg(p->log, EB_LOG_DEBUG,
                   "model %s: ONNX Runtime's profiler has ended; the profile stays as read",
                   p->model);
    else {
        p->runs_at_reset = p->runs;
        p->retries_at_reset = p->retries;
    }
}

const struct eb_backend_ops eb_backend_ort_ops = {
    .abi = EB_BACKEND_ABI,
    .name = "ort",
    .description = "ONNX Runtime (C API, loaded at run time)",
    .caps = EB_BACKEND_CAP_CUDA | EB_BACKEND_CAP_FP16 | EB_BACKEND_CAP_INT8 |
            EB_BACKEND_CAP_MEM_LIMIT | EB_BACKEND_CAP_OP_PROFILE,
    .priv_size = sizeof(struct ort_priv),
    .probe = ort_probe,
    .open = ort_open,
    .close = ort_close,
    .load = ort_load,
    .infer = ort_infer,
    .mem_usage = NULL,
    .profile = ort_profile,
    .profile_reset = ort_profile_reset,
    .profile_runs = ort_profile_runs,
};
