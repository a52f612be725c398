/*
 * A device-neutral description of what a node computes, for devices other than the CPU (the
 * CUDA device, src/engine/cuda): each op that another device can run fills one through its
 * eb_op_def.describe hook, from the parameters its check and infer_shape parsed. Shapes, dtypes
 * and constant data are the graph's values; the description adds what only the op knows.
 */
#ifndef EB_ENGINE_OPS_OP_DESC_H
#define EB_ENGINE_OPS_OP_DESC_H

#include <stdint.h>

#include "eb/tensor.h"
#include "engine/cpu/epilogue.h"
#include "engine/cpu/ref/ref.h"

struct eb_qconv_params;

enum eb_desc_kind {
    EB_DESC_NONE = 0,
    EB_DESC_CONV,       /* conv, epi: in 0 x, 1 w (constant), 2 bias (constant, optional),
                           3 residual (epi->residual) */
    EB_DESC_COPY,       /* y holds x's bytes (Reshape, Flatten, Squeeze, Unsqueeze, Identity) */
    EB_DESC_CONCAT,     /* along axis */
    EB_DESC_SPLIT,      /* along axis; output sizes from the outputs' shapes */
    EB_DESC_SLICE,      /* start[d], step[d] for every dim of x */
    EB_DESC_TRANSPOSE,  /* perm[d] (y dim d is x dim perm[d]) */
    EB_DESC_BINARY,     /* binop, numpy broadcast of the two inputs */
    EB_DESC_UNARY,      /* unop with alpha, beta (Clip: min/max, constant inputs resolved) */
    EB_DESC_SIGMOID,    /* y = 1/(1+exp(-x)) */
    EB_DESC_SOFTMAX,    /* outer x len x inner, softmax over len */
    EB_DESC_MAXPOOL,    /* pool */
    EB_DESC_UPSAMPLE,   /* 4-D nearest by integer factors fh, fw: y[.., j, i] = x[.., j/fh, i/fw] */
    EB_DESC_MATMUL,     /* batched, numpy broadcast of the batch dims */
    EB_DESC_QUANTIZE,   /* per channel (len channels, inner elements each); in 1 scale, 2 zp */
    EB_DESC_DEQUANTIZE, /* the same, back to float */
    EB_DESC_QCONV,      /* edgebench.QLinearConv: conv (geometry), qconv (its parameters); in 0
                           x_q, 1 w_q (constant), 2 bias (folded into qconv) */
    EB_DESC_DFL,        /* edgebench.DFL: outer rows of len bins x inner anchors; in 1 the
                           bins' weights (constant, len floats) */
    EB_DESC_GATHER,     /* y[o][j][i] = x[o][idx[j]][i]: outer x len (x's axis) x inner; in 1 the
                            indices (int64 or int32, negative counts from the end) */
    EB_DESC_CAST,       /* y = x converted (integer to float only) */
    EB_DESC_REDUCE_MEAN, /* outer x len x inner, the mean over len (one run of reduced dims) */
};

struct eb_op_desc {
    enum eb_desc_kind kind;
    int axis;
    int64_t start[EB_MAX_RANK], step[EB_MAX_RANK]; /* SLICE */
    int64_t perm[EB_MAX_RANK];                     /* TRANSPOSE */
    int64_t outer, len, inner; /* SOFTMAX, QUANTIZE, DEQUANTIZE, DFL, GATHER, REDUCE_MEAN */
    int64_t fh, fw;            /* UPSAMPLE */
    enum eb_binop binop;
    enum eb_unop unop;
    float alpha, beta;                   /* UNARY */
    struct eb_conv2d_desc conv;          /* CONV */
    const struct eb_epilogue *epi;       /* CONV: the fused epilogue (never NULL) */
    struct eb_pool2d_desc pool;          /* MAXPOOL */
    const struct eb_qconv_params *qconv; /* QCONV */
};

#endif
