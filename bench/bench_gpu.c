/*
 * bench_gpu: the native engine on an NVIDIA GPU (--device cuda), fp32 and fp16, next to a peer
 * measured in the same run: the same ONNX graph executed op by op by PyTorch eager (fp16, cuDNN;
 * bench/peer_torch.py), started by this program after its own rows.
 *
 * Rows: synthesized yolov8n and yolo11n (--imgsz, 640 by default; the ONNX files are written
 * to --out so that the peer loads the very same graphs), batch 1, each in fp32 and fp16. Per
 * row, after --warmup frames, --frames frames of the whole pipeline from one uint8 1920x1080
 * RGB frame (a deterministic pattern) to boxes:
 *   pre   letterbox + normalise to the model's NCHW input: on the CPU (pre "cpu" rows: host
 *         clock), or on the GPU (pre "gpu" rows: eb_engine_run_frame; the CUDA events around
 *         the letterbox kernel; the frame's copy into page-locked memory is in e2e only;
 *         "gpu-buf": the frame is already in the engine's page-locked buffer, as when a decoder
 *         writes it there: eb_engine_frame_buffer)
 *   h2d, compute, d2h   the engine's CUDA events around the input copy (float input, or the
 *                       uint8 frame with pre "gpu"), the forward (CUDA Graph replay) and the
 *                       output copy
 *   post  decode + class-aware NMS (CPU; conf 0.25, IoU 0.7); with post "gpu" the head is
 *         reduced on the device (eb_engine_reduce_head: only the anchors over conf come back)
 *         and post is the host's sort of those rows + NMS
 *   e2e   host clock around all of it
 * Percentiles are numpy's (linear interpolation). "dual" rows run two engines of the same model
 * and precision (pre on the GPU) on two threads (two slots on one GPU, one stream each) for --frames frames each:
 * pair FPS = 2 x frames / wall time, against one slot's FPS measured the same way.
 *
 * int8 rows: with --int8 DIR, a model whose int8 twin DIR/<model>-<imgsz>.int8.onnx exists (a
 * QDQ file: `edgebench model synth --arch yolov8 --imgsz 640 -o M.onnx` writes the same graph
 * as this program, `edgebench quantize --model M.onnx --calib IMAGES -o ...` its twin) also runs
 * int8 (its convs on the int8 kernels, the rest in fp16, as `--precision int8` on cuda); the
 * line after the table gives int8's compute p50 over fp16's, measured in this run.
 *
 * Usage: bench_gpu [--frames N] [--warmup N] [--imgsz N] [--models yolov8n,yolo11n]
 *                  [--out DIR] [--peer "python3 bench/peer_torch.py"] [--profile N]
 *                  [--int8 DIR] [--no_fp32] [--compute_only]
 * --no_fp32: the fp16 and int8 rows only.
 * --compute_only: only the rows with the frame in the engine's buffer and 4 streams (the compute
 * p50 that the int8 / fp16 line compares), without the dual rows.
 * --profile N: per model and precision, a separate instance with the per-node profile on (CUDA
 * events between nodes) prints the time per op type and the N slowest nodes to stderr.
 * Exit 77 when no GPU is usable (the reason is printed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/clock.h"
#include "eb/engine.h"
#include "eb/thread.h"
#include "harness/metrics/stats.h"
#include "model/model.h"
#include "yolo/yolo.h"

#define FRAME_W 1920
#define FRAME_H 1080
#define MAX_DET 300

struct opts {
    int frames, warmup, imgsz, profile;
    const char *models, *out, *peer, *int8;
    int skip_fp32, compute_only;
};

/* One slot's pipeline: an engine, its input buffer and post-processing scratch. */
struct slot {
    struct eb_engine *e;
    const uint8_t *frame;
    float *input;
    struct eb_letterbox lb;
    struct eb_yolo_layout_info li;
    struct eb_yolo_scratch scratch;
    struct eb_detection dets[MAX_DET];
    size_t n_boxes;
    /* per-frame samples (ms) */
    double *pre, *h2d, *compute, *d2h, *post, *e2e;
    int frames;
    int gpu_pre;  /* eb_engine_run_frame (2: the frame is in the engine's buffer) */
    int gpu_head; /* eb_engine_reduce_head */
    double wall_ms;
    int failed;
    char err[256];
};

