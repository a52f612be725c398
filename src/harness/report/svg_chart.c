/*
 * SVG charts (svg_chart.h). Layout in pixels of the viewBox: a header (title, subtitle, legend
 * rows), the plot area with its axes, tick labels and axis labels around it. Text widths are
 * estimated from the number of characters (no font metrics without a browser), generously, so
 * that labels do not collide with the plot in any common sans-serif font.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb/utf8.h"
#include "harness/report/svg_chart.h"

#define DEFAULT_W   640
#define DEFAULT_H   320
#define FONT_PX     11.0
#define CHAR_PX     6.4 /* estimated advance of one character at FONT_PX */
#define MARGIN      12.0
#define LEGEND_ROW  16.0
#define MAX_LEGEND  32 /* series past this are drawn but not listed */
#define MAX_BINS    100
#define CDF_MAX_PTS 2000
#define TIP_MAX_PTS 500 /* dots of series up to this size get a tooltip each */
#define LABEL_CHARS 28  /* slanted category labels longer than this are shortened */

static const char *const palette[] = {
    "#0072B2", /* blue */
    "#E69F00", /* orange */
    "#009E73", /* bluish green */
    "#D55E00", /* vermillion */
    "#CC79A7", /* reddish purple */
    "#56B4E9", /* sky blue */
    "#8C6D31", /* brown */
    "#444444", /* dark grey */
};

const char *eb_svg_palette(size_t i)
{
    return palette[i % (sizeof(palette) / sizeof(palette[0]))];
}

/* ------------------------------------------------------------------------------------ text */

/* Writes at most `max_chars` characters of s escaped (max_chars 0 = all), then "…" if cut. */
static void put_escaped_n(FILE *fp, const char *s, size_t max_chars)
{
    if (s == NULL)
        return;
    const unsigned char *p = (const unsigned char *)s;
    size_t chars = 0;
    while (*p != '\0') {
        if (max_chars > 0 && chars == max_chars) {
            fputs("…", fp);
            return;
        }
        chars++;
        unsigned c = *p;
        if (c < 0x80) {
            switch (c) {
            case '&': fputs("&amp;", fp); break;
            case '<': fputs("&lt;", fp); break;
            case '>': fputs("&gt;", fp); break;
            case '"': fputs("&quot;", fp); break;
            case '\'': fputs("&#39;", fp); break;
            default: fputc(c < 0x20 || c == 0x7F ? ' ' : (int)c, fp); break;
            }
            p++;
            continue;
        }
        size_t len = eb_utf8_seq_len(p);
        if (len == 0) {
            fputs("\xEF\xBF\xBD", fp); /* U+FFFD REPLACEMENT CHARACTER */
            p++;
            continue;
        }
        fwrite(p, 1, len, fp);
        p += len;
    }
}

void eb_svg_put_escaped(FILE *fp, const char *s)
{
    put_escaped_n(fp, s, 0);
}

/* Characters of s (UTF-8 lead bytes); NULL counts 0. */
static size_t text_chars(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; p != NULL && *p != '\0'; p++)
        n += (*p & 0xC0) != 0x80;
    return n;
}

static double text_px(const char *s)
{
    return (double)text_chars(s) * CHAR_PX;
}

static int has_text(const char *s)
{
    return s != NULL && s[0] != '\0';
}

/* ----------------------------------------------------------------------------------- ticks */

/* The smallest 1, 2 or 5 x 10^k that is at least x (x > 0). */
static double nice_ceil(double x)
{
    double p = pow(10.0, floor(log10(x)));
    double f = x / p;
    /* The tolerance keeps 0.1 / 0.1 from becoming 1.0000000000000002 and so 2. */
    return (f <= 1.0 + 1e-9 ? 1.0 : f <= 2.0 + 1e-9 ? 2.0 : f <= 5.0 + 1e-9 ? 5.0 : 10.0) * p;
}

/* The next step of the 1, 2, 5 sequence after `step`. */
static double nice_next(double step)
{
    double p = pow(10.0, floor(log10(step) + 1e-9));
    double f = step / p;
    return (f < 1.5 ? 2.0 : f < 3.5 ? 5.0 : 10.0) * p;
}

void eb_svg_nice_ticks(double lo, double hi, int max_ticks, struct eb_svg_ticks *out)
{
    if (!isfinite(lo) || !isfinite(hi)) {
        lo = 0.0;
        hi = 1.0;
    }
    if (lo > hi) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    /* Far from any chart's values, but keeps hi - lo finite. */
    lo = lo < -1e300 ? -1e300 : lo;
    hi = hi > 1e300 ? 1e300 : hi;
    if (max_ticks < 2)
        max_ticks = 2;
    double mag = fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi);
    if (hi - lo <= mag * 1e-12 || hi - lo < 1e-300) {
        /* One value: a range around it (from 0 when it is 0, so 0 stays the axis origin). */
        if (mag < 1e-300) {
            lo = 0.0;
            hi = 1.0;
        } else {
            double d = mag * 0.1;
            lo -= d;
            hi += d;
        }
    }
    /* The smallest nice step whose ticks, rounded outwards, are at most max_ticks. */
    double step = nice_ceil((hi - lo) / (double)(max_ticks - 1));
    double first, last;
    int count;
    for (;;) {
        /* The epsilon keeps 0.3 / 0.1 = 2.9999999999999996 from adding a tick below 0.3. */
        first = floor(lo / step + 1e-9) * step;
        last = ceil(hi / step - 1e-9) * step;
        count = (int)llround((last - first) / step) + 1;
        if (count <= max_ticks)
            break;
        step = nice_next(step);
    }
    out->lo = first;
    out->hi = last;
    out->step = step;
    out->count = count;
    if (mag >= 1e9 || step < 1e-9)
        out->decimals = -1; /* %g */
    else
        out->decimals = step >= 1.0 ? 0 : (int)ceil(-log10(step) - 1e-9);
}

