/* tplugin_lse.c: a correct dense f32 attention (no variants) that mishandles only the LSE:
 * lse-unwritten never writes it, lse-nan writes NaN into it, and neither declares
 * ATTNCHECK_CAP_NO_LSE (tcli_hints.sh: the FAIL points at that cap). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "attncheck_kernel.h"

static int supports(const attncheck_problem *p, char *why, size_t n)
{
  if (p->dtype == ATTNCHECK_F32) return 1;
  snprintf(why, n, "f32 only");
  return 0;
}

static int64_t at(const int64_t s[4], int64_t b, int64_t h, int64_t i, int64_t d)
{
  return b * s[0] + h * s[1] + i * s[2] + d * s[3];
}

/* Row (b, h, i) in binary64, rounded to f32 at the end; returns its LSE. */
static double row(const attncheck_problem *p, const attncheck_tensors *t, int64_t b, int64_t h, int64_t i, double *w)
{
  const float *q = t->q, *k = t->k, *v = t->v;
  float *o = t->o;
  int64_t kh = h / (p->heads / p->kv_heads), last = p->tk - 1;
  if (p->mask == ATTNCHECK_MASK_CAUSAL) last = i;
  if (p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT) last = i + p->tk - p->tq;
  double m = -INFINITY, sum = 0;
  for (int64_t j = 0; j <= last && j < p->tk; j++) {
    double s = 0;
    for (int64_t d = 0; d < p->dk; d++) s += (double)q[at(p->q_stride, b, h, i, d)] * k[at(p->k_stride, b, kh, j, d)];
    w[j] = s * p->scale;
    if (w[j] > m || isnan(w[j])) m = w[j];
  }
  for (int64_t j = 0; j <= last && j < p->tk; j++) sum += w[j] = exp(w[j] - m);
  for (int64_t d = 0; d < p->dv; d++) {
    double acc = 0;
    for (int64_t j = 0; j <= last && j < p->tk; j++) acc += w[j] * v[at(p->v_stride, b, kh, j, d)];
    o[at(p->o_stride, b, h, i, d)] = last < 0 ? 0.0f : (float)(acc / sum);
  }
  return last < 0 ? -INFINITY : m + log(sum);
}

static int attend(const attncheck_problem *p, const attncheck_tensors *t, int write_nan, char *err, size_t n)
{
  double *w = malloc((size_t)(p->tk + 1) * sizeof *w);
  if (!w) {
    snprintf(err, n, "out of memory");
    return 1;
  }
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) {
        double lse = row(p, t, b, h, i, w);
        if (t->lse && write_nan) t->lse[(b * p->heads + h) * p->tq + i] = (float)(lse * NAN);
      }
  free(w);
  return 0;
}

static int run_unwritten(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return attend(p, t, 0, err, n);
}

static int run_nan(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return attend(p, t, 1, err, n);
}

static const attncheck_kernel unwritten = {.abi_version = ATTNCHECK_ABI_VERSION,
                                           .struct_size = sizeof(attncheck_kernel),
                                           .name = "lse-unwritten",
                                           .description = "never writes the LSE",
                                           .precision = "fp32",
                                           .memory = ATTNCHECK_MEM_HOST,
                                           .supports = supports,
                                           .run = run_unwritten};
static const attncheck_kernel nan_lse = {.abi_version = ATTNCHECK_ABI_VERSION,
                                         .struct_size = sizeof(attncheck_kernel),
                                         .name = "lse-nan",
                                         .description = "writes NaN as the LSE",
                                         .precision = "fp32",
                                         .memory = ATTNCHECK_MEM_HOST,
                                         .supports = supports,
                                         .run = run_nan};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  static const attncheck_kernel *const list[] = {&unwritten, &nan_lse};
  *count = 2;
  return list;
}
