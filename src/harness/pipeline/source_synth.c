/*
 * Deterministic synthetic scenes. Frame i is a pure function of (seed, i, size, style): every
 * pixel comes from integer hashes of those, never from state carried between frames, so the
 * same seed and index always give the same picture (rewinds, reruns, other threads).
 *
 * RGB: a street seen from the side: sky gradient, sidewalk, road with a scrolling dashed lane
 * marking, vehicles driving in two lanes and pedestrians walking on the sidewalk.
 * THERMAL: a 16-bit radiometric frame (cool background near 29000 with a vertical gradient and
 * sensor noise, warm person-like blobs at 31000..34000 moving around), then AGC to 8 bit.
 *
 * Frames are rendered when the source opens, into a ring (EB_SOURCE_SYNTH_RING_FRAMES frames,
 * fewer for large frames: EB_SOURCE_SYNTH_RING_BYTES), so that a read costs a copy or nothing
 * and a benchmark times the user's pipeline, not this renderer. Frame k of the stream is ring
 * slot k mod n, which is frame k mod n of the pure sequence above. The thermal ring holds the
 * frames after AGC (what a model sees); the 16-bit frames are scratch of the rendering only.
 *
 * With fps > 0 each frame is held back until its due time on the monotonic clock, like a
 * camera; the clock starts at the first frame after open or rewind. The wait is sliced and
 * ends early when the options' stop flag is set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/clock.h"
#include "harness/pipeline/source_internal.h"

struct synth {
    uint8_t *ring; /* ring_len frames of frame_bytes RGB, each slot_bytes apart; NULL = none */
    size_t ring_cap;
    int64_t ring_len;
    size_t frame_bytes, slot_bytes;
    uint8_t *rgb; /* no ring: the frame drawn at read time */
    size_t rgb_cap;
    uint16_t *u16; /* thermal: the 16-bit frame before AGC (scratch) */
    size_t u16_cap;
    uint64_t t0_ns; /* due time of frame 0; 0 = not started */
};

static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

static uint32_t hash3(uint32_t seed, uint32_t a, uint32_t b)
{
    return mix32(seed ^ mix32(a * 0x9e3779b9u ^ mix32(b + 0x85ebca6bu)));
}

/* A value in [lo, hi] drawn from (seed, object, field). */
static int pick(uint32_t seed, uint32_t obj, uint32_t field, int lo, int hi)
{
    return lo + (int)(hash3(seed, obj, field) % (uint32_t)(hi - lo + 1));
}

/* Position of a mover: wraps around a track of `len` pixels. */
static int wrap_pos(int64_t start, int64_t speed, int64_t frame, int64_t len)
{
    int64_t p = (start + speed * frame) % len;
    return (int)(p < 0 ? p + len : p);
}

static void fill_rect(uint8_t *rgb, int w, int h, int x0, int y0, int rw, int rh, uint8_t r,
                      uint8_t g, uint8_t b)
{
    int x1 = x0 + rw, y1 = y0 + rh;
    if (x0 < 0)
        x0 = 0;
    if (y0 < 0)
        y0 = 0;
    if (x1 > w)
        x1 = w;
    if (y1 > h)
        y1 = h;
    for (int y = y0; y < y1; y++) {
        uint8_t *p = rgb + ((size_t)y * (size_t)w + (size_t)x0) * 3;
        for (int x = x0; x < x1; x++, p += 3) {
            p[0] = r;
            p[1] = g;
            p[2] = b;
        }
    }
}

