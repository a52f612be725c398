/*
 * COCO instances JSON: images, annotations and categories, through the JSON DOM reader.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/json.h"
#include "eval/dataset_internal.h"

struct id_index {
    int64_t id;
    size_t index;
};

static int cmp_id_index(const void *a, const void *b)
{
    const struct id_index *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* An integral JSON number as int64 into *out; 0 when absent or not integral. */
static int get_int(const struct eb_json_value *obj, const char *key, int64_t *out)
{
    const struct eb_json_value *v = eb_json_get(obj, key);
    if (v == NULL || v->type != EB_JSON_NUMBER || !isfinite(v->num) || v->num != floor(v->num) ||
        fabs(v->num) > 9007199254740992.0)
        return 0;
    *out = (int64_t)v->num;
    return 1;
}

static int get_num(const struct eb_json_value *obj, const char *key, double *out)
{
    const struct eb_json_value *v = eb_json_get(obj, key);
    if (v == NULL || v->type != EB_JSON_NUMBER || !isfinite(v->num))
        return 0;
    *out = v->num;
    return 1;
}

static const struct eb_json_value *get_array(const struct eb_json_value *obj, const char *key)
{
    const struct eb_json_value *v = eb_json_get(obj, key);
    return v != NULL && v->type == EB_JSON_ARRAY ? v : NULL;
}

static enum eb_status read_categories(struct eb_dataset *ds, const struct eb_json_value *root,
                                      const char *path, struct eb_diag *diag)
{
    const struct eb_json_value *cats = get_array(root, "categories");
    if (cats == NULL)
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to read %s: no \"categories\" array; give a COCO instances "
                            "file",
                            path);
    for (size_t i = 0; i < cats->n; i++) {
        const struct eb_json_value *c = &cats->items[i];
        const struct eb_json_value *name = eb_json_get(c, "name");
        int64_t id;
        if (c->type != EB_JSON_OBJECT || !get_int(c, "id", &id) || name == NULL ||
            name->type != EB_JSON_STRING)
            return eb_diag_fail(diag, EB_ERR_FORMAT,
                                "failed to read %s: categories[%zu] needs an integer \"id\" and "
                                "a \"name\"; fix the file",
                                path, i);
        if (eb_dataset_category_find(ds, id) != NULL)
            return eb_diag_fail(diag, EB_ERR_FORMAT,
                                "failed to read %s: category id %lld appears twice; fix the file",
                                path, (long long)id);
        enum eb_status st = eb_dataset__add_cat(ds, id, name->str, diag);
        if (st != EB_OK)
            return st;
    }
    return EB_OK;
}

/* Whether a COCO file_name points outside the folder it is joined to: absolute, or with a ".."
 * part (images are read only from the dataset's own folders). */
static int leaves_folder(const char *name)
{
    if (name[0] == '/' || name[0] == '\\')
        return 1;
    for (const char *p = name; *p != '\0';) {
        const size_t n = strcspn(p, "/\\");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return 1;
        p += n;
        p += *p != '\0';
    }
    return 0;
}

/* The first of dirs/file_name that is a file, into out; 0 when none. */
static int find_image(const char *file_name, const char *const *dirs, size_t n_dirs, char *out,
                      size_t size)
{
    for (size_t d = 0; d < n_dirs; d++)
        if (eb_dataset__join(out, size, dirs[d], file_name, NULL) == EB_OK &&
            eb_dataset__is_file(out))
            return 1;
    return 0;
}

static enum eb_status read_images(struct eb_dataset *ds, const struct eb_json_value *root,
                                  const char *path, const char *const *dirs, size_t n_dirs,
                                  struct eb_diag *diag)
{
    const struct eb_json_value *imgs = get_array(root, "images");
    if (imgs == NULL)
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to read %s: no \"images\" array; give a COCO instances file",
                            path);
    char file[EB_DATASET__PATH_MAX];
    const char *first_missing = NULL;
    for (size_t i = 0; i < imgs->n; i++) {
        const struct eb_json_value *im = &imgs->items[i];
        const struct eb_json_value *fn = eb_json_get(im, "file_name");
        if (fn == NULL)
            fn = eb_json_get(im, "filename");
        int64_t id;
        if (im->type != EB_JSON_OBJECT || !get_int(im, "id", &id) || fn == NULL ||
            fn->type != EB_JSON_STRING || fn->str[0] == '\0')
            return eb_diag_fail(diag, EB_ERR_FORMAT,
                                "failed to read %s: images[%zu] needs an integer \"id\" and a "
                                "\"file_name\"; fix the file",
                                path, i);
        if (leaves_folder(fn->str))
            return eb_diag_fail(diag, EB_ERR_FORMAT,
                                "failed to read %s: images[%zu] file_name \"%s\" leaves the "
                                "dataset's image folder (an absolute path or a .. part); fix the "
                                "file",
                                path, i, fn->str);
        if (!find_image(fn->str, dirs, n_dirs, file, sizeof(file))) {
            ds->images_missing++;
            if (first_missing == NULL)
                first_missing = fn->str;
            continue;
        }
        int64_t w = 0, h = 0;
        if (!get_int(im, "width", &w) || !get_int(im, "height", &h) || w <= 0 || h <= 0 ||
            w > INT32_MAX || h > INT32_MAX) {
            int iw, ih;
            enum eb_status st = eb_dataset_image_size(file, &iw, &ih, diag);
            if (st != EB_OK)
                return st;
            w = iw;
            h = ih;
        }
        enum eb_status st = eb_dataset__add_image(ds, file, (int)w, (int)h, id, diag);
        if (st != EB_OK)
            return st;
    }
    if (ds->n_images == 0)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "dataset %s: none of its %zu images is on disk (the first, %s, is not "
                            "in %s%s); put the images beside the annotations (images/<split>/)",
                            path, imgs->n, first_missing ? first_missing : "-",
                            n_dirs ? dirs[0] : ".",
                            n_dirs > 1 ? " or the other usual folders" : "");
    if (ds->images_missing > 0)
        snprintf(ds->note, sizeof(ds->note),
                 "%zu of the %zu images %s lists are not on disk (e.g. %s) and are left out with "
                 "their annotations",
                 ds->images_missing, imgs->n, path, first_missing);
    return EB_OK;
}

