/*
 * The sampler thread: every interval it reads procfs (CPU per core, memory, swap, RSS, thermal
 * zones), takes the latest tegrastats line when tegrastats runs, reads the GPUs through NVML
 * when it loads (sampler_nvml.c; loaded, read and shut down on this thread only), appends one
 * JSON object to metrics.jsonl (flushed, so a crash keeps what was written) and updates running
 * aggregates. Nothing accumulates in memory with the run length.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eb/clock.h"
#include "eb/file.h"
#include "eb/json.h"
#include "eb/thread.h"
#include "harness/metrics/sampler.h"

#define MAX_CORES 1024
#define MB        (1024.0 * 1024.0)

struct zone_agg {
    int index;
    char key[40]; /* JSON key: zone type, "_N" suffixed when the type repeats */
    double sum, max;
    uint64_t n;
};

struct eb_sampler {
    uint64_t interval_ns;
    uint64_t start_ns;
    FILE *fp;
    const struct eb_log *log;
    char root[512];
    struct eb_sampler__tegra *tegra;
    char warning[256];
    char nvml_lib[512]; /* "" = NVML off */

    struct eb_thread thread;
    int thread_started;
    struct eb_mutex mu; /* guards stop and first_done */
    struct eb_cond cv;
    int stop;
    int first_done; /* the thread took its first sample: eb_sampler_start may return */
    /* Guarded by mu too: every NVML GPU's power summed at the samples' times, and the marks
     * of the caller's window (eb_sampler_mark). */
    struct eb_energy_meter nvml_energy;

    /* Owned by the sampler thread until it is joined. */
    int max_cores, n_cores;
    struct eb_cpu_times *prev, *cur;
    struct eb_cpu_times prev_all;
    int have_prev;
    double *core_pct;
    int n_zones;
    struct zone_agg zones[EB_SAMPLER_MAX_ZONES];
    struct eb_tegra_sample tsample;
    uint64_t last_sample_ns;
    uint64_t n_samples;
    uint64_t cpu_n;
    double cpu_sum, cpu_max;
    uint64_t ram_n;
    double ram_sum, ram_max, ram_total, swap_max, rss_max;
    uint64_t pressure;
    int write_errno;    /* the first failed write to fp (errno); 0 none */
    uint64_t max_bytes; /* rotate metrics.jsonl past this size; 0 = never */
    int keep;           /* rotated files kept */
    uint64_t written;   /* bytes in the current file */
    uint64_t rotations;
    char path[4200];               /* metrics_path, for messages */
    struct eb_sampler__nvml *nvml; /* NULL when NVML is off or unavailable */
    char nvml_warning[256];        /* set before the thread starts or by the thread */
    int n_gpus;                    /* aggregates, filled when the thread closes NVML */
    struct eb_gpu_summary gpus[EB_SAMPLER_MAX_GPUS];
    void (*on_sample)(void *ctx, const struct eb_sampler_live *live); /* NULL = none */
    void *on_sample_ctx;
};

static void read_cpu(struct eb_sampler *s, double *avg_out)
{
    int n = 0;
    struct eb_cpu_times all;
    *avg_out = NAN;
    for (int i = 0; i < s->n_cores; i++)
        s->core_pct[i] = NAN;
    if (eb_procfs_cpu_times(s->root, s->cur, s->max_cores, &n, &all, NULL) != EB_OK)
        return;
    if (n > s->n_cores) {
        for (int i = s->n_cores; i < n; i++)
            s->core_pct[i] = NAN;
        s->n_cores = n;
    }
    if (s->have_prev) {
        for (int i = 0; i < s->n_cores; i++)
            s->core_pct[i] = eb_procfs_cpu_load_pct(&s->prev[i], &s->cur[i]);
        *avg_out = eb_procfs_cpu_load_pct(&s->prev_all, &all);
    }
    struct eb_cpu_times *tmp = s->prev;
    s->prev = s->cur;
    s->cur = tmp;
    s->prev_all = all;
    s->have_prev = 1;
}

/*
 * Size rotation of metrics.jsonl (soak runs): path.<k> becomes path.<k+1> from the oldest down
 * (the one past `keep` is removed), path becomes path.1, and a new path is opened. Called before
 * a sample is written, so every file holds whole lines. A failure is kept as the first write
 * error (summary.metrics_error) and the samples go on into the file that is open.
 */
