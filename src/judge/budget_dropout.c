/* budget_dropout.c: what dropout adds to a class's budgets (docs/numerics.md §13.2, docs/backward.md §8).
 *
 * A correct kernel forms o'_k, plain attention over the row's values V'_j = m_j V_j (the mask is 0
 * or 1: its products are exact), within the class's bound W' of o' (the terms of §7 over V'), and
 * multiplies by its own r' ~ r = 1/(1 - p): FlashAttention keeps fl(1 - p), rp = fl(1 / keep) and
 * multiplies rp into the normalization, fl(rp / l) or fl(fl(acc / l) rp), in the softmax format of
 * unit u: r' = r (1 + b)(1 + c) / (1 + a), |a|, |b|, |c| <= u, so |r' - r| <= δ r,
 *   δ = (1 + u)^2 / (1 - u) - 1.
 * A kernel that multiplies r' into P (or V) instead rounds each term once more: the same δ per term.
 * Either way, with the oracle's terms of the values V'_j / q (oracle/dropout.c, all linear in V) and
 * its underflow floors times r,
 *   |o_k - o| <= (1 + δ) r W' + δ Σ_j A_j |V'_j| r = (1 + δ) W_terms + δ R,
 * R the oracle's (scaled) Σ A_j |V_j|; the output's own rounding stays in the fixed part. δ R is
 * charged in E too (a rounding common to every key has no typical estimate). */
#include "config.h"
#include "budget.h"
#include <math.h>
#include "dropout.h"

double ac_budget_drop_r(const ac_problem *p)
{
  return (p->f.used & AC_FEAT_DROPOUT) ? ac_dropout_inv_keep_up(p->f.dropout_p) : 1.0;
}

double ac_budget_drop_delta(const ac_precision *c, const ac_problem *p)
{
  if (!(p->f.used & AC_FEAT_DROPOUT)) return 0;
  int sm = c->parts.v[AC_PART_SM];
  double u = ldexp(1.0, -ac_dtype_get(sm == AC_F64 ? AC_F64 : AC_F32)->prec);
  return (1 + u) * (1 + u) / (1 - u) - 1;
}
