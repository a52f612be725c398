/*
 * Float32 activations: Relu, LeakyRelu, Clip (min/max attributes before opset 11, optional
 * scalar inputs from 11), HardSigmoid, HardSwish, Exp, Sqrt, Tanh.
 */
#include <math.h>

#include "engine/cpu/ref/ref.h"
#include "engine/ops/fuse_access.h"
#include "engine/ops/op.h"

struct unary_params {
    enum eb_unop op;
    float a, b;
};

static enum eb_status check_unary(struct eb_op_ctx *ctx)
{
    const struct eb_op_def *d = ctx->n->op;
    struct unary_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    p->a = 0.0f;
    p->b = 0.0f;
    if (d == &eb_op_relu) {
        p->op = EB_UNOP_RELU;
    } else if (d == &eb_op_leaky_relu) {
        p->op = EB_UNOP_LEAKY_RELU;
        p->a = eb_op_attr_float(ctx, "alpha", 0.01f);
    } else if (d == &eb_op_clip) {
        p->op = EB_UNOP_CLIP;
        p->a = -INFINITY;
        p->b = INFINITY;
        if (ctx->g->opset < 11) {
            p->a = eb_op_attr_float(ctx, "min", -INFINITY);
            p->b = eb_op_attr_float(ctx, "max", INFINITY);
            if (ctx->n->n_in > 1)
                return eb_op_fail(ctx, EB_ERR_FORMAT, "min/max inputs before opset 11");
        }
    } else if (d == &eb_op_hard_sigmoid) {
        p->op = EB_UNOP_HARD_SIGMOID;
        p->a = eb_op_attr_float(ctx, "alpha", 0.2f);
        p->b = eb_op_attr_float(ctx, "beta", 0.5f);
    } else if (d == &eb_op_hard_swish) {
        p->op = EB_UNOP_HARD_SWISH;
    } else if (d == &eb_op_exp) {
        p->op = EB_UNOP_EXP;
    } else if (d == &eb_op_sqrt) {
        p->op = EB_UNOP_SQRT;
    } else {
        p->op = EB_UNOP_TANH;
    }
    ctx->n->params = p;
    return EB_OK;
}

static enum eb_status infer_unary(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    enum eb_status st = eb_op_want_dtype(ctx, 0, EB_DTYPE_F32);
    if (st != EB_OK)
        return st;
    /* Clip's optional min (1) and max (2): float32 scalars, read by exec. */
    for (int i = 1; i < ctx->n->n_in; i++) {
        const struct eb_ir_value *v = eb_op_in(ctx->g, ctx->n, i);
        if (v == NULL)
            continue;
        if ((st = eb_op_want_dtype(ctx, i, EB_DTYPE_F32)) != EB_OK)
            return st;
        if (v->numel != 1)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "input %d has %lld elements, 1 expected", i,
                              (long long)v->numel);
    }
    return eb_op_set_out(ctx, 0, EB_DTYPE_F32, x->rank, x->shape);
}

static void exec_unary(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct unary_params *p = n->params;
    const struct eb_ir_value *x = eb_op_in(g, n, 0);
    const struct eb_ir_value *lo = eb_op_in(g, n, 1), *hi = eb_op_in(g, n, 2);
    float a = p->a, b = p->b;
    if (lo != NULL)
        a = *(const float *)lo->data;
    if (hi != NULL)
        b = *(const float *)hi->data;
    eb_cpu_unary_f32__ref(p->op, x->numel, x->data, a, b, eb_op_out(g, n, 0)->data);
}

int eb_op__activation_params(const struct eb_ir_node *n, float *a_out, float *b_out)
{
    if (n->params == NULL || n->op == NULL || n->op->check != check_unary)
        return 0;
    const struct unary_params *p = n->params;
    *a_out = p->a;
    *b_out = p->b;
    return 1;
}

/* Clip's min/max inputs must be constants (read here, at load). */
static int describe_unary(const struct eb_graph *g, const struct eb_ir_node *n,
                          struct eb_op_desc *d)
{
    const struct unary_params *p = n->params;
    const struct eb_ir_value *lo = eb_op_in(g, n, 1), *hi = eb_op_in(g, n, 2);
    if ((lo != NULL && !lo->is_const) || (hi != NULL && !hi->is_const))
        return 0;
    d->kind = EB_DESC_UNARY;
    d->unop = p->op;
    d->alpha = lo != NULL ? *(const float *)lo->data : p->a;
    d->beta = hi != NULL ? *(const float *)hi->data : p->b;
    return 1;
}

#define UNARY_OP(sym, name, since, max_in)                                                         \
    const struct eb_op_def eb_op_##sym = {                                                         \
        .onnx_name = name,                                                                         \
        .since_opset = since,                                                                      \
        .min_inputs = 1,                                                                           \
        .max_inputs = max_in,                                                                      \
        .optional_inputs = EB_OP_OPTIONAL(1) | EB_OP_OPTIONAL(2),                                  \
        .min_outputs = 1,                                                                          \
        .max_outputs = 1,                                                                          \
        .dyn_shapes = 1,                                                                           \
        .check = check_unary,                                                                      \
        .infer_shape = infer_unary,                                                                \
        .exec = exec_unary,                                                                        \
        .describe = describe_unary,                                                                \
    };
UNARY_OP(relu, "Relu", 6, 1)
UNARY_OP(leaky_relu, "LeakyRelu", 6, 1)
UNARY_OP(clip, "Clip", 6, 3)
UNARY_OP(hard_sigmoid, "HardSigmoid", 6, 1)
UNARY_OP(hard_swish, "HardSwish", 14, 1)
UNARY_OP(exp, "Exp", 6, 1)
UNARY_OP(sqrt, "Sqrt", 6, 1)
UNARY_OP(tanh, "Tanh", 6, 1)