static void rotate_metrics(struct eb_sampler *s)
{
    char from[4300], to[4300];
    snprintf(from, sizeof(from), "%s.%d", s->path, s->keep);
    if (remove(from) != 0 && errno != ENOENT && s->write_errno == 0)
        s->write_errno = errno;
    for (int k = s->keep - 1; k >= 1; k--) {
        snprintf(from, sizeof(from), "%s.%d", s->path, k);
        snprintf(to, sizeof(to), "%s.%d", s->path, k + 1);
        if (rename(from, to) != 0 && errno != ENOENT && s->write_errno == 0)
            s->write_errno = errno;
    }
    snprintf(to, sizeof(to), "%s.1", s->path);
    /* Closed before the rename: the descriptor count stays the same across a rotation. */
    if (fclose(s->fp) != 0 && s->write_errno == 0)
        s->write_errno = errno != 0 ? errno : EIO;
    s->fp = NULL;
    if (rename(s->path, to) != 0 && s->write_errno == 0)
        s->write_errno = errno;
    s->fp = fopen(s->path, "a");
    if (s->fp == NULL && s->write_errno == 0)
        s->write_errno = errno != 0 ? errno : EIO;
    s->written = 0;
    s->rotations++;
}

static void take_sample(struct eb_sampler *s)
{
    uint64_t now = eb_clock_ns();
    char wall[40];
    eb_clock_iso8601(eb_clock_wall_ns(), wall, sizeof(wall));
    double cpu_avg;
    read_cpu(s, &cpu_avg);

    struct eb_sysmem mem = {0};
    double ram_used = NAN, ram_total = NAN, ram_avail = NAN, swap_used = NAN;
    if (eb_procfs_sysmem_at(s->root, &mem, NULL) == EB_OK) {
        ram_used = (double)mem.used / MB;
        ram_total = (double)mem.total / MB;
        ram_avail = (double)mem.available / MB;
        swap_used = (double)mem.swap_used / MB;
    }
    uint64_t rss_bytes = eb_procfs_rss_bytes();
    double rss = rss_bytes > 0 ? (double)rss_bytes / MB : NAN;
    double temps[EB_SAMPLER_MAX_ZONES];
    for (int i = 0; i < s->n_zones; i++)
        temps[i] = eb_procfs_thermal_read_c(s->root, s->zones[i].index);
    int have_tegra = eb_sampler__tegra_latest(s->tegra, &s->tsample);
    struct eb_sampler__gpu_reading gpus[EB_SAMPLER_MAX_GPUS];
    if (s->nvml != NULL) {
        eb_sampler__nvml_sample(s->nvml, now, gpus);
        double total = NAN;
        for (int i = 0; i < eb_sampler__nvml_count(s->nvml); i++)
            if (isfinite(gpus[i].power_mw))
                total = (isfinite(total) ? total : 0.0) + gpus[i].power_mw;
        eb_mutex_lock(&s->mu);
        eb_energy_add(&s->nvml_energy, now, total); /* NaN: no GPU's power was read */
        eb_mutex_unlock(&s->mu);
    }

    /* A line is a few hundred bytes to a few KB (cores, GPUs): rotate when the next one could
     * pass the limit. */
    if (s->fp != NULL && s->max_bytes > 0 && s->keep > 0 && s->written + 16384 > s->max_bytes)
        rotate_metrics(s);
    if (s->fp != NULL) {
        const long at = ftell(s->fp);
        struct eb_json_writer w;
        eb_json_writer_init_file(&w, s->fp, 0);
        eb_json_obj_begin(&w);
        eb_json_knum(&w, "t_s", (double)(now - s->start_ns) / 1e9);
        eb_json_kstr(&w, "wall", wall);
        eb_json_key(&w, "cpu_pct");
        eb_json_arr_begin(&w);
        for (int i = 0; i < s->n_cores; i++)
            eb_json_num(&w, s->core_pct[i]);
        eb_json_arr_end(&w);
        eb_json_knum(&w, "cpu_avg_pct", cpu_avg);
        eb_json_knum(&w, "ram_used_mb", ram_used);
        eb_json_knum(&w, "ram_total_mb", ram_total);
        eb_json_knum(&w, "ram_available_mb", ram_avail);
        eb_json_knum(&w, "swap_used_mb", swap_used);
        eb_json_knum(&w, "rss_mb", rss);
        eb_json_key(&w, "temps_c");
        eb_json_obj_begin(&w);
        for (int i = 0; i < s->n_zones; i++)
            eb_json_knum(&w, s->zones[i].key, temps[i]);
        eb_json_obj_end(&w);
        if (have_tegra) {
            eb_json_key(&w, "tegrastats");
            eb_tegrastats_write_json(&s->tsample, &w);
        }
        if (s->nvml != NULL)
            eb_sampler__nvml_write_json(s->nvml, gpus, &w);
        eb_json_obj_end(&w);
        fputc('\n', s->fp);
        const long end = ftell(s->fp);
        if (at >= 0 && end > at)
            s->written += (uint64_t)(end - at);
        /* Reported once, at eb_sampler_stop (summary.metrics_error): the run goes on. */
        errno = 0;
        if ((fflush(s->fp) != 0 || eb_json_writer_error(&w) || ferror(s->fp)) &&
            s->write_errno == 0)
            s->write_errno = errno != 0 ? errno : EIO;
    }

    if (s->on_sample != NULL) {
        struct eb_sampler_live lv = {.cpu_avg_pct = cpu_avg,
                                     .n_cores = s->n_cores,
                                     .core_pct = s->core_pct,
                                     .have_mem = isfinite(ram_used),
                                     .mem = mem,
                                     .rss_bytes = rss_bytes,
                                     .n_zones = s->n_zones,
                                     .gpus = gpus,
                                     .tegra = have_tegra ? &s->tsample : NULL};
        for (int i = 0; i < s->n_zones; i++) {
            lv.zone_name[i] = s->zones[i].key;
            lv.zone_c[i] = temps[i];
        }
        lv.n_gpus = s->nvml != NULL ? eb_sampler__nvml_count(s->nvml) : 0;
        for (int i = 0; i < lv.n_gpus; i++)
            lv.gpu_name[i] = eb_sampler__nvml_name(s->nvml, i, &lv.gpu_index[i]);
        s->on_sample(s->on_sample_ctx, &lv);
    }

    s->n_samples++;
    s->last_sample_ns = now;
    if (isfinite(cpu_avg)) {
        s->cpu_sum += cpu_avg;
        if (s->cpu_n == 0 || cpu_avg > s->cpu_max)
            s->cpu_max = cpu_avg;
        s->cpu_n++;
    }
    if (isfinite(ram_used)) {
        s->ram_sum += ram_used;
        if (s->ram_n == 0 || ram_used > s->ram_max)
            s->ram_max = ram_used;
        if (swap_used > s->swap_max)
            s->swap_max = swap_used;
        s->ram_total = ram_total;
        s->ram_n++;
        if (mem.available * 5 < mem.total) {
            if (s->pressure == 0)
                eb_log_msg(s->log, EB_LOG_WARN,
                           "memory pressure: available %.0f MB of %.0f MB (< 20%%)", ram_avail,
                           ram_total);
            s->pressure++;
        }
    }
    if (isfinite(rss) && rss > s->rss_max)
        s->rss_max = rss;
    for (int i = 0; i < s->n_zones; i++) {
        struct zone_agg *z = &s->zones[i];
        if (!isfinite(temps[i]))
            continue;
        z->sum += temps[i];
        if (z->n == 0 || temps[i] > z->max)
            z->max = temps[i];
        z->n++;
    }
}

