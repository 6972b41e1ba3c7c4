/* mutant_flash.h: the base of the mutants: a copy of flash_run (cpu_flash.c) with hooks.
 * Every hook defaults to the correct code, so this file alone is flash-f32/-f16/-bf16; a
 * mutant file overrides exactly one defect (sometimes two lines of it) and includes this.
 * Hooks: MUT_SCALE, MUT_KV_HEAD, MUT_V_OFF, MUT_K_OFF, MUT_VISIBLE, MUT_TILE_N, MUT_COLS,
 * MUT_QK, MUT_M_INIT, MUT_MREF, MUT_EXP, MUT_ALPHA, MUT_L_RESCALE, MUT_L_STORE,
 * MUT_ACC_SCALE, MUT_P, MUT_PV, MUT_EMPTY, MUT_LSE.
 * A case with ABI 2 features takes the variant path (mutant_flash_run below mutant_flash_plain,
 * structured as cpu_flash.c: the sink joins in the epilogue), with the hooks MUT_KSTART,
 * MUT_BMASK, MUT_SCORE, MUT_V_LOAD, MUT_KV_DTYPE, MUT_SINK_LSE, MUT_STORE_LATE_EMPTY, and for dropout
 * MUT_DROP_FILL, MUT_DROP_P, MUT_DROP_L, MUT_DROP_INV besides the ones above
 * but MUT_VISIBLE (plain cases keep the unchanged plain path, so the plain mutants give the
 * same results as before the variants). */
#ifndef AC_MUTANT_FLASH_H
#define AC_MUTANT_FLASH_H
#include "cpu_common.h"
#include <stdio.h>
#include <stdlib.h>

#ifndef MUT_SCALE                      /* the scale applied to Q·Kᵀ */
#define MUT_SCALE(p) ((float)(p)->scale)
#endif
#ifndef MUT_KV_HEAD                    /* kv head of query head h */
#define MUT_KV_HEAD(p, h) ac_cpu_kv_head(p, h)
#endif
#ifndef MUT_K_OFF                      /* element offset of K[b][kvh][j][d] */
#define MUT_K_OFF(p, b, kvh, j, d) ac_cpu_off((p)->k_stride, b, kvh, j, d)
#endif
#ifndef MUT_V_OFF                      /* element offset of V[b][kvh][j][e] */
#define MUT_V_OFF(p, b, kvh, j, e) ac_cpu_off((p)->v_stride, b, kvh, j, e)
#endif
#ifndef MUT_VISIBLE                    /* keys [0, n) visible to row i */
#define MUT_VISIBLE(p, i) ac_cpu_visible(p, i)
#endif
#ifndef MUT_TILE_N                     /* columns of the tile the row uses (nv visible, is_last: last tile) */
#define MUT_TILE_N(nv, cols, is_last) ((void)(is_last), (nv))
#endif
#ifndef MUT_COLS                       /* columns whose P is computed (nv visible of cols) */
#define MUT_COLS(nv, cols) (nv)
#endif
#ifndef MUT_QK                         /* s[0..n8) += qd * krow[0..n8) */
#define MUT_QK(dt, s, qd, krow, n8) ac_cpu_axpy_f32(s, qd, krow, n8)
#endif
#ifndef MUT_M_INIT                     /* initial running max */
#define MUT_M_INIT (-INFINITY)
#endif
#ifndef MUT_MREF                       /* the max subtracted before exp */
#define MUT_MREF(mnew) ((mnew) == -INFINITY ? 0.0f : (mnew))
#endif
#ifndef MUT_EXP
#define MUT_EXP(x) expf(x)
#endif
#ifndef MUT_ALPHA                      /* rescale factor when the max moves from mold to mref */
#define MUT_ALPHA(mold, mref) MUT_EXP((mold) - (mref))
#endif
#ifndef MUT_L_RESCALE                  /* running sum times alpha */
#define MUT_L_RESCALE(l, alpha) ((l) * (alpha))
#endif
#ifndef MUT_L_STORE                    /* every value stored into the running sum */
#define MUT_L_STORE(dt, x) (x)
#endif
#ifndef MUT_ACC_SCALE                  /* accumulator times alpha */
#define MUT_ACC_SCALE(acc, alpha, n8) ac_cpu_scal_f32(acc, alpha, n8)
#endif
#ifndef MUT_P                          /* P of column c (nv visible columns) */
#define MUT_P(c, nv, val) (val)
#endif
#ifndef MUT_PV                         /* acc[0..n8) += pr * vrow[0..n8) */
#define MUT_PV(dt, acc, pr, vrow, n8) ac_cpu_axpy_f32(acc, pr, vrow, n8)
#endif
#ifndef MUT_EMPTY                      /* row i has no visible key */
#define MUT_EMPTY(p, i) (ac_cpu_visible(p, i) == 0)
#endif
#ifndef MUT_LSE
#define MUT_LSE(m, l) ((m) + logf(l))
#endif

