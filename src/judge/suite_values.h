/* suite_values.h: the value patterns of the fixed suite's cases (suite_values.c), shared by suite.c. */
#ifndef AC_SUITE_VALUES_H
#define AC_SUITE_VALUES_H
#include <stdint.h>
#include "casefile.h"

enum {
  D_NORMAL = 0, D_UNIFORM, D_LARGE, D_NEGATIVE, D_LATEMAX, D_TIES, D_MASKED_NAN, D_VONES, D_ZEROQ,
  D_PERM, D_Q2, D_SLICE, D_EXAMPLE, D_STEEP, D_TAIL, D_LARGENEG, D_CLIFF, D_EXTREME, D_SPLITSTEP
};

/* Fills q, k, v (and the variants' tensors) of c with pattern dist from seed. */
void ac_suite_fill_values(ac_case *c, int dist, uint64_t seed);

#endif
