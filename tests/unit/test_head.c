/*
 * Unit tests for src/yolo/head.c: each family's decoder against a hand-built output with known
 * boxes at chosen cells, levels and anchors (the expected boxes worked out by hand from the
 * family's decode rule, in model-input pixels), the strict thresholds, NMS and set-prediction
 * post-processing, the output-shape check and the --head names.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb/status.h"
#include "eb_test.h"
#include "yolo/head.h"

/* ---- helpers ---------------------------------------------------------------------------- */

/* Thresholds, max_det; class-aware NMS unless a case says otherwise. */
#define PARAMS(conf, iou, max_det) ((struct eb_yolo_params){(conf), (iou), (max_det), 0})

static float logit(float p)
{
    return logf(p / (1.0f - p));
}

static float *zeros(size_t n)
{
    float *t = calloc(n, sizeof *t);
    ASSERT_TRUE(t != NULL);
    return t;
}

static void fill(float *t, size_t n, float v)
{
    for (size_t i = 0; i < n; i++)
        t[i] = v;
}

static void init_scratch(struct eb_yolo_scratch *s, const struct eb_head *h)
{
    struct eb_diag diag = {0};
    ASSERT_OK(eb_head_scratch_init(s, h, &diag));
}

/* One detection against its hand-computed box (corner form), score and class, to 1e-4. */
static void expect_det(const struct eb_detection *d, const char *what, double x1, double y1,
                       double x2, double y2, double score, int cls)
{
    const double tol = 1e-4;
    if (!(fabs(d->x1 - x1) <= tol && fabs(d->y1 - y1) <= tol && fabs(d->x2 - x2) <= tol &&
          fabs(d->y2 - y2) <= tol && fabs(d->score - score) <= tol && d->cls == cls))
        EB_FAIL("%s: got [%.6f %.6f %.6f %.6f] score %.6f cls %d, want [%.6f %.6f %.6f %.6f] "
                "score %.6f cls %d",
                what, (double)d->x1, (double)d->y1, (double)d->x2, (double)d->y2, (double)d->score,
                d->cls, x1, y1, x2, y2, score, cls);
}

/* A head of `kind` reading outputs 0..n_outputs-1 in order; the family sets the rest. */
static struct eb_head new_head(enum eb_head_kind kind, int nc, int in_w, int in_h, size_t num_boxes,
                               int n_outputs)
{
    struct eb_head h;
    memset(&h, 0, sizeof h);
    h.kind = kind;
    h.num_classes = nc;
    h.in_w = in_w;
    h.in_h = in_h;
    h.num_boxes = num_boxes;
    h.n_outputs = n_outputs;
    for (int i = 0; i < n_outputs; i++)
        h.out_index[i] = i;
    return h;
}

/* Square levels: grid = input / stride. */
static void set_levels(struct eb_head *h, int n, const int strides[])
{
    h->n_levels = n;
    for (int l = 0; l < n; l++) {
        h->strides[l] = strides[l];
        h->grid_w[l] = h->in_w / strides[l];
        h->grid_h[l] = h->in_h / strides[l];
    }
}

/* yolox_nano 416: strides 8/16/32, 52x52 + 26x26 + 13x13 = 3549 cells, 80 classes. */
static struct eb_head yolox_head(void)
{
    struct eb_head h = new_head(EB_HEAD_YOLOX, 80, 416, 416, 3549, 1);
    set_levels(&h, 3, (const int[]){8, 16, 32});
    return h;
}

/* v5lite_e 320: 3 anchors x (40x40 + 20x20 + 10x10) = 6300 rows. */
static struct eb_head v5lite_head(void)
{
    static const float anchors[3][3][2] = {{{10, 13}, {16, 30}, {33, 23}},
                                           {{30, 61}, {62, 45}, {59, 119}},
                                           {{116, 90}, {156, 198}, {373, 326}}};
    struct eb_head h = new_head(EB_HEAD_V5_RAW, 80, 320, 320, 6300, 1);
    set_levels(&h, 3, (const int[]){8, 16, 32});
    h.n_anchors = 3;
    memcpy(h.anchors, anchors, sizeof anchors);
    return h;
}

/* nanodet_m 416: class scores at outputs 0..2, box bins at 3..5. */
static struct eb_head nanodet_head(void)
{
    struct eb_head h = new_head(EB_HEAD_NANODET, 80, 416, 416, 3549, 6);
    set_levels(&h, 3, (const int[]){8, 16, 32});
    h.reg_max = 7;
    return h;
}

/* FastestDet 352: [1,85,22,22], class-agnostic NMS upstream. */
static struct eb_head fastestdet_head(void)
{
    struct eb_head h = new_head(EB_HEAD_FASTESTDET, 80, 352, 352, 484, 1);
    set_levels(&h, 1, (const int[]){16});
    h.nms_agnostic = 1;
    return h;
}

/* Yolo-FastestV2 352: [1,22,22,95] (stride 16) and [1,11,11,95] (stride 32). */
static struct eb_head fastestv2_head(void)
{
    static const float anchors[2][3][2] = {
        {{12.64f, 19.39f}, {37.88f, 51.48f}, {55.71f, 138.31f}},
        {{126.91f, 78.23f}, {131.57f, 214.55f}, {279.92f, 258.87f}}};
    struct eb_head h = new_head(EB_HEAD_FASTESTV2, 80, 352, 352, 3 * (22 * 22 + 11 * 11), 2);
    set_levels(&h, 2, (const int[]){16, 32});
    h.n_anchors = 3;
    memcpy(h.anchors, anchors, sizeof anchors);
    return h;
}

static struct eb_head detr_head(int q, int nc, int softmax)
{
    struct eb_head h = new_head(EB_HEAD_DETR, nc, 640, 480, (size_t)q, 2);
    h.detr_softmax = softmax;
    return h;
}

