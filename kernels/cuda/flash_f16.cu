/* flash_f16.cu: cuda-flash-f16, the FlashAttention-2-style tensor-core kernel (flash_tc.cuh) in f16. */
#include "flash_tc.cuh"

static int ac_flash_f16_supports(const attncheck_problem *p, char *why, size_t n)
{
  return ac_cu_supports_common(p, ATTNCHECK_F16, "f16", AC_TC_MAXD, why, n);
}

static int ac_flash_f16_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_flash_tc_run<__half>("cuda-flash-f16", p, t, err, n);
}

extern "C" const attncheck_kernel ac_cuda_kernel_flash_f16 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "cuda-flash-f16",
  "CUDA FlashAttention-2-style, tensor cores (wmma) with fp32 accumulation, P rounded to f16 before P*V; "
  "64x64 tiles, head dims <= 128",
  "fp16-fa2", ATTNCHECK_MEM_CUDA, 0, ac_flash_f16_supports, ac_flash_f16_run, { NULL, NULL, NULL, NULL }, NULL, 0, 0
, 0, 0, NULL, 0, 0, NULL};
