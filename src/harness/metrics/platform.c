/* Platform detection: Jetson or not, model name, L4T release, CPU count. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness/metrics/sampler.h"

static void path_under(char *buf, size_t size, const char *root, const char *rel)
{
    if (root == NULL || root[0] == '\0' || strcmp(root, "/") == 0)
        root = "";
    snprintf(buf, size, "%s%s", root, rel);
}

/* Reads up to size-1 bytes; device-tree strings end with NUL, which is turned into the end. */
static size_t read_small(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return 0;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strlen(buf);
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    size_t lead = 0;
    while (s[lead] != '\0' && isspace((unsigned char)s[lead]))
        lead++;
    if (lead > 0)
        memmove(s, s + lead, n - lead + 1);
}

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay != '\0'; hay++) {
        size_t i = 0;
        while (i < n && hay[i] != '\0' &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

/* Value of the first "key<spaces>: value" line in cpuinfo, or 0. */
static int cpuinfo_value(const char *path, const char *key, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    char line[512];
    size_t n = strlen(key);
    int found = 0;
    while (!found && fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, key, n) != 0)
            continue;
        const char *p = line + n;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != ':')
            continue;
        snprintf(out, size, "%s", p + 1);
        trim(out);
        found = out[0] != '\0';
    }
    fclose(f);
    return found;
}

void eb_platform_detect(const char *root, struct eb_platform *out)
{
    memset(out, 0, sizeof(*out));
    char path[1024];

    path_under(path, sizeof(path), root, "/etc/nv_tegra_release");
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        out->is_jetson = 1;
        if (fgets(out->l4t_release, sizeof(out->l4t_release), f) != NULL)
            trim(out->l4t_release);
        else
            out->l4t_release[0] = '\0';
        fclose(f);
    }

    char dt_model[sizeof(out->model)];
    path_under(path, sizeof(path), root, "/proc/device-tree/model");
    if (read_small(path, dt_model, sizeof(dt_model)) > 0) {
        trim(dt_model);
        if (dt_model[0] != '\0') {
            snprintf(out->model, sizeof(out->model), "%s", dt_model);
            if (contains_ci(dt_model, "jetson") || contains_ci(dt_model, "tegra"))
                out->is_jetson = 1;
        }
    }

    if (out->model[0] == '\0') {
        path_under(path, sizeof(path), root, "/proc/cpuinfo");
        if (!cpuinfo_value(path, "model name", out->model, sizeof(out->model)) &&
            !cpuinfo_value(path, "Model", out->model, sizeof(out->model)) &&
            !cpuinfo_value(path, "Hardware", out->model, sizeof(out->model)))
            snprintf(out->model, sizeof(out->model), "unknown");
    }

    long n = sysconf(_SC_NPROCESSORS_ONLN);
    out->n_cpus = n > 0 ? (int)n : 1;
}
