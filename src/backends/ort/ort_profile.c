/*
 * ONNX Runtime's profile file into the per-operator table (ort_profile.h). The file is read line
 * by line, each line parsed on its own with the project's JSON reader: ONNX Runtime writes one
 * event per line, and a whole file (up to its limit of a million events, hundreds of MB) parsed
 * into one tree would take several GB. Two passes: the model_run events first (which runs are
 * kept, and their spans), then the node events that fall inside a kept run. Each of those is also
 * kept as (run, node, ms, flops), so that the table of any set of runs can be made afterwards
 * (eb_ort__profile_select: `edgebench llm` splits prefill and decode runs).
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/ort/ort_profile.h"
#include "eb/json.h"

#define KERNEL_SUFFIX "_kernel_time"

struct span {
    double start, end; /* microseconds from the start of profiling */
};

struct reader {
    const char *path;
    FILE *fp;
    char *line;
    size_t cap;
    unsigned long lineno;
};

/* The next event line, trimmed and without its trailing comma, in `*text`; 0 at the end. */
static int next_event(struct reader *r, char **text)
{
    for (;;) {
        ssize_t n = getline(&r->line, &r->cap, r->fp);
        if (n < 0)
            return 0;
        r->lineno++;
        char *s = r->line, *e = r->line + n;
        while (s < e && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'))
            s++;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
            e--;
        if (e > s && e[-1] == ',')
            e--;
        *e = '\0';
        if (s == e || strcmp(s, "[") == 0 || strcmp(s, "]") == 0)
            continue;
        *text = s;
        return 1;
    }
}

static enum eb_status bad_line(const struct reader *r, const char *why, struct eb_diag *diag)
{
    return eb_diag_fail(diag, EB_ERR_FORMAT,
                        "failed to read ONNX Runtime's profile %s: line %lu %s; it is not "
                        "ONNX Runtime's profile format",
                        r->path, r->lineno, why);
}

/* Parses one event line into `*ev` (caller frees); its "ts" and "dur" into the outputs. */
static enum eb_status parse_event(const struct reader *r, const char *text,
                                  struct eb_json_value **ev, double *ts, double *dur,
                                  struct eb_diag *diag)
{
    struct eb_diag jd = {0};
    if (eb_json_parse(text, strlen(text), ev, &jd) != EB_OK) {
        *ev = NULL;
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to read ONNX Runtime's profile %s: line %lu is not a JSON "
                            "event (%s)",
                            r->path, r->lineno, jd.msg);
    }
    const struct eb_json_value *t = eb_json_get(*ev, "ts"), *d = eb_json_get(*ev, "dur");
    if ((*ev)->type != EB_JSON_OBJECT || t == NULL || d == NULL || t->type != EB_JSON_NUMBER ||
        d->type != EB_JSON_NUMBER || !isfinite(t->num) || !isfinite(d->num) || t->num < 0 ||
        d->num < 0)
        return bad_line(r, "is not an event with numbers \"ts\" and \"dur\" of 0 or more", diag);
    *ts = t->num;
    *dur = d->num;
    return EB_OK;
}

static int str_is(const struct eb_json_value *v, const char *s)
{
    return v != NULL && v->type == EB_JSON_STRING && strcmp(v->str, s) == 0;
}

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The kept run that contains time `ts`, or -1 (spans sorted, disjoint). */
static long find_span(const struct span *s, size_t n, double ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first span starting after ts */
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].start <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && ts <= s[lo - 1].end ? (long)(lo - 1) : -1;
}

