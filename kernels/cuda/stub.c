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

int ac_cuda_run_case(const ac_cuda_case *c, double *kernel_ms, char *err, size_t errn)
{
  (void)c;
  if (kernel_ms) *kernel_ms = 0;
  if (err && errn) snprintf(err, errn, "%s", ac_cuda_not_built);
  return AC_CUDA_RUN_SETUP_ERROR;
}
