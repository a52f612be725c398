/*
 * The ONNX Runtime backend through the eb_backend_* contract: probing, loading the shared
 * YOLO models, running them, and the one-line errors users get for wrong inputs. Needs the
 * library fetched by scripts/setup.sh (else every case skips); model cases need shared/data.
 * Small ONNX models for the edge cases (dynamic shapes, float16, odd metadata) are written
 * here byte by byte, so those cases need no shared data.
 */
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>

#include "backends/ort/ort_backend.h"
#include "backends/ort/ort_profile.h"
#include "backends/ort/ort_trt.h"
#include "eb/backend.h"
#include "eb_test.h"

/* ---- helpers ------------------------------------------------------------------------------- */

static struct eb_backend_config cpu_config(void)
{
    /* One intra-op thread: the test machines are small and shared. No TensorRT engine cache:
     * its default folder is under $HOME (the cache cases give their own). */
    struct eb_backend_config cfg = {.device = EB_DEVICE_CPU,
                                    .threads = 1,
                                    .mem_limit_bytes = 8000000000ull,
                                    .trt_cache = "off"};
    return cfg;
}

/* Skips the case when ONNX Runtime cannot be loaded (scripts/setup.sh not run). */
static void require_ort(void)
{
    struct eb_backend_config cfg = cpu_config();
    struct eb_backend_probe pr;
    struct eb_diag d = {0};
    if (eb_backend_ort_ops.probe(&cfg, &pr, &d) != EB_OK)
        EB_SKIP("ONNX Runtime cannot be loaded (%s)", d.msg);
}

static const char *models_dir(char *buf, size_t n)
{
    const char *shared = eb_test_shared_data();
    if (shared == NULL)
        EB_SKIP("shared data folder absent; the model cases need its models/");
    snprintf(buf, n, "%s/models", shared);
    return buf;
}

static struct eb_backend *open_cpu(void)
{
    struct eb_backend_config cfg = cpu_config();
    struct eb_backend *be = NULL;
    struct eb_diag d = {0};
    enum eb_status st = eb_backend_create(&eb_backend_ort_ops, &cfg, &be, &d);
    if (st != EB_OK)
        EB_FAIL("eb_backend_create: %s: %s", eb_status_name(st), d.msg);
    return be;
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
        x[i] = 0.447f;
    return x;
}

/* Output 0 is finite and not all zero. */
static void check_output(const struct eb_tensor *o)
{
    ASSERT_EQ_INT(o->dtype, EB_DTYPE_F32);
    int64_t n = eb_tensor_numel(o);
    ASSERT_TRUE(n > 0 && o->data != NULL);
    const float *v = o->data;
    int64_t nonzero = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            EB_FAIL("output value %lld is not finite", (long long)i);
        nonzero += v[i] != 0.0f;
    }
    ASSERT_TRUE(nonzero > 0);
}

/* ---- probe and library loading --------------------------------------------------------------- */

EB_TEST(probe_reports_version)
{
    require_ort();
    struct eb_backend_config cfg = cpu_config();
    struct eb_backend_probe pr;
    struct eb_diag d = {0};
    ASSERT_OK(eb_backend_ort_ops.probe(&cfg, &pr, &d));
    printf("ONNX Runtime %s from %s\n", pr.version, pr.library);
    ASSERT_EQ_INT(pr.available, 1);
    ASSERT_TRUE(strncmp(pr.version, "1.", 2) == 0);
    ASSERT_CONTAINS(pr.library, "onnxruntime");
    ASSERT_TRUE(eb_backend_find("ort") == &eb_backend_ort_ops);
}

EB_TEST(bogus_ort_lib_says_how_to_fetch)
{
    const char *bogus = "/nonexistent/edgebench/libonnxruntime.so.1";
    struct eb_backend_config cfg = cpu_config();
    cfg.ort_lib = bogus;
    struct eb_backend_probe pr;
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_backend_ort_ops.probe(&cfg, &pr, &d), EB_ERR_IO);
    printf("%s\n", d.msg);
    ASSERT_CONTAINS(d.msg, bogus);
    ASSERT_CONTAINS(d.msg, "scripts/setup.sh");
    ASSERT_CONTAINS(d.msg, "EB_ORT_LIB");
    ASSERT_ADVICE(d, EB_ADVICE_ORT_LIB);

    struct eb_backend *be = NULL;
    struct eb_diag d2 = {0};
    ASSERT_EQ_INT(eb_backend_create(&eb_backend_ort_ops, &cfg, &be, &d2), EB_ERR_IO);
    ASSERT_TRUE(be == NULL);
    ASSERT_CONTAINS(d2.msg, "scripts/setup.sh");
}

EB_TEST(library_that_is_not_ort_is_refused)
{
    struct eb_backend_config cfg = cpu_config();
    cfg.ort_lib = "libm.so.6"; /* loads fine, but has no OrtGetApiBase */
    struct eb_backend_probe pr;
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_backend_ort_ops.probe(&cfg, &pr, &d), EB_ERR_UNSUPPORTED);
    printf("%s\n", d.msg);
    ASSERT_CONTAINS(d.msg, "libm.so.6");
    ASSERT_CONTAINS(d.msg, "not ONNX Runtime");
}

static void expect_no_gpu_provider(enum eb_device dev, const char *provider)
{
    require_ort();
    struct eb_backend_config cfg = cpu_config();
    cfg.device = dev;
    struct eb_backend *be = NULL;
    struct eb_diag d = {0};
    enum eb_status st = eb_backend_create(&eb_backend_ort_ops, &cfg, &be, &d);
    if (st == EB_OK) {
        eb_backend_destroy(be);
        EB_SKIP("this ONNX Runtime has %s; the case needs a CPU-only build", provider);
    }
    printf("%s\n", d.msg);
    ASSERT_EQ_INT(st, EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(d.msg, provider);
    ASSERT_ADVICE(d, EB_ADVICE_ORT_LIB | EB_ADVICE_CPU);
    /* What to do, at the end of the line, survives a long library path. */
    const char *todo =
        "a build with CUDA/TensorRT has it (on a Jetson, the JetPack onnxruntime-gpu)";
    size_t n = strlen(d.msg), m = strlen(todo);
    ASSERT_TRUE(n >= m && strcmp(d.msg + n - m, todo) == 0);
}

EB_TEST(cuda_on_cpu_only_library_is_unsupported)
{
    expect_no_gpu_provider(EB_DEVICE_CUDA, "CUDAExecutionProvider");
}

EB_TEST(tensorrt_on_cpu_only_library_is_unsupported)
{
    expect_no_gpu_provider(EB_DEVICE_TENSORRT, "TensorrtExecutionProvider");
}

/* ---- --precision and the TensorRT engine cache ------------------------------------------------ */

/* fp16 is TensorRT's (trt_fp16_enable): on the CPU and CUDA providers it is refused at open. */
static void expect_fp16_refused(enum eb_device dev)
{
    require_ort();
    struct eb_backend_config cfg = cpu_config();
    cfg.device = dev;
    cfg.precision = 1; /* EB_ENGINE_PRECISION_FP16 */
    struct eb_backend *be = NULL;
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_backend_create(&eb_backend_ort_ops, &cfg, &be, &d), EB_ERR_UNSUPPORTED);
    printf("%s\n", d.msg);
    ASSERT_CONTAINS(d.msg, "its TensorRT provider's");
    ASSERT_ADVICE(d, EB_ADVICE_TENSORRT | EB_ADVICE_FP32);
    ASSERT_CONTAINS(d.msg, dev == EB_DEVICE_CPU ? "ONNX Runtime's cpu provider"
                                                : "ONNX Runtime's cuda provider");
    ASSERT_CONTAINS(d.msg, "pass an fp16 ONNX model instead");
}

