#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "eb/clock.h"
#include "eb/engine.h"
#include "eb/path.h"
#include "eb/thread.h"
#include "harness/cmd/record.h"
#include "harness/cmd/run.h"
#include "harness/cmd/runlog.h"
#include "harness/cmd/trace.h"
#include "harness/metrics/prometheus.h"
#include "harness/metrics/sampler.h"
#include "harness/pipeline/accuracy.h"
#include "harness/pipeline/advice.h"
#include "harness/pipeline/annotate.h"
#include "harness/pipeline/budget.h"
#include "harness/pipeline/pipeline.h"
#include "harness/pipeline/slot.h"
#include "harness/report/report.h"
#include "harness/results/history.h"
#include "harness/results/sha256.h"
#include "model/model.h"

/* The embedded default: what `edgebench run` uses when no model is given. */
#define EB_DEFAULT_RGB_SOURCE     "synthetic=1280x720"
#define EB_DEFAULT_THERMAL_SOURCE "synthetic=640x512"

struct run_ctx {
    const struct eb_config *cfg;
    const struct eb_run_env *env;
    struct eb_runlog rl;
    struct eb_log log;
    struct eb_platform platform;
    char dir[4096];
    struct eb_slot slots[EB_NUM_SLOTS];
    int active[EB_NUM_SLOTS];           /* the mode uses this slot and it has a model */
    uint8_t *model_bytes[EB_NUM_SLOTS]; /* embedded default models, owned */
    size_t model_len[EB_NUM_SLOTS];
    char model_label[EB_NUM_SLOTS][64];
    struct eb_accuracy *acc[EB_NUM_SLOTS]; /* --data of the slot, owned; NULL = none */
    char data_source[EB_NUM_SLOTS][EB_SOURCE_PATH_MAX + 16];
    struct eb_run_result result;
    struct eb_budget budget;            /* the process's one memory budget */
    char limit_label[EB_NUM_SLOTS][96]; /* each slot's cap in messages (budget.h) */
    struct eb_prom *prom;               /* --prometheus: the live endpoint; NULL = off */
    int prom_live;                      /* the measured pass runs: frames go to prom */
};

/* `path` for a message: whole when short, else its start and end around "...". */
static const char *shown_path(const char *path, char *buf, size_t size)
{
    const size_t n = strlen(path), keep = (size - 4) / 2;
    if (n < size) {
        snprintf(buf, size, "%s", path);
        return buf;
    }
    snprintf(buf, size, "%.*s...%s", (int)keep, path, path + n - (size - 4 - keep));
    return buf;
}

enum eb_status eb_run_mkdir_p(const char *path, const char *flag, struct eb_diag *diag)
{
    char failed[4096], shown[128];
    size_t n = strlen(path);
    if (n == 0)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "%s: bad folder name", flag);
    /* Room for the run folder's name and its files' names below PATH_MAX. */
    if (n + EB_RUN_NAME_ROOM >= sizeof(failed))
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to create output folder %s: the path is too long (%zu bytes; "
                            "at most %zu); choose a shorter %s",
                            shown_path(path, shown, sizeof(shown)), n,
                            sizeof(failed) - EB_RUN_NAME_ROOM - 1, flag);
    const int err = eb_path_mkdir_p(path, failed, sizeof(failed));
    if (err != 0)
        return eb_diag_fail(diag, EB_ERR_IO,
                            "failed to create output folder %s: %s; choose another with %s DIR",
                            shown_path(failed, shown, sizeof(shown)), strerror(err), flag);
    return EB_OK;
}

enum eb_status eb_run_make_dir(const char *parent, const char *suffix, const char *flag,
                               char *dir_out, size_t size, struct eb_diag *diag)
{
    enum eb_status st = eb_run_mkdir_p(parent, flag, diag);
    if (st != EB_OK)
        return st;
    /* <YYYYmmdd-HHMMSS>.<mmm>-<suffix>: the milliseconds are raised past every folder of this
     * second already in `parent` (whatever its suffix), so that names sort in creation order. */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm tm;
    localtime_r(&now.tv_sec, &tm);
    char sec[32];
    size_t n = strftime(sec, sizeof(sec), "%Y%m%d-%H%M%S", &tm);
    int ms = (int)(now.tv_nsec / 1000000);
    DIR *d = opendir(parent);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        const char *f = e->d_name;
        if (strncmp(f, sec, n) == 0 && f[n] == '.' && isdigit((unsigned char)f[n + 1]) &&
            isdigit((unsigned char)f[n + 2]) && isdigit((unsigned char)f[n + 3]) &&
            f[n + 4] == '-') {
            int m = (f[n + 1] - '0') * 100 + (f[n + 2] - '0') * 10 + (f[n + 3] - '0');
            ms = m >= ms ? m + 1 : ms;
        }
    }
    if (d != NULL)
        closedir(d);
    for (; ms < 1000; ms++) {
        char shown[128];
        if ((size_t)snprintf(dir_out, size, "%s/%s.%03d-%s", parent, sec, ms, suffix) >= size ||
            strlen(dir_out) + EB_RUN_NAME_ROOM >= 4096)
            return eb_diag_fail(diag, EB_ERR_IO,
                                "failed to create a run folder under %s: the path is too long; "
                                "choose a shorter %s",
                                shown_path(parent, shown, sizeof(shown)), flag);
        if (mkdir(dir_out, 0755) == 0)
            return EB_OK;
        if (errno != EEXIST)
            return eb_diag_fail(diag, EB_ERR_IO,
                                "failed to create run folder %s: %s; choose another %s",
                                shown_path(dir_out, shown, sizeof(shown)), strerror(errno), flag);
    }
    return eb_diag_fail(diag, EB_ERR_IO,
                        "failed to create a run folder under %s: too many runs "
                        "this second",
                        parent);
}

/* Creates <output>/<YYYYmmdd-HHMMSS>.<mmm>-<mode> (eb_run_make_dir). */
static enum eb_status make_run_dir(struct run_ctx *rc, struct eb_diag *diag)
{
    static const char *const modes[] = {"rgb", "thermal", "dual"};
    return eb_run_make_dir(rc->cfg->output, modes[rc->cfg->mode], "--output", rc->dir,
                           sizeof(rc->dir), diag);
}

static int stopped(const struct eb_run_env *env)
{
    return atomic_load_explicit(env->stop, memory_order_relaxed) != 0;
}

/*
 * A file of the run folder that could not be written (`msg` names it and why): one error line,
 * a warning in the reports still to be written, and exit code 6. The run goes on: what can be
 * written still is.
 */
static void lost_file(struct run_ctx *rc, const char *msg)
{
    eb_log_msg(&rc->log, EB_LOG_ERROR, "%s", msg);
    eb_run_result_warn(&rc->result, "%.250s", msg);
    rc->result.files_lost++;
    rc->result.exit_code = EB_EXIT_WRITE_FAILED;
}

