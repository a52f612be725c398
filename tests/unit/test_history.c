/* The run history: SHA-256, the database round-trip, the list filters, and `diff` on crafted
 * runs (a regression exits 4, overlapping CIs exit 0, bad input exits 2); the same for runs of
 * kind llm, and the upgrade of older schemas. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "eb_test.h"
#include "harness/cmd/record.h"
#include "harness/report/report.h"
#include "harness/results/history.h"
#include "harness/results/sha256.h"

static void sha_of(const char *text, char hex[EB_SHA256_HEX_SIZE])
{
    struct eb_sha256 h;
    eb_sha256_init(&h);
    eb_sha256_update(&h, text, strlen(text));
    eb_sha256_final_hex(&h, hex);
}

EB_TEST(sha256_matches_fips_vectors)
{
    char hex[EB_SHA256_HEX_SIZE];
    sha_of("", hex);
    ASSERT_STREQ(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha_of("abc", hex);
    ASSERT_STREQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    /* 56 bytes: the padding spills into a second block */
    sha_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", hex);
    ASSERT_STREQ(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* a million 'a' fed in uneven pieces */
    struct eb_sha256 h;
    eb_sha256_init(&h);
    char chunk[997];
    memset(chunk, 'a', sizeof(chunk));
    size_t left = 1000000;
    while (left > 0) {
        size_t n = left < sizeof(chunk) ? left : sizeof(chunk);
        eb_sha256_update(&h, chunk, n);
        left -= n;
    }
    eb_sha256_final_hex(&h, hex);
    ASSERT_STREQ(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

    char path[600];
    snprintf(path, sizeof(path), "%s/abc.bin", eb_test_tmpdir());
    FILE *f = fopen(path, "wb");
    ASSERT_TRUE(f != NULL && fwrite("abc", 1, 3, f) == 3 && fclose(f) == 0);
    uint64_t size = 0;
    struct eb_diag d = {0};
    ASSERT_OK(eb_sha256_file(path, 0, NULL, hex, &size, &d));
    ASSERT_EQ_INT(size, 3);
    ASSERT_STREQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ASSERT_EQ_INT(eb_sha256_file("/nonexistent/m.onnx", 0, NULL, hex, &size, &d), EB_ERR_IO);
    ASSERT_CONTAINS(d.msg, "/nonexistent/m.onnx");
    /* bounded: a file above the bound is not read */
    eb_diag_clear(&d);
    ASSERT_EQ_INT(eb_sha256_file(path, 2, NULL, hex, &size, &d), EB_ERR_LIMIT);
    ASSERT_CONTAINS(d.msg, "3 bytes, above the 2 read at most");
    /* never a device (endless), never waiting on a FIFO (no writer), never a folder */
    eb_diag_clear(&d);
    ASSERT_EQ_INT(eb_sha256_file("/dev/zero", 0, NULL, hex, &size, &d), EB_ERR_IO);
    ASSERT_CONTAINS(d.msg, "not a regular file");
    char fifo[600];
    snprintf(fifo, sizeof(fifo), "%s/fifo", eb_test_tmpdir());
    ASSERT_TRUE(mkfifo(fifo, 0600) == 0);
    eb_diag_clear(&d);
    ASSERT_EQ_INT(eb_sha256_file(fifo, 0, NULL, hex, &size, &d), EB_ERR_IO);
    ASSERT_CONTAINS(d.msg, "not a regular file");
    eb_diag_clear(&d);
    ASSERT_EQ_INT(eb_sha256_file(eb_test_tmpdir(), 0, NULL, hex, &size, &d), EB_ERR_IO);
    /* the stop flag is looked at: a stopped fingerprint gives up */
    atomic_int stop;
    atomic_init(&stop, 1);
    eb_diag_clear(&d);
    ASSERT_EQ_INT(eb_sha256_file(path, 0, &stop, hex, &size, &d), EB_ERR_CANCELLED);
    ASSERT_EQ_INT(size, 3); /* untouched */
}

/* Latency samples around `base` ms: n values base * (1 + 0.02 * u), u in [-1, 1] spread evenly,
 * so the p50 CI is narrow and known. */
static void crafted_stats(struct eb_stat_summary *out, size_t n, double base)
{
    double *v = malloc(n * sizeof(double));
    ASSERT_TRUE(v != NULL);
    for (size_t i = 0; i < n; i++)
        v[i] = base * (1.0 + 0.02 * (2.0 * (double)((i * 37) % n) / (double)(n - 1) - 1.0));
    eb_stat_summarize_ms(v, n, out);
    free(v);
}

/* A crafted run: rgb ran `n` frames at `base` ms end-to-end (inference 70% of it); thermal
 * skipped. */
static void crafted_run(struct eb_history_run *run, size_t n, double base, const char *backend)
{
    memset(run, 0, sizeof(*run));
    snprintf(run->started_at, sizeof(run->started_at), "2025-03-01T10:20:30Z");
    snprintf(run->kind, sizeof(run->kind), "run");
    snprintf(run->mode, sizeof(run->mode), "rgb");
    snprintf(run->command_line, sizeof(run->command_line),
             "edgebench run --mode rgb --model0 '/m/yolo v8n.onnx'");
    run->config_json = strdup("{\"mode\":\"rgb\",\"warmup\":\"auto\"}");
    run->duration_s = 14.5;
    snprintf(run->verdict, sizeof(run->verdict), "VALID");
    snprintf(run->output_dir, sizeof(run->output_dir), "runs/x");
    run->energy_per_frame_mj = NAN;
    snprintf(run->edgebench_version, sizeof(run->edgebench_version), "0.1.0");
    snprintf(run->hostname, sizeof(run->hostname), "orin-1");
    snprintf(run->cpu_model, sizeof(run->cpu_model), "ARMv8 Processor rev 1 (v8l)");
    run->n_cpus = 6;
    snprintf(run->gpu_name, sizeof(run->gpu_name), "Orin (nvgpu)");
    eb_history_fingerprint(run);
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        struct eb_history_slot *s = &run->slots[i];
        s->index = i;
        snprintf(s->name, sizeof(s->name), "%s", i == 0 ? "rgb" : "thermal");
        snprintf(s->status, sizeof(s->status), "skipped");
        s->wall_s = s->fps = s->energy_per_frame_mj = NAN;
        s->map50_95 = s->map50 = NAN;
    }
    struct eb_history_slot *s = &run->slots[0];
    snprintf(s->status, sizeof(s->status), "ok");
    snprintf(s->model, sizeof(s->model), "/m/yolo v8n.onnx");
    sha_of("model bytes", s->model_sha256);
    s->model_size = 12345678;
    snprintf(s->model_precision, sizeof(s->model_precision), "int8-qdq");
    snprintf(s->compute_precision, sizeof(s->compute_precision), "int8");
    snprintf(s->backend, sizeof(s->backend), "%s", backend);
    snprintf(s->device, sizeof(s->device), "cpu");
    snprintf(s->provider, sizeof(s->provider), "edgebench-native cpu avx2");
    snprintf(s->precision, sizeof(s->precision), "fp32");
    s->input_w = s->input_h = 640;
    s->frames = n;
    s->warmup_frames = 40;
    s->wall_s = (double)n * base / 1000.0;
    s->fps = 1000.0 / base;
    s->mem_peak_bytes = 2000000000ull;
    s->energy_per_frame_mj = 120.5;
    s->map50_95 = 0.4327;
    s->map50 = 0.5921;
    snprintf(s->verdict, sizeof(s->verdict), "VALID");
    crafted_stats(&s->stages[EB_STAGE_E2E], n, base);
    crafted_stats(&s->stages[EB_STAGE_INFER], n, 0.7 * base);
    crafted_stats(&s->stages[EB_HISTORY_PIPELINE], n, 0.8 * base);
}

static void db_path(char *buf, size_t n)
{
    snprintf(buf, n, "%s/sub/dir/history.db", eb_test_tmpdir());
}

