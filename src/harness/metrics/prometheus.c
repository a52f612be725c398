/*
 * The live Prometheus endpoint: the snapshot, the text format (one table of metric families)
 * and the server thread. See prometheus.h; the metric list is docs/prometheus.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "eb/clock.h"
#include "eb/thread.h"
#include "harness/metrics/prometheus.h"

/* 100 us to 10 s, 1-2.5-5 steps: a frame's stages on a desktop GPU to a slow board's CPU. */
static const double bounds[EB_PROM_BUCKETS] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                               0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                               1,      2.5,     5,      10};
static const char *const stage_names[EB_PROM_STAGES] = {"read", "preprocess", "inference",
                                                        "postprocess", "end_to_end"};

const double *eb_prom_bucket_bounds(void)
{
    return bounds;
}

const char *eb_prom_stage_name(int i)
{
    return i >= 0 && i < EB_PROM_STAGES ? stage_names[i] : "";
}

void eb_prom_slot_add(struct eb_prom_slot *s, const uint64_t *stage_ns, uint64_t end_ns)
{
    for (int st = 0; st < EB_PROM_STAGES; st++) {
        const double t = (double)stage_ns[st] / 1e9;
        int b = 0;
        while (b < EB_PROM_BUCKETS && t > bounds[b])
            b++;
        s->bucket[st][b]++;
        s->sum_s[st] += t;
    }
    s->frames++;
    s->elapsed_s = (double)end_ns / 1e9;
}

void eb_prom_system_from(const struct eb_sampler_live *lv, struct eb_prom_system *o)
{
    memset(o, 0, sizeof(*o));
    o->have = 1;
    o->cpu_pct = lv->cpu_avg_pct;
    o->n_cores = lv->n_cores < EB_PROM_MAX_CORES ? lv->n_cores : EB_PROM_MAX_CORES;
    for (int i = 0; i < o->n_cores; i++)
        o->core_pct[i] = lv->core_pct[i];
    o->ram_used_bytes = lv->have_mem ? (double)lv->mem.used : NAN;
    o->ram_total_bytes = lv->have_mem ? (double)lv->mem.total : NAN;
    o->swap_used_bytes = lv->have_mem ? (double)lv->mem.swap_used : NAN;
    o->rss_bytes = lv->rss_bytes > 0 ? (double)lv->rss_bytes : NAN;
    o->n_zones = lv->n_zones < EB_SAMPLER_MAX_ZONES ? lv->n_zones : EB_SAMPLER_MAX_ZONES;
    for (int i = 0; i < o->n_zones; i++) {
        snprintf(o->zone[i], sizeof(o->zone[i]), "%s", lv->zone_name[i] ? lv->zone_name[i] : "");
        o->zone_c[i] = lv->zone_c[i];
    }
    o->n_gpus = lv->n_gpus < EB_SAMPLER_MAX_GPUS ? lv->n_gpus : EB_SAMPLER_MAX_GPUS;
    for (int i = 0; i < o->n_gpus; i++) {
        const struct eb_sampler__gpu_reading *r = &lv->gpus[i];
        o->gpu[i].index = lv->gpu_index[i];
        snprintf(o->gpu[i].name, sizeof(o->gpu[i].name), "%s",
                 lv->gpu_name[i] ? lv->gpu_name[i] : "");
        o->gpu[i].util_pct = r->util_pct;
        o->gpu[i].mem_used_bytes = r->mem_used_mb * 1048576.0;
        o->gpu[i].mem_total_bytes = r->mem_total_mb * 1048576.0;
        o->gpu[i].power_w = r->power_mw / 1e3;
        o->gpu[i].temp_c = r->temp_c;
        o->gpu[i].sm_hz = r->sm_clock_mhz * 1e6;
        o->gpu[i].mem_hz = r->mem_clock_mhz * 1e6;
        o->gpu[i].have_reasons = r->have_reasons;
        o->gpu[i].reasons = r->reasons;
    }
    const struct eb_tegra_sample *t = lv->tegra;
    if (t != NULL) {
        o->tegra = 1;
        o->tegra_gpu_pct = t->gpu_load_pct;
        o->tegra_gpu_hz = t->gpu_freq_mhz * 1e6;
        o->tegra_emc_pct = t->emc_load_pct;
        o->tegra_power_w = t->power_total_mw / 1e3;
        o->n_rails = t->n_rails < EB_PROM_MAX_RAILS ? t->n_rails : EB_PROM_MAX_RAILS;
        for (int i = 0; i < o->n_rails; i++) {
            snprintf(o->rail[i], sizeof(o->rail[i]), "%s", t->rails[i].name);
            o->rail_w[i] = t->rails[i].cur_mw / 1e3;
        }
    }
}

/* ---- the text format ---------------------------------------------------------------------- */

/* Output into a caller's buffer that counts what it would need (as snprintf). */
struct out {
    char *buf;
    size_t size, len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const size_t room = o->len < o->size ? o->size - o->len : 0;
    const int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len += (size_t)n;
}

static void put_char(struct out *o, char c)
{
    if (o->len + 1 < o->size) {
        o->buf[o->len] = c;
        o->buf[o->len + 1] = '\0';
    }
    o->len++;
}

