/*
 * The plain-language and reproducibility files of an `edgebench llm` run folder
 * (report_llm.h), beside report.json of kind llm:
 *   summary.md      one page for someone who does not read report.md: what ran, whether decode
 *                   keeps up with --target_tps, memory against the limit, where the time goes,
 *                   the verdict and what it rests on;
 *   inputs.json     what went in: the effective configuration, the model file (path, size,
 *                   SHA-256) and the prompt (seeded, or a --prompt_ids file with its SHA-256);
 *   assumptions.md  what the numbers rest on: the statistics' methods, the validity rules, the
 *                   definitions of the figures (FLOPs, bytes a decode step reads), the peak
 *                   table, and what this run did not measure.
 *
 * Rule (as run's summary.md): no figure in summary.md that report.json does not hold. Each
 * number is a field of struct eb_llm_result that report.json writes, computed as report.json
 * computes it (its `*_mib` and `*_pct` keys) and printed with report.md's decimals. Nothing else
 * is derived here.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eb/json.h"
#include "eb/number.h"
#include "eb/path.h"
#include "harness/report/report.h"
#include "harness/report/report_llm.h"

#define EB_LLM_INPUTS_SCHEMA_VERSION 1

static const char *const k_phase_words[EB_LLM_PHASES] = {"prefill", "decode"};

/* Whether the prompt came from a --prompt_ids file ("" = the run failed before it was made). */
static int prompt_from_file(const struct eb_llm_result *r)
{
    return r->w.prompt_source[0] != '\0' && strcmp(r->w.prompt_source, "seeded") != 0;
}

/* The op type with the most time in phase `p`'s profile and its summed time; NULL when the
 * phase has no node time. As report.json's profile.<phase>.by_op[0]. */
static const char *slowest_op(const struct eb_llm_phase_prof *t, double *ms_out, double *total_out)
{
    const char *best = NULL;
    double best_ms = 0.0, total = 0.0;
    for (size_t i = 0; i < t->n; i++)
        total += t->nodes[i].ms;
    for (size_t i = 0; i < t->n; i++) {
        const char *op = t->nodes[i].op != NULL ? t->nodes[i].op : "?";
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(t->nodes[j].op != NULL ? t->nodes[j].op : "?", op) == 0;
        if (seen)
            continue;
        double ms = 0.0;
        for (size_t j = i; j < t->n; j++)
            if (strcmp(t->nodes[j].op != NULL ? t->nodes[j].op : "?", op) == 0)
                ms += t->nodes[j].ms;
        if (best == NULL || ms > best_ms) {
            best = op;
            best_ms = ms;
        }
    }
    *ms_out = best_ms;
    *total_out = total;
    return total > 0 ? best : NULL;
}

/* ------------------------------------------------------------------------ summary.md */

static void sum_what_ran(const struct eb_llm_result *r, FILE *fp)
{
    const struct eb_llm_model *m = &r->model;
    fputs("## What ran\n\n- Model `", fp);
    eb_report__md_text(fp, eb_path_base(m->path), 1);
    fputs("`", fp);
    if (m->arch[0] != '\0')
        fprintf(fp, " (%s %s, weights in %s, %llu parameters)", m->arch, m->size, m->dtype,
                (unsigned long long)m->params);
    if (r->backend[0] == '\0') {
        fputs(".\n- No backend was loaded", fp);
    } else {
        fputs(".\n- Backend ", fp);
        eb_report__md_text(fp, r->backend, 0);
    }
    if (r->backend_reason[0] != '\0') {
        fputs(" (", fp);
        eb_report__md_text(fp, r->backend_reason, 0);
        fputs(")", fp);
    }
    fputs(" on ", fp);
    eb_report__md_text(fp, r->device, 0);
    if (r->device_name[0] != '\0') {
        fputs(" (", fp);
        eb_report__md_text(fp, r->device_name, 0);
        fputs(")", fp);
    }
    fputs(", computing in ", fp);
    eb_report__md_text(fp, r->precision[0] != '\0' ? r->precision : m->dtype, 0);
    fputs(".\n", fp);
    fprintf(fp,
            "- Each repetition read a prompt of %lld tokens (%s) and then generated %lld tokens "
            "one at a time, each chosen greedily; %lld repetitions were asked after %lld "
            "warm-up.\n",
            (long long)r->w.prompt,
            prompt_from_file(r)             ? "from a file"
            : r->w.prompt_source[0] != '\0' ? "seeded"
                                            : "not made: the run stopped before it",
            (long long)r->w.gen, (long long)r->w.reps, (long long)r->w.warmup);
    if (r->failed) {
        fputs("- **The model did not run**: ", fp);
        eb_report__md_text(fp, r->message, 0);
        fputs(".\n", fp);
    }
    fputs("\n", fp);
}

