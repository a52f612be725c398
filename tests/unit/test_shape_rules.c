/*
 * Rules that hold for every op at load time (issue 19): a node that leaves a required input
 * empty is refused by import, naming node, op and input index, whatever the op; shape inference
 * refuses sizes that overflow int64 (Split sizes, an empty value whose other dims multiply past
 * the tensor limit, Conv groups) instead of wrapping; Slice steps at the ends of int64 run
 * without overflow. Models are built here with onnx_wire.h; nothing needs the shared data.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/engine.h"
#include "eb_test.h"
#include "engine/onnx/onnx_wire.h"
#include "engine/ops/op.h"
#include "onnx_build.h"

enum { T_FLOAT = 1, T_INT64 = 7 };

/* An initializer: dims and little-endian raw data (n elements of the dtype). */
struct init {
    const char *name;
    int dtype, rank;
    int64_t dims[4];
    const void *data;
    size_t n;
};

/* One node, one float graph input and up to three initializers; opset 17 unless given. */
struct spec {
    const char *op;
    const char *in[8];
    int n_in;
    const char *out[4];
    int n_out;
    const char *x;
    int x_rank;
    int64_t x_dims[4];
    struct init init[3];
    int n_init;
    const char *attr; /* one INT attribute, when not NULL */
    int64_t attr_v;
    int opset;
};

static uint8_t *build(const struct spec *s, size_t *len)
{
    struct eb_pb_buf m, g, n, os;
    eb_pb_buf_init(&m);
    eb_pb_buf_init(&g);
    eb_pb_buf_init(&n);
    eb_pb_buf_init(&os);
    for (int i = 0; i < s->n_in; i++)
        eb_pb_put_str(&n, 1, s->in[i]);
    for (int i = 0; i < s->n_out; i++)
        eb_pb_put_str(&n, 2, s->out[i]);
    eb_pb_put_str(&n, 3, "the_node");
    eb_pb_put_str(&n, 4, s->op);
    if (s->attr != NULL)
        eb_test_put_attr_int(&n, s->attr, s->attr_v);
    eb_pb_put_msg(&g, 1, &n);
    eb_pb_put_str(&g, 2, "rules");
    for (int i = 0; i < s->n_init; i++) {
        const struct init *t = &s->init[i];
        struct eb_pb_buf tp;
        eb_pb_buf_init(&tp);
        for (int d = 0; d < t->rank; d++)
            eb_pb_put_varint(&tp, 1, t->dims[d]);
        eb_pb_put_varint(&tp, 2, t->dtype);
        eb_pb_put_str(&tp, 8, t->name);
        eb_pb_put_bytes(&tp, 9, t->data, t->n * (t->dtype == T_INT64 ? 8 : 4));
        eb_pb_put_msg(&g, 5, &tp);
        eb_pb_buf_fini(&tp);
    }
    eb_test_put_value_info(&g, 11, s->x, T_FLOAT, s->x_rank, s->x_dims);
    for (int i = 0; i < s->n_out; i++)
        eb_test_put_value_info(&g, 12, s->out[i], T_FLOAT, -1, NULL);
    eb_pb_put_varint(&os, 2, s->opset != 0 ? s->opset : 17);
    eb_pb_put_varint(&m, 1, 8);
    eb_pb_put_msg(&m, 7, &g);
    eb_pb_put_msg(&m, 8, &os);
    ASSERT_TRUE(!eb_pb_buf_error(&m));
    uint8_t *bytes = eb_pb_buf_take(&m, len);
    eb_pb_buf_fini(&m);
    eb_pb_buf_fini(&g);
    eb_pb_buf_fini(&n);
    eb_pb_buf_fini(&os);
    return bytes;
}

/* Loads the model of `s`; returns the status, the message in d. */
static enum eb_status load(const struct spec *s, struct eb_engine **e_out, struct eb_diag *d)
{
    size_t len;
    uint8_t *bytes = build(s, &len);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.threads = 3;
    *e_out = NULL;
    memset(d, 0, sizeof(*d));
    enum eb_status st = eb_engine_load(bytes, len, "rules.onnx", &opt, e_out, d);
    free(bytes);
    return st;
}

