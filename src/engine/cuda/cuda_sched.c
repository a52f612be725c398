/*
 * Parallel branches in the captured forward (cuda_device.c): the nodes of a YOLO graph form
 * chains that need not wait for each other (the detect head's box and class branches, a scale's
 * head while the neck goes on, a C3k2 block's bottleneck beside its shortcut). At bind time each
 * node gets the nodes it must follow and a lane (one of EB_CU_LANES streams); the capture then
 * enqueues every node on its lane, waiting through events only on what its lane has not
 * already followed, so that the graph's replay runs independent kernels side by side.
 *
 * A node must follow an earlier node when the two touch the same device bytes and at least one
 * writes them: its producers (read after write), but also the last readers of arena memory the
 * planner hands on to its outputs (write after read), the shared layout-transpose buffer and the
 * cuBLAS workspace. cuDNN workspaces are per lane (s->lane_ws), so they order nothing, unless a
 * memory cap leaves room for one only: then every node that uses it is ordered. A node on
 * the CPU is a barrier: it follows everything before it and everything after follows it. The
 * kept edges are a transitive reduction (an edge implied by a longer path is dropped).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/cuda_internal.h"

#define MAX_RANGES (2 * EB_IR_MAX_IO + 4)

struct range {
    uintptr_t lo, hi; /* [lo, hi) */
    int write;
};

struct node_ranges {
    struct range r[MAX_RANGES];
    int n;
};

static void add(struct node_ranges *nr, const void *p, size_t bytes, int write)
{
    if (p == NULL || bytes == 0 || nr->n >= MAX_RANGES)
        return;
    nr->r[nr->n].lo = (uintptr_t)p;
    nr->r[nr->n].hi = (uintptr_t)p + bytes;
    nr->r[nr->n].write = write;
    nr->n++;
}

/* The device bytes GPU node k reads and writes. */
static void ranges_of(const struct eb_engine *e, const struct cu_state *s, size_t k, int shared_ws,
                      struct node_ranges *nr)
{
    const struct eb_graph *g = e->g;
    const struct eb_ir_node *n = &g->nodes[e->order[k]];
    const struct cu_node *cn = &s->nodes[k];
    nr->n = 0;
    for (int i = 0; i < n->n_in; i++) {
        if (n->in[i] < 0 || g->values[n->in[i]].is_const)
            continue;
        const struct eb_ir_value *v = &g->values[n->in[i]];
        add(nr, s->dptr[n->in[i]], eb_cu__span_bytes(s, v), 0);
    }
    for (int i = 0; i < n->n_out; i++) {
        if (n->out[i] < 0)
            continue;
        const struct eb_ir_value *v = &g->values[n->out[i]];
        add(nr, s->dptr[n->out[i]], eb_cu__span_bytes(s, v), 1);
    }
    if ((cn->d.kind == EB_DESC_CONV || cn->d.kind == EB_DESC_QCONV) && cn->x_xpose)
        add(nr, s->d_xpose, s->xpose_bytes, 1);
    if (cn->d.kind == EB_DESC_MATMUL || cn->mm)
        add(nr, s->d_blas_ws, s->blas_ws_bytes, 1);
    if (shared_ws && cn->ws_bytes > 0) /* not allocated yet: a byte of s as its tag */
        add(nr, &s->d_ws, 1, 1);
}

/* 1 when one of a and b writes bytes the other touches. */
static int conflict(const struct node_ranges *a, const struct node_ranges *b)
{
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++)
            if ((a->r[i].write || b->r[j].write) && a->r[i].lo < b->r[j].hi &&
                b->r[j].lo < a->r[i].hi)
                return 1;
    return 0;
}

static int has(const uint64_t *set, size_t i)
{
    return (int)((set[i / 64] >> (i % 64)) & 1u);
}

/* The lane of node k: the lane whose last node is the latest of k's kept edges (the chain goes
 * on), else a lane whose last node k follows anyway, else an unused lane, else the lane whose
 * last node is oldest. tail[l]: the last node on lane l, -1 when none. */
