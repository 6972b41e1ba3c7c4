/* metamorphic_grad.c: metamorphic checks of a kernel's backward (docs/backward.md "Fuzzing"),
 * without the backward oracle. The kernel's backward runs on one transformed case, with the same
 * O and LSE (the exact forward's, which neither transformation changes):
 *
 * Linearity in dO. The exact gradients are linear in dO, so dO times 2^k gives 2^k times dQ,
 * dK, dV and dσ. A deterministic kernel computes them by sums and products of dO-dependent
 * values with dO-independent ones (P, V, O, K, Q, the scale), and in binary floating point a
 * power of two commutes with every such operation as long as no result is subnormal (a sum
 * whose result is subnormal is exact, so only products can lose bits) and nothing overflows:
 * then the two runs agree bit for bit. A gradient may still overflow the dtype in one run only
 * (an f16 dQ past 65504 at one scale of dO): ±inf there agrees with the other run's value when
 * that value, at the infinite run's scale and widened by its bound, reaches the overflow
 * threshold with the same sign (overflow_alike). The smallest non-zero product is bounded below from the
 * inputs (product_floor): a non-zero sum of values of the accumulation format that are each at
 * least a is at least a u_a / 2 (all of them are multiples of ulp(a) >= a u_a / 2), a product of
 * two such lower bounds halves at most, P' of a visible key is at least P/2 (P at least 2 mu of
 * the class; else anything from the smallest binary32 subnormal up), and O' (the exact O rounded)
 * at least half of |O| less a bound on the binary64 error of O. The chain dP, D (dO·O' or Σ P' dP'),
 * dP − D, dS, dS·K, dS·Q, P·dO and the scale gives the floor (the final sums of dQ, dK, dV and dσ
 * with the grid of binary64, 2^-54, for a kernel that adds them more precisely than its class); k is then chosen so that the floor
 * times the smallest non-zero |dO| is at least twice the largest smallest-normal among binary32,
 * the case dtype and o's dtype, and so that the scaled case stays far below the class's range
 * (ac_eval_grad_in_range). When the case's own dO meets the floor, the original run is compared
 * with one run at 2^j (j = 1..4); otherwise two runs at 2^k and 2^(k+j) are. The comparison is bit
 * for bit (±0 alike, NaN with NaN) unless a repeat of the lower run differs from it (a
 * nondeterministic kernel): then, and when no such k exists (dO scaled by 2^±1..4 instead),
 * every element must agree within 2^j W_a + W_b, W the judge's bound of each run (the class's
 * terms times AC_BUDGET_MARGIN plus half an ulp at 2|value| + 4 terms, which bounds the exact
 * value's), since both runs approximate the same exact value (times 2^j). dσ has no budget: it
 * is compared only bit for bit.
 *
 * Permuted keys. A permutation of the keys (K and V rows, bias and boolean mask columns) among
 * keys that every row sees alike by the mask and the window (the same rows see them: the keys
 * every row sees, those none sees) leaves every row's set of visible (score, value) pairs and so
 * the exact dQ unchanged, and permutes the exact dK and dV alike. ALiBi (its offsets depend on
 * the key's position) gets no permutation. dQ and the permuted dK, dV must agree within W_a + W_b
 * (summation orders change; no bit-for-bit claim).
 *
 * The check rests on the same budgets as GRAD-FAIL (and on exact arithmetic for the bit-for-bit
 * claim), so GRAD-METAMORPHIC fails by default. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "budget.h"
#include "grad_judge.h"
#include "variants.h"

static double min_normal(ac_dtype t) { return ldexp(1.0, ac_dtype_get(t)->ieee_emin); }
static double min_sub(ac_dtype t) { return ldexp(1.0, ac_dtype_get(t)->ieee_emin - ac_dtype_get(t)->prec + 1); }

/* Smallest non-zero and largest |x| of n elements (inf and 0 when all are zero). */
static void magnitudes(ac_dtype t, const void *base, size_t n, double *lo, double *hi)
{
  *lo = INFINITY, *hi = 0;
  for (size_t i = 0; i < n; i++) {
    double a = fabs(ac_load(t, base, i));
    if (a > 0 && a < *lo) *lo = a;
    if (a > *hi) *hi = a;
  }
}