/* `v` with backslash and newline escaped, and the double quote too when `quote` (label values;
 * HELP text escapes only the first two). */
static void put_escaped(struct out *o, const char *v, int quote)
{
    for (; *v; v++) {
        if (*v == '\\')
            put(o, "\\\\");
        else if (*v == '\n')
            put(o, "\\n");
        else if (*v == '"' && quote)
            put(o, "\\\"");
        else
            put_char(o, *v);
    }
}

size_t eb_prom_escape_label(const char *v, char *buf, size_t size)
{
    struct out o = {.buf = buf, .size = size, .len = 0};
    if (size > 0)
        buf[0] = '\0';
    put_escaped(&o, v, 1);
    return o.len;
}

/* A sample's value: integers exactly, NaN and infinities as the format spells them. */
static void put_value(struct out *o, double v)
{
    if (isnan(v))
        put(o, "NaN");
    else if (isinf(v))
        put(o, v > 0 ? "+Inf" : "-Inf");
    else if (v == floor(v) && fabs(v) < 1e15)
        put(o, "%.0f", v);
    else { /* the shortest of 15 or 17 digits that reads back as v */
        char b[40];
        snprintf(b, sizeof(b), "%.15g", v);
        if (strtod(b, NULL) != v)
            snprintf(b, sizeof(b), "%.17g", v);
        put(o, "%s", b);
    }
}

/* Which labels a family's samples carry and what they iterate over. */
enum scope {
    SC_RUN,        /* one sample: host */
    SC_SYS,        /* one sample of the system sampler's (once it sampled): host */
    SC_SLOT,       /* per shown slot: slot, model, backend, device, host */
    SC_STAGE,      /* histogram per slot and stage: the slot's labels + stage */
    SC_CORE,       /* per CPU core: host, cpu */
    SC_ZONE,       /* per thermal zone: host, zone */
    SC_GPU,        /* per NVML GPU: host, gpu, name */
    SC_GPU_REASON, /* per NVML GPU and listed throttle reason: + reason */
    SC_RAIL        /* per tegrastats power rail: host, rail */
};

enum kind { K_GAUGE, K_COUNTER, K_HISTOGRAM };

/* A family's value for item `i` (slot, core, zone, GPU, rail) and sub-item `j` (a throttle
 * reason's bit number); NaN = no sample. */
typedef double (*getter_fn)(const struct eb_prom_snapshot *s, int i, int j);

struct family {
    const char *name;
    enum kind kind;
    enum scope scope;
    const char *unit; /* base unit, in the name too; "" for counts and ratios */
    const char *help;
    getter_fn get; /* NULL for histograms (the slot's buckets) */
};

#define U64(x) ((double)(x))

static double g_limit(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)i;
    (void)j;
    return s->mem_limit_bytes > 0 ? U64(s->mem_limit_bytes) : NAN;
}
static double g_frames(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return U64(s->slots[i].frames);
}
static double g_fps(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    const struct eb_prom_slot *sl = &s->slots[i];
    return sl->elapsed_s > 0 ? (double)sl->frames / sl->elapsed_s : 0;
}
static double g_fps_target(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->slots[i].fps_target > 0 ? s->slots[i].fps_target : NAN;
}
static double g_dropped(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->slots[i].fps_target > 0 ? U64(s->slots[i].dropped) : NAN;
}
static double g_missed(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->slots[i].fps_target > 0 ? U64(s->slots[i].deadline_misses) : NAN;
}
static double g_mem(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->slots[i].frames > 0 ? U64(s->slots[i].mem_bytes) : NAN;
}
static double g_mem_peak(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->slots[i].frames > 0 ? U64(s->slots[i].mem_peak_bytes) : NAN;
}
static double g_violations(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return U64(s->slots[i].violations);
}
static double g_cpu(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)i;
    (void)j;
    return s->sys.cpu_pct / 100.0;
}
static double g_core(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->sys.core_pct[i] / 100.0;
}
static double g_ram_used(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)i;
    (void)j;
    return s->sys.ram_used_bytes;
}
static double g_ram_total(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)i;
    (void)j;
    return s->sys.ram_total_bytes;
}
static double g_swap(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)i;
    (void)j;
    return s->sys.swap_used_bytes;
}
static double g_rss(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)i;
    (void)j;
    return s->sys.rss_bytes;
}
static double g_zone(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->sys.zone_c[i];
}
static double g_gpu_util(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->sys.gpu[i].util_pct / 100.0;
}
static double g_gpu_mem(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->sys.gpu[i].mem_used_bytes;
}
static double g_gpu_mem_total(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->sys.gpu[i].mem_total_bytes;
}
static double g_gpu_power(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->sys.gpu[i].power_w;
}
static double g_gpu_temp(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->sys.gpu[i].temp_c;
}
static double g_gpu_sm(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->sys.gpu[i].sm_hz;
}
static double g_gpu_memclk(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->sys.gpu[i].mem_hz;
}
static double g_gpu_reason(const struct eb_prom_snapshot *s, int i, int j)
{
    if (!s->sys.gpu[i].have_reasons)
        return NAN;
    return (s->sys.gpu[i].reasons >> j) & 1u ? 1 : 0;
}
static double g_tegra_gpu(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)i;
    (void)j;
    return s->sys.tegra ? s->sys.tegra_gpu_pct / 100.0 : NAN;
}
static double g_tegra_gpu_hz(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)i;
    (void)j;
    return s->sys.tegra ? s->sys.tegra_gpu_hz : NAN;
}
static double g_tegra_emc(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)i;
    (void)j;
    return s->sys.tegra ? s->sys.tegra_emc_pct / 100.0 : NAN;
}
static double g_tegra_power(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)i;
    (void)j;
    return s->sys.tegra ? s->sys.tegra_power_w : NAN;
}
static double g_rail(const struct eb_prom_snapshot *s, int i, int j)
{
    (void)j;
    return s->sys.rail_w[i];
}

