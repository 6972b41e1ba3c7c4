/* fast.c: the certified binary64 pass of one row; its LSE and the MPFR levels for what it
 * leaves are in fastmpfr.c.
 *
 * Scores are exact (fixed point); everything after them is binary64 with a bound proven
 * below. u = 2^-53, gamma_K = K u / (1 - K u); the bound arithmetic itself is done on
 * non-negative numbers in a few operations and carries a factor 1.001 of slack, far more
 * than its own rounding.
 *
 * Weights. For group g, D = z_g - z_top exactly, d = fl(D) with |d - D| <= 2u|D| (a
 * correctly rounded conversion, or the top 128 bits then one rounding). c_d approximates
 * the scale with |c_d - c| <= e_c (e_c from MPFR's directed enclosure, 0 for a stored
 * scale). t = fl(c_d d) <= 0 and, with t* = c D,
 *     |t - t*| <= u|c_d d| + |c_d| 2u|D| + e_c|D| <= eps_t |t|,  eps_t = 3.01u + 1.01 e_c/|c_d|.
 * E = ac_fx_exp(t): |E - e^t| <= eps_e e^t (fastexp.c, eps_e = 2^-50), so with a = eps_t|t|
 * (<= 2^-40 here) |E - w*| <= E (eps_e + e^a - 1)/(1 - eps_e) <= 1.01 (eps_e + a) E.
 * When t < -700 the weight is not computed: t* <= t (1 - eps_t) < -699, so w* < 2^-1008
 * ("tiny" keys, bounded by 2^-1000 each).
 *
 * Sums (one column; keys outer, columns inner, partial sums in NLEV levels of BLK): the
 * computed N = sum V_j E_j, RA = sum |V_j| E_j, TA = sum |V_j| E_j |t_j|, L = sum E_j,
 * ST = sum E_j |t_j| go through at most two products, BLK + 1 additions per level and
 * ntop + 1 at the top, so (Higham §4.2: the error of any summation tree is at most
 * sum_i gamma_{depth_i} |x_i|) |N - sum V_j E_j| <= gamma_K sum |V_j| E_j + n 2^-1074 with
 * K = 2 + (BLK+1) NLEV + ntop + 2 (the last term covers products that underflow), and
 * sum |V_j| E_j <= (RA + n 2^-1074)/(1 - gamma_K), same for TA.
 * With Vmax = 2^v_msb >= |V_j| of the column and n_tiny tiny keys:
 *   |N - N*| <= eN = (gamma_K + 1.01 eps_e)(RA + n 2^-1074)/(1-gamma_K) + n 2^-1074
 *                   + 1.01 eps_t (TA + n 2^-1074)/(1-gamma_K) + Vmax n_tiny 2^-1000
 *   |L - L*| <= eL = (gamma_K + 1.01 eps_e) L/(1-gamma_K) + 1.01 eps_t ST/(1-gamma_K) + n_tiny 2^-1000
 * (L >= 1: the top group has E = 1 exactly). L - 1 is summed apart (its own bound, same
 * form, one more addition) so that LSE keeps a tiny L - 1.
 * Output: o = fl(N/L); o* = N* / L* and
 *   |o - o*| <= u|o| + (eN + |N/L| eL)/(L - eL) <= delta = 1.001 (u|o| + (eN + (1+u)|o| eL)/(L - eL)),
 * so o* lies in [pred(fl(o - delta)), succ(fl(o + delta))] (pred/succ undo the rounding of
 * the ends). When both ends round alike in a format, that is the correctly rounded value
 * (rounding is monotone); otherwise the element goes to the MPFR levels (ziv.c's weights,
 * sums and decisions), which also settle breakpoint ties from the exact groups.
 * LSE = m + log1p(L - 1) with m from the exact top score in MPFR and log1p in MPFR on the
 * binary64 enclosure of L - 1 (one call per row, directed roundings; fastmpfr.c).
 * Applies to inputs in binary32's exponent range (every narrow dtype; fp64 inputs row by row
 * when q and the head's K and V stay in it: products and scores well inside binary64,
 * |z| < 2^270, exact differences >= 2^-298) with a scale in [2^-600, 2^600] (or 0), so no
 * product above under- or overflows; a t below -700 (or -inf) makes the key tiny. Binary64
 * rounding, which this bound cannot decide, goes to the double-double pass (fastdd.c) first.
 * Special values come first, in the same order as ziv.c: non-finite V columns, then the
 * exact-case test (exact cases stay exact). */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fast.h"

