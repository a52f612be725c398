#include <stdio.h>

#include "eb/tensor.h"

size_t eb_dtype_size(enum eb_dtype dt)
{
    switch (dt) {
    case EB_DTYPE_F32: return 4;
    case EB_DTYPE_F16: return 2;
    case EB_DTYPE_F64: return 8;
    case EB_DTYPE_U8: return 1;
    case EB_DTYPE_I8: return 1;
    case EB_DTYPE_I32: return 4;
    case EB_DTYPE_I64: return 8;
    case EB_DTYPE_BOOL: return 1;
    case EB_DTYPE_UNKNOWN: break;
    }
    return 0;
}

const char *eb_dtype_name(enum eb_dtype dt)
{
    switch (dt) {
    case EB_DTYPE_F32: return "float32";
    case EB_DTYPE_F16: return "float16";
    case EB_DTYPE_F64: return "float64";
    case EB_DTYPE_U8: return "uint8";
    case EB_DTYPE_I8: return "int8";
    case EB_DTYPE_I32: return "int32";
    case EB_DTYPE_I64: return "int64";
    case EB_DTYPE_BOOL: return "bool";
    case EB_DTYPE_UNKNOWN: break;
    }
    return "unknown";
}

int64_t eb_tensor_numel(const struct eb_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->shape[i] < 0)
            return 0;
        n *= t->shape[i];
    }
    return n;
}

void eb_shape_format(const int64_t *shape, int rank, char *buf, size_t buf_size)
{
    size_t off = 0;
    if (buf_size == 0)
        return;
    buf[0] = '\0';
    off += (size_t)snprintf(buf + off, buf_size - off, "[");
    for (int i = 0; i < rank && off < buf_size; i++)
        off +=
            (size_t)snprintf(buf + off, buf_size - off, i ? ",%lld" : "%lld", (long long)shape[i]);
    if (off < buf_size)
        snprintf(buf + off, buf_size - off, "]");
}
