/* cpu_quant_paths.c: reference kernels of two arithmetic paths of quantized caches (docs/quantized.md
 * "Classes"), beside the dequantizing ones of cpu_quant.c:
 *   ggml-q8-ref-f32   ggml's CPU quantized path: K in q8_0, q4_0, q5_0 or iq4_nl blocks read exactly
 *                     from their bytes (the integer block dot products of ggml are exact in binary32),
 *                     Q rounded to q8_0 blocks by q8q-f32-style, V read to binary32; class q8kv-f32;
 *                     a q4_1 or q5_1 K as ggml's q8_1 dot takes it (Q's block sums in f16; q=q81,v=f32);
 *   fp8kv-fold-ref-f32 FlashAttention-3's fp8 path: the dot products of the codes, Q's and K's scales
 *                     folded into the softmax scale (two roundings in binary32), the output of the V
 *                     codes multiplied by V's scale (one more); per-tensor or per-head scales only
 *                     (a per-token scale cannot be folded: run() refuses it); class fold-f32;
 *   kv16-ref-f16      vLLM's fp8 paths and llama.cpp's CUDA tensor-core path: K and V of any format
 *   kv16-ref-bf16     dequantized to the compute dtype, each value formed in binary32 (code x scale)
 *                     and rounded to f16 (bf16), then flash-f16 (flash-bf16) on f16 (bf16) Q, or the
 *                     varlen and paged kernel of that dtype; classes kv-f16-fa2, kv-bf16-fa2. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu_common.h"
#include "cpu_ggml.h"
#include "cpu_varlen.h"
#include "quant_view.h"


static int quant_only_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t;
  snprintf(err, n, "takes quantized tensors only");
  return 1;
}

static int ggml_q8_supports(const attncheck_problem *p, char *why, size_t n)
{
  return ac_cpu_q8q_f32.supports(p, why, n);
}

/* ggml's ggml_vec_dot_q4_1_q8_1 (and q5_1's): the row of Q in q8_1 blocks (quantize_row_q8_1_ref: d =
 * max|x|/127 in binary32, codes roundf(x/d), d stored in f16, s = fl16(fl32(d sum codes))), then per
 * block of K: (d_k d_q) sumi + m_k s in binary32, summed over the blocks. */
static float q81_dot(void *ctx, const float *x, int64_t b, int64_t kvh, int64_t j)
{
  const attncheck_problem *p = ((void **)ctx)[0];
  const ac_qview_tensor *k = ((void **)ctx)[1];
  float sumf = 0.0f;
  for (int64_t e = 0; e < p->dk / 32; e++) {
    float amax = 0.0f;
    for (int t = 0; t < 32; t++) amax = fmaxf(amax, fabsf(x[e * 32 + t]));
    const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    int qc[32], sum = 0;
    for (int t = 0; t < 32; t++) sum += qc[t] = (int)roundf(x[e * 32 + t] * id);
    const float dq = ac_cpu_round_f32(ATTNCHECK_F16, d), sq = ac_cpu_round_f32(ATTNCHECK_F16, (float)sum * d);
    uint8_t c[32];
    uint16_t dk, mk;
    ac_qggml_unpack(k->format, k->ggml + b * k->ggml_stride[0] + kvh * k->ggml_stride[1] + j * k->ggml_stride[2] +
                                   e * k->ggml_stride[3],
                    c, &dk, &mk);
    int sumi = 0;
    for (int t = 0; t < 32; t++) sumi += c[t] * qc[t];
    sumf += ac_f16_to_f32(dk) * dq * (float)sumi + ac_f16_to_f32(mk) * sq;
  }
  return sumf;
}

/* K and V to binary32 (exact for q8_0, q4_0, q5_0, iq4_nl), then q8q-f32-style: Q in q8_0 blocks; a
 * q4_1 or q5_1 K as ggml takes it, against Q's q8_1 blocks (q81_dot: class q=q81, precision_of). */
