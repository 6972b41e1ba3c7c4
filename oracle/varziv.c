/* varziv.c: enclosures of variant scores for the levels of ziv.c (docs/numerics.md §11.2).
 *
 * Differences of scores are enclosed directly, never as a difference of two enclosed scores,
 * so that their relative error stays small however large the scores are:
 *   FOLD  s_j - s_k = (g_j - g_k) / rk, g exact;
 *   LIN   c (z_j - z_k) + (a_j - a_k), z and a exact, c in [clo, chi];
 *   CAP   cap D + (a_j - a_k), D = tanh x_j - tanh x_k = sinh(x_j - x_k) / (cosh x_j cosh x_k),
 *         x = c z / cap, x_j - x_k = c (z_j - z_k) / cap from the exact difference. D also obeys
 *         |D| <= 2, |D| <= |x_j - x_k| (tanh' <= 1) and, for x_j, x_k of one sign,
 *         |D| <= 1 - tanh min(|x|) <= 2 e^{-2 min |x|}: far past saturation, where cosh overflows
 *         MPFR's exponent range and D itself underflows it, D stays in (0, tiny] with its exact
 *         sign, the sign of c (z_j - z_k). Every enclosure is rounded outward.
 * The sign of a difference is exact whenever one part vanishes (z_j = z_k: the sign of a_j - a_k;
 * a_j = a_k: the sign of c (z_j - z_k), tanh being increasing); the sign test uses that to
 * decide o against a breakpoint by Σ_g c_g (1 + expm1(s_g - s_*)) when weights differ by far
 * less than any precision resolves (capped scores that nearly tie). */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "oracle_int.h"
#include "varint.h"

/* [lo, hi] = [clo, chi] x (x exact), outward. */
static void mul_c(mpfr_t lo, mpfr_t hi, mpfr_srcptr clo, mpfr_srcptr chi, mpfr_srcptr x)
{
  if (mpfr_sgn(x) >= 0) {
    mpfr_mul(lo, clo, x, MPFR_RNDD);
    mpfr_mul(hi, chi, x, MPFR_RNDU);
  } else {
    mpfr_mul(lo, chi, x, MPFR_RNDD);
    mpfr_mul(hi, clo, x, MPFR_RNDU);
  }
}

/* cosh over [lo, hi]: [cosh(min |x|) RNDD, cosh(max |x|) RNDU]. */
static void cosh_range(mpfr_t clo, mpfr_t chi, mpfr_srcptr lo, mpfr_srcptr hi, mpfr_t tmp)
{
  if (mpfr_sgn(lo) <= 0 && mpfr_sgn(hi) >= 0) {
    mpfr_set_ui(clo, 1, MPFR_RNDN);
  } else {
    mpfr_srcptr near = mpfr_sgn(lo) > 0 ? lo : hi;
    mpfr_abs(tmp, near, MPFR_RNDN);
    mpfr_cosh(clo, tmp, MPFR_RNDD);
  }
  mpfr_abs(tmp, lo, MPFR_RNDN);
  if (mpfr_cmpabs(hi, lo) > 0) mpfr_abs(tmp, hi, MPFR_RNDN);
  mpfr_cosh(chi, tmp, MPFR_RNDU);
}

/* x = c z / cap for key j into [lo, hi] (z exact in zx). */
static void x_interval(ac_or_var *v, mpfr_t lo, mpfr_t hi, mpfr_srcptr clo, mpfr_srcptr chi, mpfr_srcptr zx)
{
  mul_c(lo, hi, clo, chi, zx);
  mpfr_div_d(lo, lo, v->cap, MPFR_RNDD);
  mpfr_div_d(hi, hi, v->cap, MPFR_RNDU);
}

