/*
 * Scalar float32 reference ops for the synthesizer's shadow evaluation (see synth_eval.h) and
 * the calibration image. Plain loops, written so that the compiler can vectorise the inner ones
 * (restrict rows, four output channels per pass over the input).
 */
#include "model/synth_eval.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* y[0..3][i] += w[0..3] * x[i] for i in [0, n); nb (1..4) rows are live. */
static void axpy_rows(float *const *y, const float *w, int nb, const float *restrict x, size_t n,
                      size_t xstep)
{
    if (nb == 4 && xstep == 1) {
        float *restrict y0 = y[0], *restrict y1 = y[1], *restrict y2 = y[2], *restrict y3 = y[3];
        const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
        for (size_t i = 0; i < n; i++) {
            float v = x[i];
            y0[i] += w0 * v;
            y1[i] += w1 * v;
            y2[i] += w2 * v;
            y3[i] += w3 * v;
        }
        return;
    }
    for (int b = 0; b < nb; b++) {
        float *restrict yb = y[b];
        const float wb = w[b];
        if (xstep == 1)
            for (size_t i = 0; i < n; i++)
                yb[i] += wb * x[i];
        else
            for (size_t i = 0; i < n; i++)
                yb[i] += wb * x[i * xstep];
    }
}

void eb_synth__conv2d(const float *x, int cin, int h, int w, const float *wt, const float *bias,
                      int cout, int k, int stride, int groups, float *y)
{
    const int pad = k / 2;
    const int oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
    const int cin_g = cin / groups, cout_g = cout / groups;
    const size_t ohw = (size_t)oh * (size_t)ow, hw = (size_t)h * (size_t)w, kk = (size_t)k * k;

    for (int co0 = 0; co0 < cout; co0 += 4) {
        const int g = co0 / cout_g;
        int nb = cout - co0 < 4 ? cout - co0 : 4;
        float *yo[4];
        float wv[4];
        /* the four channels of a pass share their group */
        if ((co0 + nb - 1) / cout_g != g)
            nb = (g + 1) * cout_g - co0;
        for (int b = 0; b < nb; b++) {
            yo[b] = y + (size_t)(co0 + b) * ohw;
            for (size_t i = 0; i < ohw; i++)
                yo[b][i] = bias != NULL ? bias[co0 + b] : 0.0f;
        }
        for (int ci = 0; ci < cin_g; ci++) {
            const float *xi = x + (size_t)(g * cin_g + ci) * hw;
            for (int ky = 0; ky < k; ky++)
                for (int kx = 0; kx < k; kx++) {
                    int lo = 0, hi = ow - 1;
                    for (int b = 0; b < nb; b++)
                        wv[b] = wt[((size_t)(co0 + b) * (size_t)cin_g + (size_t)ci) * kk +
                                   (size_t)ky * (size_t)k + (size_t)kx];
                    if (k == 1 && stride == 1) {
                        axpy_rows(yo, wv, nb, xi, ohw, 1);
                        continue;
                    }
                    /* valid ox: 0 <= ox * stride - pad + kx <= w - 1 */
                    if (pad - kx > 0)
                        lo = (pad - kx + stride - 1) / stride;
                    if ((w - 1 + pad - kx) / stride < hi)
                        hi = (w - 1 + pad - kx) / stride;
                    if (hi < lo)
                        continue;
                    for (int oy = 0; oy < oh; oy++) {
                        int iy = oy * stride - pad + ky;
                        float *rows[4];
                        if (iy < 0 || iy >= h)
                            continue;
                        for (int b = 0; b < nb; b++)
                            rows[b] = yo[b] + (size_t)oy * (size_t)ow + (size_t)lo;
                        axpy_rows(rows, wv, nb,
                                  xi + (size_t)iy * (size_t)w + (size_t)(lo * stride - pad + kx),
                                  (size_t)(hi - lo + 1), (size_t)stride);
                    }
                }
        }
        co0 += nb - 4; /* a short pass at a group boundary */
    }
}

void eb_synth__silu(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float s = 1.0f / (1.0f + expf(-x[i]));
        x[i] = x[i] * s;
    }
}

void eb_synth__maxpool5(const float *x, int c, int h, int w, float *y)
{
    for (int ch = 0; ch < c; ch++) {
        const float *xc = x + (size_t)ch * (size_t)h * (size_t)w;
        float *yc = y + (size_t)ch * (size_t)h * (size_t)w;
        for (int oy = 0; oy < h; oy++)
            for (int ox = 0; ox < w; ox++) {
                float m = -INFINITY;
                for (int iy = oy - 2; iy <= oy + 2; iy++) {
                    if (iy < 0 || iy >= h)
                        continue;
                    for (int ix = ox - 2; ix <= ox + 2; ix++) {
                        float v;
                        if (ix < 0 || ix >= w)
                            continue;
                        v = xc[(size_t)iy * (size_t)w + (size_t)ix];
                        m = v > m ? v : m;
                    }
                }
                yc[(size_t)oy * (size_t)w + (size_t)ox] = m;
            }
    }
}