void eb_svg_format_tick(double v, const struct eb_svg_ticks *t, char *buf, size_t buf_size)
{
    if (fabs(v) < t->step * 1e-6)
        v = 0.0; /* no "-0" */
    if (t->decimals < 0)
        snprintf(buf, buf_size, "%.6g", v);
    else
        snprintf(buf, buf_size, "%.*f", t->decimals, v);
}

/* Integer ticks from 0 (counts): a step of at least 1. */
static void count_ticks(double max_count, int max_ticks, struct eb_svg_ticks *t)
{
    eb_svg_nice_ticks(0.0, max_count > 1.0 ? max_count : 1.0, max_ticks, t);
    if (t->step < 1.0) {
        t->step = 1.0;
        t->lo = 0.0;
        t->hi = ceil(max_count > 1.0 ? max_count : 1.0);
        t->count = (int)t->hi + 1;
    }
    t->decimals = 0;
}

/* Widest tick label of `t`, in px. */
static double ticks_px(const struct eb_svg_ticks *t)
{
    double w = 0.0;
    char b[64];
    for (int i = 0; i < t->count; i++) {
        eb_svg_format_tick(t->lo + i * t->step, t, b, sizeof(b));
        double px = text_px(b);
        w = px > w ? px : w;
    }
    return w;
}

/* ---------------------------------------------------------------------------------- layout */

struct range {
    double lo, hi;
    int any; /* a value has been added */
};

static void range_add(struct range *r, double v)
{
    if (!isfinite(v))
        return;
    if (!r->any) {
        r->lo = r->hi = v;
        r->any = 1;
        return;
    }
    r->lo = v < r->lo ? v : r->lo;
    r->hi = v > r->hi ? v : r->hi;
}

struct scale {
    double d0, d1; /* domain */
    double r0, r1; /* pixels */
};

static double map(const struct scale *s, double v)
{
    double span = s->d1 - s->d0;
    return s->r0 + (span != 0.0 ? (v - s->d0) / span : 0.5) * (s->r1 - s->r0);
}

enum legend_kind { LEGEND_LINE, LEGEND_RECT, LEGEND_DOT };

struct legend_item {
    const char *name;
    const char *suffix; /* appended, e.g. " (right axis)" */
    const char *color;
    enum legend_kind kind;
    int dashed;
};

struct layout {
    double w, h;
    double pl, pr, pt, pb; /* plot area: left, right, top, bottom */
};

static double legend_item_px(const struct legend_item *it)
{
    return 22.0 + text_px(it->name) + text_px(it->suffix) + 14.0;
}

static int legend_rows(double w, const struct legend_item *items, size_t n)
{
    if (n == 0)
        return 0;
    int rows = 1;
    double x = MARGIN;
    for (size_t i = 0; i < n; i++) {
        double iw = legend_item_px(&items[i]);
        if (x + iw > w - MARGIN && x > MARGIN) {
            rows++;
            x = MARGIN;
        }
        x += iw;
    }
    return rows;
}

static void write_legend(FILE *fp, double w, double y0, const struct legend_item *items, size_t n)
{
    double x = MARGIN, y = y0;
    if (n == 0)
        return;
    fputs("<g class=\"legend\">", fp);
    for (size_t i = 0; i < n; i++) {
        const struct legend_item *it = &items[i];
        double iw = legend_item_px(it);
        if (x + iw > w - MARGIN && x > MARGIN) {
            x = MARGIN;
            y += LEGEND_ROW;
        }
        fputs("<g>", fp);
        if (it->kind == LEGEND_RECT)
            fprintf(fp, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"9\" fill=\"", x,
                    y - 8.0);
        else if (it->kind == LEGEND_DOT)
            fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"", x + 7.0, y - 3.5);
        if (it->kind != LEGEND_LINE) {
            eb_svg_put_escaped(fp, it->color);
            fputs("\"/>", fp);
        } else {
            fprintf(fp,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke-width=\"2\"%s", x,
                    y - 3.5, x + 16.0, y - 3.5,
                    it->dashed ? " stroke-dasharray=\"5 3\" stroke=\"" : " stroke=\"");
            eb_svg_put_escaped(fp, it->color);
            fputs("\"/>", fp);
        }
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\">", x + 22.0, y);
        eb_svg_put_escaped(fp, it->name);
        eb_svg_put_escaped(fp, it->suffix);
        fputs("</text></g>", fp);
        x += iw;
    }
    fputs("</g>\n", fp);
}

/*
 * Opens the <svg>, writes the background, title, subtitle and legend, and sets the header and
 * footer parts of the layout (pt, pb; pl and pr are set by the caller once the tick labels are
 * known). `extra_bottom` is room for slanted category labels.
 */
