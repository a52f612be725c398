/* Model profiles (yolo/profile.h, model/head_graph.c): recognition of every shared model's head
 * and of synthesized heads, --head forcing, the key = value profile file, and the profiles'
 * preprocessing (yolo/yolo.h eb_letterbox_to_nchw_f32_norm) against hand-computed pixels.
 * (tests/unit/test_profile.c is the --profile per-operator profiler's.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb_test.h"
#include "model/model.h"
#include "onnx_build.h"
#include "yolo/profile.h"

/* ---- helpers ------------------------------------------------------------------------------- */

/* The head graph of a shared model file (skips when the data is absent). Ultralytics exports
 * carry the 80 COCO names in their metadata; the fp32 models carry none. */
static void shared_graph(const char *rel, struct eb_head_graph *g)
{
    const char *data = eb_test_shared_data();
    if (data == NULL)
        EB_SKIP("../shared/data is absent (needed for %s)", rel);
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", data, rel);
    uint8_t *bytes = NULL;
    size_t len = 0;
    struct eb_diag d = {0};
    ASSERT_OK(eb_model_read_file(path, &bytes, &len, &d));
    ASSERT_OK(eb_model_head_graph(bytes, len, rel, g, &d));
    free(bytes);
    g->n_class_names = g->ultralytics ? 80 : 0;
}

/* The head graph of a synthesized preset (onnx_build.h), `n_names` class names. */
static void synth_graph(const char *preset, struct eb_head_graph *g)
{
    struct eb_test_head_model m;
    ASSERT_TRUE(eb_test_head_model_preset(preset, &m));
    size_t len = 0;
    uint8_t *bytes = eb_test_head_model_build(&m, &len);
    ASSERT_TRUE(bytes != NULL);
    struct eb_diag d = {0};
    ASSERT_OK(eb_model_head_graph(bytes, len, preset, g, &d));
    free(bytes);
    ASSERT_EQ_INT(g->in_w, m.in_w);
    ASSERT_EQ_INT(g->in_h, m.in_h);
    ASSERT_EQ_INT(g->n_outputs, m.n_outputs);
    g->n_class_names = (size_t)m.n_names;
}

static void resolve_auto(const struct eb_head_graph *g, struct eb_model_profile *p)
{
    struct eb_diag d = {0};
    enum eb_status st = eb_profile_resolve(g, NULL, p, &d);
    if (st != EB_OK)
        EB_FAIL("eb_profile_resolve: %s", d.msg);
    ASSERT_STREQ(p->source, "built-in");
}

static void expect_head(const struct eb_model_profile *p, enum eb_head_kind kind,
                        const char *family, int num_classes)
{
    ASSERT_EQ_INT(p->head.kind, kind);
    ASSERT_STREQ(p->family, family);
    ASSERT_EQ_INT(p->head.num_classes, num_classes);
}

static void expect_levels(const struct eb_head *h, int n, const int *strides, const int *grids)
{
    ASSERT_EQ_INT(h->n_levels, n);
    for (int l = 0; l < n; l++) {
        ASSERT_EQ_INT(h->strides[l], strides[l]);
        ASSERT_EQ_INT(h->grid_w[l], grids[l]);
        ASSERT_EQ_INT(h->grid_h[l], grids[l]);
    }
}

static void expect_norm(const struct eb_model_profile *p, int bgr, int pad, const float *mean,
                        const float *std, enum eb_resize resize, int area)
{
    ASSERT_EQ_INT(p->norm.bgr, bgr);
    ASSERT_EQ_INT(p->norm.pad, pad);
    for (int c = 0; c < 3; c++) {
        ASSERT_NEAR(p->norm.mean[c], mean[c], 1e-4);
        ASSERT_NEAR(p->norm.std[c], std[c], 1e-4);
    }
    ASSERT_EQ_INT(p->resize, resize);
    ASSERT_EQ_INT(p->norm.area, area);
}

static const float zero3[3] = {0, 0, 0}, s255[3] = {255, 255, 255}, one3[3] = {1, 1, 1};
static const int s8_32[3] = {8, 16, 32};

/* ---- recognition of the shared models ------------------------------------------------------ */

