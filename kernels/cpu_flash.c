/* cpu_flash.c: flash-f32, flash-f16, flash-bf16, flash-e4m3, flash-e5m2: FlashAttention-2's
 * tiled online softmax. Query blocks of Br rows meet key tiles of Bc columns; each row keeps
 * a running maximum m, a running sum l and an accumulator, both rescaled by exp(m_old - m_new)
 * when the maximum grows. Binary32 arithmetic; for narrower inputs P is rounded to the input
 * dtype before P·V while l sums the binary32 P, and the output is rounded once.
 * Block sizes: ATTNCHECK_FLASH_BR and ATTNCHECK_FLASH_BC (default 64 and 64).
 * ABI 2 variants (flash-f32, flash-f16, flash-bf16; the fp8 kernels declare none): key tiles
 * outside the window and tiles the boolean mask hides from the whole block are skipped, keys
 * outside the window inside a tile are not computed; the score pipeline is ac_cpu_vx_score
 * (descales folded into the scale, softcap, ALiBi, bias, boolean mask as -inf); the sink joins
 * the sum and the LSE in the epilogue; descale_v scales the output. flash-f32 also takes
 * f16/bf16 K and V with f32 Q and O. Dropout (docs/dropout.md), as FlashAttention-2: the mask of the
 * reference generator (ac_cpu_drop_fill) zeroes P for P·V after its rounding, the row sum keeps every P,
 * and rp = fl(1 / fl(1 - p)) joins the epilogue's fl(1 / l). */
#include "config.h"
#include "cpu_common.h"
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int dt;
  int64_t br, bc, bc8, dv8;
  float *qb, *kt, *vb, *sc, *acc, *m, *l;
} flash_ctx;

/* Row r (query i) of the block against the key tile [j0, j0 + cols): the visible columns
 * [clo, n) join the row's running maximum, sum and accumulator. Columns before clo (window)
 * are not computed; a tile whose every score is -inf for the row (boolean mask, -inf bias)
 * changes nothing. */
static void flash_tile_row(const flash_ctx *F, const ac_cpu_vx *x, int64_t r, int64_t i, int64_t j0, int64_t cols)
{
  const attncheck_problem *p = x->p;
  const int64_t bc8 = F->bc8, dv8 = F->dv8;
  int64_t lo, hi;
  ac_cpu_vx_range(x, i, &lo, &hi);
  const int64_t clo = lo > j0 ? lo - j0 : 0, n = ac_cpu_min(cols, hi - j0);
  if (n <= clo) return;
  const int64_t c8 = clo / AC_CPU_VW * AC_CPU_VW;
  float *s = F->sc + r * bc8, *m = F->m, *l = F->l, *acc = F->acc;
  for (int64_t c = 0; c < bc8; c++) s[c] = 0.0f;
  for (int64_t d = 0; d < p->dk; d++)
    ac_cpu_axpy_f32(s + c8, F->qb[r * p->dk + d], F->kt + d * bc8 + c8, ac_cpu_pad(n) - c8);
  const float scale = x->scale;
  const int sf = (x->f & AC_CPU_SCORE_FEATS) != 0;
  float mt = -INFINITY;
  int nan = 0;
  for (int64_t c = clo; c < n; c++) {
    s[c] *= scale;
    if (sf) s[c] = ac_cpu_vx_score(x, i, j0 + c, s[c]);
    if (s[c] > mt) mt = s[c];
    else if (s[c] != s[c]) nan = 1;
  }
  /* a tile of -inf scores changes nothing; a NaN score must still reach the sum and the output */
  if (x->f && mt == -INFINITY && !nan) return;
  const float mnew = mt > m[r] ? mt : m[r];
  /* A row whose scores are all -inf so far keeps m = -inf: subtract 0 instead. */
  const float mref = mnew == -INFINITY ? 0.0f : mnew;
  const float alpha = expf(m[r] - mref);
  l[r] *= alpha;
  ac_cpu_scal_f32(acc + r * dv8, alpha, dv8);
  for (int64_t c = clo; c < n; c++) {
    s[c] = expf(s[c] - mref);
    l[r] += s[c];
  }
  const int drop = (x->f & ATTNCHECK_FEAT_DROPOUT) != 0;   /* dropout: the row sum keeps every P, P·V the kept ones */
  for (int64_t c = clo; c < n; c++)
    ac_cpu_axpy_f32(acc + r * dv8, ac_cpu_round_f32(F->dt, s[c]) * (drop ? ac_cpu_vx_keep(x, i, j0 + c) : 1.0f),
                    F->vb + c * dv8, dv8);
  m[r] = mnew;
}

