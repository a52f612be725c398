/*
 * The native engine's CUDA device against its CPU device: fp32 outputs within 1e-3 on the
 * synthesized yolov8n/yolo11n and the shared models, fp16's drift, fp16 detections against fp32
 * on coco128, the hard memory cap, CUDA Graph replay, the CPU fallback of nodes without a CUDA
 * kernel, the per-node profile, decoders whose sequence changes from run to run (tiny llama and
 * qwen2: a prefill then chained decode steps against the CPU device). Every case but the first skips (exit 77) where no GPU is usable
 * (CI); the first checks that a machine without one gets a clear error.
 *
 * These binaries link the engine, the model synthesizer and the YOLO post-processing only (no
 * FFmpeg), so that they run on a GPU machine with the CUDA libraries alone.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>

#include <jpeglib.h> /* after stdio.h */
#include <time.h>

#include "backends/native/native_backend.h"
#include "eb/backend.h"
#include "eb/engine.h"
#include "eb_test.h"
#include "engine/engine_internal.h" /* run_replayed, run_d2d_bytes: which path a run took */
#include "model/llm.h"
#include "model/model.h"
#include "yolo/yolo.h"

#define MIB (1024.0 * 1024.0)

static void need_gpu(void)
{
    char why[256];
    if (!eb_engine_cuda_available(why, sizeof(why)))
        EB_SKIP("%s", why);
}

static uint8_t *synth(enum eb_synth_arch arch, int imgsz, size_t *len)
{
    struct eb_synth_options o = {.arch = arch, .scale = 'n', .imgsz = imgsz, .num_classes = 80};
    uint8_t *bytes = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_model_synth(&o, &bytes, len, &d));
    return bytes;
}

/* models/<name> of ../shared/data (malloc'd); skips the case when it is absent. */
static uint8_t *shared_model(const char *name, size_t *len)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "models/%s", name);
    return eb_test_shared_file(rel, len);
}

static struct eb_engine *load_qdq(const uint8_t *bytes, size_t len, const char *what,
                                  enum eb_engine_device dev, enum eb_engine_precision prec,
                                  enum eb_engine_qdq qdq)
{
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.device = dev;
    opt.precision = prec;
    opt.qdq = qdq;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    if (eb_engine_load(bytes, len, what, &opt, &e, &d) != EB_OK)
        EB_FAIL("load %s: %s", what, d.msg);
    return e;
}

static struct eb_engine *load(const uint8_t *bytes, size_t len, const char *what,
                              enum eb_engine_device dev, enum eb_engine_precision prec)
{
    return load_qdq(bytes, len, what, dev, prec, EB_ENGINE_QDQ_FLOAT);
}

/* The input of engine e: deterministic values in [0, 1). Caller frees data. */
static struct eb_tensor random_input(const struct eb_engine *e)
{
    struct eb_engine_io io;
    eb_engine_io_info(e, &io);
    ASSERT_EQ_INT(io.n_inputs, 1);
    struct eb_tensor t = {.dtype = io.inputs[0].dtype, .rank = io.inputs[0].rank};
    int64_t n = 1;
    for (int d = 0; d < t.rank; d++)
        n *= (t.shape[d] = io.inputs[0].shape[d]);
    float *x = malloc((size_t)n * sizeof(float));
    ASSERT_TRUE(x != NULL);
    uint32_t s = 12345u;
    for (int64_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) / 16777216.0f;
    }
    t.data = x;
    return t;
}

struct diff {
    double max_abs;   /* over every output element */
    double max_score; /* output 0 of a [1, 4 + nc, N] head: the class-score rows */
    double mean_abs;  /* of output 0 */
    int64_t n_over;   /* elements differing by more than 1e-3 */
    int64_t n;
};

/* Runs both engines on `in` and compares every output. */
static struct diff compare(struct eb_engine *a, struct eb_engine *b, const struct eb_tensor *in)
{
    struct eb_tensor oa[EB_ENGINE_MAX_IO], ob[EB_ENGINE_MAX_IO];
    struct eb_engine_io io;
    struct eb_diag d = {0};
    eb_engine_io_info(a, &io);
    if (eb_engine_run(a, in, 1, oa, io.n_outputs, &d) != EB_OK ||
        eb_engine_run(b, in, 1, ob, io.n_outputs, &d) != EB_OK)
        EB_FAIL("run: %s", d.msg);
    struct diff r = {0};
    for (size_t o = 0; o < io.n_outputs; o++) {
        ASSERT_EQ_INT(oa[o].dtype, ob[o].dtype);
        if (oa[o].dtype != EB_DTYPE_F32)
            continue;
        int64_t n = 1;
        for (int k = 0; k < oa[o].rank; k++) {
            ASSERT_EQ_INT(oa[o].shape[k], ob[o].shape[k]);
            n *= oa[o].shape[k];
        }
        const float *pa = oa[o].data, *pb = ob[o].data;
        for (int64_t i = 0; i < n; i++) {
            const double dd = fabs((double)pa[i] - (double)pb[i]);
            if (!(dd == dd))
                EB_FAIL("NaN in output %zu at %lld (%g vs %g)", o, (long long)i, (double)pa[i],
                        (double)pb[i]);
            r.max_abs = dd > r.max_abs ? dd : r.max_abs;
            r.n_over += dd > 1e-3;
            if (o == 0 && oa[0].rank == 3 && i / oa[0].shape[2] >= 4)
                r.max_score = dd > r.max_score ? dd : r.max_score;
            if (o == 0)
                r.mean_abs += dd;
        }
        if (o == 0)
            r.mean_abs /= (double)(n > 0 ? n : 1);
        r.n += n;
    }
    return r;
}

static void print_info(const char *what, const struct eb_engine *e)
{
    struct eb_engine_exec_info info;
    struct eb_engine_mem mem;
    struct eb_engine_timing t;
    eb_engine_exec_info_get(e, &info);
    eb_engine_mem_info(e, &mem);
    eb_engine_timing_get(e, &t);
    printf("%s: %s %s on %s, %zu nodes (%zu on the CPU%s%s), graph %d; device MiB: arena %.2f "
           "weights %.2f workspaces+io %.2f total %.2f (cudaMemGetInfo drop %.2f); last run: "
           "h2d %.3f ms, compute %.3f ms, d2h %.3f ms\n",
           what, info.device, info.precision, info.device_name, info.n_nodes, info.n_fallback,
           info.n_fallback ? ": " : "", info.fallback, info.graph, mem.arena_bytes / MIB,
           mem.weight_bytes / MIB, mem.workspace_bytes / MIB, mem.total_bytes / MIB,
           mem.device_measured_bytes / MIB, t.h2d_ms, t.compute_ms, t.d2h_ms);
}

/* The frame of eb_engine_run_frame: packed RGB `rgb` letterboxed as `lb`. */
static struct eb_engine_frame frame_of(const uint8_t *rgb, size_t stride,
                                       const struct eb_letterbox *lb)
{
    const struct eb_engine_frame f = {.rgb = rgb,
                                      .width = lb->src_w,
                                      .height = lb->src_h,
                                      .stride = stride,
                                      .new_w = lb->new_w,
                                      .new_h = lb->new_h,
                                      .pad_left = lb->pad_left,
                                      .pad_top = lb->pad_top};
    return f;
}

EB_TEST(cuda_absent_is_a_clear_error)
{
    char why[256];
    if (eb_engine_cuda_available(why, sizeof(why)))
        EB_SKIP("a GPU is usable here; this case checks the message where none is");
    size_t len;
    uint8_t *bytes = synth(EB_SYNTH_YOLOV8, 64, &len);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.device = EB_ENGINE_DEVICE_CUDA;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    enum eb_status st = eb_engine_load(bytes, len, "yolov8n-64", &opt, &e, &d);
    ASSERT_TRUE(st == EB_ERR_DEVICE || st == EB_ERR_UNSUPPORTED);
    ASSERT_TRUE(e == NULL);
    ASSERT_TRUE(strstr(d.msg, "yolov8n-64") != NULL);
    ASSERT_TRUE(strstr(d.msg, "cuda") != NULL);
    printf("%s\n", d.msg);
    /* fp16 on the CPU is refused whatever the build. */
    opt.device = EB_ENGINE_DEVICE_CPU;
    opt.precision = EB_ENGINE_PRECISION_FP16;
    struct eb_diag d2 = {0};
    ASSERT_EQ_INT(eb_engine_load(bytes, len, "yolov8n-64", &opt, &e, &d2), EB_ERR_UNSUPPORTED);
    ASSERT_TRUE(strstr(d2.msg, "fp16") != NULL);
    free(bytes);
}

/* A synthesized 640 model loaded twice (a: cuda in `prec`, b: `b_dev` in fp32), run on one
 * input; the engines and bytes come back for the case's own checks (free_pair). */
struct pair {
    uint8_t *bytes;
    struct eb_engine *a, *b;
    struct diff r;
};

static struct pair synth_pair(enum eb_synth_arch arch, const char *name,
                              enum eb_engine_precision prec, enum eb_engine_device b_dev)
{
    need_gpu();
    struct pair p;
    size_t len;
    p.bytes = synth(arch, 640, &len);
    p.a = load(p.bytes, len, name, EB_ENGINE_DEVICE_CUDA, prec);
    p.b = load(p.bytes, len, name, b_dev, EB_ENGINE_PRECISION_FP32);
    struct eb_tensor in = random_input(p.a);
    p.r = compare(p.a, p.b, &in);
    free(in.data);
    print_info(name, p.a);
    return p;
}

static void free_pair(struct pair *p)
{
    eb_engine_destroy(p->a);
    eb_engine_destroy(p->b);
    free(p->bytes);
}

static void synth_matches_cpu(enum eb_synth_arch arch, const char *name)
{
    struct pair p = synth_pair(arch, name, EB_ENGINE_PRECISION_FP32, EB_ENGINE_DEVICE_CPU);
    struct eb_engine *g = p.a;
    const struct diff r = p.r;
    printf("%s fp32 cuda vs cpu: max abs %.3g, mean abs %.3g over %lld values\n", name, r.max_abs,
           r.mean_abs, (long long)r.n);
    struct eb_engine_exec_info info;
    eb_engine_exec_info_get(g, &info);
    ASSERT_EQ_INT(info.n_fallback, 0); /* every node of a float YOLO runs on the GPU */
    ASSERT_TRUE(r.max_abs <= 1e-3);
    free_pair(&p);
}

EB_TEST(yolov8n_fp32_matches_cpu)
{
    synth_matches_cpu(EB_SYNTH_YOLOV8, "yolov8n-640");
}

EB_TEST(yolo11n_fp32_matches_cpu)
{
    synth_matches_cpu(EB_SYNTH_YOLO11, "yolo11n-640");
}

/* fp16: channels-last between the convs with cuDNN graph-API convolutions (the default)
 * against NCHW throughout on the legacy API (--no_layout): the same function within fp16's
 * drift bounds (two different roundings of the same half arithmetic), and the layout pass
 * really changed something. */
