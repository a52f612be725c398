/*
 * fp16 channels-last convolutions through cuDNN's graph (backend) API: the convolution with its
 * epilogue — bias, activation (ReLU, SiLU as swish, sigmoid), residual add — as one operation
 * graph, so that cuDNN can run it as one fused kernel; where no engine takes the fused graph,
 * the convolution alone (then our epilogue kernel). The engine configurations cuDNN's heuristics
 * propose (mode A) are finalized and timed on this GPU with the real buffers; the fastest within
 * the workspace budget is kept. The graph API reaches cuDNN's Hopper and Ampere kernels, which
 * the legacy cudnnConvolutionForward does not (its NHWC fp16 choices ran 5-10x slower here).
 * A convolution neither graph takes stays on the legacy path (cuda_nodes.c).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "engine/cuda/cuda_internal.h"

#define MAX_CFGS  12 /* heuristic proposals looked at */
#define MAX_TIMED 6  /* of which at most this many finalized plans are timed */

enum { UID_X = 1, UID_W, UID_Y, UID_B, UID_Z, UID_V1, UID_V2, UID_V3 };

typedef cudnnBackendDescriptor_t bdesc;

/* A batch of descriptors made for one graph, destroyed together. */
struct pool {
    bdesc d[24];
    int n;
};

static bdesc make(struct pool *p, cudnnBackendDescriptorType_t t, cudnnStatus_t *st)
{
    bdesc d = NULL;
    if (*st != CUDNN_STATUS_SUCCESS)
        return NULL;
    if (p->n >= (int)(sizeof(p->d) / sizeof(p->d[0]))) {
        *st = CUDNN_STATUS_INTERNAL_ERROR;
        return NULL;
    }
    *st = cudnnBackendCreateDescriptor(t, &d);
    if (*st == CUDNN_STATUS_SUCCESS)
        p->d[p->n++] = d;
    return d;
}

static void pool_free(struct pool *p)
{
    for (int i = p->n - 1; i >= 0; i--)
        cudnnBackendDestroyDescriptor(p->d[i]);
    p->n = 0;
}

static void set(bdesc d, cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t, int64_t n,
                const void *v, cudnnStatus_t *st)
{
    if (*st == CUDNN_STATUS_SUCCESS)
        *st = cudnnBackendSetAttribute(d, a, t, n, v);
}

static void fin(bdesc d, cudnnStatus_t *st)
{
    if (*st == CUDNN_STATUS_SUCCESS)
        *st = cudnnBackendFinalize(d);
}

/* A 4-D tensor [n][c][h][w] with channels-last strides, rows of `pitch` elements (0: c; a
 * slice of an in-place Concat's output: memplan.h) (filters: K,R,S,C). */
static bdesc tensor(struct pool *p, int64_t uid, cudnnDataType_t dt, const int64_t *dims,
                    int64_t pitch, int is_virtual, cudnnStatus_t *st)
{
    const int64_t c = pitch > 0 ? pitch : dims[1];
    const int64_t strides[4] = {dims[2] * dims[3] * c, 1, dims[3] * c, c};
    const int64_t align = 16;
    const bool virt = is_virtual != 0;
    bdesc t = make(p, CUDNN_BACKEND_TENSOR_DESCRIPTOR, st);
    set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt, st);
    set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims, st);
    set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides, st);
    set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, st);
    set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align, st);
    set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt, st);
    fin(t, st);
    return t;
}

/* y = x (op) b: a pointwise node (b NULL for unary modes). */
static bdesc pointwise(struct pool *p, cudnnPointwiseMode_t mode, bdesc x, bdesc b, bdesc y,
                       cudnnStatus_t *st)
{
    const cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    bdesc pw = make(p, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, st);
    set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, st);
    set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec, st);
    if (mode == CUDNN_POINTWISE_SWISH_FWD) {
        const float beta = 1.0f;
        set(pw, CUDNN_ATTR_POINTWISE_SWISH_BETA, CUDNN_TYPE_FLOAT, 1, &beta, st);
    }
    fin(pw, st);
    bdesc op = make(p, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, st);
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw,
        st);
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, st);
    if (b != NULL)
        set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, st);
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, st);
    fin(op, st);
    return op;
}

