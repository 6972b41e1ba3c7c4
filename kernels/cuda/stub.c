/* stub.c: the CUDA library when CUDA is not built: no kernels, no devices. */
#include <stdio.h>
#include "accuda.h"

static const char ac_cuda_not_built[] = "CUDA support not built (configure --with-cuda)";

int ac_cuda_built(void) { return 0; }

const char *ac_cuda_unavailable(void) { return ac_cuda_not_built; }

int ac_cuda_device_count(char *err, size_t n)
{
  if (err && n) snprintf(err, n, "%s", ac_cuda_not_built);
  return 0;
}

const attncheck_kernel *const *ac_cuda_kernels(size_t *count)
{
  static const attncheck_kernel *const none[1] = { NULL };
  if (count) *count = 0;
  return none;
}

int ac_cuda_run_case(const attncheck_kernel *k, const attncheck_problem *p,
                     const void *q_span, const void *k_span, const void *v_span,
                     size_t q_n, size_t k_n, size_t v_n,
                     void *o_span, size_t o_n, float *lse, size_t lse_n,
                     int device, size_t guard, double *kernel_ms, char *err, size_t errn)
{
  (void)k; (void)p; (void)q_span; (void)k_span; (void)v_span; (void)q_n; (void)k_n; (void)v_n;
  (void)o_span; (void)o_n; (void)lse; (void)lse_n; (void)device; (void)guard;
  if (kernel_ms) *kernel_ms = 0;
  if (err && errn) snprintf(err, errn, "%s", ac_cuda_not_built);
  return AC_CUDA_RUN_SETUP_ERROR;
}
