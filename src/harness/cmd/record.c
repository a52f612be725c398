/*
 * A finished run as a history record (record.h): the glue of the commands between the result,
 * the configuration that produced it and the environment, and the history database.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/json.h"
#include "eb/log.h"
#include "harness/cmd/config.h"
#include "harness/cmd/record.h"
#include "harness/report/report.h"
#include "harness/results/llm_result.h"

static void copy_str(char *dst, size_t size, const char *src)
{
    if (snprintf(dst, size, "%s", src != NULL ? src : "") < 0)
        dst[0] = '\0';
}

/* The verdict's reasons joined with "; " into buf. */
static void join_reasons(const struct eb_validity *v, char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < v->n_reasons && off < size; i++)
        off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? "; " : "", v->reasons[i]);
}

/* The environment fingerprint of a record: versions, the machine, NVML's name for the GPU that
 * ran where the sampler had one, and the fingerprint over them. */
static void fill_env(struct eb_history_run *out, const struct eb_env_facts *env,
                     const char *version, const char *ort_version,
                     const struct eb_system_summary *sys)
{
    copy_str(out->edgebench_version, sizeof(out->edgebench_version), version);
    copy_str(out->ort_version, sizeof(out->ort_version), ort_version);
    if (env != NULL) {
        copy_str(out->hostname, sizeof(out->hostname), env->hostname);
        copy_str(out->os, sizeof(out->os), env->os);
        copy_str(out->kernel, sizeof(out->kernel), env->kernel);
        copy_str(out->cpu_model, sizeof(out->cpu_model), env->cpu_model);
        out->n_cpus = env->n_cpus;
        copy_str(out->gpu_name, sizeof(out->gpu_name), env->gpu_name);
        copy_str(out->gpu_driver, sizeof(out->gpu_driver), env->gpu_driver);
        copy_str(out->l4t_release, sizeof(out->l4t_release), env->l4t_release);
        copy_str(out->power_mode, sizeof(out->power_mode), env->power_mode);
    }
    /* NVML's name for the GPU that ran, where the sampler had one. */
    if (sys->nvml_used && sys->n_gpus > 0 && sys->gpus[0].name[0] != '\0')
        copy_str(out->gpu_name, sizeof(out->gpu_name), sys->gpus[0].name);
    eb_history_fingerprint(out);
}

/* Zeroes `out` and keeps the configuration echo of `cfg` (NULL: none). EB_ERR_NOMEM. */
static enum eb_status begin_record(struct eb_history_run *out, const struct eb_config *cfg,
                                   struct eb_diag *diag)
{
    memset(out, 0, sizeof(*out));
    if (cfg != NULL) {
        struct eb_json_writer w;
        eb_json_writer_init_mem(&w, 0);
        eb_config_write_json(cfg, &w);
        out->config_json = eb_json_writer_take(&w, NULL);
        if (out->config_json == NULL)
            return eb_diag_fail(diag, EB_ERR_NOMEM,
                                "history: out of memory for the configuration echo");
    }
    return EB_OK;
}

static void slot_from_result(const struct eb_slot_result *s, const struct eb_run_result *r,
                             const char *precision, struct eb_history_slot *out)
{
    out->index = s->index;
    copy_str(out->name, sizeof(out->name), s->name);
    copy_str(out->status, sizeof(out->status), eb_slot_status_name(s->status));
    copy_str(out->message, sizeof(out->message), s->message);
    copy_str(out->model, sizeof(out->model), s->model_path);
    copy_str(out->model_sha256, sizeof(out->model_sha256), s->model_sha256);
    out->model_size = s->model_size;
    copy_str(out->backend, sizeof(out->backend), s->backend);
    copy_str(out->backend_version, sizeof(out->backend_version), s->backend_version);
    copy_str(out->device, sizeof(out->device), s->device);
    copy_str(out->provider, sizeof(out->provider), s->provider);
    copy_str(out->precision, sizeof(out->precision), s->status != EB_SLOT_SKIPPED ? precision : "");
    copy_str(out->model_precision, sizeof(out->model_precision), s->model_precision);
    copy_str(out->compute_precision, sizeof(out->compute_precision), s->compute_precision);
    out->input_w = s->input_w;
    out->input_h = s->input_h;
    out->frames = s->frames_measured;
    out->warmup_frames = s->frames_warmup;
    out->wall_s = s->status == EB_SLOT_OK ? s->wall_s : NAN;
    out->fps = s->status == EB_SLOT_OK ? s->throughput_fps : NAN;
    out->mem_peak_bytes = s->mem_peak_bytes;
    /* The energy is the run's: it is this slot's only when the other measured nothing. */
    const struct eb_slot_result *other = &r->slots[1 - s->index];
    out->energy_per_frame_mj =
        s->frames_measured > 0 && other->frames_measured == 0 ? r->energy_per_frame_mj : NAN;
    out->map50_95 = s->accuracy != NULL ? s->accuracy->map50_95 : NAN;
    out->map50 = s->accuracy != NULL ? s->accuracy->map50 : NAN;
    copy_str(out->verdict, sizeof(out->verdict), eb_validity_verdict(&s->validity));
    join_reasons(&s->validity, out->reasons, sizeof(out->reasons));
    if (s->status == EB_SLOT_OK) {
        memcpy(out->stages, s->stages, sizeof(s->stages));
        out->stages[EB_HISTORY_PIPELINE] = s->pipeline;
    }
}

