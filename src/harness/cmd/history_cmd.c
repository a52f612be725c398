/*
 * `edgebench history` (list the recorded runs) and `edgebench diff A B` (compare two of them,
 * exit code 4 on a regression so that CI pipelines can gate on it), on a SQLite file or a
 * PostgreSQL database alike. The database is opened read-only; nothing here writes to it.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "eb/json.h"
#include "eb/number.h"
#include "eb/path.h"
#include "harness/results/history.h"

#define EXIT_OK         0
#define EXIT_USAGE      2
#define EXIT_REGRESSION 4

#define DEFAULT_LIMIT     20
#define DEFAULT_THRESHOLD 5.0

/*
 * Option `--name VALUE` or `--name=VALUE` at argv[*i]: 1 with *value set (and *i advanced past
 * a separate value), 0 when argv[*i] is another option, -1 when the value is missing.
 */
static int opt_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, "--", 2) != 0 || strncmp(arg + 2, name, n) != 0)
        return 0;
    if (arg[2 + n] == '=') {
        *value = arg + 3 + n;
        return 1;
    }
    if (arg[2 + n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

/* A non-negative integer with nothing after it. */
static int parse_int64(const char *s, int64_t *out)
{
    long long v = 0;
    if (eb_number_parse_int(s, &v) != EB_NUMBER_OK || v < 0)
        return 0;
    *out = v;
    return 1;
}

/* Opens the database named by --db (NULL: the default) read-only; prints the error. */
static struct eb_history *open_db(const char *db, char *path, size_t size, FILE *err)
{
    struct eb_diag diag = {0};
    int have = eb_history_path(db, path, size, &diag);
    if (have == 0) {
        fprintf(err, "edgebench: error: --db none: there is no history to read; give --db PATH\n");
        return NULL;
    }
    struct eb_history *h = NULL;
    if (have < 0 || eb_history_open(path, 0, &h, &diag) != EB_OK) {
        fprintf(err, "edgebench: error: %s\n", diag.msg);
        return NULL;
    }
    return h;
}

/* ---- history ----------------------------------------------------------------------------- */

static void print_history_help(FILE *fp)
{
    fprintf(fp,
            "usage: edgebench history [--db TARGET] [--model M] [--backend B] [--device D]\n"
            "                         [--host NAME] [--limit N] [--format table|csv|json]\n\n"
            "Lists the runs recorded in the history database, newest first, one line per slot\n"
            "that ran: run id, start time (UTC), the board's hostname (its first 16\n"
            "characters), slot, model, backend, device, the model's\n"
            "precision (read from its graph: fp32, fp16, int8-dynamic, int8-qdq, ...), the\n"
            "precision the backend computed in (runs recorded before edgebench stored it: the\n"
            "--precision asked), end-to-end p50 (ms), FPS and the slot's verdict. A run of\n"
            "edgebench llm is one line of slot 'llm': its model, backend, device, the model's\n"
            "dtype, the precision computed in, time to first token p50 (ms) in the p50 column\n"
            "and decode tokens/s in the FPS column. csv and json carry the same fields plus the\n"
            "run's uuid, with the whole hostname (host) and the model's full path; an unknown\n"
            "figure is empty (csv) or null (json).\n\n"
            "options:\n"
            "  --db TARGET    the database: a SQLite file or a PostgreSQL connection string\n"
            "                 (postgresql://USER@HOST/DB); default $EB_DB, else\n"
            "                 %s\n"
            "  --model M      only models whose path contains M\n"
            "  --backend B    only this backend (ort, native)\n"
            "  --device D     only this device (cpu, cuda, tensorrt)\n"
            "  --host NAME    only runs on the board with this hostname\n"
            "  --limit N      the N most recent runs (default %d; 0 = all)\n"
            "  --format F     table (default), csv or json\n\n"
            "exit codes: 0 listed; 2 bad input (unknown option, no database, a server that\n"
            "cannot be reached).\n",
            EB_HISTORY_DEFAULT_TEXT, DEFAULT_LIMIT);
}

static const char *or_dash(const char *s)
{
    return s[0] != '\0' ? s : "-";
}

/* The precision the slot computed in; a run recorded before that was stored: its --precision. */
static const char *computed(const struct eb_history_slot *s)
{
    return s->compute_precision[0] != '\0' ? s->compute_precision : s->precision;
}

enum list_format { FORMAT_TABLE, FORMAT_CSV, FORMAT_JSON };

/* One line of the list, whatever the format prints ("" = unknown text, NAN = unknown figure).
 * An llm run: slot "llm", the model's dtype as its precision, TTFT p50 as p50, decode tokens/s
 * as FPS. */
struct line {
    int64_t id;
    const char *uuid, *started_at, *host, *slot, *model, *backend, *device, *model_precision,
        *computed, *verdict;
    double p50_ms, fps;
};

static void line_of(const struct eb_history_row *row, struct line *l)
{
    *l = (struct line){.id = row->id,
                       .uuid = row->uuid,
                       .started_at = row->started_at,
                       .host = row->host,
                       .p50_ms = NAN,
                       .fps = NAN};
    if (row->llm != NULL) {
        const struct eb_history_llm *m = row->llm;
        l->slot = EB_HISTORY_KIND_LLM;
        l->model = m->model;
        l->backend = m->backend;
        l->device = m->device;
        l->model_precision = m->dtype;
        l->computed = m->precision;
        l->verdict = m->verdict;
        if (m->ttft.count > 0)
            l->p50_ms = m->ttft.p50;
        l->fps = m->decode_tok_s;
        return;
    }
    const struct eb_history_slot *s = row->slot;
    l->slot = s->name;
    l->model = s->model;
    l->backend = s->backend;
    l->device = s->device;
    l->model_precision = s->model_precision;
    l->computed = computed(s);
    l->verdict = strcmp(s->status, "failed") == 0 ? "FAILED" : s->verdict;
    if (s->stages[EB_STAGE_E2E].count > 0)
        l->p50_ms = s->stages[EB_STAGE_E2E].p50;
    l->fps = s->fps;
}

struct list_ctx {
    FILE *out;
    enum list_format format;
    struct eb_json_writer *json;
    size_t rows, llm_rows;
};

/* The table's columns once: the header's and the rows' (the id a number there) */
#define COLUMNS(id) id "  %-24s  %-16.16s  %-7s  %-28.28s  %-7s  %-8s  %-12s  %-8s  %9s  %8s  %s\n"
#define ROW_FORMAT  COLUMNS("%6lld")
#define HEAD_FORMAT COLUMNS("%6s")

static void print_table_row(FILE *out, const struct line *l)
{
    char p50[32] = "-", fps[32] = "-";
    if (isfinite(l->p50_ms))
        snprintf(p50, sizeof(p50), "%.3f", l->p50_ms);
    if (isfinite(l->fps))
        snprintf(fps, sizeof(fps), "%.1f", l->fps);
    fprintf(out, ROW_FORMAT, (long long)l->id, l->started_at, or_dash(l->host), l->slot,
            l->model[0] != '\0' ? eb_path_base(l->model) : "-", or_dash(l->backend),
            or_dash(l->device), or_dash(l->model_precision), or_dash(l->computed), p50, fps,
            or_dash(l->verdict));
}

/* A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. */
static void csv_field(FILE *out, const char *s, int last)
{
    if (strpbrk(s, ",\"\r\n") != NULL) {
        fputc('"', out);
        for (; *s != '\0'; s++) {
            if (*s == '"')
                fputc('"', out);
            fputc(*s, out);
        }
        fputc('"', out);
    } else {
        fputs(s, out);
    }
    fputc(last ? '\n' : ',', out);
}

static const char *const k_fields[] = {
    "id",      "uuid",   "started_at",      "host",     "slot",   "model",
    "backend", "device", "model_precision", "computed", "p50_ms", "fps",
    "verdict",
};

/* The shortest of %.15g..%.17g that reads back as `v`; "" for a NaN. */
static void shortest(char *buf, size_t size, double v)
{
    buf[0] = '\0';
    for (int digits = 15; digits <= 17 && isfinite(v); digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
}

static void print_csv_row(FILE *out, const struct line *l)
{
    char id[32], p50[32], fps[32];
    snprintf(id, sizeof(id), "%lld", (long long)l->id);
    shortest(p50, sizeof(p50), l->p50_ms);
    shortest(fps, sizeof(fps), l->fps);
    const char *v[] = {id,         l->uuid,   l->started_at,      l->host,     l->slot, l->model,
                       l->backend, l->device, l->model_precision, l->computed, p50,     fps,
                       l->verdict};
    _Static_assert(EB_ARRAY_LEN(v) == EB_ARRAY_LEN(k_fields), "one value per field");
    for (size_t k = 0; k < EB_ARRAY_LEN(v); k++)
        csv_field(out, v[k], k + 1 == EB_ARRAY_LEN(v));
}

static void print_json_row(struct eb_json_writer *w, const struct line *l)
{
    eb_json_obj_begin(w);
    eb_json_kint(w, "id", l->id);
    const char *text[][2] = {
        {"uuid", l->uuid},         {"started_at", l->started_at},
        {"host", l->host},         {"slot", l->slot},
        {"model", l->model},       {"backend", l->backend},
        {"device", l->device},     {"model_precision", l->model_precision},
        {"computed", l->computed},
    };
    for (size_t k = 0; k < EB_ARRAY_LEN(text); k++)
        eb_json_kstr(w, text[k][0], text[k][1][0] != '\0' ? text[k][1] : NULL);
    eb_json_knum(w, "p50_ms", l->p50_ms);
    eb_json_knum(w, "fps", l->fps);
    eb_json_kstr(w, "verdict", l->verdict[0] != '\0' ? l->verdict : NULL);
    eb_json_obj_end(w);
}

static void print_row(void *ctx, const struct eb_history_row *row)
{
    struct list_ctx *c = ctx;
    struct line l;
    line_of(row, &l);
    if (c->format == FORMAT_CSV)
        print_csv_row(c->out, &l);
    else if (c->format == FORMAT_JSON)
        print_json_row(c->json, &l);
    else
        print_table_row(c->out, &l);
    c->rows++;
    c->llm_rows += row->llm != NULL;
}

int eb_history_main(int argc, char **argv, FILE *out, FILE *err)
{
    const char *db = NULL;
    struct eb_history_filter f = {.limit = DEFAULT_LIMIT};
    enum list_format format = FORMAT_TABLE;
    for (int i = 0; i < argc; i++) {
        const char *v = NULL, *limit = NULL;
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            print_history_help(out);
            return EXIT_OK;
        }
        if ((r = opt_value(argc, argv, &i, "db", &v)) > 0)
            db = v;
        else if (r == 0 && (r = opt_value(argc, argv, &i, "model", &v)) > 0)
            f.model = v;
        else if (r == 0 && (r = opt_value(argc, argv, &i, "backend", &v)) > 0)
            f.backend = v;
        else if (r == 0 && (r = opt_value(argc, argv, &i, "device", &v)) > 0)
            f.device = v;
        else if (r == 0 && (r = opt_value(argc, argv, &i, "host", &v)) > 0)
            f.host = v;
        else if (r == 0 && (r = opt_value(argc, argv, &i, "format", &v)) > 0) {
            if (strcmp(v, "table") == 0 || strcmp(v, "csv") == 0 || strcmp(v, "json") == 0) {
                format = v[0] == 't' ? FORMAT_TABLE : v[0] == 'c' ? FORMAT_CSV : FORMAT_JSON;
            } else {
                fprintf(err,
                        "edgebench: error: --format: '%s' is not accepted (accepted: table, csv, "
                        "json)\n",
                        v);
                return EXIT_USAGE;
            }
        } else if (r == 0 && (r = opt_value(argc, argv, &i, "limit", &limit)) > 0) {
            if (!parse_int64(limit, &f.limit)) {
                fprintf(err,
                        "edgebench: error: --limit: '%s' is not accepted (accepted: an integer "
                        ">= 0; 0 = all)\n",
                        limit);
                return EXIT_USAGE;
            }
        }
        if (r < 0) {
            fprintf(err, "edgebench: error: %s needs a value; see edgebench history --help\n",
                    argv[i]);
            return EXIT_USAGE;
        }
        if (r == 0) {
            fprintf(err, "edgebench: error: unknown argument '%s'; see edgebench history --help\n",
                    argv[i]);
            return EXIT_USAGE;
        }
    }
    char path[4096];
    struct eb_history *h = open_db(db, path, sizeof(path), err);
    if (h == NULL)
        return EXIT_USAGE;
    struct eb_json_writer w;
    struct list_ctx c = {.out = out, .format = format, .json = &w};
    if (format == FORMAT_TABLE)
        fprintf(out, HEAD_FORMAT, "id", "started_at", "host", "slot", "model", "backend", "device",
                "model prec", "computed", "p50 ms", "FPS", "verdict");
    for (size_t k = 0; format == FORMAT_CSV && k < EB_ARRAY_LEN(k_fields); k++)
        csv_field(out, k_fields[k], k + 1 == EB_ARRAY_LEN(k_fields));
    if (format == FORMAT_JSON) {
        eb_json_writer_init_file(&w, out, 1);
        eb_json_arr_begin(&w);
    }
    struct eb_diag diag = {0};
    enum eb_status st = eb_history_list(h, &f, print_row, &c, &diag);
    if (format == FORMAT_JSON) {
        eb_json_arr_end(&w);
        fputc('\n', out);
    }
    char where[4096];
    eb_history_redact(path, where, sizeof(where));
    eb_history_close(h);
    if (st != EB_OK) {
        fprintf(err, "edgebench: error: %s\n", diag.msg);
        return EXIT_USAGE;
    }
    if (format != FORMAT_TABLE)
        return EXIT_OK;
    if (c.rows == 0)
        fprintf(out, "(no run in %s matches)\n", where);
    if (c.llm_rows > 0)
        fprintf(out, "(llm rows: p50 ms = time to first token p50, FPS = decode tokens/s; model "
                     "prec = the model's dtype)\n");
    return EXIT_OK;
}

/* ---- diff -------------------------------------------------------------------------------- */

static void print_diff_help(FILE *fp)
{
    fprintf(fp,
            "usage: edgebench diff A B [--db TARGET] [--threshold PCT]\n\n"
            "Compares run B with run A (ids from edgebench history), slot by slot: the p50 and\n"
            "p99 of every latency stage with their 95%% confidence intervals (order-statistic\n"
            "binomial), FPS, memory peak and energy per frame, and the change A -> B in %%.\n"
            "A metric is a REGRESSION when both CIs exist, they do not overlap, and B is worse\n"
            "than A by more than the threshold; metrics without a CI are shown, never judged.\n"
            "Two runs of edgebench llm: time to first token p50/p99, prefill p50 and decode\n"
            "per-token p50/p99 with their CIs (judged as above); prefill and decode tokens/s as\n"
            "mean +/- std over the repetitions (a REGRESSION when the +/-std intervals do not\n"
            "overlap and B is slower by more than the threshold); MFU, bandwidth use, memory\n"
            "peak and KV-cache size (shown). An llm run is only compared with an llm run.\n\n"
            "options:\n"
            "  --db TARGET      the database: a SQLite file or a PostgreSQL connection string\n"
            "                   (default $EB_DB, else %s)\n"
            "  --threshold PCT  smallest change that counts, in %% (default %g; 0..1000)\n\n"
            "exit codes: 0 no regression; 4 at least one regression; 2 bad input (unknown run\n"
            "id, no slot that ran in both runs, an llm run and another kind, unknown option, no\n"
            "database).\n",
            EB_HISTORY_DEFAULT_TEXT, DEFAULT_THRESHOLD);
}

/* One metric of the comparison. */
struct metric {
    const char *name;
    const char *unit;
    double a, b;
    const struct eb_stat_ci *ci_a, *ci_b; /* NULL: the metric has no CI */
    int higher_is_better;
    int spread; /* the intervals are mean +/- std over repetitions, not CIs */
};

static void fmt_value(char *buf, size_t n, double v, const struct eb_stat_ci *ci, int with_ci,
                      int spread)
{
    if (!isfinite(v))
        snprintf(buf, n, "n/a");
    else if (!with_ci)
        snprintf(buf, n, "%.3f", v);
    else if (ci != NULL && ci->available && spread)
        snprintf(buf, n, "%.3f +/- %.3f", v, (ci->hi - ci->lo) / 2);
    else if (ci != NULL && ci->available)
        snprintf(buf, n, "%.3f [%.3f, %.3f]", v, ci->lo, ci->hi);
    else
        snprintf(buf, n, spread ? "%.3f +/- n/a" : "%.3f [no CI]", v);
}

/* Prints one metric row; returns 1 when it is a regression. */
static int diff_metric(const struct metric *m, double threshold, FILE *out)
{
    char a[64], b[64], change[32] = "n/a", label[48];
    const int with_ci = m->ci_a != NULL;
    fmt_value(a, sizeof(a), m->a, m->ci_a, with_ci, m->spread);
    fmt_value(b, sizeof(b), m->b, m->ci_b, with_ci, m->spread);
    snprintf(label, sizeof(label), "%s%s%s", m->name, m->unit[0] ? " " : "", m->unit);
    const char *verdict = "n/a";
    int regression = 0;
    if (isfinite(m->a) && isfinite(m->b) && m->a != 0) {
        double pct = 100.0 * (m->b - m->a) / fabs(m->a);
        snprintf(change, sizeof(change), "%+.2f%%", pct);
        double worse = m->higher_is_better ? -pct : pct; /* > 0: B is worse */
        if (!with_ci) {
            verdict = "(no CI: not judged)";
        } else if (m->ci_a == NULL || !m->ci_a->available || m->ci_b == NULL ||
                   !m->ci_b->available) {
            verdict = m->spread ? "no std: not judged" : "no CI: not judged";
        } else if (m->ci_b->lo <= m->ci_a->hi && m->ci_a->lo <= m->ci_b->hi) {
            verdict = m->spread ? "ok (+/-std overlap)" : "ok (CIs overlap)";
        } else if (worse > threshold) {
            verdict = "REGRESSION";
            regression = 1;
        } else if (-worse > threshold) {
            verdict = "improved";
        } else {
            verdict = "ok (within threshold)";
        }
    }
    fprintf(out, "  %-22s  %-30s  %-30s  %9s  %s\n", label, a, b, change, verdict);
    return regression;
}

static void describe_slot(const struct eb_history_slot *s, char *buf, size_t n)
{
    snprintf(buf, n, "%s %s %s %s %dx%d", s->model[0] ? eb_path_base(s->model) : "-",
             s->backend[0] ? s->backend : "-", s->device[0] ? s->device : "-", computed(s),
             s->input_w, s->input_h);
}

/* The slot's configuration differs (another model file, backend, device, precision asked or
 * computed in, or size). */
static int config_differs(const struct eb_history_slot *a, const struct eb_history_slot *b)
{
    if (a->compute_precision[0] != '\0' && b->compute_precision[0] != '\0' &&
        strcmp(a->compute_precision, b->compute_precision) != 0)
        return 1;
    int model = a->model_sha256[0] && b->model_sha256[0] ? strcmp(a->model_sha256, b->model_sha256)
                                                         : strcmp(a->model, b->model);
    return model != 0 || strcmp(a->backend, b->backend) != 0 || strcmp(a->device, b->device) != 0 ||
           strcmp(a->precision, b->precision) != 0 || a->input_w != b->input_w ||
           a->input_h != b->input_h;
}

static int diff_slot(const struct eb_history_slot *a, const struct eb_history_slot *b,
                     double threshold, FILE *out)
{
    static const int order[] = {EB_STAGE_E2E,  EB_STAGE_INFER, EB_STAGE_PRE,
                                EB_STAGE_POST, EB_STAGE_READ,  EB_HISTORY_PIPELINE};
    char da[4200], db[4200];
    describe_slot(a, da, sizeof(da));
    describe_slot(b, db, sizeof(db));
    fprintf(out, "\nslot %d (%s): %s -> %s\n", a->index, a->name, da, db);
    if (config_differs(a, b))
        fprintf(out, "  note: the configurations differ; the change is the configuration's too\n");
    fprintf(out, "  %-22s  %-30s  %-30s  %9s  %s\n", "metric", "A [95% CI]", "B [95% CI]", "change",
            "verdict");
    int n = 0;
    for (size_t k = 0; k < EB_ARRAY_LEN(order); k++) {
        const struct eb_stat_summary *x = &a->stages[order[k]], *y = &b->stages[order[k]];
        if (x->count == 0 || y->count == 0)
            continue;
        char name[40];
        snprintf(name, sizeof(name), "%s p50", eb_history_stage_name(order[k]));
        struct metric m = {name, "ms", x->p50, y->p50, &x->p50_ci, &y->p50_ci, 0, 0};
        n += diff_metric(&m, threshold, out);
        snprintf(name, sizeof(name), "%s p99", eb_history_stage_name(order[k]));
        m = (struct metric){name, "ms", x->p99, y->p99, &x->p99_ci, &y->p99_ci, 0, 0};
        n += diff_metric(&m, threshold, out);
    }
    struct metric fps = {"throughput", "FPS", a->fps, b->fps, NULL, NULL, 1, 0};
    n += diff_metric(&fps, threshold, out);
    struct metric mem = {"memory peak",
                         "GB",
                         (double)a->mem_peak_bytes / 1e9,
                         (double)b->mem_peak_bytes / 1e9,
                         NULL,
                         NULL,
                         0,
                         0};
    n += diff_metric(&mem, threshold, out);
    if (isfinite(a->map50_95) || isfinite(b->map50_95)) { /* --data: shown, higher is better */
        struct metric m5 = {"mAP50-95", "", a->map50_95, b->map50_95, NULL, NULL, 1, 0};
        n += diff_metric(&m5, threshold, out);
        struct metric m50 = {"mAP50", "", a->map50, b->map50, NULL, NULL, 1, 0};
        n += diff_metric(&m50, threshold, out);
    }
    if (isfinite(a->energy_per_frame_mj) || isfinite(b->energy_per_frame_mj)) {
        struct metric e = {
            "energy/frame", "mJ", a->energy_per_frame_mj, b->energy_per_frame_mj, NULL, NULL, 0, 0};
        n += diff_metric(&e, threshold, out);
    }
    return n;
}

/* ---- diff of two llm runs --------------------------------------------------------------- */

/* How a figure of struct eb_history_llm is compared. */
enum llm_how {
    LLM_P50,      /* the p50 of a struct eb_stat_summary, with its CI (judged) */
    LLM_P99,      /* its p99, likewise */
    LLM_RATE,     /* a double mean with its std over repetitions at std_at (judged) */
    LLM_FRACTION, /* a double fraction 0..1, shown in %; left out when unknown in both */
    LLM_BYTES,    /* a uint64 byte count, shown divided by `scale` */
};

struct llm_figure {
    const char *name, *unit;
    enum llm_how how;
    size_t at;     /* offset of the figure in struct eb_history_llm */
    size_t std_at; /* LLM_RATE: offset of the std */
    double scale;  /* LLM_BYTES: bytes per unit */
    int higher_is_better;
};

#define LLM_AT(member) offsetof(struct eb_history_llm, member)

/* The compared figures of two llm runs, in the order they are printed. */
static const struct llm_figure k_llm_figures[] = {
    {.name = "ttft p50", .unit = "ms", .how = LLM_P50, .at = LLM_AT(ttft)},
    {.name = "ttft p99", .unit = "ms", .how = LLM_P99, .at = LLM_AT(ttft)},
    {.name = "prefill p50", .unit = "ms", .how = LLM_P50, .at = LLM_AT(prefill)},
    {.name = "decode/token p50", .unit = "ms", .how = LLM_P50, .at = LLM_AT(decode)},
    {.name = "decode/token p99", .unit = "ms", .how = LLM_P99, .at = LLM_AT(decode)},
    {.name = "prefill",
     .unit = "tok/s",
     .how = LLM_RATE,
     .at = LLM_AT(prefill_tok_s),
     .std_at = LLM_AT(prefill_tok_s_std),
     .higher_is_better = 1},
    {.name = "decode",
     .unit = "tok/s",
     .how = LLM_RATE,
     .at = LLM_AT(decode_tok_s),
     .std_at = LLM_AT(decode_tok_s_std),
     .higher_is_better = 1},
    {.name = "prefill MFU",
     .unit = "%",
     .how = LLM_FRACTION,
     .at = LLM_AT(prefill_mfu),
     .higher_is_better = 1},
    {.name = "decode bandwidth",
     .unit = "%",
     .how = LLM_FRACTION,
     .at = LLM_AT(decode_mbu),
     .higher_is_better = 1},
    {.name = "memory peak",
     .unit = "GB",
     .how = LLM_BYTES,
     .at = LLM_AT(peak_mem_bytes),
     .scale = 1e9},
    {.name = "KV cache", .unit = "MB", .how = LLM_BYTES, .at = LLM_AT(kv_bytes), .scale = 1e6},
};

static const void *llm_field(const struct eb_history_llm *l, size_t at)
{
    return (const char *)l + at;
}

static double llm_double(const struct eb_history_llm *l, size_t at)
{
    double v;
    memcpy(&v, llm_field(l, at), sizeof(v));
    return v;
}

/* The mean +/- std interval of a rate as a CI-shaped interval (not available without a std). */
static struct eb_stat_ci spread_interval(double mean, double std)
{
    struct eb_stat_ci ci = {0};
    if (isfinite(mean) && isfinite(std)) {
        ci.available = 1;
        ci.lo = mean - std;
        ci.hi = mean + std;
    }
    return ci;
}

/* Prints the row of figure `f` of runs `a` and `b` (none when it is not measured in one of them);
 * returns 1 when it is a regression. */
static int diff_llm_figure(const struct llm_figure *f, const struct eb_history_llm *a,
                           const struct eb_history_llm *b, double threshold, FILE *out)
{
    char label[48];
    snprintf(label, sizeof(label), "%s", f->name);
    struct metric m = {.name = label, .unit = f->unit, .higher_is_better = f->higher_is_better};
    struct eb_stat_ci ci_a, ci_b;
    switch (f->how) {
    case LLM_P50:
    case LLM_P99: {
        const struct eb_stat_summary *x = llm_field(a, f->at), *y = llm_field(b, f->at);
        if (x->count == 0 || y->count == 0)
            return 0;
        const int p50 = f->how == LLM_P50;
        m.a = p50 ? x->p50 : x->p99;
        m.b = p50 ? y->p50 : y->p99;
        m.ci_a = p50 ? &x->p50_ci : &x->p99_ci;
        m.ci_b = p50 ? &y->p50_ci : &y->p99_ci;
        break;
    }
    case LLM_RATE:
        m.a = llm_double(a, f->at);
        m.b = llm_double(b, f->at);
        ci_a = spread_interval(m.a, llm_double(a, f->std_at));
        ci_b = spread_interval(m.b, llm_double(b, f->std_at));
        m.ci_a = &ci_a;
        m.ci_b = &ci_b;
        m.spread = 1;
        break;
    case LLM_FRACTION:
        m.a = 100.0 * llm_double(a, f->at);
        m.b = 100.0 * llm_double(b, f->at);
        if (!isfinite(m.a) && !isfinite(m.b))
            return 0;
        break;
    case LLM_BYTES: {
        uint64_t x, y;
        memcpy(&x, llm_field(a, f->at), sizeof(x));
        memcpy(&y, llm_field(b, f->at), sizeof(y));
        m.a = (double)x / f->scale;
        m.b = (double)y / f->scale;
        break;
    }
    }
    return diff_metric(&m, threshold, out);
}

static void describe_llm(const struct eb_history_llm *l, char *buf, size_t n)
{
    snprintf(buf, n, "%s (%s %s, %s) %s %s %s, prompt %d, gen %d, %d reps",
             l->model[0] ? eb_path_base(l->model) : "-", or_dash(l->arch), or_dash(l->size),
             or_dash(l->dtype), or_dash(l->backend), or_dash(l->device), or_dash(l->precision),
             l->prompt, l->gen, l->reps);
}

/* The llm runs' configurations differ (another model file, backend, device, precision, dtype,
 * workload or thread count). */
static int llm_config_differs(const struct eb_history_llm *a, const struct eb_history_llm *b)
{
    int model = a->model_sha256[0] && b->model_sha256[0] ? strcmp(a->model_sha256, b->model_sha256)
                                                         : strcmp(a->model, b->model);
    return model != 0 || strcmp(a->backend, b->backend) != 0 || strcmp(a->device, b->device) != 0 ||
           strcmp(a->precision, b->precision) != 0 || strcmp(a->dtype, b->dtype) != 0 ||
           a->prompt != b->prompt || a->gen != b->gen || a->ctx != b->ctx ||
           a->threads != b->threads;
}

static int llm_measured(const struct eb_history_llm *l)
{
    return l->ttft.count > 0 || l->prefill.count > 0 || l->decode.count > 0;
}

static int diff_llm(const struct eb_history_llm *a, const struct eb_history_llm *b,
                    double threshold, FILE *out)
{
    char da[4300], db[4300];
    describe_llm(a, da, sizeof(da));
    describe_llm(b, db, sizeof(db));
    fprintf(out, "\nllm: %s -> %s\n", da, db);
    if (llm_config_differs(a, b))
        fprintf(out, "  note: the configurations differ; the change is the configuration's too\n");
    fprintf(out, "  %-22s  %-30s  %-30s  %9s  %s\n", "metric", "A [95% CI] or +/- std",
            "B [95% CI] or +/- std", "change", "verdict");
    int n = 0;
    for (size_t k = 0; k < EB_ARRAY_LEN(k_llm_figures); k++)
        n += diff_llm_figure(&k_llm_figures[k], a, b, threshold, out);
    return n;
}

int eb_history_diff_kinds_differ(const struct eb_history_run *a, const struct eb_history_run *b)
{
    return eb_history_run_is_llm(a) != eb_history_run_is_llm(b);
}

/* ---- diff of any two runs -------------------------------------------------------------- */

static void describe_run(const char *label, const struct eb_history_run *r, FILE *out)
{
    char what[48];
    if (eb_history_run_is_llm(r))
        snprintf(what, sizeof(what), "kind %s", r->kind);
    else
        snprintf(what, sizeof(what), "%s mode", r->mode[0] ? r->mode : "?");
    fprintf(out, "%s: run %lld, %s, %s, %s, host %s, edgebench %s, env %s\n", label,
            (long long)r->id, r->started_at, what, r->verdict[0] ? r->verdict : "not judged",
            r->hostname[0] ? r->hostname : "?",
            r->edgebench_version[0] ? r->edgebench_version : "?", r->fingerprint);
}

int eb_history_diff(const struct eb_history_run *a, const struct eb_history_run *b,
                    double threshold_pct, FILE *out)
{
    int compared = 0, regressions = 0;
    const int llm = eb_history_run_is_llm(a);
    if (eb_history_diff_kinds_differ(a, b))
        return -1;
    for (int i = 0; i < EB_NUM_SLOTS && !llm; i++)
        compared += strcmp(a->slots[i].status, "ok") == 0 && strcmp(b->slots[i].status, "ok") == 0;
    if (llm)
        compared = llm_measured(&a->llm) && llm_measured(&b->llm);
    if (compared == 0)
        return -1;
    fprintf(out,
            "edgebench diff: run %lld (A) -> run %lld (B); REGRESSION = both 95%% CIs (%s) "
            "exist, do not overlap, and B is worse by more than %g%%\n",
            (long long)a->id, (long long)b->id, EB_STAT_CI_METHOD, threshold_pct);
    describe_run("A", a, out);
    describe_run("B", b, out);
    const struct eb_history_run *runs[2] = {a, b};
    for (int k = 0; k < 2; k++)
        if (strcmp(runs[k]->verdict, "INVALID") == 0)
            fprintf(out, "warning: run %lld is INVALID (%s); its numbers may mislead\n",
                    (long long)runs[k]->id, runs[k]->reasons);
    if (strcmp(a->fingerprint, b->fingerprint) != 0)
        fprintf(out,
                "warning: the environments differ (host, CPU, GPU, driver or versions: "
                "fingerprint %s vs %s)\n",
                a->fingerprint, b->fingerprint);
    if (llm)
        regressions += diff_llm(&a->llm, &b->llm, threshold_pct, out);
    for (int i = 0; i < EB_NUM_SLOTS && !llm; i++) {
        const struct eb_history_slot *x = &a->slots[i], *y = &b->slots[i];
        if (strcmp(x->status, "ok") == 0 && strcmp(y->status, "ok") == 0) {
            regressions += diff_slot(x, y, threshold_pct, out);
        } else if (strcmp(x->status, "skipped") != 0 || strcmp(y->status, "skipped") != 0) {
            fprintf(out, "\nslot %d (%s): not compared (A %s, B %s)\n", i, x->name, x->status,
                    y->status);
        }
    }
    fprintf(out, "\n%d regression%s\n", regressions, regressions == 1 ? "" : "s");
    return regressions;
}

int eb_diff_main(int argc, char **argv, FILE *out, FILE *err)
{
    const char *db = NULL, *ids[2] = {NULL, NULL};
    double threshold = DEFAULT_THRESHOLD;
    int n_ids = 0;
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            print_diff_help(out);
            return EXIT_OK;
        }
        if (strncmp(argv[i], "--", 2) != 0) {
            if (n_ids == 2) {
                fprintf(err, "edgebench: error: unexpected argument '%s'; diff takes two run ids\n",
                        argv[i]);
                return EXIT_USAGE;
            }
            ids[n_ids++] = argv[i];
            continue;
        }
        if ((r = opt_value(argc, argv, &i, "db", &v)) > 0) {
            db = v;
        } else if (r == 0 && (r = opt_value(argc, argv, &i, "threshold", &v)) > 0) {
            if (eb_number_parse_real(v, &threshold) != EB_NUMBER_OK || !(threshold >= 0) ||
                threshold > 1000) {
                fprintf(err,
                        "edgebench: error: --threshold: '%s' is not accepted (accepted: a "
                        "percentage in 0..1000)\n",
                        v);
                return EXIT_USAGE;
            }
        }
        if (r < 0) {
            fprintf(err, "edgebench: error: %s needs a value; see edgebench diff --help\n",
                    argv[i]);
            return EXIT_USAGE;
        }
        if (r == 0) {
            fprintf(err, "edgebench: error: unknown option '%s'; see edgebench diff --help\n",
                    argv[i]);
            return EXIT_USAGE;
        }
    }
    int64_t id[2];
    if (n_ids < 2) {
        fprintf(err, "edgebench: error: diff needs two run ids (edgebench diff A B); edgebench "
                     "history lists them\n");
        return EXIT_USAGE;
    }
    for (int k = 0; k < 2; k++)
        if (!parse_int64(ids[k], &id[k])) {
            fprintf(err,
                    "edgebench: error: run id '%s' is not a number; edgebench history lists the "
                    "ids\n",
                    ids[k]);
            return EXIT_USAGE;
        }
    char path[4096];
    struct eb_history *h = open_db(db, path, sizeof(path), err);
    if (h == NULL)
        return EXIT_USAGE;
    int code = EXIT_USAGE;
    struct eb_history_run *runs = calloc(2, sizeof(*runs));
    struct eb_diag diag = {0};
    if (runs == NULL) {
        fprintf(err, "edgebench: error: out of memory\n");
        goto done;
    }
    for (int k = 0; k < 2; k++)
        if (eb_history_get(h, id[k], &runs[k], &diag) != EB_OK) {
            fprintf(err, "edgebench: error: %s\n", diag.msg);
            goto done;
        }
    if (eb_history_diff_kinds_differ(&runs[0], &runs[1])) {
        fprintf(err,
                "edgebench: error: run %lld is of kind %s and run %lld of kind %s: diff compares "
                "two runs of the same kind\n",
                (long long)id[0], runs[0].kind, (long long)id[1], runs[1].kind);
        goto done;
    }
    int n = eb_history_diff(&runs[0], &runs[1], threshold, out);
    if (n < 0 && eb_history_run_is_llm(&runs[0]))
        fprintf(err,
                "edgebench: error: llm runs %lld and %lld: one of them has no measured latency; "
                "nothing to compare\n",
                (long long)id[0], (long long)id[1]);
    else if (n < 0)
        fprintf(err,
                "edgebench: error: runs %lld and %lld have no slot that ran in both; nothing to "
                "compare\n",
                (long long)id[0], (long long)id[1]);
    code = n < 0 ? EXIT_USAGE : n > 0 ? EXIT_REGRESSION : EXIT_OK;
done:
    if (runs != NULL) {
        eb_history_run_fini(&runs[0]);
        eb_history_run_fini(&runs[1]);
    }
    free(runs);
    eb_history_close(h);
    return code;
}
