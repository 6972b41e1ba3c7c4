/* mutant-no-rescale-acc: docs/bugclasses.md §2.6 "missing/wrong online rescale".
 * flash-f32 that does not rescale the output accumulator when the max grows in a later tile. */
#include "config.h"
#include "cpu_common.h"
#define MUT_ACC_SCALE(acc, alpha, n8) ((void)(acc), (void)(alpha), (void)(n8))
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_no_rescale_acc, ATTNCHECK_F32, "mutant-no-rescale-acc", "fp32", "flash-f32 without rescaling the accumulator")
