/* blasfwd.c: the forward's certified BLAS level over a row tile (docs/numerics.md §12.2-§12.5): the
 * rows' q, the scores of every key from two products (blastile.c), per row the reference m = its
 * largest computed score, the weights E = exp(sh - m), L and their bounds, the binary32 budget
 * weights (blaskeys.c), then N = Σ E V (one product per key tile, the tiles' sums added in order),
 * the binary32 budget sums (blasterms.c) with the extremes of V; blasrow.c finishes each row.
 * A row whose keys' bounds exceed AC_BT_TAU_MAX (weighted keys) or 1 (keys below AC_FX_TMIN)
 * goes whole to the per-row path, as do rows with a non-finite q or no visible key. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "blasint.h"
#include "gemm.h"

struct ac_bt_fwd {
  ac_bt_rows R;
  ac_bt_brow *rw;
  int64_t cap_r;
  double *zh, *E;           /* na x ld */
  float *za;                /* na x ld */
  int64_t cap_s;
  double *P, *N, *acc;      /* na x max(dv, AC_BT_KT), na x dv, na x 7 x dvp */
  float *o32, *vlo, *vhi;   /* na x dvp */
  int64_t cap_o;
  float *wt;                /* 6 x na x ld: the binary32 weights */
  double *tb;               /* 7 x ld */
  int64_t *idx;             /* ld */
  double *rbuf;             /* 3 ld + 1 */
  int64_t cap_t;
  double *rowbuf;           /* blasrow.c's scratch */
  float *run;               /* 2 x dvp */
};

ac_bt_fwd *ac_bt_fwd_new(void) { return ac_xcalloc(1, sizeof(ac_bt_fwd)); }

void ac_bt_fwd_free(ac_bt_fwd *f)
{
  if (!f) return;
  ac_bt_rows_free(&f->R);
  free(f->rw);
  free(f->zh);
  free(f->za);
  free(f->P);
  free(f->o32);
  free(f->wt);
  free(f->tb);
  free(f->idx);
  free(f->rbuf);
  free(f->rowbuf);
  free(f->run);
  free(f);
}

int ac_bt_fwd_case_applies(const ac_case *c, const ac_oracle_opts *o, uint32_t formats, int64_t nsel)
{
  const ac_problem *p = &c->p;
  if (o->blas < 0 || o->no_fast || c->lay) return 0;
  if (p->f.used & ~(uint32_t)AC_FEAT_WINDOW) return 0;
  if (p->dtype == AC_F64) return 0;   /* quantized tensors: binary64 values, wide or not (blastile.c) */
  if (!ac_or_fast_case_applies(c, o, formats) || (formats & (1u << AC_F64))) return 0;
  if (o->blas > 0) return 1;
  int64_t heads = p->batch * p->heads;
  return p->tk >= AC_BT_MIN_KEYS && nsel >= AC_BT_MIN_ROWS * heads;
}

int64_t *ac_bt_fwd_tiles(const ac_problem *p, const int64_t *list, int64_t nl, int64_t *n)
{
  int64_t rpt = ac_bt_rows_per_tile(p->tk), *t = ac_xmalloc((size_t)(2 * nl + 2) * sizeof *t);
  *n = 0;
  for (int64_t k = 0; k < nl; (*n)++) {
    int64_t k1 = k + 1;
    while (k1 < nl && k1 - k < rpt && list[k1] / p->tq == list[k] / p->tq) k1++;
    t[2 * *n] = k;
    t[2 * *n + 1] = k1 - k;
    k = k1;
  }
  return t;
}

/* Buffers for na rows of ld keys, dv columns. */
static void fwd_size(ac_bt_fwd *f, int64_t na, int64_t ld, int64_t dv, int64_t dvp, int nmu)
{
  if (na > f->cap_r) {
    f->rw = ac_xrealloc(f->rw, (size_t)na * sizeof *f->rw);
    f->cap_r = na;
  }
  if (na * ld > f->cap_s) {
    free(f->zh);
    free(f->za);
    free(f->wt);
    f->zh = ac_xmalloc((size_t)(2 * na * ld) * sizeof *f->zh);
    f->za = ac_xmalloc((size_t)(na * ld) * sizeof *f->za);
    f->wt = ac_xmalloc((size_t)(6 * na * ld) * sizeof *f->wt);
    f->cap_s = na * ld;
  }
  f->E = f->zh + f->cap_s;
  if (na > f->cap_o) {
    int64_t pw = dv > AC_BT_KT ? dv : AC_BT_KT;
    free(f->P);
    free(f->o32);
    f->P = ac_xmalloc((size_t)(na * (pw + dv + 7 * dvp)) * sizeof *f->P);
    f->o32 = ac_xmalloc((size_t)(3 * na * dvp) * sizeof *f->o32);
    f->N = f->P + na * pw;
    f->acc = f->N + na * dv;
    f->vlo = f->o32 + na * dvp;
    f->vhi = f->vlo + na * dvp;
    f->cap_o = na;
  }
  if (ld > f->cap_t) {
    free(f->tb);
    free(f->idx);
    free(f->rbuf);
    f->tb = ac_xmalloc((size_t)(7 * ld) * sizeof *f->tb);
    f->idx = ac_xmalloc((size_t)ld * sizeof *f->idx);
    f->rbuf = ac_xmalloc((size_t)(3 * ld + 1) * sizeof *f->rbuf);
    f->cap_t = ld;
  }
  if (!f->rowbuf) {
    f->rowbuf = ac_xmalloc((size_t)(dv * (5 + nmu) + 7 * dvp) * sizeof *f->rowbuf);
    f->run = ac_xmalloc((size_t)(2 * dvp) * sizeof *f->run);
  }
}

