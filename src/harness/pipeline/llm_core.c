/*
 * The measurement core of `edgebench llm` (llm_core.h).
 */
#include "harness/pipeline/llm_core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/clock.h"
#include "eb/number.h"

/* "<prefix>N.key" / "<prefix>N.value": the cache tensor t = 2N (key) or 2N + 1 (value), or -1. */
static int cache_slot(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) != 0)
        return -1;
    const char *p = name + n;
    int layer = 0, digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 6) {
        layer = layer * 10 + (*p++ - '0');
        digits++;
    }
    if (digits == 0 || *p != '.')
        return -1;
    if (strcmp(p + 1, "key") == 0)
        return 2 * layer;
    if (strcmp(p + 1, "value") == 0)
        return 2 * layer + 1;
    return -1;
}

static enum eb_status not_decoder(struct eb_diag *diag, const char *what, const char *name)
{
    return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                        "the model is not a decoder edgebench llm can run: %s%s%s; it needs "
                        "input_ids, position_ids and past_key_values.N.key|value in, logits and "
                        "present.N.key|value out (as `edgebench model synth --arch` and the "
                        "common ONNX exports name them)",
                        what, name[0] ? " " : "", name);
}

enum eb_status eb_llm_io_bind(const struct eb_model_info *info, struct eb_llm_io *io,
                              struct eb_diag *diag)
{
    memset(io, 0, sizeof(*io));
    io->ids = io->pos = io->mask = io->logits = -1;
    for (size_t i = 0; i < EB_BACKEND_MAX_IO; i++)
        io->past[i] = io->present[i] = -1;
    int n_past = 0, n_present = 0;
    for (size_t i = 0; i < info->n_inputs; i++) {
        const struct eb_io_desc *d = &info->inputs[i];
        int t = cache_slot(d->name, "past_key_values.");
        if (strcmp(d->name, "input_ids") == 0 || strcmp(d->name, "position_ids") == 0 ||
            strcmp(d->name, "attention_mask") == 0) {
            if (d->dtype != EB_DTYPE_I64 || d->rank != 2)
                return not_decoder(diag, "this input is not int64 [batch, length]:", d->name);
            *(d->name[0] == 'i' ? &io->ids : d->name[0] == 'p' ? &io->pos : &io->mask) = (int)i;
        } else if (t >= 0 && t < EB_BACKEND_MAX_IO && io->past[t] < 0 && d->rank == 4 &&
                   (d->dtype == EB_DTYPE_F32 || d->dtype == EB_DTYPE_F16)) {
            io->past[t] = (int)i;
            n_past++;
            if (n_past == 1) {
                io->kv_dtype = d->dtype;
                io->kv_heads = d->shape[1];
                io->head_dim = d->shape[3];
            } else if (d->dtype != io->kv_dtype || d->shape[1] != io->kv_heads ||
                       d->shape[3] != io->head_dim) {
                return not_decoder(diag, "its cache inputs differ in dtype or shape, at", d->name);
            }
        } else {
            return not_decoder(diag, "it has the input", d->name);
        }
    }
    for (size_t i = 0; i < info->n_outputs; i++) {
        const struct eb_io_desc *d = &info->outputs[i];
        int t = cache_slot(d->name, "present.");
        if (strcmp(d->name, "logits") == 0) {
            io->logits = (int)i;
            io->vocab = d->rank == 3 ? d->shape[2] : -1;
        } else if (t >= 0 && t < EB_BACKEND_MAX_IO && io->present[t] < 0) {
            io->present[t] = (int)i;
            n_present++;
        }
    }
    if (io->ids < 0 || io->pos < 0)
        return not_decoder(diag, io->ids < 0 ? "no input input_ids" : "no input position_ids", "");
    if (io->logits < 0)
        return not_decoder(diag, "no output logits", "");
    if (n_past == 0 || n_past % 2 != 0)
        return not_decoder(diag, "no complete KV cache among its inputs", "");
    io->layers = n_past / 2;
    for (int t = 0; t < 2 * io->layers; t++) {
        char name[64];
        if (io->past[t] < 0) {
            snprintf(name, sizeof(name), "past_key_values.%d.%s", t / 2, t % 2 ? "value" : "key");
            return not_decoder(diag, "no input", name);
        }
        if (io->present[t] < 0) {
            snprintf(name, sizeof(name), "present.%d.%s", t / 2, t % 2 ? "value" : "key");
            return not_decoder(diag, "no output", name);
        }
    }
    if (io->kv_heads <= 0 || io->head_dim <= 0)
        return not_decoder(diag, "its cache inputs have no fixed kv_heads and head_dim", "");
    return EB_OK;
}

