/* grad_judge.h: judging a kernel's backward (ABI 3 run_backward) against the exact backward
 * oracle (oracle/grad.h) with the budgets of budget_grad.h (docs/backward.md). */
#ifndef AC_GRAD_JUDGE_H
#define AC_GRAD_JUDGE_H
#include "budget_grad.h"
#include "grad.h"
#include "harness.h"
#include "judge.h"
#include <stdio.h>

/* One gradient tensor's judgement over its selected rows (dQ) or columns (dK, dV). */
typedef struct {
  int64_t checked;    /* elements compared */
  int64_t failed;     /* err > W, a non-finite value where a finite one is due, a finite value where
                         the gradient is undefined, or an element never written */
  int64_t undefined;  /* elements whose gradient is undefined (NaN or ±inf accepted) */
  int64_t unwritten;  /* elements still holding the pre-fill NaN (all of the tensor, not only selected) */
  int64_t unresolved; /* selected elements the exact backward could not decide: not judged (an oracle
                         error, ERROR, exit 3), never compared with the oracle's last approximation */
  double worst;       /* max err/W (inf for a non-finite or misplaced value); -1 when nothing compared */
  double worst_e;     /* err/E at that element */
  double max_e;       /* max err/E over the compared elements with a defined gradient (0 when none) */
  double max_kcrit;   /* max (err - ½ ulp - oracle error) / (margin × E terms): the kappa at which the
                         tensor turns SUSPECT, as the forward's kcrit (bench/calibrate --grad) */
  int64_t worst_x, worst_t;  /* its row or column and element */
  double got, want, W, E;
  int64_t seq, head, idx;    /* a varlen case: the worst element's sequence, (kv) head and query or key
                                within the sequence; seq -1 otherwise */
} ac_grad_tjudge;

typedef struct {
  ac_grad_tjudge t[4];   /* dq, dk, dv, and dσ ("dsink", one element per head) when nt is 4 */
  int nt;                /* 3, or 4 when the case has sinks and dσ has a budget (dense cases) */
  int64_t failed;        /* over the nt tensors */
  int64_t unresolved;    /* over the nt tensors */
} ac_grad_judgement;

/* The inputs the harness hands a backward kernel: O and LSE of the exact forward oracle
 * (every row), O correctly rounded to o's dtype, LSE to binary32. Freed by the caller. */
int ac_grad_forward_inputs(const ac_case *c, void **o, float **lse, ac_err *e);
/* The same with the LSE of convention alibi_lse (AC_ALIBI_LSE_ABI, _FA2: docs/variants.md "ALiBi and
 * the LSE"): what a kernel of that convention computes in its forward and reads in its backward. */
int ac_grad_forward_inputs_as(const ac_case *c, int alibi_lse, void **o, float **lse, ac_err *e);
/* Compares run (status OK) against ex with the budgets bg (W, E as budget_grad.h, times
 * AC_BUDGET_MARGIN, plus ½ ulp of the dtype at |exact| + W and the oracle's error). */
void ac_grad_judge(const ac_grad_budget *bg, const ac_grad_result *ex, const ac_grad_run_result *run, ac_grad_judgement *j);

/* The exact backward's options of a judgement under jo: its rows and columns (--rows), and its
 * threads (--threads; 0: every core) for the exact backward and the budgets. */
void ac_grad_opts_for_judge(ac_grad_opts *go, const ac_judge_opts *jo);
/* Everything for one case and kernel: the forward inputs, the exact backward (go: rows, cols,
 * threads; the case dtype alone is rounded into, whatever go->formats asks),
 * the budgets of the class (precision override spec or NULL: the kernel's class), the run and
 * the judgement. 0 with run->status set (the judgement only for OK); -1 with a message when the
 * case cannot be judged (no dO, the exact backward refuses it). */
int ac_grad_check(const ac_kernel *k, const ac_case *c, const char *precision, const ac_grad_opts *go,
                  const ac_run_opts *ro, ac_grad_run_result *run, ac_grad_judgement *j, const ac_precision **cls,
                  ac_err *e);
/* Gradients produced elsewhere (run: status OK, g[] dense in the case dtype; attncheck compare
 * --grad) against the exact backward of c with the budgets of cls: the exact backward (go), the
 * budgets and ac_grad_judge. -1 with a message when c has no dO or the exact backward refuses it. */
int ac_grad_judge_given(const ac_case *c, const ac_precision *cls, const ac_grad_opts *go, const ac_grad_run_result *run,
                        ac_grad_judgement *j, ac_err *e);
/* The same for gradients a kernel computed from the LSE of convention alibi_lse (AC_ALIBI_LSE_FA2:
 * FlashAttention-2's causal ALiBi LSE, docs/variants.md), whose budget charges that LSE's rounding. */
int ac_grad_judge_given_as(const ac_case *c, const ac_precision *cls, int alibi_lse, const ac_grad_opts *go,
                           const ac_grad_run_result *run, ac_grad_judgement *j, ac_err *e);
/* PASS (every element within W, guards intact), FAIL (an element beyond W or misplaced, a guard,
 * an unwritten element, a kernel error, crash or timeout), SKIP (unsupported), ERROR (the harness,
 * or an element the exact backward left unresolved and no failure). */
const char *ac_grad_status(const ac_grad_run_result *run, const ac_grad_judgement *j);
/* "STATUS KERNEL CASE grad dq err/W=.. bad=F/N dk .. dv .. DTYPE budget=CLASS" (grad_report.c). */
void ac_grad_line(FILE *f, const char *kernel, const char *cs, const ac_grad_run_result *run, const ac_grad_judgement *j,
                  const ac_precision *cls, ac_dtype dt);
/* The worst element of each tensor, guard and unwritten messages, the reproducer (NULL: none). */
void ac_grad_detail(FILE *f, const ac_grad_run_result *run, const ac_grad_judgement *j, const char *repro);
/* One JSON object: mode "grad", status, per tensor checked/failed/undefined/unwritten, err/W, err/E, worst. */
void ac_grad_json(FILE *f, const char *kernel, const char *cs, const ac_grad_run_result *run, const ac_grad_judgement *j,
                  const ac_precision *cls, ac_dtype dt, const char *repro);
/* "dq", "dk", "dv". */
const char *ac_grad_tensor_name(int t);

#endif
