/* fastdd.c: the double-double pass: correct rounding into binary64 (and any format the binary64
 * pass left) for the columns of a row, with a proven bound; what it cannot decide goes on to
 * the MPFR levels (fast.c).
 *
 * u = 2^-53. Error-free transformations: TwoSum, FastTwoSum (|a| >= |b|), TwoProd with fma:
 * exact barring underflow (then off by at most 2^-1074 each). Double-word operations and
 * their relative error bounds (Joldes, Muller, Popescu, "Tight and rigorous error bounds for
 * basic building blocks of double-word arithmetic", ACM TOMS 2017): dd+dd (their Alg. 6)
 * 3u^2/(1-4u), dd*dd (Alg. 12) 5u^2, dd*d (Alg. 9) 2u^2. The bounds below take each at least
 * twice.
 *
 * Weights. t* = c D with D = z_g - z_top exact (fixed point) and c the scale: D becomes a
 * double-word within 16u^2|D| (its top 192 bits, zdiff_dd), c a double-word c_d within e_c
 * (MPFR's 192-bit enclosure, e_c measured), t = c_d D_d within (16u^2 + 10u^2) |t| + e_c |D|:
 * |t - t*| <= eps_t |t| with eps_t = 28u^2 + 1.01 e_c / |c_d|.
 * exp(t) for t in [-700, 0]: k = round(t / ln 2), r = t - k ln 2 with ln 2 in three pieces
 * (k L1 exact: L1 has 42 bits, |k| <= 1010), |r| <= 0.35, absolute error of r below
 * 12u^2 |t| + 2^-140; e^(r/64) by its Taylor polynomial of degree 13 in Horner form
 * (truncation < 2^-120, |r/64| < 2^-7.4, each step dd*dd then dd+dd, so the relative error of
 * the result is below 2 * 16u^2 / (1 - 2^-7.4) < 33u^2), then squared six times (relative
 * error e -> 2e + e^2 + 10u^2: below 64 * 33u^2 + 640u^2 < 2^12 u^2), times 2^k (exact but for
 * the low word of a result below 2^-969: an absolute 2^-1074). With the error of r (a factor
 * e^(12u^2|t| + 2^-140) on the result) and of t: |E - w*| <= (EPS_EXP + 1.01 eps_t |t|) E + 2^-1073
 * with EPS_EXP = 2^-88 (2^12 u^2 + 12u^2 * 700 < 2^-93). eps_t |t| <= 700 eps_t stays tiny too. t below -700: tiny keys as in fast.c.
 *
 * Sums (one column): N = sum_j V_j E_j with E = E_hi + E_lo: sum V_j E_hi,j by Dot2 (Ogita,
 * Rump, Oishi 2005: TwoProd, TwoSum, errors added in binary64; the unevaluated pair is within
 * gamma_n^2 sum |V_j| E_hi,j of the sum), plus sum V_j E_lo,j in binary64 (within
 * gamma_n u sum |V_j| E_hi,j). With RA = sum |V_j| E_hi,j computed in binary64 (exact sum
 * <= RA / (1 - gamma_n)) and eps_w = max over groups of the weight bound:
 *   |N - N*| <= eN = 1.01 (eps_w + 2 gamma_n^2 + 2 gamma_n u) RA / (1 - gamma_n) + Vmax n_tiny 2^-1000
 *                    + n 2^-1068 + Vmax n 2^-1071 (underflow of products and low words),
 * the same for L with V = 1 (eL); L >= 1 (the top group's E = 1 exactly).
 * Division: q1 = fl(N_h / L_h), the residual N - q1 L in a few operations on values of size
 * u|N|, q2 = fl(residual / L_h), o = q1 + q2 within 32u^2 |o| of N/L. Hence
 *   |o - o*| <= delta = 1.01 (32u^2 |o| + (eN + (1 + 2^-50) |o| eL) / (L - eL)).
 * With o = oh + ol (oh = fl(o)): o* rounds to oh in binary64 when |ol| + delta is below half
 * the gap to each neighbour of oh (o* is transcendental or exactly rational and then already
 * decided by the exact-case test, so never a tie here); narrower formats decide when the
 * two ends of [o - delta, o + delta], pushed outwards by two binary64 steps, round alike. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fast.h"

#define U 0x1p-53
#define U2 0x1p-106
#define EPS_EXP 0x1p-88
#define TINY 0x1p-1000

typedef struct { double h, l; } dd;

static inline dd two_sum(double a, double b)
{
  double s = a + b, bb = s - a;
  return (dd){s, (a - (s - bb)) + (b - bb)};
}
static inline dd fast_two_sum(double a, double b)
{
  double s = a + b;
  return (dd){s, b - (s - a)};
}
static inline dd dd_add(dd x, dd y)   /* Alg. 6 */
{
  dd s = two_sum(x.h, y.h), t = two_sum(x.l, y.l);
  double c = s.l + t.h;
  dd v = fast_two_sum(s.h, c);
  double w = t.l + v.l;
  return fast_two_sum(v.h, w);
}
static inline dd dd_mul(dd x, dd y)   /* Alg. 12 */
{
  double ch = x.h * y.h, cl1 = fma(x.h, y.h, -ch);
  double tl0 = x.l * y.l, tl1 = fma(x.h, y.l, tl0), cl2 = fma(x.l, y.h, tl1);
  return fast_two_sum(ch, cl1 + cl2);
}

