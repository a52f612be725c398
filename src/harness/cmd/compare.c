/*
 * `edgebench compare`: the cartesian product of models x backends x precisions x input sizes x
 * devices, each combination run in-process through a slot as `run --mode rgb` runs one (the
 * same setup, warm-up, measured loop, summary and validity verdict), optionally scored for
 * COCO mAP on a dataset as `val` scores a model, and rendered from one row array into Markdown,
 * CSV, JSON, JSONL and HTML. See compare.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eb/clock.h"
#include "eb/engine.h"
#include "eb/file.h"
#include "eb/path.h"
#include "eval/classmap.h"
#include "eval/coco_eval.h"
#include "eval/dataset.h"
#include "harness/cmd/compare.h"
#include "harness/cmd/config.h"
#include "harness/cmd/quantize.h"
#include "harness/cmd/record.h"
#include "harness/cmd/run.h"
#include "harness/cmd/val.h"
#include "harness/metrics/sampler.h"
#include "harness/pipeline/accuracy.h"
#include "harness/pipeline/advice.h"
#include "harness/pipeline/pipeline.h"
#include "harness/pipeline/slot.h"
#include "harness/report/report.h"
#include "harness/report/svg_chart.h"
#include "harness/results/history.h"
#include "model/model.h"

/* The embedded default run's rgb source (run.c EB_DEFAULT_RGB_SOURCE): a compare with no
 * --source needs no files. */
#define CMP_DEFAULT_SOURCE "synthetic=1280x720"
#define CMP_DEFAULT_MODELS "embedded:yolov8n"
#define CMP_DEFAULT_IMGSZ  "640"
#define CMP_EMBEDDED       "embedded:"
/* Longest cell text: a model path (struct eb_compare_row.model), a reason or a note. */
#define CELL_MAX 1100

static const char *const k_backends[] = {"ort", "native", "auto"}; /* enum eb_backend_choice */
static const char *const k_precisions[] = {"fp32", "fp16", "int8"};
static const char *const k_devices[] = {"cpu", "cuda", "tensorrt"}; /* enum eb_device */

/* Options of `run` that compare sets itself per combination (or has its own form of). */
static const char *const k_not_passed[] = {
    "mode",    "model0", "model1",    "source", "rgb_source", "thermal_source",
    "backend", "device", "precision", "imgsz",  "output",     "solo_baseline"};

const char *eb_compare_status_name(enum eb_compare_status s)
{
    switch (s) {
    case EB_COMPARE_OK: return "ok";
    case EB_COMPARE_UNSUPPORTED: return "unsupported";
    case EB_COMPARE_FAILED: return "failed";
    case EB_COMPARE_PENDING: break;
    }
    return "pending";
}

void eb_compare_row_clear_figures(struct eb_compare_row *row)
{
    row->status = EB_COMPARE_PENDING;
    row->reason[0] = '\0';
    row->backend_ran[0] = '\0';
    row->size_mb = row->gflops = row->map50_95 = NAN;
    row->params = 0;
    row->frames = 0;
    row->p50_ms = row->p90_ms = row->p99_ms = NAN;
    row->p50_lo_ms = row->p50_hi_ms = row->p99_lo_ms = row->p99_hi_ms = NAN;
    row->fps = row->peak_mem_mb = row->energy_mj = NAN;
    row->verdict[0] = '\0';
    row->verdict_reasons[0] = '\0';
    row->map_delta = NAN;
    row->note[0] = '\0';
}

void eb_compare_free_list(char **items, size_t n)
{
    if (items == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(items[i]);
    free(items);
}

enum eb_status eb_compare_split_list(const char *text, const char *flag, char ***items_out,
                                     size_t *n_out, struct eb_diag *diag)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    char **items = calloc(cap, sizeof(*items));
    if (items == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
    size_t n = 0;
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *a = p;
        while (len > 0 && (*a == ' ' || *a == '\t')) {
            a++;
            len--;
        }
        while (len > 0 && (a[len - 1] == ' ' || a[len - 1] == '\t'))
            len--;
        if (len > 0) {
            items[n] = malloc(len + 1);
            if (items[n] == NULL) {
                eb_compare_free_list(items, n);
                return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
            }
            memcpy(items[n], a, len);
            items[n][len] = '\0';
            n++;
        }
        if (end == NULL)
            break;
        p = end + 1;
    }
    if (n == 0) {
        free(items);
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "%s: empty list; give comma-separated values, e.g. %s a,b", flag, flag);
    }
    *items_out = items;
    *n_out = n;
    return EB_OK;
}

enum eb_status eb_compare_expand(const struct eb_compare_axes *axes,
                                 struct eb_compare_row **rows_out, size_t *n_out,
                                 struct eb_diag *diag)
{
    const size_t dims[5] = {axes->n_models, axes->n_backends, axes->n_precisions, axes->n_imgsz,
                            axes->n_devices};
    static const char *const names[5] = {"--models", "--backends", "--precisions", "--imgsz",
                                         "--devices"};
    size_t total = 1;
    for (int k = 0; k < 5; k++) {
        if (dims[k] == 0)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "%s: no value; give at least one",
                                names[k]);
        if (total > EB_COMPARE_MAX_ROWS / dims[k])
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "the sweep has more than %d combinations; shorten the lists",
                                EB_COMPARE_MAX_ROWS);
        total *= dims[k];
    }
    struct eb_compare_row *rows = calloc(total, sizeof(*rows));
    if (rows == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory for %zu rows", total);
    size_t r = 0;
    for (size_t m = 0; m < axes->n_models; m++)
        for (size_t b = 0; b < axes->n_backends; b++)
            for (size_t p = 0; p < axes->n_precisions; p++)
                for (size_t s = 0; s < axes->n_imgsz; s++)
                    for (size_t d = 0; d < axes->n_devices; d++) {
                        struct eb_compare_row *row = &rows[r++];
                        eb_compare_row_clear_figures(row);
                        snprintf(row->model, sizeof(row->model), "%s", axes->models[m]);
                        snprintf(row->backend, sizeof(row->backend), "%s", axes->backends[b]);
                        snprintf(row->precision, sizeof(row->precision), "%s", axes->precisions[p]);
                        row->imgsz = axes->imgsz[s];
                        snprintf(row->device, sizeof(row->device), "%s", axes->devices[d]);
                    }
    *rows_out = rows;
    *n_out = total;
    return EB_OK;
}

void eb_compare_fill_map_delta(struct eb_compare_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct eb_compare_row *r = &rows[i];
        r->map_delta = NAN;
        if (r->status != EB_COMPARE_OK || !isfinite(r->map50_95))
            continue;
        for (size_t k = 0; k < n; k++) {
            const struct eb_compare_row *b = &rows[k];
            if (b->status == EB_COMPARE_OK && isfinite(b->map50_95) &&
                strcmp(b->precision, "fp32") == 0 && strcmp(b->model, r->model) == 0 &&
                strcmp(b->backend, r->backend) == 0 && strcmp(b->device, r->device) == 0 &&
                b->imgsz == r->imgsz) {
                r->map_delta = r->map50_95 - b->map50_95;
                break;
            }
        }
    }
}

/* ---- rendering: one column table drives Markdown, CSV and JSON ---- */

enum col_kind { COL_STR, COL_INT, COL_NUM };

struct col {
    const char *key;   /* CSV header and JSON member */
    const char *title; /* Markdown header */
    enum col_kind kind;
    int decimals; /* COL_NUM */
};

enum {
    C_STATUS,
    C_REASON,
    C_MODEL,
    C_BACKEND,
    C_PRECISION,
    C_IMGSZ,
    C_DEVICE,
    C_SIZE,
    C_PARAMS,
    C_GFLOPS,
    C_MAP,
    C_MAP_DELTA,
    C_FRAMES,
    C_P50,
    C_P50_LO,
    C_P50_HI,
    C_P90,
    C_P99,
    C_P99_LO,
    C_P99_HI,
    C_FPS,
    C_MEM,
    C_ENERGY,
    C_VERDICT,
    C_VERDICT_REASONS,
    C_BACKEND_RAN,
    C_MODEL_PRECISION,
    C_COMPUTE_PRECISION,
    C_NOTE,
    C_COUNT
};

