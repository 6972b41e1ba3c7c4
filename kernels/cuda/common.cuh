/* common.cuh: helpers shared by the CUDA kernels (C++ only, included by .cu files). */
#ifndef AC_CUDA_COMMON_CUH
#define AC_CUDA_COMMON_CUH
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include "attncheck_kernel.h"

/* Element offset of [b][h][t][d] for one of the problem's stride vectors. */
struct ac_cu_strides {
  int64_t s0, s1, s2, s3;
};
static inline ac_cu_strides ac_cu_make_strides(const int64_t s[4])
{
  ac_cu_strides r = { s[0], s[1], s[2], s[3] };
  return r;
}
__host__ __device__ static inline int64_t ac_cu_off(const ac_cu_strides &s, int64_t b, int64_t h, int64_t t,
                                                    int64_t d)
{
  return b * s.s0 + h * s.s1 + t * s.s2 + d * s.s3;
}

/* The problem's shape, copied by value into kernels. */
struct ac_cu_shape {
  int64_t batch, heads, kv_heads, tq, tk, dk, dv;
  int mask;
  float scale;
  ac_cu_strides q, k, v, o;
};
static inline ac_cu_shape ac_cu_make_shape(const attncheck_problem *p)
{
  ac_cu_shape s;
  s.batch = p->batch; s.heads = p->heads; s.kv_heads = p->kv_heads;
  s.tq = p->tq; s.tk = p->tk; s.dk = p->dk; s.dv = p->dv;
  s.mask = p->mask;
  s.scale = (float)p->scale;
  s.q = ac_cu_make_strides(p->q_stride);
  s.k = ac_cu_make_strides(p->k_stride);
  s.v = ac_cu_make_strides(p->v_stride);
  s.o = ac_cu_make_strides(p->o_stride);
  return s;
}

/* Last key visible to query i (-1: none), clipped to tk - 1. The visible keys are [0, last]. */
__host__ __device__ static inline int64_t ac_cu_last_key(int mask, int64_t i, int64_t tq, int64_t tk)
{
  int64_t last = tk - 1;
  if (mask == ATTNCHECK_MASK_CAUSAL) last = i;
  else if (mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT) last = i + tk - tq;
  if (last > tk - 1) last = tk - 1;
  return last < -1 ? -1 : last;
}

/* Loads and stores between storage types and float. */
__device__ static inline float ac_cu_ld(const float *p) { return *p; }
__device__ static inline float ac_cu_ld(const __half *p) { return __half2float(*p); }
__device__ static inline float ac_cu_ld(const __nv_bfloat16 *p) { return __bfloat162float(*p); }
__device__ static inline void ac_cu_st(float *p, float x) { *p = x; }
__device__ static inline void ac_cu_st(__half *p, float x) { *p = __float2half_rn(x); }
__device__ static inline void ac_cu_st(__nv_bfloat16 *p, float x) { *p = __float2bfloat16_rn(x); }

/* Common shape checks for the CUDA kernels; 0 with a reason when not supported. */
static inline int ac_cu_why(char *why, size_t n, const char *fmt, ...)
{
  if (why && n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
  }
  return 0;
}
static inline int ac_cu_supports_common(const attncheck_problem *p, int dtype, const char *dtype_name,
                                        int64_t max_d, char *why, size_t n)
{
  if (p->dtype != dtype) return ac_cu_why(why, n, "this kernel takes %s only", dtype_name);
  if (p->batch < 1 || p->heads < 1 || p->kv_heads < 1 || p->tq < 1 || p->tk < 1 || p->dk < 1 || p->dv < 1)
    return ac_cu_why(why, n, "empty dimension");
  if (p->heads % p->kv_heads != 0) return ac_cu_why(why, n, "heads %% kv_heads != 0");
  if (p->mask < ATTNCHECK_MASK_NONE || p->mask > ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT)
    return ac_cu_why(why, n, "unknown mask %d", (int)p->mask);
  if (max_d > 0 && (p->dk > max_d || p->dv > max_d))
    return ac_cu_why(why, n, "head dimension above %lld", (long long)max_d);
  if (p->tq > INT32_MAX || p->tk > INT32_MAX || p->batch * p->heads > INT32_MAX)
    return ac_cu_why(why, n, "dimension beyond the launch grid");
  for (int i = 0; i < 4; i++)
    if (p->q_stride[i] < 0 || p->k_stride[i] < 0 || p->v_stride[i] < 0 || p->o_stride[i] < 0)
      return ac_cu_why(why, n, "negative strides");
  return 1;
}

/* Reports a pending CUDA error (launch failure) into err; 0 when none. */
static inline int ac_cu_check(const char *what, char *err, size_t n)
{
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return 0;
  if (err && n) snprintf(err, n, "%s: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
  return -1;
}

/* Raises the dynamic shared memory limit of a kernel when it needs more than 48 KiB. */
template <typename F>
static inline int ac_cu_smem(F *fn, size_t bytes, const char *what, char *err, size_t n)
{
  int dev = 0, maxb = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&maxb, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
    if (err && n) snprintf(err, n, "%s: cannot query shared memory", what);
    return -1;
  }
  if (bytes > (size_t)maxb) {
    if (err && n) snprintf(err, n, "%s: needs %zu bytes of shared memory, device allows %d", what, bytes, maxb);
    return -1;
  }
  if (bytes > 48 * 1024 &&
      cudaFuncSetAttribute((const void *)fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes) != cudaSuccess)
    return ac_cu_check(what, err, n);
  return 0;
}

/* Gathers a strided [B][H][T][D] tensor into a dense one (device to device). */
template <typename T>
__global__ void ac_cu_gather(const T *src, ac_cu_strides s, int64_t B, int64_t H, int64_t TT, int64_t D, T *dst)
{
  int64_t n = B * H * TT * D;
  for (int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; x < n; x += (int64_t)gridDim.x * blockDim.x) {
    int64_t d = x % D, r = x / D;
    int64_t t = r % TT; r /= TT;
    int64_t h = r % H, b = r / H;
    dst[x] = src[ac_cu_off(s, b, h, t, d)];
  }
}
template <typename T>
__global__ void ac_cu_scatter(const T *src, int64_t B, int64_t H, int64_t TT, int64_t D, ac_cu_strides s, T *dst)
{
  int64_t n = B * H * TT * D;
  for (int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; x < n; x += (int64_t)gridDim.x * blockDim.x) {
    int64_t d = x % D, r = x / D;
    int64_t t = r % TT; r /= TT;
    int64_t h = r % H, b = r / H;
    dst[ac_cu_off(s, b, h, t, d)] = src[x];
  }
}
static inline unsigned ac_cu_grid(int64_t n, unsigned block)
{
  int64_t g = (n + block - 1) / block;
  if (g > 65535) g = 65535;
  return g < 1 ? 1u : (unsigned)g;
}
/* Dense strides of [B][H][T][D]. */
static inline ac_cu_strides ac_cu_dense(int64_t H, int64_t TT, int64_t D)
{
  ac_cu_strides s = { H * TT * D, TT * D, D, 1 };
  return s;
}

#endif
