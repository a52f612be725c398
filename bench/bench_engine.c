/*
 * bench_engine: the native engine next to ONNX Runtime, in one run and one process, each driven
 * through the backend vtable (eb_backend_create / load / infer / destroy) so that both are
 * measured the same way, input handling included.
 *
 * Rows: synthesized yolov8n and yolo11n at 320 and 640, and the int8 models of
 * ../shared/data/models ($EB_SHARED_DATA overrides; rows whose file is absent are skipped with
 * the reason), each with 1 and 2 threads. Per row:
 *
 *  - latency: both backends loaded at once, 3 warm-up rounds, then N rounds of one native and
 *    one ORT infer call, the order flipping every round, so that the bursts of a shared
 *    machine's noise fall on both (p50, p90 in ms of each backend's own N calls);
 *  - peak memory of each backend alone: write "5" to /proc/self/clear_refs (VmHWM := VmRSS),
 *    read VmRSS, create + load + warm-up + 5 runs, read VmHWM; peak = VmHWM - VmRSS before. The
 *    instance is destroyed and malloc_trim(0) called before the next one is measured; the input
 *    buffer is allocated before the reset.
 *
 * With --profile N, each row also loads the native engine once more with its per-operator
 * profile on (after the timed instances, so that the timer calls do not touch the table) and
 * prints, to stderr, the time per op type and the N slowest nodes.
 *
 * The QDQ model runs with --qdq int8 by default (integer execution, as ONNX Runtime runs it);
 * --qdq float (fake-quantised float, the engine's accuracy mode) or both on request.
 *
 * Usage: bench_engine [--runs N] [--models LIST] [--threads LIST] [--qdq float|int8|both]
 *                     [--profile N]
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/backend.h"
#include "eb/clock.h"
#include "eb/engine.h"
#include "harness/cmd/model_plan.h"
#include "harness/metrics/stats.h"
#include "model/model.h"

#ifndef EB_SHARED_DATA_DEFAULT
#define EB_SHARED_DATA_DEFAULT "../shared/data"
#endif

#define WARMUP     3
#define MEM_RUNS   5 /* runs of the memory-only instances */
#define MAX_THREAD 8
#define MIB        (1024.0 * 1024.0)

struct model_def {
    const char *name; /* --models key and table label */
    int synth;        /* 1: synthesized (arch below), 0: file under models/ */
    enum eb_synth_arch arch;
    int imgsz;
    const char *file; /* under <shared>/models */
    int is_qdq;       /* QDQ model: one row per --qdq mode */
};

static const struct model_def k_models[] = {
    {.name = "yolov8n-320", .synth = 1, .arch = EB_SYNTH_YOLOV8, .imgsz = 320},
    {.name = "yolov8n-640", .synth = 1, .arch = EB_SYNTH_YOLOV8, .imgsz = 640},
    {.name = "yolo11n-320", .synth = 1, .arch = EB_SYNTH_YOLO11, .imgsz = 320},
    {.name = "yolo11n-640", .synth = 1, .arch = EB_SYNTH_YOLO11, .imgsz = 640},
    {.name = "yolov8n-640-int8-qdq", .imgsz = 640, .file = "yolov8n_int8_qdq.onnx", .is_qdq = 1},
    {.name = "yolov8n-640-int8-dyn", .imgsz = 640, .file = "yolov8n_int8_dynamic.onnx"},
    {.name = "yolov8n-320-int8-dyn", .imgsz = 320, .file = "yolov8n_320_int8_dynamic.onnx"},
    {.name = "yolo11n-320-int8-dyn", .imgsz = 320, .file = "yolo11n_320_int8_dynamic.onnx"},
};
#define N_MODELS (sizeof(k_models) / sizeof(k_models[0]))

struct opts {
    int runs;
    int threads[MAX_THREAD];
    int n_threads;
    int qdq_float, qdq_int8;
    int profile_top;  /* 0 = no profile */
    char models[256]; /* comma list; "" = all */
    char data_dir[1024];
};

/* One backend instance's measurement. */
struct measure {
    int ok;
    char why[512];
    double p50, p90; /* ms */
    double peak_mib; /* VmHWM after - VmRSS before; < 0 when not measurable */
};

