/* svg_chart.c (ticks, escaping, every chart type on crafted data) and report.html. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/json.h"
#include "eb_test.h"
#include "harness/report/report.h"
#include "harness/report/report_html.h"
#include "harness/report/svg_chart.h"

/* ------------------------------------------------------------------------------ helpers */

/* Renders into a NUL-terminated malloc'd string through a memory stream. */
struct capture {
    char *buf;
    size_t len;
    FILE *fp;
};

static FILE *cap_open(struct capture *c)
{
    memset(c, 0, sizeof(*c));
    c->fp = open_memstream(&c->buf, &c->len);
    ASSERT_TRUE(c->fp != NULL);
    return c->fp;
}

static char *cap_close(struct capture *c)
{
    ASSERT_TRUE(fclose(c->fp) == 0);
    return c->buf;
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + len, needle))
        n++;
    return n;
}

static int is_void_element(const char *name, size_t len)
{
    static const char *const v[] = {"meta", "br", "hr", "img", "input", "link"};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        if (strlen(v[i]) == len && strncmp(name, v[i], len) == 0)
            return 1;
    return 0;
}

/*
 * A small well-formedness check of SVG/HTML output: every tag closes in order (HTML void
 * elements and <!DOCTYPE> aside), every '&' starts one of the entities the writers use, and no
 * number is written as nan or inf.
 */
static void assert_well_formed(const char *doc)
{
    const char *stack[256];
    size_t lens[256], depth = 0;
    for (const char *p = doc; *p != '\0'; p++) {
        if (*p == '&') {
            static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
            int ok = 0;
            for (size_t i = 0; i < 5; i++)
                ok |= strncmp(p, ents[i], strlen(ents[i])) == 0;
            if (!ok)
                EB_FAIL("bare '&' at \"%.40s\"", p);
            continue;
        }
        if (*p != '<')
            continue;
        if (p[1] == '!') {
            p = strchr(p, '>');
            ASSERT_TRUE(p != NULL);
            continue;
        }
        const char *end = strchr(p, '>');
        if (end == NULL)
            EB_FAIL("unclosed tag at \"%.40s\"", p);
        if (memchr(p + 1, '<', (size_t)(end - p - 1)) != NULL)
            EB_FAIL("'<' inside a tag at \"%.60s\"", p);
        int closing = p[1] == '/';
        const char *name = p + 1 + closing;
        size_t len = 0;
        while (isalnum((unsigned char)name[len]) || name[len] == '-')
            len++;
        if (len == 0)
            EB_FAIL("bad tag at \"%.40s\"", p);
        if (closing) {
            if (depth == 0 || lens[depth - 1] != len || strncmp(stack[depth - 1], name, len) != 0)
                EB_FAIL("</%.*s> does not close the open element at \"%.60s\"", (int)len, name, p);
            depth--;
        } else if (end[-1] != '/' && !is_void_element(name, len)) {
            ASSERT_TRUE(depth < 256);
            stack[depth] = name;
            lens[depth++] = len;
        }
        p = end;
    }
    if (depth != 0)
        EB_FAIL("%zu elements left open, the innermost <%.*s>", depth, (int)lens[depth - 1],
                stack[depth - 1]);
    for (const char *p = doc; *p != '\0'; p++) {
        /* Numbers only: "nan"/"inf" inside words (e.g. "inference") are text. */
        if ((strncmp(p, "nan", 3) == 0 || strncmp(p, "inf\"", 4) == 0 ||
             strncmp(p, "inf ", 4) == 0) &&
            (p == doc || !isalpha((unsigned char)p[-1])) && !isalpha((unsigned char)p[3]))
            EB_FAIL("a non-finite number is written at \"%.40s\"", p > doc + 20 ? p - 20 : doc);
    }
}

/* The d attribute of the first <path class="series"> (copied; caller frees). */
static char *first_series_path(const char *svg)
{
    const char *p = strstr(svg, "<path class=\"series\"");
    ASSERT_TRUE(p != NULL);
    p = strstr(p, " d=\"");
    ASSERT_TRUE(p != NULL);
    p += 4;
    const char *e = strchr(p, '"');
    ASSERT_TRUE(e != NULL);
    char *d = malloc((size_t)(e - p) + 1);
    ASSERT_TRUE(d != NULL);
    memcpy(d, p, (size_t)(e - p));
    d[e - p] = '\0';
    return d;
}

/* ------------------------------------------------------------------------------- ticks */

