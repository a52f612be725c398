/*
 * report.md and report.html print the same facts (report_facts.h): the labelled facts are read
 * back out of both documents — the line under the title, alert lines, two-column table rows and
 * the warnings, each with the "## " section it sits in — and the two sets must be equal, and
 * equal to the fact list itself.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb_test.h"
#include "harness/report/report.h"
#include "harness/report/report_facts.h"
#include "harness/report/report_html.h"

#define GB 1000000000ull

/* ------------------------------------------------------------------------- the result */

static void fill_stats(struct eb_stat_summary *out, double base)
{
    double v[12];
    for (int i = 0; i < 12; i++)
        v[i] = base + 0.25 * (i % 5) + 0.01 * i;
    eb_stat_summarize_ms(v, 12, out);
}

/* A slot that ran, with every optional fact present: fp16 drift, solo baseline, accuracy,
 * profile, classes, preprocessing and decode placement. */
static void fill_ok_slot(struct eb_slot_result *s, double base)
{
    s->status = EB_SLOT_OK;
    snprintf(s->model_path, sizeof(s->model_path), "/models/%s | <yolo> & \"n\".onnx", s->name);
    snprintf(s->model_sha256, sizeof(s->model_sha256), "%064d", 7);
    s->model_size = 5400000;
    snprintf(s->source, sizeof(s->source), "synthetic=640x480");
    snprintf(s->backend, sizeof(s->backend), "native");
    snprintf(s->backend_version, sizeof(s->backend_version), "0.1.0");
    snprintf(s->backend_reason, sizeof(s->backend_reason), "auto: native supports every node");
    snprintf(s->device, sizeof(s->device), "cuda");
    snprintf(s->provider, sizeof(s->provider), "native-cuda");
    snprintf(s->preprocess, sizeof(s->preprocess), "gpu");
    snprintf(s->preprocess_reason, sizeof(s->preprocess_reason), "auto: CUDA device");
    snprintf(s->decode, sizeof(s->decode), "gpu");
    snprintf(s->decode_reason, sizeof(s->decode_reason), "auto: fused head");
    s->drift_measured = 1;
    s->drift_frames = 8;
    s->drift_boxes_fp32 = 40;
    s->drift_boxes_fp16 = 41;
    s->drift_boxes_matched = 39;
    s->drift_max_abs = 0.0123;
    s->drift_mean_abs = 0.00045;
    snprintf(s->input_dtype, sizeof(s->input_dtype), "float16");
    s->input_w = s->input_h = 640;
    s->input_c = 3;
    snprintf(s->layout, sizeof(s->layout), "v8");
    s->num_classes = 80;
    s->threads = 6;
    s->frames_measured = 12;
    s->frames_warmup = 4;
    s->warmup_s = 0.75;
    s->warmup_auto = 1;
    s->warmup_stable = 1;
    s->wall_s = 0.5;
    s->throughput_fps = 24.0;
    for (int st = 0; st < EB_STAGE_COUNT; st++)
        fill_stats(&s->stages[st], base + st);
    s->dets_total = 30;
    s->dets_per_frame_mean = 2.5;
    s->dets_per_frame_max = 5;
    s->has_solo = 1;
    fill_stats(&s->solo_e2e, base);
    fill_stats(&s->solo_infer, base / 2);
    s->interference_ratio = 1.25;
    s->interference_ratio_infer = 1.125;
    s->backend_host_bytes = 10 * 1024 * 1024;
    s->backend_device_peak_bytes = 300 * 1024 * 1024;
    s->backend_device_measured_bytes = 320 * 1024 * 1024;
    s->mem_peak_bytes = 3 * GB;
    s->violations = 1;

    struct eb_accuracy_result *a = calloc(1, sizeof(*a));
    ASSERT_TRUE(a != NULL);
    snprintf(a->dataset, sizeof(a->dataset), "/data/coco <val>");
    snprintf(a->format, sizeof(a->format), "coco");
    snprintf(a->detections_file, sizeof(a->detections_file), "detections_%s.json", s->name);
    a->dataset_images = 500;
    a->images = 12;
    a->gt_boxes = 90;
    a->conf = 0.001;
    a->conf_default = 1;
    a->classes_mapped = 80;
    a->model_classes = 80;
    a->map50_95 = 0.3712;
    a->map50 = 0.52;
    a->map75 = 0.4;
    a->ap_small = -1; /* no small box: n/a */
    a->ap_medium = 0.31;
    a->ap_large = 0.55;
    s->accuracy = a;

    struct eb_profile_result *p = &s->profile;
    s->profile_requested = 1;
    p->available = 1;
    p->frames = 12;
    p->n_nodes = 120;
    p->sum_ms_per_frame = 4.0;
    p->inference_mean_ms = 5.0;
    p->sum_to_inference = 0.8;
    p->gflops_per_frame = 8.7;
    p->gflops_per_s = 2175.0;
    p->peak_tflops = NAN; /* no peak: MFU n/a with the reason */
    snprintf(p->peak_note, sizeof(p->peak_note), "cpu: no peak in the table");
}

