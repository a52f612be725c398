/*
 * In-memory image decoding (image_decode.h): JPEG through libjpeg, PNG through libpng, BMP
 * through a small reader here.
 *
 * libjpeg and libpng report fatal errors by calling an error handler that must not return
 * (the defaults print and exit/abort); both get handlers here that longjmp back into the
 * decode function, which then releases the decoder and reports the image as undecodable.
 */
#include "harness/pipeline/image_decode.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>
#include <png.h>

#include "harness/pipeline/source_internal.h"

/* Where a frame of `need` bytes goes: the caller's dst when large enough, else d->rgb (already
   reserved for need bytes). */
static uint8_t *rgb_out(const struct eb_image_decoder *d, size_t need)
{
    return d->dst != NULL && d->dst_cap >= need + EB_IMAGE_DST_SLACK ? d->dst : d->rgb;
}

static enum eb_status check_dims(const struct eb_image_decoder *d, int64_t w, int64_t h, char *why)
{
    int64_t max_px = d->max_pixels > 0 ? d->max_pixels : EB_SOURCE__MAX_PIXELS;
    if (w <= 0 || h <= 0 || w > EB_SOURCE__MAX_SIDE || h > EB_SOURCE__MAX_SIDE || w * h > max_px) {
        snprintf(why, EB_IMAGE_WHY_MAX, "size %lldx%lld is outside 1..%d per side and %lld pixels",
                 (long long)w, (long long)h, EB_SOURCE__MAX_SIDE, (long long)max_px);
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

static enum eb_status decode_jpeg(struct eb_image_decoder *d, const uint8_t *data, size_t size,
                                  struct eb_image *out, char *why, struct eb_diag *diag)
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
        snprintf(why, EB_IMAGE_WHY_MAX, "libjpeg: %.140s", jerr.msg);
        return EB_ERR_FORMAT;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    if (cinfo.num_components == 1) {
        cinfo.out_color_space = JCS_GRAYSCALE;
    } else if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
        jpeg_destroy_decompress(&cinfo);
        snprintf(why, EB_IMAGE_WHY_MAX, "CMYK JPEG is not supported");
        return EB_ERR_FORMAT;
    } else {
        cinfo.out_color_space = JCS_RGB;
    }
    if (check_dims(d, cinfo.image_width, cinfo.image_height, why) != EB_OK) {
        jpeg_destroy_decompress(&cinfo);
        return EB_ERR_FORMAT;
    }
    size_t px = (size_t)cinfo.image_width * cinfo.image_height;
    if (eb_source__reserve((void **)&d->rgb, &d->rgb_cap, px * 3, "an image buffer", diag) !=
        EB_OK) {
        jpeg_destroy_decompress(&cinfo);
        return EB_ERR_NOMEM;
    }
    out->rgb = rgb_out(d, px * 3);
    jpeg_start_decompress(&cinfo);
    size_t row_bytes = (size_t)cinfo.output_width * (size_t)cinfo.output_components;
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = out->rgb + (size_t)cinfo.output_scanline * row_bytes;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    out->width = (int)cinfo.output_width;
    out->height = (int)cinfo.output_height;
    out->bits = 8;
    out->channels = cinfo.output_components;
    jpeg_destroy_decompress(&cinfo);
    if (jerr.truncated) {
        snprintf(why, EB_IMAGE_WHY_MAX, "the JPEG data ends early (truncated file)");
        return EB_ERR_FORMAT;
    }
    if (out->channels == 1)
        eb_source__gray_to_rgb_inplace(out->rgb, px);
    return EB_OK;
}

/* ------------------------------------------------------------------ PNG */

