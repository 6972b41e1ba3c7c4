/* suite_quant.c: the quantized cases of the fixed suite (docs/quantized.md), after the serving
 * layouts: for each format a plain case (GQA, bottom-right causal) and one with a block adversary
 * or another granularity, binary32 Q and O; fp8 Q too; a window with softcap; varlen batches and
 * paged caches of quantized K and V; per-head fp8 scales under GQA; then f16 and bf16 cases of the
 * dequantize-to-16-bit paths (Q and O in the case's dtype); the corners of the formats campaigns
 * reached first; the quantized layouts (group, tile and channel-group scales, dtypes, packed codes);
 * and quantize-on-store cases of the three store conventions. Codes and scales come from the formats'
 * reference quantizers (src/core/quant_ref.c), the adversaries from src/core/quant_adv.c. Only
 * kernels that declare the format and take the dtype run them (the reference kernels ggml-ref-f32,
 * fp8kv-ref-f32, intkv-ref-f32, fp4kv-ref-f32, kv16-ref-f16, kv16-ref-bf16; an exec worker's
 * kv_formats); every other kernel SKIPs them. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "layout.h"
#include "quant.h"
#include "suite.h"
#include "vgen.h"

typedef struct {
  const char *kv;      /* k and v spec (ac_qspec_parse) */
  const char *q;       /* q spec, or NULL */
  int64_t H, KVH, tq, tk, d;
  ac_mask mask;
  int adv;             /* AC_QADV_... applied to k and v */
  int lay;             /* 0 dense, 1 varlen, 2 paged */
  ac_vspec v;
  int dt;              /* 0: f32, 1: f16, 2: bf16 (Q, O and the dense inputs before quantization) */
} qcase;

