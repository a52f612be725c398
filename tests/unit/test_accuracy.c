/*
 * Detection quality of the whole pre/post-processing chain on real data: the source reader,
 * the letterbox, ONNX Runtime and the YOLO decode + NMS must together recover labelled objects.
 */
#include <stdlib.h>
#include <string.h>

#include "eb/backend.h"
#include "eb_test.h"
#include "harness/pipeline/source.h"
#include "yolo/yolo.h"

struct detector {
    struct eb_backend *be;
    struct eb_model_info info;
    float *input;
    int size;
    struct eb_yolo_layout_info layout;
    struct eb_yolo_scratch scratch;
    struct eb_detection items[300];
    struct eb_detections dets;
};

static void detector_open(struct detector *d, const char *model)
{
    memset(d, 0, sizeof(*d));
    const struct eb_backend_ops *ops = eb_backend_find("ort");
    struct eb_backend_config cfg = {.device = EB_DEVICE_CPU, .mem_limit_bytes = 8000000000ull};
    struct eb_backend_probe probe;
    struct eb_diag diag = {0};
    if (ops == NULL || ops->probe(&cfg, &probe, &diag) != EB_OK)
        EB_SKIP("ONNX Runtime not available (%s); run scripts/setup.sh", diag.msg);
    ASSERT_OK(eb_backend_create(ops, &cfg, &d->be, &diag));
    struct eb_model_spec spec = {.path = model};
    ASSERT_OK(eb_backend_load(d->be, &spec, &d->info, &diag));
    d->size = (int)d->info.inputs[0].shape[2];
    d->input = malloc(sizeof(float) * 3 * (size_t)d->size * (size_t)d->size);
    ASSERT_TRUE(d->input != NULL);
    ASSERT_OK(eb_yolo_layout_detect(d->info.outputs[0].shape, d->info.outputs[0].rank,
                                    d->info.n_class_names, &d->layout, &diag));
    ASSERT_OK(eb_yolo_scratch_init(&d->scratch, &d->layout, &diag));
    d->dets.items = d->items;
    d->dets.capacity = 300;
}

static void detector_run(struct detector *d, const struct eb_frame *fr)
{
    struct eb_letterbox lb;
    eb_letterbox_compute(fr->width, fr->height, d->size, d->size, &lb);
    eb_letterbox_rgb_to_nchw_f32(fr->rgb, fr->width, fr->height, fr->stride, &lb, 3, d->input);
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 4, .data = d->input};
    in.shape[0] = 1, in.shape[1] = 3, in.shape[2] = d->size, in.shape[3] = d->size;
    struct eb_tensor out[EB_BACKEND_MAX_IO];
    struct eb_infer_timing t;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_backend_infer(d->be, &in, 1, out, d->info.n_outputs, &t, &diag));
    struct eb_yolo_params p = {.conf = 0.25f, .iou = 0.7f, .max_det = 300};
    eb_yolo_postprocess(&d->layout, out[0].data, &lb, &p, &d->scratch, &d->dets);
}

static void detector_close(struct detector *d)
{
    eb_yolo_scratch_fini(&d->scratch);
    eb_backend_destroy(d->be);
    free(d->input);
}

static const char *need_data(void)
{
    const char *data = eb_test_shared_data();
    if (data == NULL)
        EB_SKIP("../shared/data is absent");
    return data;
}

EB_TEST(coco128_recall_of_large_objects)
{
    const char *data = need_data();
    char model[1024], spec_text[1024];
    snprintf(model, sizeof(model), "%s/models/yolov8n_int8_qdq.onnx", data);
    snprintf(spec_text, sizeof(spec_text), "image_dir=%s/datasets/coco128/images/train2017", data);
    struct detector d;
    detector_open(&d, model);
    struct eb_source_spec spec;
    struct eb_source *src = NULL;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_source_spec_parse(spec_text, &spec, &diag));
    ASSERT_OK(eb_source_open(&spec, NULL, &src, &diag));
    int gt_total = 0, gt_found = 0, images = 0;
    struct eb_frame fr;
    enum eb_status st;
    while ((st = eb_source_next(src, &fr, &diag)) == EB_OK) {
        images++;
        detector_run(&d, &fr);
        char label[1200];
        snprintf(label, sizeof(label), "%s/datasets/coco128/labels/train2017/%.*s.txt", data,
                 (int)(strrchr(fr.name, '.') - fr.name), fr.name);
        FILE *f = fopen(label, "r");
        if (f == NULL)
            continue; /* an image without objects */
        int used[300] = {0};
        int cls;
        float cx, cy, w, h;
        while (fscanf(f, "%d %f %f %f %f", &cls, &cx, &cy, &w, &h) == 5) {
            if (w * h <= 0.05f)
                continue; /* only boxes larger than 5% of the image count */
            struct eb_detection gt = {.x1 = (cx - w / 2) * (float)fr.width,
                                      .y1 = (cy - h / 2) * (float)fr.height,
                                      .x2 = (cx + w / 2) * (float)fr.width,
                                      .y2 = (cy + h / 2) * (float)fr.height,
                                      .cls = cls};
            gt_total++;
            int best = -1;
            float best_iou = 0.5f;
            for (size_t k = 0; k < d.dets.count; k++) {
                float iou = eb_yolo_iou(&gt, &d.dets.items[k]);
                if (!used[k] && d.dets.items[k].cls == cls && iou >= best_iou) {
                    best = (int)k;
                    best_iou = iou;
                }
            }
            if (best >= 0) {
                used[best] = 1;
                gt_found++;
            }
        }
        fclose(f);
    }
    ASSERT_EQ_INT(st, EB_ERR_END);
    ASSERT_EQ_INT(images, 128);
    double recall = gt_total ? (double)gt_found / gt_total : 0;
    printf("coco128 train2017: %d of %d labelled boxes > 5%% of the image found at IoU 0.5 "
           "(recall %.3f)\n",
           gt_found, gt_total, recall);
    ASSERT_TRUE(gt_total > 50);
    ASSERT_TRUE(recall >= 0.6);
    eb_source_destroy(src);
    detector_close(&d);
}

EB_TEST(bus_jpg_has_a_bus_and_persons)
{
    const char *data = need_data();
    char model[1024], spec_text[1024];
    snprintf(model, sizeof(model), "%s/models/yolov8n_int8_qdq.onnx", data);
    snprintf(spec_text, sizeof(spec_text), "image_dir=%s/datasets/samples/bus.jpg", data);
    struct detector d;
    detector_open(&d, model);
    struct eb_source_spec spec;
    struct eb_source *src = NULL;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_source_spec_parse(spec_text, &spec, &diag));
    ASSERT_OK(eb_source_open(&spec, NULL, &src, &diag));
    struct eb_frame fr;
    ASSERT_OK(eb_source_next(src, &fr, &diag));
    detector_run(&d, &fr);
    int bus = 0, person = 0;
    for (size_t k = 0; k < d.dets.count; k++) {
        const struct eb_detection *x = &d.dets.items[k];
        ASSERT_TRUE(x->x1 >= 0 && x->y1 >= 0 && x->x2 <= (float)fr.width &&
                    x->y2 <= (float)fr.height && x->x1 < x->x2 && x->y1 < x->y2);
        bus += x->cls == 5;
        person += x->cls == 0;
    }
    printf("bus.jpg: %d bus, %d persons, %zu detections\n", bus, person, d.dets.count);
    ASSERT_TRUE(bus >= 1);
    ASSERT_TRUE(person >= 3);
    ASSERT_STREQ(d.info.class_names[5], "bus");
    eb_source_destroy(src);
    detector_close(&d);
}
