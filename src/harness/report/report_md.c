/*
 * report.md: the report for people. Rendered from the same struct eb_run_result as report.json
 * (and with the same unit conversions), so the two never disagree. Section order is part of
 * the contract (docs/report-schema.md): the Memory Safety Summary always comes first.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eb/utf8.h"
#include "harness/report/report.h"
#include "harness/report/report_facts.h"

#define MAX_CLASS_ROWS 15
#define MAX_OP_ROWS    12

static double bytes_gb(uint64_t b)
{
    return (double)b / EB_REPORT_BYTES_PER_GB;
}

/* Markdown's characters that could start markup (emphasis, code, links, HTML, entities) or end
 * a table cell: a backslash before each keeps it a character (CommonMark escapes). */
#define MD_ACTIVE "\\`*[]<>&|"

/*
 * Writes a string that may come from outside (model metadata, paths, messages) inside a table
 * cell or a line, so that it shows as the text it is: Markdown's active characters escaped
 * (MD_ACTIVE; in a code span, where escapes do not work, only '|', which would split the
 * cell), line breaks and tabs as spaces, other control characters (terminal escape codes) and
 * invalid UTF-8 as U+FFFD; empty or NULL strings become an em dash.
 */
void eb_report__md_text(FILE *fp, const char *s, int code)
{
    if (s == NULL || s[0] == '\0') {
        fputs("—", fp);
        return;
    }
    const unsigned char *p = (const unsigned char *)s;
    while (*p != '\0') {
        const unsigned c = *p;
        if (c >= 0x80) {
            const size_t len = eb_utf8_seq_len(p);
            if (len == 0) {
                fputs("\xEF\xBF\xBD", fp);
                p++;
            } else {
                fwrite(p, 1, len, fp);
                p += len;
            }
            continue;
        }
        if (c == '\n' || c == '\r' || c == '\t')
            fputc(' ', fp);
        else if (c < 0x20 || c == 0x7F)
            fputs("\xEF\xBF\xBD", fp);
        else if (c == '`' && code)
            fputc('\'', fp); /* a backtick would end the span */
        else if ((code && c == '|') || (!code && strchr(MD_ACTIVE, (int)c) != NULL))
            fprintf(fp, "\\%c", (int)c);
        else
            fputc((int)c, fp);
        p++;
    }
}

static void put_text(FILE *fp, const char *s)
{
    eb_report__md_text(fp, s, 0);
}

/* A fact's value: a status in bold, an empty value as an em dash. */
static void put_value(FILE *fp, const struct eb_fact *f)
{
    int strong = (f->flags & (EB_FACT_FLAG_GOOD | EB_FACT_FLAG_BAD)) != 0;
    fputs(strong ? "**" : "", fp);
    put_text(fp, f->value);
    fputs(strong ? "**" : "", fp);
}

static void md_alert(FILE *fp, const struct eb_fact *f)
{
    fputs("**", fp);
    put_text(fp, f->label);
    fputs(":** ", fp);
    put_text(fp, f->value);
    fputs("\n\n", fp);
}

static void md_table_begin(FILE *fp, const struct eb_fact *f)
{
    if (f->group != NULL)
        fprintf(fp, "### %s\n\n", f->group);
    fputs("| Item | Value |\n|---|---|\n", fp);
}

static void md_row(FILE *fp, const struct eb_fact *f)
{
    fputs("| ", fp);
    put_text(fp, f->label);
    fputs(" | ", fp);
    put_value(fp, f);
    fputs(" |\n", fp);
}

static void md_table_end(FILE *fp)
{
    fputs("\n", fp);
}

/* A section's facts: alerts as bold lines, the rest as two-column tables. */
static void write_facts(const struct eb_fact_list *l, enum eb_fact_section sec, int slot, FILE *fp)
{
    static const struct eb_fact_printer md = {
        .alert = md_alert, .table_begin = md_table_begin, .row = md_row, .table_end = md_table_end};
    eb_report_facts_print(l, sec, slot, &md, fp);
}

