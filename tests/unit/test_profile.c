/* --profile: the per-operator aggregation (eb_profile_result_build), its rendering in
 * report.json / report.md, and the vtable wrapper for a backend without a profile. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/backend.h"
#include "eb/json.h"
#include "eb_test.h"
#include "harness/report/report.h"
#include "harness/results/result.h"

/* Two runs of a five-node graph: per run Conv 3 + 1 ms, Sigmoid 0.5, Concat 0.25, MaxPool 0.25. */
static const struct eb_backend_prof_node small_nodes[] = {
    {"/model.0/conv/Conv", "Conv", "silu", 6.0, 2000000000ull},
    {"/model.1/act/Sigmoid", "Sigmoid", "", 1.0, 1000000ull},
    {"/model.2/conv/Conv", "Conv", "", 2.0, 500000000ull},
    {"/model.3/Concat", "Concat", "", 0.5, 2000000ull},
    {"/model.4/pool/MaxPool", "MaxPool", "", 0.5, 1000000ull},
};

/* Devices as the native backend reports them (eb_model_info.device). */
static const struct eb_backend_device_info dev_cpu = {
    .reported = 1, .device = EB_DEVICE_CPU, .precision = "fp32"};
static const struct eb_backend_device_info dev_h100_fp16 = {.reported = 1,
                                                            .device = EB_DEVICE_CUDA,
                                                            .name = "NVIDIA H100 80GB HBM3",
                                                            .sms = 132,
                                                            .total_bytes = 85031714816ull,
                                                            .clock_khz = 1980000,
                                                            .precision = "fp16"};

static void build_small_on(struct eb_profile_result *out, double infer_mean,
                           const struct eb_backend_device_info *dev)
{
    struct eb_backend_profile prof = {
        .n_nodes = 5, .nodes = small_nodes, .runs = 2, .run_total_ms = 10.2};
    eb_profile_result_build(&prof, infer_mean, dev, out);
}

static void build_small(struct eb_profile_result *out, double infer_mean)
{
    build_small_on(out, infer_mean, &dev_cpu);
}

EB_TEST(build_aggregates_by_op_type)
{
    struct eb_profile_result r;
    build_small(&r, 5.0);
    ASSERT_EQ_INT(r.available, 1);
    ASSERT_EQ_INT(r.frames, 2);
    ASSERT_EQ_INT(r.n_nodes, 5);
    ASSERT_NEAR(r.sum_ms_per_frame, 5.0, 1e-12);
    ASSERT_NEAR(r.run_ms_per_frame, 5.1, 1e-12);
    ASSERT_NEAR(r.sum_to_inference, 1.0, 1e-12);
    ASSERT_EQ_INT(r.n_ops, 4);
    ASSERT_STREQ(r.ops[0].op, "Conv");
    ASSERT_EQ_INT(r.ops[0].nodes, 2);
    ASSERT_NEAR(r.ops[0].ms_per_frame, 4.0, 1e-12);
    ASSERT_NEAR(r.ops[0].pct, 80.0, 1e-9);
    ASSERT_NEAR(r.ops[0].gflops_per_frame, 2.5, 1e-12);
    ASSERT_NEAR(r.ops[0].gflops_per_s, 2.5 / 0.004, 1e-6);
    ASSERT_STREQ(r.ops[1].op, "Sigmoid");
    /* Ties (Concat, MaxPool: 0.25 ms each) are ordered by name. */
    ASSERT_STREQ(r.ops[2].op, "Concat");
    ASSERT_STREQ(r.ops[3].op, "MaxPool");
    double pct = 0;
    for (size_t i = 0; i < r.n_ops; i++)
        pct += r.ops[i].pct;
    ASSERT_NEAR(pct, 100.0, 1e-9);
    ASSERT_NEAR(r.gflops_per_frame, 2.504, 1e-12);
}

