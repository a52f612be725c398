/*
 * Softmax (float32). Opset 13+: over one axis (default -1). Before 13: the input is seen as
 * 2-D [prod(shape[:axis]), prod(shape[axis:])] (default axis 1) and normalised per row.
 */
#include "engine/cpu/eltwise.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

struct softmax_params {
    int64_t axis;
    int64_t outer, len, inner; /* filled by infer_shape */
};

static enum eb_status check_softmax(struct eb_op_ctx *ctx)
{
    struct softmax_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    p->axis = eb_op_attr_int(ctx, "axis", ctx->g->opset >= 13 ? -1 : 1);
    ctx->n->params = p;
    return EB_OK;
}

static enum eb_status infer_softmax(struct eb_op_ctx *ctx)
{
    struct softmax_params *p = ctx->n->params;
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    int axis;
    enum eb_status st = eb_op_want_dtype(ctx, 0, EB_DTYPE_F32);
    if (st != EB_OK || (st = eb_op_axis(ctx, p->axis, x->rank, &axis)) != EB_OK)
        return st;
    p->outer = p->len = p->inner = 1;
    for (int d = 0; d < axis; d++)
        p->outer *= x->shape[d];
    if (ctx->g->opset >= 13) {
        p->len = x->shape[axis];
        for (int d = axis + 1; d < x->rank; d++)
            p->inner *= x->shape[d];
    } else {
        for (int d = axis; d < x->rank; d++)
            p->len *= x->shape[d];
    }
    return eb_op_set_out(ctx, 0, EB_DTYPE_F32, x->rank, x->shape);
}

static void exec_softmax(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct softmax_params *p = n->params;
    eb_cpu_softmax_f32(ex->cpu, p->outer, p->len, p->inner, eb_op_in(g, n, 0)->data,
                       eb_op_out(g, n, 0)->data);
}

static int describe_softmax(const struct eb_graph *g, const struct eb_ir_node *n,
                            struct eb_op_desc *d)
{
    const struct softmax_params *p = n->params;
    (void)g;
    d->kind = EB_DESC_SOFTMAX;
    d->outer = p->outer;
    d->len = p->len;
    d->inner = p->inner;
    return 1;
}

const struct eb_op_def eb_op_softmax = {
    .onnx_name = "Softmax",
    .since_opset = 1,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_softmax,
    .infer_shape = infer_softmax,
    .exec = exec_softmax,
    .describe = describe_softmax,
};
