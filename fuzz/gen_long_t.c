/* gen_long_t.c: family "long_t": long key sequences up to the campaign's max T: mostly few
 * queries (decode), sometimes tq = tk (prefill; the oracle then checks a row sample).
 * Values: normal, tied, or peaked, so accumulator range and P rounding over long T show. */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(long_t)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  p->batch = 1;
  p->heads = p->kv_heads = 1;
  if (ac_rng_below(r, 3) == 0) { p->kv_heads = 1; p->heads = 2; }
  int64_t lo = 1024 < l->max_t ? 1024 : l->max_t;
  double lt = log((double)lo) + ac_rng_uniform(r) * (log((double)l->max_t) - log((double)lo));
  p->tk = (int64_t)exp(lt);
  if (ac_rng_below(r, 2)) p->tk += ac_rng_range(r, -1, 1);
  if (p->tk < 1) p->tk = 1;
  if (p->tk > l->max_t) p->tk = l->max_t;
  /* prefill (tq = tk) costs the kernel tk^2 d: kept to 4096 so a CPU kernel answers well
   * inside the time limit; decode-like rows take the full length */
  int prefill = ac_rng_below(r, 4) == 0;
  if (prefill && p->tk > 4096) p->tk = 4096;
  p->tq = prefill ? p->tk : ac_rng_range(r, 1, 8);
  if (!prefill && p->mask == AC_MASK_CAUSAL) p->mask = AC_MASK_CAUSAL_BR;
  if (l->masks && !(l->masks & (1u << p->mask))) p->mask = ac_draw_mask(r, l);
  if (p->dk > 128) p->dk = 128;
  if (p->dv > 128) p->dv = 128;
  p->scale = 1.0 / sqrt((double)p->dk);
  ac_clamp_shape(p, l);
  if (ac_gen_alloc(c, e)) return -1;
  ac_dtype t = p->dtype;
  int kind = (int)ac_rng_below(r, 3);   /* 0 normal, 1 ties, 2 large V */
  ac_params_int(pb, "kind", kind);
  ac_params_int(pb, "prefill", prefill);
  ac_valdist d;
  ac_valdist_normal(&d, 1.0);
  ac_fill_qkv(c, r, &d, &d, &d);
  ac_counts n = ac_case_counts(c);
  if (kind == 1) {
    /* half the keys copy key 0 */
    for (int64_t j = 1; j < p->tk; j++)
      if (ac_rng_below(r, 2))
        for (int64_t kh = 0; kh < p->kv_heads; kh++)
          for (int64_t x = 0; x < p->dk; x++)
            ac_set(t, c->k, ac_kidx(p, 0, kh, j, x), ac_get(t, c->k, ac_kidx(p, 0, kh, 0, x)));
  } else if (kind == 2) {
    double top = ac_dtype_get(t)->max_finite;
    if (t == AC_F32 || t == AC_BF16 || t == AC_F64) top = top / (4.0 * (double)p->tk);
    else top *= 0.9;
    for (size_t i = 0; i < (size_t)n.v; i++) ac_set(t, c->v, i, top * (0.5 + 0.5 * ac_rng_uniform(r)));
  }
  return 0;
}