static void die(const char *what, const struct eb_diag *d)
{
    fprintf(stderr, "bench_gpu: %s: %s\n", what, d->msg);
    exit(1);
}

/* A 1920x1080 RGB frame with edges and gradients (not a flat colour). */
static uint8_t *make_frame(void)
{
    uint8_t *f = malloc((size_t)FRAME_W * FRAME_H * 3);
    if (f == NULL)
        return NULL;
    for (int y = 0; y < FRAME_H; y++)
        for (int x = 0; x < FRAME_W; x++) {
            uint8_t *p = f + ((size_t)y * FRAME_W + (size_t)x) * 3;
            const int box = ((x / 240) + (y / 180)) & 1;
            p[0] = (uint8_t)(box ? x * 255 / FRAME_W : 40);
            p[1] = (uint8_t)(box ? 200 : y * 255 / FRAME_H);
            p[2] = (uint8_t)((x ^ y) & 0xFF);
        }
    return f;
}

/* A whole decimal integer in [lo, hi] from s, else -1 (then the usage). */
static int parse_int(const char *s, int lo, int hi)
{
    char *end = NULL;
    const long v = strtol(s, &end, 10);
    return end != s && *end == '\0' && v >= lo && v <= hi ? (int)v : -1;
}

/* The precisions of the rows: fp32, fp16, int8 (a QDQ twin: int8 convs, the rest fp16). */
enum prec { P_FP32, P_FP16, P_INT8 };
static const char *const PREC_NAME[3] = {"fp32", "fp16", "int8"};

static int slot_init(struct slot *s, const uint8_t *model, size_t len, const char *what,
                     enum prec pr, int gpu_pre, int gpu_head, int lanes, const uint8_t *frame,
                     int frames, struct eb_diag *d)
{
    memset(s, 0, sizeof(*s));
    s->gpu_pre = gpu_pre;
    s->gpu_head = gpu_head;
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.device = EB_ENGINE_DEVICE_CUDA;
    opt.precision = pr == P_FP32 ? EB_ENGINE_PRECISION_FP32 : EB_ENGINE_PRECISION_FP16;
    opt.qdq = EB_ENGINE_QDQ_INT8;
    if (!lanes)
        opt.passes &= ~(uint32_t)EB_ENGINE_PASS_LANES;
    if (eb_engine_load(model, len, what, &opt, &s->e, d) != EB_OK)
        return -1;
    struct eb_engine_io io;
    eb_engine_io_info(s->e, &io);
    const int h = (int)io.inputs[0].shape[2], w = (int)io.inputs[0].shape[3];
    eb_letterbox_compute(FRAME_W, FRAME_H, w, h, &s->lb);
    s->input = malloc((size_t)3 * (size_t)h * (size_t)w * sizeof(float));
    if (s->input == NULL ||
        eb_yolo_layout_detect(io.outputs[0].shape, io.outputs[0].rank, 80, &s->li, d) != EB_OK ||
        eb_yolo_scratch_init(&s->scratch, &s->li, d) != EB_OK ||
        (gpu_head && eb_engine_reduce_head(s->e, 0, 0.25f, d) != EB_OK))
        return -1;
    if (gpu_pre == 2) { /* as if decoded straight into the engine's page-locked buffer */
        uint8_t *buf = NULL;
        if (eb_engine_frame_buffer(s->e, FRAME_W, FRAME_H, &buf, d) != EB_OK)
            return -1;
        memcpy(buf, frame, (size_t)FRAME_W * FRAME_H * 3);
        s->frame = buf;
    }
    if (gpu_pre != 2)
        s->frame = frame;
    s->frames = frames;
    double **bufs[6] = {&s->pre, &s->h2d, &s->compute, &s->d2h, &s->post, &s->e2e};
    for (int i = 0; i < 6; i++)
        if ((*bufs[i] = calloc((size_t)frames + 1, sizeof(double))) == NULL)
            return -1;
    return 0;
}