static int ggml_q8_run(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err, size_t n)
{
  attncheck_tensors tt = *t;
  float *vals[2] = {NULL, NULL};
  int rc = 0;
  const int q81 = v->t[1].format == AC_QF_Q4_1 || v->t[1].format == AC_QF_Q5_1;
  for (int64_t e = 0; q81 && e < p->batch * p->kv_heads * p->tk * (p->dk / 32); e++) {   /* contiguous rows of blocks */
    uint8_t c[32];
    uint16_t d, m;
    ac_qggml_unpack(v->t[1].format, v->t[1].ggml + e * v->t[1].ggml_stride[3], c, &d, &m);
    if (!isfinite(ac_f16_to_f32(d)) || !isfinite(ac_f16_to_f32(m))) {
      snprintf(err, n, ATTNCHECK_UNSUPPORTED " a non-finite %s scale or min: the q8_1 dot's m s is not the "
                                             "elements' IEEE products", ac_qfmt_name(v->t[1].format));
      return 1;
    }
  }
  for (int i = 0; i < 2 && !rc; i++)
    if (v->t[1 + i].format && !(vals[i] = ac_cpu_quant_dequantize(p, &v->t[1 + i], "kv"[i]))) {
      snprintf(err, n, "out of memory");
      rc = 1;
    }
  if (vals[0]) tt.k = vals[0];
  if (vals[1]) tt.v = vals[1];
  const void *ctx[2] = {p, &v->t[1]};
  const ac_ggml_dot dot = {q81_dot, (void *)ctx};
  if (!rc) rc = ac_cpu_ggml_run_dot(AC_GGML_Q8, "ggml-q8-ref-f32", p, &tt, q81 ? &dot : NULL, err, n) ? 1 : 0;
  free(vals[0]);
  free(vals[1]);
  return rc;
}

/* The class of the path: q8kv-f32, or Q in q8_1 blocks against a q4_1 or q5_1 K (and a V of a min
 * format dequantized to binary32, one rounding of d c + m). */
static int ggml_q8_precision_of(const attncheck_problem *p, char *cls, size_t n)
{
  int q81 = p->k_format == AC_QF_Q4_1 || p->k_format == AC_QF_Q5_1;
  if (!q81) return 0;
  snprintf(cls, n, "q=q81,v=f32");
  return 1;
}

#define FOLD_CAPS (ATTNCHECK_FEAT_WINDOW | ATTNCHECK_FEAT_SOFTCAP | ATTNCHECK_FEAT_ALIBI | ATTNCHECK_FEAT_SINKS)

static int fold_supports(const attncheck_problem *p, char *why, size_t n)
{
  if (p->features & ATTNCHECK_FEAT_LAYOUTS) {
    snprintf(why, n, "dense cases only");
    return 0;
  }
  return ac_cpu_supports_caps(p, ATTNCHECK_F32, FOLD_CAPS, why, n);
}

/* The scale of (b, h) of a per-tensor or per-head fp8 tensor (binary32 scales); 1 unquantized. */
static float head_scale(const ac_qview_tensor *v, int64_t b, int64_t h)
{
  if (!v->format) return 1;
  return ((const float *)v->scales)[b * v->scale_stride[0] + h * v->scale_stride[1]];
}

/* The codes' own values (unscaled) of tensor x in binary32 (exact: fp8 codes are), its strides. */
static float *code_values(const attncheck_problem *p, const ac_qview_tensor *v, char x)
{
  const int isq = x == 'q';
  const int64_t H = isq ? p->heads : p->kv_heads, T = isq ? p->tq : p->tk, D = x == 'v' ? p->dv : p->dk;
  const int64_t *st = v->code_stride;
  int64_t span = 1 + (p->batch - 1) * st[0] + (H - 1) * st[1] + (T - 1) * st[2] + (D - 1) * st[3];
  float *out = malloc((size_t)span * sizeof *out);
  if (!out) return NULL;
  for (int64_t k = 0; k < span; k++) out[k] = NAN;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t t = 0; t < T; t++)
        for (int64_t d = 0; d < D; d++) {
          int64_t o = ac_cpu_off(st, b, h, t, d);
          out[o] = (float)ac_qcode_value(v->format, v->codes[o]);
        }
  return out;
}

static int foldable(const ac_qview_tensor *v)
{
  return !v->format || v->granularity == AC_QG_TENSOR || v->granularity == AC_QG_HEAD;
}

/* One query head (b, h) as a problem of its own: scale fl(fl(c q_scale) k_scale), the codes of K
 * and V, naive-f32; then o' times V's scale, rounded. */