#define PLAIN(F, X) {F, NULL, 4, 2, 64, 96, 64, AC_MASK_CAUSAL_BR, X, 0, {0}, 0}
#define ADV(F, X) {F, NULL, 1, 1, 40, 70, 32, AC_MASK_CAUSAL, X, 0, {0}, 0}
static const qcase cases[] = {
  PLAIN("q8_0", 0), ADV("q8_0", AC_QADV_OUTLIER), ADV("q8_0", AC_QADV_TIES), PLAIN("q4_0", 0), ADV("q4_0", AC_QADV_ASYM),
  ADV("q4_0", AC_QADV_ZERO_BLOCKS), PLAIN("q4_1", 0), ADV("q4_1", AC_QADV_SCALE_SUBNORMAL), PLAIN("q5_0", 0),
  ADV("q5_0", AC_QADV_OUTLIER), PLAIN("q5_1", 0), ADV("q5_1", AC_QADV_ZERO_BLOCKS), PLAIN("iq4_nl", 0),
  ADV("iq4_nl", AC_QADV_OUTLIER), ADV("q8_0", AC_QADV_SCALE_OVERFLOW), ADV("q4_0", AC_QADV_NAN),
  PLAIN("e4m3fn", 0), ADV("e4m3fn:head", 0), ADV("e4m3fn:token", AC_QADV_OUTLIER), PLAIN("e4m3fnuz:token", 0),
  ADV("e4m3fnuz", AC_QADV_NAN), PLAIN("e5m2:token", 0), ADV("e5m2:channel", AC_QADV_ZERO_BLOCKS),
  PLAIN("int8", 0), ADV("int8:channel", AC_QADV_OUTLIER), PLAIN("int4:channel", 0), ADV("int4", AC_QADV_ZERO_BLOCKS),
  PLAIN("nvfp4", 0), ADV("nvfp4", AC_QADV_OUTLIER), PLAIN("mxfp4", 0), ADV("mxfp4", AC_QADV_SCALE_SUBNORMAL),
  {"e4m3fn:token", "e4m3fn:token", 2, 2, 48, 64, 64, AC_MASK_NONE, 0, 0, {0}, 0},
  {"q4_1", NULL, 2, 1, 96, 96, 32, AC_MASK_CAUSAL, 0, 0,
   {.used = AC_FEAT_WINDOW | AC_FEAT_SOFTCAP, .win_left = 32, .win_right = 0, .softcap = 30}, 0},
  {"q8_0", NULL, 4, 2, 0, 0, 32, AC_MASK_CAUSAL_BR, 0, 1, {0}, 0},
  {"int8:token", NULL, 4, 2, 0, 0, 32, AC_MASK_CAUSAL_BR, 0, 1, {0}, 0},
  {"e4m3fn:token", NULL, 4, 2, 0, 0, 32, AC_MASK_CAUSAL_BR, 0, 2, {0}, 0},
  {"q4_0", NULL, 2, 1, 0, 0, 32, AC_MASK_NONE, 0, 2, {0}, 0},
  {"e4m3fn:head", NULL, 4, 2, 32, 80, 64, AC_MASK_CAUSAL_BR, 0, 0, {0}, 0},
  /* dequantize-to-16-bit paths: vLLM's fp8 caches (per tensor, per head, paged per token), llama.cpp's
   * CUDA tensor-core path (ggml blocks to f16), int caches */
  {"e4m3fn", NULL, 8, 2, 16, 200, 64, AC_MASK_CAUSAL_BR, 0, 0, {0}, 1},
  {"e4m3fn:head", NULL, 8, 2, 16, 200, 128, AC_MASK_CAUSAL_BR, 0, 0, {0}, 1},
  {"e5m2:token", NULL, 4, 2, 0, 0, 64, AC_MASK_CAUSAL_BR, 0, 2, {0}, 1},
  {"q4_0", NULL, 4, 2, 64, 96, 64, AC_MASK_CAUSAL_BR, 0, 0, {0}, 1},
  {"q8_0", NULL, 2, 1, 40, 70, 32, AC_MASK_CAUSAL, AC_QADV_OUTLIER, 0, {0}, 1},
  {"int8:token", NULL, 4, 2, 0, 0, 32, AC_MASK_CAUSAL_BR, 0, 1, {0}, 1},
  {"nvfp4", NULL, 4, 2, 64, 96, 64, AC_MASK_CAUSAL_BR, 0, 0, {0}, 1},
  {"e4m3fn:token", NULL, 4, 2, 0, 0, 64, AC_MASK_CAUSAL_BR, 0, 2, {0}, 2},
  {"q8_0", NULL, 4, 2, 64, 96, 64, AC_MASK_CAUSAL_BR, 0, 0, {0}, 2},
  {"int4:channel", NULL, 4, 2, 64, 96, 64, AC_MASK_CAUSAL_BR, 0, 0, {0}, 2},
  /* the corners campaigns reached first: mxfp4 blocks of exponent 255 (0: the subnormal case above),
   * e4m3fn NaN codes (0x7f, 0xff), int4 and int8 per token and per group, a per-tensor fp8 scale set by
   * a far outlier (most codes subnormal), subnormal f16 block scales and mins of every ggml format */
  ADV("mxfp4", AC_QADV_NAN), ADV("e4m3fn:token", AC_QADV_NAN), PLAIN("int4", 0), ADV("int8", AC_QADV_TIES),
  ADV("e4m3fn", AC_QADV_FAR_OUTLIER), ADV("q8_0", AC_QADV_SCALE_SUBNORMAL), ADV("q4_0", AC_QADV_SCALE_SUBNORMAL),
  ADV("q5_0", AC_QADV_SCALE_SUBNORMAL), ADV("q5_1", AC_QADV_SCALE_SUBNORMAL), ADV("iq4_nl", AC_QADV_SCALE_SUBNORMAL),
  /* the quantized layouts (ATTNCHECK_FEAT_QUANT_LAYOUT): group and tile scales, channel groups, scale and
   * zero-point dtypes, packed codes, int2 and uint8 */
  PLAIN("int4:group:32", 0), ADV("int8:group:16:scale=f16", AC_QADV_OFFSET), PLAIN("e4m3fn:group:64:scale=bf16", 0),
  PLAIN("int8:tile:16x32", 0), ADV("e5m2:tile:64x32:scale=f16", AC_QADV_OUTLIER), PLAIN("int2:channel:32", 0),
  ADV("uint8:channel:16:zero=f32", AC_QADV_OFFSET), PLAIN("int4:group:32:scale=f16:zero=bf16", 0),
  PLAIN("int4:packed=low", 0), ADV("int2:group:16:packed=high:zero=f16", AC_QADV_TIES), PLAIN("nvfp4:packed=high", 0),
  {"int4:group:32:packed=low", NULL, 4, 2, 0, 0, 32, AC_MASK_CAUSAL_BR, 0, 1, {0}, 0},
  /* quantize-on-store (ATTNCHECK_FEAT_QUANT_STORE): vLLM's fp8 per token and with a given scale, OpenVINO's
   * u8 and KIVI-style int4 min-max, ggml's q8_0 rows; ties, ranges without 0, scales too small */
  PLAIN("e4m3fn:token:store=absmax-even-f32-sat", 0), ADV("e4m3fn:token:store=absmax-even-f32-sat", AC_QADV_TIES),
  ADV("e4m3fn:store=given-even-f32-sat", AC_QADV_GIVEN_SMALL), PLAIN("uint8:token:zero=f32:store=minmax-away-f32-sat", 0),
  ADV("int4:group:32:store=minmax-even-f32-sat", AC_QADV_TIES), ADV("uint8:token:store=minmax-even-f32-sat", AC_QADV_OFFSET),
  PLAIN("q8_0:store=ggml", 0), PLAIN("e5m2:group:32:scale=f16:store=absmax-even-f32-sat", 0),
};
static const ac_dtype qdt[3] = {AC_F32, AC_F16, AC_BF16};
#undef PLAIN
#undef ADV
#define N_Q ((int64_t)(sizeof cases / sizeof cases[0]))

