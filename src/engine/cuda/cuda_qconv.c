/*
 * edgebench.QLinearConv (the --qdq int8 pass's integer conv, ops/qconv.c) on the GPU, through
 * k_qconv.cu: every such conv runs there, dense ones (groups 1, int8 weights without zero
 * points) on the tensor cores, depthwise ones in a kernel of their own (four channels a thread),
 * the others (grouped convs, uint8 or zero-pointed weights) in a direct kernel; the rest of the
 * graph runs in the device's float precision.
 *
 * A conv with a float output (TensorRT's placement: Q/DQ at the conv inputs only) takes over
 * the nodes after it that its epilogue can compute (eb_cu__qconv_fuse, before planning; each
 * absorbed node leaves the graph):
 *  - a residual Add of its output and a float value computed before it (the bottleneck's
 *    shortcut): the value becomes the conv's input 3, added after the activation;
 *  - a Split along C (C2f's and C3k2's first conv): each part is an output of the conv;
 *  - per part (or the whole output), a per-tensor QuantizeLinear that is its only reader: the
 *    part is written as those bytes (the next convs' input), and a per-tensor DequantizeLinear
 *    of the bytes (the C2f's Concat and shortcut read them as float): the conv writes its
 *    floats too.
 * So yolov8n's C2f is its convs alone, and its Concat goes in place (memplan.h: every output
 * and the residual take channels-last rows that are slices of wider ones). The arithmetic is
 * the absorbed nodes' in sequence: the float value rounded to the device's float precision as
 * the tensor would store it, the Add's sum rounded again, QuantizeLinear's rounding (times the
 * inverse scale, so a byte may move by one step where the quotient sits within an ulp of a
 * tie), DequantizeLinear's product of that byte. One QuantizeLinear and nothing else keeps the
 * older single-output form (q_after: quantised from the unrounded float).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/cuda_internal.h"
#include "engine/ops/fuse_access.h"
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

/* The per-tensor QuantizeLinear (to bytes) or DequantizeLinear (to float) `q` reading value v
 * as its input 0, with constant scale and zero point; 1 when it is one. */
static int per_tensor(const struct eb_graph *g, const struct eb_ir_node *q,
                      const struct eb_op_def *op, int v, float *scale, int32_t *zp)
{
    if (q == NULL || !q->alive || q->op != op || q->n_in < 2 || q->in[0] != v || q->n_out != 1 ||
        !const_scalar(g, q, 1, scale, zp) || !const_scalar(g, q, 2, scale, zp))
        return 0;
    const enum eb_dtype t = g->values[q->out[0]].dtype;
    return op == &eb_op_quantize_linear ? t == EB_DTYPE_U8 || t == EB_DTYPE_I8 : t == EB_DTYPE_F32;
}

/* Node `dead`, now part of `into`: its output values' producer is `into`, it runs no more. */
static void absorb(struct eb_graph *g, struct eb_ir_node *into, struct eb_ir_node *dead, char *what,
                   size_t len, const char *name)
{
    dead->alive = 0;
    for (int j = 0; j < dead->n_out; j++)
        if (dead->out[j] >= 0)
            g->values[dead->out[j]].producer = (int)(into - g->nodes);
    const size_t at = strlen(what);
    if (name[0] != '\0')
        snprintf(what + at, len - at, "%s%s", at > 0 ? "+" : "", name);
}

/* Value v goes away (its reader was absorbed with its producer). */
static void orphan(struct eb_graph *g, int v)
{
    g->values[v].n_uses = 0;
    g->values[v].producer = -1;
}

/*
 * Float-output int8 conv n (pos: each node's place in the order) takes over what reads it:
 *  1. an Add of its output and another float value of the same shape computed before it (the
 *     bottleneck's residual): the residual becomes input res_in;
 *  2. a Split along C: each part is an output of n;
 *  3. per part (or the whole output), a per-tensor QuantizeLinear that is its only reader: the
 *     part is written as those bytes; and a per-tensor DequantizeLinear of those bytes: n writes
 *     its floats too.
 * The outputs stay as many as struct eb_cuk_qconv holds. One QuantizeLinear and nothing else
 * takes the tested fq_on form (q_after). Returns 1 when anything was absorbed.
 */
