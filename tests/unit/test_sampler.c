/* procfs readers, platform detection and the sampler thread (with a fake tegrastats). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eb/clock.h"
#include "eb/json.h"
#include "eb_test.h"
#include "harness/metrics/sampler.h"
#include "harness/report/report.h"

/* ---- helpers ---- */

static void mkdirs(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p != '\0'; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    }
    mkdir(buf, 0755);
}

/* Writes `len` bytes (or strlen(text) when len is 0) to root/rel, creating folders. */
static void write_file(const char *root, const char *rel, const char *text, size_t len)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    *slash = '\0';
    mkdirs(dir);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        EB_FAIL("cannot write %s", path);
    fwrite(text, 1, len ? len : strlen(text), f);
    fclose(f);
}

/* Creates <tmpdir>/<name> and returns it in `buf`. */
static char *make_root_in(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", eb_test_tmpdir(), name);
    mkdirs(buf);
    return buf;
}

/* The buffer is a compound literal: it lives until the end of the enclosing block. */
#define make_root(name) make_root_in((char[1024]){0}, 1024, (name))

/* Log capture: thread-safe (the sampler thread and the reader thread log). */
struct capture {
    pthread_mutex_t mu;
    char text[8192];
    size_t len;
};

static void capture_fn(void *ctx, enum eb_log_level level, const char *msg)
{
    struct capture *c = ctx;
    pthread_mutex_lock(&c->mu);
    int k = snprintf(c->text + c->len, sizeof(c->text) - c->len, "%s %s\n",
                     eb_log_level_name(level), msg);
    if (k > 0 && (size_t)k < sizeof(c->text) - c->len)
        c->len += (size_t)k;
    pthread_mutex_unlock(&c->mu);
}

static void capture_init(struct capture *c, struct eb_log *log)
{
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    log->fn = capture_fn;
    log->ctx = c;
    log->level = EB_LOG_DEBUG;
}

static int count_lines(const char *path)
{
    char *text = eb_test_read_file(path, NULL);
    if (text == NULL)
        return 0;
    int n = 0;
    for (char *p = text; *p != '\0'; p++)
        n += *p == '\n';
    free(text);
    return n;
}

/* Waits (polling, bounded by a generous limit, never asserting on time) until `path` has at
 * least `lines` lines and, when `needle` is set, contains it. */
static void wait_for(const char *path, int lines, const char *needle)
{
    for (int i = 0; i < 3000; i++) {
        if (count_lines(path) >= lines) {
            if (needle == NULL)
                return;
            char *text = eb_test_read_file(path, NULL);
            int found = text != NULL && strstr(text, needle) != NULL;
            free(text);
            if (found)
                return;
        }
        eb_clock_sleep_ns(10000000ull);
    }
    EB_FAIL("%s did not reach %d lines%s%s within 30 s", path, lines, needle ? " with " : "",
            needle ? needle : "");
}

/* Parses every line of metrics.jsonl, checks the keys and that t_s increases. Returns the
 * number of lines and how many carry a "tegrastats" object. */
static int check_metrics(const char *path, int *with_tegra_out)
{
    char *text = eb_test_read_file(path, NULL);
    ASSERT_TRUE(text != NULL);
    int n = 0, with_tegra = 0;
    double last_t = -1;
    for (char *p = text; *p != '\0';) {
        char *nl = strchr(p, '\n');
        ASSERT_TRUE(nl != NULL); /* every line complete */
        *nl = '\0';
        struct eb_json_value *v = NULL;
        struct eb_diag d = {0};
        if (eb_json_parse(p, strlen(p), &v, &d) != EB_OK)
            EB_FAIL("metrics line %d does not parse: %s", n + 1, d.msg);
        static const char *const keys[] = {
            "t_s",         "wall",         "cpu_pct",          "cpu_avg_pct",
            "ram_used_mb", "ram_total_mb", "ram_available_mb", "swap_used_mb",
            "rss_mb",      "temps_c"};
        for (size_t k = 0; k < EB_ARRAY_LEN(keys); k++)
            if (eb_json_get(v, keys[k]) == NULL)
                EB_FAIL("metrics line %d has no \"%s\"", n + 1, keys[k]);
        ASSERT_EQ_INT(eb_json_get(v, "cpu_pct")->type, EB_JSON_ARRAY);
        ASSERT_EQ_INT(eb_json_get(v, "temps_c")->type, EB_JSON_OBJECT);
        ASSERT_EQ_INT(eb_json_get(v, "wall")->type, EB_JSON_STRING);
        ASSERT_EQ_INT(eb_json_get(v, "ram_total_mb")->type, EB_JSON_NUMBER);
        ASSERT_TRUE(eb_json_get(v, "ram_total_mb")->num > 0);
        double t = eb_json_get(v, "t_s")->num;
        ASSERT_TRUE(t > last_t);
        last_t = t;
        const struct eb_json_value *tg = eb_json_get(v, "tegrastats");
        if (tg != NULL) {
            ASSERT_EQ_INT(tg->type, EB_JSON_OBJECT);
            ASSERT_TRUE(eb_json_get(tg, "status") != NULL);
            ASSERT_TRUE(eb_json_get(tg, "rails_mw") != NULL);
            with_tegra++;
        }
        eb_json_free(v);
        n++;
        p = nl + 1;
    }
    free(text);
    if (with_tegra_out != NULL)
        *with_tegra_out = with_tegra;
    return n;
}

static int process_gone(pid_t pid)
{
    return kill(pid, 0) != 0 && errno == ESRCH;
}

/* ---- procfs ---- */

EB_TEST(procfs_sysmem_real)
{
    struct eb_sysmem m;
    struct eb_diag d = {0};
    if (eb_procfs_sysmem(&m, &d) != EB_OK)
        EB_SKIP("/proc/meminfo not readable here: %s", d.msg);
    ASSERT_TRUE(m.total > 0);
    ASSERT_TRUE(m.available <= m.total);
    ASSERT_EQ_INT(m.used, m.total - m.available);
    ASSERT_TRUE(m.swap_used <= m.swap_total);
    ASSERT_TRUE(eb_procfs_rss_bytes() > 0);
}

EB_TEST(procfs_fake_meminfo)
{
    char *root = make_root("mem");
    write_file(root, "proc/meminfo",
               "MemTotal:        8000000 kB\nMemFree:          100000 kB\n"
               "MemAvailable:    2000000 kB\nBuffers:           1000 kB\n"
               "SwapTotal:       4000000 kB\nSwapFree:        3000000 kB\n",
               0);
    struct eb_sysmem m;
    ASSERT_OK(eb_procfs_sysmem_at(root, &m, NULL));
    ASSERT_EQ_INT(m.total, 8000000ull * 1024);
    ASSERT_EQ_INT(m.available, 2000000ull * 1024);
    ASSERT_EQ_INT(m.used, 6000000ull * 1024);
    ASSERT_EQ_INT(m.swap_total, 4000000ull * 1024);
    ASSERT_EQ_INT(m.swap_used, 1000000ull * 1024);

    char *bad = make_root("mem_bad");
    write_file(bad, "proc/meminfo", "MemTotal: 100 kB\n", 0);
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_procfs_sysmem_at(bad, &m, &d), EB_ERR_FORMAT);
    ASSERT_CONTAINS(d.msg, "MemAvailable");
    eb_diag_clear(&d);
    ASSERT_EQ_INT(eb_procfs_sysmem_at(make_root("mem_none"), &m, &d), EB_ERR_IO);
    ASSERT_CONTAINS(d.msg, "meminfo");
}