#define U 0x1p-53
#define BLK 16
#define NLEV 4
#define TINY 0x1p-1000
#define SUB 0x1p-1074

/* D = (a - b) 2^zlsb as binary64 within 2u |D|. */
static double zdiff(const ac_or_ws *w, const uint64_t *a, const uint64_t *b)
{
  int nl = w->nl;
  if (nl == 2) {
    ac_i128 x = (ac_i128)(((ac_u128)a[1] << 64) | a[0]), y = (ac_i128)(((ac_u128)b[1] << 64) | b[0]);
    return ldexp((double)(x - y), w->zlsb);   /* windows <= 126 bits: no overflow */
  }
  uint64_t d[nl];
  ac_or_fx_sub(a, b, d, nl);
  return (double)ac_or_fx_to_ld(d, nl, w->zlsb);
}

/* 0 when the column is surely not an exact case (two singleton groups with different V). */
static int maybe_exact(const ac_or_ws *w, int64_t t)
{
  int64_t dv = w->p->dv;
  int have = 0;
  double v0 = 0;
  for (int64_t g = 0; g < w->ng; g++) {
    if (w->gst[g + 1] - w->gst[g] != 1) continue;
    double v = ac_or_vval(w->head, (size_t)(w->ord[w->gst[g]] * dv + t));
    if (!have) { v0 = v; have = 1; }
    else if (v != v0) return 0;
  }
  return 1;
}

/* Hot loops over a row of V (columns inner): restrict and clones for AVX2 so that the
 * compiler vectorizes them; element-wise operations only, so every clone computes the
 * same values as scalar code (no reassociation, no contraction). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

CLONES static void cls_or(uint8_t *restrict cls, const uint8_t *restrict vc, int64_t dv)
{
  for (int64_t t = 0; t < dv; t++) cls[t] |= (uint8_t)(1u << vc[t]);
}

/* The two V passes read a row of V as binary64 (vd) or binary32 (vf, fastdecode.c): one
 * definition for both element types, the values widened exactly. */
#define DEF_ACC_NRT(NAME, T)                                                                                  \
  CLONES static void NAME(double *restrict bN, double *restrict bR, double *restrict bT, const T *restrict vd, \
                          double e, double et, int64_t dv)                                                     \
  {                                                                                                            \
    for (int64_t t = 0; t < dv; t++) {                                                                         \
      double v = (double)vd[t], a = fabs(v);                                                                   \
      bN[t] += e * v;                                                                                          \
      bR[t] += e * a;                                                                                          \
      bT[t] += et * a;                                                                                         \
    }                                                                                                          \
  }
DEF_ACC_NRT(acc_nrt, double)
DEF_ACC_NRT(acc_nrt_f, float)

CLONES static void add_to(double *restrict a, const double *restrict b, int64_t dv)
{
  for (int64_t t = 0; t < dv; t++) a[t] += b[t];
}

/* The budget sums of one key, and the extremes of V per column for M (the hull term). */
#define DEF_ACC_BUDGET(NAME, T)                                                                                       \
  CLONES static void NAME(double *restrict R, double *restrict D, double *restrict S, double *restrict Sp,            \
                          double *restrict G, double *restrict Gb, double *restrict lo, double *restrict hi,          \
                          const T *restrict vd, const double *restrict ov, double A, double at, double as, double ag, \
                          double agb, int64_t dv)                                                                     \
  {                                                                                                                   \
    for (int64_t t = 0; t < dv; t++) {                                                                                \
      double v = (double)vd[t], e = fabs(v - ov[t]);                                                                  \
      R[t] += A * fabs(v);                                                                                            \
      D[t] += A * e;                                                                                                  \
      S[t] += at * e;                                                                                                 \
      Sp[t] += as * e;                                                                                                \
      G[t] += ag * e;                                                                                                 \
      Gb[t] += agb * e;                                                                                               \
      lo[t] = v < lo[t] ? v : lo[t];                                                                                  \
      hi[t] = v > hi[t] ? v : hi[t];                                                                                  \
    }                                                                                                                 \
  }
