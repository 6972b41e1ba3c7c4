/* report_html.h: the pieces of the HTML reports (campaign report.html, suite --html). */
#ifndef AC_REPORT_HTML_H
#define AC_REPORT_HTML_H
#include <stdio.h>
#include "casefile.h"
#include "report_data.h"

/* The page's stylesheet (shared by the campaign and the suite pages). */
const char *ac_report_css(void);
/* One section per finding of d: title, note, repro command, links to the finding's files and,
 * for the first AC_REPORT_ROW_PLOTS, the worst row drawn (exact softmax weights per key with
 * the mask, and |kernel - exact| per column against W). Plot frames use colour indices from
 * idx0 on. */
#define AC_REPORT_ROW_PLOTS 24
void ac_report_findings(FILE *f, const char *dir, const ac_rdata *d, int idx0);
/* Softmax weights of row (b, h, i) of c in binary64 from its stored inputs, each tensor read in
 * its own dtype (a quantized one's exact values): w[0..tk), the number of visible keys (a
 * prefix) in *nv. -1 when a score is not finite in binary64. */
int ac_report_row_weights(const ac_case *c, int64_t b, int64_t h, int64_t i, double *w, int64_t *nv);
#endif
