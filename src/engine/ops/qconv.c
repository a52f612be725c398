/*
 * edgebench.QLinearConv: an integer convolution made by the --qdq int8 pass (ir/passes_qdq.c)
 * from DequantizeLinear(x_q) → Conv(DequantizeLinear(w_q), bias) → QuantizeLinear(y_scale,
 * y_zp); never imported from a model (eb_op_find does not hand out "edgebench." names).
 *
 * Inputs: 0 x_q (uint8 [N,C,H,W]), 1 w_q (int8/uint8 constant), 2 bias (float [OC] constant,
 * optional). Output: y_q (uint8 or int8). Zero points and scales live in the params:
 *
 *     acc = Σ (x_q - x_zp)(w_q - w_zp[oc])                         exact int32
 *     y_q = sat(round_half_even(fma((float)acc, mult[oc], bias[oc])) + y_zp)
 *     mult[oc] = x_scale * w_scale[oc] / y_scale,  bias[oc] = bias_f[oc] / y_scale
 *
 * Without a QuantizeLinear after the Conv (Q/DQ at the Conv inputs only, TensorRT's placement)
 * the output is float: y = act((float)acc * (x_scale * w_scale[oc]) + bias_f[oc]) with the
 * activation the pass absorbed (relu, leaky relu, silu), by cpu/dequant_i32.h's kernel.
 *
 * The float graph instead sums the dequantised products in float (in whatever order its Conv
 * kernel uses), adds the bias, and QuantizeLinear divides by y_scale; here acc is exact and the
 * scales are folded into one multiplier with a single rounding (fma), so the value before
 * rounding differs by a few ulps and y_q by at most one step where it lies within that of a
 * rounding boundary (.5).
 */
#include <math.h>
#include <string.h>

#include "engine/cpu/conv_u8.h"
#include "engine/cpu/dequant_i32.h"
#include "engine/ops/op.h"
#include "engine/ops/qconv.h"

static enum eb_status check_qconv(struct eb_op_ctx *ctx)
{
    return eb_op_unsupported(ctx, "edgebench.QLinearConv in a model file");
}

static enum eb_status infer_qconv(struct eb_op_ctx *ctx)
{
    const struct eb_qconv_params *p = ctx->n->params;
    if (p == NULL)
        return eb_op_unsupported(ctx, "edgebench.QLinearConv without parameters");
    const int64_t shape[4] = {p->d.n, p->d.oc, p->d.oh, p->d.ow};
    const int out_signed = p->lut != NULL ? p->out_signed : p->y_signed;
    return eb_op_set_out(ctx, 0,
                         p->y_float   ? EB_DTYPE_F32
                         : out_signed ? EB_DTYPE_I8
                                      : EB_DTYPE_U8,
                         4, shape);
}

static enum eb_status prepare_qconv(struct eb_op_prepare *pp)
{
    struct eb_graph *g = pp->op.g;
    struct eb_ir_node *n = pp->op.n;
    struct eb_qconv_params *p = n->params;
    size_t conv_scratch = 0;
    enum eb_status st = eb_cpu_conv2d_u8_prepare(
        &p->d, eb_op_in(g, n, 1)->data, p->w_signed, p->w_zp, (size_t)p->d.oc, pp->isa,
        pp->n_workers, &g->arena, &p->plan, &conv_scratch, &pp->packed_bytes);
    if (st != EB_OK)
        return eb_op_fail(&pp->op, st, "out of memory packing the weights");
    if (p->plan != NULL && eb_cpu_conv2d_u8_fuses_requant(p->plan) && !p->y_float) {
        pp->scratch_bytes = conv_scratch;
    } else if (p->plan != NULL) {
        p->acc_offset = eb_cpu_align64(conv_scratch);
        pp->scratch_bytes =
            p->acc_offset + eb_cpu_align64((size_t)(p->d.n * p->d.oc * p->d.oh * p->d.ow) * 4);
    }
    return EB_OK;
}

