/* gen_outlier.c: family "outlier": massive activations: a few channels of Q and K, or a few
 * tokens (attention-sink keys, heavy query rows), scaled by 2^4..2^10. */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(outlier)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  if (ac_gen_alloc(c, e)) return -1;
  ac_dtype t = p->dtype;
  ac_valdist d;
  ac_valdist_normal(&d, 1.0);
  ac_fill_qkv(c, r, &d, &d, &d);
  int mode = (int)ac_rng_below(r, 3);            /* 0 channels, 1 key tokens, 2 query rows + V rows */
  double f = ldexp(1.0, (int)ac_rng_range(r, 4, t == AC_F16 || t == AC_E4M3 || t == AC_E5M2 ? 6 : 10));
  int64_t nsel = ac_rng_range(r, 1, 3);
  ac_params_int(pb, "mode", mode);
  ac_params_dbl(pb, "factor", f);
  for (int64_t s = 0; s < nsel; s++) {
    if (mode == 0) {
      int64_t ch = (int64_t)ac_rng_below(r, (uint64_t)p->dk);
      for (int64_t b = 0; b < p->batch; b++) {
        for (int64_t h = 0; h < p->heads; h++)
          for (int64_t i = 0; i < p->tq; i++) {
            size_t k = ac_qidx(p, b, h, i, ch);
            ac_set(t, c->q, k, ac_get(t, c->q, k) * f);
          }
        for (int64_t kh = 0; kh < p->kv_heads; kh++)
          for (int64_t j = 0; j < p->tk; j++) {
            size_t k = ac_kidx(p, b, kh, j, ch);
            ac_set(t, c->k, k, fabs(ac_get(t, c->k, k)) * f / 4);
          }
      }
    } else if (mode == 1) {
      int64_t j = ac_rng_below(r, 2) ? 0 : (int64_t)ac_rng_below(r, (uint64_t)p->tk);
      for (int64_t b = 0; b < p->batch; b++)
        for (int64_t kh = 0; kh < p->kv_heads; kh++) {
          for (int64_t x = 0; x < p->dk; x++) {
            size_t k = ac_kidx(p, b, kh, j, x);
            ac_set(t, c->k, k, ac_get(t, c->k, k) * f);
          }
          for (int64_t x = 0; x < p->dv; x++) {
            size_t k = ac_vidx(p, b, kh, j, x);
            ac_set(t, c->v, k, ac_get(t, c->v, k) * f);
          }
        }
    } else {
      int64_t i = (int64_t)ac_rng_below(r, (uint64_t)p->tq);
      int64_t j = (int64_t)ac_rng_below(r, (uint64_t)p->tk);
      for (int64_t b = 0; b < p->batch; b++) {
        for (int64_t h = 0; h < p->heads; h++)
          for (int64_t x = 0; x < p->dk; x++) {
            size_t k = ac_qidx(p, b, h, i, x);
            ac_set(t, c->q, k, ac_get(t, c->q, k) * f);
          }
        for (int64_t kh = 0; kh < p->kv_heads; kh++)
          for (int64_t x = 0; x < p->dv; x++) {
            size_t k = ac_vidx(p, b, kh, j, x);
            ac_set(t, c->v, k, ac_get(t, c->v, k) * f * f);
          }
      }
    }
  }
  return 0;
}