static int uses_slot(int mode, int slot)
{
    return mode == EB_MODE_DUAL || (mode == EB_MODE_RGB && slot == 0) ||
           (mode == EB_MODE_THERMAL && slot == 1);
}

void eb_run_model_setup(const struct eb_config *cfg, const struct eb_log *log,
                        struct eb_slot_setup *su)
{
    static const char *const kernels[] = {"auto", "ref", "avx2", "avx512", "neon"};
    su->backend_choice = cfg->backend;
    su->preprocess = cfg->preprocess;
    su->decode = cfg->decode;
    su->drift_frames = cfg->drift_frames;
    su->backend_cfg.device = (enum eb_device)cfg->device;
    su->backend_cfg.threads = (int)cfg->threads;
    su->backend_cfg.profile = cfg->profile;
    su->backend_cfg.passes = EB_ENGINE_PASS_ALL;
    if (cfg->no_fold)
        su->backend_cfg.passes &= ~(uint32_t)EB_ENGINE_PASS_CONST_FOLD;
    if (cfg->no_fuse)
        su->backend_cfg.passes &= ~(uint32_t)EB_ENGINE_PASS_FUSE;
    if (cfg->no_dce)
        su->backend_cfg.passes &= ~(uint32_t)EB_ENGINE_PASS_DCE;
    if (cfg->no_layout)
        su->backend_cfg.passes &= ~(uint32_t)EB_ENGINE_PASS_LAYOUT;
    if (cfg->no_lanes)
        su->backend_cfg.passes &= ~(uint32_t)EB_ENGINE_PASS_LANES;
    /* --precision int8 is the int8 path of a QDQ model (and a check that the model is int8). */
    su->need_int8 = cfg->precision == EB_CONFIG_PRECISION_INT8;
    su->backend_cfg.qdq = su->need_int8 ? EB_ENGINE_QDQ_INT8 : cfg->qdq;
    su->backend_cfg.precision = cfg->precision == EB_CONFIG_PRECISION_FP16
                                    ? EB_ENGINE_PRECISION_FP16
                                    : EB_ENGINE_PRECISION_FP32;
    su->backend_cfg.kernels = kernels[cfg->kernels];
    su->backend_cfg.mem_limit_bytes = cfg->gpu_mem_limit_bytes; /* run: the budget's share */
    su->backend_cfg.ort_lib = cfg->ort_lib;
    su->backend_cfg.int8 = su->need_int8;
    su->backend_cfg.trt_cache = cfg->trt_cache;
    su->backend_cfg.log = log;
    su->imgsz = (int)cfg->imgsz;
    su->conf = (float)cfg->conf;
    su->iou = (float)cfg->iou;
    su->profile_path = cfg->model_profile;
    su->head = cfg->head;
}

void eb_run_length_setup(const struct eb_config *cfg, int slot, struct eb_slot_setup *su)
{
    su->frames = cfg->frames;
    su->duration_s = cfg->duration;
    su->min_frames = cfg->min_frames;
    su->min_duration_s = cfg->min_duration_s;
    su->loop = !cfg->no_loop;
    su->fps = eb_config_slot_fps(cfg, slot);
    su->queue = cfg->queue;
    su->warmup = cfg->warmup;
    su->warmup_s = cfg->warmup_s;
    su->source_timeout_s = cfg->source_timeout_s;
    su->reconnect = cfg->reconnect;
}

/* Builds each slot's setup from the configuration; synthesizes the embedded default models. */
static void setup_slots(struct run_ctx *rc)
{
    const struct eb_config *cfg = rc->cfg;
    int embedded = cfg->model0 == NULL && cfg->model1 == NULL;
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        struct eb_slot_setup su;
        memset(&su, 0, sizeof(su));
        su.model_path = i == 0 ? cfg->model0 : cfg->model1;
        su.model_label = su.model_path;
        if (cfg->mode == EB_MODE_DUAL)
            su.source_text = i == 0 ? cfg->rgb_source : cfg->thermal_source;
        else
            su.source_text =
                cfg->source ? cfg->source : (i == 0 ? cfg->rgb_source : cfg->thermal_source);
        if (embedded && su.source_text == NULL)
            su.source_text = i == 0 ? EB_DEFAULT_RGB_SOURCE : EB_DEFAULT_THERMAL_SOURCE;
        su.synth_style = i == 0 ? EB_SYNTH_RGB : EB_SYNTH_THERMAL;
        eb_run_model_setup(cfg, &rc->log, &su);
        su.profile_path = eb_config_slot_profile(cfg, i);
        /* --threads 0 with two slots on the CPU: each slot gets half the online CPUs (at least
         * one), so that the two thread pools do not oversubscribe the cores. */
        const int two =
            cfg->mode == EB_MODE_DUAL && ((cfg->model0 != NULL && cfg->model1 != NULL) || embedded);
        if (cfg->threads == 0 && two && cfg->device == EB_DEVICE_CPU)
            su.backend_cfg.threads = rc->platform.n_cpus / 2 > 0 ? rc->platform.n_cpus / 2 : 1;
        if (rc->acc[i] != NULL) {
            /* The dataset's images are the source; "image_dir=DIR" only names it. */
            snprintf(rc->data_source[i], sizeof(rc->data_source[i]), "image_dir=%s",
                     rc->acc[i]->data_dir);
            su.source_text = rc->data_source[i];
            su.files = rc->acc[i]->files;
            su.n_files = rc->acc[i]->ds->n_images;
            su.accuracy = rc->acc[i];
            if (!cfg->conf_given)
                su.conf = (float)EB_RUN_DATA_CONF;
        }
        eb_run_length_setup(cfg, i, &su);
        su.budget = rc->budget;
        su.unified = rc->platform.is_jetson;
        su.log = &rc->log;
        su.stop = rc->env->stop;
        su.save_images = cfg->save_images;
        su.save_dir = rc->dir; /* filled before the pass */
        su.save_min_score =
            su.accuracy != NULL && !cfg->conf_given ? EB_ANNOTATE_MIN_SCORE_LOW_CONF : 0.0;
        rc->active[i] = uses_slot(cfg->mode, i) && (su.model_path != NULL || embedded);
        if (rc->active[i] && embedded) {
            struct eb_synth_options so = {.arch = i == 0 ? EB_SYNTH_YOLOV8 : EB_SYNTH_YOLO11,
                                          .scale = 'n',
                                          .imgsz = cfg->imgsz ? (int)cfg->imgsz : 640,
                                          .num_classes = 80,
                                          .seed = (uint32_t)i};
            snprintf(rc->model_label[i], sizeof(rc->model_label[i]), "embedded:%s%c-%d",
                     i == 0 ? "yolov8" : "yolo11", so.scale, so.imgsz);
            su.model_label = rc->model_label[i];
            struct eb_diag d = {0};
            if (eb_model_synth(&so, &rc->model_bytes[i], &rc->model_len[i], &d) == EB_OK) {
                su.model_bytes = rc->model_bytes[i];
                su.model_len = rc->model_len[i];
            } else {
                /* The slot fails at prepare with this reason. */
                su.model_path = NULL;
                eb_log_msg(&rc->log, EB_LOG_ERROR, "slot %s: %s", i == 0 ? "rgb" : "thermal",
                           d.msg);
            }
        }
        eb_slot_init(&rc->slots[i], i, &su);
        if (!rc->active[i]) {
            struct eb_slot *s = &rc->slots[i];
            if (!uses_slot(cfg->mode, i))
                snprintf(s->diag.msg, sizeof(s->diag.msg), "not used in --mode %s",
                         cfg->mode == EB_MODE_RGB ? "rgb" : "thermal");
            else
                snprintf(s->diag.msg, sizeof(s->diag.msg), "no weights given (--model%d)", i);
        }
    }
}

