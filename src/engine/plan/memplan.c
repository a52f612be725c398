/* Greedy best-fit memory planning over tensor lifetimes (see memplan.h). */
#include <string.h>

#include "engine/plan/memplan.h"

#include "engine/ops/fuse_access.h"
#include "engine/ops/op.h"

struct block {
    uint64_t offset, size;
    int value;
};

static uint64_t align_up(uint64_t v)
{
    return (v + EB_MEMPLAN_ALIGN - 1) & ~(uint64_t)(EB_MEMPLAN_ALIGN - 1);
}

/* The smallest gap between the blocks in `busy` (sorted by offset; they may overlap) that
 * holds `size` bytes, or the end of the last one. */
static uint64_t best_fit(const struct block *busy, size_t n_busy, uint64_t size)
{
    uint64_t best = UINT64_MAX, best_gap = UINT64_MAX, prev_end = 0;
    for (size_t i = 0; i < n_busy; i++) {
        if (busy[i].offset > prev_end) {
            const uint64_t gap = busy[i].offset - prev_end;
            if (gap >= size && gap < best_gap) {
                best_gap = gap;
                best = prev_end;
            }
        }
        if (busy[i].offset + busy[i].size > prev_end)
            prev_end = busy[i].offset + busy[i].size;
    }
    return best != UINT64_MAX ? best : prev_end;
}

/* Inserts a block into `live` (sorted by offset). */
static void insert(struct block *live, size_t *n_live, uint64_t offset, uint64_t size, int value)
{
    size_t pos = 0;
    while (pos < *n_live && live[pos].offset <= offset)
        pos++;
    memmove(&live[pos + 1], &live[pos], (*n_live - pos) * sizeof(*live));
    live[pos] = (struct block){.offset = offset, .size = size, .value = value};
    (*n_live)++;
}

/* Removes value's block from `live`; with `dead` (concurrent plans), keeps it there. */
static void release(struct block *live, size_t *n_live, int value, struct block *dead,
                    size_t *n_dead)
{
    for (size_t i = 0; i < *n_live; i++) {
        if (live[i].value == value) {
            if (dead != NULL)
                dead[(*n_dead)++] = live[i];
            memmove(&live[i], &live[i + 1], (*n_live - i - 1) * sizeof(*live));
            (*n_live)--;
            return;
        }
    }
}

static int planned(const struct eb_graph *g, const struct eb_ir_value *v)
{
    return v->producer >= 0 && g->nodes[v->producer].alive && !v->is_const;
}

/*
 * After Concat n went in place: where consecutive inputs of n are all the outputs of one Split
 * along the same axis, in order (C2f, C3k2: Split → [the halves, the bottlenecks] → Concat),
 * the Split's input goes inside n's output too, at its first output's offset, so the Split
 * copies nothing either. The input must be produced by a live node and hold no slot of its own
 * (memplan.h).
 */
static size_t split_in_place(struct eb_graph *g, const struct eb_ir_node *n, int axis,
                             const char *owner, int strided)
{
    size_t done = 0;
    const int yid = n->out[0];
    struct eb_ir_value *y = &g->values[yid];
    for (int i = 0; i < n->n_in;) {
        const struct eb_ir_value *v = &g->values[n->in[i]];
        const struct eb_ir_node *s = &g->nodes[v->producer];
        int k = s->n_out, ok = s->op == &eb_op_split && s->n_in >= 1 && s->in[0] >= 0 &&
                               i + k <= n->n_in && eb_op__split_axis(s, v->rank) == axis;
        for (int j = 0; ok && j < k; j++)
            ok = s->out[j] == n->in[i + j];
        if (!ok) {
            i++;
            continue;
        }
        struct eb_ir_value *x = &g->values[s->in[0]];
        if (planned(g, x) && (strided ? x->nhwc && x->pitch_ok : !x->nhwc) && !x->is_input &&
            !x->is_output && x->alias_of < 0 && !owner[s->in[0]] && s->in[0] != yid) {
            x->alias_of = yid;
            x->offset = v->offset; /* relative, as the Split's first output */
            x->cpitch = strided ? y->shape[1] : 0;
            if (x->last > y->last)
                y->last = x->last;
            done++;
        }
        i += k;
    }
    return done;
}

/*
 * Concat node n in place (memplan.h): sets alias_of of its inputs and extends the output's
 * lifetime over theirs; 1 when done. `owner[v]` marks outputs already holding inputs.
 */
