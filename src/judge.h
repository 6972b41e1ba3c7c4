/* judge.h: one case through the whole pipeline: the oracle (cached by case hash), the
 * kernel in the harness (optionally twice, for NONDETERMINISTIC), and the comparison. */
#ifndef AC_JUDGE_H
#define AC_JUDGE_H
#include "compare.h"
#include "harness.h"
#include "oracle.h"

typedef struct {
  ac_compare_opts cmp;             /* cmp.prec is resolved per kernel from precision_override */
  const char *precision_override;  /* --precision */
  ac_run_opts run;
  int repeat;                      /* run twice and compare bit for bit */
  const char *rows;                /* oracle row selection (NULL: all rows) */
  uint64_t rows_seed;
  const char *cache_dir;           /* NULL: no cache */
  int oracle_threads;
} ac_judge_opts;

void ac_judge_opts_init(ac_judge_opts *o);
/* The oracle options every command uses (so that the cache is shared). */
void ac_judge_oracle_opts(const ac_judge_opts *o, ac_oracle_opts *oo);
/* 0 when --rows (o->rows) is a valid row selection for c: a bad spec or a row beyond the case
 * is bad input, refused before anything runs. -1 with a one-line message otherwise. */
int ac_judge_rows_check(const ac_case *c, const ac_judge_opts *o, ac_err *e);
/* Oracle result for c, from the cache when present (stored after a miss). */
int ac_judge_oracle(const ac_case *c, const ac_judge_opts *o, ac_oracle_result *r, ac_err *e);
/* Judge kernel k on c against r. Fills rep (verdict kinds included); -1 only for tool errors
 * (rep then holds ERROR). */
int ac_judge_kernel(const ac_kernel *k, const ac_case *c, const ac_oracle_result *r, const ac_judge_opts *o,
                    ac_report *rep, ac_err *e);
/* Baseline budget: runs the naive kernel of the case dtype and returns its tensor-wide max error. */
int ac_judge_baseline(const ac_case *c, const ac_oracle_result *r, const ac_judge_opts *o, double *maxerr, ac_err *e);
/* Resolve a kernel's precision class (--precision overrides the declared one). */
int ac_judge_precision(const ac_kernel *k, const ac_judge_opts *o, ac_dtype t, const ac_precision **out, ac_err *e);

#endif
