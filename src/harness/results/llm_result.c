/*
 * The result of `edgebench llm` (llm_result.h): records, statistics and the derived figures.
 */
#include "harness/results/llm_result.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void eb_llm_result_init(struct eb_llm_result *r)
{
    memset(r, 0, sizeof(*r));
    r->prefill_tps = r->prefill_tps_std = r->decode_tps = r->decode_tps_std = NAN;
    r->prefill_flops = r->decode_flops = r->decode_bytes = NAN;
    r->prefill_tflops_s = r->decode_gbs = r->mfu = r->bw_util = NAN;
}

enum eb_status eb_llm_result_alloc(struct eb_llm_result *r, int64_t reps, int64_t gen)
{
    if (reps < 1 || gen < 1)
        return EB_ERR_INVALID_ARG;
    r->prefill_ns = calloc((size_t)reps, sizeof(*r->prefill_ns));
    r->ttft_ns = calloc((size_t)reps, sizeof(*r->ttft_ns));
    r->decode_ns = calloc((size_t)reps * (size_t)gen, sizeof(*r->decode_ns));
    r->tokens = calloc((size_t)gen, sizeof(*r->tokens));
    r->prefill_at_ns = calloc((size_t)reps, sizeof(*r->prefill_at_ns));
    r->decode_at_ns = calloc((size_t)reps * (size_t)gen, sizeof(*r->decode_at_ns));
    if (r->prefill_ns == NULL || r->ttft_ns == NULL || r->decode_ns == NULL || r->tokens == NULL ||
        r->prefill_at_ns == NULL || r->decode_at_ns == NULL)
        return EB_ERR_NOMEM;
    return EB_OK;
}

void eb_llm_result_fini(struct eb_llm_result *r)
{
    free(r->prefill_ns);
    free(r->ttft_ns);
    free(r->decode_ns);
    free(r->tokens);
    free(r->prefill_at_ns);
    free(r->decode_at_ns);
    for (int p = 0; p < EB_LLM_PHASES; p++) {
        free(r->prof[p].nodes);
        memset(&r->prof[p], 0, sizeof(r->prof[p]));
    }
    r->prefill_ns = r->ttft_ns = r->decode_ns = NULL;
    r->tokens = NULL;
    r->prefill_at_ns = r->decode_at_ns = NULL;
}

void eb_llm_result_warn(struct eb_llm_result *r, const char *fmt, ...)
{
    if (r->n_warnings >= EB_LLM_MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->warnings[r->n_warnings], sizeof(r->warnings[0]), fmt, ap);
    va_end(ap);
    r->n_warnings++;
}

/* Mean and sample standard deviation (NAN for std with one value). */
static void mean_std(const double *v, size_t n, double *mean, double *std)
{
    double s = 0.0, q = 0.0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    *mean = n > 0 ? s / (double)n : NAN;
    for (size_t i = 0; i < n; i++)
        q += (v[i] - *mean) * (v[i] - *mean);
    *std = n > 1 ? sqrt(q / (double)(n - 1)) : NAN;
}

/* The statistics of `n` nanosecond records in milliseconds, through `scratch`. */
static void summarize_ns(const uint64_t *ns, size_t n, double *scratch, struct eb_stat_summary *out)
{
    for (size_t i = 0; i < n; i++)
        scratch[i] = (double)ns[i] / 1e6;
    eb_stat_summarize_ms(scratch, n, out);
}

enum eb_status eb_llm_result_summarize(struct eb_llm_result *r)
{
    const size_t reps = r->reps_done > 0 ? (size_t)r->reps_done : 0;
    const size_t gen = r->w.gen > 0 ? (size_t)r->w.gen : 0;
    if (reps == 0 || gen == 0)
        return EB_OK;
    double *scratch = malloc(reps * gen * sizeof(double));
    double *tps = malloc(reps * sizeof(double));
    if (scratch == NULL || tps == NULL) {
        free(scratch);
        free(tps);
        return EB_ERR_NOMEM;
    }
    summarize_ns(r->ttft_ns, reps, scratch, &r->ttft);
    summarize_ns(r->prefill_ns, reps, scratch, &r->prefill);
    summarize_ns(r->decode_ns, reps * gen, scratch, &r->decode);

    for (size_t i = 0; i < reps; i++)
        tps[i] = (double)r->w.prompt / ((double)r->prefill_ns[i] / 1e9);
    mean_std(tps, reps, &r->prefill_tps, &r->prefill_tps_std);
    for (size_t i = 0; i < reps; i++) {
        uint64_t sum = 0;
        for (size_t j = 0; j < gen; j++)
            sum += r->decode_ns[i * gen + j];
        tps[i] = (double)gen / ((double)sum / 1e9);
    }
    mean_std(tps, reps, &r->decode_tps, &r->decode_tps_std);
    free(scratch);
    free(tps);

    /* Achieved rates from the mean times: the FLOPs (bytes) of one prefill (step) over the
     * mean time of one. */
    r->prefill_tflops_s =
        r->prefill.mean > 0 ? r->prefill_flops / (r->prefill.mean / 1e3) / 1e12 : NAN;
    r->decode_gbs = r->decode.mean > 0 ? r->decode_bytes / (r->decode.mean / 1e3) / 1e9 : NAN;
    r->mfu = r->peak_tflops > 0 ? r->prefill_tflops_s / r->peak_tflops : NAN;
    r->bw_util = r->peak_gbs > 0 ? r->decode_gbs / r->peak_gbs : NAN;
    return EB_OK;
}
