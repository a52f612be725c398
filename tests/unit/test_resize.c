/*
 * Resize mode linear in the native engine: one-node models built here (onnx_wire.h) against
 * values computed by hand, against ONNX Runtime on the same models (skipped where ORT is
 * absent), and its load-time refusals.
 *
 * Hand values: on a plane x[i][j] = 1 + j + 2i, bilinear interpolation is exact, so output
 * (i, j) is 1 + cx + 2cy where cx, cy are the source coordinates clamped to [0, in - 1]; the
 * cases below spell them out per coordinate mode (ONNX's formulas), and the ONNX examples
 * (1..4 and 1..16 planes) give the rest.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/backend.h"
#include "eb/engine.h"
#include "eb_test.h"
#include "engine/onnx/onnx_wire.h"
#include "onnx_build.h"

enum { T_FLOAT = 1, T_INT64 = 7 };

/* One Resize node y = Resize(x, roi = '', scales, sizes): exactly one of scales/sizes. */
struct rz {
    int rank;
    int64_t x_dims[4];
    const float *scales;  /* rank floats, or NULL */
    const int64_t *sizes; /* rank int64, or NULL */
    const char *mode, *coord;
    const char *attr; /* one more INT attribute (antialias, exclude_outside), when not NULL */
    int64_t attr_v;
    int opset;             /* 17 unless given */
    int weights_as_inputs; /* list the scales/sizes initializer as a graph input (IR version 3) */
};

static uint8_t *build(const struct rz *r, size_t *len)
{
    struct eb_pb_buf m, g, n, t, os;
    eb_pb_buf_init(&m);
    eb_pb_buf_init(&g);
    eb_pb_buf_init(&n);
    eb_pb_buf_init(&t);
    eb_pb_buf_init(&os);
    eb_pb_put_str(&n, 1, "x");
    eb_pb_put_str(&n, 1, "");
    eb_pb_put_str(&n, 1, r->scales != NULL ? "scales" : "");
    if (r->sizes != NULL)
        eb_pb_put_str(&n, 1, "sizes");
    eb_pb_put_str(&n, 2, "y");
    eb_pb_put_str(&n, 3, "the_node");
    eb_pb_put_str(&n, 4, "Resize");
    eb_test_put_attr_str(&n, "mode", r->mode);
    if (r->coord != NULL)
        eb_test_put_attr_str(&n, "coordinate_transformation_mode", r->coord);
    if (r->attr != NULL)
        eb_test_put_attr_int(&n, r->attr, r->attr_v);
    eb_pb_put_msg(&g, 1, &n);
    eb_pb_put_str(&g, 2, "resize");
    eb_pb_put_varint(&t, 1, r->rank);
    eb_pb_put_varint(&t, 2, r->scales != NULL ? T_FLOAT : T_INT64);
    eb_pb_put_str(&t, 8, r->scales != NULL ? "scales" : "sizes");
    if (r->scales != NULL)
        eb_pb_put_bytes(&t, 9, r->scales, (size_t)r->rank * 4);
    else
        eb_pb_put_bytes(&t, 9, r->sizes, (size_t)r->rank * 8);
    eb_pb_put_msg(&g, 5, &t);
    eb_test_put_value_info(&g, 11, "x", T_FLOAT, r->rank, r->x_dims);
    if (r->weights_as_inputs) {
        const int64_t w_dims[1] = {r->rank};
        eb_test_put_value_info(&g, 11, r->scales != NULL ? "scales" : "sizes",
                               r->scales != NULL ? T_FLOAT : T_INT64, 1, w_dims);
    }
    eb_test_put_value_info(&g, 12, "y", T_FLOAT, -1, NULL);
    eb_pb_put_varint(&os, 2, r->opset != 0 ? r->opset : 17);
    eb_pb_put_varint(&m, 1, r->weights_as_inputs ? 3 : 8);
    eb_pb_put_msg(&m, 7, &g);
    eb_pb_put_msg(&m, 8, &os);
    ASSERT_TRUE(!eb_pb_buf_error(&m));
    uint8_t *bytes = eb_pb_buf_take(&m, len);
    eb_pb_buf_fini(&m);
    eb_pb_buf_fini(&g);
    eb_pb_buf_fini(&n);
    eb_pb_buf_fini(&t);
    eb_pb_buf_fini(&os);
    return bytes;
}

