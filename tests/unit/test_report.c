/* report.json / report.md / env.json writers, rendered from hand-built results. */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/json.h"
#include "eb_test.h"
#include "harness/report/report.h"

#define GB 1000000000ull

/* ---------------------------------------------------------------- builders */

/* Fills an ok slot with `n` deterministic frame records and the statistics derived from them. */
static void fill_ok_slot(struct eb_slot_result *s, size_t n, double base_ms, int with_solo)
{
    s->status = EB_SLOT_OK;
    s->error = EB_OK;
    snprintf(s->model_path, sizeof(s->model_path), "/models/%s_yolo11n.onnx", s->name);
    snprintf(s->source, sizeof(s->source), "image_dir=/data/%s", s->name);
    snprintf(s->backend, sizeof(s->backend), "ort");
    snprintf(s->backend_version, sizeof(s->backend_version), "1.17.1");
    snprintf(s->device, sizeof(s->device), "cuda");
    snprintf(s->provider, sizeof(s->provider), "CUDAExecutionProvider");
    snprintf(s->input_dtype, sizeof(s->input_dtype), "float32");
    s->input_w = 640;
    s->input_h = 640;
    s->input_c = 3;
    snprintf(s->layout, sizeof(s->layout), "v8");
    s->num_classes = 80;
    s->threads = 4;
    s->frames_warmup = 5;
    s->frames_skipped = 1;

    s->records = calloc(n, sizeof(*s->records));
    s->n_records = n;
    double *vals[EB_STAGE_COUNT];
    for (int st = 0; st < EB_STAGE_COUNT; st++)
        vals[st] = calloc(n, sizeof(double));
    ASSERT_TRUE(s->records != NULL);
    uint64_t t = 1000000;
    for (size_t i = 0; i < n; i++) {
        struct eb_frame_record *rec = &s->records[i];
        rec->frame_index = (int64_t)i;
        rec->t_start_ns = t;
        /* Sub-microsecond parts test the rounding of raw samples. */
        rec->stage_ns[EB_STAGE_READ] = 1000000 + 1234 * (uint64_t)(i % 7) + 321;
        rec->stage_ns[EB_STAGE_PRE] = 2000000 + 777 * (uint64_t)(i % 5);
        rec->stage_ns[EB_STAGE_INFER] =
            (uint64_t)(base_ms * 1e6) + 10001 * (uint64_t)(i % 11) + 499;
        rec->stage_ns[EB_STAGE_POST] = 500000 + 333 * (uint64_t)(i % 3);
        rec->stage_ns[EB_STAGE_E2E] = rec->stage_ns[EB_STAGE_READ] + rec->stage_ns[EB_STAGE_PRE] +
                                      rec->stage_ns[EB_STAGE_INFER] + rec->stage_ns[EB_STAGE_POST];
        rec->n_dets = (uint32_t)(i % 4);
        rec->mem_bytes = 2 * GB;
        t += rec->stage_ns[EB_STAGE_E2E];
        for (int st = 0; st < EB_STAGE_COUNT; st++)
            vals[st][i] = (double)rec->stage_ns[st] / 1e6;
        s->dets_total += rec->n_dets;
        if (rec->n_dets > s->dets_per_frame_max)
            s->dets_per_frame_max = rec->n_dets;
    }
    for (int st = 0; st < EB_STAGE_COUNT; st++) {
        eb_stat_summarize_ms(vals[st], n, &s->stages[st]);
        free(vals[st]);
    }
    s->frames_measured = n;
    s->wall_s = (double)(t - 1000000) / 1e9;
    s->throughput_fps = (double)n / s->wall_s;
    s->dets_per_frame_mean = (double)s->dets_total / (double)n;

    /* Stored unsorted: the writers order by count. */
    s->n_classes = 3;
    s->classes = calloc(3, sizeof(*s->classes));
    s->classes[0] = (struct eb_class_count){.cls = 2, .name = "car", .count = 40};
    s->classes[1] = (struct eb_class_count){.cls = 0, .name = "person", .count = 90};
    s->classes[2] = (struct eb_class_count){.cls = 7, .name = "truck", .count = 5};

    if (with_solo) {
        s->has_solo = 1;
        double solo[5] = {9.0, 9.5, 10.0, 10.5, 11.0};
        eb_stat_summarize_ms(solo, 5, &s->solo_e2e);
        double solo_i[5] = {6.0, 6.2, 6.4, 6.6, 6.8};
        eb_stat_summarize_ms(solo_i, 5, &s->solo_infer);
        s->interference_ratio = s->stages[EB_STAGE_E2E].p50 / s->solo_e2e.p50;
        s->interference_ratio_infer = s->stages[EB_STAGE_INFER].p50 / s->solo_infer.p50;
    }
    s->backend_host_bytes = 123456789;
    s->backend_device_peak_bytes = 987654321;
}

static void fill_common(struct eb_run_result *r, const char *mode)
{
    r->version = "0.1.0";
    snprintf(r->mode, sizeof(r->mode), "%s", mode);
    snprintf(r->started_at, sizeof(r->started_at), "2025-03-01T10:20:30Z");
    r->duration_s = 12.5;
    snprintf(r->command_line, sizeof(r->command_line), "edgebench run --mode %s", mode);
    r->config = NULL;
    r->mem.limit_gb = 8.0;
    r->mem.limit_type = EB_LIMIT_HARD;
    snprintf(r->mem.methods, sizeof(r->mem.methods),
             "ort cuda gpu_mem_limit; tensorrt workspace 4.00 GB; per-frame monitoring");
    r->mem.unified = 0;
    snprintf(r->mem.monitored, sizeof(r->mem.monitored), "GPU VRAM (backend device bytes)");
    r->mem.system_total_bytes = 64 * GB;
    r->mem.peak_system_used_bytes = 10 * GB;
    r->mem.peak_rss_bytes = 2 * GB;
    r->mem.peak_gpu_bytes = 5 * GB;
    r->mem.peak_bytes = 5 * GB;
    r->sys.n_samples = 25;
    r->sys.duration_s = 12.4;
    r->sys.cpu_avg_pct = 35.5;
    r->sys.cpu_max_pct = 80.25;
    r->sys.ram_used_max_mb = 10240;
    r->sys.ram_used_avg_mb = 9000;
    r->sys.ram_total_mb = 65536;
    r->sys.swap_used_max_mb = 0;
    r->sys.rss_max_mb = 2048;
    r->sys.n_zones = 2;
    snprintf(r->sys.zones[0].name, sizeof(r->sys.zones[0].name), "cpu-thermal");
    r->sys.zones[0].max_c = 61.5;
    r->sys.zones[0].avg_c = 55.25;
    snprintf(r->sys.zones[1].name, sizeof(r->sys.zones[1].name), "gpu-thermal");
    r->sys.zones[1].max_c = 58.0;
    r->sys.zones[1].avg_c = 52.0;
    r->sys.power_avg_mw = NAN;
    r->sys.power_max_mw = NAN;
    r->sys.energy_mj = NAN;
    snprintf(r->sys.warning, sizeof(r->sys.warning), "tegrastats not found: not a Jetson");
    snprintf(r->output_dir, sizeof(r->output_dir), "/tmp/out/run-1");
}

