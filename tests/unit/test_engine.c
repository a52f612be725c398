/*
 * The native engine: outputs against ONNX Runtime (synthesized yolov8n/yolo11n, the shared int8
 * models), the memory cap and plan, load-time errors for unsupported ops, hostile bytes, and a
 * run that allocates nothing.
 *
 * Tolerances. Float graphs: max abs ≤ 1e-3 over all of output0 (observed ≤ 1.6e-4, the largest
 * on box coordinates in pixels), and additionally scores (rows 4..) ≤ 1e-3 absolute and boxes
 * (rows 0..3) ≤ 1e-3 relative to max(1, |ref|).
 * int8 graphs: one rounding step of a quantized activation moves a value by a whole scale step,
 * and float differences of a few ulps flip some roundings, which then propagate; a flipped
 * DFL bin moves a box edge by pixels. So int8 compares class scores by max abs and the whole
 * output by mean abs, and prints the max:
 *   - *_int8_dynamic (ConvInteger in exact integer arithmetic on both sides): scores ≤ 0.02,
 *     mean ≤ 0.05 (observed 0.0056 / 0.028);
 *   - *_int8_qdq: ONNX Runtime fuses Q/DQ into int8 kernels with its own requantization
 *     rounding, while the native engine runs the graph as written (fake-quant in float), so the
 *     bound is looser: scores ≤ 0.1, mean ≤ 0.3 (observed 0.045 / 0.14).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eb/backend.h"
#include "eb/engine.h"
#include "eb_test.h"
#include "engine/ir/graph.h"
#include "engine/onnx/onnx_model.h"
#include "engine/onnx/onnx_wire.h"
#include "engine/plan/memplan.h"
#include "model/model.h"
#include "onnx_build.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint8_t *synth(enum eb_synth_arch arch, int imgsz, size_t *len)
{
    struct eb_synth_options o = {.arch = arch, .scale = 'n', .imgsz = imgsz, .num_classes = 80};
    uint8_t *bytes = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_model_synth(&o, &bytes, len, &d));
    return bytes;
}

static float *random_image(int imgsz)
{
    size_t n = 3 * (size_t)imgsz * (size_t)imgsz;
    float *x = malloc(n * sizeof(float));
    uint32_t s = 12345u;
    ASSERT_TRUE(x != NULL);
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) / 16777216.0f;
    }
    return x;
}

/* ONNX Runtime on the CPU, or NULL with the reason in `why` when it is not available. */
static struct eb_backend *ort_try_open(char *why, size_t why_len)
{
    const struct eb_backend_ops *ops = eb_backend_find("ort");
    struct eb_backend_config cfg = {
        .device = EB_DEVICE_CPU, .threads = 1, .mem_limit_bytes = 8000000000ull};
    struct eb_backend_probe probe;
    struct eb_backend *be = NULL;
    struct eb_diag d = {0};
    if (ops == NULL || ops->probe(&cfg, &probe, &d) != EB_OK || !probe.available) {
        snprintf(why, why_len, "ONNX Runtime not available (%s); run scripts/setup.sh", d.msg);
        return NULL;
    }
    if (eb_backend_create(ops, &cfg, &be, &d) != EB_OK) {
        snprintf(why, why_len, "ONNX Runtime backend cannot be created: %s", d.msg);
        return NULL;
    }
    return be;
}

static struct eb_backend *ort_open(void)
{
    char why[640];
    struct eb_backend *be = ort_try_open(why, sizeof(why));
    if (be == NULL)
        EB_SKIP("%s", why);
    return be;
}

struct diff {
    double max_abs, max_score, max_box_rel, mean_abs;
};

/* Runs `bytes` through native and ORT on the same input; returns the differences of output0. */
static struct diff compare(const uint8_t *bytes, size_t len, const char *what, int imgsz)
{
    struct eb_backend *be = ort_open();
    struct eb_diag d = {0};
    struct eb_model_spec spec = {.path = what, .bytes = bytes, .n_bytes = len, .imgsz = imgsz};
    struct eb_model_info info;
    ASSERT_OK(eb_backend_load(be, &spec, &info, &d));

    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.imgsz = imgsz;
    struct eb_engine *e = NULL;
    double t0 = now_s();
    ASSERT_OK(eb_engine_load(bytes, len, what, &opt, &e, &d));
    double t1 = now_s();
    struct eb_engine_io io;
    eb_engine_io_info(e, &io);
    ASSERT_EQ_INT(io.n_inputs, 1);
    ASSERT_EQ_INT(io.inputs[0].shape[2], imgsz);

