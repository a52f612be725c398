/*
 * The fusion pass: folds the nodes that follow a float Conv into the Conv's epilogue
 * (engine/cpu/epilogue.h), in the epilogue's order, y = fq(act(conv(x) + bias) + residual):
 *
 *   1. Sigmoid(c) and Mul(c, s)           → act SILU (x * sigmoid(x))
 *   2. Relu, LeakyRelu, Clip (constant min ≤ max), HardSigmoid, HardSwish, Sigmoid, Tanh → act
 *   3. Add(c, r), r of c's shape and computed before the Conv runs → residual (Conv input 3)
 *   4. QuantizeLinear → DequantizeLinear, one constant scale (> 0) and zero point shared by the
 *      pair → fake quantisation
 *
 * A step applies only when it is exact: every value absorbed (the Conv's output and the
 * intermediate values of the chain) has no other reader and is not a graph output; the Conv then
 * takes over the last absorbed node's output value and the absorbed nodes are marked dead.
 * Activations must come before the residual and the residual before fake quantisation, so a
 * chain in another order (e.g. the QDQ models' Conv → Q → DQ → Sigmoid·Mul) fuses only its
 * first part.
 *
 * Before those, the float tail of a dynamically quantised convolution, Cast(int32 → float) →
 * Mul(one scale value) [→ Add(constant per-channel bias)], becomes one
 * edgebench.DequantizeI32 node at the Cast (ops/dequant_i32.c), which has the same epilogue, so
 * the steps above then fold its SiLU, residual or fake quantisation in as well.
 *
 * And a YOLO head's DFL decode, Reshape → Transpose (0, 2, 1, 3) → Softmax over the bins → 1x1
 * Conv (bins → 1, constant weights, no bias) → Reshape, becomes one edgebench.DFL node at the
 * first Reshape (ops/dfl.c; docs/architecture.md, "Fusions", says why).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/cpu/epilogue.h"
#include "engine/ir/graph.h"
#include "engine/ops/conv.h"
#include "engine/ops/dequant_i32.h"
#include "engine/ops/dfl.h"
#include "engine/ops/fuse_access.h"
#include "engine/ops/op.h"

struct fuse {
    struct eb_graph *g;
    int *uses; /* per value: input slots of live nodes that read it */
};

/* Up to `max` live nodes after node `from` that read value `v`; returns how many there are. */
static int readers(const struct eb_graph *g, int v, size_t from, int *out, int max)
{
    int n = 0;
    for (size_t k = from + 1; k < g->n_nodes; k++) {
        const struct eb_ir_node *nd = &g->nodes[k];
        if (!nd->alive)
            continue;
        for (int i = 0; i < nd->n_in; i++) {
            if (nd->in[i] == v) {
                if (n < max)
                    out[n] = (int)k;
                n++;
                break;
            }
        }
    }
    return n;
}

static int same_shape(const struct eb_ir_value *a, const struct eb_ir_value *b)
{
    if (a->rank != b->rank || a->dtype != b->dtype)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i])
            return 0;
    return 1;
}

/* The value read by exactly one live node, `want`, which is not a graph output: that node. */
static int sole_reader(const struct fuse *f, int v, size_t from, const struct eb_op_def *want)
{
    int r = -1;
    if (f->g->values[v].is_output || f->uses[v] != 1 || readers(f->g, v, from, &r, 1) != 1)
        return -1;
    return f->g->nodes[r].op == want ? r : -1;
}

static void absorb(struct fuse *f, struct eb_ir_node *n)
{
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] >= 0)
            f->uses[n->in[i]]--;
    n->alive = 0;
    f->g->n_fused++;
}

/* The Conv at `ci` now produces `last`'s output value. */
static void take_over(struct fuse *f, size_t ci, const struct eb_ir_node *last)
{
    struct eb_ir_node *conv = &f->g->nodes[ci];
    conv->out[0] = last->out[0];
    f->g->values[last->out[0]].producer = (int)ci;
}

