/* Shape (start/end; always folded at load since shapes are static), Gather (any dtype). */
#include <string.h>

#include "engine/ops/op.h"

struct shape_params {
    int64_t start, end;
};

static enum eb_status check_shape(struct eb_op_ctx *ctx)
{
    struct shape_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    p->start = eb_op_attr_int(ctx, "start", 0);
    p->end = eb_op_attr_int(ctx, "end", INT64_MAX);
    ctx->n->params = p;
    return EB_OK;
}

static enum eb_status infer_shape_op(struct eb_op_ctx *ctx)
{
    struct shape_params *p = ctx->n->params;
    const int64_t r = eb_op_in(ctx->g, ctx->n, 0)->rank;
    int64_t s = p->start < 0 ? p->start + r : p->start, e = p->end < 0 ? p->end + r : p->end;
    s = s < 0 ? 0 : (s > r ? r : s);
    e = e < 0 ? 0 : (e > r ? r : e);
    p->start = s;
    p->end = e < s ? s : e;
    int64_t shape[1] = {p->end - p->start};
    return eb_op_set_out(ctx, 0, EB_DTYPE_I64, 1, shape);
}

static void exec_shape(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct shape_params *p = n->params;
    const struct eb_ir_value *x = eb_op_in(g, n, 0);
    int64_t *y = eb_op_out(g, n, 0)->data;
    for (int64_t i = p->start; i < p->end; i++)
        y[i - p->start] = x->shape[i];
}

const struct eb_op_def eb_op_shape = {
    .onnx_name = "Shape",
    .since_opset = 1,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 1,
    .shape_only = 1,
    .dyn_shapes = 1,
    .check = check_shape,
    .infer_shape = infer_shape_op,
    .exec = exec_shape,
};

struct gather_params {
    int64_t axis;
};

static enum eb_status check_gather(struct eb_op_ctx *ctx)
{
    struct gather_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    p->axis = eb_op_attr_int(ctx, "axis", 0);
    ctx->n->params = p;
    return EB_OK;
}

static enum eb_status infer_gather(struct eb_op_ctx *ctx)
{
    struct gather_params *p = ctx->n->params;
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0), *ix = eb_op_in(ctx->g, ctx->n, 1);
    int axis;
    enum eb_status st = eb_op_axis(ctx, p->axis, x->rank, &axis);
    if (st != EB_OK)
        return st;
    if (ix->dtype != EB_DTYPE_I64 && ix->dtype != EB_DTYPE_I32)
        return eb_op_unsupported(ctx, "indices of type %s", eb_dtype_name(ix->dtype));
    if (x->rank - 1 + ix->rank > EB_MAX_RANK)
        return eb_op_unsupported(ctx, "an output of rank %d", x->rank - 1 + ix->rank);
    /* Indices are range-checked here, not in exec: at load when constant; in a dynamic graph
     * (n->dyn) at every run, where infer_shape runs again before exec with the indices' data. */
    const int have = ix->is_const || ix->shape_data || ctx->run;
    if (!have && !ctx->n->dyn)
        return eb_op_unsupported(ctx, "non-constant indices");
    for (int64_t i = 0; have && i < ix->numel; i++) {
        int64_t v = ix->dtype == EB_DTYPE_I64 ? ((const int64_t *)ix->data)[i]
                                              : ((const int32_t *)ix->data)[i];
        if (v < -x->shape[axis] || v >= x->shape[axis])
            return eb_op_fail(ctx, EB_ERR_FORMAT, "index %lld is out of range", (long long)v);
    }
    p->axis = axis;
    int64_t shape[EB_MAX_RANK];
    int r = 0;
    for (int d = 0; d < axis; d++)
        shape[r++] = x->shape[d];
    for (int d = 0; d < ix->rank; d++)
        shape[r++] = ix->shape[d];
    for (int d = axis + 1; d < x->rank; d++)
        shape[r++] = x->shape[d];
    return eb_op_set_out(ctx, 0, x->dtype, r, shape);
}

static void exec_gather(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct gather_params *p = n->params;
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *ix = eb_op_in(g, n, 1);
    char *y = eb_op_out(g, n, 0)->data;
    const size_t es = eb_dtype_size(x->dtype);
    int64_t outer = 1, inner = 1;
    const int64_t dim = x->shape[p->axis];
    for (int d = 0; d < p->axis; d++)
        outer *= x->shape[d];
    for (int d = (int)p->axis + 1; d < x->rank; d++)
        inner *= x->shape[d];
    const size_t row = (size_t)inner * es;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < ix->numel; i++) {
            int64_t v = ix->dtype == EB_DTYPE_I64 ? ((const int64_t *)ix->data)[i]
                                                  : ((const int32_t *)ix->data)[i];
            v = v < 0 ? v + dim : v;
            memcpy(y, (const char *)x->data + (size_t)((o * dim + v) * inner) * es, row);
            y += row;
        }
    }
}

/* Gather for a device (after infer_shape: the axis resolved). */
static int describe_gather(const struct eb_graph *g, const struct eb_ir_node *n,
                           struct eb_op_desc *d)
{
    const struct gather_params *p = n->params;
    const struct eb_ir_value *x = eb_op_in(g, n, 0);
    d->kind = EB_DESC_GATHER;
    d->axis = (int)p->axis;
    d->outer = d->inner = 1;
    for (int k = 0; k < p->axis; k++)
        d->outer *= x->shape[k];
    for (int k = (int)p->axis + 1; k < x->rank; k++)
        d->inner *= x->shape[k];
    d->len = x->shape[p->axis];
    return 1;
}

const struct eb_op_def eb_op_gather = {
    .onnx_name = "Gather",
    .since_opset = 1,
    .min_inputs = 2,
    .max_inputs = 2,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .run_checks_data = 1,
    .check = check_gather,
    .infer_shape = infer_gather,
    .exec = exec_gather,
    .describe = describe_gather,
};
