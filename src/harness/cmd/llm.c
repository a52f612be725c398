/*
 * `edgebench llm` (llm.h): options, the model and its budget, the backend, the measurement
 * through harness/pipeline/llm_core.c, the derived figures and the reports.
 */
#include "harness/cmd/llm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eb/clock.h"
#include "eb/engine.h"
#include "eb/file.h"
#include "eb/number.h"
#include "harness/cmd/config.h"
#include "harness/cmd/profile.h"
#include "harness/cmd/record.h"
#include "harness/cmd/run.h"
#include "harness/cmd/runlog.h"
#include "harness/cmd/trace.h"
#include "harness/metrics/cupti.h"
#include "harness/metrics/peaks.h"
#include "harness/metrics/sampler.h"
#include "harness/pipeline/budget.h"
#include "harness/pipeline/llm_core.h"
#include "harness/pipeline/slot.h"
#include "harness/report/report.h"
#include "harness/report/report_llm.h"
#include "harness/results/history.h"
#include "harness/results/sha256.h"
#include "model/llm.h"
#include "model/model.h"

#define LLM_MAX_TOKENS     131072 /* --prompt, --gen (EB_MODEL_LLM_CTX_MAX) */
#define LLM_MAX_REPS       10000
#define LLM_IDS_BYTES      (16u << 20) /* a --prompt_ids file */
#define LLM_MAX_TARGET_TPS 1000000

struct llm_opts {
    const char *model, *prompt_ids, *precision;
    int64_t prompt, gen, reps, warmup, ctx, seed, target_tps;
    int prompt_given;
    int trace;       /* --trace */
    int nsys;        /* --nsys */
    char **run_argv; /* run's options passed through (malloc'd array of borrowed strings) */
    int run_argc;
    char **nsys_argv; /* the options of the re-run under nsys: all but --trace and --nsys
                         (malloc'd array of borrowed strings) */
    int nsys_argc;
};

/* Options of `run` that llm passes to eb_config_parse. */
static const char *const passed[] = {
    "backend", "device",      "threads", "gpu_mem_limit_gb", "output",  "db",
    "ort_lib", "interval_ms", "kernels", "no_fold",          "no_fuse", "no_dce",
    "verbose", "quiet",       "profile",
};

void eb_llm_print_help(FILE *fp)
{
    fprintf(fp,
            "usage: edgebench llm --model M.onnx [options]\n\n"
            "A decoder-only transformer measured as it is used: per repetition a prefill of the\n"
            "prompt, then a greedy decode of --gen tokens on the KV cache. Reported: time to\n"
            "first token, prefill and decode tokens/s (llama-bench's pp and tg rows), the\n"
            "per-token decode latency (percentiles with 95%% CIs), prefill MFU and decode\n"
            "memory-bandwidth use against the device's peaks, weights and KV cache against the\n"
            "memory limit. Written: report.json (kind llm), report.md, report.html, summary.md,\n"
            "inputs.json, assumptions.md, env.json, metrics.jsonl and run.log in\n"
            "<output>/<stamp>-llm/; the run goes to the history.\n"
            "The model: `edgebench model synth --arch llama|qwen2` (docs/llm-models.md) or an\n"
            "export with the same tensor names (input_ids, position_ids, past_key_values.N.key|\n"
            "value in; logits, present.N.key|value out).\n\n"
            "options:\n"
            "  --model PATH      the decoder (required)\n"
            "  --prompt N        prompt tokens (default %d)\n"
            "  --gen N           decode steps, one token each (default %d)\n"
            "  --reps N          measured repetitions (default %d; fewer than %d is INVALID)\n"
            "  --warmup N        repetitions run first and not measured (default %d)\n"
            "  --ctx N           the context the KV cache is sized and budgeted for (default\n"
            "                    prompt + gen; at most the model's)\n"
            "  --prompt_ids FILE the prompt's token ids (whitespace- or comma-separated); the\n"
            "                    default is a seeded sequence (timing does not depend on it)\n"
            "  --seed S          seed of that sequence (default 0)\n"
            "  --target_tps N    the decode rate (tokens/s) the application needs: summary.md\n"
            "                    says whether decode keeps up (default 0: not judged)\n"
            "  --precision P     fp32|fp16: what the model computes in; ort runs the model in\n"
            "                    its own dtype (default: the model's)\n"
            "  --backend B       auto|native|ort (default auto: native where it runs every node\n"
            "                    of the model, else ort; the report says why)\n"
            "  --device D        cpu|cuda (default cpu)\n"
            "  --threads N       intra-op threads (default: the runtime's)\n"
            "  --trace           also write trace.json (Chrome trace format: Perfetto or\n"
            "                    chrome://tracing): each repetition's prefill and decode and\n"
            "                    every decode step, and on cuda every kernel (CUPTI)\n"
            "  --nsys            then run the same llm again under Nsight Systems (nsys profile,\n"
            "                    its capture gated on the measured repetitions' NVTX range\n"
            "                    llm:measure): nsys.nsys-rep and nsys_kernels.csv in the run\n"
            "                    folder, the top kernels printed\n"
            "  --profile         the per-operator table of each phase (prefill, decode) in the\n"
            "                    reports, adding up to the phase's forwards (native: the engine\n"
            "                    times each node; ort: ONNX Runtime's profiler, its file split\n"
            "                    by run after the last repetition)\n"
            "  --gpu_mem_limit_gb G  the memory limit: weights and the KV cache at --ctx must\n"
            "                    fit (default 8.0)\n"
            "  --output DIR      folder of the run folders (default runs)\n"
            "  --db PATH|none    history database (default %s)\n"
            "  also: --ort_lib, --interval_ms, --kernels, --no_fold, --no_fuse, --no_dce,\n"
            "  --verbose, --quiet (as run)\n\n"
            "exit codes: 0 measured; 1 the model could not be loaded or run, or does not fit the\n"
            "limit; 2 bad input; 6 a report could not be written; 130 interrupted (the report\n"
            "covers the repetitions that ended).\n",
            EB_LLM_PROMPT_DEFAULT, EB_LLM_GEN_DEFAULT, EB_LLM_REPS_DEFAULT, EB_LLM_MIN_REPS,
            EB_LLM_WARMUP_DEFAULT, EB_HISTORY_DEFAULT_TEXT);
}

