/* lsealt.c: the LSE of FlashAttention-2's causal ALiBi convention (docs/variants.md "ALiBi and the
 * LSE"). Under a causal mask FlashAttention-2 adds +m_h j to key j's score where the ABI subtracts
 * m_h |i + tk - tq - j|: the same o (a shift common to every key a bottom-right row sees), an LSE
 * larger by m_h (i + tk - tq). The oracle rounds LSE + m_h (i + tk - tq) correctly to binary32 from
 * the same enclosures as the LSE (the shift is exact: a binary32 slope times an integer), so a
 * kernel declaring that convention is judged against an exact value, never a shifted rounding.
 * A breakpoint equal to m + shift is passed on the side the LSE passes m (ac_or_lse_bp_side). */
#include "config.h"
#include <math.h>
#include "oracle_int.h"
#include "variants.h"

void ac_or_alt_row(ac_or_ws *w, ac_oracle_row *row, int64_t b, int64_t h, int64_t i)
{
  const ac_problem *p = w->p;
  w->alt = 0;
  w->alt_done = 0;
  row->alibi_shift = 0;
  if (!(p->f.used & AC_FEAT_ALIBI) || p->mask == AC_MASK_NONE || !w->cs->alibi_slopes) return;
  double slope = ac_features_slope(w->cs, b, h);
  int64_t off = i + p->tk - p->tq;
  if (!isfinite(slope) || slope == 0 || off == 0) return;
  mpfr_set_prec(w->alt_shift, 128);
  AC_EXACT(mpfr_set_d(w->alt_shift, slope, MPFR_RNDN), "a binary32 slope");
  AC_EXACT(mpfr_mul_si(w->alt_shift, w->alt_shift, (long)off, MPFR_RNDN), "24 + 63 bits in 128");
  row->alibi_shift = mpfr_get_d(w->alt_shift, MPFR_RNDN);
  w->alt = 1;
}

/* The row's alternative LSE decided: its binary32 bits, how, and [lo, hi] as binary64 and bound. */
static void alt_set(ac_or_ws *w, ac_oracle_row *row, uint64_t bits, mpfr_srcptr lo, mpfr_srcptr hi, uint8_t how)
{
  row->lse_alt_f32 = (float)ac_decode(AC_F32, bits);
  ac_or_interval_double(lo, hi, &row->lse_alt, &row->lse_alt_err);
  row->lse_alt_how = how;
  w->alt_done = 1;
}

void ac_or_alt_exact(ac_or_ws *w, ac_oracle_row *row, mpfr_srcptr m)
{
  if (!w->alt) return;
  mpfr_t x;
  mpfr_init2(x, ac_or_exact_prec(m, w->alt_shift));
  AC_EXACT(mpfr_add(x, m, w->alt_shift, MPFR_RNDN), "m + shift at the precision that holds it");
  alt_set(w, row, ac_or_round_exact(AC_F32, x), x, x, AC_HOW_EXACT);
  mpfr_clear(x);
}

int ac_or_alt_decide(ac_or_ws *w, ac_oracle_row *row, int mex, mpfr_srcptr m, mpfr_srcptr lo, mpfr_srcptr hi)
{
  if (!w->alt || w->alt_done) return 1;
  mpfr_prec_t p = mpfr_get_prec(lo) > mpfr_get_prec(hi) ? mpfr_get_prec(lo) : mpfr_get_prec(hi);
  mpfr_t a, b, bp, bs;
  mpfr_inits2(p + 8, a, b, (mpfr_ptr)0);
  mpfr_init2(bp, 72);
  mpfr_add(a, lo, w->alt_shift, MPFR_RNDD);
  mpfr_add(b, hi, w->alt_shift, MPFR_RNDU);
  uint64_t x, y;
  int r = ac_or_round_decide(AC_F32, a, b, &x, &y, bp);
  if (r == 1) {   /* the breakpoint minus the shift, exactly, against what the LSE is known to pass */
    mpfr_init2(bs, ac_or_exact_prec(bp, w->alt_shift));
    AC_EXACT(mpfr_sub(bs, bp, w->alt_shift, MPFR_RNDN), "bp - shift at the precision that holds it");
    int sd = ac_or_lse_bp_side(w, mex, m, bs);
    mpfr_clear(bs);
    if (sd) {
      r = 0;
      if (sd > 0) x = y;
    }
  }
  if (r == 0) alt_set(w, row, x, a, b, AC_HOW_ROUNDED);
  mpfr_clears(a, b, bp, (mpfr_ptr)0);
  return r == 0;
}

void ac_or_alt_left(ac_or_ws *w, ac_oracle_row *row, mpfr_srcptr lo, mpfr_srcptr hi, ac_or_stats *st)
{
  if (!w->alt || w->alt_done) return;
  mpfr_t a, b;
  mpfr_inits2(mpfr_get_prec(lo) + 8, a, b, (mpfr_ptr)0);
  mpfr_add(a, lo, w->alt_shift, MPFR_RNDD);
  mpfr_add(b, hi, w->alt_shift, MPFR_RNDU);
  mpfr_t mid;
  mpfr_init2(mid, mpfr_get_prec(a));
  mpfr_set(mid, a, MPFR_RNDN);
  alt_set(w, row, ac_encode_f64(AC_F32, mpfr_get_d(mid, MPFR_RNDN)), a, b, AC_HOW_UNRESOLVED);
  mpfr_clears(a, b, mid, (mpfr_ptr)0);
  st->unresolved++;
}

void ac_or_alt_finish(ac_or_ws *w, ac_oracle_row *row)
{
  AC_ASSERT(!w->alt || w->alt_done || !isfinite(row->lse) || row->lse_how == AC_HOW_UNRESOLVED,
            "a finite LSE with an ALiBi shift has its alternative decided");
  if (w->alt && w->alt_done && isfinite(row->lse)) return;
  row->lse_alt = row->lse;
  row->lse_alt_err = row->lse_err;
  row->lse_alt_f32 = row->lse_f32;
  row->lse_alt_how = row->lse_how;
}
