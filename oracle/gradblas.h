/* gradblas.h: the matrix-product level of the backward oracle (docs/backward.md §4.4), internal to
 * oracle/ (grad.c calls it before the extended and MPFR passes).
 *
 * For the narrow dtypes, when no format wider than binary32 is asked for, every (batch, kv head)
 * of finite inputs is computed from binary64 matrix products (gemm.h) over tiles of query rows:
 * scores, weights, dP, D, dS, dQ, dK, dV and dσ, each element with a proven bound; an element
 * whose enclosure rounds alike at both ends in every pending format is decided there, the rest
 * stays pending for the existing levels. gradtile.c computes one query tile, gradblas.c drives
 * the tiles over threads and decides. */
#ifndef AC_GRADBLAS_H
#define AC_GRADBLAS_H
#include <stdint.h>
#include "blastile.h"
#include "grad.h"

/* 1 when the level applies: dtype f32, f16, bf16, e4m3 or e5m2, formats (the result's) within
 * binary32, no softcap (no certified tanh), a scale of magnitude in [2^-500, 2^500] or 0. */
int ac_gr_blas_applies(const ac_problem *p, uint32_t formats);

/* Decides what it can of the pending elements of r (pend[0..3]: dq, dk, dv, dsink, the formats
 * still to decide per stored element, cleared as decided), on `threads` workers (<= 1: the
 * caller's thread). Counts into r: n_rounded, n_fast and n_blas (decided here), n_exact and
 * n_zero (the rows with no visible key). The decided bits and values depend on the case only. */
void ac_gr_blas_level(const ac_case *c, const void *dout, ac_grad_result *r, uint32_t *const pend[4], int threads);

/* ---- gradtile.c: one query tile (internal to gradblas.c and gradtile.c) ---- */

/* The sums of one (batch, head) into the columns of its kv head: hi + lo (TwoSum) of
 * Σ_i dS_ij q_i (dK, before the scale) and Σ_i P_ij dO_i (dV), and a bound on what they leave
 * out (ka, va: Σ_i E_ij |q_it| and Σ_i E'_ij |dO_it|, added in any order); dσ of the head over
 * its rows (hi, lo, the bound and Σ|terms|). */
typedef struct {
  double *kh, *kl, *ka;   /* tk * dk */
  double *vh, *vl, *va;   /* tk * dv */
  double sh, sl, se, sa;  /* dσ: -Σ_i P_i,sink D_i */
  int64_t rows;           /* rows added (for the γ of ka, va) */
  uint8_t *nz;            /* tk: a row whose dO is not all zero sees key j (else dK_j = dV_j = 0 exactly) */
  int bad;                /* an input out of the level's domain: nothing of the columns or dσ is decided */
} ac_gb_part;

/* A (batch, head) task's view of the case and its worker's buffers. */
typedef struct ac_gb_ws ac_gb_ws;
typedef struct {
  const ac_case *c;
  const void *dout;
  ac_grad_result *r;
  uint32_t *const *pend;
  ac_bt_scale sc;         /* the scale as the bounds use it (c_d, |c_d - c| <= e_c) */
  int64_t qb, kb;         /* rows per query tile, keys per block of the dQ products */
} ac_gb_case;

/* Counts of one task, added into r by the driver. */
typedef struct {
  int64_t rounded, exact, zero;
} ac_gb_count;

ac_gb_ws *ac_gb_ws_new(const ac_gb_case *G);
void ac_gb_ws_free(ac_gb_ws *w);
/* Loads the keys and values of (b, kvh) into w (kept while the same). 1 when one is not finite. */
int ac_gb_load_kv(ac_gb_ws *w, const ac_gb_case *G, int64_t b, int64_t kvh);
/* Query rows [i0, i1) of (b, h): decides their pending dQ elements, adds their terms into part.
 * Returns 1 when the tile leaves the level's domain (part->bad set, nothing of the tile's rows
 * past the first such row decided). */
int ac_gb_tile(ac_gb_ws *w, const ac_gb_case *G, int64_t b, int64_t h, int64_t i0, int64_t i1, ac_gb_part *part,
               ac_gb_count *cnt);
/* Element e of T from the value v within err, when every pending format rounds both ends alike
 * (never around 0): 1 when decided. */
int ac_gb_decide(ac_grad_tensor *T, uint32_t *pend, int64_t e, double v, double err, ac_gb_count *cnt);
/* Element e of T is exactly 0 (+0 in every format), when still pending. */
void ac_gb_zero(ac_grad_tensor *T, uint32_t *pend, int64_t e, ac_gb_count *cnt);

#endif