struct progress {
    struct run_ctx *rc;
    struct eb_slot *slots[EB_NUM_SLOTS];
    size_t n;
    int show;              /* draw the progress line */
    uint64_t ckpt_ns;      /* --checkpoint_s in ns; 0 = off */
    uint64_t next_ckpt_ns; /* when the next checkpoint is asked for */
    int ckpt_pending;      /* asked; written once every slot has answered */
};

/*
 * --checkpoint_s: every slot's thread summarises its frames so far between two frames; then the
 * run's result so far, marked "checkpoint", replaces report.json and report.md (atomically), so
 * that a board that loses power keeps a report. A slot that no longer answers (its pass is
 * over) holds the checkpoint back; the final report comes soon after.
 */
static void checkpoint_tick(struct progress *pg, uint64_t now)
{
    if (!pg->ckpt_pending) {
        if (now < pg->next_ckpt_ns)
            return;
        for (size_t i = 0; i < pg->n; i++)
            eb_slot_checkpoint_request(pg->slots[i]);
        pg->ckpt_pending = 1;
        return;
    }
    for (size_t i = 0; i < pg->n; i++)
        if (!eb_slot_checkpoint_ready(pg->slots[i]))
            return;
    pg->ckpt_pending = 0;
    pg->next_ckpt_ns = now + pg->ckpt_ns;
    struct run_ctx *rc = pg->rc;
    struct eb_run_result *c = malloc(sizeof(*c));
    if (c == NULL)
        return;
    /* A shallow copy: what it points to stays the run's and the slots'. */
    *c = rc->result;
    for (size_t i = 0; i < pg->n; i++) {
        struct eb_slot_result *r = &c->slots[pg->slots[i]->index];
        const int index = r->index;
        const char *name = r->name;
        *r = pg->slots[i]->ckpt;
        r->index = index;
        r->name = name;
    }
    c->checkpoint = 1;
    eb_report_finish(c);
    struct eb_diag d = {0};
    if (eb_report_write_file(c, rc->dir, EB_REPORT_FILE_JSON, &d) != EB_OK ||
        eb_report_write_file(c, rc->dir, EB_REPORT_FILE_MD, &d) != EB_OK)
        eb_log_msg(&rc->log, EB_LOG_WARN, "--checkpoint_s: %s", d.msg);
    free(c);
}

/* The progress line: per slot frames so far (of the frame goal), FPS, the median of the last
 * frames' end-to-end times; the monitored memory against the limit. */
static void progress_line(void *ctx, uint64_t t0)
{
    struct progress *pg = ctx;
    if (pg->ckpt_ns > 0)
        checkpoint_tick(pg, eb_clock_ns());
    if (!pg->show)
        return;
    char line[256];
    size_t off = 0;
    double el = (double)(eb_clock_ns() - t0) / 1e9;
    uint64_t mem = 0;
    for (size_t i = 0; i < pg->n; i++) {
        struct eb_slot *s = pg->slots[i];
        size_t n = atomic_load_explicit(&s->n_done, memory_order_acquire);
        double w[EB_SLOT_RECENT];
        size_t k = 0;
        for (size_t j = 0; j < EB_SLOT_RECENT && j < n; j++)
            w[k++] = (double)atomic_load_explicit(&s->recent_e2e_ns[j], memory_order_relaxed) / 1e6;
        for (size_t a = 1; a < k; a++)
            for (size_t b = a; b > 0 && w[b - 1] > w[b]; b--) {
                double t = w[b];
                w[b] = w[b - 1];
                w[b - 1] = t;
            }
        uint64_t m = atomic_load_explicit(&s->last_mem, memory_order_relaxed);
        if (m > mem)
            mem = m;
        char goal[32] = "";
        if (s->frames_goal > 0)
            snprintf(goal, sizeof(goal), "/%lld", (long long)s->frames_goal);
        off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s %zu%s %.1f FPS p50 %.1f ms",
                                off ? " | " : "", s->name, n, goal, el > 0 ? (double)n / el : 0.0,
                                k ? w[k / 2] : 0.0);
        if (off >= sizeof(line))
            break;
    }
    if (off < sizeof(line))
        snprintf(line + off, sizeof(line) - off, " | mem %.2f/%.2f GB", (double)mem / 1e9,
                 (double)pg->rc->budget.limit_bytes / 1e9);
    eb_runlog_progress(&pg->rc->rl, line);
}

/* --prometheus: one measured frame into the live endpoint's snapshot (the slot's thread). */
static void prom_frame(void *ctx, const struct eb_slot *s, const struct eb_frame_record *rec)
{
    const uint64_t end = rec->t_start_ns + rec->stage_ns[EB_STAGE_E2E];
    const int missed = eb_frame_missed(eb_frame_arrival_ms(rec), s->fps);
    eb_prom_frame(ctx, s->index, rec->stage_ns, end - s->phase_start_ns, missed, s->dropped,
                  atomic_load_explicit(&s->last_mem, memory_order_relaxed), s->mem_peak,
                  s->violations);
}

/* A failed slot's reason, with what to do, in run.log (and on the console). */
static void log_failure(struct run_ctx *rc, struct eb_slot *s)
{
    eb_advice_append(&s->diag);
    eb_log_msg(&rc->log, EB_LOG_ERROR, "slot %s failed: %s", s->name, s->diag.msg);
}

/* Measures the slots in `which` together through the pipeline (harness/pipeline/pipeline.h).
 * With `sampler`, its energy window is the pass's measured window (marks at the barrier and at
 * the window's end). */
