/*
 * The result of `edgebench llm` (harness/cmd/llm.c): one decoder model, measured as repetitions
 * of a prefill of `prompt` tokens followed by a greedy decode of `gen` tokens on the KV cache
 * (harness/pipeline/llm_core.c), and what is derived from those times.
 *
 *     struct eb_llm_result r;
 *     eb_llm_result_init(&r);
 *     eb_llm_result_alloc(&r, reps, gen);         // the records, before anything is timed
 *     ... the core fills prefill_ns / ttft_ns / decode_ns and reps_done ...
 *     eb_llm_result_summarize(&r);                // statistics, tokens/s, MFU, bandwidth
 *     eb_llm_result_fini(&r);
 *
 * Definitions (docs/report-schema.md, "kind llm", says them for users):
 *   - time to first token (TTFT) = the prefill's forward plus the choice of the first token
 *     (argmax of the last row of logits), per repetition;
 *   - prefill tokens/s = prompt / prefill time; decode tokens/s = gen / (sum of the gen decode
 *     steps) per repetition; both reported as mean ± std over the repetitions (llama-bench's
 *     pp<prompt> and tg<gen>);
 *   - a decode step = one forward of one token on the cache (the past grows from `prompt` to
 *     prompt + gen - 1) plus its argmax; its latency statistics pool every step of every
 *     repetition;
 *   - MFU (prefill) = the graph's FLOPs for the prompt / the mean prefill time / the device's
 *     dense peak for the precision; bandwidth utilisation (decode) = the bytes a step must read
 *     (every weight once, the whole KV cache) / the mean step time / the device's peak DRAM
 *     bandwidth. Both NAN where the device has no peak (the CPU; a GPU not in
 *     harness/metrics/peaks.c's table), with the reason in peak_why.
 */
#ifndef EB_LLM_RESULT_H
#define EB_LLM_RESULT_H

#include <stdint.h>

#include "eb/diag.h"
#include "harness/metrics/sampler.h"
#include "harness/metrics/stats.h"
#include "harness/results/result.h"
#include "harness/results/validity.h"

#define EB_LLM_MAX_WARNINGS 8
/* A run with fewer measured repetitions has no spread to speak of: INVALID. */
#define EB_LLM_MIN_REPS 3

/** The phases of a repetition, as the per-operator profile splits them. */
enum eb_llm_phase { EB_LLM_PREFILL = 0, EB_LLM_DECODE, EB_LLM_PHASES };

/** One node of a phase's profile. */
struct eb_llm_prof_node {
    const char *name, *op, *fused; /* the backend's strings (valid while it is loaded) */
    double ms;                     /* summed over the phase's runs */
};

/** --profile: the per-operator table of one phase over the measured repetitions. */
struct eb_llm_phase_prof {
    size_t n;
    struct eb_llm_prof_node *nodes; /* owned; execution order */
    uint64_t runs;                  /* forwards profiled (a prefill: 1 a repetition) */
    double run_ms;                  /* the backend's own run time over them */
    double forward_ms;              /* the same forwards as the core timed them (a backend
                                       that profiles its session as a whole, ort: the
                                       runtime's own time of those runs, = run_ms) */
};

/** The model as the run saw it (its edgebench.llm.* metadata, model/llm.h). */
struct eb_llm_model {
    char path[4096];
    char sha256[65];
    uint64_t file_bytes;
    char arch[16];  /* "llama", "qwen2" */
    char size[8];   /* "tiny", "0.5b", "1b" */
    char dtype[8];  /* "fp32", "fp16": the weights, KV cache and logits */
    int elem_bytes; /* 4 or 2 */
    int layers, hidden, heads, kv_heads, head_dim, vocab;
    int ctx; /* the longest sequence the file runs (its rotary tables) */
    uint64_t params, matmul_params;
    uint64_t weight_bytes;       /* every parameter at elem_bytes */
    uint64_t kv_bytes_per_token; /* K and V of every layer */
};

/** What was asked. */
struct eb_llm_workload {
    int64_t prompt, gen, reps, warmup, ctx;
    uint32_t seed;
    char prompt_source[4096]; /* "seeded" or the --prompt_ids file */
    char prompt_sha256[65];   /* of the --prompt_ids file's bytes; "" for a seeded prompt */
    double target_tps;        /* --target_tps: the decode rate to keep up with; 0 none */
    int profile;              /* --profile was asked */
};

struct eb_llm_result {
    const char *version; /* borrowed */
    char started_at[32];
    char command_line[4096];
    char output_dir[4096];
    double duration_s;
    int exit_code;
    int interrupted; /* a signal stopped it: the figures cover the repetitions that ended */
    int failed;      /* the model could not be loaded or run: message says why */
    char message[EB_DIAG_MSG_MAX];
    /* The run history: where the run was recorded (history_db "" = not recorded), its id there
     * and its key across databases, as run's (results/result.h) */
    char history_db[4096];
    int64_t history_run_id;
    char history_uuid[37];

