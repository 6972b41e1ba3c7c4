/* precision.h: precision classes (docs/numerics.md §6): the unit roundoffs of each stage of an
 * attention kernel, from which the per-element budgets W (worst case) and E (typical) follow. */
#ifndef AC_PRECISION_H
#define AC_PRECISION_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "dtype.h"
#include "util.h"

typedef struct {
  const char *name;
  const char *description;
  double u_qk;          /* Q·Kᵀ accumulation */
  int qk_trunc;         /* truncating accumulation (tensor cores): 2u per step */
  double u_S;           /* storage of raw scores (0: never stored narrow) */
  double u_s;           /* score arithmetic (scale, subtract max, exp argument) */
  double u_e;           /* exp */
  double u_p;           /* storage of P before P·V (0: kept in the accumulation format) */
  double u_a;           /* P·V and row-sum accumulation */
  int acc_trunc;        /* truncating accumulation for P·V */
  int64_t acc_block;    /* 0: sequential sum over T keys; b > 0: blocks of b keys, then a sum of the blocks */
  int64_t nr_tile;      /* online rescales n_r = ceil(T / nr_tile); 0: none (three-pass softmax) */
  double mu;            /* smallest P kept (P·V); below it P may be lost (F term) */
  double mu_sum;        /* smallest term the row sum keeps (LSE) */
  ac_dtype range;       /* the format whose range bounds scores and partial sums (OUT-OF-DOMAIN) */
  double eta_qk;        /* underflow floor of QK^T accumulation and score storage: half the smallest
                           subnormal spacing of that format (binary32 2^-150, fp16 2^-25, bf16 2^-134) */
  double eta_a;         /* the same for the P.V accumulation format */
  ac_dtype score_store; /* format raw scores are stored in when narrower than range (AC_F64: not narrower) */
  ac_dtype scaled_in;   /* input format a kernel may round Q and K to after scaling them (each by sqrt|c|,
                           or Q by c) before Q·Kᵀ, as PyTorch's math path does: its unit roundoff and
                           underflow apply to every scaled element (AC_F64: scaled in binary32 or wider,
                           inside u_qk and eta_qk) */
} ac_precision;

/* The table, in listing order. */
const ac_precision *ac_precision_table(size_t *n);
/* By name; NULL if unknown. */
const ac_precision *ac_precision_find(const char *name);
/* The default class of a dtype (fp64, fp32, fp16-fa2, bf16-fa2, e4m3-fa3, e5m2-fa3). */
const ac_precision *ac_precision_default(ac_dtype t);
/* The class that applies: override (--precision) if set, else the kernel's declared name, else
 * the dtype's default. Both may be a precision spec, "CLASS" or "DTYPE=CLASS,..." (an entry
 * naming t wins over a bare CLASS; a spec that names neither leaves t to the next source).
 * -1 with a message naming the unknown class. */
int ac_precision_resolve(const char *override_name, const char *declared, ac_dtype t,
                         const ac_precision **out, ac_err *e);
/* 1 when spec (NULL allowed) has an entry for dtype t: "DTYPE=CLASS" naming t, or a bare CLASS. */
int ac_precision_spec_names(const char *spec, ac_dtype t);
/* 0 when spec is a usable precision spec (every class and dtype known, at most one bare
 * CLASS); -1 with a one-line message otherwise. */
int ac_precision_spec_check(const char *spec, ac_err *e);

/* Number of online rescales and summation length for a row of T visible keys. */
int64_t ac_precision_nr(const ac_precision *c, int64_t T);
int64_t ac_precision_tacc(const ac_precision *c, int64_t T);

/* The mu thresholds the oracle is asked for (the same for every class, so that the oracle
 * cache is shared); index of a class's mu / mu_sum in that list. */
int ac_precision_mu_list(double *mu, int max);
int ac_precision_mu_index(double mu);

/* `attncheck list --precision`. */
void ac_precision_print(FILE *f);

#endif
