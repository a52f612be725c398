#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/backend.h"

struct eb_backend {
    const struct eb_backend_ops *ops;
    void *priv;
};

const char *eb_device_name(enum eb_device d)
{
    switch (d) {
    case EB_DEVICE_CPU: return "cpu";
    case EB_DEVICE_CUDA: return "cuda";
    case EB_DEVICE_TENSORRT: return "tensorrt";
    }
    return "unknown";
}

const char *eb_limit_type_name(enum eb_limit_type t)
{
    switch (t) {
    case EB_LIMIT_UNAVAILABLE: return "unavailable";
    case EB_LIMIT_SOFT: return "soft";
    case EB_LIMIT_HARD: return "hard";
    }
    return "unknown";
}

enum eb_status eb_backend_create(const struct eb_backend_ops *ops,
                                 const struct eb_backend_config *cfg, struct eb_backend **be_out,
                                 struct eb_diag *diag)
{
    if (ops == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "no such backend");
    if (ops->abi != EB_BACKEND_ABI)
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "backend %s has ABI %u, this build expects %u; rebuild it", ops->name,
                            ops->abi, EB_BACKEND_ABI);
    struct eb_backend *be = calloc(1, sizeof(*be));
    if (be == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory creating backend %s", ops->name);
    be->ops = ops;
    be->priv = calloc(1, ops->priv_size ? ops->priv_size : 1);
    if (be->priv == NULL) {
        free(be);
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory creating backend %s", ops->name);
    }
    enum eb_status st = ops->open(be->priv, cfg, diag);
    if (st != EB_OK) {
        eb_backend_destroy(be);
        return st;
    }
    *be_out = be;
    return EB_OK;
}

void eb_backend_destroy(struct eb_backend *be)
{
    if (be == NULL)
        return;
    if (be->priv != NULL)
        be->ops->close(be->priv);
    free(be->priv);
    free(be);
}

const struct eb_backend_ops *eb_backend_ops_of(const struct eb_backend *be)
{
    return be->ops;
}

enum eb_status eb_backend_load(struct eb_backend *be, const struct eb_model_spec *spec,
                               struct eb_model_info *info_out, struct eb_diag *diag)
{
    return be->ops->load(be->priv, spec, info_out, diag);
}

enum eb_status eb_backend_infer(struct eb_backend *be, const struct eb_tensor *in, size_t n_in,
                                struct eb_tensor *out, size_t n_out,
                                struct eb_infer_timing *timing_out, struct eb_diag *diag)
{
    return be->ops->infer(be->priv, in, n_in, out, n_out, timing_out, diag);
}

int eb_backend_frame_input(struct eb_backend *be, char *why, size_t why_size)
{
    if (be->ops->frame_input != NULL && be->ops->infer_frame != NULL)
        return be->ops->frame_input(be->priv, why, why_size);
    if (why != NULL && why_size > 0)
        snprintf(why, why_size, "backend %s preprocesses on the host only", be->ops->name);
    return 0;
}

enum eb_status eb_backend_infer_frame(struct eb_backend *be, const struct eb_backend_frame *frame,
                                      struct eb_tensor *out, size_t n_out,
                                      struct eb_infer_timing *timing_out, struct eb_diag *diag)
{
    char why[200];
    if (!eb_backend_frame_input(be, why, sizeof(why)))
        return eb_diag_fail_advise(diag, EB_ERR_UNSUPPORTED, EB_ADVICE_PREPROCESS_CPU, "%s", why);
    return be->ops->infer_frame(be->priv, frame, out, n_out, timing_out, diag);
}

enum eb_status eb_backend_frame_buffer(struct eb_backend *be, int width, int height,
                                       uint8_t **buf_out, struct eb_diag *diag)
{
    char why[200];
    if (be->ops->frame_buffer == NULL)
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "backend %s has no frame buffer of its own",
                            be->ops->name);
    if (!eb_backend_frame_input(be, why, sizeof(why)))
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "%s", why);
    return be->ops->frame_buffer(be->priv, width, height, buf_out, diag);
}

