/*
 * Source specs, the common iterator (frame limit, counters) and AGC. The kinds live in
 * source_imgdir.c, source_video.c and source_synth.c behind `struct eb_source_ops`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "eb/number.h"
#include "harness/pipeline/image_decode.h"
#include "harness/pipeline/source.h"
#include "harness/pipeline/source_internal.h"

#define ACCEPTED_SPECS                                                                             \
    "give image_dir=PATH, video=PATH, camera=N or synthetic=WxH[@FPS] (or video=URL: rtsp://, "    \
    "http(s)://, udp://)"
#define NETWORK_SCHEMES "rtsp://, rtsps://, http://, https://, udp://"
/* Frames delivered by an endless source (synthetic, camera) when the caller gives no limit. */
#define DEFAULT_ENDLESS_FRAMES 300

const char *eb_source_kind_name(enum eb_source_kind k)
{
    switch (k) {
    case EB_SOURCE_IMAGE_DIR: return "image_dir";
    case EB_SOURCE_VIDEO: return "video";
    case EB_SOURCE_CAMERA: return "camera";
    case EB_SOURCE_SYNTHETIC: return "synthetic";
    }
    return "?";
}

int eb_source__is_image_name(const char *name)
{
    static const char *const exts[] = {".jpg", ".jpeg", ".png", ".bmp"};
    size_t n = strlen(name);
    for (size_t i = 0; i < EB_ARRAY_LEN(exts); i++) {
        size_t e = strlen(exts[i]);
        if (n > e && strcasecmp(name + n - e, exts[i]) == 0)
            return 1;
    }
    return 0;
}

static enum eb_status copy_path(const char *text, const char *value, struct eb_source_spec *s,
                                struct eb_diag *diag)
{
    size_t n = strlen(value);
    if (n == 0)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to parse source '%s': the path is empty; %s", text,
                            ACCEPTED_SPECS);
    if (n >= sizeof(s->path))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to parse source '%.64s...': the path is longer than %d bytes; "
                            "use a shorter path",
                            text, EB_SOURCE_PATH_MAX - 1);
    memcpy(s->path, value, n + 1);
    return EB_OK;
}

/*
 * The URL scheme of `text` ("rtsp" of "rtsp://..."): its length when `text` starts with
 * letters, digits, '+', '-' or '.' followed by "://", else 0.
 */
static size_t url_scheme_len(const char *text)
{
    size_t n = 0;
    while ((text[n] >= 'a' && text[n] <= 'z') || (text[n] >= 'A' && text[n] <= 'Z') ||
           (n > 0 && ((text[n] >= '0' && text[n] <= '9') || text[n] == '+' || text[n] == '-' ||
                      text[n] == '.')))
        n++;
    return n > 0 && strncmp(text + n, "://", 3) == 0 ? n : 0;
}

/* A network URL as a video source: one of the schemes edgebench reads through FFmpeg's network
 * demuxers. Another scheme is refused (FFmpeg knows many more, but edgebench applies its
 * timeout and reconnection only to these). */
static enum eb_status parse_url(const char *text, const char *value, struct eb_source_spec *s,
                                struct eb_diag *diag)
{
    static const char *const schemes[] = {"rtsp", "rtsps", "http", "https", "udp"};
    const size_t n = url_scheme_len(value);
    int known = 0;
    for (size_t i = 0; i < EB_ARRAY_LEN(schemes) && !known; i++)
        known = strlen(schemes[i]) == n && strncasecmp(value, schemes[i], n) == 0;
    if (!known)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to parse source '%s': URL scheme '%.*s' is not supported; "
                            "give a %s URL, or a file path",
                            text, (int)(n > 32 ? 32 : n), value, NETWORK_SCHEMES);
    if (value[n + 3] == '\0')
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to parse source '%s': the URL names no host; e.g. "
                            "video=rtsp://192.168.1.10:554/stream",
                            text);
    s->kind = EB_SOURCE_VIDEO;
    s->network = 1;
    return copy_path(text, value, s, diag);
}

