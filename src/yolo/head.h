/*
 * Detection-head adapters: how the raw outputs of one detector family become candidate boxes
 * in model-input pixels (decode), then NMS and the mapping back to the frame (postprocess).
 * A `struct eb_head` is plain data resolved once at load time (by recognition from the graph,
 * a built-in family profile, --head or a --model_profile file); the decoders are pure
 * functions that never allocate.
 *
 *     struct eb_head h = ...;                       (kind, classes, strides, anchors, outputs)
 *     eb_head_scratch_init(&scratch, &h, diag);
 *     struct eb_head_output outs[2] = {{data0, shape0, 4}, {data1, shape1, 4}};
 *     eb_head_postprocess(&h, outs, 2, &lb, &params, &scratch, &dets);
 */
#ifndef EB_YOLO_HEAD_H
#define EB_YOLO_HEAD_H

#include <stddef.h>
#include <stdint.h>

#include "yolo/yolo.h"

enum eb_head_kind {
    EB_HEAD_UNKNOWN = 0,
    /* [1,4+nc,N]: Ultralytics YOLOv8/YOLO11; cx cy w h (input px) + class sigmoid scores. */
    EB_HEAD_V8,
    /* [1,N,5+nc]: YOLOv5 exported with its in-graph decode; cx cy w h (input px), objectness,
     * class scores (all sigmoid already). */
    EB_HEAD_V5,
    /* [1,N,5+nc], N = n_anchors * sum(cells): YOLOv5 / YOLOv5-Lite without the in-graph
     * decode. Per level, per anchor, row-major (y,x) cells. Channels are sigmoid in the graph
     * unless `sigmoid` is set (then the decoder applies it). cx = (2*c0 - 0.5 + gx) * stride,
     * cy likewise, w = (2*c2)^2 * anchor_w, h = (2*c3)^2 * anchor_h; score = obj * cls. */
    EB_HEAD_V5_RAW,
    /* [1,N,5+nc], N = sum(cells) over `strides`, row-major per level: YOLOX with
     * decode_in_inference off. cx = (c0 + gx) * stride, cy = (c1 + gy) * stride,
     * w = exp(c2) * stride, h = exp(c3) * stride; c4 objectness and c5.. classes sigmoid in the
     * graph (or applied here when `sigmoid` is set); score = obj * cls. */
    EB_HEAD_YOLOX,
    /* Per level two outputs: class scores [1,cells,nc] (sigmoid in the graph) at
     * out_index[l] and box distributions [1,cells,4*(reg_max+1)] at out_index[n_levels + l]:
     * sides l,t,r,b, softmax over each side's reg_max+1 bins, distance = sum(p_i * i) * stride;
     * anchor point ((x + 0.5) * stride, (y + 0.5) * stride); box = (px-l, py-t, px+r, py+b).
     * NanoDet (GFL). */
    EB_HEAD_NANODET,
    /* [1,5+nc,H,W] NCHW, one level (stride = in / H): c0 objectness (sigmoid in the graph),
     * c1..c4 raw box, c5.. class probabilities (softmax in the graph). score =
     * obj^0.6 * cls^0.4; cx = (gx + tanh(c1)) / W * in_w, cy = (gy + tanh(c2)) / H * in_h,
     * w = sigmoid(c3) * in_w, h = sigmoid(c4) * in_h. FastestDet. */
    EB_HEAD_FASTESTDET,
    /* Per level one NHWC output [1,H,W,4*A+A+nc] at out_index[l]: A = n_anchors (3) boxes
     * (tx,ty,tw,th) sigmoid, A objectness sigmoid, nc class probabilities (softmax) shared by
     * the anchors; decoded as V5_RAW; score = obj * cls. Yolo-FastestV2. */
    EB_HEAD_FASTESTV2,
    /* [1,K,6]: x1 y1 x2 y2 (input px) score class, NMS already done (YOLOv10, YOLO26). */
    EB_HEAD_END2END,
    /* Two outputs: class logits [1,Q,C] at out_index[0] and boxes [1,Q,4] at out_index[1]
     * (cx cy w h normalised to the input). detr_softmax: softmax over C with the last class
     * "no object" (nc = C - 1, DETR); else sigmoid per class (nc = C, Deformable/RT-DETR).
     * score = best class; no NMS (set prediction). */
    EB_HEAD_DETR,
    EB_HEAD_COUNT
};

