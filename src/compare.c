/* compare.c: per-element errors, per-case maxima and the verdict kinds of one kernel output. */
#include "config.h"
#include "compare.h"
#include <float.h>
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
  return buf;
}

int ac_empty_parse(const char *s, ac_empty_conv *out)
{
  if (!strcmp(s, "zero")) *out = AC_EMPTY_ZERO;
  else if (!strcmp(s, "nan")) *out = AC_EMPTY_NAN;
  else if (!strcmp(s, "skip")) *out = AC_EMPTY_SKIP;
  else return -1;
  return 0;
}

const char *ac_empty_name(ac_empty_conv c)
{
  return c == AC_EMPTY_NAN ? "nan" : c == AC_EMPTY_SKIP ? "skip" : "zero";
}

void ac_report_init(ac_report *r, const ac_compare_opts *o)
{
  memset(r, 0, sizeof *r);
  r->budget = o->budget;
  r->prec_name = o->prec ? o->prec->name : NULL;
  r->kappa = o->kappa;
  ac_budget_describe(o, r->budget_desc, sizeof r->budget_desc);
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

static int bits_nonfinite(ac_dtype t, uint64_t b) { return ac_bits_isnan(t, b) || ac_bits_isinf(t, b); }

static int row_has_nonfinite(ac_dtype t, const void *base, size_t off, int64_t n)
{
  for (int64_t x = 0; x < n; x++)
    if (bits_nonfinite(t, ac_load_bits(t, base, off + (size_t)x))) return 1;
  return 0;
}

void ac_masked_nonfinite_rows(const ac_case *c, uint8_t *flags)
{
  const ac_problem *p = &c->p;
  /* last[kvh]: largest key index whose K or V row holds a non-finite value (-1: none). */
  int64_t nkv = p->batch * p->kv_heads;
  int64_t *last = ac_xmalloc(sizeof(int64_t) * (size_t)nkv);
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++) {
      int64_t l = -1;
      for (int64_t j = p->tk - 1; j >= 0 && l < 0; j--)
        if (row_has_nonfinite(p->dtype, c->k, ac_kidx(p, b, kh, j, 0), p->dk)
            || row_has_nonfinite(p->dtype, c->v, ac_vidx(p, b, kh, j, 0), p->dv))
          l = j;
      last[b * p->kv_heads + kh] = l;
    }
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) {
        int64_t vis = ac_visible_count(p, i);
        flags[ac_rowidx(p, b, h, i)] = last[b * p->kv_heads + ac_kv_head(p, h)] >= vis;
      }
  free(last);
}

/* The domain of a row: exact scores (raw q·k or scaled) beyond the working range, or the
 * unnormalized P·V sum (at most L·R, L = e^(LSE - m)) beyond it. 1 = out of domain. */
static int row_out_of_domain(const ac_precision *c, const ac_problem *p, const ac_oracle_row *row,
                             const ac_oracle_elem *els, int64_t dv, char *why, size_t n)
{
  if (row->visible <= 0 || row->has_nonfinite) return 0;
  double lim = ac_dtype_get(c->range)->max_finite;
  const char *rn = ac_dtype_name(c->range);
  /* scores stored in a narrower format (cuBLAS-style composites): that format's range, for
   * the scaled score and the raw q.k alike (a GEMM may store either) */
  double slim = lim;
  const char *sn = rn;
  if (ac_dtype_get(c->score_store)->max_finite < lim) {
    slim = ac_dtype_get(c->score_store)->max_finite;
    sn = ac_dtype_name(c->score_store);
  }
  if (!(row->max_abs_s <= slim)) {
    snprintf(why, n, "exact score %.3g beyond %s", row->max_abs_s, sn);
    return 1;
  }
  if (!(row->max_abs_z <= slim)) {
    snprintf(why, n, "exact q.k %.3g beyond %s", row->max_abs_z, sn);
    return 1;
  }
  /* A class whose exp arguments may err by more than the exponent range (|s| ~ 2e8 in binary32:
   * one score ulp is worth dozens of logits) can legitimately overflow exp: its weights, and W,
   * are unbounded there, and inf or NaN is what FlashAttention's formula gives. */
  double delta = ac_budget_exp_arg_delta(c, p, row);
  if (!(delta <= log(lim))) {
    snprintf(why, n, "exp-argument error bound of the class %.3g logits beyond the exp range of %s", delta, rn);
    return 1;
  }
  double L = exp(row->lse - row->m);
  for (int64_t d = 0; d < dv; d++)
    if (isfinite(els[d].R) && isfinite(L) && els[d].R * L > lim) {
      snprintf(why, n, "unnormalized P.V sum %.3g beyond %s", els[d].R * L, rn);
      return 1;
    }
  return 0;
}