EB_TEST(build_top_nodes_sorted_with_fusion)
{
    struct eb_profile_result r;
    build_small(&r, NAN);
    ASSERT_EQ_INT(r.n_top, 5);
    ASSERT_STREQ(r.top[0].name, "/model.0/conv/Conv");
    ASSERT_STREQ(r.top[0].fused, "silu");
    ASSERT_NEAR(r.top[0].ms_per_frame, 3.0, 1e-12);
    ASSERT_NEAR(r.top[0].pct, 60.0, 1e-9);
    ASSERT_NEAR(r.top[0].gflops_per_s, 2.0 / 0.003, 1e-6);
    ASSERT_STREQ(r.top[1].name, "/model.2/conv/Conv");
    ASSERT_STREQ(r.top[2].name, "/model.1/act/Sigmoid");
    ASSERT_STREQ(r.top[3].name, "/model.3/Concat"); /* equal times keep execution order */
    ASSERT_TRUE(isnan(r.sum_to_inference));         /* no inference mean: no ratio */
}

EB_TEST(build_caps_top_nodes_and_op_types)
{
    enum { N = 60 };
    struct eb_backend_prof_node nodes[N];
    char names[N][16], ops[N][16];
    for (int k = 0; k < N; k++) {
        snprintf(names[k], sizeof(names[k]), "n%d", k);
        snprintf(ops[k], sizeof(ops[k]), "Op%d", k % 40); /* 40 distinct op types */
        nodes[k] = (struct eb_backend_prof_node){names[k], ops[k], "", (double)(k + 1), 0};
    }
    struct eb_backend_profile prof = {.n_nodes = N, .nodes = nodes, .runs = 1};
    struct eb_profile_result r;
    eb_profile_result_build(&prof, 0.0, &dev_cpu, &r);
    ASSERT_EQ_INT(r.n_top, EB_PROFILE_TOP_NODES);
    for (int i = 0; i < EB_PROFILE_TOP_NODES; i++) /* the slowest, slowest first */
        ASSERT_NEAR(r.top[i].ms_per_frame, (double)(N - i), 1e-12);
    ASSERT_EQ_INT(r.n_ops, EB_PROFILE_MAX_OPS);
    uint32_t count = 0;
    double pct = 0;
    int other = 0;
    for (size_t i = 0; i < r.n_ops; i++) {
        count += r.ops[i].nodes;
        pct += r.ops[i].pct;
        other += strcmp(r.ops[i].op, "(other)") == 0;
        ASSERT_TRUE(isnan(r.ops[i].gflops_per_s) || r.ops[i].gflops_per_s == 0.0);
    }
    ASSERT_EQ_INT(count, N); /* no node is lost past the cap */
    ASSERT_EQ_INT(other, 1);
    ASSERT_NEAR(pct, 100.0, 1e-9);
    ASSERT_TRUE(isnan(r.sum_to_inference)); /* a zero inference mean gives no ratio */
}

EB_TEST(build_without_runs_is_unavailable)
{
    struct eb_backend_profile prof = {.n_nodes = 5, .nodes = small_nodes, .runs = 0};
    struct eb_profile_result r;
    eb_profile_result_build(&prof, 1.0, &dev_cpu, &r);
    ASSERT_EQ_INT(r.available, 0);
    eb_profile_result_build(NULL, 1.0, &dev_cpu, &r);
    ASSERT_EQ_INT(r.available, 0);
}

/* ---- MFU against the device's dense peak --------------------------------------------------- */