static void begin_svg(FILE *fp, const struct eb_svg_chart *c, const struct legend_item *items,
                      size_t n_items, double extra_bottom, struct layout *L)
{
    int w = c->width > 0 ? c->width : DEFAULT_W;
    int h = c->height > 0 ? c->height : DEFAULT_H;
    w = w < 200 ? 200 : w > 4000 ? 4000 : w;
    h = h < 150 ? 150 : h > 4000 ? 4000 : h;
    L->w = w;
    L->h = h;

    fputs("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"eb-chart\"", fp);
    if (has_text(c->id)) {
        fputs(" id=\"", fp);
        eb_svg_put_escaped(fp, c->id);
        fputc('"', fp);
    }
    fprintf(fp,
            " viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
            "font-family=\"sans-serif\" font-size=\"%g\" fill=\"#222\"",
            w, h, w, h, FONT_PX);
    if (has_text(c->title)) {
        fputs(" aria-label=\"", fp);
        eb_svg_put_escaped(fp, c->title);
        fputc('"', fp);
    }
    fputs(">\n", fp);
    fprintf(fp, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", w, h);

    double y = 8.0;
    if (has_text(c->title)) {
        y += 15.0;
        fprintf(fp,
                "<text class=\"title\" x=\"%.1f\" y=\"%.1f\" font-size=\"14\" "
                "font-weight=\"bold\">",
                MARGIN, y);
        eb_svg_put_escaped(fp, c->title);
        fputs("</text>\n", fp);
    }
    if (has_text(c->subtitle)) {
        y += 15.0;
        fprintf(fp, "<text class=\"subtitle\" x=\"%.1f\" y=\"%.1f\" fill=\"#555\">", MARGIN, y);
        eb_svg_put_escaped(fp, c->subtitle);
        fputs("</text>\n", fp);
    }
    int rows = legend_rows(L->w, items, n_items);
    if (rows > 0) {
        write_legend(fp, L->w, y + LEGEND_ROW, items, n_items);
        y += LEGEND_ROW * rows;
    }
    L->pt = y + 14.0;
    L->pb = L->h - 40.0 - extra_bottom;
    if (L->pb < L->pt + 40.0) /* tiny charts: keep some plot */
        L->pb = L->pt + 40.0;
}

/* Left and right plot edges from the widest tick labels of the y axes (t2 may be NULL). */
static void set_sides(const struct eb_svg_chart *c, const struct eb_svg_ticks *t1,
                      const struct eb_svg_ticks *t2, struct layout *L)
{
    L->pl = MARGIN + (has_text(c->y_label) ? 16.0 : 0.0) + ticks_px(t1) + 8.0;
    if (t2 != NULL)
        L->pr = L->w - (MARGIN + (has_text(c->y2_label) ? 16.0 : 0.0) + ticks_px(t2) + 8.0);
    else
        L->pr = L->w - 20.0; /* room for half of the last x tick label */
    if (L->pr < L->pl + 40.0)
        L->pr = L->pl + 40.0;
}

static int y_max_ticks(const struct layout *L)
{
    int n = (int)((L->pb - L->pt) / 36.0) + 1;
    return n < 3 ? 3 : n;
}

static int x_max_ticks(const struct layout *L)
{
    int n = (int)((L->pr - L->pl) / 80.0) + 1;
    return n < 3 ? 3 : n;
}

/* Gridlines and tick labels of a y axis (right: on the right side, no gridlines). */
static void write_y_axis(FILE *fp, const struct layout *L, const struct eb_svg_ticks *t,
                         const struct scale *s, int right, const char *label)
{
    char b[64];
    fprintf(fp, "<g class=\"%s\">", right ? "y2-axis" : "y-axis");
    for (int i = 0; i < t->count; i++) {
        double v = t->lo + i * t->step;
        double py = map(s, v);
        if (!right)
            fprintf(fp,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>",
                    L->pl, py, L->pr, py);
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>",
                right ? L->pr : L->pl - 4.0, py, right ? L->pr + 4.0 : L->pl, py);
        eb_svg_format_tick(v, t, b, sizeof(b));
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>",
                right ? L->pr + 7.0 : L->pl - 7.0, py + 4.0, right ? "start" : "end", b);
    }
    fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>",
            right ? L->pr : L->pl, L->pt, right ? L->pr : L->pl, L->pb);
    if (has_text(label)) {
        double x = right ? L->w - MARGIN - 4.0 : MARGIN + 8.0;
        double y = (L->pt + L->pb) / 2.0;
        fprintf(fp,
                "<text class=\"axis-label\" transform=\"translate(%.1f,%.1f) rotate(%d)\" "
                "text-anchor=\"middle\">",
                x, y, right ? 90 : -90);
        eb_svg_put_escaped(fp, label);
        fputs("</text>", fp);
    }
    fputs("</g>\n", fp);
}

static void write_x_label(FILE *fp, const struct layout *L, const char *label)
{
    if (!has_text(label))
        return;
    fprintf(fp, "<text class=\"axis-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
            (L->pl + L->pr) / 2.0, L->h - 10.0);
    eb_svg_put_escaped(fp, label);
    fputs("</text>\n", fp);
}

/* Numeric x axis: ticks, labels, the axis line and its label. */
static void write_x_axis(FILE *fp, const struct layout *L, const struct eb_svg_ticks *t,
                         const struct scale *s, const char *label)
{
    char b[64];
    fputs("<g class=\"x-axis\">", fp);
    for (int i = 0; i < t->count; i++) {
        double v = t->lo + i * t->step;
        double px = map(s, v);
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>", px,
                L->pb, px, L->pb + 4.0);
        eb_svg_format_tick(v, t, b, sizeof(b));
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>", px,
                L->pb + 16.0, b);
    }
    fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>", L->pl,
            L->pb, L->pr, L->pb);
    fputs("</g>\n", fp);
    write_x_label(fp, L, label);
}

static void write_refs(FILE *fp, const struct eb_svg_chart *c, const struct layout *L,
                       const struct scale *sx, const struct scale *sy)
{
    for (size_t i = 0; c->refs != NULL && i < c->n_refs; i++) {
        const struct eb_svg_ref *r = &c->refs[i];
        if (!isfinite(r->value))
            continue;
        const char *color = r->color != NULL ? r->color : "#B00020";
        fputs("<g class=\"ref\"><line ", fp);
        if (r->vertical) {
            double px = map(sx, r->value);
            fprintf(fp, "x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"", px, L->pt, px, L->pb);
        } else {
            double py = map(sy, r->value);
            fprintf(fp, "x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"", L->pl, py, L->pr, py);
        }
        fputs(" stroke-width=\"1.5\" stroke-dasharray=\"6 4\" stroke=\"", fp);
        eb_svg_put_escaped(fp, color);
        fputs("\"/>", fp);
        if (has_text(r->label)) {
            /* A white halo keeps the label readable over bars and lines; a vertical line's
             * label sits on the side with more room, alternating rows so two do not collide. */
            if (r->vertical) {
                double px = map(sx, r->value);
                int left = px > (L->pl + L->pr) / 2.0;
                fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"",
                        left ? px - 3.0 : px + 3.0, L->pt + 10.0 + 12.0 * (double)(i % 2),
                        left ? "end" : "start");
            } else {
                fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\"", L->pr - 3.0,
                        map(sy, r->value) - 4.0);
            }
            fputs(" font-size=\"10\" stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\" "
                  "fill=\"",
                  fp);
            eb_svg_put_escaped(fp, color);
            fputs("\">", fp);
            eb_svg_put_escaped(fp, r->label);
            fputs("</text>", fp);
        }
        fputs("</g>\n", fp);
    }
}

