/*
 * edgebench.QLinearConv (the --qdq int8 pass's integer conv, ops/qconv.c) on the GPU, through
 * k_qconv.cu: every such conv runs there, dense ones (groups 1, int8 weights without zero
 * points) on the tensor cores, the others (depthwise and grouped convs, uint8 or zero-pointed
 * weights) in a direct kernel; the rest of the graph runs in the device's float precision.
 *
 * A conv with a float output (TensorRT's placement: Q/DQ at the conv inputs only) whose one
 * reader is a per-tensor QuantizeLinear (the next conv's input) writes that QuantizeLinear's
 * bytes itself: the graph is rewired before planning (eb_cu__qconv_fuse_quant), the float
 * tensor is never stored, and the activations stay 8-bit between such convs. Its arithmetic is
 * the two nodes' in sequence, in float (ops/qconv.c's epilogue, then QuantizeLinear's division
 * and rounding).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/cuda_internal.h"
#include "engine/ops/qconv.h"

/* One constant scalar: the float (scale) or the zero point's value (a missing one is 0). */
static int const_scalar(const struct eb_graph *g, const struct eb_ir_node *n, int i, float *f,
                        int32_t *z)
{
    if (i >= n->n_in || n->in[i] < 0) {
        *z = 0;
        return i == 2;
    }
    const struct eb_ir_value *v = &g->values[n->in[i]];
    if (!v->is_const || v->numel != 1 || v->data == NULL)
        return 0;
    switch (v->dtype) {
    case EB_DTYPE_F32: *f = *(const float *)v->data; return *f > 0.0f;
    case EB_DTYPE_U8: *z = *(const uint8_t *)v->data; return 1;
    case EB_DTYPE_I8: *z = *(const int8_t *)v->data; return 1;
    default: return 0;
    }
}

/* The one live reader of value v, or NULL (none, several, or a graph output). */
static struct eb_ir_node *only_reader(struct eb_graph *g, int v)
{
    struct eb_ir_node *r = NULL;
    if (g->values[v].is_output)
        return NULL;
    for (size_t i = 0; i < g->n_nodes; i++) {
        struct eb_ir_node *n = &g->nodes[i];
        for (int j = 0; n->alive && j < n->n_in; j++) {
            if (n->in[j] != v)
                continue;
            if (r != NULL)
                return NULL;
            r = n;
            break;
        }
    }
    return r;
}

size_t eb_cu__qconv_fuse_quant(struct eb_engine *e)
{
    struct eb_graph *g = e->g;
    size_t fused = 0;
    for (size_t k = 0; k < e->n_order; k++) {
        struct eb_ir_node *n = &g->nodes[e->order[k]];
        struct eb_qconv_params *p = n->params;
        if (n->op != &eb_op_qconv || !p->y_float)
            continue;
        struct eb_ir_node *q = only_reader(g, n->out[0]);
        float scale = 0.0f;
        int32_t zp = 0;
        if (q == NULL || q->op != &eb_op_quantize_linear || q->in[0] != n->out[0] ||
            !const_scalar(g, q, 1, &scale, &zp) || !const_scalar(g, q, 2, &scale, &zp))
            continue;
        const struct eb_ir_value *y = &g->values[q->out[0]];
        if (y->dtype != EB_DTYPE_U8 && y->dtype != EB_DTYPE_I8)
            continue;
        g->values[n->out[0]].n_uses = 0;
        g->values[n->out[0]].producer = -1;
        n->out[0] = q->out[0];
        g->values[q->out[0]].producer = (int)(n - g->nodes);
        q->alive = 0;
        p->q_after = 1;
        p->q_after_scale = scale;
        p->q_after_zp = zp;
        p->q_after_signed = y->dtype == EB_DTYPE_I8;
        const char *was = n->fused != NULL ? n->fused : "";
        char text[128];
        snprintf(text, sizeof(text), "%s%squantize", was, was[0] != '\0' ? "+" : "");
        const char *dup = eb_ir_arena_strdup(&g->arena, text);
        if (dup != NULL)
            n->fused = dup;
        fused++;
    }
    if (fused > 0) { /* the order without the fused QuantizeLinear nodes */
        size_t m = 0;
        for (size_t k = 0; k < e->n_order; k++)
            if (g->nodes[e->order[k]].alive)
                e->order[m++] = e->order[k];
        e->n_order = m;
    }
    return fused;
}

/* Tensor-core path: groups 1, int8 weights without zero points, and Σ x w within int32. */
int eb_cu__qconv_dense(const struct eb_qconv_params *p)
{
    if (p->d.groups != 1 || !p->w_signed || p->d.ic * p->d.kh * p->d.kw > 66000)
        return 0;
    for (int64_t k = 0; k < p->d.oc; k++)
        if (p->w_zp[k] != 0)
            return 0;
    return 1;
}

