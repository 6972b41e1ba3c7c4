/* tplugin_quant.c: a plugin that sees only the ABI header and reads quantized K and V (and an fp8 Q)
 * from ABI 5's tensors.quant, decoding codes and scales by the header's description alone
 * (tests/tplugin_quant.sh):
 *   quant-f64        q8_0, e4m3fn (a scale per tensor, head or token) and int8 (scale and zero
 *                    point) for K and V, e4m3fn for Q; every value decoded exactly, binary64
 *                    attention of dense cases without variants, o rounded to f32: PASS;
 *   quant-no-scale   the same reading the codes without their scales: FAIL;
 *   quant-undeclared the first with kv_formats 0: never handed a quantized case (SKIP);
 *   quant-k-only     the first refusing a quantized V (as ggml's softmax path does): `list` still
 *                    shows the dense cases it takes;
 *   quant-layout-f64 ATTNCHECK_FEAT_QUANT_LAYOUT: int8, uint8, int4, int2 and e4m3fn with group and
 *                    tile scales, token groups, f16, bf16 and f32 scales, integer and float zero points
 *                    and codes packed low bits first, all read from problem.quant_spec; its supports()
 *                    refuses codes packed high bits first (it sees the packing);
 *   quant-store-f64  ATTNCHECK_FEAT_QUANT_STORE with store_quantizers "absmax-even-f32-sat": quantizes its
 *                    plain K and V to e4m3fn as the header describes (s = max|x| / 448 in binary32, x / s in
 *                    binary32 to the nearest e4m3fn value, ties to even, saturating) into tensors.store, then
 *                    attends over what it stored; quant-store-away rounds ties away from zero instead. */
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

static double bf16(uint16_t h)
{
  uint32_t b = (uint32_t)h << 16;
  float f;
  memcpy(&f, &b, 4);
  return f;
}

/* A scale or zero point of dtype t (quant_spec's scale_dtype, zero_dtype), element i of a. */
static double typed(int32_t t, const void *a, int64_t i)
{
  switch (t) {
  case ATTNCHECK_F16: return tq_f16(((const uint16_t *)a)[i]);
  case ATTNCHECK_BF16: return bf16(((const uint16_t *)a)[i]);
  case ATTNCHECK_QSD_I8: return ((const int8_t *)a)[i];
  case ATTNCHECK_QSD_U8: return ((const uint8_t *)a)[i];
  default: return ((const float *)a)[i];
  }
}

/* Element (b, h, t, d) of quantized tensor q of spec s (NULL: the first ABI 5 description); skip_scale:
 * the codes' values alone. */
static double value(const attncheck_quant_tensor *q, const attncheck_qspec *s, int64_t b, int64_t h, int64_t t,
                    int64_t d, int skip_scale)
{
  const int64_t *cs = q->code_stride, *ss = q->scale_stride;
  int bits = q->format == ATTNCHECK_QF_INT2 ? 2 : 4, per = s && s->packing ? 8 / bits : 1;
  uint8_t c = q->codes[b * cs[0] + h * cs[1] + t * cs[2] + (d / per) * cs[3]];
  if (per > 1) c = (uint8_t)(c >> ((d % per) * bits) & ((1u << bits) - 1));   /* low bits first (supports) */
  int64_t e = q->granularity == ATTNCHECK_QG_BLOCK ? d / q->block : d, g = s && s->token_group > 1 ? s->token_group : 1;
  int64_t so = b * ss[0] + h * ss[1] + t / g * ss[2] + e * ss[3];
  double sc = skip_scale ? 1 : s ? typed(s->scale_dtype, q->scales, so) : ((const float *)q->scales)[so];
  switch (q->format) {
  case ATTNCHECK_QF_Q8_0: return (double)(int8_t)c * (skip_scale ? 1 : tq_f16(((const uint16_t *)q->scales)[so]));
  case ATTNCHECK_QF_E4M3FN: return tq_e4m3fn(c) * sc;
  case ATTNCHECK_QF_INT8: return ((double)(int8_t)c - (s ? typed(s->zero_dtype, q->aux, so) : ((const int8_t *)q->aux)[so])) * sc;
  case ATTNCHECK_QF_INT4:
  case ATTNCHECK_QF_INT2:
  case ATTNCHECK_QF_UINT8: return ((double)c - typed(s->zero_dtype, q->aux, so)) * sc;
  default: return NAN;
  }
}

