/* Greedy best-fit memory planning over tensor lifetimes (see memplan.h). */
#include <string.h>

#include "engine/plan/memplan.h"

struct block {
    uint64_t offset, size;
    int value;
};

static uint64_t align_up(uint64_t v)
{
    return (v + EB_MEMPLAN_ALIGN - 1) & ~(uint64_t)(EB_MEMPLAN_ALIGN - 1);
}

/* Places `size` bytes in the smallest gap between live blocks (sorted by offset) that fits,
 * or after the last one; inserts the block and returns its offset. */
static uint64_t place(struct block *live, size_t *n_live, uint64_t size, int value)
{
    uint64_t best = UINT64_MAX, best_gap = UINT64_MAX, prev_end = 0;
    size_t best_pos = *n_live;
    for (size_t i = 0; i <= *n_live; i++) {
        if (i == *n_live) {
            if (best == UINT64_MAX) {
                best = prev_end;
                best_pos = i;
            }
            break;
        }
        uint64_t gap = live[i].offset - prev_end;
        if (gap >= size && gap < best_gap) {
            best_gap = gap;
            best = prev_end;
            best_pos = i;
        }
        prev_end = live[i].offset + live[i].size;
    }
    memmove(&live[best_pos + 1], &live[best_pos], (*n_live - best_pos) * sizeof(*live));
    live[best_pos] = (struct block){.offset = best, .size = size, .value = value};
    (*n_live)++;
    return best;
}

static void release(struct block *live, size_t *n_live, int value)
{
    for (size_t i = 0; i < *n_live; i++) {
        if (live[i].value == value) {
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

enum eb_status eb_memplan_build(struct eb_graph *g, struct eb_memplan *plan_out,
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
    for (size_t i = 0; i < g->n_nodes; i++) {
        const struct eb_ir_node *n = &g->nodes[i];
        if (!n->alive)
            continue;
        /* Outputs are placed before inputs are released: no in-place reuse in this step. */
        for (int j = 0; j < n->n_out; j++) {
            struct eb_ir_value *v = &g->values[n->out[j]];
            uint64_t size = align_up(v->nbytes > 0 ? v->nbytes : 1);
            v->offset = (int64_t)place(live, &n_live, size, n->out[j]);
            plan.naive_bytes += size;
            if ((uint64_t)v->offset + size > plan.arena_bytes)
                plan.arena_bytes = (uint64_t)v->offset + size;
        }
        for (int j = 0; j < n->n_in; j++) {
            int id = n->in[j];
            if (id >= 0 && planned(g, &g->values[id]) && g->values[id].last == (int)i)
                release(live, &n_live, id);
        }
        for (int j = 0; j < n->n_out; j++)
            if (g->values[n->out[j]].last == (int)i)
                release(live, &n_live, n->out[j]);
    }
    *plan_out = plan;
    return EB_OK;
}
