/* MatMul (float32; batched with numpy broadcasting of the batch dims; rank ≥ 2 operands). */
#include "engine/cpu/fast.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

static enum eb_status check_none(struct eb_op_ctx *ctx)
{
    (void)ctx;
    return EB_OK;
}

static enum eb_status infer_matmul(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *a = eb_op_in(ctx->g, ctx->n, 0), *b = eb_op_in(ctx->g, ctx->n, 1);
    enum eb_status st;
    if ((st = eb_op_want_dtype(ctx, 0, EB_DTYPE_F32)) != EB_OK ||
        (st = eb_op_want_dtype(ctx, 1, EB_DTYPE_F32)) != EB_OK)
        return st;
    if (a->rank < 2 || b->rank < 2)
        return eb_op_unsupported(ctx, "a rank-1 operand");
    if (a->shape[a->rank - 1] != b->shape[b->rank - 2])
        return eb_op_fail(ctx, EB_ERR_FORMAT, "inner dimensions %lld and %lld differ",
                          (long long)a->shape[a->rank - 1], (long long)b->shape[b->rank - 2]);
    struct eb_ir_value ab = *a, bb = *b;
    ab.rank -= 2;
    bb.rank -= 2;
    int64_t shape[EB_MAX_RANK];
    int rank;
    if ((st = eb_op_broadcast(ctx, &ab, &bb, &rank, shape)) != EB_OK)
        return st;
    shape[rank] = a->shape[a->rank - 2];
    shape[rank + 1] = b->shape[b->rank - 1];
    return eb_op_set_out(ctx, 0, EB_DTYPE_F32, rank + 2, shape);
}

static void exec_matmul(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_ir_value *a = eb_op_in(g, n, 0), *b = eb_op_in(g, n, 1);
    const struct eb_ir_value *y = eb_op_out(g, n, 0);
    const int br = y->rank - 2;
    const int64_t m = y->shape[br], k = a->shape[a->rank - 1], nn = y->shape[br + 1];
    int64_t batch = 1;
    for (int d = 0; d < br; d++)
        batch *= y->shape[d];
    const int fast = ex->cpu->isa != EB_CPU_ISA_REF;
    for (int64_t i = 0; i < batch; i++) {
        /* Operand matrix index for output matrix i, broadcasting size-1 batch dims. */
        int64_t ai = 0, bi = 0, sa = 1, sb = 1, rem = i;
        for (int d = br - 1; d >= 0; d--) {
            const int64_t idx = rem % y->shape[d];
            rem /= y->shape[d];
            const int da = d - (br - (a->rank - 2)), db = d - (br - (b->rank - 2));
            if (da >= 0) {
                ai += (a->shape[da] == 1 ? 0 : idx) * sa;
                sa *= a->shape[da];
            }
            if (db >= 0) {
                bi += (b->shape[db] == 1 ? 0 : idx) * sb;
                sb *= b->shape[db];
            }
        }
        const float *ap = (const float *)a->data + ai * m * k;
        const float *bp = (const float *)b->data + bi * k * nn;
        if (fast)
            eb_cpu_matmul_f32(ex->cpu, 1, m, k, nn, ap, 0, bp, 0, (float *)y->data + i * m * nn);
        else
            eb_cpu_matmul_f32__ref(m, k, nn, ap, bp, (float *)y->data + i * m * nn);
    }
}

/* Scratch for the packed SGEMM (operands are packed at run time). */
static enum eb_status prepare_matmul(struct eb_op_prepare *pp)
{
    const struct eb_ir_value *y = eb_op_out(pp->op.g, pp->op.n, 0);
    const struct eb_ir_value *a = eb_op_in(pp->op.g, pp->op.n, 0);
    pp->scratch_bytes = eb_cpu_matmul_f32_scratch(y->shape[y->rank - 2], a->shape[a->rank - 1],
                                                  y->shape[y->rank - 1], pp->n_workers);
    return EB_OK;
}

static int describe_matmul(const struct eb_graph *g, const struct eb_ir_node *n,
                           struct eb_op_desc *d)
{
    (void)g;
    (void)n;
    d->kind = EB_DESC_MATMUL;
    return 1;
}

/* 2 FLOPs per multiply-add: 2 x output elements x K (A's last dim; a 1-D B or A included). */
static uint64_t flops_matmul(const struct eb_graph *g, const struct eb_ir_node *n)
{
    const struct eb_ir_value *a = eb_op_in(g, n, 0), *y = eb_op_out(g, n, 0);
    return 2u * (uint64_t)y->numel * (uint64_t)a->shape[a->rank - 1];
}

const struct eb_op_def eb_op_matmul = {
    .onnx_name = "MatMul",
    .since_opset = 1,
    .min_inputs = 2,
    .max_inputs = 2,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_none,
    .infer_shape = infer_matmul,
    .prepare = prepare_matmul,
    .exec = exec_matmul,
    .describe = describe_matmul,
    .flops = flops_matmul,
};
