/*
 * The measurement core of `edgebench llm`: a loaded decoder with its KV cache as inputs and
 * outputs (model/llm.h names them), run as repetitions of a prefill of the prompt and a greedy
 * decode of `gen` tokens, each step's time recorded into a struct eb_llm_result.
 *
 *     struct eb_llm_io io;
 *     if (eb_llm_io_bind(&info, &io, &diag) != EB_OK) ...     // which input is which
 *     struct eb_llm_core c = {.be = be, .io = &io, .prompt_ids = ids, ...};
 *     eb_llm_core_run(&c, &result, &diag);
 *
 * A step: input_ids and position_ids [1, n] (n = the prompt, then 1), attention_mask [1, past +
 * n] of ones when the model has one, past_key_values.N.key|value [1, kv_heads, past, head_dim]
 * (the empty cache first, then the previous step's present.N.*, passed as they are: no copy),
 * then the argmax of the last row of logits. Its time runs from the call into the backend to
 * the chosen token: the prefill's forward alone is the prefill time, with the argmax it is the
 * time to first token. Everything is allocated before the first step.
 */
#ifndef EB_LLM_CORE_H
#define EB_LLM_CORE_H

#include <stdatomic.h>
#include <stdint.h>

#include "eb/backend.h"
#include "eb/nvtx.h"
#include "harness/results/llm_result.h"

/** Where each of a decoder's tensors is among the model's inputs and outputs. */
struct eb_llm_io {
    int layers;
    int ids, pos, mask;          /* input indices; mask -1 when the model has no attention_mask */
    int logits;                  /* output index */
    int past[EB_BACKEND_MAX_IO]; /* input index of past_key_values.(t/2).(key|value), t = 2l+v */
    int present[EB_BACKEND_MAX_IO]; /* output index of present.(t/2).(key|value) */
    enum eb_dtype kv_dtype;         /* float32 or float16 */
    int64_t kv_heads, head_dim;     /* from the past inputs' shapes */
    int64_t vocab;                  /* from logits' shape (-1 when dynamic there) */
};

/**
 * Finds the decoder's tensors by the names the common exports use (input_ids, position_ids,
 * attention_mask, past_key_values.N.key|value, logits, present.N.key|value). EB_ERR_UNSUPPORTED
 * with one line naming what is missing or unexpected (another input, a past without its present,
 * another dtype).
 */
EB_NODISCARD enum eb_status eb_llm_io_bind(const struct eb_model_info *info, struct eb_llm_io *io,
                                           struct eb_diag *diag);

/**
 * The token ids of a --prompt_ids file's text: whole numbers in 0..vocab-1 separated by spaces,
 * tabs, newlines or commas. `*ids_out` (malloc'd, caller frees) gets them, `*n_out` their count.
 * EB_ERR_FORMAT naming the first bad token (by its number) or an empty text, EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_llm_prompt_ids_parse(const char *text, int64_t vocab,
                                                    int64_t **ids_out, size_t *n_out,
                                                    struct eb_diag *diag);

/**
 * The greedy choice over a row of n float logits: the index of the first of the largest values,
 * NaN never the largest (0 when every value is NaN); -1 for n < 1. In blocks with independent
 * running maxima (the compiler's vectors), then the first index of that value in its block:
 * the same index as one scan with `>`, about four times faster (151936 logits: ~20 us).
 */
int64_t eb_llm_argmax_f32(const float *x, int64_t n);
/** The same choice over n float16 logits (IEEE binary16 bits; an ONNX Runtime model's fp16
 * logits): NaN never the largest, -0 equal to +0. */
int64_t eb_llm_argmax_f16(const uint16_t *x, int64_t n);

/* The NVTX range (domain edgebench.stage) around the measured repetitions, which gates
 * `llm --nsys`'s capture. */
#define EB_LLM_MEASURE_RANGE "llm:measure"

struct eb_llm_core {
    struct eb_backend *be;      /* loaded; borrowed */
    const struct eb_llm_io *io; /* borrowed */
    const int64_t *prompt_ids;  /* [prompt] token ids < vocab; borrowed */
    int64_t prompt, gen;        /* tokens */
    int64_t reps, warmup;       /* measured and warm-up repetitions */
    const struct eb_nvtx *nvtx; /* ranges "prefill" and "decode" per repetition, and
                                   EB_LLM_MEASURE_RANGE around the measured ones; may be NULL */
    int profile;      /* the backend was opened with cfg.profile: fill r->prof per phase */
    atomic_int *stop; /* non-zero: stop after the current step; borrowed */
    /* Called after each repetition (measured or not) on the caller's thread; may be NULL. */
    void (*rep_done)(void *ctx, int64_t rep, int warmup);
    void *ctx;
};

/**
 * Runs the warm-up and the measured repetitions into r's records (eb_llm_result_alloc'd for
 * c->reps x c->gen): r->reps_done, prefill_ns, ttft_ns, decode_ns, when each forward began
 * (prefill_at_ns, decode_at_ns), tokens, tokens_differ, and with c->profile the per-operator
 * table of each phase (r->prof). A backend that profiles as it goes (native) is read and reset
 * after each measured prefill and after each measured decode, the tables allocated before the
 * first repetition. A backend that profiles its session as a whole (eb_backend_ops.profile_runs:
 * ort) is reset before the first measured repetition and read once after the last, each phase's
 * table from the runs that were its forwards, with the runtime's own time of those runs as the
 * phase's forward time (a warning in r when the runtime's profile holds fewer of them than ran;
 * on a stop the repetitions that ended are read). A stop ends the current repetition, which is
 * not counted. A failure of the backend, or an
 * output of an unexpected shape, returns its status with the reason in `diag` (the repetitions
 * before it are kept).
 */
EB_NODISCARD enum eb_status eb_llm_core_run(const struct eb_llm_core *c, struct eb_llm_result *r,
                                            struct eb_diag *diag);

#endif
