/* cpu_naive.c: naive-f32, naive-scaleq-f32, naive-f16, naive-bf16, naive-scaleq-f16, naive-scaleq-bf16.
 * Binary32 arithmetic with expf: for each
 * query row the scores are materialized, then three passes (maximum; exponentials and their
 * sum; weighted sum of V divided by that sum). For f16 and bf16 inputs, P is rounded to the
 * input dtype before P·V while the row sum uses the binary32 P (FlashAttention-2), and the
 * output is rounded once to the dtype. */
#include "config.h"
#include "cpu_common.h"
#include <stdio.h>
#include <stdlib.h>

/* prescale: the scale is applied to the operands before Q·Kᵀ and the scores are not scaled
 * again. PRE_Q: Q times the scale in binary32. PRE_QK: Q and K each times sqrt|scale| (Q also
 * by its sign), rounded to the input dtype, as PyTorch's math path scales fp16/bf16 inputs. */
enum { PRE_NONE = 0, PRE_Q = 1, PRE_QK = 2 };

static int naive_impl(int prescale, int dt, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                      char *err, size_t err_len)
{
  const float scale = (float)p->scale, root = sqrtf(fabsf(scale)), qroot = scale < 0 ? -root : root;
  const int64_t tk8 = ac_cpu_pad(p->tk), dv8 = ac_cpu_pad(p->dv);
  float *kt = ac_cpu_scratch(p->dk * tk8, sizeof *kt);   /* K of one kv head, transposed [d][j] */
  float *vv = ac_cpu_scratch(p->tk * dv8, sizeof *vv);   /* V of one kv head [j][e] */
  float *s = ac_cpu_scratch(tk8, sizeof *s);             /* the row: scores, then P */
  float *qr = ac_cpu_scratch(p->dk, sizeof *qr);
  float *acc = ac_cpu_scratch(dv8, sizeof *acc);
  if (!kt || !vv || !s || !qr || !acc) {
    free(kt), free(vv), free(s), free(qr), free(acc);
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
            float x = ac_cpu_load_f32(dt, t->k, ac_cpu_off(p->k_stride, b, kvh, j, d));
            kt[d * tk8 + j] = prescale == PRE_QK ? ac_cpu_round_f32(dt, x * root) : x;
          }
          for (int64_t e = 0; e < p->dv; e++) vv[j * dv8 + e] = ac_cpu_load_f32(dt, t->v, ac_cpu_off(p->v_stride, b, kvh, j, e));
        }
        loaded = kvh;
      }
      for (int64_t i = 0; i < p->tq; i++) {
        const int64_t n = ac_cpu_visible(p, i), n8 = ac_cpu_pad(n);
        float *lse = t->lse ? &t->lse[ac_cpu_lse_index(p, b, h, i)] : NULL;
        if (n == 0) {
          for (int64_t e = 0; e < p->dv; e++) ac_cpu_store_f32(dt, t->o, ac_cpu_off(p->o_stride, b, h, i, e), 0.0f);
          if (lse) *lse = -INFINITY;
          continue;
        }
        for (int64_t d = 0; d < p->dk; d++) {
          qr[d] = ac_cpu_load_f32(dt, t->q, ac_cpu_off(p->q_stride, b, h, i, d));
          if (prescale == PRE_Q) qr[d] *= scale;
          else if (prescale == PRE_QK) qr[d] = ac_cpu_round_f32(dt, qr[d] * qroot);
        }
        for (int64_t j = 0; j < n8; j++) s[j] = 0.0f;
        for (int64_t d = 0; d < p->dk; d++) ac_cpu_axpy_f32(s, qr[d], kt + d * tk8, n8);
        /* pass 1: scale and maximum */
        float m = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
          if (!prescale) s[j] *= scale;
          if (s[j] > m) m = s[j];
        }
        /* pass 2: exponentials and their sum */
        float l = 0.0f;
        for (int64_t j = 0; j < n; j++) {
          s[j] = expf(s[j] - m);
          l += s[j];
        }
        /* pass 3: weighted sum of V with P in the input dtype */
        for (int64_t e = 0; e < dv8; e++) acc[e] = 0.0f;
        for (int64_t j = 0; j < n; j++) ac_cpu_axpy_f32(acc, ac_cpu_round_f32(dt, s[j]), vv + j * dv8, dv8);
        for (int64_t e = 0; e < p->dv; e++) ac_cpu_store_f32(dt, t->o, ac_cpu_off(p->o_stride, b, h, i, e), acc[e] / l);
        if (lse) *lse = m + logf(l);
      }
    }
  }
  free(kt), free(vv), free(s), free(qr), free(acc);
  return 0;
}

static int naive_run(int dt, const char *name, const attncheck_problem *p, const attncheck_tensors *t, char *err,
                     size_t err_len)
{
  return naive_impl(PRE_NONE, dt, name, p, t, err, err_len);
}

static int naive_scaleq_run(int dt, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                            char *err, size_t err_len)
{
  return naive_impl(PRE_Q, dt, name, p, t, err, err_len);
}

static int naive_scaleqk_run(int dt, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                             char *err, size_t err_len)
{
  return naive_impl(PRE_QK, dt, name, p, t, err, err_len);
}

#define NAIVE_KERNEL(SYM, DT, NAME, PREC, DESC) AC_CPU_KERNEL(ac_cpu_##SYM, DT, NAME, PREC, DESC, naive_run)

NAIVE_KERNEL(naive_f32, ATTNCHECK_F32, "naive-f32", "fp32",
             "binary32 with expf, three passes over a materialized row of scores")
AC_CPU_KERNEL(ac_cpu_naive_scaleq_f32, ATTNCHECK_F32, "naive-scaleq-f32", "fp32",
              "binary32, Q multiplied by the scale before Q.K^T (PyTorch's math path), three passes", naive_scaleq_run)
NAIVE_KERNEL(naive_f16, ATTNCHECK_F16, "naive-f16", "fp16-fa2",
             "f16 inputs, binary32 scores and sums, three passes, P rounded to f16 before P.V")
NAIVE_KERNEL(naive_bf16, ATTNCHECK_BF16, "naive-bf16", "bf16-fa2",
             "bf16 inputs, binary32 scores and sums, three passes, P rounded to bf16 before P.V")
AC_CPU_KERNEL(ac_cpu_naive_scaleq_f16, ATTNCHECK_F16, "naive-scaleq-f16", "fp16-math",
              "f16, Q and K multiplied by sqrt(scale) and rounded to f16 before Q.K^T (PyTorch's math path), "
              "then as naive-f16", naive_scaleqk_run)
AC_CPU_KERNEL(ac_cpu_naive_scaleq_bf16, ATTNCHECK_BF16, "naive-scaleq-bf16", "bf16-math",
              "bf16, Q and K multiplied by sqrt(scale) and rounded to bf16 before Q.K^T (PyTorch's math path), "
              "then as naive-bf16", naive_scaleqk_run)