    float *x = random_image(imgsz);
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .data = x};
    in.shape[0] = 1, in.shape[1] = 3, in.shape[2] = imgsz, in.shape[3] = imgsz;
    struct eb_tensor out_n[EB_ENGINE_MAX_IO], out_o[EB_BACKEND_MAX_IO];
    struct eb_infer_timing t;
    double t2 = now_s();
    ASSERT_OK(eb_engine_run(e, &in, 1, out_n, io.n_outputs, &d));
    double t3 = now_s();
    ASSERT_OK(eb_backend_infer(be, &in, 1, out_o, info.n_outputs, &t, &d));

    ASSERT_EQ_INT(out_n[0].rank, out_o[0].rank);
    for (int i = 0; i < out_n[0].rank; i++)
        ASSERT_EQ_INT(out_n[0].shape[i], out_o[0].shape[i]);
    const float *a = out_n[0].data, *b = out_o[0].data;
    const int64_t rows = out_n[0].shape[1], cols = out_n[0].shape[2];
    struct diff r = {0};
    for (int64_t i = 0; i < rows * cols; i++) {
        double dd = fabs((double)a[i] - (double)b[i]);
        if (!(dd == dd))
            EB_FAIL("NaN at %lld", (long long)i);
        r.max_abs = dd > r.max_abs ? dd : r.max_abs;
        r.mean_abs += dd;
        if (i / cols < 4) {
            double rel = dd / (fabs((double)b[i]) > 1.0 ? fabs((double)b[i]) : 1.0);
            r.max_box_rel = rel > r.max_box_rel ? rel : r.max_box_rel;
        } else {
            r.max_score = dd > r.max_score ? dd : r.max_score;
        }
    }
    r.mean_abs /= (double)(rows * cols);
    struct eb_engine_mem mem;
    eb_engine_mem_info(e, &mem);
    printf("%s imgsz %d: load %.3f s, run %.3f s; max abs %.3g (scores %.3g, boxes rel %.3g), "
           "mean abs %.3g; arena %.2f MiB, weights %.2f MiB, naive %.2f MiB\n",
           what, imgsz, t1 - t0, t3 - t2, r.max_abs, r.max_score, r.max_box_rel, r.mean_abs,
           (double)mem.arena_bytes / 1048576.0, (double)mem.weight_bytes / 1048576.0,
           (double)mem.naive_bytes / 1048576.0);
    free(x);
    eb_engine_destroy(e);
    eb_backend_destroy(be);
    return r;
}

static void compare_synth(enum eb_synth_arch arch, int imgsz)
{
    size_t len;
    uint8_t *bytes = synth(arch, imgsz, &len);
    struct diff r = compare(bytes, len, arch == EB_SYNTH_YOLOV8 ? "yolov8n" : "yolo11n", imgsz);
    ASSERT_TRUE(r.max_abs <= 1e-3); /* observed ≤ 1.6e-4, boxes included */
    ASSERT_TRUE(r.max_score <= 1e-3);
    ASSERT_TRUE(r.max_box_rel <= 1e-3);
    free(bytes);
}

EB_TEST(ort_yolov8n_160)
{
    compare_synth(EB_SYNTH_YOLOV8, 160);
}

EB_TEST(ort_yolov8n_320)
{
    compare_synth(EB_SYNTH_YOLOV8, 320);
}

EB_TEST(ort_yolo11n_160)
{
    compare_synth(EB_SYNTH_YOLO11, 160);
}

EB_TEST(ort_yolo11n_320)
{
    compare_synth(EB_SYNTH_YOLO11, 320);
}

static void compare_shared(const char *name, int imgsz, double max_score, double max_mean)
{
    const char *dir = eb_test_shared_data();
    char path[1024];
    size_t len;
    if (dir == NULL)
        EB_SKIP("shared data folder absent");
    snprintf(path, sizeof(path), "%s/models/%s", dir, name);
    uint8_t *bytes = (uint8_t *)eb_test_read_file(path, &len);
    if (bytes == NULL)
        EB_SKIP("%s is absent", path);
    struct diff r = compare(bytes, len, name, imgsz);
    /* int8: see the tolerance note at the top of the file. */
    ASSERT_TRUE(r.max_score <= max_score);
    ASSERT_TRUE(r.mean_abs <= max_mean);
    free(bytes);
}

EB_TEST(ort_yolov8n_int8_qdq)
{
    compare_shared("yolov8n_int8_qdq.onnx", 640, 0.1, 0.3);
}

EB_TEST(ort_yolov8n_320_int8_dynamic)
{
    compare_shared("yolov8n_320_int8_dynamic.onnx", 320, 0.02, 0.05);
}

EB_TEST(ort_yolo11n_320_int8_dynamic)
{
    compare_shared("yolo11n_320_int8_dynamic.onnx", 320, 0.02, 0.05);
}

/* NanoDet-m (IR version 3: every weight is also a graph input; bilinear Resize in its PAN): every
 * output against ONNX Runtime on a random image, float tolerance (observed 1.1e-5). */
