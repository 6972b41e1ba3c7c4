/* mutant-scale-eighth: docs/bugclasses.md §2.12 "hard-coded head dim / scale".
 * flash-f32 with the scale hard-coded to 1/8 = 1/sqrt(64). */
#include "config.h"
#include "cpu_common.h"
#define MUT_SCALE(p) ((void)(p), 0.125f)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_scale_eighth, ATTNCHECK_F32, "mutant-scale-eighth", "fp32", "flash-f32 with scale 1/8 whatever dk")
