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

#include <stdatomic.h>
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
    char path[EB_SOURCE_PATH_MAX]; /* IMAGE_DIR, VIDEO: the path or URL; CAMERA: /dev/videoN */
    int camera_index;
    int network; /* VIDEO: path is a network URL (rtsp://, rtsps://, http://, https://, udp://) */
    int synth_w, synth_h; /* SYNTHETIC */
    double synth_fps;     /* SYNTHETIC: 0 = as fast as possible */
};

/*
 * The frame rates a paced stream accepts (synthetic=WxH@FPS, run's --fps, --rgb_fps,
 * --thermal_fps): 0 (unpaced, as fast as the slot runs) or EB_SOURCE_FPS_MIN..EB_SOURCE_FPS_MAX.
 * The floor is a frame every 10 s: slower, a run of the default minimum length (200 frames)
 * takes over half an hour per slot, which is no camera stream's rate and, as a typo (0.001 for
 * 1000), would look like a hang.
 */
#define EB_SOURCE_FPS_MIN  0.1
#define EB_SOURCE_FPS_MAX  1000
#define EB_SOURCE__STR_(x) #x
#define EB_SOURCE__STR(x)  EB_SOURCE__STR_(x)
#define EB_SOURCE_FPS_RANGE                                                                        \
    "0 (unpaced) or " EB_SOURCE__STR(EB_SOURCE_FPS_MIN) ".." EB_SOURCE__STR(EB_SOURCE_FPS_MAX)

/** True when `fps` is 0 or within EB_SOURCE_FPS_MIN..EB_SOURCE_FPS_MAX (NaN is not). */
int eb_source_fps_ok(double fps);

/** True for a source that is live: a camera, a network stream or a video=PATH that is a named
 *  pipe (FIFO; its writer must have it open before the source opens) — no rewind, no end of
 *  its own but the writer's, a read timeout, and for a network stream reconnection. */
int eb_source_spec_is_live(const struct eb_source_spec *spec);

/*
 * Live sources (cameras, network streams): a read that waits longer than the source timeout
 * for data fails (EB_ERR_IO naming the source and the wait); the same bound holds for opening
 * one. A network stream that is lost (end of stream, an error, or no packet within the
 * timeout) is opened again up to `reconnect` times, waiting before attempt k
 * EB_SOURCE_BACKOFF_FIRST_S x 2^(k-1) seconds, at most EB_SOURCE_BACKOFF_MAX_S (3 attempts:
 * 0.5 + 1 + 2 s of waiting, each attempt bounded by the timeout); the count starts again after
 * a reconnection that delivered a frame.
 */
#define EB_SOURCE_TIMEOUT_DEFAULT_S 10.0
#define EB_SOURCE_RECONNECT_DEFAULT 3
#define EB_SOURCE_BACKOFF_FIRST_S   0.5
#define EB_SOURCE_BACKOFF_MAX_S     8.0

/** "image_dir", "video", "camera", "synthetic". */
const char *eb_source_kind_name(enum eb_source_kind k);

/**
 * Parses `image_dir=PATH`, `video=PATH` (or `video=URL`: rtsp://, rtsps://, http://, https://,
 * udp://, also bare), `camera=N` (0..63 → /dev/videoN; `camera=/dev/...` is
 * also accepted), `synthetic=WxH[@FPS]`, or a bare path (a directory → image_dir, a
 * .jpg/.jpeg/.png/.bmp file → a one-image image_dir, another regular file → video, a name
 * /dev/videoN or any character device → camera). Keyed forms are checked for syntax and ranges
 * only (a synthetic size of 16..8192 per side, FPS EB_SOURCE_FPS_RANGE); their existence is
 * checked by open. A bare path must exist (EB_ERR_IO otherwise) because its kind depends on
 * what it is. An unknown key is EB_ERR_INVALID_ARG naming it and the accepted forms.
 * Writes `*spec_out` only on EB_OK. Thread-safe.
 */
EB_NODISCARD enum eb_status eb_source_spec_parse(const char *text, struct eb_source_spec *spec_out,
                                                 struct eb_diag *diag);
/** Writes the canonical SPEC text ("synthetic=640x480@30") into buf (truncated to buf_size,
 *  always NUL-terminated when buf_size > 0). It parses back to the same spec. */
void eb_source_spec_format(const struct eb_source_spec *spec, char *buf, size_t buf_size);

enum eb_synth_style {
    EB_SYNTH_RGB = 0, /* street-like scene with moving rectangles */
    EB_SYNTH_THERMAL, /* warm blobs on a cool background (rendered as 16-bit, then AGC) */
};

/*
 * A synthetic source renders its frames when it opens, before any timing, into a ring of
 * EB_SOURCE_SYNTH_RING_FRAMES frames, fewer where they would take more than
 * EB_SOURCE_SYNTH_RING_BYTES (at least 2, however large the frames; never more than max_frames),
 * and delivers frame k as ring[k mod n]: reading a frame costs a copy into the caller's buffer
 * (eb_source_set_output) or nothing, not the drawing. 1280x720: 32 frames, 84 MiB; 1920x1080:
 * 16 frames, 95 MiB; 3840x2160: 4 frames.
 */