EB_TEST(ort_nanodet_m_416_all_outputs)
{
    const char *dir = eb_test_shared_data();
    char path[1024];
    size_t len;
    if (dir == NULL)
        EB_SKIP("shared data folder absent");
    snprintf(path, sizeof(path), "%s/models-fp32/nanodet_m_416_fp32.onnx", dir);
    uint8_t *bytes = (uint8_t *)eb_test_read_file(path, &len);
    if (bytes == NULL)
        EB_SKIP("%s is absent", path);
    struct eb_backend *be = ort_open();
    struct eb_diag d = {0};
    struct eb_model_spec spec = {.path = path, .bytes = bytes, .n_bytes = len, .imgsz = 416};
    struct eb_model_info info;
    ASSERT_OK(eb_backend_load(be, &spec, &info, &d));
    struct eb_engine *e = NULL;
    ASSERT_OK(eb_engine_load(bytes, len, path, NULL, &e, &d));
    struct eb_engine_io io;
    eb_engine_io_info(e, &io);
    ASSERT_EQ_INT(io.n_inputs, 1);
    ASSERT_EQ_INT((int)io.n_outputs, (int)info.n_outputs);
    float *x = random_image(416);
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .shape = {1, 3, 416, 416}, .data = x};
    struct eb_tensor out_n[EB_ENGINE_MAX_IO], out_o[EB_BACKEND_MAX_IO];
    struct eb_infer_timing t;
    ASSERT_OK(eb_engine_run(e, &in, 1, out_n, io.n_outputs, &d));
    ASSERT_OK(eb_backend_infer(be, &in, 1, out_o, info.n_outputs, &t, &d));
    double max_abs = 0.0;
    for (size_t k = 0; k < io.n_outputs; k++) {
        ASSERT_EQ_INT(out_n[k].rank, out_o[k].rank);
        int64_t n = 1;
        for (int i = 0; i < out_n[k].rank; i++) {
            ASSERT_EQ_INT(out_n[k].shape[i], out_o[k].shape[i]);
            n *= out_n[k].shape[i];
        }
        const float *a = out_n[k].data, *b = out_o[k].data;
        for (int64_t i = 0; i < n; i++) {
            const double dd = fabs((double)a[i] - (double)b[i]);
            if (!(dd <= 1e-3))
                EB_FAIL("output %zu element %lld: native %.7g, ONNX Runtime %.7g", k, (long long)i,
                        (double)a[i], (double)b[i]);
            max_abs = dd > max_abs ? dd : max_abs;
        }
    }
    printf("nanodet_m_416: %zu outputs, max abs difference to ONNX Runtime %.3g\n", io.n_outputs,
           max_abs);
    free(x);
    eb_engine_destroy(e);
    eb_backend_destroy(be);
    free(bytes);
}

/* The planner puts the inputs of channel Concats (C2f, SPPF, the FPN, the Detect heads) inside
 * their output, so those Concats copy nothing, and gives Reshapes their input's bytes; the
 * outputs still match ONNX Runtime (the ort_* tests run the same plans). */
EB_TEST(concat_in_place)
{
    const enum eb_synth_arch archs[2] = {EB_SYNTH_YOLOV8, EB_SYNTH_YOLO11};
    for (int a = 0; a < 2; a++) {
        size_t len;
        uint8_t *bytes = synth(archs[a], 320, &len);
        struct eb_engine_options opt;
        eb_engine_options_default(&opt);
        opt.imgsz = 320;
        struct eb_engine *e = NULL;
        struct eb_diag d = {0};
        ASSERT_OK(eb_engine_load(bytes, len, "synth-320", &opt, &e, &d));
        struct eb_engine_exec_info info;
        eb_engine_exec_info_get(e, &info);
        printf("%s-320: %zu Concat nodes in place, %zu Splits in them, %zu Reshape-family "
               "views\n",
               a == 0 ? "yolov8n" : "yolo11n", info.n_concat_in_place, info.n_split_in_place,
               info.n_views);
        /* yolov8n: 8 C2f, SPPF, 4 FPN, 3 Detect levels */
        ASSERT_TRUE(info.n_concat_in_place >= 8);
        /* every C2f (yolov8n: 8) / C3k2 (yolo11n: 8) Split feeds its Concat */
        ASSERT_TRUE(info.n_split_in_place >= 8);
        /* the Detect head's per-level Reshapes and the DFL's: views of their input */
        ASSERT_TRUE(info.n_views >= 3);
        eb_engine_destroy(e);
        free(bytes);
    }
}

/* The NCHWc layout pass: on an ISA with channel-blocked kernels most activations of both models
 * stay blocked between convs, and the outputs equal those of the same engine without the pass
 * (NCHW everywhere) to float rounding: boxes in pixels, scores in [0, 1]. */
EB_TEST(nchwc_layout_same_outputs)
{
    const enum eb_synth_arch archs[2] = {EB_SYNTH_YOLOV8, EB_SYNTH_YOLO11};
    for (int a = 0; a < 2; a++) {
        size_t len;
        uint8_t *bytes = synth(archs[a], 160, &len);
        struct eb_engine_options opt;
        eb_engine_options_default(&opt);
        opt.imgsz = 160;
        struct eb_engine *on = NULL, *off = NULL;
        struct eb_diag d = {0};
        ASSERT_OK(eb_engine_load(bytes, len, "synth-160", &opt, &on, &d));
        opt.passes &= ~(uint32_t)EB_ENGINE_PASS_LAYOUT;
        ASSERT_OK(eb_engine_load(bytes, len, "synth-160", &opt, &off, &d));
        struct eb_engine_exec_info i_on, i_off;
        eb_engine_exec_info_get(on, &i_on);
        eb_engine_exec_info_get(off, &i_off);
        printf("%s-160 (%s): %zu activations NCHWc (%d channels per block)\n",
               a == 0 ? "yolov8n" : "yolo11n", i_on.isa, i_on.n_blocked, i_on.block);
        ASSERT_EQ_INT((int)i_off.n_blocked, 0);
        if (strcmp(i_on.isa, "avx2") == 0 || strcmp(i_on.isa, "avx512") == 0) {
            ASSERT_EQ_INT(i_on.block, strcmp(i_on.isa, "avx2") == 0 ? 8 : 16);
            ASSERT_TRUE(i_on.n_blocked >= 40); /* the backbone, neck and head stems */
        } else {
            ASSERT_EQ_INT((int)i_on.n_blocked, 0); /* no channel-blocked kernels (NEON) */
        }
        float *x = random_image(160);
        struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .data = x};
        in.shape[0] = 1, in.shape[1] = 3, in.shape[2] = 160, in.shape[3] = 160;
        struct eb_tensor y_on[EB_ENGINE_MAX_IO], y_off[EB_ENGINE_MAX_IO];
        ASSERT_OK(eb_engine_run(on, &in, 1, y_on, EB_ENGINE_MAX_IO, &d));
        ASSERT_OK(eb_engine_run(off, &in, 1, y_off, EB_ENGINE_MAX_IO, &d));
        const int64_t n = y_on[0].shape[1] * y_on[0].shape[2];
        double max_d = 0.0;
        for (int64_t k = 0; k < n; k++) {
            const double ref = ((const float *)y_off[0].data)[k];
            const double dd = fabs(((const float *)y_on[0].data)[k] - ref);
            if (!(dd <= 1e-4 * (1.0 + fabs(ref))))
                EB_FAIL("output %lld: %.7g with the layout pass, %.7g without", (long long)k,
                        (double)((const float *)y_on[0].data)[k], ref);
            max_d = dd > max_d ? dd : max_d;
        }
        printf("  max abs difference to NCHW throughout: %.3g\n", max_d);
        free(x);
        eb_engine_destroy(on);
        eb_engine_destroy(off);
        free(bytes);
    }
}

