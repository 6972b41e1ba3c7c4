/* suite_html.c: attncheck suite --html FILE: a grid of the suite's cases (rows) by kernel and
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

#define MAX_COLS 8   /* (kernel, dtype) columns per grid */
/* Row labels: left-aligned in an 11 px monospace font, whose glyphs advance 0.602 em (6.63 px;
 * 6.7 leaves room for rounding), in a label column as wide as the longest name needs, from 380 to
 * 560 px; a longer name is cut at the right with an ellipsis, the full name in its tooltip. */
#define LABEL_PX_PER_CHAR 6.7
#define LABEL_MIN_PX      380
#define LABEL_MAX_PX      560
#define LABEL_PAD_PX      6

/* The label column's width for names of at most maxlen characters. */
static int label_width(size_t maxlen)
{
  double w = 2 * LABEL_PAD_PX + LABEL_PX_PER_CHAR * (double)maxlen;
  return w < LABEL_MIN_PX ? LABEL_MIN_PX : w > LABEL_MAX_PX ? LABEL_MAX_PX : (int)ceil(w);
}

/* Row r's label at the left edge of the grid, cut to the label column with "…". */
static void row_label(FILE *f, const ac_plot *pl, int r, const char *name)
{
  size_t fit = (size_t)((pl->ml - 2 * LABEL_PAD_PX) / LABEL_PX_PER_CHAR), len = strlen(name);
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" font-family=\"'DejaVu Sans Mono',monospace\"><title>",
          LABEL_PAD_PX, pl->mt + 18 * r + 13);
  ac_html_esc(f, name);
  fprintf(f, "</title>");
  if (len <= fit)
    ac_html_esc(f, name);
  else {
    char cut[sizeof(((ac_suite_cell *)0)->name)];
    snprintf(cut, sizeof cut, "%.*s", (int)(fit > 1 ? fit - 1 : 0), name);
    ac_html_esc(f, cut);
    fprintf(f, "\xe2\x80\xa6"); /* U+2026 */
  }
  fprintf(f, "</text>\n");
}

typedef struct {
  int kernel, dtype;
  int64_t cnt[5];
} column;

/* One grid: rows are the cases (names without the dtype), columns cols[0..ncol). */
static void grid(FILE *f, int g, const column *cols, int ncol, const char *const *kernels, int nk, const ac_suite_cells *s)
{
  int nrow = 0;
  const char **rows = ac_xmalloc(sizeof(char *) * (size_t)(s->n + 1));
  int *rowof = ac_xmalloc(sizeof(int) * (size_t)(s->n + 1)), *colof = ac_xmalloc(sizeof(int) * (size_t)(s->n + 1));
  for (int64_t i = 0; i < s->n; i++) {
    const ac_suite_cell *c = &s->c[i];
    const char *b = base_name(c);
    int r = 0, x = 0;
    while (r < nrow && strcmp(rows[r], b)) r++;
    if (r == nrow) rows[nrow++] = b;
    while (x < ncol && (cols[x].kernel != c->kernel || cols[x].dtype != c->dtype)) x++;
    rowof[i] = r, colof[i] = x < ncol ? x : -1;
  }
  char id[64];
  snprintf(id, sizeof id, "suite-grid-%d", g + 1);
  ac_plot pl;
  size_t maxlen = 0;
  for (int r = 0; r < nrow; r++) maxlen = strlen(rows[r]) > maxlen ? strlen(rows[r]) : maxlen;
  ac_plot_begin(&pl, f, id, g, 1200, 100 + 18 * (nrow ? nrow : 1), nk > 1 ? "Cases x (kernel, dtype)" : kernels[0]);
  pl.ml = label_width(maxlen), pl.mt = 42, pl.mb = 18, pl.mr = 8;
  const char *names[] = {"PASS", "WARN", "FAIL", "SKIP", "ERROR"};
  ac_plot_legend(&pl, names, status_fill, 5);
  pl.mt = 80;
  double cw = (double)(pl.w - pl.ml - pl.mr) / MAX_COLS;
  pl.mr = (int)(pl.w - pl.ml - cw * ncol);
  ac_plot_range(&pl, 0, ncol, 0, 0, nrow ? nrow : 1, 0);
  for (int x = 0; x < ncol; x++) {
    const int64_t *n = cols[x].cnt;
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\">", pl.ml + cw * (x + 0.5), pl.mt - 26);
    ac_html_esc(f, kernels[cols[x].kernel]);
    fprintf(f, "</text><text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-weight=\"bold\">%s</text>"
               "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">%lld of %lld fail</text>\n",
            pl.ml + cw * (x + 0.5), pl.mt - 14, ac_dtype_name((ac_dtype)cols[x].dtype), pl.ml + cw * (x + 0.5), pl.mt - 3,
            (long long)n[AC_STATUS_FAIL], (long long)(n[0] + n[1] + n[2] + n[4]));
  }
  for (int r = 0; r < nrow; r++) row_label(f, &pl, r, rows[r]);
  for (int64_t i = 0; i < s->n; i++) {
    const ac_suite_cell *c = &s->c[i];
    if (colof[i] < 0) continue;
    double x = pl.ml + cw * colof[i] + 1.5, y = pl.mt + 18 * rowof[i] + 1.5;
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
  free(colof);
}

/* The (kernel, dtype) columns with a case that is not SKIP (all of a kernel's dtypes when
 * every case skipped). */
static int columns(const ac_suite_cells *s, int nk, column *cols)
{
  int n = 0;
  for (int k = 0; k < nk; k++) {
    int64_t cnt[AC_NDTYPES][5];
    memset(cnt, 0, sizeof cnt);
    int any = 0;
    for (int64_t i = 0; i < s->n; i++)
      if (s->c[i].kernel == k) cnt[s->c[i].dtype][s->c[i].status]++, any |= s->c[i].status != AC_STATUS_SKIP;
    for (int t = 0; t < AC_NDTYPES; t++) {
      int64_t tot = cnt[t][0] + cnt[t][1] + cnt[t][2] + cnt[t][3] + cnt[t][4];
      if (!tot || (any && tot == cnt[t][AC_STATUS_SKIP])) continue;
      cols[n].kernel = k, cols[n].dtype = t;
      memcpy(cols[n++].cnt, cnt[t], sizeof cnt[t]);
    }
  }
  return n;
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
             "per kernel and dtype (dtypes in which every case was SKIP are left out); a column's head counts the "
             "cases that failed of those that ran; a cell gives the verdict (colour) and the largest err/W of the case (output and LSE; W is the "
             "worst-case bound of the kernel's precision class, above 1 is FAIL). Reproduce a case with "
             "<code>attncheck suite --kernel K --case NAME</code>.</p>\n", suite, ac_report_css(), suite);
  column *cols = ac_xmalloc(sizeof *cols * (size_t)(nk * AC_NDTYPES + 1));
  int ncol = columns(s, nk, cols);
  for (int x = 0, g = 0; x < ncol; x += MAX_COLS, g++) grid(f, g, cols + x, ncol - x < MAX_COLS ? ncol - x : MAX_COLS, kernels, nk, s);
  free(cols);
  fprintf(f, "</div></body></html>\n");
  fclose(f);
  int rc = ac_write_file_atomic(path, buf, len, e);
  free(buf);
  return rc;
}
