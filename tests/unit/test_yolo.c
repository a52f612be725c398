/*
 * Unit tests for src/yolo: letterbox geometry and pixels (fast path vs scalar reference, with
 * guard values around every output buffer), layout detection, the three decoders, IoU, NMS
 * (against a brute-force per-class reference) and post-processing.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb/status.h"
#include "eb_test.h"
#include "yolo/yolo.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static uint32_t rng_next(uint64_t *state)
{
    /* xorshift64*, state owned by the caller (no globals). */
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

static struct eb_yolo_params params(float conf, float iou, int max_det)
{
    struct eb_yolo_params p;
    p.conf = conf;
    p.iou = iou;
    p.max_det = max_det;
    p.class_agnostic = 0;
    return p;
}

static struct eb_detection det(float x1, float y1, float x2, float y2, float score, int cls)
{
    struct eb_detection d;
    d.x1 = x1;
    d.y1 = y1;
    d.x2 = x2;
    d.y2 = y2;
    d.score = score;
    d.cls = cls;
    return d;
}

static void init_scratch(struct eb_yolo_scratch *s, enum eb_yolo_layout l, int nc, int n)
{
    struct eb_yolo_layout_info info = {l, nc, n};
    struct eb_diag diag = {0};
    ASSERT_OK(eb_yolo_scratch_init(s, &info, &diag));
}

#define GUARD     64
#define GUARD_VAL (-12345.0f)

/* Runs fast and reference letterbox on a random image and compares them. */
static void check_fast_vs_ref(int src_w, int src_h, int dst_w, int dst_h, int channels,
                              size_t extra_stride, uint64_t seed)
{
    const size_t stride = (size_t)src_w * 3 + extra_stride;
    /* Exactly sized source: the last row has no slack, so ASan catches over-reads. */
    const size_t src_bytes = stride * (size_t)(src_h - 1) + (size_t)src_w * 3;
    uint8_t *src = malloc(src_bytes);
    ASSERT_TRUE(src != NULL);
    uint64_t st = seed;
    for (size_t i = 0; i < src_bytes; i++)
        src[i] = (uint8_t)rng_next(&st);

    struct eb_letterbox lb;
    eb_letterbox_compute(src_w, src_h, dst_w, dst_h, &lb);
    const size_t n = (size_t)channels * (size_t)dst_w * (size_t)dst_h;
    float *fast = malloc((n + 2 * GUARD) * sizeof *fast);
    float *ref = malloc((n + 2 * GUARD) * sizeof *ref);
    ASSERT_TRUE(fast != NULL && ref != NULL);
    for (size_t i = 0; i < n + 2 * GUARD; i++) {
        fast[i] = GUARD_VAL;
        ref[i] = -GUARD_VAL;
    }
    eb_letterbox_rgb_to_nchw_f32(src, src_w, src_h, stride, &lb, channels, fast + GUARD);
    eb_letterbox_rgb_to_nchw_f32__ref(src, src_w, src_h, stride, &lb, channels, ref + GUARD);
    for (size_t i = 0; i < GUARD; i++) {
        ASSERT_TRUE(fast[i] == GUARD_VAL && fast[GUARD + n + i] == GUARD_VAL);
        ASSERT_TRUE(ref[i] == -GUARD_VAL && ref[GUARD + n + i] == -GUARD_VAL);
    }
    double max_diff = 0.0;
    size_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        float a = fast[GUARD + i], b = ref[GUARD + i];
        if (!(a >= 0.0f && a <= 1.0f) || !(b >= 0.0f && b <= 1.0f))
            EB_FAIL("%dx%d->%dx%d c%d: value %zu out of [0,1] (unwritten?): fast %g ref %g", src_w,
                    src_h, dst_w, dst_h, channels, i, (double)a, (double)b);
        double d = fabs((double)a - (double)b);
        if (d > max_diff) {
            max_diff = d;
            worst = i;
        }
    }
    if (!(max_diff <= (double)EB_LETTERBOX_FAST_TOL))
        EB_FAIL("%dx%d->%dx%d c%d: max |fast-ref| %g at %zu exceeds %g", src_w, src_h, dst_w, dst_h,
                channels, max_diff, worst, (double)EB_LETTERBOX_FAST_TOL);
    free(src);
    free(fast);
    free(ref);
}

/* ---- letterbox geometry ------------------------------------------------------------------ */

EB_TEST(letterbox_1920x1080_to_640)
{
    struct eb_letterbox lb;
    eb_letterbox_compute(1920, 1080, 640, 640, &lb);
    ASSERT_NEAR(lb.scale, 1.0 / 3.0, 1e-7);
    ASSERT_EQ_INT(lb.new_w, 640);
    ASSERT_EQ_INT(lb.new_h, 360);
    ASSERT_EQ_INT(lb.pad_top, 140);
    ASSERT_EQ_INT(lb.pad_left, 0);
    ASSERT_EQ_INT(lb.src_w, 1920);
    ASSERT_EQ_INT(lb.dst_h, 640);
}

EB_TEST(letterbox_640x480_to_640)
{
    struct eb_letterbox lb;
    eb_letterbox_compute(640, 480, 640, 640, &lb);
    ASSERT_NEAR(lb.scale, 1.0, 0.0);
    ASSERT_EQ_INT(lb.new_w, 640);
    ASSERT_EQ_INT(lb.new_h, 480);
    ASSERT_EQ_INT(lb.pad_top, 80);
    ASSERT_EQ_INT(lb.pad_left, 0);
}

EB_TEST(letterbox_portrait_1080x1920)
{
    struct eb_letterbox lb;
    eb_letterbox_compute(1080, 1920, 640, 640, &lb);
    ASSERT_NEAR(lb.scale, 1.0 / 3.0, 1e-7);
    ASSERT_EQ_INT(lb.new_w, 360);
    ASSERT_EQ_INT(lb.new_h, 640);
    ASSERT_EQ_INT(lb.pad_left, 140);
    ASSERT_EQ_INT(lb.pad_top, 0);
}