EB_TEST(fp16_on_cpu_provider_is_refused)
{
    expect_fp16_refused(EB_DEVICE_CPU);
}

EB_TEST(fp16_on_cuda_provider_is_refused)
{
    expect_fp16_refused(EB_DEVICE_CUDA);
}

/* fp16 and int8 on tensorrt pass the precision gate: what stops them here is the provider. */
EB_TEST(fp16_and_int8_on_tensorrt_reach_the_provider)
{
    require_ort();
    for (int int8 = 0; int8 <= 1; int8++) {
        struct eb_backend_config cfg = cpu_config();
        cfg.device = EB_DEVICE_TENSORRT;
        cfg.precision = int8 ? 0 : 1;
        cfg.int8 = int8;
        struct eb_backend *be = NULL;
        struct eb_diag d = {0};
        enum eb_status st = eb_backend_create(&eb_backend_ort_ops, &cfg, &be, &d);
        if (st == EB_OK) {
            eb_backend_destroy(be);
            EB_SKIP("this ONNX Runtime has TensorRT; the case needs one without it");
        }
        printf("%s\n", d.msg);
        ASSERT_CONTAINS(d.msg, "Execution");
        ASSERT_TRUE(strstr(d.msg, "fp16") == NULL && strstr(d.msg, "int8") == NULL);
    }
}

static void expect_cache_dir(const char *opt, const char *xdg, const char *home, const char *want)
{
    char buf[EB_ORT_TRT_CACHE_MAX];
    struct eb_diag d = {0};
    ASSERT_OK(eb_ort__trt_cache_dir(opt, xdg, home, buf, sizeof(buf), &d));
    ASSERT_STREQ(buf, want);
}

EB_TEST(trt_cache_dir_resolution)
{
    /* the default: $XDG_CACHE_HOME when absolute, else $HOME/.cache */
    expect_cache_dir(NULL, "/x/cache", "/home/u", "/x/cache/edgebench/trt");
    expect_cache_dir(NULL, NULL, "/home/u", "/home/u/.cache/edgebench/trt");
    expect_cache_dir(NULL, "", "/home/u", "/home/u/.cache/edgebench/trt");
    expect_cache_dir(NULL, "rel/cache", "/home/u", "/home/u/.cache/edgebench/trt");
    /* an explicit folder wins over the environment, relative or not; off = no cache */
    expect_cache_dir("engines", "/x/cache", "/home/u", "engines");
    expect_cache_dir("/abs/engines", NULL, NULL, "/abs/engines");
    expect_cache_dir("off", "/x/cache", "/home/u", "");
    expect_cache_dir("./off", NULL, NULL, "./off");
}

EB_TEST(trt_cache_dir_refusals)
{
    char buf[32];
    struct eb_diag d = {0};
    /* no default without the environment */
    ASSERT_EQ_INT(eb_ort__trt_cache_dir(NULL, NULL, "", buf, sizeof(buf), &d), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d.msg, "$XDG_CACHE_HOME and $HOME are unset");
    ASSERT_ADVICE(d, EB_ADVICE_TRT_CACHE);
    ASSERT_STREQ(buf, "");
    /* an empty name */
    d = (struct eb_diag){0};
    ASSERT_EQ_INT(eb_ort__trt_cache_dir("", NULL, "/h", buf, sizeof(buf), &d), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d.msg, "the TensorRT engine cache folder is an empty name");
    ASSERT_ADVICE(d, EB_ADVICE_TRT_CACHE);
    /* a path that does not fit is refused, never cut */
    d = (struct eb_diag){0};
    ASSERT_EQ_INT(
        eb_ort__trt_cache_dir(NULL, "/a/very/long/cache/home/path", "/h", buf, sizeof(buf), &d),
        EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d.msg, "longer than 31 bytes");
    ASSERT_STREQ(buf, "");
}

EB_TEST(trt_cache_folder_is_made_with_parents)
{
    char dir[1024], file[1024], under[1100];
    snprintf(dir, sizeof(dir), "%s/a/b/edgebench/trt", eb_test_tmpdir());
    struct eb_diag d = {0};
    ASSERT_OK(eb_ort__trt_cache_make(dir, &d));
    struct stat sb;
    ASSERT_TRUE(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode));
    ASSERT_OK(eb_ort__trt_cache_make(dir, &d)); /* already there: fine */

    /* under a regular file: one line naming the folder, why, and what to give instead */
    snprintf(file, sizeof(file), "%s/afile", eb_test_tmpdir());
    FILE *fp = fopen(file, "w");
    ASSERT_TRUE(fp != NULL);
    fclose(fp);
    snprintf(under, sizeof(under), "%s/trt/x", file);
    ASSERT_EQ_INT(eb_ort__trt_cache_make(under, &d), EB_ERR_IO);
    printf("%s\n", d.msg);
    ASSERT_CONTAINS(d.msg, "failed to create the TensorRT engine cache folder");
    ASSERT_CONTAINS(d.msg, under);
    ASSERT_CONTAINS(d.msg, "Not a directory");
    ASSERT_ADVICE(d, EB_ADVICE_TRT_CACHE);
    /* the file itself is no folder either */
    d = (struct eb_diag){0};
    ASSERT_EQ_INT(eb_ort__trt_cache_make(file, &d), EB_ERR_IO);
    ASSERT_CONTAINS(d.msg, "Not a directory");
}

/* ---- the shared YOLO models ---------------------------------------------------------------- */

static void check_model(const char *file, int64_t size, int64_t anchors)
{
    require_ort();
    char dir[512], path[1024];
    snprintf(path, sizeof(path), "%s/%s", models_dir(dir, sizeof(dir)), file);
    struct eb_backend *be = open_cpu();
    struct eb_model_spec spec = {.path = path};
    struct eb_model_info info;
    struct eb_diag d = {0};
    enum eb_status st = eb_backend_load(be, &spec, &info, &d);
    if (st != EB_OK)
        EB_FAIL("load %s: %s: %s", file, eb_status_name(st), d.msg);

    ASSERT_EQ_INT(info.n_inputs, 1);
    ASSERT_EQ_INT(info.inputs[0].dtype, EB_DTYPE_F32);
    ASSERT_EQ_INT(info.inputs[0].rank, 4);
    const int64_t want_in[4] = {1, 3, size, size};
    for (int k = 0; k < 4; k++)
        ASSERT_EQ_INT(info.inputs[0].shape[k], want_in[k]);
    ASSERT_EQ_INT(info.n_outputs, 1);
    ASSERT_EQ_INT(info.outputs[0].rank, 3);
    ASSERT_EQ_INT(info.outputs[0].shape[0], 1);
    ASSERT_EQ_INT(info.outputs[0].shape[1], 84);
    ASSERT_EQ_INT(info.outputs[0].shape[2], anchors);
    ASSERT_EQ_INT(info.n_class_names, 80);
    ASSERT_STREQ(info.class_names[0], "person");
    ASSERT_STREQ(info.class_names[5], "bus");
    ASSERT_STREQ(info.class_names[79], "toothbrush");
    ASSERT_STREQ(info.provider, "CPUExecutionProvider");
    ASSERT_EQ_INT(info.limit_type, EB_LIMIT_SOFT); /* CPU: only the per-frame monitor watches it */

    float *x = gray_input(size);
    struct eb_tensor in = {
        .dtype = EB_DTYPE_F32, .rank = 4, .shape = {1, 3, size, size}, .data = x};
    struct eb_tensor out[1];
    struct eb_infer_timing t = {0};
    ASSERT_OK(eb_backend_infer(be, &in, 1, out, 1, &t, &d));
    ASSERT_EQ_INT(out[0].rank, 3);
    ASSERT_EQ_INT(out[0].shape[1], 84);
    ASSERT_EQ_INT(out[0].shape[2], anchors);
    ASSERT_TRUE(t.compute_ns > 0);
    check_output(&out[0]);
    /* The second run reuses the first run's output buffer and gives the same answer. */
    size_t bytes = (size_t)eb_tensor_numel(&out[0]) * sizeof(float);
    float *first = malloc(bytes);
    ASSERT_TRUE(first != NULL);
    memcpy(first, out[0].data, bytes);
    void *first_data = out[0].data;
    ASSERT_OK(eb_backend_infer(be, &in, 1, out, 1, &t, &d));
    ASSERT_TRUE(out[0].data == first_data);
    ASSERT_TRUE(memcmp(first, out[0].data, bytes) == 0);
    free(first);
    free(x);
    eb_backend_destroy(be);
}

