/* Transpose (any dtype; default perm reverses the dimensions). */
#include "engine/cpu/eltwise.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

struct transpose_params {
    int64_t perm[EB_MAX_RANK];
    size_t n_perm;
};

static enum eb_status check_transpose(struct eb_op_ctx *ctx)
{
    struct transpose_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    ctx->n->params = p;
    return eb_op_attr_ints(ctx, "perm", p->perm, EB_MAX_RANK, &p->n_perm);
}

static enum eb_status infer_transpose(struct eb_op_ctx *ctx)
{
    struct transpose_params *p = ctx->n->params;
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    int64_t shape[EB_MAX_RANK];
    int seen[EB_MAX_RANK] = {0};
    if (p->n_perm == 0) {
        for (int d = 0; d < x->rank; d++)
            p->perm[d] = x->rank - 1 - d;
        p->n_perm = (size_t)x->rank;
    }
    if ((int)p->n_perm != x->rank)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "perm has %zu entries for rank %d", p->n_perm,
                          x->rank);
    for (int d = 0; d < x->rank; d++) {
        if (p->perm[d] < 0 || p->perm[d] >= x->rank || seen[p->perm[d]]++)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "perm is not a permutation");
        shape[d] = x->shape[p->perm[d]];
    }
    return eb_op_set_out(ctx, 0, x->dtype, x->rank, shape);
}

static void exec_transpose(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct transpose_params *p = n->params;
    const struct eb_ir_value *x = eb_op_in(g, n, 0);
    eb_cpu_transpose(ex->cpu, eb_dtype_size(x->dtype), x->rank, x->shape, p->perm, x->data,
                     eb_op_out(g, n, 0)->data);
}

static int describe_transpose(const struct eb_graph *g, const struct eb_ir_node *n,
                              struct eb_op_desc *d)
{
    const struct transpose_params *p = n->params;
    d->kind = EB_DESC_TRANSPOSE;
    for (int k = 0; k < eb_op_in(g, n, 0)->rank; k++)
        d->perm[k] = p->perm[k];
    return 1;
}

const struct eb_op_def eb_op_transpose = {
    .onnx_name = "Transpose",
    .since_opset = 1,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_transpose,
    .infer_shape = infer_transpose,
    .exec = exec_transpose,
    .describe = describe_transpose,
};
