/*
 * The labelled facts of a run: one ordered list built once from a struct eb_run_result, which
 * report.md (report_md.c) and report.html (report_html.c) print, each in its own layout, so
 * the two carry the same facts with the same wording and numbers. report.json keeps its own
 * documented schema (report_json.c).
 *
 *     struct eb_fact_list facts;
 *     eb_report_facts_build(result, &facts);
 *     for (size_t i = 0; i < facts.n; i++)
 *         if (facts.items[i].section == EB_FACT_SECTION_SLOT && facts.items[i].slot == 0)
 *             print(facts.items[i].label, facts.items[i].value);
 *     eb_report_facts_fini(&facts);
 *
 * A fact is a label and its value already formatted as text (numbers through eb_report__fmtd and
 * its siblings), with the section it belongs to and flags telling a printer how to show it.
 * Where to add a fact: a per-slot fact is one row of a table in report_facts.c (slot_rows,
 * accuracy_rows, profile_rows); a run-level fact is one add() call in its section's builder.
 * Tables with many columns (latency statistics, classes, per-class AP, per-op profiles, the
 * slot ranking) are not facts: the printers render them from the result.
 */
#ifndef EB_REPORT_FACTS_H
#define EB_REPORT_FACTS_H

#include <stddef.h>
#include <stdio.h>

#include "harness/results/result.h"

/** The part of the report a fact belongs to, in the order the reports show them. */
enum eb_fact_section {
    EB_FACT_SECTION_RUN = 0,  /* the line under the title: version, schema, duration, ... */
    EB_FACT_SECTION_MEMORY,   /* the Memory Safety Summary */
    EB_FACT_SECTION_SLOT,     /* a slot's own facts (slot = its index) */
    EB_FACT_SECTION_ACCURACY, /* a slot's --data accuracy (slot = its index) */
    EB_FACT_SECTION_PROFILE,  /* a slot's --profile summary (slot = its index) */
    EB_FACT_SECTION_PAIR,     /* the dual-stream pair */
    EB_FACT_SECTION_SYSTEM,   /* system metrics of the sampler */
    EB_FACT_SECTION_WARNINGS, /* the run's warnings (eb_report__warnings) */
    EB_FACT_SECTION_COUNT
};

/** How a printer shows a fact (bits of eb_fact.flags). */
enum eb_fact_flag {
    EB_FACT_FLAG_CODE = 1u << 0,  /* a path or command: monospace where the format has it */
    EB_FACT_FLAG_GOOD = 1u << 1,  /* a status that is fine (SAFE): emphasised */
    EB_FACT_FLAG_BAD = 1u << 2,   /* a status that is not (VIOLATIONS): emphasised */
    EB_FACT_FLAG_ALERT = 1u << 3, /* shown as a banner above its section's table */
};

/** One labelled fact. `label` and `value` point into `mem`, which the fact owns. */
struct eb_fact {
    enum eb_fact_section section;
    int slot;          /* slot index for the per-slot sections, -1 otherwise */
    const char *group; /* a sub-heading inside the section (static), NULL for none */
    const char *key;   /* a stable name, e.g. "slot.backend" (static) */
    const char *label; /* plain text, e.g. "Backend" */
    const char *value; /* plain text; "" is shown as an em dash */
    unsigned flags;    /* enum eb_fact_flag bits */
    char *mem;
};

/** The ordered facts of one run. Owns its facts (eb_report_facts_fini). */
struct eb_fact_list {
    struct eb_fact *items;
    size_t n, cap;
    int oom; /* memory ran out: the list holds the facts built before */
};

/**
 * Builds the facts of `r` into `out` (which it initialises). Never fails: when memory runs
 * out the list holds the facts built so far and out->oom is 1, which the printers note.
 */
void eb_report_facts_build(const struct eb_run_result *r, struct eb_fact_list *out);

/** Frees what `l` owns and empties it; NULL is a no-op. */
void eb_report_facts_fini(struct eb_fact_list *l);

/**
 * Index of the first fact at or after `from` in `section` (and `slot`, for the per-slot
 * sections; pass -1 otherwise), or l->n when there is none.
 */
size_t eb_report_facts_next(const struct eb_fact_list *l, size_t from, enum eb_fact_section section,
                            int slot);

/** How one report shows a section's facts (eb_report_facts_print). All members required. */
struct eb_fact_printer {
    void (*alert)(FILE *fp, const struct eb_fact *f);       /* a banner above the table */
    void (*table_begin)(FILE *fp, const struct eb_fact *f); /* f->group: its heading or NULL */
    void (*row)(FILE *fp, const struct eb_fact *f);
    void (*table_end)(FILE *fp);
};

/**
 * Prints the facts of `section` (and `slot`, -1 for the run-level sections) through `p`: the
 * alert facts first, then the others as tables, a new table (with its group's heading) wherever
 * the group changes. Prints nothing when the section has no fact.
 */
void eb_report_facts_print(const struct eb_fact_list *l, enum eb_fact_section section, int slot,
                           const struct eb_fact_printer *p, FILE *fp);

#endif