/* The rows' visible keys and q; rows the level cannot take are written to left. Returns the rows
 * kept (f->rw, f->R). */
static int64_t tile_rows(ac_or_ws *w, ac_bt_fwd *f, const ac_bt_head *bh, const int64_t *rows, int64_t nr,
                         int64_t *left, int64_t *nleft)
{
  const ac_problem *p = w->p;
  int64_t na = 0;
  ac_bt_rows_size(&f->R, nr, p->dk);
  for (int64_t k = 0; k < nr; k++) {
    int64_t x = rows[k], i = x % p->tq, bhx = x / p->tq, h = bhx % p->heads, b = bhx / p->heads, lo, hi;
    ac_visible_range(p, i, &lo, &hi);
    if (hi <= lo || ac_or_row_q(w, b, h, i)) {   /* empty, or q not finite: the per-row rule table */
      left[(*nleft)++] = x;
      continue;
    }
    ac_bt_brow *rw = &f->rw[na];
    memset(rw, 0, sizeof *rw);
    *rw = (ac_bt_brow){.ridx = x, .b = b, .h = h, .i = i, .lo = lo, .hi = hi};
    int qw = ac_bt_rows_set(&f->R, na, w->qd);
    if (qw == 1) {   /* |q| too large for the binary32 product */
      left[(*nleft)++] = x;
      continue;
    }
    rw->wide = qw == 2 || (bh->wide & 1);
    rw->qk_l1 = ac_or_qk_l1(w);
    rw->zs = f->R.qs[na] * bh->ks;
    na++;
  }
  f->R.nr = na;
  return na;
}

/* The budget sums of every row over every key tile (tiles outer, rows inner: a tile of V stays in
 * cache), and the extremes of V per row: where every row's keys start at klo (the masks without a
 * window) rows are in order of their last key, and a running extreme over the keys taken so far
 * serves them all; otherwise each row's own. */
static void tile_terms(ac_bt_fwd *f, ac_bt_tile *T)
{
  const ac_bt_head *bh = T->bh;
  int64_t dvp = bh->dvp, na = T->na, cur = T->klo;
  int prefix = 1;
  float *rlo = f->run, *rhi = f->run + dvp;
  for (int64_t t = 0; t < dvp; t++) { rlo[t] = INFINITY; rhi[t] = -INFINITY; }
  for (int64_t a = 0; a < na; a++) {
    float *lo = f->vlo + a * dvp, *hi = f->vhi + a * dvp;
    for (int64_t t = 0; t < dvp; t++) { lo[t] = INFINITY; hi[t] = -INFINITY; }
    prefix &= T->rw[a].lo == T->klo && (a == 0 || T->rw[a].hi >= T->rw[a - 1].hi);
  }
  if (!prefix)
    for (int64_t a = 0; a < na; a++)
      ac_bt_vrange(bh, T->rw[a].lo, T->rw[a].hi, f->vlo + a * dvp, f->vhi + a * dvp);
  for (int64_t k0 = T->klo; k0 < T->khi; k0 += AC_BT_TT) {
    int64_t k1 = k0 + AC_BT_TT < T->khi ? k0 + AC_BT_TT : T->khi;
    for (int64_t a = 0; a < na; a++) {
      ac_bt_brow *rw = &f->rw[a];
      int64_t j0 = rw->lo > k0 ? rw->lo : k0, j1 = rw->hi < k1 ? rw->hi : k1;
      if (prefix && rw->hi > k0 && rw->hi <= k1) {   /* the row's keys end in this tile */
        ac_bt_vrange(bh, cur, rw->hi, rlo, rhi);
        cur = rw->hi;
        memcpy(f->vlo + a * dvp, rlo, (size_t)dvp * sizeof *rlo);
        memcpy(f->vhi + a * dvp, rhi, (size_t)dvp * sizeof *rhi);
      }
      if (rw->left || j0 >= j1) continue;
      ac_bt_terms_tile(T->w + a * T->ld + (j0 - T->klo), na * T->ld, j1 - j0, bh->Vf + j0 * dvp, dvp, f->o32 + a * dvp,
                       f->acc + a * 7 * dvp, rw->fq >= 0, j0 == rw->lo);
    }
    if (prefix) {
      ac_bt_vrange(bh, cur, k1, rlo, rhi);
      cur = k1;
    }
  }
}

