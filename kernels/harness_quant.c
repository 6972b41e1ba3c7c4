/* harness_quant.c: quantized q, k, v at the kernel boundary (quant_view.h): their codes, scales,
 * mins or zero points and ggml blocks as guarded, checked inputs in place of their values (which a
 * kernel never gets), laid out like the tensor they belong to: contiguous for a dense case,
 * token-major for a serving layout (the ABI's packed and paged strides). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "harness_priv.h"
#include "quant_view.h"

void ac_qview_scale_dims(const ac_qspec *q, const int64_t d[4], int64_t s[4])
{
  s[0] = q->gran == AC_QG_TENSOR ? 1 : d[0];
  s[1] = q->gran == AC_QG_TENSOR ? 1 : d[1];
  s[2] = q->gran == AC_QG_BLOCK || q->gran == AC_QG_TOKEN ? d[2] : 1;
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

static ac_dtype sdtype_of(ac_qsdtype t) { return t == AC_QSD_F16 ? AC_F16 : t == AC_QSD_F32 ? AC_F32 : AC_E4M3; }

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
  static const char *const names[3][4] = {{"q_codes", "q_scales", "q_aux", "q_ggml"},
                                          {"k_codes", "k_scales", "k_aux", "k_ggml"},
                                          {"v_codes", "v_scales", "v_aux", "v_ggml"}};
  const int64_t *tst[3] = {x->ap.q_stride, x->ap.k_stride, x->ap.v_stride};
  for (int i = 0; i < 3; i++) {
    const ac_qspec *q = &p->quant[i];
    const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
    if (!f) continue;
    const ac_qdata *t = &c->quant->t[i];
    int64_t d[4], s[4];
    ac_qdims(p, "qkv"[i], d);
    ac_qview_scale_dims(q, d, s);
    b->in[HX_Q + i].dense = NULL;   /* the values stay with attncheck */
    memcpy(b->qstride[i], tst[i], sizeof b->qstride[i]);
    b->in[HX_QCODES + i] = ac_hx_tensor_of(names[i][0], AC_E4M3, d[0], d[1], d[2], d[3], b->qstride[i],
                                           d[0] * d[1] * d[2] * d[3], t->codes);
    ac_qview_present(s, layout, b->qstride[3 + i]);
    int64_t ns = s[0] * s[1] * s[2] * s[3];
    b->in[HX_QSCALES + i] = ac_hx_tensor_of(names[i][1], sdtype_of(f->sdtype), s[0], s[1], s[2], s[3], b->qstride[3 + i], ns,
                                            t->scales);
    if (f->aux == AC_QAUX_TSCALE) {
      static const int64_t one[4] = {1, 1, 1, 1};
      b->in[HX_QAUX + i] = ac_hx_tensor_of(names[i][2], AC_F32, 1, 1, 1, 1, one, 1, t->aux);
    } else if (f->aux) {
      b->in[HX_QAUX + i] = ac_hx_tensor_of(names[i][2], f->aux == AC_QAUX_MIN ? AC_F16 : AC_E4M3, s[0], s[1], s[2], s[3],
                                           b->qstride[3 + i], ns, t->aux);
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

/* The ABI's format and granularity numbers are quant.h's. */
#define AC_SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(AC_SAME(ATTNCHECK_QF_Q8_0, AC_QF_Q8_0) && AC_SAME(ATTNCHECK_QF_IQ4_NL, AC_QF_IQ4_NL) &&
                   AC_SAME(ATTNCHECK_QF_E4M3FN, AC_QF_E4M3FN) && AC_SAME(ATTNCHECK_QF_E5M2, AC_QF_E5M2) &&
                   AC_SAME(ATTNCHECK_QF_INT8, AC_QF_INT8) && AC_SAME(ATTNCHECK_QF_INT4, AC_QF_INT4) &&
                   AC_SAME(ATTNCHECK_QF_NVFP4, AC_QF_NVFP4) && AC_SAME(ATTNCHECK_QF_MXFP4, AC_QF_MXFP4) && AC_QF_N == 14,
               "ATTNCHECK_QF_ numbers");
_Static_assert(AC_SAME(ATTNCHECK_QG_BLOCK, AC_QG_BLOCK) && AC_SAME(ATTNCHECK_QG_TENSOR, AC_QG_TENSOR) &&
                   AC_SAME(ATTNCHECK_QG_HEAD, AC_QG_HEAD) && AC_SAME(ATTNCHECK_QG_TOKEN, AC_QG_TOKEN) &&
                   AC_SAME(ATTNCHECK_QG_CHANNEL, AC_QG_CHANNEL),
               "ATTNCHECK_QG_ numbers");
#undef AC_SAME

void ac_hx_quant_view(const hx_bufs *b, const ac_problem *p, void *view)
{
  ac_qview *v = view;
  memset(v, 0, sizeof *v);
  v->struct_size = (uint32_t)sizeof *v;
  for (int i = 0; i < 3; i++) {
    const ac_qspec *q = &p->quant[i];
    const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
    if (!f) continue;
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
