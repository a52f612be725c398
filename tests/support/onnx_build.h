/*
 * Helpers for tests that hand-build ONNX models with engine/onnx/onnx_wire.h (in the
 * eb_test_support library; a test that uses them links the engine, as every unit test does).
 */
#ifndef EB_TEST_ONNX_BUILD_H
#define EB_TEST_ONNX_BUILD_H

#include <stdint.h>

#include "engine/onnx/onnx_wire.h"

/**
 * Appends a ValueInfoProto (graph input: field 11, output: 12) of a tensor of ONNX type
 * `elem_type` (1 float) named `name` to `g`; `rank` dims from `dims`, or no shape when rank < 0.
 */
void eb_test_put_value_info(struct eb_pb_buf *g, uint32_t field, const char *name, int elem_type,
                            int rank, const int64_t *dims);

/** Appends an AttributeProto of type INT (or STRING) named `name` to NodeProto `node`. */
void eb_test_put_attr_int(struct eb_pb_buf *node, const char *name, int64_t v);
void eb_test_put_attr_str(struct eb_pb_buf *node, const char *name, const char *v);

#endif
