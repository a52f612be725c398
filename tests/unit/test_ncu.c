/* Nsight Compute's CSV raw page, the targets from report.json, the per-kernel summary, the NVTX
 * range names, and `edgebench profile`'s option split. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eb/nvtx.h"
#include "eb_test.h"
#include "harness/cmd/ncu.h"
#include "harness/cmd/profile.h"

#define ASSERT_STR(a, b) ASSERT_TRUE(strcmp((a), (b)) == 0)

/*
 * ncu --csv --page raw as Nsight Compute 2025.3 writes it (columns cut down): quoted fields, the
 * header, the units row, one row a launch; the NVTX stack column holds "" quotes and commas.
 */
static const char raw_page[] =
    "==PROF== Connected to process 4242 (/usr/bin/edgebench)\n"
    "report: out/20260101-000000-rgb/report.md\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\","
    "\"thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg\","
    "\"Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg\",\"Kernel Name\","
    "\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\","
    "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"gpu__time_duration.avg\","
    "\"gpu__time_duration.sum\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\","
    "\"sm__warps_active.avg.pct_of_peak_sustained_active\"\r\n"
    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"%\",\"ms\",\"us\",\"%\",\"%"
    "\"\r\n"
    "\"0\",\"4242\",\"edgebench\",\"127.0.0.1\","
    "\"4242  \"\"edgebench:Conv:a, b:none:none:none:none:ASCII:Conv:a, b\"\" \",\"\","
    "\"void conv2d<float, 3, 3>(const float*, float*, int)\",\"1\",\"13\",\"(256, 1, 1)\","
    "\"(40, 16, 1)\",\"0\",\"9.0\",\"81.5\",\"9\",\"1,234.5\",\"23.4\",\"61.9\"\r\n"
    "\"1\",\"4242\",\"edgebench\",\"127.0.0.1\",\"\",\"\",\"epilogue<\"\"silu\"\", 4>(float*)\","
    "\"1\",\"13\",\"(512, 1, 1)\",\"(100, 1, 1)\",\"0\",\"9.0\",\"n/a\",\"9\",\"2.5\",\"12.5\","
    "\"\"\r\n"
    "==PROF== Disconnected from process 4242\n";

EB_TEST(csv_quoted_commas_units_and_preamble)
{
    struct eb_ncu_table t = {0};
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_ncu_csv_parse(raw_page, strlen(raw_page), &t, &d), EB_OK);
    ASSERT_EQ_INT(t.n, 2);
    ASSERT_EQ_INT(t.rows[0].id, 0);
    ASSERT_STR(t.rows[0].kernel, "void conv2d<float, 3, 3>(const float*, float*, int)");
    ASSERT_NEAR(t.rows[0].duration_us, 1234.5, 1e-9); /* usecond, thousands separator */
    ASSERT_NEAR(t.rows[0].sm_pct, 23.4, 1e-9);
    ASSERT_NEAR(t.rows[0].dram_pct, 81.5, 1e-9);
    ASSERT_NEAR(t.rows[0].occupancy_pct, 61.9, 1e-9);
    ASSERT_STR(t.rows[1].kernel, "epilogue<\"silu\", 4>(float*)");
    ASSERT_TRUE(isnan(t.rows[1].dram_pct));
    ASSERT_TRUE(isnan(t.rows[1].occupancy_pct));
    ASSERT_NEAR(t.rows[1].duration_us, 2.5, 1e-12);
    eb_ncu_table_fini(&t);
    eb_ncu_table_fini(&t); /* twice is harmless */
}

EB_TEST(csv_duration_units)
{
    static const char *const units[] = {"nsecond", "usecond", "msecond", "second", ""};
    static const double us[] = {0.002, 2.0, 2000.0, 2e6, 0.002};
    for (int i = 0; i < 5; i++) {
        char text[512];
        snprintf(text, sizeof(text),
                 "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"%s\"\n"
                 "\"7\",\"k\",\"2\"\n",
                 units[i]);
        struct eb_ncu_table t = {0};
        ASSERT_EQ_INT(eb_ncu_csv_parse(text, strlen(text), &t, NULL), EB_OK);
        ASSERT_EQ_INT(t.n, 1);
        ASSERT_EQ_INT(t.rows[0].id, 7);
        ASSERT_NEAR(t.rows[0].duration_us, us[i], us[i] * 1e-12);
        ASSERT_TRUE(isnan(t.rows[0].sm_pct)); /* a metric ncu did not give */
        eb_ncu_table_fini(&t);
    }
}

