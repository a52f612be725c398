/*
 * --qdq int8 (run after constant folding, before fusion): every chain
 *
 *     DequantizeLinear(x_q uint8, per-tensor) → Conv(w, bias) [→ QuantizeLinear(per-tensor)]
 *
 * whose weight w was folded from DequantizeLinear(w_q int8/uint8 constant; per tensor or per
 * output channel) becomes one edgebench.QLinearConv (ops/qconv.c): integer convolution with
 * exact int32 accumulation. With the QuantizeLinear (the Conv's only reader: ONNX Runtime's
 * placement) the output is requantised in float to bytes; the Conv node is rewritten in place
 * and takes over the QuantizeLinear's output, the QuantizeLinear is marked dead. Without one
 * (TensorRT's placement, Q/DQ at the Conv inputs only) the output stays float, acc * scale +
 * bias, and a Relu, LeakyRelu or SiLU (Sigmoid·Mul) reading only it moves into that epilogue
 * (absorb_float_act). The now unread float weight and DequantizeLinear are left to dead-node
 * elimination.
 *
 * A chain is rewritten only when everything checks (a QuantizeLinear counts only when it is the
 * Conv's only reader and the output is no graph output): the scales are finite and
 * positive; and the folded weight equals (w_q - w_zp) * w_scale element for element (this is how
 * a per-channel scale is recognised as axis 0). Anything else stays fake-quant float.
 * What the integer path rounds differently from the float one: see ops/qconv.c.
 *
 * A rewritten conv whose output then goes DequantizeLinear → Sigmoid·Mul (SiLU) →
 * QuantizeLinear (the QDQ YOLO models' activation) also absorbs that chain as a 256-entry byte
 * table (absorb_silu): the table is the reference kernels' arithmetic, so it equals --qdq float
 * with the reference Sigmoid and may differ from a faster Sigmoid by its last-ulp roundings.
 */
#include <math.h>

#include "engine/ir/graph.h"
#include "engine/ops/conv.h"
#include "engine/ops/fuse_access.h"
#include "engine/ops/op.h"
#include "engine/ops/qconv.h"

static const struct eb_ir_value *in_value(const struct eb_graph *g, const struct eb_ir_node *n,
                                          int i)
{
    return i < n->n_in && n->in[i] >= 0 ? &g->values[n->in[i]] : NULL;
}

/* The live node producing value `v`, or NULL; with `op` set, only that op. */
static struct eb_ir_node *live_producer(struct eb_graph *g, int v, const struct eb_op_def *op)
{
    const int p = g->values[v].producer;
    if (p < 0 || !g->nodes[p].alive || g->nodes[p].op != op)
        return NULL;
    return &g->nodes[p];
}

/* Any node (live or folded) producing value `v` with `op`. */
static const struct eb_ir_node *any_producer(const struct eb_graph *g, int v,
                                             const struct eb_op_def *op)
{
    const int p = g->values[v].producer;
    return p >= 0 && g->nodes[p].op == op ? &g->nodes[p] : NULL;
}

/* One positive finite constant float scale. */
static int scalar_scale(const struct eb_ir_value *s, float *out)
{
    if (s == NULL || !s->is_const || s->dtype != EB_DTYPE_F32 || s->numel != 1 || s->data == NULL)
        return 0;
    *out = *(const float *)s->data;
    return *out > 0.0f && isfinite(*out);
}

/* Zero point i of a constant uint8/int8 zero-point value (one or per channel); absent = 0. */
static int zp_at(const struct eb_ir_value *z, int64_t i, int32_t *out)
{
    if (z == NULL) {
        *out = 0;
        return 1;
    }
    if (!z->is_const || z->data == NULL)
        return 0;
    if (z->dtype == EB_DTYPE_U8)
        *out = ((const uint8_t *)z->data)[z->numel == 1 ? 0 : i];
    else if (z->dtype == EB_DTYPE_I8)
        *out = ((const int8_t *)z->data)[z->numel == 1 ? 0 : i];
    else
        return 0;
    return 1;
}

static int readers(const struct eb_graph *g, int v)
{
    int count = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const struct eb_ir_node *n = &g->nodes[i];
        if (!n->alive)
            continue;
        for (int k = 0; k < n->n_in; k++)
            count += n->in[k] == v;
    }
    return count;
}

