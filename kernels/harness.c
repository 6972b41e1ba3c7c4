/* harness.c: runs one case on one kernel in a forked child, with guarded buffers, NaN
 * pre-filled outputs and a time limit; the result comes back through shared memory. */
#include "config.h"
#include "harness.h"
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "accuda.h"
#include "exec.h"
#include "variants.h"
#include "harness_priv.h"
#include "quant.h"
#include "precision.h"

void ac_run_opts_init(ac_run_opts *o)
{
  memset(o, 0, sizeof *o);
  o->timeout_s = 60.0;
  o->guard = AC_MIN_GUARD;
  o->persistent = 1;
  o->alibi_lse = AC_ALIBI_LSE_DECLARED;
}

static void contiguous(int64_t H, int64_t T, int64_t D, int64_t s[4])
{
  s[3] = 1;
  s[2] = D;
  s[1] = T * D;
  s[0] = H * T * D;
}

static int all_zero(const int64_t s[4]) { return !s[0] && !s[1] && !s[2] && !s[3]; }

void ac_problem_to_abi(const ac_problem *p, attncheck_problem *a)
{
  memset(a, 0, sizeof *a);
  a->struct_size = (uint32_t)sizeof *a;
  a->dtype = (int32_t)p->dtype;
  a->mask = (int32_t)p->mask;
  a->batch = p->batch;
  a->heads = p->heads;
  a->kv_heads = p->kv_heads;
  a->tq = p->tq;
  a->tk = p->tk;
  a->dk = p->dk;
  a->dv = p->dv;
  a->scale = ac_problem_scale(p);
  /* Each tensor whose strides are all zero is contiguous. */
  if (all_zero(p->q_stride)) contiguous(p->heads, p->tq, p->dk, a->q_stride);
  else memcpy(a->q_stride, p->q_stride, sizeof a->q_stride);
  if (all_zero(p->k_stride)) contiguous(p->kv_heads, p->tk, p->dk, a->k_stride);
  else memcpy(a->k_stride, p->k_stride, sizeof a->k_stride);
  if (all_zero(p->v_stride)) contiguous(p->kv_heads, p->tk, p->dv, a->v_stride);
  else memcpy(a->v_stride, p->v_stride, sizeof a->v_stride);
  if (all_zero(p->o_stride)) contiguous(p->heads, p->tq, p->dv, a->o_stride);
  else memcpy(a->o_stride, p->o_stride, sizeof a->o_stride);
  /* ABI 2: the variants; bias and boolean mask are dense [extent_b][extent_h][tq][tk], an
   * extent of 1 broadcast by a zero stride. */
  const ac_features *f = &p->f;
  a->features = f->used;
  /* a quantized tensor reaches a kernel as codes and scales (quant_view.h): its dtype reads as the case's */
  a->q_dtype = (int32_t)(ac_tensor_quantized(p, 'q') ? p->dtype : ac_tensor_dtype(p, 'q'));
  a->k_dtype = (int32_t)(ac_tensor_quantized(p, 'k') ? p->dtype : ac_tensor_dtype(p, 'k'));
  a->v_dtype = (int32_t)(ac_tensor_quantized(p, 'v') ? p->dtype : ac_tensor_dtype(p, 'v'));
  a->o_dtype = (int32_t)ac_tensor_dtype(p, 'o');
  a->q_format = p->quant[0].fmt, a->k_format = p->quant[1].fmt, a->v_format = p->quant[2].fmt;   /* ABI 5 */
  int win = (f->used & AC_FEAT_WINDOW) != 0;
  a->window_align = win && f->win_top_left ? ATTNCHECK_ALIGN_TOP_LEFT : ATTNCHECK_ALIGN_BOTTOM_RIGHT;
  a->window_left = win ? f->win_left : -1;
  a->window_right = win ? f->win_right : -1;
  a->softcap = f->used & AC_FEAT_SOFTCAP ? f->softcap : 0;
  a->dropout_p = f->used & AC_FEAT_DROPOUT ? (float)f->dropout_p : 0.0f;   /* a binary32 value (validated) */
  a->dropout_seed = f->used & AC_FEAT_DROPOUT ? f->dropout_seed : 0;
  a->alibi_per_batch = f->used & AC_FEAT_ALIBI ? f->alibi_per_batch : 0;
  a->bias_dtype = (int32_t)(f->used & AC_FEAT_BIAS ? f->bias_dtype : p->dtype);
  if (f->used & AC_FEAT_BIAS) {
    contiguous(f->bias_h, p->tq, ac_bias_cols(p), a->bias_stride);
    if (f->bias_b <= 1) a->bias_stride[0] = 0;
    if (f->bias_h <= 1) a->bias_stride[1] = 0;
  }
  if (f->used & AC_FEAT_BOOL_MASK) {
    contiguous(f->mask_h, p->tq, ac_bias_cols(p), a->bool_mask_stride);
    if (f->mask_b <= 1) a->bool_mask_stride[0] = 0;
    if (f->mask_h <= 1) a->bool_mask_stride[1] = 0;
  }
  if (f->used & AC_FEAT_LAYOUTS) ac_layout_problem_to_abi(p, a);   /* ABI 3 (harness_layout.c) */
  ac_hx_quant_spec_to_abi(p, a);   /* ABI 5's quantized layouts and stores (harness_quant.c) */
}

