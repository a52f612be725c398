/*
 * Checks a model path before any backend reads it, with the same advice from every backend:
 * TensorRT engines and PyTorch checkpoints are refused with how to export ONNX; a missing file
 * or a non-regular file is named.
 *
 * Internal to src/backends (the `__` marks a cross-file helper of one module, house style §2).
 */
#ifndef EB_BACKENDS_MODEL_PATH_H
#define EB_BACKENDS_MODEL_PATH_H

#include "eb/diag.h"

/**
 * EB_OK when `path` names a readable regular file that is not a .engine/.plan/.trt or
 * .pt/.pth file. `engine_advice` (enum eb_advice bits, 0 for none) goes with the TensorRT-engine
 * message: how this backend runs an engine's model besides exporting ONNX. EB_ERR_UNSUPPORTED or
 * EB_ERR_IO with one line naming the path.
 */
EB_NODISCARD enum eb_status eb_backend__check_model_path(const char *path, unsigned engine_advice,
                                                         struct eb_diag *diag);

#endif
