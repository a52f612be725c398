/*
 * The engine's fusion pass (src/engine/ir/passes_fuse.c): each model is loaded once with every
 * pass and once without EB_ENGINE_PASS_FUSE; the fused graph must run fewer nodes and give the
 * same outputs.
 *
 * Tolerances. Float graphs: |fused - unfused| ≤ 1e-4 · max(1, |unfused|) over every output,
 * i.e. 1e-4 absolute for scores and relative for box coordinates, which are in pixels (at
 * 480 px one float ulp is 3e-5; observed max abs 1.2e-4 there, scores ≤ 1e-5). The fused
 * SiLU computes x / (1 + exp(-x)) where the graph computes x * (1 / (1 + exp(-x))), an ulp
 * apart, and the fast kernels may round a fused epilogue differently from a separate pass.
 * The QDQ model: fusing Conv → QuantizeLinear → DequantizeLinear into the epilogue performs
 * the same arithmetic, but an ulp of difference before a rounding step moves a value by a whole
 * quantisation step, which then propagates; we require class scores (rows 4..) within 0.05 and
 * the mean abs difference over output0 within 0.05, and print both with the max (observed 0:
 * with the reference epilogue the fused arithmetic is bit-identical).
 * Tiny hand-built models check the cases where a fusion must not happen.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb/engine.h"
#include "eb_test.h"
#include "engine/onnx/onnx_wire.h"
#include "model/model.h"
#include "onnx_build.h"

static uint8_t *synth(enum eb_synth_arch arch, int imgsz, size_t *len)
{
    struct eb_synth_options o = {.arch = arch, .scale = 'n', .imgsz = imgsz, .num_classes = 80};
    uint8_t *bytes = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_model_synth(&o, &bytes, len, &d));
    return bytes;
}

static float *random_input(size_t n)
{
    float *x = malloc(n * sizeof(float));
    uint32_t s = 12345u;
    ASSERT_TRUE(x != NULL);
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) / 16777216.0f;
    }
    return x;
}

struct run_result {
    struct eb_engine *e;
    struct eb_engine_exec_info info;
    struct eb_tensor out[EB_ENGINE_MAX_IO];
    size_t n_out;
};

/* Loads `bytes` with `passes` and `isa` and runs it once on a fixed pseudo-random input. */
static void load_and_run(const uint8_t *bytes, size_t len, const char *what, int imgsz,
                         uint32_t passes, const char *isa, struct run_result *r)
{
    struct eb_engine_options opt;
    struct eb_diag d = {0};
    struct eb_engine_io io;
    eb_engine_options_default(&opt);
    opt.imgsz = imgsz;
    opt.passes = passes;
    opt.isa = isa;
    r->e = NULL;
    ASSERT_OK(eb_engine_load(bytes, len, what, &opt, &r->e, &d));
    eb_engine_exec_info_get(r->e, &r->info);
    eb_engine_io_info(r->e, &io);
    ASSERT_EQ_INT(io.n_inputs, 1);
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = io.inputs[0].rank};
    size_t n = 1;
    for (int k = 0; k < in.rank; k++) {
        in.shape[k] = io.inputs[0].shape[k];
        n *= (size_t)in.shape[k];
    }
    in.data = random_input(n);
    r->n_out = io.n_outputs;
    ASSERT_OK(eb_engine_run(r->e, &in, 1, r->out, r->n_out, &d));
    free(in.data);
}

static size_t numel(const struct eb_tensor *t)
{
    size_t n = 1;
    for (int k = 0; k < t->rank; k++)
        n *= (size_t)t->shape[k];
    return n;
}

struct diff {
    double max_abs, max_rel, mean_abs, max_score;
};

/*
 * Differences over every output: max_rel is |a - b| / max(1, |b|) (plain abs for values within
 * ±1); max_score over rows 4.. of a [1, 4 + classes, anchors] output0.
 */
