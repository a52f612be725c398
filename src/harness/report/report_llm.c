/*
 * The reports of `edgebench llm` (report_llm.h).
 */
#include "harness/report/report_llm.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "eb/json.h"
#include "eb/number.h"
#include "harness/report/report.h"
#include "harness/report/svg_chart.h"

#define LLM_MAX_FACTS 48

static const char *const k_file_names[EB_LLM_REPORT_FILE_COUNT] = {
    [EB_LLM_REPORT_MD] = "report.md",
    [EB_LLM_REPORT_HTML] = "report.html",
    [EB_LLM_REPORT_SUMMARY] = "summary.md",
    [EB_LLM_REPORT_INPUTS] = "inputs.json",
    [EB_LLM_REPORT_ASSUMPTIONS] = "assumptions.md",
    [EB_LLM_REPORT_JSON] = "report.json"};

const char *eb_llm_report_file_name(enum eb_llm_report_file f)
{
    return (unsigned)f < EB_LLM_REPORT_FILE_COUNT ? k_file_names[f] : "";
}

/* ---- the facts report.md and report.html print ---- */

struct fact {
    const char *section; /* static */
    char label[64];
    char value[600];
};

struct facts {
    struct fact items[LLM_MAX_FACTS];
    int n;
};

static void add(struct facts *f, const char *section, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add(struct facts *f, const char *section, const char *label, const char *fmt, ...)
{
    if (f->n >= LLM_MAX_FACTS)
        return;
    struct fact *x = &f->items[f->n++];
    x->section = section;
    snprintf(x->label, sizeof(x->label), "%s", label);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->value, sizeof(x->value), fmt, ap);
    va_end(ap);
}

/* "12.3 ± 0.4" with `prec` decimals, "n/a" for a NAN mean, no ± for one repetition. */
static const char *pm(char *buf, size_t n, double mean, double std, int prec)
{
    if (!isfinite(mean))
        snprintf(buf, n, "n/a");
    else if (!isfinite(std))
        snprintf(buf, n, "%.*f", prec, mean);
    else
        snprintf(buf, n, "%.*f ± %.*f", prec, mean, prec, std);
    return buf;
}

static const char *pct(char *buf, size_t n, double frac)
{
    if (isfinite(frac))
        snprintf(buf, n, "%.1f%%", 100.0 * frac);
    else
        snprintf(buf, n, "n/a");
    return buf;
}