static enum eb_status read_annotations(struct eb_dataset *ds, const struct eb_json_value *root,
                                       const char *path, struct eb_diag *diag)
{
    const struct eb_json_value *anns = get_array(root, "annotations");
    if (anns == NULL)
        anns = get_array(root, "annotation"); /* HIT-UAV's test.json */
    if (anns == NULL)
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to read %s: no \"annotations\" array; give a COCO instances "
                            "file",
                            path);
    enum eb_status st = EB_ERR_NOMEM;
    struct id_index *ids = malloc((ds->n_images ? ds->n_images : 1) * sizeof(*ids));
    if (ids == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read %s: out of memory", path);
    for (size_t i = 0; i < ds->n_images; i++) {
        ids[i].id = ds->images[i].id;
        ids[i].index = i;
    }
    qsort(ids, ds->n_images, sizeof(*ids), cmp_id_index);
    for (size_t i = 1; i < ds->n_images; i++)
        if (ids[i].id == ids[i - 1].id) {
            st = eb_diag_fail(diag, EB_ERR_FORMAT,
                              "failed to read %s: image id %lld appears twice; fix the file", path,
                              (long long)ids[i].id);
            goto done;
        }
    size_t unknown_cat = 0;
    for (size_t i = 0; i < anns->n; i++) {
        const struct eb_json_value *a = &anns->items[i];
        const struct eb_json_value *bb = eb_json_get(a, "bbox");
        int64_t image_id, cat;
        int ok = a->type == EB_JSON_OBJECT && get_int(a, "image_id", &image_id) &&
                 get_int(a, "category_id", &cat) && bb != NULL && bb->type == EB_JSON_ARRAY &&
                 bb->n == 4;
        struct eb_dataset_ann ann = {0};
        for (size_t k = 0; ok && k < 4; k++) {
            ok = bb->items[k].type == EB_JSON_NUMBER && isfinite(bb->items[k].num);
            if (ok)
                ann.bbox[k] = bb->items[k].num;
        }
        if (!ok) {
            st = eb_diag_fail(diag, EB_ERR_FORMAT,
                              "failed to read %s: annotations[%zu] needs integer \"image_id\" "
                              "and \"category_id\" and a \"bbox\" of 4 numbers; fix the file",
                              path, i);
            goto done;
        }
        struct id_index key = {.id = image_id};
        const struct id_index *hit = bsearch(&key, ids, ds->n_images, sizeof(*ids), cmp_id_index);
        if (hit == NULL)
            continue; /* an image that is not on disk (or not listed) */
        if (eb_dataset_category_find(ds, cat) == NULL) {
            unknown_cat++;
            continue;
        }
        ann.image = hit->index;
        ann.category_id = cat;
        if (!get_num(a, "area", &ann.area))
            ann.area = ann.bbox[2] * ann.bbox[3];
        int64_t crowd = 0;
        ann.iscrowd = get_int(a, "iscrowd", &crowd) && crowd != 0;
        if ((st = eb_dataset__add_ann(ds, &ann, diag)) != EB_OK)
            goto done;
    }
    if (unknown_cat > 0) {
        size_t off = strlen(ds->note);
        snprintf(ds->note + off, sizeof(ds->note) - off,
                 "%s%zu annotations with a category_id not in \"categories\" are left out",
                 off ? "; " : "", unknown_cat);
    }
    st = EB_OK;
done:
    free(ids);
    return st;
}

enum eb_status eb_dataset_read_coco(const char *json_path, const char *const *images_dirs,
                                    size_t n_dirs, struct eb_dataset **ds_out, struct eb_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    struct eb_json_value *root = NULL;
    struct eb_dataset *ds = NULL;
    enum eb_status st = eb_dataset__read_file(json_path, &text, &len, diag);
    if (st != EB_OK)
        return st;
    struct eb_diag jd = {0};
    st = eb_json_parse(text, len, &root, &jd);
    if (st != EB_OK) {
        st = eb_diag_fail(diag, st == EB_ERR_NOMEM ? EB_ERR_NOMEM : EB_ERR_FORMAT,
                          "failed to read %s: %s; fix or replace the annotation file", json_path,
                          jd.msg);
        goto done;
    }
    if (root->type != EB_JSON_OBJECT) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT,
                          "failed to read %s: not a JSON object; give a COCO instances file",
                          json_path);
        goto done;
    }
    ds = eb_dataset__create(EB_DATASET_COCO, json_path);
    if (ds == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read %s: out of memory", json_path);
        goto done;
    }
    if ((st = read_categories(ds, root, json_path, diag)) != EB_OK ||
        (st = read_images(ds, root, json_path, images_dirs, n_dirs, diag)) != EB_OK ||
        (st = read_annotations(ds, root, json_path, diag)) != EB_OK)
        goto done;
    *ds_out = ds;
    ds = NULL;
done:
    eb_dataset_destroy(ds);
    eb_json_free(root);
    free(text);
    return st;
}
