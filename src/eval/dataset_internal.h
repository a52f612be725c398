/*
 * Internals shared by the dataset readers (dataset.c, dataset_coco.c, dataset_yolo.c,
 * dataset_voc.c). Not for other components: they use dataset.h only.
 */
#ifndef EB_EVAL_DATASET_INTERNAL_H
#define EB_EVAL_DATASET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "eval/dataset.h"

/* Largest annotation or label file read whole into memory. */
#define EB_DATASET__MAX_FILE_BYTES ((size_t)1 << 30)
/* Longest path built from a folder and a file name. */
#define EB_DATASET__PATH_MAX 4096

/** A new empty dataset of `format` whose source is `source` (copied). NULL when out of memory. */
struct eb_dataset *eb_dataset__create(enum eb_dataset_format format, const char *source);

/** Appends an image (`path` copied). EB_ERR_NOMEM. */
EB_NODISCARD enum eb_status eb_dataset__add_image(struct eb_dataset *ds, const char *path,
                                                  int width, int height, int64_t id,
                                                  struct eb_diag *diag);
/** Appends an annotation (copied). EB_ERR_NOMEM. */
EB_NODISCARD enum eb_status
eb_dataset__add_ann(struct eb_dataset *ds, const struct eb_dataset_ann *ann, struct eb_diag *diag);
/** Appends a category (`name` copied). EB_ERR_NOMEM. */
EB_NODISCARD enum eb_status eb_dataset__add_cat(struct eb_dataset *ds, int64_t id, const char *name,
                                                struct eb_diag *diag);

/**
 * Sets every image's id to its numeric file stem when all stems are decimal numbers that fit
 * an int64 and are distinct; otherwise to its index. Returns 1 when the stems were used.
 */
int eb_dataset__assign_ids(struct eb_dataset *ds);

/**
 * The names in folder `dir` for which `keep(name)` is non-zero (NULL keeps all regular
 * entries), sorted by strcmp. Caller frees with eb_dataset__names_free. EB_ERR_IO naming the
 * folder when it cannot be opened; EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_dataset__list(const char *dir, int (*keep)(const char *name),
                                             char ***names_out, size_t *n_out,
                                             struct eb_diag *diag);
void eb_dataset__names_free(char **names, size_t n);

/** Reads a whole file into a NUL-terminated malloc'd buffer, without a leading UTF-8 byte-order
 * mark. EB_ERR_IO naming the file. */
EB_NODISCARD enum eb_status eb_dataset__read_file(const char *path, char **buf_out, size_t *len_out,
                                                  struct eb_diag *diag);

/** `a`/`b` into buf; EB_ERR_INVALID_ARG naming the path when it does not fit. */
EB_NODISCARD enum eb_status eb_dataset__join(char *buf, size_t size, const char *a, const char *b,
                                             struct eb_diag *diag);

/** 1 when `path` is a directory / a regular file. */
int eb_dataset__is_dir(const char *path);
/* opts->option, or "--data" (opts may be NULL): the option the messages name. */
const char *eb_dataset__option(const struct eb_dataset_options *opts);
int eb_dataset__is_file(const char *path);

/** 1 when `name` ends in .jpg .jpeg .png or .bmp (any case). */
int eb_dataset__is_image_name(const char *name);

/** Index of the category named exactly `name`, or -1. */
long eb_dataset__find_name(const struct eb_dataset *ds, const char *name);

/** Case-insensitive ASCII string equality. */
int eb_dataset__name_eq(const char *a, const char *b);

#endif
