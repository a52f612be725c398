/*
 * bench_llm: decoder LLMs on the CPU, the native engine next to ONNX Runtime, in one process,
 * both driven through eb_llm_core_run (what `edgebench llm` measures: a prefill of the prompt,
 * then a greedy decode with the KV cache).
 *
 * Models are synthesized (model/llm.h) into a temporary folder, removed at the end: tiny llama,
 * tiny qwen2 and, unless --no-big, qwen2 0.5b, all fp32, with rotary tables of --ctx rows
 * (default prompt + gen). For each model and each thread count (1, and every online core when
 * there are more), both backends are loaded at once, warmed up with one repetition each, then
 * run for --rounds rounds of one repetition each, alternating (native, ort; the order flipping
 * every round), so that the noise of a shared machine falls on both. A row per backend:
 *
 *   pp<P> t/s = prompt tokens / the prefill forward, median over the rounds
 *   tg<G> t/s = gen tokens / the sum of the gen decode steps, median over the rounds
 *   native/ort = the ratio of the medians (> 1: native is faster)
 *
 * Usage: bench_llm [--prompt P] [--gen G] [--rounds R] [--ctx N] [--models LIST] [--no-big]
 *                  [--threads LIST]
 *   --models: comma list of llama-tiny, qwen2-tiny, qwen2-0.5b (default: all; --no-big drops
 *   qwen2-0.5b).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eb/backend.h"
#include "eb/engine.h"
#include "harness/pipeline/llm_core.h"
#include "harness/results/llm_result.h"
#include "model/llm.h"

#define MAX_ROUNDS  64
#define MAX_THREADS 4

struct model_def {
    const char *name; /* --models key and table label */
    enum eb_model_llm_arch arch;
    const char *size;
    int big; /* dropped by --no-big */
};

static const struct model_def k_models[] = {
    {"llama-tiny", EB_MODEL_LLM_LLAMA, "tiny", 0},
    {"qwen2-tiny", EB_MODEL_LLM_QWEN2, "tiny", 0},
    {"qwen2-0.5b", EB_MODEL_LLM_QWEN2, "0.5b", 1},
};
#define N_MODELS (sizeof(k_models) / sizeof(k_models[0]))

struct opts {
    int prompt, gen, rounds, ctx, big;
    int threads[MAX_THREADS], n_threads;
    char models[256]; /* comma list; "" = all */
};

/* A loaded backend with its tensors bound and its records. */
struct side {
    const char *backend;
    struct eb_backend *be;
    struct eb_model_info info;
    struct eb_llm_io io;
    struct eb_llm_result *res;
    double pp[MAX_ROUNDS], tg[MAX_ROUNDS]; /* t/s of each round */
    int ok;
    char why[600];
};

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi)
        return 0;
    *out = (int)v;
    return 1;
}

static int in_list(const char *list, const char *name)
{
    char buf[256];
    char *save = NULL;
    if (list[0] == '\0')
        return 1;
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save))
        if (strcmp(t, name) == 0)
            return 1;
    return 0;
}

