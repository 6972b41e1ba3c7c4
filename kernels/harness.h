/* harness.h: kernels under test (built-in, plugin, exec:) and running one case on one
 * in a forked child with a time limit, guarded buffers and NaN pre-filled outputs. */
#ifndef AC_HARNESS_H
#define AC_HARNESS_H
#include <stdint.h>
#include "attncheck_kernel.h"
#include "casefile.h"

typedef enum { AC_KIND_BUILTIN = 0, AC_KIND_PLUGIN = 1, AC_KIND_EXEC = 2, AC_KIND_EXEC_PERSISTENT = 3 } ac_kernel_kind;

typedef struct ac_kernel {
  ac_kernel_kind kind;
  char name[128];
  char origin[512];               /* "builtin", the plugin path, or the exec command */
  const attncheck_kernel *abi;    /* NULL for exec kernels */
  const char *precision;          /* class name declared (NULL: dtype default) */
  int is_mutant;                  /* built-in deliberately wrong kernel */
  int is_testkernel;              /* built-in kernel that exists to prove a verdict kind */
  void *priv;                     /* dl handle, exec worker state */
  struct ac_worker *worker;       /* persistent worker child (set by ac_kernel_resolve; NULL: one-shot only) */
} ac_kernel;

/* The ABI 2 caps a kernel declares (ATTNCHECK_FEAT_... | ATTNCHECK_CAP_NO_LSE): 0 for ABI 1
 * plugins (no features, LSE written) and exec kernels (they declare variants and writes_lse in
 * the handshake instead, exec_decl.h). ac_kernel_supports says no, with the missing feature
 * names, for a problem that uses a feature outside them. */
uint32_t ac_kernel_caps(const ac_kernel *k);
/* What a kernel declares in the form of ac_kernel_caps, exec kernels included: the ABI 2 caps of a
 * native kernel; for an exec-persistent kernel (after ac_kernel_prepare) the variants its worker
 * declares, with ATTNCHECK_CAP_NO_LSE for writes_lse false (ac_exec_declared_caps). */
uint32_t ac_kernel_declared_caps(const ac_kernel *k);
/* The convention k's LSE follows: override when it is not AC_ALIBI_LSE_DECLARED, else its declaration
 * (ATTNCHECK_CAP_ALIBI_LSE_FA2 in caps, "alibi_lse" in an exec worker's declaration, once prepared). */
int ac_kernel_alibi_lse(const ac_kernel *k, int override);

/* Quantized tensors (docs/quantized.md): the formats k reads for k and v (1u << AC_QF_..., src/core/quant.h),
 * and in *q_formats for q: a built-in kernel's table entry (kernels/quant_view.h), an exec-persistent
 * worker's "kv_formats" and "q_formats" (after ac_kernel_prepare), a host plugin's ABI 5 kernel.kv_formats
 * and q_formats (0 for a plugin built before them: struct_size below ATTNCHECK_KERNEL_V5Q_SIZE). */
uint32_t ac_kernel_kv_formats(const ac_kernel *k, uint32_t *q_formats);
/* 1 when k takes quantized cases only (a reference kernel of the formats). */
int ac_kernel_quant_only(const ac_kernel *k);
/* 1 when the kernel takes the scale and a bias in Q's dtype (ATTNCHECK_CAP_PARAMS_Q_DTYPE, an exec
 * worker's "params_dtype": "q"): the fuzzer draws only values that dtype holds. */
int ac_kernel_params_q_dtype(const ac_kernel *k);
/* Why k cannot take p's quantized tensors (or, quant only, a case without them), into why; NULL when it
 * can. ac_kernel_supports and ac_harness_run say no for the same reasons. */
const char *ac_kernel_quant_refusal(const ac_kernel *k, const ac_problem *p, char *why, size_t n);

/* The backward entry of k (ABI 3): run_backward when k is a native kernel of ABI 3 or later that
 * declares ATTNCHECK_CAP_BACKWARD and whose struct_size reaches the field; NULL otherwise
 * (version 1 and 2 plugins, exec kernels, kernels without a backward). */
typedef int (*attncheck_backward_fn)(const attncheck_problem *p, const attncheck_tensors *t,
                                     const attncheck_grad_tensors *g, char *err, size_t err_len);
attncheck_backward_fn ac_kernel_backward(const ac_kernel *k);
/* 1 when k computes a backward that ac_harness_run_backward can run: a native run_backward
 * (ac_kernel_backward), or an exec-persistent worker that declares one (its declaration read
 * first, at most timeout_s, when that was not done). */
