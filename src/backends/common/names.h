/*
 * Class names from an Ultralytics model's "names" metadata, shared by the backends (ort reads
 * the string through ONNX Runtime's metadata API, native through eb_engine_meta).
 *
 *     char **names = NULL;
 *     size_t n = 0;
 *     if (eb_backend__parse_names(text, &names, &n, &diag) == EB_OK) {
 *         ... names[class_id] ...
 *         eb_backend__names_free(names, n);
 *     }
 *
 * Internal to src/backends (the `__` marks a cross-file helper of one module, house style §2).
 */
#ifndef EB_BACKENDS_NAMES_H
#define EB_BACKENDS_NAMES_H

#include <stddef.h>

#include "eb/diag.h"

/** Class ids above this are treated as garbage (never allocated for). */
#define EB_BACKEND_NAMES_MAX_ID 100000

/**
 * Parses the "names" metadata `text` (borrowed, NUL-terminated): a Python dict literal as
 * Ultralytics writes it ({0: 'person', 1: 'bicycle'}), the same with double quotes or quoted
 * keys ({"0": "person"}), or a JSON list (["person", "bicycle"]). String literals may use
 * Python/JSON escapes (\', \", \\, \n, \t, \xNN, \uNNNN, \UNNNNNNNN → UTF-8).
 *
 * On success `*names_out` is a new array of `*n_out` (≥ 1) NUL-terminated strings, index =
 * class id; ids missing from a dict are filled with "class<N>"; the last of duplicate ids
 * wins. The caller owns the array and every string in it and frees them with
 * eb_backend__names_free. Outputs are written only on EB_OK.
 *
 * Returns EB_ERR_FORMAT when `text` is not such a literal (empty, unterminated, unquoted
 * names, an id above EB_BACKEND_NAMES_MAX_ID, trailing text), EB_ERR_NOMEM; either way nothing
 * stays allocated. `diag` may be NULL. Thread-safe (no shared state).
 */
EB_NODISCARD enum eb_status eb_backend__parse_names(const char *text, char ***names_out,
                                                    size_t *n_out, struct eb_diag *diag);

/** Frees what eb_backend__parse_names returned; accepts NULL (and n = 0). */
void eb_backend__names_free(char **names, size_t n);

#endif
