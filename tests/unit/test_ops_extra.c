/*
 * The ops of exported decoders (transformers' LlamaForCausalLM / Qwen2ForCausalLM through
 * torch.onnx.export): Equal, LessOrEqual, And, Where, Neg, Cos, Sin, IsNaN, Range and
 * ConstantOfShape on small hand-built graphs, their values and shapes (numpy broadcasting, bool
 * outputs), Range and ConstantOfShape on shapes that change from run to run, what is refused at
 * load, and the load error that names every op type the engine lacks at once.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/engine.h"
#include "eb_test.h"
#include "onnx_build.h"

#define ONNX_FLOAT 1
#define ONNX_INT64 7
#define ONNX_BOOL  9

/* A graph input/output whose dims are numbers, or names when dims[i] < 0: -1 sequence_length,
 * -2 past_sequence_length, -3 total_sequence_length. */
static void put_io(struct eb_pb_buf *g, uint32_t field, const char *name, int elem, int rank,
                   const int64_t *dims)
{
    static const char *const names[] = {"sequence_length", "past_sequence_length",
                                        "total_sequence_length"};
    const char *dim_names[8] = {0};
    ASSERT_TRUE(rank <= 8);
    for (int i = 0; i < rank; i++)
        dim_names[i] = dims[i] < 0 ? names[-dims[i] - 1] : NULL;
    eb_test_put_value_info_named(g, field, name, elem, rank, dims, dim_names);
}

/* A TensorProto (raw data) of `rank` dims. */
static void put_tensor(struct eb_pb_buf *t, const char *name, int elem, int rank,
                       const int64_t *dims, const void *data, size_t nbytes)
{
    for (int i = 0; i < rank; i++)
        eb_pb_put_varint(t, 1, dims[i]);
    eb_pb_put_varint(t, 2, elem);
    if (name != NULL)
        eb_pb_put_str(t, 8, name);
    eb_pb_put_bytes(t, 9, data, nbytes);
}

static void put_init(struct eb_pb_buf *g, const char *name, int elem, int rank, const int64_t *dims,
                     const void *data, size_t nbytes)
{
    struct eb_pb_buf t;
    eb_pb_buf_init(&t);
    put_tensor(&t, name, elem, rank, dims, data, nbytes);
    eb_pb_put_msg(g, 5, &t);
    eb_pb_buf_fini(&t);
}

/* A node of `op` reading `in` (NULL-terminated) and writing `out` (one name). */
static void put_node(struct eb_pb_buf *g, const char *op, const char *const *in, const char *out,
                     const struct eb_pb_buf *attr)
{
    struct eb_pb_buf n;
    eb_pb_buf_init(&n);
    for (int i = 0; in[i] != NULL; i++)
        eb_pb_put_str(&n, 1, in[i]);
    eb_pb_put_str(&n, 2, out);
    eb_pb_put_str(&n, 3, out);
    eb_pb_put_str(&n, 4, op);
    if (attr != NULL)
        eb_pb_put_msg(&n, 5, attr);
    eb_pb_put_msg(g, 1, &n);
    eb_pb_buf_fini(&n);
}

static uint8_t *finish(struct eb_pb_buf *g, size_t *len)
{
    uint8_t *bytes = eb_test_model_finish(g, "ops", 17, len);
    ASSERT_TRUE(bytes != NULL);
    return bytes;
}

static struct eb_engine *load(uint8_t *bytes, size_t len, int64_t max_seq)
{
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.threads = 1;
    opt.max_seq = max_seq;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    enum eb_status st = eb_engine_load(bytes, len, "ops.onnx", &opt, &e, &d);
    if (st != EB_OK)
        printf("load: %s\n", d.msg);
    ASSERT_OK(st);
    free(bytes);
    return e;
}

static enum eb_status load_fail(uint8_t *bytes, size_t len, int64_t max_seq, struct eb_diag *d)
{
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.threads = 1;
    opt.max_seq = max_seq;
    struct eb_engine *e = NULL;
    enum eb_status st = eb_engine_load(bytes, len, "ops.onnx", &opt, &e, d);
    ASSERT_TRUE(e == NULL);
    printf("refused: %s\n", d->msg);
    free(bytes);
    return st;
}

/* a [2,3] float, b [3] float -> Equal, LessOrEqual (broadcast), And of the two, Where(eq, a, b),
 * Neg(a), Cos(a), Sin(a), IsNaN(a). */
