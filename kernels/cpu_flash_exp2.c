/* cpu_flash_exp2.c: flash-exp2-f32, the FlashAttention-3 arrangement of the online softmax:
 * log2 e is folded into the scale once, scores live in the log2 domain and every exponential
 * is an exp2f; key tiles are visited from the last to the first, as the FlashAttention
 * kernels do. Binary32 throughout. Block sizes: ATTNCHECK_FLASH_BR and ATTNCHECK_FLASH_BC
 * (default 128 and 128). */
#include "config.h"
#include "cpu_common.h"
#include <stdio.h>
#include <stdlib.h>

static int flash_exp2_supports(const attncheck_problem *p, char *why, size_t why_len)
{
  return ac_cpu_supports(p, ATTNCHECK_F32, 1, why, why_len);
}

static int flash_exp2_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  int64_t br, bc;
  if (ac_cpu_env_block("ATTNCHECK_FLASH_BR", 128, &br, err, err_len) < 0 ||
      ac_cpu_env_block("ATTNCHECK_FLASH_BC", 128, &bc, err, err_len) < 0)
    return -1;
  const float *q = t->q, *k = t->k, *v = t->v;
  float *o = t->o;
  const float scale_log2 = (float)(p->scale * 1.4426950408889634);   /* scale * log2(e) */
  const float ln2 = 0.693147180559945309f;
  const int64_t bc8 = ac_cpu_pad(bc), dv8 = ac_cpu_pad(p->dv);
  float *qb = ac_cpu_scratch(br * p->dk, sizeof *qb);
  float *kt = ac_cpu_scratch(p->dk * bc8, sizeof *kt);
  float *vb = ac_cpu_scratch(bc * dv8, sizeof *vb);
  float *x = ac_cpu_scratch(bc8, sizeof *x);
  float *acc = ac_cpu_scratch(br * dv8, sizeof *acc);
  float *m2 = ac_cpu_scratch(br, sizeof *m2), *l = ac_cpu_scratch(br, sizeof *l);
  if (!qb || !kt || !vb || !x || !acc || !m2 || !l) {
    free(qb), free(kt), free(vb), free(x), free(acc), free(m2), free(l);
    snprintf(err, err_len, "flash-exp2-f32: out of memory");
    return -1;
  }
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++) {
      const int64_t kvh = ac_cpu_kv_head(p, h);
      for (int64_t i0 = 0; i0 < p->tq; i0 += br) {
        const int64_t rows = ac_cpu_min(br, p->tq - i0);
        for (int64_t r = 0; r < rows; r++) {
          for (int64_t d = 0; d < p->dk; d++) qb[r * p->dk + d] = q[ac_cpu_off(p->q_stride, b, h, i0 + r, d)];
          for (int64_t e = 0; e < dv8; e++) acc[r * dv8 + e] = 0.0f;
          m2[r] = -INFINITY;
          l[r] = 0.0f;
        }
        const int64_t kend = ac_cpu_visible(p, i0 + rows - 1);
        const int64_t ntiles = (kend + bc - 1) / bc;
        for (int64_t tile = ntiles - 1; tile >= 0; tile--) {
          const int64_t j0 = tile * bc, cols = ac_cpu_min(bc, kend - j0);
          for (int64_t d = 0; d < p->dk; d++) {
            for (int64_t c = 0; c < cols; c++) kt[d * bc8 + c] = k[ac_cpu_off(p->k_stride, b, kvh, j0 + c, d)];
            for (int64_t c = cols; c < bc8; c++) kt[d * bc8 + c] = 0.0f;
          }
          for (int64_t c = 0; c < cols; c++)
            for (int64_t e = 0; e < p->dv; e++) vb[c * dv8 + e] = v[ac_cpu_off(p->v_stride, b, kvh, j0 + c, e)];
          for (int64_t r = 0; r < rows; r++) {
            const int64_t n = ac_cpu_min(cols, ac_cpu_visible(p, i0 + r) - j0);
            if (n <= 0) continue;
            const int64_t n8 = ac_cpu_pad(n);
            for (int64_t c = 0; c < n8; c++) x[c] = 0.0f;
            for (int64_t d = 0; d < p->dk; d++) ac_cpu_axpy_f32(x, qb[r * p->dk + d], kt + d * bc8, n8);
            /* scores in the log2 domain: x = s * log2(e) */
            float mt = -INFINITY;
            for (int64_t c = 0; c < n; c++) {
              x[c] *= scale_log2;
              if (x[c] > mt) mt = x[c];
            }
            const float mnew = mt > m2[r] ? mt : m2[r];
            const float mref = mnew == -INFINITY ? 0.0f : mnew;
            const float alpha = exp2f(m2[r] - mref);
            float rowsum = 0.0f;
            for (int64_t c = 0; c < n; c++) {
              x[c] = exp2f(x[c] - mref);
              rowsum += x[c];
            }
            l[r] = l[r] * alpha + rowsum;
            float *a = acc + r * dv8;
            ac_cpu_scal_f32(a, alpha, dv8);
            for (int64_t c = 0; c < n; c++) ac_cpu_axpy_f32(a, x[c], vb + c * dv8, dv8);
            m2[r] = mnew;
          }
        }
        for (int64_t r = 0; r < rows; r++) {
          const int64_t i = i0 + r;
          float *lse = t->lse ? &t->lse[ac_cpu_lse_index(p, b, h, i)] : NULL;
          if (ac_cpu_visible(p, i) == 0) {
            for (int64_t e = 0; e < p->dv; e++) o[ac_cpu_off(p->o_stride, b, h, i, e)] = 0.0f;
            if (lse) *lse = -INFINITY;
            continue;
          }
          const float inv = 1.0f / l[r];
          for (int64_t e = 0; e < p->dv; e++) o[ac_cpu_off(p->o_stride, b, h, i, e)] = acc[r * dv8 + e] * inv;
          if (lse) *lse = m2[r] * ln2 + logf(l[r]);
        }
      }
    }
  free(qb), free(kt), free(vb), free(x), free(acc), free(m2), free(l);
  return 0;
}

const attncheck_kernel ac_cpu_flash_exp2_f32 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "flash-exp2-f32",
  "FlashAttention-3 style: exp2f with log2 e folded into the scale, key tiles last to first (default 128x128)",
  "fp32-exp2", ATTNCHECK_MEM_HOST, 0, flash_exp2_supports, flash_exp2_run, {NULL, NULL, NULL, NULL}, NULL, 0, 0,
  0, 0, NULL, 0, 0, NULL};
