/* list.cu: the built-in CUDA kernels, and the module's entry point. cuBLAS and cuDNN kernels
 * are listed when configure found those libraries (AC_CUDA_WITH_CUBLAS / AC_CUDA_WITH_CUDNN
 * from local.mk). */
#include "acmodule.h"

extern "C" {
extern const attncheck_kernel ac_cuda_kernel_naive_f32, ac_cuda_kernel_flash_f32, ac_cuda_kernel_flash_f16,
    ac_cuda_kernel_flash_bf16;
#if AC_CUDA_WITH_CUBLAS
extern const attncheck_kernel ac_cuda_kernel_cublas_sdpa_f32, ac_cuda_kernel_cublas_sdpa_f16;
#endif
#if AC_CUDA_WITH_CUDNN
extern const attncheck_kernel ac_cuda_kernel_cudnn_sdpa_f16, ac_cuda_kernel_cudnn_sdpa_bf16;
#endif
}

static const attncheck_kernel *const ac_cuda_list[] = {
  &ac_cuda_kernel_naive_f32, &ac_cuda_kernel_flash_f32, &ac_cuda_kernel_flash_f16, &ac_cuda_kernel_flash_bf16,
#if AC_CUDA_WITH_CUBLAS
  &ac_cuda_kernel_cublas_sdpa_f32, &ac_cuda_kernel_cublas_sdpa_f16,
#endif
#if AC_CUDA_WITH_CUDNN
  &ac_cuda_kernel_cudnn_sdpa_f16, &ac_cuda_kernel_cudnn_sdpa_bf16,
#endif
};

extern "C" const attncheck_kernel *const *ac_cudamod_kernels(size_t *count)
{
  if (count) *count = sizeof ac_cuda_list / sizeof ac_cuda_list[0];
  return ac_cuda_list;
}

extern "C" __attribute__((visibility("default"))) const ac_cuda_module *attncheck_cuda_module(void)
{
  static const ac_cuda_module m = { AC_CUDA_MODULE_VERSION, sizeof(ac_cuda_module), ac_cudamod_device_count,
                                    ac_cudamod_kernels, ac_cudamod_run_case };
  return &m;
}
