/*
 * ONNX model → graph IR: one value per name (graph inputs, initializers, node outputs), one
 * node per ONNX node with its op definition, constants decoded into owned buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/ir/checked.h"
#include "engine/ir/graph.h"
#include "engine/ops/op.h"

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

int eb_graph_find_value(const struct eb_graph *g, const char *name)
{
    if (g->hash_size == 0)
        return -1;
    size_t mask = g->hash_size - 1;
    for (size_t i = hash_str(name) & mask;; i = (i + 1) & mask) {
        int id = g->hash[i];
        if (id < 0)
            return -1;
        if (strcmp(g->values[id].name, name) == 0)
            return id;
    }
}

/* Adds a value called `name`; EB_ERR_FORMAT when the name is already defined. */
static enum eb_status add_value(struct eb_graph *g, const char *name, int *id_out,
                                struct eb_diag *diag)
{
    if (g->n_values >= g->cap_values)
        return eb_diag_fail(diag, EB_ERR_FORMAT, "failed to import model %s: too many values",
                            g->what);
    size_t mask = g->hash_size - 1, i = hash_str(name) & mask;
    while (g->hash[i] >= 0) {
        if (strcmp(g->values[g->hash[i]].name, name) == 0)
            return eb_diag_fail(diag, EB_ERR_FORMAT,
                                "failed to import model %s: value '%s' is defined twice", g->what,
                                name);
        i = (i + 1) & mask;
    }
    struct eb_ir_value *v = &g->values[g->n_values];
    memset(v, 0, sizeof(*v));
    v->name = eb_ir_arena_strdup(&g->arena, name);
    if (v->name == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to import model %s: out of memory",
                            g->what);
    v->producer = -1;
    v->offset = -1;
    g->hash[i] = (int)g->n_values;
    *id_out = (int)g->n_values++;
    return EB_OK;
}

enum eb_ir_shape_fault eb_ir_shape_check(enum eb_dtype dt, int rank, const int64_t *shape,
                                         int64_t *numel_out, int *dim_out)
{
    const int64_t es = eb_dtype_size(dt) > 0 ? (int64_t)eb_dtype_size(dt) : 1;
    int64_t extent = 1;
    int empty = 0;
    *numel_out = 0;
    *dim_out = -1;
    if (rank < 0 || rank > EB_MAX_RANK)
        return EB_IR_SHAPE_RANK;
    for (int i = 0; i < rank; i++) {
        *dim_out = i;
        if (shape[i] < 0)
            return EB_IR_SHAPE_NEGATIVE;
        if (shape[i] == 0) {
            empty = 1;
            continue;
        }
        /* The extent skips zeros, so that an empty value cannot carry dims whose products
         * (strides, outer sizes) overflow: every product of a value's dims fits int64. */
        if (eb_checked_mul(extent, shape[i], &extent) ||
            (uint64_t)extent > EB_IR_MAX_TENSOR_BYTES / (uint64_t)es)
            return EB_IR_SHAPE_TOO_LARGE;
    }
    *dim_out = -1;
    *numel_out = empty ? 0 : extent;
    return EB_IR_SHAPE_OK;
}

enum eb_status eb_ir_value_set(struct eb_graph *g, struct eb_ir_value *v, enum eb_dtype dt,
                               int rank, const int64_t *shape, struct eb_diag *diag)
{
    int64_t numel;
    int dim;
    switch (eb_ir_shape_check(dt, rank, shape, &numel, &dim)) {
    case EB_IR_SHAPE_OK: break;
    case EB_IR_SHAPE_RANK:
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "failed to load model %s: value '%s' has rank %d (at most %d)", g->what,
                            v->name, rank, EB_MAX_RANK);
    case EB_IR_SHAPE_NEGATIVE:
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to load model %s: value '%s' has dimension %lld", g->what,
                            v->name, (long long)shape[dim]);
    case EB_IR_SHAPE_TOO_LARGE:
        return eb_diag_fail(diag, EB_ERR_LIMIT,
                            "failed to load model %s: value '%s' would need more than %llu bytes "
                            "(zero dimensions not counted)",
                            g->what, v->name, (unsigned long long)EB_IR_MAX_TENSOR_BYTES);
    }
    v->dtype = dt;
    v->rank = rank;
    for (int i = 0; i < EB_MAX_RANK; i++)
        v->shape[i] = i < rank ? shape[i] : 0;
    v->numel = numel;
    v->nbytes = (size_t)numel * eb_dtype_size(dt);
    v->shape_known = 1;
    return EB_OK;
}

