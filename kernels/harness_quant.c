/* harness_quant.c: quantized q, k, v at the kernel boundary (quant_view.h): their codes (packed as
 * the spec says), scales, mins or zero points and ggml blocks as guarded, checked inputs in place of
 * their values (which a kernel never gets), laid out like the tensor they belong to: contiguous for
 * a dense case, token-major for a serving layout (the ABI's packed and paged strides); and for a
 * quantize-on-store tensor its plain values as the input and the arrays it stores into as outputs,
 * read back after the run. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "harness_priv.h"
#include "quant_view.h"

void ac_qview_scale_dims(const ac_qspec *q, const int64_t d[4], int64_t s[4])
{
  s[0] = q->gran == AC_QG_TENSOR ? 1 : d[0];
  s[1] = q->gran == AC_QG_TENSOR ? 1 : d[1];
  s[2] = ac_qscale_rows(q, d[2]);   /* T (block, token), T / G over token groups, else 1 */
  s[3] = q->gran == AC_QG_BLOCK ? d[3] / q->block : q->gran == AC_QG_CHANNEL ? d[3] : 1;
}

void ac_qview_present(const int64_t s[4], int token_major, int64_t st[4])
{
  if (token_major && s[2] > 1) {
    st[0] = 0, st[1] = s[3], st[2] = s[1] * s[3], st[3] = 1;
    return;
  }
  st[3] = 1, st[2] = s[3], st[1] = s[2] * s[3], st[0] = s[1] * s[2] * s[3];
}

/* The packed codes of tensor i, dense [B][H][T][D / per] (NULL: one code per byte). */
static uint8_t *packed_codes(const ac_case *c, int i)
{
  const ac_qspec *q = &c->p.quant[i];
  if (!q->pack) return NULL;
  int64_t d[4];
  ac_qdims(&c->p, "qkv"[i], d);
  int64_t n = d[0] * d[1] * d[2] * d[3];
  uint8_t *out = ac_xmalloc((size_t)(n / ac_qspec_per_byte(q)) + 1);
  ac_qpack(q, c->quant->t[i].codes, n, out);
  return out;
}

static const char *const names[3][4] = {{"q_codes", "q_scales", "q_aux", "q_ggml"},
                                        {"k_codes", "k_scales", "k_aux", "k_ggml"},
                                        {"v_codes", "v_scales", "v_aux", "v_ggml"}};
static const char *const snames[3][4] = {{"q_store_codes", "q_store_scales", "q_store_aux", "q_store_ggml"},
                                         {"k_store_codes", "k_store_scales", "k_store_aux", "k_store_ggml"},
                                         {"v_store_codes", "v_store_scales", "v_store_aux", "v_store_ggml"}};

/* A store tensor: its plain values as the input, the arrays it stores into as outputs (dense). */
static void describe_store(const ac_hx_ctx *x, hx_bufs *b, int i)
{
  const ac_problem *p = &x->c->p;
  const ac_qspec *q = &p->quant[i];
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  const ac_qdata *t = &x->c->quant->t[i];
  int64_t d[4], s[4];
  ac_qdims(p, "qkv"[i], d);
  ac_qview_scale_dims(q, d, s);
  hx_tensor *in = &b->in[HX_Q + i];
  in->dtype = p->dtype;   /* the plain values the kernel quantizes */
  in->dense = t->plain;
  int64_t ns = s[0] * s[1] * s[2] * s[3];
  if (f->ggml_bytes) {
    int64_t g[4] = {d[0], d[1], d[2], d[3] / 32 * f->ggml_bytes};
    ac_qview_present(g, 0, b->ststride[i][3]);
    b->st[i][3] = ac_hx_tensor_of(snames[i][3], AC_E4M3, g[0], g[1], g[2], g[3], b->ststride[i][3], g[0] * g[1] * g[2] * g[3], NULL);
    return;
  }
  int per = ac_qspec_per_byte(q);
  int64_t cd[4] = {d[0], d[1], d[2], d[3] / per};
  ac_qview_present(cd, 0, b->ststride[i][0]);
  b->st[i][0] = ac_hx_tensor_of(snames[i][0], AC_E4M3, cd[0], cd[1], cd[2], cd[3], b->ststride[i][0], cd[0] * cd[1] * cd[2] * cd[3], NULL);
  ac_qview_present(s, 0, b->ststride[i][1]);
  const ac_qsdtype sd = ac_qspec_sdtype(q), zd = ac_qspec_zdtype(q);
  const int given = ac_qstore_rule(q->store) == AC_QSR_GIVEN;
  b->st[i][1] = ac_hx_tensor_of(snames[i][1], ac_qsd_dtype(sd), s[0], s[1], s[2], s[3], b->ststride[i][1], ns, NULL);
  if (given) b->stinit[i][1] = t->scales;
  if (zd != AC_QSD_N) {
    b->st[i][2] = ac_hx_tensor_of(snames[i][2], ac_qsd_dtype(zd), s[0], s[1], s[2], s[3], b->ststride[i][1], ns, NULL);
    if (given) b->stinit[i][2] = t->aux;
  }
}

