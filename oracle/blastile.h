/* blastile.h: the tiles of the certified BLAS level 0 (docs/numerics.md §12.2, §12.3), shared by
 * the forward (blasfwd.c) and the backward: a head's keys and values in the forms the binary64
 * products read, blocks of query rows, scores from ac_gemm with a proven bound per score, and
 * weights exp(s - r) against any binary64 reference r with a proven relative bound per weight.
 * Internal to oracle/ (never included outside it).
 *
 * Tile shapes follow from the problem alone (ac_bt_rows_per_tile, AC_BT_KT), never from the
 * number of threads, so that every value computed from them is the same bit for bit for any
 * --threads (each product runs on one library thread, gemm.h).
 *
 * The bounds, for one score (u = 2^-53, c_d the binary64 scale with |c_d - c| <= e_c, z* = q·k
 * exactly and Z* = Σ_t |q_t k_t|):
 *   za = fl32(|q 2^-qe|·|k 2^-ke|) in one binary32 product, q scaled by its row's power of two qe and
 *   K by its head's ke (largest element in [1, 2); each scaled value rounded up to binary32, exact
 *   for a binary32 value unless the scaling underflows), so that nothing overflows and only products
 *   below 2^-126 of the largest underflow: Z* <= Zup = (za + dk 2^-146) / (1 - ga) 2^(qe + ke),
 *   ga = gamma32_dk (§12.1) (the 2^-146: the products' underflow, dk 2^-149; the roundings of the
 *   scaled values only raise them, a wide value's included, docs/numerics.md §12.2);
 *   zh = fl(q·k) as the sum, in order, of the products of blocks of AC_BT_DKC along dk (nc of them):
 *   every product q_t k_t meets at most AC_BT_DKC + nc - 1 roundings, so
 *   |zh - z*| <= gz Zup + dk 2^-1074, gz = gamma_(min(dk, AC_BT_DKC) + nc - 1);
 *   sh = fl(c_d zh); for a binary64 reference r >= sh, t = fl(sh - r) <= 0 and
 *   |t - (c z* - r)| <= tau = ac_bt_tau(sc, zh, Zup, sh, t);
 *   E = ac_fx_exp(t) for t >= AC_FX_TMIN: |E - e^(c z* - r)| <= ac_bt_rho(tau) E when
 *   tau <= AC_BT_TAU_MAX; t < AC_FX_TMIN: E = 0 and e^(c z* - r) < AC_BT_TINY when tau <= 1. */
#ifndef AC_ORACLE_BLASTILE_H
#define AC_ORACLE_BLASTILE_H
#include <math.h>
#include "fast.h"

/* keys per key tile: the inner dimension of one P·V product (docs/numerics.md §12.3) */
#define AC_BT_KT 128
/* the inner dimension of one product of the scores (blocks of dk, added in order) */
#define AC_BT_DKC 32
/* the largest bound on an exp argument the weights' bound takes (ac_bt_rho) */
#define AC_BT_TAU_MAX 0x1p-20
/* the smallest magnitude of a nonzero value that is not a binary32 number the level takes: the
 * products of two such are far above binary64's underflow (blasrefine.c's TwoProduct is exact) */
#define AC_BT_WIDE_MIN 0x1p-300
/* the bound on the weight of a key whose argument is below AC_FX_TMIN */
#define AC_BT_TINY 0x1p-1000

/* Query rows per row tile for tk keys: the score tiles of a row tile (rows x keys, binary64) stay
 * near 2^19 values each. A function of the problem alone. */
int64_t ac_bt_rows_per_tile(int64_t tk);

/* The scale as the bounds use it. */
typedef struct {
  double cd;     /* c_d: the binary64 scale (0 for c = 0) */
  double ec;     /* |c_d - c| <= ec (0 for a stored scale) */
  double cup;    /* |c_d| + ec */
  double ga, gz; /* the gammas of za and zh (header), rounded up */
  double iga;    /* 1 / (1 - ga), rounded up */
  double zsub;   /* dk 2^-1074: the underflow of zh's products */
  double zsuba;  /* dk 2^-146: the underflow of za's products and scalings */
  int64_t dk;
} ac_bt_scale;
void ac_bt_scale_init(ac_bt_scale *s, const ac_or_scale *sc, int64_t dk);