#define EB_SOURCE_SYNTH_RING_FRAMES 32
#define EB_SOURCE_SYNTH_RING_BYTES  ((size_t)96 << 20)

struct eb_source_options {
    int64_t max_frames; /* stop after this many frames; 0 = whole source
                                      (synthetic and camera are endless: 0 means 300) */
    enum eb_synth_style synth_style;
    uint32_t seed; /* synthetic scenes */
    /* Synthetic: frames in the ring rendered at open; 0 = EB_SOURCE_SYNTH_RING_FRAMES; either
       way capped by EB_SOURCE_SYNTH_RING_BYTES (at least 2) and by max_frames. Negative = no
       ring: every frame is drawn when it is read (what drawing a frame costs, for bench/). */
    int synth_ring_frames;
    const struct eb_log *log; /* may be NULL; borrowed */
    /* Non-zero to stop: every wait of the source (a paced synthetic frame, a camera without a
       frame yet) looks at it at least every EB_CLOCK_SLEEP_SLICE_NS and eb_source_next then
       returns EB_ERR_CANCELLED. May be NULL (never stopped); borrowed, must outlive the
       source. */
    atomic_int *stop;
    /* image_dir only: read these n_files image files, in this order, instead of listing
       spec.path (a dataset's images; spec.path then only names the source and must exist).
       Borrowed for eb_source_open, which copies the paths. NULL = list the folder. */
    const char *const *files;
    size_t n_files;
    /* Live sources: seconds a read (or the open) may wait for data; 0 =
       EB_SOURCE_TIMEOUT_DEFAULT_S. */
    double timeout_s;
    /* Network streams: reconnection attempts after a lost stream (0 = none); negative =
       EB_SOURCE_RECONNECT_DEFAULT. */
    int reconnect;
};

/*
 * What reconnection cost a network stream (zeros for every other source). frames_lost is an
 * estimate from the stream's nominal frame rate (FFmpeg's guess from the stream: its average
 * rate, else its base rate; the rate the frames arrived at before the loss when the stream
 * states none) times the time between the last frame delivered before the loss and the first
 * one after the reconnection, less the one frame that interval spans anyway. The stream's own
 * timestamps are not used: a server that restarts starts them again.
 */
struct eb_source_stream_stats {
    int64_t reconnects;  /* reconnections that delivered a frame again */
    int64_t attempts;    /* reconnection attempts, failed ones included */
    int64_t frames_lost; /* estimated frames the outages cost (see above) */
    double outage_s;     /* seconds from the last frame before a loss to the first after */
};

struct eb_frame {
    const uint8_t *rgb; /* packed RGB8, owned by the source, valid until the next call */
    int width, height;
    size_t stride;       /* bytes per row */
    int64_t index;       /* 0-based index of the delivered frame */
    int source_bits;     /* 8 or 16: bit depth before conversion */
    int source_channels; /* 1 or 3 */
    const char *name;    /* file name (no folder) for image_dir, NULL otherwise; owned by the
                             source, valid until eb_source_destroy */
    int64_t file_index;  /* image_dir: the file's position in the sorted listing (or in
                            opts.files), so undecodable files skipped before it do not shift
                            it; -1 for the other kinds */
};

struct eb_source;

/**
 * Opens a source. Fails with one line naming the thing and what to do: a missing path
 * (EB_ERR_IO), a directory without images (EB_ERR_INVALID_ARG), a video FFmpeg cannot open or
 * without a video stream (EB_ERR_FORMAT), a camera that is absent (EB_ERR_IO, no waiting).
 * `spec` is copied; `opts` is copied and may be NULL (all defaults); `opts->log` is borrowed
 * and must outlive the source. Caller owns `*src_out` (eb_source_destroy).
 * Thread-safety: a source is used by one thread at a time; different sources share no mutable
 * state and may run in different threads.
 */
EB_NODISCARD enum eb_status eb_source_open(const struct eb_source_spec *spec,
                                           const struct eb_source_options *opts,
                                           struct eb_source **src_out, struct eb_diag *diag);

/**
 * Delivers the next frame. A frame that cannot be decoded is skipped and counted (warning in
 * the log) and the next one is tried. EB_ERR_END when the source (or max_frames) is exhausted,
 * also when every remaining frame was undecodable (check eb_source_skipped). Other statuses
 * (EB_ERR_NOMEM, EB_ERR_IO for a failing read, EB_ERR_FORMAT for a hopeless stream) are fatal
 * for this source. `frame_out->rgb` is owned by the source and valid until the next call.
 * Reuses its buffers; grows them only for a frame larger than any before. Synthetic sources
 * deliver frames rendered at open (see EB_SOURCE_SYNTH_RING_FRAMES); with no caller buffer
 * `frame_out->rgb` points into their ring. With FPS > 0 they sleep until the frame's due time
 * (monotonic clock, started at the first frame). EB_ERR_CANCELLED when `opts->stop` was set
 * while the source waited (a paced frame, a camera's next frame); the next call may go on.
 */