EB_TEST(model_yolov8n_int8_qdq)
{
    check_model("yolov8n_int8_qdq.onnx", 640, 8400);
}

EB_TEST(model_yolov8n_int8_dynamic)
{
    check_model("yolov8n_int8_dynamic.onnx", 640, 8400);
}

EB_TEST(model_yolov8n_320_int8_dynamic)
{
    check_model("yolov8n_320_int8_dynamic.onnx", 320, 2100);
}

EB_TEST(model_yolo11n_320_int8_dynamic)
{
    check_model("yolo11n_320_int8_dynamic.onnx", 320, 2100);
}

EB_TEST(load_from_memory)
{
    require_ort();
    char dir[512], path[1024];
    snprintf(path, sizeof(path), "%s/yolov8n_320_int8_dynamic.onnx", models_dir(dir, sizeof(dir)));
    size_t n = 0;
    char *bytes = eb_test_read_file(path, &n);
    ASSERT_TRUE(bytes != NULL);
    struct eb_backend *be = open_cpu();
    struct eb_model_spec spec = {.path = "embedded-yolov8n", .bytes = bytes, .n_bytes = n};
    struct eb_model_info info;
    struct eb_diag d = {0};
    ASSERT_OK(eb_backend_load(be, &spec, &info, &d));
    free(bytes); /* the bytes are only borrowed for the duration of load */
    ASSERT_EQ_INT(info.inputs[0].shape[3], 320);
    ASSERT_EQ_INT(info.n_class_names, 80);
    float *x = gray_input(320);
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .shape = {1, 3, 320, 320}, .data = x};
    struct eb_tensor out[1];
    ASSERT_OK(eb_backend_infer(be, &in, 1, out, 1, NULL, &d));
    check_output(&out[0]);
    free(x);
    eb_backend_destroy(be);
}

EB_TEST(fixed_input_refuses_other_imgsz)
{
    require_ort();
    char dir[512], path[1024];
    snprintf(path, sizeof(path), "%s/yolov8n_320_int8_dynamic.onnx", models_dir(dir, sizeof(dir)));
    struct eb_backend *be = open_cpu();
    struct eb_model_spec spec = {.path = path, .imgsz = 640};
    struct eb_model_info info;
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_backend_load(be, &spec, &info, &d), EB_ERR_INVALID_ARG);
    printf("%s\n", d.msg);
    ASSERT_CONTAINS(d.msg, "320x320");
    ASSERT_CONTAINS(d.msg, "cannot run at an input size of 640");
    ASSERT_ADVICE(d, EB_ADVICE_DEFAULT_IMGSZ);
    /* The same size as the model is fine, and a failed load leaves the instance usable. */
    spec.imgsz = 320;
    ASSERT_OK(eb_backend_load(be, &spec, &info, &d));
    eb_backend_destroy(be);
}

/* ---- bad model files ------------------------------------------------------------------------- */

EB_TEST(missing_model_file)
{
    require_ort();
    char path[1024];
    snprintf(path, sizeof(path), "%s/no_such_model.onnx", eb_test_tmpdir());
    expect_load_error(path, EB_ERR_IO, "check the path");
}

EB_TEST(random_bytes_model)
{
    require_ort();
    char path[1024];
    snprintf(path, sizeof(path), "%s/random.onnx", eb_test_tmpdir());
    unsigned char junk[4096];
    uint32_t r = 12345;
    for (size_t i = 0; i < sizeof(junk); i++) {
        r = r * 1103515245u + 12345u;
        junk[i] = (unsigned char)(r >> 16);
    }
    eb_test_write_file(path, junk, sizeof(junk));
    expect_load_error(path, EB_ERR_FORMAT, "valid ONNX");
}

EB_TEST(truncated_model)
{
    require_ort();
    char dir[512], src[1024], path[1024];
    snprintf(src, sizeof(src), "%s/yolov8n_int8_qdq.onnx", models_dir(dir, sizeof(dir)));
    size_t n = 0;
    char *bytes = eb_test_read_file(src, &n);
    ASSERT_TRUE(bytes != NULL && n > 1000);
    snprintf(path, sizeof(path), "%s/truncated.onnx", eb_test_tmpdir());
    eb_test_write_file(path, bytes, 1000);
    free(bytes);
    expect_load_error(path, EB_ERR_FORMAT, "valid ONNX");
}

EB_TEST(pytorch_checkpoint_is_refused)
{
    require_ort();
    char path[1024];
    snprintf(path, sizeof(path), "%s/best.pt", eb_test_tmpdir());
    eb_test_write_file(path, "PK\3\4 not really a checkpoint", 28);
    expect_load_error(path, EB_ERR_UNSUPPORTED, "yolo export model=best.pt format=onnx");
}

EB_TEST(tensorrt_engine_is_refused)
{
    require_ort();
    char path[1024];
    snprintf(path, sizeof(path), "%s/best.engine", eb_test_tmpdir());
    eb_test_write_file(path, "engine bytes", 12);
    expect_load_error(path, EB_ERR_UNSUPPORTED, "format=onnx");
    snprintf(path, sizeof(path), "%s/model.plan", eb_test_tmpdir());
    eb_test_write_file(path, "engine bytes", 12);
    expect_load_error(path, EB_ERR_UNSUPPORTED, "TensorRT");
}

/* ---- two instances in two threads ------------------------------------------------------------ */

struct worker {
    struct eb_backend *be;
    float *input;
    enum eb_status st;
    char msg[EB_DIAG_MSG_MAX];
    float *result; /* copy of the last output, malloc'd */
    size_t n;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct eb_tensor in = {
        .dtype = EB_DTYPE_F32, .rank = 4, .shape = {1, 3, 320, 320}, .data = w->input};
    struct eb_tensor out[1];
    struct eb_diag d = {0};
    for (int i = 0; i < 6 && w->st == EB_OK; i++)
        w->st = eb_backend_infer(w->be, &in, 1, out, 1, NULL, &d);
    snprintf(w->msg, sizeof(w->msg), "%s", d.msg);
    if (w->st == EB_OK) {
        w->n = (size_t)eb_tensor_numel(&out[0]);
        w->result = malloc(w->n * sizeof(float));
        if (w->result != NULL)
            memcpy(w->result, out[0].data, w->n * sizeof(float));
    }
    return NULL;
}

