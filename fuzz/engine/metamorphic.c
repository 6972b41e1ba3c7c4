/* metamorphic.c: verdicts that need no oracle (docs/bugclasses.md §3). The kernel runs on one
 * transformed case whose exact output equals the original's row for row: the largest (or a
 * random) (batch, head) slice alone, the keys permuted (mask none: K and V rows together), or
 * Q×2 with scale/2 (exact in the dtype). Every compared row of both outputs must agree within
 * a tolerance that holds for every kernel inside its class budget.
 *
 * Tolerance (certain, without the oracle). Both runs approximate the same exact value x (the
 * transformations leave x unchanged; Q×2 with a default scale: see below), each within the
 * class bound W of budget.c, so |o_a - o_b| <= W_a + W_b. W is monotone in every oracle term
 * it reads (non-negative coefficients; Δ, phi and e^{2Δ} grow with max|s| and max|c|Z), so
 * upper bounds of the terms give an upper bound of W. Per row of T visible keys and column d,
 * from the inputs alone:
 *   Σ A_j = 1, so x lies in [min_j V_jd, max_j V_jd]: |o| <= R <= max_j|V_jd| =: va and
 *   |V_jd - x| <= max_j V_jd - min_j V_jd =: vr, hence D <= vr and M <= vr (the hull cap's
 *   term; the cap is monotone in M and |o| like W);
 *   Z_j = Σ_t |q_t k_jt| <= Σ_t |q_t| max_j|k_jt| (products exact in binary64 for the narrow
 *   dtypes, the sum's rounding covered by a factor 1 + (d_k + 2) 2^-51), cz := |c| that bound;
 *   |s_j| <= |c| Z_j <= cz, |s_j - m| <= 2 cz, so Sp, G <= cz vr and S <= 2 cz vr;
 *   qk_l1 = Σ_t |q_t| + max_j Σ_t |k_jt| (the scaled-Q/K underflow part of eta_s) over the
 *   visible keys, the sum's rounding covered by the same factor;
 *   F[k] = Σ_{A_j < mu_k} A_j |V_j - x| <= min(1, T mu_k) vr and Fmass[k] <= min(1, T mu_k).
 * The maxima run over the visible prefix (prefix maxima per (batch, kv head)). The oracle's
 * error is 0 here (no oracle), and the half-ulp term is taken at va + w >= |x| + w. The
 * transformed case has the same bounds: a slice or a permutation has the same visible values;
 * Q×2, scale/2 gives the same cz exactly (powers of two) and a smaller |c| d_k eta_qk, but
 * doubles |q|_1 in qk_l1 (its factor max(1, sqrt|c|) does not grow): W of the original case
 * with qk_l1 = 2|q|_1 + max_j |k_j|_1 bounds both W_a and W_b, and the tolerance is twice that
 * W. A default scale is the real 1/sqrt(d_k), while the
 * transformed case stores the binary64 rounding halved: every s_j - m moves by at most
 * δ = 2^-52 cz, which moves x by at most e^δ (e^δ - 1) vr (budget.c's proof, with phi(δ)δ).
 * The check rests on the same budgets as FAIL, so it fails by default. Cases with attention
 * variants (bias, windows, softcap, sinks, ...) are not checked: the bounds above do not hold
 * for their scores and weights. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"

#define META_MAX_ELEMS ((int64_t)1 << 26)   /* larger cases: no second run */

int ac_meta_selected(const ac_case *c, int mode)
{
  if (mode == AC_META_OFF) return 0;
  if (ac_case_elems(c) > META_MAX_ELEMS) return 0;
  if (ac_problem_quantized(&c->p)) return 0;   /* Q x 2 and its slices would have to move codes and scales */
  if (c->p.f.used & AC_FEAT_DROPOUT) return 0;  /* a kernel draws its mask anew for a transformed case */
  if (mode == AC_META_ALWAYS) return 1;
  if (ac_fuzz_oracle_rows(c)) return 1;
  return ((ac_case_hash(c) >> 17) & 7) == 0;
}