static void build(const struct eb_llm_result *r, struct facts *f)
{
    const struct eb_llm_model *m = &r->model;
    char a[64], b[64], c[64];
    const char *verdict = eb_validity_verdict(&r->validity);
    f->n = 0;
    add(f, "Run", "Verdict", "%s%s%s", verdict ? verdict : "not judged",
        r->validity.n_reasons ? ": " : "", r->validity.n_reasons ? r->validity.reasons[0] : "");
    for (int i = 1; i < r->validity.n_reasons; i++)
        add(f, "Run", "Also", "%s", r->validity.reasons[i]);
    if (r->failed)
        add(f, "Run", "Error", "%s", r->message);
    if (r->interrupted)
        add(f, "Run", "Interrupted", "the figures cover the %lld repetitions that ended",
            (long long)r->reps_done);
    add(f, "Run", "Started", "%s, %.1f s", r->started_at, r->duration_s);
    if (r->history_run_id > 0)
        add(f, "Run", "History", "run %lld in %s (edgebench history, edgebench diff)",
            (long long)r->history_run_id, r->history_db);
    add(f, "Run", "Workload",
        "prompt %lld tokens (%s), then %lld decode steps; %lld repetitions after %lld warm-up; "
        "context %lld",
        (long long)r->w.prompt, r->w.prompt_source, (long long)r->w.gen, (long long)r->w.reps,
        (long long)r->w.warmup, (long long)r->w.ctx);
    add(f, "Run", "Backend", "%s %s (%s), provider %s, %s%s%s, threads %s", r->backend,
        r->backend_version, r->backend_reason, r->provider[0] ? r->provider : "n/a", r->device,
        r->device_name[0] ? " " : "", r->device_name,
        r->threads > 0 ? (snprintf(a, sizeof(a), "%d", r->threads), a) : "default");

    if (r->trace.on && !r->trace.written)
        add(f, "Run", "Trace", "trace.json could not be written (run.log says why)");
    else if (r->trace.on)
        add(f, "Run", "Trace", "trace.json: %llu decode steps; %s",
            (unsigned long long)r->trace.frames[0],
            r->trace.kernels > 0 ? (snprintf(a, sizeof(a), "%llu kernels, %.3f ms of GPU time",
                                             (unsigned long long)r->trace.kernels, r->trace.gpu_ms),
                                    a)
                                 : r->trace.gpu_note);

    add(f, "Throughput", "Time to first token (p50)", "%s ms",
        r->ttft.count ? (snprintf(a, sizeof(a), "%.3f", r->ttft.p50), a) : "n/a");
    add(f, "Throughput", "Prefill tokens/s", "%s",
        pm(a, sizeof(a), r->prefill_tps, r->prefill_tps_std, 1));
    add(f, "Throughput", "Decode tokens/s", "%s",
        pm(b, sizeof(b), r->decode_tps, r->decode_tps_std, 1));
    add(f, "Throughput", "Decode per token (p50)", "%s ms",
        r->decode.count ? (snprintf(c, sizeof(c), "%.3f", r->decode.p50), c) : "n/a");

    if (isfinite(r->prefill_flops))
        add(f, "Efficiency", "Prefill FLOPs",
            "%.3f GFLOP (the prompt; 2 x matmul parameters a "
            "token + attention over the causal triangle)",
            r->prefill_flops / 1e9);
    add(f, "Efficiency", "Prefill achieved", "%s TFLOP/s",
        isfinite(r->prefill_tflops_s) ? (snprintf(a, sizeof(a), "%.4f", r->prefill_tflops_s), a)
                                      : "n/a");
    add(f, "Efficiency", "Prefill MFU", "%s%s%s%s", pct(a, sizeof(a), r->mfu),
        r->peak_name[0] ? " of " : "", r->peak_name,
        r->peak_tflops > 0
            ? (snprintf(b, sizeof(b), " (%.1f TFLOP/s dense, %s)", r->peak_tflops, r->precision), b)
            : "");
    if (isfinite(r->decode_bytes))
        add(f, "Efficiency", "Decode bytes a step",
            "%.2f MiB (every weight once and the KV cache, mean over the steps)",
            r->decode_bytes / 1048576.0);
    add(f, "Efficiency", "Decode achieved", "%s GB/s",
        isfinite(r->decode_gbs) ? (snprintf(a, sizeof(a), "%.3f", r->decode_gbs), a) : "n/a");
    add(f, "Efficiency", "Decode bandwidth use", "%s%s%s", pct(a, sizeof(a), r->bw_util),
        r->peak_gbs > 0 ? (snprintf(b, sizeof(b), " of %.0f GB/s", r->peak_gbs), b) : "",
        r->peak_why[0] ? "" : "");
    if (r->peak_why[0])
        add(f, "Efficiency", "Why n/a", "%s", r->peak_why);

    if (r->elem_bytes > 0 && r->elem_bytes != m->elem_bytes)
        add(f, "Memory", "Weights", "%.1f MiB computed in %s (%.1f MiB in the file's %s)",
            eb_mib(m->params * (uint64_t)r->elem_bytes), r->precision, eb_mib(m->weight_bytes),
            m->dtype);
    else
        add(f, "Memory", "Weights", "%.1f MiB (%s)", eb_mib(m->weight_bytes), m->dtype);
    add(f, "Memory", "KV cache at the final length", "%.2f MiB (%lld positions, %.1f KiB a token)",
        eb_mib(r->kv_bytes_final), (long long)(r->w.prompt + r->w.gen),
        m->elem_bytes > 0 ? (double)m->kv_bytes_per_token / m->elem_bytes * r->elem_bytes / 1024.0
                          : 0.0);
    add(f, "Memory", "Budget", "weights + KV cache at ctx %lld = %.1f MiB of the %.1f MiB limit",
        (long long)r->w.ctx, eb_mib(m->weight_bytes + r->kv_bytes_ctx), eb_mib(r->limit_bytes));
    if (r->planned_bytes > 0)
        add(f, "Memory", "Planned", "%.1f MiB held against the limit (%s's plan, for ctx %lld)",
            eb_mib(r->planned_bytes), r->backend, (long long)r->w.ctx);
    add(f, "Memory", "Peak", "%s",
        r->mem_peak_bytes
            ? (snprintf(a, sizeof(a), "%.1f MiB (%s)", eb_mib(r->mem_peak_bytes), r->mem_peak_what),
               a)
            : "n/a");

    add(f, "Model", "File", "%s", m->path);
    add(f, "Model", "SHA-256", "%s", m->sha256[0] ? m->sha256 : "n/a");
    if (m->arch[0])
        add(f, "Model", "Architecture",
            "%s %s, %s: %d layers, hidden %d, %d heads (%d KV) of %d, vocabulary %d, context %d",
            m->arch, m->size, m->dtype, m->layers, m->hidden, m->heads, m->kv_heads, m->head_dim,
            m->vocab, m->ctx);
    else /* what its inputs and outputs say */
        add(f, "Model", "Architecture",
            "a decoder without edgebench.llm metadata, %s: %d layers, %d KV heads of %d, "
            "vocabulary %d",
            m->dtype, m->layers, m->kv_heads, m->head_dim, m->vocab);
    add(f, "Model", "Parameters", "%llu", (unsigned long long)m->params);

    if (r->sys.n_samples > 0)
        add(f, "System", "CPU", "%.1f%% average, %.1f%% max; process RSS max %.1f MiB",
            r->sys.cpu_avg_pct, r->sys.cpu_max_pct, r->sys.rss_max_mb);
    for (int i = 0; i < r->n_warnings; i++)
        add(f, "Warnings", "Warning", "%s", r->warnings[i]);
}

