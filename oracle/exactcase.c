/* exactcase.c: groups of equal exact score, the exact-case test and the sign of o - b
 * (docs/numerics.md §3).
 *
 * With groups g of equal score, n_g keys and W_g = Σ_{j∈g} V_j,
 *   o - b = Σ_g (W_g - n_g b) e^{t_g} / L,
 * and by Lindemann–Weierstrass (the t_g are distinct algebraic numbers) this vanishes only
 * when every coefficient does. So o is exactly the rational W/n when all group means are
 * equal, and otherwise o is never a breakpoint; its side of a breakpoint b is the sign of
 * a sum whose coefficients are exact: when they share a sign that is the answer, else the
 * sum is evaluated by intervals in the extended exponent range, where e^{t_g} keeps its
 * exponent however small it is. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "oracle_int.h"

static int cmp_keys(const void *pa, const void *pb, void *ctx)
{
  const ac_or_ws *w = ctx;
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  int c = ac_or_fx_cmp(ac_or_z(w, a), ac_or_z(w, b), w->nl);
  if (w->sc.sign > 0) c = -c;          /* decreasing score */
  if (c) return c;
  return a < b ? -1 : a > b;
}

void ac_or_groups(ac_or_ws *w)
{
  int64_t n = w->n;
  for (int64_t j = 0; j < n; j++) w->ord[j] = j;
  if (w->sc.sign == 0) {               /* every visible score is exactly 0 */
    w->ng = 1;
    w->gst[0] = 0;
    w->gst[1] = n;
    for (int64_t j = 0; j < n; j++) w->gof[j] = 0;
    return;
  }
  qsort_r(w->ord, (size_t)n, sizeof *w->ord, cmp_keys, w);
  int64_t g = 0;
  w->gst[0] = 0;
  w->gof[w->ord[0]] = 0;
  for (int64_t r = 1; r < n; r++) {
    if (ac_or_fx_cmp(ac_or_z(w, w->ord[r]), ac_or_z(w, w->ord[r - 1]), w->nl)) w->gst[++g] = r;
    w->gof[w->ord[r]] = g;
  }
  w->ng = g + 1;
  w->gst[w->ng] = n;
}

void ac_or_group_vsum(ac_or_ws *w, int64_t g, int64_t t, mpfr_t out)
{
  const ac_or_head *hd = w->head;
  int64_t dv = w->p->dv;
  int64_t r0 = g < 0 ? 0 : w->gst[g], r1 = g < 0 ? w->n : w->gst[g + 1];
  AC_ASSERT(g < w->ng && r0 < r1, "a group has keys");
  int32_t lsb = hd->v_lsb[t];
  int nc = ac_or_fx_chunks(ac_or_vcol_bits(hd, t, r1 - r0, 0));
  if (nc > w->cap_acc) {
    w->acc = ac_xrealloc(w->acc, (size_t)nc * sizeof *w->acc);
    w->cap_acc = nc;
  }
  memset(w->acc, 0, (size_t)nc * sizeof *w->acc);
  for (int64_t r = r0; r < r1; r++) {
    int64_t j = g < 0 ? r : w->ord[r];
    int32_t e;
    int64_t M = ac_or_v(hd, (size_t)(j * dv + t), t, &e);
    if (!M) continue;
    ac_or_fx_add(w->acc, nc, (ac_u128)(M < 0 ? -M : M), M < 0, e - lsb);
  }
  uint64_t limbs[nc];
  ac_or_fx_norm(w->acc, nc, limbs);
  ac_or_fx_to_mpfr(w, out, limbs, NULL, nc, lsb);
}

