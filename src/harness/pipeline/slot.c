#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/clock.h"
#include "eb/engine.h"
#include "eb/file.h"
#include "harness/metrics/sampler.h"
#include "harness/pipeline/advice.h"
#include "harness/pipeline/annotate.h"
#include "harness/pipeline/slot.h"
#include "harness/results/validity.h"
#include "model/model.h"

#define EB_SLOT_MAX_DET 300
/* Records first reserved for a pass whose length is a duration (they double when full). */
#define EB_SLOT_FIRST_RECORDS 4096
#define EB_SLOT_DRIFT_IOU     0.9f      /* fp16 drift: a box matches at this IoU or more */
#define EB_SLOT_MAX_PROFILE   (1 << 20) /* a --model_profile file larger than this is refused */

/* NVTX range names of the stages, per slot (read, pre, infer, post). */
enum { NVTX_READ, NVTX_PRE, NVTX_INFER, NVTX_POST };
static const char *const nvtx_stage[EB_NUM_SLOTS][4] = {
    {"rgb:read", "rgb:pre", "rgb:infer", "rgb:post"},
    {"thermal:read", "thermal:pre", "thermal:infer", "thermal:post"},
};

void eb_slot_init(struct eb_slot *s, int index, const struct eb_slot_setup *setup)
{
    memset(s, 0, sizeof(*s));
    s->index = index;
    s->name = index == 0 ? "rgb" : "thermal";
    s->setup = *setup;
    s->status = EB_SLOT_SKIPPED;
    atomic_init(&s->n_done, 0);
    atomic_init(&s->last_mem, 0);
    for (int i = 0; i < EB_SLOT_RECENT; i++)
        atomic_init(&s->recent_e2e_ns[i], 0);
    eb_nvtx_init(&s->nvtx, EB_NVTX_DOMAIN_STAGE);
}

/* Marks the slot failed; its message gets the command-line advice of the failure. */
static enum eb_status slot_fail(struct eb_slot *s, enum eb_status st)
{
    s->status = EB_SLOT_FAILED;
    if (s->diag.status == EB_OK)
        eb_diag_fail(&s->diag, st, "%s", eb_status_message(st));
    eb_advice_append(&s->diag);
    return st;
}

/* IEEE half from float (round to nearest even), for float16 model inputs. */
static uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    uint32_t sign = (x >> 16) & 0x8000u;
    int32_t exp = (int32_t)((x >> 23) & 0xFF) - 127 + 15;
    uint32_t mant = x & 0x7FFFFFu;
    if (((x >> 23) & 0xFF) == 0xFF)
        return (uint16_t)(sign | 0x7C00u | (mant ? 0x200u : 0));
    if (exp >= 31)
        return (uint16_t)(sign | 0x7C00u);
    if (exp <= 0) {
        if (exp < -10)
            return (uint16_t)sign;
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t half = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)exp << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u)))
        half++;
    return (uint16_t)half;
}

static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t mant = h & 0x3FFu;
    uint32_t x;
    if (exp == 0) {
        if (mant == 0) {
            x = sign;
        } else {
            exp = 127 - 15 + 1;
            while ((mant & 0x400u) == 0) {
                mant <<= 1;
                exp--;
            }
            mant &= 0x3FFu;
            x = sign | (exp << 23) | (mant << 13);
        }
    } else if (exp == 31) {
        x = sign | 0x7F800000u | (mant << 13);
    } else {
        x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &x, sizeof(f));
    return f;
}

static uint64_t monitored_bytes(const struct eb_slot *s)
{
    if (s->setup.unified) {
        struct eb_sysmem m;
        if (eb_procfs_sysmem(&m, NULL) == EB_OK)
            return m.used;
        return 0;
    }
    return eb_procfs_rss_bytes();
}

/* After frame `fr` ran through infer_frame: the next frames are decoded straight into the
 * backend's page-locked frame buffer, so the backend uploads them with no staging copy (on an
 * H100, 0.5 ms less per 1920x1080 frame). A frame larger than the buffer (decoded into the
 * source's own) asks for a larger one; a backend without one keeps copying. (val and compare
 * feed frames of their own sources: theirs keep being copied in.) */
static void attach_frame_buffer(struct eb_slot *s, const struct eb_frame *fr)
{
    const size_t px = (size_t)fr->width * (size_t)fr->height;
    if (s->src == NULL || s->frame_buf_off || fr->rgb == s->frame_buf ||
        (s->frame_buf != NULL && px <= s->frame_buf_px))
        return;
    uint8_t *buf = NULL;
    struct eb_diag d = {0};
    if (eb_backend_frame_buffer(s->be, fr->width, fr->height, &buf, &d) != EB_OK) {
        s->frame_buf_off = 1;
        s->frame_buf = NULL;
        eb_source_set_output(s->src, NULL, 0);
        return;
    }
    s->frame_buf = buf;
    s->frame_buf_px = px;
    eb_source_set_output(s->src, buf, px * 3 + 64);
}

/* A synthetic ring (frames rendered at open, read many times) is page-locked for the backend's
 * device: a read hands out the ring's frame and the backend uploads it from there, so no frame
 * is copied at all (the frame buffer is not used). Where the backend cannot, frames are copied
 * into its frame buffer as from any source. */
static void pin_source_frames(struct eb_slot *s)
{
    uint8_t *base = NULL;
    size_t bytes = 0;
    if (!eb_source_frames_memory(s->src, &base, &bytes))
        return;
    struct eb_diag d = {0};
    if (eb_backend_pin_frames(s->be, base, bytes, &d) != EB_OK) {
        eb_log_msg(s->setup.log, EB_LOG_INFO, "slot %s: synthetic frames are copied in: %s",
                   s->name, d.msg);
        return;
    }
    s->frames_pinned = 1;
    s->frame_buf_off = 1;
    const size_t n = strlen(s->pre_reason);
    snprintf(s->pre_reason + n, sizeof(s->pre_reason) - n,
             "; frames go up from the page-locked synthetic ring");
    eb_log_msg(s->setup.log, EB_LOG_INFO,
               "slot %s: the synthetic ring (%.1f MiB) is page-locked: frames are uploaded from "
               "it, with no copy",
               s->name, (double)bytes / (1024.0 * 1024.0));
}

/* Takes the page lock off the source's ring before the source goes (and the backend keeps
 * copying frames in from then on). */
static void unpin_source_frames(struct eb_slot *s)
{
    if (!s->frames_pinned)
        return;
    struct eb_diag d = {0};
    if (eb_backend_pin_frames(s->be, NULL, 0, &d) != EB_OK)
        eb_log_msg(s->setup.log, EB_LOG_WARN, "slot %s: %s", s->name, d.msg);
    s->frames_pinned = 0;
    s->frame_buf_off = 0;
}

/* Preprocess and infer in one call of the backend (the letterbox on its device): the call's
 * host time is split at the device's letterbox time (pre) and the rest (infer: the frame's
 * upload, the forward, the outputs back). One NVTX range (infer) covers the call. */
static enum eb_status run_model_gpu_pre(struct eb_slot *s, const struct eb_frame *fr,
                                        uint64_t *t_pre_end, uint64_t *t_inf_end)
{
    const uint64_t t0 = eb_clock_ns();
    eb_nvtx_push(&s->nvtx, nvtx_stage[s->index][NVTX_INFER]);
    eb_letterbox_compute(fr->width, fr->height, s->in_w, s->in_h, &s->lb);
    const struct eb_backend_frame f = {.rgb = fr->rgb,
                                       .width = fr->width,
                                       .height = fr->height,
                                       .stride = fr->stride,
                                       .new_w = s->lb.new_w,
                                       .new_h = s->lb.new_h,
                                       .pad_left = s->lb.pad_left,
                                       .pad_top = s->lb.pad_top};
    struct eb_tensor outs[EB_BACKEND_MAX_IO];
    memset(outs, 0, sizeof(outs));
    struct eb_infer_timing timing = {0};
    enum eb_status st =
        eb_backend_infer_frame(s->be, &f, outs, s->info.n_outputs, &timing, &s->diag);
    *t_inf_end = eb_clock_ns();
    eb_nvtx_pop(&s->nvtx);
    const uint64_t pre = timing.pre_ns < *t_inf_end - t0 ? timing.pre_ns : *t_inf_end - t0;
    *t_pre_end = t0 + pre;
    if (st == EB_OK) {
        memcpy(s->outs, outs, sizeof(s->outs));
        attach_frame_buffer(s, fr);
    }
    return st;
}

/* The host preprocessing of `fr` into s->input (s->lb set): the profile's resize and
 * normalisation. */
static void preprocess_host(struct eb_slot *s, const struct eb_frame *fr)
{
    eb_letterbox_compute_mode(fr->width, fr->height, s->in_w, s->in_h, s->profile.resize, &s->lb);
    eb_letterbox_to_nchw_f32_norm(fr->rgb, fr->width, fr->height, fr->stride, &s->lb, s->in_c,
                                  &s->profile.norm, s->input_f32);
    if (s->in_dtype == EB_DTYPE_F16) {
        size_t n = (size_t)s->in_c * (size_t)s->in_h * (size_t)s->in_w;
        uint16_t *h = s->input;
        for (size_t i = 0; i < n; i++)
            h[i] = f32_to_f16(s->input_f32[i]);
    }
}