static double elem(const attncheck_problem *p, const attncheck_tensors *t, int x, int64_t b, int64_t h, int64_t i,
                   int64_t d, int skip)
{
  const attncheck_quant *src = t->store ? t->store : t->quant;   /* quantize-on-store: what it stored */
  const attncheck_quant_tensor *q = src && src->t[x].format ? &src->t[x] : NULL;
  const attncheck_qspec *qs = p->struct_size >= ATTNCHECK_PROBLEM_V5QL_SIZE && (p->features & ATTNCHECK_FEAT_QUANT_LAYOUT)
                                  ? &p->quant_spec[x]
                                  : NULL;
  if (q) return value(q, qs, b, h, i, d, skip);
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

/* ---- quantized layouts: supports() sees quant_spec ---- */
static int supports_layout(const attncheck_problem *p, char *why, size_t n)
{
  for (int x = 0; x < 3 && p->struct_size >= ATTNCHECK_PROBLEM_V5QL_SIZE; x++)
    if (p->quant_spec[x].packing == ATTNCHECK_QPACK_HIGH_FIRST) {
      snprintf(why, n, "codes packed high bits first");
      return 0;
    }
  if (p->dtype != ATTNCHECK_F32 || (p->features & ~(uint32_t)(ATTNCHECK_FEAT_QUANT_LAYOUT | ATTNCHECK_FEAT_QUANT_STORE))) {
    snprintf(why, n, "f32 dense cases without variants");
    return 0;
  }
  return 1;
}

/* ---- quantize-on-store, as the header describes absmax-even-f32-sat to e4m3fn ---- */
/* The nearest e4m3fn code of v (finite), ties to even (away: away from zero), saturating at 448. */
static uint8_t to_e4m3fn(double v, int away)
{
  double a = fabs(v), best = INFINITY;
  uint8_t code = 0;
  for (int c = 0; c < 0x7f; c++) {   /* 0x7f is NaN */
    double d = fabs(tq_e4m3fn((uint8_t)c) - a);
    if (d < best || (d == best && (away ? c > code : !(c & 1)))) best = d, code = (uint8_t)c;
  }
  return (uint8_t)(code | (v < 0 ? 0x80 : 0));
}

static int store_run(const attncheck_problem *p, const attncheck_tensors *t, int away, char *err, size_t n)
{
  for (int x = 1; x < 3; x++) {
    const attncheck_qspec *s = &p->quant_spec[x];
    if (!s->store_rule) continue;
    const attncheck_quant_tensor *q = &t->store->t[x];
    const float *plain = x == 1 ? t->k : t->v;
    const int64_t *st = x == 1 ? p->k_stride : p->v_stride, D = x == 1 ? p->dk : p->dv;
    for (int64_t b = 0; b < p->batch; b++)   /* token granularity: one scale per token and head */
      for (int64_t h = 0; h < p->kv_heads; h++)
        for (int64_t j = 0; j < p->tk; j++) {
          const float *row = plain + b * st[0] + h * st[1] + j * st[2];
          float amax = 0;
          for (int64_t d = 0; d < D; d++) amax = fmaxf(amax, fabsf(row[d * st[3]]));
          float sc = amax / 448.0f;
          if (!(sc > 0) || !isfinite(sc)) sc = 1.0f;
          ((float *)q->scales)[b * q->scale_stride[0] + h * q->scale_stride[1] + j * q->scale_stride[2]] = sc;
          for (int64_t d = 0; d < D; d++)
            ((uint8_t *)q->codes)[b * q->code_stride[0] + h * q->code_stride[1] + j * q->code_stride[2] + d * q->code_stride[3]] =
                to_e4m3fn((double)(row[d * st[3]] / sc), away);
        }
  }
  return attend(p, t, 0, err, n);
}

static int run_store(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n) { return store_run(p, t, 0, err, n); }
static int run_store_away(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n) { return store_run(p, t, 1, err, n); }

static int supports_store(const attncheck_problem *p, char *why, size_t n)
{
  for (int x = 0; x < 3; x++)
    if (x == 0 ? p->q_format != 0 : p->quant_spec[x].store_rule && p->quant_spec[x].granularity != ATTNCHECK_QG_TOKEN) {
      snprintf(why, n, "e4m3fn stored per token for k and v only");
      return 0;
    }
  return supports_layout(p, why, n);
}

#define KV (1u << ATTNCHECK_QF_Q8_0 | 1u << ATTNCHECK_QF_E4M3FN | 1u << ATTNCHECK_QF_INT8)
#define KV_LAYOUT \
  (1u << ATTNCHECK_QF_E4M3FN | 1u << ATTNCHECK_QF_INT8 | 1u << ATTNCHECK_QF_UINT8 | 1u << ATTNCHECK_QF_INT4 | \
   1u << ATTNCHECK_QF_INT2)
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

static const attncheck_kernel k_layout = {ATTNCHECK_KERNEL_INIT, .name = "quant-layout-f64",
                                          .description = "binary64 attention over group, tile and packed codes",
                                          .precision = "fp32", .caps = ATTNCHECK_FEAT_QUANT_LAYOUT,
                                          .supports = supports_layout, .run = run, .kv_formats = KV_LAYOUT};
static const attncheck_kernel k_store = {ATTNCHECK_KERNEL_INIT, .name = "quant-store-f64",
                                         .description = "stores its K and V as e4m3fn per token, then binary64",
                                         .precision = "fp32", .caps = ATTNCHECK_FEAT_QUANT_STORE,
                                         .supports = supports_store, .run = run_store,
                                         .kv_formats = 1u << ATTNCHECK_QF_E4M3FN,
                                         .store_quantizers = "absmax-even-f32-sat"};
static const attncheck_kernel k_store_away = {ATTNCHECK_KERNEL_INIT, .name = "quant-store-away",
                                              .description = "quant-store-f64 rounding ties away from zero",
                                              .precision = "fp32", .caps = ATTNCHECK_FEAT_QUANT_STORE,
                                              .supports = supports_store, .run = run_store_away,
                                              .kv_formats = 1u << ATTNCHECK_QF_E4M3FN,
                                              .store_quantizers = "absmax-even-f32-sat"};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  static const attncheck_kernel *const ks[] = {&k_quant, &k_no_scale, &k_undeclared, &k_k_only,
                                               &k_layout, &k_store, &k_store_away};
  *count = 7;
  return ks;
}
