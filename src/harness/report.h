/*
 * Report writers. All render from one struct eb_run_result:
 *   report.json (schema in docs/report-schema.md), report.md, env.json.
 */
#ifndef EB_REPORT_H
#define EB_REPORT_H

#include <stdio.h>

#include "eb/json.h"
#include "harness/result.h"

/** Writes the whole report.json document. */
void eb_report_write_json(const struct eb_run_result *r, struct eb_json_writer *w);
/** Writes report.md: Memory Safety Summary, one section per slot, system metrics. */
void eb_report_write_md(const struct eb_run_result *r, FILE *fp);

/** Writes report.json and report.md into `dir`. EB_ERR_IO naming the file on failure. */
EB_NODISCARD enum eb_status eb_report_write_files(const struct eb_run_result *r, const char *dir,
                                                  struct eb_diag *diag);

/** What env.json records (collected once at start). */
struct eb_env_extra {
    const char *command_line;
    const char *ort_version;   /* may be NULL */
    const char *ort_library;   /* may be NULL */
};
/** Writes env.json into `dir`: versions, OS/kernel, CPU, GPU/driver, Jetson facts, command. */
EB_NODISCARD enum eb_status eb_report_write_env(const char *dir, const struct eb_env_extra *extra,
                                                struct eb_diag *diag);

#endif
