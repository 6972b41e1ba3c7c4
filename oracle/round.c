/* round.c: deciding the correct rounding of an enclosed value into a format (docs/numerics.md §4.5).
 * Rounding happens in one step (ac_encode_mpfr: precision, exponent range, subnormals);
 * a value is decided when both ends of its interval round alike. When they round to two
 * neighbours, the one breakpoint between them is returned exactly for the sign test. */
#include "config.h"
#include <math.h>
#include "oracle_int.h"
#include "problem.h"

static uint64_t sign_bit(ac_dtype t) { return (uint64_t)1 << (ac_dtype_size(t) * 8 - 1); }

/* The next rounding result upwards: ... -ulp, -0, +0, +ulp, ... +max, +inf. */
static uint64_t succ(ac_dtype t, uint64_t bits)
{
  uint64_t s = sign_bit(t);
  if (bits & s) return (bits & ~s) == 0 ? 0 : bits - 1;
  return bits + 1;
}

uint64_t ac_or_round_exact(ac_dtype t, mpfr_srcptr x) { return ac_encode_mpfr(t, x, AC_E4M3_SATURATE); }

int ac_or_round_decide(ac_dtype t, mpfr_srcptr lo, mpfr_srcptr hi, uint64_t *bits, uint64_t *bits_hi, mpfr_t bp)
{
  uint64_t a = ac_encode_mpfr(t, lo, AC_E4M3_SATURATE), b = ac_encode_mpfr(t, hi, AC_E4M3_SATURATE);
  *bits = a;
  *bits_hi = b;
  if (a == b) return 0;
  if (succ(t, a) != b) return 2;
  mpfr_t A, B;
  mpfr_inits2(64, A, B, (mpfr_ptr)0);
  mpfr_set_prec(bp, 72);
  if (ac_bits_isinf(t, b)) {               /* above the largest finite value */
    ac_decode_mpfr(A, t, a);
    ac_decode_mpfr(B, t, a - 1);
    AC_EXACT(mpfr_sub(B, A, B, MPFR_RNDN), "the ulp at the top");
    AC_EXACT(mpfr_div_2ui(B, B, 1, MPFR_RNDN), "half an ulp");
    AC_EXACT(mpfr_add(bp, A, B, MPFR_RNDN), "the breakpoint above the largest value in 72 bits");
  } else if (ac_bits_isinf(t, a)) {        /* below the most negative finite value */
    ac_decode_mpfr(B, t, b);
    ac_decode_mpfr(A, t, b - 1);
    AC_EXACT(mpfr_sub(A, B, A, MPFR_RNDN), "the ulp at the bottom");
    AC_EXACT(mpfr_div_2ui(A, A, 1, MPFR_RNDN), "half an ulp");
    AC_EXACT(mpfr_add(bp, B, A, MPFR_RNDN), "the breakpoint below the most negative value in 72 bits");
  } else {
    ac_decode_mpfr(A, t, a);
    ac_decode_mpfr(B, t, b);
    AC_EXACT(mpfr_add(bp, A, B, MPFR_RNDN), "the sum of two neighbours in 72 bits");
    AC_EXACT(mpfr_div_2ui(bp, bp, 1, MPFR_RNDN), "the midpoint of two neighbours");
  }
  mpfr_clears(A, B, (mpfr_ptr)0);
  return 1;
}

int ac_or_round_rational(ac_dtype t, mpfr_srcptr W, int64_t n, long cap, uint64_t *bits)
{
  if (n == 1) { *bits = ac_or_round_exact(t, W); return 0; }
  mpfr_t D;
  mpfr_init2(D, 64);
  AC_EXACT(mpfr_set_si(D, (long)n, MPFR_RNDN), "n in 64 bits");
  int rc = ac_or_round_quotient(t, W, D, cap, bits);
  mpfr_clear(D);
  return rc;
}

int ac_or_round_quotient(ac_dtype t, mpfr_srcptr W, mpfr_srcptr D, long cap, uint64_t *bits)
{
  /* W / D dyadic: its significand has at most prec(W) bits (W = X 2^a, D = Y 2^b, Y odd divides X) */
  mpfr_prec_t p = mpfr_get_prec(W) + 64;
  mpfr_t lo, hi, bp;
  mpfr_init2(bp, 72);
  int rc = -1;
  for (;;) {
    mpfr_inits2(p, lo, hi, (mpfr_ptr)0);
    int inex = mpfr_div(lo, W, D, MPFR_RNDD);
    mpfr_div(hi, W, D, MPFR_RNDU);
    uint64_t bh;
    if (!inex) { *bits = ac_or_round_exact(t, lo); rc = 0; }
    else if (ac_or_round_decide(t, lo, hi, bits, &bh, bp) == 0) rc = 0;
    mpfr_clears(lo, hi, (mpfr_ptr)0);
    /* A non-dyadic rational is never a breakpoint, so doubling terminates. */
    if (rc == 0 || p > cap + mpfr_get_prec(W)) break;
    p *= 2;
  }
  mpfr_clear(bp);
  return rc;
}

uint64_t ac_or_inf_bits(ac_dtype t, int neg)
{
  if (t == AC_E4M3) return ac_nan_bits(t);
  return ac_encode_f64(t, neg ? -INFINITY : INFINITY);
}

void ac_or_interval_double(mpfr_srcptr lo, mpfr_srcptr hi, double *mid, double *err)
{
  mpfr_prec_t p = mpfr_get_prec(lo) > mpfr_get_prec(hi) ? mpfr_get_prec(lo) : mpfr_get_prec(hi);
  mpfr_t m, d1, d2;
  mpfr_inits2(p + 2, m, (mpfr_ptr)0);
  mpfr_inits2(64, d1, d2, (mpfr_ptr)0);
  mpfr_add(m, lo, hi, MPFR_RNDN);
  mpfr_div_2ui(m, m, 1, MPFR_RNDN);
  *mid = mpfr_get_d(m, MPFR_RNDN);
  mpfr_sub_d(d1, hi, *mid, MPFR_RNDU);
  mpfr_d_sub(d2, *mid, lo, MPFR_RNDU);
  if (mpfr_less_p(d1, d2)) mpfr_swap(d1, d2);
  *err = mpfr_get_d(d1, MPFR_RNDU);
  if (*err < 0) *err = 0;
  mpfr_clears(m, d1, d2, (mpfr_ptr)0);
}
