/*
 * Finding and loading the ONNX Runtime shared library at run time (dlopen + OrtGetApiBase).
 * Internal to the ort backend.
 *
 *     struct eb_ort_lib lib = {0};
 *     st = eb_ort__lib_open(cfg->ort_lib, cfg->log, &lib, &diag);
 *     ... lib.api->CreateEnv(...) ...
 *     eb_ort__lib_close(&lib);
 *
 * Search order: `explicit_path` (the --ort_lib flag), else $EB_ORT_LIB; when either is given,
 * only that library is tried (a benchmark must not silently run a different runtime than the
 * one asked for). Otherwise: the library fetched by scripts/setup.sh (EB_ORT_FETCHED_LIB), the
 * installed copy (EB_ORT_INSTALLED_LIB), <dir of the executable>/../lib/edgebench/, and last the
 * dynamic linker's own search path (LD_LIBRARY_PATH, ldconfig) for a system-wide install.
 */
#ifndef EB_ORT_LOAD_H
#define EB_ORT_LOAD_H

#include <onnxruntime_c_api.h>

#include "eb/diag.h"
#include "eb/log.h"

struct eb_ort_lib {
    void *handle;      /* dlopen handle; owned, released by eb_ort__lib_close */
    const OrtApi *api; /* function table of the library; valid while `handle` is open */
    char path[512];    /* the library that was loaded */
    char version[64];  /* its GetVersionString(), e.g. "1.30.0" */
};

/**
 * Loads ONNX Runtime and resolves its C API at ORT_API_VERSION.
 * explicit_path: the --ort_lib value or NULL; borrowed, not kept.
 * log: may be NULL; the full list of places tried is logged there on failure.
 * lib_out: written only on EB_OK; release with eb_ort__lib_close.
 * Returns EB_ERR_IO when no library can be loaded, EB_ERR_UNSUPPORTED when the library is not
 * ONNX Runtime or is too old for the C API version edgebench was compiled against.
 * Thread-safe (dlopen is).
 */
EB_NODISCARD enum eb_status eb_ort__lib_open(const char *explicit_path, const struct eb_log *log,
                                             struct eb_ort_lib *lib_out, struct eb_diag *diag);

/** Closes the library; accepts NULL and a zeroed or already closed `lib`. */
void eb_ort__lib_close(struct eb_ort_lib *lib);

#endif
