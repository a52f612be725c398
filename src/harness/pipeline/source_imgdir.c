/*
 * Image directories (and single image files): JPEG through libjpeg, PNG through libpng, BMP
 * through a small reader here. The format is chosen by the file's magic bytes, not its name.
 * A file that fails to decode is skipped, counted and logged; the next one is tried.
 *
 * libjpeg and libpng report fatal errors by calling an error handler that must not return
 * (the defaults print and exit/abort); both get handlers here that longjmp back into the
 * decode function, which then releases the decoder and reports the file as undecodable.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jerror.h>
#include <jpeglib.h>
#include <png.h>

#include "harness/pipeline/source_internal.h"

#define MAX_FILE_BYTES ((size_t)512 << 20)
#define WHY_MAX        160

struct imgdir {
    char **names; /* sorted file names (directory) or the single file's path */
    size_t n_names;
    size_t cursor; /* next name to try */
    int single;    /* spec.path is one image file */
    int listed;    /* names are the caller's paths (opts.files), not folder entries */
    char path[EB_SOURCE_PATH_MAX + 512];
    uint8_t *file; /* bytes of the current file */
    size_t file_cap;
    uint8_t *rgb; /* decoded frame, packed RGB8 */
    size_t rgb_cap;
    uint8_t *out;                /* where this frame's RGB goes: rgb or the caller's buffer */
    const struct eb_source *src; /* its eb_source__rgb_out */
    uint16_t *u16;               /* 16-bit gray samples before AGC */
    size_t u16_cap;
    png_bytep *rows; /* row pointers for libpng */
    size_t rows_cap;
};

struct decoded {
    int w, h, bits, channels;
};

static enum eb_status check_dims(int64_t w, int64_t h, char *why)
{
    if (w <= 0 || h <= 0 || w > EB_SOURCE__MAX_SIDE || h > EB_SOURCE__MAX_SIDE ||
        w * h > EB_SOURCE__MAX_PIXELS) {
        snprintf(why, WHY_MAX, "size %lldx%lld is outside 1..%d per side and %lld pixels",
                 (long long)w, (long long)h, EB_SOURCE__MAX_SIDE, (long long)EB_SOURCE__MAX_PIXELS);
        return EB_ERR_FORMAT;
    }
    return EB_OK;
}

/* ------------------------------------------------------------------ JPEG */

struct jpeg_err {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
    int truncated;
    char msg[JMSG_LENGTH_MAX];
};

static void jpeg_on_error(j_common_ptr c)
{
    struct jpeg_err *e = (struct jpeg_err *)c->err;
    (*c->err->format_message)(c, e->msg);
    longjmp(e->jb, 1);
}

static void jpeg_on_message(j_common_ptr c, int level)
{
    /* Warnings stay quiet (no stderr from a library); a file cut short is treated as corrupt
       because libjpeg would otherwise fill the missing part with gray. */
    struct jpeg_err *e = (struct jpeg_err *)c->err;
    if (level < 0 && c->err->msg_code == JWRN_JPEG_EOF)
        e->truncated = 1;
}

