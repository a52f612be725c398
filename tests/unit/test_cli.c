#include "eb/engine.h"
#include "eb/json.h"
#include "eb_test.h"
#include "harness/cmd/config.h"
#include "harness/results/validity.h"

struct captured {
    int n_warn;
    char last[512];
};

static void capture(void *ctx, enum eb_log_level level, const char *msg)
{
    struct captured *c = ctx;
    if (level >= EB_LOG_WARN)
        c->n_warn++;
    snprintf(c->last, sizeof(c->last), "%s", msg);
}

/* Parses a NULL-terminated list of arguments; returns the status, fills cfg and diag. */
static enum eb_status parse(struct eb_config *cfg, struct eb_diag *diag, struct captured *cap,
                            const char **args)
{
    int argc = 0;
    char *argv[64];
    while (args[argc] != NULL) {
        argv[argc] = (char *)args[argc];
        argc++;
    }
    eb_config_defaults(cfg);
    struct eb_log log = {.fn = capture, .ctx = cap, .level = EB_LOG_DEBUG};
    int help = 0;
    return eb_config_parse(argc, argv, cfg, &help, &log, diag);
}

EB_TEST(defaults_match_help)
{
    struct eb_config cfg;
    eb_config_defaults(&cfg);
    ASSERT_EQ_INT(cfg.mode, EB_MODE_DUAL);
    ASSERT_EQ_INT(cfg.gpu_mem_limit_bytes, 8000000000ull);
    ASSERT_NEAR(cfg.conf, 0.25, 1e-12);
    ASSERT_NEAR(cfg.iou, 0.7, 1e-12);
    ASSERT_EQ_INT(cfg.interval_ms, 500);
    ASSERT_EQ_INT(cfg.warmup, 10);
    ASSERT_EQ_INT(cfg.solo_baseline, 0);
    ASSERT_STREQ(cfg.output, "runs");
}

EB_TEST(mem_limit_above_max_is_clamped_with_warning)
{
    struct eb_config cfg;
    struct eb_diag diag = {0};
    struct captured cap = {0};
    const char *a[] = {"--gpu_mem_limit_gb", "12", NULL};
    ASSERT_OK(parse(&cfg, &diag, &cap, a));
    ASSERT_EQ_INT(cfg.gpu_mem_limit_bytes, 8000000000ull);
    ASSERT_EQ_INT(cap.n_warn, 1);
    ASSERT_CONTAINS(cap.last, "clamped to 8.0");
}

EB_TEST(mem_limit_zero_negative_or_below_1mb_is_an_error)
{
    /* 0.0009 GB = 900 kB: positive, but below what can be honoured */
    const char *vals[] = {"0", "-1", "abc", "nan", "0.0009", "1e-10"};
    for (size_t i = 0; i < EB_ARRAY_LEN(vals); i++) {
        struct eb_config cfg;
        struct eb_diag diag = {0};
        struct captured cap = {0};
        const char *a[] = {"--gpu_mem_limit_gb", vals[i], NULL};
        ASSERT_EQ_INT(parse(&cfg, &diag, &cap, a), EB_ERR_INVALID_ARG);
        ASSERT_CONTAINS(diag.msg, "--gpu_mem_limit_gb");
        ASSERT_CONTAINS(diag.msg, "0.001 <= G <= 8");
    }
}

EB_TEST(in_range_mem_limit_is_kept)
{
    struct eb_config cfg;
    struct eb_diag diag = {0};
    struct captured cap = {0};
    const char *a[] = {"--gpu_mem_limit_gb=2.5", NULL};
    ASSERT_OK(parse(&cfg, &diag, &cap, a));
    ASSERT_EQ_INT(cfg.gpu_mem_limit_bytes, 2500000000ull); /* GB = 10^9 bytes, converted once */
    ASSERT_EQ_INT(cap.n_warn, 0);
    /* the smallest accepted limit, 1 MB, and a fraction of a byte rounded */
    const char *b[] = {"--gpu_mem_limit_gb", "0.001", NULL};
    ASSERT_OK(parse(&cfg, &diag, &cap, b));
    ASSERT_EQ_INT(cfg.gpu_mem_limit_bytes, 1000000ull);
    const char *c[] = {"--gpu_mem_limit_gb", "0.0123456789", NULL};
    ASSERT_OK(parse(&cfg, &diag, &cap, c));
    ASSERT_EQ_INT(cfg.gpu_mem_limit_bytes, 12345679ull);
}

