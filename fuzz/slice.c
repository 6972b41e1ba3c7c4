/* slice.c: sub-cases (fewer batches, heads, rows, keys, dims) and length changes, used by the
 * minimizer and by the shape mutations of the search. */
#include "config.h"
#include <string.h>
#include "fuzz.h"

void ac_slice_all(const ac_problem *p, ac_slice *s)
{
  *s = (ac_slice){0, p->batch, 0, p->heads, 0, p->tq, 0, p->tk, 0, p->dk, 0, p->dv};
}

static int in_range(int64_t a, int64_t n, int64_t max) { return a >= 0 && n >= 1 && a + n <= max; }

int ac_case_slice(const ac_case *c, const ac_slice *s, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  if (!in_range(s->b0, s->nb, p->batch) || !in_range(s->h0, s->nh, p->heads) || !in_range(s->i0, s->ni, p->tq) ||
      !in_range(s->j0, s->nj, p->tk) || !in_range(s->x0, s->ndk, p->dk) || !in_range(s->y0, s->ndv, p->dv))
    return ac_err_set(e, "slice outside the case");
  int64_t g = p->heads / p->kv_heads, kv0, nkv;
  if (s->nh == 1) {
    kv0 = ac_kv_head(p, s->h0);
    nkv = 1;
  } else if (s->h0 % g == 0 && s->nh % g == 0) {
    kv0 = s->h0 / g;
    nkv = s->nh / g;
  } else {
    return ac_err_set(e, "head slice splits a kv group");
  }
  ac_case_init(out);
  out->p = *p;
  ac_problem *q = &out->p;
  memset(q->q_stride, 0, sizeof q->q_stride);
  memset(q->k_stride, 0, sizeof q->k_stride);
  memset(q->v_stride, 0, sizeof q->v_stride);
  memset(q->o_stride, 0, sizeof q->o_stride);
  q->batch = s->nb;
  q->heads = s->nh;
  q->kv_heads = nkv;
  q->tq = s->ni;
  q->tk = s->nj;
  q->dk = s->ndk;
  q->dv = s->ndv;
  if (q->scale_is_default) q->scale = ac_problem_scale(q);
  if (ac_case_alloc(out, e)) return -1;
  ac_dtype t = p->dtype;
  for (int64_t b = 0; b < q->batch; b++) {
    for (int64_t h = 0; h < q->heads; h++)
      for (int64_t i = 0; i < q->tq; i++)
        for (int64_t x = 0; x < q->dk; x++)
          ac_store_bits(t, out->q, ac_qidx(q, b, h, i, x),
                        ac_load_bits(t, c->q, ac_qidx(p, s->b0 + b, s->h0 + h, s->i0 + i, s->x0 + x)));
    for (int64_t kh = 0; kh < nkv; kh++)
      for (int64_t j = 0; j < q->tk; j++) {
        for (int64_t x = 0; x < q->dk; x++)
          ac_store_bits(t, out->k, ac_kidx(q, b, kh, j, x),
                        ac_load_bits(t, c->k, ac_kidx(p, s->b0 + b, kv0 + kh, s->j0 + j, s->x0 + x)));
        for (int64_t y = 0; y < q->dv; y++)
          ac_store_bits(t, out->v, ac_vidx(q, b, kh, j, y),
                        ac_load_bits(t, c->v, ac_vidx(p, s->b0 + b, kv0 + kh, s->j0 + j, s->y0 + y)));
      }
  }
  out->seed = c->seed;
  out->case_index = c->case_index;
  memcpy(out->generator, c->generator, sizeof out->generator);
  out->params_json = c->params_json ? ac_xstrdup(c->params_json) : NULL;
  return 0;
}

int ac_case_resize_t(const ac_case *c, int64_t tq, int64_t tk, ac_rng *r, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  ac_case_init(out);
  out->p = *p;
  ac_problem *q = &out->p;
  q->tq = tq;
  q->tk = tk;
  memset(q->q_stride, 0, sizeof q->q_stride);
  memset(q->k_stride, 0, sizeof q->k_stride);
  memset(q->v_stride, 0, sizeof q->v_stride);
  memset(q->o_stride, 0, sizeof q->o_stride);
  if (ac_case_alloc(out, e)) return -1;
  ac_dtype t = p->dtype;
  for (int64_t b = 0; b < p->batch; b++) {
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < tq; i++) {
        int64_t src = i < p->tq ? i : (int64_t)ac_rng_below(r, (uint64_t)p->tq);
        for (int64_t x = 0; x < p->dk; x++) {
          double v = ac_load(t, c->q, ac_qidx(p, b, h, src, x));
          if (i >= p->tq) v *= 1.0 + 0.01 * ac_rng_normal(r);
          ac_set(t, out->q, ac_qidx(q, b, h, i, x), v);
        }
      }
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = 0; j < tk; j++) {
        int64_t src = j < p->tk ? j : (int64_t)ac_rng_below(r, (uint64_t)p->tk);
        for (int64_t x = 0; x < p->dk; x++) {
          double v = ac_load(t, c->k, ac_kidx(p, b, kh, src, x));
          if (j >= p->tk) v *= 1.0 + 0.01 * ac_rng_normal(r);
          ac_set(t, out->k, ac_kidx(q, b, kh, j, x), v);
        }
        for (int64_t y = 0; y < p->dv; y++)
          ac_store_bits(t, out->v, ac_vidx(q, b, kh, j, y), ac_load_bits(t, c->v, ac_vidx(p, b, kh, src, y)));
      }
  }
  out->seed = c->seed;
  out->case_index = c->case_index;
  memcpy(out->generator, c->generator, sizeof out->generator);
  out->params_json = c->params_json ? ac_xstrdup(c->params_json) : NULL;
  return 0;
}