/* On the sampler thread: NVML is opened, read and closed by this thread only. */
static void nvml_open(struct eb_sampler *s)
{
    if (s->nvml_lib[0] == '\0')
        return;
    struct eb_diag d = {0};
    enum eb_status st = eb_sampler__nvml_open(s->nvml_lib, s->log, &s->nvml, &d);
    if (st != EB_OK) {
        s->nvml = NULL;
        snprintf(s->nvml_warning, sizeof(s->nvml_warning), "NVML not available: %.200s", d.msg);
        /* No library is the normal case without an NVIDIA driver: not worth a console warning. */
        eb_log_msg(s->log, st == EB_ERR_IO ? EB_LOG_INFO : EB_LOG_WARN, "%s", s->nvml_warning);
    }
}

static void *sampler_main(void *arg)
{
    struct eb_sampler *s = arg;
    nvml_open(s);
    /* The span's first reading, before eb_sampler_start returns: the series, and the power
     * integrated over it, begin where the caller's work does (not an interval later). */
    take_sample(s);
    uint64_t next = s->start_ns + s->interval_ns;
    eb_mutex_lock(&s->mu);
    s->first_done = 1;
    eb_cond_broadcast(&s->cv);
    while (!s->stop) {
        uint64_t now = eb_clock_ns();
        if (now < next) {
            eb_cond_timedwait(&s->cv, &s->mu, next - now);
            continue;
        }
        eb_mutex_unlock(&s->mu);
        take_sample(s);
        now = eb_clock_ns();
        next += s->interval_ns;
        if (next <= now) /* fell behind: skip the missed ticks rather than burst */
            next = now + s->interval_ns;
        eb_mutex_lock(&s->mu);
    }
    eb_mutex_unlock(&s->mu);
    /* And its last, at stop: the energy integrates up to the end of the caller's work (a run
     * shorter than one interval has two readings, one at each end). */
    take_sample(s);
    eb_sampler__nvml_close(s->nvml, s->gpus, &s->n_gpus);
    s->nvml = NULL;
    return NULL;
}