/* A constant float32 scalar input; 0 when absent, not constant or not one float. */
static int const_f32(const struct eb_graph *g, const struct eb_ir_node *n, int i, float *out)
{
    const struct eb_ir_value *v = eb_op_in(g, n, i);
    if (v == NULL || !v->is_const || v->data == NULL || v->dtype != EB_DTYPE_F32 || v->numel != 1)
        return 0;
    *out = *(const float *)v->data;
    return 1;
}

/* Clip's bounds: attributes (before opset 11) overridden by constant min/max inputs. */
static int clip_bounds(const struct eb_graph *g, const struct eb_ir_node *n, float *lo, float *hi)
{
    if (!eb_op__activation_params(n, lo, hi))
        return 0;
    for (int i = 1; i < n->n_in && i <= 2; i++)
        if (n->in[i] >= 0 && !const_f32(g, n, i, i == 1 ? lo : hi))
            return 0;
    /* The epilogue's clip is max-then-min only when lo ≤ hi (ONNX: hi wins otherwise). */
    return *lo <= *hi;
}

/* A single activation node → epi->act; 1 when fused. */
static int fuse_unary(struct fuse *f, size_t ci, struct eb_epilogue *epi, int c, int ri)
{
    struct eb_graph *g = f->g;
    struct eb_ir_node *a = &g->nodes[ri];
    const struct eb_op_def *op = a->op;
    float p0 = 0.0f, p1 = 0.0f;
    enum eb_act act;
    if (a->n_out != 1 || a->in[0] != c || !same_shape(&g->values[a->out[0]], &g->values[c]))
        return 0;
    if (op == &eb_op_relu) {
        act = EB_ACT_RELU;
    } else if (op == &eb_op_leaky_relu) {
        act = EB_ACT_LEAKY_RELU;
        if (!eb_op__activation_params(a, &p0, &p1))
            return 0;
        p1 = 0.0f;
    } else if (op == &eb_op_clip) {
        act = EB_ACT_CLIP;
        if (!clip_bounds(g, a, &p0, &p1))
            return 0;
    } else if (op == &eb_op_hard_sigmoid) {
        act = EB_ACT_HARD_SIGMOID;
        if (!eb_op__activation_params(a, &p0, &p1))
            return 0;
    } else if (op == &eb_op_hard_swish) {
        act = EB_ACT_HARD_SWISH;
    } else if (op == &eb_op_sigmoid) {
        act = EB_ACT_SIGMOID;
    } else if (op == &eb_op_tanh) {
        act = EB_ACT_TANH;
    } else {
        return 0;
    }
    epi->act = act;
    epi->alpha = p0;
    epi->beta = p1;
    take_over(f, ci, a);
    absorb(f, a);
    return 1;
}

/* Sigmoid(c) + Mul(c, s), or a single activation; 1 when fused. */
static int fuse_act(struct fuse *f, size_t ci, struct eb_epilogue *epi)
{
    struct eb_graph *g = f->g;
    const int c = g->nodes[ci].out[0];
    int rd[2];
    if (g->values[c].is_output)
        return 0;
    if (f->uses[c] == 1 && readers(g, c, ci, rd, 1) == 1)
        return fuse_unary(f, ci, epi, c, rd[0]);
    if (f->uses[c] != 2 || readers(g, c, ci, rd, 2) != 2)
        return 0;
    struct eb_ir_node *sig = &g->nodes[rd[0]], *mul = &g->nodes[rd[1]];
    if (sig->op != &eb_op_sigmoid) {
        struct eb_ir_node *t = sig;
        sig = mul;
        mul = t;
    }
    if (sig->op != &eb_op_sigmoid || mul->op != &eb_op_mul || sig->in[0] != c || mul->n_in != 2)
        return 0;
    const int s = sig->out[0];
    if (g->values[s].is_output || f->uses[s] != 1)
        return 0;
    if (!((mul->in[0] == c && mul->in[1] == s) || (mul->in[0] == s && mul->in[1] == c)))
        return 0;
    if (!same_shape(&g->values[mul->out[0]], &g->values[c]))
        return 0;
    epi->act = EB_ACT_SILU;
    epi->alpha = epi->beta = 0.0f;
    take_over(f, ci, mul);
    absorb(f, sig);
    absorb(f, mul);
    return 1;
}

