/*
 * ONNX backend node tests for the native engine (house style §6, conformance (a)).
 *
 * Debian's libonnx-testdata ships ONNX's own per-operator tests:
 *     /usr/share/libonnx-testdata/data/node/test_<name>/model.onnx
 *     /usr/share/libonnx-testdata/data/node/test_<name>/test_data_set_<k>/input_<i>.pb
 *                                                                      output_<i>.pb
 * (each .pb is one serialized TensorProto). The tests the engine claims to pass are listed in
 * onnx_node_expect.txt next to this file (format described at its top: one test directory name
 * per line, optional per-test tolerances, and `const=I,J` to bake graph inputs I, J into the
 * model as initializers — weights and shape parameters, which the node tests feed as inputs).
 * For every test directory this runner either runs it (claimed: load with eb_engine_load,
 * imgsz 0, no memory cap, one thread; feed every data set; compare every output) or counts it
 * as skipped (unclaimed). It prints one line per claimed test and ends with
 *     onnx node tests: P passed / C claimed / S skipped (unclaimed) of T
 * Exit status: 0 when every claimed test passed, 1 otherwise (a claimed name with no test
 * directory is a failure too: the list must stay honest), 77 when the test data is absent.
 *
 * Comparison (per element, `a` = engine, `b` = expected):
 *     float32/float64: |a - b| <= atol + rtol * |b|, atol = 1e-5, rtol = 1e-3; NaN matches NaN,
 *                      an infinity only the same infinity.
 *     integers, bool:  exact.
 * ONNX's runner uses np.testing.assert_allclose(rtol=1e-3, atol=1e-7). Our rtol is the same;
 * atol is looser because optimized kernels sum in another order than numpy, which moves results
 * that cancel to near zero by more than 1e-7 while staying far below anything a detector can
 * notice. A test that needs other tolerances says so on its line in the expect file.
 *
 * Usage: test_onnx_node CONFORMANCE_DIR [NODE_DIR] [--all | --only NAME]
 *     NODE_DIR defaults to $EB_ONNX_NODE_DIR, then the Debian path above.
 *     --all  runs every test directory, claimed or not, and lists the unclaimed ones that pass
 *            ("PASS* name"): how to grow the expect file when an op lands. Exit status as usual
 *            (claimed tests only).
 *     --only NAME runs that one test whether claimed or not (for debugging an op).
 */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eb/engine.h"
#include "engine/onnx/onnx_model.h"
#include "engine/onnx/onnx_wire.h"
#include "model/model.h"

#define DEFAULT_NODE_DIR "/usr/share/libonnx-testdata/data/node"
#define EXPECT_FILE      "onnx_node_expect.txt"
#define DEFAULT_ATOL     1e-5
#define DEFAULT_RTOL     1e-3
#define NAME_MAX_LEN     256
#define PATH_MAX_LEN     1024
/* Inputs and outputs of a node test (ONNX's node tests have fewer; the masks are 32-bit). */
#define NODE_MAX_IO 8

struct claim {
    char name[NAME_MAX_LEN];
    double atol, rtol;
    uint32_t const_mask; /* bit i: input i is baked into the model as an initializer */
    int found;           /* a test directory of that name exists */
};

struct claims {
    struct claim *v;
    size_t n, cap;
};

/* A tensor read from a .pb file; `t.data` is owned (free). */
struct pb_tensor {
    struct eb_tensor t;
    size_t numel;
};

struct str_list {
    char **v;
    size_t n, cap;
};

/* ---- small helpers ------------------------------------------------------------------------- */

static int str_list_add(struct str_list *l, const char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **nv = realloc(l->v, cap * sizeof(*nv));
        if (nv == NULL)
            return -1;
        l->v = nv;
        l->cap = cap;
    }
    size_t len = strlen(s) + 1;
    if ((l->v[l->n] = malloc(len)) == NULL)
        return -1;
    memcpy(l->v[l->n++], s, len);
    return 0;
}

