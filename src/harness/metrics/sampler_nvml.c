/*
 * NVIDIA GPU telemetry through NVML, loaded at run time with dlopen (no NVML header or library
 * is needed to build). Used by the sampler thread only: it opens NVML, reads every GPU once per
 * interval (utilisation, memory, power, temperature, SM and memory clocks, clocks-event
 * reasons), keeps running aggregates per GPU (power integrated over the sample times) and shuts
 * NVML down when it stops.
 *
 * The few NVML types used are declared here from NVML's documented C API (nvml.h): every
 * function returns nvmlReturn_t (an enum, NVML_SUCCESS = 0), a device is an opaque pointer
 * (nvmlDevice_t), nvmlTemperatureSensors_t and nvmlClockType_t are enums passed as int.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/metrics/sampler.h"

#define MB (1024.0 * 1024.0)

/* From nvml.h. */
#define NVML_SUCCESS                    0
#define NVML_TEMPERATURE_GPU            0
#define NVML_CLOCK_SM                   1
#define NVML_CLOCK_MEM                  2
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96

struct nvml_device; /* nvmlDevice_t points at one; never defined */

struct nvml_utilization { /* nvmlUtilization_t */
    unsigned int gpu;     /* % of time a kernel ran over the last sample period */
    unsigned int memory;  /* % of time device memory was read or written */
};

struct nvml_memory { /* nvmlMemory_t (v1), bytes */
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

typedef int (*nvml_init_fn)(void);
typedef int (*nvml_count_fn)(unsigned int *count);
typedef int (*nvml_handle_fn)(unsigned int index, struct nvml_device **device);
typedef int (*nvml_name_fn)(struct nvml_device *device, char *name, unsigned int length);
typedef int (*nvml_util_fn)(struct nvml_device *device, struct nvml_utilization *util);
typedef int (*nvml_mem_fn)(struct nvml_device *device, struct nvml_memory *mem);
typedef int (*nvml_uint_fn)(struct nvml_device *device, unsigned int *value);
typedef int (*nvml_typed_uint_fn)(struct nvml_device *device, int type, unsigned int *value);
typedef int (*nvml_reasons_fn)(struct nvml_device *device, unsigned long long *reasons);
typedef const char *(*nvml_error_string_fn)(int result);

struct gpu {
    struct nvml_device *dev;
    struct eb_gpu_summary sum; /* running: the averages hold sums until close */
    uint64_t util_n, power_n;
    struct eb_energy_meter energy; /* its power at the samples' times */
    uint64_t warned_reasons;       /* slowdown reasons already logged */
};

struct eb_sampler__nvml {
    void *handle; /* dlopen handle */
    const struct eb_log *log;
    int initialised; /* nvmlInit_v2 succeeded: nvmlShutdown is owed */

    nvml_init_fn init, shutdown;
    nvml_count_fn get_count;
    nvml_handle_fn get_handle;
    nvml_name_fn get_name;
    nvml_util_fn get_util;
    nvml_mem_fn get_mem;
    nvml_uint_fn get_power;
    nvml_typed_uint_fn get_temp, get_clock;
    nvml_reasons_fn get_reasons;
    nvml_error_string_fn error_string;

