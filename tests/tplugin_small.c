/* tplugin_small.c: a plugin whose struct_size is smaller than attncheck_kernel v1: must be refused. */
#include <stddef.h>
#include "attncheck_kernel.h"

static int run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t, (void)err, (void)n;
  return 0;
}

static const attncheck_kernel k = {ATTNCHECK_ABI_VERSION, offsetof(attncheck_kernel, reserved), "small",
                                   "struct_size too small", NULL, ATTNCHECK_MEM_HOST, 0, NULL, run,
                                   {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  static const attncheck_kernel *const list[] = {&k};
  *count = 1;
  return list;
}
