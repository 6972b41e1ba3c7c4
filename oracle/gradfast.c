/* gradfast.c: the first pass of the backward oracle in extended precision with a running error
 * bound (docs/backward.md §4.3): for the narrow dtypes (fp32, fp16, bf16, fp8) and rows whose
 * inputs are finite. It decides the elements whose enclosure [g - e, g + e] rounds alike at both
 * ends and never an exact zero (its bounds are never 0); the rest goes to the MPFR passes.
 *
 * Arithmetic: long double with a 64-bit significand (x86-64's binary80; configure checks
 * LDBL_MANT_DIG == 64 through the assertion below), v = 2^-64, every operation rounded to
 * nearest, no contraction, no underflow (exponents stay above 2^-2000); γ_n = n v / (1 - n v),
 * and a sum of n terms is within γ_n Σ|terms| (the bounds are computed in the same arithmetic and
 * multiplied by 1.01 for their own rounding, valid while n v < 2^-8). u = 2^-53.
 *   c_L = 1 / sqrtl(dk) within 2v c (default scale), else the stored c exactly (ε_c);
 *   t_j = c_L (z_j - z_top) within (ε_c + 2v) |t_j| (z exact, taken to 64 bits), then rounded to
 *     binary64 for ac_fx_exp: within ε_t,j = (ε_c + 2v + u/2) |t_j| (1.01) of t*_j; with ALiBi or
 *     bias (gradoff.c) t_j = c_L dz + (a_j - a_0) within (ε_c + 2v)|c_L dz| + 1.01 v (|a_j| + |a_0|)
 *     + (2v + u/2)|t_j|; a t_j above 0 (the reference group is not the largest score) is set to 0
 *     within t_j more when t_j is inside its bound, else the row goes to the MPFR passes;
 *   w_j = ac_fx_exp(t_j) within 2^-50 of e^{t_j} for t_j >= -700 (fastexp.c), hence within
 *     ε_j = 1.01 (2^-50 + ε_t,j) of e^{t*_j}; below, w_j = 0 within 2^-1009 (a tiny key);
 *     or, finer (g->exp_fine: what the matrix-product level or this pass left), t_j kept to 64 bits
 *     (no u/2 |t_j| in ε_t,j) and w_j = ac_dd_exp(t_j) (fastdd.c: 2^-88 relative, 2^-1073 absolute,
 *     which for t_j >= -700 is below 2^-63 of it) rounded to 64 bits: ε_j = 1.01 (2^-62 + ε_t,j);
 *   L = Σ w_j: eL = 1.01 (Σ ε_j w_j + γ_n L) + n_tiny 2^-1009; L >= 1 - eL (the top key weighs 1);
 *   P_j = w_j / L: eP_j = 1.02 (ε_j + eL / (L - eL) + v) P_j (+ 2^-1009 for a tiny key);
 *   X_j = dO·V_j (exact products of narrow values): eX_j = 1.01 γ_dv Σ_t |dO_t V_jt|;
 *   D = Σ P_j X_j: eD = 1.01 (Σ eP_j |X_j| + Σ (P_j + eP_j) eX_j + γ_n Σ P_j |X_j|);
 *   Y_j = X_j - D: eY_j = eX_j + eD + v |Y_j|;  dS_j = P_j Y_j: eS_j = eP_j |Y_j| + (P_j + eP_j) eY_j + v |dS_j|;
 *   dQ_t = c_L Σ_j dS_j K_jt: e = |c_L| 1.01 (Σ_j eS_j |K_jt| + γ_{n+1} Σ_j |dS_j K_jt|) + (ε_c + 4v) |dQ_t|;
 *   dK_j[t] = c_L Σ_i dS_ij q_it over m rows: e = |c_L| 1.01 (Σ_i eS_ij |q_it| + γ_{m+1} Σ_i |dS_ij q_it|) + (ε_c + 4v) |dK|;
 *   dV_j[t] = Σ_i P_ij dO_it: e = 1.01 (Σ_i eP_ij |dO_it| + γ_{m+1} Σ_i P_ij |dO_it|);
 *   dσ_h = Σ_i dS_i,sink over m rows: e = 1.01 (1.01 Σ_i eS_i,sink + γ_{m+1} Σ_i |dS_i,sink|);
 * and the value rounded to binary64 g adds u/2 |g| + 2^-1074. The cross terms (eP eY, the error of
 * c_L times the error of a sum) are covered by the factors 1.01. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gradint.h"
#include "fast.h"

#include <float.h>

#define V 0x1p-64L
#define U 0x1p-53

_Static_assert(LDBL_MANT_DIG == 64, "the extended pass needs a 64-bit long double significand");

typedef long double ld;
static ld gam(ld n) { return n * V / (1 - n * V); }

void ac_gr_fcols_init(ac_gr_fcols *f, int64_t nc, int64_t dk, int64_t dv)
{
  f->sk = ac_xcalloc((size_t)(nc * dk + 1), sizeof *f->sk);
  f->ak = ac_xcalloc((size_t)(nc * dk + 1), sizeof *f->ak);
  f->ek = ac_xcalloc((size_t)(nc * dk + 1), sizeof *f->ek);
  f->sv = ac_xcalloc((size_t)(nc * dv + 1), sizeof *f->sv);
  f->av = ac_xcalloc((size_t)(nc * dv + 1), sizeof *f->av);
  f->ev = ac_xcalloc((size_t)(nc * dv + 1), sizeof *f->ev);
  f->m = ac_xcalloc((size_t)(nc + 1), sizeof *f->m);
}

void ac_gr_fcols_free(ac_gr_fcols *f)
{
  free(f->sk); free(f->ak); free(f->ek); free(f->sv); free(f->av); free(f->ev); free(f->m);
}

/* c_L and its relative error bound. */
static ld scale_ld(const ac_or_scale *sc, ld *eps)
{
  if (!sc->is_default) {
    *eps = 0;
    return (ld)sc->stored;
  }
  *eps = 2 * V;
  return 1.0L / sqrtl((ld)sc->dk);
}

