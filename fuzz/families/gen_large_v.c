/* gen_large_v.c: family "large_v": V toward the dtype's range, with near-uniform weights
 * (Q small) or peaked weights (one key dominant). For dtypes whose range equals binary32's
 * (f32, bf16) V stays below max/(4T) so that a correct fp32 accumulator of unnormalized
 * weights cannot overflow; fp16/fp8 V goes right to the top of its range. */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(large_v)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  if (ac_rng_below(r, 2)) p->tk = ac_draw_tile_len(r, 1024 < l->max_t ? 1024 : l->max_t);
  if (p->mask != AC_MASK_NONE && ac_rng_below(r, 2)) p->tq = p->tk;
  ac_clamp_shape(p, l);
  if (ac_gen_alloc(c, e)) return -1;
  ac_dtype t = p->dtype;
  const ac_dtype_info *di = ac_dtype_get(t);
  double top = di->max_finite;
  if (t == AC_F32 || t == AC_BF16 || t == AC_F64) top = top / (4.0 * (double)p->tk);
  double frac = 0.25 + 0.75 * ac_rng_uniform(r);
  int peaked = (int)ac_rng_below(r, 2);
  int positive = (int)ac_rng_below(r, 2);
  ac_params_dbl(pb, "v_top", top * frac);
  ac_params_int(pb, "peaked", peaked);
  ac_params_int(pb, "positive", positive);
  ac_valdist v;
  ac_valdist_normal(&v, 1.0);
  v.kind = AC_VAL_UNIFORM;
  v.scale = top * frac;
  v.positive = positive;
  ac_valdist q;
  ac_valdist_normal(&q, peaked ? 2.0 : 0.05);
  ac_fill_qkv(c, r, &q, &q, &v);
  if (peaked) {
    /* make key j* match every query row's direction */
    ac_counts n = ac_case_counts(c);
    int64_t js = (int64_t)ac_rng_below(r, (uint64_t)p->tk);
    ac_params_int(pb, "peak_key", js);
    for (int64_t b = 0; b < p->batch; b++)
      for (int64_t kh = 0; kh < p->kv_heads; kh++)
        for (int64_t x = 0; x < p->dk; x++) {
          double s = 0;
          for (int64_t h = kh * (p->heads / p->kv_heads); h < (kh + 1) * (p->heads / p->kv_heads); h++)   /* kv head kh's */
            for (int64_t i = 0; i < p->tq; i++) s += ac_get(t, c->q, ac_qidx(p, b, h, i, x));
          ac_set(t, c->k, ac_kidx(p, b, kh, js, x), s > 0 ? 4.0 : -4.0);
        }
    (void)n;
  }
  return 0;
}
