/*
 * COCO detection metrics (pycocotools COCOeval semantics) on hand-computed cases, the COCO
 * results file, class maps, the XML reader, image headers and the three dataset readers; what
 * val adds (P/R at the best-F1 confidence, PR curves, the confusion matrix, the per-image cap,
 * annotated images).
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eb/json.h"
#include "eb_test.h"
#include "eval/classmap.h"
#include "eval/coco_eval.h"
#include "eval/confusion.h"
#include "eval/dataset.h"
#include "eval/dataset_internal.h"
#include "eval/xml.h"
#include "harness/pipeline/accuracy.h"
#include "harness/pipeline/annotate.h"
#include "harness/pipeline/image_decode.h"

/* ------------------------------------------------------------------ helpers */

/* A dataset of n_images 640x480 images (ids 1..n) and categories 1..n_cats named c1, c2... */
static struct eb_dataset *mk_dataset(size_t n_images, size_t n_cats)
{
    struct eb_dataset *ds = eb_dataset__create(EB_DATASET_COCO, "test");
    ASSERT_TRUE(ds != NULL);
    for (size_t i = 0; i < n_images; i++)
        ASSERT_OK(eb_dataset__add_image(ds, "img.jpg", 640, 480, (int64_t)i + 1, NULL));
    for (size_t c = 0; c < n_cats; c++) {
        char name[32];
        snprintf(name, sizeof(name), "c%zu", c + 1);
        ASSERT_OK(eb_dataset__add_cat(ds, (int64_t)c + 1, name, NULL));
    }
    return ds;
}

static void add_gt(struct eb_dataset *ds, size_t image, int64_t cat, double x, double y, double w,
                   double h, int crowd)
{
    struct eb_dataset_ann a = {
        .image = image, .category_id = cat, .bbox = {x, y, w, h}, .area = w * h, .iscrowd = crowd};
    ASSERT_OK(eb_dataset__add_ann(ds, &a, NULL));
}

struct dets {
    struct eb_coco_det items[512];
    size_t n;
};

static void add_det(struct dets *d, size_t image, int64_t cat, double x, double y, double w,
                    double h, double score)
{
    ASSERT_TRUE(d->n < EB_ARRAY_LEN(d->items));
    struct eb_coco_det *e = &d->items[d->n++];
    e->image = image;
    e->category_id = cat;
    e->bbox[0] = x;
    e->bbox[1] = y;
    e->bbox[2] = w;
    e->bbox[3] = h;
    e->score = score;
}

static struct eb_coco_result evaluate(const struct eb_dataset *ds, const struct dets *d)
{
    struct eb_coco_result r;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_coco_evaluate(ds, d->items, d->n, NULL, 0, &r, &diag));
    return r;
}

#define TOL 1e-12

/* ------------------------------------------------------------------ metrics */

EB_TEST(perfect_detections_score_one)
{
    struct eb_dataset *ds = mk_dataset(2, 2);
    struct dets d = {.n = 0};
    /* Boxes in every area range, both categories, both images. */
    add_gt(ds, 0, 1, 10, 10, 20, 20, 0);    /* small */
    add_gt(ds, 0, 1, 100, 50, 60, 60, 0);   /* medium */
    add_gt(ds, 1, 2, 200, 100, 150, 90, 0); /* large */
    add_gt(ds, 1, 1, 5, 300, 40, 30, 0);    /* medium */
    for (size_t i = 0; i < ds->n_anns; i++) {
        const struct eb_dataset_ann *a = &ds->anns[i];
        add_det(&d, a->image, a->category_id, a->bbox[0], a->bbox[1], a->bbox[2], a->bbox[3],
                0.9 - 0.1 * (double)i);
    }
    struct eb_coco_result r = evaluate(ds, &d);
    ASSERT_NEAR(r.map, 1.0, TOL);
    ASSERT_NEAR(r.map50, 1.0, TOL);
    ASSERT_NEAR(r.map75, 1.0, TOL);
    ASSERT_NEAR(r.map_small, 1.0, TOL);
    ASSERT_NEAR(r.map_medium, 1.0, TOL);
    ASSERT_NEAR(r.map_large, 1.0, TOL);
    ASSERT_NEAR(r.ar100, 1.0, TOL);
    ASSERT_EQ_INT(r.n_gt, 4);
    ASSERT_EQ_INT(r.n_dets, 4);
    ASSERT_EQ_INT(r.n_classes, 2);
    ASSERT_EQ_INT(r.n_classes_with_gt, 2);
    ASSERT_EQ_INT(r.classes[0].gt, 3);
    ASSERT_EQ_INT(r.classes[0].images, 2);
    ASSERT_NEAR(r.classes[1].ap, 1.0, TOL);
    eb_coco_result_fini(&r);
    eb_dataset_destroy(ds);
}

EB_TEST(shifted_box_counts_only_up_to_its_iou)
{
    /* IoU 0.6 exactly (60 / 100): a true positive at thresholds .50, .55, .60 only. */
    struct eb_dataset *ds = mk_dataset(1, 1);
    struct dets d = {.n = 0};
    add_gt(ds, 0, 1, 10, 10, 10, 10, 0);
    add_det(&d, 0, 1, 10, 10, 10, 6, 0.8);
    struct eb_coco_result r = evaluate(ds, &d);
    ASSERT_NEAR(r.map, 3.0 / 10.0, TOL);
    ASSERT_NEAR(r.map50, 1.0, TOL);
    ASSERT_NEAR(r.map75, 0.0, TOL);
    ASSERT_NEAR(r.ar100, 3.0 / 10.0, TOL);
    ASSERT_NEAR(r.map_small, 3.0 / 10.0, TOL);
    ASSERT_NEAR(r.map_medium, -1.0, 0);
    ASSERT_NEAR(r.map_large, -1.0, 0);
    eb_coco_result_fini(&r);
    /* IoU 0.8 (80 / 100): thresholds .50 to .80, 7 of 10. */
    d.items[0].bbox[3] = 8;
    r = evaluate(ds, &d);
    ASSERT_NEAR(r.map, 7.0 / 10.0, TOL);
    ASSERT_NEAR(r.map75, 1.0, TOL);
    eb_coco_result_fini(&r);
    eb_dataset_destroy(ds);
}

EB_TEST(crowd_region_ignores_detections_on_it)
{
    struct eb_dataset *ds = mk_dataset(1, 1);
    struct dets d = {.n = 0};
    add_gt(ds, 0, 1, 0, 0, 50, 50, 0);
    add_gt(ds, 0, 1, 100, 100, 200, 200, 1); /* a crowd region */
    add_det(&d, 0, 1, 0, 0, 50, 50, 0.9);
    /* Three detections inside the crowd, two scored above the true positive: IoU with a
       crowd is intersection / detection area = 1, they match it (repeatedly) and are
       ignored, not false positives. */
    add_det(&d, 0, 1, 110, 110, 20, 20, 0.95);
    add_det(&d, 0, 1, 150, 150, 30, 30, 0.8);
    add_det(&d, 0, 1, 120, 120, 50, 50, 0.97);
    struct eb_coco_result r = evaluate(ds, &d);
    ASSERT_NEAR(r.map, 1.0, TOL);
    ASSERT_EQ_INT(r.n_gt, 1);
    ASSERT_EQ_INT(r.n_crowd, 1);
    eb_coco_result_fini(&r);
    /* The same region as a regular object: one of the three matches it, the other two are
       false positives ranked above the first true positive. */
    ds->anns[1].iscrowd = 0;
    r = evaluate(ds, &d);
    ASSERT_TRUE(r.map50 < 0.9);
    eb_coco_result_fini(&r);
    eb_dataset_destroy(ds);
}