/* Rewrites Conv node `ci` when its chain qualifies; 1 when rewritten, -1 on OOM. */
static int rewrite(struct eb_graph *g, size_t ci)
{
    struct eb_ir_node *c = &g->nodes[ci];
    if (c->n_in < 2 || c->n_out != 1 || c->in[0] < 0 || c->in[1] < 0)
        return 0;
    const int yv = c->out[0];
    /* The QuantizeLinear reading the Conv's output, when it is the only reader; else (Q/DQ at
     * the Conv inputs only) the integer conv has a float output. */
    struct eb_ir_node *q = NULL;
    for (size_t i = 0; i < g->n_nodes && q == NULL; i++)
        if (g->nodes[i].alive && g->nodes[i].op == &eb_op_quantize_linear &&
            g->nodes[i].in[0] == yv)
            q = &g->nodes[i];
    float ys = 1.0f, xs;
    int32_t yz = 0, xz;
    if (q != NULL && (g->values[yv].is_output || readers(g, yv) != 1 || q->n_out != 1 ||
                      !scalar_scale(in_value(g, q, 1), &ys) || !zp_at(in_value(g, q, 2), 0, &yz) ||
                      (in_value(g, q, 2) != NULL && in_value(g, q, 2)->numel != 1)))
        q = NULL;
    const enum eb_dtype qt = q != NULL ? g->values[q->out[0]].dtype : EB_DTYPE_F32;
    if (q != NULL && qt != EB_DTYPE_U8 && qt != EB_DTYPE_I8)
        q = NULL;
    if (q == NULL) {
        ys = 1.0f;
        yz = 0;
    }
    /* x = DequantizeLinear(x_q uint8), per tensor. */
    struct eb_ir_node *dx = live_producer(g, c->in[0], &eb_op_dequantize_linear);
    if (dx == NULL || dx->in[0] < 0 || g->values[dx->in[0]].dtype != EB_DTYPE_U8 ||
        !scalar_scale(in_value(g, dx, 1), &xs) || !zp_at(in_value(g, dx, 2), 0, &xz) ||
        (in_value(g, dx, 2) != NULL && in_value(g, dx, 2)->numel != 1))
        return 0;
    /* w folded from DequantizeLinear(w_q constant). */
    const struct eb_ir_value *w = &g->values[c->in[1]];
    const struct eb_ir_node *dw = any_producer(g, c->in[1], &eb_op_dequantize_linear);
    if (!w->is_const || w->dtype != EB_DTYPE_F32 || w->rank != 4 || dw == NULL || dw->in[0] < 0)
        return 0;
    const struct eb_ir_value *wq = &g->values[dw->in[0]];
    const struct eb_ir_value *wsv = in_value(g, dw, 1), *wzv = in_value(g, dw, 2);
    const int64_t oc = w->shape[0];
    if (!wq->is_const || wq->data == NULL || wq->numel != w->numel ||
        (wq->dtype != EB_DTYPE_I8 && wq->dtype != EB_DTYPE_U8) || wsv == NULL || !wsv->is_const ||
        wsv->dtype != EB_DTYPE_F32 || wsv->data == NULL || (wsv->numel != 1 && wsv->numel != oc) ||
        (wzv != NULL && wzv->numel != 1 && wzv->numel != oc) ||
        (wzv != NULL && wzv->dtype != wq->dtype))
        return 0;
    const struct eb_ir_value *b = in_value(g, c, 2);
    if (b != NULL && (!b->is_const || b->dtype != EB_DTYPE_F32 || b->numel != oc))
        return 0;
    struct eb_qconv_params *p = eb_ir_arena_alloc(&g->arena, sizeof(*p));
    if (p == NULL)
        return -1;
    p->w_zp = eb_ir_arena_alloc(&g->arena, (size_t)oc * sizeof(int32_t));
    p->mult = eb_ir_arena_alloc(&g->arena, (size_t)oc * sizeof(float));
    p->bias = eb_ir_arena_alloc(&g->arena, (size_t)oc * sizeof(float));
    if (p->w_zp == NULL || p->mult == NULL || p->bias == NULL)
        return -1;
    const int64_t per_oc = w->numel / oc;
    const int w_signed = wq->dtype == EB_DTYPE_I8;
    for (int64_t o = 0; o < oc; o++) {
        const float s = ((const float *)wsv->data)[wsv->numel == 1 ? 0 : o];
        if (!(s > 0.0f) || !isfinite(s) || !zp_at(wzv, o, &p->w_zp[o]))
            return 0;
        p->mult[o] = xs * s / ys;
        p->bias[o] = b != NULL ? ((const float *)b->data)[o] / ys : 0.0f;
        /* The folded weight must be exactly DequantizeLinear's result with axis 0. */
        for (int64_t i = o * per_oc; i < (o + 1) * per_oc; i++) {
            const int32_t v =
                w_signed ? ((const int8_t *)wq->data)[i] : ((const uint8_t *)wq->data)[i];
            if ((float)((int64_t)v - p->w_zp[o]) * s != ((const float *)w->data)[i])
                return 0;
        }
    }
    eb_op__conv_run_geometry(g, c, &p->d);
    p->w_signed = w_signed;
    p->y_signed = qt == EB_DTYPE_I8;
    p->y_float = q == NULL;
    p->act = EB_ACT_NONE;
    p->x_zp = xz;
    p->y_zp = yz;
    int *in = eb_ir_arena_alloc(&g->arena, 3 * sizeof(int));
    if (in == NULL)
        return -1;
    in[0] = dx->in[0];
    in[1] = dw->in[0];
    in[2] = b != NULL ? c->in[2] : -1;
    c->in = in;
    c->n_in = 3;
    c->op = &eb_op_qconv;
    c->params = p;
    c->fused = q != NULL ? "qdq_int8" : "qdq_int8_float_out";
    if (q != NULL) {
        c->out[0] = q->out[0];
        g->values[q->out[0]].producer = (int)ci;
        q->alive = 0;
    }
    return 1;
}

