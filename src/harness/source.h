/*
 * Frame sources behind one iterator: image directories, video files, V4L2 cameras (FFmpeg),
 * and deterministic synthetic scenes. Every frame is delivered as packed RGB8: single-channel
 * 8-bit frames are replicated to three channels; 16-bit single-channel (radiometric thermal)
 * frames go through an automatic gain control (percentile stretch) to 8 bit first.
 *
 *     struct eb_source_spec spec;
 *     eb_source_spec_parse("image_dir=data/imgs", &spec, &diag);
 *     eb_source_open(&spec, &opts, &src, &diag);
 *     while ((st = eb_source_next(src, &frame, &diag)) == EB_OK) { ... }
 *     // st == EB_ERR_END at the end; other statuses are fatal for this source
 *     eb_source_destroy(src);
 */
#ifndef EB_SOURCE_H
#define EB_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "eb/diag.h"
#include "eb/log.h"

#define EB_SOURCE_PATH_MAX 4096

enum eb_source_kind {
    EB_SOURCE_IMAGE_DIR = 0,
    EB_SOURCE_VIDEO,
    EB_SOURCE_CAMERA,
    EB_SOURCE_SYNTHETIC,
};

struct eb_source_spec {
    enum eb_source_kind kind;
    char path[EB_SOURCE_PATH_MAX]; /* IMAGE_DIR, VIDEO: the path; CAMERA: /dev/videoN */
    int camera_index;
    int synth_w, synth_h;          /* SYNTHETIC */
    double synth_fps;              /* SYNTHETIC: 0 = as fast as possible */
};

/** "image_dir", "video", "camera", "synthetic". */
const char *eb_source_kind_name(enum eb_source_kind k);

/**
 * Parses `image_dir=PATH`, `video=PATH`, `camera=N`, `synthetic=WxH[@FPS]`, or a bare path
 * (a directory → image_dir, a file → video, /dev/videoN → camera). Checks syntax and ranges
 * only (a synthetic size of 16..8192 per side, FPS 0..1000); existence is checked by open.
 */
EB_NODISCARD enum eb_status eb_source_spec_parse(const char *text, struct eb_source_spec *spec_out,
                                                 struct eb_diag *diag);
/** Writes the canonical SPEC text ("synthetic=640x480@30") into buf. */
void eb_source_spec_format(const struct eb_source_spec *spec, char *buf, size_t buf_size);

enum eb_synth_style {
    EB_SYNTH_RGB = 0,  /* street-like scene with moving rectangles */
    EB_SYNTH_THERMAL,  /* warm blobs on a cool background (rendered as 16-bit, then AGC) */
};

struct eb_source_options {
    int64_t max_frames;            /* stop after this many frames; 0 = whole source
                                      (synthetic and camera: required > 0) */
    enum eb_synth_style synth_style;
    uint32_t seed;                 /* synthetic scenes */
    const struct eb_log *log;      /* may be NULL; borrowed */
};

struct eb_frame {
    const uint8_t *rgb;   /* packed RGB8, owned by the source, valid until the next call */
    int width, height;
    size_t stride;        /* bytes per row */
    int64_t index;        /* 0-based index of the delivered frame */
    int source_bits;      /* 8 or 16: bit depth before conversion */
    int source_channels;  /* 1 or 3 */
    const char *name;     /* file name for image_dir, NULL otherwise; owned by the source */
};

struct eb_source;

/**
 * Opens a source. Fails with one line naming the thing and what to do: a missing path, a
 * directory without images, a video FFmpeg cannot open, a camera that is absent.
 * Caller owns `*src_out` (eb_source_destroy).
 */
EB_NODISCARD enum eb_status eb_source_open(const struct eb_source_spec *spec,
                                           const struct eb_source_options *opts,
                                           struct eb_source **src_out, struct eb_diag *diag);

/**
 * Delivers the next frame. A frame that cannot be decoded is skipped and counted (warning in
 * the log) and the next one is tried. EB_ERR_END when the source (or max_frames) is exhausted.
 * Reuses its buffers; grows them only for a frame larger than any before.
 */
EB_NODISCARD enum eb_status eb_source_next(struct eb_source *src, struct eb_frame *frame_out,
                                           struct eb_diag *diag);

/** Restarts from the first frame (for the solo baseline). EB_ERR_UNSUPPORTED for cameras. */
EB_NODISCARD enum eb_status eb_source_rewind(struct eb_source *src, struct eb_diag *diag);

/** Frames skipped because they could not be decoded. */
int64_t eb_source_skipped(const struct eb_source *src);

/** Number of frames the source will deliver, or -1 when unknown (camera, some videos). */
int64_t eb_source_count(const struct eb_source *src);

void eb_source_destroy(struct eb_source *src);

/**
 * Automatic gain control: maps 16-bit samples to 8 bit by a linear stretch between the
 * `lo_pct` and `hi_pct` percentiles (1 and 99 by default), clamped. `hist` is caller scratch of
 * 65536 uint32 entries.
 */
void eb_agc_u16_to_u8(const uint16_t *src, size_t n, double lo_pct, double hi_pct, uint32_t *hist,
                      uint8_t *dst);

#endif
