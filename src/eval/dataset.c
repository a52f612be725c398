/*
 * The dataset container, layout detection (eb_dataset_load) and the helpers the readers share.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eb/path.h"
#include "eval/dataset_internal.h"

/* Splits tried, in order, when a dataset has several and none is asked for. */
static const char *const preferred_splits[] = {"val", "val2017", "valid", "validation", "test"};

const char *eb_dataset_format_name(enum eb_dataset_format f)
{
    switch (f) {
    case EB_DATASET_COCO: return "coco";
    case EB_DATASET_YOLO: return "yolo";
    case EB_DATASET_VOC: return "voc";
    default: return "auto";
    }
}

struct eb_dataset *eb_dataset__create(enum eb_dataset_format format, const char *source)
{
    struct eb_dataset *ds = calloc(1, sizeof(*ds));
    if (ds == NULL)
        return NULL;
    ds->format = format;
    snprintf(ds->source, sizeof(ds->source), "%s", source);
    return ds;
}

void eb_dataset_destroy(struct eb_dataset *ds)
{
    if (ds == NULL)
        return;
    for (size_t i = 0; i < ds->n_images; i++)
        free(ds->images[i].path);
    for (size_t i = 0; i < ds->n_cats; i++)
        free(ds->cats[i].name);
    free(ds->images);
    free(ds->anns);
    free(ds->cats);
    free(ds);
}

/* Grows `*arr` (elements of `elem` bytes, capacity `*cap`) to hold one more than `n`. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 1;
    size_t nc = *cap ? *cap * 2 : 16;
    if (nc > SIZE_MAX / elem)
        return 0;
    void *p = realloc(*arr, nc * elem);
    if (p == NULL)
        return 0;
    *arr = p;
    *cap = nc;
    return 1;
}

enum eb_status eb_dataset__add_image(struct eb_dataset *ds, const char *path, int width, int height,
                                     int64_t id, struct eb_diag *diag)
{
    char *copy = strdup(path);
    if (copy == NULL ||
        !grow((void **)&ds->images, &ds->cap_images, ds->n_images, sizeof(*ds->images))) {
        free(copy);
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read dataset %s: out of memory",
                            ds->source);
    }
    struct eb_dataset_image *im = &ds->images[ds->n_images++];
    im->path = copy;
    im->width = width;
    im->height = height;
    im->id = id;
    return EB_OK;
}

enum eb_status eb_dataset__add_ann(struct eb_dataset *ds, const struct eb_dataset_ann *ann,
                                   struct eb_diag *diag)
{
    if (!grow((void **)&ds->anns, &ds->cap_anns, ds->n_anns, sizeof(*ds->anns)))
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read dataset %s: out of memory",
                            ds->source);
    ds->anns[ds->n_anns++] = *ann;
    return EB_OK;
}

enum eb_status eb_dataset__add_cat(struct eb_dataset *ds, int64_t id, const char *name,
                                   struct eb_diag *diag)
{
    char *copy = strdup(name);
    if (copy == NULL || !grow((void **)&ds->cats, &ds->cap_cats, ds->n_cats, sizeof(*ds->cats))) {
        free(copy);
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read dataset %s: out of memory",
                            ds->source);
    }
    ds->cats[ds->n_cats].id = id;
    ds->cats[ds->n_cats].name = copy;
    ds->n_cats++;
    return EB_OK;
}

const struct eb_dataset_category *eb_dataset_category_find(const struct eb_dataset *ds, int64_t id)
{
    for (size_t i = 0; i < ds->n_cats; i++)
        if (ds->cats[i].id == id)
            return &ds->cats[i];
    return NULL;
}

long eb_dataset__find_name(const struct eb_dataset *ds, const char *name)
{
    for (size_t i = 0; i < ds->n_cats; i++)
        if (strcmp(ds->cats[i].name, name) == 0)
            return (long)i;
    return -1;
}

void eb_dataset_keep_first(struct eb_dataset *ds, size_t n)
{
    if (n >= ds->n_images)
        return;
    for (size_t i = n; i < ds->n_images; i++)
        free(ds->images[i].path);
    ds->n_images = n;
    size_t k = 0;
    for (size_t i = 0; i < ds->n_anns; i++)
        if (ds->anns[i].image < n)
            ds->anns[k++] = ds->anns[i];
    ds->n_anns = k;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The decimal number a file stem spells (digits only, at most 18), or -1. */