/* Pass 1: the spans of the model_run events past the first `skip` ones. */
static enum eb_status read_runs(struct reader *r, uint64_t skip, struct eb_ort_profile *out,
                                struct span **spans_out, struct eb_diag *diag)
{
    struct span *spans = NULL;
    size_t cap = 0;
    char *text;
    enum eb_status st = EB_OK;
    while (st == EB_OK && next_event(r, &text)) {
        if (strstr(text, "\"model_run\"") == NULL)
            continue;
        struct eb_json_value *ev = NULL;
        double ts = 0, dur = 0;
        st = parse_event(r, text, &ev, &ts, &dur, diag);
        if (st == EB_OK && str_is(eb_json_get(ev, "cat"), "Session") &&
            str_is(eb_json_get(ev, "name"), "model_run") && out->runs_in_file++ >= skip) {
            if (out->runs == cap) {
                size_t nc = cap ? 2 * cap : 64;
                struct span *g = realloc(spans, nc * sizeof(*g));
                if (g == NULL) {
                    st = eb_diag_fail(diag, EB_ERR_NOMEM,
                                      "failed to read ONNX Runtime's profile %s: out of memory",
                                      r->path);
                } else {
                    spans = g;
                    cap = nc;
                }
            }
            if (st == EB_OK) {
                spans[out->runs].start = ts;
                spans[out->runs].end = ts + dur;
                out->runs++;
                out->run_total_ms += dur / 1000.0;
            }
        }
        eb_json_free(ev);
    }
    *spans_out = spans;
    return st;
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* The node table while pass 2 runs: `idx[k]` is node k's "node_index" ("" when absent). */
struct table {
    struct eb_ort_profile *out;
    char **idx;
    size_t cap;
    size_t hint; /* where the next lookup starts: nodes run in the same order every run */
};

static int same_node(const struct table *t, size_t k, const char *name, size_t name_len,
                     const char *op, const char *idx)
{
    const struct eb_backend_prof_node *nd = &t->out->nodes[k];
    return strncmp(nd->name, name, name_len) == 0 && nd->name[name_len] == '\0' &&
           strcmp(nd->op, op) == 0 && strcmp(t->idx[k], idx) == 0;
}

/* Adds `ms` to the node named name[0..name_len) of type `op`, index `idx`; made if new, with
 * `flops` (per run: a node met again, e.g. a second kernel in one run, keeps its first). Its
 * index into `*k_out`. */
static enum eb_status add_time(struct table *t, const char *name, size_t name_len, const char *op,
                               const char *idx, double ms, uint64_t flops, size_t *k_out)
{
    struct eb_ort_profile *o = t->out;
    for (size_t i = 0; i < o->n_nodes; i++) {
        size_t k = (t->hint + i) % o->n_nodes;
        if (same_node(t, k, name, name_len, op, idx)) {
            o->nodes[k].total_ms += ms;
            t->hint = k + 1;
            *k_out = k;
            return EB_OK;
        }
    }
    if (o->n_nodes == t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 64;
        struct eb_backend_prof_node *g = realloc(o->nodes, nc * sizeof(*g));
        if (g == NULL)
            return EB_ERR_NOMEM;
        o->nodes = g;
        char **gi = realloc(t->idx, nc * sizeof(*gi));
        if (gi == NULL)
            return EB_ERR_NOMEM;
        t->idx = gi;
        char **gs = realloc(o->strings, 3 * nc * sizeof(*gs));
        if (gs == NULL)
            return EB_ERR_NOMEM;
        o->strings = gs;
        t->cap = nc;
    }
    char *n = dup_n(name, name_len), *p = dup_n(op, strlen(op)), *x = dup_n(idx, strlen(idx));
    if (n == NULL || p == NULL || x == NULL) {
        free(n);
        free(p);
        free(x);
        return EB_ERR_NOMEM;
    }
    o->strings[o->n_strings++] = n;
    o->strings[o->n_strings++] = p;
    o->strings[o->n_strings++] = x;
    t->idx[o->n_nodes] = x;
    o->nodes[o->n_nodes] = (struct eb_backend_prof_node){
        .name = n, .op = p, .fused = "", .total_ms = ms, .flops = flops};
    *k_out = o->n_nodes;
    o->n_nodes++;
    t->hint = o->n_nodes;
    return EB_OK;
}

/* Entry i of an ORT type-shape list ([{"float":[1,3,160,160]}, ...]): its element count, and its
 * first and last dims into *first / *last; 0 when the entry or its dims are missing. ORT writes
 * the logical (ONNX) shapes, also for the NCHWc kernels of its layout transformer. */
static uint64_t shape_at(const struct eb_json_value *list, size_t i, int64_t *first, int64_t *last)
{
    if (list == NULL || list->type != EB_JSON_ARRAY || i >= list->n)
        return 0;
    const struct eb_json_value *e = &list->items[i];
    if (e->type != EB_JSON_OBJECT || e->n != 1 || e->items[0].type != EB_JSON_ARRAY ||
        e->items[0].n == 0)
        return 0;
    const struct eb_json_value *d = &e->items[0];
    uint64_t n = 1;
    for (size_t k = 0; k < d->n; k++) {
        if (d->items[k].type != EB_JSON_NUMBER || !(d->items[k].num >= 0))
            return 0;
        n *= (uint64_t)d->items[k].num;
    }
    *first = (int64_t)d->items[0].num;
    *last = (int64_t)d->items[d->n - 1].num;
    return n;
}

/* The ops whose FLOPs are 2 x multiply-adds (EB_ENGINE_FLOPS_CONVENTION) and where their
 * weight or left operand is among the inputs; every other op counts its output elements. */
enum flop_kind { FLOP_CONV, FLOP_MATMUL, FLOP_GEMM };
static const struct {
    const char *op;
    enum flop_kind kind;
    int in; /* CONV: the weight [M, C/g, kh, kw]; MATMUL/GEMM: A */
} k_flop_ops[] = {
    {"Conv", FLOP_CONV, 1},
    {"FusedConv", FLOP_CONV, 1},
    {"ConvInteger", FLOP_CONV, 1},
    {"QLinearConv", FLOP_CONV, 3},
    {"MatMul", FLOP_MATMUL, 0},
    {"FusedMatMul", FLOP_MATMUL, 0},
    {"MatMulInteger", FLOP_MATMUL, 0},
    {"QLinearMatMul", FLOP_MATMUL, 0},
    {"Gemm", FLOP_GEMM, 0},
    {"FusedGemm", FLOP_GEMM, 0},
};

/* FLOPs of one run of a node from its event's args; 0 when the shapes are not there. */
static uint64_t node_flops(const char *op, const struct eb_json_value *args)
{
    int64_t y0 = 0, yl = 0, w0 = 0, wl = 0;
    const uint64_t y = shape_at(eb_json_get(args, "output_type_shape"), 0, &y0, &yl);
    const struct eb_json_value *in = eb_json_get(args, "input_type_shape");
    for (size_t i = 0; i < sizeof(k_flop_ops) / sizeof(k_flop_ops[0]); i++) {
        if (strcmp(op, k_flop_ops[i].op) != 0)
            continue;
        const uint64_t w = shape_at(in, (size_t)k_flop_ops[i].in, &w0, &wl);
        if (y == 0 || w == 0)
            return 0;
        switch (k_flop_ops[i].kind) {
        case FLOP_CONV: return w0 > 0 ? 2u * y * (w / (uint64_t)w0) : 0;
        case FLOP_MATMUL: return 2u * y * (uint64_t)wl;
        case FLOP_GEMM: return y0 > 0 ? 2u * y * (w / (uint64_t)y0) : 0; /* K = |A| / M */
        }
    }
    return y;
}

/* Appends one event to out->events. */
static enum eb_status add_event(struct eb_ort_profile *o, size_t *cap, uint64_t run, size_t node,
                                double ms, uint64_t flops)
{
    if (o->n_events == *cap) {
        size_t nc = *cap ? 2 * *cap : 256;
        struct eb_ort_prof_event *g = realloc(o->events, nc * sizeof(*g));
        if (g == NULL)
            return EB_ERR_NOMEM;
        o->events = g;
        *cap = nc;
    }
    o->events[o->n_events++] =
        (struct eb_ort_prof_event){.run = run, .node = node, .ms = ms, .flops = flops};
    return EB_OK;
}

/* Pass 2: the "_kernel_time" node events inside the kept runs, summed per node and kept. */
static enum eb_status read_nodes(struct reader *r, const struct span *spans, struct table *t,
                                 struct eb_diag *diag)
{
    char *text;
    size_t ev_cap = 0;
    enum eb_status st = EB_OK;
    while (st == EB_OK && next_event(r, &text)) {
        if (strstr(text, KERNEL_SUFFIX) == NULL)
            continue;
        struct eb_json_value *ev = NULL;
        double ts = 0, dur = 0;
        st = parse_event(r, text, &ev, &ts, &dur, diag);
        const struct eb_json_value *name = eb_json_get(ev, "name");
        size_t len = name != NULL && name->type == EB_JSON_STRING ? strlen(name->str) : 0;
        size_t suf = strlen(KERNEL_SUFFIX), k = 0;
        const long run = st == EB_OK ? find_span(spans, t->out->runs, ts) : -1;
        if (st == EB_OK && str_is(eb_json_get(ev, "cat"), "Node") && len >= suf &&
            strcmp(name->str + len - suf, KERNEL_SUFFIX) == 0 && run >= 0) {
            const struct eb_json_value *args = eb_json_get(ev, "args");
            const struct eb_json_value *op = eb_json_get(args, "op_name");
            const struct eb_json_value *ix = eb_json_get(args, "node_index");
            const char *ops = op != NULL && op->type == EB_JSON_STRING ? op->str : "";
            const char *ixs = ix != NULL && ix->type == EB_JSON_STRING ? ix->str : "";
            const uint64_t flops = node_flops(ops, args);
            if (add_time(t, name->str, len - suf, ops, ixs, dur / 1000.0, flops, &k) != EB_OK ||
                add_event(t->out, &ev_cap, (uint64_t)run, k, dur / 1000.0, flops) != EB_OK)
                st = eb_diag_fail(diag, EB_ERR_NOMEM,
                                  "failed to read ONNX Runtime's profile %s: out of memory",
                                  r->path);
        }
        eb_json_free(ev);
    }
    return st;
}

enum eb_status eb_ort__profile_read(const char *path, uint64_t skip_runs,
                                    struct eb_ort_profile *out, struct eb_diag *diag)
{
    struct reader r = {.path = path};
    struct span *spans = NULL;
    struct table t = {.out = out};
    enum eb_status st = EB_ERR_IO;

