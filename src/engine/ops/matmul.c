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

/* B packed at load (prepare_matmul): its panels of nr columns; B's data points at them. */
struct matmul_packed {
    const float *data;
    int nr;
};

/* a (resp. b, with is_b) dim of output batch dim d (of br), or 1 where the operand lacks it. */
static int64_t bdim(const struct eb_ir_value *v, int br, int d)
{
    const int dv = d - (br - (v->rank - 2));
    return dv >= 0 ? v->shape[dv] : 1;
}

/* The trailing batch dims [*ob_out, br) that fold into A's rows, and their product. */
static int64_t fold_rows(const struct eb_ir_value *a, const struct eb_ir_value *b,
                         const struct eb_ir_value *y, int *ob_out)
{
    const int br = y->rank - 2;
    int ob = br;
    int64_t fold = 1;
    while (ob > 0 && ob - 1 >= br - (a->rank - 2) && bdim(b, br, ob - 1) == 1 &&
           bdim(a, br, ob - 1) == y->shape[ob - 1]) {
        fold *= y->shape[ob - 1];
        ob--;
    }
    *ob_out = ob;
    return fold;
}

/* The matrices of `a` and `b` that output matrix `i` reads (its first `nd` of y's `br` batch
 * dims counted, size-1 batch dims broadcast). */