/* The bound of the sequence dims: `max_seq`, else the model's edgebench.llm.ctx; 0 = none. */
static int64_t seq_bound(const struct eb_onnx_model *m, int64_t max_seq)
{
    if (max_seq > 0)
        return max_seq;
    for (size_t i = 0; i < m->n_meta; i++) {
        if (strcmp(m->meta[i].key, "edgebench.llm.ctx") != 0)
            continue;
        char *end = NULL;
        const long long v = strtoll(m->meta[i].value, &end, 10);
        return end != m->meta[i].value && *end == '\0' && v > 0 ? (int64_t)v : 0;
    }
    return 0;
}

/* Bound of a symbolic dim named `name` (EB_IR_DIM_*) with sequences ≤ seq; -1: not one. */
static int64_t dim_bound(const char *name, int64_t seq)
{
    if (name == NULL)
        return -1;
    if (strcmp(name, EB_IR_DIM_SEQ) == 0 || strcmp(name, EB_IR_DIM_TOTAL) == 0)
        return seq;
    if (strcmp(name, EB_IR_DIM_PAST) == 0)
        return seq - 1;
    return -1;
}

/* Longest sequence a dynamic graph accepts (the bounds of its tensors grow with it). */
#define MAX_SEQ_LIMIT (INT64_C(1) << 20)

static enum eb_status import_input(struct eb_graph *g, const struct eb_onnx_model *m,
                                   const struct eb_onnx_value *in, int imgsz, int64_t max_seq,
                                   struct eb_diag *diag)
{
    int id;
    enum eb_status st = add_value(g, in->name, &id, diag);
    if (st != EB_OK)
        return st;
    struct eb_ir_value *v = &g->values[id];
    enum eb_dtype dt = eb_ir_dtype_from_onnx(in->elem_type);
    int64_t shape[EB_MAX_RANK];
    if (dt == EB_DTYPE_UNKNOWN || in->rank < 0)
        return eb_diag_fail_advise(
            diag, EB_ERR_UNSUPPORTED, EB_ADVICE_OTHER_BACKEND,
            "failed to load model %s: input '%s' has type %s or an unknown shape, "
            "which the native engine does not support",
            g->what, in->name, eb_onnx_dtype_name(in->elem_type));
    const size_t slot = g->n_inputs;
    for (int i = 0; i < in->rank; i++) {
        shape[i] = in->dims[i];
        if (shape[i] >= 0)
            continue;
        if (dim_bound(in->dim_params[i], 1) >= 0) {
            const int64_t seq = seq_bound(m, max_seq);
            if (seq < 1 || seq > MAX_SEQ_LIMIT)
                return eb_diag_fail_advise(
                    diag, EB_ERR_UNSUPPORTED, EB_ADVICE_OTHER_BACKEND,
                    seq < 1 ? "failed to load model %s: input '%s' has the dynamic dimension "
                              "'%s' and the model has no edgebench.llm.ctx metadata; give the "
                              "engine a maximum sequence length (max_seq)"
                            : "failed to load model %s: input '%s' has the dynamic dimension "
                              "'%s' and a maximum sequence length above 1048576; give the "
                              "engine a smaller one (max_seq)",
                    g->what, in->name, in->dim_params[i]);
            g->dynamic = 1;
            g->max_seq = seq;
            g->in_dim_name[slot][i] = eb_ir_arena_strdup(&g->arena, in->dim_params[i]);
            g->in_dim_max[slot][i] = dim_bound(in->dim_params[i], seq);
            /* Inferred at the largest attention: the whole sequence, no past. */
            shape[i] = strcmp(in->dim_params[i], EB_IR_DIM_PAST) == 0 ? 0 : seq;
            if (g->in_dim_name[slot][i] == NULL)
                return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory",
                                    g->what);
            v->dyn = 1;
            continue;
        }
        if (i == 0)
            shape[i] = 1; /* batch */
        else if (in->rank == 4 && i >= 2)
            shape[i] = imgsz;
        else
            return eb_diag_fail_advise(
                diag, EB_ERR_UNSUPPORTED, EB_ADVICE_OTHER_BACKEND,
                "failed to load model %s: input '%s' has a dynamic dimension %d "
                "the native engine cannot resolve",
                g->what, in->name, i);
    }
    if (v->dyn) { /* the bytes of its slot: every dim at its bound */
        int64_t bound[EB_MAX_RANK], numel;
        int dim;
        for (int i = 0; i < in->rank; i++)
            bound[i] = g->in_dim_name[slot][i] != NULL ? g->in_dim_max[slot][i] : shape[i];
        if (eb_ir_shape_check(dt, in->rank, bound, &numel, &dim) != EB_IR_SHAPE_OK)
            return eb_diag_fail(diag, EB_ERR_LIMIT,
                                "failed to load model %s: input '%s' is too large at its bounds",
                                g->what, in->name);
        g->in_cap_bytes[slot] = (uint64_t)numel * eb_dtype_size(dt);
    }
    st = eb_ir_value_set(g, v, dt, in->rank, shape, diag);
    if (st != EB_OK)
        return st;
    v->is_input = 1;
    g->inputs[g->n_inputs++] = id;
    return EB_OK;
}

