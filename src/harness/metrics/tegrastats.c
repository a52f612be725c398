/*
 * tegrastats line parser and the `edgebench tegrastats` command.
 *
 * The parser walks the line word by word without copying it: a "word" ends at whitespace outside
 * brackets, so "(lfb 1x2MB)", "0/252kB(lfb 252kB)" and "[12%@345,off]" are single words. Known
 * keywords take the next word as their value; "NAME@<num>C" is a temperature; "NAME a/b[/c]" is a
 * power rail; anything else is skipped. Numbers are validated by hand (digits, one '.', optional
 * sign) and then converted with strtod from a small bounded copy, so hex, "inf" and "nan" never
 * pass and nothing reads past the word.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/metrics/tegrastats.h"

/* A slice of the input line. */
struct span {
    const char *p, *end;
};

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/*
 * Returns the next word at or after `*pos` in `w` and advances `*pos`; 0 at the end of the line.
 * Brackets nest (bounded) so that a bracketed group is one word; an unclosed group runs to the
 * end of the line (a truncated line).
 */
static int next_word(const char **pos, struct span *w)
{
    const char *p = *pos;
    while (*p != '\0' && is_space(*p))
        p++;
    if (*p == '\0') {
        *pos = p;
        return 0;
    }
    const char *start = p;
    int depth = 0;
    while (*p != '\0') {
        char c = *p;
        if (c == '(' || c == '[') {
            if (depth < 64)
                depth++;
        } else if ((c == ')' || c == ']') && depth > 0) {
            depth--;
        } else if (depth == 0 && is_space(c)) {
            break;
        }
        p++;
    }
    w->p = start;
    w->end = p;
    *pos = p;
    return 1;
}

static int span_ieq(struct span w, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(w.end - w.p) != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)w.p[i]) != tolower((unsigned char)lit[i]))
            return 0;
    return 1;
}

static int name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/*
 * Parses a decimal number ([+-]digits[.digits] or [+-].digits) at `p` (not past `end`).
 * Returns the position after it and stores the value, or NULL when there is no number.
 */
static const char *parse_num(const char *p, const char *end, double *out)
{
    const char *s = p;
    if (s < end && (*s == '-' || *s == '+'))
        s++;
    int digits = 0;
    while (s < end && isdigit((unsigned char)*s)) {
        s++;
        digits++;
    }
    if (s < end && *s == '.') {
        const char *dot = s;
        s++;
        int frac = 0;
        while (s < end && isdigit((unsigned char)*s)) {
            s++;
            frac++;
        }
        if (frac == 0)
            s = dot; /* "5." : the dot is not part of the number */
        digits += frac;
    }
    if (digits == 0)
        return NULL;
    char buf[64];
    size_t n = (size_t)(s - p);
    if (n >= sizeof(buf))
        return NULL; /* no real tegrastats figure is that long */
    memcpy(buf, p, n);
    buf[n] = '\0';
    char *e = NULL;
    errno = 0;
    double v = strtod(buf, &e);
    if (e != buf + n || errno == ERANGE || !isfinite(v))
        return NULL;
    *out = v;
    return s;
}

/* Case-insensitive literal at `p`; returns the position after it or NULL. */
static const char *eat(const char *p, const char *end, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(end - p) < n)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)p[i]) != tolower((unsigned char)lit[i]))
            return NULL;
    return p + n;
}

/* "used/totalMB" (also kB or GB, converted to MB). */
static int parse_mem_pair(struct span w, double *used, double *total)
{
    double u, t;
    const char *p = parse_num(w.p, w.end, &u);
    if (p == NULL || p >= w.end || *p != '/')
        return 0;
    p = parse_num(p + 1, w.end, &t);
    if (p == NULL)
        return 0;
    double scale;
    const char *q;
    if ((q = eat(p, w.end, "MB")) != NULL)
        scale = 1.0;
    else if ((q = eat(p, w.end, "kB")) != NULL)
        scale = 1.0 / 1024.0;
    else if ((q = eat(p, w.end, "GB")) != NULL)
        scale = 1024.0;
    else
        return 0;
    /* IRAM prints "0/252kB(lfb 252kB)": a parenthesised tail is allowed. */
    if (q != w.end && *q != '(')
        return 0;
    if (u < 0 || t < 0)
        return 0;
    *used = u * scale;
    *total = t * scale;
    return 1;
}

