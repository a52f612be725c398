/*
 * The labelled facts of a run (report_facts.h), built once from the result for report.md and
 * report.html. Per-slot facts are declared as data: one row of slot_rows (or accuracy_rows,
 * profile_rows) per fact, each a label and either a text field of the slot or a formatter.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/report/report.h"
#include "harness/report/report_facts.h"

/* A value being formatted; longer text is cut (a value holds at most a path and some words). */
struct fbuf {
    char s[8448];
    size_t len;
};

static void bput(struct fbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bput(struct fbuf *o, const char *fmt, ...)
{
    if (o->len + 1 >= sizeof(o->s))
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->s + o->len, sizeof(o->s) - o->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len = o->len + (size_t)n < sizeof(o->s) ? o->len + (size_t)n : sizeof(o->s) - 1;
}

/* `s`, or an em dash when empty (the printers show an empty value the same way). */
static const char *or_dash(const char *s)
{
    return s != NULL && s[0] != '\0' ? s : "—";
}

static double bytes_gb(uint64_t b)
{
    return (double)b / EB_REPORT_BYTES_PER_GB;
}

static double pct_of_limit(double gb, double limit_gb)
{
    return limit_gb > 0 ? 100.0 * gb / limit_gb : NAN;
}

/* --------------------------------------------------------------------------- the list */

struct builder {
    struct eb_fact_list *l;
    enum eb_fact_section section;
    int slot;
    const char *group;
};

static void add_text(struct builder *b, const char *key, const char *label, unsigned flags,
                     const char *value)
{
    struct eb_fact_list *l = b->l;
    if (l->oom)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap > 0 ? 2 * l->cap : 64;
        struct eb_fact *items = realloc(l->items, cap * sizeof(*items));
        if (items == NULL) {
            l->oom = 1;
            return;
        }
        l->items = items;
        l->cap = cap;
    }
    size_t nl = strlen(label), nv = strlen(value);
    char *mem = malloc(nl + nv + 2);
    if (mem == NULL) {
        l->oom = 1;
        return;
    }
    memcpy(mem, label, nl + 1);
    memcpy(mem + nl + 1, value, nv + 1);
    l->items[l->n++] = (struct eb_fact){.section = b->section,
                                        .slot = b->slot,
                                        .group = b->group,
                                        .key = key,
                                        .label = mem,
                                        .value = mem + nl + 1,
                                        .flags = flags,
                                        .mem = mem};
}

static void add(struct builder *b, const char *key, const char *label, unsigned flags,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void add(struct builder *b, const char *key, const char *label, unsigned flags,
                const char *fmt, ...)
{
    char v[8448];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof(v), fmt, ap);
    va_end(ap);
    add_text(b, key, label, flags, v);
}

void eb_report_facts_fini(struct eb_fact_list *l)
{
    if (l == NULL)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i].mem);
    free(l->items);
    memset(l, 0, sizeof(*l));
}

size_t eb_report_facts_next(const struct eb_fact_list *l, size_t from, enum eb_fact_section section,
                            int slot)
{
    for (size_t i = from; i < l->n; i++)
        if (l->items[i].section == section && l->items[i].slot == slot)
            return i;
    return l->n;
}

void eb_report_facts_print(const struct eb_fact_list *l, enum eb_fact_section section, int slot,
                           const struct eb_fact_printer *p, FILE *fp)
{
    for (size_t i = eb_report_facts_next(l, 0, section, slot); i < l->n;
         i = eb_report_facts_next(l, i + 1, section, slot))
        if (l->items[i].flags & EB_FACT_FLAG_ALERT)
            p->alert(fp, &l->items[i]);
    const struct eb_fact *open = NULL; /* the first fact of the open table */
    for (size_t i = eb_report_facts_next(l, 0, section, slot); i < l->n;
         i = eb_report_facts_next(l, i + 1, section, slot)) {
        const struct eb_fact *f = &l->items[i];
        if (f->flags & EB_FACT_FLAG_ALERT)
            continue;
        if (open == NULL || f->group != open->group) {
            if (open != NULL)
                p->table_end(fp);
            p->table_begin(fp, f);
            open = f;
        }
        p->row(fp, f);
    }
    if (open != NULL)
        p->table_end(fp);
}

/* ------------------------------------------------------------------- per-slot rows (data) */

/*
 * A row of a per-slot table: the fact `label` shows the slot's text field at `field` (kind
 * ROW_TEXT), the AP at `field` of its accuracy (ROW_AP), or what `fmt` writes (ROW_FN; it
 * returns 0 when the slot has no such fact).
 * OK_ONLY rows are shown only for a slot that ran.
 */
enum row_kind { ROW_FN = 0, ROW_TEXT, ROW_AP };
enum { OK_ONLY = 1u << 8 }; /* above the eb_fact_flag bits */

typedef int (*row_fmt_fn)(struct fbuf *o, const struct eb_run_result *r,
                          const struct eb_slot_result *s);
struct slot_row {
    const char *key;
    const char *label;
    unsigned flags; /* enum eb_fact_flag bits | OK_ONLY */
    enum row_kind kind;
    size_t field;   /* ROW_TEXT: offsetof(struct eb_slot_result, a char array);
                       ROW_AP: offsetof(struct eb_accuracy_result, a double) */
    row_fmt_fn fmt; /* ROW_FN */
};
#define TEXT_FIELD(f) .kind = ROW_TEXT, .field = offsetof(struct eb_slot_result, f)
#define AP_FIELD(f)   .kind = ROW_AP, .field = offsetof(struct eb_accuracy_result, f)