/* ---- --profile: the per-operator tables of the phases ---- */

#define LLM_PROF_OPS 64 /* op types kept apart; the rest are summed as "other" */
#define LLM_PROF_TOP 15 /* slowest nodes listed */

static const char *const k_phase_names[EB_LLM_PHASES] = {"prefill", "decode"};

struct op_row {
    const char *op;
    double ms;
    size_t nodes;
};

/* The phase's time by op type, slowest first; returns the row count. */
static size_t by_op(const struct eb_llm_phase_prof *t, struct op_row *rows)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const char *op = t->nodes[i].op != NULL ? t->nodes[i].op : "?";
        size_t k = 0;
        while (k < n && strcmp(rows[k].op, op) != 0)
            k++;
        if (k == n) {
            if (n == LLM_PROF_OPS)
                k = n - 1, rows[k].op = "other";
            else
                rows[n++] = (struct op_row){.op = op};
        }
        rows[k].ms += t->nodes[i].ms;
        rows[k].nodes++;
    }
    for (size_t i = 1; i < n; i++) /* insertion sort by time, descending */
        for (size_t j = i; j > 0 && rows[j].ms > rows[j - 1].ms; j--) {
            struct op_row x = rows[j];
            rows[j] = rows[j - 1];
            rows[j - 1] = x;
        }
    return n;
}

/* The indices of the `k` slowest nodes, slowest first; returns how many. */
static size_t top_nodes(const struct eb_llm_phase_prof *t, size_t *idx, size_t k)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = n < k ? n++ : k;
        if (j == k && t->nodes[i].ms <= t->nodes[idx[k - 1]].ms)
            continue;
        if (j == k)
            j = k - 1;
        while (j > 0 && t->nodes[idx[j - 1]].ms < t->nodes[i].ms) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
    return n;
}

static double nodes_ms(const struct eb_llm_phase_prof *t)
{
    double s = 0.0;
    for (size_t i = 0; i < t->n; i++)
        s += t->nodes[i].ms;
    return s;
}

/* The latency rows: label, summary. */
static int latency_rows(const struct eb_llm_result *r, const char **labels,
                        const struct eb_stat_summary **s)
{
    labels[0] = "time to first token";
    s[0] = &r->ttft;
    labels[1] = "prefill (forward)";
    s[1] = &r->prefill;
    labels[2] = "decode, per token";
    s[2] = &r->decode;
    return 3;
}

void eb_llm_report_bench_table(const struct eb_llm_result *r, FILE *fp)
{
    const struct eb_llm_model *m = &r->model;
    char a[64], b[64], pp[32], tg[32];
    snprintf(pp, sizeof(pp), "pp%lld", (long long)r->w.prompt);
    snprintf(tg, sizeof(tg), "tg%lld", (long long)r->w.gen);
    fprintf(fp, "| model | size | params | backend | threads | test | t/s |\n"
                "| --- | ---: | ---: | --- | ---: | --- | ---: |\n");
    for (int row = 0; row < 2; row++) {
        fprintf(fp, "| %s%s%s %s | %.2f MiB | %.2f M | %s %s | %s | %s | %s |\n",
                m->arch[0] ? m->arch : "decoder", m->size[0] ? " " : "", m->size, m->dtype,
                eb_mib(m->weight_bytes), (double)m->params / 1e6, r->backend, r->device,
                r->threads > 0 ? (snprintf(a, sizeof(a), "%d", r->threads), a) : "default",
                row == 0 ? pp : tg,
                row == 0 ? pm(b, sizeof(b), r->prefill_tps, r->prefill_tps_std, 2)
                         : pm(b, sizeof(b), r->decode_tps, r->decode_tps_std, 2));
    }
}

static void print_profile(FILE *fp, const struct eb_llm_result *r, enum eb_llm_phase p, int html);

/* ---- report.md ---- */