/* rgb ran with every optional fact; thermal failed; sampler with NVML, tegrastats, throttle. */
static void build(struct eb_run_result *r)
{
    eb_run_result_init(r);
    r->version = "0.1.0";
    snprintf(r->mode, sizeof(r->mode), "dual");
    snprintf(r->started_at, sizeof(r->started_at), "2025-03-01T10:20:30Z");
    snprintf(r->command_line, sizeof(r->command_line), "edgebench run --model0 'a|b<c>'");
    r->duration_s = 3.5;
    r->exit_code = 1;
    r->mem.limit_gb = 8.0;
    r->mem.limit_type = EB_LIMIT_HARD;
    snprintf(r->mem.monitored, sizeof(r->mem.monitored), "GPU VRAM (backend device bytes)");
    r->mem.violations = 1;
    r->mem.peak_bytes = 3 * GB;
    r->mem.peak_gpu_bytes = 3 * GB;
    r->mem.system_total_bytes = 64 * GB;
    fill_ok_slot(&r->slots[0], 7.0);
    struct eb_slot_result *t = &r->slots[1];
    t->status = EB_SLOT_FAILED;
    t->error = EB_ERR_UNSUPPORTED;
    snprintf(t->model_path, sizeof(t->model_path), "/models/thermal.onnx");
    snprintf(t->message, sizeof(t->message), "failed to load: node 3 (Foo) not supported");
    snprintf(t->drift_note, sizeof(t->drift_note), "not measured: the slot failed");

    struct eb_system_summary *sys = &r->sys;
    sys->n_samples = 30;
    sys->duration_s = 3.4;
    sys->cpu_avg_pct = 40.0;
    sys->cpu_max_pct = 90.0;
    sys->ram_used_avg_mb = 9000;
    sys->ram_used_max_mb = 9500;
    sys->ram_total_mb = 65536;
    sys->rss_max_mb = 1800;
    sys->n_zones = 1;
    snprintf(sys->zones[0].name, sizeof(sys->zones[0].name), "cpu-thermal");
    sys->zones[0].max_c = 61.5;
    sys->zones[0].avg_c = 55.0;
    sys->tegrastats_used = 1;
    sys->tegrastats_lines = 30;
    sys->gpu_load_avg_pct = 70.0;
    sys->gpu_load_max_pct = 99.0;
    sys->power_avg_mw = 15000;
    sys->power_max_mw = 21000;
    sys->energy_mj = 52000;
    sys->nvml_used = 1;
    sys->n_gpus = 1;
    struct eb_gpu_summary *g = &sys->gpus[0];
    g->index = 0;
    snprintf(g->name, sizeof(g->name), "NVIDIA H100 <SXM>");
    g->util_avg_pct = 80.0;
    g->util_max_pct = 100.0;
    g->mem_used_max_mb = 4000;
    g->mem_total_mb = 81559;
    g->power_avg_mw = 300000;
    g->power_max_mw = 350000;
    g->energy_mj = 1050000;
    g->temp_max_c = 70;
    g->sm_clock_min_mhz = 1410;
    g->sm_clock_max_mhz = 1980;
    g->throttle_samples = 2;
    g->throttle_reasons = EB_SAMPLER_THROTTLE_HW_SLOWDOWN;
    snprintf(sys->warning, sizeof(sys->warning), "a sampler warning & <more>");
    eb_run_result_warn(r, "a run warning | with <markup>");
}

/* ---------------------------------------------------------------- reading facts back */

/* A growing list of "section\tlabel\tvalue" lines. */
struct facts {
    char **v;
    size_t n, cap;
};

