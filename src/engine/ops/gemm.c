/* Gemm (float32): Y = alpha * op(A) op(B) + beta * C, C unidirectionally broadcast to [M, N]. */
#include "engine/cpu/fast.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

struct gemm_params {
    int trans_a, trans_b;
    float alpha, beta;
    int64_t m, k, n, c_sm, c_sn; /* filled by infer_shape */
};

static enum eb_status check_gemm(struct eb_op_ctx *ctx)
{
    struct gemm_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    const int64_t ta = eb_op_attr_int(ctx, "transA", 0), tb = eb_op_attr_int(ctx, "transB", 0);
    if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
        return eb_op_fail(ctx, EB_ERR_FORMAT, "transA %lld / transB %lld", (long long)ta,
                          (long long)tb);
    if (eb_op_attr_int(ctx, "broadcast", 1) != 1)
        return eb_op_unsupported(ctx, "broadcast 0");
    p->trans_a = (int)ta;
    p->trans_b = (int)tb;
    p->alpha = eb_op_attr_float(ctx, "alpha", 1.0f);
    p->beta = eb_op_attr_float(ctx, "beta", 1.0f);
    ctx->n->params = p;
    return EB_OK;
}

static enum eb_status infer_gemm(struct eb_op_ctx *ctx)
{
    struct gemm_params *p = ctx->n->params;
    const struct eb_ir_value *a = eb_op_in(ctx->g, ctx->n, 0), *b = eb_op_in(ctx->g, ctx->n, 1);
    const struct eb_ir_value *c = eb_op_in(ctx->g, ctx->n, 2);
    enum eb_status st;
    for (int i = 0; i < 3; i++)
        if ((i < 2 || c != NULL) && (st = eb_op_want_dtype(ctx, i, EB_DTYPE_F32)) != EB_OK)
            return st;
    if (a->rank != 2 || b->rank != 2)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "A and B must be 2-D (ranks %d, %d)", a->rank,
                          b->rank);
    p->m = p->trans_a ? a->shape[1] : a->shape[0];
    p->k = p->trans_a ? a->shape[0] : a->shape[1];
    const int64_t kb = p->trans_b ? b->shape[1] : b->shape[0];
    p->n = p->trans_b ? b->shape[0] : b->shape[1];
    if (kb != p->k)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "inner dimensions %lld and %lld differ",
                          (long long)p->k, (long long)kb);
    p->c_sm = p->c_sn = 0;
    if (c != NULL) {
        if (c->rank > 2)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "C has rank %d", c->rank);
        const int64_t cm = c->rank == 2 ? c->shape[0] : 1;
        const int64_t cn = c->rank >= 1 ? c->shape[c->rank - 1] : 1;
        if ((cm != 1 && cm != p->m) || (cn != 1 && cn != p->n))
            return eb_op_fail(ctx, EB_ERR_FORMAT, "C does not broadcast to [%lld, %lld]",
                              (long long)p->m, (long long)p->n);
        p->c_sn = cn == 1 ? 0 : 1;
        p->c_sm = cm == 1 ? 0 : cn;
    }
    int64_t shape[2] = {p->m, p->n};
    return eb_op_set_out(ctx, 0, EB_DTYPE_F32, 2, shape);
}

static void exec_gemm(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct gemm_params *p = n->params;
    const struct eb_ir_value *c = eb_op_in(g, n, 2);
    float *y = eb_op_out(g, n, 0)->data;
    /* The common case (no transposes, alpha 1): the packed SGEMM, then beta * C added. */
    if (ex->cpu->isa != EB_CPU_ISA_REF && !p->trans_a && !p->trans_b && p->alpha == 1.0f) {
        eb_cpu_matmul_f32(ex->cpu, 1, p->m, p->k, p->n, eb_op_in(g, n, 0)->data, 0,
                          eb_op_in(g, n, 1)->data, 0, y);
        if (c != NULL && p->beta != 0.0f) {
            const float *cv = c->data;
            for (int64_t i = 0; i < p->m; i++)
                for (int64_t j = 0; j < p->n; j++)
                    y[i * p->n + j] += p->beta * cv[i * p->c_sm + j * p->c_sn];
        }
        return;
    }
    eb_cpu_gemm_f32__ref(p->m, p->k, p->n, p->trans_a, p->trans_b, p->alpha,
                         eb_op_in(g, n, 0)->data, eb_op_in(g, n, 1)->data, p->beta,
                         c != NULL ? c->data : NULL, p->c_sm, p->c_sn, eb_op_out(g, n, 0)->data);
}

/* 2 FLOPs per multiply-add: 2 M N K (alpha, beta and C not counted). */
static uint64_t flops_gemm(const struct eb_graph *g, const struct eb_ir_node *n)
{
    (void)g;
    const struct gemm_params *p = n->params;
    return 2u * (uint64_t)p->m * (uint64_t)p->n * (uint64_t)p->k;
}

/* Scratch for the packed SGEMM (operands are packed at run time). */
static enum eb_status prepare_gemm(struct eb_op_prepare *pp)
{
    const struct gemm_params *p = pp->op.n->params;
    pp->scratch_bytes = eb_cpu_matmul_f32_scratch(p->m, p->k, p->n, pp->n_workers);
    return EB_OK;
}

const struct eb_op_def eb_op_gemm = {
    .onnx_name = "Gemm",
    .since_opset = 7,
    .min_inputs = 2,
    .max_inputs = 3,
    .optional_inputs = EB_OP_OPTIONAL(2),
    .min_outputs = 1,
    .max_outputs = 1,
    .check = check_gemm,
    .infer_shape = infer_gemm,
    .prepare = prepare_gemm,
    .exec = exec_gemm,
    .flops = flops_gemm,
};