/*
 * "l%", "l%@f", "l%@[f]" or "l%@[f,f,...]" (the first frequency is kept). The whole word must
 * be consumed. freq is NaN when not printed.
 */
static int parse_load_freq(const char *p, const char *end, double *load, double *freq)
{
    double l, f = NAN;
    p = parse_num(p, end, &l);
    if (p == NULL || p >= end || *p != '%')
        return 0;
    p++;
    if (p < end && *p == '@') {
        p++;
        int bracket = 0;
        if (p < end && *p == '[') {
            bracket = 1;
            p++;
        }
        p = parse_num(p, end, &f);
        if (p == NULL)
            return 0;
        if (bracket) {
            /* Skip further frequencies ("[305,305]"), each must be a number. */
            while (p < end && *p == ',') {
                double ignored;
                p = parse_num(p + 1, end, &ignored);
                if (p == NULL)
                    return 0;
            }
            if (p >= end || *p != ']')
                return 0;
            p++;
        }
    }
    if (p != end)
        return 0;
    *load = l;
    *freq = f;
    return 1;
}

/* "[a,b,...]" with entries "off", "l%", "l%@f". Returns 0 when the brackets are broken. */
static int parse_cpu_list(struct span w, struct eb_tegra_sample *out, int *bad_entry)
{
    if (w.p >= w.end || *w.p != '[' || w.end[-1] != ']')
        return 0;
    const char *p = w.p + 1, *end = w.end - 1;
    int n = 0;
    *bad_entry = 0;
    if (p == end)
        return 0; /* "[]" says nothing */
    while (p <= end) {
        const char *e = p;
        while (e < end && *e != ',')
            e++;
        if (n < EB_TEGRA_MAX_CPUS) {
            struct eb_tegra_cpu *c = &out->cpus[n];
            struct span entry = {p, e};
            double l, f;
            if (span_ieq(entry, "off")) {
                c->online = 0;
                c->load_pct = NAN;
                c->freq_mhz = -1;
            } else if (parse_load_freq(p, e, &l, &f)) {
                c->online = 1;
                c->load_pct = l;
                c->freq_mhz = isnan(f) ? -1 : f;
            } else {
                /* Kept as an online core of unknown load, so the core count stays right. */
                c->online = 1;
                c->load_pct = NAN;
                c->freq_mhz = -1;
                *bad_entry = 1;
            }
            n++;
        }
        p = e + 1;
    }
    out->n_cpus = n;
    return 1;
}

/* Temperature word "name@43.5C", "name@-12.5C", "name@45.5C/52C". Returns 1 ok, 0 not a
 * temperature word, -1 a temperature word with a malformed value. */
static int parse_temp(struct span w, char *name, size_t name_size, double *c)
{
    const char *at = w.p;
    while (at < w.end && (name_char(*at) || *at == '-'))
        at++;
    if (at == w.p || at >= w.end || *at != '@' || !isalpha((unsigned char)*w.p))
        return 0;
    double v, vmax;
    const char *p = parse_num(at + 1, w.end, &v);
    if (p == NULL || p >= w.end || (*p != 'C' && *p != 'c'))
        return -1;
    p++;
    if (p < w.end && *p == '/') {
        p = parse_num(p + 1, w.end, &vmax);
        if (p == NULL || p >= w.end || (*p != 'C' && *p != 'c'))
            return -1;
        p++;
    }
    if (p != w.end)
        return -1;
    size_t n = (size_t)(at - w.p);
    if (n >= name_size)
        n = name_size - 1;
    for (size_t i = 0; i < n; i++)
        name[i] = (char)tolower((unsigned char)w.p[i]);
    name[n] = '\0';
    *c = v;
    return 1;
}

/* One rail figure: number with optional "mW". */
static const char *rail_num(const char *p, const char *end, double *v)
{
    p = parse_num(p, end, v);
    if (p == NULL)
        return NULL;
    const char *q = eat(p, end, "mW");
    return q != NULL ? q : p;
}

