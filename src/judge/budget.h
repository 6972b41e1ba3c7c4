/* budget.h: per-element and per-row error budgets from the oracle's terms (docs/numerics.md §7).
 * W is the worst-case bound of a precision class, E the typical estimate. Both are split into
 * a part that scales (the κ of SUSPECT multiplies E's) and a fixed part: ½ ulp of the output
 * format (of the largest value the kernel may round) plus the oracle's own error bound.
 * Beyond docs/numerics.md §7.2's first-order model (proof in budget.c): the score-error terms are
 * multiplied by phi(Δ) = e^Δ(e^Δ - 1)/Δ, Δ a bound of every key's score error from the row's
 * max|c|Z_j and max|s_j| (above Δ = 2^-10 only), the terms proportional to the weights by e^{2Δ};
 * underflow adds (|c| d_k + 2) eta_qk per score and (T + n_r + 2) eta_a per output; with P
 * rounded for P.V only (u_p > 0) F is charged for A_j|V_j|, i.e. F + |o| Σ_{A_j < mu} A_j. */
#ifndef AC_BUDGET_H
#define AC_BUDGET_H
#include "oracle.h"
#include "precision.h"

typedef struct {
  double W_terms, E_terms;  /* the class's terms, worst case and typical */
  double fixed;             /* ½ ulp_out + oracle error: never scaled */
  double W, E;              /* W_terms + fixed, E_terms + fixed */
} ac_bound;

/* Safety factor on the oracle's budget terms (approximations to a few percent). */
#define AC_BUDGET_MARGIN 1.125

/* γ(n, u) of the worst case: n·u/(1 − n·u) (inf when n·u >= 1); truncating: u -> 2u. */
double ac_gamma_w(double n, double u, int trunc);
/* γ(n, u) of the typical estimate: 4·√n·u; truncating: u -> 2u. */
double ac_gamma_e(double n, double u, int trunc);

/* The part of the class's score error bound Δ that arises after Q·Kᵀ (scale, stored score,
 * max subtraction, exp, rescales): what can push an exp argument above 0 when the maximum is
 * formed apart from the scores (FlashAttention's exp2(fma(s, c log2 e, -m c log2 e))). The dot
 * products' own error is common to a score and the maximum taken over the scores. */
double ac_budget_exp_arg_delta(const ac_precision *c, const ac_problem *p, const ac_oracle_row *row);
/* The terms of a row's sum in a kernel: its visible keys and, in a case with sinks, the sink. */
int64_t ac_budget_row_keys(const ac_problem *p, const ac_oracle_row *row);
/* Element budget: out is the output dtype, mu/nmu the oracle's F thresholds. */
void ac_budget_elem(const ac_precision *c, const ac_problem *p, ac_dtype out, const ac_oracle_row *row,
                    const ac_oracle_elem *el, const double *mu, int nmu, ac_bound *b);
/* Dropout (budget_dropout.c, docs/numerics.md §13.2): an upper bound of 1 / (1 - p) (1 without dropout),
 * the factor of the underflow floors; and δ, the relative error of a kernel's 1 / (1 - p) (0 without):
 * ac_budget_elem adds δ R and multiplies W_terms by 1 + δ. */
double ac_budget_drop_r(const ac_problem *p);
double ac_budget_drop_delta(const ac_precision *c, const ac_problem *p);
/* LSE budget of a row, in binary32. */
void ac_budget_lse(const ac_precision *c, const ac_problem *p, const ac_oracle_row *row, ac_bound *b);

#endif
