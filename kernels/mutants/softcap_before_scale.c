/* mutant-softcap-before-scale: docs/bugclasses.md §2.24 "attention variants" (softcap).
 * flash-f32 capping the raw dot product, c tanh(q.k / c), and scaling afterwards: the cap
 * becomes scale * c and the curve bends at other scores. */
#include "config.h"
#include "cpu_common.h"
#define MUT_SCORE(x, i, j, d, scale) \
  ac_cpu_vx_bias(x, i, j, ac_cpu_vx_alibi(x, i, j, ac_cpu_vx_softcap(x, d) * (scale)))
#include "mutant_flash.h"

MUTANT_KERNEL_VX(ac_mutant_softcap_before_scale, "mutant-softcap-before-scale",
                 "flash-f32 applying the softcap before the scale")
