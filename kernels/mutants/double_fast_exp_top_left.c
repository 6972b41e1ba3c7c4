/* mutant2-fast-exp-causal-top-left: two planted defects: mutant-fast-exp's exp with 3e-3 relative
 * error on every case, and mutant-causal-top-left's top-left diagonal for bottom-right masks, in
 * flash-f32: the second shows only where tq != tk, on top of the first. */
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
static inline int64_t mut_visible(const attncheck_problem *p, int64_t i)
{
  int64_t n = p->mask == ATTNCHECK_MASK_NONE ? p->tk : i + 1;
  return n < 0 ? 0 : n > p->tk ? p->tk : n;
}
#define MUT_EXP(x) mut_fast_exp(x)
#define MUT_VISIBLE(p, i) mut_visible(p, i)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant2_fast_exp_top_left, ATTNCHECK_F32, "mutant2-fast-exp-causal-top-left", "fp32",
              "two defects: a fast exp (3e-3 relative error), and top-left alignment for every causal mask (flash-f32)")