static enum eb_status decode_jpeg(struct imgdir *d, size_t size, struct decoded *out, char *why,
                                  struct eb_diag *diag)
{
    struct jpeg_decompress_struct cinfo;
    struct jpeg_err jerr;
    memset(&cinfo, 0, sizeof(cinfo));
    memset(&jerr, 0, sizeof(jerr));
    cinfo.err = jpeg_std_error(&jerr.pub);
    jerr.pub.error_exit = jpeg_on_error;
    jerr.pub.emit_message = jpeg_on_message;
    /* Everything read after a longjmp lives in memory (cinfo, jerr, *d), never in locals
       changed after setjmp, so nothing is clobbered. */
    if (setjmp(jerr.jb) != 0) {
        jpeg_destroy_decompress(&cinfo);
        snprintf(why, WHY_MAX, "libjpeg: %.140s", jerr.msg);
        return EB_ERR_FORMAT;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, d->file, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    if (cinfo.num_components == 1) {
        cinfo.out_color_space = JCS_GRAYSCALE;
    } else if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
        jpeg_destroy_decompress(&cinfo);
        snprintf(why, WHY_MAX, "CMYK JPEG is not supported");
        return EB_ERR_FORMAT;
    } else {
        cinfo.out_color_space = JCS_RGB;
    }
    if (check_dims(cinfo.image_width, cinfo.image_height, why) != EB_OK) {
        jpeg_destroy_decompress(&cinfo);
        return EB_ERR_FORMAT;
    }
    size_t px = (size_t)cinfo.image_width * cinfo.image_height;
    if (eb_source__reserve((void **)&d->rgb, &d->rgb_cap, px * 3, "an image buffer", diag) !=
        EB_OK) {
        jpeg_destroy_decompress(&cinfo);
        return EB_ERR_NOMEM;
    }
    d->out = eb_source__rgb_out(d->src, d->rgb, px * 3);
    jpeg_start_decompress(&cinfo);
    size_t row_bytes = (size_t)cinfo.output_width * (size_t)cinfo.output_components;
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = d->out + (size_t)cinfo.output_scanline * row_bytes;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    out->w = (int)cinfo.output_width;
    out->h = (int)cinfo.output_height;
    out->bits = 8;
    out->channels = cinfo.output_components;
    jpeg_destroy_decompress(&cinfo);
    if (jerr.truncated) {
        snprintf(why, WHY_MAX, "the JPEG data ends early (truncated file)");
        return EB_ERR_FORMAT;
    }
    if (out->channels == 1)
        eb_source__gray_to_rgb_inplace(d->out, px);
    return EB_OK;
}

/* ------------------------------------------------------------------ PNG */

struct png_ctx {
    const uint8_t *data;
    size_t size, pos;
    char msg[WHY_MAX];
};

