/* tplugin_quant.c: a plugin that sees only the ABI header and reads quantized K and V (and an fp8 Q)
 * from ABI 5's tensors.quant, decoding codes and scales by the header's description alone
 * (tests/tplugin_quant.sh):
 *   quant-f64        q8_0, e4m3fn (a scale per tensor, head or token) and int8 (scale and zero
 *                    point) for K and V, e4m3fn for Q; every value decoded exactly, binary64
 *                    attention of dense cases without variants, o rounded to f32: PASS;
 *   quant-no-scale   the same reading the codes without their scales: FAIL;
 *   quant-undeclared the first with kv_formats 0: never handed a quantized case (SKIP);
 *   quant-k-only     the first refusing a quantized V (as ggml's softmax path does): `list` still
 *                    shows the dense cases it takes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attncheck_kernel.h"
#include "tplugin_qdecode.h"

static int supports(const attncheck_problem *p, char *why, size_t n)
{
  if (p->dtype != ATTNCHECK_F32 || p->features) {
    snprintf(why, n, "f32 dense cases without variants");
    return 0;
  }
  return 1;
}

/* Element (b, h, t, d) of quantized tensor q; skip_scale: the codes' values alone. */
static double value(const attncheck_quant_tensor *q, int64_t b, int64_t h, int64_t t, int64_t d, int skip_scale)
{
  const int64_t *cs = q->code_stride, *ss = q->scale_stride;
  uint8_t c = q->codes[b * cs[0] + h * cs[1] + t * cs[2] + d * cs[3]];
  int64_t e = q->granularity == ATTNCHECK_QG_BLOCK ? d / q->block : d;
  int64_t so = b * ss[0] + h * ss[1] + t * ss[2] + e * ss[3];
  switch (q->format) {
  case ATTNCHECK_QF_Q8_0: return (double)(int8_t)c * (skip_scale ? 1 : tq_f16(((const uint16_t *)q->scales)[so]));
  case ATTNCHECK_QF_E4M3FN: return tq_e4m3fn(c) * (skip_scale ? 1 : ((const float *)q->scales)[so]);
  case ATTNCHECK_QF_INT8:
    return ((double)(int8_t)c - ((const int8_t *)q->aux)[so]) * (skip_scale ? 1 : ((const float *)q->scales)[so]);
  default: return NAN;
  }
}

static double elem(const attncheck_problem *p, const attncheck_tensors *t, int x, int64_t b, int64_t h, int64_t i,
                   int64_t d, int skip)
{
  const attncheck_quant_tensor *q = t->quant && t->quant->t[x].format ? &t->quant->t[x] : NULL;
  if (q) return value(q, b, h, i, d, skip);
  const int64_t *s = x == 0 ? p->q_stride : x == 1 ? p->k_stride : p->v_stride;
  const float *a = x == 0 ? t->q : x == 1 ? t->k : t->v;
  return a[b * s[0] + h * s[1] + i * s[2] + d * s[3]];
}

static int visible(const attncheck_problem *p, int64_t i, int64_t j)
{
  if (p->mask == ATTNCHECK_MASK_CAUSAL) return j <= i;
  if (p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT) return j <= i + p->tk - p->tq;
  return 1;
}

static int attend(const attncheck_problem *p, const attncheck_tensors *t, int skip, char *err, size_t n)
{
  double *s = malloc(sizeof *s * (size_t)p->tk);
  if (!s) return snprintf(err, n, "out of memory"), 1;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) {
        int64_t kh = h / (p->heads / p->kv_heads);
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j < p->tk; j++) {
          s[j] = -INFINITY;
          if (!visible(p, i, j)) continue;
          double z = 0;
          for (int64_t d = 0; d < p->dk; d++) z += elem(p, t, 0, b, h, i, d, skip) * elem(p, t, 1, b, kh, j, d, skip);
          s[j] = z * p->scale;
          if (s[j] > m || isnan(s[j])) m = isnan(m) ? m : s[j];
        }
        for (int64_t j = 0; j < p->tk; j++) l += visible(p, i, j) ? exp(s[j] - m) : 0;
        for (int64_t d = 0; d < p->dv; d++) {
          double acc = 0;
          for (int64_t j = 0; j < p->tk; j++)
            if (visible(p, i, j)) acc += exp(s[j] - m) * elem(p, t, 2, b, kh, j, d, skip);
          ((float *)t->o)[b * p->o_stride[0] + h * p->o_stride[1] + i * p->o_stride[2] + d * p->o_stride[3]] =
              l > 0 || isnan(l) ? (float)(acc / l) : 0.0f;
        }
        if (t->lse) t->lse[(b * p->heads + h) * p->tq + i] = l > 0 || isnan(l) ? (float)(m + log(l)) : -INFINITY;
      }
  free(s);
  return 0;
}

static int run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return attend(p, t, 0, err, n);
}

static int run_no_scale(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return attend(p, t, 1, err, n);
}

static int supports_k_only(const attncheck_problem *p, char *why, size_t n)
{
  if (p->struct_size >= ATTNCHECK_PROBLEM_V5Q_SIZE && p->v_format) {
    snprintf(why, n, "a quantized V");
    return 0;
  }
  return supports(p, why, n);
}

#define KV (1u << ATTNCHECK_QF_Q8_0 | 1u << ATTNCHECK_QF_E4M3FN | 1u << ATTNCHECK_QF_INT8)
static const attncheck_kernel k_quant = {ATTNCHECK_KERNEL_INIT, .name = "quant-f64",
                                         .description = "binary64 attention over codes and scales", .precision = "fp32",
                                         .supports = supports, .run = run, .kv_formats = KV,
                                         .q_formats = 1u << ATTNCHECK_QF_E4M3FN};
static const attncheck_kernel k_no_scale = {ATTNCHECK_KERNEL_INIT, .name = "quant-no-scale",
                                            .description = "codes read without their scales", .precision = "fp32",
                                            .supports = supports, .run = run_no_scale, .kv_formats = KV,
                                            .q_formats = 1u << ATTNCHECK_QF_E4M3FN};
static const attncheck_kernel k_undeclared = {ATTNCHECK_KERNEL_INIT, .name = "quant-undeclared",
                                              .description = "quant-f64 without kv_formats", .precision = "fp32",
                                              .supports = supports, .run = run};

static const attncheck_kernel k_k_only = {ATTNCHECK_KERNEL_INIT, .name = "quant-k-only",
                                          .description = "quant-f64 refusing a quantized V", .precision = "fp32",
                                          .supports = supports_k_only, .run = run, .kv_formats = KV,
                                          .q_formats = 1u << ATTNCHECK_QF_E4M3FN};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  static const attncheck_kernel *const ks[] = {&k_quant, &k_no_scale, &k_undeclared, &k_k_only};
  *count = 4;
  return ks;
}
