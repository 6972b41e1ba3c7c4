/* explain_variants.h: the stages of one row of a case with attention variants (explain). */
#ifndef AC_EXPLAIN_VARIANTS_H
#define AC_EXPLAIN_VARIANTS_H
#include "casefile.h"
#include "oracle.h"

/* Prints the stages of row (b, h, i) of c (p.f.used != 0) beside the oracle's result r for
 * that row (in r's formats: the output dtype included); returns 0, or 3 when the oracle left
 * an element or the LSE unresolved. MPFR's exponent range is the caller's (extended). */
int ac_explain_variants(const ac_case *c, int64_t b, int64_t h, int64_t i, const ac_oracle_result *r);

#endif