static int usage(FILE *err, const char *fmt, const char *a)
{
    fprintf(err, "edgebench: error: ");
    fprintf(err, fmt, a);
    fprintf(err, " (see edgebench llm --help)\n");
    return EB_EXIT_USAGE;
}

/* The integer options: name, field, range. */
struct int_opt {
    const char *name;
    size_t offset;
    long long lo, hi;
};

static const struct int_opt int_opts[] = {
    {"prompt", offsetof(struct llm_opts, prompt), 1, LLM_MAX_TOKENS},
    {"gen", offsetof(struct llm_opts, gen), 1, LLM_MAX_TOKENS},
    {"reps", offsetof(struct llm_opts, reps), 1, LLM_MAX_REPS},
    {"warmup", offsetof(struct llm_opts, warmup), 0, LLM_MAX_REPS},
    {"ctx", offsetof(struct llm_opts, ctx), EB_MODEL_LLM_CTX_MIN, EB_MODEL_LLM_CTX_MAX},
    {"seed", offsetof(struct llm_opts, seed), 0, UINT32_MAX},
    {"target_tps", offsetof(struct llm_opts, target_tps), 0, LLM_MAX_TARGET_TPS},
};

static int parse_opts(int argc, char **argv, struct llm_opts *o, int *help, FILE *err)
{
    static const char *const strs[] = {"model", "prompt_ids", "precision"};
    *help = 0;
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            *help = 1;
            return EB_EXIT_OK;
        }
    o->run_argv = malloc(((size_t)argc + 1) * sizeof(char *));
    o->nsys_argv = malloc(((size_t)argc + 1) * sizeof(char *));
    if (o->run_argv == NULL || o->nsys_argv == NULL)
        return usage(err, "out of memory%s", "");
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--trace") != 0 && strcmp(argv[i], "--nsys") != 0)
            o->nsys_argv[o->nsys_argc++] = argv[i];
    o->nsys_argv[o->nsys_argc] = NULL;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *value = NULL;
        if (strncmp(arg, "--", 2) != 0)
            return usage(err, "unexpected argument '%.200s'; options start with --", arg);
        if (strcmp(arg, "--trace") == 0 || strcmp(arg, "--nsys") == 0) {
            *(arg[2] == 't' ? &o->trace : &o->nsys) = 1;
            continue;
        }
        size_t k = 0, n = 0;
        while (k < EB_ARRAY_LEN(strs) && !eb_config_match_option(arg, strs[k], &value))
            k++;
        while (k == EB_ARRAY_LEN(strs) && n < EB_ARRAY_LEN(int_opts) &&
               !eb_config_match_option(arg, int_opts[n].name, &value))
            n++;
        if (k < EB_ARRAY_LEN(strs) || n < EB_ARRAY_LEN(int_opts)) {
            if (value == NULL && i + 1 < argc)
                value = argv[++i];
            if (value == NULL || value[0] == '\0')
                return usage(err, "%s needs a value", arg);
            if (k == 0) {
                o->model = value;
            } else if (k == 1) {
                o->prompt_ids = value;
            } else if (k == 2) {
                if (strcmp(value, "fp32") != 0 && strcmp(value, "fp16") != 0)
                    return usage(err, "--precision: '%.100s' is not accepted (accepted: fp32|fp16)",
                                 value);
                o->precision = value;
            } else {
                const struct int_opt *io = &int_opts[n];
                long long v = 0;
                if (eb_number_parse_int(value, &v) != EB_NUMBER_OK || v < io->lo || v > io->hi) {
                    char msg[160];
                    snprintf(msg, sizeof(msg),
                             "--%s: '%%.100s' is not a whole number in %lld..%lld", io->name,
                             io->lo, io->hi);
                    return usage(err, msg, value);
                }
                int64_t v64 = (int64_t)v;
                memcpy((char *)o + io->offset, &v64, sizeof(v64));
                o->prompt_given |= strcmp(io->name, "prompt") == 0;
            }
            continue;
        }
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int pass = 0;
        for (size_t p = 0; p < EB_ARRAY_LEN(passed) && !pass; p++)
            pass = strlen(passed[p]) == len && strncmp(passed[p], name, len) == 0;
        if (!pass)
            return usage(err, "unknown option %.100s", arg);
        o->run_argv[o->run_argc++] = argv[i];
        if (eq == NULL && i + 1 < argc && eb_config_option_takes_value(name, len))
            o->run_argv[o->run_argc++] = argv[++i];
    }
    o->run_argv[o->run_argc] = NULL;
    if (o->model == NULL)
        return usage(err, "edgebench llm needs --model PATH (a decoder ONNX model)%s", "");
    return EB_EXIT_OK;
}

struct llm_ctx {
    const struct eb_llm_env *env;
    struct llm_opts o;
    struct eb_config cfg;
    struct eb_runlog rl;
    struct eb_log log;
    struct eb_llm_result res;
    struct eb_model_summary *summary;
    struct eb_model_llm_facts facts;
    int has_facts;
    int64_t *ids;
    struct eb_backend *be;
    struct eb_model_info info;
    struct eb_llm_io io;
    struct eb_backend_probe probe;
    char backend_reason[256];
    int show_progress;
    uint64_t t_start;
    struct eb_cupti *gpu; /* --trace on cuda: the kernels (owned) */
};