EB_TEST(letterbox_upscale_100x100)
{
    struct eb_letterbox lb;
    eb_letterbox_compute(100, 100, 640, 640, &lb);
    ASSERT_NEAR(lb.scale, 6.4, 1e-6);
    ASSERT_EQ_INT(lb.new_w, 640);
    ASSERT_EQ_INT(lb.new_h, 640);
    ASSERT_EQ_INT(lb.pad_left, 0);
    ASSERT_EQ_INT(lb.pad_top, 0);
}

EB_TEST(letterbox_non_square_dst)
{
    struct eb_letterbox lb;
    /* dst 640 wide, 384 high. */
    eb_letterbox_compute(1920, 1080, 640, 384, &lb);
    ASSERT_EQ_INT(lb.new_w, 640);
    ASSERT_EQ_INT(lb.new_h, 360);
    ASSERT_EQ_INT(lb.pad_top, 12);
    ASSERT_EQ_INT(lb.pad_left, 0);
    /* dst 320 wide, 640 high: width limits. */
    eb_letterbox_compute(1920, 1080, 320, 640, &lb);
    ASSERT_NEAR(lb.scale, 1.0 / 6.0, 1e-7);
    ASSERT_EQ_INT(lb.new_w, 320);
    ASSERT_EQ_INT(lb.new_h, 180);
    ASSERT_EQ_INT(lb.pad_top, 230);
    /* Odd padding: dh = 0.5 -> round(0.4) = 0 on top (the extra row goes to the bottom). */
    eb_letterbox_compute(640, 480, 640, 481, &lb);
    ASSERT_EQ_INT(lb.new_h, 480);
    ASSERT_EQ_INT(lb.pad_top, 0);
    /* dh = 1.5 -> round(1.4) = 1. */
    eb_letterbox_compute(640, 480, 640, 483, &lb);
    ASSERT_EQ_INT(lb.pad_top, 1);
}

EB_TEST(letterbox_bankers_rounding)
{
    struct eb_letterbox lb;
    /* r = 0.5: 1001 * 0.5 = 500.5 -> 500 (half to even; half-away would give 501). */
    eb_letterbox_compute(1001, 1280, 640, 640, &lb);
    ASSERT_NEAR(lb.scale, 0.5, 0.0);
    ASSERT_EQ_INT(lb.new_w, 500);
    ASSERT_EQ_INT(lb.new_h, 640);
    ASSERT_EQ_INT(lb.pad_left, 70);
    /* 1003 * 0.5 = 501.5 -> 502; dw = 69 -> round(68.9) = 69. */
    eb_letterbox_compute(1003, 1280, 640, 640, &lb);
    ASSERT_EQ_INT(lb.new_w, 502);
    ASSERT_EQ_INT(lb.pad_left, 69);
    /* 5 * 0.5 = 2.5 -> 2, 7 * 0.5 = 3.5 -> 4. */
    eb_letterbox_compute(5, 20, 10, 10, &lb);
    ASSERT_EQ_INT(lb.new_w, 2);
    eb_letterbox_compute(7, 20, 10, 10, &lb);
    ASSERT_EQ_INT(lb.new_w, 4);
}

EB_TEST(letterbox_unmap_inverts_map)
{
    const int geo[][4] = {{1920, 1080, 640, 640}, {1080, 1920, 640, 640}, {640, 480, 640, 640},
                          {100, 100, 640, 640},   {1001, 1280, 640, 640}, {1920, 1080, 640, 384},
                          {641, 479, 320, 256}};
    uint64_t st = 7;
    for (size_t g = 0; g < EB_ARRAY_LEN(geo); g++) {
        struct eb_letterbox lb;
        eb_letterbox_compute(geo[g][0], geo[g][1], geo[g][2], geo[g][3], &lb);
        for (int k = 0; k < 100; k++) {
            float x1 = rng_unit(&st) * (float)lb.src_w, y1 = rng_unit(&st) * (float)lb.src_h;
            float x2 = x1 + rng_unit(&st) * ((float)lb.src_w - x1);
            float y2 = y1 + rng_unit(&st) * ((float)lb.src_h - y1);
            /* Forward map x' = x * r + left, the map Ultralytics scale_boxes inverts. (The
             * resize itself scales by new_w / src_w, which differs from r by the rounding of
             * new_w: up to ~1 px at the far edge for 1001 px at r = 0.5, as in Ultralytics.) */
            float sx = lb.scale, sy = lb.scale;
            struct eb_detection d =
                det(x1 * sx + (float)lb.pad_left, y1 * sy + (float)lb.pad_top,
                    x2 * sx + (float)lb.pad_left, y2 * sy + (float)lb.pad_top, 0.5f, 3);
            eb_letterbox_unmap(&lb, &d);
            ASSERT_NEAR(d.x1, x1, 0.5);
            ASSERT_NEAR(d.y1, y1, 0.5);
            ASSERT_NEAR(d.x2, x2, 0.5);
            ASSERT_NEAR(d.y2, y2, 0.5);
            ASSERT_EQ_INT(d.cls, 3);
            ASSERT_NEAR(d.score, 0.5, 0.0);
        }
    }
    /* Clipping to the frame (boxes that reach into the padding). */
    struct eb_letterbox lb;
    eb_letterbox_compute(1920, 1080, 640, 640, &lb);
    struct eb_detection d = det(-10.0f, 100.0f, 700.0f, 600.0f, 0.9f, 0);
    eb_letterbox_unmap(&lb, &d);
    ASSERT_NEAR(d.x1, 0.0, 0.0);
    ASSERT_NEAR(d.x2, 1920.0, 0.0);
    ASSERT_NEAR(d.y1, 0.0, 0.0);
    ASSERT_NEAR(d.y2, 1080.0, 0.0);
    d = det(320.0f, 320.0f, 330.0f, 330.0f, 0.9f, 0);
    eb_letterbox_unmap(&lb, &d);
    ASSERT_NEAR(d.x1, 960.0, 1e-3);
    ASSERT_NEAR(d.y1, 540.0, 1e-3);
    ASSERT_NEAR(d.x2, 990.0, 1e-3);
    ASSERT_NEAR(d.y2, 570.0, 1e-3);
}

