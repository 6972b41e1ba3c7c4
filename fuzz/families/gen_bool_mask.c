/* gen_bool_mask.c: family "bool_mask": boolean masks random (70% visible), banded (|i - j| <= 8,
 * cut by tiles at every edge), random with the middle third of the rows emptied, sparse (5%:
 * rows with one visible key or none), stored per (batch, head) or broadcast, alone or with a
 * causal mask: tiles skipped by a wrong all-masked test, the mask read with the wrong strides
 * or broadcast, rows emptied by the mask (NaN, stale values, finite LSE). */
#include "config.h"
#include "fuzz.h"
#include "vgen.h"

AC_FAMILY_DECL(bool_mask)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  if (ac_rng_below(r, 2)) {
    int64_t cap = l->max_t < 300 ? l->max_t : 300;
    p->tk = ac_draw_tile_len(r, cap);
    p->tq = ac_rng_below(r, 2) ? p->tk : ac_draw_tile_len(r, cap);
  }
  ac_clamp_shape(p, l);
  ac_vfam_clamp_pairs(p, l);
  ac_vspec v = {0};
  v.used = AC_FEAT_BOOL_MASK;
  v.bmask = (int)ac_rng_below(r, 4);
  v.mask_bcast_b = ac_rng_below(r, 3) == 0;
  v.mask_bcast_h = ac_rng_below(r, 3) == 0;
  if (ac_vfam_values(c, r, pb, e)) return -1;
  return ac_vfam_apply(c, r, &v, pb, e);
}