/* ---- memory from /proc --------------------------------------------------------------------- */

/* Value in kB of "key:" in /proc/self/status; -1 when unreadable. */
static long proc_status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            char *end = NULL;
            v = strtol(line + n + 1, &end, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

/* Resets the kernel's RSS high-water mark to the current RSS; 0 on failure. */
static int reset_hwm(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    int ok;
    if (f == NULL)
        return 0;
    ok = fputs("5", f) >= 0;
    ok = (fclose(f) == 0) && ok;
    return ok;
}

/* ---- one backend instance ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Per-node profile of the timed runs to stderr: time per op type, then the `top` slowest. */
static void print_profile(const char *label, int threads, const struct eb_backend_profile *pr,
                          int top)
{
    struct agg {
        char key[64];
        double ms, flops;
        int nodes;
    } types[64];
    size_t n_types = 0;
    double sum = 0.0;
    const double runs = pr->runs > 0 ? (double)pr->runs : 1.0;
    for (size_t i = 0; i < pr->n_nodes; i++) {
        const struct eb_backend_prof_node *nd = &pr->nodes[i];
        char key[64];
        snprintf(key, sizeof(key), "%s%s%s", nd->op, nd->fused[0] ? "+" : "", nd->fused);
        size_t t = 0;
        while (t < n_types && strcmp(types[t].key, key) != 0)
            t++;
        if (t == n_types && n_types < sizeof(types) / sizeof(types[0])) {
            snprintf(types[t].key, sizeof(types[t].key), "%s", key);
            types[t].ms = types[t].flops = 0.0;
            types[t].nodes = 0;
            n_types++;
        }
        if (t < n_types) {
            types[t].ms += nd->total_ms / runs;
            types[t].flops += (double)nd->flops;
            types[t].nodes++;
        }
        sum += nd->total_ms / runs;
    }
    fprintf(stderr,
            "\n### native profile: %s, %d threads (%.2f ms/run in nodes, %.2f ms/run measured)"
            "\n\n| op (fused) | nodes | ms/run | %% | GFLOP/s |\n|---|---:|---:|---:|---:|\n",
            label, threads, sum, pr->run_total_ms / runs);
    for (size_t a = 0; a < n_types; a++) /* by time, descending */
        for (size_t b = a + 1; b < n_types; b++)
            if (types[b].ms > types[a].ms) {
                struct agg tmp = types[a];
                types[a] = types[b];
                types[b] = tmp;
            }
    for (size_t a = 0; a < n_types; a++)
        fprintf(stderr, "| %s | %d | %.3f | %.1f | %.1f |\n", types[a].key, types[a].nodes,
                types[a].ms, sum > 0 ? 100.0 * types[a].ms / sum : 0.0,
                types[a].ms > 0 ? types[a].flops / types[a].ms / 1e6 : 0.0);
    fprintf(stderr, "\n| node | op (fused) | ms/run | %% | GFLOP/s |\n|---|---|---:|---:|---:|\n");
    int *done = calloc(pr->n_nodes ? pr->n_nodes : 1, sizeof(int));
    for (int r = 0; done != NULL && r < top && (size_t)r < pr->n_nodes; r++) {
        size_t best = pr->n_nodes;
        for (size_t i = 0; i < pr->n_nodes; i++)
            if (!done[i] &&
                (best == pr->n_nodes || pr->nodes[i].total_ms > pr->nodes[best].total_ms))
                best = i;
        done[best] = 1;
        const struct eb_backend_prof_node *nd = &pr->nodes[best];
        const double ms = nd->total_ms / runs;
        fprintf(stderr, "| %s | %s%s%s | %.3f | %.1f | %.1f |\n", nd->name, nd->op,
                nd->fused[0] ? "+" : "", nd->fused, ms, sum > 0 ? 100.0 * ms / sum : 0.0,
                ms > 0 ? (double)nd->flops / ms / 1e6 : 0.0);
    }
    free(done);
}

/* A loaded backend instance, its input checked. */
struct instance {
    struct eb_backend *be;
    struct eb_model_info info;
};

static enum eb_status open_backend(const char *backend, const struct eb_model_spec *spec,
                                   int threads, int qdq, int profile, const struct eb_tensor *in,
                                   struct instance *x, struct eb_diag *diag)
{
    struct eb_backend_config cfg = {.device = EB_DEVICE_CPU,
                                    .threads = threads,
                                    .qdq = qdq,
                                    .kernels = NULL,
                                    .passes = 0,
                                    .profile = profile,
                                    .mem_limit_bytes = 8000000000ull};
    const struct eb_backend_ops *ops = eb_backend_find(backend);
    x->be = NULL;
    if (ops == NULL)
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "backend %s not compiled in", backend);
    enum eb_status st;
    if ((st = eb_backend_create(ops, &cfg, &x->be, diag)) != EB_OK ||
        (st = eb_backend_load(x->be, spec, &x->info, diag)) != EB_OK)
        return st;
    if (x->info.n_inputs != 1 || x->info.inputs[0].rank != 4 ||
        x->info.inputs[0].dtype != in->dtype)
        return eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "expected one 4-D float input");
    for (int d = 0; d < 4; d++)
        if (x->info.inputs[0].shape[d] >= 0 && x->info.inputs[0].shape[d] != in->shape[d])
            return eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "input dim %d is %lld, expected %lld", d,
                                (long long)x->info.inputs[0].shape[d], (long long)in->shape[d]);
    return EB_OK;
}