static void sum_keeps_up(const struct eb_llm_result *r, FILE *fp)
{
    char a[32], b[32], c[32];
    fputs("## Does it keep up?\n\n", fp);
    if (r->reps_done == 0 || !isfinite(r->decode_tps)) {
        fputs("No repetition was measured: nothing to judge.\n\n", fp);
        return;
    }
    if (!(r->w.target_tps > 0)) {
        fprintf(fp,
                "No target rate was set (--target_tps), so keeping up is not judged. Decode "
                "generated %s tokens/s (mean over the repetitions).",
                eb_report__fmtd(a, sizeof(a), r->decode_tps, 1));
    } else {
        const int kept = r->decode_tps >= r->w.target_tps;
        fprintf(fp,
                "Decode generated %s tokens/s (mean over the repetitions) against the %s "
                "tokens/s the application needs. %s",
                eb_report__fmtd(a, sizeof(a), r->decode_tps, 1),
                eb_report__fmtd(b, sizeof(b), r->w.target_tps, 0),
                kept ? "**It keeps up.**" : "**It does not keep up.**");
    }
    fprintf(fp, " The first token came %s ms after the prompt was given (median).\n\n",
            eb_report__fmtd(c, sizeof(c), r->ttft.count > 0 ? r->ttft.p50 : NAN, 3));
}

static void sum_memory(const struct eb_llm_result *r, FILE *fp)
{
    char a[32], b[32], c[32];
    fputs("## Memory\n\n", fp);
    fprintf(fp,
            "The weights (%s MiB as the file stores them, %s) and the KV cache (%s MiB at the "
            "context of %lld tokens the run was sized for) were checked",
            eb_report__fmtd(a, sizeof(a), eb_mib(r->model.weight_bytes), 1),
            r->model.dtype[0] != '\0' ? r->model.dtype : "the file's dtype",
            eb_report__fmtd(b, sizeof(b), eb_mib(r->kv_bytes_ctx), 2), (long long)r->w.ctx);
    if (r->limit_bytes > 0)
        fprintf(fp, " against a limit of %s MiB",
                eb_report__fmtd(c, sizeof(c), eb_mib(r->limit_bytes), 1));
    else
        fputs(" against no limit", fp);
    fputs(".", fp);
    if (r->mem_peak_bytes > 0) {
        fprintf(fp, " The peak measured (%s) was %s MiB", r->mem_peak_what,
                eb_report__fmtd(a, sizeof(a), eb_mib(r->mem_peak_bytes), 1));
        if (r->limit_bytes > 0)
            fputs(r->mem_peak_bytes <= r->limit_bytes ? ": **within the limit**."
                                                      : ": **over the limit**.",
                  fp);
        else
            fputs("; no limit to judge it against.", fp);
    } else {
        fputs(" The peak was not measured.", fp);
    }
    fputs("\n\n", fp);
}

