/*
 * Nsight Compute's CSV raw page, the top nodes it profiles, the per-kernel summary and
 * ncu.json / ncu.md (ncu.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/file.h"
#include "eb/json.h"
#include "harness/cmd/ncu.h"

/* ---- CSV records ---- */

/* One record: its fields' texts, NUL-separated in buf, starting at off[i]. */
struct csv_rec {
    char *buf;
    size_t len, cap;
    size_t *off;
    size_t n, ncap;
};

static int rec_putc(struct csv_rec *r, char c)
{
    if (r->len == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 256;
        char *b = realloc(r->buf, cap);
        if (b == NULL)
            return 0;
        r->buf = b;
        r->cap = cap;
    }
    r->buf[r->len++] = c;
    return 1;
}

static int rec_field(struct csv_rec *r, size_t start)
{
    if (r->n == r->ncap) {
        size_t cap = r->ncap ? r->ncap * 2 : 32;
        size_t *o = realloc(r->off, cap * sizeof(*o));
        if (o == NULL)
            return 0;
        r->off = o;
        r->ncap = cap;
    }
    r->off[r->n++] = start;
    return rec_putc(r, '\0');
}

static const char *rec_get(const struct csv_rec *r, long i)
{
    return i >= 0 && (size_t)i < r->n ? r->buf + r->off[i] : "";
}

static void rec_fini(struct csv_rec *r)
{
    free(r->buf);
    free(r->off);
}

/*
 * Reads the record at *pos (RFC 4180: quoted fields may hold commas, "" and newlines; a quote
 * inside an unquoted field is literal). Returns 1 with the record, 0 at the end of the text,
 * -1 out of memory.
 */
static int csv_next(const char *text, size_t len, size_t *pos, struct csv_rec *r)
{
    size_t i = *pos;
    if (i >= len)
        return 0;
    r->len = r->n = 0;
    size_t start = 0;
    int in_quotes = 0, was_quoted = 0;
    for (; i < len; i++) {
        char c = text[i];
        if (in_quotes) {
            if (c != '"') {
                if (!rec_putc(r, c))
                    return -1;
            } else if (i + 1 < len && text[i + 1] == '"') {
                if (!rec_putc(r, '"'))
                    return -1;
                i++;
            } else {
                in_quotes = 0;
            }
        } else if (c == '"' && r->len == start && !was_quoted) {
            in_quotes = was_quoted = 1;
        } else if (c == ',') {
            if (!rec_field(r, start))
                return -1;
            start = r->len;
            was_quoted = 0;
        } else if (c == '\n') {
            i++;
            break;
        } else if (c != '\r') {
            if (!rec_putc(r, c))
                return -1;
        }
    }
    if (!rec_field(r, start))
        return -1;
    *pos = i;
    return 1;
}

static long rec_find(const struct csv_rec *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(rec_get(r, (long)i), name) == 0)
            return (long)i;
    return -1;
}

/* A number as ncu prints it ("1,234.5", " 12 "); NAN for "n/a", "" and other text. */
static double parse_num(const char *s)
{
    char buf[64];
    size_t n = 0;
    for (; *s != '\0' && n + 1 < sizeof(buf); s++)
        if (*s != ',' && *s != ' ')
            buf[n++] = *s;
    buf[n] = '\0';
    if (n == 0)
        return NAN;
    char *end = NULL;
    errno = 0;
    double v = strtod(buf, &end);
    if (end == buf || *end != '\0' || errno == ERANGE || !isfinite(v))
        return NAN;
    return v;
}

static long long parse_id(const char *s)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE || v < 0)
        return -1;
    return v;
}

/* Microseconds per unit of a duration; base (--csv) units are nanoseconds. */
static double us_per_unit(const char *unit)
{
    if (strcmp(unit, "usecond") == 0 || strcmp(unit, "us") == 0)
        return 1.0;
    if (strcmp(unit, "msecond") == 0 || strcmp(unit, "ms") == 0)
        return 1e3;
    if (strcmp(unit, "second") == 0 || strcmp(unit, "s") == 0)
        return 1e6;
    return 1e-3; /* nsecond, ns, or none given */
}