static void render_rgb(uint8_t *rgb, int w, int h, uint32_t seed, int64_t frame)
{
    int horizon = h * 2 / 5;
    int walk_end = horizon + h / 10;
    for (int y = 0; y < h; y++) {
        uint8_t *p = rgb + (size_t)y * (size_t)w * 3;
        for (int x = 0; x < w; x++, p += 3) {
            if (y < horizon) {
                int t = y * 255 / (horizon > 0 ? horizon : 1);
                p[0] = (uint8_t)(90 + t * 90 / 255);
                p[1] = (uint8_t)(140 + t * 70 / 255);
                p[2] = (uint8_t)(210 + t * 25 / 255);
            } else {
                /* Static texture: depends on the position only, not on the frame. */
                int n = (int)(hash3(seed, (uint32_t)x, (uint32_t)y) % 13u) - 6;
                int base = y < walk_end ? 150 : 88;
                p[0] = (uint8_t)(base + n);
                p[1] = (uint8_t)(base + n);
                p[2] = (uint8_t)(base + 4 + n);
            }
        }
    }
    /* Kerb line and a dashed lane marking that scrolls with the frame index. */
    fill_rect(rgb, w, h, 0, walk_end, w, h / 100 + 1, 200, 200, 190);
    int lane_y = walk_end + (h - walk_end) / 2;
    int dash = w / 16 + 1, period = 2 * dash;
    int off = wrap_pos(0, -(w / 160 + 1), frame, period);
    for (int x = off - period; x < w; x += period)
        fill_rect(rgb, w, h, x, lane_y - h / 200, dash, h / 100 + 2, 235, 235, 225);

    /* Vehicles: two lanes, opposite directions. */
    for (uint32_t k = 0; k < 4; k++) {
        int vw = pick(seed, k, 1, w / 6, w / 4), vh = pick(seed, k, 2, h / 9, h / 6);
        int lane = (int)(k & 1u);
        int speed = pick(seed, k, 3, w / 200 + 1, w / 80 + 2) * (lane ? -1 : 1);
        int x = wrap_pos(pick(seed, k, 4, 0, w + vw), speed, frame, w + vw) - vw;
        int y = (lane ? lane_y + (h - lane_y) / 2 : lane_y - h / 40) - vh;
        uint8_t r = (uint8_t)pick(seed, k, 5, 30, 230), g = (uint8_t)pick(seed, k, 6, 30, 230),
                b = (uint8_t)pick(seed, k, 7, 30, 230);
        fill_rect(rgb, w, h, x, y, vw, vh, r, g, b);
        fill_rect(rgb, w, h, x + vw / 5, y - vh / 3, vw * 3 / 5, vh / 3 + 1, r, g, b); /* cabin */
        fill_rect(rgb, w, h, x + vw / 4, y - vh / 4, vw / 2, vh / 5 + 1, 60, 80, 100); /* glass */
        fill_rect(rgb, w, h, x + vw / 8, y + vh - vh / 6, vw / 6 + 1, vh / 3, 20, 20, 20);
        fill_rect(rgb, w, h, x + vw - vw / 4, y + vh - vh / 6, vw / 6 + 1, vh / 3, 20, 20, 20);
    }
    /* Pedestrians on the sidewalk. */
    for (uint32_t k = 10; k < 13; k++) {
        int pw = w / 40 + 2, ph = h / 7 + 4;
        int speed = pick(seed, k, 3, 1, w / 320 + 2) * ((k & 1u) ? -1 : 1);
        int x = wrap_pos(pick(seed, k, 4, 0, w + pw), speed, frame, w + pw) - pw;
        int y = walk_end - ph + h / 40;
        fill_rect(rgb, w, h, x, y + ph / 5, pw, ph * 4 / 5, (uint8_t)pick(seed, k, 5, 20, 200),
                  (uint8_t)pick(seed, k, 6, 20, 200), (uint8_t)pick(seed, k, 7, 20, 200));
        fill_rect(rgb, w, h, x + pw / 6, y, pw * 2 / 3 + 1, ph / 5, 225, 180, 150); /* head */
    }
}

/* Triangle wave: bounces in [0, len). */
static int bounce_pos(int64_t start, int64_t speed, int64_t frame, int64_t len)
{
    if (len <= 1)
        return 0;
    int64_t p = wrap_pos(start, speed, frame, 2 * len - 2);
    return (int)(p < len ? p : 2 * len - 2 - p);
}