static int64_t append(const char *path, const struct eb_history_run *run)
{
    struct eb_history *h = NULL;
    struct eb_diag d = {0};
    int64_t id = 0;
    if (eb_history_open(path, 1, &h, &d) != EB_OK || eb_history_append(h, run, &id, &d) != EB_OK)
        EB_FAIL("append: %s", d.msg);
    eb_history_close(h);
    return id;
}

static void same_stats(const struct eb_stat_summary *a, const struct eb_stat_summary *b)
{
    ASSERT_EQ_INT(a->count, b->count);
    ASSERT_NEAR(a->mean, b->mean, 0);
    ASSERT_NEAR(a->std, b->std, 0);
    ASSERT_NEAR(a->cov, b->cov, 0);
    ASSERT_NEAR(a->min, b->min, 0);
    ASSERT_NEAR(a->p50, b->p50, 0);
    ASSERT_NEAR(a->p90, b->p90, 0);
    ASSERT_NEAR(a->p95, b->p95, 0);
    ASSERT_NEAR(a->p99, b->p99, 0);
    ASSERT_NEAR(a->max, b->max, 0);
    ASSERT_EQ_INT(a->p50_ci.available, b->p50_ci.available);
    ASSERT_NEAR(a->p50_ci.lo, b->p50_ci.lo, 0);
    ASSERT_NEAR(a->p50_ci.hi, b->p50_ci.hi, 0);
    ASSERT_EQ_INT(a->p50_ci.rank_lo, b->p50_ci.rank_lo);
    ASSERT_EQ_INT(a->p50_ci.rank_hi, b->p50_ci.rank_hi);
    ASSERT_NEAR(a->p50_ci.coverage, b->p50_ci.coverage, 0);
    ASSERT_EQ_INT(a->p99_ci.available, b->p99_ci.available);
    ASSERT_NEAR(a->p99_ci.lo, b->p99_ci.lo, 0);
    ASSERT_NEAR(a->p99_ci.hi, b->p99_ci.hi, 0);
    ASSERT_EQ_INT(a->p99_ci.rank_lo, b->p99_ci.rank_lo);
    ASSERT_EQ_INT(a->p99_ci.rank_hi, b->p99_ci.rank_hi);
    ASSERT_NEAR(a->p99_ci.coverage, b->p99_ci.coverage, 0);
}

EB_TEST(db_round_trip)
{
    char path[600];
    db_path(path, sizeof(path));
    struct eb_history_run *runs = calloc(3, sizeof(*runs));
    ASSERT_TRUE(runs != NULL);
    crafted_run(&runs[0], 400, 10.0, "native");
    snprintf(runs[0].reasons, sizeof(runs[0].reasons), "a; b");
    snprintf(runs[0].slots[0].reasons, sizeof(runs[0].slots[0].reasons), "x; y");
    crafted_run(&runs[1], 50, 20.0, "ort");
    ASSERT_EQ_INT(append(path, &runs[0]), 1); /* creates the folders and the schema */
    ASSERT_EQ_INT(append(path, &runs[1]), 2);

    struct eb_history *h = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_history_open(path, 0, &h, &d));
    ASSERT_OK(eb_history_get(h, 1, &runs[2], &d));
    const struct eb_history_run *a = &runs[0], *b = &runs[2];
    ASSERT_EQ_INT(b->id, 1);
    ASSERT_STREQ(b->started_at, a->started_at);
    ASSERT_STREQ(b->kind, "run");
    ASSERT_STREQ(b->mode, "rgb");
    ASSERT_STREQ(b->command_line, a->command_line);
    ASSERT_STREQ(b->config_json, a->config_json);
    ASSERT_NEAR(b->duration_s, 14.5, 0);
    ASSERT_STREQ(b->verdict, "VALID");
    ASSERT_STREQ(b->reasons, "a; b");
    ASSERT_TRUE(isnan(b->energy_per_frame_mj));
    ASSERT_STREQ(b->hostname, "orin-1");
    ASSERT_STREQ(b->cpu_model, a->cpu_model);
    ASSERT_EQ_INT(b->n_cpus, 6);
    ASSERT_STREQ(b->gpu_name, "Orin (nvgpu)");
    ASSERT_STREQ(b->os, "");
    ASSERT_STREQ(b->fingerprint, a->fingerprint);
    ASSERT_EQ_INT(strlen(b->fingerprint), 16);
    const struct eb_history_slot *x = &a->slots[0], *y = &b->slots[0];
    ASSERT_STREQ(y->status, "ok");
    ASSERT_STREQ(y->model, x->model);
    ASSERT_STREQ(y->model_sha256, x->model_sha256);
    ASSERT_EQ_INT(y->model_size, 12345678);
    ASSERT_STREQ(y->backend, "native");
    ASSERT_STREQ(y->device, "cpu");
    ASSERT_STREQ(y->provider, x->provider);
    ASSERT_STREQ(y->precision, "fp32");
    ASSERT_EQ_INT(y->input_w, 640);
    ASSERT_EQ_INT(y->frames, 400);
    ASSERT_EQ_INT(y->warmup_frames, 40);
    ASSERT_NEAR(y->wall_s, x->wall_s, 0);
    ASSERT_NEAR(y->fps, 100.0, 1e-12);
    ASSERT_EQ_INT(y->mem_peak_bytes, 2000000000ull);
    ASSERT_NEAR(y->energy_per_frame_mj, 120.5, 0);
    ASSERT_NEAR(y->map50_95, 0.4327, 0);
    ASSERT_NEAR(y->map50, 0.5921, 0);
    ASSERT_STREQ(y->verdict, "VALID");
    ASSERT_STREQ(y->reasons, "x; y");
    same_stats(&x->stages[EB_STAGE_E2E], &y->stages[EB_STAGE_E2E]);
    same_stats(&x->stages[EB_STAGE_INFER], &y->stages[EB_STAGE_INFER]);
    /* the pipeline apart from the source is kept as its own stage */
    same_stats(&x->stages[EB_HISTORY_PIPELINE], &y->stages[EB_HISTORY_PIPELINE]);
    ASSERT_EQ_INT(y->stages[EB_STAGE_READ].count, 0);
    ASSERT_EQ_INT(x->stages[EB_STAGE_E2E].p99_ci.available, 1); /* n = 400 >= 368 */
    /* the skipped slot */
    ASSERT_STREQ(b->slots[1].status, "skipped");
    ASSERT_STREQ(b->slots[1].name, "thermal");
    ASSERT_TRUE(isnan(b->slots[1].fps));
    ASSERT_TRUE(isnan(b->slots[1].map50_95)); /* no --data: NULL */
    ASSERT_EQ_INT(b->slots[1].stages[EB_STAGE_E2E].count, 0);
    eb_history_run_fini(&runs[2]);

    /* the second run: n = 50 has no p99 interval, stored as NULL */
    ASSERT_OK(eb_history_get(h, 2, &runs[2], &d));
    ASSERT_EQ_INT(runs[2].slots[0].stages[EB_STAGE_E2E].p99_ci.available, 0);
    ASSERT_EQ_INT(runs[2].slots[0].stages[EB_STAGE_E2E].p50_ci.available, 1);
    eb_history_run_fini(&runs[2]);

    /* an unknown id: one clear line */
    ASSERT_EQ_INT(eb_history_get(h, 42, &runs[2], &d), EB_ERR_INVALID_ARG);
    ASSERT_CONTAINS(d.msg, "no run 42 in");
    eb_history_close(h);
    for (int i = 0; i < 3; i++)
        eb_history_run_fini(&runs[i]);
    free(runs);
}

struct rows {
    int n;
    int64_t ids[8];
    char backends[8][32];
};

static void collect(void *ctx, const struct eb_history_row *row)
{
    struct rows *r = ctx;
    if (r->n < 8) {
        r->ids[r->n] = row->id;
        snprintf(r->backends[r->n], sizeof(r->backends[0]), "%s", row->slot->backend);
    }
    r->n++;
}

