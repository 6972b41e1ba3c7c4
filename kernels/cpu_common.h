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
 * heads % kv_heads == 0, finite scale (and representable in binary32 when f32_scale), and no
 * ABI 2 feature (ac_cpu_supports_caps for kernels with some). 1 = supported; 0 with the
 * reason in why. */
int ac_cpu_supports(const attncheck_problem *p, int dt, int f32_scale, char *why, size_t why_len);

/* A positive block size from environment variable name (def when unset).
 * 0, or -1 with a message in err when the value is not an integer in [1, 65536]. */
int ac_cpu_env_block(const char *name, int64_t def, int64_t *out, char *err, size_t err_len);

/* Zero-filled scratch of n elements of size sz (NULL when out of memory). */
void *ac_cpu_scratch(int64_t n, size_t sz);

/* Checks every CPU kernel makes plus the ABI 2 ones: the case's feature bits inside caps, the
 * per-tensor dtypes (dt everywhere; with ATTNCHECK_FEAT_MIXED_DTYPES in caps, K and V may also
 * be f16 or bf16 while Q and O stay dt, and an fp8 kernel's O may be bf16, f16 or f32 while Q,
 * K and V stay dt), softcap, window and bias dtype sane. */
int ac_cpu_supports_caps(const attncheck_problem *p, int dt, uint32_t caps, char *why, size_t why_len);

/* Defines the host kernel SYM (an attncheck_kernel) on dtype DT with ABI 2 caps CAPS whose run
 * calls RUN(DT, NAME, p, t, err, err_len); supports() is ac_cpu_supports_caps. */
#define AC_CPU_KERNEL_CAPS(SYM, DT, NAME, PREC, CAPS, DESC, RUN)                                          \
  static int SYM##_supports(const attncheck_problem *p, char *why, size_t why_len)                        \
  {                                                                                                        \
    return ac_cpu_supports_caps(p, DT, CAPS, why, why_len);                                                \
  }                                                                                                        \
  static int SYM##_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)  \
  {                                                                                                        \
    return RUN(DT, NAME, p, t, err, err_len);                                                              \
  }                                                                                                        \
  extern const attncheck_kernel SYM;                                                                       \
  const attncheck_kernel SYM = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), NAME, DESC, PREC,         \
                                ATTNCHECK_MEM_HOST, CAPS, SYM##_supports, SYM##_run, {NULL, NULL, NULL, NULL}, \
                                NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};

/* A kernel without ABI 2 features (caps 0). */
#define AC_CPU_KERNEL(SYM, DT, NAME, PREC, DESC, RUN) AC_CPU_KERNEL_CAPS(SYM, DT, NAME, PREC, 0u, DESC, RUN)

/* ---- ABI 2 variants (attncheck_kernel.h) --------------------------------------------------- */

/* The score transformations after the scale. */
#define AC_CPU_SCORE_FEATS (ATTNCHECK_FEAT_SOFTCAP | ATTNCHECK_FEAT_ALIBI | ATTNCHECK_FEAT_BIAS | ATTNCHECK_FEAT_BOOL_MASK)

/* What a kernel reads of a case's variants: per case (ac_cpu_vx_init) and per head
 * (ac_cpu_vx_head). For a plain case f is 0, the dtypes are dt, scale is the problem's scale
 * in binary32, dv is 1 and there is no sink: the kernels' plain arithmetic is unchanged. */
typedef struct {
  const attncheck_problem *p;
  const attncheck_tensors *t;
  uint32_t f;                 /* p->features */
  int qd, kd, vd, od;         /* per-tensor dtypes */
  int64_t b, h;               /* the head set by ac_cpu_vx_head */
  float scale;                /* scale0 * descale_q * descale_k (FlashAttention 3 folds them so) */
  float dv;                   /* descale_v, applied to the output (1 without DESCALE) */
  float slope;                /* ALiBi slope of (b, h) */
  float sink;                 /* sink logit of h */
  int has_sink;
  float rp;                   /* dropout: FlashAttention's rp_dropout, fl(1 / fl(1 - p)) in binary32 (1 without) */
} ac_cpu_vx;

/* 0, or -1 with a message in err when a tensor the case's features need is NULL. */
int ac_cpu_vx_init(ac_cpu_vx *x, int dt, const attncheck_problem *p, const attncheck_tensors *t, char *err,
                   size_t err_len);
/* Per-head values for query head h of batch b; scale0 is the kernel's binary32 scale. */
void ac_cpu_vx_head(ac_cpu_vx *x, int64_t b, int64_t h, float scale0);

/* Keys [*lo, *hi) that the mask and the sliding window leave to row i (*hi <= *lo: none).
 * Without a window *lo = 0 and *hi = ac_cpu_visible(p, i). Both ends never decrease with i. */
static inline void ac_cpu_vx_range(const ac_cpu_vx *x, int64_t i, int64_t *lo, int64_t *hi)
{
  const attncheck_problem *p = x->p;
  int64_t a = 0, z = ac_cpu_visible(p, i);
  if (x->f & ATTNCHECK_FEAT_WINDOW) {
    const int64_t c = i + (p->window_align == ATTNCHECK_ALIGN_TOP_LEFT ? 0 : p->tk - p->tq);
    if (p->window_left >= 0 && c - p->window_left > a) a = c - p->window_left;
    if (p->window_right >= 0 && c + p->window_right + 1 < z) z = c + p->window_right + 1;
    if (a > p->tk) a = p->tk;
    if (z < a) z = a;
  }
  *lo = a, *hi = z;
}

