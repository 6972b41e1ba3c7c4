/* flash_f32.cu: cuda-flash-f32, a FlashAttention-2-style kernel: a block of 32 query rows
 * walks 32-key tiles of K and V through shared memory with an online softmax, fp32 throughout.
 * Four threads share a query row: thread `sub` owns keys sub, sub+4, ... of a tile and output
 * columns sub, sub+4, ...; the row statistics are combined with warp shuffles. */
#include "common.cuh"

#define AC_FL_BR 32
#define AC_FL_BC 32
#define AC_FL_THREADS 128
#define AC_FL_MAXD 256

template <int NACC>
__global__ void __launch_bounds__(AC_FL_THREADS)
ac_flash_f32_kernel(ac_cu_shape s, const float *q, const float *k, const float *v, float *o, float *lse)
{
  extern __shared__ float smem[];
  const int ldq = (int)s.dk + 1, ldv = (int)s.dv + 1, ldp = AC_FL_BC + 1;
  float *Qs = smem;                        /* [BR][dk+1] */
  float *Ks = Qs + AC_FL_BR * ldq;         /* [BC][dk+1] */
  float *Vs = Ks + AC_FL_BC * ldq;         /* [BC][dv+1] */
  float *Ps = Vs + AC_FL_BC * ldv;         /* [BR][BC+1] */

  const int64_t ntile = (s.tq + AC_FL_BR - 1) / AC_FL_BR;
  const int64_t r0 = (blockIdx.x % ntile) * AC_FL_BR;
  const int64_t bh = blockIdx.x / ntile;
  const int64_t h = bh % s.heads, b = bh / s.heads;
  const int64_t kh = h / (s.heads / s.kv_heads);
  const int tid = threadIdx.x, row = tid / 4, sub = tid % 4;
  const int64_t i = r0 + row;
  const int64_t my_last = i < s.tq ? ac_cu_last_key(s.mask, i, s.tq, s.tk) : -1;
  const int64_t rlast = (r0 + AC_FL_BR - 1 < s.tq ? r0 + AC_FL_BR - 1 : s.tq - 1);
  const int64_t blk_last = ac_cu_last_key(s.mask, rlast, s.tq, s.tk);   /* keys beyond are masked for every row */

  for (int x = tid; x < AC_FL_BR * (int)s.dk; x += AC_FL_THREADS) {
    int r = x / (int)s.dk, t = x % (int)s.dk;
    Qs[r * ldq + t] = r0 + r < s.tq ? q[ac_cu_off(s.q, b, h, r0 + r, t)] : 0.0f;
  }

  float m = -INFINITY, l = 0.0f;
  float acc[NACC];
#pragma unroll
  for (int a = 0; a < NACC; a++) acc[a] = 0.0f;

  for (int64_t j0 = 0; j0 <= blk_last; j0 += AC_FL_BC) {
    __syncthreads();   /* previous tile fully consumed; Q tile written */
    for (int x = tid; x < AC_FL_BC * (int)s.dk; x += AC_FL_THREADS) {
      int c = x / (int)s.dk, t = x % (int)s.dk;
      Ks[c * ldq + t] = j0 + c <= blk_last ? k[ac_cu_off(s.k, b, kh, j0 + c, t)] : 0.0f;
    }
    for (int x = tid; x < AC_FL_BC * (int)s.dv; x += AC_FL_THREADS) {
      int c = x / (int)s.dv, d = x % (int)s.dv;
      Vs[c * ldv + d] = j0 + c <= blk_last ? v[ac_cu_off(s.v, b, kh, j0 + c, d)] : 0.0f;
    }
    __syncthreads();

    float sv[AC_FL_BC / 4];
    float mx = -INFINITY;
#pragma unroll
    for (int cc = 0; cc < AC_FL_BC / 4; cc++) {
      int c = sub + 4 * cc;
      float x = -INFINITY;
      if (j0 + c <= my_last) {
        float dot = 0.0f;
        for (int t = 0; t < (int)s.dk; t++) dot = fmaf(Qs[row * ldq + t], Ks[c * ldq + t], dot);
        x = dot * s.scale;
      }
      sv[cc] = x;
      mx = fmaxf(mx, x);
    }
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float m_new = fmaxf(m, mx);
    const float alpha = m == -INFINITY ? 0.0f : expf(m - m_new);
    float ps = 0.0f;
#pragma unroll
    for (int cc = 0; cc < AC_FL_BC / 4; cc++) {
      float p = sv[cc] == -INFINITY ? 0.0f : expf(sv[cc] - m_new);
      Ps[row * ldp + sub + 4 * cc] = p;
      ps += p;
    }
    ps += __shfl_xor_sync(0xffffffffu, ps, 1);
    ps += __shfl_xor_sync(0xffffffffu, ps, 2);
    l = alpha * l + ps;
    m = m_new;
    __syncwarp();

#pragma unroll
    for (int a = 0; a < NACC; a++) acc[a] *= alpha;
    int64_t cend = my_last - j0 + 1;   /* only keys visible to this row: a masked NaN never reaches it */
    if (cend > AC_FL_BC) cend = AC_FL_BC;
    for (int c = 0; c < (int)cend; c++) {
      const float p = Ps[row * ldp + c];
#pragma unroll
      for (int a = 0; a < NACC; a++) {
        int d = sub + 4 * a;
        if (d < (int)s.dv) acc[a] = fmaf(p, Vs[c * ldv + d], acc[a]);
      }
    }
  }

  if (i >= s.tq) return;
  const bool empty = l == 0.0f;
#pragma unroll
  for (int a = 0; a < NACC; a++) {
    int d = sub + 4 * a;
    if (d < (int)s.dv) o[ac_cu_off(s.o, b, h, i, d)] = empty ? 0.0f : acc[a] / l;
  }
  if (lse && sub == 0) lse[bh * s.tq + i] = empty ? INFINITY : m + logf(l);
}

