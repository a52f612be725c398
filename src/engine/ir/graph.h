/*
 * The engine's graph IR: values (dtype, fully resolved shape, constant data) and nodes (op
 * definition + parsed parameters), built from an ONNX model by eb_graph_import and then
 * rewritten in place by the passes (shape inference, constant folding, dead-node elimination).
 *
 *     struct eb_graph *g = NULL;
 *     st = eb_graph_import(model, "yolov8n.onnx", 640, 0, alloc, NULL, &g, &diag);
 *     st = eb_graph_run_passes(g, EB_ENGINE_PASS_ALL, &diag);
 *     ...
 *     eb_graph_destroy(g);
 *
 * Ownership: names, nodes, parameters and shapes live in the graph's arena (never freed one by
 * one); constant data is allocated through the graph's counting allocator and freed with the
 * graph. Every allocation the engine makes goes through `g->alloc`, so that tests can prove that
 * a run allocates nothing.
 */
#ifndef EB_ENGINE_IR_GRAPH_H
#define EB_ENGINE_IR_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "eb/alloc.h"
#include "eb/diag.h"
#include "eb/engine.h"
#include "eb/tensor.h"
#include "engine/cpu/cpu.h"
#include "engine/onnx/onnx_model.h"

struct eb_op_def;
struct eb_engine;

/** Largest tensor the engine accepts (bytes); larger shapes are a load-time EB_ERR_LIMIT. */
#define EB_IR_MAX_TENSOR_BYTES (UINT64_C(1) << 34)
#define EB_IR_MAX_IO           8 /* inputs and outputs of a node */
/* Inputs and outputs of a graph (= EB_ENGINE_MAX_IO): a decoder's KV cache is two a layer. */
#define EB_IR_MAX_GRAPH_IO 80

/** Bump arena over the graph's allocator: graph-lifetime objects, never freed one by one. */
struct eb_ir_arena {
    const struct eb_allocator *alloc; /* borrowed */
    struct eb_ir_arena_chunk *head;
};

void eb_ir_arena_init(struct eb_ir_arena *a, const struct eb_allocator *alloc);
/** Zeroed, 16-byte aligned memory that lives until eb_ir_arena_fini; NULL on OOM. */
void *eb_ir_arena_alloc(struct eb_ir_arena *a, size_t size);
/** Copy of `s` in the arena; NULL on OOM. */
char *eb_ir_arena_strdup(struct eb_ir_arena *a, const char *s);
/** Frees every chunk; accepts a zeroed arena. */
void eb_ir_arena_fini(struct eb_ir_arena *a);

struct eb_ir_value {
    const char *name; /* arena */
    enum eb_dtype dtype;
    int rank;
    int64_t shape[EB_MAX_RANK];
    int64_t numel;
    size_t nbytes;
    int shape_known; /* set by import (inputs, constants) or by the producer's infer_shape */
    int is_const;    /* data holds the value (initializer or folded); owned_data is freed */
    int is_input, is_output;
    int producer;    /* node index, -1 for inputs and initializers */
    int n_uses;      /* uses by live nodes (after DCE) */
    int first, last; /* liveness in node order (memplan) */
    int64_t offset;  /* arena offset from the memory plan; -1 when not planned */
    int alias_of;    /* memplan: placed inside this value (a Concat output), -1 = own slot */
    int blocked;     /* layout pass: channel-blocked NCHWc with this many channels per block
                      * ([N][C/CB][H][W][CB]); 0 = as ONNX says (NCHW) */
    int nhwc;        /* CUDA device: a 4-D activation stored channels-last ([N][H][W][C]) */
    int pitch_ok;    /* CUDA device: every node that touches it takes a channels-last value
                      * whose rows are a slice of wider rows (memplan may then place it so) */
    int64_t cpitch;  /* memplan: channels-last rows of this many elements (a slice of an in-place
                      * Concat's output along C); 0 = its own C */
    void *data;      /* constant data, arena slot (after planning) or the caller's input */
    int owned_data;  /* data was allocated through the graph allocator */
    /* Dynamic graphs (eb_graph.dynamic) only; all 0 in a static one: */
    int dyn;        /* the shape, or the data of a shape_data value, follows the run's input
                       * shapes: re-inferred at every run (shape/numel/nbytes: the bound until
                       * the first run, then the last run's) */
    int shape_data; /* a small integer tensor computed from shapes (Shape → Gather → Concat →
                       * ...): infer_shape may read its data (eb_op_const_ints) as a constant's,
                       * at load (evaluated on the bounds) and at every run (its node ran first) */
    size_t bound_bytes; /* dyn values: the most bytes over the shape configurations the load
                         * infers (eb_graph_run_passes: the largest attention, one decode step at
                         * the longest past, half and half); the plan sizes the slot on it */
    size_t cap_bytes;   /* bytes its slot holds (the plan's, at the bound shapes); a run whose
                       * shapes need more is refused */
};

