/* report_html.c: report.html of a campaign directory (or a merged set of shards): inline SVG
 * plots of err/E and err/W per family, the search's progress, defects and findings over time, the
 * share of cases per family, the defects, the ranked findings with their worst rows, and the
 * stats. One self-contained file: no JavaScript, nothing fetched. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "groups.h"
#include "plot.h"
#include "report_data.h"
#include "report_html.h"

#define BIG 1e299            /* err/E and err/W of a non-finite output are stored as 1e300 */

const char *ac_report_css(void)
{
  return "body{font-family:'DejaVu Sans',Arial,sans-serif;margin:0;color:#222;background:#fff}"
         ".page{width:1200px;margin:0 16px 24px 16px}h1{font-size:22px}h2{font-size:18px;margin-top:28px}"
         "h3{font-size:15px;margin:18px 0 4px 0}.grid{display:flex;flex-wrap:wrap;gap:16px}"
         "svg.plot{display:block;max-width:100%;height:auto}"
         "table{border-collapse:collapse;width:100%;table-layout:fixed;font-size:13px}"
         "td,th{border:1px solid #ccc;padding:3px 5px;text-align:left;overflow-wrap:anywhere}th{background:#eee}"
         "td.n,.fail,.warn{white-space:nowrap}.fail{color:#b00;font-weight:bold}.warn{color:#a60}pre{background:#f6f6f6;padding:1em;"
         "white-space:pre-wrap;font-size:12px}code{word-break:break-all}.note{color:#555;font-size:13px}";
}

static const char *point_color(uint32_t kinds)
{
  if (kinds & (1u << AC_V_FAIL)) return "#d62728";
  if (kinds & (1u << AC_V_SUSPECT)) return "#ff7f0e";
  if (kinds & ~((1u << AC_V_SKIP) | (1u << AC_V_OUT_OF_DOMAIN))) return "#9467bd";
  return "#1f77b4";
}

/* Decade limits of the positive finite values of v[0..n) (within [lo_cap, hi]), widened to
 * show the reference line at ref. */
static void log_limits(const double *v, int n, double ref, double *y0, double *y1)
{
  double lo = ref / 10, hi = ref * 10;
  for (int i = 0; i < n; i++) {
    if (!(v[i] > 0) || v[i] >= BIG) continue;
    if (v[i] < lo) lo = v[i];
    if (v[i] > hi) hi = v[i];
  }
  if (lo < 1e-8) lo = 1e-8;
  *y0 = pow(10, floor(log10(lo)));
  *y1 = pow(10, ceil(log10(hi * 3)));   /* headroom above the largest point */
}

typedef struct {
  double v;
  uint32_t kinds;
} vk;

static int cmp_vk(const void *a, const void *b)
{
  const vk *x = a, *y = b;
  return (x->v > y->v) - (x->v < y->v);
}

/* Box (quartiles, median, min-max whisker) and up to 300 points of one family at x = cat. */
static void strip_one(ac_plot *pl, vk *v, int n, int cat)
{
  if (!n) return;
  qsort(v, (size_t)n, sizeof *v, cmp_vk);
  FILE *f = pl->f;
  if (n >= 5) {
    double q1 = v[n / 4].v, md = v[n / 2].v, q3 = v[(3 * n) / 4].v;
    double xa = ac_plot_px(pl, cat - 0.32), xb = ac_plot_px(pl, cat + 0.32), xm = ac_plot_px(pl, cat);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#777\"/>", xm, ac_plot_py(pl, v[0].v), xm,
            ac_plot_py(pl, v[n - 1].v));
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fff\" fill-opacity=\"0.6\" "
               "stroke=\"#555\"/>", xa, ac_plot_py(pl, q3), xb - xa, ac_plot_py(pl, q1) - ac_plot_py(pl, q3));
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\" stroke-width=\"2\"/>\n", xa,
            ac_plot_py(pl, md), xb, ac_plot_py(pl, md));
  }
  /* every point up to 300; beyond, the 60 largest and 240 spread evenly over the ranks */
  int shown = n <= 300 ? n : 300;
  for (int s = 0; s < shown; s++) {
    int i = n <= 300 ? s : s < 60 ? n - 1 - s : (int)((double)(s - 60) * (n - 61) / 239);
    unsigned hsh = (unsigned)i * 2654435761u;
    double x = cat + ((hsh >> 16) % 1000 / 1000.0 - 0.5) * 0.56;
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.6\" fill=\"%s\" fill-opacity=\"0.75\"/>", ac_plot_px(pl, x),
            ac_plot_py(pl, v[i].v), point_color(v[i].kinds));
  }
  fputc('\n', f);
}

