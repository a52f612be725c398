/*
 * Memory planner: tensor lifetimes over the topologically ordered live nodes → offsets in one
 * arena (greedy best fit over the gaps between live blocks, 64-byte aligned). Graph outputs stay
 * live to the end, so each keeps its own slot. Known in full at load time.
 *
 * Dynamic graphs (eb_graph.dynamic, decoders): the slots hold the load-time (bound) shapes and
 * each value's cap_bytes records them (runs refuse a shape that needs more); no Concat goes in
 * place (its inputs' offsets would move with the shapes); every graph input gets a slot live for
 * the whole run, sized at its bounds (eb_graph.in_cap_bytes), into which eb_engine_run copies it.
 *
 * Concat in place: when a Concat's inputs are contiguous slices of its output (every dim before
 * the axis is 1), each is produced by a live node, read by nothing that needs a slot of its own
 * (not a graph input or output, not in another in-place Concat, not twice in this one) and its
 * slice starts 64-byte aligned, the inputs are placed inside the output, which is placed when the
 * first of them is produced and lives until the last reader of any of them: the Concat copies
 * nothing (ops/concat_split.c sees its inputs already in place). When some of those inputs are
 * all the outputs of one Split along the same axis, in order (C2f, C3k2), the Split's input is
 * placed there too (at its first output's slice) and the Split copies nothing.
 *
 * Views: the output of a Reshape, Flatten, Squeeze, Unsqueeze or Identity takes its input's
 * bytes (same offset; the input's lifetime extended over the output's), unless the output is a
 * graph output, an in-place Concat's input or output, or the input is itself inside another
 * value: the node copies nothing (ops/reshape.c sees the same data).
 *
 * Channels-last Concat along C (eb_ir_value.nhwc, the CUDA device's): a slice along C is not
 * contiguous, so the inputs go in place only where the device says every node that touches them
 * takes rows that are a slice of wider rows (eb_ir_value.pitch_ok; fp16 convolutions through
 * cuDNN's graph API and strided copies): each input then starts at its first channel's bytes
 * (16-byte aligned) inside the output and has cpitch = the output's C; a Split of such inputs goes
 * in place as above. Channels-last values are never views (that would change the element order).
 *
 * Concurrent plans (the CUDA device, whose captured graph runs independent branches side by
 * side): a slot's bytes go to a later value only when every node that wrote or read them is an
 * ancestor (through the values it reads) of every node that writes the later value, so reusing
 * memory never orders two branches that could run at the same time. A sequential plan (the
 * CPU) reuses bytes as soon as their last reader has run.
 */
#ifndef EB_ENGINE_PLAN_MEMPLAN_H
#define EB_ENGINE_PLAN_MEMPLAN_H

#include <stdint.h>

#include "engine/ir/graph.h"

#define EB_MEMPLAN_ALIGN       64u
#define EB_MEMPLAN_SLICE_ALIGN 16u /* channels-last slices: cuDNN's tensor alignment */

struct eb_memplan {
    uint64_t arena_bytes;     /* planned peak */
    uint64_t naive_bytes;     /* sum of every planned tensor (aligned) */
    uint64_t weight_bytes;    /* constants read by live nodes or returned as outputs */
    size_t n_concat_in_place; /* Concat nodes whose inputs were placed inside their output */
    size_t n_split_in_place;  /* Split nodes whose input went inside an in-place Concat */
    size_t n_views;           /* Reshape-family nodes whose output is their input's bytes */
};

/**
 * Plans every non-constant value produced by a live node: sets value->offset, alias_of (the
 * value whose slot holds this one: an in-place Concat's output, or a view's input), first,
 * last. `concurrent`: a concurrent plan (above). May be called again to plan anew.
 * Scratch comes from the graph arena. EB_ERR_NOMEM only.
 */
EB_NODISCARD enum eb_status eb_memplan_build(struct eb_graph *g, int concurrent,
                                             struct eb_memplan *plan_out, struct eb_diag *diag);

#endif
