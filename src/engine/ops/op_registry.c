/* The op table (from ops.def) and the helpers every op file uses. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine/ops/op.h"

static const struct eb_op_def *const op_table[] = {
#define EB_OP(name, sym) &eb_op_##sym,
#include "engine/ops/ops.def"
#undef EB_OP
};

const struct eb_op_def *eb_op_find(const char *op_type)
{
    /* Ops made by graph passes (ops.def: "edgebench.*") are not ONNX ops a model may name. */
    if (strncmp(op_type, "edgebench.", 10) == 0)
        return NULL;
    for (size_t i = 0; i < EB_ARRAY_LEN(op_table); i++)
        if (strcmp(op_table[i]->onnx_name, op_type) == 0)
            return op_table[i];
    return NULL;
}

int eb_op_input_optional(const struct eb_op_def *op, int i)
{
    return i >= 0 && i < 32 && (op->optional_inputs & EB_OP_OPTIONAL(i)) != 0;
}

static enum eb_status vfail(const struct eb_op_ctx *ctx, enum eb_status st, unsigned advice,
                            const char *suffix, const char *fmt, va_list ap)
{
    char msg[320];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    return eb_diag_fail_advise(ctx->diag, st, advice,
                               "model %s node %d (%s): op %s (opset %lld): %s%s", ctx->g->what,
                               ctx->n->onnx_index, ctx->n->name,
                               ctx->src != NULL ? ctx->src->op_type : ctx->n->op->onnx_name,
                               (long long)ctx->g->opset, msg, suffix);
}

enum eb_status eb_op_fail(const struct eb_op_ctx *ctx, enum eb_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    enum eb_status r = vfail(ctx, st, 0, "", fmt, ap);
    va_end(ap);
    return r;
}

enum eb_status eb_op_unsupported(const struct eb_op_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    enum eb_status r = vfail(ctx, EB_ERR_UNSUPPORTED, EB_ADVICE_OTHER_BACKEND,
                             " is not supported by the native engine", fmt, ap);
    va_end(ap);
    return r;
}

int64_t eb_op_attr_int(const struct eb_op_ctx *ctx, const char *name, int64_t def)
{
    const struct eb_onnx_attr *a = eb_onnx_node_attr(ctx->src, name);
    return a != NULL && a->type == EB_ONNX_ATTR_INT ? a->i : def;
}

float eb_op_attr_float(const struct eb_op_ctx *ctx, const char *name, float def)
{
    const struct eb_onnx_attr *a = eb_onnx_node_attr(ctx->src, name);
    return a != NULL && a->type == EB_ONNX_ATTR_FLOAT ? a->f : def;
}

const char *eb_op_attr_str(const struct eb_op_ctx *ctx, const char *name, const char *def)
{
    const struct eb_onnx_attr *a = eb_onnx_node_attr(ctx->src, name);
    return a != NULL && a->type == EB_ONNX_ATTR_STRING && a->s != NULL ? a->s : def;
}

enum eb_status eb_op_attr_ints(const struct eb_op_ctx *ctx, const char *name, int64_t *out,
                               size_t max, size_t *n_out)
{
    const struct eb_onnx_attr *a = eb_onnx_node_attr(ctx->src, name);
    *n_out = 0;
    if (a == NULL)
        return EB_OK;
    if (a->type != EB_ONNX_ATTR_INTS || a->n_ints > max)
        return eb_op_unsupported(ctx, "attribute '%s' (type %d, %zu entries)", name, a->type,
                                 a->n_ints);
    memcpy(out, a->ints, a->n_ints * sizeof(*out));
    *n_out = a->n_ints;
    return EB_OK;
}

struct eb_ir_value *eb_op_in(const struct eb_graph *g, const struct eb_ir_node *n, int i)
{
    if (i >= n->n_in || n->in[i] < 0)
        return NULL;
    return &g->values[n->in[i]];
}

struct eb_ir_value *eb_op_out(const struct eb_graph *g, const struct eb_ir_node *n, int i)
{
    return &g->values[n->out[i]];
}