DEF_ACC_BUDGET(acc_budget, double)
DEF_ACC_BUDGET(acc_budget_f, float)

/* The extremes alone, for a key of weight 0 (it may still carry weight in a kernel). */
CLONES static void acc_hull(double *restrict lo, double *restrict hi, const double *restrict vd, int64_t dv)
{
  for (int64_t t = 0; t < dv; t++) {
    double v = vd[t];
    lo[t] = v < lo[t] ? v : lo[t];
    hi[t] = v > hi[t] ? v : hi[t];
  }
}

CLONES static void acc_f(double *restrict F, const double *restrict vd, const double *restrict ov, double A, int64_t dv)
{
  for (int64_t t = 0; t < dv; t++) F[t] += A * fabs(vd[t] - ov[t]);
}

static uint64_t enc(ac_dtype f, double x) { return ac_encode_f64_ov(f, x, AC_E4M3_SATURATE); }

/* ---- the binary64 pass ---- */

/* One row's buffers and the terms its steps hand on. */
typedef struct {
  double *E, *ta, *sg;     /* per group: weight (0 for tiny keys), |t|, s = c_d fl(z) */
  double *vt, *te;         /* variant rows (fastvar.c): t and its absolute bound per group; else NULL */
  double *N, *RA, *TA;     /* per column: the sums (top level) */
  double *o, *delta;
  uint32_t *pend;
  uint8_t *cls;
  double cd, eps_t;        /* c_d and the bound eps_t on t (header) */
  int64_t ntiny;           /* tiny keys: t < -700, weight not computed */
  double L, Lm1;           /* L and L - 1 */
  double we, ig, eL, eLm1; /* gamma_K + 1.01 eps_e, 1/(1 - gamma_K), the bounds on L and L - 1 */
  int Lok;                 /* eL < 0.25 */
} fbuf;

int ac_or_fast_case_applies(const ac_case *cs, const ac_oracle_opts *o, uint32_t formats)
{
  const ac_problem *p = &cs->p;
  if (o->lse_f64 || p->dtype == AC_F64) return 0;
  /* a scale so small or large that c_d d could leave the normal range: no relative bound on t */
  double c = p->scale_is_default ? 1 / sqrt((double)p->dk) : p->scale;
  if (c != 0 && !(fabs(c) >= 0x1p-600 && fabs(c) <= 0x1p600)) return 0;
  for (int f = 0; f < AC_NDTYPES; f++)   /* binary64: the double-double pass (fastdd.c) */
    if ((formats & (1u << f)) && f != AC_F64 && ac_dtype_get((ac_dtype)f)->prec > 24) return 0;
  return 1;
}

/* The pass applies to a row: as to the case (fp64 inputs aside), and for fp64 inputs (and quantized
 * tensors, whose values are binary64) when
 * every finite nonzero value of q and of the head's K and V lies in binary32's exponent range
 * (bits 2^-149 .. 2^127), so that scores, products and sums stay as well inside binary64 as
 * for fp32 inputs. */
static int row_applies(const ac_or_ws *w)
{
  const ac_problem *p = w->p;
  /* quantized tensors hold binary64 values (src/core/quant.h): checked like fp64 inputs */
  if (p->dtype != AC_F64 && !ac_problem_quantized(p)) return ac_or_fast_case_applies(w->cs, w->opts, w->formats);
  ac_problem p32 = *p;
  p32.dtype = AC_F32;
  ac_case c32 = *w->cs;
  c32.p = p32;
  if (!ac_or_fast_case_applies(&c32, w->opts, w->formats)) return 0;
  if (!ac_or_fast_head_in_range(w->head, p->dv)) return 0;
  for (int64_t x = 0; x < p->dk; x++)
    if (!ac_or_fast_in_range(w->qm[x], w->qe[x])) return 0;
  return 1;
}

int ac_or_fast_head_in_range(const ac_or_head *hd, int64_t dv)
{
  if (hd->k_any && (hd->k_lsb < -149 || hd->k_msb > 127)) return 0;
  for (int64_t t = 0; t < dv; t++)
    if (hd->v_any[t] && (hd->v_lsb[t] < -149 || hd->v_msb[t] > 127)) return 0;
  return 1;
}