void ac_hx_describe_quant(const ac_hx_ctx *x, hx_bufs *b)
{
  const ac_case *c = x->c;
  const ac_problem *p = &c->p;
  if (!ac_problem_quantized(p) || !c->quant) return;
  const int layout = (p->f.used & AC_FEAT_LAYOUTS) != 0;
  if (layout) {
    ac_case *f = ac_xcalloc(1, sizeof *f);
    if (ac_hx_layout_quant(c, x->o->layout_fill, f)) b->qfill = f, c = f;
    else free(f);
  }
  const int64_t *tst[3] = {x->ap.q_stride, x->ap.k_stride, x->ap.v_stride};
  for (int i = 0; i < 3; i++) {
    const ac_qspec *q = &p->quant[i];
    const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
    if (!f) continue;
    if (q->store) {
      describe_store(x, b, i);
      continue;
    }
    const ac_qdata *t = &c->quant->t[i];
    int64_t d[4], s[4];
    ac_qdims(p, "qkv"[i], d);
    ac_qview_scale_dims(q, d, s);
    b->in[HX_Q + i].dense = NULL;   /* the values stay with attncheck */
    int per = ac_qspec_per_byte(q);
    for (int k = 0; k < 4; k++) b->qstride[i][k] = k < 3 ? tst[i][k] / per : tst[i][k];   /* packed: bytes */
    b->qpacked[i] = packed_codes(c, i);
    b->in[HX_QCODES + i] = ac_hx_tensor_of(names[i][0], AC_E4M3, d[0], d[1], d[2], d[3] / per, b->qstride[i],
                                           d[0] * d[1] * d[2] * d[3] / per, b->qpacked[i] ? b->qpacked[i] : t->codes);
    ac_qview_present(s, layout, b->qstride[3 + i]);
    int64_t ns = s[0] * s[1] * s[2] * s[3];
    const ac_qsdtype sd = ac_qspec_sdtype(q), zd = ac_qspec_zdtype(q);
    b->in[HX_QSCALES + i] = ac_hx_tensor_of(names[i][1], ac_qsd_dtype(sd), s[0], s[1], s[2], s[3], b->qstride[3 + i], ns,
                                            t->scales);
    if (f->aux == AC_QAUX_TSCALE) {
      static const int64_t one[4] = {1, 1, 1, 1};
      b->in[HX_QAUX + i] = ac_hx_tensor_of(names[i][2], AC_F32, 1, 1, 1, 1, one, 1, t->aux);
    } else if (f->aux) {
      b->in[HX_QAUX + i] = ac_hx_tensor_of(names[i][2], ac_qsd_dtype(zd), s[0], s[1], s[2], s[3], b->qstride[3 + i], ns, t->aux);
    }
    size_t nb;
    b->qggml[i] = ac_qggml_tensor(c, "qkv"[i], &nb);
    if (b->qggml[i]) {
      int64_t g[4] = {d[0], d[1], d[2], d[3] / 32 * f->ggml_bytes};
      ac_qview_present(g, layout, b->qstride[6 + i]);
      b->in[HX_QGGML + i] = ac_hx_tensor_of(names[i][3], AC_E4M3, g[0], g[1], g[2], g[3], b->qstride[6 + i], (int64_t)nb,
                                            b->qggml[i]);
    }
  }
}