static void facts_add(struct facts *f, const char *section, const char *label, const char *value)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 64;
        f->v = realloc(f->v, f->cap * sizeof(*f->v));
        ASSERT_TRUE(f->v != NULL);
    }
    size_t n = strlen(section) + strlen(label) + strlen(value) + 3;
    f->v[f->n] = malloc(n);
    ASSERT_TRUE(f->v[f->n] != NULL);
    snprintf(f->v[f->n], n, "%s\t%s\t%s", section, label, value);
    f->n++;
}

static void facts_free(struct facts *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->v[i]);
    free(f->v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Copies [p, end) into out, replacing `from` sequences by `to` ones (pairs, NULL-ended). */
static void unescape(char *out, size_t n, const char *p, const char *end, const char *const *pairs)
{
    size_t o = 0;
    while (p < end && o + 1 < n) {
        int hit = 0;
        for (size_t k = 0; pairs[k] != NULL; k += 2) {
            size_t l = strlen(pairs[k]);
            if ((size_t)(end - p) >= l && strncmp(p, pairs[k], l) == 0) {
                o += (size_t)snprintf(out + o, n - o, "%s", pairs[k + 1]);
                p += l;
                hit = 1;
                break;
            }
        }
        if (!hit)
            out[o++] = *p++;
    }
    out[o < n ? o : n - 1] = '\0';
}

/* report.md's escapes (report_md.c MD_ACTIVE) first, then its formatting marks. */
static const char *const md_esc[] = {"\\|", "|", "\\\\", "\\", "\\`", "`", "\\*", "*",
                                     "\\[", "[", "\\]",  "]",  "\\<", "<", "\\>", ">",
                                     "\\&", "&", "**",   "",   "`",   "",  NULL};
static const char *const html_esc[] = {"&lt;",
                                       "<",
                                       "&gt;",
                                       ">",
                                       "&quot;",
                                       "\"",
                                       "&#39;",
                                       "'",
                                       "&amp;",
                                       "&",
                                       "<code>",
                                       "",
                                       "</code>",
                                       "",
                                       "<span class=\"safe\">",
                                       "",
                                       "<span class=\"violations\">",
                                       "",
                                       "</span>",
                                       "",
                                       "<b>",
                                       "",
                                       "</b>",
                                       "",
                                       NULL};

/* The items of the "a · b · c" line under the title, each as one fact "run". */
static void run_items(struct facts *f, const char *p, const char *end, const char *const *esc)
{
    char item[8192];
    while (p < end) {
        const char *sep = strstr(p, " · ");
        const char *stop = sep != NULL && sep < end ? sep : end;
        unescape(item, sizeof(item), p, stop, esc);
        facts_add(f, "run", "", item);
        p = stop == end ? end : stop + strlen(" · ");
    }
}

/* The second cell of a table row "| a | b |" (escaped bars are "\\|"), or NULL when the row
 * has another number of cells. */
static const char *md_second_cell(const char *line, const char *end)
{
    const char *c2 = NULL;
    int seps = 0;
    for (const char *p = line + 1; p + 3 <= end; p++)
        if (p[0] == ' ' && p[1] == '|' && p[2] == ' ') {
            seps++;
            c2 = c2 != NULL ? c2 : p + 3;
        }
    return seps == 1 && strncmp(end - 2, " |", 2) == 0 ? c2 : NULL;
}

static void md_facts(const char *md, struct facts *f)
{
    char section[256] = "", label[8192], value[8192];
    for (const char *line = md; *line != '\0';) {
        const char *end = strchr(line, '\n');
        end = end != NULL ? end : line + strlen(line);
        size_t len = (size_t)(end - line);
        if (strncmp(line, "## ", 3) == 0) {
            snprintf(section, sizeof(section), "%.*s", (int)len - 3, line + 3);
        } else if (section[0] == '\0' && strncmp(line, "edgebench ", 10) == 0) {
            run_items(f, line, end, md_esc);
        } else if (strncmp(line, "**", 2) == 0 && strstr(line, ":** ") != NULL &&
                   strstr(line, ":** ") < end) {
            const char *colon = strstr(line, ":** ");
            unescape(label, sizeof(label), line + 2, colon, md_esc);
            unescape(value, sizeof(value), colon + 4, end, md_esc);
            facts_add(f, section, label, value);
        } else if (strcmp(section, "Warnings") == 0 && strncmp(line, "- ", 2) == 0) {
            unescape(value, sizeof(value), line + 2, end, md_esc);
            facts_add(f, section, "Warning", value);
        } else if (len > 4 && line[0] == '|' && line[1] == ' ' &&
                   strncmp(line, "| Item | Value |", 16) != 0) {
            const char *c2 = md_second_cell(line, end);
            if (c2 != NULL) {
                unescape(label, sizeof(label), line + 2, c2 - 3, md_esc);
                unescape(value, sizeof(value), c2, end - 2, md_esc);
                facts_add(f, section, label, value);
            }
        }
        line = *end != '\0' ? end + 1 : end;
    }
}

static void html_facts(const char *html, struct facts *f)
{
    char section[256] = "", label[8192], value[8192];
    for (const char *line = html; *line != '\0';) {
        const char *end = strchr(line, '\n');
        end = end != NULL ? end : line + strlen(line);
        const char *h2 = strncmp(line, "<h2", 3) == 0 ? strchr(line, '>') : NULL;
        const char *th = "<tr><th>", *mid = "</th><td>", *tail = "</td></tr>";
        if (h2 != NULL && h2 < end) {
            unescape(section, sizeof(section), h2 + 1, end - strlen("</h2>"), html_esc);
        } else if (section[0] == '\0' && strncmp(line, "<p class=\"note\">edgebench ", 26) == 0) {
            run_items(f, line + 16, end - strlen("</p>"), html_esc);
        } else if (strncmp(line, "<p class=\"warn\"><b>", 19) == 0) {
            const char *colon = strstr(line, ":</b> ");
            ASSERT_TRUE(colon != NULL && colon < end);
            unescape(label, sizeof(label), line + 19, colon, html_esc);
            unescape(value, sizeof(value), colon + 6, end - strlen("</p>"), html_esc);
            facts_add(f, section, label, value);
        } else if (strcmp(section, "Warnings") == 0 && strncmp(line, "<li>", 4) == 0) {
            unescape(value, sizeof(value), line + 4, end - strlen("</li>"), html_esc);
            facts_add(f, section, "Warning", value);
        } else if (strncmp(line, th, strlen(th)) == 0) {
            const char *m = strstr(line, mid);
            const char *td = m != NULL ? strstr(m + strlen(mid), "<td") : NULL;
            /* a two-column row: no second cell before its end */
            if (m != NULL && m < end && (td == NULL || td > end)) {
                unescape(label, sizeof(label), line + strlen(th), m, html_esc);
                unescape(value, sizeof(value), m + strlen(mid), end - strlen(tail), html_esc);
                facts_add(f, section, label, value);
            }
        }
        line = *end != '\0' ? end + 1 : end;
    }
}

static char *render(const struct eb_run_result *r, int html)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    ASSERT_TRUE(fp != NULL);
    if (html)
        eb_report_write_html(r, NULL, fp);
    else
        eb_report_write_md(r, fp);
    ASSERT_TRUE(fclose(fp) == 0);
    return buf;
}