/* ---- names ------------------------------------------------------------------------------- */

EB_TEST(names_round_trip)
{
    const char *want[EB_HEAD_COUNT] = {"unknown", "v8",         "v5",        "v5-raw",  "yolox",
                                       "nanodet", "fastestdet", "fastestv2", "end2end", "detr"};
    for (int k = 0; k < EB_HEAD_COUNT; k++) {
        ASSERT_STREQ(eb_head_name((enum eb_head_kind)k), want[k]);
        ASSERT_EQ_INT(eb_head_from_name(want[k]), k);
    }
    ASSERT_STREQ(eb_head_name(EB_HEAD_COUNT), "unknown");
    ASSERT_STREQ(eb_head_name((enum eb_head_kind) - 1), "unknown");
    ASSERT_EQ_INT(eb_head_from_name("YOLOX"), EB_HEAD_UNKNOWN); /* names are exact */
    ASSERT_EQ_INT(eb_head_from_name("v5raw"), EB_HEAD_UNKNOWN);
    ASSERT_EQ_INT(eb_head_from_name(""), EB_HEAD_UNKNOWN);
    ASSERT_EQ_INT(eb_head_from_name(NULL), EB_HEAD_UNKNOWN);
}

EB_TEST(set_prediction_kinds)
{
    for (int k = 0; k < EB_HEAD_COUNT; k++)
        ASSERT_EQ_INT(eb_head_is_set_prediction((enum eb_head_kind)k),
                      k == EB_HEAD_END2END || k == EB_HEAD_DETR);
}

EB_TEST(scratch_sized_by_num_boxes)
{
    struct eb_head h = v5lite_head();
    struct eb_yolo_scratch s;
    init_scratch(&s, &h);
    ASSERT_EQ_INT(s.capacity, 6300);
    eb_yolo_scratch_fini(&s);
    struct eb_diag diag = {0};
    h.num_boxes = 0;
    ASSERT_EQ_INT(eb_head_scratch_init(&s, &h, &diag), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "v5-raw");
    eb_yolo_scratch_fini(&s); /* zeroed on failure */
    eb_diag_clear(&diag);
    h = v5lite_head();
    h.kind = EB_HEAD_UNKNOWN;
    ASSERT_EQ_INT(eb_head_scratch_init(&s, &h, &diag), EB_ERR_INVALID_ARG);
    ASSERT_EQ_INT(s.capacity, 0);
}

/* ---- YOLOX ------------------------------------------------------------------------------- */

/* Row a of level l: a = y*W + x after the rows of the earlier levels (52², 26²). */
static float *yolox_row(float *t, int level, int x, int y)
{
    static const int start[3] = {0, 2704, 2704 + 676}, w[3] = {52, 26, 13};
    return t + (size_t)(start[level] + y * w[level] + x) * 85;
}

/* Two boxes: level 1 (stride 16) cell (5,7) and level 2 (stride 32) cell (12,0); `raw` writes
 * objectness and classes as logits (the decoder applies the sigmoid). */
static float *yolox_tensor(int raw)
{
    float *t = zeros(3549 * 85);
    const float bg = raw ? -20.0f : 0.0f;
    for (size_t a = 0; a < 3549; a++)
        fill(t + a * 85 + 4, 81, bg);
#define P(v) (raw ? logit(v) : (v))
    float *r = yolox_row(t, 1, 5, 7);
    r[0] = 0.25f;      /* cx = (0.25 + 5) * 16 = 84 */
    r[1] = 0.5f;       /* cy = (0.5 + 7) * 16 = 120 */
    r[2] = logf(2.0f); /* w = 2 * 16 = 32 */
    r[3] = 0.0f;       /* h = 1 * 16 = 16 */
    r[4] = P(0.8f);
    r[5 + 3] = P(0.5f);
    r[5 + 17] = P(0.9f); /* score 0.72, class 17 */
    r = yolox_row(t, 2, 12, 0);
    r[0] = 0.5f;       /* cx = 12.5 * 32 = 400 */
    r[1] = 0.5f;       /* cy = 0.5 * 32 = 16 */
    r[2] = logf(4.0f); /* w = 128 */
    r[3] = logf(3.0f); /* h = 96 */
    r[4] = P(0.95f);
    r[5 + 0] = P(0.5f);
    r[5 + 79] = P(0.5f); /* tie: first class; score 0.475 */
    r = yolox_row(t, 0, 1, 1);
    r[4] = P(0.2f); /* objectness alone below conf: skipped */
    r[5 + 1] = P(0.99f);
    r = yolox_row(t, 0, 20, 1);
    r[4] = P(0.5f);
    r[5 + 2] = P(0.5f); /* 0.25 exactly: not > conf */
#undef P
    return t;
}

/* Decodes the one output `t` of `shape` (rank 3, borrowed) with `h` at conf 0.25 into a fresh
 * *s (o_out: that output, for later calls); returns the candidate count. */
static size_t decode_one(const struct eb_head *h, const float *t, const int64_t shape[3],
                         struct eb_head_output *o_out, struct eb_yolo_scratch *s)
{
    *o_out = (struct eb_head_output){t, shape, 3};
    struct eb_diag diag = {0};
    ASSERT_OK(eb_head_check_outputs(h, o_out, 1, &diag));
    init_scratch(s, h);
    struct eb_yolo_params p = PARAMS(0.25f, 0.45f, 300);
    return eb_head_decode(h, o_out, 1, &p, s);
}

