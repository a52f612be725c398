/*
 * Reshape (0 copies a dimension unless allowzero, -1 is inferred), Unsqueeze, Squeeze (axes
 * as attribute before opset 13, as a constant input from 13) and Identity: all are copies of
 * the same bytes with a new shape. Flatten (to 2-D at `axis`) is one too.
 */
#include <string.h>

#include "engine/ops/op.h"

static enum eb_status check_none(struct eb_op_ctx *ctx)
{
    (void)ctx;
    return EB_OK;
}

/* Reshape's allowzero, read at check: infer_shape runs again at run time without attributes. */
static enum eb_status check_reshape(struct eb_op_ctx *ctx)
{
    int *allowzero = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*allowzero));
    if (allowzero == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    *allowzero = (int)eb_op_attr_int(ctx, "allowzero", 0);
    ctx->n->params = allowzero;
    return EB_OK;
}

static void exec_copy(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *y = eb_op_out(g, n, 0);
    if (y->data != x->data && x->nbytes > 0)
        memcpy(y->data, x->data, x->nbytes);
}

static int describe_copy(const struct eb_graph *g, const struct eb_ir_node *n, struct eb_op_desc *d)
{
    (void)g;
    (void)n;
    d->kind = EB_DESC_COPY;
    return 1;
}

static enum eb_status infer_reshape(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    int64_t shape[EB_MAX_RANK];
    size_t n;
    enum eb_status st = eb_op_const_ints(ctx, 1, shape, EB_MAX_RANK, &n);
    if (st != EB_OK)
        return st;
    const int allowzero = *(const int *)ctx->n->params;
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < n; i++) {
        if (shape[i] == 0 && !allowzero) {
            if ((int)i >= x->rank)
                return eb_op_fail(ctx, EB_ERR_FORMAT, "0 at %zu beyond the input rank", i);
            shape[i] = x->shape[i];
        }
        if (shape[i] == -1) {
            if (infer >= 0)
                return eb_op_fail(ctx, EB_ERR_FORMAT, "two -1 dimensions");
            infer = (int)i;
            continue;
        }
        if (shape[i] < 0)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "dimension %lld", (long long)shape[i]);
        if (eb_checked_mul(known, shape[i], &known))
            return eb_op_fail(ctx, EB_ERR_FORMAT, "the shape's dimensions overflow int64");
    }
    if (infer >= 0) {
        if (known == 0 || x->numel % known != 0)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "cannot infer the -1 dimension");
        shape[infer] = x->numel / known;
        known = x->numel;
    }
    if (known != x->numel)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "%lld elements do not reshape into %lld",
                          (long long)x->numel, (long long)known);
    return eb_op_set_out(ctx, 0, x->dtype, (int)n, shape);
}

const struct eb_op_def eb_op_reshape = {
    .onnx_name = "Reshape",
    .since_opset = 5,
    .min_inputs = 2,
    .max_inputs = 2,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_reshape,
    .infer_shape = infer_reshape,
    .exec = exec_copy,
    .describe = describe_copy,
};

static enum eb_status read_axes(struct eb_op_ctx *ctx, int64_t *axes, size_t *n)
{
    if (ctx->g->opset < 13)
        return eb_op_attr_ints(ctx, "axes", axes, EB_MAX_RANK, n);
    *n = 0;
    if (eb_op_in(ctx->g, ctx->n, 1) == NULL)
        return EB_OK;
    return eb_op_const_ints(ctx, 1, axes, EB_MAX_RANK, n);
}

