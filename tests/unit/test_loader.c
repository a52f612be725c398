/*
 * The ONNX loader against failure: allocation-failure injection (the Nth allocation of a whole
 * eb_engine_load fails, for every N: a clean status, a message, nothing leaked), external-data
 * tensors (read relative to base_dir, same results as inline data, hostile locations and ranges
 * refused before any allocation), hard limits of the parser, and MatMulInteger.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eb/alloc.h"
#include "eb/engine.h"
#include "eb_test.h"
#include "engine/onnx/onnx_model.h"
#include "engine/onnx/onnx_wire.h"
#include "harness/cmd/model_plan.h"
#include "model/model.h"
#include "onnx_build.h"

/* ---- a small ONNX writer (beside tests/support/onnx_build.h) ---- */

static void put_entry(struct eb_pb_buf *t, const char *key, const char *value)
{
    struct eb_pb_buf e;
    eb_pb_buf_init(&e);
    eb_pb_put_str(&e, 1, key);
    eb_pb_put_str(&e, 2, value);
    eb_pb_put_msg(t, 13, &e);
    eb_pb_buf_fini(&e);
}

/* An initializer (GraphProto field 5): inline raw_data, or external data when `location` is set
 * (offset/length NULL = not written). */
static void put_init(struct eb_pb_buf *g, const char *name, int dtype, int rank,
                     const int64_t *dims, const void *raw, size_t raw_len, const char *location,
                     const char *offset, const char *length)
{
    struct eb_pb_buf t;
    eb_pb_buf_init(&t);
    for (int i = 0; i < rank; i++)
        eb_pb_put_varint(&t, 1, dims[i]);
    eb_pb_put_varint(&t, 2, dtype);
    eb_pb_put_str(&t, 8, name);
    if (location == NULL) {
        eb_pb_put_bytes(&t, 9, raw, raw_len);
    } else {
        put_entry(&t, "location", location);
        if (offset != NULL)
            put_entry(&t, "offset", offset);
        if (length != NULL)
            put_entry(&t, "length", length);
        eb_pb_put_varint(&t, 14, 1); /* data_location = EXTERNAL */
    }
    eb_pb_put_msg(g, 5, &t);
    eb_pb_buf_fini(&t);
}

static void put_node(struct eb_pb_buf *g, const char *op, const char *const *ins, int n_in,
                     const char *out)
{
    struct eb_pb_buf n;
    eb_pb_buf_init(&n);
    for (int i = 0; i < n_in; i++)
        eb_pb_put_str(&n, 1, ins[i]);
    eb_pb_put_str(&n, 2, out);
    eb_pb_put_str(&n, 3, op);
    eb_pb_put_str(&n, 4, op);
    eb_pb_put_msg(g, 1, &n);
    eb_pb_buf_fini(&n);
}

/* ModelProto around graph `g` (ir_version 8, opset 17); caller frees the bytes. */
static uint8_t *finish_model(struct eb_pb_buf *g, size_t *len)
{
    uint8_t *bytes = eb_test_model_finish(g, "loader_test", 17, len);
    ASSERT_TRUE(bytes != NULL);
    return bytes;
}

/* ---- allocation-failure injection ---- */

static uint8_t *synth_small(size_t *len)
{
    struct eb_synth_options o = {
        .arch = EB_SYNTH_YOLOV8, .scale = 'n', .imgsz = 64, .num_classes = 80};
    uint8_t *bytes = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_model_synth(&o, &bytes, len, &d));
    return bytes;
}

/* Loads `bytes` with a counting allocator whose `fail_at`th allocation fails; returns the
 * status, the number of allocations attempted in *n_allocs and checks that nothing leaked. */
