/* api_case.c: libattncheck's cases: a problem and tensors as a kernel gets them (the ABI's
 * attncheck_problem and attncheck_tensors) into a case, and case files. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "api_int.h"
#include "harness.h"
#include "layout.h"
#include "quant.h"
#include "quant_view.h"
#include "variants.h"

static int all_zero(const int64_t s[4])
{
  return !s[0] && !s[1] && !s[2] && !s[3];
}

void ac_api_gather(const ac_case *c, ac_dtype t, const void *src, int64_t H, int64_t T, int64_t D, const int64_t s[4],
                   void *dense)
{
  int64_t B = c->p.f.used & AC_FEAT_LAYOUTS ? 1 : c->p.batch;
  size_t es = ac_dtype_size(t), n = 0;
  const char *in = src;
  char *out = dense;
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t i = 0; i < T; i++) {
        int64_t off = b * s[0] + h * s[1] + i * s[2];
        if (s[3] == 1) {   /* a contiguous row: one copy */
          memcpy(out + n * es, in + (size_t)off * es, (size_t)D * es);
          n += (size_t)D;
          continue;
        }
        for (int64_t x = 0; x < D; x++, n++) memcpy(out + n * es, in + (size_t)(off + x * s[3]) * es, es);
      }
}

/* The same for a paged k or v: [num_pages][page_size][kv_heads][d] through strides s (page,
 * head, slot, element) into the dense carrier [1][kv_heads][num_pages * page_size][d]. */
static void gather_paged(const ac_problem *p, ac_dtype t, const void *src, int64_t D, const int64_t s[4], void *dense)
{
  size_t es = ac_dtype_size(t), n = 0;
  const char *in = src;
  char *out = dense;
  int64_t ps = p->l.page_size;
  for (int64_t h = 0; h < p->kv_heads; h++)
    for (int64_t i = 0; i < p->tk; i++) {
      int64_t off = (i / ps) * s[0] + h * s[1] + (i % ps) * s[2];
      for (int64_t x = 0; x < D; x++, n++) memcpy(out + n * es, in + (size_t)(off + x * s[3]) * es, es);
    }
}

static int check_dtype(int32_t d, const char *what, ac_err *e)
{
  if (d < 0 || d >= AC_NDTYPES) return ac_err_set(e, "problem.%s: unknown dtype %d", what, (int)d);
  return 0;
}

/* The features of a (its ABI 2 fields) into p->f. */
static int set_features(const attncheck_problem *a, ac_problem *p, ac_err *e)
{
  ac_features_plain(p);
  uint32_t used = a->features;
  if (used & ~(uint32_t)(AC_FEAT_ALL | AC_FEAT_LAYOUTS))
    return ac_err_set(e, "problem.features: unknown bits 0x%x", used & ~(uint32_t)(AC_FEAT_ALL | AC_FEAT_LAYOUTS));
  if ((used & AC_FEAT_LAYOUTS) == AC_FEAT_LAYOUTS) return ac_err_set(e, "problem.features: both VARLEN and PAGED");
  ac_features *f = &p->f;
  if (used & AC_FEAT_MIXED_DTYPES) {
    const int32_t d[4] = {a->q_dtype, a->k_dtype, a->v_dtype, a->o_dtype};
    const char *nm[4] = {"q_dtype", "k_dtype", "v_dtype", "o_dtype"};
    ac_dtype dd[4];
    for (int x = 0; x < 4; x++) {
      if (check_dtype(d[x], nm[x], e) < 0) return -1;
      dd[x] = (ac_dtype)d[x];
    }
    if (ac_features_set_dtypes(p, dd, e) < 0) return -1;
  }
  f->used = used & ~(uint32_t)AC_FEAT_LAYOUTS;
  if (used & AC_FEAT_WINDOW) {
    f->win_top_left = a->window_align == ATTNCHECK_ALIGN_TOP_LEFT;
    f->win_left = a->window_left;
    f->win_right = a->window_right;
  }
  if (used & AC_FEAT_SOFTCAP) f->softcap = a->softcap;
  if (used & AC_FEAT_ALIBI) f->alibi_per_batch = a->alibi_per_batch != 0;
  int64_t B = used & AC_FEAT_LAYOUTS ? 1 : a->batch;
  if (used & AC_FEAT_BIAS) {
    if (check_dtype(a->bias_dtype, "bias_dtype", e) < 0) return -1;
    f->bias_dtype = (ac_dtype)a->bias_dtype;
    f->bias_b = a->bias_stride[0] ? B : 1;
    f->bias_h = a->bias_stride[1] ? a->heads : 1;
  }
  if (used & AC_FEAT_BOOL_MASK) {
    f->mask_b = a->bool_mask_stride[0] ? B : 1;
    f->mask_h = a->bool_mask_stride[1] ? a->heads : 1;
  }
  return 0;
}