/* D = tanh x_j - tanh x_k (sign sD exactly, != 0) into [Dlo, Dhi] at precision q. */
static void cap_diff(ac_or_var *v, mpfr_t Dlo, mpfr_t Dhi, mpfr_srcptr clo, mpfr_srcptr chi, mpfr_srcptr zj,
                     mpfr_srcptr zk, mpfr_srcptr dz, int sD, mpfr_prec_t q)
{
  mpfr_t xjl, xjh, xkl, xkh, dl, dh, a, b, c, d, t;
  mpfr_inits2(q, xjl, xjh, xkl, xkh, dl, dh, a, b, c, d, t, (mpfr_ptr)0);
  x_interval(v, xjl, xjh, clo, chi, zj);
  x_interval(v, xkl, xkh, clo, chi, zk);
  x_interval(v, dl, dh, clo, chi, dz);
  mpfr_sinh(dl, dl, MPFR_RNDD);
  mpfr_sinh(dh, dh, MPFR_RNDU);
  cosh_range(a, b, xjl, xjh, t);
  cosh_range(c, d, xkl, xkh, t);
  mpfr_mul(a, a, c, MPFR_RNDD);   /* the product of the cosh, [a, b] */
  mpfr_mul(b, b, d, MPFR_RNDU);
  if (sD > 0) {
    mpfr_div(Dlo, dl, b, MPFR_RNDD);
    mpfr_div(Dhi, dh, a, MPFR_RNDU);
  } else {
    mpfr_div(Dlo, dl, a, MPFR_RNDD);
    mpfr_div(Dhi, dh, b, MPFR_RNDU);
  }
  /* B = min(2, |x_j - x_k|, 2 e^{-2 min|x|} when x_j and x_k share a sign) */
  mpfr_set_ui(c, 2, MPFR_RNDN);
  x_interval(v, xjl, xjh, clo, chi, dz);
  mpfr_abs(xjl, xjl, MPFR_RNDN);
  mpfr_abs(xjh, xjh, MPFR_RNDN);
  mpfr_max(t, xjl, xjh, MPFR_RNDN);
  mpfr_min(c, c, t, MPFR_RNDN);
  x_interval(v, xjl, xjh, clo, chi, zj);
  int sj = mpfr_sgn(xjl) > 0 ? 1 : mpfr_sgn(xjh) < 0 ? -1 : 0;
  int sk = mpfr_sgn(xkl) > 0 ? 1 : mpfr_sgn(xkh) < 0 ? -1 : 0;
  if (sj && sj == sk) {
    mpfr_srcptr mj = sj > 0 ? xjl : xjh, mk = sk > 0 ? xkl : xkh;
    if (mpfr_cmpabs(mj, mk) < 0) mpfr_abs(t, mj, MPFR_RNDN);
    else mpfr_abs(t, mk, MPFR_RNDN);
    mpfr_mul_si(t, t, -2, MPFR_RNDU);
    mpfr_exp(t, t, MPFR_RNDU);   /* never 0: RNDU stops at the smallest positive number */
    mpfr_mul_ui(t, t, 2, MPFR_RNDU);
    mpfr_min(c, c, t, MPFR_RNDN);
  }
  if (sD > 0) {
    if (mpfr_nan_p(Dhi) || mpfr_greater_p(Dhi, c)) mpfr_set(Dhi, c, MPFR_RNDU);
    if (mpfr_nan_p(Dlo) || mpfr_sgn(Dlo) < 0) mpfr_set_zero(Dlo, 1);
  } else {
    mpfr_neg(c, c, MPFR_RNDN);
    if (mpfr_nan_p(Dlo) || mpfr_less_p(Dlo, c)) mpfr_set(Dlo, c, MPFR_RNDD);
    if (mpfr_nan_p(Dhi) || mpfr_sgn(Dhi) > 0) mpfr_set_zero(Dhi, -1);
  }
  mpfr_clears(xjl, xjh, xkl, xkh, dl, dh, a, b, c, d, t, (mpfr_ptr)0);
}

/* tanh x = sg (1 - tau), tau = 1 - tanh|x| = 2 / (e^{2|x|} + 1), for x = c z / cap (z exact, != 0):
 * sg = sign(x) exactly and [tlo, thi] encloses tau outward. Far past saturation tlo underflows to
 * 0 and thi stays positive (RNDU), so tanh x keeps its distance to ±1 where sinh and cosh overflow. */