void eb_ncu_table_fini(struct eb_ncu_table *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->rows[i].kernel);
    free(t->rows);
    t->rows = NULL;
    t->n = 0;
}

enum eb_status eb_ncu_csv_parse(const char *text, size_t len, struct eb_ncu_table *out,
                                struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_NOMEM;
    struct csv_rec r = {0};
    struct eb_ncu_table t = {0};
    size_t cap = 0, pos = 0, header_n = 0;
    long c_id = -1, c_kernel = -1, c_dur = -1, c_sm = -1, c_dram = -1, c_occ = -1;
    double dur_scale = 1e-3;
    int have_header = 0, rc;
    while ((rc = csv_next(text, len, &pos, &r)) > 0) {
        if (!have_header) {
            if (strcmp(rec_get(&r, 0), "ID") != 0)
                continue; /* ==PROF== lines, the application's output */
            c_id = 0;
            c_kernel = rec_find(&r, "Kernel Name");
            if (c_kernel < 0) {
                st = eb_diag_fail(diag, EB_ERR_FORMAT,
                                  "ncu's CSV header has no \"Kernel Name\" column; run ncu with "
                                  "--csv --page raw");
                goto fail;
            }
            c_dur = rec_find(&r, EB_NCU_METRIC_DURATION);
            c_sm = rec_find(&r, EB_NCU_METRIC_SM);
            c_dram = rec_find(&r, EB_NCU_METRIC_DRAM);
            c_occ = rec_find(&r, EB_NCU_METRIC_OCCUPANCY);
            header_n = r.n;
            have_header = 1;
            continue;
        }
        if (r.n != header_n)
            continue;                       /* a message line after the table */
        if (rec_get(&r, c_id)[0] == '\0') { /* the units row */
            dur_scale = us_per_unit(rec_get(&r, c_dur));
            continue;
        }
        long long id = parse_id(rec_get(&r, c_id));
        if (id < 0)
            continue;
        if (t.n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            struct eb_ncu_launch *rows = realloc(t.rows, ncap * sizeof(*rows));
            if (rows == NULL)
                goto oom;
            t.rows = rows;
            cap = ncap;
        }
        struct eb_ncu_launch *l = &t.rows[t.n];
        const char *k = rec_get(&r, c_kernel);
        size_t klen = strlen(k);
        l->kernel = malloc(klen + 1);
        if (l->kernel == NULL)
            goto oom;
        memcpy(l->kernel, k, klen + 1);
        l->id = id;
        l->duration_us = c_dur >= 0 ? parse_num(rec_get(&r, c_dur)) * dur_scale : NAN;
        l->sm_pct = c_sm >= 0 ? parse_num(rec_get(&r, c_sm)) : NAN;
        l->dram_pct = c_dram >= 0 ? parse_num(rec_get(&r, c_dram)) : NAN;
        l->occupancy_pct = c_occ >= 0 ? parse_num(rec_get(&r, c_occ)) : NAN;
        t.n++;
    }
    if (rc < 0)
        goto oom;
    rec_fini(&r);
    *out = t;
    return EB_OK;
oom:
    st = eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory reading ncu's CSV output");
fail:
    rec_fini(&r);
    eb_ncu_table_fini(&t);
    return st;
}

/* ---- targets ---- */

static void copy_str(char *dst, size_t size, const struct eb_json_value *v)
{
    snprintf(dst, size, "%s", v != NULL && v->type == EB_JSON_STRING ? v->str : "");
}

/* --ncu_top's value as a count of targets: 1..EB_NCU_MAX_TARGETS. */
static size_t target_cap(int max_targets)
{
    return max_targets < 1                    ? 1
           : max_targets > EB_NCU_MAX_TARGETS ? EB_NCU_MAX_TARGETS
                                              : (size_t)max_targets;
}