    memset(out, 0, sizeof(*out));
    r.fp = fopen(path, "r");
    if (r.fp == NULL) {
        st = eb_diag_fail(diag, EB_ERR_IO, "failed to read ONNX Runtime's profile %s: %s", path,
                          strerror(errno));
        goto done;
    }
    /* ONNX Runtime's file starts with "[" alone on the first line. */
    ssize_t n = getline(&r.line, &r.cap, r.fp);
    r.lineno = 1;
    if (n < 1 || r.line[0] != '[') {
        st = bad_line(&r, n < 1 ? "is missing (the file is empty)" : "does not start with '['",
                      diag);
        goto done;
    }
    if ((st = read_runs(&r, skip_runs, out, &spans, diag)) != EB_OK)
        goto done;
    if (spans != NULL)
        qsort(spans, out->runs, sizeof(*spans), cmp_span);
    if (out->runs > 0 && (out->run_ms = malloc(out->runs * sizeof(double))) == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM,
                          "failed to read ONNX Runtime's profile %s: out of memory", path);
        goto done;
    }
    for (uint64_t i = 0; i < out->runs; i++) /* run order: runs do not overlap */
        out->run_ms[i] = (spans[i].end - spans[i].start) / 1000.0;
    rewind(r.fp);
    r.lineno = 0;
    if (out->runs > 0 && (st = read_nodes(&r, spans, &t, diag)) != EB_OK)
        goto done;
    if (ferror(r.fp)) {
        st = eb_diag_fail(diag, EB_ERR_IO, "failed to read ONNX Runtime's profile %s: %s", path,
                          strerror(errno));
        goto done;
    }
    st = EB_OK;
done:
    if (r.fp != NULL)
        fclose(r.fp);
    free(r.line);
    free(spans);
    free(t.idx); /* the strings themselves are in out->strings */
    return st;
}

