/*
 * The native backend through the eb_backend_* contract: probing, the device and path refusals
 * (no engine needed), and — on the synthesized yolov8n at 320, loaded from memory — model info,
 * inference equal to the engine's own, memory usage and the hard cap. The cases that need a
 * working engine skip while the engine cannot load the synthesized model yet
 * (eb_engine_load → EB_ERR_UNSUPPORTED), so the suite stays green as ops land.
 */
#include <stdint.h>

#include "backends/native/native_backend.h"
#include "eb/backend.h"
#include "eb/engine.h"
#include "eb_test.h"
#include "engine/onnx/onnx_wire.h"
#include "model/model.h"
#include "onnx_build.h"

/* ---- helpers ------------------------------------------------------------------------------- */

static struct eb_backend_config cpu_config(void)
{
    /* One thread: the test machines are small and shared. */
    struct eb_backend_config cfg = {
        .device = EB_DEVICE_CPU, .threads = 1, .mem_limit_bytes = 8000000000ull};
    return cfg;
}

static struct eb_backend *open_with(const struct eb_backend_config *cfg)
{
    struct eb_backend *be = NULL;
    struct eb_diag d = {0};
    enum eb_status st = eb_backend_create(&eb_backend_native_ops, cfg, &be, &d);
    if (st != EB_OK)
        EB_FAIL("eb_backend_create: %s: %s", eb_status_name(st), d.msg);
    return be;
}

static struct eb_backend *open_cpu(void)
{
    struct eb_backend_config cfg = cpu_config();
    return open_with(&cfg);
}

/* The synthesized yolov8n at 320 (caller frees). */
static uint8_t *synth_v8n_320(size_t *len)
{
    struct eb_synth_options o = {
        .arch = EB_SYNTH_YOLOV8, .scale = 'n', .imgsz = 320, .num_classes = 80, .seed = 1};
    uint8_t *bytes = NULL;
    struct eb_diag d = {0};
    enum eb_status st = eb_model_synth(&o, &bytes, len, &d);
    if (st != EB_OK)
        EB_FAIL("eb_model_synth: %s: %s", eb_status_name(st), d.msg);
    return bytes;
}

/* Skips the case while the engine cannot load the synthesized model (ops still missing). */
static void require_engine(const uint8_t *bytes, size_t len)
{
    struct eb_engine_options opt;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    eb_engine_options_default(&opt);
    enum eb_status st = eb_engine_load(bytes, len, "yolov8n-320 (synth)", &opt, &e, &d);
    if (st == EB_ERR_UNSUPPORTED)
        EB_SKIP("the engine cannot load the synthesized yolov8n yet (%s)", d.msg);
    if (st != EB_OK)
        EB_FAIL("eb_engine_load: %s: %s", eb_status_name(st), d.msg);
    eb_engine_destroy(e);
}

/* Loads `path` and expects failure `want` with a message naming `path` and containing `hint`. */
static void expect_load_error(const char *path, enum eb_status want, const char *hint)
{
    struct eb_backend *be = open_cpu();
    struct eb_model_spec spec = {.path = path};
    struct eb_model_info info;
    struct eb_diag d = {0};
    enum eb_status st = eb_backend_load(be, &spec, &info, &d);
    printf("%s -> %s: %s\n", path, eb_status_name(st), d.msg);
    ASSERT_EQ_INT(st, want);
    ASSERT_CONTAINS(d.msg, path);
    ASSERT_CONTAINS(d.msg, hint);
    ASSERT_TRUE(strchr(d.msg, '\n') == NULL);
    eb_backend_destroy(be);
}

static float *gray_input(int64_t s)
{
    size_t n = (size_t)(3 * s * s);
    float *x = malloc(n * sizeof(*x));
    ASSERT_TRUE(x != NULL);
    for (size_t i = 0; i < n; i++)
        x[i] = 0.447f + 0.001f * (float)(i % 97); /* not constant: exercise every kernel path */
    return x;
}

/* ValueInfoProto of a float tensor with a fixed shape. */
static void put_value_info(struct eb_pb_buf *graph, uint32_t field, const char *name,
                           const int64_t *shape, int rank)
{
    eb_test_put_value_info(graph, field, name, 1 /* float */, rank, shape);
}

