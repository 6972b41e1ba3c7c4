/* values.c: drawing values by exponent band and value class (normal, subnormal,
 * near-overflow, ±0), rounded into the case dtype. */
#include "config.h"
#include <math.h>
#include "fuzz.h"

void ac_valdist_normal(ac_valdist *v, double scale)
{
  *v = (ac_valdist){.kind = AC_VAL_NORMAL, .scale = scale, .emin = -2, .emax = 1, .imax = 3};
}

static double subnormal(ac_rng *r, ac_dtype t)
{
  const ac_dtype_info *d = ac_dtype_get(t);
  double tiny = ldexp(1.0, d->ieee_emin - d->prec + 1);
  uint64_t kmax = (uint64_t)1 << (d->prec - 1);
  return tiny * (double)(1 + ac_rng_below(r, kmax - 1));
}

double ac_draw_value(ac_rng *r, ac_dtype t, const ac_valdist *v)
{
  const ac_dtype_info *d = ac_dtype_get(t);
  double sign = (v->positive || ac_rng_below(r, 2)) ? 1.0 : -1.0;
  double x;
  double u = ac_rng_uniform(r);
  if (u < v->p_zero) {
    x = sign * 0.0;
  } else if (u < v->p_zero + v->p_sub) {
    x = sign * subnormal(r, t);
  } else if (u < v->p_zero + v->p_sub + v->p_big) {
    x = sign * d->max_finite * (0.5 + 0.5 * ac_rng_uniform(r));
  } else {
    switch (v->kind) {
    case AC_VAL_NORMAL: x = v->scale * ac_rng_normal(r); if (v->positive) x = fabs(x); break;
    case AC_VAL_UNIFORM: x = v->scale * (v->positive ? ac_rng_uniform(r) : 2.0 * ac_rng_uniform(r) - 1.0); break;
    case AC_VAL_BAND: {
      int e = (int)ac_rng_range(r, v->emin, v->emax);
      x = sign * v->scale * ldexp(1.0 + ac_rng_uniform(r), e);
      break;
    }
    case AC_VAL_INT: x = v->scale * (double)ac_rng_range(r, v->positive ? 0 : -v->imax, v->imax); break;
    default: x = v->scale; break;
    }
  }
  if (x > d->max_finite) x = d->max_finite;
  if (x < -d->max_finite) x = -d->max_finite;
  return ac_decode(t, ac_encode_f64(t, x));
}

void ac_fill(ac_rng *r, ac_dtype t, void *base, size_t n, const ac_valdist *v)
{
  for (size_t i = 0; i < n; i++) ac_set(t, base, i, ac_draw_value(r, t, v));
}

void ac_params_valdist(ac_params *pb, const char *prefix, const ac_valdist *v)
{
  static const char *kinds[] = {"normal", "uniform", "band", "int", "const"};
  char k[64];
  snprintf(k, sizeof k, "%s_kind", prefix);
  ac_params_str(pb, k, kinds[v->kind]);
  snprintf(k, sizeof k, "%s_scale", prefix);
  ac_params_dbl(pb, k, v->scale);
  if (v->kind == AC_VAL_BAND) {
    snprintf(k, sizeof k, "%s_emin", prefix);
    ac_params_int(pb, k, v->emin);
    snprintf(k, sizeof k, "%s_emax", prefix);
    ac_params_int(pb, k, v->emax);
  }
  if (v->kind == AC_VAL_INT) {
    snprintf(k, sizeof k, "%s_imax", prefix);
    ac_params_int(pb, k, v->imax);
  }
  if (v->p_zero > 0 || v->p_sub > 0 || v->p_big > 0) {
    snprintf(k, sizeof k, "%s_p_zero", prefix);
    ac_params_dbl(pb, k, v->p_zero);
    snprintf(k, sizeof k, "%s_p_sub", prefix);
    ac_params_dbl(pb, k, v->p_sub);
    snprintf(k, sizeof k, "%s_p_big", prefix);
    ac_params_dbl(pb, k, v->p_big);
  }
}

void ac_draw_valdist(ac_rng *r, ac_dtype t, ac_valdist *v)
{
  ac_valdist_normal(v, 1.0);
  switch (ac_rng_below(r, 5)) {
  case 0: v->kind = AC_VAL_NORMAL; v->scale = ldexp(1.0, (int)ac_rng_range(r, -3, 2)); break;
  case 1: v->kind = AC_VAL_UNIFORM; v->scale = ldexp(1.0, (int)ac_rng_range(r, -2, 3)); break;
  case 2: v->kind = AC_VAL_BAND; v->scale = 1.0; v->emin = (int)ac_rng_range(r, -12, -1); v->emax = (int)ac_rng_range(r, -1, 3); break;
  case 3: v->kind = AC_VAL_INT; v->scale = 1.0; v->imax = (int)ac_rng_range(r, 1, 4); break;
  default: v->kind = AC_VAL_NORMAL; v->scale = 1.0; break;
  }
  if (ac_rng_below(r, 4) == 0) v->p_zero = 0.05;
  if (ac_rng_below(r, 6) == 0) v->p_sub = 0.02;
  (void)t;
}