static void setup_zones(struct eb_sampler *s)
{
    struct eb_thermal_zone zones[EB_SAMPLER_MAX_ZONES];
    int n = eb_procfs_thermal_zones(s->root, zones, EB_SAMPLER_MAX_ZONES);
    for (int i = 0; i < n; i++) {
        struct zone_agg *z = &s->zones[i];
        memset(z, 0, sizeof(*z));
        z->index = zones[i].index;
        snprintf(z->key, sizeof(z->key), "%s", zones[i].type);
        for (int j = 0; j < i; j++) {
            if (strcmp(s->zones[j].key, z->key) == 0) {
                snprintf(z->key, sizeof(z->key), "%.28s_%d", zones[i].type, zones[i].index);
                break;
            }
        }
    }
    s->n_zones = n;
}

/* The sampler's one notice for the report; logged once, at `level` (run.log keeps every level,
 * the console shows INFO unless --quiet). */
static void set_warning(struct eb_sampler *s, enum eb_log_level level, const char *msg)
{
    snprintf(s->warning, sizeof(s->warning), "%s", msg);
    eb_log_msg(s->log, level, "%s", msg);
}

enum eb_status eb_sampler_start(const struct eb_sampler_config *cfg, struct eb_sampler **s_out,
                                struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_NOMEM;
    if (cfg == NULL || s_out == NULL)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "eb_sampler_start: NULL config or output");
    struct eb_sampler *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory for the sampler");
    eb_mutex_init(&s->mu);
    eb_cond_init(&s->cv);
    s->interval_ns = cfg->interval_ns > 0 ? cfg->interval_ns : 1000000000ull;
    s->log = cfg->log;
    s->on_sample = cfg->on_sample;
    s->on_sample_ctx = cfg->on_sample_ctx;
    if (cfg->root != NULL && strlen(cfg->root) >= sizeof(s->root)) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG, "sampler root path too long: %.100s...",
                          cfg->root);
        goto fail;
    }
    snprintf(s->root, sizeof(s->root), "%s", cfg->root != NULL ? cfg->root : "");
    const char *nvml_lib = cfg->nvml_lib;
    if (nvml_lib == NULL) {
        nvml_lib = getenv("EB_NVML_LIB");
        if (nvml_lib == NULL || nvml_lib[0] == '\0')
            nvml_lib = "libnvidia-ml.so.1";
    }
    if (strlen(nvml_lib) >= sizeof(s->nvml_lib)) {
        snprintf(s->nvml_warning, sizeof(s->nvml_warning),
                 "NVML not available: library path too long: %.100s...", nvml_lib);
        eb_log_msg(s->log, EB_LOG_WARN, "%s", s->nvml_warning);
    } else {
        snprintf(s->nvml_lib, sizeof(s->nvml_lib), "%s", nvml_lib);
    }

    long conf = sysconf(_SC_NPROCESSORS_CONF);
    s->max_cores = conf < 1 ? 1 : conf > MAX_CORES ? MAX_CORES : (int)conf;
    s->prev = calloc((size_t)s->max_cores, sizeof(*s->prev));
    s->cur = calloc((size_t)s->max_cores, sizeof(*s->cur));
    s->core_pct = calloc((size_t)s->max_cores, sizeof(*s->core_pct));
    if (s->prev == NULL || s->cur == NULL || s->core_pct == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory for the sampler");
        goto fail;
    }

    if (cfg->metrics_path != NULL) {
        snprintf(s->path, sizeof(s->path), "%s", cfg->metrics_path);
        s->fp = fopen(cfg->metrics_path, "a");
        if (s->fp == NULL) {
            st = eb_diag_fail(diag, EB_ERR_IO, "cannot open %s for appending: %s",
                              cfg->metrics_path, strerror(errno));
            goto fail;
        }
        s->max_bytes = cfg->metrics_max_bytes;
        s->keep = cfg->metrics_keep;
        const long at = fseek(s->fp, 0, SEEK_END) == 0 ? ftell(s->fp) : 0;
        s->written = at > 0 ? (uint64_t)at : 0;
    }
    setup_zones(s);

    if (!cfg->is_jetson) {
        /* The normal case off a Jetson: a notice, not a warning. */
        set_warning(s, EB_LOG_INFO,
                    "not a Jetson: tegrastats not used; system metrics from procfs");
    } else if (cfg->tegrastats_cmd == NULL || cfg->tegrastats_cmd[0] == '\0') {
        set_warning(s, EB_LOG_WARN, "tegrastats disabled; system metrics from procfs only");
    } else {
        struct eb_diag td = {0};
        uint64_t ms = s->interval_ns / 1000000ull;
        if (eb_sampler__tegra_start(cfg->tegrastats_cmd, ms, s->log, &s->tegra, &td) != EB_OK) {
            char msg[256];
            snprintf(msg, sizeof(msg), "tegrastats not available (%.180s); using procfs only",
                     td.msg);
            set_warning(s, EB_LOG_WARN, msg);
            s->tegra = NULL;
        }
    }

    s->start_ns = eb_clock_ns();
    int n = 0;
    if (eb_procfs_cpu_times(s->root, s->prev, s->max_cores, &n, &s->prev_all, NULL) == EB_OK) {
        s->have_prev = 1;
        s->n_cores = n;
    }
    st = eb_thread_create(&s->thread, sampler_main, s, diag);
    if (st != EB_OK)
        goto fail;
    s->thread_started = 1;
    eb_mutex_lock(&s->mu);
    while (!s->first_done)
        eb_cond_wait(&s->cv, &s->mu);
    eb_mutex_unlock(&s->mu);
    *s_out = s;
    return EB_OK;

