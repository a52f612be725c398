/*
 * Boxes, labels and PNG output for annotated images (harness/pipeline/annotate.h).
 */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/pipeline/annotate.h"

/*
 * A 5x7 font for printable ASCII (32..126): per glyph 5 columns, left to right, bit 0 the top
 * row. Drawn for this module in the manner of the HD44780 character LCDs.
 */
static const uint8_t font5x7[95][5] = {
    {0x00, 0x00, 0x00, 0x00, 0x00}, {0x00, 0x00, 0x5F, 0x00, 0x00}, /* space ! */
    {0x00, 0x07, 0x00, 0x07, 0x00}, {0x14, 0x7F, 0x14, 0x7F, 0x14}, /* " # */
    {0x24, 0x2A, 0x7F, 0x2A, 0x12}, {0x23, 0x13, 0x08, 0x64, 0x62}, /* $ % */
    {0x36, 0x49, 0x55, 0x22, 0x50}, {0x00, 0x05, 0x03, 0x00, 0x00}, /* & ' */
    {0x00, 0x1C, 0x22, 0x41, 0x00}, {0x00, 0x41, 0x22, 0x1C, 0x00}, /* ( ) */
    {0x14, 0x08, 0x3E, 0x08, 0x14}, {0x08, 0x08, 0x3E, 0x08, 0x08}, /* * + */
    {0x00, 0x50, 0x30, 0x00, 0x00}, {0x08, 0x08, 0x08, 0x08, 0x08}, /* , - */
    {0x00, 0x60, 0x60, 0x00, 0x00}, {0x20, 0x10, 0x08, 0x04, 0x02}, /* . / */
    {0x3E, 0x51, 0x49, 0x45, 0x3E}, {0x00, 0x42, 0x7F, 0x40, 0x00}, /* 0 1 */
    {0x42, 0x61, 0x51, 0x49, 0x46}, {0x21, 0x41, 0x45, 0x4B, 0x31}, /* 2 3 */
    {0x18, 0x14, 0x12, 0x7F, 0x10}, {0x27, 0x45, 0x45, 0x45, 0x39}, /* 4 5 */
    {0x3C, 0x4A, 0x49, 0x49, 0x30}, {0x01, 0x71, 0x09, 0x05, 0x03}, /* 6 7 */
    {0x36, 0x49, 0x49, 0x49, 0x36}, {0x06, 0x49, 0x49, 0x29, 0x1E}, /* 8 9 */
    {0x00, 0x36, 0x36, 0x00, 0x00}, {0x00, 0x56, 0x36, 0x00, 0x00}, /* : ; */
    {0x08, 0x14, 0x22, 0x41, 0x00}, {0x14, 0x14, 0x14, 0x14, 0x14}, /* < = */
    {0x00, 0x41, 0x22, 0x14, 0x08}, {0x02, 0x01, 0x51, 0x09, 0x06}, /* > ? */
    {0x32, 0x49, 0x79, 0x41, 0x3E}, {0x7E, 0x11, 0x11, 0x11, 0x7E}, /* @ A */
    {0x7F, 0x49, 0x49, 0x49, 0x36}, {0x3E, 0x41, 0x41, 0x41, 0x22}, /* B C */
    {0x7F, 0x41, 0x41, 0x22, 0x1C}, {0x7F, 0x49, 0x49, 0x49, 0x41}, /* D E */
    {0x7F, 0x09, 0x09, 0x09, 0x01}, {0x3E, 0x41, 0x49, 0x49, 0x7A}, /* F G */
    {0x7F, 0x08, 0x08, 0x08, 0x7F}, {0x00, 0x41, 0x7F, 0x41, 0x00}, /* H I */
    {0x20, 0x40, 0x41, 0x3F, 0x01}, {0x7F, 0x08, 0x14, 0x22, 0x41}, /* J K */
    {0x7F, 0x40, 0x40, 0x40, 0x40}, {0x7F, 0x02, 0x0C, 0x02, 0x7F}, /* L M */
    {0x7F, 0x04, 0x08, 0x10, 0x7F}, {0x3E, 0x41, 0x41, 0x41, 0x3E}, /* N O */
    {0x7F, 0x09, 0x09, 0x09, 0x06}, {0x3E, 0x41, 0x51, 0x21, 0x5E}, /* P Q */
    {0x7F, 0x09, 0x19, 0x29, 0x46}, {0x46, 0x49, 0x49, 0x49, 0x31}, /* R S */
    {0x01, 0x01, 0x7F, 0x01, 0x01}, {0x3F, 0x40, 0x40, 0x40, 0x3F}, /* T U */
    {0x1F, 0x20, 0x40, 0x20, 0x1F}, {0x3F, 0x40, 0x38, 0x40, 0x3F}, /* V W */
    {0x63, 0x14, 0x08, 0x14, 0x63}, {0x07, 0x08, 0x70, 0x08, 0x07}, /* X Y */
    {0x61, 0x51, 0x49, 0x45, 0x43}, {0x00, 0x7F, 0x41, 0x41, 0x00}, /* Z [ */
    {0x02, 0x04, 0x08, 0x10, 0x20}, {0x00, 0x41, 0x41, 0x7F, 0x00}, /* \ ] */
    {0x04, 0x02, 0x01, 0x02, 0x04}, {0x40, 0x40, 0x40, 0x40, 0x40}, /* ^ _ */
    {0x00, 0x01, 0x02, 0x04, 0x00}, {0x20, 0x54, 0x54, 0x54, 0x78}, /* ` a */
    {0x7F, 0x48, 0x44, 0x44, 0x38}, {0x38, 0x44, 0x44, 0x44, 0x20}, /* b c */
    {0x38, 0x44, 0x44, 0x48, 0x7F}, {0x38, 0x54, 0x54, 0x54, 0x18}, /* d e */
    {0x08, 0x7E, 0x09, 0x01, 0x02}, {0x0C, 0x52, 0x52, 0x52, 0x3E}, /* f g */
    {0x7F, 0x08, 0x04, 0x04, 0x78}, {0x00, 0x44, 0x7D, 0x40, 0x00}, /* h i */
    {0x20, 0x40, 0x44, 0x3D, 0x00}, {0x7F, 0x10, 0x28, 0x44, 0x00}, /* j k */
    {0x00, 0x41, 0x7F, 0x40, 0x00}, {0x7C, 0x04, 0x18, 0x04, 0x78}, /* l m */
    {0x7C, 0x08, 0x04, 0x04, 0x78}, {0x38, 0x44, 0x44, 0x44, 0x38}, /* n o */
    {0x7C, 0x14, 0x14, 0x14, 0x08}, {0x08, 0x14, 0x14, 0x18, 0x7C}, /* p q */
    {0x7C, 0x08, 0x04, 0x04, 0x08}, {0x48, 0x54, 0x54, 0x54, 0x20}, /* r s */
    {0x04, 0x3F, 0x44, 0x40, 0x20}, {0x3C, 0x40, 0x40, 0x20, 0x7C}, /* t u */
    {0x1C, 0x20, 0x40, 0x20, 0x1C}, {0x3C, 0x40, 0x30, 0x40, 0x3C}, /* v w */
    {0x44, 0x28, 0x10, 0x28, 0x44}, {0x0C, 0x50, 0x50, 0x50, 0x3C}, /* x y */
    {0x44, 0x64, 0x54, 0x4C, 0x44}, {0x00, 0x08, 0x36, 0x41, 0x00}, /* z { */
    {0x00, 0x00, 0x7F, 0x00, 0x00}, {0x00, 0x41, 0x36, 0x08, 0x00}, /* | } */
    {0x08, 0x04, 0x08, 0x10, 0x08},                                 /* ~ */
};

