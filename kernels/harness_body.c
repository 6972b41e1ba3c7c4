/* harness_body.c: the body of a harness run (in the child, or in process): the kernel's
 * guarded buffers, the run itself, and the checks of guards, inputs and unwritten outputs,
 * all reported through the result area (harness_priv.h). */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "accuda.h"
#include "harness_priv.h"
#include "layout.h"
#include "quant.h"
#include "quant_view.h"
#include "variants.h"

static void appendf(char *buf, size_t n, const char *fmt, const char *tensor, const char *what, int64_t a, int64_t b)
{
  size_t len = strlen(buf);
  if (len + 1 >= n) return;
  snprintf(buf + len, n - len, fmt, len ? "; " : "", tensor, what, (long long)a, (long long)b);
}

/* Checks both margins of g; appends a description to msg. 1 when intact. */
int ac_hx_guards_ok(const ac_guarded *g, const char *tensor, char *msg, size_t n)
{
  uint64_t nan = ac_nan_bits(g->dtype);
  size_t es = ac_dtype_size(g->dtype);
  const unsigned char *pre = g->alloc;
  const unsigned char *post = (const unsigned char *)g->data + g->n * es;
  int ok = 1;
  int64_t bad = 0, nearest = -1;
  for (size_t i = 0; i < g->guard; i++)      /* i = distance before the first element, minus one */
    if (ac_load_bits(g->dtype, pre, g->guard - 1 - i) != nan) {
      if (nearest < 0) nearest = (int64_t)i + 1;
      bad++;
    }
  if (bad) {
    ok = 0;
    appendf(msg, n, "%s%s: %s (%lld element(s), nearest at -%lld)", tensor, "guard before the tensor overwritten", bad, nearest);
  }
  bad = 0;
  nearest = -1;
  for (size_t i = 0; i < g->guard; i++)
    if (ac_load_bits(g->dtype, post, i) != nan) {
      if (nearest < 0) nearest = (int64_t)i;
      bad++;
    }
  if (bad) {
    ok = 0;
    appendf(msg, n, "%s%s: %s (%lld element(s), first at end+%lld)", tensor, "guard after the tensor overwritten", bad, nearest);
  }
  return ok;
}

/* Writes into the gaps of a strided span (positions that are no element): overwrites the
 * element positions with NaN, then every position of the span must hold the NaN pattern. */
int ac_hx_gaps_ok(const hx_tensor *t, uint64_t nan, char *msg, size_t n)
{
  const ac_guarded *g = &t->g;
  if ((int64_t)g->n == t->count) return 1;   /* dense: no gaps */
  void *fill = ac_xmalloc((size_t)t->count * ac_dtype_size(g->dtype));
  for (int64_t i = 0; i < t->count; i++) ac_store_bits(g->dtype, fill, (size_t)i, nan);
  ac_scatter_strided(g->dtype, fill, t->dim[0], t->dim[1], t->dim[2], t->dim[3], t->stride, g->data);
  free(fill);
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < g->n; i++)
    if (ac_load_bits(g->dtype, g->data, i) != nan) {
      if (first < 0) first = (int64_t)i;
      bad++;
    }
  if (bad) appendf(msg, n, "%s%s: %s (%lld position(s), first at offset %lld)", t->name, "wrote into the gaps of its strided layout", bad, first);
  return bad == 0;
}

/* An input must come back exactly as it was handed over. */
int ac_hx_input_ok(const hx_tensor *t, char *msg, size_t n)
{
  const ac_guarded *g = &t->g;
  size_t es = ac_dtype_size(g->dtype);
  unsigned char *back = ac_xmalloc((size_t)t->count * es);
  ac_gather_strided(g->dtype, g->data, t->dim[0], t->dim[1], t->dim[2], t->dim[3], t->stride, back);
  int64_t bad = 0, first = -1;
  if (memcmp(back, t->dense, (size_t)t->count * es) != 0)
    for (int64_t i = 0; i < t->count; i++)
      if (memcmp(back + (size_t)i * es, (const unsigned char *)t->dense + (size_t)i * es, es) != 0) {
        if (first < 0) first = i;
        bad++;
      }
  free(back);
  if (bad) appendf(msg, n, "%s%s: %s (%lld element(s), first at dense index %lld)", t->name, "kernel wrote into its input", bad, first);
  int ok = bad == 0;
  ok &= ac_hx_gaps_ok(t, ac_nan_bits(g->dtype), msg, n);
  return ok;
}

