/* The validity verdict on crafted sample sets, and the `--warmup auto` stopping rule. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eb_test.h"
#include "harness/report/report.h"
#include "harness/results/validity.h"

/* An ok slot of end-to-end samples `v` (in measurement order) measured over `wall_s` seconds,
 * summarised as the pipeline summarises a slot (eb_slot_summarize). Sorts `v`. */
static void slot_of(struct eb_slot_result *s, double *v, size_t n, double wall_s)
{
    double *scratch = calloc(n ? n : 1, sizeof(double));
    ASSERT_TRUE(scratch != NULL);
    s->status = EB_SLOT_OK;
    s->frames_measured = n;
    s->wall_s = wall_s;
    s->throughput_fps = wall_s > 0 ? (double)n / wall_s : 0;
    eb_stat_drift(v, n, scratch, &s->steady);
    eb_stat_summarize_ms(v, n, &s->stages[EB_STAGE_E2E]);
    free(scratch);
}

/* An ok slot of `n` end-to-end samples `base` ms, every `spike_every`-th `spike` times longer,
 * measured over `wall_s` seconds. */
static void crafted_slot(struct eb_slot_result *s, size_t n, double base, size_t spike_every,
                         double spike, double wall_s)
{
    double *v = calloc(n ? n : 1, sizeof(double));
    ASSERT_TRUE(v != NULL);
    for (size_t i = 0; i < n; i++)
        v[i] = base * (spike_every && i % spike_every == 0 ? spike : 1.0) + 0.001 * (double)(i % 7);
    slot_of(s, v, n, wall_s);
    free(v);
}

/* The command line's defaults (cli_opts.def). */
static const struct eb_validity_criteria defaults = {.min_frames = 200,
                                                     .min_duration_s = 10.0,
                                                     .max_drift_pct = 5.0,
                                                     .max_others_cpu_pct = 10.0,
                                                     .max_cov_pct = 0};

static int has_reason(const struct eb_validity *v, const char *text)
{
    for (int i = 0; i < v->n_reasons; i++)
        if (strstr(v->reasons[i], text) != NULL)
            return 1;
    return 0;
}

EB_TEST(valid_slot_has_no_reason)
{
    struct eb_run_result r;
    eb_run_result_init(&r);
    crafted_slot(&r.slots[0], 600, 10.0, 0, 1.0, 12.0);
    struct eb_validity v;
    eb_validity_judge_slot(&r.slots[0], &defaults, NULL, &v);
    ASSERT_EQ_INT(v.evaluated, 1);
    ASSERT_EQ_INT(v.valid, 1);
    ASSERT_EQ_INT(v.n_reasons, 0);
    ASSERT_STREQ(eb_validity_verdict(&v), "VALID");
    /* the run: rgb valid, thermal skipped (not judged) */
    r.criteria = defaults;
    eb_report_finish(&r);
    ASSERT_STREQ(eb_validity_verdict(&r.validity), "VALID");
    ASSERT_EQ_INT(r.slots[1].validity.evaluated, 0);
    ASSERT_TRUE(eb_validity_verdict(&r.slots[1].validity) == NULL);
    ASSERT_TRUE(isnan(r.energy_per_frame_mj));
    eb_run_result_fini(&r);
}

EB_TEST(too_few_frames_and_too_short)
{
    struct eb_slot_result s;
    memset(&s, 0, sizeof(s));
    s.name = "rgb";
    crafted_slot(&s, 150, 10.0, 0, 1.0, 1.5);
    struct eb_validity v;
    eb_validity_judge_slot(&s, &defaults, NULL, &v);
    ASSERT_STREQ(eb_validity_verdict(&v), "INVALID");
    ASSERT_EQ_INT(v.n_reasons, 2);
    ASSERT_CONTAINS(v.reasons[0], "150 measured frames, fewer than --min_frames 200");
    ASSERT_CONTAINS(v.reasons[1], "measured for 1.50 s, shorter than --min_duration_s 10");
    /* --min_duration_s 0 switches the time check off; --min_frames 100 accepts 150 */
    struct eb_validity_criteria loose = {
        .min_frames = 100, .min_duration_s = 0, .max_drift_pct = 5};
    eb_validity_judge_slot(&s, &loose, NULL, &v);
    ASSERT_STREQ(eb_validity_verdict(&v), "VALID");
}