/* Box colours by class (Ultralytics' palette, a class keeps its colour across images). */
static const uint8_t palette[][3] = {
    {255, 56, 56},  {255, 157, 151}, {255, 112, 31}, {255, 178, 29},  {207, 210, 49},
    {72, 249, 10},  {146, 204, 23},  {61, 219, 134}, {26, 147, 52},   {0, 212, 187},
    {44, 153, 168}, {0, 194, 255},   {52, 69, 147},  {100, 115, 255}, {0, 24, 236},
    {132, 56, 255}, {82, 0, 133},    {203, 56, 255}, {255, 149, 200}, {255, 55, 199},
};

static void fill(const struct eb_annotate_canvas *c, int x0, int y0, int x1, int y1,
                 const uint8_t color[3])
{
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    x1 = x1 >= c->width ? c->width - 1 : x1;
    y1 = y1 >= c->height ? c->height - 1 : y1;
    for (int y = y0; y <= y1; y++) {
        uint8_t *p = c->rgb + (size_t)y * c->stride + (size_t)x0 * 3;
        for (int x = x0; x <= x1; x++, p += 3)
            memcpy(p, color, 3);
    }
}

void eb_annotate_box(const struct eb_annotate_canvas *c, int x1, int y1, int x2, int y2, int thick,
                     const uint8_t color[3])
{
    if (x2 < x1 || y2 < y1 || thick < 1)
        return;
    fill(c, x1, y1, x2, y1 + thick - 1, color);
    fill(c, x1, y2 - thick + 1, x2, y2, color);
    fill(c, x1, y1, x1 + thick - 1, y2, color);
    fill(c, x2 - thick + 1, y1, x2, y2, color);
}