enum eb_status eb_llm_prompt_ids_parse(const char *text, int64_t vocab, int64_t **ids_out,
                                       size_t *n_out, struct eb_diag *diag)
{
    static const char seps[] = " \t\r\n,";
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    const char *p = text;
    for (;;) {
        p += strspn(p, seps);
        if (*p == '\0')
            break;
        const size_t len = strcspn(p, seps);
        char buf[24];
        long long v = -1;
        if (len < sizeof(buf)) {
            memcpy(buf, p, len);
            buf[len] = '\0';
            if (eb_number_parse_int(buf, &v) != EB_NUMBER_OK)
                v = -1;
        }
        if (v < 0 || v >= vocab) {
            free(ids);
            return eb_diag_fail(diag, EB_ERR_FORMAT,
                                "token %zu is not a whole number in 0..%lld (the model's "
                                "vocabulary); give token ids separated by spaces or commas",
                                n + 1, (long long)vocab - 1);
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            int64_t *g = realloc(ids, cap * sizeof(*ids));
            if (g == NULL) {
                free(ids);
                return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
            }
            ids = g;
        }
        ids[n++] = v;
        p += len;
    }
    if (n == 0)
        return eb_diag_fail(diag, EB_ERR_FORMAT, "no token id in it");
    *ids_out = ids;
    *n_out = n;
    return EB_OK;
}

/* An order-preserving integer key of a float16's bits (NaN aside: its magnitude bits are above
 * +inf's 0x7c00). */
static int32_t f16_key(uint16_t h)
{
    return (h & 0x8000u) ? -(int32_t)(h & 0x7fffu) : (int32_t)h;
}

int64_t eb_llm_argmax_f16(const uint16_t *x, int64_t n)
{
    int64_t best = -1;
    int32_t bk = 0;
    for (int64_t i = 0; i < n; i++) {
        if ((x[i] & 0x7fffu) > 0x7c00u)
            continue;
        const int32_t k = f16_key(x[i]);
        if (best < 0 || k > bk) {
            bk = k;
            best = i;
        }
    }
    return n < 1 ? -1 : best < 0 ? 0 : best;
}

int64_t eb_llm_argmax_f32(const float *x, int64_t n)
{
    enum { LANES = 32, BLOCK = 4096 };
    float best = -INFINITY;
    int64_t at = -1; /* the block holding the first of the largest, once one is above -inf */
    for (int64_t b0 = 0; b0 < n; b0 += BLOCK) {
        const int64_t end = n - b0 > BLOCK ? b0 + BLOCK : n;
        float m[LANES];
        for (int l = 0; l < LANES; l++)
            m[l] = -INFINITY;
        int64_t i = b0;
        for (; i + LANES <= end; i += LANES)
            for (int l = 0; l < LANES; l++)
                m[l] = x[i + l] > m[l] ? x[i + l] : m[l];
        for (; i < end; i++)
            m[0] = x[i] > m[0] ? x[i] : m[0];
        for (int l = 1; l < LANES; l++)
            m[0] = m[l] > m[0] ? m[l] : m[0];
        if (m[0] > best) {
            best = m[0];
            at = b0;
        }
    }
    for (int64_t i = at < 0 ? 0 : at; i < n; i++) /* -inf or NaN only: the first -inf */
        if (x[i] == best)
            return i;
    return n < 1 ? -1 : 0;
}

/* The argmax of the last row of logits [1, n, vocab]; -1 for another shape or dtype. */
static int64_t last_row_argmax(const struct eb_tensor *t)
{
    if (t->rank != 3 || t->shape[0] != 1 || t->shape[1] < 1 || t->shape[2] < 1 || t->data == NULL)
        return -1;
    const int64_t v = t->shape[2], row = (t->shape[1] - 1) * v;
    int64_t best = 0;
    if (t->dtype == EB_DTYPE_F32) {
        best = eb_llm_argmax_f32((const float *)t->data + row, v);
    } else if (t->dtype == EB_DTYPE_F16) {
        best = eb_llm_argmax_f16((const uint16_t *)t->data + row, v);
    } else {
        return -1;
    }
    return best;
}

struct run_state {
    const struct eb_llm_core *c;
    int incremental; /* --profile, the backend read and reset after each phase (native); 0 where
                        it profiles the session as a whole (profile_runs: ort) or is off */
    struct eb_tensor in[EB_BACKEND_MAX_IO];
    struct eb_tensor out[EB_BACKEND_MAX_IO];
    size_t n_in, n_out;
    int64_t *pos;  /* [prompt + gen] 0, 1, 2, ... */
    int64_t *mask; /* [prompt + gen] ones */
    int64_t token; /* the last chosen token */
    uint64_t at;   /* when the last step's forward began (eb_clock_ns) */
    float dummy;   /* the data of an empty cache */
};

