/* plugin.h: loading kernels from a shared object that exports attncheck_plugin_kernels. */
#ifndef AC_PLUGIN_H
#define AC_PLUGIN_H
#include "harness.h"

/* Appends every kernel of the plugin at path (or only the one called name, when non-NULL).
 * Refuses, with a one-line message naming the file, a shared object that cannot be opened,
 * lacks the symbol, returns no kernels or more than 4096, or holds a kernel with another
 * abi_version, a struct_size smaller than v1's, no name, a name with a control character or
 * used twice, no run function, or a precision class attncheck does not know. */
int ac_plugin_load(const char *path, const char *name, ac_kernel ***list, int *n, ac_err *e);
void ac_plugin_release(ac_kernel *k);

/* Time limit of a supports() probe, in seconds. */
#define AC_PLUGIN_PROBE_TIMEOUT_S 5.0
/* The kernel's supports(p) asked in its persistent worker, or when that cannot be asked in a
 * forked child (its own process group, stdout joined to stderr), under
 * AC_PLUGIN_PROBE_TIMEOUT_S; answers are cached per problem. A probe that
 * crashes or hangs answers 1 (why says so), and so do all later ones of that kernel: the run,
 * which calls supports() in its own child under the run's time limit, then reports the CRASH
 * or TIMEOUT. */
int ac_plugin_supports(const ac_kernel *k, const attncheck_problem *p, char *why, size_t n);

#endif