static void str_list_free(struct str_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* vsnprintf into a message buffer (a message cut short is still a message). */
static void set_why(char *why, size_t size, const char *fmt, ...) EB_PRINTF(3, 4);
static void set_why(char *why, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
}

/* snprintf for paths: 0 when the whole path fits, -1 when it would be cut. */
static int path_fmt(char *buf, size_t size, const char *fmt, ...) EB_PRINTF(3, 4);
static int path_fmt(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < size ? 0 : -1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entries of `dir` whose names start with `prefix` (and are directories if want_dir). */
static int list_dir(const char *dir, const char *prefix, int want_dir, struct str_list *out)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        char path[PATH_MAX_LEN];
        struct stat sb;
        if (path_fmt(path, sizeof(path), "%s/%s", dir, e->d_name) != 0 || stat(path, &sb) != 0 ||
            (want_dir && !S_ISDIR(sb.st_mode)))
            continue;
        if (str_list_add(out, e->d_name) != 0) {
            rc = -1;
            break;
        }
    }
    closedir(d);
    if (out->n > 1)
        qsort(out->v, out->n, sizeof(out->v[0]), cmp_str);
    return rc;
}

static int file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* ---- the expect file ----------------------------------------------------------------------- */

static int parse_double(const char *s, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= 0.0))
        return -1;
    *out = v;
    return 0;
}

/* "1,2,4" → bits 1, 2 and 4; indices 1 .. NODE_MAX_IO-1 (input 0 is always fed). */
static int parse_mask(const char *s, uint32_t *out)
{
    uint32_t m = 0;
    while (*s != '\0') {
        char *end = NULL;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v >= NODE_MAX_IO || (*end != ',' && *end != '\0'))
            return -1;
        m |= 1u << v;
        s = *end == ',' ? end + 1 : end;
    }
    if (m == 0)
        return -1;
    *out = m;
    return 0;
}

/*
 * Lines: "# comment", blank, or "test_name [atol=X] [rtol=Y] [const=I,J]". Fails (printing why) on a
 * malformed line or a duplicate name.
 */
static int read_claims(const char *path, struct claims *c)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "failed to open %s; it lists the claimed tests\n", path);
        return -1;
    }
    char line[1024];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash != NULL)
            *hash = '\0';
        char *tok[5];
        int nt = 0;
        char *save = NULL;
        for (char *t = strtok_r(line, " \t\r\n", &save); t != NULL && nt < 5;
             t = strtok_r(NULL, " \t\r\n", &save))
            tok[nt++] = t;
        if (nt == 0)
            continue;
        struct claim cl = {.atol = DEFAULT_ATOL, .rtol = DEFAULT_RTOL};
        if (strncmp(tok[0], "test_", 5) != 0 || strlen(tok[0]) >= sizeof(cl.name) || nt > 4) {
            fprintf(stderr, "%s:%d: expected \"test_<name> [atol=X] [rtol=Y] [const=I,J]\"\n", path,
                    lineno);
            rc = -1;
            break;
        }
        snprintf(cl.name, sizeof(cl.name), "%s", tok[0]);
        for (int i = 1; i < nt; i++) {
            if (!((strncmp(tok[i], "atol=", 5) == 0 && parse_double(tok[i] + 5, &cl.atol) == 0) ||
                  (strncmp(tok[i], "rtol=", 5) == 0 && parse_double(tok[i] + 5, &cl.rtol) == 0) ||
                  (strncmp(tok[i], "const=", 6) == 0 &&
                   parse_mask(tok[i] + 6, &cl.const_mask) == 0))) {
                fprintf(stderr,
                        "%s:%d: bad option \"%s\"; use atol=X, rtol=Y or const=I[,J...] "
                        "(input indices 0..%d)\n",
                        path, lineno, tok[i], NODE_MAX_IO - 1);
                rc = -1;
            }
        }
        for (size_t i = 0; rc == 0 && i < c->n; i++) {
            if (strcmp(c->v[i].name, cl.name) == 0) {
                fprintf(stderr, "%s:%d: %s is listed twice\n", path, lineno, cl.name);
                rc = -1;
            }
        }
        if (rc != 0)
            break;
        if (c->n == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 64;
            struct claim *nv = realloc(c->v, cap * sizeof(*nv));
            if (nv == NULL) {
                rc = -1;
                break;
            }
            c->v = nv;
            c->cap = cap;
        }
        c->v[c->n++] = cl;
    }
    fclose(f);
    return rc;
}

