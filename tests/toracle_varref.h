/* toracle_varref.h: a brute force of attention variants written from the ABI's formula alone
 * (kernels/attncheck_kernel.h), independent of the oracle's code: visibility = mask AND window AND
 * boolean mask, s = scale q·k (values times descales), softcap, ALiBi, bias, the sink in the
 * denominator, and dropout's keep-mask and 1 / (1 - p) on the normalized weights, all in MPFR at VREF_PREC
 * bits (for tests/toracle_variants and tests/toracle_dropout). */
#ifndef AC_TORACLE_VARREF_H
#define AC_TORACLE_VARREF_H
#include <mpfr.h>
#include "casefile.h"

#define VREF_PREC 2500

enum { VR_VALUE = 0, VR_EMPTY = 1, VR_NAN = 2, VR_ZERO = 3 };
/* o[dv] and lse (initialized, VREF_PREC) of row (b, h, i); *nvis the visible keys; returns
 * VR_VALUE, VR_EMPTY (no key, no sink), VR_NAN (a visible score NaN) or VR_ZERO (every weight 0). */
int vref_row(const ac_case *c, int64_t b, int64_t h, int64_t i, mpfr_t *o, mpfr_t lse, int64_t *nvis);
/* Bits of x rounded to t; *amb when x (1 ± 2^-2400) round differently. */
uint64_t vref_round(ac_dtype t, mpfr_t x, int *amb);

typedef struct { int64_t elems, compared, ambiguous, nan_rows, empty_rows, zero_rows; } vstats;
/* The oracle (1 and 3 threads: identical bytes; with and without the fast path, and on the
 * binary64 pass of the default options: identical roundings) against the brute force on every
 * row of c; no element may stay unresolved. */
void vref_check_case(const ac_case *c, const char *what, vstats *vs);
/* Prints vs and requires enough unambiguous roundings. */
void vref_report(const char *what, const vstats *vs);

#endif