static enum eb_status infer_unsqueeze(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    int64_t axes[EB_MAX_RANK], shape[EB_MAX_RANK];
    int mark[EB_MAX_RANK] = {0};
    size_t n;
    enum eb_status st = read_axes(ctx, axes, &n);
    if (st != EB_OK)
        return st;
    const int rank = x->rank + (int)n;
    if (n == 0 || rank > EB_MAX_RANK)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "%zu axes for rank %d", n, x->rank);
    for (size_t i = 0; i < n; i++) {
        int a;
        if ((st = eb_op_axis(ctx, axes[i], rank, &a)) != EB_OK)
            return st;
        if (mark[a]++)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "axis %d repeated", a);
    }
    for (int d = 0, k = 0; d < rank; d++)
        shape[d] = mark[d] ? 1 : x->shape[k++];
    return eb_op_set_out(ctx, 0, x->dtype, rank, shape);
}

const struct eb_op_def eb_op_unsqueeze = {
    .onnx_name = "Unsqueeze",
    .since_opset = 1,
    .min_inputs = 1,
    .max_inputs = 2,
    .optional_inputs = EB_OP_OPTIONAL(1),
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1, /* opset 13+ only in dynamic graphs: axes as an input */
    .check = check_none,
    .infer_shape = infer_unsqueeze,
    .exec = exec_copy,
    .describe = describe_copy,
};

static enum eb_status infer_squeeze(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    int64_t axes[EB_MAX_RANK], shape[EB_MAX_RANK];
    int mark[EB_MAX_RANK] = {0}, rank = 0;
    size_t n;
    enum eb_status st = read_axes(ctx, axes, &n);
    if (st != EB_OK)
        return st;
    for (size_t i = 0; i < n; i++) {
        int a;
        if ((st = eb_op_axis(ctx, axes[i], x->rank, &a)) != EB_OK)
            return st;
        if (x->shape[a] != 1)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "axis %d has size %lld", a,
                              (long long)x->shape[a]);
        mark[a] = 1;
    }
    for (int d = 0; d < x->rank; d++)
        if (!(n == 0 ? x->shape[d] == 1 : mark[d]))
            shape[rank++] = x->shape[d];
    return eb_op_set_out(ctx, 0, x->dtype, rank, shape);
}

const struct eb_op_def eb_op_squeeze = {
    .onnx_name = "Squeeze",
    .since_opset = 1,
    .min_inputs = 1,
    .max_inputs = 2,
    .optional_inputs = EB_OP_OPTIONAL(1),
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1, /* opset 13+ only in dynamic graphs: axes as an input */
    .check = check_none,
    .infer_shape = infer_squeeze,
    .exec = exec_copy,
    .describe = describe_copy,
};

static enum eb_status infer_identity(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    return eb_op_set_out(ctx, 0, x->dtype, x->rank, x->shape);
}

const struct eb_op_def eb_op_identity = {
    .onnx_name = "Identity",
    .since_opset = 1,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_none,
    .infer_shape = infer_identity,
    .exec = exec_copy,
    .describe = describe_copy,
};

/* Flatten's axis attribute, read at import (infer_shape runs again at run time, without it). */
static enum eb_status check_flatten(struct eb_op_ctx *ctx)
{
    int64_t *axis = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*axis));
    if (axis == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    *axis = eb_op_attr_int(ctx, "axis", 1);
    ctx->n->params = axis;
    return EB_OK;
}

static enum eb_status infer_flatten(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    const int64_t axis = *(const int64_t *)ctx->n->params;
    int a = x->rank;
    enum eb_status st;
    if (axis != x->rank && (st = eb_op_axis(ctx, axis, x->rank, &a)) != EB_OK)
        return st;
    int64_t shape[2] = {1, 1};
    for (int d = 0; d < x->rank; d++)
        if (eb_checked_mul(shape[d < a ? 0 : 1], x->shape[d], &shape[d < a ? 0 : 1]))
            return eb_op_fail(ctx, EB_ERR_FORMAT, "the flattened dimensions overflow int64");
    return eb_op_set_out(ctx, 0, x->dtype, 2, shape);
}

const struct eb_op_def eb_op_flatten = {
    .onnx_name = "Flatten",
    .since_opset = 1,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_flatten,
    .infer_shape = infer_flatten,
    .exec = exec_copy,
    .describe = describe_copy,
};