#ifndef MUT_KSTART                     /* first key tile of a block whose first key is kbegin */
#define MUT_KSTART(kbegin, bc) ((kbegin) / (bc) * (bc))
#endif
#ifndef MUT_BMASK                      /* boolean mask of key j for row i (partial: a tile of fewer than Bc keys) */
#define MUT_BMASK(x, i, j, partial) ((void)(partial), ac_cpu_vx_bmask(x, i, j))
#endif
#ifndef MUT_SCORE                      /* score of key j from the raw dot product d: scale, softcap, ALiBi, bias */
#define MUT_SCORE(x, i, j, d, scale) ac_cpu_vx_bias(x, i, j, ac_cpu_vx_alibi(x, i, j, ac_cpu_vx_softcap(x, (d) * (scale))))
#endif
#ifndef MUT_V_LOAD                     /* V element as loaded (descale_v goes to the output) */
#define MUT_V_LOAD(x, v) ((void)(x), (v))
#endif
#ifndef MUT_KV_DTYPE                   /* the dtype K or V (stored in d) is decoded with */
#define MUT_KV_DTYPE(d) (d)
#endif
#ifndef MUT_SINK_LSE                   /* LSE of a row with a sink: mf the larger of m and the sink, den the sum at mf */
#define MUT_SINK_LSE(m, l, mf, den) ((void)(m), (void)(l), (mf) + logf(den))
#endif
#ifndef MUT_STORE_LATE_EMPTY           /* write o = 0 for a row whose keys the boolean mask or -inf bias all removed */
#define MUT_STORE_LATE_EMPTY 1
#endif
#ifndef MUT_DROP_FILL                  /* dropout: the kernel's keep-mask (p, t) */
#define MUT_DROP_FILL(p, t) ac_cpu_drop_fill(p, (t)->dropout_mask, 1)
#endif
#ifndef MUT_DROP_P                     /* dropout: P of every key, as both sums take it (rp 1/(1-p)) */
#define MUT_DROP_P(pv, rp) ((void)(rp), (pv))
#endif
#ifndef MUT_DROP_L                     /* dropout: what P of a key (kept 1, dropped 0) adds to the row sum */
#define MUT_DROP_L(pv, keep) ((void)(keep), (pv))
#endif
#ifndef MUT_DROP_INV                   /* dropout: the epilogue's factor from 1/l and rp */
#define MUT_DROP_INV(inv, rp) ((inv) * (rp))
#endif

