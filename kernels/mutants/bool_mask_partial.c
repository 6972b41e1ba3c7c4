/* mutant-bool-mask-partial-tile: docs/bugclasses.md §2.24 "attention variants" (boolean mask).
 * flash-f32 whose separate path for partial key tiles (fewer than Bc keys) reads the boolean
 * mask with the opposite convention (1 = masked); full tiles are right. */
#include "config.h"
#include "cpu_common.h"
#define MUT_BMASK(x, i, j, partial) \
  (!((x)->f & ATTNCHECK_FEAT_BOOL_MASK) || ((partial) ? !ac_cpu_vx_bmask(x, i, j) : ac_cpu_vx_bmask(x, i, j)))
#include "mutant_flash.h"

MUTANT_KERNEL_VX(ac_mutant_bool_mask_partial, "mutant-bool-mask-partial-tile",
                 "flash-f32 inverting the boolean mask on partial key tiles")
