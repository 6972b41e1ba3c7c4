/* suite_html.h: the HTML page of a suite run (attncheck suite --html FILE): a grid of cases x
 * (kernel, dtype) coloured by verdict with err/W (up to 8 columns a grid). */
#ifndef AC_SUITE_HTML_H
#define AC_SUITE_HTML_H
#include <stdint.h>
#include "util.h"
#include "verdict.h"

typedef struct {
  char name[128];        /* the suite case name (dtype first) */
  int dtype;             /* ac_dtype */
  ac_status status;
  double err_w;          /* max err/W of the case (output and LSE), 0 when nothing was judged */
  int kernel;            /* index into the kernel names */
} ac_suite_cell;

typedef struct {
  ac_suite_cell *c;
  int64_t n, cap;
} ac_suite_cells;

void ac_suite_cells_add(ac_suite_cells *s, int kernel, const char *name, int dtype, ac_status st, double err_w);
void ac_suite_cells_free(ac_suite_cells *s);
/* Writes the page to path atomically. -1 with a message when it cannot be written. */
int ac_suite_html(const char *path, const char *suite, const char *const *kernels, int nk, const ac_suite_cells *s,
                  ac_err *e);

#endif