static int64_t stem_number(const char *path)
{
    const char *base = eb_path_base(path);
    const char *dot = strrchr(base, '.');
    size_t len = dot ? (size_t)(dot - base) : strlen(base);
    if (len == 0 || len > 18)
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (base[i] < '0' || base[i] > '9')
            return -1;
        v = v * 10 + (base[i] - '0');
    }
    return v;
}

int eb_dataset__assign_ids(struct eb_dataset *ds)
{
    int numeric = ds->n_images > 0;
    int64_t *ids = numeric ? malloc(ds->n_images * sizeof(*ids)) : NULL;
    if (ids == NULL)
        numeric = 0;
    for (size_t i = 0; numeric && i < ds->n_images; i++) {
        ids[i] = stem_number(ds->images[i].path);
        if (ids[i] < 0)
            numeric = 0;
    }
    if (numeric) {
        qsort(ids, ds->n_images, sizeof(*ids), cmp_i64);
        for (size_t i = 1; i < ds->n_images; i++)
            if (ids[i] == ids[i - 1])
                numeric = 0;
    }
    free(ids);
    for (size_t i = 0; i < ds->n_images; i++)
        ds->images[i].id = numeric ? stem_number(ds->images[i].path) : (int64_t)i;
    return numeric;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void eb_dataset__names_free(char **names, size_t n)
{
    if (names == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

enum eb_status eb_dataset__list(const char *dir, int (*keep)(const char *name), char ***names_out,
                                size_t *n_out, struct eb_diag *diag)
{
    DIR *dp = opendir(dir);
    if (dp == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to list folder %s: %s; check the path", dir,
                            strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    enum eb_status st = EB_OK;
    while ((e = readdir(dp)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (keep != NULL && !keep(e->d_name))
            continue;
        char *copy = strdup(e->d_name);
        if (copy == NULL || !grow((void **)&names, &cap, n, sizeof(*names))) {
            free(copy);
            st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to list folder %s: out of memory", dir);
            break;
        }
        names[n++] = copy;
    }
    closedir(dp);
    if (st != EB_OK) {
        eb_dataset__names_free(names, n);
        return st;
    }
    if (n > 1)
        qsort(names, n, sizeof(*names), cmp_str);
    *names_out = names;
    *n_out = n;
    return EB_OK;
}

enum eb_status eb_dataset__read_file(const char *path, char **buf_out, size_t *len_out,
                                     struct eb_diag *diag)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to read %s: %s; check the path", path,
                            strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    enum eb_status st = EB_OK;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            size_t nc = cap ? cap * 2 : 65536;
            if (nc > EB_DATASET__MAX_FILE_BYTES + 1) {
                st = eb_diag_fail(diag, EB_ERR_FORMAT,
                                  "failed to read %s: larger than %zu MiB; split the file", path,
                                  EB_DATASET__MAX_FILE_BYTES >> 20);
                break;
            }
            char *p = realloc(buf, nc);
            if (p == NULL) {
                st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read %s: out of memory", path);
                break;
            }
            buf = p;
            cap = nc;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, fp);
        len += got;
        if (got == 0) {
            if (ferror(fp))
                st = eb_diag_fail(diag, EB_ERR_IO, "failed to read %s: read error", path);
            break;
        }
    }
    fclose(fp);
    if (st != EB_OK) {
        free(buf);
        return st;
    }
    if (buf == NULL && (buf = malloc(1)) == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read %s: out of memory", path);
    /* A UTF-8 byte-order mark (editors on Windows write one) is not part of the text. */
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
        memmove(buf, buf + 3, len - 3);
        len -= 3;
    }
    buf[len] = '\0';
    *buf_out = buf;
    *len_out = len;
    return EB_OK;
}

enum eb_status eb_dataset__join(char *buf, size_t size, const char *a, const char *b,
                                struct eb_diag *diag)
{
    size_t la = strlen(a);
    int slash = la > 0 && a[la - 1] == '/';
    int n = snprintf(buf, size, "%s%s%s", a, slash ? "" : "/", b);
    if (n < 0 || (size_t)n >= size)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "path %s/%s is too long", a, b);
    return EB_OK;
}

int eb_dataset__is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int eb_dataset__is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int ends_with_ci(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && eb_dataset__name_eq(s + ls - lx, suffix);
}

int eb_dataset__is_image_name(const char *name)
{
    return ends_with_ci(name, ".jpg") || ends_with_ci(name, ".jpeg") ||
           ends_with_ci(name, ".png") || ends_with_ci(name, ".bmp");
}

enum eb_status eb_dataset_list_images(const char *dir, char ***paths_out, size_t *n_out,
                                      struct eb_diag *diag)
{
    char **names = NULL;
    size_t n = 0;
    enum eb_status st = eb_dataset__list(dir, eb_dataset__is_image_name, &names, &n, diag);
    if (st != EB_OK)
        return st;
    for (size_t i = 0; i < n; i++) {
        const size_t len = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(len);
        if (path == NULL) {
            eb_dataset__names_free(names, n);
            return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to list folder %s: out of memory", dir);
        }
        snprintf(path, len, "%s/%s", dir, names[i]);
        free(names[i]);
        names[i] = path;
    }
    *paths_out = names;
    *n_out = n;
    return EB_OK;
}

void eb_dataset_paths_free(char **paths, size_t n)
{
    eb_dataset__names_free(paths, n);
}

int eb_dataset__name_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        int x = (unsigned char)*a, y = (unsigned char)*b;
        if (x >= 'A' && x <= 'Z')
            x += 'a' - 'A';
        if (y >= 'A' && y <= 'Z')
            y += 'a' - 'A';
        if (x != y)
            return 0;
    }
    return *a == *b;
}

