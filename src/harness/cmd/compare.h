/*
 * `edgebench compare`: a comparison sweep. Every combination of the listed models, backends,
 * precisions, input sizes and devices (the cartesian product, models outermost and devices
 * innermost, as llama-bench expands its parameters) runs in-process through a slot exactly as
 * `edgebench run --mode rgb` runs one, and becomes one row. A combination that cannot run is a
 * row too: `unsupported` when a backend or the model says it cannot do it (its own probe or
 * load error, EB_ERR_UNSUPPORTED), `failed` with the reason otherwise; the sweep goes on.
 *
 * Every output (compare.md, latency_comparative_<imgsz>.csv, compare.json, compare.jsonl and
 * compare.html) is rendered from one array of struct eb_compare_row, so they always agree.
 *
 *     struct eb_compare_env env = {.stop = &stop, .command_line = line, .version = "1.0",
 *                                  .out = stdout, .err = stderr};
 *     return eb_compare_main(argc - 2, argv + 2, &env);
 */
#ifndef EB_COMPARE_H
#define EB_COMPARE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "eb/diag.h"
#include "eb/json.h"

/** The schema version of compare.json / compare.jsonl (docs/report-schema.md). */
#define EB_COMPARE_SCHEMA_VERSION 2

/* Largest sweep accepted (rows); a longer product is bad input. */
#define EB_COMPARE_MAX_ROWS 4096

enum eb_compare_status {
    EB_COMPARE_PENDING = 0, /* expanded, not run yet */
    EB_COMPARE_OK,          /* measured */
    EB_COMPARE_UNSUPPORTED, /* the backend, device or model cannot do this combination */
    EB_COMPARE_FAILED,      /* tried and failed; reason says why */
};
/** "pending", "ok", "unsupported", "failed". */
const char *eb_compare_status_name(enum eb_compare_status s);

/**
 * One combination and what it measured. Figures that were not measured are NAN (null in JSON,
 * empty in CSV, "-" in Markdown); counts that are unknown are 0.
 */
struct eb_compare_row {
    enum eb_compare_status status;
    char reason[EB_DIAG_MSG_MAX];  /* "" when ok */
    char model[1024];              /* as given in --models, or "embedded:yolov8n" */
    char backend[16];              /* "native", "ort", "auto" */
    char precision[8];             /* "fp32", "fp16", "int8" */
    int imgsz;                     /* requested input size */
    char device[16];               /* "cpu", "cuda", "tensorrt" */
    char backend_ran[32];          /* the backend that ran ("" when none did) */
    char model_precision[16];      /* read from the model's graph: "fp32", "int8-dynamic", ...
                                      ("" when the model could not be read) */
    char compute_precision[8];     /* what the backend computed in ("" when nothing ran) */
    double size_mb;                /* model bytes / 1e6 */
    uint64_t params;               /* parameters (initializer elements used as weights) */
    double gflops;                 /* 1e9 FLOPs per frame at the input size that ran */
    double map50_95;               /* with --data; NAN otherwise */
    double map_delta;              /* map50_95 minus that of the fp32 row of the same model,
                                      backend, imgsz and device (eb_compare_fill_map_delta);
                                      NAN when there is none with a mAP */
    uint64_t frames;               /* measured frames */
    double p50_ms, p90_ms, p99_ms; /* end-to-end latency */
    double p50_lo_ms, p50_hi_ms;   /* 95% CI of p50 (NAN when n is too small) */
    double p99_lo_ms, p99_hi_ms;   /* 95% CI of p99 */
    double fps;                    /* measured frames / measured wall time */
    double peak_mem_mb;            /* peak of the monitored memory figure, 1e6 bytes */
    double energy_mj;              /* energy per frame (NVML or tegrastats); NAN not measured */
    char verdict[16];              /* "VALID", "INVALID"; "" when not judged */
    char verdict_reasons[512];     /* "; "-joined */
    char note[1024];               /* what the row ran other than as asked (an int8 model made
                                      by --calib); "" when nothing */
};

