/* slice.c: sub-cases (fewer batches, heads, rows, keys, dims, attention variants) and length
 * changes, used by the minimizer, by defect fingerprints and by the shape mutations of the search. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "quant.h"
#include "variants.h"

void ac_slice_all(const ac_problem *p, ac_slice *s)
{
  *s = (ac_slice){0, p->batch, 0, p->heads, 0, p->tq, 0, p->tk, 0, p->dk, 0, p->dv};
}

static int in_range(int64_t a, int64_t n, int64_t max) { return a >= 0 && n >= 1 && a + n <= max; }

/* Index n of a window starting at a with the hole [h0, h0 + nh) of the window cut out. */
static inline int64_t src_ix(int64_t a, int64_t n, int64_t h0, int64_t nh) { return a + (n < h0 ? n : n + nh); }

/* The variant tensors of out (its problem already cut to the new shape, p.f copied from c):
 * row i of out reads row rows[i] of c, key j key cols[j], batch b batch b0 + b, query head h
 * head h0 + h and kv head kh kv head kv0 + kh. A bias or mask broadcast over batch or heads
 * stays broadcast; one stored per batch or head keeps the sliced ones. Window, softcap and
 * the other scalars are kept as they are (a sub-case need not have the original's output). */
static int copy_variants(const ac_case *c, ac_case *out, int64_t b0, int64_t h0, int64_t kv0, const int64_t *rows,
                         const int64_t *cols, ac_err *e)
{
  const ac_problem *p = &c->p;
  ac_problem *q = &out->p;
  if (!p->f.used) return 0;
  if (ac_features_alloc(out, e)) return -1;
  if (p->f.used & AC_FEAT_BIAS) {
    size_t es = ac_dtype_size(p->f.bias_dtype);
    for (int64_t b = 0; b < q->f.bias_b; b++)
      for (int64_t h = 0; h < q->f.bias_h; h++)
        for (int64_t i = 0; i < q->tq; i++)
          for (int64_t j = 0; j < q->tk; j++)
            memcpy((char *)out->bias + ac_biasidx(q, b, h, i, j) * es,
                   (const char *)c->bias + ac_biasidx(p, b0 + b, h0 + h, rows[i], cols[j]) * es, es);
  }
  if (p->f.used & AC_FEAT_BOOL_MASK)
    for (int64_t b = 0; b < q->f.mask_b; b++)
      for (int64_t h = 0; h < q->f.mask_h; h++)
        for (int64_t i = 0; i < q->tq; i++)
          for (int64_t j = 0; j < q->tk; j++)
            out->bool_mask[ac_bmaskidx(q, b, h, i, j)] = c->bool_mask[ac_bmaskidx(p, b0 + b, h0 + h, rows[i], cols[j])];
  if (p->f.used & AC_FEAT_ALIBI)
    for (int64_t b = 0; b < (p->f.alibi_per_batch ? q->batch : 1); b++)
      for (int64_t h = 0; h < q->heads; h++)
        out->alibi_slopes[b * q->heads + h] = c->alibi_slopes[(p->f.alibi_per_batch ? b0 + b : 0) * p->heads + h0 + h];
  if (p->f.used & AC_FEAT_SINKS)
    for (int64_t h = 0; h < q->heads; h++) out->sinks[h] = c->sinks[h0 + h];
  if (p->f.used & AC_FEAT_DESCALE)
    for (int x = 0; x < 3; x++)
      for (int64_t b = 0; b < q->batch; b++)
        for (int64_t kh = 0; kh < q->kv_heads; kh++)
          out->descale[x][b * q->kv_heads + kh] = c->descale[x][(b0 + b) * p->kv_heads + kv0 + kh];
  return 0;
}

/* The stored extents of the bias and mask of q, cut from p's to q's batch and heads. */
static void cut_extents(const ac_problem *p, ac_problem *q)
{
  q->f.bias_b = p->f.bias_b > 1 ? q->batch : 1;
  q->f.bias_h = p->f.bias_h > 1 ? q->heads : 1;
  q->f.mask_b = p->f.mask_b > 1 ? q->batch : 1;
  q->f.mask_h = p->f.mask_h > 1 ? q->heads : 1;
}

