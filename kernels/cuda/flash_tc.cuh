/* flash_tc.cuh: the FlashAttention-2-style tensor-core kernel behind cuda-flash-f16 and
 * cuda-flash-bf16 (wmma 16x16x16, fp32 accumulation). A block of 64 query rows (four warps of
 * 16 rows) walks 64-key tiles. S = Q·Kᵀ goes to shared memory in fp32; the online softmax keeps
 * m and l in fp32 (l sums the unrounded P); P is rounded to the input dtype before P·V, as
 * FlashAttention-2 does; the O accumulator lives in shared memory in fp32 so that each row can
 * be rescaled. Head dimensions are zero-padded to multiples of 16. Like FlashAttention-2, a NaN
 * in a V row that is visible to some row of the block but masked for another reaches the
 * latter through 0·NaN in the tensor-core product. */
#ifndef AC_CUDA_FLASH_TC_CUH
#define AC_CUDA_FLASH_TC_CUH
#include <mma.h>
#include "common.cuh"

#define AC_TC_BR 64
#define AC_TC_BC 64
#define AC_TC_WARPS 4
#define AC_TC_THREADS (32 * AC_TC_WARPS)
#define AC_TC_MAXD 128

template <typename T> __device__ static inline T ac_tc_zero();
template <> __device__ inline __half ac_tc_zero<__half>() { return __float2half_rn(0.0f); }
template <> __device__ inline __nv_bfloat16 ac_tc_zero<__nv_bfloat16>() { return __float2bfloat16_rn(0.0f); }

struct ac_tc_layout {
  int dkp, dvp, ldq, ldv, lds, ldp, ldo;
  size_t off_k, off_v, off_s, off_p, off_o, bytes;
};

static inline size_t ac_tc_align(size_t x) { return (x + 127) & ~(size_t)127; }

template <typename T>
static inline ac_tc_layout ac_tc_make_layout(int64_t dk, int64_t dv)
{
  ac_tc_layout L;
  L.dkp = (int)((dk + 15) / 16 * 16);
  L.dvp = (int)((dv + 15) / 16 * 16);
  L.ldq = L.dkp + 8;          /* T elements; multiple of 8, rows of 16 stay 32-byte aligned */
  L.ldv = L.dvp + 8;
  L.lds = AC_TC_BC + 4;       /* float */
  L.ldp = AC_TC_BC + 8;       /* T */
  L.ldo = L.dvp + 4;          /* float */
  size_t q = ac_tc_align(sizeof(T) * AC_TC_BR * L.ldq);
  L.off_k = q;
  L.off_v = L.off_k + ac_tc_align(sizeof(T) * AC_TC_BC * L.ldq);
  L.off_s = L.off_v + ac_tc_align(sizeof(T) * AC_TC_BC * L.ldv);
  L.off_p = L.off_s + ac_tc_align(sizeof(float) * AC_TC_BR * L.lds);
  L.off_o = L.off_p + ac_tc_align(sizeof(T) * AC_TC_BR * L.ldp);
  L.bytes = L.off_o + ac_tc_align(sizeof(float) * AC_TC_BR * L.ldo);
  return L;
}