static int fmt_backend(struct fbuf *o, const struct eb_run_result *r,
                       const struct eb_slot_result *s)
{
    (void)r;
    bput(o, "%s", or_dash(s->backend));
    if (s->backend_version[0] != '\0')
        bput(o, " %s", s->backend_version);
    if (s->backend_reason[0] != '\0')
        bput(o, " (%s)", s->backend_reason);
    return 1;
}

static int fmt_device(struct fbuf *o, const struct eb_run_result *r, const struct eb_slot_result *s)
{
    (void)r;
    bput(o, "%s / %s", or_dash(s->device), or_dash(s->provider));
    if (s->engine_cache[0] != '\0')
        bput(o, " (engine cache %s)", s->engine_cache);
    return 1;
}

/* The model's precision (its graph) and the one the backend computed in: "model int8-qdq (64
 * heavy ops: ...); computed in int8 (int8 kernels); input float32". */
static int fmt_precision(struct fbuf *o, const struct eb_run_result *r,
                         const struct eb_slot_result *s)
{
    (void)r;
    if (s->model_precision[0] == '\0' && s->compute_precision[0] == '\0' &&
        s->input_dtype[0] == '\0')
        return 0;
    bput(o, "model %s", or_dash(s->model_precision));
    if (s->model_precision_detail[0] != '\0')
        bput(o, " (%s)", s->model_precision_detail);
    bput(o, "; computed in %s", or_dash(s->compute_precision));
    if (s->qdq_path[0] != '\0')
        bput(o, " (%s)", s->qdq_path);
    if (s->int8_nodes[0] != '\0')
        bput(o, "; heavy nodes %s", s->int8_nodes);
    bput(o, "; input %s", or_dash(s->input_dtype));
    return 1;
}

/* "gpu (reason)": where a step ran and why, or no fact when it never ran. */
static int where_why(struct fbuf *o, const char *where, const char *why)
{
    if (where[0] == '\0')
        return 0;
    bput(o, "%s (%s)", where, or_dash(why));
    return 1;
}

static int fmt_preprocess(struct fbuf *o, const struct eb_run_result *r,
                          const struct eb_slot_result *s)
{
    (void)r;
    return where_why(o, s->preprocess, s->preprocess_reason);
}

static int fmt_decode(struct fbuf *o, const struct eb_run_result *r, const struct eb_slot_result *s)
{
    (void)r;
    return where_why(o, s->decode, s->decode_reason);
}

static int fmt_drift(struct fbuf *o, const struct eb_run_result *r, const struct eb_slot_result *s)
{
    char b1[32], b2[32], b3[32];
    (void)r;
    if (!s->drift_measured) {
        bput(o, "%s", s->drift_note);
        return s->drift_note[0] != '\0';
    }
    double matched = s->drift_boxes_fp32 > 0
                         ? 100.0 * (double)s->drift_boxes_matched / (double)s->drift_boxes_fp32
                         : NAN;
    bput(o, "max abs %s, mean abs %s; %llu of %llu fp32 boxes matched (%s%%) over %llu frames",
         eb_report__fmtd(b1, sizeof(b1), s->drift_max_abs, 4),
         eb_report__fmtd(b2, sizeof(b2), s->drift_mean_abs, 5),
         (unsigned long long)s->drift_boxes_matched, (unsigned long long)s->drift_boxes_fp32,
         eb_report__fmtd(b3, sizeof(b3), matched, 1), (unsigned long long)s->drift_frames);
    return 1;
}

static int fmt_model_file(struct fbuf *o, const struct eb_run_result *r,
                          const struct eb_slot_result *s)
{
    (void)r;
    if (s->model_sha256[0] == '\0')
        return 0;
    bput(o, "%llu bytes, SHA-256 %s", (unsigned long long)s->model_size, s->model_sha256);
    return 1;
}

static int fmt_input(struct fbuf *o, const struct eb_run_result *r, const struct eb_slot_result *s)
{
    (void)r;
    if (s->input_w > 0 && s->input_h > 0)
        bput(o, "%d×%d×%d", s->input_w, s->input_h, s->input_c);
    return 1;
}

static int fmt_profile(struct fbuf *o, const struct eb_run_result *r,
                       const struct eb_slot_result *s)
{
    (void)r;
    if (s->model_profile[0] == '\0')
        return 0;
    bput(o, "%s (%s; input %s): %s", s->model_profile, s->profile_source, s->input_prep,
         s->profile_why);
    return 1;
}

static int fmt_layout(struct fbuf *o, const struct eb_run_result *r, const struct eb_slot_result *s)
{
    (void)r;
    bput(o, "%s", or_dash(s->layout));
    if (s->num_classes > 0)
        bput(o, " (%d classes)", s->num_classes);
    return 1;
}

static int fmt_threads(struct fbuf *o, const struct eb_run_result *r,
                       const struct eb_slot_result *s)
{
    (void)r;
    if (s->threads > 0)
        bput(o, "%d", s->threads);
    else
        bput(o, "backend default");
    return 1;
}

