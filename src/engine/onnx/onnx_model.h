/*
 * A read-only, in-memory description of an ONNX ModelProto: graph nodes with attributes,
 * initializers (headers + borrowed data), graph inputs/outputs/value_info, opset, producer and
 * metadata_props. Built by a bounds-checked parser with hard limits against hostile files
 * (node count, rank, dimension sizes, string lengths, tensor bytes vs file size), all checked
 * before anything is allocated for them.
 *
 *     struct eb_onnx_model *m = NULL;
 *     if (eb_onnx_model_parse(bytes, len, "yolov8n.onnx", &m, &diag) != EB_OK) ...;
 *     for (size_t i = 0; i < m->n_nodes; i++) puts(m->nodes[i].op_type);
 *     eb_onnx_model_destroy(m);
 *
 * Lifetime: the model borrows `bytes` (tensor data points into it); keep the bytes alive until
 * eb_onnx_model_destroy. Strings are copied (NUL-terminated) into the model's own storage.
 * Subgraphs (If/Loop bodies) are not described; their attributes are kept with type only.
 */
#ifndef EB_ONNX_MODEL_H
#define EB_ONNX_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "eb/alloc.h"
#include "eb/diag.h"

#define EB_ONNX_MAX_RANK       8
#define EB_ONNX_MAX_NODES      100000u
#define EB_ONNX_MAX_TENSORS    100000u /* initializers */
#define EB_ONNX_MAX_VALUES     200000u /* inputs + outputs + value_info */
#define EB_ONNX_MAX_NODE_IO    1024u   /* inputs or outputs of one node */
#define EB_ONNX_MAX_ATTRS      64u     /* attributes of one node */
#define EB_ONNX_MAX_ATTR_ELEMS 65536u  /* ints/floats of one attribute */
#define EB_ONNX_MAX_NAME       4096u   /* bytes of a name or short string */
#define EB_ONNX_MAX_META       256u    /* metadata_props entries */
#define EB_ONNX_MAX_META_VALUE (1u << 20)
#define EB_ONNX_MAX_DIM        (INT64_C(1) << 31)
#define EB_ONNX_MAX_EXT_NUMEL  (UINT64_C(1) << 36) /* elements of one external-data tensor */

/** ONNX TensorProto.DataType values used here. */
enum eb_onnx_dtype {
    EB_ONNX_FLOAT = 1,
    EB_ONNX_UINT8 = 2,
    EB_ONNX_INT8 = 3,
    EB_ONNX_UINT16 = 4,
    EB_ONNX_INT16 = 5,
    EB_ONNX_INT32 = 6,
    EB_ONNX_INT64 = 7,
    EB_ONNX_STRING = 8,
    EB_ONNX_BOOL = 9,
    EB_ONNX_FLOAT16 = 10,
    EB_ONNX_DOUBLE = 11,
    EB_ONNX_UINT32 = 12,
    EB_ONNX_UINT64 = 13,
    EB_ONNX_BFLOAT16 = 16,
};

/** AttributeProto.AttributeType values. */
enum eb_onnx_attr_type {
    EB_ONNX_ATTR_UNDEFINED = 0,
    EB_ONNX_ATTR_FLOAT = 1,
    EB_ONNX_ATTR_INT = 2,
    EB_ONNX_ATTR_STRING = 3,
    EB_ONNX_ATTR_TENSOR = 4,
    EB_ONNX_ATTR_GRAPH = 5,
    EB_ONNX_ATTR_FLOATS = 6,
    EB_ONNX_ATTR_INTS = 7,
    EB_ONNX_ATTR_STRINGS = 8,
};

struct eb_onnx_tensor {
    const char *name; /* owned by the model; "" when absent */
    int32_t dtype;    /* enum eb_onnx_dtype */
    int rank;
    int64_t dims[EB_ONNX_MAX_RANK];
    uint64_t numel; /* product of dims (1 for a scalar) */
    int external;   /* data_location = EXTERNAL: no data here */
    /* external_data entries (only when `external`): file relative to the model's folder, as
     * written in the file (unchecked), and the byte range; ext_length -1 = to the end. */
    const char *ext_location; /* owned; "" when absent */
    uint64_t ext_offset;
    int64_t ext_length;
    const uint8_t *msg; /* the TensorProto bytes (borrowed from the file) */
    size_t msg_len;
    const uint8_t *origin; /* start of the file, for offsets */
};