/* One inference of `be` on s->input into outs (EB_BACKEND_MAX_IO entries). */
static enum eb_status infer_host(struct eb_slot *s, struct eb_backend *be, struct eb_tensor *outs,
                                 struct eb_diag *diag)
{
    struct eb_tensor in = {.dtype = s->in_dtype, .rank = 4, .data = s->input};
    in.shape[0] = 1;
    in.shape[1] = s->in_c;
    in.shape[2] = s->in_h;
    in.shape[3] = s->in_w;
    memset(outs, 0, EB_BACKEND_MAX_IO * sizeof(*outs));
    struct eb_infer_timing timing;
    return eb_backend_infer(be, &in, 1, outs, s->info.n_outputs, &timing, diag);
}

/* Runs preprocess and infer; leaves the outputs' descriptors in s->outs. */
static enum eb_status run_model(struct eb_slot *s, const struct eb_frame *fr, uint64_t *t_pre_end,
                                uint64_t *t_inf_end)
{
    if (s->gpu_pre)
        return run_model_gpu_pre(s, fr, t_pre_end, t_inf_end);
    eb_nvtx_push(&s->nvtx, nvtx_stage[s->index][NVTX_PRE]);
    preprocess_host(s, fr);
    *t_pre_end = eb_clock_ns();
    eb_nvtx_pop(&s->nvtx);
    eb_nvtx_push(&s->nvtx, nvtx_stage[s->index][NVTX_INFER]);
    struct eb_tensor outs[EB_BACKEND_MAX_IO];
    enum eb_status st = infer_host(s, s->be, outs, &s->diag);
    *t_inf_end = eb_clock_ns();
    eb_nvtx_pop(&s->nvtx);
    if (st == EB_OK)
        memcpy(s->outs, outs, sizeof(s->outs));
    return st;
}

static enum eb_status outputs_f32(struct eb_slot *s, const struct eb_tensor *outs,
                                  struct eb_head_output *ho);

/* Decode + NMS + unmap into s->dets: from the rows the backend's device kept (gpu_decode), or
 * from the outputs as float32 through the profile's head adapter. */
static enum eb_status postprocess(struct eb_slot *s)
{
    if (s->gpu_decode) {
        struct eb_anchor_row *rows = NULL;
        const size_t n = eb_backend_head_rows(s->be, &rows);
        eb_yolo_nms(&s->scratch, eb_yolo_decode_rows(rows, n, &s->scratch), &s->params, &s->dets);
        for (size_t i = 0; i < s->dets.count; i++)
            eb_letterbox_unmap(&s->lb, &s->dets.items[i]);
        return EB_OK;
    }
    struct eb_head_output ho[EB_BACKEND_MAX_IO];
    enum eb_status st = outputs_f32(s, s->outs, ho);
    if (st == EB_OK)
        eb_head_postprocess(&s->head, ho, s->info.n_outputs, &s->lb, &s->params, &s->scratch,
                            &s->dets);
    return st;
}

/*
 * --precision fp16: the next --drift_frames frames, letterboxed on the host, through this slot's
 * instance and through an fp32 instance of the same model (opened here, closed at the end):
 * output 0's max/mean absolute difference and the share of fp32 detections that fp16
 * reproduces (same class, IoU >= EB_SLOT_DRIFT_IOU). Runs before the head reduction is on.
 * Never fails the slot: what stops it is the note.
 */
static void measure_drift(struct eb_slot *s, const struct eb_model_spec *ms)
{
    const struct eb_slot_setup *su = &s->setup;
    if (su->backend_cfg.precision != EB_ENGINE_PRECISION_FP16)
        return;
    if (su->drift_frames <= 0) {
        snprintf(s->drift_note, sizeof(s->drift_note), "--drift_frames 0: not measured");
        return;
    }
    struct eb_backend_config cfg = su->backend_cfg;
    cfg.precision = EB_ENGINE_PRECISION_FP32;
    cfg.profile = 0;
    struct eb_backend *ref = NULL;
    struct eb_model_info info;
    struct eb_diag d = {0};
    const size_t n = (size_t)eb_tensor_numel(&s->outs[0]);
    float *test_out = malloc((n ? n : 1) * sizeof(float));
    struct eb_detection *items = calloc(EB_SLOT_MAX_DET, sizeof(*items));
    unsigned char *used = malloc(EB_SLOT_MAX_DET);
    struct eb_yolo_drift acc = {0};
    if (test_out == NULL || items == NULL || used == NULL) {
        snprintf(s->drift_note, sizeof(s->drift_note), "not measured: out of memory");
        goto done;
    }
    if (eb_backend_create(su->backend, &cfg, &ref, &d) != EB_OK ||
        eb_backend_load(ref, ms, &info, &d) != EB_OK) {
        snprintf(s->drift_note, sizeof(s->drift_note),
                 "not measured: the fp32 reference did not load: %.150s", d.msg);
        goto done;
    }
    for (int64_t k = 0; k < su->drift_frames; k++) {
        struct eb_frame fr;
        struct eb_tensor o16[EB_BACKEND_MAX_IO], o32[EB_BACKEND_MAX_IO];
        struct eb_head_output h16[EB_BACKEND_MAX_IO], h32[EB_BACKEND_MAX_IO];
        if (eb_slot_read_any(s, &fr) != EB_OK) {
            eb_diag_fail(&d, s->diag.status, "%s", s->diag.msg);
            eb_diag_clear(&s->diag);
            break;
        }
        preprocess_host(s, &fr);
        if (infer_host(s, s->be, o16, &d) != EB_OK)
            break;
        if (outputs_f32(s, o16, h16) != EB_OK)
            break;
        memcpy(test_out, h16[0].data, n * sizeof(float));
        eb_head_postprocess(&s->head, h16, s->info.n_outputs, &s->lb, &s->params, &s->scratch,
                            &s->dets);
        if (infer_host(s, ref, o32, &d) != EB_OK)
            break;
        int f32 = 1;
        for (size_t i = 0; i < s->info.n_outputs; i++)
            f32 &= o32[i].dtype == EB_DTYPE_F32 &&
                   eb_tensor_numel(&o32[i]) == eb_tensor_numel(&o16[i]);
        if (!f32) {
            eb_diag_fail(&d, EB_ERR_UNSUPPORTED,
                         "the fp32 outputs are not float32 of fp16's sizes");
            break;
        }
        for (size_t i = 0; i < s->info.n_outputs; i++)
            h32[i] = (struct eb_head_output){o32[i].data, o32[i].shape, o32[i].rank};
        struct eb_detections ref_dets = {.items = items, .capacity = EB_SLOT_MAX_DET};
        eb_head_postprocess(&s->head, h32, s->info.n_outputs, &s->lb, &s->params, &s->scratch,
                            &ref_dets);
        eb_yolo_drift_add_output(&acc, o32[0].data, test_out, n);
        eb_yolo_drift_add_dets(&acc, &ref_dets, &s->dets, EB_SLOT_DRIFT_IOU, used);
    }
    if (acc.frames == 0) {
        snprintf(s->drift_note, sizeof(s->drift_note), "not measured: %.170s",
                 d.msg[0] ? d.msg : "no frame");
        goto done;
    }
    s->drift = acc;
    s->drift_measured = 1;
    snprintf(s->drift_note, sizeof(s->drift_note),
             "%llu frames, letterboxed on the host, through fp16 and an fp32 instance of the "
             "model; boxes matched at the same class and IoU >= %.2f",
             (unsigned long long)acc.frames, (double)EB_SLOT_DRIFT_IOU);
done:
    eb_backend_destroy(ref);
    free(test_out);
    free(items);
    free(used);
}

/* The outputs `outs` as float32 head outputs `ho` (float16 outputs are converted into the
 * buffers sized at prepare). */
static enum eb_status outputs_f32(struct eb_slot *s, const struct eb_tensor *outs,
                                  struct eb_head_output *ho)
{
    for (size_t k = 0; k < s->info.n_outputs; k++) {
        const struct eb_tensor *o = &outs[k];
        ho[k] = (struct eb_head_output){o->data, o->shape, o->rank};
        if (o->dtype == EB_DTYPE_F32)
            continue;
        int64_t n = eb_tensor_numel(o);
        if (o->dtype == EB_DTYPE_F16 && s->out_f32[k] != NULL && (size_t)n <= s->out_f32_cap[k]) {
            const uint16_t *h = o->data;
            for (int64_t i = 0; i < n; i++)
                s->out_f32[k][i] = f16_to_f32(h[i]);
            ho[k].data = s->out_f32[k];
            continue;
        }
        return eb_diag_fail(&s->diag, EB_ERR_UNSUPPORTED,
                            "model output %zu has type %s and %lld elements; edgebench reads "
                            "float32 or float16 detection outputs of a fixed size",
                            k, eb_dtype_name(o->dtype), (long long)n);
    }
    return EB_OK;
}

