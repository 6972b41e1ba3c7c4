/* tplugin_badabi.c: a plugin built for a future ABI (abi_version 999): must be refused. */
#include "attncheck_kernel.h"

static int run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t, (void)err, (void)n;
  return 0;
}

static const attncheck_kernel k = {999, sizeof(attncheck_kernel), "badabi", "wrong abi_version", NULL,
                                   ATTNCHECK_MEM_HOST, 0, NULL, run, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  static const attncheck_kernel *const list[] = {&k};
  *count = 1;
  return list;
}
