/* budget_grad.h: per-element budgets of the backward pass (docs/backward.md "Budgets"): W, the
 * worst case of a precision class, and E, the typical estimate, for every element of dQ, dK
 * and dV of a case, from a binary64 recomputation of the backward's terms (P, dP, D, dS). */
#ifndef AC_BUDGET_GRAD_H
#define AC_BUDGET_GRAD_H
#include "casefile.h"
#include "precision.h"

/* The budget terms (before the margin, the output's ½ ulp and the oracle's error) of every
 * element: dq [B,H,tq,dk], dk [B,KVH,tk,dk], dv [B,KVH,tk,dv], dense, as W (worst) and E
 * (typical); NaN where the binary64 recomputation meets a non-finite input. */
typedef struct {
  double *w[3], *e[3];
  int64_t count[3];
  double *sink_w, *sink_e;   /* dσ_h per head with sinks, else NULL */
  int64_t nsink;             /* heads, or 0 */
  double *sink_t[2], *sink_m[2]; /* per head, W [0] and E [1]: Σ over the rows of their dσ terms' error
                                      bounds and of the magnitudes the γ of the sum multiplies */
  int64_t sink_rows;             /* the rows summed into dσ_h */
  double cpu, cpu_max;           /* the workers' CPU seconds in total and the busiest one's (dense cases) */
} ac_grad_budget;

/* c must carry dO (c->dout); plain attention with masks, GQA, windows, boolean masks, ALiBi,
 * bias and sinks, varlen batches per sequence. -1 with a message when c has no dO. */
int ac_grad_budget_compute(const ac_precision *cls, const ac_case *c, ac_grad_budget *b, ac_err *e);
/* The same for a kernel of LSE convention alibi_lse (AC_ALIBI_LSE_ABI, _FA2): under FlashAttention-2's,
 * with ALiBi and a causal mask, every logit of row i (the sink's too) and its LSE are larger by
 * m_h (i + tk - tq), and the magnitudes the budgets charge with them (docs/variants.md). */
int ac_grad_budget_compute_as(const ac_precision *cls, const ac_case *c, int alibi_lse, ac_grad_budget *b, ac_err *e);
/* The same on `threads` workers (<= 1: the caller's thread): the sums are formed in the same order
 * whatever their number, so the budgets depend on the case only. */
int ac_grad_budget_compute_threads(const ac_precision *cls, const ac_case *c, int alibi_lse, int threads,
                                   ac_grad_budget *b, ac_err *e);
void ac_grad_budget_free(ac_grad_budget *b);
/* sink_w and sink_e from sink_t, sink_m and sink_rows: the rows' terms, γ(N + 1, u_a) for the N rows'
 * products and their sum in any order, (N + 2) η of underflow (a varlen case sums its sequences'). */
void ac_grad_budget_sink(const ac_precision *cls, ac_grad_budget *b);
/* A varlen case (budget_grad_layout.c; ac_grad_budget_compute calls it): each sequence's dense
 * budgets in the carrier's packed elements. */
int ac_grad_budget_layout(const ac_precision *cls, const ac_case *c, int alibi_lse, ac_grad_budget *b, ac_err *e);

#endif