EB_TEST(shared_ultralytics_models_are_v8)
{
    static const struct {
        const char *file;
        int size;
        size_t boxes;
    } m[] = {{"models/yolo11n_320_int8_dynamic.onnx", 320, 2100},
             {"models/yolov8n_320_int8_dynamic.onnx", 320, 2100},
             {"models/yolov8n_int8_dynamic.onnx", 640, 8400},
             {"models/yolov8n_int8_qdq.onnx", 640, 8400}};
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
        struct eb_head_graph g;
        struct eb_model_profile p;
        shared_graph(m[i].file, &g);
        ASSERT_TRUE(g.ultralytics);
        ASSERT_EQ_INT(g.in_w, m[i].size);
        resolve_auto(&g, &p);
        expect_head(&p, EB_HEAD_V8, "ultralytics", 80);
        ASSERT_EQ_INT(p.head.num_boxes, m[i].boxes);
        ASSERT_CONTAINS(p.why, "Ultralytics metadata");
        expect_norm(&p, 0, 114, zero3, s255, EB_RESIZE_LETTERBOX, 0);
        eb_profile_fini(&p);
    }
}

EB_TEST(shared_yolox_nano)
{
    struct eb_head_graph g;
    struct eb_model_profile p;
    shared_graph("models-fp32/yolox_nano_416_fp32.onnx", &g);
    /* Box offsets straight from a Conv beside sigmoid scores. */
    ASSERT_EQ_INT(g.out[0].ends & (EB_HEAD_END_LAYER | EB_HEAD_END_SIGMOID | EB_HEAD_END_DECODE),
                  EB_HEAD_END_LAYER | EB_HEAD_END_SIGMOID);
    resolve_auto(&g, &p);
    expect_head(&p, EB_HEAD_YOLOX, "yolox", 80);
    expect_levels(&p.head, 3, s8_32, (const int[]){52, 26, 13});
    ASSERT_EQ_INT(p.head.num_boxes, 3549);
    ASSERT_EQ_INT(p.head.n_anchors, 0);
    ASSERT_EQ_INT(p.head.sigmoid, 0); /* sigmoid in the graph */
    /* BGR, raw 0-255, top-left letterbox on a 114 canvas, bilinear. */
    expect_norm(&p, 1, 114, zero3, one3, EB_RESIZE_LETTERBOX_TOPLEFT, 0);
    eb_profile_fini(&p);
}

EB_TEST(shared_nanodet_m)
{
    struct eb_head_graph g;
    struct eb_model_profile p;
    shared_graph("models-fp32/nanodet_m_416_fp32.onnx", &g);
    resolve_auto(&g, &p);
    expect_head(&p, EB_HEAD_NANODET, "nanodet", 80);
    expect_levels(&p.head, 3, s8_32, (const int[]){52, 26, 13});
    ASSERT_EQ_INT(p.head.reg_max, 7);
    ASSERT_EQ_INT(p.head.num_boxes, 3549);
    ASSERT_EQ_INT(p.head.n_outputs, 6);
    /* Picked by shape, not order: scores 792/814/836, distributions 795/817/839 (MANIFEST). */
    static const char *const names[6] = {"792", "814", "836", "795", "817", "839"};
    for (int i = 0; i < 6; i++)
        ASSERT_STREQ(g.out[p.head.out_index[i]].name, names[i]);
    const float mean[3] = {103.53f, 116.28f, 123.675f}, std[3] = {57.375f, 57.12f, 58.395f};
    expect_norm(&p, 1, 0, mean, std, EB_RESIZE_LETTERBOX, 1);
    eb_profile_fini(&p);
}

EB_TEST(shared_yolov5lite_e)
{
    struct eb_head_graph g;
    struct eb_model_profile p;
    shared_graph("models-fp32/yolov5lite_e_320_fp32.onnx", &g);
    resolve_auto(&g, &p);
    expect_head(&p, EB_HEAD_V5_RAW, "yolov5-raw", 80);
    expect_levels(&p.head, 3, s8_32, (const int[]){40, 20, 10});
    ASSERT_EQ_INT(p.head.n_anchors, 3);
    static const float anchors[3][3][2] = {{{10, 13}, {16, 30}, {33, 23}},
                                           {{30, 61}, {62, 45}, {59, 119}},
                                           {{116, 90}, {156, 198}, {373, 326}}};
    ASSERT_TRUE(memcmp(p.head.anchors, anchors, sizeof(anchors)) == 0);
    ASSERT_EQ_INT(p.head.num_boxes, 6300);
    ASSERT_EQ_INT(p.head.sigmoid, 0); /* all 85 channels sigmoid in the graph */
    /* RGB /255, centred letterbox pad 114 (YOLOv5's loader shrinks by INTER_AREA). */
    expect_norm(&p, 0, 114, zero3, s255, EB_RESIZE_LETTERBOX, 1);
    eb_profile_fini(&p);
}

