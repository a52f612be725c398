/* Model synthesizer, ONNX reader and `edgebench model` CLI. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/json.h"
#include "eb_test.h"
#include "model/model.h"

static struct eb_model_summary *synth_summary(enum eb_synth_arch arch, char scale, int imgsz)
{
    struct eb_synth_options o = {.arch = arch, .scale = scale, .imgsz = imgsz, .num_classes = 80,
                                 .seed = 0};
    struct eb_diag diag = {0};
    uint8_t *bytes = NULL;
    size_t len = 0;
    struct eb_model_summary *s = malloc(sizeof(*s));
    ASSERT_TRUE(s != NULL);
    ASSERT_OK(eb_model_synth(&o, &bytes, &len, &diag));
    ASSERT_OK(eb_model_summarize(bytes, len, s, &diag));
    free(bytes);
    return s;
}

static void check_figures(enum eb_synth_arch arch, char scale, double params, double ptol,
                          double gflops, double gtol)
{
    struct eb_model_summary *s = synth_summary(arch, scale, 640);
    printf("params %llu gflops %.3f nodes %zu\n", (unsigned long long)s->n_params, s->flops / 1e9,
           s->n_nodes);
    ASSERT_NEAR((double)s->n_params, params, params * ptol);
    ASSERT_NEAR(s->flops / 1e9, gflops, gtol);
    ASSERT_EQ_INT(s->n_outputs, 1);
    ASSERT_STREQ(s->outputs[0].name, "output0");
    ASSERT_EQ_INT(s->outputs[0].rank, 3);
    ASSERT_EQ_INT(s->outputs[0].shape[1], 84);
    ASSERT_EQ_INT(s->outputs[0].shape[2], 8400);
    free(s);
}

EB_TEST(synth_yolov8n_figures)
{
    /* Ultralytics: fused YOLOv8n 3,151,904 parameters, 8.7 GFLOPs at 640. */
    check_figures(EB_SYNTH_YOLOV8, 'n', 3151904, 0.02, 8.7, 0.3);
}

EB_TEST(synth_yolo11n_figures)
{
    /* Ultralytics: fused YOLO11n 2,616,248 parameters, 6.5 GFLOPs at 640. */
    check_figures(EB_SYNTH_YOLO11, 'n', 2616248, 0.02, 6.5, 0.3);
}

EB_TEST(synth_yolov8s_figures)
{
    check_figures(EB_SYNTH_YOLOV8, 's', 11.2e6, 0.03, 28.6, 28.6 * 0.03);
}

EB_TEST(synth_yolo11s_figures)
{
    check_figures(EB_SYNTH_YOLO11, 's', 9.4e6, 0.03, 21.5, 21.5 * 0.03);
}

EB_TEST(synth_op_types)
{
    struct eb_model_summary *s = synth_summary(EB_SYNTH_YOLO11, 'n', 640);
    const char *want[] = {"Conv", "Sigmoid", "Mul", "Split", "Concat", "MaxPool", "Resize",
                          "MatMul", "Softmax", "Transpose", "Reshape", "Slice", "Sub", "Div",
                          "Add"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        int found = 0;
        for (size_t k = 0; k < s->n_op_types; k++)
            found |= strcmp(s->ops[k].name, want[i]) == 0;
        if (!found)
            EB_FAIL("op %s missing", want[i]);
    }
    ASSERT_EQ_INT(s->opset, 17);
    free(s);
}

EB_TEST(synth_deterministic)
{
    struct eb_synth_options o = {.arch = EB_SYNTH_YOLOV8, .scale = 'n', .imgsz = 320,
                                 .num_classes = 80, .seed = 7};
    struct eb_diag diag = {0};
    uint8_t *a = NULL, *b = NULL, *c = NULL;
    size_t la = 0, lb = 0, lc = 0;
    ASSERT_OK(eb_model_synth(&o, &a, &la, &diag));
    ASSERT_OK(eb_model_synth(&o, &b, &lb, &diag));
    o.seed = 8;
    ASSERT_OK(eb_model_synth(&o, &c, &lc, &diag));
    ASSERT_EQ_INT(la, lb);
    ASSERT_TRUE(memcmp(a, b, la) == 0);
    ASSERT_EQ_INT(la, lc); /* same structure, */
    ASSERT_TRUE(memcmp(a, c, la) != 0); /* different weights */
    free(a);
    free(b);
    free(c);
}

