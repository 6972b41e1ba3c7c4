/* cpu_splitkv.c: splitkv-f32, flash-decoding's split-KV scheme in binary32. The keys are cut
 * into chunks of ATTNCHECK_SPLITKV_CHUNK (default 128); each chunk is an independent softmax
 * giving a normalized partial output o_c and its lse_c; the partials are then merged through
 * their LSEs: w_c = exp(lse_c - max lse), o = Σ w_c o_c / Σ w_c, lse = max + log Σ w_c.
 * Dividing by the computed Σ w_c (rather than by exp(lse - max) of a rounded total LSE)
 * keeps the merge self-normalizing: an error common to every lse_c cancels.
 * splitkv-fa-f32 merges as FlashAttention's combine kernel does: lse = max + log Σ w_c, then
 * o = Σ exp(lse_c - lse) o_c, weights that need not sum to one (their rounding errs by about
 * u|lse| relative: the budget's LSE-merge term).
 * A sink σ_h (ABI 2 sinks) joins the merge once: the maximum is taken over the lse_c and σ_h,
 * and exp(σ_h - max) is added to Σ w_c; a row that sees no key is o = 0, lse = σ_h.
 * The split-KV mutants (kernels/mutants/splitkv_mutants.c) are this code with one defect. */
#include "config.h"
#include "cpu_splitkv.h"
#include <stdio.h>
#include <stdlib.h>

#define SPLITKV_QBLOCK 64

typedef struct {
  const attncheck_problem *p;
  int fa_merge, bug;
  int64_t chunk, c8, dv8, nchmax;
  float *qb, *kt, *vb, *x, *acc, *po, *plse;
  unsigned char *pok;
} sk_ctx;

int ac_cpu_splitkv_supports(const attncheck_problem *p, char *why, size_t why_len)
{
  return ac_cpu_supports_caps(p, ATTNCHECK_F32, AC_CPU_SPLITKV_CAPS, why, why_len);
}

/* Row r of the block against its visible keys [j0, j0 + n) of chunk ch: a softmax of its own
 * (with the sink sg when the defect puts it there), o_c and lse_c into po and plse. */
static void sk_chunk_row(sk_ctx *S, int64_t r, int64_t ch, int64_t n, float sg)
{
  const attncheck_problem *p = S->p;
  const int64_t n8 = ac_cpu_pad(n), dv8 = S->dv8;
  float *x = S->x, *acc = S->acc;
  for (int64_t c = 0; c < n8; c++) x[c] = 0.0f;
  for (int64_t d = 0; d < p->dk; d++) ac_cpu_axpy_f32(x, S->qb[r * p->dk + d], S->kt + d * S->c8, n8);
  const float scale = (float)p->scale;
  float mc = -INFINITY;
  for (int64_t c = 0; c < n; c++) {
    x[c] *= scale;
    if (x[c] > mc) mc = x[c];
  }
  if (S->bug == AC_SKBUG_SINK_PER_SPLIT && sg > mc) mc = sg;
  float lc = S->bug == AC_SKBUG_SINK_PER_SPLIT && sg > -INFINITY ? expf(sg - mc) : 0.0f;
  for (int64_t c = 0; c < n; c++) {
    x[c] = expf(x[c] - mc);
    lc += x[c];
  }
  for (int64_t e = 0; e < dv8; e++) acc[e] = 0.0f;
  for (int64_t c = 0; c < n; c++) ac_cpu_axpy_f32(acc, x[c], S->vb + c * dv8, dv8);
  float *oc = S->po + (r * S->nchmax + ch) * dv8;
  for (int64_t e = 0; e < p->dv; e++) oc[e] = acc[e] / lc;
  S->plse[r * S->nchmax + ch] = mc + logf(lc);
}