static void usage(FILE *fp)
{
    fprintf(fp, "usage: bench_llm [--prompt P] [--gen G] [--rounds R] [--ctx N] [--models LIST] "
                "[--no-big] [--threads LIST]\n  models: llama-tiny, qwen2-tiny, qwen2-0.5b\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof(*o));
    o->prompt = 128;
    o->gen = 32;
    o->rounds = 3;
    o->big = 1;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    o->threads[o->n_threads++] = 1;
    if (cores > 1)
        o->threads[o->n_threads++] = (int)(cores < 256 ? cores : 256);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--no-big")) {
            o->big = 0;
            continue;
        }
        if (!strcmp(a, "--big")) {
            o->big = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "bench_llm: %s needs a value\n", a);
            return 0;
        }
        const char *v = argv[++i];
        if (!strcmp(a, "--prompt")) {
            if (!parse_int(v, 1, 8192, &o->prompt))
                return 0;
        } else if (!strcmp(a, "--gen")) {
            if (!parse_int(v, 1, 8192, &o->gen))
                return 0;
        } else if (!strcmp(a, "--rounds")) {
            if (!parse_int(v, 1, MAX_ROUNDS, &o->rounds))
                return 0;
        } else if (!strcmp(a, "--ctx")) {
            if (!parse_int(v, EB_MODEL_LLM_CTX_MIN, EB_MODEL_LLM_CTX_MAX, &o->ctx))
                return 0;
        } else if (!strcmp(a, "--models")) {
            snprintf(o->models, sizeof(o->models), "%s", v);
        } else if (!strcmp(a, "--threads")) {
            char buf[128];
            char *save = NULL;
            snprintf(buf, sizeof(buf), "%s", v);
            o->n_threads = 0;
            for (char *t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save))
                if (o->n_threads == MAX_THREADS ||
                    !parse_int(t, 1, 256, &o->threads[o->n_threads++]))
                    return 0;
            if (o->n_threads == 0)
                return 0;
        } else {
            fprintf(stderr, "bench_llm: unknown option %s\n", a);
            return 0;
        }
    }
    if (o->ctx == 0)
        o->ctx =
            o->prompt + o->gen < EB_MODEL_LLM_CTX_MIN ? EB_MODEL_LLM_CTX_MIN : o->prompt + o->gen;
    if (o->ctx < o->prompt + o->gen) {
        fprintf(stderr, "bench_llm: --ctx %d is shorter than --prompt + --gen (%d)\n", o->ctx,
                o->prompt + o->gen);
        return 0;
    }
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double s[MAX_ROUNDS];
    memcpy(s, v, (size_t)n * sizeof(double));
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static void side_fail(struct side *s, const struct eb_diag *d)
{
    s->ok = 0;
    snprintf(s->why, sizeof(s->why), "%s", d->msg[0] ? d->msg : "failed");
    for (char *c = s->why; *c; c++)
        if (*c == '|' || *c == '\n')
            *c = '/';
}

static void side_close(struct side *s)
{
    if (s->be != NULL)
        eb_backend_destroy(s->be);
    s->be = NULL;
    if (s->res != NULL) {
        eb_llm_result_fini(s->res);
        free(s->res);
    }
    s->res = NULL;
}

static void side_open(struct side *s, const char *backend, const char *path, int threads,
                      const struct opts *o)
{
    struct eb_diag d = {0};
    struct eb_backend_config cfg = {.device = EB_DEVICE_CPU,
                                    .threads = threads,
                                    .precision = EB_ENGINE_PRECISION_FP32,
                                    .max_seq = o->ctx,
                                    .mem_limit_bytes = 16000000000ull};
    const struct eb_backend_ops *ops = eb_backend_find(backend);
    struct eb_model_spec spec = {.path = path};
    memset(s, 0, sizeof(*s));
    s->backend = backend;
    s->ok = 1;
    s->res = calloc(1, sizeof(*s->res));
    if (s->res == NULL) {
        snprintf(s->why, sizeof(s->why), "out of memory");
        s->ok = 0;
        return;
    }
    eb_llm_result_init(s->res);
    if (ops == NULL) {
        snprintf(s->why, sizeof(s->why), "backend %s not compiled in", backend);
        s->ok = 0;
    } else if (eb_llm_result_alloc(s->res, 1, o->gen) != EB_OK) {
        snprintf(s->why, sizeof(s->why), "out of memory");
        s->ok = 0;
    } else if (eb_backend_create(ops, &cfg, &s->be, &d) != EB_OK ||
               eb_backend_load(s->be, &spec, &s->info, &d) != EB_OK ||
               eb_llm_io_bind(&s->info, &s->io, &d) != EB_OK) {
        side_fail(s, &d);
    }
}

/* One repetition (after `warmup` unrecorded ones): round `r`'s pp and tg. */
static void side_round(struct side *s, const int64_t *ids, const struct opts *o, int warmup, int r)
{
    if (!s->ok)
        return;
    atomic_int stop = 0;
    struct eb_diag d = {0};
    struct eb_llm_core c = {.be = s->be,
                            .io = &s->io,
                            .prompt_ids = ids,
                            .prompt = o->prompt,
                            .gen = o->gen,
                            .reps = 1,
                            .warmup = warmup,
                            .stop = &stop};
    if (eb_llm_core_run(&c, s->res, &d) != EB_OK || s->res->reps_done != 1) {
        side_fail(s, &d);
        return;
    }
    uint64_t dec = 0;
    for (int j = 0; j < o->gen; j++)
        dec += s->res->decode_ns[j];
    s->pp[r] = (double)o->prompt / ((double)s->res->prefill_ns[0] / 1e9);
    s->tg[r] = (double)o->gen / ((double)dec / 1e9);
}