static struct diff compare(const struct run_result *a, const struct run_result *b)
{
    struct diff df = {0};
    size_t total = 0;
    ASSERT_EQ_INT(a->n_out, b->n_out);
    for (size_t o = 0; o < a->n_out; o++) {
        size_t n = numel(&a->out[o]);
        ASSERT_EQ_INT(n, numel(&b->out[o]));
        const float *x = a->out[o].data, *y = b->out[o].data;
        size_t anchors = a->out[o].rank == 3 ? (size_t)a->out[o].shape[2] : 0;
        for (size_t i = 0; i < n; i++) {
            double dd = fabs((double)x[i] - (double)y[i]);
            if (dd != dd)
                dd = INFINITY;
            double ay = fabs((double)y[i]), rel = dd / (ay > 1.0 ? ay : 1.0);
            df.max_abs = dd > df.max_abs ? dd : df.max_abs;
            df.max_rel = rel > df.max_rel ? rel : df.max_rel;
            df.mean_abs += dd;
            if (o == 0 && anchors > 0 && i / anchors >= 4 && dd > df.max_score)
                df.max_score = dd;
        }
        total += n;
    }
    df.mean_abs /= (double)(total > 0 ? total : 1);
    return df;
}

static const uint32_t no_fuse = EB_ENGINE_PASS_ALL & ~(uint32_t)EB_ENGINE_PASS_FUSE;

static void fused_equals_unfused(enum eb_synth_arch arch, const char *name, int imgsz,
                                 const char *isa)
{
    size_t len;
    uint8_t *bytes = synth(arch, imgsz, &len);
    struct run_result f, u;
    load_and_run(bytes, len, name, imgsz, EB_ENGINE_PASS_ALL, isa, &f);
    load_and_run(bytes, len, name, imgsz, no_fuse, isa, &u);
    struct diff df = compare(&f, &u);
    printf("%s-%d isa %s: nodes %zu unfused, %zu fused (%zu absorbed); max abs %.3g, relative to "
           "max(1, |ref|) %.3g\n",
           name, imgsz, f.info.isa, u.info.n_nodes, f.info.n_nodes, f.info.n_fused, df.max_abs,
           df.max_rel);
    ASSERT_EQ_INT(u.info.n_fused, 0);
    ASSERT_TRUE(f.info.n_fused > 0);
    ASSERT_TRUE(f.info.n_nodes < u.info.n_nodes);
    ASSERT_EQ_INT(f.info.n_nodes + f.info.n_fused, u.info.n_nodes);
    ASSERT_TRUE(df.max_rel <= 1e-4);
    eb_engine_destroy(f.e);
    eb_engine_destroy(u.e);
    free(bytes);
}

EB_TEST(fuse_yolov8n_160_ref)
{
    fused_equals_unfused(EB_SYNTH_YOLOV8, "yolov8n", 160, "ref");
}

EB_TEST(fuse_yolov8n_320_default_isa)
{
    fused_equals_unfused(EB_SYNTH_YOLOV8, "yolov8n", 320, NULL);
}

EB_TEST(fuse_yolo11n_160_ref)
{
    fused_equals_unfused(EB_SYNTH_YOLO11, "yolo11n", 160, "ref");
}

EB_TEST(fuse_yolo11n_320_default_isa)
{
    fused_equals_unfused(EB_SYNTH_YOLO11, "yolo11n", 320, NULL);
}

/* How many profiled nodes of e run op `op`. */
static int count_op(const struct eb_engine *e, const char *op)
{
    struct eb_engine_profile prof;
    eb_engine_profile_get(e, &prof);
    int n = 0;
    for (size_t k = 0; k < prof.n_nodes; k++)
        n += strcmp(prof.nodes[k].op, op) == 0;
    return n;
}

/* The DFL decode (Reshape → Transpose → Softmax → 1x1 Conv → Reshape) becomes one edgebench.DFL
 * node in both YOLO heads; the attention's Softmax (yolo11n) stays; outputs as unfused. */
