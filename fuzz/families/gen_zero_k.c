/* gen_zero_k.c: family "zero_k": K = 0 for every key or for a random subset of keys. */
#include "config.h"
#include "fuzz.h"

AC_FAMILY_DECL(zero_k)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  if (ac_gen_alloc(c, e)) return -1;
  ac_valdist d;
  ac_draw_valdist(r, p->dtype, &d);
  ac_params_valdist(pb, "qv", &d);
  ac_fill_qkv(c, r, &d, NULL, &d);
  double keep = ac_rng_below(r, 2) ? 0.0 : ac_rng_uniform(r);
  ac_params_dbl(pb, "nonzero_fraction", keep);
  ac_valdist n;
  ac_valdist_normal(&n, 1.0);
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = 0; j < p->tk; j++) {
        int nz = ac_rng_uniform(r) < keep;
        for (int64_t x = 0; x < p->dk; x++)
          ac_set(p->dtype, c->k, ac_kidx(p, b, kh, j, x), nz ? ac_draw_value(r, p->dtype, &n) : 0.0);
      }
  return 0;
}
