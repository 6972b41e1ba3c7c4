/* mutant2-causal-off-by-one-f16-acc: two planted defects (bench/mutants measures that campaigns
 * report two): mutant-causal-off-by-one's j < i in the causal masks and mutant-f16-acc-pv's P.V
 * accumulator kept in f16, in flash-f16. */
#include "config.h"
#include "mutant_hooks.h"
#define MUT_VISIBLE(p, i) mut_visible_off_by_one(p, i)
#define MUT_PV(dt, acc, pr, vrow, n8) mut_pv_f16(dt, acc, pr, vrow, n8)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant2_off_by_one_f16_acc, ATTNCHECK_F16, "mutant2-causal-off-by-one-f16-acc", "fp16-fa2",
              "two defects: j < i in the causal masks, and an f16 P.V accumulator (flash-f16)")