/* P_j and eP_j of the row into P, eP (n); returns 0, or 1 when L is not enclosed well enough. */
static int weights(ac_gr_ws *g, ld *P, ld *eP)
{
  ac_or_ws *w = &g->w;
  int64_t n = w->n, tiny = 0;
  ld ec, c = scale_ld(&w->sc, &ec), L = 0, sew = 0;
  const uint64_t *ztop = ac_or_z(w, w->ord[0]);
  uint64_t d[w->nl];
  int64_t j0 = w->ord[0];
  for (int64_t j = 0; j < n; j++) {
    ac_or_fx_sub(ac_or_z(w, j), ztop, d, w->nl);
    ld cz = c * ac_or_fx_to_ld(d, w->nl, w->zlsb), tl = cz, et;
    if (g->off) {   /* t = c dz + (a_j - a_0): |t - t*| <= (ε_c + 2v)|c dz| + 1.01 v (|a_j| + |a_0|) + 2v|t| */
      tl = cz + (g->aL[j] - g->aL[j0]);
      et = (ec + 2 * V) * fabsl(cz) + 1.01L * V * (fabsl(g->aL[j]) + fabsl(g->aL[j0])) + 2 * V * fabsl(tl);
    } else {
      et = (ec + 2 * V) * fabsl(tl);
    }
    if (!g->exp_fine) tl = (ld)(double)tl, et += (ld)U / 2 * fabsl(tl);   /* ac_fx_exp's argument */
    if (tl > 0) {   /* t* <= 0 up to the bound, else the reference is not the largest score */
      if (tl > et) return 1;
      et += tl;
      tl = 0;
    }
    if (tl < AC_FX_TMIN) {
      P[j] = 0;
      eP[j] = -1;   /* a tiny key */
      tiny++;
      continue;
    }
    if (g->exp_fine) {   /* tl = th + tt exactly (64 bits); e^tl within 2^-88 + 2^-1073 (>= e^-700 > 2^-1010: 2^-63
                            of it), the sum rounded to 64 bits: 2^-64 more, so 2^-62 in all */
      double th = (double)tl, tt = (double)(tl - (ld)th), lo, hi = ac_dd_exp(th, tt, &lo);
      P[j] = (ld)hi + (ld)lo;
      eP[j] = 1.01L * (0x1p-62L + 1.01L * et);
    } else {
      P[j] = (ld)ac_fx_exp((double)tl);
      eP[j] = 1.01L * (0x1p-50L + 1.01L * et);   /* ε_j */
    }
    sew += eP[j] * P[j];
    L += P[j];
  }
  ld eL = 1.01L * (sew + gam((ld)n) * L) + (ld)tiny * 0x1p-1009L;
  if (L - eL < 0.5L) return 1;
  ld er = eL / (L - eL) + V;
  for (int64_t j = 0; j < n; j++) {
    if (eP[j] < 0) {
      eP[j] = 0x1p-1009L;
      continue;
    }
    P[j] /= L;
    eP[j] = 1.02L * (eP[j] + er) * P[j];
  }
  return 0;
}