EB_TEST(list_filters_newest_first)
{
    char path[600];
    db_path(path, sizeof(path));
    struct eb_history_run *run = calloc(1, sizeof(*run));
    ASSERT_TRUE(run != NULL);
    const char *backends[] = {"native", "ort", "native"};
    for (int i = 0; i < 3; i++) {
        crafted_run(run, 100, 10.0 + i, backends[i]);
        if (i == 2)
            snprintf(run->slots[0].model, sizeof(run->slots[0].model), "/m/yolo11n.onnx");
        append(path, run);
        eb_history_run_fini(run);
    }
    free(run);
    struct eb_history *h = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_history_open(path, 0, &h, &d));
    struct rows r = {0};
    struct eb_history_filter all = {0};
    ASSERT_OK(eb_history_list(h, &all, collect, &r, &d));
    ASSERT_EQ_INT(r.n, 3); /* one row per slot that ran: the skipped thermal slots are left out */
    ASSERT_EQ_INT(r.ids[0], 3);
    ASSERT_EQ_INT(r.ids[2], 1);
    memset(&r, 0, sizeof(r));
    struct eb_history_filter f = {.backend = "native"};
    ASSERT_OK(eb_history_list(h, &f, collect, &r, &d));
    ASSERT_EQ_INT(r.n, 2);
    ASSERT_STREQ(r.backends[0], "native");
    memset(&r, 0, sizeof(r));
    f = (struct eb_history_filter){.model = "yolo v8n", .limit = 1};
    ASSERT_OK(eb_history_list(h, &f, collect, &r, &d));
    ASSERT_EQ_INT(r.n, 1);
    ASSERT_EQ_INT(r.ids[0], 2);
    memset(&r, 0, sizeof(r));
    f = (struct eb_history_filter){.device = "cuda"};
    ASSERT_OK(eb_history_list(h, &f, collect, &r, &d));
    ASSERT_EQ_INT(r.n, 0);
    eb_history_close(h);
}

/* Runs `edgebench diff` (eb_diff_main) on argv; returns the exit code and the output. */
static int run_diff(const char **args, char **out_text, char **err_text)
{
    char *argv[16];
    int argc = 0;
    while (args[argc] != NULL && argc < 15) {
        argv[argc] = (char *)args[argc];
        argc++;
    }
    size_t lo = 0, le = 0;
    FILE *out = open_memstream(out_text, &lo), *err = open_memstream(err_text, &le);
    ASSERT_TRUE(out != NULL && err != NULL);
    int code = eb_diff_main(argc, argv, out, err);
    fclose(out);
    fclose(err);
    return code;
}

EB_TEST(diff_regression_exits_4_overlap_exits_0)
{
    char path[600];
    db_path(path, sizeof(path));
    struct eb_history_run *run = calloc(1, sizeof(*run));
    ASSERT_TRUE(run != NULL);
    crafted_run(run, 400, 10.0, "native"); /* 1: the baseline */
    append(path, run);
    eb_history_run_fini(run);
    crafted_run(run, 400, 12.0, "native"); /* 2: 20% slower, CIs far apart */
    append(path, run);
    eb_history_run_fini(run);
    crafted_run(run, 400, 10.02, "native"); /* 3: 0.2% slower, CIs overlap */
    append(path, run);
    eb_history_run_fini(run);
    crafted_run(run, 400, 10.3, "native"); /* 4: 3% slower, CIs apart, under the threshold */
    append(path, run);
    eb_history_run_fini(run);
    free(run);

    char *out = NULL, *err = NULL;
    const char *reg[] = {"1", "2", "--db", path, NULL};
    ASSERT_EQ_INT(run_diff(reg, &out, &err), 4);
    ASSERT_CONTAINS(out, "end_to_end p50 ms");
    ASSERT_CONTAINS(out, "REGRESSION");
    ASSERT_CONTAINS(out, "+20.00%");
    ASSERT_CONTAINS(out, "order-statistic binomial, 95%");
    ASSERT_CONTAINS(out, "throughput FPS");
    ASSERT_CONTAINS(out, "(no CI: not judged)");
    ASSERT_STREQ(err, "");
    free(out);
    free(err);

    /* B faster than A: improved, not a regression */
    const char *imp[] = {"2", "1", "--db", path, NULL};
    ASSERT_EQ_INT(run_diff(imp, &out, &err), 0);
    ASSERT_CONTAINS(out, "improved");
    ASSERT_TRUE(strstr(out, "REGRESSION\n") == NULL);
    free(out);
    free(err);

    const char *same[] = {"--db", path, "1", "3", NULL};
    ASSERT_EQ_INT(run_diff(same, &out, &err), 0);
    ASSERT_CONTAINS(out, "ok (CIs overlap)");
    ASSERT_CONTAINS(out, "0 regressions");
    free(out);
    free(err);

    /* CIs apart but 3% < the 5% threshold; with --threshold 2 it counts */
    const char *small[] = {"1", "4", "--db", path, NULL};
    ASSERT_EQ_INT(run_diff(small, &out, &err), 0);
    ASSERT_CONTAINS(out, "ok (within threshold)");
    free(out);
    free(err);
    const char *strict[] = {"1", "4", "--db", path, "--threshold=2", NULL};
    ASSERT_EQ_INT(run_diff(strict, &out, &err), 4);
    free(out);
    free(err);
}

