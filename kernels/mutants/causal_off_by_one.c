/* mutant-causal-off-by-one: docs/bugclasses.md §2.7 "causal off-by-one".
 * flash-f32 testing j < i + off instead of j <= i + off: the diagonal key is dropped. */
#include "config.h"
#include "mutant_hooks.h"
#define MUT_VISIBLE(p, i) mut_visible_off_by_one(p, i)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_causal_off_by_one, ATTNCHECK_F32, "mutant-causal-off-by-one", "fp32", "flash-f32 with j < i in the causal masks")
