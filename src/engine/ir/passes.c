/*
 * Graph passes, in one walk over the topologically ordered nodes: shape inference (every node),
 * constant folding (a node whose inputs are all constant, or whose outputs depend on shapes only,
 * runs its reference kernel at load time and its outputs become constants), then dead-node
 * elimination backwards from the graph outputs. Constants nothing reads any more are freed.
 * In a dynamic graph (eb_graph.dynamic), nodes that read a dyn value are marked dyn and never
 * folded: shapes are inferred on the bounds here and again at every run (engine.c).
 */
#include <string.h>

#include "eb/engine.h"
#include "engine/ir/graph.h"
#include "engine/ops/op.h"

static int foldable(const struct eb_graph *g, const struct eb_ir_node *n)
{
    if (n->op->shape_only)
        return 1;
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] >= 0 && !g->values[n->in[i]].is_const)
            return 0;
    return 1;
}

static enum eb_status fold(struct eb_graph *g, struct eb_ir_node *n, struct eb_diag *diag)
{
    for (int i = 0; i < n->n_out; i++) {
        struct eb_ir_value *v = &g->values[n->out[i]];
        v->data = g->alloc.alloc(g->alloc.ctx, v->nbytes + 1, 64);
        if (v->data == NULL)
            return eb_diag_fail(diag, EB_ERR_NOMEM,
                                "failed to load model %s: out of memory folding node %d (%s)",
                                g->what, n->onnx_index, n->name);
        v->owned_data = 1;
        v->is_const = 1;
    }
    /* Folding runs the reference kernel on the loading thread. */
    const struct eb_cpu_exec cpu = {.isa = EB_CPU_ISA_REF, .n_workers = 1};
    const struct eb_exec x = {.g = g, .n = n, .cpu = &cpu};
    n->op->exec(&x);
    n->alive = 0;
    return EB_OK;
}

/*
 * A dynamic graph's node that reads a dyn value (eb_ir_node.dyn): its outputs are dyn; it is
 * never folded. When its inputs are all constants or shape data (or it is a Shape), its outputs
 * are shape data: the node runs now, on the bound shapes, into buffers of its own, so that the
 * nodes that read them infer their shapes (freed after the passes: at run time the node runs
 * in the plan like any other, before its readers infer again).
 */
static enum eb_status mark_dyn(struct eb_graph *g, struct eb_ir_node *n, struct eb_diag *diag)
{
    int shape_data = n->op->shape_only;
    if (!shape_data) {
        shape_data = 1;
        for (int i = 0; i < n->n_in; i++)
            if (n->in[i] >= 0 && !g->values[n->in[i]].is_const && !g->values[n->in[i]].shape_data)
                shape_data = 0;
    }
    for (int i = 0; i < n->n_out; i++)
        g->values[n->out[i]].dyn = 1;
    if (!shape_data)
        return EB_OK;
    for (int i = 0; i < n->n_out; i++) {
        struct eb_ir_value *v = &g->values[n->out[i]];
        v->data = g->alloc.alloc(g->alloc.ctx, v->nbytes + 1, 64);
        if (v->data == NULL)
            return eb_diag_fail(diag, EB_ERR_NOMEM,
                                "failed to load model %s: out of memory evaluating node %d (%s)",
                                g->what, n->onnx_index, n->name);
        v->owned_data = 1;
        v->shape_data = 1;
        v->bound_bytes = v->nbytes; /* its buffer holds that many (bound_probe may grow it) */
    }
    const struct eb_cpu_exec cpu = {.isa = EB_CPU_ISA_REF, .n_workers = 1};
    const struct eb_exec x = {.g = g, .n = n, .cpu = &cpu};
    n->op->exec(&x);
    return EB_OK;
}