static int md_body(FILE *fp, const void *ctx)
{
    const struct eb_llm_result *r = ctx;
    struct facts *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return 1;
    build(r, f);
    fprintf(fp, "# edgebench llm report\n\nedgebench %s · report.json schema %d (kind llm)\n",
            r->version ? r->version : "", EB_LLM_REPORT_SCHEMA_VERSION);
    const char *section = NULL;
    for (int i = 0; i < f->n; i++) {
        if (section == NULL || strcmp(section, f->items[i].section) != 0) {
            section = f->items[i].section;
            fprintf(fp, "\n## %s\n\n| | |\n| --- | --- |\n", section);
        }
        fputs("| ", fp);
        eb_report__md_text(fp, f->items[i].label, 0);
        fputs(" | ", fp);
        eb_report__md_text(fp, f->items[i].value, 0);
        fputs(" |\n", fp);
        if (strcmp(section, "Run") == 0 &&
            (i + 1 == f->n || strcmp(f->items[i + 1].section, "Run") != 0) && r->reps_done > 0) {
            fputs("\n## llama-bench\n\n", fp);
            eb_llm_report_bench_table(r, fp);
            section = "llama-bench";
        }
    }
    const char *labels[3];
    const struct eb_stat_summary *s[3];
    int n = latency_rows(r, labels, s);
    fprintf(fp, "\n## Latency (ms)\n\n| | n | mean | std | p50 [95%% CI] | p90 | p99 [95%% CI] | "
                "max |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (int i = 0; i < n; i++) {
        char c50[64], c99[64];
        if (s[i]->count == 0) {
            fprintf(fp, "| %s | 0 | | | | | | |\n", labels[i]);
            continue;
        }
        fprintf(fp, "| %s | %llu | %.3f | %.3f | %.3f %s | %.3f | %.3f %s | %.3f |\n", labels[i],
                (unsigned long long)s[i]->count, s[i]->mean, s[i]->std, s[i]->p50,
                eb_report__fmt_ci(c50, sizeof(c50), &s[i]->p50_ci), s[i]->p90, s[i]->p99,
                eb_report__fmt_ci(c99, sizeof(c99), &s[i]->p99_ci), s[i]->max);
    }
    fprintf(fp,
            "\nTime to first token = the prefill's forward and the choice of the first token; "
            "a decode step = one token's forward on the cache and its argmax. CIs: %s "
            "(n/a where the sample is too small: p50 needs 6, p99 368).\n",
            EB_STAT_CI_METHOD);
    if (r->profiled) {
        fputs("\n## Per-operator profile\n", fp);
        for (int p = 0; p < EB_LLM_PHASES; p++)
            print_profile(fp, r, (enum eb_llm_phase)p, 0);
    }
    free(f);
    return ferror(fp);
}

/* ---- report.html ---- */

static void put(FILE *fp, const char *s)
{
    eb_svg_put_escaped(fp, s);
}

/* One phase's profile as Markdown (`html` 0) or HTML tables. */
static void print_profile(FILE *fp, const struct eb_llm_result *r, enum eb_llm_phase p, int html)
{
    const struct eb_llm_phase_prof *t = &r->prof[p];
    struct op_row rows[LLM_PROF_OPS];
    size_t idx[LLM_PROF_TOP];
    const double total = nodes_ms(t), per = t->runs > 0 ? (double)t->runs : 1.0;
    const size_t n = by_op(t, rows), k = top_nodes(t, idx, LLM_PROF_TOP);
    char head[256];
    snprintf(head, sizeof(head),
             "%s: %llu forwards, %.3f ms each; the nodes' times add up to %.1f%% of them (the "
             "rest is the runtime between nodes)",
             k_phase_names[p], (unsigned long long)t->runs, t->forward_ms / per,
             t->forward_ms > 0 ? 100.0 * total / t->forward_ms : 0.0);
    if (html) {
        fputs("<h3>", fp);
        put(fp, head);
        fputs("</h3>\n<table><thead><tr><th>op</th><th>nodes</th><th>ms a forward</th>"
              "<th>share</th></tr></thead><tbody>\n",
              fp);
    } else {
        fprintf(fp,
                "\n### %s\n\n| op | nodes | ms a forward | share |\n| --- | ---: | ---: | ---: |\n",
                head);
    }
    for (size_t i = 0; i < n; i++) {
        const double share = total > 0 ? 100.0 * rows[i].ms / total : 0.0;
        if (html) {
            fputs("<tr><td>", fp);
            put(fp, rows[i].op);
            fprintf(fp, "</td><td>%zu</td><td>%.4f</td><td>%.1f%%</td></tr>\n", rows[i].nodes,
                    rows[i].ms / per, share);
        } else {
            fputs("| ", fp);
            eb_report__md_text(fp, rows[i].op, 0);
            fprintf(fp, " | %zu | %.4f | %.1f%% |\n", rows[i].nodes, rows[i].ms / per, share);
        }
    }
    if (html)
        fputs("</tbody></table>\n<table><thead><tr><th>slowest nodes</th><th>op</th>"
              "<th>ms a forward</th><th>share</th></tr></thead><tbody>\n",
              fp);
    else
        fputs("\n| slowest nodes | op | ms a forward | share |\n| --- | --- | ---: | ---: |\n", fp);
    for (size_t i = 0; i < k; i++) {
        const struct eb_llm_prof_node *x = &t->nodes[idx[i]];
        const double share = total > 0 ? 100.0 * x->ms / total : 0.0;
        if (html) {
            fputs("<tr><td>", fp);
            put(fp, x->name);
            fputs("</td><td>", fp);
            put(fp, x->op);
            fprintf(fp, "</td><td>%.4f</td><td>%.1f%%</td></tr>\n", x->ms / per, share);
        } else {
            fputs("| ", fp);
            eb_report__md_text(fp, x->name, 1);
            fputs(" | ", fp);
            eb_report__md_text(fp, x->op, 0);
            fprintf(fp, " | %.4f | %.1f%% |\n", x->ms / per, share);
        }
    }
    if (html)
        fputs("</tbody></table>\n", fp);
}