static void run_pass(struct run_ctx *rc, const int *which, int show_progress, int checkpoints,
                     struct eb_sampler *sampler)
{
    struct progress pg = {.rc = rc, .show = show_progress};
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        if (which[i])
            pg.slots[pg.n++] = &rc->slots[i];
    pg.ckpt_ns = checkpoints ? (uint64_t)(rc->cfg->checkpoint_s * 1e9) : 0;
    pg.next_ckpt_ns = eb_clock_ns() + pg.ckpt_ns;
    const int live = rc->prom != NULL && rc->prom_live;
    const struct eb_pipeline_hooks hooks = {.tick = show_progress || pg.ckpt_ns > 0 ? progress_line
                                                                                    : NULL,
                                            .ctx = &pg,
                                            .frame = live ? prom_frame : NULL,
                                            .frame_ctx = rc->prom,
                                            .begin = eb_sampler_mark_begin,
                                            .end = eb_sampler_mark_end,
                                            .begin_ctx = sampler};
    eb_pipeline_run(pg.slots, pg.n, rc->env->stop, &hooks);
    if (show_progress)
        eb_runlog_progress(&rc->rl, "");
}

/* With --trace and a slot on the cuda device: CUPTI records every kernel from before the slots
 * load; without CUPTI the trace holds the CPU stages only (one warning says how to get it). */
static struct eb_cupti *start_cupti(struct run_ctx *rc)
{
    struct eb_trace_result *t = &rc->result.trace;
    snprintf(t->gpu, sizeof(t->gpu), "none");
    int cuda = 0;
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        cuda |= rc->active[i] && rc->slots[i].setup.backend_cfg.device == EB_DEVICE_CUDA;
    if (!cuda) {
        snprintf(t->gpu_note, sizeof(t->gpu_note), "no slot runs on the cuda device");
        return NULL;
    }
    struct eb_cupti *c = NULL;
    struct eb_diag d = {0};
    if (eb_cupti_start(NULL, &c, &d) == EB_OK) {
        eb_log_msg(&rc->log, EB_LOG_DEBUG, "--trace: CUPTI %u from %s records the kernels",
                   c->version, c->library);
        return c;
    }
    snprintf(t->gpu_note, sizeof(t->gpu_note), "%.200s", d.msg);
    eb_log_msg(&rc->log, EB_LOG_WARN, "--trace: %s; the trace holds the CPU stages only", d.msg);
    return NULL;
}

/* trace.json of the measured pass and the top kernels (trace.h); printed unless --quiet. */
static void write_trace(struct run_ctx *rc, const int *which, struct eb_cupti *gpu)
{
    struct eb_trace_result *t = &rc->result.trace;
    struct eb_diag d = {0};
    if (gpu != NULL && eb_cupti_stop(gpu, &d) != EB_OK) {
        snprintf(t->gpu_note, sizeof(t->gpu_note), "%.200s", d.msg);
        eb_log_msg(&rc->log, EB_LOG_WARN, "--trace: %s; kernels may be missing", d.msg);
    }
    if (gpu != NULL)
        snprintf(t->gpu, sizeof(t->gpu), "cupti");
    if (eb_trace_write(rc->dir, rc->slots, which, gpu, t, &d) != EB_OK) {
        lost_file(rc, d.msg);
        return;
    }
    if (gpu != NULL && gpu->dropped > 0)
        eb_run_result_warn(&rc->result, "--trace: %llu kernel records were not kept",
                           (unsigned long long)gpu->dropped);
    if (rc->cfg->quiet)
        return;
    fprintf(stdout, "trace: %s/trace.json\n", rc->dir);
    if (t->n_top > 0)
        eb_trace_print_kernels(stdout, "top kernels by total GPU time (trace):", t->top, t->n_top);
}

/* frames_<slot>.csv: every measured frame of the pass (eb_slot_write_frames_csv). */
static void write_frames_csv(struct run_ctx *rc, const int *which)
{
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        if (!which[i] || atomic_load(&rc->slots[i].n_done) == 0)
            continue;
        char path[4200];
        snprintf(path, sizeof(path), "%s/frames_%s.csv", rc->dir, rc->slots[i].name);
        struct eb_diag d = {0};
        if (eb_slot_write_frames_csv(&rc->slots[i], path, &d) != EB_OK)
            lost_file(rc, d.msg);
    }
}

static void summarize_pair(struct run_ctx *rc)
{
    struct eb_pair_result *p = &rc->result.pair;
    struct eb_slot *a = &rc->slots[0], *b = &rc->slots[1];
    if (rc->cfg->mode != EB_MODE_DUAL || a->status != EB_SLOT_OK || b->status != EB_SLOT_OK)
        return;
    size_t n = a->n_counted < b->n_counted ? a->n_counted : b->n_counted;
    if (n == 0)
        return;
    double *v = malloc(n * sizeof(double));
    if (v == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = a->records[i].stage_ns[EB_STAGE_E2E], y = b->records[i].stage_ns[EB_STAGE_E2E];
        v[i] = (double)(x > y ? x : y) / 1e6;
    }
    eb_stat_summarize_ms(v, n, &p->latency);
    free(v);
    /* Both slots share the barrier and the window. */
    uint64_t start = a->phase_start_ns;
    uint64_t end = a->window_end_ns < b->window_end_ns ? a->window_end_ns : b->window_end_ns;
    p->valid = 1;
    p->pairs = n;
    p->pair_fps = end > start ? (double)n / ((double)(end - start) / 1e9) : 0;
}

static void summarize_memory(struct run_ctx *rc)
{
    struct eb_mem_summary *m = &rc->result.mem;
    eb_budget_summarize(&rc->budget, m);
    m->unified = rc->platform.is_jetson;
    snprintf(m->monitored, sizeof(m->monitored), "%s",
             m->unified ? "system memory used (unified; CUDA allocator is a subset)"
                        : "process RSS");
    int any = 0;
    enum eb_limit_type type = EB_LIMIT_HARD;
    size_t off = 0;
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        struct eb_slot *s = &rc->slots[i];
        if (!rc->active[i] || s->be == NULL)
            continue;
        any = 1;
        if (s->info.limit_type < type)
            type = s->info.limit_type;
        if (s->info.limit_methods[0] != '\0' && off < sizeof(m->methods))
            off += (size_t)snprintf(m->methods + off, sizeof(m->methods) - off, "%sslot %s: %s",
                                    off ? "; " : "", s->name, s->info.limit_methods);
        m->violations += s->violations;
        if (s->mem_peak > m->peak_bytes)
            m->peak_bytes = s->mem_peak;
    }
    m->limit_type = any ? type : EB_LIMIT_UNAVAILABLE;
    if (off < sizeof(m->methods))
        snprintf(m->methods + off, sizeof(m->methods) - off, "%sper-frame monitoring of %s",
                 off ? "; " : "", m->monitored);
    struct eb_sysmem sm;
    if (eb_procfs_sysmem(&sm, NULL) == EB_OK)
        m->system_total_bytes = sm.total;
    const struct eb_system_summary *sys = &rc->result.sys;
    m->peak_system_used_bytes = (uint64_t)(sys->ram_used_max_mb * 1048576.0);
    m->peak_rss_bytes = (uint64_t)(sys->rss_max_mb * 1048576.0);
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        if (!m->unified && rc->slots[i].mem_peak > m->peak_rss_bytes)
            m->peak_rss_bytes = rc->slots[i].mem_peak;
        struct eb_slot_result *r = &rc->result.slots[i];
        if (r->backend_device_peak_bytes > m->peak_gpu_bytes)
            m->peak_gpu_bytes = r->backend_device_peak_bytes;
    }
    m->pressure_warnings = sys->pressure_samples;
}