static int pick_lane(const struct cu_state *s, size_t k, const uint64_t *anc, const int64_t *tail)
{
    for (uint32_t i = s->dep_at[k + 1]; i > s->dep_at[k]; i--) { /* deps are ascending */
        const uint32_t j = s->deps[i - 1];
        if (tail[s->nodes[j].lane] == (int64_t)j)
            return s->nodes[j].lane;
    }
    for (int l = 0; l < EB_CU_LANES; l++)
        if (tail[l] >= 0 && has(anc, (size_t)tail[l]))
            return l;
    int best = 0;
    for (int l = 0; l < EB_CU_LANES; l++) {
        if (tail[l] < 0)
            return l;
        if (tail[l] < tail[best])
            best = l;
    }
    return best;
}

enum eb_status eb_cu__schedule(struct eb_engine *e, struct cu_state *s, int parallel, int shared_ws,
                               struct eb_diag *diag)
{
    const size_t n = e->n_order, words = (n + 63) / 64;
    struct node_ranges *rg = calloc(n > 0 ? n : 1, sizeof(*rg));
    uint64_t *anc = calloc(n * words + 1, sizeof(uint64_t));
    uint32_t *tmp = malloc((n + 1) * sizeof(uint32_t));
    s->dep_at = eb_ir_arena_alloc(&e->g->arena, (n + 1) * sizeof(uint32_t));
    enum eb_status st = EB_OK;
    if (rg == NULL || anc == NULL || tmp == NULL || s->dep_at == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", e->what);
        goto done;
    }
    /* The reduced edges, counted first, then stored (a second pass gives the same sets). */
    for (int pass = 0; pass < 2 && st == EB_OK; pass++) {
        uint32_t total = 0;
        memset(anc, 0, n * words * sizeof(uint64_t));
        for (size_t k = 0; k < n; k++) {
            if (pass == 0 && !s->on_cpu[k])
                ranges_of(e, s, k, shared_ws, &rg[k]);
            uint64_t *ak = &anc[k * words];
            uint32_t m = 0;
            for (size_t j = k; j-- > 0;) { /* latest first: later edges imply earlier ones */
                if (has(ak, j))
                    continue;
                if (!s->on_cpu[k] && !s->on_cpu[j] && !conflict(&rg[j], &rg[k]))
                    continue;
                const uint64_t *aj = &anc[j * words];
                for (size_t w = 0; w < words; w++)
                    ak[w] |= aj[w];
                ak[j / 64] |= (uint64_t)1 << (j % 64);
                tmp[m++] = (uint32_t)j;
            }
            if (pass == 1)
                for (uint32_t i = 0; i < m; i++) /* ascending */
                    s->deps[s->dep_at[k] + i] = tmp[m - 1 - i];
            else
                s->dep_at[k] = total;
            total += m;
        }
        if (pass == 0) {
            s->dep_at[n] = total;
            s->deps = eb_ir_arena_alloc(&e->g->arena, (total + 1) * sizeof(uint32_t));
            if (s->deps == NULL)
                st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory",
                                  e->what);
        }
    }
    if (st != EB_OK)
        goto done;
    int64_t tail[EB_CU_LANES];
    for (int l = 0; l < EB_CU_LANES; l++)
        tail[l] = -1;
    s->n_lanes = 1;
    for (size_t k = 0; k < n; k++) {
        const int l = !parallel || s->on_cpu[k] ? 0 : pick_lane(s, k, &anc[k * words], tail);
        s->nodes[k].lane = l;
        tail[l] = (int64_t)k;
        if (l + 1 > s->n_lanes)
            s->n_lanes = l + 1;
    }
done:
    free(rg);
    free(anc);
    free(tmp);
    return st;
}