static int html_body(FILE *fp, const void *ctx)
{
    const struct eb_llm_result *r = ctx;
    struct facts *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return 1;
    build(r, f);
    eb_svg_page_begin(fp);
    fputs("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"edgebench ",
          fp);
    put(fp, r->version);
    fputs("\">\n<title>edgebench llm: ", fp);
    put(fp, r->model.path);
    fprintf(fp, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>edgebench llm</h1>\n",
            eb_report__css);
    const char *section = NULL;
    for (int i = 0; i < f->n; i++) {
        if (section == NULL || strcmp(section, f->items[i].section) != 0) {
            if (section != NULL)
                fputs("</tbody></table>\n", fp);
            section = f->items[i].section;
            fputs("<h2>", fp);
            put(fp, section);
            fputs("</h2>\n<table><tbody>\n", fp);
        }
        fputs("<tr><th>", fp);
        put(fp, f->items[i].label);
        fputs("</th><td>", fp);
        put(fp, f->items[i].value);
        fputs("</td></tr>\n", fp);
    }
    if (section != NULL)
        fputs("</tbody></table>\n", fp);
    const char *labels[3];
    const struct eb_stat_summary *s[3];
    int n = latency_rows(r, labels, s);
    fputs("<h2>Latency (ms)</h2>\n<table><thead><tr><th></th><th>n</th><th>mean</th><th>std</th>"
          "<th>p50 [95% CI]</th><th>p90</th><th>p99 [95% CI]</th><th>max</th></tr></thead>"
          "<tbody>\n",
          fp);
    for (int i = 0; i < n; i++) {
        char c50[64], c99[64];
        fprintf(fp, "<tr><th>%s</th><td>%llu</td>", labels[i], (unsigned long long)s[i]->count);
        if (s[i]->count > 0)
            fprintf(fp,
                    "<td>%.3f</td><td>%.3f</td><td>%.3f %s</td><td>%.3f</td><td>%.3f %s</td>"
                    "<td>%.3f</td>",
                    s[i]->mean, s[i]->std, s[i]->p50,
                    eb_report__fmt_ci(c50, sizeof(c50), &s[i]->p50_ci), s[i]->p90, s[i]->p99,
                    eb_report__fmt_ci(c99, sizeof(c99), &s[i]->p99_ci), s[i]->max);
        else
            fputs("<td colspan=\"6\">not measured</td>", fp);
        fputs("</tr>\n", fp);
    }
    fputs("</tbody></table>\n", fp);
    if (r->profiled) {
        fputs("<h2>Per-operator profile</h2>\n", fp);
        for (int p = 0; p < EB_LLM_PHASES; p++)
            print_profile(fp, r, (enum eb_llm_phase)p, 1);
    }
    /* Decode step latency against the cache length: the mean over repetitions of each step. */
    const int64_t gen = r->w.gen, reps = r->reps_done;
    double *x = reps > 0 ? malloc((size_t)gen * sizeof(double)) : NULL;
    double *y = reps > 0 ? malloc((size_t)gen * sizeof(double)) : NULL;
    if (x != NULL && y != NULL) {
        for (int64_t j = 0; j < gen; j++) {
            double sum = 0.0;
            for (int64_t i = 0; i < reps; i++)
                sum += (double)r->decode_ns[i * gen + j] / 1e6;
            x[j] = (double)(r->w.prompt + j + 1);
            y[j] = sum / (double)reps;
        }
        struct eb_svg_series ser = {.name = "decode step", .x = x, .y = y, .n = (size_t)gen};
        struct eb_svg_chart ch = {.id = "decode",
                                  .title = "Decode step latency against the KV cache length",
                                  .subtitle = "mean over the measured repetitions",
                                  .x_label = "positions in the cache (tokens)",
                                  .y_label = "latency (ms)",
                                  .y_include_zero = 1};
        if (eb_svg_line_chart(fp, &ch, &ser, 1) != EB_OK) {
            free(x);
            free(y);
            free(f);
            return 1;
        }
    }
    free(x);
    free(y);
    fputs("</body>\n</html>\n", fp);
    free(f);
    return ferror(fp);
}