int64_t ac_suite_quant_count(void) { return N_Q; }

int ac_suite_quant_describe(int64_t i, char *name, size_t n, ac_dtype *dtype)
{
  if (i < 0 || i >= N_Q) return -1;
  const qcase *q = &cases[i];
  char kv[64];
  snprintf(kv, sizeof kv, "%s", q->kv);
  for (char *c = kv; *c; c++)
    if (*c == ':' || *c == '=') *c = '.';
  size_t len;
  const char *dn = ac_dtype_get(qdt[q->dt])->name;
  if (q->lay)
    len = (size_t)snprintf(name, n, "%s-quant-%s-%s", dn, kv, q->lay == 1 ? "varlen-mix" : "paged-shuffled");
  else
    len = (size_t)snprintf(name, n, "%s-quant-%s-%lldx%lld-d%lld-%s%s", dn, kv, (long long)q->tq, (long long)q->tk,
                           (long long)q->d, ac_mask_name(q->mask), q->H > 1 ? "-gqa" : "");
  if (q->q && len < n) len += (size_t)snprintf(name + len, n - len, "-q");
  if (q->adv && len < n) len += (size_t)snprintf(name + len, n - len, "-%s", ac_qadv_name(q->adv));
  if (q->v.used && len < n) {
    name[len++] = '-';
    ac_vspec_name(&q->v, name + len, n - len);
  }
  if (dtype) *dtype = qdt[q->dt];
  return 0;
}

/* The base case before quantization: dense from stream (seed, 1..3), or a layout case. */
static int base_case(const qcase *q, uint64_t seed, ac_case *c, ac_err *e)
{
  if (q->lay) {
    static const int64_t vq[4] = {5, 1, 0, 17}, vk[4] = {7, 1, 3, 33}, pq[4] = {1, 2, 1, 3}, pk[4] = {33, 5, 0, 64};
    ac_layout_case_spec s = {.dtype = qdt[q->dt], .mask = q->mask, .heads = q->H, .kv_heads = q->KVH, .dk = q->d, .dv = q->d,
                             .sigma = 1,
                             .lay = {.kind = q->lay == 1 ? AC_FEAT_VARLEN : AC_FEAT_PAGED, .nseq = 4,
                                     .tq = q->lay == 1 ? vq : pq, .tk = q->lay == 1 ? vk : pk, .page_size = 16,
                                     .spare_pages = q->lay == 2 ? 2 : 0, .shuffle = q->lay == 2}};
    return ac_layout_case_make(c, &s, seed, e);
  }
  ac_case_init(c);
  ac_problem *p = &c->p;
  p->dtype = qdt[q->dt];
  p->mask = q->mask;
  p->batch = 1, p->heads = q->H, p->kv_heads = q->KVH, p->tq = q->tq, p->tk = q->tk, p->dk = p->dv = q->d;
  p->scale_is_default = 1;
  p->scale = ac_problem_scale(p);
  if (ac_case_alloc(c, e)) return -1;
  ac_counts n;
  ac_problem_counts(p, &n, NULL);
  void *t[3] = {c->q, c->k, c->v};
  const int64_t cnt[3] = {n.q, n.k, n.v};
  for (int x = 0; x < 3; x++) {
    ac_rng r;
    ac_rng_init(&r, seed, (uint64_t)x + 1);
    for (int64_t k = 0; k < cnt[x]; k++) ac_store_bits(p->dtype, t[x], (size_t)k, ac_encode_f64(p->dtype, (float)ac_rng_normal(&r)));
  }
  if (q->v.used && ac_vspec_apply(c, &q->v, seed, e)) return -1;
  return 0;
}

int ac_suite_quant_make(int64_t i, ac_suite_case *sc, ac_err *e)
{
  if (ac_suite_quant_describe(i, sc->name, sizeof sc->name, NULL) != 0)
    return ac_err_set(e, "suite quantized case %lld does not exist", (long long)i);
  const qcase *q = &cases[i];
  uint64_t seed = 0x7175616e74ULL + (uint64_t)i;
  if (base_case(q, seed, &sc->c, e)) return -1;
  ac_qspec kv, qq;
  ac_rng r;
  ac_rng_init(&r, seed, 14);
  if (ac_qspec_parse(q->kv, &kv, e) || ac_quant_adversary(&sc->c, 'k', &kv, q->adv, &r, e) ||
      ac_quant_adversary(&sc->c, 'v', &kv, q->adv, &r, e))
    return -1;
  if (q->q && (ac_qspec_parse(q->q, &qq, e) || ac_quant_apply(&sc->c, 'q', &qq, e))) return -1;
  sc->c.seed = seed;
  snprintf(sc->c.generator, sizeof sc->c.generator, "suite:quant");
  return 0;
}