static void png_on_error(png_structp png, png_const_charp msg)
{
    struct png_ctx *c = png_get_error_ptr(png);
    snprintf(c->msg, sizeof(c->msg), "%s", msg);
    png_longjmp(png, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg; /* no stderr output from a library */
}

static void png_read_mem(png_structp png, png_bytep out, png_size_t n)
{
    struct png_ctx *c = png_get_io_ptr(png);
    if (n > c->size - c->pos)
        png_error(png, "the PNG data ends early (truncated file)");
    memcpy(out, c->data + c->pos, n);
    c->pos += n;
}

static enum eb_status decode_png(struct eb_source *src, struct imgdir *d, size_t size,
                                 struct decoded *out, char *why, struct eb_diag *diag)
{
    struct png_ctx ctx = {.data = d->file, .size = size, .pos = 0};
    png_structp png =
        png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, png_on_error, png_on_warning);
    png_infop info = png != NULL ? png_create_info_struct(png) : NULL;
    if (png == NULL || info == NULL) {
        png_destroy_read_struct(&png, &info, NULL);
        return eb_diag_fail(diag, EB_ERR_NOMEM,
                            "failed to create a PNG decoder: out of memory; "
                            "free memory");
    }
    /* The state read after a longjmp (png, info, ctx, *d, *out) is not modified after setjmp
       in this frame: `out` fields are written only through the pointer. */
    if (setjmp(png_jmpbuf(png)) != 0) {
        png_destroy_read_struct(&png, &info, NULL);
        snprintf(why, WHY_MAX, "libpng: %.140s", ctx.msg);
        return EB_ERR_FORMAT;
    }
    png_set_read_fn(png, &ctx, png_read_mem);
    png_read_info(png, info);
    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    int color = png_get_color_type(png, info);
    int depth = png_get_bit_depth(png, info);
    if (check_dims(w, h, why) != EB_OK) {
        png_destroy_read_struct(&png, &info, NULL);
        return EB_ERR_FORMAT;
    }
    if (color == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (color & PNG_COLOR_MASK_ALPHA)
        png_set_strip_alpha(png);
    int gray16 =
        depth == 16 && (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA);
    if (depth == 16 && !gray16)
        png_set_strip_16(png); /* 16-bit colour: keep the high byte */
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int channels = png_get_channels(png, info);
    size_t rowbytes = png_get_rowbytes(png, info);
    size_t px = (size_t)w * h;
    size_t want_rowbytes = (size_t)w * (size_t)channels * (gray16 ? 2u : 1u);
    if ((channels != 1 && channels != 3) || rowbytes != want_rowbytes) {
        png_destroy_read_struct(&png, &info, NULL);
        snprintf(why, WHY_MAX, "unexpected PNG layout (%d channels, %zu bytes per row)", channels,
                 rowbytes);
        return EB_ERR_FORMAT;
    }
    if (eb_source__reserve((void **)&d->rgb, &d->rgb_cap, px * 3, "an image buffer", diag) !=
            EB_OK ||
        eb_source__reserve((void **)&d->rows, &d->rows_cap, (size_t)h * sizeof(png_bytep),
                           "PNG row pointers", diag) != EB_OK ||
        (gray16 && eb_source__reserve((void **)&d->u16, &d->u16_cap, px * 2, "a 16-bit buffer",
                                      diag) != EB_OK)) {
        png_destroy_read_struct(&png, &info, NULL);
        return EB_ERR_NOMEM;
    }
    d->out = eb_source__rgb_out(d->src, d->rgb, px * 3);
    uint8_t *base = gray16 ? (uint8_t *)d->u16 : d->out;
    for (png_uint_32 y = 0; y < h; y++)
        d->rows[y] = base + (size_t)y * rowbytes;
    png_read_image(png, d->rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    out->w = (int)w;
    out->h = (int)h;
    out->bits = gray16 ? 16 : 8;
    out->channels = channels;
    if (gray16) {
        /* PNG samples are big-endian. */
        const uint8_t *b = (const uint8_t *)d->u16;
        for (size_t i = 0; i < px; i++)
            d->u16[i] = (uint16_t)((unsigned)b[2 * i] << 8 | b[2 * i + 1]);
        return eb_source__agc_to_rgb(src, d->u16, px, d->out, diag);
    }
    if (channels == 1)
        eb_source__gray_to_rgb_inplace(d->out, px);
    return EB_OK;
}

/* ------------------------------------------------------------------ BMP */

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* Uncompressed BMP: 24/32-bit BGR(X), 8-bit paletted (gray palettes report 1 channel);
   bottom-up (positive height) and top-down (negative height). */
static enum eb_status decode_bmp(struct imgdir *d, size_t size, struct decoded *out, char *why,
                                 struct eb_diag *diag)
{
    const uint8_t *f = d->file;
    if (size < 14 + 40) {
        snprintf(why, WHY_MAX, "the BMP header is truncated");
        return EB_ERR_FORMAT;
    }
    uint32_t off = le32(f + 10), hsize = le32(f + 14);
    if (hsize < 40 || 14 + (size_t)hsize > size) {
        snprintf(why, WHY_MAX, "unsupported BMP header (size %u)", hsize);
        return EB_ERR_FORMAT;
    }
    int64_t w = (int32_t)le32(f + 18), hh = (int32_t)le32(f + 22);
    unsigned bpp = le16(f + 28);
    uint32_t comp = le32(f + 30), clr_used = le32(f + 46);
    int top_down = hh < 0;
    int64_t h = top_down ? -hh : hh;
    if (check_dims(w, h, why) != EB_OK)
        return EB_ERR_FORMAT;
    if (!(comp == 0 || (comp == 3 && bpp == 32)) || (bpp != 8 && bpp != 24 && bpp != 32)) {
        snprintf(why, WHY_MAX,
                 "unsupported BMP (%u bits, compression %u); give 8/24/32-bit "
                 "uncompressed",
                 bpp, comp);
        return EB_ERR_FORMAT;
    }
    uint8_t pal[256][3];
    int gray_pal = 1;
    if (bpp == 8) {
        size_t n_pal = clr_used == 0 ? 256 : clr_used;
        size_t pal_at = 14 + (size_t)hsize;
        if (n_pal > 256 || pal_at + n_pal * 4 > size) {
            snprintf(why, WHY_MAX, "the BMP palette is invalid or truncated");
            return EB_ERR_FORMAT;
        }
        memset(pal, 0, sizeof(pal));
        for (size_t i = 0; i < n_pal; i++) {
            const uint8_t *e = f + pal_at + 4 * i; /* B G R X */
            pal[i][0] = e[2];
            pal[i][1] = e[1];
            pal[i][2] = e[0];
            if (e[0] != e[1] || e[1] != e[2])
                gray_pal = 0;
        }
    }
    size_t stride = (((size_t)w * bpp + 31) / 32) * 4;
    if (off > size || stride * (size_t)h > size - off) {
        snprintf(why, WHY_MAX, "the BMP pixel data is truncated");
        return EB_ERR_FORMAT;
    }
    size_t px = (size_t)w * (size_t)h;
    if (eb_source__reserve((void **)&d->rgb, &d->rgb_cap, px * 3, "an image buffer", diag) != EB_OK)
        return EB_ERR_NOMEM;
    d->out = eb_source__rgb_out(d->src, d->rgb, px * 3);
    for (int64_t y = 0; y < h; y++) {
        const uint8_t *s = f + off + stride * (size_t)(top_down ? y : h - 1 - y);
        uint8_t *o = d->out + (size_t)y * (size_t)w * 3;
        for (int64_t x = 0; x < w; x++, o += 3) {
            if (bpp == 8) {
                memcpy(o, pal[s[x]], 3);
            } else {
                const uint8_t *p = s + (size_t)x * (bpp / 8);
                o[0] = p[2];
                o[1] = p[1];
                o[2] = p[0];
            }
        }
    }
    out->w = (int)w;
    out->h = (int)h;
    out->bits = 8;
    out->channels = bpp == 8 && gray_pal ? 1 : 3;
    return EB_OK;
}

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

static void imgdir_close(struct eb_source *src)
{
    struct imgdir *d = src->impl;
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->n_names; i++)
        free(d->names[i]);
    free(d->names);
    free(d->file);
    free(d->rgb);
    free(d->u16);
    free(d->rows);
    free(d);
    src->impl = NULL;
}

static enum eb_status list_dir(struct eb_source *src, struct imgdir *d, struct eb_diag *diag)
{
    const char *dir = src->spec.path;
    enum eb_status st = EB_ERR_IO;
    size_t cap = 0;
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
        int n = snprintf(d->path, sizeof(d->path), "%s/%s", dir, e->d_name);
        struct stat sb;
        if (n < 0 || (size_t)n >= sizeof(d->path) || stat(d->path, &sb) != 0 ||
            !S_ISREG(sb.st_mode))
            continue;
        if (d->n_names == cap) {
            size_t ncap = cap == 0 ? 64 : cap * 2;
            char **nn = realloc(d->names, ncap * sizeof(*nn));
            if (nn == NULL)
                goto nomem;
            d->names = nn;
            cap = ncap;
        }
        d->names[d->n_names] = strdup(e->d_name);
        if (d->names[d->n_names] == NULL)
            goto nomem;
        d->n_names++;
    }
    closedir(dp);
    if (d->n_names == 0)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to open source image_dir=%s: no .jpg/.jpeg/.png/.bmp images "
                            "in it; point it at a folder of images",
                            dir);
    qsort(d->names, d->n_names, sizeof(*d->names), cmp_names);
    return EB_OK;
