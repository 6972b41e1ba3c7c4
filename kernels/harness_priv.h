/* harness_priv.h: the pieces of a harness run shared by the one-shot child (harness.c)
 * and the persistent worker (worker.c). Internal to kernels/. */
#ifndef AC_HARNESS_PRIV_H
#define AC_HARNESS_PRIV_H
#include "child.h"
#include "harness.h"

#define AC_MIN_GUARD 256
#define AC_HX_IN_SUPPORTS 1
#define AC_HX_IN_RUN 2

/* The result area: this head, then o (dense, case dtype), lse (floats), unwritten flags. */
typedef struct {
  int32_t done, status, guard_ok, stage;   /* stage: AC_HX_IN_SUPPORTS / AC_HX_IN_RUN while the kernel's code runs */
  int64_t n_unwritten, n_lse_unwritten, n_guard_nan;
  double kernel_ms;
  char msg[512];
  char guard_msg[256];
} ac_hx_head;

typedef struct {
  size_t o_off, lse_off, flags_off, total;
} ac_hx_layout;

typedef struct {
  const ac_kernel *k;
  const ac_case *c;
  const ac_run_opts *o;
  attncheck_problem ap;
  ac_counts cn;
  ac_hx_layout l;
  unsigned char *area;   /* l.total bytes, zeroed before the body runs */
} ac_hx_ctx;

/* Validates the case and fills everything but area. -1 with message. */
int ac_hx_prepare(ac_hx_ctx *x, const ac_kernel *k, const ac_case *c, const ac_run_opts *o, ac_err *e);
/* The run itself (in the child): guarded buffers, supports, run, checks; writes the area. Returns 0. */
int ac_hx_body(void *ctx);
/* What a child does around ac_hx_body: the kernel's stdout joins stderr (attncheck's stdout
 * may be a TAP or JSON stream), and what it printed is flushed there afterwards. */
void ac_hx_child_stdout(void);
int ac_hx_body_child(void *ctx);
/* Turns the outcome of the process and the area into r. */
void ac_hx_collect(const ac_hx_ctx *x, const ac_child_outcome *oc, ac_run_result *r);
/* One case in a fresh child (or in process): ac_harness_run without the worker. */
int ac_hx_run_oneshot(const ac_kernel *k, const ac_case *c, const ac_run_opts *o, ac_run_result *r, ac_err *e);
/* Asks the kernel's supports(p) in the worker (started if need be) within timeout_s. 0 when
 * asked: oc->exited = 1 with *yes and why filled when it answered; otherwise oc says how the
 * worker ended (timed_out, sig, or code; it is reaped and the next use starts a fresh one).
 * -1 when the worker cannot be asked (busy in another thread, nothing to ask, a CUDA kernel
 * without a CUDA build, no worker could be started). */
int ac_worker_supports(ac_worker *w, const attncheck_problem *p, double timeout_s, int *yes, char *why, size_t n,
                       ac_child_outcome *oc);
/* One run of a case: in the kernel's persistent worker when it has one (not for layout cases,
 * whose arrays the worker's memory file does not carry), else a one-shot child. */
int ac_hx_run_once(const ac_kernel *k, const ac_case *c, const ac_run_opts *opts, ac_run_result *r, ac_err *e);
/* Layout cases (harness_layout.c): a copy of the case's q, k or v with the memory that the
 * run's layout_fill names filled with NaN (payloads that tell the token), or NULL to hand over
 * the case's own values. */
void *ac_hx_layout_data(const ac_case *c, char tensor, int fill);
/* The same as a whole case for exec kernels: 1 with out a copy of c whose q, k, v hold the fill,
 * 0 when c needs none (a dense case, or nothing to fill). */
int ac_hx_layout_filled(const ac_case *c, int fill, ac_case *out);
/* After the judged run r of a layout case: the isolation runs (the finite run only when a row
 * holds a NaN), and r->n_oos and r->oos_msg for every row that holds a NaN when memory its
 * sequence does not own is NaN and none when that memory is finite. */
void ac_hx_layout_isolate(const ac_kernel *k, const ac_case *c, const ac_run_opts *opts, ac_run_result *r);

/* Resets r for a case of dtype t (guard_ok = 1). */
void ac_hx_result_reset(ac_run_result *r, ac_dtype t);

#endif
