/*
 * report.json: the machine-readable report (schema in docs/report-schema.md). Every key is
 * always present; what did not run is null (measurements) or zero (counts), so a consumer
 * never special-cases a skipped or failed slot.
 */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "harness/report/report.h"

static double bytes_gb(uint64_t b)
{
    return (double)b / EB_REPORT_BYTES_PER_GB;
}

/* Empty strings are "not known" and become null. */
static void kstr_or_null(struct eb_json_writer *w, const char *key, const char *s)
{
    eb_json_kstr(w, key, (s != NULL && s[0] != '\0') ? s : NULL);
}

/* Positive integers, or null when not known (0 or less). */
static void kpos_or_null(struct eb_json_writer *w, const char *key, int64_t v)
{
    eb_json_key(w, key);
    if (v > 0)
        eb_json_int(w, v);
    else
        eb_json_null(w);
}

static void kuint(struct eb_json_writer *w, const char *key, uint64_t v)
{
    eb_json_key(w, key);
    eb_json_uint(w, v);
}

/* A measured value that is null when nothing ran. */
static void kmeas(struct eb_json_writer *w, const char *key, double v, int ran)
{
    eb_json_knum(w, key, ran ? v : NAN);
}

/* A percentile's confidence interval, or null when the sample is too small for one. */
static void write_ci(struct eb_json_writer *w, const char *key, const struct eb_stat_ci *ci)
{
    eb_json_key(w, key);
    if (!ci->available) {
        eb_json_null(w);
        return;
    }
    eb_json_obj_begin(w);
    eb_json_knum(w, "low", ci->lo);
    eb_json_knum(w, "high", ci->hi);
    kuint(w, "rank_low", ci->rank_lo);
    kuint(w, "rank_high", ci->rank_hi);
    eb_json_knum(w, "coverage", ci->coverage);
    eb_json_obj_end(w);
}

/* Latency statistics object; with count 0 every value but count is null. */

/* The measured window (harness/pipeline/pipeline.h), relative to the pass's barrier, and the per-frame
 * file that keeps every measured frame's times. */
static void write_window(struct eb_json_writer *w, const struct eb_slot_result *s, int ran)
{
    eb_json_key(w, "window");
    if (!ran) {
        eb_json_null(w);
        return;
    }
    eb_json_obj_begin(w);
    eb_json_knum(w, "start_ms", 0.0);
    eb_json_knum(w, "end_ms", s->wall_s * 1e3);
    char name[64];
    snprintf(name, sizeof(name), "frames_%s.csv", s->name);
    eb_json_kstr(w, "frames_csv", name);
    eb_json_knum(w, "others_cpu_pct", s->others_cpu_pct);
    eb_json_obj_end(w);
}

/* Camera-rate pacing; null when the slot ran unpaced. */
static void write_pacing(struct eb_json_writer *w, const struct eb_slot_result *s, int ran)
{
    eb_json_key(w, "pacing");
    if (!ran || !(s->fps_target > 0)) {
        eb_json_null(w);
        return;
    }
    eb_json_obj_begin(w);
    eb_json_knum(w, "target_fps", s->fps_target);
    eb_json_knum(w, "achieved_fps", s->throughput_fps);
    kuint(w, "queue", s->queue);
    kuint(w, "dropped", s->frames_dropped);
    eb_json_knum(w, "drop_pct", s->drop_pct);
    kuint(w, "deadline_misses", s->deadline_misses);
    eb_report__write_stats(w, "latency_from_arrival_ms", &s->latency_from_arrival);
    eb_json_obj_end(w);
}

void eb_report__write_stats(struct eb_json_writer *w, const char *key,
                            const struct eb_stat_summary *s)
{
    int ran = s->count > 0;
    eb_json_key(w, key);
    eb_json_obj_begin(w);
    kuint(w, "count", s->count);
    kmeas(w, "mean", s->mean, ran);
    kmeas(w, "std", s->std, ran);
    kmeas(w, "cov", s->cov, ran);
    kmeas(w, "min", s->min, ran);
    kmeas(w, "p50", s->p50, ran);
    kmeas(w, "p90", s->p90, ran);
    kmeas(w, "p95", s->p95, ran);
    kmeas(w, "p99", s->p99, ran);
    kmeas(w, "max", s->max, ran);
    kmeas(w, "fps", s->fps, ran);
    write_ci(w, "p50_ci", &s->p50_ci);
    write_ci(w, "p99_ci", &s->p99_ci);
    eb_json_kstr(w, "ci_method", EB_STAT_CI_METHOD);
    eb_json_obj_end(w);
}