EB_TEST(build_mfu_exact_against_a_known_peak)
{
    /* One node, two runs of 1 ms each, 494.7 GFLOP a run: 494.7 TFLOP/s, half of the H100
     * SXM5's dense fp16 peak (989.4); the measured inference mean (1.25 ms) gives 40%. */
    const struct eb_backend_prof_node one = {"/conv", "Conv", "", 2.0, 494700000000ull};
    struct eb_backend_profile prof = {.n_nodes = 1, .nodes = &one, .runs = 2, .run_total_ms = 2};
    struct eb_profile_result r;
    eb_profile_result_build(&prof, 1.25, &dev_h100_fp16, &r);
    ASSERT_EQ_INT(r.available, 1);
    ASSERT_STREQ(r.peak_device, "NVIDIA H100 SXM5");
    ASSERT_STREQ(r.peak_precision, "fp16");
    ASSERT_NEAR(r.peak_tflops, 989.4, 1e-12);
    ASSERT_NEAR(r.peak_clock_mhz, 1830, 1e-12);
    ASSERT_CONTAINS(r.peak_note, "H100 datasheet");
    ASSERT_NEAR(r.mfu_pct, 50.0, 1e-9);
    ASSERT_NEAR(r.mfu_inference_pct, 40.0, 1e-9);
    ASSERT_NEAR(r.ops[0].mfu_pct, 50.0, 1e-9);
    ASSERT_NEAR(r.top[0].mfu_pct, 50.0, 1e-9);
    /* The same run in fp32 is measured against the CUDA-core FP32 peak (66.9): 739.5%, which
     * says the FLOPs cannot have run in fp32 (no figure is clamped). */
    struct eb_backend_device_info fp32 = dev_h100_fp16;
    snprintf(fp32.precision, sizeof(fp32.precision), "fp32");
    eb_profile_result_build(&prof, 1.25, &fp32, &r);
    ASSERT_NEAR(r.peak_tflops, 66.9, 1e-12);
    ASSERT_NEAR(r.mfu_pct, 100.0 * 494.7 / 66.9, 1e-9);
}

EB_TEST(build_mfu_per_op_and_node)
{
    struct eb_profile_result r;
    build_small_on(&r, 4.0, &dev_h100_fp16);
    const double peak = 989.4e3; /* GFLOP/s */
    ASSERT_STREQ(r.ops[0].op, "Conv");
    ASSERT_NEAR(r.ops[0].mfu_pct, 100.0 * (2.5 / 0.004) / peak, 1e-12);
    ASSERT_NEAR(r.top[0].mfu_pct, 100.0 * (2.0 / 0.003) / peak, 1e-12);
    ASSERT_NEAR(r.mfu_pct, 100.0 * (2.504 / 0.005) / peak, 1e-12);           /* node-time sum */
    ASSERT_NEAR(r.mfu_inference_pct, 100.0 * (2.504 / 0.004) / peak, 1e-12); /* inference */
    /* No inference mean: that figure is unknown, the node-time one is not. */
    build_small_on(&r, NAN, &dev_h100_fp16);
    ASSERT_TRUE(isnan(r.mfu_inference_pct) && isfinite(r.mfu_pct));
}

EB_TEST(build_mfu_unknown_device_or_cpu_is_null_with_reason)
{
    struct eb_profile_result r;
    struct eb_backend_device_info unknown = dev_h100_fp16;
    snprintf(unknown.name, sizeof(unknown.name), "NVIDIA GeForce RTX 4090 D");
    unknown.sms = 114;
    build_small_on(&r, 5.0, &unknown);
    ASSERT_EQ_INT(r.available, 1);
    ASSERT_TRUE(isnan(r.peak_tflops) && isnan(r.mfu_pct) && isnan(r.mfu_inference_pct));
    ASSERT_TRUE(isnan(r.ops[0].mfu_pct) && isnan(r.top[0].mfu_pct));
    ASSERT_STREQ(r.peak_device, "");
    ASSERT_CONTAINS(r.peak_note, "unknown device: no peak in the table");
    ASSERT_CONTAINS(r.peak_note, "RTX 4090 D");
    ASSERT_TRUE(isfinite(r.gflops_per_s)); /* the achieved figures stay */

    build_small_on(&r, 5.0, &dev_cpu);
    ASSERT_TRUE(isnan(r.peak_tflops) && isnan(r.mfu_pct) && isnan(r.ops[0].mfu_pct));
    ASSERT_STREQ(r.peak_precision, "fp32");
    ASSERT_CONTAINS(r.peak_note, "cpu: no peak in the table");

    build_small_on(&r, 5.0, NULL); /* a backend that does not say */
    ASSERT_TRUE(isnan(r.mfu_pct));
    ASSERT_CONTAINS(r.peak_note, "does not say which device");
    struct eb_backend_device_info silent = {0};
    build_small_on(&r, 5.0, &silent);
    ASSERT_CONTAINS(r.peak_note, "does not say which device");
}

