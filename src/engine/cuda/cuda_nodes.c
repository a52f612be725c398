/*
 * Which nodes the CUDA device runs on the GPU, and how each is enqueued: convolutions through
 * cuDNN (then the fused epilogue kernel), int8 convolutions through cuda_qconv.c, MatMul through
 * cuBLAS, the rest through the kernels of kernels.h. A node without a CUDA path runs on the CPU (cuda_device.c).
 */
#include <stdio.h>
#include <string.h>

#include "engine/cuda/cuda_internal.h"

#define WS_LEAN_BYTES ((size_t)4 << 20) /* a convolution workspace above this must earn it */

size_t eb_cu__es(const struct cu_state *s, const struct eb_ir_value *v)
{
    return v->dtype == EB_DTYPE_F32 ? (size_t)eb_cuk_dt_size(s->dt) : eb_dtype_size(v->dtype);
}

static int fits(const struct eb_ir_value *v)
{
    return v == NULL || (v->numel <= EB_CUK_MAX_ELEMS && v->rank <= EB_CUK_MAX_RANK);
}

static int is_f32(const struct eb_ir_value *v)
{
    return v != NULL && v->dtype == EB_DTYPE_F32;
}

/* Matrix product batches: y's batch dims with each operand broadcast as a whole (same batch
 * dims or a single matrix): one strided batched call (else matmul_bcast's). */
static int matmul_batches(const struct eb_ir_value *a, const struct eb_ir_value *b,
                          const struct eb_ir_value *y, int64_t *batch, int64_t *a_batch,
                          int64_t *b_batch)
{
    *batch = *a_batch = *b_batch = 1;
    for (int d = 0; d < y->rank - 2; d++)
        *batch *= y->shape[d];
    for (int d = 0; d < a->rank - 2; d++)
        *a_batch *= a->shape[d];
    for (int d = 0; d < b->rank - 2; d++)
        *b_batch *= b->shape[d];
    return (*a_batch == 1 || *a_batch == *batch) && (*b_batch == 1 || *b_batch == *batch);
}

/* A MatMul whose operands broadcast dim by dim (grouped-query attention: K and V over the query
 * heads of a group): per batch dim of y (nb of them), each operand's element stride (0 where it
 * broadcasts). The last batch dim goes to one strided batched call, the others are looped. */
struct mm_bcast {
    int nb;
    int64_t shape[EB_MAX_RANK], sa[EB_MAX_RANK], sb[EB_MAX_RANK], sy[EB_MAX_RANK];
    int64_t calls; /* the loop's strided batched calls */
};

static void bcast_strides(const struct eb_ir_value *x, int nb, int64_t *st)
{
    int64_t acc = x->shape[x->rank - 2] * x->shape[x->rank - 1];
    const int xb = x->rank - 2;
    for (int d = 0; d < nb; d++)
        st[d] = 0;
    for (int d = xb - 1; d >= 0; d--) {
        st[d + nb - xb] = x->shape[d] == 1 ? 0 : acc;
        acc *= x->shape[d];
    }
}

static void matmul_bcast(const struct eb_ir_value *a, const struct eb_ir_value *b,
                         const struct eb_ir_value *y, struct mm_bcast *mb)
{
    mb->nb = y->rank - 2;
    mb->calls = 1;
    for (int d = 0; d < mb->nb; d++) {
        mb->shape[d] = y->shape[d];
        if (d < mb->nb - 1)
            mb->calls *= y->shape[d];
    }
    bcast_strides(a, mb->nb, mb->sa);
    bcast_strides(b, mb->nb, mb->sb);
    bcast_strides(y, mb->nb, mb->sy);
}

#define MM_MAX_CALLS 4096 /* a broadcast MatMul's loop of batched calls, at most */

int eb_cu__node_ok(struct eb_engine *e, struct cu_state *s, size_t k, char *why, size_t nwhy)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *n = &g->nodes[e->order[k]];
    struct eb_op_desc *d = &s->nodes[k].d;
    memset(d, 0, sizeof(*d));
    snprintf(why, nwhy, "no CUDA kernel");
    if (n->op->describe == NULL || !n->op->describe(g, n, d))
        return 0;
    for (int i = 0; i < n->n_in; i++)
        if (!fits(eb_op_in(g, n, i)))
            return snprintf(why, nwhy, "a tensor over 2^31 elements"), 0;
    for (int i = 0; i < n->n_out; i++)
        if (!fits(eb_op_out(g, n, i)))
            return snprintf(why, nwhy, "a tensor over 2^31 elements"), 0;
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *y = eb_op_out(g, n, 0);
    switch (d->kind) {
    case EB_DESC_CONV: {
        const struct eb_conv2d_desc *c = &d->conv;
        /* cuDNN pads symmetrically: the output must be what pad_t/pad_l on both sides give. */
        const int64_t oh = (c->ih + 2 * c->pad_t - c->dil_h * (c->kh - 1) - 1) / c->stride_h + 1;
        const int64_t ow = (c->iw + 2 * c->pad_l - c->dil_w * (c->kw - 1) - 1) / c->stride_w + 1;
        if (oh != c->oh || ow != c->ow)
            return snprintf(why, nwhy, "asymmetric padding"), 0;
        return is_f32(x);
    }
    case EB_DESC_BINARY: { /* float, or integers of one type (eb_cuk_binary_int) */
        const struct eb_ir_value *b = eb_op_in(g, n, 1);
        const int ints = (y->dtype == EB_DTYPE_I64 || y->dtype == EB_DTYPE_I32) &&
                         x->dtype == y->dtype && b->dtype == y->dtype;
        return ((is_f32(x) && is_f32(b)) || ints) && y->rank <= EB_CUK_MAX_RANK;
    }
    case EB_DESC_UNARY:
    case EB_DESC_SIGMOID:
    case EB_DESC_SOFTMAX:
    case EB_DESC_DFL:
    case EB_DESC_MAXPOOL:
    case EB_DESC_UPSAMPLE: return is_f32(x) && is_f32(y);
    case EB_DESC_COPY:
    case EB_DESC_CONCAT:
    case EB_DESC_SPLIT:
    case EB_DESC_SLICE:
    case EB_DESC_TRANSPOSE: {
        const size_t es = eb_cu__es(s, x);
        return es == 1 || es == 2 || es == 4 || es == 8;
    }
    case EB_DESC_MATMUL: {
        int64_t batch, ab, bb;
        struct mm_bcast mb;
        matmul_bcast(x, eb_op_in(g, n, 1), y, &mb);
        if (!matmul_batches(x, eb_op_in(g, n, 1), y, &batch, &ab, &bb) &&
            (x->rank < 2 || eb_op_in(g, n, 1)->rank < 2 || mb.calls > MM_MAX_CALLS))
            return snprintf(why, nwhy, "MatMul batch broadcasting"), 0;
        return is_f32(x) && is_f32(eb_op_in(g, n, 1));
    }
    case EB_DESC_GATHER: {
        const size_t es = eb_cu__es(s, x);
        const struct eb_ir_value *ix = eb_op_in(g, n, 1);
        return (es == 1 || es == 2 || es == 4 || es == 8) &&
               (ix->dtype == EB_DTYPE_I64 || ix->dtype == EB_DTYPE_I32);
    }
    case EB_DESC_CAST: return is_f32(y) && (x->dtype == EB_DTYPE_I64 || x->dtype == EB_DTYPE_I32);
    case EB_DESC_REDUCE_MEAN: return is_f32(x) && is_f32(y);
    case EB_DESC_QCONV: return x->dtype == EB_DTYPE_U8; /* every form (cuda_qconv.c) */
    case EB_DESC_QUANTIZE: return is_f32(x) && (y->dtype == EB_DTYPE_U8 || y->dtype == EB_DTYPE_I8);
    case EB_DESC_DEQUANTIZE:
        return (x->dtype == EB_DTYPE_U8 || x->dtype == EB_DTYPE_I8 || x->dtype == EB_DTYPE_I32) &&
               is_f32(y);
    default: return 0;
    }
}

