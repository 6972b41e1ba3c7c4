/* compare.h: judging a kernel's output against the oracle: errors per element (absolute,
 * ulps of the output dtype, err/W, err/E), per-case maxima, NMSE, the worst element, and the
 * verdict kinds that follow (DESIGN.md "Verdicts"). Policies are applied by the caller. */
#ifndef AC_COMPARE_H
#define AC_COMPARE_H
#include <stdint.h>
#include "budget.h"
#include "casefile.h"
#include "harness.h"
#include "oracle.h"
#include "precision.h"
#include "verdict.h"

typedef enum { AC_BUDGET_CLASS = 0, AC_BUDGET_BASELINE = 1, AC_BUDGET_FIXED = 2 } ac_budget_kind;
/* The output of a row with no visible key (docs/numerics.md §5): 0, NaN, not judged, or the mean of V
 * over the row's keys (JAX's and MLX's finite mask value; ac_oracle_mean_v). */
typedef enum { AC_EMPTY_ZERO = 0, AC_EMPTY_NAN = 1, AC_EMPTY_SKIP = 2, AC_EMPTY_MEAN_V = 3 } ac_empty_conv;
/* mean-v: a finite LSE at or below this is a masked-score sentinel's (JAX writes -0.7 FLT_MAX). */
#define AC_EMPTY_LSE_SENTINEL (-0x1p100)

/* κ of SUSPECT, chosen from bench/calibrate (tests/data/calibration.txt). */
#define AC_KAPPA_DEFAULT 1.5

typedef struct {
  const ac_precision *prec;   /* class (NULL: the dtype's default) */
  ac_budget_kind budget;
  double kappa;               /* SUSPECT: err > κ·E_terms + fixed */
  double baseline_k;          /* baseline: k × baseline_err + 2 fp32 ulps of |o| */
  double baseline_err;        /* tensor-wide max error of the naive kernel (set by the caller) */
  double atol, rtol;          /* fixed: atol + rtol·|o| */
  ac_empty_conv empty;
  int empty_set;               /* 1: --empty-rows given (a kernel's declaration does not apply) */
  int empty_lse;               /* the LSE of an empty row: 0 +inf or -inf (NaN too with empty nan); else the one a
                                  kernel declares (ATTNCHECK_EMPTY_LSE_NEG_INF, _POS_INF, _NAN) */
  const char *rows;            /* the oracle's row selection, for the report (NULL: all rows) */
  const char *prec_override;   /* --precision as given: a class the kernel names per problem gives way to it */
  const char *prec_source;     /* where prec came from: "option", "problem", "kernel", "default" (NULL: not said) */
  int alibi_lse;              /* the kernel's LSE convention under causal ALiBi (AC_ALIBI_LSE_ABI, _FA2) */
} ac_compare_opts;

/* The oracle's row and element as a kernel of convention opt->alibi_lse sees them (docs/variants.md
 * "ALiBi and the LSE"): with FlashAttention-2's convention and a row shift s = m_h (i + tk - tq), its
 * LSE is the alternative one (lse_alt*), m is m + s, and the score magnitudes the budgets charge
 * (lse_s, max_abs_s; S' of an element) grow by 2|s| (the kernel's score and its ALiBi term +m_h j each
 * within |s| of the ABI's). The row itself when nothing changes; else *tmp, filled. */
const ac_oracle_row *ac_compare_conv_row(const ac_compare_opts *opt, const ac_oracle_row *rw, ac_oracle_row *tmp);
const ac_oracle_elem *ac_compare_conv_elem(const ac_compare_opts *opt, const ac_oracle_row *rw, const ac_oracle_elem *el,
                                           ac_oracle_elem *tmp);

void ac_compare_opts_init(ac_compare_opts *o);
/* "class", "baseline", "baseline:K", "fixed"; -1 with a message otherwise. */
int ac_budget_parse(const char *s, ac_compare_opts *o, ac_err *e);
/* "class:fp32 kappa=1", "baseline:2x3.1e-07", "fixed:atol=..,rtol=..". */
const char *ac_budget_describe(const ac_compare_opts *o, char *buf, size_t n);
int ac_empty_parse(const char *s, ac_empty_conv *out);
const char *ac_empty_name(ac_empty_conv c);

typedef enum {
  AC_WHY_NONE = 0,
  AC_WHY_VALUE,          /* finite value, judged against the budget */
  AC_WHY_NONFINITE,      /* NaN/inf where the oracle is finite */
  AC_WHY_FINITE,         /* finite where the oracle accepts only non-finite outcomes */
  AC_WHY_WRONG_NONFINITE,/* a non-finite outcome the oracle does not accept (e.g. +inf for NaN) */
  AC_WHY_EMPTY           /* empty row not following the convention */
} ac_why;

typedef struct {
  int valid;
  int is_lse;            /* the worst is an LSE value (d = -1) */
  int fmt1;              /* 1 + the dtype its bits are stored in (o's dtype; 0: the case's dtype) */
  int64_t b, h, i, d;
  double exact;          /* oracle binary64 value */
  uint64_t round_bits;   /* correct rounding in the output dtype (binary32 for LSE) */
  uint64_t kernel_bits;
  double kernel;
  double err, ulps, err_w, err_e;  /* err_w: err / the budget used */
  double W, E;
  ac_why why;
  uint8_t accept;        /* the oracle's accepted outcomes (AC_ACCEPT_...) */
} ac_worst_elem;