static enum eb_status load_failing(const uint8_t *bytes, size_t len, int threads, uint64_t fail_at,
                                   uint64_t *n_allocs, struct eb_diag *d)
{
    struct eb_counting_alloc ca;
    eb_counting_alloc_init(&ca, eb_allocator_system(), 0);
    ca.fail_at = fail_at;
    struct eb_allocator a = eb_counting_alloc_iface(&ca);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.threads = threads;
    opt.imgsz = 64;
    opt.alloc = &a;
    struct eb_engine *e = NULL;
    memset(d, 0, sizeof(*d));
    enum eb_status st = eb_engine_load(bytes, len, "yolov8n-64.onnx", &opt, &e, d);
    if (st == EB_OK) {
        ASSERT_TRUE(e != NULL);
        eb_engine_destroy(e);
    } else {
        ASSERT_TRUE(e == NULL);
    }
    if (ca.live_bytes != 0)
        EB_FAIL("fail_at %llu: %zu bytes leaked (status %s: %s)", (unsigned long long)fail_at,
                ca.live_bytes, eb_status_name(st), d->msg);
    *n_allocs = ca.n_allocs;
    return st;
}

static void check_failed_cleanly(enum eb_status st, uint64_t n, const struct eb_diag *d)
{
    if (st == EB_OK)
        EB_FAIL("fail_at %llu: the load succeeded although allocation %llu failed",
                (unsigned long long)n, (unsigned long long)n);
    if (st != EB_ERR_NOMEM)
        EB_FAIL("fail_at %llu: status %s, expected nomem: %s", (unsigned long long)n,
                eb_status_name(st), d->msg);
    if (d->msg[0] == '\0')
        EB_FAIL("fail_at %llu: no message", (unsigned long long)n);
}

EB_TEST(alloc_fail_every_n)
{
    size_t len;
    uint8_t *bytes = synth_small(&len);
    struct eb_diag d;
    uint64_t total = 0, got = 0;
    ASSERT_OK(load_failing(bytes, len, 1, 0, &total, &d));
    ASSERT_TRUE(total > 10);
    printf("a successful load of yolov8n at imgsz 64 (%zu bytes) makes %llu allocations\n", len,
           (unsigned long long)total);
    for (uint64_t n = 1; n <= total; n++) {
        enum eb_status st = load_failing(bytes, len, 1, n, &got, &d);
        check_failed_cleanly(st, n, &d);
        ASSERT_TRUE(got >= n);
    }
    /* One past the last allocation: nothing fails. */
    ASSERT_OK(load_failing(bytes, len, 1, total + 1, &got, &d));
    ASSERT_EQ_INT(got, total);
    free(bytes);
}

EB_TEST(alloc_fail_with_thread_pool)
{
    size_t len;
    uint8_t *bytes = synth_small(&len);
    struct eb_diag d;
    uint64_t total = 0, got = 0;
    ASSERT_OK(load_failing(bytes, len, 2, 0, &total, &d));
    printf("with a thread pool of 2: %llu allocations\n", (unsigned long long)total);
    uint64_t picks[] = {1, 2, total / 4, total / 2, total - 2, total - 1, total};
    for (size_t i = 0; i < sizeof(picks) / sizeof(picks[0]); i++) {
        if (picks[i] < 1 || picks[i] > total)
            continue;
        check_failed_cleanly(load_failing(bytes, len, 2, picks[i], &got, &d), picks[i], &d);
    }
    free(bytes);
}

/* The parse alone routes every allocation through its allocator. */
EB_TEST(parse_uses_allocator)
{
    size_t len;
    uint8_t *bytes = synth_small(&len);
    struct eb_counting_alloc ca;
    eb_counting_alloc_init(&ca, eb_allocator_system(), 0);
    struct eb_allocator a = eb_counting_alloc_iface(&ca);
    struct eb_onnx_model *m = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_onnx_model_parse(bytes, len, "m", &a, &m, &d));
    ASSERT_TRUE(ca.n_allocs >= 2 && ca.live_bytes > 0);
    uint64_t total = ca.n_allocs;
    eb_onnx_model_destroy(m);
    ASSERT_EQ_INT(ca.live_bytes, 0);
    for (uint64_t n = 1; n <= total; n++) {
        eb_counting_alloc_init(&ca, eb_allocator_system(), 0);
        ca.fail_at = n;
        m = NULL;
        memset(&d, 0, sizeof(d));
        ASSERT_EQ_INT(eb_onnx_model_parse(bytes, len, "m", &a, &m, &d), EB_ERR_NOMEM);
        ASSERT_TRUE(m == NULL);
        ASSERT_CONTAINS(d.msg, "out of memory");
        ASSERT_EQ_INT(ca.live_bytes, 0);
    }
    free(bytes);
}

