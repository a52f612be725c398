/*
 * Image directories (and single image files): each file is read into memory and decoded by
 * eb_image_decode (image_decode.c: JPEG, PNG, BMP), the format chosen by the file's magic bytes,
 * not its name. A file that fails to decode is skipped, counted and logged; the next one is
 * tried.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eb/path.h"
#include "harness/pipeline/image_decode.h"
#include "harness/pipeline/source_internal.h"
#include "harness/results/sha256.h"

#define MAX_FILE_BYTES ((size_t)512 << 20)
#define WHY_MAX        EB_IMAGE_WHY_MAX

struct imgdir {
    char **names; /* sorted file names (directory) or the single file's path */
    size_t n_names;
    size_t cursor; /* next name to try */
    int single;    /* spec.path is one image file */
    int listed;    /* names are the caller's paths (opts.files), not folder entries */
    char path[EB_SOURCE_PATH_MAX + 512];
    uint8_t *file; /* bytes of the current file */
    size_t file_cap;
    struct eb_image_decoder dec; /* its buffers, reused from file to file */
};

/* ------------------------------------------------------------------ files */

static enum eb_status read_file(struct imgdir *d, const char *path, size_t *size_out, char *why,
                                struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_IO;
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        snprintf(why, WHY_MAX, "%s", strerror(errno));
        return EB_ERR_IO;
    }
    struct stat sb;
    if (fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(why, WHY_MAX, "not a regular file");
        goto done;
    }
    if ((uint64_t)sb.st_size > MAX_FILE_BYTES || sb.st_size == 0) {
        snprintf(why, WHY_MAX, "file size %lld is outside 1..%zu bytes", (long long)sb.st_size,
                 MAX_FILE_BYTES);
        goto done;
    }
    size_t n = (size_t)sb.st_size;
    st = eb_source__reserve((void **)&d->file, &d->file_cap, n, "a file buffer", diag);
    if (st != EB_OK)
        goto done;
    if (fread(d->file, 1, n, fp) != n) {
        st = EB_ERR_IO;
        snprintf(why, WHY_MAX, "short read");
        goto done;
    }
    *size_out = n;
    st = EB_OK;
done:
    fclose(fp);
    return st;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static void imgdir_close(struct eb_source *src)
{
    struct imgdir *d = src->impl;
    if (d == NULL)
        return;
    free_names(d->names, d->n_names);
    free(d->file);
    eb_image_decoder_fini(&d->dec);
    free(d);
    src->impl = NULL;
}

/*
 * The image files of folder `dir` as the source reads them: regular files named
 * .jpg/.jpeg/.png/.bmp, hidden ones left out, sorted by strcmp. Caller frees (free_names).
 */
static enum eb_status list_images(const char *dir, char ***names_out, size_t *n_out,
                                  struct eb_diag *diag)
{
    char path[EB_SOURCE_PATH_MAX + 512];
    char **names = NULL;
    size_t n_names = 0, cap = 0;
    DIR *dp = opendir(dir);
    if (dp == NULL)
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to open source image_dir=%s: %s; check the path and its "
                            "permissions",
                            dir, strerror(errno));
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        if (e->d_name[0] == '.' || !eb_source__is_image_name(e->d_name))
            continue;
        int n = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        struct stat sb;
        if (n < 0 || (size_t)n >= sizeof(path) || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        if (n_names == cap) {
            size_t ncap = cap == 0 ? 64 : cap * 2;
            char **nn = realloc(names, ncap * sizeof(*nn));
            if (nn == NULL)
                goto nomem;
            names = nn;
            cap = ncap;
        }
        names[n_names] = strdup(e->d_name);
        if (names[n_names] == NULL)
            goto nomem;
        n_names++;
    }
    closedir(dp);
    if (n_names == 0) {
        free(names);
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to open source image_dir=%s: no .jpg/.jpeg/.png/.bmp images "
                            "in it; point it at a folder of images",
                            dir);
    }
    qsort(names, n_names, sizeof(*names), cmp_names);
    *names_out = names;
    *n_out = n_names;
    return EB_OK;
nomem:
    closedir(dp);
    free_names(names, n_names);
    return eb_diag_fail(diag, EB_ERR_NOMEM,
                        "failed to list image_dir=%s: out of memory; free memory", dir);
}