enum eb_status eb_slot_read_any(struct eb_slot *s, struct eb_frame *fr)
{
    enum eb_status st = eb_source_next(s->src, fr, &s->diag);
    if (st == EB_ERR_END && s->rewindable) {
        eb_diag_clear(&s->diag);
        st = eb_source_rewind(s->src, &s->diag);
        if (st == EB_OK)
            st = eb_source_next(s->src, fr, &s->diag);
    }
    if (st == EB_ERR_END) {
        eb_diag_clear(&s->diag);
        return eb_diag_fail(&s->diag, EB_ERR_END,
                            "source %s delivered no frame that could be decoded (%lld skipped); "
                            "check the files",
                            s->setup.source_text, (long long)eb_source_skipped(s->src));
    }
    return st;
}

/*
 * The model's precision from its graph (s->model_prec) and the graph's facts for head
 * recognition (s->graph), from one read of the file. A model that cannot be read stays
 * unknown: the backend's load then fails it with its own message. --precision int8 on a model
 * without int8 ops (on tensorrt: without QDQ ops) fails the slot here, before the backend is
 * looked up.
 */
static enum eb_status read_model_precision(struct eb_slot *s, const struct eb_model_spec *ms)
{
    const struct eb_slot_setup *su = &s->setup;
    struct eb_diag d = {0};
    uint8_t *file = NULL;
    const uint8_t *bytes = ms->bytes;
    size_t len = ms->n_bytes;
    if (bytes == NULL && eb_model_read_file(ms->path, &file, &len, &d) == EB_OK)
        bytes = file;
    s->model_prec_known = bytes != NULL && eb_model_precision_of(bytes, len, su->model_label,
                                                                 &s->model_prec, &d) == EB_OK;
    struct eb_diag dg = {0};
    s->graph_known =
        bytes != NULL && eb_model_head_graph(bytes, len, su->model_label, &s->graph, &dg) == EB_OK;
    if (!s->graph_known)
        snprintf(s->graph_why, sizeof(s->graph_why), "%s", bytes ? dg.msg : d.msg);
    free(file);
    if (!s->model_prec_known) {
        eb_log_msg(su->log, EB_LOG_DEBUG, "slot %s: model precision not read: %s", s->name, d.msg);
        return EB_OK;
    }
    const struct eb_model_precision_info *p = &s->model_prec;
    const int any_int8 = p->ops[EB_MODEL_PRECISION_INT8_DYNAMIC] > 0 ||
                         p->ops[EB_MODEL_PRECISION_INT8_QDQ] > 0 ||
                         p->ops[EB_MODEL_PRECISION_INT8_STATIC] > 0;
    /* TensorRT's int8 is explicit quantisation: it reads the Q/DQ scales (no calibration table
     * is passed), so a float or dynamically quantised model has nothing to build int8 from. */
    const int trt = su->backend_cfg.device == EB_DEVICE_TENSORRT;
    if (su->need_int8 && !(trt ? p->ops[EB_MODEL_PRECISION_INT8_QDQ] > 0 : any_int8))
        return eb_diag_fail(&s->diag, EB_ERR_UNSUPPORTED,
                            "model %s is %s (read from its graph: %s); %s: quantize it first "
                            "(%s) or use --precision %s",
                            su->model_label, eb_model_precision_name(p->kind), p->detail,
                            trt ? "--precision int8 on --device tensorrt needs a QDQ model, "
                                  "whose Q/DQ scales TensorRT reads (no calibration table is "
                                  "passed)"
                                : "--precision int8 needs an int8 model (QDQ or dynamic "
                                  "quantisation)",
                            trt ? "edgebench quantize"
                                : "e.g. ONNX Runtime's quantize_static or quantize_dynamic",
                            trt ? "fp16" : "fp32");
    return EB_OK;
}

enum eb_status eb_backend_choose(int choice, const struct eb_backend_config *cfg,
                                 const struct eb_model_spec *ms,
                                 const struct eb_backend_ops **ops_out, char *reason,
                                 size_t reason_size, struct eb_diag *diag)
{
    const char *name = "ort";
    if (choice == EB_BACKEND_CHOICE_NATIVE) {
        name = "native";
        snprintf(reason, reason_size, "--backend native");
    } else if (choice == EB_BACKEND_CHOICE_ORT) {
        snprintf(reason, reason_size, "--backend ort");
    } else {
        const struct eb_backend_ops *native = eb_backend_find("native");
        int ok = 0;
        char why[200] = "";
        struct eb_diag d = {0};
        if (native == NULL) {
            snprintf(why, sizeof(why), "the native backend is not in this build");
        } else if (native->supports == NULL) {
            ok = 1;
        } else if (native->supports(cfg, ms, &ok, why, sizeof(why), &d) != EB_OK) {
            ok = 0;
            /* A long reason is cut; the return value is checked for that reason. */
            if (snprintf(why, sizeof(why), "%s", d.msg) < 0)
                why[0] = '\0';
        }
        if (ok)
            name = "native";
        if (snprintf(reason, reason_size, "auto: %s",
                     ok ? "native supports every node of the model" : why) < 0)
            reason[0] = '\0';
    }
    *ops_out = eb_backend_find(name);
    if (*ops_out == NULL)
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "backend %s is not compiled into this build; use --backend ort", name);
    return EB_OK;
}

/* Resolves --backend for this slot (eb_backend_choose). */
static enum eb_status choose_backend(struct eb_slot *s, const struct eb_model_spec *ms)
{
    struct eb_slot_setup *su = &s->setup;
    return eb_backend_choose(su->backend_choice, &su->backend_cfg, ms, &su->backend,
                             s->backend_reason, sizeof(s->backend_reason), &s->diag);
}

/*
 * The model's profile (yolo/profile.h) from its graph, the probe's output shapes and the user's
 * --model_profile / --head; the head in s->head, a profile file's class names in s->info. A
 * profile whose preprocessing the device letterbox does not implement moves preprocessing to
 * the host.
 */
static enum eb_status resolve_profile(struct eb_slot *s)
{
    const struct eb_slot_setup *su = &s->setup;
    char *text = NULL;
    enum eb_status st = EB_OK;
    if (!s->graph_known)
        return eb_diag_fail(&s->diag, EB_ERR_FORMAT, "its graph was not read for the head: %s",
                            s->graph_why);
    struct eb_head_graph g = s->graph;
    g.in_w = s->in_w;
    g.in_h = s->in_h;
    g.n_class_names = s->info.n_class_names;
    g.n_outputs =
        s->info.n_outputs < EB_HEAD_GRAPH_MAX_OUT ? (int)s->info.n_outputs : EB_HEAD_GRAPH_MAX_OUT;
    for (int i = 0; i < g.n_outputs; i++) {
        g.out[i].rank = s->outs[i].rank > 6 ? 6 : s->outs[i].rank;
        for (int k = 0; k < g.out[i].rank; k++)
            g.out[i].shape[k] = s->outs[i].shape[k];
    }
    struct eb_profile_request req = {.file_name = su->profile_path,
                                     .head = su->head ? eb_head_name(su->head) : NULL};
    if (su->profile_path != NULL) {
        st = eb_file_read_text(su->profile_path, EB_SLOT_MAX_PROFILE, &text, &s->diag);
        if (st != EB_OK)
            return st;
        req.file_text = text;
    }
    struct eb_model_profile p;
    st = eb_profile_resolve(&g, &req, &p, &s->diag);
    free(text);
    if (st != EB_OK)
        return st;
    s->profile = p;
    s->head = p.head;
    if (p.n_names > 0) {
        s->info.class_names = (const char *const *)p.names;
        s->info.n_class_names = p.n_names;
    }
    struct eb_head_output ho[EB_BACKEND_MAX_IO];
    for (size_t k = 0; k < s->info.n_outputs; k++)
        ho[k] = (struct eb_head_output){NULL, s->outs[k].shape, s->outs[k].rank};
    st = eb_head_check_outputs(&s->head, ho, s->info.n_outputs, &s->diag);
    if (st != EB_OK)
        return st;
    char pre[160];
    eb_profile_describe_pre(&s->profile, pre, sizeof(pre));
    eb_log_msg(su->log, EB_LOG_INFO, "slot %s: head %s, profile %s (%s): %s; input %s", s->name,
               eb_head_name(s->head.kind), s->profile.family, s->profile.source, s->profile.why,
               pre);
    if (s->gpu_pre &&
        (!eb_pixel_norm_is_default(&s->profile.norm) || s->profile.resize != EB_RESIZE_LETTERBOX)) {
        if (su->preprocess == EB_PREPROCESS_GPU)
            return eb_diag_fail(&s->diag, EB_ERR_UNSUPPORTED,
                                "--preprocess gpu: the device letterbox feeds RGB /255 centred "
                                "with pad 114, and this model's profile wants %s; use "
                                "--preprocess cpu or auto",
                                pre);
        unpin_source_frames(s);
        s->gpu_pre = 0;
        snprintf(s->pre_reason, sizeof(s->pre_reason),
                 "auto: the model's profile (%.120s) is prepared on the host", pre);
    }
    return EB_OK;
}

/* Opens the slot's parsed source: synthetic frames at the pipeline's clock (the source itself
 * delivers as fast as asked), endless where the source is (synthetic, camera, network; files
 * loop in the pipeline: eb_slot_read). */
