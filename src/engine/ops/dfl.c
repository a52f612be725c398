/*
 * edgebench.DFL: made by the fusion pass (ir/passes_fuse.c) from a YOLO head's distribution
 * focal loss decode, Reshape [N, G·R, A] → [N, G, R, A] → Transpose (0, 2, 1, 3) → Softmax over
 * the R bins → 1x1 Conv (R → 1, constant weights, no bias) → Reshape [N, G, A]; never imported
 * from a model file. One pass that reads each anchor's bins once instead of four nodes that
 * move the whole tensor three times (two of them a transpose).
 *
 * Inputs: 0 x (float32, numel N·G·R·A, memory order [N·G][R][A]), 1 w (float32 constant, R
 * values: the Conv's weights). Output: y (float32, memory order [N·G][A]) with
 * y[o][a] = Σ_i w[i] · exp(x[o][i][a] - m) / Σ_i exp(x[o][i][a] - m), m the bins' maximum.
 */
#include <math.h>

#include "engine/ops/dfl.h"
#include "engine/ops/op.h"

#define BLOCK 64 /* anchors per step: the bins of 64 neighbouring anchors are read row by row */

static enum eb_status check_dfl(struct eb_op_ctx *ctx)
{
    return eb_op_unsupported(ctx, "edgebench.DFL in a model file");
}

static enum eb_status infer_dfl(struct eb_op_ctx *ctx)
{
    const struct eb_dfl_params *p = ctx->n->params;
    return eb_op_set_out(ctx, 0, EB_DTYPE_F32, p->out_rank, p->out_shape);
}

static uint64_t flops_dfl(const struct eb_graph *g, const struct eb_ir_node *n)
{
    const struct eb_dfl_params *p = n->params;
    (void)g;
    return (uint64_t)(p->outer * p->inner * p->bins * 5); /* max, sub, exp, sum, dot */
}

static void exec_dfl(const struct eb_exec *ex)
{
    const struct eb_ir_node *n = ex->n;
    const struct eb_dfl_params *p = n->params;
    const float *x = eb_op_in(ex->g, n, 0)->data, *w = eb_op_in(ex->g, n, 1)->data;
    float *y = eb_op_out(ex->g, n, 0)->data;
    const int64_t r = p->bins, a_n = p->inner;
    for (int64_t o = 0; o < p->outer; o++) {
        const float *xo = x + o * r * a_n;
        for (int64_t a0 = 0; a0 < a_n; a0 += BLOCK) {
            const int64_t len = a_n - a0 < BLOCK ? a_n - a0 : BLOCK;
            float m[BLOCK], sum[BLOCK], dot[BLOCK];
            for (int64_t a = 0; a < len; a++)
                m[a] = xo[a0 + a], sum[a] = 0.0f, dot[a] = 0.0f;
            for (int64_t i = 1; i < r; i++)
                for (int64_t a = 0; a < len; a++)
                    m[a] = xo[i * a_n + a0 + a] > m[a] ? xo[i * a_n + a0 + a] : m[a];
            for (int64_t i = 0; i < r; i++)
                for (int64_t a = 0; a < len; a++) {
                    const float e = expf(xo[i * a_n + a0 + a] - m[a]);
                    sum[a] += e;
                    dot[a] += e * w[i];
                }
            for (int64_t a = 0; a < len; a++)
                y[o * a_n + a0 + a] = dot[a] / sum[a];
        }
    }
}

static int describe_dfl(const struct eb_graph *g, const struct eb_ir_node *n, struct eb_op_desc *d)
{
    const struct eb_dfl_params *p = n->params;
    (void)g;
    d->kind = EB_DESC_DFL;
    d->outer = p->outer;
    d->len = p->bins;
    d->inner = p->inner;
    return 1;
}

const struct eb_op_def eb_op_dfl = {
    .onnx_name = "edgebench.DFL",
    .since_opset = 1,
    .min_inputs = 2,
    .max_inputs = 2,
    .min_outputs = 1,
    .max_outputs = 1,
    .check = check_dfl,
    .infer_shape = infer_dfl,
    .flops = flops_dfl,
    .describe = describe_dfl,
    .exec = exec_dfl,
};
