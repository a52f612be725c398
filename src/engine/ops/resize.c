/*
 * Resize (float32), scales or sizes from constant inputs, as ONNX Runtime computes it:
 *   - mode nearest on any rank, nearest modes floor, ceil, round_prefer_floor, round_prefer_ceil;
 *   - mode linear on 2-D tensors and on 4-D NCHW tensors that keep N and C (bilinear on H, W);
 *   - coordinate modes asymmetric, half_pixel, pytorch_half_pixel, align_corners,
 *     tf_half_pixel_for_nn and half_pixel_symmetric.
 * Everything else (cubic, tf_crop_and_resize, antialias, exclude_outside, axes,
 * keep_aspect_ratio_policy other than stretch, linear over other ranks or over N or C) is a
 * load-time error.
 */
#include <string.h>

#include "engine/cpu/eltwise.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ops/fuse_access.h"
#include "engine/ops/op.h"

struct resize_params {
    int linear; /* mode linear (else nearest) */
    enum eb_resize_coord coord;
    enum eb_resize_round rnd;
    float scales[EB_MAX_RANK];
};

static enum eb_status check_resize(struct eb_op_ctx *ctx)
{
    struct resize_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    const char *mode = eb_op_attr_str(ctx, "mode", "nearest");
    const char *coord = eb_op_attr_str(ctx, "coordinate_transformation_mode", "half_pixel");
    const char *nm = eb_op_attr_str(ctx, "nearest_mode", "round_prefer_floor");
    p->linear = strcmp(mode, "linear") == 0;
    if (!p->linear && strcmp(mode, "nearest") != 0)
        return eb_op_unsupported(ctx, "mode '%s'", mode);
    if (ctx->g->opset < 11)
        coord = "asymmetric"; /* opset 10 has no coordinate modes */
    if (strcmp(coord, "asymmetric") == 0)
        p->coord = EB_RESIZE_ASYMMETRIC;
    else if (strcmp(coord, "half_pixel") == 0)
        p->coord = EB_RESIZE_HALF_PIXEL;
    else if (strcmp(coord, "pytorch_half_pixel") == 0)
        p->coord = EB_RESIZE_PYTORCH_HALF_PIXEL;
    else if (strcmp(coord, "align_corners") == 0)
        p->coord = EB_RESIZE_ALIGN_CORNERS;
    else if (strcmp(coord, "tf_half_pixel_for_nn") == 0)
        p->coord = EB_RESIZE_TF_HALF_PIXEL_FOR_NN;
    else if (strcmp(coord, "half_pixel_symmetric") == 0)
        p->coord = EB_RESIZE_HALF_PIXEL_SYMMETRIC;
    else
        return eb_op_unsupported(ctx, "coordinate_transformation_mode '%s'", coord);
    if (ctx->g->opset < 11 || p->linear)
        nm = "floor"; /* linear has no nearest_mode */
    if (strcmp(nm, "round_prefer_floor") == 0)
        p->rnd = EB_RESIZE_ROUND_PREFER_FLOOR;
    else if (strcmp(nm, "round_prefer_ceil") == 0)
        p->rnd = EB_RESIZE_ROUND_PREFER_CEIL;
    else if (strcmp(nm, "floor") == 0)
        p->rnd = EB_RESIZE_FLOOR;
    else if (strcmp(nm, "ceil") == 0)
        p->rnd = EB_RESIZE_CEIL;
    else
        return eb_op_unsupported(ctx, "nearest_mode '%s'", nm);
    if (eb_op_attr_int(ctx, "antialias", 0) != 0)
        return eb_op_unsupported(ctx, "antialias");
    if (eb_op_attr_int(ctx, "exclude_outside", 0) != 0)
        return eb_op_unsupported(ctx, "exclude_outside");
    if (eb_onnx_node_attr(ctx->src, "axes") != NULL)
        return eb_op_unsupported(ctx, "attribute 'axes'");
    const char *kar = eb_op_attr_str(ctx, "keep_aspect_ratio_policy", "stretch");
    if (strcmp(kar, "stretch") != 0)
        return eb_op_unsupported(ctx, "keep_aspect_ratio_policy '%s'", kar);
    ctx->n->params = p;
    return EB_OK;
}