typedef struct {
  uint32_t kinds;                 /* bitmask of 1u << ac_verdict_kind */
  ac_budget_kind budget;
  const char *prec_name;
  const char *prec_source;        /* ac_compare_opts.prec_source */
  double kappa;
  char budget_desc[192]; /* a class built from parts is named by its whole string */
  /* elements */
  int64_t n_elems, n_judged, n_fail, n_suspect, n_leak, n_ood, n_unresolved, n_unwritten, n_exact_match;
  int64_t n_within_overflow;      /* inf (e4m3: NaN) from rounding a working value within budget past the format's range */
  int64_t n_nan_weight0;          /* NaN (elements and LSE) where a value was exact and finite but keys of score -inf
                                     (weight 0) may turn it into NaN (AC_ACCEPT_NAN_WEIGHT0): MASKED-LEAK */
  int64_t n_rows_judged, n_ood_rows, n_empty_rows;
  int64_t n_rows_total;           /* rows of the case; n_rows_judged < n_rows_total: a row sample (rows_spec) */
  char rows_spec[64];             /* the row selection ("" = all rows) */
  double max_err, max_ulps, max_err_w, max_err_e;
  double max_suspect;             /* err / (κ·E_terms + fixed): > 1 is SUSPECT */
  double max_kcrit;               /* (err - fixed) / E_terms: the κ at which the worst element turns SUSPECT */
  double nmse;
  ac_worst_elem worst;            /* worst by err/W (non-finite failures first) */
  /* WEAK-CLASS: values within the declared class's bound, or out of its domain only, that the
   * dtype's standard class (std_name) rejects; err/W under each (decl NaN: out of the class's domain) */
  const char *std_name;
  int64_t n_weak, n_weak_ood;
  double weak_max_err, weak_err_w_decl, weak_err_w_std;
  /* LSE */
  int has_lse;
  int64_t lse_judged, lse_fail, lse_suspect;
  double lse_max_err, lse_max_err_w, lse_max_err_e;
  ac_worst_elem lse_worst;
  int64_t empty_lse_pinf, empty_lse_ninf, empty_lse_nan, empty_o_nan, empty_o_zero,
          empty_o_other;   /* elements of empty rows written as neither 0 nor NaN (mean-v: the mean of V) */
  /* dropout (docs/dropout.md): the mask's judged entries and kept ones, and the DROPOUT-MASK tests run */
  int has_dropout;
  int64_t drop_visible, drop_kept;
  int drop_tests, drop_failed;
  double drop_p;
  /* run */
  double kernel_ms;
  char note[512];                 /* crash signal, guard message, OUT-OF-DOMAIN reason, ... */
} ac_report;

void ac_report_init(ac_report *r, const ac_compare_opts *o);
/* The worse of the worst output element and the worst LSE value (by err/W). */
const ac_worst_elem *ac_report_worst(const ac_report *r);
/* Adds a kind with a note (appended to r->note). */
void ac_report_add(ac_report *r, ac_verdict_kind k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Judge dense outputs o [B,H,tq,dv] (case dtype) and lse [B,H,tq] (may be NULL) against the
 * oracle; unwritten (may be NULL) marks elements the kernel never wrote (not judged). */
int ac_compare_outputs(const ac_case *c, const ac_oracle_result *r, const void *o, const float *lse,
                       const uint8_t *unwritten, const ac_compare_opts *opt, ac_report *rep, ac_err *e);
/* Map a harness result (status, guards, unwritten) to verdicts and judge its outputs. */
int ac_compare_run(const ac_case *c, const ac_oracle_result *r, const ac_run_result *run,
                   const ac_compare_opts *opt, ac_report *rep, ac_err *e);
/* Repeat mode: two runs must agree bit for bit, else NONDETERMINISTIC. Returns 1 if they differ. */
int ac_compare_repeat(const ac_case *c, const ac_run_result *a, const ac_run_result *b, ac_report *rep);
/* Tensor-wide maximum |o - exact| over selected rows with finite exact values (baseline budget). */
double ac_compare_max_err(const ac_case *c, const ac_oracle_result *r, const void *o);

/* domain.c. Per row of a case (ac_rowidx order): 1 when Σ_j |V_j| over the keys the row
 * sees (the mask, the window and the boolean mask), which an online softmax's partial sums
 * may reach, exceeds lim in some column; free() it. */
uint8_t *ac_online_sum_beyond(const ac_case *c, double lim);
/* Per row: 1 when the partial sums of ac_online_sum_beyond pass the class's accumulator range
 * (sum_range), 2 (or'ed) when the row's Q, or a key or value it sees, is beyond the format the
 * class rounds that input to (parts q, k, v; q8: a block scale beyond f16); free() it. */
uint8_t *ac_class_rows_beyond(const ac_case *c, const ac_precision *cls);
/* 1 (with the reason in why) when row ridx is out of class c's domain: exact scores or q.k
 * beyond its working (or score storage) range, an exp-argument error bound beyond the exp
 * range, or partial P.V sums or inputs beyond (vbeyond from ac_class_rows_beyond, or
 * ac_online_sum_beyond). */
int ac_row_out_of_domain(const ac_precision *c, const ac_problem *p, const ac_oracle_row *row,
                         const ac_oracle_elem *els, const uint8_t *vbeyond, int64_t ridx, char *why, size_t n);
/* Where a NaN or inf stored at a masked key can reach (MASKED-LEAK): krow[nrows] = 1 when a
 * key the row does not see holds one in K (its score reaches the LSE and every column through the
 * row sum); velem[nrows * dv] = 1 when krow is set or a masked key holds one in that V column
 * (0·NaN, 0·inf in P·V reach that column only). */
void ac_masked_nonfinite(const ac_case *c, uint8_t *krow, uint8_t *velem);

#endif
