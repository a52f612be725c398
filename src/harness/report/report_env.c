/*
 * env.json: what is needed to reproduce a run (versions, build, OS/kernel, CPU, RAM, GPU and
 * driver, Jetson facts, the command line). Everything is read from files that are cheap and
 * safe to read; nothing is executed (no nvpmodel, no nvidia-smi). A fact that cannot be read
 * is null, never an error: only failing to write the file is.
 *
 * Whether this is a Jetson comes from eb_platform_detect, the same detection the run's memory
 * accounting uses. The CUDA stack's versions come from the engine (eb_engine_cuda_versions_get:
 * library calls that need no GPU); ONNX Runtime's facts from the run (only when a slot ran on
 * it).
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "eb/engine.h"
#include "harness/metrics/sampler.h"
#include "harness/report/report.h"

#define LINE_MAX_ 512
#define MAX_GPUS  16

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    size_t i = 0;
    while (s[i] == ' ' || s[i] == '\t')
        i++;
    if (i > 0)
        memmove(s, s + i, n - i + 1);
}

/* First line of a file, trimmed; 0 when unreadable or empty. */
static int read_first_line(const char *path, char *buf, size_t n)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return 0;
    int ok = fgets(buf, (int)n, fp) != NULL;
    fclose(fp);
    if (!ok)
        return 0;
    trim(buf);
    return buf[0] != '\0';
}

/* Whole small file (device-tree strings end in NUL, not newline), trimmed; 0 when empty. */
static int read_small_file(const char *path, char *buf, size_t n)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return 0;
    size_t got = fread(buf, 1, n - 1, fp);
    fclose(fp);
    buf[got] = '\0';
    trim(buf); /* works up to the first NUL */
    return buf[0] != '\0';
}

/*
 * Value of the first line "KEY<sep>value" (spaces and tabs around the key allowed), trimmed
 * and with surrounding double quotes removed; 0 when not found.
 */
static int read_key(const char *path, const char *key, char sep, char *buf, size_t n)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return 0;
    char line[LINE_MAX_];
    size_t klen = strlen(key);
    int found = 0;
    while (!found && fgets(line, sizeof(line), fp) != NULL) {
        if (strncmp(line, key, klen) != 0)
            continue;
        const char *p = line + klen;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != sep)
            continue;
        p++;
        snprintf(buf, n, "%s", p);
        trim(buf);
        size_t len = strlen(buf);
        if (len >= 2 && buf[0] == '"' && buf[len - 1] == '"') {
            memmove(buf, buf + 1, len - 2);
            buf[len - 2] = '\0';
        }
        found = buf[0] != '\0';
    }
    fclose(fp);
    return found;
}

static void kstr_if(struct eb_json_writer *w, const char *key, int have, const char *s)
{
    eb_json_kstr(w, key, have ? s : NULL);
}

static void write_build(struct eb_json_writer *w)
{
    eb_json_key(w, "build");
    eb_json_obj_begin(w);
#if defined(__clang__)
    eb_json_kstr(w, "compiler_id", "clang");
#elif defined(__GNUC__)
    eb_json_kstr(w, "compiler_id", "gcc");
#else
    eb_json_kstr(w, "compiler_id", NULL);
#endif
#ifdef __VERSION__
    eb_json_kstr(w, "compiler", __VERSION__);
#else
    eb_json_kstr(w, "compiler", NULL);
#endif
    eb_json_kint(w, "c_standard", (int64_t)__STDC_VERSION__);
#ifdef EB_BUILD_TYPE
    eb_json_kstr(w, "build_type", EB_BUILD_TYPE);
#else
    eb_json_kstr(w, "build_type", NULL);
#endif
#ifdef NDEBUG
    eb_json_kbool(w, "ndebug", 1);
#else
    eb_json_kbool(w, "ndebug", 0);
#endif
    eb_json_obj_end(w);
}

