/* gradoff.c: ALiBi, bias and sinks in the backward oracle (docs/backward.md §1.2-§1.3): the scores
 * of a row are s_j = c z_j + a_j with z_j = q·k_j exact and a_j = -m_h |i + tk - tq - j| + bias_ij
 * exact (a binary32 slope times an integer, a stored bias value); a sink is one more key with
 * K = 0, V = 0 and a_j = σ_h (as in the forward).
 *
 * Groups of equal score: for a rational c = cn / cd (stored scales, 1/k for dk = k²) the score
 * times cd, E_j = cn z_j + cd a_j, is an exact number: keys sort by it. For an irrational c,
 * c (z_j - z_k) + (a_j - a_k) = 0 only when both differences are 0 (1 and c are linearly
 * independent over the rationals): a group is a pair (z, a), and the groups are ordered by a
 * binary64 approximation of s, whose largest is the reference group 0 (it need not be the exact
 * maximum: the weights below are proven either way, and the extended pass hands a row whose
 * reference is not the maximum to the MPFR passes).
 * Weights: t_g = s_g - s_0 in [c_lo, c_hi] (z_g - z_0) + (a_g - a_0) outward, w_g = e^{t_g}
 * outward, L = Σ n_g w_g by directed sums. The exponents of the exact tests (gradexact.c) are
 * E_g - E_0 (rational c) or the pairs (z_g - z_0, a_g - a_0). */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gradint.h"

int ac_gr_has_off(const ac_problem *p)
{
  return (p->f.used & (AC_FEAT_ALIBI | AC_FEAT_BIAS | AC_FEAT_SINKS | AC_FEAT_SOFTCAP)) != 0;
}

int ac_gr_sink_key(ac_gr_ws *g, int64_t h, int64_t n)
{
  ac_or_ws *w = &g->w;
  if (!(w->p->f.used & AC_FEAT_SINKS)) return 0;
  double sg = (double)w->cs->sinks[h];
  if (sg == -INFINITY) return 0;   /* weight 0: no sink */
  if (!isfinite(sg)) {
    g->offbad = 1;
    return 0;
  }
  if (n + 1 > g->cap_off) {
    g->A = ac_xrealloc(g->A, (size_t)(n + 1) * sizeof *g->A);
    for (int64_t j = g->cap_off; j < n + 1; j++) mpfr_init2(g->A[j], 64);
    g->aL = ac_xrealloc(g->aL, (size_t)(n + 1) * sizeof *g->aL);
    g->cap_off = n + 1;
  }
  mpfr_set_prec(g->A[n], 64);
  AC_EXACT(mpfr_set_d(g->A[n], sg, MPFR_RNDN), "a binary32 sink");
  g->aL[n] = (long double)sg;
  g->kidx[n] = -1;
  g->sink = n;
  return 1;
}

/* The rational scale cn / cd when it is one: 1, else 0. */
static int scale_parts(const ac_or_scale *sc, double *cn, long *cd)
{
  if (!sc->is_default) {
    *cn = sc->stored;
    *cd = 1;
    return 1;
  }
  if (sc->kind == AC_SCALE_IRRATIONAL) return 0;
  *cn = 1;
  *cd = lround(sqrt((double)sc->dk));
  return 1;
}

