/*
 * val.html, val.md and the printed table of `edgebench val` (harness/report/report_val.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/report/report.h"
#include "harness/report/report_val.h"
#include "harness/report/svg_chart.h"

/* ------------------------------------------------------------------ the table */

enum col_kind { COL_NAME, COL_IMAGES, COL_INSTANCES, COL_P, COL_R, COL_MAP50, COL_MAP };

static const struct {
    const char *head;
    int width; /* text style */
    enum col_kind kind;
} cols[] = {
    {"Class", 20, COL_NAME},  {"Images", 7, COL_IMAGES}, {"Instances", 10, COL_INSTANCES},
    {"P", 7, COL_P},          {"R", 7, COL_R},           {"mAP50", 7, COL_MAP50},
    {"mAP50-95", 9, COL_MAP},
};

#define N_COLS (sizeof(cols) / sizeof(cols[0]))

/* The text of one cell ("-" for a figure a class without instances has not). */
static void cell(const struct eb_val_row *r, enum col_kind k, char *buf, size_t size)
{
    double v = 0;
    switch (k) {
    case COL_NAME: snprintf(buf, size, "%s", r->name ? r->name : "?"); return;
    case COL_IMAGES: snprintf(buf, size, "%zu", r->images); return;
    case COL_INSTANCES: snprintf(buf, size, "%zu", r->instances); return;
    case COL_P: v = r->p; break;
    case COL_R: v = r->r; break;
    case COL_MAP50: v = r->map50; break;
    case COL_MAP: v = r->map; break;
    }
    if (v < 0 || !isfinite(v))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.3f", v);
}

void eb_report_val_table(FILE *fp, const struct eb_val_page *p, enum eb_val_table_style style)
{
    char buf[128];
    const int md = style == EB_VAL_TABLE_MD;
    fputs(md ? "|" : " ", fp);
    for (size_t c = 0; c < N_COLS; c++)
        if (md)
            fprintf(fp, " %s |", cols[c].head);
        else
            fprintf(fp, c == 0 ? " %-*s" : " %*s", cols[c].width, cols[c].head);
    fputc('\n', fp);
    if (md) {
        fputs("|", fp);
        for (size_t c = 0; c < N_COLS; c++)
            fputs(c == 0 ? " --- |" : " ---: |", fp);
        fputc('\n', fp);
    }
    for (size_t i = 0; i < p->n_rows; i++) {
        fputs(md ? "|" : " ", fp);
        for (size_t c = 0; c < N_COLS; c++) {
            cell(&p->rows[i], cols[c].kind, buf, sizeof(buf));
            if (md) {
                fputc(' ', fp);
                for (const char *s = buf; *s; s++) /* a name with a | must not split the row */
                    fputs(*s == '|' ? "\\|" : (char[]){*s, 0}, fp);
                fputs(" |", fp);
            } else if (c == 0) {
                fprintf(fp, " %-*.*s", cols[c].width, cols[c].width, buf);
            } else {
                fprintf(fp, " %*s", cols[c].width, buf);
            }
        }
        fputc('\n', fp);
    }
}

/* ------------------------------------------------------------------ val.md */

static int md_body(FILE *fp, const void *ctx)
{
    const struct eb_val_page *p = ctx;
    fprintf(fp, "# edgebench val\n\n");
    if (p->interrupted)
        fputs("**Interrupted: the figures cover the images that ran, not the dataset.**\n\n", fp);
    for (size_t i = 0; i + 1 < 2 * p->n_facts; i += 2)
        fprintf(fp, "- **%s**: %s\n", p->facts[i], p->facts[i + 1]);
    fprintf(fp,
            "\nP and R at confidence %.3f, the best mean F1 over the classes; mAP as "
            "pycocotools.\n\n",
            p->best_conf);
    eb_report_val_table(fp, p, EB_VAL_TABLE_MD);
    fputs("\nThe precision-recall curves and the confusion matrix are in val.html.\n", fp);
    return ferror(fp);
}

/* ------------------------------------------------------------------ val.html */

/* What val.html adds to the pages' style sheet (eb_report__css). */
static const char css_val[] =
    "tbody tr.all{font-weight:bold;background:#f2f6fb}"
    ".scroll{overflow:auto;max-height:1100px;border:1px solid #ddd;background:#fff}"
    ".scroll svg.eb-chart{max-width:none}";

static void put(FILE *fp, const char *s)
{
    eb_svg_put_escaped(fp, s);
}