/* {verdict, reasons[, criteria]} of a judged verdict, else null. */
static void write_validity(struct eb_json_writer *w, const struct eb_validity *v,
                           const struct eb_validity_criteria *c)
{
    eb_json_key(w, "validity");
    if (!v->evaluated) {
        eb_json_null(w);
        return;
    }
    eb_json_obj_begin(w);
    eb_json_kstr(w, "verdict", eb_validity_verdict(v));
    eb_json_key(w, "reasons");
    eb_json_arr_begin(w);
    for (int i = 0; i < v->n_reasons && i < EB_VALIDITY_MAX_REASONS; i++)
        eb_json_str(w, v->reasons[i]);
    eb_json_arr_end(w);
    if (c != NULL) { /* the thresholds the verdict was judged against */
        eb_json_key(w, "criteria");
        eb_json_obj_begin(w);
        size_t nk = 0;
        const struct eb_validity_criterion *k = eb_validity_criteria_table(&nk);
        for (size_t i = 0; i < nk; i++) {
            double x = eb_validity_criterion_value(&k[i], c);
            if (k[i].type == EB_VALIDITY_CRITERION_UINT)
                kuint(w, k[i].key, (uint64_t)x);
            else
                eb_json_knum(w, k[i].key, x);
        }
        eb_json_obj_end(w);
    }
    eb_json_obj_end(w);
}

/* Nanoseconds as milliseconds rounded to the microsecond (keeps raw samples compact). */
static double ns_to_ms_us(uint64_t ns)
{
    return (double)((ns + 500u) / 1000u) / 1000.0;
}

/* One raw-sample array, written on a single line even in a pretty document. */
static void write_samples(struct eb_json_writer *w, const char *key, const struct eb_slot_result *s,
                          enum eb_stage stage)
{
    eb_json_key(w, key);
    int pretty = w->pretty;
    w->pretty = 0;
    eb_json_arr_begin(w);
    if (s->status == EB_SLOT_OK && s->records != NULL) {
        for (size_t i = 0; i < s->n_records; i++)
            eb_json_num(w, ns_to_ms_us(s->records[i].stage_ns[stage]));
    }
    eb_json_arr_end(w);
    w->pretty = pretty;
}

/* "throttle_onset": null when the pass was too short to look (docs/report-schema.md). */
static void write_throttle(struct eb_json_writer *w, const struct eb_throttle_onset *t)
{
    eb_json_key(w, "throttle_onset");
    if (!t->checked) {
        eb_json_null(w);
        return;
    }
    eb_json_obj_begin(w);
    eb_json_kbool(w, "found", t->found);
    eb_json_knum(w, "t_s", t->t_s);
    eb_json_knum(w, "latency_before_ms", t->latency_before_ms);
    eb_json_knum(w, "latency_after_ms", t->latency_after_ms);
    eb_json_kbool(w, "coincides", t->coincides);
    eb_json_key(w, "clock");
    if (isfinite(t->clock_t_s)) {
        eb_json_obj_begin(w);
        eb_json_knum(w, "t_s", t->clock_t_s);
        eb_json_knum(w, "before_mhz", t->clock_before_mhz);
        eb_json_knum(w, "after_mhz", t->clock_after_mhz);
        eb_json_obj_end(w);
    } else {
        eb_json_null(w);
    }
    eb_json_key(w, "temperature");
    if (isfinite(t->temp_t_s)) {
        eb_json_obj_begin(w);
        eb_json_knum(w, "t_s", t->temp_t_s);
        eb_json_knum(w, "before_c", t->temp_before_c);
        eb_json_knum(w, "after_c", t->temp_after_c);
        eb_json_obj_end(w);
    } else {
        eb_json_null(w);
    }
    eb_json_knum(w, "window_s", EB_THROTTLE_WINDOW_S);
    eb_json_kstr(w, "method", EB_STAT_CP_METHOD);
    eb_json_obj_end(w);
}

/* "statistics": which latency figures are exact and which are streaming estimates (soak runs;
 * harness/metrics/stats.h). */
static void write_statistics(struct eb_json_writer *w, const struct eb_slot_result *s)
{
    eb_json_key(w, "statistics");
    eb_json_obj_begin(w);
    eb_json_kstr(w, "mode", s->stats_streamed ? "streamed" : "exact");
    kuint(w, "exact_max", EB_STAT_EXACT_MAX);
    kuint(w, "samples_kept", s->status == EB_SLOT_OK ? s->n_records : 0);
    eb_json_key(w, "approximate");
    eb_json_arr_begin(w);
    if (s->stats_streamed) {
        static const char *const approx[] = {"p50",    "p90",    "p95",         "p99",
                                             "p50_ci", "p99_ci", "steady_state"};
        for (size_t i = 0; i < sizeof(approx) / sizeof(approx[0]); i++)
            eb_json_str(w, approx[i]);
    }
    eb_json_arr_end(w);
    eb_json_kstr(w, "method",
                 s->stats_streamed ? EB_STAT_STREAM_METHOD : EB_STAT_PERCENTILE_METHOD);
    eb_json_obj_end(w);
}

static int cmp_class_count_desc(const void *a, const void *b)
{
    const struct eb_class_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return (x->cls > y->cls) - (x->cls < y->cls);
}

