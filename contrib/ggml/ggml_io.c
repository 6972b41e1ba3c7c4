/* ggml_io.c: what ggml can express (supports, the class of each path) and the copies between
 * attncheck's tensors and ggml's: Q, K, V, the mask (visibility, bias, ALiBi distances), o. */
#include "ggml_adapter.h"
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ggml-backend.h"
#include "ggml-cpu.h"

static int64_t at(const int64_t s[4], int64_t b, int64_t h, int64_t i, int64_t d)
{
  return b * s[0] + h * s[1] + i * s[2] + d * s[3];
}

static double load(int32_t dt, const void *base, int64_t off)
{
  switch (dt) {
  case ATTNCHECK_F64: return ((const double *)base)[off];
  case ATTNCHECK_F32: return ((const float *)base)[off];
  case ATTNCHECK_F16: return ggml_fp16_to_fp32(((const ggml_fp16_t *)base)[off]);
  case ATTNCHECK_BF16: return ggml_bf16_to_fp32(((const ggml_bf16_t *)base)[off]);
  default: return NAN;
  }
}

int acg_kv_type(int32_t dtype)
{
  switch (dtype) {
  case ATTNCHECK_F32: return GGML_TYPE_F32;
  case ATTNCHECK_F16: return GGML_TYPE_F16;
  case ATTNCHECK_BF16: return GGML_TYPE_BF16;
  default: return -1;
  }
}

/* QUANTIZED: ggml's block type of an attncheck format (the ggml formats), or -1. */
static int qf_type(int32_t fmt)
{
  switch (fmt) {
  case ATTNCHECK_QF_Q8_0: return GGML_TYPE_Q8_0;
  case ATTNCHECK_QF_Q4_0: return GGML_TYPE_Q4_0;
  case ATTNCHECK_QF_Q4_1: return GGML_TYPE_Q4_1;
  case ATTNCHECK_QF_Q5_0: return GGML_TYPE_Q5_0;
  case ATTNCHECK_QF_Q5_1: return GGML_TYPE_Q5_1;
  case ATTNCHECK_QF_IQ4_NL: return GGML_TYPE_IQ4_NL;
  default: return -1;
  }
}

/* The format of K or V ('k', 'v'), 0 when it is not quantized (or the problem predates them). */
static int32_t kv_format(const attncheck_problem *p, char which)
{
  if (p->struct_size < ATTNCHECK_PROBLEM_V5Q_SIZE) return 0;
  return which == 'k' ? p->k_format : p->v_format;
}

int acg_tensor_type(const attncheck_problem *p, char which)
{
  const int32_t fmt = kv_format(p, which);
  if (fmt) return qf_type(fmt);
  return acg_kv_type(which == 'k' ? p->k_dtype : p->v_dtype);
}

static int is_quant(int gtype)
{
  return gtype >= 0 && ggml_is_quantized((enum ggml_type)gtype);
}

static int qo_dtype_ok(int32_t dt)
{
  return dt == ATTNCHECK_F32 || dt == ATTNCHECK_F16 || dt == ATTNCHECK_BF16;
}

#ifdef ACG_HAVE_FA_SINKS
#define ACG_FA_SINKS 1
#else
#define ACG_FA_SINKS 0
#endif
#ifdef ACG_HAVE_SOFTMAX_SINKS
#define ACG_SM_SINKS 1
#else
#define ACG_SM_SINKS 0
#endif