static enum eb_status list_dir(struct eb_source *src, struct imgdir *d, struct eb_diag *diag)
{
    return list_images(src->spec.path, &d->names, &d->n_names, diag);
}

/* opts.files: the caller's image paths, in its order (a dataset's images). */
static enum eb_status copy_files(struct eb_source *src, struct imgdir *d, struct eb_diag *diag)
{
    const char *dir = src->spec.path;
    if (src->opts.n_files == 0)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to open source image_dir=%s: the image list is empty; give "
                            "at least one image",
                            dir);
    d->names = calloc(src->opts.n_files, sizeof(*d->names));
    if (d->names == NULL)
        goto nomem;
    for (size_t i = 0; i < src->opts.n_files; i++) {
        if (strlen(src->opts.files[i]) >= sizeof(d->path))
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "failed to open source image_dir=%s: image path %.100s... is "
                                "longer than %zu bytes",
                                dir, src->opts.files[i], sizeof(d->path) - 1);
        d->names[i] = strdup(src->opts.files[i]);
        if (d->names[i] == NULL)
            goto nomem;
        d->n_names = i + 1;
    }
    d->listed = 1;
    return EB_OK;
nomem:
    return eb_diag_fail(diag, EB_ERR_NOMEM,
                        "failed to list image_dir=%s: out of memory; free memory", dir);
}

static enum eb_status imgdir_open(struct eb_source *src, struct eb_diag *diag)
{
    const char *p = src->spec.path;
    struct imgdir *d = calloc(1, sizeof(*d));
    if (d == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM,
                            "failed to open source image_dir=%s: out of memory; free memory", p);
    src->impl = d;
    struct stat sb;
    if (stat(p, &sb) != 0) {
        int err = errno;
        if (err == ENOENT || err == ENOTDIR)
            return eb_diag_fail(diag, EB_ERR_IO,
                                "failed to open source image_dir=%s: no such file or directory; "
                                "check the path",
                                p);
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to open source image_dir=%s: %s; check the path and its "
                            "permissions",
                            p, strerror(err));
    }
    if (src->opts.files != NULL)
        return copy_files(src, d, diag);
    if (S_ISDIR(sb.st_mode))
        return list_dir(src, d, diag);
    if (!S_ISREG(sb.st_mode) || !eb_source__is_image_name(p))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to open source image_dir=%s: not a directory or a "
                            ".jpg/.jpeg/.png/.bmp file; give a folder of images or one image",
                            p);
    d->single = 1;
    d->names = calloc(1, sizeof(*d->names));
    if (d->names == NULL || (d->names[0] = strdup(p)) == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM,
                            "failed to open source image_dir=%s: out of memory; free memory", p);
    d->n_names = 1;
    return EB_OK;
}

static enum eb_status imgdir_next(struct eb_source *src, struct eb_frame *frame_out,
                                  struct eb_diag *diag)
{
    struct imgdir *d = src->impl;
    while (d->cursor < d->n_names) {
        const size_t file_index = d->cursor;
        const char *name = d->names[d->cursor++];
        if (d->single || d->listed) {
            snprintf(d->path, sizeof(d->path), "%s", name);
        } else {
            int n = snprintf(d->path, sizeof(d->path), "%s/%s", src->spec.path, name);
            if (n < 0 || (size_t)n >= sizeof(d->path))
                continue; /* cannot happen: checked while listing */
        }
        char why[WHY_MAX] = "";
        size_t size = 0;
        struct eb_image img = {0};
        enum eb_status st = read_file(d, d->path, &size, why, diag);
        if (st == EB_OK) {
            /* The caller's buffer (eb_source_set_output), when it has one. */
            d->dec.dst = src->out;
            d->dec.dst_cap = src->out_cap;
            st = eb_image_decode(&d->dec, eb_image_format_of(d->file, size), d->file, size, &img,
                                 why, diag);
        }
        if (st == EB_ERR_NOMEM)
            return st;
        if (st != EB_OK) {
            src->skipped++;
            eb_log_msg(src->opts.log, EB_LOG_WARN, "skipping image %s: %s", d->path, why);
            continue;
        }
        frame_out->rgb = img.rgb;
        frame_out->width = img.width;
        frame_out->height = img.height;
        frame_out->stride = (size_t)img.width * 3;
        frame_out->source_bits = img.bits;
        frame_out->source_channels = img.channels;
        frame_out->name = d->single || d->listed ? eb_path_base(name) : name;
        frame_out->file_index = (int64_t)file_index;
        return EB_OK;
    }
    return EB_ERR_END;
}

