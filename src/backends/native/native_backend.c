/*
 * The native backend: the eb_backend_ops vtable over edgebench's own engine (include/eb/engine.h).
 * It only adapts: path checks with the same advice as the ort backend, reading the file, the
 * engine options from the backend config, eb_model_info from the engine's I/O description and
 * metadata. One instance per slot; everything it uses (the engine, class names) hangs off its
 * private state, so two instances can run in two threads at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/common/model_path.h"
#include "backends/common/names.h"
#include "backends/native/native_backend.h"
#include "eb/clock.h"
#include "eb/engine.h"
#include "eb/path.h"
#include "model/model.h"

#ifdef EB_VERSION
#define NATIVE_VERSION "edgebench-native " EB_VERSION
#else
#define NATIVE_VERSION "edgebench-native 0.1"
#endif
#define MIB (1024.0 * 1024.0)

struct native_priv {
    int opened;
    const struct eb_log *log;
    int threads;
    int profile;
    uint32_t passes;
    int qdq;
    int precision;
    enum eb_device device;
    char kernels[16];
    uint64_t cap_bytes;       /* cfg->mem_limit_bytes: the engine's hard cap; 0 = none */
    int64_t max_seq;          /* cfg->max_seq: a decoder's planned sequence bound */
    char cap_label[96];       /* cfg->mem_limit_label, copied ("" = none) */
    struct eb_engine *engine; /* owned; NULL until load */
    char model[256];          /* the model's name for messages */
    size_t n_in, n_out;
    char **class_names; /* owned (eb_backend__names_free), n_class_names strings */
    size_t n_class_names;
    /* --profile: one entry per engine node, allocated at load (owned; names borrowed from the
     * engine); the times are refreshed from the engine on each native_profile call. */
    struct eb_backend_prof_node *prof_nodes;
    size_t n_prof_nodes;
};

/* ---- probe / open / close -------------------------------------------------------------------- */

static enum eb_status native_probe(const struct eb_backend_config *cfg,
                                   struct eb_backend_probe *probe_out, struct eb_diag *diag)
{
    (void)cfg;
    (void)diag;
    /* Compiled in: always available. Whether a model's ops are supported is known at load. */
    memset(probe_out, 0, sizeof(*probe_out));
    probe_out->available = 1;
    snprintf(probe_out->version, sizeof(probe_out->version), "%s", NATIVE_VERSION);
    snprintf(probe_out->library, sizeof(probe_out->library), "built in");
    return EB_OK;
}

static enum eb_status native_open(void *priv, const struct eb_backend_config *cfg,
                                  struct eb_diag *diag)
{
    struct native_priv *p = priv;
    if (cfg == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to open the native engine: no config");
    char why[200];
    switch (cfg->device) {
    case EB_DEVICE_CPU: break;
    case EB_DEVICE_CUDA:
        /* Refused here (not at load) so that the report says why before any model is read. */
        if (!eb_engine_cuda_available(why, sizeof(why)))
            return eb_diag_fail_advise(diag, EB_ERR_UNSUPPORTED,
                                       EB_ADVICE_CPU | EB_ADVICE_OTHER_BACKEND,
                                       "failed to open the native engine on device cuda: %s (ONNX "
                                       "Runtime with CUDA can run the model)",
                                       why);
        break;
    case EB_DEVICE_TENSORRT:
        return eb_diag_fail_advise(diag, EB_ERR_UNSUPPORTED, EB_ADVICE_TENSORRT,
                                   "failed to open the native engine on device tensorrt: the "
                                   "native engine runs on cpu or cuda, TensorRT through ONNX "
                                   "Runtime");
    default:
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to open the native engine: unknown device %d; use cpu",
                            (int)cfg->device);
    }
    if (cfg->threads < 0)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to open the native engine: %d threads; give 0 (one per "
                            "CPU) or more",
                            cfg->threads);
    p->log = cfg->log;
    p->threads = cfg->threads;
    p->profile = cfg->profile;
    p->passes = cfg->passes != 0 ? cfg->passes : EB_ENGINE_PASS_ALL;
    p->qdq = cfg->qdq;
    p->precision = cfg->precision;
    p->device = cfg->device;
    /* --precision int8 on cuda: the int8 convs on the tensor cores, the nodes without an int8
     * path in fp16 (TensorRT's --int8 --fp16) */
    if (cfg->int8 && cfg->device == EB_DEVICE_CUDA)
        p->precision = EB_ENGINE_PRECISION_FP16;
    if (cfg->precision == EB_ENGINE_PRECISION_FP16 && cfg->device != EB_DEVICE_CUDA)
        return eb_diag_fail_advise(diag, EB_ERR_UNSUPPORTED, EB_ADVICE_CUDA,
                                   "failed to open the native engine: fp16 precision needs the "
                                   "cuda device (the CPU kernels compute in fp32)");
    snprintf(p->kernels, sizeof(p->kernels), "%s", cfg->kernels != NULL ? cfg->kernels : "auto");
    p->cap_bytes = cfg->mem_limit_bytes;
    p->max_seq = cfg->max_seq;
    snprintf(p->cap_label, sizeof(p->cap_label), "%s",
             cfg->mem_limit_label != NULL ? cfg->mem_limit_label : "");
    p->opened = 1;
    return EB_OK;
}

