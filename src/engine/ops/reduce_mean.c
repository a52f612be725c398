/*
 * ReduceMean (float32): axes as an attribute before opset 18, as an optional constant input
 * from 18 (noop_with_empty_axes 1 is refused); no axes reduces every dim; keepdims.
 */
#include "engine/cpu/eltwise.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

struct reduce_params {
    int64_t keepdims;
    int64_t axes[EB_MAX_RANK];
    size_t n_axes;
    int reduce[EB_MAX_RANK]; /* filled by infer_shape */
};

static enum eb_status check_reduce_mean(struct eb_op_ctx *ctx)
{
    struct reduce_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    enum eb_status st;
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    p->keepdims = eb_op_attr_int(ctx, "keepdims", 1);
    if (p->keepdims != 0 && p->keepdims != 1)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "keepdims %lld", (long long)p->keepdims);
    if (eb_op_attr_int(ctx, "noop_with_empty_axes", 0) != 0)
        return eb_op_unsupported(ctx, "noop_with_empty_axes 1");
    p->n_axes = 0;
    if (ctx->g->opset < 18) {
        if (ctx->n->n_in > 1)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "axes as an input before opset 18");
        if ((st = eb_op_attr_ints(ctx, "axes", p->axes, EB_MAX_RANK, &p->n_axes)) != EB_OK)
            return st;
    }
    ctx->n->params = p;
    return EB_OK;
}

static enum eb_status infer_reduce_mean(struct eb_op_ctx *ctx)
{
    struct reduce_params *p = ctx->n->params;
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    enum eb_status st = eb_op_want_dtype(ctx, 0, EB_DTYPE_F32);
    if (st != EB_OK)
        return st;
    if (ctx->g->opset >= 18 && eb_op_in(ctx->g, ctx->n, 1) != NULL &&
        (st = eb_op_const_ints(ctx, 1, p->axes, EB_MAX_RANK, &p->n_axes)) != EB_OK)
        return st;
    for (int d = 0; d < EB_MAX_RANK; d++)
        p->reduce[d] = p->n_axes == 0;
    for (size_t i = 0; i < p->n_axes; i++) {
        int a;
        if ((st = eb_op_axis(ctx, p->axes[i], x->rank, &a)) != EB_OK)
            return st;
        if (p->reduce[a]++)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "axis %d repeated", a);
    }
    int64_t shape[EB_MAX_RANK];
    int rank = 0;
    for (int d = 0; d < x->rank; d++) {
        if (!p->reduce[d])
            shape[rank++] = x->shape[d];
        else if (p->keepdims)
            shape[rank++] = 1;
    }
    return eb_op_set_out(ctx, 0, EB_DTYPE_F32, rank, shape);
}

static void exec_reduce_mean(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct reduce_params *p = n->params;
    const struct eb_ir_value *x = eb_op_in(g, n, 0);
    /* Trailing axes only (RMSNorm's mean over the hidden dim): rows of contiguous elements. */
    int first = x->rank;
    while (first > 0 && p->reduce[first - 1])
        first--;
    int trailing = first < x->rank;
    int64_t rows = 1, len = 1;
    for (int d = 0; d < x->rank; d++) {
        trailing &= d >= first || !p->reduce[d];
        if (d < first)
            rows *= x->shape[d];
        else
            len *= x->shape[d];
    }
    if (ex->cpu->isa != EB_CPU_ISA_REF && trailing) {
        eb_cpu_reduce_mean_rows_f32(ex->cpu, rows, len, x->data, eb_op_out(g, n, 0)->data);
        return;
    }
    eb_cpu_reduce_mean_f32__ref(x->rank, x->shape, p->reduce, x->data, eb_op_out(g, n, 0)->data);
}

/* ReduceMean for a device: the reduced dims one contiguous run (RMSNorm's last axis). */
static int describe_reduce_mean(const struct eb_graph *g, const struct eb_ir_node *n,
                                struct eb_op_desc *d)
{
    const struct reduce_params *p = n->params;
    const struct eb_ir_value *x = eb_op_in(g, n, 0);
    int first = -1, last = -1;
    for (int k = 0; k < x->rank; k++)
        if (p->reduce[k]) {
            if (first >= 0 && last != k - 1)
                return 0;
            first = first < 0 ? k : first;
            last = k;
        }
    if (first < 0)
        return 0;
    d->kind = EB_DESC_REDUCE_MEAN;
    d->outer = d->len = d->inner = 1;
    for (int k = 0; k < x->rank; k++)
        *(k < first ? &d->outer : k <= last ? &d->len : &d->inner) *= x->shape[k];
    return 1;
}

const struct eb_op_def eb_op_reduce_mean = {
    .onnx_name = "ReduceMean",
    .since_opset = 1,
    .min_inputs = 1,
    .max_inputs = 2,
    .optional_inputs = EB_OP_OPTIONAL(1),
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_reduce_mean,
    .infer_shape = infer_reduce_mean,
    .exec = exec_reduce_mean,
    .describe = describe_reduce_mean,
};
