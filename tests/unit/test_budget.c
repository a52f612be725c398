/* The process's one memory budget (harness/pipeline/budget.h): the limit shared by the slots as they
 * load, the Jetson bound, the per-frame check's wording, and the harness's advice. */
#include <stdlib.h>
#include <string.h>

#include "eb/backend.h"
#include "eb_test.h"
#include "harness/pipeline/advice.h"
#include "harness/pipeline/budget.h"
#include "harness/results/result.h"
#include "model/model.h"

struct captured {
    int n_error;
    char last[512];
};

static void capture(void *ctx, enum eb_log_level level, const char *msg)
{
    struct captured *c = ctx;
    if (level >= EB_LOG_ERROR)
        c->n_error++;
    snprintf(c->last, sizeof(c->last), "%s", msg);
}

EB_TEST(second_slot_gets_what_the_first_left)
{
    struct eb_budget b;
    eb_budget_init(&b, 100000000ull, 0, 0);
    struct eb_backend_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    char label[96];
    struct eb_diag d = {0};
    /* the first slot to load gets the whole limit, named plainly */
    ASSERT_OK(eb_budget_slot_cap(&b, &cfg, label, sizeof(label), &d));
    ASSERT_EQ_INT(cfg.mem_limit_bytes, 100000000ull);
    ASSERT_TRUE(cfg.mem_limit_label == NULL);
    eb_budget_charge(&b, "rgb", 30000000ull);
    /* the second gets the rest, and messages say whose share it is */
    ASSERT_OK(eb_budget_slot_cap(&b, &cfg, label, sizeof(label), &d));
    ASSERT_EQ_INT(cfg.mem_limit_bytes, 70000000ull);
    ASSERT_STREQ(cfg.mem_limit_label, "left of the limit after slot rgb (95.4 MiB)");
    /* all of it charged: nothing is left, which is a limit failure, never "no cap" */
    eb_budget_charge(&b, "thermal", 80000000ull);
    ASSERT_EQ_INT(eb_budget_left(&b, NULL, 0), 0);
    ASSERT_EQ_INT(eb_budget_slot_cap(&b, &cfg, label, sizeof(label), &d), EB_ERR_LIMIT);
    ASSERT_STREQ(d.msg, "needed more than 0 MiB, 0 MiB left of the limit after slot rgb and "
                        "thermal (95.4 MiB)");
    /* the same advice as the engine's limit failures */
    ASSERT_EQ_INT(d.advice, EB_ADVICE_MEM_LIMIT);
}

static uint8_t *synth(enum eb_synth_arch arch, size_t *len)
{
    struct eb_synth_options o = {
        .arch = arch, .scale = 'n', .imgsz = 64, .num_classes = 80, .seed = 1};
    uint8_t *bytes = NULL;
    struct eb_diag d = {0};
    if (eb_model_synth(&o, &bytes, len, &d) != EB_OK)
        EB_FAIL("eb_model_synth: %s", d.msg);
    return bytes;
}

/* Loads `bytes` on a native CPU instance with the budget's share; the status, usage, message. */
static enum eb_status load_slot(struct eb_budget *b, const char *name, const uint8_t *bytes,
                                size_t len, struct eb_backend **be_out, uint64_t *used_out,
                                struct eb_diag *d)
{
    struct eb_backend_config cfg = {.device = EB_DEVICE_CPU, .threads = 1};
    char label[96];
    enum eb_status st = eb_budget_slot_cap(b, &cfg, label, sizeof(label), d);
    if (st != EB_OK)
        return st;
    ASSERT_OK(eb_backend_create(eb_backend_find("native"), &cfg, be_out, d));
    struct eb_model_spec spec = {.path = name, .bytes = bytes, .n_bytes = len};
    struct eb_model_info info;
    st = eb_backend_load(*be_out, &spec, &info, d);
    if (st == EB_OK) {
        ASSERT_EQ_INT(info.limit_type, EB_LIMIT_HARD);
        *used_out = info.budget_bytes_used;
        eb_budget_charge(b, name[0] == 'r' ? "rgb" : "thermal", info.budget_bytes_used);
    }
    return st;
}

/* Two native slots under a limit between one plan and two: the second fails at load with the
 * figures, and its engine never allocated past the first's remainder. */
EB_TEST(native_second_slot_over_the_remainder_fails_with_the_figures)
{
    size_t la, lb;
    uint8_t *a = synth(EB_SYNTH_YOLOV8, &la), *t = synth(EB_SYNTH_YOLO11, &lb);
    /* the plans alone, under a large limit */
    struct eb_budget big;
    eb_budget_init(&big, 8000000000ull, 0, 0);
    struct eb_backend *be = NULL;
    struct eb_diag d = {0};
    uint64_t plan_rgb = 0, plan_thermal = 0;
    ASSERT_OK(load_slot(&big, "rgb.onnx", a, la, &be, &plan_rgb, &d));
    eb_backend_destroy(be);
    be = NULL;
    ASSERT_OK(load_slot(&big, "thermal.onnx", t, lb, &be, &plan_thermal, &d));
    eb_backend_destroy(be);
    be = NULL;
    ASSERT_TRUE(plan_rgb > 1000000 && plan_thermal > 1000000);
    ASSERT_EQ_INT(big.used_bytes, plan_rgb + plan_thermal);

    /* room for the rgb plan and half the thermal one */
    struct eb_budget b;
    const uint64_t limit = plan_rgb + plan_thermal / 2;
    eb_budget_init(&b, limit, 0, 0);
    struct eb_backend *rgb = NULL, *thermal = NULL;
    uint64_t used = 0;
    ASSERT_OK(load_slot(&b, "rgb.onnx", a, la, &rgb, &used, &d));
    ASSERT_EQ_INT(used, plan_rgb);
    ASSERT_EQ_INT(load_slot(&b, "thermal.onnx", t, lb, &thermal, &used, &d), EB_ERR_LIMIT);
    char want[256];
    snprintf(want, sizeof(want),
             "failed to load model thermal.onnx: needed %.1f MiB, %.1f MiB left of the limit "
             "after slot rgb (%.1f MiB); planned: ",
             (double)plan_thermal / 1048576.0, (double)(limit - plan_rgb) / 1048576.0,
             (double)limit / 1048576.0);
    printf("%s\n", d.msg);
    ASSERT_TRUE(strncmp(d.msg, want, strlen(want)) == 0);
    /* the engine names no flag but the kind of remedy; the harness adds the advice, once */
    ASSERT_ADVICE(d, EB_ADVICE_MEM_LIMIT);
    eb_advice_append(&d);
    eb_advice_append(&d);
    ASSERT_CONTAINS(d.msg, "MiB; raise --gpu_mem_limit_gb or use a smaller model or --imgsz");
    ASSERT_TRUE(strstr(d.msg, "--imgsz; raise") == NULL);
    eb_backend_destroy(rgb);
    eb_backend_destroy(thermal);
    free(a);
    free(t);
}

