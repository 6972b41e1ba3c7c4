/* strides.c: `test-strides` reads the layout it is handed before computing: every element
 * position of q, k and v must hold a number, every gap of their strided spans and every
 * position of o the harness's NaN pre-fill. For cases with finite inputs it then returns
 * the reference; any mismatch is a KERNEL-ERROR naming the first bad position. */
#include "config.h"
#include "testkernels.h"
#include <stdio.h>
#include <stdlib.h>
#include "dtype.h"

static int check_span(const char *name, ac_dtype dt, const void *base, int64_t B, int64_t H, int64_t T, int64_t D,
                      const int64_t s[4], int expect_nan, char *err, size_t n)
{
  int64_t span = 1 + (B - 1) * s[0] + (H - 1) * s[1] + (T - 1) * s[2] + (D - 1) * s[3];
  unsigned char *elem = calloc((size_t)span, 1);
  if (!elem) {
    snprintf(err, n, "out of memory");
    return 1;
  }
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t i = 0; i < T; i++)
        for (int64_t d = 0; d < D; d++) elem[ac_tk_off(s, b, h, i, d)] = 1;
  int rc = 0;
  for (int64_t x = 0; x < span && !rc; x++) {
    int isnan = ac_bits_isnan(dt, ac_load_bits(dt, base, (size_t)x));
    int want_nan = elem[x] ? expect_nan : 1;
    if (isnan != want_nan) {
      snprintf(err, n, "test-strides: %s offset %lld (%s) holds %s", name, (long long)x, elem[x] ? "an element" : "a gap",
               isnan ? "NaN" : "a number");
      rc = 1;
    }
  }
  free(elem);
  return rc;
}

static int run_strides(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  ac_dtype dt = (ac_dtype)p->dtype;
  if (check_span("q", dt, t->q, p->batch, p->heads, p->tq, p->dk, p->q_stride, 0, err, n) ||
      check_span("k", dt, t->k, p->batch, p->kv_heads, p->tk, p->dk, p->k_stride, 0, err, n) ||
      check_span("v", dt, t->v, p->batch, p->kv_heads, p->tk, p->dv, p->v_stride, 0, err, n) ||
      check_span("o", dt, t->o, p->batch, p->heads, p->tq, p->dv, p->o_stride, 1, err, n))
    return 1;
  return ac_tk_reference(p, t, 0, err, n);
}

const attncheck_kernel ac_tk_strides = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-strides",
  "test kernel: verifies the strided layout and NaN pre-fill it is handed, then computes the reference",
  NULL, ATTNCHECK_MEM_HOST, 0, ac_tk_supports_all, run_strides, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};