/* Lower bounds of the non-zero P' of visible keys and sinks (*pmin) and of the non-zero O'
 * (*omin) the kernel may use, from a binary64 recomputation of the forward (header comment). */
static void weight_floors(const ac_case *c, const ac_precision *cls, double *pmin, double *omin)
{
  const ac_problem *p = &c->p;
  const ac_dtype od = ac_tensor_dtype(p, 'o');
  const double sc = ac_problem_scale(p), lost = 2 * cls->mu, psub = min_sub(AC_F32);
  double *s = ac_xmalloc(sizeof(double) * (size_t)(p->tk + 1)), *ov = ac_xmalloc(sizeof(double) * (size_t)(2 * p->dv + 1));
  *pmin = *omin = INFINITY;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) {
        const int64_t kvh = ac_kv_head(p, h);
        const int sink = (p->f.used & AC_FEAT_SINKS) && c->sinks[h] > -INFINITY;   /* -inf: no sink */
        double m = sink ? c->sinks[h] : -INFINITY, sum = 0;
        for (int64_t j = 0; j < p->tk; j++) {
          double d = 0;
          for (int64_t t = 0; t < p->dk; t++)
            d += ac_load(p->dtype, c->q, ac_qidx(p, b, h, i, t)) * ac_load(p->dtype, c->k, ac_kidx(p, b, kvh, j, t));
          s[j] = ac_features_score_f64(c, b, h, i, j, sc * d);
          if (s[j] > m) m = s[j];
        }
        if (m == -INFINITY) continue;
        if (sink) sum += exp(c->sinks[h] - m);
        for (int64_t j = 0; j < p->tk; j++) sum += s[j] > -INFINITY ? exp(s[j] - m) : 0;
        const double L = m + log(sum);
        memset(ov, 0, sizeof(double) * (size_t)(2 * p->dv));
        for (int64_t j = -sink; j < p->tk; j++) {
          double P = exp((j < 0 ? c->sinks[h] : s[j]) - L);
          if (j >= 0 && s[j] == -INFINITY) continue;
          *pmin = fmin(*pmin, P >= lost ? P / 2 : psub);
          for (int64_t t = 0; j >= 0 && t < p->dv; t++) {
            double v = ac_load(p->dtype, c->v, ac_vidx(p, b, kvh, j, t));
            ov[t] += P * v;
            ov[p->dv + t] += P * fabs(v);
          }
        }
        for (int64_t t = 0; t < p->dv; t++)   /* O_t within 2^-40 Σ P|V| of its binary64 value */
          *omin = fmin(*omin, fmax((fabs(ov[t]) - 0x1p-40 * ov[p->dv + t]) / 2, min_sub(od)));
      }
  free(s);
  free(ov);
}

/* The smallest non-zero product the backward can form per unit of the smallest non-zero |dO|
 * (header comment); 0 when none can be promised. */
static double product_floor(const ac_case *c, const ac_precision *cls)
{
  const ac_problem *p = &c->p;
  ac_counts n = ac_case_counts(c);
  double mq, mk, mv, hi, pmin, omin;
  magnitudes(p->dtype, c->q, (size_t)n.q, &mq, &hi);
  magnitudes(p->dtype, c->k, (size_t)n.k, &mk, &hi);
  magnitudes(p->dtype, c->v, (size_t)n.v, &mv, &hi);
  weight_floors(c, cls, &pmin, &omin);
  if (!isfinite(mq) || !isfinite(mk) || !isfinite(mv) || !isfinite(pmin) || !isfinite(omin)) return 0;
  const double g = cls->u_a / 2, cm = fmin(1, fabs(ac_problem_scale(p)));
  const double dov = mv / 2, doo = omin / 2, dp = g * dov, pdp = pmin * dp / 2;
  const double dd = fmin(g * doo, g * pdp), ds = pmin * g * fmin(dp, dd) / 2;
  /* the final sums (dQ, dK, dV, dσ) also as a kernel that adds them in binary64 before rounding */
  const double dsk = ds / 4 * fmin(mk, mq) * cm, pdo = pmin / 4, grad = 0x1p-54 * fmin(dsk, pdo) * cm / 2;
  const double psd = pmin * dd / 2, dsig = 0x1p-54 * psd;
  return fmin(fmin(fmin(dov, doo), fmin(pdp, ds)), fmin(fmin(dsk, pdo), fmin(grad, dsig)));
}