/* An online softmax (or any tiling) adds w_j V_j with w_j <= 1 relative to the running
 * maximum, so before a later, larger maximum rescales them its partial sums can reach
 * Σ_j |V_j| over the visible keys, whatever the final weights: a correct binary32 kernel
 * overflows there on some key orders. Per (batch, kv head): the smallest number of visible
 * keys at which that sum, in some column, exceeds lim (INT64_MAX: never). */
static int64_t *online_sum_thresholds(const ac_case *c, double lim)
{
  const ac_problem *p = &c->p;
  int64_t n = p->batch * p->kv_heads;
  int64_t *thr = ac_xmalloc((size_t)n * sizeof *thr);
  double *acc = ac_xmalloc((size_t)p->dv * sizeof *acc);
  for (int64_t bk = 0; bk < n; bk++) {
    int64_t b = bk / p->kv_heads, kh = bk % p->kv_heads;
    thr[bk] = INT64_MAX;
    for (int64_t d = 0; d < p->dv; d++) acc[d] = 0;
    for (int64_t j = 0; j < p->tk && thr[bk] == INT64_MAX; j++)
      for (int64_t d = 0; d < p->dv; d++) {
        double v = fabs(ac_load(p->dtype, c->v, ac_vidx(p, b, kh, j, d)));
        if (isfinite(v)) acc[d] += v;
        if (acc[d] > lim) { thr[bk] = j + 1; break; }
      }
  }
  free(acc);
  return thr;
}

/* The bound on |kernel - o| under the budget of opt; class_bound is the class budget's. */
static double elem_bound(const ac_compare_opts *opt, const ac_oracle_elem *el, double class_bound)
{
  if (opt->budget == AC_BUDGET_BASELINE)
    return opt->baseline_k * opt->baseline_err + 2 * ac_ulp(AC_F32, fabs(el->o)) + el->o_err;
  if (opt->budget == AC_BUDGET_FIXED) return opt->atol + opt->rtol * fabs(el->o) + el->o_err;
  return class_bound;
}

/* A kernel whose working value lies within its bound of the exact o may still round it past
 * the format's largest value: an fp16 output o = 65504 with a working value of 65525 becomes
 * inf. Such an overflow (inf of o's sign; NaN for e4m3, which has no inf) is within budget
 * when |o| plus the deviation the budget allows before the final rounding reaches the
 * smallest magnitude that rounds to infinity, max + ½ ulp(max). */
static int overflow_within_bound(const ac_compare_opts *opt, const ac_precision *cls, const ac_problem *p,
                                 const ac_oracle_row *rw, const ac_oracle_elem *el, const ac_oracle_result *r,
                                 ac_dtype t, int knan, int kinf, double kv)
{
  if (!isfinite(el->o) || el->o == 0) return 0;
  int overflow = t == AC_E4M3 ? knan : (kinf && (kv > 0) == (el->o > 0));
  if (!overflow) return 0;
  double maxf = ac_dtype_get(t)->max_finite;
  double thr = maxf + 0.5 * ac_ulp(t, maxf);
  ac_bound bd;
  ac_budget_elem(cls, p, t, rw, el, r->mu, r->nmu, &bd);
  return fabs(el->o) + elem_bound(opt, el, bd.W_terms + el->o_err) >= thr;
}

static void set_worst(ac_worst_elem *w, const ac_problem *p, int64_t row, int64_t d, double exact,
                      uint64_t rbits, uint64_t kbits, double kval, double err, double ulps, double ew, double ee,
                      double W, double E, ac_why why, int is_lse)
{
  w->valid = 1;
  w->is_lse = is_lse;
  w->i = row % p->tq;
  w->h = (row / p->tq) % p->heads;
  w->b = row / (p->tq * p->heads);
  w->d = d;
  w->exact = exact;
  w->round_bits = rbits;
  w->kernel_bits = kbits;
  w->kernel = kval;
  w->err = err;
  w->ulps = ulps;
  w->err_w = ew;
  w->err_e = ee;
  w->W = W;
  w->E = E;
  w->why = why;
}

