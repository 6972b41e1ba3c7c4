/* mutant2-bf16-rowsum-causal-top-left: two planted defects: mutant-bf16-rowsum's running row sum
 * kept in bf16 (additions of small P lost at long T), and mutant-causal-top-left's top-left
 * diagonal for bottom-right masks, in flash-bf16. */
#include "config.h"
#include "mutant_hooks.h"
#define MUT_L_STORE(dt, x) ac_cpu_round_f32(ATTNCHECK_BF16, x)
#define MUT_VISIBLE(p, i) mut_visible_top_left(p, i)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant2_rowsum_top_left, ATTNCHECK_BF16, "mutant2-bf16-rowsum-causal-top-left", "bf16-fa2",
              "two defects: the row sum kept in bf16, and top-left alignment for every causal mask (flash-bf16)")
