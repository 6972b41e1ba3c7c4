/* mutant-causal-top-left: docs/bugclasses.md §2.8 "wrong mask alignment".
 * flash-f32 applying the top-left diagonal (j <= i) to bottom-right masks too. */
#include "config.h"
#include "mutant_hooks.h"
#define MUT_VISIBLE(p, i) mut_visible_top_left(p, i)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_causal_top_left, ATTNCHECK_F32, "mutant-causal-top-left", "fp32", "flash-f32 with top-left alignment for every causal mask")