enum eb_status eb_history_from_result(const struct eb_run_result *r, const struct eb_config *cfg,
                                      const struct eb_env_facts *env, const char *version,
                                      const char *ort_version, struct eb_history_run *out,
                                      struct eb_diag *diag)
{
    static const char *const precisions[] = {"fp32", "fp16", "int8"}; /* cli_opts.def order */
    enum eb_status st = begin_record(out, cfg, diag);
    if (st != EB_OK)
        return st;
    copy_str(out->started_at, sizeof(out->started_at), r->started_at);
    copy_str(out->kind, sizeof(out->kind), "run");
    copy_str(out->mode, sizeof(out->mode), r->mode);
    copy_str(out->command_line, sizeof(out->command_line), r->command_line);
    out->duration_s = r->duration_s;
    out->exit_code = r->exit_code;
    out->interrupted = r->interrupted;
    copy_str(out->verdict, sizeof(out->verdict), eb_validity_verdict(&r->validity));
    join_reasons(&r->validity, out->reasons, sizeof(out->reasons));
    copy_str(out->output_dir, sizeof(out->output_dir), r->output_dir);
    out->energy_per_frame_mj = r->energy_per_frame_mj;
    fill_env(out, env, version, ort_version, &r->sys);
    const char *precision = "";
    if (cfg != NULL && cfg->precision >= 0 && (size_t)cfg->precision < EB_ARRAY_LEN(precisions))
        precision = precisions[cfg->precision];
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        slot_from_result(&r->slots[i], r, precision, &out->slots[i]);
    return EB_OK;
}

enum eb_status eb_history_from_llm(const struct eb_llm_result *r, const struct eb_config *cfg,
                                   const struct eb_env_facts *env, const char *version,
                                   const char *ort_version, struct eb_history_run *out,
                                   struct eb_diag *diag)
{
    enum eb_status st = begin_record(out, cfg, diag);
    if (st != EB_OK)
        return st;
    copy_str(out->started_at, sizeof(out->started_at), r->started_at);
    copy_str(out->kind, sizeof(out->kind), EB_HISTORY_KIND_LLM);
    copy_str(out->mode, sizeof(out->mode), "llm");
    copy_str(out->command_line, sizeof(out->command_line), r->command_line);
    out->duration_s = r->duration_s;
    out->exit_code = r->exit_code;
    out->interrupted = r->interrupted;
    copy_str(out->verdict, sizeof(out->verdict), eb_validity_verdict(&r->validity));
    join_reasons(&r->validity, out->reasons, sizeof(out->reasons));
    copy_str(out->output_dir, sizeof(out->output_dir), r->output_dir);
    out->energy_per_frame_mj = NAN;
    fill_env(out, env, version, ort_version, &r->sys);
    for (int i = 0; i < EB_NUM_SLOTS; i++) { /* a decoder run has no camera slot */
        out->slots[i].index = i;
        copy_str(out->slots[i].name, sizeof(out->slots[i].name), i ? "thermal" : "rgb");
        copy_str(out->slots[i].status, sizeof(out->slots[i].status), "skipped");
    }
    struct eb_history_llm *l = &out->llm;
    const struct eb_llm_model *m = &r->model;
    copy_str(l->model, sizeof(l->model), m->path);
    copy_str(l->model_sha256, sizeof(l->model_sha256), m->sha256);
    l->model_size = m->file_bytes;
    copy_str(l->arch, sizeof(l->arch), m->arch);
    copy_str(l->size, sizeof(l->size), m->size);
    l->params = m->params;
    copy_str(l->dtype, sizeof(l->dtype), m->dtype);
    l->prompt = (int)r->w.prompt;
    l->gen = (int)r->w.gen;
    l->reps = (int)r->w.reps;
    l->ctx = (int)r->w.ctx;
    l->seed = r->w.seed;
    copy_str(l->backend, sizeof(l->backend), r->backend);
    copy_str(l->backend_version, sizeof(l->backend_version), r->backend_version);
    copy_str(l->device, sizeof(l->device), r->device);
    copy_str(l->provider, sizeof(l->provider), r->provider);
    copy_str(l->precision, sizeof(l->precision), r->precision);
    l->threads = r->threads;
    l->ttft = r->ttft;
    l->prefill = r->prefill;
    l->decode = r->decode;
    l->prefill_tok_s = r->prefill_tps;
    l->prefill_tok_s_std = r->prefill_tps_std;
    l->decode_tok_s = r->decode_tps;
    l->decode_tok_s_std = r->decode_tps_std;
    l->prefill_mfu = r->mfu;
    l->decode_mbu = r->bw_util;
    l->weight_bytes = m->weight_bytes;
    l->kv_bytes = r->kv_bytes_final;
    l->peak_mem_bytes = r->mem_peak_bytes;
    copy_str(l->verdict, sizeof(l->verdict), eb_validity_verdict(&r->validity));
    join_reasons(&r->validity, l->reasons, sizeof(l->reasons));
    return EB_OK;
}