static enum eb_status open_source(struct eb_slot *s)
{
    const struct eb_slot_setup *su = &s->setup;
    struct eb_source_options so = {.max_frames = 0,
                                   .synth_style = su->synth_style,
                                   .seed = (uint32_t)(s->index + 1),
                                   .log = su->log,
                                   .stop = su->stop,
                                   .files = su->files,
                                   .n_files = su->n_files,
                                   .timeout_s = su->source_timeout_s,
                                   .reconnect = (int)su->reconnect};
    struct eb_source_spec open_spec = s->spec;
    if (s->spec.kind == EB_SOURCE_SYNTHETIC)
        open_spec.synth_fps = 0;
    if (s->spec.kind == EB_SOURCE_SYNTHETIC || eb_source_spec_is_live(&s->spec))
        so.max_frames = INT64_MAX;
    return eb_source_open(&open_spec, &so, &s->src, &s->diag);
}

/* The model as the backend loads it: the embedded bytes, else the file. */
static struct eb_model_spec model_spec(const struct eb_slot *s)
{
    const struct eb_slot_setup *su = &s->setup;
    struct eb_model_spec ms = {.path = su->model_label,
                               .bytes = su->model_bytes,
                               .n_bytes = su->model_len,
                               .imgsz = su->imgsz};
    if (su->model_bytes == NULL)
        ms.path = su->model_path;
    return ms;
}

enum eb_status eb_slot_prepare(struct eb_slot *s)
{
    enum eb_status st = eb_slot_load(s);
    return st != EB_OK ? st : eb_slot_start(s);
}

enum eb_status eb_slot_load(struct eb_slot *s)
{
    enum eb_status st;
    const struct eb_slot_setup *su = &s->setup;
    s->status = EB_SLOT_OK;

    st = eb_source_spec_parse(su->source_text, &s->spec, &s->diag);
    if (st != EB_OK)
        return slot_fail(s, st);
    const int live = eb_source_spec_is_live(&s->spec);
    s->rewindable = !live;
    /* Frames arrive on the pipeline's clock: --fps of the slot, else synthetic=...@FPS. A camera
     * delivers at its own rate. */
    s->fps = su->fps;
    if (s->spec.kind == EB_SOURCE_SYNTHETIC && s->fps <= 0)
        s->fps = s->spec.synth_fps;
    if (live && su->fps > 0)
        return slot_fail(s, eb_diag_fail(&s->diag, EB_ERR_INVALID_ARG,
                                         "a camera or a network stream delivers frames at its own "
                                         "rate; drop --fps "
                                         "(or the slot's --rgb_fps/--thermal_fps) for %s",
                                         su->source_text));
    /* A camera or a network stream opens in eb_slot_start, once every slot's model has loaded:
     * opened before, its frames would wait in buffers while models load, and a stream lost
     * meanwhile would have every frame of that connection read late (its outage estimate too
     * short). */
    if (!live) {
        st = open_source(s);
        if (st != EB_OK)
            return slot_fail(s, st);
    }
    /* The length: --frames and/or --duration; with neither, the validity minimums (and with
     * --data every image once); --no_loop on a finite source: at most the source once. */
    s->frames_goal = su->frames;
    s->duration_goal_s = su->duration_s;
    if (su->frames <= 0 && su->duration_s <= 0) {
        s->frames_goal = su->min_frames;
        s->duration_goal_s = su->min_duration_s;
        if (su->files != NULL && (int64_t)su->n_files > s->frames_goal)
            s->frames_goal = (int64_t)su->n_files;
        if (!su->loop && s->rewindable) {
            const int64_t n = eb_source_count(s->src);
            s->frames_goal = n > 0 ? n : EB_SLOT_MAX_RECORDS;
            s->duration_goal_s = 0;
        }
    }
    if (s->frames_goal > EB_SLOT_MAX_RECORDS)
        s->frames_goal = EB_SLOT_MAX_RECORDS;

    struct eb_model_spec ms = model_spec(s);
    st = read_model_precision(s, &ms);
    if (st != EB_OK)
        return slot_fail(s, st);
    st = choose_backend(s, &ms);
    if (st != EB_OK)
        return slot_fail(s, st);
    eb_log_msg(su->log, EB_LOG_INFO, "slot %s: backend %s (%s)", s->name, su->backend->name,
               s->backend_reason);
    st = su->backend->probe(&su->backend_cfg, &s->probe, &s->diag);
    if (st != EB_OK)
        return slot_fail(s, st);
    st = eb_backend_create(su->backend, &su->backend_cfg, &s->be, &s->diag);
    if (st != EB_OK)
        return slot_fail(s, st);
    st = eb_backend_load(s->be, &ms, &s->info, &s->diag);
    if (st != EB_OK)
        return slot_fail(s, st);
    if (su->backend_cfg.profile && su->backend->profile == NULL)
        eb_log_msg(su->log, EB_LOG_WARN,
                   "slot %s: --profile: backend %s has no per-operator profile (native and ort "
                   "have one)",
                   s->name, su->backend->name);

    /* Input: [1, C, H, W] float32/float16. */
    const struct eb_io_desc *in = &s->info.inputs[0];
    if (s->info.n_inputs != 1 || in->rank != 4 || in->shape[2] <= 0 || in->shape[3] <= 0 ||
        (in->shape[1] != 3 && in->shape[1] != 1) ||
        (in->dtype != EB_DTYPE_F32 && in->dtype != EB_DTYPE_F16)) {
        char shp[96];
        eb_shape_format(in->shape, in->rank, shp, sizeof(shp));
        return slot_fail(s, eb_diag_fail(&s->diag, EB_ERR_UNSUPPORTED,
                                         "model %s takes %zu input(s), the first %s %s; edgebench "
                                         "needs one image input [1,3,H,W] or [1,1,H,W] of float32 "
                                         "or float16",
                                         su->model_label, s->info.n_inputs,
                                         eb_dtype_name(in->dtype), shp));
    }
    /* Until the profile is resolved (after the probe, which needs no particular input), frames
     * are fed as Ultralytics models are. */
    eb_pixel_norm_default(&s->profile.norm);
    s->profile.resize = EB_RESIZE_LETTERBOX;
    s->in_c = (int)in->shape[1];
    s->in_h = (int)in->shape[2];
    s->in_w = (int)in->shape[3];
    s->in_dtype = in->dtype;
    size_t n_in = (size_t)s->in_c * (size_t)s->in_h * (size_t)s->in_w;
    s->input_f32 = malloc(n_in * sizeof(float));
    if (s->input_f32 == NULL)
        return slot_fail(s, eb_diag_fail(&s->diag, EB_ERR_NOMEM, "out of memory for the input"));
    if (s->in_dtype == EB_DTYPE_F16) {
        s->input = malloc(n_in * sizeof(uint16_t));
        if (s->input == NULL)
            return slot_fail(s, eb_diag_fail(&s->diag, EB_ERR_NOMEM, "out of memory"));
    } else {
        s->input = s->input_f32;
    }
    /* Where frames are letterboxed. */
    char why[200] = "";
    const int can_gpu = eb_backend_frame_input(s->be, why, sizeof(why));
    if (su->preprocess == EB_PREPROCESS_GPU && !can_gpu)
        return slot_fail(s,
                         eb_diag_fail(&s->diag, EB_ERR_UNSUPPORTED,
                                      "--preprocess gpu: %s; use --preprocess cpu or auto", why));
    s->gpu_pre = su->preprocess != EB_PREPROCESS_CPU && can_gpu;
    if (su->preprocess == EB_PREPROCESS_CPU)
        snprintf(s->pre_reason, sizeof(s->pre_reason), "--preprocess cpu");
    else if (s->gpu_pre)
        snprintf(s->pre_reason, sizeof(s->pre_reason), "%s: the backend letterboxes on its device",
                 su->preprocess == EB_PREPROCESS_GPU ? "--preprocess gpu" : "auto");
    else
        snprintf(s->pre_reason, sizeof(s->pre_reason), "auto: %.190s", why);
    return EB_OK;
}