EB_TEST(diff_bad_input_exits_2_with_one_line)
{
    char path[600];
    db_path(path, sizeof(path));
    struct eb_history_run *run = calloc(1, sizeof(*run));
    ASSERT_TRUE(run != NULL);
    crafted_run(run, 100, 10.0, "native");
    append(path, run);
    /* a run in which nothing ran */
    snprintf(run->slots[0].status, sizeof(run->slots[0].status), "failed");
    append(path, run);
    eb_history_run_fini(run);
    free(run);
    struct {
        const char *args[8];
        const char *want;
    } cases[] = {
        {{"1", "99", "--db", path, NULL}, "no run 99 in"},
        {{"1", NULL}, "diff needs two run ids"},
        {{"1", "x", "--db", path, NULL}, "run id 'x' is not a number"},
        {{"1", "2", "3", NULL}, "unexpected argument '3'"},
        {{"1", "1", "--db", path, "--threshold", "-1", NULL}, "--threshold: '-1'"},
        {{"1", "1", "--db", path, "--bogus", NULL}, "unknown option '--bogus'"},
        {{"1", "1", "--db", "/nonexistent/h.db", NULL}, "no history database at /nonexistent"},
        {{"1", "1", "--db", "none", NULL}, "--db none"},
        {{"1", "2", "--db", path, NULL}, "no slot that ran in both"},
        {{"1", "1", "--db", path, "--threshold", NULL}, "--threshold needs a value"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *out = NULL, *err = NULL;
        int code = run_diff(cases[i].args, &out, &err);
        if (code != 2)
            EB_FAIL("case %zu: exit %d, want 2 (%s)", i, code, err);
        ASSERT_CONTAINS(err, cases[i].want);
        ASSERT_CONTAINS(err, "edgebench: error: ");
        /* exactly one line */
        ASSERT_TRUE(strchr(err, '\n') == err + strlen(err) - 1);
        free(out);
        free(err);
    }
}

EB_TEST(open_refuses_foreign_and_newer_databases)
{
    char path[600];
    struct eb_history *h = NULL;
    struct eb_diag d = {0};
    /* a text file */
    snprintf(path, sizeof(path), "%s/notes.txt", eb_test_tmpdir());
    FILE *f = fopen(path, "w");
    ASSERT_TRUE(f != NULL);
    for (int i = 0; i < 100; i++)
        fputs("not a database, just some text\n", f);
    fclose(f);
    ASSERT_EQ_INT(eb_history_open(path, 0, &h, &d), EB_ERR_FORMAT);
    ASSERT_CONTAINS(d.msg, path);
    eb_diag_clear(&d);
    ASSERT_TRUE(eb_history_open(path, 1, &h, &d) != EB_OK); /* and never written to */
    ASSERT_TRUE(h == NULL);
    eb_diag_clear(&d);

    /* a history database from a newer edgebench */
    db_path(path, sizeof(path));
    struct eb_history_run *run = calloc(1, sizeof(*run));
    ASSERT_TRUE(run != NULL);
    crafted_run(run, 100, 10.0, "native");
    append(path, run);
    sqlite3 *db = NULL;
    ASSERT_TRUE(sqlite3_open(path, &db) == SQLITE_OK);
    ASSERT_TRUE(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", NULL,
                             NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    ASSERT_EQ_INT(eb_history_open(path, 1, &h, &d), EB_ERR_FORMAT);
    char want[96];
    snprintf(want, sizeof(want), "history schema 99, newer than this edgebench's %d",
             EB_HISTORY_SCHEMA_VERSION);
    ASSERT_CONTAINS(d.msg, want);
    eb_history_run_fini(run);
    free(run);
}

/* --db naming a folder or a FIFO: one line saying what the path is and what to give, for reading
 * and for writing (SQLite alone says "disk I/O error", and blocks in open() on a FIFO). */
EB_TEST(open_refuses_a_folder_and_a_fifo)
{
    char fifo[600];
    struct eb_history *h = NULL;
    struct eb_diag d = {0};
    for (int create = 0; create <= 1; create++) {
        ASSERT_EQ_INT(eb_history_open(eb_test_tmpdir(), create, &h, &d), EB_ERR_INVALID_ARG);
        ASSERT_CONTAINS(d.msg, "is a folder; give --db a file in it, e.g. ");
        ASSERT_CONTAINS(d.msg, "/history.db");
        ASSERT_TRUE(h == NULL);
        eb_diag_clear(&d);
    }
    snprintf(fifo, sizeof(fifo), "%s/history.fifo", eb_test_tmpdir());
    ASSERT_TRUE(mkfifo(fifo, 0600) == 0);
    for (int create = 0; create <= 1; create++) {
        ASSERT_EQ_INT(eb_history_open(fifo, create, &h, &d), EB_ERR_INVALID_ARG);
        ASSERT_CONTAINS(d.msg, "is not a regular file");
        ASSERT_CONTAINS(d.msg, fifo);
        eb_diag_clear(&d);
    }
}

/* A database of an older schema at `path`: one crafted run (run[0]) appended, then `downgrade`
 * (SQL dropping what that schema lacked and setting its version) applied, after dropping the
 * llm tables, which every schema before 4 lacks. Returns 2 runs' room, run[0] filled; the
 * caller frees them. */
static struct eb_history_run *older_database(char *path, size_t size, const char *downgrade)
{
    db_path(path, size);
    struct eb_history_run *run = calloc(2, sizeof(*run));
    ASSERT_TRUE(run != NULL);
    crafted_run(&run[0], 100, 10.0, "native");
    ASSERT_EQ_INT(append(path, &run[0]), 1);
    sqlite3 *db = NULL;
    ASSERT_TRUE(sqlite3_open(path, &db) == SQLITE_OK);
    ASSERT_TRUE(sqlite3_exec(db,
                             "DROP TABLE llm_stats; DROP TABLE llm; DROP INDEX runs_uuid; DROP "
                             "INDEX runs_hostname; ALTER TABLE runs DROP COLUMN uuid;",
                             NULL, NULL, NULL) == SQLITE_OK);
    ASSERT_TRUE(sqlite3_exec(db, downgrade, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    return run;
}

/* A schema-1 database (no accuracy columns): read as it is (mAP unknown), upgraded in place by
 * the next run that writes to it, whose mAP then round-trips; the old run keeps NULL. */
EB_TEST(schema_1_database_is_read_then_upgraded)
{
    char path[600]; /* what edgebench's schema 1 wrote */
    struct eb_history_run *run =
        older_database(path, sizeof(path),
                       "ALTER TABLE slots DROP COLUMN map50_95;"
                       "ALTER TABLE slots DROP COLUMN map50;"
                       "ALTER TABLE slots DROP COLUMN model_precision;"
                       "ALTER TABLE slots DROP COLUMN compute_precision;"
                       "UPDATE meta SET value = '1' WHERE key = 'schema_version';");
    sqlite3 *db = NULL;
    struct eb_history *h = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_history_open(path, 0, &h, &d)); /* read-only: as it is */
    ASSERT_OK(eb_history_get(h, 1, &run[1], &d));
    ASSERT_TRUE(isnan(run[1].slots[0].map50_95));
    ASSERT_NEAR(run[1].slots[0].fps, 100.0, 1e-12);
    eb_history_run_fini(&run[1]);
    eb_history_close(h);
    ASSERT_EQ_INT(append(path, &run[0]), 2); /* a write upgrades it */
    ASSERT_OK(eb_history_open(path, 0, &h, &d));
    ASSERT_OK(eb_history_get(h, 2, &run[1], &d));
    ASSERT_NEAR(run[1].slots[0].map50_95, 0.4327, 0);
    eb_history_run_fini(&run[1]);
    ASSERT_OK(eb_history_get(h, 1, &run[1], &d));
    ASSERT_TRUE(isnan(run[1].slots[0].map50_95));
    eb_history_run_fini(&run[1]);
    eb_history_close(h);
    ASSERT_TRUE(sqlite3_open(path, &db) == SQLITE_OK);
    sqlite3_stmt *q = NULL;
    ASSERT_TRUE(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1,
                                   &q, NULL) == SQLITE_OK);
    ASSERT_TRUE(sqlite3_step(q) == SQLITE_ROW);
    ASSERT_EQ_INT(strtol((const char *)sqlite3_column_text(q, 0), NULL, 10),
                  EB_HISTORY_SCHEMA_VERSION);
    sqlite3_finalize(q);
    sqlite3_close(db);
    eb_history_run_fini(&run[0]);
    free(run);
}

/* A schema-2 database (no model/compute precision): read with them unknown, upgraded in place
 * by the next write, whose precisions then round-trip; the old run keeps them unknown. */
EB_TEST(schema_2_database_is_read_then_upgraded)
{
    char path[600]; /* what edgebench's schema 2 wrote */
    struct eb_history_run *run =
        older_database(path, sizeof(path),
                       "ALTER TABLE slots DROP COLUMN model_precision;"
                       "ALTER TABLE slots DROP COLUMN compute_precision;"
                       "UPDATE meta SET value = '2' WHERE key = 'schema_version';");
    struct eb_history *h = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_history_open(path, 0, &h, &d));
    ASSERT_OK(eb_history_get(h, 1, &run[1], &d));
    ASSERT_STREQ(run[1].slots[0].model_precision, "");
    ASSERT_NEAR(run[1].slots[0].map50_95, 0.4327, 0); /* schema 2's columns still read */
    eb_history_run_fini(&run[1]);
    eb_history_close(h);
    ASSERT_EQ_INT(append(path, &run[0]), 2);
    ASSERT_OK(eb_history_open(path, 0, &h, &d));
    ASSERT_OK(eb_history_get(h, 2, &run[1], &d));
    ASSERT_STREQ(run[1].slots[0].model_precision, "int8-qdq");
    ASSERT_STREQ(run[1].slots[0].compute_precision, "int8");
    eb_history_run_fini(&run[1]);
    ASSERT_OK(eb_history_get(h, 1, &run[1], &d));
    ASSERT_STREQ(run[1].slots[0].model_precision, "");
    eb_history_run_fini(&run[1]);
    eb_history_close(h);
    eb_history_run_fini(&run[0]);
    free(run);
}

/* ---- runs of kind llm -------------------------------------------------------------------- */

/* A crafted llm run: `reps` repetitions (TTFT and prefill samples), 400 decode steps at
 * `decode_ms` per token (so its p99 has a CI), decode tokens/s 1000 / decode_ms +/- 0.5%. Every
 * field is set; prefill_mfu is unknown (NAN). */
static void crafted_llm(struct eb_history_run *run, double decode_ms, const char *backend)
{
    crafted_run(run, 10, 10.0, backend); /* the run's facts; its slots are left out */
    snprintf(run->kind, sizeof(run->kind), EB_HISTORY_KIND_LLM);
    snprintf(run->mode, sizeof(run->mode), "%s", "");
    snprintf(run->command_line, sizeof(run->command_line),
             "edgebench llm --model '/m/qwen 0.5b.onnx' --prompt 128 --gen 64");
    struct eb_history_llm *l = &run->llm;
    snprintf(l->model, sizeof(l->model), "/m/qwen 0.5b.onnx");
    sha_of("llm bytes", l->model_sha256);
    l->model_size = 1976263680ull;
    snprintf(l->arch, sizeof(l->arch), "qwen2");
    snprintf(l->size, sizeof(l->size), "0.5b");
    l->params = 494032768ull;
    snprintf(l->dtype, sizeof(l->dtype), "fp16");
    l->prompt = 128;
    l->gen = 64;
    l->reps = 10;
    l->ctx = 2048;
    l->seed = 0xfedcba9876543210ull; /* above INT64_MAX: stored bit for bit */
    snprintf(l->backend, sizeof(l->backend), "%s", backend);
    snprintf(l->backend_version, sizeof(l->backend_version), "0.1.0");
    snprintf(l->device, sizeof(l->device), "cuda");
    snprintf(l->provider, sizeof(l->provider), "edgebench-native cuda sm_90");
    snprintf(l->precision, sizeof(l->precision), "fp16");
    l->threads = 4;
    crafted_stats(&l->ttft, 10, 50.0);
    crafted_stats(&l->prefill, 5, 40.0); /* n = 5: no p50 CI, stored as NULL */
    crafted_stats(&l->decode, 400, decode_ms);
    l->prefill_tok_s = 128.0 * 1000.0 / 40.0;
    l->prefill_tok_s_std = 0.01 * l->prefill_tok_s;
    l->decode_tok_s = 1000.0 / decode_ms;
    l->decode_tok_s_std = 0.005 * l->decode_tok_s;
    l->prefill_mfu = NAN;
    l->decode_mbu = 0.625;
    l->weight_bytes = 988131328ull;
    l->kv_bytes = 2359296ull;
    l->peak_mem_bytes = 1234567890ull;
    snprintf(l->verdict, sizeof(l->verdict), "VALID");
    snprintf(l->reasons, sizeof(l->reasons), "r1; r2");
}

EB_TEST(llm_run_round_trips_every_field)
{
    char path[600];
    db_path(path, sizeof(path));
    struct eb_history_run *runs = calloc(3, sizeof(*runs));
    ASSERT_TRUE(runs != NULL);
    crafted_run(&runs[0], 100, 10.0, "native");
    ASSERT_EQ_INT(append(path, &runs[0]), 1);
    crafted_llm(&runs[1], 8.0, "native");
    ASSERT_EQ_INT(append(path, &runs[1]), 2);

    struct eb_history *h = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_history_open(path, 0, &h, &d));
    ASSERT_OK(eb_history_get(h, 2, &runs[2], &d));
    const struct eb_history_run *r = &runs[2];
    ASSERT_STREQ(r->kind, "llm");
    ASSERT_TRUE(eb_history_run_is_llm(r));
    ASSERT_STREQ(r->command_line, runs[1].command_line);
    ASSERT_STREQ(r->fingerprint, runs[1].fingerprint);
    const struct eb_history_llm *a = &runs[1].llm, *b = &r->llm;
    ASSERT_STREQ(b->model, a->model);
    ASSERT_STREQ(b->model_sha256, a->model_sha256);
    ASSERT_EQ_INT(b->model_size, 1976263680ull);
    ASSERT_STREQ(b->arch, "qwen2");
    ASSERT_STREQ(b->size, "0.5b");
    ASSERT_EQ_INT(b->params, 494032768ull);
    ASSERT_STREQ(b->dtype, "fp16");
    ASSERT_EQ_INT(b->prompt, 128);
    ASSERT_EQ_INT(b->gen, 64);
    ASSERT_EQ_INT(b->reps, 10);
    ASSERT_EQ_INT(b->ctx, 2048);
    ASSERT_TRUE(b->seed == 0xfedcba9876543210ull);
    ASSERT_STREQ(b->backend, "native");
    ASSERT_STREQ(b->backend_version, "0.1.0");
    ASSERT_STREQ(b->device, "cuda");
    ASSERT_STREQ(b->provider, a->provider);
    ASSERT_STREQ(b->precision, "fp16");
    ASSERT_EQ_INT(b->threads, 4);
    same_stats(&a->ttft, &b->ttft);
    same_stats(&a->prefill, &b->prefill);
    same_stats(&a->decode, &b->decode);
    ASSERT_EQ_INT(b->ttft.p50_ci.available, 1);
    ASSERT_EQ_INT(b->prefill.p50_ci.available, 0);
    ASSERT_EQ_INT(b->decode.p99_ci.available, 1);
    ASSERT_NEAR(b->prefill_tok_s, a->prefill_tok_s, 0);
    ASSERT_NEAR(b->prefill_tok_s_std, a->prefill_tok_s_std, 0);
    ASSERT_NEAR(b->decode_tok_s, a->decode_tok_s, 0);
    ASSERT_NEAR(b->decode_tok_s_std, a->decode_tok_s_std, 0);
    ASSERT_TRUE(isnan(b->prefill_mfu)); /* unknown stays unknown, never 0 */
    ASSERT_NEAR(b->decode_mbu, 0.625, 0);
    ASSERT_EQ_INT(b->weight_bytes, 988131328ull);
    ASSERT_EQ_INT(b->kv_bytes, 2359296ull);
    ASSERT_EQ_INT(b->peak_mem_bytes, 1234567890ull);
    ASSERT_STREQ(b->verdict, "VALID");
    ASSERT_STREQ(b->reasons, "r1; r2");
    /* no slot rows: both slots read as skipped */
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        ASSERT_STREQ(r->slots[i].status, "skipped");
        ASSERT_EQ_INT(r->slots[i].stages[EB_STAGE_E2E].count, 0);
    }
    eb_history_run_fini(&runs[2]);

    /* a run of kind run has no llm figures */
    ASSERT_OK(eb_history_get(h, 1, &runs[2], &d));
    ASSERT_STREQ(runs[2].kind, "run");
    ASSERT_EQ_INT(runs[2].llm.ttft.count, 0);
    ASSERT_TRUE(isnan(runs[2].llm.decode_tok_s));
    ASSERT_STREQ(runs[2].slots[0].status, "ok");
    eb_history_run_fini(&runs[2]);
    eb_history_close(h);

    /* the rows in the tables: one llm row, three llm_stats rows, no slots, no stats */
    sqlite3 *db = NULL;
    ASSERT_TRUE(sqlite3_open(path, &db) == SQLITE_OK);
    static const struct {
        const char *sql;
        int want;
    } counts[] = {
        {"SELECT count(*) FROM llm WHERE run_id = 2", 1},
        {"SELECT count(*) FROM llm_stats WHERE run_id = 2", 3},
        {"SELECT count(*) FROM slots WHERE run_id = 2", 0},
        {"SELECT count(*) FROM stats WHERE run_id = 2", 0},
        {"SELECT count(*) FROM llm WHERE run_id = 1", 0},
    };
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        sqlite3_stmt *q = NULL;
        ASSERT_TRUE(sqlite3_prepare_v2(db, counts[i].sql, -1, &q, NULL) == SQLITE_OK);
        ASSERT_TRUE(sqlite3_step(q) == SQLITE_ROW);
        if (sqlite3_column_int(q, 0) != counts[i].want)
            EB_FAIL("%s: %d, want %d", counts[i].sql, sqlite3_column_int(q, 0), counts[i].want);
        sqlite3_finalize(q);
    }
    sqlite3_close(db);
    for (int i = 0; i < 3; i++)
        eb_history_run_fini(&runs[i]);
    free(runs);
}