/* Asks supports() (if the kernel has it); 0 with the area finished when the answer is no. */
int ac_hx_supported(const ac_hx_ctx *x, ac_hx_head *h)
{
  const attncheck_kernel *kk = x->k->abi;
  if (!kk->supports) return 1;
  char why[512] = "";
  h->stage = AC_HX_IN_SUPPORTS;
  int yes = kk->supports(&x->ap, why, sizeof why);
  h->stage = 0;
  if (yes) return 1;
  why[sizeof why - 1] = 0;
  h->status = AC_RUN_UNSUPPORTED;
  snprintf(h->msg, sizeof h->msg, "%s", why[0] ? why : "the kernel does not support this problem");
  h->done = 1;
  return 0;
}

/* ABI 5 precision_of: the class of the path the kernel takes for this problem, into the area
 * (asked like supports(): a crash or hang there is reported as in supports()). */
static void hx_precision_of(const ac_hx_ctx *x, ac_hx_head *h)
{
  attncheck_precision_fn fn = ac_kernel_precision_of(x->k);
  if (!fn) return;
  char cls[AC_RUN_CLASS_MAX] = "";
  h->stage = AC_HX_IN_SUPPORTS;
  int named = fn(&x->ap, cls, sizeof cls);
  h->stage = 0;
  cls[sizeof cls - 1] = 0;
  if (named) memcpy(h->precision, cls, sizeof h->precision);
}

hx_tensor ac_hx_tensor_of(const char *name, ac_dtype t, int64_t B, int64_t H, int64_t T, int64_t D,
                              const int64_t *stride, int64_t count, const void *dense)
{
  hx_tensor u = {name, t, {B, H, T, D}, stride, count, dense, ac_strided_span(B, H, T, D, stride), {0}};
  return u;
}

/* The tensors of the case: one line each; an input added here is allocated, filled,
 * handed over and checked like the others. */
/* The variant tensors: bias and mask [extent_b][extent_h][tq][tk] with the ABI's strides (0
 * over a broadcast extent); slopes, sinks and descales as one dense row of binary32. The
 * boolean mask's bytes travel as a one-byte dtype (its guards hold that dtype's NaN byte). */
static void hx_describe_variants(const ac_hx_ctx *x, hx_bufs *b)
{
  static const int64_t row[4] = {0, 0, 0, 1};
  const ac_case *c = x->c;
  const ac_problem *p = &c->p;
  const attncheck_problem *ap = &x->ap;
  const ac_features *f = &p->f;
  if (f->used & AC_FEAT_BIAS)
    b->in[HX_BIAS] = ac_hx_tensor_of("bias", f->bias_dtype, f->bias_b, f->bias_h, p->tq, ac_bias_cols(p), ap->bias_stride,
                                  f->bias_b * f->bias_h * p->tq * ac_bias_cols(p), c->bias);
  if (f->used & AC_FEAT_BOOL_MASK)
    b->in[HX_MASK] = ac_hx_tensor_of("bool_mask", AC_E4M3, f->mask_b, f->mask_h, p->tq, ac_bias_cols(p), ap->bool_mask_stride,
                                  f->mask_b * f->mask_h * p->tq * ac_bias_cols(p), c->bool_mask);
  int64_t ns = ac_feat_tensor_count(p, AC_FT_SLOPES), nd = p->batch * p->kv_heads;
  if (f->used & AC_FEAT_ALIBI) b->in[HX_SLOPES] = ac_hx_tensor_of("alibi_slopes", AC_F32, 1, 1, 1, ns, row, ns, c->alibi_slopes);
  if (f->used & AC_FEAT_SINKS) b->in[HX_SINKS] = ac_hx_tensor_of("sinks", AC_F32, 1, 1, 1, p->heads, row, p->heads, c->sinks);
  if (f->used & AC_FEAT_DESCALE) {
    b->in[HX_DESCALE_Q] = ac_hx_tensor_of("descale_q", AC_F32, 1, 1, 1, nd, row, nd, c->descale[0]);
    b->in[HX_DESCALE_K] = ac_hx_tensor_of("descale_k", AC_F32, 1, 1, 1, nd, row, nd, c->descale[1]);
    b->in[HX_DESCALE_V] = ac_hx_tensor_of("descale_v", AC_F32, 1, 1, 1, nd, row, nd, c->descale[2]);
  }
}

