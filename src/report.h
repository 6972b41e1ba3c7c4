/* report.h: the verdict line of a case, the worst-element detail, and JSON. */
#ifndef AC_REPORT_H
#define AC_REPORT_H
#include <stdio.h>
#include "compare.h"

/* One line:  STATUS  KERNEL  CASE  KINDS  err/W=.. err/E=.. ulps=.. nmse=.. bad=N/M budget=..
 * STATUS is PASS, WARN, FAIL, SKIP or ERROR; KINDS lists the verdict kinds present ("-" if none). */
void ac_report_line(FILE *f, const char *kernel, const char *casename, const ac_report *r, const ac_policies *pol,
                    ac_dtype t);
/* Indented detail lines: the notes, the worst element and LSE, and the reproducer (if non-NULL). */
void ac_report_detail(FILE *f, const ac_report *r, ac_dtype t, const char *repro);
/* A JSON object (no trailing newline). */
void ac_report_json(FILE *f, const char *kernel, const char *casename, const ac_report *r, const ac_policies *pol,
                    ac_dtype t, const char *repro);
/* A JSON string literal. */
void ac_json_string(FILE *f, const char *s);
/* "FAIL,SUSPECT" or "-". */
const char *ac_report_kinds(uint32_t kinds, char *buf, size_t n);

#endif
