/* budget.c: W and E per element and per LSE row (NUMERICS.md §4). */
#include "config.h"
#include "budget.h"
#include <math.h>

double ac_gamma_w(double n, double u, int trunc)
{
  if (trunc) u *= 2;
  double nu = n * u;
  if (nu >= 1) return INFINITY;
  return nu / (1 - nu);
}

double ac_gamma_e(double n, double u, int trunc)
{
  if (trunc) u *= 2;
  return 4 * sqrt(n) * u;
}

/* F for the class's mu: the oracle's F of the smallest threshold >= mu (F grows with mu);
 * none: D, since F <= D always. */
static double f_term(const ac_oracle_elem *el, double cmu, const double *mu, int nmu)
{
  int best = -1;
  for (int k = 0; k < nmu; k++)
    if (mu[k] >= cmu && (best < 0 || mu[k] < mu[best])) best = k;
  return best < 0 ? el->D : el->F[best];
}

/* Typical count of n independent rescale roundings. */
static double nr_typical(double n)
{
  double s = 4 * sqrt(n);
  return n < s ? n : s;
}

void ac_budget_elem(const ac_precision *c, const ac_problem *p, ac_dtype out, const ac_oracle_row *row,
                    const ac_oracle_elem *el, const double *mu, int nmu, ac_bound *b)
{
  double ao = fabs(el->o);
  if (row->visible <= 0 || !isfinite(el->o)) {
    b->W_terms = b->E_terms = 0;
    b->fixed = isfinite(el->o_err) ? el->o_err : 0;
    b->W = b->E = b->fixed;
    return;
  }
  double T = (double)row->visible, dk = (double)p->dk;
  double tacc = (double)ac_precision_tacc(c, row->visible);
  double nr = (double)ac_precision_nr(c, row->visible);
  double F = f_term(el, c->mu, mu, nmu);
  (void)T;
  double common = c->u_S * el->Sp + c->u_s * el->Sp + 2 * c->u_s * el->S + c->u_p * el->R + c->u_s * ao + F;
  double w = ac_gamma_w(dk, c->u_qk, c->qk_trunc) * el->G + common + (c->u_e + nr * c->u_s) * el->D
             + ac_gamma_w(tacc, c->u_a, c->acc_trunc) * (el->R + ao);
  double e = ac_gamma_e(dk, c->u_qk, c->qk_trunc) * el->G + common + (c->u_e + nr_typical(nr) * c->u_s) * el->D
             + ac_gamma_e(tacc, c->u_a, c->acc_trunc) * (el->R + ao);
  w *= AC_BUDGET_MARGIN;
  e *= AC_BUDGET_MARGIN;
  /* The kernel rounds its working value, which lies within w of o: half an ulp of the
   * largest such value. */
  double half = 0.5 * ac_ulp(out, isfinite(w) ? ao + w : ao);
  b->W_terms = w;
  b->E_terms = e;
  b->fixed = half + el->o_err;
  b->W = w + b->fixed;
  b->E = e + b->fixed;
}

void ac_budget_lse(const ac_precision *c, const ac_problem *p, const ac_oracle_row *row, ac_bound *b)
{
  if (row->visible <= 0 || !isfinite(row->lse)) {
    b->W_terms = b->E_terms = 0;
    b->fixed = isfinite(row->lse_err) ? row->lse_err : 0;
    b->W = b->E = b->fixed;
    return;
  }
  double T = (double)row->visible, dk = (double)p->dk;
  double tacc = (double)ac_precision_tacc(c, row->visible);
  double nr = (double)ac_precision_nr(c, row->visible);
  double al = fabs(row->lse), am = isfinite(row->m) ? fabs(row->m) : 0;
  /* Terms below mu_sum lost from the row sum: relative loss of L at most T·mu_sum. */
  double tm = T * c->mu_sum;
  double flush = tm >= 0.5 ? INFINITY : tm / (1 - tm);
  /* ln L and m + ln L rounded in the score format; exp and log charged u_e each. */
  double common = 2 * c->u_s * row->lse_s + c->u_s * (2 * al + am) + 2 * c->u_e + flush;
  double w = ac_gamma_w(dk, c->u_qk, c->qk_trunc) * row->lse_cZ + common + nr * c->u_s
             + ac_gamma_w(tacc, c->u_a, c->acc_trunc);
  double e = ac_gamma_e(dk, c->u_qk, c->qk_trunc) * row->lse_cZ + common + nr_typical(nr) * c->u_s
             + ac_gamma_e(tacc, c->u_a, c->acc_trunc);
  w *= AC_BUDGET_MARGIN;
  e *= AC_BUDGET_MARGIN;
  double half = 0.5 * ac_ulp(AC_F32, isfinite(w) ? al + w : al);
  b->W_terms = w;
  b->E_terms = e;
  b->fixed = half + (isfinite(row->lse_err) ? row->lse_err : 0);
  b->W = w + b->fixed;
  b->E = e + b->fixed;
}