EB_TEST(empty_images_and_false_positives)
{
    struct eb_dataset *ds = mk_dataset(3, 1);
    struct dets d = {.n = 0};
    add_gt(ds, 0, 1, 10, 10, 40, 40, 0);
    add_det(&d, 0, 1, 10, 10, 40, 40, 0.9);
    /* Image 1: nothing at all; it changes nothing. */
    struct eb_coco_result r = evaluate(ds, &d);
    ASSERT_NEAR(r.map, 1.0, TOL);
    ASSERT_EQ_INT(r.n_images, 3);
    eb_coco_result_fini(&r);
    /* Image 2 has no object but a detection scored above the true positive: precision 1/2
       at every recall. */
    add_det(&d, 2, 1, 100, 100, 40, 40, 0.95);
    r = evaluate(ds, &d);
    ASSERT_NEAR(r.map, 1.0 / (1.0 + 1.0 + DBL_EPSILON), TOL);
    ASSERT_NEAR(r.ar100, 1.0, TOL);
    eb_coco_result_fini(&r);
    /* No detections at all: AP 0 (not -1: there is ground truth). */
    r = evaluate(ds, &(struct dets){.n = 0});
    ASSERT_NEAR(r.map, 0.0, 0);
    ASSERT_NEAR(r.ar100, 0.0, 0);
    eb_coco_result_fini(&r);
    eb_dataset_destroy(ds);
}

EB_TEST(duplicate_detections_are_false_positives)
{
    struct eb_dataset *ds = mk_dataset(1, 1);
    struct dets d = {.n = 0};
    add_gt(ds, 0, 1, 0, 0, 40, 40, 0);
    add_gt(ds, 0, 1, 100, 100, 40, 40, 0);
    add_det(&d, 0, 1, 0, 0, 40, 40, 0.9);
    add_det(&d, 0, 1, 1, 1, 40, 40, 0.8); /* a second box on the first object */
    add_det(&d, 0, 1, 100, 100, 40, 40, 0.7);
    struct eb_coco_result r = evaluate(ds, &d);
    /* TP, FP, TP: recall .5 at precision 1 (recall points 0..0.50: 51), then recall 1 at
       precision 2/3 (0.51..1: 50 points). */
    double expect = (51.0 + 50.0 * (2.0 / (1.0 + 2.0 + DBL_EPSILON))) / 101.0;
    ASSERT_NEAR(r.map, expect, TOL);
    ASSERT_NEAR(r.map50, expect, TOL);
    ASSERT_NEAR(r.ar100, 1.0, TOL);
    eb_coco_result_fini(&r);
    d.n = 1;
    d.items[1] = d.items[2];
    d.n = 2;
    r = evaluate(ds, &d);
    ASSERT_NEAR(r.map, 1.0, TOL);
    eb_coco_result_fini(&r);
    eb_dataset_destroy(ds);
}

EB_TEST(area_ranges_split_small_medium_large)
{
    struct eb_dataset *ds = mk_dataset(1, 1);
    struct dets d = {.n = 0};
    add_gt(ds, 0, 1, 0, 0, 16, 16, 0);       /* small: 256 */
    add_gt(ds, 0, 1, 100, 100, 50, 50, 0);   /* medium: 2500 (missed) */
    add_gt(ds, 0, 1, 300, 200, 120, 120, 0); /* large: 14400 */
    add_det(&d, 0, 1, 0, 0, 16, 16, 0.9);
    add_det(&d, 0, 1, 300, 200, 120, 120, 0.8);
    struct eb_coco_result r = evaluate(ds, &d);
    ASSERT_NEAR(r.map_small, 1.0, TOL);
    ASSERT_NEAR(r.map_medium, 0.0, 0);
    ASSERT_NEAR(r.map_large, 1.0, TOL);
    /* All areas: recall 1/3 then 2/3 at precision 1; recall points 0..0.66 reach it. */
    ASSERT_NEAR(r.map, 67.0 / 101.0, TOL);
    ASSERT_NEAR(r.ar100, 2.0 / 3.0, TOL);
    ASSERT_NEAR(r.ar_small, 1.0, TOL);
    ASSERT_NEAR(r.ar_medium, 0.0, 0);
    ASSERT_NEAR(r.ar_large, 1.0, TOL);
    /* The boundaries belong to both ranges (32^2 exactly is small and medium). */
    eb_coco_result_fini(&r);
    ds->anns[0].bbox[2] = ds->anns[0].bbox[3] = 32;
    ds->anns[0].area = 1024;
    d.items[0].bbox[2] = d.items[0].bbox[3] = 32;
    d.n = 1;
    r = evaluate(ds, &d);
    ASSERT_NEAR(r.map_small, 1.0, TOL);
    ASSERT_TRUE(r.ar_medium > 0.0);
    eb_coco_result_fini(&r);
    eb_dataset_destroy(ds);
}

EB_TEST(max_dets_keeps_the_best_100_per_image_and_class)
{
    struct eb_dataset *ds = mk_dataset(1, 1);
    struct dets d = {.n = 0};
    add_gt(ds, 0, 1, 0, 0, 40, 40, 0);
    for (int i = 0; i < 99; i++)
        add_det(&d, 0, 1, 500, 400, 10, 10, 0.99 - 0.001 * i);
    add_det(&d, 0, 1, 0, 0, 40, 40, 0.1); /* the 100th: kept, precision 1/100 */
    struct eb_coco_result r = evaluate(ds, &d);
    ASSERT_NEAR(r.map, 1.0 / (99.0 + 1.0 + DBL_EPSILON), TOL);
    ASSERT_NEAR(r.ar100, 1.0, TOL);
    ASSERT_NEAR(r.ar10, 0.0, 0);
    ASSERT_NEAR(r.ar1, 0.0, 0);
    ASSERT_EQ_INT(r.n_dets_kept, 100);
    eb_coco_result_fini(&r);
    /* One more false positive above it: the true positive is the 101st and dropped. */
    add_det(&d, 0, 1, 500, 400, 10, 10, 0.5);
    r = evaluate(ds, &d);
    ASSERT_NEAR(r.map, 0.0, 0);
    ASSERT_NEAR(r.ar100, 0.0, 0);
    ASSERT_EQ_INT(r.n_dets, 101);
    ASSERT_EQ_INT(r.n_dets_kept, 100);
    eb_coco_result_fini(&r);
    eb_dataset_destroy(ds);
}

EB_TEST(recall_at_1_and_10_detections)
{
    struct eb_dataset *ds = mk_dataset(1, 1);
    struct dets d = {.n = 0};
    for (int i = 0; i < 3; i++) {
        add_gt(ds, 0, 1, 100.0 * i, 0, 50, 50, 0);
        add_det(&d, 0, 1, 100.0 * i, 0, 50, 50, 0.9 - 0.1 * i);
    }
    struct eb_coco_result r = evaluate(ds, &d);
    ASSERT_NEAR(r.ar1, 1.0 / 3.0, TOL);
    ASSERT_NEAR(r.ar10, 1.0, TOL);
    ASSERT_NEAR(r.ar100, 1.0, TOL);
    eb_coco_result_fini(&r);
    eb_dataset_destroy(ds);
}

EB_TEST(class_without_gt_is_minus_one_and_excluded)
{
    struct eb_dataset *ds = mk_dataset(1, 3);
    struct dets d = {.n = 0};
    add_gt(ds, 0, 1, 0, 0, 40, 40, 0);
    add_det(&d, 0, 1, 0, 0, 40, 40, 0.9);
    add_det(&d, 0, 2, 200, 200, 40, 40, 0.99); /* class 2 has no ground truth */
    add_det(&d, 0, 9, 200, 200, 40, 40, 0.99); /* not a category: not counted */
    struct eb_coco_result r = evaluate(ds, &d);
    ASSERT_NEAR(r.map, 1.0, TOL);
    ASSERT_EQ_INT(r.n_classes, 3);
    ASSERT_EQ_INT(r.n_classes_with_gt, 1);
    ASSERT_NEAR(r.classes[1].ap, -1.0, 0);
    ASSERT_NEAR(r.classes[1].ap50, -1.0, 0);
    ASSERT_NEAR(r.classes[2].ar100, -1.0, 0);
    ASSERT_EQ_INT(r.classes[1].dets, 1);
    ASSERT_EQ_INT(r.n_dets, 2);
    eb_coco_result_fini(&r);
    /* Restricted to category 2 alone: nothing has ground truth, every statistic is -1. */
    int64_t only2 = 2;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_coco_evaluate(ds, d.items, d.n, &only2, 1, &r, &diag));
    ASSERT_NEAR(r.map, -1.0, 0);
    ASSERT_NEAR(r.ar100, -1.0, 0);
    eb_coco_result_fini(&r);
    int64_t bad = 42;
    ASSERT_TRUE(eb_coco_evaluate(ds, d.items, d.n, &bad, 1, &r, &diag) == EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "category id 42");
    eb_dataset_destroy(ds);
}