struct eb_class_count *eb_report__sorted_classes(const struct eb_slot_result *s)
{
    if (s->classes == NULL || s->n_classes == 0)
        return NULL;
    struct eb_class_count *c = malloc(s->n_classes * sizeof(*c));
    if (c == NULL)
        return NULL;
    memcpy(c, s->classes, s->n_classes * sizeof(*c));
    qsort(c, s->n_classes, sizeof(*c), cmp_class_count_desc);
    return c;
}

static void write_class_entry(struct eb_json_writer *w, const struct eb_class_count *c)
{
    eb_json_obj_begin(w);
    eb_json_kint(w, "class", c->cls);
    eb_json_kstr(w, "name", c->name);
    kuint(w, "count", c->count);
    eb_json_obj_end(w);
}

static void write_detections(struct eb_json_writer *w, const struct eb_slot_result *s, int ran)
{
    eb_json_key(w, "detections");
    eb_json_obj_begin(w);
    kuint(w, "total", s->dets_total);
    kmeas(w, "per_frame_mean", s->dets_per_frame_mean, ran);
    eb_json_key(w, "per_frame_max");
    if (ran)
        eb_json_uint(w, s->dets_per_frame_max);
    else
        eb_json_null(w);
    eb_json_key(w, "per_class");
    eb_json_arr_begin(w);
    if (s->classes != NULL) {
        struct eb_class_count *sorted = eb_report__sorted_classes(s);
        /* Without memory to sort, the counts still go out in their stored order. */
        const struct eb_class_count *list = sorted != NULL ? sorted : s->classes;
        for (size_t i = 0; i < s->n_classes; i++)
            write_class_entry(w, &list[i]);
        free(sorted);
    }
    eb_json_arr_end(w);
    eb_json_obj_end(w);
}

/* One row of the profile: an op type (node == NULL) or a node. */
static void write_prof_row(struct eb_json_writer *w, const struct eb_op_profile *op,
                           const struct eb_node_profile *node)
{
    eb_json_obj_begin(w);
    if (op != NULL) {
        eb_json_kstr(w, "op", op->op);
        kuint(w, "nodes", op->nodes);
        eb_json_knum(w, "ms_per_frame", op->ms_per_frame);
        eb_json_knum(w, "pct", op->pct);
        eb_json_knum(w, "gflops_per_frame", op->gflops_per_frame);
        eb_json_knum(w, "gflops_per_s", op->gflops_per_s);
        eb_json_knum(w, "mfu_pct", op->mfu_pct);
    } else {
        eb_json_kstr(w, "name", node->name);
        eb_json_kstr(w, "op", node->op);
        kstr_or_null(w, "fused", node->fused);
        eb_json_knum(w, "ms_per_frame", node->ms_per_frame);
        eb_json_knum(w, "pct", node->pct);
        eb_json_knum(w, "gflops_per_frame", node->gflops_per_frame);
        eb_json_knum(w, "gflops_per_s", node->gflops_per_s);
        eb_json_knum(w, "mfu_pct", node->mfu_pct);
    }
    eb_json_obj_end(w);
}

/* An AP, or null where the scored images hold no box (coco_eval's -1). */
static void kap(struct eb_json_writer *w, const char *key, double v)
{
    eb_json_knum(w, key, v >= 0 ? v : NAN);
}

/* "accuracy": null without --data (docs/report-schema.md). */
static void write_accuracy(struct eb_json_writer *w, const struct eb_slot_result *s)
{
    const struct eb_accuracy_result *a = s->accuracy;
    eb_json_key(w, "accuracy");
    if (a == NULL) {
        eb_json_null(w);
        return;
    }
    eb_json_obj_begin(w);
    eb_json_kstr(w, "dataset", a->dataset);
    eb_json_kstr(w, "format", a->format);
    kstr_or_null(w, "class_map", a->class_map);
    kuint(w, "dataset_images", a->dataset_images);
    kuint(w, "images", a->images);
    kuint(w, "images_undecodable", a->images_undecodable);
    kuint(w, "gt_boxes", a->gt_boxes);
    kuint(w, "crowd_regions", a->crowd_regions);
    kuint(w, "detections", a->detections);
    kuint(w, "detections_dropped", a->detections_dropped);
    kuint(w, "classes_mapped", a->classes_mapped);
    kuint(w, "model_classes", a->model_classes);
    eb_json_kbool(w, "class_names_assumed_coco", a->names_assumed);
    eb_json_knum(w, "conf", a->conf);
    eb_json_kstr(w, "conf_source",
                 a->conf_default ? "default for --data (0.001, as val)" : "--conf");
    kap(w, "map50_95", a->map50_95);
    kap(w, "map50", a->map50);
    kap(w, "map75", a->map75);
    kap(w, "ap_small", a->ap_small);
    kap(w, "ap_medium", a->ap_medium);
    kap(w, "ap_large", a->ap_large);
    eb_json_key(w, "per_class");
    eb_json_arr_begin(w);
    for (size_t i = 0; i < a->n_per_class; i++) {
        const struct eb_accuracy_class *c = &a->per_class[i];
        eb_json_obj_begin(w);
        eb_json_kint(w, "category_id", c->category_id);
        eb_json_kstr(w, "name", c->name);
        kuint(w, "gt", c->gt);
        kuint(w, "images", c->images);
        kuint(w, "dets", c->dets);
        kap(w, "ap", c->ap);
        kap(w, "ap50", c->ap50);
        eb_json_obj_end(w);
    }
    eb_json_arr_end(w);
    eb_json_kstr(w, "detections_file", a->detections_file[0] ? a->detections_file : NULL);
    eb_json_obj_end(w);
}

