/*
 * The reports of `edgebench llm` (report_llm.c): report.json of kind llm (docs/report-schema.md,
 * "kind llm"), report.md and report.html, which print one list of labelled facts built once
 * from the result (so the two say the same), and the llama-bench table the command prints.
 */
#ifndef EB_REPORT_LLM_H
#define EB_REPORT_LLM_H

#include <stdio.h>

#include "eb/diag.h"
#include "harness/results/llm_result.h"

/* report.json's version for kind llm (keys are only added). */
#define EB_LLM_REPORT_SCHEMA_VERSION 1

/** The files, in the order they are written (report.json last: it lists the ones lost). */
enum eb_llm_report_file {
    EB_LLM_REPORT_MD = 0,
    EB_LLM_REPORT_HTML,
    EB_LLM_REPORT_SUMMARY,     /* summary.md (report_llm_repro.c) */
    EB_LLM_REPORT_INPUTS,      /* inputs.json (report_llm_repro.c) */
    EB_LLM_REPORT_ASSUMPTIONS, /* assumptions.md (report_llm_repro.c) */
    EB_LLM_REPORT_JSON,
    EB_LLM_REPORT_FILE_COUNT
};

/** "report.md", "report.html", "summary.md", "inputs.json", "assumptions.md", "report.json". */
const char *eb_llm_report_file_name(enum eb_llm_report_file f);

/** Writes one file into `dir` (atomically: a temporary file renamed). EB_ERR_IO naming it. */
EB_NODISCARD enum eb_status eb_llm_report_write(const struct eb_llm_result *r, const char *dir,
                                                enum eb_llm_report_file f, struct eb_diag *diag);

/**
 * The llama-bench table (Markdown): model, size, params, backend, threads, test, t/s, with the
 * rows pp<prompt> (prefill tokens/s) and tg<gen> (decode tokens/s), mean ± std over the
 * repetitions.
 */
void eb_llm_report_bench_table(const struct eb_llm_result *r, FILE *fp);

/* Internal to report_llm*.c: the bodies of summary.md, inputs.json and assumptions.md
 * (report_llm_repro.c), as eb_report__write_atomic takes them (ctx: the result). */
int eb_llm_report__summary_body(FILE *fp, const void *ctx);
int eb_llm_report__inputs_body(FILE *fp, const void *ctx);
int eb_llm_report__assumptions_body(FILE *fp, const void *ctx);

#endif
