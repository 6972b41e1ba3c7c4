/* gen_softcap.c: family "softcap": s = c tanh(s / c) with caps from 0.5 to 50 (Gemma 2 uses 50)
 * and raw scores from below the cap to far past saturation, where capped scores tie at +-c:
 * the cap applied after the max (or not at all), tanh approximations that overflow or lose
 * the sign, a cap applied before the scale, ties among saturated scores. */
#include "config.h"
#include <math.h>
#include "fuzz.h"
#include "vgen.h"

AC_FAMILY_DECL(softcap)
{
  static const double caps[] = {0.5, 1, 5, 20, 30, 50};
  static const double past[] = {0.3, 3, 30, 300, 3000};
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  ac_clamp_shape(p, l);
  ac_vspec v = {0};
  v.used = AC_FEAT_SOFTCAP;
  v.softcap = ac_rng_below(r, 2) ? caps[ac_rng_below(r, 6)] : exp(log(0.5) + ac_rng_uniform(r) * log(100.0));
  if (ac_gen_alloc(c, e)) return -1;
  if (ac_rng_below(r, 4) == 0) {
    if (ac_vfam_values(c, r, pb, e)) return -1;
  } else {
    /* typical |s| = cap * k: scores from the tanh's linear part to its saturation */
    double k = past[ac_rng_below(r, 5)], sd = sqrt(v.softcap * k);
    double top = 0.25 * ac_dtype_get(p->dtype)->max_finite;
    ac_valdist d;
    ac_draw_valdist(r, p->dtype, &d);
    d.scale = sd < top ? sd : top;
    if (d.kind == AC_VAL_BAND || d.kind == AC_VAL_INT) ac_valdist_normal(&d, d.scale);
    ac_valdist dv;
    ac_draw_valdist(r, p->dtype, &dv);
    ac_params_dbl(pb, "past_saturation", k);
    ac_params_valdist(pb, "qk", &d);
    ac_params_valdist(pb, "v", &dv);
    ac_fill_qkv(c, r, &d, &d, &dv);
  }
  return ac_vfam_apply(c, r, &v, pb, e);
}
