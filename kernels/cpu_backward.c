/* cpu_backward.c: the CPU backward pass (ABI 3 run_backward) in binary32 arithmetic, and the
 * correct backward kernels naive-bwd-f32, naive-bwd-bf16, flash-bwd-f32, flash-bwd-bf16.
 * Per (batch, kv head): K and V widened to binary32, dK and dV accumulated in binary32 over every
 * query row of every query head of the group, then dK scaled and both rounded once. Per query
 * row: the scores with the forward's pipeline (scale, ALiBi, bias, boolean mask, the mask and
 * window's key range), P, dP_j = dO_i·V_j, D_i, dS_j = P_j (dP_j - D_i), dQ_i = scale Σ_j dS_j K_j.
 *   naive: P materialized from the row's scores (maximum, sum with the sink), D_i = Σ_j P_j dP_j;
 *   flash (FlashAttention-2): P_j = e^(s_j - lse_i) from the given LSE, D_i = dO_i·O_i from the
 *     given O, rows in query tiles of AC_BWD_TILE.
 * Softcap: t_j = tanhf(scale d_j / cap) is kept per key (flash recomputes it in the tile from the
 * pre-cap score, as FlashAttention-2), s_j = cap t_j, and dS_j is taken through the cap as
 * dS_j (1 - t_j²) (FlashAttention-2's dtanh from the stored tanh).
 * bf16: P and dS are rounded to bf16 before the products with dO, Q and K (the GEMM inputs of
 * FlashAttention-2's backward); dQ, dK, dV are rounded to bf16 once at the end.
 * Dropout (flash kernels; the mask handed in tensors.dropout_mask), as FlashAttention-2's backward: D
 * scaled by fl(1 - p), dS_j = P_j (m_j dP_j - D (1 - p)), P m for dV, and rp = fl(1 / fl(1 - p)) on dV and
 * in fl(scale rp) on dQ and dK at the end. */
#include "config.h"
#include "cpu_backward.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const ac_cpu_bwd_cfg *c;
  const attncheck_problem *p;
  const attncheck_grad_tensors *g;
  ac_cpu_vx x;
  float scale;
  float keep, scale_rp;                 /* dropout: fl(1 - p), and the scale times rp (the scale without) */
  float *qi, *doi, *s, *pr, *ds, *dq;   /* one row: dk, dv, tk, tk, tk, dk */
  float *th;                            /* one row: tk, tanh of the pre-cap score (softcap) */
  float *kk, *vv;                       /* the kv head: [tk][dk], [tk][dv] */
  float *dk, *dv;                       /* accumulators: [tk][dk], [tk][dv] */
  double *dsink;                        /* [heads] */
} bwd;

static float rnd(const bwd *w, float v) { return ac_cpu_round_f32(w->c->dt, v); }

/* D_i = dO_i·O_i of row i of the current head (flash). */
static float row_d_from_o(const bwd *w, int64_t i)
{
  const attncheck_problem *p = w->p;
  float d = 0.0f;
  for (int64_t e = 0; e < p->dv; e++)
    d += ac_cpu_load_f32(w->c->dt, w->g->dout, ac_cpu_off(w->g->do_stride, w->x.b, w->x.h, i, e)) *
         ac_cpu_load_f32(w->c->dt, w->g->o, ac_cpu_off(p->o_stride, w->x.b, w->x.h, i, e));
  return d;
}

/* P of row i over keys [lo, hi) into w->pr (binary32) and the sink's weight; 0 when the row
 * has no visible key (and no sink). */
static int row_p(bwd *w, int64_t i, int64_t lo, int64_t hi, float *psink)
{
  const attncheck_problem *p = w->p;
  const ac_cpu_vx *x = &w->x;
  const unsigned bad = w->c->defects;
  float m = x->has_sink ? x->sink : -INFINITY;
  for (int64_t j = lo; j < hi; j++) {
    float d = 0.0f;
    for (int64_t t = 0; t < p->dk; t++) d += w->qi[t] * w->kk[j * p->dk + t];
    if (x->f & ATTNCHECK_FEAT_SOFTCAP) {   /* the forward's c tanh(s / c), the tanh kept */
      const float c = (float)p->softcap;
      w->th[j] = tanhf(d * w->scale / c);
      w->s[j] = ac_cpu_vx_bmask(x, i, j) ? ac_cpu_vx_bias(x, i, j, ac_cpu_vx_alibi(x, i, j, c * w->th[j])) : -INFINITY;
    } else {
      w->s[j] = ac_cpu_vx_score(x, i, j, d * w->scale);
    }
    if (w->s[j] > m) m = w->s[j];
  }
  if (m == -INFINITY) return 0;
  float sub = m, sum = 1.0f;
  if (w->c->flash && !(bad & AC_BWD_NO_LSE)) {
    sub = w->g->lse[ac_cpu_lse_index(p, x->b, x->h, i)];
    if (bad & AC_BWD_LSE_BF16) sub = ac_cpu_round_f32(ATTNCHECK_BF16, sub);
    if (sub == -INFINITY) return 0;
  } else if (!(bad & AC_BWD_NO_LSE)) {
    sum = x->has_sink ? expf(x->sink - m) : 0.0f;
    for (int64_t j = lo; j < hi; j++) sum += expf(w->s[j] - m);
  }
  for (int64_t j = lo; j < hi; j++) w->pr[j] = expf(w->s[j] - sub) / sum;
  *psink = x->has_sink ? expf(x->sink - sub) / sum : 0.0f;
  return 1;
}

