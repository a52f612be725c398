/*
 * YOLO-format splits: one image per file, one label file per image with normalised boxes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/dataset_internal.h"

/* Class ids above this are refused (a label line with a huge id is corrupt). */
#define MAX_CLASS_ID 100000

struct names {
    char **items;
    size_t n, cap;
};

static void names_fini(struct names *nm)
{
    for (size_t i = 0; i < nm->n; i++)
        free(nm->items[i]);
    free(nm->items);
    memset(nm, 0, sizeof(*nm));
}

/* Sets name `idx` (growing the list with NULLs); 0 when out of memory. */
static int names_set(struct names *nm, size_t idx, const char *s, size_t len)
{
    if (idx >= nm->cap) {
        size_t nc = nm->cap ? nm->cap * 2 : 64;
        while (nc <= idx)
            nc *= 2;
        char **p = realloc(nm->items, nc * sizeof(*p));
        if (p == NULL)
            return 0;
        memset(p + nm->cap, 0, (nc - nm->cap) * sizeof(*p));
        nm->items = p;
        nm->cap = nc;
    }
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, s, len);
    copy[len] = '\0';
    free(nm->items[idx]);
    nm->items[idx] = copy;
    if (idx + 1 > nm->n)
        nm->n = idx + 1;
    return 1;
}

/* Trims blanks and one pair of matching quotes; cuts an unquoted " #" comment. */
static void trim_value(const char **s, size_t *len)
{
    const char *p = *s;
    size_t n = *len;
    while (n > 0 && (*p == ' ' || *p == '\t')) {
        p++;
        n--;
    }
    if (n > 0 && (*p == '\'' || *p == '"')) {
        const char *q = memchr(p + 1, *p, n - 1);
        if (q != NULL) {
            *s = p + 1;
            *len = (size_t)(q - p - 1);
            return;
        }
    }
    for (size_t i = 0; i + 1 < n; i++)
        if ((p[i] == ' ' || p[i] == '\t') && p[i + 1] == '#') {
            n = i;
            break;
        }
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r' || p[n - 1] == ','))
        n--;
    *s = p;
    *len = n;
}

/* `names:` of an Ultralytics dataset YAML: a flow list [a, b], a block list (- a) or a map
 * (0: a). Returns 1 when names were found. */
static int parse_yaml_names(const char *text, struct names *nm, int *nomem)
{
    const char *line = text;
    while (*line) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        if (len >= 6 && strncmp(line, "names:", 6) == 0) {
            const char *rest = line + 6;
            size_t rlen = len - 6;
            trim_value(&rest, &rlen);
            if (rlen > 0 && rest[0] == '[') {
                /* Flow list, possibly over several lines, up to the closing bracket. */
                const char *p = rest + 1, *end = strchr(p, ']');
                if (end == NULL)
                    return 0;
                size_t idx = 0;
                while (p < end) {
                    const char *comma = memchr(p, ',', (size_t)(end - p));
                    const char *stop = comma ? comma : end;
                    const char *v = p;
                    size_t vl = (size_t)(stop - p);
                    while (vl > 0 && (*v == ' ' || *v == '\n' || *v == '\r' || *v == '\t')) {
                        v++;
                        vl--;
                    }
                    trim_value(&v, &vl);
                    while (vl > 0 && (v[vl - 1] == '\n' || v[vl - 1] == ' '))
                        vl--;
                    if (vl > 0 && !names_set(nm, idx++, v, vl))
                        return *nomem = 1, 0;
                    p = stop + 1;
                }
                return nm->n > 0;
            }
            /* Block list or map on the following, indented lines. */
            size_t idx = 0;
            const char *l = eol ? eol + 1 : line + len;
            while (*l == ' ' || *l == '\t') {
                const char *e = strchr(l, '\n');
                size_t ll = e ? (size_t)(e - l) : strlen(l);
                const char *v = l;
                size_t vl = ll;
                trim_value(&v, &vl);
                if (vl > 0 && v[0] == '-') {
                    v++;
                    vl--;
                    trim_value(&v, &vl);
                    if (!names_set(nm, idx++, v, vl))
                        return *nomem = 1, 0;
                } else if (vl > 0) {
                    char *colon = NULL;
                    errno = 0;
                    long k = strtol(v, &colon, 10);
                    if (colon != v && colon < v + vl && *colon == ':' && errno == 0 && k >= 0 &&
                        k <= MAX_CLASS_ID) {
                        const char *nv = colon + 1;
                        size_t nl = (size_t)(v + vl - nv);
                        trim_value(&nv, &nl);
                        if (!names_set(nm, (size_t)k, nv, nl))
                            return *nomem = 1, 0;
                    }
                }
                if (e == NULL)
                    break;
                l = e + 1;
            }
            return nm->n > 0;
        }
        if (eol == NULL)
            break;
        line = eol + 1;
    }
    return 0;
}

