/*
 * Annotated images (`--save_images N` of run and val): a frame's detections drawn on a copy of
 * its RGB (a box per detection, a label "class score" in a built-in 5x7 bitmap font on the
 * box's colour) and written as PNG (libpng's simplified API). Pure drawing functions plus one
 * that does the whole frame; nothing is kept between calls.
 *
 *     eb_annotate_save("runs/x/rgb_000000.png", fr->rgb, fr->width, fr->height, fr->stride,
 *                      &dets, names, n_names, 0.0, &diag);
 *
 * Thread-safe: no shared state.
 */
#ifndef EB_ANNOTATE_H
#define EB_ANNOTATE_H

#include <stddef.h>
#include <stdint.h>

#include "eb/detect.h"
#include "eb/diag.h"

/* The least score drawn when a slot detects at a low threshold for mAP (val, run --data): as
 * Ultralytics' plots of validation predictions, and run's default --conf. */
#define EB_ANNOTATE_MIN_SCORE_LOW_CONF 0.25

#define EB_ANNOTATE_GLYPH_W 5 /* the font's glyph cell (without the 1 px spacing) */
#define EB_ANNOTATE_GLYPH_H 7

/** An RGB8 image the drawing functions write into (borrowed; `stride` bytes per row). */
struct eb_annotate_canvas {
    uint8_t *rgb;
    int width, height;
    size_t stride;
};

/**
 * Draws the outline of the box [x1, x2] x [y1, y2] (pixels, inclusive), `thick` px wide inward,
 * in `color`; the parts outside the canvas are clipped.
 */
void eb_annotate_box(const struct eb_annotate_canvas *c, int x1, int y1, int x2, int y2, int thick,
                     const uint8_t color[3]);

/**
 * Draws `text` (printable ASCII; other bytes as '?') with its top-left corner at (x, y), each
 * font pixel `scale` x `scale`, `fg` on a filled `bg` band (bg NULL = transparent); clipped.
 * Returns the width the text takes in pixels (6 * scale per character).
 */
int eb_annotate_text(const struct eb_annotate_canvas *c, int x, int y, int scale, const char *text,
                     const uint8_t fg[3], const uint8_t *bg);

/**
 * Draws each detection of `d` whose score is at least `min_score`: its box (original-frame
 * pixels) in its class's colour and, above it (inside when there is no room), "NAME 0.87" with
 * NAME from `names` (n_names entries, borrowed; a class without a name is its number).
 */
void eb_annotate_detections(const struct eb_annotate_canvas *c, const struct eb_detections *d,
                            const char *const *names, size_t n_names, double min_score);

/**
 * Writes the canvas to `path` as an 8-bit RGB PNG. EB_ERR_IO naming the file and libpng's
 * reason.
 */
EB_NODISCARD enum eb_status
eb_annotate_write_png(const char *path, const struct eb_annotate_canvas *c, struct eb_diag *diag);

/**
 * The whole frame: copies `rgb` (width x height, `stride` bytes per row; borrowed, unchanged),
 * draws `d` (eb_annotate_detections) and writes the PNG `path`. EB_ERR_NOMEM, EB_ERR_IO.
 */
EB_NODISCARD enum eb_status eb_annotate_save(const char *path, const uint8_t *rgb, int width,
                                             int height, size_t stride,
                                             const struct eb_detections *d,
                                             const char *const *names, size_t n_names,
                                             double min_score, struct eb_diag *diag);

#endif
