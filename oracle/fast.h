/* fast.h: the certified binary64 first pass of the oracle (fast.c, fastmpfr.c, fastdd.c, fastexp.c,
 * fastscores.c, fastdecode.c).
 * Internal to oracle/ and its tests. */
#ifndef AC_ORACLE_FAST_H
#define AC_ORACLE_FAST_H
#include <math.h>
#include "oracle_int.h"

/* exp with a proven bound: |ac_fx_exp(t) - e^t| <= AC_FX_EPS e^t for t in [AC_FX_TMIN, 0]. */
#define AC_FX_EPS 0x1p-50
#define AC_FX_TMIN (-700.0)
double ac_fx_exp(double t);
/* out[j] = ac_fx_exp(t[j]) for t[j] in [-708, 0], 0 below (vectorized). */
void ac_fx_exp_array(const double *t, double *out, int64_t n);
extern const double ac_fx_ln2hi, ac_fx_ln2lo;
const double *ac_fx_exp_coef(void);   /* the 14 Taylor coefficients, for the unit test */
/* e^t for t = th + tl in [AC_FX_TMIN, 0] (|tl| at most half an ulp of th) as a double-word hi + *lo
 * (fastdd.c): |hi + lo - e^t| <= AC_DD_EXP_EPS (hi + lo) + 2^-1073. */
#define AC_DD_EXP_EPS 0x1p-88
double ac_dd_exp(double th, double tl, double *lo);

/* The whole row (elements, LSE, budget terms) from the binary64 pass, binary64 rounding (and
 * what that pass left) from the double-double pass, elements neither decides through the MPFR
 * levels. Needs scores and groups. oracle.c chooses this path once per case (not under
 * opts->no_fast); returns 1 without touching anything for a row the pass does not apply to
 * (fp64 inputs with a value of q, K or V outside binary32's exponent range), else 0. */
int ac_or_fast_row(ac_or_ws *w, ac_oracle_row *row, ac_oracle_elem *el, uint64_t **obits, int64_t slot,
                   ac_or_stats *st, const double *mu, int nmu);

/* fastdd.c: the double-double pass over the columns with pend[t] != 0: decides binary64 (and
 * any other format left) where its proven bound allows, clearing the decided bits of pend and
 * setting el[t].o/o_err; needs scores and groups (fast.c calls it after the binary64 pass). */
void ac_or_fastdd_elems(ac_or_ws *w, ac_oracle_elem *el, uint64_t **obits, int64_t slot, uint32_t *pend);

/* fastmpfr.c: the MPFR levels (as in ziv.c) for the columns with pend[t] != 0 after the
 * binary64 and double-double passes: decides them (or marks them unresolved at the cap),
 * clearing pend; counts in st. */
void ac_or_fast_slow_elems(ac_or_ws *w, ac_oracle_elem *el, uint64_t **obits, int64_t slot, ac_or_stats *st,
                           uint32_t *pend);
/* fastmpfr.c: the row's LSE = m + log1p(L - 1) (row->lse*, lse_how), from the binary64
 * enclosure [Lm1 - eLm1, Lm1 + eLm1] of L - 1 when Lok (eL < 0.25), else (or when that does not
 * decide) through the MPFR levels; returns m in binary64 (m's lower end rounded to nearest). */
double ac_or_fast_lse(ac_or_ws *w, ac_oracle_row *row, ac_or_stats *st, int Lok, double Lm1, double eLm1);

/* 1 when the binary64 pass applies to every row of the case (formats: the result's): not for
 * --lse-f64, fp64 inputs with a value of q, K or V outside binary32's exponent range, or an
 * extreme scale. */
int ac_or_fast_case_applies(const ac_case *cs, const ac_oracle_opts *o, uint32_t formats);
/* 1 when the head's finite nonzero K and V values lie in binary32's exponent range (the pass's
 * condition on a row of fp64 or quantized inputs, with ac_or_fast_in_range for each q value). */
int ac_or_fast_head_in_range(const ac_or_head *hd, int64_t dv);
/* 1 when M 2^e (M odd or 0) is 0 or has its bits within 2^-149 .. 2^127. */
static inline int ac_or_fast_in_range(int64_t m, int32_t e)
{
  return !m || (e >= -149 && e + ac_or_bitlen((uint64_t)(m < 0 ? -(uint64_t)m : (uint64_t)m)) - 1 <= 127);
}
/* Decodes a head like ac_or_head_decode (identical fields, except vabs = NULL when the pass
 * applies to every row of the head: only ziv.c's level 0 reads it), faster for the narrow dtypes.
 * A case of quantized tensors (binary64 values) keeps vabs when a value of the head's K or V, or
 * of a Q row that reads the head, leaves binary32's exponent range (those rows take ziv.c's
 * levels). */
void ac_or_fast_head_decode(ac_or_head *hd, const ac_case *cs, int64_t b, int64_t kvh, const ac_oracle_opts *o,
                            uint32_t formats);

/* fastvar.c: 1 when the scores are plain c z (no variant scores, or FOLD folded into z'). */
int ac_or_var_plain(const ac_or_ws *w);
/* fastvar.c: variant rows (LIN, unfolded FOLD, CAP): t_g = s_g - s_top in binary64 (clamped to <= 0) and
 * te_g >= |t_g - t*_g| per group from c_d and eps_t (fast.c); 1 when a bound is too large
 * for the pass (the row takes the MPFR levels), else 0. */
int ac_or_fast_var_t(const ac_or_ws *w, double cd, double eps_t, double *t, double *te);

/* Exact scores like ac_or_row_scores, faster for the narrow dtypes (same layout in w). */
void ac_or_fast_scores(ac_or_ws *w);
/* Groups of equal score like ac_or_groups (identical ord, gst, gof, ng), without indirect
 * comparisons when the scores fit two limbs. */
void ac_or_fast_groups(ac_or_ws *w);

#endif
