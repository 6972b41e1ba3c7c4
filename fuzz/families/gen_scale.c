/* gen_scale.c: family "scale": explicit softmax scales: 1/8 with dk != 64 (hard-coded scale),
 * 1, 0, negative, tiny, large, and the binary32 rounding of 1/sqrt(dk). */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(scale)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  int kind = (int)ac_rng_below(r, 7);
  double s;
  switch (kind) {
  case 0: s = 0.125; if (p->dk == 64) p->dk = 32; break;
  case 1: s = 1.0; break;
  case 2: s = 0.0; break;
  case 3: s = -1.0 / sqrt((double)p->dk) * (1.0 + ac_rng_uniform(r)); break;
  case 4: s = ldexp(1.0, -(int)ac_rng_range(r, 10, 30)); break;
  case 5: s = ldexp(1.0, (int)ac_rng_range(r, 1, 4)); break;
  default: s = (double)(float)(1.0 / sqrt((double)p->dk)); break;
  }
  p->scale_is_default = 0;
  p->scale = s;
  ac_params_int(pb, "scale_kind", kind);
  if (ac_gen_alloc(c, e)) return -1;
  ac_valdist d;
  ac_draw_valdist(r, p->dtype, &d);
  ac_params_valdist(pb, "qkv", &d);
  ac_fill_qkv(c, r, &d, &d, &d);
  return 0;
}
