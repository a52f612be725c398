#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/metrics/peaks.h"
#include "harness/results/result.h"

const char *eb_slot_status_name(enum eb_slot_status s)
{
    switch (s) {
    case EB_SLOT_SKIPPED: return "skipped";
    case EB_SLOT_OK: return "ok";
    case EB_SLOT_FAILED: return "failed";
    }
    return "unknown";
}

const char *eb_stage_name(enum eb_stage s)
{
    static const char *const names[EB_STAGE_COUNT] = {"read", "preprocess", "inference",
                                                      "postprocess", "end_to_end"};
    return (unsigned)s < EB_STAGE_COUNT ? names[s] : "unknown";
}

void eb_run_result_init(struct eb_run_result *r)
{
    memset(r, 0, sizeof(*r));
    r->schema_version = EB_REPORT_SCHEMA_VERSION;
    r->slots[0].index = 0;
    r->slots[0].name = "rgb";
    r->slots[1].index = 1;
    r->slots[1].name = "thermal";
}

void eb_run_result_fini(struct eb_run_result *r)
{
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        free(r->slots[i].classes);
        r->slots[i].classes = NULL;
        r->slots[i].n_classes = 0;
        free(r->slots[i].records);
        r->slots[i].records = NULL;
        r->slots[i].n_records = 0;
        eb_accuracy_result_destroy(r->slots[i].accuracy);
        r->slots[i].accuracy = NULL;
    }
}

void eb_accuracy_result_destroy(struct eb_accuracy_result *a)
{
    if (a == NULL)
        return;
    free(a->per_class);
    free(a);
}

void eb_run_result_warn(struct eb_run_result *r, const char *fmt, ...)
{
    if (r->n_warnings >= (int)(sizeof(r->warnings) / sizeof(r->warnings[0])))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->warnings[r->n_warnings], sizeof(r->warnings[0]), fmt, ap);
    va_end(ap);
    r->n_warnings++;
}

const char *eb_mem_overall(const struct eb_mem_summary *m)
{
    return m->violations == 0 ? "SAFE" : "VIOLATIONS";
}

/* ---- per-operator profile ------------------------------------------------------------------ */

static double gflops_rate(double gflops, double ms)
{
    return ms > 0 ? gflops / (ms / 1000.0) : NAN;
}

static double pct_of(double ms, double total)
{
    return total > 0 ? 100.0 * ms / total : 0.0;
}

/* Insertion of node k into the top list (kept sorted by time descending, ties by order). */
static void top_insert(struct eb_profile_result *out, const struct eb_backend_prof_node *nd,
                       double ms, double gflops)
{
    size_t n = out->n_top;
    if (n == EB_PROFILE_TOP_NODES && !(ms > out->top[n - 1].ms_per_frame))
        return;
    size_t pos = n < EB_PROFILE_TOP_NODES ? n : EB_PROFILE_TOP_NODES - 1;
    while (pos > 0 && ms > out->top[pos - 1].ms_per_frame) {
        if (pos < EB_PROFILE_TOP_NODES)
            out->top[pos] = out->top[pos - 1];
        pos--;
    }
    struct eb_node_profile *t = &out->top[pos];
    memset(t, 0, sizeof(*t));
    snprintf(t->name, sizeof(t->name), "%s", nd->name != NULL ? nd->name : "");
    snprintf(t->op, sizeof(t->op), "%s", nd->op != NULL ? nd->op : "");
    snprintf(t->fused, sizeof(t->fused), "%s", nd->fused != NULL ? nd->fused : "");
    t->ms_per_frame = ms;
    t->gflops_per_frame = gflops;
    if (n < EB_PROFILE_TOP_NODES)
        out->n_top++;
}

/*
 * The dense peak for `dev` into out's peak fields; returns it in GFLOP/s, or NAN with the reason
 * in out->peak_note (the CPU and devices the table lacks have none: no figure is invented).
 */
static double resolve_peak(const struct eb_backend_device_info *dev, struct eb_profile_result *out)
{
    enum eb_peak_precision prec;
    out->peak_tflops = NAN;
    out->peak_clock_mhz = NAN;
    out->peak_mem_gbs = NAN;
    if (dev == NULL || !dev->reported) {
        snprintf(out->peak_note, sizeof(out->peak_note),
                 "no peak: the backend does not say which device ran the model");
        return NAN;
    }
    snprintf(out->peak_precision, sizeof(out->peak_precision), "%s", dev->precision);
    if (dev->device != EB_DEVICE_CUDA) {
        snprintf(out->peak_note, sizeof(out->peak_note),
                 "%s: no peak in the table, which lists NVIDIA GPUs only",
                 eb_device_name(dev->device));
        return NAN;
    }
    if (!eb_peak_precision_parse(dev->precision, &prec)) {
        snprintf(out->peak_note, sizeof(out->peak_note),
                 "no peak: the backend does not say the precision the model ran in");
        return NAN;
    }
    const struct eb_peak_entry *e =
        eb_peak_find(dev->name, dev->sms, dev->total_bytes, dev->clock_khz / 1000.0);
    if (e == NULL) {
        snprintf(out->peak_note, sizeof(out->peak_note),
                 "unknown device: no peak in the table for '%s' (%d SMs, %.1f GB, %d MHz)",
                 dev->name, dev->sms, (double)dev->total_bytes / 1e9, dev->clock_khz / 1000);
        return NAN;
    }
    snprintf(out->peak_device, sizeof(out->peak_device), "%s", e->name);
    out->peak_mem_gbs = e->mem_gbs > 0 ? e->mem_gbs : NAN;
    if (!(e->tflops[prec] > 0)) {
        snprintf(out->peak_note, sizeof(out->peak_note), "no %s peak in the table for %s",
                 eb_peak_precision_name(prec), e->name);
        return NAN;
    }
    out->peak_tflops = e->tflops[prec];
    out->peak_clock_mhz = e->clock_mhz;
    snprintf(out->peak_note, sizeof(out->peak_note), "%s", e->source);
    return e->tflops[prec] * 1000.0;
}

