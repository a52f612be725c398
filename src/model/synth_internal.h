/*
 * Internals of eb_model_synth shared by its files (internal to src/model):
 *   synth_yolo.c   the YOLOv8 / YOLO11 architectures and their modules (graph + shadow evaluation)
 *   synth_calib.c  BatchNorm folding and the Detect head's class gain (calibration statistics)
 *   synth_llm.c    the Llama 3.2 / Qwen2.5 decoders (model/llm.h), written straight to a file
 *   synth_onnx.c   protobuf emission of ONNX tensors, attributes, nodes and the ModelProto
 * synth_eval.h holds the float32 reference ops of the shadow evaluation.
 */
#ifndef EB_MODEL_SYNTH_INTERNAL_H
#define EB_MODEL_SYNTH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/onnx/onnx_wire.h"
#include "model/model.h"

/* Capacity of every tensor / node name; names are bounded by construction. */
#define EB_SYNTH__NAME_MAX 160

/*
 * An NCHW activation: its name and shape in the graph, its estimated second moment E[x^2] (the
 * scale of the raw seeded weights), and its value in the shadow evaluation: `d`, [c][eh][ew] at
 * the evaluation size (NULL where the evaluation is skipped).
 */
struct eb_synth__act {
    char name[EB_SYNTH__NAME_MAX];
    int c, h, w;
    double m2;
    float *d;
    int eh, ew;
};

/* ---- synth_calib.c ---- */

/**
 * Folds a BatchNorm into the conv of output y [c2][n] (raw weights w [c2][per], zero bias) whose
 * input is x (nx floats): the per-channel mean and std of y over the calibration tensor
 * normalise it, then gamma / beta give its new scale and shift; with gamma NULL (the head's last
 * nn.Conv2d) every channel gets scale `gain` and shift `shift` instead. Updates w, writes the
 * bias and applies the same affine map to y, so the evaluation goes on with what the graph
 * computes. Returns 0, or -1 when out of memory (nothing changed).
 */
EB_NODISCARD int eb_synth__fold_bn(float *w, size_t per, float *bias, const float *gamma,
                                   const float *beta, int c2, float *y, size_t n, const float *x,
                                   size_t nx, double gain, double shift);
/**
 * The class gain of the Detect head from its first pass: `cls` are the three levels' normalised
 * class logits, `bias` their class biases. 1.0 when a level was not evaluated; sets *oom_out
 * (and returns 1.0) when out of memory.
 */
double eb_synth__pick_class_gain(const struct eb_synth__act *cls, const float *bias, int nc,
                                 int *oom_out);
/** The square size of the calibration image for `o` (at most o->imgsz). */
int eb_synth__calib_size(const struct eb_synth_options *o);

/* ---- synth_onnx.c ---- */

/* snprintf that truncates silently: names are bounded by EB_SYNTH__NAME_MAX by construction. */
void eb_synth__fmt(char *out, size_t cap, const char *fmt, ...) EB_PRINTF(3, 4);
/** The next value of the xorshift64* generator whose (non-zero) state is `*state`. */
uint64_t eb_synth__rng_next(uint64_t *state);

/** Appends a float TensorProto (GraphProto field 5) to `inits`; 0, or -1 when out of memory. */
EB_NODISCARD int eb_synth__init_f32(struct eb_pb_buf *inits, const char *name, const int64_t *dims,
                                    int rank, const float *data);
/** Appends a rank-1 int64 TensorProto of n <= 8 values to `inits`. */
/* An initializer of ONNX `dtype` whose `nbytes` of raw_data (little-endian) are copied. */
void eb_synth__init_raw(struct eb_pb_buf *inits, const char *name, int dtype, const int64_t *dims,
                        int rank, const void *raw, size_t nbytes);
void eb_synth__init_i64(struct eb_pb_buf *inits, const char *name, const int64_t *data, int64_t n);
/** AttributeProto (NodeProto field 5) of type INT, FLOAT, STRING or INTS. */
void eb_synth__attr_int(struct eb_pb_buf *a, const char *name, int64_t v);
void eb_synth__attr_float(struct eb_pb_buf *a, const char *name, float v);
void eb_synth__attr_str(struct eb_pb_buf *a, const char *name, const char *v);
void eb_synth__attr_ints(struct eb_pb_buf *a, const char *name, const int64_t *v, int n);
/** Appends a NodeProto to `nodes`. `attrs` (may be NULL) holds AttributeProto fields. */
void eb_synth__node(struct eb_pb_buf *nodes, const char *op, const char *name,
                    const char *const *ins, int n_in, const char *const *outs, int n_out,
                    const struct eb_pb_buf *attrs);
/** StringStringEntryProto `key`=`value` as field 14 (metadata_props) of a ModelProto `m`. */
void eb_synth__meta(struct eb_pb_buf *m, const char *key, const char *value);
/**
 * ValueInfoProto (GraphProto field `field`: 11 input, 12 output) of a tensor of ONNX `elem_type`;
 * dimension i is the symbol params[i] where `params` and params[i] are not NULL, else dims[i].
 */
void eb_synth__value_info(struct eb_pb_buf *g, uint32_t field, const char *name, int elem_type,
                          const int64_t *dims, const char *const *params, int rank);
/**
 * Writes the ModelProto of `o` into `model`: ir_version 8, opset 17, the GraphProto "main_graph"
 * from `nodes` and `inits` (field 1 and 5 contents) with the images / output0 value infos, and
 * the Ultralytics metadata. Returns 0, or -1 when the class names could not be allocated;
 * other allocation failures leave eb_pb_buf_error(model) set.
 */
EB_NODISCARD int eb_synth__model_proto(struct eb_pb_buf *model, const struct eb_pb_buf *nodes,
                                       const struct eb_pb_buf *inits,
                                       const struct eb_synth_options *o);

#endif