/* Row i of the current head: dQ_i stored, dK, dV and dσ accumulated. */
static void bwd_row(bwd *w, int64_t i, int last_tile)
{
  const attncheck_problem *p = w->p;
  const ac_cpu_vx *x = &w->x;
  const unsigned bad = w->c->defects;
  const int dt = w->c->dt;
  int64_t lo, hi;
  ac_cpu_vx_range(x, i, &lo, &hi);
  if ((bad & AC_BWD_NO_CAUSAL) && p->mask != ATTNCHECK_MASK_NONE) hi = p->tk;
  for (int64_t t = 0; t < p->dk; t++) w->qi[t] = ac_cpu_load_f32(dt, x->t->q, ac_cpu_off(p->q_stride, x->b, x->h, i, t));
  for (int64_t e = 0; e < p->dv; e++) w->doi[e] = ac_cpu_load_f32(dt, w->g->dout, ac_cpu_off(w->g->do_stride, x->b, x->h, i, e));
  memset(w->dq, 0, (size_t)p->dk * sizeof(float));
  float psink = 0.0f;
  const int drop = (x->f & ATTNCHECK_FEAT_DROPOUT) != 0;
  if (hi > lo && row_p(w, i, lo, hi, &psink)) {
    float D = 0.0f;
    /* dropout, as FlashAttention-2: D (1 - p) = Σ_j P_j m_j dP_j, dS_j = P_j (m_j dP_j - D (1 - p)), the
     * factor rp = 1 / (1 - p) on dQ, dK and dV at the end */
    if (w->c->flash)
      D = row_d_from_o(w, (bad & AC_BWD_D_WRONG_ROW) ? (i + 1) % p->tq : i) *
          (drop && !(bad & AC_BWD_DROP_D_UNSCALED) ? w->keep : 1.0f);
    for (int64_t j = lo; j < hi; j++) {
      float dp = 0.0f;
      for (int64_t e = 0; e < p->dv; e++) dp += w->doi[e] * w->vv[j * p->dv + e];
      if (drop) dp *= ac_cpu_vx_keep(x, i, j);
      w->ds[j] = (bad & AC_BWD_DP_ROUNDED) ? ac_cpu_round_f32(ATTNCHECK_BF16, dp) : dp;
      if (!w->c->flash) D += w->pr[j] * dp;
    }
    const int add_dk = !(last_tile && (bad & AC_BWD_SKIP_LAST_TILE));
    const int cap = (x->f & ATTNCHECK_FEAT_SOFTCAP) && !(bad & AC_BWD_NO_CAP_DERIV);
    for (int64_t j = lo; j < hi; j++) {
      float dsj = w->pr[j] * (w->ds[j] - D);
      if (cap) dsj *= 1.0f - w->th[j] * w->th[j];   /* through the cap: dtanh = 1 - t² */
      const float ds = rnd(w, dsj), pj = rnd(w, w->pr[j]) * (drop ? ac_cpu_vx_keep(x, i, j) : 1.0f);
      for (int64_t t = 0; t < p->dk; t++) w->dq[t] += ds * w->kk[j * p->dk + t];
      if (add_dk)
        for (int64_t t = 0; t < p->dk; t++) w->dk[j * p->dk + t] += ds * w->qi[t];
      for (int64_t e = 0; e < p->dv; e++) w->dv[j * p->dv + e] += pj * w->doi[e];
    }
    w->dsink[x->h] -= (double)psink * (double)D * (double)x->rp;
  }
  for (int64_t t = 0; t < p->dk; t++)
    ac_cpu_store_f32(dt, w->g->dq, ac_cpu_off(w->g->dq_stride, x->b, x->h, i, t), w->dq[t] * w->scale_rp);
}

