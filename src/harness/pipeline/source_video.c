/*
 * Video files, network streams (rtsp, http(s), udp: FFmpeg's network demuxers, with a read
 * timeout and reconnection, source.h) and V4L2 cameras through FFmpeg: demux (libavformat;
 * cameras through libavdevice's "video4linux2" input), decode (libavcodec), convert to packed RGB24
 * (libswscale, one cached context per source). A packet or frame that fails to decode is
 * skipped, counted and logged. Single-channel frames deeper than 8 bit (radiometric thermal
 * video) are converted to 16-bit gray and mapped to 8 bit by the AGC.
 *
 * Every FFmpeg object belongs to one source, so two sources can run in two threads. Built
 * without FFmpeg (-DEB_FFMPEG=OFF), opening one fails with a line that says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

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
    int network;         /* a network URL (rtsp, http(s), udp): reconnected when lost */
    int net_inited;      /* avformat_network_init was called (undone at close) */
    int fifo_fd;         /* a named pipe (live, read without blocking through "pipe:N"); -1 */
    int eof_sent;        /* the flush packet went to the decoder */
    uint64_t timeout_ns; /* live sources: the longest wait for data (--source_timeout_s) */
    int reconnect;       /* network: attempts after a loss (--reconnect) */
    /* While a live source opens or a network stream is read, FFmpeg gives up (through the
     * interrupt callback) at this time of the monotonic clock; 0 = no deadline. */
    uint64_t deadline_ns;
    /* Network: the frames delivered (for the measured rate), the first and the last one's
     * time, the nominal rate, the last delivered frame's time when the stream was lost (0 =
     * none pending) and the attempts made since that loss. A frame's time is when it came by
     * the stream's clock where its frames have timestamps (last_came_ns): its timestamp plus
     * the least (time read - timestamp) of this connection's frames (clock_off_ns, INT64_MAX
     * until the first), so that frames a busy pipeline read late from the socket's buffer do
     * not shorten an outage that followed them. */
    int64_t frames_seen;
    uint64_t first_frame_ns, last_frame_ns, lost_at_ns, last_came_ns;
    int64_t clock_off_ns;
    double rate;
    int attempts_run;
    int64_t nb_frames;
    uint8_t *rgb;
    size_t rgb_cap;
    uint16_t *u16;
    size_t u16_cap;
    char what[EB_SOURCE_PATH_MAX + 32]; /* "video X" or "camera=N (/dev/videoN)" for messages */
};

/* The demuxer and the decoder (what a reconnection makes again); the rest stays. */
static void close_input(struct video *v)
{
    avcodec_free_context(&v->dec);
    avformat_close_input(&v->fmt);
    v->eof_sent = 0;
    v->clock_off_ns = INT64_MAX; /* the next connection's timestamps start anywhere */
}

static void video_close(struct eb_source *src)
{
    struct video *v = src->impl;
    if (v == NULL)
        return;
    close_input(v);
    if (v->fifo_fd >= 0)
        close(v->fifo_fd); /* FFmpeg's pipe protocol leaves the descriptor open */
    sws_freeContext(v->sws);
    av_frame_free(&v->frame);
    av_packet_free(&v->pkt);
    if (v->net_inited)
        avformat_network_deinit();
    free(v->rgb);
    free(v->u16);
    free(v);
    src->impl = NULL;
}

static int stop_set(const struct eb_source *src)
{
    return src->opts.stop != NULL && atomic_load_explicit(src->opts.stop, memory_order_relaxed);
}

/* FFmpeg's interrupt callback: a blocking call inside FFmpeg (opening, probing the stream,
 * reading a network stream) returns AVERROR_EXIT once the stop flag is set or the deadline
 * has passed. */
static int ffmpeg_interrupt(void *opaque)
{
    const struct eb_source *src = opaque;
    const struct video *v = src->impl;
    return stop_set(src) || (v->deadline_ns != 0 && eb_clock_ns() > v->deadline_ns);
}

static double timeout_s(const struct video *v)
{
    return (double)v->timeout_ns / 1e9;
}

/* True when an rtsp URL chooses its transport itself with FFmpeg's URL options ("?udp",
 * "?tcp", "?http", "?https", "?multicast", joined by '&'). */
static int url_names_transport(const char *url)
{
    static const char *const names[] = {"udp", "tcp", "http", "https", "multicast"};
    const char *q = strrchr(url, '?');
    while (q != NULL) {
        const char *tok = q + 1;
        const char *amp = strchr(tok, '&');
        const size_t n = amp != NULL ? (size_t)(amp - tok) : strlen(tok);
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (strlen(names[i]) == n && strncmp(tok, names[i], n) == 0)
                return 1;
        q = amp;
    }
    return 0;
}