/* Does every node that touches slot a (a value's home) come before every writer of slot b, through
 * the values they read? reach[i * n + j]: node j depends on node i. */
static int slot_before(const struct eb_graph *g, const unsigned char *reach, int a, int b)
{
    const size_t n = g->n_nodes;
    for (size_t i = 0; i < n; i++) {
        const struct eb_ir_node *ni = &g->nodes[i];
        int touches_a = 0;
        for (int k = 0; ni->alive && k < ni->n_in + ni->n_out && !touches_a; k++) {
            int id = k < ni->n_in ? ni->in[k] : ni->out[k - ni->n_in];
            while (id >= 0 && g->values[id].alias_of >= 0)
                id = g->values[id].alias_of;
            touches_a = id == a;
        }
        if (!touches_a)
            continue;
        for (size_t j = 0; j < n; j++) {
            const struct eb_ir_node *nj = &g->nodes[j];
            for (int k = 0; nj->alive && k < nj->n_out; k++) {
                int id = nj->out[k];
                while (id >= 0 && g->values[id].alias_of >= 0)
                    id = g->values[id].alias_of;
                if (id == b && !reach[i * n + j])
                    return 0;
            }
        }
    }
    return 1;
}

/* Memory plans of yolov8n and yolo11n (320). Sequential: slots that share bytes never live at the
 * same time. Concurrent (the CUDA device's lanes): moreover, every node that touched the earlier
 * slot precedes every writer of the later one, so no reuse orders two branches; the sequential
 * plan breaks that on these graphs (so the check can fail), and the concurrent one costs more. */
EB_TEST(concurrent_plan_keeps_branches_apart)
{
    for (int arch = 0; arch < 2; arch++) {
        size_t len;
        uint8_t *bytes = synth(arch ? EB_SYNTH_YOLO11 : EB_SYNTH_YOLOV8, 320, &len);
        struct eb_onnx_model *m = NULL;
        struct eb_graph *g = NULL;
        struct eb_diag d = {0};
        ASSERT_OK(eb_onnx_model_parse(bytes, len, "plan", NULL, &m, &d));
        ASSERT_OK(eb_graph_import(m, "plan", 320, 0, NULL, NULL, &g, &d));
        ASSERT_OK(eb_graph_run_passes(g, EB_ENGINE_PASS_ALL, EB_ENGINE_QDQ_FLOAT, &d));
        eb_graph_forget_source(g);
        eb_onnx_model_destroy(m);
        const size_t n = g->n_nodes;
        unsigned char *reach = calloc(n * n, 1);
        ASSERT_TRUE(reach != NULL);
        for (size_t j = 0; j < n; j++) /* nodes are in topological order */
            for (int k = 0; g->nodes[j].alive && k < g->nodes[j].n_in; k++) {
                const int id = g->nodes[j].in[k];
                const int p = id >= 0 ? g->values[id].producer : -1;
                if (p < 0)
                    continue;
                reach[(size_t)p * n + j] = 1;
                for (size_t i = 0; i < n; i++)
                    if (reach[i * n + (size_t)p])
                        reach[i * n + j] = 1;
            }
        uint64_t arena[2] = {0, 0};
        size_t crossings[2] = {0, 0};
        for (int conc = 0; conc < 2; conc++) {
            struct eb_memplan plan;
            ASSERT_OK(eb_memplan_build(g, conc, &plan, &d));
            arena[conc] = plan.arena_bytes;
            for (size_t a = 0; a < g->n_values; a++)
                for (size_t b = 0; b < g->n_values; b++) {
                    const struct eb_ir_value *va = &g->values[a], *vb = &g->values[b];
                    if (a == b || va->offset < 0 || vb->offset < 0 || va->alias_of >= 0 ||
                        vb->alias_of >= 0 || va->first > vb->first ||
                        (va->first == vb->first && a > b))
                        continue;
                    const int64_t ea = va->offset + (int64_t)va->nbytes,
                                  eb = vb->offset + (int64_t)vb->nbytes;
                    if (va->offset >= eb || vb->offset >= ea)
                        continue; /* no bytes in common */
                    ASSERT_TRUE(va->last < vb->first);
                    if (!slot_before(g, reach, (int)a, (int)b))
                        crossings[conc]++;
                }
        }
        printf("%s-320: arena sequential %.2f MiB (%zu reuses across branches), concurrent %.2f "
               "MiB (%zu)\n",
               arch ? "yolo11n" : "yolov8n", (double)arena[0] / 1048576.0, crossings[0],
               (double)arena[1] / 1048576.0, crossings[1]);
        ASSERT_TRUE(crossings[0] > 0);
        ASSERT_EQ_INT((int)crossings[1], 0);
        ASSERT_TRUE(arena[1] >= arena[0]);
        ASSERT_TRUE(arena[1] <= 3 * arena[0]);
        free(reach);
        eb_graph_destroy(g);
        free(bytes);
    }
}