static void write_cpu_ram(struct eb_json_writer *w, const char *machine)
{
    char buf[LINE_MAX_];
    eb_json_key(w, "cpu");
    eb_json_obj_begin(w);
    /* x86 has "model name"; arm64 kernels print "Hardware" or nothing useful. */
    int have = read_key("/proc/cpuinfo", "model name", ':', buf, sizeof(buf)) ||
               read_key("/proc/cpuinfo", "Hardware", ':', buf, sizeof(buf)) ||
               read_key("/proc/cpuinfo", "Processor", ':', buf, sizeof(buf));
    kstr_if(w, "model", have, buf);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    eb_json_key(w, "n_cpus");
    if (ncpu > 0)
        eb_json_int(w, ncpu);
    else
        eb_json_null(w);
    eb_json_kstr(w, "arch", machine);
    eb_json_obj_end(w);

    eb_json_key(w, "ram_total_mb");
    if (read_key("/proc/meminfo", "MemTotal", ':', buf, sizeof(buf))) {
        char *end = NULL;
        unsigned long long kb = strtoull(buf, &end, 10);
        if (end != buf)
            eb_json_num(w, (double)kb / 1024.0);
        else
            eb_json_null(w);
    } else {
        eb_json_null(w);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* GPU names from /proc/driver/nvidia/gpus/<bus id>/information, in bus order. */
static void write_gpu_models(struct eb_json_writer *w)
{
    char ids[MAX_GPUS][64];
    size_t n = 0;
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL && n < MAX_GPUS) {
            size_t len = strlen(e->d_name);
            if (e->d_name[0] == '.' || len >= sizeof(ids[0]))
                continue;
            memcpy(ids[n], e->d_name, len + 1);
            n++;
        }
        closedir(d);
    }
    qsort(ids, n, sizeof(ids[0]), cmp_str);
    eb_json_key(w, "models");
    eb_json_arr_begin(w);
    for (size_t i = 0; i < n; i++) {
        char path[160], model[LINE_MAX_];
        int k = snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", ids[i]);
        if (k > 0 && (size_t)k < sizeof(path) && read_key(path, "Model", ':', model, sizeof(model)))
            eb_json_str(w, model);
    }
    eb_json_arr_end(w);
}

static void write_gpu(struct eb_json_writer *w)
{
    char line[LINE_MAX_];
    eb_json_key(w, "gpu");
    eb_json_obj_begin(w);
    int have = read_first_line("/proc/driver/nvidia/version", line, sizeof(line));
    kstr_if(w, "driver", have, line);
    /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Wed Jul 26 ..." */
    char ver[64] = "";
    const char *km = have ? strstr(line, "Kernel Module") : NULL;
    if (km != NULL) {
        km += strlen("Kernel Module");
        while (*km == ' ' || *km == '\t')
            km++;
        size_t len = strcspn(km, " \t");
        if (len < sizeof(ver)) {
            memcpy(ver, km, len);
            ver[len] = '\0';
        }
    }
    kstr_if(w, "driver_version", ver[0] != '\0', ver);
    write_gpu_models(w);
    eb_json_obj_end(w);
}

/* The CUDA stack: what the build links and what the machine's driver supports. */
static void write_cuda(struct eb_json_writer *w)
{
    struct eb_engine_cuda_versions v;
    eb_engine_cuda_versions_get(&v);
    eb_json_key(w, "cuda");
    eb_json_obj_begin(w);
    eb_json_kbool(w, "built", v.built);
    kstr_if(w, "runtime_version", v.runtime[0] != '\0', v.runtime);
    kstr_if(w, "driver_version", v.driver[0] != '\0', v.driver);
    kstr_if(w, "cudnn_version", v.cudnn[0] != '\0', v.cudnn);
    kstr_if(w, "cublas_version", v.cublas[0] != '\0', v.cublas);
    kstr_if(w, "note", v.note[0] != '\0', v.note);
    eb_json_obj_end(w);
}

/* The execution providers of the ONNX Runtime that ran, as an array; null when none ran. */
static void write_ort_providers(struct eb_json_writer *w, const char *list)
{
    eb_json_key(w, "ort_providers");
    if (list == NULL) {
        eb_json_null(w);
        return;
    }
    eb_json_arr_begin(w);
    char name[128];
    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",");
        if (len > 0 && len < sizeof(name)) {
            memcpy(name, p, len);
            name[len] = '\0';
            eb_json_str(w, name);
        }
        p += len;
        if (*p == ',')
            p++;
    }
    eb_json_arr_end(w);
}

static void write_jetson(struct eb_json_writer *w)
{
    /* The same detection the run uses for memory accounting, so env.json never disagrees. */
    struct eb_platform plat;
    eb_platform_detect(NULL, &plat);
    char dt[LINE_MAX_], pm[LINE_MAX_];
    int have_dt = read_small_file("/proc/device-tree/model", dt, sizeof(dt)) ||
                  read_small_file("/sys/firmware/devicetree/base/model", dt, sizeof(dt));
    /* nvpmodel keeps the current mode here; running `nvpmodel -q` is deliberately avoided. */
    int have_pm = read_first_line("/var/lib/nvpmodel/status", pm, sizeof(pm));

    eb_json_key(w, "jetson");
    eb_json_obj_begin(w);
    eb_json_kbool(w, "is_jetson", plat.is_jetson);
    kstr_if(w, "l4t_release", plat.l4t_release[0] != '\0', plat.l4t_release);
    kstr_if(w, "device_tree_model", have_dt, dt);
    kstr_if(w, "power_mode", have_pm, pm);
    eb_json_obj_end(w);
}

