/*
 * eb_model_summarize: inputs/outputs, opset, metadata, op histogram, parameter count and FLOPs
 * of an ONNX file, with static shape propagation for the ops that detector exports use.
 *
 * Parameter rule (chosen so that int8 exports count what the float model counts):
 *   - Conv / ConvTranspose: weight (input 1) and bias (input 2); Gemm: inputs 1 and 2;
 *     MatMul / MatMulInteger: any input that is a constant; BatchNormalization: scale and bias
 *     (not the running mean/variance, which fold away); ConvInteger: weight (input 1).
 *   - An input is followed back through DequantizeLinear / Cast / Identity / Transpose /
 *     Reshape / (Un)Squeeze / Flatten (first input only) to an initializer or Constant, and the
 *     quantised tensor's elements are counted; scales, zero points, shape constants, anchors
 *     and strides are never counted. Each initializer counts once.
 *   - Dynamic quantisation (ConvInteger, MatMulInteger) drops the bias from the conv: ORT adds
 *     it after Cast -> Mul(scales) -> Add(Reshape(bias)). That Add's constant operand is counted
 *     as the conv's bias, so a dynamic-int8 export counts the same as its float original.
 *   - Decoders as torch exports write them: the constant operand of an Add on a MatMul's output
 *     (a Linear's bias) and the rank-1 constant operand of a Mul on a Div's output (the weight
 *     of a normalisation written as x / rms(x) * w). An embedding matrix counts when a MatMul
 *     reads it (tied lm_head); rotary cos/sin tables, which only Gather reads, never count.
 *   - The DFL's fixed Conv2d(16, 1, 1) weight (16 elements) counts, as in Ultralytics' fused
 *     parameter count (3,151,904 for YOLOv8n includes it).
 * FLOPs: Conv/ConvInteger/ConvTranspose 2 x MACs from the weight shape and output size (bias
 * not counted, as thop/Ultralytics do), MatMul/MatMulInteger 2 x M x N x K, Gemm 2 x M x N x K.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eb/path.h"
#include "engine/onnx/onnx_model.h"
#include "model/model.h"

#define MAX_CONST 64

struct val {
    const char *name;
    int rank;                       /* -1 unknown */
    int64_t dims[EB_ONNX_MAX_RANK]; /* -1 unknown */
    int n_const;                    /* > 0: integer constant values known */
    int64_t cv[MAX_CONST];
    int n_fconst; /* > 0: float constant values known */
    float fv[8];
    long producer;                             /* node index or -1 */
    long init;                                 /* initializer index or -1 */
    const struct eb_onnx_tensor *const_tensor; /* Constant node value */
    int counted;
};

struct info {
    const struct eb_onnx_model *m;
    struct val *vals;
    size_t n_vals, cap;
    size_t *table; /* open addressing: index + 1, 0 = empty */
    size_t tcap;
    uint64_t params;
    double flops;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = UINT64_C(1469598103934665603);
    while (*s)
        h = (h ^ (unsigned char)*s++) * UINT64_C(1099511628211);
    return h;
}

static struct val *find(struct info *I, const char *name)
{
    size_t i;
    if (name == NULL || name[0] == '\0')
        return NULL;
    i = (size_t)hash_str(name) & (I->tcap - 1);
    while (I->table[i]) {
        struct val *v = &I->vals[I->table[i] - 1];
        if (strcmp(v->name, name) == 0)
            return v;
        i = (i + 1) & (I->tcap - 1);
    }
    return NULL;
}

/* Finds or adds `name`; NULL for an empty name or when full (capacity precomputed). */
static struct val *intern(struct info *I, const char *name)
{
    size_t i;
    struct val *v;
    if (name == NULL || name[0] == '\0')
        return NULL;
    i = (size_t)hash_str(name) & (I->tcap - 1);
    while (I->table[i]) {
        v = &I->vals[I->table[i] - 1];
        if (strcmp(v->name, name) == 0)
            return v;
        i = (i + 1) & (I->tcap - 1);
    }
    if (I->n_vals >= I->cap)
        return NULL;
    v = &I->vals[I->n_vals++];
    memset(v, 0, sizeof(*v));
    v->name = name;
    v->rank = -1;
    v->producer = -1;
    v->init = -1;
    I->table[i] = I->n_vals;
    return v;
}

static int is_op(const struct eb_onnx_node *n, const char *op)
{
    return strcmp(n->op_type, op) == 0;
}

static const struct eb_onnx_node *producer(struct info *I, const char *name)
{
    struct val *v = find(I, name);
    return v != NULL && v->producer >= 0 ? &I->m->nodes[v->producer] : NULL;
}

static void load_tensor_const(struct val *v, const struct eb_onnx_tensor *t)
{
    size_t n = 0;
    v->rank = t->rank;
    for (int i = 0; i < t->rank; i++)
        v->dims[i] = t->dims[i];
    if (t->numel <= MAX_CONST && t->dtype != EB_ONNX_FLOAT && t->dtype != EB_ONNX_DOUBLE &&
        eb_onnx_tensor_read_i64(t, v->cv, MAX_CONST, &n) == EB_OK && n > 0)
        v->n_const = (int)n;
    if (t->numel <= 8 && (t->dtype == EB_ONNX_FLOAT || t->dtype == EB_ONNX_DOUBLE) &&
        eb_onnx_tensor_read_f32(t, v->fv, 8, &n) == EB_OK && n > 0)
        v->n_fconst = (int)n;
}

static uint64_t numel_of(const struct val *v)
{
    uint64_t n = 1;
    if (v->rank < 0)
        return 0;
    for (int i = 0; i < v->rank; i++) {
        if (v->dims[i] < 0)
            return 0;
        n *= (uint64_t)v->dims[i];
    }
    return n;
}

/*
 * Follows value-preserving ops (DequantizeLinear, Cast, Identity, Transpose, Reshape,
 * (Un)Squeeze, Flatten; first input only) back from `name` to an initializer or Constant and
 * returns its value, or NULL. `*dq_out` (may be NULL) is set to 1 when a DequantizeLinear was on
 * the way.
 */
