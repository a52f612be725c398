/*
 * Decoder-only transformers (Llama 3.2 and Qwen2.5 families) as ONNX files, for
 * `edgebench model synth --arch llama|qwen2` and the LLM facts of `edgebench model info`.
 *
 *     struct eb_model_llm_config c;
 *     if (eb_model_llm_config(EB_MODEL_LLM_QWEN2, "0.5b", 2048, &c, &diag) != EB_OK) ...
 *     eb_model_llm_params(&c);                          // 494032768
 *     struct eb_model_llm_options o = {.cfg = c, .fp16 = 0, .seed = 0};
 *     eb_model_llm_synth_file(&o, "qwen.onnx", &diag);  // writes qwen.onnx (+ qwen.onnx.data)
 *
 * The graph (synth_llm.c says how it is built) takes `input_ids` and `position_ids` [batch,
 * sequence_length] int64 and `past_key_values.N.key|value` [batch, kv_heads,
 * past_sequence_length, head_dim], and returns `logits` [batch, sequence_length, vocab] and
 * `present.N.key|value` [batch, kv_heads, total_sequence_length, head_dim]. The causal mask comes
 * from position_ids against the key positions 0..total-1, so the cache must hold positions
 * 0..past-1 in order.
 */
#ifndef EB_MODEL_LLM_H
#define EB_MODEL_LLM_H

#include <stddef.h>
#include <stdint.h>

#include "eb/diag.h"
#include "model/model.h"

enum eb_model_llm_arch { EB_MODEL_LLM_LLAMA = 0, EB_MODEL_LLM_QWEN2 };

/* Weights above this many bytes go to one external data file beside the model. */
#define EB_MODEL_LLM_EXTERNAL_BYTES (UINT64_C(1) << 30)
#define EB_MODEL_LLM_CTX_MIN        16
#define EB_MODEL_LLM_CTX_MAX        131072

/** A family's architecture at one size: the numbers of its Hugging Face config.json. */
struct eb_model_llm_config {
    enum eb_model_llm_arch arch;
    char size[8]; /* "tiny", "0.5b", "1b" */
    int hidden, layers, heads, kv_heads, head_dim, intermediate, vocab;
    int ctx;           /* rows of the rotary tables: the longest sequence the file runs */
    int attn_bias;     /* biases on the q/k/v projections (qwen2) */
    int tied;          /* lm_head shares the embedding matrix */
    double rope_theta; /* base of the rotary frequencies */
    double rms_eps;
    int rope_llama3; /* Llama 3.x frequency scaling with the four values below */
    double rope_factor, rope_low_freq, rope_high_freq;
    int rope_orig_ctx;
};

/**
 * One integer member of struct eb_model_llm_config under its config.json name (`ctx` aside):
 * the metadata key "edgebench.llm.<name>" and the key in `model info --json`. The one list of
 * them is what the writer, the reader and the printers iterate.
 */
struct eb_model_llm_field {
    const char *name;
    size_t offset; /* of the int in struct eb_model_llm_config */
    long lo, hi;   /* the values a file may carry */
};

/** The fields (static storage); `*n_out` = their count. */
const struct eb_model_llm_field *eb_model_llm_fields(size_t *n_out);
/** The value of field `f` in `c`. */
int eb_model_llm_field_get(const struct eb_model_llm_config *c, const struct eb_model_llm_field *f);

/** "llama" / "qwen2"; static storage. */
const char *eb_model_llm_arch_name(enum eb_model_llm_arch a);

/**
 * The configuration of `arch` at `size` ("tiny" for both families; "0.5b" is Qwen2.5-0.5B's, so
 * qwen2 only; "1b" is Llama-3.2-1B's, so llama only) with rotary tables of `ctx` rows
 * (EB_MODEL_LLM_CTX_MIN..MAX). EB_ERR_INVALID_ARG, with a message naming the size and the arch
 * that has it, for another combination.
 */
EB_NODISCARD enum eb_status eb_model_llm_config(enum eb_model_llm_arch arch, const char *size,
                                                int ctx, struct eb_model_llm_config *out,
                                                struct eb_diag *diag);

/** Parameters as Hugging Face counts them (tied embedding once; rotary tables are not ones). */
uint64_t eb_model_llm_params(const struct eb_model_llm_config *c);
/** Parameters that are MatMul weights per token: every projection and lm_head (no embedding
 * lookup, norms or biases). */
uint64_t eb_model_llm_matmul_params(const struct eb_model_llm_config *c);
/**
 * FLOPs of a prefill of `n` tokens from an empty cache: 2 x matmul params per token, plus QK^T
 * and AV over the causal triangle (token i attends to i + 1 keys): 4 x layers x heads x head_dim
 * x n(n+1)/2.
 */
double eb_model_llm_prefill_flops(const struct eb_model_llm_config *c, int64_t n);
/** FLOPs of one decode token attending to `kv` keys (the cache including itself):
 * 2 x matmul params + 4 x layers x heads x head_dim x kv. */
double eb_model_llm_decode_flops(const struct eb_model_llm_config *c, int64_t kv);
/** KV-cache bytes one token adds: 2 (K and V) x layers x kv_heads x head_dim x `elem_bytes`. */
uint64_t eb_model_llm_kv_bytes_per_token(const struct eb_model_llm_config *c, int elem_bytes);

struct eb_model_llm_options {
    struct eb_model_llm_config cfg;
    int fp16; /* weights, activations, KV cache and logits in float16 (else float32) */
    uint32_t seed;
    uint64_t external_bytes; /* weights above this go to "<path>.data"; 0 means
                                EB_MODEL_LLM_EXTERNAL_BYTES (tests lower it) */
};

/**
 * Writes the model to `path`; when the weights exceed o->external_bytes they go to
 * "<path>.data" (64-byte aligned offsets) and the model refers to it by its base name. Same
 * options, same bytes. `*external_out` (may be NULL) says whether the data file was written.
 * EB_ERR_IO names the file that could not be written, EB_ERR_NOMEM.
 */
EB_NODISCARD enum eb_status eb_model_llm_synth_file(const struct eb_model_llm_options *o,
                                                    const char *path, int *external_out,
                                                    struct eb_diag *diag);

/** What `model info` prints for a decoder model (from its edgebench.llm.* metadata). */
struct eb_model_llm_facts {
    struct eb_model_llm_config cfg;
    int elem_bytes; /* 4 (fp32) or 2 (fp16) */
    int64_t n;      /* the context the FLOPs are for */
    uint64_t params, matmul_params, weight_bytes, kv_bytes_per_token, kv_bytes_at_n;
    double prefill_flops, prefill_flops_per_token, decode_flops;
};

/**
 * Reads the edgebench.llm.* metadata of `s` into `*out` with FLOPs at context `n` (0: the
 * model's ctx). Returns 0 when the model carries no such metadata, 1 when `*out` is filled, -1
 * (with `diag` set) when the metadata is there but broken.
 */
int eb_model_llm_facts(const struct eb_model_summary *s, int64_t n, struct eb_model_llm_facts *out,
                       struct eb_diag *diag);

#endif