static int fmt_frames(struct fbuf *o, const struct eb_run_result *r, const struct eb_slot_result *s)
{
    (void)r;
    bput(o, "%llu measured, %llu warm-up, %lld skipped", (unsigned long long)s->frames_measured,
         (unsigned long long)s->frames_warmup, (long long)s->frames_skipped);
    if (s->frames_left_out > 0)
        bput(o,
             "; %llu left out (they ended after the measured window: the other slot had stopped)",
             (unsigned long long)s->frames_left_out);
    if (s->source_loops == 1)
        bput(o, "; the source started again once");
    else if (s->source_loops > 1)
        bput(o, "; the source started again %llu times", (unsigned long long)s->source_loops);
    if (s->records_capped)
        bput(o, "; stopped at the record cap");
    return 1;
}

/* A network stream's reconnections and the frames they cost (estimated from its nominal rate);
 * shown for failed slots too: a stream that stayed lost is why the slot failed. */
static int fmt_stream(struct fbuf *o, const struct eb_run_result *r, const struct eb_slot_result *s)
{
    (void)r;
    if (!s->source_network)
        return 0;
    bput(o, "%lld reconnections (%lld attempts), about %lld frames lost over %.2f s of outage",
         (long long)s->source_reconnects, (long long)s->source_reconnect_attempts,
         (long long)s->source_frames_lost, s->source_outage_s);
    if (s->source_frames_lost > 0)
        bput(o, " (estimated from the stream's nominal frame rate)");
    return 1;
}

/* The source's share of the frame against the pipeline's, and which dominates. */
static int fmt_split(struct fbuf *o, const struct eb_run_result *r, const struct eb_slot_result *s)
{
    char b1[32], b2[32];
    (void)r;
    if (s->frames_measured == 0)
        return 0;
    bput(o,
         "source (read) p50 %s ms, pipeline (preprocess + inference + postprocess) p50 %s ms: "
         "the %s dominates",
         eb_report__fmtd(b1, sizeof(b1), s->stages[EB_STAGE_READ].p50, 3),
         eb_report__fmtd(b2, sizeof(b2), s->pipeline.p50, 3), eb_slot_result_dominant(s));
    return 1;
}

/* Camera-rate pacing; no row for an unpaced slot. */
static int fmt_pacing(struct fbuf *o, const struct eb_run_result *r, const struct eb_slot_result *s)
{
    char b[4][32];
    (void)r;
    if (!(s->fps_target > 0))
        return 0;
    bput(o,
         "target %s FPS, achieved %s FPS; %llu dropped (%s%%, queue %llu), %llu deadline misses; "
         "latency from arrival p50 %s ms",
         eb_report__fmtd(b[0], sizeof(b[0]), s->fps_target, 2),
         eb_report__fmtd(b[1], sizeof(b[1]), s->throughput_fps, 2),
         (unsigned long long)s->frames_dropped, eb_report__fmtd(b[2], sizeof(b[2]), s->drop_pct, 2),
         (unsigned long long)s->queue, (unsigned long long)s->deadline_misses,
         eb_report__fmtd(b[3], sizeof(b[3]), s->latency_from_arrival.p50, 3));
    bput(o, ", p99 %s ms", eb_report__fmtd(b[3], sizeof(b[3]), s->latency_from_arrival.p99, 3));
    return 1;
}

static int fmt_warmup(struct fbuf *o, const struct eb_run_result *r, const struct eb_slot_result *s)
{
    char b[32];
    (void)r;
    bput(o, "%s, %s s%s", s->warmup_auto ? "auto" : "by count",
         eb_report__fmtd(b, sizeof(b), s->warmup_s, 2),
         !s->warmup_auto    ? ""
         : s->warmup_stable ? "; the latency settled"
                            : "; the latency did not settle before the cap");
    return 1;
}

static int fmt_steady(struct fbuf *o, const struct eb_run_result *r, const struct eb_slot_result *s)
{
    char b[32], b2[32];
    const struct eb_stat_drift *d = &s->steady;
    if (d->blocks == 0) {
        bput(o, "not judged: fewer than %d measured frames", EB_STAT_DRIFT_MIN_FRAMES);
        return 1;
    }
    bput(o, "median end-to-end of each fifth of the frames");
    for (int i = 0; i < d->blocks; i++)
        bput(o, "%s%s", i ? ", " : " ", eb_report__fmtd(b, sizeof(b), d->block_p50[i], 3));
    bput(o, " ms against %s ms overall: drift %s%%", eb_report__fmtd(b, sizeof(b), d->p50, 3),
         eb_report__fmtd(b2, sizeof(b2), d->drift_pct, 1));
    bput(o, " (at most %s%%)", eb_report__fmtd(b, sizeof(b), r->criteria.max_drift_pct, 1));
    return 1;
}

static int fmt_wall(struct fbuf *o, const struct eb_run_result *r, const struct eb_slot_result *s)
{
    char b1[32], b2[32];
    (void)r;
    bput(o, "%s s (%s FPS)", eb_report__fmtd(b1, sizeof(b1), s->wall_s, 2),
         eb_report__fmtd(b2, sizeof(b2), s->throughput_fps, 1));
    return 1;
}

