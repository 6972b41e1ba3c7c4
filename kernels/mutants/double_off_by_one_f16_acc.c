/* mutant2-causal-off-by-one-f16-acc: two planted defects (bench/mutants measures that campaigns
 * report two): mutant-causal-off-by-one's j < i in the causal masks and mutant-f16-acc-pv's P.V
 * accumulator kept in f16, in flash-f16. */
#include "config.h"
#include "cpu_common.h"
static inline int64_t mut_visible(const attncheck_problem *p, int64_t i)
{
  int64_t n = p->mask == ATTNCHECK_MASK_CAUSAL ? i : p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT ? i + p->tk - p->tq : p->tk;
  return n < 0 ? 0 : n > p->tk ? p->tk : n;
}
static inline void mut_pv(int dt, float *acc, float pr, const float *v, int64_t n8)
{
  (void)dt;
  for (int64_t e = 0; e < n8; e++) acc[e] = ac_cpu_round_f32(ATTNCHECK_F16, acc[e] + pr * v[e]);
}
#define MUT_VISIBLE(p, i) mut_visible(p, i)
#define MUT_PV(dt, acc, pr, vrow, n8) mut_pv(dt, acc, pr, vrow, n8)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant2_off_by_one_f16_acc, ATTNCHECK_F16, "mutant2-causal-off-by-one-f16-acc", "fp16-fa2",
              "two defects: j < i in the causal masks, and an f16 P.V accumulator (flash-f16)")