EB_TEST(procfs_fake_cpu_times)
{
    char *root = make_root("cpu");
    write_file(root, "proc/stat",
               "cpu  400 0 100 1500 0 0 0 0 0 0\n"
               "cpu0 100 0 50 850 0 0 0 0 0 0\n"
               "cpu2 300 0 50 650 0 0 0 0 0 0\n"
               "intr 1 2 3\nctxt 5\n",
               0);
    struct eb_cpu_times a[4], b[4], all_a, all_b;
    int n = 0;
    ASSERT_OK(eb_procfs_cpu_times(root, a, 4, &n, &all_a, NULL));
    ASSERT_EQ_INT(n, 3);
    ASSERT_EQ_INT(a[0].present, 1);
    ASSERT_EQ_INT(a[1].present, 0); /* offline core */
    ASSERT_EQ_INT(a[2].busy, 350);
    ASSERT_EQ_INT(a[2].total, 1000);
    write_file(root, "proc/stat",
               "cpu  700 0 100 1700 0 0 0 0 0 0\n"
               "cpu0 150 0 50 900 0 0 0 0 0 0\n"
               "cpu2 550 0 50 800 0 0 0 0 0 0\n",
               0);
    ASSERT_OK(eb_procfs_cpu_times(root, b, 4, &n, &all_b, NULL));
    ASSERT_NEAR(eb_procfs_cpu_load_pct(&a[0], &b[0]), 50.0, 1e-12);   /* 50 of 100 */
    ASSERT_NEAR(eb_procfs_cpu_load_pct(&a[2], &b[2]), 62.5, 1e-12);   /* 250 of 400 */
    ASSERT_NEAR(eb_procfs_cpu_load_pct(&all_a, &all_b), 60.0, 1e-12); /* 300 of 500 */
    ASSERT_TRUE(isnan(eb_procfs_cpu_load_pct(&a[1], &b[1])));
    ASSERT_TRUE(isnan(eb_procfs_cpu_load_pct(&b[0], &b[0]))); /* no time passed */

    struct eb_diag d = {0};
    write_file(root, "proc/stat", "intr 1\n", 0);
    ASSERT_EQ_INT(eb_procfs_cpu_times(root, a, 4, &n, &all_a, &d), EB_ERR_FORMAT);

    /* The real /proc/stat. */
    struct eb_cpu_times real[256];
    if (eb_procfs_cpu_times(NULL, real, 256, &n, &all_a, NULL) == EB_OK) {
        ASSERT_TRUE(n >= 1);
        ASSERT_TRUE(all_a.total >= all_a.busy);
    }
}

/* What other processes used during a pass: every CPU's busy ticks less our own CPU time. */
EB_TEST(others_cpu_is_busy_time_less_our_own)
{
    char *root = make_root("cpu_use");
    write_file(root, "proc/stat", "cpu  400 0 100 1500 0 0 0 0 0 0\n", 0);
    struct eb_cpu_use a, b;
    eb_procfs_cpu_use(root, &a);
    ASSERT_EQ_INT(a.ok, 1);
    ASSERT_EQ_INT(a.all.busy, 500);
    ASSERT_TRUE(a.self_s >= 0);
    write_file(root, "proc/stat", "cpu  700 0 100 1700 0 0 0 0 0 0\n", 0);
    eb_procfs_cpu_use(root, &b);
    ASSERT_EQ_INT(b.ok, 1);
    /* 300 busy ticks of 500 (at 100 per second: 3 s of 5 s); we used 1 s: others 2 s = 40% */
    a.self_s = 1.0;
    b.self_s = 2.0;
    ASSERT_NEAR(eb_cpu_use_others_pct(&a, &b, 100), 40.0, 1e-9);
    /* we used all of it: nobody else did */
    b.self_s = 4.0;
    ASSERT_NEAR(eb_cpu_use_others_pct(&a, &b, 100), 0.0, 0);
    /* too short at tick resolution, or a reading failed: not known */
    ASSERT_TRUE(isnan(eb_cpu_use_others_pct(&a, &a, 100)));
    struct eb_cpu_use failed;
    write_file(root, "proc/stat", "intr 1\n", 0);
    eb_procfs_cpu_use(root, &failed);
    ASSERT_EQ_INT(failed.ok, 0);
    ASSERT_TRUE(isnan(eb_cpu_use_others_pct(&a, &failed, 100)));
    /* the real machine: a share between 0 and 100, or not known */
    eb_procfs_cpu_use(NULL, &a);
    ASSERT_EQ_INT(a.ok, 1);
}

EB_TEST(procfs_fake_thermal_zones)
{
    char *root = make_root("thermal");
    write_file(root, "sys/class/thermal/thermal_zone1/type", "gpu-thermal\n", 0);
    write_file(root, "sys/class/thermal/thermal_zone1/temp", "41500\n", 0);
    write_file(root, "sys/class/thermal/thermal_zone0/type", "cpu-thermal\n", 0);
    write_file(root, "sys/class/thermal/thermal_zone0/temp", "-2250\n", 0);
    write_file(root, "sys/class/thermal/thermal_zone10/type", "cpu-thermal\n", 0);
    write_file(root, "sys/class/thermal/thermal_zone10/temp", "garbage\n", 0);
    write_file(root, "sys/class/thermal/cooling_device0/type", "fan\n", 0);
    struct eb_thermal_zone z[8];
    int n = eb_procfs_thermal_zones(root, z, 8);
    ASSERT_EQ_INT(n, 3);
    ASSERT_EQ_INT(z[0].index, 0);
    ASSERT_STREQ(z[0].type, "cpu-thermal");
    ASSERT_EQ_INT(z[1].index, 1);
    ASSERT_STREQ(z[1].type, "gpu-thermal");
    ASSERT_EQ_INT(z[2].index, 10);
    ASSERT_NEAR(eb_procfs_thermal_read_c(root, 0), -2.25, 1e-12);
    ASSERT_NEAR(eb_procfs_thermal_read_c(root, 1), 41.5, 1e-12);
    ASSERT_TRUE(isnan(eb_procfs_thermal_read_c(root, 10)));
    ASSERT_TRUE(isnan(eb_procfs_thermal_read_c(root, 7)));
    ASSERT_EQ_INT(eb_procfs_thermal_zones(make_root("no_thermal"), z, 8), 0);
    /* The real machine: whatever is there reads without crashing. */
    n = eb_procfs_thermal_zones(NULL, z, 8);
    for (int i = 0; i < n; i++)
        (void)eb_procfs_thermal_read_c(NULL, z[i].index);
}

/* ---- platform ---- */

EB_TEST(platform_fake_nv_tegra_release)
{
    char *root = make_root("l4t");
    write_file(root, "etc/nv_tegra_release",
               "# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64\n"
               "# KERNEL_VARIANT: oot\n",
               0);
    write_file(root, "proc/cpuinfo", "processor\t: 0\nHardware\t: NVIDIA Tegra\n", 0);
    struct eb_platform p;
    eb_platform_detect(root, &p);
    ASSERT_EQ_INT(p.is_jetson, 1);
    ASSERT_STREQ(p.l4t_release,
                 "# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64");
    ASSERT_STREQ(p.model, "NVIDIA Tegra");
    ASSERT_TRUE(p.n_cpus >= 1);
}

EB_TEST(platform_fake_device_tree)
{
    char *root = make_root("dt");
    /* Device-tree strings end with a NUL byte. */
    static const char model[] = "NVIDIA Jetson Orin Nano Developer Kit";
    write_file(root, "proc/device-tree/model", model, sizeof(model));
    struct eb_platform p;
    eb_platform_detect(root, &p);
    ASSERT_EQ_INT(p.is_jetson, 1);
    ASSERT_STREQ(p.model, "NVIDIA Jetson Orin Nano Developer Kit");
    ASSERT_STREQ(p.l4t_release, "");

    char *root2 = make_root("dt_tegra");
    write_file(root2, "proc/device-tree/model", "quill TEGRA186 board", 0);
    eb_platform_detect(root2, &p);
    ASSERT_EQ_INT(p.is_jetson, 1);

    char *rpi = make_root("dt_rpi");
    write_file(rpi, "proc/device-tree/model", "Raspberry Pi 4 Model B Rev 1.4", 0);
    eb_platform_detect(rpi, &p);
    ASSERT_EQ_INT(p.is_jetson, 0);
    ASSERT_STREQ(p.model, "Raspberry Pi 4 Model B Rev 1.4");
}