static size_t ac_flash_f32_smem(const attncheck_problem *p)
{
  return sizeof(float) * ((size_t)AC_FL_BR * (p->dk + 1) + (size_t)AC_FL_BC * (p->dk + 1) +
                          (size_t)AC_FL_BC * (p->dv + 1) + (size_t)AC_FL_BR * (AC_FL_BC + 1));
}

static int ac_flash_f32_supports(const attncheck_problem *p, char *why, size_t n)
{
  return ac_cu_supports_common(p, ATTNCHECK_F32, "f32", AC_FL_MAXD, why, n);
}

template <int NACC>
static int ac_flash_f32_launch(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  size_t smem = ac_flash_f32_smem(p);
  if (ac_cu_smem(ac_flash_f32_kernel<NACC>, smem, "cuda-flash-f32", err, n)) return -1;
  int64_t blocks = p->batch * p->heads * ((p->tq + AC_FL_BR - 1) / AC_FL_BR);
  if (blocks > INT32_MAX) { snprintf(err, n, "too many blocks"); return -1; }
  ac_flash_f32_kernel<NACC><<<(unsigned)blocks, AC_FL_THREADS, smem, (cudaStream_t)t->stream>>>(
      ac_cu_make_shape(p), (const float *)t->q, (const float *)t->k, (const float *)t->v, (float *)t->o, t->lse);
  return ac_cu_check("cuda-flash-f32 launch", err, n);
}

static int ac_flash_f32_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  if (p->dv <= 64) return ac_flash_f32_launch<16>(p, t, err, n);
  if (p->dv <= 128) return ac_flash_f32_launch<32>(p, t, err, n);
  return ac_flash_f32_launch<64>(p, t, err, n);
}

extern "C" const attncheck_kernel ac_cuda_kernel_flash_f32 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "cuda-flash-f32",
  "CUDA FlashAttention-2-style tiles (32x32) in shared memory, online softmax, fp32; head dims <= 256",
  "fp32", ATTNCHECK_MEM_CUDA, 0, ac_flash_f32_supports, ac_flash_f32_run, { NULL, NULL, NULL, NULL }, NULL, 0, 0
, 0, 0, NULL, 0, 0, NULL};