static void check_yolox(int raw)
{
    struct eb_head h = yolox_head();
    h.sigmoid = raw;
    float *t = yolox_tensor(raw);
    const int64_t shape[] = {1, 3549, 85};
    struct eb_head_output o;
    struct eb_yolo_scratch s;
    ASSERT_EQ_INT(decode_one(&h, t, shape, &o, &s), 2);
    expect_det(&s.cand[0], "yolox s16 (5,7)", 68, 112, 100, 128, 0.72, 17);
    expect_det(&s.cand[1], "yolox s32 (12,0)", 336, -32, 464, 64, 0.475, 0);

    /* Top-left letterbox of an 832x624 frame: scale 0.5, no pad; boxes double, clipped. */
    struct eb_letterbox lb;
    eb_letterbox_compute_mode(832, 624, 416, 416, EB_RESIZE_LETTERBOX_TOPLEFT, &lb);
    struct eb_detection items[8];
    struct eb_detections out = {items, 0, 8};
    struct eb_yolo_params p = PARAMS(0.25f, 0.45f, 300);
    eb_head_postprocess(&h, &o, 1, &lb, &p, &s, &out);
    ASSERT_EQ_INT(out.count, 2);
    expect_det(&out.items[0], "yolox frame 0", 136, 224, 200, 256, 0.72, 17);
    expect_det(&out.items[1], "yolox frame 1", 672, 0, 832, 128, 0.475, 0);
    eb_yolo_scratch_fini(&s);
    free(t);
}

EB_TEST(yolox_grid_and_stride)
{
    check_yolox(0);
}

EB_TEST(yolox_sigmoid_applied_when_set)
{
    check_yolox(1);
}

/* ---- YOLOv5-Lite (v5-raw) ---------------------------------------------------------------- */

/* Row of level l, anchor a, cell (x,y): levels of 3 x 1600, 3 x 400 rows; per anchor W*H. */
static float *v5_row(float *t, int level, int anchor, int x, int y)
{
    static const int start[3] = {0, 4800, 6000}, w[3] = {40, 20, 10};
    return t + (size_t)(start[level] + anchor * w[level] * w[level] + y * w[level] + x) * 85;
}

static void v5_set(float *r, const float c[5], int cls, float pc, int raw)
{
    for (int k = 0; k < 5; k++)
        r[k] = raw ? logit(c[k]) : c[k];
    r[5 + cls] = raw ? logit(pc) : pc;
}

static void check_v5lite(int raw)
{
    struct eb_head h = v5lite_head();
    h.sigmoid = raw;
    float *t = zeros(6300 * 85);
    if (raw)
        fill(t, 6300 * 85, -20.0f);
    /* Level 1 (stride 16), anchor 2 (59,119), cell (3,4): cx = (2*0.5 - 0.5 + 3) * 16 = 56,
     * cy = (1.5 - 0.5 + 4) * 16 = 80, w = (2*0.5)^2 * 59 = 59, h = (2*0.25)^2 * 119 = 29.75. */
    v5_set(v5_row(t, 1, 2, 3, 4), (const float[]){0.5f, 0.75f, 0.5f, 0.25f, 0.9f}, 3, 0.8f, raw);
    /* Level 0 (stride 8), anchor 0 (10,13), cell (0,0): cx = cy = 0, w = 4*10, h = 4*13. */
    v5_set(v5_row(t, 0, 0, 0, 0), (const float[]){0.25f, 0.25f, 0.95f, 0.95f, 0.95f}, 0, 0.6f, raw);
    /* Level 0, anchor 1 (16,30), cell (39,39): cx = cy = 39.5 * 8, w = 16, h = 30. */
    v5_set(v5_row(t, 0, 1, 39, 39), (const float[]){0.5f, 0.5f, 0.5f, 0.5f, 0.5f}, 79, 0.7f, raw);
    /* Objectness below conf (a confident class does not rescue it). */
    v5_set(v5_row(t, 2, 0, 1, 1), (const float[]){0.5f, 0.5f, 0.5f, 0.5f, 0.2f}, 5, 0.99f, raw);
    const int64_t shape[] = {1, 6300, 85};
    struct eb_head_output o;
    struct eb_yolo_scratch s;
    ASSERT_EQ_INT(decode_one(&h, t, shape, &o, &s), 3);
    /* Output order: level 0 anchor 0, level 0 anchor 1, level 1 anchor 2. */
    const float w0 = 1.9f * 1.9f * 10.0f, h0 = 1.9f * 1.9f * 13.0f;
    expect_det(&s.cand[0], "v5 s8 a0 (0,0)", -w0 / 2, -h0 / 2, w0 / 2, h0 / 2, 0.95 * 0.6, 0);
    expect_det(&s.cand[1], "v5 s8 a1 (39,39)", 316 - 8, 316 - 15, 316 + 8, 316 + 15, 0.35, 79);
    expect_det(&s.cand[2], "v5 s16 a2 (3,4)", 56 - 29.5, 80 - 14.875, 56 + 29.5, 80 + 14.875, 0.72,
               3);
    eb_yolo_scratch_fini(&s);
    free(t);
}

EB_TEST(v5raw_anchors_levels_and_order)
{
    check_v5lite(0);
}

EB_TEST(v5raw_sigmoid_applied_when_set)
{
    check_v5lite(1);
}

/* ---- NanoDet ------------------------------------------------------------------------------- */

/* Side bins: `mass` (probabilities, 0 = none) as logits, empty bins far below. */
static void nanodet_side(float *bins, const float mass[8])
{
    for (int i = 0; i < 8; i++)
        bins[i] = mass[i] > 0.0f ? logf(mass[i]) : -1e4f;
}