/* One forward of `n` tokens (ids) at positions past..past+n-1, then the argmax. */
static enum eb_status step(struct run_state *s, const int64_t *ids, int64_t n, int64_t past,
                           uint64_t *forward_ns, uint64_t *total_ns, struct eb_diag *diag)
{
    const struct eb_llm_io *io = s->c->io;
    s->in[io->ids] =
        (struct eb_tensor){.dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, n}, .data = (void *)ids};
    s->in[io->pos] = (struct eb_tensor){
        .dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, n}, .data = s->pos + past};
    if (io->mask >= 0)
        s->in[io->mask] = (struct eb_tensor){
            .dtype = EB_DTYPE_I64, .rank = 2, .shape = {1, past + n}, .data = s->mask};
    for (int t = 0; t < 2 * io->layers; t++) {
        struct eb_tensor *p = &s->in[io->past[t]];
        p->dtype = io->kv_dtype;
        p->rank = 4;
        p->shape[0] = 1;
        p->shape[1] = io->kv_heads;
        p->shape[2] = past;
        p->shape[3] = io->head_dim;
        p->data = past == 0 ? (void *)&s->dummy : s->out[io->present[t]].data;
    }
    const uint64_t t0 = eb_clock_ns();
    s->at = t0;
    enum eb_status st = eb_backend_infer(s->c->be, s->in, s->n_in, s->out, s->n_out, NULL, diag);
    const uint64_t t1 = eb_clock_ns();
    if (st != EB_OK)
        return st;
    s->token = last_row_argmax(&s->out[io->logits]);
    const uint64_t t2 = eb_clock_ns();
    if (s->token < 0 || s->out[io->logits].shape[1] != n)
        return eb_diag_fail(diag, EB_ERR_BACKEND,
                            "the model's logits are not float [1, %lld, vocab] after %lld tokens; "
                            "edgebench llm reads the last row's argmax",
                            (long long)n, (long long)n);
    for (int t = 0; t < 2 * io->layers; t++) {
        const struct eb_tensor *o = &s->out[io->present[t]];
        if (o->rank != 4 || o->dtype != io->kv_dtype || o->shape[1] != io->kv_heads ||
            o->shape[2] != past + n || o->shape[3] != io->head_dim)
            return eb_diag_fail(diag, EB_ERR_BACKEND,
                                "the model's present.%d.%s is not [1, %lld, %lld, %lld] after a "
                                "step of %lld tokens on a cache of %lld: its KV cache cannot be "
                                "passed on",
                                t / 2, t % 2 ? "value" : "key", (long long)io->kv_heads,
                                (long long)(past + n), (long long)io->head_dim, (long long)n,
                                (long long)past);
    }
    *forward_ns = t1 - t0;
    *total_ns = t2 - t0;
    return EB_OK;
}

/* Adds the backend's profile since its last reset to phase `p`'s table, then resets it. */
static enum eb_status take_profile(const struct eb_llm_core *c, struct eb_llm_result *r,
                                   enum eb_llm_phase p, struct eb_diag *diag)
{
    struct eb_backend_profile bp;
    struct eb_llm_phase_prof *t = &r->prof[p];
    enum eb_status st = eb_backend_profile_get(c->be, &bp, diag);
    if (st != EB_OK)
        return st;
    if (bp.n_nodes != t->n)
        return eb_diag_fail(diag, EB_ERR_BACKEND,
                            "the backend's profile changed from %zu to %zu nodes between runs",
                            t->n, bp.n_nodes);
    for (size_t i = 0; i < bp.n_nodes; i++)
        t->nodes[i].ms += bp.nodes[i].total_ms;
    t->runs += bp.runs;
    t->run_ms += bp.run_total_ms;
    eb_backend_profile_reset(c->be);
    return EB_OK;
}