int ac_compare_outputs(const ac_case *c, const ac_oracle_result *r, const void *o, const float *lse,
                       const uint8_t *unwritten, const ac_compare_opts *opt, ac_report *rep, ac_err *e)
{
  const ac_problem *p = &c->p;
  ac_dtype t = p->dtype;
  const ac_precision *cls = opt->prec ? opt->prec : ac_precision_default(t);
  if (r->nrows != p->batch * p->heads * p->tq) return ac_err_set(e, "oracle result does not match the case shape");
  rep->prec_name = cls->name;
  const uint64_t *oround = r->o_round[t];
  double maxf = ac_dtype_get(t)->max_finite;
  uint8_t *leakrows = ac_xcalloc((size_t)r->nrows, 1);
  ac_masked_nonfinite_rows(c, leakrows);
  int64_t *vthr = online_sum_thresholds(c, ac_dtype_get(cls->range)->max_finite);
  double sum_d2 = 0, sum_o2 = 0;
  int nmse_bad = 0;
  double worst_rank = -1, lse_worst_rank = -1;
  char oodwhy[160] = "";
  for (int64_t row = 0; row < r->nrows; row++) {
    const ac_oracle_row *rw = &r->rows[row];
    if (!rw->selected) continue;
    rep->n_rows_judged++;
    const int64_t sbase = ac_oracle_slot(r, row) * p->dv;   /* where the oracle stores the row */
    const ac_oracle_elem *els = &r->elems[sbase];
    char why[160];
    int ood = row_out_of_domain(cls, p, rw, els, p->dv, why, sizeof why);
    if (!ood && rw->visible > 0 && !rw->has_nonfinite) {
      int64_t b = row / (p->tq * p->heads), h = (row / p->tq) % p->heads;
      if (rw->visible >= vthr[b * p->kv_heads + ac_kv_head(p, h)]) {
        ood = 1;
        snprintf(why, sizeof why, "partial P.V sums of an online softmax (up to the sum of |V_j| over %lld visible keys) beyond %s",
                 (long long)rw->visible, ac_dtype_name(cls->range));
      }
    }
    if (ood) {
      rep->n_ood_rows++;
      if (!oodwhy[0]) snprintf(oodwhy, sizeof oodwhy, "%s", why);
    }
    int empty = rw->visible <= 0;
    if (empty) rep->n_empty_rows++;
    int leak_possible = leakrows[row] && !rw->has_nonfinite;
    for (int64_t d = 0; d < p->dv; d++) {
      size_t idx = (size_t)(row * p->dv + d);
      const ac_oracle_elem *el = &els[d];
      rep->n_elems++;
      if (unwritten && unwritten[idx]) {
        rep->n_unwritten++;
        continue;
      }
      if (el->how == AC_HOW_UNRESOLVED) {
        rep->n_unresolved++;
        continue;
      }
      uint64_t kb = ac_load_bits(t, o, idx);
      double kv = ac_decode(t, kb);
      int knan = ac_bits_isnan(t, kb), kinf = ac_bits_isinf(t, kb);
      uint64_t rb = oround ? oround[sbase + d] : ac_encode_f64(t, el->o);
      ac_why bad = AC_WHY_NONE;
      if (el->accept & AC_ACCEPT_EMPTY) {
        if (knan) rep->empty_o_nan++;
        else if (kv == 0) rep->empty_o_zero++;
        if (opt->empty == AC_EMPTY_SKIP) continue;
        rep->n_judged++;
        int ok = opt->empty == AC_EMPTY_NAN ? knan : (!knan && !kinf && kv == 0);
        if (!ok) bad = AC_WHY_EMPTY;
      } else if ((knan || kinf) && kb == rb && (el->accept & AC_ACCEPT_VALUE)) {
        /* the correct rounding itself (an exact value beyond the dtype rounds to inf) */
        rep->n_judged++;
        rep->n_exact_match++;
        continue;
      } else if (knan || kinf) {
        rep->n_judged++;
        int ok = (knan && (el->accept & AC_ACCEPT_NAN)) || (kinf && kv > 0 && (el->accept & AC_ACCEPT_PINF))
                 || (kinf && kv < 0 && (el->accept & AC_ACCEPT_NINF));
        if (ok) continue;
        if (ood || fabs(el->o) > maxf) {
          rep->n_ood++;
          continue;
        }
        if ((el->accept & AC_ACCEPT_VALUE) && overflow_within_bound(opt, cls, p, rw, el, r, t, knan, kinf, kv)) {
          rep->n_within_overflow++;
          continue;
        }
        bad = (el->accept & AC_ACCEPT_VALUE) ? AC_WHY_NONFINITE : AC_WHY_WRONG_NONFINITE;
      } else if (!(el->accept & AC_ACCEPT_VALUE)) {
        rep->n_judged++;
        bad = AC_WHY_FINITE;
      } else {
        /* finite kernel value, finite exact value */
        if (ood || fabs(el->o) > maxf) {
          rep->n_ood++;
          continue;
        }
        rep->n_judged++;
        double err = fabs(kv - el->o);
        double ulp = ac_ulp(t, el->o);
        double ulps = err / ulp;
        ac_bound bd;
        ac_budget_elem(cls, p, t, rw, el, r->mu, r->nmu, &bd);
        double bound = elem_bound(opt, el, bd.W);
        int match = kb == rb || (err == 0);
        if (match) rep->n_exact_match++;
        double ew = err == 0 ? 0 : err / bound;
        double ee = err == 0 ? 0 : err / bd.E;
        double sthr = opt->kappa * bd.E_terms + bd.fixed;
        double es = err == 0 ? 0 : err / sthr;
        if (match) ew = ew > 1 ? 1 : ew, es = es > 1 ? 1 : es;
        sum_d2 += (kv - el->o) * (kv - el->o);
        sum_o2 += el->o * el->o;
        if (err > rep->max_err) rep->max_err = err;
        if (ulps > rep->max_ulps) rep->max_ulps = ulps;
        if (ew > rep->max_err_w) rep->max_err_w = ew;
        if (ee > rep->max_err_e) rep->max_err_e = ee;
        if (opt->budget == AC_BUDGET_CLASS && es > rep->max_suspect) rep->max_suspect = es;
        if (!match && err > bd.fixed) {
          double kc = bd.E_terms > 0 ? (err - bd.fixed) / bd.E_terms : INFINITY;
          if (kc > rep->max_kcrit) rep->max_kcrit = kc;
        }
        if (!match && err > bound) {
          rep->n_fail++;
          bad = AC_WHY_VALUE;
        } else if (!match && opt->budget == AC_BUDGET_CLASS && err > sthr) {
          rep->n_suspect++;
        }
        if (ew > worst_rank) {
          worst_rank = ew;
          set_worst(&rep->worst, p, row, d, el->o, rb, kb, kv, err, ulps, ew, ee, bound, bd.E, AC_WHY_VALUE, 0);
        }
        continue;
      }
      /* a non-finite or convention failure */
      if (bad == AC_WHY_NONE) continue;
      if (leak_possible && (knan || kinf)) rep->n_leak++;
      else {
        rep->n_fail++;
        nmse_bad = 1;
        rep->max_err_w = rep->max_err_e = INFINITY;
      }
      if (INFINITY > worst_rank) {
        worst_rank = INFINITY;
        set_worst(&rep->worst, p, row, d, el->o, rb, kb, kv, INFINITY, INFINITY, INFINITY, INFINITY, 0, 0, bad, 0);
      }
    }
    /* LSE of the row */
    if (!lse) continue;
    rep->has_lse = 1;
    if (rw->lse_how == AC_HOW_UNRESOLVED) {
      rep->n_unresolved++;
      continue;
    }
    float kl = lse[row];
    uint32_t klb;
    memcpy(&klb, &kl, 4);
    uint32_t rlb;
    memcpy(&rlb, &rw->lse_f32, 4);
    ac_why bad = AC_WHY_NONE;
    if (rw->lse_accept & AC_ACCEPT_EMPTY) {
      if (isnan(kl)) rep->empty_lse_nan++;
      else if (isinf(kl) && kl > 0) rep->empty_lse_pinf++;
      else if (isinf(kl)) rep->empty_lse_ninf++;
      if (opt->empty == AC_EMPTY_SKIP) continue;
      rep->lse_judged++;
      if (!(isinf(kl) || (opt->empty == AC_EMPTY_NAN && isnan(kl)))) bad = AC_WHY_EMPTY;
    } else if ((rw->lse_accept & AC_ACCEPT_VALUE) && (klb == rlb || fabs(rw->lse) > FLT_MAX)) {
      /* the correct binary32 rounding; an exact LSE beyond binary32 cannot be judged otherwise */
      rep->lse_judged++;
      if (klb != rlb) rep->n_ood++;
      continue;
    } else if (!isfinite(kl)) {
      rep->lse_judged++;
      int ok = (isnan(kl) && (rw->lse_accept & AC_ACCEPT_NAN)) || (isinf(kl) && kl > 0 && (rw->lse_accept & AC_ACCEPT_PINF))
               || (isinf(kl) && kl < 0 && (rw->lse_accept & AC_ACCEPT_NINF));
      if (ok) continue;
      if (ood) continue;
      bad = (rw->lse_accept & AC_ACCEPT_VALUE) ? AC_WHY_NONFINITE : AC_WHY_WRONG_NONFINITE;
    } else if (!(rw->lse_accept & AC_ACCEPT_VALUE)) {
      rep->lse_judged++;
      bad = AC_WHY_FINITE;
    } else {
      if (ood) continue;
      rep->lse_judged++;
      double err = fabs((double)kl - rw->lse);
      ac_bound bd;
      ac_budget_lse(cls, p, rw, &bd);
      int match = klb == rlb || err == 0;
      double ew = err == 0 ? 0 : err / bd.W, ee = err == 0 ? 0 : err / bd.E;
      double sthr = opt->kappa * bd.E_terms + bd.fixed;
      if (match && ew > 1) ew = 1;
      if (ew > rep->lse_max_err_w) rep->lse_max_err_w = ew;
      if (ee > rep->lse_max_err_e) rep->lse_max_err_e = ee;
      if (err > rep->lse_max_err) rep->lse_max_err = err;
      if (opt->budget == AC_BUDGET_CLASS && !match && err / sthr > rep->max_suspect) rep->max_suspect = err / sthr;
      if (!match && err > bd.fixed) {
        double kc = bd.E_terms > 0 ? (err - bd.fixed) / bd.E_terms : INFINITY;
        if (kc > rep->max_kcrit) rep->max_kcrit = kc;
      }
      if (!match && err > bd.W) {
        rep->lse_fail++;
        bad = AC_WHY_VALUE;
      } else if (!match && opt->budget == AC_BUDGET_CLASS && err > sthr) {
        rep->lse_suspect++;
      }
      if (ew > lse_worst_rank) {
        lse_worst_rank = ew;
        set_worst(&rep->lse_worst, p, row, -1, rw->lse, rlb, klb, kl, err, err / ac_ulp(AC_F32, rw->lse), ew, ee,
                  bd.W, bd.E, AC_WHY_VALUE, 1);
      }
      continue;
    }
    if (bad == AC_WHY_NONE) continue;
    if (leak_possible && !isfinite(kl)) {
      rep->n_leak++;
      continue;
    }
    rep->lse_fail++;
    rep->lse_max_err_w = rep->lse_max_err_e = INFINITY;
    if (lse_worst_rank == INFINITY) continue;
    lse_worst_rank = INFINITY;
    set_worst(&rep->lse_worst, p, row, -1, rw->lse, rlb, klb, kl, INFINITY, INFINITY, INFINITY, INFINITY, 0, 0, bad, 1);
  }
  free(leakrows);
  free(vthr);
  rep->nmse = nmse_bad ? INFINITY : sum_o2 > 0 ? sum_d2 / sum_o2 : (sum_d2 > 0 ? INFINITY : 0);
  if (rep->n_fail) ac_report_add(rep, AC_V_FAIL, "%lld of %lld elements outside the budget",
                                 (long long)rep->n_fail, (long long)rep->n_judged);
  if (rep->lse_fail) ac_report_add(rep, AC_V_FAIL, "%lld LSE values outside their bound", (long long)rep->lse_fail);
  if (rep->n_suspect || rep->lse_suspect)
    ac_report_add(rep, AC_V_SUSPECT, "%lld elements and %lld LSE values above kappa*E", (long long)rep->n_suspect,
                  (long long)rep->lse_suspect);
  if (rep->n_leak) ac_report_add(rep, AC_V_MASKED_LEAK, "%lld non-finite values in rows whose only non-finite inputs are masked",
                                 (long long)rep->n_leak);
  if (rep->n_ood_rows || rep->n_ood) ac_report_add(rep, AC_V_OUT_OF_DOMAIN, "%s", oodwhy[0] ? oodwhy : "exact output beyond the dtype's range");
  if (rep->n_unresolved) ac_report_add(rep, AC_V_ERROR, "%lld oracle values unresolved", (long long)rep->n_unresolved);
  return 0;
}

