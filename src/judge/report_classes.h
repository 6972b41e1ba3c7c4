/* report_classes.h: the table of a run judged under several precision classes (check and suite
 * with --precision repeated): a column per class, one row per kernel and case. */
#ifndef AC_REPORT_CLASSES_H
#define AC_REPORT_CLASSES_H
#include <stdio.h>
#include "judge.h"
#include "report.h"

/* A class given longer than this is labelled [N] in the header, its string on a line of its own. */
#define AC_CLASS_LABEL_MAX 24

typedef struct {
  int n, width;
  const char *spec[AC_JUDGE_MAX_CLASSES];
  char label[AC_JUDGE_MAX_CLASSES][AC_CLASS_LABEL_MAX + 8];
} ac_class_table;

void ac_class_table_init(ac_class_table *t, const char *const *specs, int n);
/* The legend (classes labelled [N]) and the header line: the column labels, then "kernel case". */
void ac_class_table_header(FILE *f, const ac_class_table *t);
/* One row: per class "STATUS err/W" (the larger of the output's and the LSE's; SKIP and ERROR
 * alone), then the kernel and the case. */
void ac_class_table_row(FILE *f, const ac_class_table *t, const char *kernel, const char *casename,
                        const ac_report *reps, const ac_policies *pol);
/* The err/W of a cell. */
double ac_class_cell_err_w(const ac_report *r);

#endif