/* ---- external data ---- */

static const float k_w[12] = {0.5f, -1.0f, 2.0f, 0.25f, 3.0f,  -0.5f,
                              1.5f, 0.75f, -2.f, 4.0f,  -0.1f, 0.2f};
static const float k_b[3] = {0.1f, -0.2f, 0.3f};

/* Y = X·W + B, X [1, 4], W [4, 3] (inline, or external at `location`), B [3] inline. */
static uint8_t *linear_model(const char *location, const char *offset, const char *length,
                             size_t *len)
{
    struct eb_pb_buf g;
    const int64_t xd[2] = {1, 4}, wd[2] = {4, 3}, bd[1] = {3}, yd[2] = {1, 3};
    const char *mm_in[2] = {"X", "W"}, *add_in[2] = {"XW", "B"};
    eb_pb_buf_init(&g);
    put_node(&g, "MatMul", mm_in, 2, "XW");
    put_node(&g, "Add", add_in, 2, "Y");
    put_init(&g, "W", 1, 2, wd, k_w, sizeof(k_w), location, offset, length);
    put_init(&g, "B", 1, 1, bd, k_b, sizeof(k_b), NULL, NULL, NULL);
    eb_test_put_value_info(&g, 11, "X", 1, 2, xd);
    eb_test_put_value_info(&g, 12, "Y", 1, 2, yd);
    return finish_model(&g, len);
}

/* Loads the linear model (per-node profile on when `profile`), runs it on X = {1, -2, 0.5, 3}
 * and returns the engine (the caller destroys it) with y its output. */
static struct eb_engine *linear_run(const uint8_t *bytes, size_t len, const char *base_dir,
                                    int profile, float y[3])
{
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.threads = 1;
    opt.base_dir = base_dir;
    opt.profile = profile;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_load(bytes, len, "linear.onnx", &opt, &e, &d));
    float x[4] = {1.0f, -2.0f, 0.5f, 3.0f};
    struct eb_tensor in = {.dtype = EB_DTYPE_F32, .rank = 2, .shape = {1, 4}, .data = x}, out[1];
    ASSERT_OK(eb_engine_run(e, &in, 1, out, 1, &d));
    ASSERT_EQ_INT(out[0].dtype, EB_DTYPE_F32);
    ASSERT_EQ_INT(out[0].rank, 2);
    ASSERT_EQ_INT(out[0].shape[1], 3);
    memcpy(y, out[0].data, 3 * sizeof(float));
    return e;
}

static void run_linear(const uint8_t *bytes, size_t len, const char *base_dir, float y[3])
{
    eb_engine_destroy(linear_run(bytes, len, base_dir, 0, y));
}

static enum eb_status load_status(const uint8_t *bytes, size_t len, const char *base_dir,
                                  struct eb_diag *d)
{
    struct eb_counting_alloc ca;
    eb_counting_alloc_init(&ca, eb_allocator_system(), 0);
    struct eb_allocator a = eb_counting_alloc_iface(&ca);
    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.threads = 1;
    opt.base_dir = base_dir;
    opt.alloc = &a;
    struct eb_engine *e = NULL;
    memset(d, 0, sizeof(*d));
    enum eb_status st = eb_engine_load(bytes, len, "linear.onnx", &opt, &e, d);
    eb_engine_destroy(e);
    ASSERT_EQ_INT(ca.live_bytes, 0);
    /* Refusals happen before the tensor's data is allocated: nothing near 48 bytes more than
     * the model's own bookkeeping, and certainly not a huge claimed size. */
    ASSERT_TRUE(ca.peak_bytes < (size_t)64 << 20);
    return st;
}

