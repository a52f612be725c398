/*
 * libFuzzer targets on the dataset readers (src/eval/dataset_*.c, xml.c), which read files: the
 * input is written into this process's temporary folder laid out as a dataset of two small BMP
 * images (000.bmp 8x6, 001.bmp 5x5) and read back. A macro set at compile time picks:
 *
 *   fuzz_coco  FUZZ_DATASET_COCO  the input is annotations.json (file_name 000.bmp / 001.bmp)
 *   fuzz_yolo  FUZZ_DATASET_YOLO  labels/000.txt; after a NUL byte, names/data.yaml
 *   fuzz_voc   FUZZ_DATASET_VOC   xml/000.xml; after a NUL byte, names.txt (the class order)
 *
 * The readers' results are checked for consistency (every annotation names an image and a
 * category of the dataset).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/dataset.h"
#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The dataset folder with its images (made on the first call). */
static const char *layout(void)
{
    static char root[600];
    if (root[0] == '\0') {
        char p[700];
        snprintf(root, sizeof(root), "%s/ds", eb_fuzz_tmpdir());
        eb_fuzz_mkdir(root);
        const char *dirs[] = {"images", "labels", "names", "xml"};
        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
            snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
            eb_fuzz_mkdir(p);
        }
        snprintf(p, sizeof(p), "%s/images/000.bmp", root);
        eb_fuzz_write_bmp(p, 8, 6);
        snprintf(p, sizeof(p), "%s/images/001.bmp", root);
        eb_fuzz_write_bmp(p, 5, 5);
    }
    return root;
}

static void check(const struct eb_dataset *ds)
{
    for (size_t i = 0; i < ds->n_anns; i++) {
        const struct eb_dataset_ann *a = &ds->anns[i];
        if (a->image >= ds->n_images || eb_dataset_category_find(ds, a->category_id) == NULL) {
            fprintf(stderr, "fuzz_dataset: annotation %zu names image %zu of %zu, category %lld\n",
                    i, a->image, ds->n_images, (long long)a->category_id);
            abort();
        }
    }
    for (size_t i = 0; i < ds->n_images; i++)
        if (ds->images[i].path == NULL || ds->images[i].width <= 0 || ds->images[i].height <= 0)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *root = layout();
    char *a, *b, p1[700], p2[700], p3[700];
    size_t a_len, b_len;
    struct eb_dataset *ds = NULL;
    struct eb_diag d = {0};
    enum eb_status st;

    eb_fuzz_split(data, size, &a, &a_len, &b, &b_len);
#if defined(FUZZ_DATASET_COCO)
    (void)b_len;
    snprintf(p1, sizeof(p1), "%s/annotations.json", root);
    snprintf(p2, sizeof(p2), "%s/images", root);
    eb_fuzz_write_file(p1, data, size > EB_FUZZ_MAX_INPUT ? EB_FUZZ_MAX_INPUT : size);
    {
        const char *dirs[1] = {p2};
        st = eb_dataset_read_coco(p1, dirs, 1, &ds, &d);
    }
    (void)p3;
#elif defined(FUZZ_DATASET_YOLO)
    {
        struct eb_dataset_options opt = {.format = EB_DATASET_YOLO};
        snprintf(p1, sizeof(p1), "%s/labels/000.txt", root);
        eb_fuzz_write_file(p1, a, a_len);
        snprintf(p3, sizeof(p3), "%s/names/data.yaml", root);
        if (b != NULL)
            eb_fuzz_write_file(p3, b, b_len);
        else
            (void)unlink(p3);
        snprintf(p1, sizeof(p1), "%s/images", root);
        snprintf(p2, sizeof(p2), "%s/labels", root);
        snprintf(p3, sizeof(p3), "%s/names", root);
        st = eb_dataset_read_yolo(p1, p2, p3, &opt, &ds, &d);
    }
#elif defined(FUZZ_DATASET_VOC)
    snprintf(p1, sizeof(p1), "%s/xml/000.xml", root);
    eb_fuzz_write_file(p1, a, a_len);
    snprintf(p3, sizeof(p3), "%s/names.txt", root);
    if (b != NULL)
        eb_fuzz_write_file(p3, b, b_len);
    snprintf(p1, sizeof(p1), "%s/xml", root);
    snprintf(p2, sizeof(p2), "%s/images", root);
    st = eb_dataset_read_voc(p1, p2, b != NULL ? p3 : NULL, &ds, &d);
#else
#error "compile with -DFUZZ_DATASET_COCO, -DFUZZ_DATASET_YOLO or -DFUZZ_DATASET_VOC"
#endif
    if (st == EB_OK) {
        check(ds);
        eb_dataset_destroy(ds);
    } else if (d.msg[0] == '\0') {
        fprintf(stderr, "fuzz_dataset: a refused dataset left no message\n");
        abort();
    }
    free(a);
    return 0;
}