/* copy_variants with index maps built by map(k, arg) for rows and keys. */
typedef int64_t (*index_map)(int64_t k, const int64_t *arg);
static int copy_variants_mapped(const ac_case *c, ac_case *out, int64_t b0, int64_t h0, int64_t kv0, index_map rmap,
                                const int64_t *rarg, index_map cmap, const int64_t *carg, ac_err *e)
{
  if (!c->p.f.used) return 0;
  int64_t *rows = ac_xmalloc(sizeof *rows * (size_t)out->p.tq), *cols = ac_xmalloc(sizeof *cols * (size_t)out->p.tk);
  for (int64_t i = 0; i < out->p.tq; i++) rows[i] = rmap(i, rarg);
  for (int64_t j = 0; j < out->p.tk; j++) cols[j] = cmap(j, carg);
  int rc = copy_variants(c, out, b0, h0, kv0, rows, cols, e);
  free(rows);
  free(cols);
  return rc;
}

/* arg {a, h0, nh}: src_ix; arg {n}: k mod n (resize: new rows and keys repeat the old ones) */
static int64_t map_window(int64_t k, const int64_t *arg) { return arg[0] + (k < arg[1] ? k : k + arg[2]); }
static int64_t map_mod(int64_t k, const int64_t *arg) { return k % arg[0]; }

/* The codes and scales of out's quantized tensors from c's by the window's maps (values decoded
 * from them); -1 when the window cuts a block of a block format. */
static int slice_quant(const ac_case *c, const ac_slice *s, int64_t kv0, const int64_t hole[4], const int64_t h0s[4],
                       ac_case *out, ac_err *e)
{
  if (!ac_problem_quantized(&c->p)) return 0;
  const ac_problem *q = &out->p;
  int64_t *m = ac_xmalloc(sizeof *m * (size_t)(q->batch + q->heads + q->kv_heads + q->tq + q->tk + q->dk + q->dv));
  int64_t *mb = m, *mh = mb + q->batch, *mk = mh + q->heads, *mi = mk + q->kv_heads, *mj = mi + q->tq, *mx = mj + q->tk,
          *my = mx + q->dk;
  for (int64_t b = 0; b < q->batch; b++) mb[b] = s->b0 + b;
  for (int64_t h = 0; h < q->heads; h++) mh[h] = s->h0 + h;
  for (int64_t h = 0; h < q->kv_heads; h++) mk[h] = kv0 + h;
  for (int64_t i = 0; i < q->tq; i++) mi[i] = src_ix(s->i0, i, h0s[0], hole[0]);
  for (int64_t j = 0; j < q->tk; j++) mj[j] = src_ix(s->j0, j, h0s[1], hole[1]);
  for (int64_t x = 0; x < q->dk; x++) mx[x] = src_ix(s->x0, x, h0s[2], hole[2]);
  for (int64_t y = 0; y < q->dv; y++) my[y] = src_ix(s->y0, y, h0s[3], hole[3]);
  ac_qmaps qm = {{mb, mh, mi, mx}, {mb, mk, mj, mx}, {mb, mk, mj, my}};
  int rc = ac_quant_remap_all(c, out, &qm, e);
  free(m);
  return rc;
}

/* The window s with, in dimension dim (0 tq, 1 tk, 2 dk, 3 dv; -1 none), the window-relative
 * range [h0, h0 + nh) left out. */
