/* owner: exec backend */
/* exec.h: kernels that are external commands ('exec:COMMAND {in} {out}', 'exec-persistent:COMMAND'). */
#ifndef AC_EXEC_H
#define AC_EXEC_H
#include "harness.h"

/* Fill k (kind, name, origin, priv) from an exec: or exec-persistent: spec. -1 with a
 * one-line message when the spec is unusable. */
int ac_exec_resolve(const char *spec, ac_kernel *k, ac_err *e);
/* Run one case through the command; same contract as ac_harness_run. The command's stdout
 * goes to attncheck's stderr; the last line of its stderr is quoted when it fails. Outputs:
 * o must have the case's dtype (numpy descr of the dtype table) and shape [B,H,tq,dv];
 * lse, optional, <f4 or <f8 [B,H,tq] (r->lse stays NULL when the file has none). */
int ac_exec_run(const ac_kernel *k, const ac_case *c, const ac_run_opts *o, ac_run_result *r, ac_err *e);
/* NULL, or why an exec-persistent kernel cannot serve any more (its worker could not be started,
 * or ended AC_EXEC_MAX_DEAD times in a row before answering): every later run is a HARNESS_ERROR. */
const char *ac_exec_unusable(const ac_kernel *k);
/* exec-persistent: start the worker and read its declaration (exec_decl.h) unless that was
 * done; the wait is bounded by timeout_s. Other kernels: nothing. */
void ac_exec_prepare(const ac_kernel *k, double timeout_s);
/* 1 when the worker's declaration (if any has been read) admits p; 0 with why. */
int ac_exec_supports(const ac_kernel *k, const ac_problem *p, char *why, size_t n);
/* exec-persistent after ac_exec_prepare: the attention variants its worker declares (AC_FEAT_...),
 * with ATTNCHECK_CAP_NO_LSE when it declares writes_lse false; 0 for one-shot exec kernels and
 * workers without a declaration (they get no variants). */
uint32_t ac_exec_declared_caps(const ac_kernel *k);
/* The quantized formats an exec-persistent worker declares ("kv_formats", and "q_formats" into
 * *q; 1u << AC_QF_...): 0 without a declaration. */
uint32_t ac_exec_kv_formats(const ac_kernel *k, uint32_t *q);
/* exec-persistent after ac_exec_prepare: the declared "empty_rows" and "empty_lse" (ATTNCHECK_EMPTY_...,
 * ATTNCHECK_EMPTY_LSE_...; 0 when not declared). */
void ac_exec_declared_empty(const ac_kernel *k, int *o, int *lse);
/* exec-persistent after ac_exec_prepare: the worker's declaration (its "env" names and "note"),
 * NULL when it declared nothing usable. */
struct ac_exec_decl_s;
const struct ac_exec_decl_s *ac_exec_declaration(const ac_kernel *k);
/* exec-persistent: the dtypes and masks (bit sets) its worker declares, read as
 * ac_exec_prepare does; the worker is then stopped (a forked process starts its own). 1 when
 * the worker declared itself, 0 otherwise. */
int ac_exec_declared_limits(const ac_kernel *k, double timeout_s, uint32_t *dtypes, uint32_t *masks);
/* Backward (exec_grad.c). 1 when k is an exec-persistent kernel whose worker declares a
 * backward ("backward": true); reads the declaration first (at most timeout_s) when that was
 * not done, and then stops that worker. */
int ac_exec_has_backward(const ac_kernel *k, double timeout_s);
/* The AC_FEAT_ variants the worker's backward takes (its declaration's "backward": true, the declared
 * variants the exact backward takes; or the list it gives); 0 without a declared backward. */
uint32_t ac_exec_backward_caps(const ac_kernel *k);
/* Why the backward of c cannot be handed to k (a one-shot kernel, no declared backward, a variant
 * outside its backward set); NULL when it can or the declaration is not read yet (the run reads it
 * and asks again) or unusable (the run's HARNESS_ERROR). Valid until the next call in the thread. */
const char *ac_exec_backward_refusal(const ac_kernel *k, const ac_case *c);
/* The backward of c on an exec-persistent worker, with the contract of ac_harness_run_backward
 * (o, lse: the forward's values handed to the worker): sends "backward IN OUT" with IN the case
 * plus members o, lse and do, and reads dq, dk, dv (and dsinks with sinks) from OUT; a missing
 * member or one of another dtype or shape is a KERNEL_ERROR. UNSUPPORTED for one-shot kernels,
 * workers that declare no backward and cases outside the declaration. */
int ac_exec_run_backward(const ac_kernel *k, const ac_case *c, const void *o, const float *lse, const ac_run_opts *opts,
                         ac_grad_run_result *r, ac_err *e);
/* exec_spec.c: spec (exec: or exec-persistent:) with the first word of its command made absolute as
 * this process resolves it (a program on PATH, a relative path; not a shell builtin or keyword, an
 * assignment or a word with shell syntax) into out: 1, or 0 when nothing changes or out is too short. */
int ac_exec_spec_resolved(const char *spec, char *out, size_t n);
/* Release what ac_exec_resolve put in k->priv (workers included). */
void ac_exec_free(ac_kernel *k);

/* Case directories (exec_dir.c). A fresh TMPDIR/attncheck-KIND-PID-XXXXXX in dir (n bytes);
 * the first call in a process removes such directories of our user whose PID no longer exists. */
int ac_exec_make_dir(const char *kind, char *dir, size_t n, ac_err *e);
/* Removes dir and the files in it (the backend makes no subdirectories). */
void ac_exec_remove_dir(const char *dir);

#endif
