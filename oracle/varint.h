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
  mpfr_t t1, t2, t3;        /* scratch */
};

#endif
