/*
 * Which dataset category each of a model's classes counts as, for scoring a model on a
 * dataset whose classes are numbered or named differently (a COCO model on a thermal set).
 *
 * By name: each model class whose name equals a dataset category's name, ignoring ASCII case,
 * maps to that category. A class-map file replaces that matching entirely: only the classes it
 * lists are mapped. Its lines are `model_class = dataset_class`, each side a name (any case) or
 * a number (the model's class index, the dataset's category id); `#` starts a comment; blank
 * lines are skipped. Several model classes may map to one category (truck = OtherVehicle,
 * bus = OtherVehicle); a model class may appear once.
 *
 *     # COCO model on HIT-UAV
 *     person  = Person
 *     car     = Car
 *     bicycle = Bicycle
 *
 *     struct eb_classmap map;
 *     if (eb_classmap_read_file("hituav.map", names, 80, ds, &map, &diag) != EB_OK) ...
 *     int64_t cat = map.category[cls];   // EB_CLASSMAP_NONE: detections of cls are dropped
 *     eb_classmap_fini(&map);
 */
#ifndef EB_EVAL_CLASSMAP_H
#define EB_EVAL_CLASSMAP_H

#include <stddef.h>
#include <stdint.h>

#include "eb/diag.h"
#include "eval/dataset.h"

#define EB_CLASSMAP_NONE INT64_MIN

struct eb_classmap {
    int64_t *category; /* n_classes entries: a category id or EB_CLASSMAP_NONE; owned */
    size_t n_classes;
    size_t n_mapped; /* model classes with a category */
    int from_file;   /* 1: a class-map file, 0: by name */
};

/**
 * Maps model classes (`names`, n entries, borrowed; NULL entries match nothing) to the
 * categories of `ds` with the same name, ignoring ASCII case. `map_out` is caller memory,
 * written only on EB_OK; free with eb_classmap_fini. EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_classmap_by_name(const char *const *names, size_t n,
                                                const struct eb_dataset *ds,
                                                struct eb_classmap *map_out, struct eb_diag *diag);

/**
 * Parses class-map text (`what` names it in messages, e.g. the file). A line that is not
 * `a = b`, a model class that is neither a name of `names` nor an index below n, a dataset class
 * that is neither a category name nor a category id, or a model class listed twice is
 * EB_ERR_INVALID_ARG naming `what`, the line and the accepted values. Same ownership as
 * eb_classmap_by_name.
 */
EB_NODISCARD enum eb_status eb_classmap_parse(const char *text, const char *what,
                                              const char *const *names, size_t n,
                                              const struct eb_dataset *ds,
                                              struct eb_classmap *map_out, struct eb_diag *diag);

/** Reads file `path` and parses it with eb_classmap_parse; EB_ERR_IO when unreadable. */
EB_NODISCARD enum eb_status eb_classmap_read_file(const char *path, const char *const *names,
                                                  size_t n, const struct eb_dataset *ds,
                                                  struct eb_classmap *map_out,
                                                  struct eb_diag *diag);

/** Frees the map's array; accepts a zeroed map. */
void eb_classmap_fini(struct eb_classmap *map);

#endif