/*
 * A mixed case (ties within and across images, crowds, every area range, several images and
 * classes) whose expected figures come from pycocotools' own cocoeval.py (COCO.loadRes +
 * COCOeval "bbox" + summarize, upstream cocodataset/cocoapi) run on the annotation and results
 * files this case writes with EB_KEEP_TMP=1; the C box IoU (maskApi.c bbIou) was ported line
 * for line to Python for that run, as no pycocotools build could be installed here.
 */
EB_TEST(mixed_case_matches_pycocotools)
{
    struct eb_dataset *ds = mk_dataset(12, 3);
    struct dets d = {.n = 0};
    uint32_t s = 12345u;
#define RND() ((s = s * 1664525u + 1013904223u) >> 8)
    for (size_t img = 0; img < 12; img++) {
        for (int k = 0; k < 7; k++) {
            double w = 6 + RND() % 150, h = 6 + RND() % 150;
            double x = RND() % 480, y = RND() % 320;
            int64_t cat = 1 + (int64_t)(RND() % 3);
            add_gt(ds, img, cat, x, y, w, h, RND() % 9 == 0);
            int n_det = (int)(RND() % 3);
            for (int j = 0; j < n_det; j++) {
                double jx = (double)(RND() % 7) - 3, jy = (double)(RND() % 7) - 3;
                double jw = (double)(RND() % 7) - 3;
                /* Scores on a coarse grid so that ties occur within and across images. */
                add_det(&d, img, cat, x + jx, y + jy, w + jw, h, (double)(RND() % 20) / 20.0);
            }
        }
        for (int j = 0; j < 4; j++) { /* false positives */
            int64_t cat = 1 + (int64_t)(RND() % 3);
            double x = RND() % 500, y = RND() % 400, w = 10 + RND() % 100, h = 10 + RND() % 100;
            add_det(&d, img, cat, x, y, w, h, (double)(RND() % 20) / 20.0);
        }
    }
#undef RND
    struct eb_coco_result r = evaluate(ds, &d);
    if (getenv("EB_KEEP_TMP") != NULL) {
        /* Writes the case as COCO files for an external check. */
        char path[1024];
        snprintf(path, sizeof(path), "%s/mixed_gt.json", eb_test_tmpdir());
        FILE *fp = fopen(path, "w");
        ASSERT_TRUE(fp != NULL);
        struct eb_json_writer w;
        eb_json_writer_init_file(&w, fp, 0);
        eb_json_obj_begin(&w);
        eb_json_key(&w, "images");
        eb_json_arr_begin(&w);
        for (size_t i = 0; i < ds->n_images; i++) {
            eb_json_obj_begin(&w);
            eb_json_kint(&w, "id", ds->images[i].id);
            eb_json_kint(&w, "width", 640);
            eb_json_kint(&w, "height", 480);
            eb_json_kstr(&w, "file_name", "img.jpg");
            eb_json_obj_end(&w);
        }
        eb_json_arr_end(&w);
        eb_json_key(&w, "annotations");
        eb_json_arr_begin(&w);
        for (size_t i = 0; i < ds->n_anns; i++) {
            const struct eb_dataset_ann *a = &ds->anns[i];
            eb_json_obj_begin(&w);
            eb_json_kint(&w, "id", (int64_t)i + 1);
            eb_json_kint(&w, "image_id", ds->images[a->image].id);
            eb_json_kint(&w, "category_id", a->category_id);
            eb_json_key(&w, "bbox");
            eb_json_arr_begin(&w);
            for (int k = 0; k < 4; k++)
                eb_json_num(&w, a->bbox[k]);
            eb_json_arr_end(&w);
            eb_json_knum(&w, "area", a->area);
            eb_json_kint(&w, "iscrowd", a->iscrowd);
            eb_json_obj_end(&w);
        }
        eb_json_arr_end(&w);
        eb_json_key(&w, "categories");
        eb_json_arr_begin(&w);
        for (size_t c = 0; c < ds->n_cats; c++) {
            eb_json_obj_begin(&w);
            eb_json_kint(&w, "id", ds->cats[c].id);
            eb_json_kstr(&w, "name", ds->cats[c].name);
            eb_json_obj_end(&w);
        }
        eb_json_arr_end(&w);
        eb_json_obj_end(&w);
        fclose(fp);
        snprintf(path, sizeof(path), "%s/mixed_dt.json", eb_test_tmpdir());
        struct eb_diag diag = {0};
        ASSERT_OK(eb_coco_write_detections(path, ds, d.items, d.n, &diag));
        printf("wrote %s/mixed_gt.json and mixed_dt.json\n", eb_test_tmpdir());
    }
    const double stats[12] = {r.map, r.map50, r.map75, r.map_small, r.map_medium, r.map_large,
                              r.ar1, r.ar10,  r.ar100, r.ar_small,  r.ar_medium,  r.ar_large};
    for (int i = 0; i < 12; i++)
        printf("stats[%d] = %.12f\n", i, stats[i]);
    static const double expect[12] = {
        0.246160868265, 0.363613583426, 0.253419146158, 0.114292929293,
        0.248415689309, 0.407505893446, 0.173809523810, 0.477777777778,
        0.477777777778, 0.260000000000, 0.502777777778, 0.494642857143,
    };
    for (int i = 0; i < 12; i++)
        ASSERT_NEAR(stats[i], expect[i], 1e-11);
    eb_coco_result_fini(&r);
    eb_dataset_destroy(ds);
}

EB_TEST(detections_json_round_trips)
{
    struct eb_dataset *ds = mk_dataset(2, 2);
    ds->images[1].id = 9;
    struct dets d = {.n = 0};
    add_det(&d, 0, 1, 1.5, 2.25, 30.125, 40.0625, 0.91234);
    add_det(&d, 1, 2, 0.1, 1e-3, 639.999, 479.001, 0.001);
    add_det(&d, 1, 1, 1.0 / 3.0, 2.0 / 3.0, 100, 200, 1.0 / 7.0);
    char path[1024];
    snprintf(path, sizeof(path), "%s/detections.json", eb_test_tmpdir());
    struct eb_diag diag = {0};
    ASSERT_OK(eb_coco_write_detections(path, ds, d.items, d.n, &diag));
    size_t len = 0;
    char *text = eb_test_read_file(path, &len);
    ASSERT_TRUE(text != NULL);
    struct eb_json_value *root = NULL;
    ASSERT_OK(eb_json_parse(text, len, &root, &diag));
    ASSERT_EQ_INT(root->type, EB_JSON_ARRAY);
    ASSERT_EQ_INT(root->n, 3);
    for (size_t i = 0; i < d.n; i++) {
        const struct eb_json_value *e = &root->items[i];
        ASSERT_EQ_INT(e->type, EB_JSON_OBJECT);
        ASSERT_EQ_INT(e->n, 4); /* exactly the four COCO result keys */
        ASSERT_NEAR(eb_json_get(e, "image_id")->num, (double)ds->images[d.items[i].image].id, 0);
        ASSERT_NEAR(eb_json_get(e, "category_id")->num, (double)d.items[i].category_id, 0);
        const struct eb_json_value *bb = eb_json_get(e, "bbox");
        ASSERT_TRUE(bb != NULL && bb->type == EB_JSON_ARRAY && bb->n == 4);
        for (int k = 0; k < 4; k++)
            ASSERT_TRUE(bb->items[k].num == d.items[i].bbox[k]); /* the same double */
        ASSERT_TRUE(eb_json_get(e, "score")->num == d.items[i].score);
    }
    ASSERT_NEAR(eb_json_path(root, "1/image_id")->num, 9, 0);
    eb_json_free(root);
    free(text);
    /* An empty list is an empty JSON array. */
    ASSERT_OK(eb_coco_write_detections(path, ds, d.items, 0, &diag));
    text = eb_test_read_file(path, &len);
    ASSERT_TRUE(text != NULL);
    ASSERT_STREQ(text, "[]\n");
    free(text);
    /* The metrics object parses too. */
    struct eb_coco_result r = evaluate(ds, &d);
    struct eb_json_writer w;
    eb_json_writer_init_mem(&w, 0);
    eb_coco_result_write_json(&r, &w);
    text = eb_json_writer_take(&w, &len);
    ASSERT_TRUE(text != NULL);
    ASSERT_OK(eb_json_parse(text, len, &root, &diag));
    ASSERT_NEAR(eb_json_path(root, "classes/0/ap")->num, -1, 0);
    ASSERT_STREQ(eb_json_path(root, "classes/1/name")->str, "c2");
    eb_json_free(root);
    free(text);
    eb_coco_result_fini(&r);
    eb_dataset_destroy(ds);
}