/* Opens the demuxer and the decoder of `src` into `v` (the first open and every
 * reconnection). On failure the caller closes what was made (close_input). */
static enum eb_status open_input(struct eb_source *src, struct video *v, struct eb_diag *diag)
{
    const struct eb_source_spec *spec = &src->spec;
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
    if (v->is_camera)
        v->fmt->flags |= AVFMT_FLAG_NONBLOCK;
    AVDictionary *opts = NULL;
    /* RTSP over TCP unless the URL says otherwise: no loss to UDP reordering or a firewall
     * that drops the RTP ports, and the loss of the server shows as the end of one
     * connection. */
    if (v->network && strncasecmp(spec->path, "rtsp", 4) == 0 && !url_names_transport(spec->path))
        (void)av_dict_set(&opts, "rtsp_transport", "tcp", 0);
    if (v->is_camera || v->network || v->fifo_fd >= 0)
        v->deadline_ns = eb_clock_ns() + v->timeout_ns;
    char pipe_url[32];
    snprintf(pipe_url, sizeof(pipe_url), "pipe:%d", v->fifo_fd);
    int ret = avformat_open_input(&v->fmt, v->fifo_fd >= 0 ? pipe_url : spec->path, ifmt,
                                  &opts); /* frees fmt on failure */
    av_dict_free(&opts);
    if (ret >= 0)
        ret = avformat_find_stream_info(v->fmt, NULL);
    /* A demuxer interrupted mid-handshake may say "invalid data" rather than AVERROR_EXIT:
     * whatever it says, a failure after the deadline is the timeout. */
    if (ret < 0 && v->deadline_ns != 0 && eb_clock_ns() > v->deadline_ns)
        ret = AVERROR_EXIT;
    v->deadline_ns = 0;
    if (ret == AVERROR_EXIT && stop_set(src))
        return eb_diag_fail(diag, EB_ERR_CANCELLED, "stopped while opening %s", v->what);
    if (ret == AVERROR_EXIT && v->is_camera)
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to open %s: no frame for %g s; check the device (or raise "
                            "--source_timeout_s)",
                            v->what, timeout_s(v));
    if (ret == AVERROR_EXIT && v->network)
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to open %s: no answer within %g s; check the URL and the "
                            "server (or raise --source_timeout_s)",
                            v->what, timeout_s(v));
    if (ret == AVERROR_EXIT && v->fifo_fd >= 0)
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to open %s: no data for %g s; check what writes the pipe (or "
                            "raise --source_timeout_s)",
                            v->what, timeout_s(v));
    if (ret < 0 && v->network)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to open %s: %s; check the URL and the server",
                            v->what, av_err2str(ret));
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
    const AVRational fr = av_guess_frame_rate(v->fmt, st, NULL);
    if (fr.num > 0 && fr.den > 0)
        v->rate = av_q2d(fr);
    v->dec = avcodec_alloc_context3(codec);
    if (v->dec == NULL)
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

static enum eb_status video_open(struct eb_source *src, struct eb_diag *diag)
{
    const struct eb_source_spec *spec = &src->spec;
    struct video *v = calloc(1, sizeof(*v));
    if (v == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to open %s: out of memory; free memory",
                            spec->path);
    src->impl = v;
    v->is_camera = spec->kind == EB_SOURCE_CAMERA;
    v->network = spec->kind == EB_SOURCE_VIDEO && spec->network;
    v->fifo_fd = -1;
    v->clock_off_ns = INT64_MAX;
    const double t = src->opts.timeout_s > 0 ? src->opts.timeout_s : EB_SOURCE_TIMEOUT_DEFAULT_S;
    v->timeout_ns = (uint64_t)(t * 1e9);
    v->reconnect = src->opts.reconnect >= 0 ? src->opts.reconnect : EB_SOURCE_RECONNECT_DEFAULT;
    if (v->is_camera && spec->camera_index >= 0)
        snprintf(v->what, sizeof(v->what), "camera=%d (%s)", spec->camera_index, spec->path);
    else
        snprintf(v->what, sizeof(v->what), "%s %s",
                 v->is_camera ? "camera"
                 : v->network ? "stream"
                              : "video",
                 spec->path);