int acg_supports(acg_path path, const attncheck_problem *p, char *why, size_t why_len)
{
  if (p->struct_size < ATTNCHECK_PROBLEM_V2_SIZE) {
    snprintf(why, why_len, "needs an ABI 2 problem");
    return 0;
  }
  if (!qo_dtype_ok(p->q_dtype) || !qo_dtype_ok(p->o_dtype)) {
    snprintf(why, why_len, "ggml takes Q as f32 and writes f32: q and o f32, f16 or bf16 only");
    return 0;
  }
  if (p->struct_size >= ATTNCHECK_PROBLEM_V5Q_SIZE && p->q_format) {
    snprintf(why, why_len, "ggml takes Q as f32: no quantized Q");
    return 0;
  }
  if (acg_tensor_type(p, 'k') < 0 || acg_tensor_type(p, 'v') < 0) {
    snprintf(why, why_len, "K and V f32, f16, bf16 or ggml's q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl only");
    return 0;
  }
  /* mul_mat(Vᵀ, P) takes V transposed, rows along the keys; ggml's blocks run along d, as
   * tensors.quant holds them (llama.cpp takes a quantized V cache only with flash attention). */
  if (path == ACG_SOFTMAX && kv_format(p, 'v')) {
    snprintf(why, why_len,
             "the path without flash attention takes V transposed: a quantized V (blocks along d) has no such "
             "layout in ggml");
    return 0;
  }
  if (p->features & (ATTNCHECK_FEAT_DESCALE | ATTNCHECK_FEAT_LAYOUTS)) {
    snprintf(why, why_len, "ggml has no descales; varlen and paged layouts are not adapted");
    return 0;
  }
  if ((p->features & ATTNCHECK_FEAT_ALIBI) && (p->features & ATTNCHECK_FEAT_BIAS)) {
    snprintf(why, why_len, "ggml multiplies its whole mask by the ALiBi slope: no bias with ALiBi");
    return 0;
  }
  if ((p->features & ATTNCHECK_FEAT_ALIBI) && p->alibi_per_batch) {
    snprintf(why, why_len, "ggml's ALiBi slopes are per head, not per batch");
    return 0;
  }
  if ((p->features & ATTNCHECK_FEAT_SINKS) && !(path == ACG_SOFTMAX ? ACG_SM_SINKS : ACG_FA_SINKS)) {
    snprintf(why, why_len, "this ggml has no sinks for this op");
    return 0;
  }
  if (!acg_backend_is_cpu()) {
    ggml_backend_load_all();
    if (!ggml_backend_dev_by_name(getenv("ATTNCHECK_GGML_BACKEND"))) {
      snprintf(why, why_len, "no ggml device %s (ATTNCHECK_GGML_BACKEND)", getenv("ATTNCHECK_GGML_BACKEND"));
      return 0;
    }
  }
  if (path == ACG_FA_REF && !acg_backend_is_cpu()) {
    snprintf(why, why_len, "use_ref is the CPU backend's (ATTNCHECK_GGML_BACKEND names another)");
    return 0;
  }
#ifndef ACG_HAVE_USE_REF
  if (path == ACG_FA_REF) {
    snprintf(why, why_len, "this ggml has no ggml_cplan.use_ref (its reference path)");
    return 0;
  }
#endif
  if (p->dk < 1 || p->dv < 1 || p->dk > INT32_MAX || p->dv > INT32_MAX) {
    snprintf(why, why_len, "dk and dv from 1 to 2^31 - 1");
    return 0;
  }
  return 1;
}

/* GGML_F32_EPR of the build (ggml_cpu_has_* report what ggml-cpu was compiled for); 0 unknown. */
static int f32_epr(void)
{
  if (ggml_cpu_has_avx512()) return 16;
  if (ggml_cpu_has_avx()) return 8;
  if (ggml_cpu_has_sse3()) return 4;
  return 0;
}

/* The path ggml_compute_forward_flash_attn_ext_f16 takes (ggml's ops.cpp: use_split_kv_path,
 * use_tiled), 'r' (scalar one_chunk), 's' (split-KV: one_chunk per chunk, merged in f32) or 't'
 * (tiled: f32 GEMM). Where the SIMD width is unknown the scalar class is named, the looser one. */