/* rgb ok (with solo baseline), thermal failed; pair invalid; 3 violations. */
static void build_failed_variant(struct eb_run_result *r)
{
    eb_run_result_init(r);
    fill_common(r, "dual");
    fill_ok_slot(&r->slots[0], 50, 7.0, 1);
    r->slots[0].mem_peak_bytes = 3 * GB;
    r->slots[0].violations = 3;
    struct eb_slot_result *t = &r->slots[1];
    t->status = EB_SLOT_FAILED;
    t->error = EB_ERR_BACKEND;
    snprintf(t->message, sizeof(t->message),
             "slot thermal: failed to load /models/thermal.onnx: unsupported op Foo | opset 99");
    snprintf(t->model_path, sizeof(t->model_path), "/models/thermal.onnx");
    snprintf(t->source, sizeof(t->source), "image_dir=/data/thermal");
    snprintf(t->backend, sizeof(t->backend), "ort");
    snprintf(t->device, sizeof(t->device), "cuda");
    t->mem_peak_bytes = GB / 2;
    r->mem.violations = 3;
    r->pair.valid = 0;
    eb_run_result_warn(r, "gpu_mem_limit_gb 12.0 clamped to 8.0");
}

/* Both slots ok, valid pair, no violations; thermal closer to the limit. */
static void build_dual_variant(struct eb_run_result *r)
{
    eb_run_result_init(r);
    fill_common(r, "dual");
    fill_ok_slot(&r->slots[0], 40, 6.0, 0);
    fill_ok_slot(&r->slots[1], 40, 9.0, 1);
    r->slots[0].mem_peak_bytes = 2 * GB;
    r->slots[1].mem_peak_bytes = 6 * GB;
    r->pair.valid = 1;
    r->pair.pairs = 40;
    double lat[4] = {12.0, 13.0, 14.0, 20.0};
    eb_stat_summarize_ms(lat, 4, &r->pair.latency);
    r->pair.pair_fps = 71.5;
}

static char *render_json(const struct eb_run_result *r)
{
    struct eb_json_writer w;
    eb_json_writer_init_mem(&w, 1);
    eb_report_write_json(r, &w);
    ASSERT_TRUE(!eb_json_writer_error(&w));
    char *text = eb_json_writer_take(&w, NULL);
    ASSERT_TRUE(text != NULL);
    return text;
}

static struct eb_json_value *parse_report(const struct eb_run_result *r)
{
    char *text = render_json(r);
    struct eb_json_value *root = NULL;
    struct eb_diag diag = {0};
    enum eb_status st = eb_json_parse(text, strlen(text), &root, &diag);
    if (st != EB_OK)
        EB_FAIL("report.json does not parse: %s", diag.msg);
    free(text);
    return root;
}

