/* tplugin_quant_paged.c: a plugin written from the ABI header's text alone (kernels/attncheck_kernel.h:
 * "quantized tensors", the serving layouts, and the pair (b, t) each tensor's strides take) that
 * reads quantized K and V of dense cases, varlen batches and paged caches (tests/tplugin_quant_paged.sh):
 *   paged-codes       q8_0, q4_0 (codes with their f16 block scales), e4m3fn and int8, int4 (scale
 *                     and zero point, any granularity) through code_stride and scale_stride, a paged
 *                     key j of sequence b at (page, slot) = (block_table[b][j / page_size],
 *                     j % page_size); binary64 attention, o rounded to f32;
 *   paged-ggml        q8_0 and q4_0 read from ggml's block bytes through ggml_stride instead;
 *   paged-quant-only  paged-codes declaring ATTNCHECK_CAP_QUANT_ONLY, whose supports() refuses a
 *                     case without a quantized K (`list` says so, and the fuzzer gives it quantized
 *                     varlen and paged cases). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attncheck_kernel.h"
#include "tplugin_qdecode.h"

enum { READ_CODES, READ_GGML };

/* Element (b, h, t, d) of quantized tensor q, (b, t) as its strides take them. */
static double qvalue(const attncheck_quant_tensor *q, int64_t b, int64_t h, int64_t t, int64_t d, int how)
{
  if (how == READ_GGML) {   /* block_q8_0 {f16 d; int8 qs[32]}, block_q4_0 {f16 d; uint8 qs[16]} */
    const int64_t *g = q->ggml_stride;
    const uint8_t *blk = q->ggml + b * g[0] + h * g[1] + t * g[2] + (d / 32) * g[3];
    double s = tq_f16((uint16_t)(blk[0] | blk[1] << 8));
    int j = (int)(d % 32);
    if (q->format == ATTNCHECK_QF_Q8_0) return s * (int8_t)blk[2 + j];
    return s * (((j < 16 ? blk[2 + j] : blk[2 + j - 16] >> 4) & 15) - 8);
  }
  const int64_t *cs = q->code_stride, *ss = q->scale_stride;
  uint8_t c = q->codes[b * cs[0] + h * cs[1] + t * cs[2] + d * cs[3]];
  int64_t e = q->granularity == ATTNCHECK_QG_BLOCK ? d / q->block : d;
  int64_t so = b * ss[0] + h * ss[1] + t * ss[2] + e * ss[3];
  switch (q->format) {
  case ATTNCHECK_QF_Q8_0: return (int8_t)c * tq_f16(((const uint16_t *)q->scales)[so]);
  case ATTNCHECK_QF_Q4_0: return (c - 8) * tq_f16(((const uint16_t *)q->scales)[so]);
  case ATTNCHECK_QF_E4M3FN: return tq_e4m3fn(c) * ((const float *)q->scales)[so];
  case ATTNCHECK_QF_INT8: return ((int8_t)c - ((const int8_t *)q->aux)[so]) * (double)((const float *)q->scales)[so];
  case ATTNCHECK_QF_INT4: return (c - ((const int8_t *)q->aux)[so]) * (double)((const float *)q->scales)[so];
  default: return NAN;
  }
}

/* Element (b, h, t, d) of tensor x (0 q, 1 k, 2 v): its codes and scales when quantized. */
static double elem(const attncheck_problem *p, const attncheck_tensors *t, int x, int64_t b, int64_t h, int64_t i,
                   int64_t d, int how)
{
  const attncheck_quant_tensor *q = t->quant && t->quant->t[x].format ? &t->quant->t[x] : NULL;
  if (q) return qvalue(q, b, h, i, d, how);
  const int64_t *s = x == 0 ? p->q_stride : x == 1 ? p->k_stride : p->v_stride;
  const float *a = x == 0 ? t->q : x == 1 ? t->k : t->v;
  return a[b * s[0] + h * s[1] + i * s[2] + d * s[3]];
}

static int supports(const attncheck_problem *p, char *why, size_t n)
{
  if (p->dtype != ATTNCHECK_F32 || (p->features & ATTNCHECK_FEAT_ALL)) {
    snprintf(why, n, "f32 cases without attention variants");
    return 0;
  }
  return 1;
}

/* The sequences: for sequence b, its queries (qb, q0: the (b, t) pair of query 0 and the step) and
 * keys; key j as the (b, t) pair of K and V. */
typedef struct {
  const attncheck_problem *p;
  const attncheck_tensors *t;
  int64_t tq, tk, qb, q0;   /* queries of sequence b at (qb, q0 + i), likewise o */
  int64_t b;
} seq;

static void key_at(const seq *s, int64_t j, int64_t *kb, int64_t *kt)
{
  const attncheck_problem *p = s->p;
  if (p->features & ATTNCHECK_FEAT_PAGED) {
    *kb = s->t->block_table[s->b * p->max_pages + j / p->page_size];   /* the page */
    *kt = j % p->page_size;                                            /* the slot */
  } else if (p->features & ATTNCHECK_FEAT_VARLEN) {
    *kb = 0;
    *kt = s->t->cu_seqlens_k[s->b] + j;
  } else {
    *kb = s->b;
    *kt = j;
  }
}

