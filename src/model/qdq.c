/*
 * QDQ rewriting (qdq.h): the plan (which convolutions, which tensors), the quantised model and
 * the float twin of a QDQ model. Both rewrites walk the file's protobuf fields and copy every
 * field they do not change as it is, so names, value_info, metadata and unknown fields survive.
 */
#include "model/qdq.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/onnx/onnx_wire.h"
#include "model/synth_internal.h"

#define QDQ_OPSET     13 /* per-axis QuantizeLinear/DequantizeLinear */
#define QDQ_IR_MIN    7  /* the IR version of opset 13 */
#define QDQ_WEIGHT_Q  127
#define NAME_SUFFIXES 40 /* room for the longest suffix appended to a tensor name */
/* A tensor name with a node number and a suffix appended. */
#define QNAME_MAX (EB_ONNX_MAX_NAME + 24 + NAME_SUFFIXES)

/* ---- names ---- */

struct name_ix {
    const char *name;
    long i;
};

static int cmp_name_ix(const void *a, const void *b)
{
    return strcmp(((const struct name_ix *)a)->name, ((const struct name_ix *)b)->name);
}

static long name_find(const struct name_ix *ix, size_t n, const char *name)
{
    const struct name_ix key = {.name = name};
    const struct name_ix *r = n > 0 ? bsearch(&key, ix, n, sizeof(*ix), cmp_name_ix) : NULL;
    return r != NULL ? r->i : -1;
}

/* Every node output → its node; sorted. Caller frees. */
static struct name_ix *producers(const struct eb_onnx_model *m, size_t *n_out)
{
    size_t n = 0;
    for (size_t k = 0; k < m->n_nodes; k++)
        n += m->nodes[k].n_outputs;
    struct name_ix *ix = malloc((n + 1) * sizeof(*ix));
    if (ix == NULL)
        return NULL;
    n = 0;
    for (size_t k = 0; k < m->n_nodes; k++)
        for (size_t j = 0; j < m->nodes[k].n_outputs; j++)
            if (m->nodes[k].outputs[j][0] != '\0')
                ix[n++] = (struct name_ix){m->nodes[k].outputs[j], (long)k};
    qsort(ix, n, sizeof(*ix), cmp_name_ix);
    *n_out = n;
    return ix;
}

/* Initializers by name; sorted. Caller frees. */
static struct name_ix *initializers(const struct eb_onnx_model *m, size_t *n_out)
{
    struct name_ix *ix = malloc((m->n_inits + 1) * sizeof(*ix));
    if (ix == NULL)
        return NULL;
    for (size_t i = 0; i < m->n_inits; i++)
        ix[i] = (struct name_ix){m->inits[i].name, (long)i};
    qsort(ix, m->n_inits, sizeof(*ix), cmp_name_ix);
    *n_out = m->n_inits;
    return ix;
}

static int is_default_domain(const char *d)
{
    return d[0] == '\0' || strcmp(d, "ai.onnx") == 0;
}

static int is_op(const struct eb_onnx_node *n, const char *op)
{
    return is_default_domain(n->domain) && strcmp(n->op_type, op) == 0;
}

static int is_graph_output(const struct eb_onnx_model *m, const char *name)
{
    for (size_t i = 0; i < m->n_outputs; i++)
        if (strcmp(m->outputs[i].name, name) == 0)
            return 1;
    return 0;
}

/* ---- the plan ---- */

/* A Conv whose weight (and bias) are float initializers and whose data input is computed. */
static int quantisable_conv(const struct eb_onnx_model *m, const struct name_ix *inits,
                            size_t n_inits, const struct eb_onnx_node *n)
{
    if (!is_op(n, "Conv") || n->n_inputs < 2 || n->n_outputs < 1)
        return 0;
    if (name_find(inits, n_inits, n->inputs[0]) >= 0)
        return 0;
    const long w = name_find(inits, n_inits, n->inputs[1]);
    if (w < 0 || m->inits[w].dtype != EB_ONNX_FLOAT || m->inits[w].rank < 3 ||
        m->inits[w].dims[0] <= 0)
        return 0;
    if (n->n_inputs >= 3 && n->inputs[2][0] != '\0') {
        const long b = name_find(inits, n_inits, n->inputs[2]);
        if (b < 0 || m->inits[b].dtype != EB_ONNX_FLOAT || m->inits[b].rank != 1 ||
            m->inits[b].dims[0] != m->inits[w].dims[0])
            return 0;
    }
    return 1;
}

/* Ops that only move data, walked through when looking for the DFL's Softmax. */
static int moves_data(const struct eb_onnx_node *n)
{
    static const char *const ops[] = {"Reshape", "Transpose", "Flatten",
                                      "Squeeze", "Unsqueeze", "Identity"};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (is_op(n, ops[i]))
            return 1;
    return 0;
}

/* The conv's data input comes from a Softmax through data movement only (the DFL). */
static int after_softmax(const struct eb_onnx_model *m, const struct name_ix *prod, size_t n_prod,
                         const char *name)
{
    for (int hops = 0; hops < 16; hops++) {
        const long p = name_find(prod, n_prod, name);
        if (p < 0)
            return 0;
        const struct eb_onnx_node *n = &m->nodes[p];
        if (is_op(n, "Softmax"))
            return 1;
        if (!moves_data(n) || n->n_inputs < 1)
            return 0;
        name = n->inputs[0];
    }
    return 0;
}

/*
 * The default float set: walking back from the graph outputs through everything but
 * convolutions, the convolutions met first (each branch's last layer); past a DFL convolution
 * (one fed by a Softmax) the walk goes on to the layer before it.
 */
static enum eb_status mark_auto(const struct eb_onnx_model *m, const struct name_ix *prod,
                                size_t n_prod, unsigned char *node, struct eb_diag *diag)
{
    unsigned char *seen = calloc(m->n_nodes + 1, 1);
    long *stack = malloc((m->n_nodes + m->n_outputs + 1) * sizeof(long));
    size_t top = 0;
    if (seen == NULL || stack == NULL) {
        free(seen);
        free(stack);
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to plan the quantisation: out of memory");
    }
    for (size_t i = 0; i < m->n_outputs; i++) {
        const long p = name_find(prod, n_prod, m->outputs[i].name);
        if (p >= 0 && !seen[p]) {
            seen[p] = 1;
            stack[top++] = p;
        }
    }
    while (top > 0) {
        const struct eb_onnx_node *n = &m->nodes[stack[--top]];
        const long k = n - m->nodes;
        size_t n_walk = n->n_inputs;
        if (is_op(n, "Conv")) {
            if (node[k] == EB_QDQ_NODE_INT8)
                node[k] = EB_QDQ_NODE_FLOAT;
            n_walk = after_softmax(m, prod, n_prod, n->inputs[0]) ? 1 : 0;
        }
        for (size_t j = 0; j < n_walk; j++) {
            const long p = name_find(prod, n_prod, n->inputs[j]);
            if (p >= 0 && !seen[p]) {
                seen[p] = 1;
                stack[top++] = p;
            }
        }
    }
    free(seen);
    free(stack);
    return EB_OK;
}

