/*
 * Protocol-buffer wire format primitives for ONNX files, without a protobuf library.
 *
 * Writer: a growable byte buffer with sticky error state; nested messages are built in their own
 * buffer and appended with eb_pb_put_msg.
 *
 *     struct eb_pb_buf b;
 *     eb_pb_buf_init(&b);
 *     eb_pb_put_varint(&b, 1, 8);              // ir_version
 *     eb_pb_put_str(&b, 2, "edgebench");       // producer_name
 *     if (eb_pb_buf_error(&b)) ... ;
 *     eb_pb_buf_fini(&b);
 *
 * Reader: a bounds-checked cursor over borrowed bytes. Every read checks the remaining length
 * before touching memory; on failure it returns EB_ERR_FORMAT and records the byte offset (from
 * `origin`, the start of the file) in `err_offset`, so the caller can say where a file is broken.
 *
 *     struct eb_pb_reader r;
 *     eb_pb_reader_init(&r, bytes, bytes, len);
 *     struct eb_pb_field f;
 *     int have;
 *     while ((st = eb_pb_next(&r, &f, &have)) == EB_OK && have) { switch (f.num) ... }
 *
 * Thread-safety: none needed; each object is used by one thread.
 */
#ifndef EB_ONNX_WIRE_H
#define EB_ONNX_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "eb/alloc.h"
#include "eb/status.h"

enum eb_pb_wire {
    EB_PB_WIRE_VARINT = 0,
    EB_PB_WIRE_I64 = 1,
    EB_PB_WIRE_LEN = 2,
    EB_PB_WIRE_I32 = 5,
};

/* ---- writer ---- */

/**
 * Growable output buffer. `data` comes from `alloc` (malloc when `alloc` is NULL) and is owned by
 * the buffer until taken.
 */
struct eb_pb_buf {
    uint8_t *data;
    size_t len, cap;
    int error; /* sticky: set when an allocation failed or a size overflowed */
    const struct eb_allocator *alloc; /* borrowed; NULL = malloc/realloc/free */
};

/** Starts an empty buffer over malloc (no allocation). */
void eb_pb_buf_init(struct eb_pb_buf *b);
/** Starts an empty buffer whose memory comes from `alloc` (borrowed, must outlive the buffer). */
void eb_pb_buf_init_alloc(struct eb_pb_buf *b, const struct eb_allocator *alloc);
/** Frees the bytes unless taken; accepts a zeroed or already finished buffer. */
void eb_pb_buf_fini(struct eb_pb_buf *b);
/** Non-zero once any append failed. */
int eb_pb_buf_error(const struct eb_pb_buf *b);
/**
 * Hands the bytes to the caller and resets the buffer; NULL if an error occurred. The caller frees
 * them with free() (eb_pb_buf_init) or eb_free(alloc) (eb_pb_buf_init_alloc).
 */
uint8_t *eb_pb_buf_take(struct eb_pb_buf *b, size_t *len_out);

/** Appends raw bytes (no tag). */
void eb_pb_put_raw(struct eb_pb_buf *b, const void *p, size_t n);
/** Appends a bare varint (no tag). */
void eb_pb_put_uvarint(struct eb_pb_buf *b, uint64_t v);
/** Field `num` as a varint (int32/int64/enum/bool; negative values as 10-byte two's complement). */
void eb_pb_put_varint(struct eb_pb_buf *b, uint32_t num, int64_t v);
/** Field `num` as fixed32 float. */
void eb_pb_put_f32(struct eb_pb_buf *b, uint32_t num, float v);
/** Field `num` as length-delimited bytes (borrowed, copied). */
void eb_pb_put_bytes(struct eb_pb_buf *b, uint32_t num, const void *p, size_t n);
/** Field `num` as a string (NUL-terminated, borrowed, copied). */
void eb_pb_put_str(struct eb_pb_buf *b, uint32_t num, const char *s);
/** Field `num` as an embedded message: the bytes of `sub` (borrowed; `sub` is not changed). */
void eb_pb_put_msg(struct eb_pb_buf *b, uint32_t num, const struct eb_pb_buf *sub);

/* ---- reader ---- */

/** Cursor over [p, end) of a buffer that starts at `origin` (all borrowed). */
struct eb_pb_reader {
    const uint8_t *origin;
    const uint8_t *p, *end;
    size_t err_offset; /* byte offset from origin of the first failure */
};

/** One field: `num`, `wire`; varint/fixed value in `u`; LEN payload in `data`/`len` (borrowed). */
struct eb_pb_field {
    uint32_t num;
    enum eb_pb_wire wire;
    uint64_t u;
    const uint8_t *data;
    size_t len;
};

/** Reads [begin, begin+len) of a buffer that starts at `origin`. */
void eb_pb_reader_init(struct eb_pb_reader *r, const uint8_t *origin, const uint8_t *begin,
                       size_t len);
/** Reader over the payload of a LEN field read from `parent` (same origin). */
void eb_pb_reader_sub(struct eb_pb_reader *r, const struct eb_pb_reader *parent,
                      const struct eb_pb_field *f);
/**
 * Reads the next field. `*have_out` = 0 at the clean end of the buffer. EB_ERR_FORMAT (with
 * r->err_offset set) for a truncated field, an over-long varint, field number 0, a group or an
 * unknown wire type, or a length that runs past the end.
 */
EB_NODISCARD enum eb_status eb_pb_next(struct eb_pb_reader *r, struct eb_pb_field *f_out,
                                       int *have_out);
/** Reads one varint from a packed payload cursor; EB_ERR_FORMAT when truncated. */
EB_NODISCARD enum eb_status eb_pb_read_uvarint(struct eb_pb_reader *r, uint64_t *v_out);
/** Number of bytes left in the reader. */
size_t eb_pb_reader_left(const struct eb_pb_reader *r);
/** Offset of the cursor from the origin. */
size_t eb_pb_reader_offset(const struct eb_pb_reader *r);

#endif
