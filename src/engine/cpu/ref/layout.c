/* Reference data-movement kernels: strided slice, transpose, resize (nearest, linear), pad,
 * expand. */
#include <math.h>
#include <string.h>

#include "engine/cpu/ref/ref.h"

void eb_cpu_slice__ref(size_t es, int rank, const int64_t *x_shape, const void *x,
                       const int64_t *start, const int64_t *step, const int64_t *y_shape, void *y)
{
    int64_t xs[EB_MAX_RANK], idx[EB_MAX_RANK] = {0}, total = 1, s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        xs[d] = s;
        s *= x_shape[d];
        total *= y_shape[d];
    }
    const char *px = x;
    char *py = y;
    for (int64_t i = 0; i < total; i++) {
        int64_t off = 0;
        for (int d = 0; d < rank; d++)
            off += (start[d] + idx[d] * step[d]) * xs[d];
        memcpy(py + i * (int64_t)es, px + off * (int64_t)es, es);
        for (int d = rank - 1; d >= 0; d--) {
            if (++idx[d] < y_shape[d])
                break;
            idx[d] = 0;
        }
    }
}

void eb_cpu_transpose__ref(size_t es, int rank, const int64_t *x_shape, const int64_t *perm,
                           const void *x, void *y)
{
    int64_t xs[EB_MAX_RANK], ys[EB_MAX_RANK], one[EB_MAX_RANK];
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        xs[d] = s;
        s *= x_shape[d];
    }
    /* y[i] = x[sum i_d * xs[perm[d]]]: a slice of x with per-output-dim strides. */
    for (int d = 0; d < rank; d++) {
        ys[d] = x_shape[perm[d]];
        one[d] = xs[perm[d]];
    }
    int64_t idx[EB_MAX_RANK] = {0}, total = 1;
    for (int d = 0; d < rank; d++)
        total *= ys[d];
    const char *px = x;
    char *py = y;
    for (int64_t i = 0; i < total; i++) {
        int64_t off = 0;
        for (int d = 0; d < rank; d++)
            off += idx[d] * one[d];
        memcpy(py + i * (int64_t)es, px + off * (int64_t)es, es);
        for (int d = rank - 1; d >= 0; d--) {
            if (++idx[d] < ys[d])
                break;
            idx[d] = 0;
        }
    }
}

float eb_cpu_resize_coord(int64_t o, int64_t in, int64_t out, float scale,
                          enum eb_resize_coord coord)
{
    const float x = (float)o, len_in = (float)in, len_out = (float)out;
    switch (coord) {
    case EB_RESIZE_HALF_PIXEL: return (x + 0.5f) / scale - 0.5f;
    case EB_RESIZE_PYTORCH_HALF_PIXEL: return len_out > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case EB_RESIZE_ALIGN_CORNERS: return out == 1 ? 0.0f : x * (len_in - 1) / (len_out - 1);
    case EB_RESIZE_TF_HALF_PIXEL_FOR_NN: return (x + 0.5f) / scale;
    case EB_RESIZE_HALF_PIXEL_SYMMETRIC: {
        /* ONNX Runtime's mix of float and double, step by step. */
        const float adjustment = len_out / (scale * len_in);
        const float offset = len_in / 2 * (1 - adjustment);
        return (float)((double)offset + ((double)x + 0.5) / (double)scale - 0.5);
    }
    case EB_RESIZE_ASYMMETRIC:
    default: return x / scale;
    }
}

int64_t eb_cpu_resize_nearest_index(int64_t o, int64_t in, int64_t out, float scale,
                                    enum eb_resize_coord coord, enum eb_resize_round rnd)
{
    const double c = eb_cpu_resize_coord(o, in, out, scale, coord);
    double r;
    switch (rnd) {
    case EB_RESIZE_FLOOR: r = floor(c); break;
    case EB_RESIZE_CEIL: r = ceil(c); break;
    case EB_RESIZE_ROUND_PREFER_CEIL: r = floor(c + 0.5); break;
    case EB_RESIZE_ROUND_PREFER_FLOOR:
    default: r = c == floor(c) + 0.5 ? floor(c) : floor(c + 0.5); break;
    }
    if (r < 0)
        return 0;
    if (r > (double)(in - 1))
        return in - 1;
    return (int64_t)r;
}

void eb_cpu_resize_nearest_f32__ref(int rank, const int64_t *x_shape, const float *x,
                                    const int64_t *y_shape, const float *scales,
                                    enum eb_resize_coord coord, enum eb_resize_round rnd, float *y)
{
    int64_t xs[EB_MAX_RANK], idx[EB_MAX_RANK] = {0}, total = 1, s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        xs[d] = s;
        s *= x_shape[d];
        total *= y_shape[d];
    }
    const int last = rank - 1;
    for (int64_t i = 0; i < total; i += y_shape[last]) {
        int64_t off = 0;
        for (int d = 0; d < last; d++)
            off +=
                eb_cpu_resize_nearest_index(idx[d], x_shape[d], y_shape[d], scales[d], coord, rnd) *
                xs[d];
        for (int64_t j = 0; j < y_shape[last]; j++)
            y[i + j] = x[off + eb_cpu_resize_nearest_index(j, x_shape[last], y_shape[last],
                                                           scales[last], coord, rnd)];
        for (int d = last - 1; d >= 0; d--) {
            if (++idx[d] < y_shape[d])
                break;
            idx[d] = 0;
        }
    }
}

