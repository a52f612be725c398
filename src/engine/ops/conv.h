/*
 * What the fusion pass may change on a float Conv node (ops/conv.c): its epilogue. A fused
 * residual is the node's input 3 (the pass grows the input list).
 */
#ifndef EB_ENGINE_OPS_CONV_H
#define EB_ENGINE_OPS_CONV_H

#include "engine/cpu/epilogue.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ir/graph.h"
#include "engine/ops/op.h"

/** Conv's attribute check (shared with ConvInteger): parses into n->params. */
EB_NODISCARD enum eb_status eb_op__conv_check(struct eb_op_ctx *ctx);
/** Geometry of x [N,C,H,W] and w [OC,C/g,KH,KW] with the node's attributes (pads resolved). */
EB_NODISCARD enum eb_status eb_op__conv_geometry(struct eb_op_ctx *ctx, const struct eb_ir_value *x,
                                                 const struct eb_ir_value *w,
                                                 struct eb_conv2d_desc *d);
/** The same at run time (validated at load; cannot fail). */
void eb_op__conv_run_geometry(const struct eb_graph *g, const struct eb_ir_node *n,
                              struct eb_conv2d_desc *d);

/**
 * The slot where an op that shares Conv's attributes (ConvInteger) keeps its own state; the
 * node's params are Conv's (set by eb_op__conv_check).
 */
void **eb_op__conv_ext(const struct eb_ir_node *n);

/** The epilogue of a float Conv node (params set by check), NULL for any other node. */
struct eb_epilogue *eb_op__conv_epilogue(struct eb_ir_node *n);

#endif