int ac_or_exact_elem(ac_or_ws *w, int64_t t, mpfr_t W)
{
  const ac_or_head *hd = w->head;
  int64_t dv = w->p->dv;
  if (w->ng > 1) {
    /* Cheap filter: approximate group means (long double, relative error far below 2^-40). */
    long double mean0 = 0, abs0 = 0;
    for (int64_t g = 0; g < w->ng; g++) {
      long double s = 0, a = 0;
      int64_t ng = w->gst[g + 1] - w->gst[g];
      for (int64_t r = w->gst[g]; r < w->gst[g + 1]; r++) {
        double v = ac_or_vval(hd, (size_t)(w->ord[r] * dv + t));
        s += v;
        a += fabs(v);
      }
      s /= ng;
      a /= ng;
      if (g == 0) { mean0 = s; abs0 = a; continue; }
      if (fabsl(s - mean0) > ldexpl(a + abs0, -40)) return 0;
    }
    /* Exact: W_g n_0 = W_0 n_g for every g. */
    mpfr_t W0, Wg, x, y;
    mpfr_inits2(64, W0, Wg, x, y, (mpfr_ptr)0);
    ac_or_group_vsum(w, 0, t, W0);
    int64_t n0 = w->gst[1] - w->gst[0];
    int ok = 1;
    for (int64_t g = 1; g < w->ng && ok; g++) {
      int64_t ng = w->gst[g + 1] - w->gst[g];
      ac_or_group_vsum(w, g, t, Wg);
      mpfr_set_prec(x, mpfr_get_prec(Wg) + 64);
      mpfr_set_prec(y, mpfr_get_prec(W0) + 64);
      AC_EXACT(mpfr_mul_si(x, Wg, (long)n0, MPFR_RNDN), "W_g n_0 in prec(W_g) + 64 bits");
      AC_EXACT(mpfr_mul_si(y, W0, (long)ng, MPFR_RNDN), "W_0 n_g in prec(W_0) + 64 bits");
      ok = mpfr_equal_p(x, y);
    }
    mpfr_clears(W0, Wg, x, y, (mpfr_ptr)0);
    if (!ok) return 0;
  }
  ac_or_group_vsum(w, -1, t, W);
  return 1;
}