/* Special values first: non-finite visible V (any class present), then exact cases. The
 * other columns are left with every format pending; returns 1 when there is one. */
static int fast_specials(ac_or_ws *w, fbuf *B, ac_oracle_elem *el, uint64_t **obits, int64_t slot,
                         ac_or_stats *st)
{
  const ac_or_head *hd = w->head;
  int64_t n = w->n, dv = w->p->dv;
  for (int64_t j = 0; j < n; j++) cls_or(B->cls, hd->vcls + j * dv, dv);
  mpfr_t W, Nlo, Nhi;
  mpfr_inits2(64, W, Nlo, Nhi, (mpfr_ptr)0);
  int any_pending = 0;
  for (int64_t t = 0; t < dv; t++) {
    int64_t eidx = slot * dv + t;
    ac_oracle_elem *e = &el[t];
    int nan = (B->cls[t] >> AC_VCLS_NAN) & 1, pinf = (B->cls[t] >> AC_VCLS_PINF) & 1, ninf = (B->cls[t] >> AC_VCLS_NINF) & 1;
    if (ac_or_decide_special(w, t, nan, pinf, ninf, maybe_exact(w, t), e, obits, eidx, W, Nlo, Nhi, st)) continue;
    B->pend[t] = w->formats;
    any_pending = 1;
  }
  mpfr_clears(W, Nlo, Nhi, (mpfr_ptr)0);
  return any_pending;
}

/* The scale: c_d, a bound e_c on |c_d - c|, and eps_t from them. */
static void fast_scale(const ac_or_ws *w, fbuf *B)
{
  double cd = w->sc.approx, ec = 0;
  if (w->sc.is_default) {
    mpfr_t clo, chi;
    mpfr_inits2(64, clo, chi, (mpfr_ptr)0);
    ac_or_scale_interval(&w->sc, clo, chi);
    double a = mpfr_get_d(clo, MPFR_RNDD), b = mpfr_get_d(chi, MPFR_RNDU);
    ec = fmax(b - cd, cd - a);   /* exact differences (Sterbenz) */
    mpfr_clears(clo, chi, (mpfr_ptr)0);
  }
  B->cd = cd;
  B->eps_t = w->sc.sign == 0 ? 0 : 3.01 * U + 1.01 * ec / fabs(cd);
}

/* Group weights E_g = ac_fx_exp(t_g) and |t_g|; tiny keys get E = 0 and are counted. */
static void fast_weights(const ac_or_ws *w, fbuf *B)
{
  const uint64_t *ztop = ac_or_z(w, w->ord[0]);
  B->ntiny = 0;
  for (int64_t g = 0; g < w->ng; g++) {
    if (g == 0 || (w->sc.sign == 0 && !B->vt)) { B->E[g] = 1; B->ta[g] = 0; continue; }
    double t = B->vt ? B->vt[g] : B->cd * zdiff(w, ac_or_z(w, w->ord[w->gst[g]]), ztop);
    if (!(t >= AC_FX_TMIN)) { B->E[g] = 0; B->ta[g] = 0; B->ntiny += w->gst[g + 1] - w->gst[g]; continue; }
    AC_ASSERT(t <= 0, "c_d d has the sign of c (z_g - z_top) <= 0 (variants: clamped)");
    B->E[g] = ac_fx_exp(t);
    B->ta[g] = -t;
  }
}

/* Sums by levels: level l holds partial sums of up to BLK^(l+1) keys, carried up when full
 * (NLEV levels, then the top, unbounded); per level one vector of N, RA, TA (columns, only
 * when some column is pending) and 3 scalars (L, L - 1 without the top group, ST). Then the
 * bounds on L and L - 1 (header). */
