/* mutant-no-max-sub: docs/bugclasses.md §2.1 "no max-subtraction".
 * flash-f32 computing exp(s) instead of exp(s - m): exp overflows once a logit exceeds ~88. */
#include "config.h"
#include "cpu_common.h"
#define MUT_MREF(mnew) 0.0f
#define MUT_ALPHA(mold, mref) 1.0f
#define MUT_LSE(m, l) logf(l)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_no_max_sub, ATTNCHECK_F32, "mutant-no-max-sub", "fp32", "flash-f32 without max subtraction")