static int fuse_one(struct eb_graph *g, struct eb_ir_node *n, const int *pos)
{
    struct eb_qconv_params *p = n->params;
    const int y0 = n->out[0];
    const struct eb_ir_value *y = &g->values[y0];
    if (y->rank != 4 || y->dtype != EB_DTYPE_F32 || g->values[n->in[0]].dtype != EB_DTYPE_U8)
        return 0;
    char what[96] = "";
    int res = -1;
    int outs[EB_CUK_QDST_MAX];
    struct eb_qconv_out o[EB_CUK_QDST_MAX];
    int n_outs = 0;
    struct eb_ir_node *r = only_reader(g, y0);
    /* 1. the residual Add */
    if (r != NULL && r->op == &eb_op_add && r->n_in == 2 && r->in[0] != r->in[1]) {
        const int other = r->in[0] == y0 ? r->in[1] : r->in[0];
        const struct eb_ir_value *v = &g->values[other], *a = &g->values[r->out[0]];
        const int before =
            v->producer >= 0 && g->nodes[v->producer].alive && pos[v->producer] < pos[n - g->nodes];
        if (!v->is_const && v->dtype == EB_DTYPE_F32 && v->rank == 4 && before &&
            memcmp(v->shape, y->shape, sizeof(v->shape)) == 0 && a->dtype == EB_DTYPE_F32 &&
            !g->values[y0].is_output) {
            res = other;
            absorb(g, n, r, what, sizeof(what), "add");
            orphan(g, y0);
            n->out[0] = r->out[0];
            r = only_reader(g, n->out[0]);
        }
    }
    /* 2. the Split along C */
    const int whole = n->out[0];
    if (r != NULL && r->op == &eb_op_split && r->in[0] == whole && r->n_out <= EB_CUK_QDST_MAX &&
        eb_op__split_axis(r, 4) == 1) {
        int c = 0, ok = 1;
        for (int j = 0; j < r->n_out && ok; j++) {
            const struct eb_ir_value *v = r->out[j] >= 0 ? &g->values[r->out[j]] : NULL;
            ok = v != NULL && v->rank == 4 && v->shape[1] > 0;
            if (ok) {
                outs[n_outs] = r->out[j];
                o[n_outs++] = (struct eb_qconv_out){.c0 = c, .c1 = c + (int)v->shape[1]};
                c += (int)v->shape[1];
            }
        }
        if (ok && c == (int)p->d.oc) {
            absorb(g, n, r, what, sizeof(what), "split");
            orphan(g, whole);
        } else {
            n_outs = 0;
        }
    }
    if (n_outs == 0) {
        outs[0] = whole;
        o[0] = (struct eb_qconv_out){.c0 = 0, .c1 = (int)p->d.oc};
        n_outs = 1;
    }
    /* 3. QuantizeLinear, then DequantizeLinear, per part */
    const int parts = n_outs;
    int n_q = 0, n_dq = 0;
    for (int j = 0; j < parts; j++) {
        struct eb_ir_node *q = only_reader(g, outs[j]);
        float scale = 0.0f;
        int32_t zp = 0;
        if (!per_tensor(g, q, &eb_op_quantize_linear, outs[j], &scale, &zp))
            continue;
        const int qv = q->out[0];
        absorb(g, n, q, what, sizeof(what), n_q++ == 0 ? "quantize" : "");
        orphan(g, outs[j]);
        outs[j] = qv;
        o[j].mode = EB_CUK_QD_BYTE;
        o[j].q_scale = scale, o[j].q_zp = zp;
        o[j].q_signed = g->values[qv].dtype == EB_DTYPE_I8;
        for (size_t i = 0; i < g->n_nodes && n_outs < EB_CUK_QDST_MAX; i++) {
            struct eb_ir_node *dq = &g->nodes[i];
            float ds = 0.0f;
            int32_t dz = 0;
            if (!per_tensor(g, dq, &eb_op_dequantize_linear, qv, &ds, &dz))
                continue;
            absorb(g, n, dq, what, sizeof(what), n_dq++ == 0 ? "dequantize" : "");
            g->values[qv].n_uses--;
            outs[n_outs] = dq->out[0];
            o[n_outs] = o[j];
            o[n_outs].mode = EB_CUK_QD_DQ;
            o[n_outs].dq_scale = ds, o[n_outs].dq_zp = dz;
            n_outs++;
            break;
        }
    }
    if (what[0] == '\0')
        return 0;
    if (res < 0 && n_outs == 1 && o[0].mode == EB_CUK_QD_BYTE) { /* the fq_on form */
        p->q_after = 1;
        p->q_after_scale = o[0].q_scale;
        p->q_after_zp = o[0].q_zp;
        p->q_after_signed = o[0].q_signed;
        n->out[0] = outs[0];
    } else {
        /* the residual after the bias's place (3: an absent bias stays -1) */
        int *in = eb_ir_arena_alloc(&g->arena, 4 * sizeof(int));
        int *out = eb_ir_arena_alloc(&g->arena, (size_t)n_outs * sizeof(int));
        if (in == NULL || out == NULL)
            return -1;
        in[2] = -1;
        memcpy(in, n->in, (size_t)n->n_in * sizeof(int));
        if (res >= 0) {
            p->res_in = 3;
            in[3] = res;
            n->n_in = 4;
        }
        memcpy(out, outs, (size_t)n_outs * sizeof(int));
        memcpy(p->outs, o, sizeof(o));
        n->in = in;
        n->out = out;
        n->n_out = p->n_outs = n_outs;
    }
    for (int j = 0; j < n->n_out; j++)
        g->values[n->out[j]].producer = (int)(n - g->nodes);
    const char *was = n->fused != NULL ? n->fused : "";
    char text[192];
    snprintf(text, sizeof(text), "%s%s%s", was, was[0] != '\0' ? "+" : "", what);
    const char *dup = eb_ir_arena_strdup(&g->arena, text);
    if (dup != NULL)
        n->fused = dup;
    return 1;
}

