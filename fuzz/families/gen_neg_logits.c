/* gen_neg_logits.c: family "neg_logits": every visible logit very negative (beyond -5e4 often),
 * so a running max initialised to a finite sentinel never moves. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include "fuzz.h"

AC_FAMILY_DECL(neg_logits)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  if (ac_gen_alloc(c, e)) return -1;
  ac_dtype t = p->dtype;
  double e2 = 6.0 + ac_rng_uniform(r) * (t == AC_F16 || t == AC_E4M3 || t == AC_E5M2 ? 9.5 : 24.0);
  double S = exp2(e2);   /* target: scores around -S */
  double spread = ldexp(1.0, (int)ac_rng_range(r, -2, 4));
  ac_params_dbl(pb, "target_score", -S);
  ac_params_dbl(pb, "spread", spread);
  double sc = fabs(ac_problem_scale(p));
  if (sc == 0) sc = 1;
  double dk = (double)p->dk;
  /* q = a u, k_j = -(b + delta_j) u with u = +-1 entries: s = -sc a (b + delta) dk */
  double a = sqrt(S / (sc * dk));
  double *u = ac_xmalloc(sizeof(double) * (size_t)p->dk);
  for (int64_t x = 0; x < p->dk; x++) u[x] = ac_rng_below(r, 2) ? 1.0 : -1.0;
  ac_counts n = ac_case_counts(c);
  for (size_t i = 0; i < (size_t)n.q; i++) ac_set(t, c->q, i, a * u[i % (size_t)p->dk]);
  double flip = ac_problem_scale(p) < 0 ? -1.0 : 1.0;
  for (size_t j = 0; j < (size_t)(n.k / p->dk); j++) {
    double delta = spread * ac_rng_uniform(r) / (sc * a * dk);
    for (int64_t x = 0; x < p->dk; x++)
      ac_set(t, c->k, j * (size_t)p->dk + (size_t)x, -flip * (a + delta) * u[x]);
  }
  free(u);
  ac_valdist v;
  ac_valdist_normal(&v, 1.0);
  ac_fill_qkv(c, r, NULL, NULL, &v);
  return 0;
}