EB_TEST(external_data_matches_inline)
{
    const char *dir = eb_test_tmpdir();
    char path[1024];
    uint8_t blob[16 + sizeof(k_w) + 8];
    size_t len_in, len_ext, len_sub;
    float y_in[3], y_ext[3], y_sub[3];

    /* The weights at offset 16 of a data file, with other bytes around them. */
    memset(blob, 0xAB, sizeof(blob));
    memcpy(blob + 16, k_w, sizeof(k_w));
    snprintf(path, sizeof(path), "%s/linear.data", dir);
    eb_test_write_file(path, blob, sizeof(blob));
    snprintf(path, sizeof(path), "%s/sub", dir);
    ASSERT_TRUE(mkdir(path, 0700) == 0);
    snprintf(path, sizeof(path), "%s/sub/w.bin", dir);
    eb_test_write_file(path, k_w, sizeof(k_w));

    uint8_t *inl = linear_model(NULL, NULL, NULL, &len_in);
    uint8_t *ext = linear_model("linear.data", "16", "48", &len_ext);
    uint8_t *sub = linear_model("./sub/w.bin", NULL, NULL, &len_sub);
    run_linear(inl, len_in, NULL, y_in);
    run_linear(ext, len_ext, dir, y_ext);
    run_linear(sub, len_sub, dir, y_sub);
    for (int i = 0; i < 3; i++) {
        ASSERT_TRUE(memcmp(&y_in[i], &y_ext[i], sizeof(float)) == 0);
        ASSERT_TRUE(memcmp(&y_in[i], &y_sub[i], sizeof(float)) == 0);
    }
    /* X·W + B by hand for X = {1, -2, 0.5, 3}. */
    for (int j = 0; j < 3; j++) {
        float want =
            k_b[j] + 1.0f * k_w[j] - 2.0f * k_w[3 + j] + 0.5f * k_w[6 + j] + 3.0f * k_w[9 + j];
        ASSERT_NEAR(y_in[j], want, 1e-5);
    }
    free(inl);
    free(ext);
    free(sub);
}

/* The profile counts MatMul as 2 FLOPs per multiply-add (EB_ENGINE_FLOPS_CONVENTION): X [1, 4] ·
 * W [4, 3] is 12 multiply-adds, 24 FLOPs, not one per output element. */
EB_TEST(matmul_profile_counts_two_flops_per_mac)
{
    size_t len;
    float y[3];
    uint8_t *bytes = linear_model(NULL, NULL, NULL, &len);
    struct eb_engine *e = linear_run(bytes, len, NULL, 1, y);
    struct eb_engine_profile p;
    eb_engine_profile_get(e, &p);
    int found = 0;
    for (size_t i = 0; i < p.n_nodes; i++)
        if (strcmp(p.nodes[i].op, "MatMul") == 0) {
            ASSERT_EQ_INT((int64_t)p.nodes[i].flops, 24);
            found = 1;
        }
    ASSERT_TRUE(found);
    eb_engine_destroy(e);
    free(bytes);
}

/* `edgebench model info` on a model whose weights are in an external file beside it (in another
 * folder than the current one): it plans the model as run loads it, from the model's folder. */
