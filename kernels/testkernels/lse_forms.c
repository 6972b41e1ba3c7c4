/* lse_forms.c: correct binary32 kernels whose LSE follows a formula of their own, for the
 * budgets' and conventions' tests (docs/numerics.md §7.8, docs/variants.md "ALiBi and the LSE"):
 *   test-fa3-log2-lse  FlashAttention-3's arrangement: scores in the log2 domain (x = s log2 e),
 *                      exp2f, the sink joining the row sum as 2^(σ log2 e - m2), and
 *                      LSE = (m2 + log2 l) ln 2, rounded at every step; no special case for a row
 *                      that sees only its sink (its LSE is (σ log2 e) ln 2 in binary32, not σ).
 * Row by row, keys in order, one online maximum; window, softcap, ALiBi, bias, boolean mask,
 * sinks and descales through cpu_common's score pipeline. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include "testkernels.h"
#include "../cpu_common.h"

#define L2E 1.44269504088896340736f
#define LN2 0.693147180559945309417f

typedef struct {
  int log2;   /* scores, exponentials and the LSE in the log2 domain */
} lse_form;

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
    float sc = ac_cpu_vx_score(x, i, j, d * x->scale);
    s[j] = f.log2 ? sc * L2E : sc;
    if (s[j] > m) m = s[j];
  }
  const float sk = x->has_sink ? (f.log2 ? x->sink * L2E : x->sink) : -INFINITY;
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
  "fp32-exp2", ATTNCHECK_MEM_HOST, FORM_CAPS, form_supports, run_fa3_log2, {NULL, NULL, NULL, NULL}, NULL, 0, 0};