/* Serving layouts (ABI 3): the int32 arrays travel as a four-byte dtype; q, k and v come with
 * the memory their sequences do not own filled as the run's layout_fill says (harness_layout.c). */
static void hx_describe_layout(const ac_hx_ctx *x, hx_bufs *b)
{
  static const int64_t row[4] = {0, 0, 0, 1};
  const ac_case *c = x->c;
  const ac_problem *p = &c->p;
  if (!c->lay) return;
  int64_t n = p->l.nseq, nb = n * p->l.max_pages;
  b->in[HX_CU_Q] = ac_hx_tensor_of("cu_seqlens_q", AC_F32, 1, 1, 1, n + 1, row, n + 1, c->lay->cu_q);
  if (c->lay->cu_k) b->in[HX_CU_K] = ac_hx_tensor_of("cu_seqlens_k", AC_F32, 1, 1, 1, n + 1, row, n + 1, c->lay->cu_k);
  if (c->lay->block_table) {
    b->in[HX_BLOCKS] = ac_hx_tensor_of("block_table", AC_F32, 1, 1, 1, nb, row, nb, c->lay->block_table);
    b->in[HX_CACHE_LENS] = ac_hx_tensor_of("cache_seqlens", AC_F32, 1, 1, 1, n, row, n, c->lay->cache_seqlens);
  }
  for (int t = 0; t < 3; t++) {
    b->filled[t] = ac_hx_layout_data(c, "qkv"[t], x->o->layout_fill);
    if (b->filled[t]) b->in[HX_Q + t].dense = b->filled[t];
  }
}

void ac_hx_describe(const ac_hx_ctx *x, hx_bufs *b)
{
  const ac_problem *p = &x->c->p;
  const attncheck_problem *ap = &x->ap;
  ac_dtype t = ac_tensor_dtype(p, 'o');
  memset(b, 0, sizeof *b);
  b->in[HX_Q] = ac_hx_tensor_of("q", ac_tensor_dtype(p, 'q'), p->batch, p->heads, p->tq, p->dk, ap->q_stride, x->cn.q, x->c->q);
  b->in[HX_K] = ac_hx_tensor_of("k", ac_tensor_dtype(p, 'k'), p->batch, p->kv_heads, p->tk, p->dk, ap->k_stride, x->cn.k, x->c->k);
  b->in[HX_V] = ac_hx_tensor_of("v", ac_tensor_dtype(p, 'v'), p->batch, p->kv_heads, p->tk, p->dv, ap->v_stride, x->cn.v, x->c->v);
  hx_describe_variants(x, b);
  hx_describe_layout(x, b);
  ac_hx_describe_quant(x, b);
  b->o = ac_hx_tensor_of("o", t, p->batch, p->heads, p->tq, p->dv, ap->o_stride, x->cn.o, NULL);
  b->guard = (size_t)(x->o->guard < AC_MIN_GUARD ? AC_MIN_GUARD : x->o->guard);
  /* Outputs (elements and gaps) hold their own NaN; guards, input gaps: ac_nan_bits. */
  b->fill = x->o->prefill_alt ? ac_harness_prefill_alt_bits(t) : ac_harness_prefill_bits(t);
  b->lfill = x->o->prefill_alt ? ac_harness_prefill_alt_bits(AC_F32) : ac_harness_prefill_bits(AC_F32);
}

void ac_hx_free(hx_bufs *b)
{
  for (int i = 0; i < HX_NIN; i++) ac_guarded_free(&b->in[i].g);
  ac_guarded_free(&b->o.g);
  ac_guarded_free(&b->lse);
  ac_guarded_free(&b->drop);
  for (int t = 0; t < 3; t++) free(b->filled[t]), free(b->qggml[t]), free(b->qpacked[t]);
  for (int t = 0; t < 3; t++)
    for (int k = 0; k < 4; k++) ac_guarded_free(&b->st[t][k].g);
  if (b->qfill) ac_case_free(b->qfill), free(b->qfill);
}

/* The guard of input i: a paged cache's k and v get at least one page on each side, so that a
 * block-table id of -1 or num_pages dereferenced (an entry past a sequence's pages) reads NaN. */