/* Whether an external_data location is a plain relative path: not empty, not absolute, no
 * '..' component, no backslash or control character. */
static int location_ok(const char *loc)
{
    const char *p = loc;
    if (loc[0] == '\0' || loc[0] == '/')
        return 0;
    for (; *p; p++)
        if (*p == '\\' || (unsigned char)*p < 0x20)
            return 0;
    for (p = loc; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return 0;
        p += n;
        if (*p == '/')
            p++;
    }
    return 1;
}

/* Reads exactly n bytes at `off` of `fd`; 0 on success. */
static int read_at(int fd, uint8_t *dst, size_t n, uint64_t off)
{
    while (n > 0) {
        size_t chunk = n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n;
        ssize_t got = pread(fd, dst, chunk, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        dst += got;
        n -= (size_t)got;
        off += (uint64_t)got;
    }
    return 0;
}

/*
 * Data of an external-data initializer: `t->ext_location` relative to `base_dir`, bytes
 * [ext_offset, ext_offset + numel * size) in little-endian order. The location, the range and
 * the byte size are checked against the file before anything is allocated. Caller owns
 * `*data_out` (g->alloc).
 */
static enum eb_status read_external(struct eb_graph *g, const struct eb_onnx_tensor *t,
                                    const char *base_dir, enum eb_dtype *dt_out, void **data_out,
                                    struct eb_diag *diag)
{
    enum eb_dtype dt = eb_ir_dtype_from_onnx(t->dtype);
    uint64_t nbytes = t->numel * (uint64_t)eb_dtype_size(dt);
    char path[4096];
    struct stat sb;
    uint8_t *data = NULL;
    int fd, n;

    if (dt == EB_DTYPE_UNKNOWN)
        return eb_diag_fail_advise(
            diag, EB_ERR_UNSUPPORTED, EB_ADVICE_OTHER_BACKEND,
            "failed to load model %s: initializer '%s' (%s): this type is not "
            "supported by the native engine",
            g->what, t->name, eb_onnx_dtype_name(t->dtype));
    if (base_dir == NULL)
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                            "failed to load model %s: initializer '%s' keeps its data in the "
                            "external file '%s', and no folder to read it from was given; load "
                            "the model from its file path (or set the engine's base_dir to the "
                            "model's folder)",
                            g->what, t->name, t->ext_location);
    if (!location_ok(t->ext_location))
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to load model %s: initializer '%s' names the external file "
                            "'%s': only relative paths inside the model's folder (no '..', not "
                            "absolute) are read",
                            g->what, t->name, t->ext_location);
    if (nbytes > EB_IR_MAX_TENSOR_BYTES)
        return eb_diag_fail(diag, EB_ERR_LIMIT,
                            "failed to load model %s: initializer '%s' would need more than %llu "
                            "bytes",
                            g->what, t->name, (unsigned long long)EB_IR_MAX_TENSOR_BYTES);
    if (t->ext_length >= 0 && (uint64_t)t->ext_length != nbytes)
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to load model %s: initializer '%s' in external file '%s': "
                            "length %lld does not match its shape (%llu bytes)",
                            g->what, t->name, t->ext_location, (long long)t->ext_length,
                            (unsigned long long)nbytes);
    n = snprintf(path, sizeof(path), "%s/%s", base_dir, t->ext_location);
    if (n < 0 || (size_t)n >= sizeof(path))
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to load model %s: initializer '%s': the path of external file "
                            "'%s' is too long",
                            g->what, t->name, t->ext_location);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to load model %s: initializer '%s': cannot open external file "
                            "%s: %s; keep the data file next to the model",
                            g->what, t->name, path, strerror(errno));
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to load model %s: initializer '%s': external file %s is not "
                            "a regular file",
                            g->what, t->name, path);
    }
    if (t->ext_offset > (uint64_t)sb.st_size || nbytes > (uint64_t)sb.st_size - t->ext_offset) {
        close(fd);
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to load model %s: initializer '%s' needs bytes [%llu, %llu) "
                            "of external file %s, which has %llu bytes",
                            g->what, t->name, (unsigned long long)t->ext_offset,
                            (unsigned long long)(t->ext_offset + nbytes), path,
                            (unsigned long long)sb.st_size);
    }
    data = g->alloc.alloc(g->alloc.ctx, (size_t)nbytes + 1, 64);
    if (data == NULL) {
        close(fd);
        return eb_diag_fail(diag, EB_ERR_NOMEM,
                            "failed to load model %s: out of memory for initializer '%s' (%llu "
                            "bytes)",
                            g->what, t->name, (unsigned long long)nbytes);
    }
    if (read_at(fd, data, (size_t)nbytes, t->ext_offset) != 0) {
        close(fd);
        g->alloc.free(g->alloc.ctx, data);
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to load model %s: initializer '%s': cannot read external file "
                            "%s",
                            g->what, t->name, path);
    }
    close(fd);
    *dt_out = dt;
    *data_out = data;
    return EB_OK;
}

