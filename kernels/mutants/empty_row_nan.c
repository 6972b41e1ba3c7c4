/* mutant-empty-row-nan: docs/bugclasses.md §2.9 "fully masked rows".
 * flash-f32 without the empty-row case: a row with no visible key outputs acc / l = 0/0 = NaN. */
#include "config.h"
#include "cpu_common.h"
#define MUT_EMPTY(p, i) ((void)(p), (void)(i), 0)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_empty_row_nan, ATTNCHECK_F32, "mutant-empty-row-nan", "fp32", "flash-f32 giving NaN for fully masked rows")