/* err/E (which 0) or err/W (which 1) per family on a log axis. */
static void plot_strip(FILE *f, const ac_rdata *d, int which, int idx)
{
  const char *cats[AC_RD_MAXFAM];
  int catof[AC_RD_MAXFAM], nc = 0;
  int *cnt = ac_xcalloc(AC_RD_MAXFAM, sizeof(int));
  for (int i = 0; i < d->np; i++) cnt[d->p[i].fam]++;
  for (int i = 0; i < d->nfam; i++) {
    catof[i] = cnt[i] || d->fam_cases[i] ? nc : -1;
    if (catof[i] >= 0) cats[nc++] = d->fam[i];
  }
  double *all = ac_xmalloc(sizeof(double) * (size_t)(d->np + 1));
  for (int i = 0; i < d->np; i++) all[i] = which ? d->p[i].err_w : d->p[i].err_e;
  double ref = which ? 1 : d->kappa, y0, y1;
  log_limits(all, d->np, ref, &y0, &y1);
  ac_plot pl;
  ac_plot_begin(&pl, f, which ? "plot-err-w" : "plot-err-e", idx, 1200, 330,
                which ? "err/W per family (W: the class's worst-case bound; above 1 is FAIL)"
                      : "err/E per family (E: the typical error; above kappa is SUSPECT)");
  pl.mb = 84;
  ac_plot_range(&pl, 0, 1, 0, y0, y1, 1);
  ac_plot_axes(&pl, NULL, which ? "err/W (log)" : "err/E (log)", cats, nc);
  char lab[64];
  snprintf(lab, sizeof lab, "kappa = %g", d->kappa);
  ac_plot_hline(&pl, ref, "#d62728", which ? "W = 1" : lab, 1);
  vk *v = ac_xmalloc(sizeof *v * (size_t)(d->np + 1));
  for (int c = 0; c < d->nfam; c++) {
    if (catof[c] < 0) continue;
    int n = 0;
    for (int i = 0; i < d->np; i++)   /* NaN: a log written before case events carried err_w */
      if (d->p[i].fam == c && !isnan(all[i])) v[n].v = all[i], v[n++].kinds = d->p[i].kinds;
    strip_one(&pl, v, n, catof[c]);
  }
  const char *names[] = {"case with FAIL", "case with SUSPECT", "other finding", "case within budget"};
  const char *cols[] = {"#d62728", "#ff7f0e", "#9467bd", "#1f77b4"};
  ac_plot_legend(&pl, names, cols, 4);
  ac_plot_end(&pl);
  free(v);
  free(all);
  free(cnt);
}

static int cmp_by_t(const void *a, const void *b)
{
  const ac_rd_point *x = a, *y = b;
  return (x->t > y->t) - (x->t < y->t);
}

static int cmp_by_case(const void *a, const void *b)
{
  const ac_rd_point *x = a, *y = b;
  return (x->cs > y->cs) - (x->cs < y->cs);
}

