/* tplugin_empty.c: a plugin whose list is empty: must be refused. */
#include "attncheck_kernel.h"

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  *count = 0;
  return NULL;
}
