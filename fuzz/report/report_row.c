/* report_row.c: the findings' sections of report.html: the worst row of each finding drawn from
 * what its directory holds (case.npz for the weights, report.json's worst_row for the kernel's
 * and the exact values per column). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz.h"
#include "plot.h"
#include "report_html.h"

#define MAX_CASE_BYTES (256u << 20)   /* larger case files: no weights panel */

int ac_report_row_weights(const ac_case *c, int64_t b, int64_t h, int64_t i, double *w, int64_t *nv)
{
  const ac_problem *p = &c->p;
  int64_t kh = ac_kv_head(p, h);
  double sc = ac_problem_scale(p), m = -INFINITY;
  *nv = ac_visible_count(p, i);
  for (int64_t j = 0; j < *nv; j++) {
    double s = 0;
    for (int64_t t = 0; t < p->dk; t++)
      s += ac_load(ac_tensor_dtype(p, 'q'), c->q, ac_qidx(p, b, h, i, t)) *
           ac_load(ac_tensor_dtype(p, 'k'), c->k, ac_kidx(p, b, kh, j, t));
    w[j] = s * sc;
    if (!isfinite(w[j])) return -1;
    if (w[j] > m) m = w[j];
  }
  double sum = 0;
  for (int64_t j = 0; j < *nv; j++) sum += (w[j] = exp(w[j] - m));
  for (int64_t j = 0; j < p->tk; j++) w[j] = j < *nv ? w[j] / sum : 0;
  return 0;
}

static void plot_weights(FILE *f, const char *dir, const char *sig, json_object *row, int rank, int idx)
{
  char p[4500], id[64], title[160];
  snprintf(p, sizeof p, "findings/%s/case.npz", sig);
  ac_case c;
  ac_err e;
  int fd = ac_data_open(dir, p, MAX_CASE_BYTES, &e); /* data: no link followed, no FIFO */
  if (fd < 0 || ac_case_read_fd(&c, fd, p, &e)) return;
  int64_t b = (int64_t)ac_rd_get(row, "b", 0), h = (int64_t)ac_rd_get(row, "h", 0), i = (int64_t)ac_rd_get(row, "i", 0);
  if (b >= c.p.batch || h >= c.p.heads || i >= c.p.tq) {
    ac_case_free(&c);
    return;
  }
  int64_t tk = c.p.tk, nv;
  double *w = ac_xmalloc(sizeof(double) * (size_t)tk);
  int ok = ac_report_row_weights(&c, b, h, i, w, &nv) == 0;
  snprintf(id, sizeof id, "row-weights-%d", rank);
  snprintf(title, sizeof title, "Row (%lld,%lld,%lld): exact softmax weights per key", (long long)b, (long long)h,
           (long long)i);
  ac_plot pl;
  ac_plot_begin(&pl, f, id, idx, 592, 260, title);
  double lo = 1;
  for (int64_t j = 0; ok && j < nv; j++)
    if (w[j] > 0 && w[j] < lo) lo = w[j];
  if (lo < 1e-30) lo = 1e-30;
  ac_plot_range(&pl, -0.5, (double)tk - 0.5, 0, pow(10, floor(log10(lo)) - (lo > 0.099 ? 1 : 0)), 1.5, 1);
  ac_plot_axes(&pl, "key j", "weight (log)", NULL, 0);
  if (nv < tk) ac_plot_band(&pl, (double)nv - 0.5, (double)tk - 0.5, pl.y0, pl.y1, "#888", 0.25);
  if (ok && nv > 0) {
    int64_t step = nv > 2000 ? nv / 2000 : 1, under = 0;
    for (int64_t j = 0; j < nv; j++) under += w[j] < pl.y0;
    if (under) {
      char t[96];
      snprintf(t, sizeof t, "%lld weights below %.0e drawn on the bottom edge", (long long)under, pl.y0);
      ac_plot_text(&pl, (double)tk - 0.5, pl.y0 * pow(pl.y1 / pl.y0, 0.1), "end", t);
    }
    fprintf(f, "<g fill=\"#1f77b4\" fill-opacity=\"0.8\">");
    for (int64_t j = 0; j < nv; j += step)
      fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>", ac_plot_px(&pl, (double)j), ac_plot_py(&pl, w[j]),
              nv > 300 ? 1.5 : 2.8);
    fprintf(f, "</g>\n");
  } else {
    ac_plot_text(&pl, (double)tk / 2, 1e-1, "middle", nv ? "scores not finite in binary64 (non-finite inputs or beyond its range)" : "no visible key");
  }
  const char *names[] = {"exact weight", "masked keys"};
  const char *cols[] = {"#1f77b4", "#c4c4c4"};
  ac_plot_legend(&pl, names, cols, nv < tk ? 2 : 1);
  ac_plot_end(&pl);
  free(w);
  ac_case_free(&c);
}

static double arr_at(json_object *a, int x) { return ac_rd_num(json_object_array_get_idx(a, (size_t)x)); }