EB_TEST(nice_ticks_round_values)
{
    struct eb_svg_ticks t;
    eb_svg_nice_ticks(0.0, 9.3, 6, &t);
    ASSERT_NEAR(t.lo, 0.0, 1e-12);
    ASSERT_NEAR(t.hi, 10.0, 1e-12);
    ASSERT_NEAR(t.step, 2.0, 1e-12);
    ASSERT_EQ_INT(t.count, 6);
    ASSERT_EQ_INT(t.decimals, 0);

    eb_svg_nice_ticks(0.0012, 0.0087, 6, &t);
    ASSERT_NEAR(t.step, 0.002, 1e-15);
    ASSERT_NEAR(t.lo, 0.0, 1e-15);
    ASSERT_NEAR(t.hi, 0.01, 1e-15);
    ASSERT_EQ_INT(t.decimals, 3);
    char b[32];
    eb_svg_format_tick(t.lo + 3 * t.step, &t, b, sizeof(b));
    ASSERT_STREQ(b, "0.006");

    eb_svg_nice_ticks(-3.7, 12.2, 6, &t);
    ASSERT_NEAR(t.lo, -5.0, 1e-12);
    ASSERT_NEAR(t.hi, 15.0, 1e-12);
    ASSERT_NEAR(t.step, 5.0, 1e-12);

    /* 0.3 / 0.1 is 2.9999999999999996: no extra tick below 0.1 or above 0.3. */
    eb_svg_nice_ticks(0.1, 0.3, 3, &t);
    ASSERT_NEAR(t.lo, 0.1, 1e-12);
    ASSERT_NEAR(t.hi, 0.3, 1e-12);
    ASSERT_EQ_INT(t.count, 3);

    /* Swapped bounds; big values. */
    eb_svg_nice_ticks(2600.0, 130.0, 7, &t);
    ASSERT_NEAR(t.lo, 0.0, 1e-9);
    ASSERT_NEAR(t.hi, 3000.0, 1e-9);
    ASSERT_NEAR(t.step, 500.0, 1e-9);
    /* At most max_ticks: with 6, 500 would need 7 ticks, so the step is 1000. */
    eb_svg_nice_ticks(130.0, 2600.0, 6, &t);
    ASSERT_NEAR(t.step, 1000.0, 1e-9);
    ASSERT_EQ_INT(t.count, 4);
    /* 0.5 .. 1.5 in 2 ticks: 0 and 2. */
    eb_svg_nice_ticks(0.5, 1.5, 2, &t);
    ASSERT_EQ_INT(t.count, 2);
    ASSERT_NEAR(t.lo, 0.0, 1e-12);
    ASSERT_NEAR(t.hi, 2.0, 1e-12);

    /* Every step is 1, 2 or 5 times a power of ten; the ticks cover the range. */
    unsigned seed = 12345;
    for (int i = 0; i < 2000; i++) {
        seed = seed * 1103515245u + 12345u;
        double a = ((double)(seed >> 8) / 16777216.0 - 0.5) * pow(10.0, (int)(seed % 13) - 6);
        seed = seed * 1103515245u + 12345u;
        double w = (double)(seed >> 8) / 16777216.0 * pow(10.0, (int)(seed % 11) - 5);
        int max_ticks = 2 + (int)(seed % 9);
        eb_svg_nice_ticks(a, a + w, max_ticks, &t);
        double m = t.step / pow(10.0, floor(log10(t.step)));
        if (!(fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 5) < 1e-9))
            EB_FAIL("step %g for [%g, %g] is not 1, 2 or 5 x 10^k", t.step, a, a + w);
        ASSERT_TRUE(t.lo <= a + t.step * 1e-6 && t.hi >= a + w - t.step * 1e-6);
        ASSERT_TRUE(t.count >= 2 && t.count <= max_ticks);
        /* ... and the next smaller nice step would need more ticks than allowed. */
        double smaller = fabs(m - 1) < 1e-9   ? t.step / 2
                         : fabs(m - 2) < 1e-9 ? t.step / 2
                                              : t.step * 0.4;
        double cnt = ceil((a + w) / smaller - 1e-9) - floor(a / smaller + 1e-9) + 1;
        ASSERT_TRUE(cnt > max_ticks || w <= fabs(a) * 1e-9); /* (tiny ranges are widened) */
        double k = t.lo / t.step;
        ASSERT_NEAR(k, round(k), 1e-6 + 1e-12 * fabs(k));
    }
}

EB_TEST(nice_ticks_degenerate_ranges)
{
    struct eb_svg_ticks t;
    eb_svg_nice_ticks(5.0, 5.0, 5, &t); /* one value: a range around it */
    ASSERT_TRUE(t.lo < 5.0 && t.hi > 5.0 && t.step > 0.0 && t.count >= 2);
    eb_svg_nice_ticks(0.0, 0.0, 5, &t); /* zero: from zero */
    ASSERT_NEAR(t.lo, 0.0, 1e-12);
    ASSERT_NEAR(t.hi, 1.0, 1e-12);
    eb_svg_nice_ticks(NAN, 3.0, 5, &t);
    ASSERT_NEAR(t.lo, 0.0, 1e-12);
    ASSERT_NEAR(t.hi, 1.0, 1e-12);
    eb_svg_nice_ticks(-INFINITY, INFINITY, 5, &t);
    ASSERT_NEAR(t.hi, 1.0, 1e-12);
    eb_svg_nice_ticks(1.0, 2.0, 0, &t); /* fewer than 2 ticks asked: 2 */
    ASSERT_TRUE(t.count >= 2);
    eb_svg_nice_ticks(-1e308, 1e308, 5, &t); /* no overflow */
    ASSERT_TRUE(isfinite(t.lo) && isfinite(t.hi) && isfinite(t.step));

    /* No "-0" label. */
    eb_svg_nice_ticks(-1.0, 1.0, 5, &t);
    char b[32];
    eb_svg_format_tick(-1.0 + 2.0 * t.step, &t, b, sizeof(b));
    ASSERT_STREQ(b, "0.0");
    eb_svg_format_tick(-1e-17, &t, b, sizeof(b));
    ASSERT_STREQ(b, "0.0");
}

/* ---------------------------------------------------------------------------- escaping */