static struct val *const_source(struct info *I, const char *name, int *dq_out)
{
    struct val *v = find(I, name);
    for (int hop = 0; v != NULL && hop < 16; hop++) {
        const struct eb_onnx_node *p;
        if (v->init >= 0 || v->const_tensor != NULL)
            return v;
        if (v->producer < 0)
            return NULL;
        p = &I->m->nodes[v->producer];
        if (p->n_inputs == 0)
            return NULL;
        if (is_op(p, "DequantizeLinear") && dq_out != NULL)
            *dq_out = 1;
        if (is_op(p, "DequantizeLinear") || is_op(p, "Cast") || is_op(p, "Identity") ||
            is_op(p, "Transpose") || is_op(p, "Reshape") || is_op(p, "Squeeze") ||
            is_op(p, "Unsqueeze") || is_op(p, "Flatten"))
            v = find(I, p->inputs[0]);
        else
            return NULL;
    }
    return NULL;
}

static const struct eb_onnx_tensor *tensor_of(const struct info *I, const struct val *v)
{
    return v->init >= 0 ? &I->m->inits[v->init] : v->const_tensor;
}

/* Counts the elements of the constant behind `name` (const_source) once. */
static void count_param(struct info *I, const char *name)
{
    struct val *v = const_source(I, name, NULL);
    if (v != NULL && !v->counted) {
        v->counted = 1;
        I->params += tensor_of(I, v)->numel;
    }
}

/*
 * A decoder's bias (Add of a constant to a MatMul's output) or normalisation weight (Mul of a
 * rank-1 constant with a Div's output): counts it and returns 1, else 0.
 */