/* ------------------------------------------------------------------ class maps */

static struct eb_dataset *hituav_like(void)
{
    struct eb_dataset *ds = eb_dataset__create(EB_DATASET_VOC, "test");
    ASSERT_TRUE(ds != NULL);
    const char *names[] = {"Person", "Car", "Bicycle", "OtherVehicle", "DontCare"};
    for (int i = 0; i < 5; i++)
        ASSERT_OK(eb_dataset__add_cat(ds, i, names[i], NULL));
    return ds;
}

EB_TEST(classmap_by_name_and_from_file)
{
    static const char *const model[] = {"person", "bicycle", "car", "motorcycle", "truck", "bus"};
    struct eb_dataset *ds = hituav_like();
    struct eb_classmap m;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_classmap_by_name(model, 6, ds, &m, &diag));
    ASSERT_EQ_INT(m.n_mapped, 3);
    ASSERT_EQ_INT(m.category[0], 0);
    ASSERT_EQ_INT(m.category[1], 2);
    ASSERT_EQ_INT(m.category[2], 1);
    ASSERT_TRUE(m.category[3] == EB_CLASSMAP_NONE);
    ASSERT_EQ_INT(m.from_file, 0);
    eb_classmap_fini(&m);
    const char *text = "# COCO model on HIT-UAV\n"
                       "person = Person\n"
                       "\n"
                       "  2=1   # car by index, Car by id\r\n"
                       "'truck' = othervehicle\n"
                       "BUS = \"OtherVehicle\"\n";
    ASSERT_OK(eb_classmap_parse(text, "map.txt", model, 6, ds, &m, &diag));
    ASSERT_EQ_INT(m.n_mapped, 4);
    ASSERT_EQ_INT(m.from_file, 1);
    ASSERT_EQ_INT(m.category[0], 0);
    ASSERT_TRUE(m.category[1] == EB_CLASSMAP_NONE); /* the file replaces name matching */
    ASSERT_EQ_INT(m.category[2], 1);
    ASSERT_EQ_INT(m.category[4], 3);
    ASSERT_EQ_INT(m.category[5], 3);
    eb_classmap_fini(&m);
    eb_dataset_destroy(ds);
}

EB_TEST(classmap_errors_name_the_line)
{
    static const char *const model[] = {"person", "bicycle", "car"};
    struct eb_dataset *ds = hituav_like();
    struct {
        const char *text, *expect;
    } cases[] = {
        {"persn = Person\n", "map.txt line 1: 'persn' is not a class of the model"},
        {"person = Person\nperson = Human\n", "line 2: 'Human' is not a class of the dataset"},
        {"person Person\n", "line 1: expected `model_class = dataset_class`"},
        {"person = \n", "line 1: expected"},
        {"person = Person\nperson = Car\n", "model class 'person' is mapped twice"},
        {"7 = Car\n", "an index 0..2"},
    };
    for (size_t i = 0; i < EB_ARRAY_LEN(cases); i++) {
        struct eb_classmap m;
        struct eb_diag diag = {0};
        ASSERT_TRUE(eb_classmap_parse(cases[i].text, "map.txt", model, 3, ds, &m, &diag) ==
                    EB_ERR_INVALID_ARG);
        ASSERT_CONTAINS(diag.msg, cases[i].expect);
    }
    struct eb_classmap m;
    struct eb_diag diag = {0};
    ASSERT_TRUE(eb_classmap_read_file("/nonexistent/map.txt", model, 3, ds, &m, &diag) ==
                EB_ERR_IO);
    ASSERT_CONTAINS(diag.msg, "/nonexistent/map.txt");
    eb_dataset_destroy(ds);
}

/* ------------------------------------------------------------------ XML, image headers */

EB_TEST(xml_reader_reads_voc_and_tolerates_the_rest)
{
    const char *text = "<?xml version=\"1.0\"?>\n<!DOCTYPE annotation>\n<!-- a <comment> -->\n"
                       "<annotation verified=\"no\" note='a > b'>\n"
                       "  <filename> a&amp;b.jpg </filename>\n"
                       "  <size><width>640</width><height>512</height></size>\n"
                       "  <empty/>\n"
                       "  <object><name>P&#101;rson</name><bndbox><xmin>1</xmin></bndbox>"
                       "</object>\n"
                       "  <object><name><![CDATA[Car<1>]]></name></object>\n"
                       "</annotation>\n";
    struct eb_xml_node *doc = NULL;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_xml_parse(text, strlen(text), &doc, &diag));
    const struct eb_xml_node *ann = eb_xml_child(doc, "annotation");
    ASSERT_TRUE(ann != NULL);
    ASSERT_STREQ(eb_xml_text(eb_xml_child(ann, "filename")), "a&b.jpg");
    ASSERT_STREQ(eb_xml_text(eb_xml_child(eb_xml_child(ann, "size"), "height")), "512");
    ASSERT_STREQ(eb_xml_text(eb_xml_child(ann, "empty")), "");
    ASSERT_STREQ(eb_xml_text(eb_xml_child(ann, "missing")), "");
    ASSERT_EQ_INT(ann->n_children, 5);
    ASSERT_STREQ(eb_xml_text(eb_xml_child(&ann->children[3], "name")), "Person");
    ASSERT_STREQ(eb_xml_text(eb_xml_child(&ann->children[4], "name")), "Car<1>");
    eb_xml_free(doc);
    const char *bad[] = {"<a><b></a>", "<a>", "<a></b>", "</a>", "<a x=\"1", "<a><!-- x"};
    for (size_t i = 0; i < EB_ARRAY_LEN(bad); i++) {
        struct eb_diag d2 = {0};
        doc = NULL;
        if (eb_xml_parse(bad[i], strlen(bad[i]), &doc, &d2) != EB_ERR_FORMAT)
            EB_FAIL("accepted malformed XML '%s'", bad[i]);
        ASSERT_CONTAINS(d2.msg, "line 1: ");
        ASSERT_TRUE(doc == NULL);
    }
    /* Nesting deeper than the limit is refused, not a stack overflow. */
    char deep[EB_XML_MAX_DEPTH * 3 + 8];
    size_t n = 0;
    for (int i = 0; i <= EB_XML_MAX_DEPTH; i++) {
        deep[n++] = '<';
        deep[n++] = 'a';
        deep[n++] = '>';
    }
    ASSERT_TRUE(eb_xml_parse(deep, n, &doc, &diag) == EB_ERR_FORMAT);
}

static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *fp = fopen(path, "wb");
    ASSERT_TRUE(fp != NULL);
    ASSERT_EQ_INT(fwrite(p, 1, n, fp), n);
    fclose(fp);
}

