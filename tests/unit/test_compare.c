/* `edgebench compare`: the cartesian expansion, list splitting, the row renderers (CSV, JSON,
 * JSONL and Markdown agree on a crafted record set: same values, same order; CSV quoting), the
 * HTML page, and the bad-input exits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eb/json.h"
#include "eb_test.h"
#include "harness/cmd/compare.h"

EB_TEST(compare_expand_is_cartesian_models_outermost)
{
    const char *models[] = {"a.onnx", "b.onnx"};
    const char *backends[] = {"native", "ort"};
    const char *precisions[] = {"fp32", "fp16", "int8"};
    const int imgsz[] = {320, 640};
    const char *devices[] = {"cpu", "cuda"};
    struct eb_compare_axes ax = {.models = models,
                                 .n_models = 2,
                                 .backends = backends,
                                 .n_backends = 2,
                                 .precisions = precisions,
                                 .n_precisions = 3,
                                 .imgsz = imgsz,
                                 .n_imgsz = 2,
                                 .devices = devices,
                                 .n_devices = 2};
    struct eb_compare_row *rows = NULL;
    size_t n = 0;
    struct eb_diag d = {0};
    ASSERT_OK(eb_compare_expand(&ax, &rows, &n, &d));
    ASSERT_EQ_INT(n, 48);
    size_t i = 0;
    for (size_t m = 0; m < 2; m++)
        for (size_t b = 0; b < 2; b++)
            for (size_t p = 0; p < 3; p++)
                for (size_t s = 0; s < 2; s++)
                    for (size_t v = 0; v < 2; v++, i++) {
                        ASSERT_STREQ(rows[i].model, models[m]);
                        ASSERT_STREQ(rows[i].backend, backends[b]);
                        ASSERT_STREQ(rows[i].precision, precisions[p]);
                        ASSERT_EQ_INT(rows[i].imgsz, imgsz[s]);
                        ASSERT_STREQ(rows[i].device, devices[v]);
                        ASSERT_EQ_INT(rows[i].status, EB_COMPARE_PENDING);
                        ASSERT_TRUE(isnan(rows[i].p50_ms) && isnan(rows[i].map50_95));
                    }
    free(rows);

    /* An empty axis and an oversized product are bad input. */
    ax.n_devices = 0;
    ASSERT_EQ_INT(eb_compare_expand(&ax, &rows, &n, &d), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d.msg, "--devices");
    const char *many[64];
    for (int k = 0; k < 64; k++)
        many[k] = "x.onnx";
    ax.n_devices = 2;
    ax.models = many;
    ax.n_models = 64;
    ax.n_imgsz = 2; /* 64 x 2 x 3 x 2 x 2 = 1536: fine */
    ASSERT_OK(eb_compare_expand(&ax, &rows, &n, &d));
    ASSERT_EQ_INT(n, 1536);
    free(rows);
    ax.backends = many; /* 64 x 64 x ... > EB_COMPARE_MAX_ROWS */
    ax.n_backends = 64;
    struct eb_diag d2 = {0};
    ASSERT_EQ_INT(eb_compare_expand(&ax, &rows, &n, &d2), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d2.msg, "combinations");
}

EB_TEST(compare_split_list_trims_and_skips_empty_items)
{
    char **items = NULL;
    size_t n = 0;
    struct eb_diag d = {0};
    ASSERT_OK(eb_compare_split_list(" native, ort,,auto ", "--backends", &items, &n, &d));
    ASSERT_EQ_INT(n, 3);
    ASSERT_STREQ(items[0], "native");
    ASSERT_STREQ(items[1], "ort");
    ASSERT_STREQ(items[2], "auto");
    eb_compare_free_list(items, n);
    ASSERT_EQ_INT(eb_compare_split_list(" , ,", "--imgsz", &items, &n, &d), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d.msg, "--imgsz");
    eb_compare_free_list(NULL, 0);
}

/* Three rows: one measured, one unsupported with a comma, quotes and a pipe in its reason, one
 * failed. */