static void sum_bottleneck(const struct eb_llm_result *r, FILE *fp)
{
    char a[32], b[32], c[32];
    fputs("## Where the time goes\n\n", fp);
    if (r->reps_done == 0) {
        fputs("No repetition was measured: nothing to judge.\n\n", fp);
        return;
    }
    fprintf(fp,
            "- The prefill of the %lld-token prompt took %s ms and each of the %lld decode steps "
            "%s ms (medians).\n",
            (long long)r->w.prompt, eb_report__fmtd(a, sizeof(a), r->prefill.p50, 3),
            (long long)r->w.gen, eb_report__fmtd(b, sizeof(b), r->decode.p50, 3));
    if (isfinite(r->bw_util) && isfinite(r->mfu))
        fprintf(fp,
                "- Decode read its weights and cache at %s%% of the device's memory bandwidth; "
                "the prefill used %s%% of its compute peak (MFU). A decode step is bound by "
                "memory: the closer its share is to 100%%, the less there is to gain.\n",
                eb_report__fmtd(a, sizeof(a), 100.0 * r->bw_util, 1),
                eb_report__fmtd(c, sizeof(c), 100.0 * r->mfu, 1));
    else
        fprintf(fp, "- No bandwidth or MFU figure: %s.\n",
                r->peak_why[0] != '\0' ? r->peak_why : "the device has no peak in the table");
    if (!r->profiled) {
        fputs("- No per-operator profile was taken (--profile).\n\n", fp);
        return;
    }
    for (int p = 0; p < EB_LLM_PHASES; p++) {
        double ms = 0.0, total = 0.0;
        const struct eb_llm_phase_prof *t = &r->prof[p];
        const char *op = slowest_op(t, &ms, &total);
        if (op == NULL) {
            fprintf(fp, "- In %s, the profile timed no node.\n", k_phase_words[p]);
            continue;
        }
        const double per = t->runs > 0 ? (double)t->runs : 1.0;
        fprintf(fp, "- In %s, the most time goes to `", k_phase_words[p]);
        eb_report__md_text(fp, op, 1);
        fprintf(fp, "` operations: %s ms a forward, %s%% of the profiled time.\n",
                eb_report__fmtd(a, sizeof(a), ms / per, 4),
                eb_report__fmtd(b, sizeof(b), 100.0 * ms / total, 1));
    }
    fputs("\n", fp);
}

static void sum_verdict(const struct eb_llm_result *r, FILE *fp)
{
    const struct eb_validity *v = &r->validity;
    fputs("## Verdict\n\n", fp);
    if (!v->evaluated) {
        fputs("Not judged.\n\n", fp);
        return;
    }
    if (v->n_reasons == 0) {
        fprintf(fp,
                "**%s**: every check held (at least %d repetitions measured, all of them "
                "asked, the same greedy tokens in each).\n\n",
                eb_validity_verdict(v), EB_LLM_MIN_REPS);
        return;
    }
    eb_report__md_because(fp, v);
}

static void sum_rests_on(const struct eb_llm_result *r, FILE *fp)
{
    char a[32], b[48], c[32];
    fputs("## What this rests on\n\n", fp);
    fprintf(fp, "- %lld repetitions measured, %llu decode steps in all. ", (long long)r->reps_done,
            (unsigned long long)r->decode.count);
    if (r->decode.count > 0) {
        fprintf(fp, "Median decode step %s ms", eb_report__fmtd(a, sizeof(a), r->decode.p50, 3));
        if (r->decode.p50_ci.available)
            fprintf(fp, "; 95%% confidence interval %s ms.\n",
                    eb_report__fmt_ci(b, sizeof(b), &r->decode.p50_ci));
        else
            fputs("; too few steps for a confidence interval of it.\n", fp);
    } else {
        fputs("No decode step to judge.\n", fp);
    }
    if (r->reps_done > 0)
        fprintf(fp, "- Every repetition chose the same tokens: %s.\n",
                r->tokens_differ ? "no" : "yes");
    fprintf(fp, "- The whole run took %s s.\n", eb_report__fmtd(c, sizeof(c), r->duration_s, 1));
    fputs("\nDetails: report.md (for people), report.json (every figure), assumptions.md (the "
          "methods), inputs.json (what went in).\n",
          fp);
}

int eb_llm_report__summary_body(FILE *fp, const void *ctx)
{
    const struct eb_llm_result *r = ctx;
    fputs("# Run summary\n\nedgebench ", fp);
    eb_report__md_text(fp, r->version, 0);
    fputs(", a language model's prefill and decode (`edgebench llm`), started ", fp);
    eb_report__md_text(fp, r->started_at[0] != '\0' ? r->started_at : "at an unknown time", 0);
    fputs(".", fp);
    if (r->interrupted)
        fputs(" **The run was interrupted**: the results cover the repetitions that ended.", fp);
    fputs("\n\n", fp);
    sum_what_ran(r, fp);
    sum_keeps_up(r, fp);
    sum_memory(r, fp);
    sum_bottleneck(r, fp);
    sum_verdict(r, fp);
    sum_rests_on(r, fp);
    return ferror(fp);
}

/* ------------------------------------------------------------------------ inputs.json */

