/*
 * The TensorRT provider's engine cache folder: where ONNX Runtime keeps the engines it builds
 * (trt_engine_cache_path) and TensorRT's timing cache (trt_timing_cache_path). Internal to the
 * ort backend; the environment comes in as arguments, so the rules can be tested without it.
 *
 *     char dir[EB_ORT_TRT_CACHE_MAX];
 *     st = eb_ort__trt_cache_dir(cfg->trt_cache, getenv("XDG_CACHE_HOME"), getenv("HOME"),
 *                                dir, sizeof(dir), &diag);
 *     if (st == EB_OK && dir[0] != '\0')
 *         st = eb_ort__trt_cache_make(dir, &diag);
 */
#ifndef EB_ORT_TRT_H
#define EB_ORT_TRT_H

#include <stddef.h>

#include "eb/diag.h"

#define EB_ORT_TRT_CACHE_MAX 1024 /* bytes of a cache folder's path, its NUL included */

/**
 * The cache folder for --trt_cache `opt`: "off" = no cache (`buf` ""); NULL = the default,
 * $XDG_CACHE_HOME/edgebench/trt when `xdg_cache_home` is an absolute path (the XDG base
 * directory spec ignores a relative one), else $HOME/.cache/edgebench/trt; anything else is the
 * folder itself. `xdg_cache_home` and `home` are the environment's values (NULL or "" = unset),
 * borrowed. EB_ERR_INVALID_ARG (advice EB_ADVICE_TRT_CACHE) when `opt` is "", the default has
 * neither variable, or the path does not fit `size`.
 */
EB_NODISCARD enum eb_status eb_ort__trt_cache_dir(const char *opt, const char *xdg_cache_home,
                                                  const char *home, char *buf, size_t size,
                                                  struct eb_diag *diag);

/**
 * Creates cache folder `dir` with its parents. EB_ERR_IO (advice EB_ADVICE_TRT_CACHE) with one
 * line naming the folder that could not be made and why (e.g. under a regular file).
 */
EB_NODISCARD enum eb_status eb_ort__trt_cache_make(const char *dir, struct eb_diag *diag);

#endif