/* Boolean mask element of key j for row i of the current head (1 without BOOL_MASK). */
static inline int ac_cpu_vx_bmask(const ac_cpu_vx *x, int64_t i, int64_t j)
{
  if (!(x->f & ATTNCHECK_FEAT_BOOL_MASK)) return 1;
  return x->t->bool_mask[ac_cpu_off(x->p->bool_mask_stride, x->b, x->h, i, j)] != 0;
}

/* s = c tanh(s / c) in binary32 (tanhf), s unchanged without SOFTCAP. */
static inline float ac_cpu_vx_softcap(const ac_cpu_vx *x, float s)
{
  if (!(x->f & ATTNCHECK_FEAT_SOFTCAP)) return s;
  const float c = (float)x->p->softcap;
  return c * tanhf(s / c);
}

/* s - slope |i + tk - tq - j| (bottom-right distance), s unchanged without ALIBI. */
static inline float ac_cpu_vx_alibi(const ac_cpu_vx *x, int64_t i, int64_t j, float s)
{
  if (!(x->f & ATTNCHECK_FEAT_ALIBI)) return s;
  const int64_t d = i + x->p->tk - x->p->tq - j;
  return s - x->slope * (float)(d < 0 ? -d : d);
}

/* s + bias[b][h][i][j] in binary32, s unchanged without BIAS. */
static inline float ac_cpu_vx_bias(const ac_cpu_vx *x, int64_t i, int64_t j, float s)
{
  if (!(x->f & ATTNCHECK_FEAT_BIAS)) return s;
  return s + ac_cpu_load_f32(x->p->bias_dtype, x->t->bias, ac_cpu_off(x->p->bias_stride, x->b, x->h, i, j));
}

/* The score of key j for row i from s = scale * d (FlashAttention's order: softcap, ALiBi,
 * bias); -inf where the boolean mask hides the key. */
static inline float ac_cpu_vx_score(const ac_cpu_vx *x, int64_t i, int64_t j, float s)
{
  if (!ac_cpu_vx_bmask(x, i, j)) return -INFINITY;
  return ac_cpu_vx_bias(x, i, j, ac_cpu_vx_alibi(x, i, j, ac_cpu_vx_softcap(x, s)));
}

/* 1 when the boolean mask hides every key [j0, j0 + cols) from every row [i0, i0 + rows)
 * (0 without BOOL_MASK): a tiled kernel skips that tile. */
int ac_cpu_vx_tile_hidden(const ac_cpu_vx *x, int64_t i0, int64_t rows, int64_t j0, int64_t cols);

/* Writes row i of the current head as a row without any visible key: o = 0, and lse (when not
 * NULL) the sink logit, or -inf without a sink. */
void ac_cpu_vx_empty_row(const ac_cpu_vx *x, int64_t i, float *lse);

/* Dropout (ATTNCHECK_FEAT_DROPOUT): the keep value, 0 or 1, of key j for row i of the current head, in the
 * mask the kernel writes (tensors.dropout_mask). */
static inline float ac_cpu_vx_keep(const ac_cpu_vx *x, int64_t i, int64_t j)
{
  const attncheck_problem *p = x->p;
  return x->t->dropout_mask[((x->b * p->heads + x->h) * p->tq + i) * p->tk + j];
}
/* The keep-mask of problem p from its seed by the reference generator (src/core/dropout.h) into mask
 * [batch][heads][tq][tk]; per_head 0 draws head 0's mask for every head (a mutant's generator). */
void ac_cpu_drop_fill(const attncheck_problem *p, uint8_t *mask, int per_head);

/* Stores o[b][h][i][e] = val (times descale_v with DESCALE) in the output dtype. */
static inline void ac_cpu_vx_store_o(const ac_cpu_vx *x, int64_t i, int64_t e, float val)
{
  if (x->f & ATTNCHECK_FEAT_DESCALE) val *= x->dv;
  ac_cpu_store_f32(x->od, x->t->o, ac_cpu_off(x->p->o_stride, x->b, x->h, i, e), val);
}

/* The correct built-in CPU kernels (cpu_*.c). */
extern const attncheck_kernel ac_cpu_naive_f64;
extern const attncheck_kernel ac_cpu_naive_f32, ac_cpu_naive_f16, ac_cpu_naive_bf16;
extern const attncheck_kernel ac_cpu_naive_scaleq_f16, ac_cpu_naive_scaleq_bf16;
extern const attncheck_kernel ac_cpu_flash_f32, ac_cpu_flash_f16, ac_cpu_flash_bf16;
extern const attncheck_kernel ac_cpu_flash_e4m3, ac_cpu_flash_e5m2;
extern const attncheck_kernel ac_cpu_flash_exp2_f32, ac_cpu_naive_nolse_f32;
extern const attncheck_kernel ac_cpu_splitkv_f32, ac_cpu_splitkv_fa_f32, ac_cpu_naive_scaleq_f32;
extern const attncheck_kernel ac_cpu_cublas_f16, ac_cpu_cublas_bf16;
/* cpu_cublas.c: the GEMM composite; sentinel 0 masks with -inf, otherwise adds sentinel. */
int ac_cpu_cublas_impl(float sentinel, int dt, const char *name, const attncheck_problem *p,
                       const attncheck_tensors *t, char *err, size_t err_len);

#endif