static int64_t numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= dims[d];
    return n;
}

/* Runs r on x with `threads` threads; the output is copied to a new buffer (caller frees), its
 * dims to y_dims. */
static float *run_native(const struct rz *r, const float *x, int threads, int64_t *y_dims)
{
    size_t len;
    uint8_t *bytes = build(r, &len);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.threads = threads;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_load(bytes, len, "resize.onnx", &opt, &e, &d));
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = r->rank, .data = (void *)x}, out[1];
    memcpy(in.shape, r->x_dims, (size_t)r->rank * sizeof(int64_t));
    ASSERT_OK(eb_engine_run(e, &in, 1, out, 1, &d));
    ASSERT_EQ_INT(out[0].rank, r->rank);
    memcpy(y_dims, out[0].shape, (size_t)r->rank * sizeof(int64_t));
    const int64_t n = numel(r->rank, y_dims);
    float *y = malloc((size_t)n * sizeof(float));
    ASSERT_TRUE(y != NULL);
    memcpy(y, out[0].data, (size_t)n * sizeof(float));
    eb_engine_destroy(e);
    free(bytes);
    return y;
}

/* The plane 1 + j + 2i (or 1.. in row-major order when `ramp`), repeated over N*C planes, each
 * plane p offset by 100p. */
static float *plane_input(const struct rz *r, int ramp)
{
    const int64_t h = r->x_dims[r->rank - 2], w = r->x_dims[r->rank - 1];
    const int64_t n = numel(r->rank, r->x_dims);
    float *x = malloc((size_t)n * sizeof(float));
    ASSERT_TRUE(x != NULL);
    for (int64_t k = 0; k < n; k++) {
        const int64_t p = k / (h * w), i = k % (h * w) / w, j = k % w;
        x[k] = (float)(100 * p) + (ramp ? (float)(i * w + j + 1) : (float)(1 + j + 2 * i));
    }
    return x;
}

/* r's output equals `want` (one plane, oh x ow; planes p add 100p) within 1e-6 relative, with 1
 * and 3 threads, and its shape ends in oh x ow. */
static void expect_plane(const struct rz *r, int ramp, int64_t oh, int64_t ow, const float *want)
{
    float *x = plane_input(r, ramp);
    for (int threads = 1; threads <= 3; threads += 2) {
        int64_t yd[4];
        float *y = run_native(r, x, threads, yd);
        ASSERT_EQ_INT(yd[r->rank - 2], oh);
        ASSERT_EQ_INT(yd[r->rank - 1], ow);
        const int64_t n = numel(r->rank, yd);
        for (int64_t k = 0; k < n; k++) {
            const double w = (double)want[k % (oh * ow)] + 100.0 * (double)(k / (oh * ow));
            if (!(fabs((double)y[k] - w) <= 1e-6 * fabs(w) + 1e-6))
                EB_FAIL("%s/%s, %d threads: output %lld is %.9g, expected %.9g", r->mode, r->coord,
                        threads, (long long)k, (double)y[k], w);
        }
        free(y);
    }
    free(x);
}

static const float x2[4] = {1, 1, 2, 2};

/* want[i][j] = 1 + cx[j] + 2 cy[i]: the output on the plane 1 + j + 2i (clamped coordinates). */
static void on_plane(const float *cy, int oh, const float *cx, int ow, float *want)
{
    for (int i = 0; i < oh; i++)
        for (int j = 0; j < ow; j++)
            want[i * ow + j] = 1.0f + cx[j] + 2.0f * cy[i];
}

/* ONNX's test_resize_upsample_scales_linear: [[1, 2], [3, 4]] twice as large, half_pixel; the
 * first and last rows and columns are clamped to the border. */