void eb_synth__resize2x(const float *x, int c, int h, int w, float *y)
{
    for (int ch = 0; ch < c; ch++)
        for (int oy = 0; oy < 2 * h; oy++) {
            const float *row = x + ((size_t)ch * (size_t)h + (size_t)(oy / 2)) * (size_t)w;
            float *out = y + ((size_t)ch * (size_t)(2 * h) + (size_t)oy) * (size_t)(2 * w);
            for (int ox = 0; ox < 2 * w; ox++)
                out[ox] = row[ox / 2];
        }
}

void eb_synth__attention(const float *qkv, int heads, int kd, int hd, int n, float *out,
                         float *v_out, float *row)
{
    const float scale = (float)(1.0 / sqrt((double)kd));
    const size_t nn = (size_t)n;
    for (int hh = 0; hh < heads; hh++) {
        const float *q = qkv + (size_t)hh * (size_t)(2 * kd + hd) * nn;
        const float *kk = q + (size_t)kd * nn;
        const float *v = kk + (size_t)kd * nn;
        float *o = out + (size_t)hh * (size_t)hd * nn;
        memcpy(v_out + (size_t)hh * (size_t)hd * nn, v, (size_t)hd * nn * sizeof(float));
        for (size_t i = 0; i < nn; i++) {
            /* row i of attn = softmax_j(sum_d q[d][i] k[d][j] * scale); o[:, i] = v @ row */
            float mx = -INFINITY, sum = 0.0f;
            for (size_t j = 0; j < nn; j++) {
                float a = 0.0f;
                for (int d = 0; d < kd; d++)
                    a += q[(size_t)d * nn + i] * kk[(size_t)d * nn + j];
                row[j] = a * scale;
                mx = row[j] > mx ? row[j] : mx;
            }
            for (size_t j = 0; j < nn; j++) {
                row[j] = expf(row[j] - mx);
                sum += row[j];
            }
            for (size_t j = 0; j < nn; j++)
                row[j] /= sum;
            for (int d = 0; d < hd; d++) {
                const float *vd = v + (size_t)d * nn;
                float acc = 0.0f;
                for (size_t j = 0; j < nn; j++)
                    acc += vd[j] * row[j];
                o[(size_t)d * nn + i] = acc;
            }
        }
    }
}

void eb_synth__detect_tail(const float *box, const float *cls, int nc, size_t nanch,
                           const float *ax, const float *ay, const float *stride, float *out)
{
    for (size_t a = 0; a < nanch; a++) {
        float dist[4];
        for (int side = 0; side < 4; side++) {
            float mx = -INFINITY, sum = 0.0f, acc = 0.0f;
            for (int j = 0; j < 16; j++) {
                float v = box[(size_t)(side * 16 + j) * nanch + a];
                mx = v > mx ? v : mx;
            }
            for (int j = 0; j < 16; j++) {
                float e = expf(box[(size_t)(side * 16 + j) * nanch + a] - mx);
                sum += e;
                acc += e * (float)j;
            }
            dist[side] = acc / sum;
        }
        {
            float x1 = ax[a] - dist[0], y1 = ay[a] - dist[1];
            float x2 = ax[a] + dist[2], y2 = ay[a] + dist[3];
            out[0 * nanch + a] = (x1 + x2) / 2.0f * stride[a];
            out[1 * nanch + a] = (y1 + y2) / 2.0f * stride[a];
            out[2 * nanch + a] = (x2 - x1) * stride[a];
            out[3 * nanch + a] = (y2 - y1) * stride[a];
        }
        for (int c = 0; c < nc; c++)
            out[(size_t)(4 + c) * nanch + a] = 1.0f / (1.0f + expf(-cls[(size_t)c * nanch + a]));
    }
}

/* ---- calibration image ---- */

/* Uniform in [0, 1) from a hash of (a, b, c): deterministic pixel noise and scene layout. */
static float hash01(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t x =
        a * 0x9E3779B1u ^ (b + 0x7F4A7C15u) * 0x85EBCA77u ^ (c + 0x165667B1u) * 0xC2B2AE3Du;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    x *= 0x297A2D39u;
    x ^= x >> 15;
    return (float)(x >> 8) / 16777216.0f;
}