EB_TEST(platform_fake_x86)
{
    char *root = make_root("x86");
    write_file(root, "proc/cpuinfo",
               "processor\t: 0\nvendor_id\t: GenuineIntel\n"
               "model name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t: fpu\n\n"
               "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n",
               0);
    struct eb_platform p;
    eb_platform_detect(root, &p);
    ASSERT_EQ_INT(p.is_jetson, 0);
    ASSERT_STREQ(p.model, "Intel(R) Xeon(R) Platinum 8480+");
    ASSERT_STREQ(p.l4t_release, "");

    eb_platform_detect(make_root("empty"), &p);
    ASSERT_EQ_INT(p.is_jetson, 0);
    ASSERT_STREQ(p.model, "unknown");
}

EB_TEST(platform_real_machine)
{
    struct eb_platform p;
    eb_platform_detect(NULL, &p);
    ASSERT_TRUE(p.n_cpus >= 1);
    ASSERT_TRUE(p.model[0] != '\0');
    struct eb_platform q;
    eb_platform_detect("", &q);
    ASSERT_EQ_INT(p.is_jetson, q.is_jetson);
    ASSERT_STREQ(p.model, q.model);
    printf("platform: %s, jetson=%d, %d cpus\n", p.model, p.is_jetson, p.n_cpus);
}

/* ---- sampler ---- */

EB_TEST(sampler_procfs_only)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/metrics.jsonl", eb_test_tmpdir());
    struct eb_log log;
    struct capture cap;
    capture_init(&cap, &log);
    struct eb_sampler_config cfg = {.interval_ns = 20000000ull,
                                    .metrics_path = path,
                                    .tegrastats_cmd = "tegrastats",
                                    .is_jetson = 0,
                                    .log = &log};
    struct eb_sampler *s = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_sampler_start(&cfg, &s, &d));
    ASSERT_EQ_INT(eb_sampler_tegrastats_pid(s), -1);
    eb_clock_sleep_ns(200000000ull);
    wait_for(path, 3, NULL);
    struct eb_system_summary sum;
    eb_sampler_stop(s, &sum);

    int with_tegra = 0;
    int lines = check_metrics(path, &with_tegra);
    ASSERT_TRUE(lines >= 3);
    ASSERT_EQ_INT(with_tegra, 0);
    ASSERT_EQ_INT(sum.n_samples, lines);
    ASSERT_TRUE(sum.n_samples >= 3);
    ASSERT_TRUE(sum.ram_total_mb > 0);
    ASSERT_TRUE(sum.ram_used_max_mb > 0 && sum.ram_used_max_mb <= sum.ram_total_mb);
    ASSERT_TRUE(sum.ram_used_avg_mb <= sum.ram_used_max_mb);
    ASSERT_TRUE(sum.rss_max_mb > 0);
    ASSERT_TRUE(sum.duration_s > 0);
    ASSERT_TRUE(isfinite(sum.cpu_avg_pct) && sum.cpu_avg_pct >= 0 && sum.cpu_avg_pct <= 100);
    ASSERT_TRUE(sum.cpu_max_pct >= sum.cpu_avg_pct);
    ASSERT_EQ_INT(sum.tegrastats_used, 0);
    ASSERT_EQ_INT(sum.tegrastats_lines, 0);
    ASSERT_TRUE(isnan(sum.energy_mj));
    ASSERT_TRUE(isnan(sum.power_avg_mw));
    ASSERT_STREQ(sum.warning, "not a Jetson: tegrastats not used; system metrics from procfs");
    /* The normal case off a Jetson: a notice (console without --quiet, run.log), no warning. */
    ASSERT_CONTAINS(cap.text, "INFO not a Jetson");
    pthread_mutex_destroy(&cap.mu);
}

EB_TEST(sampler_fake_root_pressure_and_zones)
{
    char *root = make_root("sroot");
    write_file(root, "proc/meminfo",
               "MemTotal:        1000000 kB\nMemAvailable:     100000 kB\n"
               "SwapTotal:             0 kB\nSwapFree:              0 kB\n",
               0);
    write_file(root, "proc/stat", "cpu  1 0 1 10 0 0 0 0\ncpu0 1 0 1 10 0 0 0 0\n", 0);
    write_file(root, "sys/class/thermal/thermal_zone0/type", "cpu-thermal\n", 0);
    write_file(root, "sys/class/thermal/thermal_zone0/temp", "45000\n", 0);
    write_file(root, "sys/class/thermal/thermal_zone1/type", "cpu-thermal\n", 0);
    write_file(root, "sys/class/thermal/thermal_zone1/temp", "47500\n", 0);
    char path[1024];
    snprintf(path, sizeof(path), "%s/metrics.jsonl", eb_test_tmpdir());
    struct eb_log log;
    struct capture cap;
    capture_init(&cap, &log);
    struct eb_sampler_config cfg = {
        .interval_ns = 10000000ull, .metrics_path = path, .log = &log, .root = root};
    struct eb_sampler *s = NULL;
    ASSERT_OK(eb_sampler_start(&cfg, &s, NULL));
    wait_for(path, 3, NULL);
    struct eb_system_summary sum;
    eb_sampler_stop(s, &sum);
    int lines = check_metrics(path, NULL);
    ASSERT_TRUE(lines >= 3);
    ASSERT_EQ_INT(sum.pressure_samples, sum.n_samples);
    ASSERT_NEAR(sum.ram_total_mb, 1000000.0 / 1024.0, 1e-9);
    ASSERT_NEAR(sum.ram_used_max_mb, 900000.0 / 1024.0, 1e-9);
    ASSERT_EQ_INT(sum.n_zones, 2);
    ASSERT_STREQ(sum.zones[0].name, "cpu-thermal");
    ASSERT_STREQ(sum.zones[1].name, "cpu-thermal_1");
    ASSERT_NEAR(sum.zones[0].max_c, 45.0, 1e-12);
    ASSERT_NEAR(sum.zones[1].avg_c, 47.5, 1e-12);
    /* /proc/stat does not move in the fake tree: no load can be computed. */
    ASSERT_TRUE(isnan(sum.cpu_avg_pct));
    /* Exactly one pressure warning, with the figures. */
    ASSERT_CONTAINS(cap.text, "WARN memory pressure: available 98 MB of 977 MB (< 20%)");
    ASSERT_TRUE(strstr(strstr(cap.text, "memory pressure") + 1, "memory pressure") == NULL);

    char *text = eb_test_read_file(path, NULL);
    struct eb_json_value *v = NULL;
    ASSERT_OK(eb_json_parse(text, (size_t)(strchr(text, '\n') - text), &v, NULL));
    ASSERT_NEAR(eb_json_path(v, "temps_c/cpu-thermal")->num, 45.0, 1e-12);
    ASSERT_NEAR(eb_json_path(v, "temps_c/cpu-thermal_1")->num, 47.5, 1e-12);
    ASSERT_NEAR(eb_json_path(v, "ram_available_mb")->num, 100000.0 / 1024.0, 1e-9);
    ASSERT_EQ_INT(eb_json_path(v, "cpu_pct")->n, 1);
    ASSERT_EQ_INT(eb_json_path(v, "cpu_pct/0")->type, EB_JSON_NULL);
    eb_json_free(v);
    free(text);
    pthread_mutex_destroy(&cap.mu);
}

