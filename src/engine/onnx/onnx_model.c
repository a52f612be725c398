/*
 * ONNX ModelProto parser into struct eb_onnx_model (see onnx_model.h). Every count and size
 * read from the file is checked against a hard limit (and, for tensors, against the file size)
 * before storage is allocated for it.
 */
#include "engine/onnx/onnx_model.h"

#include <stdlib.h>
#include <string.h>

#include "engine/onnx/onnx_wire.h"

/* ---- arena: bump allocation in chunks, freed at once ---- */

struct eb_onnx_chunk {
    struct eb_onnx_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

struct eb_onnx_arena {
    struct eb_allocator alloc; /* copy of the parse allocator (its ctx is borrowed) */
    struct eb_onnx_chunk *head;
    size_t used, budget; /* bytes handed out; hard limit proportional to the file size */
    int over_budget;     /* set when a request would pass `budget` */
};

/* The parsed description of a well-formed model takes a few times its file size at most (names
 * are copied once, each node/attribute/tensor header is a few dozen bytes per field of at least
 * two bytes); a file that would need more is hostile. */
#define ARENA_BUDGET_PER_BYTE 64u
#define ARENA_BUDGET_BASE     ((size_t)1 << 20)

static void *arena_alloc(struct eb_onnx_arena *a, size_t n)
{
    struct eb_onnx_chunk *c = a->head;
    void *p;
    if (n > SIZE_MAX - 15u)
        return NULL;
    n = (n + 15u) & ~(size_t)15u;
    if (n == 0)
        n = 16;
    if (n > a->budget - a->used) {
        a->over_budget = 1;
        return NULL;
    }
    if (c == NULL || c->cap - c->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        if (cap > SIZE_MAX - sizeof(*c))
            return NULL;
        c = eb_alloc(&a->alloc, sizeof(*c) + cap);
        if (c == NULL)
            return NULL;
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    p = c->data + c->used;
    c->used += n;
    a->used += n;
    memset(p, 0, n);
    return p;
}

/* Frees the chunks and the arena itself (which lives in memory from its own allocator). */
static void arena_free(struct eb_onnx_arena *a)
{
    struct eb_onnx_chunk *c;
    struct eb_allocator alloc;
    if (a == NULL)
        return;
    alloc = a->alloc;
    c = a->head;
    while (c != NULL) {
        struct eb_onnx_chunk *next = c->next;
        eb_free(&alloc, c);
        c = next;
    }
    eb_free(&alloc, a);
}

/* ---- parse context ---- */

struct ctx {
    const char *what;
    const uint8_t *origin;
    size_t file_len;
    struct eb_onnx_arena *arena;
    struct eb_diag *diag;
};

static enum eb_status trunc_fail(struct ctx *c, const struct eb_pb_reader *r)
{
    return eb_diag_fail(c->diag, EB_ERR_FORMAT,
                        "failed to read model %s: truncated at byte %zu; is it an ONNX file?",
                        c->what, r->err_offset);
}

static enum eb_status bad(struct ctx *c, const struct eb_pb_reader *r, const char *why)
{
    return eb_diag_fail(c->diag, EB_ERR_FORMAT,
                        "failed to read model %s: %s at byte %zu; is it an ONNX file?", c->what,
                        why, eb_pb_reader_offset(r));
}

static enum eb_status nomem(struct ctx *c)
{
    if (c->arena != NULL && c->arena->over_budget)
        return eb_diag_fail(c->diag, EB_ERR_FORMAT,
                            "failed to read model %s: its structure would need more than %u times "
                            "the file size in memory; is it an ONNX file?",
                            c->what, ARENA_BUDGET_PER_BYTE);
    return eb_diag_fail(
        c->diag, EB_ERR_NOMEM,
        "failed to read model %s: out of memory; free memory or use a smaller model", c->what);
}

/* Next field; *have = 0 at end. Maps wire errors to the "truncated at byte" message. */
static enum eb_status next(struct ctx *c, struct eb_pb_reader *r, struct eb_pb_field *f, int *have)
{
    if (eb_pb_next(r, f, have) != EB_OK)
        return trunc_fail(c, r);
    return EB_OK;
}

static enum eb_status want(struct ctx *c, const struct eb_pb_reader *r, const struct eb_pb_field *f,
                           enum eb_pb_wire w)
{
    if (f->wire != w)
        return bad(c, r, "unexpected wire type");
    return EB_OK;
}

static enum eb_status copy_str(struct ctx *c, const struct eb_pb_reader *r,
                               const struct eb_pb_field *f, size_t limit, const char **out)
{
    char *s;
    enum eb_status st = want(c, r, f, EB_PB_WIRE_LEN);
    if (st != EB_OK)
        return st;
    if (f->len > limit)
        return bad(c, r, "string longer than the limit");
    s = arena_alloc(c->arena, f->len + 1);
    if (s == NULL)
        return nomem(c);
    memcpy(s, f->data, f->len);
    s[f->len] = '\0';
    *out = s;
    return EB_OK;
}

size_t eb_onnx_dtype_size(int32_t dtype)
{
    switch (dtype) {
    case EB_ONNX_FLOAT:
    case EB_ONNX_INT32:
    case EB_ONNX_UINT32: return 4;
    case EB_ONNX_UINT8:
    case EB_ONNX_INT8:
    case EB_ONNX_BOOL: return 1;
    case EB_ONNX_UINT16:
    case EB_ONNX_INT16:
    case EB_ONNX_FLOAT16:
    case EB_ONNX_BFLOAT16: return 2;
    case EB_ONNX_INT64:
    case EB_ONNX_DOUBLE:
    case EB_ONNX_UINT64: return 8;
    default: return 0;
    }
}

const char *eb_onnx_dtype_name(int32_t dtype)
{
    switch (dtype) {
    case EB_ONNX_FLOAT: return "float32";
    case EB_ONNX_UINT8: return "uint8";
    case EB_ONNX_INT8: return "int8";
    case EB_ONNX_UINT16: return "uint16";
    case EB_ONNX_INT16: return "int16";
    case EB_ONNX_INT32: return "int32";
    case EB_ONNX_INT64: return "int64";
    case EB_ONNX_STRING: return "string";
    case EB_ONNX_BOOL: return "bool";
    case EB_ONNX_FLOAT16: return "float16";
    case EB_ONNX_DOUBLE: return "float64";
    case EB_ONNX_UINT32: return "uint32";
    case EB_ONNX_UINT64: return "uint64";
    case EB_ONNX_BFLOAT16: return "bfloat16";
    default: return "unknown";
    }
}

/* Decimal digits of an external_data value into *v; 0 when empty, not all digits or too big. */
static int parse_u64(const char *s, uint64_t *v)
{
    uint64_t x = 0;
    if (*s == '\0')
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || x > (UINT64_MAX - 9u) / 10u)
            return 0;
        x = x * 10u + (uint64_t)(*s - '0');
    }
    *v = x;
    return 1;
}