/** The axes of a sweep; each list holds borrowed strings (imgsz: values). */
struct eb_compare_axes {
    const char *const *models;
    size_t n_models;
    const char *const *backends;
    size_t n_backends;
    const char *const *precisions;
    size_t n_precisions;
    const int *imgsz;
    size_t n_imgsz;
    const char *const *devices;
    size_t n_devices;
};

/**
 * Expands the axes into their cartesian product: models outermost, then backends, precisions,
 * input sizes, devices innermost. `*rows_out` (malloc'd, caller frees) gets *n_out rows with
 * the keys set, every figure NAN and status PENDING. EB_ERR_INVALID_ARG when an axis is empty
 * or the product exceeds EB_COMPARE_MAX_ROWS; EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_compare_expand(const struct eb_compare_axes *axes,
                                              struct eb_compare_row **rows_out, size_t *n_out,
                                              struct eb_diag *diag);

/** Sets every figure of `row` to "not measured" (NAN / 0) and its status to PENDING. */
void eb_compare_row_clear_figures(struct eb_compare_row *row);

/**
 * Sets every row's map_delta: its map50_95 minus the map50_95 of the row with precision
 * "fp32", status ok and the same model, backend, imgsz and device (for an int8 row that
 * compare --calib quantized, the fp32 row of the float model it was made from, which carries
 * the same model name); NAN when the row has no mAP or there is no such fp32 row with one.
 */
void eb_compare_fill_map_delta(struct eb_compare_row *rows, size_t n);

/**
 * Splits a comma-separated list: `*items_out` (malloc'd array of malloc'd strings; free with
 * eb_compare_free_list) gets the *n_out non-empty items, trimmed of spaces. EB_ERR_INVALID_ARG
 * naming `flag` when the list is empty; EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_compare_split_list(const char *text, const char *flag,
                                                  char ***items_out, size_t *n_out,
                                                  struct eb_diag *diag);
/** Frees a list from eb_compare_split_list (NULL accepted). */
void eb_compare_free_list(char **items, size_t n);

/** Writes the Markdown table (header, separator, one line per row, in row order). */
void eb_compare_write_md(const struct eb_compare_row *rows, size_t n, FILE *fp);

/**
 * Writes the CSV table (RFC 4180: a header line, then one line per row whose imgsz is `imgsz`,
 * or every row when `imgsz` is 0; fields holding a comma, quote or line break are quoted and
 * their quotes doubled). Not-measured figures are empty fields.
 */
void eb_compare_write_csv(const struct eb_compare_row *rows, size_t n, int imgsz, FILE *fp);

/** Writes one row as a JSON object (the same members, order and values as a CSV line). */
void eb_compare_write_row_json(const struct eb_compare_row *row, struct eb_json_writer *w);

/** Writes compare.jsonl: one compact JSON object per row, one per line. */
void eb_compare_write_jsonl(const struct eb_compare_row *rows, size_t n, FILE *fp);

/**
 * Writes compare.html: the table, a latency-vs-mAP scatter (rows with a mAP) and grouped bars
 * of p50 latency per configuration, drawn by svg_chart.h; one self-contained file. `title` is
 * escaped. EB_ERR_IO when writing failed.
 */
EB_NODISCARD enum eb_status eb_compare_write_html(const struct eb_compare_row *rows, size_t n,
                                                  const char *title, FILE *fp);

struct eb_compare_env {
    atomic_int *stop;         /* non-zero (a signal) stops after the current row; borrowed */
    const char *command_line; /* borrowed */
    const char *version;      /* borrowed */
    FILE *out;                /* the Markdown table and the output folder */
    FILE *err;                /* errors, warnings and progress */
};

/**
 * Runs `edgebench compare` with its arguments (argv[0] is the first option). Returns 0 when
 * every row ran or was unsupported, 1 when some row failed, 2 for bad input (an unknown
 * backend, precision or device name, a bad input size, no model file that exists, an unknown
 * option) with one line on env->err naming the thing and what to do, 130 when interrupted.
 */
int eb_compare_main(int argc, char **argv, const struct eb_compare_env *env);

/** Prints `edgebench compare --help`. */
void eb_compare_print_help(FILE *fp);

#endif