/* ------------------------------------------------------------------ image headers */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* Walks JPEG markers to the first start-of-frame. 0 on success, -1 when cut short or none. */
static int jpeg_size(FILE *fp, int *w, int *h)
{
    unsigned char b[8];
    for (;;) {
        int c = fgetc(fp);
        if (c == EOF)
            return -1;
        if (c != 0xFF)
            continue; /* tolerate garbage between segments, as libjpeg does */
        do
            c = fgetc(fp);
        while (c == 0xFF);
        if (c == EOF || c == 0xD9 || c == 0xDA)
            return -1; /* end of image or scan data before any frame header */
        if (c == 0x01 || (c >= 0xD0 && c <= 0xD8))
            continue; /* markers without a length */
        if (fread(b, 1, 2, fp) != 2)
            return -1;
        long len = (long)b[0] << 8 | b[1];
        if (len < 2)
            return -1;
        if (c >= 0xC0 && c <= 0xCF && c != 0xC4 && c != 0xC8 && c != 0xCC) {
            if (fread(b, 1, 5, fp) != 5)
                return -1;
            *h = b[1] << 8 | b[2];
            *w = b[3] << 8 | b[4];
            return 0;
        }
        if (fseek(fp, len - 2, SEEK_CUR) != 0)
            return -1;
    }
}

enum eb_status eb_dataset_image_size(const char *path, int *width_out, int *height_out,
                                     struct eb_diag *diag)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to read image %s: %s; check the path", path,
                            strerror(errno));
    unsigned char hd[26];
    size_t got = fread(hd, 1, sizeof(hd), fp);
    int w = 0, h = 0, ok = 0;
    if (got >= 3 && hd[0] == 0xFF && hd[1] == 0xD8 && hd[2] == 0xFF) {
        ok = fseek(fp, 2, SEEK_SET) == 0 && jpeg_size(fp, &w, &h) == 0;
    } else if (got >= 24 && memcmp(hd, "\x89PNG\r\n\x1a\n", 8) == 0 &&
               memcmp(hd + 12, "IHDR", 4) == 0) {
        uint32_t uw = be32(hd + 16), uh = be32(hd + 20);
        ok = uw <= 0x7FFFFFFF && uh <= 0x7FFFFFFF;
        w = (int)uw;
        h = (int)uh;
    } else if (got >= 26 && hd[0] == 'B' && hd[1] == 'M') {
        uint32_t hsize = le32(hd + 14);
        if (hsize == 12) {
            w = hd[18] | hd[19] << 8;
            h = hd[20] | hd[21] << 8;
            ok = 1;
        } else if (hsize >= 40) {
            int32_t sw = (int32_t)le32(hd + 18), sh = (int32_t)le32(hd + 22);
            ok = sw > INT32_MIN && sh > INT32_MIN;
            w = sw;
            h = sh < 0 ? -sh : sh;
        }
    }
    fclose(fp);
    if (!ok || w <= 0 || h <= 0)
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to read the size of image %s: not a JPEG, PNG or BMP file, or "
                            "its header is damaged; remove or replace the file",
                            path);
    *width_out = w;
    *height_out = h;
    return EB_OK;
}