/* The merge of row r (query i) over its nch chunks through their LSEs, with the sink sg. */
static void sk_merge_row(sk_ctx *S, const attncheck_tensors *t, int64_t b, int64_t h, int64_t r, int64_t i, int64_t nch,
                         float sg)
{
  const attncheck_problem *p = S->p;
  float *o = t->o, *acc = S->acc;
  float *lse = t->lse ? &t->lse[ac_cpu_lse_index(p, b, h, i)] : NULL;
  const unsigned char *ok = S->pok + r * S->nchmax;
  const float *pl = S->plse + r * S->nchmax;
  if (ac_cpu_visible(p, i) == 0) {
    for (int64_t e = 0; e < p->dv; e++) o[ac_cpu_off(p->o_stride, b, h, i, e)] = 0.0f;
    if (lse) *lse = sg;
    return;
  }
  const int sink_here = sg > -INFINITY && S->bug != AC_SKBUG_SINK_PER_SPLIT;
  float lmax = sink_here ? sg : -INFINITY;
  for (int64_t ch = 0; ch < nch; ch++)
    if (ok[ch] && pl[ch] > lmax) lmax = pl[ch];
  if (S->bug == AC_SKBUG_FIRST_MAX)
    for (int64_t ch = 0; ch < nch; ch++)
      if (ok[ch]) {
        lmax = pl[ch];
        break;
      }
  float wsum = sink_here ? expf(sg - lmax) : 0.0f;
  for (int64_t e = 0; e < S->dv8; e++) acc[e] = 0.0f;
  if (S->fa_merge) {
    for (int64_t ch = 0; ch < nch; ch++)
      if (ok[ch]) wsum += expf(pl[ch] - lmax);
    const float ltot = lmax + logf(wsum);
    for (int64_t ch = 0; ch < nch; ch++)
      if (ok[ch]) ac_cpu_axpy_f32(acc, expf(pl[ch] - ltot), S->po + (r * S->nchmax + ch) * S->dv8, S->dv8);
    for (int64_t e = 0; e < p->dv; e++) o[ac_cpu_off(p->o_stride, b, h, i, e)] = acc[e];
    if (lse) *lse = ltot;
    return;
  }
  for (int64_t ch = 0; ch < nch; ch++) {
    if (!ok[ch]) continue;
    const float w = expf(pl[ch] - lmax);
    wsum += w;
    ac_cpu_axpy_f32(acc, w, S->po + (r * S->nchmax + ch) * S->dv8, S->dv8);
  }
  for (int64_t e = 0; e < p->dv; e++) o[ac_cpu_off(p->o_stride, b, h, i, e)] = acc[e] / wsum;
  if (lse) *lse = lmax + logf(wsum);
}

/* Query rows [i0, i0 + rows) of (b, h): each chunk on its own, then the merge of each row. */
static void sk_block(sk_ctx *S, const attncheck_tensors *t, int64_t b, int64_t h, int64_t i0, int64_t rows)
{
  const attncheck_problem *p = S->p;
  const float *q = t->q, *k = t->k, *v = t->v;
  const int64_t kvh = ac_cpu_kv_head(p, h), c8 = S->c8, dv8 = S->dv8;
  const float sg = (p->features & ATTNCHECK_FEAT_SINKS) ? t->sinks[h] : -INFINITY;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t d = 0; d < p->dk; d++) S->qb[r * p->dk + d] = q[ac_cpu_off(p->q_stride, b, h, i0 + r, d)];
  const int64_t kend = ac_cpu_visible(p, i0 + rows - 1), nch = (kend + S->chunk - 1) / S->chunk;
  for (int64_t ch = 0; ch < nch; ch++) {
    const int64_t j0 = ch * S->chunk, cols = ac_cpu_min(S->chunk, kend - j0);
    for (int64_t d = 0; d < p->dk; d++) {
      for (int64_t c = 0; c < cols; c++) S->kt[d * c8 + c] = k[ac_cpu_off(p->k_stride, b, kvh, j0 + c, d)];
      for (int64_t c = cols; c < c8; c++) S->kt[d * c8 + c] = 0.0f;
    }
    for (int64_t c = 0; c < cols; c++)
      for (int64_t e = 0; e < p->dv; e++) S->vb[c * dv8 + e] = v[ac_cpu_off(p->v_stride, b, kvh, j0 + c, e)];
    for (int64_t r = 0; r < rows; r++) {
      const int64_t n = ac_cpu_min(cols, ac_cpu_visible(p, i0 + r) - j0);
      S->pok[r * S->nchmax + ch] = n > 0;
      if (n > 0) sk_chunk_row(S, r, ch, n, sg);
    }
  }
  for (int64_t r = 0; r < rows; r++) sk_merge_row(S, t, b, h, r, i0 + r, nch, sg);
}

