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
  const char *rs = o->rows ? o->rows : "";
  snprintf(r->rows_spec, sizeof r->rows_spec, "%s", strlen(rs) < sizeof r->rows_spec ? rs : "list");
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
  w->accept = AC_ACCEPT_VALUE;
}

/* WEAK-CLASS: a class whose bound is vacuous (infinite once n u >= 1: bf16-acc16 past 256 keys;
 * or at least |o| + max_j |V_j - o|, so that it accepts 0 and every value of the hull of the
 * visible V_j) or whose domain ends early (fp16-acc16's sums beyond 65504) cannot fail there:
 * what it accepts there is judged again under the dtype's standard class. A finite bound that
 * can still fail (a cuBLAS-style class at large logits) is the class's own business. */
typedef struct {
  const ac_precision *std;   /* NULL: the declared class is the standard one, or no class budget */
  int64_t *vthr;             /* its online-sum thresholds */
  int ood;                   /* the current row is out of its domain */
} weak_ctx;

static void weak_add(ac_report *rep, double err, double ew_decl, double ew_std)
{
  rep->n_weak++;
  if (isnan(ew_decl)) rep->n_weak_ood++;
  else if (ew_decl > rep->weak_err_w_decl) rep->weak_err_w_decl = ew_decl;
  if (ew_std > rep->weak_err_w_std) rep->weak_err_w_std = ew_std;
  if (err > rep->weak_max_err) rep->weak_max_err = err;
}

/* An element the declared class accepts with bound wdecl (ew_decl: its err/W; NaN: out of that
 * class's domain) and kernel value kv (knan/kinf: non-finite), against the standard class. */
static void weak_elem(const ac_compare_opts *opt, const weak_ctx *wk, const ac_problem *p, const ac_oracle_row *rw,
                      const ac_oracle_elem *el, const ac_oracle_result *r, int knan, int kinf, double kv,
                      double wdecl, double ew_decl, ac_report *rep)
{
  ac_dtype t = p->dtype;
  if (!wk->std || wk->ood || !(el->accept & AC_ACCEPT_VALUE) || !(fabs(el->o) <= ac_dtype_get(t)->max_finite)) return;
  if (!isnan(ew_decl) && wdecl < fabs(el->o) + el->M) return;
  if ((knan || kinf) && overflow_within_bound(opt, wk->std, p, rw, el, r, t, knan, kinf, kv)) return;
  ac_bound bd;
  ac_budget_elem(wk->std, p, t, rw, el, r->mu, r->nmu, &bd);
  double err = knan || kinf ? INFINITY : fabs(kv - el->o);
  if (err > bd.W) weak_add(rep, err, ew_decl, err / bd.W);
}

/* The same for an LSE; its bound is vacuous from 1 + ln T (the LSE of any weights on the same
 * scores lies in [m, m + ln T]). */
static void weak_lse(const weak_ctx *wk, const ac_problem *p, const ac_oracle_row *rw, double err, double wdecl,
                     double ew_decl, ac_report *rep)
{
  if (!wk->std || wk->ood || !(rw->lse_accept & AC_ACCEPT_VALUE) || !(fabs(rw->lse) <= FLT_MAX)) return;
  if (!isnan(ew_decl) && wdecl < 1 + log((double)rw->visible)) return;
  ac_bound bd;
  ac_budget_lse(wk->std, p, rw, &bd);
  if (err > bd.W) weak_add(rep, err, ew_decl, err / bd.W);
}

static void weak_note(ac_report *rep, const ac_precision *cls, const ac_precision *std, ac_dtype t)
{
  char decl[96];
  if (rep->n_weak_ood == rep->n_weak) snprintf(decl, sizeof decl, "out of its domain");
  else if (rep->n_weak_ood) snprintf(decl, sizeof decl, "err/W up to %.3g, %lld out of its domain", rep->weak_err_w_decl,
                                     (long long)rep->n_weak_ood);
  else snprintf(decl, sizeof decl, "err/W up to %.3g", rep->weak_err_w_decl);
  ac_report_add(rep, AC_V_WEAK_CLASS, "%lld values correct for the declared class %s only because its bound is vacuous "
                "there (%s) are wrong by up to %.3g for %s (its standard class %s: err/W up to %.3g)", (long long)rep->n_weak, cls->name, decl, rep->weak_max_err,
                ac_dtype_name(t), std->name, rep->weak_err_w_std);
}

