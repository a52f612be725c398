/*
 * YOLO pre- and post-processing as pure functions (no backend knowledge):
 * Ultralytics-equivalent letterbox, decoders for the three output layouts of design.md §4,
 * class-aware NMS, and mapping boxes back to the original frame.
 *
 *     struct eb_letterbox lb;
 *     eb_letterbox_compute(1920, 1080, 640, 640, &lb);
 *     eb_letterbox_rgb_to_nchw_f32(frame, 1920, 1080, 1920 * 3, &lb, 3, input);
 *     ...infer...
 *     eb_yolo_postprocess(&layout, out, &lb, &params, &scratch, &dets);
 */
#ifndef EB_YOLO_H
#define EB_YOLO_H

#include <stddef.h>
#include <stdint.h>

#include "eb/detect.h"
#include "eb/diag.h"

struct eb_letterbox {
    int src_w, src_h; /* original frame */
    int dst_w, dst_h; /* model input */
    float scale;      /* dst / src horizontally (and vertically for a letterbox) */
    float scale_y;    /* dst / src vertically (differs from scale only for EB_RESIZE_STRETCH) */
    int new_w, new_h; /* resized image inside the padded canvas */
    int pad_left, pad_top;
};

/** How a frame is fitted into the model input. */
enum eb_resize {
    EB_RESIZE_LETTERBOX = 0,     /* keep the aspect ratio, centred (Ultralytics, YOLOv5, NanoDet) */
    EB_RESIZE_LETTERBOX_TOPLEFT, /* keep the aspect ratio, pasted at the top-left (YOLOX) */
    EB_RESIZE_STRETCH,           /* resize to the input size, no padding (FastestDet) */
};

/** Ultralytics LetterBox (auto=False, center=True): r = min(dst_h/src_h, dst_w/src_w),
 *  new = round(src * r), pad_left = round(dw/2 - 0.1), pad_top = round(dh/2 - 0.1).
 *  round() is Python's (half to even): src_w 1001 at r = 0.5 gives new_w 500, not 501.
 *  All sizes must be > 0 (a broken invariant otherwise). Writes `*lb_out` (caller memory). */
void eb_letterbox_compute(int src_w, int src_h, int dst_w, int dst_h, struct eb_letterbox *lb_out);

/** eb_letterbox_compute for `resize`: LETTERBOX is eb_letterbox_compute; LETTERBOX_TOPLEFT the
 *  same size with pad_left = pad_top = 0; STRETCH new = dst, scale = dst_w/src_w, scale_y =
 *  dst_h/src_h, no padding. */
void eb_letterbox_compute_mode(int src_w, int src_h, int dst_w, int dst_h, enum eb_resize resize,
                               struct eb_letterbox *lb_out);

/**
 * Resizes packed RGB8 `src` (row stride `src_stride` bytes) into the letterbox canvas with
 * bilinear interpolation (OpenCV INTER_LINEAR, half-pixel centres), pads with 114, scales to
 * [0,1] and writes planar NCHW float32 into `dst` (channels * dst_h * dst_w floats, caller-owned).
 * `channels` is 3 (RGB) or 1 (the first channel, for single-channel models). Does not allocate.
 */
void eb_letterbox_rgb_to_nchw_f32(const uint8_t *src, int src_w, int src_h, size_t src_stride,
                                  const struct eb_letterbox *lb, int channels, float *dst);

/**
 * Scalar reference for eb_letterbox_rgb_to_nchw_f32 (same parameters, same ownership): float
 * bilinear weights exactly as OpenCV computes them, no fixed point. It is the specification the
 * fast path is tested against. The fast path quantises the vertical weight to 1/256 (OpenCV
 * itself quantises both weights to 1/2048 and rounds to uint8), so the two differ by at most
 * 0.5/256 of full scale plus float rounding; tests allow EB_LETTERBOX_FAST_TOL.
 * The fast path handles src_w and new_w up to EB_LETTERBOX_FAST_MAX_W with stack buffers and
 * falls back to this function for wider images (still no allocation).
 */
void eb_letterbox_rgb_to_nchw_f32__ref(const uint8_t *src, int src_w, int src_h, size_t src_stride,
                                       const struct eb_letterbox *lb, int channels, float *dst);

/**
 * How the resized pixels become model input values: channel order, the padding colour and,
 * per model channel, out = (pixel - mean) / std on the 0-255 scale (pixel of that channel:
 * R, G, B, or B, G, R with `bgr`). Ultralytics: RGB, pad 114, mean 0, std 255 (that is /255);
 * YOLOX: BGR, pad 114, std 1 (raw 0-255); NanoDet: BGR, pad 0, ImageNet mean/std.
 */
