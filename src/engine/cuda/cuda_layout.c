/*
 * Channels-last on the GPU (fp16; cuda_device.c): which 4-D float activations the CUDA device
 * stores as [N][H][W][C] (eb_ir_value.nhwc), so that cuDNN runs its tensor-core convolutions on
 * them with no transposes of its own (cuda_conv.c). A value goes channels-last when the node that writes it and every node that reads
 * it are GPU nodes that handle either layout:
 *  - Conv writes its output's layout (its filter is uploaded in the same layout, K,R,S,C); an
 *    input in the other layout is transposed first into the device's transpose buffer;
 *  - the strided copies (Concat, Split, Slice, Transpose) and broadcast binaries read and write
 *    any layout through element strides; a Reshape-family copy reads either;
 *  - unary ops, Sigmoid, MaxPool and nearest upsampling keep their input's layout, and a fused
 *    residual has its conv output's: those pairs are tied, and a pair in which one side cannot
 *    go channels-last keeps both NCHW.
 *  - int8 convs (cuda_qconv.c) compute channels-last and read (input and fused residual) and
 *    write (every output) either layout through element strides; uint8/int8 values go
 *    channels-last like float ones, and a per-tensor QuantizeLinear/DequantizeLinear keeps its
 *    input's layout (elementwise).
 * Graph inputs and outputs, constants, nodes on the CPU and every other op see NCHW as ONNX
 * says. A channels-last Concat along C goes in place where every node touching its inputs takes
 * rows that are slices of wider ones (pitch_ok; memplan.h).
 */
#include <string.h>

#include "engine/cuda/cuda_internal.h"
#include "engine/ops/qconv.h"

/* Ops that write their output in either layout (a per-tensor Q/DQ: elementwise). */
static int writes_either(const struct eb_op_desc *d)
{
    switch (d->kind) {
    case EB_DESC_CONV:
    case EB_DESC_QCONV:
    case EB_DESC_BINARY:
    case EB_DESC_UNARY:
    case EB_DESC_SIGMOID:
    case EB_DESC_CONCAT:
    case EB_DESC_SPLIT:
    case EB_DESC_SLICE:
    case EB_DESC_TRANSPOSE:
    case EB_DESC_MAXPOOL:
    case EB_DESC_UPSAMPLE: return 1;
    case EB_DESC_QUANTIZE:
    case EB_DESC_DEQUANTIZE: return d->len == 1;
    default: return 0;
    }
}

/* Ops that read input i in either layout. */
static int reads_either(const struct eb_op_desc *d, int i)
{
    if (d->kind == EB_DESC_CONV)
        return i == 0 || i == 3;
    if (d->kind == EB_DESC_QCONV)
        return i == 0 || i == d->qconv->res_in;
    return d->kind == EB_DESC_COPY || writes_either(d);
}

/* Ops whose output has input 0's layout (Conv: its residual's, input 3). */
static int tied_input(const struct eb_op_desc *d)
{
    switch (d->kind) {
    case EB_DESC_UNARY:
    case EB_DESC_SIGMOID:
    case EB_DESC_MAXPOOL:
    case EB_DESC_UPSAMPLE:
    case EB_DESC_QUANTIZE:
    case EB_DESC_DEQUANTIZE: return 0;
    case EB_DESC_CONV: return d->epi->residual ? 3 : -1;
    default: return -1;
    }
}

void eb_cu__strides(const struct eb_ir_value *v, int64_t *st)
{
    if (v->nhwc && v->rank == 4) {
        const int64_t c = v->cpitch > 0 ? v->cpitch : v->shape[1], h = v->shape[2], w = v->shape[3];
        st[0] = h * w * c;
        st[1] = 1;
        st[2] = w * c;
        st[3] = c;
        return;
    }
    int64_t acc = 1;
    for (int d = v->rank - 1; d >= 0; d--) {
        st[d] = acc;
        acc *= v->shape[d];
    }
}

size_t eb_cu__span_bytes(const struct cu_state *s, const struct eb_ir_value *v)
{
    const size_t es = eb_cu__es(s, v);
    if (!v->nhwc || v->rank != 4 || v->cpitch <= v->shape[1] || v->numel <= 0)
        return (size_t)v->numel * es;
    const int64_t rows = v->numel / v->shape[1];
    return (size_t)((rows - 1) * v->cpitch + v->shape[1]) * es;
}