static int all_finite(ac_dtype t, const void *base, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    if (!isfinite(ac_load(t, base, (size_t)i))) return 0;
  return 1;
}

/* Crude per-row bounds of a case for rows of (b, h): prefix maxima over keys. */
typedef struct {
  double *kmax;   /* [tk][dk]: max_{j' <= j} |k_j't| */
  double *kl1;    /* [tk]: max_{j' <= j} Σ_t |k_j't| */
  double *vmax, *vmin, *vabs;   /* [tk][dv] */
} prefix_t;

static void prefix_build(const ac_case *c, int64_t b, int64_t kh, prefix_t *pf)
{
  const ac_problem *p = &c->p;
  for (int64_t j = 0; j < p->tk; j++) {
    double l1 = 0;
    for (int64_t t = 0; t < p->dk; t++) {
      double a = fabs(ac_load(p->dtype, c->k, ac_kidx(p, b, kh, j, t)));
      double prev = j ? pf->kmax[(j - 1) * p->dk + t] : 0;
      pf->kmax[j * p->dk + t] = a > prev ? a : prev;
      l1 += a;
    }
    pf->kl1[j] = j && pf->kl1[j - 1] > l1 ? pf->kl1[j - 1] : l1;
    for (int64_t t = 0; t < p->dv; t++) {
      double v = ac_load(p->dtype, c->v, ac_vidx(p, b, kh, j, t));
      size_t x = (size_t)(j * p->dv + t), y = (size_t)((j - 1) * p->dv + t);
      pf->vmax[x] = j && pf->vmax[y] > v ? pf->vmax[y] : v;
      pf->vmin[x] = j && pf->vmin[y] < v ? pf->vmin[y] : v;
      pf->vabs[x] = j && pf->vabs[y] > fabs(v) ? pf->vabs[y] : fabs(v);
    }
  }
}

/* Tolerance of each element of row (b, h, i) of case c (exact-output shift of the default
 * scale included when scale_shift; Q doubled in the transformed case when qx2). tol[dv];
 * returns 0 for an empty row. */
static int row_tol(const ac_case *c, const ac_precision *prec, const prefix_t *pf, int64_t b, int64_t h, int64_t i,
                   const double *mu, int nmu, int scale_shift, int qx2, double *tol)
{
  const ac_problem *p = &c->p;
  int64_t T = ac_visible_count(p, i);
  if (T <= 0) return 0;
  const double *km = pf->kmax + (T - 1) * p->dk;
  double z = 0, q1 = 0;
  for (int64_t t = 0; t < p->dk; t++) {
    double a = fabs(ac_load(p->dtype, c->q, ac_qidx(p, b, h, i, t)));
    z += a * km[t];
    q1 += a;
  }
  double sumerr = 1 + (double)(p->dk + 2) * 0x1p-51;
  double cz = fabs(ac_problem_scale(p)) * z * sumerr;
  ac_oracle_row rw;
  memset(&rw, 0, sizeof rw);
  rw.visible = T;
  rw.max_abs_s = cz;
  rw.max_cZ = cz;
  rw.qk_l1 = ((qx2 ? 2 : 1) * q1 + pf->kl1[T - 1]) * sumerr;
  for (int k = 0; k < nmu; k++) rw.Fmass[k] = fmin(1, (double)T * mu[k]);
  double dl = 0x1p-52 * cz;
  double shift = scale_shift ? exp(dl) * expm1(dl) : 0;
  for (int64_t d = 0; d < p->dv; d++) {
    size_t x = (size_t)((T - 1) * p->dv + d);
    double va = pf->vabs[x], vr = pf->vmax[x] - pf->vmin[x];
    ac_oracle_elem el;
    memset(&el, 0, sizeof el);
    el.o = va;
    el.R = va;
    el.D = vr;
    el.M = vr;   /* the convex-hull cap's max_j |V_jd - x| */
    el.Sp = el.G = cz * vr;
    el.S = 2 * cz * vr;
    for (int k = 0; k < nmu; k++) el.F[k] = rw.Fmass[k] * vr;
    ac_bound bd;
    ac_budget_elem(prec, p, p->dtype, &rw, &el, mu, nmu, &bd);
    double t = 2 * bd.W + shift * vr;
    tol[d] = isnan(t) ? INFINITY : t;
  }
  return 1;
}