static void write_empty_note(FILE *fp, const struct eb_svg_chart *c, const struct layout *L)
{
    fprintf(fp,
            "<text class=\"empty\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#777\" "
            "font-size=\"13\">",
            (L->pl + L->pr) / 2.0, (L->pt + L->pb) / 2.0);
    eb_svg_put_escaped(fp, has_text(c->empty_note) ? c->empty_note : "no data");
    fputs("</text>\n", fp);
}

static enum eb_status end_svg(FILE *fp)
{
    fputs("</svg>\n", fp);
    return ferror(fp) ? EB_ERR_IO : EB_OK;
}

static void ref_ranges(const struct eb_svg_chart *c, struct range *rx, struct range *ry)
{
    for (size_t i = 0; c->refs != NULL && i < c->n_refs; i++)
        range_add(c->refs[i].vertical ? rx : ry, c->refs[i].value);
}

/* Ticks over a range (or 0..1 without values), widened to 0 when asked. */
static void range_ticks(struct range r, int include_zero, int max_ticks, struct eb_svg_ticks *t)
{
    if (include_zero)
        range_add(&r, 0.0);
    if (!r.any) {
        r.lo = 0.0;
        r.hi = 1.0;
    }
    eb_svg_nice_ticks(r.lo, r.hi, max_ticks, t);
}

/* --------------------------------------------------------------------------- line charts */

static double series_x(const struct eb_svg_series *s, size_t i)
{
    return s->x != NULL ? s->x[i] : (double)i;
}

static void write_series(FILE *fp, const struct eb_svg_series *s, const char *color,
                         const struct scale *sx, const struct scale *sy)
{
    if (s->y == NULL || s->n == 0)
        return;
    if (s->mark != EB_SVG_MARK_POINTS) {
        fputs("<path class=\"series\" fill=\"none\" stroke-width=\"1.5\" stroke-linejoin=\"round\"",
              fp);
        if (s->dashed)
            fputs(" stroke-dasharray=\"5 3\"", fp);
        fputs(" stroke=\"", fp);
        eb_svg_put_escaped(fp, color);
        fputs("\" d=\"", fp);
        int pen_down = 0;
        for (size_t i = 0; i < s->n; i++) {
            double x = series_x(s, i), y = s->y[i];
            if (!isfinite(x) || !isfinite(y)) {
                pen_down = 0; /* a gap: the line breaks */
                continue;
            }
            double px = map(sx, x), py = map(sy, y);
            if (!pen_down)
                fprintf(fp, "M%.1f %.1f", px, py);
            else if (s->mark == EB_SVG_MARK_STEP)
                fprintf(fp, "H%.1fV%.1f", px, py);
            else
                fprintf(fp, "L%.1f %.1f", px, py);
            pen_down = 1;
        }
        fputs("\"/>\n", fp);
    } else {
        fputs("<g class=\"series\" fill=\"", fp);
        eb_svg_put_escaped(fp, color);
        fputs("\">", fp);
        for (size_t i = 0; i < s->n; i++) {
            double x = series_x(s, i), y = s->y[i];
            if (!isfinite(x) || !isfinite(y))
                continue;
            fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\">", map(sx, x), map(sy, y));
            if (s->n <= TIP_MAX_PTS) {
                fputs("<title>", fp);
                if (s->labels != NULL && s->labels[i] != NULL)
                    eb_svg_put_escaped(fp, s->labels[i]);
                else
                    eb_svg_put_escaped(fp, s->name);
                fprintf(fp, ": x %.6g, y %.6g</title>", x, y);
            }
            fputs("</circle>", fp);
        }
        fputs("</g>\n", fp);
    }
    if (s->labels != NULL) {
        fputs("<g class=\"point-labels\" font-size=\"10\">", fp);
        for (size_t i = 0; i < s->n; i++) {
            double x = series_x(s, i), y = s->y[i];
            if (!isfinite(x) || !isfinite(y) || !has_text(s->labels[i]))
                continue;
            /* Labels of points near the right edge go to their left. */
            double px = map(sx, x);
            int left = px > sx->r0 + 0.75 * (sx->r1 - sx->r0);
            fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\"%s>", left ? px - 6.0 : px + 6.0,
                    map(sy, y) - 6.0, left ? " text-anchor=\"end\"" : "");
            eb_svg_put_escaped(fp, s->labels[i]);
            fputs("</text>", fp);
        }
        fputs("</g>\n", fp);
    }
}

