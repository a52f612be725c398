/*
 * Detection records shared by the YOLO post-processing, the pipeline and the reports.
 * Boxes are corner coordinates in pixels of the original frame.
 */
#ifndef EB_DETECT_H
#define EB_DETECT_H

#include <stddef.h>
#include <stdint.h>

struct eb_detection {
    float x1, y1, x2, y2;
    float score;
    int cls;
};

/**
 * One anchor of a [1, 4+nc, N] detection head (YOLOv8/YOLO11) whose best class score passed
 * the confidence threshold, as a device reduced it (eb_engine_reduce_head): the anchor's
 * index, its first best class, that score and its raw box (centre, size; model-input pixels).
 */
struct eb_anchor_row {
    int32_t anchor, cls;
    float score, cx, cy, w, h;
};

/** A caller-owned, fixed-capacity list (the pipeline allocates it before timing starts). */
struct eb_detections {
    struct eb_detection *items; /* capacity entries, owned by whoever allocated them */
    size_t count;
    size_t capacity;
};

#endif