/* Every query head of kv head kvh of batch b, then dK and dV of the kv head stored. */
static void bwd_group(bwd *w, int64_t b, int64_t kvh)
{
  const attncheck_problem *p = w->p;
  const int dt = w->c->dt;
  const int64_t gs = p->heads / p->kv_heads;
  for (int64_t j = 0; j < p->tk; j++) {
    for (int64_t t = 0; t < p->dk; t++) w->kk[j * p->dk + t] = ac_cpu_load_f32(dt, w->x.t->k, ac_cpu_off(p->k_stride, b, kvh, j, t));
    for (int64_t e = 0; e < p->dv; e++) w->vv[j * p->dv + e] = ac_cpu_load_f32(dt, w->x.t->v, ac_cpu_off(p->v_stride, b, kvh, j, e));
  }
  for (int64_t h = kvh * gs; h < (kvh + 1) * gs; h++) {
    if (h == kvh * gs || (w->c->defects & AC_BWD_GQA_NO_SUM)) {
      memset(w->dk, 0, (size_t)(p->tk * p->dk) * sizeof(float));
      memset(w->dv, 0, (size_t)(p->tk * p->dv) * sizeof(float));
    }
    ac_cpu_vx_head(&w->x, b, h, w->scale);
    const int64_t last0 = (p->tq - 1) / AC_BWD_TILE * AC_BWD_TILE;
    for (int64_t i0 = 0; i0 < p->tq; i0 += AC_BWD_TILE)
      for (int64_t i = i0; i < ac_cpu_min(i0 + AC_BWD_TILE, p->tq); i++) bwd_row(w, i, w->c->flash && i0 == last0);
  }
  const float ks = (w->c->defects & AC_BWD_DK_NO_SCALE) ? w->x.rp : w->scale_rp;
  for (int64_t j = 0; j < p->tk; j++) {
    for (int64_t t = 0; t < p->dk; t++)
      ac_cpu_store_f32(dt, w->g->dk, ac_cpu_off(w->g->dk_stride, b, kvh, j, t), w->dk[j * p->dk + t] * ks);
    for (int64_t e = 0; e < p->dv; e++)
      ac_cpu_store_f32(dt, w->g->dv, ac_cpu_off(w->g->dv_stride, b, kvh, j, e), w->dv[j * p->dv + e] * w->x.rp);
  }
}

int ac_cpu_backward(const ac_cpu_bwd_cfg *cfg, const attncheck_problem *p, const attncheck_tensors *t,
                    const attncheck_grad_tensors *g, char *err, size_t err_len)
{
  bwd w;
  memset(&w, 0, sizeof w);
  w.c = cfg, w.p = p, w.g = g;
  if (ac_cpu_vx_init(&w.x, cfg->dt, p, t, err, err_len)) return -1;
  if (!g || g->struct_size < sizeof *g || !g->dout || !g->dq || !g->dk || !g->dv || (cfg->flash && (!g->o || !g->lse))) {
    snprintf(err, err_len, "run_backward: a gradient tensor is missing");
    return -1;
  }
  w.scale = (float)p->scale;
  w.keep = 1.0f - p->dropout_p;
  w.scale_rp = w.scale * w.x.rp;   /* FlashAttention-2's scale_softmax_rp_dropout; exactly the scale without dropout */
  float *rows = ac_cpu_scratch(2 * p->dk + p->dv + 4 * p->tk, sizeof(float));
  float *kv = ac_cpu_scratch(2 * p->tk * (p->dk + p->dv), sizeof(float));
  w.dsink = ac_cpu_scratch(p->heads, sizeof(double));
  if (!rows || !kv || !w.dsink) {
    free(rows), free(kv), free(w.dsink);
    snprintf(err, err_len, "out of memory");
    return -1;
  }
  w.qi = rows, w.dq = rows + p->dk, w.doi = rows + 2 * p->dk;
  w.s = w.doi + p->dv, w.pr = w.s + p->tk, w.ds = w.pr + p->tk, w.th = w.ds + p->tk;
  w.kk = kv, w.dk = kv + p->tk * p->dk, w.vv = kv + 2 * p->tk * p->dk, w.dv = w.vv + p->tk * p->dv;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kvh = 0; kvh < p->kv_heads; kvh++) bwd_group(&w, b, kvh);
  if (g->dsinks)
    for (int64_t h = 0; h < p->heads; h++) g->dsinks[h] = (float)w.dsink[h];
  free(rows), free(kv), free(w.dsink);
  return 0;
}

AC_CPU_BWD_KERNEL(ac_cpu_naive_bwd_f32, ac_cpu_naive_f32, ATTNCHECK_F32, 0, 0u, "naive-bwd-f32", "fp32",
                  "naive-f32 with a backward: P materialized from the scores, D = sum P dP, binary32")
AC_CPU_BWD_KERNEL(ac_cpu_naive_bwd_bf16, ac_cpu_naive_bf16, ATTNCHECK_BF16, 0, 0u, "naive-bwd-bf16", "bf16-fa2",
                  "naive-bf16 with a backward: P materialized, D = sum P dP, P and dS rounded to bf16 before the products")
/* the flash kernels take dropout too, forward (cpu_flash.c) and backward */
AC_CPU_BWD_KERNEL_CAPS(ac_cpu_flash_bwd_f32, ac_cpu_flash_f32, ATTNCHECK_F32, 1, 0u, AC_BWD_CAPS | ATTNCHECK_FEAT_DROPOUT,
                       "flash-bwd-f32", "fp32",
                       "flash-f32 with a FlashAttention-2 backward: P from the LSE, D = dO.O, query tiles of 16, binary32")
AC_CPU_BWD_KERNEL_CAPS(ac_cpu_flash_bwd_bf16, ac_cpu_flash_bf16, ATTNCHECK_BF16, 1, 0u, AC_BWD_CAPS | ATTNCHECK_FEAT_DROPOUT,
                       "flash-bwd-bf16", "bf16-fa2",
                       "flash-bf16 with a FlashAttention-2 backward: P from the LSE, D = dO.O, P and dS rounded to bf16")