/* The transformation, chosen from the case hash among those that apply. */
enum { T_SLICE = 0, T_PERM, T_QX2, T_N };

static int qx2_exact(const ac_case *c, ac_counts n)
{
  const ac_problem *p = &c->p;
  double sc = fabs(ac_problem_scale(p));
  if (!(sc >= 0x1p-100 && sc <= 0x1p100)) return 0;
  double mf = ac_dtype_get(p->dtype)->max_finite, qm = 0, km = 0;
  for (int64_t i = 0; i < n.q; i++) qm = fmax(qm, fabs(ac_load(p->dtype, c->q, (size_t)i)));
  for (int64_t i = 0; i < n.k; i++) km = fmax(km, fabs(ac_load(p->dtype, c->k, (size_t)i)));
  /* 2q representable, and raw dot products of 2q stay far below the dtype's range */
  return 2 * qm <= mf && 2 * qm * km * (double)p->dk <= mf / 4;
}

static int build_transform(const ac_case *c, int which, ac_rng *r, ac_case *out, char *desc, size_t nd, int64_t *sb,
                           int64_t *sh, ac_err *e)
{
  const ac_problem *p = &c->p;
  ac_counts n = ac_case_counts(c);
  if (which == T_SLICE) {
    ac_slice s;
    ac_slice_all(p, &s);
    s.b0 = ac_rng_next(r) & 1 ? p->batch - 1 : (int64_t)ac_rng_below(r, (uint64_t)p->batch);
    s.h0 = ac_rng_next(r) & 1 ? p->heads - 1 : (int64_t)ac_rng_below(r, (uint64_t)p->heads);
    s.nb = s.nh = 1;
    *sb = s.b0;
    *sh = s.h0;
    snprintf(desc, nd, "slice b=%lld h=%lld alone", (long long)s.b0, (long long)s.h0);
    return ac_case_slice(c, &s, out, e);
  }
  if (ac_case_copy(out, c, e)) return -1;
  if (which == T_PERM) {
    int64_t *pm = ac_xmalloc(sizeof *pm * (size_t)p->tk);
    for (int64_t j = 0; j < p->tk; j++) pm[j] = j;
    for (int64_t j = p->tk - 1; j > 0; j--) {
      int64_t x = (int64_t)ac_rng_below(r, (uint64_t)(j + 1)), t = pm[j];
      pm[j] = pm[x];
      pm[x] = t;
    }
    size_t es = ac_dtype_size(p->dtype);
    for (int64_t b = 0; b < p->batch; b++)
      for (int64_t kh = 0; kh < p->kv_heads; kh++)
        for (int64_t j = 0; j < p->tk; j++) {
          memcpy((char *)out->k + ac_kidx(p, b, kh, j, 0) * es, (const char *)c->k + ac_kidx(p, b, kh, pm[j], 0) * es,
                 es * (size_t)p->dk);
          memcpy((char *)out->v + ac_vidx(p, b, kh, j, 0) * es, (const char *)c->v + ac_vidx(p, b, kh, pm[j], 0) * es,
                 es * (size_t)p->dv);
        }
    free(pm);
    snprintf(desc, nd, "keys permuted (K and V rows together)");
  } else {
    for (int64_t i = 0; i < n.q; i++) ac_set(p->dtype, out->q, (size_t)i, 2 * ac_load(p->dtype, c->q, (size_t)i));
    out->p.scale = ac_problem_scale(p) / 2;
    out->p.scale_is_default = 0;
    snprintf(desc, nd, "Q*2 with scale/2 (%a)", out->p.scale);
  }
  out->has_o = out->has_lse = 0;
  return 0;
}

/* The transformation the check of c takes (one of those that apply, drawn from its hash), built
 * into out (which, the slice's batch and head into *which, *sb, *sh): 1, 0 when none applies
 * (variants, non-finite inputs), -1 when it cannot be built. */