/* The run's verdict right under the title: a quoted block with every reason. */
static void write_verdict(const struct eb_run_result *r, FILE *fp)
{
    const struct eb_validity *v = &r->validity;
    if (!v->evaluated)
        return;
    char what[256];
    fprintf(fp, "> **Verdict: %s**", eb_validity_verdict(v));
    fprintf(fp, " (criteria: %s)\n", eb_report__criteria(r, what, sizeof(what)));
    for (int i = 0; i < v->n_reasons && i < EB_VALIDITY_MAX_REASONS; i++) {
        fputs("> - ", fp);
        put_text(fp, v->reasons[i]);
        fputs("\n", fp);
    }
    fputs("\n", fp);
}

static void write_title(const struct eb_run_result *r, const struct eb_fact_list *l, FILE *fp)
{
    fputs("# edgebench report: ", fp);
    put_text(fp, r->mode[0] != '\0' ? r->mode : "unknown");
    fputs(" mode, ", fp);
    put_text(fp, r->started_at[0] != '\0' ? r->started_at : "unknown date");
    fputs("\n\n", fp);
    if (r->interrupted) {
        const char *sig = eb_report__signal_name(r->interrupt_signal);
        if (sig != NULL)
            fprintf(fp, "> **Interrupted** (%s): results cover what ran.\n\n", sig);
        else
            fputs("> **Interrupted**: results cover what ran.\n\n", fp);
    }
    write_verdict(r, fp);
    /* "edgebench 0.1.0 · schema 1 · duration 12.5 s · exit code 0 · command `...`" */
    int first = 1;
    for (size_t i = eb_report_facts_next(l, 0, EB_FACT_SECTION_RUN, -1); i < l->n;
         i = eb_report_facts_next(l, i + 1, EB_FACT_SECTION_RUN, -1)) {
        const struct eb_fact *f = &l->items[i];
        const int code = (f->flags & EB_FACT_FLAG_CODE) != 0;
        fprintf(fp, "%s%s %s", first ? "" : " · ", f->label, code ? "`" : "");
        eb_report__md_text(fp, f->value, code);
        fputs(code ? "`" : "", fp);
        first = 0;
    }
    fputs("\n\n", fp);
}

static void write_memory(const struct eb_run_result *r, const struct eb_fact_list *l, FILE *fp)
{
    const struct eb_mem_summary *m = &r->mem;
    char b1[32], b2[32];
    const char *overall = eb_mem_overall(m);

    fputs("## Memory Safety Summary\n\n", fp);
    fprintf(fp, "**%s**: %llu violation%s of the %s GB limit.\n\n", overall,
            (unsigned long long)m->violations, m->violations == 1 ? "" : "s",
            eb_report__fmtd(b1, sizeof(b1), m->limit_gb, 2));
    write_facts(l, EB_FACT_SECTION_MEMORY, -1, fp);

    int order[EB_NUM_SLOTS];
    eb_report__slots_by_closeness(r, order);
    fputs("Slots ranked by closeness to the limit:\n\n", fp);
    fputs("| Rank | Slot | Status | Peak GB | % of limit | Violations |\n", fp);
    fputs("|---:|---|---|---:|---:|---:|\n", fp);
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *s = &r->slots[order[i]];
        double p = bytes_gb(s->mem_peak_bytes);
        fprintf(fp, "| %d | %d: %s | %s | %s | %s | %llu |\n", i + 1, s->index, s->name,
                eb_slot_status_name(s->status), eb_report__fmtd(b1, sizeof(b1), p, 2),
                eb_report__fmtd(b2, sizeof(b2), m->limit_gb > 0 ? 100.0 * p / m->limit_gb : NAN, 1),
                (unsigned long long)s->violations);
    }
    fputs("\n", fp);
}