/* 1/n! as double-words, n = 0..13 */
static const dd INVF[14] = {
  {0x1p+0, 0}, {0x1p+0, 0}, {0x1p-1, 0},
  {0x1.5555555555555p-3, 0x1.5555555555555p-57}, {0x1.5555555555555p-5, 0x1.5555555555555p-59},
  {0x1.1111111111111p-7, 0x1.1111111111111p-63}, {0x1.6c16c16c16c17p-10, -0x1.f49f49f49f49fp-65},
  {0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-73}, {0x1.a01a01a01a01ap-16, 0x1.a01a01a01a01ap-76},
  {0x1.71de3a556c734p-19, -0x1.c154f8ddc6c00p-73}, {0x1.27e4fb7789f5cp-22, 0x1.cbbc05b4fa99ap-76},
  {0x1.ae64567f544e4p-26, -0x1.c062e06d1f209p-80}, {0x1.1eed8eff8d898p-29, -0x1.2aec959e14c06p-83},
  {0x1.6124613a86d09p-33, 0x1.f28e0cc748ebep-87}};
static const double LN2_1 = 0x1.62e42fefa38p-1, LN2_2 = 0x1.ef35793c7673p-45, LN2_3 = 0x1.f97b57a079a19p-103;

/* e^t for t in [-700, 0] as a double-word (bound in the header). */
static dd exp_dd(dd t)
{
  double k = nearbyint(t.h * 0x1.71547652b82fep+0);
  dd r = dd_add(t, (dd){-k * LN2_1, 0});            /* k LN2_1 exact */
  double p2 = k * LN2_2, e2 = fma(k, LN2_2, -p2);
  r = dd_add(r, (dd){-p2, -e2});
  r = dd_add(r, (dd){-k * LN2_3, 0});
  r.h = ldexp(r.h, -6);
  r.l = ldexp(r.l, -6);
  dd p = INVF[13];
  for (int n = 12; n >= 0; n--) p = dd_add(dd_mul(p, r), INVF[n]);
  for (int s = 0; s < 6; s++) p = dd_mul(p, p);
  return (dd){ldexp(p.h, (int)k), ldexp(p.l, (int)k)};
}

double ac_dd_exp(double th, double tl, double *lo)
{
  dd e = exp_dd(two_sum(th, tl));
  *lo = e.l;
  return e.h;
}

