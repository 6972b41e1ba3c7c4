/* mutant-masked-nan-leak: docs/bugclasses.md §2.10 "masked NaN leak".
 * flash-f32 that computes every column of a visited tile and multiplies masked P by 0 instead of
 * skipping them: NaN or Inf in a masked key or value (or a masked logit far above the max) leaks. */
#include "config.h"
#include "cpu_common.h"
#define MUT_COLS(nv, cols) (cols)
#define MUT_P(c, nv, val) ((val) * ((c) < (nv) ? 1.0f : 0.0f))
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_masked_nan_leak, ATTNCHECK_F32, "mutant-masked-nan-leak", "fp32", "flash-f32 multiplying masked terms by 0")