static void slot_fini(struct slot *s)
{
    eb_engine_destroy(s->e);
    eb_yolo_scratch_fini(&s->scratch);
    free(s->input);
    free(s->pre), free(s->h2d), free(s->compute), free(s->d2h), free(s->post), free(s->e2e);
}

/* One frame through the pipeline; sample i (or none when i < 0). */
static int slot_frame(struct slot *s, int i)
{
    struct eb_diag d = {0};
    struct eb_engine_io io;
    eb_engine_io_info(s->e, &io);
    struct eb_tensor out[EB_ENGINE_MAX_IO];
    const uint64_t t0 = eb_clock_ns();
    uint64_t t1 = t0;
    enum eb_status st;
    if (s->gpu_pre) {
        const struct eb_engine_frame f = {.rgb = s->frame,
                                          .width = FRAME_W,
                                          .height = FRAME_H,
                                          .stride = (size_t)FRAME_W * 3,
                                          .new_w = s->lb.new_w,
                                          .new_h = s->lb.new_h,
                                          .pad_left = s->lb.pad_left,
                                          .pad_top = s->lb.pad_top};
        st = eb_engine_run_frame(s->e, &f, out, io.n_outputs, &d);
    } else {
        eb_letterbox_rgb_to_nchw_f32(s->frame, FRAME_W, FRAME_H, (size_t)FRAME_W * 3, &s->lb, 3,
                                     s->input);
        t1 = eb_clock_ns();
        struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .data = s->input};
        for (int k = 0; k < 4; k++)
            in.shape[k] = io.inputs[0].shape[k];
        st = eb_engine_run(s->e, &in, 1, out, io.n_outputs, &d);
    }
    if (st != EB_OK) {
        snprintf(s->err, sizeof(s->err), "%.255s", d.msg);
        s->failed = 1;
        return -1;
    }
    const uint64_t t2 = eb_clock_ns();
    const struct eb_yolo_params p = {.conf = 0.25f, .iou = 0.7f, .max_det = MAX_DET};
    struct eb_detections dets = {.items = s->dets, .capacity = MAX_DET};
    if (s->gpu_head) {
        struct eb_anchor_row *rows = NULL;
        const size_t n = eb_engine_head_rows(s->e, &rows);
        eb_yolo_nms(&s->scratch, eb_yolo_decode_rows(rows, n, &s->scratch), &p, &dets);
        for (size_t k = 0; k < dets.count; k++)
            eb_letterbox_unmap(&s->lb, &dets.items[k]);
    } else {
        eb_yolo_postprocess(&s->li, out[0].data, &s->lb, &p, &s->scratch, &dets);
    }
    const uint64_t t3 = eb_clock_ns();
    s->n_boxes = dets.count;
    if (i >= 0) {
        struct eb_engine_timing t;
        eb_engine_timing_get(s->e, &t);
        s->pre[i] = s->gpu_pre ? t.pre_ms : (double)(t1 - t0) / 1e6;
        s->h2d[i] = t.h2d_ms;
        s->compute[i] = t.compute_ms;
        s->d2h[i] = t.d2h_ms;
        s->post[i] = (double)(t3 - t2) / 1e6;
        s->e2e[i] = (double)(t3 - t0) / 1e6;
    }
    return 0;
}

static void *slot_loop(void *arg)
{
    struct slot *s = arg;
    const uint64_t t0 = eb_clock_ns();
    for (int i = 0; i < s->frames && !s->failed; i++)
        slot_frame(s, i);
    s->wall_ms = (double)(eb_clock_ns() - t0) / 1e6;
    return NULL;
}

/* The per-node profile of `model` in `prec` (a separate instance, after the timed rows): time
 * per op type and the `top` slowest nodes, per run, on stderr. */
