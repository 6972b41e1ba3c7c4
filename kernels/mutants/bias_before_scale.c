/* mutant-bias-before-scale: docs/bugclasses.md §2.24 "attention variants" (bias).
 * flash-f32 adding the bias to q.k and scaling the sum: the bias is multiplied by the scale
 * (a -inf bias still masks, so only finite biases show it). */
#include "config.h"
#include "cpu_common.h"
#define MUT_SCORE(x, i, j, d, scale) \
  ac_cpu_vx_alibi(x, i, j, ac_cpu_vx_softcap(x, ac_cpu_vx_bias(x, i, j, d) * (scale)))
#include "mutant_flash.h"

MUTANT_KERNEL_VX(ac_mutant_bias_before_scale, "mutant-bias-before-scale", "flash-f32 adding the bias before the scale")