    struct eb_llm_model model;
    struct eb_llm_workload w;
    char backend[32], backend_version[64], backend_library[512];
    char backend_reason[256]; /* "--backend ort", "auto: ..." */
    char device[16];          /* "cpu", "cuda" */
    char provider[64];        /* what ran it (ONNX Runtime's execution provider, native's device) */
    char precision[8];        /* --precision (the model's dtype when not given) */
    int elem_bytes;           /* bytes of a weight and a cache element as computed in
                                 `precision` (the native engine converts an fp32 file's weights
                                 to fp16): what the memory figures and a decode step's bytes
                                 count */
    char device_name[64];     /* the GPU's name; "" on the CPU */
    int threads;              /* --threads (0 = the runtime's default) */

    /* Records (owned; eb_llm_result_alloc): reps_done repetitions were measured. */
    int64_t reps_done;
    uint64_t *prefill_ns;    /* [reps] the prefill forward */
    uint64_t *ttft_ns;       /* [reps] prefill + first token */
    uint64_t *decode_ns;     /* [reps x gen] step j of repetition i at i * gen + j */
    uint64_t *prefill_at_ns; /* [reps] when each prefill's forward began (CLOCK_MONOTONIC) */
    uint64_t *decode_at_ns;  /* [reps x gen] when each decode step's forward began */
    int64_t *tokens;         /* [gen] the greedy tokens of the first measured repetition */
    int tokens_differ;       /* a later repetition produced other tokens (it should not) */
    int profiled;            /* --profile: prof[] holds the phases' per-operator tables */
    struct eb_llm_phase_prof prof[EB_LLM_PHASES];
    struct eb_trace_result trace; /* --trace: trace.json (frames[0] = the decode steps in it) */

    /* Derived (eb_llm_result_summarize). Milliseconds. */
    struct eb_stat_summary ttft, prefill, decode;
    double prefill_tps, prefill_tps_std; /* over repetitions */
    double decode_tps, decode_tps_std;
    double prefill_flops;         /* the prompt's prefill (set by the caller, model/llm.h) */
    double decode_flops;          /* per step, averaged over the steps' cache lengths (caller) */
    double decode_bytes;          /* per step: weights + the KV cache read, averaged (caller) */
    double prefill_tflops_s;      /* achieved */
    double decode_gbs;            /* achieved, 10^9 bytes/s */
    double mfu;                   /* prefill, 0..1; NAN unknown */
    double bw_util;               /* decode, 0..1; NAN unknown */
    char peak_name[64];           /* the peak table's entry; "" none */
    double peak_tflops, peak_gbs; /* 0 unknown */
    char peak_why[160];           /* why there is no MFU / bandwidth figure; "" when there is */
    uint64_t kv_bytes_final;      /* the cache at prompt + gen */
    uint64_t kv_bytes_ctx;        /* the cache at --ctx, what the budget was checked against */
    uint64_t limit_bytes;         /* the memory limit; 0 none */
    uint64_t planned_bytes;       /* what the backend holds against it (native: its plan, the
                                     KV cache at --ctx included); 0 where it does not say */
    uint64_t mem_peak_bytes;      /* the process's peak RSS (or the device's peak) */
    char mem_peak_what[32];       /* "process RSS", "device" */
    struct eb_system_summary sys; /* the sampler's */
    struct eb_validity validity;  /* VALID / INVALID with reasons */
    char warnings[EB_LLM_MAX_WARNINGS][256];
    int n_warnings;
};

void eb_llm_result_init(struct eb_llm_result *r);
/** Allocates the records for `reps` repetitions of `gen` tokens; EB_ERR_NOMEM. */
EB_NODISCARD enum eb_status eb_llm_result_alloc(struct eb_llm_result *r, int64_t reps, int64_t gen);
void eb_llm_result_fini(struct eb_llm_result *r);
/** Adds a warning (dropped when the list is full). */
void eb_llm_result_warn(struct eb_llm_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * Fills the statistics, tokens/s, achieved FLOP/s and bytes/s, MFU and bandwidth utilisation
 * from the records and what the caller set: r->w, prefill_flops, decode_flops, decode_bytes
 * (the command computes them from the model, model/llm.h) and the peaks (peak_tflops,
 * peak_gbs; 0 = unknown, with peak_why). The records keep their order. EB_ERR_NOMEM when the
 * scratch of the statistics cannot be had (the figures are then left NAN/0).
 */
EB_NODISCARD enum eb_status eb_llm_result_summarize(struct eb_llm_result *r);

#endif
