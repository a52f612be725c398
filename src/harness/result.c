#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/result.h"

const char *eb_slot_status_name(enum eb_slot_status s)
{
    switch (s) {
    case EB_SLOT_SKIPPED: return "skipped";
    case EB_SLOT_OK: return "ok";
    case EB_SLOT_FAILED: return "failed";
    }
    return "unknown";
}

const char *eb_stage_name(enum eb_stage s)
{
    static const char *const names[EB_STAGE_COUNT] = {"read", "preprocess", "inference",
                                                      "postprocess", "end_to_end"};
    return (unsigned)s < EB_STAGE_COUNT ? names[s] : "unknown";
}

void eb_run_result_init(struct eb_run_result *r)
{
    memset(r, 0, sizeof(*r));
    r->schema_version = EB_REPORT_SCHEMA_VERSION;
    r->slots[0].index = 0;
    r->slots[0].name = "rgb";
    r->slots[1].index = 1;
    r->slots[1].name = "thermal";
}

void eb_run_result_fini(struct eb_run_result *r)
{
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        free(r->slots[i].classes);
        r->slots[i].classes = NULL;
        r->slots[i].n_classes = 0;
        free(r->slots[i].records);
        r->slots[i].records = NULL;
        r->slots[i].n_records = 0;
    }
}

void eb_run_result_warn(struct eb_run_result *r, const char *fmt, ...)
{
    if (r->n_warnings >= (int)(sizeof(r->warnings) / sizeof(r->warnings[0])))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->warnings[r->n_warnings], sizeof(r->warnings[0]), fmt, ap);
    va_end(ap);
    r->n_warnings++;
}

const char *eb_mem_overall(const struct eb_mem_summary *m)
{
    return m->violations == 0 ? "SAFE" : "VIOLATIONS";
}