/* On unified memory (Jetson) the limit is at most MemTotal less the reserve; the platform facts
 * are arguments, so no Jetson is needed. */
EB_TEST(jetson_bound_is_usable_ram_less_the_reserve)
{
    struct eb_budget b;
    /* an 8 GB Orin Nano: MemTotal about 7.6 GB, so the 8.0 default cannot be honoured */
    eb_budget_init(&b, 8000000000ull, 1, 7600000000ull);
    ASSERT_EQ_INT(b.limit_bytes, 7600000000ull - EB_BUDGET_UNIFIED_RESERVE_BYTES);
    ASSERT_EQ_INT(b.configured_bytes, 8000000000ull);
    ASSERT_EQ_INT(b.bound, EB_BUDGET_BOUND_UNIFIED_RAM);
    ASSERT_EQ_INT(b.measure, EB_BUDGET_MEASURE_UNIFIED);
    struct eb_mem_summary m;
    memset(&m, 0, sizeof(m));
    eb_budget_summarize(&b, &m);
    ASSERT_STREQ(m.limit_bound, "unified_ram");
    ASSERT_NEAR(m.limit_gb, 6.6, 1e-9);
    ASSERT_EQ_INT(m.configured_limit_bytes, 8000000000ull);
    /* a limit under the RAM is kept */
    eb_budget_init(&b, 2000000000ull, 1, 7600000000ull);
    ASSERT_EQ_INT(b.limit_bytes, 2000000000ull);
    ASSERT_EQ_INT(b.bound, EB_BUDGET_BOUND_CONFIGURED);
    /* a discrete GPU's host RAM does not bound the limit */
    eb_budget_init(&b, 8000000000ull, 0, 4000000000ull);
    ASSERT_EQ_INT(b.limit_bytes, 8000000000ull);
    ASSERT_EQ_INT(b.measure, EB_BUDGET_MEASURE_RSS);
    /* MemTotal unknown: the limit as given */
    eb_budget_init(&b, 8000000000ull, 1, 0);
    ASSERT_EQ_INT(b.limit_bytes, 8000000000ull);
    ASSERT_STREQ(eb_budget_bound_name(b.bound), "configured");
}

EB_TEST(violations_are_named_for_what_was_measured)
{
    struct captured c = {0};
    struct eb_log log = {.fn = capture, .ctx = &c, .level = EB_LOG_DEBUG};
    struct eb_budget b;
    eb_budget_init(&b, 100000000ull, 0, 0);
    ASSERT_EQ_INT(eb_budget_check(&b, 100000000ull, "rgb", 11, 0, &log), 0); /* at the limit */
    ASSERT_EQ_INT(c.n_error, 0);
    ASSERT_EQ_INT(eb_budget_check(&b, 220000000ull, "rgb", 12, 0, &log), 1);
    ASSERT_STREQ(c.last, "MEMORY LIMIT VIOLATION: process RSS 0.22 GB exceeds the limit 0.10 GB "
                         "(slot rgb, frame 12)");
    eb_budget_init(&b, 8000000000ull, 1, 7600000000ull);
    ASSERT_EQ_INT(eb_budget_check(&b, 6700000000ull, "thermal", 412, 0, &log), 1);
    ASSERT_STREQ(c.last, "SYSTEM MEMORY VIOLATION (unified, CPU+GPU): system memory used 6.70 GB "
                         "exceeds the limit 6.60 GB (slot thermal, frame 412)");
    b.measure = EB_BUDGET_MEASURE_DEVICE;
    ASSERT_EQ_INT(eb_budget_check(&b, 6700000000ull, "rgb", 3, 0, &log), 1);
    ASSERT_STREQ(c.last, "GPU MEMORY VIOLATION: device memory 6.70 GB exceeds the limit 6.60 GB "
                         "(slot rgb, frame 3)");
    ASSERT_EQ_INT(c.n_error, 3);
    /* a slot's later violations are counted and logged, but not as errors (one console line) */
    ASSERT_EQ_INT(eb_budget_check(&b, 6700000000ull, "rgb", 4, 1, &log), 1);
    ASSERT_EQ_INT(c.n_error, 3);
    ASSERT_STREQ(c.last, "GPU MEMORY VIOLATION: device memory 6.70 GB exceeds the limit 6.60 GB "
                         "(slot rgb, frame 4)");
    /* a zeroed budget (no limit) never fires */
    struct eb_budget none;
    memset(&none, 0, sizeof(none));
    ASSERT_EQ_INT(eb_budget_check(&none, 1ull << 40, "rgb", 0, 0, &log), 0);
}
