/* gen_masked_rows.c: family "masked_rows": fully masked rows: causal-bottom-right with
 * tq > tk, the excess drawn to leave a leading block of empty rows (1, a tile, tiles +- 1). */
#include "config.h"
#include "fuzz.h"

AC_FAMILY_DECL(masked_rows)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  if (!l->masks || (l->masks & (1u << AC_MASK_CAUSAL_BR))) p->mask = AC_MASK_CAUSAL_BR;
  int64_t cap = l->max_t < 1024 ? l->max_t : 1024;
  p->tk = ac_rng_below(r, 2) ? ac_rng_range(r, 1, 40) : ac_draw_tile_len(r, cap);
  int64_t extra;
  switch (ac_rng_below(r, 3)) {
  case 0: extra = ac_rng_range(r, 1, 4); break;
  case 1: extra = ac_draw_tile_len(r, cap); break;
  default: extra = ac_rng_range(r, 1, 100); break;
  }
  p->tq = p->tk + extra;
  if (p->tq > cap) { p->tq = cap; if (p->tk >= p->tq) p->tk = p->tq > 1 ? p->tq - 1 : 1; }
  ac_params_int(pb, "empty_rows", p->mask == AC_MASK_CAUSAL_BR && p->tq > p->tk ? p->tq - p->tk : 0);
  ac_clamp_shape(p, l);
  if (ac_gen_alloc(c, e)) return -1;
  ac_valdist d;
  ac_draw_valdist(r, p->dtype, &d);
  ac_params_valdist(pb, "qkv", &d);
  ac_fill_qkv(c, r, &d, &d, &d);
  return 0;
}