EB_TEST(mem_plan_below_naive_and_cap)
{
    size_t len;
    uint8_t *bytes = synth(EB_SYNTH_YOLOV8, 640, &len);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.imgsz = 640;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_load(bytes, len, "yolov8n-640", &opt, &e, &d));
    struct eb_engine_mem mem;
    eb_engine_mem_info(e, &mem);
    printf("yolov8n-640: arena %llu bytes (%.2f MiB), weights %llu, naive %llu (%.2f MiB)\n",
           (unsigned long long)mem.arena_bytes, (double)mem.arena_bytes / 1048576.0,
           (unsigned long long)mem.weight_bytes, (unsigned long long)mem.naive_bytes,
           (double)mem.naive_bytes / 1048576.0);
    ASSERT_TRUE(mem.arena_bytes < mem.naive_bytes);
    ASSERT_TRUE(mem.arena_bytes * 4 < mem.naive_bytes);
    ASSERT_TRUE(mem.weight_bytes >= 3000000u * 4u); /* 3.15 M parameters, float32 */
    ASSERT_STREQ(eb_engine_meta(e, "stride"), "32");
    ASSERT_TRUE(eb_engine_meta(e, "no such key") == NULL);
    eb_engine_destroy(e);

    /* The cap covers everything the engine holds: arena, kernels' scratch, weights and their
     * packed copies. Exactly the plan fits; one byte less fails with the documented message. */
    ASSERT_TRUE(mem.total_bytes >=
                mem.arena_bytes + mem.scratch_bytes + mem.weight_bytes + mem.packed_bytes);
    ASSERT_TRUE(mem.total_bytes <
                mem.arena_bytes + mem.scratch_bytes + mem.weight_bytes + mem.packed_bytes + 64);
    opt.mem_cap_bytes = mem.total_bytes;
    ASSERT_OK(eb_engine_load(bytes, len, "yolov8n-640", &opt, &e, &d));
    eb_engine_destroy(e);
    e = NULL;
    opt.mem_cap_bytes -= 1;
    ASSERT_EQ_INT(eb_engine_load(bytes, len, "yolov8n-640", &opt, &e, &d), EB_ERR_LIMIT);
    ASSERT_TRUE(e == NULL);
    ASSERT_CONTAINS(d.msg, "needed");
    ASSERT_CONTAINS(d.msg, "limit");
    ASSERT_CONTAINS(d.msg, "yolov8n-640");
    printf("%s\n", d.msg);
    free(bytes);
}

/*
 * hostile/softmax128_axis24576_inner2.onnx (issue 19), a valid model: images [1,3,128,128] →
 * Reshape [1,24576,2] → Softmax(axis 1) → Reshape [1,6,8192]. The native CPU Softmax divided
 * by zero on it (SIGFPE). Its output must be the softmax of each of the two columns, computed
 * here in double, with 1 and 3 threads, and match ONNX Runtime where that is installed.
 */
