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