/* Σ_j dS_j K_jt times c_L and its bound. */
static void dq_value(ac_gr_ws *g, const ld *S, const ld *eS, int64_t t, double *val, double *err)
{
  ac_or_ws *w = &g->w;
  int64_t n = w->n, dk = w->p->dk;
  ld s = 0, se = 0, sa = 0, ec, c = scale_ld(&w->sc, &ec);
  for (int64_t j = 0; j < n; j++) {
    ld k = (ld)ac_or_kval(w->head, (size_t)(j * dk + t));
    s += S[j] * k;
    se += eS[j] * fabsl(k);
    sa += fabsl(S[j] * k);
  }
  ld v = c * s, e = fabsl(c) * 1.01L * (1.01L * se + gam((ld)(n + 1)) * sa) + (ec + 4 * V) * fabsl(v);
  *val = (double)v;
  *err = (double)(1.01L * (e + (ld)U / 2 * fabsl((ld)*val))) + 0x1p-1074;
}

int ac_gr_fast_row(ac_gr_ws *g, double *dq, double *edq, const ac_gr_cols *cols, ac_gr_fcols *fc)
{
  ac_or_ws *w = &g->w;
  const ac_or_head *hd = w->head;
  int64_t n = w->n, dk = w->p->dk, dv = w->p->dv;
  ld *P = ac_xmalloc((size_t)n * 5 * sizeof *P), *eP = P + n, *X = P + 2 * n, *eX = P + 3 * n, *S = P + 4 * n;
  if (weights(g, P, eP)) {
    free(P);
    return 1;
  }
  ld gdv = 1.01L * gam((ld)dv), D = 0, a1 = 0, a2 = 0, a3 = 0;
  for (int64_t j = 0; j < n; j++) {
    const double *v = ac_or_vrow(hd, j, dv, g->vbuf);
    ld x = 0, ax = 0;
    for (int64_t t = 0; t < dv; t++) {
      double pr = g->od[t] * v[t];   /* exact: two narrow values */
      x += pr;
      ax += fabs(pr);
    }
    X[j] = x;
    eX[j] = gdv * ax;
    D += P[j] * x;
    a1 += eP[j] * fabsl(x);
    a2 += (P[j] + eP[j]) * eX[j];
    a3 += P[j] * fabsl(x);
  }
  ld eD = 1.01L * (a1 + a2 + gam((ld)n) * a3);
  ld *eS = eX;   /* eX_j is read once more below, then eS_j takes its place */
  for (int64_t j = 0; j < n; j++) {
    ld y = X[j] - D, ey = eX[j] + eD + V * fabsl(y);
    S[j] = P[j] * y;
    eS[j] = eP[j] * fabsl(y) + (P[j] + eP[j]) * ey + V * fabsl(S[j]);
  }
  if (dq)
    for (int64_t t = 0; t < dk; t++) dq_value(g, S, eS, t, &dq[t], &edq[t]);
  if (g->sink >= 0 && fc->sg) {   /* dσ_h += dS_sink */
    fc->sg[0] += S[g->sink];
    fc->sg[1] += fabsl(S[g->sink]);
    fc->sg[2] += eS[g->sink];
    (*fc->sm)++;
  }
  for (int64_t j = 0; j < n; j++) {
    int64_t k = AC_GR_COL(g, cols, j);
    if (k < 0 || !cols->pend[k]) continue;
    for (int64_t t = 0; t < dk; t++) {
      ld x = S[j] * (ld)w->qd[t];
      fc->sk[k * dk + t] += x;
      fc->ak[k * dk + t] += fabsl(x);
      fc->ek[k * dk + t] += eS[j] * fabsl((ld)w->qd[t]);
    }
    for (int64_t t = 0; t < dv; t++) {
      ld x = P[j] * (ld)g->od[t];
      fc->sv[k * dv + t] += x;
      fc->av[k * dv + t] += fabsl(x);
      fc->ev[k * dv + t] += eP[j] * fabsl((ld)g->od[t]);
    }
    fc->m[k]++;
  }
  free(P);
  return 0;
}

void ac_gr_fast_col(const ac_gr_fcols *fc, const ac_or_scale *sc, int64_t k, char which, int64_t t, int64_t d,
                    double *val, double *err)
{
  ld m = (ld)fc->m[k], ec, c = scale_ld(sc, &ec), v, e;
  if (which == 'v') {
    v = fc->sv[k * d + t];
    e = 1.01L * (1.01L * fc->ev[k * d + t] + gam(m + 1) * fc->av[k * d + t]);
  } else {
    v = c * fc->sk[k * d + t];
    e = fabsl(c) * 1.01L * (1.01L * fc->ek[k * d + t] + gam(m + 1) * fc->ak[k * d + t]) + (ec + 4 * V) * fabsl(v);
  }
  *val = (double)v;
  *err = (double)(1.01L * (e + (ld)U / 2 * fabsl((ld)*val))) + 0x1p-1074;
}
