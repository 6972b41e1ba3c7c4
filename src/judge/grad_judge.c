/* grad_judge.c: a kernel's backward against the exact backward oracle (grad_judge.h). */
#include "config.h"
#include "grad_judge.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "budget.h"
#include "layout.h"

const char *ac_grad_tensor_name(int t)
{
  static const char *const n[] = {"dq", "dk", "dv", "dsink"};
  return t >= 0 && t < 4 ? n[t] : "?";
}

int ac_grad_forward_inputs(const ac_case *c, void **o, float **lse, ac_err *e)
{
  return ac_grad_forward_inputs_as(c, AC_ALIBI_LSE_ABI, o, lse, e);
}

int ac_grad_forward_inputs_as(const ac_case *c, int alibi_lse, void **o, float **lse, ac_err *e)
{
  ac_oracle_opts oo;
  ac_oracle_opts_init(&oo);
  oo.threads = 1;
  ac_oracle_result r;
  if (ac_oracle_run(c, &oo, &r, e)) return -1;
  const ac_problem *p = &c->p;
  const ac_dtype od = ac_tensor_dtype(p, 'o');
  *o = ac_xmalloc((size_t)(r.nrows * p->dv) * ac_dtype_size(od) + 1);
  *lse = ac_xmalloc((size_t)r.nrows * sizeof(float) + 1);
  for (int64_t x = 0; x < r.nrows; x++) {
    for (int64_t t = 0; t < p->dv; t++)
      ac_store_bits(od, *o, (size_t)(x * p->dv + t), r.o_round[od][ac_oracle_slot(&r, x) * p->dv + t]);
    (*lse)[x] = alibi_lse == AC_ALIBI_LSE_FA2 ? r.rows[x].lse_alt_f32 : r.rows[x].lse_f32;
  }
  ac_oracle_result_free(&r);
  return 0;
}

/* The forward's overflow rule (compare.c): a working value within dev of the exact g may round
 * past the format's largest value, to inf of g's sign (NaN for e4m3, which has no inf); such an
 * element is within budget when |g| + dev reaches max + ½ ulp(max). */
static int grad_overflow_within(ac_dtype dt, const ac_grad_elem *el, double got, double dev)
{
  if (!isfinite(el->g) || el->g == 0 || !(dev >= 0)) return 0;
  int over = dt == AC_E4M3 ? isnan(got) : isinf(got) && (got > 0) == (el->g > 0);
  double maxf = ac_dtype_get(dt)->max_finite;
  return over && fabs(el->g) + dev >= maxf + 0.5 * ac_ulp(dt, maxf);
}

/* One element: exact el, kernel bits, budget terms w and e (before the margin). */
static void judge_elem(ac_grad_tjudge *tj, ac_dtype dt, const ac_grad_elem *el, uint64_t bits, double w, double e,
                       int64_t x, int64_t t)
{
  if (el->how == AC_HOW_UNRESOLVED) { /* the oracle's last approximation is no exact value */
    tj->unresolved++;
    return;
  }
  double got = ac_decode(dt, bits), ratio, ratio_e;
  double W = AC_BUDGET_MARGIN * w + 0.5 * ac_ulp(dt, fabs(el->g) + w) + el->g_err;
  double E = AC_BUDGET_MARGIN * e + 0.5 * ac_ulp(dt, fabs(el->g) + e) + el->g_err;
  tj->checked++;
  if (el->accept != AC_ACCEPT_VALUE) {
    tj->undefined++;
    int ok = (isnan(got) && (el->accept & AC_ACCEPT_NAN)) || (got == INFINITY && (el->accept & AC_ACCEPT_PINF)) ||
             (got == -INFINITY && (el->accept & AC_ACCEPT_NINF));
    ratio = ratio_e = ok ? 0 : INFINITY;
  } else if (grad_overflow_within(dt, el, got, AC_BUDGET_MARGIN * w + el->g_err)) {
    ratio = ratio_e = 0;
  } else if (!isfinite(got) || !(W >= 0)) {
    ratio = ratio_e = INFINITY;
  } else {
    double err = fabs(got - el->g), fixed = 0.5 * ac_ulp(dt, fabs(el->g) + e) + el->g_err;
    ratio = W > 0 ? err / W : err > 0 ? INFINITY : 0;
    ratio_e = E > 0 ? err / E : err > 0 ? INFINITY : 0;
    double kc = err <= fixed ? 0 : e > 0 ? (err - fixed) / (AC_BUDGET_MARGIN * e) : INFINITY;
    if (ratio_e > tj->max_e) tj->max_e = ratio_e;
    if (kc > tj->max_kcrit) tj->max_kcrit = kc;
  }
  if (ratio == INFINITY) tj->max_e = tj->max_kcrit = INFINITY;
  if (ratio > 1) tj->failed++;
  if (ratio > tj->worst) {
    tj->worst = ratio, tj->worst_e = ratio_e, tj->worst_x = x, tj->worst_t = t;
    tj->got = got, tj->want = el->g, tj->W = W, tj->E = E;
  }
}

