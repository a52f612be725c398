/*
 * Range (float32, int64, int32 scalars) and ConstantOfShape (a shape input, a one-element
 * 'value' of any engine type, float32 0 by default): ops whose output shape is computed from an
 * input's values. Those inputs are read when they are constants or shape data (computed from
 * the shapes, also in a dynamic graph, where they are read again at every run); values computed
 * from the model's data are refused at load.
 */
#include <math.h>
#include <string.h>

#include "engine/cpu/ref/ref.h"
#include "engine/ops/op.h"

/* Whether input i's data can be read now: a constant, shape data, or any input at run time. */
static int readable(const struct eb_op_ctx *ctx, const struct eb_ir_value *v)
{
    return v->data != NULL && (v->is_const || v->shape_data || ctx->run);
}

static enum eb_status check_none(struct eb_op_ctx *ctx)
{
    (void)ctx;
    return EB_OK;
}

/* Element count of Range(start, limit, delta): max(ceil((limit - start) / delta), 0). */
static enum eb_status range_count(const struct eb_op_ctx *ctx, enum eb_dtype dt, const void *s,
                                  const void *l, const void *d, int64_t *n_out)
{
    double cnt;
    if (dt == EB_DTYPE_F32) {
        const float fs = *(const float *)s, fl = *(const float *)l, fd = *(const float *)d;
        if (!isfinite(fs) || !isfinite(fl) || !isfinite(fd) || fd == 0.0f)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "start %g, limit %g, delta %g", (double)fs,
                              (double)fl, (double)fd);
        cnt = ceil(((double)fl - (double)fs) / (double)fd);
    } else {
        const int64_t is = dt == EB_DTYPE_I64 ? *(const int64_t *)s : *(const int32_t *)s;
        const int64_t il = dt == EB_DTYPE_I64 ? *(const int64_t *)l : *(const int32_t *)l;
        const int64_t id = dt == EB_DTYPE_I64 ? *(const int64_t *)d : *(const int32_t *)d;
        if (id == 0)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "delta 0");
        /* In long double: |limit - start| may not fit int64. */
        const long double diff = (long double)il - (long double)is;
        cnt = (double)ceill(diff / (long double)id);
    }
    if (cnt < 0.0)
        cnt = 0.0;
    if (cnt > (double)EB_IR_MAX_TENSOR_BYTES)
        return eb_op_fail(ctx, EB_ERR_LIMIT, "an output of more than %llu elements",
                          (unsigned long long)EB_IR_MAX_TENSOR_BYTES);
    *n_out = (int64_t)cnt;
    return EB_OK;
}

static enum eb_status infer_range(struct eb_op_ctx *ctx)
{
    const struct eb_ir_value *in[3];
    for (int i = 0; i < 3; i++) {
        in[i] = eb_op_in(ctx->g, ctx->n, i);
        if (in[i]->numel != 1 || in[i]->rank > 1)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "input %d is not a scalar", i);
        if (in[i]->dtype != in[0]->dtype)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "inputs of types %s and %s",
                              eb_dtype_name(in[0]->dtype), eb_dtype_name(in[i]->dtype));
    }
    const enum eb_dtype dt = in[0]->dtype;
    if (dt != EB_DTYPE_F32 && dt != EB_DTYPE_I64 && dt != EB_DTYPE_I32)
        return eb_op_unsupported(ctx, "type %s", eb_dtype_name(dt));
    for (int i = 0; i < 3; i++)
        if (!readable(ctx, in[i]))
            return eb_op_unsupported(ctx,
                                     "input %d computed from the model's data (not a "
                                     "constant or a shape)",
                                     i);
    int64_t n;
    enum eb_status st = range_count(ctx, dt, in[0]->data, in[1]->data, in[2]->data, &n);
    if (st != EB_OK)
        return st;
    return eb_op_set_out(ctx, 0, dt, 1, &n);
}