/* Loading `s` fails with `want` and a message naming the model, the node and `text`. */
static void expect_refused(const struct spec *s, enum eb_status want, const char *text)
{
    struct eb_engine *e;
    struct eb_diag d;
    enum eb_status st = load(s, &e, &d);
    printf("%s: %s\n", s->op, d.msg);
    if (st != want)
        EB_FAIL("%s: status %s, expected %s (%s)", s->op, eb_status_name(st), eb_status_name(want),
                d.msg);
    ASSERT_TRUE(e == NULL);
    ASSERT_CONTAINS(d.msg, "rules.onnx");
    ASSERT_CONTAINS(d.msg, "node 0 (the_node)");
    ASSERT_CONTAINS(d.msg, s->op);
    ASSERT_CONTAINS(d.msg, text);
}

static const char *const op_names[] = {
#define EB_OP(name, sym) name,
#include "engine/ops/ops.def"
#undef EB_OP
};

EB_TEST(every_op_refuses_an_empty_required_input)
{
    int checked = 0;
    for (size_t k = 0; k < EB_ARRAY_LEN(op_names); k++) {
        const struct eb_op_def *op = eb_op_find(op_names[k]);
        if (op == NULL) /* edgebench.* ops: made by passes, never imported */
            continue;
        for (int idx = 0; idx < op->max_inputs && idx < 6; idx++) {
            if (eb_op_input_optional(op, idx))
                continue;
            if (idx >= op->min_inputs && idx > 0)
                break; /* past the required prefix every listed input is required too: one is enough */
            /* The empty input is followed by a present one, so it is not a trailing omission
             * (which import drops before counting), unless the op takes no more inputs. */
            int n_in = idx + 2 > op->max_inputs ? op->max_inputs : idx + 2;
            n_in = n_in < op->min_inputs ? op->min_inputs : n_in;
            struct spec s = {.op = op_names[k],
                             .n_in = n_in,
                             .n_out = op->min_outputs,
                             .x = "x",
                             .x_rank = 2,
                             .x_dims = {1, 4}};
            static const char *const outs[] = {"y0", "y1", "y2", "y3"};
            s.n_out = s.n_out < 1 ? 1 : s.n_out;
            for (int i = 0; i < s.n_out; i++)
                s.out[i] = outs[i];
            for (int i = 0; i < n_in; i++)
                s.in[i] = i == idx ? "" : "x";
            char text[64];
            if (idx < n_in - 1)
                snprintf(text, sizeof(text), "input %d is required but its name is empty", idx);
            else
                snprintf(text, sizeof(text), "%d inputs", n_in - 1); /* a shorter list */
            expect_refused(&s, EB_ERR_FORMAT, text);
            checked++;
        }
    }
    printf("%d ops x inputs refused\n", checked);
    ASSERT_TRUE(checked >= 30);
}

EB_TEST(an_empty_optional_input_is_accepted)
{
    /* Clip(x, <no min>, max = 1): the omitted min is an optional input in the middle. */
    const float one = 1.0f;
    struct spec s = {.op = "Clip",
                     .in = {"x", "", "hi"},
                     .n_in = 3,
                     .out = {"y"},
                     .n_out = 1,
                     .x = "x",
                     .x_rank = 2,
                     .x_dims = {1, 4}};
    s.init[0] = (struct init){.name = "hi", .dtype = T_FLOAT, .rank = 0, .data = &one, .n = 1};
    s.n_init = 1;
    struct eb_engine *e;
    struct eb_diag d;
    ASSERT_OK(load(&s, &e, &d));
    float x[4] = {-1.0f, 0.5f, 2.0f, 7.0f};
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 2, .shape = {1, 4}, .data = x}, out[1];
    ASSERT_OK(eb_engine_run(e, &in, 1, out, 1, &d));
    const float *y = out[0].data;
    ASSERT_TRUE(y[0] == -1.0f && y[1] == 0.5f && y[2] == 1.0f && y[3] == 1.0f);
    eb_engine_destroy(e);
}

EB_TEST(reshape_with_an_empty_data_input_is_refused)
{
    /* The crash of hostile/reshape_empty_data.onnx: Reshape("", shape) dereferenced NULL. */
    const int64_t shape[2] = {2, 2};
    struct spec s = {.op = "Reshape",
                     .in = {"", "shape"},
                     .n_in = 2,
                     .out = {"y"},
                     .n_out = 1,
                     .x = "x",
                     .x_rank = 2,
                     .x_dims = {1, 4}};
    s.init[0] = (struct init){
        .name = "shape", .dtype = T_INT64, .rank = 1, .dims = {2}, .data = shape, .n = 2};
    s.n_init = 1;
    expect_refused(&s, EB_ERR_FORMAT,
                   "op Reshape (opset 17): input 0 is required but its name "
                   "is empty");
}