EB_TEST(shared_yolo_fastestv2)
{
    struct eb_head_graph g;
    struct eb_model_profile p;
    shared_graph("models-fp32/yolo_fastestv2_352_fp32.onnx", &g);
    resolve_auto(&g, &p);
    expect_head(&p, EB_HEAD_FASTESTV2, "yolo-fastestv2", 80);
    expect_levels(&p.head, 2, (const int[]){16, 32}, (const int[]){22, 11});
    ASSERT_EQ_INT(p.head.n_anchors, 3);
    ASSERT_NEAR(p.head.anchors[0][0][0], 12.64, 1e-4);
    ASSERT_NEAR(p.head.anchors[1][2][1], 258.87, 1e-4);
    ASSERT_EQ_INT(p.head.num_boxes, 3 * (22 * 22 + 11 * 11));
    ASSERT_EQ_INT(p.head.n_outputs, 2);
    ASSERT_STREQ(g.out[p.head.out_index[0]].name, "794");
    ASSERT_STREQ(g.out[p.head.out_index[1]].name, "796");
    /* BGR /255, plain resize, INTER_LINEAR. */
    expect_norm(&p, 1, 114, zero3, s255, EB_RESIZE_STRETCH, 0);
    eb_profile_fini(&p);
}

EB_TEST(shared_fastestdet)
{
    struct eb_head_graph g;
    struct eb_model_profile p;
    shared_graph("models-fp32/fastestdet_352_fp32.onnx", &g);
    resolve_auto(&g, &p);
    expect_head(&p, EB_HEAD_FASTESTDET, "fastestdet", 80);
    expect_levels(&p.head, 1, (const int[]){16}, (const int[]){22});
    ASSERT_EQ_INT(p.head.num_boxes, 484);
    ASSERT_EQ_INT(p.head.nms_agnostic, 1);
    /* BGR /255, plain resize with INTER_AREA. */
    expect_norm(&p, 1, 114, zero3, s255, EB_RESIZE_STRETCH, 1);
    eb_profile_fini(&p);
}

/* ---- recognition of synthesized heads ------------------------------------------------------ */

EB_TEST(detr_softmax_logits)
{
    struct eb_head_graph g;
    struct eb_model_profile p;
    synth_graph("detr", &g);
    ASSERT_EQ_INT(g.out[0].ends, EB_HEAD_END_LAYER);
    ASSERT_EQ_INT(g.out[1].ends, EB_HEAD_END_SIGMOID);
    resolve_auto(&g, &p);
    ASSERT_EQ_INT(p.head.kind, EB_HEAD_DETR);
    ASSERT_STREQ(p.family, "detr");
    /* 92 logits = 91 COCO ids + no-object. */
    ASSERT_EQ_INT(p.head.detr_softmax, 1);
    ASSERT_EQ_INT(p.head.num_classes, 91);
    ASSERT_EQ_INT(p.head.num_boxes, 100);
    ASSERT_EQ_INT(p.head.n_outputs, 2);
    ASSERT_EQ_INT(p.head.out_index[0], 0);
    ASSERT_EQ_INT(p.head.out_index[1], 1);
    const float mean[3] = {123.675f, 116.28f, 103.53f}, std[3] = {58.395f, 57.12f, 57.375f};
    expect_norm(&p, 0, 0, mean, std, EB_RESIZE_STRETCH, 0);
    eb_profile_fini(&p);
}

EB_TEST(detr_sigmoid_scores_boxes_first)
{
    struct eb_head_graph g;
    struct eb_model_profile p;
    synth_graph("detr-sigmoid", &g);
    resolve_auto(&g, &p);
    ASSERT_EQ_INT(p.head.kind, EB_HEAD_DETR);
    ASSERT_EQ_INT(p.head.detr_softmax, 0);
    ASSERT_EQ_INT(p.head.num_classes, 80);
    ASSERT_EQ_INT(p.head.num_boxes, 300);
    ASSERT_EQ_INT(p.head.out_index[0], 1); /* scores are the second output */
    ASSERT_EQ_INT(p.head.out_index[1], 0);
    ASSERT_CONTAINS(p.why, "scores [1,300,80]");
    eb_profile_fini(&p);
}

EB_TEST(end2end_head)
{
    struct eb_head_graph g;
    struct eb_model_profile p;
    synth_graph("end2end", &g);
    resolve_auto(&g, &p);
    expect_head(&p, EB_HEAD_END2END, "end2end", 80);
    ASSERT_EQ_INT(p.head.num_boxes, 300);
    expect_norm(&p, 0, 114, zero3, s255, EB_RESIZE_LETTERBOX, 0);
    eb_profile_fini(&p);
}

