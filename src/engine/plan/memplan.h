/*
 * Memory planner: tensor lifetimes over the topologically ordered live nodes → offsets in one
 * arena (greedy best fit over the gaps between live blocks, 64-byte aligned). Graph outputs stay
 * live to the end, so each keeps its own slot. Known in full at load time.
 */
#ifndef EB_ENGINE_PLAN_MEMPLAN_H
#define EB_ENGINE_PLAN_MEMPLAN_H

#include <stdint.h>

#include "engine/ir/graph.h"

#define EB_MEMPLAN_ALIGN 64u

struct eb_memplan {
    uint64_t arena_bytes;  /* planned peak */
    uint64_t naive_bytes;  /* sum of every planned tensor (aligned) */
    uint64_t weight_bytes; /* constants read by live nodes or returned as outputs */
};

/**
 * Plans every non-constant value produced by a live node: sets value->offset, first, last.
 * Scratch comes from the graph arena. EB_ERR_NOMEM only.
 */
EB_NODISCARD enum eb_status eb_memplan_build(struct eb_graph *g, struct eb_memplan *plan_out,
                                             struct eb_diag *diag);

#endif