enum eb_status eb_backend_pin_frames(struct eb_backend *be, uint8_t *base, size_t bytes,
                                     struct eb_diag *diag)
{
    char why[200];
    if (be->ops->pin_frames == NULL)
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "backend %s does not page-lock frames",
                            be->ops->name);
    if (!eb_backend_frame_input(be, why, sizeof(why)))
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "%s", why);
    return be->ops->pin_frames(be->priv, base, bytes, diag);
}

enum eb_status eb_backend_reduce_head(struct eb_backend *be, int output, float conf,
                                      struct eb_diag *diag)
{
    if (be->ops->reduce_head == NULL || be->ops->head_rows == NULL)
        return eb_diag_fail_advise(diag, EB_ERR_UNSUPPORTED, EB_ADVICE_DECODE_CPU,
                                   "backend %s decodes on the host only", be->ops->name);
    return be->ops->reduce_head(be->priv, output, conf, diag);
}

size_t eb_backend_head_rows(struct eb_backend *be, struct eb_anchor_row **rows_out)
{
    *rows_out = NULL;
    return be->ops->head_rows != NULL ? be->ops->head_rows(be->priv, rows_out) : 0;
}

void eb_backend_mem_usage(struct eb_backend *be, struct eb_mem_usage *usage_out)
{
    memset(usage_out, 0, sizeof(*usage_out));
    if (be->ops->mem_usage != NULL && be->ops->mem_usage(be->priv, usage_out) != EB_OK)
        memset(usage_out, 0, sizeof(*usage_out));
}

enum eb_status eb_backend_profile_get(struct eb_backend *be, struct eb_backend_profile *profile_out,
                                      struct eb_diag *diag)
{
    memset(profile_out, 0, sizeof(*profile_out));
    struct eb_diag d = {0};
    enum eb_status st = EB_ERR_UNSUPPORTED;
    if (be->ops->profile != NULL)
        st = be->ops->profile(be->priv, profile_out, &d);
    if (st == EB_OK)
        return EB_OK;
    memset(profile_out, 0, sizeof(*profile_out));
    if (d.status != EB_OK) /* the backend said why */
        return eb_diag_fail_advise(diag, st, d.advice, "%s", d.msg);
    return eb_diag_fail_advise(diag, st, EB_ADVICE_PROFILE_NATIVE,
                               "backend %s has no per-operator profile%s", be->ops->name,
                               be->ops->profile != NULL ? " (profiling is off)" : "");
}

void eb_backend_profile_reset(struct eb_backend *be)
{
    if (be->ops->profile_reset != NULL)
        be->ops->profile_reset(be->priv);
}

enum eb_status eb_backend_keep_outputs(struct eb_backend *be, const unsigned char *keep, size_t n,
                                       struct eb_diag *diag)
{
    return be->ops->keep_outputs != NULL ? be->ops->keep_outputs(be->priv, keep, n, diag) : EB_OK;
}

enum eb_status eb_backend_profile_runs(struct eb_backend *be, const struct eb_run_range *ranges,
                                       size_t n_ranges, struct eb_backend_profile *profile_out,
                                       struct eb_diag *diag)
{
    memset(profile_out, 0, sizeof(*profile_out));
    struct eb_diag d = {0};
    enum eb_status st = EB_ERR_UNSUPPORTED;
    if (be->ops->profile_runs != NULL)
        st = be->ops->profile_runs(be->priv, ranges, n_ranges, profile_out, &d);
    if (st == EB_OK)
        return EB_OK;
    memset(profile_out, 0, sizeof(*profile_out));
    if (d.status != EB_OK)
        return eb_diag_fail_advise(diag, st, d.advice, "%s", d.msg);
    return eb_diag_fail(diag, st, "backend %s has no per-operator profile of chosen runs%s",
                        be->ops->name, be->ops->profile_runs != NULL ? " (profiling is off)" : "");
}