/* |kernel - exact| per column of the row against the class's bound W (shaded: allowed). */
static void plot_row_error(FILE *f, json_object *row, int rank, int idx)
{
  json_object *ex, *kv, *wv;
  if (!json_object_object_get_ex(row, "exact", &ex) || !json_object_object_get_ex(row, "kernel", &kv) ||
      !json_object_object_get_ex(row, "W", &wv))
    return;
  int n = (int)json_object_array_length(ex);
  if (n <= 0 || (int)json_object_array_length(kv) != n || (int)json_object_array_length(wv) != n) return;
  int64_t d0 = (int64_t)ac_rd_get(row, "d0", 0);
  double *err = ac_xmalloc(sizeof(double) * (size_t)n * 3), *W = err + n, *x = W + n, lo = INFINITY, hi = 0;
  for (int j = 0; j < n; j++) {
    double a = arr_at(ex, j), k = arr_at(kv, j);
    err[j] = isnan(a) || isnan(k) ? NAN : fabs(k - a);
    W[j] = arr_at(wv, j);
    x[j] = (double)(d0 + j);
    for (int s = 0; s < 2; s++) {
      double v = s ? W[j] : err[j];
      if (v > 0 && isfinite(v)) lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    }
  }
  if (!(hi > 0)) lo = 1e-8, hi = 1;
  char id[64], title[160];
  snprintf(id, sizeof id, "row-error-%d", rank);
  snprintf(title, sizeof title, "Row (%lld,%lld,%lld): |kernel - exact| per column against W",
           (long long)ac_rd_get(row, "b", 0), (long long)ac_rd_get(row, "h", 0), (long long)ac_rd_get(row, "i", 0));
  ac_plot pl;
  ac_plot_begin(&pl, f, id, idx, 592, 260, title);
  ac_plot_range(&pl, x[0] - 0.5, x[n - 1] + 0.5, 0, pow(10, floor(log10(lo))), pow(10, ceil(log10(hi)) + 0.5), 1);
  ac_plot_axes(&pl, "output column d", "absolute error (log)", NULL, 0);
  /* W of each column across its width: the top of the shaded band and its edge line */
  char *pts = NULL;
  size_t np = 0;
  FILE *pf = open_memstream(&pts, &np);
  for (int j = 0; pf && j < n; j++)
    fprintf(pf, "%.1f,%.1f %.1f,%.1f ", ac_plot_px(&pl, x[j] - 0.5), ac_plot_py(&pl, W[j]), ac_plot_px(&pl, x[j] + 0.5),
            ac_plot_py(&pl, W[j]));
  if (pf) fclose(pf);
  if (pts) {
    fprintf(f, "<polygon fill=\"#2ca02c\" fill-opacity=\"0.18\" points=\"%s%.1f,%.1f %.1f,%.1f\"/>\n", pts,
            ac_plot_px(&pl, x[n - 1] + 0.5), ac_plot_py(&pl, pl.y0), ac_plot_px(&pl, x[0] - 0.5), ac_plot_py(&pl, pl.y0));
    fprintf(f, "<polyline fill=\"none\" stroke=\"#2ca02c\" stroke-width=\"2\" points=\"%s\"/>\n", pts);
  }
  free(pts);
  double r = n > 128 ? 1.6 : 3;
  for (int j = 0; j < n; j++)
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>", ac_plot_px(&pl, x[j]),
            ac_plot_py(&pl, isnan(err[j]) ? pl.y1 : err[j]), r, !(err[j] <= W[j]) ? "#d62728" : "#1f77b4");
  fputc('\n', f);
  const char *names[] = {"W (shaded: within budget)", "error above W", "error within W"};
  const char *cols[] = {"#2ca02c", "#d62728", "#1f77b4"};
  ac_plot_legend(&pl, names, cols, 3);
  ac_plot_end(&pl);
  free(err);
}

static void link(FILE *f, const ac_rdata *d, const char *sig, const char *name)
{
  fprintf(f, " <a href=\"");
  ac_html_esc(f, d->link_base);
  fprintf(f, "findings/");
  ac_html_esc(f, sig);
  fprintf(f, "/%s\">%s</a>", name, name);
}

void ac_report_findings(FILE *f, const char *dir, const ac_rdata *d, int idx0)
{
  if (d->nf) fprintf(f, "<h2>The findings</h2>\n");
  for (int i = 0; i < d->nf; i++) {
    json_object *js = d->f[i].js, *row = NULL;
    const char *sig = d->f[i].sig;
    fprintf(f, "<h3 id=\"f%d\">%d. <span class=\"%s\">", i + 1, i + 1, !strcmp(ac_rd_str(js, "policy"), "fail") ? "fail" : "warn");
    ac_html_esc(f, ac_rd_str(js, "kind"));
    fprintf(f, "</span> in family ");
    ac_html_esc(f, ac_rd_str(js, "family"));
    fprintf(f, ", ");
    ac_html_esc(f, ac_rd_str(js, "position"));
    fprintf(f, " row: err/W %.3g, err/E %.3g</h3>\n<p class=\"note\">", ac_rd_get(js, "err_w", 0),
            ac_rd_get(js, "err_e", 0));
    ac_html_esc(f, ac_rd_str(js, "note"));
    fprintf(f, "</p>\n<p>reproduce: <code>attncheck replay ");
    ac_html_esc(f, dir);
    fprintf(f, "/findings/");
    ac_html_esc(f, sig);
    fprintf(f, "</code> &middot; files:");
    link(f, d, sig, "repro.sh");
    link(f, d, sig, "case.npz");
    if (json_object_get_boolean(json_object_object_get(js, "minimized"))) link(f, d, sig, "minimized.npz");
    link(f, d, sig, "report.json");
    fprintf(f, "</p>\n");
    if (i >= AC_REPORT_ROW_PLOTS) continue;
    if (!json_object_object_get_ex(js, "worst_row", &row)) {
      fprintf(f, "<p class=\"note\">No worst row recorded for this finding (no output compared with the oracle).</p>\n");
      continue;
    }
    fprintf(f, "<div class=\"grid\">\n");
    plot_weights(f, dir, sig, row, i + 1, idx0 + 2 * i);
    plot_row_error(f, row, i + 1, idx0 + 2 * i + 1);
    fprintf(f, "</div>\n");
  }
}