/* Best err/E so far against time (by_case 0) or case number (1), over the cases themselves. */
static void plot_progress(FILE *f, const ac_rdata *d, int by_case, int idx)
{
  int n = d->np;
  ac_rd_point *p = ac_xmalloc(sizeof *p * (size_t)(n + 1));
  if (n > 0) {   /* d->p is NULL for a campaign without cases */
    memcpy(p, d->p, sizeof *p * (size_t)n);
    qsort(p, (size_t)n, sizeof *p, by_case ? cmp_by_case : cmp_by_t);
  }
  double *x = ac_xmalloc(sizeof(double) * (size_t)(n + 2)), *y = ac_xmalloc(sizeof(double) * (size_t)(n + 2));
  double *all = ac_xmalloc(sizeof(double) * (size_t)(n + 1)), best = 0, xmax = 1, y0, y1;
  int m = 0;
  for (int i = 0; i < n; i++) {
    double xv = by_case ? (double)p[i].cs : p[i].t, v = p[i].err_e;
    all[i] = v;
    if (xv > xmax) xmax = xv;
    if (v > best && v < BIG) {
      best = v;
      x[m] = xv, y[m++] = v;
    }
  }
  if (m) x[m] = xmax, y[m] = best, m++;
  log_limits(all, n, d->kappa, &y0, &y1);
  ac_plot pl;
  ac_plot_begin(&pl, f, by_case ? "plot-progress-case" : "plot-progress-time", idx, 592, 300,
                by_case ? "Best err/E by case number" : "Best err/E over time");
  ac_plot_range(&pl, 0, xmax, 0, y0, y1, 1);
  ac_plot_axes(&pl, by_case ? "case number" : "seconds since the start", "err/E (log)", NULL, 0);
  ac_plot_hline(&pl, d->kappa, "#d62728", "kappa", 1);
  int step = n > 3000 ? n / 3000 : 1;
  fprintf(f, "<g fill=\"#9aa9b8\" fill-opacity=\"0.5\">");
  for (int i = 0; i < n; i += step)
    if (all[i] > 0)
      fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.8\"/>", ac_plot_px(&pl, by_case ? (double)p[i].cs : p[i].t),
              ac_plot_py(&pl, all[i]));
  fprintf(f, "</g>\n");
  ac_plot_line(&pl, x, y, m, "#1f77b4", 1);
  const char *names[] = {"best so far", d->from_cases ? "a case" : "a finding"};
  const char *cols[] = {"#1f77b4", "#9aa9b8"};
  ac_plot_legend(&pl, names, cols, 2);
  ac_plot_end(&pl);
  free(p);
  free(x);
  free(y);
  free(all);
}

/* Cumulative findings by kind against time. */
static void plot_findings_time(FILE *f, const ac_rdata *d, int idx)
{
  double tmax = 1;
  for (int i = 0; i < d->nev; i++)
    if (d->ev[i].t > tmax) tmax = d->ev[i].t;
  for (int i = 0; i < d->np; i++)
    if (d->p[i].t > tmax) tmax = d->p[i].t;
  int per[AC_V_NKINDS] = {0}, ymax = 1;
  for (int i = 0; i < d->nev; i++)
    if (++per[d->ev[i].kind] > ymax) ymax = per[d->ev[i].kind];
  ac_plot pl;
  ac_plot_begin(&pl, f, "plot-findings-time", idx, 592, 300, "Findings over time, by kind");
  ac_plot_range(&pl, 0, tmax, 0, 0, ymax * 1.15 + 0.5, 0);
  ac_plot_axes(&pl, "seconds since the start", "findings (cumulative)", NULL, 0);
  const char *names[AC_V_NKINDS], *cols[AC_V_NKINDS];
  int nl = 0;
  double *x = ac_xmalloc(sizeof(double) * (size_t)(d->nev + 2)), *y = ac_xmalloc(sizeof(double) * (size_t)(d->nev + 2));
  for (int k = 0; k < AC_V_NKINDS; k++) {
    if (!per[k]) continue;
    int m = 0;
    x[m] = 0, y[m++] = 0;
    for (int i = 0; i < d->nev; i++)
      if (d->ev[i].kind == k) x[m] = d->ev[i].t, y[m] = y[m - 1] + 1, m++;
    x[m] = tmax, y[m] = y[m - 1], m++;
    cols[nl] = ac_plot_color(k == AC_V_FAIL ? 1 : k == AC_V_SUSPECT ? 3 : k + 2);
    names[nl++] = ac_verdict_name((ac_verdict_kind)k);
    ac_plot_line(&pl, x, y, m, cols[nl - 1], 1);
  }
  if (!nl) ac_plot_text(&pl, tmax / 2, ymax * 0.6, "middle", "no findings");
  ac_plot_legend(&pl, names, cols, nl);
  ac_plot_end(&pl);
  free(x);
  free(y);
}

/* Cumulative defects against time beside the findings: the curve that flattens when the kernel has
 * no more defects to show, whatever the findings do. */
