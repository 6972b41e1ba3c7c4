/* quant_report_html.c: quant-report's page and JSON (quant_report_html.h). */
#include "config.h"
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plot.h"
#include "quant_report_html.h"
#include "report_html.h"

/* One plot: per format (x, categorical) the quantiles qs[0..nq) of each format's errors (a point
 * per quantile, a colour each), log y. */
static void quantile_plot(FILE *f, const ac_qrep *r, int index, const char *title, const char *ylabel, int lse)
{
  static const char *const names[4][4] = {{"p50", "p90", "p99", "max"}, {"p50", "p99", "max", ""}};
  int nq = lse ? 3 : 4;
  double lo = INFINITY, hi = 0;
  for (int i = 0; i < r->nf; i++)
    for (int k = 0; k < nq; k++) {
      double v = lse ? r->f[i].lq[k] : r->f[i].q[k];
      if (v > 0 && isfinite(v)) lo = fmin(lo, v), hi = fmax(hi, v);
    }
  if (!(hi > 0)) lo = 1e-8, hi = 1;
  ac_plot pl;
  ac_plot_begin(&pl, f, lse ? "quant-lse" : "quant-err", index, 860, 360, title);
  pl.mb = 90;
  ac_plot_range(&pl, -0.5, (double)r->nf - 0.5, 0, lo / 2, hi * 2, 1);
  const char *cats[64];
  for (int i = 0; i < r->nf && i < 64; i++) cats[i] = r->f[i].name;
  ac_plot_axes(&pl, "format", ylabel, cats, r->nf < 64 ? r->nf : 64);
  const char *cols[4];
  for (int k = 0; k < nq; k++) {
    cols[k] = ac_plot_color(k);
    for (int i = 0; i < r->nf; i++) {
      double x = (double)i, y = lse ? r->f[i].lq[k] : r->f[i].q[k];
      if (y > 0 && isfinite(y)) ac_plot_points(&pl, &x, &y, 1, cols[k], 4);
    }
  }
  ac_plot_legend(&pl, names[lse], cols, nq);
  ac_plot_end(&pl);
}

static void cell(FILE *f, double v)
{
  if (isfinite(v)) fprintf(f, "<td>%.3g</td>", v);
  else fprintf(f, "<td>-</td>");
}

int ac_quant_report_html(const char *path, const ac_qrep *r, ac_err *e)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return ac_err_set(e, "open_memstream failed");
  fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>attncheck quant-report</title>\n<style>%s</style>"
             "</head><body><div class=\"page\">\n<h1>attncheck quant-report</h1>\n<p class=\"note\">%lld case(s), %lld rows, "
             "%lld elements. K and V of each case quantized by each format's reference quantizer; the exact attention over "
             "those codes against the exact attention over the case's own values. Error of an element: |o_q - o| / "
             "(max V - min V), the range of V over its row's visible keys and every column; of a row: |lse_q - lse|. "
             "Information beside the verdicts: this is what the format costs, not a kernel's error.</p>\n",
          ac_report_css(), (long long)r->cases, (long long)r->rows, (long long)r->elems);
  fprintf(f, "<table><tr><th>format</th><th>p50</th><th>p90</th><th>p99</th><th>max</th><th>lse p50</th><th>lse p99</th>"
             "<th>lse max</th><th>elements</th><th>skipped</th></tr>\n");
  for (int i = 0; i < r->nf; i++) {
    const ac_qrep_fmt *q = &r->f[i];
    fprintf(f, "<tr><td><code>");
    ac_html_esc(f, q->name);
    fprintf(f, "</code></td>");
    for (int k = 0; k < 4; k++) cell(f, q->q[k]);
    for (int k = 0; k < 3; k++) cell(f, q->lq[k]);
    fprintf(f, "<td>%lld</td><td>%lld</td></tr>\n", (long long)q->nerr, (long long)q->skipped);
  }
  fprintf(f, "</table>\n");
  quantile_plot(f, r, 0, "output error per format (|o_q - o| / the row's V range)", "relative error", 0);
  quantile_plot(f, r, 1, "LSE error per format (|lse_q - lse|, natural log)", "absolute error", 1);
  fprintf(f, "</div></body></html>\n");
  fclose(f);
  int rc = ac_write_file_atomic(path, buf, len, e);
  free(buf);
  return rc;
}

static json_object *num(double v)
{
  if (isnan(v)) return json_object_new_string("nan");
  if (isinf(v)) return json_object_new_string(v > 0 ? "inf" : "-inf");
  return json_object_new_double(v);
}

int ac_quant_report_json(const char *path, const ac_qrep *r, ac_err *e)
{
  json_object *o = json_object_new_object(), *a = json_object_new_array();
  json_object_object_add(o, "cases", json_object_new_int64(r->cases));
  json_object_object_add(o, "rows", json_object_new_int64(r->rows));
  json_object_object_add(o, "elements", json_object_new_int64(r->elems));
  static const char *const qn[4] = {"p50", "p90", "p99", "max"}, *const ln[3] = {"lse_p50", "lse_p99", "lse_max"};
  for (int i = 0; i < r->nf; i++) {
    const ac_qrep_fmt *q = &r->f[i];
    json_object *x = json_object_new_object();
    json_object_object_add(x, "format", json_object_new_string(q->name));
    for (int k = 0; k < 4; k++) json_object_object_add(x, qn[k], num(q->q[k]));
    for (int k = 0; k < 3; k++) json_object_object_add(x, ln[k], num(q->lq[k]));
    json_object_object_add(x, "elements", json_object_new_int64(q->nerr));
    json_object_object_add(x, "skipped", json_object_new_int64(q->skipped));
    json_object_object_add(x, "cases_unfit", json_object_new_int64(q->unfit));
    json_object_array_add(a, x);
  }
  json_object_object_add(o, "formats", a);
  const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
  int rc = ac_write_file_atomic(path, text, strlen(text), e);
  json_object_put(o);
  return rc;
}
