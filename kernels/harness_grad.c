/* harness_grad.c: runs the backward of one case on one kernel (ABI 3 run_backward) with the
 * forward's guards: a forked child with a time limit, guarded buffers, NaN pre-filled outputs,
 * inputs (o, lse and dO included) checked unchanged; the result comes back through shared memory. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exec.h"
#include "harness_priv.h"
#include "variants.h"

enum { G_DQ, G_DK, G_DV, G_DSINK, G_N };

/* The result area: this head, then dq, dk, dv (dense, case dtype) and dsinks (floats). */
typedef struct {
  ac_hx_head h;
  int64_t unwritten[G_N];
} grad_head;

typedef struct {
  ac_hx_ctx x;
  attncheck_backward_fn fn;
  const void *o;
  const float *lse;
  int64_t count[G_N];
  size_t off[G_N];
  size_t total;
} grad_ctx;

typedef struct {
  hx_tensor dout, out[3];
  ac_guarded dsink;
} grad_bufs;

static const char *const out_names[G_N] = {"dq", "dk", "dv", "dsinks"};

static void grad_describe(const grad_ctx *g, grad_bufs *gb)
{
  const ac_problem *p = &g->x.c->p;
  const attncheck_problem *ap = &g->x.ap;
  memset(gb, 0, sizeof *gb);
  gb->dout = ac_hx_tensor_of("do", ac_tensor_dtype(p, 'o'), p->batch, p->heads, p->tq, p->dv, ap->o_stride,
                             g->x.cn.o, g->x.c->dout);
  gb->out[G_DQ] = ac_hx_tensor_of("dq", p->dtype, p->batch, p->heads, p->tq, p->dk, ap->q_stride, g->count[G_DQ], NULL);
  gb->out[G_DK] = ac_hx_tensor_of("dk", p->dtype, p->batch, p->kv_heads, p->tk, p->dk, ap->k_stride, g->count[G_DK], NULL);
  gb->out[G_DV] = ac_hx_tensor_of("dv", p->dtype, p->batch, p->kv_heads, p->tk, p->dv, ap->v_stride, g->count[G_DV], NULL);
}

/* o (the oracle's, as an input: its span NaN between elements) and lse into the forward's
 * buffers; dO and the gradient outputs allocated, the outputs pre-filled with their NaN. */
static int grad_setup(const grad_ctx *g, hx_bufs *b, grad_bufs *gb, ac_err *e)
{
  if (ac_hx_setup(&g->x, b, e)) return -1;
  for (size_t i = 0; i < b->o.g.n; i++) ac_store_bits(b->o.dtype, b->o.g.data, i, ac_nan_bits(b->o.dtype));
  b->o.dense = g->o;
  ac_scatter_strided(b->o.dtype, g->o, b->o.dim[0], b->o.dim[1], b->o.dim[2], b->o.dim[3], b->o.stride, b->o.g.data);
  memcpy(b->lse.data, g->lse, (size_t)g->x.cn.rows * sizeof(float));
  if (b->drop.data) memcpy(b->drop.data, g->x.c->dropout_mask, b->drop.n);   /* dropout: the mask to use, an input */
  hx_tensor *d = &gb->dout;
  if (ac_guarded_alloc(&d->g, d->dtype, (size_t)d->span, b->guard, e)) return -1;
  ac_scatter_strided(d->dtype, d->dense, d->dim[0], d->dim[1], d->dim[2], d->dim[3], d->stride, d->g.data);
  for (int t = 0; t < 3; t++) {
    hx_tensor *u = &gb->out[t];
    if (ac_guarded_alloc(&u->g, u->dtype, (size_t)u->span, b->guard, e)) return -1;
    uint64_t fill = ac_harness_prefill_bits(u->dtype);
    for (size_t i = 0; i < u->g.n; i++) ac_store_bits(u->dtype, u->g.data, i, fill);
  }
  if (g->count[G_DSINK] && ac_guarded_alloc(&gb->dsink, AC_F32, (size_t)g->count[G_DSINK], b->guard, e)) return -1;
  for (size_t i = 0; i < gb->dsink.n; i++) ac_store_bits(AC_F32, gb->dsink.data, i, ac_harness_prefill_bits(AC_F32));
  return 0;
}

