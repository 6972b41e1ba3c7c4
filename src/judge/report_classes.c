/* report_classes.c: one run judged under several classes (check and suite with --precision
 * repeated): a table with a column per class, each cell the status and the largest err/W (output
 * and LSE) of that class's judgement of the same kernel output. */
#include "config.h"
#include "report_classes.h"
#include <string.h>

void ac_class_table_init(ac_class_table *t, const char *const *specs, int n)
{
  memset(t, 0, sizeof *t);
  t->n = n;
  t->width = 14;
  for (int x = 0; x < n; x++) {
    size_t l = strlen(specs[x]);
    t->spec[x] = specs[x];
    if (l <= AC_CLASS_LABEL_MAX)
      snprintf(t->label[x], sizeof t->label[x], "%s", specs[x]);
    else
      snprintf(t->label[x], sizeof t->label[x], "[%d]", x + 1);
    if ((int)strlen(t->label[x]) > t->width) t->width = (int)strlen(t->label[x]);
  }
}

void ac_class_table_header(FILE *f, const ac_class_table *t)
{
  char e[1100];
  fprintf(f, "classes (attncheck list --precision CLASS): one run per case, judged under each\n");
  for (int x = 0; x < t->n; x++)
    if (strcmp(t->label[x], t->spec[x])) fprintf(f, "  %s = %s\n", t->label[x], ac_str_escape(t->spec[x], e, sizeof e));
  for (int x = 0; x < t->n; x++) fprintf(f, "%-*s  ", t->width, t->label[x]);
  fprintf(f, "kernel case\n");
}

double ac_class_cell_err_w(const ac_report *r)
{
  return r->has_lse && r->lse_max_err_w > r->max_err_w ? r->lse_max_err_w : r->max_err_w;
}

void ac_class_table_row(FILE *f, const ac_class_table *t, const char *kernel, const char *casename,
                        const ac_report *reps, const ac_policies *pol)
{
  char kn[600], cn[4400];
  for (int x = 0; x < t->n; x++) {
    ac_status st = ac_status_of(pol, reps[x].kinds);
    char cell[64];
    if (st == AC_STATUS_SKIP || (reps[x].n_judged == 0 && !reps[x].lse_judged))
      snprintf(cell, sizeof cell, "%s", ac_status_name(st));
    else
      snprintf(cell, sizeof cell, "%s %.3g", ac_status_name(st), ac_class_cell_err_w(&reps[x]));
    fprintf(f, "%-*s  ", t->width, cell);
  }
  fprintf(f, "%s %s\n", ac_str_escape(kernel, kn, sizeof kn), ac_str_escape(casename, cn, sizeof cn));
}
