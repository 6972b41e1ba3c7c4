/* quant_report.c: the accuracy a quantized KV cache costs (quant_report.h). */
#include "config.h"
#include "quant_report.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "oracle.h"
#include "quant.h"
#include "variants.h"

static const char *const default_formats[] = {"q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl", "e4m3fn", "e4m3fn:token",
                                              "e4m3fnuz", "e5m2", "int8:token", "int8:channel", "int4:token",
                                              "int4:channel", "nvfp4", "mxfp4"};

static int add_format(ac_qrep *r, const char *s, ac_err *e)
{
  ac_qspec q;
  if (ac_qspec_parse(s, &q, e)) return -1;
  r->f = ac_xrealloc(r->f, sizeof *r->f * (size_t)(r->nf + 1));
  ac_qrep_fmt *f = &r->f[r->nf++];
  memset(f, 0, sizeof *f);
  f->spec = q;
  ac_qspec_str(&q, f->name, sizeof f->name);
  return 0;
}

int ac_qrep_init(ac_qrep *r, const char *formats, ac_err *e)
{
  memset(r, 0, sizeof *r);
  if (!formats) {
    for (size_t i = 0; i < sizeof default_formats / sizeof default_formats[0]; i++)
      if (add_format(r, default_formats[i], e)) return -1;
    return 0;
  }
  char *dup = ac_xstrdup(formats), *save = NULL;
  int rc = 0;
  for (char *t = strtok_r(dup, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) rc = add_format(r, t, e);
  free(dup);
  if (!rc && !r->nf) rc = ac_err_set(e, "no format named");
  if (rc) ac_qrep_free(r);
  return rc;
}

void ac_qrep_free(ac_qrep *r)
{
  for (int i = 0; i < r->nf; i++) free(r->f[i].err), free(r->f[i].lse);
  free(r->f);
  memset(r, 0, sizeof *r);
}

static void push(double **a, int64_t *n, int64_t *cap, double x)
{
  if (*n == *cap) *a = ac_xrealloc(*a, sizeof **a * (size_t)(*cap = *cap ? 2 * *cap : 1024));
  (*a)[(*n)++] = x;
}

/* Per row, the range of V over its visible keys, every column (the case's own values). */
static double *v_ranges(const ac_case *c)
{
  const ac_problem *p = &c->p;
  int64_t nrows = p->batch * p->heads * p->tq;
  double *rg = ac_xmalloc(sizeof *rg * (size_t)(nrows ? nrows : 1));
  const ac_dtype vt = ac_tensor_dtype(p, 'v');
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int64_t j = 0; j < p->tk; j++) {
          if (!ac_features_visible(c, b, h, i, j)) continue;
          for (int64_t t = 0; t < p->dv; t++) {
            double v = ac_load(vt, c->v, ac_vidx(p, b, ac_kv_head(p, h), j, t));
            if (v < lo) lo = v;
            if (v > hi) hi = v;
          }
        }
        rg[ac_rowidx(p, b, h, i)] = hi - lo;
      }
  return rg;
}

static int oracle(const ac_case *c, const char *rows, int threads, ac_oracle_result *r, ac_err *e)
{
  ac_oracle_opts o;
  ac_oracle_opts_init(&o);
  o.rows = rows;
  o.threads = threads;
  return ac_oracle_run(c, &o, r, e);
}

/* The errors of format f on case c against the exact result x (rg: the V ranges). */
static int one_format(ac_qrep_fmt *f, const ac_case *c, const ac_oracle_result *x, const double *rg, const char *rows,
                      int threads, ac_err *e)
{
  ac_case q;
  ac_err qe;
  if (ac_case_copy(&q, c, e)) return -1;
  if (ac_quant_apply(&q, 'k', &f->spec, &qe) || ac_quant_apply(&q, 'v', &f->spec, &qe)) {
    ac_case_free(&q);
    f->unfit++;   /* a head dim its block does not divide: left out of this format */
    return 0;
  }
  ac_oracle_result y;
  int rc = oracle(&q, rows, threads, &y, e);
  ac_case_free(&q);
  if (rc) return -1;
  int64_t dv = c->p.dv;
  for (int64_t row = 0; row < x->nrows; row++) {
    const ac_oracle_row *a = &x->rows[row], *b = &y.rows[row];
    if (!a->selected || a->visible <= 0) continue;
    if (isfinite(a->lse) && isfinite(b->lse)) push(&f->lse, &f->nlse, &f->capl, fabs(b->lse - a->lse));
    for (int64_t t = 0; t < dv; t++) {
      const ac_oracle_elem *ea = ac_oracle_elem_at(x, row, t), *eb = ac_oracle_elem_at(&y, row, t);
      double range = rg[row];
      if (ea->accept != AC_ACCEPT_VALUE || eb->accept != AC_ACCEPT_VALUE || !(range > 0) || !isfinite(range)) {
        f->skipped++;
        continue;
      }
      push(&f->err, &f->nerr, &f->cap, fabs(eb->o - ea->o) / range);
    }
  }
  ac_oracle_result_free(&y);
  return 0;
}

int ac_qrep_add_case(ac_qrep *r, const ac_case *c, const char *rows, int threads, ac_err *e)
{
  if (c->lay) return ac_err_set(e, "quant-report takes dense cases (a serving layout's codes are those of its tokens)");
  if (ac_problem_quantized(&c->p))
    return ac_err_set(e, "the case has quantized tensors: quant-report quantizes a case's own values (one written "
                         "without --kv-format)");
  ac_oracle_result x;
  if (oracle(c, rows, threads, &x, e)) return -1;
  double *rg = v_ranges(c);
  int rc = 0;
  for (int i = 0; i < r->nf && !rc; i++) rc = one_format(&r->f[i], c, &x, rg, rows, threads, e);
  r->cases++;
  for (int64_t row = 0; row < x.nrows; row++) r->rows += x.rows[row].selected;
  r->elems += (int64_t)ac_oracle_nstored(&x) * c->p.dv;
  free(rg);
  ac_oracle_result_free(&x);
  return rc;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double quantile(const double *s, int64_t n, double q)
{
  if (n <= 0) return NAN;
  int64_t k = (int64_t)ceil(q * (double)n) - 1;
  return s[k < 0 ? 0 : k >= n ? n - 1 : k];
}

void ac_qrep_finish(ac_qrep *r)
{
  for (int i = 0; i < r->nf; i++) {
    ac_qrep_fmt *f = &r->f[i];
    qsort(f->err, (size_t)f->nerr, sizeof *f->err, cmp_double);
    qsort(f->lse, (size_t)f->nlse, sizeof *f->lse, cmp_double);
    f->q[0] = quantile(f->err, f->nerr, 0.5);
    f->q[1] = quantile(f->err, f->nerr, 0.9);
    f->q[2] = quantile(f->err, f->nerr, 0.99);
    f->q[3] = quantile(f->err, f->nerr, 1.0);
    f->lq[0] = quantile(f->lse, f->nlse, 0.5);
    f->lq[1] = quantile(f->lse, f->nlse, 0.99);
    f->lq[2] = quantile(f->lse, f->nlse, 1.0);
  }
}