static int concat_in_place(struct eb_graph *g, const struct eb_ir_node *n, char *owner,
                           size_t *n_split)
{
    if (n->n_out != 1 || n->n_in < 1)
        return 0;
    const int yid = n->out[0];
    struct eb_ir_value *y = &g->values[yid];
    const int axis = eb_op__concat_axis(n, y->rank);
    if (axis < 0 || y->is_const || y->alias_of >= 0 || owner[yid])
        return 0;
    /* channels-last along C: each input a slice of y's rows (memplan.h); else contiguous */
    const int strided = y->nhwc;
    if (strided && (y->rank != 4 || axis != 1 || y->numel <= 0))
        return 0;
    for (int d = 0; !strided && d < axis; d++)
        if (y->shape[d] != 1)
            return 0;
    const uint64_t es = strided ? y->nbytes / (uint64_t)y->numel : 1;
    uint64_t off = 0;
    for (int i = 0; i < n->n_in; i++) {
        const int id = n->in[i];
        if (id < 0 || id == yid || owner[id])
            return 0;
        const struct eb_ir_value *v = &g->values[id];
        if (!planned(g, v) || v->is_input || v->is_output || v->alias_of >= 0 ||
            (strided ? !v->nhwc || !v->pitch_ok || off * es % EB_MEMPLAN_SLICE_ALIGN != 0
                     : v->nhwc || off % EB_MEMPLAN_ALIGN != 0))
            return 0;
        for (int j = 0; j < i; j++)
            if (n->in[j] == id)
                return 0;
        off += strided ? (uint64_t)v->shape[1] : v->nbytes;
    }
    if (off != (strided ? (uint64_t)y->shape[1] : y->nbytes))
        return 0;
    off = 0;
    for (int i = 0; i < n->n_in; i++) {
        struct eb_ir_value *v = &g->values[n->in[i]];
        v->alias_of = yid;
        v->offset = (int64_t)(off * es); /* relative to y until y is placed */
        v->cpitch = strided ? y->shape[1] : 0;
        off += strided ? (uint64_t)v->shape[1] : v->nbytes;
        if (v->last > y->last)
            y->last = v->last;
    }
    owner[yid] = 1;
    *n_split += split_in_place(g, n, axis, owner, strided);
    return 1;
}

/*
 * A Reshape-family node (Reshape, Flatten, Squeeze, Unsqueeze, Identity) as a view (memplan.h):
 * its output takes its input's bytes (alias_of = the input, offset 0 relative) and the input
 * lives as long as the output is read; 1 when done.
 */
/* Bytes of a value's slot: its size at the load's shapes, or in a dynamic graph the most over
 * the shape configurations the load inferred (eb_ir_value.bound_bytes). */
static uint64_t slot_bytes(const struct eb_ir_value *v)
{
    return v->bound_bytes > v->nbytes ? v->bound_bytes : v->nbytes;
}

static int view_in_place(struct eb_graph *g, const struct eb_ir_node *n, const char *owner)
{
    if (n->n_out != 1 || n->n_in < 1 || n->in[0] < 0 || n->in[0] == n->out[0])
        return 0;
    const int xid = n->in[0], yid = n->out[0];
    struct eb_ir_value *x = &g->values[xid], *y = &g->values[yid];
    if (!planned(g, x) || x->alias_of >= 0 || !planned(g, y) || y->is_output || y->alias_of >= 0 ||
        owner[yid] || x->nbytes != y->nbytes || slot_bytes(x) != slot_bytes(y) || x->nhwc ||
        y->nhwc)
        return 0;
    y->alias_of = xid;
    y->offset = 0;
    if (y->last > x->last)
        x->last = y->last;
    return 1;
}

static int is_view_op(const struct eb_op_def *op)
{
    return op == &eb_op_reshape || op == &eb_op_flatten || op == &eb_op_squeeze ||
           op == &eb_op_unsqueeze || op == &eb_op_identity;
}

/*
 * Concurrent plans (memplan.h): which nodes each node depends on (anc, transitively, through
 * the values it reads), which nodes touch each slot (acc: the writers and readers of a value and
 * of every value placed inside it) and which nodes every writer of a slot depends on (after).
 * A dead slot's bytes go to a new slot only when every node that touched them is in the new
 * slot's `after`; the others stay in the way (struct conc's dead list).
 */
struct conc {
    size_t words; /* uint64_t per bitset */
    uint64_t *anc, *acc, *after;
    struct block *dead, *busy;
    size_t n_dead;
};

static int home_of(const struct eb_graph *g, int id)
{
    while (g->values[id].alias_of >= 0)
        id = g->values[id].alias_of;
    return id;
}

