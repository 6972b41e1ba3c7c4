/* suite_html.c: attncheck suite --html FILE: per kernel a grid of the suite's cases (rows) by
 * dtype (columns), each cell coloured by its verdict and labelled with err/W; inline SVG, no
 * JavaScript, nothing fetched. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dtype.h"
#include "plot.h"
#include "report_html.h"
#include "suite_html.h"

void ac_suite_cells_add(ac_suite_cells *s, int kernel, const char *name, int dtype, ac_status st, double err_w)
{
  if (s->n == s->cap) s->c = ac_xrealloc(s->c, sizeof *s->c * (size_t)(s->cap = s->cap ? 2 * s->cap : 256));
  ac_suite_cell *c = &s->c[s->n++];
  snprintf(c->name, sizeof c->name, "%s", name);
  c->dtype = dtype, c->status = st, c->err_w = err_w, c->kernel = kernel;
}

void ac_suite_cells_free(ac_suite_cells *s)
{
  free(s->c);
  memset(s, 0, sizeof *s);
}

static const char *status_fill[] = {"#a6dba0", "#fdc86e", "#e8646a", "#dedede", "#c2a5cf"};

/* The case name without its leading "DTYPE-". */
static const char *base_name(const ac_suite_cell *c)
{
  const char *dn = ac_dtype_name((ac_dtype)c->dtype);
  size_t l = strlen(dn);
  return !strncmp(c->name, dn, l) && c->name[l] == '-' ? c->name + l + 1 : c->name;
}

static void grid(FILE *f, const char *kname, int k, const ac_suite_cells *s)
{
  int nrow = 0, cols[AC_NDTYPES], ncol = 0, colof[AC_NDTYPES];
  const char **rows = ac_xmalloc(sizeof(char *) * (size_t)(s->n + 1));
  int *rowof = ac_xmalloc(sizeof(int) * (size_t)(s->n + 1));
  int64_t cnt[5] = {0};
  for (int t = 0; t < AC_NDTYPES; t++) colof[t] = -1;
  for (int64_t i = 0; i < s->n; i++) {
    const ac_suite_cell *c = &s->c[i];
    rowof[i] = -1;
    if (c->kernel != k) continue;
    cnt[c->status]++;
    const char *b = base_name(c);
    int r = 0;
    while (r < nrow && strcmp(rows[r], b)) r++;
    if (r == nrow) rows[nrow++] = b;
    rowof[i] = r;
    if (colof[c->dtype] < 0) colof[c->dtype] = 1;
  }
  for (int t = 0; t < AC_NDTYPES; t++)
    if (colof[t] > 0) colof[t] = ncol, cols[ncol++] = t;
  char id[64], title[400];
  snprintf(id, sizeof id, "suite-grid-%d", k + 1);
  snprintf(title, sizeof title, "%s: %lld pass, %lld warn, %lld fail, %lld skip, %lld error", kname, (long long)cnt[0],
           (long long)cnt[1], (long long)cnt[2], (long long)cnt[3], (long long)cnt[4]);
  ac_plot pl;
  ac_plot_begin(&pl, f, id, k, 1200, 80 + 18 * (nrow ? nrow : 1), title);
  pl.ml = 380, pl.mt = 42, pl.mb = 18, pl.mr = 8;
  const char *names[] = {"PASS", "WARN", "FAIL", "SKIP", "ERROR"};
  ac_plot_legend(&pl, names, status_fill, 5);
  pl.mt = 62;
  ac_plot_range(&pl, 0, ncol ? ncol : 1, 0, 0, nrow ? nrow : 1, 0);
  double cw = (double)(pl.w - pl.ml - pl.mr) / (ncol ? ncol : 1);
  for (int x = 0; x < ncol; x++)
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-weight=\"bold\">%s</text>\n", pl.ml + cw * (x + 0.5),
            pl.mt - 4, ac_dtype_name((ac_dtype)cols[x]));
  for (int r = 0; r < nrow; r++) {
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"11\">", pl.ml - 6, pl.mt + 18 * r + 13);
    ac_html_esc(f, rows[r]);
    fprintf(f, "</text>\n");
  }
  for (int64_t i = 0; i < s->n; i++) {
    const ac_suite_cell *c = &s->c[i];
    if (rowof[i] < 0) continue;
    double x = pl.ml + cw * colof[c->dtype] + 1.5, y = pl.mt + 18 * rowof[i] + 1.5;
    char lab[32];
    if (c->status == AC_STATUS_SKIP || c->status == AC_STATUS_ERROR || !(c->err_w > 0))
      snprintf(lab, sizeof lab, "%s", c->status == AC_STATUS_PASS ? "exact" : ac_status_name(c->status));
    else snprintf(lab, sizeof lab, "err/W %.2g", c->err_w >= 1e299 ? INFINITY : c->err_w);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"15\" fill=\"%s\"><title>", x, y, cw - 3,
            status_fill[c->status]);
    ac_html_esc(f, c->name);
    fprintf(f, ": %s</title></rect><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">%s</text>\n",
            ac_status_name(c->status), x + (cw - 3) / 2, y + 11.5, lab);
  }
  ac_plot_end(&pl);
  free(rows);
  free(rowof);
}

int ac_suite_html(const char *path, const char *suite, const char *const *kernels, int nk, const ac_suite_cells *s,
                  ac_err *e)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return ac_err_set(e, "open_memstream failed");
  fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>attncheck suite %s</title>\n<style>%s</style>"
             "</head><body><div class=\"page\">\n<h1>attncheck suite %s</h1>\n<p class=\"note\">One row per case, one column "
             "per dtype; a cell gives the verdict (colour) and the largest err/W of the case (output and LSE; W is the "
             "worst-case bound of the kernel's precision class, above 1 is FAIL). Reproduce a case with "
             "<code>attncheck suite --kernel K --case NAME</code>.</p>\n", suite, ac_report_css(), suite);
  for (int k = 0; k < nk; k++) grid(f, kernels[k], k, s);
  fprintf(f, "</div></body></html>\n");
  fclose(f);
  int rc = ac_write_file_atomic(path, buf, len, e);
  free(buf);
  return rc;
}