/* Writes the fixture's "ok" lines to lines.txt and a script printing them every 20 ms. */
static void make_fake_tegrastats(char *script, size_t size, const char *body_fmt)
{
    const char *src = getenv("EB_SRC_DIR");
    if (src == NULL)
        EB_SKIP("EB_SRC_DIR not set (run through ctest)");
    char fixture[1024];
    snprintf(fixture, sizeof(fixture), "%s/tests/data/tegrastats_variants.txt", src);
    char *text = eb_test_read_file(fixture, NULL);
    if (text == NULL)
        EB_FAIL("cannot read %s", fixture);
    char lines_path[1024];
    snprintf(lines_path, sizeof(lines_path), "%s/lines.txt", eb_test_tmpdir());
    FILE *f = fopen(lines_path, "w");
    ASSERT_TRUE(f != NULL);
    for (char *p = text; p != NULL && *p != '\0';) {
        char *nl = strchr(p, '\n');
        if (nl != NULL)
            *nl = '\0';
        char *t2 = strchr(p, '\t') ? strchr(strchr(p, '\t') + 1, '\t') : NULL;
        if (strncmp(p, "ok\t", 3) == 0 && t2 != NULL)
            fprintf(f, "%s\n", t2 + 1);
        p = nl != NULL ? nl + 1 : NULL;
    }
    fclose(f);
    free(text);
    snprintf(script, size, "%s/fake_tegrastats.sh", eb_test_tmpdir());
    f = fopen(script, "w");
    ASSERT_TRUE(f != NULL);
    fprintf(f, "#!/bin/sh\n# fake tegrastats for edgebench tests; ignores its arguments\n");
    fprintf(f, body_fmt, lines_path);
    fclose(f);
    ASSERT_TRUE(chmod(script, 0755) == 0);
}

static const char loop_body[] =
    "case \"$1\" in --interval) ;; *) exit 3 ;; esac\n"
    "while :; do\n"
    "  while IFS= read -r l; do printf '%%s\\n' \"$l\"; sleep 0.02; done < '%s'\n"
    "done\n";

EB_TEST(sampler_fake_tegrastats)
{
    char script[1024], path[1024];
    make_fake_tegrastats(script, sizeof(script), loop_body);
    snprintf(path, sizeof(path), "%s/metrics.jsonl", eb_test_tmpdir());
    struct eb_log log;
    struct capture cap;
    capture_init(&cap, &log);
    struct eb_sampler_config cfg = {.interval_ns = 20000000ull,
                                    .metrics_path = path,
                                    .tegrastats_cmd = script,
                                    .is_jetson = 1,
                                    .log = &log};
    struct eb_sampler *s = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_sampler_start(&cfg, &s, &d));
    pid_t pid = eb_sampler_tegrastats_pid(s);
    ASSERT_TRUE(pid > 0);
    eb_clock_sleep_ns(200000000ull);
    /* Wait until a few samples carry tegrastats objects (polling, bounded). */
    wait_for(path, 3, "\"tegrastats\"");
    wait_for(path, count_lines(path) + 2, NULL);
    struct eb_system_summary sum;
    eb_sampler_stop(s, &sum);
    ASSERT_TRUE(process_gone(pid));
    ASSERT_TRUE(waitpid(pid, NULL, WNOHANG) < 0); /* already reaped by stop */

    int with_tegra = 0;
    int lines = check_metrics(path, &with_tegra);
    ASSERT_TRUE(lines >= 3);
    ASSERT_TRUE(with_tegra >= 1);
    ASSERT_EQ_INT(sum.tegrastats_used, 1);
    ASSERT_TRUE(sum.tegrastats_lines > 0);
    ASSERT_EQ_INT(sum.tegrastats_bad_lines, 0);
    ASSERT_TRUE(isfinite(sum.power_avg_mw) && sum.power_avg_mw > 0);
    ASSERT_TRUE(isfinite(sum.power_max_mw) && sum.power_max_mw >= sum.power_avg_mw);
    ASSERT_TRUE(isfinite(sum.energy_mj) && sum.energy_mj >= 0);
    ASSERT_TRUE(isfinite(sum.gpu_load_avg_pct));
    ASSERT_TRUE(sum.gpu_load_max_pct >= sum.gpu_load_avg_pct);
    ASSERT_STREQ(sum.warning, "");
    pthread_mutex_destroy(&cap.mu);
}

/* tegrastats' energy spans the sampler's whole span: its first line comes an interval after it
 * starts and its last some time before the stop, so the ends hold the nearest line's power. At
 * a constant 5000 mW the energy is 5000 mW x the span exactly (it once left out the time before
 * the first line and after the last: up to an interval and a half of the run); with a single
 * line, that line's power over the span. */
static const char const_power_body[] =
    "# %s\n"
    "case \"$1\" in --interval) ;; *) exit 3 ;; esac\n"
    "line='RAM 2000/7620MB (lfb 10x4MB) CPU [10%%@1510,20%%@1510] EMC_FREQ 5%%@2133 "
    "GR3D_FREQ 50%%@[624] VDD_IN 5000mW/4800mW VDD_SOC 1400mW/1400mW'\n"
    "sleep 0.05\n"
    "[ -n \"$ONCE\" ] && { echo \"$line\"; exec sleep 10; }\n"
    "echo \"$line\"; echo \"$line\"\n" /* two at once: many lines however late they come */
    "while sleep 0.03; do echo \"$line\"; done\n";

EB_TEST(sampler_tegrastats_energy_spans_the_run)
{
    char script[1024];
    make_fake_tegrastats(script, sizeof(script), const_power_body);
    for (int once = 0; once < 2; once++) {
        ASSERT_TRUE(once ? setenv("ONCE", "1", 1) == 0 : unsetenv("ONCE") == 0);
        char path[1024];
        snprintf(path, sizeof(path), "%s/metrics%d.jsonl", eb_test_tmpdir(), once);
        struct eb_sampler_config cfg = {.interval_ns = 20000000ull,
                                        .metrics_path = path,
                                        .tegrastats_cmd = script,
                                        .is_jetson = 1};
        struct eb_sampler *s = NULL;
        ASSERT_OK(eb_sampler_start(&cfg, &s, NULL));
        /* A window inside the span, its start before the first line (50 ms in) */
        eb_clock_sleep_ns(20000000ull);
        const uint64_t t_begin = eb_clock_ns();
        eb_sampler_mark(s, EB_ENERGY_MARK_BEGIN, t_begin);
        eb_clock_sleep_ns(230000000ull);
        wait_for(path, 1, "\"tegrastats\""); /* however late the script's lines came */
        const uint64_t t_end = eb_clock_ns();
        eb_sampler_mark(s, EB_ENERGY_MARK_END, t_end);
        eb_clock_sleep_ns(50000000ull);
        struct eb_system_summary sum;
        eb_sampler_stop(s, &sum);
        const double win = 5000.0 * (double)(t_end - t_begin) / 1e9;
        ASSERT_NEAR(sum.window_energy_mj, win, 1e-6 * win);
        ASSERT_EQ_INT(sum.nvml_used, 0); /* the window's energy is tegrastats' */
        ASSERT_EQ_INT(sum.tegrastats_used, 1);
        ASSERT_TRUE(once ? sum.tegrastats_lines == 1 : sum.tegrastats_lines >= 2);
        ASSERT_NEAR(sum.power_avg_mw, 5000.0, 0);
        ASSERT_TRUE(sum.duration_s >= 0.3);
        ASSERT_NEAR(sum.energy_mj, 5000.0 * sum.duration_s, 1e-6 * 5000.0 * sum.duration_s);
    }
    ASSERT_TRUE(unsetenv("ONCE") == 0);
}