static void profile(const uint8_t *model, size_t len, const char *what, enum prec pr, int top)
{
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.device = EB_ENGINE_DEVICE_CUDA;
    opt.precision = pr == P_FP32 ? EB_ENGINE_PRECISION_FP32 : EB_ENGINE_PRECISION_FP16;
    opt.qdq = EB_ENGINE_QDQ_INT8;
    opt.profile = 1;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    if (eb_engine_load(model, len, what, &opt, &e, &d) != EB_OK)
        die(what, &d);
    struct eb_engine_io io;
    eb_engine_io_info(e, &io);
    const int64_t n_in = io.inputs[0].shape[1] * io.inputs[0].shape[2] * io.inputs[0].shape[3];
    float *x = calloc((size_t)n_in, sizeof(float));
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .data = x};
    for (int k = 0; k < 4; k++)
        in.shape[k] = io.inputs[0].shape[k];
    struct eb_tensor out[EB_ENGINE_MAX_IO];
    for (int r = 0; r < 25; r++) {
        if (r == 5)
            eb_engine_profile_reset(e);
        if (eb_engine_run(e, &in, 1, out, io.n_outputs, &d) != EB_OK)
            die(what, &d);
    }
    struct eb_engine_profile p;
    eb_engine_profile_get(e, &p);
    const double runs = (double)p.runs;
    fprintf(stderr, "\nprofile %s %s (per run, %llu runs, forward %.3f ms):\n", what, PREC_NAME[pr],
            (unsigned long long)p.runs, p.run_total_ms / runs);
    const char *ops[32];
    double op_ms[32];
    int op_n[32], n_ops = 0;
    for (size_t k = 0; k < p.n_nodes; k++) {
        int i = 0;
        while (i < n_ops && strcmp(ops[i], p.nodes[k].op) != 0)
            i++;
        if (i == n_ops && n_ops < 32)
            ops[n_ops] = p.nodes[k].op, op_ms[n_ops] = 0.0, op_n[n_ops++] = 0;
        if (i < n_ops)
            op_ms[i] += p.nodes[k].total_ms / runs, op_n[i]++;
    }
    for (int i = 0; i < n_ops; i++)
        fprintf(stderr, "  %-12s x%-3d %.3f ms\n", ops[i], op_n[i], op_ms[i]);
    unsigned char *shown = calloc(p.n_nodes + 1, 1);
    for (int t = 0; t < top && shown != NULL; t++) {
        size_t best = p.n_nodes;
        for (size_t k = 0; k < p.n_nodes; k++)
            if (!shown[k] && (best == p.n_nodes || p.nodes[k].total_ms > p.nodes[best].total_ms))
                best = k;
        if (best == p.n_nodes)
            break;
        shown[best] = 1;
        fprintf(stderr, "  #%zu %-10s %-40s %-10s %.4f ms %.2f GFLOP\n", best, p.nodes[best].op,
                p.nodes[best].name, p.nodes[best].fused, p.nodes[best].total_ms / runs,
                (double)p.nodes[best].flops / 1e9);
    }
    free(shown);
    free(x);
    eb_engine_destroy(e);
}

static struct eb_stat_summary summary(double *v, int n)
{
    struct eb_stat_summary st;
    eb_stat_summarize_ms(v, (size_t)n, &st);
    return st;
}

/* The peer's JSON line: "key": number. */
static double json_num(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":", key);
    const char *p = strstr(line, pat);
    return p != NULL ? strtod(p + strlen(pat), NULL) : -1.0;
}