/* y = Identity(x), x float [1,3,8,8], with "names" metadata `names` (NULL: none). Caller frees. */
static uint8_t *identity_model(const char *names, size_t *len)
{
    const int64_t shp[4] = {1, 3, 8, 8};
    struct eb_pb_buf m, graph, node, opset;
    eb_pb_buf_init(&m);
    eb_pb_buf_init(&graph);
    eb_pb_buf_init(&node);
    eb_pb_buf_init(&opset);
    eb_pb_put_varint(&m, 1, 7); /* ir_version */
    eb_pb_put_str(&m, 2, "edgebench-test");
    eb_pb_put_str(&node, 1, "x");
    eb_pb_put_str(&node, 2, "y");
    eb_pb_put_str(&node, 4, "Identity");
    eb_pb_put_msg(&graph, 1, &node);
    eb_pb_put_str(&graph, 2, "g");
    put_value_info(&graph, 11, "x", shp, 4);
    put_value_info(&graph, 12, "y", shp, 4);
    eb_pb_put_msg(&m, 7, &graph);
    eb_pb_put_str(&opset, 1, "");
    eb_pb_put_varint(&opset, 2, 13);
    eb_pb_put_msg(&m, 8, &opset);
    if (names != NULL) {
        struct eb_pb_buf kv;
        eb_pb_buf_init(&kv);
        eb_pb_put_str(&kv, 1, "names");
        eb_pb_put_str(&kv, 2, names);
        eb_pb_put_msg(&m, 14, &kv);
        eb_pb_buf_fini(&kv);
    }
    uint8_t *bytes = eb_pb_buf_take(&m, len);
    ASSERT_TRUE(bytes != NULL);
    eb_pb_buf_fini(&m);
    eb_pb_buf_fini(&graph);
    eb_pb_buf_fini(&node);
    eb_pb_buf_fini(&opset);
    return bytes;
}

/* Loads the identity model with `names`; skips while the engine has no Identity. */
static struct eb_backend *names_of(const char *names, struct eb_model_info *info)
{
    size_t len = 0;
    uint8_t *bytes = identity_model(names, &len);
    struct eb_backend *be = open_cpu();
    struct eb_model_spec spec = {.path = "identity.onnx", .bytes = bytes, .n_bytes = len};
    struct eb_diag d = {0};
    enum eb_status st = eb_backend_load(be, &spec, info, &d);
    free(bytes);
    if (st == EB_ERR_UNSUPPORTED)
        EB_SKIP("the engine cannot load an Identity model yet (%s)", d.msg);
    if (st != EB_OK)
        EB_FAIL("load: %s: %s", eb_status_name(st), d.msg);
    return be;
}

/* ---- no engine needed ---------------------------------------------------------------------- */

EB_TEST(ops_are_registered_shape)
{
    const struct eb_backend_ops *ops = &eb_backend_native_ops;
    ASSERT_EQ_INT(ops->abi, EB_BACKEND_ABI);
    ASSERT_STREQ(ops->name, "native");
    ASSERT_TRUE((ops->caps & EB_BACKEND_CAP_MEM_LIMIT) != 0);
#ifdef EB_HAVE_CUDA
    ASSERT_TRUE((ops->caps & EB_BACKEND_CAP_CUDA) != 0 && (ops->caps & EB_BACKEND_CAP_FP16) != 0);
#else
    ASSERT_TRUE((ops->caps & EB_BACKEND_CAP_CUDA) == 0);
#endif
    ASSERT_TRUE(ops->probe != NULL && ops->open != NULL && ops->close != NULL &&
                ops->load != NULL && ops->infer != NULL && ops->mem_usage != NULL &&
                ops->supports != NULL);
}

EB_TEST(probe_is_always_available)
{
    struct eb_backend_config cfg = cpu_config();
    struct eb_backend_probe pr;
    struct eb_diag d = {0};
    ASSERT_OK(eb_backend_native_ops.probe(&cfg, &pr, &d));
    printf("native: %s (%s)\n", pr.version, pr.library);
    ASSERT_EQ_INT(pr.available, 1);
    ASSERT_TRUE(strncmp(pr.version, "edgebench-native ", 17) == 0);
    ASSERT_OK(eb_backend_native_ops.probe(NULL, &pr, &d));
}