EB_TEST(sampler_tegrastats_ignoring_sigterm)
{
    /* A child that ignores SIGTERM is killed with SIGKILL; stop still returns and reaps it. */
    static const char body[] = "trap '' TERM\n"
                               "while :; do\n"
                               "  while IFS= read -r l; do printf '%%s\\n' \"$l\"; sleep 0.02; "
                               "done < '%s'\n"
                               "done\n";
    char script[1024];
    make_fake_tegrastats(script, sizeof(script), body);
    struct eb_sampler_config cfg = {
        .interval_ns = 20000000ull, .tegrastats_cmd = script, .is_jetson = 1};
    struct eb_sampler *s = NULL;
    ASSERT_OK(eb_sampler_start(&cfg, &s, NULL));
    pid_t pid = eb_sampler_tegrastats_pid(s);
    ASSERT_TRUE(pid > 0);
    eb_clock_sleep_ns(100000000ull);
    struct eb_system_summary sum;
    eb_sampler_stop(s, &sum);
    ASSERT_TRUE(process_gone(pid));
    ASSERT_TRUE(sum.n_samples >= 1);
}

EB_TEST(sampler_missing_tegrastats)
{
    char path[1024], cmd[1024];
    snprintf(path, sizeof(path), "%s/metrics.jsonl", eb_test_tmpdir());
    snprintf(cmd, sizeof(cmd), "%s/no_such_tegrastats", eb_test_tmpdir());
    struct eb_log log;
    struct capture cap;
    capture_init(&cap, &log);
    struct eb_sampler_config cfg = {.interval_ns = 20000000ull,
                                    .metrics_path = path,
                                    .tegrastats_cmd = cmd,
                                    .is_jetson = 1,
                                    .log = &log};
    struct eb_sampler *s = NULL;
    ASSERT_OK(eb_sampler_start(&cfg, &s, NULL));
    ASSERT_EQ_INT(eb_sampler_tegrastats_pid(s), -1);
    wait_for(path, 2, NULL);
    struct eb_system_summary sum;
    eb_sampler_stop(s, &sum);
    ASSERT_TRUE(sum.n_samples >= 2);
    ASSERT_EQ_INT(sum.tegrastats_used, 0);
    ASSERT_CONTAINS(sum.warning, "tegrastats not available (");
    ASSERT_CONTAINS(sum.warning, "No such file or directory");
    ASSERT_CONTAINS(sum.warning, "); using procfs only");
    ASSERT_CONTAINS(cap.text, "WARN tegrastats not available");
    ASSERT_TRUE(check_metrics(path, NULL) >= 2);

    /* Same with a bare name looked up in PATH, and with a file that is not executable. */
    struct eb_sampler_config cfg2 = {.interval_ns = 20000000ull,
                                     .tegrastats_cmd = "edgebench-no-such-tegrastats",
                                     .is_jetson = 1};
    ASSERT_OK(eb_sampler_start(&cfg2, &s, NULL));
    eb_sampler_stop(s, &sum);
    ASSERT_CONTAINS(sum.warning, "tegrastats not available (");

    char noexec[1024];
    snprintf(noexec, sizeof(noexec), "%s/not_executable", eb_test_tmpdir());
    FILE *f = fopen(noexec, "w");
    ASSERT_TRUE(f != NULL);
    fputs("#!/bin/sh\necho hi\n", f);
    fclose(f);
    chmod(noexec, 0644);
    cfg2.tegrastats_cmd = noexec;
    ASSERT_OK(eb_sampler_start(&cfg2, &s, NULL));
    eb_sampler_stop(s, &sum);
    ASSERT_CONTAINS(sum.warning, "tegrastats not available (");
    ASSERT_CONTAINS(sum.warning, "ermission denied");
    pthread_mutex_destroy(&cap.mu);
}

EB_TEST(sampler_tegrastats_exits_early)
{
    char script[1024];
    make_fake_tegrastats(script, sizeof(script), "# %s\nexit 1\n");
    struct eb_sampler_config cfg = {
        .interval_ns = 20000000ull, .tegrastats_cmd = script, .is_jetson = 1};
    struct eb_sampler *s = NULL;
    ASSERT_OK(eb_sampler_start(&cfg, &s, NULL));
    pid_t pid = eb_sampler_tegrastats_pid(s);
    eb_clock_sleep_ns(100000000ull);
    struct eb_system_summary sum;
    eb_sampler_stop(s, &sum);
    ASSERT_TRUE(process_gone(pid));
    ASSERT_EQ_INT(sum.tegrastats_used, 0);
    ASSERT_EQ_INT(sum.tegrastats_lines, 0);
    ASSERT_CONTAINS(sum.warning, "tegrastats");
    ASSERT_CONTAINS(sum.warning, "procfs only");
}

EB_TEST(sampler_long_interval_stops_promptly)
{
    /* A 1-hour interval: stop must wake the thread (condition variable), not wait it out; the
     * samples at start and at stop still record the two ends. */
    struct eb_sampler_config cfg = {.interval_ns = 3600ull * 1000000000ull};
    struct eb_sampler *s = NULL;
    ASSERT_OK(eb_sampler_start(&cfg, &s, NULL));
    struct eb_system_summary sum;
    eb_sampler_stop(s, &sum);
    ASSERT_EQ_INT(sum.n_samples, 2);
    ASSERT_TRUE(sum.ram_total_mb > 0);
}

EB_TEST(sampler_errors_and_null)
{
    struct eb_system_summary sum;
    memset(&sum, 0x5a, sizeof(sum));
    eb_sampler_stop(NULL, &sum);
    ASSERT_EQ_INT(sum.n_samples, 0);
    ASSERT_TRUE(isnan(sum.energy_mj));
    ASSERT_STREQ(sum.warning, "");
    eb_sampler_stop(NULL, NULL);

    char path[1024];
    snprintf(path, sizeof(path), "%s/no/such/dir/metrics.jsonl", eb_test_tmpdir());
    struct eb_sampler_config cfg = {.interval_ns = 20000000ull, .metrics_path = path};
    struct eb_sampler *s = NULL;
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_sampler_start(&cfg, &s, &d), EB_ERR_IO);
    ASSERT_TRUE(s == NULL);
    ASSERT_CONTAINS(d.msg, "no/such/dir/metrics.jsonl");
    eb_diag_clear(&d);
    ASSERT_EQ_INT(eb_sampler_start(NULL, &s, &d), EB_ERR_INVALID_ARG);
}

/* ---- NVML (tests/support/fake_nvml.c stands in for libnvidia-ml.so.1) ---- */

static const char *fake_nvml_path(void)
{
    const char *p = getenv("EB_FAKE_NVML");
    if (p == NULL || p[0] == '\0')
        EB_SKIP("EB_FAKE_NVML not set (run through ctest)");
    return p;
}

/* Runs the sampler every 10 ms with NVML from `lib` until metrics.jsonl has `lines` lines. */
/* Runs the sampler with NVML from `lib` until metrics.jsonl has `lines` lines; its energy window
 * marked from just after the start to just before the stop (the times in window_ns[2] when not
 * NULL). */
static void run_nvml_sampler(const char *lib, const char *path, int lines, struct capture *cap,
                             struct eb_system_summary *sum, uint64_t *window_ns)
{
    struct eb_log log;
    capture_init(cap, &log);
    struct eb_sampler_config cfg = {
        .interval_ns = 10000000ull, .metrics_path = path, .log = &log, .nvml_lib = lib};
    struct eb_sampler *s = NULL;
    struct eb_diag d = {0};
    ASSERT_OK(eb_sampler_start(&cfg, &s, &d));
    const uint64_t t_begin = eb_clock_ns();
    eb_sampler_mark(s, EB_ENERGY_MARK_BEGIN, t_begin);
    wait_for(path, lines, NULL);
    const uint64_t t_end = eb_clock_ns();
    eb_sampler_mark(s, EB_ENERGY_MARK_END, t_end);
    eb_sampler_stop(s, sum);
    if (window_ns != NULL) {
        window_ns[0] = t_begin;
        window_ns[1] = t_end;
    }
}