/* ---- report.json ---- */

static void knum_or_null(struct eb_json_writer *w, const char *key, double v)
{
    if (isfinite(v))
        eb_json_knum(w, key, v);
    else {
        eb_json_key(w, key);
        eb_json_null(w);
    }
}

static void kuint(struct eb_json_writer *w, const char *key, uint64_t v)
{
    eb_json_key(w, key);
    eb_json_uint(w, v);
}

static void kstr_or_null(struct eb_json_writer *w, const char *key, const char *s)
{
    eb_json_kstr(w, key, s != NULL && s[0] != '\0' ? s : NULL);
}

static void mean_std(struct eb_json_writer *w, const char *key, double mean, double std)
{
    eb_json_key(w, key);
    eb_json_obj_begin(w);
    knum_or_null(w, "mean", mean);
    knum_or_null(w, "std", std);
    eb_json_obj_end(w);
}

static void write_profile(struct eb_json_writer *w, const struct eb_llm_phase_prof *t,
                          const char *key)
{
    struct op_row rows[LLM_PROF_OPS];
    size_t idx[LLM_PROF_TOP];
    const double total = nodes_ms(t), per = t->runs > 0 ? (double)t->runs : 1.0;
    const size_t n = by_op(t, rows), k = top_nodes(t, idx, LLM_PROF_TOP);
    eb_json_key(w, key);
    eb_json_obj_begin(w);
    kuint(w, "runs", t->runs);
    eb_json_knum(w, "forward_ms", t->forward_ms);
    eb_json_knum(w, "nodes_ms", total);
    knum_or_null(w, "coverage", t->forward_ms > 0 ? total / t->forward_ms : NAN);
    eb_json_key(w, "by_op");
    eb_json_arr_begin(w);
    for (size_t i = 0; i < n; i++) {
        eb_json_obj_begin(w);
        eb_json_kstr(w, "op", rows[i].op);
        kuint(w, "nodes", rows[i].nodes);
        eb_json_knum(w, "ms_per_run", rows[i].ms / per);
        knum_or_null(w, "share", total > 0 ? rows[i].ms / total : NAN);
        knum_or_null(w, "pct", total > 0 ? 100.0 * rows[i].ms / total : NAN);
        eb_json_obj_end(w);
    }
    eb_json_arr_end(w);
    eb_json_key(w, "top_nodes");
    eb_json_arr_begin(w);
    for (size_t i = 0; i < k; i++) {
        const struct eb_llm_prof_node *x = &t->nodes[idx[i]];
        eb_json_obj_begin(w);
        eb_json_kstr(w, "name", x->name);
        eb_json_kstr(w, "op", x->op);
        kstr_or_null(w, "fused", x->fused);
        eb_json_knum(w, "ms_per_run", x->ms / per);
        knum_or_null(w, "share", total > 0 ? x->ms / total : NAN);
        eb_json_obj_end(w);
    }
    eb_json_arr_end(w);
    eb_json_obj_end(w);
}

