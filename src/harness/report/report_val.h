/*
 * The pages of `edgebench val`: the per-class table a `yolo val` user reads (printed, in val.md
 * and val.html from one list of rows and one list of columns), the precision-recall curves and
 * the confusion matrix (val.html, drawn with svg_chart.h). The caller (harness/cmd/val.c) fills
 * struct eb_val_page from its evaluation; everything in it is borrowed for the call.
 *
 *     struct eb_val_page p = {.model = "m.onnx", .rows = rows, .n_rows = n, ...};
 *     eb_report_val_table(stdout, &p, EB_VAL_TABLE_TEXT);
 *     if (eb_report_val_write(dir, &p, &diag) != EB_OK) ...   // val.html and val.md
 */
#ifndef EB_REPORT_VAL_H
#define EB_REPORT_VAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "eb/diag.h"

#define EB_VAL_PR_POINTS 101 /* precision at recall 0, .01, ..., 1 */

/** One row of the table: a class, or "all" (the means). */
struct eb_val_row {
    const char *name;
    size_t images;      /* images with at least one instance */
    size_t instances;   /* ground-truth boxes */
    double p, r;        /* at the best-F1 confidence; negative = no instances ("-") */
    double map50, map;  /* mAP50 and mAP50-95; negative = no instances */
    const double *pr50; /* EB_VAL_PR_POINTS precisions at IoU .50; NULL = no curve */
};

struct eb_val_page {
    const char *version;      /* edgebench's */
    const char *model;        /* the model's path */
    const char *data;         /* the dataset's folder */
    const char *const *facts; /* n_facts "label", "value" pairs shown above the table */
    size_t n_facts;
    int interrupted;               /* the figures cover part of the dataset */
    const struct eb_val_row *rows; /* rows[0] is "all", then a row per class */
    size_t n_rows;
    double best_conf; /* the confidence of P and R */
    /* The confusion matrix: (n_cm + 1)^2 counts, row-major [predicted][true], the last row and
       column background; cm_names has n_cm class names. */
    const uint64_t *cm;
    const char *const *cm_names;
    size_t n_cm;
    double cm_conf, cm_iou;
    const char *const *images; /* n_images annotated image files (names in the folder) */
    size_t n_images;
};

enum eb_val_table_style {
    EB_VAL_TABLE_TEXT = 0, /* aligned columns for a terminal */
    EB_VAL_TABLE_MD,       /* a Markdown table */
};

/** Writes the per-class table (all first) to `fp`. */
void eb_report_val_table(FILE *fp, const struct eb_val_page *p, enum eb_val_table_style style);

/**
 * Writes val.html (facts, the table, the PR curve of all classes and one per class, the
 * confusion matrix normalised per true class over the classes that occur, the annotated images)
 * and val.md (facts and the table) into `dir`, each whatever happened to the other.
 * EB_ERR_IO naming the first file that failed; EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_report_val_write(const char *dir, const struct eb_val_page *p,
                                                struct eb_diag *diag);

#endif