/* A (batch, kv head) as the products read it, built once from the decoded head. */
typedef struct {
  int64_t tk, dk, dv;
  int64_t dvp;        /* dv rounded up to a multiple of 16 */
  int64_t nb;         /* blocks of AC_ORACLE_QBLOCK along dk */
  double *K;          /* tk x dk: K in binary64 (exact) */
  float *Ka;          /* tk x dk: |K| 2^-ke in binary32, rounded up (ac_bt_f32_up) */
  double ks;          /* 2^ke: max |K| 2^-ke in [1, 2) (1 for K = 0) */
  double *V;          /* tk x dv in binary64 (exact) */
  float *Vf;          /* tk x dvp: V in binary32 rounded away from zero (ac_bt_f32_up; exact unless wide),
                       * the columns past dv zero */
  float *Vd, *Vu;     /* tk x dvp: V rounded down and up in binary32 (the extremes of M): Vf unless wide */
  double *Kb;         /* nb x tk: Σ_{t in block b} |k_jt| at b tk + j (the block sums of Zb, §2.2), rounded */
  double vmax;        /* max |Vf| over the head: max |V|, rounded up to binary32 where V is wide */
  int ok;             /* 1 when every K and V value is finite, |K| < 2^56, |V| < 2^64, each a binary32 number
                       * or 0 or at least AC_BT_WIDE_MIN in magnitude */
  int wide;           /* bit 0: a K value, bit 1: a V value is not a binary32 number (§12.2) */
} ac_bt_head;
/* Fills bh from a head decoded by ac_or_fast_head_decode (narrow dtypes; kf, vf); ok = 0 (and no
 * arrays) when a value is not finite, |K| >= 2^56, |V| >= 2^64, or a value that is not a binary32
 * number is nonzero below AC_BT_WIDE_MIN. */
void ac_bt_head_build(ac_bt_head *bh, const ac_or_head *hd, int64_t tk, int64_t dk, int64_t dv);
void ac_bt_head_free(ac_bt_head *bh);

/* A block of query rows: row r of Q is q, of Qa |q| 2^-qe (binary32), of Qb the largest |q| of each
 * block of AC_ORACLE_QBLOCK along dk (nb per row); qs[r] = 2^qe (max |q| 2^-qe in [1, 2)). */
typedef struct {
  int64_t nr, cap, dk, nb;
  double *Q, *Qb, *qs;
  float *Qa;
} ac_bt_rows;
/* Room for nr rows of dk (reusing the buffers). */
void ac_bt_rows_size(ac_bt_rows *R, int64_t nr, int64_t dk);
/* Row r from the binary64 values q[dk] (finite); 1 (nothing set) when one is 2^56 or more in magnitude
 * or, not a binary32 number, nonzero below AC_BT_WIDE_MIN; 2 (the row set, Qa rounded up) when a value
 * is not a binary32 number; else 0. */
int ac_bt_rows_set(ac_bt_rows *R, int64_t r, const double *q);
void ac_bt_rows_free(ac_bt_rows *R);

/* zh[r * ld + (j - k0)] = fl(q_r·k_j) and za[...] = the scaled fl32(|q_r|·|k_j|) for the rows of R and
 * the keys [k0, k1) of bh, as the header says (products of ac_gemm, ac_gemm_f32); tmp: room for
 * R->nr x (k1 - k0). */
void ac_bt_scores(const ac_bt_rows *R, const ac_bt_head *bh, int64_t k0, int64_t k1, double *zh, float *za, int64_t ld,
                  double *tmp);

/* x in binary32 rounded away from zero: |x| <= |ac_bt_f32_up(x)| <= |x| (1 + 2^-23) for binary64 x
 * in binary32's normal range (0 stays 0; at most 2^-149 more below it; x below 2^128 in magnitude). */
float ac_bt_f32_up(double x);
/* x in binary32 rounded towards +inf (dir > 0) or -inf (dir < 0). */
float ac_bt_f32_dir(double x, int dir);

/* Zup of the header from a scaled za and its row's scale zs = 2^(qe + ke). */
static inline double ac_bt_zup(const ac_bt_scale *s, double za, double zs) { return (za + s->zsuba) * s->iga * zs; }

/* tau of the header for a score zh, its Zup, sh = fl(c_d zh) and t = fl(sh - r). */
static inline double ac_bt_tau(const ac_bt_scale *s, double zh, double zup, double sh, double t)
{
  const double u = 0x1p-53;
  return 1.001 * (u * (fabs(t) + fabs(sh)) + s->cup * (s->gz * zup + s->zsub) + s->ec * fabs(zh)) + 0x1p-1073;
}

/* The relative bound on a weight from the bound tau (<= AC_BT_TAU_MAX) on its argument. */
static inline double ac_bt_rho(double tau) { return 1.01 * (AC_FX_EPS + tau); }

#endif
