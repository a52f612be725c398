/*
 * AveragePool (float32, 2-D; pads, strides, count_include_pad, ceil_mode; no auto_pad SAME_*,
 * no dilations) and GlobalAveragePool (float32, any rank ≥ 3).
 */
#include <string.h>

#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

struct avgpool_params {
    int64_t kernel[2], strides[2], pads[4];
    int64_t ceil_mode, count_include_pad;
    struct eb_pool2d_desc d; /* filled by infer_shape */
};

static enum eb_status check_avgpool(struct eb_op_ctx *ctx)
{
    struct avgpool_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    int64_t v[8];
    size_t n;
    enum eb_status st;
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    const char *auto_pad = eb_op_attr_str(ctx, "auto_pad", "NOTSET");
    if (strcmp(auto_pad, "NOTSET") != 0 && strcmp(auto_pad, "VALID") != 0)
        return eb_op_unsupported(ctx, "auto_pad '%s'", auto_pad);
    if ((st = eb_op_attr_ints(ctx, "kernel_shape", v, 8, &n)) != EB_OK)
        return st;
    if (n != 2)
        return eb_op_unsupported(ctx, "a %zu-D kernel", n);
    memcpy(p->kernel, v, sizeof(p->kernel));
    p->strides[0] = p->strides[1] = 1;
    if ((st = eb_op_attr_ints(ctx, "strides", v, 8, &n)) != EB_OK)
        return st;
    if (n == 2)
        memcpy(p->strides, v, sizeof(p->strides));
    else if (n != 0)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "%zu strides for a 2-D kernel", n);
    if ((st = eb_op_attr_ints(ctx, "dilations", v, 8, &n)) != EB_OK)
        return st;
    for (size_t i = 0; i < n; i++)
        if (v[i] != 1)
            return eb_op_unsupported(ctx, "dilation %lld", (long long)v[i]);
    memset(p->pads, 0, sizeof(p->pads));
    if ((st = eb_op_attr_ints(ctx, "pads", v, 8, &n)) != EB_OK)
        return st;
    if (n == 4)
        memcpy(p->pads, v, sizeof(p->pads));
    else if (n != 0)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "%zu pads for a 2-D kernel", n);
    p->ceil_mode = eb_op_attr_int(ctx, "ceil_mode", 0);
    p->count_include_pad = eb_op_attr_int(ctx, "count_include_pad", 0);
    if ((p->ceil_mode != 0 && p->ceil_mode != 1) ||
        (p->count_include_pad != 0 && p->count_include_pad != 1))
        return eb_op_fail(ctx, EB_ERR_FORMAT, "ceil_mode/count_include_pad must be 0 or 1");
    for (int i = 0; i < 2; i++)
        if (p->kernel[i] < 1 || p->strides[i] < 1 || p->kernel[i] > 1 << 16 ||
            p->strides[i] > 1 << 16)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "kernel/stride out of range");
    for (int i = 0; i < 4; i++)
        if (p->pads[i] < 0 || p->pads[i] >= p->kernel[i % 2])
            return eb_op_fail(ctx, EB_ERR_FORMAT, "pad %lld", (long long)p->pads[i]);
    ctx->n->params = p;
    return EB_OK;
}

static enum eb_status infer_avgpool(struct eb_op_ctx *ctx)
{
    struct avgpool_params *p = ctx->n->params;
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    enum eb_status st = eb_op_want_dtype(ctx, 0, EB_DTYPE_F32);
    if (st != EB_OK)
        return st;
    if (x->rank != 4)
        return eb_op_unsupported(ctx, "a rank-%d input", x->rank);
    struct eb_pool2d_desc *d = &p->d;
    *d = (struct eb_pool2d_desc){
        .n = x->shape[0],
        .c = x->shape[1],
        .ih = x->shape[2],
        .iw = x->shape[3],
        .kh = p->kernel[0],
        .kw = p->kernel[1],
        .stride_h = p->strides[0],
        .stride_w = p->strides[1],
        .dil_h = 1,
        .dil_w = 1,
        .pad_t = p->pads[0],
        .pad_l = p->pads[1],
        .pad_b = p->pads[2],
        .pad_r = p->pads[3],
    };
    int64_t in[2] = {d->ih, d->iw}, out[2];
    for (int i = 0; i < 2; i++) {
        int64_t e = in[i] + p->pads[i] + p->pads[i + 2] - p->kernel[i];
        if (e < 0)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "the kernel is larger than the padded input");
        out[i] = (p->ceil_mode ? (e + p->strides[i] - 1) / p->strides[i] : e / p->strides[i]) + 1;
        /* ceil_mode: the last window must start inside the input or left padding. */
        if (p->ceil_mode && (out[i] - 1) * p->strides[i] >= in[i] + p->pads[i])
            out[i]--;
    }
    d->oh = out[0];
    d->ow = out[1];
    int64_t shape[4] = {d->n, d->c, d->oh, d->ow};
    return eb_op_set_out(ctx, 0, EB_DTYPE_F32, 4, shape);
}

static void exec_avgpool(const struct eb_graph *g, const struct eb_ir_node *n)
{
    const struct avgpool_params *p = n->params;
    eb_cpu_avgpool2d_f32__ref(&p->d, (int)p->count_include_pad, eb_op_in(g, n, 0)->data,
                              eb_op_out(g, n, 0)->data);
}

const struct eb_op_def eb_op_average_pool = {
    .onnx_name = "AveragePool",
    .since_opset = 7,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 1,
    .check = check_avgpool,
    .infer_shape = infer_avgpool,
    .exec = exec_avgpool,
};

static enum eb_status check_none(struct eb_op_ctx *ctx)
{
    (void)ctx;
    return EB_OK;
}

static enum eb_status infer_global_avgpool(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    enum eb_status st = eb_op_want_dtype(ctx, 0, EB_DTYPE_F32);
    if (st != EB_OK)
        return st;
    if (x->rank < 3)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "a rank-%d input", x->rank);
    int64_t shape[EB_MAX_RANK];
    for (int d = 0; d < x->rank; d++)
        shape[d] = d < 2 ? x->shape[d] : 1;
    return eb_op_set_out(ctx, 0, EB_DTYPE_F32, x->rank, shape);
}

static void exec_global_avgpool(const struct eb_graph *g, const struct eb_ir_node *n)
{
    const struct eb_ir_value *x = eb_op_in(g, n, 0);
    const int64_t outer = x->shape[0] * x->shape[1];
    eb_cpu_global_avgpool_f32__ref(outer, outer > 0 ? x->numel / outer : 0, x->data,
                                   eb_op_out(g, n, 0)->data);
}

const struct eb_op_def eb_op_global_average_pool = {
    .onnx_name = "GlobalAveragePool",
    .since_opset = 1,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 1,
    .check = check_none,
    .infer_shape = infer_global_avgpool,
    .exec = exec_global_avgpool,
};