static void crafted(struct eb_compare_row rows[3])
{
    for (int i = 0; i < 3; i++) {
        memset(&rows[i], 0, sizeof(rows[i]));
        eb_compare_row_clear_figures(&rows[i]);
        snprintf(rows[i].backend, sizeof(rows[i].backend), "%s", i == 1 ? "ort" : "native");
        snprintf(rows[i].precision, sizeof(rows[i].precision), "%s", i == 1 ? "fp16" : "fp32");
        snprintf(rows[i].device, sizeof(rows[i].device), "cpu");
        rows[i].imgsz = i == 2 ? 640 : 320;
        rows[i].size_mb = 12.664867;
        rows[i].params = 3151904;
    }
    snprintf(rows[0].model, sizeof(rows[0].model), "models/yolov8n.onnx");
    rows[0].status = EB_COMPARE_OK;
    rows[0].gflops = 2.1849;
    rows[0].map50_95 = 0.43271;
    rows[0].frames = 200;
    rows[0].p50_ms = 12.34567;
    rows[0].p50_lo_ms = 12.1;
    rows[0].p50_hi_ms = 12.5;
    rows[0].p90_ms = 13.0004;
    rows[0].p99_ms = 15.25;
    rows[0].p99_lo_ms = 14.9;
    rows[0].p99_hi_ms = 16.0;
    rows[0].fps = 80.04;
    rows[0].peak_mem_mb = 120.56;
    snprintf(rows[0].verdict, sizeof(rows[0].verdict), "INVALID");
    snprintf(rows[0].verdict_reasons, sizeof(rows[0].verdict_reasons),
             "measured for 2.5 s, shorter than --min_duration_s 10");
    snprintf(rows[0].backend_ran, sizeof(rows[0].backend_ran), "native");
    snprintf(rows[1].model, sizeof(rows[1].model), "models/yolov8n.onnx");
    rows[1].status = EB_COMPARE_UNSUPPORTED;
    snprintf(rows[1].reason, sizeof(rows[1].reason),
             "fp16 needs cuda, \"the CPU\" computes in fp32 | see --help");
    snprintf(rows[2].model, sizeof(rows[2].model), "missing, file.onnx");
    rows[2].status = EB_COMPARE_FAILED;
    rows[2].size_mb = NAN;
    rows[2].params = 0;
    snprintf(rows[2].reason, sizeof(rows[2].reason), "model missing, file.onnx: no such file");
}

static char *render(int which, const struct eb_compare_row *rows, size_t n, int imgsz)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    ASSERT_TRUE(fp != NULL);
    if (which == 0)
        eb_compare_write_csv(rows, n, imgsz, fp);
    else if (which == 1)
        eb_compare_write_jsonl(rows, n, fp);
    else
        eb_compare_write_md(rows, n, fp);
    fclose(fp);
    return buf;
}

/* RFC 4180 fields of one CSV line starting at *p; advances *p past the line. */
static size_t csv_line(const char **p, char fields[][600], size_t max)
{
    size_t n = 0, k = 0;
    int quoted = 0;
    const char *s = *p;
    fields[0][0] = '\0';
    for (;; s++) {
        if (quoted) {
            if (*s == '"' && s[1] == '"') {
                fields[n][k++] = '"';
                s++;
            } else if (*s == '"') {
                quoted = 0;
            } else {
                fields[n][k++] = *s;
            }
            continue;
        }
        if (*s == '"') {
            quoted = 1;
        } else if (*s == ',' || *s == '\n' || *s == '\0') {
            fields[n][k] = '\0';
            n++;
            k = 0;
            if (*s != ',' || n == max)
                break;
            fields[n][0] = '\0';
        } else {
            fields[n][k++] = *s;
        }
    }
    *p = *s ? s + 1 : s;
    return n;
}

