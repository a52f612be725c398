/* MaxPool (float32, 2-D; no Indices output; ceil_mode and dilations supported). */
#include "engine/cpu/eltwise.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ops/fuse_access.h"
#include "engine/ops/op.h"

struct pool_params {
    struct eb_op_pool_attrs a;
    struct eb_pool2d_desc d; /* filled by infer_shape */
};

static enum eb_status check_maxpool(struct eb_op_ctx *ctx)
{
    struct pool_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    if (ctx->src->n_outputs > 1)
        return eb_op_unsupported(ctx, "the Indices output");
    enum eb_status st = eb_op__pool_attrs(ctx, 1, &p->a);
    if (st != EB_OK)
        return st;
    ctx->n->params = p;
    return EB_OK;
}

static enum eb_status infer_maxpool(struct eb_op_ctx *ctx)
{
    struct pool_params *p = ctx->n->params;
    return eb_op__pool_geometry(ctx, &p->a, &p->d);
}
static void exec_maxpool(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct pool_params *p = n->params;
    const struct eb_ir_value *x = eb_op_in(g, n, 0);
    if (x->blocked) /* channel-blocked (the layout pass) */
        eb_cpu_maxpool2d_f32_cl(ex->cpu, &p->d, x->blocked, x->data, eb_op_out(g, n, 0)->data);
    else
        eb_cpu_maxpool2d_f32(ex->cpu, &p->d, x->data, eb_op_out(g, n, 0)->data);
}

int eb_op__maxpool_cl_ok(const struct eb_ir_node *n)
{
    if (n->op != &eb_op_maxpool || n->params == NULL || n->n_out != 1)
        return 0;
    const struct eb_pool2d_desc *d = &((const struct pool_params *)n->params)->d;
    return d->stride_h == 1 && d->stride_w == 1 && d->dil_h == 1 && d->dil_w == 1;
}

static int describe_maxpool(const struct eb_graph *g, const struct eb_ir_node *n,
                            struct eb_op_desc *d)
{
    (void)g;
    if (n->n_out != 1)
        return 0;
    d->kind = EB_DESC_MAXPOOL;
    d->pool = ((const struct pool_params *)n->params)->d;
    return 1;
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
    .describe = describe_maxpool,
};