    int n_gpus;
    struct gpu gpus[EB_SAMPLER_MAX_GPUS];
};

static const struct {
    uint64_t bit;
    const char *name;
} reason_names[] = {
    {EB_SAMPLER_THROTTLE_GPU_IDLE, "GpuIdle"},
    {EB_SAMPLER_THROTTLE_APP_CLOCKS, "ApplicationsClocksSetting"},
    {EB_SAMPLER_THROTTLE_SW_POWER_CAP, "SwPowerCap"},
    {EB_SAMPLER_THROTTLE_HW_SLOWDOWN, "HwSlowdown"},
    {EB_SAMPLER_THROTTLE_SYNC_BOOST, "SyncBoost"},
    {EB_SAMPLER_THROTTLE_SW_THERMAL, "SwThermalSlowdown"},
    {EB_SAMPLER_THROTTLE_HW_THERMAL, "HwThermalSlowdown"},
    {EB_SAMPLER_THROTTLE_HW_POWER_BRAKE, "HwPowerBrakeSlowdown"},
    {EB_SAMPLER_THROTTLE_DISPLAY_CLOCKS, "DisplayClockSetting"},
};

const char *eb_sampler_throttle_name(uint64_t bit)
{
    for (size_t i = 0; i < sizeof(reason_names) / sizeof(reason_names[0]); i++)
        if (reason_names[i].bit == bit)
            return reason_names[i].name;
    return NULL;
}

void eb_sampler_throttle_write_json(uint64_t mask, struct eb_json_writer *w)
{
    eb_json_arr_begin(w);
    for (size_t i = 0; i < sizeof(reason_names) / sizeof(reason_names[0]); i++)
        if (mask & reason_names[i].bit)
            eb_json_str(w, reason_names[i].name);
    eb_json_arr_end(w);
}

/* POSIX guarantees that a data pointer from dlsym converts to a function pointer. */
static void *sym(void *handle, const char *name)
{
    return dlsym(handle, name);
}

static const char *error_text(const struct eb_sampler__nvml *nv, int rc, char *buf, size_t n)
{
    const char *s = nv->error_string != NULL ? nv->error_string(rc) : NULL;
    if (s == NULL || s[0] == '\0') {
        snprintf(buf, n, "NVML error %d", rc);
        return buf;
    }
    snprintf(buf, n, "%s", s);
    return buf;
}

static void gpu_init(struct gpu *g, int index)
{
    memset(g, 0, sizeof(*g));
    struct eb_gpu_summary *s = &g->sum;
    s->index = index;
    s->util_avg_pct = s->util_max_pct = NAN;
    s->mem_used_max_mb = s->mem_total_mb = NAN;
    s->power_avg_mw = s->power_max_mw = NAN;
    s->energy_mj = NAN;
    s->temp_max_c = NAN;
    s->sm_clock_min_mhz = s->sm_clock_max_mhz = NAN;
}

enum eb_status eb_sampler__nvml_open(const char *lib, const struct eb_log *log,
                                     struct eb_sampler__nvml **nv_out, struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_NOMEM;
    char err[128];
    struct eb_sampler__nvml *nv = calloc(1, sizeof(*nv));
    if (nv == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory for the NVML reader");
    nv->log = log;
    /*
     * RTLD_NODELETE: dlclose only drops the reference; the library stays mapped until the
     * process ends (as ort_load.c does for ONNX Runtime): the driver's library is not written
     * to be unloaded and loaded again, and a later sampler may load it again.
     */
    dlerror();
    nv->handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (nv->handle == NULL) {
        const char *e = dlerror();
        st = eb_diag_fail(diag, EB_ERR_IO, "%.200s", e != NULL ? e : lib);
        goto fail;
    }
    *(void **)&nv->init = sym(nv->handle, "nvmlInit_v2");
    *(void **)&nv->shutdown = sym(nv->handle, "nvmlShutdown");
    *(void **)&nv->get_count = sym(nv->handle, "nvmlDeviceGetCount_v2");
    *(void **)&nv->get_handle = sym(nv->handle, "nvmlDeviceGetHandleByIndex_v2");
    if (nv->init == NULL || nv->shutdown == NULL || nv->get_count == NULL ||
        nv->get_handle == NULL) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                          "%.160s has no nvmlInit_v2/nvmlDeviceGetCount_v2 (not NVML, or older "
                          "than CUDA 5)",
                          lib);
        goto fail;
    }
    /* Optional: a missing one makes its field null. */
    *(void **)&nv->error_string = sym(nv->handle, "nvmlErrorString");
    *(void **)&nv->get_name = sym(nv->handle, "nvmlDeviceGetName");
    *(void **)&nv->get_util = sym(nv->handle, "nvmlDeviceGetUtilizationRates");
    *(void **)&nv->get_mem = sym(nv->handle, "nvmlDeviceGetMemoryInfo");
    *(void **)&nv->get_power = sym(nv->handle, "nvmlDeviceGetPowerUsage");
    *(void **)&nv->get_temp = sym(nv->handle, "nvmlDeviceGetTemperature");
    *(void **)&nv->get_clock = sym(nv->handle, "nvmlDeviceGetClockInfo");
    /* The "event" name is the current one (CUDA 12.2+); older drivers have only "throttle". */
    *(void **)&nv->get_reasons = sym(nv->handle, "nvmlDeviceGetCurrentClocksEventReasons");
    if (nv->get_reasons == NULL)
        *(void **)&nv->get_reasons = sym(nv->handle, "nvmlDeviceGetCurrentClocksThrottleReasons");