enum eb_status eb_ncu_targets_from_report(const char *json, size_t len, int max_targets,
                                          struct eb_ncu_target *targets, size_t *n_out,
                                          struct eb_diag *diag)
{
    struct eb_json_value *root = NULL;
    enum eb_status st = eb_json_parse(json, len, &root, diag);
    if (st != EB_OK)
        return st;
    size_t n = 0;
    const size_t cap = target_cap(max_targets);
    const struct eb_json_value *slots = eb_json_get(root, "slots");
    for (size_t s = 0; slots != NULL && slots->type == EB_JSON_ARRAY && s < slots->n; s++) {
        const struct eb_json_value *slot = &slots->items[s];
        const struct eb_json_value *top = eb_json_path(slot, "profile/top_nodes");
        const struct eb_json_value *be = eb_json_get(slot, "backend");
        /* Only the native engine marks its nodes with NVTX ranges (ort's profile has none). */
        if (top == NULL || top->type != EB_JSON_ARRAY || be == NULL || be->type != EB_JSON_STRING ||
            strcmp(be->str, "native") != 0)
            continue;
        for (size_t i = 0; i < top->n; i++) {
            const struct eb_json_value *node = &top->items[i];
            const struct eb_json_value *ms = eb_json_get(node, "ms_per_frame");
            struct eb_ncu_target c;
            memset(&c, 0, sizeof(c));
            copy_str(c.node, sizeof(c.node), eb_json_get(node, "name"));
            copy_str(c.op, sizeof(c.op), eb_json_get(node, "op"));
            copy_str(c.slot, sizeof(c.slot), eb_json_get(slot, "name"));
            c.ms_per_frame = ms != NULL && ms->type == EB_JSON_NUMBER ? ms->num : 0.0;
            eb_nvtx_range_name(c.op, c.node, c.range, sizeof(c.range));
            /* One entry per range (a node of the same name in the other slot shares it): the
             * slower one stays. */
            size_t j = 0;
            while (j < n && strcmp(targets[j].range, c.range) != 0)
                j++;
            if (j < n) {
                if (c.ms_per_frame <= targets[j].ms_per_frame)
                    continue;
                memmove(&targets[j], &targets[j + 1], (n - j - 1) * sizeof(*targets));
                n--;
            }
            /* Insert by time, slowest first; drop what falls past the cap. */
            size_t at = 0;
            while (at < n && targets[at].ms_per_frame >= c.ms_per_frame)
                at++;
            if (at >= cap)
                continue;
            if (n == cap)
                n--;
            memmove(&targets[at + 1], &targets[at], (n - at) * sizeof(*targets));
            targets[at] = c;
            n++;
        }
    }
    eb_json_free(root);
    *n_out = n;
    return EB_OK;
}

enum eb_status eb_ncu_kernel_targets_from_report(const char *json, size_t len, int max_targets,
                                                 struct eb_ncu_target *targets, size_t *n_out,
                                                 struct eb_diag *diag)
{
    struct eb_json_value *root = NULL;
    enum eb_status st = eb_json_parse(json, len, &root, diag);
    if (st != EB_OK)
        return st;
    size_t n = 0;
    const size_t cap = target_cap(max_targets);
    const struct eb_json_value *top = eb_json_path(root, "trace/top_kernels");
    const struct eb_json_value *frames = eb_json_path(root, "trace/frames");
    double most = 1;
    for (size_t i = 0; frames != NULL && frames->type == EB_JSON_ARRAY && i < frames->n; i++)
        if (frames->items[i].type == EB_JSON_NUMBER && frames->items[i].num > most)
            most = frames->items[i].num;
    for (size_t i = 0; top != NULL && top->type == EB_JSON_ARRAY && i < top->n && n < cap; i++) {
        const struct eb_json_value *k = &top->items[i];
        const struct eb_json_value *ms = eb_json_get(k, "total_ms");
        struct eb_ncu_target *t = &targets[n];
        memset(t, 0, sizeof(*t));
        copy_str(t->kernel, sizeof(t->kernel), eb_json_get(k, "name"));
        if (t->kernel[0] == '\0')
            continue;
        snprintf(t->node, sizeof(t->node), "%.127s", t->kernel);
        snprintf(t->op, sizeof(t->op), "kernel");
        t->ms_per_frame = ms != NULL && ms->type == EB_JSON_NUMBER ? ms->num / most : 0.0;
        n++;
    }
    eb_json_free(root);
    *n_out = n;
    return EB_OK;
}

