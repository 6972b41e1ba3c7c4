/* tplugin_multi.c: a plugin with two kernels, for PATH.so and PATH.so:NAME. */
#include <stdio.h>
#include <string.h>
#include "attncheck_kernel.h"

/* Writes 0 into every o element and lse element. */
static int run_zero(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)err, (void)n;
  size_t es = p->dtype == ATTNCHECK_F64 ? 8 : p->dtype == ATTNCHECK_F32 ? 4 : p->dtype >= ATTNCHECK_E4M3 ? 1 : 2;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) {
        for (int64_t d = 0; d < p->dv; d++)
          memset((char *)t->o + es * (size_t)(b * p->o_stride[0] + h * p->o_stride[1] + i * p->o_stride[2] + d * p->o_stride[3]),
                 0, es);
        if (t->lse) t->lse[(b * p->heads + h) * p->tq + i] = 0.0f;
      }
  return 0;
}

static int run_fail(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t;
  snprintf(err, n, "multi-fail: always fails");
  return 1;
}

/* struct_size as a version 3 plugin built before run_backward (the struct ends before it): it
 * loads and runs, and is never asked for a backward */
static const attncheck_kernel zero = {ATTNCHECK_ABI_VERSION, ATTNCHECK_KERNEL_V1_SIZE, "multi-zero", "writes zeros",
                                      "fp32", ATTNCHECK_MEM_HOST, 0, NULL, run_zero, {NULL, NULL, NULL, NULL}, NULL, 0, 0,
                                      0, 0, NULL, 0, 0, NULL};
/* caps declared only to be listed (tcmd_list_caps.sh): it never computes anything */
static const attncheck_kernel fail = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "multi-fail", "always fails",
                                      NULL, ATTNCHECK_MEM_HOST,
                                      ATTNCHECK_FEAT_WINDOW | ATTNCHECK_FEAT_SINKS | ATTNCHECK_CAP_NO_LSE, NULL, run_fail,
                                      {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  static const attncheck_kernel *const list[] = {&zero, &fail};
  *count = 2;
  return list;
}
