/*
 * What the fusion pass may change on a float Conv node (ops/conv.c): its epilogue. A fused
 * residual is the node's input 3 (the pass grows the input list).
 */
#ifndef EB_ENGINE_OPS_CONV_H
#define EB_ENGINE_OPS_CONV_H

#include "engine/cpu/epilogue.h"
#include "engine/ir/graph.h"

/** The epilogue of a float Conv node (params set by check), NULL for any other node. */
struct eb_epilogue *eb_op__conv_epilogue(struct eb_ir_node *n);

#endif