/* "profile": null unless --profile collected one (docs/report-schema.md). */
static void write_profile(struct eb_json_writer *w, const struct eb_slot_result *s)
{
    const struct eb_profile_result *p = &s->profile;
    eb_json_key(w, "profile");
    if (!p->available) {
        eb_json_null(w);
        return;
    }
    eb_json_obj_begin(w);
    kuint(w, "frames", p->frames);
    kuint(w, "nodes", p->n_nodes);
    eb_json_knum(w, "sum_ms_per_frame", p->sum_ms_per_frame);
    eb_json_knum(w, "run_ms_per_frame", p->run_ms_per_frame);
    eb_json_knum(w, "inference_mean_ms", p->inference_mean_ms);
    eb_json_knum(w, "sum_to_inference", p->sum_to_inference);
    eb_json_knum(w, "gflops_per_frame", p->gflops_per_frame);
    eb_json_knum(w, "gflops_per_s", p->gflops_per_s);
    kstr_or_null(w, "peak_device", p->peak_device);
    kstr_or_null(w, "peak_precision", p->peak_precision);
    eb_json_knum(w, "peak_tflops", p->peak_tflops);
    eb_json_knum(w, "peak_clock_mhz", p->peak_clock_mhz);
    eb_json_knum(w, "peak_mem_gbs", p->peak_mem_gbs);
    kstr_or_null(w, "peak_note", p->peak_note);
    eb_json_knum(w, "mfu_pct", p->mfu_pct);
    eb_json_knum(w, "mfu_inference_pct", p->mfu_inference_pct);
    eb_json_key(w, "by_op_type");
    eb_json_arr_begin(w);
    for (size_t i = 0; i < p->n_ops && i < EB_PROFILE_MAX_OPS; i++)
        write_prof_row(w, &p->ops[i], NULL);
    eb_json_arr_end(w);
    eb_json_key(w, "top_nodes");
    eb_json_arr_begin(w);
    for (size_t i = 0; i < p->n_top && i < EB_PROFILE_TOP_NODES; i++)
        write_prof_row(w, NULL, &p->top[i]);
    eb_json_arr_end(w);
    eb_json_obj_end(w);
}

/* The window's drift (eb_stat_drift): null when the slot did not run or measured too few frames
 * to tell. */
static void write_steady(struct eb_json_writer *w, const struct eb_stat_drift *d, int ran)
{
    eb_json_key(w, "steady_state");
    if (!ran || d->blocks == 0) {
        eb_json_null(w);
        return;
    }
    eb_json_obj_begin(w);
    eb_json_kint(w, "blocks", d->blocks);
    eb_json_key(w, "block_p50_ms");
    eb_json_arr_begin(w);
    for (int b = 0; b < d->blocks; b++)
        eb_json_num(w, d->block_p50[b]);
    eb_json_arr_end(w);
    eb_json_knum(w, "p50_ms", d->p50);
    eb_json_knum(w, "drift_pct", d->drift_pct);
    eb_json_obj_end(w);
}

void eb_report__write_source_files(struct eb_json_writer *w, const char *key,
                                   const struct eb_slot_result *s)
{
    eb_json_key(w, key);
    if (s->source_list_sha256[0] == '\0') {
        eb_json_null(w);
        return;
    }
    eb_json_obj_begin(w);
    kuint(w, "files", s->source_list_files);
    kuint(w, "bytes", s->source_list_bytes);
    eb_json_kstr(w, "file_list_sha256", s->source_list_sha256);
    eb_json_obj_end(w);
}

