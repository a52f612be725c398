/*
 * One-row products (a decoder's decode step): every MatMul by a constant weight, plain or with
 * its bias or residual Add fused (cu_node.mm), runs at one row as eb_cuk_gemv instead of a cuBLAS GEMM
 * tile; the MatMuls that read the same row (q, k and v; gate and up) run as one launch at the
 * first of them (a product that adds a residual only leads: the residual is a value written
 * before its turn, maybe after the first's), and an RMSNorm or SwiGLU whose output only they
 * read is computed by that launch. At more rows (a prefill) each node runs as it would alone.
 *
 * Running a product before its turn is safe when nothing between may see its output early: the
 * pass runs after the memory plan and checks, by device address, that a moved output shares no
 * bytes with what the nodes run in between read or write, with the row, or with the other
 * outputs; a node failing that runs alone.
 */
#include <string.h>

#include "engine/cuda/cuda_internal.h"

/* Node k's row, weight and added vector (c: a bias or a residual, -1 none), when it is a
 * one-row product by its shapes (gv_shape) and by its weight's address too (gv_operands). */
struct gv_ops {
    int32_t a, w, c;
};

static int gv_shape(const struct eb_engine *e, const struct cu_state *s, size_t k, struct gv_ops *o)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *n = &g->nodes[e->order[k]];
    const struct cu_node *cn = &s->nodes[k];
    if (s->on_cpu[k] || cn->skip || cn->attn || n->n_out != 1)
        return 0;
    if (cn->mm) {
        *o = (struct gv_ops){cn->mm_a, cn->mm_w, cn->mm_c};
    } else if (cn->d.kind == EB_DESC_MATMUL && n->n_in >= 2 && n->in[0] >= 0 && n->in[1] >= 0) {
        *o = (struct gv_ops){n->in[0], n->in[1], -1};
    } else {
        return 0;
    }
    const struct eb_ir_value *a = &g->values[o->a], *w = &g->values[o->w];
    return w->is_const && w->rank == 2 && w->dtype == EB_DTYPE_F32 && !a->is_const &&
           a->dtype == EB_DTYPE_F32 && a->rank >= 1 && a->shape[a->rank - 1] == w->shape[0] &&
           eb_cuk_gemv_takes(s->dt, w->shape[0], w->shape[1], NULL);
}

static int gv_operands(const struct eb_engine *e, const struct cu_state *s, size_t k,
                       struct gv_ops *o)
{
    /* the weight's address once uploaded (before: NULL, which eb_cuk_gemv_takes lets pass) */
    return gv_shape(e, s, k, o) && eb_cuk_gemv_takes(s->dt, e->g->values[o->w].shape[0],
                                                     e->g->values[o->w].shape[1], s->dptr[o->w]);
}

/* Values u and v have the same dims. */
static int same_dims(const struct eb_ir_value *u, const struct eb_ir_value *v)
{
    return u->rank == v->rank && memcmp(u->shape, v->shape, (size_t)u->rank * sizeof(int64_t)) == 0;
}

/* Values u and v share device bytes (constants never do: nothing writes them). */
static int overlap(const struct eb_graph *g, const struct cu_state *s, int32_t u, int32_t v)
{
    if (u < 0 || v < 0 || g->values[u].is_const || g->values[v].is_const)
        return 0;
    const char *pu = s->dptr[u], *pv = s->dptr[v];
    const size_t nu = g->values[u].cap_bytes, nv = g->values[v].cap_bytes;
    return pu != NULL && pv != NULL && pu < pv + nv && pv < pu + nu;
}

/* Value v shares bytes with an input or output of node order[i]. */
static int touches(const struct eb_engine *e, const struct cu_state *s, size_t i, int32_t v)
{
    const struct eb_ir_node *n = &e->g->nodes[e->order[i]];
    for (int j = 0; j < n->n_in; j++)
        if (overlap(e->g, s, v, n->in[j]))
            return 1;
    for (int j = 0; j < n->n_out; j++)
        if (overlap(e->g, s, v, n->out[j]))
            return 1;
    return 0;
}

/* Node order[j]'s output may be written at order[k0] instead (k0 < j): the nodes run between
 * (not members, not skipped) touch none of its bytes, nor do the row and the group's outputs
 * so far. */
static int may_move(const struct eb_engine *e, const struct cu_state *s, const struct cu_node *lead,
                    int32_t row, size_t j)
{
    const struct eb_graph *g = e->g;
    const int32_t y = g->nodes[e->order[j]].out[0];
    if (overlap(g, s, y, row))
        return 0;
    for (int m = 0; m < lead->gv_n; m++)
        if (overlap(g, s, y, g->nodes[e->order[lead->gv_k[m]]].out[0]))
            return 0;
    for (size_t i = lead->gv_k[0] + 1; i < j; i++) {
        int member = 0;
        for (int m = 0; m < lead->gv_n; m++)
            member |= lead->gv_k[m] == i;
        if (!member && !s->nodes[i].skip && touches(e, s, i, y))
            return 0;
    }
    return 1;
}