static struct claim *find_claim(struct claims *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i].name, name) == 0)
            return &c->v[i];
    return NULL;
}

/* ---- TensorProto files --------------------------------------------------------------------- */

static enum eb_dtype dtype_from_onnx(int32_t t)
{
    switch (t) {
    case EB_ONNX_FLOAT: return EB_DTYPE_F32;
    case EB_ONNX_DOUBLE: return EB_DTYPE_F64;
    case EB_ONNX_UINT8: return EB_DTYPE_U8;
    case EB_ONNX_INT8: return EB_DTYPE_I8;
    case EB_ONNX_INT32: return EB_DTYPE_I32;
    case EB_ONNX_INT64: return EB_DTYPE_I64;
    case EB_ONNX_BOOL: return EB_DTYPE_BOOL;
    default: return EB_DTYPE_UNKNOWN;
    }
}

/*
 * Reads one TensorProto file into `out` (data owned by the caller: free(out->t.data)).
 * Supports float, double, int64, int32, bool, uint8, int8 (raw_data or the typed fields).
 * Errors: EB_ERR_IO, EB_ERR_FORMAT, EB_ERR_UNSUPPORTED (other dtypes, external data), NOMEM.
 */
static enum eb_status read_pb(const char *path, struct pb_tensor *out, struct eb_diag *diag)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    void *data = NULL;
    int64_t *wide = NULL;
    struct eb_onnx_tensor t;
    struct eb_pb_reader r;
    struct eb_pb_field f;
    int have = 0;
    enum eb_status st = eb_model_read_file(path, &bytes, &len, diag);
    if (st != EB_OK)
        return st;

    memset(&t, 0, sizeof(t));
    t.name = "";
    t.msg = bytes;
    t.msg_len = len;
    t.origin = bytes;
    eb_pb_reader_init(&r, bytes, bytes, len);
    while ((st = eb_pb_next(&r, &f, &have)) == EB_OK && have) {
        if (f.num == 1 && f.wire == EB_PB_WIRE_VARINT) {
            if (t.rank >= EB_ONNX_MAX_RANK) {
                st = EB_ERR_UNSUPPORTED;
                break;
            }
            t.dims[t.rank++] = (int64_t)f.u;
        } else if (f.num == 1 && f.wire == EB_PB_WIRE_LEN) {
            struct eb_pb_reader pr;
            eb_pb_reader_sub(&pr, &r, &f);
            while (st == EB_OK && eb_pb_reader_left(&pr) > 0) {
                uint64_t v = 0;
                if ((st = eb_pb_read_uvarint(&pr, &v)) == EB_OK) {
                    if (t.rank >= EB_ONNX_MAX_RANK)
                        st = EB_ERR_UNSUPPORTED;
                    else
                        t.dims[t.rank++] = (int64_t)v;
                }
            }
            if (st != EB_OK)
                break;
        } else if (f.num == 2 && f.wire == EB_PB_WIRE_VARINT) {
            t.dtype = (int32_t)f.u;
        } else if (f.num == 14 && f.wire == EB_PB_WIRE_VARINT && f.u == 1) {
            t.external = 1;
        }
    }
    if (st != EB_OK) {
        st = eb_diag_fail(diag, st, "failed to read tensor %s: %s near byte %zu", path,
                          st == EB_ERR_UNSUPPORTED ? "rank above 8" : "malformed protobuf",
                          r.err_offset);
        goto fail;
    }
    enum eb_dtype dt = dtype_from_onnx(t.dtype);
    if (dt == EB_DTYPE_UNKNOWN || t.external) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                          "failed to read tensor %s: %s %s is not supported by this runner", path,
                          t.external ? "external data of" : "dtype", eb_onnx_dtype_name(t.dtype));
        goto fail;
    }
    t.numel = 1;
    for (int i = 0; i < t.rank; i++) {
        if (t.dims[i] < 0 || t.dims[i] > (int64_t)len * 8 + 1) {
            st = eb_diag_fail(diag, EB_ERR_FORMAT, "failed to read tensor %s: bad dimension %lld",
                              path, (long long)t.dims[i]);
            goto fail;
        }
        t.numel *= (uint64_t)t.dims[i];
    }
    if (t.numel > (uint64_t)len * 8 + 1) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT, "failed to read tensor %s: larger than the file",
                          path);
        goto fail;
    }
    size_t n = (size_t)t.numel, got = 0;
    size_t es = eb_dtype_size(dt);
    data = calloc(n ? n : 1, es > 8 ? es : 8);
    if (data == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read tensor %s: out of memory", path);
        goto fail;
    }
    if (dt == EB_DTYPE_F32 || dt == EB_DTYPE_F64) {
        /* Doubles are read as floats (the helper's only float path) and widened back. */
        float *fl = dt == EB_DTYPE_F32 ? data : malloc((n ? n : 1) * sizeof(float));
        if (fl == NULL) {
            st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read tensor %s: out of memory", path);
            goto fail;
        }
        st = eb_onnx_tensor_read_f32(&t, fl, n, &got);
        if (dt == EB_DTYPE_F64) {
            for (size_t i = 0; st == EB_OK && i < n; i++)
                ((double *)data)[i] = fl[i];
            free(fl);
        }
    } else {
        if ((wide = malloc((n ? n : 1) * sizeof(*wide))) == NULL) {
            st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to read tensor %s: out of memory", path);
            goto fail;
        }
        st = eb_onnx_tensor_read_i64(&t, wide, n, &got);
        for (size_t i = 0; st == EB_OK && i < n; i++) {
            switch (dt) {
            case EB_DTYPE_I64: ((int64_t *)data)[i] = wide[i]; break;
            case EB_DTYPE_I32: ((int32_t *)data)[i] = (int32_t)wide[i]; break;
            case EB_DTYPE_I8: ((int8_t *)data)[i] = (int8_t)wide[i]; break;
            case EB_DTYPE_U8: ((uint8_t *)data)[i] = (uint8_t)wide[i]; break;
            case EB_DTYPE_BOOL: ((uint8_t *)data)[i] = wide[i] != 0; break;
            default: break;
            }
        }
    }
    if (st != EB_OK || got != n) {
        st = eb_diag_fail(diag, st != EB_OK ? st : EB_ERR_FORMAT,
                          "failed to read tensor %s: its data does not match its shape", path);
        goto fail;
    }
    free(wide);
    free(bytes);
    memset(out, 0, sizeof(*out));
    out->t.dtype = dt;
    out->t.rank = t.rank;
    for (int i = 0; i < t.rank; i++)
        out->t.shape[i] = t.dims[i];
    out->t.data = data;
    out->numel = n;
    return EB_OK;