EB_TEST(linear_upsample_x2_half_pixel)
{
    const struct rz r = {4, {1, 1, 2, 2}, x2, NULL, "linear", "half_pixel", NULL, 0, 0, 0};
    const float want[16] = {1.0f, 1.25f, 1.75f, 2.0f, 1.5f, 1.75f, 2.25f, 2.5f,
                            2.5f, 2.75f, 3.25f, 3.5f, 3.0f, 3.25f, 3.75f, 4.0f};
    expect_plane(&r, 1, 4, 4, want);
}

/* align_corners: source coordinate o * (in - 1) / (out - 1) = 0, 1/3, 2/3, 1 on both axes. */
EB_TEST(linear_upsample_x2_align_corners)
{
    const struct rz r = {4, {2, 3, 2, 2}, x2, NULL, "linear", "align_corners", NULL, 0, 0, 0};
    float want[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            want[i * 4 + j] = 1.0f + (float)j / 3.0f + 2.0f * (float)i / 3.0f;
    expect_plane(&r, 0, 4, 4, want);
}

/* asymmetric: o / 2 = 0, 0.5, 1, 1.5 → clamped to 1 at the last row and column. */
EB_TEST(linear_upsample_x2_asymmetric)
{
    const struct rz r = {4, {1, 2, 2, 2}, x2, NULL, "linear", "asymmetric", NULL, 0, 0, 0};
    const float c[4] = {0.0f, 0.5f, 1.0f, 1.0f};
    float want[16];
    on_plane(c, 4, c, 4, want);
    expect_plane(&r, 0, 4, 4, want);
}

/* pytorch_half_pixel and half_pixel agree for outputs longer than 1: (o + 0.5) / 2 - 0.5. */
EB_TEST(linear_upsample_x2_pytorch_half_pixel)
{
    const struct rz r = {4, {1, 1, 3, 2}, x2, NULL, "linear", "pytorch_half_pixel", NULL, 0, 0, 0};
    const float cy[6] = {0.0f, 0.25f, 0.75f, 1.25f, 1.75f, 2.0f}, cx[4] = {0, 0.25f, 0.75f, 1};
    float want[24];
    on_plane(cy, 6, cx, 4, want);
    expect_plane(&r, 0, 6, 4, want);
}

/* Non-integer scales: ONNX's test_resize_downsample_scales_linear (0.6 of 2x4 → 1x2, half_pixel:
 * coordinates 0.33 and 0.83, 2.67 along x) and an upscale by 1.5 of a 4x4 plane (6x6:
 * coordinates (o + 0.5) / 1.5 - 0.5 = 0, 0.5, 1.17, 1.83, 2.5, 3 after clamping). */
EB_TEST(linear_non_integer_scales)
{
    const float s06[4] = {1, 1, 0.6f, 0.6f}, s15[4] = {1, 1, 1.5f, 1.5f};
    const struct rz down = {4, {1, 1, 2, 4}, s06, NULL, "linear", "half_pixel", NULL, 0, 0, 0};
    const float want_down[2] = {2.6666665f, 4.3333331f};
    expect_plane(&down, 1, 1, 2, want_down);
    const struct rz up = {4, {1, 2, 4, 4}, s15, NULL, "linear", "half_pixel", NULL, 0, 0, 0};
    float want_up[36];
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < 6; j++) {
            double cy = ((double)i + 0.5) / 1.5 - 0.5, cx = ((double)j + 0.5) / 1.5 - 0.5;
            cy = cy < 0 ? 0 : cy > 3 ? 3 : cy;
            cx = cx < 0 ? 0 : cx > 3 ? 3 : cx;
            want_up[i * 6 + j] = (float)(1.0 + cx + 2.0 * cy);
        }
    }
    expect_plane(&up, 0, 6, 6, want_up);
}

/* Sizes instead of scales: ONNX's test_resize_downsample_sizes_linear_pytorch_half_pixel (4x4
 * 1..16 to 3x1: an output of length 1 reads coordinate 0) and a 2-D input grown to 3x5. */