static void fast_sums(const ac_or_ws *w, fbuf *B, int any_pending)
{
  const ac_or_head *hd = w->head;
  int64_t n = w->n, dv = w->p->dv;
  double *lev = ac_xcalloc((size_t)(NLEV * 3 * dv), sizeof *lev), lsum[NLEV][3], top[3] = {0, 0, 0};
  int cnt[NLEV];
  memset(lsum, 0, sizeof lsum);
  memset(cnt, 0, sizeof cnt);
  memset(B->N, 0, (size_t)dv * 3 * sizeof *B->N);   /* N, RA, TA: the top */
  int64_t ntop = 0;
  for (int64_t j = 0; j < n; j++) {
    int64_t g = w->gof[j];
    double e = B->E[g];
    if (e == 0) continue;
    double et = e * (B->te ? B->te[g] : B->ta[g]);   /* the error terms of t: eps_t |t|, or te (eps_t = 1) */
    lsum[0][0] += e;
    if (g) lsum[0][1] += e;
    lsum[0][2] += et;
    if (any_pending && hd->vf) acc_nrt_f(lev, lev + dv, lev + 2 * dv, hd->vf + j * dv, e, et, dv);
    else if (any_pending) acc_nrt(lev, lev + dv, lev + 2 * dv, hd->vd + j * dv, e, et, dv);
    for (int l = 0; ++cnt[l] == BLK; l++) {
      double *dst = l + 1 < NLEV ? lev + (l + 1) * 3 * dv : B->N, *sdst = l + 1 < NLEV ? lsum[l + 1] : top;
      if (any_pending) {
        add_to(dst, lev + l * 3 * dv, 3 * dv);
        memset(lev + l * 3 * dv, 0, (size_t)(3 * dv) * sizeof *lev);
      }
      for (int q = 0; q < 3; q++) { sdst[q] += lsum[l][q]; lsum[l][q] = 0; }
      cnt[l] = 0;
      if (l + 1 == NLEV) { ntop++; break; }
    }
  }
  for (int l = 0; l < NLEV; l++) {   /* flush upwards */
    double *dst = l + 1 < NLEV ? lev + (l + 1) * 3 * dv : B->N, *sdst = l + 1 < NLEV ? lsum[l + 1] : top;
    if (any_pending) add_to(dst, lev + l * 3 * dv, 3 * dv);
    for (int q = 0; q < 3; q++) sdst[q] += lsum[l][q];
  }
  free(lev);
  double L = top[0], Lm1 = top[1], ST = top[2];
  AC_ASSERT(L >= 1, "L >= 1: the top group has E = 1 exactly");
  double n0 = (double)(w->gst[1] - w->gst[0]);
  Lm1 += n0 - 1;
  /* depth of a term: 2 products, at most BLK + 1 additions per level (the carry and the
   * flush included), ntop + 1 at the top, one more for n0 - 1 */
  double K = (double)(2 + (BLK + 1) * NLEV + ntop + 2);
  double gam = K * U / (1 - K * U);
  double ig = 1 / (1 - gam);
  double we = gam + 1.01 * AC_FX_EPS;
  B->L = L;
  B->Lm1 = Lm1;
  B->we = we;
  B->ig = ig;
  B->eL = 1.001 * (we * L * ig + 1.01 * B->eps_t * ST * ig + (double)B->ntiny * TINY);
  B->eLm1 = 1.001 * (we * Lm1 * ig + 1.01 * B->eps_t * ST * ig + (double)B->ntiny * TINY);
  B->Lok = B->eL < 0.25;
}

/* Elements from the binary64 bound: o, delta, and every pending format both ends of the
 * enclosure round alike in. cls marks the columns the pass computes (pending on entry). */
static void fast_decide(const ac_or_ws *w, fbuf *B, ac_oracle_elem *el, uint64_t **obits, int64_t slot)
{
  int64_t n = w->n, dv = w->p->dv;
  double L = B->L, eL = B->eL, we = B->we, ig = B->ig, eps_t = B->eps_t, ntiny = (double)B->ntiny;
  for (int64_t t = 0; t < dv; t++) B->cls[t] = B->pend[t] != 0;
  for (int64_t t = 0; t < dv; t++) {
    if (!B->pend[t]) continue;
    double o = B->N[t] / L;
    double vmax = ldexp(1.0, w->head->v_msb[t]);
    double eN = (we * (B->RA[t] + (double)n * SUB) * ig + (double)n * SUB + 1.01 * eps_t * (B->TA[t] + (double)n * SUB) * ig +
                 vmax * ntiny * TINY);
    double delta = 1.001 * (U * fabs(o) + (eN + (1 + U) * fabs(o) * eL) / (L - eL));
    el[t].o = o;
    el[t].o_err = delta;
    if (B->Lok && isfinite(o) && isfinite(delta)) {
      double lo = nextafter(o - delta, -INFINITY), hi = nextafter(o + delta, INFINITY);
      uint32_t pend = B->pend[t];
      for (int f = 0; f < AC_NDTYPES; f++) {
        if (!(pend & (1u << f))) continue;
        uint64_t a = enc((ac_dtype)f, lo);
        if (a == enc((ac_dtype)f, hi)) {
          obits[f][slot * dv + t] = a;
          pend &= ~(1u << f);
        }
      }
      B->pend[t] = pend;
    }
  }
}

