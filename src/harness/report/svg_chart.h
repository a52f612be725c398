/*
 * SVG charts drawn by edgebench itself (no library, no script): report.html embeds them, and a
 * comparison sweep can reuse them. Each function writes one complete, self-contained <svg>
 * element (with its xmlns, so it is also a valid .svg file): a title, an optional subtitle,
 * axes with "nice" round ticks (1, 2 or 5 times a power of ten), axis labels with their units,
 * a legend, and the data.
 *
 *     double x[] = {0, 1, 2}, y[] = {3.1, 2.9, NAN};
 *     struct eb_svg_series s = {.name = "rgb end-to-end", .x = x, .y = y, .n = 3};
 *     struct eb_svg_chart c = {.title = "Latency over time", .x_label = "time (s)",
 *                              .y_label = "latency (ms)", .y_include_zero = 1};
 *     if (eb_svg_line_chart(fp, &c, &s, 1) != EB_OK) ...
 *
 * Rules shared by every chart:
 * - a point whose x or y is NaN or infinite is skipped (a line breaks there); a data set with no
 *   finite point draws the frame, the axes and "no data" (or the chart's note) in the plot;
 * - every string (title, labels, legend names, point labels, ids, colours) is escaped for HTML
 *   and XML;
 * - a legend lists at most 32 series (the rest are drawn but not listed);
 * - a zero-initialised struct eb_svg_chart is valid (640 x 320 px, no labels);
 * - the functions write to `fp` and keep nothing; errors of `fp` are left in ferror(fp) and
 *   returned as EB_ERR_IO.
 * Thread-safe: no shared state.
 */
#ifndef EB_SVG_CHART_H
#define EB_SVG_CHART_H

#include <stddef.h>
#include <stdio.h>

#include "eb/status.h"

/** How a series is drawn by eb_svg_line_chart. */
enum eb_svg_mark {
    EB_SVG_MARK_LINE = 0, /* straight segments between points */
    EB_SVG_MARK_STEP,     /* horizontal then vertical segments (a step function) */
    EB_SVG_MARK_POINTS,   /* a dot per point, no line */
};

/** One data series. Everything is borrowed for the duration of the call. */
struct eb_svg_series {
    const char *name;          /* legend entry; NULL or "" = not in the legend */
    const double *x;           /* n values; NULL = 0, 1, ..., n-1 */
    const double *y;           /* n values (the values themselves for eb_svg_cdf) */
    const char *const *labels; /* n point labels (entries may be NULL) drawn beside the points;
                                  NULL = none */
    size_t n;
    int right_axis;        /* 1: plotted against the second y axis (eb_svg_line_chart) */
    enum eb_svg_mark mark; /* eb_svg_line_chart only */
    int dashed;            /* draw the line dashed */
    const char *color;     /* CSS colour; NULL = the palette colour of the series' position */
};

/** A reference line across the plot (a memory limit, a percentile). */
struct eb_svg_ref {
    int vertical;      /* 0: at y = value (left axis); 1: at x = value */
    double value;      /* a non-finite value is skipped */
    const char *label; /* written at the line's end; NULL = none */
    const char *color; /* NULL = dark red */
};

/** What every chart has. A zero-initialised struct is valid. */
struct eb_svg_chart {
    const char *id;       /* id attribute of the <svg> (unique within a page); NULL = none */
    const char *title;    /* NULL = none */
    const char *subtitle; /* a smaller line under the title (what the data is, a caveat) */
    const char *x_label;  /* axis label with its unit, e.g. "time since the first frame (s)" */
    const char *y_label;
    const char *y2_label;   /* second y axis (eb_svg_line_chart with a right_axis series) */
    const char *empty_note; /* shown in the plot when there is no data; NULL = "no data" */
    int width, height;      /* px; 0 = 640 and 320 */
    int x_include_zero;     /* the axis range reaches 0 */
    int y_include_zero;
    int y2_include_zero;
    const struct eb_svg_ref *refs; /* n_refs reference lines; their values widen the range */
    size_t n_refs;
};

/** Tick positions of one axis: count values lo, lo + step, ..., hi (= lo + (count-1) step). */
struct eb_svg_ticks {
    double lo, hi, step;
    int count;
    int decimals; /* digits after the point that show every tick exactly */
};

/**
 * "Nice" ticks covering [lo, hi]: the step is the smallest 1, 2 or 5 times a power of ten for
 * which the ticks, from lo and hi rounded outwards to multiples of the step, are at most
 * `max_ticks` (values under 2 count as 2). An empty range (lo == hi) is widened around the
 * value (0 gives 0..1); non-finite bounds give 0..1; `lo` > `hi` are swapped. `*out` is
 * overwritten.
 */
void eb_svg_nice_ticks(double lo, double hi, int max_ticks, struct eb_svg_ticks *out);

/** Writes tick value `v` with t->decimals digits ("-0" is written "0"). */
void eb_svg_format_tick(double v, const struct eb_svg_ticks *t, char *buf, size_t buf_size);

/**
 * Writes `s` escaped for HTML text and attribute values: & < > " ' become entities, control
 * characters become spaces, and bytes that are not valid UTF-8 become U+FFFD. NULL writes
 * nothing.
 */