static int copy_window(const ac_case *c, const ac_slice *s, int dim, int64_t h0, int64_t nh, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  if (!in_range(s->b0, s->nb, p->batch) || !in_range(s->h0, s->nh, p->heads) || !in_range(s->i0, s->ni, p->tq) ||
      !in_range(s->j0, s->nj, p->tk) || !in_range(s->x0, s->ndk, p->dk) || !in_range(s->y0, s->ndv, p->dv))
    return ac_err_set(e, "slice outside the case");
  int64_t hole[4] = {0, 0, 0, 0}, h0s[4] = {0, 0, 0, 0}, len[4] = {s->ni, s->nj, s->ndk, s->ndv};
  if (dim >= 0) {
    if (dim > 3 || h0 < 0 || nh < 1 || h0 + nh > len[dim] || nh >= len[dim]) return ac_err_set(e, "dropped range outside the case");
    hole[dim] = nh;
    h0s[dim] = h0;
  }
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
  q->tq = s->ni - hole[0];
  q->tk = s->nj - hole[1];
  q->dk = s->ndk - hole[2];
  q->dv = s->ndv - hole[3];
  if (q->scale_is_default) q->scale = ac_problem_scale(q);
  cut_extents(p, q);
  if (ac_case_alloc(out, e)) return -1;
  const int64_t rarg[3] = {s->i0, h0s[0], hole[0]}, carg[3] = {s->j0, h0s[1], hole[1]};
  if (copy_variants_mapped(c, out, s->b0, s->h0, kv0, map_window, rarg, map_window, carg, e)) {
    ac_case_free(out);
    return -1;
  }
  const ac_dtype dq = ac_tensor_dtype(p, 'q'), dk = ac_tensor_dtype(p, 'k'), dv = ac_tensor_dtype(p, 'v');
  for (int64_t b = 0; b < q->batch; b++) {
    for (int64_t h = 0; h < q->heads; h++)
      for (int64_t i = 0; i < q->tq; i++)
        for (int64_t x = 0; x < q->dk; x++)
          ac_store_bits(dq, out->q, ac_qidx(q, b, h, i, x),
                        ac_load_bits(dq, c->q, ac_qidx(p, s->b0 + b, s->h0 + h, src_ix(s->i0, i, h0s[0], hole[0]),
                                                      src_ix(s->x0, x, h0s[2], hole[2]))));
    for (int64_t kh = 0; kh < nkv; kh++)
      for (int64_t j = 0; j < q->tk; j++) {
        int64_t sj = src_ix(s->j0, j, h0s[1], hole[1]);
        for (int64_t x = 0; x < q->dk; x++)
          ac_store_bits(dk, out->k, ac_kidx(q, b, kh, j, x),
                        ac_load_bits(dk, c->k, ac_kidx(p, s->b0 + b, kv0 + kh, sj, src_ix(s->x0, x, h0s[2], hole[2]))));
        for (int64_t y = 0; y < q->dv; y++)
          ac_store_bits(dv, out->v, ac_vidx(q, b, kh, j, y),
                        ac_load_bits(dv, c->v, ac_vidx(p, s->b0 + b, kv0 + kh, sj, src_ix(s->y0, y, h0s[3], hole[3]))));
      }
  }
  if (c->dout) {   /* dO (a backward finding's) is cut with the rows of Q and the columns of V */
    const ac_dtype od = ac_tensor_dtype(p, 'o');
    out->dout = ac_xmalloc(ac_case_bytes(out, 'o') + 1);
    for (int64_t b = 0; b < q->batch; b++)
      for (int64_t h = 0; h < q->heads; h++)
        for (int64_t i = 0; i < q->tq; i++)
          for (int64_t y = 0; y < q->dv; y++)
            ac_store_bits(od, out->dout, ac_oidx(q, b, h, i, y),
                          ac_load_bits(od, c->dout, ac_oidx(p, s->b0 + b, s->h0 + h, src_ix(s->i0, i, h0s[0], hole[0]),
                                                            src_ix(s->y0, y, h0s[3], hole[3]))));
  }
  if (slice_quant(c, s, kv0, hole, h0s, out, e)) {
    ac_case_free(out);
    return -1;
  }
  ac_case_copy_origin(out, c);
  return 0;
}

int ac_case_slice(const ac_case *c, const ac_slice *s, ac_case *out, ac_err *e)
{
  return copy_window(c, s, -1, 0, 0, out, e);
}