int eb_annotate_text(const struct eb_annotate_canvas *c, int x, int y, int scale, const char *text,
                     const uint8_t fg[3], const uint8_t *bg)
{
    const int adv = (EB_ANNOTATE_GLYPH_W + 1) * scale;
    const int n = (int)strlen(text);
    if (bg != NULL)
        fill(c, x - scale, y - scale, x + n * adv, y + (EB_ANNOTATE_GLYPH_H + 1) * scale - 1, bg);
    for (int i = 0; i < n; i++) {
        unsigned ch = (unsigned char)text[i];
        const uint8_t *g = font5x7[(ch >= 32 && ch <= 126 ? ch : '?') - 32];
        for (int col = 0; col < EB_ANNOTATE_GLYPH_W; col++)
            for (int row = 0; row < EB_ANNOTATE_GLYPH_H; row++)
                if (g[col] >> row & 1) {
                    int px = x + i * adv + col * scale, py = y + row * scale;
                    fill(c, px, py, px + scale - 1, py + scale - 1, fg);
                }
    }
    return n * adv;
}

static int clamp_px(float v, int hi)
{
    if (!(v > 0)) /* also NaN */
        return 0;
    return v >= (float)hi ? hi : (int)lroundf(v);
}

void eb_annotate_detections(const struct eb_annotate_canvas *c, const struct eb_detections *d,
                            const char *const *names, size_t n_names, double min_score)
{
    static const uint8_t white[3] = {255, 255, 255};
    /* Lines and letters grow with the image: 1 px up to 640 px wide, then 1 px per 640. */
    const int big = c->width > c->height ? c->width : c->height;
    const int thick = big / 640 + 1, scale = big / 640 + 1;
    const int label_h = (EB_ANNOTATE_GLYPH_H + 2) * scale;
    for (size_t i = 0; i < d->count; i++) {
        const struct eb_detection *e = &d->items[i];
        if (!(e->score >= min_score))
            continue;
        const uint8_t *color = palette[(size_t)(e->cls < 0 ? 0 : e->cls) % 20];
        int x1 = clamp_px(e->x1, c->width - 1), y1 = clamp_px(e->y1, c->height - 1);
        int x2 = clamp_px(e->x2, c->width - 1), y2 = clamp_px(e->y2, c->height - 1);
        eb_annotate_box(c, x1, y1, x2, y2, thick, color);
        char label[96];
        if (e->cls >= 0 && (size_t)e->cls < n_names && names[e->cls] != NULL)
            snprintf(label, sizeof(label), "%.60s %.2f", names[e->cls], (double)e->score);
        else
            snprintf(label, sizeof(label), "class %d %.2f", e->cls, (double)e->score);
        /* Above the box, or inside its top when the box touches the top edge. */
        int ty = y1 - label_h >= 0 ? y1 - label_h + scale : y1 + thick + scale;
        eb_annotate_text(c, x1 + scale, ty, scale, label, white, color);
    }
}

enum eb_status eb_annotate_write_png(const char *path, const struct eb_annotate_canvas *c,
                                     struct eb_diag *diag)
{
    png_image img;
    memset(&img, 0, sizeof(img));
    img.version = PNG_IMAGE_VERSION;
    img.width = (png_uint_32)c->width;
    img.height = (png_uint_32)c->height;
    img.format = PNG_FORMAT_RGB;
    if (!png_image_write_to_file(&img, path, 0, c->rgb, (png_int_32)c->stride, NULL)) {
        enum eb_status st = eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s", path,
                                         img.message[0] ? img.message : "libpng failed");
        png_image_free(&img);
        remove(path);
        return st;
    }
    return EB_OK;
}

enum eb_status eb_annotate_save(const char *path, const uint8_t *rgb, int width, int height,
                                size_t stride, const struct eb_detections *d,
                                const char *const *names, size_t n_names, double min_score,
                                struct eb_diag *diag)
{
    if (width <= 0 || height <= 0)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "failed to write %s: an empty frame", path);
    const size_t row = (size_t)width * 3;
    struct eb_annotate_canvas c = {
        .rgb = malloc(row * (size_t)height), .width = width, .height = height, .stride = row};
    if (c.rgb == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to write %s: out of memory for %dx%d", path,
                            width, height);
    for (int y = 0; y < height; y++)
        memcpy(c.rgb + (size_t)y * row, rgb + (size_t)y * stride, row);
    eb_annotate_detections(&c, d, names, n_names, min_score);
    enum eb_status st = eb_annotate_write_png(path, &c, diag);
    free(c.rgb);
    return st;
}