uint64_t ac_harness_prefill_bits(ac_dtype t)
{
  /* Quiet NaNs with payloads that neither ac_nan_bits nor arithmetic produce; e4m3 has no
   * other positive NaN, and its computed NaNs (negative on x86) differ from it anyway. */
  switch (t) {
  case AC_F64: return 0x7ffbad0dd0bad0d5ULL;
  case AC_F32: return 0x7fcbad0dULL;
  case AC_F16: return 0x7e3dULL;
  case AC_BF16: return 0x7fcbULL;
  case AC_E5M2: return 0x7dULL;
  default: return ac_nan_bits(t);
  }
}

uint64_t ac_harness_prefill_alt_bits(ac_dtype t)
{
  return ac_harness_prefill_bits(t) ^ (1ULL << (8 * ac_dtype_size(t) - 1));
}

const char *ac_run_status_name(ac_run_status s)
{
  switch (s) {
  case AC_RUN_OK: return "OK";
  case AC_RUN_UNSUPPORTED: return "UNSUPPORTED";
  case AC_RUN_KERNEL_ERROR: return "KERNEL-ERROR";
  case AC_RUN_CRASH: return "CRASH";
  case AC_RUN_TIMEOUT: return "TIMEOUT";
  case AC_RUN_HARNESS_ERROR: return "HARNESS-ERROR";
  }
  return "?";
}

