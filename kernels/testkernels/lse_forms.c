/* lse_forms.c: correct binary32 kernels whose LSE follows a formula of their own, for the
 * budgets' and conventions' tests (docs/numerics.md §7.8, docs/variants.md "ALiBi and the LSE"):
 *   test-fa3-log2-lse  FlashAttention-3's arrangement: scores in the log2 domain (x = s log2 e),
 *                      exp2f, the sink joining the row sum as 2^(σ log2 e - m2), and
 *                      LSE = (m2 + log2 l) ln 2, rounded at every step; no special case for a row
 *                      that sees only its sink (its LSE is (σ log2 e) ln 2 in binary32, not σ);
 *   test-alibi-fa2     FlashAttention-2's causal ALiBi convention (docs/variants.md): +m_h j where the
 *                      ABI has -m_h |i + tk - tq - j| under a causal mask (the sink's logit moved alike,
 *                      by m_h (i + tk - tq)), so the same o and an LSE larger by m_h (i + tk - tq);
 *                      declares it (ATTNCHECK_CAP_ALIBI_LSE_FA2); its backward is FlashAttention-2's,
 *                      P = e^(s' - lse') from its own scores and the LSE it is handed (flash-bwd-f32 on
 *                      lse' - m_h (i + tk - tq) in binary32), so it needs the LSE of its convention;
 *   test-alibi-fa2-undeclared  the same kernel without the declaration (its LSE FAILs);
 *   test-alibi-abi-as-fa2      the ABI's convention, declaring FlashAttention-2's (its LSE FAILs).
 * Row by row, keys in order, one online maximum; window, softcap, ALiBi, bias, boolean mask,
 * sinks and descales through cpu_common's score pipeline. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include "testkernels.h"
#include "../cpu_backward.h"

#define L2E 1.44269504088896340736f
#define LN2 0.693147180559945309417f

typedef struct {
  int log2;   /* scores, exponentials and the LSE in the log2 domain */
  int fa2;    /* FlashAttention-2's ALiBi under a causal mask: +m_h j */
} lse_form;

/* The score of key j for row i from s = scale * d: FlashAttention-2's +m_h j in place of the ABI's
 * ALiBi term under a causal mask (f.fa2), else cpu_common's pipeline. */
static float form_score(const ac_cpu_vx *x, lse_form f, int64_t i, int64_t j, float s)
{
  const attncheck_problem *p = x->p;
  if (!f.fa2 || !(x->f & ATTNCHECK_FEAT_ALIBI) || p->mask == ATTNCHECK_MASK_NONE) return ac_cpu_vx_score(x, i, j, s);
  if (!ac_cpu_vx_bmask(x, i, j)) return -INFINITY;
  return ac_cpu_vx_bias(x, i, j, ac_cpu_vx_softcap(x, s) + x->slope * (float)j);
}

/* Row i of the current head: o and (when lse is not NULL) its LSE. s holds tk floats, acc dv. */
static void form_row(const ac_cpu_vx *x, lse_form f, int64_t i, float *s, float *acc, float *lse)
{
  const attncheck_problem *p = x->p;
  const int64_t kvh = ac_cpu_kv_head(p, x->h);
  int64_t lo, hi;
  ac_cpu_vx_range(x, i, &lo, &hi);
  float m = -INFINITY;
  for (int64_t j = lo; j < hi; j++) {
    float d = 0.0f;
    for (int64_t t = 0; t < p->dk; t++)
      d += ac_cpu_load_f32(x->qd, x->t->q, ac_cpu_off(p->q_stride, x->b, x->h, i, t)) *
           ac_cpu_load_f32(x->kd, x->t->k, ac_cpu_off(p->k_stride, x->b, kvh, j, t));
    float sc = form_score(x, f, i, j, d * x->scale);
    s[j] = f.log2 ? sc * L2E : sc;
    if (s[j] > m) m = s[j];
  }
  float sink = x->sink;
  if (f.fa2 && (x->f & ATTNCHECK_FEAT_ALIBI) && p->mask != ATTNCHECK_MASK_NONE)   /* the row's logits move alike */
    sink += x->slope * (float)(i + p->tk - p->tq);
  const float sk = x->has_sink ? (f.log2 ? sink * L2E : sink) : -INFINITY;
  const float mf = sk > m ? sk : m, mref = mf == -INFINITY ? 0.0f : mf;
  float l = 0.0f;
  for (int64_t e = 0; e < p->dv; e++) acc[e] = 0.0f;
  for (int64_t j = lo; j < hi; j++) {
    if (s[j] == -INFINITY) continue;
    const float w = f.log2 ? exp2f(s[j] - mref) : expf(s[j] - mref);
    l += w;
    for (int64_t e = 0; e < p->dv; e++)
      acc[e] += w * ac_cpu_load_f32(x->vd, x->t->v, ac_cpu_off(p->v_stride, x->b, kvh, j, e));
  }
  if (x->has_sink) l += f.log2 ? exp2f(sk - mref) : expf(sk - mref);
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;
  for (int64_t e = 0; e < p->dv; e++) ac_cpu_vx_store_o(x, i, e, acc[e] * inv);
  if (!lse) return;
  if (!(l > 0.0f)) *lse = -INFINITY;
  else *lse = f.log2 ? (mref + log2f(l)) * LN2 : mref + logf(l);
}

