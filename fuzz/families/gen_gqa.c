/* gen_gqa.c: family "gqa": heads = ratio * kv_heads (2, 4, 8; MQA with kv_heads = 1), each kv
 * head with its own scale and offset so that reading the wrong one shows. */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(gqa)
{
  static const int64_t ratios[] = {2, 3, 4, 8};
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  p->kv_heads = ac_rng_range(r, 1, 4);
  p->heads = p->kv_heads * ratios[ac_rng_below(r, 4)];
  if (p->tq > 128) p->tq = 128;
  if (p->tk > 256) p->tk = 256;
  ac_clamp_shape(p, l);
  if (ac_gen_alloc(c, e)) return -1;
  ac_dtype t = p->dtype;
  ac_valdist d;
  ac_valdist_normal(&d, 1.0);
  ac_fill_qkv(c, r, &d, NULL, NULL);
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++) {
      double ks = ldexp(1.0, (int)ac_rng_range(r, -1, 1));
      double vo = (double)(kh + 1) * ldexp(1.0, (int)ac_rng_range(r, 0, 3)) * (ac_rng_below(r, 2) ? 1 : -1);
      for (int64_t j = 0; j < p->tk; j++) {
        for (int64_t x = 0; x < p->dk; x++) ac_set(t, c->k, ac_kidx(p, b, kh, j, x), ks * ac_rng_normal(r));
        for (int64_t x = 0; x < p->dv; x++) ac_set(t, c->v, ac_vidx(p, b, kh, j, x), vo + ac_rng_normal(r));
      }
    }
  ac_params_int(pb, "ratio", p->heads / p->kv_heads);
  return 0;
}
