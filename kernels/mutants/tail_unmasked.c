/* mutant-tail-unmasked: docs/bugclasses.md §2.11 "tail tile".
 * flash-f32 that applies no mask in the last key tile of a query block: every row uses every
 * key of that tile. */
#include "config.h"
#include "cpu_common.h"
#define MUT_TILE_N(nv, cols, is_last) ((is_last) ? (cols) : (nv))
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_tail_unmasked, ATTNCHECK_F32, "mutant-tail-unmasked", "fp32", "flash-f32 with the last key tile unmasked")