static void expect_device_refused(enum eb_device dev, const char *why, unsigned advice)
{
    struct eb_backend_config cfg = cpu_config();
    cfg.device = dev;
    struct eb_backend *be = NULL;
    struct eb_diag d = {0};
    enum eb_status st = eb_backend_create(&eb_backend_native_ops, &cfg, &be, &d);
    printf("%s -> %s: %s\n", eb_device_name(dev), eb_status_name(st), d.msg);
    ASSERT_EQ_INT(st, EB_ERR_UNSUPPORTED);
    ASSERT_TRUE(be == NULL);
    ASSERT_CONTAINS(d.msg, why);
    ASSERT_CONTAINS(d.msg, "ONNX Runtime");
    ASSERT_ADVICE(d, advice);
    ASSERT_CONTAINS(d.msg, eb_device_name(dev));
}

/* Where no GPU is usable (or the build has no CUDA device), cuda is refused at open, saying
 * why; with a GPU, tests/cuda runs the device. */
EB_TEST(cuda_device_without_gpu_is_refused)
{
    char why[256];
    if (eb_engine_cuda_available(why, sizeof(why)))
        EB_SKIP("a GPU is usable here: tests/cuda covers the cuda device");
    expect_device_refused(EB_DEVICE_CUDA, why, EB_ADVICE_OTHER_BACKEND | EB_ADVICE_CPU);
}

EB_TEST(tensorrt_device_is_refused)
{
    expect_device_refused(EB_DEVICE_TENSORRT, "runs on cpu or cuda", EB_ADVICE_TENSORRT);
}

EB_TEST(fp16_needs_cuda)
{
    struct eb_backend_config cfg = cpu_config();
    cfg.precision = EB_ENGINE_PRECISION_FP16;
    struct eb_backend *be = NULL;
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_backend_create(&eb_backend_native_ops, &cfg, &be, &d), EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "fp16 precision needs the cuda device");
    ASSERT_ADVICE(d, EB_ADVICE_CUDA);
}

EB_TEST(missing_model_file)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/no-such-model.onnx", eb_test_tmpdir());
    expect_load_error(path, EB_ERR_IO, "check the path");
}

EB_TEST(directory_is_not_a_model)
{
    expect_load_error(eb_test_tmpdir(), EB_ERR_IO, "it is a folder; pass an .onnx file");
}

EB_TEST(pytorch_checkpoint_is_refused)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/best.pt", eb_test_tmpdir());
    eb_test_write_file(path, "PK\x03\x04", 4);
    expect_load_error(path, EB_ERR_UNSUPPORTED, "yolo export model=best.pt format=onnx");
    snprintf(path, sizeof(path), "%s/best.PTH", eb_test_tmpdir());
    eb_test_write_file(path, "PK\x03\x04", 4);
    expect_load_error(path, EB_ERR_UNSUPPORTED, "PyTorch checkpoints");
}

EB_TEST(tensorrt_engine_is_refused)
{
    const char *ext[] = {"engine", "plan", "trt"};
    for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/yolov8n.%s", eb_test_tmpdir(), ext[i]);
        eb_test_write_file(path, "ftrt", 4);
        expect_load_error(path, EB_ERR_UNSUPPORTED, "TensorRT engines");
    }
}

EB_TEST(infer_before_load_is_invalid)
{
    struct eb_backend *be = open_cpu();
    float x = 0.0f;
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 1, .shape = {1}, .data = &x};
    struct eb_tensor out[1];
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_backend_infer(be, &in, 1, out, 1, NULL, &d), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d.msg, "no model is loaded");
    struct eb_mem_usage mu;
    eb_backend_mem_usage(be, &mu);
    ASSERT_EQ_INT(mu.host_bytes, 0);
    eb_backend_destroy(be);
}