static enum eb_status import_init(struct eb_graph *g, const struct eb_onnx_tensor *t,
                                  const char *base_dir, struct eb_diag *diag)
{
    int id;
    enum eb_dtype dt;
    void *data = NULL;
    /* A second initializer of one name is ignored (the first is the value). */
    if (eb_graph_find_value(g, t->name) >= 0)
        return EB_OK;
    enum eb_status st = add_value(g, t->name, &id, diag);
    if (st != EB_OK)
        return st;
    struct eb_ir_value *v = &g->values[id];
    if (t->external) {
        st = read_external(g, t, base_dir, &dt, &data, diag);
        if (st != EB_OK)
            return st;
        v->data = data;
        v->owned_data = 1;
        v->is_const = 1;
        return eb_ir_value_set(g, v, dt, t->rank, t->dims, diag);
    }
    st = eb_ir_tensor_decode(t, &g->alloc, &dt, &data);
    if (st != EB_OK)
        return eb_diag_fail_advise(diag, st, st == EB_ERR_UNSUPPORTED ? EB_ADVICE_OTHER_BACKEND : 0,
                                   "failed to load model %s: initializer '%s' (%s): %s", g->what,
                                   t->name, eb_onnx_dtype_name(t->dtype),
                                   st == EB_ERR_UNSUPPORTED ? "this type is not supported by the "
                                                              "native engine"
                                   : st == EB_ERR_NOMEM     ? "out of memory"
                                                            : "malformed data");
    v->data = data;
    v->owned_data = 1;
    v->is_const = 1;
    return eb_ir_value_set(g, v, dt, t->rank, t->dims, diag);
}

static enum eb_status import_node(struct eb_graph *g, const struct eb_onnx_model *m, size_t idx,
                                  struct eb_diag *diag)
{
    const struct eb_onnx_node *on = &m->nodes[idx];
    struct eb_ir_node *n = &g->nodes[g->n_nodes];
    enum eb_status st;