/* The ABI's format, granularity, packing, quantizer and dtype numbers are quant.h's. */
#define AC_SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(AC_SAME(ATTNCHECK_QF_Q8_0, AC_QF_Q8_0) && AC_SAME(ATTNCHECK_QF_IQ4_NL, AC_QF_IQ4_NL) &&
                   AC_SAME(ATTNCHECK_QF_E4M3FN, AC_QF_E4M3FN) && AC_SAME(ATTNCHECK_QF_E5M2, AC_QF_E5M2) &&
                   AC_SAME(ATTNCHECK_QF_INT8, AC_QF_INT8) && AC_SAME(ATTNCHECK_QF_INT4, AC_QF_INT4) &&
                   AC_SAME(ATTNCHECK_QF_NVFP4, AC_QF_NVFP4) && AC_SAME(ATTNCHECK_QF_MXFP4, AC_QF_MXFP4) &&
                   AC_SAME(ATTNCHECK_QF_INT2, AC_QF_INT2) && AC_SAME(ATTNCHECK_QF_UINT8, AC_QF_UINT8) && AC_QF_N == 16,
               "ATTNCHECK_QF_ numbers");
_Static_assert(AC_SAME(ATTNCHECK_QG_BLOCK, AC_QG_BLOCK) && AC_SAME(ATTNCHECK_QG_TENSOR, AC_QG_TENSOR) &&
                   AC_SAME(ATTNCHECK_QG_HEAD, AC_QG_HEAD) && AC_SAME(ATTNCHECK_QG_TOKEN, AC_QG_TOKEN) &&
                   AC_SAME(ATTNCHECK_QG_CHANNEL, AC_QG_CHANNEL),
               "ATTNCHECK_QG_ numbers");
_Static_assert(AC_SAME(ATTNCHECK_QPACK_LOW_FIRST, AC_QPACK_LOW_FIRST) && AC_SAME(ATTNCHECK_QPACK_HIGH_FIRST, AC_QPACK_HIGH_FIRST) &&
                   AC_SAME(ATTNCHECK_QSTORE_ABSMAX, AC_QSR_ABSMAX) && AC_SAME(ATTNCHECK_QSTORE_MINMAX, AC_QSR_MINMAX) &&
                   AC_SAME(ATTNCHECK_QSTORE_GIVEN, AC_QSR_GIVEN) && AC_SAME(ATTNCHECK_QSTORE_GGML, AC_QSR_GGML) &&
                   AC_SAME(ATTNCHECK_QSTORE_AWAY, AC_QRD_AWAY) && AC_SAME(ATTNCHECK_QSTORE_TRUNC, AC_QRD_TRUNC) &&
                   AC_SAME(ATTNCHECK_QSTORE_EXACT, AC_QAR_EXACT) && AC_SAME(ATTNCHECK_QSTORE_NAN, AC_QOV_NAN),
               "ATTNCHECK_QPACK_, ATTNCHECK_QSTORE_ numbers");
#undef AC_SAME

/* The ABI's number of a scale or zero dtype. */
static int32_t abi_sd(ac_qsdtype t)
{
  switch (t) {
  case AC_QSD_F16: return ATTNCHECK_F16;
  case AC_QSD_BF16: return ATTNCHECK_BF16;
  case AC_QSD_F32: return ATTNCHECK_F32;
  case AC_QSD_E4M3: return ATTNCHECK_E4M3;
  case AC_QSD_E8M0: return ATTNCHECK_QSD_E8M0;
  case AC_QSD_I8: return ATTNCHECK_QSD_I8;
  case AC_QSD_U8: return ATTNCHECK_QSD_U8;
  default: return -1;
  }
}

void ac_hx_quant_spec_to_abi(const ac_problem *p, attncheck_problem *a)
{
  a->features |= ac_quant_features(p);
  for (int i = 0; i < 3; i++) {
    const ac_qspec *q = &p->quant[i];
    attncheck_qspec *s = &a->quant_spec[i];
    if (!q->fmt) continue;
    ac_qstore st;
    ac_qstore_unpack(q->store, &st);
    s->granularity = q->gran, s->packing = q->pack, s->block = q->block, s->token_group = q->tgroup;
    s->scale_dtype = abi_sd(ac_qspec_sdtype(q)), s->zero_dtype = abi_sd(ac_qspec_zdtype(q));
    s->store_rule = st.rule, s->store_round = st.round, s->store_arith = st.arith, s->store_overflow = st.overflow;
  }
}

/* quant.h's scale or zero dtype of an ABI number (AC_QSD_N: none or unknown). */
static ac_qsdtype sd_of_abi(int32_t t)
{
  for (int k = 0; k < AC_QSD_N; k++)
    if (abi_sd((ac_qsdtype)k) == t) return (ac_qsdtype)k;
  return AC_QSD_N;
}