EB_TEST(fuse_dfl_into_one_node)
{
    for (int arch = 0; arch < 2; arch++) {
        size_t len;
        uint8_t *bytes = synth(arch ? EB_SYNTH_YOLO11 : EB_SYNTH_YOLOV8, 160, &len);
        struct eb_engine *e[2] = {NULL, NULL};
        float *in = random_input(3 * 160 * 160);
        struct eb_tensor x = {
            .dtype = EB_DTYPE_F32, .rank = 4, .shape = {1, 3, 160, 160}, .data = in};
        struct eb_tensor out[2][EB_ENGINE_MAX_IO];
        for (int f = 0; f < 2; f++) {
            struct eb_engine_options opt;
            struct eb_diag d = {0};
            eb_engine_options_default(&opt);
            opt.imgsz = 160;
            opt.profile = 1;
            opt.passes = f ? EB_ENGINE_PASS_ALL : no_fuse;
            ASSERT_OK(eb_engine_load(bytes, len, "dfl", &opt, &e[f], &d));
            ASSERT_OK(eb_engine_run(e[f], &x, 1, out[f], 1, &d));
        }
        ASSERT_EQ_INT(count_op(e[1], "edgebench.DFL"), 1);
        ASSERT_EQ_INT(count_op(e[0], "edgebench.DFL"), 0);
        ASSERT_EQ_INT(count_op(e[1], "Softmax"), arch ? 1 : 0);
        ASSERT_EQ_INT(count_op(e[0], "Softmax"), arch ? 2 : 1);
        const float *a = out[1][0].data, *b = out[0][0].data;
        double max_d = 0.0;
        for (size_t i = 0; i < numel(&out[0][0]); i++) {
            const double dd = fabs((double)a[i] - (double)b[i]);
            max_d = dd > max_d ? dd : max_d;
        }
        printf("%s-160: fused DFL vs unfused: max abs %.3g over output0\n",
               arch ? "yolo11n" : "yolov8n", max_d);
        ASSERT_TRUE(max_d <= 1e-3);
        eb_engine_destroy(e[0]);
        eb_engine_destroy(e[1]);
        free(in);
        free(bytes);
    }
}

/* A model of the shared folder, fused and unfused: at least `min_fused` nodes absorbed, the node
 * counts consistent, outputs within the int8 tolerance (see the note at the top of the file). */
static void fused_vs_unfused_shared(const char *name, int imgsz, size_t min_fused, double max_score)
{
    const char *dir = eb_test_shared_data();
    char path[1024];
    size_t len;
    if (dir == NULL)
        EB_SKIP("shared data folder absent");
    snprintf(path, sizeof(path), "%s/models/%s.onnx", dir, name);
    uint8_t *bytes = (uint8_t *)eb_test_read_file(path, &len);
    if (bytes == NULL)
        EB_SKIP("%s is absent", path);
    struct run_result f, u;
    load_and_run(bytes, len, name, imgsz, EB_ENGINE_PASS_ALL, NULL, &f);
    load_and_run(bytes, len, name, imgsz, no_fuse, NULL, &u);
    struct diff df = compare(&f, &u);
    printf("%s isa %s: nodes %zu unfused, %zu fused (%zu absorbed); max abs %.3g, scores max "
           "%.3g, mean abs %.3g\n",
           name, f.info.isa, u.info.n_nodes, f.info.n_nodes, f.info.n_fused, df.max_abs,
           df.max_score, df.mean_abs);
    ASSERT_TRUE(f.info.n_fused >= min_fused);
    ASSERT_EQ_INT(f.info.n_nodes + f.info.n_fused, u.info.n_nodes);
    ASSERT_TRUE(df.max_score <= max_score);
    ASSERT_TRUE(df.mean_abs <= 0.05);
    eb_engine_destroy(f.e);
    eb_engine_destroy(u.e);
    free(bytes);
}

EB_TEST(fuse_qdq_model)
{
    fused_vs_unfused_shared("yolov8n_int8_qdq", 640, 1, 0.05);
}