/* Achieved GFLOP/s as a % of the peak (GFLOP/s); NAN when either is unknown. */
static double mfu_of(double gflops_per_s, double peak_gflops)
{
    return isfinite(gflops_per_s) && peak_gflops > 0 ? 100.0 * gflops_per_s / peak_gflops : NAN;
}

static int cmp_op_desc(const void *a, const void *b)
{
    const struct eb_op_profile *x = a, *y = b;
    if (x->ms_per_frame != y->ms_per_frame)
        return x->ms_per_frame < y->ms_per_frame ? 1 : -1;
    return strcmp(x->op, y->op);
}

void eb_profile_result_build(const struct eb_backend_profile *prof, double inference_mean_ms,
                             const struct eb_backend_device_info *dev,
                             struct eb_profile_result *out)
{
    memset(out, 0, sizeof(*out));
    if (prof == NULL || prof->runs == 0 || prof->n_nodes == 0 || prof->nodes == NULL)
        return;
    double peak_gflops = resolve_peak(dev, out);
    double runs = (double)prof->runs;
    double sum_ms = 0.0, sum_gflops = 0.0;
    for (size_t k = 0; k < prof->n_nodes; k++) {
        const struct eb_backend_prof_node *nd = &prof->nodes[k];
        double ms = nd->total_ms / runs;
        /* 0 is a backend's "not known" (ORT's profile omits the shapes of prepacked weights):
         * NAN, so that the op type's, the model's GFLOP and MFU say n/a rather than too little */
        double gflops = nd->flops > 0 ? (double)nd->flops / 1e9 : NAN;
        sum_ms += ms;
        sum_gflops += gflops;
        top_insert(out, nd, ms, gflops);
        const char *op = nd->op != NULL && nd->op[0] != '\0' ? nd->op : "(unknown)";
        size_t i = 0;
        while (i < out->n_ops && strncmp(out->ops[i].op, op, sizeof(out->ops[i].op) - 1) != 0)
            i++;
        if (i == out->n_ops) {
            if (out->n_ops == EB_PROFILE_MAX_OPS) {
                i = EB_PROFILE_MAX_OPS - 1; /* the rest joins the last entry */
                snprintf(out->ops[i].op, sizeof(out->ops[i].op), "(other)");
            } else {
                snprintf(out->ops[i].op, sizeof(out->ops[i].op), "%s", op);
                out->n_ops++;
            }
        }
        out->ops[i].nodes++;
        out->ops[i].ms_per_frame += ms;
        out->ops[i].gflops_per_frame += gflops;
    }
    for (size_t i = 0; i < out->n_ops; i++) {
        out->ops[i].pct = pct_of(out->ops[i].ms_per_frame, sum_ms);
        out->ops[i].gflops_per_s =
            gflops_rate(out->ops[i].gflops_per_frame, out->ops[i].ms_per_frame);
        out->ops[i].mfu_pct = mfu_of(out->ops[i].gflops_per_s, peak_gflops);
    }
    qsort(out->ops, out->n_ops, sizeof(out->ops[0]), cmp_op_desc);
    for (size_t i = 0; i < out->n_top; i++) {
        out->top[i].pct = pct_of(out->top[i].ms_per_frame, sum_ms);
        out->top[i].gflops_per_s =
            gflops_rate(out->top[i].gflops_per_frame, out->top[i].ms_per_frame);
        out->top[i].mfu_pct = mfu_of(out->top[i].gflops_per_s, peak_gflops);
    }
    out->available = 1;
    out->frames = prof->runs;
    out->n_nodes = prof->n_nodes;
    out->sum_ms_per_frame = sum_ms;
    out->run_ms_per_frame = prof->run_total_ms / runs;
    out->inference_mean_ms = inference_mean_ms;
    out->sum_to_inference = inference_mean_ms > 0 ? sum_ms / inference_mean_ms : NAN;
    out->gflops_per_frame = sum_gflops;
    out->gflops_per_s = gflops_rate(sum_gflops, sum_ms);
    out->mfu_pct = mfu_of(out->gflops_per_s, peak_gflops);
    out->mfu_inference_pct = mfu_of(gflops_rate(sum_gflops, inference_mean_ms), peak_gflops);
}

const char *eb_slot_result_dominant(const struct eb_slot_result *s)
{
    if (s->frames_measured == 0)
        return "";
    return s->stages[EB_STAGE_READ].p50 > s->pipeline.p50 ? "source" : "pipeline";
}

double eb_frame_arrival_ms(const struct eb_frame_record *r)
{
    return (double)(r->t_start_ns + r->stage_ns[EB_STAGE_E2E] - r->t_arrival_ns) / 1e6;
}

int eb_frame_missed(double arrival_ms, double fps)
{
    return fps > 0 && arrival_ms > 1e3 / fps;
}
