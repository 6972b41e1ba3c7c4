/* gen_tiny.c: family "tiny": magnitudes near the bottom of the dtype, subnormals included,
 * in V (outputs near underflow) and in Q/K (scores that vanish). */
#include "config.h"
#include "fuzz.h"

AC_FAMILY_DECL(tiny)
{
  ac_draw_shape(r, l, &c->p);
  if (ac_gen_alloc(c, e)) return -1;
  const ac_dtype_info *di = ac_dtype_get(c->p.dtype);
  ac_valdist v;
  ac_valdist_normal(&v, 1.0);
  v.kind = AC_VAL_BAND;
  v.emin = di->ieee_emin - di->prec + 1;
  v.emax = di->ieee_emin + (int)ac_rng_range(r, 0, 6);
  v.p_sub = 0.3;
  v.p_zero = 0.05;
  ac_valdist qk = v;
  int which = (int)ac_rng_below(r, 3);   /* 0: V tiny, 1: Q/K tiny, 2: all tiny */
  ac_params_int(pb, "which", which);
  ac_params_valdist(pb, "tiny", &v);
  ac_valdist normal;
  ac_valdist_normal(&normal, 1.0);
  ac_fill_qkv(c, r, which ? &qk : &normal, which ? &qk : &normal, which != 1 ? &v : &normal);
  return 0;
}