EB_TEST(model_info_plans_external_data)
{
    char dir[1024], path[1100];
    size_t len;
    snprintf(dir, sizeof(dir), "%s/models", eb_test_tmpdir());
    ASSERT_TRUE(mkdir(dir, 0700) == 0);
    snprintf(path, sizeof(path), "%s/w.bin", dir);
    eb_test_write_file(path, k_w, sizeof(k_w));
    uint8_t *ext = linear_model("w.bin", NULL, NULL, &len);
    snprintf(path, sizeof(path), "%s/linear.onnx", dir);
    eb_test_write_file(path, ext, len);
    free(ext);
    FILE *out = tmpfile(), *err = tmpfile();
    ASSERT_TRUE(out != NULL && err != NULL);
    char *argv[] = {"info", path, NULL};
    ASSERT_EQ_INT(eb_model_main(2, argv, eb_harness_model_plan, out, err), 0);
    char text[8192] = "";
    rewind(out);
    text[fread(text, 1, sizeof(text) - 1, out)] = '\0';
    fclose(out);
    fclose(err);
    /* W [4, 3], external, and the Linear's bias B [3] (an Add of a constant on a MatMul) */
    ASSERT_CONTAINS(text, "parameters: 15 ");
    ASSERT_CONTAINS(text, "memory plan (native engine");
    ASSERT_TRUE(strstr(text, "not available") == NULL);
}

EB_TEST(external_data_refused)
{
    const char *dir = eb_test_tmpdir();
    char path[1024];
    struct eb_diag d;
    size_t len;
    uint8_t *b;

    snprintf(path, sizeof(path), "%s/w.bin", dir);
    eb_test_write_file(path, k_w, sizeof(k_w));

    /* No base_dir: say what to do. */
    b = linear_model("w.bin", NULL, NULL, &len);
    ASSERT_EQ_INT(load_status(b, len, NULL, &d), EB_ERR_UNSUPPORTED);
    ASSERT_CONTAINS(d.msg, "'W'");
    ASSERT_CONTAINS(d.msg, "w.bin");
    ASSERT_CONTAINS(d.msg, "base_dir");
    ASSERT_OK(load_status(b, len, dir, &d));
    free(b);

    /* Escaping the folder. */
    const char *hostile[] = {"../w.bin", "sub/../../w.bin", "/etc/passwd", "..", ""};
    for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
        b = linear_model(hostile[i], NULL, NULL, &len);
        enum eb_status st = load_status(b, len, dir, &d);
        ASSERT_EQ_INT(st, EB_ERR_FORMAT);
        if (hostile[i][0] != '\0') {
            ASSERT_CONTAINS(d.msg, "'W'");
            ASSERT_CONTAINS(d.msg, hostile[i]);
        }
        free(b);
    }

    /* Ranges past the end of the file, a length that does not match the shape, bad numbers. */
    const char *offs[][2] = {{"4", NULL}, {"49", NULL}, {"18446744073709551615", NULL},
                             {"0", "44"}, {"0", "52"},  {"x", NULL},
                             {"-1", NULL}};
    for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
        b = linear_model("w.bin", offs[i][0], offs[i][1], &len);
        ASSERT_EQ_INT(load_status(b, len, dir, &d), EB_ERR_FORMAT);
        free(b);
    }
    ASSERT_CONTAINS(d.msg, "offset");

    /* A missing file names the tensor and the file. */
    b = linear_model("missing.bin", NULL, NULL, &len);
    ASSERT_EQ_INT(load_status(b, len, dir, &d), EB_ERR_IO);
    ASSERT_CONTAINS(d.msg, "'W'");
    ASSERT_CONTAINS(d.msg, "missing.bin");
    free(b);
}

/* A huge claimed external tensor is refused from the file size, before allocation. */
EB_TEST(external_data_huge_claim)
{
    const char *dir = eb_test_tmpdir();
    char path[1024];
    struct eb_diag d;
    struct eb_pb_buf g;
    size_t len;
    const int64_t xd[2] = {1, 4}, wd[2] = {4, 100000000}, yd[2] = {1, 100000000};
    const char *mm_in[2] = {"X", "W"};
    snprintf(path, sizeof(path), "%s/w.bin", dir);
    eb_test_write_file(path, k_w, sizeof(k_w));
    eb_pb_buf_init(&g);
    put_node(&g, "MatMul", mm_in, 2, "Y");
    put_init(&g, "W", 1, 2, wd, NULL, 0, "w.bin", NULL, NULL);
    eb_test_put_value_info(&g, 11, "X", 1, 2, xd);
    eb_test_put_value_info(&g, 12, "Y", 1, 2, yd);
    uint8_t *b = finish_model(&g, &len);
    ASSERT_EQ_INT(load_status(b, len, dir, &d), EB_ERR_FORMAT);
    ASSERT_CONTAINS(d.msg, "which has 48 bytes");
    free(b);
}

