/* plot.c: inline SVG plots (see plot.h). Coordinates are written with one decimal; text uses
 * the page's font. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plot.h"
#include "util.h"

static const char *palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

const char *ac_plot_color(int i) { return palette[(i < 0 ? -i : i) % 10]; }

void ac_html_esc(FILE *f, const char *s)
{
  char *t = ac_str_escape_dup(s); /* control characters as every output shows them, then the markup */
  for (const char *c = t; *c; c++) {
    if (*c == '<')
      fputs("&lt;", f);
    else if (*c == '>')
      fputs("&gt;", f);
    else if (*c == '&')
      fputs("&amp;", f);
    else if (*c == '"')
      fputs("&quot;", f);
    else if (*c == '\'')
      fputs("&#39;", f);
    else
      fputc(*c, f);
  }
  free(t);
}

void ac_html_esc_lines(FILE *f, const char *s)
{
  while (*s) {
    size_t n = strcspn(s, "\n");
    char *line = ac_xmalloc(n + 1);
    memcpy(line, s, n);
    line[n] = 0;
    ac_html_esc(f, line);
    free(line);
    s += n;
    if (*s) fputc(*s++, f);
  }
}

void ac_plot_frame_color(int index, char out[8])
{
  /* near-white tints, distinct per index and never used by anything else on the page */
  int i = index % 64;
  snprintf(out, 8, "#%02x%02x%02x", 0xf0 + (i % 4) * 3 + 1, 0xf2 + ((i / 4) % 4) * 3, 0xf6 + (i / 16) * 3);
}

void ac_plot_begin(ac_plot *pl, FILE *f, const char *id, int index, int w, int h, const char *title)
{
  memset(pl, 0, sizeof *pl);
  pl->f = f;
  pl->w = w;
  pl->h = h;
  pl->ml = 72;
  pl->mr = 24;
  pl->mt = 46;
  pl->mb = 46;
  pl->x0 = 0, pl->x1 = 1, pl->y0 = 0, pl->y1 = 1;
  pl->index = index;
  char fc[8];
  ac_plot_frame_color(index, fc);
  fprintf(f, "<svg id=\"%s\" class=\"plot\" data-frame=\"%s\" width=\"%d\" "
             "height=\"%d\" viewBox=\"0 0 %d %d\" font-size=\"12\">\n", id, fc, w, h, w, h);
  fprintf(f, "<text x=\"%d\" y=\"18\" font-size=\"14\" font-weight=\"bold\">", pl->ml);
  ac_html_esc(f, title);
  fprintf(f, "</text>\n");
}

void ac_plot_range(ac_plot *pl, double x0, double x1, int xlog, double y0, double y1, int ylog)
{
  if (xlog) x0 = x0 > 1e-300 ? x0 : 1e-300, x1 = x1 > x0 ? x1 : x0 * 10;
  if (ylog) y0 = y0 > 1e-300 ? y0 : 1e-300, y1 = y1 > y0 ? y1 : y0 * 10;
  if (!(x1 > x0)) x1 = x0 + 1;
  if (!(y1 > y0)) y1 = y0 + 1;
  pl->x0 = x0, pl->x1 = x1, pl->y0 = y0, pl->y1 = y1;
  pl->xlog = xlog, pl->ylog = ylog;
  char fc[8];
  ac_plot_frame_color(pl->index, fc);
  fprintf(pl->f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", pl->ml, pl->mt,
          pl->w - pl->ml - pl->mr, pl->h - pl->mt - pl->mb, fc);
}

static double frac(double v, double a, double b, int lg)
{
  if (lg) {
    if (!(v > 0)) return -0.02;
    return (log10(v) - log10(a)) / (log10(b) - log10(a));
  }
  return (v - a) / (b - a);
}

static double clamp01(double t) { return t < -0.02 ? -0.02 : t > 1.02 ? 1.02 : t; }

double ac_plot_px(const ac_plot *pl, double x)
{
  double aw = pl->w - pl->ml - pl->mr;
  if (pl->ncat > 0) return pl->ml + aw * (x + 0.5) / pl->ncat;
  return pl->ml + aw * clamp01(frac(x, pl->x0, pl->x1, pl->xlog));
}

