/* The epilogue's scalar definition (see epilogue.h). */
#include <math.h>

#include "engine/cpu/epilogue.h"

const char *eb_act_name(enum eb_act act)
{
    switch (act) {
    case EB_ACT_NONE: return "none";
    case EB_ACT_RELU: return "relu";
    case EB_ACT_LEAKY_RELU: return "leaky_relu";
    case EB_ACT_CLIP: return "clip";
    case EB_ACT_SIGMOID: return "sigmoid";
    case EB_ACT_SILU: return "silu";
    case EB_ACT_HARD_SIGMOID: return "hard_sigmoid";
    case EB_ACT_HARD_SWISH: return "hard_swish";
    case EB_ACT_TANH: return "tanh";
    }
    return "?";
}

float eb_cpu_act_f32__ref(enum eb_act act, float alpha, float beta, float y)
{
    switch (act) {
    case EB_ACT_NONE: return y;
    case EB_ACT_RELU: return y > 0.0f ? y : 0.0f;
    case EB_ACT_LEAKY_RELU: return y < 0.0f ? alpha * y : y;
    case EB_ACT_CLIP: return y < alpha ? alpha : y > beta ? beta : y;
    case EB_ACT_SIGMOID: return 1.0f / (1.0f + expf(-y));
    case EB_ACT_SILU: return y / (1.0f + expf(-y));
    case EB_ACT_HARD_SIGMOID: {
        float v = alpha * y + beta;
        return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    }
    case EB_ACT_HARD_SWISH: {
        float v = y / 6.0f + 0.5f;
        return y * (v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v);
    }
    case EB_ACT_TANH: return tanhf(y);
    }
    return y;
}

void eb_cpu_epilogue_f32__ref(const struct eb_epilogue *e, size_t n, const float *r, float *y)
{
    if (e->act == EB_ACT_NONE && !e->residual && !e->fake_quant)
        return;
    for (size_t i = 0; i < n; i++) {
        float v = eb_cpu_act_f32__ref(e->act, e->alpha, e->beta, y[i]);
        if (e->residual)
            v += r[i];
        if (e->fake_quant) {
            float q = nearbyintf(v / e->fq_scale) + (float)e->fq_zp;
            q = q < (float)e->fq_qmin   ? (float)e->fq_qmin
                : q > (float)e->fq_qmax ? (float)e->fq_qmax
                                        : q;
            v = (q - (float)e->fq_zp) * e->fq_scale;
        }
        y[i] = v;
    }
}