static int decoder_param(struct info *I, const struct eb_onnx_node *n)
{
    const int add = is_op(n, "Add");
    for (int side = 0; side < 2; side++) {
        const struct eb_onnx_node *p = producer(I, n->inputs[side]);
        struct val *c = const_source(I, n->inputs[1 - side], NULL);
        if (p == NULL || c == NULL || !is_op(p, add ? "MatMul" : "Div"))
            continue;
        const struct eb_onnx_tensor *t = tensor_of(I, c);
        if (!add && (t->rank != 1 || t->numel < 2))
            continue;
        count_param(I, n->inputs[1 - side]);
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ precision */

const char *eb_model_precision_name(enum eb_model_precision p)
{
    static const char *const names[EB_MODEL_PRECISION_COUNT] = {
        [EB_MODEL_PRECISION_FP32] = "fp32",
        [EB_MODEL_PRECISION_FP16] = "fp16",
        [EB_MODEL_PRECISION_INT8_DYNAMIC] = "int8-dynamic",
        [EB_MODEL_PRECISION_INT8_QDQ] = "int8-qdq",
        [EB_MODEL_PRECISION_INT8_STATIC] = "int8-static",
        [EB_MODEL_PRECISION_MIXED] = "mixed",
    };
    return (unsigned)p < EB_MODEL_PRECISION_COUNT ? names[p] : "unknown";
}

int eb_model_precision_is_int8(enum eb_model_precision p)
{
    return p == EB_MODEL_PRECISION_INT8_DYNAMIC || p == EB_MODEL_PRECISION_INT8_QDQ ||
           p == EB_MODEL_PRECISION_INT8_STATIC;
}

/*
 * The arithmetic of one node, or -1 for a node that is not a heavy op (or whose kind the graph
 * does not show: a MatMul of two activations outside Q/DQ).
 */
static int heavy_kind(struct info *I, const struct eb_onnx_node *n)
{
    if (n->domain[0] != '\0' && strcmp(n->domain, "ai.onnx") != 0)
        return -1;
    if (is_op(n, "ConvInteger") || is_op(n, "MatMulInteger")) {
        /* ORT's dynamic quantisation: the activation is quantised per frame right before. */
        const struct eb_onnx_node *p = n->n_inputs > 0 ? producer(I, n->inputs[0]) : NULL;
        return p != NULL && is_op(p, "DynamicQuantizeLinear") ? EB_MODEL_PRECISION_INT8_DYNAMIC
                                                              : EB_MODEL_PRECISION_INT8_STATIC;
    }
    if (is_op(n, "QLinearConv") || is_op(n, "QLinearMatMul"))
        return EB_MODEL_PRECISION_INT8_STATIC;
    if (!is_op(n, "Conv") && !is_op(n, "ConvTranspose") && !is_op(n, "MatMul") && !is_op(n, "Gemm"))
        return -1;
    int dq = 0, fp16 = 0, found = 0;
    for (size_t k = 0; k < n->n_inputs && k < 2; k++) {
        const struct eb_onnx_node *p = producer(I, n->inputs[k]);
        const struct val *c = const_source(I, n->inputs[k], &dq);
        if (p != NULL && is_op(p, "DequantizeLinear"))
            dq = 1;
        if (c != NULL) {
            found = 1;
            fp16 |= tensor_of(I, c)->dtype == EB_ONNX_FLOAT16;
        }
    }
    if (dq)
        return EB_MODEL_PRECISION_INT8_QDQ;
    if (!found)
        return -1;
    return fp16 ? EB_MODEL_PRECISION_FP16 : EB_MODEL_PRECISION_FP32;
}

/* A kind that holds at least this share of the heavy ops' FLOPs names the model; below it the
 * model is "mixed". (A quantiser commonly leaves a layer or two in float.) */
#define DOMINANT_SHARE 0.9

static void classify_precision(struct info *I, const double *node_flops,
                               struct eb_model_precision_info *out)
{
    const struct eb_onnx_model *m = I->m;
    double total = 0.0, weight[EB_MODEL_PRECISION_MIXED];
    size_t n_heavy = 0;
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < m->n_nodes; i++) {
        const int k = heavy_kind(I, &m->nodes[i]);
        if (k < 0)
            continue;
        out->ops[k]++;
        out->flops[k] += node_flops[i];
        total += node_flops[i];
        n_heavy++;
    }
    if (n_heavy == 0) {
        /* No Conv/MatMul/Gemm: the initializers' float type is all the graph says. */
        size_t f16 = 0, f32 = 0;
        for (size_t i = 0; i < m->n_inits; i++) {
            f16 += m->inits[i].dtype == EB_ONNX_FLOAT16;
            f32 += m->inits[i].dtype == EB_ONNX_FLOAT;
        }
        out->kind = f16 > 0 && f32 == 0 ? EB_MODEL_PRECISION_FP16 : EB_MODEL_PRECISION_FP32;
        snprintf(out->detail, sizeof(out->detail), "no Conv/MatMul/Gemm; %s initializers",
                 out->kind == EB_MODEL_PRECISION_FP16 ? "float16" : "float32");
        return;
    }
    /* Shares of the FLOPs where the shapes gave them, else of the node counts. */
    const int by_flops = total > 0.0;
    double sum = 0.0;
    int best = 0;
    for (int k = 0; k < EB_MODEL_PRECISION_MIXED; k++) {
        weight[k] = by_flops ? out->flops[k] : (double)out->ops[k];
        sum += weight[k];
        if (weight[k] > weight[best])
            best = k;
    }
    out->kind = weight[best] >= DOMINANT_SHARE * sum ? (enum eb_model_precision)best
                                                     : EB_MODEL_PRECISION_MIXED;
    size_t off = (size_t)snprintf(out->detail, sizeof(out->detail), "%zu heavy op%s:", n_heavy,
                                  n_heavy == 1 ? "" : "s");
    for (int k = 0, first = 1; k < EB_MODEL_PRECISION_MIXED && off < sizeof(out->detail); k++) {
        if (out->ops[k] == 0)
            continue;
        off += (size_t)snprintf(out->detail + off, sizeof(out->detail) - off,
                                "%s %zu %s (%.1f%% of %s)", first ? "" : ",", out->ops[k],
                                eb_model_precision_name((enum eb_model_precision)k),
                                100.0 * weight[k] / sum, by_flops ? "FLOPs" : "them");
        first = 0;
    }
}

static void set_unknown(struct val *o)
{
    if (o != NULL)
        o->rank = -1;
}

static void copy_shape(struct val *o, const struct val *x)
{
    if (o == NULL)
        return;
    if (x == NULL || x->rank < 0) {
        o->rank = -1;
        return;
    }
    o->rank = x->rank;
    memcpy(o->dims, x->dims, sizeof(o->dims));
}

static void broadcast(struct val *o, struct val *const *ins, size_t n)
{
    int r = 0;
    for (size_t i = 0; i < n; i++) {
        if (ins[i] == NULL || ins[i]->rank < 0) {
            set_unknown(o);
            return;
        }
        if (ins[i]->rank > r)
            r = ins[i]->rank;
    }
    o->rank = r;
    for (int d = 0; d < r; d++) {
        int64_t dim = 1;
        for (size_t i = 0; i < n; i++) {
            int k = d - (r - ins[i]->rank);
            int64_t x = k >= 0 ? ins[i]->dims[k] : 1;
            if (x == 1)
                continue;
            if (x < 0 || (dim != 1 && dim != x)) {
                dim = x < 0 ? -1 : (dim > x ? dim : x);
                continue;
            }
            dim = x;
        }
        o->dims[d] = dim;
    }
}

static int norm_axis(int64_t a, int rank)
{
    if (a < 0)
        a += rank;
    return a >= 0 && a < rank ? (int)a : -1;
}

static void infer_conv(struct info *I, const struct eb_onnx_node *n, struct val *x, struct val *w,
                       struct val *o)
{
    const struct eb_onnx_attr *pads = eb_onnx_node_attr(n, "pads");
    const struct eb_onnx_attr *strides = eb_onnx_node_attr(n, "strides");
    const struct eb_onnx_attr *dil = eb_onnx_node_attr(n, "dilations");
    const struct eb_onnx_attr *ap = eb_onnx_node_attr(n, "auto_pad");
    int64_t group = eb_onnx_node_attr_int(n, "group", 1);
    int sp;
    double macs;
    if (x == NULL || w == NULL || x->rank < 3 || w->rank != x->rank) {
        set_unknown(o);
        return;
    }
    sp = x->rank - 2;
    o->rank = x->rank;
    o->dims[0] = x->dims[0];
    o->dims[1] = w->dims[0];
    for (int i = 0; i < sp; i++) {
        int64_t in = x->dims[2 + i], k = w->dims[2 + i];
        int64_t s = strides && (size_t)i < strides->n_ints ? strides->ints[i] : 1;
        int64_t d = dil && (size_t)i < dil->n_ints ? dil->ints[i] : 1;
        int64_t pb = pads && (size_t)(i + sp) < pads->n_ints ? pads->ints[i] : 0;
        int64_t pe = pads && (size_t)(i + sp) < pads->n_ints ? pads->ints[i + sp] : 0;
        if (in < 0 || k < 0 || s <= 0 || d <= 0) {
            o->dims[2 + i] = -1;
            continue;
        }
        if (ap != NULL && ap->s != NULL && strncmp(ap->s, "SAME", 4) == 0)
            o->dims[2 + i] = (in + s - 1) / s;
        else if (ap != NULL && ap->s != NULL && strcmp(ap->s, "VALID") == 0)
            o->dims[2 + i] = (in - (k - 1) * d - 1) / s + 1;
        else
            o->dims[2 + i] = (in + pb + pe - (k - 1) * d - 1) / s + 1;
    }
    (void)group;
    macs = 1.0;
    for (int i = 0; i < o->rank; i++) {
        if (o->dims[i] < 0)
            return;
        macs *= (double)o->dims[i];
    }
    for (int i = 1; i < w->rank; i++) {
        if (w->dims[i] < 0)
            return;
        macs *= (double)w->dims[i];
    }
    I->flops += 2.0 * macs;
}

static void infer_matmul(struct info *I, struct val *a, struct val *b, struct val *o)
{
    struct val ba, bb;
    struct val *bi[2];
    int64_t m, k, nn;
    if (a == NULL || b == NULL || a->rank < 1 || b->rank < 1) {
        set_unknown(o);
        return;
    }
    m = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
    k = a->dims[a->rank - 1];
    nn = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    memset(&ba, 0, sizeof(ba));
    memset(&bb, 0, sizeof(bb));
    ba.rank = a->rank > 2 ? a->rank - 2 : 0;
    bb.rank = b->rank > 2 ? b->rank - 2 : 0;
    memcpy(ba.dims, a->dims, sizeof(int64_t) * (size_t)ba.rank);
    memcpy(bb.dims, b->dims, sizeof(int64_t) * (size_t)bb.rank);
    bi[0] = &ba;
    bi[1] = &bb;
    broadcast(o, bi, 2);
    if (o->rank < 0 || o->rank > EB_ONNX_MAX_RANK - 2)
        return;
    if (a->rank >= 2)
        o->dims[o->rank++] = m;
    if (b->rank >= 2)
        o->dims[o->rank++] = nn;
    {
        double f = 2.0 * (double)k;
        for (int i = 0; i < o->rank; i++)
            f *= o->dims[i] < 0 ? 0.0 : (double)o->dims[i];
        if (k > 0)
            I->flops += f;
    }
}

static void infer_node(struct info *I, const struct eb_onnx_node *n)
{
    struct val *in[8] = {0};
    struct val *o = n->n_outputs > 0 ? find(I, n->outputs[0]) : NULL;
    size_t ni = n->n_inputs < 8 ? n->n_inputs : 8;
    const char *op = n->op_type;

    for (size_t i = 0; i < ni; i++)
        in[i] = find(I, n->inputs[i]);
    if (o == NULL)
        return;
    if (n->domain[0] != '\0' && strcmp(n->domain, "ai.onnx") != 0) {
        set_unknown(o);
        return;
    }
    if (!strcmp(op, "Conv") || !strcmp(op, "ConvInteger")) {
        infer_conv(I, n, in[0], in[1], o);
    } else if (!strcmp(op, "MatMul") || !strcmp(op, "MatMulInteger")) {
        infer_matmul(I, in[0], in[1], o);
    } else if (!strcmp(op, "Gemm")) {
        int ta = (int)eb_onnx_node_attr_int(n, "transA", 0),
            tb = (int)eb_onnx_node_attr_int(n, "transB", 0);
        if (in[0] && in[1] && in[0]->rank == 2 && in[1]->rank == 2) {
            int64_t M = in[0]->dims[ta ? 1 : 0], K = in[0]->dims[ta ? 0 : 1];
            int64_t N = in[1]->dims[tb ? 0 : 1];
            o->rank = 2;
            o->dims[0] = M;
            o->dims[1] = N;
            if (M > 0 && N > 0 && K > 0)
                I->flops += 2.0 * (double)M * (double)N * (double)K;
        } else {
            set_unknown(o);
        }
    } else if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") ||
               !strcmp(op, "Div") || !strcmp(op, "Pow") || !strcmp(op, "Max") ||
               !strcmp(op, "Min") || !strcmp(op, "Where") || !strcmp(op, "Equal") ||
               !strcmp(op, "Less") || !strcmp(op, "Greater") || !strcmp(op, "And") ||
               !strcmp(op, "PRelu") || !strcmp(op, "Sum")) {
        broadcast(o, in, ni);
        /* Keep small integer arithmetic on constants (shape computations). */
        if (ni == 2 && in[0] && in[1] && in[0]->n_const && in[1]->n_const &&
            (in[0]->n_const == in[1]->n_const || in[1]->n_const == 1)) {
            o->n_const = in[0]->n_const;
            for (int i = 0; i < o->n_const; i++) {
                int64_t a = in[0]->cv[i], b = in[1]->cv[in[1]->n_const == 1 ? 0 : i];
                o->cv[i] = !strcmp(op, "Add")          ? a + b
                           : !strcmp(op, "Sub")        ? a - b
                           : !strcmp(op, "Mul")        ? a * b
                           : (!strcmp(op, "Div") && b) ? a / b
                                                       : a;
            }
        }
    } else if (!strcmp(op, "Concat")) {
        int r = in[0] ? in[0]->rank : -1;
        int ax = norm_axis(eb_onnx_node_attr_int(n, "axis", 0), r);
        int64_t sum = 0;
        int ok = r >= 0 && ax >= 0, nc = 0;
        for (size_t i = 0; i < n->n_inputs && ok; i++) {
            struct val *x = find(I, n->inputs[i]);
            if (x == NULL || x->rank != r)
                ok = 0;
            else
                sum = (sum < 0 || x->dims[ax] < 0) ? -1 : sum + x->dims[ax];
        }
        if (!ok) {
            set_unknown(o);
            return;
        }
        copy_shape(o, in[0]);
        o->dims[ax] = sum;
        if (r == 1) {
            for (size_t i = 0; i < n->n_inputs; i++) {
                struct val *x = find(I, n->inputs[i]);
                if (!x->n_const || nc + x->n_const > MAX_CONST) {
                    nc = 0;
                    break;
                }
                memcpy(o->cv + nc, x->cv, sizeof(int64_t) * (size_t)x->n_const);
                nc += x->n_const;
            }
            o->n_const = nc;
        }
    } else if (!strcmp(op, "Split")) {
        int r = in[0] ? in[0]->rank : -1;
        int ax = norm_axis(eb_onnx_node_attr_int(n, "axis", 0), r);
        const struct eb_onnx_attr *sa = eb_onnx_node_attr(n, "split");
        for (size_t i = 0; i < n->n_outputs; i++) {
            struct val *oi = find(I, n->outputs[i]);
            int64_t sz = -1;
            if (oi == NULL)
                continue;
            if (ax < 0) {
                set_unknown(oi);
                continue;
            }
            if (ni >= 2 && in[1] && in[1]->n_const == (int)n->n_outputs)
                sz = in[1]->cv[i];
            else if (sa && sa->n_ints == n->n_outputs)
                sz = sa->ints[i];
            else if (in[0]->dims[ax] >= 0 && n->n_outputs > 0)
                sz = in[0]->dims[ax] / (int64_t)n->n_outputs;
            copy_shape(oi, in[0]);
            oi->dims[ax] = sz;
        }
    } else if (!strcmp(op, "Slice")) {
        struct val *x = in[0];
        copy_shape(o, x);
        if (x == NULL || x->rank < 0)
            return;
        if (ni >= 3 && in[1] && in[2] && in[1]->n_const && in[1]->n_const == in[2]->n_const) {
            for (int i = 0; i < in[1]->n_const; i++) {
                int ax = ni >= 4 && in[3] && in[3]->n_const == in[1]->n_const
                             ? norm_axis(in[3]->cv[i], x->rank)
                             : i;
                int64_t st = ni >= 5 && in[4] && in[4]->n_const > i ? in[4]->cv[i] : 1;
                int64_t d, b, e;
                if (ax < 0 || st == 0) {
                    set_unknown(o);
                    return;
                }
                d = x->dims[ax];
                if (d < 0) {
                    o->dims[ax] = -1;
                    continue;
                }
                b = in[1]->cv[i];
                e = in[2]->cv[i];
                if (b < 0)
                    b += d;
                if (e < 0)
                    e += d;
                if (st > 0) {
                    b = b < 0 ? 0 : (b > d ? d : b);
                    e = e < 0 ? 0 : (e > d ? d : e);
                    o->dims[ax] = e > b ? (e - b + st - 1) / st : 0;
                } else {
                    b = b < -1 ? -1 : (b > d - 1 ? d - 1 : b);
                    e = e < -1 ? -1 : (e > d - 1 ? d - 1 : e);
                    o->dims[ax] = b > e ? (b - e - st - 1) / -st : 0;
                }
            }
            if (x->n_const && x->rank == 1 && in[1]->n_const == 1 && o->dims[0] >= 0) {
                int64_t b = in[1]->cv[0] < 0 ? in[1]->cv[0] + x->n_const : in[1]->cv[0];
                if (b >= 0 && b + o->dims[0] <= x->n_const) {
                    o->n_const = (int)o->dims[0];
                    memcpy(o->cv, x->cv + b, sizeof(int64_t) * (size_t)o->n_const);
                }
            }
        } else {
            set_unknown(o);
        }
    } else if (!strcmp(op, "Resize") || !strcmp(op, "Upsample")) {
        struct val *x = in[0];
        struct val *sc = !strcmp(op, "Upsample") || ni == 2 ? in[1] : (ni >= 3 ? in[2] : NULL);
        struct val *sz = ni >= 4 ? in[3] : NULL;
        copy_shape(o, x);
        if (x == NULL || x->rank < 0)
            return;
        if (sz && sz->n_const == x->rank) {
            for (int i = 0; i < x->rank; i++)
                o->dims[i] = sz->cv[i];
        } else if (sc && sc->n_fconst == x->rank) {
            for (int i = 0; i < x->rank; i++)
                o->dims[i] = x->dims[i] < 0 ? -1 : (int64_t)((double)x->dims[i] * sc->fv[i]);
        } else {
            set_unknown(o);
        }
    } else if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool")) {
        struct val w;
        const struct eb_onnx_attr *ks = eb_onnx_node_attr(n, "kernel_shape");
        double f = I->flops;
        if (in[0] == NULL || in[0]->rank < 3 || ks == NULL ||
            ks->n_ints != (size_t)(in[0]->rank - 2)) {
            set_unknown(o);
            return;
        }
        memset(&w, 0, sizeof(w));
        w.rank = in[0]->rank;
        w.dims[0] = in[0]->dims[1];
        w.dims[1] = 1;
        for (size_t i = 0; i < ks->n_ints; i++)
            w.dims[2 + i] = ks->ints[i];
        infer_conv(I, n, in[0], &w, o);
        I->flops = f; /* pooling is not counted as FLOPs */
    } else if (!strcmp(op, "GlobalAveragePool") || !strcmp(op, "GlobalMaxPool")) {
        copy_shape(o, in[0]);
        for (int i = 2; i < o->rank; i++)
            o->dims[i] = 1;
    } else if (!strcmp(op, "Reshape")) {
        struct val *x = in[0], *s = in[1];
        int64_t known = 1;
        int neg = -1;
        if (x == NULL || s == NULL || s->n_const == 0 || s->n_const > EB_ONNX_MAX_RANK) {
            set_unknown(o);
            return;
        }
        o->rank = s->n_const;
        for (int i = 0; i < s->n_const; i++) {
            int64_t d = s->cv[i];
            if (d == 0 && !eb_onnx_node_attr_int(n, "allowzero", 0))
                d = i < x->rank ? x->dims[i] : -1;
            if (s->cv[i] == -1) {
                neg = i;
                d = -1;
            } else if (d < 0) {
                known = -1;
            } else if (known >= 0) {
                known *= d;
            }
            o->dims[i] = d;
        }
        if (neg >= 0) {
            uint64_t total = numel_of(x);
            o->dims[neg] = (total > 0 && known > 0) ? (int64_t)(total / (uint64_t)known) : -1;
        }
        if (x->n_const && o->rank == 1) {
            o->n_const = x->n_const;
            memcpy(o->cv, x->cv, sizeof(int64_t) * (size_t)x->n_const);
        }
    } else if (!strcmp(op, "Transpose")) {
        const struct eb_onnx_attr *p = eb_onnx_node_attr(n, "perm");
        struct val *x = in[0];
        if (x == NULL || x->rank < 0) {
            set_unknown(o);
            return;
        }
        o->rank = x->rank;
        for (int i = 0; i < x->rank; i++) {
            int64_t src = p && p->n_ints == (size_t)x->rank ? p->ints[i] : x->rank - 1 - i;
            o->dims[i] = src >= 0 && src < x->rank ? x->dims[src] : -1;
        }
    } else if (!strcmp(op, "Flatten")) {
        struct val *x = in[0];
        int ax = x ? norm_axis(eb_onnx_node_attr_int(n, "axis", 1), x->rank + 1) : -1;
        int64_t a = 1, b = 1;
        if (x == NULL || x->rank < 0 || ax < 0) {
            set_unknown(o);
            return;
        }
        for (int i = 0; i < x->rank; i++) {
            int64_t *t = i < ax ? &a : &b;
            *t = (*t < 0 || x->dims[i] < 0) ? -1 : *t * x->dims[i];
        }
        o->rank = 2;
        o->dims[0] = a;
        o->dims[1] = b;
    } else if (!strcmp(op, "Shape")) {
        struct val *x = in[0];
        o->rank = 1;
        o->dims[0] = x && x->rank >= 0 ? x->rank : -1;
        if (x && x->rank >= 0 && numel_of(x) > 0) {
            o->n_const = x->rank;
            memcpy(o->cv, x->dims, sizeof(int64_t) * (size_t)x->rank);
        }
    } else if (!strcmp(op, "Gather")) {
        struct val *x = in[0], *idx = in[1];
        int ax = x ? norm_axis(eb_onnx_node_attr_int(n, "axis", 0), x->rank) : -1;
        if (x == NULL || idx == NULL || x->rank < 0 || idx->rank < 0 || ax < 0 ||
            x->rank + idx->rank - 1 > EB_ONNX_MAX_RANK) {
            set_unknown(o);
            return;
        }
        o->rank = 0;
        for (int i = 0; i < ax; i++)
            o->dims[o->rank++] = x->dims[i];
        for (int i = 0; i < idx->rank; i++)
            o->dims[o->rank++] = idx->dims[i];
        for (int i = ax + 1; i < x->rank; i++)
            o->dims[o->rank++] = x->dims[i];
        if (x->n_const && x->rank == 1 && idx->n_const == 1 && idx->rank <= 1) {
            int64_t k = idx->cv[0] < 0 ? idx->cv[0] + x->n_const : idx->cv[0];
            if (k >= 0 && k < x->n_const) {
                o->n_const = 1;
                o->cv[0] = x->cv[k];
            }
        }
    } else if (!strcmp(op, "Unsqueeze") || !strcmp(op, "Squeeze")) {
        struct val *x = in[0];
        const struct eb_onnx_attr *aa = eb_onnx_node_attr(n, "axes");
        int64_t axes[EB_ONNX_MAX_RANK];
        int na = 0, unsq = !strcmp(op, "Unsqueeze");
        if (ni >= 2 && in[1] && in[1]->n_const && in[1]->n_const <= EB_ONNX_MAX_RANK) {
            na = in[1]->n_const;
            memcpy(axes, in[1]->cv, sizeof(int64_t) * (size_t)na);
        } else if (aa && aa->n_ints <= EB_ONNX_MAX_RANK) {
            na = (int)aa->n_ints;
            memcpy(axes, aa->ints, sizeof(int64_t) * (size_t)na);
        }
        if (x == NULL || x->rank < 0 || (unsq && (na == 0 || x->rank + na > EB_ONNX_MAX_RANK))) {
            set_unknown(o);
            return;
        }
        if (unsq) {
            int r = x->rank + na, j = 0;
            for (int i = 0; i < r; i++) {
                int hit = 0;
                for (int k = 0; k < na; k++)
                    hit |= norm_axis(axes[k], r) == i;
                o->dims[i] = hit ? 1 : x->dims[j++];
            }
            o->rank = r;
        } else {
            int r = 0;
            for (int i = 0; i < x->rank; i++) {
                int hit = 0;
                for (int k = 0; k < na; k++)
                    hit |= norm_axis(axes[k], x->rank) == i;
                if (na == 0)
                    hit = x->dims[i] == 1;
                if (!hit)
                    o->dims[r++] = x->dims[i];
            }
            o->rank = r;
        }
        if (x->n_const && o->rank <= 1) {
            o->n_const = x->n_const;
            memcpy(o->cv, x->cv, sizeof(int64_t) * (size_t)x->n_const);
        }
    } else if (!strcmp(op, "Constant")) {
        const struct eb_onnx_attr *va = eb_onnx_node_attr(n, "value");
        if (va && va->t) {
            load_tensor_const(o, va->t);
            o->const_tensor = va->t;
        } else {
            set_unknown(o);
        }
    } else if (!strcmp(op, "DynamicQuantizeLinear")) {
        copy_shape(o, in[0]);
        for (size_t i = 1; i < n->n_outputs && i < 3; i++) {
            struct val *oi = find(I, n->outputs[i]);
            if (oi)
                oi->rank = 0;
        }
    } else if (!strcmp(op, "Sigmoid") || !strcmp(op, "Relu") || !strcmp(op, "Tanh") ||
               !strcmp(op, "Exp") || !strcmp(op, "Log") || !strcmp(op, "Sqrt") ||
               !strcmp(op, "Neg") || !strcmp(op, "Abs") || !strcmp(op, "Cast") ||
               !strcmp(op, "Identity") || !strcmp(op, "Softmax") || !strcmp(op, "LeakyRelu") ||
               !strcmp(op, "HardSigmoid") || !strcmp(op, "HardSwish") || !strcmp(op, "Clip") ||
               !strcmp(op, "Erf") || !strcmp(op, "QuantizeLinear") ||
               !strcmp(op, "DequantizeLinear") || !strcmp(op, "Floor") || !strcmp(op, "Ceil") ||
               !strcmp(op, "Round") || !strcmp(op, "Not") || !strcmp(op, "BatchNormalization") ||
               !strcmp(op, "Dropout") || !strcmp(op, "LogSoftmax") || !strcmp(op, "Elu") ||
               !strcmp(op, "Selu") || !strcmp(op, "Softplus") || !strcmp(op, "Reciprocal") ||
               !strcmp(op, "Mish") || !strcmp(op, "Gelu") || !strcmp(op, "Sin") ||
               !strcmp(op, "Cos")) {
        copy_shape(o, in[0]);
        if (in[0] && in[0]->n_const && (!strcmp(op, "Cast") || !strcmp(op, "Identity"))) {
            o->n_const = in[0]->n_const;
            memcpy(o->cv, in[0]->cv, sizeof(int64_t) * (size_t)o->n_const);
        }
    } else {
        set_unknown(o);
    }
}