int64_t ac_bt_fwd_tile(ac_or_ws *w, ac_bt_fwd *f, const ac_bt_head *bh, const int64_t *rows, int64_t nr,
                       ac_oracle_result *r, ac_or_stats *st, int64_t *left)
{
  const ac_problem *p = w->p;
  int64_t nleft = 0, dv = p->dv, dvp = bh->dvp;
  fwd_size(f, nr, 0, dv, dvp, r->nmu);
  int64_t na = tile_rows(w, f, bh, rows, nr, left, &nleft);
  if (na == 0) return nleft;
  int64_t klo = INT64_MAX, khi = 0;
  for (int64_t a = 0; a < na; a++) {
    klo = f->rw[a].lo < klo ? f->rw[a].lo : klo;
    khi = f->rw[a].hi > khi ? f->rw[a].hi : khi;
  }
  int64_t ld = (khi - klo + 7) / 8 * 8, nkt = (khi - klo + AC_BT_KT - 1) / AC_BT_KT;
  fwd_size(f, na, ld, dv, dvp, r->nmu);
  ac_bt_scale sc;
  ac_bt_scale_init(&sc, &w->sc, p->dk);
  ac_bt_scores(&f->R, bh, klo, khi, f->zh, f->za, ld, f->E);   /* E: the products' scratch until the weights */
  /* weights; a row whose bounds are too large keeps E = 0 (it adds nothing to the products) */
  double gL = ac_gemm_gamma(AC_BT_KT + nkt);
  for (int64_t a = 0; a < na; a++) {   /* E is 0 outside each row's keys */
    double *E = f->E + a * ld - klo;
    for (int64_t j = klo; j < f->rw[a].lo; j++) E[j] = 0;
    for (int64_t j = f->rw[a].hi; j < klo + ld; j++) E[j] = 0;
  }
  for (int64_t a = 0; a < na; a++)
    if (ac_bt_row_weights(&f->rw[a], &sc, bh, f->R.Qb + a * f->R.nb, f->zh + a * ld - klo, f->za + a * ld - klo,
                          f->E + a * ld - klo, f->tb, gL, r->mu, r->nmu, f->wt + a * ld - klo, na * ld)) {
      f->rw[a].left = 1;
      memset(f->E + a * ld, 0, (size_t)ld * sizeof *f->E);
    }
  /* N = Σ E V: one product per key tile, added in order */
  for (int64_t k0 = klo, first = 1; k0 < khi; k0 += AC_BT_KT, first = 0) {
    int64_t k1 = k0 + AC_BT_KT < khi ? k0 + AC_BT_KT : khi;
    ac_gemm(0, 0, na, dv, k1 - k0, f->E + (k0 - klo), ld, bh->V + k0 * dv, dv, 0, first ? f->N : f->P, dv);
    if (!first)
      for (int64_t x = 0; x < na * dv; x++) f->N[x] += f->P[x];
  }
  for (int64_t a = 0; a < na; a++) {
    float *o = f->o32 + a * dvp;
    for (int64_t t = 0; t < dvp; t++) o[t] = t < dv && !f->rw[a].left ? (float)(f->N[a * dv + t] / f->rw[a].L) : 0;
  }
  ac_bt_tile T = {.bh = bh, .sc = &sc, .na = na, .klo = klo, .khi = khi, .ld = ld, .nkt = nkt, .rw = f->rw,
                  .sh = f->zh, .za = f->za, .E = f->E, .Qb = f->R.Qb, .N = f->N, .acc = f->acc, .o32 = f->o32,
                  .vlo = f->vlo, .vhi = f->vhi, .buf = f->rowbuf, .idx = f->idx, .rbuf = f->rbuf, .Q = f->R.Q,
                  .w = f->wt};
  tile_terms(f, &T);
  for (int64_t a = 0; a < na; a++)
    if (f->rw[a].left || ac_bt_row_finish(w, &T, a, r, st)) {   /* the per-row path takes the row whole */
      left[nleft++] = f->rw[a].ridx;
      st->fallback += dv;
    }
  return nleft;
}