enum eb_status eb_history_store(const char *path, struct eb_history_run *rec,
                                struct eb_history_receipt *out, struct eb_diag *diag)
{
    struct eb_history *h = NULL;
    memset(out, 0, sizeof(*out));
    /* its key chosen here, so that the report can name it (the id is the database's own) */
    enum eb_status st = rec->uuid[0] != '\0' ? EB_OK : eb_history_uuid_new(rec->uuid, diag);
    if (st == EB_OK)
        st = eb_history_open(path, 1, &h, diag);
    if (st == EB_OK)
        st = eb_history_append(h, rec, &out->id, diag);
    if (st == EB_OK) {
        snprintf(out->uuid, sizeof(out->uuid), "%s", rec->uuid);
        out->spooled = eb_history_spooled(h);
        snprintf(out->where, sizeof(out->where), "%s", eb_history_where(h));
        (void)eb_history_take_note(h, out->note, sizeof(out->note));
    }
    eb_history_close(h);
    return st;
}

int eb_history_record(const char *db, eb_history_fill_fn fill, const void *ctx,
                      const struct eb_log *log, struct eb_history_receipt *out, char *why,
                      size_t why_size)
{
    memset(out, 0, sizeof(*out));
    char path[4096];
    struct eb_diag d = {0};
    const int have = eb_history_path(db, path, sizeof(path), &d);
    if (have == 0)
        return 0; /* --db none */
    struct eb_history_run *rec = calloc(1, sizeof(*rec));
    enum eb_status st = have < 0      ? d.status
                        : rec == NULL ? eb_diag_fail(&d, EB_ERR_NOMEM, "out of memory")
                                      : EB_OK;
    if (st == EB_OK) {
        struct eb_env_facts facts;
        eb_report_env_facts(&facts);
        st = fill(ctx, &facts, rec, &d);
    }
    if (st == EB_OK)
        st = eb_history_store(path, rec, out, &d);
    eb_history_run_fini(rec);
    free(rec);
    if (st != EB_OK) {
        eb_log_msg(log, EB_LOG_WARN,
                   "history: the run was not recorded: %s (--db none switches the history off)",
                   d.msg);
        copy_str(why, why_size, d.msg);
        return -1;
    }
    /* kept in the spool: a warning; runs uploaded from it: news */
    if (out->note[0] != '\0')
        eb_log_msg(log, out->spooled ? EB_LOG_WARN : EB_LOG_INFO, "history: %s", out->note);
    if (!out->spooled)
        eb_log_msg(log, EB_LOG_INFO,
                   "history: recorded as run %lld in %s (edgebench history, edgebench diff)",
                   (long long)out->id, out->where);
    return 0;
}
