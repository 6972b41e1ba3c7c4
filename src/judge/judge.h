/* judge.h: one case through the whole pipeline: the oracle (cached by case hash), the
 * kernel in the harness (optionally twice, for NONDETERMINISTIC), and the comparison. */
#ifndef AC_JUDGE_H
#define AC_JUDGE_H
#include "compare.h"
#include "harness.h"
#include "oracle.h"

/* Classes one run judges under (repeated --precision): one report per class for each case. */
#define AC_JUDGE_MAX_CLASSES 8

typedef struct {
  ac_compare_opts cmp;             /* cmp.prec is resolved per kernel from precision_override */
  const char *precision_override;  /* --precision (the first when it is repeated) */
  const char *precisions[AC_JUDGE_MAX_CLASSES]; /* every --precision, in order */
  int nprecisions;
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
/* -1 with a message when the oracle's memory for c under o exceeds the memory cap (bad input, as
 * in `oracle`: exit 2). */
int ac_judge_mem_check(const ac_case *c, const ac_judge_opts *o, ac_err *e);
/* Oracle result for c, from the cache when present (stored after a miss). */
int ac_judge_oracle(const ac_case *c, const ac_judge_opts *o, ac_oracle_result *r, ac_err *e);
/* Where a judgement's oracle comes from: r when set, else get() once a run produced outputs
 * (an oracle is not computed for a run that crashed or was refused). */
typedef struct {
  const ac_oracle_result *r;
  int (*get)(void *ctx, const ac_case *c, ac_oracle_result *out, ac_err *e);
  void *ctx;
  /* without get: the options of ac_judge_oracle for the oracle of a dropout case judged against the
   * kernel's own mask (r holds only for the case's stored mask, when the run returned that one) */
  const ac_judge_opts *opts;
} ac_judge_oracle_src;

/* What a judgement leaves for its caller; ac_judged_free. */
typedef struct {
  ac_run_result run;               /* the first run */
  const ac_oracle_result *oracle;  /* the oracle used (NULL: none was needed) */
  ac_oracle_result own;            /* the one get() produced */
  int has_own;
  double kernel_s, oracle_s;       /* wall time of the first run and of get() */
  const ac_precision *prec;        /* the class the case was judged under (the run's own, ABI 5 precision_of) */
  ac_case dcase;                   /* dropout: the case with the run's keep-mask, the one judged (has_dcase) */
  int has_dcase;
} ac_judged;

void ac_judged_free(ac_judged *j);
/* The case j judged: c, or for dropout c with the kernel's keep-mask (what a reproducer holds). */
const ac_case *ac_judged_case(const ac_judged *j, const ac_case *c);
/* judge_dropout.c (docs/dropout.md): for a dropout case whose run finished, out = a copy of c holding the
 * run's mask (1); 0 for a case without dropout or a run that did not finish; -1 when the run's mask is
 * unusable (missing, or an element neither 0 nor 1: UNWRITTEN, nothing to judge o against). */
int ac_judge_dropout_case(const ac_case *c, const ac_run_result *run, ac_case *out, ac_err *e);
/* 1 when dropout cases c and dc hold the same mask (an oracle of c holds for dc). */
int ac_judge_dropout_same(const ac_case *c, const ac_case *dc);
/* The backward of a dropout case takes the mask k's forward draws (docs/backward.md §8): runs the forward
 * of k on c and returns 1 with out a copy of c holding its mask; 0 when the forward did not finish or
 * left its mask unwritten (grun's status and message then say so); -1 when the harness could not run. */
int ac_judge_dropout_forward(const ac_kernel *k, const ac_case *c, const ac_run_opts *ro, ac_case *out,
                             ac_grad_run_result *grun, ac_err *e);
/* One case through the harness, the oracle and the comparison, under co (its class resolved)
 * into rep (initialized by the caller), or under the class the run names for itself (ABI 5
 * precision_of, an exec worker's answer: rep's class is then that one) unless co->prec_override
 * names the case's dtype: the first run is judged, then up to `repeat` more runs
 * are compared with it bit for bit until one differs (NONDETERMINISTIC) or does not complete
 * (judged for its status; a run the harness cannot make at all is ERROR). -1 when the oracle
 * or the comparison fails (rep then holds ERROR). out is filled in every case. */
int ac_judge_case(const ac_kernel *k, const ac_case *c, const ac_compare_opts *co, const ac_run_opts *ro, int repeat,
                  const ac_judge_oracle_src *src, ac_report *rep, ac_judged *out, ac_err *e);
/* The same under n classes at once (cos[n], reps[n]): the kernel runs once (and the repeats once),
 * and each class judges the same outputs. -1 when the oracle or a comparison fails. */
int ac_judge_case_n(const ac_kernel *k, const ac_case *c, const ac_compare_opts *cos, int n, const ac_run_opts *ro,
                    int repeat, const ac_judge_oracle_src *src, ac_report *reps, ac_judged *out, ac_err *e);
/* Judge kernel k on c against r. Fills rep (verdict kinds included); -1 only for tool errors
 * (rep then holds ERROR). */
int ac_judge_kernel(const ac_kernel *k, const ac_case *c, const ac_oracle_result *r, const ac_judge_opts *o,
                    ac_report *rep, ac_err *e);
/* Baseline budget: runs the naive kernel of the case dtype and returns its tensor-wide max error. */
int ac_judge_baseline(const ac_case *c, const ac_oracle_result *r, const ac_judge_opts *o, double *maxerr, ac_err *e);
/* The kernels that a command's --kernel options name, in option order; one spec may name several
 * (a plugin's kernels): spec_of[i] is the option kernel i came from. */
#define AC_JUDGE_MAX_SPECS 128   /* the --kernel options of one command (cmd_suite.c names the number) */
typedef struct {
  const char *spec[AC_JUDGE_MAX_SPECS];
  int nspec;
  ac_kernel **k;
  int n;
  int *spec_of;
} ac_judge_kernels;
/* Adds a spec (ks zeroed before the first); -1 when AC_JUDGE_MAX_SPECS are there already. */
int ac_judge_kernels_add(ac_judge_kernels *ks, const char *spec);
/* Resolves the specs: -1 with e set at the first that does not resolve (no kernel is left to
 * free); else 0 and ac_judge_kernels_free after use. */
int ac_judge_kernels_resolve(ac_judge_kernels *ks, ac_err *e);
void ac_judge_kernels_free(ac_judge_kernels *ks);
/* The oracle of one case, computed for the first kernel that needs it. */
typedef struct {
  int state;            /* -1 not computed yet, 0 failed (message in e), 1 computed (in r) */
  ac_oracle_result r;
  ac_err e;
} ac_judge_lazy_oracle;
void ac_judge_lazy_init(ac_judge_lazy_oracle *lo);
void ac_judge_lazy_free(ac_judge_lazy_oracle *lo);
/* Kernel k on c into rep (which it initializes): ERROR when k's class does not resolve, SKIP when k
 * does not take c, ERROR when the oracle of c failed, else judged against it. */
void ac_judge_one(const ac_kernel *k, const ac_case *c, const ac_judge_opts *o, ac_judge_lazy_oracle *lo,
                  ac_report *rep);
/* What judging k on a case of dtype t takes from k's declarations into co: the class
 * (ac_judge_precision_of; co->prec_override and co->prec_source set) and, unless --empty-rows was
 * given (co->empty_set), the empty-row convention it declares (ABI 5, or a worker's "empty_rows" and
 * "empty_lse"). -1 when the class does not resolve. */
int ac_judge_resolve_opts(const ac_kernel *k, const char *override, double timeout_s, ac_dtype t, ac_compare_opts *co,
                          ac_err *e);
/* The classes a run judges under: o->nprecisions (every --precision), or 1 (the kernel's class, or
 * --precision's when given once). */
int ac_judge_nclasses(const ac_judge_opts *o);
/* ac_judge_one under each class of the run (reps[ac_judge_nclasses(o)]): the kernel runs once per
 * case; each class is resolved for the case's dtype (a class per case, not per run). */
void ac_judge_one_classes(const ac_kernel *k, const ac_case *c, const ac_judge_opts *o, ac_judge_lazy_oracle *lo,
                          ac_report *reps);
/* Resolve a kernel's precision class (--precision overrides the declared one). */
int ac_judge_precision(const ac_kernel *k, const ac_judge_opts *o, ac_dtype t, const ac_precision **out, ac_err *e);
/* The same from the --precision override and the run's time limit (exec workers declare theirs). */
int ac_judge_precision_of(const ac_kernel *k, const char *override, double timeout_s, ac_dtype t,
                          const ac_precision **out, ac_err *e);

#endif