static void native_close(void *priv)
{
    struct native_priv *p = priv;
    if (p == NULL)
        return;
    eb_engine_destroy(p->engine);
    eb_backend__names_free(p->class_names, p->n_class_names);
    free(p->prof_nodes);
    memset(p, 0, sizeof(*p));
}

/* ---- load ---------------------------------------------------------------------------------- */

static void copy_desc(struct eb_io_desc *d, const struct eb_engine_io_desc *s)
{
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "%s", s->name);
    d->dtype = s->dtype;
    d->rank = s->rank;
    for (int k = 0; k < s->rank && k < EB_MAX_RANK; k++) /* -1 where dynamic, as backend.h */
        d->shape[k] = (s->dynamic_dims >> k) & 1u ? -1 : s->shape[k];
}

/* Reads the class names of the loaded model; a missing or unreadable entry is only a warning. */
static void load_class_names(struct native_priv *p)
{
    const char *value = eb_engine_meta(p->engine, "names");
    if (value == NULL) /* no "names": not an Ultralytics export; ids only */
        return;
    if (eb_backend__parse_names(value, &p->class_names, &p->n_class_names, NULL) != EB_OK)
        eb_log_msg(p->log, EB_LOG_WARN,
                   "model %s: cannot parse the class names in its metadata (\"%.60s...\"); "
                   "detections are labelled by class id",
                   p->model, value);
}

static enum eb_status native_load(void *priv, const struct eb_model_spec *spec,
                                  struct eb_model_info *info_out, struct eb_diag *diag)
{
    struct native_priv *p = priv;
    uint8_t *file = NULL;
    size_t file_len = 0;
    const uint8_t *bytes = NULL;
    size_t len = 0;
    struct eb_model_info info;
    struct eb_engine_io io;
    struct eb_engine_mem mem;
    enum eb_status st = EB_ERR_INVALID_ARG;