/* A new value shaped as value `like`, of dtype t, named like's name + suffix, produced by
 * nothing yet (the values' array grows in the arena when full: the caller re-reads its value
 * pointers). -1: out of memory. */
static int new_value(struct eb_graph *g, int like, enum eb_dtype t, const char *suffix)
{
    if (g->n_values >= g->cap_values) {
        const size_t cap = g->cap_values * 2 + 8;
        struct eb_ir_value *v = eb_ir_arena_alloc(&g->arena, (cap + 1) * sizeof(*v));
        if (v == NULL)
            return -1;
        memcpy(v, g->values, g->n_values * sizeof(*v));
        g->values = v;
        g->cap_values = cap;
    }
    char name[256];
    snprintf(name, sizeof(name), "%s%s", g->values[like].name, suffix);
    const char *dup = eb_ir_arena_strdup(&g->arena, name);
    if (dup == NULL)
        return -1;
    const int id = (int)g->n_values++;
    struct eb_ir_value *v = &g->values[id];
    *v = g->values[like];
    v->name = dup;
    v->dtype = t;
    v->nbytes = (size_t)v->numel * eb_dtype_size(t);
    v->is_const = v->is_input = v->is_output = v->owned_data = 0;
    v->data = NULL;
    v->producer = -1;
    v->n_uses = 0;
    v->offset = -1;
    v->alias_of = -1;
    v->cpitch = 0;
    return id;
}

/*
 * A QuantizeLinear (per tensor) that is the only reader of a Concat along C of parts that fused
 * int8 convs write as float (FLOAT, or DQ: a DequantizeLinear's floats): each conv writes its
 * part's bytes for that QuantizeLinear too (BYTE, or REQ from the DQ's floats), a new value,
 * and the Concat joins those bytes into the QuantizeLinear's output, which leaves the graph
 * (C2f's last conv reads its input straight from the convs before it: the Concat goes in
 * place). 1 when done, -1 out of memory.
 */