EB_TEST(compare_logic_where_math_values)
{
    struct eb_pb_buf g;
    eb_pb_buf_init(&g);
    const int64_t d23[2] = {2, 3}, d3[1] = {3};
    put_io(&g, 11, "a", ONNX_FLOAT, 2, d23);
    put_io(&g, 11, "b", ONNX_FLOAT, 1, d3);
    put_node(&g, "Equal", (const char *const[]){"a", "b", NULL}, "eq", NULL);
    put_node(&g, "LessOrEqual", (const char *const[]){"a", "b", NULL}, "le", NULL);
    put_node(&g, "And", (const char *const[]){"eq", "le", NULL}, "both", NULL);
    put_node(&g, "Where", (const char *const[]){"le", "a", "b", NULL}, "w", NULL);
    put_node(&g, "Neg", (const char *const[]){"a", NULL}, "neg", NULL);
    put_node(&g, "Cos", (const char *const[]){"a", NULL}, "cos", NULL);
    put_node(&g, "Sin", (const char *const[]){"a", NULL}, "sin", NULL);
    put_node(&g, "IsNaN", (const char *const[]){"a", NULL}, "nan", NULL);
    static const char *const outs[] = {"eq", "le", "both", "w", "neg", "cos", "sin", "nan"};
    for (int i = 0; i < 8; i++)
        put_io(&g, 12, outs[i], i == 0 || i == 1 || i == 2 || i == 7 ? ONNX_BOOL : ONNX_FLOAT, -1,
               NULL);
    size_t len;
    uint8_t *bytes = finish(&g, &len);
    struct eb_engine *e = load(bytes, len, 0);
    float a[6] = {1.0f, 5.0f, -2.0f, NAN, 2.0f, 3.0f}, b[3] = {1.0f, 2.0f, 3.0f};
    struct eb_tensor in[2] = {{.dtype = EB_DTYPE_F32, .rank = 2, .shape = {2, 3}, .data = a},
                              {.dtype = EB_DTYPE_F32, .rank = 1, .shape = {3}, .data = b}};
    struct eb_tensor out[8];
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_run(e, in, 2, out, 8, &d));
    const uint8_t want_eq[6] = {1, 0, 0, 0, 1, 1}, want_le[6] = {1, 0, 1, 0, 1, 1};
    for (int k = 0; k < 8; k++) {
        ASSERT_EQ_INT(out[k].rank, 2);
        ASSERT_EQ_INT(out[k].shape[0], 2);
        ASSERT_EQ_INT(out[k].shape[1], 3);
        ASSERT_EQ_INT(out[k].dtype,
                      k == 0 || k == 1 || k == 2 || k == 7 ? EB_DTYPE_BOOL : EB_DTYPE_F32);
    }
    for (int i = 0; i < 6; i++) {
        const uint8_t *eq = out[0].data, *le = out[1].data, *both = out[2].data, *nan = out[7].data;
        const float *w = out[3].data, *neg = out[4].data, *c = out[5].data, *s = out[6].data;
        ASSERT_EQ_INT(eq[i], want_eq[i]);
        ASSERT_EQ_INT(le[i], want_le[i]);
        ASSERT_EQ_INT(both[i], want_eq[i] && want_le[i]);
        ASSERT_EQ_INT(nan[i], i == 3);
        if (i == 3) { /* NaN <= 3 is false: b; -NaN, cos, sin of NaN are NaN */
            ASSERT_NEAR(w[i], 1.0, 0.0);
            ASSERT_TRUE(isnan(neg[i]) && isnan(c[i]) && isnan(s[i]));
            continue;
        }
        ASSERT_NEAR(w[i], want_le[i] ? a[i] : b[i % 3], 0.0);
        ASSERT_NEAR(neg[i], -a[i], 0.0);
        ASSERT_NEAR(c[i], cos(a[i]), 1e-6);
        ASSERT_NEAR(s[i], sin(a[i]), 1e-6);
    }
    eb_engine_destroy(e);
}

/* Where on int64 with a scalar branch and a [2,1] condition broadcast to [2,3]; Neg on int64;
 * Equal on int64 broadcast against a scalar. */
