/*
 * Conv (float32, 2-D, groups/strides/pads/dilations/bias, auto_pad, fused epilogue). ConvInteger
 * (conv_integer.c) shares its attributes and geometry.
 */
#include <string.h>

#include "engine/cpu/fast.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ops/conv.h"
#include "engine/ops/fuse_access.h"
#include "engine/ops/op.h"

/* auto_pad, decided at load: attribute strings live only as long as the ONNX import. */
enum conv_auto_pad {
    CONV_PAD_NOTSET = 0,
    CONV_PAD_VALID,
    CONV_PAD_SAME_UPPER,
    CONV_PAD_SAME_LOWER
};

struct conv_params {
    int64_t kernel[2], strides[2], dilations[2], pads[4];
    int64_t group;
    enum conv_auto_pad auto_pad;
    int have_kernel;
    struct eb_epilogue epi;          /* set by the fusion pass; zero = plain Conv */
    struct eb_conv2d_f32_plan *plan; /* fast kernel (prepare); NULL = reference */
    void *ext;                       /* ConvInteger's own state (conv_integer.c) */
};

enum eb_status eb_op__conv_check(struct eb_op_ctx *ctx)
{
    struct conv_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    int64_t v[8];
    size_t n;
    enum eb_status st;
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    p->strides[0] = p->strides[1] = p->dilations[0] = p->dilations[1] = 1;
    if ((st = eb_op_attr_ints(ctx, "kernel_shape", v, 8, &n)) != EB_OK)
        return st;
    if (n != 0 && n != 2)
        return eb_op_unsupported(ctx, "a %zu-D kernel", n);
    p->have_kernel = n == 2;
    memcpy(p->kernel, v, n * sizeof(int64_t));
    if ((st = eb_op_attr_ints(ctx, "strides", v, 8, &n)) != EB_OK)
        return st;
    if (n == 2)
        memcpy(p->strides, v, sizeof(p->strides));
    else if (n != 0)
        return eb_op_unsupported(ctx, "%zu strides", n);
    if ((st = eb_op_attr_ints(ctx, "dilations", v, 8, &n)) != EB_OK)
        return st;
    if (n == 2)
        memcpy(p->dilations, v, sizeof(p->dilations));
    else if (n != 0)
        return eb_op_unsupported(ctx, "%zu dilations", n);
    if ((st = eb_op_attr_ints(ctx, "pads", v, 8, &n)) != EB_OK)
        return st;
    if (n == 4)
        memcpy(p->pads, v, sizeof(p->pads));
    else if (n != 0)
        return eb_op_unsupported(ctx, "%zu pads", n);
    for (int i = 0; i < 4; i++)
        if (p->pads[i] < 0 || p->pads[i] > 1 << 16)
            return eb_op_unsupported(ctx, "pad %lld", (long long)p->pads[i]);
    for (int i = 0; i < 2; i++)
        if (p->strides[i] < 1 || p->dilations[i] < 1 || p->strides[i] > 1 << 16 ||
            p->dilations[i] > 1 << 16)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "stride %lld / dilation %lld",
                              (long long)p->strides[i], (long long)p->dilations[i]);
    p->group = eb_op_attr_int(ctx, "group", 1);
    const char *auto_pad = eb_op_attr_str(ctx, "auto_pad", "NOTSET");
    if (strcmp(auto_pad, "NOTSET") == 0)
        p->auto_pad = CONV_PAD_NOTSET;
    else if (strcmp(auto_pad, "VALID") == 0)
        p->auto_pad = CONV_PAD_VALID;
    else if (strcmp(auto_pad, "SAME_UPPER") == 0)
        p->auto_pad = CONV_PAD_SAME_UPPER;
    else if (strcmp(auto_pad, "SAME_LOWER") == 0)
        p->auto_pad = CONV_PAD_SAME_LOWER;
    else
        return eb_op_unsupported(ctx, "auto_pad '%s'", auto_pad);
    ctx->n->params = p;
    return EB_OK;
}

