/* mutant-alibi-sign: docs/bugclasses.md §2.24 "attention variants" (ALiBi).
 * flash-f32 adding slope * distance instead of subtracting it: far keys gain weight. */
#include "config.h"
#include "cpu_common.h"
static inline float mut_alibi(const ac_cpu_vx *x, int64_t i, int64_t j, float s)
{
  if (!(x->f & ATTNCHECK_FEAT_ALIBI)) return s;
  const int64_t d = i + x->p->tk - x->p->tq - j;
  return s + x->slope * (float)(d < 0 ? -d : d);
}
#define MUT_SCORE(x, i, j, d, scale) \
  ac_cpu_vx_bias(x, i, j, mut_alibi(x, i, j, ac_cpu_vx_softcap(x, (d) * (scale))))
#include "mutant_flash.h"

MUTANT_KERNEL_VX(ac_mutant_alibi_sign, "mutant-alibi-sign", "flash-f32 adding the ALiBi penalty instead of subtracting it")