/* One StringStringEntryProto of TensorProto.external_data: location, offset, length. */
static enum eb_status parse_external_entry(struct ctx *c, const struct eb_pb_reader *parent,
                                           const struct eb_pb_field *ef, struct eb_onnx_tensor *t)
{
    struct eb_pb_reader r;
    struct eb_pb_field g;
    int have;
    enum eb_status st;
    const char *key = "", *value = "";
    uint64_t v;

    eb_pb_reader_sub(&r, parent, ef);
    while ((st = next(c, &r, &g, &have)) == EB_OK && have) {
        if (g.num == 1)
            st = copy_str(c, &r, &g, EB_ONNX_MAX_NAME, &key);
        else if (g.num == 2)
            st = copy_str(c, &r, &g, EB_ONNX_MAX_NAME, &value);
        if (st != EB_OK)
            return st;
    }
    if (st != EB_OK)
        return st;
    if (strcmp(key, "location") == 0) {
        t->ext_location = value;
    } else if (strcmp(key, "offset") == 0) {
        if (!parse_u64(value, &v))
            return bad(c, &r, "external_data offset is not a decimal number");
        t->ext_offset = v;
    } else if (strcmp(key, "length") == 0) {
        if (!parse_u64(value, &v) || v > (uint64_t)INT64_MAX)
            return bad(c, &r, "external_data length is not a decimal number");
        t->ext_length = (int64_t)v;
    }
    return EB_OK;
}