static void latency_header(FILE *fp, const char *first)
{
    fprintf(fp,
            "| %s | n | Mean ± std | CoV %% | Min | p50 | p50 95%% CI | p90 | p95 | p99 | "
            "p99 95%% CI | Max | FPS |\n",
            first);
    fputs("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", fp);
}

static void latency_row(FILE *fp, const char *label, const struct eb_stat_summary *s)
{
    char b[12][48];
    fprintf(fp, "| %s | %llu | %s ± %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
            label, (unsigned long long)s->count, eb_report__fmtd(b[0], sizeof(b[0]), s->mean, 3),
            eb_report__fmtd(b[1], sizeof(b[1]), s->std, 3),
            eb_report__fmtd(b[2], sizeof(b[2]), 100.0 * s->cov, 2),
            eb_report__fmtd(b[3], sizeof(b[3]), s->min, 3),
            eb_report__fmtd(b[4], sizeof(b[4]), s->p50, 3),
            eb_report__fmt_ci(b[5], sizeof(b[5]), &s->p50_ci),
            eb_report__fmtd(b[6], sizeof(b[6]), s->p90, 3),
            eb_report__fmtd(b[7], sizeof(b[7]), s->p95, 3),
            eb_report__fmtd(b[8], sizeof(b[8]), s->p99, 3),
            eb_report__fmt_ci(b[9], sizeof(b[9]), &s->p99_ci),
            eb_report__fmtd(b[10], sizeof(b[10]), s->max, 3),
            eb_report__fmtd(b[11], sizeof(b[11]), s->fps, 1));
}

/* Under every latency table: how the intervals are made and when they are missing. */
static void latency_note(FILE *fp)
{
    fputs("95% CIs: " EB_STAT_CI_METHOD " (exact binomial ranks of the order statistics, "
          "distribution-free); n/a where the sample is too small for one (p50 needs n ≥ 6, "
          "p99 n ≥ 368).\n\n",
          fp);
}

static void write_detections(const struct eb_slot_result *s, FILE *fp)
{
    if (s->classes == NULL || s->n_classes == 0)
        return;
    fputs("### Detections by class\n\n", fp);
    struct eb_class_count *sorted = eb_report__sorted_classes(s);
    const struct eb_class_count *list = sorted != NULL ? sorted : s->classes;
    size_t n = s->n_classes < MAX_CLASS_ROWS ? s->n_classes : MAX_CLASS_ROWS;
    if (s->n_classes > MAX_CLASS_ROWS)
        fprintf(fp, "Top %d classes of %zu:\n\n", MAX_CLASS_ROWS, s->n_classes);
    fputs("| Class | Name | Count |\n|---:|---|---:|\n", fp);
    for (size_t i = 0; i < n; i++) {
        fprintf(fp, "| %d | ", list[i].cls);
        put_text(fp, list[i].name);
        fprintf(fp, " | %llu |\n", (unsigned long long)list[i].count);
    }
    fputs("\n", fp);
    free(sorted);
}

/* "### Accuracy" (--data): the COCO metrics of the measured frames and one row per class. */
static void write_accuracy(const struct eb_fact_list *l, const struct eb_slot_result *s, FILE *fp)
{
    const struct eb_accuracy_result *a = s->accuracy;
    char b[2][32];
    if (a == NULL)
        return;
    fputs("### Accuracy\n\n", fp);
    fputs("COCO bbox metrics (pycocotools' definitions, as `edgebench val`) of the measured "
          "frames.\n\n",
          fp);
    write_facts(l, EB_FACT_SECTION_ACCURACY, s->index, fp);
    fputs("| Class | Boxes | Detections | AP50-95 | AP50 |\n|---|---:|---:|---:|---:|\n", fp);
    for (size_t i = 0; i < a->n_per_class; i++) {
        const struct eb_accuracy_class *c = &a->per_class[i];
        if (c->ap < 0)
            continue;
        fputs("| ", fp);
        put_text(fp, c->name);
        fprintf(fp, " | %llu | %llu | %s | %s |\n", (unsigned long long)c->gt,
                (unsigned long long)c->dets, eb_report__fmt_ap(b[0], 32, c->ap),
                eb_report__fmt_ap(b[1], 32, c->ap50));
    }
    fputs("\n", fp);
}