int main(int argc, char **argv)
{
    struct opts o = {.frames = 500,
                     .warmup = 50,
                     .imgsz = 640,
                     .models = "yolov8n,yolo11n",
                     .out = ".",
                     .peer = NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v != NULL && strcmp(a, "--frames") == 0)
            o.frames = parse_int(v, 10, 1000000), i++;
        else if (v != NULL && strcmp(a, "--warmup") == 0)
            o.warmup = parse_int(v, 0, 1000000), i++;
        else if (v != NULL && strcmp(a, "--imgsz") == 0)
            o.imgsz = parse_int(v, 32, 4096), i++;
        else if (v != NULL && strcmp(a, "--models") == 0)
            o.models = v, i++;
        else if (v != NULL && strcmp(a, "--out") == 0)
            o.out = v, i++;
        else if (v != NULL && strcmp(a, "--peer") == 0)
            o.peer = v, i++;
        else if (v != NULL && strcmp(a, "--profile") == 0)
            o.profile = parse_int(v, 0, 1000), i++;
        else if (v != NULL && strcmp(a, "--int8") == 0)
            o.int8 = v, i++;
        else if (strcmp(a, "--no_fp32") == 0)
            o.skip_fp32 = 1;
        else if (strcmp(a, "--compute_only") == 0)
            o.compute_only = 1;
        else {
            fprintf(stderr, "usage: bench_gpu [--frames N] [--warmup N] [--imgsz N] [--models "
                            "yolov8n,yolo11n] [--out DIR] [--peer CMD] [--profile N] "
                            "[--int8 DIR] [--no_fp32] [--compute_only]\n");
            return 2;
        }
    }
    if (o.frames < 10 || o.warmup < 0 || o.profile < 0 || o.imgsz < 32 || o.imgsz % 32 != 0) {
        fprintf(stderr, "bench_gpu: --frames >= 10, --warmup >= 0, --imgsz a multiple of 32\n");
        return 2;
    }
    char why[256];
    if (!eb_engine_cuda_available(why, sizeof(why))) {
        printf("bench_gpu: skipped: %s\n", why);
        return 77;
    }
    uint8_t *frame = make_frame();
    if (frame == NULL)
        return 1;
    printf("bench_gpu: %d frames after %d warm-up, input %dx%d uint8 RGB, batch 1, imgsz %d "
           "(times in ms; p50/p99 of the frames)\n\n",
           o.frames, o.warmup, FRAME_W, FRAME_H, o.imgsz);
    printf("| model | precision | pre | post | GPU | streams | compute p50 | compute p99 | h2d p50 "
           "| d2h p50 | pre p50 | post p50 | e2e p50 | e2e p99 | FPS | boxes |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    char list[256];
    snprintf(list, sizeof(list), "%s", o.models);
    char peer_rows[4096] = "";
    double ours_e2e_fp16[8] = {0};
    char ratios[1024] = "";
    int n_model = 0;
    for (char *tok = list, *next; tok != NULL && n_model < 8; tok = next, n_model++) {
        next = strchr(tok, ',');
        if (next != NULL)
            *next++ = '\0';
        const int v8 = strcmp(tok, "yolov8n") == 0, v11 = strcmp(tok, "yolo11n") == 0;
        if (!v8 && !v11) {
            fprintf(stderr, "bench_gpu: unknown model '%s' (yolov8n, yolo11n)\n", tok);
            return 2;
        }
        struct eb_synth_options so = {.arch = v8 ? EB_SYNTH_YOLOV8 : EB_SYNTH_YOLO11,
                                      .scale = 'n',
                                      .imgsz = o.imgsz,
                                      .num_classes = 80};
        uint8_t *model = NULL;
        size_t len = 0;
        struct eb_diag d = {0};
        if (eb_model_synth(&so, &model, &len, &d) != EB_OK)
            die("synthesize", &d);
        char what[64], path[1024];
        snprintf(what, sizeof(what), "%.40s-%d", tok, o.imgsz);
        snprintf(path, sizeof(path), "%s/%s.onnx", o.out, what);
        FILE *f = fopen(path, "wb");
        if (f == NULL || fwrite(model, 1, len, f) != len || fclose(f) != 0) {
            fprintf(stderr, "bench_gpu: cannot write %s (set --out to a writable folder)\n", path);
            return 1;
        }
        /* the int8 twin, when given */
        uint8_t *q8 = NULL;
        size_t q8_len = 0;
        if (o.int8 != NULL) {
            char qpath[1024];
            snprintf(qpath, sizeof(qpath), "%s/%s.int8.onnx", o.int8, what);
            FILE *qf = fopen(qpath, "rb");
            if (qf != NULL && fseek(qf, 0, SEEK_END) == 0) {
                const long n = ftell(qf);
                rewind(qf);
                q8 = n > 0 ? malloc((size_t)n) : NULL;
                if (q8 == NULL || fread(q8, 1, (size_t)n, qf) != (size_t)n) {
                    fprintf(stderr, "bench_gpu: cannot read %s\n", qpath);
                    return 1;
                }
                q8_len = (size_t)n;
            }
            if (qf != NULL)
                fclose(qf);
            if (q8 == NULL)
                fprintf(stderr, "bench_gpu: no %s: %s runs without int8 rows\n", qpath, what);
        }
        /* per precision: pre cpu/post cpu, pre gpu/post cpu, pre gpu/post gpu (+ dual); fp16
         * also with the frame already in the engine's buffer (pre "gpu-buf"), and that once
         * more with the graph on one stream (lanes off: what the parallel branches are worth);
         * int8 (the twin) pre gpu/post gpu (+ dual) and gpu-buf */
        static const int rows[10][4] = {{0, 0, 0, 1}, {0, 1, 0, 1}, {0, 1, 1, 1}, {1, 0, 0, 1},
                                        {1, 1, 0, 1}, {1, 1, 1, 1}, {1, 2, 1, 1}, {1, 2, 1, 0},
                                        {2, 1, 1, 1}, {2, 2, 1, 1}};
        double fp16_c50 = 0.0;
        for (int row = 0; row < 10; row++) {
            const enum prec pr = (enum prec)rows[row][0];
            const int gpu_pre = rows[row][1], gpu_head = rows[row][2], lanes = rows[row][3];
            const char *pname = PREC_NAME[pr];
            if ((pr == P_INT8 && q8 == NULL) || (pr == P_FP32 && o.skip_fp32) ||
                (o.compute_only && (gpu_pre != 2 || !lanes)))
                continue;
            const uint8_t *mb = pr == P_INT8 ? q8 : model;
            const size_t ml = pr == P_INT8 ? q8_len : len;
            struct slot s;
            if (slot_init(&s, mb, ml, what, pr, gpu_pre, gpu_head, lanes, frame, o.frames, &d) != 0)
                die(what, &d);
            for (int i = 0; i < o.warmup; i++)
                slot_frame(&s, -1);
            slot_loop(&s);
            if (s.failed) {
                fprintf(stderr, "bench_gpu: %s %s: %s\n", what, pname, s.err);
                return 1;
            }
            struct eb_engine_exec_info info;
            eb_engine_exec_info_get(s.e, &info);
            const struct eb_stat_summary c = summary(s.compute, o.frames);
            const struct eb_stat_summary e2e = summary(s.e2e, o.frames);
            printf("| %s | %s | %s | %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | "
                   "%.3f | %.3f | %.0f | %zu |\n",
                   what, pname,
                   gpu_pre == 2 ? "gpu-buf"
                   : gpu_pre    ? "gpu"
                                : "cpu",
                   gpu_head ? "gpu" : "cpu", info.device_name, info.lanes, c.p50, c.p99,
                   summary(s.h2d, o.frames).p50, summary(s.d2h, o.frames).p50,
                   summary(s.pre, o.frames).p50, summary(s.post, o.frames).p50, e2e.p50, e2e.p99,
                   1000.0 * o.frames / s.wall_ms, s.n_boxes);
            fflush(stdout);
            const double single_fps = 1000.0 * o.frames / s.wall_ms;
            if (pr == P_FP16 && gpu_pre == 1 && gpu_head)
                ours_e2e_fp16[n_model] = e2e.p50;
            if (pr == P_FP16 && gpu_pre == 2 && lanes)
                fp16_c50 = c.p50;
            if (pr == P_INT8 && gpu_pre == 2 && fp16_c50 > 0.0) {
                const size_t used = strlen(ratios);
                snprintf(ratios + used, sizeof(ratios) - used,
                         "%s int8 compute p50 %.3f ms / fp16 %.3f ms = %.2fx (%s)\n", what, c.p50,
                         fp16_c50, c.p50 / fp16_c50, info.int8_nodes);
            }
            slot_fini(&s);
            if (gpu_pre != 1 || !gpu_head || o.compute_only)
                continue;
            /* dual: two slots of this model and precision on one GPU */
            struct slot pair[2];
            for (int k = 0; k < 2; k++)
                if (slot_init(&pair[k], mb, ml, what, pr, 1, 1, 1, frame, o.frames, &d) != 0)
                    die(what, &d);
            for (int k = 0; k < 2; k++)
                for (int i = 0; i < o.warmup; i++)
                    slot_frame(&pair[k], -1);
            struct eb_thread th[2];
            const uint64_t t0 = eb_clock_ns();
            for (int k = 0; k < 2; k++)
                if (eb_thread_create(&th[k], slot_loop, &pair[k], &d) != EB_OK)
                    die("thread", &d);
            for (int k = 0; k < 2; k++)
                eb_thread_join(&th[k]);
            const double wall = (double)(eb_clock_ns() - t0) / 1e6;
            const double pair_fps = 2000.0 * o.frames / wall;
            printf(
                "| %s dual | %s | gpu | gpu | %s | %d | %.3f | %.3f | | | | | %.3f | %.3f | %.0f "
                "pair (%.2fx one slot's %.0f) | |\n",
                what, pname, info.device_name, info.lanes, summary(pair[0].compute, o.frames).p50,
                summary(pair[0].compute, o.frames).p99, summary(pair[0].e2e, o.frames).p50,
                summary(pair[0].e2e, o.frames).p99, pair_fps, pair_fps / single_fps, single_fps);
            fflush(stdout);
            for (int k = 0; k < 2; k++)
                slot_fini(&pair[k]);
        }
        for (int pr = o.skip_fp32; pr < 3 && o.profile > 0; pr++)
            if (pr != P_INT8 || q8 != NULL)
                profile(pr == P_INT8 ? q8 : model, pr == P_INT8 ? q8_len : len, what, (enum prec)pr,
                        o.profile);
        free(q8);
        /* the peer, on the same graph, after our rows (never both on the GPU at once) */
        if (o.peer != NULL) {
            char cmd[2048], line[1024] = "";
            snprintf(cmd, sizeof(cmd), "%s --model %s --frames %d --warmup %d", o.peer, path,
                     o.frames, o.warmup);
            FILE *p = popen(cmd, "r");
            char buf[1024];
            while (p != NULL && fgets(buf, sizeof(buf), p) != NULL)
                if (strstr(buf, "\"peer\"") != NULL)
                    snprintf(line, sizeof(line), "%s", buf);
            const int rc = p != NULL ? pclose(p) : -1;
            const double pc = json_num(line, "compute_p50_ms"),
                         pc99 = json_num(line, "compute_p99_ms"), pe = json_num(line, "e2e_p50_ms"),
                         pb = json_num(line, "boxes");
            char row[1024];
            if (rc != 0 || pe <= 0.0)
                snprintf(row, sizeof(row), "| %s | peer failed (exit %d): %.300s | | | | | |\n",
                         what, rc, cmd);
            else
                snprintf(row, sizeof(row),
                         "| %s | PyTorch eager fp16 | %.3f | %.3f | %.3f | %.0f | %.2fx |\n", what,
                         pc, pc99, pe, pb, pe / ours_e2e_fp16[n_model]);
            size_t used = strlen(peer_rows);
            snprintf(peer_rows + used, sizeof(peer_rows) - used, "%s", row);
        }
        free(model);
    }
    if (ratios[0] != '\0')
        printf("\n%s", ratios);
    if (o.peer != NULL) {
        printf(
            "\nPeer (same ONNX graphs, same frame and stages; edgebench fp16 e2e / peer e2e):\n\n");
        printf("| model | peer | compute p50 | compute p99 | e2e p50 | boxes | edgebench fp16 "
               "faster by |\n");
        printf("|---|---|---|---|---|---|---|\n%s", peer_rows);
    }
    free(frame);
    return 0;
}
