/* toracle_ref.h: what the oracle tests share: a brute-force MPFR evaluation of one row
 * (round to nearest at a huge precision, the textbook formula, no exact-case logic) and
 * builders of small cases in memory. */
#ifndef AC_TORACLE_REF_H
#define AC_TORACLE_REF_H
#include <mpfr.h>
#include "casefile.h"
#include "oracle.h"
#include "rng.h"

/* o[dv] and lse of row (b, h, i) at precision prec, extended exponent range; returns the
 * number of visible keys (0: nothing computed). o and lse must be initialised. */
int64_t ref_row(const ac_case *c, int64_t b, int64_t h, int64_t i, mpfr_prec_t prec, mpfr_t *o, mpfr_t lse,
                mpfr_t *weights_sum);
/* The exact value of element idx of tensor x ('q', 'k', 'v') of c into out (precision >= 64): for a
 * quantized tensor computed from its codes and scales by the format's formula, the scales read by
 * tdtype_ref (docs/quantized.md; not src/core's decoders), NaN and inf by MPFR's IEEE rules; the
 * stored value otherwise. */
void ref_value(mpfr_t out, const ac_case *c, char x, size_t idx);
/* A case of the given shape with every tensor zero; scale default. */
void ref_case(ac_case *c, ac_dtype t, ac_mask m, int64_t B, int64_t H, int64_t KVH, int64_t tq, int64_t tk,
              int64_t dk, int64_t dv);
void ref_set(ac_case *c, char which, size_t idx, double x);   /* which: 'q', 'k', 'v' */
double ref_get(const ac_case *c, char which, size_t idx);
/* A random small case in dtype t (values finite). */
void ref_random_case(ac_case *c, ac_dtype t, ac_rng *r);
/* Bits of x rounded to t (e4m3 saturating), or 1 in *amb when x (1 ± 2^-(prec(x) - 100)) round
 * differently: a reference too close to a rounding boundary to decide. */
uint64_t ref_round_bits(ac_dtype t, mpfr_t x, int *amb);
/* Runs the oracle with the case dtype plus extra formats and the LSE in binary64 too; aborts the
 * test on error. ref_oracle_lse: the LSE in binary64 only with lse_f64 (without it and without
 * binary64 in formats, the oracle takes its binary64 pass, as `attncheck oracle` does). */
void ref_oracle(const ac_case *c, uint32_t formats, int threads, ac_oracle_result *r);
void ref_oracle_lse(const ac_case *c, uint32_t formats, int threads, int lse_f64, ac_oracle_result *r);

#endif