/* The prompt: the --prompt_ids file's ids, else a seeded sequence below `vocab`. */
static enum eb_status make_prompt(struct llm_ctx *c, int64_t vocab, struct eb_diag *diag)
{
    struct llm_opts *o = &c->o;
    if (o->prompt_ids == NULL) {
        c->ids = malloc((size_t)o->prompt * sizeof(int64_t));
        if (c->ids == NULL)
            return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
        uint64_t s = (uint64_t)o->seed;
        for (int64_t i = 0; i < o->prompt; i++)
            c->ids[i] = (int64_t)(eb_splitmix64(&s) % (uint64_t)vocab);
        snprintf(c->res.w.prompt_source, sizeof(c->res.w.prompt_source), "seeded");
        return EB_OK;
    }
    char *text = NULL;
    size_t n = 0;
    enum eb_status st = eb_file_read_text(o->prompt_ids, LLM_IDS_BYTES, &text, diag);
    if (st != EB_OK)
        return st;
    uint64_t file_bytes = 0;
    struct eb_diag hd = {0};
    if (eb_sha256_file(o->prompt_ids, LLM_IDS_BYTES, NULL, c->res.w.prompt_sha256, &file_bytes,
                       &hd) != EB_OK)
        c->res.w.prompt_sha256[0] = '\0'; /* read once already: only a race gets here */
    st = eb_llm_prompt_ids_parse(text, vocab, &c->ids, &n, diag);
    free(text);
    if (st != EB_OK) {
        eb_diag_prefix(diag, "--prompt_ids %s: ", o->prompt_ids);
        return st;
    }
    if (o->prompt_given && (int64_t)n != o->prompt)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "--prompt %lld but --prompt_ids %s holds %zu ids; give one of them",
                            (long long)o->prompt, o->prompt_ids, n);
    o->prompt = (int64_t)n;
    snprintf(c->res.w.prompt_source, sizeof(c->res.w.prompt_source), "%s", o->prompt_ids);
    return EB_OK;
}

/* Whether every id of the --prompt_ids file is below `vocab` (else the reason in diag). */
static int prompt_within(const struct llm_ctx *c, int64_t vocab, struct eb_diag *diag)
{
    for (int64_t i = 0; i < c->o.prompt; i++)
        if (c->ids[i] >= vocab) {
            (void)eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                               "--prompt_ids %s: id %lld (token %lld) is not below the model's "
                               "vocabulary of %lld; give ids from its tokenizer",
                               c->o.prompt_ids, (long long)c->ids[i], (long long)i + 1,
                               (long long)vocab);
            return 0;
        }
    return 1;
}

/* The context: prompt + gen by default, at least that, at most the model's. Exit code or -1. */
static int check_ctx(struct llm_ctx *c, struct eb_diag *diag)
{
    struct llm_opts *o = &c->o;
    const struct eb_llm_model *m = &c->res.model;
    if (o->ctx == 0)
        o->ctx = o->prompt + o->gen;
    if (o->prompt + o->gen > o->ctx) {
        (void)eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                           "--ctx %lld is shorter than --prompt %lld + --gen %lld; give a "
                           "larger --ctx or fewer tokens",
                           (long long)o->ctx, (long long)o->prompt, (long long)o->gen);
        return EB_EXIT_USAGE;
    }
    if (c->has_facts && o->ctx > m->ctx) {
        (void)eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                           "--ctx %lld (prompt + gen by default) is longer than the %d positions "
                           "the model %s was made for; synthesize it with a larger --ctx, or ask "
                           "for fewer tokens",
                           (long long)o->ctx, m->ctx, o->model);
        return EB_EXIT_USAGE;
    }
    return -1;
}

/* The model's facts from its metadata (0: none, a model exported elsewhere), the context, and
 * the budget check. Exit code or -1 to go on. */
static int read_model(struct llm_ctx *c, struct eb_diag *diag)
{
    struct llm_opts *o = &c->o;
    struct eb_llm_model *m = &c->res.model;
    c->summary = malloc(sizeof(*c->summary));
    if (c->summary == NULL) {
        (void)eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
        return EB_EXIT_NOTHING_RAN;
    }
    if (eb_model_summarize_file(o->model, c->summary, diag) != EB_OK)
        return EB_EXIT_USAGE;
    c->has_facts = eb_model_llm_facts(c->summary, 0, &c->facts, diag);
    if (c->has_facts < 0) {
        eb_diag_prefix(diag, "%s: ", o->model);
        return EB_EXIT_USAGE;
    }
    snprintf(m->path, sizeof(m->path), "%s", o->model);
    if (c->has_facts) {
        const struct eb_model_llm_config *k = &c->facts.cfg;
        snprintf(m->arch, sizeof(m->arch), "%s", eb_model_llm_arch_name(k->arch));
        snprintf(m->size, sizeof(m->size), "%s", k->size);
        m->elem_bytes = c->facts.elem_bytes;
        snprintf(m->dtype, sizeof(m->dtype), "%s", m->elem_bytes == 2 ? "fp16" : "fp32");
        m->layers = k->layers;
        m->hidden = k->hidden;
        m->heads = k->heads;
        m->kv_heads = k->kv_heads;
        m->head_dim = k->head_dim;
        m->vocab = k->vocab;
        m->ctx = k->ctx;
        m->params = c->facts.params;
        m->matmul_params = c->facts.matmul_params;
        m->weight_bytes = c->facts.weight_bytes;
        m->kv_bytes_per_token = c->facts.kv_bytes_per_token;
    }
    return o->prompt_ids != NULL ? -1 : check_ctx(c, diag); /* else once the file is read */
    return -1;
}