/* The PR curves: all classes (each thin, the mean thick), then one small chart per class. */
static int write_pr(FILE *fp, const struct eb_val_page *p, const double *rec)
{
    int bad = 0;
    size_t n = 0;
    for (size_t i = 1; i < p->n_rows; i++)
        n += p->rows[i].pr50 != NULL;
    struct eb_svg_series *s = calloc(n + 1, sizeof(*s));
    if (s == NULL)
        return 1;
    size_t k = 0;
    for (size_t i = 1; i < p->n_rows; i++)
        if (p->rows[i].pr50 != NULL)
            s[k++] = (struct eb_svg_series){
                .x = rec, .y = p->rows[i].pr50, .n = EB_VAL_PR_POINTS, .color = "#c8c8c8"};
    char name[96];
    snprintf(name, sizeof(name), "all classes, mAP50 %.3f", p->rows[0].map50);
    if (p->n_rows > 0 && p->rows[0].pr50 != NULL)
        s[k++] = (struct eb_svg_series){.name = name,
                                        .x = rec,
                                        .y = p->rows[0].pr50,
                                        .n = EB_VAL_PR_POINTS,
                                        .color = "#0072b2"};
    /* The mean drawn last (on top); the classes unnamed (grey, out of the legend). */
    const struct eb_svg_chart c = {
        .id = "chart-pr-all",
        .title = "Precision-recall at IoU 0.50",
        .subtitle = "each class grey, the mean of the classes blue (COCO's interpolated "
                    "precision; its mean is mAP50)",
        .x_label = "recall",
        .y_label = "precision",
        .width = 640,
        .height = 420,
        .x_include_zero = 1,
        .y_include_zero = 1,
        .empty_note = "no class has ground truth"};
    fputs("<div class=\"charts\"><figure>", fp);
    bad |= eb_svg_line_chart(fp, &c, s, k) != EB_OK;
    fputs("</figure></div>\n<h3>Per class</h3>\n<div class=\"charts\">", fp);
    for (size_t i = 1; i < p->n_rows; i++) {
        const struct eb_val_row *r = &p->rows[i];
        if (r->pr50 == NULL)
            continue;
        char id[48], title[160];
        snprintf(id, sizeof(id), "chart-pr-%zu", i - 1);
        snprintf(title, sizeof(title), "%.60s: AP50 %.3f", r->name ? r->name : "?", r->map50);
        const struct eb_svg_series one = {
            .x = rec, .y = r->pr50, .n = EB_VAL_PR_POINTS, .color = "#0072b2"};
        const struct eb_svg_chart cc = {.id = id,
                                        .title = title,
                                        .x_label = "recall",
                                        .y_label = "precision",
                                        .width = 260,
                                        .height = 200,
                                        .x_include_zero = 1,
                                        .y_include_zero = 1};
        fputs("<figure>", fp);
        bad |= eb_svg_line_chart(fp, &cc, &one, 1) != EB_OK;
        fputs("</figure>", fp);
    }
    fputs("</div>\n", fp);
    free(s);
    return bad;
}

/* The confusion matrix over the classes that occur (a count in their row or column), each
 * column (true class) normalised to 1, background last. */
static int write_confusion(FILE *fp, const struct eb_val_page *p)
{
    const size_t N = p->n_cm, W = N + 1;
    size_t *keep = malloc(W * sizeof(*keep));
    const char **labels = malloc(W * sizeof(*labels));
    double *v = malloc(W * W * sizeof(*v)), *cnt = malloc(W * W * sizeof(*cnt));
    int bad = 1;
    if (keep == NULL || labels == NULL || v == NULL || cnt == NULL)
        goto done;
    size_t m = 0;
    for (size_t i = 0; i < W; i++) {
        uint64_t sum = 0;
        for (size_t j = 0; j < W && i < N; j++)
            sum += p->cm[i * W + j] + p->cm[j * W + i];
        if (sum > 0 || i == N) {
            keep[m] = i;
            labels[m++] = i < N ? p->cm_names[i] : "background";
        }
    }
    for (size_t b = 0; b < m; b++) {
        double col = 0;
        for (size_t a = 0; a < m; a++)
            col += (double)p->cm[keep[a] * W + keep[b]];
        for (size_t a = 0; a < m; a++) {
            cnt[a * m + b] = (double)p->cm[keep[a] * W + keep[b]];
            v[a * m + b] = col > 0 ? cnt[a * m + b] / col : NAN;
        }
    }
    char sub[200];
    snprintf(sub, sizeof(sub),
             "%zu of %zu classes occur; detections with confidence > %g, matched at IoU > %g; "
             "each column sums to 1",
             m - 1, N, p->cm_conf, p->cm_iou);
    const struct eb_svg_chart c = {.id = "chart-confusion",
                                   .title = "Confusion matrix (normalised per true class)",
                                   .subtitle = sub,
                                   .x_label = "true",
                                   .y_label = "predicted"};
    const struct eb_svg_heatmap hm = {.row_labels = labels,
                                      .col_labels = labels,
                                      .n_rows = m,
                                      .n_cols = m,
                                      .values = v,
                                      .counts = cnt};
    fputs("<div class=\"scroll\">", fp);
    bad = eb_svg_heatmap(fp, &c, &hm) != EB_OK;
    fputs("</div>\n", fp);
done:
    free(keep);
    free(labels);
    free(v);
    free(cnt);
    return bad;
}