#define CUDNN_TRY(call)                                                                            \
    do {                                                                                           \
        cudnnStatus_t cs_ = (call);                                                                \
        if (cs_ != CUDNN_STATUS_SUCCESS)                                                           \
            return eb_diag_fail(diag, EB_ERR_DEVICE, "model %s node '%s': %s failed: %s", e->what, \
                                n->name, #call, cudnnGetErrorString(cs_));                         \
    } while (0)

enum eb_status eb_cu__conv_plan(struct eb_engine *e, struct cu_state *s, size_t k, size_t ws_max,
                                void *ws, struct eb_diag *diag)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *n = &g->nodes[e->order[k]];
    struct cu_node *cn = &s->nodes[k];
    const struct eb_conv2d_desc *c = &cn->d.conv;
    const struct eb_epilogue *ep = cn->d.epi;
    cn->ep = (struct eb_cuk_epilogue){
        .act = (int)ep->act,
        .alpha = ep->alpha,
        .beta = ep->beta,
        .fq_on = ep->fake_quant,
        .fq_scale = ep->fq_scale,
        .fq_zp = ep->fq_zp,
        .fq_qmin = ep->fq_qmin,
        .fq_qmax = ep->fq_qmax,
    };
    cn->ep_needed = cn->bias != NULL || ep->act != EB_ACT_NONE || ep->residual || ep->fake_quant;
    if (eb_cu__conv_graph_plan(e, s, k, ws_max, ws))
        return EB_OK;
    if (eb_cu__conv_sliced(e, cn, k))
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "model %s node '%s': cuDNN has no fused channels-last convolution for "
                            "this slice of a Concat within a %.1f MiB workspace (what the "
                            "memory limit leaves) with the channels-last layout",
                            e->what, n->name, eb_engine__mib(ws_max));
    const cudnnDataType_t dt = s->dt == EB_CUK_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    CUDNN_TRY(cudnnCreateTensorDescriptor(&cn->xd));
    CUDNN_TRY(cudnnCreateTensorDescriptor(&cn->yd));
    CUDNN_TRY(cudnnCreateFilterDescriptor(&cn->wd));
    CUDNN_TRY(cudnnCreateConvolutionDescriptor(&cn->cd));
    /* input, output and filter all in the conv's layout (the input transposed when needed) */
    const cudnnTensorFormat_t f = cn->nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    CUDNN_TRY(
        cudnnSetTensor4dDescriptor(cn->xd, f, dt, (int)c->n, (int)c->ic, (int)c->ih, (int)c->iw));
    CUDNN_TRY(
        cudnnSetTensor4dDescriptor(cn->yd, f, dt, (int)c->n, (int)c->oc, (int)c->oh, (int)c->ow));
    CUDNN_TRY(cudnnSetFilter4dDescriptor(cn->wd, dt, f, (int)c->oc, (int)(c->ic / c->groups),
                                         (int)c->kh, (int)c->kw));
    CUDNN_TRY(cudnnSetConvolution2dDescriptor(
        cn->cd, (int)c->pad_t, (int)c->pad_l, (int)c->stride_h, (int)c->stride_w, (int)c->dil_h,
        (int)c->dil_w, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CUDNN_TRY(cudnnSetConvolutionGroupCount(cn->cd, (int)c->groups));
    /* fp32 stays fp32 (FMA: no TF32, so that it matches the CPU within 1e-3); fp16 uses the
     * tensor cores with float accumulation. */
    CUDNN_TRY(cudnnSetConvolutionMathType(cn->cd, s->dt == EB_CUK_F16 ? CUDNN_TENSOR_OP_MATH
                                                                      : CUDNN_FMA_MATH));
    /* Measure the candidates on this GPU with the real buffers (the output is overwritten by
     * the first run anyway) and keep the fastest within the workspace budget. */
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int found = 0;
    CUDNN_TRY(cudnnFindConvolutionForwardAlgorithmEx(
        s->cudnn, cn->xd, cn->x_xpose ? s->d_xpose : s->dptr[n->in[0]], cn->wd, s->dptr[n->in[1]],
        cn->cd, cn->yd, s->dptr[n->out[0]], CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf, ws,
        ws_max));
    /* The fastest; but where it needs a large workspace, a leaner one within 10% of its time
     * (device memory is the budget on an 8 GB Orin). perf is sorted by time. */
    int pick = -1;
    for (int i = 0; i < found && pick < 0; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= ws_max)
            pick = i;
    const float best = pick >= 0 ? perf[pick].time : 0.0f;
    for (int i = pick + 1; pick >= 0 && perf[pick].memory > WS_LEAN_BYTES && i < found; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory < perf[pick].memory &&
            perf[i].time <= 1.10f * best)
            pick = i;
    if (pick < 0)
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "model %s node '%s': cuDNN has no convolution algorithm for this "
                            "shape within a %.1f MiB workspace (what the memory limit leaves)",
                            e->what, n->name, eb_engine__mib(ws_max));
    cn->algo = perf[pick].algo;
    cn->ws_bytes = perf[pick].memory;
    return EB_OK;
}

void eb_cu__node_free(struct cu_node *cn)
{
    if (cn->xd != NULL)
        cudnnDestroyTensorDescriptor(cn->xd);
    if (cn->yd != NULL)
        cudnnDestroyTensorDescriptor(cn->yd);
    if (cn->wd != NULL)
        cudnnDestroyFilterDescriptor(cn->wd);
    if (cn->cd != NULL)
        cudnnDestroyConvolutionDescriptor(cn->cd);
    if (cn->g_vpack != NULL)
        cudnnBackendDestroyDescriptor(cn->g_vpack);
    if (cn->g_plan != NULL)
        cudnnBackendDestroyDescriptor(cn->g_plan);
    cn->g_vpack = cn->g_plan = NULL;
    cn->xd = cn->yd = NULL;
    cn->wd = NULL;
    cn->cd = NULL;
}

/* A copy over `shape` (rank dims) with x and y element strides given per dim. */
static struct eb_cuk_copy copy_desc(int rank, const int64_t *shape, const int64_t *xs,
                                    const int64_t *ys)
{
    struct eb_cuk_copy c = {.rank = rank};
    for (int d = 0; d < rank; d++) {
        c.shape[d] = (int32_t)shape[d];
        c.xs[d] = (int32_t)xs[d];
        c.ys[d] = (int32_t)ys[d];
    }
    return c;
}

cudaError_t eb_cu__to_xpose(struct cu_state *s, const struct eb_ir_value *x, int nhwc,
                            const void *xp, cudaStream_t st)
{
    int64_t xs[EB_MAX_RANK], ts[EB_MAX_RANK];
    struct eb_ir_value t = *x;
    t.nhwc = nhwc;
    t.cpitch = 0;
    eb_cu__strides(x, xs);
    eb_cu__strides(&t, ts);
    const struct eb_cuk_copy c = copy_desc(x->rank, x->shape, xs, ts);
    return eb_cuk_copy_nd(st, (int)eb_cu__es(s, x), &c, xp, s->d_xpose);
}

/* Contiguous NCHW strides of v's shape (whatever its layout on the device). */
static void dense_strides(const struct eb_ir_value *v, int64_t *st)
{
    int64_t acc = 1;
    for (int d = v->rank - 1; d >= 0; d--) {
        st[d] = acc;
        acc *= v->shape[d];
    }
}

