/* Expand: numpy (bidirectional) broadcast of the input to a constant (or shape data) shape input;
 * any dtype. */
#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

static enum eb_status check_none(struct eb_op_ctx *ctx)
{
    (void)ctx;
    return EB_OK;
}

static enum eb_status infer_expand(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    struct eb_ir_value target = {.rank = 0};
    size_t n;
    enum eb_status st = eb_op_const_ints(ctx, 1, target.shape, EB_MAX_RANK, &n);
    if (st != EB_OK)
        return st;
    target.rank = (int)n;
    for (size_t i = 0; i < n; i++)
        if (target.shape[i] < 0)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "dimension %lld", (long long)target.shape[i]);
    if (eb_dtype_size(x->dtype) == 0)
        return eb_op_unsupported(ctx, "input 0 of type %s", eb_dtype_name(x->dtype));
    int64_t shape[EB_MAX_RANK];
    int rank;
    if ((st = eb_op_broadcast(ctx, x, &target, &rank, shape)) != EB_OK)
        return st;
    return eb_op_set_out(ctx, 0, x->dtype, rank, shape);
}

static void exec_expand(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *y = eb_op_out(g, n, 0);
    int64_t xs[EB_MAX_RANK];
    for (int d = 0; d < y->rank; d++) {
        const int i = d - (y->rank - x->rank);
        xs[d] = i >= 0 ? x->shape[i] : 1;
    }
    eb_cpu_expand__ref(eb_dtype_size(x->dtype), y->rank, xs, x->data, y->shape, y->data);
}

const struct eb_op_def eb_op_expand = {
    .onnx_name = "Expand",
    .since_opset = 8,
    .min_inputs = 2,
    .max_inputs = 2,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_none,
    .infer_shape = infer_expand,
    .exec = exec_expand,
};
