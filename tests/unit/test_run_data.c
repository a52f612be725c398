/*
 * `run --data`: the image source over a given file list (the dataset's order, file_index), the
 * accuracy collector (each image scored once, only the scored prefix evaluated, the class map)
 * and the dataset options of the command line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eb_test.h"
#include "harness/cmd/config.h"
#include "harness/pipeline/accuracy.h"
#include "harness/pipeline/source.h"

static void path_join(char *buf, size_t size, const char *a, const char *b)
{
    int n = snprintf(buf, size, "%s/%s", a, b);
    if (n < 0 || (size_t)n >= size)
        EB_FAIL("path too long: %s/%s", a, b);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL || fputs(text, f) == EOF)
        EB_FAIL("cannot write %s", path);
    fclose(f);
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A w x h 24-bit BMP of one gray level. */
static void write_bmp(const char *path, int w, int h, uint8_t level)
{
    size_t stride = (((size_t)w * 24 + 31) / 32) * 4;
    size_t off = 54, size = off + stride * (size_t)h;
    uint8_t *b = calloc(1, size);
    ASSERT_TRUE(b != NULL);
    b[0] = 'B';
    b[1] = 'M';
    put_le32(b + 2, (uint32_t)size);
    put_le32(b + 10, (uint32_t)off);
    put_le32(b + 14, 40);
    put_le32(b + 18, (uint32_t)w);
    put_le32(b + 22, (uint32_t)h);
    b[26] = 1;
    b[28] = 24;
    memset(b + off, level, stride * (size_t)h);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(b, 1, size, f) != size)
        EB_FAIL("cannot write %s", path);
    fclose(f);
    free(b);
}

/*
 * A YOLO dataset in `dir`: images/val/{a,b,c}.bmp (64x32), one "person" (class 0) box each,
 * centred, 32x16 pixels; b.bmp is not an image (undecodable).
 */
static void make_dataset(char *dir, size_t size)
{
    path_join(dir, size, eb_test_tmpdir(), "ds");
    char p[700];
    mkdir(dir, 0755);
    path_join(p, sizeof(p), dir, "images");
    mkdir(p, 0755);
    path_join(p, sizeof(p), dir, "images/val");
    mkdir(p, 0755);
    path_join(p, sizeof(p), dir, "labels");
    mkdir(p, 0755);
    path_join(p, sizeof(p), dir, "labels/val");
    mkdir(p, 0755);
    path_join(p, sizeof(p), dir, "classes.txt");
    write_text(p, "person\ncar\n");
    static const char *const stems[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof(name), "images/val/%s.bmp", stems[i]);
        path_join(p, sizeof(p), dir, name);
        write_bmp(p, 64, 32, (uint8_t)(40 * i));
        snprintf(name, sizeof(name), "labels/val/%s.txt", stems[i]);
        path_join(p, sizeof(p), dir, name);
        write_text(p, "0 0.5 0.5 0.5 0.5\n");
    }
}

/* One detection of class `cls` at the labelled box (x 16..48, y 8..24) or shifted by `dx`. */
static void one_det(struct eb_detections *d, struct eb_detection *item, int cls, float dx)
{
    memset(item, 0, sizeof(*item));
    item->x1 = 16 + dx;
    item->y1 = 8;
    item->x2 = 48 + dx;
    item->y2 = 24;
    item->score = 0.9f;
    item->cls = cls;
    d->items = item;
    d->count = 1;
    d->capacity = 1;
}

EB_TEST(imgdir_reads_a_file_list_in_its_order)
{
    char dir[600], a[700], c[700];
    make_dataset(dir, sizeof(dir));
    path_join(a, sizeof(a), dir, "images/val/a.bmp");
    path_join(c, sizeof(c), dir, "images/val/c.bmp");
    const char *files[] = {c, a, c};
    struct eb_source_spec spec;
    struct eb_diag diag = {0};
    char text[700];
    snprintf(text, sizeof(text), "image_dir=%s", dir);
    ASSERT_OK(eb_source_spec_parse(text, &spec, &diag));
    struct eb_source_options so = {.files = files, .n_files = 3};
    struct eb_source *src = NULL;
    ASSERT_OK(eb_source_open(&spec, &so, &src, &diag));
    ASSERT_EQ_INT(eb_source_count(src), 3);
    struct eb_frame f;
    ASSERT_OK(eb_source_next(src, &f, &diag));
    ASSERT_STREQ(f.name, "c.bmp");
    ASSERT_EQ_INT(f.file_index, 0);
    ASSERT_EQ_INT(f.width, 64);
    ASSERT_OK(eb_source_next(src, &f, &diag));
    ASSERT_STREQ(f.name, "a.bmp");
    ASSERT_EQ_INT(f.file_index, 1);
    ASSERT_OK(eb_source_next(src, &f, &diag));
    ASSERT_EQ_INT(f.file_index, 2);
    ASSERT_EQ_INT(eb_source_next(src, &f, &diag), EB_ERR_END);
    ASSERT_OK(eb_source_rewind(src, &diag));
    ASSERT_OK(eb_source_next(src, &f, &diag));
    ASSERT_EQ_INT(f.file_index, 0);
    eb_source_destroy(src);
    /* Folders keep -1 for other kinds and their own listing index. */
    struct eb_source_spec syn;
    ASSERT_OK(eb_source_spec_parse("synthetic=64x48", &syn, &diag));
    ASSERT_OK(eb_source_open(&syn, NULL, &src, &diag));
    ASSERT_OK(eb_source_next(src, &f, &diag));
    ASSERT_EQ_INT(f.file_index, -1);
    eb_source_destroy(src);
}