/* --keep_float: "auto", "none" and node names (or a node's first output). */
static enum eb_status mark_keep(const struct eb_onnx_model *m, const struct name_ix *prod,
                                size_t n_prod, const char *list, unsigned char *node,
                                struct eb_diag *diag)
{
    const char *p = list != NULL ? list : "auto";
    while (*p != '\0') {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        char name[EB_ONNX_MAX_NAME];
        if (len >= sizeof(name))
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "--keep_float: a name is too long");
        memcpy(name, p, len);
        name[len] = '\0';
        p += len + (end != NULL);
        if (len == 0 || strcmp(name, "none") == 0)
            continue;
        if (strcmp(name, "auto") == 0) {
            enum eb_status st = mark_auto(m, prod, n_prod, node, diag);
            if (st != EB_OK)
                return st;
            continue;
        }
        long k = -1;
        for (size_t i = 0; i < m->n_nodes && k < 0; i++)
            if (strcmp(m->nodes[i].name, name) == 0)
                k = (long)i;
        if (k < 0)
            k = name_find(prod, n_prod, name);
        if (k < 0)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "--keep_float: the model has no node or tensor named '%s'; "
                                "`edgebench model info --nodes` lists them",
                                name);
        if (!is_op(&m->nodes[k], "Conv"))
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "--keep_float: node '%s' is a %s; only Conv nodes are quantised",
                                name, m->nodes[k].op_type);
        if (node[k] == EB_QDQ_NODE_INT8)
            node[k] = EB_QDQ_NODE_FLOAT;
    }
    return EB_OK;
}

/* Ops whose form and meaning are the same from their opset-10..12 versions to opset 13. */
static const char *const k_same_at_13[] = {
    "Abs",
    "Add",
    "And",
    "ArgMax",
    "ArgMin",
    "AveragePool",
    "BatchNormalization",
    "Cast",
    "Ceil",
    "Clip",
    "Concat",
    "Constant",
    "ConstantOfShape",
    "Conv",
    "ConvTranspose",
    "DepthToSpace",
    "Div",
    "Elu",
    "Equal",
    "Erf",
    "Exp",
    "Expand",
    "Flatten",
    "Floor",
    "Gather",
    "Gemm",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "Greater",
    "HardSigmoid",
    "Identity",
    "InstanceNormalization",
    "LeakyRelu",
    "Less",
    "Log",
    "MatMul",
    "Max",
    "MaxPool",
    "Min",
    "Mul",
    "Neg",
    "Not",
    "Or",
    "Pad",
    "Pow",
    "PRelu",
    "Range",
    "Reciprocal",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "Relu",
    "Reshape",
    "Resize",
    "Selu",
    "Shape",
    "Sigmoid",
    "Sign",
    "Slice",
    "Softplus",
    "SpaceToDepth",
    "Sqrt",
    "Sub",
    "Sum",
    "Tanh",
    "Tile",
    "TopK",
    "Transpose",
    "Where",
};

/* Ops rewritten when the opset is raised to 13 (rewrite_node). */
static const char *const k_rewritten_at_13[] = {
    "Split", "Squeeze", "Unsqueeze", "ReduceSum", "Softmax", "LogSoftmax", "Hardmax",
};

static int in_list(const char *op, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(op, list[i]) == 0)
            return 1;
    return 0;
}

static int is_softmax_like(const struct eb_onnx_node *n)
{
    return is_op(n, "Softmax") || is_op(n, "LogSoftmax") || is_op(n, "Hardmax");
}

static enum eb_status check_opset_raise(const struct eb_onnx_model *m, struct eb_qdq_plan *plan,
                                        struct eb_diag *diag)
{
    size_t n_soft = 0;
    for (size_t k = 0; k < m->n_nodes; k++) {
        const struct eb_onnx_node *n = &m->nodes[k];
        if (!is_default_domain(n->domain))
            continue;
        if (!in_list(n->op_type, k_same_at_13, EB_ARRAY_LEN(k_same_at_13)) &&
            !in_list(n->op_type, k_rewritten_at_13, EB_ARRAY_LEN(k_rewritten_at_13)))
            return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                                "failed to quantise per channel: it needs opset 13 and the "
                                "model's is %lld, and its %s node '%s' may mean something else "
                                "at opset 13; quantise per tensor (--per_channel off) or export "
                                "the model at opset 13",
                                (long long)m->opset, n->op_type, n->name);
        n_soft += is_softmax_like(n) && n->n_inputs > 0;
    }
    plan->shapes = calloc(n_soft + 1, sizeof(*plan->shapes));
    if (plan->shapes == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to plan the quantisation: out of memory");
    for (size_t k = 0; k < m->n_nodes; k++)
        if (is_softmax_like(&m->nodes[k]) && m->nodes[k].n_inputs > 0)
            plan->shapes[plan->n_shapes++] =
                (struct eb_qdq_shape){.name = m->nodes[k].inputs[0], .rank = -1};
    return EB_OK;
}

static int cmp_act(const void *a, const void *b)
{
    return strcmp(((const struct eb_qdq_act *)a)->name, ((const struct eb_qdq_act *)b)->name);
}

static int cmp_shape(const void *a, const void *b)
{
    return strcmp(((const struct eb_qdq_shape *)a)->name, ((const struct eb_qdq_shape *)b)->name);
}

static void add_act(struct eb_qdq_plan *plan, const char *name)
{
    plan->acts[plan->n_acts++] = (struct eb_qdq_act){.name = name, .rank = -1, .scale = 1.0f};
}

enum eb_status eb_qdq_plan_build(const struct eb_onnx_model *m, const char *keep_float,
                                 int per_channel, int conv_outputs, struct eb_qdq_plan *plan,
                                 struct eb_diag *diag)
{
    size_t n_prod = 0, n_inits = 0;
    enum eb_status st = EB_OK;
    memset(plan, 0, sizeof(*plan));
    plan->m = m;
    plan->per_channel = per_channel;
    for (size_t i = 0; i < m->n_inits; i++)
        if (m->inits[i].external)
            return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                                "failed to quantise: initializer '%s' is in an external data "
                                "file; save the model with its weights inside the .onnx file",
                                m->inits[i].name);
    struct name_ix *prod = producers(m, &n_prod), *inits = initializers(m, &n_inits);
    plan->node = calloc(m->n_nodes + 1, 1);
    plan->acts = calloc(2 * m->n_nodes + 1, sizeof(*plan->acts));
    if (prod == NULL || inits == NULL || plan->node == NULL || plan->acts == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to plan the quantisation: out of memory");
        goto done;
    }
    for (size_t k = 0; k < m->n_nodes; k++)
        if (quantisable_conv(m, inits, n_inits, &m->nodes[k]))
            plan->node[k] = EB_QDQ_NODE_INT8;
    if ((st = mark_keep(m, prod, n_prod, keep_float, plan->node, diag)) != EB_OK)
        goto done;
    for (size_t k = 0; k < m->n_nodes; k++) {
        const struct eb_onnx_node *n = &m->nodes[k];
        plan->n_int8 += plan->node[k] == EB_QDQ_NODE_INT8;
        plan->n_float += plan->node[k] == EB_QDQ_NODE_FLOAT;
        if (plan->node[k] != EB_QDQ_NODE_INT8)
            continue;
        add_act(plan, n->inputs[0]);
        if (conv_outputs && !is_graph_output(m, n->outputs[0]))
            add_act(plan, n->outputs[0]);
    }
    if (plan->n_int8 == 0) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                          "failed to quantise: no convolution to quantise (%zu Conv kept in "
                          "float, none with float weights otherwise); see --keep_float",
                          plan->n_float);
        goto done;
    }
    qsort(plan->acts, plan->n_acts, sizeof(*plan->acts), cmp_act);
    size_t w = 0;
    for (size_t i = 0; i < plan->n_acts; i++)
        if (w == 0 || strcmp(plan->acts[w - 1].name, plan->acts[i].name) != 0)
            plan->acts[w++] = plan->acts[i];
    plan->n_acts = w;
    plan->opset_out = m->opset;
    if (m->opset < QDQ_OPSET && (per_channel || m->opset < 10)) {
        if ((st = check_opset_raise(m, plan, diag)) != EB_OK)
            goto done;
        qsort(plan->shapes, plan->n_shapes, sizeof(*plan->shapes), cmp_shape);
        plan->opset_out = QDQ_OPSET;
    }
