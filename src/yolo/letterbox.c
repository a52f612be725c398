/*
 * Ultralytics-equivalent letterbox: geometry (eb_letterbox_compute), the resize + pad +
 * normalise into planar NCHW float32 (a scalar reference and a fast path), and the inverse
 * mapping of boxes (eb_letterbox_unmap).
 *
 * Fast path, per output row inside the resized area:
 *   1. vertical pass: blend the two source rows with an 8-bit fixed-point weight into a
 *      uint16 row of interleaved RGB (contiguous, SSE2 on x86-64, plain C elsewhere);
 *   2. horizontal pass: per output column, two taps of that row with a float weight, written
 *      straight into the three planes, scaled by 1/(255*256).
 * Column taps and weights are computed once per call on the stack (no allocation). Padding
 * is filled with the constant 114/255. Vertical-first touches each needed source row once and
 * does the cheap contiguous work at source width, the gather work only at output width.
 */
#include <math.h>
#include <string.h>

#include "yolo/yolo.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Python's round(): half to even. */
static double round_half_even(double x)
{
    double f = floor(x);
    double d = x - f;
    if (d > 0.5)
        return f + 1.0;
    if (d < 0.5)
        return f;
    return fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

void eb_letterbox_compute(int src_w, int src_h, int dst_w, int dst_h, struct eb_letterbox *lb_out)
{
    EB_ASSERT(src_w > 0 && src_h > 0 && dst_w > 0 && dst_h > 0);
    double rh = (double)dst_h / (double)src_h;
    double rw = (double)dst_w / (double)src_w;
    double r = rh < rw ? rh : rw;
    int new_w = (int)round_half_even((double)src_w * r);
    int new_h = (int)round_half_even((double)src_h * r);
    /* An extreme aspect ratio can round a side to 0 (cv2.resize would then fail); keep one
     * pixel so the canvas stays well defined. */
    if (new_w < 1)
        new_w = 1;
    if (new_h < 1)
        new_h = 1;
    double dw = (double)(dst_w - new_w) / 2.0;
    double dh = (double)(dst_h - new_h) / 2.0;

    struct eb_letterbox lb;
    lb.src_w = src_w;
    lb.src_h = src_h;
    lb.dst_w = dst_w;
    lb.dst_h = dst_h;
    lb.scale = (float)r;
    lb.scale_y = (float)r;
    lb.new_w = new_w;
    lb.new_h = new_h;
    lb.pad_left = (int)round_half_even(dw - 0.1);
    lb.pad_top = (int)round_half_even(dh - 0.1);
    *lb_out = lb;
}

void eb_letterbox_compute_mode(int src_w, int src_h, int dst_w, int dst_h, enum eb_resize resize,
                               struct eb_letterbox *lb_out)
{
    eb_letterbox_compute(src_w, src_h, dst_w, dst_h, lb_out);
    if (resize == EB_RESIZE_LETTERBOX_TOPLEFT) {
        lb_out->pad_left = 0;
        lb_out->pad_top = 0;
    } else if (resize == EB_RESIZE_STRETCH) {
        lb_out->new_w = dst_w;
        lb_out->new_h = dst_h;
        lb_out->pad_left = 0;
        lb_out->pad_top = 0;
        lb_out->scale = (float)((double)dst_w / (double)src_w);
        lb_out->scale_y = (float)((double)dst_h / (double)src_h);
    }
}

static float clampf(float v, float lo, float hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

void eb_letterbox_unmap(const struct eb_letterbox *lb, struct eb_detection *det)
{
    const float rx = lb->scale, ry = lb->scale_y;
    const float l = (float)lb->pad_left, t = (float)lb->pad_top;
    const float w = (float)lb->src_w, h = (float)lb->src_h;
    det->x1 = clampf((det->x1 - l) / rx, 0.0f, w);
    det->x2 = clampf((det->x2 - l) / rx, 0.0f, w);
    det->y1 = clampf((det->y1 - t) / ry, 0.0f, h);
    det->y2 = clampf((det->y2 - t) / ry, 0.0f, h);
}

/*
 * OpenCV INTER_LINEAR source coordinate for destination index `d` (resize.cpp): half-pixel
 * centres, scale = 1 / (dst/src) in double, weight in float, clamped at both borders (the
 * weight becomes 0 there). `*i1` is the second tap (== *i0 at the last pixel).
 */
static void linear_coord(int d, int src_n, int dst_n, int *i0, int *i1, float *frac)
{
    double scale = 1.0 / ((double)dst_n / (double)src_n);
    float f = (float)(((double)d + 0.5) * scale - 0.5);
    int s = (int)floorf(f);
    f -= (float)s;
    if (s < 0) {
        s = 0;
        f = 0.0f;
    }
    if (s >= src_n - 1) {
        s = src_n - 1;
        f = 0.0f;
    }
    *i0 = s;
    *i1 = s + 1 < src_n ? s + 1 : s;
    *frac = f;
}

static void check_args(const uint8_t *src, int src_w, int src_h, const struct eb_letterbox *lb,
                       int channels, const float *dst)
{
    EB_ASSERT(src != NULL && dst != NULL && lb != NULL);
    EB_ASSERT(src_w == lb->src_w && src_h == lb->src_h);
    EB_ASSERT(channels == 1 || channels == 3);
    EB_ASSERT(lb->new_w >= 1 && lb->new_h >= 1 && lb->pad_left >= 0 && lb->pad_top >= 0);
    EB_ASSERT(lb->pad_left + lb->new_w <= lb->dst_w && lb->pad_top + lb->new_h <= lb->dst_h);
}

/* The reference resize into [0,1] planes, padding with pad/255; with `bgr` (3 channels) the
 * frame's R lands in plane 2 and its B in plane 0. */
static void letterbox_ref(const uint8_t *src, int src_w, int src_h, size_t src_stride,
                          const struct eb_letterbox *lb, int channels, int pad_value, int bgr,
                          float *dst)
{
    check_args(src, src_w, src_h, lb, channels, dst);
    const size_t plane = (size_t)lb->dst_w * (size_t)lb->dst_h;
    const float pad = (float)pad_value / 255.0f;
    for (int c = 0; c < channels; c++) {
        const int oc = bgr && channels == 3 ? 2 - c : c;
        for (int y = 0; y < lb->dst_h; y++) {
            float *row = dst + (size_t)oc * plane + (size_t)y * (size_t)lb->dst_w;
            int iy = y - lb->pad_top;
            int sy0 = 0, sy1 = 0;
            float fy = 0.0f;
            int inside_y = iy >= 0 && iy < lb->new_h;
            if (inside_y)
                linear_coord(iy, src_h, lb->new_h, &sy0, &sy1, &fy);
            for (int x = 0; x < lb->dst_w; x++) {
                int ix = x - lb->pad_left;
                if (!inside_y || ix < 0 || ix >= lb->new_w) {
                    row[x] = pad;
                    continue;
                }
                int sx0, sx1;
                float fx;
                linear_coord(ix, src_w, lb->new_w, &sx0, &sx1, &fx);
                const uint8_t *r0 = src + (size_t)sy0 * src_stride;
                const uint8_t *r1 = src + (size_t)sy1 * src_stride;
                float p00 = r0[(size_t)sx0 * 3 + (size_t)c], p01 = r0[(size_t)sx1 * 3 + (size_t)c];
                float p10 = r1[(size_t)sx0 * 3 + (size_t)c], p11 = r1[(size_t)sx1 * 3 + (size_t)c];
                float top = (1.0f - fx) * p00 + fx * p01;
                float bot = (1.0f - fx) * p10 + fx * p11;
                row[x] = ((1.0f - fy) * top + fy * bot) / 255.0f;
            }
        }
    }
}

static void fill_f32(float *p, size_t n, float v)
{
    size_t i = 0;
#if defined(__SSE2__)
    __m128 vv = _mm_set1_ps(v);
    for (; i + 16 <= n; i += 16) {
        _mm_storeu_ps(p + i, vv);
        _mm_storeu_ps(p + i + 4, vv);
        _mm_storeu_ps(p + i + 8, vv);
        _mm_storeu_ps(p + i + 12, vv);
    }
#endif
    for (; i < n; i++)
        p[i] = v;
}

/* out[i] = r0[i] * w0 + r1[i] * w1 with w0 + w1 == 256: at most 255 * 256, fits uint16. */
static void vblend_u8(const uint8_t *r0, const uint8_t *r1, int w0, int w1, uint16_t *out, size_t n)
{
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i vw0 = _mm_set1_epi16((short)w0), vw1 = _mm_set1_epi16((short)w1);
    const __m128i z = _mm_setzero_si128();
    for (; i + 16 <= n; i += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(r0 + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(r1 + i));
        __m128i lo = _mm_add_epi16(_mm_mullo_epi16(_mm_unpacklo_epi8(a, z), vw0),
                                   _mm_mullo_epi16(_mm_unpacklo_epi8(b, z), vw1));
        __m128i hi = _mm_add_epi16(_mm_mullo_epi16(_mm_unpackhi_epi8(a, z), vw0),
                                   _mm_mullo_epi16(_mm_unpackhi_epi8(b, z), vw1));
        _mm_storeu_si128((__m128i *)(void *)(out + i), lo);
        _mm_storeu_si128((__m128i *)(void *)(out + i + 8), hi);
    }
#endif
    for (; i < n; i++)
        out[i] = (uint16_t)(r0[i] * w0 + r1[i] * w1);
}

#if defined(__SSE2__)
/*
 * Horizontal pass for RGB, 4 output pixels per step: each pixel's two taps are the 64-bit loads
 * at vrow + xofs (R0 G0 B0 R1) and vrow + xofs + 3 (R1 G1 B1 R2); the blend gives (R G B -) in
 * one vector, and a 4x4 transpose turns 4 pixels into the R, G and B plane runs. Returns the
 * number of pixels done (a multiple of 4); the caller finishes the rest.
 */
static int hpass_rgb_sse2(const uint16_t *vrow, const int32_t *xofs, const float *xw, int n,
                          float k, float *r, float *g, float *b)
{
    const __m128i z = _mm_setzero_si128();
    const __m128 vk = _mm_set1_ps(k);
    int x = 0;
    for (; x + 4 <= n; x += 4) {
        __m128 px[4];
        for (int i = 0; i < 4; i++) {
            const uint16_t *p = vrow + xofs[x + i];
            __m128i l0 = _mm_loadl_epi64((const __m128i *)(const void *)p);
            __m128i l1 = _mm_loadl_epi64((const __m128i *)(const void *)(p + 3));
            __m128 a = _mm_cvtepi32_ps(_mm_unpacklo_epi16(l0, z));
            __m128 c = _mm_cvtepi32_ps(_mm_unpacklo_epi16(l1, z));
            px[i] = _mm_add_ps(a, _mm_mul_ps(_mm_set1_ps(xw[x + i]), _mm_sub_ps(c, a)));
        }
        _MM_TRANSPOSE4_PS(px[0], px[1], px[2], px[3]);
        _mm_storeu_ps(r + x, _mm_mul_ps(px[0], vk));
        _mm_storeu_ps(g + x, _mm_mul_ps(px[1], vk));
        _mm_storeu_ps(b + x, _mm_mul_ps(px[2], vk));
    }
    return x;
}
#endif

void eb_letterbox_rgb_to_nchw_f32__ref(const uint8_t *src, int src_w, int src_h, size_t src_stride,
                                       const struct eb_letterbox *lb, int channels, float *dst)
{
    letterbox_ref(src, src_w, src_h, src_stride, lb, channels, 114, 0, dst);
}

/* The fast resize into [0,1] planes (see the file comment); `pad_value` and `bgr` as
 * letterbox_ref. */
static void letterbox_fast(const uint8_t *src, int src_w, int src_h, size_t src_stride,
                           const struct eb_letterbox *lb, int channels, int pad_value, int bgr,
                           float *dst)
{
    check_args(src, src_w, src_h, lb, channels, dst);
    if (src_w > EB_LETTERBOX_FAST_MAX_W || lb->new_w > EB_LETTERBOX_FAST_MAX_W) {
        letterbox_ref(src, src_w, src_h, src_stride, lb, channels, pad_value, bgr, dst);
        return;
    }
    /* 16 KiB + 16 KiB + 24 KiB of stack at the maximum width. */
    int32_t xofs[EB_LETTERBOX_FAST_MAX_W];
    float xw[EB_LETTERBOX_FAST_MAX_W];
    /* One extra pixel (copy of the last) for the second tap at the right border, and one more
     * (zero) that the 4-lane loads of the SIMD horizontal pass touch in their unused lane. */
    uint16_t vrow[(EB_LETTERBOX_FAST_MAX_W + 2) * 3];

    const int dst_w = lb->dst_w, dst_h = lb->dst_h, new_w = lb->new_w, new_h = lb->new_h;
    const int left = lb->pad_left, top = lb->pad_top;
    const int right = dst_w - left - new_w, bottom = dst_h - top - new_h;
    const size_t plane = (size_t)dst_w * (size_t)dst_h;
    const float pad = (float)pad_value / 255.0f;
    const float k = 1.0f / (255.0f * 256.0f);
    /* Where the frame's R and B planes go (G stays in plane 1). */
    const size_t r_plane = bgr && channels == 3 ? 2 * plane : 0;
    const size_t b_plane = bgr && channels == 3 ? 0 : 2 * plane;

    for (int x = 0; x < new_w; x++) {
        int s0, s1;
        linear_coord(x, src_w, new_w, &s0, &s1, &xw[x]);
        /* The second tap is always s0 + 1: at the right border vrow holds a copy of the last
         * pixel there and the weight is 0. */
        xofs[x] = s0 * 3;
    }

    for (int c = 0; c < channels; c++) {
        float *pl = dst + (size_t)c * plane;
        fill_f32(pl, (size_t)top * (size_t)dst_w, pad);
        fill_f32(pl + (size_t)(top + new_h) * (size_t)dst_w, (size_t)bottom * (size_t)dst_w, pad);
    }

    const size_t vn = (size_t)src_w * 3;
    vrow[vn + 3] = vrow[vn + 4] = vrow[vn + 5] = 0;
    for (int y = 0; y < new_h; y++) {
        int sy0, sy1;
        float fy;
        linear_coord(y, src_h, new_h, &sy0, &sy1, &fy);
        int w1 = (int)lrintf(fy * 256.0f);
        vblend_u8(src + (size_t)sy0 * src_stride, src + (size_t)sy1 * src_stride, 256 - w1, w1,
                  vrow, vn);
        vrow[vn] = vrow[vn - 3];
        vrow[vn + 1] = vrow[vn - 2];
        vrow[vn + 2] = vrow[vn - 1];

        const size_t row_off = (size_t)(top + y) * (size_t)dst_w;
        for (int c = 0; c < channels; c++) {
            float *row = dst + (size_t)c * plane + row_off;
            fill_f32(row, (size_t)left, pad);
            fill_f32(row + left + new_w, (size_t)right, pad);
        }
        float *r = dst + r_plane + row_off + left;
        if (channels == 3) {
            float *g = dst + plane + row_off + left, *b = dst + b_plane + row_off + left;
            int x0 = 0;
#if defined(__SSE2__)
            x0 = hpass_rgb_sse2(vrow, xofs, xw, new_w, k, r, g, b);
#endif
            for (int x = x0; x < new_w; x++) {
                const uint16_t *p = vrow + xofs[x];
                float f = xw[x];
                float p0 = p[0], p1 = p[1], p2 = p[2];
                r[x] = (p0 + f * ((float)p[3] - p0)) * k;
                g[x] = (p1 + f * ((float)p[4] - p1)) * k;
                b[x] = (p2 + f * ((float)p[5] - p2)) * k;
            }
        } else {
            for (int x = 0; x < new_w; x++) {
                const uint16_t *p = vrow + xofs[x];
                float p0 = p[0];
                r[x] = (p0 + xw[x] * ((float)p[3] - p0)) * k;
            }
        }
    }
}

void eb_letterbox_rgb_to_nchw_f32(const uint8_t *src, int src_w, int src_h, size_t src_stride,
                                  const struct eb_letterbox *lb, int channels, float *dst)
{
    letterbox_fast(src, src_w, src_h, src_stride, lb, channels, 114, 0, dst);
}

void eb_pixel_norm_default(struct eb_pixel_norm *n)
{
    memset(n, 0, sizeof(*n));
    n->pad = 114;
    for (int c = 0; c < 3; c++)
        n->std[c] = 255.0f;
}

int eb_pixel_norm_is_default(const struct eb_pixel_norm *n)
{
    struct eb_pixel_norm d;
    eb_pixel_norm_default(&d);
    return n->bgr == d.bgr && n->pad == d.pad && n->area == d.area &&
           memcmp(n->mean, d.mean, sizeof(d.mean)) == 0 &&
           memcmp(n->std, d.std, sizeof(d.std)) == 0;
}

/* Turns [0,1] planes into (255 v - mean) / std per channel, unless that is the identity. */
static void apply_norm(const struct eb_pixel_norm *n, int channels, size_t plane, float *dst)
{
    for (int c = 0; c < channels; c++) {
        if (n->mean[c] == 0.0f && n->std[c] == 255.0f)
            continue;
        const float mul = 255.0f / n->std[c], add = -n->mean[c] / n->std[c];
        float *p = dst + (size_t)c * plane;
        for (size_t i = 0; i < plane; i++)
            p[i] = p[i] * mul + add;
    }
}

/*
 * OpenCV INTER_AREA taps of output index `d` along an axis shrunk by `scale` = src/dst > 1
 * (resize.cpp computeResizeAreaTab): the source cells the output cell covers, each weighted by
 * its covered share. Calls back through `tap` for each (index, weight) pair.
 */
struct area_axis {
    int first, last; /* whole source cells first..last-1 at weight `inner` */
    int lead, trail; /* partial cells (index, -1 when none) */
    float w_lead, w_trail, inner;
};

static void area_axis_of(int d, int src_n, double scale, struct area_axis *a)
{
    const double f1 = d * scale, f2 = f1 + scale;
    const double cell = scale < src_n - f1 ? scale : src_n - f1;
    int s1 = (int)ceil(f1), s2 = (int)floor(f2);
    if (s2 > src_n)
        s2 = src_n;
    a->first = s1;
    a->last = s2 > s1 ? s2 : s1;
    a->inner = (float)(1.0 / cell);
    a->lead = s1 - f1 > 1e-3 ? s1 - 1 : -1;
    a->w_lead = (float)((s1 - f1) / cell);
    a->trail = f2 - s2 > 1e-3 && s2 < src_n ? s2 : -1;
    const double t = f2 - s2 < 1.0 ? f2 - s2 : 1.0;
    a->w_trail = (float)((t < cell ? t : cell) / cell);
}

/* Sum of weight * row[i * 3 + c] over an axis's taps. */
static float area_sum_x(const uint8_t *row, const struct area_axis *a, int c)
{
    float acc = 0.0f;
    if (a->lead >= 0)
        acc += a->w_lead * row[(size_t)a->lead * 3 + (size_t)c];
    for (int i = a->first; i < a->last; i++)
        acc += a->inner * row[(size_t)i * 3 + (size_t)c];
    if (a->trail >= 0)
        acc += a->w_trail * row[(size_t)a->trail * 3 + (size_t)c];
    return acc;
}

/* The resized area of the canvas by INTER_AREA where no axis grows (the caller checked),
 * into [0,1] planes (pad and channel order as letterbox_ref). Scalar, per output pixel. */
static void letterbox_area(const uint8_t *src, int src_w, int src_h, size_t src_stride,
                           const struct eb_letterbox *lb, int channels, int pad_value, int bgr,
                           float *dst)
{
    check_args(src, src_w, src_h, lb, channels, dst);
    const size_t plane = (size_t)lb->dst_w * (size_t)lb->dst_h;
    const float pad = (float)pad_value / 255.0f;
    const double sx = (double)src_w / lb->new_w, sy = (double)src_h / lb->new_h;
    for (int c = 0; c < channels; c++)
        fill_f32(dst + (size_t)c * plane, plane, pad);
    for (int y = 0; y < lb->new_h; y++) {
        struct area_axis ay;
        area_axis_of(y, src_h, sy, &ay);
        for (int x = 0; x < lb->new_w; x++) {
            struct area_axis ax;
            area_axis_of(x, src_w, sx, &ax);
            for (int c = 0; c < channels; c++) {
                float acc = 0.0f;
                if (ay.lead >= 0)
                    acc += ay.w_lead * area_sum_x(src + (size_t)ay.lead * src_stride, &ax, c);
                for (int i = ay.first; i < ay.last; i++)
                    acc += ay.inner * area_sum_x(src + (size_t)i * src_stride, &ax, c);
                if (ay.trail >= 0)
                    acc += ay.w_trail * area_sum_x(src + (size_t)ay.trail * src_stride, &ax, c);
                const int oc = bgr && channels == 3 ? 2 - c : c;
                dst[(size_t)oc * plane + (size_t)(lb->pad_top + y) * (size_t)lb->dst_w +
                    (size_t)(lb->pad_left + x)] = acc / 255.0f;
            }
        }
    }
}

/* OpenCV resizes by INTER_AREA's pixel-area averaging when no axis grows (src/dst >= 1 on both;
 * one axis may keep its size, as a stretch to a square often does); the same size on both is a
 * copy, which the bilinear path does exactly. */
static int use_area(const struct eb_pixel_norm *n, const struct eb_letterbox *lb, int src_w,
                    int src_h)
{
    return n->area && lb->new_w <= src_w && lb->new_h <= src_h &&
           (lb->new_w < src_w || lb->new_h < src_h);
}

void eb_letterbox_to_nchw_f32_norm(const uint8_t *src, int src_w, int src_h, size_t src_stride,
                                   const struct eb_letterbox *lb, int channels,
                                   const struct eb_pixel_norm *n, float *dst)
{
    if (use_area(n, lb, src_w, src_h))
        letterbox_area(src, src_w, src_h, src_stride, lb, channels, n->pad, n->bgr, dst);
    else
        letterbox_fast(src, src_w, src_h, src_stride, lb, channels, n->pad, n->bgr, dst);
    apply_norm(n, channels, (size_t)lb->dst_w * (size_t)lb->dst_h, dst);
}

void eb_letterbox_to_nchw_f32_norm__ref(const uint8_t *src, int src_w, int src_h, size_t src_stride,
                                        const struct eb_letterbox *lb, int channels,
                                        const struct eb_pixel_norm *n, float *dst)
{
    if (use_area(n, lb, src_w, src_h))
        letterbox_area(src, src_w, src_h, src_stride, lb, channels, n->pad, n->bgr, dst);
    else
        letterbox_ref(src, src_w, src_h, src_stride, lb, channels, n->pad, n->bgr, dst);
    apply_norm(n, channels, (size_t)lb->dst_w * (size_t)lb->dst_h, dst);
}