EB_TEST(nanodet_bins_levels_and_points)
{
    struct eb_head h = nanodet_head();
    const size_t cells[3] = {2704, 676, 169};
    float *cls[3], *box[3];
    struct eb_head_output o[6];
    int64_t shapes[6][3];
    for (int l = 0; l < 3; l++) {
        cls[l] = zeros(cells[l] * 80);
        box[l] = zeros(cells[l] * 32); /* all zero: uniform bins, distance 3.5 * stride */
        int64_t *a = shapes[l], *b = shapes[3 + l];
        a[0] = b[0] = 1;
        a[1] = b[1] = (int64_t)cells[l];
        a[2] = 80;
        b[2] = 32;
        o[l] = (struct eb_head_output){cls[l], a, 3};
        o[3 + l] = (struct eb_head_output){box[l], b, 3};
    }
    /* Level 2 (stride 32) cell (4,6) = 82: point (4.5*32, 6.5*32) = (144, 208). l uniform:
     * 3.5*32 = 112; t 0.25/0.75 on bins 0/1: 24; r bin 7: 224; b bins 2 and 6 half each: 128. */
    float *b = box[2] + 82 * 32;
    nanodet_side(b + 8, (const float[]){0.25f, 0.75f, 0, 0, 0, 0, 0, 0});
    nanodet_side(b + 16, (const float[]){0, 0, 0, 0, 0, 0, 0, 1});
    nanodet_side(b + 24, (const float[]){0, 0, 0.5f, 0, 0, 0, 0.5f, 0});
    cls[2][82 * 80 + 5] = 0.6f;
    cls[2][82 * 80 + 6] = 0.3f;
    /* Level 0 (stride 8) cell (51,0): point (412, 4), every side bin 1: 8 px. */
    for (int side = 0; side < 4; side++)
        nanodet_side(box[0] + 51 * 32 + side * 8, (const float[]){0, 1, 0, 0, 0, 0, 0, 0});
    cls[0][51 * 80 + 79] = 0.4f;
    /* Level 1 cell 0 exactly at conf: dropped; its box bins are never read. */
    cls[1][0] = 0.25f;
    struct eb_yolo_scratch s;
    init_scratch(&s, &h);
    struct eb_yolo_params p = PARAMS(0.25f, 0.6f, 300);
    size_t n = eb_head_decode(&h, o, 6, &p, &s);
    ASSERT_EQ_INT(n, 2);
    expect_det(&s.cand[0], "nanodet s8 (51,0)", 404, -4, 420, 12, 0.4, 79);
    expect_det(&s.cand[1], "nanodet s32 (4,6)", 144 - 112, 208 - 24, 144 + 224, 208 + 128, 0.6, 5);

    /* The outputs in another model order: out_index picks them. */
    struct eb_head_output shuffled[6] = {o[3], o[4], o[5], o[0], o[1], o[2]};
    const int idx[6] = {3, 4, 5, 0, 1, 2};
    memcpy(h.out_index, idx, sizeof idx);
    struct eb_diag diag = {0};
    ASSERT_OK(eb_head_check_outputs(&h, shuffled, 6, &diag));
    ASSERT_EQ_INT(eb_head_decode(&h, shuffled, 6, &p, &s), 2);
    expect_det(&s.cand[1], "nanodet shuffled", 32, 184, 368, 336, 0.6, 5);
    eb_yolo_scratch_fini(&s);
    for (int l = 0; l < 3; l++) {
        free(cls[l]);
        free(box[l]);
    }
}

/* ---- FastestDet ---------------------------------------------------------------------------- */

/* Channel c of cell (x,y) in [1,85,22,22]. */
static float *fdet_at(float *t, int c, int x, int y)
{
    return t + (size_t)c * 484 + (size_t)y * 22 + (size_t)x;
}

/* Cells (10,5) class 7 and (11,5) class 9 (the same box shifted 8 px, IoU 168/184). */
static float *fastestdet_tensor(void)
{
    float *t = zeros(85 * 484);
    *fdet_at(t, 0, 10, 5) = 0.5f;
    *fdet_at(t, 1, 10, 5) = atanhf(0.5f);      /* cx = (10 + 0.5) / 22 * 352 = 168 */
    *fdet_at(t, 2, 10, 5) = 0.0f;              /* cy = 5 / 22 * 352 = 80 */
    *fdet_at(t, 3, 10, 5) = 0.0f;              /* w = 0.5 * 352 = 176 */
    *fdet_at(t, 4, 10, 5) = logf(1.0f / 3.0f); /* h = 0.25 * 352 = 88 */
    *fdet_at(t, 5 + 7, 10, 5) = 0.8f;
    *fdet_at(t, 0, 11, 5) = 0.5f;
    *fdet_at(t, 4, 11, 5) = logf(1.0f / 3.0f); /* cx = 11 / 22 * 352 = 176 */
    *fdet_at(t, 5 + 9, 11, 5) = 0.7f;
    /* obj^0.6 = 0.38 < conf 0.5: skipped even with a certain class. */
    *fdet_at(t, 0, 0, 0) = 0.2f;
    *fdet_at(t, 5 + 1, 0, 0) = 1.0f;
    return t;
}