/* A plain case: the base as it was before the variants (the same code, so the same results). */
static int mutant_flash_plain(int dt, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                              char *err, size_t err_len)
{
  int64_t br, bc;
  if (ac_cpu_env_block("ATTNCHECK_FLASH_BR", 64, &br, err, err_len) < 0 ||
      ac_cpu_env_block("ATTNCHECK_FLASH_BC", 64, &bc, err, err_len) < 0)
    return -1;
  const float scale = MUT_SCALE(p);
  const int64_t bc8 = ac_cpu_pad(bc), dv8 = ac_cpu_pad(p->dv);
  float *qb = ac_cpu_scratch(br * p->dk, sizeof *qb);
  float *kt = ac_cpu_scratch(p->dk * bc8, sizeof *kt);
  float *vb = ac_cpu_scratch(bc * dv8, sizeof *vb);
  float *sc = ac_cpu_scratch(br * bc8, sizeof *sc);
  float *acc = ac_cpu_scratch(br * dv8, sizeof *acc);
  float *m = ac_cpu_scratch(br, sizeof *m), *l = ac_cpu_scratch(br, sizeof *l);
  if (!qb || !kt || !vb || !sc || !acc || !m || !l) {
    free(qb), free(kt), free(vb), free(sc), free(acc), free(m), free(l);
    snprintf(err, err_len, "%s: out of memory", name);
    return -1;
  }
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++) {
      const int64_t kvh = MUT_KV_HEAD(p, h);
      for (int64_t i0 = 0; i0 < p->tq; i0 += br) {
        const int64_t rows = ac_cpu_min(br, p->tq - i0);
        for (int64_t r = 0; r < rows; r++) {
          for (int64_t d = 0; d < p->dk; d++)
            qb[r * p->dk + d] = ac_cpu_load_f32(dt, t->q, ac_cpu_off(p->q_stride, b, h, i0 + r, d));
          for (int64_t e = 0; e < dv8; e++) acc[r * dv8 + e] = 0.0f;
          m[r] = MUT_M_INIT;
          l[r] = 0.0f;
        }
        const int64_t kend = MUT_VISIBLE(p, i0 + rows - 1);
        for (int64_t j0 = 0; j0 < kend; j0 += bc) {
          const int64_t cols = ac_cpu_min(bc, kend - j0);
          const int is_last = j0 + bc >= kend;
          for (int64_t c = 0; c < cols; c++) {
            for (int64_t d = 0; d < p->dk; d++) kt[d * bc8 + c] = ac_cpu_load_f32(dt, t->k, MUT_K_OFF(p, b, kvh, j0 + c, d));
            for (int64_t e = 0; e < p->dv; e++) vb[c * dv8 + e] = ac_cpu_load_f32(dt, t->v, MUT_V_OFF(p, b, kvh, j0 + c, e));
          }
          for (int64_t c = cols; c < bc8; c++)
            for (int64_t d = 0; d < p->dk; d++) kt[d * bc8 + c] = 0.0f;
          for (int64_t r = 0; r < rows; r++) {
            const int64_t nv0 = ac_cpu_min(cols, MUT_VISIBLE(p, i0 + r) - j0);
            const int64_t nv = MUT_TILE_N(nv0, cols, is_last);
            if (nv <= 0) continue;
            const int64_t nc = MUT_COLS(nv, cols);
            float *s = sc + r * bc8;
            for (int64_t c = 0; c < bc8; c++) s[c] = 0.0f;
            for (int64_t d = 0; d < p->dk; d++) MUT_QK(dt, s, qb[r * p->dk + d], kt + d * bc8, ac_cpu_pad(nc));
            float mt = -INFINITY;
            for (int64_t c = 0; c < nc; c++) {
              s[c] *= scale;
              if (c < nv && s[c] > mt) mt = s[c];
            }
            const float mnew = mt > m[r] ? mt : m[r];
            const float mref = MUT_MREF(mnew);
            const float alpha = MUT_ALPHA(m[r], mref);
            l[r] = MUT_L_STORE(dt, MUT_L_RESCALE(l[r], alpha));
            MUT_ACC_SCALE(acc + r * dv8, alpha, dv8);
            for (int64_t c = 0; c < nc; c++) {
              s[c] = MUT_P(c, nv, MUT_EXP(s[c] - mref));
              l[r] = MUT_L_STORE(dt, l[r] + s[c]);
            }
            for (int64_t c = 0; c < nc; c++) MUT_PV(dt, acc + r * dv8, ac_cpu_round_f32(dt, s[c]), vb + c * dv8, dv8);
            m[r] = mnew;
          }
        }
        for (int64_t r = 0; r < rows; r++) {
          const int64_t i = i0 + r;
          float *lse = t->lse ? &t->lse[ac_cpu_lse_index(p, b, h, i)] : NULL;
          if (MUT_EMPTY(p, i)) {
            for (int64_t e = 0; e < p->dv; e++) ac_cpu_store_f32(dt, t->o, ac_cpu_off(p->o_stride, b, h, i, e), 0.0f);
            if (lse) *lse = -INFINITY;
            continue;
          }
          const float inv = 1.0f / l[r];
          for (int64_t e = 0; e < p->dv; e++)
            ac_cpu_store_f32(dt, t->o, ac_cpu_off(p->o_stride, b, h, i, e), acc[r * dv8 + e] * inv);
          if (lse) *lse = MUT_LSE(m[r], l[r]);
        }
      }
    }
  free(qb), free(kt), free(vb), free(sc), free(acc), free(m), free(l);
  return 0;
}