/* One inference; its time in ms, or -1 on failure (diag set). */
static double infer_ms(struct instance *x, const struct eb_tensor *in, struct eb_diag *diag)
{
    struct eb_tensor out[EB_BACKEND_MAX_IO];
    const uint64_t t0 = eb_clock_ns();
    if (eb_backend_infer(x->be, in, 1, out, x->info.n_outputs, NULL, diag) != EB_OK)
        return -1.0;
    return (double)(eb_clock_ns() - t0) / 1e6;
}

static void fail_measure(struct measure *m, const struct eb_diag *diag)
{
    m->ok = 0;
    snprintf(m->why, sizeof(m->why), "%s", diag->msg[0] ? diag->msg : "failed");
    for (char *c = m->why; *c; c++)
        if (*c == '|' || *c == '\n')
            *c = '/';
}

static void set_percentiles(struct measure *m, double *ms, int runs)
{
    qsort(ms, (size_t)runs, sizeof(*ms), cmp_double);
    m->p50 = eb_stat_percentile_sorted(ms, (size_t)runs, 50.0);
    m->p90 = eb_stat_percentile_sorted(ms, (size_t)runs, 90.0);
    m->ok = 1;
}

/*
 * One backend instance alone: peak memory (create + load + warm-up + runs), and with
 * profile_top > 0 its per-operator profile; latencies into ms (p50/p90 set).
 */
static void measure_backend(const char *backend, const struct eb_model_spec *spec, int threads,
                            int qdq, int runs, const struct eb_tensor *in, double *ms,
                            struct measure *m, int profile_top, const char *label)
{
    struct instance x = {0};
    struct eb_diag diag = {0};
    long rss0, hwm;
    int hwm_ok;

    memset(m, 0, sizeof(*m));
    m->peak_mib = -1;
    /* Free heap pages left resident by earlier work (model bytes, the plan) go back first, so
     * that this instance cannot reuse them unseen. */
    malloc_trim(0);
    hwm_ok = reset_hwm();
    rss0 = proc_status_kb("VmRSS");
    if (open_backend(backend, spec, threads, qdq, profile_top > 0, in, &x, &diag) != EB_OK)
        goto fail;
    for (int r = 0; r < WARMUP + runs; r++) {
        const double t = infer_ms(&x, in, &diag);
        if (t < 0)
            goto fail;
        if (r >= WARMUP)
            ms[r - WARMUP] = t;
        if (profile_top > 0 && r == WARMUP - 1)
            eb_backend_profile_reset(x.be);
    }
    if (profile_top > 0) {
        struct eb_backend_profile pr;
        if (eb_backend_profile_get(x.be, &pr, &diag) != EB_OK)
            goto fail;
        print_profile(label, threads, &pr, profile_top);
    }
    hwm = proc_status_kb("VmHWM");
    if (hwm_ok && rss0 >= 0 && hwm >= 0)
        m->peak_mib = (double)(hwm - rss0) / 1024.0;
    set_percentiles(m, ms, runs);
    eb_backend_destroy(x.be);
    malloc_trim(0);
    return;
fail:
    fail_measure(m, &diag);
    eb_backend_destroy(x.be);
    malloc_trim(0);
}

