/*
 * Pascal VOC XML: one file per image with <filename>, <size> and <object> boxes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/dataset_internal.h"
#include "eval/xml.h"

static int is_xml(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && eb_dataset__name_eq(name + n - 4, ".xml");
}

/* The element's text as a finite number; 0 when absent or not a number. */
static int xml_num(const struct eb_xml_node *node, double *out)
{
    const char *s = eb_xml_text(node);
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

/* Class names, one per line, as categories 0..n-1. */
static enum eb_status read_names_file(struct eb_dataset *ds, const char *path, struct eb_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    enum eb_status st = eb_dataset__read_file(path, &text, &len, diag);
    if (st != EB_OK)
        return st;
    char *line = text;
    while (st == EB_OK && line != NULL && *line) {
        char *eol = strchr(line, '\n');
        if (eol != NULL)
            *eol = '\0';
        size_t n = strlen(line);
        while (n > 0 && strchr(" \t\r", line[n - 1]) != NULL)
            line[--n] = '\0';
        while (*line == ' ' || *line == '\t')
            line++;
        if (*line != '\0' && eb_dataset__find_name(ds, line) < 0)
            st = eb_dataset__add_cat(ds, (int64_t)ds->n_cats, line, diag);
        line = eol ? eol + 1 : NULL;
    }
    free(text);
    return st;
}

struct pending {
    char **names; /* class name of each annotation, parallel to ds->anns */
    size_t n, cap;
};

static void pending_fini(struct pending *pd)
{
    for (size_t i = 0; i < pd->n; i++)
        free(pd->names[i]);
    free(pd->names);
}

static int pending_add(struct pending *pd, const char *name)
{
    if (pd->n == pd->cap) {
        size_t nc = pd->cap ? pd->cap * 2 : 64;
        char **p = realloc(pd->names, nc * sizeof(*p));
        if (p == NULL)
            return 0;
        pd->names = p;
        pd->cap = nc;
    }
    if ((pd->names[pd->n] = strdup(name)) == NULL)
        return 0;
    pd->n++;
    return 1;
}

/* The image an XML file names: images_dir/<filename>, else images_dir/<xml stem>.<ext>. */
static int find_image(const char *images_dir, const char *xml_name, const char *filename, char *out,
                      size_t size)
{
    static const char *const exts[] = {".jpg", ".jpeg", ".png", ".bmp", ".JPG", ".PNG"};
    if (filename[0] != '\0' && eb_dataset__join(out, size, images_dir, filename, NULL) == EB_OK &&
        eb_dataset__is_file(out))
        return 1;
    const char *dot = strrchr(xml_name, '.');
    for (size_t i = 0; i < EB_ARRAY_LEN(exts); i++) {
        char name[1024];
        snprintf(name, sizeof(name), "%.*s%s", (int)(dot - xml_name), xml_name, exts[i]);
        if (eb_dataset__join(out, size, images_dir, name, NULL) == EB_OK &&
            eb_dataset__is_file(out))
            return 1;
    }
    return 0;
}

static enum eb_status read_one(struct eb_dataset *ds, struct pending *pd, const char *xml_path,
                               const char *xml_name, const char *images_dir,
                               const char **missing_out, struct eb_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    struct eb_xml_node *doc = NULL;
    enum eb_status st = eb_dataset__read_file(xml_path, &text, &len, diag);
    if (st != EB_OK)
        return st;
    struct eb_diag xd = {0};
    if ((st = eb_xml_parse(text, len, &doc, &xd)) != EB_OK) {
        st = eb_diag_fail(diag, st, "failed to read %s: %s; fix the file", xml_path, xd.msg);
        goto done;
    }
    const struct eb_xml_node *ann = eb_xml_child(doc, "annotation");
    if (ann == NULL) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT,
                          "failed to read %s: no <annotation> element; give Pascal VOC XML",
                          xml_path);
        goto done;
    }
    char img[EB_DATASET__PATH_MAX];
    if (!find_image(images_dir, xml_name, eb_xml_text(eb_xml_child(ann, "filename")), img,
                    sizeof(img))) {
        ds->images_missing++;
        if (*missing_out == NULL)
            *missing_out = xml_name;
        goto done;
    }
    const struct eb_xml_node *size = eb_xml_child(ann, "size");
    double w = 0, h = 0;
    if (!xml_num(eb_xml_child(size, "width"), &w) || !xml_num(eb_xml_child(size, "height"), &h) ||
        w < 1 || h < 1 || w > INT32_MAX || h > INT32_MAX) {
        int iw, ih;
        if ((st = eb_dataset_image_size(img, &iw, &ih, diag)) != EB_OK)
            goto done;
        w = iw;
        h = ih;
    }
    if ((st = eb_dataset__add_image(ds, img, (int)w, (int)h, (int64_t)ds->n_images, diag)) != EB_OK)
        goto done;
    for (size_t i = 0; i < ann->n_children; i++) {
        const struct eb_xml_node *obj = &ann->children[i];
        if (strcmp(obj->name, "object") != 0)
            continue;
        const char *name = eb_xml_text(eb_xml_child(obj, "name"));
        const struct eb_xml_node *bb = eb_xml_child(obj, "bndbox");
        double x0, y0, x1, y1, difficult = 0;
        if (name[0] == '\0' || !xml_num(eb_xml_child(bb, "xmin"), &x0) ||
            !xml_num(eb_xml_child(bb, "ymin"), &y0) || !xml_num(eb_xml_child(bb, "xmax"), &x1) ||
            !xml_num(eb_xml_child(bb, "ymax"), &y1) || x1 < x0 || y1 < y0) {
            st = eb_diag_fail(diag, EB_ERR_FORMAT,
                              "failed to read %s: object %zu needs a <name> and a <bndbox> with "
                              "xmin <= xmax and ymin <= ymax; fix the file",
                              xml_path, i);
            goto done;
        }
        (void)xml_num(eb_xml_child(obj, "difficult"), &difficult);
        struct eb_dataset_ann a = {.image = ds->n_images - 1,
                                   .bbox = {x0, y0, x1 - x0, y1 - y0},
                                   .area = (x1 - x0) * (y1 - y0),
                                   .iscrowd = difficult != 0};
        if ((st = eb_dataset__add_ann(ds, &a, diag)) != EB_OK)
            goto done;
        if (!pending_add(pd, name)) {
            st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read %s: out of memory", xml_path);
            goto done;
        }
    }