EB_TEST(linear_sizes_input)
{
    const int64_t s31[4] = {1, 1, 3, 1}, s35[2] = {3, 5};
    const struct rz r = {4, {1, 1, 4, 4}, NULL, s31, "linear", "pytorch_half_pixel", NULL, 0, 0, 0};
    const float want[3] = {1.6666666f, 7.0f, 12.333333f};
    expect_plane(&r, 1, 3, 1, want);
    /* 2-D, align_corners: y = 0, 0.5, 1 and x = 0, 0.25, .., 1 of a 2x2 plane. */
    const struct rz r2 = {2, {2, 2}, NULL, s35, "linear", "align_corners", NULL, 0, 0, 0};
    float want2[15];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++)
            want2[i * 5 + j] = 1.0f + 0.25f * (float)j + 2.0f * 0.5f * (float)i;
    expect_plane(&r2, 0, 3, 5, want2);
}

/* IR version 3 lists every initializer as a graph input too: that input is the constant (as ONNX
 * Runtime runs it unfed), so the model has one input and runs as without the listing. */
EB_TEST(initializer_listed_as_input_is_constant)
{
    const struct rz r = {4, {1, 1, 2, 2}, x2, NULL, "linear", "asymmetric", NULL, 0, 0, 1};
    size_t len;
    uint8_t *bytes = build(&r, &len);
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_load(bytes, len, "resize.onnx", NULL, &e, &d));
    struct eb_engine_io io;
    eb_engine_io_info(e, &io);
    ASSERT_EQ_INT((int)io.n_inputs, 1);
    ASSERT_STREQ(io.inputs[0].name, "x");
    eb_engine_destroy(e);
    free(bytes);
    const float c[4] = {0.0f, 0.5f, 1.0f, 1.0f};
    float want[16];
    on_plane(c, 4, c, 4, want);
    expect_plane(&r, 0, 4, 4, want);
}

/* tf_half_pixel_for_nn: (o + 0.5) / 2 = 0.25, 0.75, 1.25 → 1, 1.75 → 1 (clamped). */
EB_TEST(linear_tf_half_pixel_for_nn)
{
    const struct rz r = {4, {1, 1, 2, 2}, x2, NULL, "linear", "tf_half_pixel_for_nn", NULL, 0, 0,
                         0};
    const float c[4] = {0.25f, 0.75f, 1.0f, 1.0f};
    float want[16];
    on_plane(c, 4, c, 4, want);
    expect_plane(&r, 0, 4, 4, want);
}

/* The same models through ONNX Runtime on a random input: equal within 1e-6 (the engine repeats
 * ORT's float arithmetic; observed 0). Includes align_corners downsampling by 0.6, where ONNX
 * 1.12's test data disagrees with ORT (onnx_node_expect.txt). */