/* Every metric the endpoint serves, in the order it serves them (docs/prometheus.md lists the
 * same; tests/unit/test_prometheus.c checks that every name is there). */
static const struct family families[] = {
    {"edgebench_memory_limit_bytes", K_GAUGE, SC_RUN, "bytes",
     "the process's memory limit (--gpu_mem_limit_gb) that every frame's memory figure is checked "
     "against",
     g_limit},
    {"edgebench_slot_frames_total", K_COUNTER, SC_SLOT, "",
     "frames measured in the slot's measured pass so far (warm-up excluded)", g_frames},
    {"edgebench_slot_frames_per_second", K_GAUGE, SC_SLOT, "",
     "measured frames over the time from the pass's start to the end of the last frame", g_fps},
    {"edgebench_slot_stage_latency_seconds", K_HISTOGRAM, SC_STAGE, "seconds",
     "time of one stage of a measured frame (read, preprocess, inference, postprocess, and "
     "end_to_end from read start to postprocess end)",
     NULL},
    {"edgebench_slot_target_frames_per_second", K_GAUGE, SC_SLOT, "",
     "paced slots: the rate frames arrive at", g_fps_target},
    {"edgebench_slot_dropped_frames_total", K_COUNTER, SC_SLOT, "",
     "paced slots: frames that arrived while the slot was busy and the queue was full", g_dropped},
    {"edgebench_slot_deadline_misses_total", K_COUNTER, SC_SLOT, "",
     "paced slots: measured frames whose latency from arrival exceeded the frame period", g_missed},
    {"edgebench_slot_memory_bytes", K_GAUGE, SC_SLOT, "bytes",
     "the monitored memory figure (process RSS; system memory used on unified memory) after the "
     "slot's last frame",
     g_mem},
    {"edgebench_slot_memory_peak_bytes", K_GAUGE, SC_SLOT, "bytes",
     "the largest monitored memory figure after any of the slot's frames", g_mem_peak},
    {"edgebench_slot_memory_violations_total", K_COUNTER, SC_SLOT, "",
     "the slot's frames after which the monitored memory figure was above the limit", g_violations},
    {"edgebench_cpu_load_ratio", K_GAUGE, SC_SYS, "", "load of all CPU cores (0 to 1), last sample",
     g_cpu},
    {"edgebench_cpu_core_load_ratio", K_GAUGE, SC_CORE, "", "load of one CPU core (0 to 1)",
     g_core},
    {"edgebench_memory_used_bytes", K_GAUGE, SC_SYS, "bytes",
     "system memory used (MemTotal - MemAvailable)", g_ram_used},
    {"edgebench_memory_total_bytes", K_GAUGE, SC_SYS, "bytes", "system memory (MemTotal)",
     g_ram_total},
    {"edgebench_swap_used_bytes", K_GAUGE, SC_SYS, "bytes", "swap in use", g_swap},
    {"edgebench_process_resident_memory_bytes", K_GAUGE, SC_SYS, "bytes",
     "resident set size of the edgebench process", g_rss},
    {"edgebench_thermal_zone_celsius", K_GAUGE, SC_ZONE, "celsius",
     "temperature of a thermal zone (/sys/class/thermal)", g_zone},
    {"edgebench_gpu_load_ratio", K_GAUGE, SC_GPU, "", "NVML: GPU utilisation (0 to 1)", g_gpu_util},
    {"edgebench_gpu_memory_used_bytes", K_GAUGE, SC_GPU, "bytes", "NVML: GPU memory used",
     g_gpu_mem},
    {"edgebench_gpu_memory_total_bytes", K_GAUGE, SC_GPU, "bytes", "NVML: GPU memory",
     g_gpu_mem_total},
    {"edgebench_gpu_power_watts", K_GAUGE, SC_GPU, "watts", "NVML: board power draw", g_gpu_power},
    {"edgebench_gpu_temperature_celsius", K_GAUGE, SC_GPU, "celsius", "NVML: GPU temperature",
     g_gpu_temp},
    {"edgebench_gpu_sm_clock_hertz", K_GAUGE, SC_GPU, "hertz", "NVML: SM clock", g_gpu_sm},
    {"edgebench_gpu_memory_clock_hertz", K_GAUGE, SC_GPU, "hertz", "NVML: memory clock",
     g_gpu_memclk},
    {"edgebench_gpu_throttle_active", K_GAUGE, SC_GPU_REASON, "",
     "NVML: 1 while this clocks-event (throttle) reason holds the clocks down, else 0",
     g_gpu_reason},
    {"edgebench_tegra_gpu_load_ratio", K_GAUGE, SC_SYS, "", "tegrastats: GPU load (GR3D, 0 to 1)",
     g_tegra_gpu},
    {"edgebench_tegra_gpu_clock_hertz", K_GAUGE, SC_SYS, "hertz", "tegrastats: GPU clock (GR3D)",
     g_tegra_gpu_hz},
    {"edgebench_tegra_emc_load_ratio", K_GAUGE, SC_SYS, "",
     "tegrastats: memory controller load (EMC, 0 to 1)", g_tegra_emc},
    {"edgebench_tegra_power_watts", K_GAUGE, SC_SYS, "watts",
     "tegrastats: board input power (VDD_IN, POM_5V_IN or VIN_SYS_5V0)", g_tegra_power},
    {"edgebench_tegra_rail_power_watts", K_GAUGE, SC_RAIL, "watts",
     "tegrastats: current power of one rail", g_rail},
};
#define N_FAMILIES (sizeof(families) / sizeof(families[0]))

