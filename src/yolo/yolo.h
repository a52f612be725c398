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
    float scale;      /* dst / src (same for both axes) */
    int new_w, new_h; /* resized image inside the padded canvas */
    int pad_left, pad_top;
};

/** Ultralytics LetterBox (auto=False, center=True): r = min(dst_h/src_h, dst_w/src_w),
 *  new = round(src * r), pad_left = round(dw/2 - 0.1), pad_top = round(dh/2 - 0.1). */
void eb_letterbox_compute(int src_w, int src_h, int dst_w, int dst_h, struct eb_letterbox *lb_out);

/**
 * Resizes packed RGB8 `src` (row stride `src_stride` bytes) into the letterbox canvas with
 * bilinear interpolation (OpenCV INTER_LINEAR, half-pixel centres), pads with 114, scales to
 * [0,1] and writes planar NCHW float32 into `dst` (channels * dst_h * dst_w floats, caller-owned).
 * `channels` is 3 (RGB) or 1 (the first channel, for single-channel models). Does not allocate.
 */
void eb_letterbox_rgb_to_nchw_f32(const uint8_t *src, int src_w, int src_h, size_t src_stride,
                                  const struct eb_letterbox *lb, int channels, float *dst);

/** Maps a box from model-input pixels back to the original frame, clipped to it. */
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
 * Recognises the layout of an output shape. `n_class_names` (0 when unknown) breaks ties.
 * EB_ERR_UNSUPPORTED with a message naming the shape when it is not YOLO-shaped.
 */
EB_NODISCARD enum eb_status eb_yolo_layout_detect(const int64_t *shape, int rank,
                                                  size_t n_class_names,
                                                  struct eb_yolo_layout_info *info_out,
                                                  struct eb_diag *diag);

struct eb_yolo_params {
    float conf;     /* confidence threshold (score = class score, x objectness for v5) */
    float iou;      /* NMS IoU threshold */
    int max_det;    /* at most this many detections after NMS (Ultralytics: 300) */
    int class_agnostic; /* 0 = class-aware NMS (the default) */
};

/** Scratch space for post-processing, sized once for a layout before timing starts. */
struct eb_yolo_scratch {
    struct eb_detection *cand; /* candidate boxes */
    int32_t *order;            /* sort indices */
    uint8_t *suppressed;
    size_t capacity;
};

/** Allocates scratch for `info` (malloc). Free with eb_yolo_scratch_fini. */
EB_NODISCARD enum eb_status eb_yolo_scratch_init(struct eb_yolo_scratch *s,
                                                 const struct eb_yolo_layout_info *info,
                                                 struct eb_diag *diag);
void eb_yolo_scratch_fini(struct eb_yolo_scratch *s);

/**
 * Decodes candidates above `conf` from `data` (float32, the output tensor) into
 * s->cand (model-input pixels, corner form); returns their count. Does not allocate.
 */
size_t eb_yolo_decode(const struct eb_yolo_layout_info *info, const float *data,
                      const struct eb_yolo_params *p, struct eb_yolo_scratch *s);

/**
 * Class-aware NMS over s->cand[0..n) (sorted by score, descending, ties by index), keeping at
 * most min(p->max_det, out->capacity) boxes in out (count set). Does not allocate.
 */
void eb_yolo_nms(struct eb_yolo_scratch *s, size_t n, const struct eb_yolo_params *p,
                 struct eb_detections *out);

/** IoU of two corner boxes (0 when either is empty). */
float eb_yolo_iou(const struct eb_detection *a, const struct eb_detection *b);

/** decode + NMS (skipped for END2END, which only thresholds) + unmap to the original frame. */
void eb_yolo_postprocess(const struct eb_yolo_layout_info *info, const float *data,
                         const struct eb_letterbox *lb, const struct eb_yolo_params *p,
                         struct eb_yolo_scratch *s, struct eb_detections *out);

#endif
