/*
 * Video files and V4L2 cameras through FFmpeg: demux (libavformat; cameras through
 * libavdevice's "video4linux2" input), decode (libavcodec), convert to packed RGB24
 * (libswscale, one cached context per source). A packet or frame that fails to decode is
 * skipped, counted and logged. Single-channel frames deeper than 8 bit (radiometric thermal
 * video) are converted to 16-bit gray and mapped to 8 bit by the AGC.
 *
 * Every FFmpeg object belongs to one source, so two sources can run in two threads. Built
 * without FFmpeg (-DEB_FFMPEG=OFF), opening one fails with a line that says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/pipeline/source.h"

#if EB_HAVE_FFMPEG
#include <libavcodec/avcodec.h>
#include <libavdevice/avdevice.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "eb/clock.h"
#include "harness/pipeline/source_internal.h"

/* Give up after this many consecutive undecodable packets/frames: the stream is garbage. */
#define MAX_CONSECUTIVE_ERRORS 1000
/* A camera that answers EAGAIN for this long is treated as stalled. */
#define CAMERA_STALL_NS 5000000000ull

struct video {
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVPacket *pkt;
    AVFrame *frame;
    struct SwsContext *sws;
    const struct SwsContext *cs_for; /* the context the colorspace below was set on */
    int cs, cs_full;
    int stream;
    int is_camera;
    int eof_sent; /* the flush packet went to the decoder */
    /* While a camera opens: FFmpeg gives up (through the interrupt callback) at this time of
     * the monotonic clock; 0 = no deadline. */
    uint64_t open_deadline_ns;
    int64_t nb_frames;
    uint8_t *rgb;
    size_t rgb_cap;
    uint16_t *u16;
    size_t u16_cap;
    char what[EB_SOURCE_PATH_MAX + 32]; /* "video X" or "camera=N (/dev/videoN)" for messages */
};

static void video_close(struct eb_source *src)
{
    struct video *v = src->impl;
    if (v == NULL)
        return;
    sws_freeContext(v->sws);
    av_frame_free(&v->frame);
    av_packet_free(&v->pkt);
    avcodec_free_context(&v->dec);
    avformat_close_input(&v->fmt);
    free(v->rgb);
    free(v->u16);
    free(v);
    src->impl = NULL;
}

static int stop_set(const struct eb_source *src)
{
    return src->opts.stop != NULL && atomic_load_explicit(src->opts.stop, memory_order_relaxed);
}

/* FFmpeg's interrupt callback: a blocking call inside FFmpeg (opening, probing the stream)
 * returns AVERROR_EXIT once the stop flag is set or a camera's open deadline has passed. */
static int ffmpeg_interrupt(void *opaque)
{
    const struct eb_source *src = opaque;
    const struct video *v = src->impl;
    return stop_set(src) || (v->open_deadline_ns != 0 && eb_clock_ns() > v->open_deadline_ns);
}

static enum eb_status video_open(struct eb_source *src, struct eb_diag *diag)
{
    const struct eb_source_spec *spec = &src->spec;
    struct video *v = calloc(1, sizeof(*v));
    if (v == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to open %s: out of memory; free memory",
                            spec->path);
    src->impl = v;
    v->is_camera = spec->kind == EB_SOURCE_CAMERA;
    if (v->is_camera && spec->camera_index >= 0)
        snprintf(v->what, sizeof(v->what), "camera=%d (%s)", spec->camera_index, spec->path);
    else
        snprintf(v->what, sizeof(v->what), "%s %s", v->is_camera ? "camera" : "video", spec->path);

