/* The ONNX Runtime backend (C API, library loaded at run time with dlopen). */
#ifndef EB_ORT_BACKEND_H
#define EB_ORT_BACKEND_H

#include "eb/backend.h"

extern const struct eb_backend_ops eb_backend_ort_ops;

#endif