/* The layout arrays of a and t into c (before the tensors are allocated). */
static int set_layout(const attncheck_problem *a, const attncheck_tensors *t, ac_case *c, ac_err *e)
{
  int paged = (a->features & AC_FEAT_PAGED) != 0;
  int64_t n = a->batch;
  if (n < 1 || n > INT32_MAX) return ac_err_set(e, "problem.batch: %lld sequences", (long long)n);
  if (!t->cu_seqlens_q) return ac_err_set(e, "tensors.cu_seqlens_q is NULL");
  if (!paged && !t->cu_seqlens_k) return ac_err_set(e, "tensors.cu_seqlens_k is NULL");
  if (paged && (!t->block_table || !t->cache_seqlens))
    return ac_err_set(e, "tensors.block_table or cache_seqlens is NULL");
  if (paged && (a->page_size < 1 || a->num_pages < 1 || a->max_pages < 1 || a->max_pages > INT32_MAX / n))
    return ac_err_set(e, "problem.page_size, num_pages and max_pages must be >= 1");
  ac_layout_alloc(c, paged ? AC_FEAT_PAGED : AC_FEAT_VARLEN, n, paged ? a->page_size : 0, paged ? a->max_pages : 0);
  memcpy(c->lay->cu_q, t->cu_seqlens_q, (size_t)(n + 1) * sizeof(int32_t));
  if (paged) {
    c->p.l.num_pages = a->num_pages;
    memcpy(c->lay->block_table, t->block_table, (size_t)(n * a->max_pages) * sizeof(int32_t));
    memcpy(c->lay->cache_seqlens, t->cache_seqlens, (size_t)n * sizeof(int32_t));
  } else {
    memcpy(c->lay->cu_k, t->cu_seqlens_k, (size_t)(n + 1) * sizeof(int32_t));
  }
  if (c->lay->cu_q[n] != a->total_q)
    return ac_err_set(e, "cu_seqlens_q ends at %d but problem.total_q is %lld", (int)c->lay->cu_q[n],
                      (long long)a->total_q);
  if (!paged && c->lay->cu_k[n] != a->total_k)
    return ac_err_set(e, "cu_seqlens_k ends at %d but problem.total_k is %lld", (int)c->lay->cu_k[n],
                      (long long)a->total_k);
  ac_layout_finish(c);
  return 0;
}

/* The problem of d into c->p (and c->lay). */
static int set_problem(const attncheck_problem *a, const attncheck_tensors *t, uint32_t flags, ac_case *c, ac_err *e)
{
  ac_problem *p = &c->p;
  if (check_dtype(a->dtype, "dtype", e) < 0) return -1;
  if (a->mask < 0 || a->mask > 2) return ac_err_set(e, "problem.mask: unknown mask %d", (int)a->mask);
  p->dtype = (ac_dtype)a->dtype;
  p->mask = (ac_mask)a->mask;
  p->batch = a->batch;
  p->heads = a->heads;
  p->kv_heads = a->kv_heads;
  p->tq = a->tq;
  p->tk = a->tk;
  p->dk = a->dk;
  p->dv = a->dv;
  if (p->dk < 1) return ac_err_set(e, "problem.dk must be >= 1");
  p->scale_is_default = (flags & ATTNCHECK_CASE_DEFAULT_SCALE) != 0;
  p->scale = p->scale_is_default ? 1.0 / sqrt((double)p->dk) : a->scale;
  if (!isfinite(p->scale)) return ac_err_set(e, "problem.scale is not finite");
  if (set_features(a, p, e) < 0) return -1;
  if (ac_features_validate(p, e) < 0) return -1;
  if (a->features & AC_FEAT_LAYOUTS && set_layout(a, t, c, e) < 0) return -1;
  return 0;
}