/* Rail value "cur/avg" or "cur/avg/peak". Returns 1 ok, 0 not rail-shaped, -1 malformed. */
static int parse_rail_value(struct span w, struct eb_tegra_rail *r)
{
    if (w.p >= w.end || !isdigit((unsigned char)*w.p))
        return 0;
    const char *slash = memchr(w.p, '/', (size_t)(w.end - w.p));
    if (slash == NULL)
        return 0;
    double cur, avg, peak = NAN;
    const char *p = rail_num(w.p, w.end, &cur);
    if (p == NULL || p != slash)
        return -1;
    p = rail_num(p + 1, w.end, &avg);
    if (p == NULL)
        return -1;
    if (p < w.end && *p == '/') {
        p = rail_num(p + 1, w.end, &peak);
        if (p == NULL)
            return -1;
    }
    if (p != w.end)
        return -1;
    r->cur_mw = cur;
    r->avg_mw = avg;
    r->peak_mw = peak;
    r->has_peak = !isnan(peak);
    return 1;
}

static int is_name_word(struct span w)
{
    if (w.p >= w.end || !isalpha((unsigned char)*w.p))
        return 0;
    for (const char *p = w.p; p < w.end; p++)
        if (!name_char(*p))
            return 0;
    return 1;
}

/* Rail names that only ever appear as rails: one without a rail value is malformed. */
static int is_rail_prefix(struct span w)
{
    return eat(w.p, w.end, "VDD_") != NULL || eat(w.p, w.end, "POM_") != NULL ||
           eat(w.p, w.end, "VIN_") != NULL;
}

/* Engines print one value word ("off", "716", "0%@115"); the value is skipped. */
static int is_engine(struct span w)
{
    static const char *const prefixes[] = {"NVDEC", "NVENC", "NVJPG", "VIC",   "APE", "OFA",
                                           "MSENC", "NVDLA", "PVA",   "GR3D2", "SE_", "CV"};
    for (size_t i = 0; i < EB_ARRAY_LEN(prefixes); i++)
        if (eat(w.p, w.end, prefixes[i]) != NULL)
            return 1;
    return 0;
}

static int is_engine_value(struct span v)
{
    if (span_ieq(v, "off"))
        return 1;
    double x;
    const char *p = parse_num(v.p, v.end, &x);
    if (p == NULL)
        return 0;
    double l, f;
    return p == v.end || parse_load_freq(v.p, v.end, &l, &f);
}

static void copy_name(char *dst, size_t size, struct span w)
{
    size_t n = (size_t)(w.end - w.p);
    if (n >= size)
        n = size - 1;
    memcpy(dst, w.p, n);
    dst[n] = '\0';
}

static int is_timestamp(const char *p)
{
    /* MM-DD-YYYY HH:MM:SS */
    static const char pattern[] = "dd-dd-dddd dd:dd:dd";
    for (size_t i = 0; i + 1 < sizeof(pattern); i++) {
        char c = p[i];
        if (c == '\0')
            return 0;
        if (pattern[i] == 'd' ? !isdigit((unsigned char)c) : c != pattern[i])
            return 0;
    }
    return p[sizeof(pattern) - 1] == '\0' || is_space(p[sizeof(pattern) - 1]);
}

static void add_temp(struct eb_tegra_sample *out, const char *name, double c)
{
    for (int i = 0; i < out->n_temps; i++) {
        if (strcmp(out->temps[i].name, name) == 0) {
            out->temps[i].c = c;
            return;
        }
    }
    if (out->n_temps >= EB_TEGRA_MAX_TEMPS)
        return;
    struct eb_tegra_temp *t = &out->temps[out->n_temps++];
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->c = c;
}

static void add_rail(struct eb_tegra_sample *out, struct span name, const struct eb_tegra_rail *r)
{
    char nm[EB_TEGRA_NAME_MAX];
    copy_name(nm, sizeof(nm), name);
    struct eb_tegra_rail *dst = NULL;
    for (int i = 0; i < out->n_rails; i++)
        if (strcmp(out->rails[i].name, nm) == 0)
            dst = &out->rails[i];
    if (dst == NULL) {
        if (out->n_rails >= EB_TEGRA_MAX_RAILS)
            return;
        dst = &out->rails[out->n_rails++];
    }
    *dst = *r;
    memcpy(dst->name, nm, sizeof(nm));
}

static double rail_cur(const struct eb_tegra_sample *s, const char *name)
{
    for (int i = 0; i < s->n_rails; i++) {
        struct span n = {s->rails[i].name, s->rails[i].name + strlen(s->rails[i].name)};
        if (span_ieq(n, name))
            return s->rails[i].cur_mw;
    }
    return NAN;
}