EB_TEST(csv_without_table_or_kernel_column)
{
    struct eb_ncu_table t = {0};
    struct eb_diag d = {0};
    static const char none[] = "==PROF== Connected\n==WARNING== No kernels were profiled.\n";
    ASSERT_EQ_INT(eb_ncu_csv_parse(none, strlen(none), &t, &d), EB_OK);
    ASSERT_EQ_INT(t.n, 0);
    ASSERT_EQ_INT(eb_ncu_csv_parse("", 0, &t, &d), EB_OK);
    ASSERT_EQ_INT(t.n, 0);
    static const char bad[] = "\"ID\",\"Name\"\n\"\",\"\"\n\"0\",\"k\"\n";
    ASSERT_EQ_INT(eb_ncu_csv_parse(bad, strlen(bad), &t, &d), EB_ERR_FORMAT);
    ASSERT_TRUE(strstr(d.msg, "Kernel Name") != NULL);
    /* An unterminated quote ends at the end of the text, without reading past it. */
    static const char open_quote[] = "\"ID\",\"Kernel Name\"\n\"0\",\"k(int, ";
    ASSERT_EQ_INT(eb_ncu_csv_parse(open_quote, strlen(open_quote), &t, NULL), EB_OK);
    ASSERT_EQ_INT(t.n, 1);
    ASSERT_STR(t.rows[0].kernel, "k(int, ");
    eb_ncu_table_fini(&t);
}

EB_TEST(nvtx_range_names)
{
    char b[EB_NVTX_NAME_MAX];
    ASSERT_EQ_INT(eb_nvtx_range_name("Conv", "/model.0/conv/Conv", b, sizeof(b)), 23);
    ASSERT_STR(b, "Conv:.model.0.conv.Conv");
    eb_nvtx_range_name("Add", "a@b\\c*d[e]", b, sizeof(b));
    ASSERT_STR(b, "Add:a.b.c.d.e.");
    eb_nvtx_range_name("Relu", NULL, b, sizeof(b));
    ASSERT_STR(b, "Relu:");
    char longname[300];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    ASSERT_EQ_INT(eb_nvtx_range_name("Conv", longname, b, sizeof(b)), 5 + EB_NVTX_NODE_CHARS);
    char small[8];
    ASSERT_EQ_INT(eb_nvtx_range_name("Conv", "abcdef", small, sizeof(small)), 7);
    ASSERT_STR(small, "Conv:ab");
}

static const char report_json[] =
    "{\"slots\": ["
    " {\"name\": \"rgb\", \"backend\": \"native\", \"profile\": {\"top_nodes\": ["
    "  {\"name\": \"/m/a\", \"op\": \"Conv\", \"ms_per_frame\": 3.0},"
    "  {\"name\": \"/m/b\", \"op\": \"Conv\", \"ms_per_frame\": 1.0},"
    "  {\"name\": \"shared\", \"op\": \"Add\", \"ms_per_frame\": 0.5}]}},"
    " {\"name\": \"thermal\", \"backend\": \"native\", \"profile\": {\"top_nodes\": ["
    "  {\"name\": \"/m/c\", \"op\": \"Concat\", \"ms_per_frame\": 2.0},"
    "  {\"name\": \"shared\", \"op\": \"Add\", \"ms_per_frame\": 0.9}]}},"
    " {\"name\": \"other\", \"profile\": null}]}";

