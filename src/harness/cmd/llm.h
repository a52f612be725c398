/*
 * `edgebench llm`: a decoder-only transformer (edgebench model synth --arch, or an export with
 * the same tensor names) measured as its users run it: repetitions of a prefill of a prompt and
 * a greedy decode of --gen tokens on the KV cache (harness/pipeline/llm_core.h), reported as
 * time to first token, prefill and decode tokens/s, per-token latency percentiles with their
 * confidence intervals, a llama-bench table, MFU and memory-bandwidth use, weights and KV cache
 * against the memory budget (report.json of kind llm, report.md, report.html; the history).
 */
#ifndef EB_LLM_H
#define EB_LLM_H

#include <stdatomic.h>
#include <stdio.h>

#define EB_LLM_PROMPT_DEFAULT 512
#define EB_LLM_GEN_DEFAULT    128
#define EB_LLM_REPS_DEFAULT   5
#define EB_LLM_WARMUP_DEFAULT 1

struct eb_llm_env {
    atomic_int *stop;         /* non-zero (a signal): stop after the current step; borrowed */
    const char *command_line; /* borrowed */
    const char *version;      /* borrowed */
    FILE *out;                /* the llama-bench table and the report line */
    FILE *err;                /* logs and the progress line */
};

/**
 * Runs `edgebench llm` with its arguments (argv[0] is the first option). Exit codes as run's:
 * 0 measured (VALID or INVALID), 1 the model could not be loaded or run (or did not fit the
 * memory limit; the report says why), 2 bad input, 6 a report file could not be written,
 * 130 interrupted (the report covers the repetitions that ended).
 */
int eb_llm_main(int argc, char **argv, const struct eb_llm_env *env);

/** Prints `edgebench llm --help`. */
void eb_llm_print_help(FILE *fp);

#endif
