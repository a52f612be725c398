/*
 * summary.md: one page in plain words for someone who does not read report.md — what ran on
 * what, whether it keeps up, memory against the limit, the bottleneck, the verdict and what it
 * rests on (docs/report-schema.md).
 *
 * Rule: no figure here that report.json does not hold. Every number comes from the same
 * struct eb_run_result, through the facts of report_facts.c where a fact already says it
 * (backend, device, precision) and otherwise through eb_report__fmtd/eb_report__fmt_ci with
 * the decimals report.md uses for that figure. Nothing is derived here (no shares, no
 * differences): a sentence states figures side by side and the words say what they mean.
 */
#include <stdio.h>
#include <string.h>

#include "eb/path.h"
#include "harness/report/report.h"
#include "harness/report/report_facts.h"

/* The stages whose latencies can be the bottleneck (end_to_end is their sum), in plain words
 * with report.json's key after them. */
static const char *const stage_words[EB_STAGE_E2E] = {
    [EB_STAGE_READ] = "reading frames from the source",
    [EB_STAGE_PRE] = "preparing each frame for the model",
    [EB_STAGE_INFER] = "running the model",
    [EB_STAGE_POST] = "turning the model's output into detections",
};

static const char *fact_value(const struct eb_fact_list *l, int slot, const char *key)
{
    for (size_t i = eb_report_facts_next(l, 0, EB_FACT_SECTION_SLOT, slot); i < l->n;
         i = eb_report_facts_next(l, i + 1, EB_FACT_SECTION_SLOT, slot))
        if (strcmp(l->items[i].key, key) == 0)
            return l->items[i].value;
    return NULL;
}

/* Whether any slot ran (and so has figures to state). */
static int any_ran(const struct eb_run_result *r)
{
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        if (r->slots[i].status == EB_SLOT_OK && r->slots[i].frames_measured > 0)
            return 1;
    return 0;
}

/* "was skipped: why." or "failed: why (error: backend)." for a slot that did not run. */
static void not_run(FILE *fp, const struct eb_slot_result *s)
{
    fprintf(fp, "- Slot %s %s: ", s->name,
            s->status == EB_SLOT_SKIPPED ? "was skipped" : "failed and has no results");
    eb_report__md_text(fp,
                       s->message[0] != '\0'          ? s->message
                       : s->status == EB_SLOT_SKIPPED ? "no model given for this slot"
                                                      : "unknown reason",
                       0);
    if (s->status == EB_SLOT_FAILED && s->error != EB_OK)
        fprintf(fp, " (error: %s)", eb_status_name(s->error));
    fputs(".\n", fp);
}

/* ------------------------------------------------------------------------ the sections */

static void what_ran(const struct eb_run_result *r, const struct eb_fact_list *l, FILE *fp)
{
    static const struct {
        const char *key, *words;
    } said[] = {
        {"slot.backend", "Backend"},
        {"slot.device", "Device / provider"},
        {"slot.precision", "Precision"},
    };
    fputs("## What ran\n\n", fp);
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *s = &r->slots[i];
        if (s->status != EB_SLOT_OK) {
            not_run(fp, s);
            continue;
        }
        fprintf(fp, "- Slot %s: model `", s->name);
        eb_report__md_text(fp, eb_path_base(s->model_path), 1);
        fputs("`.", fp);
        for (size_t k = 0; k < sizeof(said) / sizeof(said[0]); k++) {
            const char *v = fact_value(l, s->index, said[k].key);
            if (v == NULL)
                continue;
            fprintf(fp, " %s: ", said[k].words);
            eb_report__md_text(fp, v, 0);
            fputs(".", fp);
        }
        fputs("\n", fp);
    }
    fputs("\n", fp);
}

static void keeps_up(const struct eb_run_result *r, FILE *fp)
{
    char b[4][32];
    fputs("## Does it keep up?\n\n", fp);
    if (!any_ran(r))
        fputs("No slot measured a frame: nothing to judge.\n", fp);
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *s = &r->slots[i];
        if (s->status != EB_SLOT_OK)
            continue;
        if (!(s->fps_target > 0)) {
            fprintf(fp,
                    "- Slot %s: no target frame rate was set (no --fps, and the source has no "
                    "rate of its own), so keeping up is not judged. It ran as fast as it could: "
                    "%s FPS.\n",
                    s->name, eb_report__fmtd(b[0], sizeof(b[0]), s->throughput_fps, 1));
            continue;
        }
        const int kept = s->drop_pct <= r->criteria.max_drop_pct;
        fprintf(fp,
                "- Slot %s: frames arrived at %s FPS, as from a camera; it processed %s FPS and "
                "dropped %llu frames (%s%%; at most %s%% allowed). %s\n",
                s->name, eb_report__fmtd(b[0], sizeof(b[0]), s->fps_target, 2),
                eb_report__fmtd(b[1], sizeof(b[1]), s->throughput_fps, 2),
                (unsigned long long)s->frames_dropped,
                eb_report__fmtd(b[2], sizeof(b[2]), s->drop_pct, 2),
                eb_report__fmtd(b[3], sizeof(b[3]), r->criteria.max_drop_pct, 1),
                kept ? "**It keeps up.**" : "**It does not keep up.**");
    }
    fputs("\n", fp);
}