/* The live node of `op` that reads value `v` (the first one), NULL when none. */
static struct eb_ir_node *reader_of(struct eb_graph *g, int v, const struct eb_op_def *op)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        struct eb_ir_node *n = &g->nodes[i];
        if (!n->alive || n->op != op)
            continue;
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] == v)
                return n;
    }
    return NULL;
}

static int private_value(const struct eb_graph *g, int v, int n_readers)
{
    return !g->values[v].is_output && readers(g, v) == n_readers;
}

/* One per-tensor constant zero point (or none) of a Q/DQ node's input 2. */
static int scalar_zp(const struct eb_ir_value *z)
{
    return z == NULL || (z->is_const && z->numel == 1 && z->data != NULL &&
                         (z->dtype == EB_DTYPE_U8 || z->dtype == EB_DTYPE_I8));
}

/*
 * QLinearConv node `c` → DequantizeLinear → Sigmoid, Mul(x, sigmoid) → QuantizeLinear: the
 * chain after the integer conv is a function of one byte, so it becomes a 256-entry table built
 * with the reference kernels (DequantizeLinear, Sigmoid, float multiply, QuantizeLinear). 1 when
 * absorbed, -1 on OOM.
 */
static int absorb_silu(struct eb_graph *g, size_t ci)
{
    struct eb_ir_node *c = &g->nodes[ci];
    struct eb_qconv_params *p = c->params;
    const int yq = c->out[0];
    if (!private_value(g, yq, 1))
        return 0;
    struct eb_ir_node *dq = reader_of(g, yq, &eb_op_dequantize_linear);
    float ds, qs;
    if (dq == NULL || dq->in[0] != yq || !scalar_scale(in_value(g, dq, 1), &ds) ||
        !scalar_zp(in_value(g, dq, 2)) || !private_value(g, dq->out[0], 2))
        return 0;
    const int f = dq->out[0];
    struct eb_ir_node *sg = reader_of(g, f, &eb_op_sigmoid);
    struct eb_ir_node *mu = reader_of(g, f, &eb_op_mul);
    if (sg == NULL || mu == NULL || sg->in[0] != f || !private_value(g, sg->out[0], 1) ||
        mu->n_in != 2 ||
        !((mu->in[0] == f && mu->in[1] == sg->out[0]) ||
          (mu->in[1] == f && mu->in[0] == sg->out[0])) ||
        !private_value(g, mu->out[0], 1))
        return 0;
    struct eb_ir_node *q = reader_of(g, mu->out[0], &eb_op_quantize_linear);
    if (q == NULL || q->in[0] != mu->out[0] || q->n_out != 1 ||
        !scalar_scale(in_value(g, q, 1), &qs) || !scalar_zp(in_value(g, q, 2)))
        return 0;
    const enum eb_dtype qt = g->values[q->out[0]].dtype;
    if ((qt != EB_DTYPE_U8 && qt != EB_DTYPE_I8) ||
        g->values[q->out[0]].numel != g->values[yq].numel)
        return 0;
    uint8_t *lut = eb_ir_arena_alloc(&g->arena, 256 + 4); /* slack for 4-byte gathers */
    if (lut == NULL)
        return -1;
    uint8_t bytes[256];
    float deq[256], sig[256];
    for (int i = 0; i < 256; i++)
        bytes[i] = (uint8_t)i;
    const struct eb_ir_value *dz = in_value(g, dq, 2), *qz = in_value(g, q, 2);
    eb_cpu_dequantize_f32__ref(256, 1, 1, p->y_signed ? EB_DTYPE_I8 : EB_DTYPE_U8, bytes, &ds,
                               dz != NULL ? dz->data : NULL, deq);
    eb_cpu_sigmoid_f32__ref(256, deq, sig);
    for (int i = 0; i < 256; i++)
        sig[i] = deq[i] * sig[i];
    eb_cpu_quantize_f32__ref(256, 1, 1, sig, &qs, qz != NULL ? qz->data : NULL, qt == EB_DTYPE_I8,
                             lut);
    p->lut = lut;
    p->out_signed = qt == EB_DTYPE_I8;
    c->out[0] = q->out[0];
    c->fused = "qdq_int8+silu";
    g->values[q->out[0]].producer = (int)ci;
    dq->alive = sg->alive = mu->alive = q->alive = 0;
    return 1;
}