double ac_plot_py(const ac_plot *pl, double y)
{
  double ah = pl->h - pl->mt - pl->mb;
  if (isnan(y)) y = pl->y1;
  return pl->mt + ah * (1 - clamp01(frac(y, pl->y0, pl->y1, pl->ylog)));
}

/* Tick positions of an axis: decades (log) or 1-2-5 steps (linear). Returns the count. */
static int ticks(double a, double b, int lg, double *t, int max)
{
  int n = 0;
  if (lg) {
    int k0 = (int)ceil(log10(a) - 1e-9), k1 = (int)floor(log10(b) + 1e-9);
    int step = 1;
    while ((k1 - k0) / step + 1 > 8) step++;
    for (int k = k0; k <= k1 && n < max; k += step) t[n++] = pow(10, k);
    return n;
  }
  double raw = (b - a) / 6, mag = pow(10, floor(log10(raw))), st = mag;
  if (raw / mag > 5) st = 10 * mag;
  else if (raw / mag > 2) st = 5 * mag;
  else if (raw / mag > 1) st = 2 * mag;
  for (double v = ceil(a / st - 1e-9) * st; v <= b + st * 1e-9 && n < max; v += st) t[n++] = fabs(v) < st * 1e-9 ? 0 : v;
  return n;
}

static void tick_label(char *buf, size_t n, double v, int lg)
{
  if (lg) {
    int k = (int)lround(log10(v));
    if (k == 0) snprintf(buf, n, "1");
    else if (k == 1) snprintf(buf, n, "10");
    else snprintf(buf, n, "1e%d", k);
  } else if (fabs(v) >= 1e5 || (v != 0 && fabs(v) < 1e-3)) {
    snprintf(buf, n, "%.0e", v);
  } else {
    snprintf(buf, n, "%g", v);
  }
}

void ac_plot_axes(ac_plot *pl, const char *xlabel, const char *ylabel, const char *const *cats, int ncat)
{
  FILE *f = pl->f;
  double t[16];
  int left = pl->ml, right = pl->w - pl->mr, top = pl->mt, bot = pl->h - pl->mb;
  char lb[32];
  int ny = ticks(pl->y0, pl->y1, pl->ylog, t, 16);
  for (int i = 0; i < ny; i++) {
    double y = ac_plot_py(pl, t[i]);
    tick_label(lb, sizeof lb, t[i], pl->ylog);
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#d8d8d8\"/>"
               "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", left, y, right, y, left - 6, y + 4, lb);
  }
  pl->ncat = ncat;
  if (ncat > 0) {
    int narrow = (right - left) / ncat < 36;   /* steeper, smaller labels when categories are narrow */
    for (int i = 0; i < ncat; i++) {
      double x = ac_plot_px(pl, i);
      fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e4e4e4\"/>"
                 "<text transform=\"translate(%.1f,%d) rotate(%d)\" text-anchor=\"end\" font-size=\"%d\">",
              x, top, x, bot, x + 3, bot + 12, narrow ? -60 : -35, narrow ? 10 : 11);
      ac_html_esc(f, cats[i]);
      fprintf(f, "</text>\n");
    }
  } else {
    int nx = ticks(pl->x0, pl->x1, pl->xlog, t, 16);
    for (int i = 0; i < nx; i++) {
      double x = ac_plot_px(pl, t[i]);
      tick_label(lb, sizeof lb, t[i], pl->xlog);
      fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d8d8d8\"/>"
                 "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, top, x, bot, x, bot + 16, lb);
    }
  }
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#555\"/>\n", left, top,
          right - left, bot - top);
  if (xlabel && xlabel[0]) {
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (left + right) / 2, pl->h - 6);
    ac_html_esc(f, xlabel);
    fprintf(f, "</text>\n");
  }
  if (ylabel && ylabel[0]) {
    fprintf(f, "<text transform=\"translate(16,%d) rotate(-90)\" text-anchor=\"middle\">", (top + bot) / 2);
    ac_html_esc(f, ylabel);
    fprintf(f, "</text>\n");
  }
}

