/* gen_small_int.c: family "small_int": sparse small integers, so products and scores are exact
 * and ties are common; the scale is sometimes an explicit power of two. */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(small_int)
{
  ac_draw_shape(r, l, &c->p);
  if (ac_rng_below(r, 2)) {
    c->p.scale_is_default = 0;
    c->p.scale = ldexp(1.0, (int)ac_rng_range(r, -3, 0));
  }
  if (ac_gen_alloc(c, e)) return -1;
  ac_valdist d;
  ac_valdist_normal(&d, 1.0);
  d.kind = AC_VAL_INT;
  d.imax = (int)ac_rng_range(r, 1, 3);
  d.p_zero = 0.25 + 0.5 * ac_rng_uniform(r);   /* sparse */
  ac_params_valdist(pb, "qk", &d);
  ac_fill_qkv(c, r, &d, &d, NULL);
  ac_valdist v = d;
  v.imax = (int)ac_rng_range(r, 1, 8);
  v.p_zero = 0.1;
  ac_params_valdist(pb, "v", &v);
  ac_fill_qkv(c, r, NULL, NULL, &v);
  return 0;
}