enum eb_status eb_svg_line_chart(FILE *fp, const struct eb_svg_chart *c,
                                 const struct eb_svg_series *series, size_t n_series)
{
    if (fp == NULL || c == NULL)
        return EB_ERR_INVALID_ARG;
    if (series == NULL)
        n_series = 0;
    struct range rx = {0}, ry = {0}, ry2 = {0};
    for (size_t k = 0; k < n_series; k++) {
        const struct eb_svg_series *s = &series[k];
        for (size_t i = 0; s->y != NULL && i < s->n; i++) {
            double x = series_x(s, i), y = s->y[i];
            if (!isfinite(x) || !isfinite(y))
                continue;
            range_add(&rx, x);
            range_add(s->right_axis ? &ry2 : &ry, y);
        }
    }
    int any_data = rx.any;
    int right = ry2.any;
    ref_ranges(c, &rx, &ry);

    struct legend_item items[MAX_LEGEND];
    size_t n_items = 0;
    for (size_t k = 0; k < n_series && n_items < MAX_LEGEND; k++) {
        if (!has_text(series[k].name))
            continue;
        items[n_items++] = (struct legend_item){
            .name = series[k].name,
            .suffix = series[k].right_axis && right ? " (right axis)" : "",
            .color = series[k].color != NULL ? series[k].color : eb_svg_palette(k),
            .kind = series[k].mark == EB_SVG_MARK_POINTS ? LEGEND_DOT : LEGEND_LINE,
            .dashed = series[k].dashed,
        };
    }
    struct layout L;
    begin_svg(fp, c, items, n_items, 0.0, &L);
    struct eb_svg_ticks ty, ty2, tx;
    range_ticks(ry, c->y_include_zero, y_max_ticks(&L), &ty);
    if (right)
        range_ticks(ry2, c->y2_include_zero, y_max_ticks(&L), &ty2);
    set_sides(c, &ty, right ? &ty2 : NULL, &L);
    range_ticks(rx, c->x_include_zero, x_max_ticks(&L), &tx);

    struct scale sx = {tx.lo, tx.hi, L.pl, L.pr};
    struct scale sy = {ty.lo, ty.hi, L.pb, L.pt};
    struct scale sy2 = {right ? ty2.lo : 0.0, right ? ty2.hi : 1.0, L.pb, L.pt};
    write_y_axis(fp, &L, &ty, &sy, 0, c->y_label);
    if (right)
        write_y_axis(fp, &L, &ty2, &sy2, 1, c->y2_label);
    write_x_axis(fp, &L, &tx, &sx, c->x_label);
    for (size_t k = 0; k < n_series; k++) {
        const struct eb_svg_series *s = &series[k];
        write_series(fp, s, s->color != NULL ? s->color : eb_svg_palette(k), &sx,
                     s->right_axis ? &sy2 : &sy);
    }
    write_refs(fp, c, &L, &sx, &sy);
    if (!any_data)
        write_empty_note(fp, c, &L);
    return end_svg(fp);
}

enum eb_status eb_svg_scatter(FILE *fp, const struct eb_svg_chart *c,
                              const struct eb_svg_series *series, size_t n_series)
{
    if (fp == NULL || c == NULL)
        return EB_ERR_INVALID_ARG;
    struct eb_svg_series dots[MAX_LEGEND];
    if (series == NULL)
        n_series = 0;
    if (n_series > MAX_LEGEND)
        n_series = MAX_LEGEND;
    for (size_t k = 0; k < n_series; k++) {
        dots[k] = series[k];
        dots[k].mark = EB_SVG_MARK_POINTS;
        if (dots[k].color == NULL)
            dots[k].color = eb_svg_palette(k);
    }
    return eb_svg_line_chart(fp, c, dots, n_series);
}

/* ------------------------------------------------------------------------------ histogram */

enum eb_status eb_svg_histogram(FILE *fp, const struct eb_svg_chart *c, const double *values,
                                size_t n, int max_bins, const char *name)
{
    if (fp == NULL || c == NULL)
        return EB_ERR_INVALID_ARG;
    max_bins = max_bins < 1 ? 1 : max_bins > MAX_BINS ? MAX_BINS : max_bins;
    struct range rv = {0};
    for (size_t i = 0; values != NULL && i < n; i++)
        range_add(&rv, values[i]);

    /* Bin edges are nice ticks of the data range: at most max_bins + 1 of them. */
    uint64_t counts[MAX_BINS + 1];
    struct eb_svg_ticks tb = {0};
    int nb = 0;
    uint64_t max_count = 0, total = 0;
    if (rv.any) {
        eb_svg_nice_ticks(rv.lo, rv.hi, max_bins + 1, &tb);
        nb = tb.count - 1;
        if (nb < 1)
            nb = 1;
        if (nb > (int)(sizeof(counts) / sizeof(counts[0])))
            nb = (int)(sizeof(counts) / sizeof(counts[0]));
        memset(counts, 0, sizeof(counts));
        for (size_t i = 0; i < n; i++) {
            if (!isfinite(values[i]))
                continue;
            double f = floor((values[i] - tb.lo) / tb.step);
            int b = f < 0.0 ? 0 : f >= (double)nb ? nb - 1 : (int)f;
            counts[b]++;
            total++;
        }
        for (int b = 0; b < nb; b++)
            max_count = counts[b] > max_count ? counts[b] : max_count;
    }

    struct legend_item item = {
        .name = name, .suffix = "", .color = eb_svg_palette(0), .kind = LEGEND_RECT};
    struct layout L;
    begin_svg(fp, c, &item, has_text(name) ? 1 : 0, 0.0, &L);
    struct eb_svg_ticks ty, tx;
    count_ticks((double)max_count, y_max_ticks(&L), &ty);
    set_sides(c, &ty, NULL, &L);
    struct range rx = {0};
    if (rv.any) {
        range_add(&rx, tb.lo);
        range_add(&rx, tb.lo + nb * tb.step);
    }
    struct range ry_unused = {0};
    ref_ranges(c, &rx, &ry_unused);
    range_ticks(rx, c->x_include_zero, x_max_ticks(&L), &tx);
    struct scale sx = {tx.lo, tx.hi, L.pl, L.pr};
    struct scale sy = {ty.lo, ty.hi, L.pb, L.pt};
    write_y_axis(fp, &L, &ty, &sy, 0, c->y_label);
    write_x_axis(fp, &L, &tx, &sx, c->x_label);
    if (rv.any) {
        char b0[64], b1[64];
        struct eb_svg_ticks tf = tb; /* tooltips: one more digit than the bin edges need */
        tf.decimals = tb.decimals < 0 ? -1 : tb.decimals + 1;
        fputs("<g class=\"bars\" fill=\"", fp);
        eb_svg_put_escaped(fp, eb_svg_palette(0));
        fputs("\">", fp);
        for (int b = 0; b < nb; b++) {
            if (counts[b] == 0)
                continue;
            double x0 = map(&sx, tb.lo + b * tb.step), x1 = map(&sx, tb.lo + (b + 1) * tb.step);
            double y = map(&sy, (double)counts[b]);
            eb_svg_format_tick(tb.lo + b * tb.step, &tf, b0, sizeof(b0));
            eb_svg_format_tick(tb.lo + (b + 1) * tb.step, &tf, b1, sizeof(b1));
            fprintf(fp,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" stroke=\"#fff\" "
                    "stroke-width=\"0.5\"><title>[%s, %s): %llu of %llu</title></rect>",
                    x0, y, x1 - x0 > 0.5 ? x1 - x0 : 0.5, L.pb - y, b0, b1,
                    (unsigned long long)counts[b], (unsigned long long)total);
        }
        fputs("</g>\n", fp);
    }
    write_refs(fp, c, &L, &sx, &sy);
    if (!rv.any)
        write_empty_note(fp, c, &L);
    return end_svg(fp);
}