/* The epilogue of row r (query i): o = acc / l, lse = m + ln l; a sink joins the sum here
 * (rescaled to the larger of m and the sink); a row that saw no key is written empty. */
static void flash_finish_row(const flash_ctx *F, const ac_cpu_vx *x, int64_t r, int64_t i)
{
  const attncheck_problem *p = x->p;
  float *lse = x->t->lse ? &x->t->lse[ac_cpu_lse_index(p, x->b, x->h, i)] : NULL;
  int64_t lo, hi;
  ac_cpu_vx_range(x, i, &lo, &hi);
  if (hi <= lo || (x->f && F->l[r] == 0.0f)) {
    ac_cpu_vx_empty_row(x, i, lse);
    return;
  }
  const float m = F->m[r], l = F->l[r];
  const float *acc = F->acc + r * F->dv8;
  if (x->has_sink) {
    const float mf = x->sink > m ? x->sink : m, a = expf(m - mf), den = l * a + expf(x->sink - mf), inv = a / den;
    for (int64_t e = 0; e < p->dv; e++) ac_cpu_vx_store_o(x, i, e, acc[e] * (x->rp == 1.0f ? inv : inv * x->rp));
    if (lse) *lse = mf + logf(den);
    return;
  }
  /* dropout: rp_dropout joins the normalization, fl(fl(1 / l) rp), as FlashAttention-2's epilogue */
  const float inv = x->rp == 1.0f ? 1.0f / l : 1.0f / l * x->rp;
  for (int64_t e = 0; e < p->dv; e++) ac_cpu_vx_store_o(x, i, e, acc[e] * inv);
  if (lse) *lse = m + logf(l);
}

/* Query block [i0, i0 + rows) of the current head: key tiles from the one holding the first
 * row's first key (window) to the last row's last key (visibility grows with i); tiles the
 * boolean mask hides from every row are skipped. */
static void flash_block(const flash_ctx *F, const ac_cpu_vx *x, int64_t i0, int64_t rows)
{
  const attncheck_problem *p = x->p;
  const int64_t kvh = ac_cpu_kv_head(p, x->h), bc = F->bc, bc8 = F->bc8, dv8 = F->dv8;
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t d = 0; d < p->dk; d++)
      F->qb[r * p->dk + d] = ac_cpu_load_f32(x->qd, x->t->q, ac_cpu_off(p->q_stride, x->b, x->h, i0 + r, d));
    for (int64_t e = 0; e < dv8; e++) F->acc[r * dv8 + e] = 0.0f;
    F->m[r] = -INFINITY;
    F->l[r] = 0.0f;
  }
  int64_t kbegin, kend, unused;
  ac_cpu_vx_range(x, i0, &kbegin, &unused);
  ac_cpu_vx_range(x, i0 + rows - 1, &unused, &kend);
  for (int64_t j0 = kbegin / bc * bc; j0 < kend; j0 += bc) {
    const int64_t cols = ac_cpu_min(bc, kend - j0);
    if (ac_cpu_vx_tile_hidden(x, i0, rows, j0, cols)) continue;
    for (int64_t c = 0; c < cols; c++) {
      for (int64_t d = 0; d < p->dk; d++)
        F->kt[d * bc8 + c] = ac_cpu_load_f32(x->kd, x->t->k, ac_cpu_off(p->k_stride, x->b, kvh, j0 + c, d));
      for (int64_t e = 0; e < p->dv; e++)
        F->vb[c * dv8 + e] = ac_cpu_load_f32(x->vd, x->t->v, ac_cpu_off(p->v_stride, x->b, kvh, j0 + c, e));
    }
    for (int64_t c = cols; c < bc8; c++)
      for (int64_t d = 0; d < p->dk; d++) F->kt[d * bc8 + c] = 0.0f;
    for (int64_t r = 0; r < rows; r++) flash_tile_row(F, x, r, i0 + r, j0, cols);
  }
  for (int64_t r = 0; r < rows; r++) flash_finish_row(F, x, r, i0 + r);
}