int ac_kernel_has_backward(const ac_kernel *k, double timeout_s);
/* The ATTNCHECK_FEAT_ bits k's run_backward takes (kernels/attncheck_kernel.h, ABI 4: backward_caps;
 * a version 3 plugin: its caps within ATTNCHECK_BACKWARD_V3_FEATS; an exec-persistent worker: its
 * declaration's, ac_exec_backward_caps); 0 without a backward. */
uint32_t ac_kernel_backward_caps(const ac_kernel *k);
/* ABI 5 declarations (kernels/attncheck_kernel.h). What k writes for a row with no visible key:
 * *o one of ATTNCHECK_EMPTY_..., *lse one of ATTNCHECK_EMPTY_LSE_... (0: undeclared), from the
 * fields of a native kernel whose struct reaches them or an exec-persistent worker's declaration
 * ("empty_rows", "empty_lse"). */
void ac_kernel_empty_rows(const ac_kernel *k, int *o, int *lse);
/* precision_of of a native kernel of ABI 5 whose struct reaches it; NULL otherwise. */
typedef int (*attncheck_precision_fn)(const attncheck_problem *p, char *cls, size_t cls_len);
attncheck_precision_fn ac_kernel_precision_of(const ac_kernel *k);
/* 1 when a non-zero return of k's run() with a message beginning ATTNCHECK_UNSUPPORTED refuses
 * the case (UNSUPPORTED; abi_version >= 5); 0 for older plugins (a kernel error). */
int ac_kernel_run_may_refuse(const ac_kernel *k);
/* Why k cannot be handed the backward of c (no backward, a CUDA kernel, a feature of c outside its
 * backward set); NULL when it can. The text stays valid until the next call in the thread. */
const char *ac_harness_backward_refusal(const ac_kernel *k, const ac_case *c);

/* Built-in kernels (correct CPU kernels, mutants, test kernels, CUDA kernels when built).
 * ac_builtin_kernels lists the CPU kernels then the CUDA kernels, which loads the CUDA module;
 * ac_cpu_kernels lists the CPU kernels alone and loads nothing. */
const attncheck_kernel *const *ac_builtin_kernels(size_t *count);
const attncheck_kernel *const *ac_cpu_kernels(size_t *count);
const attncheck_kernel *const *ac_mutant_kernels(size_t *count);
const attncheck_kernel *const *ac_test_kernels(size_t *count);

/* Resolve a --kernel spec: a built-in name, PATH.so (all kernels), PATH.so:NAME,
 * 'exec:COMMAND {in} {out}' or 'exec-persistent:COMMAND'. Appends to *list. */
int ac_kernel_resolve(const char *spec, ac_kernel ***list, int *n, ac_err *e);
/* The spec with a relative plugin path (PATH.so[:NAME], a spec with '/' or ".so") made
 * absolute against the working directory, in buf; any other spec (built-in name, exec:,
 * absolute path, one too long for buf) is returned as is. For specs that are recorded
 * (reproducers, report.json, campaign.json) so that they work from any directory. */
const char *ac_kernel_spec_absolute(const char *spec, char *buf, size_t n);
void ac_kernel_free(ac_kernel *k);
/* NULL while k can run cases; otherwise why it cannot any more (an exec-persistent worker that
 * cannot be started or keeps ending before it answers): a campaign stops on it. */
const char *ac_kernel_unusable(const ac_kernel *k);
/* 1 supported, 0 not (why filled). Exec kernels: what the worker declared (else 1). Calls a built-in kernel's
 * supports() in the caller's process (it must not touch the GPU), a plugin's in a forked probe
 * (ac_plugin_supports: a crash or hang there answers 1 and the run reports it); CUDA kernels
 * without a CUDA build: 0. */
int ac_kernel_supports(const ac_kernel *k, const ac_problem *p, char *why, size_t why_len);
/* Before judging with k: an exec-persistent kernel starts its worker and reads the worker's
 * declaration (dtypes, masks, features, precision per dtype; at most timeout_s), so that
 * ac_kernel_supports and k->precision reflect it. Other kernels: nothing. */
void ac_kernel_prepare(const ac_kernel *k, double timeout_s);

typedef enum {
  AC_RUN_OK = 0,
  AC_RUN_UNSUPPORTED,   /* supports() said no: SKIP */
  AC_RUN_KERNEL_ERROR,  /* run() returned non-zero: FAIL-worthy error with message */
  AC_RUN_CRASH,         /* signal (sig) or sticky CUDA error (msg) */
  AC_RUN_TIMEOUT,
  AC_RUN_HARNESS_ERROR  /* the tool could not run the case */
} ac_run_status;

