/*
 * ConvInteger (uint8 activations, int8/uint8 weights, per-tensor or per-output-channel weight
 * zero points, int32 output); attributes and geometry are Conv's (conv.c). With constant
 * weights and a fast ISA, prepare packs them for the integer GEMM (cpu/conv_u8.c); otherwise
 * exec runs the reference.
 */
#include <string.h>

#include "engine/cpu/conv_u8.h"
#include "engine/cpu/ref/ref.h"
#include "engine/ops/conv.h"
#include "engine/ops/op.h"

/*
 * ConvInteger's state, kept in the ext slot of Conv's params (n->params, set by
 * eb_op__conv_check), so conv.c's geometry helper reads the node as it reads a Conv.
 */
struct conv_integer_params {
    struct eb_conv2d_desc d;        /* geometry, set by infer_shape */
    struct eb_conv2d_u8_plan *plan; /* fast kernel (prepare); NULL = reference */
};

static enum eb_status check_conv_integer(struct eb_op_ctx *ctx)
{
    enum eb_status st = eb_op__conv_check(ctx);
    if (st != EB_OK)
        return st;
    struct conv_integer_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    *eb_op__conv_ext(ctx->n) = p;
    return EB_OK;
}

static enum eb_status infer_conv_integer(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *x = eb_op_in(ctx->g, ctx->n, 0), *w = eb_op_in(ctx->g, ctx->n, 1);
    const struct eb_ir_value *xz = eb_op_in(ctx->g, ctx->n, 2), *wz = eb_op_in(ctx->g, ctx->n, 3);
    struct conv_integer_params *p = *eb_op__conv_ext(ctx->n);
    struct eb_conv2d_desc d;
    enum eb_status st;
    if ((st = eb_op_want_dtype(ctx, 0, EB_DTYPE_U8)) != EB_OK)
        return st;
    if (w->dtype != EB_DTYPE_I8 && w->dtype != EB_DTYPE_U8)
        return eb_op_unsupported(ctx, "weights of type %s", eb_dtype_name(w->dtype));
    if (xz != NULL && (xz->dtype != EB_DTYPE_U8 || xz->numel != 1))
        return eb_op_unsupported(ctx, "an x_zero_point that is not one uint8");
    if ((st = eb_op__conv_geometry(ctx, x, w, &d)) != EB_OK)
        return st;
    if (wz != NULL && (wz->dtype != w->dtype || (wz->numel != 1 && wz->numel != d.oc) ||
                       wz->numel > 1024 || !wz->is_const))
        return eb_op_unsupported(ctx, "this w_zero_point (type %s, %lld entries, constant %d)",
                                 eb_dtype_name(wz->dtype), (long long)wz->numel, wz->is_const);
    p->d = d;
    int64_t shape[4] = {d.n, d.oc, d.oh, d.ow};
    return eb_op_set_out(ctx, 0, EB_DTYPE_I32, 4, shape);
}

/* The weight zero points widened to int32 (one, or one per output channel). */
static size_t widen_wzp(const struct eb_ir_value *w, const struct eb_ir_value *wz,
                        int32_t buf[1024])
{
    if (wz == NULL) {
        buf[0] = 0;
        return 1;
    }
    const size_t n = (size_t)wz->numel <= 1024 ? (size_t)wz->numel : 1;
    for (size_t i = 0; i < n; i++)
        buf[i] = w->dtype == EB_DTYPE_I8 ? ((const int8_t *)wz->data)[i]
                                         : ((const uint8_t *)wz->data)[i];
    return n;
}

static enum eb_status prepare_conv_integer(struct eb_op_prepare *pp)
{
    struct eb_graph *g = pp->op.g;
    struct eb_ir_node *n = pp->op.n;
    struct conv_integer_params *p = *eb_op__conv_ext(n);
    const struct eb_ir_value *w = eb_op_in(g, n, 1), *wz = eb_op_in(g, n, 3);
    if (!w->is_const || w->data == NULL)
        return EB_OK;
    int32_t wzp[1024];
    const size_t n_wzp = widen_wzp(w, wz, wzp);
    enum eb_status st = eb_cpu_conv2d_u8_prepare(&p->d, w->data, w->dtype == EB_DTYPE_I8, wzp,
                                                 n_wzp, pp->isa, pp->n_workers, &g->arena, &p->plan,
                                                 &pp->scratch_bytes, &pp->packed_bytes);
    if (st != EB_OK)
        return eb_op_fail(&pp->op, st, "out of memory packing the weights");
    return EB_OK;
}

static void exec_conv_integer(const struct eb_exec *ex)
{
    const struct eb_graph *g = ex->g;
    const struct eb_ir_node *n = ex->n;
    const struct conv_integer_params *p = *eb_op__conv_ext(n);
    const struct eb_ir_value *w = eb_op_in(g, n, 1);
    const struct eb_ir_value *xz = eb_op_in(g, n, 2), *wz = eb_op_in(g, n, 3);
    const int32_t x_zp = xz != NULL ? *(const uint8_t *)xz->data : 0;
    if (p->plan != NULL && ex->cpu->isa != EB_CPU_ISA_REF) {
        eb_cpu_conv2d_u8_run(p->plan, ex->cpu, eb_op_in(g, n, 0)->data, x_zp,
                             eb_op_out(g, n, 0)->data);
        return;
    }
    int32_t wz_buf[1024];
    const size_t n_wzp = widen_wzp(w, wz, wz_buf);
    eb_cpu_conv2d_u8_i32__ref(&p->d, eb_op_in(g, n, 0)->data, x_zp, w->data,
                              w->dtype == EB_DTYPE_I8, wz_buf, n_wzp, eb_op_out(g, n, 0)->data);
}

static uint64_t flops_conv_integer(const struct eb_graph *g, const struct eb_ir_node *n)
{
    const struct conv_integer_params *p = *eb_op__conv_ext(n);
    (void)g;
    return 2u * (uint64_t)(p->d.n * p->d.oc * p->d.oh * p->d.ow) *
           (uint64_t)(p->d.ic / p->d.groups * p->d.kh * p->d.kw);
}

const struct eb_op_def eb_op_conv_integer = {
    .onnx_name = "ConvInteger",
    .since_opset = 10,
    .min_inputs = 2,
    .max_inputs = 4,
    .optional_inputs = EB_OP_OPTIONAL(2) | EB_OP_OPTIONAL(3),
    .min_outputs = 1,
    .max_outputs = 1,
    .check = check_conv_integer,
    .infer_shape = infer_conv_integer,
    .prepare = prepare_conv_integer,
    .flops = flops_conv_integer,
    .exec = exec_conv_integer,
};
