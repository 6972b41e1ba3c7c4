/* cpu_splitkv.c: splitkv-f32, flash-decoding's split-KV scheme in binary32. The keys are cut
 * into chunks of ATTNCHECK_SPLITKV_CHUNK (default 128); each chunk is an independent softmax
 * giving a normalized partial output o_c and its lse_c; the partials are then merged through
 * their LSEs: w_c = exp(lse_c - max lse), o = Σ w_c o_c / Σ w_c, lse = max + log Σ w_c.
 * Dividing by the computed Σ w_c (rather than by exp(lse - max) of a rounded total LSE)
 * keeps the merge self-normalizing: an error common to every lse_c cancels.
 * splitkv-fa-f32 merges as FlashAttention's combine kernel does: lse = max + log Σ w_c, then
 * o = Σ exp(lse_c - lse) o_c, weights that need not sum to one (their rounding errs by about
 * u|lse| relative: the budget's LSE-merge term). */
#include "config.h"
#include "cpu_common.h"
#include <stdio.h>
#include <stdlib.h>

#define SPLITKV_QBLOCK 64

static int splitkv_supports(const attncheck_problem *p, char *why, size_t why_len)
{
  return ac_cpu_supports(p, ATTNCHECK_F32, 1, why, why_len);
}

static int splitkv_impl(int fa_merge, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                        char *err, size_t err_len)
{
  int64_t chunk;
  if (ac_cpu_env_block("ATTNCHECK_SPLITKV_CHUNK", 128, &chunk, err, err_len) < 0) return -1;
  const float *q = t->q, *k = t->k, *v = t->v;
  float *o = t->o;
  const float scale = (float)p->scale;
  const int64_t c8 = ac_cpu_pad(chunk), dv8 = ac_cpu_pad(p->dv);
  const int64_t nchmax = p->tk > 0 ? (p->tk + chunk - 1) / chunk : 1;
  float *qb = ac_cpu_scratch(SPLITKV_QBLOCK * p->dk, sizeof *qb);
  float *kt = ac_cpu_scratch(p->dk * c8, sizeof *kt);
  float *vb = ac_cpu_scratch(chunk * dv8, sizeof *vb);
  float *x = ac_cpu_scratch(c8, sizeof *x);
  float *acc = ac_cpu_scratch(dv8, sizeof *acc);
  float *po = ac_cpu_scratch(SPLITKV_QBLOCK * nchmax * dv8, sizeof *po);   /* partial outputs [r][ch][e] */
  float *plse = ac_cpu_scratch(SPLITKV_QBLOCK * nchmax, sizeof *plse);     /* partial LSEs [r][ch] */
  unsigned char *pok = ac_cpu_scratch(SPLITKV_QBLOCK * nchmax, 1);         /* chunk has a visible key */
  if (!qb || !kt || !vb || !x || !acc || !po || !plse || !pok) {
    free(qb), free(kt), free(vb), free(x), free(acc), free(po), free(plse), free(pok);
    snprintf(err, err_len, "%s: out of memory", name);
    return -1;
  }
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++) {
      const int64_t kvh = ac_cpu_kv_head(p, h);
      for (int64_t i0 = 0; i0 < p->tq; i0 += SPLITKV_QBLOCK) {
        const int64_t rows = ac_cpu_min(SPLITKV_QBLOCK, p->tq - i0);
        for (int64_t r = 0; r < rows; r++)
          for (int64_t d = 0; d < p->dk; d++) qb[r * p->dk + d] = q[ac_cpu_off(p->q_stride, b, h, i0 + r, d)];
        const int64_t kend = ac_cpu_visible(p, i0 + rows - 1);
        const int64_t nch = (kend + chunk - 1) / chunk;
        /* each chunk on its own */
        for (int64_t ch = 0; ch < nch; ch++) {
          const int64_t j0 = ch * chunk, cols = ac_cpu_min(chunk, kend - j0);
          for (int64_t d = 0; d < p->dk; d++) {
            for (int64_t c = 0; c < cols; c++) kt[d * c8 + c] = k[ac_cpu_off(p->k_stride, b, kvh, j0 + c, d)];
            for (int64_t c = cols; c < c8; c++) kt[d * c8 + c] = 0.0f;
          }
          for (int64_t c = 0; c < cols; c++)
            for (int64_t e = 0; e < p->dv; e++) vb[c * dv8 + e] = v[ac_cpu_off(p->v_stride, b, kvh, j0 + c, e)];
          for (int64_t r = 0; r < rows; r++) {
            const int64_t n = ac_cpu_min(cols, ac_cpu_visible(p, i0 + r) - j0);
            pok[r * nchmax + ch] = n > 0;
            if (n <= 0) continue;
            const int64_t n8 = ac_cpu_pad(n);
            for (int64_t c = 0; c < n8; c++) x[c] = 0.0f;
            for (int64_t d = 0; d < p->dk; d++) ac_cpu_axpy_f32(x, qb[r * p->dk + d], kt + d * c8, n8);
            float mc = -INFINITY;
            for (int64_t c = 0; c < n; c++) {
              x[c] *= scale;
              if (x[c] > mc) mc = x[c];
            }
            float lc = 0.0f;
            for (int64_t c = 0; c < n; c++) {
              x[c] = expf(x[c] - mc);
              lc += x[c];
            }
            for (int64_t e = 0; e < dv8; e++) acc[e] = 0.0f;
            for (int64_t c = 0; c < n; c++) ac_cpu_axpy_f32(acc, x[c], vb + c * dv8, dv8);
            float *oc = po + (r * nchmax + ch) * dv8;
            for (int64_t e = 0; e < p->dv; e++) oc[e] = acc[e] / lc;
            plse[r * nchmax + ch] = mc + logf(lc);
          }
        }
        /* merge the chunks of each row through their LSEs */
        for (int64_t r = 0; r < rows; r++) {
          const int64_t i = i0 + r;
          float *lse = t->lse ? &t->lse[ac_cpu_lse_index(p, b, h, i)] : NULL;
          if (ac_cpu_visible(p, i) == 0) {
            for (int64_t e = 0; e < p->dv; e++) o[ac_cpu_off(p->o_stride, b, h, i, e)] = 0.0f;
            if (lse) *lse = -INFINITY;
            continue;
          }
          float lmax = -INFINITY;
          for (int64_t ch = 0; ch < nch; ch++)
            if (pok[r * nchmax + ch] && plse[r * nchmax + ch] > lmax) lmax = plse[r * nchmax + ch];
          float wsum = 0.0f;
          for (int64_t e = 0; e < dv8; e++) acc[e] = 0.0f;
          if (fa_merge) {
            for (int64_t ch = 0; ch < nch; ch++)
              if (pok[r * nchmax + ch]) wsum += expf(plse[r * nchmax + ch] - lmax);
            const float ltot = lmax + logf(wsum);
            for (int64_t ch = 0; ch < nch; ch++)
              if (pok[r * nchmax + ch])
                ac_cpu_axpy_f32(acc, expf(plse[r * nchmax + ch] - ltot), po + (r * nchmax + ch) * dv8, dv8);
            for (int64_t e = 0; e < p->dv; e++) o[ac_cpu_off(p->o_stride, b, h, i, e)] = acc[e];
            if (lse) *lse = ltot;
            continue;
          }
          for (int64_t ch = 0; ch < nch; ch++) {
            if (!pok[r * nchmax + ch]) continue;
            const float w = expf(plse[r * nchmax + ch] - lmax);
            wsum += w;
            ac_cpu_axpy_f32(acc, w, po + (r * nchmax + ch) * dv8, dv8);
          }
          for (int64_t e = 0; e < p->dv; e++) o[ac_cpu_off(p->o_stride, b, h, i, e)] = acc[e] / wsum;
          if (lse) *lse = lmax + logf(wsum);
        }
      }
    }
  free(qb), free(kt), free(vb), free(x), free(acc), free(po), free(plse), free(pok);
  return 0;
}

static int splitkv_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  return splitkv_impl(0, "splitkv-f32", p, t, err, err_len);
}

static int splitkv_fa_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  return splitkv_impl(1, "splitkv-fa-f32", p, t, err, err_len);
}

const attncheck_kernel ac_cpu_splitkv_f32 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "splitkv-f32",
  "flash-decoding split-KV in binary32: chunks of ATTNCHECK_SPLITKV_CHUNK keys (default 128) merged through their LSEs",
  "fp32", ATTNCHECK_MEM_HOST, 0, splitkv_supports, splitkv_run, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL};

const attncheck_kernel ac_cpu_splitkv_fa_f32 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "splitkv-fa-f32",
  "split-KV in binary32 merged as FlashAttention's combine: o = sum of exp(lse_c - lse) o_c, not renormalized",
  "fp32", ATTNCHECK_MEM_HOST, 0, splitkv_supports, splitkv_fa_run, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL};