static int fmt_others_cpu(struct fbuf *o, const struct eb_run_result *r,
                          const struct eb_slot_result *s)
{
    char b1[32], b2[32];
    if (isnan(s->others_cpu_pct)) {
        bput(o, "not known (/proc/stat unreadable or the pass too short)");
        return 1;
    }
    bput(o, "%s%% of the CPUs' time during the measured pass (at most %s%%)",
         eb_report__fmtd(b1, sizeof(b1), s->others_cpu_pct, 1),
         eb_report__fmtd(b2, sizeof(b2), r->criteria.max_others_cpu_pct, 1));
    return 1;
}

static int fmt_detections(struct fbuf *o, const struct eb_run_result *r,
                          const struct eb_slot_result *s)
{
    char b[32];
    (void)r;
    bput(o, "%llu in total; %s per frame on average, at most %u in one frame",
         (unsigned long long)s->dets_total,
         eb_report__fmtd(b, sizeof(b), s->dets_per_frame_mean, 2), s->dets_per_frame_max);
    return 1;
}

static int fmt_memory(struct fbuf *o, const struct eb_run_result *r, const struct eb_slot_result *s)
{
    char b1[32], b2[32];
    double p = bytes_gb(s->mem_peak_bytes);
    bput(o,
         "peak %s GB (%s%% of the limit), %llu violation%s; backend host %.1f MB, device peak "
         "%.1f MB",
         eb_report__fmtd(b1, sizeof(b1), p, 2),
         eb_report__fmtd(b2, sizeof(b2), pct_of_limit(p, r->mem.limit_gb), 1),
         (unsigned long long)s->violations, s->violations == 1 ? "" : "s",
         (double)s->backend_host_bytes / (1024.0 * 1024.0),
         (double)s->backend_device_peak_bytes / (1024.0 * 1024.0));
    if (s->backend_device_measured_bytes > 0)
        bput(o, " (the driver's free memory fell by %.1f MB: cudaMemGetInfo)",
             (double)s->backend_device_measured_bytes / (1024.0 * 1024.0));
    return 1;
}

static int fmt_interference(struct fbuf *o, const struct eb_run_result *r,
                            const struct eb_slot_result *s)
{
    char b1[32], b2[32];
    (void)r;
    if (!s->has_solo)
        return 0;
    bput(o, "end-to-end %s, inference %s",
         eb_report__fmtd(b1, sizeof(b1), s->interference_ratio, 3),
         eb_report__fmtd(b2, sizeof(b2), s->interference_ratio_infer, 3));
    return 1;
}

/* A slot's own facts, in the order both reports show them. Adding a fact is one row here. */
static const struct slot_row slot_rows[] = {
    {.key = "slot.backend", .label = "Backend", .fmt = fmt_backend},
    {.key = "slot.device", .label = "Device / provider", .fmt = fmt_device},
    {.key = "slot.precision", .label = "Precision", .fmt = fmt_precision},
    {.key = "slot.preprocess", .label = "Preprocessing", .fmt = fmt_preprocess},
    {.key = "slot.drift", .label = "fp16 drift vs fp32", .fmt = fmt_drift},
    {.key = "slot.decode", .label = "Decode", .fmt = fmt_decode},
    {.key = "slot.model", .label = "Model", .flags = EB_FACT_FLAG_CODE, TEXT_FIELD(model_path)},
    {.key = "slot.model_file", .label = "Model file", .fmt = fmt_model_file},
    {.key = "slot.source", .label = "Source", .flags = EB_FACT_FLAG_CODE, TEXT_FIELD(source)},
    {.key = "slot.input", .label = "Input size", .fmt = fmt_input},
    {.key = "slot.layout", .label = "Head", .fmt = fmt_layout},
    {.key = "slot.profile", .label = "Model profile", .fmt = fmt_profile},
    {.key = "slot.threads", .label = "Threads", .fmt = fmt_threads},
    {.key = "slot.frames", .label = "Frames", .fmt = fmt_frames},
    {.key = "slot.stream", .label = "Network stream", .fmt = fmt_stream},
    {.key = "slot.warmup", .label = "Warm-up", .flags = OK_ONLY, .fmt = fmt_warmup},
    {.key = "slot.wall", .label = "Wall time", .flags = OK_ONLY, .fmt = fmt_wall},
    {.key = "slot.steady", .label = "Steady state", .flags = OK_ONLY, .fmt = fmt_steady},
    {.key = "slot.others_cpu",
     .label = "Other processes' CPU use",
     .flags = OK_ONLY,
     .fmt = fmt_others_cpu},
    {.key = "slot.split", .label = "Source vs pipeline", .flags = OK_ONLY, .fmt = fmt_split},
    {.key = "slot.pacing", .label = "Pacing", .flags = OK_ONLY, .fmt = fmt_pacing},
    {.key = "slot.detections", .label = "Detections", .fmt = fmt_detections},
    {.key = "slot.memory", .label = "Memory", .fmt = fmt_memory},
    {.key = "slot.interference",
     .label = "Interference ratio (dual p50 / solo p50)",
     .fmt = fmt_interference},
};

/* ------------------------------------------------------------- accuracy rows (--data) */