nomem:
    closedir(dp);
    st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to list image_dir=%s: out of memory; free memory",
                      dir);
    return st;
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
    d->src = src;
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

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s != NULL ? s + 1 : p;
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
        struct decoded dec = {0};
        enum eb_status st = read_file(d, d->path, &size, why, diag);
        if (st == EB_OK) {
            if (size >= 3 && d->file[0] == 0xFF && d->file[1] == 0xD8 && d->file[2] == 0xFF)
                st = decode_jpeg(d, size, &dec, why, diag);
            else if (size >= 8 && png_sig_cmp(d->file, 0, 8) == 0)
                st = decode_png(src, d, size, &dec, why, diag);
            else if (size >= 2 && d->file[0] == 'B' && d->file[1] == 'M')
                st = decode_bmp(d, size, &dec, why, diag);
            else {
                snprintf(why, WHY_MAX, "not a JPEG, PNG or BMP file");
                st = EB_ERR_FORMAT;
            }
        }
        if (st == EB_ERR_NOMEM)
            return st;
        if (st != EB_OK) {
            src->skipped++;
            eb_log_msg(src->opts.log, EB_LOG_WARN, "skipping image %s: %s", d->path, why);
            continue;
        }
        frame_out->rgb = d->out;
        frame_out->width = dec.w;
        frame_out->height = dec.h;
        frame_out->stride = (size_t)dec.w * 3;
        frame_out->source_bits = dec.bits;
        frame_out->source_channels = dec.channels;
        frame_out->name = d->single || d->listed ? base_name(name) : name;
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
