/*
 * ONNX model files without a runtime: the YOLO architecture synthesizer (the embedded default
 * model) and `edgebench model info`.
 */
#ifndef EB_MODEL_H
#define EB_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "eb/diag.h"
#include "yolo/profile.h"

enum eb_synth_arch { EB_SYNTH_YOLOV8 = 0, EB_SYNTH_YOLO11 };

struct eb_synth_options {
    enum eb_synth_arch arch;
    char scale;      /* 'n','s','m','l','x' */
    int imgsz;       /* multiple of 32, 32..4096 */
    int num_classes; /* 80 */
    uint32_t seed;
};

/**
 * Builds the ONNX bytes of the architecture (Ultralytics export equivalent: same op types,
 * shapes, parameter count and FLOPs; BatchNorm folded; seeded weights; class-score bias so that
 * few boxes pass 0.25). Caller owns `*bytes_out` (free()).
 */
EB_NODISCARD enum eb_status eb_model_synth(const struct eb_synth_options *opts, uint8_t **bytes_out,
                                           size_t *len_out, struct eb_diag *diag);
/** eb_model_synth + write to `path`. */
EB_NODISCARD enum eb_status eb_model_synth_file(const struct eb_synth_options *opts,
                                                const char *path, struct eb_diag *diag);

#define EB_MODEL_MAX_OPS  128
#define EB_MODEL_MAX_IO   8
#define EB_MODEL_MAX_META 32
#define EB_MODEL_MAX_FILE (UINT32_C(1) << 31) /* files above 2 GiB are refused */

struct eb_model_op_count {
    char name[48];
    size_t count;
};

struct eb_model_io {
    char name[128];
    int elem_type;    /* ONNX TensorProto.DataType (1 = float32), 0 when unknown */
    int rank;         /* -1 when unknown */
    int64_t shape[8]; /* -1 for a symbolic dimension */
};

/**
 * The precision a model's graph computes in, read from its heavy ops (Conv, ConvTranspose,
 * MatMul, Gemm and their integer forms), each weighed by its FLOPs.
 */
enum eb_model_precision {
    EB_MODEL_PRECISION_FP32 = 0,     /* float ops on float32 weights */
    EB_MODEL_PRECISION_FP16,         /* float ops on float16 weights/initializers */
    EB_MODEL_PRECISION_INT8_DYNAMIC, /* ConvInteger/MatMulInteger after DynamicQuantizeLinear
                                        (ONNX Runtime's quantize_dynamic) */
    EB_MODEL_PRECISION_INT8_QDQ,     /* float ops between DequantizeLinear/QuantizeLinear: static
                                        quantisation in the QDQ format */
    EB_MODEL_PRECISION_INT8_STATIC,  /* QLinearConv/QLinearMatMul, or integer convs with fixed
                                        activation scales (the QOperator format) */
    EB_MODEL_PRECISION_MIXED,        /* no kind above holds 90% of the heavy ops' FLOPs */
    EB_MODEL_PRECISION_COUNT
};

/** "fp32", "fp16", "int8-dynamic", "int8-qdq", "int8-static", "mixed"; static storage. */
const char *eb_model_precision_name(enum eb_model_precision p);
/** 1 for the three int8 kinds. */
int eb_model_precision_is_int8(enum eb_model_precision p);

struct eb_model_precision_info {
    enum eb_model_precision kind;
    size_t ops[EB_MODEL_PRECISION_MIXED];   /* heavy ops of each kind */
    double flops[EB_MODEL_PRECISION_MIXED]; /* their FLOPs (0 where shapes are unknown) */
    char detail[200]; /* e.g. "64 heavy ops: 63 int8-dynamic (99.9% of FLOPs), 1 fp32 (0.1% ...)" */
};

/** What `edgebench model info` prints. Plain data, no pointers; strings are truncated to fit. */
struct eb_model_summary {
    int64_t ir_version, opset;
    char producer[64]; /* producer_name and producer_version */
    size_t n_nodes;
    size_t n_op_types;
    struct eb_model_op_count ops[EB_MODEL_MAX_OPS]; /* sorted by count, descending */
    uint64_t n_params; /* elements of initializers consumed as weights (see model_info.c) */
    double flops;      /* Conv and MatMul: 2 x MACs, at the model's input size */
    struct eb_model_precision_info precision; /* read from the graph */
    int n_inputs, n_outputs;
    struct eb_model_io inputs[EB_MODEL_MAX_IO], outputs[EB_MODEL_MAX_IO];
    size_t n_meta;
    struct {
        char key[64];
        char value[2048];
    } meta[EB_MODEL_MAX_META];
};