static int has(const struct facts *f, const char *line)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->v[i], line) == 0)
            return 1;
    return 0;
}

/* ------------------------------------------------------------------------------ tests */

EB_TEST(md_and_html_print_the_same_facts)
{
    struct eb_run_result r;
    build(&r);
    char *md = render(&r, 0), *html = render(&r, 1);
    struct facts fm = {0}, fh = {0};
    md_facts(md, &fm);
    html_facts(html, &fh);
    qsort(fm.v, fm.n, sizeof(*fm.v), cmp_str);
    qsort(fh.v, fh.n, sizeof(*fh.v), cmp_str);
    for (size_t i = 0; i < fm.n || i < fh.n; i++) {
        const char *a = i < fm.n ? fm.v[i] : "(none)", *b = i < fh.n ? fh.v[i] : "(none)";
        if (strcmp(a, b) != 0)
            EB_FAIL("fact %zu differs:\n  report.md:   %s\n  report.html: %s", i, a, b);
    }
    /* Every fact of the list is printed, once. */
    struct eb_fact_list l;
    eb_report_facts_build(&r, &l);
    ASSERT_EQ_INT(l.oom, 0);
    ASSERT_EQ_INT(fm.n, l.n);

    /* Facts each report lacked before the list: now in both. */
    static const char *const expect[] = {
        "Slot 0: rgb\tHead\tv8 (80 classes)",
        "Slot 0: rgb\tThreads\t6",
        "Slot 0: rgb\tfp16 drift vs fp32\tmax abs 0.0123, mean abs 0.00045; 39 of 40 fp32 boxes "
        "matched (97.5%) over 8 frames",
        "Slot 0: rgb\tPreprocessing\tgpu (auto: CUDA device)",
        "Slot 0: rgb\tDetections\t30 in total; 2.50 per frame on average, at most 5 in one frame",
        "Slot 0: rgb\tInterference ratio (dual p50 / solo p50)\tend-to-end 1.250, inference 1.125",
        "Slot 0: rgb\tMemory\tpeak 3.00 GB (37.5% of the limit), 1 violation; backend host 10.0 "
        "MB, device peak 300.0 MB (the driver's free memory fell by 320.0 MB: cudaMemGetInfo)",
        "Slot 0: rgb\tmAP50-95\t0.3712",
        "Slot 0: rgb\tAP small\tn/a",
        "Slot 0: rgb\tMFU (model FLOPs utilisation)\tn/a — cpu: no peak in the table",
        "Slot 1: thermal\tfp16 drift vs fp32\tnot measured: the slot failed",
        "Memory Safety Summary\tOverall status\tVIOLATIONS",
        "Memory Safety Summary\tTotal violations\t1",
        "System metrics\tThrottling detected during the run\tHwSlowdown",
        "System metrics\tSwap used (max)\t0 MB",
        "System metrics\tEnergy (tegrastats)\t52000 mJ",
        "System metrics\tGPU 0 NVIDIA H100 <SXM>\tutil avg 80.0%, max 100.0%; memory used max "
        "4000 of 81559 MB; power avg 300000 mW, max 350000 mW; energy 1050000 mJ; temperature "
        "max 70 °C; SM clock 1410–1980 MHz; throttled samples 2 (HwSlowdown)",
        "System metrics\tSampler warning\ta sampler warning & <more>",
        "Warnings\tWarning\ta run warning | with <markup>",
        "run\t\tcommand edgebench run --model0 'a|b<c>'",
    };
    for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
        if (!has(&fm, expect[i]))
            EB_FAIL("report.md lacks the fact \"%s\"", expect[i]);
        if (!has(&fh, expect[i]))
            EB_FAIL("report.html lacks the fact \"%s\"", expect[i]);
    }
    /* The failed slot has no facts of a run: no warm-up, wall time, accuracy or profile. */
    for (size_t i = 0; i < fm.n; i++)
        if (strncmp(fm.v[i], "Slot 1: thermal\t", 16) == 0) {
            ASSERT_TRUE(strstr(fm.v[i], "\tWarm-up\t") == NULL);
            ASSERT_TRUE(strstr(fm.v[i], "\tmAP50") == NULL);
        }
    eb_report_facts_fini(&l);
    facts_free(&fm);
    facts_free(&fh);
    free(md);
    free(html);
    eb_run_result_fini(&r);
}