template <typename T>
__global__ void __launch_bounds__(AC_TC_THREADS)
ac_flash_tc_kernel(ac_cu_shape s, ac_tc_layout L, const T *q, const T *k, const T *v, T *o, float *lse)
{
  using namespace nvcuda;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T *Qs = (T *)smem_raw;
  T *Ks = (T *)(smem_raw + L.off_k);
  T *Vs = (T *)(smem_raw + L.off_v);
  float *Ss = (float *)(smem_raw + L.off_s);
  T *Ps = (T *)(smem_raw + L.off_p);
  float *Os = (float *)(smem_raw + L.off_o);

  const int64_t ntile = (s.tq + AC_TC_BR - 1) / AC_TC_BR;
  const int64_t r0 = (blockIdx.x % ntile) * AC_TC_BR;
  const int64_t bh = blockIdx.x / ntile;
  const int64_t h = bh % s.heads, b = bh / s.heads;
  const int64_t kh = h / (s.heads / s.kv_heads);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int dk = (int)s.dk, dv = (int)s.dv;
  const int64_t rlast = r0 + AC_TC_BR - 1 < s.tq ? r0 + AC_TC_BR - 1 : s.tq - 1;
  const int64_t blk_last = ac_cu_last_key(s.mask, rlast, s.tq, s.tk);

  /* The row this lane pair owns in the softmax step, and its half of the columns. */
  const int row = warp * 16 + lane / 2, half = lane % 2;
  const int64_t i = r0 + row;
  const int64_t my_last = i < s.tq ? ac_cu_last_key(s.mask, i, s.tq, s.tk) : -1;

  for (int x = tid; x < AC_TC_BR * L.dkp; x += AC_TC_THREADS) {
    int r = x / L.dkp, t = x % L.dkp;
    Qs[r * L.ldq + t] = (r0 + r < s.tq && t < dk) ? q[ac_cu_off(s.q, b, h, r0 + r, t)] : ac_tc_zero<T>();
  }
  for (int x = tid; x < AC_TC_BR * L.ldo; x += AC_TC_THREADS) Os[x] = 0.0f;

  float m = -INFINITY, l = 0.0f;

  for (int64_t j0 = 0; j0 <= blk_last; j0 += AC_TC_BC) {
    __syncthreads();
    for (int x = tid; x < AC_TC_BC * L.dkp; x += AC_TC_THREADS) {
      int c = x / L.dkp, t = x % L.dkp;
      Ks[c * L.ldq + t] = (j0 + c <= blk_last && t < dk) ? k[ac_cu_off(s.k, b, kh, j0 + c, t)] : ac_tc_zero<T>();
    }
    for (int x = tid; x < AC_TC_BC * L.dvp; x += AC_TC_THREADS) {
      int c = x / L.dvp, d = x % L.dvp;
      Vs[c * L.ldv + d] = (j0 + c <= blk_last && d < dv) ? v[ac_cu_off(s.v, b, kh, j0 + c, d)] : ac_tc_zero<T>();
    }
    __syncthreads();

    /* S (this warp's 16 rows x 64 keys) = Q·Kᵀ, fp32 accumulation. */
    for (int n = 0; n < AC_TC_BC / 16; n++) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> cf;
      wmma::fill_fragment(cf, 0.0f);
      for (int kk = 0; kk < L.dkp / 16; kk++) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> af;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> bf;
        wmma::load_matrix_sync(af, Qs + (warp * 16) * L.ldq + kk * 16, L.ldq);
        wmma::load_matrix_sync(bf, Ks + (n * 16) * L.ldq + kk * 16, L.ldq);
        wmma::mma_sync(cf, af, bf, cf);
      }
      wmma::store_matrix_sync(Ss + (warp * 16) * L.lds + n * 16, cf, L.lds, wmma::mem_row_major);
    }
    __syncwarp();

    /* Online softmax on this lane's half row. */
    const int c0 = half * (AC_TC_BC / 2);
    float mx = -INFINITY;
    for (int c = c0; c < c0 + AC_TC_BC / 2; c++)
      if (j0 + c <= my_last) mx = fmaxf(mx, Ss[row * L.lds + c] * s.scale);
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    const float m_new = fmaxf(m, mx);
    const float alpha = m == -INFINITY ? 0.0f : expf(m - m_new);
    float ps = 0.0f;
    for (int c = c0; c < c0 + AC_TC_BC / 2; c++) {
      float p = 0.0f;
      if (j0 + c <= my_last) {
        const float x = Ss[row * L.lds + c] * s.scale;
        p = x == -INFINITY ? 0.0f : expf(x - m_new);   /* a NaN score stays NaN */
      }
      ac_cu_st(Ps + row * L.ldp + c, p);
      ps += p;
    }
    ps += __shfl_xor_sync(0xffffffffu, ps, 1);
    l = alpha * l + ps;
    m = m_new;
    for (int d = half * (L.dvp / 2); d < (half + 1) * (L.dvp / 2); d++) Os[row * L.ldo + d] *= alpha;
    __syncwarp();

    /* O (this warp's 16 rows) += P·V with P in the input dtype, fp32 accumulation. */
    for (int n = 0; n < L.dvp / 16; n++) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> cf;
      wmma::load_matrix_sync(cf, Os + (warp * 16) * L.ldo + n * 16, L.ldo, wmma::mem_row_major);
      for (int kk = 0; kk < AC_TC_BC / 16; kk++) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> af;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> bf;
        wmma::load_matrix_sync(af, Ps + (warp * 16) * L.ldp + kk * 16, L.ldp);
        wmma::load_matrix_sync(bf, Vs + (kk * 16) * L.ldv + n * 16, L.ldv);
        wmma::mma_sync(cf, af, bf, cf);
      }
      wmma::store_matrix_sync(Os + (warp * 16) * L.ldo + n * 16, cf, L.ldo, wmma::mem_row_major);
    }
    __syncwarp();
  }
  __syncthreads();

  if (i >= s.tq) return;
  const bool empty = l == 0.0f;
  for (int d = half; d < dv; d += 2)
    ac_cu_st(o + ac_cu_off(s.o, b, h, i, d), empty ? 0.0f : Os[row * L.ldo + d] / l);
  if (lse && half == 0) lse[bh * s.tq + i] = empty ? INFINITY : m + logf(l);
}

template <typename T>
static int ac_flash_tc_run(const char *name, const attncheck_problem *p, const attncheck_tensors *t, char *err,
                           size_t n)
{
  ac_tc_layout L = ac_tc_make_layout<T>(p->dk, p->dv);
  if (ac_cu_smem(ac_flash_tc_kernel<T>, L.bytes, name, err, n)) return -1;
  int64_t blocks = p->batch * p->heads * ((p->tq + AC_TC_BR - 1) / AC_TC_BR);
  if (blocks > INT32_MAX) { snprintf(err, n, "%s: too many blocks", name); return -1; }
  ac_flash_tc_kernel<T><<<(unsigned)blocks, AC_TC_THREADS, L.bytes, (cudaStream_t)t->stream>>>(
      ac_cu_make_shape(p), L, (const T *)t->q, (const T *)t->k, (const T *)t->v, (T *)t->o, t->lse);
  return ac_cu_check(name, err, n);
}

#endif
