/* mutant-no-rescale-sum: docs/bugclasses.md §2.6 "missing/wrong online rescale".
 * flash-f32 that does not rescale the running sum l when the max grows in a later tile. */
#include "config.h"
#include "cpu_common.h"
#define MUT_L_RESCALE(l, alpha) (l)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_no_rescale_sum, ATTNCHECK_F32, "mutant-no-rescale-sum", "fp32", "flash-f32 without rescaling the running sum")
