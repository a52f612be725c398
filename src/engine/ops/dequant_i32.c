/*
 * edgebench.DequantizeI32: made by the fusion pass (ir/passes_fuse.c) from the float tail of a
 * dynamically quantised convolution, Cast(int32 → float) → Mul(scale) [→ Add(bias)], and
 * whatever the pass folds into its epilogue after that (SiLU, activations, residual Add,
 * QuantizeLinear → DequantizeLinear); never imported from a model file.
 *
 * Inputs: 0 x (int32 [N, C, ...]), 1 scale (float32, one value), 2 bias (float32 constant
 * [1, C, 1..], optional), 3 residual (float32, y's shape; only with the residual epilogue).
 * Output: y (float32, x's shape). See cpu/dequant_i32.h.
 */
#include "engine/cpu/dequant_i32.h"
#include "engine/ops/dequant_i32.h"
#include "engine/ops/op.h"

static enum eb_status check_dequant_i32(struct eb_op_ctx *ctx)
{
    return eb_op_unsupported(ctx, "edgebench.DequantizeI32 in a model file");
}

static enum eb_status infer_dequant_i32(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0);
    return eb_op_set_out(ctx, 0, EB_DTYPE_F32, x->rank, x->shape);
}

static uint64_t flops_dequant_i32(const struct eb_graph *g, const struct eb_ir_node *n)
{
    return (uint64_t)eb_op_out(g, n, 0)->numel;
}

static void exec_dequant_i32(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_dequant_i32_params *p = n->params;
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *s = eb_op_in(g, n, 1);
    const struct eb_ir_value *b = eb_op_in(g, n, 2), *r = eb_op_in(g, n, 3);
    const int64_t batch = x->rank > 0 ? x->shape[0] : 1, ch = x->rank > 1 ? x->shape[1] : 1;
    const struct eb_dequant_i32_args a = {
        .n = batch,
        .channels = ch,
        .inner = batch * ch > 0 ? x->numel / (batch * ch) : 0,
        .x = x->data,
        .scale = *(const float *)s->data,
        .bias = b != NULL ? b->data : NULL,
        .residual = r != NULL ? r->data : NULL,
        .epi = &p->epi,
        .y = eb_op_out(g, n, 0)->data,
    };
    eb_cpu_dequantize_i32(ex->cpu, &a);
}

const struct eb_op_def eb_op_dequant_i32 = {
    .onnx_name = "edgebench.DequantizeI32",
    .since_opset = 1,
    .min_inputs = 2,
    .max_inputs = 4,
    .min_outputs = 1,
    .max_outputs = 1,
    .check = check_dequant_i32,
    .infer_shape = infer_dequant_i32,
    .flops = flops_dequant_i32,
    .exec = exec_dequant_i32,
};