EB_TEST(channels_last_matches_nchw)
{
    need_gpu();
    size_t len;
    uint8_t *bytes = synth(EB_SYNTH_YOLO11, 640, &len);
    struct eb_engine *e[2];
    for (int i = 0; i < 2; i++) {
        struct eb_engine_options opt;
        eb_engine_options_default(&opt);
        opt.device = EB_ENGINE_DEVICE_CUDA;
        opt.precision = EB_ENGINE_PRECISION_FP16;
        if (i == 1)
            opt.passes &= ~(uint32_t)EB_ENGINE_PASS_LAYOUT;
        struct eb_diag d = {0};
        e[i] = NULL;
        if (eb_engine_load(bytes, len, "yolo11n-640", &opt, &e[i], &d) != EB_OK)
            EB_FAIL("load: %s", d.msg);
    }
    struct eb_tensor in = random_input(e[0]);
    const struct diff r = compare(e[0], e[1], &in);
    struct eb_engine_exec_info a, b;
    eb_engine_exec_info_get(e[0], &a);
    eb_engine_exec_info_get(e[1], &b);
    printf("channels-last: %zu activations NHWC; vs NCHW max abs %.3g, mean abs %.3g\n",
           a.n_blocked, r.max_abs, r.mean_abs);
    print_info("nhwc", e[0]);
    print_info("nchw", e[1]);
    ASSERT_TRUE(a.n_blocked > 50); /* the backbone and neck, not a few tensors */
    ASSERT_EQ_INT(b.n_blocked, 0);
    ASSERT_TRUE(r.max_abs <= 1.0 && r.mean_abs <= 0.05); /* fp16_drift's bounds */
    free(in.data);
    eb_engine_destroy(e[0]);
    eb_engine_destroy(e[1]);
    free(bytes);
}

/*
 * Every model of ../shared/data/models and models-fp32 that the engine loads. Float graphs:
 * max abs ≤ 1e-3. Quantised graphs (int8 in the name): float differences of a few ulps before a
 * quantiser (the QDQ model's fake quantisation, DynamicQuantizeLinear) flip some roundings by a
 * whole scale step, which propagate (a flipped DFL bin moves a box edge by pixels), so they are
 * held to the bounds tests/unit/test_engine.c uses against ONNX Runtime: class scores ≤ 0.02
 * (dynamic) or 0.1 (QDQ) and mean abs ≤ 0.05 / 0.3; the max is printed.
 */
EB_TEST(shared_models_fp32_match_cpu)
{
    need_gpu();
    const char *dir = eb_test_shared_data();
    if (dir == NULL)
        EB_SKIP("shared data folder absent");
    const char *subs[2] = {"models", "models-fp32"};
    int n_models = 0, n_bad = 0;
    for (int sub = 0; sub < 2; sub++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, subs[sub]);
        DIR *dd = opendir(path);
        if (dd == NULL)
            continue;
        struct dirent *de;
        while ((de = readdir(dd)) != NULL) {
            const size_t nl = strlen(de->d_name);
            if (nl < 5 || strcmp(de->d_name + nl - 5, ".onnx") != 0)
                continue;
            snprintf(path, sizeof(path), "%s/%s/%s", dir, subs[sub], de->d_name);
            size_t len;
            uint8_t *bytes = (uint8_t *)eb_test_read_file(path, &len);
            ASSERT_TRUE(bytes != NULL);
            struct eb_engine_options opt;
            eb_engine_options_default(&opt);
            struct eb_engine *c = NULL, *g = NULL;
            struct eb_diag d = {0};
            if (eb_engine_load(bytes, len, de->d_name, &opt, &c, &d) != EB_OK) {
                printf("%s: not loaded by the engine (%s)\n", de->d_name, d.msg);
                free(bytes);
                continue;
            }
            opt.device = EB_ENGINE_DEVICE_CUDA;
            if (eb_engine_load(bytes, len, de->d_name, &opt, &g, &d) != EB_OK)
                EB_FAIL("%s loads on the CPU but not on cuda: %s", de->d_name, d.msg);
            struct eb_tensor in = random_input(g);
            struct diff r = compare(g, c, &in);
            print_info(de->d_name, g);
            printf("%s fp32 cuda vs cpu: max abs %.3g (scores %.3g), mean abs %.3g, %lld of %lld "
                   "values off by more than 1e-3\n",
                   de->d_name, r.max_abs, r.max_score, r.mean_abs, (long long)r.n_over,
                   (long long)r.n);
            n_models++;
            if (strstr(de->d_name, "int8_qdq") != NULL)
                n_bad += r.max_score > 0.1 || r.mean_abs > 0.3;
            else if (strstr(de->d_name, "int8") != NULL)
                n_bad += r.max_score > 0.02 || r.mean_abs > 0.05;
            else
                n_bad += r.max_abs > 1e-3;
            free(in.data);
            eb_engine_destroy(g);
            eb_engine_destroy(c);
            free(bytes);
        }
        closedir(dd);
    }
    if (n_models == 0)
        EB_SKIP("no model in %s/models or models-fp32", dir);
    printf("%d models, %d over their bound\n", n_models, n_bad);
    ASSERT_EQ_INT(n_bad, 0);
}

static void fp16_drift(enum eb_synth_arch arch, const char *name)
{
    struct pair p = synth_pair(arch, name, EB_ENGINE_PRECISION_FP16, EB_ENGINE_DEVICE_CUDA);
    struct eb_engine *h = p.a, *f = p.b;
    const struct diff r = p.r;
    printf("%s fp16 vs fp32 (cuda): max abs %.3g, mean abs %.3g\n", name, r.max_abs, r.mean_abs);
    /* channels-last, every C2f / C3k2 Concat and its Split in place (rows sliced along C) */
    struct eb_engine_exec_info ih;
    eb_engine_exec_info_get(h, &ih);
    printf("%s fp16: %zu channels-last values, %zu Concat and %zu Split nodes in place\n", name,
           ih.n_blocked, ih.n_concat_in_place, ih.n_split_in_place);
    ASSERT_TRUE(ih.n_blocked > 0);
    ASSERT_TRUE(ih.n_concat_in_place >= 8);
    ASSERT_TRUE(ih.n_split_in_place >= 8);
    struct eb_engine_mem mh, mf;
    eb_engine_mem_info(h, &mh);
    eb_engine_mem_info(f, &mf);
    /* half the bytes for activations and weights */
    ASSERT_TRUE(mh.arena_bytes * 10 <= mf.arena_bytes * 6);
    ASSERT_TRUE(mh.weight_bytes * 10 <= mf.weight_bytes * 6);
    /* boxes are in pixels of a 640 input: half's 11-bit mantissa allows a fraction of a pixel */
    ASSERT_TRUE(r.max_abs <= 1.0);
    ASSERT_TRUE(r.mean_abs <= 0.05);
    free_pair(&p);
}

EB_TEST(yolov8n_fp16_drift)
{
    fp16_drift(EB_SYNTH_YOLOV8, "yolov8n-640");
}

EB_TEST(yolo11n_fp16_drift)
{
    fp16_drift(EB_SYNTH_YOLO11, "yolo11n-640");
}

/* ---- fp16 detections against fp32 on coco128 ------------------------------------------------ */

struct jerr {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
};

static void jerr_exit(j_common_ptr c)
{
    longjmp(((struct jerr *)c->err)->jb, 1);
}

/* RGB pixels of a JPEG file (malloc'd), NULL when unreadable. */
static uint8_t *read_jpeg(const char *path, int *w, int *h)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    struct jpeg_decompress_struct c;
    struct jerr je;
    uint8_t *volatile px = NULL;
    c.err = jpeg_std_error(&je.pub);
    je.pub.error_exit = jerr_exit;
    if (setjmp(je.jb)) {
        jpeg_destroy_decompress(&c);
        fclose(f);
        free(px);
        return NULL;
    }
    jpeg_create_decompress(&c);
    jpeg_stdio_src(&c, f);
    jpeg_read_header(&c, TRUE);
    c.out_color_space = JCS_RGB;
    jpeg_start_decompress(&c);
    *w = (int)c.output_width;
    *h = (int)c.output_height;
    px = malloc((size_t)*w * (size_t)*h * 3);
    while (px != NULL && c.output_scanline < c.output_height) {
        JSAMPROW row = px + (size_t)c.output_scanline * (size_t)*w * 3;
        jpeg_read_scanlines(&c, &row, 1);
    }
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    fclose(f);
    return px;
}

static size_t detect(struct eb_engine *e, const struct eb_tensor *in, const struct eb_letterbox *lb,
                     struct eb_yolo_scratch *s, const struct eb_yolo_layout_info *li,
                     struct eb_detections *out)
{
    struct eb_tensor o[EB_ENGINE_MAX_IO];
    struct eb_engine_io io;
    struct eb_diag d = {0};
    eb_engine_io_info(e, &io);
    ASSERT_OK(eb_engine_run(e, in, 1, o, io.n_outputs, &d));
    const struct eb_yolo_params p = {.conf = 0.25f, .iou = 0.7f, .max_det = 300};
    eb_yolo_postprocess(li, o[0].data, lb, &p, s, out);
    return out->count;
}

/* Detections of engines `ref` and `test` (the same model) on coco128's train2017 images, matched
 * one to one as the report's drift does it (same class, IoU >= 0.9); skips without the images. */
static struct eb_yolo_drift coco128_agreement(struct eb_engine *ref, struct eb_engine *test)
{
    const char *dir = eb_test_shared_data();
    char path[1024];
    struct eb_engine_io io;
    eb_engine_io_info(ref, &io);
    struct eb_yolo_layout_info li;
    struct eb_diag d = {0};
    ASSERT_OK(eb_yolo_layout_detect(io.outputs[0].shape, io.outputs[0].rank, 80, &li, &d));
    struct eb_yolo_scratch sh = {0}, sf = {0};
    ASSERT_OK(eb_yolo_scratch_init(&sh, &li, &d));
    ASSERT_OK(eb_yolo_scratch_init(&sf, &li, &d));
    struct eb_detection dh[300], df[300];
    struct eb_detections outh = {.items = dh, .capacity = 300};
    struct eb_detections outf = {.items = df, .capacity = 300};
    const int sz = (int)io.inputs[0].shape[2];
    float *x = malloc((size_t)3 * sz * sz * sizeof(float));
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .data = x};
    in.shape[0] = 1, in.shape[1] = 3, in.shape[2] = sz, in.shape[3] = sz;
    snprintf(path, sizeof(path), "%s/datasets/coco128/images/train2017", dir);
    DIR *dd = opendir(path);
    if (dd == NULL)
        EB_SKIP("%s is absent", path);
    struct eb_yolo_drift drift = {0};
    struct dirent *de;
    while ((de = readdir(dd)) != NULL) {
        if (strstr(de->d_name, ".jpg") == NULL)
            continue;
        char file[1400];
        snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
        int w, hh;
        uint8_t *px = read_jpeg(file, &w, &hh);
        ASSERT_TRUE(px != NULL);
        struct eb_letterbox lb;
        eb_letterbox_compute(w, hh, sz, sz, &lb);
        eb_letterbox_rgb_to_nchw_f32(px, w, hh, (size_t)w * 3, &lb, 3, x);
        detect(ref, &in, &lb, &sf, &li, &outf);
        detect(test, &in, &lb, &sh, &li, &outh);
        unsigned char used[300];
        eb_yolo_drift_add_dets(&drift, &outf, &outh, 0.9f, used);
        free(px);
    }
    closedir(dd);
    eb_yolo_scratch_fini(&sh);
    eb_yolo_scratch_fini(&sf);
    free(x);
    return drift;
}

/* The share of each side's detections matched, printed; both at least `min`. */
static void expect_agreement(const struct eb_yolo_drift *dr, const char *ref, const char *test,
                             double min)
{
    const long n_img = (long)dr->frames, n_f = (long)dr->boxes_ref, n_h = (long)dr->boxes_test,
               n_matched = (long)dr->boxes_matched;
    printf("coco128: %ld images, %ld %s detections, %ld %s detections, %ld matched (same "
           "class, IoU >= 0.9): %.2f%% of %s's, %.2f%% of %s's\n",
           n_img, n_f, ref, n_h, test, n_matched,
           n_f > 0 ? 100.0 * (double)n_matched / (double)n_f : 0.0, ref,
           n_h > 0 ? 100.0 * (double)n_matched / (double)n_h : 0.0, test);
    ASSERT_TRUE(n_img >= 100);
    ASSERT_TRUE(n_f >= 100);
    ASSERT_TRUE((double)n_matched >= min * (double)n_f);
    ASSERT_TRUE((double)n_matched >= min * (double)n_h);
}