static int pick_transform(const ac_case *c, ac_case *out, int *which, char *desc, size_t nd, int64_t *sb, int64_t *sh,
                          ac_err *e)
{
  const ac_problem *p = &c->p;
  /* the tolerance below bounds plain attention (scores q.k times the scale, a prefix of
   * visible keys, weights summing to 1): a case with variants gets no metamorphic check */
  if (p->f.used) return 0;
  ac_counts n = ac_case_counts(c);
  if (!all_finite(p->dtype, c->q, n.q) || !all_finite(p->dtype, c->k, n.k) || !all_finite(p->dtype, c->v, n.v) ||
      !isfinite(ac_problem_scale(p)))
    return 0;
  int ok[T_N], na = 0;
  ok[T_SLICE] = p->batch * p->heads > 1;
  ok[T_PERM] = p->mask == AC_MASK_NONE && p->tk > 1;
  ok[T_QX2] = qx2_exact(c, n);
  for (int t = 0; t < T_N; t++) na += ok[t];
  if (!na) return 0;
  ac_rng r;
  ac_rng_init(&r, ac_case_hash(c) ^ 0x6d65746146ull, 0);
  int pick = (int)ac_rng_below(&r, (uint64_t)na);
  for (int t = 0; t < T_N; t++)
    if (ok[t] && pick-- == 0) *which = t;
  ac_case_init(out);
  *sb = *sh = 0;
  if (build_transform(c, *which, &r, out, desc, nd, sb, sh, e)) {
    ac_case_free(out);
    return -1;
  }
  return 1;
}

int ac_meta_transformed(const ac_case *c, ac_case *out, ac_err *e)
{
  int which;
  int64_t sb, sh;
  char desc[96];
  if (c->p.f.used & AC_FEAT_LAYOUTS) return 0;
  return pick_transform(c, out, &which, desc, sizeof desc, &sb, &sh, e);
}