fail:
    eb_sampler_stop(s, NULL);
    return st;
}

static void empty_summary(struct eb_system_summary *sum)
{
    memset(sum, 0, sizeof(*sum));
    sum->cpu_avg_pct = sum->cpu_max_pct = NAN;
    sum->gpu_load_avg_pct = sum->gpu_load_max_pct = NAN;
    sum->power_avg_mw = sum->power_max_mw = NAN;
    sum->energy_mj = NAN;
    sum->window_energy_mj = NAN;
}

/* Closes metrics.jsonl: EB_ERR_IO naming it with the first failed sample's reason, or the
 * close's. */
static enum eb_status close_metrics(struct eb_sampler *s, struct eb_diag *diag)
{
    FILE *fp = s->fp;
    s->fp = NULL;
    return eb_file_close_after(fp, s->write_errno, s->path, diag);
}

void eb_sampler_mark(struct eb_sampler *s, enum eb_energy_mark which, uint64_t t_ns)
{
    if (s == NULL)
        return;
    eb_mutex_lock(&s->mu);
    eb_energy_mark(&s->nvml_energy, which, t_ns);
    eb_mutex_unlock(&s->mu);
    eb_sampler__tegra_mark(s->tegra, which, t_ns);
}

void eb_sampler_mark_begin(void *sampler, uint64_t t_ns)
{
    eb_sampler_mark(sampler, EB_ENERGY_MARK_BEGIN, t_ns);
}

void eb_sampler_mark_end(void *sampler, uint64_t t_ns)
{
    eb_sampler_mark(sampler, EB_ENERGY_MARK_END, t_ns);
}