static int fmt_acc_dataset(struct fbuf *o, const struct eb_run_result *r,
                           const struct eb_slot_result *s)
{
    (void)r;
    bput(o, "%s (%s)", s->accuracy->dataset, s->accuracy->format);
    return 1;
}

static int fmt_acc_images(struct fbuf *o, const struct eb_run_result *r,
                          const struct eb_slot_result *s)
{
    const struct eb_accuracy_result *a = s->accuracy;
    (void)r;
    bput(o, "%llu of %llu images scored (the first in the dataset's order, each once)",
         (unsigned long long)a->images, (unsigned long long)a->dataset_images);
    if (a->images_undecodable > 0)
        bput(o, "; %llu could not be decoded (their boxes count as missed)",
             (unsigned long long)a->images_undecodable);
    return 1;
}

static int fmt_acc_boxes(struct fbuf *o, const struct eb_run_result *r,
                         const struct eb_slot_result *s)
{
    (void)r;
    bput(o, "%llu", (unsigned long long)s->accuracy->gt_boxes);
    return 1;
}

static int fmt_acc_conf(struct fbuf *o, const struct eb_run_result *r,
                        const struct eb_slot_result *s)
{
    const struct eb_accuracy_result *a = s->accuracy;
    (void)r;
    bput(o, "conf %g (%s)", a->conf,
         a->conf_default ? "no --conf: the customary mAP threshold" : "--conf");
    return 1;
}

static int fmt_acc_classes(struct fbuf *o, const struct eb_run_result *r,
                           const struct eb_slot_result *s)
{
    const struct eb_accuracy_result *a = s->accuracy;
    (void)r;
    bput(o, "%llu of %llu mapped %s", (unsigned long long)a->classes_mapped,
         (unsigned long long)a->model_classes, a->class_map[0] ? "by the class map" : "by name");
    return 1;
}

static int fmt_acc_file(struct fbuf *o, const struct eb_run_result *r,
                        const struct eb_slot_result *s)
{
    (void)r;
    bput(o, "%s", s->accuracy->detections_file[0] ? s->accuracy->detections_file : "not written");
    return 1;
}

static const struct slot_row accuracy_rows[] = {
    {.key = "accuracy.dataset",
     .label = "Dataset",
     .flags = EB_FACT_FLAG_CODE,
     .fmt = fmt_acc_dataset},
    {.key = "accuracy.images", .label = "Images", .fmt = fmt_acc_images},
    {.key = "accuracy.gt_boxes", .label = "Ground-truth boxes", .fmt = fmt_acc_boxes},
    {.key = "accuracy.conf", .label = "Detections at", .fmt = fmt_acc_conf},
    {.key = "accuracy.classes", .label = "Classes", .fmt = fmt_acc_classes},
    {.key = "accuracy.detections_file",
     .label = "Detections file",
     .flags = EB_FACT_FLAG_CODE,
     .fmt = fmt_acc_file},
    {.key = "accuracy.map50_95", .label = "mAP50-95", AP_FIELD(map50_95)},
    {.key = "accuracy.map50", .label = "mAP50", AP_FIELD(map50)},
    {.key = "accuracy.map75", .label = "mAP75", AP_FIELD(map75)},
    {.key = "accuracy.ap_small", .label = "AP small", AP_FIELD(ap_small)},
    {.key = "accuracy.ap_medium", .label = "AP medium", AP_FIELD(ap_medium)},
    {.key = "accuracy.ap_large", .label = "AP large", AP_FIELD(ap_large)},
};

/* ------------------------------------------------------------ profile rows (--profile) */

static int fmt_prof_frames(struct fbuf *o, const struct eb_run_result *r,
                           const struct eb_slot_result *s)
{
    (void)r;
    bput(o, "%llu profiled frames, %zu nodes", (unsigned long long)s->profile.frames,
         s->profile.n_nodes);
    return 1;
}

static int fmt_prof_sum(struct fbuf *o, const struct eb_run_result *r,
                        const struct eb_slot_result *s)
{
    const struct eb_profile_result *p = &s->profile;
    char b[3][32];
    (void)r;
    bput(o,
         "%s ms/frame = %s%% of the measured inference mean %s ms (the rest is the backend "
         "call around the run)",
         eb_report__fmtd(b[0], sizeof(b[0]), p->sum_ms_per_frame, 3),
         eb_report__fmtd(b[1], sizeof(b[1]), 100.0 * p->sum_to_inference, 1),
         eb_report__fmtd(b[2], sizeof(b[2]), p->inference_mean_ms, 3));
    return 1;
}

static int fmt_prof_flops(struct fbuf *o, const struct eb_run_result *r,
                          const struct eb_slot_result *s)
{
    char b1[32], b2[32];
    (void)r;
    bput(o, "%s GFLOP/frame, %s GFLOP/s",
         eb_report__fmtd(b1, sizeof(b1), s->profile.gflops_per_frame, 3),
         eb_report__fmtd(b2, sizeof(b2), s->profile.gflops_per_s, 1));
    return 1;
}