EB_TEST(fastestdet_score_and_box)
{
    struct eb_head h = fastestdet_head();
    float *t = fastestdet_tensor();
    const int64_t shape[] = {1, 85, 22, 22};
    struct eb_head_output o = {t, shape, 4};
    struct eb_yolo_scratch s;
    init_scratch(&s, &h);
    struct eb_yolo_params p = PARAMS(0.5f, 0.45f, 300);
    ASSERT_EQ_INT(eb_head_decode(&h, &o, 1, &p, &s), 2);
    const double sa = pow(0.5, 0.6) * pow(0.8, 0.4), sb = pow(0.5, 0.6) * pow(0.7, 0.4);
    expect_det(&s.cand[0], "fastestdet (10,5)", 80, 36, 256, 124, sa, 7);
    expect_det(&s.cand[1], "fastestdet (11,5)", 88, 36, 264, 124, sb, 9);
    /* Strict: with conf at the first box's score exactly, neither box is kept. */
    p.conf = s.cand[0].score;
    ASSERT_EQ_INT(eb_head_decode(&h, &o, 1, &p, &s), 0);

    /* Stretch of a 704x176 frame: x / 0.5, y / 2. Agnostic NMS (FastestDet upstream) keeps only
     * the better of the two overlapping boxes although their classes differ. */
    p.conf = 0.5f;
    struct eb_letterbox lb;
    eb_letterbox_compute_mode(704, 176, 352, 352, EB_RESIZE_STRETCH, &lb);
    struct eb_detection items[4];
    struct eb_detections out = {items, 0, 4};
    eb_head_postprocess(&h, &o, 1, &lb, &p, &s, &out);
    ASSERT_EQ_INT(out.count, 1);
    expect_det(&out.items[0], "fastestdet frame", 160, 18, 512, 62, sa, 7);
    /* Class-aware when the head does not ask otherwise; p->class_agnostic still applies. */
    h.nms_agnostic = 0;
    eb_head_postprocess(&h, &o, 1, &lb, &p, &s, &out);
    ASSERT_EQ_INT(out.count, 2);
    ASSERT_EQ_INT(out.items[1].cls, 9);
    p.class_agnostic = 1;
    eb_head_postprocess(&h, &o, 1, &lb, &p, &s, &out);
    ASSERT_EQ_INT(out.count, 1);
    eb_yolo_scratch_fini(&s);
    free(t);
}

/* ---- Yolo-FastestV2 ------------------------------------------------------------------------ */

EB_TEST(fastestv2_two_levels_shared_classes)
{
    struct eb_head h = fastestv2_head();
    float *t0 = zeros(22 * 22 * 95), *t1 = zeros(11 * 11 * 95);
    /* Level 1 (stride 32) cell (2,3), anchor 1 (131.57, 214.55): t = (0.5, 0.25, 0.5, 0.75):
     * cx = (1 - 0.5 + 2) * 32 = 80, cy = (0.5 - 0.5 + 3) * 32 = 96, w = 131.57,
     * h = 1.5^2 * 214.55 = 482.7375. */
    float *c = t1 + (3 * 11 + 2) * 95;
    c[4] = 0.5f;
    c[5] = 0.25f;
    c[6] = 0.5f;
    c[7] = 0.75f;
    c[12] = 0.1f;
    c[13] = 0.9f;
    c[15 + 7] = 0.5f; /* score 0.45 */
    /* Level 0 (stride 16) cell (21,21): anchor 0 (12.64, 19.39) t = 0.5: cx = cy = 21.5 * 16 =
     * 344, w = 12.64, h = 19.39; anchor 2 (55.71, 138.31) t = (0.75, 0.25, 0.25, 1): cx =
     * (1.5 - 0.5 + 21) * 16 = 352, cy = 21 * 16 = 336, w = 0.25 * 55.71, h = 4 * 138.31. */
    c = t0 + (21 * 22 + 21) * 95;
    c[0] = c[1] = c[2] = c[3] = 0.5f;
    c[8] = 0.75f;
    c[9] = 0.25f;
    c[10] = 0.25f;
    c[11] = 1.0f;
    c[12] = 0.8f;
    c[13] = 0.2f;
    c[14] = 0.6f;
    c[15 + 2] = 0.7f; /* shared: 0.56 for anchor 0, 0.42 for anchor 2 */
    const int64_t s0[] = {1, 22, 22, 95}, s1[] = {1, 11, 11, 95};
    struct eb_head_output o[2] = {{t0, s0, 4}, {t1, s1, 4}};
    struct eb_yolo_scratch s;
    init_scratch(&s, &h);
    struct eb_yolo_params p = PARAMS(0.3f, 0.4f, 300);
    ASSERT_EQ_INT(eb_head_decode(&h, o, 2, &p, &s), 3);
    expect_det(&s.cand[0], "fastestv2 s16 a0", 344 - 6.32, 344 - 9.695, 344 + 6.32, 344 + 9.695,
               0.56, 2);
    expect_det(&s.cand[1], "fastestv2 s16 a2", 352 - 6.963750, 336 - 276.62, 352 + 6.963750,
               336 + 276.62, 0.42, 2);
    expect_det(&s.cand[2], "fastestv2 s32 a1", 80 - 65.785, 96 - 241.36875, 80 + 65.785,
               96 + 241.36875, 0.45, 7);
    /* Strict: anchor 2's 0.42 at conf 0.42 goes (0.6f * 0.7f rounds to 0.42f). */
    p.conf = 0.6f * 0.7f;
    ASSERT_EQ_INT(eb_head_decode(&h, o, 2, &p, &s), 2);
    eb_yolo_scratch_fini(&s);
    free(t0);
    free(t1);
}

/* ---- V8, V5 and END2END: eb_yolo_* unchanged ------------------------------------------------ */

static void expect_same(const struct eb_detections *a, const struct eb_detections *b)
{
    ASSERT_EQ_INT(a->count, b->count);
    ASSERT_TRUE(a->count == 0 || memcmp(a->items, b->items, a->count * sizeof *a->items) == 0);
}