EB_TEST(accuracy_scores_each_image_once_over_the_scored_prefix)
{
    char dir[600], det_path[700];
    make_dataset(dir, sizeof(dir));
    path_join(det_path, sizeof(det_path), eb_test_tmpdir(), "dets.json");
    struct eb_diag diag = {0};
    struct eb_accuracy *acc = NULL;
    ASSERT_OK(eb_accuracy_create(dir, NULL, &acc, &diag));
    ASSERT_EQ_INT(acc->ds->n_images, 3);
    const char *names[] = {"Person", "dog"};
    ASSERT_OK(eb_accuracy_bind(acc, names, 2, 2, &diag));
    ASSERT_EQ_INT(acc->map.n_mapped, 1); /* Person = person, ignoring case; dog maps to nothing */
    struct eb_detections d;
    struct eb_detection item;
    /* A first pass (the solo baseline) is forgotten by reset. */
    one_det(&d, &item, 0, 20);
    ASSERT_OK(eb_accuracy_add(acc, 0, &d, &diag));
    eb_accuracy_reset(acc);
    /* Image 0 perfect; image 0 again (the dataset looping) with a miss adds nothing. */
    one_det(&d, &item, 0, 0);
    ASSERT_OK(eb_accuracy_add(acc, 0, &d, &diag));
    one_det(&d, &item, 0, 20);
    ASSERT_OK(eb_accuracy_add(acc, 0, &d, &diag));
    one_det(&d, &item, 1, 0);                      /* dog: dropped */
    ASSERT_OK(eb_accuracy_add(acc, 7, &d, &diag)); /* out of range: nothing */
    ASSERT_EQ_INT(acc->n_scored, 1);
    ASSERT_EQ_INT(acc->n_dets, 1);
    struct eb_accuracy_result *r = NULL;
    ASSERT_OK(eb_accuracy_finish(acc, det_path, "dets.json", 0.001, 1, &r, &diag));
    ASSERT_EQ_INT(r->images, 1); /* image 0 only: 1 and 2 were not measured */
    ASSERT_EQ_INT(r->dataset_images, 3);
    ASSERT_EQ_INT(r->gt_boxes, 1);
    ASSERT_NEAR(r->map50_95, 1.0, 1e-9);
    ASSERT_NEAR(r->map50, 1.0, 1e-9);
    ASSERT_EQ_INT(r->n_per_class, 1);
    ASSERT_STREQ(r->per_class[0].name, "person");
    ASSERT_STREQ(r->format, "yolo");
    ASSERT_STREQ(r->detections_file, "dets.json");
    ASSERT_EQ_INT(r->conf_default, 1);
    char *text = eb_test_read_file(det_path, NULL);
    ASSERT_TRUE(text != NULL);
    ASSERT_CONTAINS(text, "\"bbox\"");
    free(text);
    eb_accuracy_result_destroy(r);
    eb_accuracy_destroy(acc);

    /* Images 0 and 2 scored, 1 not (undecodable): 1's box counts as missed. */
    ASSERT_OK(eb_accuracy_create(dir, NULL, &acc, &diag));
    ASSERT_OK(eb_accuracy_bind(acc, names, 2, 2, &diag));
    eb_accuracy_reset(acc);
    one_det(&d, &item, 0, 0);
    ASSERT_OK(eb_accuracy_add(acc, 0, &d, &diag));
    ASSERT_OK(eb_accuracy_add(acc, 2, &d, &diag));
    ASSERT_OK(eb_accuracy_finish(acc, det_path, "dets.json", 0.25, 0, &r, &diag));
    ASSERT_EQ_INT(r->images, 3);
    ASSERT_EQ_INT(r->images_undecodable, 1);
    ASSERT_EQ_INT(r->gt_boxes, 3);
    ASSERT_TRUE(r->map50 > 0.6 && r->map50 < 0.7); /* recall 2/3 at precision 1 */
    eb_accuracy_result_destroy(r);
    eb_accuracy_destroy(acc);
}