/* Add(c, r) with r of c's shape, ready before the Conv runs → residual input 3; 1 when fused. */
static enum eb_status fuse_add(struct fuse *f, size_t ci, struct eb_epilogue *epi, int *done,
                               struct eb_diag *diag)
{
    struct eb_graph *g = f->g;
    struct eb_ir_node *conv = &g->nodes[ci];
    const int c = conv->out[0];
    const int ai = sole_reader(f, c, ci, &eb_op_add);
    *done = 0;
    if (ai < 0)
        return EB_OK;
    struct eb_ir_node *add = &g->nodes[ai];
    if (add->n_in != 2 || (add->in[0] != c && add->in[1] != c))
        return EB_OK;
    const int r = add->in[0] == c ? add->in[1] : add->in[0];
    if (r < 0 || r == c)
        return EB_OK;
    const struct eb_ir_value *rv = &g->values[r];
    if (!same_shape(rv, &g->values[c]) || !same_shape(&g->values[add->out[0]], &g->values[c]))
        return EB_OK;
    if (!(rv->is_const || rv->is_input || (rv->producer >= 0 && (size_t)rv->producer < ci)))
        return EB_OK;
    int *in = eb_ir_arena_alloc(&g->arena, 4 * sizeof(int));
    if (in == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory fusing",
                            g->what);
    for (int i = 0; i < 3; i++)
        in[i] = i < conv->n_in ? conv->in[i] : -1;
    in[3] = r;
    conv->in = in;
    conv->n_in = 4;
    f->uses[r]++;
    epi->residual = 1;
    take_over(f, ci, add);
    absorb(f, add);
    *done = 1;
    return EB_OK;
}

/* Zero point input `i` as an integer (absent: 0); 0 when not one constant uint8/int8. */
static int const_zp(const struct eb_graph *g, const struct eb_ir_node *n, int i, int32_t *out)
{
    const struct eb_ir_value *v = eb_op_in(g, n, i);
    if (v == NULL) {
        *out = 0;
        return 1;
    }
    if (!v->is_const || v->data == NULL || v->numel != 1)
        return 0;
    if (v->dtype == EB_DTYPE_U8)
        *out = *(const uint8_t *)v->data;
    else if (v->dtype == EB_DTYPE_I8)
        *out = *(const int8_t *)v->data;
    else
        return 0;
    return 1;
}

/* QuantizeLinear → DequantizeLinear with one shared per-tensor scale/zero point; 1 when fused. */
static int fuse_qdq(struct fuse *f, size_t ci, struct eb_epilogue *epi)
{
    struct eb_graph *g = f->g;
    const int c = g->nodes[ci].out[0];
    const int qi = sole_reader(f, c, ci, &eb_op_quantize_linear);
    if (qi < 0)
        return 0;
    struct eb_ir_node *q = &g->nodes[qi];
    const int qo = q->out[0];
    const int di = q->in[0] == c ? sole_reader(f, qo, (size_t)qi, &eb_op_dequantize_linear) : -1;
    if (di < 0)
        return 0;
    struct eb_ir_node *dq = &g->nodes[di];
    float qs, ds;
    int32_t qz, dz;
    const enum eb_dtype qt = g->values[qo].dtype;
    if (dq->in[0] != qo || (qt != EB_DTYPE_U8 && qt != EB_DTYPE_I8) || !const_f32(g, q, 1, &qs) ||
        !const_f32(g, dq, 1, &ds) || !const_zp(g, q, 2, &qz) || !const_zp(g, dq, 2, &dz))
        return 0;
    /* A zero, negative or non-finite scale maps NaN differently in the epilogue: keep the pair. */
    if (qs != ds || qz != dz || !(qs > 0.0f) || !isfinite(qs) ||
        !same_shape(&g->values[dq->out[0]], &g->values[c]))
        return 0;
    epi->fake_quant = 1;
    epi->fq_scale = qs;
    epi->fq_zp = qz;
    epi->fq_qmin = qt == EB_DTYPE_I8 ? -128 : 0;
    epi->fq_qmax = qt == EB_DTYPE_I8 ? 127 : 255;
    take_over(f, ci, dq);
    absorb(f, q);
    absorb(f, dq);
    return 1;
}