static enum eb_status infer_resize(struct eb_op_ctx *ctx)
{
    struct resize_params *p = ctx->n->params;
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    const int scales_at = ctx->g->opset < 11 ? 1 : 2;
    const struct eb_ir_value *sc = eb_op_in(ctx->g, ctx->n, scales_at);
    const struct eb_ir_value *sz = ctx->g->opset < 11 ? NULL : eb_op_in(ctx->g, ctx->n, 3);
    int64_t shape[EB_MAX_RANK];
    enum eb_status st = eb_op_want_dtype(ctx, 0, EB_DTYPE_F32);
    if (st != EB_OK)
        return st;
    if (x->rank < 1)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "a scalar input");
    if (sc != NULL && sc->numel > 0) {
        if (!sc->is_const || sc->dtype != EB_DTYPE_F32)
            return eb_op_unsupported(ctx, "non-constant or non-float32 scales");
        if (sc->numel != x->rank)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "%lld scales for rank %d", (long long)sc->numel,
                              x->rank);
        for (int d = 0; d < x->rank; d++) {
            float s = ((const float *)sc->data)[d];
            if (!(s > 0.0f) || s > 65536.0f)
                return eb_op_fail(ctx, EB_ERR_FORMAT, "scale %g", (double)s);
            p->scales[d] = s;
            shape[d] = (int64_t)(s * (float)x->shape[d]); /* in float, as ONNX Runtime */
        }
    } else if (sz != NULL) {
        int64_t sizes[EB_MAX_RANK];
        size_t n;
        if ((st = eb_op_const_ints(ctx, 3, sizes, EB_MAX_RANK, &n)) != EB_OK)
            return st;
        if ((int)n != x->rank)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "%zu sizes for rank %d", n, x->rank);
        for (int d = 0; d < x->rank; d++) {
            if (sizes[d] < 0 || (x->shape[d] == 0 && sizes[d] != 0))
                return eb_op_fail(ctx, EB_ERR_FORMAT, "size %lld", (long long)sizes[d]);
            shape[d] = sizes[d];
            p->scales[d] = x->shape[d] > 0 ? (float)sizes[d] / (float)x->shape[d] : 1.0f;
        }
    } else {
        return eb_op_fail(ctx, EB_ERR_FORMAT, "neither scales nor sizes is given");
    }
    /* ONNX Runtime's linear: bilinear on 2-D, or on H and W of 4-D with N and C kept. */
    if (p->linear && x->rank != 2 && x->rank != 4)
        return eb_op_unsupported(ctx, "mode 'linear' on a %d-D input", x->rank);
    if (p->linear && x->rank == 4 && (shape[0] != x->shape[0] || shape[1] != x->shape[1]))
        return eb_op_unsupported(ctx, "mode 'linear' resizing N or C of a 4-D input");
    return eb_op_set_out(ctx, 0, EB_DTYPE_F32, x->rank, shape);
}

static void exec_resize(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct resize_params *p = n->params;
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *y = eb_op_out(g, n, 0);
    if (y->numel == 0 || x->numel == 0)
        return;
    if (x->blocked) { /* channel-blocked (the layout pass; eb_op__resize_cl_ok) */
        eb_cpu_upsample_f32_cl(ex->cpu, x->shape[0] * (x->shape[1] / x->blocked), x->shape[2],
                               x->shape[3], y->shape[2] / x->shape[2], y->shape[3] / x->shape[3],
                               x->blocked, x->data, y->data);
        return;
    }
    if (p->linear) {
        const int r = x->rank;
        eb_cpu_resize_linear_f32(ex->cpu, r == 4 ? x->shape[0] * x->shape[1] : 1, x->shape[r - 2],
                                 x->shape[r - 1], y->shape[r - 2], y->shape[r - 1],
                                 p->scales[r - 2], p->scales[r - 1], p->coord, x->data, y->data);
        return;
    }
    eb_cpu_resize_nearest_f32(ex->cpu, x->rank, x->shape, x->data, y->shape, p->scales, p->coord,
                              p->rnd, y->data);
}

int eb_op__resize_cl_ok(const struct eb_graph *g, const struct eb_ir_node *n)
{
    if (n->op != &eb_op_resize || n->params == NULL || n->n_out != 1)
        return 0;
    const struct resize_params *p = n->params;
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *y = eb_op_out(g, n, 0);
    if (p->linear || x->rank != 4 || y->rank != 4)
        return 0;
    for (int d = 0; d < 4; d++) {
        const int64_t in = x->shape[d], out = y->shape[d];
        const int64_t f = in > 0 && out % in == 0 ? out / in : 0;
        if (f < 1 || (d < 2 && f != 1))
            return 0;
        for (int64_t j = 0; j < out; j++)
            if (eb_cpu_resize_nearest_index(j, in, out, p->scales[d], p->coord, p->rnd) != j / f)
                return 0;
    }
    return 1;
}

/* Integer-factor nearest upsampling of a 4-D tensor only (YOLO necks); anything else, linear
 * included, has no CUDA kernel: it runs on the CPU in fp32 and is refused in fp16. */
static int describe_resize(const struct eb_graph *g, const struct eb_ir_node *n,
                           struct eb_op_desc *d)
{
    if (!eb_op__resize_cl_ok(g, n))
        return 0;
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *y = eb_op_out(g, n, 0);
    d->kind = EB_DESC_UPSAMPLE;
    d->fh = y->shape[2] / x->shape[2];
    d->fw = y->shape[3] / x->shape[3];
    return 1;
}

const struct eb_op_def eb_op_resize = {
    .onnx_name = "Resize",
    .since_opset = 10,
    .min_inputs = 1,
    .max_inputs = 4,
    .optional_inputs = EB_OP_OPTIONAL(1) | EB_OP_OPTIONAL(2) | EB_OP_OPTIONAL(3),
    .min_outputs = 1,
    .max_outputs = 1,
    .check = check_resize,
    .infer_shape = infer_resize,
    .exec = exec_resize,
    .describe = describe_resize,
};