/* Concat (split = 0) or Split (split = 1) along `axis`: every part `p` is the slice of the
 * whole `w` starting at its running offset, copied through both sides' strides, all parts in
 * one launch (eb_cuk_copy_parts; in batches of EB_CUK_MAX_PARTS). A part the memory plan already
 * placed in its slice (NCHW, contiguous slice) is not copied. */
static cudaError_t concat_split(const struct cu_state *s, cudaStream_t stream,
                                const struct eb_ir_node *n, const struct eb_graph *g, int axis,
                                int split)
{
    const int wid = split ? n->in[0] : n->out[0];
    const struct eb_ir_value *w = &g->values[wid];
    const size_t es = eb_cu__es(s, w);
    int64_t ws[EB_MAX_RANK], ps[EB_MAX_RANK], off = 0;
    eb_cu__strides(w, ws);
    int contiguous = !w->nhwc;
    for (int d = 0; d < axis; d++)
        contiguous &= w->shape[d] == 1;
    cudaError_t ce = cudaSuccess;
    const int n_parts = split ? n->n_out : n->n_in;
    struct eb_cuk_copy c[EB_CUK_MAX_PARTS];
    const void *xs[EB_CUK_MAX_PARTS];
    void *ys[EB_CUK_MAX_PARTS];
    int m = 0;
    for (int i = 0; i < n_parts && ce == cudaSuccess; i++) {
        const int pid = split ? n->out[i] : n->in[i];
        const struct eb_ir_value *p = &g->values[pid];
        eb_cu__strides(p, ps);
        const int64_t w_off = off * ws[axis];
        off += p->shape[axis];
        /* in place: a contiguous slice, or a channels-last slice of w's rows (memplan.h) */
        const int slice =
            contiguous ? !p->nhwc : p->nhwc && w->nhwc && axis == 1 && p->cpitch == w->shape[1];
        if (slice && (char *)s->dptr[pid] == (char *)s->dptr[wid] + w_off * (int64_t)es)
            continue;
        c[m] = copy_desc(p->rank, p->shape, split ? ws : ps, split ? ps : ws);
        if (split)
            c[m].x_off = w_off;
        else
            c[m].y_off = w_off;
        xs[m] = split ? s->dptr[wid] : s->dptr[pid];
        ys[m] = split ? s->dptr[pid] : s->dptr[wid];
        if (++m == EB_CUK_MAX_PARTS || i == n_parts - 1) {
            ce = eb_cuk_copy_parts(stream, (int)es, m, c, xs, ys);
            m = 0;
        }
    }
    if (ce == cudaSuccess && m > 0)
        ce = eb_cuk_copy_parts(stream, (int)es, m, c, xs, ys);
    return ce;
}