/* v broadcasts against y ([N, C, ...]) as one value (1) or one per channel (2); else 0. */
static int channel_broadcast(const struct eb_ir_value *v, const struct eb_ir_value *y)
{
    if (v->dtype != EB_DTYPE_F32 || v->rank > y->rank)
        return 0;
    if (v->numel == 1)
        return 1;
    if (y->rank < 2 || v->numel != y->shape[1])
        return 0;
    for (int i = 0; i < v->rank; i++) { /* right-aligned: C on y's axis 1, 1 elsewhere */
        const int axis = y->rank - v->rank + i;
        if (v->shape[i] != (axis == 1 ? y->shape[1] : 1))
            return 0;
    }
    return 2;
}

/* The other input of a two-input node that reads `v` once; -1 otherwise. */
static int other_input(const struct eb_ir_node *n, int v)
{
    if (n->n_in != 2 || (n->in[0] == v) == (n->in[1] == v))
        return -1;
    return n->in[0] == v ? n->in[1] : n->in[0];
}

/* Ready before node `k` runs: a constant, a graph input or an earlier node's output. */
static int ready_before(const struct eb_graph *g, int v, size_t k)
{
    const struct eb_ir_value *vv = &g->values[v];
    return vv->is_const || vv->is_input || (vv->producer >= 0 && (size_t)vv->producer < k);
}

/* Cast(int32 → float) → Mul(scale) [→ Add(per-channel constant bias)] → edgebench.DequantizeI32
 * at the Cast's place. */
static enum eb_status fuse_dequant(struct fuse *f, size_t k, struct eb_diag *diag)
{
    struct eb_graph *g = f->g;
    struct eb_ir_node *cast = &g->nodes[k];
    if (cast->op != &eb_op_cast || cast->n_in != 1 || cast->n_out != 1 || cast->in[0] < 0)
        return EB_OK;
    const int c = cast->out[0];
    const struct eb_ir_value *cv = &g->values[c];
    if (g->values[cast->in[0]].dtype != EB_DTYPE_I32 || cv->dtype != EB_DTYPE_F32 || cv->rank < 2)
        return EB_OK;
    const int mi = sole_reader(f, c, k, &eb_op_mul);
    if (mi < 0)
        return EB_OK;
    struct eb_ir_node *mul = &g->nodes[mi], *add = NULL;
    const int sv = other_input(mul, c);
    if (sv < 0 || channel_broadcast(&g->values[sv], cv) != 1 || !ready_before(g, sv, k) ||
        !same_shape(&g->values[mul->out[0]], cv))
        return EB_OK;
    int bv = -1;
    const int ai = sole_reader(f, mul->out[0], (size_t)mi, &eb_op_add);
    if (ai >= 0) {
        add = &g->nodes[ai];
        bv = other_input(add, mul->out[0]);
        if (bv < 0 || !g->values[bv].is_const || channel_broadcast(&g->values[bv], cv) != 2 ||
            !same_shape(&g->values[add->out[0]], cv)) {
            add = NULL;
            bv = -1;
        }
    }
    struct eb_dequant_i32_params *p = eb_ir_arena_alloc(&g->arena, sizeof(*p));
    int *in = eb_ir_arena_alloc(&g->arena, 3 * sizeof(int));
    if (p == NULL || in == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory fusing",
                            g->what);
    memset(p, 0, sizeof(*p));
    p->epi.act = EB_ACT_NONE;
    in[0] = cast->in[0];
    in[1] = sv;
    in[2] = bv;
    cast->op = &eb_op_dequant_i32;
    cast->params = p;
    cast->in = in;
    cast->n_in = 3;
    take_over(f, k, add != NULL ? add : mul);
    absorb(f, mul);
    if (add != NULL)
        absorb(f, add);
    f->uses[sv]++;
    if (bv >= 0)
        f->uses[bv]++;
    return EB_OK;
}