    n->name = eb_ir_arena_strdup(&g->arena, on->name);
    n->in = eb_ir_arena_alloc(&g->arena, (on->n_inputs + 1) * sizeof(int));
    n->out = eb_ir_arena_alloc(&g->arena, (on->n_outputs + 1) * sizeof(int));
    if (n->name == NULL || n->in == NULL || n->out == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to import model %s: out of memory",
                            g->what);
    n->onnx_index = (int)idx;
    n->src = on;
    n->alive = 1;
    if (on->domain[0] != '\0' && strcmp(on->domain, "ai.onnx") != 0)
        return eb_diag_fail_advise(
            diag, EB_ERR_UNSUPPORTED, EB_ADVICE_OTHER_BACKEND,
            "model %s node %zu (%s): op %s (domain %s) is not supported by the "
            "native engine",
            g->what, idx, on->name, on->op_type, on->domain);
    n->op = eb_op_find(on->op_type);
    if (n->op == NULL)
        return eb_diag_fail_advise(
            diag, EB_ERR_UNSUPPORTED, EB_ADVICE_OTHER_BACKEND,
            "model %s node %zu (%s): op %s (opset %lld) is not supported by the "
            "native engine",
            g->what, idx, on->name, on->op_type, (long long)g->opset);
    if (g->opset < n->op->since_opset)
        return eb_diag_fail_advise(
            diag, EB_ERR_UNSUPPORTED, EB_ADVICE_OTHER_BACKEND,
            "model %s node %zu (%s): op %s (opset %lld): opsets before %d are not "
            "supported by the native engine",
            g->what, idx, on->name, on->op_type, (long long)g->opset, n->op->since_opset);
    /* Trailing omitted inputs are dropped so that n_in counts what is there. */
    size_t nin = on->n_inputs;
    while (nin > 0 && on->inputs[nin - 1][0] == '\0')
        nin--;
    if ((int)nin < n->op->min_inputs || (int)nin > n->op->max_inputs ||
        (int)on->n_outputs < n->op->min_outputs || (int)on->n_outputs > n->op->max_outputs)
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "model %s node %zu (%s): op %s (opset %lld): %zu inputs and %zu "
                            "outputs; expected %d..%d and %d..%d",
                            g->what, idx, on->name, on->op_type, (long long)g->opset, nin,
                            on->n_outputs, n->op->min_inputs, n->op->max_inputs, n->op->min_outputs,
                            n->op->max_outputs);
    n->n_in = (int)nin;
    n->n_out = (int)on->n_outputs;
    for (size_t i = 0; i < nin; i++) {
        if (on->inputs[i][0] == '\0') {
            /* The one rule for omitted inputs: only those the op's row declares optional. */
            if (!eb_op_input_optional(n->op, (int)i))
                return eb_diag_fail(diag, EB_ERR_FORMAT,
                                    "model %s node %zu (%s): op %s (opset %lld): input %zu is "
                                    "required but its name is empty",
                                    g->what, idx, on->name, on->op_type, (long long)g->opset, i);
            n->in[i] = -1;
            continue;
        }
        n->in[i] = eb_graph_find_value(g, on->inputs[i]);
        if (n->in[i] < 0)
            return eb_diag_fail(diag, EB_ERR_FORMAT,
                                "failed to load model %s: node %zu (%s) reads '%s', which no "
                                "earlier node, input or initializer defines",
                                g->what, idx, on->name, on->inputs[i]);
    }
    for (size_t i = 0; i < on->n_outputs; i++) {
        int id;
        if (on->outputs[i][0] == '\0')
            return eb_diag_fail_advise(diag, EB_ERR_UNSUPPORTED, EB_ADVICE_OTHER_BACKEND,
                                       "model %s node %zu (%s): op %s: an omitted output is not "
                                       "supported by the native engine",
                                       g->what, idx, on->name, on->op_type);
        st = add_value(g, on->outputs[i], &id, diag);
        if (st != EB_OK)
            return st;
        g->values[id].producer = (int)g->n_nodes;
        n->out[i] = id;
    }
    struct eb_op_ctx ctx = {.g = g, .n = n, .src = on, .diag = diag};
    st = n->op->check(&ctx);
    if (st != EB_OK)
        return st;
    g->n_nodes++;
    return EB_OK;
}

/*
 * Every op type of the default domain the engine lacks, named at once: one is "model X node N
 * (name): op T (opset V) is not supported ...", several are "model X: ops A, B, C (opset V) are
 * not supported by the native engine; first at node N (name)" (in the order they first occur).
 */
