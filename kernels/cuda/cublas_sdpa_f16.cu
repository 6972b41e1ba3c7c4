/* cublas_sdpa_f16.cu: cublas-sdpa-f16, the cuBLAS composite (cublas_sdpa.cuh) in f16. */
#include "cublas_sdpa.cuh"

static int ac_cublas_sdpa_f16_supports(const attncheck_problem *p, char *why, size_t n)
{
  return ac_cb_supports<__half>(p, ATTNCHECK_F16, "f16", why, n);
}

static int ac_cublas_sdpa_f16_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_cb_run<__half>("cublas-sdpa-f16", p, t, err, n);
}

extern "C" const attncheck_kernel ac_cuda_kernel_cublas_sdpa_f16 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "cublas-sdpa-f16",
  "cuBLAS strided batched GEMMs around a masking softmax kernel; fp16 scores and P stored by the GEMM, fp32 accumulation (tensor cores)",
  "fp16-cublas", ATTNCHECK_MEM_CUDA, 0, ac_cublas_sdpa_f16_supports, ac_cublas_sdpa_f16_run, { NULL, NULL, NULL, NULL }, NULL, 0, 0
, 0, 0, NULL, 0, 0, NULL};