static void write_slot(struct eb_json_writer *w, const struct eb_slot_result *s)
{
    int ran = s->status == EB_SLOT_OK;
    eb_json_obj_begin(w);
    eb_json_kint(w, "index", s->index);
    eb_json_kstr(w, "name", s->name);
    eb_json_kstr(w, "status", eb_slot_status_name(s->status));
    eb_json_kstr(w, "error", s->error != EB_OK ? eb_status_name(s->error) : NULL);
    kstr_or_null(w, "message", s->message);
    kstr_or_null(w, "model", s->model_path);
    kstr_or_null(w, "model_sha256", s->model_sha256);
    kpos_or_null(w, "model_size_bytes", (int64_t)s->model_size);
    kstr_or_null(w, "source", s->source);
    eb_report__write_source_files(w, "source_files", s);
    eb_json_key(w, "source_stream");
    if (s->source_network) {
        eb_json_obj_begin(w);
        eb_json_kint(w, "reconnects", s->source_reconnects);
        eb_json_kint(w, "reconnect_attempts", s->source_reconnect_attempts);
        eb_json_kint(w, "frames_lost", s->source_frames_lost);
        eb_json_kstr(w, "frames_lost_from", "nominal_rate");
        eb_json_knum(w, "outage_s", s->source_outage_s);
        eb_json_obj_end(w);
    } else {
        eb_json_null(w);
    }
    kstr_or_null(w, "backend", s->backend);
    kstr_or_null(w, "backend_version", s->backend_version);
    kstr_or_null(w, "backend_reason", s->backend_reason);
    kstr_or_null(w, "device", s->device);
    kstr_or_null(w, "provider", s->provider);
    kstr_or_null(w, "engine_cache", s->engine_cache);
    kstr_or_null(w, "model_precision", s->model_precision);
    kstr_or_null(w, "model_precision_detail", s->model_precision_detail);
    kstr_or_null(w, "compute_precision", s->compute_precision);
    kstr_or_null(w, "qdq_path", s->qdq_path);
    kstr_or_null(w, "int8_nodes", s->int8_nodes);

    eb_json_key(w, "input");
    eb_json_obj_begin(w);
    kstr_or_null(w, "dtype", s->input_dtype);
    kpos_or_null(w, "width", s->input_w);
    kpos_or_null(w, "height", s->input_h);
    kpos_or_null(w, "channels", s->input_c);
    kstr_or_null(w, "preprocess", s->preprocess);
    kstr_or_null(w, "preprocess_reason", s->preprocess_reason);
    eb_json_obj_end(w);
    kstr_or_null(w, "decode", s->decode);
    kstr_or_null(w, "decode_reason", s->decode_reason);
    eb_json_key(w, "fp16_drift");
    if (s->drift_measured) {
        eb_json_obj_begin(w);
        kuint(w, "frames", s->drift_frames);
        eb_json_knum(w, "max_abs", s->drift_max_abs);
        eb_json_knum(w, "mean_abs", s->drift_mean_abs);
        kuint(w, "boxes_fp32", s->drift_boxes_fp32);
        kuint(w, "boxes_fp16", s->drift_boxes_fp16);
        kuint(w, "boxes_matched", s->drift_boxes_matched);
        eb_json_knum(w, "agreement_pct",
                     s->drift_boxes_fp32 > 0
                         ? 100.0 * (double)s->drift_boxes_matched / (double)s->drift_boxes_fp32
                         : NAN);
        eb_json_knum(w, "iou_min", 0.9);
        eb_json_obj_end(w);
    } else {
        eb_json_null(w);
    }
    kstr_or_null(w, "fp16_drift_note", s->drift_note);
    kstr_or_null(w, "layout", s->layout);
    kpos_or_null(w, "num_classes", s->num_classes);
    eb_json_key(w, "model_profile");
    if (s->model_profile[0] != '\0') {
        eb_json_obj_begin(w);
        eb_json_kstr(w, "family", s->model_profile);
        eb_json_kstr(w, "source", s->profile_source);
        eb_json_kstr(w, "why", s->profile_why);
        eb_json_kstr(w, "input", s->input_prep);
        eb_json_obj_end(w);
    } else {
        eb_json_null(w);
    }
    eb_json_kint(w, "threads", s->threads);

    eb_json_key(w, "frames");
    eb_json_obj_begin(w);
    kuint(w, "measured", s->frames_measured);
    kuint(w, "warmup", s->frames_warmup);
    eb_json_kint(w, "skipped", s->frames_skipped);
    kuint(w, "left_out", s->frames_left_out);
    kuint(w, "source_loops", s->source_loops);
    eb_json_key(w, "capped");
    eb_json_bool(w, s->records_capped);
    eb_json_obj_end(w);
    write_window(w, s, ran);
    write_pacing(w, s, ran);
    eb_json_key(w, "warmup");
    eb_json_obj_begin(w);
    eb_json_kstr(w, "mode", s->warmup_auto ? "auto" : "count");
    kmeas(w, "duration_s", s->warmup_s, ran);
    eb_json_key(w, "stable");
    if (s->warmup_auto && ran)
        eb_json_bool(w, s->warmup_stable);
    else
        eb_json_null(w);
    eb_json_obj_end(w);
    write_steady(w, &s->steady, ran);
    write_validity(w, &s->validity, NULL);
    kmeas(w, "wall_s", s->wall_s, ran);
    kmeas(w, "throughput_fps", s->throughput_fps, ran);

    eb_json_key(w, "latency_ms");
    eb_json_obj_begin(w);
    for (int st = 0; st < EB_STAGE_COUNT; st++)
        eb_report__write_stats(w, eb_stage_name((enum eb_stage)st), &s->stages[st]);
    eb_report__write_stats(w, "pipeline", &s->pipeline);
    eb_json_obj_end(w);
    write_statistics(w, s);
    write_throttle(w, &s->throttle);
    kstr_or_null(w, "dominant", ran ? eb_slot_result_dominant(s) : "");

    write_detections(w, s, ran);

    eb_json_key(w, "solo_baseline");
    if (s->has_solo) {
        eb_json_obj_begin(w);
        eb_report__write_stats(w, "end_to_end", &s->solo_e2e);
        eb_report__write_stats(w, "inference", &s->solo_infer);
        eb_json_knum(w, "interference_ratio", s->interference_ratio);
        eb_json_knum(w, "interference_ratio_inference", s->interference_ratio_infer);
        eb_json_obj_end(w);
    } else {
        eb_json_null(w);
    }

    eb_json_key(w, "memory");
    eb_json_obj_begin(w);
    eb_json_knum(w, "peak_gb", bytes_gb(s->mem_peak_bytes));
    kuint(w, "violations", s->violations);
    kuint(w, "backend_host_bytes", s->backend_host_bytes);
    kuint(w, "backend_device_peak_bytes", s->backend_device_peak_bytes);
    kpos_or_null(w, "backend_device_measured_bytes", (int64_t)s->backend_device_measured_bytes);
    eb_json_obj_end(w);

    write_profile(w, s);
    kstr_or_null(w, "profile_note", s->profile_note);
    write_accuracy(w, s);

    eb_json_key(w, "samples");
    eb_json_obj_begin(w);
    write_samples(w, "end_to_end_ms", s, EB_STAGE_E2E);
    write_samples(w, "inference_ms", s, EB_STAGE_INFER);
    eb_json_obj_end(w);
    eb_json_obj_end(w);
}