static enum eb_status unknown_ops(const struct eb_graph *g, const struct eb_onnx_model *m,
                                  struct eb_diag *diag)
{
    char list[EB_DIAG_MSG_MAX / 2];
    const char *kept[32]; /* the distinct types so far (more are listed once each, or cut) */
    size_t first = 0, n_types = 0, len = 0, n_kept = 0;
    int cut = 0;
    list[0] = '\0';
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct eb_onnx_node *on = &m->nodes[i];
        if ((on->domain[0] != '\0' && strcmp(on->domain, "ai.onnx") != 0) ||
            eb_op_find(on->op_type) != NULL)
            continue;
        int seen = 0;
        for (size_t k = 0; k < n_kept && !seen; k++)
            seen = strcmp(kept[k], on->op_type) == 0;
        if (seen)
            continue;
        if (n_kept < EB_ARRAY_LEN(kept))
            kept[n_kept++] = on->op_type;
        if (n_types++ == 0)
            first = i;
        const size_t need = strlen(on->op_type) + (len > 0 ? 2 : 0);
        if (cut || len + need + 5 >= sizeof(list)) {
            if (!cut)
                memcpy(list + len, ", ...", 6);
            cut = 1;
            continue;
        }
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", len > 0 ? ", " : "",
                                on->op_type);
    }
    if (n_types == 0)
        return EB_OK;
    const struct eb_onnx_node *on = &m->nodes[first];
    if (n_types == 1)
        return eb_diag_fail_advise(diag, EB_ERR_UNSUPPORTED, EB_ADVICE_OTHER_BACKEND,
                                   "model %s node %zu (%s): op %s (opset %lld) is not supported "
                                   "by the native engine",
                                   g->what, first, on->name, on->op_type, (long long)g->opset);
    return eb_diag_fail_advise(diag, EB_ERR_UNSUPPORTED, EB_ADVICE_OTHER_BACKEND,
                               "model %s: ops %s (opset %lld) are not supported by the native "
                               "engine; first at node %zu (%s)",
                               g->what, list, (long long)g->opset, first, on->name);
}