/* Points the library handles at `stream` (cublasSetStream forgets the workspace: set again). */
static int use_stream(struct cu_state *s, cudaStream_t stream)
{
    if (s->lib_stream == stream)
        return 1;
    if (cudnnSetStream(s->cudnn, stream) != CUDNN_STATUS_SUCCESS ||
        cublasSetStream(s->cublas, stream) != CUBLAS_STATUS_SUCCESS)
        return 0;
    if (s->d_blas_ws != NULL &&
        cublasSetWorkspace(s->cublas, s->d_blas_ws, s->blas_ws_bytes) != CUBLAS_STATUS_SUCCESS)
        return 0;
    s->lib_stream = stream;
    return 1;
}

enum eb_status eb_cu__enqueue_node_on(struct eb_engine *e, struct cu_state *s, size_t k,
                                      cudaStream_t stream, eb_cu_cpu_node_fn cpu_node,
                                      struct eb_diag *diag)
{
    if (!use_stream(s, stream))
        return eb_diag_fail(diag, EB_ERR_DEVICE,
                            "model %s on cuda: setting a library stream failed", e->what);
    return s->on_cpu[k] ? cpu_node(e, s, k, stream, diag)
                        : eb_cu__node_enqueue(e, s, k, stream, diag);
}

enum eb_status eb_cu__enqueue_lanes(struct eb_engine *e, struct cu_state *s,
                                    eb_cu_cpu_node_fn cpu_node, struct eb_diag *diag)
{
    const size_t n = e->n_order;
    /* seen[l][m]: the latest node of lane m that lane l's work already follows (-1: none);
     * node k's row is kept in s->seen (n × EB_CU_LANES) for the lanes that wait on it */
    int64_t seen[EB_CU_LANES][EB_CU_LANES];
    int started[EB_CU_LANES] = {1};
    for (int l = 0; l < EB_CU_LANES; l++)
        for (int m = 0; m < EB_CU_LANES; m++)
            seen[l][m] = -1;
    cudaError_t ce = cudaEventRecord(s->ev_fork, s->lanes[0]);
    enum eb_status st = EB_OK;
    for (size_t k = 0; k < n && st == EB_OK && ce == cudaSuccess; k++) {
        const int l = s->nodes[k].lane;
        const cudaStream_t ls = s->lanes[l];
        if (!started[l]) {
            ce = cudaStreamWaitEvent(ls, s->ev_fork, 0);
            started[l] = 1;
        }
        for (uint32_t i = s->dep_at[k]; i < s->dep_at[k + 1] && ce == cudaSuccess; i++) {
            const uint32_t j = s->deps[i];
            const int lj = s->nodes[j].lane;
            if (lj == l || seen[l][lj] >= (int64_t)j)
                continue;
            ce = cudaStreamWaitEvent(ls, s->ev_done[j], 0);
            const int64_t *sj = &s->seen[(size_t)j * EB_CU_LANES];
            for (int m = 0; m < EB_CU_LANES; m++)
                if (sj[m] > seen[l][m])
                    seen[l][m] = sj[m];
        }
        if (ce != cudaSuccess)
            break;
        st = eb_cu__enqueue_node_on(e, s, k, ls, cpu_node, diag);
        seen[l][l] = (int64_t)k;
        memcpy(&s->seen[k * EB_CU_LANES], seen[l], sizeof(seen[l]));
        if (st == EB_OK)
            ce = cudaEventRecord(s->ev_done[k], ls);
    }
    /* the other lanes join lane 0 */
    for (int l = 1; l < EB_CU_LANES && st == EB_OK && ce == cudaSuccess; l++) {
        if (!started[l] || seen[0][l] >= seen[l][l])
            continue;
        ce = cudaEventRecord(s->ev_join[l], s->lanes[l]);
        if (ce == cudaSuccess)
            ce = cudaStreamWaitEvent(s->lanes[0], s->ev_join[l], 0);
    }
    if (st == EB_OK && !use_stream(s, s->lanes[0]))
        st = eb_diag_fail(diag, EB_ERR_DEVICE, "model %s on cuda: setting a library stream failed",
                          e->what);
    if (st == EB_OK && ce != cudaSuccess)
        st = eb_diag_fail(diag, EB_ERR_DEVICE, "model %s on cuda: lane events: %s", e->what,
                          cudaGetErrorString(ce));
    return st;
}