/* The phases' tables, one entry a node of the backend's profile, before anything is timed. */
static enum eb_status alloc_profile(const struct eb_llm_core *c, struct eb_llm_result *r,
                                    struct eb_diag *diag)
{
    struct eb_backend_profile bp;
    enum eb_status st = eb_backend_profile_get(c->be, &bp, diag);
    if (st != EB_OK)
        return st;
    for (int p = 0; p < EB_LLM_PHASES; p++) {
        struct eb_llm_phase_prof *t = &r->prof[p];
        t->nodes = calloc(bp.n_nodes ? bp.n_nodes : 1, sizeof(*t->nodes));
        if (t->nodes == NULL)
            return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory for the profile");
        t->n = bp.n_nodes;
        for (size_t i = 0; i < bp.n_nodes; i++) {
            t->nodes[i].name = bp.nodes[i].name;
            t->nodes[i].op = bp.nodes[i].op;
            t->nodes[i].fused = bp.nodes[i].fused;
        }
    }
    r->profiled = 1;
    return EB_OK;
}

/* One repetition; `record` NULL for a warm-up one. Returns EB_ERR_CANCELLED on a stop. */
static enum eb_status repetition(struct run_state *s, struct eb_llm_result *r, int64_t rep,
                                 int record, struct eb_diag *diag)
{
    const struct eb_llm_core *c = s->c;
    uint64_t fwd = 0, total = 0;
    if (c->nvtx != NULL)
        eb_nvtx_push(c->nvtx, "prefill");
    enum eb_status st = step(s, c->prompt_ids, c->prompt, 0, &fwd, &total, diag);
    if (c->nvtx != NULL)
        eb_nvtx_pop(c->nvtx);
    if (st != EB_OK)
        return st;
    if (record) {
        r->prefill_ns[rep] = fwd;
        r->ttft_ns[rep] = total;
        r->prefill_at_ns[rep] = s->at;
        r->prof[EB_LLM_PREFILL].forward_ms += (double)fwd / 1e6;
    }
    if (s->incremental && (st = record ? take_profile(c, r, EB_LLM_PREFILL, diag) : EB_OK) != EB_OK)
        return st;
    int64_t *first = r->tokens;
    if (record && rep == 0)
        first[0] = s->token;
    else if (record && first[0] != s->token)
        r->tokens_differ = 1;
    if (c->nvtx != NULL)
        eb_nvtx_push(c->nvtx, "decode");
    for (int64_t j = 0; j < c->gen && st == EB_OK; j++) {
        if (atomic_load(c->stop) != 0) {
            st = EB_ERR_CANCELLED;
            break;
        }
        int64_t id = s->token;
        st = step(s, &id, 1, c->prompt + j, &fwd, &total, diag);
        if (st != EB_OK || !record)
            continue;
        r->decode_ns[rep * c->gen + j] = total;
        r->decode_at_ns[rep * c->gen + j] = s->at;
        r->prof[EB_LLM_DECODE].forward_ms += (double)fwd / 1e6;
        /* tokens[0] is the prefill's; step j yields token j + 1 (the last step's is not
         * kept: gen tokens are generated, the first by the prefill). */
        if (j + 1 < c->gen) {
            if (rep == 0)
                first[j + 1] = s->token;
            else if (first[j + 1] != s->token)
                r->tokens_differ = 1;
        }
    }
    if (c->nvtx != NULL)
        eb_nvtx_pop(c->nvtx);
    if (st == EB_OK && s->incremental) {
        if (record)
            st = take_profile(c, r, EB_LLM_DECODE, diag);
        else
            eb_backend_profile_reset(c->be); /* a warm-up's decode is not measured */
    }
    return st;
}

/*
 * A backend that profiles the session as a whole (profile_runs): each phase's table from the
 * runs that were its forwards, counted from the reset before the first measured repetition
 * (each repetition is 1 prefill then gen decode steps). The phase's forward time is the
 * runtime's own time of those runs (model_run), so that the coverage compares like with like
 * also where the runtime kept only some of them. `ranges`: [reps] scratch.
 */