/* ------------------------------------------------------------------ layout detection */

static int is_json_name(const char *name)
{
    return ends_with_ci(name, ".json");
}

static int is_xml_name(const char *name)
{
    return ends_with_ci(name, ".xml");
}

/* Index of the preferred split among names (sorted), or -1. */
static long pick_split(char **names, size_t n, const char *prefix, const char *suffix)
{
    for (size_t p = 0; p < EB_ARRAY_LEN(preferred_splits); p++)
        for (size_t i = 0; i < n; i++) {
            char want[256];
            snprintf(want, sizeof(want), "%s%s%s", prefix, preferred_splits[p], suffix);
            if (strcmp(names[i], want) == 0)
                return (long)i;
        }
    return -1;
}

/* "a, b, c" of up to 8 names into buf. */
static void list_text(char **names, size_t n, char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && i < 8 && off < size; i++)
        off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? ", " : "", names[i]);
    if (n > 8 && off < size)
        snprintf(buf + off, size - off, ", ...");
}

static enum eb_status load_coco(const char *dir, const struct eb_dataset_options *opts,
                                struct eb_dataset **ds_out, struct eb_diag *diag)
{
    char ann_dir[EB_DATASET__PATH_MAX], path[EB_DATASET__PATH_MAX];
    char **names = NULL;
    size_t n = 0;
    enum eb_status st = eb_dataset__join(ann_dir, sizeof(ann_dir), dir, "annotations", diag);
    if (st == EB_OK)
        st = eb_dataset__list(ann_dir, is_json_name, &names, &n, diag);
    if (st != EB_OK)
        return st;
    long pick = -1;
    if (n == 0) {
        st = eb_diag_fail(diag, EB_ERR_IO,
                          "failed to read dataset %s: no .json file in %s; add the COCO "
                          "annotation file or use --format yolo|voc",
                          dir, ann_dir);
        goto done;
    }
    if (opts->split != NULL) {
        for (size_t i = 0; i < n && pick < 0; i++) {
            char a[512], b[512];
            snprintf(a, sizeof(a), "instances_%s.json", opts->split);
            snprintf(b, sizeof(b), "%s.json", opts->split);
            if (strcmp(names[i], a) == 0 || strcmp(names[i], b) == 0)
                pick = (long)i;
        }
    } else if (n == 1) {
        pick = 0;
    } else {
        pick = pick_split(names, n, "instances_", ".json");
        if (pick < 0)
            pick = pick_split(names, n, "", ".json");
    }
    if (pick < 0) {
        char list[512];
        list_text(names, n, list, sizeof(list));
        st = eb_diag_fail(
            diag, EB_ERR_INVALID_ARG,
            "dataset %s: %s%s%s; give --split NAME for annotations/instances_NAME.json "
            "(found: %s)",
            dir, opts->split ? "no annotation file for split " : "several annotation files",
            opts->split ? opts->split : "", opts->split ? "" : " and none is val", list);
        goto done;
    }
    /* The split is the file name without "instances_" and ".json". */
    char split[256];
    const char *s = names[pick];
    if (strncmp(s, "instances_", 10) == 0)
        s += 10;
    snprintf(split, sizeof(split), "%.*s", (int)(strlen(s) - 5), s);
    char dirs[4][EB_DATASET__PATH_MAX];
    char rel[EB_DATASET__PATH_MAX];
    snprintf(rel, sizeof(rel), "images/%s", split);
    if ((st = eb_dataset__join(path, sizeof(path), ann_dir, names[pick], diag)) != EB_OK ||
        (st = eb_dataset__join(dirs[0], sizeof(dirs[0]), dir, rel, diag)) != EB_OK ||
        (st = eb_dataset__join(dirs[1], sizeof(dirs[1]), dir, "images", diag)) != EB_OK ||
        (st = eb_dataset__join(dirs[2], sizeof(dirs[2]), dir, split, diag)) != EB_OK)
        goto done;
    snprintf(dirs[3], sizeof(dirs[3]), "%s", dir);
    const char *const dir_list[4] = {dirs[0], dirs[1], dirs[2], dirs[3]};
    st = eb_dataset_read_coco(path, dir_list, 4, ds_out, diag);
done:
    eb_dataset__names_free(names, n);
    return st;
}

