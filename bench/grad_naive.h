/* grad_naive.h: the pinned baseline of the backward benches (bench/grad_fast, bench/oracle_fast
 * grad) and their measurement line: an fp32 case (B = H = 1, dO normal(0,1)), a naive binary64
 * backward on a sample of R query rows (dQ) and C key columns (dK, dV) spread evenly, and the
 * exact backward (oracle/grad.h) on the same sample. The naive backward visits the rows a sample
 * needs (the selected rows, and every row that sees a selected column) and computes in binary64
 * with libm exp: scores (with the case's ALiBi, bias, window or boolean mask through
 * ac_features_score_f64 when it has any), max, P, dP = dO·V over the visible keys, D = Σ P dP,
 * dS = P (dP - D), then dQ of a selected row and the terms of the selected columns. The oracle
 * rounds into fp32 (the case dtype; with f64 into binary64 too, which sends every element on to
 * the MPFR passes). Process CPU seconds, one thread, compiled with the bench at -O2. */
#ifndef AC_BENCH_GRAD_NAIVE_H
#define AC_BENCH_GRAD_NAIVE_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "casefile.h"
#include "grad.h"
#include "rng.h"
#include "variants.h"

static inline double gn_proc_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* T x T, d = dk = dv, fp32 Q, K, V and dO normal(0,1) (stream 0x67726164 of seed 7), mask m. */
static inline void gn_make_case(ac_case *c, float **dout, int64_t T, int64_t d, ac_mask m)
{
  ac_err e;
  ac_case_init(c);
  c->p.dtype = AC_F32;
  c->p.mask = m;
  c->p.batch = c->p.heads = c->p.kv_heads = 1;
  c->p.tq = c->p.tk = T;
  c->p.dk = c->p.dv = d;
  c->p.scale_is_default = 1;
  c->p.scale = 1.0 / sqrt((double)d);
  if (ac_case_alloc(c, &e)) {
    fprintf(stderr, "bench: %s\n", e.msg);
    exit(2);
  }
  ac_rng r;
  ac_rng_init(&r, 7, 0x67726164);
  float *bufs[4] = {c->q, c->k, c->v, *dout = malloc((size_t)(T * d) * sizeof **dout)};
  for (int b = 0; b < 4; b++)
    for (int64_t x = 0; x < T * d; x++) bufs[b][x] = (float)ac_rng_normal(&r);
}

/* The naive backward of the sample: returns a checksum of what it computed. */
static inline double gn_naive(const ac_case *c, const float *dO, const uint8_t *rsel, const uint8_t *csel)
{
  const ac_problem *p = &c->p;
  const float *q = c->q, *k = c->k, *v = c->v;
  int64_t T = p->tq, d = p->dk, jmin = T;
  for (int64_t j = 0; j < T; j++)
    if (csel[j] && j < jmin) jmin = j;
  double *P = malloc((size_t)T * sizeof *P), *dP = malloc((size_t)T * sizeof *dP);
  double *dq = calloc((size_t)d, sizeof *dq), *dk = calloc((size_t)(T * d), sizeof *dk);
  double *dv = calloc((size_t)(T * d), sizeof *dv), scale = 1.0 / sqrt((double)d), sum = 0;
  for (int64_t i = 0; i < T; i++) {
    int64_t n = ac_visible_count(p, i);
    if (!rsel[i] && n <= jmin) continue;
    double m = -INFINITY, L = 0, D = 0;
    for (int64_t j = 0; j < n; j++) {
      double z = 0, y = 0;
      for (int64_t t = 0; t < d; t++) {
        z += (double)q[i * d + t] * (double)k[j * d + t];
        y += (double)dO[i * d + t] * (double)v[j * d + t];
      }
      P[j] = p->f.used ? ac_features_score_f64(c, 0, 0, i, j, z * scale) : z * scale;
      dP[j] = y;
      if (P[j] > m) m = P[j];
    }
    for (int64_t j = 0; j < n; j++) L += P[j] = exp(P[j] - m);
    for (int64_t j = 0; j < n; j++) D += (P[j] /= L) * dP[j];
    for (int64_t t = 0; t < d; t++) dq[t] = 0;
    for (int64_t j = 0; j < n; j++) {
      double ds = P[j] * (dP[j] - D) * scale;
      if (rsel[i])
        for (int64_t t = 0; t < d; t++) dq[t] += ds * (double)k[j * d + t];
      if (csel[j])
        for (int64_t t = 0; t < d; t++) {
          dk[j * d + t] += ds * (double)q[i * d + t];
          dv[j * d + t] += P[j] * (double)dO[i * d + t];
        }
    }
    if (rsel[i])
      for (int64_t t = 0; t < d; t++) sum += dq[t];
  }
  for (int64_t x = 0; x < T * d; x++) sum += dk[x] + dv[x];
  free(P); free(dP); free(dq); free(dk); free(dv);
  return sum;
}