/* Reshape [N, G, R, A] → Transpose (0, 2, 1, 3) → Softmax over R → 1x1 Conv (R → 1, constant
 * weights, no bias, nothing fused) → Reshape [numel N·G·A] → edgebench.DFL at the first
 * Reshape's place (ops/dfl.c). */
static enum eb_status fuse_dfl(struct fuse *f, size_t k, struct eb_diag *diag)
{
    struct eb_graph *g = f->g;
    struct eb_ir_node *r1 = &g->nodes[k];
    if (r1->op != &eb_op_reshape || r1->n_out != 1 || r1->n_in != 2 || r1->in[0] < 0)
        return EB_OK;
    const struct eb_ir_value *v1 = &g->values[r1->out[0]];
    if (v1->rank != 4 || v1->dtype != EB_DTYPE_F32 || g->values[r1->in[0]].is_const)
        return EB_OK;
    const int64_t nb = v1->shape[0], gr = v1->shape[1], bins = v1->shape[2], an = v1->shape[3];
    struct eb_op_desc d;
    const int ti = sole_reader(f, r1->out[0], k, &eb_op_transpose);
    struct eb_ir_node *tr = ti >= 0 ? &g->nodes[ti] : NULL;
    memset(&d, 0, sizeof(d));
    if (tr == NULL || !tr->op->describe(g, tr, &d) || d.perm[0] != 0 || d.perm[1] != 2 ||
        d.perm[2] != 1 || d.perm[3] != 3)
        return EB_OK;
    const int si = sole_reader(f, tr->out[0], (size_t)ti, &eb_op_softmax);
    struct eb_ir_node *sm = si >= 0 ? &g->nodes[si] : NULL;
    memset(&d, 0, sizeof(d));
    if (sm == NULL || !sm->op->describe(g, sm, &d) || d.outer != nb || d.len != bins ||
        d.inner != gr * an)
        return EB_OK;
    const int ci = sole_reader(f, sm->out[0], (size_t)si, &eb_op_conv);
    struct eb_ir_node *cv = ci >= 0 ? &g->nodes[ci] : NULL;
    const struct eb_epilogue *epi = cv != NULL ? eb_op__conv_epilogue(cv) : NULL;
    memset(&d, 0, sizeof(d));
    if (cv == NULL || epi == NULL || cv->in[0] != sm->out[0] || eb_op_in(g, cv, 2) != NULL ||
        epi->act != EB_ACT_NONE || epi->residual || epi->fake_quant ||
        !cv->op->describe(g, cv, &d) || eb_op_in(g, cv, 1)->numel != bins ||
        eb_op_in(g, cv, 1)->data == NULL || d.conv.oc != 1 || d.conv.kh != 1 || d.conv.kw != 1 ||
        d.conv.groups != 1 || d.conv.stride_h != 1 || d.conv.stride_w != 1 || d.conv.pad_t != 0 ||
        d.conv.pad_l != 0 || d.conv.oh != d.conv.ih || d.conv.ow != d.conv.iw)
        return EB_OK;
    const int r2i = sole_reader(f, cv->out[0], (size_t)ci, &eb_op_reshape);
    struct eb_ir_node *r2 = r2i >= 0 ? &g->nodes[r2i] : NULL;
    if (r2 == NULL || r2->in[0] != cv->out[0] || g->values[r2->out[0]].numel != nb * gr * an)
        return EB_OK;
    struct eb_dfl_params *p = eb_ir_arena_alloc(&g->arena, sizeof(*p));
    int *in = eb_ir_arena_alloc(&g->arena, 2 * sizeof(int));
    if (p == NULL || in == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory fusing",
                            g->what);
    const struct eb_ir_value *y = &g->values[r2->out[0]];
    memset(p, 0, sizeof(*p));
    p->outer = nb * gr;
    p->bins = bins;
    p->inner = an;
    p->out_rank = y->rank;
    for (int i = 0; i < y->rank; i++)
        p->out_shape[i] = y->shape[i];
    if (r1->in[1] >= 0)
        f->uses[r1->in[1]]--; /* the shape: no longer read */
    in[0] = r1->in[0];
    in[1] = cv->in[1];
    r1->op = &eb_op_dfl;
    r1->params = p;
    r1->in = in;
    r1->n_in = 2;
    take_over(f, k, r2);
    absorb(f, tr);
    absorb(f, sm);
    absorb(f, cv);
    absorb(f, r2);
    f->uses[in[1]]++;
    return EB_OK;
}

