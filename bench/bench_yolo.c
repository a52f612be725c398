/*
 * bench_yolo: YOLO pre/post-processing on one thread, each against a peer measured in the same
 * run, printed as a Markdown table.
 *
 *   letterbox 1920x1080 RGB8 -> 640x640 NCHW f32:
 *     fast     eb_letterbox_rgb_to_nchw_f32
 *     ref      eb_letterbox_rgb_to_nchw_f32__ref (scalar reference)
 *     swscale  FFmpeg sws_scale SWS_BILINEAR RGB24 1920x1080 -> 640x360, then pad + /255 + NCHW
 *   decode + NMS over [1,84,8400] (~20 objects, a few hundred anchors above 0.25):
 *     fast     eb_yolo_postprocess (decode, class-aware NMS, unmap)
 *     naive    per-anchor scalar decode + all-pairs IoU matrix + greedy NMS
 *
 * Usage: bench_yolo [reps]   (default 200 repetitions after 20 warm-up runs)
 */
#include <libswscale/swscale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/clock.h"
#include "eb/status.h"
#include "yolo/yolo.h"

#define WARMUP 20

struct stats {
    double p50, p90, mean; /* milliseconds */
    int reps;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static struct stats summarize(double *ms, int n)
{
    struct stats s;
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += ms[i];
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    s.p50 = ms[n / 2];
    s.p90 = ms[(int)(0.9 * (double)(n - 1) + 0.5)];
    s.mean = sum / (double)n;
    s.reps = n;
    return s;
}

static void print_row(const char *task, const char *impl, struct stats s, double target_ms)
{
    if (target_ms > 0.0)
        printf("| %s | %s | %d | %.3f | %.3f | %.3f | %.2f | %s |\n", task, impl, s.reps, s.p50,
               s.p90, s.mean, target_ms, s.p50 <= target_ms ? "pass" : "FAIL");
    else
        printf("| %s | %s | %d | %.3f | %.3f | %.3f | - | - |\n", task, impl, s.reps, s.p50, s.p90,
               s.mean);
}

static uint32_t rng_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return (uint32_t)((x * 2685821657736338717ull) >> 32);
}

static float rng_unit(uint64_t *state)
{
    return (float)(rng_next(state) >> 8) / 16777216.0f;
}

/* ---- letterbox peers ------------------------------------------------------------------- */

struct sws_peer {
    struct SwsContext *ctx;
    uint8_t *resized; /* new_w x new_h RGB24 */
};

/* swscale resize, then the pad + normalise + NCHW step every caller of swscale has to add. */
static void sws_letterbox(struct sws_peer *p, const uint8_t *src, int src_w, int src_h,
                          const struct eb_letterbox *lb, float *dst)
{
    const uint8_t *const in[1] = {src};
    const int in_stride[1] = {src_w * 3};
    uint8_t *const out[1] = {p->resized};
    const int out_stride[1] = {lb->new_w * 3};
    sws_scale(p->ctx, in, in_stride, 0, src_h, out, out_stride);
    const size_t plane = (size_t)lb->dst_w * (size_t)lb->dst_h;
    const float pad = 114.0f / 255.0f, k = 1.0f / 255.0f;
    for (int c = 0; c < 3; c++) {
        float *pl = dst + (size_t)c * plane;
        for (int y = 0; y < lb->dst_h; y++) {
            float *row = pl + (size_t)y * (size_t)lb->dst_w;
            int iy = y - lb->pad_top;
            if (iy < 0 || iy >= lb->new_h) {
                for (int x = 0; x < lb->dst_w; x++)
                    row[x] = pad;
                continue;
            }
            const uint8_t *s = p->resized + (size_t)iy * (size_t)out_stride[0] + c;
            for (int x = 0; x < lb->pad_left; x++)
                row[x] = pad;
            for (int x = 0; x < lb->new_w; x++)
                row[lb->pad_left + x] = (float)s[3 * x] * k;
            for (int x = lb->pad_left + lb->new_w; x < lb->dst_w; x++)
                row[x] = pad;
        }
    }
}

/* ---- decode + NMS peer ------------------------------------------------------------------ */

struct naive_peer {
    struct eb_detection *cand; /* N */
    float *iou;                /* cap x cap */
    uint8_t *dead;
    size_t cap;
};

static int cmp_det_desc(const void *a, const void *b)
{
    const struct eb_detection *x = a, *y = b;
    return (x->score < y->score) - (x->score > y->score);
}