typedef struct {
  int dt;
  int64_t br, bc, bc8, dv8;
  float *qb, *kt, *vb, *sc, *acc, *m, *l;
} mutant_ctx;

static void mutant_tile_row(const mutant_ctx *F, const ac_cpu_vx *x, int64_t r, int64_t i, int64_t j0, int64_t cols,
                            int is_last)
{
  const attncheck_problem *p = x->p;
  const int dt = F->dt;
  const int64_t bc8 = F->bc8, dv8 = F->dv8;
  int64_t lo, hi;
  ac_cpu_vx_range(x, i, &lo, &hi);
  const int64_t clo = lo > j0 ? lo - j0 : 0;
  const int64_t nv0 = ac_cpu_min(cols, hi - j0);
  const int64_t nv = MUT_TILE_N(nv0, cols, is_last);
  if (nv <= clo) return;
  const int64_t nc = MUT_COLS(nv, cols), c8 = clo / AC_CPU_VW * AC_CPU_VW;
  float *s = F->sc + r * bc8, *m = F->m, *l = F->l, *acc = F->acc;
  for (int64_t c = 0; c < bc8; c++) s[c] = 0.0f;
  for (int64_t d = 0; d < p->dk; d++) MUT_QK(dt, s + c8, F->qb[r * p->dk + d], F->kt + d * bc8 + c8, ac_cpu_pad(nc) - c8);
  const float scale = x->scale;
  const int sf = (x->f & AC_CPU_SCORE_FEATS) != 0, partial = cols < F->bc;
  float mt = -INFINITY;
  for (int64_t c = clo; c < nc; c++) {
    if (!sf) s[c] *= scale;
    else s[c] = MUT_BMASK(x, i, j0 + c, partial) ? MUT_SCORE(x, i, j0 + c, s[c], scale) : -INFINITY;
    if (c < nv && s[c] > mt) mt = s[c];
  }
  if (x->f && mt == -INFINITY) return;
  const float mnew = mt > m[r] ? mt : m[r];
  const float mref = MUT_MREF(mnew);
  const float alpha = MUT_ALPHA(m[r], mref);
  l[r] = MUT_L_STORE(dt, MUT_L_RESCALE(l[r], alpha));
  MUT_ACC_SCALE(acc + r * dv8, alpha, dv8);
  const int drop = (x->f & ATTNCHECK_FEAT_DROPOUT) != 0;
  for (int64_t c = clo; c < nc; c++) {
    s[c] = MUT_P(c, nv, MUT_EXP(s[c] - mref));
    if (drop) s[c] = MUT_DROP_P(s[c], x->rp);
    l[r] = MUT_L_STORE(dt, l[r] + (drop ? MUT_DROP_L(s[c], ac_cpu_vx_keep(x, i, j0 + c)) : s[c]));
  }
  for (int64_t c = clo; c < nc; c++)
    MUT_PV(dt, acc + r * dv8, ac_cpu_round_f32(dt, s[c]) * (drop ? ac_cpu_vx_keep(x, i, j0 + c) : 1.0f), F->vb + c * dv8,
           dv8);
  m[r] = mnew;
}

