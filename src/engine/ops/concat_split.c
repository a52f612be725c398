/* Concat and Split (any dtype): block copies along one axis. */
#include <string.h>

#include "engine/cpu/eltwise.h"
#include "engine/ops/fuse_access.h"
#include "engine/ops/op.h"

struct axis_params {
    int64_t axis;
    int64_t split[EB_IR_MAX_IO * 8];
    size_t n_split;
    size_t n_split_attr; /* entries of the split attribute (0: none) */
    int64_t num_outputs;
};

static enum eb_status check_axis(struct eb_op_ctx *ctx)
{
    struct axis_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    p->axis = eb_op_attr_int(ctx, "axis", ctx->n->op == &eb_op_concat ? 1 : 0);
    p->num_outputs = eb_op_attr_int(ctx, "num_outputs", 0);
    ctx->n->params = p;
    if (ctx->n->op == &eb_op_split) {
        enum eb_status st =
            eb_op_attr_ints(ctx, "split", p->split, EB_ARRAY_LEN(p->split), &p->n_split);
        p->n_split_attr = p->n_split;
        return st;
    }
    return EB_OK;
}

/* outer = prod(shape[:axis]), inner = prod(shape[axis+1:]) */
static void outer_inner(const struct eb_ir_value *v, int axis, int64_t *outer, int64_t *inner)
{
    *outer = 1;
    *inner = 1;
    for (int d = 0; d < axis; d++)
        *outer *= v->shape[d];
    for (int d = axis + 1; d < v->rank; d++)
        *inner *= v->shape[d];
}

static enum eb_status infer_concat(struct eb_op_ctx *ctx)
{
    struct axis_params *p = ctx->n->params;
    const struct eb_ir_value *a = eb_op_in(ctx->g, ctx->n, 0);
    int axis;
    enum eb_status st;
    if ((st = eb_op_axis(ctx, p->axis, a->rank, &axis)) != EB_OK)
        return st;
    int64_t shape[EB_MAX_RANK];
    memcpy(shape, a->shape, sizeof(shape));
    shape[axis] = 0;
    for (int i = 0; i < ctx->n->n_in; i++) {
        const struct eb_ir_value *v = eb_op_in(ctx->g, ctx->n, i);
        if (v->dtype != a->dtype || v->rank != a->rank)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "input %d differs in type or rank", i);
        for (int d = 0; d < a->rank; d++)
            if (d != axis && v->shape[d] != a->shape[d])
                return eb_op_fail(ctx, EB_ERR_FORMAT, "input %d differs in dimension %d", i, d);
        if (eb_checked_add(shape[axis], v->shape[axis], &shape[axis]))
            return eb_op_fail(ctx, EB_ERR_FORMAT, "the inputs' sizes along axis %d overflow int64",
                              axis);
    }
    return eb_op_set_out(ctx, 0, a->dtype, a->rank, shape);
}

static void exec_concat(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_ir_value *y = eb_op_out(g, n, 0);
    const struct axis_params *p = n->params;
    const int axis = (int)(p->axis < 0 ? p->axis + y->rank : p->axis);
    const size_t es = eb_dtype_size(y->dtype);
    int64_t outer, inner, off = 0;
    outer_inner(y, axis, &outer, &inner);
    const int64_t yrow = y->shape[axis] * inner * (int64_t)es;
    for (int i = 0; i < n->n_in; i++) {
        const struct eb_ir_value *x = eb_op_in(g, n, i);
        const int64_t row = x->shape[axis] * inner * (int64_t)es;
        /* The memory plan may have placed the input in its slice of y already (no copy). */
        if (!(outer == 1 && x->data == (char *)y->data + off))
            eb_cpu_copy_rows(ex->cpu, outer, (size_t)row, x->data, (size_t)row,
                             (char *)y->data + off, (size_t)yrow);
        off += row;
    }
}

int eb_op__concat_axis(const struct eb_ir_node *n, int rank)
{
    const struct axis_params *p = n->params;
    if (n->op != &eb_op_concat || p == NULL || p->axis < -rank || p->axis >= rank)
        return -1;
    return (int)(p->axis < 0 ? p->axis + rank : p->axis);
}

int eb_op__split_axis(const struct eb_ir_node *n, int rank)
{
    const struct axis_params *p = n->params;
    if (n->op != &eb_op_split || p == NULL || p->axis < -rank || p->axis >= rank)
        return -1;
    return (int)(p->axis < 0 ? p->axis + rank : p->axis);
}