int eb_llm_report__inputs_body(FILE *fp, const void *ctx)
{
    const struct eb_llm_result *r = ctx;
    const struct eb_llm_model *m = &r->model;
    const int file_prompt = prompt_from_file(r);
    struct eb_json_writer w;
    eb_json_writer_init_file(&w, fp, 1);
    eb_json_obj_begin(&w);
    eb_json_kint(&w, "schema_version", EB_LLM_INPUTS_SCHEMA_VERSION);
    eb_json_kstr(&w, "kind", "llm");
    eb_json_kstr(&w, "edgebench_version", r->version);
    eb_json_kstr(&w, "started_at", r->started_at[0] != '\0' ? r->started_at : NULL);
    eb_json_kstr(&w, "command_line", r->command_line[0] != '\0' ? r->command_line : NULL);
    eb_json_key(&w, "config");
    eb_json_obj_begin(&w);
    eb_json_kstr(&w, "model", m->path);
    eb_json_kstr(&w, "backend", r->backend[0] != '\0' ? r->backend : NULL);
    eb_json_kstr(&w, "device", r->device);
    eb_json_kstr(&w, "precision", r->precision[0] != '\0' ? r->precision : NULL);
    eb_json_kint(&w, "threads", r->threads);
    eb_json_kint(&w, "prompt", r->w.prompt);
    eb_json_kint(&w, "gen", r->w.gen);
    eb_json_kint(&w, "reps", r->w.reps);
    eb_json_kint(&w, "warmup", r->w.warmup);
    eb_json_kint(&w, "ctx", r->w.ctx);
    eb_json_kint(&w, "seed", r->w.seed);
    eb_json_kstr(&w, "prompt_ids", file_prompt ? r->w.prompt_source : NULL);
    eb_json_key(&w, "target_tps");
    if (r->w.target_tps > 0)
        eb_json_num(&w, r->w.target_tps);
    else
        eb_json_null(&w);
    eb_json_key(&w, "limit_bytes");
    eb_json_uint(&w, r->limit_bytes);
    eb_json_kbool(&w, "profile", r->w.profile);
    eb_json_obj_end(&w);
    eb_json_key(&w, "model");
    eb_json_obj_begin(&w);
    eb_json_kstr(&w, "path", m->path);
    eb_json_key(&w, "size_bytes");
    if (m->file_bytes > 0)
        eb_json_uint(&w, m->file_bytes);
    else
        eb_json_null(&w);
    eb_json_kstr(&w, "sha256", m->sha256[0] != '\0' ? m->sha256 : NULL);
    eb_json_obj_end(&w);
    eb_json_key(&w, "prompt");
    eb_json_obj_begin(&w);
    eb_json_kstr(&w, "source",
                 file_prompt                     ? "file"
                 : r->w.prompt_source[0] != '\0' ? "seeded"
                                                 : NULL);
    eb_json_kstr(&w, "path", file_prompt ? r->w.prompt_source : NULL);
    eb_json_kstr(&w, "sha256", r->w.prompt_sha256[0] != '\0' ? r->w.prompt_sha256 : NULL);
    eb_json_key(&w, "seed");
    if (file_prompt)
        eb_json_null(&w);
    else
        eb_json_int(&w, r->w.seed);
    eb_json_kint(&w, "tokens", r->w.prompt);
    eb_json_obj_end(&w);
    eb_json_obj_end(&w);
    int bad = eb_json_writer_error(&w);
    eb_json_writer_fini(&w);
    if (bad)
        return -1;
    return fputc('\n', fp) == EOF ? -1 : 0;
}

/* ------------------------------------------------------------------------ assumptions.md */

static void as_validity(FILE *fp)
{
    fprintf(fp, "## Validity rules\n\n"
                "A run is VALID when every rule holds (report.json `validity` lists the ones "
                "that did not):\n\n");
    fprintf(fp, "- the model loaded and ran;\n");
    fprintf(fp, "- every repetition asked (--reps) was measured: not interrupted;\n");
    fprintf(fp, "- at least %d repetitions were measured (fewer give no spread to speak of);\n",
            EB_LLM_MIN_REPS);
    fprintf(fp, "- every repetition chose the same greedy tokens (a deterministic backend on "
                "the same prompt must).\n\n");
}

