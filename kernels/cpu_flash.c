/* cpu_flash.c: flash-f32, flash-f16, flash-bf16, flash-e4m3, flash-e5m2: FlashAttention-2's
 * tiled online softmax. Query blocks of Br rows meet key tiles of Bc columns; each row keeps
 * a running maximum m, a running sum l and an accumulator, both rescaled by exp(m_old - m_new)
 * when the maximum grows. Binary32 arithmetic; for narrower inputs P is rounded to the input
 * dtype before P·V while l sums the binary32 P, and the output is rounded once.
 * Block sizes: ATTNCHECK_FLASH_BR and ATTNCHECK_FLASH_BC (default 64 and 64). */
#include "config.h"
#include "cpu_common.h"
#include <stdio.h>
#include <stdlib.h>

static int flash_run(int dt, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                     char *err, size_t err_len)
{
  int64_t br, bc;
  if (ac_cpu_env_block("ATTNCHECK_FLASH_BR", 64, &br, err, err_len) < 0 ||
      ac_cpu_env_block("ATTNCHECK_FLASH_BC", 64, &bc, err, err_len) < 0)
    return -1;
  const float scale = (float)p->scale;
  const int64_t bc8 = ac_cpu_pad(bc), dv8 = ac_cpu_pad(p->dv);
  float *qb = ac_cpu_scratch(br * p->dk, sizeof *qb);     /* query block [r][d] */
  float *kt = ac_cpu_scratch(p->dk * bc8, sizeof *kt);    /* key tile, transposed [d][c] */
  float *vb = ac_cpu_scratch(bc * dv8, sizeof *vb);       /* value tile [c][e] */
  float *sc = ac_cpu_scratch(br * bc8, sizeof *sc);       /* scores, then P [r][c] */
  float *acc = ac_cpu_scratch(br * dv8, sizeof *acc);     /* unnormalized output [r][e] */
  float *m = ac_cpu_scratch(br, sizeof *m), *l = ac_cpu_scratch(br, sizeof *l);
  if (!qb || !kt || !vb || !sc || !acc || !m || !l) {
    free(qb), free(kt), free(vb), free(sc), free(acc), free(m), free(l);
    snprintf(err, err_len, "%s: out of memory", name);
    return -1;
  }
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++) {
      const int64_t kvh = ac_cpu_kv_head(p, h);
      for (int64_t i0 = 0; i0 < p->tq; i0 += br) {
        const int64_t rows = ac_cpu_min(br, p->tq - i0);
        for (int64_t r = 0; r < rows; r++) {
          for (int64_t d = 0; d < p->dk; d++)
            qb[r * p->dk + d] = ac_cpu_load_f32(dt, t->q, ac_cpu_off(p->q_stride, b, h, i0 + r, d));
          for (int64_t e = 0; e < dv8; e++) acc[r * dv8 + e] = 0.0f;
          m[r] = -INFINITY;
          l[r] = 0.0f;
        }
        /* Key tiles up to the last key any row of the block sees (visibility grows with i). */
        const int64_t kend = ac_cpu_visible(p, i0 + rows - 1);
        for (int64_t j0 = 0; j0 < kend; j0 += bc) {
          const int64_t cols = ac_cpu_min(bc, kend - j0);
          for (int64_t c = 0; c < cols; c++) {
            for (int64_t d = 0; d < p->dk; d++)
              kt[d * bc8 + c] = ac_cpu_load_f32(dt, t->k, ac_cpu_off(p->k_stride, b, kvh, j0 + c, d));
            for (int64_t e = 0; e < p->dv; e++)
              vb[c * dv8 + e] = ac_cpu_load_f32(dt, t->v, ac_cpu_off(p->v_stride, b, kvh, j0 + c, e));
          }
          for (int64_t c = cols; c < bc8; c++)
            for (int64_t d = 0; d < p->dk; d++) kt[d * bc8 + c] = 0.0f;
          for (int64_t r = 0; r < rows; r++) {
            /* Columns of this tile visible to the row: [0, n). Masked keys are never touched. */
            const int64_t n = ac_cpu_min(cols, ac_cpu_visible(p, i0 + r) - j0);
            if (n <= 0) continue;
            float *s = sc + r * bc8;
            for (int64_t c = 0; c < bc8; c++) s[c] = 0.0f;
            for (int64_t d = 0; d < p->dk; d++) ac_cpu_axpy_f32(s, qb[r * p->dk + d], kt + d * bc8, ac_cpu_pad(n));
            float mt = -INFINITY;
            for (int64_t c = 0; c < n; c++) {
              s[c] *= scale;
              if (s[c] > mt) mt = s[c];
            }
            const float mnew = mt > m[r] ? mt : m[r];
            /* A row whose scores are all -inf so far keeps m = -inf: subtract 0 instead. */
            const float mref = mnew == -INFINITY ? 0.0f : mnew;
            const float alpha = expf(m[r] - mref);
            l[r] *= alpha;
            ac_cpu_scal_f32(acc + r * dv8, alpha, dv8);
            for (int64_t c = 0; c < n; c++) {
              s[c] = expf(s[c] - mref);
              l[r] += s[c];
            }
            for (int64_t c = 0; c < n; c++) ac_cpu_axpy_f32(acc + r * dv8, ac_cpu_round_f32(dt, s[c]), vb + c * dv8, dv8);
            m[r] = mnew;
          }
        }
        for (int64_t r = 0; r < rows; r++) {
          const int64_t i = i0 + r;
          float *lse = t->lse ? &t->lse[ac_cpu_lse_index(p, b, h, i)] : NULL;
          if (ac_cpu_visible(p, i) == 0) {
            for (int64_t e = 0; e < p->dv; e++) ac_cpu_store_f32(dt, t->o, ac_cpu_off(p->o_stride, b, h, i, e), 0.0f);
            if (lse) *lse = -INFINITY;
            continue;
          }
          const float inv = 1.0f / l[r];
          for (int64_t e = 0; e < p->dv; e++)
            ac_cpu_store_f32(dt, t->o, ac_cpu_off(p->o_stride, b, h, i, e), acc[r * dv8 + e] * inv);
          if (lse) *lse = m[r] + logf(l[r]);
        }
      }
    }
  free(qb), free(kt), free(vb), free(sc), free(acc), free(m), free(l);
  return 0;
}

#define FLASH_KERNEL(SYM, DT, NAME, PREC, DESC) AC_CPU_KERNEL(ac_cpu_##SYM, DT, NAME, PREC, DESC, flash_run)

FLASH_KERNEL(flash_f32, ATTNCHECK_F32, "flash-f32", "fp32",
             "FlashAttention-2 tiled online softmax in binary32 (ATTNCHECK_FLASH_BR/BC, default 64x64)")
FLASH_KERNEL(flash_f16, ATTNCHECK_F16, "flash-f16", "fp16-fa2",
             "FlashAttention-2 tiled online softmax, f16 inputs, binary32 accumulation, P rounded to f16")
FLASH_KERNEL(flash_bf16, ATTNCHECK_BF16, "flash-bf16", "bf16-fa2",
             "FlashAttention-2 tiled online softmax, bf16 inputs, binary32 accumulation, P rounded to bf16")
FLASH_KERNEL(flash_e4m3, ATTNCHECK_E4M3, "flash-e4m3", "e4m3-fa3",
             "tiled online softmax, e4m3 inputs and output, binary32 accumulation, P rounded to e4m3")
FLASH_KERNEL(flash_e5m2, ATTNCHECK_E5M2, "flash-e5m2", "e5m2-fa3",
             "tiled online softmax, e5m2 inputs and output, binary32 accumulation, P rounded to e5m2")