static cudaError_t enqueue_matmul(struct eb_engine *e, struct cu_state *s,
                                  const struct eb_ir_node *n, cublasStatus_t *bs)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_value *a = eb_op_in(g, n, 0), *b = eb_op_in(g, n, 1);
    const struct eb_ir_value *y = eb_op_out(g, n, 0);
    int64_t batch, ab, bb;
    const int m = (int)y->shape[y->rank - 2], nn = (int)y->shape[y->rank - 1];
    const int kk = (int)a->shape[a->rank - 1];
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType_t t = s->dt == EB_CUK_F16 ? CUDA_R_16F : CUDA_R_32F;
    if (!matmul_batches(a, b, y, &batch, &ab, &bb)) {
        /* broadcast dim by dim: the last batch dim strided, the others looped */
        struct mm_bcast mb;
        matmul_bcast(a, b, y, &mb);
        const int last = mb.nb - 1;
        const size_t es = (size_t)eb_cuk_dt_size(s->dt);
        for (int64_t c = 0; c < mb.calls && *bs == CUBLAS_STATUS_SUCCESS; c++) {
            int64_t oa = 0, ob = 0, oy = 0, rest = c;
            for (int d = last - 1; d >= 0; d--) {
                const int64_t i = rest % mb.shape[d];
                rest /= mb.shape[d];
                oa += i * mb.sa[d];
                ob += i * mb.sb[d];
                oy += i * mb.sy[d];
            }
            *bs = cublasGemmStridedBatchedEx(
                s->cublas, CUBLAS_OP_N, CUBLAS_OP_N, nn, m, kk, &one,
                (const char *)s->dptr[n->in[1]] + (size_t)ob * es, t, nn, (long long)mb.sb[last],
                (const char *)s->dptr[n->in[0]] + (size_t)oa * es, t, kk, (long long)mb.sa[last],
                &zero, (char *)s->dptr[n->out[0]] + (size_t)oy * es, t, nn, (long long)mb.sy[last],
                (int)mb.shape[last], CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        }
        return cudaSuccess;
    }
    /* Row-major Y = A B is column-major Y^T = B^T A^T. */
    *bs = cublasGemmStridedBatchedEx(s->cublas, CUBLAS_OP_N, CUBLAS_OP_N, nn, m, kk, &one,
                                     s->dptr[n->in[1]], t, nn, bb == 1 ? 0 : (long long)kk * nn,
                                     s->dptr[n->in[0]], t, kk, ab == 1 ? 0 : (long long)m * kk,
                                     &zero, s->dptr[n->out[0]], t, nn, (long long)m * nn,
                                     (int)batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    return cudaSuccess;
}

/* The order index of the one live node after order[k] that reads value v (-1: none). */
static int64_t reader_after(const struct eb_engine *e, size_t k, int32_t v)
{
    for (size_t j = k + 1; j < e->n_order; j++) {
        const struct eb_ir_node *n = &e->g->nodes[e->order[j]];
        for (int i = 0; i < n->n_in; i++)
            if (n->in[i] == v)
                return (int64_t)j;
    }
    return -1;
}

/* Node j (order) is a GPU node of desc kind `kind` (binop/unop where they apply) reading v once
 * more in its chain: v a value read only there, not a graph output. */
static int chain_step(const struct eb_engine *e, const struct cu_state *s, int64_t j,
                      enum eb_desc_kind kind, int op)
{
    if (j < 0 || s->on_cpu[j] || s->nodes[j].d.kind != kind)
        return 0;
    const struct eb_op_desc *d = &s->nodes[j].d;
    if (kind == EB_DESC_BINARY && (int)d->binop != op)
        return 0;
    if (kind == EB_DESC_UNARY && (int)d->unop != op)
        return 0;
    const struct eb_ir_node *n = &e->g->nodes[e->order[j]];
    return n->n_out == 1 && !e->g->values[n->out[0]].is_output;
}

/* The one value of n a chain passes on: read by one node, not a graph output. */
static int passes_on(const struct eb_graph *g, const struct eb_ir_node *n)
{
    const struct eb_ir_value *v = &g->values[n->out[0]];
    return v->n_uses == 1 && !v->is_output;
}

/* A float constant with `numel` elements whose dims but the last are 1 (NULL otherwise). */
static const struct eb_ir_value *const_vec(const struct eb_graph *g, int32_t id, int64_t numel)
{
    if (id < 0)
        return NULL;
    const struct eb_ir_value *c = &g->values[id];
    if (!c->is_const || c->dtype != EB_DTYPE_F32 || c->numel != numel || c->data == NULL)
        return NULL;
    for (int d = 0; d + 1 < c->rank; d++)
        if (c->shape[d] != 1)
            return NULL;
    return c;
}

size_t eb_cu__fuse_rms_norm(struct eb_engine *e, struct cu_state *s)
{
    const struct eb_graph *g = e->g;
    size_t absorbed = 0;
    for (size_t kq = 0; g->dynamic && kq < e->n_order; kq++) {
        const struct eb_ir_node *nq = &g->nodes[e->order[kq]];
        if (!chain_step(e, s, (int64_t)kq, EB_DESC_BINARY, EB_BINOP_MUL) || nq->n_in != 2 ||
            nq->in[0] != nq->in[1] || !passes_on(g, nq))
            continue;
        const int32_t x = nq->in[0];
        const struct eb_ir_value *xv = &g->values[x];
        if (xv->rank < 1 || xv->dtype != EB_DTYPE_F32)
            continue;
        const int64_t hidden = xv->shape[xv->rank - 1];
        const int64_t kr = reader_after(e, kq, nq->out[0]);
        if (!chain_step(e, s, kr, EB_DESC_REDUCE_MEAN, 0))
            continue;
        const struct eb_ir_node *nr = &g->nodes[e->order[kr]];
        const struct eb_op_desc *dr = &s->nodes[kr].d;
        if (dr->inner != 1 || dr->len != hidden || g->values[nr->out[0]].rank != xv->rank ||
            !passes_on(g, nr))
            continue;
        const int64_t ka = reader_after(e, (size_t)kr, nr->out[0]);
        if (!chain_step(e, s, ka, EB_DESC_BINARY, EB_BINOP_ADD))
            continue;
        const struct eb_ir_node *na = &g->nodes[e->order[ka]];
        const int32_t c_id = na->in[0] == nr->out[0] ? na->in[1] : na->in[0];
        const struct eb_ir_value *eps = const_vec(g, c_id, 1);
        if (na->n_in != 2 || eps == NULL || !passes_on(g, na))
            continue;
        const int64_t ks = reader_after(e, (size_t)ka, na->out[0]);
        if (!chain_step(e, s, ks, EB_DESC_UNARY, EB_UNOP_SQRT))
            continue;
        const struct eb_ir_node *ns = &g->nodes[e->order[ks]];
        if (!passes_on(g, ns))
            continue;
        const int64_t kd = reader_after(e, (size_t)ks, ns->out[0]);
        if (!chain_step(e, s, kd, EB_DESC_BINARY, EB_BINOP_DIV))
            continue;
        const struct eb_ir_node *nd = &g->nodes[e->order[kd]];
        if (nd->n_in != 2 || nd->in[0] != x || nd->in[1] != ns->out[0] || !passes_on(g, nd))
            continue;
        /* the weight Mul right after the Div: nothing between them may take x's bytes */
        const int64_t kw = kd + 1;
        if (reader_after(e, (size_t)kd, nd->out[0]) != kw ||
            !chain_step(e, s, kw, EB_DESC_BINARY, EB_BINOP_MUL))
            continue;
        const struct eb_ir_node *nw = &g->nodes[e->order[kw]];
        const int32_t w_id = nw->in[0] == nd->out[0] ? nw->in[1] : nw->in[0];
        if (nw->n_in != 2 || const_vec(g, w_id, hidden) == NULL ||
            g->values[nw->out[0]].rank != xv->rank)
            continue;
        struct cu_node *cw = &s->nodes[kw];
        cw->rms = 1;
        cw->rms_x = x;
        cw->rms_w = w_id;
        cw->rms_eps = *(const float *)eps->data;
        s->nodes[kq].skip = s->nodes[kr].skip = s->nodes[ka].skip = 1;
        s->nodes[ks].skip = s->nodes[kd].skip = 1;
        absorbed += 5;
    }
    return absorbed;
}

/* The order index of the live node that writes value v (-1: none, a graph input or constant). */
static int64_t writer_of(const struct eb_engine *e, int32_t v)
{
    for (size_t k = 0; v >= 0 && k < e->n_order; k++) {
        const struct eb_ir_node *n = &e->g->nodes[e->order[k]];
        for (int o = 0; o < n->n_out; o++)
            if (n->out[o] == v)
                return (int64_t)k;
    }
    return -1;
}

int eb_cu__read_more(struct eb_engine *e, size_t k, const int32_t *extra, int n)
{
    struct eb_graph *g = e->g;
    struct eb_ir_node *no = &g->nodes[e->order[k]];
    int *in = eb_ir_arena_alloc(&g->arena, (size_t)(no->n_in + n) * sizeof(int));
    if (in == NULL)
        return 0;
    memcpy(in, no->in, (size_t)no->n_in * sizeof(int));
    for (int i = 0; i < n; i++)
        in[no->n_in + i] = extra[i];
    no->in = in;
    no->n_in += n;
    return 1;
}

/* Node j is a Transpose with this permutation of a rank-`rank` value, passing its output on. */
static int transpose_step(const struct eb_engine *e, const struct cu_state *s, int64_t j,
                          const int64_t *perm, int rank)
{
    if (!chain_step(e, s, j, EB_DESC_TRANSPOSE, 0))
        return 0;
    const struct eb_ir_node *n = &e->g->nodes[e->order[j]];
    if (eb_op_in(e->g, n, 0)->rank != rank)
        return 0;
    for (int d = 0; d < rank; d++)
        if (s->nodes[j].d.perm[d] != perm[d])
            return 0;
    return 1;
}

/* Node j is an Unsqueeze-like copy of a rank-4 value x into [x0, x1, 1, x2, x3] (x: *x_out). */
static int unsqueeze2_step(const struct eb_engine *e, const struct cu_state *s, int64_t j,
                           int32_t *x_out)
{
    if (!chain_step(e, s, j, EB_DESC_COPY, 0) || !passes_on(e->g, &e->g->nodes[e->order[j]]))
        return 0;
    const struct eb_ir_node *n = &e->g->nodes[e->order[j]];
    const struct eb_ir_value *x = eb_op_in(e->g, n, 0), *y = eb_op_out(e->g, n, 0);
    *x_out = n->in[0];
    return x->rank == 4 && y->rank == 5 && y->shape[0] == x->shape[0] &&
           y->shape[1] == x->shape[1] && y->shape[2] == 1 && y->shape[3] == x->shape[2] &&
           y->shape[4] == x->shape[3];
}

/* One attention chain ending in order[kx], a Softmax over the last axis: 0 when it is not one. */
static size_t fuse_attention_at(struct eb_engine *e, struct cu_state *s, size_t kx, int max_smem)
{
    struct eb_graph *g = e->g;
    static const int64_t q_perm[5] = {0, 2, 3, 1, 4}, k_perm[4] = {0, 1, 3, 2};
    static const int64_t o_perm[5] = {0, 3, 1, 2, 4};
    const struct eb_ir_node *nx = &g->nodes[e->order[kx]];
    if (!chain_step(e, s, (int64_t)kx, EB_DESC_SOFTMAX, 0) || s->nodes[kx].d.inner != 1 ||
        !passes_on(g, nx))
        return 0;
    /* backwards: Add (mask) <- Mul (scale) <- MatMul (q, K) */
    const int64_t ka = writer_of(e, nx->in[0]);
    if (!chain_step(e, s, ka, EB_DESC_BINARY, EB_BINOP_ADD))
        return 0;
    const struct eb_ir_node *na = &g->nodes[e->order[ka]];
    int64_t km = -1;
    int32_t mask = -1;
    for (int i = 0; i < 2 && km < 0 && na->n_in == 2; i++) {
        const int64_t w = writer_of(e, na->in[i]);
        if (chain_step(e, s, w, EB_DESC_BINARY, EB_BINOP_MUL)) {
            km = w;
            mask = na->in[1 - i];
        }
    }
    if (km < 0 || !passes_on(g, na) || !passes_on(g, &g->nodes[e->order[km]]))
        return 0;
    const struct eb_ir_node *nm = &g->nodes[e->order[km]];
    const int sc_in = const_vec(g, nm->in[0], 1) != NULL ? 0 : 1;
    const struct eb_ir_value *scale = const_vec(g, nm->in[sc_in], 1);
    const int64_t kq = writer_of(e, nm->in[1 - sc_in]);
    if (nm->n_in != 2 || scale == NULL || !chain_step(e, s, kq, EB_DESC_MATMUL, 0) ||
        !passes_on(g, &g->nodes[e->order[kq]]))
        return 0;
    const struct eb_ir_node *nq = &g->nodes[e->order[kq]];
    const int64_t kt = writer_of(e, nq->in[0]), ku = writer_of(e, nq->in[1]);
    int32_t kt_v = -1, v_v = -1;
    if (!transpose_step(e, s, kt, q_perm, 5) || !passes_on(g, &g->nodes[e->order[kt]]) ||
        !unsqueeze2_step(e, s, ku, &kt_v))
        return 0;
    const int64_t kk = writer_of(e, kt_v);
    if (!transpose_step(e, s, kk, k_perm, 4) || !passes_on(g, &g->nodes[e->order[kk]]))
        return 0;
    /* forwards: MatMul (probabilities, V) -> Transpose back to [batch, rows, kv, group, d] */
    const int64_t kv = reader_after(e, kx, nx->out[0]);
    if (!chain_step(e, s, kv, EB_DESC_MATMUL, 0))
        return 0;
    const struct eb_ir_node *nv = &g->nodes[e->order[kv]];
    const int64_t kvu = writer_of(e, nv->in[1]);
    if (nv->in[0] != nx->out[0] || !passes_on(g, nv) || !unsqueeze2_step(e, s, kvu, &v_v))
        return 0;
    const int64_t ko = reader_after(e, (size_t)kv, nv->out[0]);
    if (ko < 0 || s->on_cpu[ko] || s->nodes[ko].d.kind != EB_DESC_TRANSPOSE ||
        !transpose_step(e, s, ko, o_perm, 5))
        return 0;
    /* the shapes at their bounds: q [1, S, KH, G, D], K and V [1, KH, L, D], mask [.., S, L] */
    const int32_t q5 = g->nodes[e->order[kt]].in[0], kc = g->nodes[e->order[kk]].in[0];
    const struct eb_ir_value *qv = &g->values[q5], *K = &g->values[kc], *V = &g->values[v_v];
    const struct eb_ir_value *M = &g->values[mask];
    if (qv->rank != 5 || K->rank != 4 || V->rank != 4 || qv->shape[0] != 1 || K->shape[0] != 1 ||
        K->shape[1] != qv->shape[2] || K->shape[3] != qv->shape[4] ||
        memcmp(K->shape, V->shape, sizeof(int64_t) * 4) != 0 || M->rank < 2 ||
        M->shape[M->rank - 1] != K->shape[2] || M->shape[M->rank - 2] != qv->shape[1] ||
        M->numel != qv->shape[1] * K->shape[2] || qv->dtype != EB_DTYPE_F32 ||
        K->dtype != EB_DTYPE_F32 || V->dtype != EB_DTYPE_F32 || M->dtype != EB_DTYPE_F32 ||
        !eb_cuk_attn_takes(s->dt, qv->shape[4]) ||
        eb_cuk_attn_smem_bytes(s->dt, qv->shape[4], K->shape[2]) > (size_t)max_smem)
        return 0;
    /* the last node reads the chain's inputs too: the plan keeps them until it has run */
    const int32_t extra[4] = {q5, kc, v_v, mask};
    if (!eb_cu__read_more(e, (size_t)ko, extra, 4))
        return 0;
    const int64_t members[9] = {kt, kk, ku, kq, km, ka, (int64_t)kx, kvu, kv};
    for (int i = 0; i < 9; i++) {
        s->nodes[members[i]].attn = 1;
        s->nodes[members[i]].attn_q = q5;
    }
    struct cu_node *co = &s->nodes[ko];
    co->attn = 2;
    co->attn_q = q5;
    co->attn_k = kc;
    co->attn_v = v_v;
    co->attn_mask = mask;
    co->attn_scale = *(const float *)scale->data;
    return 9;
}

size_t eb_cu__fuse_attention(struct eb_engine *e, struct cu_state *s)
{
    int max_smem = 0;
    if (!e->g->dynamic || cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                                 s->gpu) != cudaSuccess)
        return 0;
    size_t absorbed = 0;
    for (size_t kx = 0; kx < e->n_order; kx++)
        absorbed += fuse_attention_at(e, s, kx, max_smem);
    return absorbed;
}

