/* explain_grad.h: the backward of one query row (explain --grad; docs/backward.md). */
#ifndef AC_EXPLAIN_GRAD_H
#define AC_EXPLAIN_GRAD_H
#include "casefile.h"

/* Prints, for row (b, h, i) of c (with dO): per visible key the weight P_j, dP_j = dO_i·V_j,
 * dS_j = P_j (dP_j - D) (binary64, for reading) and D; then dQ_i and, per visible key, dK_j
 * and dV_j of kv head kvh exact (the backward oracle: binary64 value, error bound, the case
 * dtype's correctly rounded bits). dK_j and dV_j sum every row of the group, not this row
 * alone. Returns 0, 2 (the case cannot be explained: no dO, a refused variant) or 3
 * (an element the oracle left unresolved). */
int ac_explain_grad(const ac_case *c, const char *path, int64_t b, int64_t h, int64_t i);

#endif
