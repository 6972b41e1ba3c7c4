/* ziv.c: interval evaluation of one row by levels of precision (docs/numerics.md §4.1-§4.3).
 *
 * Proof by construction, no error formula: every quantity is an interval whose ends are
 * rounded outward (RNDD/RNDU) in MPFR's extended exponent range.
 *   t_g = c (z_g - z_top) with c in [clo, chi] and z exact; t <= 0 (z_top gives the max of c z)
 *   w_g in [exp(tlo) RNDD, exp(thi) RNDU]   (exp increasing; RNDU never underflows to 0)
 *   L - 1 = (n_0 - 1) + Σ_{g>0} n_g w_g,  L = 1 + (L - 1)   (w_0 = 1 exactly)
 *   N in [Σ V_j w_j^lo/hi] choosing the end by the sign of V_j,  o in [N_lo / L, N_hi / L]
 *   LSE in [mlo + log1p(Lm1lo), mhi + log1p(Lm1hi)]   (log1p keeps a tiny L - 1 exact enough)
 * Level 0 floors/ceils the weights to 62-bit fixed point and adds V_j w_j exactly in
 * integers (no rounding at all in the sums); levels >= 1 use MPFR sums of exact products
 * (mpfr_sum rounds once, directed) at precision tprec+64, tprec+128, then x1.5 up to the cap.
 *
 * The upper weight from the lower one: with d = thi - tlo in (0, 1/2],
 *   exp(thi) = exp(tlo) e^d <= nextabove(exp(tlo) RNDD) (1 + d + d^2) <= ... (1 + 2d),
 * since e^d = 1 + d + d^2 (1/2 + d/6 + ...) <= 1 + d + d^2 for d <= 1. One exp per group. */
#include "config.h"
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "oracle_int.h"

static void ensure_groups(ac_or_ws *w, int64_t ng)
{
  if (ng <= w->cap_g) return;
  w->tlo = ac_xrealloc(w->tlo, (size_t)ng * sizeof *w->tlo);
  w->thi = ac_xrealloc(w->thi, (size_t)ng * sizeof *w->thi);
  w->wlo = ac_xrealloc(w->wlo, (size_t)ng * sizeof *w->wlo);
  w->whi = ac_xrealloc(w->whi, (size_t)ng * sizeof *w->whi);
  w->Wlo = ac_xrealloc(w->Wlo, (size_t)ng * sizeof *w->Wlo);
  w->Whi = ac_xrealloc(w->Whi, (size_t)ng * sizeof *w->Whi);
  for (int64_t g = w->cap_g; g < ng; g++) {
    mpfr_init2(w->tlo[g], 64); mpfr_init2(w->thi[g], 64);
    mpfr_init2(w->wlo[g], 64); mpfr_init2(w->whi[g], 64);
  }
  w->cap_g = ng;
}

static void ensure_prod(ac_or_ws *w, int64_t n, mpfr_prec_t p)
{
  if (n > w->cap_prod) {
    w->prod = ac_xrealloc(w->prod, (size_t)n * sizeof *w->prod);
    w->pp = ac_xrealloc(w->pp, (size_t)n * sizeof *w->pp);
    for (int64_t k = w->cap_prod; k < n; k++) mpfr_init2(w->prod[k], w->prod_prec ? w->prod_prec : 64);
    for (int64_t k = 0; k < n; k++) w->pp[k] = w->prod[k];
    w->cap_prod = n;
  }
  if (p != w->prod_prec) {
    for (int64_t k = 0; k < w->cap_prod; k++) mpfr_set_prec(w->prod[k], p);
    w->prod_prec = p;
  }
}

void ac_or_lse_enclosure(const ac_or_ws *w, mpfr_prec_t p, mpfr_t lo, mpfr_t hi)
{
  mpfr_set_prec(lo, p + 8);
  mpfr_set_prec(hi, p + 8);
  mpfr_log1p(lo, w->Lm1lo, MPFR_RNDD);
  mpfr_log1p(hi, w->Lm1hi, MPFR_RNDU);
  mpfr_add(lo, lo, w->mlo, MPFR_RNDD);
  mpfr_add(hi, hi, w->mhi, MPFR_RNDU);
}