/* "Per-operator profile": top op types and top nodes (the JSON has every op type). */
static void write_profile(const struct eb_fact_list *l, const struct eb_slot_result *s, FILE *fp)
{
    const struct eb_profile_result *p = &s->profile;
    char b[5][32];
    if (!p->available) {
        if (s->profile_note[0] != '\0') {
            fputs("### Per-operator profile\n\n> **Warning:** ", fp);
            put_text(fp, s->profile_note);
            fputs("\n\n", fp);
        }
        return;
    }
    fputs("### Per-operator profile\n\n", fp);
    write_facts(l, EB_FACT_SECTION_PROFILE, s->index, fp);
    size_t n = p->n_ops < MAX_OP_ROWS ? p->n_ops : MAX_OP_ROWS;
    if (p->n_ops > MAX_OP_ROWS)
        fprintf(fp, "Top %d op types of %zu:\n\n", MAX_OP_ROWS, p->n_ops);
    fputs("| Op type | Nodes | ms/frame | % | GFLOP/frame | GFLOP/s | MFU % |\n", fp);
    fputs("|---|---:|---:|---:|---:|---:|---:|\n", fp);
    for (size_t i = 0; i < n; i++) {
        const struct eb_op_profile *o = &p->ops[i];
        fputs("| ", fp);
        put_text(fp, o->op);
        fprintf(fp, " | %u | %s | %s | %s | %s | %s |\n", o->nodes,
                eb_report__fmtd(b[0], sizeof(b[0]), o->ms_per_frame, 3),
                eb_report__fmtd(b[1], sizeof(b[1]), o->pct, 1),
                eb_report__fmtd(b[2], sizeof(b[2]), o->gflops_per_frame, 3),
                eb_report__fmtd(b[3], sizeof(b[3]), o->gflops_per_s, 1),
                eb_report__fmtd(b[4], sizeof(b[4]), o->mfu_pct, 2));
    }
    fputs("\n", fp);
    fprintf(fp, "Top %zu nodes by time:\n\n", p->n_top);
    fputs("| Node | Op | Fused | ms/frame | % | GFLOP/s | MFU % |\n", fp);
    fputs("|---|---|---|---:|---:|---:|---:|\n", fp);
    for (size_t i = 0; i < p->n_top && i < EB_PROFILE_TOP_NODES; i++) {
        const struct eb_node_profile *t = &p->top[i];
        fputs("| ", fp);
        put_text(fp, t->name);
        fputs(" | ", fp);
        put_text(fp, t->op);
        fputs(" | ", fp);
        put_text(fp, t->fused);
        fprintf(fp, " | %s | %s | %s | %s |\n",
                eb_report__fmtd(b[0], sizeof(b[0]), t->ms_per_frame, 3),
                eb_report__fmtd(b[1], sizeof(b[1]), t->pct, 1),
                eb_report__fmtd(b[2], sizeof(b[2]), t->gflops_per_s, 1),
                eb_report__fmtd(b[3], sizeof(b[3]), t->mfu_pct, 2));
    }
    fputs("\n", fp);
}

