/*
 * COCO detection metrics with pycocotools' definitions (COCOeval, iouType "bbox"), and the
 * COCO results file (detections.json) that any COCO tool can re-score.
 *
 * What is computed, as COCOeval.evaluate/accumulate/summarize do it:
 * - IoU thresholds .50:.05:.95 (10, numpy linspace values), 101 recall thresholds 0:.01:1,
 *   maxDets 1/10/100, area ranges all [0, 1e10], small [0, 32^2], medium [32^2, 96^2],
 *   large [96^2, 1e10] (both ends inclusive; the gt's `area`, the detection's w*h).
 * - Per image and category: detections sorted by score (stable), at most 100 kept; ground
 *   truth sorted non-ignored first (ignored = crowd or outside the area range); each detection
 *   in turn takes the unmatched gt with the highest IoU >= the threshold (ties: the later gt),
 *   stopping at the first ignored gt once a regular one matched; crowd gts stay matchable and
 *   their IoU is intersection / detection area. A detection matched to an ignored gt is
 *   ignored; an unmatched detection outside the area range is ignored.
 * - Per category: the images' kept detections (images in ascending image_id order) sorted by
 *   score (stable), cumulative TP/FP, precision made monotone from the right, sampled at the
 *   first rank whose recall reaches each recall threshold (0 beyond the last); recall = the
 *   final recall. Categories without non-ignored gt give -1 and are left out of every mean.
 * - AP = mean precision over thresholds, recall points and categories; AR = mean recall.
 *
 * What is added in the way of Ultralytics' `yolo val` (ultralytics/utils/metrics.py), from the
 * same matching at IoU .50 (area all, 100 detections; ignored detections left out):
 * - precision and recall per category at the confidence that maximises the mean F1 over the
 *   categories with gt (ap_per_class: on a grid of EB_COCO_NUM_CONF confidences 0..1, each
 *   category's precision and recall are interpolated linearly between its detections' scores,
 *   precision 1 and recall 0 above the best score; F1 = 2PR/(P+R); the mean F1 curve is
 *   smoothed by a box filter of 101 points, edges repeated, and its first maximum is taken);
 * - the precision-recall curve at IoU .50: COCOeval's interpolated precision at the 101 recall
 *   points (whose mean is AP50), per category and averaged over the categories with gt.
 *
 *     struct eb_coco_result r;
 *     if (eb_coco_evaluate(ds, dets, n, cat_ids, n_cats, &r, &diag) == EB_OK) {
 *         printf("mAP50-95 %.3f\n", r.map);
 *         eb_coco_result_fini(&r);
 *     }
 */
#ifndef EB_EVAL_COCO_EVAL_H
#define EB_EVAL_COCO_EVAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "eb/diag.h"
#include "eb/json.h"
#include "eval/dataset.h"

#define EB_COCO_NUM_IOU  10
#define EB_COCO_NUM_REC  101
#define EB_COCO_NUM_AREA 4 /* all, small, medium, large */
#define EB_COCO_MAX_DETS 100
#define EB_COCO_NUM_CONF 1000 /* the confidence grid of the best-F1 search (Ultralytics') */

/** One detection, in original-image pixels. */
struct eb_coco_det {
    size_t image;        /* index into the dataset's images */
    int64_t category_id; /* a dataset category id */
    double bbox[4];      /* x, y, w, h */
    double score;
};

struct eb_coco_class_result {
    int64_t category_id;
    const char *name; /* the dataset's name, borrowed from the dataset */
    size_t gt;        /* non-crowd ground-truth boxes */
    size_t crowd;     /* crowd (ignore) regions */
    size_t images;    /* images with at least one non-crowd box of the class */
    size_t dets;      /* detections given for the class */
    double ap;        /* AP50-95, area all, 100 detections; -1 without gt */
    double ap50, ap75;
    double ar100;    /* AR50-95 with 100 detections; -1 without gt */
    double p, r, f1; /* precision, recall and F1 at the best-F1 confidence; -1 without gt */
    double pr50[EB_COCO_NUM_REC]; /* precision at recall 0, .01, ..., 1 (IoU .50); -1 without gt */
};

struct eb_coco_result {
    double map;   /* AP@[.50:.95], all areas, maxDets 100 (COCOeval stats[0]) */
    double map50; /* stats[1] */
    double map75; /* stats[2] */
    double map_small, map_medium, map_large; /* stats[3..5] */
    double ar1, ar10, ar100;                 /* stats[6..8] */
    double ar_small, ar_medium, ar_large;    /* stats[9..11] */
    size_t n_images;                         /* images evaluated */
    size_t n_gt, n_crowd;                    /* boxes of the evaluated categories */
    size_t n_dets;                           /* detections of the evaluated categories */
    size_t n_dets_kept; /* of them, within the 100 best per image and category */
    size_t n_classes_with_gt;
    double best_conf;             /* the confidence of the best mean F1 (0 without gt) */
    double mp, mr, mf1;           /* means over the categories with gt of p, r, f1; -1 without gt */
    double pr50[EB_COCO_NUM_REC]; /* mean of the categories' pr50; -1 without gt */
    struct eb_coco_class_result *classes; /* one per evaluated category, ascending id; owned */
    size_t n_classes;
};

/**
 * Evaluates `dets` (n_dets, borrowed; any order — detections of one image and category keep
 * their given order among equal scores) against the ground truth of `ds` for the categories
 * `cat_ids` (n_cat_ids, borrowed; NULL = every category of ds; duplicates are merged).
 * Detections of other categories, or of an image index out of range, are not counted.
 * `out` is caller memory, written only on EB_OK; free with eb_coco_result_fini.
 * EB_ERR_INVALID_ARG for a category id not in ds; EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_coco_evaluate(const struct eb_dataset *ds,
                                             const struct eb_coco_det *dets, size_t n_dets,
                                             const int64_t *cat_ids, size_t n_cat_ids,
                                             struct eb_coco_result *out, struct eb_diag *diag);

/** Frees the result's arrays; accepts a zeroed result. */
void eb_coco_result_fini(struct eb_coco_result *r);

/**
 * Writes the result as one JSON object: the twelve COCOeval statistics under their names
 * (map, map50, ..., ar_large), the counts, best_conf, mp, mr, mf1, "pr50" (the mean curve:
 * 101 precisions at recall 0:.01:1) and a "classes" array (category_id, name, gt, crowd, images,
 * dets, ap, ap50, ap75, ar100, p, r, f1, pr50; -1 where a class has no gt, pr50 then null).
 */
void eb_coco_result_write_json(const struct eb_coco_result *r, struct eb_json_writer *w);

/**
 * Writes `dets` in the COCO results format: a JSON array of
 * {"image_id", "category_id", "bbox": [x, y, w, h], "score"}, image_id from ds. Numbers are
 * written so that they read back as the same doubles. EB_ERR_IO naming `path` when the file
 * cannot be written. `dets` and `ds` are borrowed.
 */
EB_NODISCARD enum eb_status eb_coco_write_detections(const char *path, const struct eb_dataset *ds,
                                                     const struct eb_coco_det *dets, size_t n_dets,
                                                     struct eb_diag *diag);

/** As eb_coco_write_detections, into a JSON writer (file or memory). */
void eb_coco_write_detections_json(const struct eb_dataset *ds, const struct eb_coco_det *dets,
                                   size_t n_dets, struct eb_json_writer *w);

#endif
