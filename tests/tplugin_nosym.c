/* tplugin_nosym.c: a shared object without attncheck_plugin_kernels: must be refused. */
#include <stddef.h>

int tplugin_nosym_something(void);
int tplugin_nosym_something(void) { return 42; }