/* Whether node n of a dynamic graph reads a dyn value; refuses what cannot run so. */
static enum eb_status check_dyn(struct eb_graph *g, struct eb_ir_node *n, struct eb_diag *diag)
{
    for (int i = 0; i < n->n_in && !n->dyn; i++)
        n->dyn = n->in[i] >= 0 && g->values[n->in[i]].dyn;
    if (!n->dyn)
        return EB_OK;
    struct eb_op_ctx ctx = {.g = g, .n = n, .src = n->src, .diag = diag};
    if (!n->op->dyn_shapes)
        return eb_op_unsupported(&ctx, "a shape that changes from run to run (the model's "
                                       "sequence dims)");
    if (g->opset < 13)
        return eb_op_unsupported(&ctx, "dynamic sequence dims below opset 13");
    return EB_OK;
}

/*
 * A dynamic graph's shapes at one configuration of the sequence dims: every input dim named
 * sequence_length at `seq`, past_sequence_length at `past`, total_sequence_length at
 * seq + past; the dyn nodes inferred again in order (shape data computed on the way, its
 * buffers grown when needed) and each dyn value's bound_bytes raised to its size there.
 */
static enum eb_status shapes_at(struct eb_graph *g, int64_t seq, int64_t past, struct eb_diag *diag)
{
    enum eb_status st;
    for (size_t i = 0; i < g->n_inputs; i++) {
        struct eb_ir_value *v = &g->values[g->inputs[i]];
        int64_t shape[EB_MAX_RANK];
        for (int d = 0; d < v->rank; d++) {
            const char *name = g->in_dim_name[i][d];
            shape[d] = name == NULL                         ? v->shape[d]
                       : strcmp(name, EB_IR_DIM_PAST) == 0  ? past
                       : strcmp(name, EB_IR_DIM_TOTAL) == 0 ? seq + past
                                                            : seq;
        }
        if ((st = eb_ir_value_set(g, v, v->dtype, v->rank, shape, diag)) != EB_OK)
            return st;
    }
    for (size_t k = 0; k < g->n_nodes; k++) {
        struct eb_ir_node *n = &g->nodes[k];
        if (!n->alive || !n->dyn)
            continue;
        struct eb_op_ctx ctx = {.g = g, .n = n, .src = NULL, .diag = diag};
        if ((st = n->op->infer_shape(&ctx)) != EB_OK)
            return st;
        int sd = n->n_out > 0;
        for (int i = 0; i < n->n_out; i++) {
            struct eb_ir_value *v = &g->values[n->out[i]];
            sd = sd && v->shape_data;
            if (v->shape_data && v->nbytes > v->bound_bytes) {
                void *p = g->alloc.alloc(g->alloc.ctx, v->nbytes + 1, 64);
                if (p == NULL)
                    return eb_diag_fail(diag, EB_ERR_NOMEM,
                                        "failed to load model %s: out of memory evaluating node "
                                        "%d (%s)",
                                        g->what, n->onnx_index, n->name);
                g->alloc.free(g->alloc.ctx, v->data);
                v->data = p;
            }
            if (v->nbytes > v->bound_bytes)
                v->bound_bytes = v->nbytes;
        }
        if (sd) {
            const struct eb_cpu_exec cpu = {.isa = EB_CPU_ISA_REF, .n_workers = 1};
            const struct eb_exec x = {.g = g, .n = n, .cpu = &cpu};
            n->op->exec(&x);
        }
    }
    return EB_OK;
}

/*
 * The slots of a dynamic graph's values hold them at every allowed shape: the load inferred
 * the largest attention (sequence max_seq, past 0), but a value that follows the past alone
 * (a copy of the cache) is largest at a decode step (sequence 1, past max_seq - 1), and one that
 * follows sequence x past in the middle. Each dyn value's bound_bytes is the most over these;
 * the graph ends at the load's shapes (and shape data) again.
 */