/* A NaN the rule table accepts only because keys of score -inf (weight exactly 0) may produce it:
 * the outcome also admits a value (or an infinity), which the NaN replaces. Not wrong in a
 * blocked kernel (a block of only such keys computes exp(-inf - (-inf))), but the value is lost,
 * as when a masked key's NaN reaches the output: MASKED-LEAK (warn). */
static int nan_from_weight0(uint8_t accept)
{
  return (accept & AC_ACCEPT_NAN_WEIGHT0) && (accept & (AC_ACCEPT_VALUE | AC_ACCEPT_PINF | AC_ACCEPT_NINF));
}

int ac_compare_outputs(const ac_case *c, const ac_oracle_result *r, const void *o, const float *lse,
                       const uint8_t *unwritten, const ac_compare_opts *opt, ac_report *rep, ac_err *e)
{
  const ac_problem *p = &c->p;
  ac_dtype t = p->dtype;
  const ac_precision *cls = opt->prec ? opt->prec : ac_precision_default(t);
  if (r->nrows != p->batch * p->heads * p->tq) return ac_err_set(e, "oracle result does not match the case shape");
  rep->prec_name = cls->name;
  rep->n_rows_total = r->nrows;
  const uint64_t *oround = r->o_round[t];
  double maxf = ac_dtype_get(t)->max_finite;
  uint8_t *leakk = ac_xcalloc((size_t)r->nrows, 1), *leakv = ac_xcalloc((size_t)(r->nrows * p->dv), 1);
  ac_masked_nonfinite(c, leakk, leakv);
  int64_t *vthr = ac_online_sum_thresholds(c, ac_dtype_get(cls->range)->max_finite);
  weak_ctx wk = {NULL, NULL, 1};
  if (opt->budget == AC_BUDGET_CLASS && ac_precision_default(t) != cls) {
    wk.std = ac_precision_default(t);
    wk.vthr = ac_online_sum_thresholds(c, ac_dtype_get(wk.std->range)->max_finite);
    rep->std_name = wk.std->name;
  }
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
    int ood = ac_row_out_of_domain(cls, p, rw, els, vthr, row, why, sizeof why);
    if (wk.std) {
      char why2[160];
      wk.ood = ac_row_out_of_domain(wk.std, p, rw, els, wk.vthr, row, why2, sizeof why2);
    }
    if (ood) {
      rep->n_ood_rows++;
      if (!oodwhy[0]) snprintf(oodwhy, sizeof oodwhy, "%s", why);
    }
    int empty = rw->visible <= 0;
    if (empty) rep->n_empty_rows++;
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
        if (ok && knan && nan_from_weight0(el->accept)) rep->n_nan_weight0++;
        if (ok) continue;
        if (ood || fabs(el->o) > maxf) {
          rep->n_ood++;
          if (ood && !leakv[idx]) weak_elem(opt, &wk, p, rw, el, r, knan, kinf, kv, INFINITY, NAN, rep);
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
          if (ood && kb != rb) weak_elem(opt, &wk, p, rw, el, r, 0, 0, kv, INFINITY, NAN, rep);
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
        if (!match && err <= bound) weak_elem(opt, &wk, p, rw, el, r, 0, 0, kv, bound, ew, rep);
        if (ew > worst_rank) {
          worst_rank = ew;
          set_worst(&rep->worst, p, row, d, el->o, rb, kb, kv, err, ulps, ew, ee, bound, bd.E, AC_WHY_VALUE, 0);
        }
        continue;
      }
      /* a non-finite or convention failure */
      if (bad == AC_WHY_NONE) continue;
      if (leakv[idx] && (knan || kinf)) rep->n_leak++;
      else {
        rep->n_fail++;
        nmse_bad = 1;
        /* no finite distance: err, ulps, err/W and err/E are infinite */
        rep->max_err = rep->max_ulps = rep->max_err_w = rep->max_err_e = INFINITY;
      }
      if (INFINITY > worst_rank) {
        worst_rank = INFINITY;
        set_worst(&rep->worst, p, row, d, el->o, rb, kb, kv, INFINITY, INFINITY, INFINITY, INFINITY, 0, 0, bad, 0);
        rep->worst.accept = el->accept;
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
      if (ok && isnan(kl) && nan_from_weight0(rw->lse_accept)) rep->n_nan_weight0++;
      if (ok) continue;
      if (ood) {
        if (!leakk[row]) weak_lse(&wk, p, rw, INFINITY, INFINITY, NAN, rep);
        continue;
      }
      bad = (rw->lse_accept & AC_ACCEPT_VALUE) ? AC_WHY_NONFINITE : AC_WHY_WRONG_NONFINITE;
    } else if (!(rw->lse_accept & AC_ACCEPT_VALUE)) {
      rep->lse_judged++;
      bad = AC_WHY_FINITE;
    } else {
      double err = fabs((double)kl - rw->lse);
      if (ood) {
        weak_lse(&wk, p, rw, err, INFINITY, NAN, rep);
        continue;
      }
      rep->lse_judged++;
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
      if (!match && err <= bd.W) weak_lse(&wk, p, rw, err, bd.W, ew, rep);
      if (ew > lse_worst_rank) {
        lse_worst_rank = ew;
        set_worst(&rep->lse_worst, p, row, -1, rw->lse, rlb, klb, kl, err, err / ac_ulp(AC_F32, rw->lse), ew, ee,
                  bd.W, bd.E, AC_WHY_VALUE, 1);
      }
      continue;
    }
    if (bad == AC_WHY_NONE) continue;
    if (leakk[row] && !isfinite(kl)) {
      rep->n_leak++;
      continue;
    }
    rep->lse_fail++;
    rep->lse_max_err = rep->lse_max_err_w = rep->lse_max_err_e = INFINITY;
    if (lse_worst_rank == INFINITY) continue;
    lse_worst_rank = INFINITY;
    set_worst(&rep->lse_worst, p, row, -1, rw->lse, rlb, klb, kl, INFINITY, INFINITY, INFINITY, INFINITY, 0, 0, bad, 1);
    rep->lse_worst.accept = rw->lse_accept;
  }
  free(leakk);
  free(leakv);
  free(vthr);
  free(wk.vthr);
  rep->nmse = nmse_bad ? INFINITY : sum_o2 > 0 ? sum_d2 / sum_o2 : (sum_d2 > 0 ? INFINITY : 0);
  if (rep->n_fail) ac_report_add(rep, AC_V_FAIL, "%lld of %lld elements outside the budget",
                                 (long long)rep->n_fail, (long long)rep->n_judged);
  if (rep->lse_fail) ac_report_add(rep, AC_V_FAIL, "%lld LSE values outside their bound", (long long)rep->lse_fail);
  if (rep->n_suspect || rep->lse_suspect)
    ac_report_add(rep, AC_V_SUSPECT, "%lld elements and %lld LSE values above kappa*E", (long long)rep->n_suspect,
                  (long long)rep->lse_suspect);
  if (rep->n_weak) weak_note(rep, cls, wk.std, t);
  if (rep->n_leak) ac_report_add(rep, AC_V_MASKED_LEAK, "%lld non-finite values reached by non-finite inputs at masked keys only",
                                 (long long)rep->n_leak);
  if (rep->n_nan_weight0)
    ac_report_add(rep, AC_V_MASKED_LEAK, "%lld NaN values where the exact value is defined: keys of score -inf (weight 0) "
                  "reached them, as exp(-inf - (-inf)) in a block of such keys or 0*inf in P.V", (long long)rep->n_nan_weight0);
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