int eb_source_spec_is_live(const struct eb_source_spec *spec)
{
    if (spec == NULL)
        return 0;
    if (spec->kind == EB_SOURCE_CAMERA || (spec->kind == EB_SOURCE_VIDEO && spec->network))
        return 1;
    struct stat sb; /* a named pipe: what a writer sends, as it sends it */
    return spec->kind == EB_SOURCE_VIDEO && stat(spec->path, &sb) == 0 && S_ISFIFO(sb.st_mode);
}

/* Parses a decimal integer that is the whole of [p, end-of-string) with no sign or spaces. */
static int parse_uint(const char *p, const char **end_out, long *v_out)
{
    if (*p < '0' || *p > '9')
        return -1;
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (errno != 0)
        return -1;
    *end_out = end;
    *v_out = v;
    return 0;
}

static enum eb_status parse_camera(const char *text, const char *value, struct eb_source_spec *s,
                                   struct eb_diag *diag)
{
    const char *end;
    long idx;
    if (value[0] == '/') {
        /* A device path such as /dev/v4l/by-id/...: kept as given, index unknown. */
        s->kind = EB_SOURCE_CAMERA;
        s->camera_index = -1;
        return copy_path(text, value, s, diag);
    }
    if (parse_uint(value, &end, &idx) != 0 || *end != '\0' || idx > 63)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to parse source '%s': camera index must be an integer 0..63; "
                            "give camera=N for /dev/videoN",
                            text);
    s->kind = EB_SOURCE_CAMERA;
    s->camera_index = (int)idx;
    snprintf(s->path, sizeof(s->path), "/dev/video%ld", idx);
    return EB_OK;
}

int eb_source_fps_ok(double fps)
{
    return fps == 0.0 || (fps >= EB_SOURCE_FPS_MIN && fps <= EB_SOURCE_FPS_MAX);
}

static enum eb_status parse_synthetic(const char *text, const char *value, struct eb_source_spec *s,
                                      struct eb_diag *diag)
{
    const char *p = value, *end;
    long w, h;
    double fps = 0.0;
    if (parse_uint(p, &end, &w) != 0 || (*end != 'x' && *end != 'X'))
        goto bad_syntax;
    p = end + 1;
    if (parse_uint(p, &end, &h) != 0)
        goto bad_syntax;
    if (*end == '@') {
        p = end + 1;
        const enum eb_number num = eb_number_parse_real(p, &fps);
        if (num == EB_NUMBER_SYNTAX)
            goto bad_syntax;
        if (num == EB_NUMBER_RANGE || !eb_source_fps_ok(fps))
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "failed to parse source '%s': FPS %s is out of range; give %s",
                                text, p, EB_SOURCE_FPS_RANGE);
    } else if (*end != '\0') {
        goto bad_syntax;
    }
    if (w < 16 || w > 8192 || h < 16 || h > 8192)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to parse source '%s': size %ldx%ld is out of range; give "
                            "16..8192 per side",
                            text, w, h);
    s->kind = EB_SOURCE_SYNTHETIC;
    s->synth_w = (int)w;
    s->synth_h = (int)h;
    s->synth_fps = fps;
    return EB_OK;
bad_syntax:
    return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                        "failed to parse source '%s': expected synthetic=WxH or synthetic=WxH@FPS; "
                        "e.g. synthetic=640x480@30",
                        text);
}

