/* Hand-built ONNX model pieces for tests (onnx_build.h). */
#include "onnx_build.h"

#include <string.h>

void eb_test_put_value_info(struct eb_pb_buf *g, uint32_t field, const char *name, int elem_type,
                            int rank, const int64_t *dims)
{
    struct eb_pb_buf vi, tp, tt, sh;
    eb_pb_buf_init(&vi);
    eb_pb_buf_init(&tp);
    eb_pb_buf_init(&tt);
    eb_pb_buf_init(&sh);
    for (int i = 0; i < rank; i++) {
        struct eb_pb_buf dim;
        eb_pb_buf_init(&dim);
        eb_pb_put_varint(&dim, 1, dims[i]);
        eb_pb_put_msg(&sh, 1, &dim);
        eb_pb_buf_fini(&dim);
    }
    eb_pb_put_varint(&tt, 1, elem_type);
    if (rank >= 0)
        eb_pb_put_msg(&tt, 2, &sh);
    eb_pb_put_msg(&tp, 1, &tt);
    eb_pb_put_str(&vi, 1, name);
    eb_pb_put_msg(&vi, 2, &tp);
    eb_pb_put_msg(g, field, &vi);
    eb_pb_buf_fini(&vi);
    eb_pb_buf_fini(&tp);
    eb_pb_buf_fini(&tt);
    eb_pb_buf_fini(&sh);
}

void eb_test_put_attr_int(struct eb_pb_buf *node, const char *name, int64_t v)
{
    struct eb_pb_buf a;
    eb_pb_buf_init(&a);
    eb_pb_put_str(&a, 1, name);
    eb_pb_put_varint(&a, 3, v);
    eb_pb_put_varint(&a, 20, 2); /* INT */
    eb_pb_put_msg(node, 5, &a);
    eb_pb_buf_fini(&a);
}

void eb_test_put_attr_str(struct eb_pb_buf *node, const char *name, const char *v)
{
    struct eb_pb_buf a;
    eb_pb_buf_init(&a);
    eb_pb_put_str(&a, 1, name);
    eb_pb_put_bytes(&a, 4, v, strlen(v));
    eb_pb_put_varint(&a, 20, 3); /* STRING */
    eb_pb_put_msg(node, 5, &a);
    eb_pb_buf_fini(&a);
}