/* binary64 (and what the binary64 bound left) from the double-double pass, then the MPFR
 * levels for the rest; how and the counts of the computed columns. */
static void fast_finish(ac_or_ws *w, fbuf *B, ac_oracle_elem *el, uint64_t **obits, int64_t slot, ac_or_stats *st)
{
  int64_t dv = w->p->dv, nslow = 0;
  int any_left = 0;
  for (int64_t t = 0; t < dv; t++) any_left |= B->pend[t] != 0;
  if (any_left && !B->te) ac_or_fastdd_elems(w, el, obits, slot, B->pend);   /* dd: plain scores only */
  for (int64_t t = 0; t < dv; t++) {
    if (!B->cls[t]) continue;   /* decided before (special values, exact cases) */
    if (B->pend[t]) nslow++;
    else {
      el[t].how = AC_HOW_ROUNDED;
      st->rounded++;
    }
  }
  if (nslow) ac_or_fast_slow_elems(w, el, obits, slot, st, B->pend);
}

/* s_g = c_d fl(z_g) from z_g directly (not m + t: no cancellation when s is near 0). */
static void fast_sg(const ac_or_ws *w, fbuf *B)
{
  static const uint64_t zzero[2] = {0, 0};
  for (int64_t g = 0; g < w->ng; g++) {
    const uint64_t *z = ac_or_z(w, w->ord[w->gst[g]]);
    double zg = w->nl == 2 ? zdiff(w, z, zzero) : (double)ac_or_fx_to_ld(z, w->nl, w->zlsb);
    B->sg[g] = w->sc.sign == 0 ? 0 : B->cd * zg;
  }
}

/* Budget terms (docs/numerics.md §7.1), A_j = E_j / L, s_j = m + t_j, in binary64 (fp64 inputs
 * never come here, so every factor is in range), and M (§7.12) from the extremes of V found
 * in the same pass over the keys. */
