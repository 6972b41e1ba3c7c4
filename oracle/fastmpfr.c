/* fastmpfr.c: the MPFR parts of the binary64 pass (fast.c): the row's LSE, m + log1p(L - 1)
 * with m from the exact top score and log1p on the binary64 enclosure of L - 1 (one call per
 * row, directed roundings), and the MPFR levels (as in ziv.c) for the elements and the LSE
 * that pass leaves undecided. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include "fast.h"

static void o_interval(ac_or_ws *w, mpfr_srcptr Nlo, mpfr_srcptr Nhi, mpfr_prec_t p)
{
  mpfr_set_prec(w->olo, p);
  mpfr_set_prec(w->ohi, p);
  mpfr_div(w->olo, Nlo, mpfr_sgn(Nlo) >= 0 ? w->Lhi : w->Llo, MPFR_RNDD);
  mpfr_div(w->ohi, Nhi, mpfr_sgn(Nhi) >= 0 ? w->Llo : w->Lhi, MPFR_RNDU);
}

static void sums_mpfr(ac_or_ws *w, int64_t t, mpfr_prec_t p, mpfr_t Nlo, mpfr_t Nhi, mpfr_t *prod, mpfr_ptr *pp)
{
  const ac_or_head *hd = w->head;
  int64_t dv = w->p->dv;
  mpfr_set_prec(Nlo, p);
  mpfr_set_prec(Nhi, p);
  for (int pass = 0; pass < 2; pass++) {
    for (int64_t j = 0; j < w->n; j++) {
      int32_t e;
      int64_t M = ac_or_v(hd, (size_t)(j * dv + t), t, &e), g = w->gof[j];
      mpfr_srcptr wv = (M >= 0) == (pass == 0) ? w->wlo[g] : w->whi[g];
      mpfr_set_prec(prod[j], p + 64);
      AC_EXACT(mpfr_mul_si(prod[j], wv, (long)M, MPFR_RNDN), "p + 53 bits in p + 64");
      ac_or_mul_2si_outward(prod[j], e, pass == 0 ? MPFR_RNDD : MPFR_RNDU);
      pp[j] = prod[j];
    }
    mpfr_sum(pass == 0 ? Nlo : Nhi, pp, (unsigned long)w->n, pass == 0 ? MPFR_RNDD : MPFR_RNDU);
  }
}

void ac_or_fast_slow_elems(ac_or_ws *w, ac_oracle_elem *el, uint64_t **obits, int64_t slot, ac_or_stats *st,
                           uint32_t *pend)
{
  int64_t dv = w->p->dv, n = w->n;
  mpfr_t Nlo, Nhi;
  mpfr_inits2(64, Nlo, Nhi, (mpfr_ptr)0);
  mpfr_t *prod = ac_xmalloc((size_t)n * sizeof *prod);
  mpfr_ptr *pp = ac_xmalloc((size_t)n * sizeof *pp);
  for (int64_t j = 0; j < n; j++) mpfr_init2(prod[j], 64);
  mpfr_prec_t pl = 64;
  int first = 1;
  for (;;) {
    int left = 0;
    for (int64_t t = 0; t < dv; t++) left |= pend[t] != 0;
    if (!left) break;
    mpfr_prec_t np = ac_or_next_prec(pl, w->tprec);
    if (np > w->prec_cap) {
      for (int64_t t = 0; t < dv; t++) {
        if (!pend[t]) continue;
        for (int f = 0; f < AC_NDTYPES; f++)
          if (pend[t] & (1u << f)) obits[f][slot * dv + t] = ac_encode_f64((ac_dtype)f, el[t].o);
        el[t].how = AC_HOW_UNRESOLVED;
        st->unresolved++;
        pend[t] = 0;
      }
      break;
    }
    pl = np;
    if (w->wprec != pl) ac_or_weights(w, pl);
    if (st->max_prec < pl) st->max_prec = pl;
    for (int64_t t = 0; t < dv; t++) {
      if (!pend[t]) continue;
      if (first) st->fallback++;
      sums_mpfr(w, t, pl, Nlo, Nhi, prod, pp);
      o_interval(w, Nlo, Nhi, pl);
      ac_or_interval_double(w->olo, w->ohi, &el[t].o, &el[t].o_err);
      pend[t] = ac_or_decide_formats(w, t, pend[t], obits, slot * dv + t);
      if (!pend[t]) {
        el[t].how = AC_HOW_ROUNDED;
        st->rounded++;
      }
    }
    first = 0;
  }
  for (int64_t j = 0; j < n; j++) mpfr_clear(prod[j]);
  free(prod); free(pp);
  mpfr_clears(Nlo, Nhi, (mpfr_ptr)0);
}

/* LSE through the MPFR levels (as ziv.c's lse_eval), binary32 only: the LSE itself when want, and the
 * alternative LSE of lsealt.c when it is pending. */