/* The "; "-separated methods as an array of strings (empty parts dropped). */
static void write_methods(struct eb_json_writer *w, const char *methods)
{
    eb_json_key(w, "methods");
    eb_json_arr_begin(w);
    const char *p = methods;
    while (p != NULL && *p != '\0') {
        const char *sep = strstr(p, "; ");
        size_t n = sep != NULL ? (size_t)(sep - p) : strlen(p);
        char part[sizeof(((struct eb_mem_summary *)0)->methods)];
        if (n >= sizeof(part))
            n = sizeof(part) - 1;
        memcpy(part, p, n);
        part[n] = '\0';
        if (part[0] != '\0')
            eb_json_str(w, part);
        p = sep != NULL ? sep + 2 : NULL;
    }
    eb_json_arr_end(w);
}

void eb_report__slots_by_closeness(const struct eb_run_result *r, int order_out[EB_NUM_SLOTS])
{
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        order_out[i] = i;
    /* Insertion sort, descending by peak; the index breaks ties so the order is stable. */
    for (int i = 1; i < EB_NUM_SLOTS; i++) {
        int v = order_out[i];
        int j = i - 1;
        while (j >= 0 && r->slots[order_out[j]].mem_peak_bytes < r->slots[v].mem_peak_bytes) {
            order_out[j + 1] = order_out[j];
            j--;
        }
        order_out[j + 1] = v;
    }
}

static void write_memory(struct eb_json_writer *w, const struct eb_run_result *r)
{
    const struct eb_mem_summary *m = &r->mem;
    eb_json_key(w, "memory");
    eb_json_obj_begin(w);
    eb_json_knum(w, "limit_gb", m->limit_gb);
    kstr_or_null(w, "limit_bound", m->limit_bound);
    eb_json_knum(w, "configured_limit_gb", bytes_gb(m->configured_limit_bytes));
    eb_json_kstr(w, "limit_type", eb_limit_type_name(m->limit_type));
    write_methods(w, m->methods);
    eb_json_kbool(w, "unified", m->unified);
    kstr_or_null(w, "monitored", m->monitored);
    eb_json_kstr(w, "overall", eb_mem_overall(m));
    kuint(w, "violations", m->violations);
    eb_json_knum(w, "peak_gb", bytes_gb(m->peak_bytes));
    eb_json_knum(w, "system_total_gb", bytes_gb(m->system_total_bytes));
    eb_json_knum(w, "peak_system_used_gb", bytes_gb(m->peak_system_used_bytes));
    eb_json_knum(w, "peak_rss_gb", bytes_gb(m->peak_rss_bytes));
    eb_json_knum(w, "peak_gpu_gb", bytes_gb(m->peak_gpu_bytes));
    kuint(w, "pressure_warnings", m->pressure_warnings);

    int order[EB_NUM_SLOTS];
    eb_report__slots_by_closeness(r, order);
    eb_json_key(w, "slots_by_closeness");
    eb_json_arr_begin(w);
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *s = &r->slots[order[i]];
        double peak = bytes_gb(s->mem_peak_bytes);
        eb_json_obj_begin(w);
        eb_json_kstr(w, "slot", s->name);
        eb_json_kint(w, "index", s->index);
        eb_json_kstr(w, "status", eb_slot_status_name(s->status));
        eb_json_knum(w, "peak_gb", peak);
        /* A zero limit cannot come from the CLI; null instead of a division by zero. */
        eb_json_knum(w, "fraction_of_limit", m->limit_gb > 0 ? peak / m->limit_gb : NAN);
        eb_json_obj_end(w);
    }
    eb_json_arr_end(w);
    eb_json_obj_end(w);
}