/* A steady state with a long tail (every 10th frame twice as long, CoV ~ 27%: two slots sharing
 * a GPU look like this) is VALID by default: the spread is real and the percentiles report it. */
EB_TEST(a_steady_tail_is_valid_by_default)
{
    struct eb_slot_result s;
    memset(&s, 0, sizeof(s));
    crafted_slot(&s, 400, 10.0, 10, 2.0, 20.0);
    ASSERT_TRUE(s.stages[EB_STAGE_E2E].cov > 0.05);
    ASSERT_EQ_INT(s.steady.blocks, EB_STAT_DRIFT_BLOCKS);
    ASSERT_TRUE(s.steady.drift_pct < 1.0);
    struct eb_validity v;
    eb_validity_judge_slot(&s, &defaults, NULL, &v);
    ASSERT_STREQ(eb_validity_verdict(&v), "VALID");
}

/* --max_cov_pct caps the spread when a user asks for it. */
EB_TEST(max_cov_pct_caps_the_spread_when_set)
{
    struct eb_slot_result s;
    memset(&s, 0, sizeof(s));
    crafted_slot(&s, 400, 10.0, 10, 2.0, 20.0);
    struct eb_validity_criteria capped = defaults;
    capped.max_cov_pct = 5;
    struct eb_validity v;
    eb_validity_judge_slot(&s, &capped, NULL, &v);
    ASSERT_STREQ(eb_validity_verdict(&v), "INVALID");
    ASSERT_EQ_INT(v.n_reasons, 1);
    ASSERT_CONTAINS(v.reasons[0], "CoV");
    ASSERT_CONTAINS(v.reasons[0], "above --max_cov_pct 5");
    /* a looser cap accepts it */
    capped.max_cov_pct = 50;
    eb_validity_judge_slot(&s, &capped, NULL, &v);
    ASSERT_EQ_INT(v.valid, 1);
    /* just under 5% passes a 5% cap: every 10th frame 1.15x gives CoV ~ 4.3% */
    capped.max_cov_pct = 5;
    crafted_slot(&s, 400, 10.0, 10, 1.15, 20.0);
    ASSERT_TRUE(s.stages[EB_STAGE_E2E].cov < 0.05);
    eb_validity_judge_slot(&s, &capped, NULL, &v);
    ASSERT_EQ_INT(v.valid, 1);
}

/* A step in the middle of the window (a neighbour started, the clock fell): the last two fifths
 * run 20% slower. Not a steady state, and the reason names the frames. */
EB_TEST(a_step_in_the_window_is_not_a_steady_state)
{
    struct eb_slot_result s;
    memset(&s, 0, sizeof(s));
    double v[400];
    for (size_t i = 0; i < 400; i++)
        v[i] = (i < 240 ? 10.0 : 12.0) + 0.001 * (double)(i % 7);
    slot_of(&s, v, 400, 20.0);
    ASSERT_NEAR(s.steady.drift_pct, 20.0, 0.1);
    ASSERT_EQ_INT(s.steady.worst_block, 3);
    struct eb_validity v_;
    eb_validity_judge_slot(&s, &defaults, NULL, &v_);
    ASSERT_STREQ(eb_validity_verdict(&v_), "INVALID");
    ASSERT_EQ_INT(v_.n_reasons, 1);
    ASSERT_CONTAINS(v_.reasons[0], "drifted: the median of measured frames 240-319 was 12.00");
    ASSERT_CONTAINS(v_.reasons[0], "more than --max_drift_pct 5): not a steady state");
    /* a 4% step stays within the default 5% */
    for (size_t i = 0; i < 400; i++)
        v[i] = (i < 240 ? 10.0 : 10.4) + 0.001 * (double)(i % 7);
    slot_of(&s, v, 400, 20.0);
    eb_validity_judge_slot(&s, &defaults, NULL, &v_);
    ASSERT_STREQ(eb_validity_verdict(&v_), "VALID");
}

