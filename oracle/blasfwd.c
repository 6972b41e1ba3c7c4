/* blasfwd.c: the forward's certified BLAS level 0 over a row tile (docs/numerics.md §12.3, §12.4):
 * the rows' q, the scores of every key tile from two binary64 products (blastile.c), per row the
 * reference m = the largest computed score, the weights E = exp(sh - m) with their bounds and
 * L = Σ E, then N = Σ E V (one product per key tile, the tiles' sums added in order) and the
 * binary32 budget sums (blasterms.c) with the extremes of V; blasrow.c finishes each row.
 *
 * L: each key tile's weights are summed in order, then the tiles' sums in order: every weight
 * passes through at most AC_BT_KT + nkt roundings, so |L - Σ E| <= gamma_(KT + nkt) Σ E; with
 * |E_j - w*_j| <= rho_j E_j (blastile.h) and the keys below AC_FX_TMIN at most AC_BT_TINY each,
 * |L - L*| <= eL = 1.01 (gamma_(KT + nkt) + rho) L + ntiny AC_BT_TINY, rho = max_j rho_j.
 * A row whose keys' bounds exceed AC_BT_TAU_MAX (weighted keys) or 1 (keys below AC_FX_TMIN)
 * goes whole to the per-row path. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "blasint.h"
#include "gemm.h"

struct ac_bt_fwd {
  ac_bt_rows R;
  ac_bt_brow *rw;
  int64_t cap_r;
  double *zh, *za, *E;      /* na x ld */
  int64_t cap_s;
  double *P, *N, *acc, *vlo, *vhi, *tb;
  float *o32, *wt;
  int64_t cap_o, cap_t;
};

ac_bt_fwd *ac_bt_fwd_new(void) { return ac_xcalloc(1, sizeof(ac_bt_fwd)); }

void ac_bt_fwd_free(ac_bt_fwd *f)
{
  if (!f) return;
  ac_bt_rows_free(&f->R);
  free(f->rw);
  free(f->zh);
  free(f->P);
  free(f->o32);
  free(f->tb);
  free(f->wt);
  free(f);
}

int ac_bt_fwd_case_applies(const ac_case *c, const ac_oracle_opts *o, uint32_t formats, int64_t nsel)
{
  const ac_problem *p = &c->p;
  if (o->blas < 0 || o->no_fast || c->lay) return 0;
  if (p->f.used & ~(uint32_t)AC_FEAT_WINDOW) return 0;
  if (p->dtype == AC_F64 || ac_problem_quantized(p)) return 0;
  if (!ac_or_fast_case_applies(c, o, formats)) return 0;
  if (o->blas > 0) return 1;
  int64_t heads = p->batch * p->heads;
  return p->tk >= AC_BT_MIN_KEYS && nsel >= AC_BT_MIN_ROWS * heads;
}

/* Buffers for na rows of ld keys, dv columns. */
static void fwd_size(ac_bt_fwd *f, int64_t na, int64_t ld, int64_t dv, int64_t dvp)
{
  if (na > f->cap_r) {
    f->rw = ac_xrealloc(f->rw, (size_t)na * sizeof *f->rw);
    f->cap_r = na;
  }
  if (na * ld > f->cap_s) {
    free(f->zh);
    f->zh = ac_xmalloc((size_t)(3 * na * ld) * sizeof *f->zh);
    f->cap_s = na * ld;
  }
  f->za = f->zh + f->cap_s;
  f->E = f->za + f->cap_s;
  if (na * dvp > f->cap_o) {
    free(f->P);
    free(f->o32);
    f->P = ac_xmalloc((size_t)(na * (2 * dv + 6 * dvp + 2 * dv + AC_BT_KT)) * sizeof *f->P);
    f->o32 = ac_xmalloc((size_t)(na * dvp) * sizeof *f->o32);
    f->cap_o = na * dvp;
  }
  f->N = f->P + na * dv;
  f->acc = f->N + na * dv;
  f->vlo = f->acc + na * 6 * dvp;
  f->vhi = f->vlo + na * dv;
  if (ld > f->cap_t) {
    free(f->tb);
    free(f->wt);
    f->tb = ac_xmalloc((size_t)ld * sizeof *f->tb);
    f->wt = ac_xmalloc((size_t)(5 * AC_BT_KT) * sizeof *f->wt);
    f->cap_t = ld;
  }
}

/* The rows' visible keys and q; rows the level cannot take are written to left. Returns the rows
 * kept (f->rw, f->R). */
static int64_t tile_rows(ac_or_ws *w, ac_bt_fwd *f, const int64_t *rows, int64_t nr, int64_t *left, int64_t *nleft)
{
  const ac_problem *p = w->p;
  int64_t na = 0;
  ac_bt_rows_size(&f->R, nr, p->dk);
  for (int64_t k = 0; k < nr; k++) {
    int64_t x = rows[k], i = x % p->tq, bh = x / p->tq, h = bh % p->heads, b = bh / p->heads, lo, hi;
    ac_visible_range(p, i, &lo, &hi);
    if (hi <= lo || ac_or_row_q(w, b, h, i)) {   /* empty, or q not finite: the per-row rule table */
      left[(*nleft)++] = x;
      continue;
    }
    ac_bt_brow *rw = &f->rw[na];
    memset(rw, 0, sizeof *rw);
    *rw = (ac_bt_brow){.ridx = x, .b = b, .h = h, .i = i, .lo = lo, .hi = hi};
    rw->qk_l1 = ac_or_qk_l1(w);
    ac_bt_rows_set(&f->R, na, w->qd);
    na++;
  }
  f->R.nr = na;
  return na;
}

