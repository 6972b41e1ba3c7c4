/* grad.h: the exact backward pass of plain attention (docs/backward.md).
 *
 * Given a case (Q, K, V, scale, mask, GQA) and the upstream gradient dO (the shape and dtype of
 * O), every selected element of dQ, dK and dV correctly rounded into the case dtype and the
 * requested formats (binary64 by default), with a binary64 value and a proven error bound:
 *   P exact (the forward's weights), dP_ij = dO_i·V_j, D_i = Σ_j P_ij dP_ij,
 *   dS_ij = P_ij (dP_ij - D_i), dQ_i = c Σ_j dS_ij K_j, dK_j = c Σ_i dS_ij Q_i, dV_j = Σ_i P_ij dO_i,
 * dK and dV summed over the query heads of a KV group. Rows (dQ) are numbered as the forward's,
 * r = (b*heads + h)*tq + i; columns (dK, dV) x = (b*kv_heads + kvh)*tk + j.
 * Rule table (visible positions only; masked keys never count):
 *   - a row with no visible key: dQ_i = 0 exactly, and it adds nothing to dK, dV;
 *   - NaN or inf in q_i or a visible K_j: P of the row is undefined: dQ_i and dK_j, dV_j of every
 *     key j it sees are undefined (accept NaN or ±inf), every element;
 *   - else NaN or inf in a visible V_j or in dO_i: D_i is undefined: dQ_i and dK_j of every visible
 *     key j are undefined; dV_j[t] is undefined in the columns t where dO_i[t] is not finite.
 * Undefined elements: g NaN, accept AC_ACCEPT_NAN | AC_ACCEPT_PINF | AC_ACCEPT_NINF, how EXACT,
 * bits the dtype's NaN. Exact zeros are +0. Variants: sliding windows and boolean masks (which keys
 * are visible), ALiBi and bias (s_ij = c q_i·k_j + a_ij; a -inf bias drops the key like a mask, a
 * NaN or +inf bias or a non-finite slope makes P of the row undefined), sinks (one more key of
 * score σ_h, K = 0 and V = 0, and the gradient dσ_h; σ_h = -inf: no sink; NaN or +inf: P
 * undefined, and dσ_h with it), softcap (s_j = cap tanh(c q·k_j / cap) + a_j; dS through the cap:
 * dQ and dK take dS_ij sech²(c q·k_j / cap), gradcap.c); descales and per-tensor dtypes are refused. */
#ifndef AC_GRAD_H
#define AC_GRAD_H
#include <stdint.h>
#include "casefile.h"
#include "oracle.h"

typedef struct {
  double g;        /* binary64 approximation (NaN when undefined) */
  double g_err;    /* proven bound on |g - exact| (0 when exact) */
  uint8_t how;     /* ac_how: EXACT (a point: zeros, exact products), ROUNDED, UNRESOLVED, */
  uint8_t accept;  /* AC_ACCEPT_VALUE, or NAN|PINF|NINF for an undefined element */
} ac_grad_elem;

/* One gradient tensor restricted to its selected rows (dQ) or columns (dK, dV). */
typedef struct {
  int64_t n;                     /* rows (dQ: batch*heads*tq) or columns (batch*kv_heads*tk) */
  int64_t d;                     /* elements per row or column: dk (dQ, dK) or dv (dV) */
  int64_t nsel;                  /* selected ones */
  int64_t *slot;                 /* n: storage slot, -1 when not selected */
  ac_grad_elem *el;              /* nsel * d */
  uint64_t *bits[AC_NDTYPES];    /* nsel * d per requested format, else NULL */
} ac_grad_tensor;

typedef struct {
  ac_problem p;
  uint32_t formats;              /* formats rounded into: requested | dtype | binary64 */
  ac_grad_tensor dq, dk, dv;
  ac_grad_tensor dsink;          /* dσ_h = -Σ_{b,i} P_i,sink D_i: heads elements of d = 1 (nsel 0 without sinks) */
  /* statistics over the selected elements: exact (points and undefined elements), rounded (by the
   * interval passes), zero (exact zeros, a subset of exact), unresolved, highprec (decided after
   * the first pass), passes run, largest precision in bits */
  int64_t n_exact, n_rounded, n_zero, n_unresolved, n_highprec;
  int64_t n_fast;                /* of the rounded: decided before the MPFR passes (matrix products, extended pass) */
  int64_t n_blas;                /* decided by the matrix-product level (docs/backward.md §4.4): rounded, and the
                                    exact zeros of rows with no visible key */
  int passes;
  long max_prec;
  double seconds;
  int blas_threads;              /* workers of the matrix-product level (0: it did not run) */
  double blas_cpu, blas_cpu_max; /* their CPU seconds in total and the busiest one's */
} ac_grad_result;

typedef struct {
  const char *rows;     /* dQ rows: NULL or "all", "edges+K", or a list "3,7,10-20" (as the forward) */
  const char *cols;     /* dK/dV columns: the same forms over columns (edges: j = 0, tk-1, j mod 16 in {0,15}) */
  uint64_t seed;        /* for the K random rows/columns of edges+K */
  uint32_t formats;     /* formats (1u << ac_dtype) besides the case dtype: binary64 by default */
  long prec_cap;        /* bits (0: the forward's default, 65536) */
  int no_fast;          /* the MPFR passes alone (neither the matrix-product level nor the extended pass) */
  int no_blas;          /* without the matrix-product level (the extended and MPFR passes as before it) */
  int fine;             /* the extended pass with its finer weights from the start (tests; else only where the
                           matrix-product level ran, or for what the coarse weights left) */
  int threads;          /* workers of the matrix-product level (<= 1: the caller's thread alone) */
} ac_grad_opts;

void ac_grad_opts_init(ac_grad_opts *o);
/* dout: dO dense [batch][heads][tq][dv] in p.dtype. -1 on bad input (descales, per-tensor dtypes, a
 * non-finite scale, a bad row or column spec); unresolved elements are counted, not errors.
 * The result depends on the case and options only, not on o->threads. */
int ac_grad_run(const ac_case *c, const void *dout, const ac_grad_opts *o, ac_grad_result *r, ac_err *e);
void ac_grad_result_free(ac_grad_result *r);
/* Element t of row/column x of g (x selected). */
static inline const ac_grad_elem *ac_grad_at(const ac_grad_tensor *g, int64_t x, int64_t t)
{
  return &g->el[g->slot[x] * g->d + t];
}
static inline uint64_t ac_grad_bits(const ac_grad_tensor *g, ac_dtype f, int64_t x, int64_t t)
{
  return g->bits[f][g->slot[x] * g->d + t];
}

#endif
