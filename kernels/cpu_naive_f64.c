/* cpu_naive_f64.c: naive-f64, the textbook kernel in binary64. For each query row the scores
 * are materialized, then three passes: the maximum, the exponentials and their sum, and the
 * weighted sum of V divided by that sum. Scores sum over d in index order. */
#include "config.h"
#include "cpu_common.h"
#include <stdio.h>
#include <stdlib.h>

static int naive_f64_supports(const attncheck_problem *p, char *why, size_t why_len)
{
  return ac_cpu_supports(p, ATTNCHECK_F64, 0, why, why_len);
}

static int naive_f64_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  const double *q = t->q, *k = t->k, *v = t->v;
  double *o = t->o;
  const int64_t tk8 = ac_cpu_pad(p->tk), dv8 = ac_cpu_pad(p->dv);
  double *kt = ac_cpu_scratch(p->dk * tk8, sizeof *kt);   /* K of one kv head, transposed [d][j] */
  double *vv = ac_cpu_scratch(p->tk * dv8, sizeof *vv);   /* V of one kv head [j][e] */
  double *s = ac_cpu_scratch(tk8, sizeof *s);             /* the row: scores, then exponentials */
  double *acc = ac_cpu_scratch(dv8, sizeof *acc);
  if (!kt || !vv || !s || !acc) {
    free(kt), free(vv), free(s), free(acc);
    snprintf(err, err_len, "naive-f64: out of memory");
    return -1;
  }
  for (int64_t b = 0; b < p->batch; b++) {
    int64_t loaded = -1;
    for (int64_t h = 0; h < p->heads; h++) {
      const int64_t kvh = ac_cpu_kv_head(p, h);
      if (kvh != loaded) {
        for (int64_t j = 0; j < p->tk; j++) {
          for (int64_t d = 0; d < p->dk; d++) kt[d * tk8 + j] = k[ac_cpu_off(p->k_stride, b, kvh, j, d)];
          for (int64_t e = 0; e < p->dv; e++) vv[j * dv8 + e] = v[ac_cpu_off(p->v_stride, b, kvh, j, e)];
        }
        loaded = kvh;
      }
      for (int64_t i = 0; i < p->tq; i++) {
        const int64_t n = ac_cpu_visible(p, i), n8 = ac_cpu_pad(n);
        float *lse = t->lse ? &t->lse[ac_cpu_lse_index(p, b, h, i)] : NULL;
        if (n == 0) {
          for (int64_t e = 0; e < p->dv; e++) o[ac_cpu_off(p->o_stride, b, h, i, e)] = 0.0;
          if (lse) *lse = -INFINITY;
          continue;
        }
        for (int64_t j = 0; j < n8; j++) s[j] = 0.0;
        for (int64_t d = 0; d < p->dk; d++)
          ac_cpu_axpy_f64(s, q[ac_cpu_off(p->q_stride, b, h, i, d)], kt + d * tk8, n8);
        /* pass 1: scale and maximum */
        double m = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
          s[j] *= p->scale;
          if (s[j] > m) m = s[j];
        }
        /* pass 2: exponentials and their sum */
        double l = 0.0;
        for (int64_t j = 0; j < n; j++) {
          s[j] = exp(s[j] - m);
          l += s[j];
        }
        /* pass 3: weighted sum of V */
        for (int64_t e = 0; e < dv8; e++) acc[e] = 0.0;
        for (int64_t j = 0; j < n; j++) ac_cpu_axpy_f64(acc, s[j], vv + j * dv8, dv8);
        for (int64_t e = 0; e < p->dv; e++) o[ac_cpu_off(p->o_stride, b, h, i, e)] = acc[e] / l;
        if (lse) *lse = (float)(m + log(l));
      }
    }
  }
  free(kt), free(vv), free(s), free(acc);
  return 0;
}

const attncheck_kernel ac_cpu_naive_f64 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "naive-f64",
  "binary64, three passes over a materialized row of scores", "fp64", ATTNCHECK_MEM_HOST, 0,
  naive_f64_supports, naive_f64_run, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};