/* What `write` (a Markdown writer: report.md, summary.md) renders for `r`; caller frees. */
static char *render_with(const struct eb_run_result *r,
                         void (*write)(const struct eb_run_result *, FILE *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    ASSERT_TRUE(fp != NULL);
    write(r, fp);
    ASSERT_TRUE(fclose(fp) == 0);
    ASSERT_TRUE(buf != NULL);
    return buf;
}

static char *render_md(const struct eb_run_result *r)
{
    return render_with(r, eb_report_write_md);
}

static const struct eb_json_value *need(const struct eb_json_value *root, const char *path)
{
    const struct eb_json_value *v = eb_json_path(root, path);
    if (v == NULL)
        EB_FAIL("missing key %s", path);
    return v;
}

static double num_at(const struct eb_json_value *root, const char *path)
{
    const struct eb_json_value *v = need(root, path);
    if (v->type != EB_JSON_NUMBER)
        EB_FAIL("%s is not a number (type %d)", path, (int)v->type);
    return v->num;
}

static const char *str_at(const struct eb_json_value *root, const char *path)
{
    const struct eb_json_value *v = need(root, path);
    if (v->type != EB_JSON_STRING)
        EB_FAIL("%s is not a string (type %d)", path, (int)v->type);
    return v->str;
}

static int is_null_at(const struct eb_json_value *root, const char *path)
{
    return need(root, path)->type == EB_JSON_NULL;
}

/* Offset of `needle` in `hay`, failing when absent. */
static long pos_of(const char *hay, const char *needle)
{
    const char *p = strstr(hay, needle);
    if (p == NULL)
        EB_FAIL("report.md lacks \"%s\"", needle);
    return (long)(p - hay);
}

/*
 * Every key of object `a` exists in `b`, recursively through objects (null in either stands
 * for any value, so a skipped slot's null solo_baseline matches an object).
 */
static void same_keys(const struct eb_json_value *a, const struct eb_json_value *b,
                      const char *where)
{
    if (a->type != EB_JSON_OBJECT || b->type != EB_JSON_OBJECT)
        return;
    for (size_t i = 0; i < a->n; i++) {
        const struct eb_json_value *bv = eb_json_get(b, a->keys[i]);
        if (bv == NULL)
            EB_FAIL("%s/%s missing in the other slot", where, a->keys[i]);
        same_keys(&a->items[i], bv, a->keys[i]);
    }
}

/* ---------------------------------------------------------------- report.json */

EB_TEST(json_failed_slot_round_trip)
{
    struct eb_run_result r;
    build_failed_variant(&r);
    struct eb_json_value *root = parse_report(&r);

    ASSERT_EQ_INT(num_at(root, "schema_version"), EB_REPORT_SCHEMA_VERSION);
    ASSERT_STREQ(str_at(root, "edgebench_version"), "0.1.0");
    ASSERT_STREQ(str_at(root, "mode"), "dual");
    ASSERT_STREQ(str_at(root, "started_at"), "2025-03-01T10:20:30Z");
    ASSERT_NEAR(num_at(root, "duration_s"), 12.5, 0);
    ASSERT_EQ_INT(need(root, "interrupted")->type, EB_JSON_BOOL);
    ASSERT_EQ_INT(need(root, "interrupted")->num, 0);
    ASSERT_TRUE(is_null_at(root, "interrupt_signal"));
    ASSERT_EQ_INT(num_at(root, "exit_code"), 0);
    ASSERT_STREQ(str_at(root, "command_line"), "edgebench run --mode dual");
    ASSERT_TRUE(is_null_at(root, "config"));
    ASSERT_TRUE(is_null_at(root, "pair"));
    ASSERT_STREQ(str_at(root, "output_dir"), "/tmp/out/run-1");
    ASSERT_EQ_INT(need(root, "warnings")->n, 1);
    ASSERT_STREQ(str_at(root, "warnings/0"), "gpu_mem_limit_gb 12.0 clamped to 8.0");

    /* slots: always two, in index order */
    ASSERT_EQ_INT(need(root, "slots")->n, 2);
    ASSERT_STREQ(str_at(root, "slots/0/name"), "rgb");
    ASSERT_STREQ(str_at(root, "slots/1/name"), "thermal");
    ASSERT_EQ_INT(num_at(root, "slots/1/index"), 1);
    ASSERT_STREQ(str_at(root, "slots/0/status"), "ok");
    ASSERT_TRUE(is_null_at(root, "slots/0/error"));
    ASSERT_TRUE(is_null_at(root, "slots/0/message"));
    ASSERT_STREQ(str_at(root, "slots/1/status"), "failed");
    ASSERT_STREQ(str_at(root, "slots/1/error"), "backend");
    ASSERT_STREQ(str_at(root, "slots/1/message"), r.slots[1].message);

    /* the ok slot */
    const struct eb_slot_result *s = &r.slots[0];
    ASSERT_STREQ(str_at(root, "slots/0/model"), s->model_path);
    ASSERT_STREQ(str_at(root, "slots/0/source"), s->source);
    ASSERT_STREQ(str_at(root, "slots/0/backend_version"), "1.17.1");
    ASSERT_STREQ(str_at(root, "slots/0/provider"), "CUDAExecutionProvider");
    ASSERT_STREQ(str_at(root, "slots/0/input/dtype"), "float32");
    ASSERT_EQ_INT(num_at(root, "slots/0/input/width"), 640);
    ASSERT_EQ_INT(num_at(root, "slots/0/input/channels"), 3);
    ASSERT_STREQ(str_at(root, "slots/0/layout"), "v8");
    ASSERT_EQ_INT(num_at(root, "slots/0/num_classes"), 80);
    ASSERT_EQ_INT(num_at(root, "slots/0/threads"), 4);
    ASSERT_EQ_INT(num_at(root, "slots/0/frames/measured"), 50);
    ASSERT_EQ_INT(num_at(root, "slots/0/frames/warmup"), 5);
    ASSERT_EQ_INT(num_at(root, "slots/0/frames/skipped"), 1);
    ASSERT_NEAR(num_at(root, "slots/0/wall_s"), s->wall_s, 0);
    ASSERT_NEAR(num_at(root, "slots/0/throughput_fps"), s->throughput_fps, 0);
    const struct eb_stat_summary *e2e = &s->stages[EB_STAGE_E2E];
    ASSERT_EQ_INT(num_at(root, "slots/0/latency_ms/end_to_end/count"), 50);
    ASSERT_NEAR(num_at(root, "slots/0/latency_ms/end_to_end/p99"), e2e->p99, 0);
    ASSERT_NEAR(num_at(root, "slots/0/latency_ms/end_to_end/mean"), e2e->mean, 0);
    ASSERT_NEAR(num_at(root, "slots/0/latency_ms/end_to_end/cov"), e2e->cov, 0);
    ASSERT_NEAR(num_at(root, "slots/0/latency_ms/end_to_end/fps"), e2e->fps, 0);
    ASSERT_NEAR(num_at(root, "slots/0/latency_ms/end_to_end/p50_ci/low"), e2e->p50_ci.lo, 0);
    ASSERT_NEAR(num_at(root, "slots/0/latency_ms/end_to_end/p50_ci/high"), e2e->p50_ci.hi, 0);
    ASSERT_EQ_INT(num_at(root, "slots/0/latency_ms/end_to_end/p50_ci/rank_low"),
                  e2e->p50_ci.rank_lo);
    ASSERT_TRUE(num_at(root, "slots/0/latency_ms/end_to_end/p50_ci/coverage") >= 0.95);
    ASSERT_TRUE(is_null_at(root, "slots/0/latency_ms/end_to_end/p99_ci")); /* n = 50 < 368 */
    ASSERT_STREQ(str_at(root, "slots/0/latency_ms/end_to_end/ci_method"),
                 "order-statistic binomial, 95%");
    ASSERT_NEAR(num_at(root, "slots/0/latency_ms/inference/p50"), s->stages[EB_STAGE_INFER].p50, 0);
    ASSERT_NEAR(num_at(root, "slots/0/latency_ms/read/max"), s->stages[EB_STAGE_READ].max, 0);
    ASSERT_NEAR(num_at(root, "slots/0/latency_ms/preprocess/min"), s->stages[EB_STAGE_PRE].min, 0);
    ASSERT_NEAR(num_at(root, "slots/0/latency_ms/postprocess/p95"), s->stages[EB_STAGE_POST].p95,
                0);
    ASSERT_EQ_INT(num_at(root, "slots/0/detections/total"), s->dets_total);
    ASSERT_NEAR(num_at(root, "slots/0/detections/per_frame_mean"), s->dets_per_frame_mean, 0);
    ASSERT_EQ_INT(num_at(root, "slots/0/detections/per_frame_max"), 3);
    ASSERT_EQ_INT(need(root, "slots/0/detections/per_class")->n, 3);
    ASSERT_STREQ(str_at(root, "slots/0/detections/per_class/0/name"), "person");
    ASSERT_EQ_INT(num_at(root, "slots/0/detections/per_class/0/class"), 0);
    ASSERT_EQ_INT(num_at(root, "slots/0/detections/per_class/0/count"), 90);
    ASSERT_STREQ(str_at(root, "slots/0/detections/per_class/2/name"), "truck");
    ASSERT_NEAR(num_at(root, "slots/0/solo_baseline/end_to_end/p50"), 10.0, 0);
    ASSERT_NEAR(num_at(root, "slots/0/solo_baseline/inference/p50"), 6.4, 0);
    ASSERT_NEAR(num_at(root, "slots/0/solo_baseline/interference_ratio"), s->interference_ratio, 0);
    ASSERT_NEAR(num_at(root, "slots/0/solo_baseline/interference_ratio_inference"),
                s->interference_ratio_infer, 0);
    ASSERT_NEAR(num_at(root, "slots/0/memory/peak_gb"), 3.0, 1e-12);
    ASSERT_EQ_INT(num_at(root, "slots/0/memory/violations"), 3);
    ASSERT_EQ_INT(num_at(root, "slots/0/memory/backend_host_bytes"), 123456789);
    ASSERT_EQ_INT(num_at(root, "slots/0/memory/backend_device_peak_bytes"), 987654321);
    ASSERT_EQ_INT(need(root, "slots/0/samples/end_to_end_ms")->n, 50);
    ASSERT_EQ_INT(need(root, "slots/0/samples/inference_ms")->n, 50);

    /* the failed slot: same keys, nothing measured */
    ASSERT_STREQ(str_at(root, "slots/1/model"), "/models/thermal.onnx");
    ASSERT_EQ_INT(num_at(root, "slots/1/frames/measured"), 0);
    ASSERT_TRUE(is_null_at(root, "slots/1/wall_s"));
    ASSERT_TRUE(is_null_at(root, "slots/1/throughput_fps"));
    ASSERT_EQ_INT(num_at(root, "slots/1/latency_ms/end_to_end/count"), 0);
    ASSERT_TRUE(is_null_at(root, "slots/1/latency_ms/end_to_end/p99"));
    ASSERT_TRUE(is_null_at(root, "slots/1/solo_baseline"));
    ASSERT_EQ_INT(need(root, "slots/1/detections/per_class")->n, 0);
    ASSERT_EQ_INT(need(root, "slots/1/samples/end_to_end_ms")->type, EB_JSON_ARRAY);
    ASSERT_EQ_INT(need(root, "slots/1/samples/end_to_end_ms")->n, 0);
    ASSERT_TRUE(is_null_at(root, "slots/1/input/width"));
    same_keys(need(root, "slots/0"), need(root, "slots/1"), "slots/0");
    same_keys(need(root, "slots/1"), need(root, "slots/0"), "slots/1");

    /* memory */
    ASSERT_NEAR(num_at(root, "memory/limit_gb"), 8.0, 0);
    ASSERT_STREQ(str_at(root, "memory/limit_type"), "hard");
    ASSERT_EQ_INT(need(root, "memory/methods")->n, 3);
    ASSERT_STREQ(str_at(root, "memory/methods/0"), "ort cuda gpu_mem_limit");
    ASSERT_STREQ(str_at(root, "memory/methods/1"), "tensorrt workspace 4.00 GB");
    ASSERT_STREQ(str_at(root, "memory/methods/2"), "per-frame monitoring");
    ASSERT_EQ_INT(need(root, "memory/unified")->type, EB_JSON_BOOL);
    ASSERT_EQ_INT(need(root, "memory/unified")->num, 0);
    ASSERT_STREQ(str_at(root, "memory/monitored"), "GPU VRAM (backend device bytes)");
    ASSERT_STREQ(str_at(root, "memory/overall"), "VIOLATIONS");
    ASSERT_EQ_INT(num_at(root, "memory/violations"), 3);
    ASSERT_NEAR(num_at(root, "memory/peak_gb"), 5.0, 1e-12);
    ASSERT_NEAR(num_at(root, "memory/system_total_gb"), 64.0, 1e-12);
    ASSERT_NEAR(num_at(root, "memory/peak_system_used_gb"), 10.0, 1e-12);
    ASSERT_NEAR(num_at(root, "memory/peak_rss_gb"), 2.0, 1e-12);
    ASSERT_NEAR(num_at(root, "memory/peak_gpu_gb"), 5.0, 1e-12);
    ASSERT_EQ_INT(num_at(root, "memory/pressure_warnings"), 0);
    ASSERT_EQ_INT(need(root, "memory/slots_by_closeness")->n, 2);
    ASSERT_STREQ(str_at(root, "memory/slots_by_closeness/0/slot"), "rgb");
    ASSERT_NEAR(num_at(root, "memory/slots_by_closeness/0/peak_gb"), 3.0, 1e-12);
    ASSERT_NEAR(num_at(root, "memory/slots_by_closeness/0/fraction_of_limit"), 3.0 / 8.0, 1e-12);
    ASSERT_STREQ(str_at(root, "memory/slots_by_closeness/1/slot"), "thermal");
    ASSERT_NEAR(num_at(root, "memory/slots_by_closeness/1/fraction_of_limit"), 0.5 / 8.0, 1e-12);

    /* system */
    ASSERT_EQ_INT(num_at(root, "system/n_samples"), 25);
    ASSERT_NEAR(num_at(root, "system/cpu_max_pct"), 80.25, 0);
    ASSERT_NEAR(num_at(root, "system/ram_total_mb"), 65536, 0);
    ASSERT_EQ_INT(need(root, "system/thermal_zones")->n, 2);
    ASSERT_STREQ(str_at(root, "system/thermal_zones/0/name"), "cpu-thermal");
    ASSERT_NEAR(num_at(root, "system/thermal_zones/0/max_c"), 61.5, 0);
    ASSERT_NEAR(num_at(root, "system/thermal_zones/1/avg_c"), 52.0, 0);
    ASSERT_EQ_INT(need(root, "system/tegrastats/used")->type, EB_JSON_BOOL);
    ASSERT_EQ_INT(num_at(root, "system/tegrastats/lines"), 0);
    ASSERT_TRUE(is_null_at(root, "system/tegrastats/power_avg_mw"));
    ASSERT_TRUE(is_null_at(root, "system/tegrastats/energy_mj"));
    ASSERT_STREQ(str_at(root, "system/warning"), "tegrastats not found: not a Jetson");

    eb_json_free(root);
    eb_run_result_fini(&r);
}

EB_TEST(json_samples_are_raw_values_rounded_to_microseconds)
{
    struct eb_run_result r;
    build_failed_variant(&r);
    struct eb_json_value *root = parse_report(&r);
    const struct eb_slot_result *s = &r.slots[0];
    for (size_t i = 0; i < s->n_records; i++) {
        char path[96];
        snprintf(path, sizeof(path), "slots/0/samples/end_to_end_ms/%zu", i);
        double want = round((double)s->records[i].stage_ns[EB_STAGE_E2E] / 1000.0) / 1000.0;
        ASSERT_NEAR(num_at(root, path), want, 1e-9);
        snprintf(path, sizeof(path), "slots/0/samples/inference_ms/%zu", i);
        want = round((double)s->records[i].stage_ns[EB_STAGE_INFER] / 1000.0) / 1000.0;
        ASSERT_NEAR(num_at(root, path), want, 1e-9);
    }
    /* 7.000499 ms rounds to 7.000 (the first inference value). */
    ASSERT_NEAR(num_at(root, "slots/0/samples/inference_ms/0"), 7.0, 0);
    eb_json_free(root);
    eb_run_result_fini(&r);
}

EB_TEST(json_dual_pair_valid_and_safe)
{
    struct eb_run_result r;
    build_dual_variant(&r);
    struct eb_json_value *root = parse_report(&r);
    ASSERT_EQ_INT(need(root, "slots")->n, 2);
    ASSERT_STREQ(str_at(root, "slots/0/status"), "ok");
    ASSERT_STREQ(str_at(root, "slots/1/status"), "ok");
    ASSERT_TRUE(is_null_at(root, "slots/0/solo_baseline"));
    ASSERT_NEAR(num_at(root, "slots/1/solo_baseline/interference_ratio"),
                r.slots[1].interference_ratio, 0);
    ASSERT_EQ_INT(need(root, "pair")->type, EB_JSON_OBJECT);
    ASSERT_EQ_INT(num_at(root, "pair/pairs"), 40);
    ASSERT_NEAR(num_at(root, "pair/latency_ms/p50"), r.pair.latency.p50, 0);
    ASSERT_NEAR(num_at(root, "pair/latency_ms/p99"), r.pair.latency.p99, 0);
    ASSERT_EQ_INT(num_at(root, "pair/latency_ms/count"), 4);
    ASSERT_NEAR(num_at(root, "pair/pair_fps"), 71.5, 0);
    ASSERT_STREQ(str_at(root, "memory/overall"), "SAFE");
    ASSERT_EQ_INT(num_at(root, "memory/violations"), 0);
    /* thermal (6 GB) is closer to the limit than rgb (2 GB) */
    ASSERT_STREQ(str_at(root, "memory/slots_by_closeness/0/slot"), "thermal");
    ASSERT_NEAR(num_at(root, "memory/slots_by_closeness/0/fraction_of_limit"), 0.75, 1e-12);
    ASSERT_STREQ(str_at(root, "memory/slots_by_closeness/1/slot"), "rgb");
    eb_json_free(root);
    eb_run_result_fini(&r);
}

EB_TEST(json_non_finite_numbers_become_null)
{
    struct eb_run_result r;
    build_dual_variant(&r);
    r.slots[0].throughput_fps = NAN;
    r.slots[1].interference_ratio = INFINITY;
    r.slots[0].stages[EB_STAGE_E2E].cov = -INFINITY;
    r.pair.pair_fps = NAN;
    r.duration_s = NAN;
    r.sys.tegrastats_used = 1;
    r.sys.tegrastats_lines = 12;
    r.sys.gpu_load_avg_pct = 40.0;
    r.sys.power_avg_mw = NAN;
    r.sys.zones[0].max_c = NAN;
    r.mem.limit_gb = 0; /* fraction_of_limit would divide by zero */
    struct eb_json_value *root = parse_report(&r);
    ASSERT_TRUE(is_null_at(root, "slots/0/throughput_fps"));
    ASSERT_TRUE(is_null_at(root, "slots/1/solo_baseline/interference_ratio"));
    ASSERT_TRUE(is_null_at(root, "slots/0/latency_ms/end_to_end/cov"));
    ASSERT_NEAR(num_at(root, "slots/0/latency_ms/end_to_end/p50"),
                r.slots[0].stages[EB_STAGE_E2E].p50, 0);
    ASSERT_TRUE(is_null_at(root, "pair/pair_fps"));
    ASSERT_TRUE(is_null_at(root, "duration_s"));
    ASSERT_EQ_INT(need(root, "system/tegrastats/used")->num, 1);
    ASSERT_NEAR(num_at(root, "system/tegrastats/gpu_load_avg_pct"), 40.0, 0);
    ASSERT_TRUE(is_null_at(root, "system/tegrastats/power_avg_mw"));
    ASSERT_TRUE(is_null_at(root, "system/thermal_zones/0/max_c"));
    ASSERT_TRUE(is_null_at(root, "memory/slots_by_closeness/0/fraction_of_limit"));
    eb_json_free(root);

    /* the markdown shows n/a rather than "nan" */
    char *md = render_md(&r);
    ASSERT_TRUE(strstr(md, "nan") == NULL);
    ASSERT_TRUE(strstr(md, "| inf |") == NULL);
    ASSERT_TRUE(strstr(md, "| -inf |") == NULL);
    ASSERT_TRUE(strstr(md, "inf%") == NULL);
    ASSERT_TRUE(strstr(md, " inf ") == NULL);
    ASSERT_CONTAINS(md, "n/a");
    free(md);
    eb_run_result_fini(&r);
}

EB_TEST(json_skipped_slot_has_every_key)
{
    struct eb_run_result r;
    eb_run_result_init(&r);
    fill_common(&r, "rgb");
    fill_ok_slot(&r.slots[0], 20, 5.0, 1);
    /* thermal left at its init state: skipped, nothing known */
    snprintf(r.slots[1].message, sizeof(r.slots[1].message), "mode rgb does not use this slot");
    struct eb_json_value *root = parse_report(&r);
    ASSERT_EQ_INT(need(root, "slots")->n, 2);
    ASSERT_STREQ(str_at(root, "slots/1/status"), "skipped");
    ASSERT_TRUE(is_null_at(root, "slots/1/error"));
    ASSERT_STREQ(str_at(root, "slots/1/message"), "mode rgb does not use this slot");
    ASSERT_TRUE(is_null_at(root, "slots/1/model"));
    ASSERT_TRUE(is_null_at(root, "slots/1/backend"));
    ASSERT_TRUE(is_null_at(root, "slots/1/input/dtype"));
    ASSERT_TRUE(is_null_at(root, "slots/1/detections/per_frame_mean"));
    ASSERT_EQ_INT(num_at(root, "slots/1/detections/total"), 0);
    ASSERT_NEAR(num_at(root, "slots/1/memory/peak_gb"), 0, 0);
    same_keys(need(root, "slots/0"), need(root, "slots/1"), "slots/0");
    same_keys(need(root, "slots/1"), need(root, "slots/0"), "slots/1");
    eb_json_free(root);

    char *md = render_md(&r);
    ASSERT_CONTAINS(md, "## Slot 1: thermal");
    ASSERT_CONTAINS(md, "mode rgb does not use this slot");
    free(md);
    eb_run_result_fini(&r);
}

EB_TEST(json_system_gpus_energy_per_frame_and_throttle)
{
    struct eb_run_result r;
    build_dual_variant(&r); /* 40 + 40 measured frames */
    struct eb_json_value *root = parse_report(&r);
    /* No NVML, no tegrastats: no energy, not throttled, every key still present. */
    ASSERT_EQ_INT(need(root, "system/nvml_used")->type, EB_JSON_BOOL);
    ASSERT_EQ_INT(need(root, "system/nvml_used")->num, 0);
    ASSERT_TRUE(is_null_at(root, "system/nvml_warning"));
    ASSERT_EQ_INT(need(root, "system/gpus")->n, 0);
    ASSERT_TRUE(is_null_at(root, "system/energy_per_frame_mj"));
    ASSERT_TRUE(is_null_at(root, "system/energy_source"));
    ASSERT_EQ_INT(need(root, "system/throttled")->num, 0);
    ASSERT_EQ_INT(need(root, "system/throttle_reasons")->n, 0);
    eb_json_free(root);

    /* tegrastats energy when there is no NVML: the measured window's, not the whole span's. */
    r.sys.tegrastats_used = 1;
    r.sys.energy_mj = 950.0;
    r.sys.window_energy_mj = 800.0;
    snprintf(r.sys.nvml_warning, sizeof(r.sys.nvml_warning), "NVML not available: no library");
    root = parse_report(&r);
    ASSERT_NEAR(num_at(root, "system/energy_per_frame_mj"), 10.0, 1e-12);
    ASSERT_NEAR(num_at(root, "system/energy_window_mj"), 800.0, 0);
    ASSERT_STREQ(str_at(root, "system/energy_source"), "tegrastats");
    ASSERT_STREQ(str_at(root, "system/nvml_warning"), "NVML not available: no library");
    eb_json_free(root);

    /* NVML wins, summed over the GPUs; a power-brake slowdown on GPU 1 is throttling, its
     * SyncBoost is listed but is not. */
    r.sys.nvml_warning[0] = '\0';
    r.sys.nvml_used = 1;
    r.sys.n_gpus = 2;
    for (int i = 0; i < 2; i++) {
        struct eb_gpu_summary *g = &r.sys.gpus[i];
        g->index = i;
        snprintf(g->name, sizeof(g->name), "NVIDIA H100 80GB HBM3 #%d", i);
        g->util_avg_pct = 50.5 + i;
        g->util_max_pct = 99;
        g->mem_used_max_mb = 2048;
        g->mem_total_mb = 81559;
        g->power_avg_mw = 250000;
        g->power_max_mw = 300000;
        g->temp_max_c = 70;
        g->sm_clock_min_mhz = 1410;
        g->sm_clock_max_mhz = 1980;
    }
    r.sys.gpus[0].energy_mj = 1000.0;
    r.sys.gpus[1].energy_mj = 600.0;
    r.sys.window_energy_mj = 1600.0; /* both GPUs over the window */
    r.sys.gpus[1].temp_max_c = NAN;
    r.sys.gpus[1].throttle_samples = 3;
    r.sys.gpus[1].throttle_reasons =
        EB_SAMPLER_THROTTLE_HW_POWER_BRAKE | EB_SAMPLER_THROTTLE_SYNC_BOOST;
    root = parse_report(&r);
    ASSERT_EQ_INT(need(root, "system/gpus")->n, 2);
    ASSERT_EQ_INT(num_at(root, "system/gpus/1/index"), 1);
    ASSERT_STREQ(str_at(root, "system/gpus/1/name"), "NVIDIA H100 80GB HBM3 #1");
    ASSERT_NEAR(num_at(root, "system/gpus/1/util_avg_pct"), 51.5, 0);
    ASSERT_NEAR(num_at(root, "system/gpus/0/mem_total_mb"), 81559, 0);
    ASSERT_NEAR(num_at(root, "system/gpus/0/power_max_mw"), 300000, 0);
    ASSERT_NEAR(num_at(root, "system/gpus/1/energy_mj"), 600, 0);
    ASSERT_NEAR(num_at(root, "system/gpus/0/sm_clock_min_mhz"), 1410, 0);
    ASSERT_TRUE(is_null_at(root, "system/gpus/1/temp_max_c"));
    ASSERT_EQ_INT(num_at(root, "system/gpus/1/throttle_samples"), 3);
    ASSERT_EQ_INT(need(root, "system/gpus/1/throttle_reasons")->n, 2);
    ASSERT_STREQ(str_at(root, "system/gpus/1/throttle_reasons/0"), "SyncBoost");
    ASSERT_STREQ(str_at(root, "system/gpus/1/throttle_reasons/1"), "HwPowerBrakeSlowdown");
    ASSERT_NEAR(num_at(root, "system/energy_per_frame_mj"), 20.0, 1e-12);
    ASSERT_STREQ(str_at(root, "system/energy_source"), "nvml");
    ASSERT_EQ_INT(need(root, "system/throttled")->num, 1);
    ASSERT_EQ_INT(need(root, "system/throttle_reasons")->n, 1);
    ASSERT_STREQ(str_at(root, "system/throttle_reasons/0"), "HwPowerBrakeSlowdown");
    eb_json_free(root);

    char *md = render_md(&r);
    ASSERT_CONTAINS(md, "**Throttling detected during the run:** HwPowerBrakeSlowdown\n");
    ASSERT_CONTAINS(md, "| Energy per measured frame | 20.0 mJ (NVML, all GPUs; 1600.0 mJ over the "
                        "measured window) |");
    ASSERT_CONTAINS(md, "### GPU (NVML)");
    ASSERT_CONTAINS(md, "| GPU 1 NVIDIA H100 80GB HBM3 #1 | util avg 51.5%, max 99.0%; memory "
                        "used max 2048 of 81559 MB; power avg 250000 mW, max 300000 mW; energy "
                        "600 mJ; temperature max n/a °C; SM clock 1410–1980 MHz; throttled "
                        "samples 3 (SyncBoost, HwPowerBrakeSlowdown) |");
    /* the GPU table comes after the thermal zones, inside System metrics */
    ASSERT_TRUE(pos_of(md, "| Thermal zone ") < pos_of(md, "### GPU (NVML)"));
    free(md);

    /* No measured frame: no energy per frame. */
    r.slots[0].frames_measured = 0;
    r.slots[1].frames_measured = 0;
    root = parse_report(&r);
    ASSERT_TRUE(is_null_at(root, "system/energy_per_frame_mj"));
    ASSERT_TRUE(is_null_at(root, "system/energy_source"));
    eb_json_free(root);
    md = render_md(&r);
    ASSERT_TRUE(strstr(md, "Energy per measured frame") == NULL);
    free(md);
    eb_run_result_fini(&r);
}

/* ---------------------------------------------------------------- report.md */

EB_TEST(md_sections_in_order)
{
    struct eb_run_result r;
    build_dual_variant(&r);
    eb_run_result_warn(&r, "thermal source has 16-bit frames; AGC applied");
    char *md = render_md(&r);
    ASSERT_TRUE(strncmp(md, "# edgebench report: dual mode, 2025-03-01T10:20:30Z", 51) == 0);
    long mem = pos_of(md, "## Memory Safety Summary");
    long s0 = pos_of(md, "## Slot 0: rgb");
    long s1 = pos_of(md, "## Slot 1: thermal");
    long pair = pos_of(md, "## Dual-stream pair");
    long sys = pos_of(md, "## System metrics");
    long warn = pos_of(md, "## Warnings");
    ASSERT_TRUE(mem < s0);
    ASSERT_TRUE(s0 < s1);
    ASSERT_TRUE(s1 < pair);
    ASSERT_TRUE(pair < sys);
    ASSERT_TRUE(sys < warn);
    /* no heading comes between the title and the Memory Safety Summary */
    ASSERT_TRUE(strstr(md + 1, "\n## ") == md + mem - 1);
    ASSERT_CONTAINS(md, "| Overall status | **SAFE** |");
    ASSERT_CONTAINS(md, "| Limit | 8.00 GB |");
    ASSERT_CONTAINS(md, "| Limit type | hard |");
    ASSERT_CONTAINS(md, "ort cuda gpu_mem_limit; tensorrt workspace 4.00 GB; per-frame monitoring");
    ASSERT_CONTAINS(md, "| Total violations | 0 |");
    /* ranking: thermal (6 GB, 75%) first */
    ASSERT_CONTAINS(md, "| 1 | 1: thermal | ok | 6.00 | 75.0 | 0 |");
    ASSERT_CONTAINS(md, "| 2 | 0: rgb | ok | 2.00 | 25.0 | 0 |");
    /* latency table with numbers from the struct */
    char row[200];
    snprintf(row, sizeof(row), "| end_to_end | 40 | %.3f ± %.3f |",
             r.slots[0].stages[EB_STAGE_E2E].mean, r.slots[0].stages[EB_STAGE_E2E].std);
    ASSERT_CONTAINS(md, row);
    ASSERT_CONTAINS(md, "| Stage | n | Mean ± std | CoV % | Min | p50 | p50 95% CI | p90 | p95 | "
                        "p99 | p99 95% CI | Max | FPS |");
    /* n = 40: a p50 interval from the order statistics, none for p99 (needs n >= 368) */
    const struct eb_stat_ci *ci = &r.slots[0].stages[EB_STAGE_E2E].p50_ci;
    ASSERT_EQ_INT(ci->available, 1);
    snprintf(row, sizeof(row), "| [%.3f, %.3f] |", ci->lo, ci->hi);
    ASSERT_CONTAINS(md, row);
    ASSERT_CONTAINS(md, "95% CIs: order-statistic binomial, 95%");
    snprintf(row, sizeof(row),
             "| Pair latency (the larger of the two end-to-end times) | p50 %.3f ms, p90 %.3f ms, "
             "p99 %.3f ms |",
             r.pair.latency.p50, r.pair.latency.p90, r.pair.latency.p99);
    ASSERT_CONTAINS(md, row);
    ASSERT_CONTAINS(md, "pairs/s) |");
    ASSERT_CONTAINS(md, "| person | 90 |");
    ASSERT_CONTAINS(md, "### Solo baseline");
    ASSERT_CONTAINS(md, "| Thermal zone cpu-thermal | max 61.5 °C, avg 55.2 °C |");
    ASSERT_CONTAINS(md, "tegrastats not found: not a Jetson");
    ASSERT_CONTAINS(md, "- thermal source has 16-bit frames; AGC applied");
    ASSERT_TRUE(strstr(md, "Interrupted") == NULL);
    free(md);
    eb_run_result_fini(&r);
}

EB_TEST(md_failed_slot_reason_and_violations)
{
    struct eb_run_result r;
    build_failed_variant(&r);
    char *md = render_md(&r);
    ASSERT_CONTAINS(md, "| Overall status | **VIOLATIONS** |");
    ASSERT_CONTAINS(md, "| Total violations | 3 |");
    long s1 = pos_of(md, "## Slot 1: thermal");
    ASSERT_TRUE(pos_of(md, "## Memory Safety Summary") < pos_of(md, "## Slot 0: rgb"));
    ASSERT_TRUE(pos_of(md, "## Slot 0: rgb") < s1);
    ASSERT_TRUE(s1 < pos_of(md, "## System metrics"));
    /* the reason, with its '|' escaped so the markdown stays intact */
    ASSERT_CONTAINS(md + s1,
                    "**Status: failed** — reason: slot thermal: failed to load "
                    "/models/thermal.onnx: unsupported op Foo \\| opset 99 (error: backend)");
    /* the failed slot has no latency table; the pair section is absent */
    ASSERT_TRUE(strstr(md + s1, "### Latency") == NULL);
    ASSERT_TRUE(strstr(md, "## Dual-stream pair") == NULL);
    free(md);
    eb_run_result_fini(&r);
}

EB_TEST(md_unified_memory_label)
{
    struct eb_run_result r;
    build_dual_variant(&r);
    r.mem.unified = 1;
    snprintf(r.mem.monitored, sizeof(r.mem.monitored), "system memory used");
    char *md = render_md(&r);
    ASSERT_CONTAINS(md, "System memory (unified; CUDA allocator is a subset)");
    ASSERT_TRUE(strstr(md, "GPU VRAM") == NULL);
    ASSERT_TRUE(strstr(md, "| System RAM |") == NULL);
    free(md);
    struct eb_json_value *root = parse_report(&r);
    ASSERT_EQ_INT(need(root, "memory/unified")->num, 1);
    eb_json_free(root);
    eb_run_result_fini(&r);
}

EB_TEST(md_discrete_memory_labels)
{
    struct eb_run_result r;
    build_dual_variant(&r);
    r.mem.unified = 0;
    char *md = render_md(&r);
    ASSERT_CONTAINS(md, "| GPU VRAM | peak 5.00 GB |");
    ASSERT_CONTAINS(md, "| System RAM | peak 10.00 GB used of 64.00 GB |");
    ASSERT_TRUE(strstr(md, "unified; CUDA allocator is a subset") == NULL);
    free(md);
    eb_run_result_fini(&r);
}

EB_TEST(md_interrupted_banner)
{
    struct eb_run_result r;
    build_failed_variant(&r);
    r.interrupted = 1;
    r.interrupt_signal = SIGINT;
    r.exit_code = 130;
    char *md = render_md(&r);
    long banner = pos_of(md, "> **Interrupted** (SIGINT): results cover what ran.");
    long title_end = (long)(strchr(md, '\n') - md);
    ASSERT_TRUE(banner > title_end);
    ASSERT_TRUE(banner < pos_of(md, "## Memory Safety Summary"));
    free(md);
    struct eb_json_value *root = parse_report(&r);
    ASSERT_EQ_INT(need(root, "interrupted")->num, 1);
    ASSERT_STREQ(str_at(root, "interrupt_signal"), "SIGINT");
    ASSERT_EQ_INT(num_at(root, "exit_code"), 130);
    eb_json_free(root);

    /* unknown signal: the banner still appears */
    r.interrupt_signal = 0;
    md = render_md(&r);
    ASSERT_CONTAINS(md, "> **Interrupted**: results cover what ran.");
    free(md);
    eb_run_result_fini(&r);
}

EB_TEST(md_class_table_top_15)
{
    struct eb_run_result r;
    build_dual_variant(&r);
    struct eb_slot_result *s = &r.slots[0];
    free(s->classes);
    s->n_classes = 20;
    s->classes = calloc(20, sizeof(*s->classes));
    for (int i = 0; i < 20; i++) {
        s->classes[i].cls = i;
        snprintf(s->classes[i].name, sizeof(s->classes[i].name), "cls_%02d", i);
        s->classes[i].count = (uint64_t)(100 + i); /* cls_19 has the most */
    }
    char *md = render_md(&r);
    long s0 = pos_of(md, "## Slot 0: rgb");
    long s1 = pos_of(md, "## Slot 1: thermal");
    long top = pos_of(md, "| 19 | cls_19 | 119 |");
    long fifteenth = pos_of(md, "| 5 | cls_05 | 105 |");
    ASSERT_TRUE(s0 < top && top < fifteenth && fifteenth < s1);
    ASSERT_TRUE(strstr(md, "cls_04") == NULL);
    ASSERT_CONTAINS(md, "Top 15 classes of 20");
    free(md);
    /* JSON keeps all of them, by count */
    struct eb_json_value *root = parse_report(&r);
    ASSERT_EQ_INT(need(root, "slots/0/detections/per_class")->n, 20);
    ASSERT_STREQ(str_at(root, "slots/0/detections/per_class/0/name"), "cls_19");
    ASSERT_STREQ(str_at(root, "slots/0/detections/per_class/19/name"), "cls_00");
    eb_json_free(root);
    eb_run_result_fini(&r);
}

/* ---------------------------------------------------------------- files */

EB_TEST(write_files_writes_all_atomically)
{
    struct eb_run_result r;
    build_failed_variant(&r);
    const char *dir = eb_test_tmpdir();
    struct eb_diag diag = {0};
    ASSERT_OK(eb_report_write_files(&r, dir, &diag));

    char path[1024];
    snprintf(path, sizeof(path), "%s/report.json", dir);
    size_t len = 0;
    char *text = eb_test_read_file(path, &len);
    ASSERT_TRUE(text != NULL);
    ASSERT_TRUE(len > 0 && text[len - 1] == '\n');
    struct eb_json_value *root = NULL;
    ASSERT_OK(eb_json_parse(text, len, &root, &diag));
    ASSERT_STREQ(str_at(root, "slots/1/status"), "failed");
    ASSERT_STREQ(str_at(root, "memory/overall"), "VIOLATIONS");
    eb_json_free(root);
    /* pretty-printed, samples on one line */
    ASSERT_CONTAINS(text, "\n  \"schema_version\": 2,\n");
    ASSERT_CONTAINS(text, "\"end_to_end_ms\": [");
    free(text);

    snprintf(path, sizeof(path), "%s/report.md", dir);
    text = eb_test_read_file(path, &len);
    ASSERT_TRUE(text != NULL);
    char *md = render_md(&r);
    ASSERT_STREQ(text, md); /* the file is exactly the rendering */
    free(md);
    free(text);

    /* writing again replaces the files; no temporary is left behind */
    ASSERT_OK(eb_report_write_files(&r, dir, &diag));
    DIR *d = opendir(dir);
    ASSERT_TRUE(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        int known = 0;
        for (int f = 0; f < EB_REPORT_FILE_COUNT; f++)
            known |= strcmp(e->d_name, eb_report_file_name((enum eb_report_file)f)) == 0;
        if (!known)
            EB_FAIL("unexpected file %s in the output folder", e->d_name);
        n++;
    }
    closedir(d);
    ASSERT_EQ_INT(n, EB_REPORT_FILE_COUNT);

    /* inputs.json: a failed slot keeps its model; a result without a config echo says null. */
    snprintf(path, sizeof(path), "%s/inputs.json", dir);
    text = eb_test_read_file(path, &len);
    ASSERT_TRUE(text != NULL);
    ASSERT_OK(eb_json_parse(text, len, &root, &diag));
    ASSERT_STREQ(str_at(root, "slots/1/status"), "failed");
    ASSERT_STREQ(str_at(root, "slots/0/name"), "rgb");
    eb_json_free(root);
    free(text);
    eb_run_result_fini(&r);
}

EB_TEST(write_files_unwritable_dir_is_io)
{
    struct eb_run_result r;
    build_dual_variant(&r);
    char dir[1024];
    /* A folder that does not exist cannot be written, even by root. */
    snprintf(dir, sizeof(dir), "%s/no/such/folder", eb_test_tmpdir());
    struct eb_diag diag = {0};
    enum eb_status st = eb_report_write_files(&r, dir, &diag);
    ASSERT_EQ_INT(st, EB_ERR_IO);
    ASSERT_CONTAINS(diag.msg, "failed to write");
    ASSERT_CONTAINS(diag.msg, "report.md"); /* the first of the three it tried */
    ASSERT_CONTAINS(diag.msg, dir);
    ASSERT_TRUE(strchr(diag.msg, '\n') == NULL);

    struct eb_diag diag2 = {0};
    struct eb_env_extra extra = {.command_line = "edgebench run", .version = "0.1.0"};
    st = eb_report_write_env(dir, &extra, &diag2);
    ASSERT_EQ_INT(st, EB_ERR_IO);
    ASSERT_CONTAINS(diag2.msg, "env.json");
    eb_run_result_fini(&r);
}

EB_TEST(env_json_has_keys)
{
    const char *dir = eb_test_tmpdir();
    struct eb_env_extra extra = {
        .command_line = "edgebench run --mode rgb --source image_dir=/data",
        .ort_version = "1.17.1",
        .ort_library = "/opt/ort/lib/libonnxruntime.so.1",
        .version = "0.1.0",
    };
    struct eb_diag diag = {0};
    ASSERT_OK(eb_report_write_env(dir, &extra, &diag));
    char path[1024];
    snprintf(path, sizeof(path), "%s/env.json", dir);
    size_t len = 0;
    char *text = eb_test_read_file(path, &len);
    ASSERT_TRUE(text != NULL);
    struct eb_json_value *root = NULL;
    ASSERT_OK(eb_json_parse(text, len, &root, &diag));
    free(text);
    ASSERT_STREQ(str_at(root, "edgebench_version"), "0.1.0");
    ASSERT_STREQ(str_at(root, "command_line"), extra.command_line);
    ASSERT_STREQ(str_at(root, "ort_version"), "1.17.1");
    ASSERT_STREQ(str_at(root, "ort_library"), extra.ort_library);
    ASSERT_EQ_INT(num_at(root, "schema_version"), EB_REPORT_SCHEMA_VERSION);
    const char *keys[] = {"collected_at",     "build/compiler",     "build/c_standard",
                          "build/build_type", "build/ndebug",       "os",
                          "kernel/sysname",   "kernel/release",     "kernel/version",
                          "kernel/machine",   "hostname",           "cpu/model",
                          "cpu/n_cpus",       "cpu/arch",           "ram_total_mb",
                          "gpu/driver",       "gpu/driver_version", "gpu/models",
                          "jetson/is_jetson", "jetson/l4t_release", "jetson/device_tree_model",
                          "jetson/power_mode"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        need(root, keys[i]);
    /* facts every Linux machine has */
    ASSERT_STREQ(str_at(root, "kernel/sysname"), "Linux");
    ASSERT_TRUE(num_at(root, "cpu/n_cpus") >= 1);
    ASSERT_TRUE(num_at(root, "ram_total_mb") > 0);
    ASSERT_EQ_INT(need(root, "jetson/is_jetson")->type, EB_JSON_BOOL);
    ASSERT_EQ_INT(need(root, "gpu/models")->type, EB_JSON_ARRAY);
    eb_json_free(root);

    /* NULL extra: the same keys, null values */
    ASSERT_OK(eb_report_write_env(dir, NULL, &diag));
    text = eb_test_read_file(path, &len);
    ASSERT_OK(eb_json_parse(text, len, &root, &diag));
    free(text);
    ASSERT_TRUE(is_null_at(root, "command_line"));
    ASSERT_TRUE(is_null_at(root, "ort_version"));
    eb_json_free(root);
}

/* ---------------------------------------------------------------- summary.md */

/* summary.md of run r, after the report's verdict (eb_report_finish) */
static char *finish_summary(struct eb_run_result *r)
{
    eb_report_finish(r);
    return render_with(r, eb_report_write_summary);
}

/* Criteria every hand-built slot meets, so that a verdict turns on what a case changes. */
static void lenient_criteria(struct eb_run_result *r, double max_drop_pct)
{
    r->criteria = (struct eb_validity_criteria){.min_frames = 10,
                                                .max_drift_pct = 1000,
                                                .max_others_cpu_pct = 100,
                                                .max_drop_pct = max_drop_pct};
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        r->slots[i].others_cpu_pct = NAN;
}

EB_TEST(summary_failed_slot_memory_over_limit_and_bottleneck)
{
    struct eb_run_result r;
    build_failed_variant(&r);
    lenient_criteria(&r, 1.0);
    char *s = finish_summary(&r);
    /* the failed slot in words with its reason (Markdown-escaped) and error */
    ASSERT_CONTAINS(s, "- Slot thermal failed and has no results: slot thermal: failed to load "
                       "/models/thermal.onnx: unsupported op Foo \\| opset 99 (error: backend).\n");
    ASSERT_CONTAINS(s, "- Slot rgb: model `rgb_yolo11n.onnx`. Backend: ort 1.17.1. Device / "
                       "provider: cuda / CUDAExecutionProvider.");
    /* unpaced: no target invented */
    ASSERT_CONTAINS(s, "- Slot rgb: no target frame rate was set");
    ASSERT_TRUE(strstr(s, "keeps up.") == NULL);
    ASSERT_CONTAINS(s, "Peak memory (GPU VRAM (backend device bytes)): 5.00 GB against a limit of "
                       "8.00 GB. **It went over the limit** on 3 frames.");
    /* inference (7 ms and up) is the slowest stage; no profile was taken */
    char want[160];
    snprintf(want, sizeof(want), "the slowest step is running the model (inference): %.3f ms",
             r.slots[0].stages[EB_STAGE_INFER].p50);
    ASSERT_CONTAINS(s, want);
    ASSERT_CONTAINS(s, "No per-operator profile was taken (--profile).");
    /* what it rests on: 50 frames, the p50 interval */
    snprintf(want, sizeof(want), "- Slot rgb: 50 frames measured over %.2f s, after 5 warm-up",
             r.slots[0].wall_s);
    ASSERT_CONTAINS(s, want);
    snprintf(want, sizeof(want), "95%% confidence interval [%.3f, %.3f] ms.",
             r.slots[0].stages[EB_STAGE_E2E].p50_ci.lo, r.slots[0].stages[EB_STAGE_E2E].p50_ci.hi);
    ASSERT_CONTAINS(s, want);
    ASSERT_CONTAINS(s, "- The whole run took 12.5 s.");
    free(s);
    eb_run_result_fini(&r);
}

EB_TEST(summary_pacing_profile_and_no_budget)
{
    struct eb_run_result r;
    build_dual_variant(&r);
    lenient_criteria(&r, 1.0);
    /* a drop share equal to the allowance keeps up; one above it does not */
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        r.slots[i].fps_target = 30;
        r.slots[i].throughput_fps = 29.5;
        r.slots[i].frames_dropped = i == 0 ? 2 : 3;
        r.slots[i].drop_pct = i == 0 ? 1.0 : 1.5;
    }
    r.mem.limit_gb = 0; /* no budget */
    r.slots[1].stages[EB_STAGE_READ].p50 = 100.0;
    r.slots[1].stages[EB_STAGE_E2E].p50_ci.available = 0;
    struct eb_profile_result *p = &r.slots[0].profile;
    p->available = 1;
    p->n_ops = 1;
    p->ops[0] = (struct eb_op_profile){.op = "Conv", .ms_per_frame = 3.2104, .pct = 80.06};
    char *s = finish_summary(&r);
    ASSERT_CONTAINS(s, "- Slot rgb: frames arrived at 30.00 FPS, as from a camera; it processed "
                       "29.50 FPS and dropped 2 frames (1.00%; at most 1.0% allowed). **It keeps "
                       "up.**");
    ASSERT_CONTAINS(s, "dropped 3 frames (1.50%; at most 1.0% allowed). **It does not keep up.**");
    ASSERT_CONTAINS(s, "Peak memory (GPU VRAM (backend device bytes)): 5.00 GB. No memory budget "
                       "was set, so there is no headroom to judge.");
    ASSERT_CONTAINS(s, "- Slot thermal: the slowest step is reading frames from the source "
                       "(read): 100.000 ms");
    ASSERT_CONTAINS(s, "the most time goes to `Conv` operations: 3.210 ms per frame, 80.1% of "
                       "the profiled time.");
    ASSERT_CONTAINS(s, "; too few frames for a confidence interval of it.");
    /* the verdict with the reason the report gives */
    ASSERT_CONTAINS(s, "**INVALID**, because:\n\n");
    ASSERT_CONTAINS(s, "- slot thermal: paced at 30 FPS, dropped 3 frames (1.50%)");
    free(s);
    eb_run_result_fini(&r);
}

EB_TEST(summary_valid_and_nothing_ran)
{
    struct eb_run_result r;
    build_dual_variant(&r);
    lenient_criteria(&r, 1.0);
    char *s = finish_summary(&r);
    ASSERT_CONTAINS(s, "**VALID**: every check held (at least 10 measured frames");
    free(s);
    eb_run_result_fini(&r);

    eb_run_result_init(&r);
    fill_common(&r, "dual");
    s = finish_summary(&r);
    ASSERT_CONTAINS(s, "- Slot rgb was skipped: no model given for this slot.\n");
    ASSERT_CONTAINS(s, "- Slot thermal was skipped: no model given for this slot.\n");
    ASSERT_CONTAINS(s, "## Does it keep up?\n\nNo slot measured a frame: nothing to judge.\n");
    ASSERT_CONTAINS(s, "**INVALID**, because:\n\n- no slot ran\n");
    free(s);
    eb_run_result_fini(&r);
}
