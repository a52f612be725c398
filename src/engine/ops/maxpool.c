/* MaxPool (float32, 2-D; no Indices output; ceil_mode and dilations supported). */
#include <string.h>

#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

struct pool_params {
    int64_t kernel[2], strides[2], dilations[2], pads[4];
    int64_t ceil_mode;
    struct eb_pool2d_desc d; /* filled by infer_shape */
};

static enum eb_status check_maxpool(struct eb_op_ctx *ctx)
{
    struct pool_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    int64_t v[8];
    size_t n;
    enum eb_status st;
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    if (ctx->src->n_outputs > 1)
        return eb_op_unsupported(ctx, "the Indices output");
    if (strcmp(eb_op_attr_str(ctx, "auto_pad", "NOTSET"), "NOTSET") != 0 &&
        strcmp(eb_op_attr_str(ctx, "auto_pad", "NOTSET"), "VALID") != 0)
        return eb_op_unsupported(ctx, "auto_pad '%s'", eb_op_attr_str(ctx, "auto_pad", ""));
    if ((st = eb_op_attr_ints(ctx, "kernel_shape", v, 8, &n)) != EB_OK)
        return st;
    if (n != 2)
        return eb_op_unsupported(ctx, "a %zu-D kernel", n);
    memcpy(p->kernel, v, sizeof(p->kernel));
    p->strides[0] = p->strides[1] = p->dilations[0] = p->dilations[1] = 1;
    if ((st = eb_op_attr_ints(ctx, "strides", v, 8, &n)) != EB_OK)
        return st;
    if (n == 2)
        memcpy(p->strides, v, sizeof(p->strides));
    if ((st = eb_op_attr_ints(ctx, "dilations", v, 8, &n)) != EB_OK)
        return st;
    if (n == 2)
        memcpy(p->dilations, v, sizeof(p->dilations));
    if ((st = eb_op_attr_ints(ctx, "pads", v, 8, &n)) != EB_OK)
        return st;
    if (n == 4)
        memcpy(p->pads, v, sizeof(p->pads));
    p->ceil_mode = eb_op_attr_int(ctx, "ceil_mode", 0);
    for (int i = 0; i < 2; i++)
        if (p->kernel[i] < 1 || p->strides[i] < 1 || p->dilations[i] < 1 ||
            p->kernel[i] > 1 << 16 || p->strides[i] > 1 << 16 || p->dilations[i] > 1 << 16)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "kernel/stride/dilation out of range");
    for (int i = 0; i < 4; i++)
        if (p->pads[i] < 0 || p->pads[i] >= p->kernel[i % 2])
            return eb_op_fail(ctx, EB_ERR_FORMAT, "pad %lld", (long long)p->pads[i]);
    ctx->n->params = p;
    return EB_OK;
}

static enum eb_status infer_maxpool(struct eb_op_ctx *ctx)
{
    struct pool_params *p = ctx->n->params;
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    enum eb_status st = eb_op_want_dtype(ctx, 0, EB_DTYPE_F32);
    if (st != EB_OK)
        return st;
    if (x->rank != 4)
        return eb_op_unsupported(ctx, "a rank-%d input", x->rank);
    struct eb_pool2d_desc *d = &p->d;
    d->n = x->shape[0];
    d->c = x->shape[1];
    d->ih = x->shape[2];
    d->iw = x->shape[3];
    d->kh = p->kernel[0];
    d->kw = p->kernel[1];
    d->stride_h = p->strides[0];
    d->stride_w = p->strides[1];
    d->dil_h = p->dilations[0];
    d->dil_w = p->dilations[1];
    d->pad_t = p->pads[0];
    d->pad_l = p->pads[1];
    int64_t in[2] = {d->ih, d->iw}, out[2];
    for (int i = 0; i < 2; i++) {
        int64_t e = in[i] + p->pads[i] + p->pads[i + 2] - (p->kernel[i] - 1) * p->dilations[i] - 1;
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

static void exec_maxpool(const struct eb_graph *g, const struct eb_ir_node *n)
{
    const struct pool_params *p = n->params;
    eb_cpu_maxpool2d_f32__ref(&p->d, eb_op_in(g, n, 0)->data, eb_op_out(g, n, 0)->data);
}

const struct eb_op_def eb_op_maxpool = {
    .onnx_name = "MaxPool",
    .since_opset = 1,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 2,
    .check = check_maxpool,
    .infer_shape = infer_maxpool,
    .exec = exec_maxpool,
};