EB_TEST(end2end_unchanged)
{
    const float t[4 * 6] = {
        10, 20, 110, 220, 0.9f, 2, 20,  30,  120, 230, 0.8f, 2,
        0,  0,  5,   5,   0.1f, 0, 100, 240, 300, 400, 0.5f, 7,
    };
    struct eb_head h = new_head(EB_HEAD_END2END, 0, 640, 640, 4, 0); /* n_outputs 0: one */
    h.nms_agnostic = 1; /* no NMS for a set prediction, whatever the flags */
    const int64_t shape[] = {1, 4, 6};
    struct eb_head_output o = {t, shape, 3};
    struct eb_diag diag = {0};
    ASSERT_OK(eb_head_check_outputs(&h, &o, 1, &diag));
    struct eb_yolo_scratch s;
    init_scratch(&s, &h);
    struct eb_yolo_layout_info info = {EB_YOLO_LAYOUT_END2END, 0, 4};
    struct eb_letterbox lb;
    eb_letterbox_compute(1280, 960, 640, 640, &lb);
    struct eb_detection a_items[8], b_items[8];
    struct eb_detections a = {a_items, 0, 8}, b = {b_items, 0, 8};
    for (int max_det = 1; max_det <= 4; max_det++) {
        struct eb_yolo_params p = PARAMS(0.25f, 0.45f, max_det);
        eb_head_postprocess(&h, &o, 1, &lb, &p, &s, &a);
        eb_yolo_postprocess(&info, t, &lb, &p, &s, &b);
        expect_same(&a, &b);
        ASSERT_EQ_INT(a.count, max_det < 3 ? max_det : 3);
    }
    ASSERT_EQ_INT(a.items[2].cls, 7); /* output order kept: not sorted by score */
    eb_yolo_scratch_fini(&s);
}

EB_TEST(v8_and_v5_unchanged)
{
    /* v8 [1,6,20]: a box, a weaker same-class duplicate and an other-class duplicate. */
    enum { NC = 2, N = 20 };
    float t[(4 + NC) * N] = {0};
    const float box[3][4] = {{320, 320, 60, 30}, {322, 321, 60, 30}, {322, 321, 60, 30}};
    const int at[3] = {3, 7, 9}, cls[3] = {1, 1, 0};
    const float sc[3] = {0.8f, 0.7f, 0.6f};
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 4; k++)
            t[k * N + at[i]] = box[i][k];
        t[(4 + cls[i]) * N + at[i]] = sc[i];
    }
    struct eb_head h = new_head(EB_HEAD_V8, NC, 640, 640, N, 1);
    const int64_t shape[] = {1, 4 + NC, N};
    struct eb_head_output o = {t, shape, 3};
    struct eb_yolo_scratch s;
    init_scratch(&s, &h);
    struct eb_yolo_layout_info info = {EB_YOLO_LAYOUT_CHANNELS, NC, N};
    struct eb_yolo_params p = PARAMS(0.25f, 0.45f, 300);
    struct eb_letterbox lb;
    eb_letterbox_compute(1920, 1080, 640, 640, &lb);
    struct eb_detection a_items[4], b_items[4];
    struct eb_detections a = {a_items, 0, 4}, b = {b_items, 0, 4};
    eb_head_postprocess(&h, &o, 1, &lb, &p, &s, &a);
    eb_yolo_postprocess(&info, t, &lb, &p, &s, &b);
    expect_same(&a, &b);
    ASSERT_EQ_INT(a.count, 2);
    h.nms_agnostic = 1; /* the other-class duplicate goes too */
    eb_head_postprocess(&h, &o, 1, &lb, &p, &s, &a);
    ASSERT_EQ_INT(a.count, 1);
    ASSERT_NEAR(a.items[0].score, 0.8f, 0);
    eb_yolo_scratch_fini(&s);

    /* v5 [1,4,7] rows (in-graph decode): the same candidates as eb_yolo_decode. */
    const float r[4 * 7] = {
        100, 100, 50, 20, 0.8f, 0.5f, 0.9f, 50, 50, 10, 10, 0.2f, 1.0f, 1.0f,
        60,  60,  10, 10, 0.9f, 0.2f, 0.1f, 20, 30, 4,  6,  1.0f, 0.6f, 0.6f,
    };
    h.kind = EB_HEAD_V5;
    h.num_boxes = 4;
    h.nms_agnostic = 0;
    const int64_t rshape[] = {1, 4, 7};
    o = (struct eb_head_output){r, rshape, 3};
    init_scratch(&s, &h);
    struct eb_yolo_layout_info rinfo = {EB_YOLO_LAYOUT_ROWS_OBJ, NC, 4};
    ASSERT_EQ_INT(eb_head_decode(&h, &o, 1, &p, &s), 2);
    struct eb_detection got[2];
    memcpy(got, s.cand, sizeof got);
    ASSERT_EQ_INT(eb_yolo_decode(&rinfo, r, &p, &s), 2);
    ASSERT_TRUE(memcmp(got, s.cand, sizeof got) == 0);
    expect_det(&got[0], "v5 row 0", 75, 90, 125, 110, 0.72, 1);
    eb_yolo_scratch_fini(&s);
}

/* ---- DETR ---------------------------------------------------------------------------------- */

/* DETR's two outputs of 4 queries (logits of shape `ls`, boxes [1,4,4]) into o[], checked
 * against the head; scratch for it in *s. */
static void detr_outputs(const struct eb_head *h, const float *logits, const int64_t *ls,
                         const float *boxes, struct eb_head_output o[2], struct eb_yolo_scratch *s)
{
    static const int64_t bs[] = {1, 4, 4};
    o[0] = (struct eb_head_output){logits, ls, 3};
    o[1] = (struct eb_head_output){boxes, bs, 3};
    struct eb_diag diag = {0};
    ASSERT_OK(eb_head_check_outputs(h, o, 2, &diag));
    init_scratch(s, h);
}