    if (v->network) {
        if (avformat_network_init() < 0)
            return eb_diag_fail(diag, EB_ERR_IO,
                                "failed to open %s: FFmpeg's network layer did not start; check "
                                "the system's network and TLS libraries",
                                v->what);
        v->net_inited = 1;
    } else {
        /* Check existence first: a clear message, and no wait inside a device probe. */
        struct stat sb;
        if (stat(spec->path, &sb) != 0) {
            int err = errno;
            if (v->is_camera)
                return eb_diag_fail(diag, EB_ERR_IO,
                                    "failed to open %s: %s; connect the camera or pick another "
                                    "index (ls /dev/video*)",
                                    v->what, err == ENOENT ? "no such device" : strerror(err));
            return eb_diag_fail(diag, EB_ERR_IO, "failed to open %s: %s; check the path", v->what,
                                err == ENOENT ? "no such file or directory" : strerror(err));
        }
        if (!v->is_camera && S_ISDIR(sb.st_mode))
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "failed to open %s: it is a directory; give image_dir=%s instead",
                                v->what, spec->path);
        /* A named pipe is a live stream: read without blocking, so that the read deadline
         * (FFmpeg's retry loop asks the interrupt callback while the pipe is empty) holds. */
        if (!v->is_camera && S_ISFIFO(sb.st_mode)) {
            v->fifo_fd = open(spec->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
            if (v->fifo_fd < 0)
                return eb_diag_fail(diag, EB_ERR_IO, "failed to open %s: %s; check the pipe",
                                    v->what, strerror(errno));
        }
    }
    v->pkt = av_packet_alloc();
    v->frame = av_frame_alloc();
    if (v->pkt == NULL || v->frame == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to open %s: out of memory; free memory",
                            v->what);
    return open_input(src, v, diag);
}

/* Seconds to wait before reconnection attempt k (1-based): doubling from the first, capped. */
static double backoff_s(int k)
{
    double s = EB_SOURCE_BACKOFF_FIRST_S;
    for (int i = 1; i < k && s < EB_SOURCE_BACKOFF_MAX_S; i++)
        s *= 2;
    return s < EB_SOURCE_BACKOFF_MAX_S ? s : EB_SOURCE_BACKOFF_MAX_S;
}

/*
 * A network stream was lost (`why`): opens it again, up to v->reconnect attempts since the
 * last frame delivered, with the backoff before each. EB_OK once it is open again (the frames
 * lost are booked when its first frame comes, frame_delivered); EB_ERR_IO naming the stream,
 * the cause and the attempts when it stays lost; EB_ERR_CANCELLED on the stop.
 */
static enum eb_status reconnect(struct eb_source *src, struct video *v, const char *why,
                                struct eb_diag *diag)
{
    char last[200];
    snprintf(last, sizeof(last), "%.190s", why);
    if (v->lost_at_ns == 0)
        v->lost_at_ns = v->last_came_ns != 0 ? v->last_came_ns : eb_clock_ns();
    close_input(v);
    if (v->reconnect == 0)
        return eb_diag_fail(diag, EB_ERR_IO,
                            "lost %s: %s; not reconnected (--reconnect 0); check the server or "
                            "allow attempts with --reconnect N",
                            v->what, last);
    while (v->attempts_run < v->reconnect) {
        const int k = ++v->attempts_run;
        const double wait = backoff_s(k);
        eb_log_msg(src->opts.log, EB_LOG_WARN,
                   "lost %s (%s); reconnecting in %.1f s (attempt %d of %d)", v->what, last, wait,
                   k, v->reconnect);
        if (eb_clock_sleep_until_ns(eb_clock_ns() + (uint64_t)(wait * 1e9), src->opts.stop) !=
            EB_OK)
            return eb_diag_fail(diag, EB_ERR_CANCELLED, "stopped while reconnecting to %s",
                                v->what);
        src->stream.attempts++;
        struct eb_diag d = {0};
        const enum eb_status st = open_input(src, v, &d);
        if (st == EB_OK)
            return EB_OK;
        close_input(v);
        if (st == EB_ERR_CANCELLED)
            return eb_diag_fail(diag, st, "%s", d.msg);
        snprintf(last, sizeof(last), "%.190s", d.msg);
    }
    return eb_diag_fail(diag, EB_ERR_IO, "lost %s: %d reconnect attempts failed, the last: %s",
                        v->what, v->reconnect, last);
}

/* Books a delivered frame of a network stream (its timestamp `pts_ns`, INT64_MIN for none):
 * the frames an outage before it cost, and when it came. */
