/*
 * Helpers for tests that hand-build ONNX models with engine/onnx/onnx_wire.h (in the
 * eb_test_support library; a test that uses them links the engine, as every unit test does).
 */
#ifndef EB_TEST_ONNX_BUILD_H
#define EB_TEST_ONNX_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "engine/onnx/onnx_wire.h"

/**
 * Appends a ValueInfoProto (graph input: field 11, output: 12) of a tensor of ONNX type
 * `elem_type` (1 float) named `name` to `g`; `rank` dims from `dims`, or no shape when rank < 0.
 */
void eb_test_put_value_info(struct eb_pb_buf *g, uint32_t field, const char *name, int elem_type,
                            int rank, const int64_t *dims);

/**
 * The same with symbolic dims: dim i is named `dim_names[i]` (a dim_param, e.g.
 * "sequence_length") where that entry is not NULL, else the number dims[i]; `dim_names` NULL =
 * every dim a number.
 */
void eb_test_put_value_info_named(struct eb_pb_buf *g, uint32_t field, const char *name,
                                  int elem_type, int rank, const int64_t *dims,
                                  const char *const *dim_names);

/**
 * Names graph `g` `graph_name` and wraps it in a ModelProto (ir_version 8, the default domain at
 * `opset`); frees `g`. Returns the model's bytes (caller frees; length in *len_out), NULL when a
 * buffer failed.
 */
uint8_t *eb_test_model_finish(struct eb_pb_buf *g, const char *graph_name, int opset,
                              size_t *len_out);

/** Appends an AttributeProto of type INT (or STRING) named `name` to NodeProto `node`. */
void eb_test_put_attr_int(struct eb_pb_buf *node, const char *name, int64_t v);
void eb_test_put_attr_str(struct eb_pb_buf *node, const char *name, const char *v);

/** Appends an AttributeProto of type INTS named `name` (`n` values) to NodeProto `node`. */
void eb_test_put_attr_ints(struct eb_pb_buf *node, const char *name, const int64_t *v, int n);

/*
 * Detector-shaped models for head recognition and `edgebench run` (tests/unit/test_recognition.c,
 * tests/support/mkonnx.c): each output comes from the image through real layers, so that both
 * backends run them and the graph shows what ends each output:
 *
 *   images [1,3,H,W] (-> Resize cubic) -> Conv(3 -> C, kernel = stride = k) -> Reshape [1,C,G]
 *   -> Slice the first Q cells -> (Transpose to [1,Q,C]) -> end op -> output
 */
struct eb_test_head_out {
    const char *name;
    int channels;    /* C */
    int cells;       /* Q <= G = (H/k) * (W/k) */
    int rows_first;  /* 1: [1,Q,C] (Transpose), 0: [1,C,Q] */
    const char *end; /* NULL (the layer), "Sigmoid", "Softmax", "decode" (Sigmoid, Mul, Add),
                        "scale" (Mul only) */
};

struct eb_test_head_model {
    int in_w, in_h, kernel;
    int resize_cubic; /* a Resize mode 'cubic' (scale 1) before the Conv: native refuses it */
    int n_outputs;
    struct eb_test_head_out out[4];
    int n_names; /* > 0: Ultralytics metadata (stride, task, names "{0: 'c0', ...}") */
};

/** The named preset models ("detr", "detr-sigmoid", "end2end", "v5", "v5-raw", "unknown",
 *  "native-refused"); 0 when `name` is none of them. Writes `*m`. */
int eb_test_head_model_preset(const char *name, struct eb_test_head_model *m);

/** The ONNX bytes of `m` (malloc'd, caller frees); NULL on out of memory. */
uint8_t *eb_test_head_model_build(const struct eb_test_head_model *m, size_t *len_out);

#endif
