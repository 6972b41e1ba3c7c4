/* mutant-alibi-top-left: docs/bugclasses.md §2.24 "attention variants" (ALiBi).
 * flash-f32 with the ALiBi distance |i - j| (top-left) instead of |i + tk - tq - j|: right
 * whenever tq = tk, wrong for every query of a chunked prefill or decode step. */
#include "config.h"
#include "cpu_common.h"
static inline float mut_alibi(const ac_cpu_vx *x, int64_t i, int64_t j, float s)
{
  if (!(x->f & ATTNCHECK_FEAT_ALIBI)) return s;
  const int64_t d = i - j;
  return s - x->slope * (float)(d < 0 ? -d : d);
}
#define MUT_SCORE(x, i, j, d, scale) \
  ac_cpu_vx_bias(x, i, j, mut_alibi(x, i, j, ac_cpu_vx_softcap(x, (d) * (scale))))
#include "mutant_flash.h"

MUTANT_KERNEL_VX(ac_mutant_alibi_top_left, "mutant-alibi-top-left", "flash-f32 with the top-left ALiBi distance |i - j|")