static size_t input_guard(const ac_hx_ctx *x, const hx_bufs *b, int i)
{
  const attncheck_problem *ap = &x->ap;
  if (!(x->c->p.f.used & AC_FEAT_PAGED) || (i != HX_K && i != HX_V)) return b->guard;
  size_t page = (size_t)(i == HX_K ? ap->k_stride[0] : ap->v_stride[0]);
  return page > b->guard ? page : b->guard;
}

/* Allocates the spans with guards, pre-fills the outputs and copies the inputs in. */
int ac_hx_setup(const ac_hx_ctx *x, hx_bufs *b, ac_err *e)
{
  for (int i = 0; i < HX_NIN; i++)
    if (b->in[i].dense && ac_guarded_alloc(&b->in[i].g, b->in[i].dtype, (size_t)b->in[i].span, input_guard(x, b, i), e))
      return -1;
  if (ac_guarded_alloc(&b->o.g, b->o.dtype, (size_t)b->o.span, b->guard, e)) return -1;
  if (ac_hx_store_setup(b, b->guard, e)) return -1;   /* quantize-on-store outputs */
  if (x->o->want_lse && ac_guarded_alloc(&b->lse, AC_F32, (size_t)x->cn.rows, b->guard, e)) return -1;
  int64_t nm = ac_feat_tensor_count(&x->c->p, AC_FT_DROPOUT_MASK);   /* a byte per element, e4m3's guards */
  if (nm > 0 && ac_guarded_alloc(&b->drop, AC_E4M3, (size_t)nm, b->guard, e)) return -1;
  if (nm > 0) memset(b->drop.data, AC_HX_MASK_FILL, (size_t)nm);
  for (size_t i = 0; i < b->o.g.n; i++) ac_store_bits(b->o.dtype, b->o.g.data, i, b->fill);
  for (size_t i = 0; i < b->lse.n; i++) ac_store_bits(AC_F32, b->lse.data, i, b->lfill);
  for (int i = 0; i < HX_NIN; i++) {
    hx_tensor *u = &b->in[i];
    if (!u->dense) continue;
    ac_scatter_strided(u->dtype, u->dense, u->dim[0], u->dim[1], u->dim[2], u->dim[3], u->stride, u->g.data);
  }
  return 0;
}

/* A CUDA kernel: device copies with their own guards; the spans come back into the host
 * buffers. -1 with the area finished when the run could not happen or crashed; otherwise
 * whether run() failed, and *ok cleared when a device guard was overwritten. */
static int hx_run_cuda(ac_hx_ctx *x, hx_bufs *b, float *lse, char *err, size_t n, int *ok)
{
  ac_hx_head *h = (ac_hx_head *)x->area;
  ac_cuda_case cc = {.k = x->k->abi,
                     .p = &x->ap,
                     .q_span = b->in[HX_Q].g.data,
                     .k_span = b->in[HX_K].g.data,
                     .v_span = b->in[HX_V].g.data,
                     .q_n = (size_t)b->in[HX_Q].span,
                     .k_n = (size_t)b->in[HX_K].span,
                     .v_n = (size_t)b->in[HX_V].span,
                     .o_span = b->o.g.data,
                     .o_n = (size_t)b->o.span,
                     .lse = lse,
                     .lse_n = x->o->want_lse ? (size_t)x->cn.rows : 0,
                     .device = x->o->device,
                     .guard = b->guard};
  int cr = ac_cuda_run_case(&cc, &h->kernel_ms, err, n);
  err[n - 1] = 0;
  if (cr == AC_CUDA_RUN_CRASH || cr == AC_CUDA_RUN_SETUP_ERROR) {
    h->status = cr == AC_CUDA_RUN_CRASH ? AC_RUN_CRASH : AC_RUN_UNSUPPORTED;
    snprintf(h->msg, sizeof h->msg, "%s", err[0] ? err : "CUDA run failed");
    h->done = 1;
    return -1;
  }
  if (cr == AC_CUDA_RUN_GUARD) {
    *ok = 0;
    size_t len = strlen(h->guard_msg);
    snprintf(h->guard_msg + len, sizeof h->guard_msg - len, "%sdevice: %s", len ? "; " : "", err);
    err[0] = 0;
  }
  return cr == AC_CUDA_RUN_KERNEL_ERROR;
}