static int conc_build(struct eb_graph *g, struct conc *c)
{
    const size_t w = (g->n_nodes + 64) / 64;
    c->words = w;
    c->anc = eb_ir_arena_alloc(&g->arena, (g->n_nodes + 1) * w * sizeof(uint64_t));
    c->acc = eb_ir_arena_alloc(&g->arena, (g->n_values + 1) * w * sizeof(uint64_t));
    c->after = eb_ir_arena_alloc(&g->arena, (g->n_values + 1) * w * sizeof(uint64_t));
    c->dead = eb_ir_arena_alloc(&g->arena, (g->n_values + 1) * sizeof(struct block));
    c->busy = eb_ir_arena_alloc(&g->arena, (2 * g->n_values + 1) * sizeof(struct block));
    c->n_dead = 0;
    if (c->anc == NULL || c->acc == NULL || c->after == NULL || c->dead == NULL || c->busy == NULL)
        return 0;
    memset(c->anc, 0, (g->n_nodes + 1) * w * sizeof(uint64_t));
    memset(c->acc, 0, (g->n_values + 1) * w * sizeof(uint64_t));
    memset(c->after, 0xFF, (g->n_values + 1) * w * sizeof(uint64_t));
    for (size_t i = 0; i < g->n_nodes; i++) {
        const struct eb_ir_node *n = &g->nodes[i];
        if (!n->alive)
            continue;
        uint64_t *a = &c->anc[i * w];
        for (int j = 0; j < n->n_in; j++) {
            const int p = n->in[j] >= 0 ? g->values[n->in[j]].producer : -1;
            if (p < 0 || !g->nodes[p].alive)
                continue;
            for (size_t k = 0; k < w; k++)
                a[k] |= c->anc[(size_t)p * w + k];
            a[(size_t)p / 64] |= 1ull << ((size_t)p % 64);
        }
        for (int j = 0; j < n->n_in + n->n_out; j++) {
            const int id = j < n->n_in ? n->in[j] : n->out[j - n->n_in];
            if (id < 0)
                continue;
            const size_t h = (size_t)home_of(g, id);
            c->acc[h * w + i / 64] |= 1ull << (i % 64);
            if (j >= n->n_in)
                for (size_t k = 0; k < w; k++)
                    c->after[h * w + k] &= a[k];
        }
    }
    return 1;
}

/* Where slot `home` goes: the best fit between the live slots and the dead ones whose bytes it
 * may not take. */
static uint64_t conc_place(struct conc *c, const struct block *live, size_t n_live, int home,
                           uint64_t size)
{
    size_t n = 0;
    const uint64_t *after = &c->after[(size_t)home * c->words];
    for (size_t i = 0; i < c->n_dead; i++) {
        const uint64_t *acc = &c->acc[(size_t)c->dead[i].value * c->words];
        int clash = 0;
        for (size_t k = 0; k < c->words && !clash; k++)
            clash = (acc[k] & ~after[k]) != 0;
        if (clash)
            c->busy[n++] = c->dead[i];
    }
    for (size_t i = 0; i < n_live; i++)
        c->busy[n++] = live[i];
    for (size_t i = 1; i < n; i++) /* by offset */
        for (size_t j = i; j > 0 && c->busy[j - 1].offset > c->busy[j].offset; j--) {
            const struct block t = c->busy[j];
            c->busy[j] = c->busy[j - 1];
            c->busy[j - 1] = t;
        }
    return best_fit(c->busy, n, size);
}

