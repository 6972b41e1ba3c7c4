/* mutant-window-tile-edge: docs/bugclasses.md §2.24 "attention variants" (sliding window).
 * flash-f32 whose first key tile is computed from the window's first key + 1 (the left edge
 * taken as exclusive in the tile range): when a block's first key is the last column of a
 * tile, that tile is skipped and the row loses its leftmost window key. */
#include "config.h"
#include "cpu_common.h"
#define MUT_KSTART(kbegin, bc) (((kbegin) + 1) / (bc) * (bc))
#include "mutant_flash.h"

MUTANT_KERNEL_VX(ac_mutant_window_tile_edge, "mutant-window-tile-edge",
                 "flash-f32 starting the key tiles one key after the window's left edge")
