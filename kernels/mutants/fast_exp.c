/* mutant-fast-exp: docs/bugclasses.md §2.19 "poor exp approximation".
 * flash-f32 with a fast exp: 2^(x log2 e) with a quadratic for the fraction, up to 3e-3 relative error. */
#include "config.h"
#include "mutant_hooks.h"
#define MUT_EXP(x) mut_fast_exp(x)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_fast_exp, ATTNCHECK_F32, "mutant-fast-exp", "fp32", "flash-f32 with a fast exp (3e-3 relative error)")