static void memory(const struct eb_run_result *r, FILE *fp)
{
    const struct eb_mem_summary *m = &r->mem;
    char b1[32], b2[32];
    fputs("## Memory\n\n", fp);
    fputs("Peak memory (", fp);
    eb_report__md_text(fp, m->monitored, 0);
    fprintf(fp, "): %s GB",
            eb_report__fmtd(b1, sizeof(b1), (double)m->peak_bytes / EB_REPORT_BYTES_PER_GB, 2));
    if (!(m->limit_gb > 0)) {
        fputs(". No memory budget was set, so there is no headroom to judge.\n\n", fp);
        return;
    }
    fprintf(fp, " against a limit of %s GB. ", eb_report__fmtd(b2, sizeof(b2), m->limit_gb, 2));
    if (m->violations == 0)
        fputs("**It stayed within the limit** on every frame.\n\n", fp);
    else
        fprintf(fp, "**It went over the limit** on %llu frame%s.\n\n",
                (unsigned long long)m->violations, m->violations == 1 ? "" : "s");
}

static void bottleneck(const struct eb_run_result *r, FILE *fp)
{
    char b1[32], b2[32];
    fputs("## Bottleneck\n\n", fp);
    if (!any_ran(r))
        fputs("No slot measured a frame: nothing to judge.\n", fp);
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *s = &r->slots[i];
        if (s->status != EB_SLOT_OK || s->frames_measured == 0)
            continue;
        int slow = EB_STAGE_READ;
        for (int st = EB_STAGE_READ + 1; st < EB_STAGE_E2E; st++)
            if (s->stages[st].p50 > s->stages[slow].p50)
                slow = st;
        fprintf(fp,
                "- Slot %s: the slowest step is %s (%s): %s ms of the %s ms a frame takes, at the "
                "median.",
                s->name, stage_words[slow], eb_stage_name((enum eb_stage)slow),
                eb_report__fmtd(b1, sizeof(b1), s->stages[slow].p50, 3),
                eb_report__fmtd(b2, sizeof(b2), s->stages[EB_STAGE_E2E].p50, 3));
        const struct eb_profile_result *p = &s->profile;
        if (p->available && p->n_ops > 0) {
            fputs(" Inside the model, the most time goes to `", fp);
            eb_report__md_text(fp, p->ops[0].op, 1);
            fprintf(fp, "` operations: %s ms per frame, %s%% of the profiled time.",
                    eb_report__fmtd(b1, sizeof(b1), p->ops[0].ms_per_frame, 3),
                    eb_report__fmtd(b2, sizeof(b2), p->ops[0].pct, 1));
        } else {
            fputs(" No per-operator profile was taken (--profile).", fp);
        }
        fputs("\n", fp);
    }
    fputs("\n", fp);
}

static void verdict(const struct eb_run_result *r, FILE *fp)
{
    const struct eb_validity *v = &r->validity;
    char what[512];
    fputs("## Verdict\n\n", fp);
    if (!v->evaluated) {
        fputs("Not judged.\n\n", fp);
        return;
    }
    if (v->n_reasons == 0) {
        fprintf(fp, "**%s**: every check held (%s).\n\n", eb_validity_verdict(v),
                eb_report__criteria(r, what, sizeof(what)));
        return;
    }
    eb_report__md_because(fp, v);
}

void eb_report__md_because(FILE *fp, const struct eb_validity *v)
{
    fprintf(fp, "**%s**, because:\n\n", eb_validity_verdict(v));
    for (int i = 0; i < v->n_reasons && i < EB_VALIDITY_MAX_REASONS; i++) {
        fputs("- ", fp);
        eb_report__md_text(fp, v->reasons[i], 0);
        fputs("\n", fp);
    }
    fputs("\n", fp);
}

static void rests_on(const struct eb_run_result *r, FILE *fp)
{
    char b1[32], b2[32], b3[48];
    fputs("## What this rests on\n\n", fp);
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *s = &r->slots[i];
        if (s->status != EB_SLOT_OK)
            continue;
        const struct eb_stat_summary *e2e = &s->stages[EB_STAGE_E2E];
        fprintf(fp, "- Slot %s: %llu frames measured over %s s, after %llu warm-up frames. ",
                s->name, (unsigned long long)s->frames_measured,
                eb_report__fmtd(b1, sizeof(b1), s->wall_s, 2),
                (unsigned long long)s->frames_warmup);
        fprintf(fp, "Median time per frame %s ms", eb_report__fmtd(b2, sizeof(b2), e2e->p50, 3));
        if (e2e->p50_ci.available)
            fprintf(fp, "; 95%% confidence interval %s ms.\n",
                    eb_report__fmt_ci(b3, sizeof(b3), &e2e->p50_ci));
        else
            fputs("; too few frames for a confidence interval of it.\n", fp);
    }
    fprintf(fp, "- The whole run took %s s.\n", eb_report__fmtd(b1, sizeof(b1), r->duration_s, 1));
    fputs("\nDetails: report.md (for people), report.json (every figure), assumptions.md (the "
          "methods).\n",
          fp);
}

void eb_report_write_summary(const struct eb_run_result *r, FILE *fp)
{
    struct eb_fact_list facts;
    eb_report_facts_build(r, &facts);
    fputs("# Run summary\n\n", fp);
    fputs("edgebench ", fp);
    eb_report__md_text(fp, r->version, 0);
    fputs(", ", fp);
    eb_report__md_text(fp, r->mode[0] != '\0' ? r->mode : "unknown", 0);
    fputs(" mode, started ", fp);
    eb_report__md_text(fp, r->started_at[0] != '\0' ? r->started_at : "at an unknown time", 0);
    fputs(".", fp);
    if (r->interrupted)
        fputs(" **The run was interrupted**: the results cover what ran.", fp);
    fputs("\n\n", fp);
    if (facts.oom)
        fputs("> **Out of memory:** some facts are missing from this summary.\n\n", fp);
    what_ran(r, &facts, fp);
    keeps_up(r, fp);
    memory(r, fp);
    bottleneck(r, fp);
    verdict(r, fp);
    rests_on(r, fp);
    eb_report_facts_fini(&facts);
}