/* The model's MFU and the peak it is measured against, or why there is none. */
static int fmt_prof_mfu(struct fbuf *o, const struct eb_run_result *r,
                        const struct eb_slot_result *s)
{
    const struct eb_profile_result *p = &s->profile;
    char b[4][32];
    (void)r;
    if (!(p->peak_tflops > 0)) {
        bput(o, "n/a — %s", p->peak_note);
        return 1;
    }
    bput(o,
         "%s%% over the sum of node times, %s%% over the measured inference mean, of the dense "
         "%s peak of %s, %s %s at %s MHz (%s)",
         eb_report__fmtd(b[0], sizeof(b[0]), p->mfu_pct, 2),
         eb_report__fmtd(b[1], sizeof(b[1]), p->mfu_inference_pct, 2), p->peak_precision,
         p->peak_device, eb_report__fmtd(b[2], sizeof(b[2]), p->peak_tflops, 1),
         strcmp(p->peak_precision, "int8") == 0 ? "TOPS" : "TFLOPS",
         eb_report__fmtd(b[3], sizeof(b[3]), p->peak_clock_mhz, 0), p->peak_note);
    return 1;
}

static const struct slot_row profile_rows[] = {
    {.key = "profile.frames", .label = "Profiled", .fmt = fmt_prof_frames},
    {.key = "profile.sum", .label = "Sum of node times", .fmt = fmt_prof_sum},
    {.key = "profile.flops", .label = "Work", .fmt = fmt_prof_flops},
    {.key = "profile.mfu", .label = "MFU (model FLOPs utilisation)", .fmt = fmt_prof_mfu},
};

static void add_rows(struct builder *b, const struct slot_row *rows, size_t n,
                     const struct eb_run_result *r, const struct eb_slot_result *s)
{
    struct fbuf o;
    for (size_t i = 0; i < n; i++) {
        const struct slot_row *row = &rows[i];
        if ((row->flags & OK_ONLY) && s->status != EB_SLOT_OK)
            continue;
        o.len = 0;
        o.s[0] = '\0';
        if (row->kind == ROW_TEXT) {
            bput(&o, "%s", (const char *)s + row->field);
        } else if (row->kind == ROW_AP) {
            char ap[32];
            double v;
            memcpy(&v, (const char *)s->accuracy + row->field, sizeof(v));
            bput(&o, "%s", eb_report__fmt_ap(ap, sizeof(ap), v));
        } else if (!row->fmt(&o, r, s)) {
            continue;
        }
        add_text(b, row->key, row->label, row->flags & ~(unsigned)OK_ONLY, o.s);
    }
}
#define ADD_ROWS(b, rows, r, s) add_rows(b, rows, sizeof(rows) / sizeof(rows[0]), r, s)

static void build_slot(struct builder *b, const struct eb_run_result *r,
                       const struct eb_slot_result *s)
{
    /* A slot the mode does not use and that names no model has nothing to state. */
    if (s->status == EB_SLOT_SKIPPED && s->model_path[0] == '\0')
        return;
    b->slot = s->index;
    b->section = EB_FACT_SECTION_SLOT;
    ADD_ROWS(b, slot_rows, r, s);
    if (s->status == EB_SLOT_OK && s->accuracy != NULL) {
        b->section = EB_FACT_SECTION_ACCURACY;
        ADD_ROWS(b, accuracy_rows, r, s);
    }
    if (s->status == EB_SLOT_OK && s->profile.available) {
        b->section = EB_FACT_SECTION_PROFILE;
        ADD_ROWS(b, profile_rows, r, s);
    }
    b->slot = -1;
}

/* ------------------------------------------------------------------------ run-level facts */

static void build_run(struct builder *b, const struct eb_run_result *r)
{
    char d[32];
    b->section = EB_FACT_SECTION_RUN;
    add(b, "run.version", "edgebench", 0, "%s", or_dash(r->version));
    add(b, "run.schema", "schema", 0, "%d", EB_REPORT_SCHEMA_VERSION);
    add(b, "run.duration", "duration", 0, "%s s", eb_report__fmtd(d, sizeof(d), r->duration_s, 1));
    add(b, "run.exit_code", "exit code", 0, "%d", r->exit_code);
    if (r->command_line[0] != '\0')
        add_text(b, "run.command", "command", EB_FACT_FLAG_CODE, r->command_line);
}