/* The progress line after each repetition. */
static void rep_done(void *ctx, int64_t rep, int warmup)
{
    struct llm_ctx *c = ctx;
    char line[160];
    snprintf(line, sizeof(line), "llm: %s repetition %lld of %lld done, %.1f s",
             warmup ? "warm-up" : "measured", (long long)rep + 1,
             (long long)(warmup ? c->o.warmup : c->o.reps),
             (double)(eb_clock_ns() - c->t_start) / 1e9);
    if (c->show_progress)
        eb_runlog_progress(&c->rl, line);
    else
        eb_log_msg(&c->log, EB_LOG_DEBUG, "%s", line);
}

static int compute_elem(const struct llm_ctx *c);

/* The cache bytes a token adds and the weights' bytes, as computed (r->elem_bytes). */
static uint64_t kv_per_token(const struct eb_llm_result *r)
{
    const struct eb_llm_model *m = &r->model;
    return m->elem_bytes > 0
               ? m->kv_bytes_per_token / (uint64_t)m->elem_bytes * (uint64_t)r->elem_bytes
               : 0;
}

static uint64_t weight_bytes(const struct eb_llm_result *r)
{
    return r->model.params * (uint64_t)r->elem_bytes;
}

/* The FLOPs and bytes behind MFU and bandwidth, and the device's peaks. */
static void derive(struct llm_ctx *c)
{
    struct eb_llm_result *r = &c->res;
    r->elem_bytes = compute_elem(c);
    const struct eb_llm_model *m = &r->model;
    if (c->has_facts) {
        const struct eb_model_llm_config *k = &c->facts.cfg;
        double flops = 0.0, bytes = 0.0;
        r->prefill_flops = eb_model_llm_prefill_flops(k, r->w.prompt);
        for (int64_t j = 0; j < r->w.gen; j++) {
            const int64_t kv = r->w.prompt + j + 1; /* the cache the step attends to */
            flops += eb_model_llm_decode_flops(k, kv);
            bytes +=
                (double)m->matmul_params * r->elem_bytes + (double)kv_per_token(r) * (double)kv;
        }
        r->decode_flops = flops / (double)r->w.gen;
        r->decode_bytes = bytes / (double)r->w.gen;
        r->kv_bytes_final = kv_per_token(r) * (uint64_t)(r->w.prompt + r->w.gen);
    }
    const struct eb_backend_device_info *d = &c->info.device;
    enum eb_peak_precision pp = strcmp(r->precision, "fp16") == 0 ? EB_PEAK_FP16 : EB_PEAK_FP32;
    const struct eb_peak_entry *e = NULL;
    if (!(d->reported && d->device == EB_DEVICE_CUDA))
        snprintf(r->peak_why, sizeof(r->peak_why),
                 "the CPU has no entry in the peak table: MFU and bandwidth use are not computed");
    else if ((e = eb_peak_find(d->name, d->sms, d->total_bytes, d->clock_khz / 1000.0)) == NULL)
        snprintf(r->peak_why, sizeof(r->peak_why), "unknown device %.60s: no peak in the table",
                 d->name);
    if (e != NULL) {
        snprintf(r->peak_name, sizeof(r->peak_name), "%s", e->name);
        r->peak_tflops = e->tflops[pp];
        r->peak_gbs = e->mem_gbs;
    }
    if (!c->has_facts)
        snprintf(r->peak_why, sizeof(r->peak_why),
                 "the model carries no edgebench.llm metadata: its FLOPs and bytes per token "
                 "are not known");
}