/* Other processes busy during the pass: the machine was not quiet. Unknown is not judged. */
EB_TEST(a_busy_machine_is_not_quiet)
{
    struct eb_slot_result s;
    memset(&s, 0, sizeof(s));
    crafted_slot(&s, 400, 10.0, 0, 1.0, 20.0);
    struct eb_validity_criteria c = defaults;
    c.max_others_cpu_pct = 10;
    s.others_cpu_pct = 47.25;
    struct eb_validity v;
    eb_validity_judge_slot(&s, &c, NULL, &v);
    ASSERT_STREQ(eb_validity_verdict(&v), "INVALID");
    ASSERT_EQ_INT(v.n_reasons, 1);
    ASSERT_CONTAINS(v.reasons[0], "other processes used 47.2% of the CPUs' time during the "
                                  "measured pass, more than --max_others_cpu_pct 10: the machine "
                                  "was not quiet");
    s.others_cpu_pct = 3.0;
    eb_validity_judge_slot(&s, &c, NULL, &v);
    ASSERT_STREQ(eb_validity_verdict(&v), "VALID");
    s.others_cpu_pct = NAN;
    eb_validity_judge_slot(&s, &c, NULL, &v);
    ASSERT_STREQ(eb_validity_verdict(&v), "VALID");
    /* 100 switches it off */
    s.others_cpu_pct = 99.0;
    c.max_others_cpu_pct = 100;
    eb_validity_judge_slot(&s, &c, NULL, &v);
    ASSERT_STREQ(eb_validity_verdict(&v), "VALID");
}

/* Under 50 frames the drift is not judged (a fifth would be a handful of frames). */
EB_TEST(too_few_frames_for_drift_are_not_judged)
{
    struct eb_slot_result s;
    memset(&s, 0, sizeof(s));
    double v[49];
    for (size_t i = 0; i < 49; i++)
        v[i] = i < 30 ? 10.0 : 20.0;
    slot_of(&s, v, 49, 20.0);
    ASSERT_EQ_INT(s.steady.blocks, 0);
    struct eb_validity_criteria few = defaults;
    few.min_frames = 10;
    struct eb_validity v_;
    eb_validity_judge_slot(&s, &few, NULL, &v_);
    ASSERT_STREQ(eb_validity_verdict(&v_), "VALID");
}

EB_TEST(throttled_run_is_invalid)
{
    struct eb_run_result r;
    eb_run_result_init(&r);
    r.criteria = defaults;
    crafted_slot(&r.slots[0], 600, 10.0, 0, 1.0, 12.0);
    crafted_slot(&r.slots[1], 600, 12.0, 0, 1.0, 12.0);
    r.sys.nvml_used = 1;
    r.sys.n_gpus = 1;
    r.sys.gpus[0].throttle_reasons = EB_SAMPLER_THROTTLE_SLOWDOWN & ~(uint64_t)0;
    ASSERT_TRUE(eb_report__throttle_reasons(&r.sys) != 0);
    eb_report_finish(&r);
    ASSERT_STREQ(eb_validity_verdict(&r.validity), "INVALID");
    ASSERT_TRUE(has_reason(&r.validity, "the GPU throttled during the run"));
    /* once for the run, not once per slot */
    ASSERT_EQ_INT(r.validity.n_reasons, 1);
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        ASSERT_STREQ(eb_validity_verdict(&r.slots[i].validity), "INVALID");
        ASSERT_TRUE(has_reason(&r.slots[i].validity, "throttled"));
    }
    /* a GPU that is only idle is not throttled */
    r.sys.gpus[0].throttle_reasons = 0;
    eb_report_finish(&r);
    ASSERT_STREQ(eb_validity_verdict(&r.validity), "VALID");
    eb_run_result_fini(&r);
}

EB_TEST(run_collects_slot_reasons_failures_and_interruption)
{
    struct eb_run_result r;
    eb_run_result_init(&r);
    r.criteria = defaults;
    crafted_slot(&r.slots[0], 50, 10.0, 0, 1.0, 0.5);
    r.slots[1].status = EB_SLOT_FAILED;
    snprintf(r.slots[1].message, sizeof(r.slots[1].message), "failed to load t.onnx");
    r.interrupted = 1;
    r.interrupt_signal = 2; /* SIGINT */
    eb_report_finish(&r);
    ASSERT_STREQ(eb_validity_verdict(&r.validity), "INVALID");
    ASSERT_TRUE(has_reason(&r.validity, "interrupted by SIGINT"));
    ASSERT_TRUE(has_reason(&r.validity, "slot rgb: 50 measured frames"));
    ASSERT_TRUE(has_reason(&r.validity, "slot rgb: measured for 0.50 s"));
    ASSERT_TRUE(has_reason(&r.validity, "slot thermal: failed: failed to load t.onnx"));
    ASSERT_STREQ(eb_validity_verdict(&r.slots[1].validity), "INVALID");
    eb_run_result_fini(&r);

    /* nothing ran at all */
    eb_run_result_init(&r);
    r.criteria = defaults;
    eb_report_finish(&r);
    ASSERT_STREQ(eb_validity_verdict(&r.validity), "INVALID");
    ASSERT_TRUE(has_reason(&r.validity, "no slot ran"));
    eb_run_result_fini(&r);
}