static int json_body(FILE *fp, const void *ctx)
{
    const struct eb_llm_result *r = ctx;
    const struct eb_llm_model *m = &r->model;
    struct eb_json_writer jw, *w = &jw;
    eb_json_writer_init_file(w, fp, 1);
    eb_json_obj_begin(w);
    eb_json_kint(w, "schema_version", EB_LLM_REPORT_SCHEMA_VERSION);
    eb_json_kstr(w, "kind", "llm");
    eb_json_kstr(w, "edgebench_version", r->version);
    eb_json_kstr(w, "started_at", r->started_at);
    eb_json_knum(w, "duration_s", r->duration_s);
    eb_json_kstr(w, "command_line", r->command_line);
    eb_json_kint(w, "exit_code", r->exit_code);
    eb_json_kbool(w, "interrupted", r->interrupted);
    eb_json_kstr(w, "status", r->failed ? "failed" : "ok");
    kstr_or_null(w, "message", r->message);
    eb_report__write_history(w, r->history_db, r->history_run_id, r->history_uuid);

    eb_json_key(w, "model");
    eb_json_obj_begin(w);
    eb_json_kstr(w, "path", m->path);
    kstr_or_null(w, "sha256", m->sha256);
    kuint(w, "file_bytes", m->file_bytes);
    kstr_or_null(w, "arch", m->arch);
    kstr_or_null(w, "size", m->size);
    kstr_or_null(w, "dtype", m->dtype);
    eb_json_kint(w, "layers", m->layers);
    eb_json_kint(w, "hidden", m->hidden);
    eb_json_kint(w, "heads", m->heads);
    eb_json_kint(w, "kv_heads", m->kv_heads);
    eb_json_kint(w, "head_dim", m->head_dim);
    eb_json_kint(w, "vocab", m->vocab);
    eb_json_kint(w, "ctx", m->ctx);
    kuint(w, "params", m->params);
    kuint(w, "weight_bytes", m->weight_bytes);
    kuint(w, "kv_bytes_per_token", m->kv_bytes_per_token);
    eb_json_obj_end(w);

    eb_json_key(w, "workload");
    eb_json_obj_begin(w);
    eb_json_kint(w, "prompt", r->w.prompt);
    eb_json_kint(w, "gen", r->w.gen);
    eb_json_kint(w, "reps", r->w.reps);
    eb_json_kint(w, "warmup", r->w.warmup);
    eb_json_kint(w, "ctx", r->w.ctx);
    eb_json_kint(w, "seed", r->w.seed);
    eb_json_kstr(w, "prompt_source", r->w.prompt_source);
    kstr_or_null(w, "prompt_sha256", r->w.prompt_sha256);
    knum_or_null(w, "target_tps", r->w.target_tps > 0 ? r->w.target_tps : NAN);
    eb_json_kint(w, "reps_measured", r->reps_done);
    eb_json_obj_end(w);

    eb_json_key(w, "backend");
    eb_json_obj_begin(w);
    eb_json_kstr(w, "name", r->backend);
    kstr_or_null(w, "version", r->backend_version);
    kstr_or_null(w, "reason", r->backend_reason);
    eb_json_kstr(w, "device", r->device);
    kstr_or_null(w, "device_name", r->device_name);
    kstr_or_null(w, "provider", r->provider);
    kstr_or_null(w, "precision", r->precision);
    eb_json_kint(w, "threads", r->threads);
    eb_json_kint(w, "elem_bytes", r->elem_bytes);
    eb_json_obj_end(w);

    eb_report__write_stats(w, "ttft_ms", &r->ttft);
    eb_report__write_stats(w, "prefill_ms", &r->prefill);
    eb_report__write_stats(w, "decode_token_ms", &r->decode);
    mean_std(w, "prefill_tokens_per_s", r->prefill_tps, r->prefill_tps_std);
    mean_std(w, "decode_tokens_per_s", r->decode_tps, r->decode_tps_std);

    eb_json_key(w, "llama_bench");
    eb_json_arr_begin(w);
    for (int row = 0; row < 2 && r->reps_done > 0; row++) {
        char test[32];
        snprintf(test, sizeof(test), "%s%lld", row == 0 ? "pp" : "tg",
                 (long long)(row == 0 ? r->w.prompt : r->w.gen));
        eb_json_obj_begin(w);
        eb_json_kstr(w, "test", test);
        knum_or_null(w, "t_s", row == 0 ? r->prefill_tps : r->decode_tps);
        knum_or_null(w, "std", row == 0 ? r->prefill_tps_std : r->decode_tps_std);
        eb_json_obj_end(w);
    }
    eb_json_arr_end(w);

    eb_json_key(w, "tokens");
    eb_json_arr_begin(w);
    for (int64_t j = 0; j < r->w.gen && r->reps_done > 0; j++)
        eb_json_int(w, r->tokens[j]);
    eb_json_arr_end(w);
    eb_json_kbool(w, "tokens_consistent", r->reps_done > 0 && !r->tokens_differ);

    eb_json_key(w, "efficiency");
    eb_json_obj_begin(w);
    knum_or_null(w, "prefill_flops", r->prefill_flops);
    knum_or_null(w, "prefill_tflops_s", r->prefill_tflops_s);
    knum_or_null(w, "mfu", r->mfu);
    knum_or_null(w, "mfu_pct", 100.0 * r->mfu);
    knum_or_null(w, "decode_flops_per_token", r->decode_flops);
    knum_or_null(w, "decode_bytes_per_token", r->decode_bytes);
    knum_or_null(w, "decode_gbs", r->decode_gbs);
    knum_or_null(w, "bandwidth_util", r->bw_util);
    knum_or_null(w, "bandwidth_util_pct", 100.0 * r->bw_util);
    kstr_or_null(w, "peak_device", r->peak_name);
    knum_or_null(w, "peak_tflops", r->peak_tflops > 0 ? r->peak_tflops : NAN);
    knum_or_null(w, "peak_gbs", r->peak_gbs > 0 ? r->peak_gbs : NAN);
    kstr_or_null(w, "why_not", r->peak_why);
    eb_json_obj_end(w);

    eb_json_key(w, "memory");
    eb_json_obj_begin(w);
    kuint(w, "weight_bytes", m->weight_bytes);
    kuint(w, "kv_bytes_final", r->kv_bytes_final);
    kuint(w, "kv_bytes_ctx", r->kv_bytes_ctx);
    kuint(w, "limit_bytes", r->limit_bytes);
    if (r->planned_bytes > 0)
        kuint(w, "planned_bytes", r->planned_bytes);
    else {
        eb_json_key(w, "planned_bytes");
        eb_json_null(w);
    }
    if (r->mem_peak_bytes > 0)
        kuint(w, "peak_bytes", r->mem_peak_bytes);
    else {
        eb_json_key(w, "peak_bytes");
        eb_json_null(w);
    }
    kstr_or_null(w, "peak_of", r->mem_peak_what);
    /* The same in MiB (2^20 bytes), as report.md and summary.md print them. */
    eb_json_knum(w, "weight_mib", eb_mib(m->weight_bytes));
    eb_json_knum(w, "kv_ctx_mib", eb_mib(r->kv_bytes_ctx));
    eb_json_knum(w, "limit_mib", eb_mib(r->limit_bytes));
    knum_or_null(w, "peak_mib", r->mem_peak_bytes > 0 ? eb_mib(r->mem_peak_bytes) : NAN);
    eb_json_obj_end(w);

    eb_json_key(w, "profile");
    if (!r->profiled) {
        eb_json_null(w);
    } else {
        eb_json_obj_begin(w);
        for (int p = 0; p < EB_LLM_PHASES; p++)
            write_profile(w, &r->prof[p], k_phase_names[p]);
        eb_json_obj_end(w);
    }

    eb_json_key(w, "trace");
    if (!r->trace.on) {
        eb_json_null(w);
    } else {
        eb_json_obj_begin(w);
        kstr_or_null(w, "file", r->trace.written ? "trace.json" : NULL);
        kuint(w, "steps", r->trace.frames[0]);
        eb_json_kstr(w, "gpu", r->trace.gpu);
        kstr_or_null(w, "gpu_note", r->trace.gpu_note);
        kuint(w, "kernels", r->trace.kernels);
        eb_json_knum(w, "gpu_ms", r->trace.gpu_ms);
        eb_json_key(w, "top_kernels");
        eb_report__write_kernels(w, r->trace.top, r->trace.n_top);
        eb_json_obj_end(w);
    }

    eb_json_key(w, "system");
    eb_json_obj_begin(w);
    eb_report__write_system_fields(w, &r->sys);
    eb_json_obj_end(w);

    eb_json_key(w, "validity");
    eb_json_obj_begin(w);
    eb_json_kstr(w, "verdict", eb_validity_verdict(&r->validity));
    eb_json_key(w, "criteria");
    eb_json_obj_begin(w);
    eb_json_kint(w, "min_reps", EB_LLM_MIN_REPS);
    eb_json_obj_end(w);
    eb_json_key(w, "reasons");
    eb_json_arr_begin(w);
    for (int i = 0; i < r->validity.n_reasons; i++)
        eb_json_str(w, r->validity.reasons[i]);
    eb_json_arr_end(w);
    eb_json_obj_end(w);

    eb_json_key(w, "warnings");
    eb_json_arr_begin(w);
    for (int i = 0; i < r->n_warnings; i++)
        eb_json_str(w, r->warnings[i]);
    eb_json_arr_end(w);
    eb_json_obj_end(w);
    int bad = eb_json_writer_error(w);
    eb_json_writer_fini(w);
    fputc('\n', fp);
    return bad || ferror(fp);
}

enum eb_status eb_llm_report_write(const struct eb_llm_result *r, const char *dir,
                                   enum eb_llm_report_file f, struct eb_diag *diag)
{
    static const eb_report_body_fn bodies[EB_LLM_REPORT_FILE_COUNT] = {
        [EB_LLM_REPORT_MD] = md_body,
        [EB_LLM_REPORT_HTML] = html_body,
        [EB_LLM_REPORT_SUMMARY] = eb_llm_report__summary_body,
        [EB_LLM_REPORT_INPUTS] = eb_llm_report__inputs_body,
        [EB_LLM_REPORT_ASSUMPTIONS] = eb_llm_report__assumptions_body,
        [EB_LLM_REPORT_JSON] = json_body};
    if ((unsigned)f >= EB_LLM_REPORT_FILE_COUNT)
        return EB_ERR_INVALID_ARG;
    return eb_report__write_atomic(dir, k_file_names[f], bodies[f], r, diag);
}