EB_TEST(svg_escapes_text)
{
    struct capture c;
    FILE *fp = cap_open(&c);
    eb_svg_put_escaped(fp, "a<b & \"c\" 'd' > e\x01\t\xc3\xa9");
    char *s = cap_close(&c);
    ASSERT_STREQ(s, "a&lt;b &amp; &quot;c&quot; &#39;d&#39; &gt; e  \xc3\xa9");
    free(s);

    /* Invalid UTF-8: a stray byte, an overlong '/', a surrogate, a truncated sequence. */
    fp = cap_open(&c);
    eb_svg_put_escaped(fp, "x\xffy\xc0\xafz\xed\xa0\x80w\xe2\x82");
    eb_svg_put_escaped(fp, NULL);
    s = cap_close(&c);
    ASSERT_TRUE(strchr(s, '\xff') == NULL && strstr(s, "\xc0\xaf") == NULL);
    ASSERT_TRUE(strstr(s, "\xed\xa0\x80") == NULL);
    ASSERT_EQ_INT(count_of(s, "\xef\xbf\xbd"), 1 + 2 + 3 + 2);
    ASSERT_TRUE(s[0] == 'x' && strstr(s, "y") && strstr(s, "z") && strstr(s, "w"));
    free(s);

    /* Every text of a chart goes through it. */
    const char *evil = "<script>alert(\"x\")</script>&";
    double y[2] = {1.0, 2.0};
    const char *labels[2] = {evil, NULL};
    struct eb_svg_series ser = {.name = evil, .y = y, .labels = labels, .n = 2};
    struct eb_svg_ref ref = {.value = 1.5, .label = evil, .color = "red\"/><script>"};
    struct eb_svg_chart ch = {.id = "x\"y",
                              .title = evil,
                              .subtitle = evil,
                              .x_label = evil,
                              .y_label = evil,
                              .refs = &ref,
                              .n_refs = 1};
    fp = cap_open(&c);
    ASSERT_OK(eb_svg_line_chart(fp, &ch, &ser, 1));
    ASSERT_OK(eb_svg_scatter(fp, &ch, &ser, 1));
    const char *cats[1] = {evil};
    struct eb_svg_bar_series bs = {.name = evil, .values = y};
    struct eb_svg_bars bars = {.categories = cats, .n_categories = 1, .series = &bs, .n_series = 1};
    ASSERT_OK(eb_svg_bar_chart(fp, &ch, &bars));
    s = cap_close(&c);
    ASSERT_TRUE(strstr(s, "<script") == NULL);
    ASSERT_CONTAINS(s, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;");
    ASSERT_CONTAINS(s, "id=\"x&quot;y\"");
    assert_well_formed(s);
    free(s);
}

/* --------------------------------------------------------------------------- charts */

EB_TEST(svg_empty_data_set)
{
    struct eb_svg_chart ch = {.title = "Empty", .x_label = "x (s)", .y_label = "y (ms)"};
    struct capture c;
    FILE *fp = cap_open(&c);
    ASSERT_OK(eb_svg_line_chart(fp, &ch, NULL, 0));
    struct eb_svg_series none = {.name = "nothing", .y = NULL, .n = 0};
    ASSERT_OK(eb_svg_line_chart(fp, &ch, &none, 1));
    ASSERT_OK(eb_svg_histogram(fp, &ch, NULL, 0, 20, "h"));
    ASSERT_OK(eb_svg_cdf(fp, &ch, &none, 1));
    ASSERT_OK(eb_svg_scatter(fp, &ch, NULL, 0));
    ASSERT_OK(eb_svg_bar_chart(fp, &ch, NULL));
    struct eb_svg_bars empty = {0};
    ch.empty_note = "not measured";
    ASSERT_OK(eb_svg_bar_chart(fp, &ch, &empty));
    char *s = cap_close(&c);
    ASSERT_EQ_INT(count_of(s, "<svg "), 7);
    ASSERT_EQ_INT(count_of(s, "</svg>"), 7);
    ASSERT_EQ_INT(count_of(s, ">no data</text>"), 6);
    ASSERT_EQ_INT(count_of(s, ">not measured</text>"), 1);
    /* Axes are drawn all the same, with their labels. */
    ASSERT_EQ_INT(count_of(s, "class=\"y-axis\""), 7);
    ASSERT_EQ_INT(count_of(s, ">y (ms)</text>"), 7);
    ASSERT_TRUE(strstr(s, "class=\"series\"") == NULL);
    assert_well_formed(s);
    free(s);

    ASSERT_EQ_INT(eb_svg_line_chart(NULL, &ch, NULL, 0), EB_ERR_INVALID_ARG);
    ASSERT_EQ_INT(eb_svg_histogram(stdout, NULL, NULL, 0, 1, NULL), EB_ERR_INVALID_ARG);
}

EB_TEST(svg_skips_nan_and_inf)
{
    double x[6] = {0, 1, 2, 3, 4, 5};
    double y[6] = {1.0, NAN, 3.0, 4.0, INFINITY, 5.0};
    struct eb_svg_series s = {.name = "gappy", .x = x, .y = y, .n = 6};
    struct eb_svg_chart ch = {.title = "Gaps", .y_include_zero = 1};
    struct capture c;
    FILE *fp = cap_open(&c);
    ASSERT_OK(eb_svg_line_chart(fp, &ch, &s, 1));
    char *out = cap_close(&c);
    char *d = first_series_path(out);
    /* Three runs of finite points: [1], [3, 4], [5]. */
    ASSERT_EQ_INT(count_of(d, "M"), 3);
    ASSERT_EQ_INT(count_of(d, "L"), 1);
    free(d);
    assert_well_formed(out);
    free(out);

    /* A non-finite x is skipped too; dots. */
    double x2[3] = {-INFINITY, 1.0, NAN};
    double y2[3] = {1.0, 2.0, 3.0};
    struct eb_svg_series dots = {.name = "dots", .x = x2, .y = y2, .n = 3};
    fp = cap_open(&c);
    ASSERT_OK(eb_svg_scatter(fp, &ch, &dots, 1));
    out = cap_close(&c);
    ASSERT_EQ_INT(count_of(out, "</circle>"), 1);
    assert_well_formed(out);
    free(out);

    /* Histogram and CDF count only the finite values. */
    double v[7] = {1.0, 2.0, NAN, 2.5, INFINITY, -INFINITY, 3.0};
    fp = cap_open(&c);
    ASSERT_OK(eb_svg_histogram(fp, &ch, v, 7, 10, "values"));
    struct eb_svg_series cs = {.name = "cdf", .y = v, .n = 7};
    ASSERT_OK(eb_svg_cdf(fp, &ch, &cs, 1));
    out = cap_close(&c);
    ASSERT_CONTAINS(out, " of 4</title>");
    ASSERT_TRUE(strstr(out, " of 7</title>") == NULL);
    /* The CDF reaches 100% after the 4 finite values: 4 steps. */
    d = first_series_path(out);
    ASSERT_EQ_INT(count_of(d, "H"), 4);
    free(d);
    assert_well_formed(out);
    free(out);

    /* Bars: a NaN value draws no bar. */
    const char *cats[3] = {"a", "b", "c"};
    double bv[3] = {1.0, NAN, INFINITY};
    struct eb_svg_bar_series bs = {.name = "s", .values = bv};
    struct eb_svg_bars bars = {.categories = cats, .n_categories = 3, .series = &bs, .n_series = 1};
    fp = cap_open(&c);
    ASSERT_OK(eb_svg_bar_chart(fp, &ch, &bars));
    out = cap_close(&c);
    ASSERT_EQ_INT(count_of(out, "</title></rect>"), 1);
    assert_well_formed(out);
    free(out);
}

EB_TEST(svg_single_point)
{
    double x = 2.5, y = 7.0;
    struct eb_svg_series s = {.name = "one", .x = &x, .y = &y, .n = 1};
    struct eb_svg_chart ch = {.title = "One point", .x_label = "x", .y_label = "y"};
    struct capture c;
    FILE *fp = cap_open(&c);
    ASSERT_OK(eb_svg_line_chart(fp, &ch, &s, 1));
    char *out = cap_close(&c);
    char *d = first_series_path(out);
    ASSERT_EQ_INT(count_of(d, "M"), 1);
    ASSERT_EQ_INT(count_of(d, "L"), 0);
    free(d);
    ASSERT_TRUE(strstr(out, ">no data<") == NULL);
    /* The range is widened around the value: at least two y ticks. */
    const char *ya = strstr(out, "class=\"y-axis\"");
    const char *xa = strstr(out, "class=\"x-axis\"");
    ASSERT_TRUE(ya != NULL && xa != NULL && xa > ya);
    size_t n_text = 0;
    for (const char *p = strstr(ya, "<text"); p != NULL && p < xa; p = strstr(p + 1, "<text"))
        n_text++;
    ASSERT_TRUE(n_text >= 3); /* >= 2 tick labels and the axis label */
    assert_well_formed(out);
    free(out);

    fp = cap_open(&c);
    ASSERT_OK(eb_svg_histogram(fp, &ch, &y, 1, 20, NULL));
    struct eb_svg_series cs = {.name = "cdf", .y = &y, .n = 1};
    ASSERT_OK(eb_svg_cdf(fp, &ch, &cs, 1));
    ASSERT_OK(eb_svg_scatter(fp, &ch, &s, 1));
    out = cap_close(&c);
    ASSERT_EQ_INT(count_of(out, "of 1</title></rect>"), 1);
    ASSERT_EQ_INT(count_of(out, "</circle>"), 1);
    assert_well_formed(out);
    free(out);
}

EB_TEST(svg_line_chart_second_axis_and_refs)
{
    double t[4] = {0.0, 1.0, 2.0, 3.0};
    double lat[4] = {10.0, 11.0, 10.5, 12.0};
    double temp[4] = {45.0, 50.0, 55.0, 61.0};
    struct eb_svg_series s[2] = {
        {.name = "latency", .x = t, .y = lat, .n = 4},
        {.name = "GPU 0", .x = t, .y = temp, .n = 4, .right_axis = 1, .dashed = 1},
    };
    struct eb_svg_ref limit = {.value = 20.0, .label = "limit 20"};
    struct eb_svg_chart ch = {.id = "c1",
                              .title = "Latency and temperature",
                              .x_label = "time (s)",
                              .y_label = "latency (ms)",
                              .y2_label = "temperature (°C)",
                              .y_include_zero = 1,
                              .refs = &limit,
                              .n_refs = 1};
    struct capture c;
    FILE *fp = cap_open(&c);
    ASSERT_OK(eb_svg_line_chart(fp, &ch, s, 2));
    char *out = cap_close(&c);
    ASSERT_CONTAINS(out, "class=\"y2-axis\"");
    ASSERT_CONTAINS(out, ">temperature (°C)</text>");
    ASSERT_CONTAINS(out, "GPU 0 (right axis)");
    ASSERT_CONTAINS(out, "stroke-dasharray=\"5 3\"");
    ASSERT_CONTAINS(out, ">limit 20</text>");
    /* The reference widens the left axis to it: a tick at 20. */
    ASSERT_CONTAINS(out, "text-anchor=\"end\">20</text>");
    ASSERT_CONTAINS(out, "id=\"c1\"");
    assert_well_formed(out);
    free(out);

    /* Without a right-axis series there is no second axis. */
    fp = cap_open(&c);
    ASSERT_OK(eb_svg_line_chart(fp, &ch, s, 1));
    out = cap_close(&c);
    ASSERT_TRUE(strstr(out, "y2-axis") == NULL);
    ASSERT_TRUE(strstr(out, "right axis") == NULL);
    free(out);
}

/* The comparison sweep's charts, on crafted data: latency against mAP, bars per config. */
EB_TEST(svg_sweep_scatter_and_grouped_bars)
{
    const char *cfg[4] = {"yolo11n native fp32 640 cpu", "yolo11n native fp16 640 cuda",
                          "yolov8n ort int8 320 cpu", "a<b&c"};
    double p50[4] = {42.0, 1.9, 12.5, 30.0};
    double map[4] = {0.395, 0.393, 0.301, NAN};
    struct eb_svg_series pts = {
        .name = "configurations", .x = p50, .y = map, .labels = cfg, .n = 4};
    struct eb_svg_chart ch = {.id = "sweep-scatter",
                              .title = "Latency vs accuracy",
                              .x_label = "p50 latency (ms)",
                              .y_label = "mAP50-95",
                              .x_include_zero = 1};
    struct capture c;
    FILE *fp = cap_open(&c);
    ASSERT_OK(eb_svg_scatter(fp, &ch, &pts, 1));
    char *out = cap_close(&c);
    ASSERT_EQ_INT(count_of(out, "</circle>"), 3); /* the NaN mAP is skipped */
    ASSERT_CONTAINS(out, ">yolo11n native fp16 640 cuda</text>");
    ASSERT_TRUE(strstr(out, "a&lt;b&amp;c</text>") == NULL); /* its point is not drawn */
    ASSERT_TRUE(strstr(out, "class=\"series\" fill=") != NULL);
    assert_well_formed(out);
    free(out);

    double v50[4] = {42.0, 1.9, 12.5, 30.0}, v99[4] = {55.0, 2.4, NAN, 41.0};
    struct eb_svg_bar_series bs[2] = {{.name = "p50", .values = v50},
                                      {.name = "p99", .values = v99, .color = "#999"}};
    struct eb_svg_bars bars = {.categories = cfg, .n_categories = 4, .series = bs, .n_series = 2};
    ch = (struct eb_svg_chart){.id = "sweep-bars",
                               .title = "Latency per configuration",
                               .x_label = "configuration",
                               .y_label = "latency (ms)"};
    fp = cap_open(&c);
    ASSERT_OK(eb_svg_bar_chart(fp, &ch, &bars));
    bars.stacked = 1;
    ch.id = "sweep-stacked";
    ASSERT_OK(eb_svg_bar_chart(fp, &ch, &bars));
    out = cap_close(&c);
    ASSERT_EQ_INT(count_of(out, "</title></rect>"), 7 + 7);
    ASSERT_CONTAINS(out, "<title>p99, yolo11n native fp32 640 cpu: 55.0</title>");
    ASSERT_CONTAINS(out, "fill=\"#999\"");
    ASSERT_CONTAINS(out, "rotate(-30)"); /* long labels are slanted */
    ASSERT_CONTAINS(out, ">a&lt;b&amp;c</text>");
    assert_well_formed(out);
    free(out);

    /* Stacked: the second series sits on the first (its rect ends where the first starts). */
    double a[1] = {2.0}, b[1] = {3.0};
    const char *one[1] = {"x"};
    struct eb_svg_bar_series st[2] = {{.values = a}, {.values = b}}; /* no legend rects */
    struct eb_svg_bars sb = {
        .categories = one, .n_categories = 1, .series = st, .n_series = 2, .stacked = 1};
    fp = cap_open(&c);
    ASSERT_OK(eb_svg_bar_chart(fp, &(struct eb_svg_chart){.title = "s"}, &sb));
    out = cap_close(&c);
    double ya, ha, yb, hb;
    const char *r1 = strstr(out, "<rect x=");
    ASSERT_TRUE(r1 != NULL);
    ASSERT_EQ_INT(sscanf(strstr(r1, " y=\""), " y=\"%lf\" width=\"%*f\" height=\"%lf\"", &ya, &ha),
                  2);
    const char *r2 = strstr(r1 + 1, "<rect x=");
    ASSERT_TRUE(r2 != NULL);
    ASSERT_EQ_INT(sscanf(strstr(r2, " y=\""), " y=\"%lf\" width=\"%*f\" height=\"%lf\"", &yb, &hb),
                  2);
    ASSERT_NEAR(yb + hb, ya, 0.11);
    ASSERT_NEAR(hb / ha, 1.5, 0.02);
    free(out);
}

/* --------------------------------------------------------------------------- report.html */

#define GB 1000000000ull

static void fill_slot(struct eb_slot_result *s, size_t n, double base_ms, uint64_t t0)
{
    s->status = EB_SLOT_OK;
    snprintf(s->model_path, sizeof(s->model_path), "/models/<%s> & \"quoted\".onnx", s->name);
    snprintf(s->source, sizeof(s->source), "synthetic=640x480");
    snprintf(s->backend, sizeof(s->backend), "native");
    snprintf(s->device, sizeof(s->device), "cpu");
    snprintf(s->provider, sizeof(s->provider), "native-cpu");
    snprintf(s->input_dtype, sizeof(s->input_dtype), "float32");
    s->records = calloc(n, sizeof(*s->records));
    ASSERT_TRUE(s->records != NULL);
    s->n_records = n;
    double *vals[EB_STAGE_COUNT];
    for (int st = 0; st < EB_STAGE_COUNT; st++) {
        vals[st] = calloc(n, sizeof(double));
        ASSERT_TRUE(vals[st] != NULL);
    }
    uint64_t t = t0;
    for (size_t i = 0; i < n; i++) {
        struct eb_frame_record *rec = &s->records[i];
        rec->frame_index = (int64_t)i;
        rec->t_start_ns = t;
        rec->stage_ns[EB_STAGE_READ] = 1000000 + 10000 * (uint64_t)(i % 7);
        rec->stage_ns[EB_STAGE_PRE] = 2000000;
        rec->stage_ns[EB_STAGE_INFER] = (uint64_t)(base_ms * 1e6) + 50000 * (uint64_t)(i % 13);
        rec->stage_ns[EB_STAGE_POST] = 500000;
        rec->stage_ns[EB_STAGE_E2E] = rec->stage_ns[EB_STAGE_READ] + rec->stage_ns[EB_STAGE_PRE] +
                                      rec->stage_ns[EB_STAGE_INFER] + rec->stage_ns[EB_STAGE_POST];
        rec->mem_bytes = GB / 2 + 1000000 * (uint64_t)i;
        t += rec->stage_ns[EB_STAGE_E2E];
        for (int st = 0; st < EB_STAGE_COUNT; st++)
            vals[st][i] = (double)rec->stage_ns[st] / 1e6;
    }
    for (int st = 0; st < EB_STAGE_COUNT; st++) {
        eb_stat_summarize_ms(vals[st], n, &s->stages[st]);
        free(vals[st]);
    }
    s->frames_measured = n;
    s->wall_s = (double)(t - t0) / 1e9;
    s->throughput_fps = (double)n / s->wall_s;
    s->mem_peak_bytes = s->records[n - 1].mem_bytes;
}

static void build_result(struct eb_run_result *r, int thermal_ok)
{
    eb_run_result_init(r);
    r->version = "0.1.0";
    snprintf(r->mode, sizeof(r->mode), "dual");
    snprintf(r->started_at, sizeof(r->started_at), "2025-03-01T10:20:30Z");
    snprintf(r->command_line, sizeof(r->command_line), "edgebench run --model0 '<a>'");
    r->mem.limit_gb = 8.0;
    r->mem.limit_type = EB_LIMIT_HARD;
    snprintf(r->mem.monitored, sizeof(r->mem.monitored), "process RSS");
    r->sys.n_samples = 4;
    fill_slot(&r->slots[0], 3000, 20.0, 100000000000ull); /* t0 = 100 s */
    if (thermal_ok) {
        fill_slot(&r->slots[1], 200, 8.0, 100000000000ull + 5000000);
    } else {
        r->slots[1].status = EB_SLOT_FAILED;
        r->slots[1].error = EB_ERR_UNSUPPORTED;
        snprintf(r->slots[1].model_path, sizeof(r->slots[1].model_path), "/m/<thermal>.onnx");
        snprintf(r->slots[1].message, sizeof(r->slots[1].message),
                 "failed to load <model> & \"x\": node 3 (Foo) not supported");
    }
    r->pair.valid = thermal_ok;
    eb_run_result_warn(r, "a warning with <angle> & amp");
    r->criteria = (struct eb_validity_criteria){
        .min_frames = 200, .min_duration_s = 10.0, .max_cov_pct = 5.0};
    r->validity.evaluated = 1;
    r->validity.valid = 1;
    r->slots[0].validity.evaluated = 1;
    r->slots[0].validity.valid = 1;
    if (!thermal_ok) {
        eb_validity_add(&r->validity, "slot thermal: failed <early>");
        eb_validity_add(&r->slots[1].validity, "failed <early>");
    }
}

/* Sampler series over the run's clock: 100 s .. 170 s every 0.5 s. */
static void build_metrics(struct eb_report_metrics *m)
{
    eb_report_metrics_init(m);
    for (int i = 0; i < 140; i++) {
        ASSERT_OK(eb_report_metrics_append(m, 99.0 + 0.5 * i));
        ASSERT_OK(eb_report_metrics_set(m, EB_REPORT_TS_TEMP_C, "thermal zones (hottest)",
                                        40.0 + 0.1 * i));
        ASSERT_OK(eb_report_metrics_set(m, EB_REPORT_TS_TEMP_C, "GPU 0 (NVML)", 50.0 + 0.1 * i));
        ASSERT_OK(eb_report_metrics_set(m, EB_REPORT_TS_CLOCK_MHZ, "GPU 0 SM clock (NVML)",
                                        i % 10 == 0 ? NAN : 1980.0 - i));
        ASSERT_OK(eb_report_metrics_set(m, EB_REPORT_TS_POWER_W, "GPU 0 (NVML)", 120.0 + i));
        ASSERT_OK(eb_report_metrics_set(m, EB_REPORT_TS_MEM_GB, "GPU 0 memory used (NVML)",
                                        1.0 + 0.01 * i));
    }
}

static char *render_html(const struct eb_run_result *r, const struct eb_report_metrics *m)
{
    struct capture c;
    FILE *fp = cap_open(&c);
    eb_report_write_html(r, m, fp);
    ASSERT_TRUE(!ferror(fp));
    return cap_close(&c);
}

EB_TEST(html_contains_every_chart)
{
    struct eb_run_result r;
    build_result(&r, 1);
    struct eb_report_metrics m;
    build_metrics(&m);
    char *html = render_html(&r, &m);
    static const char *const ids[] = {
        "chart-stages",         "chart-latency-temperature",
        "chart-latency-clock",  "chart-latency-power",
        "chart-memory",         "chart-rgb-hist",
        "chart-rgb-cdf",        "chart-rgb-stages",
        "chart-thermal-hist",   "chart-thermal-cdf",
        "chart-thermal-stages",
    };
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        char needle[64];
        snprintf(needle, sizeof(needle), "id=\"%s\"", ids[i]);
        ASSERT_CONTAINS(html, needle);
    }
    ASSERT_EQ_INT(count_of(html, "<svg "), sizeof(ids) / sizeof(ids[0]));
    ASSERT_TRUE(strstr(html, "chart-latency-time") == NULL); /* the sampler measured */
    ASSERT_TRUE(strstr(html, "not measured") == NULL);
    /* Second axes with their units; the limit line; legends. */
    ASSERT_CONTAINS(html, ">temperature (°C)</text>");
    ASSERT_CONTAINS(html, ">GPU clock (MHz)</text>");
    ASSERT_CONTAINS(html, ">power (W)</text>");
    ASSERT_CONTAINS(html, ">limit 8.00 GB (hard)</text>");
    ASSERT_CONTAINS(html, "GPU 0 memory used (NVML)");
    ASSERT_CONTAINS(html, "rgb end-to-end latency");
    ASSERT_CONTAINS(html, "thermal end-to-end latency");
    /* 3000 rgb frames are drawn as 1500 points of two frames each. */
    ASSERT_CONTAINS(html, "each point: the mean of 2 consecutive frames");
    /* Self-contained: no script, nothing fetched; a policy that forbids both. */
    ASSERT_TRUE(strstr(html, "<script") == NULL);
    ASSERT_TRUE(strstr(html, "src=") == NULL);
    ASSERT_TRUE(strstr(html, "https:") == NULL);
    ASSERT_TRUE(strstr(html, "@import") == NULL && strstr(html, "url(") == NULL);
    ASSERT_CONTAINS(html, "Content-Security-Policy\" content=\"default-src 'none'");
    /* Tables and escaped text. */
    ASSERT_CONTAINS(html, "Memory Safety Summary");
    ASSERT_CONTAINS(html, "/models/&lt;rgb&gt; &amp; &quot;quoted&quot;.onnx");
    ASSERT_CONTAINS(html, "a warning with &lt;angle&gt; &amp; amp");
    ASSERT_CONTAINS(html, "Dual-stream pair");
    /* The verdict under the title, as in report.md; latency tables with their CIs. */
    ASSERT_CONTAINS(html, "<div class=\"verdict valid\">Verdict: <b>VALID</b>");
    ASSERT_CONTAINS(html, "at least 200 measured frames");
    ASSERT_CONTAINS(html, "<th>p50 95% CI</th>");
    char ci[96];
    snprintf(ci, sizeof(ci), "<td class=\"n\">[%.3f, %.3f]</td>",
             r.slots[0].stages[EB_STAGE_E2E].p50_ci.lo, r.slots[0].stages[EB_STAGE_E2E].p50_ci.hi);
    ASSERT_TRUE(r.slots[0].stages[EB_STAGE_E2E].p50_ci.available);
    ASSERT_CONTAINS(html, ci);
    ASSERT_TRUE(strstr(html, "<rgb>") == NULL);
    assert_well_formed(html);
    free(html);
    eb_report_metrics_fini(&m);
    eb_run_result_fini(&r);
}