static void frame_delivered(struct eb_source *src, struct video *v, int64_t pts_ns)
{
    const uint64_t now = eb_clock_ns();
    uint64_t came = now;
    if (pts_ns > -(INT64_MAX / 4) && pts_ns < INT64_MAX / 4) { /* no overflow below */
        const int64_t off = (int64_t)now - pts_ns;
        if (off < v->clock_off_ns)
            v->clock_off_ns = off;
        const int64_t at = v->clock_off_ns + pts_ns; /* at most now */
        came = at > 0 ? (uint64_t)at : now;
    }
    /* never before the frame before it (a timestamp that went back), never after now */
    v->last_came_ns = came > v->last_came_ns ? came : v->last_came_ns;
    if (v->lost_at_ns != 0) {
        const double gap_s = (double)(now - v->lost_at_ns) / 1e9;
        double rate = v->rate;
        if (!(rate > 0) && v->frames_seen > 1 && v->last_frame_ns > v->first_frame_ns)
            rate =
                (double)(v->frames_seen - 1) * 1e9 / (double)(v->last_frame_ns - v->first_frame_ns);
        const double lost = rate > 0 ? floor(gap_s * rate + 0.5) - 1 : 0;
        src->stream.frames_lost += lost > 0 ? (int64_t)lost : 0;
        src->stream.outage_s += gap_s;
        src->stream.reconnects++;
        eb_log_msg(src->opts.log, EB_LOG_WARN,
                   "%s is back after %.2f s: about %lld frames lost (at %.3g frames/s)", v->what,
                   gap_s, (long long)(lost > 0 ? lost : 0), rate);
        v->lost_at_ns = 0;
        v->attempts_run = 0;
    }
    if (v->frames_seen++ == 0)
        v->first_frame_ns = now;
    v->last_frame_ns = now;
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
    if (v->fmt == NULL) { /* a network stream whose reconnection was stopped or failed */
        enum eb_status st = reconnect(src, v, "it was not open again", diag);
        if (st != EB_OK)
            return st;
    }
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
            const int64_t pts = v->frame->best_effort_timestamp;
            const int64_t pts_ns = pts == AV_NOPTS_VALUE
                                       ? INT64_MIN
                                       : av_rescale_q(pts, v->fmt->streams[v->stream]->time_base,
                                                      (AVRational){1, 1000000000});
            enum eb_status st = convert(src, v, frame_out, why, sizeof(why), diag);
            av_frame_unref(v->frame);
            if (st == EB_ERR_FORMAT) {
                src->skipped++;
                eb_log_msg(src->opts.log, EB_LOG_WARN, "skipping a frame of %s: %s", v->what, why);
                if (++errors > MAX_CONSECUTIVE_ERRORS)
                    goto too_many;
                continue;
            }
            if (st == EB_OK && v->network)
                frame_delivered(src, v, pts_ns);
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
        if (v->network || v->fifo_fd >= 0)
            v->deadline_ns = eb_clock_ns() + v->timeout_ns;
        ret = av_read_frame(v->fmt, v->pkt);
        if (ret < 0 && v->deadline_ns != 0 && eb_clock_ns() > v->deadline_ns)
            ret = AVERROR_EXIT; /* as at the open: a failure after the deadline is the timeout */
        v->deadline_ns = 0;
        if (ret == AVERROR(EAGAIN)) {
            uint64_t now = eb_clock_ns();
            if (stall_since == 0)
                stall_since = now;
            else if (now - stall_since > v->timeout_ns)
                return eb_diag_fail(diag, EB_ERR_IO,
                                    "failed to read %s: no frame for %g s; check the device (or "
                                    "raise --source_timeout_s)",
                                    v->what, timeout_s(v));
            eb_clock_sleep_ns(1000000);
            continue;
        }
        stall_since = 0;
        if (ret == AVERROR_EXIT && stop_set(src)) /* the interrupt callback saw the stop */
            return eb_diag_fail(diag, EB_ERR_CANCELLED, "stopped while reading %s", v->what);
        if (ret < 0 && v->network) {
            /* The end of a network stream is its loss: the server stopped, or went quiet. */
            if (ret == AVERROR_EOF)
                snprintf(why, sizeof(why), "the server ended the stream");
            else if (ret == AVERROR_EXIT)
                snprintf(why, sizeof(why), "no data for %g s", timeout_s(v));
            else
                snprintf(why, sizeof(why), "%s", av_err2str(ret));
            enum eb_status st = reconnect(src, v, why, diag);
            if (st != EB_OK)
                return st;
            continue;
        }
        if (ret == AVERROR_EXIT && v->fifo_fd >= 0)
            return eb_diag_fail(diag, EB_ERR_IO,
                                "failed to read %s: no data for %g s; check what writes the pipe "
                                "(or raise --source_timeout_s)",
                                v->what, timeout_s(v));
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
    if (v->is_camera || v->network || v->fifo_fd >= 0)
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "failed to rewind %s: a live %s cannot be rewound; use a video file "
                            "or image_dir for repeated passes",
                            v->what,
                            v->is_camera ? "camera"
                            : v->network ? "stream"
                                         : "pipe");
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
    return v->is_camera || v->network || v->fifo_fd >= 0 ? -1 : v->nb_frames;
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