/* The ABI's strides of tensor x of the case's problem (what a kernel would be given). */
static void ref_strides(const ac_case *c, char x, int64_t st[4])
{
  attncheck_problem a;
  ac_problem_to_abi(&c->p, &a);
  const int64_t *s = x == 'q' ? a.q_stride : x == 'k' ? a.k_stride : x == 'v' ? a.v_stride : a.o_stride;
  memcpy(st, s, 4 * sizeof *st);
}

void ac_api_gather_qkv(const ac_case *c, char x, ac_dtype t, const void *src, const int64_t st[4], void *dense)
{
  const ac_problem *p = &c->p;
  int64_t ref[4];
  ref_strides(c, x, ref);
  const int64_t *s = all_zero(st) ? ref : st;
  int kv = x == 'k' || x == 'v';
  int64_t H = kv ? p->kv_heads : p->heads, T = kv ? p->tk : p->tq, D = x == 'v' || x == 'o' ? p->dv : p->dk;
  if (kv && p->f.used & AC_FEAT_PAGED)
    gather_paged(p, t, src, D, s, dense);
  else
    ac_api_gather(c, t, src, H, T, D, s, dense);
}

void ac_api_dense_strides(const ac_case *c, char x, int64_t st[4])
{
  const ac_problem *p = &c->p;
  int kv = x == 'k' || x == 'v';
  int64_t H = kv ? p->kv_heads : p->heads, T = kv ? p->tk : p->tq, D = x == 'v' || x == 'o' ? p->dv : p->dk;
  st[3] = 1;
  st[2] = D;
  st[1] = T * D;
  st[0] = H * T * D;
}

/* The variant tensors of t into c (allocated by ac_features_alloc). */
static int gather_variants(const attncheck_problem *a, const attncheck_tensors *t, ac_case *c, ac_err *e)
{
  const void *src[AC_FT_N] = {t->bias,      t->bool_mask, t->alibi_slopes, t->sinks,
                              t->descale_q, t->descale_k, t->descale_v};
  for (int ft = 0; ft < AC_FT_N; ft++) {
    if (!(c->p.f.used & ac_feat_tensor_bit((ac_feat_tensor)ft))) continue;
    if (!src[ft])
      return ac_err_set(e, "tensors.%s is NULL but the problem uses it", ac_feat_tensor_name((ac_feat_tensor)ft));
    int64_t shape[4];
    size_t es;
    int nd = ac_feat_tensor_shape(&c->p, (ac_feat_tensor)ft, shape, &es);
    void *dst = *ac_feat_tensor_slot(c, (ac_feat_tensor)ft);
    if (ft == AC_FT_BIAS || ft == AC_FT_BOOL_MASK) {
      const int64_t *st = ft == AC_FT_BIAS ? a->bias_stride : a->bool_mask_stride;
      ac_dtype dt = ft == AC_FT_BIAS ? c->p.f.bias_dtype : AC_E4M3; /* a byte per element */
      const char *in = src[ft];
      size_t n = 0;
      for (int64_t b = 0; b < shape[0]; b++)
        for (int64_t h = 0; h < shape[1]; h++)
          for (int64_t i = 0; i < shape[2]; i++)
            for (int64_t j = 0; j < shape[3]; j++, n++)
              memcpy((char *)dst + n * es,
                     in + (size_t)(b * st[0] + h * st[1] + i * st[2] + j * st[3]) * ac_dtype_size(dt), es);
    } else {
      int64_t cnt = 1;
      for (int d = 0; d < nd; d++) cnt *= shape[d];
      memcpy(dst, src[ft], (size_t)cnt * es);
    }
  }
  return 0;
}

