/*
 * Equal, LessOrEqual and And (numpy broadcasting, bool output), Where (broadcast select of any
 * element type), and the unary math of decoder graphs: Neg (float32, int64, int32), Cos, Sin
 * (float32) and IsNaN (float32 -> bool). Bool tensors hold one byte per element, 0 or 1.
 */
#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

static enum eb_status check_none(struct eb_op_ctx *ctx)
{
    (void)ctx;
    return EB_OK;
}

/* Input shapes of node n padded with leading 1s to the output's rank. */
static void padded_shape(const struct eb_ir_value *x, int rank, int64_t *s)
{
    for (int d = 0; d < rank; d++) {
        const int i = d - (rank - x->rank);
        s[d] = i >= 0 ? x->shape[i] : 1;
    }
}

static enum eb_status infer_compare(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *a = eb_op_in(ctx->g, ctx->n, 0), *b = eb_op_in(ctx->g, ctx->n, 1);
    int64_t shape[EB_MAX_RANK];
    int rank;
    if (a->dtype != b->dtype)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "inputs of types %s and %s", eb_dtype_name(a->dtype),
                          eb_dtype_name(b->dtype));
    const int is_and = ctx->n->op == &eb_op_and;
    const int ok = is_and ? a->dtype == EB_DTYPE_BOOL
                          : a->dtype == EB_DTYPE_F32 || a->dtype == EB_DTYPE_I64 ||
                                a->dtype == EB_DTYPE_I32 ||
                                (a->dtype == EB_DTYPE_BOOL && ctx->n->op == &eb_op_equal);
    if (!ok)
        return eb_op_unsupported(ctx, "type %s", eb_dtype_name(a->dtype));
    enum eb_status st = eb_op_broadcast(ctx, a, b, &rank, shape);
    if (st != EB_OK)
        return st;
    return eb_op_set_out(ctx, 0, EB_DTYPE_BOOL, rank, shape);
}

static void exec_compare(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_ir_value *a = eb_op_in(g, n, 0), *b = eb_op_in(g, n, 1);
    const struct eb_ir_value *y = eb_op_out(g, n, 0);
    int64_t as[EB_MAX_RANK], bs[EB_MAX_RANK];
    padded_shape(a, y->rank, as);
    padded_shape(b, y->rank, bs);
    const enum eb_cmpop op = n->op == &eb_op_equal           ? EB_CMPOP_EQUAL
                             : n->op == &eb_op_less_or_equal ? EB_CMPOP_LESS_EQUAL
                                                             : EB_CMPOP_AND;
    eb_cpu_compare__ref(op, a->dtype, y->rank, as, a->data, bs, b->data, y->shape, y->data);
}

#define COMPARE_OP(sym, name, since)                                                               \
    const struct eb_op_def eb_op_##sym = {                                                         \
        .onnx_name = name,                                                                         \
        .since_opset = since,                                                                      \
        .min_inputs = 2,                                                                           \
        .max_inputs = 2,                                                                           \
        .min_outputs = 1,                                                                          \
        .max_outputs = 1,                                                                          \
        .dyn_shapes = 1,                                                                           \
        .check = check_none,                                                                       \
        .infer_shape = infer_compare,                                                              \
        .exec = exec_compare,                                                                      \
    };
COMPARE_OP(equal, "Equal", 11)
COMPARE_OP(less_or_equal, "LessOrEqual", 12)
COMPARE_OP(and, "And", 7)

static enum eb_status infer_where(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *c = eb_op_in(ctx->g, ctx->n, 0), *x = eb_op_in(ctx->g, ctx->n, 1),
                             *z = eb_op_in(ctx->g, ctx->n, 2);
    enum eb_status st = eb_op_want_dtype(ctx, 0, EB_DTYPE_BOOL);
    if (st != EB_OK)
        return st;
    if (x->dtype != z->dtype)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "inputs 1 and 2 of types %s and %s",
                          eb_dtype_name(x->dtype), eb_dtype_name(z->dtype));
    if (eb_dtype_size(x->dtype) == 0)
        return eb_op_unsupported(ctx, "type %s", eb_dtype_name(x->dtype));
    struct eb_ir_value xz = {.rank = 0};
    int64_t shape[EB_MAX_RANK];
    if ((st = eb_op_broadcast(ctx, x, z, &xz.rank, xz.shape)) != EB_OK)
        return st;
    int rank;
    if ((st = eb_op_broadcast(ctx, c, &xz, &rank, shape)) != EB_OK)
        return st;
    return eb_op_set_out(ctx, 0, x->dtype, rank, shape);
}

static void exec_where(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_ir_value *c = eb_op_in(g, n, 0), *x = eb_op_in(g, n, 1), *z = eb_op_in(g, n, 2),
                             *y = eb_op_out(g, n, 0);
    int64_t cs[EB_MAX_RANK], xs[EB_MAX_RANK], zs[EB_MAX_RANK];
    padded_shape(c, y->rank, cs);
    padded_shape(x, y->rank, xs);
    padded_shape(z, y->rank, zs);
    eb_cpu_where__ref(eb_dtype_size(y->dtype), y->rank, cs, c->data, xs, x->data, zs, z->data,
                      y->shape, y->data);
}

const struct eb_op_def eb_op_where = {
    .onnx_name = "Where",
    .since_opset = 9,
    .min_inputs = 3,
    .max_inputs = 3,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_none,
    .infer_shape = infer_where,
    .exec = exec_where,
};

static enum eb_mathop mathop_of(const struct eb_ir_node *n)
{
    return n->op == &eb_op_neg   ? EB_MATHOP_NEG
           : n->op == &eb_op_cos ? EB_MATHOP_COS
           : n->op == &eb_op_sin ? EB_MATHOP_SIN
                                 : EB_MATHOP_ISNAN;
}

static enum eb_status infer_math(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    const enum eb_mathop op = mathop_of(ctx->n);
    const int ok = x->dtype == EB_DTYPE_F32 ||
                   (op == EB_MATHOP_NEG && (x->dtype == EB_DTYPE_I64 || x->dtype == EB_DTYPE_I32));
    if (!ok)
        return eb_op_unsupported(ctx, "input 0 of type %s", eb_dtype_name(x->dtype));
    return eb_op_set_out(ctx, 0, op == EB_MATHOP_ISNAN ? EB_DTYPE_BOOL : x->dtype, x->rank,
                         x->shape);
}

static void exec_math(const struct eb_exec *ex)
{
    const struct eb_ir_value *x = eb_op_in(ex->g, ex->n, 0), *y = eb_op_out(ex->g, ex->n, 0);
    eb_cpu_math__ref(mathop_of(ex->n), x->dtype, x->numel, x->data, y->data);
}

#define MATH_OP(sym, name, since)                                                                  \
    const struct eb_op_def eb_op_##sym = {                                                         \
        .onnx_name = name,                                                                         \
        .since_opset = since,                                                                      \
        .min_inputs = 1,                                                                           \
        .max_inputs = 1,                                                                           \
        .min_outputs = 1,                                                                          \
        .max_outputs = 1,                                                                          \
        .dyn_shapes = 1,                                                                           \
        .check = check_none,                                                                       \
        .infer_shape = infer_math,                                                                 \
        .exec = exec_math,                                                                         \
    };
MATH_OP(neg, "Neg", 6)
MATH_OP(cos, "Cos", 7)
MATH_OP(sin, "Sin", 7)
MATH_OP(is_nan, "IsNaN", 9)
