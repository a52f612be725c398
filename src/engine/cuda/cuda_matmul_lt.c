/*
 * A MatMul by a constant weight and the Add that reads its product (cuda_nodes.c
 * eb_cu__fuse_matmul_add) as one cuBLASLt call: row-major Y[m][n] = A[m][k] W[k][n] + bias[n]
 * (the bias epilogue) or + R[m][n] (R as C, beta 1), computed as the column-major
 * Y^T = W^T A^T as the plain MatMul is (cuda_nodes.c enqueue_matmul). The product is rounded to
 * the device's precision once, after the addition (the two nodes round it twice). One row (a
 * decode step) runs as eb_cuk_gemv instead (cuda_gemv.c).
 */
#include "engine/cuda/cuda_internal.h"

/* The largest power of two, at most 256, that divides address p: what the kernel cuBLASLt
 * picks may assume of it. */
static uint32_t align_of(const void *p)
{
    uint32_t al = 256;
    while (al > 1 && (uintptr_t)p % al != 0)
        al /= 2;
    return al;
}

/* The descriptors of one call, destroyed together. */
struct lt_call {
    cublasLtMatmulDesc_t md;
    cublasLtMatrixLayout_t la, lb, ly;
    cublasLtMatmulPreference_t pref;
};

static void lt_call_free(struct lt_call *c)
{
    if (c->pref != NULL)
        cublasLtMatmulPreferenceDestroy(c->pref);
    if (c->ly != NULL)
        cublasLtMatrixLayoutDestroy(c->ly);
    if (c->lb != NULL)
        cublasLtMatrixLayoutDestroy(c->lb);
    if (c->la != NULL)
        cublasLtMatrixLayoutDestroy(c->la);
    if (c->md != NULL)
        cublasLtMatmulDescDestroy(c->md);
}

/* The call's descriptors: W^T (n x k), A^T (k x m), Y^T and C (n x m), column-major, and the bias
 * epilogue when bias is not NULL. */
