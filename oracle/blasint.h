/* blasint.h: what blasfwd.c (the tile: scores, weights, P·V, the binary32 terms) hands blasrow.c
 * (each row: the terms' binary64 parts, the decisions, the LSE, what goes to the per-row levels).
 * Internal to those two files. */
#ifndef AC_ORACLE_BLASINT_H
#define AC_ORACLE_BLASINT_H
#include "blasfwd.h"

/* weights below this go to the binary64 sums of blasrow.c, not to the binary32 vectors */
#define AC_BT_SMALL 0x1p-100
/* keys per binary32 sum of the budget terms (blasterms.c) */
#define AC_BT_TT 512

/* One row of a tile. */
typedef struct {
  int64_t ridx, b, h, i, lo, hi;   /* global row, its batch, head and query; visible keys [lo, hi) */
  int64_t ntiny;                   /* keys whose weight is below AC_BT_TINY (E = 0) */
  double m;                        /* the reference: the largest computed score sh of the row */
  double L, iL, eL;                /* L = Σ E (computed), fl(1/L), |L - L*| <= eL */
  double rho;                      /* the largest relative bound of a weight */
  double zmax, czmax, czbmax;      /* max |zh|, max |c_d| Z, max |c_d| Zb over the row's keys (Z = za zs) */
  double lcz, lczb, ls, lst, suma; /* Σ A |c|Z, Σ A |c|Zb, Σ A |s|, Σ A |t|, Σ A */
  double fmass[AC_ORACLE_NMU];
  int64_t nbelow[AC_ORACLE_NMU], npos;   /* keys with 0 < A < mu[k]; keys with A > 0 */
  uint8_t fall[AC_ORACLE_NMU];     /* mu[k] above every A: F[k] = D */
  int64_t nsmall;                  /* keys with 0 < A < AC_BT_SMALL */
  int fq;                          /* the threshold whose F the binary32 vectors sum (-1: none) */
  double qk_l1;
  double zs;                       /* the scale of the row's za: 2^(qe + ke) (blastile.h) */
  int left;                        /* the per-row path takes the whole row */
  int wide;                        /* a value of q or of the head's K is not a binary32 number */
} ac_bt_brow;

/* The tile as blasrow.c reads it: na rows (rw) with their arrays of ld keys from klo. */
typedef struct {
  const ac_bt_head *bh;
  const ac_bt_scale *sc;
  int64_t na, klo, khi, ld, nkt;   /* rows, keys [klo, khi), row stride, key tiles */
  ac_bt_brow *rw;
  const double *sh, *E;            /* na x ld: sh = fl(c_d zh), weights */
  const float *za;                 /* na x ld */
  const double *Qb;                /* na x nb: block maxima of |q| */
  const double *N;                 /* na x dv: Σ E V */
  const double *acc;               /* na x 7 x dvp: R, D, S, S', G, Gb, F[fq] from the binary32 vectors */
  const float *w;                  /* 6 x na x ld: the binary32 weights (ac_bt_row_weights) */
  const float *o32;                /* na x dvp */
  const float *vlo, *vhi;          /* na x dvp: the extremes of V over each row's keys */
  double *buf;                     /* blasrow.c's scratch: dv (5 + nmu) + 7 dvp */
  int64_t *idx;                    /* blasrow.c's scratch: ld key indices */
  double *rbuf;                    /* blasrefine.c's scratch: 3 ld + 1 */
  const double *Q;                 /* na x dk: the rows' q */
} ac_bt_tile;

/* The ends of [x - d, x + d] pushed outwards past the rounding of x - d and x + d (fast.c's pred and
 * succ): a change of at least two units in the last place of the computed end. */
static inline double ac_bt_below(double x) { return x - (fabs(x) * 0x1p-51 + 0x1p-1074); }
static inline double ac_bt_above(double x) { return x + (fabs(x) * 0x1p-51 + 0x1p-1074); }

/* The formats of the mask in which lo and hi round alike, their bits into obits[f][x]; returns the
 * mask of those left. binary32 by the machine's conversion (round to nearest even: the bits of
 * ac_encode_f64_ov), the others by ac_encode_f64_ov (e4m3 saturating, as the oracle rounds). */
static inline uint32_t ac_bt_decide(uint32_t formats, double lo, double hi, uint64_t **obits, int64_t x)
{
  uint32_t left = 0;
  for (int f = 0; f < AC_NDTYPES; f++) {
    if (!(formats & (1u << f))) continue;
    uint64_t a, b;
    if (f == AC_F32) {
      float fa = (float)lo, fb = (float)hi;
      uint32_t ua, ub;
      memcpy(&ua, &fa, sizeof ua);
      memcpy(&ub, &fb, sizeof ub);
      a = ua, b = ub;
    } else {
      a = ac_encode_f64_ov((ac_dtype)f, lo, AC_E4M3_SATURATE);
      b = ac_encode_f64_ov((ac_dtype)f, hi, AC_E4M3_SATURATE);
    }
    if (a == b) obits[f][x] = a;
    else left |= 1u << f;
  }
  return left;
}

/* |c_d| Zb of row a, key j. */
static inline double ac_bt_czb(const ac_bt_tile *T, int64_t a, int64_t j)
{
  const ac_bt_head *bh = T->bh;
  const double *qb = T->Qb + a * bh->nb;
  double s = 0;
  for (int64_t b = 0; b < bh->nb; b++) s += qb[b] * bh->Kb[b * bh->tk + j];
  return fabs(T->sc->cd) * s;
}

/* blaskeys.c: the row's reference m, weights E, L, eL, rho, zmax, czmax, ntiny, npos; then from
 * A = E fl(1/L) the binary32 weights of the budget sums into w (six rows of stride ldw: A, A|t|, A|s|,
 * A|c|Z, A|c|Zb, and A below mu[fq]), the row's sums, the thresholds' counts and masses, fq. zh, za,
 * E, w are indexed by key (zh becomes sh); qb: the row's block maxima of |q|; tb: room for 7 x its keys.
 * 1 when a key's bound is too large for the level (nothing past the bounds is set). */
int ac_bt_row_weights(ac_bt_brow *rw, const ac_bt_scale *sc, const ac_bt_head *bh, const double *qb, double *zh,
                      const float *za, double *E, double *tb, double gL, const double *mu, int nmu, float *w, int64_t ldw);
/* blaskeys.c: lo, hi (dvp each) take the extremes of keys [j0, j1) of V rounded down (Vd) and up (Vu)
 * in binary32 (the head's). */
void ac_bt_vrange(const ac_bt_head *bh, int64_t j0, int64_t j1, float *lo, float *hi);

/* blasrow.c: the row's LSE from m, L and eL (the enclosure of L* against m): 1 when decided (its
 * fields set), 0 when not (nothing set). */
int ac_bt_lse(const ac_bt_brow *rw, ac_oracle_row *row);
/* blasrefine.c: the second pass over row a for the columns with pend[t] != 0 (the formats left) and
 * the LSE unless *lse_done: decided formats into obits, better values and bounds into o and del;
 * returns the columns still pending. */
int ac_bt_refine(const ac_bt_tile *T, int64_t a, uint32_t *pend, int *lse_done, ac_oracle_row *row, double *o,
                 double *del, uint64_t **obits, int64_t slot);

/* blasrow.c: row a of the tile: its elements, LSE and budget terms into r (the row's slot), what
 * its enclosures leave through the per-row levels; 0, or 1 when the row must go whole to the
 * per-row path (it has not written anything then). */
int ac_bt_row_finish(ac_or_ws *w, const ac_bt_tile *T, int64_t a, ac_oracle_result *r, ac_or_stats *st);

#endif
