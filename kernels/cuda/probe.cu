/* probe.cu: how many devices this process sees. */
#include <cuda_runtime.h>
#include <stdio.h>
#include "acmodule.h"

/* A trivial kernel so that the library always carries device code for every --with-cuda-arch. */
__global__ void ac_cuda_probe_kernel(int *p) { *p = 1; }

extern "C" int ac_cudamod_device_count(char *err, size_t n)
{
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    if (err && n) snprintf(err, n, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
    return 0;
  }
  if (count == 0 && err && n) snprintf(err, n, "no CUDA device");
  return count;
}