EB_TEST(targets_slowest_first_one_per_range)
{
    struct eb_ncu_target t[EB_NCU_MAX_TARGETS];
    size_t n = 0;
    ASSERT_EQ_INT(eb_ncu_targets_from_report(report_json, strlen(report_json), 15, t, &n, NULL),
                  EB_OK);
    ASSERT_EQ_INT(n, 4);
    ASSERT_STR(t[0].range, "Conv:.m.a");
    ASSERT_STR(t[0].node, "/m/a");
    ASSERT_STR(t[0].slot, "rgb");
    ASSERT_STR(t[1].range, "Concat:.m.c");
    ASSERT_STR(t[1].slot, "thermal");
    ASSERT_STR(t[2].range, "Conv:.m.b");
    ASSERT_STR(t[3].range, "Add:shared"); /* the slower of the two */
    ASSERT_NEAR(t[3].ms_per_frame, 0.9, 1e-12);
    ASSERT_STR(t[3].slot, "thermal");
    ASSERT_EQ_INT(eb_ncu_targets_from_report(report_json, strlen(report_json), 2, t, &n, NULL),
                  EB_OK);
    ASSERT_EQ_INT(n, 2);
    ASSERT_STR(t[1].range, "Concat:.m.c");
    static const char none[] = "{\"slots\": [{\"name\": \"rgb\", \"profile\": null}]}";
    ASSERT_EQ_INT(eb_ncu_targets_from_report(none, strlen(none), 5, t, &n, NULL), EB_OK);
    ASSERT_EQ_INT(n, 0);
    /* ort's profile names ONNX Runtime's nodes, which have no NVTX ranges to target. */
    static const char ort[] = "{\"slots\": [{\"name\": \"rgb\", \"backend\": \"ort\", \"profile\": "
                              "{\"top_nodes\": [{\"name\": \"/m/a\", \"op\": \"Conv\", "
                              "\"ms_per_frame\": 3.0}]}}]}";
    ASSERT_EQ_INT(eb_ncu_targets_from_report(ort, strlen(ort), 5, t, &n, NULL), EB_OK);
    ASSERT_EQ_INT(n, 0);
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_ncu_targets_from_report("{nope", 5, 5, t, &n, &d), EB_ERR_FORMAT);
}

EB_TEST(kernel_targets_from_the_trace_and_their_regex)
{
    static const char json[] =
        "{\"trace\": {\"frames\": [4, 2], \"top_kernels\": ["
        "{\"name\": \"_Z4convPKfPf\", \"calls\": 8, \"total_ms\": 2.0, \"share_pct\": 80},"
        "{\"name\": \"k.add(x)\", \"calls\": 4, \"total_ms\": 0.5, \"share_pct\": 20}]}}";
    struct eb_ncu_target t[EB_NCU_MAX_TARGETS];
    size_t n = 0;
    ASSERT_EQ_INT(eb_ncu_kernel_targets_from_report(json, strlen(json), 5, t, &n, NULL), EB_OK);
    ASSERT_EQ_INT(n, 2);
    ASSERT_STR(t[0].kernel, "_Z4convPKfPf");
    ASSERT_STR(t[0].op, "kernel");
    ASSERT_STR(t[0].range, "");
    ASSERT_NEAR(t[0].ms_per_frame, 0.5, 1e-12); /* 2 ms over the 4 frames of the busier slot */
    char re[256];
    ASSERT_TRUE(eb_ncu_kernel_regex(t, n, re, sizeof(re)));
    ASSERT_STR(re, "regex:^(_Z4convPKfPf|k\\.add\\(x\\))$");
    ASSERT_TRUE(!eb_ncu_kernel_regex(t, n, re, 20)); /* does not fit */
    ASSERT_EQ_INT(eb_ncu_kernel_targets_from_report(json, strlen(json), 1, t, &n, NULL), EB_OK);
    ASSERT_EQ_INT(n, 1);
    /* No trace (or a trace without kernels): no kernel targets, the nodes are used. */
    static const char none[] = "{\"trace\": null}";
    ASSERT_EQ_INT(eb_ncu_kernel_targets_from_report(none, strlen(none), 5, t, &n, NULL), EB_OK);
    ASSERT_EQ_INT(n, 0);
}

