/* cpu_common.h: what the built-in CPU kernels share: element offsets and conversions by
 * dtype, mask visibility, the kv head of a query head, problem checks, block sizes from the
 * environment, and the one loop shape GCC vectorizes at -O2 (a fixed inner width). */
#ifndef AC_CPU_COMMON_H
#define AC_CPU_COMMON_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "attncheck_kernel.h"
#include "dtype.h"

/* Scratch rows are padded to a multiple of this many elements (padding holds zeros). */
#define AC_CPU_VW 8

static inline int64_t ac_cpu_pad(int64_t n) { return (n + AC_CPU_VW - 1) / AC_CPU_VW * AC_CPU_VW; }
static inline int64_t ac_cpu_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* Element offset of [b][h][t][d] under strides s. */
static inline int64_t ac_cpu_off(const int64_t s[4], int64_t b, int64_t h, int64_t t, int64_t d)
{
  return b * s[0] + h * s[1] + t * s[2] + d * s[3];
}

/* kv head read by query head h. */
static inline int64_t ac_cpu_kv_head(const attncheck_problem *p, int64_t h)
{
  return h / (p->heads / p->kv_heads);
}

/* Number of keys visible to query row i. Every mask of the ABI makes them a prefix
 * [0, n): key j is visible iff j <= i + off, off = 0 (causal) or tk - tq (bottom-right). */
static inline int64_t ac_cpu_visible(const attncheck_problem *p, int64_t i)
{
  int64_t n;
  switch (p->mask) {
  case ATTNCHECK_MASK_CAUSAL: n = i + 1; break;
  case ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT: n = i + 1 + p->tk - p->tq; break;
  default: n = p->tk; break;
  }
  return n < 0 ? 0 : n > p->tk ? p->tk : n;
}

/* Index of row (b, h, i) in the LSE array [batch][heads][tq]. */
static inline int64_t ac_cpu_lse_index(const attncheck_problem *p, int64_t b, int64_t h, int64_t i)
{
  return (b * p->heads + h) * p->tq + i;
}

/* Exact value of an e4m3 or e5m2 byte (a table). */
float ac_cpu_fp8_value(int dt, uint8_t bits);

/* Exact load of element off of a tensor of dtype dt, as binary32 (f64 is rounded: only the
 * f64 kernel reads f64, and it reads doubles directly). */
static inline float ac_cpu_load_f32(int dt, const void *base, int64_t off)
{
  switch (dt) {
  case ATTNCHECK_F32: return ((const float *)base)[off];
  case ATTNCHECK_F16: return ac_f16_to_f32(((const uint16_t *)base)[off]);
  case ATTNCHECK_BF16: return ac_bf16_to_f32(((const uint16_t *)base)[off]);
  case ATTNCHECK_E4M3:
  case ATTNCHECK_E5M2: return ac_cpu_fp8_value(dt, ((const uint8_t *)base)[off]);
  default: return (float)((const double *)base)[off];
  }
}

/* Store x rounded once to nearest-even in dtype dt (e4m3 saturates). */
static inline void ac_cpu_store_f32(int dt, void *base, int64_t off, float x)
{
  switch (dt) {
  case ATTNCHECK_F32: ((float *)base)[off] = x; break;
  case ATTNCHECK_F16: ((uint16_t *)base)[off] = ac_f16_from_f32(x); break;
  case ATTNCHECK_BF16: ((uint16_t *)base)[off] = ac_bf16_from_f32(x); break;
  case ATTNCHECK_E4M3:
  case ATTNCHECK_E5M2: ((uint8_t *)base)[off] = (uint8_t)ac_encode_f64((ac_dtype)dt, (double)x); break;
  default: ((double *)base)[off] = (double)x; break;
  }
}

/* x rounded to dtype dt and widened back to binary32 (P before P·V in low-precision kernels). */
static inline float ac_cpu_round_f32(int dt, float x)
{
  switch (dt) {
  case ATTNCHECK_F16: return ac_f16_to_f32(ac_f16_from_f32(x));
  case ATTNCHECK_BF16: return ac_bf16_to_f32(ac_bf16_from_f32(x));
  case ATTNCHECK_E4M3:
  case ATTNCHECK_E5M2: return ac_cpu_fp8_value(dt, (uint8_t)ac_encode_f64((ac_dtype)dt, (double)x));
  default: return x;
  }
}