static cublasStatus_t lt_call_init(struct lt_call *c, cudaDataType_t t, int64_t m, int64_t k,
                                   int64_t n, const void *bias)
{
    cublasStatus_t bs = cublasLtMatmulDescCreate(&c->md, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (bs == CUBLAS_STATUS_SUCCESS && bias != NULL) {
        const cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_BIAS;
        bs = cublasLtMatmulDescSetAttribute(c->md, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof(ep));
        if (bs == CUBLAS_STATUS_SUCCESS)
            bs = cublasLtMatmulDescSetAttribute(c->md, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                sizeof(bias));
        if (bs == CUBLAS_STATUS_SUCCESS)
            bs = cublasLtMatmulDescSetAttribute(c->md, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &t,
                                                sizeof(t));
    }
    if (bs == CUBLAS_STATUS_SUCCESS)
        bs = cublasLtMatrixLayoutCreate(&c->la, t, (uint64_t)n, (uint64_t)k, n);
    if (bs == CUBLAS_STATUS_SUCCESS)
        bs = cublasLtMatrixLayoutCreate(&c->lb, t, (uint64_t)k, (uint64_t)m, k);
    if (bs == CUBLAS_STATUS_SUCCESS)
        bs = cublasLtMatrixLayoutCreate(&c->ly, t, (uint64_t)n, (uint64_t)m, n);
    return bs;
}

/* Node cn's kernel for m rows (cn->lt_algo), picked once per m by cuBLASLt's heuristic for
 * these pointers' alignments and the workspace there is. */
static cublasStatus_t lt_pick(struct cu_state *s, struct cu_node *cn, struct lt_call *c, int64_t m,
                              const void *const ptr[4])
{
    if (cn->lt_m == m)
        return CUBLAS_STATUS_SUCCESS;
    cublasStatus_t bs = cublasLtMatmulPreferenceCreate(&c->pref);
    const uint64_t ws = s->blas_ws_bytes;
    if (bs == CUBLAS_STATUS_SUCCESS)
        bs = cublasLtMatmulPreferenceSetAttribute(c->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &ws, sizeof(ws));
    static const cublasLtMatmulPreferenceAttributes_t ALIGN[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4 && bs == CUBLAS_STATUS_SUCCESS; i++) {
        const uint32_t al = align_of(ptr[i]);
        bs = cublasLtMatmulPreferenceSetAttribute(c->pref, ALIGN[i], &al, sizeof(al));
    }
    cublasLtMatmulHeuristicResult_t r;
    int found = 0;
    if (bs == CUBLAS_STATUS_SUCCESS)
        bs = cublasLtMatmulAlgoGetHeuristic(s->lt, c->md, c->la, c->lb, c->ly, c->ly, c->pref, 1,
                                            &r, &found);
    if (bs == CUBLAS_STATUS_SUCCESS && found < 1)
        bs = CUBLAS_STATUS_NOT_SUPPORTED;
    if (bs == CUBLAS_STATUS_SUCCESS) {
        cn->lt_algo = r.algo;
        cn->lt_m = m;
    }
    return bs;
}

enum eb_status eb_cu__matmul_add_enqueue(struct eb_engine *e, struct cu_state *s, size_t k,
                                         cudaStream_t stream, struct eb_diag *diag)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *n = &g->nodes[e->order[k]];
    struct cu_node *cn = &s->nodes[k];
    const struct eb_ir_value *a = &g->values[cn->mm_a], *w = &g->values[cn->mm_w];
    const struct eb_ir_value *c = &g->values[cn->mm_c], *y = eb_op_out(g, n, 0);
    const int64_t kk = w->shape[0], nn = w->shape[1];
    const int64_t m = nn > 0 ? y->numel / nn : 0;
    if (y->rank < 1 || y->shape[y->rank - 1] != nn || a->numel != m * kk ||
        (!cn->mm_bias && c->numel != y->numel))
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "model %s node '%s': its MatMul and Add, fused at load, have shapes "
                            "the fused call does not take at this run (%lld x %lld by %lld x "
                            "%lld into %lld elements)",
                            e->what, n->name, (long long)m, (long long)(m > 0 ? a->numel / m : 0),
                            (long long)kk, (long long)nn, (long long)y->numel);
    if (m == 0)
        return EB_OK;
    const cudaDataType_t t = s->dt == EB_CUK_F16 ? CUDA_R_16F : CUDA_R_32F;
    void *yp = s->dptr[n->out[0]];
    const void *cp = cn->mm_bias ? yp : s->dptr[cn->mm_c];
    const void *ptr[4] = {s->dptr[cn->mm_w], s->dptr[cn->mm_a], cp, yp};
    const float one = 1.0f, beta = cn->mm_bias ? 0.0f : 1.0f;
    struct lt_call call = {0};
    cublasStatus_t bs = lt_call_init(&call, t, m, kk, nn, cn->mm_bias ? s->dptr[cn->mm_c] : NULL);
    if (bs == CUBLAS_STATUS_SUCCESS)
        bs = lt_pick(s, cn, &call, m, ptr);
    if (bs == CUBLAS_STATUS_SUCCESS)
        bs = cublasLtMatmul(s->lt, call.md, &one, ptr[0], call.la, ptr[1], call.lb, &beta, cp,
                            call.ly, yp, call.ly, &cn->lt_algo, s->d_blas_ws, s->blas_ws_bytes,
                            stream);
    lt_call_free(&call);
    if (bs != CUBLAS_STATUS_SUCCESS)
        return eb_diag_fail(diag, EB_ERR_DEVICE,
                            "model %s node '%s': cuBLASLt MatMul + %s (%lld x %lld by %lld x "
                            "%lld): %s",
                            e->what, n->name, cn->mm_bias ? "bias" : "residual", (long long)m,
                            (long long)kk, (long long)kk, (long long)nn, cublasGetStatusString(bs));
    return EB_OK;
}