EB_TEST(v5_decoded_in_graph_vs_raw)
{
    struct eb_head_graph g;
    struct eb_model_profile p;
    synth_graph("v5", &g);
    ASSERT_TRUE(g.out[0].ends & EB_HEAD_END_DECODE);
    resolve_auto(&g, &p);
    expect_head(&p, EB_HEAD_V5, "yolov5", 80);
    ASSERT_EQ_INT(p.head.num_boxes, 252);
    eb_profile_fini(&p);

    synth_graph("v5-raw", &g);
    ASSERT_EQ_INT(g.out[0].ends, EB_HEAD_END_SIGMOID);
    resolve_auto(&g, &p);
    ASSERT_EQ_INT(p.head.kind, EB_HEAD_V5_RAW);
    ASSERT_STREQ(p.family, "yolov5-raw");
    expect_levels(&p.head, 3, s8_32, (const int[]){8, 4, 2});
    ASSERT_EQ_INT(p.head.n_anchors, 3);
    ASSERT_EQ_INT(p.head.sigmoid, 0);
    eb_profile_fini(&p);

    /* The same head without its Sigmoid: the decoder applies it. */
    g.out[0].ends = EB_HEAD_END_LAYER;
    resolve_auto(&g, &p);
    ASSERT_EQ_INT(p.head.kind, EB_HEAD_V5_RAW);
    ASSERT_EQ_INT(p.head.sigmoid, 1);
    eb_profile_fini(&p);
}

EB_TEST(unknown_layout_is_refused_with_the_outputs_listed)
{
    struct eb_head_graph g;
    struct eb_model_profile p;
    struct eb_diag d = {0};
    synth_graph("unknown", &g);
    ASSERT_EQ_INT(eb_profile_resolve(&g, NULL, &p, &d), EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "no head adapter recognises");
    ASSERT_CONTAINS(d.msg, "mystery [1,7,3]");
    ASSERT_CONTAINS(d.msg, "--head v8|v5|v5-raw|yolox|nanodet|fastestdet|fastestv2|end2end|detr");
    ASSERT_CONTAINS(d.msg, "--model_profile");
    eb_profile_fini(&p); /* safe after a failure */
}

EB_TEST(head_forcing_fits_or_says_why_not)
{
    struct eb_head_graph g;
    struct eb_model_profile p;
    struct eb_diag d = {0};
    synth_graph("v5", &g);
    struct eb_profile_request req = {.head = "v5-raw"};
    ASSERT_OK(eb_profile_resolve(&g, &req, &p, &d));
    ASSERT_EQ_INT(p.head.kind, EB_HEAD_V5_RAW);
    ASSERT_STREQ(p.family, "yolov5-raw");
    ASSERT_STREQ(p.source, "--head");
    ASSERT_CONTAINS(p.why, "--head v5-raw");
    eb_profile_fini(&p);

    synth_graph("detr", &g);
    req.head = "v8";
    ASSERT_EQ_INT(eb_profile_resolve(&g, &req, &p, &d), EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "--head v8 does not fit");
    ASSERT_CONTAINS(d.msg, "logits [1,100,92], boxes [1,100,4]");
    ASSERT_CONTAINS(d.msg, "needs an output [1,4+nc,N]");

    struct eb_diag d2 = {0};
    req.head = "yolov9";
    ASSERT_EQ_INT(eb_profile_resolve(&g, &req, &p, &d2), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d2.msg, "--head yolov9 is not an adapter");
}

/* ---- the profile file ---------------------------------------------------------------------- */