EB_TEST(html_failed_and_skipped_slots)
{
    struct eb_run_result r;
    build_result(&r, 0);
    char *html = render_html(&r, NULL); /* and no sampler series at all */
    ASSERT_CONTAINS(html, "<section id=\"slot-1\">");
    ASSERT_CONTAINS(html, "class=\"st st-failed\"");
    ASSERT_CONTAINS(html, "failed to load &lt;model&gt; &amp; &quot;x&quot;: node 3 (Foo) not "
                          "supported (error: unsupported)");
    ASSERT_CONTAINS(html, "/m/&lt;thermal&gt;.onnx");
    ASSERT_CONTAINS(html, "<div class=\"verdict invalid\">Verdict: <b>INVALID</b>");
    ASSERT_CONTAINS(html, "<li>slot thermal: failed &lt;early&gt;</li>");
    ASSERT_CONTAINS(html, "<li>failed &lt;early&gt;</li>");
    ASSERT_TRUE(strstr(html, "chart-thermal-") == NULL);
    ASSERT_CONTAINS(html, "id=\"chart-rgb-hist\"");
    /* Nothing sampled: one latency chart without a second axis, and the page says so. */
    ASSERT_CONTAINS(html, "id=\"chart-latency-time\"");
    ASSERT_CONTAINS(html, "temperature, GPU clock, power: not measured");
    ASSERT_TRUE(strstr(html, "y2-axis") == NULL);
    assert_well_formed(html);
    free(html);
    eb_run_result_fini(&r);

    /* Nothing ran: both slots skipped; every run chart says so and the page is complete. */
    eb_run_result_init(&r);
    r.version = "0.1.0";
    r.mem.limit_gb = 8.0;
    struct eb_report_metrics m;
    build_metrics(&m);
    snprintf(m.note, sizeof(m.note), "ignored: there are samples");
    html = render_html(&r, &m);
    ASSERT_EQ_INT(count_of(html, "class=\"st st-skipped\""), 2 + 2); /* summary table + sections */
    ASSERT_EQ_INT(count_of(html, "no model given for this slot"), 4);
    ASSERT_CONTAINS(html, ">no slot measured frames</text>");
    ASSERT_EQ_INT(count_of(html, ">no measured frames</text>"), 2); /* latency, memory */
    ASSERT_EQ_INT(count_of(html, "<svg "), 3);
    ASSERT_CONTAINS(html, "</html>\n");
    assert_well_formed(html);
    free(html);
    eb_report_metrics_fini(&m);
    eb_run_result_fini(&r);
}