/* ---- quantized tensors (ABI 5's problem.q_format..., tensors.quant), read as a kernel is handed them ---- */

/* The specs of the quantized tensors of a and qt into p->quant (before the case is allocated). */
static int set_quant_specs(const attncheck_problem *a, const attncheck_quant *qt, ac_problem *p, ac_err *e)
{
  const int32_t fm[3] = {a->q_format, a->k_format, a->v_format};
  if (!qt) return ac_err_set(e, "problem names quantized formats but tensors.quant is NULL");
  if (qt->struct_size < offsetof(attncheck_quant, t) + sizeof qt->t)
    return ac_err_set(e, "tensors.quant.struct_size %u is below attncheck_quant's", qt->struct_size);
  for (int i = 0; i < 3; i++) {
    const attncheck_quant_tensor *x = &qt->t[i];
    const char nm = "qkv"[i];
    if (x->format != fm[i])
      return ac_err_set(e, "tensors.quant.t[%d].format %d but problem.%c_format %d", i, (int)x->format, nm, (int)fm[i]);
    if (!fm[i]) continue;
    const ac_qfmt_info *f = ac_qfmt_get(fm[i]);
    if (!f) return ac_err_set(e, "problem.%c_format: unknown format %d", nm, (int)fm[i]);
    ac_qspec q = {fm[i], x->granularity, x->block};
    if (x->granularity < 0 || x->granularity >= AC_QG_N)
      return ac_err_set(e, "tensors.quant.t[%d].granularity: unknown granularity %d", i, (int)x->granularity);
    if (ac_qspec_check(&q, nm, nm == 'v' ? p->dv : p->dk, e) < 0) return -1;
    if (!x->codes && !(x->ggml && f->ggml_bytes))
      return ac_err_set(e, "tensors.quant.t[%d]: no codes%s", i,
                        f->ggml_bytes ? " and no ggml blocks" : " (ggml blocks are read for the ggml formats and mxfp4 only)");
    if (x->codes && !x->scales) return ac_err_set(e, "tensors.quant.t[%d]: codes without scales", i);
    if (x->codes && f->aux && !x->aux)
      return ac_err_set(e, "tensors.quant.t[%d]: %s needs aux (%s)", i, f->name,
                        f->aux == AC_QAUX_MIN    ? "its mins"
                        : f->aux == AC_QAUX_ZERO ? "its zero points"
                                                 : "its tensor scale");
    p->quant[i] = q;
  }
  return 0;
}

/* The carrier's slot u of a paged K or V (i 1, 2) is (page u / *ps, slot u % *ps): the stride of a
 * page, st[0], or page_size * st[2] when st[0] is 0 (pages token-major one after the other); for
 * every other tensor *ps covers the whole carrier and the page stride is 0 (u * st[2] alone). */
static int64_t paged_page(const ac_problem *p, int i, const int64_t st[4], int64_t *ps)
{
  if (i == 0 || !(p->f.used & AC_FEAT_PAGED)) {
    *ps = INT64_MAX;
    return 0;
  }
  *ps = p->l.page_size;
  return st[0] ? st[0] : p->l.page_size * st[2];
}