/* Whether table `name` exists in the database at `path`. */
static int has_table(const char *path, const char *name)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    ASSERT_TRUE(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    ASSERT_TRUE(sqlite3_prepare_v2(db,
                                   "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                                   " AND name = ?",
                                   -1, &q, NULL) == SQLITE_OK);
    ASSERT_TRUE(sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC) == SQLITE_OK);
    ASSERT_TRUE(sqlite3_step(q) == SQLITE_ROW);
    int n = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return n;
}

/* A schema-3 database (no llm tables): read and listed as it is when opened read-only (not
 * altered), upgraded to 4 by the next write, which can then be an llm run; the old run's rows
 * are kept. */
EB_TEST(schema_3_database_is_read_then_upgraded_to_4)
{
    char path[600]; /* what edgebench's schema 3 wrote */
    struct eb_history_run *run = older_database(
        path, sizeof(path), "UPDATE meta SET value = '3' WHERE key = 'schema_version';");
    struct eb_history *h = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_history_open(path, 0, &h, &d));
    ASSERT_OK(eb_history_get(h, 1, &run[1], &d));
    ASSERT_STREQ(run[1].slots[0].model_precision, "int8-qdq");
    ASSERT_EQ_INT(run[1].llm.ttft.count, 0);
    eb_history_run_fini(&run[1]);
    struct rows r = {0};
    struct eb_history_filter all = {0};
    ASSERT_OK(eb_history_list(h, &all, collect, &r, &d)); /* no llm table to ask */
    ASSERT_EQ_INT(r.n, 1);
    eb_history_close(h);
    ASSERT_EQ_INT(has_table(path, "llm"), 0); /* read-only: never altered */

    eb_history_run_fini(&run[0]);
    crafted_llm(&run[0], 8.0, "native");
    ASSERT_EQ_INT(append(path, &run[0]), 2); /* a write upgrades it */
    ASSERT_EQ_INT(has_table(path, "llm"), 1);
    ASSERT_EQ_INT(has_table(path, "llm_stats"), 1);
    ASSERT_OK(eb_history_open(path, 0, &h, &d));
    ASSERT_OK(eb_history_get(h, 1, &run[1], &d)); /* the old run, as it was */
    ASSERT_STREQ(run[1].kind, "run");
    ASSERT_STREQ(run[1].slots[0].status, "ok");
    ASSERT_STREQ(run[1].slots[0].compute_precision, "int8");
    ASSERT_NEAR(run[1].slots[0].map50_95, 0.4327, 0);
    ASSERT_EQ_INT(run[1].slots[0].stages[EB_STAGE_E2E].count, 100);
    eb_history_run_fini(&run[1]);
    ASSERT_OK(eb_history_get(h, 2, &run[1], &d));
    ASSERT_STREQ(run[1].llm.model, "/m/qwen 0.5b.onnx");
    same_stats(&run[0].llm.decode, &run[1].llm.decode);
    eb_history_run_fini(&run[1]);
    eb_history_close(h);
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    ASSERT_TRUE(sqlite3_open(path, &db) == SQLITE_OK);
    ASSERT_TRUE(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1,
                                   &q, NULL) == SQLITE_OK);
    ASSERT_TRUE(sqlite3_step(q) == SQLITE_ROW);
    ASSERT_EQ_INT(sqlite3_column_int(q, 0), EB_HISTORY_SCHEMA_VERSION); /* on to the newest */
    sqlite3_finalize(q);
    sqlite3_close(db);
    eb_history_run_fini(&run[0]);
    free(run);
}