EB_TEST(fp16_detections_agree_coco128)
{
    need_gpu();
    size_t len;
    uint8_t *bytes = shared_model("yolov8n_int8_qdq.onnx", &len);
    /* The shared data's one YOLOv8 with real COCO weights is a QDQ export; stripped of its
     * activation Q/DQ pairs it is the float model it was quantised from (weights on int8
     * steps). Its fake quantisation itself would turn half's rounding into whole quantisation
     * steps, which is not what fp16 costs a float model. */
    struct eb_engine *h = load_qdq(bytes, len, "yolov8n_int8_qdq", EB_ENGINE_DEVICE_CUDA,
                                   EB_ENGINE_PRECISION_FP16, EB_ENGINE_QDQ_STRIP);
    struct eb_engine *f = load_qdq(bytes, len, "yolov8n_int8_qdq", EB_ENGINE_DEVICE_CUDA,
                                   EB_ENGINE_PRECISION_FP32, EB_ENGINE_QDQ_STRIP);
    const struct eb_yolo_drift dr = coco128_agreement(f, h);
    expect_agreement(&dr, "fp32", "fp16", 0.99);
    eb_engine_destroy(h);
    eb_engine_destroy(f);
    free(bytes);
}

/*
 * int8 on cuda (the shared QDQ yolov8n: every conv on the int8 kernels, their bytes requantised
 * in the epilogue, the nodes between them in fp16) against the CPU's int8 path on coco128. The
 * two compute the same integers; what differs is fp16 between the convs (a DequantizeLinear →
 * Add/Concat → QuantizeLinear in half may land a value on the other side of a rounding
 * boundary, and the byte then differs by one step) and the fp16 head. Such one-step flips move
 * boxes through the DFL: on the CPU alone, this model's int8 path and its fake-quant float path
 * (--qdq float) agree on 93.5% of the detections (632 of 676, the same matching), so the bound
 * here is 85%; the mAP of the two paths is compared by tests/e2e/test_int8_gpu.sh.
 */
EB_TEST(int8_detections_agree_with_cpu_int8_coco128)
{
    need_gpu();
    size_t len;
    uint8_t *bytes = shared_model("yolov8n_int8_qdq.onnx", &len);
    struct eb_engine *g = load_qdq(bytes, len, "yolov8n_int8_qdq", EB_ENGINE_DEVICE_CUDA,
                                   EB_ENGINE_PRECISION_FP16, EB_ENGINE_QDQ_INT8);
    struct eb_engine *c = load_qdq(bytes, len, "yolov8n_int8_qdq", EB_ENGINE_DEVICE_CPU,
                                   EB_ENGINE_PRECISION_FP32, EB_ENGINE_QDQ_INT8);
    struct eb_engine_exec_info ig, ic;
    eb_engine_exec_info_get(g, &ig);
    eb_engine_exec_info_get(c, &ic);
    printf("cuda: %s; qdq %s, %zu nodes on the CPU\ncpu: %s\n", ig.int8_nodes, ig.qdq,
           ig.n_fallback, ic.int8_nodes);
    ASSERT_EQ_INT((int64_t)ig.n_int8, (int64_t)ic.n_int8);
    ASSERT_EQ_INT((int64_t)ig.n_int8, 64); /* every conv of the model */
    /* no grouped conv in v8: every conv on the tensor cores but the image's (3 channels, 3 x 3:
     * the CUDA cores' dp4a kernel) */
    ASSERT_EQ_INT((int64_t)ig.n_int8_tc, (int64_t)ig.n_int8 - 1);
    ASSERT_EQ_INT((int64_t)ig.n_fallback, 0);
    ASSERT_TRUE(strcmp(ig.qdq, "int8") == 0);
    struct eb_tensor in = random_input(g);
    const struct diff r = compare(g, c, &in);
    printf("int8 cuda vs cpu, one random input: max abs %.3g (scores %.3g), mean abs %.3g\n",
           r.max_abs, r.max_score, r.mean_abs);
    ASSERT_TRUE(r.max_score <= 0.1 && r.mean_abs <= 0.3);
    free(in.data);
    const struct eb_yolo_drift dr = coco128_agreement(c, g);
    expect_agreement(&dr, "cpu int8", "cuda int8", 0.85);
    eb_engine_destroy(g);
    eb_engine_destroy(c);
    free(bytes);
}

/* ---- memory cap, graph replay, fallback, profile -------------------------------------------- */

EB_TEST(gpu_mem_cap_is_hard)
{
    need_gpu();
    size_t len;
    uint8_t *bytes = synth(EB_SYNTH_YOLO11, 640, &len);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.device = EB_ENGINE_DEVICE_CUDA;
    opt.mem_cap_bytes = 4u << 20;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_engine_load(bytes, len, "yolo11n-640", &opt, &e, &d), EB_ERR_LIMIT);
    printf("%s\n", d.msg);
    ASSERT_TRUE(strstr(d.msg, "needed") != NULL && strstr(d.msg, "limit 4.0 MiB") != NULL);
    /* A cap just above what the load needs: it loads, and stays under it. */
    opt.mem_cap_bytes = 0;
    e = load(bytes, len, "yolo11n-640", EB_ENGINE_DEVICE_CUDA, EB_ENGINE_PRECISION_FP32);
    struct eb_engine_mem mem;
    eb_engine_mem_info(e, &mem);
    eb_engine_destroy(e);
    opt.mem_cap_bytes = mem.total_bytes + (1u << 20);
    ASSERT_OK(eb_engine_load(bytes, len, "yolo11n-640", &opt, &e, &d));
    struct eb_engine_mem capped;
    eb_engine_mem_info(e, &capped);
    print_info("yolo11n-640 capped", e);
    ASSERT_TRUE(capped.total_bytes <= opt.mem_cap_bytes);
    /* The device's own accounting against the driver's: the drop in free memory covers ours. */
    ASSERT_TRUE(capped.device_measured_bytes + (4u << 20) >= capped.total_bytes);
    eb_engine_destroy(e);
    free(bytes);
}

EB_TEST(graph_replay_is_exact)
{
    need_gpu();
    size_t len;
    uint8_t *bytes = synth(EB_SYNTH_YOLOV8, 320, &len);
    struct eb_engine *e =
        load(bytes, len, "yolov8n-320", EB_ENGINE_DEVICE_CUDA, EB_ENGINE_PRECISION_FP32);
    struct eb_tensor in = random_input(e), out[EB_ENGINE_MAX_IO];
    struct eb_diag d = {0};
    struct eb_engine_io io;
    eb_engine_io_info(e, &io);
    ASSERT_OK(eb_engine_run(e, &in, 1, out, io.n_outputs, &d));
    const size_t n = (size_t)(out[0].shape[0] * out[0].shape[1] * out[0].shape[2]);
    float *first = malloc(n * sizeof(float));
    memcpy(first, out[0].data, n * sizeof(float));
    for (int r = 0; r < 3; r++) {
        ASSERT_OK(eb_engine_run(e, &in, 1, out, io.n_outputs, &d));
        ASSERT_TRUE(memcmp(first, out[0].data, n * sizeof(float)) == 0);
    }
    struct eb_engine_exec_info info;
    struct eb_engine_timing t;
    eb_engine_exec_info_get(e, &info);
    eb_engine_timing_get(e, &t);
    ASSERT_EQ_INT(info.graph, 1);
    ASSERT_TRUE(t.compute_ms > 0.0 && t.h2d_ms > 0.0 && t.d2h_ms > 0.0);
    print_info("yolov8n-320", e);
    free(first);
    free(in.data);
    eb_engine_destroy(e);
    free(bytes);
}

/*
 * The captured graph with its independent branches on parallel streams (the default) against the
 * same model on one stream in node order: fp32 within 1e-3 (the CPU bound: the two engines may
 * time different cuDNN algorithms), fp16 within its drift bounds, and every replay bit-identical
 * to the first on each input (a missing edge shows as a race that changes outputs between
 * replays). The branches really spread (yolo11n: the head's branches, the neck's scales).
 */
EB_TEST(parallel_lanes_match_one_stream)
{
    need_gpu();
    size_t len;
    uint8_t *bytes = synth(EB_SYNTH_YOLO11, 640, &len);
    for (int prec = 0; prec < 2; prec++) {
        struct eb_engine *e[2];
        for (int i = 0; i < 2; i++) {
            struct eb_engine_options opt;
            eb_engine_options_default(&opt);
            opt.device = EB_ENGINE_DEVICE_CUDA;
            opt.precision = prec ? EB_ENGINE_PRECISION_FP16 : EB_ENGINE_PRECISION_FP32;
            if (i == 1)
                opt.passes &= ~(uint32_t)EB_ENGINE_PASS_LANES;
            struct eb_diag d = {0};
            e[i] = NULL;
            if (eb_engine_load(bytes, len, "yolo11n-640", &opt, &e[i], &d) != EB_OK)
                EB_FAIL("load: %s", d.msg);
        }
        struct eb_engine_exec_info a, b;
        eb_engine_exec_info_get(e[0], &a);
        eb_engine_exec_info_get(e[1], &b);
        struct eb_tensor in = random_input(e[0]), out[EB_ENGINE_MAX_IO];
        float *x = in.data;
        struct eb_engine_io io;
        eb_engine_io_info(e[0], &io);
        const size_t n = (size_t)(io.outputs[0].shape[1] * io.outputs[0].shape[2]);
        float *first = malloc(n * sizeof(float));
        ASSERT_TRUE(first != NULL);
        double worst = 0.0, worst_mean = 0.0;
        for (int input = 0; input < 3; input++) {
            x[input * 7919] += 0.5f; /* a different input each time */
            const struct diff r = compare(e[0], e[1], &in);
            worst = r.max_abs > worst ? r.max_abs : worst;
            worst_mean = r.mean_abs > worst_mean ? r.mean_abs : worst_mean;
            struct eb_diag d = {0};
            for (int rep = 0; rep < 5; rep++) {
                ASSERT_OK(eb_engine_run(e[0], &in, 1, out, io.n_outputs, &d));
                if (rep == 0)
                    memcpy(first, out[0].data, n * sizeof(float));
                else if (memcmp(first, out[0].data, n * sizeof(float)) != 0)
                    EB_FAIL("%s: replay %d of input %d differs from the first",
                            prec ? "fp16" : "fp32", rep, input);
            }
        }
        printf("yolo11n-640 %s: %d streams vs 1: max abs %.3g, mean abs %.3g\n",
               prec ? "fp16" : "fp32", a.lanes, worst, worst_mean);
        ASSERT_TRUE(a.graph == 1 && a.lanes > 1);
        ASSERT_TRUE(b.graph == 1 && b.lanes == 1);
        if (prec)
            ASSERT_TRUE(worst <= 1.0 && worst_mean <= 0.05); /* fp16_drift's bounds */
        else
            ASSERT_TRUE(worst <= 1e-3);
        free(first);
        free(in.data);
        eb_engine_destroy(e[0]);
        eb_engine_destroy(e[1]);
    }
    free(bytes);
}

