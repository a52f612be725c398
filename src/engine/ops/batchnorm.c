/* BatchNormalization, inference mode (float32; training_mode and spatial 0 are refused). */
#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

struct batchnorm_params {
    float epsilon;
    int64_t n, c, inner; /* filled by infer_shape */
};

static enum eb_status check_batchnorm(struct eb_op_ctx *ctx)
{
    struct batchnorm_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    if (eb_op_attr_int(ctx, "training_mode", 0) != 0)
        return eb_op_unsupported(ctx, "training_mode 1");
    if (ctx->src->n_outputs > 1)
        return eb_op_unsupported(ctx, "the running mean/var outputs");
    if (ctx->g->opset < 9 && eb_op_attr_int(ctx, "spatial", 1) != 1)
        return eb_op_unsupported(ctx, "spatial 0");
    p->epsilon = eb_op_attr_float(ctx, "epsilon", 1e-5f);
    ctx->n->params = p;
    return EB_OK;
}

static enum eb_status infer_batchnorm(struct eb_op_ctx *ctx)
{
    struct batchnorm_params *p = ctx->n->params;
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    enum eb_status st;
    for (int i = 0; i < 5; i++)
        if ((st = eb_op_want_dtype(ctx, i, EB_DTYPE_F32)) != EB_OK)
            return st;
    if (x->rank < 2)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "a rank-%d input", x->rank);
    p->n = x->shape[0];
    p->c = x->shape[1];
    p->inner = 1;
    for (int d = 2; d < x->rank; d++)
        p->inner *= x->shape[d];
    for (int i = 1; i < 5; i++) {
        const struct eb_ir_value *v = eb_op_in(ctx->g, ctx->n, i);
        if (v->rank != 1 || v->shape[0] != p->c)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "input %d must have shape [%lld]", i,
                              (long long)p->c);
    }
    return eb_op_set_out(ctx, 0, EB_DTYPE_F32, x->rank, x->shape);
}

static void exec_batchnorm(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct batchnorm_params *p = n->params;
    eb_cpu_batchnorm_f32__ref(p->n, p->c, p->inner, eb_op_in(g, n, 0)->data,
                              eb_op_in(g, n, 1)->data, eb_op_in(g, n, 2)->data,
                              eb_op_in(g, n, 3)->data, eb_op_in(g, n, 4)->data, p->epsilon,
                              eb_op_out(g, n, 0)->data);
}

const struct eb_op_def eb_op_batch_normalization = {
    .onnx_name = "BatchNormalization",
    .since_opset = 7,
    .min_inputs = 5,
    .max_inputs = 5,
    .min_outputs = 1,
    .max_outputs = 3,
    .check = check_batchnorm,
    .infer_shape = infer_batchnorm,
    .exec = exec_batchnorm,
};
