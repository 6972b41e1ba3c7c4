/* varint.h: the variant workspace of a row, shared by varscores.c and varziv.c only. */
#ifndef AC_VARINT_H
#define AC_VARINT_H
#include "oracle_int.h"

/* How scores compare exactly (varscores.c): FOLD g_j = rk s_j exact; LIN c z_j + a_j with c
 * irrational; CAP cap tanh(c z_j / cap) + a_j. */
enum { AC_VAR_FOLD = 0, AC_VAR_LIN = 1, AC_VAR_CAP = 2 };

struct ac_or_var {
  int mode;
  long rk;                  /* FOLD: s_j = g_j / rk (1, or k for the default scale 1/k) */
  double cap;               /* CAP: the softcap */
  mpfr_t c;                 /* FOLD: the exact factor of z in g (c, or 1 when rk > 1) */
  int64_t cap_n;            /* capacity of the per-key arrays */
  /* per key of the row's head (compacted with it when keys drop out; w->rkey the storage index) */
  uint8_t *fix;             /* 1: z_j = 0, s_j = a_j (the sink; a softcap of a raw ±inf) */
  mpfr_t *a;                /* a_j exactly (finite keys) */
  mpfr_t *g;                /* FOLD: g_j exactly */
  long double *approx;      /* s_j approximately */
  long double *smag;        /* the score magnitude of the budget (docs/numerics.md §11.4) */
  long double *zf;          /* the factor of |c| Z_j in the budget: sech^2(x_j) under a softcap, else 1 */
  long double *mag;         /* per key: |m dist|, |bias| */
  long double zmax;         /* the row's largest |q·k_j| (before a fold) */
  long double top;          /* the row's largest approx */
  int dy;                   /* FOLD: the row's offsets are am 2^ae (varfold.c), a unset */
  int plain;                /* the row's z are the folded z' (s = c z'): plain scores for the fast path */
  int g_ok;                 /* FOLD: g holds the row's g_j (else made on demand from z') */
  uint8_t *gk;              /* !g_ok: per key, g_j made */
  ac_i128 *am;              /* dy: a_j = am_j 2^ae_j exactly */
  int32_t *ae;
  long double p2[64];       /* a cache of powers of two by exponent mod 64 (varfold.c) */
  int32_t p2e[64];
  uint8_t p2ok[64];
  mpfr_t t1, t2, t3;        /* scratch */
  int64_t tk_key;           /* CAP: the key and precision of tk_lo, tk_hi (-1 none; reset per row) */
  mpfr_prec_t tk_prec;
  mpfr_t tk_lo, tk_hi;      /* CAP: an enclosure of s_top for ac_or_var_tdiff */
};

/* varfold.c: FOLD offsets in integers. */
/* a_r = -slope dist + stored into (am, ae) with the budget's mag; 1 when it does not fit. */
int ac_or_var_dy_offset(ac_or_var *v, int64_t r, double slope, int64_t dist, double stored);
void ac_or_var_a_mpfr(ac_or_var *v, int64_t r);         /* a_r from (am, ae) */
long double ac_or_var_a_ld(ac_or_var *v, int64_t r);     /* a_r rounded to long double */
long double ac_or_var_z_ld(ac_or_ws *w, int64_t r);      /* z_r (two limbs) rounded to long double */
long double ac_or_var_pow2(ac_or_var *v, int32_t e);     /* 2^e (cached), 0 outside |e| <= 16000 */
/* z' = z + F a in two limbs when it fits (1; g then on demand), else 0 with nothing changed;
 * zbits: the bit length of the largest |z| of the row. */
int ac_or_var_fold_fast(ac_or_ws *w, int zbits);

#endif