int64_t ac_gr_off_keys(ac_gr_ws *g, int64_t b, int64_t h, int64_t i, int64_t n)
{
  ac_or_ws *w = &g->w;
  const ac_problem *p = w->p;
  const ac_case *cs = w->cs;
  double m = 0;
  if (p->f.used & AC_FEAT_ALIBI) m = (double)cs->alibi_slopes[(p->f.alibi_per_batch ? b * p->heads : 0) + h];
  if (!isfinite(m)) return -1;
  if (n + 1 > g->cap_off) {   /* and room for the sink */
    g->A = ac_xrealloc(g->A, (size_t)(n + 1) * sizeof *g->A);
    for (int64_t j = g->cap_off; j < n + 1; j++) mpfr_init2(g->A[j], 64);
    g->aL = ac_xrealloc(g->aL, (size_t)(n + 1) * sizeof *g->aL);
    g->cap_off = n + 1;
  }
  for (int64_t r = 0; r < n; r++) {   /* NaN or +inf in a visible bias: P undefined */
    double bias = p->f.used & AC_FEAT_BIAS ? ac_load(p->f.bias_dtype, cs->bias, ac_biasidx(p, b, h, i, g->kidx[r])) : 0;
    if (isnan(bias) || bias == INFINITY) return -1;
  }
  mpfr_t x;
  mpfr_init2(x, 64);
  int64_t kept = 0;
  for (int64_t r = 0; r < n; r++) {
    int64_t j = g->kidx[r];
    double bias = p->f.used & AC_FEAT_BIAS ? ac_load(p->f.bias_dtype, cs->bias, ac_biasidx(p, b, h, i, j)) : 0;
    if (bias == -INFINITY) continue;   /* weight 0: the key drops out like a masked one */
    mpfr_set_prec(g->A[kept], 128);
    AC_EXACT(mpfr_set_d(g->A[kept], -m, MPFR_RNDN), "a binary32 slope");
    AC_EXACT(mpfr_mul_si(g->A[kept], g->A[kept], (long)ac_alibi_dist(p, i, j), MPFR_RNDN), "24 + 63 bits in 128");
    mpfr_set_prec(x, 53);
    mpfr_set_d(x, bias, MPFR_RNDN);
    mpfr_prec_t q = ac_or_exact_prec(g->A[kept], x);
    mpfr_prec_round(g->A[kept], q > 128 ? q : 128, MPFR_RNDN);
    AC_EXACT(mpfr_add(g->A[kept], g->A[kept], x, MPFR_RNDN), "a_j at the precision that holds it");
    g->aL[kept] = mpfr_get_ld(g->A[kept], MPFR_RNDN);
    g->kidx[kept++] = j;
  }
  mpfr_clear(x);
  return kept;
}

/* The exact comparison key of visible key j (rational c): E_j = cn z_j + cd a_j into x. */
static void exact_e(ac_gr_ws *g, int64_t j, double cn, long cd, mpfr_t x)
{
  ac_or_ws *w = &g->w;
  mpfr_t z, y;
  mpfr_inits2(64, z, y, (mpfr_ptr)0);
  ac_or_fx_to_mpfr(w, z, ac_or_z(w, j), NULL, w->nl, w->zlsb);
  mpfr_set_prec(x, mpfr_get_prec(z) + 53);
  AC_EXACT(mpfr_mul_d(x, z, cn, MPFR_RNDN), "cn z_j");
  mpfr_set_prec(y, mpfr_get_prec(g->A[j]) + 64);
  AC_EXACT(mpfr_mul_si(y, g->A[j], cd, MPFR_RNDN), "cd a_j");
  mpfr_prec_t q = ac_or_exact_prec(x, y);
  mpfr_prec_round(x, q > mpfr_get_prec(x) ? q : mpfr_get_prec(x), MPFR_RNDN);
  AC_EXACT(mpfr_add(x, x, y, MPFR_RNDN), "E_j at the precision that holds it");
  mpfr_clears(z, y, (mpfr_ptr)0);
}

static int cmp_off(const void *pa, const void *pb, void *ctx)
{
  ac_gr_ws *g = ctx;
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  int c;
  if (g->crat) {
    c = -mpfr_cmp(g->E[a], g->E[b]);   /* decreasing score */
  } else {
    c = g->sapx[a] > g->sapx[b] ? -1 : g->sapx[a] < g->sapx[b];
    if (!c && !g->zfree) c = ac_or_fx_cmp(ac_or_z(&g->w, a), ac_or_z(&g->w, b), g->w.nl);
    if (!c) c = mpfr_cmp(g->A[a], g->A[b]);
  }
  return c ? c : (a < b ? -1 : a > b);
}

static int same_score(ac_gr_ws *g, int64_t a, int64_t b)
{
  if (g->crat) return mpfr_equal_p(g->E[a], g->E[b]) != 0;
  return (g->zfree || !ac_or_fx_cmp(ac_or_z(&g->w, a), ac_or_z(&g->w, b), g->w.nl)) && mpfr_equal_p(g->A[a], g->A[b]);
}

