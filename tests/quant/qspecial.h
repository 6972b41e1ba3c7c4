/* qspecial.h: special scale values of the quantized formats, shared by tests/toracle_quant.c and
 * tests/quant/extremes.c. */
#ifndef AC_TEST_QSPECIAL_H
#define AC_TEST_QSPECIAL_H
#include <stdint.h>
#include "quant.h"

/* Special scale bit patterns of each scale dtype, k = 0..4: 0, the smallest subnormal, the largest
 * finite, inf (the overflowed scale; e4m3 has none: its NaN), NaN. e8m0 has neither zero nor inf:
 * k = 0 is its smallest exponent 0 (2^-127), k = 1 the next, k = 3 and 4 its NaN 255. */
uint64_t ac_test_qspecial_scale(ac_qsdtype t, int k);
/* Scale element s of quantized tensor t (format f) set to the bit pattern bits. */
void ac_test_qset_scale(const ac_qfmt_info *f, ac_qdata *t, int64_t s, uint64_t bits);
#endif