static int tau_interval(ac_or_var *v, mpfr_t tlo, mpfr_t thi, mpfr_srcptr clo, mpfr_srcptr chi, mpfr_srcptr z,
                        mpfr_t xlo, mpfr_t xhi)
{
  x_interval(v, xlo, xhi, clo, chi, z);
  int sg = mpfr_sgn(xlo) > 0 ? 1 : -1;
  AC_ASSERT(mpfr_sgn(xlo) == mpfr_sgn(xhi) && mpfr_sgn(xlo) != 0, "x = c z / cap has the exact sign of c z");
  if (sg < 0) {   /* |x| in [-xhi, -xlo] */
    mpfr_neg(xlo, xlo, MPFR_RNDN);
    mpfr_neg(xhi, xhi, MPFR_RNDN);
    mpfr_swap(xlo, xhi);
  }
  mpfr_mul_2ui(xhi, xhi, 1, MPFR_RNDU);
  mpfr_exp(xhi, xhi, MPFR_RNDU);   /* +inf on overflow: tau's lower end 0 */
  mpfr_add_ui(xhi, xhi, 1, MPFR_RNDU);
  mpfr_ui_div(tlo, 2, xhi, MPFR_RNDD);
  mpfr_mul_2ui(xlo, xlo, 1, MPFR_RNDD);
  mpfr_exp(xlo, xlo, MPFR_RNDD);   /* the largest finite number on overflow */
  mpfr_add_ui(xlo, xlo, 1, MPFR_RNDD);
  mpfr_ui_div(thi, 2, xlo, MPFR_RNDU);
  return sg;
}

/* [lo, hi] += s [tlo, thi] (s in {-1, 0, 1}), outward. */
static void add_signed(mpfr_t lo, mpfr_t hi, int s, mpfr_srcptr tlo, mpfr_srcptr thi)
{
  if (s > 0) {
    mpfr_add(lo, lo, tlo, MPFR_RNDD);
    mpfr_add(hi, hi, thi, MPFR_RNDU);
  } else if (s < 0) {
    mpfr_sub(lo, lo, thi, MPFR_RNDD);
    mpfr_sub(hi, hi, tlo, MPFR_RNDU);
  }
}

/* The saturation-aware enclosure of a capped difference, intersected into [lo, hi]:
 *   s_j - s_k = K + cap R,  K = cap (sg_j - sg_k) + (a_j - a_k) exact,  R = sg_k tau_k - sg_j tau_j,
 * with tau_j, tau_k enclosed directly (tau_interval): no cancellation against 1 however far past
 * saturation x is. Returns the exact sign of s_j - s_k when K = 0 (then sg_j != sg_k and R has the
 * sign of sg_k - sg_j), else 2. A fixed key (z = 0) has sg = 0. */
static int cap_tau(ac_or_var *v, mpfr_t lo, mpfr_t hi, mpfr_srcptr clo, mpfr_srcptr chi, mpfr_srcptr zj, mpfr_srcptr zk,
                   mpfr_srcptr d, mpfr_prec_t q)
{
  mpfr_t tlo, thi, xlo, xhi, Rlo, Rhi, K, cs;
  mpfr_inits2(q, tlo, thi, xlo, xhi, Rlo, Rhi, (mpfr_ptr)0);
  mpfr_set_zero(Rlo, 1);
  mpfr_set_zero(Rhi, 1);
  int sj = 0, sk = 0;
  if (!mpfr_zero_p(zk)) {
    sk = tau_interval(v, tlo, thi, clo, chi, zk, xlo, xhi);
    add_signed(Rlo, Rhi, sk, tlo, thi);
  }
  if (!mpfr_zero_p(zj)) {
    sj = tau_interval(v, tlo, thi, clo, chi, zj, xlo, xhi);
    add_signed(Rlo, Rhi, -sj, tlo, thi);
  }
  mpfr_init2(cs, 56);
  AC_EXACT(mpfr_set_d(cs, v->cap, MPFR_RNDN), "the softcap");
  AC_EXACT(mpfr_mul_si(cs, cs, sj - sk, MPFR_RNDN), "cap times -2..2 in 56 bits");
  mpfr_init2(K, ac_or_exact_prec(cs, d));
  AC_EXACT(mpfr_add(K, cs, d, MPFR_RNDN), "K in the precision that holds it");
  mpfr_mul_d(Rlo, Rlo, v->cap, MPFR_RNDD);
  mpfr_mul_d(Rhi, Rhi, v->cap, MPFR_RNDU);
  mpfr_add(Rlo, Rlo, K, MPFR_RNDD);
  mpfr_add(Rhi, Rhi, K, MPFR_RNDU);
  if (mpfr_less_p(lo, Rlo)) mpfr_set(lo, Rlo, MPFR_RNDD);
  if (mpfr_greater_p(hi, Rhi)) mpfr_set(hi, Rhi, MPFR_RNDU);
  int s = mpfr_zero_p(K) ? (sk > sj ? 1 : -1) : 2;
  mpfr_clears(tlo, thi, xlo, xhi, Rlo, Rhi, K, cs, (mpfr_ptr)0);
  return s;
}

