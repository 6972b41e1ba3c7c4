/* cudnn_graph.h: cuDNN's fused scaled-dot-product attention through the backend graph API,
 * shared by cudnn-sdpa-f16 and cudnn-sdpa-bf16 (internal to kernels/cuda). */
#ifndef AC_CUDA_CUDNN_GRAPH_H
#define AC_CUDA_CUDNN_GRAPH_H
#include <stddef.h>
#include "attncheck_kernel.h"

int ac_cudnn_sdpa_supports(const attncheck_problem *p, int dtype, const char *dname, char *why, size_t n);
int ac_cudnn_sdpa_run(const char *name, const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n);

#endif