struct eb_onnx_attr {
    const char *name; /* owned by the model */
    int type;         /* enum eb_onnx_attr_type */
    int64_t i;
    float f;
    const char *s;       /* STRING (NUL-terminated, owned), else NULL */
    const int64_t *ints; /* INTS (owned), n_ints entries; never NULL */
    size_t n_ints;
    const float *floats; /* FLOATS (owned), n_floats entries; never NULL */
    size_t n_floats;
    const struct eb_onnx_tensor *t; /* TENSOR (owned), else NULL */
};

struct eb_onnx_node {
    const char *op_type, *name, *domain; /* owned; "" when absent */
    const char **inputs;                 /* n_inputs names; "" = omitted optional input */
    size_t n_inputs;
    const char **outputs;
    size_t n_outputs;
    const struct eb_onnx_attr *attrs;
    size_t n_attrs;
};

struct eb_onnx_value {
    const char *name;
    int32_t elem_type;                        /* 0 when unknown */
    int rank;                                 /* -1 when the shape is unknown */
    int64_t dims[EB_ONNX_MAX_RANK];           /* -1 for a symbolic or missing dimension */
    const char *dim_params[EB_ONNX_MAX_RANK]; /* owned: a symbolic dim's name
                                                 ("sequence_length"); NULL when none */
};

struct eb_onnx_meta {
    const char *key, *value; /* owned */
};

struct eb_onnx_model {
    int64_t ir_version;
    int64_t opset; /* version of the default ("" or "ai.onnx") domain; 0 if absent */
    const char *producer_name, *producer_version, *graph_name;
    size_t n_nodes, n_inits, n_inputs, n_outputs, n_value_info, n_meta;
    const struct eb_onnx_node *nodes;
    const struct eb_onnx_tensor *inits;
    const struct eb_onnx_value *inputs, *outputs, *value_info;
    const struct eb_onnx_meta *meta;
    size_t file_len;
    struct eb_allocator alloc;   /* copy of the parse allocator (ctx borrowed) */
    struct eb_onnx_arena *arena; /* private storage, from `alloc` */
};

/**
 * Parses ONNX bytes (borrowed; must outlive the model). `what` names the source in messages
 * (the file path). EB_ERR_FORMAT for truncated, malformed or over-limit input ("failed to read
 * model X: truncated at byte N; is it an ONNX file?"); EB_ERR_NOMEM. Every allocation goes
 * through `alloc` (its ctx is borrowed and must outlive the model; NULL = the system allocator),
 * and the parsed description may take at most 64 times the file size plus 1 MiB (EB_ERR_FORMAT
 * beyond). External-data tensors keep their external_data entries (ext_*); their data is not
 * read here. Caller owns `*model_out`.
 */
EB_NODISCARD enum eb_status eb_onnx_model_parse(const uint8_t *bytes, size_t len, const char *what,
                                                const struct eb_allocator *alloc,
                                                struct eb_onnx_model **model_out,
                                                struct eb_diag *diag);
/** Frees a model; accepts NULL. */
void eb_onnx_model_destroy(struct eb_onnx_model *m);

/** Attribute `name` of a node, or NULL. */
const struct eb_onnx_attr *eb_onnx_node_attr(const struct eb_onnx_node *n, const char *name);
/** Integer attribute or `def`. */
int64_t eb_onnx_node_attr_int(const struct eb_onnx_node *n, const char *name, int64_t def);

/**
 * Reads up to `max` elements of an integer tensor (INT64/INT32/INT8/UINT8/...) into `out`,
 * converted to int64. `*n_out` = elements read. EB_ERR_FORMAT when the data is malformed or
 * shorter than numel, EB_ERR_UNSUPPORTED for float/external data or numel > max.
 */
EB_NODISCARD enum eb_status eb_onnx_tensor_read_i64(const struct eb_onnx_tensor *t, int64_t *out,
                                                    size_t max, size_t *n_out);
/** Same for FLOAT/DOUBLE tensors into floats. */
EB_NODISCARD enum eb_status eb_onnx_tensor_read_f32(const struct eb_onnx_tensor *t, float *out,
                                                    size_t max, size_t *n_out);
/** Bytes per element of a dtype, 0 when variable or unknown. */
size_t eb_onnx_dtype_size(int32_t dtype);
/** Short name of a dtype ("float32", "int8", ...); never NULL. */
const char *eb_onnx_dtype_name(int32_t dtype);

#endif