size_t eb_prom_family_count(void)
{
    return N_FAMILIES;
}

const char *eb_prom_family_name(size_t i, const char **unit_out)
{
    if (i >= N_FAMILIES)
        return NULL;
    if (unit_out != NULL)
        *unit_out = families[i].unit;
    return families[i].name;
}

/* One label pair, `first` without the comma. */
static void put_label(struct out *o, int *first, const char *key, const char *value)
{
    put(o, "%s%s=\"", *first ? "" : ",", key);
    put_escaped(o, value, 1);
    put_char(o, '"');
    *first = 0;
}

/* The labels of item `i` (and sub-item `j`) of a family of scope `sc`, then `extra_key`'s pair
 * when given (le, stage), inside braces. */
static void put_labels(struct out *o, const struct eb_prom_snapshot *s, enum scope sc, int i, int j,
                       const char *k1, const char *v1, const char *k2, const char *v2)
{
    int first = 1;
    char num[32];
    put_char(o, '{');
    if (sc == SC_SLOT || sc == SC_STAGE) {
        const struct eb_prom_slot *sl = &s->slots[i];
        put_label(o, &first, "slot", sl->slot);
        put_label(o, &first, "model", sl->model);
        put_label(o, &first, "backend", sl->backend);
        put_label(o, &first, "device", sl->device);
    }
    put_label(o, &first, "host", s->host);
    switch (sc) {
    case SC_CORE:
        snprintf(num, sizeof(num), "%d", i);
        put_label(o, &first, "cpu", num);
        break;
    case SC_ZONE: put_label(o, &first, "zone", s->sys.zone[i]); break;
    case SC_GPU:
    case SC_GPU_REASON:
        snprintf(num, sizeof(num), "%d", s->sys.gpu[i].index);
        put_label(o, &first, "gpu", num);
        put_label(o, &first, "name", s->sys.gpu[i].name);
        if (sc == SC_GPU_REASON)
            put_label(o, &first, "reason", eb_sampler_throttle_name(1ull << j));
        break;
    case SC_RAIL: put_label(o, &first, "rail", s->sys.rail[i]); break;
    default: break;
    }
    if (k1 != NULL)
        put_label(o, &first, k1, v1);
    if (k2 != NULL)
        put_label(o, &first, k2, v2);
    put(o, "} ");
}

/* How many items a scope iterates over in `s`, and whether item `i` is there. */
static int items(const struct eb_prom_snapshot *s, enum scope sc)
{
    switch (sc) {
    case SC_RUN:
    case SC_SYS: return 1;
    case SC_SLOT:
    case SC_STAGE: return EB_PROM_MAX_SLOTS;
    case SC_CORE: return s->sys.have ? s->sys.n_cores : 0;
    case SC_ZONE: return s->sys.have ? s->sys.n_zones : 0;
    case SC_GPU:
    case SC_GPU_REASON: return s->sys.have ? s->sys.n_gpus : 0;
    case SC_RAIL: return s->sys.have && s->sys.tegra ? s->sys.n_rails : 0;
    }
    return 0;
}

static int item_shown(const struct eb_prom_snapshot *s, enum scope sc, int i)
{
    if (sc == SC_SLOT || sc == SC_STAGE)
        return s->slots[i].used;
    if (sc == SC_RUN)
        return 1;
    return s->sys.have;
}

/* Sub-items: the listed throttle reasons' bit numbers for SC_GPU_REASON, else one. */
static int sub_items(enum scope sc, int *subs)
{
    if (sc != SC_GPU_REASON) {
        subs[0] = 0;
        return 1;
    }
    int n = 0;
    for (int b = 0; b < 64; b++)
        if ((EB_SAMPLER_THROTTLE_LISTED >> b) & 1u)
            subs[n++] = b;
    return n;
}