EB_TEST(image_size_from_headers)
{
    const char *dir = eb_test_tmpdir();
    char path[1024];
    int w = 0, h = 0;
    struct eb_diag diag = {0};
    /* JPEG: SOI, an APP0 segment, then SOF0 with 480 rows and 640 columns. */
    static const unsigned char jpg[] = {0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x4A, 0x46,
                                        0xFF, 0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x01, 0xE0,
                                        0x02, 0x80, 0x01, 0x01, 0x11, 0x00};
    snprintf(path, sizeof(path), "%s/a.jpg", dir);
    write_bytes(path, jpg, sizeof(jpg));
    ASSERT_OK(eb_dataset_image_size(path, &w, &h, &diag));
    ASSERT_EQ_INT(w, 640);
    ASSERT_EQ_INT(h, 480);
    static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0, 0, 13,
                                        'I',  'H', 'D', 'R', 0,    0,    0x01, 0x40, 0, 0, 0, 0xF0};
    snprintf(path, sizeof(path), "%s/a.png", dir);
    write_bytes(path, png, sizeof(png));
    ASSERT_OK(eb_dataset_image_size(path, &w, &h, &diag));
    ASSERT_EQ_INT(w, 320);
    ASSERT_EQ_INT(h, 240);
    /* BMP with a top-down (negative) height. */
    unsigned char bmp[54] = {'B', 'M'};
    bmp[14] = 40;
    bmp[18] = 100;
    bmp[22] = 0xCE; /* -50 */
    bmp[23] = bmp[24] = bmp[25] = 0xFF;
    snprintf(path, sizeof(path), "%s/a.bmp", dir);
    write_bytes(path, bmp, sizeof(bmp));
    ASSERT_OK(eb_dataset_image_size(path, &w, &h, &diag));
    ASSERT_EQ_INT(w, 100);
    ASSERT_EQ_INT(h, 50);
    /* A JPEG cut before its frame header, and a text file. */
    snprintf(path, sizeof(path), "%s/cut.jpg", dir);
    write_bytes(path, jpg, 9);
    ASSERT_TRUE(eb_dataset_image_size(path, &w, &h, &diag) == EB_ERR_FORMAT);
    ASSERT_CONTAINS(diag.msg, "cut.jpg");
    snprintf(path, sizeof(path), "%s/t.png", dir);
    write_bytes(path, "hello", 5);
    eb_diag_clear(&diag);
    ASSERT_TRUE(eb_dataset_image_size(path, &w, &h, &diag) == EB_ERR_FORMAT);
    eb_diag_clear(&diag);
    ASSERT_TRUE(eb_dataset_image_size("/nonexistent.jpg", &w, &h, &diag) == EB_ERR_IO);
}

/* ------------------------------------------------------------------ dataset readers */

static void write_text(const char *path, const char *text)
{
    write_bytes(path, text, strlen(text));
}

/* A small YOLO dataset in the temporary folder: images/val/{000000000042,b}.png (only headers:
 * 320x240), labels/val/000000000042.txt, data.yaml. */
static const char *mk_yolo(void)
{
    static char root[1024];
    snprintf(root, sizeof(root), "%s/yolo", eb_test_tmpdir());
    char p[1200];
    mkdir(root, 0755);
    snprintf(p, sizeof(p), "%s/images", root);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/images/val", root);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/labels", root);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/labels/val", root);
    mkdir(p, 0755);
    static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0, 0, 13,
                                        'I',  'H', 'D', 'R', 0,    0,    0x01, 0x40, 0, 0, 0, 0xF0};
    snprintf(p, sizeof(p), "%s/images/val/000000000042.png", root);
    write_bytes(p, png, sizeof(png));
    snprintf(p, sizeof(p), "%s/images/val/b.png", root);
    write_bytes(p, png, sizeof(png));
    snprintf(p, sizeof(p), "%s/labels/val/000000000042.txt", root);
    write_text(p, "1 0.5 0.5 0.25 0.5\n\n0 0.1 0.1 0.3 0.1 0.3 0.3 0.1 0.3\n");
    snprintf(p, sizeof(p), "%s/data.yaml", root);
    write_text(p, "path: ../yolo\ntrain: images/train\nval: images/val\nnames:\n  0: 'cat'\n"
                  "  1: traffic light  # comment\n  2: dog\n");
    return root;
}

EB_TEST(yolo_folder_reader)
{
    const char *root = mk_yolo();
    struct eb_dataset *ds = NULL;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_dataset_load(root, NULL, &ds, &diag));
    ASSERT_EQ_INT(ds->format, EB_DATASET_YOLO);
    ASSERT_EQ_INT(ds->n_images, 2);
    ASSERT_EQ_INT(ds->images[0].width, 320);
    ASSERT_EQ_INT(ds->images[0].height, 240);
    /* Not every stem is numeric: ids are the indices. */
    ASSERT_EQ_INT(ds->images[0].id, 0);
    ASSERT_EQ_INT(ds->images[1].id, 1);
    ASSERT_EQ_INT(ds->n_anns, 2);
    ASSERT_EQ_INT(ds->anns[0].category_id, 1);
    ASSERT_NEAR(ds->anns[0].bbox[0], 120, 1e-9);
    ASSERT_NEAR(ds->anns[0].bbox[1], 60, 1e-9);
    ASSERT_NEAR(ds->anns[0].bbox[2], 80, 1e-9);
    ASSERT_NEAR(ds->anns[0].bbox[3], 120, 1e-9);
    ASSERT_NEAR(ds->anns[0].area, 9600, 1e-9);
    /* The polygon's bounding box. */
    ASSERT_NEAR(ds->anns[1].bbox[0], 32, 1e-9);
    ASSERT_NEAR(ds->anns[1].bbox[2], 64, 1e-9);
    ASSERT_NEAR(ds->anns[1].bbox[3], 48, 1e-9);
    ASSERT_EQ_INT(ds->n_cats, 3);
    ASSERT_STREQ(ds->cats[1].name, "traffic light");
    ASSERT_STREQ(ds->cats[0].name, "cat");
    eb_dataset_destroy(ds);
    /* A bad label line names the file and the line. */
    char p[1200];
    snprintf(p, sizeof(p), "%s/labels/val/b.txt", root);
    write_text(p, "0 0.5 0.5 0.1 0.1\n0 0.5 x 0.1 0.1\n");
    ASSERT_TRUE(eb_dataset_load(root, NULL, &ds, &diag) == EB_ERR_FORMAT);
    ASSERT_CONTAINS(diag.msg, "b.txt line 2");
    /* A class beyond the names file. */
    write_text(p, "7 0.5 0.5 0.1 0.1\n");
    eb_diag_clear(&diag);
    ASSERT_TRUE(eb_dataset_load(root, NULL, &ds, &diag) == EB_ERR_FORMAT);
    ASSERT_CONTAINS(diag.msg, "class 7");
    /* A split that does not exist. */
    struct eb_dataset_options o = {.split = "train"};
    eb_diag_clear(&diag);
    ASSERT_TRUE(eb_dataset_load(root, &o, &ds, &diag) == EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "--split");
}

