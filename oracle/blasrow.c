/* blasrow.c: one row of a BLAS tile (blasfwd.c): the budget terms' binary64 parts, the enclosure
 * and the decisions of every element, the LSE, and the per-row levels for what they leave
 * (docs/numerics.md §12.4, §12.5).
 *
 * Elements (u = 2^-53; L, eL, rho from blasfwd.c; gN = gamma_(KT + nkt): N's products, KT keys
 * each, added tile by tile in order; nk keys in the products, ntiny keys below AC_BT_TINY):
 *   XA = Σ_j E_j |V_j| <= XAup = L (R + npos 2^-150 (1 + Vmax)) (1 + 2^-14) (R: the binary32 sum of
 *        blasterms.c with the binary64 sum of the small weights; E_j = A_j / fl(1/L) within 2u);
 *   |N - N*| <= eN = 1.01 (gN + rho) XAup + 2 nk 2^-1074 + ntiny AC_BT_TINY Vmax;
 *   o = fl(N / L), |o - o*| <= delta = 1.001 (u|o| + (eN + (1 + u)|o| eL) / (L - eL))   (fast.c);
 * o* lies in [pred(fl(o - delta)), succ(fl(o + delta))]; a format whose rounding of both ends is
 * the same has its correct rounding. LSE* = m + ln L* lies in [m + ln(L - eL), m + ln(L + eL)]
 * (MPFR, directed). What is left goes, on the row's exact scores and groups, to the exact-case
 * test, the double-double pass and the MPFR levels (fast.c's order), the LSE to fastmpfr.c's.
 *
 * Terms: the binary32 sums of blasterms.c use fl32(o); |V - o| <= |V - fl32(o)| + |o - fl32(o)|,
 * so each term takes |o - fl32(o)| times its weights' sum (Σ A = 1, Σ A|t|, Σ A|s|, Σ A|c|Z,
 * Σ A|c|Zb), and npos 2^-148 (M + |o| + 1) for the underflows of binary32 (each operation at most
 * 2^-150 absolutely, times a factor of at most M + |o| + 1): never below the truth by more than the
 * relative 2^-15 of the binary32 sums. F[k] = Σ_{0 < A < mu_k} A|V - o| directly over those keys
 * when they are at most half the keys of the row, else D (1 + 2^-14) - Σ_{A >= mu_k} A|V - o|. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "blasint.h"
#include "gemm.h"

#define U 0x1p-53

static uint64_t enc(ac_dtype f, double x) { return ac_encode_f64_ov(f, x, AC_E4M3_SATURATE); }

/* The binary64 sums over the keys with 0 < A < AC_BT_SMALL (every term), into acc (6 x dvp). */
static void small_keys(const ac_bt_tile *T, int64_t a, const double *o, double *acc)
{
  const ac_bt_brow *rw = &T->rw[a];
  const ac_bt_head *bh = T->bh;
  int64_t dv = bh->dv, dvp = bh->dvp;
  const double *E = T->E + a * T->ld - T->klo, *sh = T->sh + a * T->ld - T->klo, *za = T->za + a * T->ld - T->klo;
  double cabs = fabs(T->sc->cd);
  for (int64_t j = rw->lo; j < rw->hi; j++) {
    double A = E[j] * rw->iL;
    if (!(A > 0 && A < AC_BT_SMALL)) continue;
    double wt[5] = {A, A * fabs(sh[j] - rw->m), A * fabs(sh[j]), A * cabs * za[j], A * ac_bt_czb(T, a, j)};
    const double *v = bh->V + j * dv;
    for (int64_t t = 0; t < dv; t++) {
      double e = fabs(v[t] - o[t]);
      acc[t] += A * fabs(v[t]);
      for (int q = 0; q < 5; q++) acc[(q + 1) * dvp + t] += wt[q] * e;
    }
  }
}

/* F[k] of every column into F (nmu x dv). */
static void f_terms(const ac_bt_tile *T, int64_t a, const double *o, const double *D, const double *mu, int nmu,
                    double *F)
{
  const ac_bt_brow *rw = &T->rw[a];
  const ac_bt_head *bh = T->bh;
  int64_t dv = bh->dv;
  const double *E = T->E + a * T->ld - T->klo;
  for (int q = 0; q < nmu; q++) {
    double *f = F + q * dv;
    memset(f, 0, (size_t)dv * sizeof *f);
    if (rw->nbelow[q] == 0) continue;
    int direct = 2 * rw->nbelow[q] <= rw->npos;
    for (int64_t j = rw->lo; j < rw->hi; j++) {
      double A = E[j] * rw->iL;
      if (!(A > 0) || (A < mu[q]) != direct) continue;
      const double *v = bh->V + j * dv;
      for (int64_t t = 0; t < dv; t++) f[t] += A * fabs(v[t] - o[t]);
    }
    if (!direct)
      for (int64_t t = 0; t < dv; t++) f[t] = fmax(0, D[t] * (1 + 0x1p-14) - f[t]);
  }
}

