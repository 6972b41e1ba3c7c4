/* naive_baseline.h: the pinned baseline of the oracle benches (bench/oracle, bench/oracle_fast):
 * one query row of an fp32 case in binary64, three passes (max, libm exp, weighted sum), default
 * scale. Compiled with the bench at -O2, one thread. */
#ifndef AC_BENCH_NAIVE_BASELINE_H
#define AC_BENCH_NAIVE_BASELINE_H
#include <math.h>
#include "casefile.h"

/* The pinned baseline: binary64, three passes, libm exp. */
static inline void naive_f64_row(const ac_case *c, int64_t i, double *s, double *o)
{
  const ac_problem *p = &c->p;
  const float *q = c->q, *k = c->k, *v = c->v;
  int64_t n = ac_visible_count(p, i), dk = p->dk, dv = p->dv;
  double scale = 1.0 / sqrt((double)dk), m = -INFINITY, L = 0;
  for (int64_t j = 0; j < n; j++) {
    double z = 0;
    for (int64_t t = 0; t < dk; t++) z += (double)q[i * dk + t] * (double)k[j * dk + t];
    s[j] = z * scale;
    if (s[j] > m) m = s[j];
  }
  for (int64_t j = 0; j < n; j++) {
    s[j] = exp(s[j] - m);
    L += s[j];
  }
  for (int64_t t = 0; t < dv; t++) o[t] = 0;
  for (int64_t j = 0; j < n; j++)
    for (int64_t t = 0; t < dv; t++) o[t] += s[j] * (double)v[j * dv + t];
  for (int64_t t = 0; t < dv; t++) o[t] /= L;
}

#endif
