/* gen_v_cancel.c: family "v_cancel": keys come in tied pairs whose V rows are opposite
 * (optionally perturbed by a relative eps): o ~ 0 while R is large. */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(v_cancel)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  if (p->tk < 2) p->tk = 2;
  if (p->tk % 2) p->tk++;
  if (ac_rng_below(r, 2)) p->mask = AC_MASK_NONE;
  if (l->masks && !(l->masks & (1u << p->mask))) p->mask = ac_draw_mask(r, l);
  ac_clamp_shape(p, l);
  if (p->tk % 2) p->tk++;
  if (ac_gen_alloc(c, e)) return -1;
  ac_dtype t = p->dtype;
  double mag = ldexp(1.0, (int)ac_rng_range(r, 0, t == AC_F16 ? 10 : 16));
  double eps = ac_rng_below(r, 3) == 0 ? 0.0 : ldexp(1.0, -(int)ac_rng_range(r, 3, 20));
  int adjacent = (int)ac_rng_below(r, 2);   /* pairs (j, j+1) or (j, j + tk/2) */
  ac_params_dbl(pb, "v_mag", mag);
  ac_params_dbl(pb, "eps", eps);
  ac_params_int(pb, "adjacent", adjacent);
  ac_valdist d;
  ac_valdist_normal(&d, 1.0);
  ac_fill_qkv(c, r, &d, NULL, NULL);
  int64_t half = p->tk / 2;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t m = 0; m < half; m++) {
        int64_t j0 = adjacent ? 2 * m : m, j1 = adjacent ? 2 * m + 1 : m + half;
        for (int64_t x = 0; x < p->dk; x++) {
          double kv = ac_draw_value(r, t, &d);
          ac_set(t, c->k, ac_kidx(p, b, kh, j0, x), kv);
          ac_set(t, c->k, ac_kidx(p, b, kh, j1, x), kv);
        }
        for (int64_t x = 0; x < p->dv; x++) {
          double vv = mag * ac_rng_normal(r);
          ac_set(t, c->v, ac_vidx(p, b, kh, j0, x), vv);
          ac_set(t, c->v, ac_vidx(p, b, kh, j1, x), -vv * (1.0 + eps * ac_rng_normal(r)));
        }
      }
  return 0;
}