    memset(&info, 0, sizeof(info));
    if (!p->opened || p->engine != NULL || spec == NULL || spec->imgsz < 0) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG, "failed to load model %s: %s",
                          spec && spec->path ? spec->path : "",
                          !p->opened          ? "the backend is not open; create it first"
                          : p->engine != NULL ? "a model is already loaded; use one instance "
                                                "per model"
                          : spec == NULL      ? "no model given"
                                              : "negative image size; pass a positive size");
        goto fail;
    }
    snprintf(p->model, sizeof(p->model), "%s",
             spec->path != NULL ? spec->path : "(in-memory model)");
    if (spec->bytes != NULL) {
        bytes = spec->bytes;
        len = spec->n_bytes;
    } else {
        if (spec->path == NULL || spec->path[0] == '\0') {
            st = eb_diag_fail(diag, EB_ERR_INVALID_ARG, "failed to load a model: no path given");
            goto fail;
        }
        if ((st = eb_backend__check_model_path(spec->path, EB_ADVICE_TENSORRT, diag)) != EB_OK ||
            (st = eb_model_read_file(spec->path, &file, &file_len, diag)) != EB_OK)
            goto fail;
        bytes = file;
        len = file_len;
    }

    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.threads = p->threads;
    opt.mem_cap_bytes = p->cap_bytes;
    opt.max_seq = p->max_seq;
    opt.mem_cap_label = p->cap_label[0] != '\0' ? p->cap_label : NULL;
    opt.imgsz = spec->imgsz;
    opt.profile = p->profile;
    opt.passes = p->passes;
    opt.qdq = (enum eb_engine_qdq)p->qdq;
    opt.device = p->device == EB_DEVICE_CUDA ? EB_ENGINE_DEVICE_CUDA : EB_ENGINE_DEVICE_CPU;
    opt.precision = (enum eb_engine_precision)p->precision;
    opt.isa = p->kernels;
    /* External-data tensors are read from the model's folder. */
    char base_dir[1024] = "";
    if (spec->bytes == NULL && spec->path != NULL) {
        eb_path_dir(spec->path, base_dir, sizeof(base_dir));
        opt.base_dir = base_dir;
    }
    opt.log = p->log;
    if ((st = eb_engine_load(bytes, len, p->model, &opt, &p->engine, diag)) != EB_OK) {
        p->engine = NULL;
        goto fail;
    }
    /* The engine copied what it keeps. */
    free(file);
    file = NULL;

    eb_engine_io_info(p->engine, &io);
    if (io.n_inputs == 0 || io.n_outputs == 0 || io.n_inputs > EB_BACKEND_MAX_IO ||
        io.n_outputs > EB_BACKEND_MAX_IO) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                          "failed to load model %s: it has %zu inputs and %zu outputs, edgebench "
                          "supports 1 to %d of each; export a detector with one image input",
                          p->model, io.n_inputs, io.n_outputs, EB_BACKEND_MAX_IO);
        goto fail;
    }
    for (size_t i = 0; i < io.n_inputs; i++)
        copy_desc(&info.inputs[i], &io.inputs[i]);
    for (size_t i = 0; i < io.n_outputs; i++)
        copy_desc(&info.outputs[i], &io.outputs[i]);
    p->n_in = info.n_inputs = io.n_inputs;
    p->n_out = info.n_outputs = io.n_outputs;

    load_class_names(p);
    info.class_names = (const char *const *)p->class_names;
    info.n_class_names = p->n_class_names;

    eb_engine_mem_info(p->engine, &mem);
    const int cuda = p->device == EB_DEVICE_CUDA;
    /* The cap is checked on total_bytes: arena, scratch, weights and packed weights (CUDA: and
     * the cuDNN/cuBLAS workspaces and I/O, all on the device). */
    double planned_mib = (double)mem.total_bytes / MIB;
    const char *plan_what = cuda ? "device plan incl. library workspaces" : "arena plan";
    info.budget_bytes_used = mem.total_bytes;
    if (p->cap_bytes > 0) {
        info.limit_type = EB_LIMIT_HARD;
        snprintf(info.limit_methods, sizeof(info.limit_methods),
                 "native %s <= %.2f GB (planned %.1f MiB)", plan_what, (double)p->cap_bytes / 1e9,
                 planned_mib);
    } else {
        /* No limit configured: the plan is still exact, but nothing is enforced. */
        info.limit_type = EB_LIMIT_UNAVAILABLE;
        snprintf(info.limit_methods, sizeof(info.limit_methods),
                 "native %s, no cap (planned %.1f MiB)", plan_what, planned_mib);
    }
    struct eb_engine_exec_info ex;
    eb_engine_exec_info_get(p->engine, &ex);
    if (cuda) {
        snprintf(info.provider, sizeof(info.provider), "edgebench-native cuda %.4s %.24s%s",
                 ex.precision, ex.device_name, ex.n_fallback > 0 ? " +cpu nodes" : "");
        if (ex.n_fallback > 0)
            eb_log_msg(p->log, EB_LOG_INFO, "model %s: %zu nodes run on the CPU: %s", p->model,
                       ex.n_fallback, ex.fallback);
    } else {
        snprintf(info.provider, sizeof(info.provider), "edgebench-native cpu %.15s x%d thread%s",
                 ex.isa, ex.threads, ex.threads == 1 ? "" : "s");
    }
    /* What the profile's MFU is computed against (harness/metrics/peaks.h). */
    info.device.reported = 1;
    info.device.device = cuda ? EB_DEVICE_CUDA : EB_DEVICE_CPU;
    snprintf(info.device.name, sizeof(info.device.name), "%s", cuda ? ex.device_name : "");
    info.device.sms = ex.sm_count;
    info.device.total_bytes = ex.device_total_bytes;
    info.device.clock_khz = ex.clock_khz;
    snprintf(info.device.precision, sizeof(info.device.precision), "%s", ex.precision);
    snprintf(info.qdq, sizeof(info.qdq), "%s", ex.qdq);
    snprintf(info.int8_nodes, sizeof(info.int8_nodes), "%s", ex.int8_nodes);
    if (ex.int8_nodes[0] != '\0')
        eb_log_msg(p->log, EB_LOG_INFO, "model %s on %s: heavy nodes %s", p->model,
                   cuda ? "cuda" : "cpu", ex.int8_nodes);
    if (p->profile) {
        /* Allocated here, not per frame: native_infer and native_profile never allocate. */
        struct eb_engine_profile prof;
        eb_engine_profile_get(p->engine, &prof);
        p->prof_nodes = calloc(prof.n_nodes ? prof.n_nodes : 1, sizeof(*p->prof_nodes));
        if (p->prof_nodes == NULL) {
            st =
                eb_diag_fail_advise(diag, EB_ERR_NOMEM, EB_ADVICE_NO_PROFILE,
                                    "failed to load model %s: out of memory for the profile of %zu "
                                    "nodes",
                                    p->model, prof.n_nodes);
            goto fail;
        }
        p->n_prof_nodes = prof.n_nodes;
    }
    *info_out = info;
    return EB_OK;