static const struct col k_cols[C_COUNT] = {
    [C_STATUS] = {"status", "status", COL_STR, 0},
    [C_REASON] = {"reason", "reason", COL_STR, 0},
    [C_MODEL] = {"model", "model", COL_STR, 0},
    [C_BACKEND] = {"backend", "backend", COL_STR, 0},
    [C_PRECISION] = {"precision", "precision", COL_STR, 0},
    [C_IMGSZ] = {"imgsz", "imgsz", COL_INT, 0},
    [C_DEVICE] = {"device", "device", COL_STR, 0},
    [C_SIZE] = {"size_mb", "size (MB)", COL_NUM, 2},
    [C_PARAMS] = {"params", "params", COL_INT, 0},
    [C_GFLOPS] = {"gflops", "GFLOPs", COL_NUM, 2},
    [C_MAP] = {"map50_95", "mAP50-95", COL_NUM, 4},
    [C_MAP_DELTA] = {"map_delta", "ΔmAP vs fp32", COL_NUM, 4},
    [C_FRAMES] = {"frames", "frames", COL_INT, 0},
    [C_P50] = {"p50_ms", "p50 (ms)", COL_NUM, 3},
    [C_P50_LO] = {"p50_ci_lo_ms", "p50 CI lo", COL_NUM, 3},
    [C_P50_HI] = {"p50_ci_hi_ms", "p50 CI hi", COL_NUM, 3},
    [C_P90] = {"p90_ms", "p90 (ms)", COL_NUM, 3},
    [C_P99] = {"p99_ms", "p99 (ms)", COL_NUM, 3},
    [C_P99_LO] = {"p99_ci_lo_ms", "p99 CI lo", COL_NUM, 3},
    [C_P99_HI] = {"p99_ci_hi_ms", "p99 CI hi", COL_NUM, 3},
    [C_FPS] = {"fps", "FPS", COL_NUM, 1},
    [C_MEM] = {"peak_mem_mb", "peak mem (MB)", COL_NUM, 1},
    [C_ENERGY] = {"energy_mj_per_frame", "energy (mJ/frame)", COL_NUM, 2},
    [C_VERDICT] = {"verdict", "verdict", COL_STR, 0},
    [C_VERDICT_REASONS] = {"verdict_reasons", "verdict reasons", COL_STR, 0},
    [C_BACKEND_RAN] = {"backend_ran", "ran", COL_STR, 0},
    [C_MODEL_PRECISION] = {"model_precision", "model precision", COL_STR, 0},
    [C_COMPUTE_PRECISION] = {"compute_precision", "computed in", COL_STR, 0},
    [C_NOTE] = {"note", "note", COL_STR, 0},
};

/*
 * The text of one cell, the same in every format: a string, an integer, or a number rounded to
 * the column's decimals. Returns 0 when the value is not measured (NAN; params/frames 0 are
 * real values only once measured, so they follow the status).
 */
static int cell(const struct eb_compare_row *r, int c, char *buf, size_t size)
{
    double v = NAN;
    buf[0] = '\0';
    switch (c) {
    case C_STATUS: snprintf(buf, size, "%s", eb_compare_status_name(r->status)); return 1;
    case C_REASON: snprintf(buf, size, "%s", r->reason); return 1;
    case C_MODEL: snprintf(buf, size, "%s", r->model); return 1;
    case C_BACKEND: snprintf(buf, size, "%s", r->backend); return 1;
    case C_PRECISION: snprintf(buf, size, "%s", r->precision); return 1;
    case C_IMGSZ: snprintf(buf, size, "%d", r->imgsz); return 1;
    case C_DEVICE: snprintf(buf, size, "%s", r->device); return 1;
    case C_VERDICT: snprintf(buf, size, "%s", r->verdict); return 1;
    case C_VERDICT_REASONS: snprintf(buf, size, "%s", r->verdict_reasons); return 1;
    case C_BACKEND_RAN: snprintf(buf, size, "%s", r->backend_ran); return 1;
    case C_MODEL_PRECISION: snprintf(buf, size, "%s", r->model_precision); return 1;
    case C_COMPUTE_PRECISION: snprintf(buf, size, "%s", r->compute_precision); return 1;
    case C_NOTE: snprintf(buf, size, "%s", r->note); return 1;
    case C_PARAMS:
        if (r->params == 0)
            return 0;
        snprintf(buf, size, "%llu", (unsigned long long)r->params);
        return 1;
    case C_FRAMES:
        if (r->status != EB_COMPARE_OK)
            return 0;
        snprintf(buf, size, "%llu", (unsigned long long)r->frames);
        return 1;
    case C_SIZE: v = r->size_mb; break;
    case C_GFLOPS: v = r->gflops; break;
    case C_MAP: v = r->map50_95; break;
    case C_MAP_DELTA: v = r->map_delta; break;
    case C_P50: v = r->p50_ms; break;
    case C_P50_LO: v = r->p50_lo_ms; break;
    case C_P50_HI: v = r->p50_hi_ms; break;
    case C_P90: v = r->p90_ms; break;
    case C_P99: v = r->p99_ms; break;
    case C_P99_LO: v = r->p99_lo_ms; break;
    case C_P99_HI: v = r->p99_hi_ms; break;
    case C_FPS: v = r->fps; break;
    case C_MEM: v = r->peak_mem_mb; break;
    case C_ENERGY: v = r->energy_mj; break;
    default: return 0;
    }
    if (!isfinite(v))
        return 0;
    snprintf(buf, size, "%.*f", k_cols[c].decimals, v);
    return 1;
}

/* Markdown cell text: '|' escaped, line breaks as spaces. */
static void md_put(FILE *fp, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", fp);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', fp);
        else
            fputc(*s, fp);
    }
}

void eb_compare_write_md(const struct eb_compare_row *rows, size_t n, FILE *fp)
{
    fputc('|', fp);
    for (int c = 0; c < C_COUNT; c++)
        fprintf(fp, " %s |", k_cols[c].title);
    fputs("\n|", fp);
    for (int c = 0; c < C_COUNT; c++)
        fputs(k_cols[c].kind == COL_STR ? "---|" : "--:|", fp);
    fputc('\n', fp);
    char buf[CELL_MAX];
    for (size_t i = 0; i < n; i++) {
        fputc('|', fp);
        for (int c = 0; c < C_COUNT; c++) {
            fputc(' ', fp);
            if (cell(&rows[i], c, buf, sizeof(buf)))
                md_put(fp, buf[0] ? buf : "");
            else
                fputc('-', fp);
            fputs(" |", fp);
        }
        fputc('\n', fp);
    }
}

static void csv_put(FILE *fp, const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, fp);
        return;
    }
    fputc('"', fp);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

void eb_compare_write_csv(const struct eb_compare_row *rows, size_t n, int imgsz, FILE *fp)
{
    for (int c = 0; c < C_COUNT; c++)
        fprintf(fp, "%s%s", c ? "," : "", k_cols[c].key);
    fputc('\n', fp);
    char buf[CELL_MAX];
    for (size_t i = 0; i < n; i++) {
        if (imgsz != 0 && rows[i].imgsz != imgsz)
            continue;
        for (int c = 0; c < C_COUNT; c++) {
            if (c)
                fputc(',', fp);
            if (cell(&rows[i], c, buf, sizeof(buf)))
                csv_put(fp, buf);
        }
        fputc('\n', fp);
    }
}

void eb_compare_write_row_json(const struct eb_compare_row *row, struct eb_json_writer *w)
{
    char buf[CELL_MAX];
    eb_json_obj_begin(w);
    for (int c = 0; c < C_COUNT; c++) {
        eb_json_key(w, k_cols[c].key);
        if (!cell(row, c, buf, sizeof(buf))) {
            eb_json_null(w);
            continue;
        }
        switch (k_cols[c].kind) {
        case COL_STR: eb_json_str(w, buf); break;
        case COL_INT: eb_json_int(w, strtoll(buf, NULL, 10)); break;
        case COL_NUM: eb_json_num(w, strtod(buf, NULL)); break; /* the rounded value */
        }
    }
    eb_json_obj_end(w);
}

void eb_compare_write_jsonl(const struct eb_compare_row *rows, size_t n, FILE *fp)
{
    for (size_t i = 0; i < n; i++) {
        struct eb_json_writer w;
        eb_json_writer_init_file(&w, fp, 0);
        eb_compare_write_row_json(&rows[i], &w);
        eb_json_writer_fini(&w);
        fputc('\n', fp);
    }
}

/* "model backend precision imgsz device" without the parts every row shares. */
static void config_label(const struct eb_compare_row *rows, size_t n, size_t i, int skip_backend,
                         char *buf, size_t size)
{
    int same[5] = {1, 1, 1, 1, 1};
    for (size_t k = 1; k < n; k++) {
        same[0] &= strcmp(rows[k].model, rows[0].model) == 0;
        same[1] &= strcmp(rows[k].backend, rows[0].backend) == 0;
        same[2] &= strcmp(rows[k].precision, rows[0].precision) == 0;
        same[3] &= rows[k].imgsz == rows[0].imgsz;
        same[4] &= strcmp(rows[k].device, rows[0].device) == 0;
    }
    const struct eb_compare_row *r = &rows[i];
    const char *model = eb_path_base(r->model);
    char imgsz[16];
    snprintf(imgsz, sizeof(imgsz), "%d", r->imgsz);
    const char *parts[5] = {model, skip_backend ? "" : r->backend, r->precision, imgsz, r->device};
    size_t off = 0;
    buf[0] = '\0';
    for (int k = 0; k < 5 && off < size; k++) {
        if ((same[k] && n > 1) || parts[k][0] == '\0')
            continue;
        off += (size_t)snprintf(buf + off, size - off, "%s%.100s", off ? " " : "", parts[k]);
    }
    if (buf[0] == '\0')
        snprintf(buf, size, "%.150s", model);
}

