/*
 * The process's one memory budget: effective limit, the share each slot gets as it loads, the
 * per-frame check (budget.h).
 */
#include "harness/pipeline/budget.h"

#include <stdio.h>
#include <string.h>

#include "eb/backend.h"
#include "harness/metrics/sampler.h"
#include "harness/results/result.h"

#define MIB (1024.0 * 1024.0)

void eb_budget_init(struct eb_budget *b, uint64_t limit_bytes, int unified,
                    uint64_t mem_total_bytes)
{
    memset(b, 0, sizeof(*b));
    b->configured_bytes = limit_bytes;
    b->limit_bytes = limit_bytes;
    b->bound = EB_BUDGET_BOUND_CONFIGURED;
    b->measure = unified ? EB_BUDGET_MEASURE_UNIFIED : EB_BUDGET_MEASURE_RSS;
    if (!unified)
        return;
    b->mem_total_bytes = mem_total_bytes;
    /* One DRAM for CPU and GPU: the limit cannot be more than the RAM the slots can have. */
    if (mem_total_bytes > EB_BUDGET_UNIFIED_RESERVE_BYTES) {
        const uint64_t usable = mem_total_bytes - EB_BUDGET_UNIFIED_RESERVE_BYTES;
        if (usable < limit_bytes) {
            b->limit_bytes = usable;
            b->bound = EB_BUDGET_BOUND_UNIFIED_RAM;
        }
    }
}

void eb_budget_init_here(struct eb_budget *b, uint64_t limit_bytes, int unified)
{
    struct eb_sysmem sm;
    const uint64_t total = unified && eb_procfs_sysmem(&sm, NULL) == EB_OK ? sm.total : 0;
    eb_budget_init(b, limit_bytes, unified, total);
}

void eb_budget_summarize(const struct eb_budget *b, struct eb_mem_summary *m)
{
    m->limit_bytes = b->limit_bytes;
    m->limit_gb = (double)b->limit_bytes / 1e9;
    m->configured_limit_bytes = b->configured_bytes;
    m->limit_bound = eb_budget_bound_name(b->bound);
}

const char *eb_budget_bound_name(enum eb_budget_bound bound)
{
    return bound == EB_BUDGET_BOUND_UNIFIED_RAM ? "unified_ram" : "configured";
}

const char *eb_budget_measure_name(enum eb_budget_measure m)
{
    switch (m) {
    case EB_BUDGET_MEASURE_UNIFIED: return "system memory used";
    case EB_BUDGET_MEASURE_DEVICE: return "device memory";
    case EB_BUDGET_MEASURE_RSS: break;
    }
    return "process RSS";
}

uint64_t eb_budget_left(const struct eb_budget *b, char *label, size_t label_size)
{
    const uint64_t left = b->used_bytes < b->limit_bytes ? b->limit_bytes - b->used_bytes : 0;
    if (label != NULL && label_size > 0) {
        if (b->charged_by[0] != '\0')
            snprintf(label, label_size, "left of the limit after slot %s (%.1f MiB)", b->charged_by,
                     (double)b->limit_bytes / MIB);
        else
            label[0] = '\0';
    }
    return left;
}

enum eb_status eb_budget_slot_cap(const struct eb_budget *b, struct eb_backend_config *cfg,
                                  char *label, size_t label_size, struct eb_diag *diag)
{
    const uint64_t left = eb_budget_left(b, label, label_size);
    if (left == 0)
        return eb_diag_fail_advise(diag, EB_ERR_LIMIT, EB_ADVICE_MEM_LIMIT,
                                   "needed more than 0 MiB, 0 MiB %s", label);
    cfg->mem_limit_bytes = left;
    cfg->mem_limit_label = label[0] != '\0' ? label : NULL;
    return EB_OK;
}

void eb_budget_charge(struct eb_budget *b, const char *slot_name, uint64_t bytes)
{
    b->used_bytes += bytes;
    const size_t n = strlen(b->charged_by);
    snprintf(b->charged_by + n, sizeof(b->charged_by) - n, "%s%s", n ? " and " : "", slot_name);
}

int eb_budget_check(const struct eb_budget *b, uint64_t bytes, const char *slot_name,
                    long long frame, uint64_t seen, const struct eb_log *log)
{
    if (b->limit_bytes == 0 || bytes <= b->limit_bytes)
        return 0;
    /* Named for what was measured: GPU only where GPU memory is the figure. */
    const char *head = b->measure == EB_BUDGET_MEASURE_UNIFIED
                           ? "SYSTEM MEMORY VIOLATION (unified, CPU+GPU)"
                       : b->measure == EB_BUDGET_MEASURE_DEVICE ? "GPU MEMORY VIOLATION"
                                                                : "MEMORY LIMIT VIOLATION";
    eb_log_msg(log, seen == 0 ? EB_LOG_ERROR : EB_LOG_DEBUG,
               "%s: %s %.2f GB exceeds the limit %.2f GB (slot %s, frame %lld)", head,
               eb_budget_measure_name(b->measure), (double)bytes / 1e9,
               (double)b->limit_bytes / 1e9, slot_name, frame);
    return 1;
}