static enum eb_status bound_probe(struct eb_graph *g, struct eb_diag *diag)
{
    const int64_t m = g->max_seq;
    for (size_t k = 0; k < g->n_values; k++)
        if (g->values[k].dyn && g->values[k].nbytes > g->values[k].bound_bytes)
            g->values[k].bound_bytes = g->values[k].nbytes;
    if (m < 2)
        return EB_OK;
    enum eb_status st = shapes_at(g, 1, m - 1, diag);
    if (st == EB_OK && m >= 4)
        st = shapes_at(g, m / 2, m - m / 2, diag);
    if (st == EB_OK)
        st = shapes_at(g, m, 0, diag);
    return st;
}

enum eb_status eb_graph_run_passes(struct eb_graph *g, uint32_t passes, enum eb_engine_qdq qdq,
                                   struct eb_diag *diag)
{
    enum eb_status st;
    for (size_t i = 0; i < g->n_nodes; i++) {
        struct eb_ir_node *n = &g->nodes[i];
        struct eb_op_ctx ctx = {.g = g, .n = n, .src = n->src, .diag = diag};
        if (g->dynamic && (st = check_dyn(g, n, diag)) != EB_OK)
            return st;
        st = n->op->infer_shape(&ctx);
        if (st != EB_OK)
            return st;
        if (n->dyn) {
            if ((st = mark_dyn(g, n, diag)) != EB_OK)
                return st;
            continue;
        }
        if ((passes & EB_ENGINE_PASS_CONST_FOLD) && foldable(g, n)) {
            st = fold(g, n, diag);
            if (st != EB_OK)
                return st;
        }
    }
    if (g->dynamic && (st = bound_probe(g, diag)) != EB_OK)
        return st;
    if (qdq == EB_ENGINE_QDQ_INT8 || qdq == EB_ENGINE_QDQ_STRIP) {
        st = qdq == EB_ENGINE_QDQ_INT8 ? eb_graph__qdq_int8(g, diag) : eb_graph__qdq_strip(g, diag);
        if (st != EB_OK)
            return st;
    }
    /* The fusions rewrite convolutions and their epilogues, which dynamic graphs never run. */
    if ((passes & EB_ENGINE_PASS_FUSE) && !g->dynamic) {
        st = eb_graph__fuse(g, diag);
        if (st != EB_OK)
            return st;
    }
    /* Dead-node elimination: a node lives when something needed reads one of its outputs. */
    unsigned char *needed = eb_ir_arena_alloc(&g->arena, g->n_values + 1);
    if (needed == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", g->what);
    for (size_t i = 0; i < g->n_outputs; i++)
        needed[g->outputs[i]] = 1;
    for (size_t k = g->n_nodes; k-- > 0;) {
        struct eb_ir_node *n = &g->nodes[k];
        if (!n->alive)
            continue;
        int live = !(passes & EB_ENGINE_PASS_DCE);
        for (int i = 0; i < n->n_out && !live; i++)
            live = needed[n->out[i]];
        if (!live) {
            n->alive = 0;
            continue;
        }
        for (int i = 0; i < n->n_in; i++)
            if (n->in[i] >= 0)
                needed[n->in[i]] = 1;
    }
    for (size_t k = 0; k < g->n_values; k++)
        g->values[k].n_uses = 0;
    for (size_t k = 0; k < g->n_nodes; k++) {
        const struct eb_ir_node *n = &g->nodes[k];
        if (!n->alive)
            continue;
        for (int i = 0; i < n->n_in; i++)
            if (n->in[i] >= 0)
                g->values[n->in[i]].n_uses++;
    }
    for (size_t k = 0; k < g->n_values; k++) {
        struct eb_ir_value *v = &g->values[k];
        if (v->shape_data && v->owned_data) { /* the plan gives it a slot */
            g->alloc.free(g->alloc.ctx, v->data);
            v->data = NULL;
            v->owned_data = 0;
        }
        if (v->is_const && v->owned_data && v->n_uses == 0 && !v->is_output) {
            g->alloc.free(g->alloc.ctx, v->data);
            v->data = NULL;
            v->owned_data = 0;
        }
    }
    return EB_OK;
}