/*
 * Latency side by side: both backends loaded at once and warmed up, then `runs` rounds of one
 * native and one ORT inference, the order alternating from round to round, so that a noisy
 * spell of a shared machine falls on both. Sets p50/p90 of nat and ort (not their memory).
 */
static void measure_pair(const struct eb_model_spec *spec, int threads, int qdq, int runs,
                         const struct eb_tensor *in, double *ms_nat, double *ms_ort,
                         struct measure *nat, struct measure *ort)
{
    struct instance xn = {0}, xo = {0};
    struct eb_diag dn = {0}, dr = {0};
    const int n_ok = open_backend("native", spec, threads, qdq, 0, in, &xn, &dn) == EB_OK;
    const int o_ok = open_backend("ort", spec, threads, 0, 0, in, &xo, &dr) == EB_OK;
    int n_run = n_ok, o_run = o_ok;
    for (int r = 0; r < WARMUP + runs && (n_run || o_run); r++) {
        for (int k = 0; k < 2; k++) {
            const int native_turn = (k == 0) == (r % 2 == 0);
            if (native_turn && n_run) {
                const double t = infer_ms(&xn, in, &dn);
                n_run = t >= 0;
                if (r >= WARMUP)
                    ms_nat[r - WARMUP] = t;
            } else if (!native_turn && o_run) {
                const double t = infer_ms(&xo, in, &dr);
                o_run = t >= 0;
                if (r >= WARMUP)
                    ms_ort[r - WARMUP] = t;
            }
        }
    }
    if (n_run)
        set_percentiles(nat, ms_nat, runs);
    else
        fail_measure(nat, &dn);
    if (o_run)
        set_percentiles(ort, ms_ort, runs);
    else
        fail_measure(ort, &dr);
    eb_backend_destroy(xn.be);
    eb_backend_destroy(xo.be);
    malloc_trim(0);
}

/* ---- options -------------------------------------------------------------------------------- */

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi)
        return 0;
    *out = (int)v;
    return 1;
}

static int parse_threads(const char *s, struct opts *o)
{
    char buf[128];
    char *save = NULL, *tok;
    snprintf(buf, sizeof(buf), "%s", s);
    o->n_threads = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (o->n_threads == MAX_THREAD || !parse_int(tok, 1, 256, &o->threads[o->n_threads]))
            return 0;
        o->n_threads++;
    }
    return o->n_threads > 0;
}

static int model_selected(const struct opts *o, const char *name)
{
    char buf[256];
    char *save = NULL, *tok;
    if (o->models[0] == '\0')
        return 1;
    snprintf(buf, sizeof(buf), "%s", o->models);
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save))
        if (strcmp(tok, name) == 0)
            return 1;
    return 0;
}

static void usage(FILE *fp)
{
    fprintf(fp, "usage: bench_engine [--runs N] [--models LIST] [--threads LIST] "
                "[--qdq float|int8|both (default int8)] [--profile N]\nmodels:");
    for (size_t i = 0; i < N_MODELS; i++)
        fprintf(fp, " %s", k_models[i].name);
    fprintf(fp, "\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    const char *env = getenv("EB_SHARED_DATA");
    memset(o, 0, sizeof(*o));
    o->runs = 20;
    o->threads[0] = 1;
    o->threads[1] = 2;
    o->n_threads = 2;
    o->qdq_float = 0; /* fake-quant float is an accuracy mode; ORT runs QDQ models in int8 */
    o->qdq_int8 = 1;
    snprintf(o->data_dir, sizeof(o->data_dir), "%s",
             env != NULL && env[0] ? env : EB_SHARED_DATA_DEFAULT);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (v == NULL)
            return 0;
        if (!strcmp(a, "--runs")) {
            if (!parse_int(v, 1, 100000, &o->runs))
                return 0;
        } else if (!strcmp(a, "--models")) {
            snprintf(o->models, sizeof(o->models), "%s", v);
        } else if (!strcmp(a, "--threads")) {
            if (!parse_threads(v, o))
                return 0;
        } else if (!strcmp(a, "--profile")) {
            if (!parse_int(v, 1, 1000, &o->profile_top))
                return 0;
        } else if (!strcmp(a, "--qdq")) {
            o->qdq_float = !strcmp(v, "float") || !strcmp(v, "both");
            o->qdq_int8 = !strcmp(v, "int8") || !strcmp(v, "both");
            if (!o->qdq_float && !o->qdq_int8)
                return 0;
        } else {
            return 0;
        }
        i++;
    }
    return 1;
}