/* ---- parser limits ---- */

EB_TEST(parser_limits_before_allocation)
{
    struct eb_diag d;
    struct eb_pb_buf g;
    size_t len;
    const int64_t xd[2] = {1, 4};
    const char *mm_in[2] = {"X", "W"};
    const uint8_t raw[16] = {0};

    /* rank 9 */
    const int64_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 4};
    eb_pb_buf_init(&g);
    put_node(&g, "MatMul", mm_in, 2, "Y");
    put_init(&g, "W", 1, 9, d9, raw, 16, NULL, NULL, NULL);
    eb_test_put_value_info(&g, 11, "X", 1, 2, xd);
    eb_test_put_value_info(&g, 12, "Y", 1, 2, xd);
    uint8_t *b = finish_model(&g, &len);
    ASSERT_EQ_INT(load_status(b, len, NULL, &d), EB_ERR_FORMAT);
    ASSERT_CONTAINS(d.msg, "rank");
    free(b);

    /* dims whose product is far beyond the file */
    const int64_t dbig[3] = {1 << 30, 1 << 30, 1 << 30};
    eb_pb_buf_init(&g);
    put_node(&g, "MatMul", mm_in, 2, "Y");
    put_init(&g, "W", 1, 3, dbig, raw, 16, NULL, NULL, NULL);
    eb_test_put_value_info(&g, 11, "X", 1, 2, xd);
    eb_test_put_value_info(&g, 12, "Y", 1, 2, xd);
    b = finish_model(&g, &len);
    ASSERT_EQ_INT(load_status(b, len, NULL, &d), EB_ERR_FORMAT);
    ASSERT_CONTAINS(d.msg, "larger than the file");
    free(b);

    /* a dimension out of range */
    const int64_t dneg[2] = {-4, 1};
    eb_pb_buf_init(&g);
    put_node(&g, "MatMul", mm_in, 2, "Y");
    put_init(&g, "W", 1, 2, dneg, raw, 16, NULL, NULL, NULL);
    eb_test_put_value_info(&g, 11, "X", 1, 2, xd);
    eb_test_put_value_info(&g, 12, "Y", 1, 2, xd);
    b = finish_model(&g, &len);
    ASSERT_EQ_INT(load_status(b, len, NULL, &d), EB_ERR_FORMAT);
    free(b);

    /* raw_data that does not match the shape */
    const int64_t d8[2] = {4, 8};
    eb_pb_buf_init(&g);
    put_node(&g, "MatMul", mm_in, 2, "Y");
    put_init(&g, "W", 1, 2, d8, raw, 16, NULL, NULL, NULL);
    eb_test_put_value_info(&g, 11, "X", 1, 2, xd);
    eb_test_put_value_info(&g, 12, "Y", 1, 2, xd);
    b = finish_model(&g, &len);
    ASSERT_EQ_INT(load_status(b, len, NULL, &d), EB_ERR_FORMAT);
    free(b);

    /* An attribute repeating an empty tensor field 200000 times: two bytes of file for each
     * parsed tensor header; refused by the parser's memory budget, not allocated. */
    {
        struct eb_pb_buf a, n;
        const uint8_t empty_t[2] = {(5 << 3) | 2, 0};
        eb_pb_buf_init(&a);
        eb_pb_buf_init(&n);
        eb_pb_put_str(&a, 1, "value");
        for (int i = 0; i < 200000; i++)
            eb_pb_put_raw(&a, empty_t, sizeof(empty_t));
        eb_pb_put_varint(&a, 20, 4);
        eb_pb_put_str(&n, 2, "Y");
        eb_pb_put_str(&n, 4, "Constant");
        eb_pb_put_msg(&n, 5, &a);
        eb_pb_buf_init(&g);
        eb_pb_put_msg(&g, 1, &n);
        eb_test_put_value_info(&g, 12, "Y", 1, 2, xd);
        b = finish_model(&g, &len);
        eb_pb_buf_fini(&a);
        eb_pb_buf_fini(&n);
        struct eb_counting_alloc ca;
        eb_counting_alloc_init(&ca, eb_allocator_system(), 0);
        struct eb_allocator al = eb_counting_alloc_iface(&ca);
        struct eb_onnx_model *m = NULL;
        memset(&d, 0, sizeof(d));
        ASSERT_EQ_INT(eb_onnx_model_parse(b, len, "amp", &al, &m, &d), EB_ERR_FORMAT);
        ASSERT_CONTAINS(d.msg, "times the file size");
        ASSERT_TRUE(ca.peak_bytes < 64 * len + ((size_t)2 << 20));
        ASSERT_EQ_INT(ca.live_bytes, 0);
        free(b);
    }

    /* Every prefix of a valid model fails cleanly (or, for the few prefixes that are themselves
     * valid protobuf, at least without leaking). */
    uint8_t *full = linear_model(NULL, NULL, NULL, &len);
    for (size_t n = 0; n < len; n++) {
        enum eb_status st = load_status(full, n, NULL, &d);
        ASSERT_TRUE(st != EB_OK);
        ASSERT_TRUE(d.msg[0] != '\0');
    }
    free(full);
}