/* ------------------------------------------------------------------------------------ CDF */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum eb_status eb_svg_cdf(FILE *fp, const struct eb_svg_chart *c,
                          const struct eb_svg_series *series, size_t n_series)
{
    if (fp == NULL || c == NULL)
        return EB_ERR_INVALID_ARG;
    if (series == NULL)
        n_series = 0;
    enum eb_status st = EB_OK;
    struct range rx = {0};
    for (size_t k = 0; k < n_series; k++)
        for (size_t i = 0; series[k].y != NULL && i < series[k].n; i++)
            range_add(&rx, series[k].y[i]);
    int any_data = rx.any;
    struct range ry_unused = {0};
    ref_ranges(c, &rx, &ry_unused);

    struct legend_item items[MAX_LEGEND];
    size_t n_items = 0;
    for (size_t k = 0; k < n_series && n_items < MAX_LEGEND; k++)
        if (has_text(series[k].name))
            items[n_items++] = (struct legend_item){
                .name = series[k].name,
                .suffix = "",
                .color = series[k].color != NULL ? series[k].color : eb_svg_palette(k),
                .kind = LEGEND_LINE,
                .dashed = series[k].dashed,
            };
    struct layout L;
    begin_svg(fp, c, items, n_items, 0.0, &L);
    struct eb_svg_ticks ty, tx;
    eb_svg_nice_ticks(0.0, 100.0, y_max_ticks(&L), &ty);
    set_sides(c, &ty, NULL, &L);
    range_ticks(rx, c->x_include_zero, x_max_ticks(&L), &tx);
    struct scale sx = {tx.lo, tx.hi, L.pl, L.pr};
    struct scale sy = {ty.lo, ty.hi, L.pb, L.pt};
    write_y_axis(fp, &L, &ty, &sy, 0, c->y_label);
    write_x_axis(fp, &L, &tx, &sx, c->x_label);

    for (size_t k = 0; k < n_series; k++) {
        const struct eb_svg_series *s = &series[k];
        size_t m = 0;
        for (size_t i = 0; s->y != NULL && i < s->n; i++)
            m += isfinite(s->y[i]) != 0;
        if (m == 0)
            continue;
        double *v = malloc(m * sizeof(*v));
        if (v == NULL) {
            st = EB_ERR_NOMEM;
            fprintf(fp,
                    "<text x=\"%.1f\" y=\"%.1f\" fill=\"#B00020\">out of memory: a series is "
                    "not drawn</text>\n",
                    L.pl + 8.0, L.pt + 14.0 + 14.0 * (double)k);
            continue;
        }
        m = 0;
        for (size_t i = 0; i < s->n; i++)
            if (isfinite(s->y[i]))
                v[m++] = s->y[i];
        qsort(v, m, sizeof(*v), cmp_double);
        fputs("<path class=\"series\" fill=\"none\" stroke-width=\"1.5\"", fp);
        if (s->dashed)
            fputs(" stroke-dasharray=\"5 3\"", fp);
        fputs(" stroke=\"", fp);
        eb_svg_put_escaped(fp, s->color != NULL ? s->color : eb_svg_palette(k));
        fprintf(fp, "\" d=\"M%.1f %.1f", map(&sx, v[0]), map(&sy, 0.0));
        /* Ranks drawn: all of them, or CDF_MAX_PTS evenly spaced ones ending at the last. */
        size_t pts = m < CDF_MAX_PTS ? m : CDF_MAX_PTS;
        for (size_t j = 0; j < pts; j++) {
            size_t r = m == pts ? j : (size_t)(((double)(j + 1) * (double)m) / (double)pts) - 1;
            r = r >= m ? m - 1 : r;
            fprintf(fp, "H%.1fV%.1f", map(&sx, v[r]),
                    map(&sy, 100.0 * (double)(r + 1) / (double)m));
        }
        fputs("\"/>\n", fp);
        free(v);
    }
    write_refs(fp, c, &L, &sx, &sy);
    if (!any_data)
        write_empty_note(fp, c, &L);
    enum eb_status end = end_svg(fp);
    return st != EB_OK ? st : end;
}

/* ----------------------------------------------------------------------------------- bars */

/* A value above a bar: 3 significant digits without an exponent for everyday magnitudes. */
static void format_value(double v, char *buf, size_t n)
{
    double a = fabs(v);
    if (a >= 1e6 || (a > 0.0 && a < 0.01))
        snprintf(buf, n, "%.3g", v);
    else
        snprintf(buf, n, "%.*f", a >= 100.0 ? 0 : a >= 10.0 ? 1 : 2, v);
}