static void slow_lse(ac_or_ws *w, ac_oracle_row *row, ac_or_stats *st, int mex, mpfr_srcptr m, int want)
{
  mpfr_t lo, hi, bp;
  mpfr_inits2(64, lo, hi, bp, (mpfr_ptr)0);
  mpfr_prec_t p = ac_or_next_prec(64, 24);
  int done = !want, adone = 0;
  for (;;) {
    if (w->wprec != p) ac_or_weights(w, p);
    if (st->max_prec < p) st->max_prec = p;
    ac_or_lse_enclosure(w, p, lo, hi);
    uint64_t a, b;
    int r = done ? 2 : ac_or_round_decide(AC_F32, lo, hi, &a, &b, bp);
    int sd = r == 1 ? ac_or_lse_bp_side(w, mex, m, bp) : 0;
    if (sd) { r = 0; if (sd > 0) a = b; }
    if (r == 0) {
      row->lse_f32 = (float)ac_decode(AC_F32, a);
      row->lse_how = AC_HOW_ROUNDED;
      ac_or_interval_double(lo, hi, &row->lse, &row->lse_err);
      done = 1;
    }
    adone = ac_or_alt_decide(w, row, mex, m, lo, hi);
    if (done && adone) break;
    mpfr_prec_t np = ac_or_next_prec(p, 24);
    if (np > w->prec_cap) break;
    p = np;
  }
  if (!done) {
    row->lse_f32 = (float)mpfr_get_d(lo, MPFR_RNDN);
    row->lse_how = AC_HOW_UNRESOLVED;
    st->unresolved++;
    ac_or_interval_double(lo, hi, &row->lse, &row->lse_err);
  }
  if (!adone) ac_or_alt_left(w, row, lo, hi, st);
  mpfr_clears(lo, hi, bp, (mpfr_ptr)0);
}

double ac_or_fast_lse(ac_or_ws *w, ac_oracle_row *row, ac_or_stats *st, int Lok, double Lm1, double eLm1)
{
  int64_t n = w->n;
  const uint64_t *ztop = ac_or_z(w, w->ord[0]);
  mpfr_t m, mlo, mhi, lo, hi, bp, x;
  mpfr_inits2(64, m, mlo, mhi, lo, hi, bp, x, (mpfr_ptr)0);
  int mex = ac_or_m_exact(w, m);
  if (!ac_or_var_plain(w)) {   /* LIN, CAP: s_top enclosed (varziv.c) */
    ac_or_var_score(w, w->ord[0], 64, mlo, mhi);
  } else if (w->sc.sign == 0) {
    mpfr_set_zero(mlo, 1); mpfr_set_zero(mhi, 1);
  } else {
    mpfr_t clo, chi, dz;
    mpfr_inits2(64, clo, chi, dz, (mpfr_ptr)0);
    ac_or_scale_interval(&w->sc, clo, chi);
    ac_or_fx_to_mpfr(w, dz, ztop, NULL, w->nl, w->zlsb);
    if (mpfr_sgn(dz) >= 0) {
      mpfr_mul(mlo, clo, dz, MPFR_RNDD);
      mpfr_mul(mhi, chi, dz, MPFR_RNDU);
    } else {
      mpfr_mul(mlo, chi, dz, MPFR_RNDD);
      mpfr_mul(mhi, clo, dz, MPFR_RNDU);
    }
    mpfr_clears(clo, chi, dz, (mpfr_ptr)0);
  }
  row->lse_f64 = 0;
  if (n == 1 && mex) {
    row->lse_f32 = (float)ac_decode(AC_F32, ac_or_round_exact(AC_F32, m));
    mpfr_set(lo, m, MPFR_RNDD);
    mpfr_set(hi, m, MPFR_RNDU);
    ac_or_interval_double(lo, hi, &row->lse, &row->lse_err);
    row->lse_how = AC_HOW_EXACT;
    ac_or_alt_exact(w, row, m);
  } else {
    int done = 0, adone = 0;
    if (Lok && isfinite(Lm1) && eLm1 < 0.25) {
      double a = fmax(0, nextafter(Lm1 - eLm1, -INFINITY)), b = nextafter(Lm1 + eLm1, INFINITY);
      if (n == 1) a = b = 0;
      mpfr_set_d(x, a, MPFR_RNDN);
      mpfr_log1p(lo, x, MPFR_RNDD);
      mpfr_set_d(x, b, MPFR_RNDN);
      mpfr_log1p(hi, x, MPFR_RNDU);
      mpfr_add(lo, lo, mlo, MPFR_RNDD);
      mpfr_add(hi, hi, mhi, MPFR_RNDU);
      uint64_t ra, rb;
      int r = ac_or_round_decide(AC_F32, lo, hi, &ra, &rb, bp);
      int sd = r == 1 ? ac_or_lse_bp_side(w, mex, m, bp) : 0;
      if (sd) { r = 0; if (sd > 0) ra = rb; }
      if (r == 0) {
        row->lse_f32 = (float)ac_decode(AC_F32, ra);
        row->lse_how = AC_HOW_ROUNDED;
        ac_or_interval_double(lo, hi, &row->lse, &row->lse_err);
        done = 1;
      }
      adone = ac_or_alt_decide(w, row, mex, m, lo, hi);
    }
    if (!done || !adone) slow_lse(w, row, st, mex, m, !done);
  }
  double md = mpfr_get_d(mlo, MPFR_RNDN);
  mpfr_clears(m, mlo, mhi, lo, hi, bp, x, (mpfr_ptr)0);
  return md;
}
