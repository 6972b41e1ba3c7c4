/* gen_uniform.c: family "uniform": Q, K, V ~ U(-a, a), a a power of two per tensor. */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(uniform)
{
  ac_draw_shape(r, l, &c->p);
  if (ac_gen_alloc(c, e)) return -1;
  ac_valdist d[3];
  static const char *names[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; i++) {
    ac_valdist_normal(&d[i], 1.0);
    d[i].kind = AC_VAL_UNIFORM;
    d[i].scale = ldexp(1.0, (int)ac_rng_range(r, -2, 2));
    ac_params_valdist(pb, names[i], &d[i]);
  }
  ac_fill_qkv(c, r, &d[0], &d[1], &d[2]);
  return 0;
}