/* ---- rendering -------------------------------------------------------------------------- */

static struct eb_json_value *render_json(const struct eb_run_result *r)
{
    struct eb_json_writer w;
    eb_json_writer_init_mem(&w, 1);
    eb_report_write_json(r, &w);
    ASSERT_TRUE(!eb_json_writer_error(&w));
    char *text = eb_json_writer_take(&w, NULL);
    ASSERT_TRUE(text != NULL);
    struct eb_json_value *root = NULL;
    struct eb_diag diag = {0};
    if (eb_json_parse(text, strlen(text), &root, &diag) != EB_OK)
        EB_FAIL("report.json does not parse: %s", diag.msg);
    free(text);
    return root;
}

static char *render_md(const struct eb_run_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    ASSERT_TRUE(fp != NULL);
    eb_report_write_md(r, fp);
    ASSERT_TRUE(fclose(fp) == 0);
    return buf;
}

static const struct eb_json_value *need(const struct eb_json_value *root, const char *path)
{
    const struct eb_json_value *v = eb_json_path(root, path);
    if (v == NULL)
        EB_FAIL("missing key %s", path);
    return v;
}

static void fill_run(struct eb_run_result *r)
{
    eb_run_result_init(r);
    snprintf(r->mode, sizeof(r->mode), "dual");
    r->version = "test";
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        struct eb_slot_result *s = &r->slots[i];
        s->status = EB_SLOT_OK;
        s->frames_measured = 2;
        s->profile_requested = 1;
        snprintf(s->model_path, sizeof(s->model_path), "m%d.onnx", i);
    }
    snprintf(r->slots[0].backend, sizeof(r->slots[0].backend), "native");
    build_small_on(&r->slots[0].profile, 5.0, &dev_h100_fp16);
    snprintf(r->slots[1].backend, sizeof(r->slots[1].backend), "ort");
    snprintf(r->slots[1].profile_note, sizeof(r->slots[1].profile_note),
             "slot thermal: --profile: the per-operator profile is available with the native "
             "backend only");
}

EB_TEST(report_json_has_profile_or_null)
{
    struct eb_run_result r;
    fill_run(&r);
    struct eb_json_value *root = render_json(&r);
    ASSERT_EQ_INT(need(root, "slots/0/profile/by_op_type")->n, 4);
    ASSERT_STREQ(need(root, "slots/0/profile/by_op_type/0/op")->str, "Conv");
    ASSERT_NEAR(need(root, "slots/0/profile/by_op_type/0/pct")->num, 80.0, 1e-9);
    ASSERT_NEAR(need(root, "slots/0/profile/by_op_type/0/nodes")->num, 2, 0);
    ASSERT_NEAR(need(root, "slots/0/profile/sum_to_inference")->num, 1.0, 1e-12);
    ASSERT_EQ_INT(need(root, "slots/0/profile/top_nodes")->n, 5);
    ASSERT_STREQ(need(root, "slots/0/profile/top_nodes/0/fused")->str, "silu");
    ASSERT_EQ_INT(need(root, "slots/0/profile/top_nodes/1/fused")->type, EB_JSON_NULL);
    ASSERT_STREQ(need(root, "slots/0/profile/peak_device")->str, "NVIDIA H100 SXM5");
    ASSERT_STREQ(need(root, "slots/0/profile/peak_precision")->str, "fp16");
    ASSERT_NEAR(need(root, "slots/0/profile/peak_tflops")->num, 989.4, 1e-9);
    ASSERT_NEAR(need(root, "slots/0/profile/peak_clock_mhz")->num, 1830, 1e-9);
    ASSERT_CONTAINS(need(root, "slots/0/profile/peak_note")->str, "H100 datasheet");
    ASSERT_NEAR(need(root, "slots/0/profile/mfu_pct")->num, 100.0 * 500.8 / 989.4e3, 1e-9);
    ASSERT_NEAR(need(root, "slots/0/profile/mfu_inference_pct")->num, 100.0 * 500.8 / 989.4e3,
                1e-9);
    ASSERT_NEAR(need(root, "slots/0/profile/by_op_type/0/mfu_pct")->num, 100.0 * 625 / 989.4e3,
                1e-9);
    ASSERT_NEAR(need(root, "slots/0/profile/top_nodes/0/mfu_pct")->num,
                100.0 * (2.0 / 0.003) / 989.4e3, 1e-9);
    ASSERT_EQ_INT(need(root, "slots/0/profile_note")->type, EB_JSON_NULL);
    ASSERT_EQ_INT(need(root, "slots/1/profile")->type, EB_JSON_NULL);
    ASSERT_CONTAINS(need(root, "slots/1/profile_note")->str, "native backend only");
    ASSERT_EQ_INT(need(root, "warnings")->n, 1);
    ASSERT_CONTAINS(need(root, "warnings/0")->str, "native backend only");
    eb_json_free(root);
    eb_run_result_fini(&r);
}