fail:
    /* Leave the instance as before the call, so the error is the only effect. */
    free(file);
    eb_engine_destroy(p->engine);
    p->engine = NULL;
    eb_backend__names_free(p->class_names, p->n_class_names);
    p->class_names = NULL;
    p->n_class_names = 0;
    free(p->prof_nodes);
    p->prof_nodes = NULL;
    p->n_prof_nodes = 0;
    p->n_in = p->n_out = 0;
    return st;
}

/*
 * --backend auto: whether the engine runs every node of the model, without planning or
 * allocating it. A device other than the CPU is "not supported" (with why), not an error.
 */
static enum eb_status native_supports(const struct eb_backend_config *cfg,
                                      const struct eb_model_spec *spec, int *supported_out,
                                      char *why, size_t why_size, struct eb_diag *diag)
{
    uint8_t *file = NULL;
    size_t len = 0;
    const uint8_t *bytes = NULL;
    enum eb_status st = EB_ERR_INVALID_ARG;

    if (spec == NULL || supported_out == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to check a model for the native engine: no model given");
    if (cfg != NULL && cfg->device == EB_DEVICE_TENSORRT) {
        if (why != NULL && why_size > 0)
            snprintf(why, why_size, "the native engine runs on cpu or cuda, not tensorrt");
        *supported_out = 0;
        return EB_OK;
    }
    if (cfg != NULL && cfg->device == EB_DEVICE_CUDA && !eb_engine_cuda_available(why, why_size)) {
        *supported_out = 0;
        return EB_OK;
    }
    if (spec->bytes != NULL) {
        bytes = spec->bytes;
        len = spec->n_bytes;
    } else {
        if (spec->path == NULL || spec->path[0] == '\0')
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "failed to check a model: no path given");
        if ((st = eb_backend__check_model_path(spec->path, EB_ADVICE_TENSORRT, diag)) != EB_OK ||
            (st = eb_model_read_file(spec->path, &file, &len, diag)) != EB_OK)
            return st;
        bytes = file;
    }
    st = eb_engine_supports(bytes, len, spec->path, supported_out, why, why_size, diag);
    free(file);
    return st;
}

/* ---- infer / memory ------------------------------------------------------------------------ */

/* The outputs the caller asked for, and the run's times: CUDA events around each part on cuda
 * (pre: the letterbox of infer_frame, else 0), the host time `host_ns` as compute on the CPU. */