static struct eb_ncu_launch launch(long long id, char *kernel, double us, double sm, double dram)
{
    struct eb_ncu_launch l = {.id = id,
                              .kernel = kernel,
                              .duration_us = us,
                              .sm_pct = sm,
                              .dram_pct = dram,
                              .occupancy_pct = 50.0};
    return l;
}

EB_TEST(summary_groups_by_range_and_kernel)
{
    struct eb_ncu_target targets[2];
    memset(targets, 0, sizeof(targets));
    snprintf(targets[0].range, sizeof(targets[0].range), "Conv:a");
    snprintf(targets[1].range, sizeof(targets[1].range), "Add:b");
    char k1[] = "gemm", k2[] = "copy", k3[] = "lost", k5[] = "fill", r5[] = "Relu:z/fill";
    /* Renamed as ncu 2025.3 does ("<range>/<kernel>"), or bare, or with a domain. */
    char r1[] = "Conv:a/gemm", r1d[] = "edgebench@Conv:a", r2[] = "Add:b/copy", r3[] = "lost";
    struct eb_ncu_launch raw_rows[] = {
        launch(0, k1, 10.0, 80.0, 20.0), launch(1, k2, 2.0, 10.0, 70.0),
        launch(2, k1, 20.0, 70.0, 30.0), launch(3, k2, 4.0, 10.0, 60.0),
        launch(4, k3, 1.0, NAN, 5.0),    launch(5, k5, 0.5, 1.0, 2.0),
        launch(6, k5, 0.5, 1.0, 2.0),
    };
    struct eb_ncu_launch range_rows[] = {
        launch(4, r3, 0, 0, 0), launch(0, r1, 0, 0, 0), launch(1, r1d, 0, 0, 0),
        launch(2, r1, 0, 0, 0), launch(3, r2, 0, 0, 0), launch(6, r5, 0, 0, 0),
        launch(5, r5, 0, 0, 0),
    };
    struct eb_ncu_table raw = {.rows = raw_rows, .n = 7}, ranges = {.rows = range_rows, .n = 7};
    struct eb_ncu_summary s = {0};
    ASSERT_EQ_INT(eb_ncu_summarize(&raw, &ranges, targets, 2, &s, NULL), EB_OK);
    ASSERT_EQ_INT(s.n_launches, 7);
    ASSERT_EQ_INT(s.n_kernels, 5);
    /* Target 0 first, slowest kernel first; the domain@ prefix matched; launches averaged. */
    ASSERT_STR(s.kernels[0].kernel, "gemm");
    ASSERT_EQ_INT(s.kernels[0].target, 0);
    ASSERT_EQ_INT(s.kernels[0].launches, 2);
    ASSERT_NEAR(s.kernels[0].duration_us, 15.0, 1e-12);
    ASSERT_NEAR(s.kernels[0].sm_pct, 75.0, 1e-12);
    ASSERT_STR(eb_ncu_verdict(s.kernels[0].sm_pct, s.kernels[0].dram_pct), "compute-bound");
    ASSERT_STR(s.kernels[1].kernel, "copy");
    ASSERT_EQ_INT(s.kernels[1].target, 0);
    ASSERT_STR(s.kernels[1].range, "Conv:a");
    ASSERT_STR(eb_ncu_verdict(s.kernels[1].sm_pct, s.kernels[1].dram_pct), "memory-bound");
    ASSERT_STR(s.kernels[2].kernel, "copy");
    ASSERT_EQ_INT(s.kernels[2].target, 1);
    /* Then the ranges that are no target (one group for both launches), slowest first; a
     * launch renamed to its own name ran in no range. */
    ASSERT_STR(s.kernels[3].kernel, "lost");
    ASSERT_EQ_INT(s.kernels[3].target, -1);
    ASSERT_TRUE(s.kernels[3].range == NULL);
    ASSERT_TRUE(isnan(s.kernels[3].sm_pct));
    ASSERT_STR(eb_ncu_verdict(s.kernels[3].sm_pct, s.kernels[3].dram_pct), "unknown");
    ASSERT_STR(s.kernels[4].kernel, "fill");
    ASSERT_STR(s.kernels[4].range, "Relu:z");
    ASSERT_EQ_INT(s.kernels[4].launches, 2);
    ASSERT_STR(eb_ncu_verdict(50.0, 50.0), "compute-bound");
    eb_ncu_summary_fini(&s);
    /* Without the renamed import every range is unknown. */
    ASSERT_EQ_INT(eb_ncu_summarize(&raw, NULL, targets, 2, &s, NULL), EB_OK);
    ASSERT_EQ_INT(s.n_kernels, 4);
    ASSERT_EQ_INT(s.kernels[0].target, -1);
    eb_ncu_summary_fini(&s);
    struct eb_ncu_table empty = {0};
    ASSERT_EQ_INT(eb_ncu_summarize(&empty, NULL, targets, 2, &s, NULL), EB_OK);
    ASSERT_EQ_INT(s.n_kernels, 0);
    eb_ncu_summary_fini(&s);
}

