/* mutant-f16-score-acc: docs/bugclasses.md §2.4 "fp16 score overflow".
 * flash-f16 accumulating Q·Kᵀ in f16 (rounded after every addition): overflows past 65504. */
#include "config.h"
#include "cpu_common.h"
static inline void mut_qk(int dt, float *s, float qd, const float *k, int64_t n8)
{
  (void)dt;
  for (int64_t c = 0; c < n8; c++) s[c] = ac_cpu_round_f32(ATTNCHECK_F16, s[c] + qd * k[c]);
}
#define MUT_QK(dt, s, qd, krow, n8) mut_qk(dt, s, qd, krow, n8)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_f16_score_acc, ATTNCHECK_F16, "mutant-f16-score-acc", "fp16-fa2", "flash-f16 accumulating scores in f16")