/* n indices spread evenly over [0, T), as a list spec; sel marks them. */
static inline char *gn_spread(int64_t T, int64_t n, uint8_t *sel)
{
  char *s = malloc((size_t)n * 12 + 1);
  s[0] = 0;
  memset(sel, 0, (size_t)T);
  for (int64_t a = 0; a < n; a++) {
    int64_t x = (2 * a + 1) * T / (2 * n);
    sel[x] = 1;
    sprintf(s + strlen(s), "%s%lld", a ? "," : "", (long long)x);
  }
  return s;
}

/* The naive and the exact backward of c on R rows and C columns, printed under the title what;
 * returns the ratio exact / naive in process CPU time (-1 when the exact backward refuses c or
 * leaves an element unresolved). */
static inline double gn_line(const ac_case *c, const float *dO, int64_t R, int64_t C, int f64, const char *what)
{
  const int64_t T = c->p.tq;
  uint8_t *rsel = malloc((size_t)T), *csel = malloc((size_t)T);
  char *rows = gn_spread(T, R, rsel), *cols = gn_spread(T, C, csel);
  double t0 = gn_proc_now(), chk = gn_naive(c, dO, rsel, csel), tn = gn_proc_now() - t0;
  ac_grad_opts o;
  ac_grad_opts_init(&o);
  o.rows = rows;
  o.cols = cols;
  o.formats = f64 ? 1u << AC_F64 : 0;
  ac_grad_result r;
  ac_err e;
  double ratio = -1;
  t0 = gn_proc_now();
  if (ac_grad_run(c, dO, &o, &r, &e)) {
    fprintf(stderr, "bench: %s\n", e.msg);
  } else {
    double to = gn_proc_now() - t0;
    ratio = r.n_unresolved ? -1 : to / tn;
    printf("backward T=%lld d=%lld %s fp32%s, %lld rows (dQ) and %lld columns (dK, dV), into fp32%s, 1 thread, process CPU s\n"
           "  naive binary64:   %9.3f s  (checksum %.6g)\n"
           "  exact oracle:     %9.3f s  ratio %.1fx  (exact %lld, zero %lld, rounded %lld, unresolved %lld,\n"
           "                    extended pass %lld, after the first MPFR pass %lld, passes %d, max precision %ld bits)\n",
           (long long)T, (long long)c->p.dk, ac_mask_name(c->p.mask), what, (long long)R, (long long)C,
           f64 ? " and binary64" : "", tn, chk, to, to / tn, (long long)r.n_exact, (long long)r.n_zero,
           (long long)r.n_rounded, (long long)r.n_unresolved, (long long)r.n_fast, (long long)r.n_highprec, r.passes,
           r.max_prec);
    fflush(stdout);
    ac_grad_result_free(&r);
  }
  free(rows); free(cols); free(rsel); free(csel);
  return ratio;
}

#endif
