/* gen_tile_edge.c: family "tile_edge": lengths at tile edges (2^k +- 1, multiples of
 * 16/32/64/128 +- 1, below a tile), for queries and keys. */
#include "config.h"
#include "fuzz.h"

AC_FAMILY_DECL(tile_edge)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  int64_t cap = l->max_t < 600 ? l->max_t : 600;
  p->tk = ac_draw_tile_len(r, cap);
  p->tq = ac_rng_below(r, 2) ? p->tk : ac_draw_tile_len(r, cap);
  ac_clamp_shape(p, l);
  if (ac_gen_alloc(c, e)) return -1;
  ac_valdist d;
  ac_draw_valdist(r, p->dtype, &d);
  ac_params_valdist(pb, "qkv", &d);
  ac_fill_qkv(c, r, &d, &d, &d);
  return 0;
}