EB_TEST(where_int64_broadcast_and_neg)
{
    struct eb_pb_buf g;
    eb_pb_buf_init(&g);
    const int64_t d23[2] = {2, 3}, d21[2] = {2, 1};
    const int64_t minus1 = -1, zero = 0;
    put_io(&g, 11, "x", ONNX_INT64, 2, d23);
    put_io(&g, 11, "k", ONNX_INT64, 2, d21);
    put_init(&g, "m1", ONNX_INT64, 0, NULL, &minus1, 8);
    put_init(&g, "z", ONNX_INT64, 0, NULL, &zero, 8);
    put_node(&g, "Equal", (const char *const[]){"k", "z", NULL}, "c", NULL);
    put_node(&g, "Where", (const char *const[]){"c", "m1", "x", NULL}, "w", NULL);
    put_node(&g, "Neg", (const char *const[]){"w", NULL}, "y", NULL);
    put_io(&g, 12, "y", ONNX_INT64, -1, NULL);
    size_t len;
    uint8_t *bytes = finish(&g, &len);
    struct eb_engine *e = load(bytes, len, 0);
    int64_t x[6] = {10, 11, 12, 13, 14, INT64_MIN}, k[2] = {5, 0};
    struct eb_tensor in[2] = {{.dtype = EB_DTYPE_I64, .rank = 2, .shape = {2, 3}, .data = x},
                              {.dtype = EB_DTYPE_I64, .rank = 2, .shape = {2, 1}, .data = k}};
    struct eb_tensor out;
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_run(e, in, 2, &out, 1, &d));
    ASSERT_EQ_INT(out.dtype, EB_DTYPE_I64);
    ASSERT_EQ_INT(out.shape[0], 2);
    ASSERT_EQ_INT(out.shape[1], 3);
    const int64_t *y = out.data;
    const int64_t want[6] = {-10, -11, -12, 1, 1, 1};
    for (int i = 0; i < 6; i++)
        ASSERT_TRUE(y[i] == want[i]);
    eb_engine_destroy(e);
}

/*
 * x [1, sequence_length] float (bound 8) -> Shape -> Gather(1) = n;
 * r = Range(2, n + 2, 1) [n] (int64); f = ConstantOfShape(Shape(x), value int64 7) [1, n];
 * m = Where(LessOrEqual(r, 4), r, Neg(r)) [n]; every run at its own n.
 */
EB_TEST(range_constant_of_shape_follow_run_shapes)
{
    struct eb_pb_buf g, attr, t;
    eb_pb_buf_init(&g);
    eb_pb_buf_init(&attr);
    eb_pb_buf_init(&t);
    const int64_t dx[2] = {1, -1}, one = 1, two = 2, four = 4, seven = 7, d1[1] = {1};
    put_io(&g, 11, "x", ONNX_FLOAT, 2, dx);
    put_init(&g, "i1", ONNX_INT64, 0, NULL, &one, 8);
    put_init(&g, "two", ONNX_INT64, 0, NULL, &two, 8);
    put_init(&g, "four", ONNX_INT64, 0, NULL, &four, 8);
    put_node(&g, "Shape", (const char *const[]){"x", NULL}, "sx", NULL);
    put_node(&g, "Gather", (const char *const[]){"sx", "i1", NULL}, "n", NULL);
    put_node(&g, "Add", (const char *const[]){"n", "two", NULL}, "lim", NULL);
    put_node(&g, "Range", (const char *const[]){"two", "lim", "i1", NULL}, "r", NULL);
    put_tensor(&t, NULL, ONNX_INT64, 1, d1, &seven, 8);
    eb_pb_put_str(&attr, 1, "value");
    eb_pb_put_msg(&attr, 5, &t);
    eb_pb_put_varint(&attr, 20, 4); /* TENSOR */
    put_node(&g, "ConstantOfShape", (const char *const[]){"sx", NULL}, "f", &attr);
    put_node(&g, "LessOrEqual", (const char *const[]){"r", "four", NULL}, "le", NULL);
    put_node(&g, "Neg", (const char *const[]){"r", NULL}, "nr", NULL);
    put_node(&g, "Where", (const char *const[]){"le", "r", "nr", NULL}, "m", NULL);
    put_io(&g, 12, "r", ONNX_INT64, -1, NULL);
    put_io(&g, 12, "f", ONNX_INT64, -1, NULL);
    put_io(&g, 12, "m", ONNX_INT64, -1, NULL);
    eb_pb_buf_fini(&attr);
    eb_pb_buf_fini(&t);
    size_t len;
    uint8_t *bytes = finish(&g, &len);
    struct eb_engine *e = load(bytes, len, 8);
    float x[8] = {0};
    for (int64_t n = 1; n <= 8; n++) {
        struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 2, .shape = {1, n}, .data = x};
        struct eb_tensor out[3];
        struct eb_diag d = {0};
        ASSERT_OK(eb_engine_run(e, &in, 1, out, 3, &d));
        ASSERT_EQ_INT(out[0].rank, 1);
        ASSERT_EQ_INT(out[0].shape[0], n);
        ASSERT_EQ_INT(out[1].rank, 2);
        ASSERT_EQ_INT(out[1].shape[1], n);
        ASSERT_EQ_INT(out[1].dtype, EB_DTYPE_I64);
        ASSERT_EQ_INT(out[2].shape[0], n);
        const int64_t *r = out[0].data, *f = out[1].data, *m = out[2].data;
        for (int64_t i = 0; i < n; i++) {
            ASSERT_TRUE(r[i] == 2 + i);
            ASSERT_TRUE(f[i] == 7);
            ASSERT_TRUE(m[i] == (2 + i <= 4 ? 2 + i : -(2 + i)));
        }
    }
    eb_engine_destroy(e);
}