int eb_ncu_kernel_regex(const struct eb_ncu_target *targets, size_t n, char *buf, size_t size)
{
    size_t o = 0;
#define PUT(c)                                                                                     \
    do {                                                                                           \
        if (o + 1 >= size)                                                                         \
            return 0;                                                                              \
        buf[o++] = (c);                                                                            \
    } while (0)
    for (const char *p = "regex:^("; *p; p++)
        PUT(*p);
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            PUT('|');
        const size_t len = strlen(targets[i].kernel);
        for (size_t j = 0; j < len; j++) {
            if (strchr("\\.^$|?*+()[]{}", targets[i].kernel[j]) != NULL)
                PUT('\\');
            PUT(targets[i].kernel[j]);
        }
        if (len + 1 >= sizeof(targets[i].kernel)) { /* cut: a prefix */
            PUT('.');
            PUT('*');
        }
    }
    PUT(')');
    PUT('$');
#undef PUT
    buf[o] = '\0';
    return 1;
}

/* ---- summary ---- */

const char *eb_ncu_verdict(double sm_pct, double dram_pct)
{
    if (isnan(sm_pct) || isnan(dram_pct))
        return "unknown";
    return dram_pct > sm_pct ? "memory-bound" : "compute-bound";
}

void eb_ncu_summary_fini(struct eb_ncu_summary *s)
{
    if (s == NULL)
        return;
    free(s->kernels);
    free(s->names);
    s->kernels = NULL;
    s->names = NULL;
    s->n_kernels = 0;
}

/* Sums of one group while it is built. */
struct acc {
    double sum[4];
    unsigned count[4];
};

static void acc_add(struct acc *a, int i, double v)
{
    if (!isnan(v)) {
        a->sum[i] += v;
        a->count[i]++;
    }
}

static double acc_mean(const struct acc *a, int i)
{
    return a->count[i] > 0 ? a->sum[i] / a->count[i] : NAN;
}