static void grad_free(hx_bufs *b, grad_bufs *gb)
{
  ac_hx_free(b);
  ac_guarded_free(&gb->dout.g);
  for (int t = 0; t < 3; t++) ac_guarded_free(&gb->out[t].g);
  ac_guarded_free(&gb->dsink);
}

/* Guards, unchanged inputs (o, lse, dO with the forward's), the outputs into the area with the
 * count of elements still holding the pre-fill. 1 when every check passed. */
static int grad_check(const grad_ctx *g, const hx_bufs *b, const grad_bufs *gb)
{
  grad_head *gh = (grad_head *)g->x.area;
  char *msg = gh->h.guard_msg;
  size_t n = sizeof gh->h.guard_msg;
  int ok = ac_hx_check_guards(&g->x, b, &gh->h);
  ok &= ac_hx_input_ok(&b->o, msg, n);
  if (memcmp(b->lse.data, g->lse, (size_t)g->x.cn.rows * sizeof(float)) != 0) {
    size_t len = strlen(msg);
    snprintf(msg + len, n - len, "%slse: kernel wrote into its input", len ? "; " : "");
    ok = 0;
  }
  if (b->drop.data && memcmp(b->drop.data, g->x.c->dropout_mask, b->drop.n) != 0) {
    size_t len = strlen(msg);
    snprintf(msg + len, n - len, "%sdropout_mask: kernel wrote into its input", len ? "; " : "");
    ok = 0;
  }
  ok &= ac_hx_guards_ok(&gb->dout.g, "do", msg, n) & ac_hx_input_ok(&gb->dout, msg, n);
  for (int t = 0; t < G_N; t++) {
    const ac_guarded *gd = t < 3 ? &gb->out[t].g : &gb->dsink;
    if (!gd->data) continue;
    ok &= ac_hx_guards_ok(gd, out_names[t], msg, n);
    unsigned char *dst = g->x.area + g->off[t];
    if (t < 3) {
      const hx_tensor *u = &gb->out[t];
      ac_gather_strided(u->dtype, gd->data, u->dim[0], u->dim[1], u->dim[2], u->dim[3], u->stride, dst);
      ok &= ac_hx_gaps_ok(u, ac_harness_prefill_bits(u->dtype), msg, n);
    } else {
      memcpy(dst, gd->data, gd->n * sizeof(float));
    }
    uint64_t fill = ac_harness_prefill_bits(gd->dtype);
    for (int64_t i = 0; i < g->count[t]; i++) gh->unwritten[t] += ac_load_bits(gd->dtype, dst, (size_t)i) == fill;
  }
  return ok;
}