/* A float value of x's shape but dim rank-2 (the heads) 1: a rotary table row per token. */
static int rope_table(const struct eb_graph *g, int32_t id, const struct eb_ir_value *x)
{
    const struct eb_ir_value *c = id >= 0 ? &g->values[id] : NULL;
    if (c == NULL || c->dtype != EB_DTYPE_F32 || c->rank != x->rank)
        return 0;
    for (int d = 0; d < x->rank; d++)
        if (c->shape[d] != (d == x->rank - 2 ? 1 : x->shape[d]))
            return 0;
    return 1;
}

/* One rotary embedding ending in order[ka], an Add of Mul(x, cos) and Mul(Concat(x1, x0), sin)
 * with x0, x1 = Split(x) in halves along the last axis: 4 absorbed, else 0. */
static size_t fuse_rope_at(struct eb_engine *e, struct cu_state *s, size_t ka)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *na = &g->nodes[e->order[ka]];
    if (!chain_step(e, s, (int64_t)ka, EB_DESC_BINARY, EB_BINOP_ADD) || na->n_in != 2)
        return 0;
    for (int order = 0; order < 2; order++) {
        const int64_t kc = writer_of(e, na->in[order]), ks = writer_of(e, na->in[1 - order]);
        if (!chain_step(e, s, kc, EB_DESC_BINARY, EB_BINOP_MUL) ||
            !chain_step(e, s, ks, EB_DESC_BINARY, EB_BINOP_MUL))
            continue;
        const struct eb_ir_node *nc = &g->nodes[e->order[kc]], *ns = &g->nodes[e->order[ks]];
        if (nc->n_in != 2 || ns->n_in != 2 || !passes_on(g, nc) || !passes_on(g, ns))
            continue;
        for (int si = 0; si < 2; si++) { /* which of the sine Mul's inputs is the Concat */
            const int64_t kr = writer_of(e, ns->in[si]);
            if (!chain_step(e, s, kr, EB_DESC_CONCAT, 0))
                continue;
            const struct eb_ir_node *nr = &g->nodes[e->order[kr]];
            const int64_t ksp = nr->n_in == 2 ? writer_of(e, nr->in[0]) : -1;
            if (ksp < 0 || s->on_cpu[ksp] || s->nodes[ksp].d.kind != EB_DESC_SPLIT ||
                !passes_on(g, nr))
                continue;
            const struct eb_ir_node *nsp = &g->nodes[e->order[ksp]];
            const int32_t x = nsp->in[0];
            const struct eb_ir_value *xv = &g->values[x];
            if (nsp->n_out != 2 || nr->in[0] != nsp->out[1] || nr->in[1] != nsp->out[0] ||
                xv->rank < 3 || xv->dtype != EB_DTYPE_F32 || xv->shape[xv->rank - 1] % 2 != 0 ||
                s->nodes[ksp].d.axis != xv->rank - 1 || s->nodes[kr].d.axis != xv->rank - 1 ||
                g->values[nsp->out[0]].shape[xv->rank - 1] != xv->shape[xv->rank - 1] / 2 ||
                g->values[nsp->out[0]].n_uses != 1 || g->values[nsp->out[1]].n_uses != 1 ||
                g->values[nsp->out[0]].is_output || g->values[nsp->out[1]].is_output)
                continue;
            const int ci = nc->in[0] == x ? 1 : nc->in[1] == x ? 0 : -1;
            if (ci < 0 || !rope_table(g, nc->in[ci], xv) || !rope_table(g, ns->in[1 - si], xv) ||
                eb_op_out(g, na, 0)->numel != xv->numel)
                continue;
            const int32_t extra[3] = {x, nc->in[ci], ns->in[1 - si]};
            if (!eb_cu__read_more(e, ka, extra, 3))
                return 0;
            struct cu_node *cn = &s->nodes[ka];
            cn->rope = 1;
            cn->rope_x = extra[0];
            cn->rope_cos = extra[1];
            cn->rope_sin = extra[2];
            s->nodes[ksp].skip = s->nodes[kr].skip = 1;
            s->nodes[kc].skip = s->nodes[ks].skip = 1;
            return 4;
        }
    }
    return 0;
}

