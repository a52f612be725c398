/*
 * Detection datasets in memory: images (file, size, COCO image_id), ground-truth boxes in
 * original-image pixels and category names, read from three layouts:
 *
 *   coco  DIR/annotations/<name>.json (COCO instances: images, annotations, categories); the images
 *         are looked up as DIR/images/<split>/<file_name>, DIR/images/<file_name>,
 *         DIR/<split>/<file_name> or DIR/<file_name> (split from instances_<split>.json)
 *   yolo  DIR/images/<split>/<name>.jpg|png|... with DIR/labels/<split>/<stem>.txt (normalised
 *         `class cx cy w h`, or `class x1 y1 x2 y2 ...` polygons whose bounding box is taken);
 *         sizes from the image headers; a missing label file is an image without objects;
 *         class names from DIR/data.yaml (`names:`), DIR/classes.txt or DIR/names.txt, else
 *         the caller's default names
 *   voc   Pascal VOC XML (DIR/annotations_voc/, DIR/Annotations/ or DIR/annotations/, <name>.xml) with
 *         the images in DIR/images/ or DIR/JPEGImages/; class order from DIR/category.txt,
 *         classes.txt or labels.txt, else the sorted names found in the files
 *
 *     struct eb_dataset_options o = {.format = EB_DATASET_AUTO};
 *     struct eb_dataset *ds = NULL;
 *     if (eb_dataset_load("datasets/coco128", &o, &ds, &diag) != EB_OK) puts(diag.msg);
 *     ... ds->images[i].path, ds->anns[k].bbox ...
 *     eb_dataset_destroy(ds);
 *
 * Conventions (what the evaluation relies on):
 * - bbox is [x, y, w, h] in pixels of the image as stored (no EXIF rotation is applied, as
 *   COCO's own annotations); area is COCO's `area` field for COCO JSON and w*h otherwise.
 * - image_id: COCO's `id`; for YOLO and VOC the numeric file stem when every stem is numeric
 *   and they are all distinct (000000000009.jpg -> 9, the COCO convention), else the index.
 * - YOLO category ids are the class indices; VOC category ids are the 0-based positions in
 *   the class list (HIT-UAV's own COCO file numbers them the same way).
 * - VOC boxes: x = xmin, y = ymin, w = xmax - xmin, h = ymax - ymin (as HIT-UAV's own COCO
 *   conversion); <difficult>1</difficult> objects become crowd regions (iscrowd = 1): they are
 *   never counted as misses, and detections on them are ignored rather than counted as false
 *   positives (VOC's own rule for difficult objects, expressed the way COCO tools understand).
 *
 * Thread-safety: a dataset is immutable after loading (except eb_dataset_keep_first) and may
 * be read from several threads.
 */
#ifndef EB_EVAL_DATASET_H
#define EB_EVAL_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "eb/diag.h"

enum eb_dataset_format {
    EB_DATASET_AUTO = 0, /* eb_dataset_load: coco when DIR/annotations/ has a .json, else yolo
                            when DIR/labels/ exists, else voc when an XML folder exists */
    EB_DATASET_COCO,
    EB_DATASET_YOLO,
    EB_DATASET_VOC,
};

/** "auto", "coco", "yolo", "voc". */
const char *eb_dataset_format_name(enum eb_dataset_format f);

struct eb_dataset_image {
    char *path;        /* the image file; owned by the dataset */
    int width, height; /* pixels */
    int64_t id;        /* image_id */
};

struct eb_dataset_ann {
    size_t image;        /* index into images */
    int64_t category_id; /* one of the categories' ids */
    double bbox[4];      /* x, y, w, h in original-image pixels */
    double area;         /* COCO `area`, or w*h */
    int iscrowd;         /* 1: a crowd/ignore region (COCO iscrowd, VOC difficult) */
};

struct eb_dataset_category {
    int64_t id;
    char *name; /* owned by the dataset */
};

#define EB_DATASET_TEXT_MAX 1024

struct eb_dataset {
    enum eb_dataset_format format;
    char source[EB_DATASET_TEXT_MAX]; /* the annotation file or folder that was read */
    char note[EB_DATASET_TEXT_MAX];   /* what a reader assumed or left out ("" when nothing) */
    struct eb_dataset_image *images;
    size_t n_images;
    struct eb_dataset_ann *anns;
    size_t n_anns;
    struct eb_dataset_category *cats;
    size_t n_cats;
    size_t images_missing; /* listed by the annotations but absent on disk: left out */
    /* Capacities of the arrays above (internal). */
    size_t cap_images, cap_anns, cap_cats;
};

