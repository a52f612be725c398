/*
 * Detection records shared by the YOLO post-processing, the pipeline and the reports.
 * Boxes are corner coordinates in pixels of the original frame.
 */
#ifndef EB_DETECT_H
#define EB_DETECT_H

#include <stddef.h>

struct eb_detection {
    float x1, y1, x2, y2;
    float score;
    int cls;
};

/** A caller-owned, fixed-capacity list (the pipeline allocates it before timing starts). */
struct eb_detections {
    struct eb_detection *items; /* capacity entries, owned by whoever allocated them */
    size_t count;
    size_t capacity;
};

#endif