EB_TEST(profile_file_applies_every_key)
{
    struct eb_head_graph g;
    struct eb_model_profile p;
    struct eb_diag d = {0};
    synth_graph("v5", &g);
    const char *text = "# a YOLOv5 variant described by hand\n"
                       "name = my-v5\n"
                       "head = v5-raw   # force the raw decoder\n"
                       "\n"
                       "color = bgr\n"
                       "scale = 1\n"
                       "mean = 1, 2, 3\n"
                       "std = 4 5 6\n"
                       "resize = letterbox_topleft\n"
                       "interp = area\n"
                       "pad = 7\n"
                       "strides = 8, 16, 32\n"
                       "anchors = 1,2, 3,4, 5,6; 7,8, 9,10, 11,12; 13,14, 15,16, 17,18\n"
                       "sigmoid = decoder\n"
                       "nms = agnostic\n"
                       "names = cat, dog , bird\n";
    struct eb_profile_request req = {.file_text = text, .file_name = "my.profile"};
    ASSERT_OK(eb_profile_resolve(&g, &req, &p, &d));
    ASSERT_STREQ(p.family, "my-v5");
    ASSERT_STREQ(p.source, "profile file");
    ASSERT_CONTAINS(p.why, "settings from my.profile");
    ASSERT_EQ_INT(p.head.kind, EB_HEAD_V5_RAW);
    expect_norm(&p, 1, 7, (const float[]){1, 2, 3}, (const float[]){4, 5, 6},
                EB_RESIZE_LETTERBOX_TOPLEFT, 1);
    expect_levels(&p.head, 3, s8_32, (const int[]){8, 4, 2});
    ASSERT_EQ_INT(p.head.n_anchors, 3);
    ASSERT_NEAR(p.head.anchors[0][0][0], 1, 0);
    ASSERT_NEAR(p.head.anchors[1][1][1], 10, 0);
    ASSERT_NEAR(p.head.anchors[2][2][1], 18, 0);
    ASSERT_EQ_INT(p.head.sigmoid, 1);
    ASSERT_EQ_INT(p.head.nms_agnostic, 1);
    ASSERT_EQ_INT(p.n_names, 3);
    ASSERT_STREQ(p.names[0], "cat");
    ASSERT_STREQ(p.names[1], "dog");
    ASSERT_STREQ(p.names[2], "bird");
    char pre[160];
    eb_profile_describe_pre(&p, pre, sizeof(pre));
    ASSERT_STREQ(pre, "BGR mean 1,2,3 std 4,5,6, letterbox top-left (area), pad 7");
    eb_profile_fini(&p); /* frees the names (ASan) */
    ASSERT_TRUE(p.names == NULL && p.n_names == 0);

    /* scale = 1/255 and strides that move the levels: the same model as 2 levels? No: the
     * cells of strides 8,16 (64 + 16) times 3 are not its 252 rows, so v5-raw does not fit. */
    struct eb_diag d2 = {0};
    req.file_text = "head = v5-raw\nscale = 1/255\nstrides = 8, 16\n"
                    "anchors = 1,2, 3,4, 5,6; 7,8, 9,10, 11,12\n";
    ASSERT_EQ_INT(eb_profile_resolve(&g, &req, &p, &d2), EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(d2.msg, "the profile's head v5-raw does not fit");
    ASSERT_CONTAINS(d2.msg, "252 rows are not 3 x the 80 cells of strides 8..16");
}

EB_TEST(profile_file_reg_max_and_detr_scores)
{
    struct eb_head_graph g;
    struct eb_model_profile p;
    struct eb_diag d = {0};
    synth_graph("detr", &g);
    struct eb_profile_request req = {.file_text = "detr_scores = sigmoid\n", .file_name = "f"};
    ASSERT_OK(eb_profile_resolve(&g, &req, &p, &d));
    ASSERT_EQ_INT(p.head.detr_softmax, 0);
    ASSERT_EQ_INT(p.head.num_classes, 92); /* every logit a class when sigmoid */
    eb_profile_fini(&p);

    /* reg_max is checked against the NanoDet model's bins (8 per side = reg_max 7). */
    shared_graph("models-fp32/nanodet_m_416_fp32.onnx", &g);
    req.file_text = "reg_max = 7\n";
    ASSERT_OK(eb_profile_resolve(&g, &req, &p, &d));
    ASSERT_EQ_INT(p.head.reg_max, 7);
    eb_profile_fini(&p);
    req.file_text = "reg_max = 15\n";
    ASSERT_EQ_INT(eb_profile_resolve(&g, &req, &p, &d), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d.msg, "model profile f: reg_max 15");
    ASSERT_CONTAINS(d.msg, "8 bins per side");
}

EB_TEST(profile_file_bad_lines_name_file_line_and_key)
{
    static const struct {
        const char *text;
        const char *want[2];
    } bad[] = {
        {"name = x\ncolour = bgr\n", {"p.txt line 2: unknown key colour", "keys: name, head"}},
        {"# c\n\nresize stretch\n", {"p.txt line 3: expected key = value", ""}},
        {"pad =\n", {"p.txt line 1: pad has no value", ""}},
        {"pad = 3.5\n", {"p.txt line 1: pad 3.5", "integer 0..255"}},
        {"mean = 1, x, 3\n", {"p.txt line 1: mean needs three numbers", ""}},
        {"std = 1, 2\n", {"p.txt line 1: std needs three numbers", ""}},
        {"std = 1, 0, 2\n", {"p.txt line 1: std must be > 0", ""}},
        {"strides = 8, 16, 32, 64, 128, 256\n", {"p.txt line 1: strides: 1 to 5", ""}},
        {"strides = 8, 0.5\n", {"p.txt line 1: strides: 0.5 is not an integer", ""}},
        {"anchors = 1,2, 3,4; 5,6\n", {"p.txt line 1: anchors: each level", ""}},
        {"anchors = 1,2,3\n", {"p.txt line 1: anchors: each level", ""}},
        {"color = gbr\n", {"p.txt line 1: color gbr", ""}},
        {"scale = 2\n", {"p.txt line 1: scale 2", ""}},
        {"head = yolov9\n", {"p.txt line 1: head yolov9 is not an adapter", ""}},
        {"sigmoid = maybe\n", {"p.txt line 1: sigmoid maybe", ""}},
        {"reg_max = 0\n", {"p.txt line 1: reg_max 0", ""}},
        {"nms = soft\n", {"p.txt line 1: nms soft", ""}},
        {"detr_scores = relu\n", {"p.txt line 1: detr_scores relu", ""}},
        {"interp = cubic\n", {"p.txt line 1: interp cubic", ""}},
        {"resize = crop\n", {"p.txt line 1: resize crop", ""}},
        /* Anchors for 2 levels where the model's head has 3 strides. */
        {"name = x\nanchors = 1,2, 3,4, 5,6; 7,8, 9,10, 11,12\n",
         {"p.txt line 2: anchors", "2 levels"}},
    };
    struct eb_head_graph g;
    synth_graph("v5-raw", &g);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct eb_model_profile p;
        struct eb_diag d = {0};
        struct eb_profile_request req = {.file_text = bad[i].text, .file_name = "p.txt"};
        enum eb_status st = eb_profile_resolve(&g, &req, &p, &d);
        if (st != EB_ERR_INVALID_ARG)
            EB_FAIL("profile \"%s\": %s (%s), want invalid_arg", bad[i].text, eb_status_name(st),
                    d.msg);
        ASSERT_CONTAINS(d.msg, "model profile ");
        ASSERT_CONTAINS(d.msg, bad[i].want[0]);
        ASSERT_CONTAINS(d.msg, bad[i].want[1]);
        ASSERT_TRUE(strchr(d.msg, '\n') == NULL);
    }
}

