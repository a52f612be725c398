/*
 * The process's one memory budget (design.md §2): the --gpu_mem_limit_gb bytes shared by both
 * slots, bounded by the usable RAM on unified memory (Jetson), charged slot by slot as the
 * slots load, and checked against the monitored figure every frame.
 *
 *     struct eb_budget b;
 *     eb_budget_init(&b, cfg->gpu_mem_limit_bytes, platform.is_jetson, meminfo_total);
 *     cap = eb_budget_left(&b, label, sizeof(label));      (the next slot's backend cap)
 *     ... load the slot with cap ...
 *     eb_budget_charge(&b, "rgb", info.budget_bytes_used);
 *     eb_budget_check(&b, rss, "rgb", frame, seen, log);    (per frame; 1 = violation)
 *
 * Plain data, no allocation; one thread charges (the main thread, as slots load), every slot
 * thread may call eb_budget_check (it only reads).
 */
#ifndef EB_BUDGET_H
#define EB_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "eb/diag.h"
#include "eb/log.h"

/*
 * On unified memory the limit is at most MemTotal minus this (10^9 bytes): what the kernel,
 * the system's services, edgebench's own host memory (sources, records, the sampler) and the
 * CUDA driver keep outside the slots' budget. An 8 GB Orin Nano (MemTotal about 7.6 GB) gets at
 * most about 6.6 GB.
 */
#define EB_BUDGET_UNIFIED_RESERVE_BYTES 1000000000ull

/** Which bound set the effective limit. */
enum eb_budget_bound {
    EB_BUDGET_BOUND_CONFIGURED = 0, /* --gpu_mem_limit_gb */
    EB_BUDGET_BOUND_UNIFIED_RAM,    /* Jetson: MemTotal - EB_BUDGET_UNIFIED_RESERVE_BYTES */
};

/** What the per-frame monitor measures, which names a violation. */
enum eb_budget_measure {
    EB_BUDGET_MEASURE_RSS = 0, /* process RSS (a discrete GPU's host side, or the CPU) */
    EB_BUDGET_MEASURE_UNIFIED, /* Jetson: system memory used, CPU and GPU together */
    EB_BUDGET_MEASURE_DEVICE,  /* a discrete GPU's device memory */
};

struct eb_budget {
    uint64_t configured_bytes; /* --gpu_mem_limit_gb, as cli.c validated it */
    uint64_t limit_bytes;      /* the effective limit: what slots share and frames are checked on */
    enum eb_budget_bound bound;
    uint64_t mem_total_bytes; /* unified: MemTotal (0 unknown); 0 elsewhere */
    enum eb_budget_measure measure;
    uint64_t used_bytes; /* charged by the slots loaded so far */
    char charged_by[64]; /* their names, e.g. "rgb"; "" before any charge */
};

/**
 * The budget of a process with limit `limit_bytes` (> 0). On unified memory (`unified` 1)
 * with MemTotal `mem_total_bytes` known (> the reserve), the effective limit is
 * min(limit, mem_total - EB_BUDGET_UNIFIED_RESERVE_BYTES) and the monitored figure is system
 * memory; else the limit as given, monitored as process RSS.
 */
void eb_budget_init(struct eb_budget *b, uint64_t limit_bytes, int unified,
                    uint64_t mem_total_bytes);

/**
 * eb_budget_init with this machine's MemTotal (/proc/meminfo) when `unified`; an unreadable
 * meminfo leaves the configured limit.
 */
void eb_budget_init_here(struct eb_budget *b, uint64_t limit_bytes, int unified);

struct eb_mem_summary;
/** Writes the limit part of a run's memory summary: limit, configured limit, bound. */
void eb_budget_summarize(const struct eb_budget *b, struct eb_mem_summary *m);

/** "configured" or "unified_ram" (report.json memory.limit_bound). */
const char *eb_budget_bound_name(enum eb_budget_bound bound);

/**
 * Bytes left for the next slot to load (limit - charged, 0 when all is charged). When some is
 * charged, `label` (may be NULL) receives how engine messages name that cap, for
 * eb_backend_config.mem_limit_label: "left of the limit after slot rgb (7629.4 MiB)"; else "".
 */
uint64_t eb_budget_left(const struct eb_budget *b, char *label, size_t label_size);

struct eb_backend_config;
/**
 * Gives the next slot to load its cap: cfg->mem_limit_bytes = what is left, and
 * cfg->mem_limit_label = `label` (filled as eb_budget_left; borrowed by cfg, so `label` must
 * live until the slot is loaded) once another slot is charged. EB_ERR_LIMIT "0 MiB left of the
 * limit after slot rgb (Z MiB)" with EB_ADVICE_MEM_LIMIT when nothing is left (a cap of 0
 * would mean none).
 */
EB_NODISCARD enum eb_status eb_budget_slot_cap(const struct eb_budget *b,
                                               struct eb_backend_config *cfg, char *label,
                                               size_t label_size, struct eb_diag *diag);

/** Charges a loaded slot's usage (eb_model_info.budget_bytes_used) to the budget. */
void eb_budget_charge(struct eb_budget *b, const char *slot_name, uint64_t bytes);

/**
 * The per-frame check of the monitored figure `bytes` against the effective limit: above it,
 * logs one line naming what was measured, e.g. "MEMORY LIMIT VIOLATION: process RSS 0.22 GB
 * exceeds the limit 0.10 GB (slot rgb, frame 12)" (unified: "SYSTEM MEMORY VIOLATION (unified,
 * CPU+GPU): system memory used ..."; device memory: "GPU MEMORY VIOLATION: device memory ...")
 * and returns 1; else 0. The slot's first violation (`seen`, its violations so far, is 0) is an
 * ERROR (the console shows it); later ones are DEBUG (run.log keeps each; the run ends with
 * their count), so a run over the limit prints one line per slot, not one per frame.
 */
int eb_budget_check(const struct eb_budget *b, uint64_t bytes, const char *slot_name,
                    long long frame, uint64_t seen, const struct eb_log *log);

/** What the monitor measures, for messages and reports: "process RSS", ... */
const char *eb_budget_measure_name(enum eb_budget_measure m);

#endif
