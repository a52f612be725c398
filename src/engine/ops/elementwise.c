/*
 * Add, Sub, Mul, Div (numpy broadcasting; float32, int64, int32), Pow (float32 base and exponent,
 * broadcasting) and Sigmoid (float32).
 */
#include "engine/cpu/eltwise.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

static enum eb_status check_none(struct eb_op_ctx *ctx)
{
    (void)ctx;
    return EB_OK;
}

static enum eb_status infer_binary(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *a = eb_op_in(ctx->g, ctx->n, 0), *b = eb_op_in(ctx->g, ctx->n, 1);
    int64_t shape[EB_MAX_RANK];
    int rank;
    if (a->dtype != b->dtype)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "inputs of types %s and %s", eb_dtype_name(a->dtype),
                          eb_dtype_name(b->dtype));
    if (a->dtype != EB_DTYPE_F32 && a->dtype != EB_DTYPE_I64 && a->dtype != EB_DTYPE_I32)
        return eb_op_unsupported(ctx, "type %s", eb_dtype_name(a->dtype));
    enum eb_status st = eb_op_broadcast(ctx, a, b, &rank, shape);
    if (st != EB_OK)
        return st;
    return eb_op_set_out(ctx, 0, a->dtype, rank, shape);
}

static void exec_binary(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_ir_value *a = eb_op_in(g, n, 0), *b = eb_op_in(g, n, 1);
    const struct eb_ir_value *y = eb_op_out(g, n, 0);
    int64_t as[EB_MAX_RANK], bs[EB_MAX_RANK];
    for (int d = 0; d < y->rank; d++) {
        int ia = d - (y->rank - a->rank), ib = d - (y->rank - b->rank);
        as[d] = ia >= 0 ? a->shape[ia] : 1;
        bs[d] = ib >= 0 ? b->shape[ib] : 1;
    }
    enum eb_binop op = n->op == &eb_op_add   ? EB_BINOP_ADD
                       : n->op == &eb_op_sub ? EB_BINOP_SUB
                       : n->op == &eb_op_mul ? EB_BINOP_MUL
                       : n->op == &eb_op_pow ? EB_BINOP_POW
                                             : EB_BINOP_DIV;
    eb_cpu_binary(ex->cpu, op, y->dtype, y->rank, as, a->data, bs, b->data, y->shape, y->data);
}

static int describe_binary(const struct eb_graph *g, const struct eb_ir_node *n,
                           struct eb_op_desc *d)
{
    const enum eb_dtype dt = eb_op_out(g, n, 0)->dtype;
    if (dt != EB_DTYPE_F32 && !((dt == EB_DTYPE_I64 || dt == EB_DTYPE_I32) && n->op != &eb_op_pow))
        return 0;
    d->kind = EB_DESC_BINARY;
    d->binop = n->op == &eb_op_add   ? EB_BINOP_ADD
               : n->op == &eb_op_sub ? EB_BINOP_SUB
               : n->op == &eb_op_mul ? EB_BINOP_MUL
               : n->op == &eb_op_pow ? EB_BINOP_POW
                                     : EB_BINOP_DIV;
    return 1;
}

#define BINARY_OP(sym, name)                                                                       \
    const struct eb_op_def eb_op_##sym = {                                                         \
        .onnx_name = name,                                                                         \
        .since_opset = 7,                                                                          \
        .min_inputs = 2,                                                                           \
        .max_inputs = 2,                                                                           \
        .min_outputs = 1,                                                                          \
        .max_outputs = 1,                                                                          \
        .dyn_shapes = 1,                                                                           \
        .check = check_none,                                                                       \
        .infer_shape = infer_binary,                                                               \
        .exec = exec_binary,                                                                       \
        .describe = describe_binary,                                                               \
    };
BINARY_OP(add, "Add")
BINARY_OP(sub, "Sub")
BINARY_OP(mul, "Mul")
BINARY_OP(div, "Div")

static enum eb_status infer_pow(struct eb_op_ctx *ctx)
{
    enum eb_status st = eb_op_want_dtype(ctx, 0, EB_DTYPE_F32);
    if (st == EB_OK)
        st = eb_op_want_dtype(ctx, 1, EB_DTYPE_F32);
    return st != EB_OK ? st : infer_binary(ctx);
}

const struct eb_op_def eb_op_pow = {
    .onnx_name = "Pow",
    .since_opset = 7,
    .min_inputs = 2,
    .max_inputs = 2,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_none,
    .infer_shape = infer_pow,
    .exec = exec_binary,
    .describe = describe_binary,
};

static enum eb_status infer_sigmoid(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    enum eb_status st = eb_op_want_dtype(ctx, 0, EB_DTYPE_F32);
    if (st != EB_OK)
        return st;
    return eb_op_set_out(ctx, 0, x->dtype, x->rank, x->shape);
}

static void exec_sigmoid(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_ir_value *x = eb_op_in(g, n, 0);
    eb_cpu_sigmoid_f32(ex->cpu, x->numel, x->data, eb_op_out(g, n, 0)->data);
}

static int describe_sigmoid(const struct eb_graph *g, const struct eb_ir_node *n,
                            struct eb_op_desc *d)
{
    (void)g;
    (void)n;
    d->kind = EB_DESC_SIGMOID;
    return 1;
}

const struct eb_op_def eb_op_sigmoid = {
    .onnx_name = "Sigmoid",
    .since_opset = 6,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_none,
    .infer_shape = infer_sigmoid,
    .exec = exec_sigmoid,
    .describe = describe_sigmoid,
};