void ac_or_weights(ac_or_ws *w, mpfr_prec_t p)
{
  int64_t ng = w->ng;
  ensure_groups(w, ng);
  mpfr_t clo, chi, dz, d;
  mpfr_inits2(p + 16, clo, chi, (mpfr_ptr)0);
  mpfr_init2(dz, 64);
  mpfr_init2(d, p + 16);   /* 1 + 2 delta must not round up to 1 + 2^-63 */
  ac_or_scale_interval(&w->sc, clo, chi);
  const uint64_t *ztop = ac_or_z(w, w->ord[0]);
  for (int64_t g = 0; g < ng; g++) {
    if (mpfr_get_prec(w->tlo[g]) != p) {
      mpfr_set_prec(w->tlo[g], p); mpfr_set_prec(w->thi[g], p);
      mpfr_set_prec(w->wlo[g], p); mpfr_set_prec(w->whi[g], p);
    }
    if (g == 0 || (w->sc.sign == 0 && !w->var)) {
      mpfr_set_zero(w->tlo[g], -1); mpfr_set_zero(w->thi[g], -1);
      mpfr_set_ui(w->wlo[g], 1, MPFR_RNDN); mpfr_set_ui(w->whi[g], 1, MPFR_RNDN);
    } else {
      if (w->var) {   /* variants: s_g - s_top enclosed directly (varziv.c) */
        ac_or_var_tdiff(w, w->ord[w->gst[g]], w->ord[0], p, w->tlo[g], w->thi[g]);
      } else {
        ac_or_fx_to_mpfr(w, dz, ac_or_z(w, w->ord[w->gst[g]]), ztop, w->nl, w->zlsb);
        if (mpfr_sgn(dz) >= 0) {
          mpfr_mul(w->tlo[g], clo, dz, MPFR_RNDD);
          mpfr_mul(w->thi[g], chi, dz, MPFR_RNDU);
        } else {
          mpfr_mul(w->tlo[g], chi, dz, MPFR_RNDD);
          mpfr_mul(w->thi[g], clo, dz, MPFR_RNDU);
        }
      }
      int inex = mpfr_exp(w->wlo[g], w->tlo[g], MPFR_RNDD);
      mpfr_sub(d, w->thi[g], w->tlo[g], MPFR_RNDU);
      if (mpfr_zero_p(d)) {
        mpfr_set(w->whi[g], w->wlo[g], MPFR_RNDN);
        if (inex) mpfr_nextabove(w->whi[g]);
      } else if (mpfr_cmp_d(d, 0.5) <= 0) {
        mpfr_mul_2ui(d, d, 1, MPFR_RNDU);
        mpfr_add_ui(d, d, 1, MPFR_RNDU);
        mpfr_set(w->whi[g], w->wlo[g], MPFR_RNDN);
        mpfr_nextabove(w->whi[g]);
        mpfr_mul(w->whi[g], w->whi[g], d, MPFR_RNDU);
      } else {
        mpfr_exp(w->whi[g], w->thi[g], MPFR_RNDU);
      }
      /* variants: the top is the largest score up to differences no precision below the cap resolves */
      AC_ASSERT(w->var || mpfr_sgn(w->thi[g]) <= 0, "t_g <= 0: the top group has the largest c z");
    }
    AC_ASSERT(mpfr_lessequal_p(w->wlo[g], w->whi[g]), "the weight's enclosure is an interval");
    if (p == 64) {
      AC_EXACT(mpfr_mul_2ui(d, w->wlo[g], 62, MPFR_RNDD), "a scaling by 2^62");
      w->Wlo[g] = mpfr_get_uj(d, MPFR_RNDD);
      AC_EXACT(mpfr_mul_2ui(d, w->whi[g], 62, MPFR_RNDU), "a scaling by 2^62");
      w->Whi[g] = mpfr_get_uj(d, MPFR_RNDU);
      AC_ASSERT(w->Whi[g] <= (uint64_t)1 << 63, "level-0 weights are below 2 (|V| W < 2^117 in the sums)");
    }
  }
  /* L - 1 and L */
  ensure_prod(w, ng + 1, p + 64);
  AC_ASSERT(ng >= 1 && w->gst[1] > w->gst[0], "the top group is not empty");
  AC_EXACT(mpfr_set_si(w->prod[0], (long)(w->gst[1] - w->gst[0] - 1), MPFR_RNDN), "n_0 - 1 in p + 64 bits");
  for (int64_t g = 1; g < ng; g++)
    AC_EXACT(mpfr_mul_si(w->prod[g], w->wlo[g], (long)(w->gst[g + 1] - w->gst[g]), MPFR_RNDN), "p + 63 bits");
  mpfr_set_prec(w->Lm1lo, p); mpfr_set_prec(w->Lm1hi, p);
  mpfr_set_prec(w->Llo, p); mpfr_set_prec(w->Lhi, p);
  mpfr_sum(w->Lm1lo, w->pp, (unsigned long)ng, MPFR_RNDD);
  for (int64_t g = 1; g < ng; g++)
    AC_EXACT(mpfr_mul_si(w->prod[g], w->whi[g], (long)(w->gst[g + 1] - w->gst[g]), MPFR_RNDN), "p + 63 bits");
  mpfr_sum(w->Lm1hi, w->pp, (unsigned long)ng, MPFR_RNDU);
  mpfr_add_ui(w->Llo, w->Lm1lo, 1, MPFR_RNDD);
  mpfr_add_ui(w->Lhi, w->Lm1hi, 1, MPFR_RNDU);
  AC_ASSERT(mpfr_cmp_ui(w->Llo, 1) >= 0 && mpfr_lessequal_p(w->Llo, w->Lhi), "1 <= L_lo <= L_hi (w_0 = 1)");
  /* m = c z_top */
  mpfr_set_prec(w->mlo, p); mpfr_set_prec(w->mhi, p);
  if (w->var) {
    ac_or_var_score(w, w->ord[0], p, w->mlo, w->mhi);
  } else if (w->sc.sign == 0) {
    mpfr_set_zero(w->mlo, 1); mpfr_set_zero(w->mhi, 1);
  } else {
    ac_or_fx_to_mpfr(w, dz, ztop, NULL, w->nl, w->zlsb);
    if (mpfr_sgn(dz) >= 0) {
      mpfr_mul(w->mlo, clo, dz, MPFR_RNDD);
      mpfr_mul(w->mhi, chi, dz, MPFR_RNDU);
    } else {
      mpfr_mul(w->mlo, chi, dz, MPFR_RNDD);
      mpfr_mul(w->mhi, clo, dz, MPFR_RNDU);
    }
  }
  mpfr_clears(clo, chi, dz, d, (mpfr_ptr)0);
  w->wprec = p;
}