    /* Check existence first: a clear message, and no wait inside a device probe. */
    struct stat sb;
    if (stat(spec->path, &sb) != 0) {
        int err = errno;
        if (v->is_camera)
            return eb_diag_fail(diag, EB_ERR_IO,
                                "failed to open %s: %s; connect the camera or pick another index "
                                "(ls /dev/video*)",
                                v->what, err == ENOENT ? "no such device" : strerror(err));
        return eb_diag_fail(diag, EB_ERR_IO, "failed to open %s: %s; check the path", v->what,
                            err == ENOENT ? "no such file or directory" : strerror(err));
    }
    if (!v->is_camera && S_ISDIR(sb.st_mode))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to open %s: it is a directory; give image_dir=%s instead",
                            v->what, spec->path);

    const AVInputFormat *ifmt = NULL;
    if (v->is_camera) {
        avdevice_register_all(); /* idempotent */
        ifmt = av_find_input_format("video4linux2");
        if (ifmt == NULL)
            return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                                "failed to open %s: this FFmpeg has no video4linux2 input; "
                                "install an FFmpeg built with libavdevice v4l2 support",
                                v->what);
    }
    v->fmt = avformat_alloc_context();
    if (v->fmt == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to open %s: out of memory; free memory",
                            v->what);
    v->fmt->interrupt_callback.callback = ffmpeg_interrupt;
    v->fmt->interrupt_callback.opaque = src;
    /* A camera is read without blocking (video_next waits in slices and sees the stop flag):
     * a blocking read of a camera that sends nothing would never return, signals or not. */
    if (v->is_camera) {
        v->fmt->flags |= AVFMT_FLAG_NONBLOCK;
        v->open_deadline_ns = eb_clock_ns() + CAMERA_STALL_NS;
    }
    int ret = avformat_open_input(&v->fmt, spec->path, ifmt, NULL); /* frees fmt on failure */
    if (ret >= 0)
        ret = avformat_find_stream_info(v->fmt, NULL);
    v->open_deadline_ns = 0;
    if (ret == AVERROR_EXIT && stop_set(src))
        return eb_diag_fail(diag, EB_ERR_CANCELLED, "stopped while opening %s", v->what);
    if (ret == AVERROR_EXIT && v->is_camera)
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to open %s: no frame for 5 s; check the device", v->what);
    if (ret < 0 && v->fmt == NULL)
        return eb_diag_fail(diag, v->is_camera ? EB_ERR_IO : EB_ERR_FORMAT,
                            "failed to open %s: %s; %s", v->what, av_err2str(ret),
                            v->is_camera ? "check the device and its permissions"
                                         : "give a video file FFmpeg can read");
    if (ret < 0)
        return eb_diag_fail(diag, EB_ERR_FORMAT, "failed to open %s: %s; give a readable video",
                            v->what, av_err2str(ret));
    const AVCodec *codec = NULL;
    ret = av_find_best_stream(v->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (ret < 0)
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to open %s: %s; give a file with a "
                            "video stream FFmpeg can decode",
                            v->what,
                            ret == AVERROR_STREAM_NOT_FOUND    ? "no video stream"
                            : ret == AVERROR_DECODER_NOT_FOUND ? "no decoder for its video stream"
                                                               : av_err2str(ret));
    v->stream = ret;
    AVStream *st = v->fmt->streams[v->stream];
    v->nb_frames = st->nb_frames > 0 ? st->nb_frames : -1;
    v->dec = avcodec_alloc_context3(codec);
    v->pkt = av_packet_alloc();
    v->frame = av_frame_alloc();
    if (v->dec == NULL || v->pkt == NULL || v->frame == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to open %s: out of memory; free memory",
                            v->what);
    ret = avcodec_parameters_to_context(v->dec, st->codecpar);
    if (ret >= 0)
        ret = avcodec_open2(v->dec, codec, NULL);
    if (ret < 0)
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to open the %s decoder for %s: %s; give a video FFmpeg can "
                            "decode",
                            codec->name, v->what, av_err2str(ret));
    return EB_OK;
}