int ac_or_sign_vs(ac_or_ws *w, int64_t t, mpfr_srcptr bp)
{
  int64_t ng = w->ng;
  mpfr_t *c = ac_xmalloc((size_t)ng * sizeof *c);
  mpfr_t *lo = ac_xmalloc((size_t)ng * sizeof *lo), *hi = ac_xmalloc((size_t)ng * sizeof *hi);
  mpfr_ptr *plo = ac_xmalloc((size_t)ng * sizeof *plo), *phi = ac_xmalloc((size_t)ng * sizeof *phi);
  mpfr_t Wg, nb;
  mpfr_inits2(64, Wg, nb, (mpfr_ptr)0);
  int npos = 0, nneg = 0;
  for (int64_t g = 0; g < ng; g++) {
    int64_t n = w->gst[g + 1] - w->gst[g];
    ac_or_group_vsum(w, g, t, Wg);
    mpfr_set_prec(nb, mpfr_get_prec(bp) + 64);
    AC_EXACT(mpfr_mul_si(nb, bp, (long)n, MPFR_RNDN), "n_g b in prec(b) + 64 bits");
    mpfr_init2(c[g], ac_or_exact_prec(Wg, nb));
    AC_EXACT(mpfr_sub(c[g], Wg, nb, MPFR_RNDN), "the coefficients W_g - n_g b of the sign test are exact");
    int s = mpfr_sgn(c[g]);
    npos += s > 0;
    nneg += s < 0;
  }
  int res = 0;
  if (npos && !nneg) res = 1;
  else if (nneg && !npos) res = -1;
  else if (npos && nneg) {
    /* The sign does not change when every term is divided by e^{t_*}, t_* the score of the
     * first group with c_g != 0: its weight becomes ~1 and the others e^{t_g - t_*} <= 1.
     * Without this, groups whose weights underflow even MPFR's extended exponent range
     * (t_g ~ -1e36) would all sit in [0, tiny] and leave the sign undecided at any precision. */
    int64_t gs = 0;
    while (!mpfr_sgn(c[gs])) gs++;
    AC_ASSERT(gs < ng, "a group with a non-zero coefficient exists");
    if (w->var) {   /* variants: scores that nearly tie need the differences themselves (varziv.c) */
      res = ac_or_var_sign(w, c, ng, gs);
      goto done;
    }
    mpfr_t rlo, rhi, dlo, dhi;
    mpfr_inits2(w->wprec, rlo, rhi, dlo, dhi, (mpfr_ptr)0);
    int64_t k = 0;
    for (int64_t g = 0; g < ng; g++) {
      int s = mpfr_sgn(c[g]);
      if (!s) continue;
      /* e^{t_g - t_*} in [exp(tlo_g - thi_*) RNDD, exp(thi_g - tlo_*) RNDU] */
      mpfr_sub(dlo, w->tlo[g], w->thi[gs], MPFR_RNDD);
      mpfr_sub(dhi, w->thi[g], w->tlo[gs], MPFR_RNDU);
      mpfr_exp(rlo, dlo, MPFR_RNDD);
      mpfr_exp(rhi, dhi, MPFR_RNDU);
      mpfr_prec_t pr = mpfr_get_prec(c[g]) + w->wprec;
      mpfr_init2(lo[k], pr);
      mpfr_init2(hi[k], pr);
      mpfr_mul(lo[k], c[g], s > 0 ? rlo : rhi, MPFR_RNDD);
      mpfr_mul(hi[k], c[g], s > 0 ? rhi : rlo, MPFR_RNDU);
      plo[k] = lo[k];
      phi[k] = hi[k];
      k++;
    }
    mpfr_t slo, shi;
    mpfr_inits2(w->wprec, slo, shi, (mpfr_ptr)0);
    mpfr_sum(slo, plo, (unsigned long)k, MPFR_RNDD);
    mpfr_sum(shi, phi, (unsigned long)k, MPFR_RNDU);
    if (mpfr_sgn(slo) > 0) res = 1;
    else if (mpfr_sgn(shi) < 0) res = -1;
    mpfr_clears(slo, shi, rlo, rhi, dlo, dhi, (mpfr_ptr)0);
    for (int64_t q = 0; q < k; q++) { mpfr_clear(lo[q]); mpfr_clear(hi[q]); }
  }
done:
  for (int64_t g = 0; g < ng; g++) mpfr_clear(c[g]);
  mpfr_clears(Wg, nb, (mpfr_ptr)0);
  free(c); free(lo); free(hi); free(plo); free(phi);
  return res;
}

int ac_or_m_exact(ac_or_ws *w, mpfr_t m)
{
  if (w->var) return ac_or_var_m_exact(w, m);
  const uint64_t *zt = ac_or_z(w, w->ord[0]);
  mpfr_set_prec(m, 64);
  if (w->sc.sign == 0 || ac_or_fx_sign(zt, w->nl) == 0) { mpfr_set_zero(m, 1); return 1; }
  mpfr_t z;
  mpfr_init2(z, 64);
  ac_or_fx_to_mpfr(w, z, zt, NULL, w->nl, w->zlsb);
  mpfr_set_prec(m, mpfr_get_prec(z) + 64);
  int ok;
  if (w->sc.kind == AC_SCALE_IRRATIONAL) ok = 0;
  else if (w->sc.kind == AC_SCALE_RATIONAL) {
    int64_t k = (int64_t)llround(sqrt((double)w->sc.dk));
    ok = mpfr_div_si(m, z, (long)k, MPFR_RNDN) == 0;
  } else {
    mpfr_t c, c2;
    mpfr_inits2(64, c, c2, (mpfr_ptr)0);
    ac_or_scale_interval(&w->sc, c, c2);
    ok = mpfr_mul(m, z, c, MPFR_RNDN) == 0;
    mpfr_clears(c, c2, (mpfr_ptr)0);
  }
  mpfr_clear(z);
  return ok;
}