/* A chain fusion's `at` (the nodes one chain ending at order[k] absorbs, 0: none) over every node
 * of a dynamic graph: the nodes absorbed. */
static size_t fuse_each(struct eb_engine *e, struct cu_state *s,
                        size_t (*at)(struct eb_engine *, struct cu_state *, size_t))
{
    size_t absorbed = 0;
    for (size_t k = 0; e->g->dynamic && k < e->n_order; k++)
        absorbed += at(e, s, k);
    return absorbed;
}

size_t eb_cu__fuse_rope(struct eb_engine *e, struct cu_state *s)
{
    return fuse_each(e, s, fuse_rope_at);
}

/* One MatMul by a constant weight whose product only the Add order[ka] reads, of a bias vector
 * or of a value of the product's shape: 1 absorbed (the MatMul), else 0. */
static size_t fuse_matmul_add_at(struct eb_engine *e, struct cu_state *s, size_t ka)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *na = &g->nodes[e->order[ka]];
    if (!chain_step(e, s, (int64_t)ka, EB_DESC_BINARY, EB_BINOP_ADD) || na->n_in != 2 ||
        na->in[0] == na->in[1] || s->nodes[ka].skip)
        return 0;
    for (int i = 0; i < 2; i++) {
        const int64_t km = writer_of(e, na->in[i]);
        if (!chain_step(e, s, km, EB_DESC_MATMUL, 0) || s->nodes[km].skip)
            continue;
        const struct eb_ir_node *nm = &g->nodes[e->order[km]];
        if (nm->n_in != 2 || nm->in[0] < 0 || nm->in[1] < 0 || !passes_on(g, nm))
            continue;
        const struct eb_ir_value *a = &g->values[nm->in[0]], *w = &g->values[nm->in[1]];
        const struct eb_ir_value *p = &g->values[nm->out[0]], *c = &g->values[na->in[1 - i]];
        const struct eb_ir_value *y = eb_op_out(g, na, 0);
        if (!w->is_const || w->rank != 2 || w->dtype != EB_DTYPE_F32 || a->is_const ||
            a->dtype != EB_DTYPE_F32 || a->rank < 2 || a->shape[a->rank - 1] != w->shape[0] ||
            p->rank != a->rank || y->rank != p->rank ||
            memcmp(y->shape, p->shape, (size_t)p->rank * sizeof(int64_t)) != 0)
            continue;
        const int bias = const_vec(g, na->in[1 - i], w->shape[1]) != NULL;
        if (!bias && (c->is_const || c->dtype != EB_DTYPE_F32 || c->rank != p->rank ||
                      memcmp(c->shape, p->shape, (size_t)p->rank * sizeof(int64_t)) != 0))
            continue;
        const int32_t extra[2] = {nm->in[0], nm->in[1]};
        if (!eb_cu__read_more(e, ka, extra, 2))
            return 0;
        struct cu_node *cn = &s->nodes[ka];
        cn->mm = 1;
        cn->mm_bias = bias;
        cn->mm_a = extra[0];
        cn->mm_w = extra[1];
        cn->mm_c = na->in[1 - i];
        s->nodes[km].skip = 1;
        e->g->nodes[e->order[ka]].fused = bias ? "matmul+bias" : "matmul+residual"; /* --profile */
        return 1;
    }
    return 0;
}

size_t eb_cu__fuse_matmul_add(struct eb_engine *e, struct cu_state *s)
{
    return fuse_each(e, s, fuse_matmul_add_at);
}

/* Value v's shape is value w's (rank and every dim). */
static int same_shape(const struct eb_graph *g, int32_t v, int32_t w)
{
    const struct eb_ir_value *a = &g->values[v], *b = &g->values[w];
    return a->rank == b->rank && memcmp(a->shape, b->shape, (size_t)a->rank * sizeof(int64_t)) == 0;
}

/* One SwiGLU ending in order[ko], a Mul of Mul(g, Sigmoid(g)) and u: 2 absorbed, else 0. */
static size_t fuse_swiglu_at(struct eb_engine *e, struct cu_state *s, size_t ko)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *no = &g->nodes[e->order[ko]];
    if (!chain_step(e, s, (int64_t)ko, EB_DESC_BINARY, EB_BINOP_MUL) || no->n_in != 2 ||
        no->in[0] < 0 || no->in[1] < 0 || s->nodes[ko].skip || s->nodes[ko].rms)
        return 0;
    for (int i = 0; i < 2; i++) {
        const int64_t km = writer_of(e, no->in[i]);
        if (!chain_step(e, s, km, EB_DESC_BINARY, EB_BINOP_MUL) || s->nodes[km].skip)
            continue;
        const struct eb_ir_node *nm = &g->nodes[e->order[km]];
        if (nm->n_in != 2 || nm->in[0] < 0 || nm->in[1] < 0 || !passes_on(g, nm))
            continue;
        for (int j = 0; j < 2; j++) {
            const int64_t ks = writer_of(e, nm->in[j]);
            if (!chain_step(e, s, ks, EB_DESC_SIGMOID, 0))
                continue;
            const struct eb_ir_node *ns = &g->nodes[e->order[ks]];
            const int32_t gv = nm->in[1 - j], u = no->in[1 - i];
            if (ns->n_in != 1 || ns->in[0] != gv || !passes_on(g, ns) ||
                g->values[gv].dtype != EB_DTYPE_F32 || g->values[u].dtype != EB_DTYPE_F32 ||
                !same_shape(g, gv, u) || !same_shape(g, gv, no->out[0]) ||
                !same_shape(g, gv, nm->out[0]))
                continue;
            if (!eb_cu__read_more(e, ko, &gv, 1))
                return 0;
            struct cu_node *cn = &s->nodes[ko];
            cn->glu = 1;
            cn->glu_g = gv;
            cn->glu_u = u;
            s->nodes[km].skip = s->nodes[ks].skip = 1;
            e->g->nodes[e->order[ko]].fused = "swiglu"; /* --profile */
            return 2;
        }
    }
    return 0;
}

size_t eb_cu__fuse_swiglu(struct eb_engine *e, struct cu_state *s)
{
    return fuse_each(e, s, fuse_swiglu_at);
}