EB_TEST(report_json_profile_without_peak_has_null_mfu)
{
    struct eb_run_result r;
    fill_run(&r);
    build_small_on(&r.slots[0].profile, 5.0, &dev_cpu);
    struct eb_json_value *root = render_json(&r);
    ASSERT_EQ_INT(need(root, "slots/0/profile/mfu_pct")->type, EB_JSON_NULL);
    ASSERT_EQ_INT(need(root, "slots/0/profile/mfu_inference_pct")->type, EB_JSON_NULL);
    ASSERT_EQ_INT(need(root, "slots/0/profile/peak_tflops")->type, EB_JSON_NULL);
    ASSERT_EQ_INT(need(root, "slots/0/profile/peak_clock_mhz")->type, EB_JSON_NULL);
    ASSERT_EQ_INT(need(root, "slots/0/profile/peak_device")->type, EB_JSON_NULL);
    ASSERT_STREQ(need(root, "slots/0/profile/peak_precision")->str, "fp32");
    ASSERT_CONTAINS(need(root, "slots/0/profile/peak_note")->str, "cpu: no peak in the table");
    ASSERT_EQ_INT(need(root, "slots/0/profile/by_op_type/0/mfu_pct")->type, EB_JSON_NULL);
    ASSERT_EQ_INT(need(root, "slots/0/profile/top_nodes/0/mfu_pct")->type, EB_JSON_NULL);
    eb_json_free(root);
    char *md = render_md(&r);
    ASSERT_CONTAINS(md, "| MFU (model FLOPs utilisation) | n/a — cpu: no peak in the table, which "
                        "lists NVIDIA GPUs only |");
    ASSERT_CONTAINS(md, "| Conv | 2 | 4.000 | 80.0 | 2.500 | 625.0 | n/a |");
    free(md);
    eb_run_result_fini(&r);
}

EB_TEST(report_md_has_profile_tables)
{
    struct eb_run_result r;
    fill_run(&r);
    char *md = render_md(&r);
    ASSERT_CONTAINS(md, "### Per-operator profile");
    ASSERT_CONTAINS(md, "| Op type | Nodes | ms/frame | % | GFLOP/frame | GFLOP/s | MFU % |");
    ASSERT_CONTAINS(md, "| Conv | 2 | 4.000 | 80.0 | 2.500 | 625.0 | 0.06 |");
    ASSERT_CONTAINS(md, "| Node | Op | Fused | ms/frame | % | GFLOP/s | MFU % |");
    ASSERT_CONTAINS(md, "| /model.0/conv/Conv | Conv | silu | 3.000 | 60.0 | 666.7 | 0.07 |");
    ASSERT_CONTAINS(md, "| MFU (model FLOPs utilisation) | 0.05% over the sum of node times, 0.05% "
                        "over the measured inference mean, of the dense fp16 peak of NVIDIA H100 "
                        "SXM5, 989.4 TFLOPS at 1830 MHz (NVIDIA H100 datasheet");
    ASSERT_CONTAINS(md, "= 100.0% of the measured inference mean 5.000 ms");
    ASSERT_CONTAINS(md, "> **Warning:** slot thermal: --profile");
    ASSERT_CONTAINS(md, "## Warnings");
    free(md);
    eb_run_result_fini(&r);
}