/* The attncheck_tensors of the buffers (o and lse as the forward run has them). */
void ac_hx_tensors(const ac_hx_ctx *x, hx_bufs *b, attncheck_tensors *t)
{
  memset(t, 0, sizeof *t);
  t->q = b->in[HX_Q].g.data;
  t->k = b->in[HX_K].g.data;
  t->v = b->in[HX_V].g.data;
  t->o = b->o.g.data;
  t->lse = x->o->want_lse ? (float *)b->lse.data : NULL;
  t->bias = b->in[HX_BIAS].g.data;
  t->bool_mask = b->in[HX_MASK].g.data;
  t->alibi_slopes = b->in[HX_SLOPES].g.data;
  t->sinks = b->in[HX_SINKS].g.data;
  t->descale_q = b->in[HX_DESCALE_Q].g.data;
  t->descale_k = b->in[HX_DESCALE_K].g.data;
  t->descale_v = b->in[HX_DESCALE_V].g.data;
  t->cu_seqlens_q = b->in[HX_CU_Q].g.data;
  t->cu_seqlens_k = b->in[HX_CU_K].g.data;
  t->block_table = b->in[HX_BLOCKS].g.data;
  t->cache_seqlens = b->in[HX_CACHE_LENS].g.data;
  t->dropout_mask = b->drop.data;
}

/* Hands the buffers to the kernel: -1 with the area finished when there is nothing left to
 * check (hx_run_cuda); otherwise 0 with *rc what run() returned. */
static int hx_run(ac_hx_ctx *x, hx_bufs *b, char *err, size_t n, int *rc, int *ok)
{
  ac_hx_head *h = (ac_hx_head *)x->area;
  const attncheck_kernel *kk = x->k->abi;
  attncheck_tensors tt;
  ac_hx_tensors(x, b, &tt);
  if (kk->memory == ATTNCHECK_MEM_CUDA) {
    *rc = hx_run_cuda(x, b, tt.lse, err, n, ok);
    return *rc < 0 ? -1 : 0;
  }
  double t0 = ac_now();
  h->stage = AC_HX_IN_RUN;
  const ac_quant_kernel *qk = ac_problem_quantized(&x->c->p) ? ac_quant_kernel_of(kk) : NULL;
  ac_qview v, sv;
  if (ac_problem_quantized(&x->c->p)) {
    ac_hx_quant_view(b, &x->c->p, &v);
    ac_hx_store_view(b, &x->c->p, &sv);
    if (ac_quant_features(&x->c->p) & AC_FEAT_QUANT_STORE) tt.store = &sv;   /* quantize-on-store outputs */
  }
  if (qk) {   /* quantized tensors: their codes and scales (quant_view.h), never their values */
    *rc = qk->run_quant(&x->ap, &tt, &v, err, n);
  } else if (ac_problem_quantized(&x->c->p) && x->k->kind == AC_KIND_PLUGIN && ac_kernel_kv_formats(x->k, NULL)) {
    int read = 0;   /* a plugin that declares formats: the same view as tensors.quant (ABI 5) */
    for (int i = 0; i < 3; i++) read |= x->c->p.quant[i].fmt && !x->c->p.quant[i].store;
    tt.quant = read ? &v : NULL;
    *rc = kk->run(&x->ap, &tt, err, n);
  } else if (ac_problem_quantized(&x->c->p)) {
    snprintf(err, n, "the kernel takes no quantized tensor");
    *rc = 1;
  } else {
    *rc = kk->run(&x->ap, &tt, err, n);
  }
  h->stage = 0;
  h->kernel_ms = (ac_now() - t0) * 1e3;
  err[n - 1] = 0;
  return 0;
}

/* Every guard intact, every input as it was handed over; 1 when so. */
int ac_hx_check_guards(const ac_hx_ctx *x, const hx_bufs *b, ac_hx_head *h)
{
  int ok = 1;
  for (int i = 0; i < HX_NIN; i++)
    if (b->in[i].dense) ok &= ac_hx_guards_ok(&b->in[i].g, b->in[i].name, h->guard_msg, sizeof h->guard_msg);
  ok &= ac_hx_guards_ok(&b->o.g, b->o.name, h->guard_msg, sizeof h->guard_msg);
  if (x->o->want_lse) ok &= ac_hx_guards_ok(&b->lse, "lse", h->guard_msg, sizeof h->guard_msg);
  if (b->drop.data) ok &= ac_hx_guards_ok(&b->drop, "dropout_mask", h->guard_msg, sizeof h->guard_msg);
  for (int i = 0; i < HX_NIN; i++)
    if (b->in[i].dense) ok &= ac_hx_input_ok(&b->in[i], h->guard_msg, sizeof h->guard_msg);
  return ok;
}

