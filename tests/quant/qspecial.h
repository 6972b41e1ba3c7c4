/* qspecial.h: special scale values of the quantized formats, shared by tests/toracle_quant.c and
 * tests/quant/extremes.c. */
#ifndef AC_TEST_QSPECIAL_H
#define AC_TEST_QSPECIAL_H
#include <stdint.h>
#include "quant.h"
#include "rng.h"

/* Special scale bit patterns of each scale dtype, k = 0..4: 0, the smallest subnormal, the largest
 * finite, inf (the overflowed scale; e4m3 has none: its NaN), NaN. e8m0 has neither zero nor inf:
 * k = 0 is its smallest exponent 0 (2^-127), k = 1 the next, k = 3 and 4 its NaN 255. */
uint64_t ac_test_qspecial_scale(ac_qsdtype t, int k);
/* Scale element s of quantized tensor t (format f) set to the bit pattern bits. */
void ac_test_qset_scale(const ac_qfmt_info *f, ac_qdata *t, int64_t s, uint64_t bits);
/* Quantized tensor x of c: its data, with its spec, format and scale count (n: its elements). */
ac_qdata *ac_test_qtensor(ac_case *c, char x, const ac_qspec **q, const ac_qfmt_info **f, int64_t *ns, int64_t *n);
/* The codes of quantized tensor x of c drawn uniformly over its format's whole range. */
void ac_test_qcodes_random(ac_case *c, char x, ac_rng *r);
/* One code in 16 of quantized tensor x set to its fp8 format's NaN (nothing for the other formats). */
void ac_test_qcodes_nan(ac_case *c, char x, ac_rng *r);
#endif