/* 1 when tau = 1 - tanh|x| of key j or k may fall below 2^-(q/2) (|x| > q ln2 / 4, taken with a
 * margin): there the distance to ±1 needs the saturation-aware form (cap_tau); below it sinh,
 * cosh and the sign test at precision q resolve it. */
static int saturating(const ac_or_ws *w, mpfr_srcptr zj, mpfr_srcptr zk, mpfr_prec_t q)
{
  double lim = 0.15 * (double)q * w->var->cap, c = fabs(w->sc.approx);
  return !(fabs(mpfr_get_d(zj, MPFR_RNDN)) * c <= lim) || !(fabs(mpfr_get_d(zk, MPFR_RNDN)) * c <= lim);
}

static int sign_of(mpfr_srcptr lo, mpfr_srcptr hi)
{
  if (mpfr_sgn(lo) > 0) return 1;
  if (mpfr_sgn(hi) < 0) return -1;
  return 2;
}

int ac_or_var_diff(ac_or_ws *w, int64_t j, int64_t k, mpfr_prec_t p, mpfr_t lo, mpfr_t hi)
{
  ac_or_var *v = w->var;
  mpfr_t d, dz, zj, zk, clo, chi, plo, phi;
  if (v->mode == AC_VAR_FOLD) {
    ac_or_var_need_g(w, j);
    ac_or_var_need_g(w, k);
    mpfr_init2(d, ac_or_exact_prec(v->g[j], v->g[k]));
    AC_EXACT(mpfr_sub(d, v->g[j], v->g[k], MPFR_RNDN), "a difference of exact values");
    mpfr_div_si(lo, d, v->rk, MPFR_RNDD);
    mpfr_div_si(hi, d, v->rk, MPFR_RNDU);
    int s = mpfr_sgn(d);
    mpfr_clear(d);
    return s;
  }
  mpfr_init2(d, ac_or_exact_prec(v->a[j], v->a[k]));
  AC_EXACT(mpfr_sub(d, v->a[j], v->a[k], MPFR_RNDN), "a_j - a_k exactly");
  mpfr_inits2(64, dz, zj, zk, (mpfr_ptr)0);
  ac_or_fx_to_mpfr(w, dz, ac_or_z(w, j), ac_or_z(w, k), w->nl, w->zlsb);
  int s;
  if (w->sc.sign == 0 || mpfr_zero_p(dz)) {
    mpfr_set(lo, d, MPFR_RNDD);
    mpfr_set(hi, d, MPFR_RNDU);
    s = mpfr_sgn(d);
  } else {
    mpfr_prec_t q = p + 32;
    int sD = mpfr_sgn(dz) * w->sc.sign;
    mpfr_inits2(q, clo, chi, plo, phi, (mpfr_ptr)0);
    ac_or_scale_interval(&w->sc, clo, chi);
    if (v->mode == AC_VAR_LIN) {
      mul_c(plo, phi, clo, chi, dz);
    } else {
      ac_or_fx_to_mpfr(w, zj, ac_or_z(w, j), NULL, w->nl, w->zlsb);
      ac_or_fx_to_mpfr(w, zk, ac_or_z(w, k), NULL, w->nl, w->zlsb);
      cap_diff(v, plo, phi, clo, chi, zj, zk, dz, sD, q);
      mpfr_mul_d(plo, plo, v->cap, MPFR_RNDD);
      mpfr_mul_d(phi, phi, v->cap, MPFR_RNDU);
    }
    mpfr_add(lo, plo, d, MPFR_RNDD);
    mpfr_add(hi, phi, d, MPFR_RNDU);
    int sK = v->mode == AC_VAR_CAP && saturating(w, zj, zk, q) ? cap_tau(v, lo, hi, clo, chi, zj, zk, d, q) : 2;
    s = mpfr_zero_p(d) ? sD : sK != 2 ? sK : sign_of(lo, hi);
    AC_ASSERT(mpfr_lessequal_p(lo, hi), "the enclosures of s_j - s_k intersect");
    mpfr_clears(clo, chi, plo, phi, (mpfr_ptr)0);
  }
  mpfr_clears(d, dz, zj, zk, (mpfr_ptr)0);
  return s;
}

