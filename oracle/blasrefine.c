/* blasrefine.c: the second pass of the BLAS level over one row (docs/numerics.md §12.4): the
 * elements (and the LSE) the products' enclosures leave, from compensated sums, before the per-row
 * levels. u = 2^-53, gamma_n of ac_gemm_gamma.
 *
 * Scores: a product q_t k_t of two binary32 numbers (every narrow dtype) below 2^56 is exact in
 * binary64 (48 bits, nothing under- or overflows). Sum2 (Ogita, Rump, Oishi, "Accurate sum and dot
 * product", SIAM J. Sci. Comput. 2005, Prop. 4.5) keeps the error of every addition exactly
 * (TwoSum) and adds the errors in binary64. Its bound holds for any order of the additions with a
 * factor 2 (here eight lanes, then the lanes): the errors total at most u times the sum of the
 * partial sums' magnitudes, at most gamma_dk Z*, and their binary64 sum errs by gamma_dk of that, so
 * |z - z*| <= u|z| + 2 gamma_dk^2 Z* <= 1.001 u |z| + 2 gamma_dk^2 Zup (Zup of blastile.h).
 * A wide q or K (a value not a binary32 number, at least AC_BT_WIDE_MIN: products far above the
 * underflow) makes the products inexact: Dot2 (TwoProduct by fma, each product's exact error added
 * to its lane's errors). The errors then total at most gamma_(dk+8) (1 + gamma_dk) P (TwoSum; each
 * product in at most dk + 8 partial sums) plus u P (TwoProduct), P = Σ|fl(q_t k_t)| <= (1 + u) Z*,
 * and every error meets at most 2 dk + 16 roundings in the binary64 sum of the errors, so
 * |z - z*| <= 1.001 u|z| + 1.01 gamma_(2dk+16) gamma_(dk+9) Zup (g2 below, for either bound).
 * sh = fl(c_d z), t = fl(sh - m) against the row's largest sh, so that
 *   |t - (c z* - m)| <= tau = 1.001 (u(|t| + |sh|) + cup (1.001 u|z| + gamma_dk^2 Zup) + e_c |z|) + 2^-1073,
 * and E = ac_fx_exp(t) within rho E, rho = 1.01 (2^-50 + tau) (blastile.h).
 * L = Sum2 of the E: |L - Σ E| <= u L + gamma_n^2 Σ E, and |Σ E - L*| <= Σ rho_j E_j + ntiny 2^-1000.
 * N = Dot2(E, V) of the column (TwoProduct by fma, Prop. 5.5 there): |N - Σ E V| <= u|N| (1 + u) +
 * gamma_n^2 XA + 4n 2^-1074 (products that underflow), XA = Σ E|V| <= RA (1 + gamma_n) with RA its
 * binary64 sum, and |Σ E V - N*| <= rho XA + ntiny 2^-1000 Vmax. Then delta as in blasrow.c. */
#include "config.h"
#include <string.h>
#include "blasint.h"
#include "gemm.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define CLONES __attribute__((target_clones("avx512f", "arch=haswell", "default")))
#else
#define CLONES
#endif

#define U 0x1p-53

/* Sum2 of the products q_t k_t, t < dk, in eight lanes: lane l a TwoSum cascade over t = l mod 8,
 * then the lanes' sums by a TwoSum cascade, every TwoSum's error kept and the errors summed in
 * binary64 (see the header for the bound of this order). The products are exact unless wide; then
 * (wide != 0) Dot2: each product's error by TwoProduct (fma; exact, nothing underflows:
 * AC_BT_WIDE_MIN) joins its lane's errors (with wide = 0 the same sums: the errors only gain +0). */
CLONES static double sum2(const double *restrict q, const double *restrict k, int64_t dk, int wide)
{
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t t = 0;
  for (; t + 8 <= dk; t += 8)
    for (int l = 0; l < 8; l++) {
      double p = q[t + l] * k[t + l], pe = wide ? fma(q[t + l], k[t + l], -p) : 0, x = s[l] + p, bb = x - s[l];
      c[l] += ((s[l] - (x - bb)) + (p - bb)) + pe;
      s[l] = x;
    }
  for (; t < dk; t++) {
    double p = q[t] * k[t], pe = wide ? fma(q[t], k[t], -p) : 0, x = s[0] + p, bb = x - s[0];
    c[0] += ((s[0] - (x - bb)) + (p - bb)) + pe;
    s[0] = x;
  }
  double S = s[0], C = c[0];
  for (int l = 1; l < 8; l++) {
    double x = S + s[l], bb = x - S;
    C += ((S - (x - bb)) + (s[l] - bb)) + c[l];
    S = x;
  }
  return S + C;
}

/* Dot2 of E and V's column over n keys (stride dv), and RA = Σ E|V| in binary64. */
CLONES static double dot2(const double *restrict E, const double *restrict V, int64_t dv, int64_t n, double *ra)
{
  double s = 0, c = 0, r = 0;
  for (int64_t j = 0; j < n; j++) {
    double v = V[j * dv], p = E[j] * v, pe = fma(E[j], v, -p), x = s + p, bb = x - s;
    c += ((s - (x - bb)) + (p - bb)) + pe;
    s = x;
    r += E[j] * fabs(v);
  }
  *ra = r;
  return s + c;
}

