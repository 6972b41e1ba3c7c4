/* mutant-f16-acc-pv: docs/bugclasses.md §2.5 "fp16 accumulator overflow / underflow".
 * flash-f16 keeping the P·V accumulator in f16 (rounded after every addition). */
#include "config.h"
#include "cpu_common.h"
static inline void mut_pv(int dt, float *acc, float pr, const float *v, int64_t n8)
{
  (void)dt;
  for (int64_t e = 0; e < n8; e++) acc[e] = ac_cpu_round_f32(ATTNCHECK_F16, acc[e] + pr * v[e]);
}
#define MUT_PV(dt, acc, pr, vrow, n8) mut_pv(dt, acc, pr, vrow, n8)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_f16_acc_pv, ATTNCHECK_F16, "mutant-f16-acc-pv", "fp16-fa2", "flash-f16 with an f16 P.V accumulator")