/* ---- letterbox pixels -------------------------------------------------------------------- */

EB_TEST(letterbox_constant_image_and_pad)
{
    const int w = 1920, h = 1080;
    uint8_t *src = malloc((size_t)w * (size_t)h * 3);
    float *dst = malloc(3 * 640 * 640 * sizeof *dst);
    ASSERT_TRUE(src != NULL && dst != NULL);
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++) {
        src[3 * i] = 10;
        src[3 * i + 1] = 20;
        src[3 * i + 2] = 30;
    }
    struct eb_letterbox lb;
    eb_letterbox_compute(w, h, 640, 640, &lb);
    eb_letterbox_rgb_to_nchw_f32(src, w, h, (size_t)w * 3, &lb, 3, dst);
    const size_t plane = 640 * 640;
    const float pad = 114.0f / 255.0f;
    for (int c = 0; c < 3; c++) {
        const float *pl = dst + (size_t)c * plane;
        ASSERT_NEAR(pl[0], pad, 1e-7);               /* top pad */
        ASSERT_NEAR(pl[139 * 640 + 639], pad, 1e-7); /* last pad row above */
        ASSERT_NEAR(pl[500 * 640 + 3], pad, 1e-7);   /* bottom pad */
        ASSERT_NEAR(pl[639 * 640 + 639], pad, 1e-7); /* last element */
        float want = (float)(10 * (c + 1)) / 255.0f; /* planar R, G, B */
        ASSERT_NEAR(pl[140 * 640 + 0], want, 1e-6);
        ASSERT_NEAR(pl[320 * 640 + 320], want, 1e-6);
        ASSERT_NEAR(pl[499 * 640 + 639], want, 1e-6);
    }
    free(src);
    free(dst);
}

EB_TEST(letterbox_bilinear_known_values)
{
    /* 2x2 -> 4x4 (r = 2): columns sample at -0.25 (clamped), 0.25, 0.75, 1.25 (clamped). */
    const uint8_t src[2 * 2 * 3] = {0, 0, 0, 200, 100, 40, 100, 0, 0, 255, 255, 255};
    struct eb_letterbox lb;
    eb_letterbox_compute(2, 2, 4, 4, &lb);
    ASSERT_EQ_INT(lb.new_w, 4);
    float out[3 * 16], ref[3 * 16];
    eb_letterbox_rgb_to_nchw_f32(src, 2, 2, 6, &lb, 3, out);
    eb_letterbox_rgb_to_nchw_f32__ref(src, 2, 2, 6, &lb, 3, ref);
    /* Row 0 of R: 0, 0.25*200, 0.75*200, 200. */
    const float r0[4] = {0.0f, 50.0f, 150.0f, 200.0f};
    for (int x = 0; x < 4; x++) {
        ASSERT_NEAR(ref[x], r0[x] / 255.0f, 1e-6);
        ASSERT_NEAR(out[x], r0[x] / 255.0f, EB_LETTERBOX_FAST_TOL);
    }
    /* R at (x=1, y=1): rows blend 0.75 * row0 + 0.25 * row1; row1 at x=1: 0.75*100+0.25*255. */
    float want = (0.75f * 50.0f + 0.25f * (0.75f * 100.0f + 0.25f * 255.0f)) / 255.0f;
    ASSERT_NEAR(ref[4 + 1], want, 1e-6);
    ASSERT_NEAR(out[4 + 1], want, EB_LETTERBOX_FAST_TOL);
    /* B plane, bottom-right corner = pixel (1,1) exactly. */
    ASSERT_NEAR(out[32 + 15], 1.0, 1e-6);
}

EB_TEST(letterbox_fast_matches_ref)
{
    check_fast_vs_ref(1, 1, 640, 640, 3, 0, 1);
    check_fast_vs_ref(3, 7, 640, 640, 3, 0, 2);
    check_fast_vs_ref(7, 3, 33, 17, 3, 5, 3);
    check_fast_vs_ref(641, 479, 640, 640, 3, 0, 4);
    check_fast_vs_ref(480, 640, 640, 640, 3, 0, 5);
    check_fast_vs_ref(1920, 1080, 640, 640, 3, 0, 6);
    check_fast_vs_ref(1920, 1080, 640, 384, 3, 0, 7);
    check_fast_vs_ref(1001, 1280, 640, 640, 3, 13, 8);
    check_fast_vs_ref(100, 100, 640, 640, 3, 0, 9);
    check_fast_vs_ref(640, 480, 640, 640, 3, 0, 10);
}

EB_TEST(letterbox_fast_single_channel_and_wide)
{
    check_fast_vs_ref(641, 479, 320, 320, 1, 3, 11);
    check_fast_vs_ref(1920, 1080, 640, 640, 1, 0, 12);
    /* Wider than the fast path's stack buffers: falls back to the reference. */
    check_fast_vs_ref(EB_LETTERBOX_FAST_MAX_W + 3, 9, 64, 48, 3, 0, 13);
}

/* ---- layout detection -------------------------------------------------------------------- */

static struct eb_yolo_layout_info detect_ok(const int64_t *shape, int rank, size_t names)
{
    struct eb_yolo_layout_info info;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_yolo_layout_detect(shape, rank, names, &info, &diag));
    return info;
}