/* The LSE of the row from the enclosure of L*: 1 when decided. */
static int row_lse(const ac_bt_brow *rw, ac_oracle_row *row)
{
  mpfr_t x, lo, hi, bp;
  mpfr_inits2(64, x, lo, hi, bp, (mpfr_ptr)0);
  AC_EXACT(mpfr_set_d(x, rw->L, MPFR_RNDN), "a binary64 in 64 bits");
  mpfr_sub_d(lo, x, rw->eL, MPFR_RNDD);
  mpfr_add_d(hi, x, rw->eL, MPFR_RNDU);
  mpfr_log(lo, lo, MPFR_RNDD);
  mpfr_log(hi, hi, MPFR_RNDU);
  mpfr_add_d(lo, lo, rw->m, MPFR_RNDD);
  mpfr_add_d(hi, hi, rw->m, MPFR_RNDU);
  uint64_t a, b;
  int r = ac_or_round_decide(AC_F32, lo, hi, &a, &b, bp);
  if (r == 0) {
    row->lse_f32 = (float)ac_decode(AC_F32, a);
    row->lse_how = AC_HOW_ROUNDED;
    ac_or_interval_double(lo, hi, &row->lse, &row->lse_err);
  }
  mpfr_clears(x, lo, hi, bp, (mpfr_ptr)0);
  return r == 0;
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

int ac_bt_row_finish(ac_or_ws *w, const ac_bt_tile *T, int64_t a, ac_oracle_result *r, ac_or_stats *st)
{
  const ac_bt_brow *rw = &T->rw[a];
  const ac_bt_head *bh = T->bh;
  int64_t dv = bh->dv, dvp = bh->dvp, slot = ac_oracle_slot(r, rw->ridx);
  int nmu = r->nmu;
  ac_oracle_row *row = &r->rows[rw->ridx];
  ac_oracle_elem *el = &r->elems[slot * dv];
  uint64_t *obits[AC_NDTYPES];
  for (int f = 0; f < AC_NDTYPES; f++) obits[f] = r->o_round[f];
  double *buf = ac_xmalloc((size_t)(dv * (2 + nmu) + 6 * dvp) * sizeof *buf), *o = buf, *del = o + dv,
         *F = del + dv, *acc = F + nmu * dv;
  uint32_t *pend = ac_xcalloc((size_t)dv, sizeof *pend);
  ac_or_alt_row(w, row, rw->b, rw->h, rw->i);
  memcpy(acc, T->acc + a * 6 * dvp, (size_t)(6 * dvp) * sizeof *acc);
  for (int64_t t = 0; t < dv; t++) o[t] = T->N[a * dv + t] / rw->L;
  int lse_done = row_lse(rw, row);
  /* windows: the per-row path gathers the row's keys; a window row that needs it goes whole */
  int nleft = !lse_done;
  const double *vlo = T->vlo + a * dv, *vhi = T->vhi + a * dv;
  double gN = ac_gemm_gamma(AC_BT_KT + T->nkt), nk = (double)(T->khi - T->klo);
  small_keys(T, a, o, acc);
  for (int64_t t = 0; t < dv; t++) {
    double xa = rw->L * (acc[t] + (double)rw->npos * 0x1p-150 * (1 + bh->vmax)) * (1 + 0x1p-14);
    double eN = 1.01 * (gN + rw->rho) * xa + 2 * nk * 0x1p-1074 + (double)rw->ntiny * AC_BT_TINY * bh->vmax;
    double ao = fabs(o[t]);
    del[t] = 1.001 * (U * ao + (eN + (1 + U) * ao * rw->eL) / (rw->L - rw->eL));
    double lo = nextafter(o[t] - del[t], -INFINITY), hi = nextafter(o[t] + del[t], INFINITY);
    uint32_t left = 0;
    for (int f = 0; f < AC_NDTYPES; f++) {
      if (!(w->formats & (1u << f))) continue;
      uint64_t x = enc((ac_dtype)f, lo);
      if (x == enc((ac_dtype)f, hi)) obits[f][slot * dv + t] = x;
      else left |= 1u << f;
    }
    pend[t] = left;
    nleft += left != 0;
  }
  if (nleft && (rw->lo != 0 || w->p->f.used)) {   /* the per-row path takes the row whole */
    free(buf);
    free(pend);
    return 1;
  }
  for (int64_t t = 0; t < dv; t++) {
    ac_oracle_elem *e = &el[t];
    e->o = o[t];
    e->o_err = del[t];
    e->accept = AC_ACCEPT_VALUE;
    e->how = AC_HOW_ROUNDED;
  }
  ac_or_hull_finish(vlo, vhi, rw->hi - rw->lo, dv, el);
  const double *D = acc + dvp;
  for (int64_t t = 0; t < dv; t++) {   /* the binary32 terms made upper approximations (header) */
    double dO = fabs(o[t] - (double)T->o32[a * dvp + t]), slack = (double)rw->npos * 0x1p-148 * (el[t].M + fabs(o[t]) + 1);
    double cw[6] = {0, 1, rw->lst, rw->ls, rw->lcz, rw->lczb};
    for (int q = 0; q < 6; q++) acc[q * dvp + t] += dO * cw[q] * (1 + 0x1p-20) + slack;
  }
  f_terms(T, a, o, D, r->mu, nmu, F);
  for (int64_t t = 0; t < dv; t++) {
    ac_oracle_elem *e = &el[t];
    e->R = acc[t];
    e->D = acc[dvp + t];
    e->S = acc[2 * dvp + t];
    e->Sp = acc[3 * dvp + t];
    e->G = acc[4 * dvp + t];
    e->Gb = acc[5 * dvp + t];
    for (int q = 0; q < nmu; q++) e->F[q] = F[q * dv + t];
    if (!pend[t]) st->rounded++;
    else st->fallback++;
  }
  row->selected = 1;
  row_fields(T, rw, row, nmu);
  if (nleft) row_levels(w, rw, row, el, obits, slot, pend, lse_done, st);
  ac_or_alt_finish(w, row);
  free(buf);
  free(pend);
  return 0;
}