/* Tensor i's codes, scales and aux from the caller's arrays into the allocated case. */
static void read_quant(const attncheck_problem *a, const attncheck_quant_tensor *x, int i, ac_case *c)
{
  const ac_problem *p = &c->p;
  const ac_qspec *q = &p->quant[i];
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  ac_qdata *t = &c->quant->t[i];
  const char nm = "qkv"[i];
  const int layout = (p->f.used & AC_FEAT_LAYOUTS) != 0;
  int64_t dd[4], s[4], st[4];
  ac_qdims(p, nm, dd);
  ac_qview_scale_dims(q, dd, s);
  if (x->codes) {
    const int64_t *cs = all_zero(x->code_stride) ? (i == 0 ? a->q_stride : i == 1 ? a->k_stride : a->v_stride)
                                                 : x->code_stride;
    ac_api_gather_qkv(c, nm, AC_E4M3 /* a byte per element */, x->codes, cs, t->codes);
    const size_t ss = ac_qsdtype_size(f->sdtype);
    ac_qview_present(s, layout, st);
    const int64_t *sc = all_zero(x->scale_stride) ? st : x->scale_stride;
    int64_t ps, pg = paged_page(p, i, sc, &ps), n = 0;
    for (int64_t b = 0; b < s[0]; b++)
      for (int64_t h = 0; h < s[1]; h++)
        for (int64_t u = 0; u < s[2]; u++)
          for (int64_t z = 0; z < s[3]; z++, n++) {
            size_t off = (size_t)(b * sc[0] + h * sc[1] + (u / ps) * pg + (u % ps) * sc[2] + z * sc[3]);
            memcpy((char *)t->scales + (size_t)n * ss, (const char *)x->scales + off * ss, ss);
            if (f->aux == AC_QAUX_MIN) memcpy((uint16_t *)t->aux + n, (const uint16_t *)x->aux + off, 2);
            else if (f->aux == AC_QAUX_ZERO) ((int8_t *)t->aux)[n] = ((const int8_t *)x->aux)[off];
          }
    if (f->aux == AC_QAUX_TSCALE) memcpy(t->aux, x->aux, 4);
    return;
  }
  /* ggml's blocks: block e of (b, h, u) at ggml[b g0 + h g1 + u g2 + e g3] (bytes) */
  const int64_t g[4] = {dd[0], dd[1], dd[2], dd[3] / 32 * f->ggml_bytes};
  int64_t gs[4];
  ac_qview_present(g, layout, gs);
  gs[3] = f->ggml_bytes;
  const int64_t *gst = all_zero(x->ggml_stride) ? gs : x->ggml_stride;
  int64_t ps, pg = paged_page(p, i, gst, &ps);
  for (int64_t b = 0; b < dd[0]; b++)
    for (int64_t h = 0; h < dd[1]; h++)
      for (int64_t u = 0; u < dd[2]; u++)
        for (int64_t z = 0; z < dd[3] / 32; z++) {
          uint8_t codes[32];
          uint16_t sd = 0, sm = 0;
          ac_qggml_unpack(q->fmt, x->ggml + b * gst[0] + h * gst[1] + (u / ps) * pg + (u % ps) * gst[2] + z * gst[3],
                          codes, &sd, &sm);
          memcpy(t->codes + ((b * dd[1] + h) * dd[2] + u) * dd[3] + z * 32, codes, 32);
          int64_t si = ac_qscale_index(q, dd, b, h, u, z * 32);
          if (f->sdtype == AC_QSD_F16) ((uint16_t *)t->scales)[si] = sd;
          else ((uint8_t *)t->scales)[si] = (uint8_t)sd;
          if (f->aux == AC_QAUX_MIN) ((uint16_t *)t->aux)[si] = sm;
        }
}