static int fuse_concat_quant(struct eb_graph *g, struct eb_ir_node *c)
{
    enum { MAX_PARTS = 8 };
    if (c->op != &eb_op_concat || c->n_out != 1 || c->n_in < 1 || c->n_in > MAX_PARTS)
        return 0;
    const int yv = c->out[0];
    if (g->values[yv].rank != 4 || g->values[yv].is_output || eb_op__concat_axis(c, 4) != 1)
        return 0;
    struct eb_ir_node *q = only_reader(g, yv);
    float scale = 0.0f;
    int32_t zp = 0;
    if (!per_tensor(g, q, &eb_op_quantize_linear, yv, &scale, &zp))
        return 0;
    int src[MAX_PARTS];
    for (int i = 0; i < c->n_in; i++) {
        const int v = c->in[i];
        if (v < 0 || g->values[v].producer < 0)
            return 0;
        for (int j = 0; j < i; j++)
            if (c->in[j] == v)
                return 0;
        const struct eb_ir_node *pn = &g->nodes[g->values[v].producer];
        const struct eb_qconv_params *p = pn->params;
        if (!pn->alive || pn->op != &eb_op_qconv || !p->y_float || p->q_after)
            return 0;
        src[i] = -1;
        if (p->n_outs == 0) /* a plain float output (it takes the fused form below) */
            src[i] = pn->n_out == 1 && pn->out[0] == v ? 0 : -1;
        for (int j = 0; j < p->n_outs; j++)
            if (pn->out[j] == v &&
                (p->outs[j].mode == EB_CUK_QD_FLOAT || p->outs[j].mode == EB_CUK_QD_DQ))
                src[i] = j;
        int adds = 0;
        for (int j = 0; j < c->n_in; j++)
            adds += g->values[c->in[j]].producer == g->values[v].producer;
        if (src[i] < 0 || pn->n_out + adds > EB_CUK_QDST_MAX)
            return 0;
    }
    const enum eb_dtype qt = g->values[q->out[0]].dtype;
    for (int i = 0; i < c->n_in; i++) {
        const int v = c->in[i];
        const int b = new_value(g, v, qt, "_quantized");
        if (b < 0)
            return -1;
        struct eb_ir_node *pn = &g->nodes[g->values[v].producer];
        struct eb_qconv_params *p = pn->params;
        if (p->n_outs == 0) {
            p->outs[0] = (struct eb_qconv_out){.c0 = 0, .c1 = (int)p->d.oc};
            p->n_outs = 1;
        }
        int *out = eb_ir_arena_alloc(&g->arena, (size_t)(pn->n_out + 1) * sizeof(int));
        if (out == NULL)
            return -1;
        memcpy(out, pn->out, (size_t)pn->n_out * sizeof(int));
        struct eb_qconv_out o = p->outs[src[i]];
        if (o.mode == EB_CUK_QD_FLOAT) {
            o.mode = EB_CUK_QD_BYTE;
            o.q_scale = scale, o.q_zp = zp, o.q_signed = qt == EB_DTYPE_I8;
        } else {
            o.mode = EB_CUK_QD_REQ;
            o.o_scale = scale, o.o_zp = zp, o.o_signed = qt == EB_DTYPE_I8;
        }
        p->outs[pn->n_out] = o;
        out[pn->n_out++] = b;
        pn->out = out;
        p->n_outs = pn->n_out;
        g->values[b].producer = (int)(pn - g->nodes);
        g->values[b].n_uses = 1;
        g->values[v].n_uses--;
        c->in[i] = b;
    }
    /* a float part (FLOAT or DQ) that only the Concat read is no longer written */
    for (int i = 0; i < c->n_in; i++) {
        struct eb_ir_node *pn = &g->nodes[g->values[c->in[i]].producer];
        struct eb_qconv_params *p = pn->params;
        int m = 0;
        for (int j = 0; j < pn->n_out; j++) {
            const struct eb_ir_value *v = &g->values[pn->out[j]];
            const int is_float =
                p->outs[j].mode == EB_CUK_QD_FLOAT || p->outs[j].mode == EB_CUK_QD_DQ;
            if (is_float && v->n_uses == 0 && !v->is_output) {
                orphan(g, pn->out[j]);
                continue;
            }
            p->outs[m] = p->outs[j];
            pn->out[m++] = pn->out[j];
        }
        pn->n_out = p->n_outs = m;
    }
    char what[8] = "";
    absorb(g, c, q, what, sizeof(what), "");
    orphan(g, yv);
    c->out[0] = q->out[0]; /* its producer: c (absorb) */
    c->fused = "quantize";
    return 1;
}

