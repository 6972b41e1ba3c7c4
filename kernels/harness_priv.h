/* harness_priv.h: the pieces of a harness run shared by the one-shot child (harness.c)
 * and the persistent worker (worker.c). Internal to kernels/. */
#ifndef AC_HARNESS_PRIV_H
#define AC_HARNESS_PRIV_H
#include "child.h"
#include "harness.h"

#define AC_MIN_GUARD 256
/* What the dropout mask is pre-filled with: neither 0 (dropped) nor 1 (kept). */
#define AC_HX_MASK_FILL 0xffu
#define AC_HX_IN_SUPPORTS 1
#define AC_HX_IN_RUN 2

/* The result area: this head, then o (dense, case dtype), lse (floats), unwritten flags. */
typedef struct {
  int32_t done, status, guard_ok, stage;   /* stage: AC_HX_IN_SUPPORTS / AC_HX_IN_RUN while the kernel's code runs */
  int64_t n_unwritten, n_lse_unwritten, n_guard_nan, n_mask_unwritten;
  double kernel_ms;
  char msg[512];
  char guard_msg[256];
  char precision[AC_RUN_CLASS_MAX];   /* ABI 5 precision_of: the class of the path taken ("": none) */
} ac_hx_head;

typedef struct {
  size_t o_off, lse_off, flags_off, drop_off, total;   /* drop_off: the dropout mask's bytes (dropout cases) */
  size_t st_off[3][3];   /* quantize-on-store: what the kernel stored of q, k, v (codes, scales, aux; 0: none) */
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

/* One guarded tensor as the kernel sees it: [B][H][T][D] with the ABI's strides in a span
 * with guards on both sides; an input also keeps the dense data it was filled from. */
typedef struct {
  const char *name;        /* in messages */
  ac_dtype dtype;
  int64_t dim[4];          /* B, H, T, D */
  const int64_t *stride;   /* the ABI problem's strides */
  int64_t count;           /* elements */
  const void *dense;       /* inputs: the case's data (NULL for the output) */
  int64_t span;            /* elements of the strided span */
  ac_guarded g;
} hx_tensor;

/* The inputs, in the order they are allocated, filled and checked; the variant tensors
 * (ABI 2) are there only when the case uses them (dense NULL otherwise). */
enum { HX_Q, HX_K, HX_V, HX_BIAS, HX_MASK, HX_SLOPES, HX_SINKS, HX_DESCALE_Q, HX_DESCALE_K, HX_DESCALE_V,
       HX_CU_Q, HX_CU_K, HX_BLOCKS, HX_CACHE_LENS,
       /* quantized q, k, v (harness_quant.c): codes, scales, mins / zero points / tensor scale, ggml blocks */
       HX_QCODES, HX_QSCALES = HX_QCODES + 3, HX_QAUX = HX_QSCALES + 3, HX_QGGML = HX_QAUX + 3, HX_NIN = HX_QGGML + 3 };

typedef struct {
  hx_tensor in[HX_NIN];
  hx_tensor o;
  ac_guarded lse;          /* rows floats, with want_lse only */
  ac_guarded drop;         /* dropout cases: the mask the kernel writes, bytes pre-filled with AC_HX_MASK_FILL */
  uint64_t fill, lfill;    /* the pre-fill patterns of o and lse */
  size_t guard;
  void *filled[3];         /* layout cases: q, k, v with the memory no (tested) sequence owns filled */
  int64_t qstride[12][4];  /* presentation strides of the quantized tensors' arrays (HX_QCODES ...) */
  uint8_t *qggml[3];       /* ggml's byte image of quantized q, k, v (ggml formats) */
  ac_case *qfill;          /* layout cases: a copy whose codes and scales hold the fill, or NULL */
  uint8_t *qpacked[3];     /* packed codes of quantized q, k, v (quant_spec packing) */
  /* quantize-on-store (harness_quant.c): the outputs the kernel stores q, k, v into (codes, scales,
   * aux, ggml blocks), their initial contents (given scales) and presentation strides */
  hx_tensor st[3][4];
  void *stinit[3][4];
  int64_t ststride[3][4][4];
} hx_bufs;

/* Quantized tensors (harness_quant.c): their codes, scales and ggml blocks as guarded inputs in
 * place of the values (t->q/k/v NULL), and the view built-in kernels get (quant_view.h). */
void ac_hx_describe_quant(const ac_hx_ctx *x, hx_bufs *b);
void ac_hx_quant_view(const hx_bufs *b, const ac_problem *p, void *view);
/* Quantize-on-store (harness_quant.c): the area the stored arrays take after offset off (l->st_off;
 * the new end), their guarded outputs (allocated and pre-filled by ac_hx_store_setup, guards checked
 * by ac_hx_store_guards_ok), the ABI's tensors.store of them, and what the kernel stored read back
 * into the area (codes unpacked, ggml blocks taken apart); the run result's copy (ac_hx_store_collect). */
size_t ac_hx_store_layout(const ac_problem *p, size_t off, size_t st_off[3][3]);
/* The ABI's quant_spec of p's quantized tensors, and their feature bits in a->features. */
void ac_hx_quant_spec_to_abi(const ac_problem *p, attncheck_problem *a);
int ac_hx_store_setup(hx_bufs *b, size_t guard, ac_err *e);
int ac_hx_store_guards_ok(const hx_bufs *b, char *msg, size_t n);
void ac_hx_store_view(const hx_bufs *b, const ac_problem *p, void *view);
void ac_hx_store_read_back(const ac_hx_ctx *x, const hx_bufs *b);
void ac_hx_store_collect(const ac_hx_ctx *x, ac_run_result *r);
/* Layout cases: 1 with out a copy of c whose quantized tensors hold NaN scales (block and token
 * granularity) and NaN codes (fp8) in the memory the fill names (harness_layout.c), else 0. */
int ac_hx_layout_quant(const ac_case *c, int fill, ac_case *out);

/* Shared with the backward run (harness_grad.c). The guard and gap checks append to msg. */
int ac_hx_guards_ok(const ac_guarded *g, const char *tensor, char *msg, size_t n);
int ac_hx_gaps_ok(const hx_tensor *t, uint64_t nan, char *msg, size_t n);
int ac_hx_input_ok(const hx_tensor *t, char *msg, size_t n);
hx_tensor ac_hx_tensor_of(const char *name, ac_dtype t, int64_t B, int64_t H, int64_t T, int64_t D,
                          const int64_t *stride, int64_t count, const void *dense);
/* Asks supports() (if the kernel has it); 0 with the area's head finished when the answer is no. */
int ac_hx_supported(const ac_hx_ctx *x, ac_hx_head *h);
/* The tensors of the case (inputs, o, lse), allocated with guards and pre-filled; freed by ac_hx_free. */
void ac_hx_describe(const ac_hx_ctx *x, hx_bufs *b);
int ac_hx_setup(const ac_hx_ctx *x, hx_bufs *b, ac_err *e);
void ac_hx_free(hx_bufs *b);
void ac_hx_tensors(const ac_hx_ctx *x, hx_bufs *b, attncheck_tensors *t);
/* Every guard intact, every input as handed over (messages into h->guard_msg); 1 when so. */
int ac_hx_check_guards(const ac_hx_ctx *x, const hx_bufs *b, ac_hx_head *h);
/* The status of a finished child from its outcome and the area's head into r (timeout, crash,
 * or what the body reported); 1 when the body finished with AC_RUN_OK. */
int ac_hx_collect_status(const ac_hx_head *h, const ac_child_outcome *oc, double timeout_s, ac_run_result *r);

/* Resets r for a case of dtype t (guard_ok = 1). */
void ac_hx_result_reset(ac_run_result *r, ac_dtype t);

#endif