/* Every node that runs and reads value v is in lead's group. */
static int only_group_reads(const struct eb_engine *e, const struct cu_state *s,
                            const struct cu_node *lead, int32_t v)
{
    if (e->g->values[v].is_output)
        return 0;
    for (size_t i = 0; i < e->n_order; i++) {
        const struct eb_ir_node *n = &e->g->nodes[e->order[i]];
        int reads = 0, member = 0;
        for (int j = 0; j < n->n_in; j++)
            reads |= n->in[j] == v;
        for (int m = 0; m < lead->gv_n; m++)
            member |= lead->gv_k[m] == i;
        if (reads && !member && !s->nodes[i].skip)
            return 0;
    }
    return 1;
}

/* Value v of node order[r] is not overwritten by the nodes run after it and before order[k]. */
static int kept_until(const struct eb_engine *e, const struct cu_state *s, size_t r, size_t k,
                      int32_t v)
{
    for (size_t i = r + 1; i < k; i++) {
        const struct eb_ir_node *n = &e->g->nodes[e->order[i]];
        for (int j = 0; j < n->n_out && !s->nodes[i].skip; j++)
            if (overlap(e->g, s, v, n->out[j]))
                return 0;
    }
    return 1;
}

/* The RMSNorm's or SwiGLU's inputs node rn reads (x, then w) */
static void row_inputs(const struct cu_node *rn, int32_t *x, int32_t *w)
{
    *x = rn->rms ? rn->rms_x : rn->glu_g;
    *w = rn->rms ? rn->rms_w : rn->glu_u;
}

/* The RMSNorm (rms) or SwiGLU (glu) node that writes lead's row, when the launch can make the
 * row itself instead: only the group reads the row, the node's inputs are not overwritten
 * before the launch and share no bytes with the group's outputs, and the row fits the kernel's
 * copy. Sets lead's gv_from, gv_x, gv_w2 and gv_eps; -1 when there is none. */
static int64_t foldable_row(const struct eb_engine *e, const struct cu_state *s,
                            struct cu_node *lead)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_value *row = &g->values[lead->gv_a];
    const int64_t len = row->shape[row->rank - 1];
    int64_t r = -1;
    for (size_t i = 0; i < lead->gv_k[0] && r < 0; i++)
        if ((s->nodes[i].rms || s->nodes[i].glu) && !s->on_cpu[i] &&
            g->nodes[e->order[i]].out[0] == lead->gv_a)
            r = (int64_t)i;
    if (r < 0 || len > EB_CUK_GEMV_MAX_K || !only_group_reads(e, s, lead, lead->gv_a))
        return -1;
    const struct cu_node *rn = &s->nodes[r];
    int32_t x, w;
    row_inputs(rn, &x, &w);
    const struct eb_ir_value *xv = &g->values[x], *wv = &g->values[w];
    if (xv->rank < 1 || xv->shape[xv->rank - 1] != len ||
        (rn->rms ? !wv->is_const || wv->numel != len : !same_dims(xv, row) || !same_dims(wv, row)))
        return -1;
    const int32_t ins[2] = {x, w};
    for (int i = 0; i < 2; i++) {
        if (!kept_until(e, s, (size_t)r, lead->gv_k[0], ins[i]))
            return -1;
        for (int m = 0; m < lead->gv_n; m++)
            if (overlap(g, s, ins[i], g->nodes[e->order[lead->gv_k[m]]].out[0]))
                return -1;
    }
    lead->gv_from = rn->rms ? EB_CUK_ROW_RMSNORM : EB_CUK_ROW_SWIGLU;
    lead->gv_x = x;
    lead->gv_w2 = w;
    lead->gv_eps = rn->rms ? rn->rms_eps : 0.0f;
    return r;
}

int eb_cu__keep_gemv_rows(struct eb_engine *e, struct cu_state *s)
{
    const struct eb_graph *g = e->g;
    for (size_t r = 0; g->dynamic && r < e->n_order; r++) {
        const struct cu_node *rn = &s->nodes[r];
        if (!(rn->rms || rn->glu) || rn->skip || s->on_cpu[r])
            continue;
        const int32_t row = g->nodes[e->order[r]].out[0];
        int64_t first = -1;
        int all = !g->values[row].is_output;
        for (size_t i = r + 1; i < e->n_order && all; i++) {
            const struct eb_ir_node *n = &g->nodes[e->order[i]];
            int reads = 0;
            for (int j = 0; j < n->n_in; j++)
                reads |= n->in[j] == row;
            struct gv_ops o;
            if (!reads || s->nodes[i].skip)
                continue;
            all = gv_shape(e, s, i, &o) && o.a == row;
            if (first < 0)
                first = (int64_t)i;
        }
        int32_t xw[2];
        row_inputs(rn, &xw[0], &xw[1]);
        if (all && first >= 0 && !eb_cu__read_more(e, (size_t)first, xw, 2))
            return 0;
    }
    return 1;
}