EB_TEST(int8_dynamic_nodes_fall_back_named)
{
    need_gpu();
    size_t len;
    uint8_t *bytes = shared_model("yolov8n_320_int8_dynamic.onnx", &len);
    struct eb_engine *g =
        load(bytes, len, "int8-dyn", EB_ENGINE_DEVICE_CUDA, EB_ENGINE_PRECISION_FP32);
    struct eb_engine_exec_info info;
    eb_engine_exec_info_get(g, &info);
    printf("on the CPU: %zu nodes: %s\n", info.n_fallback, info.fallback);
    ASSERT_TRUE(info.n_fallback > 0);
    ASSERT_TRUE(strstr(info.fallback, "ConvInteger") != NULL);
    /* fp16 runs every node on the GPU, so it refuses the model, naming a node. */
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.device = EB_ENGINE_DEVICE_CUDA;
    opt.precision = EB_ENGINE_PRECISION_FP16;
    struct eb_engine *h = NULL;
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_engine_load(bytes, len, "int8-dyn", &opt, &h, &d), EB_ERR_UNSUPPORTED);
    printf("%s\n", d.msg);
    ASSERT_CONTAINS(d.msg, "node '");
    ASSERT_ADVICE(d, EB_ADVICE_FP32 | EB_ADVICE_CPU); /* the harness says --precision fp32 */
    eb_engine_destroy(g);
    free(bytes);
}

EB_TEST(profile_times_every_node)
{
    need_gpu();
    size_t len;
    uint8_t *bytes = synth(EB_SYNTH_YOLO11, 640, &len);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.device = EB_ENGINE_DEVICE_CUDA;
    opt.profile = 1;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_load(bytes, len, "yolo11n-640", &opt, &e, &d));
    struct eb_tensor in = random_input(e), out[EB_ENGINE_MAX_IO];
    struct eb_engine_io io;
    eb_engine_io_info(e, &io);
    for (int r = 0; r < 5; r++)
        ASSERT_OK(eb_engine_run(e, &in, 1, out, io.n_outputs, &d));
    struct eb_engine_profile p;
    eb_engine_profile_get(e, &p);
    ASSERT_EQ_INT(p.runs, 5);
    double sum = 0.0, conv = 0.0;
    for (size_t k = 0; k < p.n_nodes; k++) {
        sum += p.nodes[k].total_ms;
        if (strcmp(p.nodes[k].op, "Conv") == 0)
            conv += p.nodes[k].total_ms;
    }
    printf("profile: %zu nodes, %.3f ms per run (%.3f in Conv), forward %.3f ms per run\n",
           p.n_nodes, sum / 5, conv / 5, p.run_total_ms / 5);
    ASSERT_TRUE(sum > 0.0 && conv > 0.0);
    /* the nodes' events partition the forward */
    ASSERT_NEAR(sum, p.run_total_ms, 0.05 * p.run_total_ms + 0.01);
    free(in.data);
    eb_engine_destroy(e);
    free(bytes);
}

/* Output 0 of a run on the host-letterboxed frame vs eb_engine_run_frame (max abs diff). */
static double frame_vs_host(struct eb_engine *e, const uint8_t *rgb, int w, int h, size_t stride,
                            int imgsz)
{
    struct eb_letterbox lb;
    eb_letterbox_compute(w, h, imgsz, imgsz, &lb);
    const size_t n = 3 * (size_t)imgsz * (size_t)imgsz;
    float *x = malloc(n * sizeof(float));
    ASSERT_TRUE(x != NULL);
    eb_letterbox_rgb_to_nchw_f32__ref(rgb, w, h, stride, &lb, 3, x);
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .data = x};
    in.shape[0] = 1;
    in.shape[1] = 3;
    in.shape[2] = in.shape[3] = imgsz;
    struct eb_tensor oh[EB_ENGINE_MAX_IO], of[EB_ENGINE_MAX_IO];
    struct eb_engine_io io;
    struct eb_diag d = {0};
    eb_engine_io_info(e, &io);
    ASSERT_OK(eb_engine_run(e, &in, 1, oh, io.n_outputs, &d));
    const int64_t numel = eb_tensor_numel(&oh[0]);
    float *host = malloc((size_t)numel * sizeof(float));
    ASSERT_TRUE(host != NULL);
    memcpy(host, oh[0].data, (size_t)numel * sizeof(float));
    const struct eb_engine_frame f = frame_of(rgb, stride, &lb);
    ASSERT_OK(eb_engine_run_frame(e, &f, of, io.n_outputs, &d));
    ASSERT_EQ_INT(eb_tensor_numel(&of[0]), numel);
    const float *fr = of[0].data;
    double m = 0.0;
    for (int64_t i = 0; i < numel; i++) {
        const double dd = fabs((double)fr[i] - (double)host[i]);
        if (!(dd == dd))
            EB_FAIL("NaN at %lld", (long long)i);
        m = dd > m ? dd : m;
    }
    struct eb_engine_timing t;
    eb_engine_timing_get(e, &t);
    printf("frame %dx%d: max abs %.3g vs host letterbox; h2d %.3f pre %.3f compute %.3f d2h %.3f "
           "ms\n",
           w, h, m, t.h2d_ms, t.pre_ms, t.compute_ms, t.d2h_ms);
    ASSERT_TRUE(t.pre_ms > 0.0 && t.compute_ms > 0.0);
    free(host);
    free(x);
    return m;
}

/* Preprocessing on the device gives the forward what the host letterbox gives it: frames of
 * two sizes (the graph is captured again for the second), padded rows, the engine's own
 * page-locked buffer; and a frame too large for the cap fails with the figures. */
EB_TEST(frame_input_matches_host_letterbox)
{
    need_gpu();
    size_t len;
    uint8_t *bytes = synth(EB_SYNTH_YOLOV8, 320, &len);
    static const struct {
        int w, h, pad;
    } frames[] = {{1920, 1080, 0}, {333, 517, 9}, {1920, 1080, 0}};
    for (int p = 0; p < 2; p++) {
        const enum eb_engine_precision prec =
            p ? EB_ENGINE_PRECISION_FP16 : EB_ENGINE_PRECISION_FP32;
        struct eb_engine *e = load(bytes, len, "yolov8n-320", EB_ENGINE_DEVICE_CUDA, prec);
        char why[160];
        ASSERT_TRUE(eb_engine_frame_input(e, why, sizeof(why)));
        for (size_t t = 0; t < sizeof(frames) / sizeof(frames[0]); t++) {
            const size_t stride = (size_t)frames[t].w * 3 + (size_t)frames[t].pad;
            uint8_t *rgb = malloc(stride * (size_t)frames[t].h);
            ASSERT_TRUE(rgb != NULL);
            for (size_t i = 0; i < stride * (size_t)frames[t].h; i++)
                rgb[i] = (uint8_t)((i * 2654435761u) >> 13);
            const double m = frame_vs_host(e, rgb, frames[t].w, frames[t].h, stride, 320);
            /* fp32: the same input to float rounding; fp16: the same halves but for a rounding
             * step of the input cast (one half ulp of a pixel) amplified by the net. */
            ASSERT_TRUE(m <= (p ? 0.5 : 1e-3));
            free(rgb);
        }
        /* Decoded straight into the engine's buffer: no staging copy, same result. */
        uint8_t *buf = NULL;
        struct eb_diag d = {0};
        ASSERT_OK(eb_engine_frame_buffer(e, 640, 480, &buf, &d));
        for (size_t i = 0; i < 640 * 480 * 3; i++)
            buf[i] = (uint8_t)(i * 7);
        ASSERT_TRUE(frame_vs_host(e, buf, 640, 480, 640 * 3, 320) <= (p ? 0.5 : 1e-3));
        /* The frame buffers are in our count, and the driver's free memory fell by as much. */
        struct eb_engine_mem m;
        eb_engine_mem_info(e, &m);
        printf("device MiB: ours %.2f, cudaMemGetInfo drop %.2f\n", m.total_bytes / MIB,
               m.device_measured_bytes / MIB);
        ASSERT_TRUE(m.workspace_bytes >= 1920u * 1080u * 3u);
        ASSERT_TRUE(m.device_measured_bytes + (4u << 20) >= m.total_bytes);
        eb_engine_destroy(e);
    }
    /* The CPU device says it preprocesses on the host. */
    struct eb_engine *c =
        load(bytes, len, "yolov8n-320", EB_ENGINE_DEVICE_CPU, EB_ENGINE_PRECISION_FP32);
    char why[160];
    ASSERT_TRUE(!eb_engine_frame_input(c, why, sizeof(why)));
    ASSERT_TRUE(strstr(why, "cpu") != NULL);
    eb_engine_destroy(c);
    /* The cap: what the load needs plus 1 MiB; under it the engine may take less (its lanes
     * share one cuDNN workspace), so the frame asked for is one more than what is left. */
    struct eb_engine *e =
        load(bytes, len, "yolov8n-320", EB_ENGINE_DEVICE_CUDA, EB_ENGINE_PRECISION_FP32);
    struct eb_engine_mem mem;
    eb_engine_mem_info(e, &mem);
    eb_engine_destroy(e);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.device = EB_ENGINE_DEVICE_CUDA;
    opt.mem_cap_bytes = mem.total_bytes + (1u << 20);
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_load(bytes, len, "yolov8n-320", &opt, &e, &d));
    eb_engine_mem_info(e, &mem);
    ASSERT_TRUE(mem.total_bytes <= opt.mem_cap_bytes);
    const int rows = (int)((opt.mem_cap_bytes - mem.total_bytes) / (3u * 3840u)) + 64;
    uint8_t *big = NULL;
    ASSERT_EQ_INT(eb_engine_frame_buffer(e, 3840, rows, &big, &d), EB_ERR_LIMIT);
    printf("%s\n", d.msg);
    ASSERT_TRUE(strstr(d.msg, "needed") != NULL && strstr(d.msg, "limit") != NULL);
    /* A bad geometry is refused before anything runs. */
    uint8_t px[3] = {1, 2, 3};
    struct eb_tensor o[EB_ENGINE_MAX_IO];
    const struct eb_engine_frame bad = {
        .rgb = px, .width = 1, .height = 1, .stride = 3, .new_w = 400, .new_h = 1};
    ASSERT_EQ_INT(eb_engine_run_frame(e, &bad, o, EB_ENGINE_MAX_IO, &d), EB_ERR_INVALID_ARG);
    printf("%s\n", d.msg);
    eb_engine_destroy(e);
    free(bytes);
}

/* Frames read in place (the unified-memory path, a Jetson's default; forced here on a discrete
 * GPU): one mapped buffer, no host-to-device copy, and the same detections as the staged path. */