void eb_svg_put_escaped(FILE *fp, const char *s);

/**
 * The opening of a self-contained HTML page up to its <head>'s own content: doctype, charset
 * and a Content-Security-Policy that forbids every fetch and every script (inline styles only),
 * so that the browser enforces what edgebench's pages promise.
 */
void eb_svg_page_begin(FILE *fp);

/** The palette colour of series number `i` (cycles; colour-blind safe; static string). */
const char *eb_svg_palette(size_t i);

/**
 * A line chart of `n_series` series (lines, steps or dots; series with right_axis 1 against a
 * second y axis on the right labelled c->y2_label, with its own ticks). x is numeric. Point
 * labels are drawn when a series has them (so a labelled scatter is a POINTS series with
 * labels: see eb_svg_scatter). EB_ERR_INVALID_ARG for a NULL fp or c (nothing written),
 * EB_ERR_IO when writing failed.
 */
EB_NODISCARD enum eb_status eb_svg_line_chart(FILE *fp, const struct eb_svg_chart *c,
                                              const struct eb_svg_series *series, size_t n_series);

/**
 * A scatter plot: as eb_svg_line_chart with every series drawn as dots and its labels beside
 * them (e.g. latency p50 against mAP, one labelled point per configuration). At most 32 series
 * (more are left out).
 */
EB_NODISCARD enum eb_status eb_svg_scatter(FILE *fp, const struct eb_svg_chart *c,
                                           const struct eb_svg_series *series, size_t n_series);

/**
 * A histogram of `n` values (non-finite ones skipped) with at most `max_bins` bins (clamped to
 * 1..100) whose edges are nice round numbers; the y axis counts values per bin. `name` is the
 * legend entry (NULL = none). c->refs can mark percentiles (vertical lines). Errors as
 * eb_svg_line_chart.
 */
EB_NODISCARD enum eb_status eb_svg_histogram(FILE *fp, const struct eb_svg_chart *c,
                                             const double *values, size_t n, int max_bins,
                                             const char *name);

/**
 * Empirical cumulative distribution functions, one step line per series: for each series the
 * n values y[] (x is ignored; non-finite values skipped) are sorted and the line rises from
 * 0 % to 100 % of the values (y axis in percent). Series of more than 2000 values are drawn
 * through 2000 evenly spaced ranks (the last always included). Errors as eb_svg_line_chart,
 * and EB_ERR_NOMEM when the sorted copy cannot be allocated (a note is drawn instead of that
 * series; the <svg> stays valid).
 */
EB_NODISCARD enum eb_status eb_svg_cdf(FILE *fp, const struct eb_svg_chart *c,
                                       const struct eb_svg_series *series, size_t n_series);

/** One series of a bar chart: a value per category. Borrowed for the call. */
struct eb_svg_bar_series {
    const char *name;     /* legend entry */
    const double *values; /* n_categories values; a non-finite value draws no bar */
    const char *color;    /* NULL = palette */
};

/** The data of a bar chart. */
struct eb_svg_bars {
    const char *const *categories; /* n_categories labels along the x axis */
    size_t n_categories;
    const struct eb_svg_bar_series *series;
    size_t n_series;
    int stacked; /* 0: grouped (side by side); 1: stacked (negative values are not drawn) */
};

/**
 * A bar chart: grouped or stacked bars per category, the y axis from 0 (c->y_label), the
 * categories along x (c->x_label names them; long labels are slanted). Every bar has a tooltip
 * (<title>) with its series, category and value; values are written on the bars while they
 * fit. Only horizontal reference lines (c->refs with vertical 0) are meaningful here. Errors as
 * eb_svg_line_chart.
 */
EB_NODISCARD enum eb_status eb_svg_bar_chart(FILE *fp, const struct eb_svg_chart *c,
                                             const struct eb_svg_bars *bars);

/** The data of a heatmap (a confusion matrix). Borrowed for the call. */
struct eb_svg_heatmap {
    const char *const *row_labels; /* n_rows labels down the left edge */
    const char *const *col_labels; /* n_cols labels along the bottom (slanted) */
    size_t n_rows, n_cols;
    const double *values; /* n_rows x n_cols, row-major, in [0, 1]: the cell's shade (white 0 to
                             blue 1); a non-finite value leaves the cell white */
    const double *counts; /* n_rows x n_cols counts named in each cell's tooltip; NULL = none */
};

/**
 * A heatmap: one square cell per value (its tooltip names the row, the column, the value and the
 * count), row labels at the left (c->y_label up the edge), column labels slanted at the bottom
 * (c->x_label under them). The cells set the size (c->width and c->height are ignored): 28 px
 * with the value written in the cell up to 30 x 30, else 14 px, so 80 classes stay readable in
 * a scrolling container. EB_ERR_INVALID_ARG for a NULL argument or a matrix past 4000 px (over
 * about 270 rows or columns; nothing written); EB_ERR_IO when writing failed.
 */
EB_NODISCARD enum eb_status eb_svg_heatmap(FILE *fp, const struct eb_svg_chart *c,
                                           const struct eb_svg_heatmap *hm);

#endif