/* TensorProto header: dims, type, name, location; data stays in the file. */
static enum eb_status parse_tensor(struct ctx *c, const struct eb_pb_reader *parent,
                                   const struct eb_pb_field *tf, struct eb_onnx_tensor *t)
{
    struct eb_pb_reader r;
    struct eb_pb_field f;
    int have;
    enum eb_status st;
    size_t raw_len = 0;
    int has_raw = 0;

    eb_pb_reader_sub(&r, parent, tf);
    t->name = "";
    t->ext_location = "";
    t->ext_length = -1;
    t->msg = tf->data;
    t->msg_len = tf->len;
    t->origin = c->origin;
    for (;;) {
        st = next(c, &r, &f, &have);
        if (st != EB_OK || !have)
            break;
        switch (f.num) {
        case 1: /* dims: packed or not */
            if (f.wire == EB_PB_WIRE_VARINT) {
                if (t->rank >= EB_ONNX_MAX_RANK)
                    return bad(c, &r, "tensor rank above the limit of 8");
                t->dims[t->rank++] = (int64_t)f.u;
            } else if (f.wire == EB_PB_WIRE_LEN) {
                struct eb_pb_reader pr;
                eb_pb_reader_sub(&pr, &r, &f);
                while (eb_pb_reader_left(&pr) > 0) {
                    uint64_t v;
                    if (eb_pb_read_uvarint(&pr, &v) != EB_OK)
                        return trunc_fail(c, &pr);
                    if (t->rank >= EB_ONNX_MAX_RANK)
                        return bad(c, &r, "tensor rank above the limit of 8");
                    t->dims[t->rank++] = (int64_t)v;
                }
            } else {
                return bad(c, &r, "unexpected wire type");
            }
            break;
        case 2:
            if ((st = want(c, &r, &f, EB_PB_WIRE_VARINT)) != EB_OK)
                return st;
            t->dtype = (int32_t)f.u;
            break;
        case 8:
            if ((st = copy_str(c, &r, &f, EB_ONNX_MAX_NAME, &t->name)) != EB_OK)
                return st;
            break;
        case 9:
            if ((st = want(c, &r, &f, EB_PB_WIRE_LEN)) != EB_OK)
                return st;
            has_raw = 1;
            raw_len = f.len;
            break;
        case 13:
            if ((st = want(c, &r, &f, EB_PB_WIRE_LEN)) != EB_OK ||
                (st = parse_external_entry(c, &r, &f, t)) != EB_OK)
                return st;
            break;
        case 14:
            if (f.wire == EB_PB_WIRE_VARINT && f.u == 1)
                t->external = 1;
            break;
        default: break;
        }
    }
    if (st != EB_OK)
        return st;
    t->numel = 1;
    for (int i = 0; i < t->rank; i++) {
        /* External data lives outside this file: its size is bounded by a fixed limit here and
         * checked against the data file before anything is read. */
        uint64_t bound = t->external ? EB_ONNX_MAX_EXT_NUMEL : (uint64_t)c->file_len * 8u + 8u;
        if (t->dims[i] < 0 || t->dims[i] > EB_ONNX_MAX_DIM)
            return bad(c, &r, "tensor dimension out of range");
        if (t->dims[i] != 0 && t->numel > bound / (uint64_t)t->dims[i])
            return bad(c, &r,
                       t->external ? "external tensor larger than the limit"
                                   : "tensor larger than the file");
        t->numel *= (uint64_t)t->dims[i];
    }
    if (t->external && t->ext_location[0] == '\0')
        return bad(c, &r, "external tensor without a 'location' entry");
    if (!t->external) {
        size_t es = eb_onnx_dtype_size(t->dtype);
        /* Data must be in the file: numel elements of at least one byte each (a packed varint
         * takes at least one), or exactly numel * size bytes of raw_data. */
        if (t->numel > c->file_len)
            return bad(c, &r, "tensor larger than the file");
        if (has_raw && es != 0 && raw_len != t->numel * es)
            return bad(c, &r, "tensor raw_data size does not match its shape");
    }
    return EB_OK;
}

/* ValueInfoProto: name + tensor type (elem_type, shape). */
static enum eb_status parse_value(struct ctx *c, const struct eb_pb_reader *parent,
                                  const struct eb_pb_field *vf, struct eb_onnx_value *v)
{
    struct eb_pb_reader r, tr, ttr, sr, dr;
    struct eb_pb_field f, g, h, d, e;
    int have;
    enum eb_status st;

    v->name = "";
    v->rank = -1;
    eb_pb_reader_sub(&r, parent, vf);
    while ((st = next(c, &r, &f, &have)) == EB_OK && have) {
        if (f.num == 1) {
            if ((st = copy_str(c, &r, &f, EB_ONNX_MAX_NAME, &v->name)) != EB_OK)
                return st;
        } else if (f.num == 2) {
            if ((st = want(c, &r, &f, EB_PB_WIRE_LEN)) != EB_OK)
                return st;
            eb_pb_reader_sub(&tr, &r, &f);
            while ((st = next(c, &tr, &g, &have)) == EB_OK && have) {
                if (g.num != 1)
                    continue; /* sequence/map types: leave unknown */
                if ((st = want(c, &tr, &g, EB_PB_WIRE_LEN)) != EB_OK)
                    return st;
                eb_pb_reader_sub(&ttr, &tr, &g);
                while ((st = next(c, &ttr, &h, &have)) == EB_OK && have) {
                    if (h.num == 1 && h.wire == EB_PB_WIRE_VARINT) {
                        v->elem_type = (int32_t)h.u;
                    } else if (h.num == 2) {
                        if ((st = want(c, &ttr, &h, EB_PB_WIRE_LEN)) != EB_OK)
                            return st;
                        v->rank = 0;
                        eb_pb_reader_sub(&sr, &ttr, &h);
                        while ((st = next(c, &sr, &d, &have)) == EB_OK && have) {
                            int64_t dim = -1;
                            const char *param = NULL;
                            if (d.num != 1)
                                continue;
                            if ((st = want(c, &sr, &d, EB_PB_WIRE_LEN)) != EB_OK)
                                return st;
                            if (v->rank >= EB_ONNX_MAX_RANK)
                                return bad(c, &sr, "value rank above the limit of 8");
                            eb_pb_reader_sub(&dr, &sr, &d);
                            while ((st = next(c, &dr, &e, &have)) == EB_OK && have) {
                                if (e.num == 1 && e.wire == EB_PB_WIRE_VARINT) {
                                    if ((int64_t)e.u < 0 || (int64_t)e.u > EB_ONNX_MAX_DIM)
                                        return bad(c, &dr, "dimension out of range");
                                    dim = (int64_t)e.u;
                                } else if (e.num == 2 && e.wire == EB_PB_WIRE_LEN &&
                                           (st = copy_str(c, &dr, &e, EB_ONNX_MAX_NAME, &param)) !=
                                               EB_OK) {
                                    return st;
                                }
                            }
                            if (st != EB_OK)
                                return st;
                            v->dim_params[v->rank] = dim < 0 ? param : NULL;
                            v->dims[v->rank++] = dim;
                        }
                        if (st != EB_OK)
                            return st;
                    }
                }
                if (st != EB_OK)
                    return st;
            }
            if (st != EB_OK)
                return st;
        }
    }
    return st;
}