EB_TEST(verdict_in_report_json_and_md)
{
    struct eb_run_result r;
    eb_run_result_init(&r);
    r.criteria = defaults;
    r.version = "0.1.0";
    snprintf(r.mode, sizeof(r.mode), "rgb");
    crafted_slot(&r.slots[0], 150, 10.0, 0, 1.0, 12.0);
    eb_report_finish(&r);

    struct eb_json_writer w;
    eb_json_writer_init_mem(&w, 0);
    eb_report_write_json(&r, &w);
    char *text = eb_json_writer_take(&w, NULL);
    ASSERT_TRUE(text != NULL);
    struct eb_json_value *root = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_json_parse(text, strlen(text), &root, &d));
    ASSERT_STREQ(eb_json_path(root, "validity/verdict")->str, "INVALID");
    ASSERT_EQ_INT(eb_json_path(root, "validity/reasons")->n, 1);
    ASSERT_CONTAINS(eb_json_path(root, "validity/reasons/0")->str,
                    "slot rgb: 150 measured frames, fewer than --min_frames 200");
    ASSERT_NEAR(eb_json_path(root, "validity/criteria/min_frames")->num, 200, 0);
    ASSERT_NEAR(eb_json_path(root, "validity/criteria/max_drift_pct")->num, 5, 0);
    ASSERT_NEAR(eb_json_path(root, "validity/criteria/max_cov_pct")->num, 0, 0);
    ASSERT_STREQ(eb_json_path(root, "slots/0/validity/verdict")->str, "INVALID");
    ASSERT_EQ_INT(eb_json_path(root, "slots/1/validity")->type, EB_JSON_NULL);
    ASSERT_STREQ(eb_json_path(root, "slots/0/latency_ms/end_to_end/ci_method")->str,
                 "order-statistic binomial, 95%");
    /* n = 150: a p50 interval, no p99 interval */
    ASSERT_EQ_INT(eb_json_path(root, "slots/0/latency_ms/end_to_end/p50_ci")->type, EB_JSON_OBJECT);
    ASSERT_NEAR(eb_json_path(root, "slots/0/latency_ms/end_to_end/p50_ci/low")->num,
                r.slots[0].stages[EB_STAGE_E2E].p50_ci.lo, 0);
    ASSERT_EQ_INT(eb_json_path(root, "slots/0/latency_ms/end_to_end/p99_ci")->type, EB_JSON_NULL);
    ASSERT_EQ_INT(eb_json_path(root, "history")->type, EB_JSON_NULL);
    /* the window's steady state: five block medians, drift 0 on a flat set */
    ASSERT_EQ_INT(eb_json_path(root, "slots/0/steady_state/blocks")->num, 5);
    ASSERT_EQ_INT(eb_json_path(root, "slots/0/steady_state/block_p50_ms")->n, 5);
    ASSERT_NEAR(eb_json_path(root, "slots/0/steady_state/block_p50_ms/2")->num,
                r.slots[0].steady.block_p50[2], 0);
    ASSERT_NEAR(eb_json_path(root, "slots/0/steady_state/drift_pct")->num,
                r.slots[0].steady.drift_pct, 0);
    ASSERT_EQ_INT(eb_json_path(root, "slots/1/steady_state")->type, EB_JSON_NULL);
    eb_json_free(root);
    free(text);

    char *md = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&md, &len);
    ASSERT_TRUE(fp != NULL);
    eb_report_write_md(&r, fp);
    ASSERT_TRUE(fclose(fp) == 0);
    /* the verdict comes before the Memory Safety Summary */
    const char *verdict = strstr(md, "> **Verdict: INVALID**");
    ASSERT_TRUE(verdict != NULL);
    ASSERT_TRUE(verdict < strstr(md, "## Memory Safety Summary"));
    ASSERT_CONTAINS(md, "> - slot rgb: 150 measured frames, fewer than --min_frames 200");
    ASSERT_CONTAINS(md, "**Verdict: INVALID** — 150 measured frames");
    ASSERT_CONTAINS(md, "| Stage | n | Mean ± std | CoV % | Min | p50 | p50 95% CI |");
    ASSERT_CONTAINS(md, "order-statistic binomial, 95%");
    ASSERT_CONTAINS(md, "| Steady state | median end-to-end of each fifth of the frames ");
    ASSERT_CONTAINS(
        md, "a steady state (no fifth of the frames' median end-to-end time more than 5.0%");
    free(md);
    eb_run_result_fini(&r);
}