enum eb_status eb_graph_import(const struct eb_onnx_model *m, const char *what, int imgsz,
                               int64_t max_seq, const struct eb_allocator *alloc,
                               const char *base_dir, struct eb_graph **graph_out,
                               struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_NOMEM;
    struct eb_allocator sys = alloc != NULL ? *alloc : eb_allocator_system();
    struct eb_graph *g = sys.alloc(sys.ctx, sizeof(*g), 64);
    size_t n_out_total = 0;

    if (g == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory", what);
    memset(g, 0, sizeof(*g));
    eb_counting_alloc_init(&g->ca, sys, 0);
    g->alloc = eb_counting_alloc_iface(&g->ca);
    eb_ir_arena_init(&g->arena, &g->alloc);
    g->what = eb_ir_arena_strdup(&g->arena, what != NULL ? what : "<memory>");
    g->opset = m->opset;
    if (g->what == NULL)
        goto nomem;
    for (size_t i = 0; i < m->n_nodes; i++)
        n_out_total += m->nodes[i].n_outputs;
    /* All counts are bounded by the parser's limits, so these products cannot overflow. */
    g->cap_values = m->n_inputs + m->n_inits + n_out_total;
    g->hash_size = 16;
    while (g->hash_size < 2 * g->cap_values + 1)
        g->hash_size *= 2;
    g->values = eb_ir_arena_alloc(&g->arena, (g->cap_values + 1) * sizeof(*g->values));
    g->hash = eb_ir_arena_alloc(&g->arena, g->hash_size * sizeof(int));
    g->nodes = eb_ir_arena_alloc(&g->arena, (m->n_nodes + 1) * sizeof(*g->nodes));
    g->meta_keys = eb_ir_arena_alloc(&g->arena, (m->n_meta + 1) * sizeof(char *));
    g->meta_values = eb_ir_arena_alloc(&g->arena, (m->n_meta + 1) * sizeof(char *));
    if (g->values == NULL || g->hash == NULL || g->nodes == NULL || g->meta_keys == NULL ||
        g->meta_values == NULL)
        goto nomem;
    for (size_t i = 0; i < g->hash_size; i++)
        g->hash[i] = -1;
    for (size_t i = 0; i < m->n_meta; i++) {
        g->meta_keys[i] = eb_ir_arena_strdup(&g->arena, m->meta[i].key);
        g->meta_values[i] = eb_ir_arena_strdup(&g->arena, m->meta[i].value);
        if (g->meta_keys[i] == NULL || g->meta_values[i] == NULL)
            goto nomem;
        g->n_meta++;
    }
    for (size_t i = 0; i < m->n_inits; i++)
        if ((st = import_init(g, &m->inits[i], base_dir, diag)) != EB_OK)
            goto fail;
    /* A graph input with an initializer of its name (IR version 3 lists every weight as an
     * input) is that constant, as ONNX Runtime runs it when the input is not fed: the engine
     * plans shapes and memory at load time and is fed the image inputs only. */
    size_t n_fed = 0;
    for (size_t i = 0; i < m->n_inputs; i++)
        n_fed += eb_graph_find_value(g, m->inputs[i].name) < 0;
    if (n_fed > EB_IR_MAX_GRAPH_IO || m->n_outputs > EB_IR_MAX_GRAPH_IO) {
        st = eb_diag_fail_advise(
            diag, EB_ERR_UNSUPPORTED, EB_ADVICE_OTHER_BACKEND,
            "failed to load model %s: %zu inputs and %zu outputs (at most %d each) "
            "are not supported by the native engine",
            g->what, n_fed, m->n_outputs, EB_IR_MAX_GRAPH_IO);
        goto fail;
    }
    for (size_t i = 0; i < m->n_inputs; i++) {
        const int id = eb_graph_find_value(g, m->inputs[i].name);
        if (id >= 0 && g->values[id].is_const && !g->values[id].is_input)
            continue;
        if ((st = import_input(g, m, &m->inputs[i], imgsz, max_seq, diag)) != EB_OK)
            goto fail;
    }
    if ((st = unknown_ops(g, m, diag)) != EB_OK)
        goto fail;
    for (size_t i = 0; i < m->n_nodes; i++)
        if ((st = import_node(g, m, i, diag)) != EB_OK)
            goto fail;
    for (size_t i = 0; i < m->n_outputs; i++) {
        int id = eb_graph_find_value(g, m->outputs[i].name);
        if (id < 0) {
            st = eb_diag_fail(diag, EB_ERR_FORMAT,
                              "failed to load model %s: output '%s' is not defined", g->what,
                              m->outputs[i].name);
            goto fail;
        }
        if (g->values[id].is_input || g->values[id].is_output) {
            st = eb_diag_fail_advise(
                diag, EB_ERR_UNSUPPORTED, EB_ADVICE_OTHER_BACKEND,
                "failed to load model %s: output '%s' is also an input or listed "
                "twice",
                g->what, m->outputs[i].name);
            goto fail;
        }
        g->values[id].is_output = 1;
        g->outputs[g->n_outputs++] = id;
    }
    if (g->n_outputs == 0) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT, "failed to load model %s: the graph has no outputs",
                          g->what);
        goto fail;
    }
    *graph_out = g;
    return EB_OK;
nomem:
    st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to load model %s: out of memory",
                      what != NULL ? what : "<memory>");
fail:
    eb_graph_destroy(g);
    return st;
}

void eb_graph_forget_source(struct eb_graph *g)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        g->nodes[i].src = NULL;
}

void eb_graph_destroy(struct eb_graph *g)
{
    if (g == NULL)
        return;
    for (size_t i = 0; i < g->n_values; i++)
        if (g->values[i].owned_data)
            g->alloc.free(g->alloc.ctx, g->values[i].data);
    eb_ir_arena_fini(&g->arena);
    struct eb_allocator sys = g->ca.parent;
    sys.free(sys.ctx, g);
}

int eb_ir_node_writes_nothing(const struct eb_graph *g, const struct eb_ir_node *n)
{
    int any = 0;
    for (int i = 0; i < n->n_out; i++) {
        if (n->out[i] < 0)
            continue;
        if (g->values[n->out[i]].numel != 0)
            return 0;
        any = 1;
    }
    return any;
}