enum eb_status eb_cu__qconv_fuse(struct eb_engine *e, struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    size_t n_fused = 0;
    int *pos = eb_ir_arena_alloc(&g->arena, (g->n_nodes + 1) * sizeof(int));
    if (pos == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", e->what);
    for (size_t k = 0; k < e->n_order; k++)
        pos[e->order[k]] = (int)k;
    for (size_t k = 0; k < e->n_order; k++) {
        struct eb_ir_node *n = &g->nodes[e->order[k]];
        const struct eb_qconv_params *p = n->params;
        if (n->op != &eb_op_qconv || !n->alive || !p->y_float)
            continue;
        const int r = fuse_one(g, n, pos);
        if (r < 0)
            return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory",
                                e->what);
        n_fused += (size_t)r;
    }
    for (size_t k = 0; k < e->n_order; k++) { /* after every conv took its parts */
        struct eb_ir_node *n = &g->nodes[e->order[k]];
        const int r = n->alive ? fuse_concat_quant(g, n) : 0;
        if (r < 0)
            return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory",
                                e->what);
        n_fused += (size_t)r;
    }
    if (n_fused > 0) { /* the order without the absorbed nodes */
        size_t m = 0;
        for (size_t k = 0; k < e->n_order; k++)
            if (g->nodes[e->order[k]].alive)
                e->order[m++] = e->order[k];
        e->n_order = m;
    }
    return EB_OK;
}

int eb_cu__qconv_fused(const struct eb_qconv_params *p)
{
    return p->q_after || p->n_outs > 0 || p->res_in > 0;
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

int eb_cu__qconv_tensor_cores(const struct eb_qconv_params *p)
{
    return eb_cu__qconv_dense(p) && !eb_cuk_qconv_small((int32_t)p->d.ic, (int32_t)p->d.kh,
                                                        (int32_t)p->d.kw, (int32_t)p->d.oc);
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
    const size_t taps = (size_t)(d->kh * d->kw);
    q.sums = align16(kq->dense ? oc * (size_t)kq->kp
                     : eb_cuk_qconv_dw(kq->groups, kq->ic, kq->oc)
                         ? (oc + 3) / 4 * 4 * taps * 2
                         : oc * (size_t)(d->ic / d->groups) * taps);
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
    for (int j = 0; j < p->n_outs; j++) { /* the fused outputs (eb_cu__qconv_fuse) */
        const struct eb_qconv_out *o = &p->outs[j];
        struct eb_cuk_qdst *t = &kq->dst[j];
        int64_t st[EB_MAX_RANK];
        eb_cu__strides(eb_op_out(g, n, j), st);
        *t = (struct eb_cuk_qdst){.y_n = (int32_t)st[0],
                                  .y_c = (int32_t)st[1],
                                  .y_p = (int32_t)st[3],
                                  .c0 = o->c0,
                                  .c1 = o->c1,
                                  .mode = o->mode,
                                  .q_inv = o->mode != EB_CUK_QD_FLOAT ? 1.0f / o->q_scale : 0.0f,
                                  .q_zp = o->q_zp,
                                  .q_signed = o->q_signed,
                                  .dq_scale = o->dq_scale,
                                  .dq_zp = o->dq_zp,
                                  .o_inv = o->mode == EB_CUK_QD_REQ ? 1.0f / o->o_scale : 0.0f,
                                  .o_zp = o->o_zp,
                                  .o_signed = o->o_signed};
    }
    kq->n_dst = p->n_outs;
    if (p->res_in > 0) {
        int64_t st[EB_MAX_RANK];
        eb_cu__strides(eb_op_in(g, n, p->res_in), st);
        kq->r_n = (int32_t)st[0], kq->r_c = (int32_t)st[1], kq->r_p = (int32_t)st[3];
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
    kq->y_kind = p->n_outs == 0 && y->dtype != EB_DTYPE_F32 ? EB_CUK_QY_BYTE
                 : s->dt == EB_CUK_F16                      ? EB_CUK_QY_F16
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
        } else if (eb_cuk_qconv_dw(kq->groups, kq->ic, kq->oc)) { /* w - w_zp, tap-major */
            eb_cuk_qconv_pack_dw(kq->oc, kq->kh, kq->kw, w, kq->w_signed, p->w_zp, (int16_t *)h);
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
    if (cn->q.n_dst == 0)
        return eb_cuk_qconv(stream, &cn->q, xp, s->dptr[n->out[0]]);
    struct eb_cuk_qconv q = cn->q; /* the fused outputs' and residual's addresses */
    for (int j = 0; j < q.n_dst; j++)
        q.dst[j].y = s->dptr[n->out[j]];
    const int res_in = cn->d.qconv->res_in;
    q.res = res_in > 0 ? s->dptr[n->in[res_in]] : NULL;
    return eb_cuk_qconv(stream, &q, xp, NULL);
}