/* The only live reader of value v, or NULL. */
static struct eb_ir_node *only_reader(struct eb_graph *g, int v)
{
    struct eb_ir_node *r = NULL;
    for (size_t i = 0; i < g->n_nodes; i++) {
        struct eb_ir_node *n = &g->nodes[i];
        for (int k = 0; n->alive && k < n->n_in; k++)
            if (n->in[k] == v) {
                if (r != NULL && r != n)
                    return NULL;
                r = n;
            }
    }
    return r;
}

/*
 * A float-output QLinearConv `c` followed by its activation: Relu, LeakyRelu, or Sigmoid·Mul
 * (SiLU) reading nothing else; the activation moves into the conv's float epilogue. 1 when
 * absorbed.
 */
static int absorb_float_act(struct eb_graph *g, size_t ci)
{
    struct eb_ir_node *c = &g->nodes[ci];
    struct eb_qconv_params *p = c->params;
    const int f = c->out[0];
    struct eb_ir_node *last = NULL;
    float alpha = 0.0f, unused = 0.0f;
    if (g->values[f].is_output)
        return 0;
    struct eb_ir_node *a = only_reader(g, f);
    if (a != NULL && a->n_out == 1 && a->in[0] == f && a->op == &eb_op_relu) {
        p->act = EB_ACT_RELU;
        last = a;
    } else if (a != NULL && a->n_out == 1 && a->in[0] == f && a->op == &eb_op_leaky_relu &&
               eb_op__activation_params(a, &alpha, &unused)) {
        p->act = EB_ACT_LEAKY_RELU;
        p->alpha = alpha;
        last = a;
    } else if (a == NULL && private_value(g, f, 2)) {
        struct eb_ir_node *sg = reader_of(g, f, &eb_op_sigmoid);
        struct eb_ir_node *mu = reader_of(g, f, &eb_op_mul);
        if (sg == NULL || mu == NULL || sg->in[0] != f || !private_value(g, sg->out[0], 1) ||
            mu->n_in != 2 || mu->n_out != 1 ||
            !((mu->in[0] == f && mu->in[1] == sg->out[0]) ||
              (mu->in[1] == f && mu->in[0] == sg->out[0])))
            return 0;
        p->act = EB_ACT_SILU;
        sg->alive = 0;
        last = mu;
    }
    if (last == NULL)
        return 0;
    c->out[0] = last->out[0];
    g->values[last->out[0]].producer = (int)ci;
    last->alive = 0;
    c->fused = p->act == EB_ACT_SILU   ? "qdq_int8_float_out+silu"
               : p->act == EB_ACT_RELU ? "qdq_int8_float_out+relu"
                                       : "qdq_int8_float_out+leaky_relu";
    return 1;
}

enum eb_status eb_graph__qdq_int8(struct eb_graph *g, struct eb_diag *diag)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (!g->nodes[i].alive || g->nodes[i].op != &eb_op_conv)
            continue;
        const int r = rewrite(g, i);
        const struct eb_qconv_params *p = r > 0 ? g->nodes[i].params : NULL;
        if (r > 0 && p->y_float) {
            absorb_float_act(g, i);
            continue;
        }
        if (r < 0 || (r > 0 && absorb_silu(g, i) < 0))
            return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory",
                                g->what);
    }
    return EB_OK;
}

enum eb_status eb_graph__qdq_strip(struct eb_graph *g, struct eb_diag *diag)
{
    (void)diag;
    for (size_t k = 0; k < g->n_nodes; k++) {
        struct eb_ir_node *dq = &g->nodes[k];
        if (!dq->alive || dq->op != &eb_op_dequantize_linear || dq->n_in < 1 || dq->in[0] < 0)
            continue;
        const struct eb_ir_node *q = live_producer(g, dq->in[0], &eb_op_quantize_linear);
        const int y = dq->out[0];
        if (q == NULL || q->in[0] < 0 || g->values[y].is_output ||
            g->values[q->in[0]].dtype != EB_DTYPE_F32)
            continue;
        const int x = q->in[0];
        for (size_t j = 0; j < g->n_nodes; j++) {
            struct eb_ir_node *r = &g->nodes[j];
            for (int i = 0; r->alive && i < r->n_in; i++)
                if (r->in[i] == y)
                    r->in[i] = x;
        }
    }
    return EB_OK;
}
