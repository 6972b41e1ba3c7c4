/* masked_leak.c: `test-masked-leak`, a correct f32 kernel except that masked terms are
 * multiplied by 0 instead of skipped, so a NaN stored in a masked value reaches the
 * output (MASKED-LEAK; docs/bugclasses.md §2.10: masked NaN leak). */
#include "config.h"
#include "testkernels.h"
#include <stdio.h>

static int supports_f32(const attncheck_problem *p, char *why, size_t n)
{
  if (p->dtype == ATTNCHECK_F32) return 1;
  snprintf(why, n, "test-masked-leak: f32 only");
  return 0;
}

static int run_leak(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_tk_reference(p, t, 1, err, n);
}

const attncheck_kernel ac_tk_masked_leak = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-masked-leak",
  "test kernel: f32, masked terms multiplied by 0 so NaN in masked V leaks (MASKED-LEAK)",
  "fp32", ATTNCHECK_MEM_HOST, 0, supports_f32, run_leak, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};