enum eb_status eb_memplan_build(struct eb_graph *g, int concurrent, struct eb_memplan *plan_out,
                                struct eb_diag *diag)
{
    struct eb_memplan plan = {0};
    struct block *live = eb_ir_arena_alloc(&g->arena, (g->n_values + 1) * sizeof(*live));
    size_t n_live = 0;
    if (live == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to plan model %s: out of memory", g->what);
    for (size_t k = 0; k < g->n_values; k++) {
        struct eb_ir_value *v = &g->values[k];
        v->offset = -1;
        v->alias_of = -1;
        v->cpitch = 0;
        v->first = v->producer;
        v->last = v->is_output ? (int)g->n_nodes : v->producer;
        if (v->is_const && (v->n_uses > 0 || v->is_output))
            plan.weight_bytes += v->nbytes;
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const struct eb_ir_node *n = &g->nodes[i];
        if (!n->alive)
            continue;
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j] >= 0 && g->values[n->in[j]].last < (int)i)
                g->values[n->in[j]].last = (int)i;
    }
    char *owner = eb_ir_arena_alloc(&g->arena, g->n_values + 1);
    if (owner == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to plan model %s: out of memory", g->what);
    memset(owner, 0, g->n_values + 1);
    /* A dynamic graph's Concat places its inputs at offsets that change with the shapes: never
     * in place (views stay: a view starts at its input's first byte whatever the shape). */
    for (size_t i = 0; i < g->n_nodes && !g->dynamic; i++)
        if (g->nodes[i].alive && g->nodes[i].op == &eb_op_concat)
            plan.n_concat_in_place +=
                (size_t)concat_in_place(g, &g->nodes[i], owner, &plan.n_split_in_place);
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].alive && is_view_op(g->nodes[i].op))
            plan.n_views += (size_t)view_in_place(g, &g->nodes[i], owner);
    struct conc conc;
    if (concurrent && !conc_build(g, &conc))
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to plan model %s: out of memory", g->what);
    struct block *dead = concurrent ? conc.dead : NULL;
    size_t *n_dead = concurrent ? &conc.n_dead : NULL;
    /* A dynamic graph's inputs are copied into slots of their own for the whole run (the
     * caller may pass the last run's outputs, which live in this arena, as this run's
     * inputs: eb_engine_run copies them before any node writes). */
    for (size_t i = 0; i < g->n_inputs && g->dynamic; i++) {
        struct eb_ir_value *v = &g->values[g->inputs[i]];
        const uint64_t bytes =
            g->in_cap_bytes[i] > slot_bytes(v) ? g->in_cap_bytes[i] : slot_bytes(v);
        const uint64_t size = align_up(bytes > 0 ? bytes : 1);
        const uint64_t at = best_fit(live, n_live, size); /* the CPU device: sequential */
        insert(live, &n_live, at, size, g->inputs[i]);
        v->offset = (int64_t)at;
        v->first = -1;
        v->last = (int)g->n_nodes;
        plan.naive_bytes += size;
        if (at + size > plan.arena_bytes)
            plan.arena_bytes = at + size;
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const struct eb_ir_node *n = &g->nodes[i];
        if (!n->alive)
            continue;
        /* Outputs are placed before inputs are released: no in-place reuse in this step. An
         * in-place Concat's output is placed with its first input, its inputs inside it; a
         * view's output at its input's offset. */
        for (int j = 0; j < n->n_out; j++) {
            struct eb_ir_value *v = &g->values[n->out[j]];
            uint64_t size = align_up(slot_bytes(v) > 0 ? slot_bytes(v) : 1);
            plan.naive_bytes += size;
            const int home_id = v->alias_of >= 0 ? v->alias_of : n->out[j];
            struct eb_ir_value *home = &g->values[home_id];
            if (v == home && v->offset >= 0)
                continue; /* an in-place Concat's output, placed with its first input */
            if (home->offset < 0) {
                const uint64_t hsize = align_up(slot_bytes(home) > 0 ? slot_bytes(home) : 1);
                const uint64_t at = concurrent ? conc_place(&conc, live, n_live, home_id, hsize)
                                               : best_fit(live, n_live, hsize);
                insert(live, &n_live, at, hsize, home_id);
                home->offset = (int64_t)at;
                if ((uint64_t)home->offset + hsize > plan.arena_bytes)
                    plan.arena_bytes = (uint64_t)home->offset + hsize;
            }
            if (v != home)
                v->offset += home->offset; /* was relative to the Concat output */
        }
        /* A value inside an in-place Concat's output frees nothing itself: the output's slot
         * goes when the last reader of it or of any of its inputs has run. */
        for (int j = 0; j < n->n_in; j++) {
            int id = n->in[j];
            if (id >= 0 && g->values[id].alias_of >= 0)
                id = g->values[id].alias_of;
            if (id >= 0 && planned(g, &g->values[id]) && g->values[id].last == (int)i)
                release(live, &n_live, id, dead, n_dead);
        }
        for (int j = 0; j < n->n_out; j++) {
            int id = n->out[j];
            if (g->values[id].alias_of >= 0)
                id = g->values[id].alias_of;
            if (g->values[id].last == (int)i)
                release(live, &n_live, id, dead, n_dead);
        }
    }
    for (size_t k = 0; k < g->n_values; k++)
        g->values[k].cap_bytes = (size_t)slot_bytes(&g->values[k]);
    for (size_t i = 0; i < g->n_inputs && g->dynamic; i++)
        if (g->in_cap_bytes[i] > g->values[g->inputs[i]].cap_bytes)
            g->values[g->inputs[i]].cap_bytes = (size_t)g->in_cap_bytes[i];
    *plan_out = plan;
    return EB_OK;
}