enum eb_status eb_slot_start(struct eb_slot *s)
{
    enum eb_status st;
    const struct eb_slot_setup *su = &s->setup;
    if (s->src == NULL) {
        st = open_source(s);
        if (st != EB_OK)
            return slot_fail(s, st);
        eb_log_msg(su->log, EB_LOG_INFO, "slot %s: %s opened (every model loaded)", s->name,
                   su->source_text);
    }
    const int64_t target = s->frames_goal > 0 ? s->frames_goal : EB_SLOT_FIRST_RECORDS;
    struct eb_model_spec ms = model_spec(s);
    if (s->gpu_pre)
        pin_source_frames(s);
    /* Probe inference on the first frame: learns the resolved output shape (and proves the
     * model runs) before anything is timed. */
    struct eb_frame fr;
    st = eb_slot_read_any(s, &fr);
    if (st != EB_OK)
        return slot_fail(s, st);
    uint64_t t1, t2;
    st = run_model(s, &fr, &t1, &t2);
    if (st != EB_OK)
        return slot_fail(s, st);
    for (size_t k = 0; k < s->info.n_outputs; k++) {
        if (s->outs[k].dtype != EB_DTYPE_F16)
            continue;
        s->out_f32_cap[k] = (size_t)eb_tensor_numel(&s->outs[k]);
        s->out_f32[k] = malloc((s->out_f32_cap[k] ? s->out_f32_cap[k] : 1) * sizeof(float));
        if (s->out_f32[k] == NULL)
            return slot_fail(s, eb_diag_fail(&s->diag, EB_ERR_NOMEM, "out of memory"));
    }
    st = resolve_profile(s);
    if (st != EB_OK) {
        eb_diag_prefix(&s->diag, "model %s: ", su->model_label);
        return slot_fail(s, st);
    }
    s->num_classes = s->head.num_classes > 0 ? s->head.num_classes : (int)s->info.n_class_names;
    if (s->num_classes <= 0)
        s->num_classes = 1;
    st = eb_head_scratch_init(&s->scratch, &s->head, &s->diag);
    if (st != EB_OK)
        return slot_fail(s, st);
    s->params.conf = su->conf;
    s->params.iou = su->iou;
    s->params.max_det = EB_SLOT_MAX_DET;
    s->params.class_agnostic = 0;
    s->dets.items = calloc(EB_SLOT_MAX_DET, sizeof(*s->dets.items));
    s->dets.capacity = EB_SLOT_MAX_DET;
    if (s->dets.items == NULL)
        return slot_fail(s, eb_diag_fail(&s->diag, EB_ERR_NOMEM, "out of memory"));
    measure_drift(s, &ms);
    /* Where the head is decoded. */
    if (su->decode == EB_PREPROCESS_CPU) {
        snprintf(s->decode_reason, sizeof(s->decode_reason), "--decode cpu");
    } else if (s->head.kind != EB_HEAD_V8) {
        if (su->decode == EB_PREPROCESS_GPU)
            return slot_fail(s, eb_diag_fail(&s->diag, EB_ERR_UNSUPPORTED,
                                             "--decode gpu: the %s head is decoded on the host "
                                             "(the device reduces [1,4+nc,N] heads only); use "
                                             "--decode cpu or auto",
                                             eb_head_name(s->head.kind)));
        snprintf(s->decode_reason, sizeof(s->decode_reason),
                 "auto: the %s head is decoded on the host (the device reduces [1,4+nc,N] heads "
                 "only)",
                 eb_head_name(s->head.kind));
    } else {
        struct eb_diag d = {0};
        if (eb_backend_reduce_head(s->be, 0, su->conf, &d) == EB_OK) {
            s->gpu_decode = 1;
            snprintf(s->decode_reason, sizeof(s->decode_reason),
                     "%s: the backend keeps the anchors over --conf on its device",
                     su->decode == EB_PREPROCESS_GPU ? "--decode gpu" : "auto");
        } else if (su->decode == EB_PREPROCESS_GPU) {
            return slot_fail(
                s, eb_diag_fail_advise(&s->diag, d.status, d.advice, "--decode gpu: %s", d.msg));
        } else {
            snprintf(s->decode_reason, sizeof(s->decode_reason), "auto: %.190s", d.msg);
        }
    }
    s->class_counts = calloc((size_t)s->num_classes + 1, sizeof(uint64_t));
    /* A duration run (or one longer than the exact prefix) allocates the prefix, the tail ring
     * and the streams whole and touches them now, so that its memory does not move while it
     * runs; a short run of N frames allocates N records. */
    const int soak = su->duration_s > 0 || target > EB_SLOT_EXACT_RECORDS;
    s->cap_records = soak ? EB_SLOT_EXACT_RECORDS : (size_t)target;
    s->records = malloc(s->cap_records * sizeof(*s->records));
    s->tail = malloc(EB_SLOT_TAIL_RECORDS * sizeof(*s->tail));
    s->streams = malloc(sizeof(*s->streams));
    if (s->dets.items == NULL || s->class_counts == NULL || s->records == NULL || s->tail == NULL ||
        s->streams == NULL)
        return slot_fail(s, eb_diag_fail(&s->diag, EB_ERR_NOMEM,
                                         "out of memory for %zu frame records", s->cap_records));
    /* Written with a non-zero byte: a compiler may turn malloc + memset 0 into calloc, whose
     * pages are only mapped when first written, during the pass. A record is read only after
     * it is booked. */
    memset(s->records, 0xa5, s->cap_records * sizeof(*s->records));
    if (soak)
        memset(s->tail, 0xa5, EB_SLOT_TAIL_RECORDS * sizeof(*s->tail));
    memset(s->streams, 0xa5, sizeof(*s->streams));
    if (s->rewindable) {
        st = eb_source_rewind(s->src, &s->diag);
        if (st != EB_OK)
            return slot_fail(s, st);
    }
    return EB_OK;
}

int eb_slot_warmup_over(const struct eb_slot *s, const struct eb_warmup_auto *wa, uint64_t done,
                        uint64_t elapsed_ns)
{
    const uint64_t min_ns = (uint64_t)(s->setup.warmup_s * 1e9);
    if (elapsed_ns < min_ns)
        return 0;
    if (s->setup.warmup != EB_WARMUP_AUTO)
        return (int64_t)done >= s->setup.warmup;
    return wa->stable || done >= EB_WARMUP_AUTO_MAX_FRAMES ||
           elapsed_ns >= (uint64_t)(EB_WARMUP_AUTO_MAX_S * 1e9);
}

enum eb_status eb_slot_use_dataset(struct eb_slot *s, struct eb_accuracy *acc, const char *data_dir,
                                   float conf)
{
    struct eb_slot_setup *su = &s->setup;
    struct eb_source_spec spec;
    memset(&spec, 0, sizeof(spec));
    spec.kind = EB_SOURCE_IMAGE_DIR;
    if (snprintf(spec.path, sizeof(spec.path), "%s", data_dir) >= (int)sizeof(spec.path))
        return slot_fail(s, eb_diag_fail(&s->diag, EB_ERR_INVALID_ARG,
                                         "dataset folder %s: the path is too long", data_dir));
    const struct eb_source_options so = {
        .log = su->log, .stop = su->stop, .files = acc->files, .n_files = acc->ds->n_images};
    struct eb_source *src = NULL;
    enum eb_status st = eb_source_open(&spec, &so, &src, &s->diag);
    if (st != EB_OK)
        return slot_fail(s, st);
    unpin_source_frames(s);
    eb_source_destroy(s->src);
    s->src = src;
    s->spec = spec;
    /* The new source decodes into the backend's frame buffer again from its second frame. */
    s->frame_buf = NULL;
    s->frame_buf_px = 0;
    su->files = acc->files;
    su->n_files = acc->ds->n_images;
    su->accuracy = acc;
    su->loop = 0;
    su->warmup = 0;
    su->warmup_s = 0;
    su->fps = 0;
    s->fps = 0;
    s->rewindable = 1;
    s->loop_delivered = 0;
    s->frames_goal = (int64_t)acc->ds->n_images;
    s->duration_goal_s = 0;
    s->params.conf = conf;
    /* A head reduced on the device keeps the anchors over the threshold it was given: the
     * accuracy pass's (lower) one. */
    if (s->gpu_decode) {
        st = eb_backend_reduce_head(s->be, 0, conf, &s->diag);
        if (st != EB_OK)
            return slot_fail(s, st);
    }
    return EB_OK;
}

enum eb_status eb_slot_rewind(struct eb_slot *s)
{
    if (!s->rewindable)
        return EB_OK;
    enum eb_status st = eb_source_rewind(s->src, &s->diag);
    if (st != EB_OK)
        return slot_fail(s, st);
    return EB_OK;
}

enum eb_status eb_slot_read(struct eb_slot *s, int loop, struct eb_frame *fr)
{
    eb_nvtx_push(&s->nvtx, nvtx_stage[s->index][NVTX_READ]);
    enum eb_status st = eb_source_next(s->src, fr, &s->diag);
    /* The end of a finite source: it starts again when the slot loops (the rewind is timed as
       part of the read, as a looping video's would be), unless the last pass over it
       delivered nothing (every frame undecodable). */
    if (st == EB_ERR_END && loop && s->rewindable) {
        const int64_t skipped = eb_source_skipped(s->src);
        const int delivered_any = s->loop_delivered;
        eb_diag_clear(&s->diag);
        if (delivered_any) {
            st = eb_source_rewind(s->src, &s->diag);
            if (st == EB_OK) {
                s->skipped_looped += (uint64_t)skipped;
                s->loops++;
                s->loop_delivered = 0;
                st = eb_source_next(s->src, fr, &s->diag);
            }
        }
    }
    eb_nvtx_pop(&s->nvtx);
    if (st == EB_ERR_END || st == EB_ERR_CANCELLED) { /* the end, or the stop during a wait */
        eb_diag_clear(&s->diag);
        return st;
    }
    if (st != EB_OK)
        return slot_fail(s, st);
    s->loop_delivered = 1;
    return EB_OK;
}

enum eb_status eb_slot_process(struct eb_slot *s, const struct eb_frame *fr, uint64_t *t_pre_end,
                               uint64_t *t_inf_end)
{
    enum eb_status st = run_model(s, fr, t_pre_end, t_inf_end);
    eb_nvtx_push(&s->nvtx, nvtx_stage[s->index][NVTX_POST]);
    if (st == EB_OK)
        st = postprocess(s);
    eb_nvtx_pop(&s->nvtx);
    if (st != EB_OK)
        return slot_fail(s, st);
    return EB_OK;
}

