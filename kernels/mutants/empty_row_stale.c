/* mutant-empty-row-stale: docs/bugclasses.md §2.24 "attention variants" (§2.9 for masks).
 * flash-f32 that writes zeros for rows the causal mask or the window empties but returns
 * early, without storing o, for a row whose keys the boolean mask (or a -inf bias) all
 * removed: that row keeps whatever the output buffer held. */
#include "config.h"
#include "cpu_common.h"
#define MUT_STORE_LATE_EMPTY 0
#include "mutant_flash.h"

MUTANT_KERNEL_VX(ac_mutant_empty_row_stale, "mutant-empty-row-stale",
                 "flash-f32 not writing o for rows the boolean mask empties")