EB_TEST(zero_copy_frames_match_staged)
{
    need_gpu();
    size_t len;
    uint8_t *bytes = synth(EB_SYNTH_YOLOV8, 320, &len);
    const int w = 1280, h = 720;
    struct eb_letterbox lb;
    eb_letterbox_compute(w, h, 320, 320, &lb);
    const struct eb_yolo_params p = {.conf = 0.01f, .iou = 0.7f, .max_det = 300};
    struct eb_detection items[2][300];
    struct eb_detections dets[2] = {{.items = items[0], .capacity = 300},
                                    {.items = items[1], .capacity = 300}};
    for (int z = 0; z < 2; z++) {
        struct eb_engine_options opt;
        eb_engine_options_default(&opt);
        opt.device = EB_ENGINE_DEVICE_CUDA;
        opt.zero_copy_frames = z ? EB_ENGINE_ZERO_COPY_MAPPED : EB_ENGINE_ZERO_COPY_STAGED;
        struct eb_engine *e = NULL;
        struct eb_diag d = {0};
        ASSERT_OK(eb_engine_load(bytes, len, "yolov8n-320", &opt, &e, &d));
        struct eb_engine_exec_info info;
        eb_engine_exec_info_get(e, &info);
        ASSERT_EQ_INT(info.zero_copy_frames, z);
        /* decoded straight into the engine's buffer, as the harness does */
        uint8_t *buf = NULL;
        ASSERT_OK(eb_engine_frame_buffer(e, w, h, &buf, &d));
        for (size_t i = 0; i < (size_t)w * 3 * h; i++)
            buf[i] = (uint8_t)((i * 2654435761u) >> 11);
        struct eb_engine_io io;
        eb_engine_io_info(e, &io);
        struct eb_yolo_layout_info li;
        struct eb_yolo_scratch sc;
        ASSERT_OK(eb_yolo_layout_detect(io.outputs[0].shape, io.outputs[0].rank, 80, &li, &d));
        ASSERT_OK(eb_yolo_scratch_init(&sc, &li, &d));
        struct eb_tensor o[EB_ENGINE_MAX_IO];
        const struct eb_engine_frame f = frame_of(buf, (size_t)w * 3, &lb);
        ASSERT_OK(eb_engine_run_frame(e, &f, o, io.n_outputs, &d));
        ASSERT_OK(eb_engine_run_frame(e, &f, o, io.n_outputs, &d)); /* after graph capture */
        eb_yolo_postprocess(&li, o[0].data, &lb, &p, &sc, &dets[z]);
        struct eb_engine_mem mem;
        eb_engine_mem_info(e, &mem);
        ASSERT_TRUE(mem.workspace_bytes >= (uint64_t)w * 3 * h); /* in the cap's count */
        print_info(z ? "zero-copy" : "staged", e);
        eb_yolo_scratch_fini(&sc);
        eb_engine_destroy(e);
    }
    printf("%zu detections staged, %zu zero-copy\n", dets[0].count, dets[1].count);
    ASSERT_TRUE(dets[0].count > 0);
    ASSERT_EQ_INT(dets[1].count, dets[0].count);
    /* The two engines are separate loads, each timing its own cuDNN algorithms: the same
     * boxes, to fp32 rounding of different convolution algorithms. */
    for (size_t i = 0; i < dets[0].count; i++) {
        const struct eb_detection *a = &items[0][i], *b = &items[1][i];
        ASSERT_EQ_INT(a->cls, b->cls);
        ASSERT_NEAR(a->score, b->score, 1e-4);
        ASSERT_NEAR(a->x1, b->x1, 0.05);
        ASSERT_NEAR(a->y1, b->y1, 0.05);
        ASSERT_NEAR(a->x2, b->x2, 0.05);
        ASSERT_NEAR(a->y2, b->y2, 0.05);
    }
    free(bytes);
}

/* Frames in pinned memory of the caller's (a synthetic ring: eb_engine_pin_frames) go up from
 * where they are: the same outputs, bit for bit, as the same frame copied in, staged or mapped;
 * each frame of the ring is itself (not the last one uploaded); with the lock taken off, frames
 * are copied again. */
EB_TEST(pinned_frames_match_copied)
{
    need_gpu();
    size_t len;
    uint8_t *bytes = synth(EB_SYNTH_YOLOV8, 320, &len);
    const int w = 640, h = 360, n_ring = 3;
    const size_t fb = (size_t)w * 3 * h;
    struct eb_letterbox lb;
    eb_letterbox_compute(w, h, 320, 320, &lb);
    uint8_t *ring = malloc(fb * n_ring), *copy = malloc(fb);
    ASSERT_TRUE(ring != NULL && copy != NULL);
    for (size_t i = 0; i < fb * n_ring; i++)
        ring[i] = (uint8_t)((i * 2654435761u) >> 13);
    for (int z = 0; z < 2; z++) {
        struct eb_engine_options opt;
        eb_engine_options_default(&opt);
        opt.device = EB_ENGINE_DEVICE_CUDA;
        opt.zero_copy_frames = z ? EB_ENGINE_ZERO_COPY_MAPPED : EB_ENGINE_ZERO_COPY_STAGED;
        struct eb_engine *e = NULL;
        struct eb_diag d = {0};
        ASSERT_OK(eb_engine_load(bytes, len, "yolov8n-320", &opt, &e, &d));
        struct eb_engine_io io;
        eb_engine_io_info(e, &io);
        struct eb_tensor o[EB_ENGINE_MAX_IO];
        const size_t n_out = 84 * 2100;
        float *want = malloc(n_ring * n_out * sizeof(float));
        ASSERT_TRUE(want != NULL);
        /* each frame copied in (not pinned): the reference */
        for (int k = 0; k < n_ring; k++) {
            memcpy(copy, ring + k * fb, fb);
            const struct eb_engine_frame f = frame_of(copy, (size_t)w * 3, &lb);
            ASSERT_OK(eb_engine_run_frame(e, &f, o, io.n_outputs, &d));
            ASSERT_EQ_INT(eb_tensor_numel(&o[0]), (int64_t)n_out);
            memcpy(want + k * n_out, o[0].data, n_out * sizeof(float));
        }
        ASSERT_TRUE(memcmp(want, want + n_out, n_out * sizeof(float)) != 0);
        /* pass 0 pinned, pass 1 with the lock taken off (copied in again): the same outputs */
        ASSERT_OK(eb_engine_pin_frames(e, ring, fb * n_ring, &d));
        for (int pass = 0; pass < 2; pass++) {
            for (int k = n_ring - 1; k >= 0; k--) { /* out of order: each frame is its own */
                const struct eb_engine_frame f = frame_of(ring + k * fb, (size_t)w * 3, &lb);
                ASSERT_OK(eb_engine_run_frame(e, &f, o, io.n_outputs, &d));
                ASSERT_TRUE(memcmp(o[0].data, want + k * n_out, n_out * sizeof(float)) == 0);
            }
            if (pass == 0)
                ASSERT_OK(eb_engine_pin_frames(e, NULL, 0, &d));
        }
        /* half a range is refused, never guessed */
        ASSERT_EQ_INT(eb_engine_pin_frames(e, ring, 0, &d), EB_ERR_INVALID_ARG);
        printf("%s: pinned frames equal copied ones\n", z ? "mapped" : "staged");
        free(want);
        eb_engine_destroy(e);
    }
    free(ring);
    free(copy);
    free(bytes);
}

/* Detections from the head reduced on the device equal the host decode of the whole head
 * (same forward): the boxes, scores and classes after NMS, exactly; the reduced output is not
 * copied back, and switching the reduction off brings it back. */
EB_TEST(head_rows_match_host_postprocess)
{
    need_gpu();
    size_t len;
    uint8_t *bytes = synth(EB_SYNTH_YOLOV8, 320, &len);
    struct eb_engine *e =
        load(bytes, len, "yolov8n-320", EB_ENGINE_DEVICE_CUDA, EB_ENGINE_PRECISION_FP16);
    struct eb_engine_io io;
    eb_engine_io_info(e, &io);
    const int w = 1280, h = 720;
    uint8_t *rgb = malloc((size_t)w * 3 * h);
    ASSERT_TRUE(rgb != NULL);
    for (size_t i = 0; i < (size_t)w * 3 * h; i++)
        rgb[i] = (uint8_t)((i * 2654435761u) >> 11);
    struct eb_letterbox lb;
    eb_letterbox_compute(w, h, 320, 320, &lb);
    const struct eb_engine_frame f = frame_of(rgb, (size_t)w * 3, &lb);
    struct eb_yolo_layout_info li;
    struct eb_yolo_scratch sc;
    struct eb_diag d = {0};
    ASSERT_OK(eb_yolo_layout_detect(io.outputs[0].shape, io.outputs[0].rank, 80, &li, &d));
    ASSERT_OK(eb_yolo_scratch_init(&sc, &li, &d));
    const struct eb_yolo_params p = {.conf = 0.01f, .iou = 0.7f, .max_det = 300};
    struct eb_detection a_items[300], b_items[300];
    struct eb_detections a = {.items = a_items, .capacity = 300};
    struct eb_detections b = {.items = b_items, .capacity = 300};
    struct eb_tensor o[EB_ENGINE_MAX_IO];
    ASSERT_OK(eb_engine_run_frame(e, &f, o, io.n_outputs, &d));
    eb_yolo_postprocess(&li, o[0].data, &lb, &p, &sc, &a);
    ASSERT_OK(eb_engine_reduce_head(e, 0, p.conf, &d));
    ASSERT_OK(eb_engine_run_frame(e, &f, o, io.n_outputs, &d));
    ASSERT_TRUE(o[0].data == NULL);
    struct eb_anchor_row *rows = NULL;
    const size_t n_rows = eb_engine_head_rows(e, &rows);
    const size_t n_cand = eb_yolo_decode_rows(rows, n_rows, &sc);
    eb_yolo_nms(&sc, n_cand, &p, &b);
    for (size_t i = 0; i < b.count; i++)
        eb_letterbox_unmap(&lb, &b.items[i]);
    printf("%zu rows, %zu detections on the device path, %zu on the host path\n", n_rows, b.count,
           a.count);
    ASSERT_TRUE(a.count > 0);
    ASSERT_EQ_INT(b.count, a.count);
    ASSERT_TRUE(memcmp(a.items, b.items, a.count * sizeof(a.items[0])) == 0);
    /* A shape that is no head is refused; off again: the head comes back. */
    ASSERT_EQ_INT(eb_engine_reduce_head(e, 5, 0.1f, &d), EB_ERR_INVALID_ARG);
    ASSERT_OK(eb_engine_reduce_head(e, 0, -1.0f, &d));
    ASSERT_OK(eb_engine_run_frame(e, &f, o, io.n_outputs, &d));
    ASSERT_TRUE(o[0].data != NULL);
    eb_yolo_scratch_fini(&sc);
    eb_engine_destroy(e);
    free(rgb);
    free(bytes);
}

/* The native backend's vtable, as the pipeline drives it on --device cuda (--preprocess gpu,
 * --decode gpu): frame input, device letterbox, head reduction; the detections equal those of
 * the host path (host letterbox, whole head back, host decode) through the same instance. */
