/* mutant2-max-sentinel-tail-unmasked: two planted defects: mutant-max-sentinel's running max
 * starting at -5e4, and mutant-tail-unmasked's last key tile used unmasked, in flash-f32. */
#include "config.h"
#include "cpu_common.h"
#define MUT_M_INIT (-5e4f)
#define MUT_TILE_N(nv, cols, is_last) ((is_last) ? (cols) : (nv))
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant2_sentinel_tail, ATTNCHECK_F32, "mutant2-max-sentinel-tail-unmasked", "fp32",
              "two defects: a -5e4 running-max sentinel, and the last key tile unmasked (flash-f32)")
