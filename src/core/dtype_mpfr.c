/* dtype_mpfr.c: correct rounding of MPFR values into every format, in one step.
 *
 * Recipe (docs/numerics.md §4.5): round to the format's precision in the widest exponent range,
 * then narrow the range to the format's, mpfr_check_range and mpfr_subnormalize with the
 * ternary value, which together avoid double rounding. The result is then representable
 * in binary64, so the bit pattern comes from the exact binary64 encoder. */
#include "config.h"
#include "dtype_mpfr.h"
#include "ac_assert.h"
#include <math.h>

/* Rounding rnd of a value of sign neg goes toward zero. */
static int toward_zero(mpfr_rnd_t rnd, int neg)
{
  return rnd == MPFR_RNDZ || (rnd == MPFR_RNDD && !neg) || (rnd == MPFR_RNDU && neg);
}

uint64_t ac_encode_mpfr_rnd(ac_dtype t, const mpfr_t x, mpfr_rnd_t rnd, ac_e4m3_overflow ov)
{
  const ac_dtype_info *d = ac_dtype_get(t);
  if (!d) return 0;
  const int neg = mpfr_signbit(x) != 0;

  /* Special values first. */
  if (mpfr_nan_p(x)) return ac_encode_f64_ov(t, neg ? -NAN : NAN, ov);
  if (mpfr_inf_p(x)) {
    if (t == AC_E4M3 && ov == AC_E4M3_SATURATE) return ac_encode_f64_ov(t, neg ? -d->max_finite : d->max_finite, ov);
    if (t == AC_E4M3 && toward_zero(rnd, neg)) return ac_encode_f64_ov(t, neg ? -d->max_finite : d->max_finite, ov);
    return ac_encode_f64_ov(t, neg ? -INFINITY : INFINITY, ov);
  }
  if (mpfr_zero_p(x)) return ac_encode_f64_ov(t, neg ? -0.0 : 0.0, ov);

  const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mp_limb_t limbs[(53 + GMP_NUMB_BITS - 1) / GMP_NUMB_BITS];
  mpfr_t r;
  mpfr_custom_init(limbs, d->prec);
  mpfr_custom_init_set(r, MPFR_ZERO_KIND, 0, d->prec, limbs);

  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  int inex = mpfr_set(r, x, rnd);
  mpfr_set_emin(d->mpfr_emin);
  mpfr_set_emax(d->mpfr_emax);
  inex = mpfr_check_range(r, inex, rnd);
  mpfr_subnormalize(r, inex, rnd);
  double v = mpfr_get_d(r, MPFR_RNDN);   /* exact: at most 53 bits, exponent in range */
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  AC_ASSERT(!mpfr_number_p(r) || mpfr_cmp_d(r, v) == 0, "the rounded value converts to binary64 exactly");

  /* e4m3 has no infinity and its top code is NaN: anything above 448 overflowed. */
  if (t == AC_E4M3 && fabs(v) > d->max_finite) {
    if (ov == AC_E4M3_SATURATE || toward_zero(rnd, neg)) v = neg ? -d->max_finite : d->max_finite;
    else return ac_encode_f64_ov(t, neg ? -NAN : NAN, ov);
  }
  return ac_encode_f64_ov(t, v, ov);
}

uint64_t ac_encode_mpfr(ac_dtype t, const mpfr_t x, ac_e4m3_overflow ov)
{
  return ac_encode_mpfr_rnd(t, x, MPFR_RNDN, ov);
}

void ac_decode_mpfr(mpfr_t x, ac_dtype t, uint64_t bits)
{
  AC_EXACT(mpfr_set_d(x, ac_decode(t, bits), MPFR_RNDN), "every format fits binary64 (x has >= 53 bits)");
}