done:
    free(prod);
    free(inits);
    if (st != EB_OK)
        eb_qdq_plan_fini(plan);
    return st;
}

void eb_qdq_plan_fini(struct eb_qdq_plan *plan)
{
    free(plan->node);
    free(plan->acts);
    free(plan->shapes);
    plan->node = NULL;
    plan->acts = NULL;
    plan->shapes = NULL;
    plan->n_acts = plan->n_shapes = 0;
}

long eb_qdq_plan_act(const struct eb_qdq_plan *plan, const char *name)
{
    const struct eb_qdq_act key = {.name = name};
    const struct eb_qdq_act *r =
        plan->n_acts > 0 ? bsearch(&key, plan->acts, plan->n_acts, sizeof(key), cmp_act) : NULL;
    return r != NULL ? r - plan->acts : -1;
}

size_t eb_qdq_plan_drop(struct eb_qdq_plan *plan, size_t i)
{
    const struct eb_onnx_model *m = plan->m;
    size_t moved = 0;
    plan->acts[i].dropped = 1;
    for (size_t k = 0; k < m->n_nodes; k++)
        if (plan->node[k] == EB_QDQ_NODE_INT8 &&
            strcmp(m->nodes[k].inputs[0], plan->acts[i].name) == 0) {
            plan->node[k] = EB_QDQ_NODE_FLOAT;
            plan->n_int8--;
            plan->n_float++;
            moved++;
        }
    return moved;
}

/* The activation `name` gets a pair written (planned, not dropped). */
static long live_act(const struct eb_qdq_plan *plan, const char *name)
{
    const long a = name[0] != '\0' ? eb_qdq_plan_act(plan, name) : -1;
    return a >= 0 && !plan->acts[a].dropped ? a : -1;
}

long eb_qdq_plan_shape(const struct eb_qdq_plan *plan, const char *name)
{
    const struct eb_qdq_shape key = {.name = name};
    const struct eb_qdq_shape *r =
        plan->n_shapes > 0 ? bsearch(&key, plan->shapes, plan->n_shapes, sizeof(key), cmp_shape)
                           : NULL;
    return r != NULL ? r - plan->shapes : -1;
}

/* ---- protobuf copying ---- */

/* Appends field `f` as it was read. */
static void copy_field(struct eb_pb_buf *b, const struct eb_pb_field *f)
{
    switch (f->wire) {
    case EB_PB_WIRE_VARINT: eb_pb_put_varint(b, f->num, (int64_t)f->u); break;
    case EB_PB_WIRE_LEN: eb_pb_put_bytes(b, f->num, f->data, f->len); break;
    case EB_PB_WIRE_I64:
    case EB_PB_WIRE_I32: {
        const int n = f->wire == EB_PB_WIRE_I64 ? 8 : 4;
        uint8_t raw[8];
        for (int i = 0; i < n; i++)
            raw[i] = (uint8_t)(f->u >> (8 * i));
        eb_pb_put_uvarint(b, ((uint64_t)f->num << 3) | (uint64_t)f->wire);
        eb_pb_put_raw(b, raw, (size_t)n);
        break;
    }
    }
}