/* Fills the geometry from x [N,C,H,W] and w [OC,C/g,KH,KW]; pads resolved for auto_pad. */
enum eb_status eb_op__conv_geometry(struct eb_op_ctx *ctx, const struct eb_ir_value *x,
                                    const struct eb_ir_value *w, struct eb_conv2d_desc *d)
{
    struct conv_params *p = ctx->n->params;
    if (x->rank != 4 || w->rank != 4)
        return eb_op_unsupported(ctx, "a %d-D input (only 2-D convolutions)", x->rank - 2);
    if (p->group < 1 || x->shape[1] % p->group != 0 || w->shape[0] % p->group != 0 ||
        x->shape[1] / p->group != w->shape[1])
        return eb_op_fail(ctx, EB_ERR_FORMAT, "group %lld does not match channels %lld/%lld",
                          (long long)p->group, (long long)x->shape[1], (long long)w->shape[0]);
    if (p->have_kernel && (p->kernel[0] != w->shape[2] || p->kernel[1] != w->shape[3]))
        return eb_op_fail(ctx, EB_ERR_FORMAT, "kernel_shape does not match the weights");
    d->n = x->shape[0];
    d->ic = x->shape[1];
    d->ih = x->shape[2];
    d->iw = x->shape[3];
    d->oc = w->shape[0];
    d->kh = w->shape[2];
    d->kw = w->shape[3];
    d->groups = p->group;
    d->stride_h = p->strides[0];
    d->stride_w = p->strides[1];
    d->dil_h = p->dilations[0];
    d->dil_w = p->dilations[1];
    int64_t pads[4];
    memcpy(pads, p->pads, sizeof(pads));
    if (p->auto_pad == CONV_PAD_VALID) {
        memset(pads, 0, sizeof(pads));
    } else if (p->auto_pad == CONV_PAD_SAME_UPPER || p->auto_pad == CONV_PAD_SAME_LOWER) {
        int64_t in[2] = {d->ih, d->iw}, k[2] = {d->kh, d->kw}, s[2] = {d->stride_h, d->stride_w};
        int64_t dl[2] = {d->dil_h, d->dil_w};
        for (int i = 0; i < 2; i++) {
            int64_t out = (in[i] + s[i] - 1) / s[i];
            int64_t total = (out - 1) * s[i] + (k[i] - 1) * dl[i] + 1 - in[i];
            total = total < 0 ? 0 : total;
            int upper = p->auto_pad == CONV_PAD_SAME_UPPER;
            pads[i] = upper ? total / 2 : total - total / 2;
            pads[i + 2] = total - pads[i];
        }
    }
    d->pad_t = pads[0];
    d->pad_l = pads[1];
    int64_t eh = d->ih + pads[0] + pads[2] - (d->kh - 1) * d->dil_h - 1;
    int64_t ew = d->iw + pads[1] + pads[3] - (d->kw - 1) * d->dil_w - 1;
    if (eh < 0 || ew < 0)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "the kernel is larger than the padded input");
    d->oh = eh / d->stride_h + 1;
    d->ow = ew / d->stride_w + 1;
    return EB_OK;
}

static enum eb_status infer_conv(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0), *w = eb_op_in(ctx->g, ctx->n, 1);
    const struct eb_ir_value *b = eb_op_in(ctx->g, ctx->n, 2);
    struct eb_conv2d_desc d;
    enum eb_status st;
    if ((st = eb_op_want_dtype(ctx, 0, EB_DTYPE_F32)) != EB_OK ||
        (st = eb_op_want_dtype(ctx, 1, EB_DTYPE_F32)) != EB_OK ||
        (b != NULL && (st = eb_op_want_dtype(ctx, 2, EB_DTYPE_F32)) != EB_OK))
        return st;
    if ((st = eb_op__conv_geometry(ctx, x, w, &d)) != EB_OK)
        return st;
    if (b != NULL && (b->rank != 1 || b->shape[0] != d.oc))
        return eb_op_fail(ctx, EB_ERR_FORMAT, "bias does not have %lld entries", (long long)d.oc);
    int64_t shape[4] = {d.n, d.oc, d.oh, d.ow};
    return eb_op_set_out(ctx, 0, EB_DTYPE_F32, 4, shape);
}

/* The geometry again at run time: cheap, and keeps params free of derived state. */
void eb_op__conv_run_geometry(const struct eb_graph *g, const struct eb_ir_node *n,
                              struct eb_conv2d_desc *d)
{
    struct eb_op_ctx ctx = {.g = (struct eb_graph *)g, .n = (struct eb_ir_node *)n};
    enum eb_status st = eb_op__conv_geometry(&ctx, eb_op_in(g, n, 0), eb_op_in(g, n, 1), d);
    EB_ASSERT(st == EB_OK); /* validated by infer_shape */
}

/* The residual of a fused Conv + Add is input 3 (added by the fusion pass). */
static const float *residual_of(const struct eb_graph *g, const struct eb_ir_node *n,
                                const struct conv_params *p)
{
    if (!p->epi.residual || n->n_in < 4)
        return NULL;
    return eb_op_in(g, n, 3)->data;
}