    int rc = nv->init();
    if (rc != NVML_SUCCESS) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "nvmlInit_v2 failed: %s",
                          error_text(nv, rc, err, sizeof(err)));
        goto fail;
    }
    nv->initialised = 1;
    unsigned int count = 0;
    rc = nv->get_count(&count);
    if (rc != NVML_SUCCESS) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "nvmlDeviceGetCount_v2 failed: %s",
                          error_text(nv, rc, err, sizeof(err)));
        goto fail;
    }
    if (count > EB_SAMPLER_MAX_GPUS) {
        eb_log_msg(log, EB_LOG_INFO, "NVML lists %u GPUs; sampling the first %d", count,
                   EB_SAMPLER_MAX_GPUS);
        count = EB_SAMPLER_MAX_GPUS;
    }
    for (unsigned int i = 0; i < count; i++) {
        struct nvml_device *dev = NULL;
        rc = nv->get_handle(i, &dev);
        if (rc != NVML_SUCCESS || dev == NULL) {
            /* e.g. no permission for this one: sample the others. */
            eb_log_msg(log, EB_LOG_WARN, "NVML: GPU %u skipped: %s", i,
                       error_text(nv, rc, err, sizeof(err)));
            continue;
        }
        struct gpu *g = &nv->gpus[nv->n_gpus++];
        gpu_init(g, (int)i);
        g->dev = dev;
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
        name[0] = '\0';
        if (nv->get_name == NULL || nv->get_name(dev, name, sizeof(name)) != NVML_SUCCESS)
            name[0] = '\0';
        name[sizeof(name) - 1] = '\0';
        snprintf(g->sum.name, sizeof(g->sum.name), "%s", name);
    }
    if (nv->n_gpus == 0) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "NVML lists no usable GPU");
        goto fail;
    }
    for (int i = 0; i < nv->n_gpus; i++)
        eb_log_msg(log, EB_LOG_INFO, "NVML: sampling GPU %d (%s)", nv->gpus[i].sum.index,
                   nv->gpus[i].sum.name[0] != '\0' ? nv->gpus[i].sum.name : "unnamed");
    *nv_out = nv;
    return EB_OK;

fail:
    eb_sampler__nvml_close(nv, NULL, NULL);
    return st;
}

int eb_sampler__nvml_count(const struct eb_sampler__nvml *nv)
{
    return nv != NULL ? nv->n_gpus : 0;
}

static double read_typed(nvml_typed_uint_fn fn, struct nvml_device *dev, int type)
{
    unsigned int v = 0;
    return fn != NULL && fn(dev, type, &v) == NVML_SUCCESS ? (double)v : NAN;
}

static void read_gpu(const struct eb_sampler__nvml *nv, struct nvml_device *dev,
                     struct eb_sampler__gpu_reading *r)
{
    r->util_pct = r->mem_util_pct = NAN;
    r->mem_used_mb = r->mem_total_mb = NAN;
    r->power_mw = NAN;
    struct nvml_utilization u;
    if (nv->get_util != NULL && nv->get_util(dev, &u) == NVML_SUCCESS) {
        r->util_pct = (double)u.gpu;
        r->mem_util_pct = (double)u.memory;
    }
    struct nvml_memory m;
    if (nv->get_mem != NULL && nv->get_mem(dev, &m) == NVML_SUCCESS) {
        r->mem_used_mb = (double)m.used / MB;
        r->mem_total_mb = (double)m.total / MB;
    }
    unsigned int p = 0;
    if (nv->get_power != NULL && nv->get_power(dev, &p) == NVML_SUCCESS)
        r->power_mw = (double)p;
    r->temp_c = read_typed(nv->get_temp, dev, NVML_TEMPERATURE_GPU);
    r->sm_clock_mhz = read_typed(nv->get_clock, dev, NVML_CLOCK_SM);
    r->mem_clock_mhz = read_typed(nv->get_clock, dev, NVML_CLOCK_MEM);
    unsigned long long reasons = 0;
    r->have_reasons = nv->get_reasons != NULL && nv->get_reasons(dev, &reasons) == NVML_SUCCESS;
    r->reasons = r->have_reasons ? (uint64_t)reasons : 0;
}

/* max that treats NaN as "none yet". */
static double fmax_nan(double acc, double v)
{
    return isnan(acc) || v > acc ? v : acc;
}

static double fmin_nan(double acc, double v)
{
    return isnan(acc) || v < acc ? v : acc;
}