void ac_plot_hline(ac_plot *pl, double y, const char *color, const char *label, int dashed)
{
  if (pl->ylog ? !(y >= pl->y0 && y <= pl->y1) : (y < pl->y0 || y > pl->y1)) return;
  double py = ac_plot_py(pl, y);
  fprintf(pl->f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\"%s/>\n", pl->ml, py,
          pl->w - pl->mr, py, color, dashed ? " stroke-dasharray=\"6,4\"" : "");
  if (label && label[0]) {
    fprintf(pl->f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"%s\">", pl->w - pl->mr - 4, py - 4, color);
    ac_html_esc(pl->f, label);
    fprintf(pl->f, "</text>\n");
  }
}

void ac_plot_band(ac_plot *pl, double xa, double xb, double lo, double hi, const char *color, double opacity)
{
  double px0 = ac_plot_px(pl, xa), px1 = ac_plot_px(pl, xb), py0 = ac_plot_py(pl, hi), py1 = ac_plot_py(pl, lo);
  if (px1 < px0) {
    double t = px0;
    px0 = px1, px1 = t;
  }
  fprintf(pl->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"%.2f\"/>\n", px0,
          py0, px1 - px0, py1 - py0 < 0 ? 0 : py1 - py0, color, opacity);
}

void ac_plot_points(ac_plot *pl, const double *x, const double *y, int n, const char *color, double r)
{
  fprintf(pl->f, "<g fill=\"%s\" fill-opacity=\"0.7\">", color);
  for (int i = 0; i < n; i++)
    fprintf(pl->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>", ac_plot_px(pl, x[i]), ac_plot_py(pl, y[i]), r);
  fprintf(pl->f, "</g>\n");
}

void ac_plot_line(ac_plot *pl, const double *x, const double *y, int n, const char *color, int step)
{
  if (n <= 0) return;
  fprintf(pl->f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
  for (int i = 0; i < n; i++) {
    double px = ac_plot_px(pl, x[i]), py = ac_plot_py(pl, y[i]);
    if (step && i > 0) fprintf(pl->f, "%.1f,%.1f ", px, ac_plot_py(pl, y[i - 1]));
    fprintf(pl->f, "%.1f,%.1f ", px, py);
  }
  fprintf(pl->f, "\"/>\n");
}

void ac_plot_bar(ac_plot *pl, double x, double y, double frac_w, const char *color)
{
  double aw = pl->w - pl->ml - pl->mr;
  double bw = pl->ncat > 0 ? aw / pl->ncat * frac_w : 8;
  double px = ac_plot_px(pl, x), py = ac_plot_py(pl, y), base = ac_plot_py(pl, pl->y0);
  fprintf(pl->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n", px - bw / 2, py, bw,
          base - py < 0 ? 0 : base - py, color);
}

void ac_plot_legend(ac_plot *pl, const char *const *names, const char *const *colors, int n)
{
  /* one row between the title and the plot area, so that it never hides data */
  double x = pl->ml;
  int y = pl->mt - 16;
  for (int i = 0; i < n; i++) {
    fprintf(pl->f, "<rect x=\"%.1f\" y=\"%d\" width=\"12\" height=\"10\" fill=\"%s\"/><text x=\"%.1f\" y=\"%d\" "
                   "font-size=\"11\">", x, y, colors[i], x + 16, y + 9);
    ac_html_esc(pl->f, names[i]);
    fprintf(pl->f, "</text>\n");
    x += 30 + 6.2 * (double)strlen(names[i]);
  }
}

void ac_plot_text(ac_plot *pl, double x, double y, const char *anchor, const char *text)
{
  fprintf(pl->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"#444\">", ac_plot_px(pl, x), ac_plot_py(pl, y),
          anchor);
  ac_html_esc(pl->f, text);
  fprintf(pl->f, "</text>\n");
}

void ac_plot_end(ac_plot *pl) { fprintf(pl->f, "</svg>\n"); }