static void render_thermal(uint16_t *img, int w, int h, uint32_t seed, int64_t frame)
{
    uint32_t fseed = mix32(seed ^ 0x51ed270bu) + (uint32_t)frame * 0x2545f491u;
    for (int y = 0; y < h; y++) {
        int grad = y * 600 / h - 300; /* ground warmer at the bottom */
        uint16_t *p = img + (size_t)y * (size_t)w;
        for (int x = 0; x < w; x++) {
            int noise = (int)(hash3(fseed, (uint32_t)x, (uint32_t)y) % 161u) - 80;
            p[x] = (uint16_t)(29000 + grad + noise);
        }
    }
    int side = w < h ? w : h;
    for (uint32_t k = 0; k < 6; k++) {
        int rx = pick(seed, k, 11, side / 60 + 2, side / 30 + 3);
        int ry = rx * pick(seed, k, 12, 15, 25) / 10;
        int peak = pick(seed, k, 13, 31000, 34000);
        int cx =
            bounce_pos(pick(seed, k, 14, 0, w - 1), pick(seed, k, 15, 1, w / 100 + 2), frame, w);
        int cy =
            bounce_pos(pick(seed, k, 16, 0, h - 1), pick(seed, k, 17, 0, h / 200 + 1), frame, h);
        /* Flat warm core (d < 1), cooling towards the rim (d = 1.5). */
        int bx = rx * 3 / 2 + 1, by = ry * 3 / 2 + 1;
        for (int y = cy - by; y <= cy + by; y++) {
            if (y < 0 || y >= h)
                continue;
            for (int x = cx - bx; x <= cx + bx; x++) {
                if (x < 0 || x >= w)
                    continue;
                double dx = (double)(x - cx) / rx, dy = (double)(y - cy) / ry;
                double d2 = dx * dx + dy * dy;
                if (d2 >= 2.25)
                    continue;
                double t = d2 < 1.0 ? 1.0 - 0.15 * d2 : 0.85 * (2.25 - d2) / 1.25;
                uint16_t *p = img + (size_t)y * (size_t)w + (size_t)x;
                double v = 29000.0 + (peak - 29000.0) * t;
                if (v > *p)
                    *p = (uint16_t)v;
            }
        }
    }
}

/* Draws frame `index` into `rgb` (frame_bytes). */
static enum eb_status render_frame(struct eb_source *src, struct synth *s, int64_t index,
                                   uint8_t *rgb, struct eb_diag *diag)
{
    const int w = src->spec.synth_w, h = src->spec.synth_h;
    if (src->opts.synth_style != EB_SYNTH_THERMAL) {
        render_rgb(rgb, w, h, src->opts.seed, index);
        return EB_OK;
    }
    render_thermal(s->u16, w, h, src->opts.seed, index);
    return eb_source__agc_to_rgb(src, s->u16, (size_t)w * (size_t)h, rgb, diag);
}

/* Frames in the ring: the asked number (or the default), as many as fit the byte cap but at
 * least 2, and no more than the source will deliver. */
static int64_t ring_frames(const struct eb_source *src, size_t slot_bytes)
{
    int64_t n =
        src->opts.synth_ring_frames > 0 ? src->opts.synth_ring_frames : EB_SOURCE_SYNTH_RING_FRAMES;
    const int64_t fit = (int64_t)(EB_SOURCE_SYNTH_RING_BYTES / slot_bytes);
    if (n > fit)
        n = fit;
    if (n < 2)
        n = 2;
    if (src->max_frames > 0 && n > src->max_frames)
        n = src->max_frames;
    return n;
}

static void synth_close(struct eb_source *src)
{
    struct synth *s = src->impl;
    if (s == NULL)
        return;
    free(s->ring);
    free(s->rgb);
    free(s->u16);
    free(s);
    src->impl = NULL;
}

static enum eb_status synth_open(struct eb_source *src, struct eb_diag *diag)
{
    const struct eb_source_spec *sp = &src->spec;
    if (sp->synth_w < 16 || sp->synth_w > 8192 || sp->synth_h < 16 || sp->synth_h > 8192 ||
        !eb_source_fps_ok(sp->synth_fps))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to open source synthetic=%dx%d@%g: out of range; give "
                            "16..8192 per side and FPS %s",
                            sp->synth_w, sp->synth_h, sp->synth_fps, EB_SOURCE_FPS_RANGE);
    if (src->opts.synth_style != EB_SYNTH_RGB && src->opts.synth_style != EB_SYNTH_THERMAL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "failed to open source synthetic: unknown style %d; give "
                            "EB_SYNTH_RGB or EB_SYNTH_THERMAL",
                            (int)src->opts.synth_style);
    struct synth *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM,
                            "failed to open source synthetic: out of memory; free memory");
    src->impl = s;
    /* Allocated once here: every frame has the same size. */
    const size_t px = (size_t)sp->synth_w * (size_t)sp->synth_h;
    s->frame_bytes = px * 3;
    s->slot_bytes = (s->frame_bytes + 63) & ~(size_t)63; /* every frame 64-byte aligned */
    enum eb_status st = EB_OK;
    if (src->opts.synth_style == EB_SYNTH_THERMAL)
        st = eb_source__reserve((void **)&s->u16, &s->u16_cap, px * 2, "a 16-bit synthetic frame",
                                diag);
    if (st != EB_OK)
        return st;
    if (src->opts.synth_ring_frames < 0)
        return eb_source__reserve((void **)&s->rgb, &s->rgb_cap, s->frame_bytes,
                                  "a synthetic frame", diag);
    s->ring_len = ring_frames(src, s->slot_bytes);
    char what[96];
    snprintf(what, sizeof(what), "the synthetic frame ring (%lld frames of %dx%d)",
             (long long)s->ring_len, sp->synth_w, sp->synth_h);
    st = eb_source__reserve((void **)&s->ring, &s->ring_cap, (size_t)s->ring_len * s->slot_bytes,
                            what, diag);
    for (int64_t k = 0; k < s->ring_len && st == EB_OK; k++)
        st = render_frame(src, s, k, s->ring + (size_t)k * s->slot_bytes, diag);
    /* The ring holds every frame there will be: the 16-bit scratch is not needed any more. */
    free(s->u16);
    s->u16 = NULL;
    s->u16_cap = 0;
    return st;
}