EB_TEST(detr_softmax_no_object_never_reported)
{
    /* 4 queries, 3 classes + no-object. */
    struct eb_head h = detr_head(4, 3, 1);
    const float ln2 = logf(2), ln4 = logf(4), ln6 = logf(6), ln97 = logf(97);
    const float logits[4 * 4] = {
        ln2, 0, 0,   ln4,  /* probs 2,1,1,4 / 8: class 0 at 0.25 (no-object 0.5 is not a class) */
        0,   0, ln6, 0,    /* 1,1,6,1 / 9: class 2 at 2/3 */
        0,   0, ln6, 0,    /* the same score and class: kept after it (query order) */
        0,   0, 0,   ln97, /* 0.01 each: below conf */
    };
    const float boxes[4 * 4] = {
        0.5f,  0.5f,  0.25f, 0.5f, /* (320,240) 160x240 */
        0.25f, 0.75f, 0.1f,  0.2f, /* (160,360) 64x96 */
        0.75f, 0.25f, 0.1f,  0.2f, /* (480,120) 64x96 */
        0.5f,  0.5f,  1.0f,  1.0f,
    };
    const int64_t ls[] = {1, 4, 4};
    struct eb_head_output o[2];
    struct eb_yolo_scratch s;
    detr_outputs(&h, logits, ls, boxes, o, &s);
    struct eb_yolo_params p = PARAMS(0.2f, 0.45f, 300);
    ASSERT_EQ_INT(eb_head_decode(&h, o, 2, &p, &s), 3);
    expect_det(&s.cand[0], "detr q0", 240, 120, 400, 360, 0.25, 0);
    expect_det(&s.cand[1], "detr q1", 128, 312, 192, 408, 2.0 / 3.0, 2);

    /* Best by score (ties in query order), no NMS; identity letterbox. */
    struct eb_letterbox lb;
    eb_letterbox_compute(640, 480, 640, 480, &lb);
    struct eb_detection items[4];
    struct eb_detections out = {items, 0, 4};
    eb_head_postprocess(&h, o, 2, &lb, &p, &s, &out);
    ASSERT_EQ_INT(out.count, 3);
    expect_det(&out.items[0], "detr best", 128, 312, 192, 408, 2.0 / 3.0, 2);
    expect_det(&out.items[1], "detr tie", 448, 72, 512, 168, 2.0 / 3.0, 2);
    expect_det(&out.items[2], "detr third", 240, 120, 400, 360, 0.25, 0);
    for (size_t i = 0; i < out.count; i++)
        ASSERT_TRUE(out.items[i].cls >= 0 && out.items[i].cls < 3);
    p.max_det = 1;
    eb_head_postprocess(&h, o, 2, &lb, &p, &s, &out);
    ASSERT_EQ_INT(out.count, 1);
    ASSERT_NEAR(out.items[0].score, 2.0 / 3.0, 1e-4);
    p.max_det = 300;
    out.capacity = 2; /* the output's capacity bounds it as well */
    eb_head_postprocess(&h, o, 2, &lb, &p, &s, &out);
    ASSERT_EQ_INT(out.count, 2);
    ASSERT_EQ_INT(out.items[1].cls, 2);
    eb_yolo_scratch_fini(&s);
}

EB_TEST(detr_sigmoid_every_class_real)
{
    struct eb_head h = detr_head(4, 3, 0);
    const float logits[4 * 3] = {
        0,     logf(3), -2,      /* class 1 at 0.75 */
        -5,    -5,      -5,      /* 0.0067: below conf */
        -0.5f, -9,      -0.5f,   /* tie: class 0 */
        -9,    -9,      logf(9), /* the last class is a real one here: class 2 at 0.9 */
    };
    const float boxes[4 * 4] = {0.5f, 0.5f, 0.5f, 0.5f, 0,    0,    0,    0,
                                0.1f, 0.1f, 0.2f, 0.2f, 0.9f, 0.5f, 0.2f, 1.0f};
    const int64_t ls[] = {1, 4, 3};
    struct eb_head_output o[2];
    struct eb_yolo_scratch s;
    detr_outputs(&h, logits, ls, boxes, o, &s);
    struct eb_yolo_params p = PARAMS(0.25f, 0.45f, 300);
    ASSERT_EQ_INT(eb_head_decode(&h, o, 2, &p, &s), 3);
    const double sig = 1.0 / (1.0 + exp(0.5));
    expect_det(&s.cand[0], "detr-sig q0", 160, 120, 480, 360, 0.75, 1);
    expect_det(&s.cand[1], "detr-sig q2", 0, 0, 128, 96, sig, 0);
    expect_det(&s.cand[2], "detr-sig q3", 512, 0, 640, 480, 0.9, 2);
    struct eb_letterbox lb;
    eb_letterbox_compute(640, 480, 640, 480, &lb);
    struct eb_detection items[4];
    struct eb_detections out = {items, 0, 4};
    eb_head_postprocess(&h, o, 2, &lb, &p, &s, &out);
    ASSERT_EQ_INT(out.count, 3);
    ASSERT_EQ_INT(out.items[0].cls, 2);
    ASSERT_EQ_INT(out.items[1].cls, 1);
    ASSERT_EQ_INT(out.items[2].cls, 0);
    eb_yolo_scratch_fini(&s);
}

/* ---- eb_head_check_outputs ------------------------------------------------------------------ */

