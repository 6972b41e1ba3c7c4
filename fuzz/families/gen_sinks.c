/* gen_sinks.c: family "sinks": attention sinks (gpt-oss) per head: normal logits, dominant ones
 * (20: the sink takes nearly all the weight), vanishing ones (-60) and sinks at the level of the
 * rows' LSE (a weight of 5 % to 95 % whatever T), with rows that have no visible key (causal
 * bottom-right with tq > tk, or a boolean mask emptying rows when the kernel takes one), where
 * o = 0 and lse = the sink; one case in four is a decode case against 1024 to 8192 keys (split-KV
 * sized: the key counts at which decode kernels cut the keys into splits), its sink at the rows'
 * level one time in two: the sink left out of the denominator or LSE, added twice, added once per
 * tile or per split, a sink exponent that overflows, empty rows that ignore it. */
#include "config.h"
#include <math.h>
#include "fuzz.h"
#include "vgen.h"

AC_FAMILY_DECL(sinks)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  ac_vspec v = {0};
  v.used = AC_FEAT_SINKS;
  v.sinks = (int)ac_rng_below(r, 4);
  int empty = ac_rng_below(r, 3) == 0, split = !empty && ac_rng_below(r, 3) == 0;
  if (empty && (!l->masks || (l->masks & (1u << AC_MASK_CAUSAL_BR)))) {
    p->mask = AC_MASK_CAUSAL_BR;
    if (p->tk > 64) p->tk = ac_rng_range(r, 1, 64);
    p->tq = p->tk + ac_rng_range(r, 1, 40);
  } else if (empty && (l->features & AC_FEAT_BOOL_MASK)) {
    v.used |= AC_FEAT_BOOL_MASK;
    v.bmask = AC_VM_EMPTY_MIDDLE;
    if (p->tq < 3) p->tq = ac_rng_range(r, 3, 24);
  }
  if (split) {
    int64_t hi = l->max_t < 8192 ? l->max_t : 8192, lo = hi < 1024 ? hi : 1024;
    p->tk = (int64_t)exp(log((double)lo) + ac_rng_uniform(r) * (log((double)hi) - log((double)lo)));
    p->tq = ac_rng_range(r, 1, 4);
    if (p->mask == AC_MASK_CAUSAL && (!l->masks || (l->masks & (1u << AC_MASK_CAUSAL_BR)))) p->mask = AC_MASK_CAUSAL_BR;
    if (ac_rng_below(r, 2)) v.sinks = AC_VS_LEVEL;
  }
  ac_params_int(pb, "empty_rows", empty);
  ac_params_int(pb, "split_sized", split);
  ac_clamp_shape(p, l);
  ac_vfam_clamp_pairs(p, l);
  if (ac_vfam_values(c, r, pb, e)) return -1;
  return ac_vfam_apply(c, r, &v, pb, e);
}