/* ---- MatMulInteger ---- */

EB_TEST(matmul_integer_zero_points)
{
    struct eb_pb_buf g;
    size_t len;
    /* A uint8 [2, 2, 3] (batch 2), B int8 [3, 2] constant, a_zero_point per row [2],
     * b_zero_point per column [2]. */
    const int64_t ad[3] = {2, 2, 3}, bd[2] = {3, 2}, azd[1] = {2}, bzd[1] = {2}, yd[3] = {2, 2, 2};
    const int8_t bw[6] = {-128, 127, 5, -7, 0, 1};
    const uint8_t az[2] = {3, 250};
    const int8_t bz[2] = {-2, 4};
    const char *ins[4] = {"A", "B", "AZ", "BZ"};
    eb_pb_buf_init(&g);
    put_node(&g, "MatMulInteger", ins, 4, "Y");
    put_init(&g, "B", 3, 2, bd, bw, sizeof(bw), NULL, NULL, NULL);
    put_init(&g, "AZ", 2, 1, azd, az, sizeof(az), NULL, NULL, NULL);
    put_init(&g, "BZ", 3, 1, bzd, bz, sizeof(bz), NULL, NULL, NULL);
    eb_test_put_value_info(&g, 11, "A", 2, 3, ad);
    eb_test_put_value_info(&g, 12, "Y", 6, 3, yd);
    uint8_t *bytes = finish_model(&g, &len);

    struct eb_engine_options opt;
    eb_engine_options_default(&opt);
    opt.threads = 1;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_engine_load(bytes, len, "mmi.onnx", &opt, &e, &d));
    const uint8_t a[12] = {0, 255, 3, 17, 250, 128, 9, 8, 7, 255, 255, 0};
    struct eb_tensor in = {.dtype = EB_DTYPE_U8, .rank = 3, .shape = {2, 2, 3}, .data = (void *)a};
    struct eb_tensor out[1];
    ASSERT_OK(eb_engine_run(e, &in, 1, out, 1, &d));
    ASSERT_EQ_INT(out[0].dtype, EB_DTYPE_I32);
    const int32_t *y = out[0].data;
    for (int bt = 0; bt < 2; bt++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                int64_t want = 0;
                for (int p = 0; p < 3; p++)
                    want += (int64_t)(a[bt * 6 + i * 3 + p] - az[i]) * (bw[p * 2 + j] - bz[j]);
                ASSERT_EQ_INT(y[bt * 4 + i * 2 + j], want);
            }
    eb_engine_destroy(e);
    free(bytes);
}