void ac_qspec_from_abi(const attncheck_problem *a, const ac_qview_tensor *t, int i, ac_qspec *q)
{
  memset(q, 0, sizeof *q);
  q->fmt = t->format, q->gran = t->granularity, q->block = t->block;
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (a->struct_size < ATTNCHECK_PROBLEM_V5QL_SIZE || !f) return;
  const attncheck_qspec *s = &a->quant_spec[i];
  ac_qstore st = {s->store_rule, s->store_round, s->store_arith, s->store_overflow};
  ac_qsdtype sd = sd_of_abi(s->scale_dtype), zd = sd_of_abi(s->zero_dtype);
  q->tgroup = s->token_group, q->pack = s->packing, q->store = st.rule ? ac_qstore_pack(&st) : 0;
  q->sdtype = sd != AC_QSD_N && sd != f->sdtype ? (int32_t)sd + 1 : 0;
  q->zdtype = f->aux == AC_QAUX_ZERO && zd != AC_QSD_N && zd != (q->fmt == AC_QF_UINT8 ? AC_QSD_U8 : AC_QSD_I8) ? (int32_t)zd + 1 : 0;
}

void ac_hx_quant_view(const hx_bufs *b, const ac_problem *p, void *view)
{
  ac_qview *v = view;
  memset(v, 0, sizeof *v);
  v->struct_size = (uint32_t)sizeof *v;
  for (int i = 0; i < 3; i++) {
    const ac_qspec *q = &p->quant[i];
    const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
    if (!f || q->store) continue;
    ac_qview_tensor *t = &v->t[i];
    int64_t d[4], s[4];
    ac_qdims(p, "qkv"[i], d);
    ac_qview_scale_dims(q, d, s);
    t->format = q->fmt;
    t->granularity = q->gran;
    t->block = q->block;
    t->codes = b->in[HX_QCODES + i].g.data;
    t->scales = b->in[HX_QSCALES + i].g.data;
    t->aux = b->in[HX_QAUX + i].g.data;
    t->ggml = b->in[HX_QGGML + i].g.data;
    memcpy(t->code_stride, b->qstride[i], sizeof t->code_stride);
    for (int k = 0; k < 4; k++) {
      t->scale_stride[k] = s[k] > 1 ? b->qstride[3 + i][k] : 0;   /* 0 along what the granularity shares */
      t->ggml_stride[k] = b->qstride[6 + i][k];
    }
    t->ggml_stride[3] = f->ggml_bytes;
    /* a paged K or V: (b, t) is (page, slot) for the scales and ggml blocks as for the codes
     * (kernel.h); the carrier's slot page * page_size + slot is where they lie */
    if (i > 0 && (p->f.used & AC_FEAT_PAGED)) {
      t->scale_stride[0] = p->l.page_size * t->scale_stride[2];
      t->ggml_stride[0] = p->l.page_size * t->ggml_stride[2];
    }
  }
}

/* ---- quantize-on-store ------------------------------------------------------------------- */

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

size_t ac_hx_store_layout(const ac_problem *p, size_t off, size_t st_off[3][3])
{
  memset(st_off, 0, 9 * sizeof(size_t));
  for (int i = 0; i < 3; i++) {
    const ac_qspec *q = &p->quant[i];
    if (!q->fmt || !q->store) continue;
    int64_t d[4];
    ac_qdims(p, "qkv"[i], d);
    int64_t ns = ac_qscale_count(q, d);
    ac_qsdtype zd = ac_qspec_zdtype(q);
    st_off[i][0] = off, off += round64((size_t)(d[0] * d[1] * d[2] * d[3]));
    st_off[i][1] = off, off += round64((size_t)ns * ac_qsdtype_size(ac_qspec_sdtype(q)));
    st_off[i][2] = off, off += round64(zd == AC_QSD_N ? 0 : (size_t)ns * ac_qsdtype_size(zd));
  }
  return off;
}

int ac_hx_store_setup(hx_bufs *b, size_t guard, ac_err *e)
{
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 4; k++) {
      hx_tensor *u = &b->st[i][k];
      if (!u->name) continue;
      if (ac_guarded_alloc(&u->g, u->dtype, (size_t)u->span, guard, e)) return -1;
      if (b->stinit[i][k]) memcpy(u->g.data, b->stinit[i][k], (size_t)u->count * ac_dtype_size(u->dtype));
      else if (k == 1 || (k == 2 && u->dtype != AC_E4M3))   /* scales and float zero points: the outputs' NaN */
        for (size_t x = 0; x < u->g.n; x++) ac_store_bits(u->dtype, u->g.data, x, ac_harness_prefill_bits(u->dtype));
      else memset(u->g.data, k == 3 ? 0xff : 0, (size_t)u->count);
    }
  return 0;
}

