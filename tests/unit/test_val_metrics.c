/*
 * What `edgebench val` adds to the COCO figures, on hand-computed cases: precision and recall
 * at the best-F1 confidence (Ultralytics' ap_per_class), the PR curve at IoU .50, Ultralytics'
 * confusion matrix, the per-image detection cap of the COCO results file, and the annotated
 * images of --save_images decoded back.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "eb_test.h"
#include "eval/coco_eval.h"
#include "eval/confusion.h"
#include "eval/dataset.h"
#include "eval/dataset_internal.h"
#include "harness/pipeline/accuracy.h"
#include "harness/pipeline/annotate.h"
#include "harness/pipeline/image_decode.h"

/* n_images 640x480 images (ids 1..n) and categories 1..n_cats named c1, c2... */
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
    struct eb_coco_det items[64];
    size_t n;
};

static void add_det(struct dets *d, size_t image, int64_t cat, double x, double y, double w,
                    double h, double score)
{
    ASSERT_TRUE(d->n < EB_ARRAY_LEN(d->items));
    d->items[d->n++] = (struct eb_coco_det){
        .image = image, .category_id = cat, .bbox = {x, y, w, h}, .score = score};
}

#define TOL 1e-9

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
    ASSERT_NEAR(r.classes[0].p, 0.5, TOL);
    ASSERT_NEAR(r.classes[0].r, 0.5, TOL);
    ASSERT_NEAR(r.classes[0].f1, 0.5, TOL);
    ASSERT_NEAR(r.classes[1].p, 1.0, TOL);
    ASSERT_NEAR(r.classes[1].r, 0.5, TOL);
    ASSERT_NEAR(r.classes[1].f1, 2.0 / 3.0, TOL);
    ASSERT_NEAR(r.mp, 0.75, TOL);
    ASSERT_NEAR(r.mr, 0.5, TOL);
    ASSERT_NEAR(r.mf1, (0.5 + 2.0 / 3.0) / 2, TOL);
    /* c2's PR curve: precision 1 up to recall 0.5, then nothing; its mean is AP50 = 51/101. */
    ASSERT_NEAR(r.classes[1].pr50[0], 1.0, TOL);
    ASSERT_NEAR(r.classes[1].pr50[50], 1.0, TOL);
    ASSERT_NEAR(r.classes[1].pr50[51], 0.0, 0);
    double sum = 0;
    for (int i = 0; i < EB_COCO_NUM_REC; i++)
        sum += r.pr50[i];
    ASSERT_NEAR(sum / EB_COCO_NUM_REC, r.map50, TOL);
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
    ASSERT_NEAR(r.classes[0].r, 1.0, TOL);
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
    ASSERT_NEAR(r.mp, 1.0, TOL);
    ASSERT_NEAR(r.mr, 1.0, TOL);
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
