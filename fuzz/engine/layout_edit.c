/* layout_edit.c: a layout case with other sequences (docs/layouts.md), for the search's
 * layout mutations (one sequence's length grown or shrunk by one, to a page or tile edge or to
 * zero; pages split or merged) and for the minimizer (sequences dropped, sequences shortened).
 * The case is rebuilt from the new lengths (ac_layout_build): a token the new sequence keeps has
 * its value, a token it gains repeats the sequence's last one. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "quant.h"
#include "layout.h"
#include "variants.h"

/* Copies token s of a carrier tensor [H][T][D] to token d of [H][T2][D]. */
static void copy_token(size_t es, const void *src, int64_t T, int64_t s, void *dst, int64_t T2, int64_t d, int64_t H,
                       int64_t D)
{
  for (int64_t h = 0; h < H; h++)
    memcpy((char *)dst + (size_t)((h * T2 + d) * D) * es, (const char *)src + (size_t)((h * T + s) * D) * es, (size_t)D * es);
}

/* The carrier token that token i of old sequence b (n of them, the first at first) gives a
 * sequence of more tokens: itself, else the last one, else the carrier's first. */
static int64_t source_token(int64_t i, int64_t n, int64_t first) { return n == 0 ? 0 : first + (i < n ? i : n - 1); }

/* The variant tensors of the rebuilt case: sinks and per-head slopes as they are; per-sequence
 * slopes, bias and boolean-mask rows follow their sequence, a token or key the sequence gains
 * repeating its last one (a sequence that had none: bias 0, visible). */
static int relen_variants(const ac_case *c, const ac_relayout *s, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p, *q = &out->p;
  ac_features_copy(out, c);
  free(out->bias), out->bias = NULL;
  free(out->bool_mask), out->bool_mask = NULL;
  int per_seq = (p->f.used & AC_FEAT_ALIBI) && p->f.alibi_per_batch;
  if (per_seq) free(out->alibi_slopes), out->alibi_slopes = NULL;
  if (ac_features_alloc(out, e)) return -1;
  size_t be = (p->f.used & AC_FEAT_BIAS) ? ac_dtype_size(p->f.bias_dtype) : 0;
  for (int64_t b = 0; b < s->nseq; b++) {
    int64_t o = s->src[b], nq = ac_layout_tq(c, o), nk = ac_layout_tk(c, o);
    if (per_seq) memcpy(out->alibi_slopes + b * p->heads, c->alibi_slopes + o * p->heads, (size_t)p->heads * sizeof(float));
    for (int64_t i = 0; i < s->tq[b]; i++)
      for (int64_t j = 0; j < s->tk[b]; j++) {
        int64_t t = out->lay->cu_q[b] + i, st = source_token(i, nq, c->lay->cu_q[o]), sj = j < nk ? j : nk - 1;
        for (int64_t h = 0; h < p->f.bias_h && be; h++) {
          char *d = (char *)out->bias + ac_biasidx(q, 0, h, t, j) * be;
          if (nq && nk) memcpy(d, (const char *)c->bias + ac_biasidx(p, 0, h, st, sj) * be, be);
        }
        for (int64_t h = 0; h < p->f.mask_h && out->bool_mask; h++)
          out->bool_mask[ac_bmaskidx(q, 0, h, t, j)] = nq && nk ? c->bool_mask[ac_bmaskidx(p, 0, h, st, sj)] : 1;
      }
  }
  return 0;
}

int ac_layout_relen(const ac_case *c, const ac_relayout *s, ac_rng *r, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  if (!c->lay) return ac_err_set(e, "not a layout case");
  uint32_t kind = p->f.used & AC_FEAT_LAYOUTS;
  for (int64_t b = 0; b < s->nseq; b++)
    if (s->src[b] < 0 || s->src[b] >= p->l.nseq) return ac_err_set(e, "relayout: no sequence %lld", (long long)s->src[b]);
  ac_case_init(out);
  out->p = *p;
  out->p.f.used &= ~(uint32_t)AC_FEAT_LAYOUTS;
  memset(&out->p.l, 0, sizeof out->p.l);
  ac_layout_spec ls = {.kind = kind, .nseq = s->nseq, .tq = s->tq, .tk = s->tk,
                       .page_size = kind == AC_FEAT_PAGED ? s->page_size : 0, .shuffle = r != NULL};
  if (ac_layout_build(out, &ls, r, e) || ac_case_alloc(out, e)) goto fail;
  const ac_problem *q = &out->p;
  size_t eq = ac_dtype_size(ac_tensor_dtype(p, 'q')), ek = ac_dtype_size(ac_tensor_dtype(p, 'k')),
         ev = ac_dtype_size(ac_tensor_dtype(p, 'v'));
  /* token maps for quantized tensors: -1 leaves a token's codes zero (no source) */
  int64_t *mq = ac_xmalloc(sizeof *mq * (size_t)(q->tq + q->tk)), *mk = mq + q->tq, zero = 0;
  for (int64_t t = 0; t < q->tq + q->tk; t++) mq[t] = -1;
  for (int64_t b = 0; b < s->nseq; b++) {
    int64_t o = s->src[b], nq = ac_layout_tq(c, o), nk = ac_layout_tk(c, o);
    for (int64_t i = 0; i < s->tq[b]; i++) {
      int64_t from = source_token(i, nq, c->lay->cu_q[o]), to = out->lay->cu_q[b] + i;
      copy_token(eq, c->q, p->tq, from, out->q, q->tq, to, p->heads, p->dk);
      mq[to] = from;
    }
    for (int64_t j = 0; j < s->tk[b]; j++) {
      int64_t from = nk == 0 ? 0 : ac_layout_key(c, o, j < nk ? j : nk - 1), to = ac_layout_key(out, b, j);
      copy_token(ek, c->k, p->tk, from, out->k, q->tk, to, p->kv_heads, p->dk);
      copy_token(ev, c->v, p->tk, from, out->v, q->tk, to, p->kv_heads, p->dv);
      mk[to] = from;
    }
  }
  ac_qmaps qm = {{&zero, NULL, mq, NULL}, {&zero, NULL, mk, NULL}, {&zero, NULL, mk, NULL}};
  int qrc = ac_quant_remap_all(c, out, &qm, e);
  free(mq);
  if (qrc) goto fail;
  if (relen_variants(c, s, out, e)) goto fail;
  ac_case_copy_origin(out, c);
  if (ac_layout_validate(out, e)) goto fail;
  return 0;
fail:
  ac_case_free(out);
  ac_case_init(out);
  return -1;
}