/* ---- preprocessing against hand-computed pixels -------------------------------------------- */

/* Runs both the fast path and the reference into a (3, h, w) buffer each and returns the fast
 * one (caller frees); they must agree within the fast path's tolerance scaled by 255/std. */
static float *prep(const uint8_t *src, int sw, int sh, int dw, int dh, enum eb_resize rs,
                   const struct eb_pixel_norm *n, struct eb_letterbox *lb)
{
    eb_letterbox_compute_mode(sw, sh, dw, dh, rs, lb);
    const size_t total = 3 * (size_t)dw * (size_t)dh;
    float *fast = malloc(total * sizeof(float)), *ref = malloc(total * sizeof(float));
    ASSERT_TRUE(fast != NULL && ref != NULL);
    eb_letterbox_to_nchw_f32_norm(src, sw, sh, (size_t)sw * 3, lb, 3, n, fast);
    eb_letterbox_to_nchw_f32_norm__ref(src, sw, sh, (size_t)sw * 3, lb, 3, n, ref);
    for (size_t i = 0; i < total; i++) {
        const float tol = EB_LETTERBOX_FAST_TOL * 255.0f / n->std[i / ((size_t)dw * dh)] + 1e-5f;
        ASSERT_NEAR(fast[i], ref[i], tol);
    }
    free(ref);
    return fast;
}

#define AT(buf, c, y, x, w, h) (buf)[((size_t)(c) * (h) + (size_t)(y)) * (w) + (size_t)(x)]

/* Pixel (x, y) channel c of the small test images: all distinct. */
static uint8_t px(int x, int y, int c)
{
    return (uint8_t)(20 * (4 * y + x) + 5 * c + 1);
}

static void fill_image(uint8_t *img, int w, int h)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++)
                img[(y * w + x) * 3 + c] = px(x, y, c);
}

static void yolox_norm(struct eb_pixel_norm *n)
{
    *n = (struct eb_pixel_norm){.bgr = 1, .pad = 114, .std = {1, 1, 1}};
}