/* Loads the model on the chosen backend and binds its tensors. Exit code or -1. */
static int load(struct llm_ctx *c, struct eb_diag *diag)
{
    struct eb_llm_result *r = &c->res;
    struct eb_slot_setup su;
    memset(&su, 0, sizeof(su));
    eb_run_model_setup(&c->cfg, &c->log, &su);
    /* What it computes in: --precision, else the model's dtype. */
    snprintf(r->precision, sizeof(r->precision), "%s",
             c->o.precision ? c->o.precision
             : c->has_facts ? r->model.dtype
                            : "");
    su.backend_cfg.precision =
        strcmp(r->precision, "fp16") == 0 ? EB_ENGINE_PRECISION_FP16 : EB_ENGINE_PRECISION_FP32;
    struct eb_model_spec spec = {.path = c->o.model};
    const struct eb_backend_ops *ops = NULL;
    if (eb_backend_choose(su.backend_choice, &su.backend_cfg, &spec, &ops, c->backend_reason,
                          sizeof(c->backend_reason), diag) != EB_OK)
        return EB_EXIT_NOTHING_RAN;
    snprintf(r->backend, sizeof(r->backend), "%s", ops->name);
    snprintf(r->backend_reason, sizeof(r->backend_reason), "%s", c->backend_reason);
    if (strcmp(ops->name, "ort") == 0 && c->has_facts &&
        strcmp(r->precision, r->model.dtype) != 0) {
        (void)eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                           "--precision %s: ONNX Runtime runs the model in its own dtype (%s); "
                           "synthesize it with --dtype %s, or leave --precision out",
                           r->precision, r->model.dtype, r->precision);
        return EB_EXIT_USAGE;
    }
    su.backend_cfg.max_seq = r->w.ctx; /* native: the memory plan holds the context */
    if (c->cfg.profile && !(ops->caps & EB_BACKEND_CAP_OP_PROFILE)) {
        (void)eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                           "--profile: backend %s has no per-operator profile; use --backend "
                           "native or ort",
                           ops->name);
        return EB_EXIT_USAGE;
    }
    if (strcmp(ops->name, "ort") == 0) /* the model's dtype is what ONNX Runtime runs */
        su.backend_cfg.precision = EB_ENGINE_PRECISION_FP32;
    if (ops->probe(&su.backend_cfg, &c->probe, diag) != EB_OK)
        return EB_EXIT_NOTHING_RAN;
    snprintf(r->backend_version, sizeof(r->backend_version), "%s", c->probe.version);
    snprintf(r->backend_library, sizeof(r->backend_library), "%s", c->probe.library);
    if (eb_backend_create(ops, &su.backend_cfg, &c->be, diag) != EB_OK ||
        eb_backend_load(c->be, &spec, &c->info, diag) != EB_OK)
        return EB_EXIT_NOTHING_RAN;
    snprintf(r->provider, sizeof(r->provider), "%s", c->info.provider);
    r->planned_bytes = c->info.budget_bytes_used;
    if (c->info.device.reported)
        snprintf(r->device_name, sizeof(r->device_name), "%s", c->info.device.name);
    if (eb_llm_io_bind(&c->info, &c->io, diag) != EB_OK) {
        eb_diag_prefix(diag, "%s: ", c->o.model);
        return EB_EXIT_USAGE;
    }
    if (c->has_facts && (c->io.layers != r->model.layers || c->io.kv_heads != r->model.kv_heads ||
                         c->io.head_dim != r->model.head_dim)) {
        (void)eb_diag_fail(diag, EB_ERR_FORMAT,
                           "%s: its KV cache inputs (%d layers of %lld x %lld) do not match its "
                           "edgebench.llm metadata (%d layers of %d x %d); synthesize it again",
                           c->o.model, c->io.layers, (long long)c->io.kv_heads,
                           (long long)c->io.head_dim, r->model.layers, r->model.kv_heads,
                           r->model.head_dim);
        return EB_EXIT_USAGE;
    }
    if (!c->has_facts) { /* what the graph says */
        struct eb_llm_model *m = &r->model;
        m->layers = c->io.layers;
        m->kv_heads = (int)c->io.kv_heads;
        m->head_dim = (int)c->io.head_dim;
        m->vocab = (int)c->io.vocab;
        m->elem_bytes = c->io.kv_dtype == EB_DTYPE_F16 ? 2 : 4;
        snprintf(m->dtype, sizeof(m->dtype), "%s", m->elem_bytes == 2 ? "fp16" : "fp32");
        if (r->precision[0] == '\0')
            snprintf(r->precision, sizeof(r->precision), "%s", m->dtype);
        m->params = c->summary->n_params;
        m->weight_bytes = m->params * (uint64_t)m->elem_bytes;
        m->kv_bytes_per_token = 2ull * (uint64_t)m->layers * (uint64_t)m->kv_heads *
                                (uint64_t)m->head_dim * (uint64_t)m->elem_bytes;
    }
    /* The native engine times each node on cuda with an event around it, launched node by node:
     * the profiled run's latencies are not those of a run without --profile (CUDA Graphs). */
    if (c->cfg.profile && c->cfg.device == EB_DEVICE_CUDA && strcmp(r->backend, "native") == 0)
        eb_llm_result_warn(r, "--profile on cuda: every forward ran node by node with an event "
                              "around each node, without the CUDA Graphs of a run without "
                              "--profile; its latencies and tokens/s are the profiled path's "
                              "(slower): run without --profile for those");
    return -1;
}

/* Bytes of an element as computed: --precision, else the model's dtype. */
static int compute_elem(const struct llm_ctx *c)
{
    const char *p = c->o.precision != NULL ? c->o.precision : c->res.model.dtype;
    return strcmp(p, "fp16") == 0 ? 2 : 4;
}

/* The budget: weights and the KV cache at --ctx within the limit, on platform `pf`. Exit code
 * or -1. */
static int check_budget(struct llm_ctx *c, const struct eb_platform *pf, struct eb_diag *diag)
{
    struct eb_llm_result *r = &c->res;
    struct eb_budget b;
    eb_budget_init_here(&b, c->cfg.gpu_mem_limit_bytes, pf->is_jetson);
    r->limit_bytes = b.limit_bytes;
    r->elem_bytes = compute_elem(c);
    r->kv_bytes_ctx = kv_per_token(r) * (uint64_t)r->w.ctx;
    const uint64_t weights = weight_bytes(r), need = weights + r->kv_bytes_ctx;
    if (need > b.limit_bytes) {
        (void)eb_diag_fail(diag, EB_ERR_LIMIT,
                           "needed %.1f MiB for the KV cache at ctx %lld (%.1f MiB) and the "
                           "weights (%.1f MiB), limit %.1f MiB; give a smaller --ctx or a larger "
                           "--gpu_mem_limit_gb",
                           eb_mib(need), (long long)r->w.ctx, eb_mib(r->kv_bytes_ctx),
                           eb_mib(weights), eb_mib(b.limit_bytes));
        return EB_EXIT_NOTHING_RAN;
    }
    return -1;
}

static void judge(struct eb_llm_result *r)
{
    struct eb_validity *v = &r->validity;
    memset(v, 0, sizeof(*v));
    v->evaluated = 1;
    v->valid = 1;
    if (r->failed) {
        eb_validity_add(v, "the model did not run: %.200s", r->message);
        return;
    }
    if (r->reps_done < r->w.reps)
        eb_validity_add(v, "%lld of %lld repetitions measured (interrupted)",
                        (long long)r->reps_done, (long long)r->w.reps);
    if (r->reps_done < EB_LLM_MIN_REPS)
        eb_validity_add(v, "fewer than %d repetitions: no spread over repetitions",
                        EB_LLM_MIN_REPS);
    if (r->tokens_differ)
        eb_validity_add(v, "the repetitions chose different greedy tokens: the backend is not "
                           "deterministic on the same prompt");
}