EB_TEST(synth_imgsz_320_output)
{
    struct eb_model_summary *s = synth_summary(EB_SYNTH_YOLOV8, 'n', 320);
    ASSERT_EQ_INT(s->outputs[0].shape[0], 1);
    ASSERT_EQ_INT(s->outputs[0].shape[1], 84);
    ASSERT_EQ_INT(s->outputs[0].shape[2], 2100);
    ASSERT_EQ_INT(s->inputs[0].shape[2], 320);
    free(s);
}

static const char *meta(const struct eb_model_summary *s, const char *key)
{
    for (size_t i = 0; i < s->n_meta; i++)
        if (strcmp(s->meta[i].key, key) == 0)
            return s->meta[i].value;
    return NULL;
}

EB_TEST(synth_roundtrip_file)
{
    char path[512];
    struct eb_synth_options o = {.arch = EB_SYNTH_YOLO11, .scale = 'n', .imgsz = 640,
                                 .num_classes = 80, .seed = 1};
    struct eb_diag diag = {0};
    struct eb_model_summary *s = malloc(sizeof(*s));
    const char *names, *p;
    int entries = 0;
    ASSERT_TRUE(s != NULL);
    snprintf(path, sizeof(path), "%s/y11n.onnx", eb_test_tmpdir());
    ASSERT_OK(eb_model_synth_file(&o, path, &diag));
    ASSERT_OK(eb_model_summarize_file(path, s, &diag));
    ASSERT_EQ_INT(s->n_inputs, 1);
    ASSERT_STREQ(s->inputs[0].name, "images");
    ASSERT_EQ_INT(s->inputs[0].elem_type, 1);
    ASSERT_EQ_INT(s->inputs[0].rank, 4);
    ASSERT_EQ_INT(s->inputs[0].shape[1], 3);
    ASSERT_EQ_INT(s->inputs[0].shape[3], 640);
    ASSERT_STREQ(s->outputs[0].name, "output0");
    names = meta(s, "names");
    ASSERT_TRUE(names != NULL);
    for (p = names; (p = strstr(p, ": '")) != NULL; p += 3)
        entries++;
    ASSERT_EQ_INT(entries, 80);
    ASSERT_CONTAINS(names, "{0: 'person', 1: 'bicycle'");
    ASSERT_CONTAINS(names, "79: 'toothbrush'}");
    ASSERT_STREQ(meta(s, "stride"), "32");
    ASSERT_STREQ(meta(s, "task"), "detect");
    ASSERT_STREQ(meta(s, "batch"), "1");
    ASSERT_STREQ(meta(s, "imgsz"), "[640, 640]");
    ASSERT_STREQ(meta(s, "author"), "edgebench model synth");
    ASSERT_STREQ(meta(s, "edgebench_synthetic"), "1");
    free(s);
}

static void compare_real(const char *file, enum eb_synth_arch arch, int imgsz)
{
    const char *data = eb_test_shared_data();
    char path[1024];
    struct eb_diag diag = {0};
    struct eb_model_summary *real, *syn;
    FILE *fp;
    if (data == NULL)
        EB_SKIP("shared data folder not found (set EB_SHARED_DATA)");
    snprintf(path, sizeof(path), "%s/models/%s", data, file);
    fp = fopen(path, "rb");
    if (fp == NULL)
        EB_SKIP("%s not present in the shared data", path);
    fclose(fp);
    real = malloc(sizeof(*real));
    ASSERT_TRUE(real != NULL);
    ASSERT_OK(eb_model_summarize_file(path, real, &diag));
    syn = synth_summary(arch, 'n', imgsz);
    printf("%s: real %llu params %.3f GFLOPs, synth %llu params %.3f GFLOPs\n", file,
           (unsigned long long)real->n_params, real->flops / 1e9,
           (unsigned long long)syn->n_params, syn->flops / 1e9);
    ASSERT_NEAR((double)real->n_params, (double)syn->n_params, 0.005 * (double)syn->n_params);
    ASSERT_NEAR(real->flops, syn->flops, 0.01 * syn->flops);
    ASSERT_EQ_INT(real->outputs[0].shape[2], syn->outputs[0].shape[2]);
    free(real);
    free(syn);
}

EB_TEST(real_vs_synth_yolov8n_qdq)
{
    compare_real("yolov8n_int8_qdq.onnx", EB_SYNTH_YOLOV8, 640);
}

EB_TEST(real_vs_synth_yolov8n_dynamic)
{
    compare_real("yolov8n_int8_dynamic.onnx", EB_SYNTH_YOLOV8, 640);
}

EB_TEST(real_vs_synth_yolo11n_320_dynamic)
{
    compare_real("yolo11n_320_int8_dynamic.onnx", EB_SYNTH_YOLO11, 320);
}