/* The uuid column of run `id` in the file, "" for NULL. */
static void uuid_of(const char *path, int64_t id, char out[EB_HISTORY_UUID_SIZE])
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    ASSERT_TRUE(sqlite3_open(path, &db) == SQLITE_OK);
    ASSERT_TRUE(sqlite3_prepare_v2(db, "SELECT uuid FROM runs WHERE id = ?", -1, &q, NULL) ==
                SQLITE_OK);
    ASSERT_TRUE(sqlite3_bind_int64(q, 1, id) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW);
    const unsigned char *u = sqlite3_column_text(q, 0);
    snprintf(out, EB_HISTORY_UUID_SIZE, "%s", u != NULL ? (const char *)u : "");
    sqlite3_finalize(q);
    sqlite3_close(db);
}

static int is_uuid_v4(const char *u)
{
    if (strlen(u) != 36 || u[14] != '4' || strchr("89ab", u[19]) == NULL)
        return 0;
    for (int i = 0; i < 36; i++)
        if (i == 8 || i == 13 || i == 18 || i == 23 ? u[i] != '-'
                                                    : strchr("0123456789abcdef", u[i]) == NULL)
            return 0;
    return 1;
}

static void count_rows(void *ctx, const struct eb_history_row *row)
{
    (void)row;
    ++*(int *)ctx;
}

/* A schema-4 database (no runs.uuid): read as it is when opened read-only (no uuid, the file
 * not altered); the next write upgrades it to 5 in place, giving the old run a uuid of its own
 * and the new one another; a run appended again with the same uuid is not added twice. */
EB_TEST(schema_4_database_is_read_then_upgraded_to_5_with_uuids)
{
    char path[600]; /* what edgebench's schema 4 wrote: its llm tables are created again */
    struct eb_history_run *run = older_database(
        path, sizeof(path), "UPDATE meta SET value = '3' WHERE key = 'schema_version';");
    eb_history_run_fini(&run[0]);
    crafted_llm(&run[0], 8.0, "native");
    ASSERT_EQ_INT(append(path, &run[0]), 2); /* now at 5: take the uuid away again */
    sqlite3 *db = NULL;
    ASSERT_TRUE(sqlite3_open(path, &db) == SQLITE_OK);
    ASSERT_TRUE(sqlite3_exec(db,
                             "DROP INDEX runs_uuid; DROP INDEX runs_hostname;"
                             " ALTER TABLE runs DROP COLUMN uuid;"
                             " UPDATE meta SET value = '4' WHERE key = 'schema_version';",
                             NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);

    struct eb_history *h = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_history_open(path, 0, &h, &d));
    ASSERT_OK(eb_history_get(h, 2, &run[1], &d));
    ASSERT_STREQ(run[1].uuid, "");
    ASSERT_STREQ(run[1].llm.model, "/m/qwen 0.5b.onnx");
    eb_history_run_fini(&run[1]);
    eb_history_close(h);
    ASSERT_EQ_INT(has_table(path, "llm"), 1);

    eb_history_run_fini(&run[0]);
    crafted_run(&run[0], 100, 10.0, "native");
    snprintf(run[0].uuid, sizeof(run[0].uuid), "0b7e4f3c-5a1d-4c2e-9f00-123456789abc");
    ASSERT_EQ_INT(append(path, &run[0]), 3); /* a write upgrades it */
    char u1[EB_HISTORY_UUID_SIZE], u2[EB_HISTORY_UUID_SIZE], u3[EB_HISTORY_UUID_SIZE];
    uuid_of(path, 1, u1);
    uuid_of(path, 2, u2);
    uuid_of(path, 3, u3);
    ASSERT_TRUE(is_uuid_v4(u1) && is_uuid_v4(u2));
    ASSERT_TRUE(strcmp(u1, u2) != 0);
    ASSERT_STREQ(u3, "0b7e4f3c-5a1d-4c2e-9f00-123456789abc");
    ASSERT_EQ_INT(append(path, &run[0]), 3); /* the same uuid again: the run that is there */
    ASSERT_OK(eb_history_open(path, 0, &h, &d));
    int n = 0;
    struct eb_history_filter all = {0};
    ASSERT_OK(eb_history_list(h, &all, count_rows, &n, &d));
    ASSERT_EQ_INT(n, 3); /* the slot rows of runs 1 and 3 (one each) and the llm run */
    ASSERT_OK(eb_history_get(h, 3, &run[1], &d));
    ASSERT_STREQ(run[1].uuid, u3);
    ASSERT_EQ_INT(run[1].slots[0].stages[EB_STAGE_E2E].count, 100);
    eb_history_run_fini(&run[1]);
    eb_history_close(h);
    eb_history_run_fini(&run[0]);
    free(run);
}

