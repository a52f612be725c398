/*
 * Calibration statistics of eb_model_synth: BatchNorm folding from the shadow evaluation of the
 * calibration image, and the Detect head's class gain. The rules are described in synth_yolo.c
 * (file comment); this file holds the arithmetic.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/synth_internal.h"

#define BN_EPS 1e-5
/* Variance floor of fold_bn, in units of the isotropic projection variance |w_c|^2 E[x^2]. */
#define BN_FLOOR 100.0

/* Class-gain rule (see eb_synth__pick_class_gain): the share of calibration anchors whose best
 * class score passes CLS_CONF. */
#define CLS_PASS_FRACTION 0.003
#define CLS_CONF          0.25

int eb_synth__fold_bn(float *w, size_t per, float *bias, const float *gamma, const float *beta,
                      int c2, float *y, size_t n, const float *x, size_t nx, double gain,
                      double shift)
{
    double *mv = (double *)calloc((size_t)c2 * 2, sizeof(double));
    double xm2 = 0.0;
    if (mv == NULL)
        return -1;
    for (size_t i = 0; i < nx; i++)
        xm2 += (double)x[i] * (double)x[i];
    xm2 /= (double)nx;
    for (int c = 0; c < c2; c++) {
        const float *yc = y + (size_t)c * n;
        double m = 0.0, v = 0.0;
        for (size_t i = 0; i < n; i++)
            m += yc[i];
        m /= (double)n;
        for (size_t i = 0; i < n; i++)
            v += ((double)yc[i] - m) * ((double)yc[i] - m);
        mv[2 * c] = m;
        mv[2 * c + 1] = v / (double)n;
    }
    for (int c = 0; c < c2; c++) {
        /*
         * The variance is floored at BN_FLOOR times |w_c|^2 E[x^2] (what the channel would show
         * on an isotropic input of the calibration tensor's scale). One calibration image gives
         * few positions in the deep layers, and a frozen-BN random network normalised by those
         * variances alone is chaotic: measured with ONNX Runtime, any other input (another
         * size, gray, noise) then saturates every class score. Floors below ~50 still did so
         * on noise; 100 keeps all three inputs bounded.
         */
        double wn = 0.0, sd, sc, sh;
        float *yc = y + (size_t)c * n;
        for (size_t i = 0; i < per; i++)
            wn += (double)w[(size_t)c * per + i] * (double)w[(size_t)c * per + i];
        sd = sqrt(mv[2 * c + 1] + BN_FLOOR * wn * xm2 + BN_EPS);
        if (gamma == NULL) {
            sc = gain / sd;
            sh = shift - mv[2 * c] * sc;
        } else {
            sc = gamma[c] / sd;
            sh = beta[c] - mv[2 * c] * sc;
        }
        for (size_t i = 0; i < per; i++)
            w[(size_t)c * per + i] = (float)(w[(size_t)c * per + i] * sc);
        bias[c] = (float)sh;
        for (size_t i = 0; i < n; i++)
            yc[i] = (float)(yc[i] * sc + sh);
    }
    free(mv);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * The class gain g of the head (the class conv's output is g * its normalised pre-activation
 * plus the level bias b_l). On the calibration image, anchor a with best normalised class
 * logit M(a) passes conf CLS_CONF when g * M(a) > logit(CLS_CONF) - b_l; g is chosen so that
 * K = max(1, round(CLS_PASS_FRACTION * anchors)) anchors pass: the geometric mean of the K-th
 * and (K+1)-th smallest gains at which anchors start to pass, clamped to [0.05, 64].
 */
double eb_synth__pick_class_gain(const struct eb_synth__act *cls, const float *bias, int nc,
                                 int *oom_out)
{
    size_t total = 0, k = 0, kk;
    double *r, g, lo, hi;
    for (int i = 0; i < 3; i++) {
        if (cls[i].d == NULL)
            return 1.0;
        total += (size_t)cls[i].eh * (size_t)cls[i].ew;
    }
    r = malloc(total * sizeof(double));
    if (r == NULL) {
        *oom_out = 1;
        return 1.0;
    }
    for (int i = 0; i < 3; i++) {
        size_t n = (size_t)cls[i].eh * (size_t)cls[i].ew;
        double t = log(CLS_CONF / (1.0 - CLS_CONF)) - bias[i];
        for (size_t j = 0; j < n; j++) {
            double m = -HUGE_VAL;
            for (int c = 0; c < nc; c++)
                m = fmax(m, (double)cls[i].d[(size_t)c * n + j]);
            r[k++] = t <= 0.0 ? 0.0 : (m > 0.0 ? t / m : HUGE_VAL);
        }
    }
    qsort(r, total, sizeof(double), cmp_double);
    kk = (size_t)floor(CLS_PASS_FRACTION * (double)total + 0.5);
    kk = kk < 1 ? 1 : (kk > total ? total : kk);
    lo = r[kk - 1];
    hi = kk < total ? r[kk] : HUGE_VAL;
    if (!isfinite(lo))
        g = 64.0;
    else if (lo <= 0.0)
        g = isfinite(hi) && hi > 0.0 ? 0.5 * hi : 1.0;
    else if (isfinite(hi))
        g = sqrt(lo * hi);
    else
        g = 1.25 * lo;
    free(r);
    return g < 0.05 ? 0.05 : (g > 64.0 ? 64.0 : g);
}

/*
 * The calibration size: the evaluation that folds the BatchNorms runs at this square size (the
 * graph's imgsz when smaller), 128 for n/s, less for the larger scales so that yolov8x stays
 * within a few seconds.
 */
int eb_synth__calib_size(const struct eb_synth_options *o)
{
    static const int sizes[5] = {128, 128, 96, 96, 64};
    int c = sizes[strchr("nsmlx", o->scale) - "nsmlx"];
    return c < o->imgsz ? c : o->imgsz;
}