/* Shape from value_info / graph outputs when inference could not tell. */
static void fallback_shape(struct val *v, const struct eb_onnx_model *m)
{
    const struct eb_onnx_value *lists[2] = {m->value_info, m->outputs};
    size_t ns[2] = {m->n_value_info, m->n_outputs};
    int complete = v->rank >= 0;
    for (int i = 0; complete && i < v->rank; i++)
        complete = v->dims[i] >= 0;
    if (complete)
        return;
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < ns[l]; i++)
            if (lists[l][i].rank >= 0 && strcmp(lists[l][i].name, v->name) == 0) {
                v->rank = lists[l][i].rank;
                memcpy(v->dims, lists[l][i].dims, sizeof(v->dims));
                return;
            }
}

static void copy_trunc(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static int cmp_ops(const void *a, const void *b)
{
    const struct eb_model_op_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

static enum eb_status summarize_model(const struct eb_onnx_model *m, struct eb_model_summary *out,
                                      struct eb_diag *diag)
{
    struct info I;
    double *node_flops = NULL;
    size_t total = m->n_inits + m->n_inputs, tcap = 16;
    enum eb_status st = EB_ERR_NOMEM;

    memset(&I, 0, sizeof(I));
    memset(out, 0, sizeof(*out));
    I.m = m;
    for (size_t i = 0; i < m->n_nodes; i++)
        total += m->nodes[i].n_outputs + m->nodes[i].n_inputs;
    while (tcap < 2 * total + 16)
        tcap *= 2;
    I.cap = total + 1;
    I.tcap = tcap;
    I.vals = malloc(I.cap * sizeof(*I.vals));
    I.table = calloc(tcap, sizeof(*I.table));
    node_flops = calloc(m->n_nodes + 1, sizeof(*node_flops));
    if (I.vals == NULL || I.table == NULL || node_flops == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM,
                          "failed to summarize model: out of memory; free memory and retry");
        goto fail;
    }
    for (size_t i = 0; i < m->n_inits; i++) {
        struct val *v = intern(&I, m->inits[i].name);
        if (v != NULL && v->init < 0) {
            v->init = (long)i;
            load_tensor_const(v, &m->inits[i]);
        }
    }
    for (size_t i = 0; i < m->n_inputs; i++) {
        struct val *v = intern(&I, m->inputs[i].name);
        if (v != NULL && v->init < 0) {
            v->rank = m->inputs[i].rank;
            memcpy(v->dims, m->inputs[i].dims, sizeof(v->dims));
        }
    }
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct eb_onnx_node *n = &m->nodes[i];
        for (size_t k = 0; k < n->n_inputs; k++)
            (void)intern(&I, n->inputs[k]);
        for (size_t k = 0; k < n->n_outputs; k++) {
            struct val *v = intern(&I, n->outputs[k]);
            if (v != NULL && v->producer < 0 && v->init < 0)
                v->producer = (long)i;
        }
    }
    /* Shapes and FLOPs, in graph order (ONNX graphs are topologically sorted). */
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct eb_onnx_node *n = &m->nodes[i];
        const double before = I.flops;
        infer_node(&I, n);
        node_flops[i] = I.flops - before;
        for (size_t k = 0; k < n->n_outputs; k++) {
            struct val *v = find(&I, n->outputs[k]);
            if (v != NULL)
                fallback_shape(v, m);
        }
    }
    /* Parameters. */
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct eb_onnx_node *n = &m->nodes[i];
        if (is_op(n, "Conv") || is_op(n, "ConvTranspose") || is_op(n, "Gemm")) {
            for (size_t k = 1; k < n->n_inputs && k < 3; k++)
                count_param(&I, n->inputs[k]);
        } else if (is_op(n, "ConvInteger")) {
            if (n->n_inputs > 1)
                count_param(&I, n->inputs[1]);
        } else if (is_op(n, "MatMul") || is_op(n, "MatMulInteger")) {
            for (size_t k = 0; k < n->n_inputs && k < 2; k++)
                count_param(&I, n->inputs[k]);
        } else if (is_op(n, "BatchNormalization")) {
            for (size_t k = 1; k < n->n_inputs && k < 3; k++)
                count_param(&I, n->inputs[k]);
        } else if ((is_op(n, "Add") || is_op(n, "Mul")) && n->n_inputs == 2 &&
                   decoder_param(&I, n)) {
            continue;
        } else if (is_op(n, "Add") && n->n_inputs == 2) {
            /* Bias of a dynamically quantised conv/matmul: Integer op -> Cast -> Mul -> Add. */
            for (int side = 0; side < 2; side++) {
                const struct eb_onnx_node *p = producer(&I, n->inputs[side]);
                int hit = 0;
                if (p == NULL || !is_op(p, "Mul"))
                    continue;
                for (size_t k = 0; k < p->n_inputs && !hit; k++) {
                    const struct eb_onnx_node *q = producer(&I, p->inputs[k]);
                    if (q != NULL && is_op(q, "Cast") && q->n_inputs > 0)
                        q = producer(&I, q->inputs[0]);
                    hit = q != NULL && (is_op(q, "ConvInteger") || is_op(q, "MatMulInteger"));
                }
                if (hit) {
                    count_param(&I, n->inputs[1 - side]);
                    break;
                }
            }
        }
    }
    out->ir_version = m->ir_version;
    out->opset = m->opset;
    if (m->producer_version[0] != '\0') {
        char buf[256];
        snprintf(buf, sizeof(buf), "%.120s %.120s", m->producer_name, m->producer_version);
        copy_trunc(out->producer, sizeof(out->producer), buf);
    } else {
        copy_trunc(out->producer, sizeof(out->producer), m->producer_name);
    }
    out->n_nodes = m->n_nodes;
    for (size_t i = 0; i < m->n_nodes; i++) {
        const char *op = m->nodes[i].op_type;
        size_t k;
        for (k = 0; k < out->n_op_types; k++)
            if (strcmp(out->ops[k].name, op) == 0)
                break;
        if (k == out->n_op_types) {
            if (k == EB_MODEL_MAX_OPS)
                continue;
            copy_trunc(out->ops[k].name, sizeof(out->ops[k].name), op);
            out->n_op_types++;
        }
        out->ops[k].count++;
    }
    qsort(out->ops, out->n_op_types, sizeof(out->ops[0]), cmp_ops);
    out->n_params = I.params;
    out->flops = I.flops;
    classify_precision(&I, node_flops, &out->precision);
    for (size_t i = 0; i < m->n_inputs; i++) {
        struct val *v = find(&I, m->inputs[i].name);
        if ((v != NULL && v->init >= 0) || out->n_inputs >= EB_MODEL_MAX_IO)
            continue;
        struct eb_model_io *io = &out->inputs[out->n_inputs++];
        copy_trunc(io->name, sizeof(io->name), m->inputs[i].name);
        io->elem_type = m->inputs[i].elem_type;
        io->rank = m->inputs[i].rank;
        memcpy(io->shape, m->inputs[i].dims, sizeof(io->shape));
    }
    for (size_t i = 0; i < m->n_outputs && out->n_outputs < EB_MODEL_MAX_IO; i++) {
        struct eb_model_io *io = &out->outputs[out->n_outputs++];
        struct val *v = find(&I, m->outputs[i].name);
        copy_trunc(io->name, sizeof(io->name), m->outputs[i].name);
        io->elem_type = m->outputs[i].elem_type;
        io->rank = m->outputs[i].rank;
        memcpy(io->shape, m->outputs[i].dims, sizeof(io->shape));
        /* Prefer the inferred shape when the file leaves dimensions symbolic. */
        if (v != NULL && v->rank >= 0 && (io->rank < 0 || io->rank == v->rank)) {
            io->rank = v->rank;
            for (int d = 0; d < v->rank; d++)
                if (io->shape[d] < 0 || d >= m->outputs[i].rank)
                    io->shape[d] = v->dims[d];
        }
    }
    for (size_t i = 0; i < m->n_meta && out->n_meta < EB_MODEL_MAX_META; i++) {
        copy_trunc(out->meta[out->n_meta].key, sizeof(out->meta[0].key), m->meta[i].key);
        copy_trunc(out->meta[out->n_meta].value, sizeof(out->meta[0].value), m->meta[i].value);
        out->n_meta++;
    }
    st = EB_OK;