/* A 64-bit limb as an exact double-word. */
static inline dd limb_dd(uint64_t x)
{
  return fast_two_sum((double)(x & ~(uint64_t)0x7ff), (double)(x & 0x7ff));
}

/* (a - b) 2^lsb as a double-word within 16u^2 of it: the top three limbs of the exact
 * magnitude (the rest is below 2^-128 of it), each an exact double-word, added in three
 * double-word additions of same-signed terms; the scaling is exact (|D| well inside binary64). */
static dd zdiff_dd(const uint64_t *a, const uint64_t *b, int nl, int32_t lsb)
{
  uint64_t d[nl];
  ac_or_fx_sub(a, b, d, nl);
  int neg = (int)(d[nl - 1] >> 63);
  if (neg) {   /* two's complement negation */
    unsigned carry = 1;
    for (int k = 0; k < nl; k++) {
      d[k] = ~d[k] + carry;
      carry = carry && d[k] == 0;
    }
  }
  int top = nl - 1;
  while (top > 2 && d[top] == 0) top--;
  dd x = limb_dd(d[top]);
  for (int k = top - 1; k >= 0 && k >= top - 2; k--) {
    x.h = ldexp(x.h, 64);
    x.l = ldexp(x.l, 64);
    x = dd_add(x, limb_dd(d[k]));
  }
  int sh = 64 * (top >= 2 ? top - 2 : 0) + lsb;
  x.h = ldexp(x.h, sh);
  x.l = ldexp(x.l, sh);
  if (neg) { x.h = -x.h; x.l = -x.l; }
  return x;
}