static void reset_sample(struct eb_tegra_sample *out)
{
    memset(out, 0, sizeof(*out));
    out->status = EB_TEGRA_MALFORMED;
    out->ram_used_mb = out->ram_total_mb = NAN;
    out->swap_used_mb = out->swap_total_mb = NAN;
    out->cpu_avg_load_pct = NAN;
    out->emc_load_pct = out->emc_freq_mhz = NAN;
    out->gpu_load_pct = out->gpu_freq_mhz = NAN;
    out->power_total_mw = NAN;
}

void eb_tegrastats_parse_line(const char *line, struct eb_tegra_sample *out)
{
    reset_sample(out);
    if (line == NULL)
        return;
    const char *pos = line;
    while (*pos != '\0' && is_space(*pos))
        pos++;
    if (is_timestamp(pos)) {
        memcpy(out->time, pos, 19);
        out->time[19] = '\0';
        pos += 19;
    }

    int recognised = 0; /* known keywords seen, valid or not */
    int bad = 0;        /* a known keyword's value was malformed or missing */
    int have_ram = 0, have_cpu = 0;
    struct span w, v;
    int have_w = next_word(&pos, &w);
    while (have_w) {
        int have_v = next_word(&pos, &v);
        int consumed_v = 0; /* 1 when the value word belongs to w */
        double a, b;
        char tname[EB_TEGRA_NAME_MAX];
        int t;

        if (span_ieq(w, "RAM") || span_ieq(w, "SWAP")) {
            recognised++;
            int is_ram = span_ieq(w, "RAM");
            if (have_v && parse_mem_pair(v, &a, &b)) {
                consumed_v = 1;
                if (is_ram) {
                    out->ram_used_mb = a;
                    out->ram_total_mb = b;
                    have_ram = 1;
                } else {
                    out->swap_used_mb = a;
                    out->swap_total_mb = b;
                }
            } else {
                bad = 1;
                /* Swallow a non-keyword value ("RAM garbage"); keep a keyword for the loop. */
                consumed_v = have_v && !is_name_word(v);
            }
        } else if (span_ieq(w, "IRAM")) {
            /* Parsed for validation only; IRAM is not reported. */
            recognised++;
            if (have_v && parse_mem_pair(v, &a, &b))
                consumed_v = 1;
            else
                bad = 1;
        } else if (span_ieq(w, "CPU")) {
            recognised++;
            int bad_entry = 0;
            if (have_v && parse_cpu_list(v, out, &bad_entry)) {
                consumed_v = 1;
                have_cpu = 1;
                bad |= bad_entry;
            } else {
                bad = 1;
                consumed_v = have_v && v.p < v.end && *v.p == '[';
            }
        } else if (span_ieq(w, "EMC_FREQ") || span_ieq(w, "EMC") || span_ieq(w, "GR3D_FREQ") ||
                   span_ieq(w, "GR3D")) {
            recognised++;
            int is_emc = span_ieq(w, "EMC_FREQ") || span_ieq(w, "EMC");
            if (have_v && parse_load_freq(v.p, v.end, &a, &b)) {
                consumed_v = 1;
                if (is_emc) {
                    out->emc_load_pct = a;
                    out->emc_freq_mhz = b;
                } else {
                    out->gpu_load_pct = a;
                    out->gpu_freq_mhz = b;
                }
            } else {
                bad = 1;
                consumed_v = have_v && !is_name_word(v) && strchr("0123456789.-[", *v.p) != NULL;
            }
        } else if ((t = parse_temp(w, tname, sizeof(tname), &a)) != 0) {
            recognised++;
            if (t > 0)
                add_temp(out, tname, a);
            else
                bad = 1;
        } else if (is_name_word(w)) {
            struct eb_tegra_rail r;
            int rv = have_v ? parse_rail_value(v, &r) : 0;
            if (rv > 0) {
                recognised++;
                consumed_v = 1;
                add_rail(out, w, &r);
            } else if (rv < 0 || is_rail_prefix(w)) {
                /* A rail-shaped value that does not parse, or a rail name without a value. */
                recognised++;
                bad = 1;
                consumed_v = rv < 0;
            } else if (is_engine(w) && have_v && is_engine_value(v)) {
                consumed_v = 1; /* engine clocks are not reported */
            }
        }
        /* Anything else is an unknown word: skipped. */

        if (consumed_v) {
            have_w = next_word(&pos, &w);
        } else if (have_v) {
            w = v;
            have_w = 1;
        } else {
            have_w = 0;
        }
    }

    /* Average over online cores with a known load. */
    double sum = 0;
    int n_on = 0;
    for (int i = 0; i < out->n_cpus; i++) {
        if (out->cpus[i].online && !isnan(out->cpus[i].load_pct)) {
            sum += out->cpus[i].load_pct;
            n_on++;
        }
    }
    out->cpu_avg_load_pct = n_on > 0 ? sum / n_on : NAN;

    out->power_total_mw = rail_cur(out, "VDD_IN");
    if (isnan(out->power_total_mw))
        out->power_total_mw = rail_cur(out, "POM_5V_IN");
    if (isnan(out->power_total_mw))
        out->power_total_mw = rail_cur(out, "VIN_SYS_5V0");

    if (recognised == 0)
        out->status = EB_TEGRA_MALFORMED;
    else if (have_ram && have_cpu && !bad)
        out->status = EB_TEGRA_OK;
    else
        out->status = EB_TEGRA_PARTIAL;
}