/* Range of float32 constants is folded at load; a Range whose limit is model data is refused
 * at load, naming node, op and input. */
EB_TEST(range_float_and_data_limit_refused)
{
    struct eb_pb_buf g;
    eb_pb_buf_init(&g);
    const int64_t d1[1] = {1};
    const float s = 1.0f, l = 2.0f, dl = 0.25f;
    put_io(&g, 11, "x", ONNX_FLOAT, 1, d1);
    put_init(&g, "s", ONNX_FLOAT, 0, NULL, &s, 4);
    put_init(&g, "l", ONNX_FLOAT, 0, NULL, &l, 4);
    put_init(&g, "d", ONNX_FLOAT, 0, NULL, &dl, 4);
    put_node(&g, "Range", (const char *const[]){"s", "l", "d", NULL}, "r", NULL);
    put_node(&g, "Add", (const char *const[]){"r", "x", NULL}, "y", NULL);
    put_io(&g, 12, "y", ONNX_FLOAT, -1, NULL);
    size_t len;
    uint8_t *bytes = finish(&g, &len);
    struct eb_engine *e = load(bytes, len, 0);
    float x = 10.0f;
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 1, .shape = {1}, .data = &x}, out;
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_run(e, &in, 1, &out, 1, &d));
    ASSERT_EQ_INT(out.shape[0], 4);
    for (int i = 0; i < 4; i++)
        ASSERT_NEAR(((const float *)out.data)[i], 11.0 + 0.25 * i, 0.0);
    eb_engine_destroy(e);

    eb_pb_buf_init(&g);
    const int64_t zero = 0;
    put_io(&g, 11, "lim", ONNX_INT64, 0, NULL);
    put_init(&g, "z", ONNX_INT64, 0, NULL, &zero, 8);
    put_node(&g, "Range", (const char *const[]){"z", "lim", "lim", NULL}, "r", NULL);
    put_io(&g, 12, "r", ONNX_INT64, -1, NULL);
    bytes = finish(&g, &len);
    ASSERT_EQ_INT(load_fail(bytes, len, 0, &d), EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "node 0 (r): op Range (opset 17): input 1 computed from the model's "
                           "data");
    ASSERT_CONTAINS(d.msg, "is not supported by the native engine");
}

/* ConstantOfShape without 'value' is float32 zeros; a [0] shape gives a scalar. */
EB_TEST(constant_of_shape_default_and_scalar)
{
    struct eb_pb_buf g;
    eb_pb_buf_init(&g);
    const int64_t d1[1] = {1}, shp[2] = {2, 3}, d2[1] = {2}, d0[1] = {0};
    put_io(&g, 11, "x", ONNX_FLOAT, 1, d1);
    put_init(&g, "s", ONNX_INT64, 1, d2, shp, 16);
    put_init(&g, "e", ONNX_INT64, 1, d0, shp, 0);
    put_node(&g, "ConstantOfShape", (const char *const[]){"s", NULL}, "z", NULL);
    put_node(&g, "ConstantOfShape", (const char *const[]){"e", NULL}, "z0", NULL);
    put_node(&g, "Add", (const char *const[]){"z", "x", NULL}, "y", NULL);
    put_node(&g, "Add", (const char *const[]){"z0", "x", NULL}, "y0", NULL);
    put_io(&g, 12, "y", ONNX_FLOAT, -1, NULL);
    put_io(&g, 12, "y0", ONNX_FLOAT, -1, NULL);
    size_t len;
    uint8_t *bytes = finish(&g, &len);
    struct eb_engine *e = load(bytes, len, 0);
    float x = 1.5f;
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 1, .shape = {1}, .data = &x}, out[2];
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_run(e, &in, 1, out, 2, &d));
    ASSERT_EQ_INT(out[0].rank, 2);
    ASSERT_EQ_INT(out[0].shape[0], 2);
    ASSERT_EQ_INT(out[0].shape[1], 3);
    for (int i = 0; i < 6; i++)
        ASSERT_NEAR(((const float *)out[0].data)[i], 1.5, 0.0);
    ASSERT_EQ_INT(out[1].rank, 1); /* scalar + [1] */
    ASSERT_NEAR(((const float *)out[1].data)[0], 1.5, 0.0);
    eb_engine_destroy(e);
}

