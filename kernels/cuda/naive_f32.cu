/* naive_f32.cu: cuda-naive-f32, one thread block per query row, three passes over the keys
 * (maximum, sum of exponentials, weighted sum of V), fp32 throughout. */
#include "common.cuh"

#define AC_NAIVE_THREADS 128

/* Block-wide reduction of one float per thread (max or sum); every thread gets the result. */
template <bool IS_MAX>
__device__ static float ac_naive_reduce(float x, float *red)
{
  red[threadIdx.x] = x;
  __syncthreads();
  for (int s = AC_NAIVE_THREADS / 2; s > 0; s >>= 1) {
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

__device__ static float ac_naive_score(const float *q, const float *k, const ac_cu_shape &s, int64_t b, int64_t h,
                                       int64_t kh, int64_t i, int64_t j)
{
  float acc = 0.0f;
  for (int64_t t = 0; t < s.dk; t++)
    acc = fmaf(q[ac_cu_off(s.q, b, h, i, t)], k[ac_cu_off(s.k, b, kh, j, t)], acc);
  return acc * s.scale;
}

__global__ void __launch_bounds__(AC_NAIVE_THREADS)
ac_naive_f32_kernel(ac_cu_shape s, const float *q, const float *k, const float *v, float *o, float *lse)
{
  __shared__ float red[AC_NAIVE_THREADS];
  __shared__ float pch[AC_NAIVE_THREADS];
  int64_t row = blockIdx.x;
  int64_t i = row % s.tq, bh = row / s.tq;
  int64_t h = bh % s.heads, b = bh / s.heads;
  int64_t kh = h / (s.heads / s.kv_heads);
  int64_t last = ac_cu_last_key(s.mask, i, s.tq, s.tk);
  int tid = threadIdx.x;

  if (last < 0) { /* no visible key: o = 0, lse = -inf */
    for (int64_t d = tid; d < s.dv; d += AC_NAIVE_THREADS) o[ac_cu_off(s.o, b, h, i, d)] = 0.0f;
    if (lse && tid == 0) lse[row] = -INFINITY;
    return;
  }

  float m = -INFINITY;
  for (int64_t j = tid; j <= last; j += AC_NAIVE_THREADS) m = fmaxf(m, ac_naive_score(q, k, s, b, h, kh, i, j));
  m = ac_naive_reduce<true>(m, red);

  float l = 0.0f;
  for (int64_t j = tid; j <= last; j += AC_NAIVE_THREADS) l += expf(ac_naive_score(q, k, s, b, h, kh, i, j) - m);
  l = ac_naive_reduce<false>(l, red);

  /* Pass 3: P for a chunk of keys in shared memory, then each thread its output columns. */
  const int64_t per = (s.dv + AC_NAIVE_THREADS - 1) / AC_NAIVE_THREADS;
  float acc[8];
  for (int c = 0; c < 8; c++) acc[c] = 0.0f;
  for (int64_t j0 = 0; j0 <= last; j0 += AC_NAIVE_THREADS) {
    int64_t j = j0 + tid;
    pch[tid] = j <= last ? expf(ac_naive_score(q, k, s, b, h, kh, i, j) - m) / l : 0.0f;
    __syncthreads();
    int64_t n = last - j0 + 1 < AC_NAIVE_THREADS ? last - j0 + 1 : AC_NAIVE_THREADS;
    for (int64_t c = 0; c < per; c++) {
      int64_t d = tid + c * AC_NAIVE_THREADS;
      if (d >= s.dv) break;
      float a = acc[c];
      for (int64_t jj = 0; jj < n; jj++) a = fmaf(pch[jj], v[ac_cu_off(s.v, b, kh, j0 + jj, d)], a);
      acc[c] = a;
    }
    __syncthreads();
  }
  for (int64_t c = 0; c < per; c++) {
    int64_t d = tid + c * AC_NAIVE_THREADS;
    if (d < s.dv) o[ac_cu_off(s.o, b, h, i, d)] = acc[c];
  }
  if (lse && tid == 0) lse[row] = m + logf(l);
}

static int ac_naive_f32_supports(const attncheck_problem *p, char *why, size_t n)
{
  return ac_cu_supports_common(p, ATTNCHECK_F32, "f32", 8 * AC_NAIVE_THREADS, why, n);
}

static int ac_naive_f32_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  ac_cu_shape s = ac_cu_make_shape(p);
  int64_t rows = p->batch * p->heads * p->tq;
  if (rows > INT32_MAX) { snprintf(err, n, "too many rows"); return -1; }
  ac_naive_f32_kernel<<<(unsigned)rows, AC_NAIVE_THREADS, 0, (cudaStream_t)t->stream>>>(
      s, (const float *)t->q, (const float *)t->k, (const float *)t->v, (float *)t->o, t->lse);
  return ac_cu_check("cuda-naive-f32 launch", err, n);
}

extern "C" const attncheck_kernel ac_cuda_kernel_naive_f32 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "cuda-naive-f32",
  "CUDA, one block per query row, three passes (max, sum, P*V), fp32",
  "fp32", ATTNCHECK_MEM_CUDA, 0, ac_naive_f32_supports, ac_naive_f32_run, { NULL, NULL, NULL, NULL }, NULL, 0, 0
, 0, 0, NULL, 0, 0, NULL};
