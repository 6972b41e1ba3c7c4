/* blasrow.c: one row of a BLAS tile (blasfwd.c): the budget terms' binary64 parts, the enclosure
 * and the decisions of every element, the LSE, the second pass (blasrefine.c) and the per-row
 * levels for what they leave (docs/numerics.md §12.4, §12.5).
 *
 * Elements (u = 2^-53; L, eL from blaskeys.c; gN = gamma_(KT + nkt): N's products, KT keys each,
 * added tile by tile in order; nk keys in the products, ntiny keys below AC_BT_TINY):
 *   XA = Σ_j E_j |V_j| <= L (R + npos 2^-150 (1 + Vmax)) (1 + 2^-14) (R: the binary32 sum of
 *        blasterms.c with the binary64 sum of the small weights; E_j = A_j / fl(1/L) within 4u);
 *   |N - N*| <= eN = 1.01 L (1 + 2^-14) (gN R + Σ_j rho_j A_j |V_j|) + 2 nk 2^-1074 + ntiny
 *        AC_BT_TINY Vmax, the second sum split over the terms that sum tau's parts (n_bounds);
 *   o = fl(N / L), |o - o*| <= delta = 1.001 (u|o| + (eN + (1 + u)|o| eL) / (L - eL))   (fast.c);
 * o* lies in [pred(fl(o - delta)), succ(fl(o + delta))]; a format whose rounding of both ends is
 * the same has its correct rounding. LSE* = m + ln L* with L* in [L - eL, L + eL] (ac_bt_lse).
 * What is left goes to the second pass, then, on the row's exact scores and groups, to the
 * exact-case test, the double-double pass and the MPFR levels (fast.c's order), the LSE to
 * fastmpfr.c's.
 *
 * Terms: the binary32 sums of blasterms.c use fl32(o); |V - o| <= |V - fl32(o)| + |o - fl32(o)|,
 * so each term takes |o - fl32(o)| times its weights' sum (Σ A = 1, Σ A|t|, Σ A|s|, Σ A|c|Z,
 * Σ A|c|Zb), and npos 2^-147 (M + |o| + 1) for the underflows of binary32 (each product and sum at
 * most 2^-150 absolutely, a weight's rounding 2^-150 times a factor of at most M + |o|; nothing when
 * every V of the column is o, where every product is 0): never below the truth by more than the
 * relative 2^-14 of the binary32 sums. F: f_terms.
 * Wide V (a value not a binary32 number, blastile.h): Vf = V rounded away from zero, so |Vf| >= |V|
 * (R, an upper bound, stands) and |V - Vf| <= 2^-23 |V| + 2^-149; with |V| <= |V - o| + |o| each
 * weighted sum of |V - o| is at most (its Vf sum + (2^-23 |o| + 2^-149) Σw) / (1 - 2^-23); the
 * extremes of M are those of V rounded down and up (blastile.h). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "blasint.h"
#include "gemm.h"

#define U 0x1p-53

/* The binary64 sums over the keys with 0 < A < AC_BT_SMALL (every term, and F[fq] for those below
 * its threshold muf), into acc (7 x dvp). */