EB_TEST(pre_yolox_bgr_raw_top_left_pads_bottom_and_right)
{
    struct eb_pixel_norm n;
    struct eb_letterbox lb;
    yolox_norm(&n);
    uint8_t img[4 * 4 * 3];
    /* 4x2 into 4x4: scale 1, the image at the top, rows 2-3 are pad. */
    fill_image(img, 4, 2);
    float *o = prep(img, 4, 2, 4, 4, EB_RESIZE_LETTERBOX_TOPLEFT, &n, &lb);
    ASSERT_EQ_INT(lb.pad_top, 0);
    ASSERT_EQ_INT(lb.pad_left, 0);
    for (int oc = 0; oc < 3; oc++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++)
                ASSERT_NEAR(AT(o, oc, y, x, 4, 4), y < 2 ? px(x, y, 2 - oc) : 114, 1e-4);
    free(o);
    /* 2x4 into 4x4: columns 2-3 are pad. */
    fill_image(img, 2, 4);
    o = prep(img, 2, 4, 4, 4, EB_RESIZE_LETTERBOX_TOPLEFT, &n, &lb);
    for (int oc = 0; oc < 3; oc++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++)
                ASSERT_NEAR(AT(o, oc, y, x, 4, 4), x < 2 ? px(x, y, 2 - oc) : 114, 1e-4);
    free(o);
    /* Centred, the same image sits one row/column in (round(1 - 0.1) = 1). */
    eb_letterbox_compute_mode(2, 4, 4, 4, EB_RESIZE_LETTERBOX, &lb);
    ASSERT_EQ_INT(lb.pad_left, 1);
}

EB_TEST(pre_nanodet_mean_std_pad_zero)
{
    const struct eb_pixel_norm n = {.bgr = 1,
                                    .pad = 0,
                                    .area = 1,
                                    .mean = {103.53f, 116.28f, 123.675f},
                                    .std = {57.375f, 57.12f, 58.395f}};
    struct eb_letterbox lb;
    uint8_t img[4 * 2 * 3];
    fill_image(img, 4, 2);
    float *o = prep(img, 4, 2, 4, 4, EB_RESIZE_LETTERBOX, &n, &lb);
    ASSERT_EQ_INT(lb.pad_top, 1);
    for (int oc = 0; oc < 3; oc++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++) {
                /* Pad rows 0 and 3: black before normalisation, (0 - mean) / std after. */
                const double v = y == 0 || y == 3 ? 0.0 : px(x, y - 1, 2 - oc);
                ASSERT_NEAR(AT(o, oc, y, x, 4, 4), (v - n.mean[oc]) / n.std[oc], 1e-4);
            }
    ASSERT_NEAR(AT(o, 0, 0, 0, 4, 4), -103.53 / 57.375, 1e-5);
    ASSERT_NEAR(AT(o, 2, 3, 3, 4, 4), -123.675 / 58.395, 1e-5);
    free(o);
}

EB_TEST(pre_stretch_scales_each_axis_and_unmaps_with_both)
{
    struct eb_pixel_norm n;
    eb_pixel_norm_default(&n);
    struct eb_letterbox lb;
    uint8_t img[4 * 2 * 3];
    fill_image(img, 4, 2);
    /* 4x2 into 2x2: x halves (bilinear at half-pixel centres = the mean of pixel pairs), y
     * stays. */
    float *o = prep(img, 4, 2, 2, 2, EB_RESIZE_STRETCH, &n, &lb);
    ASSERT_NEAR(lb.scale, 0.5, 0);
    ASSERT_NEAR(lb.scale_y, 1.0, 0);
    ASSERT_EQ_INT(lb.new_w, 2);
    ASSERT_EQ_INT(lb.new_h, 2);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 2; x++)
                ASSERT_NEAR(AT(o, c, y, x, 2, 2),
                            (px(2 * x, y, c) + px(2 * x + 1, y, c)) / 2.0 / 255.0, 1e-5);
    free(o);
    struct eb_detection det = {.x1 = 0.5f, .y1 = 0.5f, .x2 = 1.5f, .y2 = 1.5f};
    eb_letterbox_unmap(&lb, &det);
    ASSERT_NEAR(det.x1, 1.0, 1e-6);
    ASSERT_NEAR(det.x2, 3.0, 1e-6);
    ASSERT_NEAR(det.y1, 0.5, 1e-6);
    ASSERT_NEAR(det.y2, 1.5, 1e-6);
}

/* An image whose channel c at (x, y) is row[x] (or col[y]), the same in every channel. */
static void fill_1d(uint8_t *img, int w, int h, const uint8_t *v, int along_x)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++)
                img[(y * w + x) * 3 + c] = v[along_x ? x : y];
}

