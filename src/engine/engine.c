/*
 * The eb_engine_* API: parse → import → passes → plan → check the cap → allocate the arena once
 * → run the live nodes in order on the caller's thread.
 */
#include <stdio.h>
#include <string.h>

#include "eb/engine.h"
#include "engine/ir/graph.h"
#include "engine/ops/op.h"
#include "engine/plan/memplan.h"

struct eb_engine {
    struct eb_graph *g;
    struct eb_memplan plan;
    void *arena; /* plan.arena_bytes, from g->alloc */
    struct eb_engine_io io;
    int *order; /* live node indices in execution order (graph arena) */
    size_t n_order;
};

void eb_engine_options_default(struct eb_engine_options *opt)
{
    memset(opt, 0, sizeof(*opt));
    opt->passes = EB_ENGINE_PASS_ALL;
}

static void fill_desc(const struct eb_ir_value *v, struct eb_engine_io_desc *d)
{
    snprintf(d->name, sizeof(d->name), "%s", v->name);
    d->dtype = v->dtype;
    d->rank = v->rank;
    for (int i = 0; i < EB_MAX_RANK; i++)
        d->shape[i] = i < v->rank ? v->shape[i] : 0;
}

static double mib(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0);
}

/* Parse + import + passes: what eb_engine_load and eb_engine_supports share. */
static enum eb_status build_graph(const uint8_t *bytes, size_t len, const char *what, int imgsz,
                                  uint32_t passes, struct eb_graph **g_out, struct eb_diag *diag)
{
    struct eb_onnx_model *m = NULL;
    struct eb_graph *g = NULL;
    enum eb_status st = eb_onnx_model_parse(bytes, len, what, &m, diag);
    if (st != EB_OK)
        return st;
    st = eb_graph_import(m, what, imgsz > 0 ? imgsz : 640, &g, diag);
    if (st == EB_OK)
        st = eb_graph_run_passes(g, passes, diag);
    if (g != NULL)
        eb_graph_forget_source(g);
    eb_onnx_model_destroy(m);
    if (st != EB_OK) {
        eb_graph_destroy(g);
        return st;
    }
    *g_out = g;
    return EB_OK;
}

enum eb_status eb_engine_load(const uint8_t *bytes, size_t len, const char *what,
                              const struct eb_engine_options *opt, struct eb_engine **engine_out,
                              struct eb_diag *diag)
{
    struct eb_engine_options def;
    struct eb_engine *e = NULL;
    struct eb_graph *g = NULL;
    enum eb_status st;

    if (what == NULL)
        what = "<memory>";
    if (opt == NULL) {
        eb_engine_options_default(&def);
        opt = &def;
    }
    if (bytes == NULL || engine_out == NULL || opt->imgsz < 0 || opt->imgsz > 16384)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "failed to load model %s: invalid argument",
                            what);
    st = build_graph(bytes, len, what, opt->imgsz, opt->passes, &g, diag);
    if (st != EB_OK)
        return st;
    e = eb_ir_arena_alloc(&g->arena, sizeof(*e));
    if (e == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", what);
        goto fail;
    }
    e->g = g;
    st = eb_memplan_build(g, &e->plan, diag);
    if (st != EB_OK)
        goto fail;
    if (opt->mem_cap_bytes > 0 && e->plan.arena_bytes + e->plan.weight_bytes > opt->mem_cap_bytes) {
        st = eb_diag_fail(diag, EB_ERR_LIMIT,
                          "failed to load model %s: needed %.1f MiB, limit %.1f MiB; raise "
                          "--gpu_mem_limit_gb or use a smaller model/--imgsz",
                          what, mib(e->plan.arena_bytes + e->plan.weight_bytes),
                          mib(opt->mem_cap_bytes));
        goto fail;
    }
    e->arena = g->alloc.alloc(g->alloc.ctx, (size_t)e->plan.arena_bytes + EB_MEMPLAN_ALIGN,
                              EB_MEMPLAN_ALIGN);
    e->order = eb_ir_arena_alloc(&g->arena, (g->n_nodes + 1) * sizeof(int));
    if (e->arena == NULL || e->order == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM,
                          "failed to load model %s: out of memory for a %.1f MiB arena", what,
                          mib(e->plan.arena_bytes));
        goto fail;
    }
    for (size_t k = 0; k < g->n_values; k++)
        if (g->values[k].offset >= 0)
            g->values[k].data = (char *)e->arena + g->values[k].offset;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].alive)
            e->order[e->n_order++] = (int)i;
    e->io.n_inputs = g->n_inputs;
    e->io.n_outputs = g->n_outputs;
    for (size_t i = 0; i < g->n_inputs; i++)
        fill_desc(&g->values[g->inputs[i]], &e->io.inputs[i]);
    for (size_t i = 0; i < g->n_outputs; i++)
        fill_desc(&g->values[g->outputs[i]], &e->io.outputs[i]);
    *engine_out = e;
    return EB_OK;
