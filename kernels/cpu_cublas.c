/* cpu_cublas.c: cublas-style-f16 and cublas-style-bf16, the composite PyTorch builds from
 * batched GEMMs when no fused kernel applies: S = scale·Q·Kᵀ accumulated in binary32 and
 * stored in the input dtype (the GEMM's alpha and output type), the mask, a softmax in binary32
 * over the stored scores whose normalized P is stored in the input dtype, then P·V accumulated
 * in binary32 and rounded once to the dtype. The LSE is m + log(l) of the stored scores. */
#include "config.h"
#include "cpu_common.h"
#include <stdio.h>
#include <stdlib.h>

/* sentinel = 0: masked keys are left out (a -inf mask: weight exactly 0); otherwise every key
 * is computed and the masked ones get sentinel added to their stored score in the input dtype
 * (an additive finite mask, e.g. -1e4: the mutant cublas-sentinel-f16). */
int ac_cpu_cublas_impl(float sentinel, int dt, const char *name, const attncheck_problem *p,
                       const attncheck_tensors *t, char *err, size_t err_len)
{
  const float scale = (float)p->scale;
  const int64_t tk8 = ac_cpu_pad(p->tk), dv8 = ac_cpu_pad(p->dv);
  float *kt = ac_cpu_scratch(p->dk * tk8, sizeof *kt);   /* K of one kv head, transposed [d][j] */
  float *vv = ac_cpu_scratch(p->tk * dv8, sizeof *vv);   /* V of one kv head [j][e] */
  float *s = ac_cpu_scratch(tk8, sizeof *s);             /* the row: scores, then P */
  float *acc = ac_cpu_scratch(dv8, sizeof *acc);
  if (!kt || !vv || !s || !acc) {
    free(kt), free(vv), free(s), free(acc);
    snprintf(err, err_len, "%s: out of memory", name);
    return -1;
  }
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++) {
      const int64_t kvh = ac_cpu_kv_head(p, h);
      for (int64_t j = 0; j < p->tk; j++) {
        for (int64_t d = 0; d < p->dk; d++) kt[d * tk8 + j] = ac_cpu_load_f32(dt, t->k, ac_cpu_off(p->k_stride, b, kvh, j, d));
        for (int64_t e = 0; e < p->dv; e++) vv[j * dv8 + e] = ac_cpu_load_f32(dt, t->v, ac_cpu_off(p->v_stride, b, kvh, j, e));
      }
      for (int64_t i = 0; i < p->tq; i++) {
        const int64_t n = ac_cpu_visible(p, i), nk = sentinel != 0.0f ? p->tk : n, n8 = ac_cpu_pad(nk);
        float *lse = t->lse ? &t->lse[ac_cpu_lse_index(p, b, h, i)] : NULL;
        if (nk == 0) {
          for (int64_t e = 0; e < p->dv; e++) ac_cpu_store_f32(dt, t->o, ac_cpu_off(p->o_stride, b, h, i, e), 0.0f);
          if (lse) *lse = -INFINITY;
          continue;
        }
        for (int64_t j = 0; j < n8; j++) s[j] = 0.0f;
        for (int64_t d = 0; d < p->dk; d++)
          ac_cpu_axpy_f32(s, ac_cpu_load_f32(dt, t->q, ac_cpu_off(p->q_stride, b, h, i, d)), kt + d * tk8, n8);
        float m = -INFINITY;
        for (int64_t j = 0; j < nk; j++) {
          s[j] = ac_cpu_round_f32(dt, scale * s[j]);
          if (j >= n) s[j] = ac_cpu_round_f32(dt, s[j] + sentinel);
          if (s[j] > m) m = s[j];
        }
        float l = 0.0f;
        for (int64_t j = 0; j < nk; j++) {
          s[j] = expf(s[j] - m);
          l += s[j];
        }
        for (int64_t e = 0; e < dv8; e++) acc[e] = 0.0f;
        for (int64_t j = 0; j < nk; j++) ac_cpu_axpy_f32(acc, ac_cpu_round_f32(dt, s[j] / l), vv + j * dv8, dv8);
        for (int64_t e = 0; e < p->dv; e++) ac_cpu_store_f32(dt, t->o, ac_cpu_off(p->o_stride, b, h, i, e), acc[e]);
        if (lse) *lse = m + logf(l);
      }
    }
  free(kt), free(vv), free(s), free(acc);
  return 0;
}

static int cublas_run(int dt, const char *name, const attncheck_problem *p, const attncheck_tensors *t, char *err,
                      size_t err_len)
{
  return ac_cpu_cublas_impl(0.0f, dt, name, p, t, err, err_len);
}

AC_CPU_KERNEL(ac_cpu_cublas_f16, ATTNCHECK_F16, "cublas-style-f16", "fp16-cublas",
              "GEMM composite: binary32 Q.K^T stored as f16 scores, -inf mask, binary32 softmax, P stored as f16, "
              "binary32 P.V", cublas_run)
AC_CPU_KERNEL(ac_cpu_cublas_bf16, ATTNCHECK_BF16, "cublas-style-bf16", "bf16-cublas",
              "GEMM composite: binary32 Q.K^T stored as bf16 scores, -inf mask, binary32 softmax, P stored as bf16, "
              "binary32 P.V", cublas_run)