void eb_slot_begin_pass(struct eb_slot *s)
{
    atomic_store_explicit(&s->n_done, 0, memory_order_relaxed);
    for (int i = 0; i < EB_SLOT_RECENT; i++)
        atomic_store_explicit(&s->recent_e2e_ns[i], 0, memory_order_relaxed);
    memset(s->class_counts, 0, ((size_t)s->num_classes + 1) * sizeof(uint64_t));
    s->n_counted = s->n_left_out = 0;
    if (s->streams != NULL) {
        for (int k = 0; k < EB_SLOT_SERIES_COUNT; k++)
            eb_stat_stream_init(&s->streams->s[k], 0x5eedull * 64 + (uint64_t)s->index * 16 + k);
        s->streams->dets_total = s->streams->deadline_misses = 0;
        s->streams->dets_max = 0;
        eb_stat_series_init(&s->streams->e2e_series);
        eb_stat_series_init(&s->streams->mem_series);
    }
    s->others_cpu_pct = NAN;
    s->dropped = 0;
    s->records_capped = 0;
    s->violations = 0;
    s->mem_peak = 0;
    s->skipped_looped = 0;
    s->loops = 0;
    s->size_mismatch = 0;
    /* The profile covers exactly the frames of this pass (not the probe, warm-up or a solo
     * baseline pass before it). */
    if (s->setup.backend_cfg.profile)
        eb_backend_profile_reset(s->be);
    if (s->setup.accuracy != NULL)
        eb_accuracy_reset(s->setup.accuracy);
}

/* --save_images: frame `n` annotated into the run's folder; a failure is a warning. */
static void save_image(const struct eb_slot *s, const struct eb_frame *fr, size_t n)
{
    char path[4352];
    struct eb_diag ad = {0};
    snprintf(path, sizeof(path), "%s/%s_%06zu.png", s->setup.save_dir,
             s->setup.save_prefix ? s->setup.save_prefix : s->name, n);
    if (eb_annotate_save(path, fr->rgb, fr->width, fr->height, fr->stride, &s->dets,
                         s->info.class_names, s->info.n_class_names, s->setup.save_min_score,
                         &ad) != EB_OK)
        eb_log_msg(s->setup.log, EB_LOG_WARN, "--save_images: %s", ad.msg);
}

/* One record into the streaming statistics (every series a slot summarises). */
static void fold_record(struct eb_slot_streams *st, const struct eb_frame_record *r, double fps)
{
    for (int k = 0; k < EB_STAGE_COUNT; k++)
        eb_stat_stream_add(&st->s[k], (double)r->stage_ns[k] / 1e6);
    eb_stat_stream_add(&st->s[EB_SLOT_SERIES_PIPELINE],
                       (double)(r->stage_ns[EB_STAGE_PRE] + r->stage_ns[EB_STAGE_INFER] +
                                r->stage_ns[EB_STAGE_POST]) /
                           1e6);
    const double arr = eb_frame_arrival_ms(r);
    eb_stat_stream_add(&st->s[EB_SLOT_SERIES_ARRIVAL], arr);
    st->deadline_misses += eb_frame_missed(arr, fps);
    st->dets_total += r->n_dets;
    if (r->n_dets > st->dets_max)
        st->dets_max = r->n_dets;
}

const struct eb_frame_record *eb_slot_record(const struct eb_slot *s, size_t i)
{
    const size_t done = atomic_load_explicit(&s->n_done, memory_order_acquire);
    if (i >= done)
        return NULL;
    if (i < EB_SLOT_EXACT_RECORDS)
        return i < s->cap_records ? &s->records[i] : NULL;
    if (done - i > EB_SLOT_TAIL_RECORDS || s->tail == NULL)
        return NULL;
    return &s->tail[(i - EB_SLOT_EXACT_RECORDS) % EB_SLOT_TAIL_RECORDS];
}

static void summarize(struct eb_slot *s, struct eb_slot_result *r, int with_profile);

static void checkpoint_free(struct eb_slot_result *r)
{
    free(r->classes);
    free(r->records);
    r->classes = NULL;
    r->records = NULL;
    r->n_classes = r->n_records = 0;
}

void eb_slot_checkpoint_request(struct eb_slot *s)
{
    atomic_store_explicit(&s->ckpt_ready, 0, memory_order_relaxed);
    atomic_store_explicit(&s->ckpt_req, 1, memory_order_release);
}

int eb_slot_checkpoint_ready(struct eb_slot *s)
{
    return atomic_load_explicit(&s->ckpt_ready, memory_order_acquire);
}

/* On the slot's thread, between two frames: every frame so far counted. */
static void checkpoint(struct eb_slot *s)
{
    atomic_store_explicit(&s->ckpt_req, 0, memory_order_relaxed);
    const size_t counted = s->n_counted, left = s->n_left_out;
    const uint64_t we = s->window_end_ns;
    const size_t n = atomic_load_explicit(&s->n_done, memory_order_relaxed);
    const struct eb_frame_record *last = n > 0 ? eb_slot_record(s, n - 1) : NULL;
    s->n_counted = n;
    s->n_left_out = 0;
    s->window_end_ns = last != NULL ? last->t_start_ns + last->stage_ns[EB_STAGE_E2E] : we;
    checkpoint_free(&s->ckpt);
    memset(&s->ckpt, 0, sizeof(s->ckpt));
    /* Through the fixed-size streams whatever the frame count: the same allocations at every
     * checkpoint, so the process's memory does not grow with them. */
    s->ckpt_summarizing = 1;
    summarize(s, &s->ckpt, 0);
    s->ckpt_summarizing = 0;
    s->n_counted = counted;
    s->n_left_out = left;
    s->window_end_ns = we;
    atomic_store_explicit(&s->ckpt_ready, 1, memory_order_release);
}

enum eb_status eb_slot_book(struct eb_slot *s, const struct eb_frame *fr,
                            const struct eb_frame_record *rec)
{
    size_t n = atomic_load_explicit(&s->n_done, memory_order_relaxed);
    if (n >= s->cap_records && n < EB_SLOT_EXACT_RECORDS) {
        size_t cap = s->cap_records ? s->cap_records * 2 : EB_SLOT_FIRST_RECORDS;
        if (cap > EB_SLOT_EXACT_RECORDS)
            cap = EB_SLOT_EXACT_RECORDS;
        struct eb_frame_record *r = realloc(s->records, cap * sizeof(*r));
        if (r == NULL)
            return slot_fail(s, eb_diag_fail(&s->diag, EB_ERR_NOMEM,
                                             "out of memory for %zu frame records", cap));
        s->records = r;
        s->cap_records = cap;
    }
    for (size_t d = 0; d < s->dets.count; d++) {
        int c = s->dets.items[d].cls;
        s->class_counts[c >= 0 && c < s->num_classes ? c : s->num_classes]++;
    }
    /* --data: an image seen again (the dataset looping) adds nothing. An image that decodes to
     * another size than the dataset says may not line up with its boxes (said once). */
    if (s->setup.accuracy != NULL) {
        const struct eb_dataset *ds = s->setup.accuracy->ds;
        if (fr->file_index >= 0 && (size_t)fr->file_index < ds->n_images) {
            const struct eb_dataset_image *im = &ds->images[fr->file_index];
            if (im->width > 0 && (im->width != fr->width || im->height != fr->height) &&
                s->size_mismatch++ == 0)
                eb_log_msg(s->setup.log, EB_LOG_WARN,
                           "image %s decodes to %dx%d but the dataset says %dx%d; its boxes may "
                           "not line up",
                           im->path, fr->width, fr->height, im->width, im->height);
        }
        enum eb_status st = eb_accuracy_add(s->setup.accuracy, fr->file_index, &s->dets, &s->diag);
        if (st != EB_OK)
            return slot_fail(s, st);
    }
    if ((int64_t)n < s->setup.save_images && s->setup.save_dir != NULL)
        save_image(s, fr, n);
    struct eb_frame_record *out;
    if (n < EB_SLOT_EXACT_RECORDS) {
        out = &s->records[n];
    } else {
        /* The ring's oldest record leaves it for the streaming statistics. */
        out = &s->tail[(n - EB_SLOT_EXACT_RECORDS) % EB_SLOT_TAIL_RECORDS];
        if (n - EB_SLOT_EXACT_RECORDS >= EB_SLOT_TAIL_RECORDS)
            fold_record(s->streams, out, s->fps);
    }
    *out = *rec;
    out->frame_index = fr->index;
    out->n_dets = (uint32_t)s->dets.count;
    /* Memory is sampled every frame, outside the timed stages. */
    uint64_t mem = monitored_bytes(s);
    out->mem_bytes = mem;
    if (mem > s->mem_peak)
        s->mem_peak = mem;
    s->violations += (uint64_t)eb_budget_check(&s->setup.budget, mem, s->name, (long long)fr->index,
                                               s->violations, s->setup.log);
    if (n < EB_SLOT_EXACT_RECORDS)
        fold_record(s->streams, out, s->fps);
    const double t_end_s =
        (double)(rec->t_start_ns + rec->stage_ns[EB_STAGE_E2E] - s->phase_start_ns) / 1e9;
    eb_stat_series_add(&s->streams->e2e_series, t_end_s, (double)rec->stage_ns[EB_STAGE_E2E] / 1e6);
    eb_stat_series_add(&s->streams->mem_series, t_end_s, (double)mem);
    atomic_store_explicit(&s->last_mem, mem, memory_order_relaxed);
    atomic_store_explicit(&s->recent_e2e_ns[n % EB_SLOT_RECENT], rec->stage_ns[EB_STAGE_E2E],
                          memory_order_relaxed);
    atomic_store_explicit(&s->n_done, n + 1, memory_order_release);
    if (atomic_load_explicit(&s->ckpt_req, memory_order_acquire))
        checkpoint(s);
    return EB_OK;
}

