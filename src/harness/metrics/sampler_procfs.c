/*
 * procfs/sysfs readers: /proc/meminfo, /proc/self/statm, /proc/stat, thermal zones.
 * Every reader takes an optional root so tests can point it at a fake tree.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harness/metrics/sampler.h"

static void root_path(char *buf, size_t size, const char *root, const char *rel)
{
    if (root == NULL || root[0] == '\0' || strcmp(root, "/") == 0)
        root = "";
    snprintf(buf, size, "%s%s", root, rel);
}

/* "Key:   123 kB" -> bytes. Returns 1 when `line` starts with `key` and has a number. */
static int meminfo_value(const char *line, const char *key, uint64_t *out)
{
    size_t n = strlen(key);
    if (strncmp(line, key, n) != 0 || line[n] != ':')
        return 0;
    const char *p = line + n + 1;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!isdigit((unsigned char)*p))
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p || errno == ERANGE)
        return 0;
    while (*end == ' ' || *end == '\t')
        end++;
    uint64_t mult = 1;
    if (strncmp(end, "kB", 2) == 0)
        mult = 1024;
    *out = (uint64_t)v * mult;
    return 1;
}

enum eb_status eb_procfs_sysmem_at(const char *root, struct eb_sysmem *out, struct eb_diag *diag)
{
    char path[512];
    root_path(path, sizeof(path), root, "/proc/meminfo");
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    uint64_t total = 0, avail = 0, swap_total = 0, swap_free = 0, v;
    int have_total = 0, have_avail = 0;
    char line[256];
    while (fgets(line, sizeof(line), f) != NULL) {
        if (meminfo_value(line, "MemTotal", &v)) {
            total = v;
            have_total = 1;
        } else if (meminfo_value(line, "MemAvailable", &v)) {
            avail = v;
            have_avail = 1;
        } else if (meminfo_value(line, "SwapTotal", &v)) {
            swap_total = v;
        } else if (meminfo_value(line, "SwapFree", &v)) {
            swap_free = v;
        }
    }
    fclose(f);
    if (!have_total || !have_avail)
        return eb_diag_fail(diag, EB_ERR_FORMAT, "%s has no %s line", path,
                            have_total ? "MemAvailable" : "MemTotal");
    if (avail > total)
        avail = total;
    if (swap_free > swap_total)
        swap_free = swap_total;
    out->total = total;
    out->available = avail;
    out->used = total - avail;
    out->swap_total = swap_total;
    out->swap_used = swap_total - swap_free;
    return EB_OK;
}

enum eb_status eb_procfs_sysmem(struct eb_sysmem *out, struct eb_diag *diag)
{
    return eb_procfs_sysmem_at(NULL, out, diag);
}

uint64_t eb_procfs_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return 0;
    char line[256];
    uint64_t rss = 0;
    if (fgets(line, sizeof(line), f) != NULL) {
        /* "size resident shared ..." in pages. */
        char *end = NULL;
        errno = 0;
        strtoull(line, &end, 10);
        if (end != line && errno == 0) {
            char *p = end;
            unsigned long long pages = strtoull(p, &end, 10);
            long page = sysconf(_SC_PAGESIZE);
            if (end != p && errno == 0 && page > 0)
                rss = (uint64_t)pages * (uint64_t)page;
        }
    }
    fclose(f);
    return rss;
}

/* Parses the numbers after "cpu" / "cpuN" into times. Returns 0 when there are fewer than 4. */
static int parse_cpu_fields(const char *p, struct eb_cpu_times *t)
{
    uint64_t v[10] = {0};
    int n = 0;
    while (n < 10) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!isdigit((unsigned char)*p))
            break;
        char *end = NULL;
        errno = 0;
        unsigned long long x = strtoull(p, &end, 10);
        if (end == p || errno == ERANGE)
            return 0;
        v[n++] = (uint64_t)x;
        p = end;
    }
    if (n < 4)
        return 0;
    /* user nice system idle iowait irq softirq steal (guest is already inside user). */
    uint64_t idle = v[3] + v[4];
    uint64_t busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    t->present = 1;
    t->busy = busy;
    t->total = busy + idle;
    return 1;
}