/* The pass over the columns with pend[t] != 0 (the formats left); see the header. */
void ac_or_fastdd_elems(ac_or_ws *w, ac_oracle_elem *el, uint64_t **obits, int64_t slot, uint32_t *pend)
{
  const ac_or_head *hd = w->head;
  int64_t n = w->n, dv = w->p->dv, ng = w->ng;
  /* the scale as a double-word and e_c */
  dd c = {0, 0};
  double ec = 0;
  if (w->sc.sign != 0) {
    mpfr_t clo, chi, x;
    mpfr_inits2(192, clo, chi, x, (mpfr_ptr)0);
    ac_or_scale_interval(&w->sc, clo, chi);
    c.h = mpfr_get_d(clo, MPFR_RNDN);
    mpfr_sub_d(x, clo, c.h, MPFR_RNDN);              /* exact in 192 bits */
    c.l = mpfr_get_d(x, MPFR_RNDN);
    mpfr_sub_d(x, chi, c.h, MPFR_RNDU);
    mpfr_sub_d(x, x, c.l, MPFR_RNDU);
    double a = mpfr_get_d(x, MPFR_RNDU);
    mpfr_sub_d(x, clo, c.h, MPFR_RNDD);
    mpfr_sub_d(x, x, c.l, MPFR_RNDD);
    double b = -mpfr_get_d(x, MPFR_RNDD);
    ec = fmax(fmax(a, b), 0);
    mpfr_clears(clo, chi, x, (mpfr_ptr)0);
  }
  double eps_t = w->sc.sign == 0 ? 0 : 28 * U2 + 1.01 * ec / fabs(c.h);
  dd *E = ac_xmalloc((size_t)ng * sizeof *E);
  const uint64_t *ztop = ac_or_z(w, w->ord[0]);
  double eps_w = 0;
  int64_t ntiny = 0;
  for (int64_t g = 0; g < ng; g++) {
    if (g == 0 || w->sc.sign == 0) { E[g] = (dd){1, 0}; continue; }
    dd D = zdiff_dd(ac_or_z(w, w->ord[w->gst[g]]), ztop, w->nl, w->zlsb);
    dd t = dd_mul(c, D);
    if (t.h > 0) { free(E); return; }   /* cannot happen: c (z_g - z_top) < 0 */
    if (!(t.h >= -700)) { E[g] = (dd){0, 0}; ntiny += w->gst[g + 1] - w->gst[g]; continue; }
    E[g] = exp_dd(t);
    double eg = EPS_EXP + 1.01 * eps_t * fabs(t.h);
    if (eg > eps_w) eps_w = eg;
  }
  /* L */
  dd L = {0, 0};
  double Ls = 0;
  for (int64_t j = 0; j < n; j++) {
    dd e = E[w->gof[j]];
    dd s = two_sum(L.h, e.h);
    L.h = s.h;
    L.l += s.l;
    Ls += e.l;
  }
  double gam = (double)n * U / (1 - (double)n * U);
  double ig = 1 / (1 - gam), we = 1.01 * (eps_w + 2 * gam * gam + 2 * gam * U);
  L = two_sum(L.h, L.l + Ls);
  double eL = we * L.h * 1.001 * ig + (double)n * 0x1p-1068 + (double)ntiny * TINY;
  if (!(eL < 0.25)) { free(E); return; }
  for (int64_t t = 0; t < dv; t++) {
    if (!pend[t]) continue;
    dd N = {0, 0};
    double Ns = 0, RA = 0;
    for (int64_t j = 0; j < n; j++) {
      dd e = E[w->gof[j]];
      double v = ac_or_vval(hd, (size_t)(j * dv + t));
      double ph = v * e.h, pl = fma(v, e.h, -ph);
      dd s = two_sum(N.h, ph);
      N.h = s.h;
      N.l += s.l + pl;
      Ns += v * e.l;
      RA += fabs(v) * e.h;
    }
    N = two_sum(N.h, N.l + Ns);
    double vmax = ldexp(1.0, hd->v_msb[t] + 1);
    /* the last two terms: underflow in products and low words (absolute 2^-1074 each, times |V|) */
    double eN = we * RA * ig + vmax * (double)ntiny * TINY + (double)n * 0x1p-1068 + vmax * (double)n * 0x1p-1071;
    /* o = N / L */
    double q1 = N.h / L.h;
    double ph = q1 * L.h, pl = fma(q1, L.h, -ph);
    double res = (((N.h - ph) - pl) + N.l) - q1 * L.l;
    double q2 = res / L.h;
    dd o = fast_two_sum(q1, q2);
    double delta = 1.01 * (32 * U2 * fabs(o.h) + (eN + (1 + 0x1p-50) * fabs(o.h) * eL) / (L.h - eL));
    if (!isfinite(o.h) || !isfinite(delta) || o.h == 0) continue;
    double gap = fmin(nextafter(o.h, INFINITY) - o.h, o.h - nextafter(o.h, -INFINITY));
    double slack = (fabs(o.l) + delta) * (1 + 0x1p-40);
    uint32_t p = pend[t];
    for (int f = 0; f < AC_NDTYPES; f++) {
      if (!(p & (1u << f))) continue;
      if (f == AC_F64) {
        if (slack < 0.5 * gap) {
          obits[f][slot * dv + t] = ac_encode_f64(AC_F64, o.h);
          p &= ~(1u << f);
        }
        continue;
      }
      if (!(delta < 0x1p-20 * fabs(o.h))) continue;   /* the two steps cover the roundings of the ends */
      double lo = nextafter(nextafter(o.h + (o.l - delta), -INFINITY), -INFINITY);
      double hi = nextafter(nextafter(o.h + (o.l + delta), INFINITY), INFINITY);
      uint64_t a = ac_encode_f64_ov((ac_dtype)f, lo, AC_E4M3_SATURATE);
      if (a == ac_encode_f64_ov((ac_dtype)f, hi, AC_E4M3_SATURATE)) {
        obits[f][slot * dv + t] = a;
        p &= ~(1u << f);
      }
    }
    if (p != pend[t]) {
      el[t].o = o.h;
      el[t].o_err = slack * (1 + 0x1p-40);
    }
    pend[t] = p;
  }
  free(E);
}