const char *eb_tegrastats_status_name(enum eb_tegra_status st)
{
    switch (st) {
    case EB_TEGRA_OK: return "ok";
    case EB_TEGRA_PARTIAL: return "partial";
    case EB_TEGRA_MALFORMED: return "malformed";
    }
    return "malformed";
}

void eb_tegrastats_write_json(const struct eb_tegra_sample *s, struct eb_json_writer *w)
{
    eb_json_obj_begin(w);
    eb_json_kstr(w, "status", eb_tegrastats_status_name(s->status));
    eb_json_kstr(w, "time", s->time[0] != '\0' ? s->time : NULL);
    eb_json_knum(w, "ram_used_mb", s->ram_used_mb);
    eb_json_knum(w, "ram_total_mb", s->ram_total_mb);
    eb_json_knum(w, "swap_used_mb", s->swap_used_mb);
    eb_json_knum(w, "swap_total_mb", s->swap_total_mb);
    eb_json_key(w, "cpu");
    if (s->n_cpus == 0) {
        eb_json_null(w);
    } else {
        eb_json_arr_begin(w);
        for (int i = 0; i < s->n_cpus; i++) {
            const struct eb_tegra_cpu *c = &s->cpus[i];
            if (!c->online) {
                eb_json_null(w);
                continue;
            }
            eb_json_obj_begin(w);
            eb_json_knum(w, "load_pct", c->load_pct);
            eb_json_knum(w, "freq_mhz", c->freq_mhz < 0 ? NAN : c->freq_mhz);
            eb_json_obj_end(w);
        }
        eb_json_arr_end(w);
    }
    eb_json_knum(w, "cpu_avg_load_pct", s->cpu_avg_load_pct);
    eb_json_knum(w, "emc_load_pct", s->emc_load_pct);
    eb_json_knum(w, "emc_freq_mhz", s->emc_freq_mhz);
    eb_json_knum(w, "gpu_load_pct", s->gpu_load_pct);
    eb_json_knum(w, "gpu_freq_mhz", s->gpu_freq_mhz);
    eb_json_key(w, "temps_c");
    eb_json_obj_begin(w);
    for (int i = 0; i < s->n_temps; i++)
        eb_json_knum(w, s->temps[i].name, s->temps[i].c);
    eb_json_obj_end(w);
    eb_json_key(w, "rails_mw");
    eb_json_obj_begin(w);
    for (int i = 0; i < s->n_rails; i++) {
        const struct eb_tegra_rail *r = &s->rails[i];
        eb_json_key(w, r->name);
        eb_json_obj_begin(w);
        eb_json_knum(w, "cur", r->cur_mw);
        eb_json_knum(w, "avg", r->avg_mw);
        if (r->has_peak)
            eb_json_knum(w, "peak", r->peak_mw);
        eb_json_obj_end(w);
    }
    eb_json_obj_end(w);
    eb_json_knum(w, "power_total_mw", s->power_total_mw);
    eb_json_obj_end(w);
}

/* ---- `edgebench tegrastats` ---- */

#define SUMMARY_MAX_NAMED 64

struct agg {
    double sum, min, max;
    uint64_t n;
};

struct named_agg {
    char name[EB_TEGRA_NAME_MAX];
    struct agg a;
};

/* Running aggregates only: the size is fixed whatever the input length. */
struct summary {
    uint64_t lines, ok, partial, malformed;
    struct agg ram_used, ram_total, swap_used, cpu_avg, emc_load, emc_freq, gpu_load, gpu_freq,
        power;
    int n_temps, n_rails;
    struct named_agg temps[SUMMARY_MAX_NAMED];
    struct named_agg rails[SUMMARY_MAX_NAMED];
};