/* c with dO times 2^k (exact: the caller checked the range), in out. */
static int scaled_case(const ac_case *c, int k, ac_case *out, ac_err *e)
{
  if (ac_case_copy(out, c, e)) return -1;
  const ac_dtype od = ac_tensor_dtype(&c->p, 'o');
  for (size_t i = 0, n = ac_case_bytes(c, 'o') / ac_dtype_size(od); i < n; i++)
    ac_store_bits(od, out->dout, i, ac_encode_f64(od, ldexp(ac_load(od, c->dout, i), k)));
  return 0;
}

/* 1 when dO times 2^k is exact and the scaled case stays inside the grad budget's model. */
static int scale_ok(const ac_case *c, const ac_precision *cls, int k, double dmin, double dmax)
{
  const ac_dtype od = ac_tensor_dtype(&c->p, 'o');
  if (ldexp(dmax, k) > ac_dtype_get(od)->max_finite / 2) return 0;
  if (k < 0 && dmin < INFINITY && ldexp(dmin, k) < min_normal(od)) return 0;
  ac_case s;
  ac_err e;
  if (scaled_case(c, k, &s, &e)) return 0;
  int ok = ac_eval_grad_in_range(&s, cls);
  ac_case_free(&s);
  return ok;
}

/* The keys of c permuted among keys that the same rows see by the mask and the window (perm[j]:
 * the original key at position j); 0 when no two keys may trade places (or ALiBi). */
static int key_perm(const ac_case *c, ac_rng *r, int64_t *perm)
{
  const ac_problem *p = &c->p;
  if ((p->f.used & AC_FEAT_ALIBI) || p->tk < 2) return 0;
  int64_t *first = ac_xmalloc(sizeof(int64_t) * (size_t)(2 * p->tk)), *last = first + p->tk;
  for (int64_t j = 0; j < p->tk; j++) first[j] = -1, last[j] = -2, perm[j] = j;
  for (int64_t i = 0; i < p->tq; i++) {   /* the rows that see key j: an interval (bounds non-decreasing in i) */
    int64_t lo, hi;
    ac_visible_range(p, i, &lo, &hi);
    for (int64_t j = lo < 0 ? 0 : lo; j < hi && j < p->tk; j++) {
      if (first[j] < 0) first[j] = i;
      last[j] = i;
    }
  }
  int moved = 0;
  for (int64_t j = p->tk - 1; j > 0; j--) {   /* Fisher-Yates within each class of equal (first, last) */
    int64_t cnt = 0;
    for (int64_t x = 0; x <= j; x++) cnt += first[perm[x]] == first[perm[j]] && last[perm[x]] == last[perm[j]];
    int64_t pick = (int64_t)ac_rng_below(r, (uint64_t)cnt), x = 0;
    for (;; x++)
      if (first[perm[x]] == first[perm[j]] && last[perm[x]] == last[perm[j]] && pick-- == 0) break;
    int64_t t = perm[j];
    perm[j] = perm[x], perm[x] = t;
    moved |= x != j;
  }
  free(first);
  return moved;
}

/* c with its keys (K, V rows, bias and boolean mask columns) at perm. */
static int permuted_case(const ac_case *c, const int64_t *perm, ac_case *out, ac_err *e)
{
  if (ac_case_copy(out, c, e)) return -1;
  const ac_problem *p = &c->p;
  size_t es = ac_dtype_size(p->dtype);
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = 0; j < p->tk; j++) {
        memcpy((char *)out->k + ac_kidx(p, b, kh, j, 0) * es, (const char *)c->k + ac_kidx(p, b, kh, perm[j], 0) * es, es * (size_t)p->dk);
        memcpy((char *)out->v + ac_vidx(p, b, kh, j, 0) * es, (const char *)c->v + ac_vidx(p, b, kh, perm[j], 0) * es, es * (size_t)p->dv);
      }
  size_t bs = ac_dtype_size(p->f.bias_dtype);
  for (int64_t b = 0; b < p->f.bias_b && (p->f.used & AC_FEAT_BIAS); b++)
    for (int64_t h = 0; h < p->f.bias_h; h++)
      for (int64_t i = 0; i < p->tq; i++)
        for (int64_t j = 0; j < p->tk; j++)
          memcpy((char *)out->bias + ac_biasidx(p, b, h, i, j) * bs, (const char *)c->bias + ac_biasidx(p, b, h, i, perm[j]) * bs, bs);
  for (int64_t b = 0; b < p->f.mask_b && (p->f.used & AC_FEAT_BOOL_MASK); b++)
    for (int64_t h = 0; h < p->f.mask_h; h++)
      for (int64_t i = 0; i < p->tq; i++)
        for (int64_t j = 0; j < p->tk; j++) out->bool_mask[ac_bmaskidx(p, b, h, i, j)] = c->bool_mask[ac_bmaskidx(p, b, h, i, perm[j])];
  return 0;
}

