/* Protocol-buffer wire format: writer and bounds-checked reader (see onnx_wire.h). */
#include "engine/onnx/onnx_wire.h"

#include <stdlib.h>
#include <string.h>

void eb_pb_buf_init(struct eb_pb_buf *b)
{
    eb_pb_buf_init_alloc(b, NULL);
}

void eb_pb_buf_init_alloc(struct eb_pb_buf *b, const struct eb_allocator *alloc)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->error = 0;
    b->alloc = alloc;
}

static void buf_free(const struct eb_pb_buf *b, void *p)
{
    if (b->alloc != NULL)
        eb_free(b->alloc, p);
    else
        free(p);
}

/* Grows to `cap` bytes keeping the first `len`; NULL (data unchanged) on failure. */
static uint8_t *buf_grow(const struct eb_pb_buf *b, size_t cap)
{
    uint8_t *p;
    if (b->alloc == NULL)
        return realloc(b->data, cap);
    p = eb_alloc(b->alloc, cap);
    if (p == NULL)
        return NULL;
    if (b->len > 0)
        memcpy(p, b->data, b->len);
    eb_free(b->alloc, b->data);
    return p;
}

void eb_pb_buf_fini(struct eb_pb_buf *b)
{
    if (b == NULL)
        return;
    buf_free(b, b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int eb_pb_buf_error(const struct eb_pb_buf *b)
{
    return b->error;
}

uint8_t *eb_pb_buf_take(struct eb_pb_buf *b, size_t *len_out)
{
    uint8_t *p;
    if (b->error) {
        eb_pb_buf_fini(b);
        return NULL;
    }
    if (b->data == NULL) {
        /* An empty message is valid; hand back a one-byte allocation so NULL means failure. */
        b->data = buf_grow(b, 1);
        if (b->data == NULL)
            return NULL;
    }
    p = b->data;
    *len_out = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

static int reserve(struct eb_pb_buf *b, size_t extra)
{
    size_t need, cap;
    uint8_t *p;
    if (b->error)
        return 0;
    if (extra > SIZE_MAX - b->len) {
        b->error = 1;
        return 0;
    }
    need = b->len + extra;
    if (need <= b->cap)
        return 1;
    cap = b->cap ? b->cap : 256;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    p = buf_grow(b, cap);
    if (p == NULL) {
        b->error = 1;
        return 0;
    }
    b->data = p;
    b->cap = cap;
    return 1;
}

void eb_pb_put_raw(struct eb_pb_buf *b, const void *p, size_t n)
{
    if (n == 0 || !reserve(b, n))
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void eb_pb_put_uvarint(struct eb_pb_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        uint8_t c = (uint8_t)(v & 0x7f);
        v >>= 7;
        tmp[n++] = (uint8_t)(c | (v ? 0x80 : 0));
    } while (v);
    eb_pb_put_raw(b, tmp, n);
}

static void put_tag(struct eb_pb_buf *b, uint32_t num, enum eb_pb_wire wire)
{
    eb_pb_put_uvarint(b, ((uint64_t)num << 3) | (uint64_t)wire);
}

void eb_pb_put_varint(struct eb_pb_buf *b, uint32_t num, int64_t v)
{
    put_tag(b, num, EB_PB_WIRE_VARINT);
    eb_pb_put_uvarint(b, (uint64_t)v);
}

void eb_pb_put_f32(struct eb_pb_buf *b, uint32_t num, float v)
{
    uint32_t u;
    uint8_t le[4];
    memcpy(&u, &v, 4);
    le[0] = (uint8_t)u;
    le[1] = (uint8_t)(u >> 8);
    le[2] = (uint8_t)(u >> 16);
    le[3] = (uint8_t)(u >> 24);
    put_tag(b, num, EB_PB_WIRE_I32);
    eb_pb_put_raw(b, le, 4);
}

void eb_pb_put_bytes(struct eb_pb_buf *b, uint32_t num, const void *p, size_t n)
{
    put_tag(b, num, EB_PB_WIRE_LEN);
    eb_pb_put_uvarint(b, n);
    eb_pb_put_raw(b, p, n);
}

void eb_pb_put_str(struct eb_pb_buf *b, uint32_t num, const char *s)
{
    eb_pb_put_bytes(b, num, s, strlen(s));
}

void eb_pb_put_msg(struct eb_pb_buf *b, uint32_t num, const struct eb_pb_buf *sub)
{
    if (sub->error) {
        b->error = 1;
        return;
    }
    eb_pb_put_bytes(b, num, sub->data, sub->len);
}

/* ---- reader ---- */

void eb_pb_reader_init(struct eb_pb_reader *r, const uint8_t *origin, const uint8_t *begin,
                       size_t len)
{
    r->origin = origin;
    r->p = begin;
    r->end = begin + len;
    r->err_offset = 0;
}

void eb_pb_reader_sub(struct eb_pb_reader *r, const struct eb_pb_reader *parent,
                      const struct eb_pb_field *f)
{
    eb_pb_reader_init(r, parent->origin, f->data, f->len);
}

size_t eb_pb_reader_left(const struct eb_pb_reader *r)
{
    return (size_t)(r->end - r->p);
}

size_t eb_pb_reader_offset(const struct eb_pb_reader *r)
{
    return (size_t)(r->p - r->origin);
}

static enum eb_status fail_at(struct eb_pb_reader *r, const uint8_t *where)
{
    r->err_offset = (size_t)(where - r->origin);
    return EB_ERR_FORMAT;
}

enum eb_status eb_pb_read_uvarint(struct eb_pb_reader *r, uint64_t *v_out)
{
    uint64_t v = 0;
    const uint8_t *q = r->p;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        uint8_t c;
        if (q >= r->end)
            return fail_at(r, q);
        c = *q++;
        if (shift == 63 && c > 1)
            return fail_at(r, q - 1); /* more than 64 bits */
        v |= (uint64_t)(c & 0x7f) << shift;
        if ((c & 0x80) == 0) {
            r->p = q;
            *v_out = v;
            return EB_OK;
        }
    }
    return fail_at(r, q);
}

enum eb_status eb_pb_next(struct eb_pb_reader *r, struct eb_pb_field *f_out, int *have_out)
{
    const uint8_t *start = r->p;
    uint64_t key, v;
    struct eb_pb_field f = {0};
    enum eb_status st;

    if (r->p >= r->end) {
        *have_out = 0;
        return EB_OK;
    }
    st = eb_pb_read_uvarint(r, &key);
    if (st != EB_OK)
        return st;
    if ((key >> 3) == 0 || (key >> 3) > 0x1fffffffu)
        return fail_at(r, start);
    f.num = (uint32_t)(key >> 3);
    switch (key & 7) {
    case EB_PB_WIRE_VARINT:
        f.wire = EB_PB_WIRE_VARINT;
        st = eb_pb_read_uvarint(r, &f.u);
        if (st != EB_OK)
            return st;
        break;
    case EB_PB_WIRE_I64:
        f.wire = EB_PB_WIRE_I64;
        if (eb_pb_reader_left(r) < 8)
            return fail_at(r, r->end);
        v = 0;
        for (int i = 7; i >= 0; i--)
            v = (v << 8) | r->p[i];
        f.u = v;
        r->p += 8;
        break;
    case EB_PB_WIRE_I32:
        f.wire = EB_PB_WIRE_I32;
        if (eb_pb_reader_left(r) < 4)
            return fail_at(r, r->end);
        f.u = (uint64_t)r->p[0] | ((uint64_t)r->p[1] << 8) | ((uint64_t)r->p[2] << 16) |
              ((uint64_t)r->p[3] << 24);
        r->p += 4;
        break;
    case EB_PB_WIRE_LEN:
        f.wire = EB_PB_WIRE_LEN;
        st = eb_pb_read_uvarint(r, &v);
        if (st != EB_OK)
            return st;
        if (v > eb_pb_reader_left(r))
            return fail_at(r, r->end);
        f.data = r->p;
        f.len = (size_t)v;
        r->p += v;
        break;
    default: return fail_at(r, start);
    }
    *f_out = f;
    *have_out = 1;
    return EB_OK;
}