EB_TEST(split_sizes_overflowing_int64_are_refused)
{
    /* hostile/split_overflow.onnx: the sum of the sizes wrapped (UBSan: signed overflow). */
    const int64_t sizes[3] = {INT64_MAX, INT64_MAX, 6};
    struct spec s = {.op = "Split",
                     .in = {"x", "sizes"},
                     .n_in = 2,
                     .out = {"a", "b", "c"},
                     .n_out = 3,
                     .x = "x",
                     .x_rank = 2,
                     .x_dims = {1, 4},
                     .attr = "axis",
                     .attr_v = 1};
    s.init[0] = (struct init){
        .name = "sizes", .dtype = T_INT64, .rank = 1, .dims = {3}, .data = sizes, .n = 3};
    s.n_init = 1;
    expect_refused(&s, EB_ERR_FORMAT, "split sizes overflow int64");
}

EB_TEST(empty_value_with_huge_dims_is_refused)
{
    /* An empty tensor may not carry dims whose product overflows (Flatten, strides, sizes). */
    const int64_t shape[3] = {0, INT64_C(1) << 40, INT64_C(1) << 40};
    struct spec s = {.op = "Reshape",
                     .in = {"x", "shape"},
                     .n_in = 2,
                     .out = {"y"},
                     .n_out = 1,
                     .x = "x",
                     .x_rank = 2,
                     .x_dims = {0, 4},
                     .attr = "allowzero",
                     .attr_v = 1};
    s.init[0] = (struct init){
        .name = "shape", .dtype = T_INT64, .rank = 1, .dims = {3}, .data = shape, .n = 3};
    s.n_init = 1;
    expect_refused(&s, EB_ERR_LIMIT, "zero dimensions not counted");
    /* A Reshape product that overflows int64 on its way is refused as such. */
    const int64_t wide[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 0};
    s.init[0].data = wide;
    s.attr = NULL;
    s.x_dims[0] = 1;
    expect_refused(&s, EB_ERR_FORMAT, "overflow int64");
}

EB_TEST(conv_group_overflow_is_refused)
{
    /* group 2^62 divides 0 channels; group × weight channels overflowed before the compare. */
    struct spec s = {.op = "Conv",
                     .in = {"x", "w"},
                     .n_in = 2,
                     .out = {"y"},
                     .n_out = 1,
                     .x = "x",
                     .x_rank = 4,
                     .x_dims = {1, 0, 4, 4},
                     .attr = "group",
                     .attr_v = INT64_C(1) << 62};
    s.init[0] = (struct init){.name = "w", .dtype = T_FLOAT, .rank = 4, .dims = {0, 2, 1, 1}};
    s.n_init = 1;
    expect_refused(&s, EB_ERR_FORMAT, "does not match channels");
}

EB_TEST(slice_steps_at_the_ends_of_int64_run)
{
    /* (end - start + step - 1) / step overflowed for step INT64_MAX, -step for INT64_MIN.
     * x [4]; axes omitted (the one start/end is axis 0's); {start, end, step} per case. */
    const int64_t cases[2][3] = {{0, 4, INT64_MAX}, {3, INT64_MIN, INT64_MIN}};
    const float want[2] = {10.0f, 13.0f};
    for (int c = 0; c < 2; c++) {
        struct spec s = {.op = "Slice",
                         .in = {"x", "st", "en", "", "sp"},
                         .n_in = 5,
                         .out = {"y"},
                         .n_out = 1,
                         .x = "x",
                         .x_rank = 1,
                         .x_dims = {4}};
        const char *names[3] = {"st", "en", "sp"};
        for (int i = 0; i < 3; i++)
            s.init[i] = (struct init){.name = names[i],
                                      .dtype = T_INT64,
                                      .rank = 1,
                                      .dims = {1},
                                      .data = &cases[c][i],
                                      .n = 1};
        s.n_init = 3;
        struct eb_engine *e;
        struct eb_diag d;
        ASSERT_OK(load(&s, &e, &d));
        float x[4] = {10.0f, 11.0f, 12.0f, 13.0f};
        struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 1, .shape = {4}, .data = x}, out[1];
        ASSERT_OK(eb_engine_run(e, &in, 1, out, 1, &d));
        ASSERT_EQ_INT(out[0].rank, 1);
        ASSERT_EQ_INT(out[0].shape[0], 1);
        ASSERT_TRUE(((const float *)out[0].data)[0] == want[c]);
        eb_engine_destroy(e);
    }
}
