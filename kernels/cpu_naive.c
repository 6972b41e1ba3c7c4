/* cpu_naive.c: naive-f32, naive-scaleq-f32, naive-f16, naive-bf16, naive-scaleq-f16, naive-scaleq-bf16.
 * Binary32 arithmetic with expf: for each
 * query row the scores are materialized, then three passes (maximum; exponentials and their
 * sum; weighted sum of V divided by that sum). For f16 and bf16 inputs, P is rounded to the
 * input dtype before P·V while the row sum uses the binary32 P (FlashAttention-2), and the
 * output is rounded once to the dtype.
 * ABI 2 variants (naive-f32, naive-nolse-f32, naive-f16, naive-bf16): keys outside the mask
 * and window are never computed, the score pipeline is FlashAttention's (scale with the
 * descales folded in, softcap, ALiBi, bias, boolean mask as -inf), the sink is the row's
 * first column (naive-nolse-f32: added to the sum at the end), descale_v scales the output;
 * naive-f32 and naive-nolse-f32 also take f16/bf16 K and V with f32 Q and O. */
#include "config.h"
#include "cpu_common.h"
#include <stdio.h>
#include <stdlib.h>

/* prescale: the scale is applied to the operands before Q·Kᵀ and the scores are not scaled
 * again. PRE_Q: Q times the scale in binary32. PRE_QK: Q and K each times sqrt|scale| (Q also
 * by its sign), rounded to the input dtype, as PyTorch's math path scales fp16/bf16 inputs. */
enum { PRE_NONE = 0, PRE_Q = 1, PRE_QK = 2 };

typedef struct {
  int prescale, dt;
  int nolse;           /* writes no LSE; the sink joins the sum after the exponentials */
  float scale, root, qroot;
  int64_t tk8, dv8;
  float *kt, *vv, *s, *qr, *acc;
} naive_ctx;

/* Row i of the current head (x). Variants: the keys [lo, hi) of the mask and the window, the
 * score pipeline of ac_cpu_vx_score, the sink as one more column of the row (it starts the
 * maximum and the sum) or, without LSE, added to the sum at the end; a row whose every score
 * is -inf (boolean mask, -inf bias) has no visible key. */
