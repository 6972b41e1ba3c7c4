/* mutant-causal-top-left: docs/bugclasses.md §2.8 "wrong mask alignment".
 * flash-f32 applying the top-left diagonal (j <= i) to bottom-right masks too. */
#include "config.h"
#include "cpu_common.h"
static inline int64_t mut_visible(const attncheck_problem *p, int64_t i)
{
  int64_t n = p->mask == ATTNCHECK_MASK_NONE ? p->tk : i + 1;
  return n < 0 ? 0 : n > p->tk ? p->tk : n;
}
#define MUT_VISIBLE(p, i) mut_visible(p, i)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_causal_top_left, ATTNCHECK_F32, "mutant-causal-top-left", "fp32", "flash-f32 with top-left alignment for every causal mask")