EB_TEST(garbage_bytes_are_a_clean_error)
{
    struct eb_backend *be = open_cpu();
    const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x02};
    struct eb_model_spec spec = {.path = "junk.onnx", .bytes = junk, .n_bytes = sizeof(junk)};
    struct eb_model_info info;
    struct eb_diag d = {0};
    enum eb_status st = eb_backend_load(be, &spec, &info, &d);
    printf("junk -> %s: %s\n", eb_status_name(st), d.msg);
    ASSERT_TRUE(st != EB_OK);
    ASSERT_TRUE(d.msg[0] != '\0');
    /* The instance is as before: the next load may still succeed. */
    struct eb_mem_usage mu;
    eb_backend_mem_usage(be, &mu);
    ASSERT_EQ_INT(mu.host_bytes, 0);
    eb_backend_destroy(be);
}

/* ---- with the engine (skip while it cannot load the synthesized model) --------------------- */

EB_TEST(synth_model_info)
{
    size_t len = 0;
    uint8_t *bytes = synth_v8n_320(&len);
    require_engine(bytes, len);
    struct eb_backend *be = open_cpu();
    struct eb_model_spec spec = {.path = "yolov8n-320.onnx", .bytes = bytes, .n_bytes = len};
    struct eb_model_info info;
    struct eb_diag d = {0};
    ASSERT_OK(eb_backend_load(be, &spec, &info, &d));
    free(bytes);
    ASSERT_EQ_INT(info.n_inputs, 1);
    ASSERT_EQ_INT(info.inputs[0].dtype, EB_DTYPE_F32);
    ASSERT_EQ_INT(info.inputs[0].rank, 4);
    const int64_t want_in[4] = {1, 3, 320, 320}, want_out[3] = {1, 84, 2100};
    for (int k = 0; k < 4; k++)
        ASSERT_EQ_INT(info.inputs[0].shape[k], want_in[k]);
    ASSERT_EQ_INT(info.n_outputs, 1);
    ASSERT_EQ_INT(info.outputs[0].dtype, EB_DTYPE_F32);
    ASSERT_EQ_INT(info.outputs[0].rank, 3);
    for (int k = 0; k < 3; k++)
        ASSERT_EQ_INT(info.outputs[0].shape[k], want_out[k]);
    ASSERT_EQ_INT(info.n_class_names, 80);
    ASSERT_STREQ(info.class_names[0], "person");
    ASSERT_STREQ(info.class_names[79], "toothbrush");
    ASSERT_EQ_INT(info.limit_type, EB_LIMIT_HARD);
    printf("limit: %s; provider: %s\n", info.limit_methods, info.provider);
    ASSERT_CONTAINS(info.limit_methods, "native arena plan <= 8.00 GB (planned ");
    ASSERT_CONTAINS(info.limit_methods, " MiB)");
    /* The engine's kernel family and threads, e.g. "edgebench-native cpu avx2 x2 threads". */
    ASSERT_CONTAINS(info.provider, "edgebench-native cpu ");
    ASSERT_CONTAINS(info.provider, " thread");
    /* One model per instance. */
    ASSERT_EQ_INT(eb_backend_load(be, &spec, &info, &d), EB_ERR_INVALID_ARG);
    eb_backend_destroy(be);
}