static void fast_budget(const ac_or_ws *w, ac_oracle_row *row, ac_oracle_elem *el, fbuf *B, double md,
                        const double *mu, int nmu)
{
  int64_t n = w->n, dv = w->p->dv;
  long double z0 = fabsl(ac_or_fx_to_ld(ac_or_z(w, w->ord[0]), w->nl, w->zlsb));
  long double z1 = fabsl(ac_or_fx_to_ld(ac_or_z(w, w->ord[n - 1]), w->nl, w->zlsb));
  long double zmax = z0 > z1 ? z0 : z1;
  double cabs = fabs(B->cd), L = B->L;
  row->max_abs_z = (double)zmax;
  row->max_abs_s = w->sc.sign == 0 ? 0 : (double)(cabs * zmax);
  row->m = md;
  int nt = 9 + nmu;
  double *acc = ac_xcalloc((size_t)(nt * dv), sizeof *acc);
  double *R = acc, *Dd = acc + dv, *S = acc + 2 * dv, *Sp = acc + 3 * dv, *G = acc + 4 * dv, *Gb = acc + 5 * dv;
  double *vlo = acc + (6 + nmu) * dv, *vhi = vlo + dv, *vbuf = vhi + dv; /* vbuf: V widened */
  double *ov = B->o;
  for (int64_t t = 0; t < dv; t++) {
    ov[t] = el[t].accept == AC_ACCEPT_VALUE ? el[t].o : 0;
    vlo[t] = INFINITY;
    vhi[t] = -INFINITY;
  }
  double lcz = 0, lczb = 0, ls = 0, fmass[AC_ORACLE_NMU] = {0};
  const long double *smag = w->var ? ac_or_var_smag(w) : NULL;
  for (int64_t j = 0; j < n; j++) {
    int64_t g = w->gof[j];
    double A = B->E[g] / L;
    const float *vf = w->head->vf ? w->head->vf + j * dv : NULL;
    const double *vd = vf ? NULL : w->head->vd + j * dv;   /* widened into vbuf where needed */
    if (A == 0) { acc_hull(vlo, vhi, ac_or_vrow(w->head, j, dv, vbuf), dv); continue; }
    double sj = B->sg[g];
    /* variant rows: the score magnitude of the key in place of |s_j| (docs/numerics.md §11.4) */
    double as = A * (smag ? (double)smag[j] : fabs(sj));
    double at = A * B->ta[g], ag = A * cabs * (double)w->Zabs[j], agb = A * cabs * (double)w->Zb[j];
    lcz += ag;
    lczb += agb;
    ls += as;
    if (vf)
      acc_budget_f(R, Dd, S, Sp, G, Gb, vlo, vhi, vf, ov, A, at, as, ag, agb, dv);
    else
      acc_budget(R, Dd, S, Sp, G, Gb, vlo, vhi, vd, ov, A, at, as, ag, agb, dv);
    for (int q = 0; q < nmu; q++) {
      if (!(A < mu[q])) continue;
      if (!vd) vd = ac_or_vrow(w->head, j, dv, vbuf);
      acc_f(acc + (6 + q) * dv, vd, ov, A, dv);
      fmass[q] += A;
    }
  }
  for (int64_t t = 0; t < dv; t++) {
    if (el[t].accept != AC_ACCEPT_VALUE) continue;
    el[t].R = R[t];
    el[t].D = Dd[t];
    el[t].S = S[t];
    el[t].Sp = Sp[t];
    el[t].G = G[t];
    el[t].Gb = Gb[t];
    for (int q = 0; q < nmu; q++) el[t].F[q] = acc[(6 + q) * dv + t];
  }
  ac_or_hull_finish(vlo, vhi, n, dv, el);
  row->lse_cZ = lcz;
  row->lse_cZb = lczb;
  row->lse_s = ls;
  for (int q = 0; q < nmu; q++) row->Fmass[q] = fmass[q];
  free(acc);
}

int ac_or_fast_row(ac_or_ws *w, ac_oracle_row *row, ac_oracle_elem *el, uint64_t **obits, int64_t slot,
                   ac_or_stats *st, const double *mu, int nmu)
{
  if (!row_applies(w)) return 1;
  int64_t dv = w->p->dv, ng = w->ng;
  fbuf B;
  B.E = ac_xmalloc((size_t)ng * 5 * sizeof *B.E);
  B.ta = B.E + ng;
  B.sg = B.ta + ng;
  B.vt = B.te = NULL;
  fast_scale(w, &B);
  if (!ac_or_var_plain(w)) {   /* LIN, CAP: t and its bound from fastvar.c, eps_t = 1 in the bounds */
    B.vt = B.sg + ng;
    B.te = B.vt + ng;
    if (ac_or_fast_var_t(w, B.cd, B.eps_t, B.vt, B.te)) {
      free(B.E);
      return 1;
    }
    B.eps_t = 1;
  }
  w->wprec = 0;   /* no MPFR weights for this row yet */
  B.N = ac_xmalloc((size_t)dv * 5 * sizeof *B.N);
  B.RA = B.N + dv; B.TA = B.RA + dv;
  B.o = B.TA + dv; B.delta = B.o + dv;
  B.pend = ac_xcalloc((size_t)dv, sizeof *B.pend);
  B.cls = ac_xcalloc((size_t)dv, 1);

  int any_pending = fast_specials(w, &B, el, obits, slot, st);
  fast_weights(w, &B);
  fast_sums(w, &B, any_pending);
  fast_decide(w, &B, el, obits, slot);
  fast_finish(w, &B, el, obits, slot, st);
  double md = ac_or_fast_lse(w, row, st, B.Lok, B.Lm1, B.eLm1);
  fast_sg(w, &B);
  fast_budget(w, row, el, &B, md, mu, nmu);
  free(B.E); free(B.N); free(B.pend); free(B.cls);
  return 0;
}
