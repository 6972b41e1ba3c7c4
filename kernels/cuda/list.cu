/* list.cu: the built-in CUDA kernels. cuBLAS and cuDNN kernels are listed when configure
 * found those libraries (AC_CUDA_WITH_CUBLAS / AC_CUDA_WITH_CUDNN from local.mk). */
#include "accuda.h"

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

extern "C" const attncheck_kernel *const *ac_cuda_kernels(size_t *count)
{
  if (count) *count = sizeof ac_cuda_list / sizeof ac_cuda_list[0];
  return ac_cuda_list;
}