static void plot_defects_time(FILE *f, const ac_rdata *d, int idx)
{
  double tmax = 1;
  for (int i = 0; i < d->nev; i++)
    if (d->ev[i].t > tmax) tmax = d->ev[i].t;
  for (int i = 0; i < d->np; i++)
    if (d->p[i].t > tmax) tmax = d->p[i].t;
  int n = d->ndefects, nf = d->nev, ymax = (nf > n ? nf : n) > 1 ? (nf > n ? nf : n) : 1;
  double *t = ac_xmalloc(sizeof(double) * (size_t)(n + 1)), *x = ac_xmalloc(sizeof(double) * (size_t)(n + nf + 2)),
         *y = ac_xmalloc(sizeof(double) * (size_t)(n + nf + 2));
  int m = 0;
  for (int g = 0; g < n; g++)
    if (isfinite(d->defect_t[g])) t[m++] = d->defect_t[g];
  for (int i = 1; i < m; i++)   /* insertion: a few defects */
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      double v = t[j];
      t[j] = t[j - 1], t[j - 1] = v;
    }
  ac_plot pl;
  ac_plot_begin(&pl, f, "plot-defects-time", idx, 592, 300, "Defects and findings over time");
  ac_plot_range(&pl, 0, tmax, 0, 0, ymax * 1.15 + 0.5, 0);
  ac_plot_axes(&pl, "seconds since the start", "cumulative count", NULL, 0);
  int k = 0;
  x[k] = 0, y[k++] = 0;
  for (int i = 0; i < nf; i++) x[k] = d->ev[i].t, y[k] = y[k - 1] + 1, k++;
  x[k] = tmax, y[k] = y[k - 1], k++;
  const char *names[2] = {"findings", "defects"}, *cols[2] = {"#9aa9b8", "#d62728"};
  ac_plot_line(&pl, x, y, k, cols[0], 1);
  k = 0;
  x[k] = 0, y[k++] = 0;
  for (int i = 0; i < m; i++) x[k] = t[i], y[k] = y[k - 1] + 1, k++;
  x[k] = tmax, y[k] = y[k - 1], k++;
  ac_plot_line(&pl, x, y, k, cols[1], 1);
  if (!nf && !m) ac_plot_text(&pl, tmax / 2, ymax * 0.6, "middle", "no findings");
  ac_plot_legend(&pl, names, cols, 2);
  ac_plot_end(&pl);
  free(t);
  free(x);
  free(y);
}

/* Share of cases per family (bars, percent). */
static void plot_family_share(FILE *f, const ac_rdata *d, int idx)
{
  const char *cats[AC_RD_MAXFAM];
  double share[AC_RD_MAXFAM], tot = 0, ymax = 1;
  int nc = 0;
  for (int i = 0; i < d->nfam; i++) tot += (double)d->fam_cases[i];
  for (int i = 0; i < d->nfam; i++)
    if (d->fam_cases[i] > 0) {
      share[nc] = 100.0 * (double)d->fam_cases[i] / tot;
      if (share[nc] > ymax) ymax = share[nc];
      cats[nc++] = d->fam[i];
    }
  ac_plot pl;
  ac_plot_begin(&pl, f, "plot-family-share", idx, 592, 300, "Share of cases per family");
  pl.mb = 84;
  ac_plot_range(&pl, 0, 1, 0, 0, ymax * 1.1, 0);
  ac_plot_axes(&pl, NULL, "% of cases", cats, nc);
  for (int i = 0; i < nc; i++) ac_plot_bar(&pl, i, share[i], 0.7, "#2ca02c");
  if (!nc) ac_plot_text(&pl, 0.5, ymax / 2, "middle", "no per-family counts in stats");
  ac_plot_end(&pl);
}

/* One row of the defects table: the number shown, kind (fail or warn), count, description,
 * families, the finding that shows it best (its section's anchor, -1: none) and its reproducer. */
static void defect_row(FILE *f, const ac_rdata *d, const char *num, const char *kind, int fail, int cnt, const char *desc,
                       const char *fams, int best, const char *sig)
{
  fprintf(f, "<tr><td>%s</td><td class=\"%s\">", num, fail ? "fail" : "warn");
  ac_html_esc(f, kind);
  fprintf(f, "</td><td class=\"n\">%d</td><td>", cnt);
  ac_html_esc(f, desc);
  fprintf(f, "</td><td>");
  ac_html_esc(f, fams);
  fprintf(f, "</td><td>");
  if (best >= 0) fprintf(f, "<a href=\"#f%d\">#%d</a> ", best + 1, best + 1);
  fprintf(f, "<a href=\"%sfindings/", d->link_base);
  ac_html_esc(f, sig);
  fprintf(f, "/repro.sh\">repro.sh</a></td></tr>\n");
}

/* The defects: each with its count, the families that found it, its best finding and repro.sh;
 * then the findings no defect records, grouped by mechanism. */
