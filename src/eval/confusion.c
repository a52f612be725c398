/*
 * Ultralytics' detection confusion matrix (eval/confusion.h for the rules).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/confusion.h"

struct pair {
    size_t g, d; /* indices into the image's gt and detection lists */
    double iou;
};

/* IoU highest first; ties in (gt, detection) order so that the result does not depend on qsort. */
static int cmp_pair(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    if (x->iou != y->iou)
        return x->iou > y->iou ? -1 : 1;
    if (x->g != y->g)
        return x->g < y->g ? -1 : 1;
    return x->d < y->d ? -1 : x->d > y->d;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* As Ultralytics' box_iou on x1y1x2y2 boxes: intersection / (area1 + area2 - inter + 1e-7). */
static double iou_xywh(const double *a, const double *b)
{
    double w = fmin(a[0] + a[2], b[0] + b[2]) - fmax(a[0], b[0]);
    double h = fmin(a[1] + a[3], b[1] + b[3]) - fmax(a[1], b[1]);
    double inter = (w > 0 ? w : 0) * (h > 0 ? h : 0);
    return inter / (a[2] * a[3] + b[2] * b[3] - inter + 1e-7);
}

/* Index of `id` in the sorted cats, or n. */
static size_t cat_at(const struct eb_confusion *cm, int64_t id)
{
    const int64_t *p = bsearch(&id, cm->cats, cm->n, sizeof(*cm->cats), cmp_i64);
    return p ? (size_t)(p - cm->cats) : cm->n;
}

void eb_confusion_fini(struct eb_confusion *cm)
{
    if (cm == NULL)
        return;
    free(cm->cats);
    free(cm->m);
    memset(cm, 0, sizeof(*cm));
}

uint64_t eb_confusion_at(const struct eb_confusion *cm, size_t pred, size_t truth)
{
    if (cm->m == NULL || pred > cm->n || truth > cm->n)
        return 0;
    return cm->m[pred * (cm->n + 1) + truth];
}

/* One image: `gi` (ng annotation indices) against `di` (nd detection indices). */
static void add_image(struct eb_confusion *cm, const struct eb_dataset *ds,
                      const struct eb_coco_det *dets, const size_t *gi, size_t ng, const size_t *di,
                      size_t nd, struct pair *pairs, uint8_t *g_used, uint8_t *d_used,
                      size_t *g_pred)
{
    const size_t N = cm->n, W = N + 1;
    size_t np = 0;
    for (size_t g = 0; g < ng; g++)
        for (size_t d = 0; d < nd; d++) {
            double v = iou_xywh(ds->anns[gi[g]].bbox, dets[di[d]].bbox);
            if (v > cm->iou)
                pairs[np++] = (struct pair){.g = g, .d = d, .iou = v};
        }
    qsort(pairs, np, sizeof(*pairs), cmp_pair);
    memset(g_used, 0, ng);
    memset(d_used, 0, nd);
    /* One pair per detection (its best), then one per gt (its best among those): as numpy's
     * unique on the detection column, then on the gt column, each over the IoU-sorted pairs. */
    size_t kept = 0;
    for (size_t i = 0; i < np; i++)
        if (!d_used[pairs[i].d]) {
            d_used[pairs[i].d] = 1;
            pairs[kept++] = pairs[i];
        }
    memset(d_used, 0, nd);
    for (size_t g = 0; g < ng; g++)
        g_pred[g] = N;
    for (size_t i = 0; i < kept; i++)
        if (!g_used[pairs[i].g]) {
            g_used[pairs[i].g] = 1;
            d_used[pairs[i].d] = 1;
            g_pred[pairs[i].g] = cat_at(cm, dets[di[pairs[i].d]].category_id);
        }
    for (size_t g = 0; g < ng; g++)
        cm->m[g_pred[g] * W + cat_at(cm, ds->anns[gi[g]].category_id)]++;
    for (size_t d = 0; d < nd; d++)
        if (!d_used[d])
            cm->m[cat_at(cm, dets[di[d]].category_id) * W + N]++;
}

enum eb_status eb_confusion_compute(const struct eb_dataset *ds, const struct eb_coco_det *dets,
                                    size_t n_dets, const int64_t *cats, size_t n_cats, double conf,
                                    double iou, struct eb_confusion *out, struct eb_diag *diag)
{
    struct eb_confusion cm = {.conf = conf, .iou = iou};
    const size_t I = ds->n_images;
    size_t *g_off = NULL, *d_off = NULL, *g_idx = NULL, *d_idx = NULL, *fill = NULL, *g_pred = NULL;
    struct pair *pairs = NULL;
    uint8_t *g_used = NULL, *d_used = NULL;
    enum eb_status st = EB_ERR_NOMEM;
    cm.cats = malloc((n_cats ? n_cats : 1) * sizeof(*cm.cats));
    if (cm.cats == NULL)
        goto fail;
    for (size_t i = 0; i < n_cats; i++) {
        if (eb_dataset_category_find(ds, cats[i]) == NULL) {
            st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                              "failed to build the confusion matrix: category id %lld is not in "
                              "the dataset",
                              (long long)cats[i]);
            goto done;
        }
        cm.cats[i] = cats[i];
    }
    qsort(cm.cats, n_cats, sizeof(*cm.cats), cmp_i64);
    for (size_t i = 0; i < n_cats; i++)
        if (cm.n == 0 || cm.cats[cm.n - 1] != cm.cats[i])
            cm.cats[cm.n++] = cm.cats[i];
    cm.m = calloc((cm.n + 1) * (cm.n + 1), sizeof(*cm.m));
    /* The gt and detections of each image (counting sort by image). */
    g_off = calloc(I + 1, sizeof(*g_off));
    d_off = calloc(I + 1, sizeof(*d_off));
    fill = malloc((I ? I : 1) * sizeof(*fill));
    g_idx = malloc((ds->n_anns ? ds->n_anns : 1) * sizeof(*g_idx));
    d_idx = malloc((n_dets ? n_dets : 1) * sizeof(*d_idx));
    if (cm.m == NULL || g_off == NULL || d_off == NULL || fill == NULL || g_idx == NULL ||
        d_idx == NULL)
        goto fail;
    for (size_t i = 0; i < ds->n_anns; i++) {
        const struct eb_dataset_ann *a = &ds->anns[i];
        if (a->image < I && !a->iscrowd && cat_at(&cm, a->category_id) < cm.n)
            g_off[a->image + 1]++;
    }
    for (size_t i = 0; i < n_dets; i++)
        if (dets[i].image < I && dets[i].score > conf && cat_at(&cm, dets[i].category_id) < cm.n)
            d_off[dets[i].image + 1]++;
    size_t max_g = 0, max_d = 0;
    for (size_t i = 0; i < I; i++) {
        max_g = g_off[i + 1] > max_g ? g_off[i + 1] : max_g;
        max_d = d_off[i + 1] > max_d ? d_off[i + 1] : max_d;
        g_off[i + 1] += g_off[i];
        d_off[i + 1] += d_off[i];
    }
    memcpy(fill, g_off, I * sizeof(*fill));
    for (size_t i = 0; i < ds->n_anns; i++) {
        const struct eb_dataset_ann *a = &ds->anns[i];
        if (a->image < I && !a->iscrowd && cat_at(&cm, a->category_id) < cm.n)
            g_idx[fill[a->image]++] = i;
    }
    memcpy(fill, d_off, I * sizeof(*fill));
    for (size_t i = 0; i < n_dets; i++)
        if (dets[i].image < I && dets[i].score > conf && cat_at(&cm, dets[i].category_id) < cm.n)
            d_idx[fill[dets[i].image]++] = i;
    if (max_d != 0 && max_g > SIZE_MAX / sizeof(*pairs) / max_d)
        goto fail;
    pairs = malloc((max_g * max_d > 0 ? max_g * max_d : 1) * sizeof(*pairs));
    g_used = malloc(max_g ? max_g : 1);
    g_pred = malloc((max_g ? max_g : 1) * sizeof(*g_pred));
    d_used = malloc(max_d ? max_d : 1);
    if (pairs == NULL || g_used == NULL || g_pred == NULL || d_used == NULL)
        goto fail;
    for (size_t i = 0; i < I; i++)
        add_image(&cm, ds, dets, g_idx + g_off[i], g_off[i + 1] - g_off[i], d_idx + d_off[i],
                  d_off[i + 1] - d_off[i], pairs, g_used, d_used, g_pred);
    *out = cm;
    memset(&cm, 0, sizeof(cm));
    st = EB_OK;
    goto done;
fail:
    st = eb_diag_fail(diag, EB_ERR_NOMEM,
                      "failed to build the confusion matrix of %zu detections: out of memory",
                      n_dets);
done:
    eb_confusion_fini(&cm);
    free(g_off);
    free(d_off);
    free(fill);
    free(g_idx);
    free(d_idx);
    free(pairs);
    free(g_used);
    free(g_pred);
    free(d_used);
    return st;
}

void eb_confusion_write_json(const struct eb_confusion *cm, const struct eb_dataset *ds,
                             struct eb_json_writer *w)
{
    eb_json_obj_begin(w);
    eb_json_knum(w, "conf", cm->conf);
    eb_json_knum(w, "iou", cm->iou);
    eb_json_kstr(w, "rows", "predicted");
    eb_json_kstr(w, "columns", "true");
    eb_json_key(w, "classes");
    eb_json_arr_begin(w);
    for (size_t i = 0; i < cm->n; i++) {
        const struct eb_dataset_category *c = eb_dataset_category_find(ds, cm->cats[i]);
        eb_json_str(w, c ? c->name : NULL);
    }
    eb_json_str(w, "background");
    eb_json_arr_end(w);
    eb_json_key(w, "matrix");
    eb_json_arr_begin(w);
    for (size_t p = 0; p <= cm->n; p++) {
        eb_json_arr_begin(w);
        for (size_t t = 0; t <= cm->n; t++)
            eb_json_uint(w, eb_confusion_at(cm, p, t));
        eb_json_arr_end(w);
    }
    eb_json_arr_end(w);
    eb_json_obj_end(w);
}