/* The epilogue a node carries (Conv, edgebench.DequantizeI32); NULL for others. */
static struct eb_epilogue *node_epilogue(struct eb_ir_node *n)
{
    if (n->op == &eb_op_dequant_i32)
        return n->params != NULL ? &((struct eb_dequant_i32_params *)n->params)->epi : NULL;
    return eb_op__conv_epilogue(n);
}

static const char *describe(struct eb_graph *g, const struct eb_epilogue *epi)
{
    char buf[48];
    size_t len = 0;
    buf[0] = '\0';
    if (epi->act != EB_ACT_NONE)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s", eb_act_name(epi->act));
    if (epi->residual)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%sadd", len > 0 ? "+" : "");
    if (epi->fake_quant)
        snprintf(buf + len, sizeof(buf) - len, "%sqdq", len > 0 ? "+" : "");
    return eb_ir_arena_strdup(&g->arena, buf);
}

enum eb_status eb_graph__fuse(struct eb_graph *g, struct eb_diag *diag)
{
    struct fuse f = {.g = g, .uses = eb_ir_arena_alloc(&g->arena, (g->n_values + 1) * sizeof(int))};
    if (f.uses == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", g->what);
    for (size_t k = 0; k < g->n_nodes; k++) {
        const struct eb_ir_node *n = &g->nodes[k];
        if (!n->alive)
            continue;
        for (int i = 0; i < n->n_in; i++)
            if (n->in[i] >= 0)
                f.uses[n->in[i]]++;
    }
    for (size_t k = 0; k < g->n_nodes; k++) {
        struct eb_ir_node *n = &g->nodes[k];
        if (n->alive) {
            enum eb_status st = fuse_dfl(&f, k, diag);
            if (st == EB_OK)
                st = fuse_dequant(&f, k, diag);
            if (st != EB_OK)
                return st;
        }
        struct eb_epilogue *epi = n->alive ? node_epilogue(n) : NULL;
        if (epi == NULL || n->n_out != 1 || g->values[n->out[0]].dtype != EB_DTYPE_F32)
            continue;
        int changed = 0, added = 0;
        if (epi->act == EB_ACT_NONE && !epi->residual && !epi->fake_quant)
            changed |= fuse_act(&f, k, epi);
        if (!epi->residual && !epi->fake_quant) {
            enum eb_status st = fuse_add(&f, k, epi, &added, diag);
            if (st != EB_OK)
                return st;
            changed |= added;
        }
        if (!epi->fake_quant)
            changed |= fuse_qdq(&f, k, epi);
        if (changed && (n->fused = describe(g, epi)) == NULL)
            return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory",
                                g->what);
    }
    return EB_OK;
}
