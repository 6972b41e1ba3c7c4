/* cpu_varlen_bwd.c: the backward of flash-varlen-f32 and flash-varlen-bf16 (ABI 4 run_backward
 * with ATTNCHECK_FEAT_VARLEN; docs/backward.md §7): FlashAttention-2's varlen backward, one
 * sequence at a time, each through the dense FlashAttention-2 backward of cpu_backward.c (P from
 * the given LSE, D = dO·O from the given O, query tiles of AC_BWD_TILE; bf16 rounds P and dS to
 * bf16 before the products) on a dense view of the sequence: batch 1, tq_b queries, tk_b keys,
 * q, o, dO, dq at packed token cu_seqlens_q[b], k, v, dk, dv at cu_seqlens_k[b] (the packed
 * strides serve unchanged), the bias and boolean mask rows of its tokens, its row of
 * per-sequence ALiBi slopes, its LSE [heads][tq_b] gathered from [heads][total_q]; dσ summed
 * over the sequences. A sequence without queries writes dK = dV = 0, one without keys dQ = 0.
 * Paged caches get no backward (an inference layout). */
#include "config.h"
#include "cpu_varlen.h"
#include <stdio.h>
#include <stdlib.h>

static size_t esize(int dt)
{
  return dt == ATTNCHECK_F64 ? 8 : dt == ATTNCHECK_F32 ? 4 : dt == ATTNCHECK_E4M3 || dt == ATTNCHECK_E5M2 ? 1 : 2;
}

/* x + n elements of dtype dt (NULL stays NULL). */
static const void *at(const void *x, int64_t n, int dt)
{
  return x ? (const char *)x + n * (int64_t)esize(dt) : NULL;
}

/* The dense views of sequence b (keys tk) and its LSE rows into lse. */
static void seq_view(const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g, int64_t b,
                     int64_t tk, float *lse, attncheck_problem *vp, attncheck_tensors *vt, attncheck_grad_tensors *vg)
{
  const int64_t q0 = t->cu_seqlens_q[b], k0 = t->cu_seqlens_k[b], tq = t->cu_seqlens_q[b + 1] - q0;
  const int dt = p->dtype;
  *vp = *p, *vt = *t, *vg = *g;
  vp->features &= ~(uint32_t)ATTNCHECK_FEAT_VARLEN;
  vp->batch = 1, vp->tq = tq, vp->tk = tk, vp->total_q = vp->total_k = 0;
  vt->q = at(t->q, q0 * p->q_stride[2], dt);
  vt->k = at(t->k, k0 * p->k_stride[2], dt);
  vt->v = at(t->v, k0 * p->v_stride[2], dt);
  vt->o = NULL, vt->lse = NULL;
  vt->bias = at(t->bias, q0 * p->bias_stride[2], p->bias_dtype);
  vt->bool_mask = t->bool_mask ? t->bool_mask + q0 * p->bool_mask_stride[2] : NULL;
  if (t->alibi_slopes && p->alibi_per_batch) vt->alibi_slopes = t->alibi_slopes + b * p->heads, vp->alibi_per_batch = 0;
  vt->cu_seqlens_q = vt->cu_seqlens_k = NULL;
  vg->o = at(g->o, q0 * p->o_stride[2], dt);
  vg->dout = at(g->dout, q0 * g->do_stride[2], dt);
  vg->dq = (void *)at(g->dq, q0 * g->dq_stride[2], dt);
  vg->dk = (void *)at(g->dk, k0 * g->dk_stride[2], dt);
  vg->dv = (void *)at(g->dv, k0 * g->dv_stride[2], dt);
  for (int64_t h = 0; h < p->heads; h++)
    for (int64_t i = 0; i < tq; i++) lse[h * tq + i] = g->lse[h * p->total_q + q0 + i];
  vg->lse = lse;
}

int ac_cpu_varlen_backward(int dt, int bug, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                           const attncheck_grad_tensors *g, char *err, size_t err_len)
{
  if (!(p->features & ATTNCHECK_FEAT_VARLEN) || !t->cu_seqlens_q || !t->cu_seqlens_k) {
    snprintf(err, err_len, "%s: the backward takes varlen batches only", name);
    return -1;
  }
  if (!g || g->struct_size < sizeof *g || !g->lse || !g->o) {
    snprintf(err, err_len, "%s: run_backward: a gradient tensor is missing", name);
    return -1;
  }
  const ac_cpu_bwd_cfg cfg = {dt, 1, 0u};
  float *lse = ac_cpu_scratch(p->heads * (p->tq + 1), sizeof *lse), *ds = ac_cpu_scratch(p->heads, sizeof *ds);
  double *dsum = ac_cpu_scratch(p->heads, sizeof *dsum);
  int rc = lse && ds && dsum ? 0 : -1;
  if (rc) snprintf(err, err_len, "%s: out of memory", name);
  for (int64_t b = 0; rc == 0 && b < p->batch; b++) {
    int64_t tk = t->cu_seqlens_k[b + 1] - t->cu_seqlens_k[b];
    if (bug == AC_VBWD_CU_K_OFF_BY_ONE && t->cu_seqlens_k[b + 1] < p->total_k) tk++;
    attncheck_problem vp;
    attncheck_tensors vt;
    attncheck_grad_tensors vg;
    seq_view(p, t, g, b, tk, lse, &vp, &vt, &vg);
    vg.dsinks = g->dsinks ? ds : NULL;
    rc = ac_cpu_backward(&cfg, &vp, &vt, &vg, err, err_len);
    for (int64_t h = 0; rc == 0 && g->dsinks && h < p->heads; h++) dsum[h] += ds[h];
  }
  if (rc == 0 && g->dsinks)
    for (int64_t h = 0; h < p->heads; h++) g->dsinks[h] = (float)dsum[h];
  free(lse), free(ds), free(dsum);
  return rc;
}