/* y[0..n8) += a * x[0..n8), n8 a multiple of AC_CPU_VW. The fixed inner width lets GCC
 * vectorize at -O2 without reassociating anything: each y[c] is still a sequential sum. */
static inline void ac_cpu_axpy_f32(float *restrict y, float a, const float *restrict x, int64_t n8)
{
  for (int64_t c = 0; c < n8; c += AC_CPU_VW)
    for (int u = 0; u < AC_CPU_VW; u++) y[c + u] += a * x[c + u];
}

static inline void ac_cpu_axpy_f64(double *restrict y, double a, const double *restrict x, int64_t n8)
{
  for (int64_t c = 0; c < n8; c += AC_CPU_VW)
    for (int u = 0; u < AC_CPU_VW; u++) y[c + u] += a * x[c + u];
}

static inline void ac_cpu_scal_f32(float *restrict y, float a, int64_t n8)
{
  for (int64_t c = 0; c < n8; c += AC_CPU_VW)
    for (int u = 0; u < AC_CPU_VW; u++) y[c + u] *= a;
}

/* Checks every CPU kernel makes: host problem of dtype dt, known mask, sane sizes,
 * heads % kv_heads == 0, finite scale (and representable in binary32 when f32_scale).
 * 1 = supported; 0 with the reason in why. */
int ac_cpu_supports(const attncheck_problem *p, int dt, int f32_scale, char *why, size_t why_len);

/* A positive block size from environment variable name (def when unset).
 * 0, or -1 with a message in err when the value is not an integer in [1, 65536]. */
int ac_cpu_env_block(const char *name, int64_t def, int64_t *out, char *err, size_t err_len);

/* Zero-filled scratch of n elements of size sz (NULL when out of memory). */
void *ac_cpu_scratch(int64_t n, size_t sz);

/* Defines the host kernel SYM (an attncheck_kernel) on dtype DT whose run calls
 * RUN(DT, NAME, p, t, err, err_len); supports() is the common check with a binary32 scale. */
#define AC_CPU_KERNEL(SYM, DT, NAME, PREC, DESC, RUN)                                                      \
  static int SYM##_supports(const attncheck_problem *p, char *why, size_t why_len)                        \
  {                                                                                                        \
    return ac_cpu_supports(p, DT, 1, why, why_len);                                                        \
  }                                                                                                        \
  static int SYM##_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)  \
  {                                                                                                        \
    return RUN(DT, NAME, p, t, err, err_len);                                                              \
  }                                                                                                        \
  extern const attncheck_kernel SYM;                                                                       \
  const attncheck_kernel SYM = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), NAME, DESC, PREC,         \
                                ATTNCHECK_MEM_HOST, 0, SYM##_supports, SYM##_run, {NULL, NULL, NULL, NULL}};

/* The correct built-in CPU kernels (cpu_*.c). */
extern const attncheck_kernel ac_cpu_naive_f64;
extern const attncheck_kernel ac_cpu_naive_f32, ac_cpu_naive_f16, ac_cpu_naive_bf16;
extern const attncheck_kernel ac_cpu_naive_scaleq_f16, ac_cpu_naive_scaleq_bf16;
extern const attncheck_kernel ac_cpu_flash_f32, ac_cpu_flash_f16, ac_cpu_flash_bf16;
extern const attncheck_kernel ac_cpu_flash_e4m3, ac_cpu_flash_e5m2;
extern const attncheck_kernel ac_cpu_flash_exp2_f32;
extern const attncheck_kernel ac_cpu_splitkv_f32, ac_cpu_splitkv_fa_f32, ac_cpu_naive_scaleq_f32;
extern const attncheck_kernel ac_cpu_cublas_f16, ac_cpu_cublas_bf16;
/* cpu_cublas.c: the GEMM composite; sentinel 0 masks with -inf, otherwise adds sentinel. */
int ac_cpu_cublas_impl(float sentinel, int dt, const char *name, const attncheck_problem *p,
                       const attncheck_tensors *t, char *err, size_t err_len);

#endif
