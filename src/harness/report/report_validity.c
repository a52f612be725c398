/*
 * eb_report_finish: what the reports and the history derive from a finished run — the validity
 * verdicts (harness/results/validity.h) and the energy per measured frame — computed once, so report.json,
 * report.md and the history database state the same verdict.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness/report/report.h"

/* The names of the slowdown bits in `mask`, ", "-separated, into buf. */
static void throttle_text(uint64_t mask, char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    for (uint64_t bit = 1; bit != 0 && bit <= mask && off < size; bit <<= 1) {
        const char *name = (mask & bit) ? eb_sampler_throttle_name(bit) : NULL;
        if (name != NULL)
            off += (size_t)snprintf(buf + off, size - off, "%s%s", off ? ", " : "", name);
    }
}

void eb_report_finish(struct eb_run_result *r)
{
    char throttled[160];
    const uint64_t mask = eb_report__throttle_reasons(&r->sys);
    throttle_text(mask, throttled, sizeof(throttled));
    const char *tt = mask != 0 ? (throttled[0] != '\0' ? throttled : "NVML slowdown") : NULL;

    struct eb_validity *run = &r->validity;
    memset(run, 0, sizeof(*run));
    run->evaluated = 1;
    run->valid = 1;
    /* Run-wide reasons first, then each slot's own (without the run-wide throttling). */
    if (r->interrupted) {
        const char *sig = eb_report__signal_name(r->interrupt_signal);
        eb_validity_add(run, "interrupted%s%s: the results cover what ran", sig ? " by " : "",
                        sig ? sig : "");
    }
    if (tt != NULL)
        eb_validity_add(run, "the GPU throttled during the run (%s)", tt);
    int judged = 0;
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        struct eb_slot_result *s = &r->slots[i];
        eb_validity_judge_slot(s, &r->criteria, tt, &s->validity);
        if (!s->validity.evaluated)
            continue;
        judged++;
        struct eb_validity own;
        eb_validity_judge_slot(s, &r->criteria, NULL, &own);
        for (int k = 0; k < own.n_reasons; k++)
            eb_validity_add(run, "slot %s: %s", s->name, own.reasons[k]);
    }
    if (judged == 0)
        eb_validity_add(run, "no slot ran");
    r->energy_per_frame_mj = eb_report__energy_per_frame_mj(r, NULL);
    eb_report__throttle_find_all(r);
}
