/*
 * ONNX TensorProto data → owned, typed buffers: raw_data (little-endian) or the typed repeated
 * fields (float_data, int32_data, int64_data, double_data, uint64_data). Every count is checked
 * against the message length before anything is allocated.
 */
#include <string.h>

#include "engine/ir/graph.h"
#include "engine/onnx/onnx_wire.h"

enum eb_dtype eb_ir_dtype_from_onnx(int32_t d)
{
    switch (d) {
    case EB_ONNX_FLOAT: return EB_DTYPE_F32;
    case EB_ONNX_UINT8: return EB_DTYPE_U8;
    case EB_ONNX_INT8: return EB_DTYPE_I8;
    case EB_ONNX_INT32: return EB_DTYPE_I32;
    case EB_ONNX_INT64: return EB_DTYPE_I64;
    case EB_ONNX_BOOL: return EB_DTYPE_BOOL;
    case EB_ONNX_DOUBLE: return EB_DTYPE_F64;
    case EB_ONNX_FLOAT16: return EB_DTYPE_F16;
    default: return EB_DTYPE_UNKNOWN;
    }
}

static void store_int(void *data, enum eb_dtype dt, size_t i, uint64_t v)
{
    switch (dt) {
    case EB_DTYPE_U8:
    case EB_DTYPE_I8:
    case EB_DTYPE_BOOL: ((uint8_t *)data)[i] = (uint8_t)v; break;
    case EB_DTYPE_F16: ((uint16_t *)data)[i] = (uint16_t)v; break;
    case EB_DTYPE_I32: ((uint32_t *)data)[i] = (uint32_t)v; break;
    case EB_DTYPE_I64: ((uint64_t *)data)[i] = v; break;
    default: break;
    }
}

enum eb_status eb_ir_tensor_decode(const struct eb_onnx_tensor *t, const struct eb_allocator *alloc,
                                   enum eb_dtype *dt_out, void **data_out)
{
    enum eb_dtype dt = eb_ir_dtype_from_onnx(t->dtype);
    size_t es = eb_dtype_size(dt);
    struct eb_pb_reader r;
    struct eb_pb_field f;
    int have;
    enum eb_status st = EB_ERR_FORMAT;
    uint8_t *data = NULL;
    size_t n = 0;

    if (dt == EB_DTYPE_UNKNOWN || t->external)
        return EB_ERR_UNSUPPORTED;
    /* Each element takes at least one byte of the message in every encoding but packed bools in
     * raw_data (one byte too), so numel ≤ msg_len bounds the allocation by the file size. */
    if (t->numel > t->msg_len && t->numel > 0)
        return EB_ERR_FORMAT;
    data = alloc->alloc(alloc->ctx, t->numel * es + 1, 64);
    if (data == NULL)
        return EB_ERR_NOMEM;
    eb_pb_reader_init(&r, t->origin, t->msg, t->msg_len);
    for (;;) {
        if (eb_pb_next(&r, &f, &have) != EB_OK)
            goto fail;
        if (!have)
            break;
        if (f.num == 9 && f.wire == EB_PB_WIRE_LEN) { /* raw_data, little-endian */
            if (f.len != t->numel * es || n != 0)
                goto fail;
            if (f.len > 0)
                memcpy(data, f.data, f.len);
            n = t->numel;
        } else if (f.num == 4 && dt == EB_DTYPE_F32) { /* float_data */
            if (f.wire == EB_PB_WIRE_LEN) {
                if (f.len % 4 != 0 || f.len / 4 > t->numel - n)
                    goto fail;
                memcpy(data + n * 4, f.data, f.len);
                n += f.len / 4;
            } else if (f.wire == EB_PB_WIRE_I32) {
                uint32_t u = (uint32_t)f.u;
                if (n >= t->numel)
                    goto fail;
                memcpy(data + 4 * n++, &u, 4);
            } else {
                goto fail;
            }
        } else if (f.num == 10 && dt == EB_DTYPE_F64) { /* double_data */
            if (f.wire == EB_PB_WIRE_LEN) {
                if (f.len % 8 != 0 || f.len / 8 > t->numel - n)
                    goto fail;
                memcpy(data + n * 8, f.data, f.len);
                n += f.len / 8;
            } else if (f.wire == EB_PB_WIRE_I64) {
                if (n >= t->numel)
                    goto fail;
                memcpy(data + 8 * n++, &f.u, 8);
            } else {
                goto fail;
            }
        } else if ((f.num == 5 || f.num == 7 || f.num == 11) && dt != EB_DTYPE_F32 &&
                   dt != EB_DTYPE_F64) {
            if ((f.num == 7) != (dt == EB_DTYPE_I64) && f.num != 11)
                goto fail;
            if (f.wire == EB_PB_WIRE_VARINT) {
                if (n >= t->numel)
                    goto fail;
                store_int(data, dt, n++, f.u);
            } else if (f.wire == EB_PB_WIRE_LEN) {
                struct eb_pb_reader pr;
                eb_pb_reader_sub(&pr, &r, &f);
                while (eb_pb_reader_left(&pr) > 0) {
                    uint64_t v;
                    if (eb_pb_read_uvarint(&pr, &v) != EB_OK || n >= t->numel)
                        goto fail;
                    store_int(data, dt, n++, v);
                }
            } else {
                goto fail;
            }
        }
    }
    if (n != t->numel)
        goto fail;
    *dt_out = dt;
    *data_out = data;
    return EB_OK;
fail:
    alloc->free(alloc->ctx, data);
    return st;
}
