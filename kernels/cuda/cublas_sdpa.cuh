/* cublas_sdpa.cuh: the cuBLAS composite behind cublas-sdpa-f32 and cublas-sdpa-f16:
 * S = scale·Q·Kᵀ by a strided batched GEMM (one call per batch and kv head, batched over the
 * query heads of its group, K broadcast with stride 0), stored in the input dtype; a masking
 * softmax kernel (one block per row, fp32 arithmetic) writes P in place in the input dtype and
 * the LSE; O = P·V by a second strided batched GEMM. fp32: pedantic math (no TF32);
 * fp16: fp32 compute, tensor cores allowed. Row-major [t][d] with unit d stride is the
 * column-major d x t matrix cuBLAS expects, so Sᵀ = K·Qᵀ and Oᵀ = Vᵀ·Pᵀ. */
#ifndef AC_CUDA_CUBLAS_SDPA_CUH
#define AC_CUDA_CUBLAS_SDPA_CUH
#include <cublas_v2.h>
#include "common.cuh"

#define AC_CB_THREADS 128
#define AC_CB_MAX_SCORES ((int64_t)1 << 31)

template <typename T> struct ac_cb_traits;
template <> struct ac_cb_traits<float> {
  static constexpr cudaDataType_t type = CUDA_R_32F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F_PEDANTIC;
  static constexpr cublasMath_t math = CUBLAS_PEDANTIC_MATH;
};
template <> struct ac_cb_traits<__half> {
  static constexpr cudaDataType_t type = CUDA_R_16F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  static constexpr cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

template <bool IS_MAX>
__device__ static float ac_cb_reduce(float x, float *red)
{
  red[threadIdx.x] = x;
  __syncthreads();
  for (int s = AC_CB_THREADS / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) {
      float a = red[threadIdx.x], b = red[threadIdx.x + s];
      red[threadIdx.x] = IS_MAX ? fmaxf(a, b) : a + b;
    }
    __syncthreads();
  }
  float r = red[0];
  __syncthreads();
  return r;
}

/* One block per row of S ([B][H][tq][tk], dense): P in place, LSE (-inf for an empty row). */
template <typename T>
__global__ void __launch_bounds__(AC_CB_THREADS)
ac_cb_softmax(T *sp, int64_t tq, int64_t tk, int mask, float *lse)
{
  __shared__ float red[AC_CB_THREADS];
  const int64_t row = blockIdx.x, i = row % tq;
  T *s = sp + row * tk;
  const int64_t last = ac_cu_last_key(mask, i, tq, tk);
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j <= last; j += AC_CB_THREADS) m = fmaxf(m, ac_cu_ld(s + j));
  m = ac_cb_reduce<true>(m, red);
  float l = 0.0f;
  if (last >= 0)
    for (int64_t j = threadIdx.x; j <= last; j += AC_CB_THREADS) l += expf(ac_cu_ld(s + j) - m);
  l = ac_cb_reduce<false>(l, red);
  for (int64_t j = threadIdx.x; j < tk; j += AC_CB_THREADS)
    ac_cu_st(s + j, j <= last ? expf(ac_cu_ld(s + j) - m) / l : 0.0f);
  if (lse && threadIdx.x == 0) lse[row] = last < 0 ? -INFINITY : m + logf(l);
}

/* The process's cuBLAS handle (created in the child that runs cases, kept for later cases). */
static inline cublasHandle_t ac_cb_handle(char *err, size_t n)
{
  static cublasHandle_t h = NULL;
  static int dev = -1;
  int cur = 0;
  cudaGetDevice(&cur);
  if (h && dev != cur) { cublasDestroy(h); h = NULL; }
  if (!h) {
    cublasStatus_t st = cublasCreate(&h);
    if (st != CUBLAS_STATUS_SUCCESS) {
      snprintf(err, n, "cublasCreate: %s", cublasGetStatusString(st));
      h = NULL;
      return NULL;
    }
    dev = cur;
  }
  return h;
}

static inline bool ac_cb_direct(const ac_cu_strides &s, int64_t d)
{
  return s.s3 == 1 && s.s2 >= d && s.s2 <= INT32_MAX;
}

template <typename T>
static int ac_cb_supports(const attncheck_problem *p, int dtype, const char *dname, char *why, size_t n)
{
  if (!ac_cu_supports_common(p, dtype, dname, 0, why, n)) return 0;
  if (p->batch * p->heads * p->tq > INT32_MAX || p->tq * p->tk > AC_CB_MAX_SCORES / (p->batch * p->heads) ||
      p->dk > INT32_MAX || p->dv > INT32_MAX)
    return ac_cu_why(why, n, "score matrix above 2^31 elements");
  return 1;
}

#define AC_CB_TRY(call, what)                                                                          \
  do {                                                                                                 \
    cublasStatus_t st_ = (call);                                                                       \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                                \
      snprintf(err, n, "%s: %s: %s", name, what, cublasGetStatusString(st_));                          \
      rc = -1;                                                                                         \
      goto done;                                                                                       \
    }                                                                                                  \
  } while (0)
#define AC_CB_CUDA(call, what)                                                                         \
  do {                                                                                                 \
    cudaError_t ce_ = (call);                                                                          \
    if (ce_ != cudaSuccess) {                                                                          \
      snprintf(err, n, "%s: %s: %s", name, what, cudaGetErrorName(ce_));                               \
      rc = -1;                                                                                         \
      goto done;                                                                                       \
    }                                                                                                  \
  } while (0)

