/* gen_normal.c: family "normal": Q, K, V ~ N(0,1) on a default shape. */
#include "config.h"
#include "fuzz.h"

AC_FAMILY_DECL(normal)
{
  (void)pb;
  ac_draw_shape(r, l, &c->p);
  if (ac_gen_alloc(c, e)) return -1;
  ac_valdist v;
  ac_valdist_normal(&v, 1.0);
  ac_fill_qkv(c, r, &v, &v, &v);
  return 0;
}