/* The activation as a cuDNN pointwise mode; 0 when cuDNN has none for it. */
static int act_mode(int act, cudnnPointwiseMode_t *m)
{
    switch (act) {
    case EB_ACT_RELU: *m = CUDNN_POINTWISE_RELU_FWD; return 1;
    case EB_ACT_SILU: *m = CUDNN_POINTWISE_SWISH_FWD; return 1;
    case EB_ACT_SIGMOID: *m = CUDNN_POINTWISE_SIGMOID_FWD; return 1;
    default: return 0;
    }
}

/* The row pitches of conv node k's input, output and residual (0 = packed). */
struct pitches {
    int64_t x, y, z;
};

static struct pitches pitches_of(const struct eb_engine *e, const struct cu_node *cn, size_t k)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *n = &g->nodes[e->order[k]];
    struct pitches pt = {0, g->values[n->out[0]].cpitch, 0};
    if (!cn->x_xpose)
        pt.x = g->values[n->in[0]].cpitch;
    if (cn->d.epi->residual)
        pt.z = g->values[n->in[3]].cpitch;
    return pt;
}

int eb_cu__conv_sliced(const struct eb_engine *e, const struct cu_node *cn, size_t k)
{
    const struct pitches pt = pitches_of(e, cn, k);
    return pt.x > 0 || pt.y > 0 || pt.z > 0;
}

/* The operation graph of node k: the convolution, and with `fused` its epilogue. */
static bdesc op_graph(struct cu_state *s, const struct cu_node *cn, const struct pitches *pt,
                      int fused, struct pool *p, cudnnStatus_t *st)
{
    const struct eb_conv2d_desc *c = &cn->d.conv;
    const struct eb_epilogue *ep = cn->d.epi;
    const int64_t xd[4] = {c->n, c->ic, c->ih, c->iw};
    const int64_t wd[4] = {c->oc, c->ic / c->groups, c->kh, c->kw};
    const int64_t yd[4] = {c->n, c->oc, c->oh, c->ow};
    const int64_t bd[4] = {1, c->oc, 1, 1};
    bdesc ops[4];
    int n_ops = 0;
    const int has_bias = fused && cn->bias != NULL;
    cudnnPointwiseMode_t am = CUDNN_POINTWISE_ADD;
    const int has_act = fused && ep->act != EB_ACT_NONE && act_mode((int)ep->act, &am);
    const int has_res = fused && ep->residual;
    const int n_post = has_bias + has_act + has_res;
    bdesc x = tensor(p, UID_X, CUDNN_DATA_HALF, xd, pt->x, 0, st);
    bdesc w = tensor(p, UID_W, CUDNN_DATA_HALF, wd, 0, 0, st);
    /* the conv's output: real when nothing follows, else a float intermediate */
    bdesc cur = tensor(p, n_post ? UID_V1 : UID_Y, n_post ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF, yd,
                       n_post ? 0 : pt->y, n_post > 0, st);
    const int64_t spatial = 2;
    const int64_t dil[2] = {c->dil_h, c->dil_w}, str[2] = {c->stride_h, c->stride_w};
    const int64_t pad[2] = {c->pad_t, c->pad_l};
    const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    bdesc cd = make(p, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, st);
    set(cd, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp, st);
    set(cd, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, st);
    set(cd, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial, st);
    set(cd, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil, st);
    set(cd, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, str, st);
    set(cd, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad, st);
    set(cd, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad, st);
    fin(cd, st);
    const float alpha = 1.0f, beta = 0.0f;
    bdesc conv = make(p, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, st);
    set(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, st);
    set(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w, st);
    set(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cur,
        st);
    set(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
        &cd, st);
    set(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha, st);
    set(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta, st);
    fin(conv, st);
    ops[n_ops++] = conv;
    int left = n_post;
    /* bias, activation, residual, in eb_epilogue's order; the last writes y (half) */
    if (has_bias) {
        left--;
        bdesc b = tensor(p, UID_B, CUDNN_DATA_FLOAT, bd, 0, 0, st);
        bdesc y = tensor(p, left ? UID_V2 : UID_Y, left ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF, yd,
                         left ? 0 : pt->y, left > 0, st);
        ops[n_ops++] = pointwise(p, CUDNN_POINTWISE_ADD, cur, b, y, st);
        cur = y;
    }
    if (has_act) {
        left--;
        bdesc y = tensor(p, left ? UID_V3 : UID_Y, left ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF, yd,
                         left ? 0 : pt->y, left > 0, st);
        ops[n_ops++] = pointwise(p, am, cur, NULL, y, st);
        cur = y;
    }
    if (has_res) {
        bdesc z = tensor(p, UID_Z, CUDNN_DATA_HALF, yd, pt->z, 0, st);
        bdesc y = tensor(p, UID_Y, CUDNN_DATA_HALF, yd, pt->y, 0, st);
        ops[n_ops++] = pointwise(p, CUDNN_POINTWISE_ADD, cur, z, y, st);
    }
    bdesc g = make(p, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, st);
    set(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n_ops, ops, st);
    set(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &s->cudnn, st);
    fin(g, st);
    return g;
}

