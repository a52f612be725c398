/*
 * Operator definitions: one `const struct eb_op_def eb_op_<name>` per ONNX op, listed in ops.def
 * and found by eb_op_find. An op parses and validates its attributes (check), computes output
 * dtypes and shapes (infer_shape; constant inputs have their data) and runs its scalar reference
 * kernel (exec). Anything an op does not support is reported by check/infer_shape at load time
 * through eb_op_unsupported, naming model, node, op and opset; exec cannot fail.
 *
 * Adding an op: docs/adding-an-op.md.
 */
#ifndef EB_ENGINE_OPS_OP_H
#define EB_ENGINE_OPS_OP_H

#include "engine/cpu/cpu.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ir/checked.h"
#include "engine/ir/graph.h"
#include "engine/ops/op_desc.h"

/** What check and infer_shape see. */
struct eb_op_ctx {
    struct eb_graph *g;
    struct eb_ir_node *n;
    const struct eb_onnx_node *src; /* the ONNX node (attributes); NULL at run time */
    struct eb_diag *diag;
    int run; /* 1: a dynamic graph's run re-infers the node (eb_op_def.dyn_shapes): every input
                has its data (a run-time check may read it, e.g. Gather's indices) */
};

/** What exec sees: the node, its graph (values' data bound) and the CPU context. */
struct eb_exec {
    const struct eb_graph *g;
    const struct eb_ir_node *n;
    const struct eb_cpu_exec *cpu; /* isa REF, serial, no scratch during constant folding */
};

/** What prepare sees (load time, after the passes, before memory planning). */
struct eb_op_prepare {
    struct eb_op_ctx op;
    enum eb_cpu_isa isa;  /* the kernel family the engine runs */
    int n_workers;        /* threads that will run the node */
    size_t scratch_bytes; /* out: scratch this node needs at run time (0 = none) */
    size_t packed_bytes;  /* out: bytes prepare allocated for packed weights (graph arena) */
};

struct eb_op_def {
    const char *onnx_name; /* op_type in the default domain */
    int since_opset;       /* oldest opset whose semantics the op implements */
    int min_inputs, max_inputs, min_outputs, max_outputs;
    /**
     * Inputs a node may omit (an empty name), as EB_OP_OPTIONAL(i) bits; every other input
     * that a node lists is required, and import refuses a node that leaves one empty, naming
     * node, op and input index (eb_op_input_optional). So infer_shape and exec may read every
     * required input without a NULL check; only optional ones can be NULL (eb_op_in).
     */
    uint32_t optional_inputs;
    /** Optional; 1 when outputs depend on input shapes only (Shape): always folded at load. */
    int shape_only;
    /**
     * 1 when the op runs in dynamic graphs (eb_graph.dynamic) at shapes that change from run to
     * run: infer_shape may run again before every exec with ctx->src NULL and ctx->run 1, so it
     * reads no attribute (check stores them in n->params) and allocates nothing; exec and the
     * fast kernels take every size from the values' shapes and the params infer_shape set, and
     * the scratch prepare sized on the bound shapes is enough for any smaller one. A node of
     * an op without it that reads a dynamic value is refused at load, naming node and op.
     */
    int dyn_shapes;
    /**
     * 1 when infer_shape at a run (ctx->run) reads the data of an input that is neither a
     * constant nor shape data, to check it (Gather's indices against the axis): the output
     * shapes still follow from the input shapes alone (a run-time value that would set a shape,
     * Range's or ConstantOfShape's, is refused at load), so a device that keeps each shape
     * signature's shapes runs only such nodes' infer_shape again (cuda_device.c dyn_restore).
     */
    int run_checks_data;
    /** Required. Parses attributes into n->params (arena); rejects unsupported values. */
    enum eb_status (*check)(struct eb_op_ctx *ctx);
    /** Required. Sets dtype and shape of every output; rejects unsupported dtypes. */
    enum eb_status (*infer_shape)(struct eb_op_ctx *ctx);
    /**
     * Optional. Chooses and prepares the node's fast kernel for p->isa (packs constant
     * weights into the graph arena, sizes its scratch). Only called on live nodes when isa is
     * not REF. EB_ERR_NOMEM only.
     */
    enum eb_status (*prepare)(struct eb_op_prepare *p);
    /** Optional. Floating-point (or integer) operations of one run; default: output elements. */
    uint64_t (*flops)(const struct eb_graph *g, const struct eb_ir_node *n);
    /**
     * Optional. Describes the node for another device (op_desc.h); 0 when this node's
     * attributes or types have no description (the device then runs it on the CPU or refuses).
     */
    int (*describe)(const struct eb_graph *g, const struct eb_ir_node *n, struct eb_op_desc *d);
    /** Required. Runs the node on values' `data` (inputs read, outputs written). */
    void (*exec)(const struct eb_exec *x);
};