enum eb_status eb_op_const_ints(const struct eb_op_ctx *ctx, int i, int64_t *out, size_t max,
                                size_t *n_out)
{
    const struct eb_ir_value *v = eb_op_in(ctx->g, ctx->n, i);
    if (v == NULL || !(v->is_const || (v->shape_data && v->data != NULL)))
        return eb_op_unsupported(ctx, "a non-constant input %d", i);
    if (v->dtype != EB_DTYPE_I64 && v->dtype != EB_DTYPE_I32)
        return eb_op_unsupported(ctx, "input %d of type %s", i, eb_dtype_name(v->dtype));
    if ((uint64_t)v->numel > max)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "input %d has %lld entries, at most %zu expected", i,
                          (long long)v->numel, max);
    for (int64_t k = 0; k < v->numel; k++)
        out[k] = v->dtype == EB_DTYPE_I64 ? ((const int64_t *)v->data)[k]
                                          : ((const int32_t *)v->data)[k];
    *n_out = (size_t)v->numel;
    return EB_OK;
}

enum eb_status eb_op_set_out(const struct eb_op_ctx *ctx, int i, enum eb_dtype dt, int rank,
                             const int64_t *shape)
{
    struct eb_ir_value *y = eb_op_out(ctx->g, ctx->n, i);
    int64_t numel;
    int dim;
    /* The same checks as eb_ir_value_set, reported with the node and op. */
    switch (eb_ir_shape_check(dt, rank, shape, &numel, &dim)) {
    case EB_IR_SHAPE_OK: break;
    case EB_IR_SHAPE_RANK:
        return eb_op_unsupported(ctx, "output %d ('%s') of rank %d (at most %d)", i, y->name, rank,
                                 EB_MAX_RANK);
    case EB_IR_SHAPE_NEGATIVE:
        return eb_op_fail(ctx, EB_ERR_FORMAT, "output %d ('%s') would have dimension %d of %lld", i,
                          y->name, dim, (long long)shape[dim]);
    case EB_IR_SHAPE_TOO_LARGE:
        return eb_op_fail(ctx, EB_ERR_LIMIT,
                          "output %d ('%s') would need more than %llu bytes (zero dimensions "
                          "not counted)",
                          i, y->name, (unsigned long long)EB_IR_MAX_TENSOR_BYTES);
    }
    return eb_ir_value_set(ctx->g, y, dt, rank, shape, ctx->diag);
}

enum eb_status eb_op_axis(const struct eb_op_ctx *ctx, int64_t axis, int rank, int *axis_out)
{
    if (axis < -rank || axis >= rank)
        return eb_op_fail(ctx, EB_ERR_FORMAT, "axis %lld is out of range for rank %d",
                          (long long)axis, rank);
    *axis_out = (int)(axis < 0 ? axis + rank : axis);
    return EB_OK;
}

enum eb_status eb_op_want_dtype(const struct eb_op_ctx *ctx, int i, enum eb_dtype dt)
{
    const struct eb_ir_value *v = eb_op_in(ctx->g, ctx->n, i);
    EB_ASSERT(v != NULL); /* callers pass required inputs, or optional ones they found present */
    if (v->dtype != dt)
        return eb_op_unsupported(ctx, "input %d of type %s", i, eb_dtype_name(v->dtype));
    return EB_OK;
}

enum eb_status eb_op_broadcast(const struct eb_op_ctx *ctx, const struct eb_ir_value *a,
                               const struct eb_ir_value *b, int *rank_out, int64_t *shape_out)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    for (int k = 0; k < r; k++) {
        int ia = k - (r - a->rank), ib = k - (r - b->rank);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return eb_op_fail(ctx, EB_ERR_FORMAT, "shapes do not broadcast (dim %d: %lld vs %lld)",
                              k, (long long)da, (long long)db);
        shape_out[k] = da == 1 ? db : da;
    }
    *rank_out = r;
    return EB_OK;
}