/* The name (field 1) of an AttributeProto or StringStringEntryProto payload, in `buf`. */
static void field1_string(const struct eb_pb_reader *parent, const struct eb_pb_field *f, char *buf,
                          size_t size)
{
    struct eb_pb_reader r;
    struct eb_pb_field a;
    int have;
    buf[0] = '\0';
    eb_pb_reader_sub(&r, parent, f);
    while (eb_pb_next(&r, &a, &have) == EB_OK && have)
        if (a.num == 1 && a.wire == EB_PB_WIRE_LEN) {
            snprintf(buf, size, "%.*s", (int)(a.len < size ? a.len : size - 1),
                     (const char *)a.data);
            return;
        }
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A scalar or 1-D initializer of 4-byte elements (float or int32). */
static void init_le32(struct eb_pb_buf *inits, const char *name, int dtype, int rank, int64_t n,
                      const uint32_t *v, uint8_t *scratch)
{
    for (int64_t i = 0; i < n; i++)
        put_le32(scratch + 4 * i, v[i]);
    eb_synth__init_raw(inits, name, dtype, &n, rank, scratch, (size_t)n * 4);
}

/* The model around a rewritten graph: ir_version and the default opset raised when asked,
 * metadata entries of `meta` replaced or added, everything else copied. */
static enum eb_status write_model(const uint8_t *bytes, size_t len, const struct eb_pb_buf *graph,
                                  int64_t opset, const struct eb_qdq_meta *meta, size_t n_meta,
                                  uint8_t **out, size_t *out_len, const char *what,
                                  struct eb_diag *diag)
{
    struct eb_pb_reader r;
    struct eb_pb_field f;
    struct eb_pb_buf b;
    int have;
    enum eb_status st;
    eb_pb_buf_init(&b);
    eb_pb_reader_init(&r, bytes, bytes, len);
    while ((st = eb_pb_next(&r, &f, &have)) == EB_OK && have) {
        if (f.num == 1 && f.wire == EB_PB_WIRE_VARINT && opset >= QDQ_OPSET &&
            (int64_t)f.u < QDQ_IR_MIN) {
            eb_pb_put_varint(&b, 1, QDQ_IR_MIN);
        } else if (f.num == 7 && f.wire == EB_PB_WIRE_LEN) {
            eb_pb_put_msg(&b, 7, graph);
        } else if (f.num == 8 && f.wire == EB_PB_WIRE_LEN) {
            char domain[64];
            field1_string(&r, &f, domain, sizeof(domain));
            if (is_default_domain(domain)) {
                struct eb_pb_buf o;
                eb_pb_buf_init(&o);
                if (domain[0] != '\0')
                    eb_pb_put_str(&o, 1, domain);
                eb_pb_put_varint(&o, 2, opset);
                eb_pb_put_msg(&b, 8, &o);
                eb_pb_buf_fini(&o);
            } else {
                copy_field(&b, &f);
            }
        } else if (f.num == 14 && f.wire == EB_PB_WIRE_LEN) {
            char key[256];
            int replaced = 0;
            field1_string(&r, &f, key, sizeof(key));
            for (size_t i = 0; i < n_meta; i++)
                replaced |= strcmp(key, meta[i].key) == 0;
            if (!replaced)
                copy_field(&b, &f);
        } else {
            copy_field(&b, &f);
        }
    }
    for (size_t i = 0; i < n_meta && st == EB_OK; i++) {
        struct eb_pb_buf e;
        eb_pb_buf_init(&e);
        eb_pb_put_str(&e, 1, meta[i].key);
        eb_pb_put_str(&e, 2, meta[i].value);
        eb_pb_put_msg(&b, 14, &e);
        eb_pb_buf_fini(&e);
    }
    if (st != EB_OK) {
        eb_pb_buf_fini(&b);
        return eb_diag_fail(diag, EB_ERR_FORMAT, "failed to rewrite %s: malformed at byte %zu",
                            what, r.err_offset);
    }
    *out = eb_pb_buf_take(&b, out_len);
    eb_pb_buf_fini(&b);
    if (*out == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to rewrite %s: out of memory", what);
    return EB_OK;
}

/* ---- quantisation ---- */

struct qwriter {
    const struct eb_qdq_plan *plan;
    const struct eb_onnx_model *m;
    struct name_ix *inits, *taken;
    size_t n_inits, n_taken;
    unsigned char *drop_init; /* per initializer: read only by int8 convs (replaced) */
    unsigned char *w_done;    /* per initializer: its weight DQ was written */
    int *bias_uses;           /* per initializer: int8 convs reading it as bias */
    struct eb_pb_buf pre, nodes, inits_out;
    uint8_t *scratch; /* 4 bytes per element of the largest initializer */
    struct eb_diag *diag;
    enum eb_status st;
};

static void qw_fail(struct qwriter *w, enum eb_status st, const char *msg, const char *name)
{
    if (w->st == EB_OK)
        w->st = eb_diag_fail(w->diag, st, "failed to quantise: %s '%s'", msg, name);
}

/* `base` + `suffix` into buf; fails when the name exists in the model already. */
static const char *qname(struct qwriter *w, char *buf, size_t size, const char *base,
                         const char *suffix)
{
    snprintf(buf, size, "%s%s", base, suffix);
    if (name_find(w->taken, w->n_taken, buf) >= 0)
        qw_fail(w, EB_ERR_UNSUPPORTED, "the model already has a tensor named", buf);
    return buf;
}

/* QuantizeLinear → DequantizeLinear of activation `a` into `dst`. */
static void emit_act_pair(struct qwriter *w, struct eb_pb_buf *dst, const struct eb_qdq_act *a)
{
    char s[EB_ONNX_MAX_NAME + NAME_SUFFIXES], z[sizeof(s)], q[sizeof(s)], d[sizeof(s)],
        nq[sizeof(s)], nd[sizeof(s)];
    uint32_t su;
    memcpy(&su, &a->scale, 4);
    qname(w, s, sizeof(s), a->name, "_scale");
    qname(w, z, sizeof(z), a->name, "_zero_point");
    qname(w, q, sizeof(q), a->name, "_QuantizeLinear_Output");
    qname(w, d, sizeof(d), a->name, "_DequantizeLinear_Output");
    snprintf(nq, sizeof(nq), "%s_QuantizeLinear", a->name);
    snprintf(nd, sizeof(nd), "%s_DequantizeLinear", a->name);
    init_le32(&w->inits_out, s, EB_ONNX_FLOAT, 0, 1, &su, w->scratch);
    eb_synth__init_raw(&w->inits_out, z, EB_ONNX_UINT8, NULL, 0, &a->zero_point, 1);
    const char *qin[] = {a->name, s, z}, *din[] = {q, s, z};
    const char *qout[] = {q}, *dout[] = {d};
    eb_synth__node(dst, "QuantizeLinear", nq, qin, 3, qout, 1, NULL);
    eb_synth__node(dst, "DequantizeLinear", nd, din, 3, dout, 1, NULL);
}

/* Symmetric int8 scales of a [C, ...] weight: per channel (C scales) or one. */
static void weight_scales(const float *wf, int64_t c, int64_t per, int per_channel, float *scale)
{
    for (int64_t o = 0; o < (per_channel ? c : 1); o++) {
        const int64_t n = per_channel ? per : c * per;
        double amax = 0.0;
        for (int64_t i = 0; i < n; i++)
            amax = fmax(amax, fabs((double)wf[o * per + i]));
        scale[o] = amax > 0.0 ? (float)(amax / QDQ_WEIGHT_Q) : 1.0f;
    }
}

/* The int8 weight (and its DequantizeLinear) of int8 conv `n`; its scales in `scale`. */
static void emit_weight(struct qwriter *w, const struct eb_onnx_node *n, float *wf, float *scale,
                        int64_t *n_scale)
{
    const long wi = name_find(w->inits, w->n_inits, n->inputs[1]);
    const struct eb_onnx_tensor *t = &w->m->inits[wi];
    const int64_t c = t->dims[0], per = (int64_t)t->numel / c;
    const int pc = w->plan->per_channel;
    size_t got = 0;
    if (eb_onnx_tensor_read_f32(t, wf, t->numel, &got) != EB_OK || got != t->numel) {
        qw_fail(w, EB_ERR_FORMAT, "cannot read the weights", t->name);
        return;
    }
    weight_scales(wf, c, per, pc, scale);
    *n_scale = pc ? c : 1;
    if (w->w_done[wi])
        return;
    w->w_done[wi] = 1;
    char qn[EB_ONNX_MAX_NAME + NAME_SUFFIXES], sn[sizeof(qn)], zn[sizeof(qn)], dn[sizeof(qn)],
        nn[sizeof(qn)];
    int8_t *q = (int8_t *)w->scratch;
    for (int64_t o = 0; o < c; o++)
        for (int64_t i = 0; i < per; i++) {
            const double v = nearbyint((double)wf[o * per + i] / scale[pc ? o : 0]);
            q[o * per + i] = (int8_t)(v > QDQ_WEIGHT_Q    ? QDQ_WEIGHT_Q
                                      : v < -QDQ_WEIGHT_Q ? -QDQ_WEIGHT_Q
                                                          : v);
        }
    qname(w, qn, sizeof(qn), t->name, "_quantized");
    qname(w, sn, sizeof(sn), t->name, "_scale");
    qname(w, zn, sizeof(zn), t->name, "_zero_point");
    qname(w, dn, sizeof(dn), t->name, "_DequantizeLinear_Output");
    snprintf(nn, sizeof(nn), "%s_DequantizeLinear", t->name);
    eb_synth__init_raw(&w->inits_out, qn, EB_ONNX_INT8, t->dims, t->rank, q, t->numel);
    memset(w->scratch, 0, (size_t)*n_scale);
    eb_synth__init_raw(&w->inits_out, zn, EB_ONNX_INT8, n_scale, pc, w->scratch, (size_t)*n_scale);
    init_le32(&w->inits_out, sn, EB_ONNX_FLOAT, pc, *n_scale, (const uint32_t *)scale, w->scratch);
    struct eb_pb_buf attrs;
    eb_pb_buf_init(&attrs);
    if (pc)
        eb_synth__attr_int(&attrs, "axis", 0);
    const char *in[] = {qn, sn, zn}, *out[] = {dn};
    eb_synth__node(&w->pre, "DequantizeLinear", nn, in, 3, out, 1, &attrs);
    eb_pb_buf_fini(&attrs);
}

/* The int32 bias of int8 conv `k` at scale x_scale × w_scale (per channel). */
static void emit_bias(struct qwriter *w, size_t k, const struct eb_onnx_node *n, float x_scale,
                      const float *w_scale, int64_t n_scale, char *dq_out, size_t dq_size)
{
    const long bi = name_find(w->inits, w->n_inits, n->inputs[2]);
    const struct eb_onnx_tensor *t = &w->m->inits[bi];
    const int64_t c = t->dims[0];
    const int pc = n_scale > 1;
    float *bf = malloc((size_t)c * sizeof(float) * 2 + 4);
    size_t got = 0;
    if (bf == NULL) {
        qw_fail(w, EB_ERR_NOMEM, "out of memory at", t->name);
        return;
    }
    float *bs = bf + c;
    if (eb_onnx_tensor_read_f32(t, bf, (size_t)c, &got) != EB_OK || got != (size_t)c) {
        free(bf);
        qw_fail(w, EB_ERR_FORMAT, "cannot read the bias", t->name);
        return;
    }
    /* A bias shared by several int8 convs gets one quantised copy per conv (their input scales
     * differ). */
    char base[EB_ONNX_MAX_NAME + 24], qn[QNAME_MAX], sn[sizeof(qn)], zn[sizeof(qn)], nn[sizeof(qn)];
    if (w->bias_uses[bi] > 1)
        snprintf(base, sizeof(base), "%s_%zu", t->name, k);
    else
        snprintf(base, sizeof(base), "%s", t->name);
    int32_t *q = (int32_t *)w->scratch;
    for (int64_t o = 0; o < c; o++) {
        const double s = (double)x_scale * (double)w_scale[pc ? o : 0];
        const double v = nearbyint((double)bf[o] / s);
        q[o] = (int32_t)(v > 2147483647.0 ? 2147483647.0 : v < -2147483647.0 ? -2147483647.0 : v);
        bs[o] = (float)s;
    }
    for (int64_t o = 0; o < c; o++)
        put_le32(w->scratch + 4 * o, (uint32_t)q[o]);
    qname(w, qn, sizeof(qn), base, "_quantized");
    qname(w, sn, sizeof(sn), base, "_quantized_scale");
    qname(w, zn, sizeof(zn), base, "_quantized_zero_point");
    snprintf(dq_out, dq_size, "%s_DequantizeLinear_Output", base);
    snprintf(nn, sizeof(nn), "%s_DequantizeLinear", base);
    if (name_find(w->taken, w->n_taken, dq_out) >= 0)
        qw_fail(w, EB_ERR_UNSUPPORTED, "the model already has a tensor named", dq_out);
    eb_synth__init_raw(&w->inits_out, qn, EB_ONNX_INT32, t->dims, 1, w->scratch, (size_t)c * 4);
    const int64_t ns = pc ? c : 1;
    init_le32(&w->inits_out, sn, EB_ONNX_FLOAT, pc, ns, (const uint32_t *)bs, w->scratch);
    memset(w->scratch, 0, (size_t)ns * 4);
    eb_synth__init_raw(&w->inits_out, zn, EB_ONNX_INT32, &ns, pc, w->scratch, (size_t)ns * 4);
    free(bf);
    struct eb_pb_buf attrs;
    eb_pb_buf_init(&attrs);
    if (pc)
        eb_synth__attr_int(&attrs, "axis", 0);
    const char *in[] = {qn, sn, zn}, *out[] = {dq_out};
    eb_synth__node(&w->pre, "DequantizeLinear", nn, in, 3, out, 1, &attrs);
    eb_pb_buf_fini(&attrs);
}

/* What a node becomes at opset 13 (see the file comment of qdq.h). */
struct node_fix {
    const char *drop_attr; /* attribute moved to an input, or replaced */
    const char *extra_in;  /* the new input's initializer name */
    int softmax_axis;      /* >= 0: write axis = this */
    const char *ins[4];    /* Resize: its inputs at opset 13 ("" = omitted) */
    int n_ins;             /* > 0: ins replaces the node's inputs */
};

/* An initializer with no elements (how opset 11 exports leave Resize's roi/scales unused). */
static int empty_init(const struct qwriter *w, const char *name)
{
    const long i = name[0] != '\0' ? name_find(w->inits, w->n_inits, name) : -1;
    return i >= 0 && w->m->inits[i].numel == 0;
}

static void plan_fix(struct qwriter *w, size_t k, struct node_fix *fx, char *extra,
                     size_t extra_size)
{
    const struct eb_onnx_node *n = &w->m->nodes[k];
    memset(fx, 0, sizeof(*fx));
    fx->softmax_axis = -1;
    if (w->plan->opset_out < QDQ_OPSET || w->m->opset >= QDQ_OPSET || !is_default_domain(n->domain))
        return;
    const char *attr = is_op(n, "Split") ? "split"
                       : is_op(n, "Squeeze") || is_op(n, "Unsqueeze") || is_op(n, "ReduceSum")
                           ? "axes"
                           : NULL;
    if (attr != NULL) {
        const struct eb_onnx_attr *a = eb_onnx_node_attr(n, attr);
        if (a == NULL || a->n_ints == 0)
            return;
        const char *base = n->outputs[0];
        fx->drop_attr = attr;
        fx->extra_in = qname(w, extra, extra_size, base, is_op(n, "Split") ? "_split" : "_axes");
        int64_t len = (int64_t)a->n_ints;
        uint8_t *raw = w->scratch;
        for (size_t i = 0; i < a->n_ints; i++)
            for (int b = 0; b < 8; b++)
                raw[8 * i + b] = (uint8_t)((uint64_t)a->ints[i] >> (8 * b));
        eb_synth__init_raw(&w->inits_out, extra, EB_ONNX_INT64, &len, 1, raw, a->n_ints * 8);
        return;
    }
    if (is_op(n, "Resize")) {
        /* opset 10: (X, scales); 11/12: (X, roi, scales, sizes) where an unused scales may be an
         * empty tensor, which opset 13 reads as given (sizes and scales both) */
        if (w->m->opset < 11 && n->n_inputs == 2) {
            fx->ins[0] = n->inputs[0], fx->ins[1] = "", fx->ins[2] = n->inputs[1];
            fx->n_ins = 3;
        } else if (n->n_inputs == 4 && n->inputs[3][0] != '\0') {
            for (int j = 0; j < 4; j++)
                fx->ins[j] = j > 0 && j < 3 && empty_init(w, n->inputs[j]) ? "" : n->inputs[j];
            fx->n_ins = 4;
        }
        return;
    }
    if (!is_softmax_like(n))
        return;
    const long si = eb_qdq_plan_shape(w->plan, n->inputs[0]);
    const struct eb_qdq_shape *sh = si >= 0 ? &w->plan->shapes[si] : NULL;
    int64_t axis = eb_onnx_node_attr_int(n, "axis", 1);
    if (sh == NULL || sh->rank < 1) {
        qw_fail(w, EB_ERR_UNSUPPORTED,
                "raising the opset to 13 for per-channel weights: the calibration did not see "
                "the input shape of",
                n->name);
        return;
    }
    if (axis < 0)
        axis += sh->rank;
    int64_t inner = 1;
    for (int d = (int)axis + 1; d < sh->rank; d++)
        inner *= sh->shape[d];
    if (axis < 0 || axis >= sh->rank || inner != 1) {
        qw_fail(w, EB_ERR_UNSUPPORTED,
                "raising the opset to 13 for per-channel weights changes the meaning of "
                "(quantise per tensor with --per_channel off)",
                n->name);
        return;
    }
    fx->drop_attr = "axis";
    fx->softmax_axis = (int)axis;
}

/* Node k with its inputs renamed and, at a raised opset, its form fixed. */
static void emit_node(struct qwriter *w, size_t k, const struct eb_pb_reader *gr,
                      const struct eb_pb_field *nf)
{
    const struct eb_onnx_node *n = &w->m->nodes[k];
    const int int8 = w->plan->node[k] == EB_QDQ_NODE_INT8;
    char wdq[QNAME_MAX], bdq[QNAME_MAX], extra[QNAME_MAX];
    float *wf = NULL, *ws = NULL;
    int64_t n_scale = 0;
    struct node_fix fx;
    plan_fix(w, k, &fx, extra, sizeof(extra));
    if (int8) {
        const long wi = name_find(w->inits, w->n_inits, n->inputs[1]);
        const struct eb_onnx_tensor *t = &w->m->inits[wi];
        wf = malloc(t->numel * sizeof(float) + 4);
        ws = malloc((size_t)t->dims[0] * sizeof(float) + 4);
        if (wf == NULL || ws == NULL) {
            qw_fail(w, EB_ERR_NOMEM, "out of memory at", n->name);
        } else {
            emit_weight(w, n, wf, ws, &n_scale);
            snprintf(wdq, sizeof(wdq), "%s_DequantizeLinear_Output", t->name);
            if (n->n_inputs >= 3 && n->inputs[2][0] != '\0' && w->st == EB_OK) {
                const long ai = eb_qdq_plan_act(w->plan, n->inputs[0]);
                emit_bias(w, k, n, w->plan->acts[ai].scale, ws, n_scale, bdq, sizeof(bdq));
            }
        }
        free(wf);
        free(ws);
    }
    struct eb_pb_reader r;
    struct eb_pb_field f;
    struct eb_pb_buf b;
    int have;
    size_t j = 0;
    eb_pb_buf_init(&b);
    eb_pb_reader_sub(&r, gr, nf);
    while (eb_pb_next(&r, &f, &have) == EB_OK && have) {
        if (f.num == 1 && f.wire == EB_PB_WIRE_LEN && fx.n_ins > 0) {
            continue; /* written below */
        } else if (f.num == 1 && f.wire == EB_PB_WIRE_LEN && j < n->n_inputs) {
            const char *in = n->inputs[j];
            char renamed[EB_ONNX_MAX_NAME + NAME_SUFFIXES];
            if (int8 && j == 1)
                in = wdq;
            else if (int8 && j == 2 && in[0] != '\0')
                in = bdq;
            else if (live_act(w->plan, in) >= 0)
                in =
                    (snprintf(renamed, sizeof(renamed), "%s_DequantizeLinear_Output", in), renamed);
            eb_pb_put_str(&b, 1, in);
            j++;
        } else if (f.num == 5 && f.wire == EB_PB_WIRE_LEN && fx.drop_attr != NULL) {
            char an[64];
            field1_string(&r, &f, an, sizeof(an));
            if (strcmp(an, fx.drop_attr) != 0)
                copy_field(&b, &f);
        } else {
            copy_field(&b, &f);
        }
    }
    for (int i = 0; i < fx.n_ins; i++) {
        char renamed[QNAME_MAX];
        const char *in = fx.ins[i];
        if (live_act(w->plan, in) >= 0)
            in = (snprintf(renamed, sizeof(renamed), "%s_DequantizeLinear_Output", in), renamed);
        eb_pb_put_str(&b, 1, in);
    }
    if (fx.extra_in != NULL) /* the last input: repeated fields keep their order */
        eb_pb_put_str(&b, 1, fx.extra_in);
    if (fx.softmax_axis >= 0)
        eb_synth__attr_int(&b, "axis", fx.softmax_axis);
    eb_pb_put_msg(&w->nodes, 1, &b);
    eb_pb_buf_fini(&b);
    for (size_t o = 0; o < n->n_outputs; o++) {
        const long ai = live_act(w->plan, n->outputs[o]);
        if (ai >= 0)
            emit_act_pair(w, &w->nodes, &w->plan->acts[ai]);
    }
}

static enum eb_status qw_init(struct qwriter *w, const struct eb_qdq_plan *plan,
                              struct eb_diag *diag)
{
    const struct eb_onnx_model *m = plan->m;
    size_t n_prod = 0, biggest = 64;
    memset(w, 0, sizeof(*w));
    w->plan = plan;
    w->m = m;
    w->diag = diag;
    eb_pb_buf_init(&w->pre);
    eb_pb_buf_init(&w->nodes);
    eb_pb_buf_init(&w->inits_out);
    w->inits = initializers(m, &w->n_inits);
    struct name_ix *prod = producers(m, &n_prod);
    w->drop_init = calloc(m->n_inits + 1, 1);
    w->w_done = calloc(m->n_inits + 1, 1);
    w->bias_uses = calloc(m->n_inits + 1, sizeof(int));
    w->taken = malloc((n_prod + m->n_inits + m->n_inputs + 1) * sizeof(*w->taken));
    for (size_t i = 0; i < m->n_inits; i++)
        biggest = m->inits[i].numel * 8 > biggest ? m->inits[i].numel * 8 : biggest;
    w->scratch = malloc(biggest);
    if (w->inits == NULL || prod == NULL || w->drop_init == NULL || w->w_done == NULL ||
        w->bias_uses == NULL || w->taken == NULL || w->scratch == NULL) {
        free(prod);
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to quantise: out of memory");
    }
    memcpy(w->taken, prod, n_prod * sizeof(*prod));
    w->n_taken = n_prod;
    free(prod);
    for (size_t i = 0; i < m->n_inits; i++)
        w->taken[w->n_taken++] = (struct name_ix){m->inits[i].name, (long)i};
    for (size_t i = 0; i < m->n_inputs; i++)
        w->taken[w->n_taken++] = (struct name_ix){m->inputs[i].name, (long)i};
    qsort(w->taken, w->n_taken, sizeof(*w->taken), cmp_name_ix);
    /* An initializer is replaced when every reader is an int8 conv reading it as weight/bias. */
    int *uses = calloc(m->n_inits + 1, sizeof(int));
    if (uses == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to quantise: out of memory");
    for (size_t k = 0; k < m->n_nodes; k++)
        for (size_t j = 0; j < m->nodes[k].n_inputs; j++) {
            const long i = name_find(w->inits, w->n_inits, m->nodes[k].inputs[j]);
            if (i < 0)
                continue;
            if (plan->node[k] == EB_QDQ_NODE_INT8 && (j == 1 || j == 2)) {
                w->drop_init[i]++;
                w->bias_uses[i] += j == 2;
            }
            uses[i]++;
        }
    for (size_t i = 0; i < m->n_inits; i++)
        w->drop_init[i] = w->drop_init[i] > 0 && w->drop_init[i] == uses[i] &&
                          !is_graph_output(m, m->inits[i].name);
    free(uses);
    return EB_OK;
}

static void qw_fini(struct qwriter *w)
{
    free(w->inits);
    free(w->taken);
    free(w->drop_init);
    free(w->w_done);
    free(w->bias_uses);
    free(w->scratch);
    eb_pb_buf_fini(&w->pre);
    eb_pb_buf_fini(&w->nodes);
    eb_pb_buf_fini(&w->inits_out);
}

/* The name of a graph's initializer (TensorProto field 8) or input (ValueInfoProto field 1). */
static void graph_entry_name(const struct eb_pb_reader *gr, const struct eb_pb_field *f, char *name,
                             size_t size)
{
    if (f->num != 5) {
        field1_string(gr, f, name, size);
        return;
    }
    struct eb_pb_reader tr;
    struct eb_pb_field tf;
    int have;
    name[0] = '\0';
    eb_pb_reader_sub(&tr, gr, f);
    while (eb_pb_next(&tr, &tf, &have) == EB_OK && have)
        if (tf.num == 8 && tf.wire == EB_PB_WIRE_LEN) {
            snprintf(name, size, "%.*s", (int)(tf.len < size ? tf.len : size - 1),
                     (const char *)tf.data);
            return;
        }
}

/* The graph message's bytes in the file (ModelProto field 7). */
static int find_graph(const uint8_t *bytes, size_t len, struct eb_pb_reader *top,
                      struct eb_pb_field *gf)
{
    int have;
    eb_pb_reader_init(top, bytes, bytes, len);
    while (eb_pb_next(top, gf, &have) == EB_OK && have)
        if (gf->num == 7 && gf->wire == EB_PB_WIRE_LEN)
            return 1;
    return 0;
}

enum eb_status eb_qdq_write(const uint8_t *bytes, size_t len, const struct eb_qdq_plan *plan,
                            const struct eb_qdq_meta *meta, size_t n_meta, uint8_t **out,
                            size_t *out_len, struct eb_diag *diag)
{
    struct qwriter w;
    struct eb_pb_reader top, gr;
    struct eb_pb_field gf, f;
    struct eb_pb_buf graph;
    int have;
    size_t k = 0;
    enum eb_status st = qw_init(&w, plan, diag);
    eb_pb_buf_init(&graph);
    if (st != EB_OK)
        goto done;
    if (!find_graph(bytes, len, &top, &gf)) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT, "failed to quantise: the file has no graph");
        goto done;
    }
    for (size_t i = 0; i < plan->m->n_inputs; i++) {
        const long ai = live_act(plan, plan->m->inputs[i].name);
        if (ai >= 0 && name_find(w.inits, w.n_inits, plan->m->inputs[i].name) < 0)
            emit_act_pair(&w, &w.pre, &plan->acts[ai]);
    }
    eb_pb_reader_sub(&gr, &top, &gf);
    while (w.st == EB_OK && eb_pb_next(&gr, &f, &have) == EB_OK && have) {
        if (f.num == 1 && f.wire == EB_PB_WIRE_LEN) {
            if (k >= plan->m->n_nodes)
                break;
            emit_node(&w, k++, &gr, &f);
        } else if ((f.num == 5 || f.num == 11) && f.wire == EB_PB_WIRE_LEN) {
            /* an initializer, or a graph input (IR 3 lists initializers as inputs) */
            char name[EB_ONNX_MAX_NAME];
            graph_entry_name(&gr, &f, name, sizeof(name));
            const long i = name_find(w.inits, w.n_inits, name);
            if (i < 0 || !w.drop_init[i])
                copy_field(&graph, &f);
        } else {
            copy_field(&graph, &f);
        }
    }
    if (w.st != EB_OK) {
        st = w.st;
        goto done;
    }
    if (k != plan->m->n_nodes) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT, "failed to quantise: the graph's nodes changed");
        goto done;
    }
    {
        /* nodes first (prologue, then the graph's), then everything else */
        struct eb_pb_buf g2;
        eb_pb_buf_init(&g2);
        eb_pb_put_raw(&g2, w.pre.data, w.pre.len);
        eb_pb_put_raw(&g2, w.nodes.data, w.nodes.len);
        eb_pb_put_raw(&g2, graph.data, graph.len);
        eb_pb_put_raw(&g2, w.inits_out.data, w.inits_out.len);
        if (eb_pb_buf_error(&g2) || eb_pb_buf_error(&w.pre) || eb_pb_buf_error(&w.nodes) ||
            eb_pb_buf_error(&graph) || eb_pb_buf_error(&w.inits_out))
            st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to quantise: out of memory");
        else
            st = write_model(bytes, len, &g2, plan->opset_out, meta, n_meta, out, out_len,
                             "the model", diag);
        eb_pb_buf_fini(&g2);
    }