static enum eb_status read_phases(const struct eb_llm_core *c, struct eb_llm_result *r,
                                  struct eb_run_range *ranges, struct eb_diag *diag)
{
    for (int p = 0; p < EB_LLM_PHASES; p++) {
        const uint64_t per = p == EB_LLM_PREFILL ? 1 : (uint64_t)c->gen;
        for (int64_t i = 0; i < r->reps_done; i++)
            ranges[i] = (struct eb_run_range){.first = (uint64_t)i * (1 + (uint64_t)c->gen) +
                                                       (p == EB_LLM_PREFILL ? 0 : 1),
                                              .count = per};
        struct eb_backend_profile bp;
        enum eb_status st = eb_backend_profile_runs(c->be, ranges, (size_t)r->reps_done, &bp, diag);
        if (st != EB_OK)
            return st;
        struct eb_llm_phase_prof *t = &r->prof[p];
        free(t->nodes);
        t->nodes = calloc(bp.n_nodes ? bp.n_nodes : 1, sizeof(*t->nodes));
        if (t->nodes == NULL) {
            t->n = 0;
            return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory for the profile");
        }
        t->n = bp.n_nodes;
        for (size_t i = 0; i < bp.n_nodes; i++)
            t->nodes[i] = (struct eb_llm_prof_node){.name = bp.nodes[i].name,
                                                    .op = bp.nodes[i].op,
                                                    .fused = bp.nodes[i].fused,
                                                    .ms = bp.nodes[i].total_ms};
        t->runs = bp.runs;
        t->run_ms = bp.run_total_ms;
        t->forward_ms = bp.run_total_ms;
        const uint64_t asked = per * (uint64_t)r->reps_done;
        if (bp.runs < asked)
            eb_llm_result_warn(r,
                               "--profile: the runtime's profile holds %llu of the %llu %s "
                               "forwards (it stops recording at its event limit); the %s table "
                               "covers those",
                               (unsigned long long)bp.runs, (unsigned long long)asked,
                               p == EB_LLM_PREFILL ? "prefill" : "decode",
                               p == EB_LLM_PREFILL ? "prefill" : "decode");
    }
    r->profiled = 1;
    return EB_OK;
}

enum eb_status eb_llm_core_run(const struct eb_llm_core *c, struct eb_llm_result *r,
                               struct eb_diag *diag)
{
    struct run_state *s = calloc(1, sizeof(*s));
    const size_t len = (size_t)(c->prompt + c->gen);
    if (s == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
    s->c = c;
    s->pos = malloc(len * sizeof(int64_t));
    s->mask = malloc(len * sizeof(int64_t));
    if (s->pos == NULL || s->mask == NULL) {
        free(s->pos);
        free(s->mask);
        free(s);
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < len; i++) {
        s->pos[i] = (int64_t)i;
        s->mask[i] = 1;
    }
    s->n_in = (size_t)(2 * c->io->layers + 2 + (c->io->mask >= 0));
    s->n_out = (size_t)(2 * c->io->layers + 1);
    const int by_runs = c->profile && eb_backend_ops_of(c->be)->profile_runs != NULL;
    s->incremental = c->profile && !by_runs;
    struct eb_run_range *ranges =
        by_runs ? calloc(c->reps > 0 ? (size_t)c->reps : 1, sizeof(*ranges)) : NULL;
    enum eb_status st = s->incremental ? alloc_profile(c, r, diag)
                        : by_runs && ranges == NULL
                            ? eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory for the profile")
                            : EB_OK;
    /* the cache outputs only come back as the next step's inputs: a device may keep them */
    unsigned char keep[EB_BACKEND_MAX_IO] = {0};
    for (int t = 0; t < 2 * c->io->layers; t++)
        keep[c->io->present[t]] = 1;
    if (st == EB_OK)
        st = eb_backend_keep_outputs(c->be, keep, s->n_out, diag);
    r->reps_done = 0;
    int measuring = 0; /* EB_LLM_MEASURE_RANGE pushed */
    for (int64_t k = 0; k < c->warmup + c->reps && st == EB_OK; k++) {
        if (atomic_load(c->stop) != 0) {
            st = EB_ERR_CANCELLED;
            break;
        }
        if (by_runs && k == c->warmup) /* the warm-up's runs are not measured */
            eb_backend_profile_reset(c->be);
        const int record = k >= c->warmup;
        const int64_t rep = record ? k - c->warmup : k;
        if (k == c->warmup && c->nvtx != NULL) {
            eb_nvtx_push(c->nvtx, EB_LLM_MEASURE_RANGE);
            measuring = 1;
        }
        st = repetition(s, r, rep, record, diag);
        if (st == EB_OK && record)
            r->reps_done = rep + 1;
        if (st == EB_OK && c->rep_done != NULL)
            c->rep_done(c->ctx, rep, !record);
    }
    if (measuring)
        eb_nvtx_pop(c->nvtx);
    if (by_runs && r->reps_done > 0 && (st == EB_OK || st == EB_ERR_CANCELLED)) {
        struct eb_diag pd = {0};
        const enum eb_status ps = read_phases(c, r, ranges, &pd);
        if (ps != EB_OK && st == EB_OK)
            st = eb_diag_fail_advise(diag, ps, pd.advice, "%s", pd.msg);
        else if (ps != EB_OK)
            eb_llm_result_warn(r, "--profile: %.200s", pd.msg);
    }
    free(ranges);
    free(s->pos);
    free(s->mask);
    free(s);
    return st;
}