EB_TEST(infer_matches_engine)
{
    size_t len = 0;
    uint8_t *bytes = synth_v8n_320(&len);
    require_engine(bytes, len);
    struct eb_backend *be = open_cpu();
    struct eb_model_spec spec = {.path = "yolov8n-320.onnx", .bytes = bytes, .n_bytes = len};
    struct eb_model_info info;
    struct eb_diag d = {0};
    ASSERT_OK(eb_backend_load(be, &spec, &info, &d));

    struct eb_engine_options opt;
    struct eb_engine *e = NULL;
    eb_engine_options_default(&opt);
    opt.threads = 1; /* as the backend: cfg.threads = 1, imgsz from the model */
    ASSERT_OK(eb_engine_load(bytes, len, "yolov8n-320 (synth)", &opt, &e, &d));
    free(bytes);

    float *x = gray_input(320);
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .shape = {1, 3, 320, 320}, .data = x};
    struct eb_tensor got[1], want[1];
    struct eb_infer_timing tm = {0};
    for (int run = 0; run < 2; run++) { /* the second run reuses the arena */
        ASSERT_OK(eb_backend_infer(be, &in, 1, got, 1, &tm, &d));
        ASSERT_OK(eb_engine_run(e, &in, 1, want, 1, &d));
        ASSERT_EQ_INT(got[0].dtype, EB_DTYPE_F32);
        ASSERT_EQ_INT(got[0].rank, 3);
        ASSERT_EQ_INT(got[0].shape[1], 84);
        ASSERT_EQ_INT(got[0].shape[2], 2100);
        ASSERT_TRUE(got[0].data != want[0].data); /* two engines, two arenas */
        const float *g = got[0].data, *w = want[0].data;
        size_t n = 84 * 2100, nonzero = 0;
        for (size_t i = 0; i < n; i++) {
            ASSERT_TRUE(isfinite(g[i]));
            if (g[i] != w[i])
                EB_FAIL("output differs at %zu: %.9g vs %.9g", i, g[i], w[i]);
            nonzero += g[i] != 0.0f;
        }
        ASSERT_TRUE(nonzero > n / 2);
        ASSERT_TRUE(tm.compute_ns > 0);
    }
    /* on the CPU there is no device to upload frames to: no frame buffer, and the reason */
    uint8_t *fb = NULL;
    eb_diag_clear(&d);
    ASSERT_EQ_INT(eb_backend_frame_buffer(be, 640, 480, &fb, &d), EB_ERR_UNSUPPORTED);
    printf("frame buffer on the CPU: %s\n", d.msg);
    ASSERT_TRUE(fb == NULL && d.msg[0] != '\0');
    /* nor memory to page-lock: a synthetic ring stays where it is and frames are copied */
    uint8_t ring[64];
    eb_diag_clear(&d);
    ASSERT_EQ_INT(eb_backend_pin_frames(be, ring, sizeof(ring), &d), EB_ERR_UNSUPPORTED);
    ASSERT_TRUE(d.msg[0] != '\0');
    free(x);
    eb_engine_destroy(e);
    eb_backend_destroy(be);
}

EB_TEST(mem_usage_is_the_plan)
{
    size_t len = 0;
    uint8_t *bytes = synth_v8n_320(&len);
    require_engine(bytes, len);
    struct eb_backend *be = open_cpu();
    struct eb_model_spec spec = {.path = "yolov8n-320.onnx", .bytes = bytes, .n_bytes = len};
    struct eb_model_info info;
    struct eb_diag d = {0};
    ASSERT_OK(eb_backend_load(be, &spec, &info, &d));
    free(bytes);
    struct eb_mem_usage mu;
    eb_backend_mem_usage(be, &mu);
    printf("host bytes %llu\n", (unsigned long long)mu.host_bytes);
    /* yolov8n has 3.2 M parameters: at least 12 MB of float weights. */
    ASSERT_TRUE(mu.host_bytes > 12000000ull);
    ASSERT_EQ_INT(mu.device_bytes, 0);
    eb_backend_destroy(be);
}

EB_TEST(cap_too_small_is_limit)
{
    size_t len = 0;
    uint8_t *bytes = synth_v8n_320(&len);
    require_engine(bytes, len);
    struct eb_backend_config cfg = cpu_config();
    cfg.mem_limit_bytes = 1000000; /* 1 MB: below yolov8n's weights alone */
    struct eb_backend *be = open_with(&cfg);
    struct eb_model_spec spec = {.path = "yolov8n-320.onnx", .bytes = bytes, .n_bytes = len};
    struct eb_model_info info;
    struct eb_diag d = {0};
    enum eb_status st = eb_backend_load(be, &spec, &info, &d);
    printf("-> %s: %s\n", eb_status_name(st), d.msg);
    ASSERT_EQ_INT(st, EB_ERR_LIMIT);
    ASSERT_CONTAINS(d.msg, "needed");
    ASSERT_CONTAINS(d.msg, "limit 1.0 MiB");
    /* The engine names no CLI flag: the harness gives the advice (budget.c). */
    ASSERT_TRUE(strstr(d.msg, "--") == NULL);
    /* The failed load left nothing behind. */
    struct eb_mem_usage mu;
    eb_backend_mem_usage(be, &mu);
    ASSERT_EQ_INT(mu.host_bytes, 0);
    eb_backend_destroy(be);
    free(bytes);
}