/* Folders under `dir` (sorted) that are directories. */
static enum eb_status list_subdirs(const char *dir, char ***names_out, size_t *n_out,
                                   struct eb_diag *diag)
{
    char **names = NULL;
    size_t n = 0;
    enum eb_status st = eb_dataset__list(dir, NULL, &names, &n, diag);
    if (st != EB_OK)
        return st;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char p[EB_DATASET__PATH_MAX];
        if (eb_dataset__join(p, sizeof(p), dir, names[i], NULL) == EB_OK && eb_dataset__is_dir(p))
            names[k++] = names[i];
        else
            free(names[i]);
    }
    *names_out = names;
    *n_out = k;
    return EB_OK;
}

static enum eb_status load_yolo(const char *dir, const struct eb_dataset_options *opts,
                                struct eb_dataset **ds_out, struct eb_diag *diag)
{
    char images[EB_DATASET__PATH_MAX], labels[EB_DATASET__PATH_MAX];
    char img_split[EB_DATASET__PATH_MAX], lbl_split[EB_DATASET__PATH_MAX];
    char **subs = NULL;
    size_t n = 0;
    enum eb_status st;
    if ((st = eb_dataset__join(images, sizeof(images), dir, "images", diag)) != EB_OK ||
        (st = eb_dataset__join(labels, sizeof(labels), dir, "labels", diag)) != EB_OK)
        return st;
    if (!eb_dataset__is_dir(images))
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to read dataset %s: no images/ folder; a YOLO dataset has "
                            "images/<split>/ and labels/<split>/",
                            dir);
    if ((st = list_subdirs(images, &subs, &n, diag)) != EB_OK)
        return st;
    if (n == 0) {
        /* images/ and labels/ hold the files themselves. */
        if (opts->split != NULL)
            st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                              "dataset %s: --split %s, but images/ has no split folders; drop "
                              "--split",
                              dir, opts->split);
        else
            st = eb_dataset_read_yolo(images, labels, dir, opts, ds_out, diag);
        goto done;
    }
    long pick = -1;
    if (opts->split != NULL) {
        for (size_t i = 0; i < n && pick < 0; i++)
            if (strcmp(subs[i], opts->split) == 0)
                pick = (long)i;
    } else {
        pick = n == 1 ? 0 : pick_split(subs, n, "", "");
    }
    if (pick < 0) {
        char list[512];
        list_text(subs, n, list, sizeof(list));
        st = eb_diag_fail(
            diag, EB_ERR_INVALID_ARG, "dataset %s: %s%s; give --split NAME (found in images/: %s)",
            dir, opts->split ? "no images/ folder for split " : "several splits and none is val",
            opts->split ? opts->split : "", list);
        goto done;
    }
    if ((st = eb_dataset__join(img_split, sizeof(img_split), images, subs[pick], diag)) != EB_OK ||
        (st = eb_dataset__join(lbl_split, sizeof(lbl_split), labels, subs[pick], diag)) != EB_OK)
        goto done;
    st = eb_dataset_read_yolo(img_split, lbl_split, dir, opts, ds_out, diag);
done:
    eb_dataset__names_free(subs, n);
    return st;
}