int ac_hx_store_guards_ok(const hx_bufs *b, char *msg, size_t n)
{
  int ok = 1;
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 4; k++)
      if (b->st[i][k].name) ok &= ac_hx_guards_ok(&b->st[i][k].g, b->st[i][k].name, msg, n);
  return ok;
}

void ac_hx_store_view(const hx_bufs *b, const ac_problem *p, void *view)
{
  ac_qview *v = view;
  memset(v, 0, sizeof *v);
  v->struct_size = (uint32_t)sizeof *v;
  for (int i = 0; i < 3; i++) {
    const ac_qspec *q = &p->quant[i];
    if (!q->fmt || !q->store) continue;
    ac_qview_tensor *t = &v->t[i];
    int64_t d[4], s[4];
    ac_qdims(p, "qkv"[i], d);
    ac_qview_scale_dims(q, d, s);
    t->format = q->fmt, t->granularity = q->gran, t->block = q->block;
    t->codes = b->st[i][0].g.data, t->scales = b->st[i][1].g.data, t->aux = b->st[i][2].g.data, t->ggml = b->st[i][3].g.data;
    for (int k = 0; k < 4; k++) {
      t->code_stride[k] = b->ststride[i][0][k];
      t->scale_stride[k] = s[k] > 1 ? b->ststride[i][1][k] : 0;
      t->ggml_stride[k] = b->ststride[i][3][k];
    }
    if (t->ggml) t->ggml_stride[3] = ac_qfmt_get(q->fmt)->ggml_bytes;
  }
}

void ac_hx_store_read_back(const ac_hx_ctx *x, const hx_bufs *b)
{
  const ac_problem *p = &x->c->p;
  for (int i = 0; i < 3; i++) {
    const ac_qspec *q = &p->quant[i];
    const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
    if (!f || !q->store) continue;
    int64_t d[4];
    ac_qdims(p, "qkv"[i], d);
    int64_t n = d[0] * d[1] * d[2] * d[3], ns = ac_qscale_count(q, d);
    uint8_t *codes = x->area + x->l.st_off[i][0];
    unsigned char *scales = x->area + x->l.st_off[i][1], *aux = x->area + x->l.st_off[i][2];
    const ac_qsdtype sd = ac_qspec_sdtype(q), zd = ac_qspec_zdtype(q);
    if (f->ggml_bytes) {   /* ggml's blocks, row after row */
      const uint8_t *g = b->st[i][3].g.data;
      for (int64_t e = 0; e < n / 32; e++) {
        uint16_t dd, mm;
        ac_qggml_unpack(q->fmt, g + e * f->ggml_bytes, codes + e * 32, &dd, &mm);
        ac_qsd_store(sd, scales, (size_t)e, dd);
        if (zd != AC_QSD_N) ac_qsd_store(zd, aux, (size_t)e, mm);
      }
      continue;
    }
    ac_qunpack(q, b->st[i][0].g.data, n, codes);
    memcpy(scales, b->st[i][1].g.data, (size_t)ns * ac_qsdtype_size(sd));
    if (zd != AC_QSD_N) memcpy(aux, b->st[i][2].g.data, (size_t)ns * ac_qsdtype_size(zd));
  }
}

void ac_hx_store_collect(const ac_hx_ctx *x, ac_run_result *r)
{
  const ac_problem *p = &x->c->p;
  if (!(ac_quant_features(p) & AC_FEAT_QUANT_STORE)) return;
  r->stored = ac_xcalloc(1, sizeof *r->stored);
  for (int i = 0; i < 3; i++) {
    const ac_qspec *q = &p->quant[i];
    if (!q->fmt || !q->store) continue;
    ac_qdata *t = &r->stored->t[i];
    size_t n[3];
    ac_quant_stored_alloc(p, i, t, n);
    memcpy(t->codes, x->area + x->l.st_off[i][0], n[0]);
    memcpy(t->scales, x->area + x->l.st_off[i][1], n[1]);
    if (n[2]) memcpy(t->aux, x->area + x->l.st_off[i][2], n[2]);
  }
}
