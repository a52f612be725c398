/*
 * Read-only accessors the fusion pass (ir/passes_fuse.c) and the memory planner use to look at
 * the parameters of nodes; each is defined in its op's file, next to the params it reads.
 */
#ifndef EB_ENGINE_OPS_FUSE_ACCESS_H
#define EB_ENGINE_OPS_FUSE_ACCESS_H

#include "engine/ir/graph.h"

/**
 * The attribute parameters of an activation node of activation.c (Relu, LeakyRelu, Clip,
 * HardSigmoid, HardSwish, Exp, Sqrt, Tanh), as parsed by its check: LeakyRelu alpha in *a_out;
 * Clip's min/max attributes (opset < 11; -inf/+inf otherwise; the min/max inputs are not
 * included) in *a_out and *b_out; HardSigmoid alpha/beta. Returns 0 (outputs untouched) for any other
 * node or one without params.
 */
int eb_op__activation_params(const struct eb_ir_node *n, float *a_out, float *b_out);

/**
 * The axis of a Concat node for an output of `rank` dims, normalised to [0, rank); -1 for any
 * other node or one without params. Used by the memory planner (plan/memplan.c).
 */
int eb_op__concat_axis(const struct eb_ir_node *n, int rank);
/** A Split node's axis in [0, rank), or -1 when n is not a Split. */
int eb_op__split_axis(const struct eb_ir_node *n, int rank);

#endif