EB_TEST(dataset_load_errors_are_one_line)
{
    struct eb_dataset *ds = NULL;
    struct eb_diag diag = {0};
    ASSERT_TRUE(eb_dataset_load("/nonexistent/data", NULL, &ds, &diag) == EB_ERR_IO);
    ASSERT_CONTAINS(diag.msg, "/nonexistent/data: no such folder");
    const char *dir = eb_test_tmpdir();
    eb_diag_clear(&diag);
    ASSERT_TRUE(eb_dataset_load(dir, NULL, &ds, &diag) == EB_ERR_IO);
    ASSERT_CONTAINS(diag.msg, "found neither annotations");
    /* Malformed COCO JSON names the file and the offset. */
    char p[1200];
    snprintf(p, sizeof(p), "%s/annotations", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/annotations/instances_val.json", dir);
    write_text(p, "{\"images\": [,]}");
    eb_diag_clear(&diag);
    ASSERT_TRUE(eb_dataset_load(dir, NULL, &ds, &diag) == EB_ERR_FORMAT);
    ASSERT_CONTAINS(diag.msg, "instances_val.json");
    write_text(p, "{\"images\": [], \"annotations\": [], \"categories\": []}");
    eb_diag_clear(&diag);
    ASSERT_TRUE(eb_dataset_load(dir, NULL, &ds, &diag) == EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "none of its 0 images");
    /* No images in a YOLO split. */
    struct eb_dataset_options yo = {.format = EB_DATASET_YOLO};
    snprintf(p, sizeof(p), "%s/images", dir);
    mkdir(p, 0755);
    eb_diag_clear(&diag);
    ASSERT_TRUE(eb_dataset_load(dir, &yo, &ds, &diag) == EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "has no images");
    /* Images without a labels/ folder: an error, not a dataset without objects. */
    snprintf(p, sizeof(p), "%s/images/a.bmp", dir);
    write_text(p, "BM");
    eb_diag_clear(&diag);
    ASSERT_TRUE(eb_dataset_load(dir, &yo, &ds, &diag) == EB_ERR_IO);
    ASSERT_CONTAINS(diag.msg, "no label folder");
}

/* Hostile or awkward dataset text (issue 19 §12): a UTF-8 byte-order mark is not malformed; a
 * COCO file_name that leaves the image folder, and nan/inf label coordinates, are refused
 * naming the file (and the line). */
EB_TEST(dataset_text_bom_traversal_and_non_finite)
{
    const char *root = mk_yolo();
    char p[1200];
    struct eb_dataset *ds = NULL;
    struct eb_diag diag = {0};
    /* a BOM before the first label line and before the YAML */
    snprintf(p, sizeof(p), "%s/labels/val/b.txt", root);
    write_text(p, "\xEF\xBB\xBF"
                  "0 0.5 0.5 0.1 0.1\n");
    snprintf(p, sizeof(p), "%s/data.yaml", root);
    write_text(p, "\xEF\xBB\xBFnames:\n  0: cat\n  1: dog\n");
    ASSERT_OK(eb_dataset_load(root, NULL, &ds, &diag));
    ASSERT_EQ_INT(ds->n_anns, 3);
    ASSERT_STREQ(ds->cats[0].name, "cat");
    eb_dataset_destroy(ds);
    /* nan and inf parse as numbers with strtod: refused, naming the file and the line */
    const char *bad[] = {"0 nan 0.5 0.1 0.1\n", "0 0.5 0.5 inf 0.1\n", "0 0.5 0.5 0.1 -INF\n"};
    snprintf(p, sizeof(p), "%s/labels/val/b.txt", root);
    for (size_t i = 0; i < EB_ARRAY_LEN(bad); i++) {
        write_text(p, bad[i]);
        eb_diag_clear(&diag);
        ASSERT_TRUE(eb_dataset_load(root, NULL, &ds, &diag) == EB_ERR_FORMAT);
        ASSERT_CONTAINS(diag.msg, "b.txt line 1");
        ASSERT_CONTAINS(diag.msg, "finite numbers");
    }
    /* COCO: a BOM is fine; a file_name with ../ or an absolute path is refused */
    char dir[1100];
    snprintf(dir, sizeof(dir), "%s/coco", eb_test_tmpdir());
    mkdir(dir, 0755);
    snprintf(p, sizeof(p), "%s/annotations", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/images", dir);
    mkdir(p, 0755);
    static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0, 0, 13,
                                        'I',  'H', 'D', 'R', 0,    0,    0x01, 0x40, 0, 0, 0, 0xF0};
    snprintf(p, sizeof(p), "%s/images/a.png", dir);
    write_bytes(p, png, sizeof(png));
    snprintf(p, sizeof(p), "%s/annotations/instances_val.json", dir);
    write_text(p, "\xEF\xBB\xBF{\"images\": [{\"id\": 1, \"file_name\": \"a.png\"}], "
                  "\"annotations\": [], \"categories\": [{\"id\": 1, \"name\": \"cat\"}]}");
    eb_diag_clear(&diag);
    ASSERT_OK(eb_dataset_load(dir, NULL, &ds, &diag));
    ASSERT_EQ_INT(ds->n_images, 1);
    eb_dataset_destroy(ds);
    const char *outside[] = {"../coco/images/a.png", "/etc/passwd", "x/../../a.png", ".."};
    for (size_t i = 0; i < EB_ARRAY_LEN(outside); i++) {
        char json[512];
        snprintf(json, sizeof(json),
                 "{\"images\": [{\"id\": 1, \"file_name\": \"%s\"}], \"annotations\": [], "
                 "\"categories\": [{\"id\": 1, \"name\": \"cat\"}]}",
                 outside[i]);
        write_text(p, json);
        eb_diag_clear(&diag);
        ASSERT_TRUE(eb_dataset_load(dir, NULL, &ds, &diag) == EB_ERR_FORMAT);
        ASSERT_CONTAINS(diag.msg, "leaves the dataset's image folder");
        ASSERT_CONTAINS(diag.msg, outside[i]);
    }
}

static const char *need_data(void)
{
    const char *data = eb_test_shared_data();
    if (data == NULL)
        EB_SKIP("../shared/data is absent (set EB_SHARED_DATA)");
    return data;
}

EB_TEST(coco128_json_and_yolo_labels_agree)
{
    const char *data = need_data();
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/datasets/coco128", data);
    struct eb_dataset *cj = NULL, *yl = NULL;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_dataset_load(dir, NULL, &cj, &diag)); /* annotations/ present: COCO JSON */
    ASSERT_EQ_INT(cj->format, EB_DATASET_COCO);
    ASSERT_EQ_INT(cj->n_images, 128);
    ASSERT_EQ_INT(cj->n_anns, 939);
    ASSERT_EQ_INT(cj->n_cats, 80);
    ASSERT_EQ_INT(cj->images_missing, 0);
    size_t crowd = 0;
    for (size_t i = 0; i < cj->n_anns; i++)
        crowd += (size_t)cj->anns[i].iscrowd;
    ASSERT_EQ_INT(crowd, 10);
    ASSERT_STREQ(eb_dataset_category_find(cj, 90)->name, "toothbrush");
    static const char *coco80[] = {"person", "bicycle"};
    struct eb_dataset_options o = {.format = EB_DATASET_YOLO,
                                   .split = "train2017",
                                   .default_names = coco80,
                                   .n_default_names = 2};
    /* 2 default names cannot name 80 classes: class<N> names, and a note says so. */
    ASSERT_OK(eb_dataset_load(dir, &o, &yl, &diag));
    ASSERT_EQ_INT(yl->n_images, 128);
    ASSERT_EQ_INT(yl->n_anns, 929);
    ASSERT_CONTAINS(yl->note, "no names file");
    ASSERT_STREQ(yl->cats[0].name, "class0");
    /* Numeric stems: image_id = the COCO id; sizes from the image headers = the JSON's. */
    for (size_t i = 0; i < yl->n_images; i++) {
        size_t j = 0;
        while (j < cj->n_images && cj->images[j].id != yl->images[i].id)
            j++;
        ASSERT_TRUE(j < cj->n_images);
        ASSERT_EQ_INT(yl->images[i].width, cj->images[j].width);
        ASSERT_EQ_INT(yl->images[i].height, cj->images[j].height);
    }
    ASSERT_EQ_INT(yl->images[0].id, 9);
    eb_dataset_destroy(yl);
    /* Without --split: of train2017 and val2017, val2017 is taken. */
    o.split = NULL;
    ASSERT_OK(eb_dataset_load(dir, &o, &yl, &diag));
    ASSERT_EQ_INT(yl->n_anns, 898);
    eb_dataset_destroy(yl);
    eb_dataset_keep_first(cj, 10);
    ASSERT_EQ_INT(cj->n_images, 10);
    for (size_t i = 0; i < cj->n_anns; i++)
        ASSERT_TRUE(cj->anns[i].image < 10);
    eb_dataset_destroy(cj);
}