static enum eb_status html_charts(const struct eb_compare_row *rows, size_t n, FILE *fp)
{
    enum eb_status st = EB_OK;
    /* Backends are the series; the rest of a row's keys are its category. */
    const char *backends[8];
    size_t nb = 0;
    for (size_t i = 0; i < n && nb < 8; i++) {
        size_t k = 0;
        while (k < nb && strcmp(backends[k], rows[i].backend) != 0)
            k++;
        if (k == nb)
            backends[nb++] = rows[i].backend;
    }
    char(*cats)[160] = calloc(n ? n : 1, sizeof(*cats));
    char(*labels)[160] = calloc(n ? n : 1, sizeof(*labels));
    const char **cat_ptr = calloc(n ? n : 1, sizeof(*cat_ptr));
    const char **lab_ptr = calloc(n ? n : 1, sizeof(*lab_ptr));
    double *vals = malloc((n ? n : 1) * nb * sizeof(*vals) + sizeof(*vals));
    double *xs = malloc((n ? n : 1) * sizeof(*xs));
    double *ys = malloc((n ? n : 1) * sizeof(*ys));
    struct eb_svg_bar_series bs[8];
    struct eb_svg_series ss[8];
    if (cats == NULL || labels == NULL || cat_ptr == NULL || lab_ptr == NULL || vals == NULL ||
        xs == NULL || ys == NULL) {
        st = EB_ERR_NOMEM;
        goto done;
    }
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        char lab[160];
        config_label(rows, n, i, nb > 1, lab, sizeof(lab));
        size_t k = 0;
        while (k < nc && strcmp(cats[k], lab) != 0)
            k++;
        if (k == nc)
            snprintf(cats[nc++], sizeof(cats[0]), "%s", lab);
    }
    for (size_t k = 0; k < nc; k++)
        cat_ptr[k] = cats[k];
    for (size_t k = 0; k < nc * nb; k++)
        vals[k] = NAN;
    for (size_t i = 0; i < n; i++) {
        char lab[160];
        config_label(rows, n, i, nb > 1, lab, sizeof(lab));
        size_t k = 0, b = 0;
        while (k < nc && strcmp(cats[k], lab) != 0)
            k++;
        while (b < nb && strcmp(backends[b], rows[i].backend) != 0)
            b++;
        if (k < nc && b < nb && rows[i].status == EB_COMPARE_OK)
            vals[b * nc + k] = rows[i].p50_ms;
    }
    for (size_t b = 0; b < nb; b++)
        bs[b] = (struct eb_svg_bar_series){.name = backends[b], .values = vals + b * nc};
    struct eb_svg_bars bars = {
        .categories = cat_ptr, .n_categories = nc, .series = bs, .n_series = nb};
    struct eb_svg_chart bc = {.id = "p50_bars",
                              .title = "End-to-end latency p50 per configuration",
                              .subtitle = "one bar per backend; no bar: unsupported or failed",
                              .x_label = "configuration",
                              .y_label = "p50 latency (ms)",
                              .width = 900,
                              .height = 380,
                              .y_include_zero = 1,
                              .empty_note = "no combination ran"};
    fputs("<h2>Latency per configuration</h2>\n", fp);
    st = eb_svg_bar_chart(fp, &bc, &bars);

    int any_map = 0;
    for (size_t i = 0; i < n; i++)
        any_map |= rows[i].status == EB_COMPARE_OK && isfinite(rows[i].map50_95);
    fputs("<h2>Latency vs accuracy</h2>\n", fp);
    if (st == EB_OK && !any_map) {
        fputs("<p>No mAP was measured: run the sweep with <code>--data DIR</code> for the "
              "latency-vs-mAP scatter.</p>\n",
              fp);
    } else if (st == EB_OK) {
        /* One series per backend; each point labelled with its configuration. */
        size_t used = 0;
        for (size_t b = 0; b < nb; b++) {
            size_t start = used;
            for (size_t i = 0; i < n; i++) {
                if (strcmp(rows[i].backend, backends[b]) != 0 || rows[i].status != EB_COMPARE_OK)
                    continue;
                xs[used] = rows[i].p50_ms;
                ys[used] = rows[i].map50_95;
                config_label(rows, n, i, 1, labels[used], sizeof(labels[0]));
                lab_ptr[used] = labels[used];
                used++;
            }
            ss[b] = (struct eb_svg_series){.name = backends[b],
                                           .x = xs + start,
                                           .y = ys + start,
                                           .labels = lab_ptr + start,
                                           .n = used - start};
        }
        struct eb_svg_chart sc = {.id = "latency_map",
                                  .title = "Latency vs mAP50-95",
                                  .subtitle = "upper left is better",
                                  .x_label = "end-to-end latency p50 (ms)",
                                  .y_label = "mAP50-95",
                                  .width = 900,
                                  .height = 420,
                                  .x_include_zero = 1,
                                  .y_include_zero = 1};
        st = eb_svg_scatter(fp, &sc, ss, nb);
    }
done:
    free(cats);
    free(labels);
    free(cat_ptr);
    free(lab_ptr);
    free(vals);
    free(xs);
    free(ys);
    return st;
}

enum eb_status eb_compare_write_html(const struct eb_compare_row *rows, size_t n, const char *title,
                                     FILE *fp)
{
    eb_svg_page_begin(fp);
    fputs("<title>", fp);
    eb_svg_put_escaped(fp, title);
    fputs("</title>\n<style>\nbody{font-family:sans-serif;margin:1.5em;color:#222}\n"
          "table{border-collapse:collapse;font-size:13px}\n"
          "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}\n"
          "td.s,th{text-align:left}\ntr.unsupported{color:#777}\ntr.failed{color:#a00}\n"
          "svg{display:block;margin:1em 0}\n</style>\n</head>\n<body>\n<h1>",
          fp);
    eb_svg_put_escaped(fp, title);
    fputs("</h1>\n<table>\n<tr>", fp);
    for (int c = 0; c < C_COUNT; c++) {
        fputs("<th>", fp);
        eb_svg_put_escaped(fp, k_cols[c].title);
        fputs("</th>", fp);
    }
    fputs("</tr>\n", fp);
    char buf[CELL_MAX];
    for (size_t i = 0; i < n; i++) {
        fprintf(fp, "<tr class=\"%s\">", eb_compare_status_name(rows[i].status));
        for (int c = 0; c < C_COUNT; c++) {
            fputs(k_cols[c].kind == COL_STR ? "<td class=\"s\">" : "<td>", fp);
            eb_svg_put_escaped(fp, cell(&rows[i], c, buf, sizeof(buf)) ? buf : "-");
            fputs("</td>", fp);
        }
        fputs("</tr>\n", fp);
    }
    fputs("</table>\n", fp);
    enum eb_status st = html_charts(rows, n, fp);
    fputs("</body>\n</html>\n", fp);
    if (st == EB_OK && ferror(fp))
        st = EB_ERR_IO;
    return st;
}

/* ---- the sweep ---- */

struct cmp_opts {
    const char *models, *backends, *precisions, *imgsz, *devices, *data, *source, *out;
    const char *calib, *calib_images; /* --calib DIR: int8 rows of a float model quantize it */
    char **run_argv; /* run's options passed through: "--mode", "rgb", then the user's */
    int run_argc;
};

/* An int8 model made by --calib for one (model, imgsz): made once, run by every row of it. */
struct cmp_quant {
    int state;                 /* 0 not tried, 1 made, -1 failed */
    char path[4480];           /* <out>/quantized/<stem>_<imgsz>.int8.onnx */
    char msg[EB_DIAG_MSG_MAX]; /* the quantize error when failed */
    size_t n_images;           /* calibration images it used */
};

struct cmp_ctx {
    const struct eb_compare_env *env;
    struct cmp_opts o;
    struct eb_config cfg; /* run's options; per row a copy gets the row's keys */
    struct eb_log log;
    struct eb_platform platform;
    struct eb_dataset *ds; /* --data, loaded once to check it (each row scores its own copy) */
    struct eb_history *db; /* NULL: no history */
    char db_path[4096];
    char dir[4096];
    char started_at[32];
    char **models, **backends, **precisions, **devices, **imgsz_text;
    size_t n_models, n_backends, n_precisions, n_devices, n_imgsz;
    int *imgsz;
    long long calib_images;  /* --calib_images; 0 = quantize's default */
    struct cmp_quant *quant; /* [model index * n_imgsz + imgsz index], with --calib */
    struct eb_compare_row *rows;
    size_t n_rows;
};

static void cmp_log(void *ctx, enum eb_log_level level, const char *msg)
{
    FILE *fp = ctx;
    fprintf(fp, "edgebench: %s: %s\n", level >= EB_LOG_ERROR ? "error" : "warning", msg);
}

static int usage(FILE *err, const char *msg)
{
    fprintf(err, "edgebench: error: %s\n", msg);
    return EB_EXIT_USAGE;
}