static size_t naive_postprocess(struct naive_peer *p, const float *t, int nc, int n, float conf,
                                float iou, size_t max_det, struct eb_detection *out)
{
    size_t m = 0;
    for (int a = 0; a < n; a++) {
        float best = -1.0f;
        int cls = 0;
        for (int c = 0; c < nc; c++) {
            float v = t[(size_t)(4 + c) * (size_t)n + (size_t)a];
            if (v > best) {
                best = v;
                cls = c;
            }
        }
        if (best < conf)
            continue;
        float cx = t[a], cy = t[n + a], w = t[2 * n + a], h = t[3 * n + a];
        struct eb_detection d = {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, best, cls};
        p->cand[m++] = d;
    }
    qsort(p->cand, m, sizeof *p->cand, cmp_det_desc);
    if (m > p->cap)
        m = p->cap;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < m; j++)
            p->iou[i * p->cap + j] = eb_yolo_iou(&p->cand[i], &p->cand[j]);
    memset(p->dead, 0, m);
    size_t k = 0;
    for (size_t i = 0; i < m && k < max_det; i++) {
        if (p->dead[i])
            continue;
        out[k++] = p->cand[i];
        for (size_t j = i + 1; j < m; j++)
            if (p->cand[j].cls == p->cand[i].cls && p->iou[i * p->cap + j] > iou)
                p->dead[j] = 1;
    }
    return k;
}

/* Synthetic [1, 4+nc, n]: background scores < 0.1, `objects` objects each seen by a cluster of
 * anchors with jittered boxes and scores mostly above 0.25. Returns anchors above 0.25. */
static int make_output(float *t, int nc, int n, int objects, uint64_t seed)
{
    uint64_t st = seed;
    for (int a = 0; a < n; a++) {
        t[a] = rng_unit(&st) * 640.0f;
        t[n + a] = rng_unit(&st) * 640.0f;
        t[2 * n + a] = 5.0f + rng_unit(&st) * 100.0f;
        t[3 * n + a] = 5.0f + rng_unit(&st) * 100.0f;
        for (int c = 0; c < nc; c++) {
            float u = rng_unit(&st);
            t[(size_t)(4 + c) * (size_t)n + (size_t)a] = 0.1f * u * u * u;
        }
    }
    for (int o = 0; o < objects; o++) {
        float cx = 40.0f + rng_unit(&st) * 560.0f, cy = 40.0f + rng_unit(&st) * 560.0f;
        float w = 20.0f + rng_unit(&st) * 150.0f, h = 20.0f + rng_unit(&st) * 150.0f;
        int cls = (int)(rng_next(&st) % (uint32_t)nc);
        int k = 6 + (int)(rng_next(&st) % 14);
        int base = (int)(rng_next(&st) % (uint32_t)(n - k));
        for (int i = 0; i < k; i++) {
            int a = base + i;
            t[a] = cx + (rng_unit(&st) - 0.5f) * 0.1f * w;
            t[n + a] = cy + (rng_unit(&st) - 0.5f) * 0.1f * h;
            t[2 * n + a] = w * (0.9f + 0.2f * rng_unit(&st));
            t[3 * n + a] = h * (0.9f + 0.2f * rng_unit(&st));
            t[(size_t)(4 + cls) * (size_t)n + (size_t)a] = 0.2f + 0.75f * rng_unit(&st);
            /* A confusable second class on some anchors. */
            int c2 = (cls + 1) % nc;
            t[(size_t)(4 + c2) * (size_t)n + (size_t)a] = 0.3f * rng_unit(&st);
        }
    }
    int above = 0;
    for (int a = 0; a < n; a++) {
        float m = 0.0f;
        for (int c = 0; c < nc; c++)
            m = t[(size_t)(4 + c) * (size_t)n + (size_t)a] > m
                    ? t[(size_t)(4 + c) * (size_t)n + (size_t)a]
                    : m;
        above += m > 0.25f;
    }
    return above;
}