static void small_keys(const ac_bt_tile *T, int64_t a, const double *o, double muf, double *acc)
{
  const ac_bt_brow *rw = &T->rw[a];
  const ac_bt_head *bh = T->bh;
  int64_t dv = bh->dv, dvp = bh->dvp;
  const double *E = T->E + a * T->ld - T->klo, *sh = T->sh + a * T->ld - T->klo;
  const float *za = T->za + a * T->ld - T->klo;
  double cabs = fabs(T->sc->cd);
  for (int64_t j = rw->lo; j < rw->hi; j++) {
    double A = E[j] * rw->iL;
    if (!(A > 0 && A < AC_BT_SMALL)) continue;
    double wt[6] = {A, A * fabs(sh[j] - rw->m), A * fabs(sh[j]), A * (cabs * rw->zs * (double)za[j]), A * ac_bt_czb(T, a, j),
                    A < muf ? A : 0};
    const double *v = bh->V + j * dv;
    for (int64_t t = 0; t < dv; t++) {
      double e = fabs(v[t] - o[t]);
      acc[t] += A * fabs(v[t]);
      for (int q = 0; q < 6; q++) acc[(q + 1) * dvp + t] += wt[q] * e;
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

CLONES static void acc_abs(double *restrict f, double A, const double *restrict v, const double *restrict o, int64_t dv)
{
  for (int64_t t = 0; t < dv; t++) f[t] += A * fabs(v[t] - o[t]);
}

/* f = Σ A|V - o| over the keys with A > 0 below mu (below = 1) or not below it (0); the keys
 * listed first without a branch. */
static void f_side(const ac_bt_tile *T, const ac_bt_brow *rw, const double *E, const double *o, double mu, int below,
                   double *f)
{
  int64_t dv = T->bh->dv, nl = 0;
  memset(f, 0, (size_t)dv * sizeof *f);
  for (int64_t j = rw->lo; j < rw->hi; j++) {
    double A = E[j] * rw->iL;
    T->idx[nl] = j;
    nl += (A > 0) & ((A < mu) == below);
  }
  for (int64_t k = 0; k < nl; k++) acc_abs(f, E[T->idx[k]] * rw->iL, T->bh->V + T->idx[k] * dv, o, dv);
}

/* F[k] of every column into F (nmu x dv): the binary32 sum for fq (Ff), D where every key is below,
 * else directly over the keys below when they are at most half, or D (1 + 2^-14) minus the sum over
 * the others where that is at least 2^-6 D (so that D's error is at most 2^-8 of it), else directly. */
static void f_terms(const ac_bt_tile *T, int64_t a, const double *o, const double *D, const double *Ff,
                    const double *mu, int nmu, double *F)
{
  ac_bt_brow *rw = &T->rw[a];
  int64_t dv = T->bh->dv;
  const double *E = T->E + a * T->ld - T->klo;
  for (int q = 0; q < nmu; q++) {
    double *f = F + q * dv;
    if (q == rw->fq || rw->fall[q]) {
      memcpy(f, q == rw->fq ? Ff : D, (size_t)dv * sizeof *f);
      continue;
    }
    if (rw->nbelow[q] == 0) {
      memset(f, 0, (size_t)dv * sizeof *f);
      continue;
    }
    int direct = 2 * rw->nbelow[q] <= rw->npos;
    f_side(T, rw, E, o, mu[q], direct, f);
    if (direct) continue;
    int small = 0;
    for (int64_t t = 0; t < dv; t++) {
      f[t] = fmax(0, D[t] * (1 + 0x1p-14) - f[t]);
      small |= f[t] < 0x1p-6 * D[t];
    }
    if (small) f_side(T, rw, E, o, mu[q], 1, f);
  }
}

/* The LSE of the row from the enclosure of L* (header): 1 when decided. y = log(L) from libm is
 * checked, not trusted: E = ac_fx_exp(-y) within 2^-50, P = fl(L E) = L e^-y (1 + th), |th| <=
 * kappa = 1.01 (u + 2^-50), d = P - 1 exact; for |d| <= 2^-20, |ln(1 + d) - d| <= d^2, so
 * ln L lies within d^2 + kappa of y + d, and ln L* within eL / (L - eL) more. */
int ac_bt_lse(const ac_bt_brow *rw, ac_oracle_row *row)
{
  double L = rw->L, y = log(L);
  if (!(y >= 0 && y <= 700)) return 0;
  double P = L * ac_fx_exp(-y), d = P - 1;
  if (!(fabs(d) <= 0x1p-20)) return 0;
  double c = (rw->m + y) + d;
  /* the bound, and the two roundings of c (each within u of a sum below |m| + y + |d|) */
  double wb = ac_bt_above(d * d + 1.01 * (U + AC_FX_EPS) + rw->eL / (rw->L - rw->eL) + 2.02 * U * (fabs(rw->m) + y + fabs(d)));
  double lo = ac_bt_below(c - wb), hi = ac_bt_above(c + wb);
  float fa = (float)lo, fb = (float)hi;
  uint32_t ua, ub;
  memcpy(&ua, &fa, sizeof ua);
  memcpy(&ub, &fb, sizeof ub);
  if (ua != ub) return 0;
  row->lse_f32 = fa;
  row->lse_how = AC_HOW_ROUNDED;
  row->lse = c;
  row->lse_err = ac_bt_above(fmax(c - lo, hi - c));
  return 1;
}

/* The row's fields from the tile. */
static void row_fields(const ac_bt_tile *T, const ac_bt_brow *rw, ac_oracle_row *row, int nmu)
{
  long double cabs = fabsl((long double)T->sc->cd);
  row->visible = rw->hi - rw->lo;
  row->m = rw->m;
  row->max_abs_z = rw->zmax;
  row->max_abs_s = T->sc->cd == 0 ? 0 : (double)(cabs * (long double)rw->zmax);
  row->max_cZ = T->sc->cd == 0 ? 0 : (double)((long double)rw->czmax * (1 + 0x1p-40L));
  row->max_cZb = T->sc->cd == 0 ? 0 : (double)((long double)rw->czbmax * (1 + 0x1p-40L));
  row->qk_l1 = rw->qk_l1;
  row->lse_cZ = rw->lcz;
  row->lse_cZb = rw->lczb;
  row->lse_s = rw->ls;
  for (int q = 0; q < nmu; q++) row->Fmass[q] = rw->fmass[q];
  row->lse_f64 = 0;
  row->lse_accept = AC_ACCEPT_VALUE;
}

/* The per-row levels for the columns with pend[t] != 0 (and the LSE unless lse_done), on the row's
 * exact scores and groups: exact-case test, double-double pass, MPFR (fast.c's order). */
static void row_levels(ac_or_ws *w, const ac_bt_brow *rw, ac_oracle_row *row, ac_oracle_elem *el, uint64_t **obits,
                       int64_t slot, uint32_t *pend, int lse_done, ac_or_stats *st)
{
  int64_t dv = w->p->dv;
  ac_or_row_q(w, rw->b, rw->h, rw->i);
  w->n = rw->hi;
  ac_or_fast_scores(w);
  ac_or_fast_groups(w);
  w->wprec = 0;
  mpfr_t W, Nlo, Nhi;
  mpfr_inits2(64, W, Nlo, Nhi, (mpfr_ptr)0);
  int any = 0;
  for (int64_t t = 0; t < dv; t++) {
    if (!pend[t]) continue;
    if (ac_or_decide_special(w, t, 0, 0, 0, 1, &el[t], obits, slot * dv + t, W, Nlo, Nhi, st)) pend[t] = 0;
    any |= pend[t] != 0;
  }
  mpfr_clears(W, Nlo, Nhi, (mpfr_ptr)0);
  if (any) {
    uint32_t *was = ac_xmalloc((size_t)dv * sizeof *was);
    memcpy(was, pend, (size_t)dv * sizeof *was);
    ac_or_fastdd_elems(w, el, obits, slot, pend);
    int64_t nslow = 0;
    for (int64_t t = 0; t < dv; t++) {
      if (was[t] && !pend[t]) {
        el[t].how = AC_HOW_ROUNDED;
        st->rounded++;
      }
      nslow += pend[t] != 0;
    }
    free(was);
    if (nslow) ac_or_fast_slow_elems(w, el, obits, slot, st, pend);
  }
  if (!lse_done) ac_or_fast_lse(w, row, st, 0, 0, 0);
}

/* The bound on |N - N*| of every column (header, docs/numerics.md §12.4) from the corrected terms acc
 * (7 x dvp) and o: Σ_j rho_j E_j |V_j| with rho_j = 1.01 (2^-50 + tau_j) and tau_j of blastile.h
 * split over the terms that sum its parts (|t| in S, |s| in S', |c_d| za in G; |V| <= |V - o| + |o|),
 * each sum within a factor 1 + 2^-14 of its binary32 value (blasterms.c), E_j <= A_j L (1 + 4u). */
static void n_bounds(const ac_bt_tile *T, const ac_bt_brow *rw, const double *o, const double *acc, double *eN)
{
  const ac_bt_scale *sc = T->sc;
  const ac_bt_head *bh = T->bh;
  int64_t dv = bh->dv, dvp = bh->dvp;
  double gN = ac_gemm_gamma(AC_BT_KT + T->nkt), nk = (double)(T->khi - T->klo);
  double cabs = fabs(sc->cd), ig = 1 / (1 - sc->ga) * (1 + 0x1p-50);
  double kz = cabs > 0 ? sc->cup * sc->gz * ig / cabs * (1 + 0x1p-50) : 0;       /* per unit of |c_d| za */
  double es = cabs > 0 ? sc->ec / cabs * (1 + 0x1p-50) : 0;                       /* ec |zh| per unit of |s| */
  double c0 = AC_FX_EPS + 0x1p-1073 + 1.001 * sc->cup * (sc->gz * sc->zsuba * ig * rw->zs + sc->zsub);
  double xs = (double)rw->npos * 0x1p-150 * (1 + bh->vmax);
  double en = 2 * nk * 0x1p-1074 + (double)rw->ntiny * AC_BT_TINY * bh->vmax;
  double fL = rw->L * (1 + 0x1p-14) * (1 + 0x1p-50);
  for (int64_t t = 0; t < dv; t++) {
    double ao = fabs(o[t]), R = acc[t] + xs;
    double SV = acc[2 * dvp + t] + ao * rw->lst, SpV = acc[3 * dvp + t] + ao * rw->ls, GV = acc[4 * dvp + t] + ao * rw->lcz;
    double rho = 1.01 * (c0 * R + 1.001 * (0x1p-53 * SV + (0x1p-53 + es) * SpV + kz * GV));
    eN[t] = fL * (1.01 * gN * R + rho) + en;
  }
}

int ac_bt_row_finish(ac_or_ws *w, const ac_bt_tile *T, int64_t a, ac_oracle_result *r, ac_or_stats *st)
{
  ac_bt_brow *rw = &T->rw[a];
  const ac_bt_head *bh = T->bh;
  int64_t dv = bh->dv, dvp = bh->dvp, slot = ac_oracle_slot(r, rw->ridx);
  int nmu = r->nmu;
  ac_oracle_row *row = &r->rows[rw->ridx];
  ac_oracle_elem *el = &r->elems[slot * dv];
  uint64_t *obits[AC_NDTYPES];
  for (int f = 0; f < AC_NDTYPES; f++) obits[f] = r->o_round[f];
  double *o = T->buf, *del = o + dv, *F = del + dv, *acc = F + nmu * dv;
  uint32_t *pend = (uint32_t *)(acc + 7 * dvp);   /* dv entries in the last dv doubles of the scratch */
  ac_or_alt_row(w, row, rw->b, rw->h, rw->i);
  memcpy(acc, T->acc + a * 7 * dvp, (size_t)(7 * dvp) * sizeof *acc);
  for (int64_t t = 0; t < dv; t++) o[t] = T->N[a * dv + t] / rw->L;
  int lse_done = ac_bt_lse(rw, row);
  int nleft = !lse_done;
  double muf = rw->fq >= 0 ? r->mu[rw->fq] : 0, fm = rw->fq >= 0 ? rw->fmass[rw->fq] : 0;
  if (rw->nsmall) small_keys(T, a, o, muf, acc);
  const double cw[7] = {0, 1, rw->lst, rw->ls, rw->lcz, rw->lczb, fm};
  int vw = (bh->wide & 2) != 0;
  int one = rw->hi - rw->lo == 1;   /* one key: E = L = 1 and N = V exactly, so o = V exactly */
  for (int64_t t = 0; t < dv; t++) {
    ac_oracle_elem *e = &el[t];
    /* M = max_j |V_j - o| (§7.12), rounded up: the differences of binary32 ends (V rounded down and
     * up: they enclose V's) and o, pushed up */
    double m = fmax((double)T->vhi[a * dvp + t] - o[t], o[t] - (double)T->vlo[a * dvp + t]);
    e->M = m == 0 ? 0 : ac_bt_above(m);
    /* the binary32 terms made upper approximations (header) */
    double dO = fabs(o[t] - (double)T->o32[a * dvp + t]) * (1 + 0x1p-20);
    double slack = (double)rw->npos * 0x1p-147 * (e->M + fabs(o[t]) + 1);
    acc[t] += e->M + fabs(o[t]) > 0 ? slack : 0;
    for (int q = 1; q < 7; q++) acc[q * dvp + t] += dO * cw[q] + (e->M > 0 ? slack : 0);
    /* wide V: |V - o| <= |Vf - o| + 2^-23 |V| + 2^-149 and |V| <= |V - o| + |o| (header) */
    if (vw)
      for (int q = 1; q < 7; q++) acc[q * dvp + t] = (acc[q * dvp + t] + (0x1p-23 * fabs(o[t]) + 0x1p-149) * cw[q]) * (1 + 0x1p-22);
    if (vw && one) {   /* o = V: the terms exactly (R = |V|, the others 0) */
      e->M = 0;
      acc[t] = fabs(o[t]);
      for (int q = 1; q < 7; q++) acc[q * dvp + t] = 0;
    }
  }
  n_bounds(T, rw, o, acc, del);
  double iLe = 1 / (rw->L - rw->eL) * (1 + 0x1p-50);
  for (int64_t t = 0; t < dv; t++) {
    double ao = fabs(o[t]);
    if (one) o[t] = o[t] == 0 ? 0 : o[t];   /* an exact zero is +0 (§3.2) */
    del[t] = one ? 0 : 1.001 * (U * ao + (del[t] + (1 + U) * ao * rw->eL) * iLe);
    pend[t] = ac_bt_decide(w->formats, one ? o[t] : ac_bt_below(o[t] - del[t]), one ? o[t] : ac_bt_above(o[t] + del[t]),
                           obits, slot * dv + t);
    nleft += pend[t] != 0;
  }
  if (nleft) nleft = ac_bt_refine(T, a, pend, &lse_done, row, o, del, obits, slot) + !lse_done;
  int nfb = 0;   /* elements left to the per-row levels */
  for (int64_t t = 0; t < dv; t++) nfb += pend[t] != 0;
  if (nleft && (rw->lo != 0 || w->p->f.used)) return 1;   /* windows: the per-row path takes the row whole */
  f_terms(T, a, o, acc + dvp, acc + 6 * dvp, r->mu, nmu, F);
  for (int64_t t = 0; t < dv; t++) {
    ac_oracle_elem *e = &el[t];
    e->o = o[t];
    e->o_err = del[t];
    e->accept = AC_ACCEPT_VALUE;
    e->how = one ? AC_HOW_EXACT : AC_HOW_ROUNDED;
    e->R = acc[t];
    e->D = acc[dvp + t];
    e->S = acc[2 * dvp + t];
    e->Sp = acc[3 * dvp + t];
    e->G = acc[4 * dvp + t];
    e->Gb = acc[5 * dvp + t];
    for (int q = 0; q < nmu; q++) e->F[q] = F[q * dv + t];
    if (one) st->exact++;
    else if (!pend[t]) st->rounded++;
    st->blas += one || !pend[t];
  }
  st->fallback += nfb;
  row->selected = 1;
  row_fields(T, rw, row, nmu);
  if (nleft) row_levels(w, rw, row, el, obits, slot, pend, lse_done, st);
  ac_or_alt_finish(w, row);
  return 0;
}
