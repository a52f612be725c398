/*
 * The layout pass (graph.h, eb_graph__layout): which float activations live channel-blocked
 * (NCHWc, CB channels in the vector lanes) instead of NCHW, so that a conv that feeds a conv
 * writes the layout its consumer's kernel reads, and neither converts (the input packing's
 * transposes and the output's unpacking; ONNX Runtime's NCHWc transformer does the same).
 *
 * Values joined by layout-transparent nodes must share one layout: Concat and Split on the
 * channel axis (in NCHWc, with every part a whole number of blocks, the bytes are where NCHW
 * would put them, so their kernels and the memory plan's in-place placement are unchanged),
 * same-shape Add and Mul (position-wise), MaxPool with stride 1 and nearest Resize by integer
 * factors (their NCHWc kernels in cpu/eltwise.c); a fused Conv's residual shares its output's.
 * The values are grouped with a union-find over those nodes, and a group is blocked only when
 * every value in it is a planned 4-D float activation whose channels are a multiple of CB, and
 * every node that reads or writes one of them handles NCHWc there: a transparent node meeting
 * its condition, or a float Conv with a channel-blocked plan (eb_op__conv_cl_block) on that
 * side. Anything else — a Reshape, the detection head, a graph input or output — keeps its
 * group NCHW, and the convs at the group's edge convert (they read and write either layout).
 */
#include <string.h>

#include "engine/ir/graph.h"
#include "engine/ops/fuse_access.h"
#include "engine/ops/op.h"

static int find(int *parent, int v)
{
    while (parent[v] != v) {
        parent[v] = parent[parent[v]];
        v = parent[v];
    }
    return v;
}

static void unite(int *parent, int a, int b)
{
    a = find(parent, a);
    b = find(parent, b);
    if (a != b)
        parent[a] = b;
}

static int same_shape(const struct eb_ir_value *a, const struct eb_ir_value *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

/* 1 when n is a transparent node (Concat, Split, Add, Mul, MaxPool, Resize) that handles NCHWc
 * on all of its values: its inputs and outputs then share one group; 0 for any other node. */
static int transparent_ok(const struct eb_graph *g, const struct eb_ir_node *n)
{
    if (n->n_in < 1 || n->in[0] < 0 || n->n_out < 1)
        return 0;
    const int rank = g->values[n->in[0]].rank;
    if (rank != 4)
        return 0;
    if (n->op == &eb_op_concat)
        return eb_op__concat_axis(n, g->values[n->out[0]].rank) == 1;
    if (n->op == &eb_op_split)
        return eb_op__split_axis(n, rank) == 1;
    if (n->op == &eb_op_add || n->op == &eb_op_mul)
        return n->n_in == 2 && n->in[1] >= 0 && n->in[1] != n->in[0] &&
               same_shape(&g->values[n->in[0]], &g->values[n->out[0]]) &&
               same_shape(&g->values[n->in[1]], &g->values[n->out[0]]);
    if (n->op == &eb_op_maxpool)
        return eb_op__maxpool_cl_ok(n);
    if (n->op == &eb_op_resize)
        return eb_op__resize_cl_ok(g, n);
    return 0;
}

/* The data inputs of a transparent node: Split's and Resize's first only. */
static int data_inputs(const struct eb_ir_node *n)
{
    return n->op == &eb_op_split || n->op == &eb_op_resize ? 1 : n->n_in;
}

/* 1 when value v may be blocked at all: a 4-D float activation that a live node writes (not
 * one a fusion absorbed) and the graph neither takes in nor gives out. */
static int value_ok(const struct eb_graph *g, int id, int cb)
{
    const struct eb_ir_value *v = &g->values[id];
    if (v->dtype != EB_DTYPE_F32 || v->rank != 4 || v->shape[1] <= 0 || v->shape[1] % cb != 0 ||
        v->is_const || v->is_input || v->is_output || v->producer < 0 ||
        !g->nodes[v->producer].alive)
        return 0;
    const struct eb_ir_node *p = &g->nodes[v->producer];
    for (int j = 0; j < p->n_out; j++)
        if (p->out[j] == id)
            return 1;
    return 0;
}

void eb_graph__layout(struct eb_graph *g, enum eb_cpu_isa isa, int cb, size_t *n_blocked_out)
{
    *n_blocked_out = 0;
    const size_t nv = g->n_values;
    if (cb <= 0 || nv == 0)
        return;
    int *parent = eb_ir_arena_alloc(&g->arena, nv * sizeof(int));
    char *bad = eb_ir_arena_alloc(&g->arena, nv);
    if (parent == NULL || bad == NULL)
        return; /* out of memory: everything stays NCHW, which is always correct */
    for (size_t v = 0; v < nv; v++)
        parent[v] = (int)v;
    memset(bad, 0, nv);
    /* Groups: the values of each transparent node that handles NCHWc, a conv's residual with
     * its output. */
    for (size_t i = 0; i < g->n_nodes; i++) {
        const struct eb_ir_node *n = &g->nodes[i];
        if (!n->alive)
            continue;
        if (transparent_ok(g, n)) {
            for (int j = 0; j < data_inputs(n); j++)
                if (n->in[j] >= 0)
                    unite(parent, n->in[j], n->out[0]);
            for (int j = 1; j < n->n_out; j++)
                unite(parent, n->out[j], n->out[0]);
        } else if (n->op == &eb_op_conv && n->n_in >= 4 && n->in[3] >= 0) {
            unite(parent, n->in[3], n->out[0]);
        }
    }
    /* A group is spoiled by a value that cannot be blocked, or by a node that reads or writes
     * one of its values without handling NCHWc there. */
    for (size_t v = 0; v < nv; v++)
        if (!value_ok(g, (int)v, cb))
            bad[find(parent, (int)v)] = 1;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const struct eb_ir_node *n = &g->nodes[i];
        if (!n->alive)
            continue;
        const int transparent = transparent_ok(g, n);
        const int conv_in = eb_op__conv_cl_block(g, n, isa, 0) == cb;
        const int conv_out = conv_in && eb_op__conv_cl_block(g, n, isa, 1) == cb;
        for (int j = 0; j < n->n_in; j++) {
            if (n->in[j] < 0)
                continue;
            int ok = transparent && j < data_inputs(n);
            if (n->op == &eb_op_conv)
                ok = j == 0 ? conv_in : j == 3 ? conv_out : 0;
            if (!ok)
                bad[find(parent, n->in[j])] = 1;
        }
        for (int j = 0; j < n->n_out; j++)
            if (!(transparent || (n->op == &eb_op_conv && conv_out)))
                bad[find(parent, n->out[j])] = 1;
    }
    for (size_t v = 0; v < nv; v++) {
        struct eb_ir_value *val = &g->values[v];
        val->blocked = 0;
        if (value_ok(g, (int)v, cb) && !bad[find(parent, (int)v)]) {
            val->blocked = cb;
            (*n_blocked_out)++;
        }
    }
}