static const int64_t no_ints[1] = {0};
static const float no_floats[1] = {0.0f};

/* Counts (ints or floats) entries of a repeated numeric field, packed or not. */
static enum eb_status parse_attr(struct ctx *c, const struct eb_pb_reader *parent,
                                 const struct eb_pb_field *af, struct eb_onnx_attr *a)
{
    struct eb_pb_reader r;
    struct eb_pb_field f;
    int have;
    enum eb_status st;
    size_t n_ints = 0, n_floats = 0;
    int64_t *ints = NULL;
    float *floats = NULL;

    a->name = "";
    /* Pass 1: scalars and counts. */
    eb_pb_reader_sub(&r, parent, af);
    while ((st = next(c, &r, &f, &have)) == EB_OK && have) {
        switch (f.num) {
        case 1:
            if ((st = copy_str(c, &r, &f, EB_ONNX_MAX_NAME, &a->name)) != EB_OK)
                return st;
            break;
        case 2:
            if ((st = want(c, &r, &f, EB_PB_WIRE_I32)) != EB_OK)
                return st;
            {
                uint32_t u = (uint32_t)f.u;
                memcpy(&a->f, &u, 4);
            }
            break;
        case 3:
            if ((st = want(c, &r, &f, EB_PB_WIRE_VARINT)) != EB_OK)
                return st;
            a->i = (int64_t)f.u;
            break;
        case 4:
            if ((st = copy_str(c, &r, &f, EB_ONNX_MAX_META_VALUE, &a->s)) != EB_OK)
                return st;
            break;
        case 5: {
            struct eb_onnx_tensor *t;
            if ((st = want(c, &r, &f, EB_PB_WIRE_LEN)) != EB_OK)
                return st;
            t = arena_alloc(c->arena, sizeof(*t));
            if (t == NULL)
                return nomem(c);
            if ((st = parse_tensor(c, &r, &f, t)) != EB_OK)
                return st;
            a->t = t;
            break;
        }
        case 7:
            if (f.wire == EB_PB_WIRE_LEN)
                n_floats += f.len / 4;
            else if (f.wire == EB_PB_WIRE_I32)
                n_floats++;
            else
                return bad(c, &r, "unexpected wire type");
            break;
        case 8:
            if (f.wire == EB_PB_WIRE_LEN)
                n_ints += f.len; /* upper bound: one byte per varint at least */
            else if (f.wire == EB_PB_WIRE_VARINT)
                n_ints++;
            else
                return bad(c, &r, "unexpected wire type");
            break;
        case 20:
            if ((st = want(c, &r, &f, EB_PB_WIRE_VARINT)) != EB_OK)
                return st;
            a->type = (int)f.u;
            break;
        default: break;
        }
        if (n_ints > EB_ONNX_MAX_ATTR_ELEMS || n_floats > EB_ONNX_MAX_ATTR_ELEMS)
            return bad(c, &r, "attribute with more elements than the limit");
    }
    if (st != EB_OK)
        return st;
    if (n_ints > 0 && (ints = arena_alloc(c->arena, n_ints * sizeof(*ints))) == NULL)
        return nomem(c);
    if (n_floats > 0 && (floats = arena_alloc(c->arena, n_floats * sizeof(*floats))) == NULL)
        return nomem(c);
    /* Pass 2: repeated values. */
    a->n_ints = a->n_floats = 0;
    eb_pb_reader_sub(&r, parent, af);
    while ((st = next(c, &r, &f, &have)) == EB_OK && have) {
        if (f.num == 8) {
            if (f.wire == EB_PB_WIRE_VARINT) {
                ints[a->n_ints++] = (int64_t)f.u;
            } else {
                struct eb_pb_reader pr;
                eb_pb_reader_sub(&pr, &r, &f);
                while (eb_pb_reader_left(&pr) > 0) {
                    uint64_t v;
                    if (eb_pb_read_uvarint(&pr, &v) != EB_OK)
                        return trunc_fail(c, &pr);
                    ints[a->n_ints++] = (int64_t)v;
                }
            }
        } else if (f.num == 7) {
            size_t cnt = f.wire == EB_PB_WIRE_LEN ? f.len / 4 : 1;
            for (size_t k = 0; k < cnt; k++) {
                uint32_t u;
                if (f.wire == EB_PB_WIRE_LEN) {
                    const uint8_t *q = f.data + 4 * k;
                    u = (uint32_t)q[0] | ((uint32_t)q[1] << 8) | ((uint32_t)q[2] << 16) |
                        ((uint32_t)q[3] << 24);
                } else {
                    u = (uint32_t)f.u;
                }
                memcpy(&floats[a->n_floats++], &u, 4);
            }
        }
    }
    if (st != EB_OK)
        return st;
    /* Never NULL, so that consumers may memcpy n_ints (possibly 0) entries. */
    a->ints = ints != NULL ? ints : no_ints;
    a->floats = floats != NULL ? floats : no_floats;
    if (a->type == EB_ONNX_ATTR_UNDEFINED) {
        /* Old files omit the type; infer it from what is present. */
        if (a->t != NULL)
            a->type = EB_ONNX_ATTR_TENSOR;
        else if (a->s != NULL)
            a->type = EB_ONNX_ATTR_STRING;
        else if (a->n_ints > 0)
            a->type = EB_ONNX_ATTR_INTS;
        else if (a->n_floats > 0)
            a->type = EB_ONNX_ATTR_FLOATS;
    }
    return EB_OK;
}