/* "/dev/video<digits>" */
static int is_video_device_name(const char *p)
{
    static const char prefix[] = "/dev/video";
    if (strncmp(p, prefix, sizeof(prefix) - 1) != 0)
        return 0;
    p += sizeof(prefix) - 1;
    if (*p == '\0')
        return 0;
    for (; *p != '\0'; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

static enum eb_status parse_bare_path(const char *text, struct eb_source_spec *s,
                                      struct eb_diag *diag)
{
    if (is_video_device_name(text))
        return parse_camera(text, text + strlen("/dev/video"), s, diag);
    if (url_scheme_len(text) > 0) {
        struct stat sb0;
        if (stat(text, &sb0) != 0) /* a file really named "x://y" stays a file */
            return parse_url(text, text, s, diag);
    }
    struct stat sb;
    if (stat(text, &sb) != 0) {
        int err = errno;
        if (err == ENOENT || err == ENOTDIR)
            return eb_diag_fail(diag, EB_ERR_IO,
                                "failed to open source '%s': no such file or directory; %s", text,
                                ACCEPTED_SPECS);
        return eb_diag_fail(diag, EB_ERR_IO, "failed to open source '%s': %s; check the path", text,
                            strerror(err));
    }
    if (S_ISDIR(sb.st_mode)) {
        s->kind = EB_SOURCE_IMAGE_DIR;
    } else if (S_ISREG(sb.st_mode)) {
        /* A single picture (--source bus.jpg) is a one-image image_dir. */
        s->kind = eb_source__is_image_name(text) ? EB_SOURCE_IMAGE_DIR : EB_SOURCE_VIDEO;
    } else if (S_ISCHR(sb.st_mode)) {
        s->kind = EB_SOURCE_CAMERA;
        s->camera_index = -1;
    } else {
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to open source '%s': not a directory, file or camera device; "
                            "%s",
                            text, ACCEPTED_SPECS);
    }
    return copy_path(text, text, s, diag);
}

enum eb_status eb_source_spec_parse(const char *text, struct eb_source_spec *spec_out,
                                    struct eb_diag *diag)
{
    if (text == NULL || text[0] == '\0')
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "failed to parse source '': it is empty; %s",
                            ACCEPTED_SPECS);
    struct eb_source_spec *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to parse source: out of memory; retry");
    enum eb_status st = EB_ERR_INVALID_ARG;
    s->camera_index = -1;

    /* KEY=VALUE where KEY is an identifier; anything else is a bare path. */
    const char *eq = strchr(text, '=');
    size_t klen = eq != NULL ? (size_t)(eq - text) : 0;
    int is_key = klen > 0;
    for (size_t i = 0; i < klen && is_key; i++) {
        char c = text[i];
        is_key =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    }
    if (is_key) {
        const char *value = eq + 1;
        if (klen == 9 && strncmp(text, "image_dir", klen) == 0) {
            s->kind = EB_SOURCE_IMAGE_DIR;
            st = copy_path(text, value, s, diag);
        } else if (klen == 5 && strncmp(text, "video", klen) == 0) {
            s->kind = EB_SOURCE_VIDEO;
            st = url_scheme_len(value) > 0 ? parse_url(text, value, s, diag)
                                           : copy_path(text, value, s, diag);
        } else if (klen == 6 && strncmp(text, "camera", klen) == 0) {
            st = parse_camera(text, value, s, diag);
        } else if (klen == 9 && strncmp(text, "synthetic", klen) == 0) {
            st = parse_synthetic(text, value, s, diag);
        } else {
            struct stat sb;
            if (stat(text, &sb) == 0) {
                st = parse_bare_path(text, s, diag); /* a file really named "foo=bar" */
            } else {
                st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                  "failed to parse source '%s': unknown kind '%.*s'; %s", text,
                                  (int)(klen > 64 ? 64 : klen), text, ACCEPTED_SPECS);
            }
        }
    } else {
        st = parse_bare_path(text, s, diag);
    }
    if (st == EB_OK)
        *spec_out = *s;
    free(s);
    return st;
}

void eb_source_spec_format(const struct eb_source_spec *spec, char *buf, size_t buf_size)
{
    if (buf == NULL || buf_size == 0)
        return;
    if (spec == NULL) {
        buf[0] = '\0';
        return;
    }
    switch (spec->kind) {
    case EB_SOURCE_IMAGE_DIR: snprintf(buf, buf_size, "image_dir=%s", spec->path); return;
    case EB_SOURCE_VIDEO: snprintf(buf, buf_size, "video=%s", spec->path); return;
    case EB_SOURCE_CAMERA:
        if (spec->camera_index >= 0)
            snprintf(buf, buf_size, "camera=%d", spec->camera_index);
        else
            snprintf(buf, buf_size, "camera=%s", spec->path);
        return;
    case EB_SOURCE_SYNTHETIC:
        if (spec->synth_fps > 0.0)
            snprintf(buf, buf_size, "synthetic=%dx%d@%g", spec->synth_w, spec->synth_h,
                     spec->synth_fps);
        else
            snprintf(buf, buf_size, "synthetic=%dx%d", spec->synth_w, spec->synth_h);
        return;
    }
    buf[0] = '\0';
}