static void mutant_finish_row(const mutant_ctx *F, const ac_cpu_vx *x, int64_t r, int64_t i)
{
  const attncheck_problem *p = x->p;
  float *lse = x->t->lse ? &x->t->lse[ac_cpu_lse_index(p, x->b, x->h, i)] : NULL;
  int64_t lo, hi;
  ac_cpu_vx_range(x, i, &lo, &hi);
  const int mask_empty = MUT_EMPTY(p, i) || (x->f && hi <= lo);
  const int late_empty = x->f && !mask_empty && F->l[r] == 0.0f;
  if (mask_empty || (late_empty && MUT_STORE_LATE_EMPTY)) {
    ac_cpu_vx_empty_row(x, i, lse);
    return;
  }
  const float m = F->m[r], l = F->l[r];
  const float *acc = F->acc + r * F->dv8;
  if (late_empty) {
    if (lse) *lse = x->has_sink ? x->sink : -INFINITY;
    return;
  }
  const int drop = (x->f & ATTNCHECK_FEAT_DROPOUT) != 0;
  if (x->has_sink) {
    const float mf = x->sink > m ? x->sink : m, a = MUT_EXP(m - mf), den = l * a + MUT_EXP(x->sink - mf);
    const float inv = drop ? MUT_DROP_INV(a / den, x->rp) : a / den;
    for (int64_t e = 0; e < p->dv; e++) ac_cpu_vx_store_o(x, i, e, acc[e] * inv);
    if (lse) *lse = MUT_SINK_LSE(m, l, mf, den);
    return;
  }
  const float inv = drop ? MUT_DROP_INV(1.0f / l, x->rp) : 1.0f / l;
  for (int64_t e = 0; e < p->dv; e++) ac_cpu_vx_store_o(x, i, e, acc[e] * inv);
  if (lse) *lse = MUT_LSE(m, l);
}

static void mutant_block(const mutant_ctx *F, const ac_cpu_vx *x, int64_t i0, int64_t rows)
{
  const attncheck_problem *p = x->p;
  const int64_t kvh = MUT_KV_HEAD(p, x->h), bc = F->bc, bc8 = F->bc8, dv8 = F->dv8;
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t d = 0; d < p->dk; d++)
      F->qb[r * p->dk + d] = ac_cpu_load_f32(x->qd, x->t->q, ac_cpu_off(p->q_stride, x->b, x->h, i0 + r, d));
    for (int64_t e = 0; e < dv8; e++) F->acc[r * dv8 + e] = 0.0f;
    F->m[r] = MUT_M_INIT;
    F->l[r] = 0.0f;
  }
  int64_t kbegin, kend, unused;
  ac_cpu_vx_range(x, i0, &kbegin, &unused);
  ac_cpu_vx_range(x, i0 + rows - 1, &unused, &kend);
  for (int64_t j0 = MUT_KSTART(kbegin, bc); j0 < kend; j0 += bc) {
    const int64_t cols = ac_cpu_min(bc, kend - j0);
    const int is_last = j0 + bc >= kend;
    if (ac_cpu_vx_tile_hidden(x, i0, rows, j0, cols)) continue;
    for (int64_t c = 0; c < cols; c++) {
      for (int64_t d = 0; d < p->dk; d++)
        F->kt[d * bc8 + c] = ac_cpu_load_f32(MUT_KV_DTYPE(x->kd), x->t->k, MUT_K_OFF(p, x->b, kvh, j0 + c, d));
      for (int64_t e = 0; e < p->dv; e++)
        F->vb[c * dv8 + e] = MUT_V_LOAD(x, ac_cpu_load_f32(MUT_KV_DTYPE(x->vd), x->t->v, MUT_V_OFF(p, x->b, kvh, j0 + c, e)));
    }
    for (int64_t c = cols; c < bc8; c++)
      for (int64_t d = 0; d < p->dk; d++) F->kt[d * bc8 + c] = 0.0f;
    for (int64_t r = 0; r < rows; r++) mutant_tile_row(F, x, r, i0 + r, j0, cols, is_last);
  }
  for (int64_t r = 0; r < rows; r++) mutant_finish_row(F, x, r, i0 + r);
}

