/* gradcap.c: the softcap in the backward oracle (docs/backward.md §1.4).
 *
 * Under a softcap the score of a visible key is s_j = cap tanh(x_j) + a_j, x_j = c z_j / cap, with
 * z_j = q·k_j exact and a_j the exact offset (ALiBi, bias; 0 without); the sink (z = 0, a = σ_h)
 * keeps s = σ_h. The backward takes dS_ij w.r.t. the capped score as without a cap, then
 *   dS'_ij = dS_ij f_j,  f_j = 1 - tanh²(x_j) = sech²(x_j),
 * and dQ, dK take dS' (dV keeps P of the capped scores, dσ the sink's dS).
 *
 * Groups: keys of equal (z, a) have equal scores and equal f (tanh is injective): they form the
 * groups of gradoff.c (crat off). Keys of distinct (z, a) may still tie in score; a group is only
 * ever used as "keys of equal weight", so a finer partition keeps every formula and every exact
 * test that runs under a softcap a proof (docs/backward.md §3.4). With scale 0 every x_j = 0:
 * s_j = a_j and f_j = 1, and keys group by a alone (zfree).
 *
 * Intervals (outward at the pass precision p + 16): x_j from the scale's interval times the exact
 * z_j over the exact cap; tanh increasing; s_j - s_0 = cap (tanh x_j - tanh x_0) + (a_j - a_0)
 * with the offset difference exact (no absolute error from large offsets); f_j from sech, which
 * decreases in |x| (its interval of x spanning 0 reaches 1), squared. Past MPFR's exponent range
 * (|x| beyond about 2^61) sech underflows to [0, the least positive number]: still an enclosure. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gradint.h"

int ac_gr_has_cap(const ac_problem *p) { return (p->f.used & AC_FEAT_SOFTCAP) != 0; }

double ac_gr_cap_approx(ac_gr_ws *g, int64_t j)
{
  ac_or_ws *w = &g->w;
  long double z = ac_or_fx_to_ld(ac_or_z(w, j), w->nl, w->zlsb);
  return (double)((long double)g->capv * tanhl(w->sc.approx * z / (long double)g->capv) + g->aL[j]);
}

int ac_gr_cap_same_f(ac_gr_ws *g, int64_t j, int64_t k)
{
  ac_or_ws *w = &g->w;
  if (g->zfree || !ac_or_fx_cmp(ac_or_z(w, j), ac_or_z(w, k), w->nl)) return 1;
  mpfr_t zk;
  mpfr_init2(zk, 64);
  ac_or_fx_to_mpfr(w, g->cz, ac_or_z(w, j), NULL, w->nl, w->zlsb);
  ac_or_fx_to_mpfr(w, zk, ac_or_z(w, k), NULL, w->nl, w->zlsb);
  int same = mpfr_cmpabs(g->cz, zk) == 0;   /* sech² is even */
  mpfr_clear(zk);
  return same;
}

/* x_j = c z_j / cap into [lo, hi] (precision of lo, hi), from the scale's interval [clo, chi]. */
static void cap_x(ac_gr_ws *g, int64_t j, mpfr_srcptr clo, mpfr_srcptr chi, mpfr_t lo, mpfr_t hi)
{
  ac_or_ws *w = &g->w;
  ac_or_fx_to_mpfr(w, g->cz, ac_or_z(w, j), NULL, w->nl, w->zlsb);
  int pos = mpfr_sgn(g->cz) >= 0;
  mpfr_mul(lo, pos ? clo : chi, g->cz, MPFR_RNDD);
  mpfr_mul(hi, pos ? chi : clo, g->cz, MPFR_RNDU);
  mpfr_div_d(lo, lo, g->capv, MPFR_RNDD);
  mpfr_div_d(hi, hi, g->capv, MPFR_RNDU);
}