static int describe_axis(const struct eb_graph *g, const struct eb_ir_node *n, struct eb_op_desc *d)
{
    const int concat = n->op == &eb_op_concat;
    const int rank = (concat ? eb_op_out(g, n, 0) : eb_op_in(g, n, 0))->rank;
    d->kind = concat ? EB_DESC_CONCAT : EB_DESC_SPLIT;
    d->axis = concat ? eb_op__concat_axis(n, rank) : eb_op__split_axis(n, rank);
    return d->axis >= 0;
}

const struct eb_op_def eb_op_concat = {
    .onnx_name = "Concat",
    .since_opset = 4,
    .min_inputs = 1,
    .max_inputs = 1024,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_axis,
    .infer_shape = infer_concat,
    .exec = exec_concat,
    .describe = describe_axis,
};

static enum eb_status infer_split(struct eb_op_ctx *ctx)
{
    struct axis_params *p = ctx->n->params;
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    const int n_out = ctx->n->n_out;
    int axis;
    enum eb_status st;
    if ((st = eb_op_axis(ctx, p->axis, x->rank, &axis)) != EB_OK)
        return st;
    if (ctx->n->n_in >= 2) { /* opset 13: split as an input */
        if ((st = eb_op_const_ints(ctx, 1, p->split, EB_ARRAY_LEN(p->split), &p->n_split)) != EB_OK)
            return st;
    } else {
        p->n_split = p->n_split_attr; /* equal parts again when inferred anew (dyn_shapes) */
    }
    const int64_t dim = x->shape[axis];
    if (p->n_split == 0) {
        /* Equal parts; opset 18's num_outputs makes the last one smaller when uneven. */
        int64_t part = (dim + n_out - 1) / n_out;
        if (p->num_outputs == 0 && dim % n_out != 0)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "dimension %lld does not split into %d",
                              (long long)dim, n_out);
        for (int i = 0; i < n_out; i++) {
            int64_t left = dim - part * i;
            p->split[i] = left < part ? (left < 0 ? 0 : left) : part;
        }
        p->n_split = (size_t)n_out;
    }
    if (p->n_split != (size_t)n_out)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "%zu split sizes for %d outputs", p->n_split, n_out);
    int64_t sum = 0;
    for (int i = 0; i < n_out; i++) {
        if (p->split[i] < 0)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "split size %lld", (long long)p->split[i]);
        if (eb_checked_add(sum, p->split[i], &sum))
            return eb_op_fail(ctx, EB_ERR_FORMAT,
                              "split sizes overflow int64 at output %d (dimension %lld)", i,
                              (long long)dim);
    }
    if (sum != dim)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "split sizes add up to %lld, not %lld",
                          (long long)sum, (long long)dim);
    p->axis = axis;
    for (int i = 0; i < n_out; i++) {
        int64_t shape[EB_MAX_RANK];
        memcpy(shape, x->shape, sizeof(shape));
        shape[axis] = p->split[i];
        if ((st = eb_op_set_out(ctx, i, x->dtype, x->rank, shape)) != EB_OK)
            return st;
    }
    return EB_OK;
}

static void exec_split(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_ir_value *x = eb_op_in(g, n, 0);
    const struct axis_params *p = n->params;
    const size_t es = eb_dtype_size(x->dtype);
    int64_t outer, inner, off = 0;
    outer_inner(x, (int)p->axis, &outer, &inner);
    const int64_t xrow = x->shape[p->axis] * inner * (int64_t)es;
    for (int i = 0; i < n->n_out; i++) {
        const struct eb_ir_value *y = eb_op_out(g, n, i);
        const int64_t row = p->split[i] * inner * (int64_t)es;
        /* The memory plan may have placed the output as its slice of x already (no copy). */
        if (!(outer == 1 && y->data == (const char *)x->data + off))
            eb_cpu_copy_rows(ex->cpu, outer, (size_t)row, (const char *)x->data + off, (size_t)xrow,
                             y->data, (size_t)row);
        off += row;
    }
}

const struct eb_op_def eb_op_split = {
    .onnx_name = "Split",
    .since_opset = 2,
    .min_inputs = 1,
    .max_inputs = 2,
    .optional_inputs = EB_OP_OPTIONAL(1),
    .min_outputs = 1,
    .max_outputs = 64,
    .dyn_shapes = 1,
    .check = check_axis,
    .infer_shape = infer_split,
    .exec = exec_split,
    .describe = describe_axis,
};