EB_TEST(two_instances_run_concurrently)
{
    require_ort();
    char dir[512], path[1024];
    snprintf(path, sizeof(path), "%s/yolo11n_320_int8_dynamic.onnx", models_dir(dir, sizeof(dir)));
    struct worker w[2];
    pthread_t th[2];
    memset(w, 0, sizeof(w));
    for (int i = 0; i < 2; i++) {
        struct eb_model_spec spec = {.path = path};
        struct eb_model_info info;
        struct eb_diag d = {0};
        w[i].be = open_cpu();
        ASSERT_OK(eb_backend_load(w[i].be, &spec, &info, &d));
        w[i].input = gray_input(320);
    }
    for (int i = 0; i < 2; i++)
        ASSERT_EQ_INT(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    for (int i = 0; i < 2; i++)
        ASSERT_EQ_INT(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < 2; i++) {
        if (w[i].st != EB_OK)
            EB_FAIL("thread %d: %s: %s", i, eb_status_name(w[i].st), w[i].msg);
        ASSERT_TRUE(w[i].result != NULL);
    }
    /* Same model, same input: both slots see the same detections. */
    ASSERT_EQ_INT(w[0].n, w[1].n);
    for (size_t k = 0; k < w[0].n; k++)
        ASSERT_NEAR(w[0].result[k], w[1].result[k], 1e-3);
    for (int i = 0; i < 2; i++) {
        free(w[i].result);
        free(w[i].input);
        eb_backend_destroy(w[i].be);
    }
}

/* ---- small models written here (dynamic shapes, float16, metadata) --------------------------- */

struct pb {
    unsigned char *b;
    size_t n, cap;
};

static void pb_raw(struct pb *p, const void *d, size_t n)
{
    if (p->n + n > p->cap) {
        p->cap = (p->n + n) * 2 + 64;
        p->b = realloc(p->b, p->cap);
        ASSERT_TRUE(p->b != NULL);
    }
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

static void pb_varint(struct pb *p, uint64_t v)
{
    do {
        unsigned char c = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v != 0)
            c |= 0x80;
        pb_raw(p, &c, 1);
    } while (v != 0);
}

static void pb_int(struct pb *p, int field, uint64_t v)
{
    pb_varint(p, (uint64_t)field << 3);
    pb_varint(p, v);
}

static void pb_bytes(struct pb *p, int field, const void *d, size_t n)
{
    pb_varint(p, ((uint64_t)field << 3) | 2);
    pb_varint(p, n);
    pb_raw(p, d, n);
}

static void pb_str(struct pb *p, int field, const char *s)
{
    pb_bytes(p, field, s, strlen(s));
}

/* Appends `sub` as a length-delimited field and frees it. */
static void pb_msg(struct pb *p, int field, struct pb *sub)
{
    pb_bytes(p, field, sub->b, sub->n);
    free(sub->b);
    memset(sub, 0, sizeof(*sub));
}

/* ValueInfoProto: name, tensor type (elem_type, shape); -1 dims become symbolic "d<k>". */
static void pb_value_info(struct pb *p, int field, const char *name, int elem_type,
                          const int64_t *shape, int rank)
{
    struct pb vi = {0}, type = {0}, tensor = {0}, shp = {0};
    for (int k = 0; k < rank; k++) {
        struct pb dim = {0};
        if (shape[k] >= 0) {
            pb_int(&dim, 1, (uint64_t)shape[k]);
        } else {
            char sym[16];
            snprintf(sym, sizeof(sym), "d%d", k);
            pb_str(&dim, 2, sym);
        }
        pb_msg(&shp, 1, &dim);
    }
    pb_int(&tensor, 1, (uint64_t)elem_type);
    pb_msg(&tensor, 2, &shp);
    pb_msg(&type, 1, &tensor);
    pb_str(&vi, 1, name);
    pb_msg(&vi, 2, &type);
    pb_msg(p, field, &vi);
}

/* An ONNX model y = Identity(x) with the given element type, shape and "names" metadata. */
static struct pb identity_model(int elem_type, const int64_t *shape, int rank, const char *names)
{
    struct pb m = {0}, opset = {0}, graph = {0}, node = {0};
    pb_int(&m, 1, 7); /* ir_version */
    pb_str(&m, 2, "edgebench-test");
    pb_str(&node, 1, "x");
    pb_str(&node, 2, "y");
    pb_str(&node, 4, "Identity");
    pb_msg(&graph, 1, &node);
    pb_str(&graph, 2, "g");
    pb_value_info(&graph, 11, "x", elem_type, shape, rank);
    pb_value_info(&graph, 12, "y", elem_type, shape, rank);
    pb_msg(&m, 7, &graph);
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 13);
    pb_msg(&m, 8, &opset);
    if (names != NULL) {
        struct pb kv = {0};
        pb_str(&kv, 1, "names");
        pb_str(&kv, 2, names);
        pb_msg(&m, 14, &kv);
    }
    return m;
}

#define ONNX_FLOAT   1
#define ONNX_FLOAT16 10

static enum eb_status load_identity(struct eb_backend *be, int elem_type, const int64_t *shape,
                                    int rank, const char *names, int imgsz,
                                    struct eb_model_info *info, struct eb_diag *d)
{
    struct pb m = identity_model(elem_type, shape, rank, names);
    struct eb_model_spec spec = {
        .path = "identity.onnx", .bytes = m.b, .n_bytes = m.n, .imgsz = imgsz};
    enum eb_status st = eb_backend_load(be, &spec, info, d);
    free(m.b);
    return st;
}

EB_TEST(dynamic_input_takes_imgsz)
{
    require_ort();
    const int64_t dyn[4] = {-1, 3, -1, -1};
    struct eb_model_info info;
    struct eb_diag d = {0};
    struct eb_backend *be = open_cpu();
    ASSERT_OK(load_identity(be, ONNX_FLOAT, dyn, 4, NULL, 0, &info, &d));
    const int64_t want640[4] = {1, 3, 640, 640};
    for (int k = 0; k < 4; k++)
        ASSERT_EQ_INT(info.inputs[0].shape[k], want640[k]);
    ASSERT_EQ_INT(info.outputs[0].shape[2], -1); /* outputs stay dynamic until run */
    ASSERT_EQ_INT(info.n_class_names, 0);
    ASSERT_TRUE(info.class_names == NULL);
    eb_backend_destroy(be);

    be = open_cpu();
    ASSERT_OK(load_identity(be, ONNX_FLOAT, dyn, 4, NULL, 320, &info, &d));
    ASSERT_EQ_INT(info.inputs[0].shape[0], 1);
    ASSERT_EQ_INT(info.inputs[0].shape[2], 320);
    ASSERT_EQ_INT(info.inputs[0].shape[3], 320);
    eb_backend_destroy(be);
}

EB_TEST(dynamic_output_follows_input_shape)
{
    require_ort();
    const int64_t dyn[4] = {1, 3, -1, -1};
    struct eb_model_info info;
    struct eb_diag d = {0};
    struct eb_backend *be = open_cpu();
    ASSERT_OK(load_identity(be, ONNX_FLOAT, dyn, 4, NULL, 0, &info, &d));
    /* Run at 8x8 twice (the second run reuses its outputs), then at 16x16: the kept outputs
     * no longer fit and the backend must still give the right shape and values. */
    const int64_t sizes[3] = {8, 8, 16};
    for (int r = 0; r < 3; r++) {
        int64_t s = sizes[r];
        float *x = malloc((size_t)(3 * s * s) * sizeof(float));
        ASSERT_TRUE(x != NULL);
        for (int64_t i = 0; i < 3 * s * s; i++)
            x[i] = (float)(i + r);
        struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .shape = {1, 3, s, s}, .data = x};
        struct eb_tensor out[1];
        enum eb_status st = eb_backend_infer(be, &in, 1, out, 1, NULL, &d);
        if (st != EB_OK)
            EB_FAIL("run %d: %s: %s", r, eb_status_name(st), d.msg);
        ASSERT_EQ_INT(out[0].rank, 4);
        ASSERT_EQ_INT(out[0].shape[2], s);
        ASSERT_EQ_INT(out[0].shape[3], s);
        ASSERT_TRUE(memcmp(out[0].data, x, (size_t)(3 * s * s) * sizeof(float)) == 0);
        free(x);
    }
    eb_backend_destroy(be);
}