/* o in [N_lo / L, N_hi / L] with outward division by the sign of N. */
static void o_interval(ac_or_ws *w, mpfr_srcptr Nlo, mpfr_srcptr Nhi, mpfr_prec_t p)
{
  mpfr_set_prec(w->olo, p);
  mpfr_set_prec(w->ohi, p);
  mpfr_div(w->olo, Nlo, mpfr_sgn(Nlo) >= 0 ? w->Lhi : w->Llo, MPFR_RNDD);
  mpfr_div(w->ohi, Nhi, mpfr_sgn(Nhi) >= 0 ? w->Llo : w->Lhi, MPFR_RNDU);
  AC_ASSERT(mpfr_lessequal_p(w->olo, w->ohi), "the enclosure of o is an interval");
}

/* Level 0, columns whose window fits: N_lo exactly; N_hi = N_lo + max_g(Whi - Wlo) Σ|V_j|
 * (an upper bound of Σ |V_j| (Whi_g - Wlo_g), with Σ|V_j| from the head's prefix sums). */
static void level0_sums_fast(ac_or_ws *w)
{
  const ac_or_head *hd = w->head;
  int64_t dv = w->p->dv;
  ac_i128 *lo = w->nlo, *hi = w->nhi;
  memset(lo, 0, (size_t)dv * sizeof *lo);
  uint64_t dW = 0;
  for (int64_t g = 0; g < w->ng; g++)
    if (w->Whi[g] - w->Wlo[g] > dW) dW = w->Whi[g] - w->Wlo[g];
  for (int64_t j = 0; j < w->n; j++) {
    int64_t g = w->gof[j];
    ac_i128 Wl = (ac_i128)w->Wlo[g], Wh = (ac_i128)w->Whi[g];
    for (int64_t t = 0; t < dv; t++) {
      if (w->slow[t]) continue;
      int32_t e;
      ac_i128 M = ac_or_v(hd, (size_t)(j * dv + t), t, &e);
      ac_i128 a = M * (M >= 0 ? Wl : Wh);
      lo[t] += (ac_i128)((ac_u128)a << (e - hd->v_lsb[t]));
    }
  }
  for (int64_t t = 0; t < dv; t++) {
    hi[t] = lo[t] + (ac_i128)dW * hd->vabs[w->n * dv + t];
    AC_ASSERT(w->slow[t] || hi[t] >= lo[t], "N_hi >= N_lo in 126 bits");
  }
}

