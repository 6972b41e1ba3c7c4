/* gen_dominant.c: family "dominant": one key per (batch, kv head) aligned with every query
 * row, so each row is peaked on it by a gap of 5-100 logits; position first, last,
 * tile edge or random. */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(dominant)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  if (ac_gen_alloc(c, e)) return -1;
  ac_dtype t = p->dtype;
  double gap = 5.0 + 95.0 * ac_rng_uniform(r) * ac_rng_uniform(r);
  int pos = (int)ac_rng_below(r, 4);
  int64_t js;
  switch (pos) {
  case 0: js = 0; break;
  case 1: js = p->tk - 1; break;
  case 2: js = (p->tk > 16) ? 16 * (int64_t)ac_rng_below(r, (uint64_t)(p->tk / 16)) + (ac_rng_below(r, 2) ? 15 : 0) : p->tk / 2; break;
  default: js = (int64_t)ac_rng_below(r, (uint64_t)p->tk); break;
  }
  if (js >= p->tk) js = p->tk - 1;
  ac_params_dbl(pb, "gap", gap);
  ac_params_int(pb, "key", js);
  /* q rows = a u + small noise; k_j* = b u; other keys small noise: s* ~ sc a b dk = gap */
  double sc = fabs(ac_problem_scale(p));
  if (sc == 0) sc = 1;
  double a = 1.0;
  double bb = gap / (sc * a * (double)p->dk);
  double flip = ac_problem_scale(p) < 0 ? -1.0 : 1.0;
  ac_valdist n, v;
  ac_valdist_normal(&n, 0.05);
  ac_draw_valdist(r, t, &v);
  ac_params_valdist(pb, "v", &v);
  ac_fill_qkv(c, r, NULL, &n, &v);
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++) {
      for (int64_t x = 0; x < p->dk; x++) {
        double u = ((x * 7 + b + kh) % 3 == 0) ? -1.0 : 1.0;
        ac_set(t, c->k, ac_kidx(p, b, kh, js, x), flip * bb * u);
        for (int64_t h = kh * (p->heads / p->kv_heads); h < (kh + 1) * (p->heads / p->kv_heads); h++)   /* kv head kh's */
          for (int64_t i = 0; i < p->tq; i++)
            ac_set(t, c->q, ac_qidx(p, b, h, i, x), a * u + 0.01 * ac_rng_normal(r));
      }
    }
  return 0;
}