template <typename T>
static int ac_cb_run(const char *name, const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  typedef ac_cb_traits<T> tr;
  cudaStream_t stream = (cudaStream_t)t->stream;
  const ac_cu_shape s = ac_cu_make_shape(p);
  const int64_t B = p->batch, H = p->heads, KVH = p->kv_heads, G = H / KVH;
  const int64_t tq = p->tq, tk = p->tk, dk = p->dk, dv = p->dv;
  const T *q = (const T *)t->q, *k = (const T *)t->k, *v = (const T *)t->v;
  T *o = (T *)t->o;
  ac_cu_strides qs = s.q, ks = s.k, vs = s.v, os = s.o;
  T *qd = NULL, *kd = NULL, *vd = NULL, *od = NULL, *sp = NULL;
  const float scale = s.scale, one = 1.0f, zero = 0.0f;
  int rc = 0;
  cublasHandle_t hd = ac_cb_handle(err, n);
  if (!hd) return -1;
  AC_CB_TRY(cublasSetStream(hd, stream), "cublasSetStream");
  AC_CB_TRY(cublasSetMathMode(hd, tr::math), "cublasSetMathMode");

  /* Layouts cuBLAS cannot address directly are copied to dense ones. */
  if (!ac_cb_direct(qs, dk)) {
    AC_CB_CUDA(cudaMalloc((void **)&qd, sizeof(T) * B * H * tq * dk), "cudaMalloc");
    ac_cu_gather<T><<<ac_cu_grid(B * H * tq * dk, 256), 256, 0, stream>>>(q, qs, B, H, tq, dk, qd);
    q = qd;
    qs = ac_cu_dense(H, tq, dk);
  }
  if (!ac_cb_direct(ks, dk)) {
    AC_CB_CUDA(cudaMalloc((void **)&kd, sizeof(T) * B * KVH * tk * dk), "cudaMalloc");
    ac_cu_gather<T><<<ac_cu_grid(B * KVH * tk * dk, 256), 256, 0, stream>>>(k, ks, B, KVH, tk, dk, kd);
    k = kd;
    ks = ac_cu_dense(KVH, tk, dk);
  }
  if (!ac_cb_direct(vs, dv)) {
    AC_CB_CUDA(cudaMalloc((void **)&vd, sizeof(T) * B * KVH * tk * dv), "cudaMalloc");
    ac_cu_gather<T><<<ac_cu_grid(B * KVH * tk * dv, 256), 256, 0, stream>>>(v, vs, B, KVH, tk, dv, vd);
    v = vd;
    vs = ac_cu_dense(KVH, tk, dv);
  }
  {
    ac_cu_strides ow = os;
    T *ob = o;
    if (!ac_cb_direct(os, dv)) {
      AC_CB_CUDA(cudaMalloc((void **)&od, sizeof(T) * B * H * tq * dv), "cudaMalloc");
      ob = od;
      ow = ac_cu_dense(H, tq, dv);
    }
    AC_CB_CUDA(cudaMalloc((void **)&sp, sizeof(T) * B * H * tq * tk), "cudaMalloc");
    AC_CB_CUDA(cudaGetLastError(), "gather launch");

    for (int64_t b = 0; b < B; b++)
      for (int64_t g = 0; g < KVH; g++) {
        const int64_t h0 = g * G;
        AC_CB_TRY(cublasGemmStridedBatchedEx(hd, CUBLAS_OP_T, CUBLAS_OP_N, (int)tk, (int)tq, (int)dk, &scale,
                                             k + ac_cu_off(ks, b, g, 0, 0), tr::type, (int)ks.s2, 0,
                                             q + ac_cu_off(qs, b, h0, 0, 0), tr::type, (int)qs.s2, qs.s1, &zero,
                                             sp + (b * H + h0) * tq * tk, tr::type, (int)tk, tq * tk, (int)G,
                                             tr::compute, CUBLAS_GEMM_DEFAULT),
                  "Q·Kᵀ GEMM");
      }
    ac_cb_softmax<T><<<(unsigned)(B * H * tq), AC_CB_THREADS, 0, stream>>>(sp, tq, tk, p->mask, t->lse);
    AC_CB_CUDA(cudaGetLastError(), "softmax launch");
    for (int64_t b = 0; b < B; b++)
      for (int64_t g = 0; g < KVH; g++) {
        const int64_t h0 = g * G;
        AC_CB_TRY(cublasGemmStridedBatchedEx(hd, CUBLAS_OP_N, CUBLAS_OP_N, (int)dv, (int)tq, (int)tk, &one,
                                             v + ac_cu_off(vs, b, g, 0, 0), tr::type, (int)vs.s2, 0,
                                             sp + (b * H + h0) * tq * tk, tr::type, (int)tk, tq * tk, &zero,
                                             ob + ac_cu_off(ow, b, h0, 0, 0), tr::type, (int)ow.s2, ow.s1, (int)G,
                                             tr::compute, CUBLAS_GEMM_DEFAULT),
                  "P·V GEMM");
      }
    if (od) {
      ac_cu_scatter<T><<<ac_cu_grid(B * H * tq * dv, 256), 256, 0, stream>>>(od, B, H, tq, dv, os, o);
      AC_CB_CUDA(cudaGetLastError(), "scatter launch");
    }
  }
  /* Scratch is freed below: wait for the stream first. */
  AC_CB_CUDA(cudaStreamSynchronize(stream), "cudaStreamSynchronize");

done:
  if (rc) cudaStreamSynchronize(stream);
  cudaFree(qd); cudaFree(kd); cudaFree(vd); cudaFree(od); cudaFree(sp);
  return rc;
}

#undef AC_CB_TRY
#undef AC_CB_CUDA
#endif