/* ---- the vtable wrapper ------------------------------------------------------------------ */

static enum eb_status noprof_probe(const struct eb_backend_config *cfg,
                                   struct eb_backend_probe *probe_out, struct eb_diag *diag)
{
    (void)cfg;
    (void)diag;
    memset(probe_out, 0, sizeof(*probe_out));
    return EB_OK;
}

static enum eb_status noprof_open(void *priv, const struct eb_backend_config *cfg,
                                  struct eb_diag *diag)
{
    (void)priv;
    (void)cfg;
    (void)diag;
    return EB_OK;
}

static void noprof_close(void *priv)
{
    (void)priv;
}

EB_TEST(wrapper_without_profile_entry_is_unsupported)
{
    const struct eb_backend_ops ops = {.abi = EB_BACKEND_ABI,
                                       .name = "noprof",
                                       .priv_size = 8,
                                       .probe = noprof_probe,
                                       .open = noprof_open,
                                       .close = noprof_close};
    struct eb_backend *be = NULL;
    struct eb_backend_config cfg = {.profile = 1};
    struct eb_diag diag = {0};
    ASSERT_OK(eb_backend_create(&ops, &cfg, &be, &diag));
    struct eb_backend_profile prof;
    memset(&prof, 0xFF, sizeof(prof));
    ASSERT_EQ_INT(eb_backend_profile_get(be, &prof, &diag), EB_ERR_UNSUPPORTED);
    ASSERT_EQ_INT(prof.n_nodes, 0);
    ASSERT_TRUE(prof.nodes == NULL);
    ASSERT_CONTAINS(diag.msg, "noprof");
    eb_backend_profile_reset(be); /* no entry: nothing happens */
    eb_backend_destroy(be);
}

EB_TEST(native_ops_declare_profile)
{
    const struct eb_backend_ops *ops = eb_backend_find("native");
    if (ops == NULL)
        EB_SKIP("no native backend in this build");
    ASSERT_TRUE((ops->caps & EB_BACKEND_CAP_OP_PROFILE) != 0);
    ASSERT_TRUE(ops->profile != NULL && ops->profile_reset != NULL);
    const struct eb_backend_ops *ort = eb_backend_find("ort");
    if (ort != NULL)
        ASSERT_TRUE(ort->profile != NULL && ort->profile_reset != NULL &&
                    (ort->caps & EB_BACKEND_CAP_OP_PROFILE) != 0);
}

/* A node whose FLOPs the backend does not know (flops 0: ORT's QLinearConv, its prepacked weight
 * absent from the profile's shapes) makes its op type's and the model's GFLOP and MFU unknown,
 * never a smaller number; the other op types keep theirs. */
EB_TEST(unknown_node_flops_are_not_counted_as_zero)
{
    struct eb_backend_prof_node nodes[] = {
        {"/c0", "QLinearConv", "", 4.0, 0},
        {"/c1", "QLinearConv", "", 2.0, 3000000000ull},
        {"/q", "QuantizeLinear", "", 1.0, 1000000ull},
    };
    struct eb_backend_profile prof = {.n_nodes = 3, .nodes = nodes, .runs = 1, .run_total_ms = 7};
    struct eb_profile_result r;
    eb_profile_result_build(&prof, 7.0, &dev_h100_fp16, &r);
    ASSERT_EQ_INT(r.n_ops, 2);
    ASSERT_STREQ(r.ops[0].op, "QLinearConv");
    ASSERT_TRUE(isnan(r.ops[0].gflops_per_frame) && isnan(r.ops[0].mfu_pct));
    ASSERT_NEAR(r.ops[1].gflops_per_frame, 0.001, 1e-12);
    ASSERT_TRUE(isnan(r.gflops_per_frame) && isnan(r.gflops_per_s) && isnan(r.mfu_pct));
    ASSERT_NEAR(r.sum_ms_per_frame, 7.0, 1e-12); /* the times are all there */
}