void ac_grad_judge(const ac_grad_budget *bg, const ac_grad_result *ex, const ac_grad_run_result *run, ac_grad_judgement *j)
{
  memset(j, 0, sizeof *j);
  const ac_grad_tensor *gt[3] = {&ex->dq, &ex->dk, &ex->dv};
  for (int k = 0; k < 3; k++) {
    ac_grad_tjudge *tj = &j->t[k];
    tj->worst = -1;
    tj->worst_x = tj->worst_t = tj->seq = -1;
    tj->unwritten = run->n_unwritten[k];
    const ac_grad_tensor *g = gt[k];
    for (int64_t x = 0; x < g->n; x++) {
      if (g->slot[x] < 0) continue;
      for (int64_t t = 0; t < g->d; t++) {
        size_t at = (size_t)(x * g->d + t);
        judge_elem(tj, run->dtype, ac_grad_at(g, x, t), ac_load_bits(run->dtype, run->g[k], at), bg->w[k][at],
                   bg->e[k][at], x, t);
      }
    }
    if (tj->unwritten && tj->failed == 0) tj->failed = tj->unwritten;
    j->failed += tj->failed;
    j->unresolved += tj->unresolved;
  }
  j->nt = 3;
  if (!bg->nsink || !run->dsinks || ex->dsink.nsel != bg->nsink) return;
  ac_grad_tjudge *tj = &j->t[3];   /* dσ_h: binary32 [heads] in the ABI */
  j->nt = 4;
  tj->worst = -1;
  tj->worst_x = tj->worst_t = tj->seq = -1;
  tj->unwritten = run->n_unwritten[3];
  for (int64_t h = 0; h < bg->nsink; h++)
    judge_elem(tj, AC_F32, ac_grad_at(&ex->dsink, h, 0), ac_load_bits(AC_F32, run->dsinks, (size_t)h), bg->sink_w[h],
               bg->sink_e[h], h, 0);
  if (tj->unwritten && tj->failed == 0) tj->failed = tj->unwritten;
  j->failed += tj->failed;
  j->unresolved += tj->unresolved;
}

/* A varlen case: the sequence, head and index within it of each tensor's worst element. */
static void locate(const ac_case *c, ac_grad_judgement *j)
{
  const ac_problem *p = &c->p;
  for (int t = 0; t < 3; t++) {
    ac_grad_tjudge *tj = &j->t[t];
    if (tj->worst_x < 0) continue;
    const int64_t T = t ? p->tk : p->tq, tok = tj->worst_x % T;
    const int32_t *cu = t ? c->lay->cu_k : c->lay->cu_q;
    int64_t b = 0;
    while (b + 1 < p->l.nseq && cu[b + 1] <= tok) b++;
    tj->seq = b, tj->head = tj->worst_x / T, tj->idx = tok - cu[b];
  }
}

/* The exact backward as the judge asks for it: the case dtype alone (the judge reads the value, its
 * bound and whether it is resolved, never a binary64 rounding), on go's threads. */