#define EB_HEAD_MAX_LEVELS  5
#define EB_HEAD_MAX_ANCHORS 3
#define EB_HEAD_MAX_OUTPUTS 10

struct eb_head {
    enum eb_head_kind kind;
    int num_classes;
    int in_w, in_h; /* model input size (pixels) */
    /* Grid heads (V5_RAW, YOLOX, NANODET, FASTESTDET, FASTESTV2): levels in output order. */
    int n_levels;
    int strides[EB_HEAD_MAX_LEVELS];
    int grid_w[EB_HEAD_MAX_LEVELS], grid_h[EB_HEAD_MAX_LEVELS]; /* in / stride (cells) */
    int n_anchors;                                              /* per cell; 0 anchor-free */
    float anchors[EB_HEAD_MAX_LEVELS][EB_HEAD_MAX_ANCHORS][2];  /* w, h in input pixels */
    int sigmoid;      /* V5_RAW, YOLOX: apply sigmoid to obj/cls (and V5_RAW's box) here */
    int reg_max;      /* NANODET: bins per side - 1 (7) */
    int detr_softmax; /* DETR, see above */
    /* Which model output holds which tensor (see each kind); 0 for one-output heads. */
    int out_index[EB_HEAD_MAX_OUTPUTS];
    int n_outputs;    /* model outputs the head reads */
    size_t num_boxes; /* candidates the decoder can produce (scratch capacity) */
    int nms_agnostic; /* NMS over all classes together (FastestDet upstream) */
};

/** One model output as float32 (borrowed): `shape` has `rank` entries. */
struct eb_head_output {
    const float *data;
    const int64_t *shape;
    int rank;
};

/** "v8", "v5", "v5-raw", "yolox", "nanodet", "fastestdet", "fastestv2", "end2end", "detr";
 *  "unknown" for anything else. These are the --head names. */
const char *eb_head_name(enum eb_head_kind k);
/** The kind named `name` (as eb_head_name), EB_HEAD_UNKNOWN when none. */
enum eb_head_kind eb_head_from_name(const char *name);

/** Whether the kind's decoder skips NMS (END2END, DETR). */
int eb_head_is_set_prediction(enum eb_head_kind k);

/**
 * Allocates scratch for `h` (h->num_boxes candidates; see eb_yolo_scratch_init). On failure
 * `s` is left zeroed (safe to fini with eb_yolo_scratch_fini).
 */
EB_NODISCARD enum eb_status eb_head_scratch_init(struct eb_yolo_scratch *s, const struct eb_head *h,
                                                 struct eb_diag *diag);

/**
 * Decodes the candidates with score > p->conf from `outs` (n_outs model outputs in model
 * order, float32, borrowed) into s->cand (model-input pixels, corner form, decode order);
 * returns their count (at most s->capacity). The outputs' shapes must be those the head was
 * resolved for (eb_head_check_outputs). Does not allocate.
 */
size_t eb_head_decode(const struct eb_head *h, const struct eb_head_output *outs, size_t n_outs,
                      const struct eb_yolo_params *p, struct eb_yolo_scratch *s);

/**
 * EB_OK when `outs` (their shapes; data may be NULL) are what `h` reads: the referenced outputs
 * exist and have the sizes the kind, classes, levels and anchors imply. Else EB_ERR_UNSUPPORTED
 * with a message naming the head and the output that does not fit.
 */
EB_NODISCARD enum eb_status eb_head_check_outputs(const struct eb_head *h,
                                                  const struct eb_head_output *outs, size_t n_outs,
                                                  struct eb_diag *diag);

/**
 * decode + NMS (class-aware unless h->nms_agnostic or p->class_agnostic; none for set
 * prediction heads, which keep the best min(max_det, capacity) by score) + unmap to the frame.
 * `out->items` is caller-owned; `out->count` is set. Does not allocate.
 */
void eb_head_postprocess(const struct eb_head *h, const struct eb_head_output *outs, size_t n_outs,
                         const struct eb_letterbox *lb, const struct eb_yolo_params *p,
                         struct eb_yolo_scratch *s, struct eb_detections *out);

#endif