/* One name per non-empty line. */
static int parse_lines(const char *text, struct names *nm, int *nomem)
{
    size_t idx = 0;
    const char *line = text;
    while (*line) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        const char *v = line;
        size_t vl = len;
        while (vl > 0 && (*v == ' ' || *v == '\t')) {
            v++;
            vl--;
        }
        while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t' || v[vl - 1] == '\r'))
            vl--;
        if (vl > 0 && !names_set(nm, idx++, v, vl))
            return *nomem = 1, 0;
        if (eol == NULL)
            break;
        line = eol + 1;
    }
    return nm->n > 0;
}

/* Names from data.yaml / dataset.yaml / classes.txt / names.txt in `dir`; `file_out` names the
 * file used ("" when none). EB_ERR_NOMEM only. */
static enum eb_status read_names(const char *dir, struct names *nm, char *file_out, size_t size,
                                 struct eb_diag *diag)
{
    static const char *const files[] = {"data.yaml", "dataset.yaml", "classes.txt", "names.txt"};
    file_out[0] = '\0';
    for (size_t i = 0; dir != NULL && i < EB_ARRAY_LEN(files); i++) {
        char path[EB_DATASET__PATH_MAX];
        if (eb_dataset__join(path, sizeof(path), dir, files[i], NULL) != EB_OK ||
            !eb_dataset__is_file(path))
            continue;
        char *text = NULL;
        size_t len = 0;
        if (eb_dataset__read_file(path, &text, &len, NULL) != EB_OK)
            continue;
        int nomem = 0;
        int ok = i < 2 ? parse_yaml_names(text, nm, &nomem) : parse_lines(text, nm, &nomem);
        free(text);
        if (nomem)
            return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read %s: out of memory", path);
        if (ok) {
            snprintf(file_out, size, "%s", path);
            return EB_OK;
        }
        names_fini(nm);
    }
    return EB_OK;
}

/* Parses one label line into `ann` (bbox in pixels of a w x h image). 1 = a box, 0 = blank,
 * -1 = malformed. */
static int parse_label(const char *line, int w, int h, int64_t *cls_out, double *bbox)
{
    double v[4097];
    int n = 0;
    const char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (*p == '\0')
            break;
        if (n == (int)EB_ARRAY_LEN(v))
            return -1;
        char *end = NULL;
        errno = 0;
        v[n] = strtod(p, &end);
        if (end == p || errno == ERANGE || !isfinite(v[n])) /* "nan" and "inf" parse */
            return -1;
        n++;
        p = end;
    }
    if (n == 0)
        return 0;
    if (v[0] < 0 || v[0] > MAX_CLASS_ID || v[0] != (double)(int64_t)v[0])
        return -1;
    *cls_out = (int64_t)v[0];
    double cx, cy, bw, bh;
    if (n == 5) {
        cx = v[1];
        cy = v[2];
        bw = v[3];
        bh = v[4];
    } else if (n >= 7 && (n - 1) % 2 == 0) {
        /* A polygon (segmentation label): its bounding box, as Ultralytics segments2boxes. */
        double x0 = v[1], x1 = v[1], y0 = v[2], y1 = v[2];
        for (int i = 1; i + 1 < n; i += 2) {
            x0 = v[i] < x0 ? v[i] : x0;
            x1 = v[i] > x1 ? v[i] : x1;
            y0 = v[i + 1] < y0 ? v[i + 1] : y0;
            y1 = v[i + 1] > y1 ? v[i + 1] : y1;
        }
        cx = (x0 + x1) / 2;
        cy = (y0 + y1) / 2;
        bw = x1 - x0;
        bh = y1 - y0;
    } else {
        return -1;
    }
    if (bw < 0 || bh < 0)
        return -1;
    bbox[0] = (cx - bw / 2) * w;
    bbox[1] = (cy - bh / 2) * h;
    bbox[2] = bw * w;
    bbox[3] = bh * h;
    return 1;
}

/* Reads `label_path` (absent = no objects) for image `image`. *max_cls tracks the largest id. */
static enum eb_status read_label_file(struct eb_dataset *ds, const char *label_path, size_t image,
                                      int64_t *max_cls, struct eb_diag *diag)
{
    if (!eb_dataset__is_file(label_path))
        return EB_OK;
    char *text = NULL;
    size_t len = 0;
    enum eb_status st = eb_dataset__read_file(label_path, &text, &len, diag);
    if (st != EB_OK)
        return st;
    const struct eb_dataset_image *im = &ds->images[image];
    char *line = text;
    for (size_t ln = 1; line != NULL && *line; ln++) {
        char *eol = strchr(line, '\n');
        if (eol != NULL)
            *eol = '\0';
        struct eb_dataset_ann ann = {.image = image};
        int r = parse_label(line, im->width, im->height, &ann.category_id, ann.bbox);
        if (r < 0) {
            st = eb_diag_fail(diag, EB_ERR_FORMAT,
                              "failed to read label %s line %zu: expected `class cx cy w h` "
                              "(finite numbers, normalised; class an integer >= 0) or a polygon; "
                              "fix the line",
                              label_path, ln);
            break;
        }
        if (r > 0) {
            ann.area = ann.bbox[2] * ann.bbox[3];
            if (ann.category_id > *max_cls)
                *max_cls = ann.category_id;
            if ((st = eb_dataset__add_ann(ds, &ann, diag)) != EB_OK)
                break;
        }
        line = eol ? eol + 1 : NULL;
    }
    free(text);
    return st;
}