/* metrics.jsonl read back: the series, their units, and the clock alignment. */
EB_TEST(metrics_load_reads_series_and_aligns_clocks)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/metrics.jsonl", eb_test_tmpdir());
    FILE *fp = fopen(path, "w");
    ASSERT_TRUE(fp != NULL);
    fputs("{\"t_s\":0.5,\"wall\":\"2025-03-01T10:20:30.250Z\",\"temps_c\":{\"cpu\":41.5,"
          "\"acpitz\":27.8},\"gpus\":[{\"index\":0,\"temp_c\":55,\"power_mw\":150000,"
          "\"sm_clock_mhz\":1980,\"mem_used_mb\":1024}]}\n",
          fp);
    fputs("not json\n", fp);
    fputs("{\"wall\":\"2025-03-01T10:20:31.250Z\"}\n", fp); /* no t_s */
    fputs("{\"t_s\":1.5,\"wall\":\"2099-01-01T00:00:00.000Z\",\"temps_c\":{},\"gpus\":[{"
          "\"index\":0,\"temp_c\":null,\"power_mw\":151000,\"sm_clock_mhz\":1965,"
          "\"mem_used_mb\":2048}],\"tegrastats\":{\"gpu_freq_mhz\":624,\"power_total_mw\":"
          "7300,\"temps_c\":{\"gpu\":48.1,\"cpu\":47}}}\n",
          fp);
    ASSERT_TRUE(fclose(fp) == 0);

    /* The first wall time, 2025-03-01T10:20:30.250Z = 1740824430.25 s since the epoch, is
     * 1000 s on the monotonic clock: the clocks differ by 1740823430.25 s. */
    int64_t off = 1740823430250000000ll;
    struct eb_report_metrics m;
    eb_report_metrics_init(&m);
    struct eb_diag diag = {0};
    ASSERT_OK(eb_report_metrics_load(path, off, &m, &diag));
    ASSERT_EQ_INT(m.n, 2);
    ASSERT_EQ_INT(m.bad_lines, 2);
    ASSERT_NEAR(m.t_s[0], 1000.0, 1e-6);
    ASSERT_NEAR(m.t_s[1], 1001.0, 1e-6); /* t_s, not the later (odd) wall time */
    const char *want[] = {"thermal zones (hottest)",
                          "GPU 0 (NVML)",
                          "GPU 0 (NVML)",
                          "GPU 0 SM clock (NVML)",
                          "GPU 0 memory used (NVML)",
                          "GPU GR3D (tegrastats)",
                          "board input (tegrastats)",
                          "tegrastats sensors (hottest)"};
    enum eb_report_ts_kind kinds[] = {
        EB_REPORT_TS_TEMP_C, EB_REPORT_TS_TEMP_C,    EB_REPORT_TS_POWER_W, EB_REPORT_TS_CLOCK_MHZ,
        EB_REPORT_TS_MEM_GB, EB_REPORT_TS_CLOCK_MHZ, EB_REPORT_TS_POWER_W, EB_REPORT_TS_TEMP_C};
    double v0[] = {41.5, 55.0, 150.0, 1980.0, 1.073741824, NAN, NAN, NAN};
    double v1[] = {NAN, NAN, 151.0, 1965.0, 2.147483648, 624.0, 7.3, 48.1};
    ASSERT_EQ_INT(m.n_ts, 8);
    for (size_t k = 0; k < m.n_ts; k++) {
        ASSERT_STREQ(m.ts[k].name, want[k]);
        ASSERT_EQ_INT(m.ts[k].kind, kinds[k]);
        if (isnan(v0[k]))
            ASSERT_TRUE(isnan(m.ts[k].v[0]));
        else
            ASSERT_NEAR(m.ts[k].v[0], v0[k], 1e-9);
        if (isnan(v1[k]))
            ASSERT_TRUE(isnan(m.ts[k].v[1]));
        else
            ASSERT_NEAR(m.ts[k].v[1], v1[k], 1e-9);
    }
    eb_report_metrics_fini(&m);
    eb_report_metrics_fini(NULL);

    snprintf(path, sizeof(path), "%s/no-such.jsonl", eb_test_tmpdir());
    eb_report_metrics_init(&m);
    ASSERT_EQ_INT(eb_report_metrics_load(path, 0, &m, &diag), EB_ERR_IO);
    ASSERT_CONTAINS(diag.msg, "no-such.jsonl");
    eb_report_metrics_fini(&m);
}

