/* gen_sinks.c: family "sinks": attention sinks (gpt-oss) per head: normal logits, dominant ones
 * (20: the sink takes nearly all the weight) and vanishing ones (-60), with rows that have no
 * visible key (causal bottom-right with tq > tk, or a boolean mask emptying rows when the kernel
 * takes one), where o = 0 and lse = the sink: the sink left out of the LSE or the denominator,
 * added twice, added once per tile, a sink exponent that overflows, empty rows that ignore it. */
#include "config.h"
#include "fuzz.h"
#include "vgen.h"

AC_FAMILY_DECL(sinks)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  ac_vspec v = {0};
  v.used = AC_FEAT_SINKS;
  v.sinks = (int)ac_rng_below(r, 3);
  int empty = ac_rng_below(r, 3) == 0;
  if (empty && (!l->masks || (l->masks & (1u << AC_MASK_CAUSAL_BR)))) {
    p->mask = AC_MASK_CAUSAL_BR;
    if (p->tk > 64) p->tk = ac_rng_range(r, 1, 64);
    p->tq = p->tk + ac_rng_range(r, 1, 40);
  } else if (empty && (l->features & AC_FEAT_BOOL_MASK)) {
    v.used |= AC_FEAT_BOOL_MASK;
    v.bmask = AC_VM_EMPTY_MIDDLE;
    if (p->tq < 3) p->tq = ac_rng_range(r, 3, 24);
  }
  ac_params_int(pb, "empty_rows", empty);
  ac_clamp_shape(p, l);
  ac_vfam_clamp_pairs(p, l);
  if (ac_vfam_values(c, r, pb, e)) return -1;
  return ac_vfam_apply(c, r, &v, pb, e);
}