EB_TEST(hostile_softmax_long_axis_matches_reference)
{
    const char *dir = eb_test_shared_data();
    char path[1024];
    size_t len;
    if (dir == NULL)
        EB_SKIP("shared data folder absent");
    snprintf(path, sizeof(path), "%s/hostile/softmax128_axis24576_inner2.onnx", dir);
    uint8_t *bytes = (uint8_t *)eb_test_read_file(path, &len);
    if (bytes == NULL)
        EB_SKIP("%s is absent", path);
    const int64_t axis = 24576, inner = 2, n = axis * inner;
    float *x = malloc((size_t)n * sizeof(float));
    double *want = malloc((size_t)n * sizeof(double));
    ASSERT_TRUE(x != NULL && want != NULL);
    uint32_t r = 19u;
    for (int64_t i = 0; i < n; i++) {
        r = r * 1664525u + 1013904223u;
        x[i] = -8.0f + 16.0f * (float)(r >> 8) / 16777216.0f;
    }
    for (int64_t c = 0; c < inner; c++) {
        double m = -INFINITY, sum = 0.0;
        for (int64_t a = 0; a < axis; a++)
            m = fmax(m, (double)x[a * inner + c]);
        for (int64_t a = 0; a < axis; a++)
            sum += exp((double)x[a * inner + c] - m);
        for (int64_t a = 0; a < axis; a++)
            want[a * inner + c] = exp((double)x[a * inner + c] - m) / sum;
    }
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .shape = {1, 3, 128, 128}, .data = x};
    struct eb_diag d = {0};
    float *native = malloc((size_t)n * sizeof(float));
    ASSERT_TRUE(native != NULL);
    for (int threads = 1; threads <= 3; threads += 2) {
        struct eb_engine_options opt;
        eb_engine_options_default(&opt);
        opt.imgsz = 128;
        opt.threads = threads;
        struct eb_engine *e = NULL;
        struct eb_tensor out[1];
        ASSERT_OK(eb_engine_load(bytes, len, path, &opt, &e, &d));
        ASSERT_OK(eb_engine_run(e, &in, 1, out, 1, &d));
        ASSERT_EQ_INT(out[0].rank, 3);
        ASSERT_EQ_INT(out[0].shape[1], 6);
        ASSERT_EQ_INT(out[0].shape[2], 8192);
        const float *y = out[0].data;
        for (int64_t i = 0; i < n; i++)
            if (!(fabs((double)y[i] - want[i]) <= 1e-4 * want[i] + 1e-12))
                EB_FAIL("%d threads: element %lld: %.9g, reference %.9g", threads, (long long)i,
                        (double)y[i], want[i]);
        memcpy(native, y, (size_t)n * sizeof(float));
        eb_engine_destroy(e);
    }
    char why[640];
    struct eb_backend *be = ort_try_open(why, sizeof(why));
    if (be == NULL) {
        printf("native matches the reference; ONNX Runtime comparison skipped: %s\n", why);
    } else {
        struct eb_model_spec spec = {.path = path, .bytes = bytes, .n_bytes = len, .imgsz = 128};
        struct eb_model_info info;
        struct eb_tensor out[EB_BACKEND_MAX_IO];
        struct eb_infer_timing t;
        ASSERT_OK(eb_backend_load(be, &spec, &info, &d));
        ASSERT_OK(eb_backend_infer(be, &in, 1, out, info.n_outputs, &t, &d));
        const float *o = out[0].data;
        double max_rel = 0.0;
        for (int64_t i = 0; i < n; i++) {
            const double rel = fabs((double)native[i] - (double)o[i]) / (double)o[i];
            max_rel = rel > max_rel ? rel : max_rel;
        }
        printf("native vs ONNX Runtime: max relative difference %.3g\n", max_rel);
        ASSERT_TRUE(max_rel <= 1e-4);
        eb_backend_destroy(be);
    }
    free(native);
    free(want);
    free(x);
    free(bytes);
}

/* ---- tiny hand-built models ------------------------------------------------------------------ */

/* x[1,4] → <op_type>(x) → y, with one optional string attribute; opset 17. */
static uint8_t *tiny_model(const char *op_type, const char *attr, const char *value, size_t *len)
{
    struct eb_pb_buf m, g, n, a, os;
    const int64_t dims[2] = {1, 4};
    eb_pb_buf_init(&m);
    eb_pb_buf_init(&g);
    eb_pb_buf_init(&n);
    eb_pb_buf_init(&a);
    eb_pb_buf_init(&os);
    eb_pb_put_str(&n, 1, "x");
    eb_pb_put_str(&n, 2, "y");
    eb_pb_put_str(&n, 3, "the_node");
    eb_pb_put_str(&n, 4, op_type);
    if (attr != NULL) {
        eb_pb_put_str(&a, 1, attr);
        eb_pb_put_bytes(&a, 4, value, strlen(value));
        eb_pb_put_varint(&a, 20, 3); /* STRING */
        eb_pb_put_msg(&n, 5, &a);
    }
    eb_pb_put_msg(&g, 1, &n);
    eb_pb_put_str(&g, 2, "tiny");
    eb_test_put_value_info(&g, 11, "x", 1, 2, dims);
    eb_test_put_value_info(&g, 12, "y", 1, 2, dims);
    eb_pb_put_varint(&os, 2, 17);
    eb_pb_put_varint(&m, 1, 8);
    eb_pb_put_msg(&m, 7, &g);
    eb_pb_put_msg(&m, 8, &os);
    ASSERT_TRUE(!eb_pb_buf_error(&m));
    uint8_t *bytes = eb_pb_buf_take(&m, len);
    eb_pb_buf_fini(&m);
    eb_pb_buf_fini(&g);
    eb_pb_buf_fini(&n);
    eb_pb_buf_fini(&a);
    eb_pb_buf_fini(&os);
    return bytes;
}

EB_TEST(tiny_sigmoid_runs)
{
    size_t len;
    uint8_t *bytes = tiny_model("Sigmoid", NULL, NULL, &len);
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_load(bytes, len, "tiny", NULL, &e, &d));
    float x[4] = {0.0f, 1.0f, -2.0f, 100.0f};
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 2, .shape = {1, 4}, .data = x}, out[1];
    ASSERT_OK(eb_engine_run(e, &in, 1, out, 1, &d));
    const float *y = out[0].data;
    ASSERT_NEAR(y[0], 0.5, 1e-7);
    ASSERT_NEAR(y[1], 1.0 / (1.0 + exp(-1.0)), 1e-6);
    ASSERT_NEAR(y[2], 1.0 / (1.0 + exp(2.0)), 1e-6);
    ASSERT_NEAR(y[3], 1.0, 1e-6);
    /* A wrong input shape is a clean error. */
    in.shape[1] = 5;
    ASSERT_EQ_INT(eb_engine_run(e, &in, 1, out, 1, &d), EB_ERR_INVALID_ARG);
    eb_engine_destroy(e);
    free(bytes);
}