const char *ac_signal_name(int sig)
{
  static const struct { int sig; const char *name; } names[] = {
    {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"}, {SIGFPE, "SIGFPE"}, {SIGILL, "SIGILL"},
    {SIGABRT, "SIGABRT"}, {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
    {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"},
    {SIGHUP, "SIGHUP"}, {SIGQUIT, "SIGQUIT"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},
    {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].sig == sig) return names[i].name;
  static char buf[32];
  snprintf(buf, sizeof buf, "signal %d", sig);
  return buf;
}

void ac_hx_child_stdout(void)
{
  fflush(stdout);
  dup2(2, 1);
}

int ac_hx_body_child(void *ctx)
{
  ac_hx_child_stdout();
  ac_hx_body(ctx);
  fflush(stdout);
  return 0;
}

void ac_hx_result_reset(ac_run_result *r, ac_dtype t)
{
  memset(r, 0, sizeof *r);
  r->guard_ok = 1;
  r->dtype = t;
}

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

int ac_hx_prepare(ac_hx_ctx *x, const ac_kernel *k, const ac_case *c, const ac_run_opts *o, ac_err *e)
{
  memset(x, 0, sizeof *x);
  if (ac_problem_validate(&c->p, ac_mem_cap(), e) || ac_problem_counts(&c->p, &x->cn, e)) return -1;
  if (!k->abi || !k->abi->run) return ac_err_set(e, "kernel '%s' has no run function", k->name);
  x->k = k;
  x->c = c;
  x->o = o;
  ac_problem_to_abi(&c->p, &x->ap);
  x->l.o_off = round64(sizeof(ac_hx_head));
  x->l.lse_off = x->l.o_off + round64((size_t)x->cn.o * ac_dtype_size(ac_tensor_dtype(&c->p, 'o')));
  x->l.flags_off = x->l.lse_off + (o->want_lse ? round64((size_t)x->cn.rows * sizeof(float)) : 0);
  x->l.drop_off = x->l.flags_off + round64((size_t)x->cn.o);
  x->l.total = ac_hx_store_layout(&c->p, x->l.drop_off + round64((size_t)ac_feat_tensor_count(&c->p, AC_FT_DROPOUT_MASK)),
                                  x->l.st_off);
  return 0;
}

int ac_hx_collect_status(const ac_hx_head *h, const ac_child_outcome *oc, double timeout_s, ac_run_result *r)
{
  if (oc->timed_out) {
    r->status = AC_RUN_TIMEOUT;
    snprintf(r->msg, sizeof r->msg, "no result within the time limit of %g s (killed%s)", timeout_s,
             h->stage == AC_HX_IN_SUPPORTS ? " in supports()" : "");
  } else if (oc->sig) {
    r->status = AC_RUN_CRASH;
    r->sig = oc->sig;
    snprintf(r->msg, sizeof r->msg, "kernel process killed by %s (%s)%s", ac_signal_name(oc->sig), strsignal(oc->sig),
             h->stage == AC_HX_IN_SUPPORTS ? " in supports()" : "");
  } else if (!h->done) {
    r->status = AC_RUN_CRASH;
    snprintf(r->msg, sizeof r->msg, "kernel process exited with status %d before the run finished", oc->code);
  } else {
    r->status = (ac_run_status)h->status;
    memcpy(r->msg, h->msg, sizeof r->msg);
    r->msg[sizeof r->msg - 1] = 0;
    memcpy(r->guard_msg, h->guard_msg, sizeof r->guard_msg);
    r->guard_msg[sizeof r->guard_msg - 1] = 0;
    r->guard_ok = h->guard_ok;
    r->kernel_ms = h->kernel_ms;
    memcpy(r->precision, h->precision, sizeof r->precision);
    r->precision[sizeof r->precision - 1] = 0;
    return r->status == AC_RUN_OK;
  }
  return 0;
}

void ac_hx_collect(const ac_hx_ctx *x, const ac_child_outcome *oc, ac_run_result *r)
{
  const ac_hx_head *h = (const ac_hx_head *)x->area;
  ac_hx_result_reset(r, ac_tensor_dtype(&x->c->p, 'o'));
  if (!ac_hx_collect_status(h, oc, x->o->timeout_s, r)) return;
  size_t ob = (size_t)x->cn.o * ac_dtype_size(ac_tensor_dtype(&x->c->p, 'o'));
  r->o = ac_xmalloc(ob ? ob : 1);
  memcpy(r->o, x->area + x->l.o_off, ob);
  r->o_count = x->cn.o;
  r->n_unwritten = h->n_unwritten;
  r->n_guard_nan = h->n_guard_nan;
  if (h->n_unwritten) {
    r->unwritten = ac_xmalloc((size_t)x->cn.o);
    memcpy(r->unwritten, x->area + x->l.flags_off, (size_t)x->cn.o);
  }
  if (x->o->want_lse) {
    r->lse = ac_xmalloc((size_t)x->cn.rows * sizeof(float));
    memcpy(r->lse, x->area + x->l.lse_off, (size_t)x->cn.rows * sizeof(float));
    r->lse_count = x->cn.rows;
    r->n_lse_unwritten = h->n_lse_unwritten;
  }
  int64_t nm = ac_feat_tensor_count(&x->c->p, AC_FT_DROPOUT_MASK);
  if (nm > 0) {   /* dropout: the kernel's keep-mask */
    r->dropout_mask = ac_xmalloc((size_t)nm);
    memcpy(r->dropout_mask, x->area + x->l.drop_off, (size_t)nm);
    r->mask_count = nm;
    r->n_mask_unwritten = h->n_mask_unwritten;
  }
  ac_hx_store_collect(x, r);
}

static int harness_error(ac_run_result *r, ac_err *e, const char *msg)
{
  r->status = AC_RUN_HARNESS_ERROR;
  snprintf(r->msg, sizeof r->msg, "%s", msg);
  return ac_err_set(e, "%s", msg);
}

int ac_hx_run_once(const ac_kernel *k, const ac_case *c, const ac_run_opts *opts, ac_run_result *r, ac_err *e)
{
  ac_case filled;
  if ((k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT) && ac_hx_layout_filled(c, opts->layout_fill, &filled)) {
    /* an exec worker reads the case file: the layout's fill travels in a copy of the case */
    int rc = ac_hx_run_oneshot(k, &filled, opts, r, e);
    ac_case_free(&filled);
    return rc;
  }
  if (opts->persistent && k->worker && !c->lay && !c->quant && (k->kind == AC_KIND_BUILTIN || k->kind == AC_KIND_PLUGIN))
    return ac_worker_run(k->worker, c, opts, r, e);
  return ac_hx_run_oneshot(k, c, opts, r, e);
}

/* An element holding the pre-fill NaN may also be a NaN the kernel computed (always possible
 * in e4m3, which has one positive NaN). Run again pre-filled with the sign-flipped pattern:
 * only elements that hold the pre-fill of each run were never written. A second run that does
 * not finish leaves the first run's flags as they are. */
static void confirm_unwritten(const ac_kernel *k, const ac_case *c, const ac_run_opts *opts, ac_run_result *r)
{
  ac_run_opts o2 = *opts;
  o2.prefill_alt = 1;
  ac_run_result r2;
  memset(&r2, 0, sizeof r2);
  ac_err e2;
  if (ac_hx_run_once(k, c, &o2, &r2, &e2) == 0 && r2.status == AC_RUN_OK && r2.o && r2.o_count == r->o_count) {
    ac_dtype t = ac_tensor_dtype(&c->p, 'o');
    uint64_t alt = ac_harness_prefill_alt_bits(t);
    int64_t nu = 0;
    for (int64_t i = 0; r->unwritten && i < r->o_count; i++) {
      if (r->unwritten[i] && ac_load_bits(t, r2.o, (size_t)i) != alt) r->unwritten[i] = 0;
      nu += r->unwritten[i];
    }
    r->n_unwritten = nu;
    if (r->lse && r2.lse && r->n_lse_unwritten) {
      uint64_t lf = ac_harness_prefill_bits(AC_F32), la = ac_harness_prefill_alt_bits(AC_F32);
      int64_t nl = 0;
      for (int64_t i = 0; i < r->lse_count; i++)
        nl += ac_load_bits(AC_F32, r->lse, (size_t)i) == lf && ac_load_bits(AC_F32, r2.lse, (size_t)i) == la;
      r->n_lse_unwritten = nl;
    }
  }
  ac_run_result_free(&r2);
}

/* A class the kernel named for this problem (ABI 5 precision_of, an exec worker's answer) must be
 * one attncheck knows: otherwise the run is a kernel error naming it (escaped with the rest of
 * msg by ac_harness_run). */
static void check_class(ac_run_result *r)
{
  ac_err ce;
  if (!r->precision[0] || ac_precision_spec_check(r->precision, &ce) == 0) return;
  r->status = AC_RUN_KERNEL_ERROR;
  snprintf(r->msg, sizeof r->msg, "the kernel names the class '%.200s' for this problem: %.250s", r->precision, ce.msg);
  r->precision[0] = 0;
}

static int harness_run(const ac_kernel *k, const ac_case *c, const ac_run_opts *opts, ac_run_result *r, ac_err *e)
{
  ac_run_opts defaults;
  if (!opts) {
    ac_run_opts_init(&defaults);
    opts = &defaults;
  }
  /* Quantized tensors reach only the kernels that read their formats (an exec-persistent worker's
   * declaration is checked when the case is sent). */
  char why[256];
  if (k->kind != AC_KIND_EXEC_PERSISTENT && ac_kernel_quant_refusal(k, &c->p, why, sizeof why)) {
    ac_hx_result_reset(r, ac_tensor_dtype(&c->p, 'o'));
    r->status = AC_RUN_UNSUPPORTED;
    snprintf(r->msg, sizeof r->msg, "%s", why);
    return 0;
  }
  /* A kernel that declares ATTNCHECK_CAP_NO_LSE gets no lse buffer; its LSE is not judged. */
  ac_run_opts nolse;
  if (opts->want_lse && (ac_kernel_caps(k) & ATTNCHECK_CAP_NO_LSE)) {
    nolse = *opts;
    nolse.want_lse = 0;
    opts = &nolse;
  }
  int rc = ac_hx_run_once(k, c, opts, r, e);
  if (rc == 0 && r->status == AC_RUN_OK) check_class(r);
  if (rc == 0 && r->status == AC_RUN_OK && (r->n_unwritten || r->n_lse_unwritten) && !opts->prefill_alt)
    confirm_unwritten(k, c, opts, r);
  if (rc == 0 && r->status == AC_RUN_OK && c->lay && opts->layout_fill == AC_LFILL_UNOWNED && !opts->prefill_alt)
    ac_hx_layout_isolate(k, c, opts, r);
  return rc;
}

int ac_harness_run(const ac_kernel *k, const ac_case *c, const ac_run_opts *opts, ac_run_result *r, ac_err *e)
{
  int rc = harness_run(k, c, opts, r, e);
  /* What the kernel said (its error text, a worker's answer, a command's last line) is text for
   * every output, escaped once here; what it left running, escaped from its group, goes now. */
  ac_str_escape_inplace(r->msg, sizeof r->msg);
  ac_str_escape_inplace(r->guard_msg, sizeof r->guard_msg);
  ac_str_escape_inplace(r->oos_msg, sizeof r->oos_msg);
  if (rc < 0 && e) ac_str_escape_inplace(e->msg, sizeof e->msg);
  ac_child_reap_strays();
  return rc;
}

int ac_hx_run_oneshot(const ac_kernel *k, const ac_case *c, const ac_run_opts *opts, ac_run_result *r, ac_err *e)
{
  ac_run_opts defaults;
  if (!opts) {
    ac_run_opts_init(&defaults);
    opts = &defaults;
  }
  ac_hx_result_reset(r, ac_tensor_dtype(&c->p, 'o'));
  if (k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT) return ac_exec_run(k, c, opts, r, e);
  ac_err pe;
  ac_hx_ctx x;
  if (ac_hx_prepare(&x, k, c, opts, &pe)) return harness_error(r, e, pe.msg);
  if (k->abi->memory == ATTNCHECK_MEM_CUDA && !ac_cuda_built()) {
    /* Nothing to fork for: CUDA support is absent. */
    r->status = AC_RUN_UNSUPPORTED;
    snprintf(r->msg, sizeof r->msg, "CUDA support not built");
    return 0;
  }
  ac_child_outcome oc;
  memset(&oc, 0, sizeof oc);
  /* CUDA is never initialized in the caller: in_process does not apply to CUDA kernels. */
  int in_process = opts->in_process && k->abi->memory != ATTNCHECK_MEM_CUDA;
  if (in_process) {
    x.area = ac_xcalloc(1, x.l.total);
    ac_hx_body(&x);
  } else {
    x.area = ac_shared_alloc(x.l.total, &pe);
    if (!x.area) return harness_error(r, e, pe.msg);
    if (ac_child_run(ac_hx_body_child, &x, opts->timeout_s, 1, &oc, &pe)) {
      ac_shared_free(x.area, x.l.total);
      return harness_error(r, e, pe.msg);
    }
  }
  ac_hx_collect(&x, &oc, r);
  if (in_process) free(x.area);
  else ac_shared_free(x.area, x.l.total);
  if (r->status == AC_RUN_HARNESS_ERROR) return ac_err_set(e, "%s", r->msg);
  return 0;
}

void ac_run_result_free(ac_run_result *r)
{
  if (!r) return;
  free(r->o);
  free(r->lse);
  free(r->unwritten);
  free(r->dropout_mask);
  ac_quant_data_free(r->stored);
  r->o = NULL;
  r->lse = NULL;
  r->unwritten = NULL;
  r->dropout_mask = NULL;
  r->stored = NULL;
}

int64_t ac_harness_first_difference(const ac_run_result *a, const ac_run_result *b, int64_t *lse_index)
{
  int64_t first = -1;
  if (lse_index) *lse_index = -1;
  if (a->o && b->o && a->o_count == b->o_count && a->dtype == b->dtype) {
    size_t es = ac_dtype_size(a->dtype);
    if (memcmp(a->o, b->o, (size_t)a->o_count * es) != 0)
      for (int64_t i = 0; i < a->o_count; i++)
        if (memcmp((const char *)a->o + (size_t)i * es, (const char *)b->o + (size_t)i * es, es) != 0) {
          first = i;
          break;
        }
  }
  if (lse_index && a->lse && b->lse && a->lse_count == b->lse_count)
    for (int64_t i = 0; i < a->lse_count; i++)
      if (memcmp(&a->lse[i], &b->lse[i], sizeof(float)) != 0) {
        *lse_index = i;
        break;
      }
  return first;
}

int ac_harness_repeat_equal(const ac_run_result *a, const ac_run_result *b)
{
  if (a->status != b->status || a->sig != b->sig) return 0;
  if (a->status != AC_RUN_OK) return 1;   /* same failure both times */
  if (!a->o != !b->o || !a->lse != !b->lse) return 0;
  if (a->dtype != b->dtype || a->o_count != b->o_count || a->lse_count != b->lse_count) return 0;
  if (a->n_unwritten != b->n_unwritten || a->n_lse_unwritten != b->n_lse_unwritten) return 0;
  if (a->o && memcmp(a->o, b->o, (size_t)a->o_count * ac_dtype_size(a->dtype)) != 0) return 0;
  if (a->lse && memcmp(a->lse, b->lse, (size_t)a->lse_count * sizeof(float)) != 0) return 0;
  if (!a->dropout_mask != !b->dropout_mask || a->mask_count != b->mask_count) return 0;
  if (a->dropout_mask && memcmp(a->dropout_mask, b->dropout_mask, (size_t)a->mask_count) != 0) return 0;
  return 1;
}