static int visible(const seq *s, int64_t i, int64_t j)
{
  if (s->p->mask == ATTNCHECK_MASK_CAUSAL) return j <= i;
  if (s->p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT) return j <= i + s->tk - s->tq;
  return 1;
}

static void attend_row(const seq *s, int64_t h, int64_t i, double *sc, int how)
{
  const attncheck_problem *p = s->p;
  const attncheck_tensors *t = s->t;
  int64_t kh = h / (p->heads / p->kv_heads), kb, kt;
  double m = -INFINITY, l = 0;
  for (int64_t j = 0; j < s->tk; j++) {
    sc[j] = -INFINITY;
    if (!visible(s, i, j)) continue;
    key_at(s, j, &kb, &kt);
    double z = 0;
    for (int64_t d = 0; d < p->dk; d++)
      z += elem(p, t, 0, s->qb, h, s->q0 + i, d, how) * elem(p, t, 1, kb, kh, kt, d, how);
    sc[j] = z * p->scale;
    if (sc[j] > m || isnan(sc[j])) m = isnan(m) ? m : sc[j];
  }
  for (int64_t j = 0; j < s->tk; j++) l += visible(s, i, j) ? exp(sc[j] - m) : 0;
  for (int64_t d = 0; d < p->dv; d++) {
    double acc = 0;
    for (int64_t j = 0; j < s->tk; j++) {
      if (!visible(s, i, j)) continue;
      key_at(s, j, &kb, &kt);
      acc += exp(sc[j] - m) * elem(p, t, 2, kb, kh, kt, d, how);
    }
    ((float *)t->o)[s->qb * p->o_stride[0] + h * p->o_stride[1] + (s->q0 + i) * p->o_stride[2] + d * p->o_stride[3]] =
        l > 0 || isnan(l) ? (float)(acc / l) : 0.0f;
  }
  if (!t->lse) return;
  float v = l > 0 || isnan(l) ? (float)(m + log(l)) : -INFINITY;
  if (p->features & ATTNCHECK_FEAT_LAYOUTS) t->lse[h * p->total_q + s->q0 + i] = v;   /* [heads][total_q] */
  else t->lse[(s->b * p->heads + h) * p->tq + i] = v;
}

static int attend(const attncheck_problem *p, const attncheck_tensors *t, int how, char *err, size_t n)
{
  const int lay = (p->features & ATTNCHECK_FEAT_LAYOUTS) != 0;
  double *sc = malloc(sizeof *sc * (size_t)(p->tk + 1));
  if (!sc) return snprintf(err, n, "out of memory"), 1;
  for (int64_t b = 0; b < p->batch; b++) {
    seq s = {p, t, p->tq, p->tk, b, 0, b};
    if (lay) {
      s.qb = 0;
      s.q0 = t->cu_seqlens_q[b];
      s.tq = t->cu_seqlens_q[b + 1] - t->cu_seqlens_q[b];
      s.tk = p->features & ATTNCHECK_FEAT_PAGED ? t->cache_seqlens[b] : t->cu_seqlens_k[b + 1] - t->cu_seqlens_k[b];
    }
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < s.tq; i++) attend_row(&s, h, i, sc, how);
  }
  free(sc);
  return 0;
}

static int run_codes(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return attend(p, t, READ_CODES, err, n);
}

static int run_ggml(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return attend(p, t, READ_GGML, err, n);
}

static int supports_quant_k(const attncheck_problem *p, char *why, size_t n)
{
  if (!p->k_format) {   /* what a kernel of quantized caches says of a plain one */
    snprintf(why, n, "K is not quantized");
    return 0;
  }
  return supports(p, why, n);
}

#define CAPS (ATTNCHECK_FEAT_VARLEN | ATTNCHECK_FEAT_PAGED)
#define KV                                                                                                        \
  (1u << ATTNCHECK_QF_Q8_0 | 1u << ATTNCHECK_QF_Q4_0 | 1u << ATTNCHECK_QF_E4M3FN | 1u << ATTNCHECK_QF_INT8 | \
   1u << ATTNCHECK_QF_INT4)
static const attncheck_kernel k_codes = {ATTNCHECK_KERNEL_INIT, .name = "paged-codes",
                                         .description = "binary64 attention over codes and scales, every layout",
                                         .precision = "fp32", .caps = CAPS, .supports = supports, .run = run_codes,
                                         .kv_formats = KV};
static const attncheck_kernel k_ggml = {ATTNCHECK_KERNEL_INIT, .name = "paged-ggml",
                                        .description = "binary64 attention over ggml's q8_0 and q4_0 blocks",
                                        .precision = "fp32", .caps = CAPS, .supports = supports, .run = run_ggml,
                                        .kv_formats = 1u << ATTNCHECK_QF_Q8_0 | 1u << ATTNCHECK_QF_Q4_0};
static const attncheck_kernel k_qonly = {ATTNCHECK_KERNEL_INIT, .name = "paged-quant-only",
                                         .description = "paged-codes taking quantized caches only", .precision = "fp32",
                                         .caps = CAPS | ATTNCHECK_CAP_QUANT_ONLY, .supports = supports_quant_k,
                                         .run = run_codes, .kv_formats = KV};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  static const attncheck_kernel *const ks[] = {&k_codes, &k_ggml, &k_qonly};
  *count = 3;
  return ks;
}