static enum eb_status fill_history(const void *ctx, const struct eb_env_facts *env,
                                   struct eb_history_run *out, struct eb_diag *diag)
{
    const struct llm_ctx *c = ctx;
    return eb_history_from_llm(&c->res, &c->cfg, env, c->env->version,
                               strcmp(c->res.backend, "ort") == 0 ? c->probe.version : NULL, out,
                               diag);
}

/* Appends the run to the history (--db); a database that cannot be written is a warning. */
static void record_history(struct llm_ctx *c)
{
    struct eb_history_receipt rcpt;
    char why[256];
    if (eb_history_record(c->cfg.db, fill_history, c, &c->log, &rcpt, why, sizeof(why)) != 0) {
        eb_llm_result_warn(&c->res, "history: the run was not recorded: %.200s", why);
        return;
    }
    snprintf(c->res.history_db, sizeof(c->res.history_db), "%s", rcpt.where);
    c->res.history_run_id = rcpt.id;
    snprintf(c->res.history_uuid, sizeof(c->res.history_uuid), "%s", rcpt.uuid);
}

/* --trace: with the model on the cuda device, CUPTI records every kernel from before the load;
 * without CUPTI the trace holds the phases only (one warning says why). */
static void start_cupti(struct llm_ctx *c)
{
    struct eb_trace_result *t = &c->res.trace;
    snprintf(t->gpu, sizeof(t->gpu), "none");
    if (c->cfg.device != EB_DEVICE_CUDA) {
        snprintf(t->gpu_note, sizeof(t->gpu_note), "the model does not run on the cuda device");
        return;
    }
    struct eb_diag d = {0};
    if (eb_cupti_start(NULL, &c->gpu, &d) == EB_OK) {
        eb_log_msg(&c->log, EB_LOG_DEBUG, "--trace: CUPTI %u from %s records the kernels",
                   c->gpu->version, c->gpu->library);
        return;
    }
    c->gpu = NULL;
    snprintf(t->gpu_note, sizeof(t->gpu_note), "%.200s", d.msg);
    eb_log_msg(&c->log, EB_LOG_WARN, "--trace: %s; the trace holds the phases only", d.msg);
}

/* trace.json of the measured repetitions and the top kernels (trace.h), printed unless --quiet;
 * 0, or -1 when the file could not be written (said in the log). */
static int write_trace(struct llm_ctx *c)
{
    struct eb_llm_result *r = &c->res;
    struct eb_trace_result *t = &r->trace;
    struct eb_diag d = {0};
    if (c->gpu != NULL && eb_cupti_stop(c->gpu, &d) != EB_OK) {
        snprintf(t->gpu_note, sizeof(t->gpu_note), "%.200s", d.msg);
        eb_log_msg(&c->log, EB_LOG_WARN, "--trace: %s; kernels may be missing", d.msg);
    }
    if (c->gpu != NULL)
        snprintf(t->gpu, sizeof(t->gpu), "cupti");
    if (eb_trace_write_llm(r->output_dir, r, c->gpu, t, &d) != EB_OK) {
        eb_log_msg(&c->log, EB_LOG_ERROR, "%s", d.msg);
        return -1;
    }
    if (c->gpu != NULL && c->gpu->dropped > 0)
        eb_llm_result_warn(r, "--trace: %llu kernel records were not kept",
                           (unsigned long long)c->gpu->dropped);
    if (!c->cfg.quiet) {
        fprintf(c->env->out, "trace: %s/trace.json\n", r->output_dir);
        if (t->n_top > 0)
            eb_trace_print_kernels(c->env->out, "top kernels by total GPU time (trace):", t->top,
                                   t->n_top);
    }
    return 0;
}