EB_TEST(backend_frame_and_head_through_vtable)
{
    need_gpu();
    size_t len;
    uint8_t *bytes = synth(EB_SYNTH_YOLOV8, 320, &len);
    const struct eb_backend_config cfg = {.device = EB_DEVICE_CUDA,
                                          .precision = EB_ENGINE_PRECISION_FP16,
                                          .mem_limit_bytes = 8000000000ull};
    struct eb_backend *be = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_backend_create(&eb_backend_native_ops, &cfg, &be, &d));
    const struct eb_model_spec spec = {.path = "yolov8n-320", .bytes = bytes, .n_bytes = len};
    struct eb_model_info info;
    ASSERT_OK(eb_backend_load(be, &spec, &info, &d));
    char why[200];
    ASSERT_TRUE(eb_backend_frame_input(be, why, sizeof(why)));
    const int w = 1920, h = 1080;
    uint8_t *rgb = malloc((size_t)w * 3 * h);
    float *x = malloc(3 * 320 * 320 * sizeof(float));
    ASSERT_TRUE(rgb != NULL && x != NULL);
    for (size_t i = 0; i < (size_t)w * 3 * h; i++)
        rgb[i] = (uint8_t)((i * 2654435761u) >> 12);
    struct eb_letterbox lb;
    eb_letterbox_compute(w, h, 320, 320, &lb);
    eb_letterbox_rgb_to_nchw_f32__ref(rgb, w, h, (size_t)w * 3, &lb, 3, x);
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .data = x};
    in.shape[0] = 1;
    in.shape[1] = 3;
    in.shape[2] = in.shape[3] = 320;
    struct eb_tensor o[EB_BACKEND_MAX_IO];
    struct eb_infer_timing t = {0};
    ASSERT_OK(eb_backend_infer(be, &in, 1, o, info.n_outputs, &t, &d));
    struct eb_yolo_layout_info li;
    struct eb_yolo_scratch sc;
    ASSERT_OK(eb_yolo_layout_detect(o[0].shape, o[0].rank, 80, &li, &d));
    ASSERT_OK(eb_yolo_scratch_init(&sc, &li, &d));
    const struct eb_yolo_params p = {.conf = 0.01f, .iou = 0.7f, .max_det = 300};
    struct eb_detection a_items[300], b_items[300];
    struct eb_detections a = {.items = a_items, .capacity = 300};
    struct eb_detections b = {.items = b_items, .capacity = 300};
    eb_yolo_postprocess(&li, o[0].data, &lb, &p, &sc, &a);
    ASSERT_OK(eb_backend_reduce_head(be, 0, p.conf, &d));
    const struct eb_backend_frame f = {.rgb = rgb,
                                       .width = w,
                                       .height = h,
                                       .stride = (size_t)w * 3,
                                       .new_w = lb.new_w,
                                       .new_h = lb.new_h,
                                       .pad_left = lb.pad_left,
                                       .pad_top = lb.pad_top};
    ASSERT_OK(eb_backend_infer_frame(be, &f, o, info.n_outputs, &t, &d));
    ASSERT_TRUE(t.pre_ns > 0 && t.compute_ns > 0 && t.h2d_ns > 0);
    struct eb_anchor_row *rows = NULL;
    const size_t n = eb_backend_head_rows(be, &rows);
    eb_yolo_nms(&sc, eb_yolo_decode_rows(rows, n, &sc), &p, &b);
    for (size_t i = 0; i < b.count; i++)
        eb_letterbox_unmap(&lb, &b.items[i]);
    printf("vtable: %zu rows, %zu boxes (host path %zu); pre %.3f compute %.3f ms\n", n, b.count,
           a.count, t.pre_ns / 1e6, t.compute_ns / 1e6);
    ASSERT_TRUE(a.count > 0);
    ASSERT_EQ_INT(b.count, a.count);
    ASSERT_TRUE(memcmp(a.items, b.items, a.count * sizeof(a.items[0])) == 0);
    /* decoded straight into the backend's page-locked buffer (what the pipeline's sources do):
     * the same boxes, without the staging copy */
    uint8_t *fb = NULL;
    ASSERT_OK(eb_backend_frame_buffer(be, w, h, &fb, &d));
    memcpy(fb, rgb, (size_t)w * 3 * h);
    memset(fb + (size_t)w * 3 * h, 0xEE, 64); /* the documented slack is writable */
    struct eb_backend_frame f2 = f;
    f2.rgb = fb;
    ASSERT_OK(eb_backend_infer_frame(be, &f2, o, info.n_outputs, &t, &d));
    struct eb_detections c = {.items = b_items, .capacity = 300};
    const size_t n2 = eb_backend_head_rows(be, &rows);
    eb_yolo_nms(&sc, eb_yolo_decode_rows(rows, n2, &sc), &p, &c);
    for (size_t i = 0; i < c.count; i++)
        eb_letterbox_unmap(&lb, &c.items[i]);
    ASSERT_EQ_INT(c.count, a.count);
    ASSERT_TRUE(memcmp(a.items, c.items, a.count * sizeof(a.items[0])) == 0);
    eb_yolo_scratch_fini(&sc);
    eb_backend_destroy(be);
    free(x);
    free(rgb);
    free(bytes);
}

/* ---- decoders: shapes that change from run to run ----------------------------------------- */

#define LLM_CTX        64 /* the files' context: the engines' bound on sequence + past */
#define LLM_PROMPT     12
#define LLM_STEPS      16
#define LLM_MAX_LAYERS 2
#define LLM_N_IO       (2 + 2 * LLM_MAX_LAYERS)

/* The largest |a - b| over a logits row, relative to the row's largest |b|. */
static double llm_row_error(const float *a, const float *b, int n)
{
    double err = 0.0, scale = 0.0;
    for (int i = 0; i < n; i++) {
        err = fmax(err, fabs((double)a[i] - b[i]));
        scale = fmax(scale, fabs((double)b[i]));
    }
    ASSERT_TRUE(scale > 0.0 && isfinite(scale) && isfinite(err));
    return err / scale;
}

static int llm_argmax(const float *row, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (row[i] > row[best])
            best = i;
    return best;
}

/*
 * Tiny `arch` on the CUDA device in `prec` against the CPU device: a prefill of LLM_PROMPT
 * tokens, then LLM_STEPS decode steps, each engine fed its own last present.* as past_key_values.*
 * (as they came out) and both the CPU's greedy token. Every logits row within `tol` of the row's
 * largest |logit|; `same_tokens`: the CUDA device's greedy tokens are the CPU's. Returns the
 * worst row error.
 */
static double llm_cuda_vs_cpu(enum eb_model_llm_arch arch, enum eb_engine_precision prec,
                              double tol, int same_tokens)
{
    struct eb_model_llm_config c;
    struct eb_diag d = {0};
    ASSERT_OK(eb_model_llm_config(arch, "tiny", LLM_CTX, &c, &d));
    ASSERT_TRUE(c.layers <= LLM_MAX_LAYERS);
    const struct eb_model_llm_options o = {.cfg = c, .seed = 3};
    char path[512];
    snprintf(path, sizeof(path), "%s/%s.onnx", eb_test_tmpdir(), eb_model_llm_arch_name(arch));
    ASSERT_OK(eb_model_llm_synth_file(&o, path, NULL, &d));
    size_t len = 0;
    uint8_t *bytes = (uint8_t *)eb_test_read_file(path, &len);
    ASSERT_TRUE(bytes != NULL);
    struct eb_engine *cpu = load(bytes, len, path, EB_ENGINE_DEVICE_CPU, EB_ENGINE_PRECISION_FP32);
    struct eb_engine *gpu = load(bytes, len, path, EB_ENGINE_DEVICE_CUDA, prec);
    struct eb_engine_exec_info info;
    eb_engine_exec_info_get(gpu, &info);
    ASSERT_EQ_INT(info.graph, 1); /* a CUDA Graph per input shapes (cuda_device.c dyn_pick) */
    printf("%s tiny on cuda: %zu nodes on the CPU (%s)\n", eb_model_llm_arch_name(arch),
           (size_t)info.n_fallback, info.fallback);
    const int n_kv = 2 * c.layers, n_in = 2 + n_kv, n_out = 1 + n_kv;
    const float dummy = 0.0f;
    struct eb_tensor kv_cpu[2 * LLM_MAX_LAYERS], kv_gpu[2 * LLM_MAX_LAYERS];
    for (int t = 0; t < n_kv; t++)
        kv_cpu[t] = kv_gpu[t] = (struct eb_tensor){.dtype = EB_DTYPE_F32,
                                                   .rank = 4,
                                                   .shape = {1, c.kv_heads, 0, c.head_dim},
                                                   .data = (void *)&dummy};
    int64_t ids[LLM_PROMPT], pos[LLM_PROMPT];
    for (int i = 0; i < LLM_PROMPT; i++)
        ids[i] = (i * 389 + 17) % c.vocab;
    int64_t n = LLM_PROMPT, past = 0;
    double worst = 0.0;
    int agree = 0;
    for (int step = 0; step <= LLM_STEPS; step++) {
        struct eb_tensor in[LLM_N_IO], out_c[LLM_N_IO], out_g[LLM_N_IO];
        for (int64_t i = 0; i < n; i++)
            pos[i] = past + i;
        in[0] = (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, n}, .data = ids};
        in[1] = (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, n}, .data = pos};
        for (int t = 0; t < n_kv; t++)
            in[2 + t] = kv_cpu[t];
        if (eb_engine_run(cpu, in, (size_t)n_in, out_c, (size_t)n_out, &d) != EB_OK)
            EB_FAIL("cpu step %d: %s", step, d.msg);
        for (int t = 0; t < n_kv; t++)
            in[2 + t] = kv_gpu[t];
        if (eb_engine_run(gpu, in, (size_t)n_in, out_g, (size_t)n_out, &d) != EB_OK)
            EB_FAIL("cuda step %d: %s", step, d.msg);
        ASSERT_EQ_INT(out_g[0].rank, 3);
        ASSERT_EQ_INT(out_g[0].shape[1], n);
        ASSERT_EQ_INT(out_g[0].shape[2], c.vocab);
        for (int64_t r = 0; r < n; r++) {
            const size_t off = (size_t)r * (size_t)c.vocab;
            const double e = llm_row_error((const float *)out_g[0].data + off,
                                           (const float *)out_c[0].data + off, c.vocab);
            worst = fmax(worst, e);
            if (e > tol)
                EB_FAIL("%s %s step %d row %lld: error %.3g of the row's largest |logit|, over "
                        "%.3g",
                        eb_model_llm_arch_name(arch),
                        prec == EB_ENGINE_PRECISION_FP16 ? "fp16" : "fp32", step, (long long)r, e,
                        tol);
        }
        const size_t last = (size_t)(n - 1) * (size_t)c.vocab;
        const int tok_c = llm_argmax((const float *)out_c[0].data + last, c.vocab);
        const int tok_g = llm_argmax((const float *)out_g[0].data + last, c.vocab);
        agree += tok_c == tok_g;
        if (same_tokens)
            ASSERT_EQ_INT(tok_g, tok_c);
        for (int t = 0; t < n_kv; t++) {
            ASSERT_EQ_INT(out_g[1 + t].shape[2], past + n);
            kv_cpu[t] = out_c[1 + t];
            kv_gpu[t] = out_g[1 + t];
        }
        past += n;
        n = 1;
        ids[0] = tok_c;
    }
    printf("%s tiny on cuda (%s) vs cpu: prefill %d + %d decode steps, worst logits row error "
           "%.3g of the row's largest |logit| (bound %.3g); greedy tokens agree %d of %d\n",
           eb_model_llm_arch_name(arch), prec == EB_ENGINE_PRECISION_FP16 ? "fp16" : "fp32",
           LLM_PROMPT, LLM_STEPS, worst, tol, agree, LLM_STEPS + 1);
    eb_engine_destroy(gpu);
    eb_engine_destroy(cpu);
    free(bytes);
    return worst;
}

/* fp32: within 1e-4 of the row's largest |logit| (cuBLAS without TF32 against the CPU's SGEMM:
 * summation order only), the same greedy tokens. */
EB_TEST(llm_llama_fp32_matches_cpu)
{
    need_gpu();
    llm_cuda_vs_cpu(EB_MODEL_LLM_LLAMA, EB_ENGINE_PRECISION_FP32, 1e-4, 1);
}

EB_TEST(llm_qwen2_fp32_matches_cpu)
{
    need_gpu();
    llm_cuda_vs_cpu(EB_MODEL_LLM_QWEN2, EB_ENGINE_PRECISION_FP32, 1e-4, 1);
}

/* fp16 (weights, activations and the cache in half on the device; float accumulation): within
 * 2e-2 of the row's largest |logit|; greedy tokens are printed, not asserted (near-ties may
 * swap). */
EB_TEST(llm_llama_fp16_within_drift)
{
    need_gpu();
    llm_cuda_vs_cpu(EB_MODEL_LLM_LLAMA, EB_ENGINE_PRECISION_FP16, 2e-2, 0);
}

EB_TEST(llm_qwen2_fp16_within_drift)
{
    need_gpu();
    llm_cuda_vs_cpu(EB_MODEL_LLM_QWEN2, EB_ENGINE_PRECISION_FP16, 2e-2, 0);
}

/* Tiny qwen2 (seed 5) written to the test's folder as `name`: its bytes (the caller frees them)
 * in *len bytes, its configuration in *c, the file's path in path (512 bytes). */