/* The backward of c with o and lse: 0 when it ran, completely and within its guards. */
static int run_bwd(const ac_kernel *k, const ac_case *c, const void *o, const float *lse, const ac_run_opts *ro,
                   ac_grad_run_result *r)
{
  ac_err e;
  memset(r, 0, sizeof *r);
  if (ac_harness_run_backward(k, c, o, lse, ro, r, &e) || r->status != AC_RUN_OK || !r->guard_ok) return -1;
  for (int t = 0; t < 4; t++)
    if (r->n_unwritten[t]) return -1;
  return 0;
}

/* What the comparison needs: both runs, their budgets (NULL: bit for bit), the factor 2^j of
 * run a, the key permutation (NULL: none) and tk. */
typedef struct {
  const ac_grad_run_result *ra, *rb;
  const ac_grad_budget *ba, *bb;
  int j;
  const int64_t *perm;
  int64_t tk, dim[4];
} gcmp;

/* The judge's W from the class's terms w at a value v (header comment). */
static double judge_w(ac_dtype dt, double w, double v) { return AC_BUDGET_MARGIN * w + 0.5 * ac_ulp(dt, 2 * fabs(v) + 4 * w); }

/* 1 when one run holds ±inf and the other's value, moved to its scale and widened by its bound,
 * reaches the dtype's overflow threshold with the same sign: the same exact gradient, overflowing
 * in one run only (an infinity within W of a value that rounds past the largest finite one is
 * legitimate, README "Budgets"), e.g. an f16 dQ of 8248 and, for dO times 16, -inf. */
static int overflow_alike(const gcmp *g, int t, int64_t ia, int64_t ib, double va, double vb)
{
  const ac_dtype dt = g->ra->dtype;
  if (isnan(va) || isnan(vb) || !isinf(va) == !isinf(vb) || (va < 0) != (vb < 0)) return 0;
  const double big = ac_dtype_get(dt)->max_finite, thr = big + 0.5 * ac_ulp(dt, big);
  const double wa = g->ba ? g->ba->w[t][ia] : 0, wb = g->bb ? g->bb->w[t][ib] : 0;
  if (!isfinite(wa) || !isfinite(wb)) return 0;
  if (isinf(va)) /* run a is run b times 2^-j */
    return ldexp(fabs(vb) + judge_w(dt, wb, vb), -g->j) + AC_BUDGET_MARGIN * wa >= thr;
  return ldexp(fabs(va) + judge_w(dt, wa, va), g->j) + AC_BUDGET_MARGIN * wb >= thr;
}

static void compare_tensor(const gcmp *g, int t, ac_gmeta_result *m)
{
  const ac_dtype dt = g->ra->dtype;
  for (int64_t ib = 0; ib < g->rb->count[t]; ib++) {
    int64_t xb = ib / g->dim[t], e = ib % g->dim[t], xa = xb;
    if (g->perm && (t == 1 || t == 2)) xa = xb - xb % g->tk + g->perm[xb % g->tk];
    int64_t ia = xa * g->dim[t] + e;
    double va = t == 3 ? g->ra->dsinks[ia] : ac_load(dt, g->ra->g[t], (size_t)ia);
    double vb = t == 3 ? g->rb->dsinks[ib] : ac_load(dt, g->rb->g[t], (size_t)ib), tol = 0, ratio;
    double sa = ldexp(va, g->j), diff = fabs(sa - vb);
    if (g->ba) {
      double wa = g->ba->w[t][ia], wb = g->bb->w[t][ib];
      if (!isfinite(wa) || !isfinite(wb)) continue;   /* outside the budget's model: no claim */
      tol = ldexp(judge_w(dt, wa, va), g->j) + judge_w(dt, wb, vb);
    }
    m->n_compared++;
    if (isnan(va) && isnan(vb)) continue;
    if (sa == vb || (t < 3 && overflow_alike(g, t, ia, ib, va, vb)))
      ratio = 0;
    else if (isnan(diff) || !isfinite(diff) || !g->ba) ratio = INFINITY;
    else ratio = tol > 0 ? diff / tol : INFINITY;
    if (ratio > m->worst_ratio || (m->tensor < 0 && ratio > 0)) {
      m->worst_ratio = ratio, m->tensor = t, m->x = xa, m->t = e;
      m->a = sa, m->b = vb, m->diff = diff, m->tol = tol;
    }
    if (ratio > 1) m->n_bad++;
  }
}