void ac_or_var_tdiff(ac_or_ws *w, int64_t j, int64_t k, mpfr_prec_t p, mpfr_t lo, mpfr_t hi)
{
  ac_or_var *v = w->var;
  if (v->mode == AC_VAR_CAP && w->sc.sign != 0) {
    mpfr_prec_t q = p + 40;
    if (v->tk_key != k || v->tk_prec != q) {   /* s_k's enclosure, kept for the row's other groups */
      mpfr_set_prec(v->tk_lo, q);
      mpfr_set_prec(v->tk_hi, q);
      ac_or_var_score(w, k, q, v->tk_lo, v->tk_hi);
      v->tk_key = k;
      v->tk_prec = q;
    }
    mpfr_t sl, sh, wd;
    mpfr_inits2(q, sl, sh, wd, (mpfr_ptr)0);
    ac_or_var_score(w, j, q, sl, sh);
    mpfr_sub(sl, sl, v->tk_hi, MPFR_RNDD);
    mpfr_sub(sh, sh, v->tk_lo, MPFR_RNDU);
    mpfr_sub(wd, sh, sl, MPFR_RNDU);   /* the width, against 2^-(p+4) max(1, |t|) */
    int ok = mpfr_cmp_ui_2exp(wd, 1, -(mpfr_exp_t)p - 4) <= 0;
    if (!ok && !mpfr_zero_p(sl)) {
      mpfr_exp_t e = mpfr_get_exp(sl) - (mpfr_exp_t)p - 5;   /* |sl| >= 2^(exp - 1) */
      ok = mpfr_cmp_ui_2exp(wd, 1, e) <= 0;
    }
    mpfr_set(lo, sl, MPFR_RNDD);
    mpfr_set(hi, sh, MPFR_RNDU);
    mpfr_clears(sl, sh, wd, (mpfr_ptr)0);
    if (ok) return;
  }
  ac_or_var_diff(w, j, k, p, lo, hi);
}

void ac_or_var_score(ac_or_ws *w, int64_t j, mpfr_prec_t p, mpfr_t lo, mpfr_t hi)
{
  ac_or_var *v = w->var;
  if (v->mode == AC_VAR_FOLD) {
    ac_or_var_need_g(w, j);
    mpfr_div_si(lo, v->g[j], v->rk, MPFR_RNDD);
    mpfr_div_si(hi, v->g[j], v->rk, MPFR_RNDU);
    return;
  }
  mpfr_t z, clo, chi, xlo, xhi;
  mpfr_init2(z, 64);
  ac_or_fx_to_mpfr(w, z, ac_or_z(w, j), NULL, w->nl, w->zlsb);
  if (w->sc.sign == 0 || mpfr_zero_p(z)) {
    mpfr_set(lo, v->a[j], MPFR_RNDD);
    mpfr_set(hi, v->a[j], MPFR_RNDU);
    mpfr_clear(z);
    return;
  }
  mpfr_inits2(p + 32, clo, chi, xlo, xhi, (mpfr_ptr)0);
  ac_or_scale_interval(&w->sc, clo, chi);
  if (v->mode == AC_VAR_LIN) {
    mul_c(xlo, xhi, clo, chi, z);
  } else {
    x_interval(v, xlo, xhi, clo, chi, z);
    mpfr_tanh(xlo, xlo, MPFR_RNDD);
    mpfr_tanh(xhi, xhi, MPFR_RNDU);
    mpfr_mul_d(xlo, xlo, v->cap, MPFR_RNDD);
    mpfr_mul_d(xhi, xhi, v->cap, MPFR_RNDU);
  }
  mpfr_add(lo, xlo, v->a[j], MPFR_RNDD);
  mpfr_add(hi, xhi, v->a[j], MPFR_RNDU);
  mpfr_clears(z, clo, chi, xlo, xhi, (mpfr_ptr)0);
}

int ac_or_var_m_side(ac_or_ws *w, mpfr_t K)
{
  ac_or_var *v = w->var;
  if (!v || v->mode != AC_VAR_CAP || w->sc.sign == 0) return 0;
  int64_t j = w->ord[0];
  int sz = ac_or_fx_sign(ac_or_z(w, j), w->nl);
  if (v->fix[j] || sz == 0) return 0;
  int sg = sz * w->sc.sign;   /* the sign of x: s = K - sg cap tau, tau = 1 - tanh|x| > 0 */
  mpfr_t cs;
  mpfr_init2(cs, 56);
  AC_EXACT(mpfr_set_d(cs, v->cap, MPFR_RNDN), "the softcap");
  AC_EXACT(mpfr_mul_si(cs, cs, sg, MPFR_RNDN), "± cap");
  mpfr_set_prec(K, ac_or_exact_prec(cs, v->a[j]));
  AC_EXACT(mpfr_add(K, cs, v->a[j], MPFR_RNDN), "K in the precision that holds it");
  mpfr_clear(cs);
  return -sg;
}