int ac_compare_run(const ac_case *c, const ac_oracle_result *r, const ac_run_result *run,
                   const ac_compare_opts *opt, ac_report *rep, ac_err *e)
{
  rep->kernel_ms = run->kernel_ms;
  switch (run->status) {
  case AC_RUN_OK: break;
  case AC_RUN_UNSUPPORTED:
    ac_report_add(rep, AC_V_SKIP, "unsupported: %s", run->msg);
    return 0;
  case AC_RUN_KERNEL_ERROR:
    ac_report_add(rep, AC_V_FAIL, "kernel returned an error: %s", run->msg);
    return 0;
  case AC_RUN_CRASH:
    if (run->sig) ac_report_add(rep, AC_V_CRASH, "signal %d (%s)%s%s", run->sig, strsignal(run->sig), run->msg[0] ? ": " : "", run->msg);
    else ac_report_add(rep, AC_V_CRASH, "%s", run->msg[0] ? run->msg : "crashed");
    return 0;
  case AC_RUN_TIMEOUT:
    ac_report_add(rep, AC_V_TIMEOUT, "%s", run->msg[0] ? run->msg : "time limit");
    return 0;
  default:
    ac_report_add(rep, AC_V_ERROR, "harness: %s", run->msg);
    return 0;
  }
  if (!run->guard_ok) ac_report_add(rep, AC_V_GUARD, "%s", run->guard_msg[0] ? run->guard_msg : "guard margin overwritten");
  if (run->n_unwritten > 0) ac_report_add(rep, AC_V_UNWRITTEN, "%lld output elements never written", (long long)run->n_unwritten);
  if (run->n_lse_unwritten > 0) ac_report_add(rep, AC_V_UNWRITTEN, "%lld LSE values never written", (long long)run->n_lse_unwritten);
  if (!run->o) {
    ac_report_add(rep, AC_V_ERROR, "harness returned no output");
    return 0;
  }
  return ac_compare_outputs(c, r, run->o, run->n_lse_unwritten > 0 ? NULL : run->lse, run->unwritten, opt, rep, e);
}