/* Level 0 sum of one wide column, exact in chunks: N * 2^62 at lsb v_lsb. */
static void level0_sum_slow(ac_or_ws *w, int64_t t, int hi_end, mpfr_t out)
{
  const ac_or_head *hd = w->head;
  int64_t dv = w->p->dv;
  int32_t lsb = hd->v_lsb[t];
  int nc = ac_or_fx_chunks(ac_or_vcol_bits(hd, t, w->n, 62));
  if (nc > w->cap_acc) {
    w->acc = ac_xrealloc(w->acc, (size_t)nc * sizeof *w->acc);
    w->cap_acc = nc;
  }
  memset(w->acc, 0, (size_t)nc * sizeof *w->acc);
  for (int64_t j = 0; j < w->n; j++) {
    int32_t e;
    int64_t M = ac_or_v(hd, (size_t)(j * dv + t), t, &e);
    if (!M) continue;
    int64_t g = w->gof[j];
    uint64_t W = (M >= 0) == !hi_end ? w->Wlo[g] : w->Whi[g];
    ac_u128 P = (ac_u128)(uint64_t)(M < 0 ? -M : M) * W;
    ac_or_fx_add(w->acc, nc, P, M < 0, e - lsb);
  }
  uint64_t limbs[nc];
  ac_or_fx_norm(w->acc, nc, limbs);
  ac_or_fx_to_mpfr(w, out, limbs, NULL, nc, lsb - 62);
}

static void i128_to_mpfr(ac_or_ws *w, mpfr_t x, ac_i128 v, int32_t lsb)
{
  uint64_t l[2] = {(uint64_t)v, (uint64_t)((ac_u128)v >> 64)};
  ac_or_fx_to_mpfr(w, x, l, NULL, 2, lsb);
}

/* Level >= 1: N bounds as correctly rounded directed sums of exact products. */
static void level_sums_mpfr(ac_or_ws *w, int64_t t, mpfr_prec_t p, mpfr_t Nlo, mpfr_t Nhi)
{
  const ac_or_head *hd = w->head;
  int64_t dv = w->p->dv;
  ensure_prod(w, w->n, p + 64);
  mpfr_set_prec(Nlo, p);
  mpfr_set_prec(Nhi, p);
  for (int pass = 0; pass < 2; pass++) {
    for (int64_t j = 0; j < w->n; j++) {
      int32_t e;
      int64_t M = ac_or_v(hd, (size_t)(j * dv + t), t, &e);
      int64_t g = w->gof[j];
      mpfr_srcptr wv = (M >= 0) == (pass == 0) ? w->wlo[g] : w->whi[g];
      AC_EXACT(mpfr_mul_si(w->prod[j], wv, (long)M, MPFR_RNDN), "p + 53 bits in p + 64");
      ac_or_mul_2si_outward(w->prod[j], e, pass == 0 ? MPFR_RNDD : MPFR_RNDU);
    }
    mpfr_sum(pass == 0 ? Nlo : Nhi, w->pp, (unsigned long)w->n, pass == 0 ? MPFR_RNDD : MPFR_RNDU);
  }
}