/* The variant pack of node k's plan: its buffers and workspace `ws`. */
static cudnnStatus_t make_vpack(struct cu_node *cn, void *x, void *w, void *y, void *z, void *ws,
                                bdesc *out)
{
    int64_t uids[5] = {UID_X, UID_W, UID_Y, 0, 0};
    void *ptrs[5] = {x, w, y, NULL, NULL};
    int64_t n = 3;
    if (cn->g_fused && cn->bias != NULL)
        uids[n] = UID_B, ptrs[n++] = (void *)cn->bias;
    if (cn->g_fused && cn->d.epi->residual)
        uids[n] = UID_Z, ptrs[n++] = z;
    cudnnStatus_t st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, out);
    set(*out, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids, &st);
    set(*out, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs, &st);
    set(*out, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws, &st);
    fin(*out, &st);
    return st;
}

/* Proposals for graph g, finalized into plans and timed; the fastest within ws_max is kept in
 * cn->g_plan (1), or none (0). */
static int pick_plan(struct eb_engine *e, struct cu_state *s, size_t k, bdesc g, size_t ws_max,
                     void *ws)
{
    const struct eb_ir_node *n = &e->g->nodes[e->order[k]];
    struct cu_node *cn = &s->nodes[k];
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    bdesc heur = NULL, cfgs[MAX_CFGS] = {0};
    const cudnnBackendHeurMode_t hm = CUDNN_HEUR_MODE_A;
    st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur);
    set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g, &st);
    set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm, &st);
    fin(heur, &st);
    int64_t n_cfg = 0;
    for (int i = 0; i < MAX_CFGS && st == CUDNN_STATUS_SUCCESS; i++)
        st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, MAX_CFGS, &n_cfg, cfgs);
    void *x = cn->x_xpose ? s->d_xpose : s->dptr[n->in[0]];
    void *z = cn->d.epi->residual ? s->dptr[n->in[3]] : NULL;
    float best_ms = 0.0f;
    int n_timed = 0;
    cudaEvent_t ev[2] = {NULL, NULL};
    cudaEventCreate(&ev[0]);
    cudaEventCreate(&ev[1]);
    for (int64_t i = 0; st == CUDNN_STATUS_SUCCESS && i < n_cfg && n_timed < MAX_TIMED; i++) {
        bdesc plan = NULL, vp = NULL;
        cudnnStatus_t ps =
            cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
        set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &s->cudnn, &ps);
        set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
            &cfgs[i], &ps);
        fin(plan, &ps);
        int64_t wsz = 0, got = 0;
        if (ps == CUDNN_STATUS_SUCCESS)
            ps = cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                          CUDNN_TYPE_INT64, 1, &got, &wsz);
        if (ps == CUDNN_STATUS_SUCCESS && (size_t)wsz > ws_max)
            ps = CUDNN_STATUS_NOT_SUPPORTED;
        if (ps == CUDNN_STATUS_SUCCESS)
            ps = make_vpack(cn, x, s->dptr[n->in[1]], s->dptr[n->out[0]], z, ws, &vp);
        float ms = 0.0f;
        if (ps == CUDNN_STATUS_SUCCESS) { /* one to warm up, then the best of 3 */
            ps = cudnnBackendExecute(s->cudnn, plan, vp);
            for (int r = 0; r < 3 && ps == CUDNN_STATUS_SUCCESS; r++) {
                float t = 0.0f;
                cudaEventRecord(ev[0], s->stream);
                ps = cudnnBackendExecute(s->cudnn, plan, vp);
                cudaEventRecord(ev[1], s->stream);
                if (cudaEventSynchronize(ev[1]) != cudaSuccess ||
                    cudaEventElapsedTime(&t, ev[0], ev[1]) != cudaSuccess)
                    ps = CUDNN_STATUS_EXECUTION_FAILED;
                ms = r == 0 || t < ms ? t : ms;
            }
            n_timed++;
        }
        if (vp != NULL)
            cudnnBackendDestroyDescriptor(vp);
        if (ps == CUDNN_STATUS_SUCCESS && (cn->g_plan == NULL || ms < best_ms)) {
            if (cn->g_plan != NULL)
                cudnnBackendDestroyDescriptor(cn->g_plan);
            cn->g_plan = plan;
            cn->ws_bytes = (size_t)wsz;
            best_ms = ms;
        } else if (plan != NULL) {
            cudnnBackendDestroyDescriptor(plan);
        }
        (void)cudaGetLastError();
    }
    cudaEventDestroy(ev[0]);
    cudaEventDestroy(ev[1]);
    for (int i = 0; i < MAX_CFGS; i++)
        if (cfgs[i] != NULL)
            cudnnBackendDestroyDescriptor(cfgs[i]);
    if (heur != NULL)
        cudnnBackendDestroyDescriptor(heur);
    return cn->g_plan != NULL;
}

