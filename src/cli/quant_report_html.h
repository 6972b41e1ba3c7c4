/* quant_report_html.h: attncheck quant-report --html and --json (cmd_quant_report.c). */
#ifndef AC_QUANT_REPORT_HTML_H
#define AC_QUANT_REPORT_HTML_H
#include "quant_report.h"
#include "util.h"

/* A self-contained page: the table, and per format the quantiles of both errors on log axes (inline
 * SVG, nothing fetched). Written atomically. */
int ac_quant_report_html(const char *path, const ac_qrep *r, ac_err *e);
/* {"cases": N, "rows": N, "elements": N, "formats": [{"format": "q4_0", "p50": ..., "p90", "p99", "max",
 * "lse_p50", "lse_p99", "lse_max", "elements", "skipped", "cases_unfit"}]}; non-finite numbers as strings. */
int ac_quant_report_json(const char *path, const ac_qrep *r, ac_err *e);

#endif
