/* budget_grad_int.h: internals of the backward budgets (budget_grad.c: the per-row formulas;
 * budget_grad_tile.c: the tiles and their matrix products). Not included outside src/judge. */
#ifndef AC_BUDGET_GRAD_INT_H
#define AC_BUDGET_GRAD_INT_H
#include "budget_grad.h"

/* One query row's view: the per-key arrays point at the row's keys in the tile's strips (n keys,
 * -inf scores where not visible); [0] W, [1] E. */
typedef struct {
  const ac_precision *cl;
  const ac_case *c;
  double cs;                 /* |scale| */
  double u_o;                /* unit roundoff of o's dtype (O' in D' = dO·O') */
  int64_t n;                 /* keys of the row's arrays */
  double *s, *P, *dP, *A, *Z, *pi[2], *sg[2], *ta[2];
  double *th, *f, *mg, *rw;  /* softcap, per key: tanh x_j, f_j = sech² x_j, |m_h dist| + |bias_j|, |c d_j| */
  int64_t h;                 /* the row's head */
  double eta, cs1;           /* the accumulation format's underflow floor (doubled truncating); max(1, |scale|) */
  double sk_t[2], sk_m[2];   /* the row's sink term of dσ: its error bound and the magnitude γ multiplies */
  double shift;              /* FlashAttention-2's causal ALiBi convention: the row's logits shifted by
                                m_h (i + tk - tq) (0 otherwise) */
  double dd;                 /* dropout: the relative error δ of a kernel's 1/(1 - p) (0 without) */
  double *vf;                /* dropout, per key: m_ij / (1 - p), the factor of V and of the P of dV */
} gb_ws;

/* γ_w (typ 0) or γ_e (typ 1) of n terms at unit roundoff u. */
double ac_gbud_gam(double n, int typ, double u, int trunc);
/* π, σ, τ of every visible key of the row for W (typ 0) or E (typ 1), and the sink's terms;
 * T visible keys, L the LSE, D = Σ P dP, B = Σ |dO O|. */
void ac_gbud_row_errors(gb_ws *w, int typ, int64_t T, double L, double D, double B);
/* |dS_j| w.r.t. the raw score: f_j |P_j (dP_j - D)| under a softcap. */
double ac_gbud_ds_abs(const gb_ws *w, int64_t j, double D);
/* bg's W and E arrays for c's q, k and v elements, zeroed (one more each); -1 with a message. */
int ac_gbud_alloc(const ac_case *c, ac_grad_budget *bg, ac_err *e);
/* The budgets of a dense case on `threads` workers (budget_grad_tile.c). */
int ac_gbud_tiles(const ac_precision *cls, const ac_case *c, int alibi_lse, int threads, ac_grad_budget *bg,
                  ac_err *e);

#endif