void eb_ort__profile_fini(struct eb_ort_profile *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n_strings; i++)
        free(p->strings[i]);
    free(p->strings);
    free(p->nodes);
    free(p->run_ms);
    free(p->events);
    free(p->sel);
    free(p->sel_of);
    memset(p, 0, sizeof(*p));
}

/* Marks in `in` (zeroed, [p->runs]) the kept runs inside `ranges`; how many. */
static uint64_t mark_runs(const struct eb_ort_profile *p, const struct eb_run_range *ranges,
                          size_t n_ranges, unsigned char *in)
{
    uint64_t n = 0;
    for (size_t i = 0; i < n_ranges; i++) {
        const uint64_t a = ranges[i].first;
        const uint64_t b =
            ranges[i].count > p->runs - (a < p->runs ? a : p->runs) ? p->runs : a + ranges[i].count;
        for (uint64_t r = a; r < b; r++) {
            n += !in[r];
            in[r] = 1;
        }
    }
    return n;
}

enum eb_status eb_ort__profile_select(struct eb_ort_profile *p, const struct eb_run_range *ranges,
                                      size_t n_ranges, struct eb_backend_profile *out,
                                      struct eb_diag *diag)
{
    memset(out, 0, sizeof(*out));
    const size_t nn = p->n_nodes ? p->n_nodes : 1;
    unsigned char *in = calloc(p->runs ? p->runs : 1, 1);
    if (p->sel == NULL)
        p->sel = malloc(nn * sizeof(*p->sel));
    if (p->sel_of == NULL)
        p->sel_of = malloc(nn * sizeof(*p->sel_of));
    if (in == NULL || p->sel == NULL || p->sel_of == NULL) {
        free(in);
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory for ONNX Runtime's profile");
    }
    out->runs = mark_runs(p, ranges, n_ranges, in);
    for (uint64_t r = 0; r < p->runs; r++)
        if (in[r])
            out->run_total_ms += p->run_ms[r];
    for (size_t k = 0; k < p->n_nodes; k++)
        p->sel_of[k] = SIZE_MAX;
    size_t n = 0;
    for (size_t e = 0; e < p->n_events; e++) {
        const struct eb_ort_prof_event *ev = &p->events[e];
        if (!in[ev->run])
            continue;
        size_t *at = &p->sel_of[ev->node];
        if (*at == SIZE_MAX) {
            *at = n++;
            p->sel[*at] = p->nodes[ev->node];
            p->sel[*at].total_ms = 0;
            p->sel[*at].flops = ev->flops;
        }
        p->sel[*at].total_ms += ev->ms;
    }
    free(in);
    out->n_nodes = n;
    out->nodes = p->sel;
    return EB_OK;
}