static char fa_path(acg_path path, const attncheck_problem *p)
{
  const int kt = acg_tensor_type(p, 'k'), vt = acg_tensor_type(p, 'v');
  const int f32_or_f16 = (kt == GGML_TYPE_F32 || kt == GGML_TYPE_F16) && kt == vt;
  if (path == ACG_FA_REF || !f32_or_f16) return 'r';
  if (p->tq == 1 && p->batch == 1 && p->tk >= 512) return 's';
  const int epr = f32_epr();
  if (p->tq >= 64 && epr > 0 && p->dv % epr == 0) return 't';
  return 'r';
}

/* The length from which ggml_vec_dot_f16 of this build accumulates in f16 (0: never). A build
 * with f16 vector arithmetic (__AVX512FP16__: GGML_F16_STEP 128; ARM's FP16 vector arithmetic)
 * sums its blocks of GGML_F16_STEP elements in f16 FMAs and reduces them in f16, the leftover
 * n % GGML_F16_STEP in double; other builds convert to f32. No ggml_cpu_has_* says it, so it is
 * measured once: a dot of [1, 2^-11, 0, ...] with ones is 1 + 2^-11 in f32 and 1 (the tie to
 * even) in f16, for n = 8, 16, ..., 256 through mul_mat (K's and Vᵀ's dot in both paths). */
static int f16_dot_step_measure(void)
{
  enum { NP = 6 };
  struct ggml_init_params ip = {NP * (256 * 6 + 64) + 32 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL,
                                false};
  struct ggml_context *ctx = ggml_init(ip);
  if (!ctx) return 0;
  struct ggml_tensor *r[NP];
  struct ggml_cgraph *gf = ggml_new_graph(ctx);
  for (int i = 0; i < NP; i++) {
    const int n = 8 << i;
    struct ggml_tensor *a = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, n), *b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
    for (int j = 0; j < n; j++) {
      ((ggml_fp16_t *)a->data)[j] = ggml_fp32_to_fp16(j == 0 ? 1.0f : j == 1 ? 0x1p-11f : 0.0f);
      ((float *)b->data)[j] = 1.0f;
    }
    ggml_build_forward_expand(gf, r[i] = ggml_mul_mat(ctx, a, b));
  }
  int step = 0;
  if (ggml_graph_compute_with_ctx(ctx, gf, 1) == GGML_STATUS_SUCCESS)
    for (int i = 0; i < NP && !step; i++)
      if (((const float *)r[i]->data)[0] != 1.0f + 0x1p-11f) step = 8 << i;
  ggml_free(ctx);
  return step;
}

static int f16_dot_step(void)
{
  static _Atomic int step = -1; /* measured once; a race measures it twice, to the same value */
  int v = step;
  if (v < 0) step = v = f16_dot_step_measure();
  return v;
}

/* 1 when an f16 dot product of n elements rounds in f16 on this build. */
static int f16_dot_in_f16(int64_t n)
{
  const int step = f16_dot_step();
  return step > 0 && n >= step;
}

static const char *fmt_name(int gtype)
{
  return gtype == GGML_TYPE_F16 ? "f16" : gtype == GGML_TYPE_BF16 ? "bf16" : "f32";
}