static void write_pair(struct eb_json_writer *w, const struct eb_pair_result *p)
{
    eb_json_key(w, "pair");
    if (!p->valid) {
        eb_json_null(w);
        return;
    }
    eb_json_obj_begin(w);
    kuint(w, "pairs", p->pairs);
    eb_report__write_stats(w, "latency_ms", &p->latency);
    eb_json_knum(w, "pair_fps", p->pair_fps);
    eb_json_obj_end(w);
}

/* One entry of system.gpus (NVML aggregates). */
static void write_gpu(struct eb_json_writer *w, const struct eb_gpu_summary *g)
{
    eb_json_obj_begin(w);
    eb_json_kint(w, "index", g->index);
    kstr_or_null(w, "name", g->name);
    eb_json_knum(w, "util_avg_pct", g->util_avg_pct);
    eb_json_knum(w, "util_max_pct", g->util_max_pct);
    eb_json_knum(w, "mem_used_max_mb", g->mem_used_max_mb);
    eb_json_knum(w, "mem_total_mb", g->mem_total_mb);
    eb_json_knum(w, "power_avg_mw", g->power_avg_mw);
    eb_json_knum(w, "power_max_mw", g->power_max_mw);
    eb_json_knum(w, "energy_mj", g->energy_mj);
    eb_json_knum(w, "temp_max_c", g->temp_max_c);
    eb_json_knum(w, "sm_clock_min_mhz", g->sm_clock_min_mhz);
    eb_json_knum(w, "sm_clock_max_mhz", g->sm_clock_max_mhz);
    kuint(w, "throttle_samples", g->throttle_samples);
    eb_json_key(w, "throttle_reasons");
    eb_sampler_throttle_write_json(g->throttle_reasons & EB_SAMPLER_THROTTLE_LISTED, w);
    eb_json_obj_end(w);
}

void eb_report__write_system_fields(struct eb_json_writer *w, const struct eb_system_summary *s)
{
    kuint(w, "n_samples", s->n_samples);
    int ran = s->n_samples > 0;
    kmeas(w, "duration_s", s->duration_s, ran);
    kmeas(w, "cpu_avg_pct", s->cpu_avg_pct, ran);
    kmeas(w, "cpu_max_pct", s->cpu_max_pct, ran);
    kmeas(w, "ram_used_max_mb", s->ram_used_max_mb, ran);
    kmeas(w, "ram_used_avg_mb", s->ram_used_avg_mb, ran);
    kmeas(w, "ram_total_mb", s->ram_total_mb, ran);
    kmeas(w, "swap_used_max_mb", s->swap_used_max_mb, ran);
    kmeas(w, "rss_max_mb", s->rss_max_mb, ran);
    eb_json_key(w, "thermal_zones");
    eb_json_arr_begin(w);
    int nz = s->n_zones < 0                      ? 0
             : s->n_zones > EB_SAMPLER_MAX_ZONES ? EB_SAMPLER_MAX_ZONES
                                                 : s->n_zones;
    for (int i = 0; i < nz; i++) {
        eb_json_obj_begin(w);
        eb_json_kstr(w, "name", s->zones[i].name);
        eb_json_knum(w, "max_c", s->zones[i].max_c);
        eb_json_knum(w, "avg_c", s->zones[i].avg_c);
        eb_json_obj_end(w);
    }
    eb_json_arr_end(w);

    int tg = s->tegrastats_used;
    eb_json_key(w, "tegrastats");
    eb_json_obj_begin(w);
    eb_json_kbool(w, "used", tg);
    kuint(w, "lines", s->tegrastats_lines);
    kuint(w, "bad_lines", s->tegrastats_bad_lines);
    kmeas(w, "gpu_load_avg_pct", s->gpu_load_avg_pct, tg);
    kmeas(w, "gpu_load_max_pct", s->gpu_load_max_pct, tg);
    kmeas(w, "power_avg_mw", s->power_avg_mw, tg);
    kmeas(w, "power_max_mw", s->power_max_mw, tg);
    kmeas(w, "energy_mj", s->energy_mj, tg);
    eb_json_obj_end(w);
    kstr_or_null(w, "warning", s->warning);

    eb_json_kbool(w, "nvml_used", s->nvml_used);
    kstr_or_null(w, "nvml_warning", s->nvml_warning);
    eb_json_key(w, "gpus");
    eb_json_arr_begin(w);
    int ng = !s->nvml_used || s->n_gpus < 0    ? 0
             : s->n_gpus > EB_SAMPLER_MAX_GPUS ? EB_SAMPLER_MAX_GPUS
                                               : s->n_gpus;
    for (int i = 0; i < ng; i++)
        write_gpu(w, &s->gpus[i]);
    eb_json_arr_end(w);
    uint64_t throttle = eb_report__throttle_reasons(s);
    eb_json_kbool(w, "throttled", throttle != 0);
    eb_json_key(w, "throttle_reasons");
    eb_sampler_throttle_write_json(throttle, w);
}

