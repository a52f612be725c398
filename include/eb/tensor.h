/*
 * Tensor descriptions shared by backends and the harness. A tensor view does not own its data
 * unless the function that produced it says so.
 */
#ifndef EB_TENSOR_H
#define EB_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#define EB_MAX_RANK 8

enum eb_dtype {
    EB_DTYPE_UNKNOWN = 0,
    EB_DTYPE_F32,
    EB_DTYPE_F16,
    EB_DTYPE_F64,
    EB_DTYPE_U8,
    EB_DTYPE_I8,
    EB_DTYPE_I32,
    EB_DTYPE_I64,
    EB_DTYPE_BOOL,
};

struct eb_tensor {
    enum eb_dtype dtype;
    int rank;
    int64_t shape[EB_MAX_RANK]; /* -1 for a dimension not known until run time */
    void *data;                 /* borrowed */
};

/** Size in bytes of one element; 0 for EB_DTYPE_UNKNOWN. */
size_t eb_dtype_size(enum eb_dtype dt);
/** "float32", "float16", "uint8", ...; never NULL. */
const char *eb_dtype_name(enum eb_dtype dt);
/** Number of elements (product of shape); 0 when any dimension is unknown or negative. */
int64_t eb_tensor_numel(const struct eb_tensor *t);
/** Writes a shape as "[1,3,640,640]" into buf (always NUL-terminated). */
void eb_shape_format(const int64_t *shape, int rank, char *buf, size_t buf_size);

#endif