static uint8_t *llm_tiny(const char *name, struct eb_model_llm_config *c, size_t *len, char *path)
{
    struct eb_diag d = {0};
    ASSERT_OK(eb_model_llm_config(EB_MODEL_LLM_QWEN2, "tiny", LLM_CTX, c, &d));
    ASSERT_TRUE(c->layers <= LLM_MAX_LAYERS);
    const struct eb_model_llm_options o = {.cfg = *c, .seed = 5};
    snprintf(path, 512, "%s/%s", eb_test_tmpdir(), name);
    ASSERT_OK(eb_model_llm_synth_file(&o, path, NULL, &d));
    uint8_t *bytes = (uint8_t *)eb_test_read_file(path, len);
    ASSERT_TRUE(bytes != NULL);
    return bytes;
}

/*
 * Tiny qwen2 on the CUDA device in `prec`, `reps` times the same prefill of LLM_PROMPT tokens and
 * LLM_STEPS greedy steps (as `edgebench llm` repeats them). `profile`: every run node by node
 * (a profiled engine captures nothing); `copy_kv`: LLM_KV_COPY: each step's past_key_values.*
 * are copies of the last present.* in buffers of the caller's (the host path), LLM_KV_BACK: the
 * present.* themselves (copied back, then device to device), LLM_KV_KEEP: the present.* kept on
 * the device (eb_engine_keep_outputs: never copied back). Returns every run's logits one after another (caller frees); counts the
 * runs that replayed a graph and those that took inputs device to device.
 */
enum { LLM_KV_BACK, LLM_KV_COPY, LLM_KV_KEEP };

struct llm_path {
    int replayed, resident, runs, kept;
    size_t n_fused, n_row_groups; /* the engine's exec_info's */
};

static float *llm_run_path_opt(enum eb_engine_device dev, enum eb_engine_precision prec,
                               int profile, int copy_kv, int reps, unsigned passes_off,
                               struct llm_path *path_out);

static float *llm_run_path(enum eb_engine_precision prec, int profile, int copy_kv, int reps,
                           struct llm_path *path_out)
{
    return llm_run_path_opt(EB_ENGINE_DEVICE_CUDA, prec, profile, copy_kv, reps, 0, path_out);
}

/* llm_run_path on device `dev` with the passes in `passes_off` left out. */
static float *llm_run_path_opt(enum eb_engine_device dev, enum eb_engine_precision prec,
                               int profile, int copy_kv, int reps, unsigned passes_off,
                               struct llm_path *path_out)
{
    struct eb_model_llm_config c;
    struct eb_diag d = {0};
    char path[512];
    size_t len = 0;
    uint8_t *bytes = llm_tiny("qwen2-path.onnx", &c, &len, path);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.device = dev;
    opt.precision = prec;
    opt.profile = profile;
    opt.passes &= ~passes_off;
    struct eb_engine *e = NULL;
    if (eb_engine_load(bytes, len, path, &opt, &e, &d) != EB_OK)
        EB_FAIL("load %s: %s", path, d.msg);
    struct eb_engine_exec_info info;
    eb_engine_exec_info_get(e, &info);
    const size_t n_fused = info.n_fused, n_row_groups = info.n_row_groups;
    const int n_kv = 2 * c.layers, n_in = 2 + n_kv, n_out = 1 + n_kv;
    unsigned char keep[LLM_N_IO] = {0};
    for (int t = 0; t < n_kv; t++)
        keep[1 + t] = copy_kv == LLM_KV_KEEP;
    ASSERT_OK(eb_engine_keep_outputs(e, keep, (size_t)n_out, &d));
    const size_t kv_max = (size_t)c.kv_heads * LLM_CTX * (size_t)c.head_dim;
    float *copies = malloc((size_t)n_kv * kv_max * sizeof(float));
    const size_t per_rep = (size_t)(LLM_PROMPT + LLM_STEPS) * (size_t)c.vocab;
    float *logits = malloc((size_t)reps * per_rep * sizeof(float));
    ASSERT_TRUE(copies != NULL && logits != NULL);
    const float dummy = 0.0f;
    struct llm_path p = {0};
    size_t at = 0;
    for (int rep = 0; rep < reps; rep++) {
        struct eb_tensor kv[2 * LLM_MAX_LAYERS];
        for (int t = 0; t < n_kv; t++)
            kv[t] = (struct eb_tensor){.dtype = EB_DTYPE_F32,
                                       .rank = 4,
                                       .shape = {1, c.kv_heads, 0, c.head_dim},
                                       .data = (void *)&dummy};
        int64_t ids[LLM_PROMPT], pos[LLM_PROMPT];
        for (int i = 0; i < LLM_PROMPT; i++)
            ids[i] = (i * 211 + 5) % c.vocab;
        int64_t n = LLM_PROMPT, past = 0;
        for (int step = 0; step <= LLM_STEPS; step++) {
            struct eb_tensor in[LLM_N_IO], out[LLM_N_IO];
            for (int64_t i = 0; i < n; i++)
                pos[i] = past + i;
            in[0] =
                (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, n}, .data = ids};
            in[1] =
                (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, n}, .data = pos};
            for (int t = 0; t < n_kv; t++)
                in[2 + t] = kv[t];
            if (eb_engine_run(e, in, (size_t)n_in, out, (size_t)n_out, &d) != EB_OK)
                EB_FAIL("step %d: %s", step, d.msg);
            p.runs++;
            p.replayed += e->run_replayed;
            p.kept += e->run_shapes_kept;
            p.resident += e->run_d2d_bytes > 0;
            memcpy(logits + at, out[0].data, (size_t)(n * c.vocab) * sizeof(float));
            at += (size_t)(n * c.vocab);
            const int tok = llm_argmax((const float *)out[0].data + (n - 1) * c.vocab, c.vocab);
            for (int t = 0; t < n_kv; t++) {
                kv[t] = out[1 + t];
                if (copy_kv == LLM_KV_COPY) {
                    const size_t b =
                        (size_t)(out[1 + t].shape[1] * out[1 + t].shape[2] * out[1 + t].shape[3]) *
                        sizeof(float);
                    ASSERT_TRUE(b <= kv_max * sizeof(float));
                    kv[t].data = memcpy(copies + (size_t)t * kv_max, out[1 + t].data, b);
                }
            }
            past += n;
            n = 1;
            ids[0] = tok;
        }
    }
    ASSERT_TRUE(at == (size_t)reps * per_rep);
    p.n_fused = n_fused;
    p.n_row_groups = n_row_groups;
    eb_engine_destroy(e);
    free(copies);
    free(bytes);
    *path_out = p;
    return logits;
}

/* The largest |a - b| over n floats, relative to the largest |b|. */
static double llm_all_error(const float *a, const float *b, size_t n)
{
    double err = 0.0, scale = 0.0;
    for (size_t i = 0; i < n; i++) {
        err = fmax(err, fabs((double)a[i] - b[i]));
        scale = fmax(scale, fabs((double)b[i]));
    }
    ASSERT_TRUE(scale > 0.0 && isfinite(err));
    return err / scale;
}

/*
 * A decoder's steps three ways, twice over the same lengths: node by node with the cache
 * through the host (profiled, copies), replayed from CUDA Graphs with the cache through the
 * host (copies), and replayed with the cache kept on the device (present.* passed back). The
 * second pass replays every run; the cache stays on the device in every step but the first of
 * a pass (prefill: no past). fp32: the same logits bit for bit; fp16: within 1e-3 of the largest
 * |logit| (the same kernels; printed).
 */
static void llm_paths_agree(enum eb_engine_precision prec, double tol)
{
    const int reps = 2, runs = reps * (LLM_STEPS + 1);
    struct llm_path pe, pc, pr, pk, pek;
    float *eager = llm_run_path(prec, 1, LLM_KV_COPY, reps, &pe);
    float *graph_host = llm_run_path(prec, 0, LLM_KV_COPY, reps, &pc);
    float *graph_dev = llm_run_path(prec, 0, LLM_KV_BACK, reps, &pr);
    float *graph_kept = llm_run_path(prec, 0, LLM_KV_KEEP, reps, &pk);
    float *eager_kept = llm_run_path(prec, 1, LLM_KV_KEEP, reps, &pek);
    ASSERT_EQ_INT(pe.replayed, 0);
    ASSERT_EQ_INT(pe.resident, 0);
    ASSERT_EQ_INT(pc.resident, 0);
    ASSERT_EQ_INT(pr.resident, runs - reps);
    ASSERT_EQ_INT(pk.resident, runs - reps);
    ASSERT_EQ_INT(pek.resident, runs - reps);
    ASSERT_EQ_INT(pek.replayed, 0);
    /* the first pass captures each run (then replays it); the second replays */
    ASSERT_EQ_INT(pc.replayed, runs);
    ASSERT_EQ_INT(pr.replayed, runs);
    ASSERT_EQ_INT(pk.replayed, runs);
    /* ... with the shapes of the capture: no shape pass on the host (dyn_restore) */
    ASSERT_EQ_INT(pc.kept, runs - (LLM_STEPS + 1));
    ASSERT_EQ_INT(pk.kept, runs - (LLM_STEPS + 1));
    ASSERT_EQ_INT(pe.kept, 0);
    struct eb_model_llm_config c;
    struct eb_diag d = {0};
    ASSERT_OK(eb_model_llm_config(EB_MODEL_LLM_QWEN2, "tiny", LLM_CTX, &c, &d));
    const size_t n = (size_t)reps * (size_t)(LLM_PROMPT + LLM_STEPS) * (size_t)c.vocab;
    const double e_graph = llm_all_error(graph_host, eager, n);
    const double e_dev = llm_all_error(graph_dev, graph_host, n);
    printf("qwen2 tiny %s: graph replay vs node by node %.3g, cache on the device vs through the "
           "host %.3g (of the largest |logit|; bound %.3g)\n",
           prec == EB_ENGINE_PRECISION_FP16 ? "fp16" : "fp32", e_graph, e_dev, tol);
    ASSERT_TRUE(e_graph <= tol);
    ASSERT_TRUE(e_dev <= tol);
    /* kept on the device: in fp16 the cache never goes through float, which is exact both ways */
    ASSERT_TRUE(memcmp(graph_kept, graph_dev, n * sizeof(float)) == 0);
    ASSERT_TRUE(memcmp(eager_kept, eager, n * sizeof(float)) == 0);
    free(graph_kept);
    free(eager_kept);
    free(eager);
    free(graph_host);
    free(graph_dev);
}

EB_TEST(llm_graph_replay_and_device_cache_fp32_exact)
{
    need_gpu();
    llm_paths_agree(EB_ENGINE_PRECISION_FP32, 0.0);
}

EB_TEST(llm_graph_replay_and_device_cache_fp16)
{
    need_gpu();
    llm_paths_agree(EB_ENGINE_PRECISION_FP16, 1e-3);
}

/*
 * The RMSNorm chains, the rotary embeddings, the decode steps' attention chains and each MatMul
 * with the bias or residual Add after it as one kernel or cuBLASLt call each (the fuse pass, on
 * by default) against their nodes (the pass left out): every chain of tiny qwen2's (2 layers: 5
 * norms, 4 rotary embeddings, 2 attentions, 10 MatMul + Add, 2 SwiGLU) absorbed, the decode
 * steps' one-row products grouped with each other and with the norm or SwiGLU before them, the
 * logits
 * of a prefill and 16 steps within 1e-5 (fp32: the sum's order only) / 2e-2 (fp16: the unfused
 * chain rounds x * x and the mean to half) of the largest |logit|; both against the CPU's fp32
 * printed.
 */
