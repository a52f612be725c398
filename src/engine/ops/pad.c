/*
 * Pad: constant, edge and reflect modes. Pads (and the float `value`) are attributes before
 * opset 11; from 11 pads is a constant input and constant_value an optional scalar input of the
 * data's type. The opset-18 axes input is refused.
 */
#include <string.h>

#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

struct pad_params {
    enum eb_pad_mode mode;
    float attr_value;
    int64_t pads[2 * EB_MAX_RANK];
    size_t n_pads; /* from the attribute (opset < 11) or infer_shape */
};

static enum eb_status check_pad(struct eb_op_ctx *ctx)
{
    struct pad_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    enum eb_status st;
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    const char *mode = eb_op_attr_str(ctx, "mode", "constant");
    if (strcmp(mode, "constant") == 0)
        p->mode = EB_PAD_CONSTANT;
    else if (strcmp(mode, "edge") == 0)
        p->mode = EB_PAD_EDGE;
    else if (strcmp(mode, "reflect") == 0)
        p->mode = EB_PAD_REFLECT;
    else
        return eb_op_unsupported(ctx, "mode '%s'", mode);
    p->n_pads = 0;
    p->attr_value = 0.0f;
    if (ctx->g->opset < 11) {
        if (ctx->n->n_in > 1)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "pads as an input before opset 11");
        if ((st = eb_op_attr_ints(ctx, "pads", p->pads, 2 * EB_MAX_RANK, &p->n_pads)) != EB_OK)
            return st;
        p->attr_value = eb_op_attr_float(ctx, "value", 0.0f);
    } else {
        if (ctx->n->n_in < 2)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "the pads input is missing");
        if (ctx->n->n_in > 3 && eb_op_in(ctx->g, ctx->n, 3) != NULL)
            return eb_op_unsupported(ctx, "the axes input");
    }
    ctx->n->params = p;
    return EB_OK;
}

static enum eb_status infer_pad(struct eb_op_ctx *ctx)
{
    struct pad_params *p = ctx->n->params;
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    enum eb_status st;
    if (x->dtype != EB_DTYPE_F32 && x->dtype != EB_DTYPE_I64 && x->dtype != EB_DTYPE_I32 &&
        x->dtype != EB_DTYPE_U8 && x->dtype != EB_DTYPE_I8)
        return eb_op_unsupported(ctx, "input 0 of type %s", eb_dtype_name(x->dtype));
    if (ctx->g->opset < 11) {
        if (x->dtype != EB_DTYPE_F32)
            return eb_op_unsupported(ctx, "input 0 of type %s", eb_dtype_name(x->dtype));
    } else {
        if ((st = eb_op_const_ints(ctx, 1, p->pads, 2 * EB_MAX_RANK, &p->n_pads)) != EB_OK)
            return st;
        const struct eb_ir_value *v = eb_op_in(ctx->g, ctx->n, 2);
        if (v != NULL && (v->dtype != x->dtype || v->numel != 1))
            return eb_op_fail(ctx, EB_ERR_FORMAT, "constant_value must be one %s",
                              eb_dtype_name(x->dtype));
    }
    if (p->n_pads != 2 * (size_t)x->rank)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "%zu pads for rank %d", p->n_pads, x->rank);
    int64_t shape[EB_MAX_RANK];
    for (int d = 0; d < x->rank; d++) {
        const int64_t pre = p->pads[d], post = p->pads[d + x->rank];
        if (pre < -x->shape[d] || post < -x->shape[d] || pre > (int64_t)1 << 32 ||
            post > (int64_t)1 << 32)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "pads %lld, %lld for dim %lld", (long long)pre,
                              (long long)post, (long long)x->shape[d]);
        shape[d] = x->shape[d] + pre + post;
        if (shape[d] < 0)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "negative output dim");
        if (p->mode != EB_PAD_CONSTANT && (pre > 0 || post > 0) && x->shape[d] == 0)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "edge/reflect padding of an empty dim");
        if (p->mode == EB_PAD_REFLECT && (pre >= x->shape[d] || post >= x->shape[d]))
            return eb_op_unsupported(ctx, "reflect pads of %lld/%lld for dim %lld", (long long)pre,
                                     (long long)post, (long long)x->shape[d]);
    }
    return eb_op_set_out(ctx, 0, x->dtype, x->rank, shape);
}

static void exec_pad(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct pad_params *p = n->params;
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *y = eb_op_out(g, n, 0);
    const struct eb_ir_value *v = eb_op_in(g, n, 2);
    const uint64_t zero = 0;
    const void *value = &zero;
    if (v != NULL)
        value = v->data;
    else if (x->dtype == EB_DTYPE_F32)
        value = &p->attr_value;
    eb_cpu_pad__ref(eb_dtype_size(x->dtype), x->rank, x->shape, x->data, p->pads, y->shape, p->mode,
                    value, y->data);
}

const struct eb_op_def eb_op_pad = {
    .onnx_name = "Pad",
    .since_opset = 2,
    .min_inputs = 1,
    .max_inputs = 4,
    .optional_inputs = EB_OP_OPTIONAL(2) | EB_OP_OPTIONAL(3),
    .min_outputs = 1,
    .max_outputs = 1,
    .check = check_pad,
    .infer_shape = infer_pad,
    .exec = exec_pad,
};
