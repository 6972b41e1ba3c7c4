/* dout.h: the upstream gradient dO of a case (member "do", docs/backward.md): patterns that
 * `gen --grad` and the backward checks draw it from. */
#ifndef AC_DOUT_H
#define AC_DOUT_H
#include "casefile.h"

/* Fills c->dout (dense [B,H,tq,dv] in o's dtype, rounded to nearest even, saturating) from
 * stream 13 of seed with one pattern:
 *   normal[:SIGMA]  N(0, SIGMA^2) (default 1);
 *   zero-rows       normal, with every other query row (r = (b*H + h)*tq + i odd) exactly zero;
 *   huge            normal times 2^(emax/2) of o's dtype (large, still finite products dO·V);
 *   tiny            normal times 2^(emin/2) of o's dtype (small, still normal in binary32);
 *   zeros           every element +0;
 *   cancel          per head, normal with its components along V_j - V_0 removed, plus a multiple of V_0
 *                   without them:
 *                   dO_i·V_j is nearly equal over the keys (all of them when tk <= dv), so
 *                   dP_j - D cancels and dS is tiny against dP.
 * A varlen case gets the carrier's dO [1,H,total_q,dv] (rows are packed tokens; cancel works per
 * sequence over its own keys). -1 with a message for an unknown pattern or a paged case. */
int ac_dout_generate(ac_case *c, const char *pattern, uint64_t seed, ac_err *e);
/* The pattern names, for usage text and tests: NULL-terminated. */
const char *const *ac_dout_patterns(void);

#endif