EB_TEST(layout_detect_known_shapes)
{
    const int64_t v8[] = {1, 84, 8400}, v5[] = {1, 8400, 85}, e2e[] = {1, 300, 6};
    const int64_t batchless[] = {84, 8400};
    struct eb_yolo_layout_info i = detect_ok(v8, 3, 0);
    ASSERT_EQ_INT(i.layout, EB_YOLO_LAYOUT_CHANNELS);
    ASSERT_EQ_INT(i.num_classes, 80);
    ASSERT_EQ_INT(i.num_boxes, 8400);
    ASSERT_STREQ(eb_yolo_layout_name(i.layout), "v8");
    i = detect_ok(v5, 3, 0);
    ASSERT_EQ_INT(i.layout, EB_YOLO_LAYOUT_ROWS_OBJ);
    ASSERT_EQ_INT(i.num_classes, 80);
    ASSERT_EQ_INT(i.num_boxes, 8400);
    ASSERT_STREQ(eb_yolo_layout_name(i.layout), "v5");
    i = detect_ok(e2e, 3, 0);
    ASSERT_EQ_INT(i.layout, EB_YOLO_LAYOUT_END2END);
    ASSERT_EQ_INT(i.num_boxes, 300);
    ASSERT_STREQ(eb_yolo_layout_name(i.layout), "end2end");
    i = detect_ok(e2e, 3, 80);
    ASSERT_EQ_INT(i.layout, EB_YOLO_LAYOUT_END2END);
    i = detect_ok(batchless, 2, 0);
    ASSERT_EQ_INT(i.layout, EB_YOLO_LAYOUT_CHANNELS);
    ASSERT_EQ_INT(i.num_classes, 80);
    ASSERT_EQ_INT(i.num_boxes, 8400);
    ASSERT_STREQ(eb_yolo_layout_name(EB_YOLO_LAYOUT_UNKNOWN), "unknown");
}

EB_TEST(layout_detect_names_break_ties)
{
    /* nc = 1: [1,K,6] is END2END for K <= 1000, YOLOv5 nc=1 above. */
    const int64_t v5_nc1[] = {1, 25200, 6}, e2e[] = {1, 300, 6}, small_v5[] = {1, 1000, 6};
    struct eb_yolo_layout_info i = detect_ok(v5_nc1, 3, 1);
    ASSERT_EQ_INT(i.layout, EB_YOLO_LAYOUT_ROWS_OBJ);
    ASSERT_EQ_INT(i.num_classes, 1);
    ASSERT_EQ_INT(i.num_boxes, 25200);
    i = detect_ok(e2e, 3, 1);
    ASSERT_EQ_INT(i.layout, EB_YOLO_LAYOUT_END2END);
    i = detect_ok(small_v5, 3, 1);
    ASSERT_EQ_INT(i.layout, EB_YOLO_LAYOUT_END2END);
    /* Without names the same shapes follow the size rules. */
    i = detect_ok(v5_nc1, 3, 0);
    ASSERT_EQ_INT(i.layout, EB_YOLO_LAYOUT_ROWS_OBJ);
    /* [1,84,85] with 80 names: both fit; the larger dimension is N. */
    const int64_t both[] = {1, 84, 85};
    i = detect_ok(both, 3, 80);
    ASSERT_EQ_INT(i.layout, EB_YOLO_LAYOUT_CHANNELS);
    ASSERT_EQ_INT(i.num_boxes, 85);
    /* [1,6,8400] with 2 names: v8 with two classes. */
    const int64_t two[] = {1, 6, 8400};
    i = detect_ok(two, 3, 2);
    ASSERT_EQ_INT(i.layout, EB_YOLO_LAYOUT_CHANNELS);
    ASSERT_EQ_INT(i.num_classes, 2);
    /* Names that match neither fall back to the size rules. */
    i = detect_ok(two, 3, 7);
    ASSERT_EQ_INT(i.layout, EB_YOLO_LAYOUT_CHANNELS);
    ASSERT_EQ_INT(i.num_classes, 2);
}