static void compare_runs(const ac_case *c, const gcmp *g0, ac_gmeta_result *m)
{
  gcmp g = *g0;
  const ac_problem *p = &c->p;
  g.tk = p->tk, g.dim[0] = g.dim[1] = p->dk, g.dim[2] = p->dv, g.dim[3] = 1;
  m->n_compared = m->n_bad = 0, m->tensor = -1, m->worst_ratio = 0;
  for (int t = 0; t < 3; t++) compare_tensor(&g, t, m);
  if (!g.ba && g.ra->dsinks && g.rb->dsinks) compare_tensor(&g, 3, m);   /* dσ: bit for bit only */
  m->checked = 1;
  m->exact = !g.ba;
  m->bad = m->n_bad > 0;
}

/* 1 when two runs of one case agree bit for bit. */
static int same_bits(const ac_grad_run_result *a, const ac_grad_run_result *b)
{
  for (int t = 0; t < 3; t++)
    if (memcmp(a->g[t], b->g[t], (size_t)a->count[t] * ac_dtype_size(a->dtype))) return 0;
  return !a->dsinks || !memcmp(a->dsinks, b->dsinks, (size_t)a->count[3] * sizeof(float));
}

/* Budgets of both cases, then the budgeted comparison; m->checked stays 0 when one is refused. */
static void compare_budgeted(const ac_case *ca, const ac_case *cb, const ac_precision *cls, const gcmp *g0,
                             ac_gmeta_result *m)
{
  ac_grad_budget ba, bb;
  ac_err e;
  memset(&ba, 0, sizeof ba), memset(&bb, 0, sizeof bb);
  if (ac_grad_budget_compute(cls, ca, &ba, &e) == 0 && ac_grad_budget_compute(cls, cb, &bb, &e) == 0) {
    gcmp g = *g0;
    g.ba = &ba, g.bb = &bb;
    compare_runs(ca, &g, m);
  }
  ac_grad_budget_free(&ba);
  ac_grad_budget_free(&bb);
}

typedef struct {
  const ac_kernel *k;
  const ac_run_opts *ro;
  const ac_precision *cls;
  const void *o;
  const float *lse;
} gctx;