EB_TEST(reports_written)
{
    struct eb_ncu_target t;
    memset(&t, 0, sizeof(t));
    snprintf(t.range, sizeof(t.range), "Conv:a");
    snprintf(t.op, sizeof(t.op), "Conv");
    char k[] = "k|pipe";
    struct eb_ncu_launch rows[] = {launch(0, k, 5.0, 10.0, 90.0)};
    struct eb_ncu_table raw = {.rows = rows, .n = 1};
    struct eb_ncu_summary s = {0};
    ASSERT_EQ_INT(eb_ncu_summarize(&raw, NULL, &t, 1, &s, NULL), EB_OK);
    struct eb_ncu_info info = {.status = "ok", .targets = &t, .n_targets = 1};
    const char *dir = eb_test_tmpdir();
    ASSERT_EQ_INT(eb_ncu_write_reports(dir, &info, &s, NULL), EB_OK);
    char path[1024];
    snprintf(path, sizeof(path), "%s/ncu.md", dir);
    char *md = eb_test_read_file(path, NULL);
    ASSERT_TRUE(md != NULL && strstr(md, "| (none) | k\\|pipe | 1 | 5.00 |") != NULL);
    free(md);
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_ncu_write_reports("/nonexistent/dir", &info, &s, &d), EB_ERR_IO);
    ASSERT_TRUE(strstr(d.msg, "/nonexistent/dir/ncu.json") != NULL);
    eb_ncu_summary_fini(&s);
}

EB_TEST(profile_options_split_from_run_options)
{
    char *argv[] = {"--mode",     "rgb",      "--ncu", "--ncu_top",
                    "3",          "--output", "--ncu", "--ncu_path=/x/ncu",
                    "--frames=4", NULL};
    struct eb_config cfg;
    struct eb_profile_options po;
    int help = 1;
    ASSERT_EQ_INT(eb_profile_parse(9, argv, &cfg, &po, &help, stderr), 0);
    ASSERT_EQ_INT(help, 0);
    ASSERT_EQ_INT(po.ncu, 1);
    ASSERT_EQ_INT(po.ncu_top, 3);
    ASSERT_STR(po.ncu_path, "/x/ncu");
    ASSERT_EQ_INT(po.run_argc, 5); /* --output's value "--ncu" stays run's */
    ASSERT_STR(po.run_argv[3], "--ncu");
    ASSERT_STR(cfg.output, "--ncu");
    ASSERT_EQ_INT(cfg.frames, 4);
    ASSERT_EQ_INT(cfg.profile, 1);
    eb_profile_options_fini(&po);
    char *bad[] = {"--ncu", "--ncu_top", "16", NULL};
    FILE *err = tmpfile();
    ASSERT_TRUE(err != NULL);
    ASSERT_EQ_INT(eb_profile_parse(3, bad, &cfg, &po, &help, err), 2);
    eb_profile_options_fini(&po);
    rewind(err);
    char line[256] = "";
    ASSERT_TRUE(fgets(line, sizeof(line), err) != NULL);
    ASSERT_STR(line, "edgebench: error: --ncu_top: 16 is out of range (accepted: 1..15)\n");
    fclose(err);
}