/* Row a's reference, weights (into f->E, 0 outside its keys), L and its bound; 1 when a key's
 * bound is too large for the level. */
static int row_weights(ac_bt_fwd *f, const ac_bt_scale *sc, int64_t a, int64_t klo, int64_t ld,
                       double gL)
{
  ac_bt_brow *rw = &f->rw[a];
  double *zh = f->zh + a * ld - klo, *za = f->za + a * ld - klo, *E = f->E + a * ld - klo, *tb = f->tb - klo;
  double m = -INFINITY, zmax = 0, czmax = 0;
  for (int64_t j = rw->lo; j < rw->hi; j++) {
    double sh = sc->cd * zh[j];
    m = sh > m ? sh : m;
    zmax = fabs(zh[j]) > zmax ? fabs(zh[j]) : zmax;
    czmax = za[j] > czmax ? za[j] : czmax;
  }
  rw->m = m;
  rw->zmax = zmax;
  rw->czmax = czmax * fabs(sc->cd);
  double rho = 0;
  int bad = 0;
  for (int64_t j = rw->lo; j < rw->hi; j++) {
    double sh = sc->cd * zh[j], t = sh - m, tau = ac_bt_tau(sc, zh[j], za[j], sh, t);
    tb[j] = t;
    if (t >= AC_FX_TMIN) {
      bad |= !(tau <= AC_BT_TAU_MAX);
      rho = tau > rho ? tau : rho;
    } else {
      bad |= !(tau <= 1);
      rw->ntiny++;
    }
    zh[j] = sh;   /* zh holds sh from here on */
  }
  if (bad) return 1;
  for (int64_t j = klo; j < rw->lo; j++) E[j] = 0;
  for (int64_t j = rw->hi; j < klo + ld; j++) E[j] = 0;
  ac_fx_exp_array(tb + rw->lo, E + rw->lo, rw->hi - rw->lo);
  double L = 0;
  for (int64_t k0 = rw->lo; k0 < rw->hi; k0 += AC_BT_KT) {
    int64_t k1 = k0 + AC_BT_KT < rw->hi ? k0 + AC_BT_KT : rw->hi;
    double s = 0;
    for (int64_t j = k0; j < k1; j++) s += E[j];
    L += s;
  }
  AC_ASSERT(L >= 1, "the key of the reference has E = 1 exactly");
  rw->L = L;
  rw->iL = 1 / L;
  rw->rho = ac_bt_rho(rho);
  rw->eL = 1.01 * (gL + rw->rho) * L + (double)rw->ntiny * AC_BT_TINY;
  return !(rw->eL <= 0x1p-20 * L);
}

/* The weights of row a over keys [j0, j1) into f->wt (5 rows of AC_BT_KT) and the row's sums. */
static void row_tile_weights(ac_bt_fwd *f, const ac_bt_tile *T, int64_t a, int64_t j0, int64_t j1, const double *mu,
                             int nmu)
{
  ac_bt_brow *rw = &f->rw[a];
  const double *sh = T->sh + a * T->ld - T->klo, *za = T->za + a * T->ld - T->klo, *E = T->E + a * T->ld - T->klo;
  double cabs = fabs(T->sc->cd), iL = rw->iL, m = rw->m;
  float *w0 = f->wt, *w1 = w0 + AC_BT_KT, *w2 = w1 + AC_BT_KT, *w3 = w2 + AC_BT_KT, *w4 = w3 + AC_BT_KT;
  for (int64_t j = j0; j < j1; j++) {
    int64_t x = j - j0;
    double czb = ac_bt_czb(T, a, j), A = E[j] * iL;
    rw->czbmax = czb > rw->czbmax ? czb : rw->czbmax;
    w0[x] = w1[x] = w2[x] = w3[x] = w4[x] = 0;
    if (A == 0) continue;
    double at = fabs(sh[j] - m), as = fabs(sh[j]), acz = cabs * za[j];
    rw->npos++;
    rw->lcz += A * acz;
    rw->lczb += A * czb;
    rw->ls += A * as;
    rw->lst += A * at;
    for (int q = 0; q < nmu; q++)
      if (A < mu[q]) {
        rw->fmass[q] += A;
        rw->nbelow[q]++;
      }
    if (A < AC_BT_SMALL) continue;   /* blasrow.c sums these in binary64 */
    w0[x] = (float)A;
    w1[x] = (float)(A * at);
    w2[x] = (float)(A * as);
    w3[x] = (float)(A * acz);
    w4[x] = (float)(A * czb);
  }
}