int acg_precision_of(acg_path path, const attncheck_problem *p, char *cls, size_t cls_len)
{
  if (!acg_backend_is_cpu()) return 0; /* another backend's arithmetic: --precision says it */
  const int kt = acg_tensor_type(p, 'k'), vt = acg_tensor_type(p, 'v');
  /* Q is converted to K's vec_dot type (type_traits_cpu[k].vec_dot_type, by its from_float):
   * f16 or bf16 for those K, exact when Q is already in it; q8_0 blocks for a q8_0, q4_0, q5_0 or
   * iq4_nl K (quantize_row_q8_0: d = max|x|/127 stored in f16, codes rounded to nearest): q=q8
   * (docs/numerics.md §7.18). That K is read exactly: the block dot products are integer sums of
   * codes times d_k·d_q (both f16, exact in binary32), accumulated in binary32. */
  const int q_rounded = kt != GGML_TYPE_F32 && acg_kv_type(p->q_dtype) != kt;
  char q[32] = "", rest[32] = "";
  /* Q.K through ggml_vec_dot_f16 (mul_mat, the scalar and split-KV paths): in f16 from
   * GGML_F16_STEP elements on a build with f16 vector arithmetic (f16_dot_step) */
  const int qk16 = kt == GGML_TYPE_F16 && f16_dot_in_f16(p->dk);
  if (kt == GGML_TYPE_Q4_1 || kt == GGML_TYPE_Q5_1)
    /* a q4_1 or q5_1 K takes Q as q8_1 blocks (quantize_row_q8_1): q8_0's codes and d, and the
     * block sums s = d·Σc rounded to f16 (block_q8_1.s) that K's min multiplies
     * (ggml_vec_dot_q4_1_q8_1: d_k d_q Σ c_k c_q + m_k s): q=q81 (docs/numerics.md §7.18) */
    snprintf(q, sizeof q, ",q=q81");
  else if (is_quant(kt))
    snprintf(q, sizeof q, ",q=q8");
  else if (q_rounded)
    snprintf(q, sizeof q, ",q=%s", fmt_name(kt));
  if (qk16) snprintf(q + strlen(q), sizeof q - strlen(q), ",qk=f16");
  if (path == ACG_SOFTMAX) /* P (f32, normalized) converted to Vᵀ's vec_dot type for mul_mat */
    snprintf(rest, sizeof rest, ",p=%s%s", fmt_name(vt),
             vt == GGML_TYPE_F16 && f16_dot_in_f16(p->tk) ? ",pv=f16" : "");
  else if (fa_path(path, p) == 't')
    q[0] = 0;                   /* the tiled path converts K and V to f32 and keeps Q in f32 */
  else if (vt == GGML_TYPE_F16) /* VKQ16: ggml_vec_mad_f16, ggml_vec_scale_f16 */
    snprintf(rest, sizeof rest, ",pv=f16,rs=acc");
  else if (vt == GGML_TYPE_Q4_1 || vt == GGML_TYPE_Q5_1)
    /* a quantized V goes through v_to_float (dequantize_row_*, binary32) into the f32 accumulator:
     * exact for d·c (f16 times a code of at most 8 bits), one rounding of d·c + m for q4_1, q5_1 */
    snprintf(rest, sizeof rest, ",v=f32");
  /* ggml_vec_dot_bf16 on AVX512-BF16 takes blocks of 64 through VDPBF16PS, which reads subnormal
   * inputs as 0 and flushes subnormal results whatever MXCSR says: Q.K of a bf16 K, P.V of a bf16
   * Vᵀ (mul_mat) */
  const int bf16_dot =
      (kt == GGML_TYPE_BF16 && p->dk >= 64) || (path == ACG_SOFTMAX && vt == GGML_TYPE_BF16 && p->tk >= 64);
  snprintf(cls, cls_len, "fp32%s%s%s", q, rest, bf16_dot && ggml_cpu_has_avx512_bf16() ? ",sub=daz" : "");
  return 1;
}

struct ggml_tensor *acg_copy_q(struct ggml_context *ctx, const attncheck_problem *p, const attncheck_tensors *t)
{
  struct ggml_tensor *q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, p->dk, p->tq, p->heads, p->batch);
  if (!q) return NULL;
  float *d = (float *)q->data;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++)
        for (int64_t x = 0; x < p->dk; x++) *d++ = (float)load(p->q_dtype, t->q, at(p->q_stride, b, h, i, x));
  return q;
}

/* One element of K or V in ggml's type: the stored bits for f16 and bf16, the value for f32. */
static void put_kv(void *dst, int64_t n, int32_t dt, const void *src, int64_t off)
{
  if (dt == ATTNCHECK_F32)
    ((float *)dst)[n] = ((const float *)src)[off];
  else
    memcpy((char *)dst + 2 * n, (const char *)src + 2 * off, 2);
}

