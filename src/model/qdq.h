/*
 * QDQ ONNX files from float ones and back, at the protobuf level (everything the rewrite does not
 * touch is copied byte for byte): `edgebench quantize` and `edgebench model dequantize`.
 *
 * Quantisation (the QDQ format, which ONNX Runtime, TensorRT and the native engine read): every
 * Conv not kept in float gets int8 weights, symmetric (zero point 0, range ±127), per output
 * channel (axis 0) or per tensor; an int32 bias of scale input_scale × weight_scale; and a
 * QuantizeLinear → DequantizeLinear pair (uint8, asymmetric, per tensor) on its float input,
 * whose readers all read the DequantizeLinear's output: TensorRT's placement, where the Conv,
 * its bias and activation run as one int8 layer requantised at the next pair. With
 * `conv_outputs`, the Conv's output (before its activation) gets a pair as well, as ONNX
 * Runtime's quantize_static places them: the DQ → Conv → Q chains integer CPU kernels run end
 * to end, at some accuracy (measured in docs/quantization.md). Per-channel needs opset 13: an older model's opset is
 * raised to 13, rewriting the ops whose form changed (Split's `split`, Squeeze/Unsqueeze's and
 * ReduceSum's `axes` become inputs; Softmax, LogSoftmax and Hardmax get their axis explicitly,
 * checked against the observed shape; Resize's empty roi/scales tensors become omitted inputs,
 * opset 10's (X, scales) gets its roi slot); a model with any other op whose semantics changed is
 * refused, naming the op.
 *
 *     struct eb_qdq_plan plan;
 *     eb_qdq_plan_build(model, "auto", 1, &plan, &diag);   which convs, which tensors
 *     ... calibration fills plan.acts[i].scale/zero_point/shape ...
 *     eb_qdq_write(bytes, len, &plan, meta, n_meta, &out, &out_len, &diag);
 *     eb_qdq_plan_fini(&plan);
 */
#ifndef EB_MODEL_QDQ_H
#define EB_MODEL_QDQ_H

#include <stddef.h>
#include <stdint.h>

#include "eb/diag.h"
#include "engine/onnx/onnx_model.h"

/* Per node of the plan. */
enum {
    EB_QDQ_NODE_OTHER = 0, /* not a quantisable Conv */
    EB_QDQ_NODE_INT8,      /* a Conv quantised to int8 */
    EB_QDQ_NODE_FLOAT,     /* a Conv kept in float (--keep_float, or the default set) */
};

/** An activation tensor that gets a QuantizeLinear → DequantizeLinear pair. */
struct eb_qdq_act {
    const char *name; /* borrowed from the model */
    float scale;      /* filled by calibration */
    uint8_t zero_point;
    int seen;                   /* calibration saw it */
    int dropped;                /* eb_qdq_plan_drop: no pair is written */
    double sqnr_db;             /* signal-to-quantisation-noise ratio on the calibration images */
    double min_channel_sqnr_db; /* the same, of its worst channel */
    int rank;                   /* observed shape (calibration), -1 unknown */
    int64_t shape[EB_ONNX_MAX_RANK];
};

/** The shape calibration saw of a tensor that is not quantised (Softmax inputs). */
struct eb_qdq_shape {
    const char *name; /* borrowed */
    int rank;         /* -1 unknown */
    int64_t shape[EB_ONNX_MAX_RANK];
};

struct eb_qdq_plan {
    const struct eb_onnx_model *m; /* borrowed */
    unsigned char *node;           /* m->n_nodes EB_QDQ_NODE_* (owned) */
    struct eb_qdq_act *acts;       /* sorted by name (owned) */
    size_t n_acts;
    struct eb_qdq_shape *shapes; /* inputs of Softmax-like nodes when the opset is raised */
    size_t n_shapes;
    int per_channel;
    int64_t opset_out; /* the written model's opset */
    size_t n_int8, n_float;
};

/**
 * Chooses the convolutions and tensors of `m` (borrowed; must outlive the plan). `keep_float`:
 * comma-separated node names (or a node's first output name) kept in float; the word "auto" adds
 * the default set (the convolutions nearest each graph output, i.e. the head's last layer of
 * every branch, and the DFL's fixed convolution after its Softmax), "none" keeps none; NULL =
 * "auto". `conv_outputs`: each int8 Conv's output (before its activation) gets a pair too.
 * EB_ERR_INVALID_ARG for a name that is no node or no Conv; EB_ERR_UNSUPPORTED for a
 * model with nothing to quantise, external data, or (per-channel) an op whose form changed
 * before opset 13. Release with eb_qdq_plan_fini.
 */
EB_NODISCARD enum eb_status eb_qdq_plan_build(const struct eb_onnx_model *m, const char *keep_float,
                                              int per_channel, int conv_outputs,
                                              struct eb_qdq_plan *plan, struct eb_diag *diag);
void eb_qdq_plan_fini(struct eb_qdq_plan *plan);
/**
 * Leaves activation i unquantised (a tensor the calibration found too coarse at 8 bits): no
 * pair is written for it, and the int8 convolutions that read it as their data input are kept
 * in float. Returns how many convolutions that moved to float.
 */
size_t eb_qdq_plan_drop(struct eb_qdq_plan *plan, size_t i);
/** Index of activation `name` in plan->acts (dropped ones included), or -1. */
long eb_qdq_plan_act(const struct eb_qdq_plan *plan, const char *name);
/** Index of shape `name` in plan->shapes, or -1. */
long eb_qdq_plan_shape(const struct eb_qdq_plan *plan, const char *name);

/** A metadata_props entry to set (replacing one of the same key). */
struct eb_qdq_meta {
    const char *key, *value;
};

/**
 * Writes the QDQ model of `bytes` (the file `plan->m` was parsed from) with every activation's
 * scale filled, plus `meta`. Caller frees `*out` (free()).
 */
EB_NODISCARD enum eb_status eb_qdq_write(const uint8_t *bytes, size_t len,
                                         const struct eb_qdq_plan *plan,
                                         const struct eb_qdq_meta *meta, size_t n_meta,
                                         uint8_t **out, size_t *out_len, struct eb_diag *diag);

/**
 * The float twin of a QDQ model: every DequantizeLinear of a constant becomes a float
 * initializer ((q - zero_point) × scale, per tensor or along its axis), every activation
 * QuantizeLinear → DequantizeLinear pair is removed (its readers read the float tensor again).
 * `*n_folded` = Q/DQ nodes removed. EB_ERR_UNSUPPORTED when the model has no Q/DQ to fold.
 * Caller frees `*out`.
 */
EB_NODISCARD enum eb_status eb_qdq_dequantize(const uint8_t *bytes, size_t len, const char *what,
                                              const struct eb_qdq_meta *meta, size_t n_meta,
                                              uint8_t **out, size_t *out_len, size_t *n_folded,
                                              struct eb_diag *diag);

#endif