/* The compensated scores, weights and L of row a; 1 when a bound is too large. */
static int refine_weights(const ac_bt_tile *T, int64_t a, double *z, double *E, double *tau, double *L,
                          double *eL, double *rho, int64_t *ntiny)
{
  const ac_bt_brow *rw = &T->rw[a];
  const ac_bt_head *bh = T->bh;
  const ac_bt_scale *sc = T->sc;
  int64_t dk = bh->dk, lo = rw->lo, n = rw->hi - rw->lo;
  const double *q = T->Q + a * dk;
  const float *za = T->za + a * T->ld - T->klo + lo;
  for (int64_t j = 0; j < n; j++) z[j] = sum2(q, bh->K + (lo + j) * dk, dk, rw->wide);
  double g = ac_gemm_gamma(dk), m = -INFINITY;
  double g2 = rw->wide ? 1.01 * ac_gemm_gamma(2 * dk + 16) * ac_gemm_gamma(dk + 9) * (1 + 0x1p-50) : 2 * g * g * (1 + 0x1p-50);
  for (int64_t j = 0; j < n; j++) m = fmax(m, sc->cd * z[j]);
  double mr = 0, bad = 0;
  *ntiny = 0;
  for (int64_t j = 0; j < n; j++) {
    double sh = sc->cd * z[j], t = sh - m, zup = ac_bt_zup(sc, (double)za[j], rw->zs);
    tau[j] = 1.001 * (U * (fabs(t) + fabs(sh)) + sc->cup * (1.001 * U * fabs(z[j]) + g2 * zup) + sc->ec * fabs(z[j])) +
             0x1p-1073;
    if (t >= AC_FX_TMIN) {
      mr = fmax(mr, tau[j]);
      bad = fmax(bad, tau[j] - AC_BT_TAU_MAX);
    } else {
      bad = fmax(bad, tau[j] - 1);
      (*ntiny)++;
    }
    z[j] = t;
  }
  if (bad > 0) return 1;
  ac_fx_exp_array(z, E, n);
  for (int64_t j = 0; j < n; j++) E[j] = z[j] >= AC_FX_TMIN ? E[j] : 0;   /* the keys counted in ntiny */
  double s = 0, c = 0;
  for (int64_t j = 0; j < n; j++) {
    double x = s + E[j], bb = x - s;
    c += (s - (x - bb)) + (E[j] - bb);
    s = x;
  }
  *L = s + c;
  *rho = ac_bt_rho(mr);
  double gn = ac_gemm_gamma(n);
  *eL = 1.01 * (U * *L + gn * gn * *L + *rho * *L * (1 + gn)) + (double)*ntiny * AC_BT_TINY;
  /* the reference of this pass is its own m: z holds t = sh - m, and the LSE takes m */
  z[n] = m;
  return !(*eL <= 0x1p-20 * *L);
}

int ac_bt_refine(const ac_bt_tile *T, int64_t a, uint32_t *pend, int *lse_done, ac_oracle_row *row, double *o,
                 double *del, uint64_t **obits, int64_t slot)
{
  const ac_bt_brow *rw = &T->rw[a];
  const ac_bt_head *bh = T->bh;
  int64_t dv = bh->dv, n = rw->hi - rw->lo, ntiny, left = 0;
  double *z = T->rbuf, *E = z + n + 1, *tau = E + n, L, eL, rho;
  if (refine_weights(T, a, z, E, tau, &L, &eL, &rho, &ntiny)) {
    for (int64_t t = 0; t < dv; t++) left += pend[t] != 0;
    return (int)left;
  }
  double gn = ac_gemm_gamma(n), iLe = 1 / (L - eL) * (1 + 0x1p-50);
  for (int64_t t = 0; t < dv; t++) {
    if (!pend[t]) continue;
    double ra, N = dot2(E, bh->V + rw->lo * dv + t, dv, n, &ra);
    double xa = ra * (1 + gn) * (1 + 0x1p-50), ot = N / L, ao = fabs(ot);
    double eN = 1.01 * (U * fabs(N) * (1 + U) + gn * gn * xa + rho * xa) + 4 * (double)n * 0x1p-1074 +
                (double)ntiny * AC_BT_TINY * bh->vmax;
    double dt = 1.001 * (U * ao + (eN + (1 + U) * ao * eL) * iLe);
    if (dt < del[t]) {   /* the better value and bound */
      o[t] = ot;
      del[t] = dt;
    }
    pend[t] = ac_bt_decide(pend[t], ac_bt_below(ot - dt), ac_bt_above(ot + dt), obits, slot * dv + t);
    left += pend[t] != 0;
  }
  if (!*lse_done) {
    ac_bt_brow r2 = *rw;
    r2.m = z[n];
    r2.L = L;
    r2.eL = eL;
    *lse_done = ac_bt_lse(&r2, row);
  }
  return (int)left;
}