static void banner(struct run_ctx *rc)
{
    enum eb_limit_type type = EB_LIMIT_HARD;
    int any = 0;
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        struct eb_slot *s = &rc->slots[i];
        if (rc->active[i] && s->status == EB_SLOT_OK) {
            any = 1;
            if (s->info.limit_type < type)
                type = s->info.limit_type;
        }
    }
    if (!any)
        type = EB_LIMIT_UNAVAILABLE;
    eb_log_msg(&rc->log, EB_LOG_INFO, "memory limit %.2f GB%s, limit type %s; methods: %s%s",
               (double)rc->budget.limit_bytes / 1e9,
               rc->budget.bound == EB_BUDGET_BOUND_UNIFIED_RAM
                   ? " (unified memory: MemTotal less 1 GB, under --gpu_mem_limit_gb)"
                   : "",
               eb_limit_type_name(type),
               type == EB_LIMIT_UNAVAILABLE ? "none enforceable on this device, " : "",
               rc->platform.is_jetson ? "per-frame monitoring of system memory (unified memory)"
                                      : "per-frame monitoring of process RSS");
}

/* --data: each slot's dataset, loaded before anything is written (a bad folder is a usage
 * error). */
static enum eb_status load_datasets(struct run_ctx *rc, struct eb_diag *diag)
{
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const char *data = eb_config_slot_data(rc->cfg, i);
        if (data == NULL)
            continue;
        enum eb_status st =
            eb_accuracy_create(data, eb_config_slot_class_map(rc->cfg, i), &rc->acc[i], diag);
        if (st != EB_OK) {
            eb_diag_prefix(diag, "slot %s: ", i == 0 ? "rgb" : "thermal");
            return st;
        }
    }
    return EB_OK;
}

/* --data: scores each slot's measured frames and writes detections_<slot>.json. */
static void score_datasets(struct run_ctx *rc)
{
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        struct eb_slot *s = &rc->slots[i];
        struct eb_slot_result *r = &rc->result.slots[i];
        if (rc->acc[i] == NULL || !rc->active[i])
            continue;
        snprintf(r->source, sizeof(r->source), "data=%s", rc->acc[i]->data_dir);
        if (s->status != EB_SLOT_OK || r->frames_measured == 0 || rc->acc[i]->n_scored == 0)
            continue;
        char name[64], path[4200];
        snprintf(name, sizeof(name), "detections_%s.json", s->name);
        snprintf(path, sizeof(path), "%s/%s", rc->dir, name);
        struct eb_diag d = {0};
        const double conf = rc->cfg->conf_given ? rc->cfg->conf : EB_RUN_DATA_CONF;
        if (eb_accuracy_finish(rc->acc[i], path, name, conf, !rc->cfg->conf_given, &r->accuracy,
                               &d) != EB_OK) {
            eb_log_msg(&rc->log, EB_LOG_ERROR, "slot %s: accuracy: %s", s->name, d.msg);
            eb_run_result_warn(&rc->result, "slot %s: accuracy not scored: %.200s", s->name, d.msg);
            continue;
        }
        const struct eb_accuracy_result *a = r->accuracy;
        if (a->detections_error[0] != '\0')
            lost_file(rc, a->detections_error);
        eb_log_msg(&rc->log, EB_LOG_INFO,
                   "slot %s: accuracy on %llu of %llu images of %s at conf %g: mAP50-95 %.4f, "
                   "mAP50 %.4f (%s)",
                   s->name, (unsigned long long)a->images, (unsigned long long)a->dataset_images,
                   a->dataset, a->conf, a->map50_95, a->map50, name);
        if (a->images < a->dataset_images)
            eb_run_result_warn(&rc->result,
                               "slot %s: accuracy over the %llu measured images of %llu (the "
                               "first in the dataset's order); --frames 0 scores them all",
                               s->name, (unsigned long long)a->images,
                               (unsigned long long)a->dataset_images);
    }
}

/*
 * Each used slot's fingerprints: the model's SHA-256 and size (of the file, or of the embedded
 * bytes), and an image_dir source's file list hash (eb_source_file_list_hash).
 */
static void fingerprint_models(struct run_ctx *rc)
{
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_setup *su = &rc->slots[i].setup;
        const struct eb_source_spec *spec = &rc->slots[i].spec;
        struct eb_slot_result *r = &rc->result.slots[i];
        if (!rc->active[i])
            continue;
        if (spec->kind == EB_SOURCE_IMAGE_DIR && spec->path[0] != '\0') {
            struct eb_source_file_list fl;
            struct eb_diag d = {0};
            if (eb_source_file_list_hash(spec, su->files, su->n_files, &fl, &d) == EB_OK) {
                r->source_list_files = fl.files;
                r->source_list_bytes = fl.bytes;
                snprintf(r->source_list_sha256, sizeof(r->source_list_sha256), "%s", fl.sha256);
            } else {
                eb_run_result_warn(&rc->result, "slot %s: no dataset file list hash: %.180s",
                                   rc->slots[i].name, d.msg);
            }
        }
        if (su->model_bytes != NULL) {
            struct eb_sha256 h;
            eb_sha256_init(&h);
            eb_sha256_update(&h, su->model_bytes, su->model_len);
            eb_sha256_final_hex(&h, r->model_sha256);
            r->model_size = su->model_len;
        } else if (su->model_path != NULL) {
            struct eb_diag d = {0};
            /* A model that cannot be read has failed the slot already; it stays unknown. */
            if (eb_sha256_file(su->model_path, EB_MODEL_MAX_FILE, rc->env->stop, r->model_sha256,
                               &r->model_size, &d) != EB_OK)
                eb_log_msg(&rc->log, EB_LOG_DEBUG, "slot %s: no model fingerprint: %s",
                           rc->slots[i].name, d.msg);
        }
    }
}

struct history_fill {
    const struct run_ctx *rc;
    const char *ort_version;
};

static enum eb_status fill_history(const void *ctx, const struct eb_env_facts *env,
                                   struct eb_history_run *out, struct eb_diag *diag)
{
    const struct history_fill *f = ctx;
    return eb_history_from_result(&f->rc->result, f->rc->cfg, env, f->rc->env->version,
                                  f->ort_version, out, diag);
}

/*
 * Appends the finished run to the history database (--db). Never fails the run: a database
 * that cannot be written is one warning line (console, run.log and the reports' warnings).
 */