static enum eb_status synth_next(struct eb_source *src, struct eb_frame *frame_out,
                                 struct eb_diag *diag)
{
    struct synth *s = src->impl;
    const struct eb_source_spec *sp = &src->spec;
    int64_t i = src->delivered;
    if (sp->synth_fps > 0.0) {
        uint64_t now = eb_clock_ns();
        if (s->t0_ns == 0)
            s->t0_ns = now;
        const uint64_t due = s->t0_ns + (uint64_t)((double)i * 1e9 / sp->synth_fps);
        if (due > now && eb_clock_sleep_until_ns(due, src->opts.stop) != EB_OK)
            return eb_diag_fail(diag, EB_ERR_CANCELLED,
                                "stopped while waiting for synthetic frame %lld", (long long)i);
    }
    if (s->ring != NULL) {
        const uint8_t *slot = s->ring + (size_t)(i % s->ring_len) * s->slot_bytes;
        uint8_t *out = eb_source__rgb_out(src, NULL, s->frame_bytes);
        if (out != NULL)
            memcpy(out, slot, s->frame_bytes);
        frame_out->rgb = out != NULL ? out : slot;
    } else {
        uint8_t *rgb = eb_source__rgb_out(src, s->rgb, s->frame_bytes);
        enum eb_status st = render_frame(src, s, i, rgb, diag);
        if (st != EB_OK)
            return st;
        frame_out->rgb = rgb;
    }
    const int thermal = src->opts.synth_style == EB_SYNTH_THERMAL;
    frame_out->source_bits = thermal ? 16 : 8; /* thermal: rendered 16-bit, delivered after AGC */
    frame_out->source_channels = thermal ? 1 : 3;
    frame_out->width = sp->synth_w;
    frame_out->height = sp->synth_h;
    frame_out->stride = (size_t)sp->synth_w * 3;
    frame_out->name = NULL;
    return EB_OK;
}

static enum eb_status synth_rewind(struct eb_source *src, struct eb_diag *diag)
{
    (void)diag;
    struct synth *s = src->impl;
    s->t0_ns = 0;
    return EB_OK;
}

static int64_t synth_count(const struct eb_source *src)
{
    return src->max_frames;
}

int64_t eb_source_synth_ring_frames(const struct eb_source *src)
{
    if (src == NULL || src->ops != &eb_source__synth_ops || src->impl == NULL)
        return 0;
    const struct synth *s = src->impl;
    return s->ring != NULL ? s->ring_len : 0;
}

int eb_source_frames_memory(const struct eb_source *src, uint8_t **base, size_t *bytes)
{
    if (src == NULL || src->ops != &eb_source__synth_ops || src->impl == NULL)
        return 0;
    const struct synth *s = src->impl;
    if (s->ring == NULL)
        return 0;
    *base = s->ring;
    *bytes = (size_t)s->ring_len * s->slot_bytes;
    return 1;
}

const struct eb_source_ops eb_source__synth_ops = {
    .name = "synthetic",
    .open = synth_open,
    .next = synth_next,
    .rewind = synth_rewind,
    .count = synth_count,
    .close = synth_close,
};
