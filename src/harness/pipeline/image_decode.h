/*
 * In-memory image decoding: JPEG (libjpeg), PNG (libpng; 8-bit, and 16-bit gray through AGC)
 * and uncompressed BMP (a small reader here), to packed RGB8. The image_dir source decodes every
 * file through eb_image_decode, and so does the libFuzzer target tests/fuzz/fuzz_image.c: the
 * fuzzed code is the product code.
 */
#ifndef EB_IMAGE_DECODE_H
#define EB_IMAGE_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "eb/diag.h"

/* Room for the one-line reason an image is undecodable (eb_image_decode's `why`). */
#define EB_IMAGE_WHY_MAX 160

enum eb_image_format {
    EB_IMAGE_FORMAT_UNKNOWN = 0,
    EB_IMAGE_FORMAT_JPEG,
    EB_IMAGE_FORMAT_PNG,
    EB_IMAGE_FORMAT_BMP,
};

/**
 * Buffers a decoder reuses from one image to the next, and its limits. Zero-initialise;
 * eb_image_decoder_fini
 * frees what it owns. `dst` and `dst_cap` (borrowed, may stay NULL/0) name a buffer the caller
 * wants the RGB written to: it is used when it holds the frame plus EB_IMAGE_DST_SLACK bytes
 * (a decoder may write a little past the end), else the decoder's own `rgb`.
 */
struct eb_image_decoder {
    int64_t max_pixels; /* images with more pixels are refused; 0 = EB_SOURCE__MAX_PIXELS */
    uint8_t *dst;
    size_t dst_cap;
    uint8_t *rgb; /* owned: RGB8 when dst is too small */
    size_t rgb_cap;
    uint16_t *u16; /* owned: 16-bit gray samples before AGC */
    size_t u16_cap;
    void *rows; /* owned: libpng row pointers */
    size_t rows_cap;
    uint32_t *agc_hist; /* owned: 65536 counts, allocated on the first 16-bit image */
};

#define EB_IMAGE_DST_SLACK 64

/** One decoded image. `rgb` (width * 3 bytes per row) is borrowed from the decoder or its dst. */
struct eb_image {
    uint8_t *rgb;
    int width, height;
    int bits;     /* bits per sample of the file: 8, or 16 for 16-bit gray PNG */
    int channels; /* of the file: 1 (gray, or an 8-bit BMP with a gray palette) or 3 */
};

/** The format named by the first bytes of `data` (JPEG FF D8 FF, the PNG signature, BMP "BM"). */
enum eb_image_format eb_image_format_of(const uint8_t *data, size_t size);

/**
 * Decodes the `size` bytes at `data` (borrowed) as `format` into *img_out (written only on
 * EB_OK). A file that is malformed, truncated, of an unsupported kind (CMYK JPEG, compressed
 * BMP...) or larger than EB_SOURCE__MAX_SIDE / max_pixels is EB_ERR_FORMAT with the
 * reason in `why` (EB_IMAGE_WHY_MAX bytes) and nothing in `diag`; EB_ERR_NOMEM goes to `diag`.
 */
EB_NODISCARD enum eb_status eb_image_decode(struct eb_image_decoder *dec,
                                            enum eb_image_format format, const uint8_t *data,
                                            size_t size, struct eb_image *img_out, char *why,
                                            struct eb_diag *diag);

/**
 * AGC (1st..99th percentile) of n 16-bit samples into `rgb` (capacity >= 3n) as replicated RGB,
 * with the histogram `*hist` (65536 counts; allocated on first use, owned by the caller who
 * frees it). EB_ERR_NOMEM when it cannot be had.
 */
EB_NODISCARD enum eb_status eb_image_agc_to_rgb(uint32_t **hist, const uint16_t *in, size_t n,
                                                uint8_t *rgb, struct eb_diag *diag);

/** Frees the decoder's own buffers (not dst). Accepts NULL; leaves it zeroed. */
void eb_image_decoder_fini(struct eb_image_decoder *dec);

#endif