static int same_range(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/*
 * The range of a launch from its renamed name: ncu's --print-nvtx-rename kernel names it
 * "<range>/<kernel>" (Nsight Compute 2025.3; a bare "<range>" is taken too), the range maybe
 * "<domain>@" prefixed. Returns the range's first byte and its length in *len; NULL when the
 * name is the kernel's own (no range).
 */
static const char *renamed_range(const char *renamed, const char *kernel, size_t *len)
{
    size_t rn = strlen(renamed), kn = strlen(kernel), n = rn;
    if (strcmp(renamed, kernel) == 0)
        return NULL;
    if (rn > kn && renamed[rn - kn - 1] == '/' && strcmp(renamed + rn - kn, kernel) == 0)
        n = rn - kn - 1;
    const char *start = renamed;
    for (size_t i = 0; i < n; i++)
        if (renamed[i] == '@')
            start = renamed + i + 1;
    *len = n - (size_t)(start - renamed);
    return *len > 0 ? start : NULL;
}

static int kernel_order(const void *pa, const void *pb)
{
    const struct eb_ncu_kernel *a = pa, *b = pb;
    unsigned ta = (unsigned)a->target, tb = (unsigned)b->target; /* -1 (unknown) sorts last */
    if (ta != tb)
        return ta < tb ? -1 : 1;
    double da = isnan(a->duration_us) ? -1.0 : a->duration_us;
    double db = isnan(b->duration_us) ? -1.0 : b->duration_us;
    if (da != db)
        return da > db ? -1 : 1;
    return strcmp(a->kernel, b->kernel);
}

enum eb_status eb_ncu_summarize(const struct eb_ncu_table *raw, const struct eb_ncu_table *ranges,
                                const struct eb_ncu_target *targets, size_t n_targets,
                                struct eb_ncu_summary *out, struct eb_diag *diag)
{
    struct eb_ncu_summary s = {0};
    struct acc *acc = NULL;
    size_t pool = 0, used = 0; /* ranges that are no target, copied into s.names */
    for (size_t j = 0; ranges != NULL && j < ranges->n; j++)
        pool += strlen(ranges->rows[j].kernel) + 1;
    if (raw->n > 0) {
        s.kernels = calloc(raw->n, sizeof(*s.kernels));
        acc = calloc(raw->n, sizeof(*acc));
        s.names = malloc(pool + 1);
        if (s.kernels == NULL || acc == NULL || s.names == NULL) {
            free(acc);
            eb_ncu_summary_fini(&s);
            return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory summarizing ncu's results");
        }
    }
    for (size_t i = 0; i < raw->n; i++) {
        const struct eb_ncu_launch *l = &raw->rows[i];
        /* The launch's range: the renamed import's name for the same ID. */
        const char *found = NULL;
        size_t len = 0;
        for (size_t j = 0; ranges != NULL && j < ranges->n; j++)
            if (ranges->rows[j].id == l->id) {
                found = renamed_range(ranges->rows[j].kernel, l->kernel, &len);
                break;
            }
        const char *range = NULL;
        int target = -1;
        for (size_t t = 0; found != NULL && t < n_targets; t++)
            if (strncmp(targets[t].range, found, len) == 0 && targets[t].range[len] == '\0') {
                target = (int)t;
                range = targets[t].range;
                break;
            }
        if (found != NULL && target < 0) {
            for (size_t g = 0; g < s.n_kernels && range == NULL; g++)
                if (s.kernels[g].target < 0 && s.kernels[g].range != NULL &&
                    strncmp(s.kernels[g].range, found, len) == 0 && s.kernels[g].range[len] == '\0')
                    range = s.kernels[g].range;
            if (range == NULL) {
                memcpy(s.names + used, found, len);
                s.names[used + len] = '\0';
                range = s.names + used;
                used += len + 1;
            }
        }
        size_t g = 0;
        while (g < s.n_kernels &&
               !(s.kernels[g].target == target && same_range(s.kernels[g].range, range) &&
                 strcmp(s.kernels[g].kernel, l->kernel) == 0))
            g++;
        if (g == s.n_kernels) {
            s.kernels[g].kernel = l->kernel;
            s.kernels[g].range = range;
            s.kernels[g].target = target;
            s.n_kernels++;
        }
        s.kernels[g].launches++;
        acc_add(&acc[g], 0, l->duration_us);
        acc_add(&acc[g], 1, l->sm_pct);
        acc_add(&acc[g], 2, l->dram_pct);
        acc_add(&acc[g], 3, l->occupancy_pct);
    }
    for (size_t g = 0; g < s.n_kernels; g++) {
        s.kernels[g].duration_us = acc_mean(&acc[g], 0);
        s.kernels[g].sm_pct = acc_mean(&acc[g], 1);
        s.kernels[g].dram_pct = acc_mean(&acc[g], 2);
        s.kernels[g].occupancy_pct = acc_mean(&acc[g], 3);
    }
    free(acc);
    if (s.n_kernels > 1)
        qsort(s.kernels, s.n_kernels, sizeof(*s.kernels), kernel_order);
    s.n_launches = raw->n;
    *out = s;
    return EB_OK;
}

/* ---- reports ---- */

static void write_json(FILE *fp, const struct eb_ncu_info *info, const struct eb_ncu_summary *sum)
{
    struct eb_json_writer w;
    eb_json_writer_init_file(&w, fp, 1);
    eb_json_obj_begin(&w);
    eb_json_kint(&w, "schema_version", 1);
    eb_json_kstr(&w, "status", info->status);
    eb_json_kstr(&w, "message", info->message);
    eb_json_kstr(&w, "ncu", info->ncu);
    eb_json_kstr(&w, "command", info->command);
    eb_json_kstr(&w, "report", info->report);
    eb_json_kstr(&w, "run_folder", info->run_folder);
    eb_json_key(&w, "metrics");
    eb_json_obj_begin(&w);
    eb_json_kstr(&w, "duration_us", EB_NCU_METRIC_DURATION);
    eb_json_kstr(&w, "sm_pct", EB_NCU_METRIC_SM);
    eb_json_kstr(&w, "dram_pct", EB_NCU_METRIC_DRAM);
    eb_json_kstr(&w, "occupancy_pct", EB_NCU_METRIC_OCCUPANCY);
    eb_json_obj_end(&w);
    eb_json_kstr(&w, "verdict_rule", "memory-bound when dram_pct > sm_pct, else compute-bound");
    eb_json_key(&w, "targets");
    eb_json_arr_begin(&w);
    for (size_t i = 0; i < info->n_targets; i++) {
        const struct eb_ncu_target *t = &info->targets[i];
        char inc[EB_NVTX_NAME_MAX + 32];
        snprintf(inc, sizeof(inc), "%s@%s/", EB_NVTX_DOMAIN_OP, t->range);
        eb_json_obj_begin(&w);
        eb_json_kint(&w, "rank", (int64_t)i + 1);
        eb_json_kstr(&w, "range", t->range);
        eb_json_kstr(&w, "nvtx_include", inc);
        eb_json_kstr(&w, "node", t->node);
        eb_json_kstr(&w, "op", t->op);
        eb_json_kstr(&w, "slot", t->slot);
        eb_json_knum(&w, "ms_per_frame", t->ms_per_frame);
        eb_json_obj_end(&w);
    }
    eb_json_arr_end(&w);
    eb_json_kint(&w, "launches", sum != NULL ? (int64_t)sum->n_launches : 0);
    eb_json_key(&w, "kernels");
    eb_json_arr_begin(&w);
    for (size_t i = 0; sum != NULL && i < sum->n_kernels; i++) {
        const struct eb_ncu_kernel *k = &sum->kernels[i];
        const struct eb_ncu_target *t = k->target >= 0 ? &info->targets[k->target] : NULL;
        eb_json_obj_begin(&w);
        eb_json_kstr(&w, "kernel", k->kernel);
        eb_json_kstr(&w, "range", k->range);
        eb_json_kstr(&w, "node", t != NULL ? t->node : NULL);
        eb_json_kstr(&w, "op", t != NULL ? t->op : NULL);
        eb_json_kint(&w, "launches", k->launches);
        eb_json_knum(&w, "duration_us", k->duration_us);
        eb_json_knum(&w, "sm_pct", k->sm_pct);
        eb_json_knum(&w, "dram_pct", k->dram_pct);
        eb_json_knum(&w, "occupancy_pct", k->occupancy_pct);
        eb_json_kstr(&w, "verdict", eb_ncu_verdict(k->sm_pct, k->dram_pct));
        eb_json_obj_end(&w);
    }
    eb_json_arr_end(&w);
    eb_json_obj_end(&w);
    fputc('\n', fp);
}

/* Text for a Markdown table cell: '|' escaped, line breaks as spaces, cut at `max` bytes. */
static void md_cell(FILE *fp, const char *s, size_t max)
{
    size_t n = 0;
    for (; s != NULL && *s != '\0' && n < max; s++, n++) {
        if (*s == '|')
            fputs("\\|", fp);
        else
            fputc(*s == '\n' || *s == '\r' ? ' ' : *s, fp);
    }
    if (s != NULL && *s != '\0')
        fputs("...", fp);
}

static void md_num(FILE *fp, double v, int decimals)
{
    if (isnan(v))
        fputs(" n/a |", fp);
    else
        fprintf(fp, " %.*f |", decimals, v);
}

static void write_md(FILE *fp, const struct eb_ncu_info *info, const struct eb_ncu_summary *sum)
{
    fprintf(fp, "# Nsight Compute: kernels of the slowest nodes\n\n");
    if (strcmp(info->status, "ok") != 0)
        fprintf(fp, "> **ncu %s:** %s\n\n", info->status, info->message ? info->message : "");
    if (info->command != NULL)
        fprintf(fp, "Profiled with `%s`.\n\n", info->command);
    if (info->report != NULL)
        fprintf(fp, "Full report: `%s` (open it in Nsight Compute).\n\n", info->report);
    fprintf(fp,
            "## Targets\n\nThe slowest nodes of the per-operator profile (report.md), by "
            "their NVTX range in the `%s` domain.\n\n",
            EB_NVTX_DOMAIN_OP);
    fprintf(fp, "| # | NVTX range | Op | Slot | ms/frame |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < info->n_targets; i++) {
        const struct eb_ncu_target *t = &info->targets[i];
        fprintf(fp, "| %zu | ", i + 1);
        md_cell(fp, t->range, 160);
        fprintf(fp, " | %s | %s |", t->op, t->slot);
        md_num(fp, t->ms_per_frame, 3);
        fputc('\n', fp);
    }
    fprintf(fp, "\n## Kernels\n\n");
    if (sum == NULL || sum->n_kernels == 0) {
        fprintf(fp, "%s\n",
                strcmp(info->status, "ok") == 0
                    ? "ncu profiled no kernel in these ranges: does the workload run "
                      "on the GPU (`--device cuda --backend native`)?"
                    : "None (see above).");
        return;
    }
    fprintf(fp,
            "%zu launches. Per kernel and range, the means over its launches; memory-bound "
            "when DRAM throughput (%% of peak) exceeds SM throughput, else compute-bound.\n\n",
            sum->n_launches);
    fprintf(fp, "| NVTX range | Kernel | Launches | Duration µs | SM %% | DRAM %% | "
                "Occupancy %% | Verdict |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < sum->n_kernels; i++) {
        const struct eb_ncu_kernel *k = &sum->kernels[i];
        fputs("| ", fp);
        md_cell(fp, k->range != NULL ? k->range : "(none)", 160);
        fputs(" | ", fp);
        md_cell(fp, k->kernel, 120);
        fprintf(fp, " | %u |", k->launches);
        md_num(fp, k->duration_us, 2);
        md_num(fp, k->sm_pct, 1);
        md_num(fp, k->dram_pct, 1);
        md_num(fp, k->occupancy_pct, 1);
        fprintf(fp, " %s |\n", eb_ncu_verdict(k->sm_pct, k->dram_pct));
    }
}

static enum eb_status write_file(const char *dir, const char *name, const struct eb_ncu_info *info,
                                 const struct eb_ncu_summary *sum, int json, struct eb_diag *diag)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    if (fp == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s", path, strerror(errno));
    if (json)
        write_json(fp, info, sum);
    else
        write_md(fp, info, sum);
    return eb_file_close(fp, path, diag);
}

enum eb_status eb_ncu_write_reports(const char *dir, const struct eb_ncu_info *info,
                                    const struct eb_ncu_summary *sum, struct eb_diag *diag)
{
    enum eb_status st = write_file(dir, "ncu.json", info, sum, 1, diag);
    if (st == EB_OK)
        st = write_file(dir, "ncu.md", info, sum, 0, diag);
    return st;
}
