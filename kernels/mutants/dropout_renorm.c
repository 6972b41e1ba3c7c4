/* mutant-dropout-renorm: docs/bugclasses.md §2.29 "dropout".
 * flash-f32 that applies the dropout mask before the normalization: the row sum takes only the kept
 * keys, so the kept weights are renormalized to 1 (and times 1/(1 - p)). */
#include "config.h"
#include "cpu_common.h"
#define MUT_DROP_L(pv, keep) ((pv) * (keep))
#include "mutant_flash.h"

MUTANT_KERNEL_DROP(ac_mutant_dropout_renorm, "mutant-dropout-renorm",
                   "flash-f32 with the dropout mask applied before the normalization (the row sum of kept keys)")