/* Every op type the engine lacks is named in one message, in the order they first occur, with
 * the first node; one lacking type keeps the one-node message. */
EB_TEST(unknown_op_types_named_at_once)
{
    struct eb_pb_buf g;
    eb_pb_buf_init(&g);
    const int64_t d1[1] = {4};
    put_io(&g, 11, "x", ONNX_FLOAT, 1, d1);
    put_node(&g, "Relu", (const char *const[]){"x", NULL}, "a", NULL);
    put_node(&g, "Einsum", (const char *const[]){"a", NULL}, "b", NULL);
    put_node(&g, "Erf", (const char *const[]){"b", NULL}, "c", NULL);
    put_node(&g, "Einsum", (const char *const[]){"c", NULL}, "d", NULL);
    put_node(&g, "Mod", (const char *const[]){"d", NULL}, "y", NULL);
    put_io(&g, 12, "y", ONNX_FLOAT, -1, NULL);
    size_t len;
    uint8_t *bytes = finish(&g, &len);
    struct eb_diag d = {0};
    ASSERT_EQ_INT(load_fail(bytes, len, 0, &d), EB_ERR_UNSUPPORTED);
    ASSERT_STREQ(d.msg, "model ops.onnx: ops Einsum, Erf, Mod (opset 17) are not supported by the "
                        "native engine; first at node 1 (b)");
    ASSERT_ADVICE(d, EB_ADVICE_OTHER_BACKEND);

    eb_pb_buf_init(&g);
    put_io(&g, 11, "x", ONNX_FLOAT, 1, d1);
    put_node(&g, "Relu", (const char *const[]){"x", NULL}, "a", NULL);
    put_node(&g, "Erf", (const char *const[]){"a", NULL}, "y", NULL);
    put_io(&g, 12, "y", ONNX_FLOAT, -1, NULL);
    bytes = finish(&g, &len);
    d = (struct eb_diag){0};
    ASSERT_EQ_INT(load_fail(bytes, len, 0, &d), EB_ERR_UNSUPPORTED);
    ASSERT_STREQ(d.msg, "model ops.onnx node 1 (y): op Erf (opset 17) is not supported by the "
                        "native engine");
}

/*
 * A value that follows the past alone (a copy of the cache, as transformers' exports make) is
 * empty at the load's shapes (past 0) and largest at a decode step (past max_seq - 1): its slot
 * holds it there, and at every length. x [1, sequence_length], past [1, 2,
 * past_sequence_length] -> y = Neg(past), w = Neg(x); bound 8.
 */
EB_TEST(value_of_the_past_alone_fits_at_every_step)
{
    struct eb_pb_buf g;
    eb_pb_buf_init(&g);
    const int64_t dx[2] = {1, -1}, dp[3] = {1, 2, -2};
    put_io(&g, 11, "x", ONNX_FLOAT, 2, dx);
    put_io(&g, 11, "past", ONNX_FLOAT, 3, dp);
    put_node(&g, "Neg", (const char *const[]){"past", NULL}, "y", NULL);
    put_node(&g, "Neg", (const char *const[]){"x", NULL}, "w", NULL);
    put_io(&g, 12, "y", ONNX_FLOAT, -1, NULL);
    put_io(&g, 12, "w", ONNX_FLOAT, -1, NULL);
    size_t len;
    uint8_t *bytes = finish(&g, &len);
    struct eb_engine *e = load(bytes, len, 8);
    float x[8], past[2 * 7];
    for (int i = 0; i < 14; i++)
        past[i] = (float)i + 0.5f;
    for (int i = 0; i < 8; i++)
        x[i] = (float)i;
    for (int64_t p = 0; p <= 7; p++) {
        const int64_t seq = p == 0 ? 8 : 8 - p;
        struct eb_tensor in[2] = {
            {.dtype = EB_DTYPE_F32, .rank = 2, .shape = {1, seq}, .data = x},
            {.dtype = EB_DTYPE_F32, .rank = 3, .shape = {1, 2, p}, .data = past}};
        struct eb_tensor out[2];
        struct eb_diag d = {0};
        if (eb_engine_run(e, in, 2, out, 2, &d) != EB_OK)
            EB_FAIL("past %lld: %s", (long long)p, d.msg);
        ASSERT_EQ_INT(out[0].shape[2], p);
        ASSERT_EQ_INT(out[1].shape[1], seq);
        for (int64_t i = 0; i < 2 * p; i++)
            ASSERT_NEAR(((const float *)out[0].data)[i], -past[i], 0.0);
    }
    eb_engine_destroy(e);
}
