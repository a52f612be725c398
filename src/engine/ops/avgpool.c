/*
 * AveragePool (float32, 2-D; pads, strides, count_include_pad, ceil_mode; no auto_pad SAME_*,
 * no dilations) and GlobalAveragePool (float32, any rank ≥ 3).
 */
#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

struct avgpool_params {
    struct eb_op_pool_attrs a;
    int64_t count_include_pad;
    struct eb_pool2d_desc d; /* filled by infer_shape */
};

static enum eb_status check_avgpool(struct eb_op_ctx *ctx)
{
    struct avgpool_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    enum eb_status st = eb_op__pool_attrs(ctx, 0, &p->a);
    if (st != EB_OK)
        return st;
    p->count_include_pad = eb_op_attr_int(ctx, "count_include_pad", 0);
    if (p->count_include_pad != 0 && p->count_include_pad != 1)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "count_include_pad must be 0 or 1");
    ctx->n->params = p;
    return EB_OK;
}

static enum eb_status infer_avgpool(struct eb_op_ctx *ctx)
{
    struct avgpool_params *p = ctx->n->params;
    return eb_op__pool_geometry(ctx, &p->a, &p->d);
}

static void exec_avgpool(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
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

static void exec_global_avgpool(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
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
