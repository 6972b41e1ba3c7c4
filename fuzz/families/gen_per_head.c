/* gen_per_head.c: family "per_head": batch 2-4 and heads 2-4, every (batch, head) slice with
 * its own distribution, so that a head or batch mix-up changes the output. */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(per_head)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  p->batch = ac_rng_range(r, 2, 4);
  if (p->heads < 2) { p->heads = ac_rng_range(r, 2, 4); p->kv_heads = ac_rng_below(r, 2) ? p->heads : 1; }
  if (p->tq > 96) p->tq = 96;
  if (p->tk > 96) p->tk = 96;
  ac_clamp_shape(p, l);
  if (ac_gen_alloc(c, e)) return -1;
  ac_dtype t = p->dtype;
  for (int64_t b = 0; b < p->batch; b++) {
    for (int64_t h = 0; h < p->heads; h++) {
      ac_valdist d;
      ac_draw_valdist(r, t, &d);
      for (int64_t i = 0; i < p->tq; i++)
        for (int64_t x = 0; x < p->dk; x++) ac_set(t, c->q, ac_qidx(p, b, h, i, x), ac_draw_value(r, t, &d));
    }
    for (int64_t kh = 0; kh < p->kv_heads; kh++) {
      ac_valdist d;
      ac_draw_valdist(r, t, &d);
      double off = (double)(b * p->kv_heads + kh) - 2.0;
      for (int64_t j = 0; j < p->tk; j++) {
        for (int64_t x = 0; x < p->dk; x++) ac_set(t, c->k, ac_kidx(p, b, kh, j, x), ac_draw_value(r, t, &d));
        for (int64_t x = 0; x < p->dv; x++) ac_set(t, c->v, ac_vidx(p, b, kh, j, x), off + ac_draw_value(r, t, &d));
      }
    }
  }
  ac_params_str(pb, "slices", "distinct");
  return 0;
}