EB_TEST(hituav_voc_xml_matches_its_coco_file)
{
    const char *data = need_data();
    char dir[1024], json[1200], images[1200];
    snprintf(dir, sizeof(dir), "%s/datasets/thermal/hit-uav", data);
    struct eb_dataset *voc = NULL, *cj = NULL;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_dataset_load(dir, NULL, &voc, &diag));
    ASSERT_EQ_INT(voc->format, EB_DATASET_VOC);
    ASSERT_EQ_INT(voc->n_images, 100);
    ASSERT_EQ_INT(voc->n_anns, 903);
    ASSERT_EQ_INT(voc->n_cats, 5);
    ASSERT_STREQ(voc->cats[0].name, "Person"); /* category.txt order */
    ASSERT_STREQ(voc->cats[4].name, "DontCare");
    ASSERT_EQ_INT(voc->images[0].width, 640);
    ASSERT_EQ_INT(voc->images[0].height, 512);
    /* The dataset's own COCO conversion (test.json, 579 images, 100 of them here, with its
       non-standard "annotation" and "filename" keys) has the same boxes. */
    snprintf(json, sizeof(json), "%s/test.json", dir);
    snprintf(images, sizeof(images), "%s/images", dir);
    const char *dirs[] = {images};
    ASSERT_OK(eb_dataset_read_coco(json, dirs, 1, &cj, &diag));
    ASSERT_EQ_INT(cj->n_images, 100);
    ASSERT_EQ_INT(cj->images_missing, 479);
    ASSERT_CONTAINS(cj->note, "left out");
    ASSERT_EQ_INT(cj->n_anns, voc->n_anns);
    for (size_t i = 0; i < voc->n_images; i++) {
        size_t j = 0;
        while (j < cj->n_images && strcmp(cj->images[j].path, voc->images[i].path) != 0)
            j++;
        ASSERT_TRUE(j < cj->n_images);
        /* Same boxes, same category ids, in the same order per image. */
        size_t a = 0, b = 0;
        for (;;) {
            while (a < voc->n_anns && voc->anns[a].image != i)
                a++;
            while (b < cj->n_anns && cj->anns[b].image != j)
                b++;
            if (a == voc->n_anns || b == cj->n_anns)
                break;
            ASSERT_EQ_INT(voc->anns[a].category_id, cj->anns[b].category_id);
            for (int k = 0; k < 4; k++)
                ASSERT_NEAR(voc->anns[a].bbox[k], cj->anns[b].bbox[k], 0);
            a++;
            b++;
        }
        ASSERT_TRUE(a == voc->n_anns && b == cj->n_anns);
    }
    eb_dataset_destroy(cj);
    eb_dataset_destroy(voc);
}

EB_TEST(seek_person_flat_yolo_folder)
{
    const char *data = need_data();
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/datasets/thermal/seek_person", data);
    static const char *const names[] = {"person"};
    struct eb_dataset_options o = {.default_names = names, .n_default_names = 1};
    struct eb_dataset *ds = NULL;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_dataset_load(dir, &o, &ds, &diag));
    ASSERT_EQ_INT(ds->format, EB_DATASET_YOLO);
    ASSERT_EQ_INT(ds->n_images, 10);
    ASSERT_EQ_INT(ds->n_anns, 19);
    ASSERT_EQ_INT(ds->images[0].width, 320);
    ASSERT_EQ_INT(ds->images[0].height, 240);
    ASSERT_STREQ(ds->cats[0].name, "person");
    eb_dataset_destroy(ds);
}

/* ------------------------------------------------------------------ what val adds: P/R at the
 * best-F1 confidence (Ultralytics' ap_per_class), the PR curve, the confusion matrix, the
 * per-image cap of the results file, annotated images */

#define TOL_F1 1e-9

EB_TEST(best_f1_precision_recall_per_class)
{
    /* c1: 4 boxes, 4 detections all at 0.9: two hit, two miss -> P 0.5, R 0.5 at any
     * confidence under 0.9. c2: 2 boxes, one detection at 0.5 that hits -> P 1, R 0.5 under 0.5,
     * recall 0 above. The mean F1 is (0.5 + 2/3) / 2 under 0.5, 0.25 between 0.5 and 0.9, 0
     * above: the best confidence is in the first plateau (its first point, 0), where P and R are
     * the ones above; the "all" row is their mean. */
    struct eb_dataset *ds = mk_dataset(1, 2);
    struct dets d = {.n = 0};
    for (int i = 0; i < 4; i++)
        add_gt(ds, 0, 1, 100.0 * i, 0, 40, 40, 0);
    add_gt(ds, 0, 2, 0, 200, 40, 40, 0);
    add_gt(ds, 0, 2, 100, 200, 40, 40, 0);
    add_det(&d, 0, 1, 0, 0, 40, 40, 0.9);
    add_det(&d, 0, 1, 500, 300, 20, 20, 0.9);
    add_det(&d, 0, 1, 100, 0, 40, 40, 0.9);
    add_det(&d, 0, 1, 550, 300, 20, 20, 0.9);
    add_det(&d, 0, 2, 0, 200, 40, 40, 0.5);
    struct eb_coco_result r;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_coco_evaluate(ds, d.items, d.n, NULL, 0, &r, &diag));
    ASSERT_NEAR(r.best_conf, 0.0, 0);
    ASSERT_NEAR(r.classes[0].p, 0.5, TOL_F1);
    ASSERT_NEAR(r.classes[0].r, 0.5, TOL_F1);
    ASSERT_NEAR(r.classes[0].f1, 0.5, TOL_F1);
    ASSERT_NEAR(r.classes[1].p, 1.0, TOL_F1);
    ASSERT_NEAR(r.classes[1].r, 0.5, TOL_F1);
    ASSERT_NEAR(r.classes[1].f1, 2.0 / 3.0, TOL_F1);
    ASSERT_NEAR(r.mp, 0.75, TOL_F1);
    ASSERT_NEAR(r.mr, 0.5, TOL_F1);
    ASSERT_NEAR(r.mf1, (0.5 + 2.0 / 3.0) / 2, TOL_F1);
    /* c2's PR curve: precision 1 up to recall 0.5, then nothing; its mean is AP50 = 51/101. */
    ASSERT_NEAR(r.classes[1].pr50[0], 1.0, TOL_F1);
    ASSERT_NEAR(r.classes[1].pr50[50], 1.0, TOL_F1);
    ASSERT_NEAR(r.classes[1].pr50[51], 0.0, 0);
    double sum = 0;
    for (int i = 0; i < EB_COCO_NUM_REC; i++)
        sum += r.pr50[i];
    ASSERT_NEAR(sum / EB_COCO_NUM_REC, r.map50, TOL_F1);
    eb_coco_result_fini(&r);
    eb_dataset_destroy(ds);
}

EB_TEST(best_f1_leaves_low_confidence_false_positives_out)
{
    /* 2 boxes, both found at 0.9, two false positives at 0.1: at the end P = 0.5; the best F1 is
     * just under 0.9 (the smoothing window's width, 0.05, below it), where precision is close to
     * 1 (interpolated towards 2/3 at 0.1) and recall 1. */
    struct eb_dataset *ds = mk_dataset(1, 1);
    struct dets d = {.n = 0};
    add_gt(ds, 0, 1, 0, 0, 40, 40, 0);
    add_gt(ds, 0, 1, 100, 0, 40, 40, 0);
    add_det(&d, 0, 1, 0, 0, 40, 40, 0.9);
    add_det(&d, 0, 1, 100, 0, 40, 40, 0.9);
    add_det(&d, 0, 1, 500, 300, 20, 20, 0.1);
    add_det(&d, 0, 1, 550, 300, 20, 20, 0.1);
    struct eb_coco_result r;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_coco_evaluate(ds, d.items, d.n, NULL, 0, &r, &diag));
    ASSERT_TRUE(r.best_conf > 0.8 && r.best_conf < 0.9);
    /* p(x) = 1 - (0.9 - x) / 0.8 / 3 between the groups */
    ASSERT_NEAR(r.classes[0].p, 1.0 - (0.9 - r.best_conf) / 0.8 / 3.0, 1e-6);
    ASSERT_TRUE(r.classes[0].p > 0.95);
    ASSERT_NEAR(r.classes[0].r, 1.0, TOL_F1);
    eb_coco_result_fini(&r);
    eb_dataset_destroy(ds);
}

EB_TEST(class_without_gt_has_no_precision_recall)
{
    struct eb_dataset *ds = mk_dataset(1, 2);
    struct dets d = {.n = 0};
    add_gt(ds, 0, 1, 0, 0, 40, 40, 0);
    add_det(&d, 0, 1, 0, 0, 40, 40, 0.8);
    add_det(&d, 0, 2, 300, 300, 40, 40, 0.8); /* c2 has no boxes: out of every mean */
    struct eb_coco_result r;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_coco_evaluate(ds, d.items, d.n, NULL, 0, &r, &diag));
    ASSERT_NEAR(r.classes[1].p, -1.0, 0);
    ASSERT_NEAR(r.classes[1].pr50[0], -1.0, 0);
    ASSERT_NEAR(r.mp, 1.0, TOL_F1);
    ASSERT_NEAR(r.mr, 1.0, TOL_F1);
    eb_coco_result_fini(&r);
    eb_dataset_destroy(ds);
}