static int mutant_flash_run(int dt, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                            char *err, size_t err_len)
{
  if (!p->features) return mutant_flash_plain(dt, name, p, t, err, err_len);
  mutant_ctx F = {.dt = dt};
  ac_cpu_vx x;
  if (ac_cpu_env_block("ATTNCHECK_FLASH_BR", 64, &F.br, err, err_len) < 0 ||
      ac_cpu_env_block("ATTNCHECK_FLASH_BC", 64, &F.bc, err, err_len) < 0 ||
      ac_cpu_vx_init(&x, dt, p, t, err, err_len) < 0)
    return -1;
  F.bc8 = ac_cpu_pad(F.bc), F.dv8 = ac_cpu_pad(p->dv);
  F.qb = ac_cpu_scratch(F.br * p->dk, sizeof *F.qb);
  F.kt = ac_cpu_scratch(p->dk * F.bc8, sizeof *F.kt);
  F.vb = ac_cpu_scratch(F.bc * F.dv8, sizeof *F.vb);
  F.sc = ac_cpu_scratch(F.br * F.bc8, sizeof *F.sc);
  F.acc = ac_cpu_scratch(F.br * F.dv8, sizeof *F.acc);
  F.m = ac_cpu_scratch(F.br, sizeof *F.m), F.l = ac_cpu_scratch(F.br, sizeof *F.l);
  if (!F.qb || !F.kt || !F.vb || !F.sc || !F.acc || !F.m || !F.l) {
    free(F.qb), free(F.kt), free(F.vb), free(F.sc), free(F.acc), free(F.m), free(F.l);
    snprintf(err, err_len, "%s: out of memory", name);
    return -1;
  }
  if (x.f & ATTNCHECK_FEAT_DROPOUT) MUT_DROP_FILL(p, t);
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++) {
      ac_cpu_vx_head(&x, b, h, MUT_SCALE(p));
      for (int64_t i0 = 0; i0 < p->tq; i0 += F.br) mutant_block(&F, &x, i0, ac_cpu_min(F.br, p->tq - i0));
    }
  free(F.qb), free(F.kt), free(F.vb), free(F.sc), free(F.acc), free(F.m), free(F.l);
  return 0;
}

#define MUTANT_KERNEL(SYM, DT, NAME, PREC, DESC) AC_CPU_KERNEL(SYM, DT, NAME, PREC, DESC, mutant_flash_run)
/* A mutant of the variant path, with flash-f32's caps (every ABI 2 feature). */
#define MUTANT_KERNEL_VX(SYM, NAME, DESC) \
  AC_CPU_KERNEL_CAPS(SYM, ATTNCHECK_F32, NAME, "fp32", ATTNCHECK_FEAT_ALL, DESC, mutant_flash_run)
/* A mutant of dropout (the variant path), with flash-f32's caps and dropout. */
#define MUTANT_KERNEL_DROP(SYM, NAME, DESC) \
  AC_CPU_KERNEL_CAPS(SYM, ATTNCHECK_F32, NAME, "fp32", ATTNCHECK_FEAT_ALL | ATTNCHECK_FEAT_DROPOUT, DESC, mutant_flash_run)

#endif