static void write_slot(const struct eb_fact_list *l, const struct eb_slot_result *s, FILE *fp)
{
    fprintf(fp, "## Slot %d: %s\n\n", s->index, s->name);
    fprintf(fp, "**Status: %s**", eb_slot_status_name(s->status));
    if (s->status != EB_SLOT_OK) {
        fputs(" — reason: ", fp);
        put_text(fp, s->message[0] != '\0'          ? s->message
                     : s->status == EB_SLOT_SKIPPED ? "no model given for this slot"
                                                    : "unknown");
        if (s->status == EB_SLOT_FAILED && s->error != EB_OK)
            fprintf(fp, " (error: %s)", eb_status_name(s->error));
    }
    fputs("\n\n", fp);
    if (s->validity.evaluated) {
        fprintf(fp, "**Verdict: %s**", eb_validity_verdict(&s->validity));
        for (int i = 0; i < s->validity.n_reasons && i < EB_VALIDITY_MAX_REASONS; i++) {
            fputs(i == 0 ? " — " : "; ", fp);
            put_text(fp, s->validity.reasons[i]);
        }
        fputs("\n\n", fp);
    }
    if (s->status == EB_SLOT_SKIPPED && s->model_path[0] == '\0')
        return;

    write_facts(l, EB_FACT_SECTION_SLOT, s->index, fp);
    if (s->status != EB_SLOT_OK)
        return;

    fputs("### Latency (ms)\n\n", fp);
    latency_header(fp, "Stage");
    for (int st = 0; st < EB_STAGE_COUNT; st++)
        latency_row(fp, eb_stage_name((enum eb_stage)st), &s->stages[st]);
    fputs("\n", fp);
    latency_note(fp);

    write_detections(s, fp);
    write_accuracy(l, s, fp);
    write_profile(l, s, fp);

    if (s->has_solo) {
        fputs("### Solo baseline\n\n", fp);
        latency_header(fp, "Solo stage");
        latency_row(fp, "end_to_end", &s->solo_e2e);
        latency_row(fp, "inference", &s->solo_infer);
        fputs("\n", fp);
        latency_note(fp);
    }
}

static void write_pair(const struct eb_fact_list *l, const struct eb_pair_result *p, FILE *fp)
{
    if (!p->valid)
        return;
    fputs("## Dual-stream pair\n\n", fp);
    write_facts(l, EB_FACT_SECTION_PAIR, -1, fp);
    latency_header(fp, "Pair");
    latency_row(fp, "latency", &p->latency);
    fputs("\n", fp);
    latency_note(fp);
}

static void write_system(const struct eb_fact_list *l, FILE *fp)
{
    fputs("## System metrics\n\n", fp);
    write_facts(l, EB_FACT_SECTION_SYSTEM, -1, fp);
}

static void write_warnings(const struct eb_fact_list *l, FILE *fp)
{
    size_t i = eb_report_facts_next(l, 0, EB_FACT_SECTION_WARNINGS, -1);
    if (i == l->n)
        return;
    fputs("## Warnings\n\n", fp);
    for (; i < l->n; i = eb_report_facts_next(l, i + 1, EB_FACT_SECTION_WARNINGS, -1)) {
        fputs("- ", fp);
        put_text(fp, l->items[i].value);
        fputs("\n", fp);
    }
    fputs("\n", fp);
}

void eb_report_write_md(const struct eb_run_result *r, FILE *fp)
{
    struct eb_fact_list facts;
    eb_report_facts_build(r, &facts);
    write_title(r, &facts, fp);
    if (facts.oom)
        fputs("> **Out of memory:** some facts are missing from this report.\n\n", fp);
    write_memory(r, &facts, fp);
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        write_slot(&facts, &r->slots[i], fp);
    write_pair(&facts, &r->pair, fp);
    write_system(&facts, fp);
    write_warnings(&facts, fp);
    eb_report_facts_fini(&facts);
    if (r->output_dir[0] != '\0') {
        fputs("Output folder: `", fp);
        put_text(fp, r->output_dir);
        fputs("`\n", fp);
    }
    if (r->history_run_id > 0) {
        fprintf(fp, "\nHistory: run %lld in `", (long long)r->history_run_id);
        put_text(fp, r->history_db);
        fputs("` (`edgebench history`, `edgebench diff A B`)\n", fp);
    }
}