static void record_history(struct run_ctx *rc, const char *ort_version)
{
    struct eb_run_result *res = &rc->result;
    const struct history_fill f = {.rc = rc, .ort_version = ort_version};
    struct eb_history_receipt rcpt;
    char why[256];
    if (eb_history_record(rc->cfg->db, fill_history, &f, &rc->log, &rcpt, why, sizeof(why)) != 0) {
        eb_run_result_warn(res, "history: the run was not recorded: %.200s", why);
        return;
    }
    snprintf(res->history_db, sizeof(res->history_db), "%s", rcpt.where);
    res->history_run_id = rcpt.id;
    snprintf(res->history_uuid, sizeof(res->history_uuid), "%s", rcpt.uuid);
}

static int exit_code_of(const struct run_ctx *rc)
{
    if (rc->result.files_lost > 0)
        return EB_EXIT_WRITE_FAILED;
    if (rc->result.interrupted)
        return EB_EXIT_INTERRUPTED;
    int attempted = 0, failed = 0;
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        if (!rc->active[i])
            continue;
        attempted++;
        if (rc->slots[i].status == EB_SLOT_FAILED)
            failed++;
    }
    if (attempted == 0 || failed == attempted)
        return EB_EXIT_NOTHING_RAN;
    if (failed > 0)
        return EB_EXIT_SLOT_FAILED;
    return rc->result.mem.violations > 0 ? EB_EXIT_MEM_VIOLATIONS : EB_EXIT_OK;
}