fail:
    free(wide);
    free(data);
    free(bytes);
    return st;
}

/* ---- comparison ---------------------------------------------------------------------------- */

static double get_f(const struct eb_tensor *t, size_t i)
{
    return t->dtype == EB_DTYPE_F32 ? (double)((const float *)t->data)[i]
                                    : ((const double *)t->data)[i];
}

static int64_t get_i(const struct eb_tensor *t, size_t i)
{
    switch (t->dtype) {
    case EB_DTYPE_I64: return ((const int64_t *)t->data)[i];
    case EB_DTYPE_I32: return ((const int32_t *)t->data)[i];
    case EB_DTYPE_I8: return ((const int8_t *)t->data)[i];
    case EB_DTYPE_U8:
    case EB_DTYPE_BOOL: return ((const uint8_t *)t->data)[i];
    default: return 0;
    }
}

/*
 * Compares output `k` (`got`, from the engine) with `want`. Returns 0 when equal within the
 * tolerances; otherwise writes why into `why`. `*max_diff` grows to the largest |a - b| seen.
 */
static int compare(size_t k, const struct eb_tensor *got, const struct pb_tensor *want,
                   const struct claim *cl, double *max_diff, char *why, size_t why_size)
{
    char gs[128], ws[128];
    eb_shape_format(got->shape, got->rank, gs, sizeof(gs));
    eb_shape_format(want->t.shape, want->t.rank, ws, sizeof(ws));
    if (got->dtype != want->t.dtype) {
        set_why(why, why_size, "output %zu has dtype %s, expected %s", k, eb_dtype_name(got->dtype),
                eb_dtype_name(want->t.dtype));
        return -1;
    }
    if (got->rank != want->t.rank ||
        memcmp(got->shape, want->t.shape, (size_t)got->rank * sizeof(got->shape[0])) != 0) {
        set_why(why, why_size, "output %zu has shape %s, expected %s", k, gs, ws);
        return -1;
    }
    if (want->numel > 0 && got->data == NULL) {
        set_why(why, why_size, "output %zu has no data", k);
        return -1;
    }
    int is_float = got->dtype == EB_DTYPE_F32 || got->dtype == EB_DTYPE_F64;
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < want->numel; i++) {
        int ok;
        if (is_float) {
            double a = get_f(got, i), b = get_f(&want->t, i);
            if (isnan(b) || isnan(a)) {
                ok = isnan(a) && isnan(b);
            } else if (isinf(b) || isinf(a)) {
                ok = a == b;
            } else {
                double d = fabs(a - b);
                if (d > *max_diff)
                    *max_diff = d;
                ok = d <= cl->atol + cl->rtol * fabs(b);
            }
        } else {
            int64_t a = get_i(got, i), b = get_i(&want->t, i);
            double d = fabs((double)a - (double)b);
            if (d > *max_diff)
                *max_diff = d;
            ok = a == b;
        }
        if (!ok && bad++ == 0)
            first_bad = i;
    }
    if (bad == 0)
        return 0;
    if (is_float)
        set_why(why, why_size,
                "output %zu %s: %zu of %zu elements off (first at %zu: %.9g vs %.9g; atol %g, "
                "rtol %g)",
                k, gs, bad, want->numel, first_bad, get_f(got, first_bad),
                get_f(&want->t, first_bad), cl->atol, cl->rtol);
    else
        set_why(why, why_size,
                "output %zu %s: %zu of %zu elements differ (first at %zu: %lld vs %lld)", k, gs,
                bad, want->numel, first_bad, (long long)get_i(got, first_bad),
                (long long)get_i(&want->t, first_bad));
    return -1;
}