/* Cells of one Markdown table line ("| a | b |"), unescaping "\|"; advances *p. */
static size_t md_line(const char **p, char fields[][600], size_t max)
{
    const char *s = *p;
    size_t n = 0;
    ASSERT_TRUE(*s == '|');
    s++;
    while (*s && *s != '\n' && n < max) {
        size_t k = 0;
        while (*s == ' ')
            s++;
        while (*s && *s != '\n' && !(*s == '|' && s[-1] != '\\')) {
            if (*s == '\\' && s[1] == '|') {
                s++;
                continue;
            }
            fields[n][k++] = *s++;
        }
        while (k > 0 && fields[n][k - 1] == ' ')
            k--;
        fields[n][k] = '\0';
        n++;
        if (*s == '|')
            s++;
    }
    *p = *s ? s + 1 : s;
    return n;
}

EB_TEST(compare_csv_json_md_agree_on_values_and_order)
{
    struct eb_compare_row rows[3];
    crafted(rows);
    char *csv = render(0, rows, 3, 0), *jsonl = render(1, rows, 3, 0), *md = render(2, rows, 3, 0);
    static char head[64][600], cf[64][600], mf[64][600];
    const char *pc = csv, *pm = md, *pj = jsonl;
    const size_t nh = csv_line(&pc, head, 64);
    ASSERT_TRUE(nh >= 24);
    ASSERT_STREQ(head[0], "status");
    ASSERT_STREQ(head[1], "reason");
    ASSERT_EQ_INT(md_line(&pm, mf, 64), nh); /* header */
    ASSERT_EQ_INT(md_line(&pm, mf, 64), nh); /* separator */
    for (int r = 0; r < 3; r++) {
        ASSERT_EQ_INT(csv_line(&pc, cf, 64), nh);
        ASSERT_EQ_INT(md_line(&pm, mf, 64), nh);
        const char *eol = strchr(pj, '\n');
        ASSERT_TRUE(eol != NULL);
        struct eb_json_value *obj = NULL;
        struct eb_diag d = {0};
        ASSERT_OK(eb_json_parse(pj, (size_t)(eol - pj), &obj, &d));
        pj = eol + 1;
        ASSERT_EQ_INT(obj->type, EB_JSON_OBJECT);
        ASSERT_EQ_INT(obj->n, nh);
        for (size_t c = 0; c < nh; c++) {
            /* Same member order as the CSV header. */
            ASSERT_STREQ(obj->keys[c], head[c]);
            const struct eb_json_value *v = &obj->items[c];
            if (v->type == EB_JSON_NULL) {
                ASSERT_STREQ(cf[c], "");
                ASSERT_STREQ(mf[c], "-");
            } else if (v->type == EB_JSON_STRING) {
                ASSERT_STREQ(cf[c], v->str);
                ASSERT_STREQ(mf[c], v->str);
            } else {
                ASSERT_EQ_INT(v->type, EB_JSON_NUMBER);
                ASSERT_STREQ(cf[c], mf[c]);
                ASSERT_TRUE(strtod(cf[c], NULL) == v->num);
            }
        }
        eb_json_free(obj);
    }
    ASSERT_STREQ(pc, "");
    ASSERT_STREQ(pj, "");
    /* Spot values: rounding is the column's, the same everywhere. */
    ASSERT_CONTAINS(csv,
                    "ok,,models/yolov8n.onnx,native,fp32,320,cpu,12.66,3151904,2.18,0.4327,,"
                    "200,12.346,12.100,12.500,13.000,15.250,14.900,16.000,80.0,120.6,,INVALID");
    free(csv);
    free(jsonl);
    free(md);
}