/* Linearity: the scales (header comment), the runs, the comparison. */
static void check_linear(const gctx *x, const ac_case *c, const ac_grad_run_result *run, ac_rng *r, ac_gmeta_result *m)
{
  const ac_dtype od = ac_tensor_dtype(&c->p, 'o');
  double dmin, dmax;
  magnitudes(od, c->dout, ac_case_bytes(c, 'o') / ac_dtype_size(od), &dmin, &dmax);
  if (!(dmax > 0)) return;   /* dO = 0: every gradient 0, nothing to scale */
  const int j = 1 + (int)ac_rng_below(r, 4);
  double need = 2 * fmax(fmax(min_normal(AC_F32), min_normal(c->p.dtype)), fmax(min_normal(od), 2 * x->cls->eta_a / x->cls->u_a));
  double fl = product_floor(c, x->cls) * dmin;
  int ka = fl > 0 ? (int)fmax(0, ceil(log2(need / fl))) : -1, exact = ka >= 0 && ka < 1000 && scale_ok(c, x->cls, ka + j, dmin, dmax);
  int kb = ka + j;
  if (!exact) {   /* budgeted: 2^±(1..4) */
    ka = 0, kb = j * (ac_rng_next(r) & 1 ? 1 : -1);
    if (!scale_ok(c, x->cls, kb, dmin, dmax) && !scale_ok(c, x->cls, kb = -kb, dmin, dmax)) return;
  }
  ac_case ca, cb;
  ac_err e;
  ac_grad_run_result ra, rb, rr;
  ac_case_init(&cb);
  memset(&ra, 0, sizeof ra), memset(&rb, 0, sizeof rb), memset(&rr, 0, sizeof rr);
  if (scaled_case(c, ka, &ca, &e)) return;
  const ac_grad_run_result *pa = ka ? &ra : run;
  if (scaled_case(c, kb, &cb, &e) == 0 && (ka == 0 || run_bwd(x->k, &ca, x->o, x->lse, x->ro, &ra) == 0) &&
      run_bwd(x->k, &cb, x->o, x->lse, x->ro, &rb) == 0) {
    gcmp g = {pa, &rb, NULL, NULL, kb - ka, NULL, 0, {0}};
    if (ka) snprintf(m->transform, sizeof m->transform, "dO times 2^%d against dO times 2^%d", kb, ka);
    else snprintf(m->transform, sizeof m->transform, "dO times 2^%d", kb);
    if (exact) {
      compare_runs(&ca, &g, m);
      /* a mismatch counts bit for bit only for a kernel that repeats itself */
      if (m->bad && (run_bwd(x->k, &ca, x->o, x->lse, x->ro, &rr) || !same_bits(pa, &rr))) exact = 0;
    }
    if (!exact) compare_budgeted(&ca, &cb, x->cls, &g, m);
  }
  ac_grad_run_result_free(&ra);
  ac_grad_run_result_free(&rb);
  ac_grad_run_result_free(&rr);
  ac_case_free(&ca);
  ac_case_free(&cb);
}

static void check_perm(const gctx *x, const ac_case *c, const ac_grad_run_result *run, const int64_t *perm,
                       ac_gmeta_result *m)
{
  ac_case pc;
  ac_err e;
  ac_grad_run_result rb;
  if (permuted_case(c, perm, &pc, &e)) return;
  if (run_bwd(x->k, &pc, x->o, x->lse, x->ro, &rb) == 0) {
    gcmp g = {run, &rb, NULL, NULL, 0, perm, 0, {0}};
    int64_t moved = 0;
    for (int64_t j = 0; j < c->p.tk; j++) moved += perm[j] != j;
    snprintf(m->transform, sizeof m->transform, "keys permuted (%lld of %lld moved, K, V and bias/mask columns)",
             (long long)moved, (long long)c->p.tk);
    compare_budgeted(c, &pc, x->cls, &g, m);
  }
  ac_grad_run_result_free(&rb);
  ac_case_free(&pc);
}

int ac_meta_grad_check(const ac_kernel *k, const ac_run_opts *ro, const ac_case *c, const ac_precision *cls,
                       const ac_grad_run_result *run, ac_gmeta_result *m, ac_err *e)
{
  memset(m, 0, sizeof *m);
  m->tensor = -1, m->x = m->t = -1;
  /* packed sequences: the permutations and the scaled runs are drawn for dense cases only */
  if (!c->dout || c->lay || run->status != AC_RUN_OK || !run->guard_ok) return 0;
  for (int t = 0; t < 4; t++)
    if (run->n_unwritten[t]) return 0;
  ac_rng r;
  ac_rng_init(&r, ac_case_hash(c) ^ 0x67726164ull, 0);
  int64_t *perm = ac_xmalloc(sizeof *perm * (size_t)(c->p.tk + 1));
  int can_perm = key_perm(c, &r, perm), lin = !can_perm || (ac_rng_next(&r) & 1);
  gctx x = {k, ro, cls, NULL, NULL};
  void *o = NULL;
  float *lse = NULL;
  if (ac_grad_forward_inputs_as(c, ac_kernel_alibi_lse(k, ro ? ro->alibi_lse : AC_ALIBI_LSE_DECLARED), &o, &lse, e)) {
    free(perm);
    return -1;
  }
  x.o = o, x.lse = lse;
  if (lin) check_linear(&x, c, run, &r, m);
  else check_perm(&x, c, run, perm, m);
  free(o);
  free(lse);
  free(perm);
  return 0;
}