/* Converts v->frame into packed RGB. EB_ERR_FORMAT for a frame that cannot be converted. */
static enum eb_status convert(struct eb_source *src, struct video *v, struct eb_frame *out,
                              char *why, size_t why_size, struct eb_diag *diag)
{
    const AVFrame *fr = v->frame;
    int w = fr->width, h = fr->height;
    if (w <= 0 || h <= 0 || w > EB_SOURCE__MAX_SIDE || h > EB_SOURCE__MAX_SIDE ||
        (int64_t)w * h > EB_SOURCE__MAX_PIXELS) {
        snprintf(why, why_size, "frame size %dx%d is out of range", w, h);
        return EB_ERR_FORMAT;
    }
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get((enum AVPixelFormat)fr->format);
    if (desc == NULL) {
        snprintf(why, why_size, "unknown pixel format %d", fr->format);
        return EB_ERR_FORMAT;
    }
    int gray = desc->nb_components <= 2 && !(desc->flags & AV_PIX_FMT_FLAG_PAL) &&
               !(desc->flags & AV_PIX_FMT_FLAG_RGB);
    int deep_gray = gray && desc->comp[0].depth > 8;
    enum AVPixelFormat dst_fmt = deep_gray ? AV_PIX_FMT_GRAY16 : AV_PIX_FMT_RGB24;
    size_t px = (size_t)w * (size_t)h;
    enum eb_status st =
        eb_source__reserve((void **)&v->rgb, &v->rgb_cap, px * 3, "a video frame buffer", diag);
    if (st == EB_OK && deep_gray)
        st = eb_source__reserve((void **)&v->u16, &v->u16_cap, px * 2, "a 16-bit frame buffer",
                                diag);
    if (st != EB_OK)
        return st;
    /* Reused while size and format stay the same; recreated otherwise. */
    v->sws = sws_getCachedContext(v->sws, w, h, (enum AVPixelFormat)fr->format, w, h, dst_fmt,
                                  SWS_BILINEAR, NULL, NULL, NULL);
    if (v->sws == NULL) {
        snprintf(why, why_size, "cannot convert pixel format %s to RGB", desc->name);
        return EB_ERR_FORMAT;
    }
    if (!(desc->flags & AV_PIX_FMT_FLAG_RGB) && !gray) {
        /* YUV: honour the stream's matrix (BT.709 for HD when unspecified) and range; the
           tables are rebuilt only when the context or these settings change. */
        int cs = fr->colorspace != AVCOL_SPC_UNSPECIFIED ? (int)fr->colorspace
                 : h >= 720                              ? SWS_CS_ITU709
                                                         : SWS_CS_DEFAULT;
        int full = fr->color_range == AVCOL_RANGE_JPEG || strncmp(desc->name, "yuvj", 4) == 0;
        if (v->sws != v->cs_for || cs != v->cs || full != v->cs_full) {
            (void)sws_setColorspaceDetails(v->sws, sws_getCoefficients(cs), full,
                                           sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16,
                                           1 << 16);
            v->cs_for = v->sws;
            v->cs = cs;
            v->cs_full = full;
        }
    }
    uint8_t *rgb = eb_source__rgb_out(src, v->rgb, px * 3);
    uint8_t *dst[4] = {deep_gray ? (uint8_t *)v->u16 : rgb, NULL, NULL, NULL};
    int dst_stride[4] = {deep_gray ? w * 2 : w * 3, 0, 0, 0};
    int ret =
        sws_scale(v->sws, (const uint8_t *const *)fr->data, fr->linesize, 0, h, dst, dst_stride);
    if (ret <= 0) {
        snprintf(why, why_size, "swscale failed on a %s frame", desc->name);
        return EB_ERR_FORMAT;
    }
    if (deep_gray) {
        st = eb_source__agc_to_rgb(src, v->u16, px, rgb, diag);
        if (st != EB_OK)
            return st;
    }
    out->rgb = rgb;
    out->width = w;
    out->height = h;
    out->stride = (size_t)w * 3;
    out->source_bits = desc->comp[0].depth > 8 ? 16 : 8;
    out->source_channels = gray ? 1 : 3;
    out->name = NULL;
    return EB_OK;
}

