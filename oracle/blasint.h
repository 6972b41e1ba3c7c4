/* blasint.h: what blasfwd.c (the tile: scores, weights, P·V, the binary32 terms) hands blasrow.c
 * (each row: the terms' binary64 parts, the decisions, the LSE, what goes to the per-row levels).
 * Internal to those two files. */
#ifndef AC_ORACLE_BLASINT_H
#define AC_ORACLE_BLASINT_H
#include "blasfwd.h"

/* weights below this go to the binary64 sums of blasrow.c, not to the binary32 vectors */
#define AC_BT_SMALL 0x1p-100

/* One row of a tile. */
typedef struct {
  int64_t ridx, b, h, i, lo, hi;   /* global row, its batch, head and query; visible keys [lo, hi) */
  int64_t ntiny;                   /* keys whose weight is below AC_BT_TINY (E = 0) */
  double m;                        /* the reference: the largest computed score sh of the row */
  double L, iL, eL;                /* L = Σ E (computed), fl(1/L), |L - L*| <= eL */
  double rho;                      /* the largest relative bound of a weight */
  double zmax, czmax, czbmax;      /* max |zh|, max |c_d| za, max |c_d| Zb over the row's keys */
  double lcz, lczb, ls, lst;       /* Σ A |c|Z, Σ A |c|Zb, Σ A |s|, Σ A |t| */
  double fmass[AC_ORACLE_NMU];
  int64_t nbelow[AC_ORACLE_NMU], npos;   /* keys with 0 < A < mu[k]; keys with A > 0 */
  double qk_l1;
  int left;                        /* the per-row path takes the whole row */
} ac_bt_brow;

/* The tile as blasrow.c reads it: na rows (rw) with their arrays of ld keys from klo. */
typedef struct {
  const ac_bt_head *bh;
  const ac_bt_scale *sc;
  int64_t na, klo, khi, ld, nkt;   /* rows, keys [klo, khi), row stride, key tiles */
  ac_bt_brow *rw;
  const double *sh, *za, *E;       /* na x ld: sh = fl(c_d zh), za, weights */
  const double *Qb;                /* na x nb: block maxima of |q| */
  const double *N;                 /* na x dv: Σ E V */
  const double *acc;               /* na x 6 x dvp: R, D, S, S', G, Gb from the binary32 vectors */
  const float *o32;                /* na x dvp */
  const double *vlo, *vhi;         /* na x dv: the extremes of V over each row's keys */
} ac_bt_tile;

/* |c_d| Zb of row a, key j. */
static inline double ac_bt_czb(const ac_bt_tile *T, int64_t a, int64_t j)
{
  const ac_bt_head *bh = T->bh;
  const double *qb = T->Qb + a * bh->nb, *kb = bh->Kb + j * bh->nb;
  double s = 0;
  for (int64_t b = 0; b < bh->nb; b++) s += qb[b] * kb[b];
  return fabs(T->sc->cd) * s;
}

/* blasrow.c: row a of the tile: its elements, LSE and budget terms into r (the row's slot), what
 * its enclosures leave through the per-row levels; 0, or 1 when the row must go whole to the
 * per-row path (it has not written anything then). */
int ac_bt_row_finish(ac_or_ws *w, const ac_bt_tile *T, int64_t a, ac_oracle_result *r, ac_or_stats *st);

#endif