struct eb_dataset_options {
    enum eb_dataset_format format; /* EB_DATASET_AUTO: detect the layout */
    const char *split; /* NULL: the only split, else "val", "val2017", "test" in that order;
                          coco: instances_<split>.json; borrowed */
    /* YOLO folders without a names file: names of class ids 0..n-1 (e.g. the 80 COCO names);
       NULL/0 = "class<N>". Borrowed; copied. */
    const char *const *default_names;
    size_t n_default_names;
    /* The command-line option that gave the folder, named in the messages ("check --calib");
       NULL = "--data". Borrowed. */
    const char *option;
};

/**
 * Reads the dataset in folder `dir` in the layout `opts->format` (or the detected one).
 * Fails with one line naming the file or folder and what to do: a missing folder or file
 * (EB_ERR_IO), a malformed annotation file or label line (EB_ERR_FORMAT with file and line or
 * byte offset), no images (EB_ERR_INVALID_ARG), several splits and no `opts->split`
 * (EB_ERR_INVALID_ARG listing them), EB_ERR_NOMEM. Images an annotation file lists but that
 * are not on disk are left out and counted in images_missing (an error when none is left).
 * Caller owns `*ds_out` (eb_dataset_destroy); written only on EB_OK.
 */
EB_NODISCARD enum eb_status eb_dataset_load(const char *dir, const struct eb_dataset_options *opts,
                                            struct eb_dataset **ds_out, struct eb_diag *diag);

/**
 * Reads a COCO instances JSON file. `images_dirs` (n entries, borrowed) are the folders tried,
 * in order, for each image's file_name (`file_name`, or `filename` as HIT-UAV writes it; the
 * annotations under `annotations` or `annotation`). Same failures and ownership as
 * eb_dataset_load.
 */
EB_NODISCARD enum eb_status eb_dataset_read_coco(const char *json_path,
                                                 const char *const *images_dirs, size_t n_dirs,
                                                 struct eb_dataset **ds_out, struct eb_diag *diag);

/**
 * Reads a YOLO-format split: every image in `images_dir` (sorted by name) and its label file
 * `labels_dir`/<stem>.txt. `names_dir` (may be NULL) is searched for data.yaml, classes.txt or
 * names.txt; without one the categories are `opts->default_names` when every class id is
 * below n_default_names, else "class<N>". Same failures and ownership as eb_dataset_load.
 */
EB_NODISCARD enum eb_status eb_dataset_read_yolo(const char *images_dir, const char *labels_dir,
                                                 const char *names_dir,
                                                 const struct eb_dataset_options *opts,
                                                 struct eb_dataset **ds_out, struct eb_diag *diag);

/**
 * Reads Pascal VOC XML files from `xml_dir` (sorted by name); each names its image by
 * <filename> (else <stem>.jpg), looked up in `images_dir`. `names_file` (may be NULL) gives the
 * class order, one name per line. Objects of a class not in that file are an error naming the
 * XML file. Same failures and ownership as eb_dataset_load.
 */
EB_NODISCARD enum eb_status eb_dataset_read_voc(const char *xml_dir, const char *images_dir,
                                                const char *names_file, struct eb_dataset **ds_out,
                                                struct eb_diag *diag);

/**
 * The image files (JPEG, PNG, BMP by extension) directly inside folder `dir`, as full paths
 * sorted by name; *n_out = 0 when there are none. EB_ERR_IO when the folder cannot be listed.
 * Caller frees with eb_dataset_paths_free.
 */
EB_NODISCARD enum eb_status eb_dataset_list_images(const char *dir, char ***paths_out,
                                                   size_t *n_out, struct eb_diag *diag);
void eb_dataset_paths_free(char **paths, size_t n);

/** Frees a dataset and everything it owns. Accepts NULL. */
void eb_dataset_destroy(struct eb_dataset *ds);

/** Keeps only the first `n` images (and their annotations); nothing when n >= n_images. */
void eb_dataset_keep_first(struct eb_dataset *ds, size_t n);

/** The category with id `id`, or NULL. */
const struct eb_dataset_category *eb_dataset_category_find(const struct eb_dataset *ds, int64_t id);

/**
 * Width and height of a JPEG, PNG or BMP file from its header (nothing is decoded); the format
 * is chosen by the magic bytes. EB_ERR_IO when the file cannot be read, EB_ERR_FORMAT naming
 * the file when it is not one of the three or its header is cut short. Outputs only on EB_OK.
 */
EB_NODISCARD enum eb_status eb_dataset_image_size(const char *path, int *width_out, int *height_out,
                                                  struct eb_diag *diag);

#endif