enum eb_status eb_svg_bar_chart(FILE *fp, const struct eb_svg_chart *c,
                                const struct eb_svg_bars *bars)
{
    if (fp == NULL || c == NULL)
        return EB_ERR_INVALID_ARG;
    size_t nc = bars != NULL && bars->categories != NULL ? bars->n_categories : 0;
    size_t ns = bars != NULL && bars->series != NULL ? bars->n_series : 0;
    int stacked = bars != NULL && bars->stacked;

    struct range ry = {0};
    int any_data = 0;
    for (size_t i = 0; i < nc; i++) {
        double sum = 0.0;
        for (size_t k = 0; k < ns; k++) {
            const double *vals = bars->series[k].values;
            double v = vals != NULL ? vals[i] : NAN;
            if (!isfinite(v) || (stacked && v < 0.0))
                continue;
            any_data = 1;
            sum += v;
            range_add(&ry, stacked ? sum : v);
        }
    }
    struct range rx_unused = {0};
    ref_ranges(c, &rx_unused, &ry);

    struct legend_item items[MAX_LEGEND];
    size_t n_items = 0;
    for (size_t k = 0; k < ns && n_items < MAX_LEGEND; k++)
        if (has_text(bars->series[k].name))
            items[n_items++] = (struct legend_item){
                .name = bars->series[k].name,
                .suffix = "",
                .color = bars->series[k].color != NULL ? bars->series[k].color : eb_svg_palette(k),
                .kind = LEGEND_RECT,
            };

    /* Category labels: upright when each fits its band, else slanted (and shortened). */
    double widest = 0.0;
    for (size_t i = 0; i < nc; i++) {
        double px = text_px(bars->categories[i]);
        widest = px > widest ? px : widest;
    }
    int w = c->width > 0 ? c->width : DEFAULT_W;
    double band_guess = nc > 0 ? (w - 120.0) / (double)nc : 0.0;
    int slant = nc > 0 && widest > band_guess - 6.0;
    double cut_px = LABEL_CHARS * CHAR_PX;
    double extra = slant ? 0.5 * (widest < cut_px ? widest : cut_px) + 4.0 : 0.0;

    struct layout L;
    begin_svg(fp, c, items, n_items, extra, &L);
    struct eb_svg_ticks ty;
    range_ticks(ry, 1, y_max_ticks(&L), &ty);
    set_sides(c, &ty, NULL, &L);
    struct scale sy = {ty.lo, ty.hi, L.pb, L.pt};
    write_y_axis(fp, &L, &ty, &sy, 0, c->y_label);

    double band = nc > 0 ? (L.pr - L.pl) / (double)nc : 0.0;
    double y0 = map(&sy, 0.0);
    fputs("<g class=\"x-axis\">", fp);
    for (size_t i = 0; i < nc; i++) {
        double cx = L.pl + band * ((double)i + 0.5);
        if (slant)
            fprintf(fp,
                    "<text transform=\"translate(%.1f,%.1f) rotate(-30)\" text-anchor=\"end\">"
                    "<title>",
                    cx + 3.0, L.pb + 14.0);
        else
            fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\"><title>", cx,
                    L.pb + 16.0);
        eb_svg_put_escaped(fp, bars->categories[i]);
        fputs("</title>", fp);
        put_escaped_n(fp, bars->categories[i], slant ? LABEL_CHARS : 0);
        fputs("</text>", fp);
    }
    fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>", L.pl, y0,
            L.pr, y0);
    fputs("</g>\n", fp);
    write_x_label(fp, &L, c->x_label);

    size_t n_bars = stacked ? nc : nc * ns;
    double bw = stacked || ns == 0 ? band * 0.6 : band * 0.8 / (double)ns;
    int show_values = n_bars > 0 && n_bars <= 40 && bw >= 18.0;
    char vb[32];
    for (size_t k = 0; k < ns; k++) {
        const struct eb_svg_bar_series *s = &bars->series[k];
        const char *color = s->color != NULL ? s->color : eb_svg_palette(k);
        fputs("<g class=\"bars\" fill=\"", fp);
        eb_svg_put_escaped(fp, color);
        fputs("\">", fp);
        for (size_t i = 0; i < nc; i++) {
            double v = s->values != NULL ? s->values[i] : NAN;
            if (!isfinite(v) || (stacked && v < 0.0))
                continue;
            double base = 0.0;
            if (stacked)
                for (size_t j = 0; j < k; j++) {
                    const double *pv = bars->series[j].values;
                    double u = pv != NULL ? pv[i] : NAN;
                    base += isfinite(u) && u > 0.0 ? u : 0.0;
                }
            double x = stacked ? L.pl + band * ((double)i + 0.2)
                               : L.pl + band * ((double)i + 0.1) + bw * (double)k;
            double ya = map(&sy, base), yb = map(&sy, base + v);
            double top = ya < yb ? ya : yb, hgt = fabs(ya - yb);
            format_value(v, vb, sizeof(vb));
            fprintf(fp, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>", x,
                    top, bw > 1.0 ? bw - 1.0 : bw, hgt);
            eb_svg_put_escaped(fp, s->name);
            fputs(", ", fp);
            eb_svg_put_escaped(fp, bars->categories[i]);
            fprintf(fp, ": %s</title></rect>", vb);
            if (show_values && !stacked)
                fprintf(fp,
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"9\" "
                        "fill=\"#222\">%s</text>",
                        x + bw / 2.0, v >= 0.0 ? top - 3.0 : top + hgt + 10.0, vb);
            else if (show_values && hgt >= 13.0 && bw >= 24.0)
                fprintf(fp,
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"9\" "
                        "fill=\"#fff\">%s</text>",
                        x + bw / 2.0, top + hgt / 2.0 + 3.0, vb);
        }
        fputs("</g>\n", fp);
    }
    struct scale sx_unused = {0.0, 1.0, L.pl, L.pr};
    write_refs(fp, c, &L, &sx_unused, &sy);
    if (!any_data)
        write_empty_note(fp, c, &L);
    return end_svg(fp);
}

