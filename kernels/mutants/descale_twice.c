/* mutant-descale-v-twice: docs/bugclasses.md §2.24 "attention variants" (fp8 descales).
 * flash-f32 multiplying V by descale_v as it loads the tile and the output by descale_v
 * again in the epilogue. */
#include "config.h"
#include "cpu_common.h"
#define MUT_V_LOAD(x, v) ((v) * (x)->dv)
#include "mutant_flash.h"

MUTANT_KERNEL_VX(ac_mutant_descale_twice, "mutant-descale-v-twice", "flash-f32 applying descale_v to V and to the output")