/* Every line of metrics.jsonl: the sampler's keys, and "gpus" with `n_gpus` entries (0 = no
 * "gpus" key). Returns the number of lines; the first and last t_s go to the outputs. */
static int check_gpu_lines(const char *path, int n_gpus, double *t_first, double *t_last)
{
    ASSERT_TRUE(check_metrics(path, NULL) >= 1);
    char *text = eb_test_read_file(path, NULL);
    ASSERT_TRUE(text != NULL);
    int n = 0;
    for (char *p = text; *p != '\0'; n++) {
        char *nl = strchr(p, '\n');
        *nl = '\0';
        struct eb_json_value *v = NULL;
        ASSERT_OK(eb_json_parse(p, strlen(p), &v, NULL));
        double t = eb_json_get(v, "t_s")->num;
        if (n == 0)
            *t_first = t;
        *t_last = t;
        const struct eb_json_value *g = eb_json_get(v, "gpus");
        if (n_gpus == 0) {
            ASSERT_TRUE(g == NULL);
        } else {
            ASSERT_TRUE(g != NULL && g->type == EB_JSON_ARRAY);
            ASSERT_EQ_INT(g->n, n_gpus);
            for (int i = 0; i < n_gpus; i++) {
                const struct eb_json_value *e = &g->items[i];
                static const char *const keys[] = {"index",         "name",        "util_pct",
                                                   "mem_util_pct",  "mem_used_mb", "mem_total_mb",
                                                   "power_mw",      "temp_c",      "sm_clock_mhz",
                                                   "mem_clock_mhz", "throttle"};
                for (size_t k = 0; k < EB_ARRAY_LEN(keys); k++)
                    if (eb_json_get(e, keys[k]) == NULL)
                        EB_FAIL("metrics line %d gpus/%d has no \"%s\"", n + 1, i, keys[k]);
                ASSERT_EQ_INT(eb_json_get(e, "index")->num, i);
            }
        }
        eb_json_free(v);
        p = nl + 1;
    }
    free(text);
    return n;
}

/* report.json of a run whose system summary is `sum` and whose slot 0 measured `frames`. */
static struct eb_json_value *report_of(const struct eb_system_summary *sum, uint64_t frames)
{
    struct eb_run_result *r = calloc(1, sizeof(*r));
    ASSERT_TRUE(r != NULL);
    eb_run_result_init(r);
    r->version = "test";
    r->sys = *sum;
    r->slots[0].status = EB_SLOT_OK;
    r->slots[0].frames_measured = frames;
    struct eb_json_writer w;
    eb_json_writer_init_mem(&w, 0);
    eb_report_write_json(r, &w);
    ASSERT_TRUE(!eb_json_writer_error(&w));
    size_t len = 0;
    char *text = eb_json_writer_take(&w, &len);
    struct eb_json_value *v = NULL;
    ASSERT_OK(eb_json_parse(text, len, &v, NULL));
    free(text);
    eb_run_result_fini(r);
    free(r);
    return v;
}

EB_TEST(sampler_nvml_missing_library)
{
    char path[1024], lib[1024];
    snprintf(path, sizeof(path), "%s/metrics.jsonl", eb_test_tmpdir());
    snprintf(lib, sizeof(lib), "%s/no_such_libnvidia-ml.so.1", eb_test_tmpdir());
    struct capture cap;
    struct eb_system_summary sum;
    run_nvml_sampler(lib, path, 2, &cap, &sum, NULL);
    ASSERT_EQ_INT(sum.nvml_used, 0);
    ASSERT_EQ_INT(sum.n_gpus, 0);
    ASSERT_CONTAINS(sum.nvml_warning, "NVML not available: ");
    ASSERT_CONTAINS(sum.nvml_warning, "no_such_libnvidia-ml.so.1");
    ASSERT_CONTAINS(cap.text, "INFO NVML not available"); /* the normal case without a driver */
    double t0, t1;
    ASSERT_TRUE(check_gpu_lines(path, 0, &t0, &t1) >= 2);
    struct eb_json_value *rep = report_of(&sum, 10);
    ASSERT_EQ_INT(eb_json_path(rep, "system/nvml_used")->num, 0);
    ASSERT_EQ_INT(eb_json_path(rep, "system/gpus")->n, 0);
    ASSERT_EQ_INT(eb_json_path(rep, "system/energy_per_frame_mj")->type, EB_JSON_NULL);
    ASSERT_EQ_INT(eb_json_path(rep, "system/throttled")->num, 0);
    eb_json_free(rep);
    pthread_mutex_destroy(&cap.mu);

    /* Through $EB_NVML_LIB when the config leaves it NULL; a library that is not NVML; "" = off
     * (no warning). */
    ASSERT_TRUE(setenv("EB_NVML_LIB", lib, 1) == 0);
    struct eb_sampler_config cfg = {.interval_ns = 10000000ull};
    struct eb_sampler *s = NULL;
    ASSERT_OK(eb_sampler_start(&cfg, &s, NULL));
    eb_sampler_stop(s, &sum);
    ASSERT_CONTAINS(sum.nvml_warning, "no_such_libnvidia-ml.so.1");
    cfg.nvml_lib = "libm.so.6";
    ASSERT_OK(eb_sampler_start(&cfg, &s, NULL));
    eb_sampler_stop(s, &sum);
    ASSERT_CONTAINS(sum.nvml_warning, "NVML not available: libm.so.6 has no nvmlInit_v2");
    ASSERT_EQ_INT(sum.nvml_used, 0);
    cfg.nvml_lib = "";
    ASSERT_OK(eb_sampler_start(&cfg, &s, NULL));
    eb_sampler_stop(s, &sum);
    ASSERT_STREQ(sum.nvml_warning, "");
    ASSERT_EQ_INT(sum.nvml_used, 0);
}

/* A run shorter than the sampling interval (a short sweep row, a few frames) still has its
 * energy, over its whole span: the sampler reads the GPU when it starts and when it stops. (It
 * once read at stop only: one reading, no energy, and energy per frame null.) */
EB_TEST(sampler_nvml_run_shorter_than_interval_has_energy)
{
    const char *lib = fake_nvml_path();
    const double p_mw = 42000.0;
    ASSERT_TRUE(setenv("FAKE_NVML_POWER_MW", "42000", 1) == 0);
    char path[1024];
    snprintf(path, sizeof(path), "%s/metrics.jsonl", eb_test_tmpdir());
    struct eb_log log;
    struct capture cap;
    capture_init(&cap, &log);
    struct eb_sampler_config cfg = {
        .interval_ns = 60000000000ull, .metrics_path = path, .log = &log, .nvml_lib = lib};
    struct eb_sampler *s = NULL;
    struct eb_diag d = {0};
    const uint64_t work_ns = 30000000ull;
    ASSERT_OK(eb_sampler_start(&cfg, &s, &d));
    const uint64_t t_begin = eb_clock_ns();
    eb_sampler_mark(s, EB_ENERGY_MARK_BEGIN, t_begin);
    eb_clock_sleep_ns(work_ns); /* the caller's work, far shorter than an interval */
    const uint64_t t_end = eb_clock_ns();
    eb_sampler_mark(s, EB_ENERGY_MARK_END, t_end);
    struct eb_system_summary sum;
    eb_sampler_stop(s, &sum);
    double t_first = 0, t_last = 0;
    ASSERT_EQ_INT(check_gpu_lines(path, 1, &t_first, &t_last), 2);
    ASSERT_EQ_INT(sum.n_samples, 2);
    ASSERT_EQ_INT(sum.nvml_used, 1);
    /* The two readings bracket the work: the energy covers all of it. */
    ASSERT_TRUE(t_last - t_first >= (double)work_ns / 1e9);
    ASSERT_TRUE(t_last <= sum.duration_s);
    double want = p_mw * (t_last - t_first);
    ASSERT_NEAR(sum.gpus[0].energy_mj, want, 1e-9 * want + 1e-6);
    /* The window's energy: between the marks, inside the two readings. */
    const double win = p_mw * (double)(t_end - t_begin) / 1e9;
    ASSERT_NEAR(sum.window_energy_mj, win, 1e-9 * win);
    struct eb_run_result *r = calloc(1, sizeof(*r));
    ASSERT_TRUE(r != NULL);
    r->sys = sum;
    r->slots[0].frames_measured = 5;
    enum eb_report_energy_source src;
    ASSERT_NEAR(eb_report__energy_per_frame_mj(r, &src), win / 5.0, 1e-9 * win);
    ASSERT_EQ_INT(src, EB_REPORT_ENERGY_SOURCE_NVML);
    free(r);
    pthread_mutex_destroy(&cap.mu);
}