/* QUANTIZED: K or V of ggml's block type gt, from tensors.quant's ggml blocks as they are: row
 * (b, h, t) of d elements is d / 32 blocks, block e at ggml[b g0 + h g1 + t g2 + e g3]. */
static struct ggml_tensor *copy_blocks(struct ggml_context *ctx, const attncheck_problem *p,
                                       const attncheck_quant_tensor *qt, int gt, int64_t d)
{
  const int64_t bs = ggml_blck_size((enum ggml_type)gt);
  const size_t ts = ggml_type_size((enum ggml_type)gt);
  if (!qt->ggml || d % bs) return NULL;
  struct ggml_tensor *r = ggml_new_tensor_4d(ctx, (enum ggml_type)gt, d, p->tk, p->kv_heads, p->batch);
  if (!r) return NULL;
  const int64_t *g = qt->ggml_stride;
  char *dst = (char *)r->data;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->kv_heads; h++)
      for (int64_t t = 0; t < p->tk; t++)
        for (int64_t e = 0; e < d / bs; e++, dst += ts)
          memcpy(dst, qt->ggml + b * g[0] + h * g[1] + t * g[2] + e * g[3], ts);
  return r;
}

/* 1 when a q4_1 or q5_1 block of K has a non-finite d or m (both f16, the block's first 4 bytes) */
static int nonfinite_dm(const attncheck_problem *p, const attncheck_quant_tensor *qt, int gt)
{
  const int64_t *g = qt->ggml_stride, nb = p->dk / ggml_blck_size((enum ggml_type)gt);
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->kv_heads; h++)
      for (int64_t t = 0; t < p->tk; t++)
        for (int64_t e = 0; e < nb; e++) {
          ggml_fp16_t dm[2];
          memcpy(dm, qt->ggml + b * g[0] + h * g[1] + t * g[2] + e * g[3], sizeof dm);
          if (!isfinite(ggml_fp16_to_fp32(dm[0])) || !isfinite(ggml_fp16_to_fp32(dm[1]))) return 1;
        }
  return 0;
}

int acg_quant_ok(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  for (int x = 1; x <= 2; x++) {
    const int gt = acg_tensor_type(p, x == 1 ? 'k' : 'v');
    if (!is_quant(gt)) continue;
    const attncheck_quant *qu = t->quant;
    if (!qu || qu->struct_size < sizeof(attncheck_quant) || qf_type(qu->t[x].format) != gt || !qu->t[x].ggml) {
      snprintf(err, err_len, "tensors.quant holds no ggml blocks of %s's format %s", x == 1 ? "K" : "V",
               ggml_type_name((enum ggml_type)gt));
      return -1;
    }
    if (x == 1 && (gt == GGML_TYPE_Q4_1 || gt == GGML_TYPE_Q5_1) && nonfinite_dm(p, &qu->t[x], gt)) {
      snprintf(err, err_len,
               ATTNCHECK_UNSUPPORTED " a non-finite %s scale or min in K: ggml's q8_1 dot multiplies the min by Q's "
                                     "block sums, not by each element (m s is no IEEE product of the elements)",
               ggml_type_name((enum ggml_type)gt));
      return -1;
    }
  }
  return 0;
}

