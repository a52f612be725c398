/* Reference quantization kernels (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear). */
#include <math.h>

#include "engine/cpu/ref/ref.h"

static float sat(float v, float lo, float hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

void eb_cpu_quantize_f32__ref(int64_t n, int64_t channels, int64_t inner, const float *x,
                              const float *scale, const void *zp, int out_signed, void *y)
{
    const float lo = out_signed ? -128.0f : 0.0f, hi = out_signed ? 127.0f : 255.0f;
    for (int64_t i = 0; i < n; i++) {
        const int64_t c = channels == 1 ? 0 : (i / inner) % channels;
        const float z = zp == NULL   ? 0.0f
                        : out_signed ? (float)((const int8_t *)zp)[c]
                                     : (float)((const uint8_t *)zp)[c];
        /* nearbyintf rounds half to even in the default rounding mode, as ONNX specifies. */
        float q = sat(nearbyintf(x[i] / scale[c]) + z, lo, hi);
        if (q != q)
            q = z;
        if (out_signed)
            ((int8_t *)y)[i] = (int8_t)q;
        else
            ((uint8_t *)y)[i] = (uint8_t)q;
    }
}

void eb_cpu_dequantize_f32__ref(int64_t n, int64_t channels, int64_t inner, enum eb_dtype dt,
                                const void *x, const float *scale, const void *zp, float *y)
{
    for (int64_t i = 0; i < n; i++) {
        const int64_t c = channels == 1 ? 0 : (i / inner) % channels;
        int32_t v, z = 0;
        switch (dt) {
        case EB_DTYPE_I8:
            v = ((const int8_t *)x)[i];
            z = zp != NULL ? ((const int8_t *)zp)[c] : 0;
            break;
        case EB_DTYPE_I32:
            v = ((const int32_t *)x)[i];
            z = zp != NULL ? ((const int32_t *)zp)[c] : 0;
            break;
        default:
            v = ((const uint8_t *)x)[i];
            z = zp != NULL ? ((const uint8_t *)zp)[c] : 0;
            break;
        }
        y[i] = (float)((int64_t)v - z) * scale[c];
    }
}

void eb_cpu_dynamic_quantize_f32__ref(int64_t n, const float *x, uint8_t *y, float *scale_out,
                                      uint8_t *zp_out)
{
    float mn = 0.0f, mx = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        mn = x[i] < mn ? x[i] : mn;
        mx = x[i] > mx ? x[i] : mx;
    }
    /* Same degenerate-range rule as ONNX Runtime: an all-zero input gets scale 1. */
    const float scale = mx == mn ? 1.0f : (mx - mn) / 255.0f;
    const float zp = nearbyintf(sat(0.0f - mn / scale, 0.0f, 255.0f));
    for (int64_t i = 0; i < n; i++) {
        float q = sat(nearbyintf(x[i] / scale) + zp, 0.0f, 255.0f);
        y[i] = (uint8_t)(q == q ? q : zp);
    }
    *scale_out = scale;
    *zp_out = (uint8_t)zp;
}