int eb_cu__conv_graph_eligible(const struct cu_state *s, const struct cu_node *cn)
{
    cudnnPointwiseMode_t m;
    const struct eb_epilogue *ep = cn->d.epi;
    return s->dt == EB_CUK_F16 && cn->d.kind == EB_DESC_CONV && cn->d.conv.groups == 1 &&
           !ep->fake_quant && (ep->act == EB_ACT_NONE || act_mode((int)ep->act, &m));
}

int eb_cu__conv_graph_plan(struct eb_engine *e, struct cu_state *s, size_t k, size_t ws_max,
                           void *ws)
{
    struct cu_node *cn = &s->nodes[k];
    if (s->dt != EB_CUK_F16 || !cn->nhwc || cn->d.epi->fake_quant)
        return 0;
    const struct pitches pt = pitches_of(e, cn, k);
    /* a slice (pitched rows) only fused: our epilogue kernel takes packed rows */
    const int last = eb_cu__conv_sliced(e, cn, k);
    for (int fused = 1; fused >= last; fused--) {
        cudnnPointwiseMode_t m;
        const struct eb_epilogue *ep = cn->d.epi;
        if (fused && ep->act != EB_ACT_NONE && !act_mode((int)ep->act, &m))
            continue; /* an activation cuDNN lacks: the conv alone, then our epilogue */
        struct pool p = {.n = 0};
        cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
        bdesc g = op_graph(s, cn, &pt, fused, &p, &st);
        cn->g_fused = fused;
        const int ok = st == CUDNN_STATUS_SUCCESS && pick_plan(e, s, k, g, ws_max, ws);
        pool_free(&p);
        if (ok) {
            cn->ep_needed = !fused && (cn->bias != NULL || ep->act != EB_ACT_NONE || ep->residual);
            return 1;
        }
    }
    cn->g_fused = 0;
    return 0;
}

enum eb_status eb_cu__conv_graph_bind(struct eb_engine *e, struct cu_state *s, size_t k,
                                      struct eb_diag *diag)
{
    const struct eb_ir_node *n = &e->g->nodes[e->order[k]];
    struct cu_node *cn = &s->nodes[k];
    void *x = cn->x_xpose ? s->d_xpose : s->dptr[n->in[0]];
    void *z = cn->d.epi->residual ? s->dptr[n->in[3]] : NULL;
    const cudnnStatus_t st = make_vpack(cn, x, s->dptr[n->in[1]], s->dptr[n->out[0]], z,
                                        s->lane_ws[cn->lane], &cn->g_vpack);
    if (st != CUDNN_STATUS_SUCCESS)
        return eb_diag_fail(diag, EB_ERR_DEVICE, "model %s node '%s': cuDNN variant pack: %s",
                            e->what, n->name, cudnnGetErrorString(st));
    return EB_OK;
}