void eb_compare_print_help(FILE *fp)
{
    fprintf(fp,
            "usage: edgebench compare [options] [run options]\n\n"
            "Runs every combination of the lists below (the cartesian product) on one slot, as\n"
            "`edgebench run --mode rgb` would, and writes one row per combination: unsupported\n"
            "or failed combinations are rows with the reason, and the sweep goes on.\n\n"
            "  --models A,B       ONNX files, or embedded:yolov8n / embedded:yolo11n (a model\n"
            "                     synthesized at each --imgsz); default " CMP_DEFAULT_MODELS "\n"
            "  --backends L       native, ort, auto; default native\n"
            "  --precisions L     fp32, fp16, int8; default fp32. int8 needs an int8 model (QDQ\n"
            "                     or dynamic, as its graph says) or --calib; a QDQ model's fp32\n"
            "                     row on native is its fake-quant float path, its int8 row the\n"
            "                     int8 kernels; a dynamic int8 model has an int8 row only\n"
            "  --imgsz L          input sizes, 32..4096 in steps of 32; default " CMP_DEFAULT_IMGSZ
            "\n"
            "  --devices L        cpu, cuda, tensorrt; default cpu\n"
            "  --data DIR         also score each combination's mAP50-95 on this dataset (COCO,\n"
            "                     YOLO or VOC layout, as edgebench val), and its change against\n"
            "                     the fp32 row of the same model, backend, size and device\n"
            "  --calib DIR        int8 rows of a float model run it quantized first, as\n"
            "                     edgebench quantize does (calibrated on these images, on the\n"
            "                     CPU whatever the row's device), once per model and size into\n"
            "                     <out>/quantized/<model>_<imgsz>.int8.onnx; the row's note\n"
            "                     says so\n"
            "  --calib_images N   calibration images drawn from --calib (default 128)\n"
            "  --source SPEC      frames to time; default " CMP_DEFAULT_SOURCE "\n"
            "  --out DIR          output folder; default runs/<timestamp>.<mmm>-compare\n"
            "  --help             this text\n\n"
            "Run options that apply to every combination: --frames, --duration, --no_loop,\n"
            "--fps, --queue, --max_drop_pct, --warmup, --warmup_s, --min_frames,\n"
            "--min_duration_s, --max_drift_pct, --max_others_cpu_pct, --max_cov_pct, --conf,\n"
            "--iou, --threads, --kernels, --qdq, --gpu_mem_limit_gb, --ort_lib, --db,\n"
            "--preprocess, --decode, --quiet, --verbose (see edgebench run --help).\n\n"
            "Writes compare.md (also printed), latency_comparative_<imgsz>.csv, compare.json,\n"
            "compare.jsonl and compare.html (with --data, a column ΔmAP vs fp32: the row's\n"
            "mAP50-95 minus its fp32 row's, key map_delta). Exit 0 when every row ran or was\n"
            "unsupported, 1 when a row failed, 2 for bad input.\n");
}

static int parse_opts(int argc, char **argv, struct cmp_opts *o, int *help, FILE *err)
{
    struct {
        const char *name;
        const char **dst;
    } own[] = {{"models", &o->models},         {"backends", &o->backends},
               {"precisions", &o->precisions}, {"imgsz", &o->imgsz},
               {"devices", &o->devices},       {"data", &o->data},
               {"source", &o->source},         {"out", &o->out},
               {"calib", &o->calib},           {"calib_images", &o->calib_images}};
    o->run_argv = calloc((size_t)argc + 3, sizeof(*o->run_argv));
    if (o->run_argv == NULL)
        return usage(err, "out of memory");
    o->run_argv[o->run_argc++] = "--mode";
    o->run_argv[o->run_argc++] = "rgb";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            *help = 1;
            return EB_EXIT_OK;
        }
        size_t k = 0;
        while (k < sizeof(own) / sizeof(own[0]) && !eb_config_match_option(a, own[k].name, &v))
            k++;
        if (k < sizeof(own) / sizeof(own[0])) {
            if (v == NULL) {
                if (i + 1 >= argc) {
                    char msg[160];
                    snprintf(msg, sizeof(msg), "--%s needs a value; see edgebench compare --help",
                             own[k].name);
                    return usage(err, msg);
                }
                v = argv[++i];
            }
            *own[k].dst = v;
            continue;
        }
        for (size_t j = 0; j < sizeof(k_not_passed) / sizeof(k_not_passed[0]); j++)
            if (eb_config_match_option(a, k_not_passed[j], &v)) {
                char msg[256];
                snprintf(msg, sizeof(msg),
                         "%.60s: not a compare option (the sweep sets it per combination); use "
                         "--models, --backends, --precisions, --imgsz, --devices, --source, --out",
                         a);
                return usage(err, msg);
            }
        /* Anything else is run's to accept or refuse (eb_config_parse names it). */
        o->run_argv[o->run_argc++] = argv[i];
        const char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) == 0 && eq == NULL &&
            eb_config_option_takes_value(a + 2, strlen(a + 2)) && i + 1 < argc)
            o->run_argv[o->run_argc++] = argv[++i];
    }
    return EB_EXIT_OK;
}

static int choice_of(const char *text, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(text, names[i]) == 0)
            return i;
    return -1;
}

static int is_regular_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* "embedded:yolov8n" → arch and scale; 0 when the text is not an embedded model name. */
static int embedded_model(const char *name, enum eb_synth_arch *arch, char *scale)
{
    if (strncmp(name, CMP_EMBEDDED, strlen(CMP_EMBEDDED)) != 0)
        return 0;
    const char *p = name + strlen(CMP_EMBEDDED);
    if (strncmp(p, "yolov8", 6) == 0) {
        *arch = EB_SYNTH_YOLOV8;
        p += 6;
    } else if (strncmp(p, "yolo11", 6) == 0) {
        *arch = EB_SYNTH_YOLO11;
        p += 6;
    } else {
        return -1;
    }
    if (strchr("nsmlx", *p) == NULL || *p == '\0' || p[1] != '\0')
        return -1;
    *scale = *p;
    return 1;
}

/* Checks the axes' names and values; EB_EXIT_USAGE with one line on a bad one. */
static int check_axes(struct cmp_ctx *cc)
{
    FILE *err = cc->env->err;
    char msg[EB_DIAG_MSG_MAX];
    for (size_t i = 0; i < cc->n_backends; i++)
        if (choice_of(cc->backends[i], k_backends, 3) < 0) {
            snprintf(msg, sizeof(msg),
                     "--backends: unknown backend '%.100s'; use native, ort or "
                     "auto",
                     cc->backends[i]);
            return usage(err, msg);
        }
    for (size_t i = 0; i < cc->n_precisions; i++)
        if (choice_of(cc->precisions[i], k_precisions, 3) < 0) {
            snprintf(msg, sizeof(msg),
                     "--precisions: unknown precision '%.100s'; use fp32, fp16 or int8",
                     cc->precisions[i]);
            return usage(err, msg);
        }
    for (size_t i = 0; i < cc->n_devices; i++)
        if (choice_of(cc->devices[i], k_devices, 3) < 0) {
            snprintf(msg, sizeof(msg),
                     "--devices: unknown device '%.100s'; use cpu, cuda or "
                     "tensorrt",
                     cc->devices[i]);
            return usage(err, msg);
        }
    for (size_t i = 0; i < cc->n_imgsz; i++) {
        char *end = NULL;
        errno = 0;
        long v = strtol(cc->imgsz_text[i], &end, 10);
        if (errno != 0 || end == cc->imgsz_text[i] || *end != '\0' || v < 32 || v > 4096 ||
            v % 32 != 0) {
            snprintf(msg, sizeof(msg),
                     "--imgsz: '%.100s' is not an input size; use 32..4096 in steps of 32",
                     cc->imgsz_text[i]);
            return usage(err, msg);
        }
        cc->imgsz[i] = (int)v;
    }
    size_t present = 0;
    for (size_t i = 0; i < cc->n_models; i++) {
        enum eb_synth_arch arch;
        char scale;
        int e = embedded_model(cc->models[i], &arch, &scale);
        if (e < 0) {
            snprintf(msg, sizeof(msg),
                     "--models: unknown embedded model '%.100s'; use embedded:yolov8<n|s|m|l|x> "
                     "or embedded:yolo11<n|s|m|l|x>",
                     cc->models[i]);
            return usage(err, msg);
        }
        if (e > 0 || is_regular_file(cc->models[i]))
            present++;
        else
            fprintf(err,
                    "edgebench: warning: --models: %s: no such file; its rows fail (give the path "
                    "of an ONNX model)\n",
                    cc->models[i]);
    }
    if (present == 0) {
        snprintf(msg, sizeof(msg),
                 "--models: no model file exists (%.200s%s); give paths of ONNX models",
                 cc->models[0], cc->n_models > 1 ? ", ..." : "");
        return usage(err, msg);
    }
    return EB_EXIT_OK;
}