static void agg_add(struct agg *a, double v)
{
    if (isnan(v))
        return;
    if (a->n == 0 || v < a->min)
        a->min = v;
    if (a->n == 0 || v > a->max)
        a->max = v;
    a->sum += v;
    a->n++;
}

static void named_add(struct named_agg *arr, int *n, const char *name, double v)
{
    for (int i = 0; i < *n; i++) {
        if (strcmp(arr[i].name, name) == 0) {
            agg_add(&arr[i].a, v);
            return;
        }
    }
    if (*n >= SUMMARY_MAX_NAMED)
        return;
    struct named_agg *e = &arr[(*n)++];
    memset(e, 0, sizeof(*e));
    snprintf(e->name, sizeof(e->name), "%s", name);
    agg_add(&e->a, v);
}

static void summary_add(struct summary *sm, const struct eb_tegra_sample *s)
{
    sm->lines++;
    if (s->status == EB_TEGRA_OK)
        sm->ok++;
    else if (s->status == EB_TEGRA_PARTIAL)
        sm->partial++;
    else
        sm->malformed++;
    agg_add(&sm->ram_used, s->ram_used_mb);
    agg_add(&sm->ram_total, s->ram_total_mb);
    agg_add(&sm->swap_used, s->swap_used_mb);
    agg_add(&sm->cpu_avg, s->cpu_avg_load_pct);
    agg_add(&sm->emc_load, s->emc_load_pct);
    agg_add(&sm->emc_freq, s->emc_freq_mhz);
    agg_add(&sm->gpu_load, s->gpu_load_pct);
    agg_add(&sm->gpu_freq, s->gpu_freq_mhz);
    agg_add(&sm->power, s->power_total_mw);
    for (int i = 0; i < s->n_temps; i++)
        named_add(sm->temps, &sm->n_temps, s->temps[i].name, s->temps[i].c);
    for (int i = 0; i < s->n_rails; i++)
        named_add(sm->rails, &sm->n_rails, s->rails[i].name, s->rails[i].cur_mw);
}

static void write_agg(struct eb_json_writer *w, const char *key, const struct agg *a)
{
    eb_json_key(w, key);
    eb_json_obj_begin(w);
    eb_json_knum(w, "mean", a->n > 0 ? a->sum / (double)a->n : NAN);
    eb_json_knum(w, "min", a->n > 0 ? a->min : NAN);
    eb_json_knum(w, "max", a->n > 0 ? a->max : NAN);
    eb_json_key(w, "n");
    eb_json_uint(w, a->n);
    eb_json_obj_end(w);
}

static void summary_write(const struct summary *sm, struct eb_json_writer *w)
{
    eb_json_obj_begin(w);
    eb_json_key(w, "lines");
    eb_json_uint(w, sm->lines);
    eb_json_key(w, "ok");
    eb_json_uint(w, sm->ok);
    eb_json_key(w, "partial");
    eb_json_uint(w, sm->partial);
    eb_json_key(w, "malformed");
    eb_json_uint(w, sm->malformed);
    write_agg(w, "ram_used_mb", &sm->ram_used);
    write_agg(w, "ram_total_mb", &sm->ram_total);
    write_agg(w, "swap_used_mb", &sm->swap_used);
    write_agg(w, "cpu_avg_load_pct", &sm->cpu_avg);
    write_agg(w, "emc_load_pct", &sm->emc_load);
    write_agg(w, "emc_freq_mhz", &sm->emc_freq);
    write_agg(w, "gpu_load_pct", &sm->gpu_load);
    write_agg(w, "gpu_freq_mhz", &sm->gpu_freq);
    write_agg(w, "power_total_mw", &sm->power);
    eb_json_key(w, "temps_c");
    eb_json_obj_begin(w);
    for (int i = 0; i < sm->n_temps; i++)
        write_agg(w, sm->temps[i].name, &sm->temps[i].a);
    eb_json_obj_end(w);
    eb_json_key(w, "rails_mw");
    eb_json_obj_begin(w);
    for (int i = 0; i < sm->n_rails; i++) {
        eb_json_key(w, sm->rails[i].name);
        eb_json_obj_begin(w);
        write_agg(w, "cur", &sm->rails[i].a);
        eb_json_obj_end(w);
    }
    eb_json_obj_end(w);
    eb_json_obj_end(w);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: edgebench tegrastats [--summary] FILE|-\n"
               "  Parses tegrastats output (FILE, or '-' for stdin): one JSON object per\n"
               "  non-blank line, or with --summary one object with counts and mean/min/max\n"
               "  per numeric field. Blank lines are skipped.\n");
}