static void put_header(struct out *o, const struct family *f)
{
    static const char *const kinds[] = {"gauge", "counter", "histogram"};
    put(o, "# HELP %s ", f->name);
    put_escaped(o, f->help, 0);
    put(o, "\n# TYPE %s %s\n", f->name, kinds[f->kind]);
}

static void put_histograms(struct out *o, const struct eb_prom_snapshot *s, const struct family *f)
{
    int header = 0;
    for (int i = 0; i < EB_PROM_MAX_SLOTS; i++) {
        if (!s->slots[i].used)
            continue;
        if (!header)
            put_header(o, f);
        header = 1;
        const struct eb_prom_slot *sl = &s->slots[i];
        for (int st = 0; st < EB_PROM_STAGES; st++) {
            uint64_t cum = 0;
            for (int b = 0; b <= EB_PROM_BUCKETS; b++) {
                char le[32];
                cum += sl->bucket[st][b];
                if (b < EB_PROM_BUCKETS)
                    snprintf(le, sizeof(le), "%g", bounds[b]);
                else
                    snprintf(le, sizeof(le), "+Inf");
                put(o, "%s_bucket", f->name);
                put_labels(o, s, SC_STAGE, i, 0, "stage", stage_names[st], "le", le);
                put(o, "%llu\n", (unsigned long long)cum);
            }
            put(o, "%s_sum", f->name);
            put_labels(o, s, SC_STAGE, i, 0, "stage", stage_names[st], NULL, NULL);
            put_value(o, sl->sum_s[st]);
            put(o, "\n%s_count", f->name);
            put_labels(o, s, SC_STAGE, i, 0, "stage", stage_names[st], NULL, NULL);
            put(o, "%llu\n", (unsigned long long)cum);
        }
    }
}

size_t eb_prom_render(const struct eb_prom_snapshot *s, char *buf, size_t size)
{
    struct out o = {.buf = buf, .size = size, .len = 0};
    if (size > 0)
        buf[0] = '\0';
    for (size_t k = 0; k < N_FAMILIES; k++) {
        const struct family *f = &families[k];
        if (f->kind == K_HISTOGRAM) {
            put_histograms(&o, s, f);
            continue;
        }
        int header = 0, subs[64];
        const int n = items(s, f->scope), m = sub_items(f->scope, subs);
        for (int i = 0; i < n; i++) {
            if (!item_shown(s, f->scope, i))
                continue;
            for (int j = 0; j < m; j++) {
                const double v = f->get(s, i, subs[j]);
                if (isnan(v))
                    continue;
                if (!header)
                    put_header(&o, f);
                header = 1;
                put(&o, "%s", f->name);
                put_labels(&o, s, f->scope, i, subs[j], NULL, NULL, NULL, NULL);
                put_value(&o, v);
                put_char(&o, '\n');
            }
        }
    }
    return o.len;
}

/* ---- the address ------------------------------------------------------------------------ */

enum eb_status eb_prom_parse_addr(const char *text, char *host_out, size_t host_size, int *port_out,
                                  struct eb_diag *diag)
{
    const char *port_text = text, *host = "127.0.0.1";
    size_t host_len = strlen(host);
    if (text == NULL || text[0] == '\0')
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "empty address; give ADDR:PORT, :PORT or PORT");
    if (text[0] == '[') { /* [IPv6]:PORT */
        const char *close = strchr(text, ']');
        if (close == NULL || close[1] != ':')
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "'%.100s' is not an address: give [IPv6]:PORT", text);
        host = text + 1;
        host_len = (size_t)(close - host);
        port_text = close + 2;
    } else {
        const char *colon = strrchr(text, ':');
        if (colon != NULL && strchr(text, ':') != colon)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "'%.100s' is not an address: write an IPv6 address in brackets, "
                                "[ADDR]:PORT",
                                text);
        if (colon != NULL) {
            port_text = colon + 1;
            if (colon > text) {
                host = text;
                host_len = (size_t)(colon - text);
            }
        }
    }
    char *end = NULL;
    errno = 0;
    const long port = strtol(port_text, &end, 10);
    if (port_text[0] < '0' || port_text[0] > '9' || *end != '\0' || errno != 0 || port < 0 ||
        port > 65535)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "'%.100s': the port must be a number from 0 to 65535 (0 = any free "
                            "port)",
                            text);
    if (host_len == 0 || host_len >= host_size)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "'%.100s': bad address", text);
    memcpy(host_out, host, host_len);
    host_out[host_len] = '\0';
    *port_out = (int)port;
    return EB_OK;
}

/* ---- the server --------------------------------------------------------------------------- */

/* How long the listener is left out of poll after accept() ran out of descriptors. */
#define ACCEPT_PAUSE_NS 100000000ull

enum conn_state { CONN_FREE = 0, CONN_READING, CONN_WRITING };

struct conn {
    enum conn_state state;
    int fd;
    uint64_t deadline; /* eb_clock_ns: read the request and write the answer before it */
    char req[EB_PROM_MAX_REQUEST];
    size_t req_len;
    char *out; /* the answer (owned) */
    size_t out_len, out_off;
};