/**
 * Reads an ONNX file and summarises it into `*out` (caller-owned; about 40 KB, so keep it off
 * small stacks). EB_ERR_IO when unreadable, EB_ERR_FORMAT for files that are not ONNX or break
 * the reader's limits (message names the file and the byte offset).
 */
EB_NODISCARD enum eb_status eb_model_summarize_file(const char *path, struct eb_model_summary *out,
                                                    struct eb_diag *diag);
/** Same from bytes (borrowed for the call only); messages name the model `what` (a path or
 * "embedded:yolov8n"). */
EB_NODISCARD enum eb_status eb_model_summarize(const uint8_t *bytes, size_t len, const char *what,
                                               struct eb_model_summary *out, struct eb_diag *diag);

/**
 * The precision of the model in `bytes` (borrowed for the call) as its graph says (what
 * eb_model_summarize puts in `precision`). `what` names the model in messages. EB_ERR_FORMAT for
 * bytes that are not ONNX, EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_model_precision_of(const uint8_t *bytes, size_t len,
                                                  const char *what,
                                                  struct eb_model_precision_info *out,
                                                  struct eb_diag *diag);

/**
 * Reads a whole file into a malloc'd buffer (caller owns `*bytes_out`, free()). EB_ERR_IO when
 * unreadable, EB_ERR_FORMAT above EB_MODEL_MAX_FILE bytes.
 */
EB_NODISCARD enum eb_status eb_model_read_file(const char *path, uint8_t **bytes_out,
                                               size_t *len_out, struct eb_diag *diag);

/** The native engine's memory plan of a model, as `model info` prints it (bytes). */
struct eb_model_plan {
    int height, width;      /* input size the plan was made for */
    uint64_t arena_bytes;   /* planned peak of intermediate tensors (one arena) */
    uint64_t scratch_bytes; /* kernels' run-time scratch */
    uint64_t weight_bytes;  /* constants after folding */
    uint64_t packed_bytes;  /* weights re-laid out for the fast kernels */
    uint64_t total_bytes;   /* arena + scratch + weights + packed */
    uint64_t naive_bytes;   /* sum of every intermediate tensor (no planning) */
};

/**
 * Plans the memory of the model in `bytes` (borrowed for the call) with the native engine at
 * square input size `imgsz` (0 = the model's own, else 640). Fills `*plan_out` on EB_OK; on
 * failure (e.g. EB_ERR_UNSUPPORTED) `diag` says why. `what` names the model in messages.
 * The model component does not link the engine, so the caller passes this in (see
 * eb_harness_model_plan).
 */
typedef enum eb_status (*eb_model_plan_fn)(const uint8_t *bytes, size_t len, const char *what,
                                           int imgsz, struct eb_model_plan *plan_out,
                                           struct eb_diag *diag);

/**
 * The 80 COCO class names in Ultralytics order (index = class id), the names the synthesized
 * models carry; `*n_out` = 80. Static storage, never NULL.
 */
const char *const *eb_model_coco_names(size_t *n_out);

/**
 * `edgebench model synth|info ...`: returns the process exit code. `plan` (may be NULL: the
 * plan line then says it is not available) is used by `model info` for the planned memory.
 */
int eb_model_main(int argc, char **argv, eb_model_plan_fn plan, FILE *out, FILE *err);

/**
 * The graph facts head recognition reads (yolo/profile.h) from ONNX `bytes` (borrowed for the
 * call): outputs (names, declared shapes: -1 where symbolic; what ends each), the input size
 * where static, the Ultralytics metadata flags. The caller fills n_class_names and replaces
 * shapes with the resolved ones when it ran the model. `what` names the model in messages.
 */
EB_NODISCARD enum eb_status eb_model_head_graph(const uint8_t *bytes, size_t len, const char *what,
                                                struct eb_head_graph *g, struct eb_diag *diag);

#endif