EB_TEST(compare_csv_quotes_commas_and_quotes)
{
    struct eb_compare_row rows[3];
    crafted(rows);
    char *csv = render(0, rows, 3, 0);
    ASSERT_CONTAINS(csv, "unsupported,\"fp16 needs cuda, \"\"the CPU\"\" computes in fp32 | see "
                         "--help\",models/yolov8n.onnx,ort,fp16,320,cpu,");
    ASSERT_CONTAINS(csv, "failed,\"model missing, file.onnx: no such file\",\"missing, "
                         "file.onnx\",native,fp32,640,cpu,,,");
    free(csv);
    /* One file per input size: only its rows, after the same header. */
    csv = render(0, rows, 3, 640);
    const char *nl = strchr(csv, '\n');
    ASSERT_TRUE(nl != NULL);
    ASSERT_TRUE(strncmp(nl + 1, "failed,", 7) == 0);
    ASSERT_TRUE(strchr(nl + 1, '\n') != NULL && strchr(nl + 1, '\n')[1] == '\0');
    free(csv);
    char *md = render(2, rows, 3, 0);
    ASSERT_CONTAINS(md, "computes in fp32 \\| see --help");
    free(md);
}

EB_TEST(compare_html_has_charts_and_escapes)
{
    struct eb_compare_row rows[3];
    crafted(rows);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    ASSERT_TRUE(fp != NULL);
    ASSERT_OK(eb_compare_write_html(rows, 3, "sweep <1>", fp));
    fclose(fp);
    ASSERT_CONTAINS(buf, "<title>sweep &lt;1&gt;</title>");
    ASSERT_CONTAINS(buf, "id=\"p50_bars\"");
    ASSERT_CONTAINS(buf, "id=\"latency_map\""); /* row 0 has a mAP */
    ASSERT_CONTAINS(buf, "&quot;the CPU&quot;");
    ASSERT_TRUE(strstr(buf, "<script") == NULL && strstr(buf, "src=\"http") == NULL);
    free(buf);
    /* Without a mAP, no scatter but a note. */
    rows[0].map50_95 = NAN;
    fp = open_memstream(&buf, &len);
    ASSERT_OK(eb_compare_write_html(rows, 3, "t", fp));
    fclose(fp);
    ASSERT_TRUE(strstr(buf, "id=\"latency_map\"") == NULL);
    ASSERT_CONTAINS(buf, "--data DIR");
    free(buf);
}

static int run_main(const char *const *args, int n, char **err_text)
{
    atomic_int stop = 0;
    size_t lo = 0, le = 0;
    char *out_text = NULL;
    FILE *out = open_memstream(&out_text, &lo), *err = open_memstream(err_text, &le);
    struct eb_compare_env env = {
        .stop = &stop, .command_line = "test", .version = "0", .out = out, .err = err};
    char *argv[16];
    for (int i = 0; i < n; i++)
        argv[i] = (char *)args[i];
    int code = eb_compare_main(n, argv, &env);
    fclose(out);
    fclose(err);
    free(out_text);
    return code;
}

EB_TEST(compare_bad_input_exits_2_with_one_line)
{
    char *err = NULL;
    const char *a1[] = {"--backends", "native,tpu", "--db", "none"};
    ASSERT_EQ_INT(run_main(a1, 4, &err), 2);
    ASSERT_CONTAINS(err, "unknown backend 'tpu'; use native, ort or auto");
    free(err);
    const char *a2[] = {"--precisions", "fp32,bf16", "--db", "none"};
    ASSERT_EQ_INT(run_main(a2, 4, &err), 2);
    ASSERT_CONTAINS(err, "unknown precision 'bf16'");
    free(err);
    const char *a3[] = {"--devices", "npu", "--db", "none"};
    ASSERT_EQ_INT(run_main(a3, 4, &err), 2);
    ASSERT_CONTAINS(err, "unknown device 'npu'");
    free(err);
    const char *a4[] = {"--imgsz", "320,100", "--db", "none"};
    ASSERT_EQ_INT(run_main(a4, 4, &err), 2);
    ASSERT_CONTAINS(err, "'100' is not an input size");
    free(err);
    const char *a5[] = {"--models", "/nonexistent/a.onnx", "--db", "none"};
    ASSERT_EQ_INT(run_main(a5, 4, &err), 2);
    ASSERT_CONTAINS(err, "no model file exists");
    free(err);
    const char *a6[] = {"--model0", "a.onnx"};
    ASSERT_EQ_INT(run_main(a6, 2, &err), 2);
    ASSERT_CONTAINS(err, "not a compare option");
    free(err);
    const char *a7[] = {"--frames", "-3"};
    ASSERT_EQ_INT(run_main(a7, 2, &err), 2);
    ASSERT_CONTAINS(err, "--frames");
    free(err);
    const char *a8[] = {"--help"};
    ASSERT_EQ_INT(run_main(a8, 1, &err), 0);
    free(err);
    const char *a9[] = {"--calib_images", "4", "--db", "none"};
    ASSERT_EQ_INT(run_main(a9, 4, &err), 2);
    ASSERT_CONTAINS(err, "--calib_images: give --calib DIR too");
    free(err);
    const char *a10[] = {"--calib", "/nonexistent/calib", "--db", "none"};
    ASSERT_EQ_INT(run_main(a10, 4, &err), 2);
    ASSERT_CONTAINS(err, "--calib /nonexistent/calib: no such folder");
    free(err);
    const char *a11[] = {"--calib", ".", "--calib_images", "0", "--db", "none"};
    ASSERT_EQ_INT(run_main(a11, 6, &err), 2);
    ASSERT_CONTAINS(err, "--calib_images: '0' is not a count");
    free(err);
}