enum eb_status eb_cu__group_gemv(struct eb_engine *e, struct cu_state *s, size_t *groups,
                                 struct eb_diag *diag)
{
    size_t any = 0;
    *groups = 0;
    for (size_t k = 0; e->g->dynamic && k < e->n_order; k++) {
        struct cu_node *cn = &s->nodes[k];
        struct gv_ops o = {-1, -1, -1};
        cn->gv = gv_operands(e, s, k, &o);
        cn->gv_a = o.a;
        cn->gv_w = o.w;
        cn->gv_c = o.c;
    }
    for (size_t k = 0; e->g->dynamic && k < e->n_order; k++) {
        struct cu_node *lead = &s->nodes[k];
        if (!lead->gv || lead->gv_led)
            continue;
        lead->gv_n = 1;
        lead->gv_k[0] = k;
        for (size_t j = k + 1; j < e->n_order && lead->gv_n < EB_CUK_GEMV_MAX_PARTS; j++)
            if (s->nodes[j].gv && !s->nodes[j].gv_led && s->nodes[j].gv_a == lead->gv_a &&
                (s->nodes[j].gv_c < 0 || e->g->values[s->nodes[j].gv_c].is_const) &&
                may_move(e, s, lead, lead->gv_a, j)) {
                lead->gv_k[lead->gv_n++] = j;
                s->nodes[j].gv_led = 1;
            }
        const int64_t r = foldable_row(e, s, lead);
        if (r >= 0)
            s->nodes[r].gv_made = 1;
        *groups += lead->gv_n > 1 || lead->gv_from != EB_CUK_ROW;
        any++;
    }
    if (any == 0)
        return EB_OK;
    const enum eb_status st = eb_cu__dev_alloc(e, s, EB_CUK_GEMV_WS_BYTES, &s->d_gemv_ws,
                                               "the one-row products' workspace", diag);
    if (st == EB_OK && cudaMemset(s->d_gemv_ws, 0, EB_CUK_GEMV_WS_BYTES) != cudaSuccess)
        return eb_diag_fail(diag, EB_ERR_DEVICE, "failed to load model %s on cuda: cudaMemset",
                            e->what);
    return st;
}

/* The rows value v holds at this run (its elements over its last dim). */
static int64_t gv_rows(const struct eb_graph *g, int32_t v)
{
    const struct eb_ir_value *x = &g->values[v];
    const int64_t len = x->rank > 0 ? x->shape[x->rank - 1] : 0;
    return len > 0 ? x->numel / len : 0;
}

enum eb_status eb_cu__gemv_enqueue(struct eb_engine *e, struct cu_state *s, size_t k,
                                   cudaStream_t stream, int *done, struct eb_diag *diag)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *n = &g->nodes[e->order[k]];
    const struct cu_node *cn = &s->nodes[k];
    *done = 0;
    if (cn->gv_made) {
        *done = gv_rows(g, n->out[0]) == 1; /* the group's launch makes this row itself */
        return EB_OK;
    }
    if (!cn->gv || gv_rows(g, cn->gv_a) != 1)
        return EB_OK;
    *done = 1;
    if (cn->gv_led)
        return EB_OK;
    struct eb_cuk_gemv_part part[EB_CUK_GEMV_MAX_PARTS];
    for (int m = 0; m < cn->gv_n; m++) {
        const struct cu_node *cm = &s->nodes[cn->gv_k[m]];
        part[m] = (struct eb_cuk_gemv_part){
            s->dptr[cm->gv_w], cm->gv_c >= 0 ? s->dptr[cm->gv_c] : NULL,
            s->dptr[g->nodes[e->order[cn->gv_k[m]]].out[0]], g->values[cm->gv_w].shape[1]};
    }
    const struct eb_cuk_gemv_row row = {cn->gv_from, s->dptr[cn->gv_x], s->dptr[cn->gv_w2],
                                        cn->gv_eps};
    const cudaError_t ce = eb_cuk_gemv(
        stream, s->dt, g->values[cn->gv_w].shape[0], e->info_dev.sm_count,
        cn->gv_from != EB_CUK_ROW ? &row : NULL, s->dptr[cn->gv_a], cn->gv_n, part, s->d_gemv_ws);
    if (ce != cudaSuccess)
        return eb_diag_fail(diag, EB_ERR_DEVICE, "model %s node '%s' (one-row product of %d): %s",
                            e->what, n->name, cn->gv_n, cudaGetErrorString(ce));
    return EB_OK;
}
