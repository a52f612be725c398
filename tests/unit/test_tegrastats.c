/* tegrastats line parser, JSON form and the `edgebench tegrastats` command. */
#include <math.h>
#include <stdint.h>

#include "eb/json.h"
#include "eb_test.h"
#include "harness/metrics/tegrastats.h"

#define ASSERT_NAN(x) ASSERT_TRUE(isnan((double)(x)))

static const struct eb_tegra_temp *find_temp(const struct eb_tegra_sample *s, const char *name)
{
    for (int i = 0; i < s->n_temps; i++)
        if (strcmp(s->temps[i].name, name) == 0)
            return &s->temps[i];
    return NULL;
}

static const struct eb_tegra_rail *find_rail(const struct eb_tegra_sample *s, const char *name)
{
    for (int i = 0; i < s->n_rails; i++)
        if (strcmp(s->rails[i].name, name) == 0)
            return &s->rails[i];
    return NULL;
}

static double temp_c(const struct eb_tegra_sample *s, const char *name)
{
    const struct eb_tegra_temp *t = find_temp(s, name);
    if (t == NULL)
        EB_FAIL("no temperature \"%s\"", name);
    return t->c;
}

static const struct eb_tegra_rail *rail(const struct eb_tegra_sample *s, const char *name)
{
    const struct eb_tegra_rail *r = find_rail(s, name);
    if (r == NULL)
        EB_FAIL("no rail \"%s\"", name);
    return r;
}

/* Reads line `idx` (0-based) of the shared sample file into buf, or skips. */
static char *read_samples(void)
{
    const char *shared = eb_test_shared_data();
    if (shared == NULL)
        EB_SKIP("shared data folder not found (set EB_SHARED_DATA)");
    char path[1024];
    snprintf(path, sizeof(path), "%s/tegrastats/samples.txt", shared);
    char *text = eb_test_read_file(path, NULL);
    if (text == NULL)
        EB_SKIP("%s not readable", path);
    return text;
}

