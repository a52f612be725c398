/*
 * report.md: the report for people. Rendered from the same struct eb_run_result as report.json
 * (and with the same unit conversions), so the two never disagree. Section order is part of
 * the contract (docs/report-schema.md): the Memory Safety Summary always comes first.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/report.h"

#define MAX_CLASS_ROWS 15
#define MAX_OP_ROWS    12

static double bytes_gb(uint64_t b)
{
    return (double)b / EB_REPORT_BYTES_PER_GB;
}

/*
 * Writes a user-supplied string inside a table cell or a line: '|' is escaped so it cannot
 * split the cell, line breaks become spaces; empty or NULL strings become an em dash.
 */
static void put_text(FILE *fp, const char *s)
{
    if (s == NULL || s[0] == '\0') {
        fputs("—", fp);
        return;
    }
    for (const char *p = s; *p != '\0'; p++) {
        if (*p == '|')
            fputs("\\|", fp);
        else if (*p == '\n' || *p == '\r' || *p == '\t')
            fputc(' ', fp);
        else
            fputc(*p, fp);
    }
}

static void row_text(FILE *fp, const char *label, const char *value)
{
    fprintf(fp, "| %s | ", label);
    put_text(fp, value);
    fputs(" |\n", fp);
}

/* The run's verdict right under the title: a quoted block with every reason. */
static void write_verdict(const struct eb_run_result *r, FILE *fp)
{
    const struct eb_validity *v = &r->validity;
    if (!v->evaluated)
        return;
    char b1[32], b2[32];
    fprintf(fp, "> **Verdict: %s**", eb_validity_verdict(v));
    fprintf(fp,
            " (criteria: at least %llu measured frames, at least %s s measured, end-to-end CoV "
            "at most %s%%, no GPU throttling)\n",
            (unsigned long long)r->criteria.min_frames,
            eb_report__fmtd(b1, sizeof(b1), r->criteria.min_duration_s, 1),
            eb_report__fmtd(b2, sizeof(b2), r->criteria.max_cov_pct, 1));
    for (int i = 0; i < v->n_reasons && i < EB_VALIDITY_MAX_REASONS; i++) {
        fputs("> - ", fp);
        put_text(fp, v->reasons[i]);
        fputs("\n", fp);
    }
    fputs("\n", fp);
}

static void write_title(const struct eb_run_result *r, FILE *fp)
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
    char b[32];
    fputs("edgebench ", fp);
    put_text(fp, r->version);
    fprintf(fp, " · schema %d · duration %s s · exit code %d\n\n", EB_REPORT_SCHEMA_VERSION,
            eb_report__fmtd(b, sizeof(b), r->duration_s, 1), r->exit_code);
}