EB_TEST(unsupported_op_fails_at_load)
{
    size_t len;
    uint8_t *bytes = tiny_model("Einsum", NULL, NULL, &len);
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_engine_load(bytes, len, "tiny.onnx", NULL, &e, &d), EB_ERR_UNSUPPORTED);
    ASSERT_TRUE(e == NULL);
    printf("%s\n", d.msg);
    ASSERT_CONTAINS(d.msg, "tiny.onnx");
    ASSERT_CONTAINS(d.msg, "node 0 (the_node)");
    ASSERT_CONTAINS(d.msg, "Einsum");
    ASSERT_CONTAINS(d.msg, "opset 17");
    ASSERT_CONTAINS(d.msg, "is not supported by the native engine");
    ASSERT_ADVICE(d, EB_ADVICE_OTHER_BACKEND);
    int ok = 1;
    char why[256];
    ASSERT_OK(eb_engine_supports(bytes, len, "test model", &ok, why, sizeof(why), &d));
    ASSERT_EQ_INT(ok, 0);
    ASSERT_CONTAINS(why, "Einsum");
    free(bytes);
}

EB_TEST(unsupported_attribute_fails_at_load)
{
    size_t len;
    uint8_t *bytes = tiny_model("Resize", "mode", "cubic", &len);
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_engine_load(bytes, len, "tiny.onnx", NULL, &e, &d), EB_ERR_UNSUPPORTED);
    printf("%s\n", d.msg);
    const char *want = "node 0 (the_node): op Resize (opset 17): mode 'cubic' is not supported by "
                       "the native engine";
    ASSERT_CONTAINS(d.msg, want);
    ASSERT_STREQ(d.msg + strlen(d.msg) - strlen(want), want); /* the sentence ends there */
    ASSERT_ADVICE(d, EB_ADVICE_OTHER_BACKEND);
    free(bytes);
}

/* The common CNN activations on x[1,4] through a one-node model each (opset 17). */
EB_TEST(tiny_activations_run)
{
    static const struct {
        const char *op;
        float want[4];
    } cases[] = {
        {"Relu", {0.0f, 1.0f, 0.0f, 100.0f}},
        {"LeakyRelu", {0.0f, 1.0f, -0.02f, 100.0f}},
        {"HardSigmoid", {0.5f, 0.7f, 0.1f, 1.0f}},
        {"HardSwish", {0.0f, 1.0f * (1.0f / 6.0f + 0.5f), -2.0f * (-2.0f / 6.0f + 0.5f), 100.0f}},
        {"Clip", {0.0f, 1.0f, -2.0f, 100.0f}}, /* no min/max: identity */
        {"Tanh", {0.0f, 0.76159416f, -0.96402758f, 1.0f}},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        size_t len;
        uint8_t *bytes = tiny_model(cases[c].op, NULL, NULL, &len);
        struct eb_engine *e = NULL;
        struct eb_diag d = {0};
        ASSERT_OK(eb_engine_load(bytes, len, "tiny", NULL, &e, &d));
        float x[4] = {0.0f, 1.0f, -2.0f, 100.0f};
        struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 2, .shape = {1, 4}, .data = x},
                         out[1];
        ASSERT_OK(eb_engine_run(e, &in, 1, out, 1, &d));
        const float *y = out[0].data;
        for (int i = 0; i < 4; i++) {
            const double w = cases[c].want[i];
            ASSERT_NEAR(y[i], w, 1e-6 * (w < 0 ? -w : w) + 1e-6);
        }
        eb_engine_destroy(e);
        free(bytes);
    }
}

/* Attribute values the new ops do not implement fail at load, naming node, op and opset. */
EB_TEST(unsupported_pool_and_pad_modes_fail_at_load)
{
    static const char *const cases[][4] = {
        {"Pad", "mode", "wrap", "op Pad (opset 17): mode 'wrap' is not supported"},
        {"AveragePool", "auto_pad", "SAME_UPPER",
         "op AveragePool (opset 17): auto_pad 'SAME_UPPER' is not supported"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        size_t len;
        uint8_t *bytes = tiny_model(cases[c][0], cases[c][1], cases[c][2], &len);
        struct eb_engine *e = NULL;
        struct eb_diag d = {0};
        ASSERT_EQ_INT(eb_engine_load(bytes, len, "tiny.onnx", NULL, &e, &d), EB_ERR_UNSUPPORTED);
        ASSERT_TRUE(e == NULL);
        printf("%s\n", d.msg);
        ASSERT_CONTAINS(d.msg, "node 0 (the_node)");
        ASSERT_CONTAINS(d.msg, cases[c][3]);
        ASSERT_ADVICE(d, EB_ADVICE_OTHER_BACKEND);
        free(bytes);
    }
}

EB_TEST(supports_synth_models)
{
    size_t len;
    uint8_t *bytes = synth(EB_SYNTH_YOLO11, 320, &len);
    int ok = 0;
    char why[256] = "x";
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_supports(bytes, len, "test model", &ok, why, sizeof(why), &d));
    ASSERT_EQ_INT(ok, 1);
    ASSERT_STREQ(why, "");
    free(bytes);
}