EB_TEST(reader_rejects_empty_file)
{
    char path[512];
    struct eb_diag diag = {0};
    struct eb_model_summary *s = malloc(sizeof(*s));
    FILE *fp;
    ASSERT_TRUE(s != NULL);
    snprintf(path, sizeof(path), "%s/empty.onnx", eb_test_tmpdir());
    fp = fopen(path, "wb");
    ASSERT_TRUE(fp != NULL);
    fclose(fp);
    ASSERT_EQ_INT(eb_model_summarize_file(path, s, &diag), EB_ERR_FORMAT);
    ASSERT_CONTAINS(diag.msg, "failed to read model");
    ASSERT_CONTAINS(diag.msg, "empty.onnx");
    eb_diag_clear(&diag);
    snprintf(path, sizeof(path), "%s/missing.onnx", eb_test_tmpdir());
    ASSERT_EQ_INT(eb_model_summarize_file(path, s, &diag), EB_ERR_IO);
    ASSERT_CONTAINS(diag.msg, "missing.onnx");
    free(s);
}

EB_TEST(reader_rejects_random_bytes)
{
    uint64_t x = 0x12345678u;
    uint8_t *buf = malloc(65536);
    struct eb_model_summary *s = malloc(sizeof(*s));
    ASSERT_TRUE(buf != NULL && s != NULL);
    for (int round = 0; round < 200; round++) {
        struct eb_diag diag = {0};
        size_t len = 1 + (size_t)(round * 331) % 65535;
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            buf[i] = (uint8_t)x;
        }
        /* Some rounds start like a real model (graph field) to get past the first byte. */
        if (round % 2)
            buf[0] = 0x3a;
        ASSERT_EQ_INT(eb_model_summarize(buf, len, s, &diag), EB_ERR_FORMAT);
        ASSERT_CONTAINS(diag.msg, "failed to read model <memory>");
    }
    free(buf);
    free(s);
}

static void check_truncations(const uint8_t *bytes, size_t len, size_t limit)
{
    struct eb_model_summary *s = malloc(sizeof(*s));
    ASSERT_TRUE(s != NULL);
    for (size_t cut = 0; cut < len && cut < limit; cut += 997) {
        struct eb_diag diag = {0};
        enum eb_status st = eb_model_summarize(bytes, cut, s, &diag);
        if (st != EB_ERR_FORMAT)
            EB_FAIL("cut at %zu: %s (%s)", cut, eb_status_name(st), diag.msg);
        ASSERT_CONTAINS(diag.msg, "failed to read model");
    }
    free(s);
}

EB_TEST(reader_rejects_truncated_synth)
{
    struct eb_synth_options o = {.arch = EB_SYNTH_YOLOV8, .scale = 'n', .imgsz = 320,
                                 .num_classes = 80, .seed = 0};
    struct eb_diag diag = {0};
    uint8_t *bytes = NULL;
    size_t len = 0;
    ASSERT_OK(eb_model_synth(&o, &bytes, &len, &diag));
    check_truncations(bytes, len, 50 * 1024);
    /* A cut in the middle of a large weight tensor. */
    check_truncations(bytes, len / 2 + 1, len / 2 + 2);
    free(bytes);
}

EB_TEST(reader_rejects_truncated_real)
{
    const char *data = eb_test_shared_data();
    char path[1024];
    struct eb_diag diag = {0};
    uint8_t *bytes = NULL;
    size_t len = 0;
    if (data == NULL)
        EB_SKIP("shared data folder not found (set EB_SHARED_DATA)");
    snprintf(path, sizeof(path), "%s/models/yolov8n_int8_qdq.onnx", data);
    if (eb_model_read_file(path, &bytes, &len, &diag) != EB_OK)
        EB_SKIP("%s not readable: %s", path, diag.msg);
    check_truncations(bytes, len, 50 * 1024);
    free(bytes);
}

EB_TEST(reader_rejects_hostile_sizes)
{
    /* ModelProto{ir_version 8, graph{initializer{dims 2^40, dims 2^40, data_type 1}}} */
    static const uint8_t huge[] = {0x08, 0x08, 0x3a, 0x10, 0x2a, 0x0e, 0x08, 0x80, 0x80, 0x80,
                                   0x80, 0x80, 0x20, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20,
                                   0x10, 0x01};
    /* A length prefix far past the end of the buffer. */
    static const uint8_t longlen[] = {0x08, 0x08, 0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00};
    /* A varint of 11 bytes. */
    static const uint8_t longvar[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0x01};
    struct eb_model_summary *s = malloc(sizeof(*s));
    struct eb_diag diag = {0};
    ASSERT_TRUE(s != NULL);
    ASSERT_EQ_INT(eb_model_summarize(huge, sizeof(huge), s, &diag), EB_ERR_FORMAT);
    ASSERT_CONTAINS(diag.msg, "tensor");
    eb_diag_clear(&diag);
    ASSERT_EQ_INT(eb_model_summarize(longlen, sizeof(longlen), s, &diag), EB_ERR_FORMAT);
    ASSERT_CONTAINS(diag.msg, "truncated at byte");
    eb_diag_clear(&diag);
    ASSERT_EQ_INT(eb_model_summarize(longvar, sizeof(longvar), s, &diag), EB_ERR_FORMAT);
    free(s);
}