static int fold_head(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, float *const c[3],
                     int64_t b, int64_t h, char *err, size_t n)
{
  const int64_t kh = h / (p->heads / p->kv_heads);
  attncheck_problem sp = *p;
  sp.batch = sp.heads = sp.kv_heads = 1;
  float sc = (float)p->scale;
  sc *= head_scale(&v->t[0], b, h);
  sc *= head_scale(&v->t[1], b, kh);
  sp.scale = sc;
  sp.alibi_per_batch = 0;
  attncheck_tensors st = *t;
  const int64_t *qs = v->t[0].format ? v->t[0].code_stride : p->q_stride;
  st.q = (c[0] ? c[0] : (const float *)t->q) + b * qs[0] + h * qs[1];
  memcpy(sp.q_stride, qs, sizeof sp.q_stride);
  st.k = c[1] + b * v->t[1].code_stride[0] + kh * v->t[1].code_stride[1];
  memcpy(sp.k_stride, v->t[1].code_stride, sizeof sp.k_stride);
  st.v = c[2] + b * v->t[2].code_stride[0] + kh * v->t[2].code_stride[1];
  memcpy(sp.v_stride, v->t[2].code_stride, sizeof sp.v_stride);
  float *o = (float *)t->o + b * p->o_stride[0] + h * p->o_stride[1];
  st.o = o;
  if (t->lse) st.lse = t->lse + (b * p->heads + h) * p->tq;
  if (t->alibi_slopes) st.alibi_slopes = t->alibi_slopes + (p->alibi_per_batch ? b * p->heads : 0) + h;
  if (t->sinks) st.sinks = t->sinks + h;
  if (ac_cpu_naive_f32.run(&sp, &st, err, n)) return 1;
  const float vs = head_scale(&v->t[2], b, kh);
  for (int64_t i = 0; i < p->tq; i++)
    for (int64_t e = 0; e < p->dv; e++) {
      float *x = o + i * p->o_stride[2] + e * p->o_stride[3];
      *x = *x * vs;
    }
  return 0;
}

static int fold_run(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err, size_t n)
{
  if (!v->t[1].format || !v->t[2].format || !foldable(&v->t[0]) || !foldable(&v->t[1]) || !foldable(&v->t[2])) {
    snprintf(err, n, ATTNCHECK_UNSUPPORTED " K and V with per-tensor or per-head scales only (a per-token scale "
                                           "cannot be folded into the softmax scale)");
    return 1;
  }
  float *c[3] = {NULL, NULL, NULL};
  int rc = 0;
  for (int i = 0; i < 3 && !rc; i++)
    if (v->t[i].format && !(c[i] = code_values(p, &v->t[i], "qkv"[i]))) {
      snprintf(err, n, "out of memory");
      rc = 1;
    }
  for (int64_t b = 0; b < p->batch && !rc; b++)
    for (int64_t h = 0; h < p->heads && !rc; h++) rc = fold_head(p, t, v, c, b, h, err, n);
  for (int i = 0; i < 3; i++) free(c[i]);
  return rc;
}

const attncheck_kernel ac_cpu_ggml_q8_ref_f32 = {
    ATTNCHECK_KERNEL_INIT,
    .name = "ggml-q8-ref-f32",
    .description = "ggml's CPU quantized path: K (q8_0 q4_0 q5_0 iq4_nl) read exactly from its blocks, Q rounded to "
                   "q8_0 blocks, V read to binary32, then q8q-f32-style; a q4_1 or q5_1 K against Q's q8_1 blocks "
                   "(ggml_vec_dot_q4_1_q8_1, class q=q81,v=f32)",
    .precision = "q8kv-f32",
    .memory = ATTNCHECK_MEM_HOST,
    .caps = ATTNCHECK_FEAT_ALL & ~(ATTNCHECK_FEAT_MIXED_DTYPES | ATTNCHECK_FEAT_DESCALE),
    .supports = ggml_q8_supports,
    .run = quant_only_run,
    .precision_of = ggml_q8_precision_of};

const attncheck_kernel ac_cpu_fp8fold_ref_f32 = {
    ATTNCHECK_KERNEL_INIT,
    .name = "fp8kv-fold-ref-f32",
    .description = "FlashAttention-3's fp8 path: dot products of the codes, Q's and K's scales folded into the "
                   "softmax scale, V's applied to the output (binary32; per-tensor or per-head scales)",
    .precision = "fold-f32",
    .memory = ATTNCHECK_MEM_HOST,
    .caps = FOLD_CAPS,
    .supports = fold_supports,
    .run = quant_only_run};


/* ---- kv16-ref-f16, kv16-ref-bf16 ---- */
#define KV16_CAPS \
  ((ATTNCHECK_FEAT_ALL & ~(ATTNCHECK_FEAT_MIXED_DTYPES | ATTNCHECK_FEAT_DESCALE)) | ATTNCHECK_FEAT_LAYOUTS | \
   ATTNCHECK_FEAT_QUANT_LAYOUT)