struct eb_prom {
    struct eb_mutex mu; /* guards snap and scrapes; never held across a system call */
    struct eb_prom_snapshot snap;
    uint64_t scrapes;

    /* The server thread's own. */
    int lfd;
    int wake[2]; /* a byte on wake[1] stops the thread */
    char addr[96];
    int max_conns;
    uint64_t timeout_ns;
    struct conn *conns;
    struct pollfd *pf;             /* max_conns + 2: the wake pipe, the listener, the clients */
    int *which;                    /* the client of each pf entry */
    struct eb_prom_snapshot *copy; /* what one answer renders */
    char *page;
    size_t page_cap;
    uint64_t accept_paused_until; /* eb_clock_ns; see on_accept */
    struct eb_thread th;
    int started;
};

static void set_flags(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
}

/* Closes a client's socket after reading what it sent and we did not read (at most 64 KiB,
 * without waiting): closing with unread bytes would reset the connection, and the client
 * could lose the answer it was sent. */
static void close_drained(int fd)
{
    char buf[4096];
    for (int k = 0; k < 16 && recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0; k++)
        ;
    close(fd);
}

static void conn_close(struct conn *c)
{
    if (c->state == CONN_FREE)
        return;
    close_drained(c->fd);
    free(c->out);
    c->out = NULL;
    c->state = CONN_FREE;
}

/* An answer with a small body (errors). */
static char *answer(const char *status, const char *extra, const char *body, size_t body_len,
                    const char *type, size_t *len_out)
{
    char head[512];
    const int h = snprintf(head, sizeof(head),
                           "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
                           "Connection: close\r\n\r\n",
                           status, type, body_len, extra);
    char *a = malloc((size_t)h + body_len);
    if (a == NULL)
        return NULL;
    memcpy(a, head, (size_t)h);
    memcpy(a + h, body, body_len);
    *len_out = (size_t)h + body_len;
    return a;
}

static char *error_answer(const char *status, const char *extra, size_t *len_out)
{
    char body[128];
    const int n = snprintf(body, sizeof(body), "%s\n", status);
    return answer(status, extra, body, (size_t)n, "text/plain; charset=utf-8", len_out);
}

/* The page: the snapshot copied out under the mutex, rendered outside it. */
static char *metrics_answer(struct eb_prom *p, size_t *len_out)
{
    eb_mutex_lock(&p->mu);
    *p->copy = p->snap;
    p->scrapes++;
    eb_mutex_unlock(&p->mu);
    size_t need = eb_prom_render(p->copy, p->page, p->page_cap);
    if (need + 1 > p->page_cap && need + 1 <= EB_PROM_MAX_PAGE) {
        char *grown = realloc(p->page, need + 1);
        if (grown == NULL)
            return NULL;
        p->page = grown;
        p->page_cap = need + 1;
        need = eb_prom_render(p->copy, p->page, p->page_cap);
    }
    if (need + 1 > p->page_cap)
        return error_answer("500 Internal Server Error", "", len_out);
    return answer("200 OK", "", p->page, need, "text/plain; version=0.0.4; charset=utf-8", len_out);
}

/* The request in c->req is whole: its answer. */
static char *respond(struct eb_prom *p, struct conn *c, size_t *len_out)
{
    char method[16], target[1024], version[16];
    c->req[c->req_len < sizeof(c->req) ? c->req_len : sizeof(c->req) - 1] = '\0';
    if (sscanf(c->req, "%15s %1023s %15s", method, target, version) != 3 ||
        strncmp(version, "HTTP/1.", 7) != 0)
        return error_answer("400 Bad Request", "", len_out);
    if (strcmp(method, "GET") != 0)
        return error_answer("405 Method Not Allowed", "Allow: GET\r\n", len_out);
    char *q = strchr(target, '?');
    if (q != NULL)
        *q = '\0';
    if (strcmp(target, "/metrics") != 0)
        return error_answer("404 Not Found", "", len_out);
    return metrics_answer(p, len_out);
}

static void start_writing(struct conn *c, char *out, size_t len)
{
    if (out == NULL) {
        conn_close(c);
        return;
    }
    c->out = out;
    c->out_len = len;
    c->out_off = 0;
    c->state = CONN_WRITING;
}

static void on_readable(struct eb_prom *p, struct conn *c)
{
    const ssize_t n = recv(c->fd, c->req + c->req_len, sizeof(c->req) - 1 - c->req_len, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        conn_close(c);
        return;
    }
    if (n < 0)
        return;
    c->req_len += (size_t)n;
    c->req[c->req_len] = '\0';
    size_t len = 0;
    char *a = NULL;
    if (strstr(c->req, "\r\n\r\n") != NULL || strstr(c->req, "\n\n") != NULL)
        a = respond(p, c, &len);
    else if (c->req_len >= sizeof(c->req) - 1)
        a = error_answer("431 Request Header Fields Too Large", "", &len);
    else
        return; /* more to come */
    start_writing(c, a, len);
}

