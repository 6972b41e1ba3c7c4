/* mutant-max-sentinel: docs/bugclasses.md §2.2 "finite running-max sentinel".
 * flash-f32 whose running max starts at -5e4 instead of -inf: rows whose logits all lie far below
 * it get P = 0 everywhere and output NaN (0/0). */
#include "config.h"
#include "cpu_common.h"
#define MUT_M_INIT (-5e4f)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_max_sentinel, ATTNCHECK_F32, "mutant-max-sentinel", "fp32", "flash-f32 with a -5e4 running-max sentinel")