EB_TEST(layout_detect_rejects)
{
    const int64_t img[] = {1, 3, 640, 640}, flat[] = {1, 10}, batch2[] = {2, 84, 8400};
    const int64_t square[] = {1, 7, 7}, zero[] = {1, 0, 8400};
    struct eb_yolo_layout_info info = {EB_YOLO_LAYOUT_CHANNELS, 80, 8400};
    struct eb_diag diag = {0};
    ASSERT_EQ_INT(eb_yolo_layout_detect(img, 4, 0, &info, &diag), EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(diag.msg, "[1,3,640,640]");
    ASSERT_CONTAINS(diag.msg, "is not a YOLO detection output (expected [1,4+nc,N]");
    ASSERT_EQ_INT(info.layout, EB_YOLO_LAYOUT_CHANNELS); /* untouched on failure */
    eb_diag_clear(&diag);
    ASSERT_EQ_INT(eb_yolo_layout_detect(flat, 2, 0, &info, &diag), EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(diag.msg, "model output [1,10] is not a YOLO detection output");
    eb_diag_clear(&diag);
    ASSERT_EQ_INT(eb_yolo_layout_detect(batch2, 3, 0, &info, &diag), EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(diag.msg, "[2,84,8400]");
    ASSERT_CONTAINS(diag.msg, "batch");
    eb_diag_clear(&diag);
    ASSERT_EQ_INT(eb_yolo_layout_detect(square, 3, 0, &info, &diag), EB_ERR_UNSUPPORTED);
    eb_diag_clear(&diag);
    ASSERT_EQ_INT(eb_yolo_layout_detect(zero, 3, 0, &info, &diag), EB_ERR_UNSUPPORTED);
    ASSERT_EQ_INT(eb_yolo_layout_detect(zero, 3, 0, &info, NULL), EB_ERR_UNSUPPORTED);
}

/* ---- scratch ----------------------------------------------------------------------------- */

EB_TEST(scratch_init_and_fini)
{
    struct eb_yolo_scratch s;
    struct eb_yolo_layout_info none = {EB_YOLO_LAYOUT_CHANNELS, 80, 0};
    struct eb_diag diag = {0};
    ASSERT_EQ_INT(eb_yolo_scratch_init(&s, &none, &diag), EB_ERR_INVALID_ARG);
    ASSERT_TRUE(diag.msg[0] != '\0');
    eb_yolo_scratch_fini(&s); /* zeroed on failure: safe */
    eb_yolo_scratch_fini(NULL);
    init_scratch(&s, EB_YOLO_LAYOUT_CHANNELS, 80, 8400);
    ASSERT_EQ_INT(s.capacity, 8400);
    eb_yolo_scratch_fini(&s);
    eb_yolo_scratch_fini(&s);
}

/* ---- decoders ---------------------------------------------------------------------------- */

EB_TEST(decode_channels_hand_built)
{
    /* [1, 4+3, 5]: channel-major, anchors along the last axis. */
    enum { NC = 3, N = 5 };
    float t[(4 + NC) * N] = {0};
    const float boxes[N][4] = {
        {100, 50, 20, 10}, {200, 200, 30, 30}, {300, 300, 40, 20}, {10, 10, 4, 4}, {5, 5, 2, 2}};
    const float scores[N][NC] = {{0.1f, 0.9f, 0.3f},
                                 {0.2f, 0.1f, 0.24f},
                                 {0.5f, 0.5f, 0.2f},
                                 {0.0f, 0.0f, 0.25f},
                                 {0.3f, 0.7f, 0.71f}};
    for (int a = 0; a < N; a++) {
        for (int k = 0; k < 4; k++)
            t[k * N + a] = boxes[a][k];
        for (int c = 0; c < NC; c++)
            t[(4 + c) * N + a] = scores[a][c];
    }
    struct eb_yolo_scratch s;
    init_scratch(&s, EB_YOLO_LAYOUT_CHANNELS, NC, N);
    struct eb_yolo_layout_info info = {EB_YOLO_LAYOUT_CHANNELS, NC, N};
    struct eb_yolo_params p = params(0.25f, 0.45f, 300);
    size_t n = eb_yolo_decode(&info, t, &p, &s);
    ASSERT_EQ_INT(n, 3); /* anchor 1 (best 0.24) and the one exactly at conf dropped */
    ASSERT_NEAR(s.cand[0].x1, 90, 0);
    ASSERT_NEAR(s.cand[0].y1, 45, 0);
    ASSERT_NEAR(s.cand[0].x2, 110, 0);
    ASSERT_NEAR(s.cand[0].y2, 55, 0);
    ASSERT_NEAR(s.cand[0].score, 0.9f, 0);
    ASSERT_EQ_INT(s.cand[0].cls, 1);
    ASSERT_EQ_INT(s.cand[1].cls, 0); /* tie: first maximum */
    ASSERT_NEAR(s.cand[1].x1, 280, 0);
    ASSERT_NEAR(s.cand[1].y2, 310, 0);
    /* Exactly at conf is dropped: Ultralytics keeps scores > conf_thres. */
    ASSERT_EQ_INT(s.cand[2].cls, 2);
    ASSERT_NEAR(s.cand[2].score, 0.71f, 0);
    eb_yolo_scratch_fini(&s);
}

EB_TEST(decode_channels_matches_scalar)
{
    /* Sizes that exercise the 16-anchor blocks and the tail. */
    const int sizes[][2] = {{80, 8400}, {3, 37}, {1, 16}, {2, 15}, {80, 33}};
    uint64_t st = 99;
    for (size_t k = 0; k < EB_ARRAY_LEN(sizes); k++) {
        const int nc = sizes[k][0], n = sizes[k][1];
        float *t = malloc((size_t)(4 + nc) * (size_t)n * sizeof *t);
        ASSERT_TRUE(t != NULL);
        for (size_t i = 0; i < (size_t)(4 + nc) * (size_t)n; i++)
            t[i] = rng_unit(&st) * (i < 4 * (size_t)n ? 640.0f : 0.3f);
        struct eb_yolo_scratch s;
        init_scratch(&s, EB_YOLO_LAYOUT_CHANNELS, nc, n);
        struct eb_yolo_layout_info info = {EB_YOLO_LAYOUT_CHANNELS, nc, n};
        struct eb_yolo_params p = params(0.25f, 0.45f, 300);
        size_t got = eb_yolo_decode(&info, t, &p, &s);
        size_t want = 0;
        for (int a = 0; a < n; a++) {
            float best = t[4 * n + a];
            int cls = 0;
            for (int c = 1; c < nc; c++) {
                if (t[(4 + c) * n + a] > best) {
                    best = t[(4 + c) * n + a];
                    cls = c;
                }
            }
            if (best < 0.25f)
                continue;
            ASSERT_TRUE(want < got);
            const struct eb_detection *d = &s.cand[want++];
            ASSERT_EQ_INT(d->cls, cls);
            ASSERT_NEAR(d->score, best, 0);
            ASSERT_NEAR(d->x1, t[a] - t[2 * n + a] / 2.0f, 0);
            ASSERT_NEAR(d->y2, t[n + a] + t[3 * n + a] / 2.0f, 0);
        }
        ASSERT_EQ_INT(got, want);
        ASSERT_TRUE(got > 0);
        eb_yolo_scratch_fini(&s);
        free(t);
    }
}

EB_TEST(decode_rows_obj_hand_built)
{
    /* [1, 4, 5+2]: cx cy w h obj c0 c1 per row. */
    const float t[4 * 7] = {
        100, 100, 50, 20, 0.8f, 0.5f, 0.9f, /* score 0.72, cls 1 */
        50,  50,  10, 10, 0.2f, 1.0f, 1.0f, /* obj below conf: skipped */
        60,  60,  10, 10, 0.9f, 0.2f, 0.1f, /* 0.18 < conf: dropped */
        20,  30,  4,  6,  1.0f, 0.6f, 0.6f, /* tie: cls 0, score 0.6 */
    };
    struct eb_yolo_scratch s;
    init_scratch(&s, EB_YOLO_LAYOUT_ROWS_OBJ, 2, 4);
    struct eb_yolo_layout_info info = {EB_YOLO_LAYOUT_ROWS_OBJ, 2, 4};
    struct eb_yolo_params p = params(0.25f, 0.45f, 300);
    size_t n = eb_yolo_decode(&info, t, &p, &s);
    ASSERT_EQ_INT(n, 2);
    ASSERT_NEAR(s.cand[0].score, 0.8f * 0.9f, 1e-7);
    ASSERT_EQ_INT(s.cand[0].cls, 1);
    ASSERT_NEAR(s.cand[0].x1, 75, 0);
    ASSERT_NEAR(s.cand[0].y1, 90, 0);
    ASSERT_NEAR(s.cand[0].x2, 125, 0);
    ASSERT_NEAR(s.cand[0].y2, 110, 0);
    ASSERT_EQ_INT(s.cand[1].cls, 0);
    ASSERT_NEAR(s.cand[1].score, 0.6f, 1e-7);
    ASSERT_NEAR(s.cand[1].x1, 18, 0);
    ASSERT_NEAR(s.cand[1].y2, 33, 0);
    eb_yolo_scratch_fini(&s);
}

EB_TEST(decode_end2end_passthrough)
{
    /* [1, 4, 6]: x1 y1 x2 y2 score class; overlapping boxes stay (NMS already done). */
    const float t[4 * 6] = {
        10, 20, 110, 220, 0.9f, 2, 20,  30,  120, 230, 0.8f, 2,
        0,  0,  5,   5,   0.1f, 0, 100, 240, 300, 400, 0.5f, 7,
    };
    struct eb_yolo_scratch s;
    init_scratch(&s, EB_YOLO_LAYOUT_END2END, 0, 4);
    struct eb_yolo_layout_info info = {EB_YOLO_LAYOUT_END2END, 0, 4};
    struct eb_yolo_params p = params(0.25f, 0.45f, 300);
    struct eb_letterbox lb;
    eb_letterbox_compute(640, 640, 640, 640, &lb); /* identity mapping */
    struct eb_detection items[8];
    struct eb_detections out = {items, 0, 8};
    eb_yolo_postprocess(&info, t, &lb, &p, &s, &out);
    ASSERT_EQ_INT(out.count, 3);
    ASSERT_NEAR(out.items[0].x1, 10, 0);
    ASSERT_NEAR(out.items[0].y2, 220, 0);
    ASSERT_EQ_INT(out.items[0].cls, 2);
    ASSERT_NEAR(out.items[1].score, 0.8f, 0);
    ASSERT_EQ_INT(out.items[2].cls, 7);
    ASSERT_NEAR(out.items[2].x2, 300, 0);
    /* max_det keeps the first rows. */
    p.max_det = 1;
    eb_yolo_postprocess(&info, t, &lb, &p, &s, &out);
    ASSERT_EQ_INT(out.count, 1);
    ASSERT_NEAR(out.items[0].score, 0.9f, 0);
    eb_yolo_scratch_fini(&s);
}

EB_TEST(postprocess_channels_unmaps_to_frame)
{
    /* 1920x1080 -> 640: a box at model (320, 320) 60x30 is frame (960, 540) 180x90. */
    enum { NC = 2, N = 20 };
    float t[(4 + NC) * N] = {0};
    t[0 * N + 3] = 320;
    t[1 * N + 3] = 320;
    t[2 * N + 3] = 60;
    t[3 * N + 3] = 30;
    t[(4 + 1) * N + 3] = 0.8f;
    /* A weaker duplicate of the same class (suppressed) and one of another class (kept). */
    t[0 * N + 7] = 322;
    t[1 * N + 7] = 321;
    t[2 * N + 7] = 60;
    t[3 * N + 7] = 30;
    t[(4 + 1) * N + 7] = 0.7f;
    t[0 * N + 9] = 322;
    t[1 * N + 9] = 321;
    t[2 * N + 9] = 60;
    t[3 * N + 9] = 30;
    t[(4 + 0) * N + 9] = 0.6f;
    struct eb_yolo_scratch s;
    init_scratch(&s, EB_YOLO_LAYOUT_CHANNELS, NC, N);
    struct eb_yolo_layout_info info = {EB_YOLO_LAYOUT_CHANNELS, NC, N};
    struct eb_yolo_params p = params(0.25f, 0.45f, 300);
    struct eb_letterbox lb;
    eb_letterbox_compute(1920, 1080, 640, 640, &lb);
    struct eb_detection items[4];
    struct eb_detections out = {items, 0, 4};
    eb_yolo_postprocess(&info, t, &lb, &p, &s, &out);
    ASSERT_EQ_INT(out.count, 2);
    ASSERT_EQ_INT(out.items[0].cls, 1);
    ASSERT_NEAR(out.items[0].score, 0.8f, 0);
    ASSERT_NEAR(out.items[0].x1, 870, 1e-3);
    ASSERT_NEAR(out.items[0].x2, 1050, 1e-3);
    ASSERT_NEAR(out.items[0].y1, (305 - 140) * 3, 1e-3);
    ASSERT_NEAR(out.items[0].y2, (335 - 140) * 3, 1e-3);
    ASSERT_EQ_INT(out.items[1].cls, 0);
    eb_yolo_scratch_fini(&s);
}

/* ---- IoU and NMS ------------------------------------------------------------------------- */

EB_TEST(iou_basics)
{
    struct eb_detection a = det(0, 0, 10, 10, 1, 0), b = det(5, 0, 15, 10, 1, 0);
    ASSERT_NEAR(eb_yolo_iou(&a, &a), 1.0, 0);
    ASSERT_NEAR(eb_yolo_iou(&a, &b), 50.0 / 150.0, 1e-7);
    struct eb_detection far = det(20, 20, 30, 30, 1, 0), empty = det(5, 5, 5, 9, 1, 0);
    ASSERT_NEAR(eb_yolo_iou(&a, &far), 0, 0);
    ASSERT_NEAR(eb_yolo_iou(&a, &empty), 0, 0);
    ASSERT_NEAR(eb_yolo_iou(&empty, &empty), 0, 0);
}

static void run_nms(const struct eb_detection *c, size_t n, const struct eb_yolo_params *p,
                    struct eb_detection *items, size_t cap, size_t *count_out)
{
    struct eb_yolo_scratch s;
    init_scratch(&s, EB_YOLO_LAYOUT_CHANNELS, 1, (int)(n > 0 ? n : 1));
    memcpy(s.cand, c, n * sizeof *c);
    struct eb_detections out = {items, 0, cap};
    eb_yolo_nms(&s, n, p, &out);
    *count_out = out.count;
    eb_yolo_scratch_fini(&s);
}

EB_TEST(nms_overlap_same_class_keeps_best)
{
    const struct eb_detection c[2] = {det(0, 0, 10, 10, 0.6f, 1), det(1, 1, 11, 11, 0.9f, 1)};
    struct eb_yolo_params p = params(0.25f, 0.45f, 300);
    struct eb_detection items[4];
    size_t n;
    run_nms(c, 2, &p, items, 4, &n);
    ASSERT_EQ_INT(n, 1);
    ASSERT_NEAR(items[0].score, 0.9f, 0);
    ASSERT_NEAR(items[0].x1, 1, 0);
}

EB_TEST(nms_different_classes_both_kept)
{
    const struct eb_detection c[2] = {det(0, 0, 10, 10, 0.6f, 1), det(1, 1, 11, 11, 0.9f, 2)};
    struct eb_yolo_params p = params(0.25f, 0.45f, 300);
    struct eb_detection items[4];
    size_t n;
    run_nms(c, 2, &p, items, 4, &n);
    ASSERT_EQ_INT(n, 2);
    ASSERT_EQ_INT(items[0].cls, 2); /* descending score */
    ASSERT_EQ_INT(items[1].cls, 1);
    p.class_agnostic = 1;
    run_nms(c, 2, &p, items, 4, &n);
    ASSERT_EQ_INT(n, 1);
    ASSERT_EQ_INT(items[0].cls, 2);
}

EB_TEST(nms_iou_at_threshold_not_suppressed)
{
    /* IoU = 50 / 100 = 0.5 exactly in float. */
    const struct eb_detection c[2] = {det(0, 0, 10, 10, 0.9f, 0), det(0, 0, 10, 5, 0.8f, 0)};
    ASSERT_TRUE(eb_yolo_iou(&c[0], &c[1]) == 0.5f);
    struct eb_yolo_params p = params(0.25f, 0.5f, 300);
    struct eb_detection items[4];
    size_t n;
    run_nms(c, 2, &p, items, 4, &n);
    ASSERT_EQ_INT(n, 2);
    p.iou = 0.49f;
    run_nms(c, 2, &p, items, 4, &n);
    ASSERT_EQ_INT(n, 1);
}

EB_TEST(nms_max_det_and_capacity)
{
    struct eb_detection c[10];
    for (int i = 0; i < 10; i++)
        c[i] = det((float)(20 * i), 0, (float)(20 * i + 10), 10, 0.1f * (float)(i + 1) / 2, 0);
    struct eb_yolo_params p = params(0.0f, 0.45f, 3);
    struct eb_detection items[10];
    size_t n;
    run_nms(c, 10, &p, items, 10, &n);
    ASSERT_EQ_INT(n, 3);
    ASSERT_NEAR(items[0].x1, 180, 0); /* the three best, best first */
    ASSERT_NEAR(items[1].x1, 160, 0);
    ASSERT_NEAR(items[2].x1, 140, 0);
    p.max_det = 300;
    run_nms(c, 10, &p, items, 4, &n); /* output capacity limits too */
    ASSERT_EQ_INT(n, 4);
    p.max_det = 0;
    run_nms(c, 10, &p, items, 10, &n);
    ASSERT_EQ_INT(n, 0);
    run_nms(c, 0, &p, items, 10, &n);
    ASSERT_EQ_INT(n, 0);
}

/* Per-class greedy NMS, the definition (torchvision batched_nms + Ultralytics max_det). */
static size_t brute_force_nms(const struct eb_detection *c, size_t n, float iou, size_t max_det,
                              struct eb_detection *out)
{
    size_t *idx = malloc(n * sizeof *idx);
    size_t *kept = malloc(n * sizeof *kept);
    uint8_t *dead = calloc(n, 1);
    ASSERT_TRUE(idx != NULL && kept != NULL && dead != NULL);
    size_t nk = 0;
    int max_cls = 0;
    for (size_t i = 0; i < n; i++)
        max_cls = c[i].cls > max_cls ? c[i].cls : max_cls;
    for (int cls = 0; cls <= max_cls; cls++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (c[i].cls == cls)
                idx[m++] = i;
        /* Selection sort by (score desc, index asc). */
        for (size_t i = 0; i < m; i++) {
            size_t b = i;
            for (size_t j = i + 1; j < m; j++)
                if (c[idx[j]].score > c[idx[b]].score ||
                    (c[idx[j]].score == c[idx[b]].score && idx[j] < idx[b]))
                    b = j;
            size_t t = idx[i];
            idx[i] = idx[b];
            idx[b] = t;
        }
        for (size_t i = 0; i < m; i++) {
            if (dead[idx[i]])
                continue;
            kept[nk++] = idx[i];
            for (size_t j = i + 1; j < m; j++)
                if (eb_yolo_iou(&c[idx[i]], &c[idx[j]]) > iou)
                    dead[idx[j]] = 1;
        }
    }
    for (size_t i = 0; i < nk; i++) {
        size_t b = i;
        for (size_t j = i + 1; j < nk; j++)
            if (c[kept[j]].score > c[kept[b]].score ||
                (c[kept[j]].score == c[kept[b]].score && kept[j] < kept[b]))
                b = j;
        size_t t = kept[i];
        kept[i] = kept[b];
        kept[b] = t;
    }
    size_t r = nk < max_det ? nk : max_det;
    for (size_t i = 0; i < r; i++)
        out[i] = c[kept[i]];
    free(idx);
    free(kept);
    free(dead);
    return r;
}

EB_TEST(nms_matches_brute_force)
{
    for (uint64_t seed = 1; seed <= 8; seed++) {
        uint64_t st = seed * 0x9E3779B97F4A7C15ull;
        const size_t n = 50 + rng_next(&st) % 400;
        const int ncls = 1 + (int)(rng_next(&st) % 5);
        struct eb_detection *c = malloc(n * sizeof *c);
        struct eb_detection *want = malloc(n * sizeof *want);
        struct eb_detection *got = malloc(n * sizeof *got);
        ASSERT_TRUE(c != NULL && want != NULL && got != NULL);
        for (size_t i = 0; i < n; i++) {
            /* Clusters around 12 centres; scores quantised to 1/64 so ties happen. */
            uint32_t k = rng_next(&st) % 12;
            float cx = 50.0f + 45.0f * (float)k, cy = 50.0f + 30.0f * (float)(k % 5);
            float w = 20.0f + 40.0f * rng_unit(&st), h = 20.0f + 40.0f * rng_unit(&st);
            cx += 10.0f * (rng_unit(&st) - 0.5f);
            cy += 10.0f * (rng_unit(&st) - 0.5f);
            float score = (float)(1 + rng_next(&st) % 64) / 64.0f;
            c[i] = det(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, score,
                       (int)(rng_next(&st) % (uint32_t)ncls));
        }
        const float ious[] = {0.3f, 0.45f, 0.7f};
        const size_t max_dets[] = {300, 7};
        for (size_t a = 0; a < EB_ARRAY_LEN(ious); a++) {
            for (size_t b = 0; b < EB_ARRAY_LEN(max_dets); b++) {
                struct eb_yolo_params p = params(0.0f, ious[a], (int)max_dets[b]);
                size_t nw = brute_force_nms(c, n, ious[a], max_dets[b], want);
                size_t ng;
                run_nms(c, n, &p, got, n, &ng);
                if (ng != nw)
                    EB_FAIL("seed %llu iou %g max_det %zu: %zu kept, reference %zu",
                            (unsigned long long)seed, (double)ious[a], max_dets[b], ng, nw);
                for (size_t i = 0; i < nw; i++)
                    ASSERT_TRUE(memcmp(&got[i], &want[i], sizeof got[i]) == 0);
                ASSERT_TRUE(nw > 0);
            }
        }
        free(c);
        free(want);
        free(got);
    }
}

/* Rows of a head reduced elsewhere (a device), in scrambled order, decode to exactly the
 * candidates of eb_yolo_decode on the whole head; more rows than the scratch holds are cut. */
EB_TEST(decode_rows_equals_decode)
{
    enum { NC = 5, N = 64 };
    float data[(4 + NC) * N];
    uint32_t r = 7u;
    for (int i = 0; i < (4 + NC) * N; i++) {
        r = r * 1664525u + 1013904223u;
        data[i] = (float)(r >> 8) / 16777216.0f * (i < 4 * N ? 600.0f : 1.0f);
    }
    const struct eb_yolo_layout_info li = {
        .layout = EB_YOLO_LAYOUT_CHANNELS, .num_classes = NC, .num_boxes = N};
    struct eb_yolo_scratch s;
    struct eb_diag d = {0};
    ASSERT_OK(eb_yolo_scratch_init(&s, &li, &d));
    const struct eb_yolo_params p = {.conf = 0.6f, .iou = 0.7f, .max_det = 300};
    const size_t want_n = eb_yolo_decode(&li, data, &p, &s);
    ASSERT_TRUE(want_n > 3 && want_n < N);
    struct eb_detection want[N];
    memcpy(want, s.cand, want_n * sizeof(want[0]));
    struct eb_anchor_row rows[N];
    size_t n = 0;
    for (int a = N - 1; a >= 0; a--) { /* reversed: the device's order is not the anchors' */
        int cls = 0;
        for (int c = 1; c < NC; c++)
            if (data[(4 + c) * N + a] > data[(4 + cls) * N + a])
                cls = c;
        const float best = data[(4 + cls) * N + a];
        if (best > p.conf)
            rows[n++] = (struct eb_anchor_row){
                a, cls, best, data[a], data[N + a], data[2 * N + a], data[3 * N + a]};
    }
    ASSERT_EQ_INT(n, want_n);
    ASSERT_EQ_INT(eb_yolo_decode_rows(rows, n, &s), want_n);
    ASSERT_TRUE(memcmp(s.cand, want, want_n * sizeof(want[0])) == 0);
    eb_yolo_scratch_fini(&s);
}

/* fp16-vs-fp32 drift: output differences (a NaN on one side is infinite drift) and detection
 * agreement: same class and IoU >= 0.9 counts, IoU 0.8 or another class does not, and a test
 * box is used once. */
EB_TEST(drift_output_and_detection_agreement)
{
    struct eb_yolo_drift d = {0};
    const float ref[4] = {1.0f, 2.0f, 3.0f, -1.0f}, test[4] = {1.0f, 2.5f, 2.75f, -1.0f};
    eb_yolo_drift_add_output(&d, ref, test, 4);
    ASSERT_NEAR(d.max_abs, 0.5, 0);
    ASSERT_NEAR(d.sum_abs / (double)d.n_elems, 0.75 / 4.0, 1e-12);
    struct eb_detection r[4] = {{0, 0, 100, 100, 0.9f, 0},
                                {200, 200, 300, 300, 0.8f, 0},
                                {400, 400, 500, 500, 0.7f, 1},
                                {0, 0, 100, 100, 0.6f, 0}};
    struct eb_detection t[3] = {{0, 0, 100, 105.26316f, 0.9f, 0}, /* IoU 0.95 with r[0] */
                                {200, 200, 300, 325, 0.8f, 0},    /* IoU 0.8 with r[1] */
                                {400, 400, 500, 500, 0.7f, 2}};   /* r[2]'s box, other class */
    struct eb_detections rd = {.items = r, .count = 4, .capacity = 4};
    struct eb_detections td = {.items = t, .count = 3, .capacity = 3};
    unsigned char used[3];
    eb_yolo_drift_add_dets(&d, &rd, &td, 0.9f, used);
    /* r[0] takes t[0]; r[3] (same box as r[0]) finds t[0] used: 1 of 4. */
    ASSERT_EQ_INT(d.boxes_matched, 1);
    ASSERT_EQ_INT(d.boxes_ref, 4);
    ASSERT_EQ_INT(d.boxes_test, 3);
    ASSERT_EQ_INT(d.frames, 1);
    const float nan_ref[1] = {NAN}, one[1] = {1.0f};
    eb_yolo_drift_add_output(&d, one, nan_ref, 1);
    ASSERT_TRUE(isinf(d.max_abs));
}