void eb_svg_page_begin(FILE *fp)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", fp);
    fputs("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'\">\n",
          fp);
}

/* ---------------------------------------------------------------------------------- heatmap */

enum eb_status eb_svg_heatmap(FILE *fp, const struct eb_svg_chart *c,
                              const struct eb_svg_heatmap *hm)
{
    if (fp == NULL || c == NULL || hm == NULL)
        return EB_ERR_INVALID_ARG;
    const size_t nr = hm->n_rows, nc = hm->n_cols;
    /* Big cells with their value written in them while the matrix is small; else 14 px. */
    const double cell = nr <= 30 && nc <= 30 ? 28.0 : 14.0;
    double row_px = 0, col_px = 0;
    for (size_t i = 0; i < nr; i++) {
        double px = text_px(hm->row_labels[i]);
        row_px = px > row_px ? px : row_px;
    }
    for (size_t j = 0; j < nc; j++) {
        double px = text_px(hm->col_labels[j]);
        col_px = px > col_px ? px : col_px;
    }
    row_px = row_px > LABEL_CHARS * CHAR_PX ? LABEL_CHARS * CHAR_PX : row_px;
    col_px = col_px > LABEL_CHARS * CHAR_PX ? LABEL_CHARS * CHAR_PX : col_px;
    struct eb_svg_chart sized = *c;
    /* The cells decide the size (a scrolling container shows a large one). */
    sized.width = (int)(MARGIN + 16.0 + row_px + 6.0 + (double)nc * cell + MARGIN + 0.5);
    sized.height = 0;
    struct layout L;
    memset(&L, 0, sizeof(L));
    /* begin_svg sets pt from the title; the height follows: rows + slanted column labels. */
    {
        double head = 8.0 + (has_text(c->title) ? 15.0 : 0) + (has_text(c->subtitle) ? 15.0 : 0);
        sized.height = (int)(head + 14.0 + (double)nr * cell + 6.0 + col_px * 0.87 + 16.0 + 30.0);
    }
    if (sized.width > 4000 || sized.height > 4000) /* begin_svg's bounds: smaller cells */
        return EB_ERR_INVALID_ARG;
    begin_svg(fp, &sized, NULL, 0, 0.0, &L);
    const double x0 = MARGIN + 16.0 + row_px + 6.0, y0 = L.pt;
    if (nr == 0 || nc == 0) {
        L.pl = x0;
        L.pr = L.w - MARGIN;
        L.pb = L.h - 40.0;
        write_empty_note(fp, c, &L);
        return end_svg(fp);
    }
    fputs("<g class=\"bars\" stroke=\"#fff\" stroke-width=\"0.5\">", fp);
    for (size_t i = 0; i < nr; i++)
        for (size_t j = 0; j < nc; j++) {
            double v = hm->values[i * nc + j];
            int shade = isfinite(v) ? (int)lround(255.0 - fmin(fmax(v, 0.0), 1.0) * 200.0) : 255;
            fprintf(fp,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                    "fill=\"rgb(%d,%d,255)\"><title>",
                    x0 + (double)j * cell, y0 + (double)i * cell, cell, cell, shade,
                    (shade + 255) / 2);
            eb_svg_put_escaped(fp, c->y_label);
            fputs(" ", fp);
            eb_svg_put_escaped(fp, hm->row_labels[i]);
            fputs(", ", fp);
            eb_svg_put_escaped(fp, c->x_label);
            fputs(" ", fp);
            eb_svg_put_escaped(fp, hm->col_labels[j]);
            if (isfinite(v))
                fprintf(fp, ": %.2f", v);
            if (hm->counts != NULL)
                fprintf(fp, " (%.0f)", hm->counts[i * nc + j]);
            fputs("</title></rect>", fp);
        }
    fputs("</g>\n", fp);
    if (cell >= 28.0) {
        fputs("<g font-size=\"9\" text-anchor=\"middle\">", fp);
        for (size_t i = 0; i < nr; i++)
            for (size_t j = 0; j < nc; j++) {
                double v = hm->values[i * nc + j];
                if (isfinite(v) && v >= 0.005)
                    fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%.2f</text>",
                            x0 + ((double)j + 0.5) * cell, y0 + ((double)i + 0.5) * cell + 3.0,
                            v > 0.5 ? "#fff" : "#222", v);
            }
        fputs("</g>\n", fp);
    }
    fputs("<g font-size=\"9\">", fp);
    for (size_t i = 0; i < nr; i++) {
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", x0 - 4.0,
                y0 + ((double)i + 0.5) * cell + 3.0);
        put_escaped_n(fp, hm->row_labels[i], LABEL_CHARS);
        fputs("</text>", fp);
    }
    const double yb = y0 + (double)nr * cell + 6.0;
    for (size_t j = 0; j < nc; j++) {
        double x = x0 + ((double)j + 0.5) * cell + 3.0;
        fprintf(fp,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                "transform=\"rotate(-60 %.1f %.1f)\">",
                x, yb, x, yb);
        put_escaped_n(fp, hm->col_labels[j], LABEL_CHARS);
        fputs("</text>", fp);
    }
    fputs("</g>\n", fp);
    /* Axis titles: the rows' up the left edge, the columns' under the labels. */
    double ym = y0 + (double)nr * cell / 2.0;
    fprintf(fp,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 %.1f "
            "%.1f)\">",
            MARGIN + 8.0, ym, MARGIN + 8.0, ym);
    eb_svg_put_escaped(fp, c->y_label);
    fprintf(fp, "</text>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
            x0 + (double)nc * cell / 2.0, (double)L.h - 10.0);
    eb_svg_put_escaped(fp, c->x_label);
    fputs("</text>\n", fp);
    return end_svg(fp);
}