static float clamp01(float v)
{
    return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
}

void eb_model__synth_calib_image(int size, float *out)
{
    const size_t plane = (size_t)size * (size_t)size;
    for (int y = 0; y < size; y++)
        for (int x = 0; x < size; x++) {
            /* pixel centre in [0, 1) */
            float u = ((float)x + 0.5f) / (float)size, v = ((float)y + 0.5f) / (float)size;
            float rgb[3];
            if (v < 0.42f) { /* sky: blue to pale towards the horizon */
                rgb[0] = 0.45f + 0.4f * v;
                rgb[1] = 0.6f + 0.3f * v;
                rgb[2] = 0.9f - 0.2f * v;
            } else { /* ground: darker towards the bottom, warm to the left */
                rgb[0] = 0.42f - 0.15f * v + 0.08f * (1.0f - u);
                rgb[1] = 0.45f - 0.15f * v;
                rgb[2] = 0.38f - 0.12f * v;
            }
            /* road: a trapezoid with lane marks */
            {
                float half = 0.05f + 0.45f * (v - 0.42f) / 0.58f;
                if (v >= 0.42f && fabsf(u - 0.5f) < half) {
                    rgb[0] = rgb[1] = 0.30f - 0.05f * v;
                    rgb[2] = 0.32f - 0.05f * v;
                    if (fabsf(u - 0.5f) < 0.006f + 0.01f * v && fmodf(v * 14.0f, 1.0f) < 0.5f)
                        rgb[0] = rgb[1] = rgb[2] = 0.92f;
                }
            }
            /* buildings and vehicles: rectangles with edges and a darker inner frame */
            for (uint32_t r = 0; r < 14; r++) {
                float cx = hash01(r, 1, 0), w = 0.05f + 0.18f * hash01(r, 2, 0);
                float by = r < 6 ? 0.42f : 0.45f + 0.5f * hash01(r, 3, 0);
                float hgt =
                    r < 6 ? 0.1f + 0.25f * hash01(r, 4, 0) : 0.04f + 0.12f * hash01(r, 4, 0);
                if (fabsf(u - cx) < w / 2 && v < by && v > by - hgt) {
                    float edge = fminf(fminf(u - (cx - w / 2), (cx + w / 2) - u),
                                       fminf(v - (by - hgt), by - v));
                    for (int c = 0; c < 3; c++)
                        rgb[c] = 0.1f + 0.8f * hash01(r, 5, (uint32_t)c);
                    if (edge < 0.008f)
                        for (int c = 0; c < 3; c++)
                            rgb[c] *= 0.5f;
                    /* windows on the buildings */
                    if (r < 6 && fmodf(u * 60.0f, 1.0f) < 0.4f && fmodf(v * 50.0f, 1.0f) < 0.4f)
                        for (int c = 0; c < 3; c++)
                            rgb[c] = 0.15f + 0.7f * rgb[c];
                }
            }
            /* people-like blobs: ellipses with a soft shading */
            for (uint32_t b = 0; b < 8; b++) {
                float cx = 0.05f + 0.9f * hash01(b, 6, 0), cy = 0.5f + 0.4f * hash01(b, 7, 0);
                float rx = 0.012f + 0.02f * hash01(b, 8, 0), ry = rx * 2.6f;
                float d = ((u - cx) * (u - cx)) / (rx * rx) + ((v - cy) * (v - cy)) / (ry * ry);
                if (d < 1.0f)
                    for (int c = 0; c < 3; c++)
                        rgb[c] = (0.15f + 0.7f * hash01(b, 9, (uint32_t)c)) * (1.0f - 0.3f * d);
            }
            /* foliage on both sides of the road: strong per-pixel texture, so the first
             * convs also see high-frequency energy */
            if (v > 0.3f && v < 0.62f && (u < 0.16f || u > 0.86f)) {
                float t = hash01((uint32_t)x, (uint32_t)y, 3u);
                rgb[0] = 0.1f + 0.5f * t * hash01((uint32_t)x, (uint32_t)y, 4u);
                rgb[1] = 0.15f + 0.7f * t;
                rgb[2] = 0.05f + 0.4f * t * hash01((uint32_t)x, (uint32_t)y, 5u);
            }
            for (int c = 0; c < 3; c++) {
                float n = 0.04f * (hash01((uint32_t)x, (uint32_t)y, (uint32_t)c + 11u) - 0.5f);
                out[(size_t)c * plane + (size_t)y * (size_t)size + (size_t)x] = clamp01(rgb[c] + n);
            }
        }
}