void eb_sampler_stop(struct eb_sampler *s, struct eb_system_summary *summary_out)
{
    if (s == NULL) {
        if (summary_out != NULL)
            empty_summary(summary_out);
        return;
    }
    if (s->thread_started) {
        eb_mutex_lock(&s->mu);
        s->stop = 1;
        eb_cond_signal(&s->cv);
        eb_mutex_unlock(&s->mu);
        eb_thread_join(&s->thread);
    }
    /* The span ends now: tegrastats lines read from here on are dropped. */
    eb_sampler__tegra_halt(s->tegra);
    uint64_t end_ns = eb_clock_ns();
    struct eb_sampler__tegra_stats ts;
    memset(&ts, 0, sizeof(ts));
    eb_energy_init(&ts.meter);
    int had_tegra = s->tegra != NULL;
    eb_sampler__tegra_stop(s->tegra, &ts);
    s->tegra = NULL;

    if (summary_out != NULL) {
        struct eb_system_summary *sum = summary_out;
        empty_summary(sum);
        sum->n_samples = s->n_samples;
        sum->duration_s = s->thread_started ? (double)(end_ns - s->start_ns) / 1e9 : 0.0;
        if (s->cpu_n > 0) {
            sum->cpu_avg_pct = s->cpu_sum / (double)s->cpu_n;
            sum->cpu_max_pct = s->cpu_max;
        }
        if (s->ram_n > 0) {
            sum->ram_used_avg_mb = s->ram_sum / (double)s->ram_n;
            sum->ram_used_max_mb = s->ram_max;
            sum->ram_total_mb = s->ram_total;
            sum->swap_used_max_mb = s->swap_max;
        }
        sum->rss_max_mb = s->rss_max;
        sum->n_zones = s->n_zones;
        for (int i = 0; i < s->n_zones; i++) {
            const struct zone_agg *z = &s->zones[i];
            /* Zone names longer than the summary field are cut (the return value says so). */
            if (snprintf(sum->zones[i].name, sizeof(sum->zones[i].name), "%s", z->key) < 0)
                sum->zones[i].name[0] = '\0';
            sum->zones[i].max_c = z->n > 0 ? z->max : NAN;
            sum->zones[i].avg_c = z->n > 0 ? z->sum / (double)z->n : NAN;
        }
        sum->tegrastats_lines = ts.lines;
        sum->tegrastats_bad_lines = ts.bad_lines;
        sum->tegrastats_used = had_tegra && ts.lines > ts.bad_lines;
        if (ts.gpu_n > 0) {
            sum->gpu_load_avg_pct = ts.gpu_sum / (double)ts.gpu_n;
            sum->gpu_load_max_pct = ts.gpu_max;
        }
        if (ts.power_n > 0) {
            sum->power_avg_mw = ts.power_sum / (double)ts.power_n;
            sum->power_max_mw = ts.power_max;
            /* Over the span: tegrastats prints its first line an interval after it starts
             * (500 ms of a 5 s run), so the first line's power is held from the start, the
             * last one's to the end. */
            sum->energy_mj = eb_energy_span_mj(&ts.meter, s->start_ns, end_ns);
        }
        sum->pressure_samples = s->pressure;
        /* The caller's window: NVML's, else tegrastats'. */
        const double nv = eb_energy_between_marks_mj(&s->nvml_energy);
        const double tg = had_tegra ? eb_energy_between_marks_mj(&ts.meter) : NAN;
        sum->window_energy_mj = s->n_gpus > 0 ? nv : sum->tegrastats_used ? tg : NAN;
        sum->n_gpus = s->n_gpus;
        sum->nvml_used = s->n_gpus > 0;
        for (int i = 0; i < s->n_gpus && i < EB_SAMPLER_MAX_GPUS; i++)
            sum->gpus[i] = s->gpus[i];
        snprintf(sum->nvml_warning, sizeof(sum->nvml_warning), "%s", s->nvml_warning);
        if (s->warning[0] != '\0')
            snprintf(sum->warning, sizeof(sum->warning), "%s", s->warning);
        else if (ts.warning[0] != '\0')
            snprintf(sum->warning, sizeof(sum->warning), "%s", ts.warning);
        else if (had_tegra && ts.lines == 0)
            snprintf(sum->warning, sizeof(sum->warning),
                     "tegrastats printed no line during the run; using procfs only");
    }

    struct eb_diag d = {0};
    if (close_metrics(s, &d) != EB_OK && summary_out != NULL)
        snprintf(summary_out->metrics_error, sizeof(summary_out->metrics_error), "%s", d.msg);
    free(s->prev);
    free(s->cur);
    free(s->core_pct);
    eb_cond_fini(&s->cv);
    eb_mutex_fini(&s->mu);
    free(s);
}

pid_t eb_sampler_tegrastats_pid(const struct eb_sampler *s)
{
    return s != NULL ? eb_sampler__tegra_pid(s->tegra) : -1;
}