struct eb_ir_node {
    const char *name; /* arena; "" when the ONNX node has none */
    int onnx_index;   /* position in the ONNX file (for messages) */
    const struct eb_op_def *op;
    int n_in, n_out;
    int *in;           /* value ids; -1 for an omitted optional input */
    int *out;          /* value ids */
    void *params;      /* op-specific, in the arena, filled by op->check */
    int alive;         /* 0 once folded, fused away or eliminated */
    const char *fused; /* arena: what fusion absorbed ("silu+add"); NULL = none */
    int dyn; /* reads a dyn value: infer_shape runs again before every exec (dynamic graphs) */
    const struct eb_onnx_node *src; /* the ONNX node; valid during load only */
};

struct eb_graph {
    struct eb_counting_alloc ca; /* counts every engine allocation */
    struct eb_allocator alloc;   /* = eb_counting_alloc_iface(&ca) */
    struct eb_ir_arena arena;
    const char *what; /* arena: names the model in messages */
    int64_t opset;
    struct eb_ir_value *values;
    size_t n_values, cap_values;
    struct eb_ir_node *nodes;
    size_t n_nodes;
    int inputs[EB_IR_MAX_GRAPH_IO], outputs[EB_IR_MAX_GRAPH_IO];
    size_t n_inputs, n_outputs;
    size_t n_fused; /* nodes absorbed by the fusion pass */
    /*
     * Dynamic graphs (decoders: inputs with symbolic sequence dims): the named dims of the
     * inputs get upper bounds at import (eb_graph_import's max_seq); shapes are inferred and
     * memory planned on the bounds, and every run re-infers the dyn nodes at its actual shapes.
     * in_dim_name[i][d]: the symbol of dynamic dim d of input i (NULL: a static dim), with
     * in_dim_max[i][d] its bound. max_seq: the bound of sequence_length + past_sequence_length.
     */
    int dynamic;
    int64_t max_seq;
    const char *in_dim_name[EB_IR_MAX_GRAPH_IO][EB_MAX_RANK]; /* arena */
    int64_t in_dim_max[EB_IR_MAX_GRAPH_IO][EB_MAX_RANK];
    uint64_t in_cap_bytes[EB_IR_MAX_GRAPH_IO]; /* input i's bytes at its bounds (its arena slot) */
    size_t n_meta;
    const char **meta_keys, **meta_values; /* arena */
    /* name → value id: open addressing, power-of-two size, -1 = empty */
    int *hash;
    size_t hash_size;
};

/**
 * Symbolic dims a dynamic graph bounds (eb_graph_import): their names. Shapes are inferred at
 * load with sequence_length and total_sequence_length at max_seq and past_sequence_length 0
 * (the largest attention: every tensor of a decoder is largest there, but the inputs, whose
 * slots take their bounds); a run whose shapes would need more than a value's slot is refused.
 */