/* The dynamic int8 model: each ConvInteger's Cast → Mul(scale) → Add(bias) becomes one
 * edgebench.DequantizeI32 node, into which the SiLU (Sigmoid + Mul) then fuses as well: 64
 * ConvInteger tails (Mul + Add each), 57 of them with a SiLU (Sigmoid + Mul). */
EB_TEST(fuse_dynamic_int8_model)
{
    fused_vs_unfused_shared("yolov8n_320_int8_dynamic", 320, 64 * 2 + 57 * 2, 0.02);
}

/* ---- tiny hand-built models: x [1,2,2,2] and 1x1 convolutions --------------------------- */

struct tiny_node {
    const char *op, *name;
    const char *in[3];
    const char *out;
};

static void put_dims(struct eb_pb_buf *b, uint32_t field, int rank, const int64_t *dims)
{
    for (int i = 0; i < rank; i++)
        eb_pb_put_varint(b, field, dims[i]);
}

static void put_value_info(struct eb_pb_buf *g, uint32_t field, const char *name)
{
    static const int64_t dims[4] = {1, 2, 2, 2};
    eb_test_put_value_info(g, field, name, 1 /* float */, 4, dims);
}

static void put_init(struct eb_pb_buf *g, const char *name, int rank, const int64_t *dims,
                     const float *data, size_t n)
{
    struct eb_pb_buf t;
    eb_pb_buf_init(&t);
    put_dims(&t, 1, rank, dims);
    eb_pb_put_varint(&t, 2, 1); /* float */
    eb_pb_put_str(&t, 8, name);
    eb_pb_put_bytes(&t, 9, data, n * sizeof(float));
    eb_pb_put_msg(g, 5, &t);
    eb_pb_buf_fini(&t);
}

/* Weights of the tiny models: w1 and w2 [2,2,1,1]; lo = 1 and hi = 0 (scalars, for Clip). */
static const float tiny_w1[4] = {0.5f, -1.0f, 2.0f, 0.25f};
static const float tiny_w2[4] = {-0.75f, 1.5f, 0.125f, -2.0f};

static uint8_t *tiny_graph(const struct tiny_node *nodes, size_t n_nodes,
                           const char *const *outputs, size_t n_outputs, size_t *len)
{
    struct eb_pb_buf m, g, os;
    const int64_t wdims[4] = {2, 2, 1, 1};
    const float lo = 1.0f, hi = 0.0f;
    eb_pb_buf_init(&m);
    eb_pb_buf_init(&g);
    eb_pb_buf_init(&os);
    for (size_t k = 0; k < n_nodes; k++) {
        struct eb_pb_buf n;
        eb_pb_buf_init(&n);
        for (int i = 0; i < 3 && nodes[k].in[i] != NULL; i++)
            eb_pb_put_str(&n, 1, nodes[k].in[i]);
        eb_pb_put_str(&n, 2, nodes[k].out);
        eb_pb_put_str(&n, 3, nodes[k].name);
        eb_pb_put_str(&n, 4, nodes[k].op);
        eb_pb_put_msg(&g, 1, &n);
        eb_pb_buf_fini(&n);
    }
    eb_pb_put_str(&g, 2, "tiny_fuse");
    put_init(&g, "w1", 4, wdims, tiny_w1, 4);
    put_init(&g, "w2", 4, wdims, tiny_w2, 4);
    put_init(&g, "lo", 0, NULL, &lo, 1);
    put_init(&g, "hi", 0, NULL, &hi, 1);
    put_value_info(&g, 11, "x");
    for (size_t i = 0; i < n_outputs; i++)
        put_value_info(&g, 12, outputs[i]);
    eb_pb_put_varint(&os, 2, 17);
    eb_pb_put_varint(&m, 1, 8);
    eb_pb_put_msg(&m, 7, &g);
    eb_pb_put_msg(&m, 8, &os);
    ASSERT_TRUE(!eb_pb_buf_error(&m));
    uint8_t *bytes = eb_pb_buf_take(&m, len);
    eb_pb_buf_fini(&m);
    eb_pb_buf_fini(&g);
    eb_pb_buf_fini(&os);
    return bytes;
}