struct png_ctx {
    const uint8_t *data;
    size_t size, pos;
    char msg[EB_IMAGE_WHY_MAX];
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

static enum eb_status decode_png(struct eb_image_decoder *d, const uint8_t *data, size_t size,
                                 struct eb_image *out, char *why, struct eb_diag *diag)
{
    struct png_ctx ctx = {.data = data, .size = size, .pos = 0};
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
        snprintf(why, EB_IMAGE_WHY_MAX, "libpng: %.140s", ctx.msg);
        return EB_ERR_FORMAT;
    }
    png_set_read_fn(png, &ctx, png_read_mem);
    png_read_info(png, info);
    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    int color = png_get_color_type(png, info);
    int depth = png_get_bit_depth(png, info);
    if (check_dims(d, w, h, why) != EB_OK) {
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
        snprintf(why, EB_IMAGE_WHY_MAX, "unexpected PNG layout (%d channels, %zu bytes per row)",
                 channels, rowbytes);
        return EB_ERR_FORMAT;
    }
    if (eb_source__reserve((void **)&d->rgb, &d->rgb_cap, px * 3, "an image buffer", diag) !=
            EB_OK ||
        eb_source__reserve(&d->rows, &d->rows_cap, (size_t)h * sizeof(png_bytep),
                           "PNG row pointers", diag) != EB_OK ||
        (gray16 && eb_source__reserve((void **)&d->u16, &d->u16_cap, px * 2, "a 16-bit buffer",
                                      diag) != EB_OK)) {
        png_destroy_read_struct(&png, &info, NULL);
        return EB_ERR_NOMEM;
    }
    out->rgb = rgb_out(d, px * 3);
    uint8_t *base = gray16 ? (uint8_t *)d->u16 : out->rgb;
    for (png_uint_32 y = 0; y < h; y++)
        ((png_bytep *)d->rows)[y] = base + (size_t)y * rowbytes;
    png_read_image(png, (png_bytep *)d->rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    out->width = (int)w;
    out->height = (int)h;
    out->bits = gray16 ? 16 : 8;
    out->channels = channels;
    if (gray16) {
        /* PNG samples are big-endian. */
        const uint8_t *b = (const uint8_t *)d->u16;
        for (size_t i = 0; i < px; i++)
            d->u16[i] = (uint16_t)((unsigned)b[2 * i] << 8 | b[2 * i + 1]);
        return eb_image_agc_to_rgb(&d->agc_hist, d->u16, px, out->rgb, diag);
    }
    if (channels == 1)
        eb_source__gray_to_rgb_inplace(out->rgb, px);
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
static enum eb_status decode_bmp(struct eb_image_decoder *d, const uint8_t *data, size_t size,
                                 struct eb_image *out, char *why, struct eb_diag *diag)
{
    const uint8_t *f = data;
    if (size < 14 + 40) {
        snprintf(why, EB_IMAGE_WHY_MAX, "the BMP header is truncated");
        return EB_ERR_FORMAT;
    }
    uint32_t off = le32(f + 10), hsize = le32(f + 14);
    if (hsize < 40 || 14 + (size_t)hsize > size) {
        snprintf(why, EB_IMAGE_WHY_MAX, "unsupported BMP header (size %u)", hsize);
        return EB_ERR_FORMAT;
    }
    int64_t w = (int32_t)le32(f + 18), hh = (int32_t)le32(f + 22);
    unsigned bpp = le16(f + 28);
    uint32_t comp = le32(f + 30), clr_used = le32(f + 46);
    int top_down = hh < 0;
    int64_t h = top_down ? -hh : hh;
    if (check_dims(d, w, h, why) != EB_OK)
        return EB_ERR_FORMAT;
    if (!(comp == 0 || (comp == 3 && bpp == 32)) || (bpp != 8 && bpp != 24 && bpp != 32)) {
        snprintf(why, EB_IMAGE_WHY_MAX,
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
            snprintf(why, EB_IMAGE_WHY_MAX, "the BMP palette is invalid or truncated");
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
        snprintf(why, EB_IMAGE_WHY_MAX, "the BMP pixel data is truncated");
        return EB_ERR_FORMAT;
    }
    size_t px = (size_t)w * (size_t)h;
    if (eb_source__reserve((void **)&d->rgb, &d->rgb_cap, px * 3, "an image buffer", diag) != EB_OK)
        return EB_ERR_NOMEM;
    out->rgb = rgb_out(d, px * 3);
    for (int64_t y = 0; y < h; y++) {
        const uint8_t *s = f + off + stride * (size_t)(top_down ? y : h - 1 - y);
        uint8_t *o = out->rgb + (size_t)y * (size_t)w * 3;
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
    out->width = (int)w;
    out->height = (int)h;
    out->bits = 8;
    out->channels = bpp == 8 && gray_pal ? 1 : 3;
    return EB_OK;
}

/* ------------------------------------------------------------------ entry points */

enum eb_image_format eb_image_format_of(const uint8_t *data, size_t size)
{
    if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF)
        return EB_IMAGE_FORMAT_JPEG;
    if (size >= 8 && png_sig_cmp(data, 0, 8) == 0)
        return EB_IMAGE_FORMAT_PNG;
    if (size >= 2 && data[0] == 'B' && data[1] == 'M')
        return EB_IMAGE_FORMAT_BMP;
    return EB_IMAGE_FORMAT_UNKNOWN;
}

enum eb_status eb_image_decode(struct eb_image_decoder *dec, enum eb_image_format format,
                               const uint8_t *data, size_t size, struct eb_image *img_out,
                               char *why, struct eb_diag *diag)
{
    struct eb_image img = {0};
    enum eb_status st;
    why[0] = '\0';
    switch (format) {
    case EB_IMAGE_FORMAT_JPEG: st = decode_jpeg(dec, data, size, &img, why, diag); break;
    case EB_IMAGE_FORMAT_PNG: st = decode_png(dec, data, size, &img, why, diag); break;
    case EB_IMAGE_FORMAT_BMP: st = decode_bmp(dec, data, size, &img, why, diag); break;
    default:
        snprintf(why, EB_IMAGE_WHY_MAX, "not a JPEG, PNG or BMP file");
        st = EB_ERR_FORMAT;
        break;
    }
    if (st == EB_OK)
        *img_out = img;
    return st;
}

enum eb_status eb_image_agc_to_rgb(uint32_t **hist, const uint16_t *in, size_t n, uint8_t *rgb,
                                   struct eb_diag *diag)
{
    if (*hist == NULL) {
        *hist = malloc(65536 * sizeof(uint32_t));
        if (*hist == NULL)
            return eb_diag_fail(diag, EB_ERR_NOMEM,
                                "failed to allocate the AGC histogram: out of memory; free memory");
    }
    eb_agc_u16_to_u8(in, n, 1.0, 99.0, *hist, rgb);
    eb_source__gray_to_rgb_inplace(rgb, n);
    return EB_OK;
}

void eb_image_decoder_fini(struct eb_image_decoder *dec)
{
    if (dec == NULL)
        return;
    free(dec->rgb);
    free(dec->u16);
    free(dec->rows);
    free(dec->agc_hist);
    memset(dec, 0, sizeof(*dec));
}