static void write_system(struct eb_json_writer *w, const struct eb_run_result *r)
{
    eb_json_key(w, "system");
    eb_json_obj_begin(w);
    eb_report__write_system_fields(w, &r->sys);
    enum eb_report_energy_source src;
    const double epf = eb_report__energy_per_frame_mj(r, &src);
    eb_json_knum(w, "energy_window_mj",
                 src != EB_REPORT_ENERGY_SOURCE_NONE ? r->sys.window_energy_mj : NAN);
    eb_json_knum(w, "energy_per_frame_mj", epf);
    eb_json_kstr(w, "energy_source",
                 src == EB_REPORT_ENERGY_SOURCE_NVML         ? "nvml"
                 : src == EB_REPORT_ENERGY_SOURCE_TEGRASTATS ? "tegrastats"
                                                             : NULL);
    eb_json_obj_end(w);
}

const char *eb_report__signal_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGPIPE: return "SIGPIPE";
    case SIGQUIT: return "SIGQUIT";
    default: return NULL;
    }
}

/* The top kernels (report.json "trace.top_kernels", ncu's and nsys's tables alike). */
void eb_report__write_history(struct eb_json_writer *w, const char *db, int64_t run_id,
                              const char *uuid)
{
    eb_json_key(w, "history");
    if (run_id <= 0) {
        eb_json_null(w);
        return;
    }
    eb_json_obj_begin(w);
    eb_json_kstr(w, "db", db);
    eb_json_kint(w, "run_id", run_id);
    kstr_or_null(w, "uuid", uuid);
    eb_json_obj_end(w);
}

void eb_report__write_kernels(struct eb_json_writer *w, const struct eb_kernel_stat *k, size_t n)
{
    eb_json_arr_begin(w);
    for (size_t i = 0; i < n; i++) {
        eb_json_obj_begin(w);
        eb_json_kstr(w, "name", k[i].name);
        kuint(w, "calls", k[i].calls);
        eb_json_knum(w, "total_ms", k[i].total_ms);
        eb_json_knum(w, "share_pct", k[i].share_pct);
        eb_json_obj_end(w);
    }
    eb_json_arr_end(w);
}

/* "trace": null unless `profile --trace` (docs/report-schema.md). */
static void write_trace(struct eb_json_writer *w, const struct eb_trace_result *t)
{
    eb_json_key(w, "trace");
    if (!t->on) {
        eb_json_null(w);
        return;
    }
    eb_json_obj_begin(w);
    eb_json_kstr(w, "file", t->written ? "trace.json" : NULL);
    eb_json_key(w, "frames");
    eb_json_arr_begin(w);
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        eb_json_uint(w, t->frames[i]);
    eb_json_arr_end(w);
    eb_json_kstr(w, "gpu", t->gpu);
    kstr_or_null(w, "gpu_note", t->gpu_note);
    kuint(w, "kernels", t->kernels);
    eb_json_knum(w, "gpu_ms", t->gpu_ms);
    eb_json_key(w, "top_kernels");
    eb_report__write_kernels(w, t->top, t->n_top);
    eb_json_obj_end(w);
}

void eb_report_write_json(const struct eb_run_result *r, struct eb_json_writer *w)
{
    eb_json_obj_begin(w);
    eb_json_kint(w, "schema_version", EB_REPORT_SCHEMA_VERSION);
    eb_json_kstr(w, "edgebench_version", r->version);
    kstr_or_null(w, "mode", r->mode);
    kstr_or_null(w, "started_at", r->started_at);
    eb_json_knum(w, "duration_s", r->duration_s);
    eb_json_kbool(w, "interrupted", r->interrupted);
    eb_json_kstr(w, "interrupt_signal",
                 r->interrupted ? eb_report__signal_name(r->interrupt_signal) : NULL);
    eb_json_kint(w, "exit_code", r->exit_code);
    eb_json_kbool(w, "checkpoint", r->checkpoint);
    write_validity(w, &r->validity, &r->criteria);
    eb_report__write_history(w, r->history_db, r->history_run_id, r->history_uuid);
    kstr_or_null(w, "command_line", r->command_line);
    eb_json_key(w, "config");
    if (r->config != NULL && r->write_config != NULL)
        r->write_config(r->config, w);
    else
        eb_json_null(w);

    write_memory(w, r);

    eb_json_key(w, "slots");
    eb_json_arr_begin(w);
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        write_slot(w, &r->slots[i]);
    eb_json_arr_end(w);

    write_pair(w, &r->pair);
    write_system(w, r);
    write_trace(w, &r->trace);

    eb_json_key(w, "warnings");
    eb_json_arr_begin(w);
    const char *warn[EB_REPORT_MAX_WARNINGS];
    const int nw = eb_report__warnings(r, warn, EB_REPORT_MAX_WARNINGS);
    for (int i = 0; i < nw; i++)
        eb_json_str(w, warn[i]);
    eb_json_arr_end(w);
    kstr_or_null(w, "output_dir", r->output_dir);
    eb_json_obj_end(w);
}