EB_TEST(linear_vs_ort)
{
    const struct eb_backend_ops *ops = eb_backend_find("ort");
    struct eb_backend_config cfg = {
        .device = EB_DEVICE_CPU, .threads = 1, .mem_limit_bytes = 1000000000ull};
    struct eb_backend_probe probe;
    struct eb_diag d = {0};
    if (ops == NULL || ops->probe(&cfg, &probe, &d) != EB_OK || !probe.available)
        EB_SKIP("ONNX Runtime not available (%s); run scripts/setup.sh", d.msg);
    static const float s06[4] = {1, 1, 0.6f, 0.6f}, s17[4] = {1, 1, 1.7f, 2.3f};
    static const float s05[4] = {1, 1, 0.5f, 0.37f};
    static const int64_t sz[4] = {1, 8, 33, 21};
    static const char *const coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                         "asymmetric", "tf_half_pixel_for_nn"};
    const float *scales[3] = {x2, s17, s05};
    double worst = 0.0;
    for (size_t c = 0; c < EB_ARRAY_LEN(coords); c++) {
        for (int k = 0; k < 5; k++) {
            struct rz r = {4, {1, 8, 13, 10}, NULL, NULL, "linear", coords[c], NULL, 0, 0, 0};
            if (k < 3)
                r.scales = scales[k];
            else if (k == 3)
                r.sizes = sz;
            else
                r.scales = s06, r.x_dims[2] = 2, r.x_dims[3] = 4;
            const int64_t n = numel(4, r.x_dims);
            float *x = malloc((size_t)n * sizeof(float));
            ASSERT_TRUE(x != NULL);
            uint32_t s = 777u + (uint32_t)(c * 5 + (size_t)k);
            for (int64_t i = 0; i < n; i++) {
                s = s * 1664525u + 1013904223u;
                x[i] = (float)(s >> 8) / 16777216.0f * 8.0f - 4.0f;
            }
            int64_t yd[4];
            float *y = run_native(&r, x, 2, yd);
            size_t len;
            uint8_t *bytes = build(&r, &len);
            struct eb_backend *be = NULL;
            ASSERT_OK(eb_backend_create(ops, &cfg, &be, &d));
            struct eb_model_spec spec = {.path = "resize.onnx", .bytes = bytes, .n_bytes = len};
            struct eb_model_info info;
            struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .data = x};
            memcpy(in.shape, r.x_dims, sizeof(r.x_dims));
            struct eb_tensor out[EB_BACKEND_MAX_IO];
            struct eb_infer_timing t;
            ASSERT_OK(eb_backend_load(be, &spec, &info, &d));
            ASSERT_OK(eb_backend_infer(be, &in, 1, out, info.n_outputs, &t, &d));
            ASSERT_EQ_INT(out[0].rank, 4);
            for (int i = 0; i < 4; i++)
                ASSERT_EQ_INT(out[0].shape[i], yd[i]);
            const float *o = out[0].data;
            double m = 0.0;
            for (int64_t i = 0; i < numel(4, yd); i++) {
                const double dd = fabs((double)y[i] - (double)o[i]);
                m = dd > m ? dd : m;
            }
            if (!(m <= 1e-6))
                EB_FAIL("%s case %d: max abs difference %.3g to ONNX Runtime", coords[c], k, m);
            worst = m > worst ? m : worst;
            eb_backend_destroy(be);
            free(bytes);
            free(y);
            free(x);
        }
    }
    printf("linear Resize, native vs ONNX Runtime: max abs difference %.3g over %zu models\n",
           worst, EB_ARRAY_LEN(coords) * 5);
}

/* What the engine does not implement fails at load, naming node, op, opset and the attribute. */
EB_TEST(linear_refusals_at_load)
{
    static const float s3[3] = {1, 2, 2}, c2[4] = {1, 2, 2, 2};
    static const struct {
        struct rz r;
        const char *text;
    } cases[] = {
        {{4, {1, 1, 2, 2}, x2, NULL, "cubic", NULL, NULL, 0, 0, 0}, "mode 'cubic'"},
        {{4, {1, 1, 2, 2}, x2, NULL, "linear", "tf_crop_and_resize", NULL, 0, 0, 0},
         "coordinate_transformation_mode 'tf_crop_and_resize'"},
        {{4, {1, 1, 2, 2}, x2, NULL, "linear", NULL, "antialias", 1, 18, 0}, "antialias"},
        {{4, {1, 1, 2, 2}, x2, NULL, "linear", NULL, "exclude_outside", 1, 0, 0},
         "exclude_outside"},
        {{3, {1, 2, 2}, s3, NULL, "linear", NULL, NULL, 0, 0, 0}, "mode 'linear' on a 3-D input"},
        {{4, {1, 1, 2, 2}, c2, NULL, "linear", NULL, NULL, 0, 0, 0}, "resizing N or C"},
    };
    for (size_t c = 0; c < EB_ARRAY_LEN(cases); c++) {
        size_t len;
        uint8_t *bytes = build(&cases[c].r, &len);
        struct eb_engine *e = NULL;
        struct eb_diag d = {0};
        ASSERT_EQ_INT(eb_engine_load(bytes, len, "resize.onnx", NULL, &e, &d), EB_ERR_UNSUPPORTED);
        printf("%s\n", d.msg);
        ASSERT_TRUE(e == NULL);
        ASSERT_CONTAINS(d.msg, "resize.onnx");
        ASSERT_CONTAINS(d.msg, "node 0 (the_node): op Resize (opset ");
        ASSERT_CONTAINS(d.msg, cases[c].text);
        ASSERT_CONTAINS(d.msg, "is not supported by the native engine");
        ASSERT_ADVICE(d, EB_ADVICE_OTHER_BACKEND);
        free(bytes);
    }
}