int ac_api_case_build(const attncheck_case_desc *d, ac_case *c, ac_err *e)
{
  if (!d || d->struct_size < offsetof(attncheck_case_desc, dout))
    return ac_err_set(e, "no case description (struct_size)");
  if (!d->problem || !d->tensors) return ac_err_set(e, "the description has no problem or no tensors");
  attncheck_problem a;
  attncheck_tensors t;
  memset(&a, 0, sizeof a);
  memset(&t, 0, sizeof t);
  uint32_t ps = d->problem->struct_size;
  if (ps < ATTNCHECK_PROBLEM_V1_SIZE) return ac_err_set(e, "problem.struct_size %u is below version 1's", ps);
  memcpy(&a, d->problem, ps < sizeof a ? ps : sizeof a);
  memcpy(&t, d->tensors,
         ps >= ATTNCHECK_PROBLEM_V5Q_SIZE  ? sizeof t
         : ps >= ATTNCHECK_PROBLEM_V3_SIZE ? offsetof(attncheck_tensors, quant)
         : ps >= ATTNCHECK_PROBLEM_V2_SIZE ? offsetof(attncheck_tensors, cu_seqlens_q)
                                           : offsetof(attncheck_tensors, bias));
  const void *dout = d->struct_size > offsetof(attncheck_case_desc, dout) ? d->dout : NULL;
  const int quantized = a.q_format || a.k_format || a.v_format;
  if (!quantized && t.quant) return ac_err_set(e, "tensors.quant is set but the problem names no quantized format");
  const int32_t fm[3] = {a.q_format, a.k_format, a.v_format};
  const void *dense[3] = {t.q, t.k, t.v};
  for (int i = 0; i < 3; i++) {
    if (!fm[i] && !dense[i]) return ac_err_set(e, "tensors.%c is NULL", "qkv"[i]);
    if (fm[i] && dense[i])
      return ac_err_set(e, "tensors.%c is set but problem.%c_format quantizes it: a quantized tensor is read from "
                           "tensors.quant alone", "qkv"[i], "qkv"[i]);
  }
  if (set_problem(&a, &t, d->flags, c, e) < 0) return -1;
  if (quantized && set_quant_specs(&a, t.quant, &c->p, e) < 0) return -1;
  if (ac_problem_validate(&c->p, ac_mem_cap(), e) < 0) return -1;
  if (c->lay && ac_layout_validate(c, e) < 0) return -1;
  if (ac_case_alloc(c, e) < 0 || ac_features_alloc(c, e) < 0) return -1;
  const ac_problem *p = &c->p;
  const int64_t *ast[3] = {a.q_stride, a.k_stride, a.v_stride};
  void *slot[3] = {c->q, c->k, c->v};
  for (int i = 0; i < 3; i++) {
    if (fm[i]) read_quant(&a, &t.quant->t[i], i, c);
    else ac_api_gather_qkv(c, "qkv"[i], ac_tensor_dtype(p, "qkv"[i]), dense[i], ast[i], slot[i]);
  }
  if (quantized) {
    if (ac_quant_check_codes(c, e) < 0) return -1;
    for (int i = 0; i < 3; i++)
      if (fm[i]) ac_quant_decode(c, "qkv"[i]);
  }
  if (gather_variants(&a, &t, c, e) < 0) return -1;
  if (dout) {
    ac_dtype od = ac_tensor_dtype(p, 'o');
    c->dout = ac_xmalloc(ac_case_bytes(c, 'o') ? ac_case_bytes(c, 'o') : 1);
    ac_api_gather_qkv(c, 'o', od, dout, d->do_stride, c->dout);
  }
  snprintf(c->generator, sizeof c->generator, "libattncheck");
  return 0;
}

static attncheck_case *case_wrap(void)
{
  attncheck_case *cs = calloc(1, sizeof *cs);
  if (!cs) return NULL;
  ac_case_init(&cs->c);
  cs->refs = 1;
  return cs;
}

static void case_unref(attncheck_case *cs)
{
  if (!cs || --cs->refs > 0) return;
  if (cs->has_oracle) ac_oracle_result_free(&cs->orr);
  ac_case_free(&cs->c);
  free(cs);
}

int attncheck_case_new(attncheck_ctx *ctx, const attncheck_case_desc *d, attncheck_case **out)
{
  if (!ctx || !out) return -1;
  *out = NULL;
  attncheck_case *cs = case_wrap();
  if (!cs) return ac_api_fail(ctx, "out of memory");
  ac_err e;
  if (ac_api_case_build(d, &cs->c, &e) < 0) {
    case_unref(cs);
    return ac_api_fail(ctx, "%s", e.msg);
  }
  *out = cs;
  return 0;
}