EB_TEST(fact_list_sections_in_report_order)
{
    struct eb_run_result r;
    build(&r);
    struct eb_fact_list l;
    eb_report_facts_build(&r, &l);
    ASSERT_TRUE(l.n > 0);
    for (size_t i = 1; i < l.n; i++) {
        const struct eb_fact *a = &l.items[i - 1], *b = &l.items[i];
        /* Sections never go back, except a slot's own sections before the next slot's. */
        int a_slot = a->section >= EB_FACT_SECTION_SLOT && a->section <= EB_FACT_SECTION_PROFILE;
        int b_slot = b->section >= EB_FACT_SECTION_SLOT && b->section <= EB_FACT_SECTION_PROFILE;
        if (a_slot && b_slot && b->slot > a->slot)
            continue;
        ASSERT_TRUE(b->section >= a->section);
        ASSERT_TRUE(b->key != NULL && b->label != NULL && b->value != NULL);
        ASSERT_TRUE((b->slot >= 0) == b_slot);
    }
    /* The failed slot has facts; a skipped slot naming no model has none. */
    ASSERT_TRUE(eb_report_facts_next(&l, 0, EB_FACT_SECTION_SLOT, 1) < l.n);
    eb_report_facts_fini(&l);
    r.slots[1].status = EB_SLOT_SKIPPED;
    r.slots[1].model_path[0] = '\0';
    eb_report_facts_build(&r, &l);
    ASSERT_EQ_INT(eb_report_facts_next(&l, 0, EB_FACT_SECTION_SLOT, 1), l.n);
    eb_report_facts_fini(&l);
    eb_report_facts_fini(NULL);
    eb_run_result_fini(&r);
}
