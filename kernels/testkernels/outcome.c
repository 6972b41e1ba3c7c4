/* outcome.c: test kernels that decline (UNSUPPORTED) or fail with a message (KERNEL_ERROR). */
#include "config.h"
#include "testkernels.h"
#include <stdio.h>

static int run_error(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t;
  snprintf(err, n, "test-error: deliberate failure (workspace too small)");
  return 7;
}

static int supports_nothing(const attncheck_problem *p, char *why, size_t n)
{
  snprintf(why, n, "test-unsupported: supports no problem (dtype %d, mask %d)", (int)p->dtype, (int)p->mask);
  return 0;
}

static int run_unsupported(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t;
  snprintf(err, n, "test-unsupported: run() must not be called");
  return 1;
}

const attncheck_kernel ac_tk_error = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-error",
  "test kernel: run() returns non-zero with a message (KERNEL-ERROR)",
  NULL, ATTNCHECK_MEM_HOST, 0, ac_tk_supports_all, run_error, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};
const attncheck_kernel ac_tk_unsupported = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-unsupported",
  "test kernel: supports() declines every problem (SKIP)",
  NULL, ATTNCHECK_MEM_HOST, 0, supports_nothing, run_unsupported, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};