static void as_definitions(FILE *fp, const struct eb_llm_result *r)
{
    fprintf(fp, "## What the figures are\n\n");
    fprintf(fp,
            "- Time to first token: the prefill's forward and the choice (argmax) of the first "
            "token, per repetition.\n"
            "- A decode step: one token's forward on the KV cache and its argmax. The cache "
            "grows from %lld to %lld positions over a repetition; the steps are timed after the "
            "prompt, as an application decodes (llama-bench's `-pg`, not its `tg` from an empty "
            "context).\n"
            "- Tokens/s: prompt / prefill time and gen / the summed decode steps, per "
            "repetition; mean ± std over the repetitions.\n",
            (long long)r->w.prompt, (long long)(r->w.prompt + r->w.gen - 1));
    fprintf(fp,
            "- Prefill FLOPs: 2 × the MatMul parameters a token (every projection and lm_head; "
            "no embedding lookup, norms or biases), plus QK^T and AV over the causal triangle: "
            "4 × layers × heads × head_dim × n(n+1)/2.\n"
            "- Bytes a decode step reads: every MatMul weight once and the whole KV cache, at "
            "%d bytes an element (the precision the model computes in, %s), averaged over the "
            "steps' cache lengths.\n"
            "- MiB are 2^20 bytes; GB/s and TFLOP/s are 10^9 bytes and 10^12 FLOPs a "
            "second.\n\n",
            r->elem_bytes, r->precision[0] != '\0' ? r->precision : "the model's dtype");
}

static void as_peaks(FILE *fp, const struct eb_llm_result *r)
{
    fprintf(fp, "## Peaks (MFU and bandwidth)\n\n"
                "MFU is the prefill's FLOPs over its mean time and the device's dense peak for "
                "the precision; bandwidth use is a decode step's bytes over its mean time and the "
                "device's peak DRAM bandwidth.\n\n");
    if (r->peak_name[0] != '\0') {
        char gbs[32];
        snprintf(gbs, sizeof(gbs), r->peak_gbs > 0 ? "%g GB/s" : "no DRAM bandwidth known",
                 r->peak_gbs);
        fprintf(fp, "This run: %s, %g TFLOP/s (%s), %s.\n\n", r->peak_name, r->peak_tflops,
                r->precision, gbs);
    } else
        fprintf(fp, "This run has no peak: %s.\n\n",
                r->peak_why[0] != '\0' ? r->peak_why : "the device is not in the table");
    eb_report__md_peak_table(fp);
}

static void as_unmeasured(FILE *fp, const struct eb_llm_result *r)
{
    int any = 0;
    fprintf(fp, "## Not measured in this run\n\n");
    if (r->failed) {
        fprintf(fp, "- Everything: the model did not run (%s).\n", r->message);
        any = 1;
    }
    if (!isfinite(r->mfu) || !isfinite(r->bw_util)) {
        fprintf(fp, "- MFU and bandwidth use: %s.\n",
                r->peak_why[0] != '\0' ? r->peak_why : "no peak for this device");
        any = 1;
    }
    if (!r->profiled) {
        fprintf(fp, "- The per-operator tables of the phases: %s.\n",
                r->w.profile ? "the backend gave no profile (see report.json `warnings`)"
                             : "no --profile");
        any = 1;
    }
    if (!(r->w.target_tps > 0)) {
        fprintf(fp, "- Keeping up: no --target_tps.\n");
        any = 1;
    }
    if (r->planned_bytes == 0) {
        fprintf(fp, "- The backend's planned memory: %s does not say what it holds.\n",
                r->backend[0] != '\0' ? r->backend : "the backend");
        any = 1;
    }
    if (r->mem_peak_bytes == 0) {
        fprintf(fp, "- Peak memory: not sampled.\n");
        any = 1;
    }
    if (!any)
        fprintf(fp, "Everything this run can measure was measured.\n");
}

int eb_llm_report__assumptions_body(FILE *fp, const void *ctx)
{
    const struct eb_llm_result *r = ctx;
    fprintf(fp, "# What the numbers of this run rest on\n\n");
    fprintf(fp,
            "edgebench %s, `edgebench llm` run started %s. The figures are in report.json; the "
            "inputs in inputs.json; the machine in env.json.\n\n",
            r->version != NULL ? r->version : "unknown",
            r->started_at[0] != '\0' ? r->started_at : "at an unknown time");
    eb_report__md_statistics(fp);
    as_validity(fp);
    as_definitions(fp, r);
    as_peaks(fp, r);
    as_unmeasured(fp, r);
    return ferror(fp) ? -1 : 0;
}