static void on_writable(struct conn *c)
{
    const ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        conn_close(c);
        return;
    }
    c->out_off += (size_t)n;
    if (c->out_off == c->out_len) {
        shutdown(c->fd, SHUT_WR);
        conn_close(c);
    }
}

static void on_accept(struct eb_prom *p, uint64_t now)
{
    for (;;) {
        const int fd = accept(p->lfd, NULL, NULL);
        if (fd < 0) {
            /* EAGAIN: no more. Out of descriptors or memory: the pending connection stays
             * and the listener stays readable, so it is left out of poll for a while rather
             * than spun on. */
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                p->accept_paused_until = now + ACCEPT_PAUSE_NS;
            return;
        }
        set_flags(fd);
        struct conn *c = NULL;
        for (int i = 0; i < p->max_conns && c == NULL; i++)
            if (p->conns[i].state == CONN_FREE)
                c = &p->conns[i];
        if (c == NULL) { /* full: one best-effort answer, never waited for */
            size_t len = 0;
            char *a = error_answer("503 Service Unavailable", "Retry-After: 1\r\n", &len);
            if (a != NULL && send(fd, a, len, MSG_NOSIGNAL) >= 0)
                shutdown(fd, SHUT_WR);
            free(a);
            close_drained(fd);
            continue;
        }
        c->state = CONN_READING;
        c->fd = fd;
        c->req_len = 0;
        c->req[0] = '\0';
        c->deadline = now + p->timeout_ns;
    }
}

static void *server_main(void *arg)
{
    struct eb_prom *p = arg;
    struct pollfd *pf = p->pf;
    int *which = p->which;
    for (;;) { /* until the wake pipe is written (eb_prom_stop) */
        int n = 0;
        pf[n++] = (struct pollfd){.fd = p->wake[0], .events = POLLIN};
        uint64_t now = eb_clock_ns(), next = UINT64_MAX;
        const int paused = now < p->accept_paused_until;
        pf[n++] = (struct pollfd){.fd = p->lfd, .events = paused ? 0 : POLLIN};
        if (paused)
            next = p->accept_paused_until;
        for (int i = 0; i < p->max_conns; i++) {
            struct conn *c = &p->conns[i];
            if (c->state == CONN_FREE)
                continue;
            which[n] = i;
            pf[n++] =
                (struct pollfd){.fd = c->fd, .events = c->state == CONN_READING ? POLLIN : POLLOUT};
            if (c->deadline < next)
                next = c->deadline;
        }
        const int ms = next == UINT64_MAX ? -1
                       : next <= now      ? 0
                                          : (int)((next - now + 999999) / 1000000);
        if (poll(pf, (nfds_t)n, ms) < 0 && errno != EINTR)
            break;
        if (pf[0].revents != 0)
            break;
        now = eb_clock_ns();
        for (int k = 2; k < n; k++) {
            struct conn *c = &p->conns[which[k]];
            if (pf[k].revents == 0)
                continue;
            if (c->state == CONN_READING)
                on_readable(p, c);
            else if (c->state == CONN_WRITING)
                on_writable(c);
        }
        for (int i = 0; i < p->max_conns; i++) /* too slow: dropped */
            if (p->conns[i].state != CONN_FREE && now >= p->conns[i].deadline)
                conn_close(&p->conns[i]);
        if (pf[1].revents != 0)
            on_accept(p, now);
    }
    for (int i = 0; i < p->max_conns; i++)
        conn_close(&p->conns[i]);
    return NULL;
}

static enum eb_status listen_on(struct eb_prom *p, const char *text, struct eb_diag *diag)
{
    char host[80], port_text[16];
    int port = 0;
    enum eb_status st = eb_prom_parse_addr(text, host, sizeof(host), &port, diag);
    if (st != EB_OK)
        return st;
    snprintf(port_text, sizeof(port_text), "%d", port);
    const int v6 = strchr(host, ':') != NULL;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    const int gai = getaddrinfo(host, port_text, &hints, &ai);
    if (gai != 0)
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "failed to listen on %s%s%s:%d: %s",
                            v6 ? "[" : "", host, v6 ? "]" : "", port, gai_strerror(gai));
    int err = 0;
    for (struct addrinfo *a = ai; a != NULL && p->lfd < 0; a = a->ai_next) {
        const int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        const int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 16) != 0) {
            err = errno;
            close(fd);
            continue;
        }
        p->lfd = fd;
    }
    freeaddrinfo(ai);
    if (p->lfd < 0)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to listen on %s%s%s:%d: %s", v6 ? "[" : "",
                            host, v6 ? "]" : "", port, strerror(err));
    set_flags(p->lfd);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getsockname(p->lfd, (struct sockaddr *)&ss, &sl) == 0)
        port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
    snprintf(p->addr, sizeof(p->addr), "%s%s%s:%d", v6 ? "[" : "", host, v6 ? "]" : "", port);
    return EB_OK;
}

