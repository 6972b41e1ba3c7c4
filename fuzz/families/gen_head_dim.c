/* gen_head_dim.c: family "head_dim": odd and large head dims (1, 3, 59, 111, 256, 512 ...),
 * dv != dk half the time. */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(head_dim)
{
  static const int64_t dims[] = {1, 2, 3, 5, 7, 9, 15, 17, 31, 33, 40, 59, 63, 65, 72, 80, 96, 111, 127, 129, 160, 192, 255, 256, 257, 512};
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  p->dk = dims[ac_rng_below(r, sizeof dims / sizeof dims[0])];
  p->dv = ac_rng_below(r, 2) ? dims[ac_rng_below(r, sizeof dims / sizeof dims[0])] : p->dk;
  if (p->dk >= 256 || p->dv >= 256) {
    if (p->tq > 128) p->tq = 128;
    if (p->tk > 128) p->tk = 128;
  }
  p->scale = 1.0 / sqrt((double)p->dk);
  ac_clamp_shape(p, l);
  if (ac_gen_alloc(c, e)) return -1;
  ac_valdist d;
  ac_draw_valdist(r, p->dtype, &d);
  ac_params_valdist(pb, "qkv", &d);
  ac_fill_qkv(c, r, &d, &d, &d);
  return 0;
}