struct ggml_tensor *acg_copy_kv(struct ggml_context *ctx, const attncheck_problem *p, const attncheck_tensors *t,
                                char which)
{
  const int32_t dt = which == 'k' ? p->k_dtype : p->v_dtype;
  const int64_t d = which == 'k' ? p->dk : p->dv, *s = which == 'k' ? p->k_stride : p->v_stride;
  const int gt = acg_tensor_type(p, which == 'k' ? 'k' : 'v');
  if (is_quant(gt)) {
    const attncheck_quant *qu = t->quant;
    if (which == 't' || !qu || qu->struct_size < sizeof(attncheck_quant)) return NULL;
    const attncheck_quant_tensor *qt = &qu->t[which == 'k' ? 1 : 2];
    if (qf_type(qt->format) != gt) return NULL;
    return copy_blocks(ctx, p, qt, gt, d);
  }
  const void *src = which == 'k' ? t->k : t->v;
  const int trans = which == 't';
  struct ggml_tensor *r = trans ? ggml_new_tensor_4d(ctx, acg_kv_type(dt), p->tk, d, p->kv_heads, p->batch)
                                : ggml_new_tensor_4d(ctx, acg_kv_type(dt), d, p->tk, p->kv_heads, p->batch);
  if (!r) return NULL;
  int64_t n = 0;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->kv_heads; h++)
      for (int64_t o = 0; o < (trans ? d : p->tk); o++)
        for (int64_t e = 0; e < (trans ? p->tk : d); e++)
          put_kv(r->data, n++, dt, src, trans ? at(s, b, h, e, o) : at(s, b, h, o, e));
  return r;
}

static int visible(const attncheck_problem *p, const attncheck_tensors *t, int64_t b, int64_t h, int64_t i, int64_t j)
{
  const int64_t br = p->tk - p->tq;
  if (p->mask == ATTNCHECK_MASK_CAUSAL && j > i) return 0;
  if (p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT && j > i + br) return 0;
  if (p->features & ATTNCHECK_FEAT_WINDOW) {
    const int64_t off = p->window_align == ATTNCHECK_ALIGN_TOP_LEFT ? 0 : br;
    if (p->window_left >= 0 && j < i + off - p->window_left) return 0;
    if (p->window_right >= 0 && j > i + off + p->window_right) return 0;
  }
  if ((p->features & ATTNCHECK_FEAT_BOOL_MASK) && !t->bool_mask[at(p->bool_mask_stride, b, h, i, j)]) return 0;
  return 1;
}

/* v in the mask's type, exactly (NaN and ±inf included), or -1. */
static int exact_in(int mtype, double v, float *out)
{
  const float f = (float)v;
  if (!isnan(v) && (double)f != v) return -1;
  if (mtype == GGML_TYPE_F16) {
    const float r = ggml_fp16_to_fp32(ggml_fp32_to_fp16(f));
    if (!isnan(f) && r != f) return -1;
  }
  *out = f;
  return 0;
}

/* ggml's slope of head h for max_bias (ops.cpp, soft_max and flash_attn_ext alike) */
static float ggml_slope(float max_bias, uint32_t n_head, uint32_t h)
{
  const uint32_t n_head_log2 = 1u << (uint32_t)floor(log2(n_head));
  const float m0 = powf(2.0f, -(max_bias) / n_head_log2);
  const float m1 = powf(2.0f, -(max_bias / 2.0f) / n_head_log2);
  return h < n_head_log2 ? powf(m0, h + 1) : powf(m1, 2 * (h - n_head_log2) + 1);
}

/* The max_bias whose slope series is the case's slopes bit for bit: from the first slope, m0 =
 * 2^(-max_bias / n_head_log2), then the floats around it. */
static int find_max_bias(const attncheck_problem *p, const float *slopes, float *mb, char *err, size_t err_len)
{
  const uint32_t n = (uint32_t)p->heads, nl2 = 1u << (uint32_t)floor(log2(n));
  if (!(slopes[0] > 0.0f && slopes[0] < 1.0f)) {
    snprintf(err, err_len, ATTNCHECK_UNSUPPORTED " ALiBi slope %g of head 0: ggml's slopes lie in (0, 1)", slopes[0]);
    return -1;
  }
  float c = (float)(-log2((double)slopes[0]) * nl2);
  for (int k = 0; k < 8; k++) c = nextafterf(c, 0.0f);
  for (int k = 0; k < 17; k++, c = nextafterf(c, INFINITY)) {
    int64_t h = 0;
    while (h < p->heads && ggml_slope(c, n, (uint32_t)h) == slopes[h]) h++;
    if (h == p->heads) {
      *mb = c;
      return 0;
    }
  }
  snprintf(err, err_len,
           ATTNCHECK_UNSUPPORTED
           " ALiBi slopes (head 0: %.9g, head %lld: %.9g) are not ggml's max_bias series for %lld heads",
           slopes[0], (long long)(p->heads - 1), slopes[p->heads - 1], (long long)p->heads);
  return -1;
}

