/*
 * `run --data`: a slot's dataset, class map and the measured frames' detections, scored with
 * eval/coco_eval.c as `edgebench val` scores them (harness/pipeline/accuracy.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/pipeline/accuracy.h"
#include "model/model.h"

void eb_accuracy_destroy(struct eb_accuracy *acc)
{
    if (acc == NULL)
        return;
    eb_dataset_destroy(acc->ds);
    eb_classmap_fini(&acc->map);
    free(acc->files);
    free(acc->model_names);
    free(acc->cats);
    free(acc->dets);
    free(acc->scored);
    free(acc);
}

enum eb_status eb_accuracy_create(const char *data_dir, const char *class_map,
                                  struct eb_accuracy **acc_out, struct eb_diag *diag)
{
    size_t n_coco = 0;
    const char *const *coco = eb_model_coco_names(&n_coco);
    struct eb_dataset_options dopt = {
        .format = EB_DATASET_AUTO, .default_names = coco, .n_default_names = n_coco};
    struct stat sb;
    if (class_map != NULL && (stat(class_map, &sb) != 0 || !S_ISREG(sb.st_mode)))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "class map %s: no such file; give a file of `model_class = "
                            "dataset_class` lines",
                            class_map);
    struct eb_dataset *ds = NULL;
    enum eb_status st = eb_dataset_load(data_dir, &dopt, &ds, diag);
    if (st != EB_OK)
        return st;
    return eb_accuracy_create_from(ds, data_dir, class_map, acc_out, diag);
}

enum eb_status eb_accuracy_create_from(struct eb_dataset *ds, const char *data_dir,
                                       const char *class_map, struct eb_accuracy **acc_out,
                                       struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_NOMEM;
    struct eb_accuracy *acc = calloc(1, sizeof(*acc));
    if (acc == NULL) {
        eb_dataset_destroy(ds);
        return eb_diag_fail(diag, st, "out of memory");
    }
    acc->ds = ds;
    acc->max_det = EB_COCO_MAX_DETS;
    acc->data_dir = data_dir;
    acc->class_map_path = class_map;
    acc->files = calloc(ds->n_images ? ds->n_images : 1, sizeof(*acc->files));
    acc->scored = calloc(ds->n_images ? ds->n_images : 1, 1);
    if (acc->files == NULL || acc->scored == NULL) {
        eb_diag_fail(diag, st, "out of memory for %zu images", ds->n_images);
        eb_accuracy_destroy(acc);
        return st;
    }
    for (size_t i = 0; i < ds->n_images; i++)
        acc->files[i] = ds->images[i].path;
    *acc_out = acc;
    return EB_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

enum eb_status eb_accuracy_bind(struct eb_accuracy *acc, const char *const *names, size_t n_names,
                                int num_classes, struct eb_diag *diag)
{
    const size_t nc = num_classes > 0 ? (size_t)num_classes : 0;
    acc->model_names = calloc(nc ? nc : 1, sizeof(*acc->model_names));
    if (acc->model_names == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
    acc->n_model_names = nc;
    size_t n_coco = 0;
    const char *const *coco = eb_model_coco_names(&n_coco);
    for (size_t c = 0; c < nc; c++) {
        if (c < n_names)
            acc->model_names[c] = names[c];
        else if (n_names == 0 && nc == n_coco)
            acc->model_names[c] = coco[c];
    }
    acc->names_assumed = n_names == 0 && nc == n_coco;
    enum eb_status st = acc->class_map_path != NULL
                            ? eb_classmap_read_file(acc->class_map_path, acc->model_names, nc,
                                                    acc->ds, &acc->map, diag)
                            : eb_classmap_by_name(acc->model_names, nc, acc->ds, &acc->map, diag);
    if (st != EB_OK)
        return st;
    if (acc->map.n_mapped == 0) {
        char model[160] = "", data[160] = "";
        size_t off = 0;
        for (size_t c = 0; c < nc && c < 5 && off < sizeof(model); c++)
            off += (size_t)snprintf(model + off, sizeof(model) - off, "%s%s", c ? ", " : "",
                                    acc->model_names[c] ? acc->model_names[c] : "(unnamed)");
        off = 0;
        for (size_t c = 0; c < acc->ds->n_cats && c < 5 && off < sizeof(data); c++)
            off += (size_t)snprintf(data + off, sizeof(data) - off, "%s%s", c ? ", " : "",
                                    acc->ds->cats[c].name);
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "no class of the model (%s...) maps to a class of the dataset "
                            "(%s...); give a class map (--class_map FILE) with `model_class = "
                            "dataset_class` lines",
                            model, data);
    }
    acc->cats = malloc(acc->map.n_classes * sizeof(*acc->cats) + 1);
    if (acc->cats == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
    for (size_t c = 0; c < acc->map.n_classes; c++)
        if (acc->map.category[c] != EB_CLASSMAP_NONE)
            acc->cats[acc->n_cats++] = acc->map.category[c];
    qsort(acc->cats, acc->n_cats, sizeof(*acc->cats), cmp_i64);
    size_t k = 0;
    for (size_t i = 0; i < acc->n_cats; i++)
        if (k == 0 || acc->cats[k - 1] != acc->cats[i])
            acc->cats[k++] = acc->cats[i];
    acc->n_cats = k;
    return EB_OK;
}

void eb_accuracy_reset(struct eb_accuracy *acc)
{
    acc->n_dets = 0;
    acc->n_scored = 0;
    acc->last_scored = 0;
    acc->dropped = 0;
    acc->over_max_det = 0;
    memset(acc->scored, 0, acc->ds->n_images);
}

static double round_to(double v, double scale)
{
    return round(v * scale) / scale;
}

enum eb_status eb_accuracy_add(struct eb_accuracy *acc, int64_t image,
                               const struct eb_detections *d, struct eb_diag *diag)
{
    if (image < 0 || (uint64_t)image >= acc->ds->n_images || acc->scored[image])
        return EB_OK;
    if (acc->n_dets + d->count > acc->cap_dets) {
        size_t nc = acc->cap_dets ? acc->cap_dets * 2 : 4096;
        while (nc < acc->n_dets + d->count)
            nc *= 2;
        struct eb_coco_det *p = realloc(acc->dets, nc * sizeof(*p));
        if (p == NULL)
            return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory for %zu detections", nc);
        acc->dets = p;
        acc->cap_dets = nc;
    }
    const size_t first = acc->n_dets;
    for (size_t i = 0; i < d->count; i++) {
        const struct eb_detection *e = &d->items[i];
        if (e->cls < 0 || (size_t)e->cls >= acc->map.n_classes ||
            acc->map.category[e->cls] == EB_CLASSMAP_NONE) {
            acc->dropped++;
            continue;
        }
        /* As val writes them: these exact values are evaluated and written, so any COCO tool
           re-scores the file identically. */
        struct eb_coco_det *c = &acc->dets[acc->n_dets++];
        c->image = (size_t)image;
        c->category_id = acc->map.category[e->cls];
        c->bbox[0] = round_to(e->x1, 1e3);
        c->bbox[1] = round_to(e->y1, 1e3);
        c->bbox[2] = round_to((double)e->x2 - (double)e->x1, 1e3);
        c->bbox[3] = round_to((double)e->y2 - (double)e->y1, 1e3);
        c->score = round_to(e->score, 1e5);
    }
    /* At most max_det per image, all classes together (the COCO results rule): the image's
     * detections by score, stable (an insertion sort: NMS keeps at most a few hundred). */
    struct eb_coco_det *v = acc->dets + first;
    const size_t n = acc->n_dets - first;
    for (size_t i = 1; i < n; i++) {
        struct eb_coco_det t = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1].score < t.score; j--)
            v[j] = v[j - 1];
        v[j] = t;
    }
    const size_t cap = acc->max_det > 0 ? (size_t)acc->max_det : 0;
    if (n > cap) {
        acc->over_max_det += n - cap;
        acc->n_dets = first + cap;
    }
    acc->scored[image] = 1;
    acc->n_scored++;
    if ((size_t)image + 1 > acc->last_scored)
        acc->last_scored = (size_t)image + 1;
    return EB_OK;
}

