/* The throttling onset of a soak run (report/report_throttle.c): a slot's latency series beside
 * the sampler's clock and temperature series read back from a crafted metrics.jsonl whose
 * tegrastats lines come from a real Orin line with its GPU clock changed. */
#include "eb/clock.h"
#include "eb/json.h"
#include "eb_test.h"
#include "harness/metrics/tegrastats.h"
#include "harness/report/report.h"
#include "harness/report/report_html.h"

#define T0_NS 1700000000000000000ull /* the pass's start (wall = monotonic in these files) */

static const char orin_line[] =
    "01-24-2024 09:17:09 RAM 3503/7337MB (lfb 7x1MB) SWAP 430/3668MB (cached 1MB) CPU "
    "[11%@729,13%@729,9%@729,18%@729,off,off] EMC_FREQ 0%@2133 GR3D_FREQ 0%@%d GR3D2_FREQ 0%@0 "
    "VIC_FREQ 115 APE 174 GPU@41.343C tj@46.968C VDD_IN 4915mW/4915mW";

/* metrics.jsonl in `dir`: 60 samples, one a second from T0; the GPU clock `mhz0` before
 * `drop_s`, `mhz1` from it on. */
static void write_metrics(const char *dir, int mhz0, int mhz1, double drop_s)
{
    char path[512], line[512], wall[40];
    snprintf(path, sizeof(path), "%s/metrics.jsonl", dir);
    FILE *fp = fopen(path, "w");
    ASSERT_TRUE(fp != NULL);
    for (int i = 0; i < 60; i++) {
        /* The format string holds one %d (the clock); the other % are literal in the line. */
        char fmt[sizeof(orin_line) + 16];
        size_t o = 0;
        for (const char *p = orin_line; *p; p++) {
            if (p[0] == '%' && p[1] == 'd')
                fmt[o++] = *p;
            else if (*p == '%')
                fmt[o++] = '%', fmt[o++] = '%';
            else
                fmt[o++] = *p;
            if (p[0] == '%' && p[1] == 'd')
                continue;
        }
        fmt[o] = '\0';
        snprintf(line, sizeof(line), fmt, i < drop_s ? mhz0 : mhz1);
        struct eb_tegra_sample ts;
        eb_tegrastats_parse_line(line, &ts);
        eb_clock_iso8601(T0_NS + (uint64_t)i * 1000000000ull, wall, sizeof(wall));
        struct eb_json_writer w;
        eb_json_writer_init_file(&w, fp, 0);
        eb_json_obj_begin(&w);
        eb_json_knum(&w, "t_s", (double)i);
        eb_json_kstr(&w, "wall", wall);
        eb_json_key(&w, "tegrastats");
        eb_tegrastats_write_json(&ts, &w);
        eb_json_obj_end(&w);
        fputc('\n', fp);
    }
    ASSERT_TRUE(fclose(fp) == 0);
}

/* A slot that ran 60 s: latency `ms0` before `step_s`, `ms1` after, 100 frames a second. */
static void make_slot(struct eb_slot_result *s, double ms0, double ms1, double step_s)
{
    memset(s, 0, sizeof(*s));
    s->status = EB_SLOT_OK;
    s->series_t0_ns = T0_NS;
    eb_stat_series_init(&s->e2e_series);
    for (int i = 0; i < 6000; i++) {
        const double t = i / 100.0;
        eb_stat_series_add(&s->e2e_series, t, t < step_s ? ms0 : ms1);
    }
}

static void find(const char *dir, const struct eb_slot_result *s, struct eb_throttle_onset *out)
{
    struct eb_report_metrics m;
    eb_report_metrics_init(&m);
    struct eb_diag d = {0};
    ASSERT_OK(eb_report_metrics_load_dir(dir, 0, &m, &d));
    ASSERT_TRUE(m.n == 60);
    eb_report__throttle_find(s, &m, out);
    eb_report_metrics_fini(&m);
}

EB_TEST(clock_drop_with_latency_step_coincides)
{
    const char *dir = eb_test_tmpdir();
    write_metrics(dir, 1300, 612, 30);
    struct eb_slot_result s;
    make_slot(&s, 10.0, 14.0, 31.0);
    struct eb_throttle_onset t;
    find(dir, &s, &t);
    ASSERT_TRUE(t.checked && t.found && t.coincides);
    ASSERT_NEAR(t.t_s, 31.0, s.e2e_series.width_s);
    ASSERT_NEAR(t.latency_before_ms, 10.0, 1e-9);
    ASSERT_NEAR(t.latency_after_ms, 14.0, 1e-9);
    ASSERT_NEAR(t.clock_t_s, 29.5, 0.6);
    ASSERT_NEAR(t.clock_before_mhz, 1300, 1e-9);
    ASSERT_NEAR(t.clock_after_mhz, 612, 1e-9);
}

EB_TEST(latency_step_without_clock_change_does_not_coincide)
{
    const char *dir = eb_test_tmpdir();
    write_metrics(dir, 1300, 1300, 30);
    struct eb_slot_result s;
    make_slot(&s, 10.0, 14.0, 31.0);
    struct eb_throttle_onset t;
    find(dir, &s, &t);
    ASSERT_TRUE(t.found && !t.coincides);
    ASSERT_TRUE(isnan(t.clock_t_s));
}

EB_TEST(clock_drop_without_latency_change_is_no_onset)
{
    const char *dir = eb_test_tmpdir();
    write_metrics(dir, 1300, 612, 30);
    struct eb_slot_result s;
    make_slot(&s, 10.0, 10.0, 31.0);
    struct eb_throttle_onset t;
    find(dir, &s, &t);
    ASSERT_TRUE(t.checked && !t.found && !t.coincides);
}
