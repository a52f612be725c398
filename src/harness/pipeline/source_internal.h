/*
 * Internals shared by source.c and the per-kind files (source_imgdir.c, source_video.c,
 * source_synth.c). Not for other components: they use source.h only.
 *
 * source.c owns the common part (spec, options, frame limit, counters, AGC scratch) and
 * dispatches through one `struct eb_source_ops` per kind. A kind keeps its own state behind
 * `src->impl`, allocated by its `open` and freed by its `close`.
 */
#ifndef EB_SOURCE_INTERNAL_H
#define EB_SOURCE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "harness/pipeline/source.h"

/* Largest frame accepted from any decoder: 8192 x 8192 pixels (192 MiB of RGB). */
#define EB_SOURCE__MAX_SIDE   16384
#define EB_SOURCE__MAX_PIXELS ((int64_t)8192 * 8192)

struct eb_source_ops {
    const char *name;
    /* Required. Sets src->impl (may leave it NULL on failure; close is called anyway). */
    enum eb_status (*open)(struct eb_source *src, struct eb_diag *diag);
    /* Required. Fills rgb, width, height, stride, source_bits, source_channels and name of
       `frame_out`; index is set by source.c. Counts undecodable frames in src->skipped.
       EB_ERR_END at the end of the underlying source. */
    enum eb_status (*next)(struct eb_source *src, struct eb_frame *frame_out, struct eb_diag *diag);
    /* Required. Restarts at the first frame; EB_ERR_UNSUPPORTED where impossible. */
    enum eb_status (*rewind)(struct eb_source *src, struct eb_diag *diag);
    /* Required. Frames of the underlying source, ignoring max_frames; -1 when unknown. */
    int64_t (*count)(const struct eb_source *src);
    /* Required. Frees src->impl; must accept NULL and a partially opened impl. */
    void (*close)(struct eb_source *src);
};

struct eb_source {
    const struct eb_source_ops *ops;
    struct eb_source_spec spec;
    struct eb_source_options opts; /* copy; opts.log stays borrowed */
    int64_t max_frames;            /* effective limit; 0 = none */
    int64_t delivered;             /* frames delivered since open/rewind */
    int64_t skipped;               /* undecodable frames since open/rewind */
    uint32_t *agc_hist;            /* 65536 entries, allocated on first AGC use */
    uint8_t *out;                  /* eb_source_set_output's buffer (borrowed), NULL = none */
    size_t out_cap;
    struct eb_source_stream_stats stream; /* network streams: kept by source_video.c */
    void *impl;                           /* owned by ops */
};

extern const struct eb_source_ops eb_source__imgdir_ops;
extern const struct eb_source_ops eb_source__video_ops; /* video files and cameras */
extern const struct eb_source_ops eb_source__synth_ops;

/**
 * Grows `*buf` (capacity `*cap` bytes) to at least `need` bytes; keeps it when large enough.
 * The contents are not preserved. Returns EB_ERR_NOMEM with a message naming `what`.
 */
EB_NODISCARD enum eb_status eb_source__reserve(void **buf, size_t *cap, size_t need,
                                               const char *what, struct eb_diag *diag);

/**
 * Where a source writes the RGB of a frame of `need` bytes: the caller's buffer
 * (eb_source_set_output) when it holds need + 64 bytes (decoders may write a little past the
 * end), else `own` (already reserved for need, or NULL for a source that then hands out a
 * buffer of its own).
 */
uint8_t *eb_source__rgb_out(const struct eb_source *src, uint8_t *own, size_t need);

/** Expands n gray bytes at the start of `buf` (capacity >= 3n) to n RGB pixels in place. */
void eb_source__gray_to_rgb_inplace(uint8_t *buf, size_t n);

/**
 * AGC (1st..99th percentile) of n 16-bit samples into `rgb` (capacity >= 3n) as replicated RGB.
 * Uses src->agc_hist (allocated on first use). EB_ERR_NOMEM when the scratch cannot be had.
 */
EB_NODISCARD enum eb_status eb_source__agc_to_rgb(struct eb_source *src, const uint16_t *in,
                                                  size_t n, uint8_t *rgb, struct eb_diag *diag);

/** True when `name` ends in .jpg .jpeg .png or .bmp (any case). */
int eb_source__is_image_name(const char *name);

#endif
