/* mutant-bf16-acc16-pv: BUGCLASSES.md row "fp16 accumulator overflow / underflow", in bf16.
 * flash-bf16 keeping the P·V accumulator in bf16 (rounded after every addition) and declaring
 * the class that allows it, bf16-acc16. Correct for that class, whose W is unbounded once
 * T·2^-8 >= 1 (256 keys): at long context the sum stagnates and the output is wrong by O(1) for
 * bf16, which only the standard class bf16-fa2 sees (WEAK-CLASS, never FAIL). */
#include "config.h"
#include "cpu_common.h"
static inline void mut_pv(int dt, float *acc, float pr, const float *v, int64_t n8)
{
  (void)dt;
  for (int64_t e = 0; e < n8; e++) acc[e] = ac_cpu_round_f32(ATTNCHECK_BF16, acc[e] + pr * v[e]);
}
#define MUT_PV(dt, acc, pr, vrow, n8) mut_pv(dt, acc, pr, vrow, n8)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_bf16_acc16_pv, ATTNCHECK_BF16, "mutant-bf16-acc16-pv", "bf16-acc16",
              "flash-bf16 with a bf16 P.V accumulator, declared bf16-acc16")