static void sample_line(int idx, struct eb_tegra_sample *s)
{
    char *text = read_samples();
    char *p = text;
    for (int i = 0; i < idx && p != NULL; i++) {
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    if (p == NULL || *p == '\0')
        EB_FAIL("samples.txt has no line %d", idx + 1);
    char *nl = strchr(p, '\n');
    if (nl != NULL)
        *nl = '\0';
    eb_tegrastats_parse_line(p, s);
    free(text);
}

static char *json_of(const struct eb_tegra_sample *s)
{
    struct eb_json_writer w;
    eb_json_writer_init_mem(&w, 0);
    eb_tegrastats_write_json(s, &w);
    ASSERT_TRUE(!eb_json_writer_error(&w));
    char *out = eb_json_writer_take(&w, NULL);
    ASSERT_TRUE(out != NULL);
    return out;
}

static struct eb_json_value *parse_json(const char *text)
{
    struct eb_json_value *v = NULL;
    struct eb_diag diag = {0};
    if (eb_json_parse(text, strlen(text), &v, &diag) != EB_OK)
        EB_FAIL("JSON does not parse (%s): %.300s", diag.msg, text);
    return v;
}

static double jnum(const struct eb_json_value *root, const char *path)
{
    const struct eb_json_value *v = eb_json_path(root, path);
    if (v == NULL || v->type != EB_JSON_NUMBER)
        EB_FAIL("%s is not a number", path);
    return v->num;
}

static int jnull(const struct eb_json_value *root, const char *path)
{
    const struct eb_json_value *v = eb_json_path(root, path);
    return v != NULL && v->type == EB_JSON_NULL;
}

/* ---- the four real lines ---- */

EB_TEST(sample_line1_nano_jp4)
{
    struct eb_tegra_sample s;
    sample_line(0, &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
    ASSERT_STREQ(s.time, "");
    ASSERT_NEAR(s.ram_used_mb, 1180, 0);
    ASSERT_NEAR(s.ram_total_mb, 3965, 0);
    ASSERT_NEAR(s.swap_used_mb, 149, 0);
    ASSERT_NEAR(s.swap_total_mb, 1024, 0);
    ASSERT_EQ_INT(s.n_cpus, 4);
    const double loads[4] = {30, 33, 28, 26};
    for (int i = 0; i < 4; i++) {
        ASSERT_EQ_INT(s.cpus[i].online, 1);
        ASSERT_NEAR(s.cpus[i].load_pct, loads[i], 0);
        ASSERT_NEAR(s.cpus[i].freq_mhz, 1036, 0);
    }
    ASSERT_NEAR(s.cpu_avg_load_pct, 29.25, 1e-12);
    ASSERT_NEAR(s.emc_load_pct, 10, 0);
    ASSERT_NEAR(s.emc_freq_mhz, 1600, 0);
    ASSERT_NEAR(s.gpu_load_pct, 0, 0);
    ASSERT_NEAR(s.gpu_freq_mhz, 76, 0);
    ASSERT_EQ_INT(s.n_temps, 6);
    ASSERT_NEAR(temp_c(&s, "pll"), 57, 0);
    ASSERT_NEAR(temp_c(&s, "cpu"), 60.5, 0);
    ASSERT_NEAR(temp_c(&s, "pmic"), 100, 0);
    ASSERT_NEAR(temp_c(&s, "gpu"), 59, 0);
    ASSERT_NEAR(temp_c(&s, "ao"), 65, 0);
    ASSERT_NEAR(temp_c(&s, "thermal"), 59.75, 0);
    ASSERT_EQ_INT(s.n_rails, 3);
    ASSERT_NEAR(rail(&s, "POM_5V_IN")->cur_mw, 4520, 0);
    ASSERT_NEAR(rail(&s, "POM_5V_IN")->avg_mw, 4680, 0);
    ASSERT_EQ_INT(rail(&s, "POM_5V_IN")->has_peak, 0);
    ASSERT_NEAR(rail(&s, "POM_5V_GPU")->cur_mw, 0, 0);
    ASSERT_NEAR(rail(&s, "POM_5V_CPU")->cur_mw, 1078, 0);
    ASSERT_NEAR(rail(&s, "POM_5V_CPU")->avg_mw, 1205, 0);
    ASSERT_NEAR(s.power_total_mw, 4520, 0);
}

EB_TEST(sample_line2_tx2)
{
    struct eb_tegra_sample s;
    sample_line(1, &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
    ASSERT_NEAR(s.ram_used_mb, 707, 0);
    ASSERT_NEAR(s.ram_total_mb, 7854, 0);
    ASSERT_NAN(s.swap_used_mb);
    ASSERT_NAN(s.swap_total_mb);
    ASSERT_EQ_INT(s.n_cpus, 6);
    const double loads[6] = {12, 40, 3, 0, 7, 1};
    for (int i = 0; i < 6; i++) {
        ASSERT_NEAR(s.cpus[i].load_pct, loads[i], 0);
        ASSERT_NEAR(s.cpus[i].freq_mhz, 345, 0);
    }
    ASSERT_NEAR(s.cpu_avg_load_pct, 63.0 / 6.0, 1e-12);
    ASSERT_NAN(s.emc_load_pct);
    ASSERT_NAN(s.gpu_load_pct);
    ASSERT_NAN(s.gpu_freq_mhz);
    ASSERT_EQ_INT(s.n_temps, 8);
    ASSERT_NEAR(temp_c(&s, "bcpu"), 30, 0);
    ASSERT_NEAR(temp_c(&s, "mcpu"), 30, 0);
    ASSERT_NEAR(temp_c(&s, "gpu"), 28.5, 0);
    ASSERT_NEAR(temp_c(&s, "tboard"), 26, 0);
    ASSERT_NEAR(temp_c(&s, "tdiode"), 27.5, 0);
    ASSERT_NEAR(temp_c(&s, "thermal"), 29.4, 0);
    ASSERT_EQ_INT(s.n_rails, 6);
    ASSERT_NEAR(rail(&s, "VDD_IN")->cur_mw, 1038, 0);
    ASSERT_NEAR(rail(&s, "VDD_IN")->avg_mw, 1134, 0);
    ASSERT_NEAR(rail(&s, "VDD_WIFI")->cur_mw, 38, 0);
    ASSERT_NEAR(rail(&s, "VDD_WIFI")->avg_mw, 124, 0);
    ASSERT_NEAR(rail(&s, "VDD_DDR")->avg_mw, 192, 0);
    ASSERT_NEAR(s.power_total_mw, 1038, 0);
}

EB_TEST(sample_line3_orin_nano_jp5)
{
    struct eb_tegra_sample s;
    sample_line(2, &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
    ASSERT_STREQ(s.time, "01-24-2024 09:17:09");
    ASSERT_NEAR(s.ram_used_mb, 3503, 0);
    ASSERT_NEAR(s.ram_total_mb, 7337, 0);
    ASSERT_NEAR(s.swap_used_mb, 430, 0);
    ASSERT_NEAR(s.swap_total_mb, 3668, 0);
    ASSERT_EQ_INT(s.n_cpus, 6);
    const double loads[4] = {11, 13, 9, 18};
    for (int i = 0; i < 4; i++) {
        ASSERT_EQ_INT(s.cpus[i].online, 1);
        ASSERT_NEAR(s.cpus[i].load_pct, loads[i], 0);
        ASSERT_NEAR(s.cpus[i].freq_mhz, 729, 0);
    }
    ASSERT_EQ_INT(s.cpus[4].online, 0);
    ASSERT_EQ_INT(s.cpus[5].online, 0);
    ASSERT_NEAR(s.cpu_avg_load_pct, 51.0 / 4.0, 1e-12);
    ASSERT_NEAR(s.emc_load_pct, 0, 0);
    ASSERT_NEAR(s.emc_freq_mhz, 2133, 0);
    ASSERT_NEAR(s.gpu_load_pct, 0, 0);
    ASSERT_NEAR(s.gpu_freq_mhz, 305, 0);
    ASSERT_EQ_INT(s.n_temps, 9);
    ASSERT_NEAR(temp_c(&s, "cv0"), 42.718, 0);
    ASSERT_NEAR(temp_c(&s, "cpu"), 44.093, 0);
    ASSERT_NEAR(temp_c(&s, "soc2"), 42.625, 0);
    ASSERT_NEAR(temp_c(&s, "tj"), 46.968, 0);
    ASSERT_NEAR(temp_c(&s, "cv2"), 42.875, 0);
    ASSERT_TRUE(find_temp(&s, "CV0") == NULL);
    ASSERT_EQ_INT(s.n_rails, 3);
    ASSERT_NEAR(rail(&s, "VDD_IN")->cur_mw, 4915, 0);
    ASSERT_NEAR(rail(&s, "VDD_IN")->avg_mw, 4915, 0);
    ASSERT_NEAR(rail(&s, "VDD_CPU_GPU_CV")->cur_mw, 449, 0);
    ASSERT_NEAR(rail(&s, "VDD_SOC")->cur_mw, 1431, 0);
    ASSERT_NEAR(s.power_total_mw, 4915, 0);
}

EB_TEST(sample_line4_orin_nano_jp6)
{
    struct eb_tegra_sample s;
    sample_line(3, &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
    ASSERT_STREQ(s.time, "09-21-2025 15:38:17");
    ASSERT_NEAR(s.ram_used_mb, 3645, 0);
    ASSERT_NEAR(s.ram_total_mb, 7620, 0);
    ASSERT_NEAR(s.swap_used_mb, 236, 0);
    ASSERT_NEAR(s.swap_total_mb, 3810, 0);
    ASSERT_EQ_INT(s.n_cpus, 6);
    const double loads[6] = {1, 1, 4, 1, 0, 0};
    for (int i = 0; i < 6; i++) {
        ASSERT_EQ_INT(s.cpus[i].online, 1);
        ASSERT_NEAR(s.cpus[i].load_pct, loads[i], 0);
    }
    ASSERT_NEAR(s.cpu_avg_load_pct, 7.0 / 6.0, 1e-12);
    ASSERT_NEAR(s.emc_freq_mhz, 204, 0);
    ASSERT_NEAR(s.gpu_load_pct, 0, 0);
    ASSERT_NEAR(s.gpu_freq_mhz, 305, 0);
    ASSERT_EQ_INT(s.n_temps, 6);
    ASSERT_NEAR(temp_c(&s, "gpu"), 44.531, 0);
    ASSERT_NEAR(temp_c(&s, "soc1"), 43.156, 0);
    ASSERT_EQ_INT(s.n_rails, 3);
    ASSERT_NEAR(rail(&s, "VDD_IN")->cur_mw, 2957, 0);
    ASSERT_NEAR(rail(&s, "VDD_SOC")->avg_mw, 1012, 0);
    ASSERT_NEAR(s.power_total_mw, 2957, 0);
}

EB_TEST(sample_lines_json_keys)
{
    char *text = read_samples();
    char *save = text;
    int lines = 0;
    for (char *p = text; p != NULL && *p != '\0';) {
        char *nl = strchr(p, '\n');
        if (nl != NULL)
            *nl = '\0';
        struct eb_tegra_sample s;
        eb_tegrastats_parse_line(p, &s);
        char *js = json_of(&s);
        struct eb_json_value *v = parse_json(js);
        static const char *const keys[] = {
            "status",        "time",         "ram_used_mb",      "ram_total_mb", "swap_used_mb",
            "swap_total_mb", "cpu",          "cpu_avg_load_pct", "emc_load_pct", "emc_freq_mhz",
            "gpu_load_pct",  "gpu_freq_mhz", "temps_c",          "rails_mw",     "power_total_mw"};
        ASSERT_EQ_INT(v->type, EB_JSON_OBJECT);
        ASSERT_EQ_INT(v->n, EB_ARRAY_LEN(keys));
        for (size_t k = 0; k < EB_ARRAY_LEN(keys); k++)
            ASSERT_STREQ(v->keys[k], keys[k]);
        ASSERT_STREQ(eb_json_get(v, "status")->str, "ok");
        if (lines == 2) {
            ASSERT_STREQ(eb_json_get(v, "time")->str, "01-24-2024 09:17:09");
            ASSERT_EQ_INT(eb_json_get(v, "cpu")->n, 6);
            ASSERT_TRUE(jnull(v, "cpu/4"));
            ASSERT_NEAR(jnum(v, "cpu/0/load_pct"), 11, 0);
            ASSERT_NEAR(jnum(v, "cpu/0/freq_mhz"), 729, 0);
            ASSERT_NEAR(jnum(v, "temps_c/cv0"), 42.718, 0);
            ASSERT_NEAR(jnum(v, "rails_mw/VDD_IN/cur"), 4915, 0);
            ASSERT_NEAR(jnum(v, "power_total_mw"), 4915, 0);
            ASSERT_TRUE(eb_json_path(v, "rails_mw/VDD_IN/peak") == NULL);
        }
        if (lines == 1) {
            ASSERT_TRUE(jnull(v, "time"));
            ASSERT_TRUE(jnull(v, "swap_used_mb"));
            ASSERT_TRUE(jnull(v, "gpu_freq_mhz"));
        }
        eb_json_free(v);
        free(js);
        lines++;
        p = nl != NULL ? nl + 1 : NULL;
    }
    ASSERT_EQ_INT(lines, 4);
    free(save);
}

/* ---- the fixture file: <status> TAB <label> TAB <line> ---- */

struct fixture {
    char *text;
    int n;
    const char *status[64];
    const char *label[64];
    const char *line[64];
};

static void load_fixture(struct fixture *f)
{
    const char *src = getenv("EB_SRC_DIR");
    if (src == NULL)
        EB_SKIP("EB_SRC_DIR not set (run through ctest)");
    char path[1024];
    snprintf(path, sizeof(path), "%s/tests/data/tegrastats_variants.txt", src);
    f->text = eb_test_read_file(path, NULL);
    if (f->text == NULL)
        EB_FAIL("cannot read %s", path);
    f->n = 0;
    for (char *p = f->text; p != NULL && *p != '\0';) {
        char *nl = strchr(p, '\n');
        if (nl != NULL)
            *nl = '\0';
        if (*p != '#' && *p != '\0') {
            char *t1 = strchr(p, '\t');
            char *t2 = t1 != NULL ? strchr(t1 + 1, '\t') : NULL;
            if (t2 == NULL)
                EB_FAIL("fixture line without two tabs: %s", p);
            *t1 = *t2 = '\0';
            ASSERT_TRUE(f->n < 64);
            f->status[f->n] = p;
            f->label[f->n] = t1 + 1;
            f->line[f->n] = t2 + 1;
            f->n++;
        }
        p = nl != NULL ? nl + 1 : NULL;
    }
}

static void fixture_parse(const char *label, struct eb_tegra_sample *s)
{
    struct fixture f;
    load_fixture(&f);
    for (int i = 0; i < f.n; i++) {
        if (strcmp(f.label[i], label) == 0) {
            eb_tegrastats_parse_line(f.line[i], s);
            free(f.text);
            return;
        }
    }
    EB_FAIL("fixture has no line labelled %s", label);
}

EB_TEST(variants_expected_status)
{
    struct fixture f;
    load_fixture(&f);
    ASSERT_TRUE(f.n >= 20);
    for (int i = 0; i < f.n; i++) {
        struct eb_tegra_sample s;
        eb_tegrastats_parse_line(f.line[i], &s);
        if (strcmp(eb_tegrastats_status_name(s.status), f.status[i]) != 0)
            EB_FAIL("%s: status %s, expected %s", f.label[i], eb_tegrastats_status_name(s.status),
                    f.status[i]);
        /* Every variant serialises to valid JSON. */
        char *js = json_of(&s);
        struct eb_json_value *v = parse_json(js);
        ASSERT_STREQ(eb_json_get(v, "status")->str, f.status[i]);
        eb_json_free(v);
        free(js);
    }
    free(f.text);
}

EB_TEST(variant_agx_orin)
{
    struct eb_tegra_sample s;
    fixture_parse("agx_orin", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
    ASSERT_STREQ(s.time, "03-15-2024 10:01:02");
    ASSERT_EQ_INT(s.n_cpus, 12);
    int off = 0;
    for (int i = 0; i < s.n_cpus; i++)
        off += !s.cpus[i].online;
    ASSERT_EQ_INT(off, 4);
    ASSERT_NEAR(s.cpu_avg_load_pct, 12.0 / 8.0, 1e-12);
    ASSERT_NEAR(s.gpu_freq_mhz, 1300, 0); /* first of "[1300,1300]" */
    ASSERT_NEAR(s.emc_freq_mhz, 3199, 0);
    ASSERT_NEAR(temp_c(&s, "cv0"), 45.5, 0);
    ASSERT_NEAR(temp_c(&s, "soc0"), 45, 0);
    ASSERT_NEAR(rail(&s, "VDD_GPU_SOC")->cur_mw, 2389, 0);
    ASSERT_NEAR(rail(&s, "VDD_CPU_CV")->cur_mw, 796, 0);
    ASSERT_NEAR(rail(&s, "VIN_SYS_5V0")->cur_mw, 3824, 0);
    ASSERT_NEAR(s.power_total_mw, 3824, 0); /* no VDD_IN / POM_5V_IN on AGX Orin */
    /* "NC" appears twice: kept once, so the JSON object has unique keys. */
    int nc = 0;
    for (int i = 0; i < s.n_rails; i++)
        nc += strcmp(s.rails[i].name, "NC") == 0;
    ASSERT_EQ_INT(nc, 1);
    ASSERT_EQ_INT(s.n_rails, 5);
}

EB_TEST(variant_three_value_rails)
{
    struct eb_tegra_sample s;
    fixture_parse("three_value_rails", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
    ASSERT_NAN(s.swap_used_mb);
    const struct eb_tegra_rail *r = rail(&s, "VDD_IN");
    ASSERT_NEAR(r->cur_mw, 5000, 0);
    ASSERT_NEAR(r->avg_mw, 4800, 0);
    ASSERT_EQ_INT(r->has_peak, 1);
    ASSERT_NEAR(r->peak_mw, 6000, 0);
    ASSERT_NEAR(s.power_total_mw, 5000, 0);
    ASSERT_NEAR(s.gpu_load_pct, 50, 0);
    ASSERT_NEAR(s.gpu_freq_mhz, 624, 0);
    ASSERT_NEAR(s.cpu_avg_load_pct, 35, 1e-12);
    char *js = json_of(&s);
    struct eb_json_value *v = parse_json(js);
    ASSERT_NEAR(jnum(v, "rails_mw/VDD_IN/peak"), 6000, 0);
    ASSERT_NEAR(jnum(v, "rails_mw/VDD_SOC/peak"), 1450, 0);
    ASSERT_TRUE(jnull(v, "swap_used_mb"));
    ASSERT_TRUE(jnull(v, "swap_total_mb"));
    eb_json_free(v);
    free(js);
}

EB_TEST(variant_negative_temps)
{
    struct eb_tegra_sample s;
    fixture_parse("negative_temps", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
    ASSERT_NEAR(temp_c(&s, "pll"), -12.5, 0);
    ASSERT_NEAR(temp_c(&s, "cpu"), -10, 0);
    ASSERT_NEAR(temp_c(&s, "gpu"), -11.25, 0);
    ASSERT_NEAR(temp_c(&s, "ao"), -3, 0);
    ASSERT_NEAR(temp_c(&s, "pmic"), 100, 0);    /* placeholder, still a temperature */
    ASSERT_NEAR(temp_c(&s, "tboard"), 45.5, 0); /* cur/max: current */
    ASSERT_NEAR(s.power_total_mw, 1200, 0);
}

EB_TEST(variant_cores_without_freq)
{
    struct eb_tegra_sample s;
    fixture_parse("cores_without_freq", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
    ASSERT_EQ_INT(s.n_cpus, 4);
    ASSERT_NEAR(s.cpus[0].load_pct, 12, 0);
    ASSERT_TRUE(s.cpus[0].freq_mhz < 0);
    ASSERT_EQ_INT(s.cpus[1].online, 0);
    ASSERT_NEAR(s.cpu_avg_load_pct, 8, 1e-12);
    ASSERT_NEAR(s.emc_load_pct, 3, 0);
    ASSERT_NAN(s.emc_freq_mhz);
    ASSERT_NEAR(s.gpu_load_pct, 9, 0);
    ASSERT_NAN(s.gpu_freq_mhz);
    ASSERT_NEAR(s.power_total_mw, 2000, 0);
    char *js = json_of(&s);
    struct eb_json_value *v = parse_json(js);
    ASSERT_NEAR(jnum(v, "cpu/0/load_pct"), 12, 0);
    ASSERT_TRUE(jnull(v, "cpu/0/freq_mhz"));
    ASSERT_TRUE(jnull(v, "cpu/1"));
    ASSERT_TRUE(jnull(v, "gpu_freq_mhz"));
    ASSERT_TRUE(jnull(v, "emc_freq_mhz"));
    eb_json_free(v);
    free(js);
}

EB_TEST(variant_lowercase_mixed_case)
{
    struct eb_tegra_sample s;
    fixture_parse("lowercase_mixed_case", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
    ASSERT_NEAR(s.ram_used_mb, 2500, 0);
    ASSERT_NEAR(s.swap_used_mb, 10, 0);
    ASSERT_EQ_INT(s.n_cpus, 2);
    ASSERT_NEAR(s.gpu_freq_mhz, 306, 0);
    ASSERT_NEAR(temp_c(&s, "cpu"), 44.1, 0);
    ASSERT_NEAR(temp_c(&s, "soc2"), 43, 0);
    ASSERT_NEAR(temp_c(&s, "tj"), 44.5, 0);
    ASSERT_NEAR(rail(&s, "vdd_in")->cur_mw, 3000, 0); /* name as printed */
    ASSERT_NEAR(s.power_total_mw, 3000, 0);
}

EB_TEST(variant_unknown_tokens_and_engines)
{
    struct eb_tegra_sample s;
    fixture_parse("xavier_nx_unknown_tokens", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
    ASSERT_EQ_INT(s.n_cpus, 6);
    ASSERT_NEAR(s.power_total_mw, 4076, 0);
    ASSERT_EQ_INT(s.n_rails, 3);
    fixture_parse("orin_nx_gr3d2", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
    ASSERT_NEAR(s.gpu_load_pct, 45, 0); /* GR3D, not GR3D2 */
    ASSERT_NEAR(s.gpu_freq_mhz, 918, 0);
    ASSERT_NEAR(s.power_total_mw, 9800, 0);
    fixture_parse("unknown_words_between", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
    ASSERT_NEAR(s.ram_total_mb, 200, 0);
    ASSERT_NEAR(s.gpu_load_pct, 0, 0);
    ASSERT_NEAR(temp_c(&s, "soc-therm"), 41.5, 0);
    ASSERT_NAN(s.power_total_mw);
}

EB_TEST(partial_lines)
{
    struct eb_tegra_sample s;
    fixture_parse("truncated_in_cpu", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_PARTIAL);
    ASSERT_NEAR(s.ram_used_mb, 3503, 0);
    ASSERT_NEAR(s.swap_used_mb, 430, 0);
    ASSERT_EQ_INT(s.n_cpus, 0);
    ASSERT_NAN(s.cpu_avg_load_pct);

    fixture_parse("truncated_after_ram", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_PARTIAL);
    ASSERT_STREQ(s.time, "01-24-2024 09:17:09");
    ASSERT_NEAR(s.ram_total_mb, 7337, 0);

    fixture_parse("truncated_in_ram", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_PARTIAL);
    ASSERT_NAN(s.ram_used_mb);

    fixture_parse("ram_garbage", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_PARTIAL);
    ASSERT_NAN(s.ram_used_mb);
    ASSERT_EQ_INT(s.n_cpus, 2);
    ASSERT_NEAR(s.cpu_avg_load_pct, 15, 1e-12);

    fixture_parse("truncated_rail", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_PARTIAL);
    ASSERT_NAN(s.power_total_mw);
    ASSERT_EQ_INT(s.n_rails, 0);

    fixture_parse("truncated_temp", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_PARTIAL);
    ASSERT_EQ_INT(s.n_temps, 1);
    ASSERT_NEAR(temp_c(&s, "bcpu"), 30, 0);

    fixture_parse("bad_cpu_entry", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_PARTIAL);
    ASSERT_EQ_INT(s.n_cpus, 3);
    ASSERT_NAN(s.cpus[1].load_pct);
    ASSERT_NEAR(s.cpu_avg_load_pct, 7.5, 1e-12);

    /* Truncating a real line at every byte never crashes and never claims "ok" too early. */
    const char *full = "01-24-2024 09:17:09 RAM 3503/7337MB (lfb 7x1MB) SWAP 430/3668MB "
                       "(cached 1MB) CPU [11%@729,13%@729,off,off] EMC_FREQ 0%@2133 "
                       "GR3D_FREQ 0%@[305] CV0@42.718C VDD_IN 4915mW/4915mW";
    char buf[512];
    size_t len = strlen(full);
    for (size_t cut = 0; cut <= len; cut++) {
        memcpy(buf, full, cut);
        buf[cut] = '\0';
        eb_tegrastats_parse_line(buf, &s);
        if (cut <= (size_t)(strchr(full, ']') - full))
            ASSERT_TRUE(s.status != EB_TEGRA_OK);
        char *js = json_of(&s);
        struct eb_json_value *v = parse_json(js);
        eb_json_free(v);
        free(js);
    }
    eb_tegrastats_parse_line(full, &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
}

EB_TEST(garbage_lines)
{
    struct eb_tegra_sample s;
    eb_tegrastats_parse_line("", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_MALFORMED);
    ASSERT_EQ_INT(s.n_cpus, 0);
    ASSERT_NAN(s.ram_used_mb);
    eb_tegrastats_parse_line("     \t  ", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_MALFORMED);
    eb_tegrastats_parse_line("\n", &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_MALFORMED);
    eb_tegrastats_parse_line(NULL, &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_MALFORMED);

    /* Random bytes (fixed seed, a simple LCG so the sequence is the same everywhere). */
    uint32_t x = 12345;
    char buf[400];
    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)(round % 399);
        for (size_t i = 0; i < n; i++) {
            x = x * 1664525u + 1013904223u;
            char c = (char)(x >> 24);
            buf[i] = c == '\0' ? 'x' : c;
        }
        buf[n] = '\0';
        eb_tegrastats_parse_line(buf, &s);
        ASSERT_TRUE(s.n_cpus <= EB_TEGRA_MAX_CPUS && s.n_temps <= EB_TEGRA_MAX_TEMPS &&
                    s.n_rails <= EB_TEGRA_MAX_RAILS);
        char *js = json_of(&s);
        struct eb_json_value *v = parse_json(js);
        eb_json_free(v);
        free(js);
    }
    /* Tokens that look like ours, shuffled: whatever comes out must be valid JSON. */
    static const char *const words[] = {
        "RAM",         "1/2MB",     "CPU",   "[1%@2,off]", "[", "]", "@", "x@1C", "VDD_IN", "1/2",
        "1mW/2mW/3mW", "GR3D_FREQ", "0%@[1", "(lfb",       ")", "-", "%", "SWAP", "off"};
    for (int round = 0; round < 2000; round++) {
        size_t pos = 0;
        int nw = round % 30;
        for (int i = 0; i < nw; i++) {
            x = x * 1664525u + 1013904223u;
            const char *wd = words[(x >> 16) % EB_ARRAY_LEN(words)];
            int k = snprintf(buf + pos, sizeof(buf) - pos, "%s ", wd);
            if (k < 0 || (size_t)k >= sizeof(buf) - pos)
                break;
            pos += (size_t)k;
        }
        buf[pos] = '\0';
        eb_tegrastats_parse_line(buf, &s);
        char *js = json_of(&s);
        struct eb_json_value *v = parse_json(js);
        eb_json_free(v);
        free(js);
    }
}

EB_TEST(bounded_counts)
{
    /* More cores, temps and rails than the sample holds: the extra ones are ignored. */
    char line[8192];
    size_t pos = 0;
    pos += (size_t)snprintf(line + pos, sizeof(line) - pos, "RAM 1/2MB CPU [");
    for (int i = 0; i < 100; i++)
        pos += (size_t)snprintf(line + pos, sizeof(line) - pos, "%s%d%%@100", i ? "," : "", i);
    pos += (size_t)snprintf(line + pos, sizeof(line) - pos, "]");
    for (int i = 0; i < 100; i++)
        pos +=
            (size_t)snprintf(line + pos, sizeof(line) - pos, " T%d@%d.5C R%d %d/%d", i, i, i, i, i);
    pos += (size_t)snprintf(line + pos, sizeof(line) - pos,
                            " AVERYLONGTEMPERATURENAMETHATDOESNOTFITINTHEBUFFER@1C");
    ASSERT_TRUE(pos < sizeof(line) - 1);
    struct eb_tegra_sample s;
    eb_tegrastats_parse_line(line, &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
    ASSERT_EQ_INT(s.n_cpus, EB_TEGRA_MAX_CPUS);
    ASSERT_EQ_INT(s.n_temps, EB_TEGRA_MAX_TEMPS);
    ASSERT_EQ_INT(s.n_rails, EB_TEGRA_MAX_RAILS);
    ASSERT_NEAR(s.cpu_avg_load_pct, (EB_TEGRA_MAX_CPUS - 1) / 2.0, 1e-12);
    ASSERT_NEAR(temp_c(&s, "t3"), 3.5, 0);
}

EB_TEST(long_line_100kb)
{
    size_t n = 100 * 1024;
    char *line = malloc(n + 1);
    ASSERT_TRUE(line != NULL);
    /* A real line followed by ~100 KB of repeated unknown and known tokens. */
    const char *head = "RAM 1180/3965MB (lfb 1x2MB) CPU [30%@1036,33%@1036] ";
    size_t pos = strlen(head);
    memcpy(line, head, pos);
    static const char pattern[] = "FOO 12 GPU@40C VDD_IN 100/200 ";
    while (pos + sizeof(pattern) < n) {
        memcpy(line + pos, pattern, sizeof(pattern) - 1);
        pos += sizeof(pattern) - 1;
    }
    line[pos] = '\0';
    struct eb_tegra_sample s;
    eb_tegrastats_parse_line(line, &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_OK);
    ASSERT_EQ_INT(s.n_temps, 1);
    ASSERT_EQ_INT(s.n_rails, 1);
    ASSERT_NEAR(s.power_total_mw, 100, 0);

    /* 100 KB of one word, of an unclosed bracket, and of digits. */
    memset(line, 'A', n);
    line[n] = '\0';
    eb_tegrastats_parse_line(line, &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_MALFORMED);
    line[0] = '[';
    eb_tegrastats_parse_line(line, &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_MALFORMED);
    memcpy(line, "RAM ", 4);
    memset(line + 4, '7', n - 4);
    eb_tegrastats_parse_line(line, &s);
    ASSERT_EQ_INT(s.status, EB_TEGRA_PARTIAL);
    ASSERT_NAN(s.ram_used_mb);
    free(line);
}

/* ---- eb_tegrastats_main ---- */

static char *run_main(int argc, char **argv, int *rc_out, char **err_out)
{
    char out_path[1024], err_path[1024];
    snprintf(out_path, sizeof(out_path), "%s/main.out", eb_test_tmpdir());
    snprintf(err_path, sizeof(err_path), "%s/main.err", eb_test_tmpdir());
    FILE *out = fopen(out_path, "w");
    FILE *err = fopen(err_path, "w");
    ASSERT_TRUE(out != NULL && err != NULL);
    *rc_out = eb_tegrastats_main(argc, argv, out, err, NULL);
    fclose(out);
    fclose(err);
    char *o = eb_test_read_file(out_path, NULL);
    char *e = eb_test_read_file(err_path, NULL);
    ASSERT_TRUE(o != NULL && e != NULL);
    if (err_out != NULL)
        *err_out = e;
    else
        free(e);
    return o;
}

static void write_samples_tmp(char *path, size_t size)
{
    char *text = read_samples();
    snprintf(path, size, "%s/samples_with_blanks.txt", eb_test_tmpdir());
    FILE *f = fopen(path, "w");
    ASSERT_TRUE(f != NULL);
    /* Blank lines in between are skipped; one garbage line is reported as malformed. */
    fputs("\n   \n", f);
    fputs(text, f);
    fputs("\nnot a tegrastats line\n\n", f);
    fclose(f);
    free(text);
}

EB_TEST(main_jsonl)
{
    char path[1024];
    write_samples_tmp(path, sizeof(path));
    char *argv[] = {path, NULL};
    int rc;
    char *out = run_main(1, argv, &rc, NULL);
    ASSERT_EQ_INT(rc, 0);
    int lines = 0;
    const char *expect[] = {"ok", "ok", "ok", "ok", "malformed"};
    for (char *p = out; *p != '\0';) {
        char *nl = strchr(p, '\n');
        ASSERT_TRUE(nl != NULL); /* every object ends with a newline */
        *nl = '\0';
        ASSERT_TRUE(lines < 5);
        struct eb_json_value *v = parse_json(p);
        ASSERT_EQ_INT(v->type, EB_JSON_OBJECT);
        ASSERT_STREQ(eb_json_get(v, "status")->str, expect[lines]);
        if (lines == 0) {
            ASSERT_NEAR(jnum(v, "swap_used_mb"), 149, 0);
            ASSERT_NEAR(jnum(v, "power_total_mw"), 4520, 0);
        }
        eb_json_free(v);
        lines++;
        p = nl + 1;
    }
    ASSERT_EQ_INT(lines, 5);
    free(out);
}

EB_TEST(main_summary)
{
    char path[1024];
    write_samples_tmp(path, sizeof(path));
    char *argv[] = {"--summary", path, NULL};
    int rc;
    char *out = run_main(2, argv, &rc, NULL);
    ASSERT_EQ_INT(rc, 0);
    struct eb_json_value *v = parse_json(out);
    ASSERT_NEAR(jnum(v, "lines"), 5, 0);
    ASSERT_NEAR(jnum(v, "ok"), 4, 0);
    ASSERT_NEAR(jnum(v, "partial"), 0, 0);
    ASSERT_NEAR(jnum(v, "malformed"), 1, 0);
    /* ram_used_mb of the four lines: 1180, 707, 3503, 3645. */
    ASSERT_NEAR(jnum(v, "ram_used_mb/mean"), (1180.0 + 707 + 3503 + 3645) / 4, 1e-9);
    ASSERT_NEAR(jnum(v, "ram_used_mb/min"), 707, 0);
    ASSERT_NEAR(jnum(v, "ram_used_mb/max"), 3645, 0);
    ASSERT_NEAR(jnum(v, "ram_used_mb/n"), 4, 0);
    ASSERT_NEAR(jnum(v, "swap_used_mb/n"), 3, 0);
    ASSERT_NEAR(jnum(v, "gpu_freq_mhz/n"), 3, 0);
    ASSERT_NEAR(jnum(v, "power_total_mw/mean"), (4520.0 + 1038 + 4915 + 2957) / 4, 1e-9);
    ASSERT_NEAR(jnum(v, "power_total_mw/max"), 4915, 0);
    ASSERT_NEAR(jnum(v, "temps_c/tj/n"), 2, 0);
    ASSERT_NEAR(jnum(v, "temps_c/tj/max"), 46.968, 0);
    ASSERT_NEAR(jnum(v, "rails_mw/VDD_IN/cur/n"), 3, 0);
    ASSERT_NEAR(jnum(v, "rails_mw/VDD_IN/cur/min"), 1038, 0);
    ASSERT_NEAR(jnum(v, "rails_mw/POM_5V_IN/cur/mean"), 4520, 0);
    ASSERT_NEAR(jnum(v, "emc_load_pct/n"), 3, 0);
    eb_json_free(v);
    free(out);
}

EB_TEST(main_errors)
{
    int rc;
    char *err = NULL;
    char missing[1024];
    snprintf(missing, sizeof(missing), "%s/does_not_exist.txt", eb_test_tmpdir());
    char *argv1[] = {missing, NULL};
    char *out = run_main(1, argv1, &rc, &err);
    ASSERT_EQ_INT(rc, 1);
    ASSERT_CONTAINS(err, "does_not_exist.txt");
    ASSERT_TRUE(strchr(err, '\n') == err + strlen(err) - 1); /* one line */
    free(out);
    free(err);

    char *argv2[] = {NULL};
    out = run_main(0, argv2, &rc, &err);
    ASSERT_EQ_INT(rc, 2);
    ASSERT_CONTAINS(err, "usage");
    free(out);
    free(err);

    char *argv3[] = {"--bogus", "x", NULL};
    out = run_main(2, argv3, &rc, &err);
    ASSERT_EQ_INT(rc, 2);
    ASSERT_CONTAINS(err, "--bogus");
    free(out);
    free(err);

    char *argv4[] = {"a", "b", NULL};
    out = run_main(2, argv4, &rc, NULL);
    ASSERT_EQ_INT(rc, 2);
    free(out);
}

EB_TEST(main_streams_long_input)
{
    /* Many lines through --summary: aggregates only, counts exact. */
    char path[1024];
    snprintf(path, sizeof(path), "%s/many.txt", eb_test_tmpdir());
    FILE *f = fopen(path, "w");
    ASSERT_TRUE(f != NULL);
    for (int i = 0; i < 20000; i++)
        fprintf(f, "RAM %d/8000MB CPU [%d%%@100] T%d@40C VDD_IN %d/1\n", 1000 + i % 100, i % 50,
                i % 200, i % 7);
    fclose(f);
    char *argv[] = {"--summary", path, NULL};
    int rc;
    char *out = run_main(2, argv, &rc, NULL);
    ASSERT_EQ_INT(rc, 0);
    struct eb_json_value *v = parse_json(out);
    ASSERT_NEAR(jnum(v, "lines"), 20000, 0);
    ASSERT_NEAR(jnum(v, "ok"), 20000, 0);
    ASSERT_NEAR(jnum(v, "ram_used_mb/min"), 1000, 0);
    ASSERT_NEAR(jnum(v, "ram_used_mb/max"), 1099, 0);
    ASSERT_NEAR(jnum(v, "power_total_mw/max"), 6, 0);
    /* At most 64 temperature names are tracked. */
    ASSERT_EQ_INT(eb_json_get(v, "temps_c")->n, 64);
    eb_json_free(v);
    free(out);
}
