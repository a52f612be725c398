/*
 * The native engine's memory plan for `edgebench model info` (src/model cannot link the engine:
 * the engine links the ONNX reader that lives beside it, so the app passes this function in).
 */
#ifndef EB_HARNESS_MODEL_PLAN_H
#define EB_HARNESS_MODEL_PLAN_H

#include "model/model.h"

/**
 * An eb_model_plan_fn: loads the model with the native engine (1 thread, all passes, float QDQ,
 * no cap), copies eb_engine_mem_info into `*plan_out` and destroys the engine. Returns the
 * engine's status (EB_ERR_UNSUPPORTED naming node and op, EB_ERR_FORMAT, EB_ERR_NOMEM) with the
 * reason in `diag`, its command-line advice appended (advice.h).
 */
EB_NODISCARD enum eb_status eb_harness_model_plan(const uint8_t *bytes, size_t len,
                                                  const char *what, int imgsz,
                                                  struct eb_model_plan *plan_out,
                                                  struct eb_diag *diag);

#endif