/* ---- table ---------------------------------------------------------------------------------- */

struct targets {
    int rows, p50_pass, p50_fail;
    int mem_rows, mem_fail;
};

static void fmt_ms(char *buf, size_t n, const struct measure *m, double v)
{
    if (m->ok)
        snprintf(buf, n, "%.2f", v);
    else
        snprintf(buf, n, "-");
}

static void print_row(const char *label, int threads, const struct measure *nat,
                      const struct measure *ort, struct targets *t, int mem_target)
{
    char np50[32], np90[32], op50[32], op90[32], ratio[32], npk[32], opk[32], mratio[32];
    fmt_ms(np50, sizeof(np50), nat, nat->p50);
    fmt_ms(np90, sizeof(np90), nat, nat->p90);
    fmt_ms(op50, sizeof(op50), ort, ort->p50);
    fmt_ms(op90, sizeof(op90), ort, ort->p90);
    snprintf(ratio, sizeof(ratio), "-");
    snprintf(mratio, sizeof(mratio), "-");
    snprintf(npk, sizeof(npk), "-");
    snprintf(opk, sizeof(opk), "-");
    if (nat->ok && nat->peak_mib >= 0)
        snprintf(npk, sizeof(npk), "%.1f", nat->peak_mib);
    if (ort->ok && ort->peak_mib >= 0)
        snprintf(opk, sizeof(opk), "%.1f", ort->peak_mib);
    if (nat->ok && ort->ok && ort->p50 > 0)
        snprintf(ratio, sizeof(ratio), "%.2f", nat->p50 / ort->p50);
    if (nat->ok && ort->ok && nat->peak_mib >= 0 && ort->peak_mib > 0)
        snprintf(mratio, sizeof(mratio), "%.0f%%", 100.0 * nat->peak_mib / ort->peak_mib);
    printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", label, threads, np50, np90,
           op50, op90, ratio, npk, opk, mratio);
    if (!nat->ok)
        printf("| (native: %s) | | | | | | | | | |\n", nat->why);
    if (!ort->ok)
        printf("| (ort: %s) | | | | | | | | | |\n", ort->why);
    t->rows++;
    if (nat->ok && ort->ok && nat->p50 <= ort->p50)
        t->p50_pass++;
    else
        t->p50_fail++;
    if (mem_target) {
        t->mem_rows++;
        if (!(nat->ok && ort->ok && nat->peak_mib >= 0 && ort->peak_mib > 0 &&
              nat->peak_mib <= 0.6 * ort->peak_mib))
            t->mem_fail++;
    }
}

/* Model bytes for a row: synthesized or read from the shared folder. Caller frees. */
static enum eb_status model_bytes(const struct opts *o, const struct model_def *md, char *path,
                                  size_t path_size, uint8_t **bytes, size_t *len,
                                  struct eb_diag *diag)
{
    if (md->synth) {
        struct eb_synth_options so = {
            .arch = md->arch, .scale = 'n', .imgsz = md->imgsz, .num_classes = 80, .seed = 0};
        snprintf(path, path_size, "embedded:%s", md->name);
        return eb_model_synth(&so, bytes, len, diag);
    }
    snprintf(path, path_size, "%s/models/%s", o->data_dir, md->file);
    return eb_model_read_file(path, bytes, len, diag);
}