#define EB_IR_DIM_SEQ   "sequence_length"       /* ≤ max_seq */
#define EB_IR_DIM_PAST  "past_sequence_length"  /* ≤ max_seq - 1 */
#define EB_IR_DIM_TOTAL "total_sequence_length" /* ≤ max_seq */

/**
 * Builds a graph from a parsed model (borrowed during load: nodes keep `src` pointers into it
 * until eb_graph_forget_source). Constants are decoded into owned buffers; dynamic input dims
 * are resolved (batch → 1, H/W of a 4-D input → imgsz); dims named EB_IR_DIM_SEQ, _PAST or
 * _TOTAL make the graph dynamic (eb_graph.dynamic), bounded by `max_seq` (0 = the model's
 * metadata edgebench.llm.ctx). Every allocation goes through `alloc`
 * (borrowed; NULL = system), counted by g->ca. External-data tensors are read from files
 * relative to `base_dir` (NULL: external data is refused). Errors: EB_ERR_FORMAT (dangling names,
 * bad tensors), EB_ERR_UNSUPPORTED (op, dtype, domain, external data), EB_ERR_NOMEM. Caller owns
 * `*graph_out` (eb_graph_destroy).
 */
EB_NODISCARD enum eb_status eb_graph_import(const struct eb_onnx_model *m, const char *what,
                                            int imgsz, int64_t max_seq,
                                            const struct eb_allocator *alloc, const char *base_dir,
                                            struct eb_graph **graph_out, struct eb_diag *diag);
/**
 * Shape inference and checks of every node in order, constant folding (when `passes` has
 * EB_ENGINE_PASS_CONST_FOLD), dead-node elimination (EB_ENGINE_PASS_DCE); unused constants are
 * freed. Errors: EB_ERR_UNSUPPORTED naming node/op/opset, EB_ERR_FORMAT, EB_ERR_LIMIT, NOMEM.
 */
EB_NODISCARD enum eb_status eb_graph_run_passes(struct eb_graph *g, uint32_t passes,
                                                enum eb_engine_qdq qdq, struct eb_diag *diag);
/**
 * --qdq int8 (passes_qdq.c), run after folding and before fusion: rewrites
 * DequantizeLinear(x_q) → Conv(DequantizeLinear(w_q const)) → QuantizeLinear chains into integer
 * convolutions (int8/uint8 inputs, int32 accumulation, requantised output). Chains it cannot
 * rewrite stay fake-quant float.
 */
EB_NODISCARD enum eb_status eb_graph__qdq_int8(struct eb_graph *g, struct eb_diag *diag);
/**
 * --qdq strip (passes_qdq.c), run after folding: every QuantizeLinear → DequantizeLinear pair on
 * a float activation is bypassed (the DequantizeLinear's readers read the QuantizeLinear's
 * input), leaving the pair to dead-node elimination. A pair whose output is a graph output
 * stays. Weights (folded DequantizeLinear of constants) keep their quantised values.
 */
EB_NODISCARD enum eb_status eb_graph__qdq_strip(struct eb_graph *g, struct eb_diag *diag);
/**
 * The fusion pass (passes_fuse.c), run by eb_graph_run_passes after shape inference and folding,
 * before dead-node elimination: Conv + Sigmoid·Mul → Conv with a SiLU epilogue, Conv +
 * activation, Conv + Add (residual), Conv + QuantizeLinear→DequantizeLinear (fake quantisation)
 * and the DFL head. Absorbed nodes are marked dead; the Conv takes over their output value.
 */
