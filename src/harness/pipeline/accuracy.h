/*
 * Accuracy inside a benchmark run (`run --data DIR`): a slot's dataset, the mapping of the
 * model's classes onto the dataset's, and the detections of the measured frames, scored at the
 * end with pycocotools' definitions (eval/coco_eval.h) as `edgebench val` scores them.
 *
 *     struct eb_accuracy *acc = NULL;
 *     if (eb_accuracy_create("datasets/coco128", NULL, &acc, &diag) != EB_OK) ...  // usage error
 *     // the slot's source reads acc->files (acc->ds->n_images paths) in that order
 *     eb_accuracy_bind(acc, names, n_names, num_classes, &diag);   // after the model loaded
 *     eb_accuracy_reset(acc);                                      // start of the measured pass
 *     eb_accuracy_add(acc, frame.file_index, &dets, &diag);        // every measured frame
 *     eb_accuracy_finish(acc, "run/detections_rgb.json", "detections_rgb.json", conf, 1,
 *                        &result, &diag);
 *     eb_accuracy_destroy(acc);
 *
 * Each image is scored once: a frame of an image already scored in this pass (the dataset
 * looping because --frames is larger than the dataset) adds nothing. The frames of a pass start
 * at the dataset's first image, so the scored images are a prefix of the dataset's order; the
 * evaluation covers that prefix (an undecodable image inside it counts as missed, as in val).
 *
 * Thread-safety: one object per slot; add/reset on the slot's thread, the rest on the thread
 * that owns the slot while no pass runs.
 */
#ifndef EB_ACCURACY_H
#define EB_ACCURACY_H

#include <stddef.h>
#include <stdint.h>

#include "eb/diag.h"
#include "eval/classmap.h"
#include "eval/coco_eval.h"
#include "eval/dataset.h"
#include "harness/results/result.h"
#include "yolo/yolo.h"

struct eb_accuracy {
    const char *data_dir;       /* borrowed */
    const char *class_map_path; /* borrowed; NULL = by name */
    struct eb_dataset *ds;      /* owned */
    const char **files;         /* n_images paths, borrowed from ds */
    struct eb_classmap map;
    const char **model_names; /* n_model_names entries, borrowed strings; NULL = unnamed */
    size_t n_model_names;
    int names_assumed; /* the model has no names: the 80 COCO names were taken */
    int64_t *cats;     /* evaluated category ids, ascending */
    size_t n_cats;
    struct eb_coco_det *dets;
    size_t n_dets, cap_dets;
    unsigned char *scored; /* per image: its detections are in dets */
    size_t n_scored;
    size_t last_scored;    /* highest scored image index + 1 */
    uint64_t dropped;      /* detections of unmapped model classes */
    int max_det;           /* per image, all classes together: the best this many are kept (the
                           COCO results rule); set by create to EB_COCO_MAX_DETS */
    uint64_t over_max_det; /* detections left out by max_det */
};

/**
 * Loads the dataset in `data_dir` (format detected as `edgebench val` does; YOLO folders
 * without names take the 80 COCO names) and checks that `class_map` (may be NULL) is a file.
 * Both strings are borrowed and must outlive the object. One line in `diag` naming the folder
 * or file and what to do: EB_ERR_IO, EB_ERR_FORMAT, EB_ERR_INVALID_ARG, EB_ERR_NOMEM.
 * Caller owns `*acc_out` (eb_accuracy_destroy); written only on EB_OK.
 */
EB_NODISCARD enum eb_status eb_accuracy_create(const char *data_dir, const char *class_map,
                                               struct eb_accuracy **acc_out, struct eb_diag *diag);

/**
 * As eb_accuracy_create, over a dataset the caller loaded (`edgebench val`: its --format,
 * --split and --max_images). Takes ownership of `ds` in every case (destroyed on failure).
 * `data_dir` and `class_map` are borrowed and only named in the results. EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_accuracy_create_from(struct eb_dataset *ds, const char *data_dir,
                                                    const char *class_map,
                                                    struct eb_accuracy **acc_out,
                                                    struct eb_diag *diag);

/**
 * Maps the model's classes onto the dataset's: by the class-map file, else by name (ignoring
 * case). `names` (n_names entries, borrowed for the object's lifetime) are the model's class
 * names; with none and 80 classes the COCO names are assumed. EB_ERR_INVALID_ARG when the map
 * file is wrong or no class maps (the message says what to do); EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_accuracy_bind(struct eb_accuracy *acc, const char *const *names,
                                             size_t n_names, int num_classes, struct eb_diag *diag);

/** Forgets the detections collected so far (a new measured pass). */
void eb_accuracy_reset(struct eb_accuracy *acc);

/**
 * Adds the detections `d` (original-image pixels, borrowed) of dataset image `image`: mapped
 * to categories (unmapped classes dropped and counted), the best acc->max_det by score kept
 * (equal scores in their given order; the rest counted in over_max_det), boxes rounded to 1/1000 pixel and
 * scores to 1e-5 as in val's detections.json. Nothing when `image` is out of range or already
 * scored in this pass. EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_accuracy_add(struct eb_accuracy *acc, int64_t image,
                                            const struct eb_detections *d, struct eb_diag *diag);

/**
 * Scores the collected detections over the scored prefix of the dataset, writes them to
 * `det_path` (COCO results format; `det_name` is how the report names the file) and returns a
 * new result in `*out` (caller owns it: eb_accuracy_result_destroy; written only on EB_OK).
 * `conf` is the threshold the slot detected at, `conf_default` 1 when it was chosen because
 * --conf was not given. A detections file that cannot be written is no failure: the result
 * says why in detections_error (detections_file ""). EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_accuracy_finish(struct eb_accuracy *acc, const char *det_path,
                                               const char *det_name, double conf, int conf_default,
                                               struct eb_accuracy_result **out,
                                               struct eb_diag *diag);

/** Frees the object and everything it owns. Accepts NULL. */
void eb_accuracy_destroy(struct eb_accuracy *acc);

#endif