EB_TEST(model_from_file)
{
    size_t len = 0;
    uint8_t *bytes = synth_v8n_320(&len);
    require_engine(bytes, len);
    char path[512];
    snprintf(path, sizeof(path), "%s/yolov8n-320.onnx", eb_test_tmpdir());
    eb_test_write_file(path, bytes, len);
    free(bytes);
    struct eb_backend *be = open_cpu();
    struct eb_model_spec spec = {.path = path};
    struct eb_model_info info;
    struct eb_diag d = {0};
    ASSERT_OK(eb_backend_load(be, &spec, &info, &d));
    ASSERT_EQ_INT(info.outputs[0].shape[2], 2100);
    ASSERT_EQ_INT(info.n_class_names, 80);
    eb_backend_destroy(be);
}

EB_TEST(class_names_from_metadata)
{
    struct eb_model_info info;
    struct eb_backend *be = names_of("{0: 'person', 2: 'traffic light', 3: 'caf\\xe9'}", &info);
    ASSERT_EQ_INT(info.n_class_names, 4);
    ASSERT_STREQ(info.class_names[0], "person");
    ASSERT_STREQ(info.class_names[1], "class1"); /* gap */
    ASSERT_STREQ(info.class_names[2], "traffic light");
    ASSERT_STREQ(info.class_names[3], "caf\xc3\xa9");
    eb_backend_destroy(be);
    be = names_of("[\"hot\", \"cold\"]", &info);
    ASSERT_EQ_INT(info.n_class_names, 2);
    ASSERT_STREQ(info.class_names[1], "cold");
    eb_backend_destroy(be);
}

EB_TEST(class_names_garbage_or_absent_is_ignored)
{
    const char *bad[] = {"{0: person}", "not names", "{}", NULL};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct eb_model_info info;
        struct eb_backend *be = names_of(bad[i], &info);
        ASSERT_EQ_INT(info.n_class_names, 0);
        ASSERT_TRUE(info.class_names == NULL);
        eb_backend_destroy(be);
    }
}

EB_TEST(supports_says_no_for_tensorrt_and_absent_gpus)
{
    struct eb_backend_config cfg = cpu_config();
    cfg.device = EB_DEVICE_TENSORRT;
    struct eb_model_spec spec = {.path = "whatever.onnx"};
    int yes = -1;
    char why[128] = "";
    struct eb_diag d = {0};
    ASSERT_OK(eb_backend_native_ops.supports(&cfg, &spec, &yes, why, sizeof(why), &d));
    ASSERT_EQ_INT(yes, 0);
    ASSERT_CONTAINS(why, "not tensorrt");
    char no_gpu[256];
    if (!eb_engine_cuda_available(no_gpu, sizeof(no_gpu))) {
        cfg.device = EB_DEVICE_CUDA;
        yes = -1;
        ASSERT_OK(eb_backend_native_ops.supports(&cfg, &spec, &yes, why, sizeof(why), &d));
        ASSERT_EQ_INT(yes, 0);
        ASSERT_CONTAINS(why, "CUDA");
    }
}

EB_TEST(supports_synth_model)
{
    size_t len = 0;
    uint8_t *bytes = synth_v8n_320(&len);
    require_engine(bytes, len);
    struct eb_backend_config cfg = cpu_config();
    struct eb_model_spec spec = {.path = "yolov8n-320.onnx", .bytes = bytes, .n_bytes = len};
    int yes = -1;
    char why[256] = "";
    struct eb_diag d = {0};
    ASSERT_OK(eb_backend_native_ops.supports(&cfg, &spec, &yes, why, sizeof(why), &d));
    printf("supported %d (%s)\n", yes, why);
    ASSERT_EQ_INT(yes, 1);
    free(bytes);
}