EB_TEST(unknown_option_names_it)
{
    struct eb_config cfg;
    struct eb_diag diag = {0};
    struct captured cap = {0};
    const char *a[] = {"--batch", "4", NULL};
    ASSERT_EQ_INT(parse(&cfg, &diag, &cap, a), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "unknown option --batch");
    ASSERT_TRUE(strchr(diag.msg, '\n') == NULL);
}

EB_TEST(out_of_range_values_name_flag_and_range)
{
    struct {
        const char *flag, *value, *expect;
    } cases[] = {
        {"--frames", "-1", "accepted: 0..10000000"},
        {"--warmup", "x", "not an integer"},
        {"--conf", "1.5", "accepted: 0..1"},
        {"--iou", "-0.1", "accepted: 0..1"},
        {"--imgsz", "100", "multiple of 32"},
        {"--threads", "999", "accepted: 0..256"},
        {"--interval_ms", "1", "accepted: 10..60000"},
        {"--mode", "stereo", "accepted: rgb|thermal|dual"},
        {"--device", "tpu", "accepted: cpu|cuda|tensorrt"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct eb_config cfg;
        struct eb_diag diag = {0};
        struct captured cap = {0};
        const char *a[] = {cases[i].flag, cases[i].value, NULL};
        ASSERT_EQ_INT(parse(&cfg, &diag, &cap, a), EB_ERR_INVALID_ARG);
        ASSERT_CONTAINS(diag.msg, cases[i].flag);
        ASSERT_CONTAINS(diag.msg, cases[i].expect);
    }
}

EB_TEST(missing_value_is_an_error)
{
    struct eb_config cfg;
    struct eb_diag diag = {0};
    struct captured cap = {0};
    const char *a[] = {"--frames", NULL};
    ASSERT_EQ_INT(parse(&cfg, &diag, &cap, a), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "--frames needs a value");
}

EB_TEST(dual_mode_needs_both_sources)
{
    struct eb_config cfg;
    struct eb_diag diag = {0};
    struct captured cap = {0};
    const char *a[] = {"--mode",          "dual", "--model0", "a.onnx", "--rgb_source",
                       "synthetic=64x64", NULL};
    ASSERT_EQ_INT(parse(&cfg, &diag, &cap, a), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "--thermal_source");
    struct eb_diag d2 = {0};
    const char *b[] = {"--mode", "dual", "--model0", "a.onnx", "--source", "synthetic=64x64", NULL};
    ASSERT_EQ_INT(parse(&cfg, &d2, &cap, b), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d2.msg, "--rgb_source");
}

EB_TEST(single_mode_needs_its_model_and_source)
{
    struct eb_config cfg;
    struct eb_diag diag = {0};
    struct captured cap = {0};
    const char *a[] = {"--mode", "rgb", "--model1", "t.onnx", "--source", "synthetic=64x64", NULL};
    ASSERT_EQ_INT(parse(&cfg, &diag, &cap, a), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "--model0");
    struct eb_diag d2 = {0};
    const char *b[] = {"--mode", "thermal", "--model1", "t.onnx", NULL};
    ASSERT_EQ_INT(parse(&cfg, &d2, &cap, b), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d2.msg, "--source");
    struct eb_diag d3 = {0};
    const char *c[] = {"--mode",   "thermal",         "--model1", "t.onnx",
                       "--source", "synthetic=64x64", NULL};
    ASSERT_OK(parse(&cfg, &d3, &cap, c));
    ASSERT_EQ_INT(cfg.mode, EB_MODE_THERMAL);
    ASSERT_STREQ(cfg.model1, "t.onnx");
}

EB_TEST(bad_source_spec_is_a_usage_error)
{
    struct eb_config cfg;
    struct eb_diag diag = {0};
    struct captured cap = {0};
    const char *a[] = {"--mode", "rgb", "--model0", "m.onnx", "--source", "synthetic=10x", NULL};
    ASSERT_EQ_INT(parse(&cfg, &diag, &cap, a), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "--source");
}

EB_TEST(solo_baseline_needs_dual)
{
    struct eb_config cfg;
    struct eb_diag diag = {0};
    struct captured cap = {0};
    const char *a[] = {"--mode", "rgb", "--solo_baseline", NULL};
    ASSERT_EQ_INT(parse(&cfg, &diag, &cap, a), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "--solo_baseline");
}

/* --precision int8 as in val/compare; --qdq keeps its old spellings, auto by default; int8
 * with a float QDQ path contradicts itself. */
EB_TEST(precision_int8_and_qdq_spellings)
{
    struct eb_config cfg;
    struct eb_diag diag = {0};
    struct captured cap = {0};
    const char *a[] = {"--precision", "int8", NULL};
    ASSERT_OK(parse(&cfg, &diag, &cap, a));
    ASSERT_EQ_INT(cfg.precision, EB_CONFIG_PRECISION_INT8);
    ASSERT_EQ_INT(cfg.qdq, EB_ENGINE_QDQ_AUTO);
    static const char *const old[] = {"float", "int8", "strip"};
    for (int i = 0; i < 3; i++) {
        const char *b[] = {"--qdq", old[i], NULL};
        ASSERT_OK(parse(&cfg, &diag, &cap, b));
        ASSERT_EQ_INT(cfg.qdq, i); /* enum eb_engine_qdq */
    }
    const char *c[] = {"--precision", "int8", "--qdq", "float", NULL};
    ASSERT_EQ_INT(parse(&cfg, &diag, &cap, c), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "--precision int8");
    ASSERT_CONTAINS(diag.msg, "--qdq float");
    eb_diag_clear(&diag);
    const char *d[] = {"--precision", "int8", "--qdq", "int8", NULL};
    ASSERT_OK(parse(&cfg, &diag, &cap, d));
}

EB_TEST(config_echo_has_every_option)
{
    struct eb_config cfg;
    struct eb_diag diag = {0};
    struct captured cap = {0};
    const char *a[] = {"--mode",          "rgb",      "--model0", "m.onnx",          "--source",
                       "synthetic=64x48", "--frames", "7",        "--solo_baseline", NULL};
    enum eb_status st = parse(&cfg, &diag, &cap, a);
    ASSERT_EQ_INT(st, EB_ERR_INVALID_ARG); /* solo baseline with rgb */
    const char *b[] = {"--mode",   "rgb", "--model0", "m.onnx", "--source", "synthetic=64x48",
                       "--frames", "7",   "--conf",   "0.5",    NULL};
    struct eb_diag d2 = {0};
    ASSERT_OK(parse(&cfg, &d2, &cap, b));
    struct eb_json_writer w;
    eb_json_writer_init_mem(&w, 0);
    eb_config_write_json(&cfg, &w);
    size_t len;
    char *text = eb_json_writer_take(&w, &len);
    struct eb_json_value *root = NULL;
    ASSERT_OK(eb_json_parse(text, len, &root, &d2));
    ASSERT_STREQ(eb_json_get(root, "mode")->str, "rgb");
    ASSERT_NEAR(eb_json_get(root, "frames")->num, 7, 0);
    ASSERT_NEAR(eb_json_get(root, "conf")->num, 0.5, 0);
    ASSERT_EQ_INT(eb_json_get(root, "model1")->type, EB_JSON_NULL);
    ASSERT_EQ_INT(eb_json_get(root, "solo_baseline")->type, EB_JSON_BOOL);
    ASSERT_STREQ(eb_json_get(root, "device")->str, "cpu");
    ASSERT_STREQ(eb_json_get(root, "qdq")->str, "auto");
    ASSERT_STREQ(eb_json_get(root, "kernels")->str, "auto");
    ASSERT_EQ_INT(eb_json_get(root, "no_fuse")->type, EB_JSON_BOOL);
    ASSERT_EQ_INT(eb_json_get(root, "no_layout")->type, EB_JSON_BOOL);
    ASSERT_EQ_INT(eb_json_get(root, "no_lanes")->type, EB_JSON_BOOL);
    ASSERT_STREQ(eb_json_get(root, "preprocess")->str, "auto");
    ASSERT_STREQ(eb_json_get(root, "decode")->str, "auto");
    ASSERT_EQ_INT(eb_json_get(root, "warmup")->num, 10);
    ASSERT_EQ_INT(eb_json_get(root, "min_frames")->num, 200);
    ASSERT_NEAR(eb_json_get(root, "min_duration_s")->num, 10, 0);
    ASSERT_NEAR(eb_json_get(root, "max_drift_pct")->num, 5, 0);
    ASSERT_NEAR(eb_json_get(root, "max_others_cpu_pct")->num, 10, 0);
    ASSERT_NEAR(eb_json_get(root, "max_cov_pct")->num, 0, 0); /* reported, not judged */
    ASSERT_NEAR(eb_json_get(root, "warmup_s")->num, 0, 0);
    ASSERT_EQ_INT(eb_json_get(root, "db")->type, EB_JSON_NULL); /* the default database */
    ASSERT_NEAR(eb_json_get(root, "duration")->num, 0, 0);
    ASSERT_EQ_INT(eb_json_get(root, "no_loop")->type, EB_JSON_BOOL);
    ASSERT_NEAR(eb_json_get(root, "fps")->num, 0, 0);
    ASSERT_EQ_INT(eb_json_get(root, "queue")->num, 0);
    ASSERT_NEAR(eb_json_get(root, "max_drop_pct")->num, 1, 0);
    ASSERT_NEAR(eb_json_get(root, "save_images")->num, 0, 0);
    ASSERT_EQ_INT(eb_json_get(root, "trt_cache")->type, EB_JSON_NULL); /* the default folder */
    ASSERT_EQ_INT(eb_json_get(root, "reconnect")->num, 3);
    ASSERT_NEAR(eb_json_get(root, "source_timeout_s")->num, 10, 0);
    ASSERT_NEAR(eb_json_get(root, "metrics_max_mb")->num, 64, 0);
    ASSERT_NEAR(eb_json_get(root, "checkpoint_s")->num, 60, 0);
    ASSERT_EQ_INT(root->n, 64); /* one key per row of cli_opts.def */
    eb_json_free(root);
    free(text);
}

EB_TEST(warmup_auto_and_validity_options)
{
    struct eb_config cfg;
    struct eb_diag diag = {0};
    struct captured cap = {0};
    const char *a[] = {"--warmup",
                       "auto",
                       "--warmup_s",
                       "2.5",
                       "--min_frames",
                       "50",
                       "--min_duration_s",
                       "0",
                       "--max_cov_pct",
                       "7.5",
                       "--max_drift_pct",
                       "3",
                       "--db",
                       "none",
                       NULL};
    ASSERT_OK(parse(&cfg, &diag, &cap, a));
    ASSERT_EQ_INT(cfg.warmup, EB_WARMUP_AUTO);
    ASSERT_NEAR(cfg.warmup_s, 2.5, 0);
    ASSERT_EQ_INT(cfg.min_frames, 50);
    ASSERT_NEAR(cfg.min_duration_s, 0, 0);
    ASSERT_NEAR(cfg.max_cov_pct, 7.5, 0);
    ASSERT_NEAR(cfg.max_drift_pct, 3, 0);
    ASSERT_STREQ(cfg.db, "none");
    /* the configuration echo says auto */
    struct eb_json_writer w;
    eb_json_writer_init_mem(&w, 0);
    eb_config_write_json(&cfg, &w);
    char *text = eb_json_writer_take(&w, NULL);
    ASSERT_CONTAINS(text, "\"warmup\":\"auto\"");
    free(text);
    const char *bad[] = {"--warmup", "automatic", NULL};
    ASSERT_EQ_INT(parse(&cfg, &diag, &cap, bad), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(diag.msg, "--warmup");
    ASSERT_CONTAINS(diag.msg, "or auto");
    struct eb_diag d2 = {0};
    const char *neg[] = {"--warmup_s", "-1", NULL};
    ASSERT_EQ_INT(parse(&cfg, &d2, &cap, neg), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d2.msg, "--warmup_s");
}

EB_TEST(help_lists_every_option_with_default)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/help.txt", eb_test_tmpdir());
    FILE *f = fopen(path, "w");
    ASSERT_TRUE(f != NULL);
    eb_config_print_help(f);
    fclose(f);
    char *text = eb_test_read_file(path, NULL);
    const char *flags[] = {"--mode",
                           "--source",
                           "--rgb_source",
                           "--thermal_source",
                           "--model0",
                           "--model1",
                           "--gpu_mem_limit_gb",
                           "--frames",
                           "--warmup",
                           "--imgsz",
                           "--conf",
                           "--iou",
                           "--device",
                           "--threads",
                           "--output",
                           "--interval_ms",
                           "--solo_baseline",
                           "--verbose",
                           "--quiet",
                           "--ort_lib",
                           "--warmup_s",
                           "--min_frames",
                           "--min_duration_s",
                           "--max_cov_pct",
                           "--db",
                           "--data",
                           "--rgb_data",
                           "--thermal_data",
                           "--class_map",
                           "--rgb_class_map",
                           "--thermal_class_map"};
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        ASSERT_CONTAINS(text, flags[i]);
    ASSERT_CONTAINS(text, "default: 0.25");
    ASSERT_CONTAINS(text, "default: 8.0");
    ASSERT_CONTAINS(text, "accepted: rgb|thermal|dual");
    ASSERT_CONTAINS(text, "accepted: 0..100000 or auto");
    ASSERT_CONTAINS(text, "default: ${XDG_DATA_HOME:-~/.local/share}/edgebench/history.db");
    free(text);
}

EB_TEST(frame_rates_are_0_or_a_frame_every_10_s_up_to_1000)
{
    const char *names[] = {"--fps", "--rgb_fps", "--thermal_fps"};
    for (size_t i = 0; i < EB_ARRAY_LEN(names); i++) {
        const char *bad[] = {"0.001", "0.09", "-1", "1001"};
        for (size_t k = 0; k < EB_ARRAY_LEN(bad); k++) {
            struct eb_config cfg;
            struct eb_diag diag = {0};
            struct captured cap = {0};
            const char *a[] = {names[i], bad[k], NULL};
            ASSERT_EQ_INT(parse(&cfg, &diag, &cap, a), EB_ERR_INVALID_ARG);
            ASSERT_CONTAINS(diag.msg, names[i]);
            ASSERT_CONTAINS(diag.msg, "out of range (accepted: 0 or 0.1..1000)");
        }
        const char *good[] = {"0", "0.1", "30", "1000"};
        const double want[] = {0, 0.1, 30, 1000};
        for (size_t k = 0; k < EB_ARRAY_LEN(good); k++) {
            struct eb_config cfg;
            struct eb_diag diag = {0};
            struct captured cap = {0};
            const char *a[] = {names[i], good[k], NULL};
            ASSERT_OK(parse(&cfg, &diag, &cap, a));
            const double got = i == 0 ? cfg.fps : i == 1 ? cfg.rgb_fps : cfg.thermal_fps;
            ASSERT_NEAR(got, want[k], 0);
        }
    }
}

/* One grammar for every number (eb_number_parse_*): decimal only, the value shown as typed. */
EB_TEST(numbers_are_decimal_and_shown_as_typed)
{
    struct {
        const char *flag, *value, *expect; /* expect NULL: accepted */
    } cases[] = {
        {"--conf", "1.0000001", "--conf: 1.0000001 is out of range (accepted: 0..1)"},
        {"--conf", "1e999", "--conf: 1e999 is out of range"},
        {"--conf", "1e-320", NULL}, /* below the smallest normal double, but a number in 0..1 */
        {"--conf", "0x0.8p0", "'0x0.8p0' is not a number"},
        {"--conf", "inf", "'inf' is not a number"},
        {"--conf", "nan", "'nan' is not a number"},
        {"--conf", " 0.5", "' 0.5' is not a number"},
        {"--conf", ".5", NULL},
        {"--conf", "5e-1", NULL},
        {"--conf", "1.", NULL},
        {"--conf", ".", "'.' is not a number"},
        {"--conf", "1e", "'1e' is not a number"},
        {"--frames", "0x10", "'0x10' is not an integer"},
        {"--frames", "99999999999999999999", "99999999999999999999 is out of range"},
        {"--frames", "+12", NULL},
        {"--gpu_mem_limit_gb", "1e-10", "1e-10 is out of range"},
        {"--gpu_mem_limit_gb", "0x1p-1", "'0x1p-1' is not a number"},
    };
    for (size_t i = 0; i < EB_ARRAY_LEN(cases); i++) {
        struct eb_config cfg;
        struct eb_diag diag = {0};
        struct captured cap = {0};
        const char *a[] = {cases[i].flag, cases[i].value, NULL};
        if (cases[i].expect == NULL) {
            ASSERT_OK(parse(&cfg, &diag, &cap, a));
            continue;
        }
        ASSERT_EQ_INT(parse(&cfg, &diag, &cap, a), EB_ERR_INVALID_ARG);
        ASSERT_CONTAINS(diag.msg, cases[i].expect);
    }
}