static char *run_main(int argc, const char **argv, int *rc_out, char **err_out)
{
    FILE *out = tmpfile(), *err = tmpfile();
    char *o, *e;
    long n;
    ASSERT_TRUE(out != NULL && err != NULL);
    *rc_out = eb_model_main(argc, (char **)argv, out, err);
    n = ftell(out);
    o = calloc(1, (size_t)n + 1);
    rewind(out);
    ASSERT_TRUE(o != NULL && fread(o, 1, (size_t)n, out) == (size_t)n);
    n = ftell(err);
    e = calloc(1, (size_t)n + 1);
    rewind(err);
    ASSERT_TRUE(e != NULL && fread(e, 1, (size_t)n, err) == (size_t)n);
    fclose(out);
    fclose(err);
    *err_out = e;
    return o;
}

EB_TEST(cli_bad_flags)
{
    struct { const char *argv[6]; int argc; const char *needle; } cases[] = {
        {{"synth", "--scale", "q", "-o", "x.onnx"}, 5, "--scale"},
        {{"synth", "--arch", "yolov5", "-o", "x.onnx"}, 5, "--arch"},
        {{"synth", "--imgsz", "100", "-o", "x.onnx"}, 5, "--imgsz"},
        {{"synth", "--imgsz", "64x", "-o", "x.onnx"}, 5, "--imgsz"},
        {{"synth", "--seed", "-1", "-o", "x.onnx"}, 5, "--seed"},
        {{"synth", "--bogus", "1"}, 3, "--bogus"},
        {{"synth"}, 1, "-o"},
        {{"info"}, 1, "FILE"},
        {{"frobnicate"}, 1, "frobnicate"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc;
        char *err = NULL;
        char *out = run_main(cases[i].argc, cases[i].argv, &rc, &err);
        ASSERT_EQ_INT(rc, 2);
        ASSERT_CONTAINS(err, cases[i].needle);
        ASSERT_TRUE(strchr(err, '\n') == err + strlen(err) - 1); /* one line */
        free(out);
        free(err);
    }
}

EB_TEST(cli_synth_then_info_json)
{
    char path[512];
    const char *synth[] = {"synth", "--arch", "yolov8", "--scale", "n", "--imgsz", "320",
                           "--seed", "3", "-o", path};
    const char *info[] = {"info", path, "--json"};
    const char *info_txt[] = {"info", path};
    int rc;
    char *err = NULL, *out;
    struct eb_json_value *root = NULL;
    struct eb_diag diag = {0};
    const struct eb_json_value *v;
    snprintf(path, sizeof(path), "%s/v8n_320.onnx", eb_test_tmpdir());
    out = run_main(11, synth, &rc, &err);
    ASSERT_EQ_INT(rc, 0);
    free(out);
    free(err);
    out = run_main(3, info, &rc, &err);
    ASSERT_EQ_INT(rc, 0);
    ASSERT_OK(eb_json_parse(out, strlen(out), &root, &diag));
    v = eb_json_get(root, "params");
    ASSERT_TRUE(v != NULL);
    ASSERT_NEAR(v->num, 3151904, 3151904 * 0.02);
    v = eb_json_path(root, "outputs/0/shape/2");
    ASSERT_TRUE(v != NULL);
    ASSERT_EQ_INT(v->num, 2100);
    v = eb_json_path(root, "metadata/task");
    ASSERT_TRUE(v != NULL && v->str != NULL);
    ASSERT_STREQ(v->str, "detect");
    ASSERT_TRUE(eb_json_get(root, "gflops") != NULL);
    ASSERT_TRUE(eb_json_path(root, "ops/Conv") != NULL);
    eb_json_free(root);
    free(out);
    free(err);
    out = run_main(2, info_txt, &rc, &err);
    ASSERT_EQ_INT(rc, 0);
    ASSERT_CONTAINS(out, "output0");
    ASSERT_CONTAINS(out, "[1, 84, 2100]");
    ASSERT_CONTAINS(out, "parameters:");
    ASSERT_CONTAINS(out, "GFLOPs");
    free(out);
    free(err);
}
