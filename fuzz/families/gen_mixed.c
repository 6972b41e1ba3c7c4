/* gen_mixed.c: family "mixed": a random shape with per-tensor distributions drawn by exponent
 * band and value class, sometimes a strided layout, sometimes an explicit scale. */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(mixed)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  if (ac_rng_below(r, 4) == 0) {
    p->scale_is_default = 0;
    p->scale = ac_rng_below(r, 2) ? 0.125 : ldexp(1.0 + ac_rng_uniform(r), -(int)ac_rng_range(r, 0, 5));
  }
  if (!l->no_strided && ac_rng_below(r, 4) == 0) ac_draw_strides(r, p);
  if (ac_gen_alloc(c, e)) return -1;
  ac_valdist d[3];
  static const char *names[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; i++) {
    ac_draw_valdist(r, p->dtype, &d[i]);
    ac_params_valdist(pb, names[i], &d[i]);
  }
  ac_fill_qkv(c, r, &d[0], &d[1], &d[2]);
  return 0;
}