static enum eb_status video_next(struct eb_source *src, struct eb_frame *frame_out,
                                 struct eb_diag *diag)
{
    struct video *v = src->impl;
    int errors = 0;
    uint64_t stall_since = 0;
    char why[160];
    for (;;) {
        int ret = avcodec_receive_frame(v->dec, v->frame);
        if (ret == 0) {
            if ((v->frame->flags & AV_FRAME_FLAG_CORRUPT) || v->frame->decode_error_flags != 0) {
                av_frame_unref(v->frame);
                src->skipped++;
                eb_log_msg(src->opts.log, EB_LOG_WARN, "skipping a corrupt frame of %s", v->what);
                if (++errors > MAX_CONSECUTIVE_ERRORS)
                    goto too_many;
                continue;
            }
            enum eb_status st = convert(src, v, frame_out, why, sizeof(why), diag);
            av_frame_unref(v->frame);
            if (st == EB_ERR_FORMAT) {
                src->skipped++;
                eb_log_msg(src->opts.log, EB_LOG_WARN, "skipping a frame of %s: %s", v->what, why);
                if (++errors > MAX_CONSECUTIVE_ERRORS)
                    goto too_many;
                continue;
            }
            return st;
        }
        if (ret == AVERROR_EOF)
            return EB_ERR_END;
        if (ret != AVERROR(EAGAIN)) {
            src->skipped++;
            eb_log_msg(src->opts.log, EB_LOG_WARN, "skipping an undecodable frame of %s: %s",
                       v->what, av_err2str(ret));
            if (++errors > MAX_CONSECUTIVE_ERRORS)
                goto too_many;
            continue;
        }
        if (v->eof_sent)
            return EB_ERR_END; /* drained; a decoder should have said EOF */
        if (stop_set(src))
            return eb_diag_fail(diag, EB_ERR_CANCELLED, "stopped while reading %s", v->what);
        ret = av_read_frame(v->fmt, v->pkt);
        if (ret == AVERROR(EAGAIN)) {
            uint64_t now = eb_clock_ns();
            if (stall_since == 0)
                stall_since = now;
            else if (now - stall_since > CAMERA_STALL_NS)
                return eb_diag_fail(diag, EB_ERR_IO,
                                    "failed to read %s: no frame for 5 s; check the device",
                                    v->what);
            eb_clock_sleep_ns(1000000);
            continue;
        }
        stall_since = 0;
        if (ret == AVERROR_EXIT && stop_set(src)) /* the interrupt callback saw the stop */
            return eb_diag_fail(diag, EB_ERR_CANCELLED, "stopped while reading %s", v->what);
        if (ret == AVERROR_EOF) {
            v->eof_sent = 1;
            (void)avcodec_send_packet(v->dec, NULL); /* drain the decoder */
            continue;
        }
        if (ret < 0)
            return eb_diag_fail(diag, EB_ERR_IO, "failed to read %s: %s; check the file or device",
                                v->what, av_err2str(ret));
        if (v->pkt->stream_index != v->stream) {
            av_packet_unref(v->pkt);
            continue;
        }
        ret = avcodec_send_packet(v->dec, v->pkt);
        av_packet_unref(v->pkt);
        if (ret < 0 && ret != AVERROR(EAGAIN)) {
            src->skipped++;
            eb_log_msg(src->opts.log, EB_LOG_WARN, "skipping an undecodable packet of %s: %s",
                       v->what, av_err2str(ret));
            if (++errors > MAX_CONSECUTIVE_ERRORS)
                goto too_many;
        }
    }
too_many:
    return eb_diag_fail(diag, EB_ERR_FORMAT,
                        "failed to decode %s: %d frames in a row could not be decoded; check the "
                        "file",
                        v->what, MAX_CONSECUTIVE_ERRORS);
}

static enum eb_status video_rewind(struct eb_source *src, struct eb_diag *diag)
{
    struct video *v = src->impl;
    if (v->is_camera)
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "failed to rewind %s: a camera cannot be rewound; use a video file or "
                            "image_dir for repeated passes",
                            v->what);
    AVStream *st = v->fmt->streams[v->stream];
    int64_t ts = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
    int ret = av_seek_frame(v->fmt, v->stream, ts, AVSEEK_FLAG_BACKWARD);
    if (ret < 0)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to rewind %s: %s; re-open the source instead",
                            v->what, av_err2str(ret));
    avcodec_flush_buffers(v->dec);
    v->eof_sent = 0;
    return EB_OK;
}

static int64_t video_count(const struct eb_source *src)
{
    const struct video *v = src->impl;
    return v->is_camera ? -1 : v->nb_frames;
}

const struct eb_source_ops eb_source__video_ops = {
    .name = "video",
    .open = video_open,
    .next = video_next,
    .rewind = video_rewind,
    .count = video_count,
    .close = video_close,
};

void eb_source_video_log_level(int verbose)
{
    av_log_set_level(verbose ? AV_LOG_WARNING : AV_LOG_FATAL);
}

#else /* built without FFmpeg */

#include "harness/pipeline/source_internal.h"

static enum eb_status none_open(struct eb_source *src, struct eb_diag *diag)
{
    return eb_diag_fail(
        diag, EB_ERR_UNSUPPORTED,
        "failed to open source %s: this edgebench was built without FFmpeg "
        "(-DEB_FFMPEG=OFF); give image_dir=PATH or synthetic=WxH, or rebuild with "
        "FFmpeg's libraries (Debian: libavformat-dev libavcodec-dev libavdevice-dev "
        "libswscale-dev)",
        src->spec.path[0] != '\0' ? src->spec.path : "camera");
}

static enum eb_status none_next(struct eb_source *src, struct eb_frame *frame_out,
                                struct eb_diag *diag)
{
    (void)frame_out;
    return none_open(src, diag);
}

static enum eb_status none_rewind(struct eb_source *src, struct eb_diag *diag)
{
    return none_open(src, diag);
}

static int64_t none_count(const struct eb_source *src)
{
    (void)src;
    return -1;
}

static void none_close(struct eb_source *src)
{
    (void)src;
}

const struct eb_source_ops eb_source__video_ops = {
    .name = "video",
    .open = none_open,
    .next = none_next,
    .rewind = none_rewind,
    .count = none_count,
    .close = none_close,
};

void eb_source_video_log_level(int verbose)
{
    (void)verbose;
}

#endif
