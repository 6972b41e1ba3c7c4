/* mutant-fast-exp: docs/bugclasses.md §2.19 "poor exp approximation".
 * flash-f32 with a fast exp: 2^(x log2 e) with a quadratic for the fraction, up to 3e-3 relative error. */
#include "config.h"
#include "cpu_common.h"
static inline float mut_fast_exp(float x)
{
  const float y = x * 1.44269504f;
  if (!(y > -150.0f)) return y != y ? y : 0.0f;
  if (y > 128.0f) return INFINITY;
  const float n = floorf(y), f = y - n;
  return ldexpf(1.0f + f * (0.6622f + 0.3378f * f), (int)n);
}
#define MUT_EXP(x) mut_fast_exp(x)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_fast_exp, ATTNCHECK_F32, "mutant-fast-exp", "fp32", "flash-f32 with a fast exp (3e-3 relative error)")