void ac_relayout_of(const ac_case *c, ac_relayout *s, int64_t *buf)
{
  int64_t n = c->p.l.nseq;
  s->nseq = n;
  s->src = buf, s->tq = buf + n, s->tk = buf + 2 * n;
  s->page_size = c->p.l.page_size;
  for (int64_t b = 0; b < n; b++) buf[b] = b, buf[n + b] = ac_layout_tq(c, b), buf[2 * n + b] = ac_layout_tk(c, b);
}

/* A new length near len: +-1, a tile edge (16, 32, 64, 128 +-1), a page edge (+-1), or 0. */
static int64_t near_len(int64_t len, int64_t page, ac_rng *r, const char **how)
{
  static const int64_t tiles[] = {16, 32, 64, 128};
  int64_t v;
  switch (ac_rng_below(r, 4)) {
  case 0: *how = "+-1"; v = len + (ac_rng_below(r, 2) ? 1 : -1); break;
  case 1: *how = "to a tile edge"; v = tiles[ac_rng_below(r, 4)] + ac_rng_range(r, -1, 1); break;
  case 2:
    *how = "to a page edge";
    page = page > 1 ? page : 16;
    v = (len / page + (int64_t)ac_rng_below(r, 2)) * page + ac_rng_range(r, -1, 1);
    break;
  default: *how = "to 0"; v = 0; break;
  }
  return v < 0 ? 0 : v;
}

int ac_mutate_layout(const ac_case *parent, ac_rng *r, const ac_gen_limits *l, ac_case *child, char *desc, size_t nd,
                     ac_err *e)
{
  const ac_problem *p = &parent->p;
  int64_t n = p->l.nseq, *buf = ac_xmalloc((size_t)(3 * n) * sizeof *buf);
  ac_relayout s;
  ac_relayout_of(parent, &s, buf);
  int paged = (p->f.used & AC_FEAT_PAGED) != 0;
  if (paged && ac_rng_below(r, 4) == 0) {   /* pages split in two, or merged pairwise */
    int split = p->l.page_size > 1 && (p->l.page_size >= 1024 || ac_rng_below(r, 2));
    s.page_size = split ? (p->l.page_size + 1) / 2 : p->l.page_size * 2;
    snprintf(desc, nd, "layout: pages %s, page size %lld->%lld", split ? "split" : "merged", (long long)p->l.page_size,
             (long long)s.page_size);
  } else {
    int64_t b = (int64_t)ac_rng_below(r, (uint64_t)n);
    int isq = ac_rng_below(r, 3) == 0;
    int64_t *len = &buf[(isq ? 1 : 2) * n + b];
    const char *how;
    int64_t was = *len;
    *len = near_len(was, paged ? p->l.page_size : 0, r, &how);
    if (*len > l->max_t) *len = l->max_t;
    snprintf(desc, nd, "layout: sequence %lld %s %lld->%lld (%s)", (long long)b, isq ? "tq" : "tk", (long long)was,
             (long long)*len, how);
  }
  int64_t nq = 0, nk = 0, h = p->heads > p->kv_heads ? p->heads : p->kv_heads, d = p->dk > p->dv ? p->dk : p->dv;
  for (int64_t b = 0; b < n; b++) nq += s.tq[b], nk += s.tk[b] + s.page_size;
  int rc = (double)(nq > nk ? nq : nk) * (double)h * (double)d > (double)l->max_elems
               ? ac_err_set(e, "relayout: past --max-elems")
               : ac_layout_relen(parent, &s, r, child, e);
  free(buf);
  return rc;
}
