/* tgrad_util.h: helpers of the backward oracle's tests (tests/tgrad_util.c). */
#ifndef AC_TGRAD_UTIL_H
#define AC_TGRAD_UTIL_H
#include <mpfr.h>
#include "casefile.h"
#include "grad.h"
#include "rng.h"

#define GT_PREC 4000   /* the brute force's precision (plus what the score gaps cancel) */

/* dO for the case's shape (zero), and one of its elements. */
void *gt_dout_alloc(const ac_problem *p);
void gt_dout_set(const ac_problem *p, void *d, size_t x, double v);
void gt_random_dout(const ac_problem *p, void *d, ac_rng *rng);
/* The oracle with rows and columns (NULL: all); asserts success and 0 unresolved. */
/* gt_run's extended pass takes its finer weights from the start (ac_grad_opts.fine) when set. */
extern int gt_fine;
void gt_run(const ac_case *c, const void *d, const char *rows, const char *cols, ac_grad_result *r);
/* The counts of an adversarial case, for the test log. */
void gt_note(const char *name, const ac_grad_result *r);
/* Every selected element (and dσ) of r against the brute force at prec; returns the ambiguous ones. */
int64_t gt_against_brute(const ac_case *c, const void *d, const ac_grad_result *r, mpfr_prec_t prec);
/* A 2-head, 1-kv-head f32 case tq x tk, dk 3, dv 2 of normal values, and a random dO. */
void *gt_adv_case(ac_case *c, ac_mask m, int64_t tq, int64_t tk, ac_rng *rng);
/* A case and dO from explicit values (batch 1). */
void *gt_int_case(ac_case *c, ac_dtype dt, ac_mask m, int64_t H, int64_t KVH, int64_t tq, int64_t tk, int64_t dk,
                  int64_t dv, const double *q, const double *k, const double *v, const double *dO);
void gt_assert_exact_zero(const ac_grad_tensor *T, int64_t x, int64_t t);
/* gt_assert_exact_zero on rows or columns [x0, x1) and elements [0, nt). */
void gt_assert_zero_block(const ac_grad_tensor *T, int64_t x0, int64_t x1, int64_t nt);
/* gt_run on every element, and gt_note of its counts under name. */
void gt_run_noted(const char *name, const ac_case *c, const void *d, ac_grad_result *r);
/* The end of a test case: r against the brute force at prec (0: not compared), then r, d and c freed. */
void gt_brute_free(ac_case *c, void *d, ac_grad_result *r, mpfr_prec_t prec);
/* What gt_random_checked adds up over a run of random cases. */
typedef struct {
  int64_t elems, rounded, ambiguous, sinks;   /* elements (exact + rounded), rounded, ambiguous references, dσ */
} gt_tally;
/* A random dO for c, the oracle on every element, the brute force at GT_PREC; adds into t, frees c. */
void gt_random_checked(ac_case *c, ac_rng *rng, gt_tally *t);
/* c with the attention variants used (every other feature field plain, the bias and boolean mask
 * stored per head or once: mask_h, bias_h; bias_dtype < 0: plain's), their tensors allocated (zero). */
void gt_features(ac_case *c, uint32_t used, int64_t mask_h, int64_t bias_h, int bias_dtype);
/* A boolean mask of c with a key visible 3 times in 4. */
void gt_random_bool_mask(ac_case *c, ac_rng *rng);
/* A stored scale (not the default). */
void gt_set_scale(ac_case *c, double scale);
/* 1 when element t of row/column x of T is undefined (NaN, NaN or ±inf accepted). */
int gt_undefined(const ac_grad_tensor *T, int64_t x, int64_t t);

#endif