static void naive_row(const naive_ctx *n, const ac_cpu_vx *x, int64_t i)
{
  const attncheck_problem *p = x->p;
  const int dt = n->dt, prescale = n->prescale, sf = (x->f & AC_CPU_SCORE_FEATS) != 0;
  const int sink_first = x->has_sink && !n->nolse;
  float *const s = n->s, *const qr = n->qr, *const acc = n->acc;
  int64_t lo, hi;
  ac_cpu_vx_range(x, i, &lo, &hi);
  float *lse = x->t->lse && !n->nolse ? &x->t->lse[ac_cpu_lse_index(p, x->b, x->h, i)] : NULL;
  if (hi <= lo) {
    ac_cpu_vx_empty_row(x, i, lse);
    return;
  }
  const int64_t lo8 = lo / AC_CPU_VW * AC_CPU_VW, n8 = ac_cpu_pad(hi);
  for (int64_t d = 0; d < p->dk; d++) {
    qr[d] = ac_cpu_load_f32(x->qd, x->t->q, ac_cpu_off(p->q_stride, x->b, x->h, i, d));
    if (prescale == PRE_Q) qr[d] *= n->scale;
    else if (prescale == PRE_QK) qr[d] = ac_cpu_round_f32(dt, qr[d] * n->qroot);
  }
  for (int64_t j = lo8; j < n8; j++) s[j] = 0.0f;
  for (int64_t d = 0; d < p->dk; d++) ac_cpu_axpy_f32(s + lo8, qr[d], n->kt + d * n->tk8 + lo8, n8 - lo8);
  /* pass 1: scale, variants and maximum */
  float m = sink_first ? x->sink : -INFINITY;
  int nan = 0;
  for (int64_t j = lo; j < hi; j++) {
    if (!prescale) s[j] *= x->scale;
    if (sf) s[j] = ac_cpu_vx_score(x, i, j, s[j]);
    if (s[j] > m) m = s[j];
    else if (s[j] != s[j]) nan = 1;
  }
  if (x->f && m == -INFINITY && !nan) {   /* every score -inf: no visible key; a NaN score is seen */
    ac_cpu_vx_empty_row(x, i, lse);
    return;
  }
  /* pass 2: exponentials and their sum */
  float l = sink_first ? expf(x->sink - m) : 0.0f;
  for (int64_t j = lo; j < hi; j++) {
    s[j] = expf(s[j] - m);
    l += s[j];
  }
  /* pass 3: weighted sum of V with P in the input dtype */
  for (int64_t e = 0; e < n->dv8; e++) acc[e] = 0.0f;
  for (int64_t j = lo; j < hi; j++) ac_cpu_axpy_f32(acc, ac_cpu_round_f32(dt, s[j]), n->vv + j * n->dv8, n->dv8);
  if (x->has_sink && n->nolse) {
    /* o = acc e^{m - mf} / (l e^{m - mf} + e^{sink - mf}), mf the larger of m and the sink */
    const float mf = x->sink > m ? x->sink : m, a = expf(m - mf), den = l * a + expf(x->sink - mf);
    for (int64_t e = 0; e < p->dv; e++) ac_cpu_vx_store_o(x, i, e, acc[e] * a / den);
    return;
  }
  for (int64_t e = 0; e < p->dv; e++) ac_cpu_vx_store_o(x, i, e, acc[e] / l);
  if (lse) *lse = m + logf(l);
}

static int naive_impl(naive_ctx *n, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                      char *err, size_t err_len)
{
  ac_cpu_vx x;
  if (ac_cpu_vx_init(&x, n->dt, p, t, err, err_len) < 0) return -1;
  n->scale = (float)p->scale, n->root = sqrtf(fabsf(n->scale)), n->qroot = n->scale < 0 ? -n->root : n->root;
  n->tk8 = ac_cpu_pad(p->tk), n->dv8 = ac_cpu_pad(p->dv);
  n->kt = ac_cpu_scratch(p->dk * n->tk8, sizeof *n->kt);   /* K of one kv head, transposed [d][j] */
  n->vv = ac_cpu_scratch(p->tk * n->dv8, sizeof *n->vv);   /* V of one kv head [j][e] */
  n->s = ac_cpu_scratch(n->tk8, sizeof *n->s);             /* the row: scores, then P */
  n->qr = ac_cpu_scratch(p->dk, sizeof *n->qr);
  n->acc = ac_cpu_scratch(n->dv8, sizeof *n->acc);
  if (!n->kt || !n->vv || !n->s || !n->qr || !n->acc) {
    free(n->kt), free(n->vv), free(n->s), free(n->qr), free(n->acc);
    snprintf(err, err_len, "%s: out of memory", name);
    return -1;
  }
  for (int64_t b = 0; b < p->batch; b++) {
    int64_t loaded = -1;
    for (int64_t h = 0; h < p->heads; h++) {
      const int64_t kvh = ac_cpu_kv_head(p, h);
      if (kvh != loaded) {
        for (int64_t j = 0; j < p->tk; j++) {
          for (int64_t d = 0; d < p->dk; d++) {
            float v = ac_cpu_load_f32(x.kd, t->k, ac_cpu_off(p->k_stride, b, kvh, j, d));
            n->kt[d * n->tk8 + j] = n->prescale == PRE_QK ? ac_cpu_round_f32(n->dt, v * n->root) : v;
          }
          for (int64_t e = 0; e < p->dv; e++)
            n->vv[j * n->dv8 + e] = ac_cpu_load_f32(x.vd, t->v, ac_cpu_off(p->v_stride, b, kvh, j, e));
        }
        loaded = kvh;
      }
      ac_cpu_vx_head(&x, b, h, n->scale);
      for (int64_t i = 0; i < p->tq; i++) naive_row(n, &x, i);
    }
  }
  free(n->kt), free(n->vv), free(n->s), free(n->qr), free(n->acc);
  return 0;
}