/* Output into the area: gather, count the elements still holding the pre-fill pattern, then
 * the gaps; lse likewise. 1 when the gaps are intact. */
static int hx_read_back(const ac_hx_ctx *x, hx_bufs *b, ac_hx_head *h)
{
  ac_dtype t = b->o.dtype;
  unsigned char *o = x->area + x->l.o_off;
  unsigned char *flags = x->area + x->l.flags_off;
  ac_gather_strided(t, b->o.g.data, b->o.dim[0], b->o.dim[1], b->o.dim[2], b->o.dim[3], b->o.stride, o);
  uint64_t nan = ac_nan_bits(t);
  int64_t nu = 0, ng = 0;
  for (int64_t i = 0; i < b->o.count; i++) {
    uint64_t bits = ac_load_bits(t, o, (size_t)i);
    flags[i] = bits == b->fill;
    nu += flags[i];
    ng += bits == nan && nan != b->fill;
  }
  h->n_unwritten = nu;
  h->n_guard_nan = ng;
  int ok = ac_hx_gaps_ok(&b->o, b->fill, h->guard_msg, sizeof h->guard_msg);
  if (x->o->want_lse) {
    float *lse = (float *)(x->area + x->l.lse_off);
    memcpy(lse, b->lse.data, (size_t)x->cn.rows * sizeof(float));
    int64_t nl = 0;
    for (int64_t i = 0; i < x->cn.rows; i++) nl += ac_load_bits(AC_F32, lse, (size_t)i) == b->lfill;
    h->n_lse_unwritten = nl;
  }
  if (b->drop.data) {   /* dropout: every element 0 or 1 */
    memcpy(x->area + x->l.drop_off, b->drop.data, b->drop.n);
    int64_t nb = 0;
    for (size_t i = 0; i < b->drop.n; i++) nb += ((const uint8_t *)b->drop.data)[i] > 1;
    h->n_mask_unwritten = nb;
  }
  return ok;
}

/* The body of a run: in the child (or in process). Everything it reports goes to the area. */
int ac_hx_body(void *arg)
{
  ac_hx_ctx *x = arg;
  ac_hx_head *h = (ac_hx_head *)x->area;
  h->guard_ok = 1;
  if (!ac_hx_supported(x, h)) return 0;
  hx_precision_of(x, h);
  hx_bufs b;
  ac_err e;
  ac_hx_describe(x, &b);
  if (ac_hx_setup(x, &b, &e)) {
    ac_hx_free(&b);
    h->status = AC_RUN_HARNESS_ERROR;
    snprintf(h->msg, sizeof h->msg, "cannot allocate the kernel's buffers: %.400s", e.msg);
    h->done = 1;
    return 0;
  }
  char err[512] = "";
  int rc = 0, ok = 1;
  if (hx_run(x, &b, err, sizeof err, &rc, &ok)) {
    ac_hx_free(&b);
    return 0;
  }
  ok &= ac_hx_check_guards(x, &b, h);
  ok &= ac_hx_store_guards_ok(&b, h->guard_msg, sizeof h->guard_msg);
  ok &= hx_read_back(x, &b, h);
  ac_hx_store_read_back(x, &b);
  h->guard_ok = ok;
  const size_t ul = sizeof ATTNCHECK_UNSUPPORTED - 1;
  if (rc != 0 && ac_kernel_run_may_refuse(x->k) && !strncmp(err, ATTNCHECK_UNSUPPORTED, ul)) {
    /* ABI 5: run() refuses the case after seeing its tensors (the guards were checked above) */
    const char *why = err + ul + (err[ul] == ' ');
    h->status = AC_RUN_UNSUPPORTED;
    snprintf(h->msg, sizeof h->msg, "run(): %s", why[0] ? why : "refused the case");
  } else if (rc != 0) {
    h->status = AC_RUN_KERNEL_ERROR;
    if (err[0]) snprintf(h->msg, sizeof h->msg, "%s", err);
    else snprintf(h->msg, sizeof h->msg, "run() returned %d without a message", rc);
  } else {
    h->status = AC_RUN_OK;
  }
  ac_hx_free(&b);
  h->done = 1;
  return 0;
}