EB_TEST(metrics_series_limits)
{
    struct eb_report_metrics m;
    eb_report_metrics_init(&m);
    ASSERT_OK(eb_report_metrics_set(&m, EB_REPORT_TS_TEMP_C, "x", 1.0)); /* no sample: dropped */
    ASSERT_EQ_INT(m.n_ts, 0);
    ASSERT_OK(eb_report_metrics_append(&m, 0.0));
    char name[64];
    for (int k = 0; k < EB_REPORT_TS_MAX + 5; k++) {
        snprintf(name, sizeof(name), "s%d", k);
        ASSERT_OK(eb_report_metrics_set(&m, EB_REPORT_TS_POWER_W, name, k));
    }
    ASSERT_EQ_INT(m.n_ts, EB_REPORT_TS_MAX);
    /* Growing keeps every series as long as the samples. */
    for (int i = 1; i < 600; i++)
        ASSERT_OK(eb_report_metrics_append(&m, i));
    ASSERT_EQ_INT(m.n, 600);
    ASSERT_NEAR(m.t_s[599], 599.0, 0);
    ASSERT_TRUE(isnan(m.ts[EB_REPORT_TS_MAX - 1].v[599]));
    ASSERT_NEAR(m.ts[EB_REPORT_TS_MAX - 1].v[0], EB_REPORT_TS_MAX - 1, 0);
    eb_report_metrics_fini(&m);
    eb_report_metrics_init(&m);
    ASSERT_OK(eb_report_metrics_append(&m, 0.0));
    ASSERT_OK(eb_report_metrics_append(&m, 1.0));
    ASSERT_OK(eb_report_metrics_set(&m, EB_REPORT_TS_MEM_GB, "late", 3.0));
    ASSERT_TRUE(isnan(m.ts[0].v[0]));
    ASSERT_NEAR(m.ts[0].v[1], 3.0, 0);
    eb_report_metrics_fini(&m);
}