static int flash_run(int dt, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                     char *err, size_t err_len)
{
  flash_ctx F = {.dt = dt};
  ac_cpu_vx x;
  if (ac_cpu_env_block("ATTNCHECK_FLASH_BR", 64, &F.br, err, err_len) < 0 ||
      ac_cpu_env_block("ATTNCHECK_FLASH_BC", 64, &F.bc, err, err_len) < 0 ||
      ac_cpu_vx_init(&x, dt, p, t, err, err_len) < 0)
    return -1;
  F.bc8 = ac_cpu_pad(F.bc), F.dv8 = ac_cpu_pad(p->dv);
  F.qb = ac_cpu_scratch(F.br * p->dk, sizeof *F.qb);      /* query block [r][d] */
  F.kt = ac_cpu_scratch(p->dk * F.bc8, sizeof *F.kt);     /* key tile, transposed [d][c] */
  F.vb = ac_cpu_scratch(F.bc * F.dv8, sizeof *F.vb);      /* value tile [c][e] */
  F.sc = ac_cpu_scratch(F.br * F.bc8, sizeof *F.sc);      /* scores, then P [r][c] */
  F.acc = ac_cpu_scratch(F.br * F.dv8, sizeof *F.acc);    /* unnormalized output [r][e] */
  F.m = ac_cpu_scratch(F.br, sizeof *F.m), F.l = ac_cpu_scratch(F.br, sizeof *F.l);
  if (!F.qb || !F.kt || !F.vb || !F.sc || !F.acc || !F.m || !F.l) {
    free(F.qb), free(F.kt), free(F.vb), free(F.sc), free(F.acc), free(F.m), free(F.l);
    snprintf(err, err_len, "%s: out of memory", name);
    return -1;
  }
  if (x.f & ATTNCHECK_FEAT_DROPOUT) ac_cpu_drop_fill(p, t->dropout_mask, 1);   /* the kernel's own keep-mask */
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++) {
      ac_cpu_vx_head(&x, b, h, (float)p->scale);
      for (int64_t i0 = 0; i0 < p->tq; i0 += F.br) flash_block(&F, &x, i0, ac_cpu_min(F.br, p->tq - i0));
    }
  free(F.qb), free(F.kt), free(F.vb), free(F.sc), free(F.acc), free(F.m), free(F.l);
  return 0;
}

/* Every ABI 2 feature and dropout; the binary32 kernel also takes f16/bf16 K and V. */
#define FLASH_CAPS ((ATTNCHECK_FEAT_ALL & ~ATTNCHECK_FEAT_MIXED_DTYPES) | ATTNCHECK_FEAT_DROPOUT)

AC_CPU_KERNEL_CAPS(ac_cpu_flash_f32, ATTNCHECK_F32, "flash-f32", "fp32", ATTNCHECK_FEAT_ALL | ATTNCHECK_FEAT_DROPOUT,
             "FlashAttention-2 tiled online softmax in binary32 (ATTNCHECK_FLASH_BR/BC, default 64x64)", flash_run)
AC_CPU_KERNEL_CAPS(ac_cpu_flash_f16, ATTNCHECK_F16, "flash-f16", "fp16-fa2", FLASH_CAPS,
             "FlashAttention-2 tiled online softmax, f16 inputs, binary32 accumulation, P rounded to f16", flash_run)
AC_CPU_KERNEL_CAPS(ac_cpu_flash_bf16, ATTNCHECK_BF16, "flash-bf16", "bf16-fa2", FLASH_CAPS,
             "FlashAttention-2 tiled online softmax, bf16 inputs, binary32 accumulation, P rounded to bf16", flash_run)
/* fp8: mixed dtypes only (O also in bf16, f16 or f32, as FlashAttention-3's fp8 path writes bf16). */
AC_CPU_KERNEL_CAPS(ac_cpu_flash_e4m3, ATTNCHECK_E4M3, "flash-e4m3", "e4m3-fa3", ATTNCHECK_FEAT_MIXED_DTYPES,
                   "tiled online softmax, e4m3 inputs and output (or bf16, f16, f32 output), binary32 accumulation, "
                   "P rounded to e4m3", flash_run)
AC_CPU_KERNEL_CAPS(ac_cpu_flash_e5m2, ATTNCHECK_E5M2, "flash-e5m2", "e5m2-fa3", ATTNCHECK_FEAT_MIXED_DTYPES,
                   "tiled online softmax, e5m2 inputs and output (or bf16, f16, f32 output), binary32 accumulation, "
                   "P rounded to e5m2", flash_run)