enum eb_status eb_source__reserve(void **buf, size_t *cap, size_t need, const char *what,
                                  struct eb_diag *diag)
{
    if (*buf != NULL && *cap >= need)
        return EB_OK;
    /* Aligned for SIMD consumers (swscale, preprocessing); padded for over-reading readers. */
    size_t size = need + 64;
    void *p = NULL;
    if (posix_memalign(&p, 64, size) != 0 || p == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM,
                            "failed to allocate %s: %zu bytes not available; free memory or use "
                            "smaller frames",
                            what, size);
    free(*buf);
    *buf = p;
    *cap = need;
    return EB_OK;
}

uint8_t *eb_source__rgb_out(const struct eb_source *src, uint8_t *own, size_t need)
{
    return src->out != NULL && src->out_cap >= need + EB_IMAGE_DST_SLACK ? src->out : own;
}

void eb_source_set_output(struct eb_source *src, uint8_t *buf, size_t cap)
{
    src->out = cap > 0 ? buf : NULL;
    src->out_cap = buf != NULL ? cap : 0;
}

void eb_source__gray_to_rgb_inplace(uint8_t *buf, size_t n)
{
    /* Back to front: pixel i goes to 3i..3i+2 >= i, so no unread gray byte is overwritten. */
    for (size_t i = n; i-- > 0;) {
        uint8_t v = buf[i];
        buf[3 * i] = v;
        buf[3 * i + 1] = v;
        buf[3 * i + 2] = v;
    }
}

enum eb_status eb_source__agc_to_rgb(struct eb_source *src, const uint16_t *in, size_t n,
                                     uint8_t *rgb, struct eb_diag *diag)
{
    return eb_image_agc_to_rgb(&src->agc_hist, in, n, rgb, diag);
}

/* The sample value at rank `rank` (0-based) in the sorted order described by `hist`. */
static unsigned hist_rank(const uint32_t *hist, uint64_t rank)
{
    uint64_t cum = 0;
    for (unsigned v = 0; v < 65536; v++) {
        cum += hist[v];
        if (cum > rank)
            return v;
    }
    return 65535;
}

void eb_agc_u16_to_u8(const uint16_t *src, size_t n, double lo_pct, double hi_pct, uint32_t *hist,
                      uint8_t *dst)
{
    if (src == NULL || hist == NULL || dst == NULL || n == 0)
        return;
    if (!(lo_pct >= 0.0))
        lo_pct = 0.0;
    if (!(hi_pct <= 100.0))
        hi_pct = 100.0;
    if (lo_pct > 100.0)
        lo_pct = 100.0;
    if (hi_pct < 0.0)
        hi_pct = 0.0;
    if (lo_pct > hi_pct) {
        double t = lo_pct;
        lo_pct = hi_pct;
        hi_pct = t;
    }
    memset(hist, 0, 65536 * sizeof(*hist));
    /* Counts saturate rather than wrap for images over 4 G samples (never seen in practice). */
    for (size_t i = 0; i < n; i++)
        if (hist[src[i]] != UINT32_MAX)
            hist[src[i]]++;
    uint64_t last = (uint64_t)n - 1;
    unsigned lo = hist_rank(hist, (uint64_t)(lo_pct / 100.0 * (double)last));
    unsigned hi = hist_rank(hist, (uint64_t)(hi_pct / 100.0 * (double)last + 0.5));
    /* The histogram is no longer needed: reuse it as the 16 → 8 bit lookup table. */
    for (unsigned v = 0; v < 65536; v++) {
        uint32_t out;
        if (hi <= lo) /* flat between the percentiles: mid-gray, outliers to the ends */
            out = v < lo ? 0u : v > lo ? 255u : 128u;
        else if (v <= lo)
            out = 0;
        else if (v >= hi)
            out = 255;
        else
            out = (uint32_t)(((uint64_t)(v - lo) * 255u + (hi - lo) / 2) / (hi - lo));
        hist[v] = out;
    }
    for (size_t i = 0; i < n; i++)
        dst[i] = (uint8_t)hist[src[i]];
}