static void defects_table(FILE *f, const ac_rdata *d)
{
  fprintf(f, "<h2 id=\"defects\">Defects (%d): findings judged again that fail the same way or go with the same trigger</h2>\n<p class=\"note\">"
             "A defect is what its findings' minimized cases, judged again, show alike: the verdict kind, the "
             "quantities wrong and why, what the failure needs (each feature of the case taken away in turn) and "
             "whether it needs its dtype, or failures of any kind that go when the features one of them needs are "
             "taken away; family, row and dtype do not split a defect; a finding that did not fail again when judged "
             "again is listed with its number in parentheses and not counted (docs/fuzzing.md, "
             "&ldquo;Defects&rdquo;; the index: defects.json).</p>\n<table>\n"
             "<colgroup><col style=\"width:40px\"><col style=\"width:122px\"><col style=\"width:70px\"><col>"
             "<col style=\"width:230px\"><col style=\"width:110px\"></colgroup>\n<tr><th>#</th><th>kind</th>"
             "<th>findings</th><th>what fails, on what, needing what</th><th>families</th><th>best case</th></tr>\n",
          d->ndefects - d->nunconf - d->npend_groups);
  int *order = ac_xcalloc((size_t)d->dl.n + 1, sizeof *order);
  ac_defects_order(&d->dl, order);
  for (int k = 0; k < d->dl.n; k++) {
    const ac_defect_info *x = &d->dl.v[order[k]];
    char num[32], line[1400], fams[1100];
    snprintf(num, sizeof num, ac_defect_confirmed(x) ? "%d" : "(%d)", x->id);   /* unconfirmed: not counted */
    ac_defect_line(x, line, sizeof line);
    snprintf(fams, sizeof fams, "%s", x->families);
    for (char *c = fams; *c; c++)
      if (*c == ',') *c = ' ';
    int best = -1;
    for (int i = 0; i < d->nf && best < 0; i++)
      if (!strcmp(d->f[i].sig, x->rep)) best = i;
    defect_row(f, d, num, ac_verdict_name((ac_verdict_kind)x->fp.mode.kind), x->fail, x->nfind, line + strcspn(line, " ") + 1,
               fams, best, x->rep);
  }
  free(order);
  for (int g = 0; g < d->ndefects; g++) {   /* findings without a defect, by mechanism */
    int cnt = 0, first = -1;
    char fams[1100] = "";
    for (int i = 0; i < d->nf; i++) {
      if (d->f[i].defect != g || d->f[i].defect_id) continue;
      cnt++, first = first < 0 ? i : first;
      const char *fam = ac_rd_str(d->f[i].js, "family");
      if (!strstr(fams, fam) && strlen(fams) + strlen(fam) + 2 < sizeof fams)
        snprintf(fams + strlen(fams), sizeof fams - strlen(fams), "%s%s", fams[0] ? " " : "", fam);
    }
    if (first < 0) continue;
    ac_mech m;
    char desc[700];
    ac_mech_of(d->f[first].js, &m);
    ac_mech_desc(&m, desc, sizeof desc);
    strncat(desc, m.pending ? " (pending: the campaign stopped before it was judged again; not counted)"
                            : " (not judged again: grouped by mechanism)", sizeof desc - strlen(desc) - 1);
    defect_row(f, d, m.pending ? "(-)" : "-", m.kind, !strcmp(ac_rd_str(d->f[first].js, "policy"), "fail"), cnt, desc, fams, first, d->f[first].sig);
  }
  fprintf(f, "</table>\n");
}