EB_TEST(accuracy_class_map_and_bad_input)
{
    char dir[600], map[700];
    make_dataset(dir, sizeof(dir));
    struct eb_diag diag = {0};
    struct eb_accuracy *acc = NULL;
    ASSERT_EQ_INT(eb_accuracy_create("/nonexistent/ds", NULL, &acc, &diag), EB_ERR_IO);
    ASSERT_CONTAINS(diag.msg, "/nonexistent/ds");
    ASSERT_TRUE(acc == NULL);
    struct eb_diag d2 = {0};
    ASSERT_EQ_INT(eb_accuracy_create(dir, "/nonexistent/map.txt", &acc, &d2), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d2.msg, "class map /nonexistent/map.txt: no such file");
    path_join(map, sizeof(map), eb_test_tmpdir(), "map.txt");
    write_text(map, "# model = dataset\npedestrian = person\nvan = car\n");
    struct eb_diag d3 = {0};
    ASSERT_OK(eb_accuracy_create(dir, map, &acc, &d3));
    const char *names[] = {"pedestrian", "van", "dog"};
    ASSERT_OK(eb_accuracy_bind(acc, names, 3, 3, &d3));
    ASSERT_EQ_INT(acc->map.n_mapped, 2);
    ASSERT_EQ_INT(acc->n_cats, 2);
    eb_accuracy_destroy(acc);
    /* No class in common, without a map: one line saying what to do. */
    struct eb_diag d4 = {0};
    ASSERT_OK(eb_accuracy_create(dir, NULL, &acc, &d4));
    ASSERT_EQ_INT(eb_accuracy_bind(acc, names, 3, 3, &d4), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d4.msg, "give a class map");
    eb_accuracy_destroy(acc);
}

/* Parses a NULL-terminated argument list. */
static enum eb_status parse(struct eb_config *cfg, struct eb_diag *diag, const char **args)
{
    int argc = 0;
    char *argv[64];
    while (args[argc] != NULL) {
        argv[argc] = (char *)args[argc];
        argc++;
    }
    eb_config_defaults(cfg);
    int help = 0;
    return eb_config_parse(argc, argv, cfg, &help, NULL, diag);
}

EB_TEST(cli_data_options)
{
    struct eb_config cfg;
    struct eb_diag d = {0};
    const char *a[] = {"--mode", "rgb", "--model0", "m.onnx", "--data", "ds", NULL};
    ASSERT_OK(parse(&cfg, &d, a)); /* --data stands for --source */
    ASSERT_STREQ(eb_config_slot_data(&cfg, 0), "ds");
    ASSERT_TRUE(eb_config_slot_data(&cfg, 1) == NULL);
    ASSERT_EQ_INT(cfg.conf_given, 0);
    const char *b[] = {"--mode",
                       "dual",
                       "--model0",
                       "m.onnx",
                       "--model1",
                       "t.onnx",
                       "--rgb_data",
                       "c",
                       "--thermal_source",
                       "synthetic=64x64",
                       "--thermal_class_map",
                       "x.txt",
                       "--conf",
                       "0.3",
                       NULL};
    ASSERT_EQ_INT(parse(&cfg, &d, b), EB_ERR_INVALID_ARG); /* a map without a dataset */
    ASSERT_CONTAINS(d.msg, "--thermal_class_map");
    const char *c[] = {"--mode",
                       "dual",
                       "--model0",
                       "m.onnx",
                       "--model1",
                       "t.onnx",
                       "--rgb_data",
                       "c",
                       "--thermal_data",
                       "h",
                       "--thermal_class_map",
                       "x.txt",
                       "--class_map",
                       "y.txt",
                       "--conf",
                       "0.3",
                       NULL};
    struct eb_diag d2 = {0};
    ASSERT_OK(parse(&cfg, &d2, c));
    ASSERT_STREQ(eb_config_slot_data(&cfg, 1), "h");
    ASSERT_STREQ(eb_config_slot_class_map(&cfg, 1), "x.txt");
    ASSERT_STREQ(eb_config_slot_class_map(&cfg, 0), "y.txt");
    ASSERT_EQ_INT(cfg.conf_given, 1);
    struct eb_diag d3 = {0};
    const char *e[] = {"--mode", "dual", "--model0", "m.onnx", "--data", "ds", NULL};
    ASSERT_EQ_INT(parse(&cfg, &d3, e), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d3.msg, "--rgb_data DIR and --thermal_data DIR, not --data");
    struct eb_diag d4 = {0};
    const char *f[] = {"--mode", "rgb",      "--model0",        "m.onnx", "--data",
                       "ds",     "--source", "synthetic=64x64", NULL};
    ASSERT_EQ_INT(parse(&cfg, &d4, f), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d4.msg, "a source or a dataset, not both");
    struct eb_diag d5 = {0};
    const char *g[] = {"--mode", "rgb", "--data", "ds", NULL};
    ASSERT_EQ_INT(parse(&cfg, &d5, g), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d5.msg, "give --model0");
    struct eb_diag d6 = {0};
    const char *h[] = {"--mode", "rgb", "--model0", "m.onnx", "--thermal_data", "ds", NULL};
    ASSERT_EQ_INT(parse(&cfg, &d6, h), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d6.msg, "--thermal_data is for the other slot");
}