enum eb_status eb_ort__profile_dir_make(const char *tmpdir_env, char *buf, size_t size,
                                        struct eb_diag *diag)
{
    const char *base = tmpdir_env != NULL && tmpdir_env[0] == '/' ? tmpdir_env : "/tmp";
    int n = snprintf(buf, size, "%s/edgebench-ortprof-XXXXXX", base);
    if (n < 0 || (size_t)n >= size) {
        if (size > 0)
            buf[0] = '\0';
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to make a folder for ONNX Runtime's profile under %s: the "
                            "path is too long; set TMPDIR to a shorter folder",
                            base);
    }
    if (mkdtemp(buf) == NULL) {
        int e = errno;
        buf[0] = '\0';
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to make a folder for ONNX Runtime's profile under %s: %s; "
                            "set TMPDIR to a writable folder",
                            base, strerror(e));
    }
    return EB_OK;
}

int eb_ort__profile_dir_remove(const char *dir)
{
    if (dir == NULL || dir[0] == '\0')
        return 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    int rc = 0;
    const struct dirent *e;
    char path[4352];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        int n = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (n < 0 || (size_t)n >= sizeof(path) || unlink(path) != 0)
            rc = -1;
    }
    closedir(d);
    if (rmdir(dir) != 0)
        rc = -1;
    return rc;
}
