/* mutant2-fast-exp-causal-top-left: two planted defects: mutant-fast-exp's exp with 3e-3 relative
 * error on every case, and mutant-causal-top-left's top-left diagonal for bottom-right masks, in
 * flash-f32: the second shows only where tq != tk, on top of the first. */
#include "config.h"
#include "mutant_hooks.h"
#define MUT_EXP(x) mut_fast_exp(x)
#define MUT_VISIBLE(p, i) mut_visible_top_left(p, i)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant2_fast_exp_top_left, ATTNCHECK_F32, "mutant2-fast-exp-causal-top-left", "fp32",
              "two defects: a fast exp (3e-3 relative error), and top-left alignment for every causal mask (flash-f32)")
