/* dtype_mpfr.h: correct rounding of MPFR values into every format (one step, no double rounding). */
#ifndef AC_DTYPE_MPFR_H
#define AC_DTYPE_MPFR_H
#include <mpfr.h>
#include "dtype.h"

/* Round x to nearest-even in format t and return the bit pattern; e4m3 overflow per ov.
 * Works in any exponent range the caller has set; restores emin/emax. */
uint64_t ac_encode_mpfr(ac_dtype t, const mpfr_t x, ac_e4m3_overflow ov);
/* Round x to format t with rounding mode rnd, bits returned (for interval ends). */
uint64_t ac_encode_mpfr_rnd(ac_dtype t, const mpfr_t x, mpfr_rnd_t rnd, ac_e4m3_overflow ov);
/* Exact read of a stored value into x (x needs >= 53 bits). */
void ac_decode_mpfr(mpfr_t x, ac_dtype t, uint64_t bits);

#endif