/* The body of a backward run: in the child (or in process). */
static int grad_body(void *arg)
{
  grad_ctx *g = arg;
  ac_hx_ctx *x = &g->x;
  ac_hx_head *h = &((grad_head *)x->area)->h;
  h->guard_ok = 1;
  if (!ac_hx_supported(x, h)) return 0;
  hx_bufs b;
  grad_bufs gb;
  ac_err e;
  ac_hx_describe(x, &b);
  grad_describe(g, &gb);
  if (grad_setup(g, &b, &gb, &e)) {
    grad_free(&b, &gb);
    h->status = AC_RUN_HARNESS_ERROR;
    snprintf(h->msg, sizeof h->msg, "cannot allocate the kernel's buffers: %.400s", e.msg);
    h->done = 1;
    return 0;
  }
  attncheck_tensors tt;
  ac_hx_tensors(x, &b, &tt);
  tt.o = NULL;
  tt.lse = NULL;
  attncheck_grad_tensors gt;
  memset(&gt, 0, sizeof gt);
  gt.struct_size = (uint32_t)sizeof gt;
  gt.o = b.o.g.data;
  gt.lse = b.lse.data;
  gt.dout = gb.dout.g.data;
  gt.dq = gb.out[G_DQ].g.data;
  gt.dk = gb.out[G_DK].g.data;
  gt.dv = gb.out[G_DV].g.data;
  gt.dsinks = gb.dsink.data;
  memcpy(gt.do_stride, x->ap.o_stride, sizeof gt.do_stride);
  memcpy(gt.dq_stride, x->ap.q_stride, sizeof gt.dq_stride);
  memcpy(gt.dk_stride, x->ap.k_stride, sizeof gt.dk_stride);
  memcpy(gt.dv_stride, x->ap.v_stride, sizeof gt.dv_stride);
  char err[512] = "";
  double t0 = ac_now();
  h->stage = AC_HX_IN_RUN;
  int rc = g->fn(&x->ap, &tt, &gt, err, sizeof err);
  h->stage = 0;
  h->kernel_ms = (ac_now() - t0) * 1e3;
  err[sizeof err - 1] = 0;
  h->guard_ok = grad_check(g, &b, &gb);
  h->status = rc ? AC_RUN_KERNEL_ERROR : AC_RUN_OK;
  if (rc && err[0]) snprintf(h->msg, sizeof h->msg, "%s", err);
  else if (rc) snprintf(h->msg, sizeof h->msg, "run_backward() returned %d without a message", rc);
  grad_free(&b, &gb);
  h->done = 1;
  return 0;
}

static int grad_body_child(void *arg)
{
  ac_hx_child_stdout();
  grad_body(arg);
  fflush(stdout);
  return 0;
}

const char *ac_harness_backward_refusal(const ac_kernel *k, const ac_case *c)
{
  if (k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT) return ac_exec_backward_refusal(k, c);
  if (!ac_kernel_backward(k)) return "the kernel declares no backward (ATTNCHECK_CAP_BACKWARD, run_backward)";
  if (k->abi->memory == ATTNCHECK_MEM_CUDA) return "backward runs of CUDA kernels are not supported";
  if (c->p.f.used & AC_FEAT_PAGED) return "a paged KV cache gets no backward (an inference layout; docs/backward.md §7)";
  if (ac_problem_quantized(&c->p)) return "quantized tensors get no backward (an inference cache; docs/quantized.md)";
  uint32_t missing = c->p.f.used & ~ac_kernel_backward_caps(k) & AC_FEAT_KNOWN;
  if (missing) {
    static _Thread_local char why[160];
    char names[120];
    snprintf(why, sizeof why, "the kernel's backward does not take %s (backward_caps)",
             ac_feat_list(missing, names, sizeof names));
    return why;
  }
  return NULL;
}

static void grad_collect(const grad_ctx *g, const ac_child_outcome *oc, ac_grad_run_result *r)
{
  const grad_head *gh = (const grad_head *)g->x.area;
  ac_run_result rr;
  ac_hx_result_reset(&rr, g->x.c->p.dtype);
  int ok = ac_hx_collect_status(&gh->h, oc, g->x.o->timeout_s, &rr);
  r->status = rr.status;
  r->sig = rr.sig;
  memcpy(r->msg, rr.msg, sizeof r->msg);
  memcpy(r->guard_msg, rr.guard_msg, sizeof r->guard_msg);
  r->guard_ok = rr.guard_ok;
  r->kernel_ms = rr.kernel_ms;
  if (!ok) return;
  for (int t = 0; t < G_N; t++) {
    size_t bytes = (size_t)g->count[t] * (t < 3 ? ac_dtype_size(r->dtype) : sizeof(float));
    void *dst = ac_xmalloc(bytes ? bytes : 1);
    memcpy(dst, g->x.area + g->off[t], bytes);
    if (t < 3) r->g[t] = dst;
    else r->dsinks = dst;
    r->count[t] = g->count[t];
    r->n_unwritten[t] = gh->unwritten[t];
  }
}

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