static int naive_run(int dt, const char *name, const attncheck_problem *p, const attncheck_tensors *t, char *err,
                     size_t err_len)
{
  naive_ctx n = {.prescale = PRE_NONE, .dt = dt};
  return naive_impl(&n, name, p, t, err, err_len);
}

static int naive_scaleq_run(int dt, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                            char *err, size_t err_len)
{
  naive_ctx n = {.prescale = PRE_Q, .dt = dt};
  return naive_impl(&n, name, p, t, err, err_len);
}

static int naive_scaleqk_run(int dt, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                             char *err, size_t err_len)
{
  naive_ctx n = {.prescale = PRE_QK, .dt = dt};
  return naive_impl(&n, name, p, t, err, err_len);
}

static int naive_nolse_run(int dt, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                           char *err, size_t err_len)
{
  naive_ctx n = {.prescale = PRE_NONE, .dt = dt, .nolse = 1};
  return naive_impl(&n, name, p, t, err, err_len);
}

/* Every ABI 2 feature but mixed dtypes; binary32 kernels also take f16/bf16 K and V. */
#define NAIVE_CAPS (ATTNCHECK_FEAT_ALL & ~ATTNCHECK_FEAT_MIXED_DTYPES)
#define NAIVE_KERNEL(SYM, DT, NAME, PREC, CAPS, DESC) \
  AC_CPU_KERNEL_CAPS(ac_cpu_##SYM, DT, NAME, PREC, CAPS, DESC, naive_run)

NAIVE_KERNEL(naive_f32, ATTNCHECK_F32, "naive-f32", "fp32", ATTNCHECK_FEAT_ALL,
             "binary32 with expf, three passes over a materialized row of scores")
AC_CPU_KERNEL(ac_cpu_naive_scaleq_f32, ATTNCHECK_F32, "naive-scaleq-f32", "fp32",
              "binary32, Q multiplied by the scale before Q.K^T (PyTorch's math path), three passes", naive_scaleq_run)
NAIVE_KERNEL(naive_f16, ATTNCHECK_F16, "naive-f16", "fp16-fa2", NAIVE_CAPS,
             "f16 inputs, binary32 scores and sums, three passes, P rounded to f16 before P.V")
NAIVE_KERNEL(naive_bf16, ATTNCHECK_BF16, "naive-bf16", "bf16-fa2", NAIVE_CAPS,
             "bf16 inputs, binary32 scores and sums, three passes, P rounded to bf16 before P.V")
AC_CPU_KERNEL(ac_cpu_naive_scaleq_f16, ATTNCHECK_F16, "naive-scaleq-f16", "fp16-math",
              "f16, Q and K multiplied by sqrt(scale) and rounded to f16 before Q.K^T (PyTorch's math path), "
              "then as naive-f16", naive_scaleqk_run)
AC_CPU_KERNEL(ac_cpu_naive_scaleq_bf16, ATTNCHECK_BF16, "naive-scaleq-bf16", "bf16-math",
              "bf16, Q and K multiplied by sqrt(scale) and rounded to bf16 before Q.K^T (PyTorch's math path), "
              "then as naive-bf16", naive_scaleqk_run)
AC_CPU_KERNEL_CAPS(ac_cpu_naive_nolse_f32, ATTNCHECK_F32, "naive-nolse-f32", "fp32",
                   ATTNCHECK_FEAT_ALL | ATTNCHECK_CAP_NO_LSE,
                   "naive-f32 that writes no LSE; a sink joins the row sum after the exponentials", naive_nolse_run)