static int kv16_supports_dt(int dt, const attncheck_problem *p, char *why, size_t n)
{
  if (p->features & ATTNCHECK_FEAT_LAYOUTS) return ac_cpu_layout_supports(p, dt, why, n);
  return ac_cpu_supports_caps(p, dt, KV16_CAPS & ~ATTNCHECK_FEAT_LAYOUTS, why, n);
}
static int kv16_f16_supports(const attncheck_problem *p, char *why, size_t n) { return kv16_supports_dt(ATTNCHECK_F16, p, why, n); }
static int kv16_bf16_supports(const attncheck_problem *p, char *why, size_t n) { return kv16_supports_dt(ATTNCHECK_BF16, p, why, n); }

static int kv16_run_dt(int dt, const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err,
                       size_t n)
{
  attncheck_tensors tt = *t;
  uint16_t *vals[2] = {NULL, NULL};
  int rc = 0;
  for (int i = 0; i < 2 && !rc; i++)
    if (v->t[1 + i].format && !(vals[i] = ac_cpu_quant_dequantize16(p, &v->t[1 + i], "kv"[i], dt))) {
      snprintf(err, n, "out of memory");
      rc = 1;
    }
  if (vals[0]) tt.k = vals[0];
  if (vals[1]) tt.v = vals[1];
  const char *name = dt == ATTNCHECK_BF16 ? "kv16-ref-bf16" : "kv16-ref-f16";
  if (!rc && (p->features & ATTNCHECK_FEAT_LAYOUTS))
    rc = ac_cpu_layout_run(dt, AC_LBUG_NONE, name, p, &tt, err, n);
  else if (!rc)
    rc = (dt == ATTNCHECK_BF16 ? &ac_cpu_flash_bf16 : &ac_cpu_flash_f16)->run(p, &tt, err, n);
  free(vals[0]);
  free(vals[1]);
  return rc;
}
static int kv16_f16_run(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err, size_t n)
{
  return kv16_run_dt(ATTNCHECK_F16, p, t, v, err, n);
}
static int kv16_bf16_run(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err, size_t n)
{
  return kv16_run_dt(ATTNCHECK_BF16, p, t, v, err, n);
}

const attncheck_kernel ac_cpu_kv16_ref_f16 = {
    ATTNCHECK_KERNEL_INIT,
    .name = "kv16-ref-f16",
    .description = "K and V of any quantized format dequantized to f16 (code x scale in binary32, then rounded), "
                   "then flash-f16 (vLLM's fp8 paths, llama.cpp's CUDA tensor-core path); varlen and paged too",
    .precision = "kv-f16-fa2",
    .memory = ATTNCHECK_MEM_HOST,
    .caps = KV16_CAPS,
    .supports = kv16_f16_supports,
    .run = quant_only_run};

const attncheck_kernel ac_cpu_kv16_ref_bf16 = {
    ATTNCHECK_KERNEL_INIT,
    .name = "kv16-ref-bf16",
    .description = "K and V of any quantized format dequantized to bf16 (code x scale in binary32, then rounded), "
                   "then flash-bf16; varlen and paged too",
    .precision = "kv-bf16-fa2",
    .memory = ATTNCHECK_MEM_HOST,
    .caps = KV16_CAPS,
    .supports = kv16_bf16_supports,
    .run = quant_only_run};

#define F(x) (1u << AC_QF_##x)
const ac_quant_kernel ac_cpu_ggml_q8_entry = {&ac_cpu_ggml_q8_ref_f32,
                                              F(Q8_0) | F(Q4_0) | F(Q4_1) | F(Q5_0) | F(Q5_1) | F(IQ4_NL), 0, 1, ggml_q8_run};
const ac_quant_kernel ac_cpu_fp8fold_entry = {&ac_cpu_fp8fold_ref_f32, F(E4M3FN) | F(E4M3FNUZ) | F(E5M2),
                                              F(E4M3FN) | F(E4M3FNUZ) | F(E5M2), 1, fold_run};
#define KV16_FORMATS                                                                                          \
  (F(Q8_0) | F(Q4_0) | F(Q4_1) | F(Q5_0) | F(Q5_1) | F(IQ4_NL) | F(E4M3FN) | F(E4M3FNUZ) | F(E5M2) | F(INT8) | \
   F(UINT8) | F(INT4) | F(INT2) | F(NVFP4) | F(MXFP4))
const ac_quant_kernel ac_cpu_kv16_f16_entry = {&ac_cpu_kv16_ref_f16, KV16_FORMATS, 0, 1, kv16_f16_run};
const ac_quant_kernel ac_cpu_kv16_bf16_entry = {&ac_cpu_kv16_ref_bf16, KV16_FORMATS, 0, 1, kv16_bf16_run};
#undef F