fail:
    free(node_flops);
    free(I.vals);
    free(I.table);
    return st;
}

enum eb_status eb_model_summarize(const uint8_t *bytes, size_t len, const char *what,
                                  struct eb_model_summary *out, struct eb_diag *diag)
{
    struct eb_onnx_model *m = NULL;
    enum eb_status st = eb_onnx_model_parse(bytes, len, what, NULL, &m, diag);
    if (st != EB_OK)
        return st;
    st = summarize_model(m, out, diag);
    eb_onnx_model_destroy(m);
    return st;
}

enum eb_status eb_model_precision_of(const uint8_t *bytes, size_t len, const char *what,
                                     struct eb_model_precision_info *out, struct eb_diag *diag)
{
    struct eb_model_summary *sum = malloc(sizeof(*sum));
    if (sum == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM,
                            "failed to read the precision of model %s: out of memory", what);
    enum eb_status st = eb_model_summarize(bytes, len, what, sum, diag);
    if (st == EB_OK)
        *out = sum->precision;
    free(sum);
    return st;
}

enum eb_status eb_model_read_file(const char *path, uint8_t **bytes_out, size_t *len_out,
                                  struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_IO;
    uint8_t *buf = NULL;
    /* Looked at before anything is read: a FIFO is refused, not waited on. */
    struct stat sb;
    const char *why = NULL;
    const int fd = eb_file_open_regular(path, &sb, &why);
    if (fd == EB_FILE_OPEN_FAILED)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to read model %s: %s; check the path", path,
                            strerror(errno));
    if (fd < 0)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to read model %s: %s; pass an .onnx file",
                            path, why);
    if ((uint64_t)sb.st_size > (uint64_t)EB_MODEL_MAX_FILE) {
        close(fd);
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to read model %s: %lld bytes, above the 2 GiB one ONNX file "
                            "can hold (a larger model keeps its weights in external data files)",
                            path, (long long)sb.st_size);
    }
    const long sz = (long)sb.st_size;
    FILE *fp = fdopen(fd, "rb");
    if (fp == NULL) {
        close(fd);
        return eb_diag_fail(diag, EB_ERR_IO, "failed to read model %s: %s", path, strerror(errno));
    }
    buf = malloc((size_t)sz + 1);
    if (buf == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read model %s: out of memory; free memory",
                          path);
        goto fail;
    }
    if (fread(buf, 1, (size_t)sz, fp) != (size_t)sz) {
        st = eb_diag_fail(diag, EB_ERR_IO, "failed to read model %s: short read; check the file",
                          path);
        goto fail;
    }
    fclose(fp);
    *bytes_out = buf;
    *len_out = (size_t)sz;
    return EB_OK;
fail:
    free(buf);
    fclose(fp);
    return st;
}

enum eb_status eb_model_summarize_file(const char *path, struct eb_model_summary *out,
                                       struct eb_diag *diag)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    struct eb_onnx_model *m = NULL;
    enum eb_status st = eb_model_read_file(path, &bytes, &len, diag);
    if (st != EB_OK)
        return st;
    st = eb_onnx_model_parse(bytes, len, path, NULL, &m, diag);
    if (st == EB_OK)
        st = summarize_model(m, out, diag);
    eb_onnx_model_destroy(m);
    free(bytes);
    return st;
}