EB_TEST(postgres_targets_are_told_apart_and_passwords_left_out)
{
    ASSERT_TRUE(eb_history_is_postgres("postgresql://eb@db.lab/bench"));
    ASSERT_TRUE(eb_history_is_postgres("postgres://db.lab/bench"));
    ASSERT_TRUE(eb_history_is_postgres("host=/run/pg dbname=bench"));
    ASSERT_TRUE(eb_history_is_postgres("dbname = bench"));
    ASSERT_TRUE(!eb_history_is_postgres("history.db"));
    ASSERT_TRUE(!eb_history_is_postgres("/data/a=b.db"));
    ASSERT_TRUE(!eb_history_is_postgres("hostname=x.db"));
    char buf[256];
    eb_history_redact("postgresql://eb:s3cret@db.lab:5433/bench?sslmode=require&password=x", buf,
                      sizeof(buf));
    ASSERT_STREQ(buf, "postgresql://eb@db.lab:5433/bench?sslmode=require");
    eb_history_redact("postgres:///bench?password=x&host=/run/pg", buf, sizeof(buf));
    ASSERT_STREQ(buf, "postgres:///bench?host=/run/pg");
    eb_history_redact("host=db.lab password='a b\\'c' dbname=bench", buf, sizeof(buf));
    ASSERT_STREQ(buf, "host=db.lab dbname=bench");
    eb_history_redact("password=x host=db.lab", buf, sizeof(buf));
    ASSERT_STREQ(buf, "host=db.lab");
    eb_history_redact("/data/h.db", buf, sizeof(buf));
    ASSERT_STREQ(buf, "/data/h.db");
    /* $EB_DB stands for a missing --db; --db wins */
    setenv("EB_DB", "postgresql://eb@db.lab/bench", 1);
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_history_path(NULL, buf, sizeof(buf), &d), 1);
    ASSERT_STREQ(buf, "postgresql://eb@db.lab/bench");
    ASSERT_EQ_INT(eb_history_path("h.db", buf, sizeof(buf), &d), 1);
    ASSERT_STREQ(buf, "h.db");
    setenv("EB_DB", "none", 1);
    ASSERT_EQ_INT(eb_history_path(NULL, buf, sizeof(buf), &d), 0);
    unsetenv("EB_DB");
}

struct llm_rows {
    int n, n_llm;
    int64_t ids[8];
};

static void collect_llm(void *ctx, const struct eb_history_row *row)
{
    struct llm_rows *r = ctx;
    ASSERT_TRUE((row->llm != NULL) != (row->slot != NULL)); /* one or the other */
    if (r->n < 8)
        r->ids[r->n] = row->id;
    if (row->llm != NULL) {
        ASSERT_STREQ(row->kind, "llm");
        r->n_llm++;
    }
    r->n++;
}

/* Runs `edgebench history` (eb_history_main) on argv; returns the exit code and the output. */
static int run_history(const char **args, char **out_text, char **err_text)
{
    char *argv[16];
    int argc = 0;
    while (args[argc] != NULL && argc < 15) {
        argv[argc] = (char *)args[argc];
        argc++;
    }
    size_t lo = 0, le = 0;
    FILE *out = open_memstream(out_text, &lo), *err = open_memstream(err_text, &le);
    ASSERT_TRUE(out != NULL && err != NULL);
    int code = eb_history_main(argc, argv, out, err);
    fclose(out);
    fclose(err);
    return code;
}

EB_TEST(history_lists_llm_runs_with_the_filters)
{
    char path[600];
    db_path(path, sizeof(path));
    struct eb_history_run *run = calloc(1, sizeof(*run));
    ASSERT_TRUE(run != NULL);
    crafted_run(run, 100, 10.0, "native"); /* 1: yolo on cpu */
    append(path, run);
    eb_history_run_fini(run);
    crafted_llm(run, 8.0, "native"); /* 2: qwen on cuda */
    append(path, run);
    eb_history_run_fini(run);
    crafted_llm(run, 8.0, "ort"); /* 3 */
    append(path, run);
    eb_history_run_fini(run);
    free(run);

    struct eb_history *h = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_history_open(path, 0, &h, &d));
    struct llm_rows r = {0};
    struct eb_history_filter f = {0};
    ASSERT_OK(eb_history_list(h, &f, collect_llm, &r, &d));
    ASSERT_EQ_INT(r.n, 3); /* one line per llm run, one per slot that ran */
    ASSERT_EQ_INT(r.n_llm, 2);
    ASSERT_EQ_INT(r.ids[0], 3);
    ASSERT_EQ_INT(r.ids[2], 1);
    const struct {
        struct eb_history_filter f;
        int n, n_llm;
        int64_t first;
    } cases[] = {
        {{.model = "qwen"}, 2, 2, 3},     {{.model = "yolo"}, 1, 0, 1},
        {{.backend = "native"}, 2, 1, 2}, {{.device = "cuda"}, 2, 2, 3},
        {{.device = "cpu"}, 1, 0, 1},     {{.device = "cuda", .backend = "native"}, 1, 1, 2},
        {{.limit = 1}, 1, 1, 3},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(&r, 0, sizeof(r));
        ASSERT_OK(eb_history_list(h, &cases[i].f, collect_llm, &r, &d));
        if (r.n != cases[i].n || r.n_llm != cases[i].n_llm || r.ids[0] != cases[i].first)
            EB_FAIL("case %zu: %d rows (%d llm), first %lld", i, r.n, r.n_llm, (long long)r.ids[0]);
    }
    eb_history_close(h);

    /* the command: the llm line in the same table, TTFT p50 and decode tokens/s */
    char *out = NULL, *err = NULL;
    const char *args[] = {"--db", path, "--backend", "native", NULL};
    ASSERT_EQ_INT(run_history(args, &out, &err), 0);
    ASSERT_STREQ(err, "");
    ASSERT_CONTAINS(out, "p50 ms");
    char want[256];
    struct eb_stat_summary ttft;
    crafted_stats(&ttft, 10, 50.0);
    snprintf(want, sizeof(want), "%-7s  %-28s  %-7s  %-8s  %-12s  %-8s  %9.3f  %8s  %s\n", "llm",
             "qwen 0.5b.onnx", "native", "cuda", "fp16", "fp16", ttft.p50, "125.0", "VALID");
    ASSERT_CONTAINS(out, want);
    ASSERT_CONTAINS(out, "yolo v8n.onnx"); /* the run of kind run, listed as before */
    ASSERT_CONTAINS(out, "llm rows: p50 ms = time to first token p50, FPS = decode tokens/s");
    free(out);
    free(err);
}