typedef struct {
  double timeout_s;     /* default 60 */
  int want_lse;         /* pass an lse buffer */
  int in_process;       /* run without fork (debugging only; ignored for CUDA kernels) */
  int device;           /* CUDA device */
  int64_t guard;        /* guard elements each side (>= 256) */
  int persistent;       /* 1 (default): run in the kernel's persistent worker child when it has one
                           (one fork per kernel instead of one per case; a crash or timeout ends that
                           child and the next case starts a fresh one); 0: a fresh child per case */
  int prefill_alt;      /* internal: pre-fill o and lse with ac_harness_prefill_alt_bits (the confirming run) */
  int layout_fill;      /* internal, layout cases (harness_layout.c): AC_LFILL_... */
  int alibi_lse;        /* the LSE convention under causal ALiBi (attncheck_kernel.h): AC_ALIBI_LSE_DECLARED
                           (default: the kernel's declaration), or --alibi-lse's AC_ALIBI_LSE_ABI, _FA2 */
} ac_run_opts;


/* What a layout case's memory that a sequence does not own holds (docs/layouts.md): the judged
 * run NaN-fills the pages and slots no sequence owns; the finite run leaves the case's values
 * there; the isolation runs NaN-fill everything the even (odd) sequences do not own. */
enum { AC_LFILL_UNOWNED = 0, AC_LFILL_FINITE = 1, AC_LFILL_EVEN = 2, AC_LFILL_ODD = 3 };

/* The words that begin the message of a run whose kernel could not be started (not_started). */
#define AC_RUN_NOT_STARTED "the kernel could not be started: "

/* Room for a precision class a kernel names for one problem (ABI 5 precision_of, an exec
 * worker's "ok class=NAME" or its output's `precision` member), NUL included. */
#define AC_RUN_CLASS_MAX 512

typedef struct {
  ac_run_status status;
  int sig;              /* for CRASH */
  char msg[512];
  char precision[AC_RUN_CLASS_MAX];   /* the class the kernel names for this problem ("": its declared one) */
  void *o;              /* dense [B,H,tq,dv] in the case dtype, gathered from the kernel's strided output */
  float *lse;           /* [B,H,tq] when want_lse (NULL otherwise) */
  uint8_t *unwritten;   /* per o element: 1 if still the pre-fill pattern (NULL if none) */
  int64_t n_unwritten;
  int64_t n_lse_unwritten;
  int guard_ok;         /* 1 = every guard margin intact */
  char guard_msg[256];  /* which tensor's guard was overwritten */
  double kernel_ms;     /* wall time of the run call, informational */
  /* Sizes of the arrays above (filled whenever o is). */
  ac_dtype dtype;
  int64_t o_count;      /* B*H*tq*dv */
  int64_t lse_count;    /* B*H*tq when lse != NULL, else 0 */
  /* exec kernels: the command or worker could not be started (the shell's status 126 or 127
   * before any answer); msg begins with AC_RUN_NOT_STARTED and says why */
  int not_started;
  /* o elements holding the NaN of the input guards and gaps (ac_nan_bits): the kernel read
   * outside q, k or v and carried it to the output. They count as written (a NaN). */
  int64_t n_guard_nan;
  /* Serving layouts: rows of sequences that read memory they do not own (OUT-OF-SEQUENCE), and
   * the first one named (sequence, page and slot when the NaN read there tells them). */
  int64_t n_oos;
  char oos_msg[256];
} ac_run_result;

void ac_run_opts_init(ac_run_opts *o);
/* Runs one case; never crashes or hangs the caller. 0 when a result (of any status) was produced.
 * timeout_s <= 0 means no limit; guard < 256 is raised to 256. o may be NULL (defaults).
 * Host kernels run in a forked child (unless in_process); CUDA is only ever touched there.
 * -1 (status HARNESS_ERROR, message in e and r->msg) when the case cannot be run at all. */
int ac_harness_run(const ac_kernel *k, const ac_case *c, const ac_run_opts *o, ac_run_result *r, ac_err *e);
void ac_run_result_free(ac_run_result *r);

/* The NaN pattern o and lse are pre-filled with (elements and gaps of the o span), distinct
 * from ac_nan_bits (guard margins, gaps of the inputs) except for e4m3, which has one
 * positive NaN. An element still holding it after the run was never written. */