EB_TEST(warmup_auto_stops_when_windows_agree)
{
    struct eb_warmup_auto w;
    eb_warmup_auto_init(&w);
    /* a cold start falling 30 -> 10 ms over the first 40 frames, then flat */
    int stopped_at = -1;
    for (int i = 0; i < 400 && stopped_at < 0; i++) {
        double ms = i < 40 ? 30.0 - 0.5 * i : 10.0 + 0.01 * (i % 3);
        if (eb_warmup_auto_add(&w, ms))
            stopped_at = i + 1;
    }
    /* windows 1-20 (median ~25), 21-40 (~15), 41-60 (10): the 4th window (61-80) agrees with
     * the 3rd within 2% */
    ASSERT_EQ_INT(stopped_at, 80);
    ASSERT_EQ_INT(w.stable, 1);
    ASSERT_EQ_INT(eb_warmup_auto_add(&w, 99.0), 1); /* stays stable */
}

EB_TEST(warmup_auto_needs_two_windows_and_tolerates_noise_within_2pct)
{
    struct eb_warmup_auto w;
    eb_warmup_auto_init(&w);
    for (int i = 0; i < 39; i++)
        ASSERT_EQ_INT(eb_warmup_auto_add(&w, 10.0), 0);
    ASSERT_EQ_INT(eb_warmup_auto_add(&w, 10.0), 1); /* frame 40: two equal windows */

    /* medians alternating 10 and 10.5 (5% apart) never settle */
    eb_warmup_auto_init(&w);
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ_INT(eb_warmup_auto_add(&w, (i / 20) % 2 ? 10.5 : 10.0), 0);
    /* 1.5% apart settle at the second window */
    eb_warmup_auto_init(&w);
    int got = 0;
    for (int i = 0; i < 40; i++)
        got = eb_warmup_auto_add(&w, i < 20 ? 10.0 : 10.15);
    ASSERT_EQ_INT(got, 1);
}

EB_TEST(warmup_auto_cap_makes_the_slot_invalid)
{
    struct eb_slot_result s;
    memset(&s, 0, sizeof(s));
    crafted_slot(&s, 600, 10.0, 0, 1.0, 12.0);
    s.warmup_auto = 1;
    s.warmup_stable = 0;
    s.frames_warmup = EB_WARMUP_AUTO_MAX_FRAMES;
    s.warmup_s = 7.5;
    struct eb_validity v;
    eb_validity_judge_slot(&s, &defaults, NULL, &v);
    ASSERT_STREQ(eb_validity_verdict(&v), "INVALID");
    ASSERT_CONTAINS(v.reasons[0], "--warmup auto: the median of 20-frame windows did not settle");
    s.warmup_stable = 1;
    eb_validity_judge_slot(&s, &defaults, NULL, &v);
    ASSERT_EQ_INT(v.valid, 1);
}

EB_TEST(criteria_table_covers_every_threshold)
{
    /* Every member of struct eb_validity_criteria is one row, read at its own offset: the
     * table report.json and assumptions.md render from cannot miss a threshold. */
    size_t n = 0, bytes = 0;
    const struct eb_validity_criterion *k = eb_validity_criteria_table(&n);
    struct eb_validity_criteria c = {.min_frames = 7,
                                     .min_duration_s = 1.5,
                                     .max_drift_pct = 2.5,
                                     .max_cov_pct = 3.5,
                                     .max_others_cpu_pct = 4.5,
                                     .max_drop_pct = 5.5};
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        bytes += k[i].type == EB_VALIDITY_CRITERION_UINT ? sizeof(uint64_t) : sizeof(double);
        ASSERT_TRUE(strncmp(k[i].option, "--", 2) == 0 && strcmp(k[i].option + 2, k[i].key) == 0);
        sum += eb_validity_criterion_value(&k[i], &c);
    }
    ASSERT_EQ_INT((int)bytes, (int)sizeof(struct eb_validity_criteria));
    ASSERT_TRUE(fabs(sum - (7 + 1.5 + 2.5 + 3.5 + 4.5 + 5.5)) < 1e-12);
}