/* Checks --calib and --calib_images; EB_EXIT_USAGE with one line on a bad one. */
static int check_calib(struct cmp_ctx *cc)
{
    FILE *err = cc->env->err;
    char msg[EB_DIAG_MSG_MAX];
    if (cc->o.calib_images != NULL) {
        if (cc->o.calib == NULL)
            return usage(err, "--calib_images: give --calib DIR too (the images it draws from)");
        char *end = NULL;
        errno = 0;
        const long long v = strtoll(cc->o.calib_images, &end, 10);
        if (errno != 0 || end == cc->o.calib_images || *end != '\0' || v < 1 ||
            v > EB_QUANTIZE_IMAGES_MAX) {
            snprintf(msg, sizeof(msg), "--calib_images: '%.100s' is not a count; use 1..%d",
                     cc->o.calib_images, EB_QUANTIZE_IMAGES_MAX);
            return usage(err, msg);
        }
        cc->calib_images = v;
    }
    if (cc->o.calib == NULL)
        return EB_EXIT_OK;
    struct stat sb;
    if (stat(cc->o.calib, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        snprintf(msg, sizeof(msg),
                 "--calib %.300s: no such folder; give a folder of calibration images or a "
                 "dataset folder",
                 cc->o.calib);
        return usage(err, msg);
    }
    cc->quant = calloc(cc->n_models * cc->n_imgsz, sizeof(*cc->quant));
    if (cc->quant == NULL)
        return usage(err, "out of memory");
    return EB_EXIT_OK;
}

static void row_fail(struct eb_compare_row *row, enum eb_compare_status st, const char *msg)
{
    row->status = st;
    snprintf(row->reason, sizeof(row->reason), "%s", msg);
}

/* The file name of a model without its folder and ".onnx" ("yolov8n" for embedded:yolov8n). */
static void model_stem(const char *model, char *buf, size_t size)
{
    const char *base = eb_path_base(model);
    if (strncmp(base, CMP_EMBEDDED, strlen(CMP_EMBEDDED)) == 0)
        base += strlen(CMP_EMBEDDED);
    snprintf(buf, size, "%s", base);
    const size_t n = strlen(buf);
    if (n > 5 && strcmp(buf + n - 5, ".onnx") == 0)
        buf[n - 5] = '\0';
}

static enum eb_status write_bytes(const char *path, const uint8_t *bytes, size_t len,
                                  struct eb_diag *diag)
{
    FILE *fp = fopen(path, "wb");
    if (fp == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s", path, strerror(errno));
    if (len > 0)
        (void)fwrite(bytes, 1, len, fp); /* a short write sets the error flag */
    return eb_file_close(fp, path, diag);
}

/*
 * The int8 model --calib makes of the row's float model at the row's size, as `edgebench
 * quantize` makes one (eb_quantize), into <out>/quantized/<stem>_<imgsz>.int8.onnx: made by
 * the first row that needs it, reused (or its failure repeated) by the others. An embedded
 * model (`embedded` = its synthesized bytes, else NULL) is written beside it first, as
 * <stem>_<imgsz>.fp32.onnx, since quantize reads a file.
 */
static const struct cmp_quant *quantized(struct cmp_ctx *cc, const struct eb_compare_row *row,
                                         const uint8_t *embedded, size_t len)
{
    size_t m = 0, k = 0;
    while (m + 1 < cc->n_models && strcmp(cc->models[m], row->model) != 0)
        m++;
    while (k + 1 < cc->n_imgsz && cc->imgsz[k] != row->imgsz)
        k++;
    struct cmp_quant *q = &cc->quant[m * cc->n_imgsz + k];
    if (q->state != 0)
        return q;
    q->state = -1;
    char stem[300], other[300], dir[4112], src[4480];
    model_stem(row->model, stem, sizeof(stem));
    for (size_t j = 0; j < m; j++) {
        model_stem(cc->models[j], other, sizeof(other));
        if (strcmp(other, stem) == 0) { /* two models of one file name in other folders */
            snprintf(stem + strlen(stem), sizeof(stem) - strlen(stem), "-%zu", m + 1);
            break;
        }
    }
    struct eb_diag d = {0};
    snprintf(dir, sizeof(dir), "%s/quantized", cc->dir);
    snprintf(q->path, sizeof(q->path), "%s/%s_%d.int8.onnx", dir, stem, row->imgsz);
    enum eb_status st = eb_run_mkdir_p(dir, "--out", &d);
    const char *from = row->model;
    if (st == EB_OK && embedded != NULL) {
        snprintf(src, sizeof(src), "%s/%s_%d.fp32.onnx", dir, stem, row->imgsz);
        st = write_bytes(src, embedded, len, &d);
        from = src;
    }
    if (st == EB_OK) {
        struct eb_quantize_request r;
        eb_quantize_request_default(&r);
        r.model = from;
        r.calib = cc->o.calib;
        r.out = q->path;
        r.imgsz = row->imgsz;
        r.threads = cc->cfg.threads;
        if (cc->calib_images > 0)
            r.images = cc->calib_images;
        const struct eb_quantize_env env = {.stop = cc->env->stop,
                                            .version = cc->env->version,
                                            .out = NULL,
                                            .err = cc->cfg.quiet ? NULL : cc->env->err};
        struct eb_quantize_result res;
        st = eb_quantize(&r, &env, &res, &d);
        q->n_images = res.n_images;
    }
    if (st != EB_OK) {
        snprintf(q->msg, sizeof(q->msg), "--calib: %.490s", d.msg);
        return q;
    }
    q->state = 1;
    return q;
}

/* Any heavy op of the model computes in int8 (its graph says so). */
static int has_int8(const struct eb_model_precision_info *p)
{
    return p->ops[EB_MODEL_PRECISION_INT8_DYNAMIC] > 0 || p->ops[EB_MODEL_PRECISION_INT8_QDQ] > 0 ||
           p->ops[EB_MODEL_PRECISION_INT8_STATIC] > 0;
}

/*
 * Why the row cannot measure the precision it names on this model (read from its graph), or
 * NULL when it can. `precision` indexes k_precisions.
 */
static const char *precision_mismatch(int precision, int backend,
                                      const struct eb_model_precision_info *p, char *buf,
                                      size_t size)
{
    const char *name = eb_model_precision_name(p->kind);
    if (precision == EB_CONFIG_PRECISION_INT8 && !has_int8(p)) {
        snprintf(buf, size,
                 "int8 needs an int8 model (QDQ or dynamic quantisation); this model is %s "
                 "(read from its graph), so quantize it first (edgebench quantize) or give "
                 "compare --calib DIR",
                 name);
        return buf;
    }
    if (precision != EB_CONFIG_PRECISION_INT8 &&
        (p->kind == EB_MODEL_PRECISION_INT8_DYNAMIC || p->kind == EB_MODEL_PRECISION_INT8_STATIC)) {
        /* Its integer ops are the graph's own: no backend runs them in float. */
        snprintf(buf, size,
                 "this model is %s (%s in its graph): every backend computes it in int8, not in "
                 "%s; measure it with --precisions int8",
                 name,
                 p->kind == EB_MODEL_PRECISION_INT8_DYNAMIC
                     ? "ConvInteger/MatMulInteger after DynamicQuantizeLinear"
                     : "QLinearConv/QLinearMatMul or integer convs",
                 k_precisions[precision]);
        return buf;
    }
    if (precision == EB_CONFIG_PRECISION_FP32 && backend == EB_BACKEND_CHOICE_ORT &&
        p->kind == EB_MODEL_PRECISION_INT8_QDQ) {
        /* The native engine runs a QDQ graph's fake quantisation in float (--qdq float); ONNX
         * Runtime fuses it into int8 kernels, so its row would be int8 under another name. */
        snprintf(buf, size,
                 "ONNX Runtime runs this QDQ-quantized model with its int8 kernels, not in fp32; "
                 "see its int8 row");
        return buf;
    }
    return NULL;
}

/*
 * COCO mAP50-95 of the prepared slot on the dataset, as `edgebench val` and `run --data` score
 * it (harness/pipeline/accuracy.h): every image once through the core at val's confidence threshold,
 * the model's classes mapped by name; the detections go to detections_<row>.json in the sweep's
 * folder. The slot's threshold is restored afterwards.
 */
static enum eb_status score_map(struct cmp_ctx *cc, size_t row, struct eb_slot *s, double *map_out,
                                struct eb_diag *diag)
{
    size_t n_coco = 0;
    const char *const *coco = eb_model_coco_names(&n_coco);
    const struct eb_dataset_options dopt = {.default_names = coco, .n_default_names = n_coco};
    struct eb_dataset *ds = NULL;
    struct eb_accuracy *acc = NULL;
    struct eb_accuracy_result *res = NULL;
    const float conf = s->params.conf;
    enum eb_status st = eb_dataset_load(cc->o.data, &dopt, &ds, diag);
    if (st == EB_OK)
        st = eb_accuracy_create_from(ds, cc->o.data, NULL, &acc, diag); /* takes ds */
    if (st == EB_OK)
        st =
            eb_accuracy_bind(acc, s->info.class_names, s->info.n_class_names, s->num_classes, diag);
    if (st == EB_OK) {
        eb_accuracy_reset(acc);
        s->params.conf = strtof(EB_VAL_CONF_DEFAULT, NULL);
    }
    /* Every image once through the core, as val and run --data score them. */
    if (st == EB_OK && eb_slot_use_dataset(s, acc, cc->o.data, s->params.conf) != EB_OK)
        st = eb_diag_fail_advise(diag, s->diag.status, s->diag.advice, "%s", s->diag.msg);
    if (st == EB_OK) {
        eb_pipeline_run(&s, 1, cc->env->stop, NULL);
        if (atomic_load_explicit(cc->env->stop, memory_order_relaxed))
            st = eb_diag_fail(diag, EB_ERR_CANCELLED, "interrupted");
        else if (s->status == EB_SLOT_FAILED)
            st = eb_diag_fail_advise(diag, s->diag.status, s->diag.advice, "%s", s->diag.msg);
    }
    s->params.conf = conf;
    s->setup.accuracy = NULL; /* destroyed below; the slot is not run again */
    s->setup.files = NULL;
    char name[64], path[4200];
    snprintf(name, sizeof(name), "detections_%zu.json", row + 1);
    snprintf(path, sizeof(path), "%s/%s", cc->dir, name);
    if (st == EB_OK)
        st = eb_accuracy_finish(acc, path, name, strtod(EB_VAL_CONF_DEFAULT, NULL), 1, &res, diag);
    if (st == EB_OK && res->detections_error[0] != '\0')
        st = eb_diag_fail(diag, EB_ERR_IO, "%s", res->detections_error);
    if (st == EB_OK)
        *map_out = res->map50_95;
    eb_accuracy_result_destroy(res);
    eb_accuracy_destroy(acc);
    return st;
}

/* Appends the row's run to the history database as kind "sweep", with its mAP50-95 (NAN
 * without --data). Never fails the row. */
static void record_row(struct cmp_ctx *cc, const struct eb_run_result *res,
                       const struct eb_config *cfg, const char *ort_version, double map50_95)
{
    if (cc->db == NULL)
        return;
    struct eb_history_run *rec = calloc(1, sizeof(*rec));
    struct eb_diag d = {0};
    struct eb_env_facts facts;
    eb_report_env_facts(&facts);
    int64_t id = 0;
    enum eb_status st = rec == NULL ? eb_diag_fail(&d, EB_ERR_NOMEM, "out of memory")
                                    : eb_history_from_result(res, cfg, &facts, cc->env->version,
                                                             ort_version, rec, &d);
    if (st == EB_OK) {
        snprintf(rec->kind, sizeof(rec->kind), "sweep");
        rec->slots[0].map50_95 = map50_95;
        st = eb_history_append(cc->db, rec, &id, &d);
    }
    char note[1024];
    if (st == EB_OK && eb_history_take_note(cc->db, note, sizeof(note)))
        eb_log_msg(&cc->log, eb_history_spooled(cc->db) ? EB_LOG_WARN : EB_LOG_INFO, "history: %s",
                   note);
    if (st != EB_OK)
        eb_log_msg(&cc->log, EB_LOG_WARN, "history: a sweep row was not recorded: %s", d.msg);
    if (rec != NULL)
        eb_history_run_fini(rec);
    free(rec);
}

/* Fills the row's figures from a finished slot and its judged result. */
static void row_from_result(struct eb_compare_row *row, const struct eb_run_result *res)
{
    const struct eb_slot_result *r = &res->slots[0];
    const struct eb_stat_summary *e = &r->stages[EB_STAGE_E2E];
    row->frames = r->frames_measured;
    snprintf(row->backend_ran, sizeof(row->backend_ran), "%s", r->backend);
    snprintf(row->compute_precision, sizeof(row->compute_precision), "%s", r->compute_precision);
    if (e->count > 0) {
        row->p50_ms = e->p50;
        row->p90_ms = e->p90;
        row->p99_ms = e->p99;
        if (e->p50_ci.available) {
            row->p50_lo_ms = e->p50_ci.lo;
            row->p50_hi_ms = e->p50_ci.hi;
        }
        if (e->p99_ci.available) {
            row->p99_lo_ms = e->p99_ci.lo;
            row->p99_hi_ms = e->p99_ci.hi;
        }
    }
    row->fps = r->throughput_fps;
    uint64_t mem = r->mem_peak_bytes > r->backend_device_peak_bytes ? r->mem_peak_bytes
                                                                    : r->backend_device_peak_bytes;
    row->peak_mem_mb = mem > 0 ? (double)mem / 1e6 : NAN;
    row->energy_mj = res->energy_per_frame_mj;
    snprintf(row->verdict, sizeof(row->verdict), "%s", eb_validity_verdict(&r->validity));
    size_t off = 0;
    for (int k = 0; k < r->validity.n_reasons && off < sizeof(row->verdict_reasons); k++)
        off += (size_t)snprintf(row->verdict_reasons + off, sizeof(row->verdict_reasons) - off,
                                "%s%s", k ? "; " : "", r->validity.reasons[k]);
}

/* The row's facts of the model file it runs (`len` bytes, summarized in `sum`). */
static void model_facts(struct eb_compare_row *row, const struct eb_model_summary *sum, size_t len)
{
    row->size_mb = (double)len / 1e6;
    row->params = sum->n_params;
    snprintf(row->model_precision, sizeof(row->model_precision), "%s",
             eb_model_precision_name(sum->precision.kind));
}

/* Runs one combination into its row. */
static void run_row(struct cmp_ctx *cc, struct eb_compare_row *row)
{
    struct eb_config cfg = cc->cfg;
    const int precision = choice_of(row->precision, k_precisions, 3);
    cfg.backend = choice_of(row->backend, k_backends, 3);
    cfg.device = choice_of(row->device, k_devices, 3);
    cfg.imgsz = row->imgsz;
    /* int8: the int8 path of a QDQ model (eb_run_model_setup); fp32: a QDQ model's fake
     * quantisation in float, the graph's own arithmetic, unless --qdq says otherwise. */
    cfg.precision = precision;
    if (precision == EB_CONFIG_PRECISION_FP32 && cfg.qdq == EB_ENGINE_QDQ_AUTO)
        cfg.qdq = EB_ENGINE_QDQ_FLOAT;

    struct eb_diag d = {0};
    uint8_t *bytes = NULL;
    size_t len = 0;
    struct eb_model_summary *sum = calloc(1, sizeof(*sum));
    struct eb_run_result *res = calloc(1, sizeof(*res));
    struct eb_slot *s = calloc(1, sizeof(*s));
    struct eb_sampler *sampler = NULL;
    int slot_ready = 0;
    /* The sampler's notes (no tegrastats off a Jetson...) would repeat on every row. */
    struct eb_log sampler_log = cc->log;
    sampler_log.level = EB_LOG_ERROR;
    if (sum == NULL || res == NULL || s == NULL) {
        row_fail(row, EB_COMPARE_FAILED, "out of memory");
        goto done;
    }
    enum eb_synth_arch arch = EB_SYNTH_YOLOV8;
    char scale = 'n';
    const int embedded = embedded_model(row->model, &arch, &scale) > 0;
    enum eb_status st;
    if (embedded) {
        struct eb_synth_options so = {
            .arch = arch, .scale = scale, .imgsz = row->imgsz, .num_classes = 80, .seed = 0};
        st = eb_model_synth(&so, &bytes, &len, &d);
    } else if (!is_regular_file(row->model)) {
        st = eb_diag_fail(&d, EB_ERR_IO, "model %s: no such file; give the path of an ONNX model",
                          row->model);
    } else {
        st = eb_model_read_file(row->model, &bytes, &len, &d);
    }
    if (st == EB_OK)
        st = eb_model_summarize(bytes, len, row->model, sum, &d);
    if (st != EB_OK) {
        row_fail(row, EB_COMPARE_FAILED, d.msg);
        goto done;
    }
    model_facts(row, sum, len);
    /* int8 of a float model with --calib: the model quantized first, after the checks below */
    const int quantize =
        precision == EB_CONFIG_PRECISION_INT8 && !has_int8(&sum->precision) && cc->quant != NULL;
    if (!quantize &&
        precision_mismatch(precision, cfg.backend, &sum->precision, d.msg, sizeof(d.msg))) {
        row_fail(row, EB_COMPARE_UNSUPPORTED, d.msg);
        goto done;
    }
    const struct eb_model_io *in0 = &sum->inputs[0];
    if (sum->n_inputs > 0 && in0->rank == 4 && in0->shape[2] > 0 && in0->shape[3] > 0 &&
        (in0->shape[2] != row->imgsz || in0->shape[3] != row->imgsz)) {
        /* Decided from the model's own input shape: the backends refuse or ignore --imgsz on a
         * fixed input, so the row would not measure the size it names. */
        snprintf(d.msg, sizeof(d.msg),
                 "the model has a fixed input of %lldx%lld; imgsz %d needs a model with a "
                 "dynamic input or one exported at %d",
                 (long long)in0->shape[3], (long long)in0->shape[2], row->imgsz, row->imgsz);
        row_fail(row, EB_COMPARE_UNSUPPORTED, d.msg);
        goto done;
    }
    const char *run_path = row->model; /* the file the slot runs (none: `bytes`, embedded) */
    if (quantize) {
        const struct cmp_quant *q = quantized(cc, row, embedded ? bytes : NULL, len);
        if (q->state < 0) {
            row_fail(row, EB_COMPARE_FAILED, q->msg);
            goto done;
        }
        free(bytes);
        bytes = NULL;
        st = eb_model_read_file(q->path, &bytes, &len, &d);
        if (st == EB_OK)
            st = eb_model_summarize(bytes, len, q->path, sum, &d);
        if (st != EB_OK) {
            row_fail(row, EB_COMPARE_FAILED, d.msg);
            goto done;
        }
        run_path = q->path;
        model_facts(row, sum, len);
        snprintf(row->note, sizeof(row->note),
                 "quantized by edgebench quantize from %.200s, %zu images of %.250s; ran %.450s",
                 row->model, q->n_images, cc->o.calib, q->path);
    }
    struct eb_slot_setup su;
    memset(&su, 0, sizeof(su));
    eb_run_model_setup(&cfg, &cc->log, &su);
    if (embedded && !quantize) {
        su.model_bytes = bytes;
        su.model_len = len;
    }
    su.model_path = run_path;
    su.model_label = run_path;
    su.source_text = cc->o.source ? cc->o.source : CMP_DEFAULT_SOURCE;
    su.synth_style = EB_SYNTH_RGB;
    eb_run_length_setup(&cfg, 0, &su);
    eb_budget_init_here(&su.budget, cfg.gpu_mem_limit_bytes, cc->platform.is_jetson);
    su.unified = cc->platform.is_jetson;
    su.log = &cc->log;
    su.stop = cc->env->stop;
    eb_slot_init(s, 0, &su);
    slot_ready = 1;

    eb_run_result_init(res);
    res->version = cc->env->version;
    res->config = &cfg;
    res->write_config = eb_config_echo;
    snprintf(res->mode, sizeof(res->mode), "rgb");
    snprintf(res->command_line, sizeof(res->command_line), "%s", cc->env->command_line);
    snprintf(res->output_dir, sizeof(res->output_dir), "%s", cc->dir);
    const uint64_t t0 = eb_clock_ns();
    eb_clock_iso8601(eb_clock_wall_ns(), res->started_at, sizeof(res->started_at));

    if (eb_slot_prepare(s) != EB_OK) {
        row_fail(row,
                 s->diag.status == EB_ERR_UNSUPPORTED ? EB_COMPARE_UNSUPPORTED : EB_COMPARE_FAILED,
                 s->diag.msg);
        goto done;
    }
    if (sum->flops > 0) {
        double scale_hw = 1.0;
        const struct eb_model_io *in = &sum->inputs[0];
        if (sum->n_inputs > 0 && in->rank == 4 && in->shape[2] > 0 && in->shape[3] > 0)
            scale_hw = (double)s->in_h * s->in_w / ((double)in->shape[2] * (double)in->shape[3]);
        row->gflops = sum->flops * scale_hw / 1e9;
    }
    struct eb_sampler_config sc = {.interval_ns = (uint64_t)cfg.interval_ms * 1000000ull,
                                   .tegrastats_cmd = cc->platform.is_jetson ? "tegrastats" : NULL,
                                   .is_jetson = cc->platform.is_jetson,
                                   .log = &sampler_log};
    struct eb_diag sd = {0};
    if (eb_sampler_start(&sc, &sampler, &sd) != EB_OK) {
        eb_run_result_warn(res, "system metrics unavailable: %s", sd.msg);
        sampler = NULL;
    }
    /* A failure leaves the slot FAILED with its reason. */
    const struct eb_pipeline_hooks hooks = {
        .begin = eb_sampler_mark_begin, .end = eb_sampler_mark_end, .begin_ctx = sampler};
    eb_pipeline_run(&s, 1, cc->env->stop, &hooks);
    eb_sampler_stop(sampler, &res->sys);
    sampler = NULL;
    if (s->status == EB_SLOT_FAILED) {
        eb_advice_append(&s->diag);
        row_fail(row, EB_COMPARE_FAILED, s->diag.msg);
        goto done;
    }
    eb_slot_summarize(s, &res->slots[0]);
    eb_budget_summarize(&s->setup.budget, &res->mem);
    res->mem.peak_bytes = s->mem_peak;
    res->mem.violations = s->violations;
    res->interrupt_signal = atomic_load(cc->env->stop);
    res->interrupted = res->interrupt_signal != 0;
    res->duration_s = (double)(eb_clock_ns() - t0) / 1e9;
    res->criteria.min_frames = (uint64_t)cfg.min_frames;
    res->criteria.min_duration_s = cfg.min_duration_s;
    res->criteria.max_drift_pct = cfg.max_drift_pct;
    res->criteria.max_others_cpu_pct = cfg.max_others_cpu_pct;
    res->criteria.max_cov_pct = cfg.max_cov_pct;
    res->criteria.max_drop_pct = cfg.max_drop_pct;
    eb_report_finish(res);
    row->status = EB_COMPARE_OK;
    row_from_result(row, res);
    if (cc->ds != NULL) {
        double map = NAN;
        struct eb_diag md = {0};
        if (score_map(cc, (size_t)(row - cc->rows), s, &map, &md) == EB_OK) {
            row->map50_95 = map;
        } else {
            row_fail(row, EB_COMPARE_FAILED, "");
            eb_advice_append(&md);
            snprintf(row->reason, sizeof(row->reason), "mAP on --data: %.480s", md.msg);
        }
    }
    res->exit_code = row->status == EB_COMPARE_OK ? EB_EXIT_OK : EB_EXIT_NOTHING_RAN;
    record_row(cc, res, &cfg, s->probe.version[0] ? s->probe.version : NULL, row->map50_95);
done:
    eb_sampler_stop(sampler, NULL);
    if (slot_ready)
        eb_slot_fini(s);
    if (res != NULL)
        eb_run_result_fini(res);
    free(res);
    free(s);
    free(sum);
    free(bytes);
}

typedef void (*write_fn)(const struct cmp_ctx *cc, FILE *fp, const void *arg);

/* Writes cc->dir/name through a temporary file renamed into place. */
static enum eb_status write_file(const struct cmp_ctx *cc, const char *name, write_fn fn,
                                 const void *arg, struct eb_diag *diag)
{
    char path[4200], tmp[4210];
    snprintf(path, sizeof(path), "%s/%s", cc->dir, name);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *fp = fopen(tmp, "w");
    if (fp == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s", path, strerror(errno));
    fn(cc, fp, arg);
    if (eb_file_close(fp, path, diag) != EB_OK) {
        remove(tmp);
        return EB_ERR_IO;
    }
    if (rename(tmp, path) != 0) {
        remove(tmp);
        return eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s", path, strerror(errno));
    }
    return EB_OK;
}

static void w_md(const struct cmp_ctx *cc, FILE *fp, const void *arg)
{
    (void)arg;
    fprintf(fp, "# edgebench compare\n\n");
    eb_compare_write_md(cc->rows, cc->n_rows, fp);
    fprintf(fp,
            "\nLatency: end-to-end per frame (read to postprocess), ms; CI: %s. Source: %s. "
            "Command: `%s`\n",
            EB_STAT_CI_METHOD, cc->o.source ? cc->o.source : CMP_DEFAULT_SOURCE,
            cc->env->command_line);
}

static void w_csv(const struct cmp_ctx *cc, FILE *fp, const void *arg)
{
    eb_compare_write_csv(cc->rows, cc->n_rows, *(const int *)arg, fp);
}

static void w_jsonl(const struct cmp_ctx *cc, FILE *fp, const void *arg)
{
    (void)arg;
    eb_compare_write_jsonl(cc->rows, cc->n_rows, fp);
}

static void w_json(const struct cmp_ctx *cc, FILE *fp, const void *arg)
{
    (void)arg;
    struct eb_json_writer w;
    eb_json_writer_init_file(&w, fp, 1);
    eb_json_obj_begin(&w);
    eb_json_kint(&w, "schema_version", EB_COMPARE_SCHEMA_VERSION);
    eb_json_kstr(&w, "edgebench_version", cc->env->version);
    eb_json_kstr(&w, "started_at", cc->started_at);
    eb_json_kstr(&w, "command_line", cc->env->command_line);
    eb_json_kstr(&w, "source", cc->o.source ? cc->o.source : CMP_DEFAULT_SOURCE);
    eb_json_kstr(&w, "data", cc->o.data);
    eb_json_kstr(&w, "latency", "end_to_end");
    eb_json_kstr(&w, "ci_method", EB_STAT_CI_METHOD);
    eb_json_key(&w, "config");
    eb_config_write_json(&cc->cfg, &w);
    eb_json_key(&w, "rows");
    eb_json_arr_begin(&w);
    for (size_t i = 0; i < cc->n_rows; i++)
        eb_compare_write_row_json(&cc->rows[i], &w);
    eb_json_arr_end(&w);
    eb_json_obj_end(&w);
    eb_json_writer_fini(&w);
    fputc('\n', fp);
}

static void w_html(const struct cmp_ctx *cc, FILE *fp, const void *arg)
{
    (void)arg;
    if (eb_compare_write_html(cc->rows, cc->n_rows, "edgebench compare", fp) != EB_OK)
        fputs("<!-- a chart could not be drawn -->\n", fp);
}

/* Writes every output file, whatever happened to the others: each failure is one line on the
 * console; EB_ERR_IO when any failed. compare.md's absence in *md_lost. */
static enum eb_status write_outputs(struct cmp_ctx *cc, int *md_lost)
{
    struct eb_diag d = {0};
    enum eb_status st = EB_OK;
    *md_lost = 0;
    for (int k = 0; k < 4; k++) {
        static const char *const names[] = {"compare.md", "compare.json", "compare.jsonl",
                                            "compare.html"};
        static const write_fn fns[] = {w_md, w_json, w_jsonl, w_html};
        memset(&d, 0, sizeof(d));
        if (write_file(cc, names[k], fns[k], NULL, &d) != EB_OK) {
            fprintf(cc->env->err, "edgebench: error: %s\n", d.msg);
            st = EB_ERR_IO;
            *md_lost |= k == 0;
        }
    }
    for (size_t i = 0; i < cc->n_imgsz; i++) {
        size_t k = 0;
        while (k < i && cc->imgsz[k] != cc->imgsz[i])
            k++;
        if (k < i)
            continue; /* a size listed twice has one file */
        char name[64];
        snprintf(name, sizeof(name), "latency_comparative_%d.csv", cc->imgsz[i]);
        memset(&d, 0, sizeof(d));
        if (write_file(cc, name, w_csv, &cc->imgsz[i], &d) != EB_OK) {
            fprintf(cc->env->err, "edgebench: error: %s\n", d.msg);
            st = EB_ERR_IO;
        }
    }
    return st;
}

static void cmp_fini(struct cmp_ctx *cc)
{
    eb_compare_free_list(cc->models, cc->n_models);
    eb_compare_free_list(cc->backends, cc->n_backends);
    eb_compare_free_list(cc->precisions, cc->n_precisions);
    eb_compare_free_list(cc->devices, cc->n_devices);
    eb_compare_free_list(cc->imgsz_text, cc->n_imgsz);
    free(cc->imgsz);
    free(cc->quant);
    free(cc->rows);
    free(cc->o.run_argv);
    eb_dataset_destroy(cc->ds);
    eb_history_close(cc->db);
}

/* Parses, checks and expands; EB_EXIT_OK or EB_EXIT_USAGE (the line printed). */
static int setup(struct cmp_ctx *cc, int argc, char **argv, int *help)
{
    FILE *err = cc->env->err;
    struct eb_diag diag = {0};
    int code = parse_opts(argc, argv, &cc->o, help, err);
    if (code != EB_EXIT_OK || *help)
        return code;
    int run_help = 0;
    eb_config_defaults(&cc->cfg);
    if (eb_config_parse(cc->o.run_argc, cc->o.run_argv, &cc->cfg, &run_help, &cc->log, &diag) !=
        EB_OK)
        return usage(err, diag.msg);
    if (cc->cfg.prometheus != NULL) /* the live endpoint is run's (and profile's) */
        return usage(err, "--prometheus: not a compare option; use it with edgebench run");
    if (cc->cfg.verbose)
        cc->log.level = EB_LOG_DEBUG;
    if (eb_compare_split_list(cc->o.models ? cc->o.models : CMP_DEFAULT_MODELS, "--models",
                              &cc->models, &cc->n_models, &diag) != EB_OK ||
        eb_compare_split_list(cc->o.backends ? cc->o.backends : "native", "--backends",
                              &cc->backends, &cc->n_backends, &diag) != EB_OK ||
        eb_compare_split_list(cc->o.precisions ? cc->o.precisions : "fp32", "--precisions",
                              &cc->precisions, &cc->n_precisions, &diag) != EB_OK ||
        eb_compare_split_list(cc->o.imgsz ? cc->o.imgsz : CMP_DEFAULT_IMGSZ, "--imgsz",
                              &cc->imgsz_text, &cc->n_imgsz, &diag) != EB_OK ||
        eb_compare_split_list(cc->o.devices ? cc->o.devices : "cpu", "--devices", &cc->devices,
                              &cc->n_devices, &diag) != EB_OK)
        return usage(err, diag.msg);
    cc->imgsz = calloc(cc->n_imgsz, sizeof(*cc->imgsz));
    if (cc->imgsz == NULL)
        return usage(err, "out of memory");
    if ((code = check_axes(cc)) != EB_EXIT_OK || (code = check_calib(cc)) != EB_EXIT_OK)
        return code;
    struct eb_compare_axes ax = {.models = (const char *const *)cc->models,
                                 .n_models = cc->n_models,
                                 .backends = (const char *const *)cc->backends,
                                 .n_backends = cc->n_backends,
                                 .precisions = (const char *const *)cc->precisions,
                                 .n_precisions = cc->n_precisions,
                                 .imgsz = cc->imgsz,
                                 .n_imgsz = cc->n_imgsz,
                                 .devices = (const char *const *)cc->devices,
                                 .n_devices = cc->n_devices};
    if (eb_compare_expand(&ax, &cc->rows, &cc->n_rows, &diag) != EB_OK)
        return usage(err, diag.msg);
    if (cc->o.data != NULL) {
        size_t n_coco = 0;
        const char *const *coco = eb_model_coco_names(&n_coco);
        struct eb_dataset_options dopt = {.default_names = coco, .n_default_names = n_coco};
        if (eb_dataset_load(cc->o.data, &dopt, &cc->ds, &diag) != EB_OK)
            return usage(err, diag.msg);
    }
    enum eb_status st = cc->o.out != NULL ? eb_run_mkdir_p(cc->o.out, "--out", &diag)
                                          : eb_run_make_dir("runs", "compare", "--out", cc->dir,
                                                            sizeof(cc->dir), &diag);
    if (st == EB_OK && cc->o.out != NULL)
        snprintf(cc->dir, sizeof(cc->dir), "%s", cc->o.out);
    if (st != EB_OK)
        return usage(err, diag.msg);
    const int have = eb_history_path(cc->cfg.db, cc->db_path, sizeof(cc->db_path), &diag);
    if (have < 0 || (have > 0 && eb_history_open(cc->db_path, 1, &cc->db, &diag) != EB_OK)) {
        eb_log_msg(&cc->log, EB_LOG_WARN,
                   "history: the sweep is not recorded: %s (--db none switches the history off)",
                   diag.msg);
        cc->db = NULL;
    }
    return EB_EXIT_OK;
}

int eb_compare_main(int argc, char **argv, const struct eb_compare_env *env)
{
    struct cmp_ctx *cc = calloc(1, sizeof(*cc));
    if (cc == NULL)
        return usage(env->err, "out of memory");
    cc->env = env;
    cc->log = (struct eb_log){.fn = cmp_log, .ctx = env->err, .level = EB_LOG_WARN};
    int help = 0;
    int code = setup(cc, argc, argv, &help);
    if (code == EB_EXIT_OK && help) {
        eb_compare_print_help(env->out);
        goto done;
    }
    if (code != EB_EXIT_OK)
        goto done;
    eb_platform_detect(NULL, &cc->platform);
    eb_clock_iso8601(eb_clock_wall_ns(), cc->started_at, sizeof(cc->started_at));
    int interrupted = 0;
    for (size_t i = 0; i < cc->n_rows; i++) {
        struct eb_compare_row *row = &cc->rows[i];
        if (atomic_load(env->stop) != 0) {
            interrupted = 1;
            row_fail(row, EB_COMPARE_FAILED, "not run: the sweep was interrupted");
            continue;
        }
        if (!cc->cfg.quiet)
            fprintf(env->err, "compare: %zu/%zu %s %s %s %d %s\n", i + 1, cc->n_rows, row->model,
                    row->backend, row->precision, row->imgsz, row->device);
        run_row(cc, row);
        if (!cc->cfg.quiet && row->status != EB_COMPARE_OK)
            fprintf(env->err, "compare: %s: %s\n", eb_compare_status_name(row->status),
                    row->reason);
    }
    eb_compare_fill_map_delta(cc->rows, cc->n_rows);
    int md_lost = 0;
    const int lost = write_outputs(cc, &md_lost) != EB_OK;
    eb_compare_write_md(cc->rows, cc->n_rows, env->out);
    if (!md_lost)
        fprintf(env->out, "\ncompare: %s/compare.md\n", cc->dir);
    int failed = 0;
    for (size_t i = 0; i < cc->n_rows; i++)
        failed |= cc->rows[i].status == EB_COMPARE_FAILED;
    code = lost          ? EB_EXIT_WRITE_FAILED
           : interrupted ? EB_EXIT_INTERRUPTED
           : failed      ? 1
                         : EB_EXIT_OK;
done:
    cmp_fini(cc);
    free(cc);
    return code;
}
