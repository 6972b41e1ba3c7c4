/* plot.h: a tiny inline-SVG plotting helper for the HTML reports: a frame with axes (linear,
 * log or categorical), reference lines, points, step lines, bars and a legend. No JavaScript,
 * nothing fetched: every plot is one <svg> element written into the page. */
#ifndef AC_PLOT_H
#define AC_PLOT_H
#include <stdio.h>

typedef struct {
  FILE *f;
  int w, h;                   /* size of the svg in CSS pixels */
  int ml, mr, mt, mb;         /* margins around the plot area */
  double x0, x1, y0, y1;      /* data ranges (log axes: the values, not their logs) */
  int xlog, ylog;
  int ncat;                   /* > 0: x is categorical (0 .. ncat-1) */
  int index;                  /* frame colour index */
} ac_plot;

/* Frame fill of the plot area: one tint per plot (index), so that a screenshot shows which
 * plots were rendered. The colour as "#rrggbb". */
void ac_plot_frame_color(int index, char out[8]);

/* Opens <svg id=ID> with a title. Margins may be changed before ac_plot_range. */
void ac_plot_begin(ac_plot *pl, FILE *f, const char *id, int index, int w, int h, const char *title);
/* Data ranges (a log axis needs positive limits: clamped to 1e-300); fills the plot area with
 * the frame colour of the plot's index. */
void ac_plot_range(ac_plot *pl, double x0, double x1, int xlog, double y0, double y1, int ylog);
/* Grid, ticks, tick labels and axis labels. cats (ncat names) labels a categorical x axis. */
void ac_plot_axes(ac_plot *pl, const char *xlabel, const char *ylabel, const char *const *cats, int ncat);
/* Data to pixels (clamped to the plot area). */
double ac_plot_px(const ac_plot *pl, double x);
double ac_plot_py(const ac_plot *pl, double y);
/* A horizontal reference line across the plot area with a label at its right end. */
void ac_plot_hline(ac_plot *pl, double y, const char *color, const char *label, int dashed);
/* A band between y lo and y hi, x from xa to xb (data units). */
void ac_plot_band(ac_plot *pl, double xa, double xb, double lo, double hi, const char *color, double opacity);
/* Points (circles of radius r). */
void ac_plot_points(ac_plot *pl, const double *x, const double *y, int n, const char *color, double r);
/* A polyline (step: 1 draws a staircase that holds each value until the next x). */
void ac_plot_line(ac_plot *pl, const double *x, const double *y, int n, const char *color, int step);
/* Vertical bars of width frac (of a category) from the axis floor up to y at x. */
void ac_plot_bar(ac_plot *pl, double x, double y, double frac, const char *color);
/* A legend: one row between the title and the plot area. */
void ac_plot_legend(ac_plot *pl, const char *const *names, const char *const *colors, int n);
/* Text at data coordinates (anchor "start", "middle", "end"). */
void ac_plot_text(ac_plot *pl, double x, double y, const char *anchor, const char *text);
void ac_plot_end(ac_plot *pl);

/* Writes s escaped as every output escapes text (ac_str_escape), then with <, >, &, ", ' as entities. */
void ac_html_esc(FILE *f, const char *s);
/* The same for text of several lines: each line escaped, the newlines kept. */
void ac_html_esc_lines(FILE *f, const char *s);
/* A colour of a fixed palette for series i. */
const char *ac_plot_color(int i);

#endif