static int needs_mask(const attncheck_problem *p)
{
  return p->mask != ATTNCHECK_MASK_NONE || (p->features & (ATTNCHECK_FEAT_WINDOW | ATTNCHECK_FEAT_BOOL_MASK |
                                                           ATTNCHECK_FEAT_BIAS | ATTNCHECK_FEAT_ALIBI));
}

int acg_build_mask(struct ggml_context *ctx, const attncheck_problem *p, const attncheck_tensors *t, int mtype,
                   struct ggml_tensor **mask, float *max_bias, char *err, size_t err_len)
{
  *mask = NULL, *max_bias = 0.0f;
  if (!needs_mask(p)) return 0;
  const int alibi = (p->features & ATTNCHECK_FEAT_ALIBI) != 0, bias = (p->features & ATTNCHECK_FEAT_BIAS) != 0;
  if (alibi && find_max_bias(p, t->alibi_slopes, max_bias, err, err_len) < 0) return -1;
  int64_t tq_rows = p->tq;
#ifdef GGML_KQ_MASK_PAD /* older ggml: the mask's rows padded to GGML_KQ_MASK_PAD */
  tq_rows = (p->tq + GGML_KQ_MASK_PAD - 1) / GGML_KQ_MASK_PAD * GGML_KQ_MASK_PAD;
#endif
  struct ggml_tensor *m = ggml_new_tensor_4d(ctx, mtype, p->tk, tq_rows, p->heads, p->batch);
  if (!m) {
    snprintf(err, err_len, "ggml: out of context memory for the mask");
    return -1;
  }
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < tq_rows; i++)
        for (int64_t j = 0; j < p->tk; j++) {
          double v = -INFINITY;
          if (i < p->tq && visible(p, t, b, h, i, j))
            v = bias    ? load(p->bias_dtype, t->bias, at(p->bias_stride, b, h, i, j))
                : alibi ? -fabs((double)(i + p->tk - p->tq - j))
                        : 0.0;
          float f;
          if (exact_in(mtype, v, &f) < 0) {
            snprintf(err, err_len,
                     ATTNCHECK_UNSUPPORTED " %s %.17g at [%lld,%lld,%lld,%lld] is not exact in ggml's %s mask",
                     alibi ? "ALiBi distance" : "bias", v, (long long)b, (long long)h, (long long)i, (long long)j,
                     mtype == GGML_TYPE_F16 ? "f16" : "f32");
            return -1;
          }
          const int64_t n = ((b * p->heads + h) * tq_rows + i) * p->tk + j;
          if (mtype == GGML_TYPE_F16)
            ((ggml_fp16_t *)m->data)[n] = ggml_fp32_to_fp16(f);
          else
            ((float *)m->data)[n] = f;
        }
  *mask = m;
  return 0;
}

void acg_store_o(const attncheck_problem *p, const attncheck_tensors *t, const float *d, int permuted)
{
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++)
        for (int64_t x = 0; x < p->dv; x++) {
          const int64_t row = permuted ? (b * p->tq + i) * p->heads + h : (b * p->heads + h) * p->tq + i;
          const float v = d[row * p->dv + x];
          const int64_t off = at(p->o_stride, b, h, i, x);
          if (p->o_dtype == ATTNCHECK_F32)
            ((float *)t->o)[off] = v;
          else if (p->o_dtype == ATTNCHECK_F16)
            ((ggml_fp16_t *)t->o)[off] = ggml_fp32_to_fp16(v);
          else
            ((ggml_bf16_t *)t->o)[off] = ggml_fp32_to_bf16(v);
        }
}