void eb_cu__qconv_layout(struct eb_engine *e, struct cu_state *s)
{
    const struct eb_graph *g = e->g;
    for (size_t k = 0; k < e->n_order; k++) {
        struct cu_node *cn = &s->nodes[k];
        if (s->on_cpu[k] || cn->d.kind != EB_DESC_QCONV)
            continue;
        const struct eb_ir_value *x = eb_op_in(g, &g->nodes[e->order[k]], 0);
        const struct eb_qconv_params *p = cn->d.qconv;
        cn->nhwc = 1;
        /* only the tensor cores' 16-byte loads want an NCHW input made channels-last first (the
         * image's 3-channel conv reads its NCHW bytes where they are) */
        cn->x_xpose = !x->nhwc && eb_cu__qconv_dense(p) && p->d.ic % 16 == 0;
        if (cn->x_xpose && (size_t)x->numel > s->xpose_bytes)
            s->xpose_bytes = (size_t)x->numel;
    }
}

static size_t align16(size_t b)
{
    return (b + 15) / 16 * 16;
}

/* Where each part of conv node's device data starts: filter (packed, or as ONNX lays it),
 * int32 wsum or w_zp, mult and bias (floats), the byte table, the split-k sums and counters;
 * each part 16-byte aligned. */
struct qparts {
    size_t sums, mult, bias, lut, ws, total;
};

static struct qparts parts_of(const struct eb_qconv_params *p, const struct eb_cuk_qconv *kq)
{
    const struct eb_conv2d_desc *d = &p->d;
    struct qparts q = {0};
    const size_t oc = (size_t)d->oc;
    q.sums =
        align16(kq->dense ? oc * (size_t)kq->kp : oc * (size_t)(d->ic / d->groups * d->kh * d->kw));
    q.mult = q.sums + align16(oc * 4);
    q.bias = q.mult + align16(oc * 4);
    q.lut = q.bias + align16(oc * 4);
    q.ws = q.lut + (p->lut != NULL ? 256 : 0);
    q.total = align16(q.ws + eb_cuk_qconv_ws_bytes(kq, NULL));
    return q;
}

/* Node k's kernel parameters but its device pointers. */
static void fill_params(struct eb_engine *e, struct cu_state *s, size_t k)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *n = &g->nodes[e->order[k]];
    struct cu_node *cn = &s->nodes[k];
    const struct eb_qconv_params *p = cn->d.qconv;
    const struct eb_conv2d_desc *d = &p->d;
    struct eb_cuk_qconv *kq = &cn->q;
    *kq = (struct eb_cuk_qconv){
        .n = (int32_t)d->n,
        .ic = (int32_t)d->ic,
        .ih = (int32_t)d->ih,
        .iw = (int32_t)d->iw,
        .oc = (int32_t)d->oc,
        .oh = (int32_t)d->oh,
        .ow = (int32_t)d->ow,
        .kh = (int32_t)d->kh,
        .kw = (int32_t)d->kw,
        .sh = (int32_t)d->stride_h,
        .sw = (int32_t)d->stride_w,
        .pt = (int32_t)d->pad_t,
        .pl = (int32_t)d->pad_l,
        .dh = (int32_t)d->dil_h,
        .dw = (int32_t)d->dil_w,
        .groups = (int32_t)d->groups,
    };
    kq->x_zp = p->x_zp;
    kq->dense = eb_cu__qconv_dense(p);
    kq->w_signed = p->w_signed;
    eb_cuk_qconv_dims(kq->ic, kq->kh, kq->kw, &kq->cp, &kq->kp);
    eb_cuk_qconv_plan(kq, e->info_dev.sm_count > 0 ? e->info_dev.sm_count : 1);
    kq->quant = !p->y_float;
    kq->y_signed = p->lut != NULL ? p->out_signed : p->y_signed;
    kq->y_zp = p->y_zp;
    kq->act = (int32_t)p->act;
    kq->alpha = p->alpha;
    if (p->q_after) {
        kq->fq_on = 1;
        kq->fq_scale = p->q_after_scale;
        kq->fq_zp = p->q_after_zp;
        kq->y_signed = p->q_after_signed;
    }
    const struct eb_ir_value *x = eb_op_in(g, n, 0), *y = eb_op_out(g, n, 0);
    if (x->nhwc || cn->x_xpose) {
        kq->x_c = 1;
        kq->x_pix = x->nhwc && x->cpitch > 0 ? (int32_t)x->cpitch : kq->ic;
        kq->x_n = kq->ih * kq->iw * kq->x_pix;
    } else {
        kq->x_c = kq->ih * kq->iw;
        kq->x_pix = 1;
        kq->x_n = kq->ic * kq->x_c;
    }
    const int64_t plane = d->oh * d->ow;
    if (y->nhwc) {
        const int64_t pitch = y->cpitch > 0 ? y->cpitch : d->oc;
        kq->y_n = (int32_t)(plane * pitch);
        kq->y_c = 1;
        kq->y_p = (int32_t)pitch;
    } else {
        kq->y_n = (int32_t)(plane * d->oc);
        kq->y_c = (int32_t)plane;
        kq->y_p = 1;
    }
    kq->y_kind = y->dtype != EB_DTYPE_F32 ? EB_CUK_QY_BYTE
                 : s->dt == EB_CUK_F16    ? EB_CUK_QY_F16
                                          : EB_CUK_QY_F32;
}

