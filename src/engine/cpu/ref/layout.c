/* Reference data-movement kernels: strided slice, transpose, nearest resize, pad, expand. */
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

int64_t eb_cpu_resize_nearest_index(int64_t o, int64_t in, int64_t out, float scale,
                                    enum eb_resize_coord coord, enum eb_resize_round rnd)
{
    double c;
    switch (coord) {
    case EB_RESIZE_HALF_PIXEL: c = ((double)o + 0.5) / scale - 0.5; break;
    case EB_RESIZE_PYTORCH_HALF_PIXEL: c = out > 1 ? ((double)o + 0.5) / scale - 0.5 : 0.0; break;
    case EB_RESIZE_ALIGN_CORNERS:
        c = out > 1 ? (double)o * (double)(in - 1) / (double)(out - 1) : 0.0;
        break;
    case EB_RESIZE_ASYMMETRIC:
    default: c = (double)o / scale; break;
    }
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