static void findings_table(FILE *f, const ac_rdata *d)
{
  fprintf(f, "<h2 id=\"findings\">Findings (%d), ranked by severity then err/W</h2>\n<table>\n<colgroup>"
             "<col style=\"width:30px\"><col style=\"width:122px\"><col style=\"width:56px\"><col style=\"width:72px\">"
             "<col style=\"width:72px\"><col style=\"width:104px\"><col style=\"width:72px\"><col style=\"width:64px\">"
             "<col><col></colgroup>\n"
             "<tr><th>#</th><th>kind</th><th>policy</th><th>err/W</th><th>err/E</th><th>family</th><th>row</th>"
             "<th>defect</th><th>case (minimized)</th><th>signature</th></tr>\n", d->nf);
  for (int i = 0; i < d->nf; i++) {
    json_object *js = d->f[i].js;
    const char *pol = ac_rd_str(js, "policy");
    fprintf(f, "<tr><td>%d</td><td class=\"%s\">", i + 1, !strcmp(pol, "fail") ? "fail" : "warn");
    ac_html_esc(f, ac_rd_str(js, "kind"));
    fprintf(f, "</td><td>");
    ac_html_esc(f, pol);
    fprintf(f, "</td><td class=\"n\">%.3g</td><td class=\"n\">%.3g</td><td>", ac_rd_get(js, "err_w", 0), ac_rd_get(js, "err_e", 0));
    ac_html_esc(f, ac_rd_str(js, "family"));
    fprintf(f, "</td><td>");
    ac_html_esc(f, ac_rd_str(js, "position"));
    if (d->f[i].defect_id) fprintf(f, "</td><td class=\"n\"><a href=\"#defects\">%d</a></td><td>", d->f[i].defect_id);
    else fprintf(f, "</td><td class=\"n\"><a href=\"#defects\">-</a></td><td>");
    ac_html_esc(f, ac_rd_str(js, "size"));
    if (*ac_rd_str(js, "minimized_size")) {
      fprintf(f, " &rarr; ");
      ac_html_esc(f, ac_rd_str(js, "minimized_size"));
    }
    fprintf(f, "</td><td><a href=\"#f%d\">", i + 1);
    ac_html_esc(f, d->f[i].sig);
    fprintf(f, "</a></td></tr>\n");
  }
  fprintf(f, "</table>\n");
}

int ac_report_html(const char *dir, ac_err *e) { return ac_report_html_to(dir, NULL, e); }

int ac_report_html_to(const char *dir, const char *out, ac_err *e)
{
  ac_rdata d;
  char msg[4200];
  if (ac_rdata_load(dir, &d, msg, sizeof msg)) return ac_err_set(e, "%s", msg);
  if (out && !realpath(dir, msg)) snprintf(msg, sizeof msg, "%s", dir);
  if (out) snprintf(d.link_base, sizeof d.link_base, "%s/", msg);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) {
    ac_rdata_free(&d);
    return ac_err_set(e, "open_memstream failed");
  }
  fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>attncheck campaign</title>\n<style>%s</style>"
             "</head><body><div class=\"page\">\n<h1>attncheck campaign: ", ac_report_css());
  ac_html_esc(f, dir);
  fprintf(f, "</h1>\n<p>kernel <b>");
  ac_html_esc(f, d.kernel[0] ? d.kernel : "?");
  fprintf(f, "</b>: %lld cases, %d defects, %d findings. ", (long long)d.cases, d.ndefects - d.nunconf - d.npend_groups, d.nf);
  if (d.npending) fprintf(f, "%d finding%s not judged again before the campaign stopped (pending, not counted; <code>--resume</code> judges them). ",
                          d.npending, d.npending == 1 ? "" : "s");
  if (d.nunconf) fprintf(f, "%d more finding%s did not fail again when judged again (unconfirmed, listed with the defects, not counted). ",
                         d.nunconf, d.nunconf == 1 ? "" : "s");
  if (d.from_cases) fprintf(f, "The plots show the %d cases of log.jsonl.</p>\n", d.np);
  else fprintf(f, "log.jsonl holds no case events, so the plots show the findings only; run the campaign with "
                  "<code>--log-cases</code> to plot every case.</p>\n");
  fprintf(f, "<h2>Overview</h2>\n<div class=\"grid\">\n");
  plot_strip(f, &d, 0, 0);
  plot_strip(f, &d, 1, 1);
  plot_progress(f, &d, 0, 2);
  plot_progress(f, &d, 1, 3);
  plot_defects_time(f, &d, 4);
  plot_findings_time(f, &d, 5);
  plot_family_share(f, &d, 6);
  fprintf(f, "</div>\n");
  defects_table(f, &d);
  findings_table(f, &d);
  ac_report_findings(f, dir, &d, 7);
  fprintf(f, "<h2>Statistics</h2>\n<pre>");
  if (d.stats) ac_html_esc_lines(f, d.stats);
  fprintf(f, "</pre>\n</div></body></html>\n");
  fclose(f);
  char p[4096];
  snprintf(p, sizeof p, "%s/report.html", dir);
  int rc = ac_write_file_atomic(out ? out : p, buf, len, e);
  free(buf);
  ac_rdata_free(&d);
  return rc;
}