EB_TEST(sampler_nvml_fake_energy_and_metrics)
{
    const char *lib = fake_nvml_path();
    const double p_mw = 42000.0;
    ASSERT_TRUE(setenv("FAKE_NVML_POWER_MW", "42000", 1) == 0);
    char path[1024];
    snprintf(path, sizeof(path), "%s/metrics.jsonl", eb_test_tmpdir());
    struct capture cap;
    struct eb_system_summary sum;
    uint64_t window[2];
    run_nvml_sampler(lib, path, 6, &cap, &sum, window);

    double t_first = 0, t_last = 0;
    int lines = check_gpu_lines(path, 1, &t_first, &t_last);
    ASSERT_TRUE(lines >= 6);
    ASSERT_EQ_INT(sum.n_samples, lines);
    ASSERT_EQ_INT(sum.nvml_used, 1);
    ASSERT_EQ_INT(sum.n_gpus, 1);
    ASSERT_STREQ(sum.nvml_warning, "");
    const struct eb_gpu_summary *g = &sum.gpus[0];
    ASSERT_EQ_INT(g->index, 0);
    ASSERT_STREQ(g->name, "Fake GPU 0");
    /* Constant power P over the samples: the trapezoid gives P x (last - first sample time),
     * the times being metrics.jsonl's t_s (written with full precision). */
    double want = p_mw * (t_last - t_first);
    ASSERT_TRUE(t_last > t_first);
    ASSERT_NEAR(g->energy_mj, want, 1e-9 * want + 1e-6);
    ASSERT_TRUE(g->energy_mj <= p_mw * sum.duration_s);
    ASSERT_NEAR(g->power_avg_mw, p_mw, 0);
    ASSERT_NEAR(g->power_max_mw, p_mw, 0);
    ASSERT_NEAR(g->util_avg_pct, 75, 0);
    ASSERT_NEAR(g->util_max_pct, 75, 0);
    ASSERT_NEAR(g->mem_used_max_mb, 4096, 0);
    ASSERT_NEAR(g->mem_total_mb, 16384, 0);
    ASSERT_NEAR(g->temp_max_c, 65, 0);
    ASSERT_NEAR(g->sm_clock_min_mhz, 1800, 0);
    ASSERT_NEAR(g->sm_clock_max_mhz, 1800, 0);
    ASSERT_EQ_INT(g->throttle_samples, 0);
    ASSERT_EQ_INT(g->throttle_reasons, 0);
    ASSERT_CONTAINS(cap.text, "INFO NVML: sampling GPU 0 (Fake GPU 0)");
    ASSERT_TRUE(strstr(cap.text, "NVML not available") == NULL);

    /* The fake values in the first line. */
    char *text = eb_test_read_file(path, NULL);
    struct eb_json_value *v = NULL;
    ASSERT_OK(eb_json_parse(text, (size_t)(strchr(text, '\n') - text), &v, NULL));
    ASSERT_STREQ(eb_json_path(v, "gpus/0/name")->str, "Fake GPU 0");
    ASSERT_NEAR(eb_json_path(v, "gpus/0/util_pct")->num, 75, 0);
    ASSERT_NEAR(eb_json_path(v, "gpus/0/mem_util_pct")->num, 30, 0);
    ASSERT_NEAR(eb_json_path(v, "gpus/0/mem_used_mb")->num, 4096, 0);
    ASSERT_NEAR(eb_json_path(v, "gpus/0/mem_total_mb")->num, 16384, 0);
    ASSERT_NEAR(eb_json_path(v, "gpus/0/power_mw")->num, p_mw, 0);
    ASSERT_NEAR(eb_json_path(v, "gpus/0/temp_c")->num, 65, 0);
    ASSERT_NEAR(eb_json_path(v, "gpus/0/sm_clock_mhz")->num, 1800, 0);
    ASSERT_NEAR(eb_json_path(v, "gpus/0/mem_clock_mhz")->num, 9501, 0);
    ASSERT_EQ_INT(eb_json_path(v, "gpus/0/throttle")->type, EB_JSON_ARRAY);
    ASSERT_EQ_INT(eb_json_path(v, "gpus/0/throttle")->n, 0);
    eb_json_free(v);
    free(text);

    /* The report: energy per frame = the NVML energy of the marked window (P x its length at
     * a constant power, exactly: the marks fall between samples) / measured frames. */
    struct eb_json_value *rep = report_of(&sum, 7);
    ASSERT_EQ_INT(eb_json_path(rep, "system/nvml_used")->num, 1);
    ASSERT_EQ_INT(eb_json_path(rep, "system/gpus")->n, 1);
    ASSERT_NEAR(eb_json_path(rep, "system/gpus/0/power_avg_mw")->num, p_mw, 0);
    ASSERT_NEAR(eb_json_path(rep, "system/gpus/0/energy_mj")->num, g->energy_mj, 0);
    const double win = p_mw * (double)(window[1] - window[0]) / 1e9;
    ASSERT_NEAR(sum.window_energy_mj, win, 1e-9 * win);
    ASSERT_TRUE(win < g->energy_mj); /* the start and stop samples lie outside the window */
    ASSERT_NEAR(eb_json_path(rep, "system/energy_window_mj")->num, win, 1e-9 * win);
    ASSERT_NEAR(eb_json_path(rep, "system/energy_per_frame_mj")->num, win / 7.0, 1e-9 * win);
    ASSERT_STREQ(eb_json_path(rep, "system/energy_source")->str, "nvml");
    ASSERT_EQ_INT(eb_json_path(rep, "system/throttled")->num, 0);
    eb_json_free(rep);
    pthread_mutex_destroy(&cap.mu);
}