/* The first of `cands` (folder names under dir) that exists and holds a file `keep` accepts. */
static int find_folder(const char *dir, const char *const *cands, size_t n_cands,
                       int (*keep)(const char *), char *out, size_t size)
{
    for (size_t i = 0; i < n_cands; i++) {
        if (eb_dataset__join(out, size, dir, cands[i], NULL) != EB_OK || !eb_dataset__is_dir(out))
            continue;
        if (keep == NULL)
            return 1;
        char **names = NULL;
        size_t n = 0;
        if (eb_dataset__list(out, keep, &names, &n, NULL) == EB_OK) {
            eb_dataset__names_free(names, n);
            if (n > 0)
                return 1;
        }
    }
    return 0;
}

static const char *const voc_xml_dirs[] = {"annotations_voc", "Annotations", "annotations",
                                           "labels_voc", "xml"};
static const char *const voc_image_dirs[] = {"images", "JPEGImages", "Images", "imgs"};
static const char *const voc_name_files[] = {"category.txt", "classes.txt", "labels.txt",
                                             "names.txt"};

static enum eb_status load_voc(const char *dir, const struct eb_dataset_options *opts,
                               struct eb_dataset **ds_out, struct eb_diag *diag)
{
    char xml_dir[EB_DATASET__PATH_MAX], img_dir[EB_DATASET__PATH_MAX];
    char names[EB_DATASET__PATH_MAX];
    if (!find_folder(dir, voc_xml_dirs, EB_ARRAY_LEN(voc_xml_dirs), is_xml_name, xml_dir,
                     sizeof(xml_dir)))
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to read dataset %s: no folder of VOC .xml files "
                            "(annotations_voc/, Annotations/ or annotations/); check %s",
                            dir, eb_dataset__option(opts));
    if (!find_folder(dir, voc_image_dirs, EB_ARRAY_LEN(voc_image_dirs), NULL, img_dir,
                     sizeof(img_dir)))
        snprintf(img_dir, sizeof(img_dir), "%s", dir);
    const char *names_file = NULL;
    for (size_t i = 0; i < EB_ARRAY_LEN(voc_name_files) && names_file == NULL; i++)
        if (eb_dataset__join(names, sizeof(names), dir, voc_name_files[i], NULL) == EB_OK &&
            eb_dataset__is_file(names))
            names_file = names;
    return eb_dataset_read_voc(xml_dir, img_dir, names_file, ds_out, diag);
}

const char *eb_dataset__option(const struct eb_dataset_options *opts)
{
    return opts != NULL && opts->option != NULL ? opts->option : "--data";
}

enum eb_status eb_dataset_load(const char *dir, const struct eb_dataset_options *opts,
                               struct eb_dataset **ds_out, struct eb_diag *diag)
{
    static const struct eb_dataset_options defaults = {.format = EB_DATASET_AUTO};
    if (opts == NULL)
        opts = &defaults;
    if (!eb_dataset__is_dir(dir))
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to read dataset %s: no such folder; give %s DIR (a COCO, "
                            "YOLO or VOC dataset folder)",
                            dir, eb_dataset__option(opts));
    enum eb_dataset_format f = opts->format;
    if (f == EB_DATASET_AUTO) {
        char p[EB_DATASET__PATH_MAX];
        static const char *const ann[] = {"annotations"};
        static const char *const lbl[] = {"labels"};
        if (find_folder(dir, ann, 1, is_json_name, p, sizeof(p)))
            f = EB_DATASET_COCO;
        else if (find_folder(dir, lbl, 1, NULL, p, sizeof(p)))
            f = EB_DATASET_YOLO;
        else if (find_folder(dir, voc_xml_dirs, EB_ARRAY_LEN(voc_xml_dirs), is_xml_name, p,
                             sizeof(p)))
            f = EB_DATASET_VOC;
        else
            return eb_diag_fail(diag, EB_ERR_IO,
                                "failed to read dataset %s: found neither annotations/*.json "
                                "(COCO), labels/ (YOLO) nor a folder of VOC .xml files; check %s",
                                dir, eb_dataset__option(opts));
    }
    switch (f) {
    case EB_DATASET_COCO: return load_coco(dir, opts, ds_out, diag);
    case EB_DATASET_YOLO: return load_yolo(dir, opts, ds_out, diag);
    default: return load_voc(dir, opts, ds_out, diag);
    }
}