static int judge_oracle(const ac_case *c, const ac_grad_opts *go, ac_grad_result *ex, ac_err *e)
{
  ac_grad_opts o = *go;
  o.formats = 0;
  return ac_grad_run(c, c->dout, &o, ex, e);
}

void ac_grad_opts_for_judge(ac_grad_opts *go, const ac_judge_opts *jo)
{
  ac_grad_opts_init(go);
  go->rows = go->cols = jo->rows;
  go->seed = jo->rows_seed;
  long n = jo->oracle_threads > 0 ? jo->oracle_threads : sysconf(_SC_NPROCESSORS_ONLN);
  go->threads = n > 0 ? (int)n : 1;
}

int ac_grad_judge_given(const ac_case *c, const ac_precision *cls, const ac_grad_opts *go, const ac_grad_run_result *run,
                        ac_grad_judgement *j, ac_err *e)
{
  return ac_grad_judge_given_as(c, cls, AC_ALIBI_LSE_ABI, go, run, j, e);
}

int ac_grad_judge_given_as(const ac_case *c, const ac_precision *cls, int alibi_lse, const ac_grad_opts *go,
                           const ac_grad_run_result *run, ac_grad_judgement *j, ac_err *e)
{
  memset(j, 0, sizeof *j);
  if (!c->dout) return ac_err_set(e, "the case has no dO (member do; attncheck gen --grad)");
  ac_grad_result ex;
  if (judge_oracle(c, go, &ex, e)) return -1;
  ac_grad_budget bg;
  memset(&bg, 0, sizeof bg);
  int rc = ac_grad_budget_compute_threads(cls, c, alibi_lse, go->threads, &bg, e);
  if (!rc) ac_grad_judge(&bg, &ex, run, j);
  if (!rc && c->lay && (c->p.f.used & AC_FEAT_VARLEN)) locate(c, j);
  ac_grad_budget_free(&bg);
  ac_grad_result_free(&ex);
  return rc;
}

int ac_grad_check(const ac_kernel *k, const ac_case *c, const char *precision, const ac_grad_opts *go,
                  const ac_run_opts *ro, ac_grad_run_result *run, ac_grad_judgement *j, const ac_precision **cls,
                  ac_err *e)
{
  memset(j, 0, sizeof *j);
  memset(run, 0, sizeof *run);
  if (!c->dout) return ac_err_set(e, "the case has no dO (member do; attncheck gen --grad)");
  ac_run_opts dflt;
  if (!ro) ac_run_opts_init(&dflt), ro = &dflt;
  ac_kernel_prepare(k, ro->timeout_s);   /* an exec worker's declared classes */
  if (ac_precision_resolve(precision, k->precision, c->p.dtype, cls, e)) return -1;
  const char *why = ac_harness_backward_refusal(k, c);
  if (why) {   /* before the exact backward: a kernel is never judged on what it cannot be handed */
    run->status = AC_RUN_UNSUPPORTED;
    run->dtype = c->p.dtype;
    snprintf(run->msg, sizeof run->msg, "%s", why);
    return 0;
  }
  ac_grad_result ex;
  if (judge_oracle(c, go, &ex, e)) return -1;
  void *o = NULL;
  float *lse = NULL;
  int rc = -1;
  ac_grad_budget bg;
  memset(&bg, 0, sizeof bg);
  const int conv = ac_kernel_alibi_lse(k, ro->alibi_lse);
  if (ac_grad_forward_inputs_as(c, conv, &o, &lse, e) || ac_grad_budget_compute_threads(*cls, c, conv, go->threads, &bg, e))
    goto done;
  if (ac_harness_run_backward(k, c, o, lse, ro, run, e) && run->status == AC_RUN_HARNESS_ERROR) goto done;
  if (run->status == AC_RUN_OK) ac_grad_judge(&bg, &ex, run, j);
  if (run->status == AC_RUN_OK && c->lay && (c->p.f.used & AC_FEAT_VARLEN)) locate(c, j);
  rc = 0;
done:
  ac_grad_budget_free(&bg);
  free(o);
  free(lse);
  ac_grad_result_free(&ex);
  return rc;
}