static void finish_infer(const struct native_priv *p, const struct eb_tensor *all,
                         struct eb_tensor *out, size_t n_out, uint64_t host_ns,
                         struct eb_infer_timing *timing_out)
{
    for (size_t i = 0; i < n_out; i++)
        out[i] = all[i];
    if (timing_out == NULL)
        return;
    struct eb_engine_timing et;
    eb_engine_timing_get(p->engine, &et);
    const int cuda = p->device == EB_DEVICE_CUDA;
    timing_out->h2d_ns = cuda ? (uint64_t)(et.h2d_ms * 1e6) : 0;
    timing_out->pre_ns = cuda ? (uint64_t)(et.pre_ms * 1e6) : 0;
    timing_out->compute_ns = cuda ? (uint64_t)(et.compute_ms * 1e6) : host_ns;
    timing_out->d2h_ns = cuda ? (uint64_t)(et.d2h_ms * 1e6) : 0;
}

static enum eb_status native_infer(void *priv, const struct eb_tensor *in, size_t n_in,
                                   struct eb_tensor *out, size_t n_out,
                                   struct eb_infer_timing *timing_out, struct eb_diag *diag)
{
    struct native_priv *p = priv;
    struct eb_tensor all[EB_BACKEND_MAX_IO];

    if (p->engine == NULL || n_in != p->n_in || n_out > p->n_out || in == NULL ||
        (n_out > 0 && out == NULL))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "failed to run model %s: %s", p->model,
                            p->engine == NULL ? "no model is loaded; load one first"
                                              : "wrong number of inputs or outputs; pass "
                                                "info.n_inputs inputs and at most "
                                                "info.n_outputs outputs");
    /* The engine fills every output; the caller may want fewer. */
    uint64_t t0 = eb_clock_ns();
    enum eb_status st = eb_engine_run(p->engine, in, n_in, all, p->n_out, diag);
    uint64_t t1 = eb_clock_ns();
    if (st != EB_OK)
        return st;
    finish_infer(p, all, out, n_out, t1 - t0, timing_out);
    return EB_OK;
}

static int native_frame_input(void *priv, char *why, size_t why_size)
{
    struct native_priv *p = priv;
    if (p->engine == NULL) {
        snprintf(why, why_size, "no model is loaded");
        return 0;
    }
    return eb_engine_frame_input(p->engine, why, why_size);
}

static enum eb_status native_infer_frame(void *priv, const struct eb_backend_frame *frame,
                                         struct eb_tensor *out, size_t n_out,
                                         struct eb_infer_timing *timing_out, struct eb_diag *diag)
{
    struct native_priv *p = priv;
    struct eb_tensor all[EB_BACKEND_MAX_IO];
    if (p->engine == NULL || n_out > p->n_out || frame == NULL || (n_out > 0 && out == NULL))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to run model %s: no model loaded, no frame or too many "
                            "outputs asked for",
                            p->model);
    const struct eb_engine_frame f = {.rgb = frame->rgb,
                                      .width = frame->width,
                                      .height = frame->height,
                                      .stride = frame->stride,
                                      .new_w = frame->new_w,
                                      .new_h = frame->new_h,
                                      .pad_left = frame->pad_left,
                                      .pad_top = frame->pad_top};
    enum eb_status st = eb_engine_run_frame(p->engine, &f, all, p->n_out, diag);
    if (st != EB_OK)
        return st;
    finish_infer(p, all, out, n_out, 0, timing_out);
    return EB_OK;
}

static enum eb_status native_frame_buffer(void *priv, int width, int height, uint8_t **buf_out,
                                          struct eb_diag *diag)
{
    struct native_priv *p = priv;
    if (p->engine == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "backend native: no model is loaded");
    return eb_engine_frame_buffer(p->engine, width, height, buf_out, diag);
}

static enum eb_status native_pin_frames(void *priv, uint8_t *base, size_t bytes,
                                        struct eb_diag *diag)
{
    struct native_priv *p = priv;
    if (p->engine == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "backend native: no model is loaded");
    return eb_engine_pin_frames(p->engine, base, bytes, diag);
}

static enum eb_status native_reduce_head(void *priv, int output, float conf, struct eb_diag *diag)
{
    struct native_priv *p = priv;
    if (p->engine == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "no model is loaded; load one first");
    return eb_engine_reduce_head(p->engine, output, conf, diag);
}