static enum eb_status parse_node(struct ctx *c, const struct eb_pb_reader *parent,
                                 const struct eb_pb_field *nf, struct eb_onnx_node *n)
{
    struct eb_pb_reader r;
    struct eb_pb_field f;
    int have;
    enum eb_status st;
    size_t n_in = 0, n_out = 0, n_attr = 0;
    const char **ins = NULL, **outs = NULL;
    struct eb_onnx_attr *attrs = NULL;

    n->op_type = n->name = n->domain = "";
    eb_pb_reader_sub(&r, parent, nf);
    while ((st = next(c, &r, &f, &have)) == EB_OK && have) {
        if (f.num == 1)
            n_in++;
        else if (f.num == 2)
            n_out++;
        else if (f.num == 5)
            n_attr++;
    }
    if (st != EB_OK)
        return st;
    if (n_in > EB_ONNX_MAX_NODE_IO || n_out > EB_ONNX_MAX_NODE_IO)
        return bad(c, &r, "node with more inputs or outputs than the limit");
    if (n_attr > EB_ONNX_MAX_ATTRS)
        return bad(c, &r, "node with more attributes than the limit");
    if ((n_in && (ins = arena_alloc(c->arena, n_in * sizeof(*ins))) == NULL) ||
        (n_out && (outs = arena_alloc(c->arena, n_out * sizeof(*outs))) == NULL) ||
        (n_attr && (attrs = arena_alloc(c->arena, n_attr * sizeof(*attrs))) == NULL))
        return nomem(c);
    n->inputs = ins;
    n->outputs = outs;
    n->attrs = attrs;
    eb_pb_reader_sub(&r, parent, nf);
    while ((st = next(c, &r, &f, &have)) == EB_OK && have) {
        switch (f.num) {
        case 1: st = copy_str(c, &r, &f, EB_ONNX_MAX_NAME, &ins[n->n_inputs++]); break;
        case 2: st = copy_str(c, &r, &f, EB_ONNX_MAX_NAME, &outs[n->n_outputs++]); break;
        case 3: st = copy_str(c, &r, &f, EB_ONNX_MAX_NAME, &n->name); break;
        case 4: st = copy_str(c, &r, &f, EB_ONNX_MAX_NAME, &n->op_type); break;
        case 5:
            st = want(c, &r, &f, EB_PB_WIRE_LEN);
            if (st == EB_OK)
                st = parse_attr(c, &r, &f, &attrs[n->n_attrs++]);
            break;
        case 7: st = copy_str(c, &r, &f, EB_ONNX_MAX_NAME, &n->domain); break;
        default: break;
        }
        if (st != EB_OK)
            return st;
    }
    return st;
}