int attncheck_case_read(attncheck_ctx *ctx, const char *path, attncheck_case **out)
{
  if (!ctx || !out) return -1;
  *out = NULL;
  if (!path) return ac_api_fail(ctx, "no path");
  attncheck_case *cs = case_wrap();
  if (!cs) return ac_api_fail(ctx, "out of memory");
  ac_err e;
  if (ac_case_read(&cs->c, path, &e) < 0) {
    case_unref(cs);
    return ac_api_fail(ctx, "%s", e.msg);
  }
  *out = cs;
  return 0;
}

void attncheck_case_free(attncheck_case *c)
{
  case_unref(c);
}

void ac_api_case_unref(attncheck_case *cs)
{
  case_unref(cs);
}

int attncheck_case_problem(const attncheck_case *c, attncheck_problem *out)
{
  if (!c || !out) return -1;
  /* The quantized formats (ABI 5) only to a caller that asks for the whole struct: one built against
   * an earlier header has room for the ABI 3 fields alone. */
  const int whole = out->struct_size == (uint32_t)sizeof *out;
  attncheck_problem a;
  ac_problem_to_abi(&c->c.p, &a);
  if (!whole) a.struct_size = ATTNCHECK_PROBLEM_V3_SIZE;
  memcpy(out, &a, whole ? sizeof a : ATTNCHECK_PROBLEM_V3_SIZE);
  return 0;
}

/* The judged gradients as members dq, dk, dv (the case's dtype) and dsinks (float32). */
static int write_grads(const attncheck_result *r, const char *path, ac_err *e)
{
  const ac_case *c = &r->cs->c;
  const ac_problem *p = &c->p;
  const char *descr = ac_dtype_get(p->dtype)->npy;
  ac_npz_member m[4];
  memset(m, 0, sizeof m);
  const char *names[4] = {"dq", "dk", "dv", "dsinks"};
  const char x[3] = {'q', 'k', 'v'};
  int n = 0;
  for (int t = 0; t < 3; t++, n++) {
    snprintf(m[n].name, sizeof m[n].name, "%s", names[t]);
    snprintf(m[n].descr, sizeof m[n].descr, "%s", descr);
    m[n].ndim = 4;
    int kv = t > 0;
    m[n].shape[0] = p->batch;
    m[n].shape[1] = kv ? p->kv_heads : p->heads;
    m[n].shape[2] = kv ? p->tk : p->tq;
    m[n].shape[3] = t == 2 ? p->dv : p->dk;
    m[n].data = r->run.g[t];
    m[n].nbytes = ac_case_bytes(c, x[t]);
  }
  if (r->run.dsinks) {
    snprintf(m[n].name, sizeof m[n].name, "dsinks");
    snprintf(m[n].descr, sizeof m[n].descr, "<f4");
    m[n].ndim = 1;
    m[n].shape[0] = p->heads;
    m[n].data = r->run.dsinks;
    m[n].nbytes = (size_t)p->heads * sizeof(float);
    n++;
  }
  return ac_case_write_ex(c, path, m, n, e);
}

int attncheck_result_write_case(attncheck_ctx *ctx, const attncheck_result *r, const char *path)
{
  if (!ctx) return -1;
  if (!r || !path) return ac_api_fail(ctx, "no result or no path");
  ac_err e;
  int rc;
  if (r->grad) {
    rc = write_grads(r, path, &e);
  } else {
    ac_case tmp = r->cs->c; /* the case with the judged outputs in place of stored ones */
    tmp.has_o = 1;
    tmp.o = r->o;
    tmp.has_lse = r->lse != NULL;
    tmp.lse = r->lse;
    rc = ac_case_write(&tmp, path, &e);
  }
  return rc < 0 ? ac_api_fail(ctx, "%s", e.msg) : 0;
}