static int form_run(lse_form f, const char *name, const attncheck_problem *p, const attncheck_tensors *t, char *err,
                    size_t n)
{
  ac_cpu_vx x;
  if (ac_cpu_vx_init(&x, ATTNCHECK_F32, p, t, err, n) < 0) return -1;
  float *s = ac_cpu_scratch(p->tk + 1, sizeof *s), *acc = ac_cpu_scratch(p->dv + 1, sizeof *acc);
  if (!s || !acc) {
    free(s), free(acc);
    snprintf(err, n, "%s: out of memory", name);
    return -1;
  }
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++) {
      ac_cpu_vx_head(&x, b, h, (float)p->scale);
      for (int64_t i = 0; i < p->tq; i++)
        form_row(&x, f, i, s, acc, t->lse ? &t->lse[ac_cpu_lse_index(p, b, h, i)] : NULL);
    }
  free(s), free(acc);
  return 0;
}

#define FORM_CAPS (ATTNCHECK_FEAT_ALL & ~ATTNCHECK_FEAT_MIXED_DTYPES)

static int form_supports(const attncheck_problem *p, char *why, size_t n)
{
  return ac_cpu_supports_caps(p, ATTNCHECK_F32, FORM_CAPS, why, n);
}

static int run_fa3_log2(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return form_run((lse_form){.log2 = 1}, "test-fa3-log2-lse", p, t, err, n);
}

const attncheck_kernel ac_tk_fa3_log2_lse = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-fa3-log2-lse",
  "test kernel: FlashAttention-3's log2-domain softmax and LSE = (m2 + log2 l) ln 2 in binary32, the sink in the row sum",
  "fp32-exp2", ATTNCHECK_MEM_HOST, FORM_CAPS, form_supports, run_fa3_log2, {NULL, NULL, NULL, NULL}, NULL, 0, 0,
  0, 0, NULL, 0, 0, NULL};

/* The backward: flash-bwd-f32 (its P = e^(s - lse) on the ABI's scores) on the LSE handed over, moved
 * back by m_h (i + tk - tq) when the kernel's scores follow FlashAttention-2's convention (fa2). */
static int form_bwd(int fa2, const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g,
                    char *err, size_t n)
{
  attncheck_grad_tensors vg = *g;
  float *lse = NULL;
  if (fa2 && (p->features & ATTNCHECK_FEAT_ALIBI) && p->mask != ATTNCHECK_MASK_NONE) {
    lse = ac_cpu_scratch(p->batch * p->heads * p->tq + 1, sizeof *lse);
    if (!lse) {
      snprintf(err, n, "test-alibi-fa2: out of memory");
      return -1;
    }
    for (int64_t b = 0; b < p->batch; b++)
      for (int64_t h = 0; h < p->heads; h++) {
        const float m = t->alibi_slopes[p->alibi_per_batch ? b * p->heads + h : h];
        for (int64_t i = 0; i < p->tq; i++) {
          const int64_t x = ac_cpu_lse_index(p, b, h, i);
          lse[x] = g->lse[x] - m * (float)(i + p->tk - p->tq);
        }
      }
    vg.lse = lse;
  }
  const ac_cpu_bwd_cfg cfg = {ATTNCHECK_F32, 1, 0u};
  int rc = ac_cpu_backward(&cfg, p, t, &vg, err, n);
  free(lse);
  return rc;
}

static int bwd_fa2(const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g, char *err,
                   size_t n)
{
  return form_bwd(1, p, t, g, err, n);
}

static int bwd_abi(const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g, char *err,
                   size_t n)
{
  return form_bwd(0, p, t, g, err, n);
}

static int run_fa2(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return form_run((lse_form){.fa2 = 1}, "test-alibi-fa2", p, t, err, n);
}

static int run_abi(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return form_run((lse_form){0}, "test-alibi-abi-as-fa2", p, t, err, n);
}

#define BWD_CAPS (FORM_CAPS | ATTNCHECK_CAP_BACKWARD)
#define FA2_CAPS (BWD_CAPS | ATTNCHECK_CAP_ALIBI_LSE_FA2)
const attncheck_kernel ac_tk_alibi_fa2 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-alibi-fa2",
  "test kernel: FlashAttention-2's causal ALiBi (+m j), its LSE larger by m (i + tk - tq), declared (alibi-lse fa2)",
  "fp32", ATTNCHECK_MEM_HOST, FA2_CAPS, form_supports, run_fa2, {NULL, NULL, NULL, NULL}, bwd_fa2, AC_BWD_CAPS, 0,
  0, 0, NULL, 0, 0, NULL};
const attncheck_kernel ac_tk_alibi_fa2_undeclared = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-alibi-fa2-undeclared",
  "test kernel: test-alibi-fa2 without declaring its LSE convention",
  "fp32", ATTNCHECK_MEM_HOST, BWD_CAPS, form_supports, run_fa2, {NULL, NULL, NULL, NULL}, bwd_fa2, AC_BWD_CAPS, 0,
  0, 0, NULL, 0, 0, NULL};
const attncheck_kernel ac_tk_alibi_abi_as_fa2 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-alibi-abi-as-fa2",
  "test kernel: the ABI's ALiBi and LSE, declaring FlashAttention-2's convention (alibi-lse fa2)",
  "fp32", ATTNCHECK_MEM_HOST, FA2_CAPS, form_supports, run_abi, {NULL, NULL, NULL, NULL}, bwd_abi, AC_BWD_CAPS, 0,
  0, 0, NULL, 0, 0, NULL};
