/*
 * The facts of an ONNX graph that head recognition reads (yolo/profile.h): the outputs' names
 * and declared shapes, what ends each output's computation, the input size and the Ultralytics
 * metadata keys.
 *
 * What ends an output: from the output, walk back through ops that only move or re-type data
 * (they are transparent) and note the first op of any other kind on every path. A YOLOX head
 * (Concat of a Conv's box offsets and Sigmoid scores) ends in {layer, sigmoid}; an Ultralytics
 * head (Concat of Mul-decoded boxes and Sigmoid scores) in {decode, sigmoid}.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/onnx/onnx_model.h"
#include "model/model.h"

/* Ops that only move data: [first input index followed, all inputs (Concat)]. */
static int transparent(const char *op, int *all_inputs)
{
    static const char *const move[] = {
        "Reshape",        "Transpose",        "Slice",   "Split",    "Gather",
        "Squeeze",        "Unsqueeze",        "Flatten", "Identity", "Cast",
        "QuantizeLinear", "DequantizeLinear", "Expand",  "Tile"};
    *all_inputs = strcmp(op, "Concat") == 0;
    if (*all_inputs)
        return 1;
    for (size_t i = 0; i < sizeof(move) / sizeof(move[0]); i++)
        if (strcmp(op, move[i]) == 0)
            return 1;
    return 0;
}

static unsigned end_kind(const char *op)
{
    static const char *const decode[] = {"Mul", "Add", "Sub", "Div", "Pow", "Exp"};
    static const char *const layer[] = {"Conv", "ConvInteger",   "QLinearConv",   "MatMul",
                                        "Gemm", "MatMulInteger", "ConvTranspose", "QLinearMatMul"};
    if (strcmp(op, "Sigmoid") == 0 || strcmp(op, "HardSigmoid") == 0)
        return EB_HEAD_END_SIGMOID;
    if (strcmp(op, "Softmax") == 0 || strcmp(op, "LogSoftmax") == 0)
        return EB_HEAD_END_SOFTMAX;
    for (size_t i = 0; i < sizeof(decode) / sizeof(decode[0]); i++)
        if (strcmp(op, decode[i]) == 0)
            return EB_HEAD_END_DECODE;
    for (size_t i = 0; i < sizeof(layer) / sizeof(layer[0]); i++)
        if (strcmp(op, layer[i]) == 0)
            return EB_HEAD_END_LAYER;
    return EB_HEAD_END_OTHER;
}

/* Value name -> producing node, sorted by name for bsearch. */
struct producer {
    const char *name;
    long node;
};

static int cmp_producer(const void *a, const void *b)
{
    return strcmp(((const struct producer *)a)->name, ((const struct producer *)b)->name);
}

struct walk {
    const struct eb_onnx_model *m;
    const struct producer *by_name; /* n entries */
    size_t n;
    unsigned char *seen; /* n_nodes */
    int budget;          /* nodes left to visit (bounds the walk on hostile graphs) */
};

/* The node producing `name`, or -1 (an input or initializer). */
static long producer(const struct walk *w, const char *name)
{
    const struct producer key = {name, 0};
    const struct producer *p = bsearch(&key, w->by_name, w->n, sizeof(key), cmp_producer);
    return p != NULL ? p->node : -1;
}

/* Bits of what ends `name`. */
static unsigned ends_of(struct walk *w, const char *name)
{
    if (--w->budget < 0)
        return EB_HEAD_END_OTHER;
    const long p = producer(w, name);
    if (p < 0)
        return EB_HEAD_END_OTHER;
    if (w->seen[p])
        return 0;
    w->seen[p] = 1;
    const struct eb_onnx_node *n = &w->m->nodes[p];
    int all = 0;
    if (!transparent(n->op_type, &all))
        return end_kind(n->op_type);
    unsigned bits = 0;
    const size_t ni = all ? n->n_inputs : (n->n_inputs > 0 ? 1 : 0);
    for (size_t i = 0; i < ni; i++)
        if (n->inputs[i][0] != '\0')
            bits |= ends_of(w, n->inputs[i]);
    return bits;
}

/* Entries of the "names" metadata literal (a Python dict or a JSON list, as the backends parse
 * it): top-level commas outside quotes, plus one; 0 for an empty or unbalanced literal. Only
 * the count is needed here (the backends parse the names themselves). */