/* map_delta pairs a row with the ok fp32 row of the same model, backend, imgsz and device. */
EB_TEST(compare_map_delta_is_against_the_matching_fp32_row)
{
    struct eb_compare_row rows[7];
    static const struct {
        const char *precision, *device;
        int imgsz;
        enum eb_compare_status status;
        double map;
    } k[7] = {{"fp32", "cpu", 320, EB_COMPARE_OK, 0.40},
              {"int8", "cpu", 320, EB_COMPARE_OK, 0.37},
              {"fp16", "cuda", 320, EB_COMPARE_OK, 0.41}, /* no fp32 cuda row */
              {"int8", "cpu", 640, EB_COMPARE_OK, 0.30},  /* its fp32 row failed */
              {"fp32", "cpu", 640, EB_COMPARE_FAILED, 0.50},
              {"int8", "cpu", 320, EB_COMPARE_OK, NAN}, /* no mAP of its own */
              {"fp32", "cuda", 640, EB_COMPARE_OK, NAN}};
    for (int i = 0; i < 7; i++) {
        memset(&rows[i], 0, sizeof(rows[i]));
        eb_compare_row_clear_figures(&rows[i]);
        snprintf(rows[i].model, sizeof(rows[i].model), "m.onnx");
        snprintf(rows[i].backend, sizeof(rows[i].backend), "native");
        snprintf(rows[i].precision, sizeof(rows[i].precision), "%s", k[i].precision);
        snprintf(rows[i].device, sizeof(rows[i].device), "%s", k[i].device);
        rows[i].imgsz = k[i].imgsz;
        rows[i].status = k[i].status;
        rows[i].map50_95 = k[i].map;
    }
    ASSERT_TRUE(isnan(rows[0].map_delta)); /* cleared: not measured */
    eb_compare_fill_map_delta(rows, 7);
    ASSERT_TRUE(rows[0].map_delta == 0.0);
    ASSERT_TRUE(fabs(rows[1].map_delta - (0.37 - 0.40)) < 1e-12);
    for (int i = 2; i < 7; i++)
        ASSERT_TRUE(isnan(rows[i].map_delta));
    /* Another backend's fp32 row is not the reference. */
    snprintf(rows[0].backend, sizeof(rows[0].backend), "ort");
    eb_compare_fill_map_delta(rows, 7);
    ASSERT_TRUE(rows[0].map_delta == 0.0 && isnan(rows[1].map_delta));
    char *csv = render(0, rows, 2, 0);
    ASSERT_CONTAINS(csv, ",map50_95,map_delta,frames,");
    ASSERT_CONTAINS(csv, ",0.4000,0.0000,");
    free(csv);
}