static enum eb_status native_keep_outputs(void *priv, const unsigned char *keep, size_t n,
                                          struct eb_diag *diag)
{
    struct native_priv *p = priv;
    if (p->engine == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "no model is loaded; load one first");
    return eb_engine_keep_outputs(p->engine, keep, n, diag);
}

static size_t native_head_rows(void *priv, struct eb_anchor_row **rows_out)
{
    struct native_priv *p = priv;
    *rows_out = NULL;
    return p->engine != NULL ? eb_engine_head_rows(p->engine, rows_out) : 0;
}

static enum eb_status native_mem_usage(void *priv, struct eb_mem_usage *usage_out)
{
    struct native_priv *p = priv;
    struct eb_engine_mem mem = {0};
    if (p->engine != NULL)
        eb_engine_mem_info(p->engine, &mem);
    memset(usage_out, 0, sizeof(*usage_out));
    /* Planned once at load and allocated once: what the engine holds is the plan, and on CUDA
     * a decoder's CUDA Graphs as its step shapes are captured (within what the cap leaves). */
    if (p->device == EB_DEVICE_CUDA) {
        usage_out->host_bytes = mem.host_bytes;
        usage_out->device_bytes = usage_out->device_peak_bytes = mem.total_bytes;
        usage_out->device_measured_bytes = mem.device_measured_bytes;
    } else {
        usage_out->host_bytes = mem.arena_bytes + mem.weight_bytes;
    }
    return EB_OK;
}

/* ---- per-operator profile ------------------------------------------------------------------ */

static enum eb_status native_profile(void *priv, struct eb_backend_profile *profile_out,
                                     struct eb_diag *diag)
{
    struct native_priv *p = priv;
    (void)diag; /* the only failure, profiling off, is the wrapper's generic message */
    struct eb_engine_profile prof;
    memset(profile_out, 0, sizeof(*profile_out));
    if (p->engine == NULL || p->prof_nodes == NULL)
        return EB_ERR_UNSUPPORTED;
    eb_engine_profile_get(p->engine, &prof);
    size_t n = prof.n_nodes < p->n_prof_nodes ? prof.n_nodes : p->n_prof_nodes;
    for (size_t k = 0; k < n; k++) {
        const struct eb_engine_prof_node *en = &prof.nodes[k];
        struct eb_backend_prof_node *bn = &p->prof_nodes[k];
        bn->name = en->name != NULL ? en->name : "";
        bn->op = en->op != NULL ? en->op : "";
        bn->fused = en->fused;
        bn->total_ms = en->total_ms;
        bn->flops = en->flops;
    }
    profile_out->n_nodes = n;
    profile_out->nodes = p->prof_nodes;
    profile_out->runs = prof.runs;
    profile_out->run_total_ms = prof.run_total_ms;
    return EB_OK;
}

static void native_profile_reset(void *priv)
{
    struct native_priv *p = priv;
    if (p->engine != NULL)
        eb_engine_profile_reset(p->engine);
}

const struct eb_backend_ops eb_backend_native_ops = {
    .abi = EB_BACKEND_ABI,
    .name = "native",
    .description = "edgebench's own engine (CPU or CUDA, planned memory with a hard cap)",
    .caps = EB_BACKEND_CAP_MEM_LIMIT | EB_BACKEND_CAP_OP_PROFILE | EB_BACKEND_CAP_INT8
#ifdef EB_HAVE_CUDA
            | EB_BACKEND_CAP_CUDA | EB_BACKEND_CAP_FP16
#endif
    ,
    .priv_size = sizeof(struct native_priv),
    .probe = native_probe,
    .open = native_open,
    .close = native_close,
    .load = native_load,
    .infer = native_infer,
    .mem_usage = native_mem_usage,
    .supports = native_supports,
    .profile = native_profile,
    .profile_reset = native_profile_reset,
    .frame_input = native_frame_input,
    .infer_frame = native_infer_frame,
    .frame_buffer = native_frame_buffer,
    .pin_frames = native_pin_frames,
    .reduce_head = native_reduce_head,
    .keep_outputs = native_keep_outputs,
    .head_rows = native_head_rows,
};