static int html_body(FILE *fp, const void *ctx)
{
    const struct eb_val_page *p = ctx;
    char buf[128];
    double rec[EB_VAL_PR_POINTS];
    for (int i = 0; i < EB_VAL_PR_POINTS; i++)
        rec[i] = (double)i / (EB_VAL_PR_POINTS - 1);
    eb_svg_page_begin(fp);
    fputs("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"edgebench ",
          fp);
    put(fp, p->version);
    fputs("\">\n<title>edgebench val: ", fp);
    put(fp, p->model);
    fprintf(fp, "</title>\n<style>%s%s</style>\n</head>\n<body>\n<h1>edgebench val</h1>\n",
            eb_report__css, css_val);
    if (p->interrupted)
        fputs("<p class=\"warn\">Interrupted: the figures cover the images that ran, not the "
              "dataset.</p>\n",
              fp);
    fputs("<table><tbody>\n", fp);
    for (size_t i = 0; i + 1 < 2 * p->n_facts; i += 2) {
        fputs("<tr><th>", fp);
        put(fp, p->facts[i]);
        fputs("</th><td>", fp);
        put(fp, p->facts[i + 1]);
        fputs("</td></tr>\n", fp);
    }
    fputs("</tbody></table>\n<h2>Per class</h2>\n", fp);
    fprintf(fp,
            "<p class=\"note\">P and R at confidence %.3f, where the mean F1 of the classes is "
            "best (as <code>yolo val</code>); mAP50 and mAP50-95 as pycocotools.</p>\n",
            p->best_conf);
    fputs("<table><thead><tr>", fp);
    for (size_t c = 0; c < N_COLS; c++)
        fprintf(fp, "<th>%s</th>", cols[c].head);
    fputs("</tr></thead><tbody>\n", fp);
    for (size_t i = 0; i < p->n_rows; i++) {
        fputs(i == 0 ? "<tr class=\"all\">" : "<tr>", fp);
        for (size_t c = 0; c < N_COLS; c++) {
            cell(&p->rows[i], cols[c].kind, buf, sizeof(buf));
            fputs(c == 0 ? "<td>" : "<td class=\"n\">", fp);
            put(fp, buf);
            fputs("</td>", fp);
        }
        fputs("</tr>\n", fp);
    }
    fputs("</tbody></table>\n<h2>Precision-recall curves</h2>\n", fp);
    int bad = write_pr(fp, p, rec);
    fputs("<h2>Confusion matrix</h2>\n", fp);
    bad |= write_confusion(fp, p);
    if (p->n_images > 0) {
        /* Files next to the page, named, not shown: the page fetches nothing (its policy). */
        fputs("<h2>Annotated images</h2>\n<p class=\"note\">In this folder:", fp);
        for (size_t i = 0; i < p->n_images; i++) {
            fputs(i ? ", <code>" : " <code>", fp);
            put(fp, p->images[i]);
            fputs("</code>", fp);
        }
        fputs("</p>\n", fp);
    }
    fputs("</body>\n</html>\n", fp);
    return bad || ferror(fp);
}

enum eb_status eb_report_val_write(const char *dir, const struct eb_val_page *p,
                                   struct eb_diag *diag)
{
    struct eb_diag hd = {0}, md = {0};
    enum eb_status sh = eb_report__write_atomic(dir, "val.html", html_body, p, &hd);
    enum eb_status sm = eb_report__write_atomic(dir, "val.md", md_body, p, &md);
    if (sh != EB_OK)
        return eb_diag_fail(diag, sh, "%s", hd.msg);
    if (sm != EB_OK)
        return eb_diag_fail(diag, sm, "%s", md.msg);
    return EB_OK;
}
