/*
 * Read-only accessors the passes (ir/passes_fuse.c, ir/passes_layout.c) and the memory planner
 * use to look at the parameters of nodes; each is defined in its op's file, next to the params
 * it reads.
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

/**
 * CB when float Conv node n can read (output_side 0) or write (1: also its residual) a
 * channel-blocked tensor with `isa`'s kernels: constant weights and bias, groups 1 or
 * depthwise, no fake quantisation on the output side; 0 otherwise (any other node too).
 */
int eb_op__conv_cl_block(const struct eb_graph *g, const struct eb_ir_node *n, enum eb_cpu_isa isa,
                         int output_side);
/** 1 when MaxPool node n can run on a channel-blocked input (stride 1, no dilation). */
int eb_op__maxpool_cl_ok(const struct eb_ir_node *n);
/**
 * 1 when Resize node n upsamples a 4-D input by integer factors on H and W only, output index j
 * reading input j / factor: what eb_cpu_upsample_f32_cl computes on a channel-blocked input.
 */
int eb_op__resize_cl_ok(const struct eb_graph *g, const struct eb_ir_node *n);

#endif