/** eb_op_def.optional_inputs bit of input `i` (0..31; inputs from 32 on are never optional). */
#define EB_OP_OPTIONAL(i) (UINT32_C(1) << (i))

#define EB_OP(name, sym) extern const struct eb_op_def eb_op_##sym;
#include "engine/ops/ops.def"
#undef EB_OP

/** The definition of `op_type` (default domain), NULL when the engine has none. */
const struct eb_op_def *eb_op_find(const char *op_type);

/** Whether a node of `op` may omit input `i` (leave its name empty). */
int eb_op_input_optional(const struct eb_op_def *op, int i);

/**
 * Records "model X node N (name): op T (opset V): <msg>" with status `st` and returns it.
 */
enum eb_status eb_op_fail(const struct eb_op_ctx *ctx, enum eb_status st, const char *fmt, ...)
    EB_PRINTF(3, 4);
/**
 * eb_op_fail(EB_ERR_UNSUPPORTED, "<msg> is not supported by the native engine") with
 * EB_ADVICE_OTHER_BACKEND (the harness adds the flag).
 */
enum eb_status eb_op_unsupported(const struct eb_op_ctx *ctx, const char *fmt, ...) EB_PRINTF(2, 3);

/* Attribute helpers (ctx->src). */
int64_t eb_op_attr_int(const struct eb_op_ctx *ctx, const char *name, int64_t def);
float eb_op_attr_float(const struct eb_op_ctx *ctx, const char *name, float def);
/** String attribute or `def`. */
const char *eb_op_attr_str(const struct eb_op_ctx *ctx, const char *name, const char *def);
/**
 * INTS attribute copied into out[0..max); *n_out = count (0 when absent). EB_ERR_UNSUPPORTED
 * when it has more than `max` entries or the wrong type.
 */
EB_NODISCARD enum eb_status eb_op_attr_ints(const struct eb_op_ctx *ctx, const char *name,
                                            int64_t *out, size_t max, size_t *n_out);

/** Input/output value `i` of a node; NULL for an omitted input. */
struct eb_ir_value *eb_op_in(const struct eb_graph *g, const struct eb_ir_node *n, int i);
struct eb_ir_value *eb_op_out(const struct eb_graph *g, const struct eb_ir_node *n, int i);

/**
 * Reads a constant integer input (int64/int32) into out[0..max); *n_out = count.
 * EB_ERR_UNSUPPORTED (via eb_op_unsupported) when the input is not constant.
 */
EB_NODISCARD enum eb_status eb_op_const_ints(const struct eb_op_ctx *ctx, int i, int64_t *out,
                                             size_t max, size_t *n_out);
/** Sets output `i` (dtype + shape) through eb_ir_value_set. */
EB_NODISCARD enum eb_status eb_op_set_out(const struct eb_op_ctx *ctx, int i, enum eb_dtype dt,
                                          int rank, const int64_t *shape);
/** Normalises a possibly negative axis into [0, rank); EB_ERR_FORMAT when out of range. */
EB_NODISCARD enum eb_status eb_op_axis(const struct eb_op_ctx *ctx, int64_t axis, int rank,
                                       int *axis_out);
/** Rejects an input whose dtype is not `dt`. */
EB_NODISCARD enum eb_status eb_op_want_dtype(const struct eb_op_ctx *ctx, int i, enum eb_dtype dt);

/** 2-D window attributes shared by MaxPool and AveragePool (pool_common.c). */
struct eb_op_pool_attrs {
    int64_t kernel[2], strides[2], dilations[2], pads[4];
    int64_t ceil_mode;
};
/**
 * Reads and checks kernel_shape, strides, dilations (refused unless `allow_dilation`), pads,
 * ceil_mode and auto_pad (NOTSET or VALID) into `a`.
 */
EB_NODISCARD enum eb_status eb_op__pool_attrs(struct eb_op_ctx *ctx, int allow_dilation,
                                              struct eb_op_pool_attrs *a);
/** Fills `d` from input 0 [N,C,H,W] and `a`, and sets output 0's shape. */
EB_NODISCARD enum eb_status eb_op__pool_geometry(struct eb_op_ctx *ctx,
                                                 const struct eb_op_pool_attrs *a,
                                                 struct eb_pool2d_desc *d);

/** numpy broadcast of two shapes; EB_ERR_FORMAT when incompatible. */
EB_NODISCARD enum eb_status eb_op_broadcast(const struct eb_op_ctx *ctx,
                                            const struct eb_ir_value *a,
                                            const struct eb_ir_value *b, int *rank_out,
                                            int64_t *shape_out);

#endif
