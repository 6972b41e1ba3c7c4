/* compare_opts.c: the judging options (budget, empty-row convention, units) and the report
 * that collects a case's verdicts. */
#include "config.h"
#include "compare.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ac_compare_opts_init(ac_compare_opts *o)
{
  memset(o, 0, sizeof *o);
  o->budget = AC_BUDGET_CLASS;
  o->kappa = AC_KAPPA_DEFAULT;
  o->baseline_k = 2;
  o->empty = AC_EMPTY_ZERO;
}

int ac_budget_parse(const char *s, ac_compare_opts *o, ac_err *e)
{
  if (!strcmp(s, "class")) o->budget = AC_BUDGET_CLASS;
  else if (!strcmp(s, "fixed")) o->budget = AC_BUDGET_FIXED;
  else if (!strcmp(s, "baseline")) o->budget = AC_BUDGET_BASELINE;
  else if (!strncmp(s, "baseline:", 9)) {
    char *end;
    double k = strtod(s + 9, &end);
    if (*end || !(k > 0) || !isfinite(k)) return ac_err_set(e, "bad --budget '%s': k must be a positive number", s);
    o->budget = AC_BUDGET_BASELINE;
    o->baseline_k = k;
  } else return ac_err_set(e, "bad --budget '%s': expected class, baseline[:k] or fixed", s);
  return 0;
}

const ac_oracle_row *ac_compare_conv_row(const ac_compare_opts *opt, const ac_oracle_row *rw, ac_oracle_row *tmp)
{
  if (opt->alibi_lse != AC_ALIBI_LSE_FA2 || rw->alibi_shift == 0) return rw;
  *tmp = *rw;
  const double s = rw->alibi_shift, as = 2 * fabs(s) * (1 + 0x1p-50);
  tmp->lse = rw->lse_alt, tmp->lse_err = rw->lse_alt_err, tmp->lse_f32 = rw->lse_alt_f32, tmp->lse_how = rw->lse_alt_how;
  if (isfinite(rw->m)) tmp->m = rw->m + s;
  tmp->lse_s = rw->lse_s + as;
  tmp->max_abs_s = rw->max_abs_s + as;
  return tmp;
}

const ac_oracle_elem *ac_compare_conv_elem(const ac_compare_opts *opt, const ac_oracle_row *rw, const ac_oracle_elem *el,
                                           ac_oracle_elem *tmp)
{
  if (opt->alibi_lse != AC_ALIBI_LSE_FA2 || rw->alibi_shift == 0) return el;
  *tmp = *el;
  tmp->Sp = el->Sp + 2 * fabs(rw->alibi_shift) * (1 + 0x1p-50) * el->D;
  return tmp;
}

const char *ac_budget_describe(const ac_compare_opts *o, char *buf, size_t n)
{
  switch (o->budget) {
  case AC_BUDGET_BASELINE:
    snprintf(buf, n, "baseline:%gx%.3g", o->baseline_k, o->baseline_err);
    break;
  case AC_BUDGET_FIXED:
    snprintf(buf, n, "fixed:atol=%g,rtol=%g", o->atol, o->rtol);
    break;
  default:
    snprintf(buf, n, "class:%s,kappa=%g", o->prec ? o->prec->name : "default", o->kappa);
  }
  size_t len = strlen(buf);
  if (o->alibi_lse == AC_ALIBI_LSE_FA2 && len < n) snprintf(buf + len, n - len, ",alibi-lse=fa2");
  return buf;
}

int ac_empty_parse(const char *s, ac_empty_conv *out)
{
  if (!strcmp(s, "zero")) *out = AC_EMPTY_ZERO;
  else if (!strcmp(s, "nan")) *out = AC_EMPTY_NAN;
  else if (!strcmp(s, "skip")) *out = AC_EMPTY_SKIP;
  else if (!strcmp(s, "mean-v")) *out = AC_EMPTY_MEAN_V;
  else return -1;
  return 0;
}

const char *ac_empty_name(ac_empty_conv c)
{
  return c == AC_EMPTY_NAN ? "nan" : c == AC_EMPTY_SKIP ? "skip" : c == AC_EMPTY_MEAN_V ? "mean-v" : "zero";
}

void ac_report_init(ac_report *r, const ac_compare_opts *o)
{
  memset(r, 0, sizeof *r);
  r->budget = o->budget;
  r->prec_name = o->prec ? o->prec->name : NULL;
  r->prec_source = o->prec_source;
  r->kappa = o->kappa;
  ac_budget_describe(o, r->budget_desc, sizeof r->budget_desc);
  const char *rs = o->rows ? o->rows : "";
  snprintf(r->rows_spec, sizeof r->rows_spec, "%s", strlen(rs) < sizeof r->rows_spec ? rs : "list");
}

const ac_worst_elem *ac_report_worst(const ac_report *r)
{
  if (r->lse_worst.valid && (!r->worst.valid || r->lse_worst.err_w > r->worst.err_w)) return &r->lse_worst;
  return &r->worst;
}

void ac_report_add(ac_report *r, ac_verdict_kind k, const char *fmt, ...)
{
  r->kinds |= 1u << k;
  if (!fmt) return;
  size_t len = strlen(r->note);
  if (len + 4 >= sizeof r->note) return;
  if (len) {
    memcpy(r->note + len, "; ", 3);
    len += 2;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->note + len, sizeof r->note - len, fmt, ap);
  va_end(ap);
}