static int is_blank(const char *s)
{
    for (; *s != '\0'; s++)
        if (!is_space(*s))
            return 0;
    return 1;
}

/* Reads the next line of `in` into `line` (EB_TEGRASTATS_LINE_MAX + 1 bytes, NUL-terminated,
 * newline dropped): 0 at the end of the input or when `*stop` is set (then *stopped). A line
 * longer than the buffer, or holding a NUL byte, is read through to its newline without being
 * kept and sets *bad (one malformed record); the stop flag is looked at every 64 KiB of it. */
static int next_line(FILE *in, char *line, int *bad, const atomic_int *stop, int *stopped)
{
    *bad = 0;
    if (stop != NULL && atomic_load_explicit(stop, memory_order_relaxed) != 0) {
        *stopped = 1;
        return 0;
    }
    size_t n = 0;
    uint64_t skipped = 0;
    int c;
    while ((c = getc(in)) != EOF && c != '\n') {
        if (n < EB_TEGRASTATS_LINE_MAX && c != '\0') {
            line[n++] = (char)c;
            continue;
        }
        *bad = 1;
        if ((++skipped & 0xFFFF) == 0 && stop != NULL &&
            atomic_load_explicit(stop, memory_order_relaxed) != 0) {
            *stopped = 1;
            return 0;
        }
    }
    line[n] = '\0';
    return c != EOF || n > 0 || *bad;
}

int eb_tegrastats_main(int argc, char **argv, FILE *out, FILE *err, const atomic_int *stop)
{
    int want_summary = 0;
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--summary") == 0) {
            want_summary = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(out);
            return 0;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(err, "edgebench tegrastats: unknown option '%s'\n", a);
            usage(err);
            return 2;
        } else if (path == NULL) {
            path = a;
        } else {
            fprintf(err, "edgebench tegrastats: more than one input ('%s' and '%s')\n", path, a);
            usage(err);
            return 2;
        }
    }
    if (path == NULL) {
        fprintf(err, "edgebench tegrastats: missing input FILE (or '-' for stdin)\n");
        usage(err);
        return 2;
    }

    int rc = 1;
    int from_stdin = strcmp(path, "-") == 0;
    FILE *in = from_stdin ? stdin : fopen(path, "r");
    char *line = malloc(EB_TEGRASTATS_LINE_MAX + 1);
    struct summary *sm = NULL;
    struct eb_tegra_sample *s = malloc(sizeof(*s));
    if (in == NULL) {
        fprintf(err, "edgebench tegrastats: cannot open %s: %s\n", path, strerror(errno));
        goto done;
    }
    if (line == NULL || s == NULL || (want_summary && (sm = calloc(1, sizeof(*sm))) == NULL)) {
        fprintf(err, "edgebench tegrastats: out of memory\n");
        goto done;
    }
    struct eb_json_writer w;
    errno = 0;
    int bad_line = 0, stopped = 0;
    while (next_line(in, line, &bad_line, stop, &stopped)) {
        if (!bad_line && is_blank(line))
            continue;
        eb_tegrastats_parse_line(bad_line ? NULL : line, s);
        if (sm != NULL) {
            summary_add(sm, s);
            continue;
        }
        eb_json_writer_init_file(&w, out, 0);
        eb_tegrastats_write_json(s, &w);
        fputc('\n', out);
    }
    if (ferror(in)) {
        fprintf(err, "edgebench tegrastats: cannot read %s: %s\n", from_stdin ? "stdin" : path,
                strerror(errno != 0 ? errno : EIO));
        goto done;
    }
    if (sm != NULL) {
        eb_json_writer_init_file(&w, out, 0);
        summary_write(sm, &w);
        fputc('\n', out);
    }
    if (fflush(out) != 0 || ferror(out)) {
        fprintf(err, "edgebench tegrastats: cannot write the output: %s\n", strerror(errno));
        goto done;
    }
    rc = stopped ? 130 : 0;
done:
    free(line);
    free(sm);
    free(s);
    if (in != NULL && !from_stdin)
        fclose(in);
    return rc;
}