int main(int argc, char **argv)
{
    int reps = 200;
    if (argc > 1) {
        char *end = NULL;
        long v = strtol(argv[1], &end, 10);
        if (end == argv[1] || *end != '\0' || v < 1 || v > 100000) {
            fprintf(stderr, "bench_yolo: reps must be an integer in [1, 100000], got '%s'\n",
                    argv[1]);
            return 2;
        }
        reps = (int)v;
    }
    int rc = 1;
    const int sw = 1920, sh = 1080, dw = 640, dh = 640;
    const int nc = 80, n = 8400;
    uint8_t *img = malloc((size_t)sw * (size_t)sh * 3);
    float *lbuf = malloc((size_t)3 * dw * dh * sizeof(float));
    double *ms = malloc((size_t)(reps > 50 ? reps : 50) * sizeof *ms);
    float *out_t = malloc((size_t)(4 + nc) * n * sizeof(float));
    struct sws_peer sp = {NULL, NULL};
    struct naive_peer np = {NULL, NULL, NULL, 0};
    struct eb_yolo_scratch scratch;
    memset(&scratch, 0, sizeof scratch);
    struct eb_detection dets[300], dets_naive[300];
    struct eb_diag diag = {0};

    if (!img || !lbuf || !ms || !out_t)
        goto fail;
    uint64_t st = 42;
    for (int y = 0; y < sh; y++)
        for (int x = 0; x < sw * 3; x++)
            img[(size_t)y * (size_t)sw * 3 + (size_t)x] =
                (uint8_t)((x / 3 + y + (x % 3) * 60) / 4 + (int)(rng_next(&st) % 16));

    struct eb_letterbox lb;
    eb_letterbox_compute(sw, sh, dw, dh, &lb);
    sp.ctx = sws_getContext(sw, sh, AV_PIX_FMT_RGB24, lb.new_w, lb.new_h, AV_PIX_FMT_RGB24,
                            SWS_BILINEAR, NULL, NULL, NULL);
    sp.resized = malloc((size_t)lb.new_w * (size_t)lb.new_h * 3);
    if (!sp.ctx || !sp.resized)
        goto fail;

    printf("## bench_yolo (one thread; %d reps after %d warm-up; ref letterbox: %d reps)\n\n", reps,
           WARMUP, reps < 30 ? reps : 30);
    printf("| task | impl | reps | p50 ms | p90 ms | mean ms | target ms | p50 vs target |\n");
    printf("|---|---|---|---|---|---|---|---|\n");

    const char *lb_task = "letterbox 1920x1080 RGB8 -> 640x640 NCHW f32";
    for (int impl = 0; impl < 3; impl++) {
        int r = impl == 1 ? (reps < 30 ? reps : 30) : reps;
        int w = impl == 1 ? 3 : WARMUP;
        for (int i = -w; i < r; i++) {
            uint64_t t0 = eb_clock_ns();
            if (impl == 0)
                eb_letterbox_rgb_to_nchw_f32(img, sw, sh, (size_t)sw * 3, &lb, 3, lbuf);
            else if (impl == 1)
                eb_letterbox_rgb_to_nchw_f32__ref(img, sw, sh, (size_t)sw * 3, &lb, 3, lbuf);
            else
                sws_letterbox(&sp, img, sw, sh, &lb, lbuf);
            uint64_t t1 = eb_clock_ns();
            if (i >= 0)
                ms[i] = (double)(t1 - t0) / 1e6;
        }
        static const char *const names[3] = {"edgebench fast", "edgebench scalar ref",
                                             "FFmpeg swscale bilinear + pad/normalise"};
        print_row(lb_task, names[impl], summarize(ms, r), impl == 0 ? 1.5 : 0.0);
    }

    int above = make_output(out_t, nc, n, 20, 7);
    struct eb_yolo_layout_info info = {EB_YOLO_LAYOUT_CHANNELS, nc, n};
    if (eb_yolo_scratch_init(&scratch, &info, &diag) != EB_OK)
        goto fail;
    np.cap = 4096;
    np.cand = malloc((size_t)n * sizeof *np.cand);
    np.iou = malloc(np.cap * np.cap * sizeof *np.iou);
    np.dead = malloc(np.cap);
    if (!np.cand || !np.iou || !np.dead)
        goto fail;
    struct eb_yolo_params p = {0.25f, 0.45f, 300, 0};
    struct eb_detections out = {dets, 0, 300};
    struct eb_letterbox ident;
    eb_letterbox_compute(dw, dh, dw, dh, &ident);
    size_t n_naive = 0;
    char task[128];
    (void)snprintf(task, sizeof task, "decode+NMS [1,84,8400], %d anchors > 0.25", above);
    for (int impl = 0; impl < 2; impl++) {
        for (int i = -WARMUP; i < reps; i++) {
            uint64_t t0 = eb_clock_ns();
            if (impl == 0)
                eb_yolo_postprocess(&info, out_t, &ident, &p, &scratch, &out);
            else
                n_naive = naive_postprocess(&np, out_t, nc, n, p.conf, p.iou, 300, dets_naive);
            uint64_t t1 = eb_clock_ns();
            if (i >= 0)
                ms[i] = (double)(t1 - t0) / 1e6;
        }
        print_row(task, impl == 0 ? "edgebench fast" : "naive (scalar decode + all-pairs NMS)",
                  summarize(ms, reps), impl == 0 ? 0.3 : 0.0);
    }
    printf("\ndetections: fast %zu, naive %zu\n", out.count, n_naive);
    rc = 0;

fail:
    if (rc != 0)
        fprintf(stderr, "bench_yolo: setup failed%s%s\n", diag.msg[0] ? ": " : "", diag.msg);
    eb_yolo_scratch_fini(&scratch);
    free(np.cand);
    free(np.iou);
    free(np.dead);
    sws_freeContext(sp.ctx);
    free(sp.resized);
    free(img);
    free(lbuf);
    free(ms);
    free(out_t);
    return rc;
}