static enum eb_status parse_graph(struct ctx *c, const struct eb_pb_reader *parent,
                                  const struct eb_pb_field *gf, struct eb_onnx_model *m)
{
    struct eb_pb_reader r;
    struct eb_pb_field f;
    int have;
    enum eb_status st;
    size_t cn = 0, ci = 0, cin = 0, cout = 0, cvi = 0;
    struct eb_onnx_node *nodes = NULL;
    struct eb_onnx_tensor *inits = NULL;
    struct eb_onnx_value *ins = NULL, *outs = NULL, *vis = NULL;

    eb_pb_reader_sub(&r, parent, gf);
    while ((st = next(c, &r, &f, &have)) == EB_OK && have) {
        switch (f.num) {
        case 1: cn++; break;
        case 5: ci++; break;
        case 11: cin++; break;
        case 12: cout++; break;
        case 13: cvi++; break;
        default: break;
        }
        if (cn > EB_ONNX_MAX_NODES)
            return bad(c, &r, "more nodes than the limit of 100000");
        if (ci > EB_ONNX_MAX_TENSORS)
            return bad(c, &r, "more initializers than the limit of 100000");
        if (cin + cout + cvi > EB_ONNX_MAX_VALUES)
            return bad(c, &r, "more value infos than the limit");
    }
    if (st != EB_OK)
        return st;
    if ((cn && (nodes = arena_alloc(c->arena, cn * sizeof(*nodes))) == NULL) ||
        (ci && (inits = arena_alloc(c->arena, ci * sizeof(*inits))) == NULL) ||
        (cin && (ins = arena_alloc(c->arena, cin * sizeof(*ins))) == NULL) ||
        (cout && (outs = arena_alloc(c->arena, cout * sizeof(*outs))) == NULL) ||
        (cvi && (vis = arena_alloc(c->arena, cvi * sizeof(*vis))) == NULL))
        return nomem(c);
    m->nodes = nodes;
    m->inits = inits;
    m->inputs = ins;
    m->outputs = outs;
    m->value_info = vis;
    eb_pb_reader_sub(&r, parent, gf);
    while ((st = next(c, &r, &f, &have)) == EB_OK && have) {
        if (f.num == 1 || f.num == 5 || f.num == 11 || f.num == 12 || f.num == 13) {
            if ((st = want(c, &r, &f, EB_PB_WIRE_LEN)) != EB_OK)
                return st;
        }
        switch (f.num) {
        case 1: st = parse_node(c, &r, &f, &nodes[m->n_nodes++]); break;
        case 2: st = copy_str(c, &r, &f, EB_ONNX_MAX_NAME, &m->graph_name); break;
        case 5: st = parse_tensor(c, &r, &f, &inits[m->n_inits++]); break;
        case 11: st = parse_value(c, &r, &f, &ins[m->n_inputs++]); break;
        case 12: st = parse_value(c, &r, &f, &outs[m->n_outputs++]); break;
        case 13: st = parse_value(c, &r, &f, &vis[m->n_value_info++]); break;
        default: break;
        }
        if (st != EB_OK)
            return st;
    }
    return st;
}