static void build_memory(struct builder *b, const struct eb_run_result *r)
{
    const struct eb_mem_summary *m = &r->mem;
    char b1[32], b2[32];
    b->section = EB_FACT_SECTION_MEMORY;
    add_text(b, "memory.overall", "Overall status",
             m->violations == 0 ? EB_FACT_FLAG_GOOD : EB_FACT_FLAG_BAD, eb_mem_overall(m));
    add(b, "memory.limit", "Limit", 0, "%s GB", eb_report__fmtd(b1, sizeof(b1), m->limit_gb, 2));
    if (m->limit_bound != NULL && strcmp(m->limit_bound, "unified_ram") == 0)
        add(b, "memory.limit_bound", "Limit bound", 0,
            "usable RAM less the reserve (unified memory), under --gpu_mem_limit_gb %s GB",
            eb_report__fmtd(b1, sizeof(b1), (double)m->configured_limit_bytes / 1e9, 2));
    else
        add_text(b, "memory.limit_bound", "Limit bound", 0, "--gpu_mem_limit_gb");
    add_text(b, "memory.limit_type", "Limit type", 0, eb_limit_type_name(m->limit_type));
    add_text(b, "memory.methods", "Methods applied", 0,
             m->methods[0] != '\0' ? m->methods : "none");
    add_text(b, "memory.monitored", "Monitored figure", 0, m->monitored);
    double peak = bytes_gb(m->peak_bytes);
    add(b, "memory.peak", "Peak of the monitored figure", 0, "%s GB (%s%% of limit)",
        eb_report__fmtd(b1, sizeof(b1), peak, 2),
        eb_report__fmtd(b2, sizeof(b2), pct_of_limit(peak, m->limit_gb), 1));
    const char *sys_label = "System RAM";
    if (m->unified) /* one DRAM: the allocator's figure is inside the system figure */
        sys_label = "System memory (unified; CUDA allocator is a subset)";
    add(b, "memory.system", sys_label, 0, "peak %s GB used of %s GB",
        eb_report__fmtd(b1, sizeof(b1), bytes_gb(m->peak_system_used_bytes), 2),
        eb_report__fmtd(b2, sizeof(b2), bytes_gb(m->system_total_bytes), 2));
    add(b, "memory.gpu", m->unified ? "CUDA allocator peak (part of system memory)" : "GPU VRAM", 0,
        m->unified ? "%s GB" : "peak %s GB",
        eb_report__fmtd(b1, sizeof(b1), bytes_gb(m->peak_gpu_bytes), 2));
    add(b, "memory.rss", "Process RSS peak", 0, "%s GB",
        eb_report__fmtd(b1, sizeof(b1), bytes_gb(m->peak_rss_bytes), 2));
    add(b, "memory.violations", "Total violations", 0, "%llu", (unsigned long long)m->violations);
    add(b, "memory.pressure", "Memory-pressure warnings (available < 20%)", 0, "%llu",
        (unsigned long long)m->pressure_warnings);
}

static void build_pair(struct builder *b, const struct eb_pair_result *p)
{
    char b1[32], b2[32], b3[32];
    if (!p->valid)
        return;
    b->section = EB_FACT_SECTION_PAIR;
    add(b, "pair.pairs", "Pairs", 0, "%llu (%s pairs/s)", (unsigned long long)p->pairs,
        eb_report__fmtd(b1, sizeof(b1), p->pair_fps, 1));
    add(b, "pair.latency", "Pair latency (the larger of the two end-to-end times)", 0,
        "p50 %s ms, p90 %s ms, p99 %s ms", eb_report__fmtd(b1, sizeof(b1), p->latency.p50, 3),
        eb_report__fmtd(b2, sizeof(b2), p->latency.p90, 3),
        eb_report__fmtd(b3, sizeof(b3), p->latency.p99, 3));
}

/* The names of the reason bits in `mask`, ", "-separated, or an em dash for none. */
static void put_reasons(struct fbuf *o, uint64_t mask)
{
    size_t start = o->len;
    for (uint64_t bit = 1; bit != 0 && bit <= mask; bit <<= 1) {
        const char *name = (mask & bit) ? eb_sampler_throttle_name(bit) : NULL;
        if (name != NULL)
            bput(o, "%s%s", o->len > start ? ", " : "", name);
    }
    if (o->len == start)
        bput(o, "—");
}

static void build_gpus(struct builder *b, const struct eb_system_summary *s)
{
    int n = s->n_gpus < 0 ? 0 : s->n_gpus > EB_SAMPLER_MAX_GPUS ? EB_SAMPLER_MAX_GPUS : s->n_gpus;
    char bf[10][32], label[160];
    b->group = "GPU (NVML)";
    for (int i = 0; s->nvml_used && i < n; i++) {
        const struct eb_gpu_summary *g = &s->gpus[i];
        struct fbuf o = {.len = 0};
        bput(&o,
             "util avg %s%%, max %s%%; memory used max %s of %s MB; power avg %s mW, max %s mW; "
             "energy %s mJ; temperature max %s °C; SM clock %s–%s MHz; throttled samples %llu (",
             eb_report__fmtd(bf[0], sizeof(bf[0]), g->util_avg_pct, 1),
             eb_report__fmtd(bf[1], sizeof(bf[1]), g->util_max_pct, 1),
             eb_report__fmtd(bf[2], sizeof(bf[2]), g->mem_used_max_mb, 0),
             eb_report__fmtd(bf[3], sizeof(bf[3]), g->mem_total_mb, 0),
             eb_report__fmtd(bf[4], sizeof(bf[4]), g->power_avg_mw, 0),
             eb_report__fmtd(bf[5], sizeof(bf[5]), g->power_max_mw, 0),
             eb_report__fmtd(bf[6], sizeof(bf[6]), g->energy_mj, 0),
             eb_report__fmtd(bf[7], sizeof(bf[7]), g->temp_max_c, 0),
             eb_report__fmtd(bf[8], sizeof(bf[8]), g->sm_clock_min_mhz, 0),
             eb_report__fmtd(bf[9], sizeof(bf[9]), g->sm_clock_max_mhz, 0),
             (unsigned long long)g->throttle_samples);
        put_reasons(&o, g->throttle_reasons & EB_SAMPLER_THROTTLE_LISTED);
        bput(&o, ")");
        snprintf(label, sizeof(label), "GPU %d %s", g->index, or_dash(g->name));
        add_text(b, "system.gpu", label, 0, o.s);
    }
    b->group = NULL;
}