struct eb_pixel_norm {
    int bgr;
    int pad; /* 0..255, the same for every channel */
    float mean[3], std[3];
    int area; /* shrink with OpenCV INTER_AREA (pixel-area averaging) instead of INTER_LINEAR
                 when no axis grows, as OpenCV does; where an axis grows, all is bilinear */
};

/** Writes the Ultralytics normalisation (RGB, pad 114, /255) into `*n`. */
void eb_pixel_norm_default(struct eb_pixel_norm *n);
/** Whether `*n` equals eb_pixel_norm_default's (what device letterboxes implement: bilinear). */
int eb_pixel_norm_is_default(const struct eb_pixel_norm *n);

/**
 * eb_letterbox_rgb_to_nchw_f32 with the normalisation `n` (borrowed): the same resize, padding
 * with n->pad, channels in n's order, then (pixel - mean) / std per channel. `__ref` is the
 * scalar reference, as eb_letterbox_rgb_to_nchw_f32__ref. Do not allocate.
 */
void eb_letterbox_to_nchw_f32_norm(const uint8_t *src, int src_w, int src_h, size_t src_stride,
                                   const struct eb_letterbox *lb, int channels,
                                   const struct eb_pixel_norm *n, float *dst);
void eb_letterbox_to_nchw_f32_norm__ref(const uint8_t *src, int src_w, int src_h, size_t src_stride,
                                        const struct eb_letterbox *lb, int channels,
                                        const struct eb_pixel_norm *n, float *dst);

#define EB_LETTERBOX_FAST_MAX_W 4096
#define EB_LETTERBOX_FAST_TOL   (1.0f / 255.0f + 1e-6f)

/** Maps a box from model-input pixels back to the original frame, clipped to it:
 *  x = (x - pad_left) / scale, y = (y - pad_top) / scale_y, clipped to [0,src_w] x [0,src_h]
 *  (Ultralytics scale_boxes + clip_boxes). */
void eb_letterbox_unmap(const struct eb_letterbox *lb, struct eb_detection *det);

enum eb_yolo_layout {
    EB_YOLO_LAYOUT_UNKNOWN = 0,
    EB_YOLO_LAYOUT_CHANNELS, /* [1, 4+nc, N]: YOLOv8/YOLO11, cx cy w h + class scores */
    EB_YOLO_LAYOUT_ROWS_OBJ, /* [1, N, 5+nc]: YOLOv5/YOLOX, cx cy w h obj + class scores */
    EB_YOLO_LAYOUT_END2END,  /* [1, K, 6]: x1 y1 x2 y2 score class, NMS already done */
};

struct eb_yolo_layout_info {
    enum eb_yolo_layout layout;
    int num_classes; /* nc (0 for END2END unless known from names) */
    int num_boxes;   /* N or K */
};

/** "v8" (channels), "v5" (rows with objectness), "end2end", "unknown". */
const char *eb_yolo_layout_name(enum eb_yolo_layout l);

/**
 * Recognises the layout of an output shape (`shape` borrowed, `rank` entries; rank 3 with batch
 * 1, or rank 2 read as batchless). `n_class_names` (0 when unknown) breaks ties. Rules, in order:
 *  1. names known (nc = n_class_names): [1,4+nc,N] -> CHANNELS, [1,N,5+nc] -> ROWS_OBJ (when
 *     both match, the larger dimension is N). nc == 1 makes [1,K,6] ambiguous with END2END:
 *     K > 1000 -> ROWS_OBJ, else END2END (end-to-end heads keep <= 300..1000 boxes, YOLOv5
 *     heads have thousands of anchors).
 *  2. otherwise [1,K,6] with K <= 1000 -> END2END; [1,A,N] with 5 <= A < N -> CHANNELS
 *     (nc = A-4); [1,N,B] with N > B >= 6 -> ROWS_OBJ (nc = B-5).
 * EB_ERR_UNSUPPORTED with a message naming the shape when it is not YOLO-shaped; `info_out`
 * is written only on EB_OK.
 */
EB_NODISCARD enum eb_status eb_yolo_layout_detect(const int64_t *shape, int rank,
                                                  size_t n_class_names,
                                                  struct eb_yolo_layout_info *info_out,
                                                  struct eb_diag *diag);

struct eb_yolo_params {
    float conf;         /* confidence threshold (score = class score, x objectness for v5) */
    float iou;          /* NMS IoU threshold */
    int max_det;        /* at most this many detections after NMS (Ultralytics: 300) */
    int class_agnostic; /* 0 = class-aware NMS (the default) */
};

/** Ultralytics max_nms: only the best this many candidates (by score) enter NMS. */
#define EB_YOLO_MAX_NMS 30000

/**
 * Scratch space for post-processing, sized once for a layout before timing starts. All arrays
 * hold `capacity` (= the layout's num_boxes) entries and are owned by the scratch.
 */