enum eb_status eb_cu__qconv_upload(struct eb_engine *e, struct cu_state *s, struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    size_t total = 0;
    for (size_t k = 0; k < e->n_order; k++)
        if (!s->on_cpu[k] && s->nodes[k].d.kind == EB_DESC_QCONV) {
            fill_params(e, s, k);
            total += parts_of(s->nodes[k].d.qconv, &s->nodes[k].q).total;
        }
    if (total == 0)
        return EB_OK;
    uint8_t *img = calloc(total, 1); /* zeros: padding, and the split-k sums and counters */
    if (img == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", e->what);
    enum eb_status st = eb_cu__dev_alloc(e, s, total, &s->d_qdata, "the int8 conv filters", diag);
    size_t at = 0;
    for (size_t k = 0; k < e->n_order && st == EB_OK; k++) {
        struct cu_node *cn = &s->nodes[k];
        if (s->on_cpu[k] || cn->d.kind != EB_DESC_QCONV)
            continue;
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        const struct eb_qconv_params *p = cn->d.qconv;
        const struct eb_conv2d_desc *d = &p->d;
        struct eb_cuk_qconv *kq = &cn->q;
        const struct qparts q = parts_of(p, kq);
        uint8_t *h = img + at;
        uint8_t *dv = (uint8_t *)s->d_qdata + at;
        const void *w = eb_op_in(g, n, 1)->data;
        if (kq->dense) {
            eb_cuk_qconv_pack(kq->oc, kq->ic, kq->kh, kq->kw, w, (int8_t *)h,
                              (int32_t *)(h + q.sums));
            kq->wsum = (const int32_t *)(dv + q.sums);
        } else {
            memcpy(h, w, (size_t)(d->oc * (d->ic / d->groups) * d->kh * d->kw));
            memcpy(h + q.sums, p->w_zp, (size_t)d->oc * 4);
            kq->w_zp = (const int32_t *)(dv + q.sums);
        }
        kq->w = dv;
        memcpy(h + q.mult, p->mult, (size_t)d->oc * 4);
        memcpy(h + q.bias, p->bias, (size_t)d->oc * 4);
        kq->mult = (const float *)(dv + q.mult);
        kq->bias = (const float *)(dv + q.bias);
        if (p->lut != NULL) {
            memcpy(h + q.lut, p->lut, 256);
            kq->lut = dv + q.lut;
        }
        if (kq->splits > 1) {
            size_t cnt_at = 0;
            eb_cuk_qconv_ws_bytes(kq, &cnt_at);
            kq->ws = (int32_t *)(dv + q.ws);
            kq->cnt = kq->ws + cnt_at;
        }
        at += q.total;
    }
    if (st == EB_OK) {
        cudaError_t ce = cudaMemcpy(s->d_qdata, img, total, cudaMemcpyHostToDevice);
        if (ce != cudaSuccess)
            st = eb_diag_fail(diag, EB_ERR_DEVICE, "failed to upload the int8 filters of %s: %s",
                              e->what, cudaGetErrorString(ce));
    }
    free(img);
    if (st == EB_OK)
        e->plan.weight_bytes += total;
    return st;
}

cudaError_t eb_cu__qconv_enqueue(struct eb_engine *e, struct cu_state *s, size_t k,
                                 cudaStream_t stream)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *n = &g->nodes[e->order[k]];
    const struct cu_node *cn = &s->nodes[k];
    const struct eb_ir_value *x = eb_op_in(g, n, 0);
    const void *xp = s->dptr[n->in[0]];
    if (cn->x_xpose) { /* to channels-last, dense rows of ic bytes */
        cudaError_t ce = eb_cu__to_xpose(s, x, 1, xp, stream);
        if (ce != cudaSuccess)
            return ce;
        xp = s->d_xpose;
    }
    return eb_cuk_qconv(stream, &cn->q, xp, s->dptr[n->out[0]]);
}
