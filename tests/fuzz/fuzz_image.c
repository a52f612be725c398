/*
 * libFuzzer targets on the image decoders: eb_image_decode (src/harness/pipeline/image_decode.c,
 * the code the image_dir source decodes every file with) on one format, chosen at compile time
 * by FUZZ_IMAGE_FORMAT: fuzz_png (8- and 16-bit, the 16-bit gray path through AGC), fuzz_jpeg,
 * fuzz_bmp. Images are capped at 512 x 512 pixels so that every execution stays fast; a decoded
 * image is read back whole (ASan checks it lies inside its buffer).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_support.h"
#include "harness/pipeline/image_decode.h"

#ifndef FUZZ_IMAGE_FORMAT
#error "compile with -DFUZZ_IMAGE_FORMAT=EB_IMAGE_FORMAT_PNG (or _JPEG, _BMP)"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct eb_image_decoder dec = {.max_pixels = 512 * 512};
    struct eb_image img;
    struct eb_diag d = {0};
    char why[EB_IMAGE_WHY_MAX];

    if (size > EB_FUZZ_MAX_INPUT)
        size = EB_FUZZ_MAX_INPUT;
    if (eb_image_decode(&dec, FUZZ_IMAGE_FORMAT, data, size, &img, why, &d) == EB_OK) {
        unsigned sum = 0;
        size_t n = (size_t)img.width * (size_t)img.height * 3;
        if (img.width <= 0 || img.height <= 0 || img.rgb == NULL ||
            (img.channels != 1 && img.channels != 3) || (img.bits != 8 && img.bits != 16)) {
            fprintf(stderr, "fuzz_image: decoded a %dx%d image with %d channels of %d bits\n",
                    img.width, img.height, img.channels, img.bits);
            abort();
        }
        for (size_t i = 0; i < n; i++)
            sum += img.rgb[i];
        (void)sum;
    }
    eb_image_decoder_fini(&dec);
    return 0;
}