EB_TEST(pre_inter_area_integer_factor_averages_blocks)
{
    struct eb_pixel_norm n;
    eb_pixel_norm_default(&n);
    n.area = 1;
    struct eb_letterbox lb;
    /* 6x6 into 2x2: each output is the mean of a 3x3 block. R = 10 x^2 + y (not linear, so the
     * bilinear sample at the block centre, 10 + 1 at block 0, differs from the mean). */
    uint8_t img[6 * 6 * 3];
    for (int y = 0; y < 6; y++)
        for (int x = 0; x < 6; x++) {
            img[(y * 6 + x) * 3 + 0] = (uint8_t)(10 * x * x + y);
            img[(y * 6 + x) * 3 + 1] = (uint8_t)(255 - 10 * x * x);
            img[(y * 6 + x) * 3 + 2] = 7;
        }
    float *o = prep(img, 6, 6, 2, 2, EB_RESIZE_LETTERBOX, &n, &lb);
    /* Block (0,0): mean of 10 x^2 over x = 0..2 is 50/3, mean of y is 1. */
    static const double r[2][2] = {{53.0 / 3, 503.0 / 3}, {62.0 / 3, 512.0 / 3}};
    static const double g[2] = {255 - 50.0 / 3, 255 - 500.0 / 3};
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 2; x++) {
            ASSERT_NEAR(AT(o, 0, y, x, 2, 2) * 255, r[y][x], 1e-3);
            ASSERT_NEAR(AT(o, 1, y, x, 2, 2) * 255, g[x], 1e-3);
            ASSERT_NEAR(AT(o, 2, y, x, 2, 2) * 255, 7, 1e-3);
        }
    free(o);
}

EB_TEST(pre_inter_area_fractional_factor_is_opencvs)
{
    struct eb_pixel_norm n;
    eb_pixel_norm_default(&n);
    n.area = 1;
    struct eb_letterbox lb;
    /* A row 5 -> 2 (factor 2.5), OpenCV computeResizeAreaTab: out0 = 0.4 p0 + 0.4 p1 + 0.2 p2 =
     * 42, out1 = 0.2 p2 + 0.4 p3 + 0.4 p4 = 110 (bilinear would give 40 and 157.5). */
    static const uint8_t v[5] = {10, 50, 90, 200, 30};
    uint8_t img[5 * 5 * 3];
    fill_1d(img, 5, 5, v, 1);
    float *o = prep(img, 5, 5, 2, 2, EB_RESIZE_LETTERBOX, &n, &lb);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 2; y++) {
            ASSERT_NEAR(AT(o, c, y, 0, 2, 2) * 255, 42, 1e-3);
            ASSERT_NEAR(AT(o, c, y, 1, 2, 2) * 255, 110, 1e-3);
        }
    free(o);
    /* Stretch (FastestDet) 4x5 -> 4x2: x keeps its size, y shrinks by 2.5; OpenCV's INTER_AREA
     * applies as soon as no axis grows. */
    uint8_t col[4 * 5 * 3];
    fill_1d(col, 4, 5, v, 0);
    o = prep(col, 4, 5, 4, 2, EB_RESIZE_STRETCH, &n, &lb);
    for (int c = 0; c < 3; c++)
        for (int x = 0; x < 4; x++) {
            ASSERT_NEAR(AT(o, c, 0, x, 4, 2) * 255, 42, 1e-3);
            ASSERT_NEAR(AT(o, c, 1, x, 4, 2) * 255, 110, 1e-3);
        }
    free(o);
}

EB_TEST(pre_fast_and_reference_agree_for_every_family_norm)
{
    enum { W = 37, H = 23 };
    uint8_t *img = malloc(W * H * 3);
    ASSERT_TRUE(img != NULL);
    uint32_t s = 12345;
    for (int i = 0; i < W * H * 3; i++) {
        s = s * 1664525u + 1013904223u;
        img[i] = (uint8_t)(s >> 24);
    }
    static const struct {
        struct eb_pixel_norm n;
        enum eb_resize rs;
    } v[] = {
        {{.bgr = 1, .pad = 114, .std = {1, 1, 1}}, EB_RESIZE_LETTERBOX_TOPLEFT},
        {{.bgr = 1,
          .pad = 0,
          .area = 1,
          .mean = {103.53f, 116.28f, 123.675f},
          .std = {57.375f, 57.12f, 58.395f}},
         EB_RESIZE_LETTERBOX},
        {{.bgr = 1, .pad = 114, .std = {255, 255, 255}}, EB_RESIZE_STRETCH},
        {{.pad = 114, .std = {255, 255, 255}}, EB_RESIZE_LETTERBOX},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        struct eb_letterbox lb;
        free(prep(img, W, H, 64, 48, v[i].rs, &v[i].n, &lb)); /* grows */
        free(prep(img, W, H, 16, 16, v[i].rs, &v[i].n, &lb)); /* shrinks */
    }
    free(img);
}
