/* gen_late_max.c: family "late_max": scores increase along the keys (s_j ~ delta j), so the
 * running maximum moves in every tile, by whole logits or (creeping) by tiny steps; T beyond one tile. */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(late_max)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  int64_t cap = l->max_t < 1024 ? l->max_t : 1024;
  p->tk = ac_rng_below(r, 2) ? ac_draw_tile_len(r, cap) : ac_rng_range(r, 17, cap < 300 ? cap : 300);
  if (p->tk < 2) p->tk = 2 < cap ? 2 : cap;
  if (ac_rng_below(r, 2)) p->tq = p->tk;
  ac_clamp_shape(p, l);
  if (ac_gen_alloc(c, e)) return -1;
  ac_dtype t = p->dtype;
  double range = exp2(2.0 + 9.0 * ac_rng_uniform(r));  /* total rise along the row, in logits */
  /* one case in four creeps: the maximum grows by 2^-24 to 2^-6 logits per key, the steps a
   * kernel that skips small rescales (a threshold on the growth of the maximum) must still
   * account for */
  if (ac_rng_below(r, 4) == 0) range = exp2(-24.0 + 18.0 * ac_rng_uniform(r)) * (double)p->tk;
  if (t == AC_F16 && range > 5000) range = 5000;
  double delta = range / (double)p->tk;
  double noise = ac_rng_below(r, 2) ? 0.0 : 0.25 * delta;
  ac_params_dbl(pb, "rise", range);
  ac_params_dbl(pb, "noise", noise);
  double sc = fabs(ac_problem_scale(p));
  if (sc == 0) sc = 1;
  double flip = ac_problem_scale(p) < 0 ? -1.0 : 1.0;
  /* q = u, k_j = (delta j + noise) / (sc dk) u: s_j = delta j */
  ac_valdist v;
  ac_draw_valdist(r, t, &v);
  ac_params_valdist(pb, "v", &v);
  ac_fill_qkv(c, r, NULL, NULL, &v);
  double off = -range / 2;
  for (int64_t b = 0; b < p->batch; b++) {
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++)
        for (int64_t x = 0; x < p->dk; x++) ac_set(t, c->q, ac_qidx(p, b, h, i, x), 1.0);
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = 0; j < p->tk; j++) {
        double sj = off + delta * (double)j + noise * ac_rng_normal(r);
        for (int64_t x = 0; x < p->dk; x++)
          ac_set(t, c->k, ac_kidx(p, b, kh, j, x), flip * sj / (sc * (double)p->dk));
      }
  }
  return 0;
}