int ac_or_var_m_exact(ac_or_ws *w, mpfr_t m)
{
  ac_or_var *v = w->var;
  int64_t j = w->ord[0];
  if (v->mode == AC_VAR_FOLD) {
    ac_or_var_need_g(w, j);
    mpfr_set_prec(m, mpfr_get_prec(v->g[j]) + 64);
    return mpfr_div_si(m, v->g[j], v->rk, MPFR_RNDN) == 0;
  }
  if (w->sc.sign != 0 && ac_or_fx_sign(ac_or_z(w, j), w->nl) != 0) return 0;   /* irrational or transcendental */
  mpfr_set_prec(m, mpfr_get_prec(v->a[j]));
  AC_EXACT(mpfr_set(m, v->a[j], MPFR_RNDN), "a_j in its precision");
  return 1;
}

int ac_or_var_sign(ac_or_ws *w, mpfr_t *c, int64_t ng, int64_t gs)
{
  mpfr_prec_t p = w->wprec > 64 ? w->wprec : 64;
  mpfr_t *lo = ac_xmalloc((size_t)(2 * ng) * sizeof *lo), *hi = ac_xmalloc((size_t)(2 * ng) * sizeof *hi);
  mpfr_ptr *plo = ac_xmalloc((size_t)(2 * ng) * sizeof *plo), *phi = ac_xmalloc((size_t)(2 * ng) * sizeof *phi);
  mpfr_t ulo, uhi, slo, shi;
  mpfr_inits2(p, ulo, uhi, slo, shi, (mpfr_ptr)0);
  int64_t k = 0;
  for (int64_t g = 0; g < ng; g++) { plo[k] = c[g]; phi[k] = c[g]; k++; }
  mpfr_sum(slo, plo, (unsigned long)ng, MPFR_RNDN);   /* correctly rounded: the exact sign of Σ c_g */
  int npos = mpfr_sgn(slo) > 0, nneg = mpfr_sgn(slo) < 0, known = 1;
  int64_t nt = 0;
  for (int64_t g = 0; g < ng; g++) {
    int sc = mpfr_sgn(c[g]);
    if (g == gs || !sc) continue;
    int su = ac_or_var_diff(w, w->ord[w->gst[g]], w->ord[w->gst[gs]], p, ulo, uhi);
    mpfr_expm1(ulo, ulo, MPFR_RNDD);
    mpfr_expm1(uhi, uhi, MPFR_RNDU);
    mpfr_prec_t pr = mpfr_get_prec(c[g]) + p;
    mpfr_init2(lo[nt], pr);
    mpfr_init2(hi[nt], pr);
    mpfr_mul(lo[nt], c[g], sc > 0 ? ulo : uhi, MPFR_RNDD);
    mpfr_mul(hi[nt], c[g], sc > 0 ? uhi : ulo, MPFR_RNDU);
    plo[k] = lo[nt];
    phi[k] = hi[nt];
    k++;
    nt++;
    if (su == 2) known = 0;
    else if (su * sc > 0) npos = 1;
    else if (su * sc < 0) nneg = 1;
  }
  int res = 0;
  if (known && npos != nneg) {   /* every term of one sign (or 0): exact */
    res = npos ? 1 : -1;
  } else {
    mpfr_sum(slo, plo, (unsigned long)k, MPFR_RNDD);
    mpfr_sum(shi, phi, (unsigned long)k, MPFR_RNDU);
    if (mpfr_sgn(slo) > 0) res = 1;
    else if (mpfr_sgn(shi) < 0) res = -1;
  }
  for (int64_t q = 0; q < nt; q++) { mpfr_clear(lo[q]); mpfr_clear(hi[q]); }
  mpfr_clears(ulo, uhi, slo, shi, (mpfr_ptr)0);
  free(lo); free(hi); free(plo); free(phi);
  return res;
}
