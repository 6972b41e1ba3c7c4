/* accuda.h: the C interface of the CUDA kernel library (kernels/cuda/libac_cuda.a).
 * Always available: when CUDA is not built, stub.c answers "CUDA support not built"; when it
 * is, loader.c answers through the CUDA module (acmodule.h), which it loads the first time a
 * function other than ac_cuda_built is called: a process that never asks for the CUDA kernels
 * never maps the CUDA libraries. Pure C; depends only on the kernel ABI.
 *
 * CUDA may be initialized only in a process that will not fork usable children: call
 * ac_cuda_device_count and ac_cuda_run_case only inside the forked child that runs cases
 * (a persistent worker child may call ac_cuda_run_case many times). ac_cuda_built,
 * ac_cuda_unavailable and ac_cuda_kernels never touch the driver and are safe anywhere. */
#ifndef AC_CUDA_H
#define AC_CUDA_H
#include <stddef.h>
#include "attncheck_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the library was built with CUDA, 0 for the stub. Loads nothing. */
int ac_cuda_built(void);

/* NULL when the CUDA kernels are available (loads the CUDA module); otherwise why not
 * ("CUDA support not built", or why the module could not be loaded). */
const char *ac_cuda_unavailable(void);

/* Number of usable CUDA devices (>= 0). When 0, err says why ("CUDA support not built",
 * "cudaErrorNoDevice: ...", "cudaErrorInsufficientDriver: ..."). Initializes CUDA. */
int ac_cuda_device_count(char *err, size_t n);

/* The built-in CUDA kernels (all ATTNCHECK_MEM_CUDA); an empty list in the stub or when the
 * module cannot be loaded (ac_cuda_unavailable says why). */
const attncheck_kernel *const *ac_cuda_kernels(size_t *count);

/* Return codes of ac_cuda_run_case. */
enum {
  AC_CUDA_RUN_OK = 0,
  AC_CUDA_RUN_KERNEL_ERROR = 1, /* k->run returned non-zero, or left a non-sticky CUDA error: err holds its message */
  AC_CUDA_RUN_CRASH = 2,        /* sticky CUDA error (context unusable): err starts with the CUDA error name */
  AC_CUDA_RUN_GUARD = 3,        /* the run finished, outputs were copied back, but a device guard margin was
                                   overwritten: err names the tensor (treat like OK plus a guard violation) */
  AC_CUDA_RUN_SETUP_ERROR = 4   /* no device, out of device memory, CUDA not built...: nothing ran */
};

/* One case for ac_cuda_run_case: kernel k (memory ATTNCHECK_MEM_CUDA) on problem p, on device
 * `device`.
 *
 * q_span, k_span, v_span: host copies of the strided input spans in p->dtype, q_n, k_n, v_n
 * elements each, starting at element [0][0][0][0] (every offset the strides address lies in
 * [0, X_n)); gaps hold whatever the harness put there (NaN).
 * o_span: host buffer of o_n elements, pre-filled by the harness (NaN). Its content is copied
 * to the device as the output's pre-fill, and the kernel's output is copied back into it.
 * lse: NULL (no LSE requested) or a host buffer of lse_n floats ([batch][heads][tq],
 * pre-filled), copied to the device, passed to the kernel and copied back.
 * guard: elements of each dtype (floats for lse) on each side of every device buffer,
 * filled with the byte 0xFF (a NaN in every format) and checked after the run. */
typedef struct {
  const attncheck_kernel *k;
  const attncheck_problem *p;
  const void *q_span, *k_span, *v_span;
  size_t q_n, k_n, v_n;
  void *o_span;
  size_t o_n;
  float *lse;
  size_t lse_n;
  int device;
  size_t guard;
} ac_cuda_case;

/* Runs one case (see ac_cuda_case). The kernel runs on a fresh cudaStream_t; the stream is
 * synchronized; *kernel_ms receives the cudaEvent time of k->run (informational). Returns
 * AC_CUDA_RUN_* with err (errn bytes) filled. */
int ac_cuda_run_case(const ac_cuda_case *c, double *kernel_ms, char *err, size_t errn);

#ifdef __cplusplus
}
#endif

#endif