static void operand_index(const struct eb_ir_value *y, int nd, int br, const struct eb_ir_value *a,
                          const struct eb_ir_value *b, int64_t i, int64_t *ai_out, int64_t *bi_out)
{
    int64_t ai = 0, bi = 0, sa = 1, sb = 1, rem = i;
    for (int d = nd - 1; d >= 0; d--) {
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
    *ai_out = ai;
    *bi_out = bi;
}

/*
 * Fast path. Trailing batch dims where B broadcasts (size 1) and A does not are folded into
 * A's rows (those A matrices are consecutive, as are their outputs): grouped-query attention's
 * query heads of one KV head become one product. The outer batch dims then go to one
 * eb_cpu_matmul_f32 call when both operands step uniformly through them (each full, or B
 * broadcast over all of them), else one call per output matrix.
 */
static void exec_matmul_fast(const struct eb_exec *ex, const struct eb_ir_value *a,
                             const struct eb_ir_value *b, const struct eb_ir_value *y)
{
    const int br = y->rank - 2;
    const int64_t m = y->shape[br], k = a->shape[a->rank - 1], nn = y->shape[br + 1];
    int ob;
    const int64_t mf = m * fold_rows(a, b, y, &ob);
    int64_t outer = 1;
    int a_full = 1, b_full = 1, b_none = 1;
    for (int d = 0; d < ob; d++) {
        outer *= y->shape[d];
        const int present_a = d >= br - (a->rank - 2), present_b = d >= br - (b->rank - 2);
        a_full &= present_a && bdim(a, br, d) == y->shape[d];
        b_full &= present_b && bdim(b, br, d) == y->shape[d];
        b_none &= bdim(b, br, d) == 1;
    }
    float *yp = (float *)y->data;
    if (a_full && (b_full || b_none)) {
        eb_cpu_matmul_f32(ex->cpu, outer, mf, k, nn, (const float *)a->data, mf * k,
                          (const float *)b->data, b_full ? k * nn : 0, yp);
        return;
    }
    for (int64_t i = 0; i < outer; i++) {
        int64_t ai, bi;
        operand_index(y, ob, br, a, b, i, &ai, &bi);
        eb_cpu_matmul_f32(ex->cpu, 1, mf, k, nn, (const float *)a->data + ai * mf * k, 0,
                          (const float *)b->data + bi * k * nn, 0, yp + i * mf * nn);
    }
}

/*
 * B packed at load (prepare_matmul): B is one matrix broadcast over every batch dim, so they
 * all fold into A's rows but those A lacks (one product per output matrix of those).
 */
static void exec_matmul_packed(const struct eb_exec *ex, const struct matmul_packed *pk,
                               const struct eb_ir_value *a, const struct eb_ir_value *b,
                               const struct eb_ir_value *y)
{
    const int br = y->rank - 2;
    const int64_t m = y->shape[br], k = a->shape[a->rank - 1], nn = y->shape[br + 1];
    int ob;
    const int64_t mf = m * fold_rows(a, b, y, &ob);
    int64_t outer = 1;
    for (int d = 0; d < ob; d++)
        outer *= y->shape[d];
    for (int64_t i = 0; i < outer; i++) {
        int64_t ai, bi;
        operand_index(y, ob, br, a, b, i, &ai, &bi);
        eb_cpu_matmul_f32_packed(ex->cpu, mf, k, nn, (const float *)a->data + ai * mf * k, pk->data,
                                 pk->nr, (float *)y->data + i * mf * nn);
    }
}

static void exec_matmul(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_ir_value *a = eb_op_in(g, n, 0), *b = eb_op_in(g, n, 1);
    const struct eb_ir_value *y = eb_op_out(g, n, 0);
    if (n->params != NULL) { /* B's data is its packed form: only this path reads it */
        exec_matmul_packed(ex, n->params, a, b, y);
        return;
    }
    if (ex->cpu->isa != EB_CPU_ISA_REF) {
        exec_matmul_fast(ex, a, b, y);
        return;
    }
    const int br = y->rank - 2;
    const int64_t m = y->shape[br], k = a->shape[a->rank - 1], nn = y->shape[br + 1];
    int64_t batch = 1;
    for (int d = 0; d < br; d++)
        batch *= y->shape[d];
    for (int64_t i = 0; i < batch; i++) {
        /* Operand matrix index for output matrix i, broadcasting size-1 batch dims. */
        int64_t ai, bi;
        operand_index(y, br, br, a, b, i, &ai, &bi);
        const float *ap = (const float *)a->data + ai * m * k;
        const float *bp = (const float *)b->data + bi * k * nn;
        eb_cpu_matmul_f32__ref(m, k, nn, ap, bp, (float *)y->data + i * m * nn);
    }
}

/*
 * A constant B that this node alone reads (a decoder's projections) is packed once, here, for
 * the ISA's micro-kernel (eb_cpu_matmul_f32_pack) and replaces B's data: B's bytes stay in the
 * plan's weights, pp->packed_bytes counts only what packing adds (the columns past N up to a
 * multiple of NR). For a moment at load both copies exist (one weight at a time). A B that
 * other nodes or the graph's outputs read too is left as it is and packed at every run.
 * Scratch: the SGEMM's (A's blocks; B's block, unused when B is packed).
 */
static enum eb_status prepare_matmul(struct eb_op_prepare *pp)
{
    struct eb_graph *g = pp->op.g;
    struct eb_ir_node *n = pp->op.n;
    const struct eb_ir_value *y = eb_op_out(pp->op.g, pp->op.n, 0);
    const struct eb_ir_value *a = eb_op_in(pp->op.g, pp->op.n, 0);
    struct eb_ir_value *b = eb_op_in(pp->op.g, pp->op.n, 1);
    const int64_t k = b->shape[b->rank - 2], nn = b->shape[b->rank - 1];
    const size_t bytes = eb_cpu_matmul_f32_pack_bytes(pp->isa, k, nn);
    if (n->params == NULL && bytes > 0 && b->is_const && b->owned_data && b->n_uses == 1 &&
        !b->is_output && !b->dyn && b->numel == k * nn) {
        struct matmul_packed *pk = eb_ir_arena_alloc(&g->arena, sizeof(*pk));
        float *dst = g->alloc.alloc(g->alloc.ctx, bytes, 64);
        if (pk == NULL || dst == NULL) { /* not fatal: B stays as it is, packed at run time */
            g->alloc.free(g->alloc.ctx, dst);
        } else {
            pk->nr = eb_cpu_matmul_f32_pack(pp->isa, k, nn, b->data, dst);
            pk->data = dst;
            g->alloc.free(g->alloc.ctx, b->data);
            b->data = dst;
            n->params = pk;
            pp->packed_bytes = bytes > b->nbytes ? bytes - b->nbytes : 0;
        }
    }
    int ob;
    const int64_t fold = fold_rows(a, b, y, &ob);
    pp->scratch_bytes = eb_cpu_matmul_f32_scratch(
        y->shape[y->rank - 2] * fold, a->shape[a->rank - 1], y->shape[y->rank - 1], pp->n_workers);
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
