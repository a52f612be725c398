/* edgebench.DFL's parameters, filled by the fusion pass (ir/passes_fuse.c). */
#ifndef EB_ENGINE_OPS_DFL_H
#define EB_ENGINE_OPS_DFL_H

#include <stdint.h>

#include "eb/tensor.h"

struct eb_dfl_params {
    int64_t outer; /* N x G: the distributions' rows of bins */
    int64_t bins;  /* R: bins per distribution */
    int64_t inner; /* A: anchors */
    int out_rank;  /* the output's shape, as the absorbed Reshape gave it */
    int64_t out_shape[EB_MAX_RANK];
};

#endif
