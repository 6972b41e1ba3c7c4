/* mutant-dropout-rp-in-sum: docs/bugclasses.md §2.29 "dropout".
 * flash-f32 with dropout that multiplies P by rp = 1/(1 - p) before both sums, so that the row sum
 * takes the factor too and it cancels: o misses its 1/(1 - p) (1/(1-p) in the wrong place). */
#include "config.h"
#include "cpu_common.h"
#define MUT_DROP_P(pv, rp) ((pv) * (rp))
#define MUT_DROP_INV(inv, rp) ((void)(rp), (inv))
#include "mutant_flash.h"

MUTANT_KERNEL_DROP(ac_mutant_dropout_rp_in_sum, "mutant-dropout-rp-in-sum",
                   "flash-f32 with dropout's 1/(1-p) applied to P before the row sum (it cancels)")