EB_TEST(sampler_nvml_two_gpus_failed_field_is_null)
{
    const char *lib = fake_nvml_path();
    ASSERT_TRUE(setenv("FAKE_NVML_GPUS", "2", 1) == 0);
    ASSERT_TRUE(setenv("FAKE_NVML_FAIL_TEMP", "1", 1) == 0);
    ASSERT_TRUE(setenv("FAKE_NVML_POWER_MW", "10000", 1) == 0);
    char path[1024];
    snprintf(path, sizeof(path), "%s/metrics.jsonl", eb_test_tmpdir());
    struct capture cap;
    struct eb_system_summary sum;
    uint64_t window[2];
    run_nvml_sampler(lib, path, 3, &cap, &sum, window);
    double t0, t1;
    ASSERT_TRUE(check_gpu_lines(path, 2, &t0, &t1) >= 3);
    ASSERT_EQ_INT(sum.n_gpus, 2);
    ASSERT_STREQ(sum.gpus[1].name, "Fake GPU 1");
    ASSERT_NEAR(sum.gpus[1].power_avg_mw, 11000, 0);
    ASSERT_TRUE(isnan(sum.gpus[0].temp_max_c));
    ASSERT_NEAR(sum.gpus[0].energy_mj * 11.0, sum.gpus[1].energy_mj * 10.0,
                1e-9 * sum.gpus[1].energy_mj + 1e-6);
    char *text = eb_test_read_file(path, NULL);
    struct eb_json_value *v = NULL;
    ASSERT_OK(eb_json_parse(text, (size_t)(strchr(text, '\n') - text), &v, NULL));
    ASSERT_EQ_INT(eb_json_path(v, "gpus/0/temp_c")->type, EB_JSON_NULL);
    ASSERT_EQ_INT(eb_json_path(v, "gpus/1/temp_c")->type, EB_JSON_NULL);
    ASSERT_NEAR(eb_json_path(v, "gpus/1/power_mw")->num, 11000, 0);
    eb_json_free(v);
    free(text);
    /* Energy per frame sums the GPUs (10 W and 11 W) over the window. */
    struct eb_json_value *rep = report_of(&sum, 4);
    const double win = 21000.0 * (double)(window[1] - window[0]) / 1e9;
    ASSERT_NEAR(eb_json_path(rep, "system/energy_per_frame_mj")->num, win / 4.0, 1e-9 * win);
    ASSERT_EQ_INT(eb_json_path(rep, "system/gpus/0/temp_max_c")->type, EB_JSON_NULL);
    eb_json_free(rep);
    pthread_mutex_destroy(&cap.mu);
}

/* Runs the fake with clocks-event reasons `mask`; returns the summary, checks every line's
 * "throttle" list against `listed` (names, comma-separated, "" for none). */
static void run_throttle(const char *mask, const char *listed, struct capture *cap,
                         struct eb_system_summary *sum)
{
    const char *lib = fake_nvml_path();
    ASSERT_TRUE(setenv("FAKE_NVML_THROTTLE", mask, 1) == 0);
    char path[1024];
    snprintf(path, sizeof(path), "%s/metrics_%s.jsonl", eb_test_tmpdir(), mask);
    run_nvml_sampler(lib, path, 3, cap, sum, NULL);
    char *text = eb_test_read_file(path, NULL);
    ASSERT_TRUE(text != NULL);
    for (char *p = text; *p != '\0';) {
        char *nl = strchr(p, '\n');
        *nl = '\0';
        struct eb_json_value *v = NULL;
        ASSERT_OK(eb_json_parse(p, strlen(p), &v, NULL));
        const struct eb_json_value *t = eb_json_path(v, "gpus/0/throttle");
        ASSERT_TRUE(t != NULL && t->type == EB_JSON_ARRAY);
        char got[256] = "";
        size_t used = 0;
        for (size_t i = 0; i < t->n; i++)
            used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%s", i ? "," : "",
                                     t->items[i].str);
        ASSERT_STREQ(got, listed);
        eb_json_free(v);
        p = nl + 1;
    }
    free(text);
}

EB_TEST(sampler_nvml_thermal_throttle_is_flagged)
{
    struct capture cap;
    struct eb_system_summary sum;
    /* GpuIdle + HwThermalSlowdown: idle is not listed, the thermal slowdown is throttling. */
    run_throttle("0x41", "HwThermalSlowdown", &cap, &sum);
    ASSERT_EQ_INT(sum.gpus[0].throttle_samples, sum.n_samples);
    ASSERT_EQ_INT(sum.gpus[0].throttle_reasons, EB_SAMPLER_THROTTLE_HW_THERMAL);
    ASSERT_CONTAINS(cap.text, "WARN GPU 0 (Fake GPU 0) is throttling: HwThermalSlowdown");
    /* logged once, not per sample */
    ASSERT_TRUE(strstr(strstr(cap.text, "is throttling") + 1, "is throttling") == NULL);
    struct eb_json_value *rep = report_of(&sum, 5);
    ASSERT_EQ_INT(eb_json_path(rep, "system/throttled")->type, EB_JSON_BOOL);
    ASSERT_EQ_INT(eb_json_path(rep, "system/throttled")->num, 1);
    ASSERT_EQ_INT(eb_json_path(rep, "system/throttle_reasons")->n, 1);
    ASSERT_STREQ(eb_json_path(rep, "system/throttle_reasons/0")->str, "HwThermalSlowdown");
    ASSERT_STREQ(eb_json_path(rep, "system/gpus/0/throttle_reasons/0")->str, "HwThermalSlowdown");
    eb_json_free(rep);

    /* report.md shows the line. */
    struct eb_run_result *r = calloc(1, sizeof(*r));
    ASSERT_TRUE(r != NULL);
    eb_run_result_init(r);
    r->sys = sum;
    char *md = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&md, &len);
    ASSERT_TRUE(fp != NULL);
    eb_report_write_md(r, fp);
    ASSERT_TRUE(fclose(fp) == 0);
    ASSERT_CONTAINS(md, "**Throttling detected during the run:** HwThermalSlowdown\n");
    ASSERT_CONTAINS(md, "### GPU (NVML)");
    free(md);
    eb_run_result_fini(r);
    free(r);
    pthread_mutex_destroy(&cap.mu);
}

EB_TEST(sampler_nvml_idle_is_not_throttling)
{
    struct capture cap;
    struct eb_system_summary sum;
    /* GpuIdle alone: nothing listed, not throttled. */
    run_throttle("0x1", "", &cap, &sum);
    ASSERT_EQ_INT(sum.gpus[0].throttle_samples, 0);
    ASSERT_EQ_INT(sum.gpus[0].throttle_reasons, 0);
    struct eb_json_value *rep = report_of(&sum, 5);
    ASSERT_EQ_INT(eb_json_path(rep, "system/throttled")->num, 0);
    ASSERT_EQ_INT(eb_json_path(rep, "system/throttle_reasons")->n, 0);
    eb_json_free(rep);
    ASSERT_TRUE(strstr(cap.text, "is throttling") == NULL);
    pthread_mutex_destroy(&cap.mu);

    /* GpuIdle + ApplicationsClocksSetting + SyncBoost: SyncBoost is listed, but is not a
     * slowdown. */
    run_throttle("0x13", "SyncBoost", &cap, &sum);
    ASSERT_EQ_INT(sum.gpus[0].throttle_samples, 0);
    ASSERT_EQ_INT(sum.gpus[0].throttle_reasons, EB_SAMPLER_THROTTLE_SYNC_BOOST);
    rep = report_of(&sum, 5);
    ASSERT_EQ_INT(eb_json_path(rep, "system/throttled")->num, 0);
    ASSERT_STREQ(eb_json_path(rep, "system/gpus/0/throttle_reasons/0")->str, "SyncBoost");
    eb_json_free(rep);
    pthread_mutex_destroy(&cap.mu);
}

EB_TEST(sampler_nvml_init_failure_is_a_warning)
{
    const char *lib = fake_nvml_path();
    ASSERT_TRUE(setenv("FAKE_NVML_FAIL_INIT", "1", 1) == 0);
    char path[1024];
    snprintf(path, sizeof(path), "%s/metrics.jsonl", eb_test_tmpdir());
    struct capture cap;
    struct eb_system_summary sum;
    run_nvml_sampler(lib, path, 2, &cap, &sum, NULL);
    ASSERT_EQ_INT(sum.nvml_used, 0);
    ASSERT_EQ_INT(sum.n_gpus, 0);
    ASSERT_STREQ(sum.nvml_warning, "NVML not available: nvmlInit_v2 failed: Driver Not Loaded");
    ASSERT_CONTAINS(cap.text, "WARN NVML not available: nvmlInit_v2 failed: Driver Not Loaded");
    double t0, t1;
    ASSERT_TRUE(check_gpu_lines(path, 0, &t0, &t1) >= 2);
    ASSERT_TRUE(sum.ram_total_mb > 0); /* the rest of the sampler is unaffected */
    pthread_mutex_destroy(&cap.mu);
}
