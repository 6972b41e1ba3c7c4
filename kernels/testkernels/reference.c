/* reference.c: the straightforward binary64 kernel that the test kernels start from,
 * and `test-reference`, a correct kernel for every dtype. */
#include "config.h"
#include "testkernels.h"
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include "dtype.h"

int ac_tk_supports_all(const attncheck_problem *p, char *why, size_t n)
{
  (void)p;
  (void)why;
  (void)n;
  return 1;
}

static int visible(const attncheck_problem *p, int64_t i, int64_t j)
{
  if (p->mask == ATTNCHECK_MASK_CAUSAL) return j <= i;
  if (p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT) return j <= i + p->tk - p->tq;
  return 1;
}

int ac_tk_reference(const attncheck_problem *p, const attncheck_tensors *t, int leak_masked, char *err, size_t n)
{
  ac_dtype dt = (ac_dtype)p->dtype;
  double *s = malloc((size_t)p->tk * sizeof *s);
  double *acc = malloc((size_t)p->dv * sizeof *acc);
  if (!s || !acc) {
    free(s);
    free(acc);
    snprintf(err, n, "out of memory");
    return 1;
  }
  int64_t group = p->heads / p->kv_heads;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++) {
      int64_t kh = h / group;
      for (int64_t i = 0; i < p->tq; i++) {
        double m = -INFINITY;
        int any = 0;
        for (int64_t j = 0; j < p->tk; j++) {
          double dot = 0;
          for (int64_t d = 0; d < p->dk; d++)
            dot += ac_load(dt, t->q, (size_t)ac_tk_off(p->q_stride, b, h, i, d)) *
                   ac_load(dt, t->k, (size_t)ac_tk_off(p->k_stride, b, kh, j, d));
          s[j] = dot * p->scale;
          if (visible(p, i, j)) {
            any = 1;
            if (s[j] > m) m = s[j];
          }
        }
        double sum = 0;
        for (int64_t d = 0; d < p->dv; d++) acc[d] = 0;
        for (int64_t j = 0; j < p->tk; j++) {
          int vis = visible(p, i, j);
          if (!vis && !leak_masked) continue;
          double pj = vis ? exp(s[j] - m) : 0.0;
          sum += pj;
          for (int64_t d = 0; d < p->dv; d++)
            acc[d] += pj * ac_load(dt, t->v, (size_t)ac_tk_off(p->v_stride, b, kh, j, d));
        }
        for (int64_t d = 0; d < p->dv; d++) {
          double o = any ? acc[d] / sum : 0.0;
          ac_store_bits(dt, t->o, (size_t)ac_tk_off(p->o_stride, b, h, i, d), ac_encode_f64(dt, o));
        }
        if (t->lse) t->lse[(b * p->heads + h) * p->tq + i] = any ? (float)(m + log(sum)) : -INFINITY;
      }
    }
  free(s);
  free(acc);
  return 0;
}

static int run_reference(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_tk_reference(p, t, 0, err, n);
}

const attncheck_kernel ac_tk_reference_kernel = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-reference",
  "test kernel: a plain binary64 three-pass kernel for every dtype (a correct baseline)",
  NULL, ATTNCHECK_MEM_HOST, 0, ac_tk_supports_all, run_reference, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};
