/*
 * How far one run of a model drifts from a reference run on the same inputs (fp16 against
 * fp32): the largest and mean absolute difference of the raw output, and how many of the
 * reference's detections the other run reproduces (same class, IoU at least a threshold).
 */
#include <math.h>

#include "yolo/yolo.h"

void eb_yolo_drift_add_output(struct eb_yolo_drift *d, const float *ref, const float *test,
                              size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const double diff = fabs((double)ref[i] - (double)test[i]);
        if (!(diff == diff)) { /* NaN on one side only: as large a drift as there is */
            if (ref[i] == ref[i] || test[i] == test[i])
                d->max_abs = INFINITY;
            continue;
        }
        d->max_abs = diff > d->max_abs ? diff : d->max_abs;
        d->sum_abs += diff;
    }
    d->n_elems += n;
}

void eb_yolo_drift_add_dets(struct eb_yolo_drift *d, const struct eb_detections *ref,
                            const struct eb_detections *test, float iou_min, unsigned char *used)
{
    for (size_t j = 0; j < test->count; j++)
        used[j] = 0;
    for (size_t i = 0; i < ref->count; i++) {
        const struct eb_detection *r = &ref->items[i];
        size_t best = test->count;
        float best_iou = iou_min;
        for (size_t j = 0; j < test->count; j++) {
            if (used[j] || test->items[j].cls != r->cls)
                continue;
            const float iou = eb_yolo_iou(r, &test->items[j]);
            if (iou >= best_iou && (best == test->count || iou > best_iou)) {
                best = j;
                best_iou = iou;
            }
        }
        if (best < test->count) {
            used[best] = 1;
            d->boxes_matched++;
        }
    }
    d->boxes_ref += ref->count;
    d->boxes_test += test->count;
    d->frames++;
}
