/*
 * Reference 2-D convolutions. Direct loops ordered for locality: for every (output channel,
 * input channel, kernel tap) one weight is broadcast over contiguous output rows, so the inner
 * loop is a unit-stride multiply-add the compiler vectorises (no im2col buffer, no allocation).
 */
#include "engine/cpu/ref/ref.h"

/* Output columns [*lo, *hi) whose input column ow*s - t lies in [0, iw). */
static void col_range(int64_t t, int64_t s, int64_t iw, int64_t ow, int64_t *lo, int64_t *hi)
{
    int64_t a = t <= 0 ? 0 : (t + s - 1) / s;
    int64_t b = iw + t <= 0 ? 0 : (iw + t + s - 1) / s;
    *lo = a < ow ? a : ow;
    *hi = b < ow ? b : ow;
    if (*hi < *lo)
        *hi = *lo;
}

void eb_cpu_conv2d_f32__ref(const struct eb_conv2d_desc *d, const float *x, const float *w,
                            const float *b, float *y)
{
    const int64_t icg = d->ic / d->groups, ocg = d->oc / d->groups;
    const int64_t plane = d->oh * d->ow, iplane = d->ih * d->iw;
    for (int64_t n = 0; n < d->n; n++) {
        for (int64_t oc = 0; oc < d->oc; oc++) {
            float *yp = y + (n * d->oc + oc) * plane;
            const float bias = b != NULL ? b[oc] : 0.0f;
            for (int64_t i = 0; i < plane; i++)
                yp[i] = bias;
            const int64_t g = oc / ocg;
            for (int64_t c = 0; c < icg; c++) {
                const float *xp = x + (n * d->ic + g * icg + c) * iplane;
                const float *wk = w + (oc * icg + c) * d->kh * d->kw;
                for (int64_t kh = 0; kh < d->kh; kh++) {
                    for (int64_t kw = 0; kw < d->kw; kw++) {
                        const float wv = wk[kh * d->kw + kw];
                        const int64_t t = d->pad_l - kw * d->dil_w;
                        int64_t lo, hi;
                        col_range(t, d->stride_w, d->iw, d->ow, &lo, &hi);
                        for (int64_t oh = 0; oh < d->oh; oh++) {
                            const int64_t ih = oh * d->stride_h - d->pad_t + kh * d->dil_h;
                            if (ih < 0 || ih >= d->ih)
                                continue;
                            const float *xr = xp + ih * d->iw - t;
                            float *yr = yp + oh * d->ow;
                            if (d->stride_w == 1) {
                                for (int64_t o = lo; o < hi; o++)
                                    yr[o] += wv * xr[o];
                            } else {
                                for (int64_t o = lo; o < hi; o++)
                                    yr[o] += wv * xr[o * d->stride_w];
                            }
                        }
                    }
                }
            }
        }
    }
}

void eb_cpu_conv2d_u8_i32__ref(const struct eb_conv2d_desc *d, const uint8_t *x, int32_t x_zp,
                               const void *w, int w_signed, const int32_t *w_zp, size_t n_w_zp,
                               int32_t *y)
{
    const int64_t icg = d->ic / d->groups, ocg = d->oc / d->groups;
    const int64_t plane = d->oh * d->ow, iplane = d->ih * d->iw;
    for (int64_t n = 0; n < d->n; n++) {
        for (int64_t oc = 0; oc < d->oc; oc++) {
            int32_t *yp = y + (n * d->oc + oc) * plane;
            const int32_t wzp = w_zp[n_w_zp == 1 ? 0 : oc];
            for (int64_t i = 0; i < plane; i++)
                yp[i] = 0;
            const int64_t g = oc / ocg;
            for (int64_t c = 0; c < icg; c++) {
                const uint8_t *xp = x + (n * d->ic + g * icg + c) * iplane;
                const int64_t wbase = (oc * icg + c) * d->kh * d->kw;
                for (int64_t kh = 0; kh < d->kh; kh++) {
                    for (int64_t kw = 0; kw < d->kw; kw++) {
                        const int64_t wi = wbase + kh * d->kw + kw;
                        const int32_t wv = (w_signed ? (int32_t)((const int8_t *)w)[wi]
                                                     : (int32_t)((const uint8_t *)w)[wi]) -
                                           wzp;
                        const int64_t t = d->pad_l - kw * d->dil_w;
                        int64_t lo, hi;
                        col_range(t, d->stride_w, d->iw, d->ow, &lo, &hi);
                        for (int64_t oh = 0; oh < d->oh; oh++) {
                            const int64_t ih = oh * d->stride_h - d->pad_t + kh * d->dil_h;
                            if (ih < 0 || ih >= d->ih)
                                continue;
                            const uint8_t *xr = xp + ih * d->iw - t;
                            int32_t *yr = yp + oh * d->ow;
                            for (int64_t o = lo; o < hi; o++)
                                yr[o] += wv * ((int32_t)xr[o * d->stride_w] - x_zp);
                        }
                    }
                }
            }
        }
    }
}
