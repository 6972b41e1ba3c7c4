/* acmodule.h: the entry point of the CUDA module (attncheck-cuda.so), the shared object that
 * holds the CUDA kernels and links cudart, cuBLAS and cuDNN. attncheck does not link it: the
 * loader (loader.c) dlopen()s it the first time the CUDA kernels are needed, so that commands
 * that never resolve a CUDA kernel never map the CUDA libraries. */
#ifndef AC_CUDA_MODULE_H
#define AC_CUDA_MODULE_H
#include "accuda.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AC_CUDA_MODULE_VERSION 2
#define AC_CUDA_MODULE_SYMBOL "attncheck_cuda_module"
#define AC_CUDA_MODULE_FILE "attncheck-cuda.so"

/* The module's implementations of accuda.h (same contracts). */
typedef struct {
  int version;     /* AC_CUDA_MODULE_VERSION */
  size_t size;     /* sizeof(ac_cuda_module) */
  int (*device_count)(char *err, size_t n);
  const attncheck_kernel *const *(*kernels)(size_t *count);
  int (*run_case)(const ac_cuda_case *c, double *kernel_ms, char *err, size_t errn);
} ac_cuda_module;

/* Exported by the module under the name AC_CUDA_MODULE_SYMBOL. */
const ac_cuda_module *attncheck_cuda_module(void);

/* The module's functions behind the table. */
int ac_cudamod_device_count(char *err, size_t n);
const attncheck_kernel *const *ac_cudamod_kernels(size_t *count);
int ac_cudamod_run_case(const ac_cuda_case *c, double *kernel_ms, char *err, size_t errn);

#ifdef __cplusplus
}
#endif

#endif