static int run_backward(const ac_kernel *k, const ac_case *c, const void *o, const float *lse, const ac_run_opts *opts,
                        ac_grad_run_result *r, ac_err *e)
{
  ac_run_opts defaults;
  if (!opts) ac_run_opts_init(&defaults), opts = &defaults;
  ac_run_opts ro = *opts;
  ro.want_lse = 1;
  ro.prefill_alt = 0;
  ro.layout_fill = AC_LFILL_UNOWNED;
  memset(r, 0, sizeof *r);
  r->guard_ok = 1;
  r->dtype = c->p.dtype;
  const char *why = ac_harness_backward_refusal(k, c);
  if (why) {
    r->status = AC_RUN_UNSUPPORTED;
    snprintf(r->msg, sizeof r->msg, "%s", why);
    return 0;
  }
  int exec = k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT;
  if (exec && c->dout && o && lse) return ac_exec_run_backward(k, c, o, lse, &ro, r, e);
  grad_ctx g;
  memset(&g, 0, sizeof g);
  if (!c->dout || !o || !lse || exec || ac_hx_prepare(&g.x, k, c, &ro, e)) {
    if (!c->dout || !o || !lse) ac_err_set(e, "the case has no dO (member do; attncheck gen --grad)");
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "%s", e->msg);
    return -1;
  }
  g.fn = ac_kernel_backward(k);
  g.o = o;
  g.lse = lse;
  const ac_counts *cn = &g.x.cn;
  int64_t counts[G_N] = {cn->q, cn->k, cn->v, c->p.f.used & AC_FEAT_SINKS ? c->p.heads : 0};
  size_t at = round64(sizeof(grad_head));
  for (int t = 0; t < G_N; t++) {
    g.count[t] = counts[t];
    g.off[t] = at;
    at += round64((size_t)counts[t] * (t < 3 ? ac_dtype_size(c->p.dtype) : sizeof(float)));
  }
  g.total = at;
  ac_child_outcome oc;
  memset(&oc, 0, sizeof oc);
  ac_err pe;
  if (ro.in_process) {
    g.x.area = ac_xcalloc(1, g.total);
    grad_body(&g);
  } else {
    g.x.area = ac_shared_alloc(g.total, &pe);
    if (!g.x.area || ac_child_run(grad_body_child, &g, ro.timeout_s, 1, &oc, &pe)) {
      if (g.x.area) ac_shared_free(g.x.area, g.total);
      r->status = AC_RUN_HARNESS_ERROR;
      snprintf(r->msg, sizeof r->msg, "%s", pe.msg);
      return ac_err_set(e, "%s", pe.msg);
    }
  }
  grad_collect(&g, &oc, r);
  if (ro.in_process) free(g.x.area);
  else ac_shared_free(g.x.area, g.total);
  if (r->status == AC_RUN_HARNESS_ERROR) return ac_err_set(e, "%s", r->msg);
  return 0;
}

int ac_harness_run_backward(const ac_kernel *k, const ac_case *c, const void *o, const float *lse,
                            const ac_run_opts *opts, ac_grad_run_result *r, ac_err *e)
{
  int rc = run_backward(k, c, o, lse, opts, r, e);
  /* what the kernel said is text for every output; what it left running goes with the case */
  ac_str_escape_inplace(r->msg, sizeof r->msg);
  ac_str_escape_inplace(r->guard_msg, sizeof r->guard_msg);
  if (rc < 0 && e) ac_str_escape_inplace(e->msg, sizeof e->msg);
  ac_child_reap_strays();
  return rc;
}

void ac_grad_run_result_free(ac_grad_run_result *r)
{
  if (!r) return;
  for (int t = 0; t < 3; t++) free(r->g[t]), r->g[t] = NULL;
  free(r->dsinks);
  r->dsinks = NULL;
}