static void build_system(struct builder *b, const struct eb_run_result *r)
{
    const struct eb_system_summary *s = &r->sys;
    char b1[32], b2[32], b3[32], label[64];
    b->section = EB_FACT_SECTION_SYSTEM;
    if (s->warning[0] != '\0')
        add_text(b, "system.warning", "Sampler warning", EB_FACT_FLAG_ALERT, s->warning);
    if (s->nvml_warning[0] != '\0')
        add_text(b, "system.nvml_warning", "Sampler warning", EB_FACT_FLAG_ALERT, s->nvml_warning);
    if (s->n_samples == 0) {
        add_text(b, "system.samples", "Samples", 0, "none were taken");
        return;
    }
    uint64_t throttle = eb_report__throttle_reasons(s);
    if (throttle != 0) {
        struct fbuf o = {.len = 0};
        put_reasons(&o, throttle);
        add_text(b, "system.throttling", "Throttling detected during the run",
                 EB_FACT_FLAG_ALERT | EB_FACT_FLAG_BAD, o.s);
    }
    add(b, "system.samples", "Samples", 0, "%llu over %s s", (unsigned long long)s->n_samples,
        eb_report__fmtd(b1, sizeof(b1), s->duration_s, 1));
    add(b, "system.cpu", "CPU (all cores)", 0, "avg %s%%, max %s%%",
        eb_report__fmtd(b1, sizeof(b1), s->cpu_avg_pct, 1),
        eb_report__fmtd(b2, sizeof(b2), s->cpu_max_pct, 1));
    add(b, "system.ram", "RAM used", 0, "avg %s MB, max %s MB of %s MB",
        eb_report__fmtd(b1, sizeof(b1), s->ram_used_avg_mb, 0),
        eb_report__fmtd(b2, sizeof(b2), s->ram_used_max_mb, 0),
        eb_report__fmtd(b3, sizeof(b3), s->ram_total_mb, 0));
    add(b, "system.swap", "Swap used (max)", 0, "%s MB",
        eb_report__fmtd(b1, sizeof(b1), s->swap_used_max_mb, 0));
    add(b, "system.rss", "Process RSS (max)", 0, "%s MB",
        eb_report__fmtd(b1, sizeof(b1), s->rss_max_mb, 0));
    if (s->tegrastats_used) {
        add(b, "system.tegrastats_lines", "tegrastats lines", 0, "%llu (%llu unparsed)",
            (unsigned long long)s->tegrastats_lines, (unsigned long long)s->tegrastats_bad_lines);
        add(b, "system.gpu_load", "GPU load (tegrastats)", 0, "avg %s%%, max %s%%",
            eb_report__fmtd(b1, sizeof(b1), s->gpu_load_avg_pct, 1),
            eb_report__fmtd(b2, sizeof(b2), s->gpu_load_max_pct, 1));
        add(b, "system.power", "Power (tegrastats)", 0, "avg %s mW, max %s mW",
            eb_report__fmtd(b1, sizeof(b1), s->power_avg_mw, 0),
            eb_report__fmtd(b2, sizeof(b2), s->power_max_mw, 0));
        add(b, "system.energy", "Energy (tegrastats)", 0, "%s mJ",
            eb_report__fmtd(b1, sizeof(b1), s->energy_mj, 0));
    }
    enum eb_report_energy_source src;
    double epf = eb_report__energy_per_frame_mj(r, &src);
    if (src != EB_REPORT_ENERGY_SOURCE_NONE)
        add(b, "system.energy_per_frame", "Energy per measured frame", 0,
            "%s mJ (%s; %s mJ over the measured window)", eb_report__fmtd(b1, sizeof(b1), epf, 1),
            src == EB_REPORT_ENERGY_SOURCE_NVML ? "NVML, all GPUs" : "tegrastats",
            eb_report__fmtd(b2, sizeof(b2), s->window_energy_mj, 1));
    int nz = s->n_zones < 0                      ? 0
             : s->n_zones > EB_SAMPLER_MAX_ZONES ? EB_SAMPLER_MAX_ZONES
                                                 : s->n_zones;
    for (int i = 0; i < nz; i++) {
        snprintf(label, sizeof(label), "Thermal zone %s", or_dash(s->zones[i].name));
        add(b, "system.zone", label, 0, "max %s °C, avg %s °C",
            eb_report__fmtd(b1, sizeof(b1), s->zones[i].max_c, 1),
            eb_report__fmtd(b2, sizeof(b2), s->zones[i].avg_c, 1));
    }
    build_gpus(b, s);
}

void eb_report_facts_build(const struct eb_run_result *r, struct eb_fact_list *out)
{
    memset(out, 0, sizeof(*out));
    struct builder b = {.l = out, .slot = -1};
    build_run(&b, r);
    build_memory(&b, r);
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        build_slot(&b, r, &r->slots[i]);
    build_pair(&b, &r->pair);
    build_system(&b, r);
    const char *warn[EB_REPORT_MAX_WARNINGS];
    const int n = eb_report__warnings(r, warn, EB_REPORT_MAX_WARNINGS);
    b.section = EB_FACT_SECTION_WARNINGS;
    for (int i = 0; i < n; i++)
        add_text(&b, "warning", "Warning", 0, warn[i]);
}