/* The extremes of V over keys [j0, j1) into lo, hi (dv each), taken with what they hold. */
static void vrange(const ac_bt_head *bh, int64_t j0, int64_t j1, double *lo, double *hi)
{
  int64_t dv = bh->dv;
  for (int64_t j = j0; j < j1; j++) {
    const double *v = bh->V + j * dv;
    for (int64_t t = 0; t < dv; t++) {
      lo[t] = v[t] < lo[t] ? v[t] : lo[t];
      hi[t] = v[t] > hi[t] ? v[t] : hi[t];
    }
  }
}

/* The budget sums of every row over every key tile (tiles outer, rows inner: a tile of V stays in
 * cache), and the extremes of V per row: rows whose keys start at klo take them from the prefix of
 * the tiles before (plo, phi) and the part of their last tile. */
static void tile_terms(ac_bt_fwd *f, ac_bt_tile *T, const double *mu, int nmu)
{
  const ac_bt_head *bh = T->bh;
  int64_t dv = bh->dv, dvp = bh->dvp, na = T->na;
  double *pre = ac_xmalloc((size_t)(2 * dv) * sizeof *pre), *plo = pre, *phi = pre + dv;
  for (int64_t t = 0; t < dv; t++) { plo[t] = INFINITY; phi[t] = -INFINITY; }
  for (int64_t a = 0; a < na; a++) {
    double *lo = f->vlo + a * dv, *hi = f->vhi + a * dv;
    for (int64_t t = 0; t < dv; t++) { lo[t] = INFINITY; hi[t] = -INFINITY; }
    if (T->rw[a].lo != T->klo) vrange(bh, T->rw[a].lo, T->rw[a].hi, lo, hi);
  }
  memset(f->acc, 0, (size_t)(na * 6 * dvp) * sizeof *f->acc);
  for (int64_t k0 = T->klo; k0 < T->khi; k0 += AC_BT_KT) {
    int64_t k1 = k0 + AC_BT_KT < T->khi ? k0 + AC_BT_KT : T->khi;
    for (int64_t a = 0; a < na; a++) {
      ac_bt_brow *rw = &f->rw[a];
      int64_t j0 = rw->lo > k0 ? rw->lo : k0, j1 = rw->hi < k1 ? rw->hi : k1;
      if (rw->left || j0 >= j1) continue;
      row_tile_weights(f, T, a, j0, j1, mu, nmu);
      ac_bt_terms_tile(f->wt, AC_BT_KT, j1 - j0, bh->Vf + j0 * dvp, dvp, f->o32 + a * dvp, f->acc + a * 6 * dvp);
      if (rw->lo == T->klo && rw->hi <= k1) {   /* the row's keys end in this tile */
        double *lo = f->vlo + a * dv, *hi = f->vhi + a * dv;
        memcpy(lo, plo, (size_t)dv * sizeof *lo);
        memcpy(hi, phi, (size_t)dv * sizeof *hi);
        vrange(bh, k0, rw->hi, lo, hi);
      }
    }
    vrange(bh, k0, k1, plo, phi);
  }
  free(pre);
}

int64_t ac_bt_fwd_tile(ac_or_ws *w, ac_bt_fwd *f, const ac_bt_head *bh, const int64_t *rows, int64_t nr,
                       ac_oracle_result *r, ac_or_stats *st, int64_t *left)
{
  const ac_problem *p = w->p;
  int64_t nleft = 0, dv = p->dv, dvp = bh->dvp;
  fwd_size(f, nr, 0, dv, dvp);
  int64_t na = tile_rows(w, f, rows, nr, left, &nleft);
  if (na == 0) return nleft;
  int64_t klo = INT64_MAX, khi = 0;
  for (int64_t a = 0; a < na; a++) {
    klo = f->rw[a].lo < klo ? f->rw[a].lo : klo;
    khi = f->rw[a].hi > khi ? f->rw[a].hi : khi;
  }
  int64_t ld = (khi - klo + 7) / 8 * 8, nkt = (khi - klo + AC_BT_KT - 1) / AC_BT_KT;
  fwd_size(f, na, ld, dv, dvp);
  ac_bt_scale sc;
  ac_bt_scale_init(&sc, &w->sc, p->dk);
  for (int64_t k0 = klo; k0 < khi; k0 += AC_BT_KT) {
    int64_t k1 = k0 + AC_BT_KT < khi ? k0 + AC_BT_KT : khi;
    ac_bt_scores(&f->R, bh, k0, k1, f->zh + (k0 - klo), f->za + (k0 - klo), ld, f->P);
  }
  /* weights; a row whose bounds are too large keeps E = 0 (it adds nothing to the products) */
  double gL = ac_gemm_gamma(AC_BT_KT + nkt);
  for (int64_t a = 0; a < na; a++)
    if (row_weights(f, &sc, a, klo, ld, gL)) {
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
                  .vlo = f->vlo, .vhi = f->vhi};
  tile_terms(f, &T, r->mu, r->nmu);
  for (int64_t a = 0; a < na; a++)
    if (f->rw[a].left || ac_bt_row_finish(w, &T, a, r, st)) left[nleft++] = f->rw[a].ridx;
  return nleft;
}