EB_TEST(check_outputs_accepts_each_family)
{
    struct eb_diag diag = {0};
    const int64_t yx[] = {1, 3549, 85}, v5[] = {1, 6300, 85}, fd[] = {1, 85, 22, 22};
    struct eb_head h = yolox_head();
    ASSERT_OK(eb_head_check_outputs(&h, &(struct eb_head_output){NULL, yx, 3}, 1, &diag));
    ASSERT_OK(eb_head_check_outputs(&h, &(struct eb_head_output){NULL, yx + 1, 2}, 1, &diag));
    h = v5lite_head();
    ASSERT_OK(eb_head_check_outputs(&h, &(struct eb_head_output){NULL, v5, 3}, 1, &diag));
    h = fastestdet_head();
    ASSERT_OK(eb_head_check_outputs(&h, &(struct eb_head_output){NULL, fd, 4}, 1, &diag));
    h = fastestv2_head();
    const int64_t f0[] = {1, 22, 22, 95}, f1[] = {1, 11, 11, 95};
    struct eb_head_output fv2[2] = {{NULL, f0, 4}, {NULL, f1, 4}};
    ASSERT_OK(eb_head_check_outputs(&h, fv2, 2, &diag));
    h = nanodet_head();
    const int64_t n[6][3] = {{1, 2704, 80}, {1, 676, 80}, {1, 169, 80},
                             {1, 2704, 32}, {1, 676, 32}, {1, 169, 32}};
    struct eb_head_output nd[6];
    for (int i = 0; i < 6; i++)
        nd[i] = (struct eb_head_output){NULL, n[i], 3};
    ASSERT_OK(eb_head_check_outputs(&h, nd, 6, &diag));
    h = new_head(EB_HEAD_V8, 80, 640, 640, 8400, 1);
    const int64_t v8[] = {1, 84, 8400};
    ASSERT_OK(eb_head_check_outputs(&h, &(struct eb_head_output){NULL, v8, 3}, 1, &diag));
    ASSERT_OK(eb_head_check_outputs(&h, &(struct eb_head_output){NULL, v8 + 1, 2}, 1, &diag));
    h.kind = EB_HEAD_END2END;
    h.num_classes = 0;
    h.num_boxes = 300;
    const int64_t e2e[] = {1, 300, 6};
    ASSERT_OK(eb_head_check_outputs(&h, &(struct eb_head_output){NULL, e2e, 3}, 1, &diag));
    ASSERT_EQ_INT(diag.status, EB_OK);
}

EB_TEST(check_outputs_refuses_what_does_not_fit)
{
    struct eb_diag diag = {0};
    /* YOLOX with 75 classes' worth of channels. */
    struct eb_head h = yolox_head();
    const int64_t yx80[] = {1, 3549, 80};
    ASSERT_EQ_INT(eb_head_check_outputs(&h, &(struct eb_head_output){NULL, yx80, 3}, 1, &diag),
                  EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(diag.msg, "head yolox: model output 0 is [1,3549,80], expected [1,3549,85]");
    ASSERT_TRUE(strchr(diag.msg, '\n') == NULL);

    /* NanoDet with class and box outputs swapped at level 1. */
    eb_diag_clear(&diag);
    h = nanodet_head();
    const int64_t n[6][3] = {{1, 2704, 80}, {1, 676, 80}, {1, 169, 80},
                             {1, 2704, 32}, {1, 676, 32}, {1, 169, 32}};
    struct eb_head_output nd[6];
    for (int i = 0; i < 6; i++)
        nd[i] = (struct eb_head_output){NULL, n[i], 3};
    struct eb_head_output swapped[6];
    memcpy(swapped, nd, sizeof nd);
    swapped[1] = nd[4];
    swapped[4] = nd[1];
    ASSERT_EQ_INT(eb_head_check_outputs(&h, swapped, 6, &diag), EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(diag.msg, "head nanodet: model output 1 is [1,676,32], expected [1,676,80]");
    ASSERT_CONTAINS(diag.msg, "class scores of level 1");
    /* ...and with an output missing. */
    eb_diag_clear(&diag);
    ASSERT_EQ_INT(eb_head_check_outputs(&h, nd, 5, &diag), EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(diag.msg, "head nanodet reads model output 5 as [1,169,32]");
    ASSERT_CONTAINS(diag.msg, "the model has 5 outputs");

    /* Yolo-FastestV2 given NCHW tensors. */
    eb_diag_clear(&diag);
    h = fastestv2_head();
    const int64_t c0[] = {1, 95, 22, 22}, c1[] = {1, 95, 11, 11};
    struct eb_head_output fv2[2] = {{NULL, c0, 4}, {NULL, c1, 4}};
    ASSERT_EQ_INT(eb_head_check_outputs(&h, fv2, 2, &diag), EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(diag.msg, "head fastestv2: model output 0 is [1,95,22,22], expected "
                              "[1,22,22,95]");

    /* FastestDet read as the NHWC one; a batch of 2; a rank that fits no way. */
    eb_diag_clear(&diag);
    h = fastestdet_head();
    const int64_t nhwc[] = {1, 22, 22, 85}, b2[] = {2, 85, 22, 22};
    ASSERT_EQ_INT(eb_head_check_outputs(&h, &(struct eb_head_output){NULL, nhwc, 4}, 1, &diag),
                  EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(diag.msg, "[1,22,22,85], expected [1,85,22,22]");
    eb_diag_clear(&diag);
    ASSERT_EQ_INT(eb_head_check_outputs(&h, &(struct eb_head_output){NULL, b2, 4}, 1, &diag),
                  EB_ERR_UNSUPPORTED);
    eb_diag_clear(&diag);
    ASSERT_EQ_INT(eb_head_check_outputs(&h, &(struct eb_head_output){NULL, b2 + 3, 1}, 1, &diag),
                  EB_ERR_UNSUPPORTED);

    /* DETR with softmax needs the no-object column. */
    eb_diag_clear(&diag);
    h = detr_head(100, 91, 1);
    const int64_t ls[] = {1, 100, 91}, bs[] = {1, 100, 4};
    struct eb_head_output detr[2] = {{NULL, ls, 3}, {NULL, bs, 3}};
    ASSERT_EQ_INT(eb_head_check_outputs(&h, detr, 2, &diag), EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(diag.msg, "expected [1,100,92]");
    h.detr_softmax = 0;
    eb_diag_clear(&diag);
    ASSERT_OK(eb_head_check_outputs(&h, detr, 2, &diag));

    /* A head whose capacity is less than its grid's candidates is refused before any output. */
    eb_diag_clear(&diag);
    h = v5lite_head();
    h.num_boxes = 2100;
    const int64_t v5[] = {1, 6300, 85};
    ASSERT_EQ_INT(eb_head_check_outputs(&h, &(struct eb_head_output){NULL, v5, 3}, 1, &diag),
                  EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "6300 candidates");
}