static void aggregate(const struct eb_sampler__nvml *nv, struct gpu *g, uint64_t now_ns,
                      const struct eb_sampler__gpu_reading *r)
{
    struct eb_gpu_summary *s = &g->sum;
    if (isfinite(r->util_pct)) {
        s->util_avg_pct = g->util_n == 0 ? r->util_pct : s->util_avg_pct + r->util_pct;
        s->util_max_pct = fmax_nan(s->util_max_pct, r->util_pct);
        g->util_n++;
    }
    if (isfinite(r->mem_used_mb))
        s->mem_used_max_mb = fmax_nan(s->mem_used_max_mb, r->mem_used_mb);
    if (isfinite(r->mem_total_mb))
        s->mem_total_mb = r->mem_total_mb;
    if (isfinite(r->power_mw)) {
        double pw = r->power_mw;
        s->power_avg_mw = g->power_n == 0 ? pw : s->power_avg_mw + pw;
        s->power_max_mw = fmax_nan(s->power_max_mw, pw);
        g->power_n++;
        /* Trapezoid over the sample times: none before a second sample (one sample spans no
         * time: unmeasured, not 0). */
        eb_energy_add(&g->energy, now_ns, pw);
        s->energy_mj = eb_energy_readings_mj(&g->energy);
    }
    if (isfinite(r->temp_c))
        s->temp_max_c = fmax_nan(s->temp_max_c, r->temp_c);
    if (isfinite(r->sm_clock_mhz)) {
        s->sm_clock_min_mhz = fmin_nan(s->sm_clock_min_mhz, r->sm_clock_mhz);
        s->sm_clock_max_mhz = fmax_nan(s->sm_clock_max_mhz, r->sm_clock_mhz);
    }
    if (!r->have_reasons)
        return;
    s->throttle_reasons |= r->reasons & EB_SAMPLER_THROTTLE_LISTED;
    uint64_t slow = r->reasons & EB_SAMPLER_THROTTLE_SLOWDOWN;
    if (slow == 0)
        return;
    s->throttle_samples++;
    uint64_t fresh = slow & ~g->warned_reasons;
    for (uint64_t bit = 1; fresh != 0 && bit <= EB_SAMPLER_THROTTLE_DISPLAY_CLOCKS; bit <<= 1) {
        if ((fresh & bit) == 0)
            continue;
        eb_log_msg(nv->log, EB_LOG_WARN, "GPU %d (%s) is throttling: %s", s->index,
                   s->name[0] != '\0' ? s->name : "unnamed", eb_sampler_throttle_name(bit));
        fresh &= ~bit;
    }
    g->warned_reasons |= slow;
}

void eb_sampler__nvml_sample(struct eb_sampler__nvml *nv, uint64_t now_ns,
                             struct eb_sampler__gpu_reading *out)
{
    for (int i = 0; i < nv->n_gpus; i++) {
        read_gpu(nv, nv->gpus[i].dev, &out[i]);
        aggregate(nv, &nv->gpus[i], now_ns, &out[i]);
    }
}

void eb_sampler__nvml_write_json(const struct eb_sampler__nvml *nv,
                                 const struct eb_sampler__gpu_reading *r, struct eb_json_writer *w)
{
    eb_json_key(w, "gpus");
    eb_json_arr_begin(w);
    for (int i = 0; i < nv->n_gpus; i++) {
        const struct eb_gpu_summary *s = &nv->gpus[i].sum;
        eb_json_obj_begin(w);
        eb_json_kint(w, "index", s->index);
        eb_json_kstr(w, "name", s->name[0] != '\0' ? s->name : NULL);
        eb_json_knum(w, "util_pct", r[i].util_pct);
        eb_json_knum(w, "mem_util_pct", r[i].mem_util_pct);
        eb_json_knum(w, "mem_used_mb", r[i].mem_used_mb);
        eb_json_knum(w, "mem_total_mb", r[i].mem_total_mb);
        eb_json_knum(w, "power_mw", r[i].power_mw);
        eb_json_knum(w, "temp_c", r[i].temp_c);
        eb_json_knum(w, "sm_clock_mhz", r[i].sm_clock_mhz);
        eb_json_knum(w, "mem_clock_mhz", r[i].mem_clock_mhz);
        eb_json_key(w, "throttle");
        if (r[i].have_reasons)
            eb_sampler_throttle_write_json(r[i].reasons & EB_SAMPLER_THROTTLE_LISTED, w);
        else
            eb_json_null(w);
        eb_json_obj_end(w);
    }
    eb_json_arr_end(w);
}

void eb_sampler__nvml_close(struct eb_sampler__nvml *nv, struct eb_gpu_summary *gpus_out,
                            int *n_out)
{
    if (n_out != NULL)
        *n_out = 0;
    if (nv == NULL)
        return;
    if (gpus_out != NULL && n_out != NULL) {
        for (int i = 0; i < nv->n_gpus; i++) {
            const struct gpu *g = &nv->gpus[i];
            struct eb_gpu_summary *s = &gpus_out[i];
            *s = g->sum;
            s->util_avg_pct = g->util_n > 0 ? g->sum.util_avg_pct / (double)g->util_n : NAN;
            s->power_avg_mw = g->power_n > 0 ? g->sum.power_avg_mw / (double)g->power_n : NAN;
        }
        *n_out = nv->n_gpus;
    }
    if (nv->initialised)
        (void)nv->shutdown();
    if (nv->handle != NULL)
        dlclose(nv->handle);
    free(nv);
}

const char *eb_sampler__nvml_name(const struct eb_sampler__nvml *nv, int i, int *index_out)
{
    *index_out = nv->gpus[i].sum.index;
    return nv->gpus[i].sum.name;
}