static void llm_rms_fused_agrees(enum eb_engine_precision prec, double tol)
{
    struct llm_path pf, pu;
    struct llm_path pc;
    float *fused = llm_run_path_opt(EB_ENGINE_DEVICE_CUDA, prec, 0, 0, 1, 0, &pf);
    float *unfused =
        llm_run_path_opt(EB_ENGINE_DEVICE_CUDA, prec, 0, 0, 1, EB_ENGINE_PASS_FUSE, &pu);
    float *cpu = llm_run_path_opt(EB_ENGINE_DEVICE_CPU, EB_ENGINE_PRECISION_FP32, 0, 0, 1, 0, &pc);
    const size_t n_fused = pf.n_fused;
    ASSERT_EQ_INT((int)pu.n_fused, 0);
    struct eb_model_llm_config c;
    struct eb_diag d = {0};
    ASSERT_OK(eb_model_llm_config(EB_MODEL_LLM_QWEN2, "tiny", LLM_CTX, &c, &d));
    /* five nodes an RMSNorm, nine an attention chain (its last node runs the kernel), four a
     * rotary embedding (two a layer), one MatMul each of the five a layer an Add reads (the q, k
     * and v projections' biases, the attention's and the MLP's residuals), the Sigmoid and Mul
     * of a SwiGLU */
    ASSERT_EQ_INT((int)n_fused, 5 * (2 * c.layers + 1) + 9 * c.layers + 8 * c.layers +
                                    5 * c.layers + 2 * c.layers);
    /* the decode steps' one-row launches: per layer q, k and v with their RMSNorm, gate and up
     * with theirs (fp32 only: tiny's 172 columns are not whole 16-byte vectors of halves), down
     * with its SwiGLU; the lm_head with the last RMSNorm */
    printf("qwen2 tiny: %zu one-row groups\n", pf.n_row_groups);
    ASSERT_EQ_INT((int)pf.n_row_groups, (prec == EB_ENGINE_PRECISION_FP16 ? 2 : 3) * c.layers + 1);
    ASSERT_EQ_INT((int)pu.n_row_groups, 0);
    const size_t n = (size_t)(LLM_PROMPT + LLM_STEPS) * (size_t)c.vocab;
    const double err = llm_all_error(fused, unfused, n);
    printf("qwen2 tiny %s: %zu nodes absorbed into fused kernels; fused vs unfused %.3g of the "
           "largest |logit| (bound %.3g); against the CPU in fp32: fused %.3g, unfused %.3g\n",
           prec == EB_ENGINE_PRECISION_FP16 ? "fp16" : "fp32", n_fused, err, tol,
           llm_all_error(fused, cpu, n), llm_all_error(unfused, cpu, n));
    ASSERT_TRUE(err <= tol);
    free(cpu);
    free(fused);
    free(unfused);
}

EB_TEST(llm_rms_norm_fused_matches_unfused_fp32)
{
    need_gpu();
    llm_rms_fused_agrees(EB_ENGINE_PRECISION_FP32, 1e-5);
}

EB_TEST(llm_rms_norm_fused_matches_unfused_fp16)
{
    need_gpu();
    llm_rms_fused_agrees(EB_ENGINE_PRECISION_FP16, 2e-2);
}

/* A prefill's inputs (the seeded prompt ids and positions 0.. written into ids and pos, an
 * empty cache) and a decode step's (one token). */
static void llm_prefill_in(struct eb_tensor *in, const struct eb_model_llm_config *c, int64_t *ids,
                           int64_t *pos, const float *dummy)
{
    for (int i = 0; i < LLM_PROMPT; i++) {
        ids[i] = (i * 211 + 5) % c->vocab;
        pos[i] = i;
    }
    in[0] =
        (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, LLM_PROMPT}, .data = ids};
    in[1] =
        (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, LLM_PROMPT}, .data = pos};
    for (int t = 0; t < 2 * c->layers; t++)
        in[2 + t] = (struct eb_tensor){.dtype = EB_DTYPE_F32,
                                       .rank = 4,
                                       .shape = {1, c->kv_heads, 0, c->head_dim},
                                       .data = (void *)dummy};
}

static void llm_step_in(struct eb_tensor *in, int64_t *next, int64_t *at)
{
    in[0] = (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, 1}, .data = next};
    in[1] = (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, 1}, .data = at};
}

/*
 * The cache kept on the device (eb_engine_keep_outputs) is only ever read as the next run's
 * input: a step that passes it with another length than the last run returned (its bytes on the
 * host are not the run's) is refused naming the input, and the right step after it still takes
 * the cache device to device and gives the logits of a run that copied it through the host.
 */
EB_TEST(llm_kept_cache_misuse_refused)
{
    need_gpu();
    struct eb_model_llm_config c;
    struct eb_diag d = {0};
    char path[512];
    size_t len = 0;
    uint8_t *bytes = llm_tiny("qwen2-keep.onnx", &c, &len, path);
    const int n_kv = 2 * c.layers, n_in = 2 + n_kv, n_out = 1 + n_kv;
    const size_t nv = (size_t)c.vocab, per = (size_t)c.kv_heads * LLM_PROMPT * (size_t)c.head_dim;
    float *logits[2] = {NULL, NULL}; /* through the host, kept */
    float *copies = malloc((size_t)n_kv * per * sizeof(float));
    ASSERT_TRUE(copies != NULL);
    const float dummy = 0.0f;
    int64_t ids[LLM_PROMPT], pos[LLM_PROMPT], next = 7, at = LLM_PROMPT;
    for (int keep_on = 0; keep_on < 2; keep_on++) {
        struct eb_engine_options opt;
        eb_engine_options_default(&opt);
        opt.device = EB_ENGINE_DEVICE_CUDA;
        struct eb_engine *e = NULL;
        ASSERT_OK(eb_engine_load(bytes, len, path, &opt, &e, &d));
        unsigned char keep[LLM_N_IO] = {0};
        for (int t = 0; t < n_kv; t++)
            keep[1 + t] = (unsigned char)keep_on;
        ASSERT_OK(eb_engine_keep_outputs(e, keep, (size_t)n_out, &d));
        struct eb_tensor in[LLM_N_IO], out[LLM_N_IO];
        llm_prefill_in(in, &c, ids, pos, &dummy);
        ASSERT_OK(eb_engine_run(e, in, (size_t)n_in, out, (size_t)n_out, &d));
        llm_step_in(in, &next, &at);
        for (int t = 0; t < n_kv; t++) {
            in[2 + t] = out[1 + t];
            in[2 + t].shape[2] = LLM_PROMPT - 1; /* one token short of what the run returned */
        }
        const enum eb_status st = eb_engine_run(e, in, (size_t)n_in, out, (size_t)n_out, &d);
        if (keep_on) { /* refused; then the right length, still on the device */
            ASSERT_EQ_INT(st, EB_ERR_INVALID_ARG);
            printf("refused: %s\n", d.msg);
            ASSERT_TRUE(strstr(d.msg, "past_key_values.0.key") != NULL);
            ASSERT_TRUE(strstr(d.msg, "kept on the device") != NULL);
            d = (struct eb_diag){0};
            for (int t = 0; t < n_kv; t++)
                in[2 + t].shape[2] = LLM_PROMPT;
            ASSERT_OK(eb_engine_run(e, in, (size_t)n_in, out, (size_t)n_out, &d));
            ASSERT_TRUE(e->run_d2d_bytes > 0);
        } else { /* the host's bytes: a shorter cache is a valid (other) input; then the step
                    from a fresh prefill's cache, copied through the host */
            ASSERT_OK(st);
            llm_prefill_in(in, &c, ids, pos, &dummy);
            ASSERT_OK(eb_engine_run(e, in, (size_t)n_in, out, (size_t)n_out, &d));
            llm_step_in(in, &next, &at);
            for (int t = 0; t < n_kv; t++) {
                in[2 + t] = out[1 + t];
                in[2 + t].data =
                    memcpy(copies + (size_t)t * per, out[1 + t].data, per * sizeof(float));
            }
            ASSERT_OK(eb_engine_run(e, in, (size_t)n_in, out, (size_t)n_out, &d));
        }
        logits[keep_on] = malloc(nv * sizeof(float));
        ASSERT_TRUE(logits[keep_on] != NULL);
        memcpy(logits[keep_on], out[0].data, nv * sizeof(float));
        eb_engine_destroy(e);
    }
    ASSERT_TRUE(memcmp(logits[0], logits[1], nv * sizeof(float)) == 0);
    free(logits[0]);
    free(logits[1]);
    free(copies);
    free(bytes);
}

/*
 * A replay at a shape signature seen before takes that capture's shapes instead of inferring
 * them again (cuda_device.c dyn_restore), also after runs at other shapes: the outputs have
 * this run's shapes, the logits are those of the first run at them, and a token id out of the
 * vocabulary is still refused (the embedding Gather's check runs on every run).
 */
EB_TEST(llm_replay_keeps_shapes_and_checks_ids)
{
    need_gpu();
    struct eb_model_llm_config c;
    struct eb_diag d = {0};
    char path[512];
    size_t len = 0;
    uint8_t *bytes = llm_tiny("qwen2-shapes.onnx", &c, &len, path);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.device = EB_ENGINE_DEVICE_CUDA;
    struct eb_engine *e = NULL;
    ASSERT_OK(eb_engine_load(bytes, len, path, &opt, &e, &d));
    const int n_kv = 2 * c.layers, n_in = 2 + n_kv, n_out = 1 + n_kv;
    const size_t nv = (size_t)c.vocab;
    float *first = malloc(nv * sizeof(float));
    ASSERT_TRUE(first != NULL);
    const float dummy = 0.0f;
    int64_t ids[LLM_PROMPT], pos[LLM_PROMPT], next = 7, at = LLM_PROMPT;
    struct eb_tensor in[LLM_N_IO], out[LLM_N_IO];
    for (int pass = 0; pass < 2; pass++) {
        llm_prefill_in(in, &c, ids, pos, &dummy);
        ASSERT_OK(eb_engine_run(e, in, (size_t)n_in, out, (size_t)n_out, &d));
        ASSERT_EQ_INT(e->run_shapes_kept, pass); /* the first pass captures */
        ASSERT_EQ_INT((int)out[0].shape[1], LLM_PROMPT);
        ASSERT_EQ_INT((int)out[1].shape[2], LLM_PROMPT);
        llm_step_in(in, &next, &at);
        for (int t = 0; t < n_kv; t++)
            in[2 + t] = out[1 + t];
        if (pass == 1) { /* the step's shapes are kept; its token id is still checked */
            int64_t bad = c.vocab;
            in[0].data = &bad;
            ASSERT_EQ_INT(eb_engine_run(e, in, (size_t)n_in, out, (size_t)n_out, &d),
                          EB_ERR_FORMAT);
            printf("refused: %s\n", d.msg);
            ASSERT_TRUE(strstr(d.msg, "out of range") != NULL);
            d = (struct eb_diag){0};
            in[0].data = &next;
            llm_prefill_in(in, &c, ids, pos, &dummy); /* the cache again: the outputs moved on */
            ASSERT_OK(eb_engine_run(e, in, (size_t)n_in, out, (size_t)n_out, &d));
            llm_step_in(in, &next, &at);
            for (int t = 0; t < n_kv; t++)
                in[2 + t] = out[1 + t];
        }
        ASSERT_OK(eb_engine_run(e, in, (size_t)n_in, out, (size_t)n_out, &d));
        ASSERT_EQ_INT(e->run_shapes_kept, pass);
        ASSERT_EQ_INT(e->run_replayed, 1);
        ASSERT_EQ_INT((int)out[0].shape[1], 1);
        ASSERT_EQ_INT((int)out[1].shape[2], LLM_PROMPT + 1);
        if (pass == 0)
            memcpy(first, out[0].data, nv * sizeof(float));
        else
            ASSERT_TRUE(memcmp(first, out[0].data, nv * sizeof(float)) == 0);
    }
    eb_engine_destroy(e);
    free(first);
    free(bytes);
}