EB_NODISCARD enum eb_status eb_graph__fuse(struct eb_graph *g, struct eb_diag *diag);
/**
 * The layout pass (passes_layout.c), run by the engine after the other passes when its ISA has
 * channel-blocked kernels (cb = their CB) and EB_ENGINE_PASS_LAYOUT is set: marks the float
 * activations that flow only between nodes able to read and write NCHWc — float Convs with a
 * blocked plan, Concat and Split on channels, stride-1 MaxPool, integer-factor nearest Resize,
 * same-shape Add/Mul — as blocked (eb_ir_value.blocked = cb), so that consecutive convs skip the
 * layout conversions. Graph inputs and outputs, constants and tensors whose channels are not a
 * multiple of cb stay NCHW. Sets *n_blocked_out to the number of values marked.
 */
void eb_graph__layout(struct eb_graph *g, enum eb_cpu_isa isa, int cb, size_t *n_blocked_out);
/** Drops the pointers into the ONNX model (call before destroying it). */
void eb_graph_forget_source(struct eb_graph *g);
/** Frees everything; accepts NULL and half-built graphs. */
void eb_graph_destroy(struct eb_graph *g);

/** Value id of `name`, -1 when unknown. */
int eb_graph_find_value(const struct eb_graph *g, const char *name);

/**
 * Decodes an ONNX tensor (raw_data or typed fields) into a new buffer from `alloc` holding
 * numel elements of `dt`. EB_ERR_FORMAT for malformed/short data, EB_ERR_UNSUPPORTED for
 * external data or a dtype the engine does not hold, EB_ERR_NOMEM. Caller owns `*data_out`.
 */
EB_NODISCARD enum eb_status eb_ir_tensor_decode(const struct eb_onnx_tensor *t,
                                                const struct eb_allocator *alloc,
                                                enum eb_dtype *dt_out, void **data_out);
/** Engine dtype of an ONNX dtype; EB_DTYPE_UNKNOWN for those the engine does not hold. */
enum eb_dtype eb_ir_dtype_from_onnx(int32_t onnx_dtype);

/** Why eb_ir_shape_check refuses a shape. */
enum eb_ir_shape_fault {
    EB_IR_SHAPE_OK,
    EB_IR_SHAPE_RANK,     /* rank outside [0, EB_MAX_RANK] */
    EB_IR_SHAPE_NEGATIVE, /* dimension *dim_out is negative */
    EB_IR_SHAPE_TOO_LARGE /* the extent times the element size exceeds EB_IR_MAX_TENSOR_BYTES */
};

/**
 * Checks a shape for a value of type `dt`: the rank, every dim ≥ 0, and the extent (the dims
 * multiplied, zeros skipped) times the element size within EB_IR_MAX_TENSOR_BYTES. Skipping
 * zeros keeps an empty value from carrying huge dims, so any product of one value's dims (outer
 * and inner sizes, strides, byte counts) fits int64. On EB_IR_SHAPE_OK *numel_out is the element
 * count; otherwise *dim_out is the offending dim (-1 for the rank).
 */
enum eb_ir_shape_fault eb_ir_shape_check(enum eb_dtype dt, int rank, const int64_t *shape,
                                         int64_t *numel_out, int *dim_out);

/**
 * Sets a value's dtype and shape (copied) after eb_ir_shape_check. EB_ERR_UNSUPPORTED for the
 * rank, EB_ERR_FORMAT for a negative dim, EB_ERR_LIMIT for the size (message names the value).
 */
EB_NODISCARD enum eb_status eb_ir_value_set(struct eb_graph *g, struct eb_ir_value *v,
                                            enum eb_dtype dt, int rank, const int64_t *shape,
                                            struct eb_diag *diag);

/**
 * 1 when every output of `n` has zero elements (a dimension of 0): there is nothing to compute,
 * and a kernel would only loop over the other dimensions (4 billion outer iterations over an
 * empty inner one), so the executors skip the node. 0 for a node without outputs.
 */
int eb_ir_node_writes_nothing(const struct eb_graph *g, const struct eb_ir_node *n);

/** For tests: allocations an engine has made so far (implemented in engine.c). */
uint64_t eb_engine__n_allocs(const struct eb_engine *e);

#endif