fail:
    if (e != NULL && e->arena != NULL)
        g->alloc.free(g->alloc.ctx, e->arena);
    eb_graph_destroy(g);
    return st;
}

void eb_engine_io_info(const struct eb_engine *e, struct eb_engine_io *io_out)
{
    *io_out = e->io;
}

void eb_engine_mem_info(const struct eb_engine *e, struct eb_engine_mem *mem_out)
{
    mem_out->arena_bytes = e->plan.arena_bytes;
    mem_out->weight_bytes = e->plan.weight_bytes;
    mem_out->naive_bytes = e->plan.naive_bytes;
}

enum eb_status eb_engine_run(struct eb_engine *e, const struct eb_tensor *in, size_t n_in,
                             struct eb_tensor *out, size_t n_out, struct eb_diag *diag)
{
    struct eb_graph *g = e->g;
    if (n_in != g->n_inputs || n_out < g->n_outputs || (n_in > 0 && in == NULL) || out == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to run model %s: %zu inputs and %zu outputs given, %zu and "
                            "%zu expected",
                            g->what, n_in, n_out, g->n_inputs, g->n_outputs);
    for (size_t i = 0; i < n_in; i++) {
        struct eb_ir_value *v = &g->values[g->inputs[i]];
        int same = in[i].dtype == v->dtype && in[i].rank == v->rank && in[i].data != NULL;
        for (int d = 0; same && d < v->rank; d++)
            same = in[i].shape[d] == v->shape[d];
        if (!same) {
            char want[96], got[96];
            eb_shape_format(v->shape, v->rank, want, sizeof(want));
            eb_shape_format(in[i].shape, in[i].rank < 0 ? 0 : in[i].rank, got, sizeof(got));
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "failed to run model %s: input '%s' is %s %s, expected %s %s",
                                g->what, v->name, eb_dtype_name(in[i].dtype), got,
                                eb_dtype_name(v->dtype), want);
        }
        v->data = in[i].data;
    }
    for (size_t k = 0; k < e->n_order; k++) {
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        n->op->exec(g, n);
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        const struct eb_ir_value *v = &g->values[g->outputs[i]];
        out[i].dtype = v->dtype;
        out[i].rank = v->rank;
        for (int d = 0; d < EB_MAX_RANK; d++)
            out[i].shape[d] = d < v->rank ? v->shape[d] : 0;
        out[i].data = v->data;
    }
    return EB_OK;
}

const char *eb_engine_meta(const struct eb_engine *e, const char *key)
{
    for (size_t i = 0; i < e->g->n_meta; i++)
        if (strcmp(e->g->meta_keys[i], key) == 0)
            return e->g->meta_values[i];
    return NULL;
}

void eb_engine_destroy(struct eb_engine *e)
{
    if (e == NULL)
        return;
    struct eb_graph *g = e->g;
    /* The engine itself lives in the graph's arena: free the arena buffer, then the graph. */
    g->alloc.free(g->alloc.ctx, e->arena);
    eb_graph_destroy(g);
}

uint64_t eb_engine__n_allocs(const struct eb_engine *e)
{
    return e->g->ca.n_allocs;
}

enum eb_status eb_engine_supports(const uint8_t *bytes, size_t len, const char *what,
                                  int *supported_out, char *why, size_t why_size,
                                  struct eb_diag *diag)
{
    struct eb_diag local = {0};
    struct eb_graph *g = NULL;
    enum eb_status st;
    if (bytes == NULL || supported_out == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "eb_engine_supports: invalid argument");
    st =
        build_graph(bytes, len, what != NULL ? what : "<model>", 0, EB_ENGINE_PASS_ALL, &g, &local);
    eb_graph_destroy(g);
    if (st == EB_OK || st == EB_ERR_UNSUPPORTED) {
        *supported_out = st == EB_OK;
        if (why != NULL && why_size > 0)
            snprintf(why, why_size, "%s", st == EB_OK ? "" : local.msg);
        return EB_OK;
    }
    /* Not readable (or out of memory): that is a failure, not an answer. */
    return eb_diag_fail(diag, st, "%s", local.msg);
}