/* Measures; the exit code (the report is written by the caller whatever happened). */
static int measure(struct llm_ctx *c)
{
    struct eb_llm_result *r = &c->res;
    struct eb_diag diag = {0};
    struct eb_platform pf; /* once: the budget's and the sampler's (a Jetson) */
    eb_platform_detect(NULL, &pf);
    int code = read_model(c, &diag);
    /* A --prompt_ids file is read before the load: its length sets the context the backend plans
     * for. Its ids are checked against the vocabulary of the model's metadata, or, without it,
     * against the logits' once the model is loaded. */
    if (code < 0 && c->o.prompt_ids != NULL)
        code = make_prompt(c, c->has_facts ? r->model.vocab : INT64_MAX, &diag) != EB_OK
                   ? EB_EXIT_USAGE
                   : check_ctx(c, &diag);
    if (code < 0) {
        r->w.ctx = c->o.ctx;
        r->w.prompt = c->o.prompt;
        /* A model whose facts are known is checked against the limit before it is loaded. */
        if (c->has_facts)
            code = check_budget(c, &pf, &diag);
    }
    if (code < 0 && c->o.trace)
        start_cupti(c);
    if (code < 0)
        code = load(c, &diag);
    if (code < 0) {
        const int64_t vocab = r->model.vocab > 0 ? r->model.vocab : c->io.vocab;
        if (vocab <= 0) {
            (void)eb_diag_fail(&diag, EB_ERR_FORMAT,
                               "%s: its logits have no fixed vocabulary size and it carries no "
                               "edgebench.llm metadata; edgebench llm cannot draw a prompt",
                               c->o.model);
            code = EB_EXIT_USAGE;
        } else if (c->o.prompt_ids == NULL ? make_prompt(c, vocab, &diag) != EB_OK
                                           : !prompt_within(c, vocab, &diag)) {
            code = EB_EXIT_USAGE;
        } else if (!c->has_facts) {
            r->w.prompt = c->o.prompt;
            r->w.ctx = c->o.ctx;
            code = check_budget(c, &pf, &diag);
        }
    }
    if (code < 0 && eb_llm_result_alloc(r, r->w.reps, r->w.gen) != EB_OK) {
        (void)eb_diag_fail(&diag, EB_ERR_NOMEM, "out of memory");
        code = EB_EXIT_NOTHING_RAN;
    }
    if (code >= 0) {
        r->failed = 1;
        snprintf(r->message, sizeof(r->message), "%s", diag.msg);
        eb_log_msg(&c->log, EB_LOG_ERROR, "%s", diag.msg);
        return code;
    }
    eb_log_msg(&c->log, EB_LOG_INFO,
               "model %s: %s %s %s, %d layers, backend %s %s (%s), provider %s; prompt %lld "
               "(%s), gen %lld, %lld repetitions after %lld warm-up",
               c->o.model, r->model.arch[0] ? r->model.arch : "decoder", r->model.size,
               r->model.dtype, r->model.layers, r->backend, r->backend_version, c->backend_reason,
               r->provider, (long long)r->w.prompt, r->w.prompt_source, (long long)r->w.gen,
               (long long)r->w.reps, (long long)r->w.warmup);

    char path[4200];
    snprintf(path, sizeof(path), "%s/metrics.jsonl", r->output_dir);
    struct eb_sampler *sampler = NULL;
    struct eb_sampler_config sc = {.interval_ns = (uint64_t)c->cfg.interval_ms * 1000000ull,
                                   .metrics_path = path,
                                   .tegrastats_cmd = "tegrastats",
                                   .log = &c->log};
    sc.is_jetson = pf.is_jetson;
    if (eb_sampler_start(&sc, &sampler, &diag) != EB_OK) {
        eb_llm_result_warn(r, "system metrics unavailable: %.200s", diag.msg);
        sampler = NULL;
    }
    struct eb_nvtx nv;
    eb_nvtx_init(&nv, EB_NVTX_DOMAIN_STAGE);
    struct eb_llm_core core = {.be = c->be,
                               .io = &c->io,
                               .prompt_ids = c->ids,
                               .prompt = r->w.prompt,
                               .gen = r->w.gen,
                               .reps = r->w.reps,
                               .warmup = r->w.warmup,
                               .nvtx = &nv,
                               .profile = c->cfg.profile,
                               .stop = c->env->stop,
                               .rep_done = rep_done,
                               .ctx = c};
    c->t_start = eb_clock_ns();
    enum eb_status st = eb_llm_core_run(&core, r, &diag);
    if (c->show_progress)
        eb_runlog_progress(&c->rl, "");
    eb_sampler_stop(sampler, &r->sys);
    if (st == EB_ERR_CANCELLED) {
        r->interrupted = 1;
        code = EB_EXIT_INTERRUPTED;
    } else if (st != EB_OK) {
        r->failed = 1;
        snprintf(r->message, sizeof(r->message), "%s", diag.msg);
        eb_log_msg(&c->log, EB_LOG_ERROR, "%s", diag.msg);
        code = EB_EXIT_NOTHING_RAN;
    } else {
        code = EB_EXIT_OK;
    }
    struct eb_mem_usage mu;
    eb_backend_mem_usage(c->be, &mu);
    if (mu.device_peak_bytes > 0) {
        r->mem_peak_bytes = mu.device_peak_bytes;
        snprintf(r->mem_peak_what, sizeof(r->mem_peak_what), "device");
    } else if (isfinite(r->sys.rss_max_mb)) {
        r->mem_peak_bytes = (uint64_t)(r->sys.rss_max_mb * 1048576.0);
        snprintf(r->mem_peak_what, sizeof(r->mem_peak_what), "process RSS");
    }
    derive(c);
    if (eb_llm_result_summarize(r) != EB_OK)
        eb_llm_result_warn(r, "out of memory: the statistics were not computed");
    return code;
}

