/* flash_bf16.cu: cuda-flash-bf16, the FlashAttention-2-style tensor-core kernel (flash_tc.cuh) in bf16. */
#include "flash_tc.cuh"

static int ac_flash_bf16_supports(const attncheck_problem *p, char *why, size_t n)
{
  return ac_cu_supports_common(p, ATTNCHECK_BF16, "bf16", AC_TC_MAXD, why, n);
}

static int ac_flash_bf16_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_flash_tc_run<__nv_bfloat16>("cuda-flash-bf16", p, t, err, n);
}

extern "C" const attncheck_kernel ac_cuda_kernel_flash_bf16 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "cuda-flash-bf16",
  "CUDA FlashAttention-2-style, tensor cores (wmma) with fp32 accumulation, P rounded to bf16 before P*V; "
  "64x64 tiles, head dims <= 128",
  "bf16-fa2", ATTNCHECK_MEM_CUDA, 0, ac_flash_bf16_supports, ac_flash_bf16_run, { NULL, NULL, NULL, NULL }, NULL, 0, 0
, 0, 0, NULL, 0, 0, NULL};
