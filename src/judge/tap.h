/* tap.h: TAP (version 13) and JUnit XML output of a suite run. */
#ifndef AC_TAP_H
#define AC_TAP_H
#include <stdio.h>
#include "verdict.h"

typedef struct {
  char *name;      /* test name */
  ac_status status;
  char *summary;   /* the verdict line */
  char *detail;    /* detail lines (may be empty); for SKIP the reason */
  double seconds;
} ac_test_record;

typedef struct {
  ac_test_record *v;
  int n, cap;
} ac_test_log;

void ac_test_log_add(ac_test_log *l, const char *name, ac_status st, const char *summary, const char *detail,
                     double seconds);
void ac_test_log_free(ac_test_log *l);
/* TAP: "1..N", "ok I - name", "not ok I - name" for FAIL and ERROR, "ok I - name # SKIP why";
 * when every test skipped: "1..0 # SKIP reason". Details as "# " lines. */
void ac_tap_write(FILE *f, const ac_test_log *l);
/* JUnit XML: one <testsuite name=suite>, a <testcase> per test, <failure>, <error>, <skipped>. */
void ac_junit_write(FILE *f, const char *suite, const ac_test_log *l);

#endif