uint32_t ac_or_decide_formats(ac_or_ws *w, int64_t t, uint32_t pend, uint64_t **obits, int64_t eidx)
{
  mpfr_srcptr lo = w->olo, hi = w->ohi;
  if (w->drop) {   /* dropout: [olo, ohi] encloses o', the rounding is o's = o' / q (dropout.c) */
    ac_or_drop_interval(w, w->olo, w->ohi);
    lo = w->dlo, hi = w->dhi;
  }
  for (int f = 0; f < AC_NDTYPES; f++) {
    if (!(pend & (1u << f))) continue;
    uint64_t a, b;
    int r = ac_or_round_decide((ac_dtype)f, lo, hi, &a, &b, w->bp);
    if (r == 1) {
      if (w->drop) ac_or_drop_bp(w, w->bp);   /* o - b has the sign of o' - b q */
      int s = ac_or_sign_vs(w, t, w->bp);
      if (s) { r = 0; if (s > 0) a = b; }
    }
    if (r == 0) {
      obits[f][eidx] = a;
      pend &= ~(1u << f);
    }
  }
  return pend;
}

int ac_or_lse_bp_side(ac_or_ws *w, int mex, mpfr_srcptr m, mpfr_srcptr bp)
{
  if (w->n >= 2 && mex && mpfr_equal_p(bp, m)) return 1;   /* LSE - m = ln L > 0 */
  if (w->n != 1 || !w->var) return 0;
  mpfr_t K;
  mpfr_init2(K, 64);
  int side = ac_or_var_m_side(w, K);
  if (side && !mpfr_equal_p(bp, K)) side = 0;
  mpfr_clear(K);
  return side;
}

static void lse_eval(ac_or_ws *w, ac_oracle_row *row, ac_or_stats *st)
{
  uint32_t pend = 1u << AC_F32;
  if (w->opts->lse_f64) pend |= 1u << AC_F64;
  mpfr_t lo, hi, bp, m;
  mpfr_inits2(64, lo, hi, bp, m, (mpfr_ptr)0);
  int mex = ac_or_m_exact(w, m);
  if (w->n == 1 && mex) {   /* LSE = m exactly */
    row->lse_f32 = (float)ac_decode(AC_F32, ac_or_round_exact(AC_F32, m));
    if (pend & (1u << AC_F64)) row->lse_f64 = ac_decode(AC_F64, ac_or_round_exact(AC_F64, m));
    ac_or_alt_exact(w, row, m);
    mpfr_set(lo, m, MPFR_RNDD);
    mpfr_set(hi, m, MPFR_RNDU);
    ac_or_interval_double(lo, hi, &row->lse, &row->lse_err);
    row->lse_how = AC_HOW_EXACT;
    mpfr_clears(lo, hi, bp, m, (mpfr_ptr)0);
    return;
  }
  int tp = (pend & (1u << AC_F64)) ? 53 : 24;
  mpfr_prec_t p = w->wprec ? w->wprec : 64;
  for (;;) {
    if (w->wprec != p) ac_or_weights(w, p);
    ac_or_lse_enclosure(w, p, lo, hi);
    AC_ASSERT(mpfr_lessequal_p(lo, hi), "the enclosure of the LSE is an interval");
    for (int f = 0; f < 2; f++) {
      ac_dtype dt = f ? AC_F64 : AC_F32;
      if (!(pend & (1u << dt))) continue;
      uint64_t a, b;
      int r = ac_or_round_decide(dt, lo, hi, &a, &b, bp);
      /* a breakpoint the LSE is known to pass (ac_or_lse_bp_side) */
      int sd = r == 1 ? ac_or_lse_bp_side(w, mex, m, bp) : 0;
      if (sd) { r = 0; if (sd > 0) a = b; }
      if (r == 0) {
        if (dt == AC_F32) row->lse_f32 = (float)ac_decode(AC_F32, a);
        else row->lse_f64 = ac_decode(AC_F64, a);
        pend &= ~(1u << dt);
      }
    }
    int adone = ac_or_alt_decide(w, row, mex, m, lo, hi);
    if (!pend && adone) break;
    mpfr_prec_t np = ac_or_next_prec(p < 64 ? 64 : p, tp);
    if (np > w->prec_cap) {
      if (pend & (1u << AC_F32)) row->lse_f32 = (float)mpfr_get_d(lo, MPFR_RNDN);
      if (pend & (1u << AC_F64)) row->lse_f64 = mpfr_get_d(lo, MPFR_RNDN);
      if (pend) row->lse_how = AC_HOW_UNRESOLVED;
      if (pend) st->unresolved++;
      ac_or_alt_left(w, row, lo, hi, st);
      break;
    }
    p = np;
  }
  if (!pend) row->lse_how = AC_HOW_ROUNDED;
  ac_or_interval_double(lo, hi, &row->lse, &row->lse_err);
  mpfr_clears(lo, hi, bp, m, (mpfr_ptr)0);
}