/* The two input indices and weights of output index o along one axis (UpsampleBilinear's setup):
 * d1 is the distance to i1, d2 to i2, and both are 0.5 where i1 == i2 (the border). */
static void linear_taps(int64_t o, int64_t in, int64_t out, float scale, enum eb_resize_coord coord,
                        int64_t *i1, int64_t *i2, float *d1, float *d2)
{
    float c = scale == 1.0f ? (float)o : eb_cpu_resize_coord(o, in, out, scale, coord);
    const float hi = (float)(in - 1);
    c = c < hi ? c : hi; /* std::max(0.0f, std::min(c, hi)) */
    c = c > 0.0f ? c : 0.0f;
    *i1 = (int64_t)c < in - 1 ? (int64_t)c : in - 1;
    *i2 = *i1 + 1 < in - 1 ? *i1 + 1 : in - 1;
    *d1 = fabsf(c - (float)*i1);
    *d2 = fabsf(c - (float)*i2);
    if (*i1 == *i2)
        *d1 = *d2 = 0.5f;
}

void eb_cpu_resize_linear_f32__ref(int64_t planes, int64_t ih, int64_t iw, int64_t oh, int64_t ow,
                                   float sh, float sw, enum eb_resize_coord coord, const float *x,
                                   float *y)
{
    for (int64_t p = 0; p < planes; p++) {
        const float *xp = x + p * ih * iw;
        float *yp = y + p * oh * ow;
        for (int64_t i = 0; i < oh; i++) {
            int64_t y1, y2, x1, x2;
            float dy1, dy2, dx1, dx2;
            linear_taps(i, ih, oh, sh, coord, &y1, &y2, &dy1, &dy2);
            const float *r1 = xp + y1 * iw, *r2 = xp + y2 * iw;
            for (int64_t j = 0; j < ow; j++) {
                linear_taps(j, iw, ow, sw, coord, &x1, &x2, &dx1, &dx2);
                yp[i * ow + j] = dx2 * dy2 * r1[x1] + dx1 * dy2 * r1[x2] + dx2 * dy1 * r2[x1] +
                                 dx1 * dy1 * r2[x2];
            }
        }
    }
}

void eb_cpu_pad__ref(size_t es, int rank, const int64_t *x_shape, const void *x, const int64_t *pre,
                     const int64_t *y_shape, enum eb_pad_mode mode, const void *value, void *y)
{
    int64_t xs[EB_MAX_RANK], idx[EB_MAX_RANK] = {0}, total = 1, s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        xs[d] = s;
        s *= x_shape[d];
        total *= y_shape[d];
    }
    const char *px = x;
    char *py = y;
    for (int64_t i = 0; i < total; i++) {
        int64_t off = 0;
        int inside = 1;
        for (int d = 0; d < rank; d++) {
            int64_t xi = idx[d] - pre[d];
            const int64_t n = x_shape[d];
            if (xi < 0 || xi >= n) {
                if (mode == EB_PAD_CONSTANT) {
                    inside = 0;
                    break;
                }
                if (mode == EB_PAD_EDGE)
                    xi = xi < 0 ? 0 : n - 1;
                else
                    xi = xi < 0 ? -xi : 2 * (n - 1) - xi;
            }
            off += xi * xs[d];
        }
        memcpy(py + i * (int64_t)es, inside ? px + off * (int64_t)es : (const char *)value, es);
        for (int d = rank - 1; d >= 0; d--) {
            if (++idx[d] < y_shape[d])
                break;
            idx[d] = 0;
        }
    }
}

void eb_cpu_expand__ref(size_t es, int rank, const int64_t *x_shape, const void *x,
                        const int64_t *y_shape, void *y)
{
    int64_t xs[EB_MAX_RANK], idx[EB_MAX_RANK] = {0}, total = 1, s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        xs[d] = x_shape[d] == 1 ? 0 : s;
        s *= x_shape[d];
        total *= y_shape[d];
    }
    const char *px = x;
    char *py = y;
    for (int64_t i = 0; i < total; i++) {
        int64_t off = 0;
        for (int d = 0; d < rank; d++)
            off += idx[d] * xs[d];
        memcpy(py + i * (int64_t)es, px + off * (int64_t)es, es);
        for (int d = rank - 1; d >= 0; d--) {
            if (++idx[d] < y_shape[d])
                break;
            idx[d] = 0;
        }
    }
}
