/*
 * QuantizeLinear, DequantizeLinear (per tensor or per axis; uint8/int8, and int32 for
 * DequantizeLinear) and DynamicQuantizeLinear (uint8). Dequantization of constant weights folds
 * at load; activation Q→DQ pairs run as written (quantize, then dequantize), which is exactly
 * fake-quant in float.
 */
#include "engine/cpu/conv_u8.h"
#include "engine/cpu/eltwise.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

struct q_params {
    int64_t axis;
    int64_t channels, inner; /* filled by infer_shape */
};

static enum eb_status check_q(struct eb_op_ctx *ctx)
{
    struct q_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    p->axis = eb_op_attr_int(ctx, "axis", 1);
    if (eb_op_attr_int(ctx, "block_size", 0) != 0)
        return eb_op_unsupported(ctx, "blocked quantization (block_size)");
    if (eb_onnx_node_attr(ctx->src, "output_dtype") != NULL)
        return eb_op_unsupported(ctx, "attribute 'output_dtype'");
    ctx->n->params = p;
    return EB_OK;
}

/* Checks scale (float32) and zero point against x; sets channels/inner. */
static enum eb_status scale_layout(struct eb_op_ctx *ctx, const struct eb_ir_value *x)
{
    struct q_params *p = ctx->n->params;
    const struct eb_ir_value *s = eb_op_in(ctx->g, ctx->n, 1), *z = eb_op_in(ctx->g, ctx->n, 2);
    enum eb_status st = eb_op_want_dtype(ctx, 1, EB_DTYPE_F32);
    if (st != EB_OK)
        return st;
    p->channels = 1;
    p->inner = 1;
    if (s->rank > 1)
        return eb_op_unsupported(ctx, "a rank-%d scale", s->rank);
    if (s->rank == 1 && s->numel != 1) {
        int axis;
        if ((st = eb_op_axis(ctx, p->axis, x->rank, &axis)) != EB_OK)
            return st;
        if (s->shape[0] != x->shape[axis])
            return eb_op_fail(ctx, EB_ERR_FORMAT, "%lld scales for axis size %lld",
                              (long long)s->shape[0], (long long)x->shape[axis]);
        p->channels = s->shape[0];
        for (int d = axis + 1; d < x->rank; d++)
            p->inner *= x->shape[d];
    }
    if (z != NULL && z->numel != s->numel)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "zero point and scale differ in size");
    return EB_OK;
}

static enum eb_status infer_quantize(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0), *z = eb_op_in(ctx->g, ctx->n, 2);
    enum eb_status st = eb_op_want_dtype(ctx, 0, EB_DTYPE_F32);
    if (st != EB_OK || (st = scale_layout(ctx, x)) != EB_OK)
        return st;
    enum eb_dtype out = z != NULL ? z->dtype : EB_DTYPE_U8;
    if (out != EB_DTYPE_U8 && out != EB_DTYPE_I8)
        return eb_op_unsupported(ctx, "output type %s", eb_dtype_name(out));
    return eb_op_set_out(ctx, 0, out, x->rank, x->shape);
}

static void exec_quantize(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct q_params *p = n->params;
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *z = eb_op_in(g, n, 2);
    const struct eb_ir_value *y = eb_op_out(g, n, 0);
    eb_cpu_quantize_f32(ex->cpu, x->numel, p->channels, p->inner, x->data, eb_op_in(g, n, 1)->data,
                        z != NULL ? z->data : NULL, y->dtype == EB_DTYPE_I8, y->data);
}

static int describe_q(const struct eb_graph *g, const struct eb_ir_node *n, struct eb_op_desc *d)
{
    const struct q_params *p = n->params;
    const struct eb_ir_value *s = eb_op_in(g, n, 1), *z = eb_op_in(g, n, 2);
    /* Scales and zero points are uploaded at load: constants only. */
    if (!s->is_const || (z != NULL && !z->is_const))
        return 0;
    d->kind = n->op == &eb_op_quantize_linear ? EB_DESC_QUANTIZE : EB_DESC_DEQUANTIZE;
    d->len = p->channels;
    d->inner = p->inner;
    return 1;
}

const struct eb_op_def eb_op_quantize_linear = {
    .onnx_name = "QuantizeLinear",
    .since_opset = 10,
    .min_inputs = 2,
    .max_inputs = 3,
    .optional_inputs = EB_OP_OPTIONAL(2),
    .min_outputs = 1,
    .max_outputs = 1,
    .check = check_q,
    .infer_shape = infer_quantize,
    .exec = exec_quantize,
    .describe = describe_q,
};

static enum eb_status infer_dequantize(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0), *z = eb_op_in(ctx->g, ctx->n, 2);
    enum eb_status st;
    if (x->dtype != EB_DTYPE_U8 && x->dtype != EB_DTYPE_I8 && x->dtype != EB_DTYPE_I32)
        return eb_op_unsupported(ctx, "input type %s", eb_dtype_name(x->dtype));
    if (z != NULL && z->dtype != x->dtype)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "zero point type %s for input type %s",
                          eb_dtype_name(z->dtype), eb_dtype_name(x->dtype));
    if ((st = scale_layout(ctx, x)) != EB_OK)
        return st;
    return eb_op_set_out(ctx, 0, EB_DTYPE_F32, x->rank, x->shape);
}

static void exec_dequantize(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct q_params *p = n->params;
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *z = eb_op_in(g, n, 2);
    eb_cpu_dequantize_f32(ex->cpu, x->numel, p->channels, p->inner, x->dtype, x->data,
                          eb_op_in(g, n, 1)->data, z != NULL ? z->data : NULL,
                          eb_op_out(g, n, 0)->data);
}

const struct eb_op_def eb_op_dequantize_linear = {
    .onnx_name = "DequantizeLinear",
    .since_opset = 10,
    .min_inputs = 2,
    .max_inputs = 3,
    .optional_inputs = EB_OP_OPTIONAL(2),
    .min_outputs = 1,
    .max_outputs = 1,
    .check = check_q,
    .infer_shape = infer_dequantize,
    .exec = exec_dequantize,
    .describe = describe_q,
};

static enum eb_status check_none(struct eb_op_ctx *ctx)
{
    (void)ctx;
    return EB_OK;
}

static enum eb_status infer_dynamic(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    enum eb_status st = eb_op_want_dtype(ctx, 0, EB_DTYPE_F32);
    if (st != EB_OK || (st = eb_op_set_out(ctx, 0, EB_DTYPE_U8, x->rank, x->shape)) != EB_OK ||
        (st = eb_op_set_out(ctx, 1, EB_DTYPE_F32, 0, NULL)) != EB_OK)
        return st;
    return eb_op_set_out(ctx, 2, EB_DTYPE_U8, 0, NULL);
}

static void exec_dynamic(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_ir_value *x = eb_op_in(g, n, 0);
    eb_cpu_dynamic_quantize_f32(ex->cpu, x->numel, x->data, eb_op_out(g, n, 0)->data,
                                eb_op_out(g, n, 1)->data, eb_op_out(g, n, 2)->data);
}

const struct eb_op_def eb_op_dynamic_quantize_linear = {
    .onnx_name = "DynamicQuantizeLinear",
    .since_opset = 11,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 3,
    .max_outputs = 3,
    .check = check_none,
    .infer_shape = infer_dynamic,
    .exec = exec_dynamic,
};