void ac_gr_off_groups(ac_gr_ws *g)
{
  ac_or_ws *w = &g->w;
  int64_t n = w->n;
  double cn = 0;
  long cd = 1;
  g->crat = !g->capped && scale_parts(&w->sc, &cn, &cd);   /* a softcap groups by (z, a) (gradcap.c) */
  g->zfree = g->capped && w->sc.sign == 0;                  /* scale 0 under a softcap: s = a, by a alone */
  if (n > g->cap_e) {
    g->E = ac_xrealloc(g->E, (size_t)n * sizeof *g->E);
    for (int64_t j = g->cap_e; j < n; j++) mpfr_init2(g->E[j], 64);
    g->sapx = ac_xrealloc(g->sapx, (size_t)n * sizeof *g->sapx);
    g->cap_e = n;
  }
  for (int64_t j = 0; j < n; j++) {
    w->ord[j] = j;
    g->sapx[j] = g->capped ? ac_gr_cap_approx(g, j)
                           : (double)(w->sc.approx * ac_or_fx_to_ld(ac_or_z(w, j), w->nl, w->zlsb) + g->aL[j]);
    if (g->crat) exact_e(g, j, cn, cd, g->E[j]);
  }
  qsort_r(w->ord, (size_t)n, sizeof *w->ord, cmp_off, g);
  int64_t q = 0;
  w->gst[0] = 0;
  w->gof[w->ord[0]] = 0;
  for (int64_t r = 1; r < n; r++) {
    if (!same_score(g, w->ord[r], w->ord[r - 1])) w->gst[++q] = r;
    w->gof[w->ord[r]] = q;
  }
  w->ng = q + 1;
  w->gst[w->ng] = n;
}

void ac_gr_off_weights(ac_gr_ws *g, mpfr_prec_t p)
{
  ac_or_ws *w = &g->w;
  int64_t ng = w->ng, j0 = w->ord[0];
  mpfr_t clo, chi, dz, da, t, t2;
  mpfr_inits2(p + 16, clo, chi, t, t2, (mpfr_ptr)0);
  mpfr_inits2(64, dz, da, (mpfr_ptr)0);
  ac_or_scale_interval(&w->sc, clo, chi);
  mpfr_t *wlo = g->Slo, *whi = g->Shi;   /* scratch per group until ds_interval */
  for (int64_t q = 0; q < ng; q++) {
    int64_t j = w->ord[w->gst[q]];
    mpfr_set_prec(wlo[q], p);
    mpfr_set_prec(whi[q], p);
    if (q == 0) {
      mpfr_set_ui(wlo[q], 1, MPFR_RNDN);
      mpfr_set_ui(whi[q], 1, MPFR_RNDN);
      continue;
    }
    if (g->capped) {   /* t = cap (tanh x_g - tanh x_0) + (a_g - a_0) */
      ac_gr_cap_diff(g, j, j0, clo, chi, t, t2);
      mpfr_exp(wlo[q], t, MPFR_RNDD);
      mpfr_exp(whi[q], t2, MPFR_RNDU);
      continue;
    }
    ac_or_fx_to_mpfr(w, dz, ac_or_z(w, j), ac_or_z(w, j0), w->nl, w->zlsb);
    mpfr_set_prec(da, ac_or_exact_prec(g->A[j], g->A[j0]));
    AC_EXACT(mpfr_sub(da, g->A[j], g->A[j0], MPFR_RNDN), "a_g - a_0");
    for (int up = 0; up < 2; up++) {   /* t = c dz + da, rounded outward, then its exp */
      mpfr_mul(t, (mpfr_sgn(dz) >= 0) == !up ? clo : chi, dz, up ? MPFR_RNDU : MPFR_RNDD);
      mpfr_add(t, t, da, up ? MPFR_RNDU : MPFR_RNDD);
      mpfr_exp(up ? whi[q] : wlo[q], t, up ? MPFR_RNDU : MPFR_RNDD);
    }
  }
  for (int up = 0; up < 2; up++) {
    mpfr_t *wv = up ? whi : wlo;
    ac_gr_ensure_prod(g, ng);
    for (int64_t q = 0; q < ng; q++) {
      mpfr_set_prec(g->prod[q], p + 64);
      AC_EXACT(mpfr_mul_si(g->prod[q], wv[q], (long)(w->gst[q + 1] - w->gst[q]), MPFR_RNDN), "p + 63 bits");
    }
    mpfr_set_prec(up ? w->Lhi : w->Llo, p);
    mpfr_sum(up ? w->Lhi : w->Llo, g->pp, (unsigned long)ng, up ? MPFR_RNDU : MPFR_RNDD);
  }
  for (int64_t q = 0; q < ng; q++) {
    mpfr_set_prec(g->Plo[q], p);
    mpfr_set_prec(g->Phi[q], p);
    mpfr_div(g->Plo[q], wlo[q], w->Lhi, MPFR_RNDD);
    mpfr_div(g->Phi[q], whi[q], w->Llo, MPFR_RNDU);
  }
  mpfr_clears(clo, chi, dz, da, t, t2, (mpfr_ptr)0);
}
