/*
 * What MaxPool and AveragePool share: their 2-D window attributes (kernel_shape, strides,
 * dilations, pads, ceil_mode, auto_pad NOTSET/VALID) and the output geometry they imply.
 */
#include <string.h>

#include "engine/ops/op.h"

enum eb_status eb_op__pool_attrs(struct eb_op_ctx *ctx, int allow_dilation,
                                 struct eb_op_pool_attrs *a)
{
    int64_t v[8];
    size_t n;
    enum eb_status st;
    const char *auto_pad = eb_op_attr_str(ctx, "auto_pad", "NOTSET");
    if (strcmp(auto_pad, "NOTSET") != 0 && strcmp(auto_pad, "VALID") != 0)
        return eb_op_unsupported(ctx, "auto_pad '%s'", auto_pad);
    if ((st = eb_op_attr_ints(ctx, "kernel_shape", v, 8, &n)) != EB_OK)
        return st;
    if (n != 2)
        return eb_op_unsupported(ctx, "a %zu-D kernel", n);
    memcpy(a->kernel, v, sizeof(a->kernel));
    a->strides[0] = a->strides[1] = a->dilations[0] = a->dilations[1] = 1;
    if ((st = eb_op_attr_ints(ctx, "strides", v, 8, &n)) != EB_OK)
        return st;
    if (n == 2)
        memcpy(a->strides, v, sizeof(a->strides));
    else if (n != 0)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "%zu strides for a 2-D kernel", n);
    if ((st = eb_op_attr_ints(ctx, "dilations", v, 8, &n)) != EB_OK)
        return st;
    if (n == 2 && allow_dilation)
        memcpy(a->dilations, v, sizeof(a->dilations));
    else if (n == 2 || n == 0) {
        for (size_t i = 0; i < n; i++)
            if (v[i] != 1)
                return eb_op_unsupported(ctx, "dilation %lld", (long long)v[i]);
    } else {
        return eb_op_fail(ctx, EB_ERR_FORMAT, "%zu dilations for a 2-D kernel", n);
    }
    memset(a->pads, 0, sizeof(a->pads));
    if ((st = eb_op_attr_ints(ctx, "pads", v, 8, &n)) != EB_OK)
        return st;
    if (n == 4)
        memcpy(a->pads, v, sizeof(a->pads));
    else if (n != 0)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "%zu pads for a 2-D kernel", n);
    a->ceil_mode = eb_op_attr_int(ctx, "ceil_mode", 0);
    if (a->ceil_mode != 0 && a->ceil_mode != 1)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "ceil_mode must be 0 or 1");
    for (int i = 0; i < 2; i++)
        if (a->kernel[i] < 1 || a->strides[i] < 1 || a->dilations[i] < 1 ||
            a->kernel[i] > 1 << 16 || a->strides[i] > 1 << 16 || a->dilations[i] > 1 << 16)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "kernel/stride/dilation out of range");
    for (int i = 0; i < 4; i++)
        if (a->pads[i] < 0 || a->pads[i] >= a->kernel[i % 2])
            return eb_op_fail(ctx, EB_ERR_FORMAT, "pad %lld", (long long)a->pads[i]);
    return EB_OK;
}

enum eb_status eb_op__pool_geometry(struct eb_op_ctx *ctx, const struct eb_op_pool_attrs *a,
                                    struct eb_pool2d_desc *d)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    enum eb_status st = eb_op_want_dtype(ctx, 0, EB_DTYPE_F32);
    if (st != EB_OK)
        return st;
    if (x->rank != 4)
        return eb_op_unsupported(ctx, "a rank-%d input", x->rank);
    *d = (struct eb_pool2d_desc){
        .n = x->shape[0],
        .c = x->shape[1],
        .ih = x->shape[2],
        .iw = x->shape[3],
        .kh = a->kernel[0],
        .kw = a->kernel[1],
        .stride_h = a->strides[0],
        .stride_w = a->strides[1],
        .dil_h = a->dilations[0],
        .dil_w = a->dilations[1],
        .pad_t = a->pads[0],
        .pad_l = a->pads[1],
        .pad_b = a->pads[2],
        .pad_r = a->pads[3],
    };
    int64_t in[2] = {d->ih, d->iw}, out[2];
    for (int i = 0; i < 2; i++) {
        int64_t e = in[i] + a->pads[i] + a->pads[i + 2] - (a->kernel[i] - 1) * a->dilations[i] - 1;
        if (e < 0)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "the kernel is larger than the padded input");
        out[i] = (a->ceil_mode ? (e + a->strides[i] - 1) / a->strides[i] : e / a->strides[i]) + 1;
        /* ceil_mode: the last window must start inside the input or left padding. */
        if (a->ceil_mode && (out[i] - 1) * a->strides[i] >= in[i] + a->pads[i])
            out[i]--;
    }
    d->oh = out[0];
    d->ow = out[1];
    int64_t shape[4] = {d->n, d->c, d->oh, d->ow};
    return eb_op_set_out(ctx, 0, EB_DTYPE_F32, 4, shape);
}