/* ---- one test ------------------------------------------------------------------------------ */

static void free_tensors(struct pb_tensor *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].t.data);
        t[i].t.data = NULL;
    }
}

/* Counts input_<i>.pb (or output_<i>.pb) files 0, 1, ... in a data set. */
static size_t count_pb(const char *set_dir, const char *kind)
{
    size_t n = 0;
    for (;; n++) {
        char path[PATH_MAX_LEN];
        if (path_fmt(path, sizeof(path), "%s/%s_%zu.pb", set_dir, kind, n) != 0 ||
            !file_exists(path))
            return n;
    }
}

/*
 * Rewrites `model` so that the graph inputs in `mask` become initializers holding the tensors in
 * `pb[i]` (TensorProto bytes of the data set, borrowed): ONNX's node tests feed weights and shape
 * parameters (Conv W, Reshape shape, Slice starts, Resize scales ...) as graph inputs, while real
 * detectors carry them as initializers, which an engine that plans shapes and memory at load time
 * needs. The new ModelProto is malloc'd into `*out` (caller frees); NULL on failure.
 */
static uint8_t *freeze_inputs(const uint8_t *model, size_t len, uint32_t mask, uint8_t *const *pb,
                              const size_t *pb_len, size_t *out_len)
{
    struct eb_pb_buf m, g;
    struct eb_pb_reader r, gr;
    struct eb_pb_field f, gf;
    int have = 0, ok = 1;
    size_t input_idx = 0;
    eb_pb_buf_init(&m);
    eb_pb_buf_init(&g);
    eb_pb_reader_init(&r, model, model, len);
    for (;;) {
        const uint8_t *start = r.p;
        if (eb_pb_next(&r, &f, &have) != EB_OK) {
            ok = 0;
            break;
        }
        if (!have)
            break;
        if (f.num != 7 || f.wire != EB_PB_WIRE_LEN) {
            eb_pb_put_raw(&m, start, (size_t)(r.p - start));
            continue;
        }
        /* The graph: copy every field but the frozen inputs, then add their initializers. */
        eb_pb_reader_sub(&gr, &r, &f);
        char names[NODE_MAX_IO][NAME_MAX_LEN];
        memset(names, 0, sizeof(names));
        for (;;) {
            const uint8_t *gs = gr.p;
            if (eb_pb_next(&gr, &gf, &have) != EB_OK) {
                ok = 0;
                break;
            }
            if (!have)
                break;
            if (gf.num == 11 && gf.wire == EB_PB_WIRE_LEN) {
                size_t k = input_idx++;
                if (k < NODE_MAX_IO && (mask >> k) & 1u) {
                    struct eb_pb_reader vr;
                    struct eb_pb_field vf;
                    int vh = 0;
                    eb_pb_reader_sub(&vr, &gr, &gf);
                    while (eb_pb_next(&vr, &vf, &vh) == EB_OK && vh)
                        if (vf.num == 1 && vf.wire == EB_PB_WIRE_LEN && vf.len < NAME_MAX_LEN)
                            memcpy(names[k], vf.data, vf.len);
                    continue;
                }
            }
            eb_pb_put_raw(&g, gs, (size_t)(gr.p - gs));
        }
        for (size_t k = 0; ok && k < NODE_MAX_IO; k++) {
            if (!((mask >> k) & 1u))
                continue;
            if (names[k][0] == '\0' || pb[k] == NULL) {
                ok = 0;
                break;
            }
            struct eb_pb_buf t;
            eb_pb_buf_init(&t);
            eb_pb_put_raw(&t, pb[k], pb_len[k]);
            eb_pb_put_str(&t, 8, names[k]); /* the last name wins in protobuf */
            eb_pb_put_msg(&g, 5, &t);
            eb_pb_buf_fini(&t);
        }
        eb_pb_put_msg(&m, 7, &g);
    }
    uint8_t *out = ok && !eb_pb_buf_error(&g) ? eb_pb_buf_take(&m, out_len) : NULL;
    eb_pb_buf_fini(&m);
    eb_pb_buf_fini(&g);
    return out;
}