EB_TEST(float16_passes_through)
{
    require_ort();
    const int64_t shp[4] = {1, 3, 4, 4};
    struct eb_model_info info;
    struct eb_diag d = {0};
    struct eb_backend *be = open_cpu();
    ASSERT_OK(load_identity(be, ONNX_FLOAT16, shp, 4, NULL, 0, &info, &d));
    ASSERT_EQ_INT(info.inputs[0].dtype, EB_DTYPE_F16);
    ASSERT_EQ_INT(info.outputs[0].dtype, EB_DTYPE_F16);
    uint16_t x[48];
    for (int i = 0; i < 48; i++)
        x[i] = (uint16_t)(0x3C00 + i); /* 1.0, 1.0009765625, ... */
    struct eb_tensor in = {.dtype = EB_DTYPE_F16, .rank = 4, .shape = {1, 3, 4, 4}, .data = x};
    struct eb_tensor out[1];
    ASSERT_OK(eb_backend_infer(be, &in, 1, out, 1, NULL, &d));
    ASSERT_EQ_INT(out[0].dtype, EB_DTYPE_F16);
    ASSERT_TRUE(memcmp(out[0].data, x, sizeof(x)) == 0);
    eb_backend_destroy(be);
}

EB_TEST(fixed_batch_is_unsupported)
{
    require_ort();
    const int64_t shp[4] = {4, 3, 32, 32};
    struct eb_model_info info;
    struct eb_diag d = {0};
    struct eb_backend *be = open_cpu();
    ASSERT_EQ_INT(load_identity(be, ONNX_FLOAT, shp, 4, NULL, 0, &info, &d), EB_ERR_UNSUPPORTED);
    printf("%s\n", d.msg);
    ASSERT_CONTAINS(d.msg, "identity.onnx");
    ASSERT_CONTAINS(d.msg, "batch");
    eb_backend_destroy(be);
}

/* Loads an identity model with `names` metadata and returns its class names (n_out of them). */
static struct eb_backend *names_of(const char *names, struct eb_model_info *info)
{
    const int64_t shp[4] = {1, 3, 8, 8};
    struct eb_diag d = {0};
    struct eb_backend *be = open_cpu();
    ASSERT_OK(load_identity(be, ONNX_FLOAT, shp, 4, names, 0, info, &d));
    return be;
}

EB_TEST(class_names_python_dict)
{
    require_ort();
    struct eb_model_info info;
    struct eb_backend *be =
        names_of("{0: 'person', 1: \"bicycle\", 2: 'traffic light', 4: 'driver\\'s seat', "
                 "5: 'caf\\xe9'}",
                 &info);
    ASSERT_EQ_INT(info.n_class_names, 6);
    ASSERT_STREQ(info.class_names[0], "person");
    ASSERT_STREQ(info.class_names[1], "bicycle");
    ASSERT_STREQ(info.class_names[2], "traffic light");
    ASSERT_STREQ(info.class_names[3], "class3"); /* gap */
    ASSERT_STREQ(info.class_names[4], "driver's seat");
    ASSERT_STREQ(info.class_names[5], "caf\xc3\xa9");
    eb_backend_destroy(be);
}

EB_TEST(class_names_json)
{
    require_ort();
    struct eb_model_info info;
    struct eb_backend *be = names_of(" [\"hot\", \"cold \\\"spot\\\"\"] ", &info);
    ASSERT_EQ_INT(info.n_class_names, 2);
    ASSERT_STREQ(info.class_names[0], "hot");
    ASSERT_STREQ(info.class_names[1], "cold \"spot\"");
    eb_backend_destroy(be);
    be = names_of("{\"0\": \"person\", \"1\": \"car\"}", &info);
    ASSERT_EQ_INT(info.n_class_names, 2);
    ASSERT_STREQ(info.class_names[1], "car");
    eb_backend_destroy(be);
}

EB_TEST(class_names_garbage_is_ignored)
{
    require_ort();
    const char *bad[] = {"{0: person}",      "{0: 'a', 1: 'b'", "not names",
                         "{999999999: 'x'}", "['a' 'b']",       "{}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct eb_model_info info;
        struct eb_backend *be = names_of(bad[i], &info);
        ASSERT_EQ_INT(info.n_class_names, 0);
        ASSERT_TRUE(info.class_names == NULL);
        eb_backend_destroy(be);
    }
}

/* ---- ONNX Runtime's own log lines and providers (issue 18 §7) ------------------------------- */

struct captured {
    char text[4096];
    int n_debug, n_other;
};

static void capture_log(void *ctx, enum eb_log_level level, const char *msg)
{
    struct captured *c = ctx;
    if (level == EB_LOG_DEBUG)
        c->n_debug++;
    else
        c->n_other++;
    size_t used = strlen(c->text);
    snprintf(c->text + used, sizeof(c->text) - used, "%s\n", msg);
}

EB_TEST(probe_lists_providers)
{
    require_ort();
    struct eb_backend_config cfg = cpu_config();
    struct eb_backend_probe pr;
    struct eb_diag d = {0};
    ASSERT_OK(eb_backend_ort_ops.probe(&cfg, &pr, &d));
    printf("providers: %s\n", pr.providers);
    /* Every ONNX Runtime build has the CPU provider; the list is comma-separated names. */
    ASSERT_CONTAINS(pr.providers, "CPUExecutionProvider");
    ASSERT_TRUE(strchr(pr.providers, ' ') == NULL);
}

EB_TEST(ort_log_lines_go_to_the_backend_log)
{
    require_ort();
    /* An identity model with an initializer no node uses: ONNX Runtime warns that it removes
     * it. The warning must reach the instance's log (at DEBUG: run.log, the console only with
     * --verbose), not ONNX Runtime's default logger on stderr. */
    struct captured cap = {0};
    struct eb_log log = {.fn = capture_log, .ctx = &cap, .level = EB_LOG_DEBUG};
    struct eb_backend_config cfg = cpu_config();
    cfg.log = &log;
    struct eb_backend *be = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_backend_create(&eb_backend_ort_ops, &cfg, &be, &d));
    const int64_t shape[4] = {1, 3, 8, 8};
    /* identity_model's graph plus field 5: TensorProto unused_w {dims 1, FLOAT, raw 4 bytes}. */
    struct pb model = {0}, opset = {0}, graph = {0}, node = {0}, init = {0};
    pb_int(&model, 1, 7);
    pb_str(&model, 2, "edgebench-test");
    pb_str(&node, 1, "x");
    pb_str(&node, 2, "y");
    pb_str(&node, 4, "Identity");
    pb_msg(&graph, 1, &node);
    pb_str(&graph, 2, "g");
    pb_int(&init, 1, 1);
    pb_int(&init, 2, ONNX_FLOAT);
    pb_str(&init, 8, "unused_w");
    const float w = 1.0f;
    pb_bytes(&init, 9, &w, sizeof(w));
    pb_msg(&graph, 5, &init);
    pb_value_info(&graph, 11, "x", ONNX_FLOAT, shape, 4);
    pb_value_info(&graph, 12, "y", ONNX_FLOAT, shape, 4);
    pb_msg(&model, 7, &graph);
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 13);
    pb_msg(&model, 8, &opset);
    struct eb_model_spec spec = {.path = "unused_init.onnx", .bytes = model.b, .n_bytes = model.n};
    struct eb_model_info info;
    ASSERT_OK(eb_backend_load(be, &spec, &info, &d));
    free(model.b);
    eb_backend_destroy(be);
    printf("%s", cap.text);
    ASSERT_CONTAINS(cap.text, "onnxruntime warning");
    ASSERT_CONTAINS(cap.text, "unused_w");
    ASSERT_EQ_INT(cap.n_other, 0);
}

/* ---- ONNX Runtime's profile file (ort_profile.c), on crafted files of its format ------------- */

/* Writes `text` to <tmpdir>/<name> and returns the path in `buf`. */
static const char *write_profile(const char *name, const char *text, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", eb_test_tmpdir(), name);
    FILE *fp = fopen(buf, "w");
    ASSERT_TRUE(fp != NULL);
    ASSERT_TRUE(fputs(text, fp) >= 0);
    ASSERT_TRUE(fclose(fp) == 0);
    return buf;
}

