/* mutant-cublas-sentinel: BUGCLASSES.md row "hard-coded logit bound".
 * cublas-style-f16 masking with an additive -1e4 (the (1 - mask) * -10000 of older model code)
 * instead of -inf, which assumes no masked score lies 1e4 above a visible one: every key is
 * computed, a masked key scoring more than 1e4 above the visible ones wins (its output leaves
 * the convex hull of the visible V, all values in range), and rows with no visible key average V. */
#include "config.h"
#include "cpu_common.h"

static int sentinel_run(int dt, const char *name, const attncheck_problem *p, const attncheck_tensors *t, char *err,
                        size_t err_len)
{
  return ac_cpu_cublas_impl(-1e4f, dt, name, p, t, err, err_len);
}

AC_CPU_KERNEL(ac_mutant_cublas_sentinel, ATTNCHECK_F16, "mutant-cublas-sentinel", "fp16-cublas",
              "cublas-style-f16 adding a -1e4 mask to the stored scores instead of -inf", sentinel_run)