static void print_rows(const char *model, int threads, const struct side *n, const struct side *t,
                       int rounds)
{
    const struct side *sides[2] = {n, t};
    double pp[2] = {0, 0}, tg[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        if (sides[i]->ok) {
            pp[i] = median(sides[i]->pp, rounds);
            tg[i] = median(sides[i]->tg, rounds);
        }
    for (int i = 0; i < 2; i++) {
        if (!sides[i]->ok) {
            printf("| %s | %d | %s | - | - | - | - | (%s) |\n", model, threads, sides[i]->backend,
                   sides[i]->why);
            continue;
        }
        char rpp[32] = "-", rtg[32] = "-";
        if (i == 0 && sides[1]->ok) {
            snprintf(rpp, sizeof(rpp), "%.2f", pp[0] / pp[1]);
            snprintf(rtg, sizeof(rtg), "%.2f", tg[0] / tg[1]);
        }
        printf("| %s | %d | %s | %.2f | %.2f | %s | %s | %s |\n", model, threads, sides[i]->backend,
               pp[i], tg[i], rpp, rtg, sides[i]->why);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct opts o;
    if (!parse_opts(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    char dir[] = "/tmp/bench_llm.XXXXXX";
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "bench_llm: cannot create a temporary folder under /tmp\n");
        return 1;
    }
    printf("# decoder LLMs on the CPU: native engine vs ONNX Runtime, one process, through "
           "eb_llm_core_run\n\n");
    printf("prompt %d tokens (seeded ids), gen %d (greedy), ctx %d, fp32. Both backends loaded "
           "at once, one warm-up repetition each, then %d rounds of one repetition each, "
           "alternating native/ort (the order flipping every round). pp = prompt / prefill "
           "forward, tg = gen / the decode steps (each with its argmax), medians over the "
           "rounds; native/ort > 1: native faster.\n\n",
           o.prompt, o.gen, o.ctx, o.rounds);
    printf("| model | threads | backend | pp%d t/s | tg%d t/s | pp native/ort | tg native/ort | "
           "note |\n|---|---:|---|---:|---:|---:|---:|---|\n",
           o.prompt, o.gen);
    fflush(stdout);
    int code = 0;
    int64_t *ids = malloc((size_t)o.prompt * sizeof(int64_t));
    if (ids == NULL) {
        rmdir(dir);
        return 1;
    }
    for (size_t m = 0; m < N_MODELS; m++) {
        const struct model_def *md = &k_models[m];
        if (!in_list(o.models, md->name) || (md->big && !o.big))
            continue;
        struct eb_diag d = {0};
        struct eb_model_llm_options so = {.seed = 0};
        char path[128], data[160];
        snprintf(path, sizeof(path), "%s/%s.onnx", dir, md->name);
        snprintf(data, sizeof(data), "%s.data", path);
        if (eb_model_llm_config(md->arch, md->size, o.ctx, &so.cfg, &d) != EB_OK ||
            eb_model_llm_synth_file(&so, path, NULL, &d) != EB_OK) {
            printf("| %s | - | - | - | - | - | - | (synth: %s) |\n", md->name, d.msg);
            code = 1;
            remove(path);
            remove(data);
            continue;
        }
        uint64_t s = 0x9e3779b97f4a7c15ull;
        for (int i = 0; i < o.prompt; i++) { /* xorshift ids below the vocabulary */
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ids[i] = (int64_t)(s % (uint64_t)so.cfg.vocab);
        }
        for (int ti = 0; ti < o.n_threads; ti++) {
            struct side nat, ort;
            side_open(&nat, "native", path, o.threads[ti], &o);
            side_open(&ort, "ort", path, o.threads[ti], &o);
            for (int r = 0; r < o.rounds; r++) {
                struct side *first = r % 2 ? &ort : &nat, *second = r % 2 ? &nat : &ort;
                side_round(first, ids, &o, r == 0, r);
                side_round(second, ids, &o, r == 0, r);
            }
            if (nat.ok && ort.ok && nat.res->tokens[0] != ort.res->tokens[0])
                snprintf(nat.why, sizeof(nat.why), "first token differs from ort's");
            print_rows(md->name, o.threads[ti], &nat, &ort, o.rounds);
            code |= !nat.ok || !ort.ok;
            side_close(&nat);
            side_close(&ort);
        }
        remove(path);
        remove(data);
    }
    free(ids);
    if (rmdir(dir) != 0)
        fprintf(stderr, "bench_llm: could not remove %s\n", dir);
    return code;
}