static void exec_range(const struct eb_exec *ex)
{
    const struct eb_ir_value *s = eb_op_in(ex->g, ex->n, 0), *d = eb_op_in(ex->g, ex->n, 2);
    const struct eb_ir_value *y = eb_op_out(ex->g, ex->n, 0);
    eb_cpu_range__ref(y->dtype, y->numel, s->data, d->data, y->data);
}

const struct eb_op_def eb_op_range = {
    .onnx_name = "Range",
    .since_opset = 11,
    .min_inputs = 3,
    .max_inputs = 3,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_none,
    .infer_shape = infer_range,
    .exec = exec_range,
};

struct fill_params {
    enum eb_dtype dtype;
    unsigned char value[8];
};

static enum eb_status check_constant_of_shape(struct eb_op_ctx *ctx)
{
    struct fill_params *p = eb_ir_arena_alloc(&ctx->g->arena, sizeof(*p));
    if (p == NULL)
        return eb_op_fail(ctx, EB_ERR_NOMEM, "out of memory");
    memset(p, 0, sizeof(*p));
    p->dtype = EB_DTYPE_F32;
    ctx->n->params = p;
    const struct eb_onnx_attr *a = eb_onnx_node_attr(ctx->src, "value");
    if (a == NULL)
        return EB_OK;
    if (a->type != EB_ONNX_ATTR_TENSOR || a->t == NULL)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "attribute 'value' is not a tensor");
    if (a->t->numel != 1)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "'value' has %llu elements, 1 expected",
                          (unsigned long long)a->t->numel);
    void *data = NULL;
    enum eb_status st = eb_ir_tensor_decode(a->t, &ctx->g->alloc, &p->dtype, &data);
    if (st == EB_ERR_UNSUPPORTED)
        return eb_op_unsupported(ctx, "a value of type %s or with external data",
                                 eb_onnx_dtype_name(a->t->dtype));
    if (st != EB_OK)
        return eb_op_fail(ctx, st, "malformed value");
    const size_t es = eb_dtype_size(p->dtype);
    if (es == 0 || es > sizeof(p->value)) {
        ctx->g->alloc.free(ctx->g->alloc.ctx, data);
        return eb_op_unsupported(ctx, "a value of type %s", eb_dtype_name(p->dtype));
    }
    memcpy(p->value, data, es);
    ctx->g->alloc.free(ctx->g->alloc.ctx, data);
    return EB_OK;
}

static enum eb_status infer_constant_of_shape(struct eb_op_ctx *ctx)
{
    const struct fill_params *p = ctx->n->params;
    const struct eb_ir_value *s = eb_op_in(ctx->g, ctx->n, 0);
    if (s->dtype != EB_DTYPE_I64)
        return eb_op_unsupported(ctx, "input 0 of type %s", eb_dtype_name(s->dtype));
    if (s->rank != 1)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "input 0 of rank %d, 1 expected", s->rank);
    if (s->numel > EB_MAX_RANK)
        return eb_op_unsupported(ctx, "an output of rank %lld", (long long)s->numel);
    if (!readable(ctx, s))
        return eb_op_unsupported(ctx, "a shape computed from the model's data (not a constant "
                                      "or a shape)");
    int64_t shape[EB_MAX_RANK];
    for (int64_t i = 0; i < s->numel; i++)
        shape[i] = ((const int64_t *)s->data)[i];
    return eb_op_set_out(ctx, 0, p->dtype, (int)s->numel, shape);
}

static void exec_constant_of_shape(const struct eb_exec *ex)
{
    const struct fill_params *p = ex->n->params;
    const struct eb_ir_value *y = eb_op_out(ex->g, ex->n, 0);
    eb_cpu_fill__ref(eb_dtype_size(y->dtype), y->numel, p->value, y->data);
}

const struct eb_op_def eb_op_constant_of_shape = {
    .onnx_name = "ConstantOfShape",
    .since_opset = 9,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 1,
    .dyn_shapes = 1,
    .check = check_constant_of_shape,
    .infer_shape = infer_constant_of_shape,
    .exec = exec_constant_of_shape,
};