int ac_case_drop(const ac_case *c, int dim, int64_t a, int64_t n, ac_case *out, ac_err *e)
{
  ac_slice s;
  ac_slice_all(&c->p, &s);
  return copy_window(c, &s, dim, a, n, out, e);
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
  const int64_t rarg[1] = {p->tq}, carg[1] = {p->tk};
  if (copy_variants_mapped(c, out, 0, 0, 0, map_mod, rarg, map_mod, carg, e)) {
    ac_case_free(out);
    return -1;
  }
  const ac_dtype dq = ac_tensor_dtype(p, 'q'), dk = ac_tensor_dtype(p, 'k'), dv = ac_tensor_dtype(p, 'v');
  for (int64_t b = 0; b < p->batch; b++) {
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < tq; i++) {
        int64_t src = i < p->tq ? i : (int64_t)ac_rng_below(r, (uint64_t)p->tq);
        for (int64_t x = 0; x < p->dk; x++) {
          double v = ac_load(dq, c->q, ac_qidx(p, b, h, src, x));
          if (i >= p->tq) v *= 1.0 + 0.01 * ac_rng_normal(r);
          ac_set(dq, out->q, ac_qidx(q, b, h, i, x), v);
        }
      }
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = 0; j < tk; j++) {
        int64_t src = j < p->tk ? j : (int64_t)ac_rng_below(r, (uint64_t)p->tk);
        for (int64_t x = 0; x < p->dk; x++) {
          double v = ac_load(dk, c->k, ac_kidx(p, b, kh, src, x));
          if (j >= p->tk) v *= 1.0 + 0.01 * ac_rng_normal(r);
          ac_set(dk, out->k, ac_kidx(q, b, kh, j, x), v);
        }
        for (int64_t y = 0; y < p->dv; y++)
          ac_store_bits(dv, out->v, ac_vidx(q, b, kh, j, y), ac_load_bits(dv, c->v, ac_vidx(p, b, kh, src, y)));
      }
  }
  if (ac_problem_quantized(p)) {   /* quantized tensors: new rows and keys repeat the old ones, codes and all */
    int64_t *mi = ac_xmalloc(sizeof *mi * (size_t)(tq + tk)), *mj = mi + tq;
    for (int64_t i = 0; i < tq; i++) mi[i] = i % p->tq;
    for (int64_t j = 0; j < tk; j++) mj[j] = j % p->tk;
    ac_qmaps qm = {{NULL, NULL, mi, NULL}, {NULL, NULL, mj, NULL}, {NULL, NULL, mj, NULL}};
    int rc = ac_quant_remap_all(c, out, &qm, e);
    free(mi);
    if (rc) {
      ac_case_free(out);
      return -1;
    }
  }
  ac_case_copy_origin(out, c);
  return 0;
}

int ac_case_without_feature(const ac_case *c, uint32_t bit, ac_case *out, ac_err *e)
{
  if (ac_case_copy(out, c, e)) return -1;
  ac_features *f = &out->p.f;
  for (int t = 0; t < AC_FT_N; t++)
    if (ac_feat_tensor_bit((ac_feat_tensor)t) == bit) {
      void **slot = ac_feat_tensor_slot(out, (ac_feat_tensor)t);
      free(*slot);
      *slot = NULL;
    }
  f->used &= ~bit;
  /* the fields of the feature back to ac_features_plain's values */
  ac_problem plain = out->p;
  ac_features_plain(&plain);
  if (bit == AC_FEAT_WINDOW) f->win_left = f->win_right = -1, f->win_top_left = 0;
  if (bit == AC_FEAT_SOFTCAP) f->softcap = 0;
  if (bit == AC_FEAT_ALIBI) f->alibi_per_batch = 0;
  if (bit == AC_FEAT_BIAS) f->bias_b = f->bias_h = 1, f->bias_dtype = plain.f.bias_dtype;
  if (bit == AC_FEAT_BOOL_MASK) f->mask_b = f->mask_h = 1;
  if (!f->used) out->p.f = plain.f;
  return 0;
}
