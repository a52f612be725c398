/* Reference normalisation and reduction kernels: BatchNormalization, ReduceMean. */
#include <math.h>

#include "engine/cpu/ref/ref.h"

void eb_cpu_batchnorm_f32__ref(int64_t n, int64_t c, int64_t inner, const float *x,
                               const float *scale, const float *bias, const float *mean,
                               const float *var, float eps, float *y)
{
    for (int64_t b = 0; b < n; b++) {
        for (int64_t ch = 0; ch < c; ch++) {
            const float k = scale[ch] / sqrtf(var[ch] + eps);
            const float off = bias[ch] - mean[ch] * k;
            const float *xp = x + (b * c + ch) * inner;
            float *yp = y + (b * c + ch) * inner;
            for (int64_t i = 0; i < inner; i++)
                yp[i] = xp[i] * k + off;
        }
    }
}

void eb_cpu_reduce_mean_f32__ref(int rank, const int64_t *x_shape, const int *reduce,
                                 const float *x, float *y)
{
    int64_t ys[EB_MAX_RANK], idx[EB_MAX_RANK] = {0}, total = 1, ytotal = 1, s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        ys[d] = reduce[d] ? 0 : s;
        s *= reduce[d] ? 1 : x_shape[d];
        total *= x_shape[d];
    }
    ytotal = s;
    for (int64_t i = 0; i < ytotal; i++)
        y[i] = 0.0f;
    for (int64_t i = 0; i < total; i++) {
        int64_t off = 0;
        for (int d = 0; d < rank; d++)
            off += idx[d] * ys[d];
        y[off] += x[i];
        for (int d = rank - 1; d >= 0; d--) {
            if (++idx[d] < x_shape[d])
                break;
            idx[d] = 0;
        }
    }
    const int64_t count = ytotal > 0 ? total / ytotal : 0;
    for (int64_t i = 0; i < ytotal; i++)
        y[i] = count > 0 ? y[i] / (float)count : NAN;
}