/* Runs one test directory; 0 = pass. `why` says what failed. */
static int run_test(const char *node_dir, const char *name, const struct claim *cl,
                    double *max_diff, char *why, size_t why_size)
{
    char dir[PATH_MAX_LEN], path[PATH_MAX_LEN];
    uint8_t *model = NULL, *frozen = NULL;
    size_t model_len = 0, frozen_len = 0;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    struct str_list sets = {0};
    struct pb_tensor in[NODE_MAX_IO], want[NODE_MAX_IO];
    uint8_t *raw[NODE_MAX_IO];
    size_t raw_len[NODE_MAX_IO];
    size_t n_in_read = 0, n_want_read = 0;
    int rc = -1;

    memset(in, 0, sizeof(in));
    memset(want, 0, sizeof(want));
    memset(raw, 0, sizeof(raw));
    memset(raw_len, 0, sizeof(raw_len));
    if (path_fmt(dir, sizeof(dir), "%s/%s", node_dir, name) != 0 ||
        path_fmt(path, sizeof(path), "%s/model.onnx", dir) != 0) {
        set_why(why, why_size, "path of %s too long", name);
        goto done;
    }
    if (eb_model_read_file(path, &model, &model_len, &d) != EB_OK) {
        set_why(why, why_size, "%s", d.msg);
        goto done;
    }
    if (list_dir(dir, "test_data_set_", 1, &sets) != 0 || sets.n == 0) {
        set_why(why, why_size, "no test_data_set_* in %s", dir);
        goto done;
    }
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.threads = 1;
    opt.mem_cap_bytes = 0;
    opt.imgsz = 0;
    for (size_t s = 0; s < sets.n; s++) {
        char set_dir[PATH_MAX_LEN];
        if (path_fmt(set_dir, sizeof(set_dir), "%s/%s", dir, sets.v[s]) != 0) {
            set_why(why, why_size, "path of %s too long", sets.v[s]);
            goto done;
        }
        size_t n_in = count_pb(set_dir, "input"), n_out = count_pb(set_dir, "output");
        if (n_in > NODE_MAX_IO || n_out > NODE_MAX_IO || n_out == 0 ||
            (cl->const_mask >> n_in) != 0) {
            set_why(why, why_size, "%s has %zu inputs and %zu outputs (const= beyond them?)",
                    sets.v[s], n_in, n_out);
            goto done;
        }
        struct eb_tensor in_t[NODE_MAX_IO], out_t[NODE_MAX_IO];
        size_t n_feed = 0;
        for (size_t i = 0; i < n_in; i++, n_in_read++) {
            if (path_fmt(path, sizeof(path), "%s/input_%zu.pb", set_dir, i) != 0 ||
                read_pb(path, &in[i], &d) != EB_OK ||
                (((cl->const_mask >> i) & 1u) &&
                 eb_model_read_file(path, &raw[i], &raw_len[i], &d) != EB_OK)) {
                n_in_read++;
                set_why(why, why_size, "%s", d.msg);
                goto done;
            }
            if (!((cl->const_mask >> i) & 1u))
                in_t[n_feed++] = in[i].t;
        }
        for (size_t i = 0; i < n_out; i++, n_want_read++) {
            if (path_fmt(path, sizeof(path), "%s/output_%zu.pb", set_dir, i) != 0 ||
                read_pb(path, &want[i], &d) != EB_OK) {
                set_why(why, why_size, "%s", d.msg);
                goto done;
            }
        }
        /* Frozen inputs are part of the model, so each data set gets its own engine. */
        if (e == NULL || cl->const_mask != 0) {
            const uint8_t *bytes = model;
            size_t len = model_len;
            eb_engine_destroy(e);
            e = NULL;
            if (cl->const_mask != 0) {
                free(frozen);
                frozen = freeze_inputs(model, model_len, cl->const_mask, raw, raw_len, &frozen_len);
                if (frozen == NULL) {
                    set_why(why, why_size, "failed to bake inputs into the model (const=)");
                    goto done;
                }
                bytes = frozen;
                len = frozen_len;
            }
            if (eb_engine_load(bytes, len, name, &opt, &e, &d) != EB_OK) {
                e = NULL;
                set_why(why, why_size, "load: %s: %s", eb_status_name(d.status), d.msg);
                goto done;
            }
        }
        struct eb_engine_io io;
        eb_engine_io_info(e, &io);
        if (n_feed != io.n_inputs || n_out != io.n_outputs) {
            set_why(why, why_size,
                    "%s feeds %zu inputs and expects %zu outputs, the engine says the model has "
                    "%zu and %zu",
                    sets.v[s], n_feed, n_out, io.n_inputs, io.n_outputs);
            goto done;
        }
        memset(out_t, 0, sizeof(out_t));
        if (eb_engine_run(e, in_t, n_feed, out_t, n_out, &d) != EB_OK) {
            set_why(why, why_size, "run (%s): %s: %s", sets.v[s], eb_status_name(d.status), d.msg);
            goto done;
        }
        for (size_t i = 0; i < n_out; i++) {
            char w[512];
            if (compare(i, &out_t[i], &want[i], cl, max_diff, w, sizeof(w)) != 0) {
                set_why(why, why_size, "%s: %s", sets.v[s], w);
                goto done;
            }
        }
        free_tensors(in, n_in_read);
        free_tensors(want, n_want_read);
        for (size_t i = 0; i < NODE_MAX_IO; i++) {
            free(raw[i]);
            raw[i] = NULL;
        }
        n_in_read = n_want_read = 0;
    }
    rc = 0;

done:
    free_tensors(in, n_in_read);
    free_tensors(want, n_want_read);
    for (size_t i = 0; i < NODE_MAX_IO; i++)
        free(raw[i]);
    str_list_free(&sets);
    eb_engine_destroy(e);
    free(frozen);
    free(model);
    return rc;
}