int ac_compare_repeat(const ac_case *c, const ac_run_result *a, const ac_run_result *b, ac_report *rep)
{
  if (a->status != AC_RUN_OK || b->status != AC_RUN_OK || !a->o || !b->o) return 0;
  ac_counts n;
  if (ac_problem_counts(&c->p, &n, NULL) < 0) return 0;
  size_t sz = ac_dtype_size(c->p.dtype);
  int64_t first = -1, ndiff = 0;
  for (int64_t x = 0; x < n.o; x++)
    if (memcmp((const char *)a->o + (size_t)x * sz, (const char *)b->o + (size_t)x * sz, sz)) {
      if (first < 0) first = x;
      ndiff++;
    }
  int64_t lsediff = 0;
  if (a->lse && b->lse)
    for (int64_t x = 0; x < n.rows; x++)
      if (memcmp(&a->lse[x], &b->lse[x], 4)) lsediff++;
  if (!ndiff && !lsediff) return 0;
  if (ndiff) {
    const ac_problem *p = &c->p;
    int64_t d = first % p->dv, row = first / p->dv;
    ac_report_add(rep, AC_V_NONDETERMINISTIC, "%lld output elements differ between two runs, first o[%lld,%lld,%lld,%lld]",
                  (long long)ndiff, (long long)(row / (p->tq * p->heads)), (long long)((row / p->tq) % p->heads),
                  (long long)(row % p->tq), (long long)d);
  } else
    ac_report_add(rep, AC_V_NONDETERMINISTIC, "%lld LSE values differ between two runs", (long long)lsediff);
  return 1;
}

double ac_compare_max_err(const ac_case *c, const ac_oracle_result *r, const void *o)
{
  const ac_problem *p = &c->p;
  double m = 0;
  for (int64_t row = 0; row < r->nrows; row++) {
    if (!r->rows[row].selected) continue;
    for (int64_t d = 0; d < p->dv; d++) {
      size_t idx = (size_t)(row * p->dv + d);
      const ac_oracle_elem *el = &r->elems[ac_oracle_slot(r, row) * p->dv + d];
      if (!(el->accept & AC_ACCEPT_VALUE) || !isfinite(el->o)) continue;
      double kv = ac_load(p->dtype, o, idx);
      double err = fabs(kv - el->o);
      if (isfinite(err) && err > m) m = err;
    }
  }
  return m;
}
