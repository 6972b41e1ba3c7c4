/* compare.c: per-element errors, per-case maxima and the verdict kinds of one kernel output. */
#include "config.h"
#include "compare.h"
#include "dropout_mask.h"
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* WEAK-CLASS: a class whose bound is vacuous (infinite once n u >= 1: bf16-acc16 past 256 keys;
 * or at least |o| + max_j |V_j - o|, so that it accepts 0 and every value of the hull of the
 * visible V_j) or whose domain ends early (fp16-acc16's sums beyond 65504) cannot fail there:
 * what it accepts there is judged again under the dtype's standard class. A finite bound that
 * can still fail (a cuBLAS-style class at large logits) is the class's own business. */
typedef struct {
  const ac_precision *std;   /* NULL: the declared class is the standard one, or no class budget */
  uint8_t *vthr;             /* its rows beyond the online-sum limit */
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
  ac_dtype t = ac_tensor_dtype(p, 'o');
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
  if (!isnan(ew_decl) && wdecl < 1 + log((double)ac_budget_row_keys(p, rw))) return;
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

/* The standard class WEAK-CLASS holds a case to: the dtype's, and for a quantized tensor (whose exact
 * values the dtype need not hold: q4_1's 45 bits, fp8 codes times a binary32 scale) the dtype's input
 * rounding of it, which any kernel computing in the dtype does (f32: kv-f32, qkv-f32; f16: kv-f16-fa2;
 * docs/quantized.md "Classes"). */
static const ac_precision *standard_class(const ac_problem *p)
{
  const ac_precision *d = ac_precision_default(p->dtype);
  if (!ac_problem_quantized(p) || p->dtype == AC_F64 || !d) return d;
  char s[256];
  int n = snprintf(s, sizeof s, "%s", d->name);
  static const int part[3] = {AC_PART_Q, AC_PART_K, AC_PART_V};
  for (int i = 0; i < 3 && n > 0 && (size_t)n < sizeof s; i++)
    if (p->quant[i].fmt && d->parts.v[part[i]] == AC_PF_NONE)
      n += snprintf(s + n, sizeof s - (size_t)n, ",%c=%s", "qkv"[i], ac_dtype_name(p->dtype));
  const ac_precision *c;
  ac_err e;
  return ac_precision_lookup(s, &c, &e) == 0 ? c : d;
}

/* One judged quantity: an output element (el set, d >= 0) or the LSE of a row (el NULL). */
typedef struct {
  int64_t row, d;
  const ac_oracle_row *rw;
  const ac_oracle_elem *el;
  unsigned accept;
  double exact;          /* binary64 oracle value */
  uint64_t kb, rb;       /* kernel bits, correct rounding in the stored format */
  double kv;
  int knan, kinf;
  int beyond;            /* exact value beyond the stored format's largest finite value */
  int ood;               /* the row is out of the class's domain */
  int leak;              /* a non-finite input at a masked key reaches it */
  int round_exact;       /* its correct rounding is judged exact (no error): the binary32 LSE */
  ac_dtype fmt;          /* the stored format (binary32 for the LSE) */
} jval;

/* Counts and maxima of the elements or of the LSE values. */
typedef struct {
  int64_t judged, fail, suspect, exact_match;
  double max_err, max_ulps, max_err_w, max_err_e;
  double sum_d2, sum_o2;
  int nonfinite_fail;
  double worst_rank;
  int worst_leak;        /* the worst so far is the first MASKED-LEAK */
  ac_worst_elem worst;
} jacc;

/* Everything one case's judgement shares. */
typedef struct {
  const ac_compare_opts *opt;
  const ac_precision *cls;
  const ac_problem *p;
  const ac_oracle_result *r;
  weak_ctx wk;
  ac_report *rep;
} jctx;

/* A NaN the rule table accepts only because keys of score -inf (weight exactly 0) may produce it:
 * the outcome also admits a value (or an infinity), which the NaN replaces. Not wrong in a
 * blocked kernel (a block of only such keys computes exp(-inf - (-inf))), but the value is lost,
 * as when a masked key's NaN reaches the output: MASKED-LEAK (warn). */
static int nan_from_weight0(unsigned accept)
{
  return (accept & AC_ACCEPT_NAN_WEIGHT0) && (accept & (AC_ACCEPT_VALUE | AC_ACCEPT_PINF | AC_ACCEPT_NINF));
}

static void acc_worst(jacc *a, const jctx *x, const jval *q, double err, double ulps, double ew, double ee, double W,
                      double E, ac_why why)
{
  const ac_problem *p = x->p;
  a->worst_rank = ew;
  a->worst = (ac_worst_elem){.valid = 1, .is_lse = !q->el, .i = q->row % p->tq, .h = (q->row / p->tq) % p->heads,
                             .b = q->row / (p->tq * p->heads), .d = q->d, .exact = q->exact, .round_bits = q->rb,
                             .kernel_bits = q->kb, .kernel = q->kv, .err = err, .ulps = ulps, .err_w = ew, .err_e = ee,
                             .W = W, .E = E, .why = why, .accept = AC_ACCEPT_VALUE, .fmt1 = (int)q->fmt + 1};
}

/* WEAK-CLASS for a value the declared class accepts (wdecl: its bound; ew_decl: err/W, NaN out of its domain). */
static void judge_weak(const jctx *x, const jval *q, double err, double wdecl, double ew_decl)
{
  if (q->el) weak_elem(x->opt, &x->wk, x->p, q->rw, q->el, x->r, q->knan, q->kinf, q->kv, wdecl, ew_decl, x->rep);
  else weak_lse(&x->wk, x->p, q->rw, err, wdecl, ew_decl, x->rep);
}

/* A finite kernel value for a finite exact value in the domain, against the bound. */
static void judge_finite(const jctx *x, const jval *q, jacc *a)
{
  const ac_compare_opts *opt = x->opt;
  ac_report *rep = x->rep;
  a->judged++;
  double err = fabs(q->kv - q->exact), ulps = err / ac_ulp(q->fmt, q->exact), bound;
  ac_bound bd;
  if (q->el) {
    ac_budget_elem(x->cls, x->p, ac_tensor_dtype(x->p, 'o'), q->rw, q->el, x->r->mu, x->r->nmu, &bd);
    bound = elem_bound(opt, q->el, bd.W);
  } else {
    ac_budget_lse(x->cls, x->p, q->rw, &bd);
    bound = bd.W;
  }
  int match = q->kb == q->rb || err == 0;
  if (match) a->exact_match++;
  double sthr = opt->kappa * bd.E_terms + bd.fixed;
  double ew = err == 0 ? 0 : err / bound, ee = err == 0 ? 0 : err / bd.E, es = err == 0 ? 0 : err / sthr;
  if (match) ew = ew > 1 ? 1 : ew, es = es > 1 ? 1 : es;
  a->sum_d2 += (q->kv - q->exact) * (q->kv - q->exact);
  a->sum_o2 += q->exact * q->exact;
  if (err > a->max_err) a->max_err = err;
  if (ulps > a->max_ulps) a->max_ulps = ulps;
  if (ew > a->max_err_w) a->max_err_w = ew;
  if (ee > a->max_err_e) a->max_err_e = ee;
  if (opt->budget == AC_BUDGET_CLASS && es > rep->max_suspect) rep->max_suspect = es;
  if (!match && err > bd.fixed) {
    double kc = bd.E_terms > 0 ? (err - bd.fixed) / bd.E_terms : INFINITY;
    if (kc > rep->max_kcrit) rep->max_kcrit = kc;
  }
  if (!match && err > bound) a->fail++;
  else if (!match && opt->budget == AC_BUDGET_CLASS && err > sthr) a->suspect++;
  if (!match && err <= bound) judge_weak(x, q, err, bound, ew);
  if (ew > a->worst_rank) acc_worst(a, x, q, err, ulps, ew, ee, bound, bd.E, AC_WHY_VALUE);
}

/* The LSE of an empty row: the one the kernel declares, else +inf or -inf (or NaN with empty nan; with
 * mean-v also a finite value at or below AC_EMPTY_LSE_SENTINEL, a masked-score sentinel's LSE). */
static int empty_lse_ok(const ac_compare_opts *opt, const jval *q)
{
  switch (opt->empty_lse) {
  case ATTNCHECK_EMPTY_LSE_NEG_INF: return q->kinf && q->kv < 0;
  case ATTNCHECK_EMPTY_LSE_POS_INF: return q->kinf && q->kv > 0;
  case ATTNCHECK_EMPTY_LSE_NAN: return q->knan;
  default:
    return q->kinf || (opt->empty == AC_EMPTY_NAN && q->knan) ||
           (opt->empty == AC_EMPTY_MEAN_V && !q->knan && q->kv <= AC_EMPTY_LSE_SENTINEL);
  }
}

/* The decision for one quantity: the empty-row convention, the correct rounding, accepted
 * non-finite outcomes, the domain (row and format range), then the bound. */
static void judge_value(const jctx *x, const jval *q, jacc *a)
{
  const ac_compare_opts *opt = x->opt;
  ac_report *rep = x->rep;
  int nonfinite = q->knan || q->kinf;
  ac_why bad = AC_WHY_NONE;
  if (q->accept & AC_ACCEPT_EMPTY) {
    if (opt->empty == AC_EMPTY_SKIP) return;
    a->judged++;
    /* o: 0 or NaN as the convention says (mean-v rows hold values; a sequence without keys has none
     * to average, and takes 0) */
    if (q->el ? !(opt->empty == AC_EMPTY_NAN ? q->knan : (!nonfinite && q->kv == 0)) : !empty_lse_ok(opt, q))
      bad = AC_WHY_EMPTY;
  } else if ((nonfinite || q->round_exact) && q->kb == q->rb && (q->accept & AC_ACCEPT_VALUE)) {
    /* the correct rounding itself (an exact value beyond the format rounds to inf) */
    a->judged++;
    a->exact_match++;
    return;
  } else if (nonfinite) {
    a->judged++;
    int ok = (q->knan && (q->accept & AC_ACCEPT_NAN)) || (q->kinf && q->kv > 0 && (q->accept & AC_ACCEPT_PINF)) ||
             (q->kinf && q->kv < 0 && (q->accept & AC_ACCEPT_NINF));
    if (ok && q->knan && nan_from_weight0(q->accept)) rep->n_nan_weight0++;
    if (ok) return;
    if (q->ood || q->beyond) {
      rep->n_ood++;
      if (q->ood && !q->leak) judge_weak(x, q, INFINITY, INFINITY, NAN);
      return;
    }
    if (q->el && (q->accept & AC_ACCEPT_VALUE) &&
        overflow_within_bound(opt, x->cls, x->p, q->rw, q->el, x->r, ac_tensor_dtype(x->p, 'o'), q->knan, q->kinf, q->kv)) {
      rep->n_within_overflow++;
      return;
    }
    bad = (q->accept & AC_ACCEPT_VALUE) ? AC_WHY_NONFINITE : AC_WHY_WRONG_NONFINITE;
  } else if (!(q->accept & AC_ACCEPT_VALUE)) {
    a->judged++;
    bad = AC_WHY_FINITE;
  } else if (q->ood || q->beyond) {
    rep->n_ood++;
    if (q->ood && q->kb != q->rb) judge_weak(x, q, fabs(q->kv - q->exact), INFINITY, NAN);
    return;
  } else {
    judge_finite(x, q, a);
    return;
  }
  if (bad == AC_WHY_NONE) return;
  if (q->leak && nonfinite) {
    /* a MASKED-LEAK ranks above values within their bound and below every failure */
    rep->n_leak++;
    if (!a->worst_leak && a->worst_rank <= 1) {
      acc_worst(a, x, q, INFINITY, INFINITY, INFINITY, INFINITY, 0, 0, bad);
      a->worst_rank = 1;
      a->worst_leak = 1;
    }
    return;
  }
  a->fail++;
  a->nonfinite_fail = 1;
  /* no finite distance: err, ulps, err/W and err/E are infinite */
  a->max_err = a->max_ulps = a->max_err_w = a->max_err_e = INFINITY;
  if (a->worst_rank < INFINITY) {
    acc_worst(a, x, q, INFINITY, INFINITY, INFINITY, INFINITY, 0, 0, bad);
    a->worst.accept = (uint8_t)q->accept;
  }
}

/* A masked non-finite input that can reach an element explains a non-finite kernel value there
 * (MASKED-LEAK) only where the row's own inputs leave a defined value (§5.5: "the row's only
 * non-finite inputs sit in masked keys"): where a visible NaN or inf already makes the exact
 * outcome non-finite, a kernel value outside what the oracle accepts is judged as such (FAIL). */
static int leak_applies(const ac_oracle_row *rw, uint8_t accept, uint8_t reach)
{
  return reach && (!rw->has_nonfinite || (accept & AC_ACCEPT_VALUE));
}

static void judge_row(const jctx *x, int64_t row, const ac_oracle_row *rw, int ood, const void *o, const float *lse,
                      const uint8_t *unwritten, const uint8_t *leakk, const uint8_t *leakv, jacc *ea, jacc *la)
{
  const ac_problem *p = x->p;
  const ac_oracle_result *r = x->r;
  ac_report *rep = x->rep;
  ac_dtype t = ac_tensor_dtype(p, 'o');   /* the stored output's format (the class follows p->dtype) */
  double maxf = ac_dtype_get(t)->max_finite;
  const int64_t sbase = ac_oracle_slot(r, row) * p->dv;   /* where the oracle stores the row */
  for (int64_t d = 0; d < p->dv; d++) {
    size_t idx = (size_t)(row * p->dv + d);
    ac_oracle_elem elc;
    const ac_oracle_elem *el = ac_compare_conv_elem(x->opt, &r->rows[row], &r->elems[sbase + d], &elc);
    rep->n_elems++;
    if (unwritten && unwritten[idx]) {
      rep->n_unwritten++;
      continue;
    }
    if (el->how == AC_HOW_UNRESOLVED) {
      rep->n_unresolved++;
      continue;
    }
    jval q = {.row = row, .d = d, .rw = rw, .el = el, .accept = el->accept, .exact = el->o, .ood = ood,
              .leak = leak_applies(rw, el->accept, leakv[idx]), .beyond = isfinite(el->o) && fabs(el->o) > maxf, .fmt = t};
    q.kb = ac_load_bits(t, o, idx);
    q.kv = ac_decode(t, q.kb);
    q.knan = ac_bits_isnan(t, q.kb), q.kinf = ac_bits_isinf(t, q.kb);
    q.rb = r->o_round[t] ? r->o_round[t][sbase + d] : ac_encode_f64(t, el->o);
    if (rw->lse_accept & AC_ACCEPT_EMPTY) {   /* an empty row (mean-v: its elements hold values) */
      if (q.knan) rep->empty_o_nan++;
      else if (q.kv == 0) rep->empty_o_zero++;
      else rep->empty_o_other++;
    }
    judge_value(x, &q, ea);
  }
  if (!lse) return;
  rep->has_lse = 1;
  if (rw->lse_how == AC_HOW_UNRESOLVED) {
    rep->n_unresolved++;
    return;
  }
  float kl = lse[row];
  uint32_t klb, rlb;
  memcpy(&klb, &kl, 4);
  memcpy(&rlb, &rw->lse_f32, 4);
  jval q = {.row = row, .d = -1, .rw = rw, .accept = rw->lse_accept, .exact = rw->lse, .kb = klb, .rb = rlb,
            .kv = kl, .knan = isnan(kl), .kinf = isinf(kl), .beyond = isfinite(rw->lse) && fabs(rw->lse) > FLT_MAX, .ood = ood,
            .leak = leak_applies(rw, rw->lse_accept, leakk[row]), .round_exact = 1, .fmt = AC_F32};
  if (q.accept & AC_ACCEPT_EMPTY) {
    if (q.knan) rep->empty_lse_nan++;
    else if (q.kinf && kl > 0) rep->empty_lse_pinf++;
    else if (q.kinf) rep->empty_lse_ninf++;
  }
  judge_value(x, &q, la);
}

/* What a kernel that computes no LSE is told when it leaves the LSE unwritten or NaN. */
#define AC_NO_LSE_HINT                                                                                    \
  "a kernel that computes no LSE declares ATTNCHECK_CAP_NO_LSE (an exec worker: \"writes_lse\": false), " \
  "or --no-lse judges o only"

/* lse_all_nan: every selected row whose LSE must be a finite value got NaN. */
static void report_verdicts(ac_report *rep, const jctx *x, const char *oodwhy, int lse_all_nan)
{
  if (rep->n_fail) ac_report_add(rep, AC_V_FAIL, "%lld of %lld elements outside the budget",
                                 (long long)rep->n_fail, (long long)rep->n_judged);
  if (rep->lse_fail)
    ac_report_add(rep, AC_V_FAIL, "%lld LSE values outside their bound%s", (long long)rep->lse_fail,
                  lse_all_nan ? " (every one NaN: " AC_NO_LSE_HINT ")" : "");
  if (rep->n_suspect || rep->lse_suspect)
    ac_report_add(rep, AC_V_SUSPECT, "%lld elements and %lld LSE values above kappa*E", (long long)rep->n_suspect,
                  (long long)rep->lse_suspect);
  if (rep->n_weak) weak_note(rep, x->cls, x->wk.std, x->p->dtype);
  if (rep->n_leak) ac_report_add(rep, AC_V_MASKED_LEAK, "%lld non-finite values reached by non-finite inputs at masked keys only",
                                 (long long)rep->n_leak);
  if (rep->n_nan_weight0)
    ac_report_add(rep, AC_V_MASKED_LEAK, "%lld NaN values where the exact value is defined: keys of score -inf (weight 0) "
                  "reached them, as exp(-inf - (-inf)) in a block of such keys or 0*inf in P.V", (long long)rep->n_nan_weight0);
  if (rep->n_ood_rows || rep->n_ood) ac_report_add(rep, AC_V_OUT_OF_DOMAIN, "%s", oodwhy[0] ? oodwhy : "exact output beyond the dtype's range");
  if (rep->n_unresolved) ac_report_add(rep, AC_V_ERROR, "%lld oracle values unresolved", (long long)rep->n_unresolved);
}

int ac_compare_outputs(const ac_case *c, const ac_oracle_result *r, const void *o, const float *lse,
                       const uint8_t *unwritten, const ac_compare_opts *opt, ac_report *rep, ac_err *e)
{
  const ac_problem *p = &c->p;
  ac_dtype t = p->dtype;
  if (r->nrows != p->batch * p->heads * p->tq) return ac_err_set(e, "oracle result does not match the case shape");
  ac_oracle_result mv;   /* mean-v: empty rows hold the mean of V */
  if (opt->empty == AC_EMPTY_MEAN_V) {
    if (ac_oracle_mean_v(c, r, &mv, e) != 0) return -1;
    r = &mv;
  }
  jctx x = {.opt = opt, .cls = opt->prec ? opt->prec : ac_precision_default(t), .p = p, .r = r, .rep = rep,
            .wk = {NULL, NULL, 1}};
  rep->prec_name = x.cls->name;
  rep->n_rows_total = r->nrows;
  ac_dropout_mask_report(c, rep);   /* dropout: the mask judged by itself */
  uint8_t *leakk = ac_xcalloc((size_t)r->nrows, 1), *leakv = ac_xcalloc((size_t)(r->nrows * p->dv), 1);
  ac_masked_nonfinite(c, leakk, leakv);
  uint8_t *vthr = ac_class_rows_beyond(c, x.cls);
  if (opt->budget == AC_BUDGET_CLASS && standard_class(p) != x.cls) {
    x.wk.std = standard_class(p);
    x.wk.vthr = ac_class_rows_beyond(c, x.wk.std);
    rep->std_name = x.wk.std->name;
  }
  jacc ea = {.worst_rank = -1}, la = {.worst_rank = -1};
  char oodwhy[160] = "";
  int64_t lse_value_rows = 0, lse_nan_rows = 0; /* rows whose LSE must be a finite value; those with NaN */
  for (int64_t row = 0; row < r->nrows; row++) {
    ac_oracle_row rwc;   /* the row as the kernel's LSE convention sees it */
    const ac_oracle_row *rw = ac_compare_conv_row(opt, &r->rows[row], &rwc);
    if (!rw->selected) continue;
    rep->n_rows_judged++;
    if (lse && (rw->lse_accept & AC_ACCEPT_VALUE) && !(rw->lse_accept & AC_ACCEPT_NAN)) {
      lse_value_rows++;
      lse_nan_rows += isnan(lse[row]);
    }
    const ac_oracle_elem *els = &r->elems[ac_oracle_slot(r, row) * p->dv];   /* where the oracle stores the row */
    char why[160], why2[160];
    int ood = ac_row_out_of_domain(x.cls, p, rw, els, vthr, row, why, sizeof why);
    if (x.wk.std) x.wk.ood = ac_row_out_of_domain(x.wk.std, p, rw, els, x.wk.vthr, row, why2, sizeof why2);
    if (ood) {
      rep->n_ood_rows++;
      if (!oodwhy[0]) snprintf(oodwhy, sizeof oodwhy, "%s", why);
    }
    if (rw->lse_accept & AC_ACCEPT_EMPTY) rep->n_empty_rows++;   /* no key at all: a sink-only row is not empty */
    judge_row(&x, row, rw, ood, o, lse, unwritten, leakk, leakv, &ea, &la);
  }
  free(leakk);
  free(leakv);
  free(vthr);
  free(x.wk.vthr);
  rep->n_judged = ea.judged, rep->n_fail = ea.fail, rep->n_suspect = ea.suspect, rep->n_exact_match = ea.exact_match;
  rep->max_err = ea.max_err, rep->max_ulps = ea.max_ulps, rep->max_err_w = ea.max_err_w, rep->max_err_e = ea.max_err_e;
  rep->worst = ea.worst;
  rep->nmse = ea.nonfinite_fail ? INFINITY : ea.sum_o2 > 0 ? ea.sum_d2 / ea.sum_o2 : (ea.sum_d2 > 0 ? INFINITY : 0);
  rep->lse_judged = la.judged, rep->lse_fail = la.fail, rep->lse_suspect = la.suspect;
  rep->lse_max_err = la.max_err, rep->lse_max_err_w = la.max_err_w, rep->lse_max_err_e = la.max_err_e;
  rep->lse_worst = la.worst;
  report_verdicts(rep, &x, oodwhy, lse_value_rows > 0 && lse_nan_rows == lse_value_rows);
  if (r == &mv) ac_oracle_result_free(&mv);
  return 0;
}

int ac_compare_run(const ac_case *c, const ac_oracle_result *r, const ac_run_result *run,
                   const ac_compare_opts *opt, ac_report *rep, ac_err *e)
{
  rep->kernel_ms = run->kernel_ms;
  switch (run->status) {
  case AC_RUN_OK: break;
  case AC_RUN_UNSUPPORTED:
    /* a run() that refuses the case (ABI 5) after writing where it must not is still GUARD */
    if (!run->guard_ok && run->guard_msg[0]) ac_report_add(rep, AC_V_GUARD, "%s", run->guard_msg);
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
  if (run->n_lse_unwritten > 0) {
    ac_counts n;
    int all = ac_problem_counts(&c->p, &n, NULL) == 0 && run->n_lse_unwritten >= n.rows;
    ac_report_add(rep, AC_V_UNWRITTEN, "%lld LSE values never written%s", (long long)run->n_lse_unwritten,
                  all ? " (none written: " AC_NO_LSE_HINT ")" : "");
  }
  if (run->n_oos > 0) ac_report_add(rep, AC_V_OUT_OF_SEQUENCE, "%s", run->oos_msg);
  if (run->n_mask_unwritten > 0)
    ac_report_add(rep, AC_V_UNWRITTEN, "%lld dropout mask elements neither 0 nor 1 (0xff: never written)",
                  (long long)run->n_mask_unwritten);
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
  size_t sz = ac_dtype_size(ac_tensor_dtype(&c->p, 'o'));
  int64_t first = -1, ndiff = 0;
  for (int64_t x = 0; x < n.o; x++)
    if (memcmp((const char *)a->o + (size_t)x * sz, (const char *)b->o + (size_t)x * sz, sz)) {
      if (first < 0) first = x;
      ndiff++;
    }
  int64_t lsediff = 0, maskdiff = 0;
  if (a->lse && b->lse)
    for (int64_t x = 0; x < n.rows; x++)
      if (memcmp(&a->lse[x], &b->lse[x], 4)) lsediff++;
  if (a->dropout_mask && b->dropout_mask && a->mask_count == b->mask_count)   /* the same seed, the same mask */
    for (int64_t x = 0; x < a->mask_count; x++) maskdiff += a->dropout_mask[x] != b->dropout_mask[x];
  if (maskdiff)
    ac_report_add(rep, AC_V_NONDETERMINISTIC, "%lld dropout mask elements differ between two runs of the same seed",
                  (long long)maskdiff);
  if (!ndiff && !lsediff) return maskdiff > 0;
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
      double kv = ac_load(ac_tensor_dtype(p, 'o'), o, idx);
      double err = fabs(kv - el->o);
      if (isfinite(err) && err > m) m = err;
    }
  }
  return m;
}