enum eb_status eb_onnx_model_parse(const uint8_t *bytes, size_t len, const char *what,
                                   const struct eb_allocator *alloc,
                                   struct eb_onnx_model **model_out, struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_NOMEM;
    struct eb_onnx_model *m = NULL;
    struct ctx c;
    struct eb_pb_reader r;
    struct eb_pb_field f;
    int have, n_graph = 0;
    size_t n_meta = 0;
    struct eb_onnx_meta *meta = NULL;

    struct eb_allocator sys = alloc != NULL ? *alloc : eb_allocator_system();
    c.what = what != NULL ? what : "<memory>";
    c.origin = bytes;
    c.file_len = len;
    c.diag = diag;
    c.arena = NULL;
    if (bytes == NULL || len == 0) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT,
                          "failed to read model %s: empty file (truncated at byte 0); is it an "
                          "ONNX file?",
                          c.what);
        goto fail;
    }
    m = eb_calloc(&sys, 1, sizeof(*m));
    c.arena = m != NULL ? eb_calloc(&sys, 1, sizeof(*c.arena)) : NULL;
    if (m != NULL)
        m->alloc = sys;
    if (c.arena == NULL) {
        st = nomem(&c);
        goto fail;
    }
    c.arena->alloc = sys;
    c.arena->budget = len > (SIZE_MAX - ARENA_BUDGET_BASE) / ARENA_BUDGET_PER_BYTE
                          ? SIZE_MAX
                          : len * ARENA_BUDGET_PER_BYTE + ARENA_BUDGET_BASE;
    m->arena = c.arena;
    m->file_len = len;
    m->producer_name = m->producer_version = m->graph_name = "";

    /* Pass 1: counts (metadata) and structure check. */
    eb_pb_reader_init(&r, bytes, bytes, len);
    while ((st = next(&c, &r, &f, &have)) == EB_OK && have) {
        if (f.num == 14 && ++n_meta > EB_ONNX_MAX_META) {
            st = bad(&c, &r, "more metadata entries than the limit");
            goto fail;
        }
        if (f.num == 7)
            n_graph++;
    }
    if (st != EB_OK)
        goto fail;
    if (n_graph != 1) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT, "failed to read model %s: %s; is it an ONNX file?",
                          c.what, n_graph == 0 ? "no graph in the file" : "more than one graph");
        goto fail;
    }
    if (n_meta && (meta = arena_alloc(c.arena, n_meta * sizeof(*meta))) == NULL) {
        st = nomem(&c);
        goto fail;
    }
    m->meta = meta;
    eb_pb_reader_init(&r, bytes, bytes, len);
    while ((st = next(&c, &r, &f, &have)) == EB_OK && have) {
        switch (f.num) {
        case 1:
            st = want(&c, &r, &f, EB_PB_WIRE_VARINT);
            m->ir_version = (int64_t)f.u;
            break;
        case 2: st = copy_str(&c, &r, &f, EB_ONNX_MAX_NAME, &m->producer_name); break;
        case 3: st = copy_str(&c, &r, &f, EB_ONNX_MAX_NAME, &m->producer_version); break;
        case 7:
            st = want(&c, &r, &f, EB_PB_WIRE_LEN);
            if (st == EB_OK)
                st = parse_graph(&c, &r, &f, m);
            break;
        case 8: {
            struct eb_pb_reader or ;
            struct eb_pb_field g;
            const char *domain = "";
            int64_t version = 0;
            st = want(&c, &r, &f, EB_PB_WIRE_LEN);
            if (st != EB_OK)
                break;
            eb_pb_reader_sub(& or, &r, &f);
            while ((st = next(&c, & or, &g, &have)) == EB_OK && have) {
                if (g.num == 1)
                    st = copy_str(&c, & or, &g, EB_ONNX_MAX_NAME, &domain);
                else if (g.num == 2 && g.wire == EB_PB_WIRE_VARINT)
                    version = (int64_t)g.u;
                if (st != EB_OK)
                    break;
            }
            if (st == EB_OK && (domain[0] == '\0' || strcmp(domain, "ai.onnx") == 0))
                m->opset = version;
            break;
        }
        case 14: {
            struct eb_pb_reader mr;
            struct eb_pb_field g;
            struct eb_onnx_meta *e = &meta[m->n_meta++];
            e->key = e->value = "";
            st = want(&c, &r, &f, EB_PB_WIRE_LEN);
            if (st != EB_OK)
                break;
            eb_pb_reader_sub(&mr, &r, &f);
            while ((st = next(&c, &mr, &g, &have)) == EB_OK && have) {
                if (g.num == 1)
                    st = copy_str(&c, &mr, &g, EB_ONNX_MAX_NAME, &e->key);
                else if (g.num == 2)
                    st = copy_str(&c, &mr, &g, EB_ONNX_MAX_META_VALUE, &e->value);
                if (st != EB_OK)
                    break;
            }
            break;
        }
        default: break;
        }
        if (st != EB_OK)
            goto fail;
    }
    if (st != EB_OK)
        goto fail;
    if (m->ir_version <= 0 || m->ir_version > 100) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT,
                          "failed to read model %s: missing or invalid ir_version; is it an ONNX "
                          "file?",
                          c.what);
        goto fail;
    }
    *model_out = m;
    return EB_OK;
fail:
    eb_onnx_model_destroy(m);
    return st;
}

void eb_onnx_model_destroy(struct eb_onnx_model *m)
{
    struct eb_allocator alloc;
    if (m == NULL)
        return;
    alloc = m->alloc;
    arena_free(m->arena);
    eb_free(&alloc, m);
}