int ac_cpu_splitkv_run(int fa_merge, int bug, int64_t chunk_def, const char *name, const attncheck_problem *p,
                       const attncheck_tensors *t, char *err, size_t err_len)
{
  sk_ctx S = {.p = p, .fa_merge = fa_merge, .bug = bug};
  if (ac_cpu_env_block("ATTNCHECK_SPLITKV_CHUNK", chunk_def, &S.chunk, err, err_len) < 0) return -1;
  if ((p->features & ATTNCHECK_FEAT_SINKS) && !t->sinks) {
    snprintf(err, err_len, "%s: sinks declared without the sinks tensor", name);
    return -1;
  }
  S.c8 = ac_cpu_pad(S.chunk), S.dv8 = ac_cpu_pad(p->dv);
  S.nchmax = p->tk > 0 ? (p->tk + S.chunk - 1) / S.chunk : 1;
  S.qb = ac_cpu_scratch(SPLITKV_QBLOCK * p->dk, sizeof *S.qb);
  S.kt = ac_cpu_scratch(p->dk * S.c8, sizeof *S.kt);
  S.vb = ac_cpu_scratch(S.chunk * S.dv8, sizeof *S.vb);
  S.x = ac_cpu_scratch(S.c8, sizeof *S.x);
  S.acc = ac_cpu_scratch(S.dv8, sizeof *S.acc);
  S.po = ac_cpu_scratch(SPLITKV_QBLOCK * S.nchmax * S.dv8, sizeof *S.po); /* partial outputs [r][ch][e] */
  S.plse = ac_cpu_scratch(SPLITKV_QBLOCK * S.nchmax, sizeof *S.plse);     /* partial LSEs [r][ch] */
  S.pok = ac_cpu_scratch(SPLITKV_QBLOCK * S.nchmax, 1);                   /* chunk has a visible key */
  int ok = S.qb && S.kt && S.vb && S.x && S.acc && S.po && S.plse && S.pok;
  for (int64_t b = 0; ok && b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i0 = 0; i0 < p->tq; i0 += SPLITKV_QBLOCK)
        sk_block(&S, t, b, h, i0, ac_cpu_min(SPLITKV_QBLOCK, p->tq - i0));
  free(S.qb), free(S.kt), free(S.vb), free(S.x), free(S.acc), free(S.po), free(S.plse), free(S.pok);
  if (!ok) {
    snprintf(err, err_len, "%s: out of memory", name);
    return -1;
  }
  return 0;
}

static int splitkv_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  return ac_cpu_splitkv_run(0, AC_SKBUG_NONE, 128, "splitkv-f32", p, t, err, err_len);
}

static int splitkv_fa_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  return ac_cpu_splitkv_run(1, AC_SKBUG_NONE, 128, "splitkv-fa-f32", p, t, err, err_len);
}

const attncheck_kernel ac_cpu_splitkv_f32 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "splitkv-f32",
  "flash-decoding split-KV in binary32: chunks of ATTNCHECK_SPLITKV_CHUNK keys (default 128) merged through their "
  "LSEs, sinks in the merge",
  "fp32", ATTNCHECK_MEM_HOST, AC_CPU_SPLITKV_CAPS, ac_cpu_splitkv_supports, splitkv_run, {NULL, NULL, NULL, NULL},
  NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};

const attncheck_kernel ac_cpu_splitkv_fa_f32 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "splitkv-fa-f32",
  "split-KV in binary32 merged as FlashAttention's combine: o = sum of exp(lse_c - lse) o_c, not renormalized; "
  "sinks in the merge",
  "fp32", ATTNCHECK_MEM_HOST, AC_CPU_SPLITKV_CAPS, ac_cpu_splitkv_supports, splitkv_fa_run, {NULL, NULL, NULL, NULL},
  NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};
