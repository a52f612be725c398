/* Reference max pooling (NCHW); padded positions are skipped, never read. */
#include <math.h>

#include "engine/cpu/ref/ref.h"

void eb_cpu_maxpool2d_f32__ref(const struct eb_pool2d_desc *d, const float *x, float *y)
{
    for (int64_t p = 0; p < d->n * d->c; p++) {
        const float *xp = x + p * d->ih * d->iw;
        float *yp = y + p * d->oh * d->ow;
        for (int64_t oh = 0; oh < d->oh; oh++) {
            for (int64_t ow = 0; ow < d->ow; ow++) {
                float m = -INFINITY;
                for (int64_t kh = 0; kh < d->kh; kh++) {
                    const int64_t ih = oh * d->stride_h - d->pad_t + kh * d->dil_h;
                    if (ih < 0 || ih >= d->ih)
                        continue;
                    for (int64_t kw = 0; kw < d->kw; kw++) {
                        const int64_t iw = ow * d->stride_w - d->pad_l + kw * d->dil_w;
                        if (iw < 0 || iw >= d->iw)
                            continue;
                        const float v = xp[ih * d->iw + iw];
                        if (v > m || isnan(v))
                            m = v;
                    }
                }
                yp[oh * d->ow + ow] = m;
            }
        }
    }
}

void eb_cpu_avgpool2d_f32__ref(const struct eb_pool2d_desc *d, int count_include_pad,
                               const float *x, float *y)
{
    for (int64_t p = 0; p < d->n * d->c; p++) {
        const float *xp = x + p * d->ih * d->iw;
        float *yp = y + p * d->oh * d->ow;
        for (int64_t oh = 0; oh < d->oh; oh++) {
            for (int64_t ow = 0; ow < d->ow; ow++) {
                const int64_t h0 = oh * d->stride_h - d->pad_t, w0 = ow * d->stride_w - d->pad_l;
                float s = 0.0f;
                int64_t cnt = 0;
                for (int64_t kh = 0; kh < d->kh; kh++) {
                    const int64_t ih = h0 + kh;
                    if (ih < 0 || ih >= d->ih)
                        continue;
                    for (int64_t kw = 0; kw < d->kw; kw++) {
                        const int64_t iw = w0 + kw;
                        if (iw < 0 || iw >= d->iw)
                            continue;
                        s += xp[ih * d->iw + iw];
                        cnt++;
                    }
                }
                if (count_include_pad) {
                    /* The window clipped to the padded input (ceil_mode windows may overhang). */
                    const int64_t he =
                        h0 + d->kh < d->ih + d->pad_b ? h0 + d->kh : d->ih + d->pad_b;
                    const int64_t we =
                        w0 + d->kw < d->iw + d->pad_r ? w0 + d->kw : d->iw + d->pad_r;
                    cnt = (he - h0) * (we - w0);
                }
                yp[oh * d->ow + ow] = cnt > 0 ? s / (float)cnt : 0.0f;
            }
        }
    }
}

void eb_cpu_global_avgpool_f32__ref(int64_t outer, int64_t inner, const float *x, float *y)
{
    for (int64_t p = 0; p < outer; p++) {
        double s = 0.0;
        for (int64_t i = 0; i < inner; i++)
            s += x[p * inner + i];
        y[p] = inner > 0 ? (float)(s / (double)inner) : 0.0f;
    }
}
