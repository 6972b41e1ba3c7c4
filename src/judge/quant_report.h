/* quant_report.h: what a quantized KV cache costs in accuracy (attncheck quant-report,
 * docs/quantized.md "What a cache format costs"): for each format and granularity, K and V of an
 * unquantized case quantized by the format's reference quantizer, the exact attention over those
 * codes against the exact attention over the case's own values. Per output element the error is
 * |o_q - o| / (max V - min V), the range of V over the row's visible keys and every column (the
 * output of any normalized weighting lies within it); per row |lse_q - lse|. Information, not a
 * verdict: nothing here fails. */
#ifndef AC_QUANT_REPORT_H
#define AC_QUANT_REPORT_H
#include <stdint.h>
#include "casefile.h"

typedef struct {
  ac_qspec spec;
  char name[48];                   /* "q4_0", "e4m3fn:token" */
  double *err; int64_t nerr, cap;  /* every element's relative error */
  double *lse; int64_t nlse, capl; /* every row's LSE error */
  int64_t skipped;                 /* elements not compared: a non-finite value, a row whose V is one value */
  int64_t unfit;                   /* cases whose head dims the format's block does not divide */
  double q[4];                     /* after ac_qrep_finish: p50, p90, p99, max of err */
  double lq[3];                    /* p50, p99, max of lse */
} ac_qrep_fmt;

typedef struct {
  int nf;
  ac_qrep_fmt *f;
  int64_t cases, rows, elems;
} ac_qrep;

/* The formats to report: a comma list of FMT[:GRANULARITY] (NULL: every format at its default
 * granularity, and e4m3fn:token, int8:channel, int4:channel). -1 with one line. */
int ac_qrep_init(ac_qrep *r, const char *formats, ac_err *e);
void ac_qrep_free(ac_qrep *r);
/* One unquantized case (rows: an oracle row selection or NULL, threads for the oracle): -1 with
 * one line for a case that has quantized tensors or that the oracle refuses. */
int ac_qrep_add_case(ac_qrep *r, const ac_case *c, const char *rows, int threads, ac_err *e);
/* Quantiles of every format's errors. */
void ac_qrep_finish(ac_qrep *r);

#endif