/* Copies a fact into a field, cut at the field's size. */
static void copy_fact(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void eb_report_env_facts(struct eb_env_facts *out)
{
    char buf[LINE_MAX_];
    memset(out, 0, sizeof(*out));
    if (gethostname(buf, sizeof(buf)) == 0) {
        buf[sizeof(buf) - 1] = '\0';
        copy_fact(out->hostname, sizeof(out->hostname), buf);
    }
    if (read_key("/etc/os-release", "PRETTY_NAME", '=', buf, sizeof(buf)) ||
        read_key("/usr/lib/os-release", "PRETTY_NAME", '=', buf, sizeof(buf)))
        copy_fact(out->os, sizeof(out->os), buf);
    struct utsname u;
    if (uname(&u) == 0 &&
        snprintf(out->kernel, sizeof(out->kernel), "%s %s %s", u.sysname, u.release, u.machine) < 0)
        out->kernel[0] = '\0';
    if (read_key("/proc/cpuinfo", "model name", ':', buf, sizeof(buf)) ||
        read_key("/proc/cpuinfo", "Hardware", ':', buf, sizeof(buf)) ||
        read_key("/proc/cpuinfo", "Processor", ':', buf, sizeof(buf)))
        copy_fact(out->cpu_model, sizeof(out->cpu_model), buf);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    out->n_cpus = ncpu > 0 ? (int)ncpu : 0;

    /* The first GPU in bus order, as env.json's gpu.models[0]. */
    char first[64] = "";
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t len = strlen(e->d_name);
            if (e->d_name[0] == '.' || len >= sizeof(first))
                continue;
            if (first[0] == '\0' || strcmp(e->d_name, first) < 0)
                memcpy(first, e->d_name, len + 1);
        }
        closedir(d);
    }
    char path[160];
    int k = snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", first);
    if (first[0] != '\0' && k > 0 && (size_t)k < sizeof(path) &&
        read_key(path, "Model", ':', buf, sizeof(buf)))
        copy_fact(out->gpu_name, sizeof(out->gpu_name), buf);
    if (read_first_line("/proc/driver/nvidia/version", buf, sizeof(buf))) {
        const char *km = strstr(buf, "Kernel Module");
        if (km != NULL) {
            km += strlen("Kernel Module");
            while (*km == ' ' || *km == '\t')
                km++;
            size_t len = strcspn(km, " \t");
            if (len < sizeof(out->gpu_driver)) {
                memcpy(out->gpu_driver, km, len);
                out->gpu_driver[len] = '\0';
            }
        }
    }
    struct eb_platform plat;
    eb_platform_detect(NULL, &plat);
    copy_fact(out->l4t_release, sizeof(out->l4t_release), plat.l4t_release);
    if (read_first_line("/var/lib/nvpmodel/status", buf, sizeof(buf)))
        copy_fact(out->power_mode, sizeof(out->power_mode), buf);
}

static int env_body(FILE *fp, const void *ctx)
{
    const struct eb_env_extra *extra = ctx;
    struct eb_json_writer w;
    char buf[LINE_MAX_];
    eb_json_writer_init_file(&w, fp, 1);
    eb_json_obj_begin(&w);
    eb_json_kint(&w, "schema_version", EB_REPORT_SCHEMA_VERSION);
    eb_json_kstr(&w, "edgebench_version", extra != NULL ? extra->version : NULL);

    time_t now = time(NULL);
    struct tm tm;
    int have_time =
        gmtime_r(&now, &tm) != NULL && strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) > 0;
    kstr_if(&w, "collected_at", have_time, buf);
    write_build(&w);

    int have = read_key("/etc/os-release", "PRETTY_NAME", '=', buf, sizeof(buf)) ||
               read_key("/usr/lib/os-release", "PRETTY_NAME", '=', buf, sizeof(buf));
    kstr_if(&w, "os", have, buf);

    struct utsname u;
    int have_uname = uname(&u) == 0;
    eb_json_key(&w, "kernel");
    eb_json_obj_begin(&w);
    kstr_if(&w, "sysname", have_uname, u.sysname);
    kstr_if(&w, "release", have_uname, u.release);
    kstr_if(&w, "version", have_uname, u.version);
    kstr_if(&w, "machine", have_uname, u.machine);
    eb_json_obj_end(&w);

    have = gethostname(buf, sizeof(buf)) == 0;
    buf[sizeof(buf) - 1] = '\0';
    kstr_if(&w, "hostname", have && buf[0] != '\0', buf);

    write_cpu_ram(&w, have_uname ? u.machine : NULL);
    write_gpu(&w);
    write_cuda(&w);
    write_jetson(&w);

    eb_json_kstr(&w, "ort_version", extra != NULL ? extra->ort_version : NULL);
    eb_json_kstr(&w, "ort_library", extra != NULL ? extra->ort_library : NULL);
    write_ort_providers(&w, extra != NULL ? extra->ort_providers : NULL);
    eb_json_kstr(&w, "command_line", extra != NULL ? extra->command_line : NULL);
    eb_json_obj_end(&w);
    if (eb_json_writer_error(&w))
        return -1;
    return fputc('\n', fp) == EOF ? -1 : 0;
}

enum eb_status eb_report_write_env(const char *dir, const struct eb_env_extra *extra,
                                   struct eb_diag *diag)
{
    return eb_report__write_atomic(dir, "env.json", env_body, extra, diag);
}
