/*
 * The detection confusion matrix of Ultralytics' `yolo val` (ultralytics/utils/metrics.py,
 * ConfusionMatrix.process_batch), over the categories a validation evaluates plus "background":
 *
 * - per image, the detections with score > conf (0.25) against the image's non-crowd ground
 *   truth of those categories, whatever the classes: every (gt, detection) pair with IoU > iou
 *   (0.45) is a candidate; candidates by IoU, highest first, keep one per detection, then one
 *   per gt;
 * - a gt with a kept pair counts at [the detection's category][the gt's category] (the diagonal
 *   when the classes agree); a gt without one at [background][its category] (missed);
 * - a detection left without a pair counts at [its category][background] (a false positive).
 *
 * Rows are the predicted class, columns the true class; index n (the last) is background, and
 * [background][background] stays 0.
 *
 *     struct eb_confusion cm;
 *     if (eb_confusion_compute(ds, dets, n, cats, n_cats, EB_CONFUSION_CONF, EB_CONFUSION_IOU,
 *                              &cm, &diag) == EB_OK) {
 *         uint64_t missed_person = cm.m[cm.n * (cm.n + 1) + 0];
 *         eb_confusion_fini(&cm);
 *     }
 */
#ifndef EB_EVAL_CONFUSION_H
#define EB_EVAL_CONFUSION_H

#include <stddef.h>
#include <stdint.h>

#include "eb/diag.h"
#include "eb/json.h"
#include "eval/coco_eval.h"
#include "eval/dataset.h"

#define EB_CONFUSION_CONF 0.25 /* Ultralytics' ConfusionMatrix(conf=0.25) */
#define EB_CONFUSION_IOU  0.45 /* and iou_thres=0.45 */

struct eb_confusion {
    size_t n;         /* categories; the matrix is (n + 1) x (n + 1) */
    int64_t *cats;    /* n category ids, ascending (owned) */
    uint64_t *m;      /* row-major [predicted][true], index n = background (owned) */
    double conf, iou; /* the thresholds it was computed with */
};

/**
 * Computes the matrix of `dets` (n_dets, borrowed, original-image pixels) against the ground
 * truth of `ds` for the categories `cats` (n_cats ids of ds, borrowed; duplicates merged).
 * Detections of other categories or images out of range are left out, as are gt boxes of other
 * categories and crowd regions. `out` is caller memory, written only on EB_OK; free it with
 * eb_confusion_fini. EB_ERR_INVALID_ARG for a category id not in ds; EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_confusion_compute(const struct eb_dataset *ds,
                                                 const struct eb_coco_det *dets, size_t n_dets,
                                                 const int64_t *cats, size_t n_cats, double conf,
                                                 double iou, struct eb_confusion *out,
                                                 struct eb_diag *diag);

/** The count at [pred][truth] (EB_ASSERT-free: out-of-range indices give 0). */
uint64_t eb_confusion_at(const struct eb_confusion *cm, size_t pred, size_t truth);

/**
 * Writes {"conf", "iou", "classes": [n names from ds, then "background"], "matrix": rows of
 * counts, row = predicted, column = true}. `ds` names the categories (borrowed).
 */
void eb_confusion_write_json(const struct eb_confusion *cm, const struct eb_dataset *ds,
                             struct eb_json_writer *w);

/** Frees what the matrix owns; accepts a zeroed one. */
void eb_confusion_fini(struct eb_confusion *cm);

#endif