enum eb_status eb_accuracy_finish(struct eb_accuracy *acc, const char *det_path,
                                  const char *det_name, double conf, int conf_default,
                                  struct eb_accuracy_result **out, struct eb_diag *diag)
{
    const size_t dataset_images = acc->ds->n_images;
    /* The scored images are the first last_scored of the dataset's order. */
    eb_dataset_keep_first(acc->ds, acc->last_scored);
    struct eb_coco_result res;
    memset(&res, 0, sizeof(res));
    struct eb_accuracy_result *a = calloc(1, sizeof(*a));
    if (a == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
    enum eb_status st =
        eb_coco_evaluate(acc->ds, acc->dets, acc->n_dets, acc->cats, acc->n_cats, &res, diag);
    /* A detections file that cannot be written loses that file, not the scores. */
    struct eb_diag wd = {0};
    if (st == EB_OK &&
        eb_coco_write_detections(det_path, acc->ds, acc->dets, acc->n_dets, &wd) != EB_OK)
        snprintf(a->detections_error, sizeof(a->detections_error), "%s", wd.msg);
    if (st == EB_OK && res.n_classes > 0) {
        a->per_class = calloc(res.n_classes, sizeof(*a->per_class));
        if (a->per_class == NULL)
            st = eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
    }
    if (st != EB_OK)
        goto fail;
    snprintf(a->dataset, sizeof(a->dataset), "%s", acc->data_dir);
    snprintf(a->format, sizeof(a->format), "%s", eb_dataset_format_name(acc->ds->format));
    snprintf(a->class_map, sizeof(a->class_map), "%s",
             acc->class_map_path ? acc->class_map_path : "");
    a->dataset_images = dataset_images;
    a->images = acc->last_scored;
    a->images_undecodable = acc->last_scored - acc->n_scored;
    a->gt_boxes = res.n_gt;
    a->crowd_regions = res.n_crowd;
    a->detections = res.n_dets;
    a->detections_dropped = acc->dropped;
    a->classes_mapped = acc->map.n_mapped;
    a->model_classes = acc->map.n_classes;
    a->names_assumed = acc->names_assumed;
    a->conf = conf;
    a->conf_default = conf_default;
    a->map50_95 = res.map;
    a->map50 = res.map50;
    a->map75 = res.map75;
    a->ap_small = res.map_small;
    a->ap_medium = res.map_medium;
    a->ap_large = res.map_large;
    for (size_t i = 0; i < res.n_classes; i++) {
        const struct eb_coco_class_result *c = &res.classes[i];
        struct eb_accuracy_class *o = &a->per_class[i];
        o->category_id = c->category_id;
        snprintf(o->name, sizeof(o->name), "%s", c->name ? c->name : "");
        o->gt = c->gt;
        o->images = c->images;
        o->dets = c->dets;
        o->ap = c->ap;
        o->ap50 = c->ap50;
    }
    a->n_per_class = res.n_classes;
    if (a->detections_error[0] == '\0')
        snprintf(a->detections_file, sizeof(a->detections_file), "%s", det_name);
    eb_coco_result_fini(&res);
    *out = a;
    return EB_OK;
fail:
    eb_coco_result_fini(&res);
    eb_accuracy_result_destroy(a);
    return st;
}