static void ensure_dv(ac_or_ws *w, int64_t dv)
{
  if (dv <= w->cap_dv) return;
  w->nlo = ac_xrealloc(w->nlo, (size_t)dv * sizeof *w->nlo);
  w->nhi = ac_xrealloc(w->nhi, (size_t)dv * sizeof *w->nhi);
  w->pend = ac_xrealloc(w->pend, (size_t)dv * sizeof *w->pend);
  w->slow = ac_xrealloc(w->slow, (size_t)dv);
  w->cap_dv = dv;
}

/* Element t decided without the Ziv loop where it can be: NaN or infinite V in the column (the
 * rule table of oracle.h), or, when try_exact, an exact rational output W / n (exact-case test).
 * 1 = decided (e, obits and st filled); 0 = e->accept is VALUE and the element needs the loop.
 * W, Nlo, Nhi: scratch of the caller. */
int ac_or_decide_special(ac_or_ws *w, int64_t t, int nan, int pinf, int ninf, int try_exact, ac_oracle_elem *e,
                         uint64_t **obits, int64_t eidx, mpfr_t W, mpfr_t Nlo, mpfr_t Nhi, ac_or_stats *st)
{
  if (nan || (pinf && ninf)) {
    e->o = NAN; e->accept = AC_ACCEPT_NAN; e->how = AC_HOW_EXACT;
    for (int f = 0; f < AC_NDTYPES; f++) if (obits[f]) obits[f][eidx] = ac_nan_bits((ac_dtype)f);
    st->exact++;
    return 1;
  }
  if (pinf || ninf) {
    e->o = pinf ? INFINITY : -INFINITY;
    e->accept = (uint8_t)(AC_ACCEPT_NAN | (pinf ? AC_ACCEPT_PINF : AC_ACCEPT_NINF));
    e->how = AC_HOW_EXACT;
    for (int f = 0; f < AC_NDTYPES; f++) if (obits[f]) obits[f][eidx] = ac_or_inf_bits((ac_dtype)f, ninf);
    st->exact++;
    return 1;
  }
  e->accept = AC_ACCEPT_VALUE;
  if (!try_exact || !ac_or_exact_elem(w, t, W)) return 0;
  int bad = 0;
  mpfr_t D;   /* dropout: o = W / (n q) (dropout.c) */
  mpfr_init2(D, 64);
  if (w->drop) ac_or_drop_quotient(w, w->n, D);
  for (int f = 0; f < AC_NDTYPES; f++)
    if (obits[f] && (w->drop ? ac_or_round_quotient((ac_dtype)f, W, D, w->prec_cap, &obits[f][eidx])
                             : ac_or_round_rational((ac_dtype)f, W, w->n, w->prec_cap, &obits[f][eidx])))
      bad = 1;
  mpfr_clear(D);
  mpfr_set_prec(Nlo, mpfr_get_prec(W) + 64);
  mpfr_set_prec(Nhi, mpfr_get_prec(W) + 64);
  mpfr_div_si(Nlo, W, (long)w->n, MPFR_RNDD);
  mpfr_div_si(Nhi, W, (long)w->n, MPFR_RNDU);
  ac_or_interval_double(Nlo, Nhi, &e->o, &e->o_err);
  e->how = bad ? AC_HOW_UNRESOLVED : AC_HOW_EXACT;
  if (bad) st->unresolved++; else st->exact++;
  return 1;
}