int eb_run_main(const struct eb_config *cfg, const struct eb_run_env *env)
{
    struct run_ctx *rc = calloc(1, sizeof(*rc));
    if (rc == NULL) {
        fprintf(env->console, "edgebench: error: out of memory\n");
        return EB_EXIT_NOTHING_RAN;
    }
    rc->cfg = cfg;
    rc->env = env;
    enum eb_log_level lvl = cfg->verbose ? EB_LOG_DEBUG : cfg->quiet ? EB_LOG_ERROR : EB_LOG_INFO;
    eb_runlog_init(&rc->rl, env->console, lvl);
    rc->log = eb_runlog_iface(&rc->rl);
    struct eb_run_result *res = &rc->result;
    eb_run_result_init(res);
    res->version = env->version;
    res->config = cfg;
    res->write_config = eb_config_echo;
    snprintf(res->mode, sizeof(res->mode), "%s",
             cfg->mode == EB_MODE_RGB       ? "rgb"
             : cfg->mode == EB_MODE_THERMAL ? "thermal"
                                            : "dual");
    snprintf(res->command_line, sizeof(res->command_line), "%s", env->command_line);
    uint64_t wall0 = eb_clock_wall_ns(), t0 = eb_clock_ns();
    eb_clock_iso8601(wall0, res->started_at, sizeof(res->started_at));

    struct eb_diag diag = {0};
    if (load_datasets(rc, &diag) != EB_OK) {
        fprintf(env->console, "edgebench: error: %s\n", diag.msg);
        for (int i = 0; i < EB_NUM_SLOTS; i++)
            eb_accuracy_destroy(rc->acc[i]);
        eb_runlog_fini(&rc->rl);
        free(rc);
        return EB_EXIT_USAGE;
    }
    /* --prometheus before anything is made or measured: an address in use stops the run here,
     * with no run folder. */
    if (cfg->prometheus != NULL) {
        const struct eb_prom_config pc = {.addr = cfg->prometheus};
        if (eb_prom_start(&pc, &rc->prom, &diag) != EB_OK) {
            fprintf(env->console, "edgebench: error: --prometheus %s: %s\n", cfg->prometheus,
                    diag.msg);
            for (int i = 0; i < EB_NUM_SLOTS; i++)
                eb_accuracy_destroy(rc->acc[i]);
            eb_runlog_fini(&rc->rl);
            free(rc);
            return EB_EXIT_USAGE;
        }
        fprintf(stdout, "prometheus: http://%s/metrics\n", eb_prom_address(rc->prom));
        fflush(stdout);
    }
    /* The run folder and run.log before anything is measured: a folder that cannot be made or
     * written fails now, not after a long run. */
    char path[4200];
    enum eb_status dst = make_run_dir(rc, &diag);
    if (dst == EB_OK) {
        snprintf(path, sizeof(path), "%s/run.log", rc->dir);
        dst = eb_runlog_open_file(&rc->rl, path, &diag);
    }
    if (dst != EB_OK) {
        fprintf(env->console, "edgebench: error: %s\n", diag.msg);
        for (int i = 0; i < EB_NUM_SLOTS; i++)
            eb_accuracy_destroy(rc->acc[i]);
        eb_prom_stop(rc->prom);
        eb_runlog_fini(&rc->rl);
        free(rc);
        return EB_EXIT_WRITE_FAILED;
    }
    snprintf(res->output_dir, sizeof(res->output_dir), "%s", rc->dir);
    if (env->dir_out != NULL && env->dir_out_size > 0)
        snprintf(env->dir_out, env->dir_out_size, "%s", rc->dir);
    eb_log_msg(&rc->log, EB_LOG_DEBUG, "command line: %s", env->command_line);
    eb_platform_detect(NULL, &rc->platform);
    eb_budget_init_here(&rc->budget, cfg->gpu_mem_limit_bytes, rc->platform.is_jetson);
    if (rc->prom != NULL)
        eb_prom_set_limit(rc->prom, rc->budget.limit_bytes);

    setup_slots(rc);
    rc->result.trace.on = cfg->trace;
    struct eb_cupti *gpu = cfg->trace ? start_cupti(rc) : NULL;
    for (int i = 0; i < EB_NUM_SLOTS && !stopped(env); i++) {
        if (!rc->active[i])
            continue;
        struct eb_slot *s = &rc->slots[i];
        eb_log_msg(&rc->log, EB_LOG_INFO, "slot %s: loading %s on %s", s->name,
                   s->setup.model_label ? s->setup.model_label : "(no model)",
                   s->setup.source_text ? s->setup.source_text : "(no source)");
        if (s->setup.model_path == NULL && s->setup.model_bytes == NULL) {
            s->status = EB_SLOT_FAILED;
            if (s->diag.status == EB_OK)
                eb_diag_fail(&s->diag, EB_ERR_UNSUPPORTED,
                             "the embedded default model could not be built");
        } else if (eb_budget_slot_cap(&rc->budget, &s->setup.backend_cfg, rc->limit_label[i],
                                      sizeof(rc->limit_label[i]), &s->diag) != EB_OK) {
            s->status = EB_SLOT_FAILED; /* nothing left of the budget for this slot */
        } else if (eb_slot_load(s) == EB_OK) {
            eb_budget_charge(&rc->budget, s->name, s->info.budget_bytes_used);
        }
        if (s->status == EB_SLOT_FAILED)
            log_failure(rc, s);
    }
    /* Every model has loaded: now the sources that deliver on their own clock open (a camera,
     * a network stream), and each slot's probe inference runs. */
    for (int i = 0; i < EB_NUM_SLOTS && !stopped(env); i++) {
        struct eb_slot *s = &rc->slots[i];
        if (!rc->active[i] || s->status != EB_SLOT_OK)
            continue;
        if (eb_slot_start(s) == EB_OK) {
            eb_log_msg(&rc->log, EB_LOG_INFO,
                       "slot %s: backend %s %s (%s), input %dx%dx%d %s, output %s with %d "
                       "classes",
                       s->name, s->setup.backend->name, s->probe.version, s->probe.library, s->in_c,
                       s->in_h, s->in_w, eb_dtype_name(s->in_dtype), eb_head_name(s->head.kind),
                       s->num_classes);
            struct eb_accuracy *acc = rc->acc[i];
            if (acc != NULL && eb_accuracy_bind(acc, s->info.class_names, s->info.n_class_names,
                                                s->num_classes, &s->diag) != EB_OK) {
                s->status = EB_SLOT_FAILED;
                eb_diag_prefix(&s->diag, "--data %s: ", acc->data_dir);
            } else if (acc != NULL) {
                eb_log_msg(&rc->log, EB_LOG_INFO,
                           "slot %s: dataset %s (%s, %zu images): %zu of %zu model classes "
                           "mapped %s; detections at conf %g%s",
                           s->name, acc->data_dir, eb_dataset_format_name(acc->ds->format),
                           acc->ds->n_images, acc->map.n_mapped, acc->map.n_classes,
                           acc->map.from_file ? "by the class map" : "by name",
                           (double)s->setup.conf,
                           cfg->conf_given ? " (--conf)" : " (no --conf: the mAP threshold)");
                if (!cfg->conf_given)
                    eb_run_result_warn(res,
                                       "slot %s: --data without --conf: detections at conf %g as "
                                       "for mAP (edgebench val); the postprocess stage then "
                                       "includes NMS over low-score boxes (give --conf to time "
                                       "a deployment threshold)",
                                       s->name, (double)s->setup.conf);
            }
        }
        if (s->status == EB_SLOT_FAILED)
            log_failure(rc, s);
    }
    banner(rc);

    struct eb_sampler *sampler = NULL;
    snprintf(path, sizeof(path), "%s/metrics.jsonl", rc->dir);
    struct eb_sampler_config sc = {.interval_ns = (uint64_t)cfg->interval_ms * 1000000ull,
                                   .metrics_path = path,
                                   .tegrastats_cmd = env->tegrastats_cmd,
                                   .is_jetson = rc->platform.is_jetson,
                                   .log = &rc->log,
                                   .on_sample = rc->prom != NULL ? eb_prom_on_sample : NULL,
                                   .on_sample_ctx = rc->prom,
                                   .metrics_max_bytes = (uint64_t)(cfg->metrics_max_mb * 1e6),
                                   .metrics_keep = EB_SAMPLER_METRICS_KEEP};
    struct eb_diag sd = {0};
    if (eb_sampler_start(&sc, &sampler, &sd) != EB_OK) {
        eb_log_msg(&rc->log, EB_LOG_WARN, "system metrics unavailable: %s", sd.msg);
        eb_run_result_warn(res, "system metrics unavailable: %s", sd.msg);
        sampler = NULL;
    }

    int show = !cfg->quiet && isatty(fileno(env->console));
    int ok[EB_NUM_SLOTS];
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        ok[i] = rc->active[i] && rc->slots[i].status == EB_SLOT_OK;

    if (cfg->solo_baseline && cfg->mode == EB_MODE_DUAL && ok[0] && ok[1]) {
        for (int i = 0; i < EB_NUM_SLOTS && !stopped(env); i++) {
            struct eb_slot *s = &rc->slots[i];
            if (!s->rewindable) {
                eb_run_result_warn(res,
                                   "slot %s: the source cannot be replayed (camera); no "
                                   "solo baseline",
                                   s->name);
                continue;
            }
            eb_log_msg(&rc->log, EB_LOG_INFO, "solo baseline: slot %s alone", s->name);
            int which[EB_NUM_SLOTS] = {0};
            which[i] = 1;
            run_pass(rc, which, show, 0, NULL);
            struct eb_slot_result tmp;
            memset(&tmp, 0, sizeof(tmp));
            eb_slot_summarize_solo(s, &tmp);
            struct eb_slot_result *r = &res->slots[i];
            r->has_solo = s->status == EB_SLOT_OK && tmp.frames_measured > 0;
            r->solo_e2e = tmp.stages[EB_STAGE_E2E];
            r->solo_infer = tmp.stages[EB_STAGE_INFER];
            free(tmp.classes);
            free(tmp.records);
            if (s->status == EB_SLOT_FAILED)
                log_failure(rc, s);
            else if (s->status == EB_SLOT_OK && eb_slot_rewind(s) != EB_OK)
                eb_log_msg(&rc->log, EB_LOG_ERROR, "slot %s: %s", s->name, s->diag.msg);
        }
        for (int i = 0; i < EB_NUM_SLOTS; i++)
            ok[i] = rc->active[i] && rc->slots[i].status == EB_SLOT_OK;
    }

    if (!stopped(env) && (ok[0] || ok[1])) {
        eb_log_msg(&rc->log, EB_LOG_INFO, "measuring %s", res->mode);
        for (int i = 0; i < EB_NUM_SLOTS && rc->prom != NULL; i++)
            if (ok[i])
                eb_prom_slot_begin(rc->prom, i, rc->slots[i].name, rc->slots[i].setup.model_label,
                                   rc->slots[i].setup.backend->name,
                                   eb_device_name(rc->slots[i].setup.backend_cfg.device),
                                   rc->slots[i].fps);
        rc->prom_live = 1;
        run_pass(rc, ok, show, 1, sampler);
        rc->prom_live = 0;
        write_frames_csv(rc, ok);
        if (cfg->trace)
            write_trace(rc, ok, gpu);
    }
    eb_cupti_destroy(gpu);
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        if (rc->slots[i].status == EB_SLOT_FAILED && ok[i])
            log_failure(rc, &rc->slots[i]);

    eb_sampler_stop(sampler, &res->sys);
    if (res->sys.warning[0] != '\0')
        eb_run_result_warn(res, "%s", res->sys.warning);
    if (res->sys.metrics_error[0] != '\0')
        lost_file(rc, res->sys.metrics_error);
    res->interrupt_signal = atomic_load(env->stop);
    res->interrupted = res->interrupt_signal != 0;
    if (res->interrupted)
        eb_log_msg(&rc->log, EB_LOG_WARN, "interrupted: writing the report of what ran");

    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        struct eb_slot_result *r = &res->slots[i];
        int has_solo = r->has_solo;
        struct eb_stat_summary se = r->solo_e2e, si = r->solo_infer;
        eb_slot_summarize(&rc->slots[i], r);
        r->has_solo = has_solo;
        r->solo_e2e = se;
        r->solo_infer = si;
        if (has_solo) {
            r->interference_ratio = se.p50 > 0 ? r->stages[EB_STAGE_E2E].p50 / se.p50 : NAN;
            r->interference_ratio_infer = si.p50 > 0 ? r->stages[EB_STAGE_INFER].p50 / si.p50 : NAN;
        }
    }
    /* Before the datasets are scored: scoring frees the dataset whose image list the file
     * list hash reads. */
    fingerprint_models(rc);
    score_datasets(rc);
    summarize_pair(rc);
    summarize_memory(rc);
    res->duration_s = (double)(eb_clock_ns() - t0) / 1e9;
    res->exit_code = exit_code_of(rc);
    if (res->mem.violations > 0)
        eb_log_msg(&rc->log, EB_LOG_WARN, "%llu memory limit violations (limit %.2f GB)",
                   (unsigned long long)res->mem.violations, res->mem.limit_gb);
    res->criteria.min_frames = (uint64_t)cfg->min_frames;
    res->criteria.min_duration_s = cfg->min_duration_s;
    res->criteria.max_drift_pct = cfg->max_drift_pct;
    res->criteria.max_others_cpu_pct = cfg->max_others_cpu_pct;
    res->criteria.max_cov_pct = cfg->max_cov_pct;
    res->criteria.max_drop_pct = cfg->max_drop_pct;
    eb_report_finish(res);
    /* The verdict and its reasons; a failed slot's reason is its error, printed when it
     * happened: here it is pointed at, not repeated (the reports keep it whole). */
    for (int k = 0; k < res->validity.n_reasons || k == 0; k++) {
        const char *why = k < res->validity.n_reasons ? res->validity.reasons[k] : "";
        const char *failed = strstr(why, ": failed: ");
        char shortened[64];
        if (failed != NULL && (size_t)(failed - why) < 32) {
            snprintf(shortened, sizeof(shortened), "%.*s: failed (error above)",
                     (int)(failed - why), why);
            why = shortened;
        }
        eb_log_msg(&rc->log, EB_LOG_INFO, "verdict: %s%s%s",
                   k == 0 ? eb_validity_verdict(&res->validity) : "", k == 0 && why[0] ? ": " : "",
                   why);
    }

    /* ONNX Runtime's facts from a slot that ran on it (a native slot's probe names itself). */
    const char *ort_version = NULL, *ort_library = NULL, *ort_providers = NULL;
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        if (rc->slots[i].probe.version[0] != '\0' && rc->slots[i].setup.backend != NULL &&
            strcmp(rc->slots[i].setup.backend->name, "ort") == 0) {
            ort_version = rc->slots[i].probe.version;
            ort_library = rc->slots[i].probe.library;
            ort_providers = rc->slots[i].probe.providers;
        }
    record_history(rc, ort_version);

    /* Every report file is tried whatever happened to the others; report.json comes last, so
     * that it lists the files lost before it and says exit code 6. */
    struct eb_env_extra extra = {.version = env->version,
                                 .command_line = env->command_line,
                                 .ort_version = ort_version,
                                 .ort_library = ort_library,
                                 .ort_providers = ort_providers};
    struct eb_diag ed = {0};
    if (eb_report_write_env(rc->dir, &extra, &ed) != EB_OK)
        lost_file(rc, ed.msg);
    int written[EB_REPORT_FILE_COUNT];
    for (int f = 0; f < EB_REPORT_FILE_COUNT; f++) {
        struct eb_diag rd = {0};
        written[f] = eb_report_write_file(res, rc->dir, (enum eb_report_file)f, &rd) == EB_OK;
        if (!written[f])
            lost_file(rc, rd.msg);
    }

    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        const struct eb_slot_result *r = &res->slots[i];
        if (r->status == EB_SLOT_OK && r->frames_measured > 0) {
            eb_log_msg(&rc->log, EB_LOG_INFO,
                       "slot %s: %llu frames%s, end-to-end p50 %.2f ms p99 %.2f ms = source "
                       "(read) p50 %.2f ms + pipeline p50 %.2f ms (inference %.2f ms): the %s "
                       "dominates; %.1f FPS, %.2f detections/frame",
                       r->name, (unsigned long long)r->frames_measured,
                       r->frames_left_out > 0 ? " in the window" : "", r->stages[EB_STAGE_E2E].p50,
                       r->stages[EB_STAGE_E2E].p99, r->stages[EB_STAGE_READ].p50, r->pipeline.p50,
                       r->stages[EB_STAGE_INFER].p50, eb_slot_result_dominant(r), r->throughput_fps,
                       r->dets_per_frame_mean);
            if (r->fps_target > 0)
                eb_log_msg(&rc->log, EB_LOG_INFO,
                           "slot %s: paced at %.2f FPS: achieved %.2f FPS, %llu dropped (%.2f%%), "
                           "%llu deadline misses, latency from arrival p50 %.2f ms p99 %.2f ms",
                           r->name, r->fps_target, r->throughput_fps,
                           (unsigned long long)r->frames_dropped, r->drop_pct,
                           (unsigned long long)r->deadline_misses, r->latency_from_arrival.p50,
                           r->latency_from_arrival.p99);
        } else if (r->status == EB_SLOT_FAILED) { /* its error was logged when it happened */
            eb_log_msg(&rc->log, EB_LOG_INFO, "slot %s: failed (error above)", r->name);
        } else {
            eb_log_msg(&rc->log, EB_LOG_INFO, "slot %s: %s%s%s", r->name,
                       eb_slot_status_name(r->status), r->message[0] ? ": " : "", r->message);
        }
    }
    if (res->pair.valid)
        eb_log_msg(&rc->log, EB_LOG_INFO,
                   "pair: %llu pairs, pair latency p50 %.2f ms, %.1f pair FPS",
                   (unsigned long long)res->pair.pairs, res->pair.latency.p50, res->pair.pair_fps);
    /* run.log takes no line after this: its failure goes to the console alone. */
    struct eb_diag ld = {0};
    if (eb_runlog_close_file(&rc->rl, &ld) != EB_OK)
        lost_file(rc, ld.msg);
    /* The report line names a file that exists: report.md, else the first report written. */
    for (int f = 0; f < EB_REPORT_FILE_COUNT; f++)
        if (written[f]) {
            fprintf(stdout, "report: %s/%s\n", rc->dir,
                    eb_report_file_name((enum eb_report_file)f));
            break;
        }
    fflush(stdout);

    /* The endpoint served the final counts until the reports were written. */
    eb_prom_stop(rc->prom);
    int code = res->exit_code;
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        eb_slot_fini(&rc->slots[i]);
        free(rc->model_bytes[i]);
        eb_accuracy_destroy(rc->acc[i]);
    }
    eb_run_result_fini(res);
    eb_runlog_fini(&rc->rl);
    free(rc);
    return code;
}