/* The files writer adds report.html beside report.json and report.md, with metrics.jsonl. */
EB_TEST(write_files_writes_html)
{
    struct eb_run_result r;
    build_result(&r, 1);
    const char *dir = eb_test_tmpdir();
    snprintf(r.output_dir, sizeof(r.output_dir), "%s", dir);
    struct eb_diag diag = {0};
    ASSERT_OK(eb_report_write_files(&r, dir, &diag));
    char path[1024];
    snprintf(path, sizeof(path), "%s/report.html", dir);
    size_t len = 0;
    char *text = eb_test_read_file(path, &len);
    ASSERT_TRUE(text != NULL && len > 0);
    ASSERT_CONTAINS(text, "<!DOCTYPE html>");
    /* No metrics.jsonl in this folder: the page says why there are no sampler series. */
    ASSERT_CONTAINS(text, "No sampler series: cannot read ");
    ASSERT_CONTAINS(text, "id=\"chart-latency-time\"");
    assert_well_formed(text);
    free(text);
    eb_run_result_fini(&r);
}

EB_TEST(html_marks_the_throttling_onset_on_the_latency_chart)
{
    /* Soak runs: a latency change-point found by report_throttle.c is drawn on the latency over
     * time chart (a vertical line, its legend saying when and how much). */
    struct eb_run_result r;
    build_result(&r, 1);
    r.slots[0].series_t0_ns = 100000000000ull;
    r.slots[0].throttle = (struct eb_throttle_onset){.checked = 1,
                                                     .found = 1,
                                                     .t_s = 12.0,
                                                     .latency_before_ms = 20.0,
                                                     .latency_after_ms = 26.0,
                                                     .coincides = 1};
    struct eb_report_metrics m;
    build_metrics(&m);
    char *html = render_html(&r, &m);
    ASSERT_CONTAINS(html, "rgb throttling onset at 12 s: 20.00 -");
    ASSERT_CONTAINS(html, "(with a clock/temperature change)");
    free(html);
    eb_report_metrics_fini(&m);
    eb_run_result_fini(&r);
}