/* ---- main ---------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *conf_dir = NULL, *node_dir = NULL, *only = NULL;
    int all = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--all") == 0)
            all = 1;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (conf_dir == NULL)
            conf_dir = argv[i];
        else if (node_dir == NULL)
            node_dir = argv[i];
        else {
            conf_dir = NULL;
            break;
        }
    }
    if (conf_dir == NULL) {
        fprintf(stderr, "usage: %s CONFORMANCE_DIR [NODE_DIR] [--all | --only NAME]\n", argv[0]);
        return 2;
    }
    if (node_dir == NULL)
        node_dir = getenv("EB_ONNX_NODE_DIR");
    if (node_dir == NULL || node_dir[0] == '\0')
        node_dir = DEFAULT_NODE_DIR;

    struct stat sb;
    if (stat(node_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        printf("SKIP: ONNX node test data not found at %s; install Debian's libonnx-testdata "
               "(scripts/setup.sh does) or set EB_ONNX_NODE_DIR\n",
               node_dir);
        return 77;
    }

    char expect_path[PATH_MAX_LEN];
    if (path_fmt(expect_path, sizeof(expect_path), "%s/%s", conf_dir, EXPECT_FILE) != 0) {
        fprintf(stderr, "path %s too long\n", conf_dir);
        return 2;
    }
    struct claims claims = {0};
    struct str_list tests = {0};
    int exit_code = 1;
    if (read_claims(expect_path, &claims) != 0)
        goto done;
    if (list_dir(node_dir, "test_", 1, &tests) != 0) {
        fprintf(stderr, "failed to list %s\n", node_dir);
        goto done;
    }

    size_t passed = 0, failed = 0, claimed = 0, extra_pass = 0, only_failed = 0;
    for (size_t i = 0; i < tests.n; i++) {
        const char *name = tests.v[i];
        struct claim *cl = find_claim(&claims, name);
        if (cl != NULL)
            cl->found = 1;
        if (only != NULL && strcmp(only, name) != 0)
            continue;
        if (cl == NULL && !all && only == NULL)
            continue;
        struct claim dflt = {.atol = DEFAULT_ATOL, .rtol = DEFAULT_RTOL};
        double max_diff = 0.0;
        char why[1024] = "";
        int ok =
            run_test(node_dir, name, cl != NULL ? cl : &dflt, &max_diff, why, sizeof(why)) == 0;
        if (cl != NULL) {
            claimed++;
            if (ok)
                passed++;
            else
                failed++;
        } else if (ok) {
            extra_pass++;
        }
        if (!ok && only != NULL)
            only_failed++;
        if (ok)
            printf("%s %s (max abs diff %.3g)\n", cl != NULL ? "PASS" : "PASS*", name, max_diff);
        else
            printf("%s %s: %s\n", cl != NULL ? "FAIL" : "fail*", name, why);
        fflush(stdout);
    }
    for (size_t i = 0; i < claims.n; i++) {
        if (!claims.v[i].found && (only == NULL || strcmp(only, claims.v[i].name) == 0)) {
            printf("FAIL %s: claimed in %s but there is no such test in %s\n", claims.v[i].name,
                   EXPECT_FILE, node_dir);
            claimed++;
            failed++;
        }
    }
    size_t found = 0;
    for (size_t i = 0; i < claims.n; i++)
        found += (size_t)claims.v[i].found;
    if (all)
        printf("unclaimed tests that pass (PASS*): %zu\n", extra_pass);
    if (only == NULL)
        printf("onnx node tests: %zu passed / %zu claimed / %zu skipped (unclaimed) of %zu\n",
               passed, claimed, tests.n - found, tests.n);
    exit_code = failed == 0 && only_failed == 0 ? 0 : 1;

done:
    str_list_free(&tests);
    free(claims.v);
    return exit_code;
}
