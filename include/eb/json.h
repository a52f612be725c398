/*
 * A small streaming JSON writer (to a FILE* or a growable memory buffer) and a DOM reader
 * (used by tests and tools to read reports back).
 *
 *     struct eb_json_writer w;
 *     eb_json_writer_init_file(&w, fp, 1);
 *     eb_json_obj_begin(&w);
 *     eb_json_key(&w, "fps"); eb_json_num(&w, 29.97);
 *     eb_json_obj_end(&w);
 *     if (eb_json_writer_error(&w)) ...
 *
 * Non-finite numbers are written as null. Strings are escaped (control characters, quotes,
 * backslash); invalid UTF-8 bytes are replaced by U+FFFD.
 */
#ifndef EB_JSON_H
#define EB_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "eb/alloc.h"
#include "eb/diag.h"

#define EB_JSON_MAX_DEPTH 64

struct eb_json_writer {
    FILE *fp;  /* file sink, or NULL for the memory sink */
    char *buf; /* memory sink: malloc'd, owned by the writer until taken */
    size_t len, cap;
    int pretty;
    int depth;
    int need_comma[EB_JSON_MAX_DEPTH];
    int after_key;
    int error; /* sticky: set on I/O or allocation failure or misuse */
};

/** Writes to `fp` (borrowed). `pretty` = 1 indents with two spaces. */
void eb_json_writer_init_file(struct eb_json_writer *w, FILE *fp, int pretty);
/** Writes to a growable buffer; take it with eb_json_writer_take, free with eb_json_writer_fini. */
void eb_json_writer_init_mem(struct eb_json_writer *w, int pretty);
/** Returns the NUL-terminated buffer (caller owns, free()) and resets the writer; NULL on error. */
char *eb_json_writer_take(struct eb_json_writer *w, size_t *len_out);
/** Frees the memory sink if not taken. */
void eb_json_writer_fini(struct eb_json_writer *w);
/** Non-zero once anything failed. */
int eb_json_writer_error(const struct eb_json_writer *w);

void eb_json_obj_begin(struct eb_json_writer *w);
void eb_json_obj_end(struct eb_json_writer *w);
void eb_json_arr_begin(struct eb_json_writer *w);
void eb_json_arr_end(struct eb_json_writer *w);
void eb_json_key(struct eb_json_writer *w, const char *key);
void eb_json_str(struct eb_json_writer *w, const char *s); /* NULL writes null */
void eb_json_num(struct eb_json_writer *w, double v);      /* %.17g-precise shortest form */
void eb_json_int(struct eb_json_writer *w, int64_t v);
void eb_json_uint(struct eb_json_writer *w, uint64_t v);
void eb_json_bool(struct eb_json_writer *w, int v);
void eb_json_null(struct eb_json_writer *w);
/* key + value shorthands */
void eb_json_kstr(struct eb_json_writer *w, const char *key, const char *s);
void eb_json_knum(struct eb_json_writer *w, const char *key, double v);
void eb_json_kint(struct eb_json_writer *w, const char *key, int64_t v);
void eb_json_kbool(struct eb_json_writer *w, const char *key, int v);

/* ---- reader ---- */
enum eb_json_type {
    EB_JSON_NULL,
    EB_JSON_BOOL,
    EB_JSON_NUMBER,
    EB_JSON_STRING,
    EB_JSON_ARRAY,
    EB_JSON_OBJECT,
};

struct eb_json_value {
    enum eb_json_type type;
    double num;                  /* NUMBER, BOOL (0/1) */
    char *str;                   /* STRING (NUL-terminated, unescaped) */
    size_t n;                    /* ARRAY/OBJECT element count */
    struct eb_json_value *items; /* ARRAY/OBJECT elements */
    char **keys;                 /* OBJECT keys, parallel to items */
};

/**
 * Parses `len` bytes of JSON text into a tree. Caller owns `*root_out` and frees it with
 * eb_json_free. EB_ERR_FORMAT with the byte offset on malformed input.
 */
EB_NODISCARD enum eb_status eb_json_parse(const char *text, size_t len,
                                          struct eb_json_value **root_out, struct eb_diag *diag);
/** Frees a tree from eb_json_parse; accepts NULL. */
void eb_json_free(struct eb_json_value *root);
/** Member `key` of an object, or NULL. */
const struct eb_json_value *eb_json_get(const struct eb_json_value *obj, const char *key);
/** Follows a "/"-separated path of keys and array indices ("slots/0/status"), or NULL. */
const struct eb_json_value *eb_json_path(const struct eb_json_value *root, const char *path);

#endif