int main(int argc, char **argv)
{
    struct opts o;
    struct targets t = {0};
    double *ms, *ms2;
    float *input;
    if (!parse_opts(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    /* latency buffers: the timed runs, or a memory-only instance's runs */
    const size_t n_ms = (size_t)(o.runs > MEM_RUNS ? o.runs : MEM_RUNS);
    ms = malloc(sizeof(*ms) * n_ms);
    ms2 = malloc(sizeof(*ms2) * n_ms);
    input = malloc(sizeof(*input) * 3 * 640 * 640);
    if (ms == NULL || ms2 == NULL || input == NULL) {
        free(ms);
        free(ms2);
        free(input);
        return 1;
    }
    /* A mid-grey letterboxed frame: the content does not change the work of these models. */
    for (size_t i = 0; i < (size_t)3 * 640 * 640; i++)
        input[i] = (float)(i % 251) / 251.0f;

    printf("# native engine vs ONNX Runtime (CPU), one process, through the backend vtable\n\n");
    printf("runs: %d timed after %d warm-up; latency = the eb_backend_infer call (input "
           "tensor in, outputs out); p50/p90 in ms (linear interpolation). Both backends are "
           "loaded together for the timed runs, which alternate native/ORT (the order flipping "
           "every round) so that a noisy spell falls on both.\n",
           o.runs, WARMUP);
    printf("peak MiB = VmHWM after create+load+warm-up+5 runs - VmRSS just before create, with the "
           "high-water mark reset by writing 5 to /proc/self/clear_refs; one backend instance at "
           "a time (destroyed + malloc_trim(0) before the next); the input buffer is allocated "
           "beforehand and malloc_trim(0) runs just before the reset. Both backends are primed "
           "once first (ORT's library is loaded and stays "
           "mapped; code pages touched), so a row does not pay one-time costs.\n");
    printf("native's planned bytes (eb_engine_mem_info) are in the second table. shared data: "
           "%s\n\n",
           o.data_dir);

    /* Priming: load ONNX Runtime and touch both backends' code on the smallest model. */
    {
        struct eb_synth_options so = {
            .arch = EB_SYNTH_YOLOV8, .scale = 'n', .imgsz = 320, .num_classes = 80, .seed = 0};
        uint8_t *b = NULL;
        size_t len = 0;
        struct eb_diag d = {0};
        struct measure m;
        struct eb_tensor in = {
            .dtype = EB_DTYPE_F32, .rank = 4, .shape = {1, 3, 320, 320}, .data = input};
        if (eb_model_synth(&so, &b, &len, &d) == EB_OK) {
            struct eb_model_spec spec = {.path = "embedded:prime", .bytes = b, .n_bytes = len};
            measure_backend("ort", &spec, 1, 0, 1, &in, ms, &m, 0, NULL);
            if (!m.ok)
                printf("note: ONNX Runtime priming failed: %s\n\n", m.why);
            measure_backend("native", &spec, 1, 0, 1, &in, ms, &m, 0, NULL);
        }
        free(b);
    }

    printf("| model | threads | native p50 | native p90 | ort p50 | ort p90 | native/ort p50 "
           "| native peak MiB | ort peak MiB | native/ort mem |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");

    struct eb_model_plan plans[N_MODELS];
    int plan_ok[N_MODELS];
    char plan_why[N_MODELS][512];
    int used[N_MODELS];
    memset(plan_ok, 0, sizeof(plan_ok));
    memset(used, 0, sizeof(used));
    for (size_t mi = 0; mi < N_MODELS; mi++) {
        const struct model_def *md = &k_models[mi];
        char path[1200];
        uint8_t *bytes = NULL;
        size_t len = 0;
        struct eb_diag diag = {0};
        if (!model_selected(&o, md->name))
            continue;
        used[mi] = 1;
        if (model_bytes(&o, md, path, sizeof(path), &bytes, &len, &diag) != EB_OK) {
            printf("| %s | - | skipped: %s | | | | | | | |\n", md->name, diag.msg);
            snprintf(plan_why[mi], sizeof(plan_why[mi]), "skipped (model unavailable)");
            continue;
        }
        {
            struct eb_diag pd = {0};
            plan_ok[mi] =
                eb_harness_model_plan(bytes, len, path, md->imgsz, &plans[mi], &pd) == EB_OK;
            if (!plan_ok[mi])
                snprintf(plan_why[mi], sizeof(plan_why[mi]), "%s", pd.msg);
        }
        struct eb_model_spec spec = {
            .path = path, .bytes = bytes, .n_bytes = len, .imgsz = md->imgsz};
        struct eb_tensor in = {
            .dtype = EB_DTYPE_F32, .rank = 4, .shape = {1, 3, md->imgsz, md->imgsz}, .data = input};
        for (int q = 0; q < 2; q++) {
            char label[96];
            if (md->is_qdq && ((q == 0 && !o.qdq_float) || (q == 1 && !o.qdq_int8)))
                continue;
            if (!md->is_qdq && q == 1)
                continue;
            if (md->is_qdq)
                snprintf(label, sizeof(label), "%s (native qdq=%s)", md->name,
                         q ? "int8" : "float");
            else
                snprintf(label, sizeof(label), "%s", md->name);
            for (int ti = 0; ti < o.n_threads; ti++) {
                /* Memory: each backend alone (a few runs reach its steady state); latency:
                 * both loaded, their runs interleaved. */
                struct measure nat, ort, lat_nat = {0}, lat_ort = {0};
                measure_backend("native", &spec, o.threads[ti], q, MEM_RUNS, &in, ms, &nat, 0,
                                NULL);
                measure_backend("ort", &spec, o.threads[ti], 0, MEM_RUNS, &in, ms, &ort, 0, NULL);
                measure_pair(&spec, o.threads[ti], q, o.runs, &in, ms, ms2, &lat_nat, &lat_ort);
                lat_nat.peak_mib = nat.ok ? nat.peak_mib : -1.0;
                lat_ort.peak_mib = ort.ok ? ort.peak_mib : -1.0;
                nat = lat_nat;
                ort = lat_ort;
                print_row(label, o.threads[ti], &nat, &ort, &t,
                          strcmp(md->name, "yolo11n-640") == 0);
                fflush(stdout);
                if (o.profile_top > 0) {
                    struct measure prof;
                    measure_backend("native", &spec, o.threads[ti], q, o.runs, &in, ms, &prof,
                                    o.profile_top, label);
                    if (!prof.ok)
                        fprintf(stderr, "\nprofile of %s failed: %s\n", label, prof.why);
                }
            }
        }
        free(bytes);
    }

    printf("\n## native memory plan (eb_engine_mem_info, MiB = 2^20 bytes)\n\n");
    printf("| model | arena (planned peak) | scratch | weights | packed | total | naive sum | "
           "arena/naive |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t mi = 0; mi < N_MODELS; mi++) {
        const struct eb_model_plan *p = &plans[mi];
        if (!used[mi])
            continue;
        if (!plan_ok[mi]) {
            printf("| %s | not planned: %s | | | | | | |\n", k_models[mi].name, plan_why[mi]);
            continue;
        }
        printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f%% |\n", k_models[mi].name,
               (double)p->arena_bytes / MIB, (double)p->scratch_bytes / MIB,
               (double)p->weight_bytes / MIB, (double)p->packed_bytes / MIB,
               (double)p->total_bytes / MIB, (double)p->naive_bytes / MIB,
               p->naive_bytes ? 100.0 * (double)p->arena_bytes / (double)p->naive_bytes : 0.0);
    }

    printf("\n## targets\n\n");
    printf("- native p50 <= ONNX Runtime p50 on every row: %s (%d of %d rows)\n",
           t.rows > 0 && t.p50_fail == 0 ? "pass" : "FAIL", t.p50_pass, t.rows);
    if (t.mem_rows > 0)
        printf("- yolo11n-640 native peak memory <= 60%% of ONNX Runtime's: %s (%d of %d rows "
               "fail)\n",
               t.mem_fail == 0 ? "pass" : "FAIL", t.mem_fail, t.mem_rows);
    else
        printf("- yolo11n-640 native peak memory <= 60%% of ONNX Runtime's: not measured (row "
               "not selected)\n");
    free(ms);
    free(ms2);
    free(input);
    return 0;
}