enum eb_status eb_slot_write_frames_csv(const struct eb_slot *s, const char *path,
                                        struct eb_diag *diag)
{
    FILE *fp = fopen(path, "w");
    if (fp == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s", path, strerror(errno));
    const size_t n = atomic_load_explicit(&s->n_done, memory_order_acquire);
    const double t0 = (double)s->phase_start_ns;
    fprintf(fp, "frame,start_ms,arrival_ms,read_ms,preprocess_ms,inference_ms,postprocess_ms,"
                "end_to_end_ms,latency_from_arrival_ms,detections,counted\n");
    for (size_t i = 0; i < n; i++) {
        const struct eb_frame_record *r = eb_slot_record(s, i);
        if (r == NULL)
            continue; /* a soak run's middle: in the streaming statistics only */
        fprintf(fp, "%lld,%.4f,", (long long)r->frame_index, ((double)r->t_start_ns - t0) / 1e6);
        if (s->fps > 0)
            fprintf(fp, "%.4f", ((double)r->t_arrival_ns - t0) / 1e6);
        for (int k = 0; k < EB_STAGE_COUNT; k++)
            fprintf(fp, ",%.4f", (double)r->stage_ns[k] / 1e6);
        fprintf(fp, ",%.4f,%u,%d\n", eb_frame_arrival_ms(r), r->n_dets, i < s->n_counted);
    }
    return eb_file_close(fp, path, diag);
}

static void summarize_stage(const struct eb_frame_record *recs, size_t n, enum eb_stage stage,
                            double *scratch, struct eb_stat_summary *out)
{
    for (size_t i = 0; i < n; i++)
        scratch[i] = (double)recs[i].stage_ns[stage] / 1e6;
    eb_stat_summarize_ms(scratch, n, out);
}

/*
 * --profile: the per-operator profile of the last measured pass, compared with the inference
 * stage of the same frames. When the backend has none or cannot read it (ort: its profile file),
 * profile.available stays 0 and profile_note says why (a report warning, also logged).
 */
static void summarize_profile(struct eb_slot *s, struct eb_slot_result *r)
{
    memset(&r->profile, 0, sizeof(r->profile));
    r->profile_note[0] = '\0';
    r->profile_requested = s->setup.backend_cfg.profile;
    if (!r->profile_requested || s->be == NULL || s->status != EB_SLOT_OK)
        return;
    struct eb_backend_profile prof;
    struct eb_diag d = {0};
    if (eb_backend_profile_get(s->be, &prof, &d) != EB_OK) {
        eb_advice_append(&d);
        if (snprintf(r->profile_note, sizeof(r->profile_note), "slot %s: --profile: %s", s->name,
                     d.msg) < 0)
            r->profile_note[0] = '\0';
        eb_log_msg(s->setup.log, EB_LOG_WARN, "%s", r->profile_note);
        return;
    }
    double infer_mean = r->stages[EB_STAGE_INFER].count > 0 ? r->stages[EB_STAGE_INFER].mean : NAN;
    eb_profile_result_build(&prof, infer_mean, &s->info.device, &r->profile);
    if (!r->profile.available)
        snprintf(r->profile_note, sizeof(r->profile_note),
                 "slot %s: --profile: no frame was profiled", s->name);
}

const char *eb_slot_model_precision(const struct eb_slot *s)
{
    return s->model_prec_known ? eb_model_precision_name(s->model_prec.kind) : "";
}

const char *eb_slot_compute_precision(const struct eb_slot *s)
{
    if (s->be == NULL)
        return "";
    if (s->info.device.precision[0] != '\0' || !s->model_prec_known)
        return s->info.device.precision;
    /* ort does not say: its ConvInteger/MatMulInteger kernels are integer ones, and it fuses
     * QDQ node units into int8 kernels. */
    const enum eb_model_precision k = s->model_prec.kind;
    return eb_model_precision_is_int8(k)  ? "int8"
           : k == EB_MODEL_PRECISION_FP16 ? "fp16"
           : k == EB_MODEL_PRECISION_FP32 ? "fp32"
                                          : "";
}

const char *eb_slot_qdq_path(const struct eb_slot *s)
{
    const char *q = s->info.qdq;
    return strcmp(q, "int8") == 0    ? "int8 kernels"
           : strcmp(q, "float") == 0 ? "fake-quant float"
           : strcmp(q, "strip") == 0 ? "stripped to float"
                                     : "";
}

/* The model's precision (its graph) beside the one the backend computed in. */
static void summarize_precision(const struct eb_slot *s, struct eb_slot_result *r)
{
    snprintf(r->model_precision, sizeof(r->model_precision), "%s", eb_slot_model_precision(s));
    if (s->model_prec_known)
        snprintf(r->model_precision_detail, sizeof(r->model_precision_detail), "%s",
                 s->model_prec.detail);
    snprintf(r->compute_precision, sizeof(r->compute_precision), "%s",
             eb_slot_compute_precision(s));
    snprintf(r->qdq_path, sizeof(r->qdq_path), "%s", eb_slot_qdq_path(s));
    snprintf(r->int8_nodes, sizeof(r->int8_nodes), "%s", s->be != NULL ? s->info.int8_nodes : "");
}

static void summarize_classes(struct eb_slot *s, struct eb_slot_result *r);
static void summarize_streamed(struct eb_slot *s, struct eb_slot_result *r, size_t n);

static void summarize(struct eb_slot *s, struct eb_slot_result *r, int with_profile)
{
    r->status = s->status;
    r->error = s->diag.status;
    snprintf(r->message, sizeof(r->message), "%s", s->diag.msg);
    snprintf(r->source, sizeof(r->source), "%s", s->setup.source_text ? s->setup.source_text : "");
    if (s->spec.path[0] != '\0' || s->spec.kind == EB_SOURCE_SYNTHETIC)
        eb_source_spec_format(&s->spec, r->source, sizeof(r->source));
    snprintf(r->model_path, sizeof(r->model_path), "%s",
             s->setup.model_label ? s->setup.model_label : "");
    if (s->setup.backend != NULL)
        snprintf(r->backend, sizeof(r->backend), "%s", s->setup.backend->name);
    snprintf(r->backend_version, sizeof(r->backend_version), "%s", s->probe.version);
    snprintf(r->backend_reason, sizeof(r->backend_reason), "%s", s->backend_reason);
    snprintf(r->device, sizeof(r->device), "%s", eb_device_name(s->setup.backend_cfg.device));
    snprintf(r->provider, sizeof(r->provider), "%s", s->info.provider);
    snprintf(r->engine_cache, sizeof(r->engine_cache), "%s", s->info.engine_cache);
    summarize_precision(s, r);
    if (s->pre_reason[0] != '\0') {
        snprintf(r->preprocess, sizeof(r->preprocess), "%s", s->gpu_pre ? "gpu" : "cpu");
        snprintf(r->preprocess_reason, sizeof(r->preprocess_reason), "%s", s->pre_reason);
    }
    r->drift_measured = s->drift_measured;
    snprintf(r->drift_note, sizeof(r->drift_note), "%s", s->drift_note);
    if (s->drift_measured) {
        r->drift_frames = s->drift.frames;
        r->drift_boxes_fp32 = s->drift.boxes_ref;
        r->drift_boxes_fp16 = s->drift.boxes_test;
        r->drift_boxes_matched = s->drift.boxes_matched;
        r->drift_max_abs = s->drift.max_abs;
        r->drift_mean_abs = s->drift.n_elems ? s->drift.sum_abs / (double)s->drift.n_elems : 0.0;
    }
    if (s->decode_reason[0] != '\0') {
        snprintf(r->decode, sizeof(r->decode), "%s", s->gpu_decode ? "gpu" : "cpu");
        snprintf(r->decode_reason, sizeof(r->decode_reason), "%s", s->decode_reason);
    }
    snprintf(r->input_dtype, sizeof(r->input_dtype), "%s",
             s->in_dtype ? eb_dtype_name(s->in_dtype) : "");
    r->input_w = s->in_w;
    r->input_h = s->in_h;
    r->input_c = s->in_c;
    snprintf(r->layout, sizeof(r->layout), "%s", s->head.kind ? eb_head_name(s->head.kind) : "");
    r->num_classes = s->head.kind ? s->num_classes : 0;
    if (s->head.kind) {
        snprintf(r->model_profile, sizeof(r->model_profile), "%s", s->profile.family);
        snprintf(r->profile_source, sizeof(r->profile_source), "%s", s->profile.source);
        snprintf(r->profile_why, sizeof(r->profile_why), "%s", s->profile.why);
        eb_profile_describe_pre(&s->profile, r->input_prep, sizeof(r->input_prep));
    }
    r->threads = s->setup.backend_cfg.threads;
    r->frames_warmup = s->warmup_done;
    r->warmup_s = (double)s->warmup_ns / 1e9;
    r->warmup_auto = s->setup.warmup == EB_WARMUP_AUTO;
    r->warmup_stable = s->warmup_stable;
    r->frames_skipped = s->src ? eb_source_skipped(s->src) : 0;
    r->source_network = s->spec.kind == EB_SOURCE_VIDEO && s->spec.network;
    struct eb_source_stream_stats ss;
    eb_source_stream_stats(s->src, &ss);
    r->source_reconnects = ss.reconnects;
    r->source_reconnect_attempts = ss.attempts;
    r->source_frames_lost = ss.frames_lost;
    r->source_outage_s = ss.outage_s;
    r->violations = s->violations;
    r->mem_peak_bytes = s->mem_peak;
    if (s->be != NULL) {
        struct eb_mem_usage mu;
        eb_backend_mem_usage(s->be, &mu);
        r->backend_host_bytes = mu.host_bytes;
        r->backend_device_peak_bytes = mu.device_peak_bytes;
        r->backend_device_measured_bytes = mu.device_measured_bytes;
    }

    const size_t n = s->n_counted;
    r->frames_measured = n;
    r->frames_left_out = s->n_left_out;
    r->others_cpu_pct = s->others_cpu_pct;
    r->source_loops = s->loops;
    r->records_capped = s->records_capped;
    r->frames_skipped += (int64_t)s->skipped_looped;
    r->fps_target = s->fps;
    r->queue = (uint64_t)s->setup.queue;
    r->frames_dropped = s->dropped;
    /* Drops are counted over the whole pass: against every frame that arrived in it. */
    const uint64_t arrived = n + s->n_left_out + s->dropped;
    r->drop_pct = s->fps > 0 && arrived > 0 ? 100.0 * (double)s->dropped / (double)arrived : 0.0;
    if (n == 0 || s->records == NULL)
        return;
    r->wall_s = (double)(s->window_end_ns - s->phase_start_ns) / 1e9;
    r->throughput_fps = r->wall_s > 0 ? (double)n / r->wall_s : 0;
    if (s->streams != NULL) {
        r->e2e_series = s->streams->e2e_series;
        r->mem_series = s->streams->mem_series;
        r->series_t0_ns = s->phase_start_ns;
    }
    if (n > EB_SLOT_EXACT_RECORDS || s->ckpt_summarizing) {
        summarize_streamed(s, r, n);
        if (with_profile)
            summarize_profile(s, r);
        summarize_classes(s, r);
        return;
    }
    double *scratch = malloc(n * sizeof(double));
    if (scratch != NULL) {
        for (int st = 0; st < EB_STAGE_COUNT; st++)
            summarize_stage(s->records, n, (enum eb_stage)st, scratch, &r->stages[st]);
        for (size_t i = 0; i < n; i++) {
            const struct eb_frame_record *rec = &s->records[i];
            scratch[i] = (double)(rec->stage_ns[EB_STAGE_PRE] + rec->stage_ns[EB_STAGE_INFER] +
                                  rec->stage_ns[EB_STAGE_POST]) /
                         1e6;
        }
        eb_stat_summarize_ms(scratch, n, &r->pipeline);
        for (size_t i = 0; i < n; i++) {
            scratch[i] = eb_frame_arrival_ms(&s->records[i]);
            r->deadline_misses += eb_frame_missed(scratch[i], s->fps);
        }
        eb_stat_summarize_ms(scratch, n, &r->latency_from_arrival);
        double *e2e = malloc(n * sizeof(double));
        if (e2e != NULL) {
            for (size_t i = 0; i < n; i++)
                e2e[i] = (double)s->records[i].stage_ns[EB_STAGE_E2E] / 1e6;
            eb_stat_drift(e2e, n, scratch, &r->steady);
            free(e2e);
        }
        free(scratch);
    }
    if (with_profile)
        summarize_profile(s, r);
    uint64_t total = 0;
    uint32_t mx = 0;
    for (size_t i = 0; i < n; i++) {
        total += s->records[i].n_dets;
        if (s->records[i].n_dets > mx)
            mx = s->records[i].n_dets;
    }
    r->dets_total = total;
    r->dets_per_frame_mean = (double)total / (double)n;
    r->dets_per_frame_max = mx;
    summarize_classes(s, r);
    /* The result takes its own copy of the raw records. */
    r->records = malloc(n * sizeof(*r->records));
    if (r->records != NULL) {
        memcpy(r->records, s->records, n * sizeof(*r->records));
        r->n_records = n;
    }
}

static void summarize_classes(struct eb_slot *s, struct eb_slot_result *r)
{
    size_t n_cls = 0;
    for (int c = 0; c <= s->num_classes; c++)
        n_cls += s->class_counts[c] > 0;
    r->classes = calloc(n_cls ? n_cls : 1, sizeof(*r->classes));
    if (r->classes != NULL) {
        size_t k = 0;
        for (int c = 0; c <= s->num_classes; c++) {
            if (s->class_counts[c] == 0)
                continue;
            struct eb_class_count *cc = &r->classes[k++];
            cc->cls = c < s->num_classes ? c : -1;
            cc->count = s->class_counts[c];
            if (c < s->num_classes && (size_t)c < s->info.n_class_names)
                snprintf(cc->name, sizeof(cc->name), "%s", s->info.class_names[c]);
            else if (c < s->num_classes)
                snprintf(cc->name, sizeof(cc->name), "class%d", c);
            else
                snprintf(cc->name, sizeof(cc->name), "out_of_range");
        }
        r->n_classes = k;
    }
}

/*
 * A soak run's statistics: more than EB_SLOT_EXACT_RECORDS counted frames. The streams hold
 * every record that left the tail ring (and the exact prefix); a copy of them takes the ring's
 * counted records, so a second summary of the same pass sees the same figures. The result keeps
 * the exact prefix as its raw records (stats_streamed says so).
 */
static void summarize_free(struct eb_slot_streams *st, double *scratch)
{
    free(scratch);
    free(st);
}

static void summarize_streamed(struct eb_slot *s, struct eb_slot_result *r, size_t n)
{
    struct eb_slot_streams *st = malloc(sizeof(*st));
    double *scratch = malloc(EB_STAT_RESERVOIR * sizeof(double));
    if (st != NULL && scratch != NULL) {
        *st = *s->streams;
        const size_t done = atomic_load_explicit(&s->n_done, memory_order_acquire);
        size_t first = done > EB_SLOT_TAIL_RECORDS ? done - EB_SLOT_TAIL_RECORDS : 0;
        if (first < EB_SLOT_EXACT_RECORDS)
            first = EB_SLOT_EXACT_RECORDS;
        for (size_t i = first; i < n; i++)
            fold_record(st, eb_slot_record(s, i), s->fps);
        for (int k = 0; k < EB_STAGE_COUNT; k++)
            eb_stat_stream_summarize(&st->s[k], scratch, &r->stages[k]);
        eb_stat_stream_summarize(&st->s[EB_SLOT_SERIES_PIPELINE], scratch, &r->pipeline);
        eb_stat_stream_summarize(&st->s[EB_SLOT_SERIES_ARRIVAL], scratch, &r->latency_from_arrival);
        eb_stat_stream_drift(&st->s[EB_STAGE_E2E], scratch, &r->steady);
        r->deadline_misses = st->deadline_misses;
        r->dets_total = st->dets_total;
        r->dets_per_frame_mean = (double)st->dets_total / (double)n;
        r->dets_per_frame_max = st->dets_max;
        r->stats_streamed = n > EB_SLOT_EXACT_RECORDS;
        /* A checkpoint keeps no raw records (no allocation that grows with the pass). */
        if (s->ckpt_summarizing)
            return summarize_free(st, scratch);
        r->records = malloc(EB_SLOT_EXACT_RECORDS * sizeof(*r->records));
        if (r->records != NULL) {
            memcpy(r->records, s->records, EB_SLOT_EXACT_RECORDS * sizeof(*r->records));
            r->n_records = EB_SLOT_EXACT_RECORDS;
        }
    }
    summarize_free(st, scratch);
}

void eb_slot_summarize(struct eb_slot *s, struct eb_slot_result *r)
{
    summarize(s, r, 1);
}

void eb_slot_summarize_solo(struct eb_slot *s, struct eb_slot_result *r)
{
    summarize(s, r, 0);
}

void eb_slot_fini(struct eb_slot *s)
{
    /* The backend first: it takes its page lock off the source's ring (frames_pinned). */
    eb_backend_destroy(s->be);
    s->be = NULL;
    eb_source_destroy(s->src);
    s->src = NULL;
    eb_yolo_scratch_fini(&s->scratch);
    if (s->input != s->input_f32)
        free(s->input);
    free(s->input_f32);
    for (size_t k = 0; k < EB_BACKEND_MAX_IO; k++) {
        free(s->out_f32[k]);
        s->out_f32[k] = NULL;
    }
    eb_profile_fini(&s->profile);
    free(s->dets.items);
    free(s->class_counts);
    free(s->records);
    checkpoint_free(&s->ckpt);
    free(s->tail);
    free(s->streams);
    s->tail = NULL;
    s->streams = NULL;
    s->input = s->input_f32 = NULL;
    s->dets.items = NULL;
    s->class_counts = NULL;
    s->records = NULL;
}