done:
    eb_pb_buf_fini(&graph);
    qw_fini(&w);
    return st;
}

/* ---- dequantisation ---- */

struct rename {
    const char *from, *to; /* borrowed from the model */
};

static int cmp_rename(const void *a, const void *b)
{
    return strcmp(((const struct rename *)a)->from, ((const struct rename *)b)->from);
}

static const char *renamed(const struct rename *rn, size_t n, const char *name)
{
    const struct rename key = {.from = name};
    const struct rename *r = n > 0 ? bsearch(&key, rn, n, sizeof(key), cmp_rename) : NULL;
    return r != NULL ? r->to : name;
}

/* (q - zero_point) × scale of DequantizeLinear node `n` whose input is initializer `x`, written
 * as a float initializer named after its output. */
static enum eb_status fold_dq(const struct eb_onnx_model *m, const struct name_ix *inits,
                              size_t n_inits, const struct eb_onnx_node *n, struct eb_pb_buf *out,
                              struct eb_diag *diag)
{
    const struct eb_onnx_tensor *x = &m->inits[name_find(inits, n_inits, n->inputs[0])];
    const long si = n->n_inputs > 1 ? name_find(inits, n_inits, n->inputs[1]) : -1;
    const long zi =
        n->n_inputs > 2 && n->inputs[2][0] != '\0' ? name_find(inits, n_inits, n->inputs[2]) : -1;
    if (si < 0 || (n->n_inputs > 2 && n->inputs[2][0] != '\0' && zi < 0))
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "failed to dequantise: DequantizeLinear '%s' has a computed scale or "
                            "zero point",
                            n->name);
    const struct eb_onnx_tensor *s = &m->inits[si];
    const uint64_t ns = s->numel;
    int64_t axis = eb_onnx_node_attr_int(n, "axis", 1);
    if (axis < 0)
        axis += x->rank;
    if (ns > 1 && (axis < 0 || axis >= x->rank || (uint64_t)x->dims[axis] != ns))
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to dequantise: DequantizeLinear '%s' has %llu scales for "
                            "axis %lld of %s",
                            n->name, (unsigned long long)ns, (long long)axis, x->name);
    uint64_t inner = 1;
    for (int d = (int)axis + 1; ns > 1 && d < x->rank; d++)
        inner *= (uint64_t)x->dims[d];
    int64_t *q = malloc((x->numel + 1) * sizeof(int64_t));
    int64_t *zp = calloc(ns + 1, sizeof(int64_t));
    float *sc = malloc((ns + 1) * sizeof(float));
    uint8_t *raw = malloc(x->numel * 4 + 4);
    size_t got = 0, gz = 0, gs = 0;
    enum eb_status st = EB_OK;
    if (q == NULL || zp == NULL || sc == NULL || raw == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to dequantise: out of memory");
    } else if (eb_onnx_tensor_read_i64(x, q, x->numel, &got) != EB_OK || got != x->numel ||
               eb_onnx_tensor_read_f32(s, sc, ns, &gs) != EB_OK || gs != ns ||
               (zi >= 0 &&
                (eb_onnx_tensor_read_i64(&m->inits[zi], zp, ns, &gz) != EB_OK || gz != ns))) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT,
                          "failed to dequantise: cannot read the data of DequantizeLinear '%s'",
                          n->name);
    } else {
        for (uint64_t i = 0; i < x->numel; i++) {
            const uint64_t c = ns > 1 ? (i / inner) % ns : 0;
            const float v = (float)(q[i] - zp[c]) * sc[c];
            uint32_t u;
            memcpy(&u, &v, 4);
            put_le32(raw + 4 * i, u);
        }
        eb_synth__init_raw(out, n->outputs[0], EB_ONNX_FLOAT, x->dims, x->rank, raw, x->numel * 4);
    }
    free(q);
    free(zp);
    free(sc);
    free(raw);
    return st;
}