int ac_meta_check(const ac_kernel *k, const ac_run_opts *ro, const ac_case *c, const ac_precision *prec,
                  const ac_run_result *ra, ac_meta_result *m, ac_err *e)
{
  memset(m, 0, sizeof *m);
  m->b = m->h = m->i = m->d = -1;
  const ac_problem *p = &c->p;
  if (ra->status != AC_RUN_OK || !ra->o) return 0;
  if (p->f.used & AC_FEAT_LAYOUTS) return ac_meta_layout_check(k, ro, c, prec, ra, m, e);
  ac_case tc;
  int which = 0;
  int64_t sb = 0, sh = 0;
  int built = pick_transform(c, &tc, &which, m->transform, sizeof m->transform, &sb, &sh, e);
  if (built <= 0) return built;
  char why[256];
  if (!ac_kernel_supports(k, &tc.p, why, sizeof why)) {
    ac_case_free(&tc);
    return 0;
  }
  ac_run_result rb;
  ac_err he;
  int hrc = ac_harness_run(k, &tc, ro, &rb, &he);
  if (hrc || rb.status != AC_RUN_OK || !rb.o || !rb.guard_ok) {
    /* a crash, timeout or guard of the transformed run says nothing about agreement here;
     * the original case's own verdicts stand */
    ac_run_result_free(&rb);
    ac_case_free(&tc);
    return 0;
  }
  double mu[AC_ORACLE_NMU];
  int nmu = ac_precision_mu_list(mu, AC_ORACLE_NMU);
  prefix_t pf;
  pf.kmax = ac_xmalloc(sizeof(double) * (size_t)(p->tk * p->dk));
  pf.kl1 = ac_xmalloc(sizeof(double) * (size_t)p->tk);
  pf.vmax = ac_xmalloc(sizeof(double) * (size_t)(p->tk * p->dv));
  pf.vmin = ac_xmalloc(sizeof(double) * (size_t)(p->tk * p->dv));
  pf.vabs = ac_xmalloc(sizeof(double) * (size_t)(p->tk * p->dv));
  double *tol = ac_xmalloc(sizeof(double) * (size_t)p->dv);
  m->checked = 1;
  m->worst_ratio = 0;
  int64_t b0 = which == T_SLICE ? sb : 0, b1 = which == T_SLICE ? sb + 1 : p->batch;
  int64_t h0 = which == T_SLICE ? sh : 0, h1 = which == T_SLICE ? sh + 1 : p->heads;
  int64_t built_b = -1, built_kh = -1;
  for (int64_t b = b0; b < b1; b++)
    for (int64_t h = h0; h < h1; h++) {
      int64_t kh = ac_kv_head(p, h);
      if (b != built_b || kh != built_kh) {
        prefix_build(c, b, kh, &pf);
        built_b = b;
        built_kh = kh;
      }
      for (int64_t i = 0; i < p->tq; i++) {
        if (!row_tol(c, prec, &pf, b, h, i, mu, nmu, which == T_QX2 && p->scale_is_default, which == T_QX2, tol))
          continue;
        for (int64_t d = 0; d < p->dv; d++) {
          size_t ia = ac_oidx(p, b, h, i, d);
          size_t ib = which == T_SLICE ? ac_oidx(&tc.p, 0, 0, i, d) : ia;
          if ((ra->unwritten && ra->unwritten[ia]) || (rb.unwritten && rb.unwritten[ib])) continue;
          double va = ac_load(p->dtype, ra->o, ia), vb = ac_load(p->dtype, rb.o, ib);
          m->n_compared++;
          double diff = fabs(va - vb), ratio;
          if (isnan(va) && isnan(vb)) continue;
          if (isnan(va) || isnan(vb)) ratio = INFINITY;
          else if (va == vb) ratio = 0;
          else if (!isfinite(diff)) ratio = INFINITY;
          else ratio = diff / tol[d];
          if (isnan(ratio)) ratio = 0;   /* inf/inf: no claim */
          if (ratio > m->worst_ratio || (m->i < 0 && ratio > 0)) {
            m->worst_ratio = ratio;
            m->b = b;
            m->h = h;
            m->i = i;
            m->d = d;
            m->a = va;
            m->t = vb;
            m->diff = diff;
            m->tol = tol[d];
          }
          if (ratio > 1) m->n_bad++;
        }
      }
    }
  m->bad = m->n_bad > 0;
  free(pf.kmax);
  free(pf.kl1);
  free(pf.vmax);
  free(pf.vmin);
  free(pf.vabs);
  free(tol);
  ac_run_result_free(&rb);
  ac_case_free(&tc);
  return 0;
}

double *ac_meta_dense_tols(const ac_case *c, const ac_precision *prec)
{
  const ac_problem *p = &c->p;
  double mu[AC_ORACLE_NMU];
  int nmu = ac_precision_mu_list(mu, AC_ORACLE_NMU);
  prefix_t pf;
  pf.kmax = ac_xmalloc(sizeof(double) * (size_t)(p->tk * p->dk));
  pf.kl1 = ac_xmalloc(sizeof(double) * (size_t)p->tk);
  pf.vmax = ac_xmalloc(sizeof(double) * (size_t)(p->tk * p->dv));
  pf.vmin = ac_xmalloc(sizeof(double) * (size_t)(p->tk * p->dv));
  pf.vabs = ac_xmalloc(sizeof(double) * (size_t)(p->tk * p->dv));
  double *tol = ac_xcalloc((size_t)(p->heads * p->tq * p->dv), sizeof *tol);
  for (int64_t h = 0, built = -1; h < p->heads; h++) {
    if (ac_kv_head(p, h) != built) prefix_build(c, 0, built = ac_kv_head(p, h), &pf);
    for (int64_t i = 0; i < p->tq; i++)
      row_tol(c, prec, &pf, 0, h, i, mu, nmu, 0, 0, tol + (h * p->tq + i) * p->dv);
  }
  free(pf.kmax);
  free(pf.kl1);
  free(pf.vmax);
  free(pf.vmin);
  free(pf.vabs);
  return tol;
}
