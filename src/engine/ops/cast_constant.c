/* Cast (float32/float64/uint8/int8/int32/int64/bool) and Constant (tensor and scalar forms). */
#include <string.h>

#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

struct cast_params {
    enum eb_dtype to;
};

static int castable(enum eb_dtype dt)
{
    return dt == EB_DTYPE_F32 || dt == EB_DTYPE_F64 || dt == EB_DTYPE_U8 || dt == EB_DTYPE_I8 ||
           dt == EB_DTYPE_I32 || dt == EB_DTYPE_I64 || dt == EB_DTYPE_BOOL;
}

static enum eb_status check_cast(struct eb_op_ctx *ctx)
{
    struct cast_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    int64_t to = eb_op_attr_int(ctx, "to", 0);
    p->to = eb_ir_dtype_from_onnx((int32_t)to);
    if (!castable(p->to))
        return eb_op_unsupported(ctx, "'to' type %s", eb_onnx_dtype_name((int32_t)to));
    ctx->n->params = p;
    return EB_OK;
}

static enum eb_status infer_cast(struct eb_op_ctx *ctx)
{
    const struct cast_params *p = ctx->n->params;
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    if (!castable(x->dtype))
        return eb_op_unsupported(ctx, "input type %s", eb_dtype_name(x->dtype));
    return eb_op_set_out(ctx, 0, p->to, x->rank, x->shape);
}

static void exec_cast(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *y = eb_op_out(g, n, 0);
    eb_cpu_cast__ref(x->numel, x->dtype, x->data, y->dtype, y->data);
}

/* Cast for a device: integers to float32 only. */
static int describe_cast(const struct eb_graph *g, const struct eb_ir_node *n, struct eb_op_desc *d)
{
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *y = eb_op_out(g, n, 0);
    if ((x->dtype != EB_DTYPE_I64 && x->dtype != EB_DTYPE_I32) || y->dtype != EB_DTYPE_F32)
        return 0;
    d->kind = EB_DESC_CAST;
    return 1;
}

const struct eb_op_def eb_op_cast = {
    .onnx_name = "Cast",
    .since_opset = 6,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_cast,
    .infer_shape = infer_cast,
    .exec = exec_cast,
    .describe = describe_cast,
};

struct constant_params {
    enum eb_dtype dtype;
    int rank;
    int64_t shape[EB_MAX_RANK];
    void *data; /* arena */
};

static enum eb_status check_constant(struct eb_op_ctx *ctx)
{
    struct constant_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    const struct eb_onnx_attr *a;
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    ctx->n->params = p;
    if ((a = eb_onnx_node_attr(ctx->src, "value")) != NULL && a->type == EB_ONNX_ATTR_TENSOR &&
        a->t != NULL) {
        void *data = NULL;
        enum eb_status st = eb_ir_tensor_decode(a->t, &ctx->g->alloc, &p->dtype, &data);
        if (st == EB_ERR_UNSUPPORTED)
            return eb_op_unsupported(ctx, "a value of type %s or with external data",
                                     eb_onnx_dtype_name(a->t->dtype));
        if (st != EB_OK)
            return eb_op_fail(ctx, st, "malformed value");
        size_t nb = (size_t)a->t->numel * eb_dtype_size(p->dtype);
        p->data = eb_ir_arena_alloc(&ctx->g->arena, nb + 1);
        if (p->data != NULL)
            memcpy(p->data, data, nb);
        ctx->g->alloc.free(ctx->g->alloc.ctx, data);
        if (p->data == NULL)
            return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
        p->rank = a->t->rank;
        memcpy(p->shape, a->t->dims, sizeof(int64_t) * (size_t)a->t->rank);
        return EB_OK;
    }
    if ((a = eb_onnx_node_attr(ctx->src, "value_float")) != NULL ||
        (a = eb_onnx_node_attr(ctx->src, "value_int")) != NULL) {
        p->dtype = a->type == EB_ONNX_ATTR_FLOAT ? EB_DTYPE_F32 : EB_DTYPE_I64;
        p->data = eb_ir_arena_alloc(&ctx->g->arena, 8);
        if (p->data == NULL)
            return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
        if (p->dtype == EB_DTYPE_F32)
            memcpy(p->data, &a->f, 4);
        else
            memcpy(p->data, &a->i, 8);
        return EB_OK;
    }
    if ((a = eb_onnx_node_attr(ctx->src, "value_floats")) != NULL ||
        (a = eb_onnx_node_attr(ctx->src, "value_ints")) != NULL) {
        int fl = a->type == EB_ONNX_ATTR_FLOATS;
        size_t cnt = fl ? a->n_floats : a->n_ints;
        p->dtype = fl ? EB_DTYPE_F32 : EB_DTYPE_I64;
        p->rank = 1;
        p->shape[0] = (int64_t)cnt;
        p->data = eb_ir_arena_alloc(&ctx->g->arena, cnt * 8 + 1);
        if (p->data == NULL)
            return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
        if (cnt > 0)
            memcpy(p->data, fl ? (const void *)a->floats : (const void *)a->ints,
                   cnt * (fl ? 4 : 8));
        return EB_OK;
    }
    return eb_op_unsupported(ctx, "a Constant without value/value_float(s)/value_int(s)");
}

static enum eb_status infer_constant(struct eb_op_ctx *ctx)
{
    const struct constant_params *p = ctx->n->params;
    return eb_op_set_out(ctx, 0, p->dtype, p->rank, p->shape);
}

static void exec_constant(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct constant_params *p = n->params;
    const struct eb_ir_value *y = eb_op_out(g, n, 0);
    if (y->nbytes > 0)
        memcpy(y->data, p->data, y->nbytes);
}

const struct eb_op_def eb_op_constant = {
    .onnx_name = "Constant",
    .since_opset = 1,
    .min_inputs = 0,
    .max_inputs = 0,
    .min_outputs = 1,
    .max_outputs = 1,
    .check = check_constant,
    .infer_shape = infer_constant,
    .exec = exec_constant,
};