enum eb_status eb_qdq_dequantize(const uint8_t *bytes, size_t len, const char *what,
                                 const struct eb_qdq_meta *meta, size_t n_meta, uint8_t **out,
                                 size_t *out_len, size_t *n_folded, struct eb_diag *diag)
{
    struct eb_onnx_model *m = NULL;
    enum eb_status st = eb_onnx_model_parse(bytes, len, what, NULL, &m, diag);
    if (st != EB_OK)
        return st;
    size_t n_inits = 0, n_rn = 0;
    struct name_ix *inits = initializers(m, &n_inits);
    unsigned char *drop = calloc(m->n_nodes + 1, 1);
    int *uses = calloc(m->n_inits + 1, sizeof(int)),
        *dropped_uses = calloc(m->n_inits + 1, sizeof(int));
    struct rename *rn = calloc(m->n_nodes + 1, sizeof(*rn));
    struct eb_pb_buf nodes, rest, folded, graph;
    eb_pb_buf_init(&nodes);
    eb_pb_buf_init(&rest);
    eb_pb_buf_init(&folded);
    eb_pb_buf_init(&graph);
    *n_folded = 0;
    if (inits == NULL || drop == NULL || uses == NULL || dropped_uses == NULL || rn == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to dequantise %s: out of memory", what);
        goto done;
    }
    for (size_t k = 0; k < m->n_nodes && st == EB_OK; k++) {
        const struct eb_onnx_node *n = &m->nodes[k];
        if (is_op(n, "DequantizeLinear") && n->n_inputs >= 2 &&
            name_find(inits, n_inits, n->inputs[0]) >= 0) {
            st = fold_dq(m, inits, n_inits, n, &folded, diag);
            drop[k] = 1;
            continue;
        }
        if (!is_op(n, "QuantizeLinear") || n->n_outputs < 1 || is_graph_output(m, n->outputs[0]) ||
            name_find(inits, n_inits, n->inputs[0]) >= 0)
            continue;
        /* an activation pair: every reader of the Q output is a DQ with an ordinary output */
        size_t readers = 0, dqs = 0;
        for (size_t r = 0; r < m->n_nodes; r++)
            for (size_t j = 0; j < m->nodes[r].n_inputs; j++)
                if (strcmp(m->nodes[r].inputs[j], n->outputs[0]) == 0) {
                    readers++;
                    dqs += j == 0 && is_op(&m->nodes[r], "DequantizeLinear") &&
                           !is_graph_output(m, m->nodes[r].outputs[0]);
                }
        if (readers == 0 || readers != dqs)
            continue;
        drop[k] = 1;
        for (size_t r = 0; r < m->n_nodes; r++)
            if (is_op(&m->nodes[r], "DequantizeLinear") && m->nodes[r].n_inputs > 0 &&
                strcmp(m->nodes[r].inputs[0], n->outputs[0]) == 0) {
                drop[r] = 1;
                rn[n_rn++] = (struct rename){m->nodes[r].outputs[0], n->inputs[0]};
            }
    }
    if (st != EB_OK)
        goto done;
    qsort(rn, n_rn, sizeof(*rn), cmp_rename);
    for (size_t k = 0; k < m->n_nodes; k++) {
        *n_folded += drop[k];
        for (size_t j = 0; j < m->nodes[k].n_inputs; j++) {
            const long i = name_find(inits, n_inits, m->nodes[k].inputs[j]);
            if (i >= 0) {
                uses[i]++;
                dropped_uses[i] += drop[k];
            }
        }
    }
    if (*n_folded == 0) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                          "failed to dequantise %s: it has no QuantizeLinear/DequantizeLinear "
                          "pair or quantised weight to fold",
                          what);
        goto done;
    }
    {
        struct eb_pb_reader top, gr;
        struct eb_pb_field gf, f;
        int have;
        size_t k = 0;
        if (!find_graph(bytes, len, &top, &gf)) {
            st = eb_diag_fail(diag, EB_ERR_FORMAT, "failed to dequantise %s: no graph", what);
            goto done;
        }
        eb_pb_reader_sub(&gr, &top, &gf);
        while (eb_pb_next(&gr, &f, &have) == EB_OK && have) {
            if (f.num == 1 && f.wire == EB_PB_WIRE_LEN) {
                if (k >= m->n_nodes)
                    break;
                const struct eb_onnx_node *n = &m->nodes[k];
                if (drop[k++])
                    continue;
                struct eb_pb_reader r;
                struct eb_pb_field nf;
                struct eb_pb_buf b;
                size_t j = 0;
                eb_pb_buf_init(&b);
                eb_pb_reader_sub(&r, &gr, &f);
                while (eb_pb_next(&r, &nf, &have) == EB_OK && have) {
                    if (nf.num == 1 && nf.wire == EB_PB_WIRE_LEN && j < n->n_inputs)
                        eb_pb_put_str(&b, 1, renamed(rn, n_rn, n->inputs[j++]));
                    else
                        copy_field(&b, &nf);
                }
                eb_pb_put_msg(&nodes, 1, &b);
                eb_pb_buf_fini(&b);
            } else if ((f.num == 5 || f.num == 11) && f.wire == EB_PB_WIRE_LEN) {
                char name[EB_ONNX_MAX_NAME];
                graph_entry_name(&gr, &f, name, sizeof(name));
                const long i = name_find(inits, n_inits, name);
                if (i < 0 || uses[i] == 0 || dropped_uses[i] < uses[i])
                    copy_field(&rest, &f);
            } else {
                copy_field(&rest, &f);
            }
        }
    }
    eb_pb_put_raw(&graph, nodes.data, nodes.len);
    eb_pb_put_raw(&graph, rest.data, rest.len);
    eb_pb_put_raw(&graph, folded.data, folded.len);
    if (eb_pb_buf_error(&graph) || eb_pb_buf_error(&nodes) || eb_pb_buf_error(&rest) ||
        eb_pb_buf_error(&folded))
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to dequantise %s: out of memory", what);
    else
        st = write_model(bytes, len, &graph, m->opset, meta, n_meta, out, out_len, what, diag);
done:
    eb_pb_buf_fini(&nodes);
    eb_pb_buf_fini(&rest);
    eb_pb_buf_fini(&folded);
    eb_pb_buf_fini(&graph);
    free(inits);
    free(drop);
    free(uses);
    free(dropped_uses);
    free(rn);
    eb_onnx_model_destroy(m);
    return st;
}