static void exec_conv(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct conv_params *p = n->params;
    const struct eb_ir_value *b = eb_op_in(g, n, 2), *y = eb_op_out(g, n, 0);
    const float *res = residual_of(g, n, p);
    if (p->plan != NULL && ex->cpu->isa != EB_CPU_ISA_REF) {
        eb_cpu_conv2d_f32_run(p->plan, &p->epi, ex->cpu, eb_op_in(g, n, 0)->data, res, y->data);
        return;
    }
    struct eb_conv2d_desc d;
    eb_op__conv_run_geometry(g, n, &d);
    eb_cpu_conv2d_f32__ref(&d, eb_op_in(g, n, 0)->data, eb_op_in(g, n, 1)->data,
                           b != NULL ? b->data : NULL, y->data);
    eb_cpu_epilogue_f32__ref(&p->epi, (size_t)y->numel, res, y->data);
}

/* Packs constant weights for the fast kernel; non-constant weights stay on the reference. */
static enum eb_status prepare_conv(struct eb_op_prepare *pp)
{
    struct eb_graph *g = pp->op.g;
    struct eb_ir_node *n = pp->op.n;
    struct conv_params *p = n->params;
    const struct eb_ir_value *w = eb_op_in(g, n, 1), *b = eb_op_in(g, n, 2);
    if (!w->is_const || (b != NULL && !b->is_const))
        return EB_OK;
    struct eb_conv2d_desc d;
    eb_op__conv_run_geometry(g, n, &d);
    const unsigned layout = (eb_op_in(g, n, 0)->blocked ? EB_CONV_IN_CL : 0u) |
                            (eb_op_out(g, n, 0)->blocked ? EB_CONV_OUT_CL : 0u);
    enum eb_status st = eb_cpu_conv2d_f32_prepare(&d, w->data, b != NULL ? b->data : NULL, pp->isa,
                                                  pp->n_workers, layout, &g->arena, &p->plan,
                                                  &pp->scratch_bytes, &pp->packed_bytes);
    if (st == EB_ERR_NOMEM)
        return eb_op_fail(&pp->op, st, "out of memory packing the weights");
    if (st != EB_OK)
        return eb_op_fail(&pp->op, st, "no channel-blocked kernel for the layout chosen");
    return EB_OK;
}

int eb_op__conv_cl_block(const struct eb_graph *g, const struct eb_ir_node *n, enum eb_cpu_isa isa,
                         int output_side)
{
    if (n->op != &eb_op_conv || n->params == NULL || n->n_in < 2)
        return 0;
    const struct conv_params *p = n->params;
    const struct eb_ir_value *w = eb_op_in(g, n, 1), *b = eb_op_in(g, n, 2);
    if (!w->is_const || (b != NULL && !b->is_const) || (output_side && p->epi.fake_quant))
        return 0;
    struct eb_conv2d_desc d;
    eb_op__conv_run_geometry(g, n, &d);
    return eb_cpu_conv2d_f32_cl_block(&d, isa);
}

static uint64_t flops_conv(const struct eb_graph *g, const struct eb_ir_node *n)
{
    struct eb_conv2d_desc d;
    eb_op__conv_run_geometry(g, n, &d);
    return 2u * (uint64_t)(d.n * d.oc * d.oh * d.ow) * (uint64_t)(d.ic / d.groups * d.kh * d.kw);
}

void **eb_op__conv_ext(const struct eb_ir_node *n)
{
    return &((struct conv_params *)n->params)->ext;
}

struct eb_epilogue *eb_op__conv_epilogue(struct eb_ir_node *n)
{
    if (n->op != &eb_op_conv || n->params == NULL)
        return NULL;
    return &((struct conv_params *)n->params)->epi;
}

/* Constant float weights (and bias): what a device that uploads weights at load can run. */
static int describe_conv(const struct eb_graph *g, const struct eb_ir_node *n, struct eb_op_desc *d)
{
    const struct conv_params *p = n->params;
    const struct eb_ir_value *w = eb_op_in(g, n, 1), *b = eb_op_in(g, n, 2);
    if (!w->is_const || w->dtype != EB_DTYPE_F32 || (b != NULL && !b->is_const) ||
        (p->epi.residual && n->n_in < 4))
        return 0;
    d->kind = EB_DESC_CONV;
    eb_op__conv_run_geometry(g, n, &d->conv);
    d->epi = &p->epi;
    return 1;
}

const struct eb_op_def eb_op_conv = {
    .onnx_name = "Conv",
    .since_opset = 1,
    .min_inputs = 2,
    .max_inputs = 3,
    .optional_inputs = EB_OP_OPTIONAL(2),
    .min_outputs = 1,
    .max_outputs = 1,
    .check = eb_op__conv_check,
    .infer_shape = infer_conv,
    .prepare = prepare_conv,
    .flops = flops_conv,
    .exec = exec_conv,
    .describe = describe_conv,
};