EB_NODISCARD enum eb_status eb_source_next(struct eb_source *src, struct eb_frame *frame_out,
                                           struct eb_diag *diag);

/**
 * From the next frame on, delivers frames whose RGB fits in `cap` bytes (3 x width x height + 64:
 * decoders may write a little past the end) in `buf` instead of the source's own buffer:
 * frame_out->rgb is then `buf` (rows packed), e.g. a GPU engine's page-locked frame buffer, so
 * that the frame is uploaded from where it was decoded. Larger frames still go to the source's
 * buffer. `buf` is borrowed: the caller keeps it valid while the source may write it and reads
 * a frame before asking for the next. NULL (or cap 0) goes back to the source's buffer.
 */
void eb_source_set_output(struct eb_source *src, uint8_t *buf, size_t cap);

/** Restarts from the first frame (for the solo baseline) and resets the delivered and skipped
 *  counters. EB_ERR_UNSUPPORTED for cameras. */
EB_NODISCARD enum eb_status eb_source_rewind(struct eb_source *src, struct eb_diag *diag);

/** Frames skipped because they could not be decoded (since open or the last rewind). */
int64_t eb_source_skipped(const struct eb_source *src);

/** Number of frames the source will deliver, or -1 when unknown (camera, some videos), capped
 *  by max_frames. For image_dir it counts the image files, so undecodable ones make the
 *  delivered number smaller. */
int64_t eb_source_count(const struct eb_source *src);

/**
 * The memory a synthetic source's ring takes (every frame it delivers lies inside it, rows
 * packed, unchanged until eb_source_destroy): 1 and `*base`, `*bytes`; 0 for a source without
 * a ring (any other kind, a synthetic source drawing at read time, NULL). A GPU backend may
 * page-lock it (eb_backend_pin_frames) and upload frames from where they are.
 */
int eb_source_frames_memory(const struct eb_source *src, uint8_t **base, size_t *bytes);

/** Frames in a synthetic source's ring (EB_SOURCE_SYNTH_RING_FRAMES); 0 for a synthetic source
 *  drawing at read time (synth_ring_frames < 0), for the other kinds and for NULL. */
int64_t eb_source_synth_ring_frames(const struct eb_source *src);

/** The file list of an image_dir source, fingerprinted (eb_source_file_list_hash). */
struct eb_source_file_list {
    uint64_t files;  /* image files listed */
    uint64_t bytes;  /* their sizes summed */
    char sha256[65]; /* 64 lowercase hex digits of the list's SHA-256 */
};

/**
 * Fingerprints the image files an image_dir source reads, without reading them: the folder's
 * images as the source lists them (regular files named .jpg/.jpeg/.png/.bmp, hidden ones left
 * out), or `files` (n_files paths, a dataset's images) when not NULL, each named by its path
 * relative to spec->path when it lies under that folder, or the one image file spec->path names
 * (by its base name). The SHA-256 is over, for each file in strcmp order of its name, the name's
 * bytes, a NUL byte, the file's size in bytes as decimal digits, and a newline byte. Writes
 * `*out` only on EB_OK; EB_ERR_INVALID_ARG for another kind of source or a folder without
 * images, EB_ERR_IO naming a file that cannot be stat'ed, EB_ERR_NOMEM. Thread-safe.
 */
EB_NODISCARD enum eb_status eb_source_file_list_hash(const struct eb_source_spec *spec,
                                                     const char *const *files, size_t n_files,
                                                     struct eb_source_file_list *out,
                                                     struct eb_diag *diag);

/** The reconnection counts since open (not reset by a rewind); all zero for NULL and for
 *  sources that are not network streams. */
void eb_source_stream_stats(const struct eb_source *src, struct eb_source_stream_stats *out);

/** Frees the source and everything it owns. Accepts NULL. */
void eb_source_destroy(struct eb_source *src);

/**
 * Automatic gain control: maps 16-bit samples to 8 bit by a linear stretch between the
 * `lo_pct` and `hi_pct` percentiles (1 and 99 by default), clamped. When both percentiles fall
 * on the same value (a flat image) that value maps to 128, lower ones to 0 and higher to 255.
 * `hist` is caller scratch of 65536 uint32 entries (overwritten). `src` (n samples) and `dst`
 * (n bytes) are caller-owned; nothing is kept. Does nothing when a pointer is NULL or n is 0.
 */
void eb_agc_u16_to_u8(const uint16_t *src, size_t n, double lo_pct, double hi_pct, uint32_t *hist,
                      uint8_t *dst);

/**
 * How much FFmpeg itself logs to stderr: warnings with `verbose`, else fatal errors only
 * (edgebench reports undecodable frames itself). Nothing when built without FFmpeg.
 */
void eb_source_video_log_level(int verbose);

#endif