static void write_memory(const struct eb_run_result *r, FILE *fp)
{
    const struct eb_mem_summary *m = &r->mem;
    char b1[32], b2[32], b3[32];
    const char *overall = eb_mem_overall(m);

    fputs("## Memory Safety Summary\n\n", fp);
    fprintf(fp, "**%s**: %llu violation%s of the %s GB limit.\n\n", overall,
            (unsigned long long)m->violations, m->violations == 1 ? "" : "s",
            eb_report__fmtd(b1, sizeof(b1), m->limit_gb, 2));
    fputs("| Item | Value |\n|---|---|\n", fp);
    fprintf(fp, "| Overall status | **%s** |\n", overall);
    fprintf(fp, "| Limit | %s GB |\n", eb_report__fmtd(b1, sizeof(b1), m->limit_gb, 2));
    fprintf(fp, "| Limit type | %s |\n", eb_limit_type_name(m->limit_type));
    row_text(fp, "Methods applied", m->methods[0] != '\0' ? m->methods : "none");
    row_text(fp, "Monitored figure", m->monitored);

    double peak = bytes_gb(m->peak_bytes);
    fprintf(fp, "| Peak of the monitored figure | %s GB (%s%% of limit) |\n",
            eb_report__fmtd(b1, sizeof(b1), peak, 2),
            eb_report__fmtd(b2, sizeof(b2), m->limit_gb > 0 ? 100.0 * peak / m->limit_gb : NAN, 1));
    if (m->unified) {
        /* One DRAM: the allocator's figure is inside the system figure, never added to it. */
        fprintf(
            fp,
            "| System memory (unified; CUDA allocator is a subset) | peak %s GB used of %s GB |\n",
            eb_report__fmtd(b1, sizeof(b1), bytes_gb(m->peak_system_used_bytes), 2),
            eb_report__fmtd(b2, sizeof(b2), bytes_gb(m->system_total_bytes), 2));
        fprintf(fp, "| CUDA allocator peak (part of system memory) | %s GB |\n",
                eb_report__fmtd(b3, sizeof(b3), bytes_gb(m->peak_gpu_bytes), 2));
    } else {
        fprintf(fp, "| System RAM | peak %s GB used of %s GB |\n",
                eb_report__fmtd(b1, sizeof(b1), bytes_gb(m->peak_system_used_bytes), 2),
                eb_report__fmtd(b2, sizeof(b2), bytes_gb(m->system_total_bytes), 2));
        fprintf(fp, "| GPU VRAM | peak %s GB |\n",
                eb_report__fmtd(b3, sizeof(b3), bytes_gb(m->peak_gpu_bytes), 2));
    }
    fprintf(fp, "| Process RSS peak | %s GB |\n",
            eb_report__fmtd(b1, sizeof(b1), bytes_gb(m->peak_rss_bytes), 2));
    fprintf(fp, "| Total violations | %llu |\n", (unsigned long long)m->violations);
    fprintf(fp, "| Memory-pressure warnings (available < 20%%) | %llu |\n\n",
            (unsigned long long)m->pressure_warnings);

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

static void write_slot_facts(const struct eb_slot_result *s, FILE *fp)
{
    char b1[32], b2[32];
    fputs("| Item | Value |\n|---|---|\n", fp);
    fputs("| Backend | ", fp);
    put_text(fp, s->backend);
    if (s->backend_version[0] != '\0') {
        fputc(' ', fp);
        put_text(fp, s->backend_version);
    }
    if (s->backend_reason[0] != '\0') {
        fputs(" (", fp);
        put_text(fp, s->backend_reason);
        fputc(')', fp);
    }
    fputs(" |\n| Device / provider | ", fp);
    put_text(fp, s->device);
    fputs(" / ", fp);
    put_text(fp, s->provider);
    fputs(" |\n", fp);
    row_text(fp, "Precision (input dtype)", s->input_dtype);
    if (s->preprocess[0] != '\0') {
        fputs("| Preprocessing | ", fp);
        put_text(fp, s->preprocess);
        fputs(" (", fp);
        put_text(fp, s->preprocess_reason);
        fputs(") |\n", fp);
    }
    if (s->drift_measured) {
        char b3[32];
        fprintf(fp,
                "| fp16 drift vs fp32 | max abs %s, mean abs %s; %llu of %llu fp32 boxes matched "
                "(%s%%) over %llu frames |\n",
                eb_report__fmtd(b1, sizeof(b1), s->drift_max_abs, 4),
                eb_report__fmtd(b2, sizeof(b2), s->drift_mean_abs, 5),
                (unsigned long long)s->drift_boxes_matched, (unsigned long long)s->drift_boxes_fp32,
                eb_report__fmtd(b3, sizeof(b3),
                                s->drift_boxes_fp32 > 0 ? 100.0 * (double)s->drift_boxes_matched /
                                                              (double)s->drift_boxes_fp32
                                                        : NAN,
                                1),
                (unsigned long long)s->drift_frames);
    } else if (s->drift_note[0] != '\0') {
        row_text(fp, "fp16 drift vs fp32", s->drift_note);
    }
    if (s->decode[0] != '\0') {
        fputs("| Decode | ", fp);
        put_text(fp, s->decode);
        fputs(" (", fp);
        put_text(fp, s->decode_reason);
        fputs(") |\n", fp);
    }
    row_text(fp, "Model", s->model_path);
    if (s->model_sha256[0] != '\0')
        fprintf(fp, "| Model file | %llu bytes, SHA-256 %s |\n", (unsigned long long)s->model_size,
                s->model_sha256);
    row_text(fp, "Source", s->source);
    if (s->input_w > 0 && s->input_h > 0)
        fprintf(fp, "| Input size | %d×%d×%d |\n", s->input_w, s->input_h, s->input_c);
    else
        fputs("| Input size | — |\n", fp);
    fputs("| Layout | ", fp);
    put_text(fp, s->layout);
    if (s->num_classes > 0)
        fprintf(fp, " (%d classes)", s->num_classes);
    fputs(" |\n", fp);
    if (s->threads > 0)
        fprintf(fp, "| Threads | %d |\n", s->threads);
    else
        fputs("| Threads | backend default |\n", fp);
    fprintf(fp, "| Frames | %llu measured, %llu warm-up, %lld skipped |\n",
            (unsigned long long)s->frames_measured, (unsigned long long)s->frames_warmup,
            (long long)s->frames_skipped);
    if (s->status == EB_SLOT_OK)
        fprintf(fp, "| Warm-up | %s, %s s%s |\n", s->warmup_auto ? "auto" : "by count",
                eb_report__fmtd(b1, sizeof(b1), s->warmup_s, 2),
                !s->warmup_auto    ? ""
                : s->warmup_stable ? "; the latency settled"
                                   : "; the latency did not settle before the cap");
    if (s->status == EB_SLOT_OK)
        fprintf(fp, "| Wall time | %s s (%s FPS) |\n",
                eb_report__fmtd(b1, sizeof(b1), s->wall_s, 2),
                eb_report__fmtd(b2, sizeof(b2), s->throughput_fps, 1));
    fputs("\n", fp);
}

static void write_detections(const struct eb_slot_result *s, FILE *fp)
{
    char b[32];
    fputs("### Detections\n\n", fp);
    fprintf(fp, "%llu in total; %s per frame on average, at most %u in one frame.\n\n",
            (unsigned long long)s->dets_total,
            eb_report__fmtd(b, sizeof(b), s->dets_per_frame_mean, 2), s->dets_per_frame_max);
    if (s->classes == NULL || s->n_classes == 0)
        return;
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
static void write_accuracy(const struct eb_slot_result *s, FILE *fp)
{
    const struct eb_accuracy_result *a = s->accuracy;
    char b[6][32];
    if (a == NULL)
        return;
    fputs("### Accuracy\n\n", fp);
    fputs("COCO bbox metrics (pycocotools' definitions, as `edgebench val`) of the measured "
          "frames on ",
          fp);
    put_text(fp, a->dataset);
    fprintf(fp,
            " (%s): %llu of %llu images scored (the first in the dataset's order, each once), "
            "%llu boxes; detections at conf %g (%s); classes: %llu of %llu mapped %s; "
            "detections in `%s`.\n\n",
            a->format, (unsigned long long)a->images, (unsigned long long)a->dataset_images,
            (unsigned long long)a->gt_boxes, a->conf,
            a->conf_default ? "no --conf: the customary mAP threshold" : "--conf",
            (unsigned long long)a->classes_mapped, (unsigned long long)a->model_classes,
            a->class_map[0] ? "by the class map" : "by name", a->detections_file);
    fputs("| mAP50-95 | mAP50 | mAP75 | AP small | AP medium | AP large |\n"
          "|---:|---:|---:|---:|---:|---:|\n",
          fp);
    fprintf(fp, "| %s | %s | %s | %s | %s | %s |\n\n", eb_report__fmt_ap(b[0], 32, a->map50_95),
            eb_report__fmt_ap(b[1], 32, a->map50), eb_report__fmt_ap(b[2], 32, a->map75),
            eb_report__fmt_ap(b[3], 32, a->ap_small), eb_report__fmt_ap(b[4], 32, a->ap_medium),
            eb_report__fmt_ap(b[5], 32, a->ap_large));
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

/* The model's MFU and the peak it is measured against, or why there is none. */
static void write_mfu_line(const struct eb_profile_result *p, FILE *fp)
{
    char b[4][32];
    if (!(p->peak_tflops > 0)) {
        fputs("MFU: n/a — ", fp);
        put_text(fp, p->peak_note);
        fputs(".\n\n", fp);
        return;
    }
    fprintf(
        fp,
        "MFU (model FLOPs utilisation): %s%% over the sum of node times, %s%% over the measured "
        "inference mean, of the dense %s peak of ",
        eb_report__fmtd(b[0], sizeof(b[0]), p->mfu_pct, 2),
        eb_report__fmtd(b[1], sizeof(b[1]), p->mfu_inference_pct, 2), p->peak_precision);
    put_text(fp, p->peak_device);
    fprintf(fp, ", %s %s at %s MHz (", eb_report__fmtd(b[2], sizeof(b[2]), p->peak_tflops, 1),
            strcmp(p->peak_precision, "int8") == 0 ? "TOPS" : "TFLOPS",
            eb_report__fmtd(b[3], sizeof(b[3]), p->peak_clock_mhz, 0));
    put_text(fp, p->peak_note);
    fputs(").\n\n", fp);
}

/* "Per-operator profile": top op types and top nodes (the JSON has every op type). */
static void write_profile(const struct eb_slot_result *s, FILE *fp)
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
    fprintf(fp,
            "%llu profiled frames, %zu nodes. Sum of node times %s ms/frame = %s%% of the measured "
            "inference mean %s ms (the rest is the backend call around the run); %s GFLOP/frame, "
            "%s GFLOP/s.\n\n",
            (unsigned long long)p->frames, p->n_nodes,
            eb_report__fmtd(b[0], sizeof(b[0]), p->sum_ms_per_frame, 3),
            eb_report__fmtd(b[1], sizeof(b[1]), 100.0 * p->sum_to_inference, 1),
            eb_report__fmtd(b[2], sizeof(b[2]), p->inference_mean_ms, 3),
            eb_report__fmtd(b[3], sizeof(b[3]), p->gflops_per_frame, 3),
            eb_report__fmtd(b[4], sizeof(b[4]), p->gflops_per_s, 1));
    write_mfu_line(p, fp);
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

static void write_slot(const struct eb_run_result *r, const struct eb_slot_result *s, FILE *fp)
{
    char b1[32], b2[32];
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

    write_slot_facts(s, fp);
    if (s->status != EB_SLOT_OK)
        return;

    fputs("### Latency (ms)\n\n", fp);
    latency_header(fp, "Stage");
    for (int st = 0; st < EB_STAGE_COUNT; st++)
        latency_row(fp, eb_stage_name((enum eb_stage)st), &s->stages[st]);
    fputs("\n", fp);
    latency_note(fp);

    write_detections(s, fp);
    write_accuracy(s, fp);
    write_profile(s, fp);

    fputs("### Memory\n\n", fp);
    char measured[96] = "";
    if (s->backend_device_measured_bytes > 0)
        snprintf(measured, sizeof(measured),
                 " (the driver's free memory fell by %.1f MB: cudaMemGetInfo)",
                 (double)s->backend_device_measured_bytes / (1024.0 * 1024.0));
    double p = bytes_gb(s->mem_peak_bytes);
    fprintf(
        fp,
        "Peak %s GB (%s%% of the limit), %llu violation%s; backend host %.1f MB, "
        "device peak %.1f MB%s.\n\n",
        eb_report__fmtd(b1, sizeof(b1), p, 2),
        eb_report__fmtd(b2, sizeof(b2), r->mem.limit_gb > 0 ? 100.0 * p / r->mem.limit_gb : NAN, 1),
        (unsigned long long)s->violations, s->violations == 1 ? "" : "s",
        (double)s->backend_host_bytes / (1024.0 * 1024.0),
        (double)s->backend_device_peak_bytes / (1024.0 * 1024.0), measured);

    if (s->has_solo) {
        fputs("### Solo baseline\n\n", fp);
        fprintf(fp, "Interference ratio (dual p50 / solo p50): end-to-end %s, inference %s.\n\n",
                eb_report__fmtd(b1, sizeof(b1), s->interference_ratio, 3),
                eb_report__fmtd(b2, sizeof(b2), s->interference_ratio_infer, 3));
        latency_header(fp, "Solo stage");
        latency_row(fp, "end_to_end", &s->solo_e2e);
        latency_row(fp, "inference", &s->solo_infer);
        fputs("\n", fp);
        latency_note(fp);
    }
}

static void write_pair(const struct eb_pair_result *p, FILE *fp)
{
    char b[4][32];
    if (!p->valid)
        return;
    fputs("## Dual-stream pair\n\n", fp);
    fprintf(fp,
            "%llu pairs; pair latency (max of the two end-to-end times) p50 %s ms, p90 %s ms, "
            "p99 %s ms; %s pairs/s.\n\n",
            (unsigned long long)p->pairs, eb_report__fmtd(b[0], sizeof(b[0]), p->latency.p50, 3),
            eb_report__fmtd(b[1], sizeof(b[1]), p->latency.p90, 3),
            eb_report__fmtd(b[2], sizeof(b[2]), p->latency.p99, 3),
            eb_report__fmtd(b[3], sizeof(b[3]), p->pair_fps, 1));
    latency_header(fp, "Pair");
    latency_row(fp, "latency", &p->latency);
    fputs("\n", fp);
    latency_note(fp);
}

/* The names of the reason bits in `mask`, ", "-separated. */
static void put_reasons(FILE *fp, uint64_t mask)
{
    int first = 1;
    for (uint64_t bit = 1; bit != 0 && bit <= mask; bit <<= 1) {
        const char *name = (mask & bit) ? eb_sampler_throttle_name(bit) : NULL;
        if (name == NULL)
            continue;
        fprintf(fp, "%s%s", first ? "" : ", ", name);
        first = 0;
    }
    if (first)
        fputs("—", fp);
}

/* "### GPU (NVML)": one row per GPU. */
static void write_gpus(const struct eb_system_summary *s, FILE *fp)
{
    char b[12][32];
    int n = s->n_gpus < 0 ? 0 : s->n_gpus > EB_SAMPLER_MAX_GPUS ? EB_SAMPLER_MAX_GPUS : s->n_gpus;
    if (!s->nvml_used || n == 0)
        return;
    fputs("### GPU (NVML)\n\n", fp);
    fputs("| GPU | Name | Util avg / max % | Mem used max / total MB | Power avg / max mW | "
          "Energy mJ | Temp max °C | SM clock min / max MHz | Throttled samples | Reasons |\n",
          fp);
    fputs("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n", fp);
    for (int i = 0; i < n; i++) {
        const struct eb_gpu_summary *g = &s->gpus[i];
        fprintf(fp, "| %d | ", g->index);
        put_text(fp, g->name);
        fprintf(fp, " | %s / %s | %s / %s | %s / %s | %s | %s | %s / %s | %llu | ",
                eb_report__fmtd(b[0], sizeof(b[0]), g->util_avg_pct, 1),
                eb_report__fmtd(b[1], sizeof(b[1]), g->util_max_pct, 1),
                eb_report__fmtd(b[2], sizeof(b[2]), g->mem_used_max_mb, 0),
                eb_report__fmtd(b[3], sizeof(b[3]), g->mem_total_mb, 0),
                eb_report__fmtd(b[4], sizeof(b[4]), g->power_avg_mw, 0),
                eb_report__fmtd(b[5], sizeof(b[5]), g->power_max_mw, 0),
                eb_report__fmtd(b[6], sizeof(b[6]), g->energy_mj, 0),
                eb_report__fmtd(b[7], sizeof(b[7]), g->temp_max_c, 0),
                eb_report__fmtd(b[8], sizeof(b[8]), g->sm_clock_min_mhz, 0),
                eb_report__fmtd(b[9], sizeof(b[9]), g->sm_clock_max_mhz, 0),
                (unsigned long long)g->throttle_samples);
        put_reasons(fp, g->throttle_reasons & EB_SAMPLER_THROTTLE_LISTED);
        fputs(" |\n", fp);
    }
    fputs("\n", fp);
}

static void write_system(const struct eb_run_result *r, FILE *fp)
{
    const struct eb_system_summary *s = &r->sys;
    char b1[32], b2[32], b3[32];
    fputs("## System metrics\n\n", fp);
    if (s->warning[0] != '\0') {
        fputs("> **Sampler warning:** ", fp);
        put_text(fp, s->warning);
        fputs("\n\n", fp);
    }
    if (s->nvml_warning[0] != '\0') {
        fputs("> **Sampler warning:** ", fp);
        put_text(fp, s->nvml_warning);
        fputs("\n\n", fp);
    }
    if (s->n_samples == 0) {
        fputs("No system samples were taken.\n\n", fp);
        return;
    }
    uint64_t throttle = eb_report__throttle_reasons(s);
    if (throttle != 0) {
        fputs("**Throttling detected during the run:** ", fp);
        put_reasons(fp, throttle);
        fputs("\n\n", fp);
    }
    fputs("| Metric | Value |\n|---|---|\n", fp);
    fprintf(fp, "| Samples | %llu over %s s |\n", (unsigned long long)s->n_samples,
            eb_report__fmtd(b1, sizeof(b1), s->duration_s, 1));
    fprintf(fp, "| CPU (all cores) | avg %s%%, max %s%% |\n",
            eb_report__fmtd(b1, sizeof(b1), s->cpu_avg_pct, 1),
            eb_report__fmtd(b2, sizeof(b2), s->cpu_max_pct, 1));
    fprintf(fp, "| RAM used | avg %s MB, max %s MB of %s MB |\n",
            eb_report__fmtd(b1, sizeof(b1), s->ram_used_avg_mb, 0),
            eb_report__fmtd(b2, sizeof(b2), s->ram_used_max_mb, 0),
            eb_report__fmtd(b3, sizeof(b3), s->ram_total_mb, 0));
    fprintf(fp, "| Swap used (max) | %s MB |\n",
            eb_report__fmtd(b1, sizeof(b1), s->swap_used_max_mb, 0));
    fprintf(fp, "| Process RSS (max) | %s MB |\n",
            eb_report__fmtd(b1, sizeof(b1), s->rss_max_mb, 0));
    if (s->tegrastats_used) {
        fprintf(fp, "| tegrastats lines | %llu (%llu unparsed) |\n",
                (unsigned long long)s->tegrastats_lines,
                (unsigned long long)s->tegrastats_bad_lines);
        fprintf(fp, "| GPU load | avg %s%%, max %s%% |\n",
                eb_report__fmtd(b1, sizeof(b1), s->gpu_load_avg_pct, 1),
                eb_report__fmtd(b2, sizeof(b2), s->gpu_load_max_pct, 1));
        fprintf(fp, "| Power | avg %s mW, max %s mW |\n",
                eb_report__fmtd(b1, sizeof(b1), s->power_avg_mw, 0),
                eb_report__fmtd(b2, sizeof(b2), s->power_max_mw, 0));
        fprintf(fp, "| Energy | %s mJ |\n", eb_report__fmtd(b1, sizeof(b1), s->energy_mj, 0));
    }
    enum eb_report_energy_source src;
    double epf = eb_report__energy_per_frame_mj(r, &src);
    if (src != EB_REPORT_ENERGY_SOURCE_NONE)
        fprintf(fp, "| Energy per measured frame | %s mJ (%s) |\n",
                eb_report__fmtd(b1, sizeof(b1), epf, 1),
                src == EB_REPORT_ENERGY_SOURCE_NVML ? "NVML, all GPUs" : "tegrastats");
    fputs("\n", fp);
    int nz = s->n_zones < 0                      ? 0
             : s->n_zones > EB_SAMPLER_MAX_ZONES ? EB_SAMPLER_MAX_ZONES
                                                 : s->n_zones;
    if (nz > 0) {
        fputs("| Thermal zone | Max °C | Avg °C |\n|---|---:|---:|\n", fp);
        for (int i = 0; i < nz; i++) {
            fputs("| ", fp);
            put_text(fp, s->zones[i].name);
            fprintf(fp, " | %s | %s |\n", eb_report__fmtd(b1, sizeof(b1), s->zones[i].max_c, 1),
                    eb_report__fmtd(b2, sizeof(b2), s->zones[i].avg_c, 1));
        }
        fputs("\n", fp);
    }
    write_gpus(s, fp);
}

static void write_warnings(const struct eb_run_result *r, FILE *fp)
{
    const char *warn[EB_REPORT_MAX_WARNINGS];
    const int n = eb_report__warnings(r, warn, EB_REPORT_MAX_WARNINGS);
    if (n == 0)
        return;
    fputs("## Warnings\n\n", fp);
    for (int i = 0; i < n; i++) {
        fputs("- ", fp);
        put_text(fp, warn[i]);
        fputs("\n", fp);
    }
    fputs("\n", fp);
}

void eb_report_write_md(const struct eb_run_result *r, FILE *fp)
{
    write_title(r, fp);
    write_memory(r, fp);
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        write_slot(r, &r->slots[i], fp);
    write_pair(&r->pair, fp);
    write_system(r, fp);
    write_warnings(r, fp);
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