/* One node event as profiler.cc writes it (the args trimmed to a few of ORT's). */
#define NODE_EV(name, op, idx, ts, dur)                                                            \
    "{\"cat\" : \"Node\",\"pid\" :7,\"tid\" :7,\"dur\" :" #dur ",\"ts\" :" #ts                     \
    ",\"ph\" : \"X\",\"name\" :\"" name "_kernel_time\",\"args\" : {\"op_name\" : \"" op           \
    "\",\"node_index\" : \"" idx                                                                   \
    "\",\"provider\" : \"CPUExecutionProvider\",\"output_type_shape\" "                            \
    ": [{\"float\":[1,16,80,80]}],\"thread_scheduling_stats\" : \"\"}}"
#define RUN_EV(ts, dur)                                                                            \
    "{\"cat\" : \"Session\",\"pid\" :7,\"tid\" :7,\"dur\" :" #dur ",\"ts\" :" #ts                  \
    ",\"ph\" : \"X\",\"name\" :\"model_run\",\"args\" : {}}"

/*
 * Three runs, in the order ORT 1.2x writes them (a run's node events before its model_run, as
 * recorded): run 0 is the warm-up (skipped), runs 1 and 2 are kept. "/c" runs twice per run (a
 * node with two kernels), an unnamed node is told apart by its index, a fence event and the
 * session's own events are not nodes, and a node event outside every run is left out.
 */
/* clang-format off */
static const char profile_text[] =
    "[\n"
    "{\"cat\" : \"Session\",\"pid\" :7,\"tid\" :7,\"dur\" :500,\"ts\" :1,\"ph\" : \"X\","
        "\"name\" :\"session_initialization\",\"args\" : {}},\n"
    /* run 0 (warm-up) */
    NODE_EV("/a", "Conv", "0", 1000, 400) ",\n"
    NODE_EV("/b", "QuickGelu", "1", 1410, 50) ",\n"
    NODE_EV("/c", "Concat", "2", 1470, 20) ",\n"
    RUN_EV(990, 600) ",\n"
    /* run 1 */
    NODE_EV("/a", "Conv", "0", 2000, 300) ",\n"
    NODE_EV("/b", "QuickGelu", "1", 2310, 40) ",\n"
    NODE_EV("/c", "Concat", "2", 2360, 10) ",\n"
    NODE_EV("/c", "Concat", "2", 2380, 15) ",\n"
    NODE_EV("", "Add", "7", 2400, 5) ",\n"
    NODE_EV("", "Add", "8", 2410, 6) ",\n"
    "{\"cat\" : \"Node\",\"pid\" :7,\"tid\" :7,\"dur\" :3,\"ts\" :2420,\"ph\" : \"X\","
        "\"name\" :\"/a_fence_before\",\"args\" : {\"op_name\" : \"Conv\"}},\n"
    RUN_EV(1990, 450) ",\n"
    /* between runs: in no run */
    NODE_EV("/z", "Relu", "9", 2700, 100) ",\n"
    /* run 2, its model_run first (as sorted by start time) */
    RUN_EV(3000, 420) ",\n"
    NODE_EV("/a", "Conv", "0", 3005, 310) ",\n"
    NODE_EV("/b", "QuickGelu", "1", 3320, 30) ",\n"
    NODE_EV("/c", "Concat", "2", 3355, 12) ",\n"
    NODE_EV("/c", "Concat", "2", 3370, 13) ",\n"
    NODE_EV("", "Add", "7", 3390, 4) ",\n"
    NODE_EV("", "Add", "8", 3400, 7) "\n"
    "]\n";
/* clang-format on */

EB_TEST(profile_file_sums_kept_runs_per_node)
{
    char path[1024];
    struct eb_ort_profile p = {0};
    struct eb_diag d = {0};
    ASSERT_OK(
        eb_ort__profile_read(write_profile("p.json", profile_text, path, sizeof(path)), 1, &p, &d));
    ASSERT_EQ_INT(p.runs_in_file, 3);
    ASSERT_EQ_INT(p.runs, 2);
    ASSERT_NEAR(p.run_total_ms, (450 + 420) / 1000.0, 1e-12);
    ASSERT_EQ_INT(p.n_nodes, 5);
    /* Execution order of the first kept run; "/c" adds both kernels of both runs. */
    ASSERT_STREQ(p.nodes[0].name, "/a");
    ASSERT_STREQ(p.nodes[0].op, "Conv");
    ASSERT_NEAR(p.nodes[0].total_ms, (300 + 310) / 1000.0, 1e-12);
    ASSERT_STREQ(p.nodes[1].op, "QuickGelu");
    ASSERT_NEAR(p.nodes[1].total_ms, (40 + 30) / 1000.0, 1e-12);
    ASSERT_STREQ(p.nodes[2].name, "/c");
    ASSERT_NEAR(p.nodes[2].total_ms, (10 + 15 + 12 + 13) / 1000.0, 1e-12);
    ASSERT_STREQ(p.nodes[3].name, "");
    ASSERT_NEAR(p.nodes[3].total_ms, (5 + 4) / 1000.0, 1e-12);
    ASSERT_STREQ(p.nodes[4].name, "");
    ASSERT_NEAR(p.nodes[4].total_ms, (6 + 7) / 1000.0, 1e-12);
    /* FLOPs from the events' shapes: these carry only the output's (1x16x80x80), so the Conv
     * (no weight shape) has none and every other op one per output element */
    for (size_t k = 0; k < p.n_nodes; k++) {
        ASSERT_STREQ(p.nodes[k].fused, "");
        ASSERT_EQ_INT(p.nodes[k].flops, k == 0 ? 0 : 16 * 80 * 80);
    }
    eb_ort__profile_fini(&p);

    /* Nothing skipped: the warm-up run counts too. */
    ASSERT_OK(eb_ort__profile_read(path, 0, &p, &d));
    ASSERT_EQ_INT(p.runs, 3);
    ASSERT_NEAR(p.nodes[0].total_ms, (400 + 300 + 310) / 1000.0, 1e-12);
    eb_ort__profile_fini(&p);
    /* Every run skipped (or cut off by ORT's event limit): an empty table, not an error. */
    ASSERT_OK(eb_ort__profile_read(path, 5, &p, &d));
    ASSERT_EQ_INT(p.runs, 0);
    ASSERT_EQ_INT(p.n_nodes, 0);
    eb_ort__profile_fini(&p);
    eb_ort__profile_fini(&p); /* twice, and on a zeroed struct: fine */
}

/* The table of chosen runs (eb_ort__profile_select), on the same file: runs count from the
 * first kept one, a run in two ranges counts once, and a run past the file's end (ORT's event
 * limit) is not counted. */
