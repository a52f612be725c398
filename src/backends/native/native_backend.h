/*
 * The native backend: the eb_backend_ops vtable over edgebench's own inference engine
 * (include/eb/engine.h). CPU only in this build; the memory limit is a hard cap on the engine's
 * memory plan (arena + weights), checked when the model is loaded.
 */
#ifndef EB_NATIVE_BACKEND_H
#define EB_NATIVE_BACKEND_H

#include "eb/backend.h"

extern const struct eb_backend_ops eb_backend_native_ops;

#endif
