/* cublas_sdpa_f32.cu: cublas-sdpa-f32, the cuBLAS composite (cublas_sdpa.cuh) in f32. */
#include "cublas_sdpa.cuh"

static int ac_cublas_sdpa_f32_supports(const attncheck_problem *p, char *why, size_t n)
{
  return ac_cb_supports<float>(p, ATTNCHECK_F32, "f32", why, n);
}

static int ac_cublas_sdpa_f32_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_cb_run<float>("cublas-sdpa-f32", p, t, err, n);
}

extern "C" const attncheck_kernel ac_cuda_kernel_cublas_sdpa_f32 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "cublas-sdpa-f32",
  "cuBLAS strided batched GEMMs around a masking softmax kernel; pedantic fp32 GEMMs (no TF32)",
  "fp32", ATTNCHECK_MEM_CUDA, 0, ac_cublas_sdpa_f32_supports, ac_cublas_sdpa_f32_run, { NULL, NULL, NULL, NULL }, NULL, 0, 0
, 0, 0, NULL, 0, 0, NULL};