enum eb_status eb_prom_start(const struct eb_prom_config *cfg, struct eb_prom **p_out,
                             struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_NOMEM;
    struct eb_prom *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return eb_diag_fail(diag, st, "out of memory for the metrics endpoint");
    eb_mutex_init(&p->mu);
    p->lfd = -1;
    p->wake[0] = p->wake[1] = -1;
    p->max_conns = cfg->max_conns > 0 ? cfg->max_conns : 8;
    p->timeout_ns = cfg->timeout_ns > 0 ? cfg->timeout_ns : 5000000000ull;
    p->conns = calloc((size_t)p->max_conns, sizeof(*p->conns));
    p->pf = calloc((size_t)p->max_conns + 2, sizeof(*p->pf));
    p->which = calloc((size_t)p->max_conns + 2, sizeof(*p->which));
    p->copy = malloc(sizeof(*p->copy));
    p->page_cap = 65536;
    p->page = malloc(p->page_cap);
    if (p->conns == NULL || p->pf == NULL || p->which == NULL || p->copy == NULL ||
        p->page == NULL) {
        st = eb_diag_fail(diag, st, "out of memory for the metrics endpoint");
        goto fail;
    }
    if (cfg->host_label != NULL)
        snprintf(p->snap.host, sizeof(p->snap.host), "%s", cfg->host_label);
    else if (gethostname(p->snap.host, sizeof(p->snap.host) - 1) != 0)
        snprintf(p->snap.host, sizeof(p->snap.host), "unknown");
    p->snap.host[sizeof(p->snap.host) - 1] = '\0';
    if (pipe(p->wake) != 0) {
        st = eb_diag_fail(diag, EB_ERR_IO, "failed to start the metrics endpoint: pipe: %s",
                          strerror(errno));
        goto fail;
    }
    set_flags(p->wake[0]);
    set_flags(p->wake[1]);
    st = listen_on(p, cfg->addr, diag);
    if (st != EB_OK)
        goto fail;
    st = eb_thread_create(&p->th, server_main, p, diag);
    if (st != EB_OK)
        goto fail;
    p->started = 1;
    *p_out = p;
    return EB_OK;
fail:
    eb_prom_stop(p);
    return st;
}

const char *eb_prom_address(const struct eb_prom *p)
{
    return p->addr;
}

uint64_t eb_prom_scrapes(struct eb_prom *p)
{
    eb_mutex_lock(&p->mu);
    const uint64_t n = p->scrapes;
    eb_mutex_unlock(&p->mu);
    return n;
}

void eb_prom_stop(struct eb_prom *p)
{
    if (p == NULL)
        return;
    if (p->started) {
        const char b = 1;
        while (write(p->wake[1], &b, 1) < 0 && errno == EINTR)
            ;
        eb_thread_join(&p->th);
    }
    if (p->lfd >= 0)
        close(p->lfd);
    for (int i = 0; i < 2; i++)
        if (p->wake[i] >= 0)
            close(p->wake[i]);
    free(p->conns);
    free(p->pf);
    free(p->which);
    free(p->copy);
    free(p->page);
    eb_mutex_fini(&p->mu);
    free(p);
}

void eb_prom_set_limit(struct eb_prom *p, uint64_t bytes)
{
    eb_mutex_lock(&p->mu);
    p->snap.mem_limit_bytes = bytes;
    eb_mutex_unlock(&p->mu);
}

void eb_prom_slot_begin(struct eb_prom *p, int i, const char *slot, const char *model,
                        const char *backend, const char *device, double fps_target)
{
    if (i < 0 || i >= EB_PROM_MAX_SLOTS)
        return;
    eb_mutex_lock(&p->mu);
    struct eb_prom_slot *s = &p->snap.slots[i];
    memset(s, 0, sizeof(*s));
    s->used = 1;
    snprintf(s->slot, sizeof(s->slot), "%s", slot ? slot : "");
    snprintf(s->model, sizeof(s->model), "%s", model ? model : "");
    snprintf(s->backend, sizeof(s->backend), "%s", backend ? backend : "");
    snprintf(s->device, sizeof(s->device), "%s", device ? device : "");
    s->fps_target = fps_target;
    eb_mutex_unlock(&p->mu);
}

void eb_prom_frame(struct eb_prom *p, int i, const uint64_t *stage_ns, uint64_t end_ns, int missed,
                   uint64_t dropped, uint64_t mem_bytes, uint64_t mem_peak, uint64_t violations)
{
    if (i < 0 || i >= EB_PROM_MAX_SLOTS)
        return;
    eb_mutex_lock(&p->mu);
    struct eb_prom_slot *s = &p->snap.slots[i];
    eb_prom_slot_add(s, stage_ns, end_ns);
    s->deadline_misses += missed != 0;
    s->dropped = dropped;
    s->mem_bytes = mem_bytes;
    s->mem_peak_bytes = mem_peak;
    s->violations = violations;
    eb_mutex_unlock(&p->mu);
}

void eb_prom_on_sample(void *ctx, const struct eb_sampler_live *live)
{
    struct eb_prom *p = ctx;
    struct eb_prom_system *sys = malloc(sizeof(*sys)); /* the copy is made outside the lock */
    if (sys == NULL)
        return;
    eb_prom_system_from(live, sys);
    eb_mutex_lock(&p->mu);
    p->snap.sys = *sys;
    eb_mutex_unlock(&p->mu);
    free(sys);
}