EB_TEST(hostile_bytes_are_format_errors)
{
    size_t len;
    uint8_t *model = synth(EB_SYNTH_YOLOV8, 160, &len);
    struct eb_diag d = {0};
    struct eb_engine *e = NULL;
    uint32_t s = 99u;
    uint8_t junk[4096];
    for (int round = 0; round < 50; round++) {
        for (size_t i = 0; i < sizeof(junk); i++) {
            s = s * 1103515245u + 12345u;
            junk[i] = (uint8_t)(s >> 16);
        }
        eb_diag_clear(&d);
        enum eb_status st =
            eb_engine_load(junk, sizeof(junk) - (size_t)round, "junk", NULL, &e, &d);
        ASSERT_TRUE(st != EB_OK);
        ASSERT_TRUE(e == NULL);
    }
    eb_diag_clear(&d);
    ASSERT_EQ_INT(eb_engine_load(junk, sizeof(junk), "junk", NULL, &e, &d), EB_ERR_FORMAT);
    /* Truncations at many points, and a few flipped bytes: never a crash, never a success. */
    for (size_t cut = 1; cut < len; cut += len / 97 + 1) {
        eb_diag_clear(&d);
        enum eb_status st = eb_engine_load(model, cut, "cut", NULL, &e, &d);
        ASSERT_TRUE(st != EB_OK);
        ASSERT_TRUE(e == NULL);
        if (cut < 64)
            ASSERT_EQ_INT(st, EB_ERR_FORMAT);
    }
    ASSERT_EQ_INT(eb_engine_load(model, len / 2, "half", NULL, &e, &d), EB_ERR_FORMAT);
    for (int k = 0; k < 40; k++) {
        uint8_t *copy = malloc(len);
        ASSERT_TRUE(copy != NULL);
        memcpy(copy, model, len);
        s = s * 1103515245u + 12345u;
        copy[(s >> 8) % len] ^= (uint8_t)(1u << (k % 8));
        eb_diag_clear(&d);
        struct eb_engine_options opt;
        eb_engine_options_default(&opt);
        opt.imgsz = 64;
        if (eb_engine_load(copy, len, "flipped", &opt, &e, &d) == EB_OK)
            eb_engine_destroy(e); /* a flip inside weights is still a valid model */
        e = NULL;
        free(copy);
    }
    free(model);
}

EB_TEST(run_does_not_allocate)
{
    size_t len;
    uint8_t *bytes = synth(EB_SYNTH_YOLO11, 64, &len);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.imgsz = 64;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_load(bytes, len, "yolo11n", &opt, &e, &d));
    float *x = random_image(64);
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .shape = {1, 3, 64, 64}, .data = x};
    struct eb_tensor out[EB_ENGINE_MAX_IO];
    uint64_t before = eb_engine__n_allocs(e);
    ASSERT_TRUE(before > 0);
    ASSERT_OK(eb_engine_run(e, &in, 1, out, EB_ENGINE_MAX_IO, &d));
    ASSERT_OK(eb_engine_run(e, &in, 1, out, EB_ENGINE_MAX_IO, &d));
    ASSERT_EQ_INT(eb_engine__n_allocs(e), before);
    free(x);
    eb_engine_destroy(e);
    free(bytes);
}

/* --qdq strip: the QDQ model without its activation Q/DQ pairs (the float model it came from). */
EB_TEST(qdq_strip_removes_activation_pairs)
{
    const char *dir = eb_test_shared_data();
    char path[1024];
    size_t len;
    if (dir == NULL)
        EB_SKIP("shared data folder absent");
    snprintf(path, sizeof(path), "%s/models/yolov8n_int8_qdq.onnx", dir);
    uint8_t *bytes = (uint8_t *)eb_test_read_file(path, &len);
    if (bytes == NULL)
        EB_SKIP("%s is absent", path);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.profile = 1;
    struct eb_engine *fq = NULL, *st = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_load(bytes, len, "qdq", &opt, &fq, &d));
    opt.qdq = EB_ENGINE_QDQ_STRIP;
    ASSERT_OK(eb_engine_load(bytes, len, "qdq", &opt, &st, &d));
    struct eb_engine_profile p;
    eb_engine_profile_get(st, &p);
    size_t n_q = 0;
    for (size_t k = 0; k < p.n_nodes; k++)
        n_q += strstr(p.nodes[k].op, "QuantizeLinear") != NULL || strstr(p.nodes[k].fused, "qdq");
    struct eb_engine_exec_info a, b;
    eb_engine_exec_info_get(fq, &a);
    eb_engine_exec_info_get(st, &b);
    printf("fake-quant: %zu nodes; stripped: %zu nodes, %zu quantising\n", a.n_nodes, b.n_nodes,
           n_q);
    ASSERT_EQ_INT(n_q, 0);
    ASSERT_TRUE(b.n_nodes + 100 < a.n_nodes);
    /* The same detector: outputs close on average (fake quantisation moves them a little). */
    float *x = random_image(640);
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .data = x};
    in.shape[0] = 1, in.shape[1] = 3, in.shape[2] = 640, in.shape[3] = 640;
    struct eb_tensor oa[EB_ENGINE_MAX_IO], ob[EB_ENGINE_MAX_IO];
    struct eb_engine_io io;
    eb_engine_io_info(fq, &io);
    ASSERT_OK(eb_engine_run(fq, &in, 1, oa, io.n_outputs, &d));
    ASSERT_OK(eb_engine_run(st, &in, 1, ob, io.n_outputs, &d));
    const int64_t n = oa[0].shape[1] * oa[0].shape[2];
    double mean = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double dd = fabs((double)((float *)oa[0].data)[i] - (double)((float *)ob[0].data)[i]);
        ASSERT_TRUE(dd == dd);
        mean += dd;
    }
    mean /= (double)n;
    printf("mean abs difference to fake-quant: %.4g\n", mean);
    ASSERT_TRUE(mean < 1.0);
    free(x);
    eb_engine_destroy(fq);
    eb_engine_destroy(st);
    free(bytes);
}
