/* loader.c: the CUDA library when CUDA is built: accuda.h answered by the CUDA module
 * (attncheck-cuda.so, see acmodule.h), which is dlopen()ed the first time a function other than
 * ac_cuda_built is called. Until then no CUDA library is mapped into the process.
 *
 * The module is looked for, in order: $ATTNCHECK_CUDA_MODULE (a path; when set, the only
 * place); the build tree next to the executable (DIR/kernels/cuda/.libs and
 * DIR/../kernels/cuda/.libs, for attncheck and for the test and bench programs); the installed
 * $(pkglibdir). */
#include "config.h"
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "acmodule.h"

#ifndef AC_PKGLIBDIR
#error "AC_PKGLIBDIR must name the installed module directory"
#endif

static const ac_cuda_module *ac_mod;
static char ac_mod_err[1024];
static pthread_once_t ac_mod_once = PTHREAD_ONCE_INIT;

/* Opens path; 0 and ac_mod set, or -1 with ac_mod_err saying why. */
static int ac_mod_open(const char *path)
{
  dlerror();
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *d = dlerror();
    snprintf(ac_mod_err, sizeof ac_mod_err, "cannot load the CUDA module: %s", d ? d : path);
    return -1;
  }
  const ac_cuda_module *(*entry)(void);
  *(void **)&entry = dlsym(h, AC_CUDA_MODULE_SYMBOL);
  const ac_cuda_module *m = entry ? entry() : NULL;
  if (!m || m->version != AC_CUDA_MODULE_VERSION || m->size < sizeof *m) {
    snprintf(ac_mod_err, sizeof ac_mod_err, "%s: not a CUDA module of this attncheck (version %d)", path,
             m ? m->version : -1);
    dlclose(h);
    return -1;
  }
  ac_mod = m;   /* the handle stays open: kernels point into the module */
  return 0;
}

static int ac_mod_exists(const char *path) { return access(path, R_OK) == 0; }

static void ac_mod_load(void)
{
  const char *env = getenv("ATTNCHECK_CUDA_MODULE");
  if (env && *env) {
    ac_mod_open(env);
    return;
  }
  char exe[PATH_MAX], path[PATH_MAX + 64];
  ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (l > 0) {
    exe[l] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    static const char *const rel[] = {"/kernels/cuda/.libs/", "/../kernels/cuda/.libs/"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
      snprintf(path, sizeof path, "%s%s%s", exe, rel[i], AC_CUDA_MODULE_FILE);
      if (ac_mod_exists(path)) {
        ac_mod_open(path);
        return;
      }
    }
  }
  ac_mod_open(AC_PKGLIBDIR "/" AC_CUDA_MODULE_FILE);
}

static const ac_cuda_module *ac_mod_get(void)
{
  pthread_once(&ac_mod_once, ac_mod_load);
  return ac_mod;
}

int ac_cuda_built(void) { return 1; }

const char *ac_cuda_unavailable(void) { return ac_mod_get() ? NULL : ac_mod_err; }

int ac_cuda_device_count(char *err, size_t n)
{
  const ac_cuda_module *m = ac_mod_get();
  if (m) return m->device_count(err, n);
  if (err && n) snprintf(err, n, "%s", ac_mod_err);
  return 0;
}

const attncheck_kernel *const *ac_cuda_kernels(size_t *count)
{
  static const attncheck_kernel *const none[1] = {NULL};
  const ac_cuda_module *m = ac_mod_get();
  if (m) return m->kernels(count);
  if (count) *count = 0;
  return none;
}

int ac_cuda_run_case(const ac_cuda_case *c, double *kernel_ms, char *err, size_t errn)
{
  const ac_cuda_module *m = ac_mod_get();
  if (m) return m->run_case(c, kernel_ms, err, errn);
  if (kernel_ms) *kernel_ms = 0;
  if (err && errn) snprintf(err, errn, "%s", ac_mod_err);
  return AC_CUDA_RUN_SETUP_ERROR;
}