enum eb_status eb_dataset_read_yolo(const char *images_dir, const char *labels_dir,
                                    const char *names_dir, const struct eb_dataset_options *opts,
                                    struct eb_dataset **ds_out, struct eb_diag *diag)
{
    char **files = NULL;
    size_t n_files = 0;
    struct names nm = {0};
    char names_file[EB_DATASET__PATH_MAX];
    struct eb_dataset *ds = eb_dataset__create(EB_DATASET_YOLO, labels_dir);
    enum eb_status st = EB_ERR_NOMEM;
    if (ds == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read %s: out of memory", labels_dir);
    if ((st = eb_dataset__list(images_dir, eb_dataset__is_image_name, &files, &n_files, diag)) !=
        EB_OK)
        goto fail;
    if (n_files == 0) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                          "dataset folder %s has no images (.jpg .jpeg .png .bmp); check %s "
                          "and --split",
                          images_dir, eb_dataset__option(opts));
        goto fail;
    }
    if (!eb_dataset__is_dir(labels_dir)) {
        st = eb_diag_fail(diag, EB_ERR_IO,
                          "dataset: no label folder %s for the images in %s; YOLO labels go in "
                          "labels/<split>/ beside images/<split>/",
                          labels_dir, images_dir);
        goto fail;
    }
    int64_t max_cls = -1;
    for (size_t i = 0; i < n_files; i++) {
        char img[EB_DATASET__PATH_MAX], label[EB_DATASET__PATH_MAX], stem[EB_DATASET__PATH_MAX];
        int w, h;
        const char *dot = strrchr(files[i], '.');
        snprintf(stem, sizeof(stem), "%.*s.txt", (int)(dot - files[i]), files[i]);
        if ((st = eb_dataset__join(img, sizeof(img), images_dir, files[i], diag)) != EB_OK ||
            (st = eb_dataset__join(label, sizeof(label), labels_dir, stem, diag)) != EB_OK ||
            (st = eb_dataset_image_size(img, &w, &h, diag)) != EB_OK ||
            (st = eb_dataset__add_image(ds, img, w, h, (int64_t)i, diag)) != EB_OK ||
            (st = read_label_file(ds, label, ds->n_images - 1, &max_cls, diag)) != EB_OK)
            goto fail;
    }
    eb_dataset__assign_ids(ds);
    if ((st = read_names(names_dir, &nm, names_file, sizeof(names_file), diag)) != EB_OK)
        goto fail;
    if (nm.n > 0) {
        if (max_cls >= (int64_t)nm.n) {
            st = eb_diag_fail(diag, EB_ERR_FORMAT,
                              "dataset %s: a label uses class %lld but %s names only %zu classes; "
                              "fix the labels or the names file",
                              labels_dir, (long long)max_cls, names_file, nm.n);
            goto fail;
        }
        for (size_t c = 0; c < nm.n; c++) {
            char fallback[32];
            snprintf(fallback, sizeof(fallback), "class%zu", c);
            if ((st = eb_dataset__add_cat(ds, (int64_t)c, nm.items[c] ? nm.items[c] : fallback,
                                          diag)) != EB_OK)
                goto fail;
        }
    } else if (opts != NULL && opts->n_default_names > 0 &&
               max_cls < (int64_t)opts->n_default_names) {
        for (size_t c = 0; c < opts->n_default_names; c++)
            if ((st = eb_dataset__add_cat(ds, (int64_t)c, opts->default_names[c], diag)) != EB_OK)
                goto fail;
        snprintf(ds->note, sizeof(ds->note),
                 "no names file (data.yaml, classes.txt) beside %s: class ids 0..%zu are taken as "
                 "the %zu default (COCO) names; add classes.txt if they are not",
                 labels_dir, opts->n_default_names - 1, opts->n_default_names);
    } else {
        for (int64_t c = 0; c <= max_cls; c++) {
            char name[32];
            snprintf(name, sizeof(name), "class%lld", (long long)c);
            if ((st = eb_dataset__add_cat(ds, c, name, diag)) != EB_OK)
                goto fail;
        }
        snprintf(ds->note, sizeof(ds->note),
                 "no names file (data.yaml, classes.txt) beside %s: classes are named class0.. "
                 "(map them with --class_map)",
                 labels_dir);
    }
    eb_dataset__names_free(files, n_files);
    names_fini(&nm);
    *ds_out = ds;
    return EB_OK;
fail:
    eb_dataset__names_free(files, n_files);
    names_fini(&nm);
    eb_dataset_destroy(ds);
    return st;
}