static const struct eb_source_ops *ops_for(enum eb_source_kind kind)
{
    switch (kind) {
    case EB_SOURCE_IMAGE_DIR: return &eb_source__imgdir_ops;
    case EB_SOURCE_VIDEO:
    case EB_SOURCE_CAMERA: return &eb_source__video_ops;
    case EB_SOURCE_SYNTHETIC: return &eb_source__synth_ops;
    }
    return NULL;
}

enum eb_status eb_source_open(const struct eb_source_spec *spec,
                              const struct eb_source_options *opts, struct eb_source **src_out,
                              struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_INVALID_ARG;
    struct eb_source *src = NULL;
    if (spec == NULL || src_out == NULL) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                          "failed to open source: no spec given; parse one with "
                          "eb_source_spec_parse");
        goto fail;
    }
    const struct eb_source_ops *ops = ops_for(spec->kind);
    if (ops == NULL) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG, "failed to open source: unknown kind %d; %s",
                          (int)spec->kind, ACCEPTED_SPECS);
        goto fail;
    }
    if (opts != NULL && opts->max_frames < 0) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                          "failed to open source: max_frames %lld is negative; give 0 (whole "
                          "source) or more",
                          (long long)opts->max_frames);
        goto fail;
    }
    src = calloc(1, sizeof(*src));
    if (src == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to open source: out of memory; free memory");
        goto fail;
    }
    src->ops = ops;
    src->spec = *spec;
    src->spec.path[sizeof(src->spec.path) - 1] = '\0';
    if (opts != NULL)
        src->opts = *opts;
    src->max_frames = src->opts.max_frames;
    if (src->max_frames == 0 && (spec->kind == EB_SOURCE_SYNTHETIC || eb_source_spec_is_live(spec)))
        src->max_frames = DEFAULT_ENDLESS_FRAMES;
    st = ops->open(src, diag);
    if (st != EB_OK)
        goto fail;
    *src_out = src;
    return EB_OK;
fail:
    eb_source_destroy(src);
    return st;
}

enum eb_status eb_source_next(struct eb_source *src, struct eb_frame *frame_out,
                              struct eb_diag *diag)
{
    if (src == NULL || frame_out == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to read a frame: no source given; open one first");
    if (src->max_frames > 0 && src->delivered >= src->max_frames)
        return EB_ERR_END;
    struct eb_frame f = {.file_index = -1};
    enum eb_status st = src->ops->next(src, &f, diag);
    if (st != EB_OK)
        return st;
    f.index = src->delivered++;
    *frame_out = f;
    return EB_OK;
}

enum eb_status eb_source_rewind(struct eb_source *src, struct eb_diag *diag)
{
    if (src == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to rewind source: no source given; open one first");
    enum eb_status st = src->ops->rewind(src, diag);
    if (st != EB_OK)
        return st;
    src->delivered = 0;
    src->skipped = 0;
    return EB_OK;
}

int64_t eb_source_skipped(const struct eb_source *src)
{
    return src != NULL ? src->skipped : 0;
}

int64_t eb_source_count(const struct eb_source *src)
{
    if (src == NULL)
        return -1;
    if (eb_source_spec_is_live(&src->spec))
        return -1;
    int64_t n = src->ops->count(src);
    if (src->max_frames > 0 && (n < 0 || n > src->max_frames))
        n = n < 0 && src->spec.kind != EB_SOURCE_SYNTHETIC ? -1 : src->max_frames;
    return n;
}

void eb_source_stream_stats(const struct eb_source *src, struct eb_source_stream_stats *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof(*out));
    if (src != NULL)
        *out = src->stream;
}

void eb_source_destroy(struct eb_source *src)
{
    if (src == NULL)
        return;
    if (src->ops != NULL)
        src->ops->close(src);
    free(src->agc_hist);
    free(src);
}