uint64_t ac_harness_prefill_bits(ac_dtype t);
/* The same NaN with the sign bit flipped: an element that still holds the pre-fill after a
 * second run pre-filled with this pattern was never written (e4m3 has a single positive NaN,
 * which a kernel can also compute, so one pattern alone cannot tell). */
uint64_t ac_harness_prefill_alt_bits(ac_dtype t);

/* The backward of one case (ABI 3 run_backward; docs/backward.md): dq, dk, dv dense in the case
 * dtype and dsinks ([heads] binary32, with sinks), as ac_run_result holds o. */
typedef struct {
  ac_run_status status;
  int sig;
  char msg[512];
  int guard_ok;
  char guard_msg[256];
  double kernel_ms;
  ac_dtype dtype;
  void *g[3];              /* dq [B,H,tq,dk], dk [B,KVH,tk,dk], dv [B,KVH,tk,dv] */
  float *dsinks;           /* [heads], NULL without sinks */
  int64_t count[4];        /* elements of dq, dk, dv, dsinks */
  int64_t n_unwritten[4];  /* of each, elements still holding the pre-fill NaN */
} ac_grad_run_result;

/* Runs k's run_backward on c with c->dout, o (dense [B,H,tq,dv] in o's dtype) and lse
 * ([B,H,tq] binary32) handed over as the forward's values (the exact oracle's, rounded: the
 * caller's choice), in a fresh forked child (never the persistent worker; in_process as for the
 * forward), with guards and NaN pre-filled outputs; an exec-persistent worker that declares a
 * backward gets the request through its protocol (ac_exec_run_backward). UNSUPPORTED (0) for a
 * kernel without a backward, a CUDA kernel, and cases the exact backward refuses (descales,
 * per-tensor dtypes, paged caches) or the kernel's backward set lacks; -1 (HARNESS-ERROR) when c
 * has no dO. */
int ac_harness_run_backward(const ac_kernel *k, const ac_case *c, const void *o, const float *lse,
                            const ac_run_opts *opts, ac_grad_run_result *r, ac_err *e);
void ac_grad_run_result_free(ac_grad_run_result *r);

/* Repeat mode: 1 when two results of the same case agree bit for bit (status, o, lse and
 * unwritten counts), 0 when they differ (NONDETERMINISTIC). */
int ac_harness_repeat_equal(const ac_run_result *a, const ac_run_result *b);
/* First o element (dense index) where a and b differ, -1 if none (lse: *lse_index likewise, may be NULL). */
int64_t ac_harness_first_difference(const ac_run_result *a, const ac_run_result *b, int64_t *lse_index);

/* "OK", "UNSUPPORTED", "KERNEL-ERROR", "CRASH", "TIMEOUT", "HARNESS-ERROR". */
const char *ac_run_status_name(ac_run_status s);
/* "SIGSEGV", "SIGABRT", ...; "signal N" for others (static buffer for the latter). */
const char *ac_signal_name(int sig);
/* Frees every kernel of a list filled by ac_kernel_resolve, then the list. */
void ac_kernel_list_free(ac_kernel **list, int n);
/* Find a built-in (correct, mutant or test) kernel by name; NULL if none. flags: 0 correct, 1 mutant, 2 test. */
const attncheck_kernel *ac_builtin_find(const char *name, int *flags);

/* A persistent worker: one child process that serves many cases of one kernel, so that
 * per-process setup (a CUDA context; fork itself, costly in a process that maps cuDNN)
 * happens once. Same contract and results as ac_harness_run; the child starts on the
 * first run, and after a CRASH or TIMEOUT (the child is killed) the next run starts a
 * fresh one. Exec kernels and in_process runs, a worker busy in another thread, and a
 * worker inherited from a parent process fall back to a one-shot child. ac_harness_run
 * uses k->worker by default (ac_run_opts.persistent). */
typedef struct ac_worker ac_worker;
ac_worker *ac_worker_new(const ac_kernel *k);
int ac_worker_run(ac_worker *w, const ac_case *c, const ac_run_opts *o, ac_run_result *r, ac_err *e);
/* Number of child processes started so far (for tests and statistics). */
int ac_worker_starts(const ac_worker *w);
void ac_worker_free(ac_worker *w);

/* Convert the internal problem to the ABI's (with the strides the layout asks for). */
void ac_problem_to_abi(const ac_problem *p, attncheck_problem *a);
/* The ABI 3 layout fields of a layout problem (p.f.used & AC_FEAT_LAYOUTS): batch = sequences,
 * tq and tk the longest, total_q, total_k, pages, and the packed / paged strides. */
void ac_layout_problem_to_abi(const ac_problem *p, attncheck_problem *a);

#endif
