/* cudnn_sdpa_f16.cu: cudnn-sdpa-f16, cuDNN's fused flash attention (cudnn_graph.cu) in f16. */
#include "cudnn_graph.h"

static int ac_cudnn_sdpa_f16_supports(const attncheck_problem *p, char *why, size_t n)
{
  return ac_cudnn_sdpa_supports(p, ATTNCHECK_F16, "f16", why, n);
}

static int ac_cudnn_sdpa_f16_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_cudnn_sdpa_run("cudnn-sdpa-f16", p, t, err, n);
}

extern "C" const attncheck_kernel ac_cuda_kernel_cudnn_sdpa_f16 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "cudnn-sdpa-f16",
  "cuDNN fused flash attention through the backend graph API (MATMUL, scale, causal GEN_INDEX/CMP_GE/"
  "BINARY_SELECT with the lowest float, softmax with stats, MATMUL); dk == dv, a multiple of 8 up to 128",
  "fp16-fa2", ATTNCHECK_MEM_CUDA, 0, ac_cudnn_sdpa_f16_supports, ac_cudnn_sdpa_f16_run, { NULL, NULL, NULL, NULL }, NULL, 0, 0
, 0, 0, NULL, 0, 0, NULL};