void ac_or_row_eval(ac_or_ws *w, ac_oracle_row *row, ac_oracle_elem *el, uint64_t **obits, int64_t slot,
                    ac_or_stats *st)
{
  const ac_problem *p = w->p;
  const ac_or_head *hd = w->head;
  int64_t dv = p->dv;
  ensure_dv(w, dv);
  mpfr_t W, Nlo, Nhi;
  mpfr_inits2(64, W, Nlo, Nhi, (mpfr_ptr)0);
  int any_pending = 0;

  /* Special values first: non-finite visible V, then exact cases. */
  for (int64_t t = 0; t < dv; t++) {
    int64_t eidx = slot * dv + t;
    ac_oracle_elem *e = &el[t];
    int nan = 0, pinf = 0, ninf = 0;
    for (int64_t j = 0; j < w->n; j++) {
      uint8_t c = hd->vcls[j * dv + t];
      nan |= c == AC_VCLS_NAN; pinf |= c == AC_VCLS_PINF; ninf |= c == AC_VCLS_NINF;
    }
    w->pend[t] = 0;
    w->slow[t] = ac_or_vcol_bits(hd, t, w->n, 62) > 126;
    if (ac_or_decide_special(w, t, nan, pinf, ninf, 1, e, obits, eidx, W, Nlo, Nhi, st)) continue;
    w->pend[t] = w->formats;
    any_pending = 1;
  }

  ac_or_weights(w, 64);   /* the LSE and the budget need them too */
  if (st->max_prec < 64) st->max_prec = 64;
  if (any_pending) {
    /* Level 0: fixed-point weights, exact integer sums. */
    mpfr_prec_t po = w->tprec + 64;
    level0_sums_fast(w);
    for (int64_t t = 0; t < dv; t++) {
      if (!w->pend[t]) continue;
      if (w->slow[t]) {
        level0_sum_slow(w, t, 0, Nlo);
        level0_sum_slow(w, t, 1, Nhi);
      } else {
        i128_to_mpfr(w, Nlo, w->nlo[t], hd->v_lsb[t] - 62);
        i128_to_mpfr(w, Nhi, w->nhi[t], hd->v_lsb[t] - 62);
      }
      o_interval(w, Nlo, Nhi, po);
      ac_or_interval_double(w->olo, w->ohi, &el[t].o, &el[t].o_err);
      w->pend[t] = ac_or_decide_formats(w, t, w->pend[t], obits, slot * dv + t);
      if (!w->pend[t]) {
        el[t].how = AC_HOW_ROUNDED;
        st->rounded++;
      }
    }
    /* Levels >= 1: MPFR at growing precision, only for the columns left. */
    mpfr_prec_t pl = 64;
    int first = 1;
    for (;;) {
      int left = 0;
      for (int64_t t = 0; t < dv; t++) left |= w->pend[t] != 0;
      if (!left) break;
      mpfr_prec_t np = ac_or_next_prec(pl, w->tprec);
      if (np > w->prec_cap) {
        for (int64_t t = 0; t < dv; t++) {
          if (!w->pend[t]) continue;
          /* best effort: the last interval's midpoint, reported unresolved */
          for (int f = 0; f < AC_NDTYPES; f++)
            if (w->pend[t] & (1u << f)) obits[f][slot * dv + t] = ac_encode_f64((ac_dtype)f, el[t].o);
          el[t].how = AC_HOW_UNRESOLVED;
          st->unresolved++;
          w->pend[t] = 0;
        }
        break;
      }
      AC_ASSERT(np > pl, "each level is more precise than the last");
      pl = np;
      ac_or_weights(w, pl);
      if (st->max_prec < pl) st->max_prec = pl;
      for (int64_t t = 0; t < dv; t++) {
        if (!w->pend[t]) continue;
        if (first) st->fallback++;
        level_sums_mpfr(w, t, pl, Nlo, Nhi);
        o_interval(w, Nlo, Nhi, pl);
        ac_or_interval_double(w->olo, w->ohi, &el[t].o, &el[t].o_err);
        w->pend[t] = ac_or_decide_formats(w, t, w->pend[t], obits, slot * dv + t);
        if (!w->pend[t]) {
          el[t].how = AC_HOW_ROUNDED;
          st->rounded++;
        }
      }
      first = 0;
    }
  }
  lse_eval(w, row, st);
  if (st->max_prec < w->wprec) st->max_prec = w->wprec;
  mpfr_clears(W, Nlo, Nhi, (mpfr_ptr)0);
}
