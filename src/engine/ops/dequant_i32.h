/* edgebench.DequantizeI32's parameters, filled by the fusion pass (ir/passes_fuse.c). */
#ifndef EB_ENGINE_OPS_DEQUANT_I32_H
#define EB_ENGINE_OPS_DEQUANT_I32_H

#include "engine/cpu/epilogue.h"

struct eb_dequant_i32_params {
    struct eb_epilogue epi; /* what the fusion pass folded in after the bias */
};

#endif
