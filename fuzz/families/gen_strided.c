/* gen_strided.c: family "strided": strided layouts for Q, K, V and O (padded rows, padded
 * heads, BSHD, heads-major); the harness fills the gaps with NaN. */
#include "config.h"
#include "fuzz.h"

AC_FAMILY_DECL(strided)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  if (ac_rng_below(r, 2)) p->batch = 2;
  if (p->tq > 200) p->tq = 200;
  if (p->tk > 200) p->tk = 200;
  ac_clamp_shape(p, l);
  if (!l->no_strided) ac_draw_strides(r, p);
  ac_params_int(pb, "strided", !l->no_strided);
  if (ac_gen_alloc(c, e)) return -1;
  ac_valdist d;
  ac_draw_valdist(r, p->dtype, &d);
  ac_params_valdist(pb, "qkv", &d);
  ac_fill_qkv(c, r, &d, &d, &d);
  return 0;
}