/* The fused attention chain ending at node k (cu_node.attn 2) at this run's shapes. */
static enum eb_status enqueue_attention(struct eb_engine *e, struct cu_state *s, size_t k,
                                        cudaStream_t st, struct eb_diag *diag)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *n = &g->nodes[e->order[k]];
    const struct cu_node *cn = &s->nodes[k];
    const struct eb_ir_value *q = &g->values[cn->attn_q], *K = &g->values[cn->attn_k];
    const struct eb_ir_value *V = &g->values[cn->attn_v], *M = &g->values[cn->attn_mask];
    const struct eb_ir_value *y = eb_op_out(g, n, 0);
    const int64_t rows = q->shape[1], kvh = q->shape[2], group = q->shape[3], d = q->shape[4];
    const int64_t len = K->shape[2];
    if (K->shape[1] != kvh || K->shape[3] != d || memcmp(K->shape, V->shape, 4 * sizeof(int64_t)) ||
        M->numel != rows * len || M->shape[M->rank - 1] != len || y->numel != q->numel)
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "model %s node '%s': its attention chain, fused at load, has shapes "
                            "the fused kernel does not take at this run (query rows %lld, cache "
                            "%lld, mask of %lld elements)",
                            e->what, n->name, (long long)rows, (long long)len, (long long)M->numel);
    const cudaError_t ce = eb_cuk_attn_rows(
        st, s->dt, rows, kvh * group, group, d, len, cn->attn_scale, s->dptr[cn->attn_q],
        s->dptr[cn->attn_k], s->dptr[cn->attn_v], s->dptr[cn->attn_mask], s->dptr[n->out[0]]);
    if (ce != cudaSuccess)
        return eb_diag_fail(diag, EB_ERR_DEVICE, "model %s node '%s' (attention): %s", e->what,
                            n->name, cudaGetErrorString(ce));
    return EB_OK;
}