static enum eb_status imgdir_rewind(struct eb_source *src, struct eb_diag *diag)
{
    (void)diag;
    struct imgdir *d = src->impl;
    d->cursor = 0;
    return EB_OK;
}

static int64_t imgdir_count(const struct eb_source *src)
{
    const struct imgdir *d = src->impl;
    return (int64_t)d->n_names;
}

const struct eb_source_ops eb_source__imgdir_ops = {
    .name = "image_dir",
    .open = imgdir_open,
    .next = imgdir_next,
    .rewind = imgdir_rewind,
    .count = imgdir_count,
    .close = imgdir_close,
};

/* ------------------------------------------------------------------ file list hash */

/* Byte order of the names, carried with the paths that are stat'ed. */
struct listed {
    const char *name; /* what is hashed */
    const char *path; /* what is stat'ed */
};

static int cmp_listed(const void *a, const void *b)
{
    return strcmp(((const struct listed *)a)->name, ((const struct listed *)b)->name);
}

/* `path` relative to folder `dir` when it lies under it, else `path`. */
static const char *relative_to(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n > 0 && strncmp(path, dir, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

enum eb_status eb_source_file_list_hash(const struct eb_source_spec *spec, const char *const *files,
                                        size_t n_files, struct eb_source_file_list *out,
                                        struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_NOMEM;
    char **names = NULL;
    size_t n_names = 0, n = 0;
    struct listed *list = NULL;
    char path[EB_SOURCE_PATH_MAX + 512];
    struct stat sb;

    if (spec->kind != EB_SOURCE_IMAGE_DIR)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to hash the file list of source %s: not an image_dir source",
                            eb_source_kind_name(spec->kind));
    if (files == NULL && stat(spec->path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        st = list_images(spec->path, &names, &n_names, diag);
        if (st != EB_OK)
            goto fail;
        n = n_names;
    } else {
        n = files != NULL ? n_files : 1;
    }
    list = calloc(n > 0 ? n : 1, sizeof(*list));
    if (list == NULL) {
        st =
            eb_diag_fail(diag, EB_ERR_NOMEM,
                         "failed to hash the file list of image_dir=%s: out of memory", spec->path);
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        if (names != NULL) {
            list[i].name = names[i];
            list[i].path = NULL;
        } else if (files != NULL) {
            list[i].path = files[i];
            list[i].name = relative_to(files[i], spec->path);
        } else {
            list[i].path = spec->path;
            list[i].name = eb_path_base(spec->path);
        }
    }
    qsort(list, n, sizeof(*list), cmp_listed);

    struct eb_sha256 h;
    eb_sha256_init(&h);
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = list[i].path;
        if (p == NULL) {
            int k = snprintf(path, sizeof(path), "%s/%s", spec->path, list[i].name);
            if (k < 0 || (size_t)k >= sizeof(path)) {
                st = eb_diag_fail(diag, EB_ERR_IO,
                                  "failed to hash the file list of image_dir=%s: path of %s too "
                                  "long",
                                  spec->path, list[i].name);
                goto fail;
            }
            p = path;
        }
        const int err = stat(p, &sb) != 0 ? errno : 0;
        if (err != 0 || !S_ISREG(sb.st_mode)) {
            st = eb_diag_fail(diag, EB_ERR_IO,
                              "failed to hash the file list of image_dir=%s: %s: %s; check that "
                              "the folder did not change during the run",
                              spec->path, p, err != 0 ? strerror(err) : "not a regular file");
            goto fail;
        }
        char size[32];
        int k = snprintf(size, sizeof(size), "%llu\n", (unsigned long long)sb.st_size);
        eb_sha256_update(&h, list[i].name, strlen(list[i].name) + 1); /* the NUL separates */
        eb_sha256_update(&h, size, (size_t)k);
        bytes += (uint64_t)sb.st_size;
    }
    out->files = n;
    out->bytes = bytes;
    eb_sha256_final_hex(&h, out->sha256);
    st = EB_OK;
fail:
    free(list);
    free_names(names, n_names);
    return st;
}