static size_t count_names(const char *t)
{
    size_t n = 0;
    int depth = 0, any = 0;
    char quote = 0;
    for (; *t; t++) {
        if (quote) {
            if (*t == '\\' && t[1] != '\0')
                t++;
            else if (*t == quote)
                quote = 0;
            continue;
        }
        if (*t == '\'' || *t == '"') {
            quote = *t;
            any |= depth == 1;
        } else if (*t == '{' || *t == '[') {
            depth++;
        } else if (*t == '}' || *t == ']') {
            depth--;
        } else if (*t == ',' && depth == 1) {
            n++;
        }
    }
    return depth == 0 && quote == 0 && any ? n + 1 : 0;
}

static int meta_is(const struct eb_onnx_model *m, const char *key, const char *value)
{
    for (size_t i = 0; i < m->n_meta; i++)
        if (strcmp(m->meta[i].key, key) == 0)
            return value == NULL || strcmp(m->meta[i].value, value) == 0;
    return 0;
}

enum eb_status eb_model_head_graph(const uint8_t *bytes, size_t len, const char *what,
                                   struct eb_head_graph *g, struct eb_diag *diag)
{
    memset(g, 0, sizeof(*g));
    struct eb_onnx_model *m = NULL;
    enum eb_status st = eb_onnx_model_parse(bytes, len, what, NULL, &m, diag);
    if (st != EB_OK)
        return st;
    size_t n_prod = 0;
    for (size_t i = 0; i < m->n_nodes; i++)
        n_prod += m->nodes[i].n_outputs;
    unsigned char *seen = calloc(m->n_nodes ? m->n_nodes : 1, 1);
    struct producer *by_name = malloc((n_prod ? n_prod : 1) * sizeof(*by_name));
    if (seen == NULL || by_name == NULL) {
        free(seen);
        free(by_name);
        eb_onnx_model_destroy(m);
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
    }
    n_prod = 0;
    for (size_t i = 0; i < m->n_nodes; i++)
        for (size_t k = 0; k < m->nodes[i].n_outputs; k++)
            by_name[n_prod++] = (struct producer){m->nodes[i].outputs[k], (long)i};
    qsort(by_name, n_prod, sizeof(*by_name), cmp_producer);
    struct walk w = {.m = m, .by_name = by_name, .n = n_prod, .seen = seen};
    /* The first graph input that is not an initializer is the image. */
    for (size_t i = 0; i < m->n_inputs; i++) {
        int init = 0;
        for (size_t k = 0; k < m->n_inits && !init; k++)
            init = strcmp(m->inits[k].name, m->inputs[i].name) == 0;
        if (init)
            continue;
        if (m->inputs[i].rank == 4) {
            g->in_h = m->inputs[i].dims[2] > 0 ? (int)m->inputs[i].dims[2] : 0;
            g->in_w = m->inputs[i].dims[3] > 0 ? (int)m->inputs[i].dims[3] : 0;
        }
        break;
    }
    g->n_outputs = m->n_outputs < EB_HEAD_GRAPH_MAX_OUT ? (int)m->n_outputs : EB_HEAD_GRAPH_MAX_OUT;
    for (int i = 0; i < g->n_outputs; i++) {
        const struct eb_onnx_value *o = &m->outputs[i];
        snprintf(g->out[i].name, sizeof(g->out[i].name), "%s", o->name);
        g->out[i].rank = o->rank > 6 ? 6 : o->rank;
        for (int k = 0; k < g->out[i].rank; k++)
            g->out[i].shape[k] = o->dims[k];
        memset(seen, 0, m->n_nodes);
        w.budget = 100000;
        g->out[i].ends = ends_of(&w, o->name);
    }
    for (size_t i = 0; i < m->n_meta; i++)
        if (strcmp(m->meta[i].key, "names") == 0)
            g->n_class_names = count_names(m->meta[i].value);
    g->ultralytics = meta_is(m, "stride", NULL) && meta_is(m, "task", NULL);
    g->ultralytics_e2e = meta_is(m, "end2end", "True");
    g->graph_read = 1;
    free(seen);
    free(by_name);
    eb_onnx_model_destroy(m);
    return EB_OK;
}
