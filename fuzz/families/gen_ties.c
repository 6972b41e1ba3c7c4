/* gen_ties.c: family "ties": keys drawn from a few distinct rows (equal keys), with the
 * maximum repeated many times; long T in low precision makes P's rounding bias show. */
#include "config.h"
#include "fuzz.h"

AC_FAMILY_DECL(ties)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  int lowp = p->dtype == AC_F16 || p->dtype == AC_BF16 || p->dtype == AC_E4M3 || p->dtype == AC_E5M2;
  if (ac_rng_below(r, 3) == 0) {
    int64_t cap = l->max_t < 4096 ? l->max_t : 4096;
    p->tk = ac_draw_tile_len(r, cap) * (lowp ? 8 : 1);
    if (p->tk > cap) p->tk = cap;
    p->tq = ac_rng_range(r, 1, 8);
    if (p->mask == AC_MASK_CAUSAL) p->mask = AC_MASK_CAUSAL_BR;
    if (l->masks && !(l->masks & (1u << p->mask))) p->mask = ac_draw_mask(r, l);
  }
  ac_clamp_shape(p, l);
  if (ac_gen_alloc(c, e)) return -1;
  int distinct = (int)ac_rng_range(r, 1, 4);
  double pmax = ac_rng_uniform(r);   /* fraction of keys that copy the top key */
  ac_params_int(pb, "distinct_keys", distinct);
  ac_params_dbl(pb, "p_top", pmax);
  ac_valdist d;
  ac_draw_valdist(r, p->dtype, &d);
  ac_params_valdist(pb, "qv", &d);
  ac_fill_qkv(c, r, &d, NULL, &d);
  ac_valdist kd;
  ac_valdist_normal(&kd, 1.0);
  kd.kind = AC_VAL_INT;
  kd.imax = 2;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++) {
      double proto[4][512];
      int64_t dd = p->dk < 512 ? p->dk : 512;
      for (int g = 0; g < distinct; g++)
        for (int64_t x = 0; x < dd; x++) proto[g][x] = ac_draw_value(r, p->dtype, &kd);
      for (int64_t j = 0; j < p->tk; j++) {
        int g = ac_rng_uniform(r) < pmax ? 0 : (int)ac_rng_below(r, (uint64_t)distinct);
        for (int64_t x = 0; x < p->dk; x++)
          ac_set(p->dtype, c->k, ac_kidx(p, b, kh, j, x), proto[g][x % dd]);
      }
    }
  return 0;
}
