/* mutant_hooks.h: the planted defects that a single mutant and the mutant2- kernels built from it
 * share (bench/mutants --defects), each a hook of mutant_flash.h. A file defines the MUT_ macro with
 * the hook it plants before it includes mutant_flash.h. */
#ifndef AC_MUTANT_HOOKS_H
#define AC_MUTANT_HOOKS_H
#include "cpu_common.h"

/* mutant-causal-off-by-one: j < i + off instead of j <= i + off (MUT_VISIBLE). */
static inline int64_t mut_visible_off_by_one(const attncheck_problem *p, int64_t i)
{
  int64_t n = p->mask == ATTNCHECK_MASK_CAUSAL ? i : p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT ? i + p->tk - p->tq : p->tk;
  return n < 0 ? 0 : n > p->tk ? p->tk : n;
}

/* mutant-causal-top-left: the top-left diagonal (j <= i) for bottom-right masks too (MUT_VISIBLE). */
static inline int64_t mut_visible_top_left(const attncheck_problem *p, int64_t i)
{
  int64_t n = p->mask == ATTNCHECK_MASK_NONE ? p->tk : i + 1;
  return n < 0 ? 0 : n > p->tk ? p->tk : n;
}

/* mutant-fast-exp: 2^(x log2 e) with a quadratic for the fraction, up to 3e-3 relative error (MUT_EXP). */
static inline float mut_fast_exp(float x)
{
  const float y = x * 1.44269504f;
  if (!(y > -150.0f)) return y != y ? y : 0.0f;
  if (y > 128.0f) return INFINITY;
  const float n = floorf(y), f = y - n;
  return ldexpf(1.0f + f * (0.6622f + 0.3378f * f), (int)n);
}

/* mutant-f16-acc-pv: the P.V accumulator rounded to f16 after every addition (MUT_PV). */
static inline void mut_pv_f16(int dt, float *acc, float pr, const float *v, int64_t n8)
{
  (void)dt;
  for (int64_t e = 0; e < n8; e++) acc[e] = ac_cpu_round_f32(ATTNCHECK_F16, acc[e] + pr * v[e]);
}
#endif
