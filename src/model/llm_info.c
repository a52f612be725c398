/* eb_model_llm_facts: what `edgebench model info` says about a decoder model (model/llm.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model/llm.h"

static const char *meta(const struct eb_model_summary *s, const char *key)
{
    for (size_t i = 0; i < s->n_meta; i++)
        if (strcmp(s->meta[i].key, key) == 0)
            return s->meta[i].value;
    return NULL;
}

#define FIELD(n, m, lo, hi)                                                                        \
    {                                                                                              \
        n, offsetof(struct eb_model_llm_config, m), lo, hi                                         \
    }
static const struct eb_model_llm_field fields[] = {
    FIELD("ctx", ctx, EB_MODEL_LLM_CTX_MIN, EB_MODEL_LLM_CTX_MAX),
    FIELD("hidden_size", hidden, 1, 1L << 20),
    FIELD("num_hidden_layers", layers, 1, 4096),
    FIELD("num_attention_heads", heads, 1, 4096),
    FIELD("num_key_value_heads", kv_heads, 1, 4096),
    FIELD("head_dim", head_dim, 2, 4096),
    FIELD("intermediate_size", intermediate, 1, 1L << 22),
    FIELD("vocab_size", vocab, 1, 1L << 24),
    FIELD("attention_bias", attn_bias, 0, 1),
    FIELD("tie_word_embeddings", tied, 0, 1),
};

const struct eb_model_llm_field *eb_model_llm_fields(size_t *n_out)
{
    *n_out = EB_ARRAY_LEN(fields);
    return fields;
}

int eb_model_llm_field_get(const struct eb_model_llm_config *c, const struct eb_model_llm_field *f)
{
    int v;
    memcpy(&v, (const char *)c + f->offset, sizeof(v));
    return v;
}

/* edgebench.llm.<key> as an integer in [lo, hi] into *out; 0 when absent or out of range. */
static int meta_int(const struct eb_model_summary *s, const char *key, long lo, long hi, int *out)
{
    char full[64];
    snprintf(full, sizeof(full), "edgebench.llm.%s", key);
    const char *v = meta(s, full);
    char *end = NULL;
    if (v == NULL)
        return 0;
    errno = 0;
    const long n = strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < lo || n > hi)
        return 0;
    *out = (int)n;
    return 1;
}

int eb_model_llm_facts(const struct eb_model_summary *s, int64_t n, struct eb_model_llm_facts *out,
                       struct eb_diag *diag)
{
    const char *arch = meta(s, "edgebench.llm.arch"), *dtype = meta(s, "edgebench.llm.dtype");
    const char *size = meta(s, "edgebench.llm.size");
    struct eb_model_llm_config c;
    if (arch == NULL)
        return 0;
    memset(out, 0, sizeof(*out));
    memset(&c, 0, sizeof(c));
    c.arch = strcmp(arch, "qwen2") == 0 ? EB_MODEL_LLM_QWEN2 : EB_MODEL_LLM_LLAMA;
    snprintf(c.size, sizeof(c.size), "%s", size ? size : "?");
    int ok = (strcmp(arch, "llama") == 0 || strcmp(arch, "qwen2") == 0) && dtype != NULL &&
             (strcmp(dtype, "fp32") == 0 || strcmp(dtype, "fp16") == 0);
    for (size_t i = 0; i < EB_ARRAY_LEN(fields) && ok; i++) {
        int v = 0;
        ok = meta_int(s, fields[i].name, fields[i].lo, fields[i].hi, &v);
        memcpy((char *)&c + fields[i].offset, &v, sizeof(v));
    }
    if (!ok) {
        (void)eb_diag_fail(diag, EB_ERR_FORMAT,
                           "failed to read the decoder configuration: an edgebench.llm.* "
                           "metadata value is missing or out of range; synthesize the model again");
        return -1;
    }
    out->cfg = c;
    out->elem_bytes = strcmp(dtype, "fp16") == 0 ? 2 : 4;
    out->n = n > 0 ? n : c.ctx;
    out->params = eb_model_llm_params(&c);
    out->matmul_params = eb_model_llm_matmul_params(&c);
    out->weight_bytes = out->params * (uint64_t)out->elem_bytes;
    out->kv_bytes_per_token = eb_model_llm_kv_bytes_per_token(&c, out->elem_bytes);
    out->kv_bytes_at_n = out->kv_bytes_per_token * (uint64_t)out->n;
    out->prefill_flops = eb_model_llm_prefill_flops(&c, out->n);
    out->prefill_flops_per_token = out->prefill_flops / (double)out->n;
    out->decode_flops = eb_model_llm_decode_flops(&c, out->n);
    return 1;
}