/* 1 when node k reads its input i, or writes its output, as a slice of wider channels-last rows
 * (a value with cpitch): strided copies, a binary's inputs, and a channels-last conv through
 * cuDNN's graph API (its input 0 and residual; a conv whose input is transposed first reads input
 * 0 through a strided copy). `i` < 0: the output. */
static int takes_slice(const struct cu_state *s, size_t k, int i)
{
    const struct cu_node *cn = &s->nodes[k];
    if (s->on_cpu[k])
        return 0;
    switch (cn->d.kind) {
    case EB_DESC_CONCAT:
    case EB_DESC_SPLIT:
    case EB_DESC_SLICE:
    case EB_DESC_TRANSPOSE: return 1;
    case EB_DESC_COPY:
    case EB_DESC_BINARY: return i >= 0;
    case EB_DESC_QCONV: /* element strides on every side (cuda_qconv.c) */
        return i <= 0 || i == cn->d.qconv->res_in;
    case EB_DESC_CONV:
        if (i == 0 && cn->x_xpose)
            return 1;
        return (i < 0 || i == 0 || i == 3) && cn->nhwc && eb_cu__conv_graph_eligible(s, cn);
    default: return 0;
    }
}

size_t eb_cu__choose_layout(struct eb_engine *e, struct cu_state *s)
{
    struct eb_graph *g = e->g;
    for (size_t i = 0; i < g->n_values; i++) {
        struct eb_ir_value *v = &g->values[i];
        v->nhwc =
            v->rank == 4 &&
            (v->dtype == EB_DTYPE_F32 || v->dtype == EB_DTYPE_U8 || v->dtype == EB_DTYPE_I8) &&
            !v->is_const && !v->is_input && !v->is_output;
    }
    /* Writers and readers that cannot, and conv filters shared with another reader (a filter
     * is uploaded in one layout). */
    for (size_t k = 0; k < e->n_order; k++) {
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        const struct eb_op_desc *d = &s->nodes[k].d;
        const int gpu = !s->on_cpu[k];
        for (int i = 0; i < n->n_out; i++)
            if (n->out[i] >= 0 && (!gpu || !writes_either(d)))
                g->values[n->out[i]].nhwc = 0;
        for (int i = 0; i < n->n_in; i++)
            if (n->in[i] >= 0 && (!gpu || !reads_either(d, i)))
                g->values[n->in[i]].nhwc = 0;
        if (gpu && d->kind == EB_DESC_CONV && g->values[n->in[1]].n_uses != 1)
            g->values[n->out[0]].nhwc = 0;
    }
    /* Tied pairs: NCHW wins, to a fixed point. */
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t k = 0; k < e->n_order; k++) {
            const struct eb_ir_node *n = &g->nodes[e->order[k]];
            const int t = s->on_cpu[k] ? -1 : tied_input(&s->nodes[k].d);
            if (t < 0 || t >= n->n_in || n->in[t] < 0)
                continue;
            struct eb_ir_value *x = &g->values[n->in[t]], *y = &g->values[n->out[0]];
            if (x->nhwc != y->nhwc) {
                x->nhwc = y->nhwc = 0;
                changed = 1;
            }
        }
    }
    size_t n_nhwc = 0, xpose = 0;
    for (size_t k = 0; k < e->n_order; k++) {
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        struct cu_node *cn = &s->nodes[k];
        if (s->on_cpu[k] || cn->d.kind != EB_DESC_CONV)
            continue;
        const struct eb_ir_value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
        cn->nhwc = y->nhwc;
        cn->x_xpose = x->nhwc != y->nhwc;
        if (cn->x_xpose && (size_t)x->numel * eb_cu__es(s, x) > xpose)
            xpose = (size_t)x->numel * eb_cu__es(s, x);
        if (y->nhwc)
            s->w_khwc[n->in[1]] = 1;
    }
    for (size_t i = 0; i < g->n_values; i++) {
        n_nhwc += (size_t)(g->values[i].nhwc != 0);
        g->values[i].pitch_ok = g->values[i].nhwc;
    }
    for (size_t k = 0; k < e->n_order; k++) {
        const struct eb_ir_node *n = &g->nodes[e->order[k]];
        for (int i = 0; i < n->n_out; i++)
            if (n->out[i] >= 0 && !takes_slice(s, k, -1))
                g->values[n->out[i]].pitch_ok = 0;
        for (int i = 0; i < n->n_in; i++)
            if (n->in[i] >= 0 && !takes_slice(s, k, i))
                g->values[n->in[i]].pitch_ok = 0;
    }
    s->xpose_bytes = xpose;
    return n_nhwc;
}