done:
    eb_xml_free(doc);
    free(text);
    return st;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

enum eb_status eb_dataset_read_voc(const char *xml_dir, const char *images_dir,
                                   const char *names_file, struct eb_dataset **ds_out,
                                   struct eb_diag *diag)
{
    char **files = NULL;
    size_t n_files = 0;
    struct pending pd = {0};
    char **sorted = NULL;
    const char *missing = NULL;
    struct eb_dataset *ds = eb_dataset__create(EB_DATASET_VOC, xml_dir);
    enum eb_status st;
    if (ds == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read %s: out of memory", xml_dir);
    if (names_file != NULL && (st = read_names_file(ds, names_file, diag)) != EB_OK)
        goto fail;
    if ((st = eb_dataset__list(xml_dir, is_xml, &files, &n_files, diag)) != EB_OK)
        goto fail;
    for (size_t i = 0; i < n_files; i++) {
        char path[EB_DATASET__PATH_MAX];
        if ((st = eb_dataset__join(path, sizeof(path), xml_dir, files[i], diag)) != EB_OK ||
            (st = read_one(ds, &pd, path, files[i], images_dir, &missing, diag)) != EB_OK)
            goto fail;
    }
    if (ds->n_images == 0) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG, "dataset %s: %s; put the images in %s", xml_dir,
                          n_files ? "none of the images its XML files name is on disk"
                                  : "no .xml files",
                          images_dir);
        goto fail;
    }
    if (names_file == NULL) {
        /* Categories: the names found, sorted. */
        sorted = malloc((pd.n ? pd.n : 1) * sizeof(*sorted));
        if (sorted == NULL) {
            st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read %s: out of memory", xml_dir);
            goto fail;
        }
        if (pd.n > 0) {
            memcpy(sorted, pd.names, pd.n * sizeof(*sorted));
            qsort(sorted, pd.n, sizeof(*sorted), cmp_str);
        }
        for (size_t i = 0; i < pd.n; i++)
            if ((i == 0 || strcmp(sorted[i], sorted[i - 1]) != 0) &&
                (st = eb_dataset__add_cat(ds, (int64_t)ds->n_cats, sorted[i], diag)) != EB_OK)
                goto fail;
    }
    for (size_t i = 0; i < ds->n_anns; i++) {
        long c = eb_dataset__find_name(ds, pd.names[i]);
        if (c < 0) {
            st = eb_diag_fail(diag, EB_ERR_FORMAT,
                              "dataset %s: class '%s' (image %s) is not in %s; add it there",
                              xml_dir, pd.names[i], ds->images[ds->anns[i].image].path, names_file);
            goto fail;
        }
        ds->anns[i].category_id = ds->cats[c].id;
    }
    eb_dataset__assign_ids(ds);
    if (ds->images_missing > 0)
        snprintf(ds->note, sizeof(ds->note),
                 "%zu XML files name an image that is not in %s (e.g. %s): left out",
                 ds->images_missing, images_dir, missing);
    free(sorted);
    pending_fini(&pd);
    eb_dataset__names_free(files, n_files);
    *ds_out = ds;
    return EB_OK;
fail:
    free(sorted);
    pending_fini(&pd);
    eb_dataset__names_free(files, n_files);
    eb_dataset_destroy(ds);
    return st;
}