const struct eb_onnx_attr *eb_onnx_node_attr(const struct eb_onnx_node *n, const char *name)
{
    if (n == NULL) /* a node whose source is gone (a dynamic graph's run): no attribute */
        return NULL;
    for (size_t i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    return NULL;
}

int64_t eb_onnx_node_attr_int(const struct eb_onnx_node *n, const char *name, int64_t def)
{
    const struct eb_onnx_attr *a = eb_onnx_node_attr(n, name);
    return a != NULL && a->type == EB_ONNX_ATTR_INT ? a->i : def;
}

static int64_t le_int(const uint8_t *p, size_t size, int is_signed)
{
    uint64_t u = 0;
    for (size_t i = size; i-- > 0;)
        u = (u << 8) | p[i];
    if (is_signed && size < 8 && (u >> (size * 8 - 1)) & 1u)
        u |= ~UINT64_C(0) << (size * 8);
    return (int64_t)u;
}

/* Reads numeric data of a tensor: from raw_data, or from the typed repeated fields. `as_float`
 * selects the output array. */
static enum eb_status read_data(const struct eb_onnx_tensor *t, int64_t *oi, float *of, size_t max,
                                size_t *n_out)
{
    struct eb_pb_reader r;
    struct eb_pb_field f;
    int have;
    size_t n = 0, es = eb_onnx_dtype_size(t->dtype);
    int is_float = t->dtype == EB_ONNX_FLOAT || t->dtype == EB_ONNX_DOUBLE;
    int is_signed = t->dtype == EB_ONNX_INT8 || t->dtype == EB_ONNX_INT16 ||
                    t->dtype == EB_ONNX_INT32 || t->dtype == EB_ONNX_INT64;

    if (t->external || es == 0 || t->numel > max || (of == NULL) == is_float)
        return EB_ERR_UNSUPPORTED;
    eb_pb_reader_init(&r, t->origin, t->msg, t->msg_len);
    for (;;) {
        if (eb_pb_next(&r, &f, &have) != EB_OK)
            return EB_ERR_FORMAT;
        if (!have)
            break;
        if (f.num == 9 && f.wire == EB_PB_WIRE_LEN) {
            if (f.len != t->numel * es)
                return EB_ERR_FORMAT;
            for (size_t i = 0; i < t->numel; i++) {
                const uint8_t *p = f.data + i * es;
                if (t->dtype == EB_ONNX_FLOAT) {
                    uint32_t u = (uint32_t)le_int(p, 4, 0);
                    memcpy(&of[i], &u, 4);
                } else if (t->dtype == EB_ONNX_DOUBLE) {
                    uint64_t u = (uint64_t)le_int(p, 8, 0);
                    double d;
                    memcpy(&d, &u, 8);
                    of[i] = (float)d;
                } else {
                    oi[i] = le_int(p, es, is_signed);
                }
            }
            *n_out = t->numel;
            return EB_OK;
        }
        if (f.num == 4 && t->dtype == EB_ONNX_FLOAT) { /* float_data */
            size_t cnt = f.wire == EB_PB_WIRE_LEN ? f.len / 4 : 1;
            if (f.wire != EB_PB_WIRE_LEN && f.wire != EB_PB_WIRE_I32)
                return EB_ERR_FORMAT;
            for (size_t k = 0; k < cnt; k++) {
                uint32_t u = f.wire == EB_PB_WIRE_LEN ? (uint32_t)le_int(f.data + 4 * k, 4, 0)
                                                      : (uint32_t)f.u;
                if (n >= t->numel)
                    return EB_ERR_FORMAT;
                memcpy(&of[n++], &u, 4);
            }
        } else if ((f.num == 5 || f.num == 7 || f.num == 11) && !is_float) {
            /* int32_data / int64_data / uint64_data: varints */
            if (f.wire == EB_PB_WIRE_VARINT) {
                if (n >= t->numel)
                    return EB_ERR_FORMAT;
                oi[n++] = f.num == 5 ? (int64_t)(int32_t)f.u : (int64_t)f.u;
            } else if (f.wire == EB_PB_WIRE_LEN) {
                struct eb_pb_reader pr;
                eb_pb_reader_sub(&pr, &r, &f);
                while (eb_pb_reader_left(&pr) > 0) {
                    uint64_t v;
                    if (eb_pb_read_uvarint(&pr, &v) != EB_OK || n >= t->numel)
                        return EB_ERR_FORMAT;
                    oi[n++] = f.num == 5 ? (int64_t)(int32_t)v : (int64_t)v;
                }
            } else {
                return EB_ERR_FORMAT;
            }
        }
    }
    if (n != t->numel)
        return EB_ERR_FORMAT;
    *n_out = n;
    return EB_OK;
}

enum eb_status eb_onnx_tensor_read_i64(const struct eb_onnx_tensor *t, int64_t *out, size_t max,
                                       size_t *n_out)
{
    return read_data(t, out, NULL, max, n_out);
}

enum eb_status eb_onnx_tensor_read_f32(const struct eb_onnx_tensor *t, float *out, size_t max,
                                       size_t *n_out)
{
    return read_data(t, NULL, out, max, n_out);
}
