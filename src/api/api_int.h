/* api_int.h: what the public handles of libattncheck (attncheck.h) hold. */
#ifndef AC_API_INT_H
#define AC_API_INT_H
#include "attncheck.h"
#include "casefile.h"
#include "grad_judge.h"
#include "judge_args.h"
#include "oracle.h"

#define AC_API_MAX_VALUES 64

struct attncheck_ctx {
  ac_judge_args a;               /* the shared judging options, as the command parses them */
  char *vals[AC_API_MAX_VALUES]; /* copies of the option values a points into */
  int nvals;
  char *name, *casename, *repro; /* labels of the verdict line */
  char err[512];
};

struct attncheck_case {
  ac_case c;
  int refs; /* the caller's handle and each result judged on it */
  int has_oracle;
  char oracle_rows[256]; /* the rows and seed the oracle was computed for */
  uint64_t oracle_seed;
  ac_oracle_result orr;
};

struct attncheck_result {
  attncheck_case *cs; /* the case (one reference) */
  int grad;           /* a backward judgement */
  attncheck_summary s;
  char *line, *detail, *json;
  void *o; /* the judged outputs, dense as the case stores them */
  float *lse;
  ac_grad_run_result run; /* the judged gradients (grad) */
};

/* A context holding the options a command parsed (their values must outlive it). */
attncheck_ctx *ac_api_ctx_from_args(const ac_judge_args *a);
/* Dense [B][H][T][D] strides (the case's storage) of tensor x ('q', 'k', 'v', 'o') of c. */
void ac_api_dense_strides(const ac_case *c, char x, int64_t st[4]);
/* Sets ctx's error (the message of e, or the formatted one) and returns -1. */
int ac_api_fail(attncheck_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Builds the case of d (api_case.c). */
int ac_api_case_build(const attncheck_case_desc *d, ac_case *c, ac_err *e);
/* The oracle of cs for ctx's rows (cached in cs). */
int ac_api_oracle(attncheck_ctx *ctx, attncheck_case *cs, ac_err *e);
/* Gathers a [B][H][T][D] tensor (B: the case's batch, 1 for a layout) through strides s into
 * dense (api_case.c). */
void ac_api_gather(const ac_case *c, ac_dtype t, const void *src, int64_t H, int64_t T, int64_t D, const int64_t s[4],
                   void *dense);
/* Tensor x ('q', 'k', 'v', or 'o' for o and dO) of the case's shape from ABI pointers and strides st
 * (all zero: those the case's problem gives a kernel) into dense. */
void ac_api_gather_qkv(const ac_case *c, char x, ac_dtype t, const void *src, const int64_t st[4], void *dense);
void ac_api_case_unref(attncheck_case *cs);
attncheck_result *ac_api_result_new(attncheck_case *cs);

#endif