/* tanh x_j into [lo, hi]. */
static void cap_tanh(ac_gr_ws *g, int64_t j, mpfr_srcptr clo, mpfr_srcptr chi, mpfr_t lo, mpfr_t hi)
{
  cap_x(g, j, clo, chi, lo, hi);
  mpfr_tanh(lo, lo, MPFR_RNDD);
  mpfr_tanh(hi, hi, MPFR_RNDU);
}

void ac_gr_cap_diff(ac_gr_ws *g, int64_t j, int64_t j0, mpfr_srcptr clo, mpfr_srcptr chi, mpfr_t lo, mpfr_t hi)
{
  mpfr_prec_t p = mpfr_get_prec(lo);
  mpfr_t alo, ahi, da;
  mpfr_inits2(p, alo, ahi, (mpfr_ptr)0);
  mpfr_init2(da, ac_or_exact_prec(g->A[j], g->A[j0]));
  cap_tanh(g, j, clo, chi, lo, hi);
  cap_tanh(g, j0, clo, chi, alo, ahi);
  mpfr_sub(lo, lo, ahi, MPFR_RNDD);
  mpfr_sub(hi, hi, alo, MPFR_RNDU);
  mpfr_mul_d(lo, lo, g->capv, MPFR_RNDD);
  mpfr_mul_d(hi, hi, g->capv, MPFR_RNDU);
  AC_EXACT(mpfr_sub(da, g->A[j], g->A[j0], MPFR_RNDN), "a_j - a_0");
  mpfr_add(lo, lo, da, MPFR_RNDD);
  mpfr_add(hi, hi, da, MPFR_RNDU);
  mpfr_clears(alo, ahi, da, (mpfr_ptr)0);
}

void ac_gr_cap_factor(ac_gr_ws *g, int64_t j, mpfr_prec_t p, mpfr_t flo, mpfr_t fhi)
{
  mpfr_t clo, chi, xlo, xhi;
  mpfr_inits2(p + 16, clo, chi, xlo, xhi, (mpfr_ptr)0);
  ac_or_scale_interval(&g->w.sc, clo, chi);
  cap_x(g, j, clo, chi, xlo, xhi);
  mpfr_set_prec(flo, p);
  mpfr_set_prec(fhi, p);
  if (mpfr_sgn(xlo) >= 0) {   /* sech decreases in |x| */
    mpfr_sech(flo, xhi, MPFR_RNDD);
    mpfr_sech(fhi, xlo, MPFR_RNDU);
  } else if (mpfr_sgn(xhi) <= 0) {
    mpfr_sech(flo, xlo, MPFR_RNDD);
    mpfr_sech(fhi, xhi, MPFR_RNDU);
  } else {
    mpfr_abs(xlo, xlo, MPFR_RNDN);
    mpfr_sech(flo, mpfr_greater_p(xlo, xhi) ? xlo : xhi, MPFR_RNDD);
    mpfr_set_ui(fhi, 1, MPFR_RNDN);
  }
  mpfr_sqr(flo, flo, MPFR_RNDD);
  mpfr_sqr(fhi, fhi, MPFR_RNDU);
  mpfr_clears(clo, chi, xlo, xhi, (mpfr_ptr)0);
}

void ac_gr_cap_deriv(ac_gr_ws *g, mpfr_prec_t p)
{
  ac_or_ws *w = &g->w;
  mpfr_t flo, fhi;
  mpfr_inits2(p, flo, fhi, (mpfr_ptr)0);
  for (int64_t j = 0; j < w->n; j++) {
    if (j == g->sink || g->zs[j]) continue;   /* the sink is not capped; an exact 0 stays one */
    ac_gr_cap_factor(g, j, p, flo, fhi);   /* f_j >= 0 */
    mpfr_mul(g->Slo[j], g->Slo[j], mpfr_sgn(g->Slo[j]) >= 0 ? flo : fhi, MPFR_RNDD);
    mpfr_mul(g->Shi[j], g->Shi[j], mpfr_sgn(g->Shi[j]) >= 0 ? fhi : flo, MPFR_RNDU);
  }
  mpfr_clears(flo, fhi, (mpfr_ptr)0);
}