enum eb_status eb_procfs_cpu_times(const char *root, struct eb_cpu_times *cores, int max_cores,
                                   int *n_cores_out, struct eb_cpu_times *all_out,
                                   struct eb_diag *diag)
{
    char path[512];
    root_path(path, sizeof(path), root, "/proc/stat");
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    for (int i = 0; i < max_cores; i++)
        memset(&cores[i], 0, sizeof(cores[i]));
    struct eb_cpu_times all = {0};
    int have_all = 0, n = 0;
    char line[512];
    while (fgets(line, sizeof(line), f) != NULL) {
        size_t len = strlen(line);
        int complete = len > 0 && line[len - 1] == '\n';
        if (strncmp(line, "cpu", 3) == 0) {
            if (line[3] == ' ') {
                have_all = parse_cpu_fields(line + 3, &all);
            } else if (isdigit((unsigned char)line[3])) {
                char *end = NULL;
                errno = 0;
                long idx = strtol(line + 3, &end, 10);
                if (errno == 0 && end != line + 3 && idx >= 0 && idx < max_cores &&
                    parse_cpu_fields(end, &cores[idx]) && idx + 1 > n)
                    n = (int)idx + 1;
            }
        }
        /* Skip the rest of an over-long line (the "intr" line is). */
        while (!complete) {
            int c = fgetc(f);
            if (c == EOF || c == '\n')
                break;
        }
    }
    fclose(f);
    if (!have_all)
        return eb_diag_fail(diag, EB_ERR_FORMAT, "%s has no \"cpu\" line", path);
    *all_out = all;
    *n_cores_out = n;
    return EB_OK;
}

double eb_procfs_cpu_load_pct(const struct eb_cpu_times *prev, const struct eb_cpu_times *cur)
{
    if (!prev->present || !cur->present || cur->total <= prev->total || cur->busy < prev->busy)
        return NAN;
    double busy = (double)(cur->busy - prev->busy);
    double total = (double)(cur->total - prev->total);
    double pct = 100.0 * busy / total;
    return pct > 100.0 ? 100.0 : pct;
}

/* Reads the first line of a small file into buf without the newline. 1 on success. */
static int read_first_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    int ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    if (!ok)
        return 0;
    buf[strcspn(buf, "\r\n")] = '\0';
    return 1;
}

static int zone_cmp(const void *a, const void *b)
{
    const struct eb_thermal_zone *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

int eb_procfs_thermal_zones(const char *root, struct eb_thermal_zone *zones, int max_zones)
{
    char dir_path[512];
    root_path(dir_path, sizeof(dir_path), root, "/sys/class/thermal");
    DIR *d = opendir(dir_path);
    if (d == NULL)
        return 0;
    int n = 0;
    struct dirent *e;
    static const char prefix[] = "thermal_zone";
    while ((e = readdir(d)) != NULL && n < max_zones) {
        if (strncmp(e->d_name, prefix, sizeof(prefix) - 1) != 0)
            continue;
        const char *num = e->d_name + sizeof(prefix) - 1;
        char *end = NULL;
        errno = 0;
        long idx = strtol(num, &end, 10);
        if (end == num || *end != '\0' || errno != 0 || idx < 0 || idx > 1000000)
            continue;
        struct eb_thermal_zone *z = &zones[n++];
        z->index = (int)idx;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s/type", dir_path, e->d_name);
        if (!read_first_line(path, z->type, sizeof(z->type)) || z->type[0] == '\0')
            snprintf(z->type, sizeof(z->type), "zone%d", z->index);
    }
    closedir(d);
    qsort(zones, (size_t)n, sizeof(zones[0]), zone_cmp);
    return n;
}

double eb_procfs_thermal_read_c(const char *root, int index)
{
    char rel[128], path[640], buf[64];
    snprintf(rel, sizeof(rel), "/sys/class/thermal/thermal_zone%d/temp", index);
    root_path(path, sizeof(path), root, rel);
    if (!read_first_line(path, buf, sizeof(buf)))
        return NAN;
    char *end = NULL;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (end == buf || errno != 0 || (*end != '\0' && !isspace((unsigned char)*end)))
        return NAN;
    return (double)v / 1000.0;
}

void eb_procfs_cpu_use(const char *root, struct eb_cpu_use *out)
{
    memset(out, 0, sizeof(*out));
    int n = 0;
    struct rusage ru;
    if (eb_procfs_cpu_times(root, NULL, 0, &n, &out->all, NULL) != EB_OK ||
        getrusage(RUSAGE_SELF, &ru) != 0)
        return;
    out->self_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                  (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    out->ok = 1;
}

double eb_cpu_use_others_pct(const struct eb_cpu_use *a, const struct eb_cpu_use *b,
                             long ticks_per_s)
{
    if (!a->ok || !b->ok || ticks_per_s <= 0 || b->all.total < a->all.total ||
        b->all.busy < a->all.busy || b->all.total - a->all.total < EB_CPU_USE_MIN_TICKS)
        return NAN;
    const double busy = (double)(b->all.busy - a->all.busy) / (double)ticks_per_s;
    const double total = (double)(b->all.total - a->all.total) / (double)ticks_per_s;
    const double others = busy - (b->self_s - a->self_s);
    return others > 0 ? 100.0 * others / total : 0.0;
}
