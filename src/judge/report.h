/* report.h: the verdict line of a case, the worst-element detail, and JSON. */
#ifndef AC_REPORT_H
#define AC_REPORT_H
#include <stdio.h>
#include "compare.h"

/* One line:  STATUS  KERNEL  CASE  KINDS  err/W=.. err/E=.. ulps=.. nmse=.. bad=N/M rows=J/T[(SPEC)]
 *            [mismatch=".."] [overflow=N(..)] DTYPE budget=..
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
/* "J/T": rows judged of the case's rows; "J/T(SPEC)" for a row sample (--rows, suite's and fuzz's samples). */
const char *ac_report_rows(const ac_report *r, char *buf, size_t n);
/* The kind of a non-finite or convention mismatch, e.g. "nan where exact is finite", of the worst
 * element, else of the worst LSE (prefixed "lse "); NULL when both are finite values. */
const char *ac_report_mismatch(const ac_report *r, char *buf, size_t n);
const char *ac_report_mismatch_elem(const ac_worst_elem *w, char *buf, size_t n);

#endif
