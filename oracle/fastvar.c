/* fastvar.c: the binary64 pass (fast.c) on variant rows whose scores are not plain c z: LIN
 * (s = c z + a, c irrational), FOLD under a scale that does not fold (a stored 0.3: s = c z + a
 * as LIN) and CAP (s = cap tanh(c z / cap) + a), docs/numerics.md §11.2.
 *
 * Each group's score s_g is computed in binary64 with a proven absolute bound err_g, and
 * t_g = fl(s_g - s_top) with te_g = 1.01 (err_g + err_top + u |t_g|) >= |t_g - t*_g|; fast.c
 * then bounds the weights by 1.01 (eps_e + te_g) E_g in place of 1.01 (eps_e + eps_t |t_g|) E_g
 * (the same proof with an absolute error of t; e^a - 1 <= 1.01 a for a <= 2^-20).
 *   y = fl(c_d fl(z)): |y - c z| <= eps_t |y| (fast.c's header, eps_t of the scale);
 *   LIN: s = fl(y + a_d), a_d = RN(a): err = eps_t |y| + u |a_d| + u |s| (times 1.01);
 *   CAP: x = fl(y / cap), |x - x*| <= ex = 1.01 (eps_t |x| + u |x|); |x| >= 20 (and ex <= |x| / 100):
 *        tanh x = ±1 within 2 e^{-2 |x*|} < 2^-56; else E = ac_fx_exp(-2|x|) within 2^-50 E,
 *        th = fl((1 - E) / (1 + E)) within 2^-48.9 of tanh|x| (the four roundings and E's error
 *        over a denominator >= 1), plus ex (tanh' <= 1); s = fl(fl(cap th) + a_d) with
 *        err = 1.01 (cap eth + u |cap th| + u |a_d| + u |s|);
 *   a fixed key (the sink, a raw ±inf under a softcap) or c = 0: s = a_d, err = 1.01 u |a_d|.
 * A row where some group has te_g > 2^-20 (and is not far below the top: t_g <= -701 with
 * te_g <= 1 still makes a key tiny) or a non-finite s takes the MPFR levels whole. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include "fast.h"
#include "varint.h"

#define U 0x1p-53

int ac_or_var_plain(const ac_or_ws *w) { return !w->var || w->var->plain; }

static double var_s(const ac_or_ws *w, int64_t j, double cd, double eps_t, double *err)
{
  const ac_or_var *v = w->var;
  double a = mpfr_get_d(v->a[j], MPFR_RNDN), y = 0, ey = 0;
  if (!v->fix[j] && w->sc.sign != 0) {
    const uint64_t *z = ac_or_z(w, j);
    double zd = w->nl == 2 ? ldexp((double)(ac_i128)(((ac_u128)z[1] << 64) | z[0]), w->zlsb)
                           : (double)ac_or_fx_to_ld(z, w->nl, w->zlsb);
    y = cd * zd;
    ey = eps_t * fabs(y);
  }
  if (v->mode == AC_VAR_CAP && y != 0) {   /* (LIN and unfolded FOLD: s = c z + a) */
    double x = y / v->cap, ax = fabs(x), ex = 1.01 * (eps_t + U) * ax, th, eth;
    if (ax >= 20 && ex <= ax / 100) {
      th = 1;
      eth = 0x1p-56;
    } else if (ax < 20) {
      double E = ac_fx_exp(-2 * ax);
      th = (1 - E) / (1 + E);
      eth = 0x1p-48 + ex;
    } else {
      *err = INFINITY;
      return 0;
    }
    y = v->cap * (x < 0 ? -th : th);
    ey = v->cap * eth + U * fabs(y);
  }
  double s = y + a;
  *err = 1.01 * (ey + U * fabs(a) + U * fabs(s));
  return s;
}

int ac_or_fast_var_t(const ac_or_ws *w, double cd, double eps_t, double *t, double *te)
{
  double etop, stop = var_s(w, w->ord[0], cd, eps_t, &etop);
  if (!isfinite(stop) || !isfinite(etop)) return 1;
  t[0] = 0;
  te[0] = 0;   /* w_0 = e^0 = 1 exactly */
  for (int64_t g = 1; g < w->ng; g++) {
    double e, s = var_s(w, w->ord[w->gst[g]], cd, eps_t, &e);
    double d = s - stop;
    double b = 1.01 * (e + etop + U * fabs(d));
    if (!isfinite(d) || !(b <= 0x1p-20 || (d <= -701 && b <= 1))) return 1;
    t[g] = d > 0 ? 0 : d;   /* t* <= 0: clamping moves t towards it */
    te[g] = b;
  }
  return 0;
}