EB_TEST(profile_file_selects_runs)
{
    char path[1024];
    struct eb_ort_profile p = {0};
    struct eb_backend_profile t;
    struct eb_diag d = {0};
    ASSERT_OK(
        eb_ort__profile_read(write_profile("p.json", profile_text, path, sizeof(path)), 1, &p, &d));
    /* The first kept run (run 1 of the file) alone. */
    const struct eb_run_range first = {0, 1};
    ASSERT_OK(eb_ort__profile_select(&p, &first, 1, &t, &d));
    ASSERT_EQ_INT(t.runs, 1);
    ASSERT_NEAR(t.run_total_ms, 0.450, 1e-12);
    ASSERT_EQ_INT(t.n_nodes, 5);
    ASSERT_STREQ(t.nodes[0].name, "/a");
    ASSERT_NEAR(t.nodes[0].total_ms, 0.300, 1e-12);
    ASSERT_STREQ(t.nodes[2].name, "/c");
    ASSERT_NEAR(t.nodes[2].total_ms, (10 + 15) / 1000.0, 1e-12);
    ASSERT_NEAR(t.nodes[4].total_ms, 0.006, 1e-12);
    /* The second, asked past the file's end: only the run the file holds. */
    const struct eb_run_range second = {1, 10};
    ASSERT_OK(eb_ort__profile_select(&p, &second, 1, &t, &d));
    ASSERT_EQ_INT(t.runs, 1);
    ASSERT_NEAR(t.run_total_ms, 0.420, 1e-12);
    ASSERT_NEAR(t.nodes[0].total_ms, 0.310, 1e-12);
    ASSERT_NEAR(t.nodes[3].total_ms, 0.004, 1e-12);
    /* Overlapping ranges: each run once, the same as the whole table. */
    const struct eb_run_range both[] = {{0, 1}, {0, 2}, {1, 1}};
    ASSERT_OK(eb_ort__profile_select(&p, both, 3, &t, &d));
    ASSERT_EQ_INT(t.runs, 2);
    ASSERT_NEAR(t.run_total_ms, p.run_total_ms, 1e-12);
    ASSERT_EQ_INT(t.n_nodes, p.n_nodes);
    for (size_t k = 0; k < t.n_nodes; k++) {
        ASSERT_STREQ(t.nodes[k].name, p.nodes[k].name);
        ASSERT_NEAR(t.nodes[k].total_ms, p.nodes[k].total_ms, 1e-12);
    }
    /* Nothing the file holds, and no range at all: empty tables. */
    const struct eb_run_range gone[] = {{2, 3}, {7, 0}, {UINT64_MAX, UINT64_MAX}};
    ASSERT_OK(eb_ort__profile_select(&p, gone, 3, &t, &d));
    ASSERT_EQ_INT(t.runs, 0);
    ASSERT_EQ_INT(t.n_nodes, 0);
    ASSERT_NEAR(t.run_total_ms, 0, 0);
    ASSERT_OK(eb_ort__profile_select(&p, NULL, 0, &t, &d));
    ASSERT_EQ_INT(t.runs, 0);
    eb_ort__profile_fini(&p);
}

/* A decoder's runs as `edgebench llm` makes them: one warm-up repetition (skipped), then two of
 * a prefill of 8 tokens and 2 decode steps of 1. A node of the decode alone ("/d") is in its
 * table only; each phase's FLOPs are from its own shapes. */
#define PHASE_EV(name, op, idx, ts, dur, in, out)                                                  \
    "{\"cat\" : \"Node\",\"pid\" :7,\"tid\" :7,\"dur\" :" #dur ",\"ts\" :" #ts                     \
    ",\"ph\" : \"X\",\"name\" :\"" name "_kernel_time\",\"args\" : {\"input_type_shape\" : " in    \
    ",\"op_name\" : \"" op "\",\"node_index\" : \"" idx "\",\"output_type_shape\" : " out "}},\n"
#define PREFILL_RUN(t0, ta, tb, mm)                                                                \
    PHASE_EV("/m", "MatMul", "0", ta, mm, "[{\"float\":[1,8,4]},{\"float\":[4,5]}]",               \
             "[{\"float\":[1,8,5]}]")                                                              \
    PHASE_EV("/s", "Softmax", "1", tb, 2, "[{\"float\":[1,8,5]}]", "[{\"float\":[1,8,5]}]")        \
    RUN_EV(t0, 80) ",\n"
#define DECODE_RUN(t0, ta, tb, tc, mm)                                                             \
    PHASE_EV("/d", "Gather", "2", ta, 3, "[{\"float\":[9,4]}]", "[{\"float\":[1,1,4]}]")           \
    PHASE_EV("/m", "MatMul", "0", tb, mm, "[{\"float\":[1,1,4]},{\"float\":[4,5]}]",               \
             "[{\"float\":[1,1,5]}]")                                                              \
    PHASE_EV("/s", "Softmax", "1", tc, 1, "[{\"float\":[1,1,5]}]", "[{\"float\":[1,1,5]}]")        \
    RUN_EV(t0, 60) ",\n"
/* clang-format off */
static const char phases_text[] =
    "[\n"
    PREFILL_RUN(100, 101, 150, 40)                                        /* warm-up */
    DECODE_RUN(200, 201, 210, 250, 20) DECODE_RUN(300, 301, 310, 350, 20)
    PREFILL_RUN(1000, 1001, 1050, 30)                                     /* repetition 0 */
    DECODE_RUN(1100, 1101, 1110, 1150, 10) DECODE_RUN(1200, 1201, 1210, 1250, 12)
    PREFILL_RUN(2000, 2001, 2050, 34)                                     /* repetition 1 */
    DECODE_RUN(2100, 2101, 2110, 2150, 14) DECODE_RUN(2200, 2201, 2210, 2250, 16)
    "{\"cat\" : \"Session\",\"dur\" :1,\"ts\" :3000,\"name\" :\"profiler_end\"}\n"
    "]\n";
/* clang-format on */

EB_TEST(profile_file_splits_prefill_and_decode)
{
    char path[1024];
    struct eb_ort_profile p = {0};
    struct eb_backend_profile t;
    struct eb_diag d = {0};
    ASSERT_OK(
        eb_ort__profile_read(write_profile("ph.json", phases_text, path, sizeof(path)), 3, &p, &d));
    ASSERT_EQ_INT(p.runs_in_file, 9);
    ASSERT_EQ_INT(p.runs, 6);
    const struct eb_run_range prefill[] = {{0, 1}, {3, 1}}, decode[] = {{1, 2}, {4, 2}};
    ASSERT_OK(eb_ort__profile_select(&p, prefill, 2, &t, &d));
    ASSERT_EQ_INT(t.runs, 2);
    ASSERT_NEAR(t.run_total_ms, 2 * 0.080, 1e-12);
    ASSERT_EQ_INT(t.n_nodes, 2); /* no "/d" */
    ASSERT_STREQ(t.nodes[0].name, "/m");
    ASSERT_NEAR(t.nodes[0].total_ms, (30 + 34) / 1000.0, 1e-12);
    ASSERT_EQ_INT(t.nodes[0].flops, 2 * (8 * 5) * 4);
    ASSERT_STREQ(t.nodes[1].name, "/s");
    ASSERT_NEAR(t.nodes[1].total_ms, 0.004, 1e-12);
    ASSERT_EQ_INT(t.nodes[1].flops, 8 * 5);
    ASSERT_OK(eb_ort__profile_select(&p, decode, 2, &t, &d));
    ASSERT_EQ_INT(t.runs, 4);
    ASSERT_NEAR(t.run_total_ms, 4 * 0.060, 1e-12);
    ASSERT_EQ_INT(t.n_nodes, 3);
    ASSERT_STREQ(t.nodes[0].name, "/d"); /* the order the decode ran them */
    ASSERT_STREQ(t.nodes[0].op, "Gather");
    ASSERT_NEAR(t.nodes[0].total_ms, 4 * 0.003, 1e-12);
    ASSERT_STREQ(t.nodes[1].name, "/m");
    ASSERT_NEAR(t.nodes[1].total_ms, (10 + 12 + 14 + 16) / 1000.0, 1e-12);
    ASSERT_EQ_INT(t.nodes[1].flops, 2 * 5 * 4);
    ASSERT_NEAR(t.nodes[2].total_ms, 0.004, 1e-12);
    /* The phases' tables add up to the whole one (warm-up left out). */
    ASSERT_NEAR(p.nodes[0].total_ms, (30 + 34 + 10 + 12 + 14 + 16) / 1000.0, 1e-12);
    ASSERT_NEAR(p.run_total_ms, 2 * 0.080 + 4 * 0.060, 1e-12);
    eb_ort__profile_fini(&p);
}