EB_TEST(diff_llm_regression_when_decode_slower)
{
    char path[600];
    db_path(path, sizeof(path));
    struct eb_history_run *run = calloc(1, sizeof(*run));
    ASSERT_TRUE(run != NULL);
    crafted_llm(run, 8.0, "native"); /* 1: the baseline */
    append(path, run);
    eb_history_run_fini(run);
    crafted_llm(run, 10.0, "native"); /* 2: decode 25% slower, CIs and +/-std apart */
    append(path, run);
    eb_history_run_fini(run);
    crafted_llm(run, 8.0, "native"); /* 3: the same as 1 */
    append(path, run);
    eb_history_run_fini(run);
    free(run);

    char *out = NULL, *err = NULL;
    const char *reg[] = {"1", "2", "--db", path, NULL};
    ASSERT_EQ_INT(run_diff(reg, &out, &err), 4);
    ASSERT_STREQ(err, "");
    ASSERT_CONTAINS(out, "A: run 1,");
    ASSERT_CONTAINS(out, "kind llm");
    ASSERT_CONTAINS(out, "llm: qwen 0.5b.onnx (qwen2 0.5b, fp16) native cuda fp16, prompt 128");
    ASSERT_CONTAINS(out, "ttft p50 ms");
    ASSERT_CONTAINS(out, "ttft p99 ms");
    ASSERT_CONTAINS(out, "prefill p50 ms");
    ASSERT_CONTAINS(out, "memory peak GB");
    ASSERT_CONTAINS(out, "KV cache MB");
    ASSERT_CONTAINS(out, "decode bandwidth %");
    ASSERT_TRUE(strstr(out, "prefill MFU") == NULL); /* unknown in both: left out */
    /* decode per token: +25%, both CIs exist and are apart */
    const char *p50 = strstr(out, "decode/token p50 ms");
    ASSERT_TRUE(p50 != NULL);
    const char *eol = strchr(p50, '\n');
    ASSERT_TRUE(eol != NULL);
    char line[256];
    snprintf(line, sizeof(line), "%.*s", (int)(eol - p50), p50);
    ASSERT_CONTAINS(line, "+25.00%");
    ASSERT_CONTAINS(line, "REGRESSION");
    const char *p99 = strstr(out, "decode/token p99 ms");
    ASSERT_TRUE(p99 != NULL);
    ASSERT_TRUE(strstr(p99, "REGRESSION") < strchr(p99, '\n')); /* on its own line */
    /* decode tokens/s: -20%, +/-std intervals apart */
    const char *rate = strstr(out, "decode tok/s");
    ASSERT_TRUE(rate != NULL);
    eol = strchr(rate, '\n');
    snprintf(line, sizeof(line), "%.*s", (int)(eol - rate), rate);
    ASSERT_CONTAINS(line, "125.000 +/- 0.625");
    ASSERT_CONTAINS(line, "-20.00%");
    ASSERT_CONTAINS(line, "REGRESSION");
    ASSERT_CONTAINS(out, "3 regressions");
    /* TTFT and prefill did not change */
    ASSERT_CONTAINS(out, "ok (CIs overlap)");
    ASSERT_CONTAINS(out, "ok (+/-std overlap)");
    free(out);
    free(err);

    /* the same figures: no regression */
    const char *same[] = {"1", "3", "--db", path, NULL};
    ASSERT_EQ_INT(run_diff(same, &out, &err), 0);
    ASSERT_CONTAINS(out, "0 regressions");
    ASSERT_TRUE(strstr(out, "REGRESSION\n") == NULL);
    free(out);
    free(err);

    /* faster: improved */
    const char *imp[] = {"2", "1", "--db", path, NULL};
    ASSERT_EQ_INT(run_diff(imp, &out, &err), 0);
    ASSERT_CONTAINS(out, "improved");
    free(out);
    free(err);
}

EB_TEST(diff_llm_against_run_is_refused)
{
    char path[600];
    db_path(path, sizeof(path));
    struct eb_history_run *run = calloc(1, sizeof(*run));
    ASSERT_TRUE(run != NULL);
    crafted_run(run, 100, 10.0, "native"); /* 1 */
    append(path, run);
    eb_history_run_fini(run);
    crafted_llm(run, 8.0, "native"); /* 2 */
    append(path, run);
    /* 3: an llm run that measured nothing */
    memset(&run->llm.ttft, 0, sizeof(run->llm.ttft));
    memset(&run->llm.prefill, 0, sizeof(run->llm.prefill));
    memset(&run->llm.decode, 0, sizeof(run->llm.decode));
    append(path, run);
    eb_history_run_fini(run);
    free(run);
    struct {
        const char *args[6];
        const char *want;
    } cases[] = {
        {{"2", "1", "--db", path, NULL},
         "edgebench: error: run 2 is of kind llm and run 1 of kind run: diff compares two runs "
         "of the same kind\n"},
        {{"1", "2", "--db", path, NULL},
         "edgebench: error: run 1 is of kind run and run 2 of kind llm: diff compares two runs "
         "of the same kind\n"},
        {{"2", "3", "--db", path, NULL},
         "edgebench: error: llm runs 2 and 3: one of them has no measured latency; nothing to "
         "compare\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *out = NULL, *err = NULL;
        int code = run_diff(cases[i].args, &out, &err);
        if (code != 2)
            EB_FAIL("case %zu: exit %d, want 2 (%s)", i, code, err);
        ASSERT_STREQ(err, cases[i].want); /* exactly one line */
        ASSERT_STREQ(out, "");
        free(out);
        free(err);
    }
}

EB_TEST(default_path_follows_xdg_and_none_disables)
{
    char buf[4096];
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_history_path("none", buf, sizeof(buf), &d), 0);
    ASSERT_STREQ(buf, "");
    ASSERT_EQ_INT(eb_history_path("/x/h.db", buf, sizeof(buf), &d), 1);
    ASSERT_STREQ(buf, "/x/h.db");
    setenv("XDG_DATA_HOME", "/data/me", 1);
    ASSERT_EQ_INT(eb_history_path(NULL, buf, sizeof(buf), &d), 1);
    ASSERT_STREQ(buf, "/data/me/edgebench/history.db");
    setenv("XDG_DATA_HOME", "relative/ignored", 1);
    setenv("HOME", "/home/me", 1);
    ASSERT_EQ_INT(eb_history_path(NULL, buf, sizeof(buf), &d), 1);
    ASSERT_STREQ(buf, "/home/me/.local/share/edgebench/history.db");
    unsetenv("XDG_DATA_HOME");
    unsetenv("HOME");
    ASSERT_EQ_INT(eb_history_path(NULL, buf, sizeof(buf), &d), -1);
    ASSERT_CONTAINS(d.msg, "give --db PATH");
}

EB_TEST(record_from_result_carries_verdict_and_stats)
{
    struct eb_run_result r;
    eb_run_result_init(&r);
    r.version = "0.1.0";
    snprintf(r.mode, sizeof(r.mode), "thermal");
    snprintf(r.started_at, sizeof(r.started_at), "2025-03-01T10:20:30Z");
    r.criteria =
        (struct eb_validity_criteria){.min_frames = 200, .min_duration_s = 10, .max_cov_pct = 5};
    struct eb_slot_result *s = &r.slots[1];
    s->status = EB_SLOT_OK;
    snprintf(s->model_path, sizeof(s->model_path), "/m/t.onnx");
    snprintf(s->backend, sizeof(s->backend), "ort");
    snprintf(s->device, sizeof(s->device), "cpu");
    s->frames_measured = 100;
    s->wall_s = 2.0;
    s->throughput_fps = 50.0;
    crafted_stats(&s->stages[EB_STAGE_E2E], 100, 20.0);
    crafted_stats(&s->pipeline, 100, 19.0);
    r.sys.tegrastats_used = 1;
    r.sys.energy_mj = 6000.0;        /* the whole span's */
    r.sys.window_energy_mj = 5000.0; /* the measured window's: 50 mJ per frame */
    eb_report_finish(&r);
    struct eb_history_run *rec = calloc(1, sizeof(*rec));
    ASSERT_TRUE(rec != NULL);
    struct eb_env_facts env;
    eb_report_env_facts(&env);
    struct eb_diag d = {0};
    ASSERT_OK(eb_history_from_result(&r, NULL, &env, "0.1.0", "1.30.0", rec, &d));
    ASSERT_STREQ(rec->verdict, "INVALID");
    ASSERT_CONTAINS(rec->reasons, "slot thermal: 100 measured frames, fewer than --min_frames");
    ASSERT_STREQ(rec->slots[1].verdict, "INVALID");
    ASSERT_STREQ(rec->slots[1].status, "ok");
    ASSERT_STREQ(rec->slots[0].status, "skipped");
    ASSERT_STREQ(rec->slots[0].verdict, "");
    ASSERT_NEAR(rec->energy_per_frame_mj, 50.0, 1e-9);
    ASSERT_NEAR(rec->slots[1].energy_per_frame_mj, 50.0, 1e-9); /* the only slot that ran */
    ASSERT_NEAR(rec->slots[1].stages[EB_STAGE_E2E].p50, s->stages[EB_STAGE_E2E].p50, 0);
    ASSERT_NEAR(rec->slots[1].stages[EB_HISTORY_PIPELINE].p50, s->pipeline.p50, 0);
    ASSERT_STREQ(rec->ort_version, "1.30.0");
    ASSERT_EQ_INT(strlen(rec->fingerprint), 16);
    ASSERT_STREQ(rec->hostname, env.hostname);
    ASSERT_TRUE(rec->config_json == NULL);
    eb_history_run_fini(rec);
    free(rec);
    eb_run_result_fini(&r);
}
