/* mutant-causal-off-by-one: docs/bugclasses.md §2.7 "causal off-by-one".
 * flash-f32 testing j < i + off instead of j <= i + off: the diagonal key is dropped. */
#include "config.h"
#include "cpu_common.h"
static inline int64_t mut_visible(const attncheck_problem *p, int64_t i)
{
  int64_t n = p->mask == ATTNCHECK_MASK_CAUSAL ? i : p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT ? i + p->tk - p->tq : p->tk;
  return n < 0 ? 0 : n > p->tk ? p->tk : n;
}
#define MUT_VISIBLE(p, i) mut_visible(p, i)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_causal_off_by_one, ATTNCHECK_F32, "mutant-causal-off-by-one", "fp32", "flash-f32 with j < i in the causal masks")
