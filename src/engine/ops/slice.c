/* Slice (opset 10+: starts/ends/axes/steps inputs, constant; opset 1-9: attributes). */
#include <string.h>

#include "engine/cpu/eltwise.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

struct slice_params {
    int64_t start[EB_MAX_RANK], step[EB_MAX_RANK];
};

static enum eb_status check_slice(struct eb_op_ctx *ctx)
{
    ctx->n->params = eb_ir_arena_alloc(&ctx->g->arena, sizeof(struct slice_params));
    return ctx->n->params != NULL ? EB_OK : eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
}

static enum eb_status infer_slice(struct eb_op_ctx *ctx)
{
    struct slice_params *p = ctx->n->params;
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    int64_t starts[EB_MAX_RANK], ends[EB_MAX_RANK], axes[EB_MAX_RANK], steps[EB_MAX_RANK];
    size_t ns = 0, ne = 0, na = 0, nst = 0;
    enum eb_status st;
    if (ctx->g->opset < 10) {
        if ((st = eb_op_attr_ints(ctx, "starts", starts, EB_MAX_RANK, &ns)) != EB_OK ||
            (st = eb_op_attr_ints(ctx, "ends", ends, EB_MAX_RANK, &ne)) != EB_OK ||
            (st = eb_op_attr_ints(ctx, "axes", axes, EB_MAX_RANK, &na)) != EB_OK)
            return st;
    } else {
        if (ctx->n->n_in < 3)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "starts and ends are required");
        if ((st = eb_op_const_ints(ctx, 1, starts, EB_MAX_RANK, &ns)) != EB_OK ||
            (st = eb_op_const_ints(ctx, 2, ends, EB_MAX_RANK, &ne)) != EB_OK)
            return st;
        if (eb_op_in(ctx->g, ctx->n, 3) != NULL &&
            (st = eb_op_const_ints(ctx, 3, axes, EB_MAX_RANK, &na)) != EB_OK)
            return st;
        if (eb_op_in(ctx->g, ctx->n, 4) != NULL &&
            (st = eb_op_const_ints(ctx, 4, steps, EB_MAX_RANK, &nst)) != EB_OK)
            return st;
    }
    if (ns != ne || (na != 0 && na != ns) || (nst != 0 && nst != ns))
        return eb_op_fail(ctx, EB_ERR_FORMAT, "starts/ends/axes/steps differ in length");
    int64_t shape[EB_MAX_RANK];
    for (int d = 0; d < x->rank; d++) {
        p->start[d] = 0;
        p->step[d] = 1;
        shape[d] = x->shape[d];
    }
    for (size_t i = 0; i < ns; i++) {
        int axis;
        if ((st = eb_op_axis(ctx, na ? axes[i] : (int64_t)i, x->rank, &axis)) != EB_OK)
            return st;
        const int64_t dim = x->shape[axis], step = nst ? steps[i] : 1;
        int64_t s = starts[i], e = ends[i];
        if (step == 0)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "step 0");
        s = s < 0 ? s + dim : s;
        e = e < 0 ? (e < -dim ? -1 : e + dim) : e;
        if (step > 0) {
            s = s < 0 ? 0 : (s > dim ? dim : s);
            e = e < 0 ? 0 : (e > dim ? dim : e);
            shape[axis] = e > s ? 1 + (e - s - 1) / step : 0; /* ceil, without overflow */
        } else {
            s = s < 0 ? -1 : (s > dim - 1 ? dim - 1 : s);
            e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
            shape[axis] = s > e ? 1 - (s - e - 1) / step : 0; /* ceil by -step, never negated */
        }
        p->start[axis] = s < 0 ? 0 : s;
        /* One element or none: any step gives it; ±1 keeps the kernels' step × stride small. */
        p->step[axis] = shape[axis] > 1 ? step : (step > 0 ? 1 : -1);
    }
    return eb_op_set_out(ctx, 0, x->dtype, x->rank, shape);
}

static void exec_slice(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *y = eb_op_out(g, n, 0);
    const struct slice_params *p = n->params;
    eb_cpu_slice(ex->cpu, eb_dtype_size(x->dtype), x->rank, x->shape, x->data, p->start, p->step,
                 y->shape, y->data);
}

static int describe_slice(const struct eb_graph *g, const struct eb_ir_node *n,
                          struct eb_op_desc *d)
{
    const struct slice_params *p = n->params;
    const int rank = eb_op_in(g, n, 0)->rank;
    d->kind = EB_DESC_SLICE;
    for (int k = 0; k < rank; k++) {
        d->start[k] = p->start[k];
        d->step[k] = p->step[k];
    }
    return 1;
}

const struct eb_op_def eb_op_slice = {
    .onnx_name = "Slice",
    .since_opset = 1,
    .min_inputs = 1,
    .max_inputs = 5,
    .optional_inputs = EB_OP_OPTIONAL(3) | EB_OP_OPTIONAL(4),
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_slice,
    .infer_shape = infer_slice,
    .exec = exec_slice,
    .describe = describe_slice,
};