static const float tiny_x[8] = {1.0f, -2.0f, 0.5f, 3.0f, -1.5f, 0.25f, 2.0f, -0.5f};

/* 1x1 convolution of tiny_x [2 channels, 4 pixels] with w [2,2]. */
static void conv1x1(const float *w, double *y)
{
    for (int o = 0; o < 2; o++)
        for (int p = 0; p < 4; p++)
            y[o * 4 + p] = (double)w[o * 2] * tiny_x[p] + (double)w[o * 2 + 1] * tiny_x[4 + p];
}

static double silu(double v)
{
    return v / (1.0 + exp(-v));
}

/* Loads and runs a tiny model on tiny_x; returns the engine (outputs in out[]). */
static struct eb_engine *tiny_run(const uint8_t *bytes, size_t len,
                                  struct eb_engine_exec_info *info, struct eb_tensor *out,
                                  size_t n_out)
{
    struct eb_engine_options opt;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    eb_engine_options_default(&opt);
    opt.profile = 1;
    ASSERT_OK(eb_engine_load(bytes, len, "tiny_fuse", &opt, &e, &d));
    eb_engine_exec_info_get(e, info);
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .shape = {1, 2, 2, 2}};
    in.data = (void *)tiny_x;
    ASSERT_OK(eb_engine_run(e, &in, 1, out, n_out, &d));
    return e;
}

EB_TEST(fuse_not_across_graph_output)
{
    /* c = Conv(x) is a graph output: SiLU must not be fused, and c must still be there. */
    const struct tiny_node nodes[] = {
        {"Conv", "conv", {"x", "w1", NULL}, "c"},
        {"Sigmoid", "sig", {"c", NULL, NULL}, "s"},
        {"Mul", "mul", {"s", "c", NULL}, "y"},
    };
    const char *const outs[] = {"y", "c"};
    size_t len;
    uint8_t *bytes = tiny_graph(nodes, 3, outs, 2, &len);
    struct eb_engine_exec_info info;
    struct eb_tensor out[2];
    struct eb_engine *e = tiny_run(bytes, len, &info, out, 2);
    double c[8];
    conv1x1(tiny_w1, c);
    ASSERT_EQ_INT(info.n_fused, 0);
    ASSERT_EQ_INT(info.n_nodes, 3);
    for (int i = 0; i < 8; i++) {
        ASSERT_NEAR(((const float *)out[0].data)[i], silu(c[i]), 1e-5);
        ASSERT_NEAR(((const float *)out[1].data)[i], c[i], 1e-5);
    }
    eb_engine_destroy(e);
    free(bytes);
}

EB_TEST(fuse_not_when_conv_output_used_twice)
{
    /* c feeds the Sigmoid, the Mul and the Add: no fusion may take it. */
    const struct tiny_node nodes[] = {
        {"Conv", "conv", {"x", "w1", NULL}, "c"},
        {"Sigmoid", "sig", {"c", NULL, NULL}, "s"},
        {"Mul", "mul", {"c", "s", NULL}, "m"},
        {"Add", "add", {"m", "c", NULL}, "y"},
    };
    const char *const outs[] = {"y"};
    size_t len;
    uint8_t *bytes = tiny_graph(nodes, 4, outs, 1, &len);
    struct eb_engine_exec_info info;
    struct eb_tensor out[1];
    struct eb_engine *e = tiny_run(bytes, len, &info, out, 1);
    double c[8];
    conv1x1(tiny_w1, c);
    ASSERT_EQ_INT(info.n_fused, 0);
    ASSERT_EQ_INT(info.n_nodes, 4);
    for (int i = 0; i < 8; i++)
        ASSERT_NEAR(((const float *)out[0].data)[i], silu(c[i]) + c[i], 1e-5);
    eb_engine_destroy(e);
    free(bytes);
}