enum eb_status eb_cu__node_enqueue(struct eb_engine *e, struct cu_state *s, size_t k,
                                   cudaStream_t stream, struct eb_diag *diag)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *n = &g->nodes[e->order[k]];
    struct cu_node *cn = &s->nodes[k];
    const struct eb_op_desc *d = &cn->d;
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *y = eb_op_out(g, n, 0);
    void *const *dp = s->dptr;
    const cudaStream_t st = stream;
    cudaError_t ce = cudaSuccess;
    int64_t xs[EB_MAX_RANK], ys[EB_MAX_RANK];
    eb_cu__strides(x, xs);
    eb_cu__strides(y, ys);
    if (cn->skip) /* computed by its chain's last node */
        return EB_OK;
    int done = 0; /* one row: the one-row products' kernel (cuda_gemv.c) */
    const enum eb_status gs = eb_cu__gemv_enqueue(e, s, k, st, &done, diag);
    if (gs != EB_OK || done)
        return gs;
    if (cn->mm)
        return eb_cu__matmul_add_enqueue(e, s, k, st, diag);
    if (cn->glu) {
        if (g->values[cn->glu_g].numel != y->numel || g->values[cn->glu_u].numel != y->numel)
            return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                                "model %s node '%s': its SwiGLU, fused at load, has operands of "
                                "other sizes at this run (%lld, %lld and %lld elements)",
                                e->what, n->name, (long long)g->values[cn->glu_g].numel,
                                (long long)g->values[cn->glu_u].numel, (long long)y->numel);
        ce = eb_cuk_swiglu(st, s->dt, y->numel, dp[cn->glu_g], dp[cn->glu_u], dp[n->out[0]]);
        if (ce != cudaSuccess)
            return eb_diag_fail(diag, EB_ERR_DEVICE, "model %s node '%s' (SwiGLU): %s", e->what,
                                n->name, cudaGetErrorString(ce));
        return EB_OK;
    }
    if (cn->rope) {
        const struct eb_ir_value *xv = &g->values[cn->rope_x];
        const int64_t heads = xv->shape[xv->rank - 2], len = xv->shape[xv->rank - 1];
        ce = eb_cuk_rope(st, s->dt, heads * len > 0 ? xv->numel / (heads * len) : 0, heads, len,
                         dp[cn->rope_x], dp[cn->rope_cos], dp[cn->rope_sin], dp[n->out[0]]);
        if (ce != cudaSuccess)
            return eb_diag_fail(diag, EB_ERR_DEVICE, "model %s node '%s' (rotary): %s", e->what,
                                n->name, cudaGetErrorString(ce));
        return EB_OK;
    }
    if (cn->attn && g->values[cn->attn_q].shape[1] <= EB_CU_ATTN_MAX_ROWS) /* decode rows */
        return cn->attn == 1 ? EB_OK : enqueue_attention(e, s, k, st, diag);
    if (cn->rms) {
        const struct eb_ir_value *xv = &g->values[cn->rms_x];
        const int64_t len = xv->shape[xv->rank - 1];
        ce = eb_cuk_rms_norm(st, s->dt, len > 0 ? xv->numel / len : 0, len, cn->rms_eps,
                             dp[cn->rms_x], dp[cn->rms_w], dp[n->out[0]]);
        if (ce != cudaSuccess)
            return eb_diag_fail(diag, EB_ERR_DEVICE, "model %s node '%s' (RMSNorm): %s", e->what,
                                n->name, cudaGetErrorString(ce));
        return EB_OK;
    }
    switch (d->kind) {
    case EB_DESC_CONV: {
        const float one = 1.0f, zero = 0.0f;
        const void *xp = dp[n->in[0]];
        if (cn->x_xpose && !(s->pre_nhwc && (int64_t)k == s->pre_conv)) { /* the conv's layout */
            if ((ce = eb_cu__to_xpose(s, x, cn->nhwc, xp, st)) != cudaSuccess)
                break;
            xp = s->d_xpose;
        } else if (cn->x_xpose) { /* the letterbox wrote it there channels-last */
            xp = s->d_xpose;
        }
        cudnnStatus_t cs =
            cn->g_plan != NULL
                ? cudnnBackendExecute(s->cudnn, cn->g_plan, cn->g_vpack)
                : cudnnConvolutionForward(s->cudnn, &one, cn->xd, xp, cn->wd, dp[n->in[1]], cn->cd,
                                          cn->algo, s->lane_ws[cn->lane], cn->ws_bytes, &zero,
                                          cn->yd, dp[n->out[0]]);
        if (cs != CUDNN_STATUS_SUCCESS)
            return eb_diag_fail(diag, EB_ERR_DEVICE, "model %s node '%s': cuDNN convolution: %s",
                                e->what, n->name, cudnnGetErrorString(cs));
        /* channels-last: n*oh*ow rows of C channels (plane 1: the channel of i is i % C) */
        const int64_t plane = d->conv.oh * d->conv.ow;
        if (cn->ep_needed)
            ce = eb_cuk_epilogue(st, s->dt, cn->nhwc ? d->conv.n * plane : d->conv.n, d->conv.oc,
                                 cn->nhwc ? 1 : plane, cn->bias,
                                 d->epi->residual ? dp[n->in[3]] : NULL, &cn->ep, dp[n->out[0]]);
        break;
    }
    case EB_DESC_QCONV: ce = eb_cu__qconv_enqueue(e, s, k, st); break;
    case EB_DESC_COPY:
        if (x->nhwc) { /* to NCHW order: a Reshape's element order is ONNX's */
            int64_t ds[EB_MAX_RANK];
            dense_strides(x, ds);
            const struct eb_cuk_copy c = copy_desc(x->rank, x->shape, xs, ds);
            ce = eb_cuk_copy_nd(st, (int)eb_cu__es(s, x), &c, dp[n->in[0]], dp[n->out[0]]);
        } else if (dp[n->in[0]] != dp[n->out[0]]) {
            ce = cudaMemcpyAsync(dp[n->out[0]], dp[n->in[0]], (size_t)x->numel * eb_cu__es(s, x),
                                 cudaMemcpyDeviceToDevice, st);
        }
        break;
    case EB_DESC_CONCAT: ce = concat_split(s, st, n, g, d->axis, 0); break;
    case EB_DESC_SPLIT: ce = concat_split(s, st, n, g, d->axis, 1); break;
    case EB_DESC_SLICE:
    case EB_DESC_TRANSPOSE: {
        struct eb_cuk_copy c = {.rank = y->rank};
        for (int k2 = 0; k2 < y->rank; k2++) {
            c.shape[k2] = (int32_t)y->shape[k2];
            c.ys[k2] = (int32_t)ys[k2];
            if (d->kind == EB_DESC_SLICE) {
                c.xs[k2] = (int32_t)(xs[k2] * d->step[k2]);
                c.x_off += d->start[k2] * xs[k2];
            } else {
                c.xs[k2] = (int32_t)xs[d->perm[k2]];
            }
        }
        ce = eb_cuk_copy_nd(st, (int)eb_cu__es(s, x), &c, dp[n->in[0]], dp[n->out[0]]);
        break;
    }
    case EB_DESC_BINARY: {
        const struct eb_ir_value *b = eb_op_in(g, n, 1);
        int64_t bs[EB_MAX_RANK];
        eb_cu__strides(b, bs);
        /* y is written in its memory order: N, H, W, C when channels-last */
        static const int nhwc_order[4] = {0, 2, 3, 1};
        struct eb_cuk_nd nd = {.rank = y->rank};
        for (int j = 0; j < y->rank; j++) {
            const int k2 = y->nhwc ? nhwc_order[j] : j;
            const int ia = k2 - (y->rank - x->rank), ib = k2 - (y->rank - b->rank);
            nd.shape[j] = (int32_t)y->shape[k2];
            nd.sa[j] = ia >= 0 && x->shape[ia] != 1 ? (int32_t)xs[ia] : 0;
            nd.sb[j] = ib >= 0 && b->shape[ib] != 1 ? (int32_t)bs[ib] : 0;
        }
        if (y->dtype == EB_DTYPE_F32)
            ce = eb_cuk_binary(st, s->dt, (int)d->binop, &nd, dp[n->in[0]], dp[n->in[1]],
                               dp[n->out[0]]);
        else
            ce = eb_cuk_binary_int(st, y->dtype == EB_DTYPE_I64, (int)d->binop, &nd, dp[n->in[0]],
                                   dp[n->in[1]], dp[n->out[0]]);
        break;
    }
    case EB_DESC_UNARY:
        ce = eb_cuk_unary(st, s->dt, (int)d->unop, x->numel, d->alpha, d->beta, dp[n->in[0]],
                          dp[n->out[0]]);
        break;
    case EB_DESC_SIGMOID:
        ce = eb_cuk_unary(st, s->dt, EB_CUK_UNARY_SIGMOID, x->numel, 0.0f, 0.0f, dp[n->in[0]],
                          dp[n->out[0]]);
        break;
    case EB_DESC_SOFTMAX:
        ce = eb_cuk_softmax(st, s->dt, d->outer, d->len, d->inner, dp[n->in[0]], dp[n->out[0]]);
        break;
    case EB_DESC_DFL:
        ce = eb_cuk_dfl(st, s->dt, d->outer, d->len, d->inner, dp[n->in[0]], s->dptr32[n->in[1]],
                        dp[n->out[0]]);
        break;
    case EB_DESC_MAXPOOL: {
        const struct eb_pool2d_desc *p = &d->pool;
        const struct eb_cuk_pool kp = {
            (int32_t)p->n,        (int32_t)p->c,        (int32_t)p->ih,    (int32_t)p->iw,
            (int32_t)p->oh,       (int32_t)p->ow,       (int32_t)p->kh,    (int32_t)p->kw,
            (int32_t)p->stride_h, (int32_t)p->stride_w, (int32_t)p->pad_t, (int32_t)p->pad_l,
            (int32_t)p->dil_h,    (int32_t)p->dil_w,    x->nhwc,
        };
        ce = eb_cuk_maxpool(st, s->dt, &kp, dp[n->in[0]], dp[n->out[0]]);
        break;
    }
    case EB_DESC_UPSAMPLE:
        if (x->nhwc) { /* y[n][j][i][c] = x[n][j/fh][i/fw][c]: dims n, h, fh, w, fw, c */
            const int64_t c = x->shape[1], h = x->shape[2], w = x->shape[3];
            const int64_t sh[6] = {x->shape[0], h, d->fh, w, d->fw, c};
            const int64_t sx[6] = {h * w * c, w * c, 0, c, 0, 1};
            const int64_t sy[6] = {
                h * d->fh * w * d->fw * c, d->fh * w * d->fw * c, w * d->fw * c, d->fw * c, c, 1};
            const struct eb_cuk_copy cp = copy_desc(6, sh, sx, sy);
            ce = eb_cuk_copy_nd(st, (int)eb_cu__es(s, x), &cp, dp[n->in[0]], dp[n->out[0]]);
            break;
        }
        ce = eb_cuk_upsample(st, s->dt, x->shape[0] * x->shape[1], x->shape[2], x->shape[3], d->fh,
                             d->fw, dp[n->in[0]], dp[n->out[0]]);
        break;
    case EB_DESC_MATMUL: {
        cublasStatus_t bs = CUBLAS_STATUS_SUCCESS;
        ce = enqueue_matmul(e, s, n, &bs);
        if (bs != CUBLAS_STATUS_SUCCESS)
            return eb_diag_fail(diag, EB_ERR_DEVICE, "model %s node '%s': cuBLAS MatMul: %s",
                                e->what, n->name, cublasGetStatusString(bs));
        break;
    }
    case EB_DESC_GATHER: {
        const struct eb_ir_value *ix = eb_op_in(g, n, 1);
        ce = eb_cuk_gather(st, (int)eb_cu__es(s, x), ix->dtype == EB_DTYPE_I64, d->outer, d->len,
                           d->inner, ix->numel, dp[n->in[1]], dp[n->in[0]], dp[n->out[0]]);
        break;
    }
    case EB_DESC_CAST:
        ce = eb_cuk_int_to_float(st, s->dt, x->dtype == EB_DTYPE_I64, x->numel, dp[n->in[0]],
                                 dp[n->out[0]]);
        break;
    case EB_DESC_REDUCE_MEAN:
        ce = eb_cuk_reduce_mean(st, s->dt, d->outer, d->len, d->inner, dp[n->in[0]], dp[n->out[0]]);
        break;
    case EB_DESC_QUANTIZE: {
        const struct eb_ir_value *z = eb_op_in(g, n, 2);
        ce = eb_cuk_quantize(st, s->dt, x->numel, d->len, d->inner, dp[n->in[0]], cn->scale,
                             z != NULL ? dp[n->in[2]] : NULL, y->dtype == EB_DTYPE_I8,
                             dp[n->out[0]]);
        break;
    }
    case EB_DESC_DEQUANTIZE: {
        const struct eb_ir_value *z = eb_op_in(g, n, 2);
        const int kind = x->dtype == EB_DTYPE_I8 ? 1 : x->dtype == EB_DTYPE_I32 ? 2 : 0;
        ce = eb_cuk_dequantize(st, s->dt, x->numel, d->len, d->inner, kind, dp[n->in[0]], cn->scale,
                               z != NULL ? dp[n->in[2]] : NULL, dp[n->out[0]]);
        break;
    }
    default: break;
    }
    if (ce != cudaSuccess)
        return eb_diag_fail(diag, EB_ERR_DEVICE, "model %s node '%s' (%s) on cuda: %s", e->what,
                            n->name, n->op->onnx_name, cudaGetErrorString(ce));
    return EB_OK;
}