static int32_t sat_q(float v, int y_signed)
{
    const float lo = y_signed ? -128.0f : 0.0f, hi = y_signed ? 127.0f : 255.0f;
    return (int32_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* Requantises output channel plane `task` (n * OC + oc) of the int32 accumulator. */
struct requant {
    const struct eb_qconv_params *p;
    const int32_t *acc;
    void *y;
};

static void requant_task(void *ctx, size_t task, int worker)
{
    const struct requant *r = ctx;
    const struct eb_qconv_params *p = r->p;
    const int64_t plane = p->d.oh * p->d.ow, oc = (int64_t)task % p->d.oc;
    (void)worker;
    eb_cpu_requant_i32(p, plane, r->acc + (int64_t)task * plane, p->mult[oc], p->bias[oc],
                       (uint8_t *)r->y + (int64_t)task * plane);
}

void eb_cpu_requant_i32(const struct eb_qconv_params *p, int64_t n, const int32_t *acc, float mult,
                        float bias, uint8_t *y)
{
#if defined(__x86_64__) || defined(_M_X64)
    if (p->plan != NULL) {
        eb_cpu_requant_i32__avx2(n, acc, mult, bias, (float)p->y_zp, p->y_signed, p->lut, y);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) {
        const int32_t q =
            sat_q(nearbyintf(fmaf((float)acc[i], mult, bias)) + (float)p->y_zp, p->y_signed);
        y[i] = p->lut != NULL ? p->lut[(uint8_t)q] : (uint8_t)q; /* int8: two's complement */
    }
}

static void exec_qconv(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct eb_qconv_params *p = n->params;
    const uint8_t *x = eb_op_in(g, n, 0)->data;
    void *y = eb_op_out(g, n, 0)->data;
    if (p->plan != NULL && ex->cpu->isa != EB_CPU_ISA_REF &&
        eb_cpu_conv2d_u8_fuses_requant(p->plan) && !p->y_float) {
        const struct eb_conv2d_u8_requant rq = {.mult = p->mult,
                                                .bias = p->bias,
                                                .y_zp = (float)p->y_zp,
                                                .y_signed = p->y_signed,
                                                .lut = p->lut};
        eb_cpu_conv2d_u8_run_requant(p->plan, ex->cpu, x, p->x_zp, &rq, y);
        return;
    }
    if (p->plan != NULL && ex->cpu->isa != EB_CPU_ISA_REF) {
        int32_t *acc = (int32_t *)((uint8_t *)ex->cpu->scratch + p->acc_offset);
        eb_cpu_conv2d_u8_run(p->plan, ex->cpu, x, p->x_zp, acc);
        if (p->y_float) {
            const struct eb_epilogue epi = {.act = p->act, .alpha = p->alpha};
            const struct eb_dequant_i32_args a = {.n = p->d.n,
                                                  .channels = p->d.oc,
                                                  .inner = p->d.oh * p->d.ow,
                                                  .x = acc,
                                                  .scales = p->mult,
                                                  .bias = p->bias,
                                                  .epi = &epi,
                                                  .y = y};
            eb_cpu_dequantize_i32(ex->cpu, &a);
            return;
        }
        struct requant r = {.p = p, .acc = acc, .y = y};
        eb_threadpool_run(ex->cpu->pool, (size_t)(p->d.n * p->d.oc), requant_task, &r);
        return;
    }
    /* Reference: one output at a time (no scratch). */
    const struct eb_conv2d_desc *d = &p->d;
    const int64_t icg = d->ic / d->groups, ocg = d->oc / d->groups;
    const void *w = eb_op_in(g, n, 1)->data;
    for (int64_t b = 0; b < d->n; b++)
        for (int64_t oc = 0; oc < d->oc; oc++)
            for (int64_t oh = 0; oh < d->oh; oh++)
                for (int64_t ow = 0; ow < d->ow; ow++) {
                    int32_t acc = 0;
                    const int64_t g0 = oc / ocg * icg;
                    for (int64_t c = 0; c < icg; c++)
                        for (int64_t kh = 0; kh < d->kh; kh++)
                            for (int64_t kw = 0; kw < d->kw; kw++) {
                                const int64_t ih = oh * d->stride_h - d->pad_t + kh * d->dil_h;
                                const int64_t iw = ow * d->stride_w - d->pad_l + kw * d->dil_w;
                                if (ih < 0 || ih >= d->ih || iw < 0 || iw >= d->iw)
                                    continue;
                                const int64_t wi = ((oc * icg + c) * d->kh + kh) * d->kw + kw;
                                const int32_t wv = (p->w_signed ? ((const int8_t *)w)[wi]
                                                                : ((const uint8_t *)w)[wi]) -
                                                   p->w_zp[oc];
                                acc +=
                                    wv *
                                    ((int32_t)x[((b * d->ic + g0 + c) * d->ih + ih) * d->iw + iw] -
                                     p->x_zp);
                            }
                    const int64_t yi = ((b * d->oc + oc) * d->oh + oh) * d->ow + ow;
                    if (p->y_float) {
                        const float v = (float)acc * p->mult[oc] + p->bias[oc];
                        ((float *)y)[yi] = eb_cpu_act_f32__ref(p->act, p->alpha, 0.0f, v);
                        continue;
                    }
                    const int32_t q = sat_q(nearbyintf(fmaf((float)acc, p->mult[oc], p->bias[oc])) +
                                                (float)p->y_zp,
                                            p->y_signed);
                    ((uint8_t *)y)[((b * d->oc + oc) * d->oh + oh) * d->ow + ow] =
                        p->lut != NULL ? p->lut[(uint8_t)q] : (uint8_t)q;
                }
}

static int describe_qconv(const struct eb_graph *g, const struct eb_ir_node *n,
                          struct eb_op_desc *d)
{
    (void)g;
    d->kind = EB_DESC_QCONV;
    d->qconv = n->params;
    d->conv = d->qconv->d;
    return 1;
}

static uint64_t flops_qconv(const struct eb_graph *g, const struct eb_ir_node *n)
{
    const struct eb_qconv_params *p = n->params;
    (void)g;
    return 2u * (uint64_t)(p->d.n * p->d.oc * p->d.oh * p->d.ow) *
           (uint64_t)(p->d.ic / p->d.groups * p->d.kh * p->d.kw);
}

const struct eb_op_def eb_op_qconv = {
    .onnx_name = "edgebench.QLinearConv",
    .since_opset = 1,
    .min_inputs = 2,
    .max_inputs = 3,
    .min_outputs = 1,
    .max_outputs = 1,
    .check = check_qconv,
    .infer_shape = infer_qconv,
    .prepare = prepare_qconv,
    .flops = flops_qconv,
    .exec = exec_qconv,
    .describe = describe_qconv,
};
