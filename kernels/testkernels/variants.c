/* variants.c: `test-variants` proves that the variant tensors of ABI 2 reach a kernel as the
 * header describes them: it reads every element of bias and bool_mask through their strides
 * (zero over a broadcast extent) for every (b, h, i, j), and the slopes, sinks and descales,
 * and writes their weighted sum S = Σ (position + 1) * value (in binary64, rounded into o's
 * dtype) into every output element and 0 into the LSE. The harness test computes S from the
 * case and compares. `test-variants-scribble` also writes into the bias, which the harness
 * must report as a write into an input. */
#include "config.h"
#include "testkernels.h"
#include <stdio.h>
#include <string.h>
#include "dtype.h"

static double grid_sum(const attncheck_problem *p, const void *base, ac_dtype dt, const int64_t s[4], int bytes)
{
  double sum = 0;
  int64_t pos = 0;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++)
        for (int64_t j = 0; j < p->tk; j++, pos++) {
          int64_t off = ac_tk_off(s, b, h, i, j);
          double v = bytes ? (double)((const unsigned char *)base)[off] : ac_load(dt, base, (size_t)off);
          if (v == v && v != 1.0 / 0.0 && v != -1.0 / 0.0) sum += (double)(pos % 97 + 1) * v;
        }
  return sum;
}

static double row_sum(const float *x, int64_t n)
{
  double sum = 0;
  for (int64_t i = 0; i < n; i++) sum += (double)(i + 1) * x[i];
  return sum;
}

static int run_variants_impl(const attncheck_problem *p, const attncheck_tensors *t, int scribble, char *err, size_t n)
{
  if (p->struct_size < ATTNCHECK_PROBLEM_V2_SIZE) {
    snprintf(err, n, "test-variants: an ABI 1 problem");
    return 1;
  }
  double s = 0;
  int64_t nd = p->batch * p->kv_heads;
  if (p->features & ATTNCHECK_FEAT_BIAS) s += grid_sum(p, t->bias, (ac_dtype)p->bias_dtype, p->bias_stride, 0);
  if (p->features & ATTNCHECK_FEAT_BOOL_MASK) s += 3 * grid_sum(p, t->bool_mask, AC_F32, p->bool_mask_stride, 1);
  if (p->features & ATTNCHECK_FEAT_ALIBI) s += 5 * row_sum(t->alibi_slopes, p->alibi_per_batch ? p->batch * p->heads : p->heads);
  if (p->features & ATTNCHECK_FEAT_SINKS) s += 7 * row_sum(t->sinks, p->heads);
  if (p->features & ATTNCHECK_FEAT_DESCALE)
    s += 11 * row_sum(t->descale_q, nd) + 13 * row_sum(t->descale_k, nd) + 17 * row_sum(t->descale_v, nd);
  ac_dtype dt = (ac_dtype)p->dtype;
  uint64_t bits = ac_encode_f64(dt, s);
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) {
        for (int64_t d = 0; d < p->dv; d++) ac_store_bits(dt, t->o, (size_t)ac_tk_off(p->o_stride, b, h, i, d), bits);
        if (t->lse) t->lse[(b * p->heads + h) * p->tq + i] = 0;
      }
  if (scribble && t->bias) ac_store_bits((ac_dtype)p->bias_dtype, (void *)(uintptr_t)t->bias, 0, 0);
  return 0;
}

static int run_variants(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return run_variants_impl(p, t, 0, err, n);
}

static int run_scribble(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return run_variants_impl(p, t, 1, err, n);
}

#define CAPS (ATTNCHECK_FEAT_ALL & ~ATTNCHECK_FEAT_MIXED_DTYPES)
const attncheck_kernel ac_tk_variants = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-variants",
  "test kernel: sums the variant tensors read through the ABI 2 fields into every output element",
  NULL, ATTNCHECK_MEM_HOST, CAPS, ac_tk_supports_all, run_variants, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};
const attncheck_kernel ac_tk_variants_scribble = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-variants-scribble",
  "test kernel: as test-variants, and writes into the bias it was handed",
  NULL, ATTNCHECK_MEM_HOST, CAPS, ac_tk_supports_all, run_scribble, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};
