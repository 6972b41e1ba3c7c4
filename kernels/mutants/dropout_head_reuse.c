/* mutant-dropout-head-reuse: docs/bugclasses.md §2.29 "dropout".
 * flash-f32 whose dropout mask generator ignores the head: every head of a batch gets head 0's mask
 * (a random-number offset that leaves out the head index). Its o matches its own mask: only the
 * mask's verdict (DROPOUT-MASK) sees it. */
#include "config.h"
#include "cpu_common.h"
#define MUT_DROP_FILL(p, t) ac_cpu_drop_fill(p, (t)->dropout_mask, 0)
#include "mutant_flash.h"

MUTANT_KERNEL_DROP(ac_mutant_dropout_head_reuse, "mutant-dropout-head-reuse",
                   "flash-f32 whose dropout mask is the same for every head")
