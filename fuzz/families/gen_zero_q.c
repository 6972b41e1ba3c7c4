/* gen_zero_q.c: family "zero_q": Q = 0 in every row or in some rows: every score 0,
 * output = mean of the visible V. */
#include "config.h"
#include "fuzz.h"

AC_FAMILY_DECL(zero_q)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  if (ac_gen_alloc(c, e)) return -1;
  ac_valdist d;
  ac_draw_valdist(r, p->dtype, &d);
  ac_params_valdist(pb, "kv", &d);
  ac_fill_qkv(c, r, NULL, &d, &d);
  int some = (int)ac_rng_below(r, 3) == 0;
  ac_params_int(pb, "some_rows", some);
  if (some) {
    ac_valdist n;
    ac_valdist_normal(&n, 1.0);
    for (int64_t b = 0; b < p->batch; b++)
      for (int64_t h = 0; h < p->heads; h++)
        for (int64_t i = 0; i < p->tq; i++) {
          int zero = ac_rng_below(r, 2) == 0;
          for (int64_t x = 0; x < p->dk; x++)
            ac_set(p->dtype, c->q, ac_qidx(p, b, h, i, x), zero ? 0.0 : ac_draw_value(r, p->dtype, &n));
        }
  }
  return 0;
}
