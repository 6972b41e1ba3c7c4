/* gen_large_mag.c: family "large_mag": logits up to the overflow edge of the dtype.
 * Modes: random (scores ~ +-S), spread (one direction, scores spread over [-S, S]),
 * near (|q||k| huge but score differences small: the G term and fp16 score overflow).
 * The raw product q.k stays below binary32's range so that a correct fp32 kernel can hold it. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include "fuzz.h"

AC_FAMILY_DECL(large_mag)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  if (ac_gen_alloc(c, e)) return -1;
  ac_dtype t = p->dtype;
  /* log2 of the target score magnitude */
  int emax;
  switch (t) {
  case AC_F16: emax = 17; break;                     /* raw q.k past 65504 */
  case AC_E4M3: case AC_E5M2: emax = 14; break;
  case AC_F64: emax = ac_rng_below(r, 4) ? 24 : 200; break;
  default: emax = ac_rng_below(r, 4) ? 24 : 110; break;
  }
  double e2 = 3.0 + ac_rng_uniform(r) * (emax - 3.0);
  double S = exp2(e2);
  int mode = (int)ac_rng_below(r, 3);
  ac_params_dbl(pb, "target_score", S);
  ac_params_int(pb, "mode", mode);
  double sc = fabs(ac_problem_scale(p));
  double sd = sqrt((double)p->dk);
  ac_counts n = ac_case_counts(c);
  const ac_dtype_info *di = ac_dtype_get(t);
  if (mode == 0) {
    /* each entry a: |z| ~ a^2 sqrt(dk), score ~ sc a^2 sqrt(dk) */
    double a = sqrt(S / (sc * sd));
    if (a > di->max_finite / 4) a = di->max_finite / 4;
    ac_valdist d;
    ac_valdist_normal(&d, a);
    ac_fill_qkv(c, r, &d, &d, NULL);
  } else {
    /* q_i = a u + noise, k_j = alpha_j a u (+ small noise): s_ij ~ sc a^2 |u|^2 alpha_j */
    double a = sqrt(S / (sc * (double)p->dk));
    if (a > di->max_finite / 4) a = di->max_finite / 4;
    double noise = mode == 1 ? 0.1 : ldexp(1.0, -(int)ac_rng_range(r, 4, 12));
    double *u = ac_xmalloc(sizeof(double) * (size_t)p->dk);
    for (int64_t x = 0; x < p->dk; x++) u[x] = ac_rng_below(r, 2) ? 1.0 : -1.0;
    for (size_t i = 0; i < (size_t)n.q; i++)
      ac_set(t, c->q, i, a * (u[i % (size_t)p->dk] + 0.05 * ac_rng_normal(r)));
    for (size_t j = 0; j < (size_t)(n.k / p->dk); j++) {
      double alpha = mode == 1 ? 2.0 * ac_rng_uniform(r) - 1.0 : 1.0 - 0.01 * ac_rng_uniform(r);
      for (int64_t x = 0; x < p->dk; x++)
        ac_set(t, c->k, j * (size_t)p->dk + (size_t)x, a * (alpha * u[x] + noise * ac_rng_normal(r)));
    }
    free(u);
  }
  ac_valdist v;
  ac_valdist_normal(&v, 1.0);
  ac_fill_qkv(c, r, NULL, NULL, &v);
  return 0;
}