EB_TEST(profile_file_odd_input_is_one_line_error)
{
    char path[1024], missing[1024];
    struct eb_ort_profile p = {0};
    struct eb_diag d = {0};
    snprintf(missing, sizeof(missing), "%s/none.json", eb_test_tmpdir());
    ASSERT_EQ_INT(eb_ort__profile_read(missing, 0, &p, &d), EB_ERR_IO);
    ASSERT_CONTAINS(d.msg, "none.json");
    ASSERT_CONTAINS(d.msg, "No such file");
    eb_ort__profile_fini(&p);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"", "empty"},
        {"{\"traceEvents\": []}\n", "does not start with '['"},
        {"[\n" RUN_EV(1, 2) ",\n{\"cat\" : \"Session\", \"name\" :\"model_run\", trunc\n]\n",
         "line 3 is not a JSON event"},
        {"[\n{\"cat\" : \"Session\",\"dur\" :-5,\"ts\" :1,\"name\" :\"model_run\"}\n]\n",
         "line 2 is not an event with numbers"},
        {"[\n[\"model_run\"]\n]\n", "line 2 is not an event"},
        {"[\n" RUN_EV(
             1, 100) ",\n{\"cat\":\"Node\",\"ts\":\"5\",\"dur\":1,\"name\":\"x_kernel_time\"}\n]\n",
         "line 3 is not an event with numbers"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        eb_diag_clear(&d);
        ASSERT_EQ_INT(eb_ort__profile_read(
                          write_profile("bad.json", bad[i].text, path, sizeof(path)), 0, &p, &d),
                      EB_ERR_FORMAT);
        ASSERT_CONTAINS(d.msg, "bad.json");
        ASSERT_CONTAINS(d.msg, bad[i].want);
        ASSERT_TRUE(strchr(d.msg, '\n') == NULL);
        eb_ort__profile_fini(&p);
    }
    /* Node events without args or op_name still count, with op "". */
    eb_diag_clear(&d);
    ASSERT_OK(eb_ort__profile_read(
        write_profile("noargs.json",
                      "[\n" RUN_EV(10, 100) ",\n{\"cat\":\"Node\",\"ts\":20,\"dur\":30,\"name\":"
                                            "\"n_kernel_time\"}\n]\n",
                      path, sizeof(path)),
        0, &p, &d));
    ASSERT_EQ_INT(p.n_nodes, 1);
    ASSERT_STREQ(p.nodes[0].name, "n");
    ASSERT_STREQ(p.nodes[0].op, "");
    ASSERT_NEAR(p.nodes[0].total_ms, 0.03, 1e-12);
    eb_ort__profile_fini(&p);
}

EB_TEST(profile_dir_is_private_and_removed)
{
    char dir[1024], file[1100];
    struct eb_diag d = {0};
    ASSERT_OK(eb_ort__profile_dir_make(eb_test_tmpdir(), dir, sizeof(dir), &d));
    ASSERT_TRUE(strncmp(dir, eb_test_tmpdir(), strlen(eb_test_tmpdir())) == 0);
    ASSERT_CONTAINS(dir, "/edgebench-ortprof-");
    struct stat st;
    ASSERT_TRUE(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 077) == 0);
    snprintf(file, sizeof(file), "%s/ort_2026-01-01_00-00-00.json", dir);
    FILE *fp = fopen(file, "w");
    ASSERT_TRUE(fp != NULL && fclose(fp) == 0);
    ASSERT_EQ_INT(eb_ort__profile_dir_remove(dir), 0);
    ASSERT_TRUE(stat(dir, &st) != 0);
    ASSERT_EQ_INT(eb_ort__profile_dir_remove(""), 0);
    /* A relative TMPDIR is not used (the folder would land in the working directory). */
    ASSERT_OK(eb_ort__profile_dir_make("relative/tmp", dir, sizeof(dir), &d));
    ASSERT_TRUE(strncmp(dir, "/tmp/edgebench-ortprof-", 23) == 0);
    ASSERT_EQ_INT(eb_ort__profile_dir_remove(dir), 0);
    char nowhere[64];
    snprintf(nowhere, sizeof(nowhere), "/proc/no/such/dir");
    ASSERT_EQ_INT(eb_ort__profile_dir_make(nowhere, dir, sizeof(dir), &d), EB_ERR_IO);
    ASSERT_CONTAINS(d.msg, "/proc/no/such/dir");
    ASSERT_CONTAINS(d.msg, "TMPDIR");
}

/* FLOPs per node from the shapes ORT writes with each event (as a real CPU profile has them: the
 * logical NCHW shapes, also for its NCHWc convs), counted as the native engine counts them. */
#define SHAPED_EV(op, idx, ts, in, out)                                                            \
    "{\"cat\" : \"Node\",\"pid\" :7,\"tid\" :7,\"dur\" :10,\"ts\" :" #ts                           \
    ",\"ph\" : \"X\",\"name\" :\"n" idx "_kernel_time\",\"args\" : {\"parameter_size\" : \"0\","   \
    "\"input_type_shape\" : " in ",\"op_name\" : \"" op "\",\"node_index\" : \"" idx "\","         \
    "\"output_type_shape\" : " out "}}"
/* clang-format off */
static const char shaped_text[] =
    "[\n"
    SHAPED_EV("Conv", "1", 110, "[{\"float\":[1,16,80,80]},{\"float\":[32,16,3,3]},{\"float\":[32]}]",
              "[{\"float\":[1,32,40,40]}]") ",\n"
    SHAPED_EV("FusedConv", "2", 120, "[{\"float\":[1,32,40,40]},{\"float\":[32,1,3,3]}]",
              "[{\"float\":[1,32,40,40]}]") ",\n"
    SHAPED_EV("MatMul", "3", 130, "[{\"float\":[2,3,4]},{\"float\":[4,5]}]",
              "[{\"float\":[2,3,5]}]") ",\n"
    SHAPED_EV("Gemm", "4", 140, "[{\"float\":[4,2]},{\"float\":[4,3]},{\"float\":[3]}]",
              "[{\"float\":[2,3]}]") ",\n"
    SHAPED_EV("ReorderInput", "5", 150, "[{\"float\":[1,3,8,8]}]", "[{\"float\":[1,8,8,8]}]") ",\n"
    SHAPED_EV("Conv", "6", 160, "[{\"float\":[1,3,8,8]},{\"float\":[]}]", "[{\"float\":[1,4,8,8]}]") ",\n"
    RUN_EV(100, 100) "\n"
    "]\n";
/* clang-format on */

EB_TEST(profile_file_counts_flops_from_shapes)
{
    char path[1024];
    struct eb_ort_profile p = {0};
    struct eb_diag d = {0};
    ASSERT_OK(
        eb_ort__profile_read(write_profile("s.json", shaped_text, path, sizeof(path)), 0, &p, &d));
    ASSERT_EQ_INT(p.n_nodes, 6);
    ASSERT_EQ_INT(p.nodes[0].flops, 2 * (32 * 40 * 40) * (16 * 3 * 3)); /* 2 x Y x C/g kh kw */
    ASSERT_EQ_INT(p.nodes[1].flops, 2 * (32 * 40 * 40) * (1 * 3 * 3));  /* depthwise */
    ASSERT_EQ_INT(p.nodes[2].flops, 2 * (2 * 3 * 5) * 4);               /* 2 x Y x K */
    ASSERT_EQ_INT(p.nodes[3].flops, 2 * (2 * 3) * 4);                   /* transA: K = |A| / M */
    ASSERT_EQ_INT(p.nodes[4].flops, 8 * 8 * 8);                         /* output elements */
    ASSERT_EQ_INT(p.nodes[5].flops, 0);                                 /* a weight without dims */
    eb_ort__profile_fini(&p);
}