struct eb_yolo_scratch {
    struct eb_detection *cand; /* candidate boxes */
    int32_t *order;            /* sort indices */
    uint8_t *suppressed;
    size_t capacity;
    /* Extensions (edgebench yolo): */
    uint64_t *keys;    /* sort keys (score, index), 2 * capacity (second half: merge buffer) */
    float *best_score; /* CHANNELS decode: per-anchor max class score (argmax is found
                           afterwards, only for the few anchors that pass `conf`) */
    float *area;       /* NMS: area of each sorted candidate */
};

/**
 * Allocates scratch for `info` (malloc; `s` is caller memory, its arrays are owned by it). Free
 * with eb_yolo_scratch_fini. EB_ERR_INVALID_ARG for a layout with no boxes, EB_ERR_NOMEM.
 * On failure `s` is left zeroed (safe to fini).
 */
EB_NODISCARD enum eb_status eb_yolo_scratch_init(struct eb_yolo_scratch *s,
                                                 const struct eb_yolo_layout_info *info,
                                                 struct eb_diag *diag);
void eb_yolo_scratch_fini(struct eb_yolo_scratch *s);

/**
 * Decodes candidates with score > `conf` from `data` (float32, the output tensor, borrowed)
 * into s->cand (model-input pixels, corner form, in anchor order); returns their count.
 * CHANNELS: score = max class score, cls = first argmax. ROWS_OBJ: score = obj * max class
 * score (rows with obj <= conf are skipped). END2END: rows with score > conf, as they are. Every
 * threshold is strict (score > conf), as Ultralytics' non_max_suppression.
 * `s` must have been initialised for a layout with at least info->num_boxes boxes.
 * Does not allocate.
 */
size_t eb_yolo_decode(const struct eb_yolo_layout_info *info, const float *data,
                      const struct eb_yolo_params *p, struct eb_yolo_scratch *s);

/**
 * eb_yolo_decode's CHANNELS candidates from rows a device reduced (eb_anchor_row, in any
 * order; sorted here by anchor, in place): the same candidates in the same order, into
 * s->cand; returns their count (at most s->capacity rows are taken). Does not allocate.
 */
size_t eb_yolo_decode_rows(struct eb_anchor_row *rows, size_t n, struct eb_yolo_scratch *s);

/**
 * Class-aware NMS over s->cand[0..n) (sorted by score, descending, ties by index), keeping at
 * most min(p->max_det, out->capacity) boxes in out (count set). Does not allocate.
 * The sort is done here (s->cand need not be sorted): only the best EB_YOLO_MAX_NMS enter,
 * a box is suppressed by a kept box of the same class (any class when p->class_agnostic) with
 * IoU > p->iou, and the result is in descending score order — the same set and order as
 * per-class greedy NMS (torchvision batched_nms) truncated to max_det.
 */
void eb_yolo_nms(struct eb_yolo_scratch *s, size_t n, const struct eb_yolo_params *p,
                 struct eb_detections *out);

/** IoU of two corner boxes (0 when either is empty). */
float eb_yolo_iou(const struct eb_detection *a, const struct eb_detection *b);

/**
 * The drift of a run against a reference run on the same inputs (e.g. fp16 against fp32):
 * add each frame's raw output and detections; zero-initialise before the first.
 */
struct eb_yolo_drift {
    uint64_t frames;        /* eb_yolo_drift_add_dets calls */
    uint64_t n_elems;       /* output elements compared */
    double max_abs;         /* largest |ref - test| (inf when only one side is NaN) */
    double sum_abs;         /* sum of |ref - test| (mean = sum_abs / n_elems) */
    uint64_t boxes_ref;     /* reference detections */
    uint64_t boxes_test;    /* the other run's detections */
    uint64_t boxes_matched; /* reference detections with a match (agreement = / boxes_ref) */
};

/** Adds n output elements of both runs (borrowed) to max_abs, sum_abs and n_elems. */
void eb_yolo_drift_add_output(struct eb_yolo_drift *d, const float *ref, const float *test,
                              size_t n);

/**
 * Adds one frame's detections: each reference detection, in its order (NMS order: score
 * descending), takes the unused detection of `test` with the same class and the highest IoU
 * >= iou_min (ties: the first). `used` is caller scratch of test->count bytes.
 */
void eb_yolo_drift_add_dets(struct eb_yolo_drift *d, const struct eb_detections *ref,
                            const struct eb_detections *test, float iou_min, unsigned char *used);

/**
 * decode + NMS (skipped for END2END, which only thresholds and keeps the first
 * min(max_det, capacity) rows in output order) + unmap to the original frame.
 * `out->items` is caller-owned; `out->count` is set. Does not allocate.
 */
void eb_yolo_postprocess(const struct eb_yolo_layout_info *info, const float *data,
                         const struct eb_letterbox *lb, const struct eb_yolo_params *p,
                         struct eb_yolo_scratch *s, struct eb_detections *out);

#endif