EB_TEST(confusion_matrix_of_a_crafted_set)
{
    /* Classes c1 (A) and c2 (B); index 2 is background; [predicted][true]. */
    struct eb_dataset *ds = mk_dataset(2, 2);
    struct dets d = {.n = 0};
    add_gt(ds, 0, 1, 0, 0, 100, 100, 0); /* A found as A */
    add_det(&d, 0, 1, 0, 0, 100, 100, 0.9);
    add_gt(ds, 0, 2, 200, 0, 100, 100, 0); /* B found as A */
    add_det(&d, 0, 1, 200, 0, 100, 100, 0.8);
    add_gt(ds, 0, 2, 400, 0, 100, 100, 0); /* B missed: its detection is under conf 0.25 */
    add_det(&d, 0, 2, 400, 0, 100, 100, 0.2);
    add_det(&d, 0, 2, 0, 300, 50, 50, 0.9);    /* B where nothing is: background */
    add_gt(ds, 1, 1, 0, 200, 100, 100, 0);     /* two detections on one A: the better IoU */
    add_det(&d, 1, 1, 10, 200, 100, 100, 0.9); /* IoU 90/110 */
    add_det(&d, 1, 1, 0, 200, 100, 100, 0.7);  /* IoU 1: matched, although scored lower */
    add_gt(ds, 1, 1, 300, 300, 100, 100, 0);   /* IoU 0.33 < 0.45: A missed, the det is FP */
    add_det(&d, 1, 1, 350, 300, 100, 100, 0.9);
    add_gt(ds, 1, 1, 600, 400, 30, 30, 1); /* a crowd region counts nowhere */
    const int64_t cats[] = {2, 1};
    struct eb_confusion cm;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_confusion_compute(ds, d.items, d.n, cats, 2, EB_CONFUSION_CONF, EB_CONFUSION_IOU,
                                   &cm, &diag));
    ASSERT_EQ_INT(cm.n, 2);
    const uint64_t want[3][3] = {{2, 1, 2}, {0, 0, 1}, {1, 1, 0}};
    for (size_t p = 0; p < 3; p++)
        for (size_t t = 0; t < 3; t++) {
            if (eb_confusion_at(&cm, p, t) != want[p][t])
                fprintf(stderr, "[%zu][%zu] = %llu, expected %llu\n", p, t,
                        (unsigned long long)eb_confusion_at(&cm, p, t),
                        (unsigned long long)want[p][t]);
            ASSERT_TRUE(eb_confusion_at(&cm, p, t) == want[p][t]);
        }
    eb_confusion_fini(&cm);
    const int64_t bad[] = {7};
    ASSERT_TRUE(eb_confusion_compute(ds, d.items, d.n, bad, 1, 0.25, 0.45, &cm, &diag) ==
                EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "category id 7");
    eb_dataset_destroy(ds);
}

EB_TEST(results_keep_the_best_max_det_per_image_all_classes)
{
    struct eb_dataset *ds = mk_dataset(2, 2);
    struct eb_accuracy *acc = NULL;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_accuracy_create_from(ds, "test", NULL, &acc, &diag));
    const char *const names[] = {"c1", "c2"};
    ASSERT_OK(eb_accuracy_bind(acc, names, 2, 2, &diag));
    ASSERT_EQ_INT(acc->max_det, EB_COCO_MAX_DETS);
    /* 150 detections of image 0, both classes, scores 0.001..0.150: the best 100 stay. */
    struct eb_detection items[150];
    for (int i = 0; i < 150; i++)
        items[i] = (struct eb_detection){.x1 = (float)i,
                                         .y1 = 0,
                                         .x2 = (float)i + 10,
                                         .y2 = 10,
                                         .score = (float)(i + 1) / 1000.0f,
                                         .cls = i % 2};
    struct eb_detections dd = {.items = items, .count = 150, .capacity = 150};
    ASSERT_OK(eb_accuracy_add(acc, 0, &dd, &diag));
    ASSERT_EQ_INT(acc->n_dets, 100);
    ASSERT_EQ_INT(acc->over_max_det, 50);
    ASSERT_NEAR(acc->dets[0].score, 0.150, 1e-9);
    ASSERT_NEAR(acc->dets[99].score, 0.051, 1e-9);
    /* --max_det 3 on image 1: 0.9, 0.7, 0.5 of five, in score order. */
    acc->max_det = 3;
    const float sc[5] = {0.1f, 0.5f, 0.3f, 0.9f, 0.7f};
    for (int i = 0; i < 5; i++)
        items[i].score = sc[i];
    dd.count = 5;
    ASSERT_OK(eb_accuracy_add(acc, 1, &dd, &diag));
    ASSERT_EQ_INT(acc->n_dets, 103);
    ASSERT_NEAR(acc->dets[100].score, 0.9, 1e-6);
    ASSERT_NEAR(acc->dets[101].score, 0.7, 1e-6);
    ASSERT_NEAR(acc->dets[102].score, 0.5, 1e-6);
    ASSERT_EQ_INT(acc->over_max_det, 52);
    eb_accuracy_destroy(acc);
}

EB_TEST(annotated_image_decodes_back_with_its_boxes)
{
    const int w = 96, h = 64;
    uint8_t *rgb = malloc((size_t)w * h * 3);
    ASSERT_TRUE(rgb != NULL);
    memset(rgb, 40, (size_t)w * h * 3);
    struct eb_detection items[2] = {
        {.x1 = 10, .y1 = 20, .x2 = 60, .y2 = 50, .score = 0.87f, .cls = 0},
        {.x1 = 70, .y1 = 5, .x2 = 90, .y2 = 30, .score = 0.10f, .cls = 1}, /* under min_score */
    };
    struct eb_detections d = {.items = items, .count = 2, .capacity = 2};
    const char *const names[] = {"person", "car"};
    char path[1024];
    snprintf(path, sizeof(path), "%s/a.png", eb_test_tmpdir());
    struct eb_diag diag = {0};
    ASSERT_OK(eb_annotate_save(path, rgb, w, h, (size_t)w * 3, &d, names, 2, 0.25, &diag));
    size_t len = 0;
    char *png = eb_test_read_file(path, &len);
    ASSERT_TRUE(png != NULL);
    struct eb_image_decoder dec;
    memset(&dec, 0, sizeof(dec));
    struct eb_image img;
    char why[EB_IMAGE_WHY_MAX] = "";
    ASSERT_TRUE(eb_image_format_of((const uint8_t *)png, len) == EB_IMAGE_FORMAT_PNG);
    ASSERT_OK(
        eb_image_decode(&dec, EB_IMAGE_FORMAT_PNG, (const uint8_t *)png, len, &img, why, &diag));
    ASSERT_EQ_INT(img.width, w);
    ASSERT_EQ_INT(img.height, h);
    const uint8_t *left = img.rgb + ((size_t)35 * (size_t)w + 10) * 3; /* on the left edge */
    ASSERT_TRUE(left[0] == 255 && left[1] == 56 && left[2] == 56);     /* class 0's colour */
    const uint8_t *in = img.rgb + ((size_t)35 * (size_t)w + 30) * 3;   /* inside: untouched */
    ASSERT_TRUE(in[0] == 40 && in[1] == 40 && in[2] == 40);
    const uint8_t *skip = img.rgb + ((size_t)20 * (size_t)w + 70) * 3; /* the 0.10 one */
    ASSERT_TRUE(skip[0] == 40 && skip[1] == 40 && skip[2] == 40);
    /* The label above the box: white letter pixels on the box's colour between y 12 and 19. */
    int white = 0;
    for (int y = 11; y < 20; y++)
        for (int x = 10; x < 60; x++) {
            const uint8_t *p = img.rgb + ((size_t)y * (size_t)w + (size_t)x) * 3;
            white += p[0] == 255 && p[1] == 255 && p[2] == 255;
        }
    ASSERT_TRUE(white > 20);
    /* A folder that does not exist: one line naming the file. */
    snprintf(path, sizeof(path), "%s/no/such/dir/a.png", eb_test_tmpdir());
    ASSERT_TRUE(eb_annotate_save(path, rgb, w, h, (size_t)w * 3, &d, names, 2, 0, &diag) ==
                EB_ERR_IO);
    ASSERT_CONTAINS(diag.msg, "no/such/dir/a.png");
    eb_image_decoder_fini(&dec);
    free(png);
    free(rgb);
}
