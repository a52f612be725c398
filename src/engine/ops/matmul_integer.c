/*
 * MatMulInteger (opset 10): uint8/int8 A [..., M, K] and B [..., K, N] with numpy broadcasting of
 * the batch dims, optional zero points (a_zero_point: one value or one per row of A, M entries;
 * b_zero_point: one value or one per column of B, N entries) of the operand's type; int32 output
 * computed in integer arithmetic. Rank-1 operands are not supported.
 */
#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

static enum eb_status check_none(struct eb_op_ctx *ctx)
{
    (void)ctx;
    return EB_OK;
}

static int is_x8(enum eb_dtype dt)
{
    return dt == EB_DTYPE_U8 || dt == EB_DTYPE_I8;
}

/* A zero point of operand `x` holding `count` entries along dimension `axis_from_end` (1: rows
 * of A, [..., M, 1]; 0: columns of B, [..., 1, N]): one value, or every dim 1 but that one. */
static enum eb_status check_zp(struct eb_op_ctx *ctx, int i, const struct eb_ir_value *x,
                               int64_t count, int axis_from_end)
{
    const struct eb_ir_value *z = eb_op_in(ctx->g, ctx->n, i);
    if (z == NULL)
        return EB_OK;
    if (z->dtype != x->dtype)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "zero point %d of type %s for an input of type %s", i,
                          eb_dtype_name(z->dtype), eb_dtype_name(x->dtype));
    if (z->numel == 1)
        return EB_OK;
    if (z->numel == count && count > 1) {
        /* 1-D [count], or N-D whose only non-1 dim is the matching one. */
        if (z->rank == 1)
            return EB_OK;
        if (z->rank >= 2 && z->shape[z->rank - 1 - axis_from_end] == count)
            return EB_OK;
    }
    return eb_op_unsupported(ctx, "zero point %d with %lld entries (per-batch zero points)", i,
                             (long long)z->numel);
}

static enum eb_status infer_matmul_integer(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *a = eb_op_in(ctx->g, ctx->n, 0), *b = eb_op_in(ctx->g, ctx->n, 1);
    enum eb_status st;
    if (!is_x8(a->dtype) || !is_x8(b->dtype))
        return eb_op_unsupported(ctx, "inputs of type %s and %s", eb_dtype_name(a->dtype),
                                 eb_dtype_name(b->dtype));
    if (a->rank < 2 || b->rank < 2)
        return eb_op_unsupported(ctx, "a rank-1 operand");
    if (a->shape[a->rank - 1] != b->shape[b->rank - 2])
        return eb_op_fail(ctx, EB_ERR_FORMAT, "inner dimensions %lld and %lld differ",
                          (long long)a->shape[a->rank - 1], (long long)b->shape[b->rank - 2]);
    if ((st = check_zp(ctx, 2, a, a->shape[a->rank - 2], 1)) != EB_OK ||
        (st = check_zp(ctx, 3, b, b->shape[b->rank - 1], 0)) != EB_OK)
        return st;
    struct eb_ir_value ab = *a, bb = *b;
    ab.rank -= 2;
    bb.rank -= 2;
    int64_t shape[EB_MAX_RANK];
    int rank;
    if ((st = eb_op_broadcast(ctx, &ab, &bb, &rank, shape)) != EB_OK)
        return st;
    shape[rank] = a->shape[a->rank - 2];
    shape[rank + 1] = b->shape[b->rank - 1];
    return eb_op_set_out(ctx, 0, EB_DTYPE_I32, rank + 2, shape);
}

static uint64_t flops_matmul_integer(const struct eb_graph *g, const struct eb_ir_node *n)
{
    const struct eb_ir_value *a = eb_op_in(g, n, 0), *y = eb_op_out(g, n, 0);
    return 2u * (uint64_t)y->numel * (uint64_t)a->shape[a->rank - 1];
}

static void exec_matmul_integer(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_ir_value *a = eb_op_in(g, n, 0), *b = eb_op_in(g, n, 1);
    const struct eb_ir_value *az = eb_op_in(g, n, 2), *bz = eb_op_in(g, n, 3);
    const struct eb_ir_value *y = eb_op_out(g, n, 0);
    const int br = y->rank - 2;
    const int64_t m = y->shape[br], k = a->shape[a->rank - 1], nn = y->shape[br + 1];
    struct eb_matmul_x8_desc d = {
        .m = m,
        .k = k,
        .n = nn,
        .a_signed = a->dtype == EB_DTYPE_I8,
        .b_signed = b->dtype == EB_DTYPE_I8,
        .a_zp = az != NULL ? az->data : NULL,
        .a_zp_per_row = az != NULL && az->numel > 1,
        .b_zp = bz != NULL ? bz->data : NULL,
        .b_zp_per_col = bz != NULL && bz->numel > 1,
    };
    int64_t batch = 1;
    for (int dd = 0; dd < br; dd++)
        batch *= y->shape[dd];
    for (int64_t i = 0; i < batch; i++) {
        /* Operand matrix index for output matrix i, broadcasting size-1 batch dims. */
        int64_t ai = 0, bi = 0, sa = 1, sb = 1, rem = i;
        for (int dd = br - 1; dd >= 0; dd--) {
            const int64_t idx = rem % y->shape[dd];
            rem /= y->shape[dd];
            const int da = dd - (br - (a->rank - 2)), db = dd - (br - (b->rank - 2));
            if (da >= 0) {
                ai += (a->shape[da] == 1 ? 0 : idx) * sa;
                sa *= a->shape[da];
            }
            if (db >= 0) {
                bi += (b->shape[db] == 1 ? 0 : idx) * sb;
                sb *= b->shape[db];
            }
        }
        eb_cpu_matmul_x8_i32__ref(&d, (const uint8_t *)a->data + ai * m * k,
                                  (const uint8_t *)b->data + bi * k * nn,
                                  (int32_t *)y->data + i * m * nn);
    }
}

const struct eb_op_def eb_op_matmul_integer = {
    .onnx_name = "MatMulInteger",
    .since_opset = 10,
    .min_inputs = 2,
    .max_inputs = 4,
    .optional_inputs = EB_OP_OPTIONAL(2) | EB_OP_OPTIONAL(3),
    .min_outputs = 1,
    .max_outputs = 1,
    .check = check_none,
    .infer_shape = infer_matmul_integer,
    .flops = flops_matmul_integer,
    .exec = exec_matmul_integer,
};