EB_TEST(fuse_residual_only_into_the_later_conv)
{
    /* Add(c1, c2): c2 is not ready when conv1 runs, so only conv2 may take the Add. */
    const struct tiny_node nodes[] = {
        {"Conv", "conv1", {"x", "w1", NULL}, "c1"},
        {"Conv", "conv2", {"x", "w2", NULL}, "c2"},
        {"Add", "add", {"c1", "c2", NULL}, "y"},
    };
    const char *const outs[] = {"y"};
    size_t len;
    uint8_t *bytes = tiny_graph(nodes, 3, outs, 1, &len);
    struct eb_engine_exec_info info;
    struct eb_tensor out[1];
    struct eb_engine *e = tiny_run(bytes, len, &info, out, 1);
    double c1[8], c2[8];
    conv1x1(tiny_w1, c1);
    conv1x1(tiny_w2, c2);
    ASSERT_EQ_INT(info.n_fused, 1);
    ASSERT_EQ_INT(info.n_nodes, 2);
    struct eb_engine_profile prof;
    eb_engine_profile_get(e, &prof);
    ASSERT_EQ_INT(prof.n_nodes, 2);
    ASSERT_STREQ(prof.nodes[0].name, "conv1");
    ASSERT_STREQ(prof.nodes[0].fused, "");
    ASSERT_STREQ(prof.nodes[1].name, "conv2");
    ASSERT_STREQ(prof.nodes[1].fused, "add");
    for (int i = 0; i < 8; i++)
        ASSERT_NEAR(((const float *)out[0].data)[i], c1[i] + c2[i], 1e-5);
    eb_engine_destroy(e);
    free(bytes);
}

EB_TEST(fuse_clip_with_min_above_max_is_kept)
{
    /* Clip(c, 1, 0): ONNX gives max (0) everywhere; the epilogue's clip would not. */
    const struct tiny_node nodes[] = {
        {"Conv", "conv", {"x", "w1", NULL}, "c"},
        {"Clip", "clip", {"c", "lo", "hi"}, "y"},
    };
    const char *const outs[] = {"y"};
    size_t len;
    uint8_t *bytes = tiny_graph(nodes, 2, outs, 1, &len);
    struct eb_engine_exec_info info;
    struct eb_tensor out[1];
    struct eb_engine *e = tiny_run(bytes, len, &info, out, 1);
    ASSERT_EQ_INT(info.n_fused, 0);
    for (int i = 0; i < 8; i++)
        ASSERT_NEAR(((const float *)out[0].data)[i], 0.0, 0.0);
    eb_engine_destroy(e);
    free(bytes);
}

EB_TEST(fuse_conv_silu_add_tiny)
{
    /* conv2 → SiLU → Add(c1): all three fuse into conv2 ("silu+add"). */
    const struct tiny_node nodes[] = {
        {"Conv", "conv1", {"x", "w1", NULL}, "c1"},  {"Conv", "conv2", {"x", "w2", NULL}, "c2"},
        {"Sigmoid", "sig", {"c2", NULL, NULL}, "s"}, {"Mul", "mul", {"c2", "s", NULL}, "m"},
        {"Add", "add", {"c1", "m", NULL}, "y"},
    };
    const char *const outs[] = {"y"};
    size_t len;
    uint8_t *bytes = tiny_graph(nodes, 5, outs, 1, &len);
    struct eb_engine_exec_info info;
    struct eb_tensor out[1];
    struct eb_engine *e = tiny_run(bytes, len, &info, out, 1);
    double c1[8], c2[8];
    conv1x1(tiny_w1, c1);
    conv1x1(tiny_w2, c2);
    ASSERT_EQ_INT(info.n_fused, 3);
    ASSERT_EQ_INT(info.n_nodes, 2);
    struct eb_engine_profile prof;
    eb_engine_profile_get(e, &prof);
    ASSERT_STREQ(prof.nodes[1].fused, "silu+add");
    for (int i = 0; i < 8; i++)
        ASSERT_NEAR(((const float *)out[0].data)[i], silu(c2[i]) + c1[i], 1e-5);
    eb_engine_destroy(e);
    free(bytes);
}