int eb_llm_main(int argc, char **argv, const struct eb_llm_env *env)
{
    struct llm_ctx *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return usage(env->err, "out of memory%s", "");
    c->env = env;
    c->o.prompt = EB_LLM_PROMPT_DEFAULT;
    c->o.gen = EB_LLM_GEN_DEFAULT;
    c->o.reps = EB_LLM_REPS_DEFAULT;
    c->o.warmup = EB_LLM_WARMUP_DEFAULT;
    struct eb_llm_result *r = &c->res;
    eb_llm_result_init(r);
    int help = 0, code = parse_opts(argc, argv, &c->o, &help, env->err);
    struct eb_diag diag = {0};
    int run_help = 0, log_ready = 0;
    if (code == EB_EXIT_OK && help) {
        eb_llm_print_help(env->out);
        goto done;
    }
    if (code != EB_EXIT_OK)
        goto done;
    eb_config_defaults(&c->cfg);
    struct eb_log quiet_log = {0};
    if (eb_config_parse(c->o.run_argc, c->o.run_argv, &c->cfg, &run_help, &quiet_log, &diag) !=
        EB_OK) {
        code = usage(env->err, "%s", diag.msg);
        goto done;
    }
    if (c->cfg.device == EB_DEVICE_TENSORRT) {
        code = usage(env->err, "--device tensorrt: edgebench llm runs on cpu or cuda%s", "");
        goto done;
    }
    if (access(c->o.model, R_OK) != 0) {
        char msg[4300];
        snprintf(msg, sizeof(msg),
                 "--model %s: cannot be read; give the path of a decoder ONNX "
                 "file (edgebench model synth --arch llama -o M.onnx makes one)",
                 c->o.model);
        code = usage(env->err, "%s", msg);
        goto done;
    }
    enum eb_log_level lvl = c->cfg.verbose ? EB_LOG_DEBUG
                            : c->cfg.quiet ? EB_LOG_ERROR
                                           : EB_LOG_INFO;
    eb_runlog_init(&c->rl, env->err, lvl);
    c->log = eb_runlog_iface(&c->rl);
    log_ready = 1;
    c->show_progress = !c->cfg.quiet && isatty(fileno(env->err));
    r->version = env->version;
    snprintf(r->command_line, sizeof(r->command_line), "%s", env->command_line);
    const uint64_t wall0 = eb_clock_wall_ns(), t0 = eb_clock_ns();
    eb_clock_iso8601(wall0, r->started_at, sizeof(r->started_at));
    r->w.prompt = c->o.prompt;
    r->w.gen = c->o.gen;
    r->w.reps = c->o.reps;
    r->w.warmup = c->o.warmup;
    r->w.seed = (uint32_t)c->o.seed;
    r->w.target_tps = (double)c->o.target_tps;
    r->w.profile = c->cfg.profile;
    r->threads = (int)c->cfg.threads;
    snprintf(r->device, sizeof(r->device), "%s", eb_device_name((enum eb_device)c->cfg.device));

    char dir[4096], path[4200];
    if (eb_run_make_dir(c->cfg.output, "llm", "--output", dir, sizeof(dir), &diag) != EB_OK) {
        fprintf(env->err, "edgebench: error: %s\n", diag.msg);
        code = EB_EXIT_WRITE_FAILED;
        goto done;
    }
    snprintf(r->output_dir, sizeof(r->output_dir), "%s", dir);
    snprintf(path, sizeof(path), "%s/run.log", dir);
    if (eb_runlog_open_file(&c->rl, path, &diag) != EB_OK) {
        fprintf(env->err, "edgebench: error: %s\n", diag.msg);
        code = EB_EXIT_WRITE_FAILED;
        goto done;
    }
    eb_log_msg(&c->log, EB_LOG_DEBUG, "command line: %s", env->command_line);

    r->trace.on = c->o.trace;
    code = measure(c);
    int lost = c->o.trace && write_trace(c) != 0;
    if (r->precision[0] == '\0' && c->o.precision != NULL)
        snprintf(r->precision, sizeof(r->precision), "%s", c->o.precision);
    {
        struct eb_diag hd = {0};
        if (eb_sha256_file(c->o.model, EB_MODEL_MAX_FILE, env->stop, r->model.sha256,
                           &r->model.file_bytes, &hd) != EB_OK)
            eb_log_msg(&c->log, EB_LOG_DEBUG, "no model fingerprint: %s", hd.msg);
    }
    r->duration_s = (double)(eb_clock_ns() - t0) / 1e9;
    r->exit_code = code;
    judge(r);
    eb_log_msg(&c->log, EB_LOG_INFO, "verdict: %s%s%s", eb_validity_verdict(&r->validity),
               r->validity.n_reasons ? ": " : "",
               r->validity.n_reasons ? r->validity.reasons[0] : "");
    record_history(c);

    struct eb_env_extra extra = {.version = env->version, .command_line = env->command_line};
    if (strcmp(r->backend, "ort") == 0) {
        extra.ort_version = c->probe.version;
        extra.ort_library = c->probe.library;
        extra.ort_providers = c->probe.providers;
    }
    struct eb_diag ed = {0};
    if (eb_report_write_env(dir, &extra, &ed) != EB_OK) {
        eb_log_msg(&c->log, EB_LOG_ERROR, "%s", ed.msg);
        lost = 1;
    }
    int written = 0;
    for (int f = 0; f < EB_LLM_REPORT_FILE_COUNT; f++) {
        struct eb_diag rd = {0};
        if (eb_llm_report_write(r, dir, (enum eb_llm_report_file)f, &rd) == EB_OK) {
            written |= 1 << f;
        } else {
            eb_log_msg(&c->log, EB_LOG_ERROR, "%s", rd.msg);
            lost = 1;
        }
    }
    if (r->reps_done > 0)
        eb_llm_report_bench_table(r, env->out);
    struct eb_diag ld = {0};
    if (eb_runlog_close_file(&c->rl, &ld) != EB_OK) {
        fprintf(env->err, "edgebench: error: %s\n", ld.msg);
        lost = 1;
    }
    for (int f = 0; f < EB_LLM_REPORT_FILE_COUNT; f++)
        if (written & (1 << f)) {
            fprintf(env->out, "report: %s/%s\n", dir,
                    eb_llm_report_file_name((enum eb_llm_report_file)f));
            break;
        }
    if (lost)
        code = EB_EXIT_WRITE_FAILED;
    /* --nsys: the same llm again under Nsight Systems, when this one measured something. */
    if (c->o.nsys && code != EB_EXIT_NOTHING_RAN && code != EB_EXIT_INTERRUPTED &&
        atomic_load(env->stop) == 0) {
        char capture[64];
        snprintf(capture, sizeof(capture), "%s@%s", EB_LLM_MEASURE_RANGE, EB_NVTX_DOMAIN_STAGE);
        const struct eb_nsys_job job = {.subcmd = "llm",
                                        .capture = capture,
                                        .args = c->o.nsys_argv,
                                        .n_args = c->o.nsys_argc,
                                        .dir = dir,
                                        .argv0 = NULL,
                                        .quiet = c->cfg.quiet,
                                        .stop = env->stop,
                                        .console = env->err,
                                        .out = env->out};
        const int nsys_code = eb_profile_nsys(&job, code);
        code = code == EB_EXIT_WRITE_FAILED ? code : nsys_code; /* a lost file comes first */
    }
done:
    if (c->be != NULL)
        eb_backend_destroy(c->be);
    if (log_ready)
        eb_runlog_fini(&c->rl);
    eb_llm_result_fini(r);
    eb_cupti_destroy(c->gpu);
    free(c->summary);
    free(c->ids);
    free(c->o.run_argv);
    free(c->o.nsys_argv);
    free(c);
    return code;
}
